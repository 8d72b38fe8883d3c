/*
 * Cylinder-group blocks built anew, in mkfs.ufs's layout (see ufs_cg.h):
 * the header, the map offsets, and the free maps and summaries counted
 * from a caller's view of which fragments are free.
 */
#include <string.h>

#include "ufs_cg.h"

int32_t ufs_cg_layout(const struct ufs_super *fs, struct ufs_cg *cg)
{
    cg->cg_btotoff = (int32_t)sizeof(*cg);
    cg->cg_boff = cg->cg_btotoff + 4;
    cg->cg_iusedoff = cg->cg_boff + 2;
    cg->cg_freeoff = cg->cg_iusedoff + (fs->fs_ipg + 7) / 8;
    cg->cg_clustersumoff = ((cg->cg_freeoff + (fs->fs_fpg + 7) / 8 + 3) & ~3) - 4;
    cg->cg_clusteroff = cg->cg_clustersumoff + (fs->fs_contigsumsize + 1) * 4;
    cg->cg_nextfreeoff = cg->cg_clusteroff + (fs->fs_fpg / fs->fs_frag + 7) / 8;
    return cg->cg_nextfreeoff;
}

void ufs_cg_start(const struct ufs_super *fs, uint32_t c, uint8_t *buf, int32_t now)
{
    struct ufs_cg *cg = (struct ufs_cg *)buf;
    int64_t nfrags = ufs_cgfrags(fs, c);

    memset(buf, 0, (size_t)fs->fs_cgsize);
    cg->cg_magic = UFS_CG_MAGIC;
    cg->cg_time = now;
    cg->cg_cgx = (int32_t)c;
    cg->cg_ncyl = 1;
    cg->cg_niblk = (int16_t)fs->fs_ipg;
    cg->cg_ndblk = (int32_t)nfrags;
    ufs_cg_layout(fs, cg);
    cg->cg_nclusterblks = (int32_t)(nfrags / fs->fs_frag);
}

/* A run of `run` free blocks ended: count it in the cluster summary. */
static void end_cluster_run(const struct ufs_super *fs, int32_t *clsum, int32_t run)
{
    int32_t maxsum = fs->fs_contigsumsize;
    if (run && maxsum)
        clsum[run < maxsum ? run : maxsum]++;
}

void ufs_cg_fill_frags(const struct ufs_super *fs, uint32_t c, uint8_t *buf,
                       int (*is_free)(const void *ctx, int64_t frag), const void *ctx)
{
    struct ufs_cg *cg = (struct ufs_cg *)buf;
    int64_t base = ufs_cgbase(fs, c), nfrags = ufs_cgfrags(fs, c);
    uint8_t *free_map = buf + cg->cg_freeoff, *clmap = buf + cg->cg_clusteroff;
    int32_t *clsum = (int32_t *)(buf + cg->cg_clustersumoff), run = 0;

    for (int64_t b = 0; b < nfrags; b += fs->fs_frag) {
        int32_t nfree = 0, frun = 0;
        for (int32_t i = 0; i < fs->fs_frag; i++) {
            if (b + i < nfrags && is_free(ctx, base + b + i)) {
                ufs_setbit(free_map, (uint64_t)(b + i));
                nfree++;
                frun++;
            } else {
                if (frun)
                    cg->cg_frsum[frun]++;
                frun = 0;
            }
        }
        if (nfree == fs->fs_frag) {
            cg->cg_cs.cs_nbfree++;
            if (fs->fs_contigsumsize)
                ufs_setbit(clmap, (uint64_t)(b / fs->fs_frag));
            run++;
            continue;
        }
        if (frun)
            cg->cg_frsum[frun]++;
        cg->cg_cs.cs_nffree += nfree;
        end_cluster_run(fs, clsum, run);
        run = 0;
    }
    end_cluster_run(fs, clsum, run);
}
