/*
 * fsck.ufs: check a UFS1 file system image (kern/ufs/ufs_fs.h), and with
 * -y or -p repair it (fsck_ufs_fix.c).
 *
 *   fsck.ufs [-n | -y | -p] IMAGE
 *
 * Each problem is printed as one line, then a summary line.  The modes and
 * exit statuses are fsck.s5's (fsck_common.h): 0 consistent, 1 problems
 * found (-n) or repaired (-y, -p), 2 a usage error or an unreadable image,
 * 4 problems left.  The check itself never writes.
 *
 * The passes:
 *   1. the superblock's geometry (stop if unusable), the summary area;
 *   2. every group block: magic, number, sizes, map offsets; the maps are
 *      read into whole-file-system maps; the superblock copies;
 *   3. every inode: type, size, its block tree (range, fragments only as
 *      the last block of a small file, duplicates, pointers past the end,
 *      di_blocks), and the inode map;
 *   4. the fragment map against what the inodes and the metadata use, then
 *      each group's counts (cg_cs, cg_frsum, the cluster map and summary),
 *      the summary area and fs_cstotal;
 *   5. the directory tree from the root: entry layout, names, ".", "..",
 *      d_type, entries naming free inodes, directories linked twice;
 *   6. link counts and reachability of every allocated inode.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsck_ufs.h"

/* ---- pass 1: the superblock and the summary area ---- */

static int check_super(struct fsck *f)
{
    const char *why;

    if (read_at(f, UFS_SBOFF, &f->sb, sizeof(f->sb)) < 0) {
        problem(f, "superblock: image is too small to hold a superblock (%llu bytes)",
                (unsigned long long)f->image_bytes);
        return -1;
    }
    why = ufs_sb_invalid(&f->sb, f->image_bytes / (f->sb.fs_fsize > 0 ? f->sb.fs_fsize : 1));
    if (why) {
        problem(f, "superblock: %s (magic 0x%x, bsize %d, fsize %d, size %d, ncg %d, "
                "fpg %d, ipg %d)", why, (unsigned)f->sb.fs_magic, f->sb.fs_bsize,
                f->sb.fs_fsize, f->sb.fs_size, f->sb.fs_ncg, f->sb.fs_fpg, f->sb.fs_ipg);
        return -1;
    }
    if (!(f->sb.fs_clean & UFS_FSCLEAN))
        printf("fsck.ufs: %s: note: not cleanly unmounted (fs_clean %d)\n", f->image,
               f->sb.fs_clean);
    if (f->sb.fs_inodefmt != UFS_44INODEFMT)
        problem(f, "superblock: fs_inodefmt %d, only 4.4BSD's (%d) is supported",
                f->sb.fs_inodefmt, UFS_44INODEFMT);
    f->ninodes = (uint32_t)f->sb.fs_ncg * (uint32_t)f->sb.fs_ipg;
    int64_t dsize = (int64_t)f->sb.fs_size - f->sb.fs_sblkno -
                    (int64_t)f->sb.fs_ncg * (f->sb.fs_dblkno - f->sb.fs_sblkno) -
                    (f->sb.fs_cssize + f->sb.fs_fsize - 1) / f->sb.fs_fsize;
    if (f->sb.fs_dsize != dsize)
        problem(f, "superblock: fs_dsize %d, the layout leaves %lld fragments for data",
                f->sb.fs_dsize, (long long)dsize);
    f->csum = xcalloc(1, (size_t)f->sb.fs_cssize);
    if (read_at(f, frag_bytes(f, f->sb.fs_csaddr), f->csum, (size_t)f->sb.fs_cssize) < 0) {
        problem(f, "summary area: cannot read %d bytes at fragment %d", f->sb.fs_cssize,
                f->sb.fs_csaddr);
        return -1;
    }
    return 0;
}

/* ---- pass 2: group blocks and maps ---- */

static void mark_meta(struct fsck *f, int64_t from, int64_t to)
{
    for (int64_t x = from; x < to && x < f->sb.fs_size; x++)
        f->owner[x] = OWN_META;
}

/* The superblock copy of group c must describe the same file system. */
static void check_copy(struct fsck *f, uint32_t c)
{
    struct ufs_super copy;
    const struct ufs_super *fs = &f->sb;

    if (read_at(f, frag_bytes(f, ufs_cgbase(fs, c) + fs->fs_sblkno), &copy, sizeof(copy)) < 0) {
        problem(f, "group %u: cannot read its superblock copy", c);
        return;
    }
    if (copy.fs_magic != fs->fs_magic || copy.fs_size != fs->fs_size ||
        copy.fs_ncg != fs->fs_ncg || copy.fs_fpg != fs->fs_fpg || copy.fs_ipg != fs->fs_ipg ||
        copy.fs_bsize != fs->fs_bsize || copy.fs_fsize != fs->fs_fsize)
        problem(f, "group %u: its superblock copy differs from the superblock", c);
}

/* Checks the map offsets of the group block in f->cgbuf; 0 if usable. */
static int check_cg_header(struct fsck *f, uint32_t c)
{
    const struct ufs_super *fs = &f->sb;
    const struct ufs_cg *cg = (const struct ufs_cg *)f->cgbuf;
    int64_t nfrags = ufs_cgfrags(fs, c);
    int64_t size = fs->fs_cgsize, hdr = (int64_t)sizeof(*cg);

    if (cg->cg_magic != UFS_CG_MAGIC) {
        problem(f, "group %u: bad magic number 0x%x", c, (unsigned)cg->cg_magic);
        return -1;
    }
    if (cg->cg_cgx != (int32_t)c)
        problem(f, "group %u: cg_cgx is %d", c, cg->cg_cgx);
    if (cg->cg_ndblk != nfrags)
        problem(f, "group %u: cg_ndblk %d, want %lld", c, cg->cg_ndblk, (long long)nfrags);
    if (cg->cg_niblk != fs->fs_ipg)
        problem(f, "group %u: cg_niblk %d, want fs_ipg %d", c, cg->cg_niblk, fs->fs_ipg);
    if (cg->cg_iusedoff < hdr || (int64_t)cg->cg_iusedoff + (fs->fs_ipg + 7) / 8 > size ||
        cg->cg_freeoff < hdr || (int64_t)cg->cg_freeoff + (fs->fs_fpg + 7) / 8 > size) {
        problem(f, "group %u: its maps lie outside its %lld-byte block (iusedoff %d, freeoff %d)",
                c, (long long)size, cg->cg_iusedoff, cg->cg_freeoff);
        return -1;
    }
    if (fs->fs_contigsumsize > 0 &&
        (cg->cg_clustersumoff < hdr ||
         (int64_t)cg->cg_clustersumoff + 4 * (fs->fs_contigsumsize + 1) > size ||
         cg->cg_clustersumoff % 4 || cg->cg_clusteroff < hdr ||
         (int64_t)cg->cg_clusteroff + (fs->fs_fpg / fs->fs_frag + 7) / 8 > size)) {
        problem(f, "group %u: its cluster maps lie outside its block", c);
        return -1;
    }
    return 0;
}

/* Copies group c's inode and fragment maps into the whole-disk maps. */
static void load_cg_maps(struct fsck *f, uint32_t c)
{
    const struct ufs_super *fs = &f->sb;
    const struct ufs_cg *cg = (const struct ufs_cg *)f->cgbuf;
    const uint8_t *iused = f->cgbuf + cg->cg_iusedoff, *free = f->cgbuf + cg->cg_freeoff;
    int64_t base = ufs_cgbase(fs, c), nfrags = ufs_cgfrags(fs, c);

    for (int32_t i = 0; i < fs->fs_ipg; i++)
        if (ufs_isset(iused, (uint64_t)i))
            ufs_setbit(f->iused, (uint64_t)c * (uint32_t)fs->fs_ipg + (uint32_t)i);
    for (int64_t x = 0; x < nfrags; x++)
        if (ufs_isset(free, (uint64_t)x))
            ufs_setbit(f->ffree, (uint64_t)(base + x));
}

static int read_cg(struct fsck *f, uint32_t c)
{
    if (read_at(f, frag_bytes(f, ufs_cgtod(&f->sb, c)), f->cgbuf, (size_t)f->sb.fs_cgsize) < 0) {
        problem(f, "group %u: cannot read its block", c);
        return -1;
    }
    return check_cg_header(f, c);
}

static void load_groups(struct fsck *f)
{
    const struct ufs_super *fs = &f->sb;

    for (uint32_t c = 0; c < (uint32_t)fs->fs_ncg; c++) {
        int64_t base = ufs_cgbase(fs, c);

        mark_meta(f, c == 0 ? 0 : base + fs->fs_sblkno, base + fs->fs_dblkno);
        if (c > 0)
            check_copy(f, c);
        if (read_cg(f, c) == 0)
            load_cg_maps(f, c);
    }
    mark_meta(f, fs->fs_csaddr, fs->fs_csaddr + (fs->fs_cssize + fs->fs_fsize - 1) / fs->fs_fsize);
}

/* ---- pass 3: inodes and their blocks ---- */

static int load_inodes(struct fsck *f)
{
    const struct ufs_super *fs = &f->sb;
    size_t per_cg = (size_t)fs->fs_ipg * UFS_INODE_SIZE;

    f->itab = xcalloc(f->ninodes, UFS_INODE_SIZE);
    for (uint32_t c = 0; c < (uint32_t)fs->fs_ncg; c++)
        if (read_at(f, frag_bytes(f, ufs_cgimin(fs, c)),
                    (uint8_t *)f->itab + c * per_cg, per_cg) < 0) {
            problem(f, "group %u: cannot read its inodes", c);
            return -1;
        }
    return 0;
}

struct walk {
    uint32_t ino;
    uint64_t size;
    uint64_t frags;                     /* fragments found, indirect ones too */
    unsigned bad;                       /* problems reported for this inode */
};

/* Claims nfrags fragments at addr for w->ino; 0 if they are all fine. */
static int claim(struct fsck *f, struct walk *w, int64_t addr, uint32_t nfrags, const char *what)
{
    const struct ufs_super *fs = &f->sb;

    if (addr < 0 || addr + nfrags > fs->fs_size) {
        if (w->bad++ < 3)
            problem(f, "inode %u: %s at fragment %lld is outside the file system", w->ino,
                    what, (long long)addr);
        return -1;
    }
    if (nfrags == (uint32_t)fs->fs_frag && addr % fs->fs_frag) {
        if (w->bad++ < 3)
            problem(f, "inode %u: %s at fragment %lld is not block aligned", w->ino, what,
                    (long long)addr);
        return -1;
    }
    if (ufs_dtog(fs, addr) != ufs_dtog(fs, addr + nfrags - 1) ||
        addr / fs->fs_frag != (addr + nfrags - 1) / fs->fs_frag) {
        if (w->bad++ < 3)
            problem(f, "inode %u: %s at fragment %lld runs over a block's end", w->ino, what,
                    (long long)addr);
        return -1;
    }
    int ok = 0;
    for (uint32_t i = 0; i < nfrags; i++) {
        uint32_t *o = &f->owner[addr + i];
        if (*o != OWN_FREE) {
            if (w->bad++ < 3)
                problem(f, "inode %u: %s fragment %lld is %s", w->ino, what,
                        (long long)(addr + i), *o == OWN_META ? "metadata" : "used twice");
            ok = -1;
            continue;
        }
        *o = w->ino;
    }
    w->frags += nfrags;
    return ok;
}

/* Walks an indirect block of the given level covering logical blocks from
 * lbn; nblocks is the file's block count. */
static void walk_indirect(struct fsck *f, struct walk *w, int64_t addr, int level,
                          uint64_t lbn, uint64_t nblocks)
{
    const struct ufs_super *fs = &f->sb;
    uint64_t span = 1;

    for (int l = 1; l < level; l++)
        span *= (uint32_t)fs->fs_nindir;
    if (addr == 0)
        return;
    if (lbn >= nblocks) {
        if (w->bad++ < 3)
            problem(f, "inode %u: indirect block %lld past the end of the file", w->ino,
                    (long long)addr);
        return;
    }
    if (claim(f, w, addr, (uint32_t)fs->fs_frag, "indirect block") < 0)
        return;
    int32_t *ptrs = xcalloc((size_t)fs->fs_nindir, 4);
    if (read_at(f, frag_bytes(f, addr), ptrs, (size_t)fs->fs_bsize) < 0) {
        problem(f, "inode %u: cannot read indirect block %lld", w->ino, (long long)addr);
        free(ptrs);
        return;
    }
    for (int32_t i = 0; i < fs->fs_nindir; i++) {
        uint64_t at = lbn + (uint64_t)i * span;
        if (!ptrs[i])
            continue;
        if (level > 1)
            walk_indirect(f, w, ptrs[i], level - 1, at, nblocks);
        else if (at >= nblocks) {
            if (w->bad++ < 3)
                problem(f, "inode %u: block %d past the end of the file", w->ino, ptrs[i]);
        } else
            claim(f, w, ptrs[i], (uint32_t)fs->fs_frag, "block");
    }
    free(ptrs);
}

static void walk_direct(struct fsck *f, struct walk *w, const struct ufs_dinode *di,
                        uint64_t nblocks)
{
    const struct ufs_super *fs = &f->sb;

    for (uint32_t i = 0; i < UFS_NDADDR; i++) {
        if (!di->di_db[i])
            continue;
        if (i >= nblocks) {
            if (w->bad++ < 3)
                problem(f, "inode %u: direct block %u past the end of the file", w->ino, i);
            continue;
        }
        uint32_t bytes = i + 1 == nblocks ? ufs_lastblock_bytes(fs, w->size)
                                          : (uint32_t)fs->fs_bsize;
        claim(f, w, di->di_db[i], bytes / (uint32_t)fs->fs_fsize, "block");
    }
}

int ufs_fsck_type_valid(uint16_t mode)
{
    switch (mode & UFS_IFMT) {
    case UFS_IFREG: case UFS_IFDIR: case UFS_IFLNK: case UFS_IFCHR: case UFS_IFBLK:
    case UFS_IFIFO: case UFS_IFSOCK:
        return 1;
    }
    return 0;
}

static void check_inode(struct fsck *f, uint32_t ino)
{
    const struct ufs_super *fs = &f->sb;
    const struct ufs_dinode *di = &f->itab[ino];
    uint16_t t = di->di_mode & UFS_IFMT;
    struct walk w = { .ino = ino, .size = di->di_size };

    if (!ufs_fsck_type_valid(di->di_mode)) {
        problem(f, "inode %u: bad mode 0%o", ino, di->di_mode);
        return;
    }
    if (!ufs_isset(f->iused, ino))
        safe_problem(f, "inode %u: in use (mode 0%o) but free in the inode map", ino, di->di_mode);
    if (t == UFS_IFDIR)
        f->ndirs++;
    else
        f->nfiles++;
    if (di->di_size > fs->fs_maxfilesize) {
        problem(f, "inode %u: size %llu beyond fs_maxfilesize", ino,
                (unsigned long long)di->di_size);
        return;
    }
    if (t == UFS_IFDIR && (di->di_size == 0 || di->di_size % UFS_DIRBLKSIZ))
        problem(f, "directory %u: size %llu is not a multiple of %d", ino,
                (unsigned long long)di->di_size, UFS_DIRBLKSIZ);
    if ((t == UFS_IFLNK && ufs_link_is_short(fs, di)) || t == UFS_IFCHR || t == UFS_IFBLK ||
        t == UFS_IFIFO || t == UFS_IFSOCK)
        return;                         /* no blocks: db holds a target or a device */
    uint64_t nblocks = (di->di_size + (uint64_t)fs->fs_bsize - 1) >> fs->fs_bshift;
    uint64_t span = UFS_NDADDR;
    walk_direct(f, &w, di, nblocks);
    for (int level = 1; level <= UFS_NIADDR; level++) {
        walk_indirect(f, &w, di->di_ib[level - 1], level, span, nblocks);
        uint64_t n = 1;
        for (int l = 0; l < level; l++)
            n *= (uint32_t)fs->fs_nindir;
        span += n;
    }
    uint64_t want = w.frags * (uint32_t)fs->fs_fsize / UFS_DEV_BSIZE;
    if (!w.bad && di->di_blocks != want)
        safe_problem(f, "inode %u: di_blocks %u, its blocks make %llu", ino, di->di_blocks,
                (unsigned long long)want);
}

static void check_inodes(struct fsck *f)
{
    for (uint32_t ino = 0; ino < f->ninodes; ino++) {
        const struct ufs_dinode *di = &f->itab[ino];
        if (ino < UFS_ROOTINO) {
            if (!ufs_isset(f->iused, ino))
                safe_problem(f, "inode %u: reserved but free in the inode map", ino);
            continue;
        }
        if (di->di_mode != 0)
            check_inode(f, ino);
        else if (ufs_isset(f->iused, ino) && f->reports++ < MAX_REPORTS)
            safe_problem(f, "inode %u: free (mode 0) but in use in the inode map", ino);
    }
}

/* ---- pass 4: the fragment map and the counts ---- */

static void check_frag_map(struct fsck *f)
{
    unsigned n = 0;

    for (int64_t x = 0; x < f->sb.fs_size; x++) {
        int is_free = ufs_isset(f->ffree, (uint64_t)x), owned = f->owner[x] != OWN_FREE;
        if (is_free && owned) {
            if (n++ < MAX_REPORTS)
                safe_problem(f, "fragment %lld: in use (%s) but free in the map", (long long)x,
                        f->owner[x] == OWN_META ? "metadata" : "a file");
        } else if (!is_free && !owned) {
            if (n++ < MAX_REPORTS)
                safe_problem(f, "fragment %lld: used in the map but by nothing", (long long)x);
        }
        if (owned)
            f->used_frags++;
        else
            f->free_frags++;
    }
    if (n > MAX_REPORTS)
        safe_problem(f, "fragment map: %u more fragments disagree", n - MAX_REPORTS);
}

struct counts {
    struct ufs_csum cs;
    int32_t frsum[UFS_MAXFRAG];
    int32_t clustersum[65];
};

/* What group c's counts must be, from the (checked) whole-disk maps. */
static void count_group(struct fsck *f, uint32_t c, struct counts *k, uint8_t *clmap)
{
    const struct ufs_super *fs = &f->sb;
    int64_t base = ufs_cgbase(fs, c), nfrags = ufs_cgfrags(fs, c);
    int32_t run = 0, maxsum = fs->fs_contigsumsize;

    memset(k, 0, sizeof(*k));
    for (int32_t i = 0; i < fs->fs_ipg; i++) {
        uint32_t ino = c * (uint32_t)fs->fs_ipg + (uint32_t)i;
        if (!ufs_isset(f->iused, ino))
            k->cs.cs_nifree++;
        else if ((f->itab[ino].di_mode & UFS_IFMT) == UFS_IFDIR)
            k->cs.cs_ndir++;
    }
    /* A short last block's missing fragments count as in use. */
    for (int64_t b = 0; b < nfrags; b += fs->fs_frag) {
        int32_t nfree = 0, frun = 0;
        for (int32_t i = 0; i < fs->fs_frag; i++) {
            if (b + i < nfrags && ufs_isset(f->ffree, (uint64_t)(base + b + i))) {
                nfree++;
                frun++;
            } else {
                if (frun)
                    k->frsum[frun]++;
                frun = 0;
            }
        }
        if (nfree == fs->fs_frag) {
            k->cs.cs_nbfree++;
            ufs_setbit(clmap, (uint64_t)(b / fs->fs_frag));
            run++;
            continue;
        }
        if (frun)
            k->frsum[frun]++;
        k->cs.cs_nffree += nfree;
        if (run && maxsum)
            k->clustersum[run < maxsum ? run : maxsum]++;
        run = 0;
    }
    if (run && maxsum)
        k->clustersum[run < maxsum ? run : maxsum]++;
}

static void compare_csum(struct fsck *f, const char *where, uint32_t c,
                         const struct ufs_csum *got, const struct ufs_csum *want)
{
    if (memcmp(got, want, sizeof(*got)))
        safe_problem(f, "group %u: %s counts dirs %d, free blocks %d, free inodes %d, free "
                "fragments %d; want %d, %d, %d, %d", c, where, got->cs_ndir, got->cs_nbfree,
                got->cs_nifree, got->cs_nffree, want->cs_ndir, want->cs_nbfree, want->cs_nifree,
                want->cs_nffree);
}

static void check_group_counts(struct fsck *f, uint32_t c, struct ufs_csum *total)
{
    const struct ufs_super *fs = &f->sb;
    const struct ufs_cg *cg = (const struct ufs_cg *)f->cgbuf;
    struct counts k;
    size_t clbytes = (size_t)(fs->fs_fpg / fs->fs_frag + 7) / 8;
    uint8_t *clmap = xcalloc(1, clbytes);

    count_group(f, c, &k, clmap);
    total->cs_ndir += k.cs.cs_ndir;
    total->cs_nbfree += k.cs.cs_nbfree;
    total->cs_nifree += k.cs.cs_nifree;
    total->cs_nffree += k.cs.cs_nffree;
    if (read_cg(f, c) < 0) {
        free(clmap);
        return;
    }
    compare_csum(f, "its block", c, &cg->cg_cs, &k.cs);
    compare_csum(f, "the summary area", c, &f->csum[c], &k.cs);
    for (int i = 1; i < fs->fs_frag; i++)
        if (cg->cg_frsum[i] != k.frsum[i]) {
            safe_problem(f, "group %u: cg_frsum[%d] is %d, want %d", c, i, cg->cg_frsum[i],
                    k.frsum[i]);
            break;
        }
    if (fs->fs_contigsumsize > 0) {
        const int32_t *sum = (const int32_t *)(f->cgbuf + cg->cg_clustersumoff);
        int64_t nblk = ufs_cgfrags(fs, c) / fs->fs_frag;
        for (int i = 1; i <= fs->fs_contigsumsize; i++)
            if (sum[i] != k.clustersum[i]) {
                safe_problem(f, "group %u: cluster summary [%d] is %d, want %d", c, i, sum[i],
                        k.clustersum[i]);
                break;
            }
        for (int64_t b = 0; b < nblk; b++)
            if (ufs_isset(f->cgbuf + cg->cg_clusteroff, (uint64_t)b) !=
                ufs_isset(clmap, (uint64_t)b)) {
                safe_problem(f, "group %u: cluster map bit %lld disagrees with the fragment map",
                        c, (long long)b);
                break;
            }
    }
    free(clmap);
}

/* With UFS_FLAGS_UPDATED, NetBSD's 64-bit fields must repeat the old ones. */
static void check_updated_fields(struct fsck *f, const struct ufs_csum *total)
{
    const struct ufs_super *fs = &f->sb;

    if (!(fs->fs_flags & UFS_FLAGS_UPDATED))
        return;
    if (fs->fs_sblockloc != UFS_SBOFF || fs->fs_size64 != fs->fs_size ||
        fs->fs_dsize64 != fs->fs_dsize || fs->fs_csaddr64 != fs->fs_csaddr ||
        fs->fs_maxbsize != fs->fs_bsize)
        problem(f, "superblock: the 64-bit location, sizes or summary address differ from "
                "the 32-bit ones");
    if (fs->fs_cstotal64.cs_ndir != total->cs_ndir ||
        fs->fs_cstotal64.cs_nbfree != total->cs_nbfree ||
        fs->fs_cstotal64.cs_nifree != total->cs_nifree ||
        fs->fs_cstotal64.cs_nffree != total->cs_nffree)
        safe_problem(f, "superblock: the 64-bit fs_cstotal counts dirs %lld, free blocks %lld, free "
                "inodes %lld, free fragments %lld; want %d, %d, %d, %d",
                (long long)fs->fs_cstotal64.cs_ndir, (long long)fs->fs_cstotal64.cs_nbfree,
                (long long)fs->fs_cstotal64.cs_nifree, (long long)fs->fs_cstotal64.cs_nffree,
                total->cs_ndir, total->cs_nbfree, total->cs_nifree, total->cs_nffree);
}

static void check_counts(struct fsck *f)
{
    struct ufs_csum total = { 0, 0, 0, 0 };

    for (uint32_t c = 0; c < (uint32_t)f->sb.fs_ncg; c++)
        check_group_counts(f, c, &total);
    check_updated_fields(f, &total);
    if (memcmp(&total, &f->sb.fs_cstotal, sizeof(total)))
        safe_problem(f, "superblock: fs_cstotal counts dirs %d, free blocks %d, free inodes %d, "
                "free fragments %d; want %d, %d, %d, %d", f->sb.fs_cstotal.cs_ndir,
                f->sb.fs_cstotal.cs_nbfree, f->sb.fs_cstotal.cs_nifree,
                f->sb.fs_cstotal.cs_nffree, total.cs_ndir, total.cs_nbfree, total.cs_nifree,
                total.cs_nffree);
}

/* ---- pass 5: directories ---- */

/* Fragment address of logical block lbn of an inode, or 0 (a hole). */
int64_t ufs_fsck_bmap(struct fsck *f, const struct ufs_dinode *di, uint64_t lbn)
{
    const struct ufs_super *fs = &f->sb;
    uint64_t n = (uint32_t)fs->fs_nindir;
    int32_t ptr;

    if (lbn < UFS_NDADDR)
        return di->di_db[lbn];
    lbn -= UFS_NDADDR;
    if (lbn >= n)
        return 0;                       /* directories stay below the double indirect */
    if (!di->di_ib[0] || read_at(f, frag_bytes(f, di->di_ib[0]) + 4 * lbn, &ptr, 4) < 0)
        return 0;
    return ptr;
}

static void enqueue_dir(struct fsck *f, uint32_t ino, uint32_t parent)
{
    f->parent[ino] = parent;
    f->queue[f->qtail++] = ino;
}

/* Checks one entry; returns 0 if the chunk's walk can go on. */
static int check_entry(struct fsck *f, uint32_t dir, const uint8_t *chunk, uint32_t pos,
                       uint32_t index)
{
    const struct ufs_direct *d = (const struct ufs_direct *)(chunk + pos);
    uint32_t left = UFS_DIRBLKSIZ - pos;

    if (d->d_reclen < 8 || d->d_reclen % 4 || d->d_reclen > left) {
        problem(f, "directory %u: entry at %u has record length %u", dir, pos, d->d_reclen);
        return -1;
    }
    if (d->d_ino == 0)
        return 0;
    if (ufs_direntsize(d->d_namlen) > d->d_reclen || d->d_namlen == 0 ||
        memchr(d->d_name, '\0', d->d_namlen) || memchr(d->d_name, '/', d->d_namlen) ||
        d->d_name[d->d_namlen] != '\0') {
        problem(f, "directory %u: bad name in the entry at %u", dir, pos);
        return -1;
    }
    if (d->d_ino >= f->ninodes || d->d_ino < UFS_ROOTINO || !f->itab[d->d_ino].di_mode) {
        problem(f, "directory %u: '%.*s' names %s inode %u", dir, d->d_namlen, d->d_name,
                d->d_ino >= f->ninodes ? "nonexistent" : "free", d->d_ino);
        return 0;
    }
    const struct ufs_dinode *target = &f->itab[d->d_ino];
    int dot = d->d_namlen == 1 && d->d_name[0] == '.';
    int dotdot = d->d_namlen == 2 && d->d_name[0] == '.' && d->d_name[1] == '.';
    if (d->d_type != ufs_mode_to_dtype(target->di_mode))
        safe_problem(f, "directory %u: '%.*s' has d_type %u, its inode %u is type %u", dir,
                d->d_namlen, d->d_name, d->d_type, d->d_ino,
                ufs_mode_to_dtype(target->di_mode));
    if (index == 0 && (!dot || d->d_ino != dir))
        problem(f, "directory %u: the first entry is not '.' naming itself", dir);
    else if (index == 1 && (!dotdot || d->d_ino != f->parent[dir]))
        problem(f, "directory %u: the second entry is not '..' naming its parent %u", dir,
                f->parent[dir]);
    else if (index > 1 && (dot || dotdot))
        problem(f, "directory %u: another '%.*s' entry", dir, d->d_namlen, d->d_name);
    f->refs[d->d_ino]++;
    if (index > 1 && !dot && !dotdot && (target->di_mode & UFS_IFMT) == UFS_IFDIR) {
        if (f->parent[d->d_ino])
            problem(f, "directory %u: second link to directory %u", dir, d->d_ino);
        else
            enqueue_dir(f, d->d_ino, dir);
    }
    return 0;
}

static void scan_dir(struct fsck *f, uint32_t dir)
{
    const struct ufs_super *fs = &f->sb;
    const struct ufs_dinode *di = &f->itab[dir];
    uint32_t index = 0;

    for (uint64_t off = 0; off < di->di_size; off += UFS_DIRBLKSIZ) {
        uint64_t lbn = off >> fs->fs_bshift;
        int64_t addr = ufs_fsck_bmap(f, di, lbn);
        uint8_t chunk[UFS_DIRBLKSIZ];
        if (addr <= 0 || read_at(f, frag_bytes(f, addr) + (off & (uint64_t)(fs->fs_bsize - 1)),
                                 chunk, sizeof(chunk)) < 0) {
            problem(f, "directory %u: cannot read its data at offset %llu", dir,
                    (unsigned long long)off);
            return;
        }
        for (uint32_t pos = 0; pos < UFS_DIRBLKSIZ; ) {
            const struct ufs_direct *d = (const struct ufs_direct *)(chunk + pos);
            if (check_entry(f, dir, chunk, pos, index) < 0)
                break;
            if (d->d_ino)
                index++;
            pos += d->d_reclen;
        }
    }
    if (index < 2)
        problem(f, "directory %u: no '.' and '..' entries", dir);
}

static void check_tree(struct fsck *f)
{
    const struct ufs_dinode *root = &f->itab[UFS_ROOTINO];

    if ((root->di_mode & UFS_IFMT) != UFS_IFDIR) {
        problem(f, "root inode %d is not a directory (mode 0%o)", UFS_ROOTINO, root->di_mode);
        return;
    }
    enqueue_dir(f, UFS_ROOTINO, UFS_ROOTINO);
    while (f->qhead < f->qtail)
        scan_dir(f, f->queue[f->qhead++]);
}

/* ---- pass 6: link counts ---- */

static void check_links(struct fsck *f)
{
    unsigned n = 0, unsafe_more = 0;

    for (uint32_t ino = UFS_ROOTINO; ino < f->ninodes; ino++) {
        const struct ufs_dinode *di = &f->itab[ino];
        if (!di->di_mode)
            continue;
        if (f->refs[ino] == 0) {
            int empty = di->di_size == 0 && (di->di_mode & UFS_IFMT) != UFS_IFDIR;
            unsafe_more += !empty && n >= MAX_REPORTS;
            if (n++ < MAX_REPORTS)
                fsck_problem(&f->rep, empty, "inode %u: allocated (mode 0%o) but in no "
                             "directory", ino, di->di_mode);
        } else if ((uint32_t)di->di_nlink != f->refs[ino]) {
            if (n++ < MAX_REPORTS)
                safe_problem(f, "inode %u: link count %d, %u entries name it", ino, di->di_nlink,
                        f->refs[ino]);
        }
    }
    if (n > MAX_REPORTS)
        fsck_problem(&f->rep, !unsafe_more, "link counts: %u more inodes are wrong",
                     n - MAX_REPORTS);
}

/* ---- main ---- */

static int run(struct fsck *f)
{
    if (check_super(f) < 0)
        return 0;
    f->iused = xcalloc(1, (f->ninodes + 7) / 8);
    f->ffree = xcalloc(1, ((size_t)f->sb.fs_size + 7) / 8);
    f->owner = xcalloc((size_t)f->sb.fs_size, sizeof(*f->owner));
    f->cgbuf = xcalloc(1, (size_t)f->sb.fs_cgsize);
    f->refs = xcalloc(f->ninodes, sizeof(*f->refs));
    f->parent = xcalloc(f->ninodes, sizeof(*f->parent));
    f->queue = xcalloc(f->ninodes, sizeof(*f->queue));
    load_groups(f);
    if (load_inodes(f) < 0)
        return 0;
    check_inodes(f);
    check_frag_map(f);
    check_counts(f);
    check_tree(f);
    check_links(f);
    return 0;
}

#define USAGE "usage: fsck.ufs [-n | -y | -p] IMAGE"

static int ufs_check(void *st, const char *image, int quiet)
{
    struct fsck *f = st;
    struct stat sb;

    f->image = image;
    f->rep.quiet = quiet;
    f->fd = open(image, O_RDONLY);
    if (f->fd < 0 || fstat(f->fd, &sb) < 0) {
        fprintf(stderr, "fsck.ufs: %s: %s\n", image, strerror(errno));
        return FSCK_EXIT_USAGE;
    }
    f->image_bytes = (uint64_t)sb.st_size;
    run(f);
    if (f->rep.problems)
        printf("fsck.ufs: %s: %u problem%s; ", image, f->rep.problems,
               f->rep.problems == 1 ? "" : "s");
    else
        printf("fsck.ufs: %s: ", image);
    printf("%llu files, %llu dirs, %llu fragments used, %llu free\n",
           (unsigned long long)f->nfiles, (unsigned long long)f->ndirs,
           (unsigned long long)f->used_frags, (unsigned long long)f->free_frags);
    return f->rep.problems ? FSCK_EXIT_FOUND : FSCK_EXIT_CLEAN;
}

static struct fsck_report *ufs_report(void *st)
{
    return &((struct fsck *)st)->rep;
}

static int ufs_dirty(void *st)
{
    return !(((struct fsck *)st)->sb.fs_clean & UFS_FSCLEAN);
}

static int ufs_clean(void *st)
{
    return ufs_mark_clean(st);
}

static int ufs_fix(void *st)
{
    return ufs_repair(st);
}

static const struct fsck_tool ufs_tool = {
    .prog = "fsck.ufs",
    .usage = USAGE,
    .help = "  check a UFS1 file system image; -n changes nothing, -y repairs every\n"
            "  problem, -p repairs the safe ones silently (maps, counts, link counts,\n"
            "  empty unreferenced inodes, the clean flag) and stops at any other;\n"
            "  exit 0 when consistent, 1 on problems found (-n) or repaired (-y, -p),\n"
            "  4 when problems are left, 2 for a usage error or an unreadable image\n",
    .state_size = sizeof(struct fsck),
    .check = ufs_check,
    .report = ufs_report,
    .dirty = ufs_dirty,
    .mark_clean = ufs_clean,
    .repair = ufs_fix,
};

int main(int argc, char **argv)
{
    return fsck_main(&ufs_tool, argc, argv);
}
