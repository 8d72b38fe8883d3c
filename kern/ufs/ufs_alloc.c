/*
 * UFS allocation by cylinder group, the policy of the FFS paper in its
 * plain form:
 *
 *   - a directory's inode goes to a group with at least the average number
 *     of free inodes and the fewest directories (directories spread out);
 *   - a file's inode goes to its directory's group, its blocks near the
 *     block before them (or the inode's group for the first);
 *   - a big file moves on: every fs_maxbpg blocks past the direct ones it
 *     starts again in the next group with at least the average number of
 *     free blocks;
 *   - a small file's last block is only as many fragments as it needs,
 *     taken from a run of free fragments in a partly used block when one
 *     is big enough (cg_frsum says where), else from a whole free block.
 *
 * A group's block (header, inode map, fragment map, cluster map and
 * summary) is read whole into its slot's copy, changed and written back,
 * all under the group's allocation resource lock (fs_cg[c].lock, held
 * across that I/O), so CPUs allocate in different groups at once; no
 * thread holds two groups' locks.  Each change of the fragment map is accounted per block: the
 * block's part of the counts (free blocks, free fragments, cg_frsum, its
 * cluster bit) is taken out before the change and put back after it, so
 * every count stays what fsck.ufs computes from the maps.  The group's
 * counts are kept three times -- in its block, in the summary area
 * (fs_cs, written at sync) and in the superblock's total -- the last two
 * under fs_lock.  Theory in kern/ufs/ufs_vfsops.c.
 */
#include <kern/ufs/ufs_inode.h>
#include <kern/lib/string.h>
#include <kern/lib/kprintf.h>
#include <kern/vm/kmem.h>

/* The group loaded in its slot's copy, and where its maps are. */
struct cgref {
    uint32_t c;
    struct ufs_cg *cg;
    uint8_t *iused, *ffree, *clmap;
    int32_t *clsum;
    int64_t nfrags;             /* fragments in the group */
};

static uint64_t cg_byte(const struct ufs_fs *fs, uint32_t c)
{
    return (uint64_t)ufs_cgtod(&fs->fs_sb, c) * (uint32_t)fs->fs_sb.fs_fsize;
}

/* A group block whose maps lie inside it and which names its group. */
static const char *cg_invalid(const struct ufs_fs *fs, const struct ufs_cg *cg, uint32_t c)
{
    const struct ufs_super *sb = &fs->fs_sb;
    int64_t size = sb->fs_cgsize, hdr = (int64_t)sizeof *cg;
    if (cg->cg_magic != UFS_CG_MAGIC || cg->cg_cgx != (int32_t)c)
        return "bad magic number or group number";
    if (cg->cg_iusedoff < hdr || (int64_t)cg->cg_iusedoff + (sb->fs_ipg + 7) / 8 > size ||
        cg->cg_freeoff < hdr || (int64_t)cg->cg_freeoff + (sb->fs_fpg + 7) / 8 > size)
        return "its maps lie outside its block";
    if (sb->fs_contigsumsize > 0 &&
        (cg->cg_clustersumoff < hdr || cg->cg_clustersumoff % 4 ||
         (int64_t)cg->cg_clustersumoff + 4 * (sb->fs_contigsumsize + 1) > size ||
         cg->cg_clusteroff < hdr ||
         (int64_t)cg->cg_clusteroff + (sb->fs_fpg / sb->fs_frag + 7) / 8 > size))
        return "its cluster maps lie outside its block";
    return NULL;
}

/* Load group c into its slot's copy (its lock held). */
static int cg_load(struct ufs_fs *fs, uint32_t c, struct cgref *g)
{
    struct ufs_cgslot *slot = &fs->fs_cg[c];
    if (!slot->buf && !(slot->buf = kzalloc((size_t)fs->fs_sb.fs_cgsize)))
        return -ENOMEM;
    int err = ufs_read_bytes(fs, cg_byte(fs, c), slot->buf, (size_t)fs->fs_sb.fs_cgsize);
    if (err)
        return err;
    struct ufs_cg *cg = (struct ufs_cg *)slot->buf;
    const char *why = cg_invalid(fs, cg, c);
    if (why) {
        ufs_corrupt(fs, "group %u: %s; nothing is allocated there", c, why);
        return -EUCLEAN;
    }
    uint8_t *b = slot->buf;
    *g = (struct cgref){ .c = c, .cg = cg, .iused = b + cg->cg_iusedoff,
                         .ffree = b + cg->cg_freeoff, .clmap = b + cg->cg_clusteroff,
                         .clsum = (int32_t *)(b + cg->cg_clustersumoff),
                         .nfrags = ufs_cgfrags(&fs->fs_sb, c) };
    return 0;
}

/* Group blocks are delayed writes even with syncwrites=on, as in BSD's
 * FFS: a map that lags behind the inodes after a crash is what fsck
 * repairs, and the allocation lock is not held across a disk write. */
static int cg_store(struct ufs_fs *fs, struct cgref *g)
{
    g->cg->cg_time = (int32_t)ufs_now();
    return ufs_write_bytes(fs, cg_byte(fs, g->c), fs->fs_cg[g->c].buf,
                           (size_t)fs->fs_sb.fs_cgsize, false);
}

/* Add the deltas to the group's three copies of its counts. */
static void counts_add(struct ufs_fs *fs, struct cgref *g, int ndir, int nbfree, int nifree,
                       int nffree)
{
    struct ufs_csum *cs[3] = { &g->cg->cg_cs, &fs->fs_cs[g->c], &fs->fs_sb.fs_cstotal };
    mutex_enter(&fs->fs_lock);
    for (int i = 0; i < 3; i++) {
        cs[i]->cs_ndir += ndir;
        cs[i]->cs_nbfree += nbfree;
        cs[i]->cs_nifree += nifree;
        cs[i]->cs_nffree += nffree;
    }
    fs->fs_fmod = true;
    mutex_exit(&fs->fs_lock);
}

/* Free fragments of block b (fragment index of its first) in the group;
 * the group's missing tail counts as used. */
static int block_free_frags(const struct ufs_fs *fs, const struct cgref *g, int64_t b)
{
    int n = 0;
    for (int i = 0; i < fs->fs_sb.fs_frag; i++)
        n += b + i < g->nfrags && ufs_isset(g->ffree, (uint64_t)(b + i));
    return n;
}

/* Block b's part of the counts, times sign: a free block, or its free
 * fragments and their runs (cg_frsum). */
static void block_acct(struct ufs_fs *fs, struct cgref *g, int64_t b, int sign)
{
    int frag = fs->fs_sb.fs_frag, nfree = block_free_frags(fs, g, b), run = 0;
    if (nfree == frag) {
        counts_add(fs, g, 0, sign, 0, 0);
        return;
    }
    for (int i = 0; i <= frag; i++) {
        if (i < frag && b + i < g->nfrags && ufs_isset(g->ffree, (uint64_t)(b + i))) {
            run++;
            continue;
        }
        if (run)
            g->cg->cg_frsum[run] += sign;
        run = 0;
    }
    counts_add(fs, g, 0, 0, 0, sign * nfree);
}

/* The cluster summary again from the cluster map (entry n: free runs of n
 * blocks, the last entry those of at least that many).  Entry 0 is never
 * used: BSD places the array one entry early, so entry 0 may overlap the
 * end of the fragment map. */
static void cluster_recount(struct ufs_fs *fs, struct cgref *g)
{
    int32_t max = fs->fs_sb.fs_contigsumsize, run = 0;
    if (max <= 0)
        return;
    memset(g->clsum + 1, 0, sizeof(int32_t) * (size_t)max);
    int64_t nblk = g->nfrags / fs->fs_sb.fs_frag;
    for (int64_t b = 0; b <= nblk; b++) {
        if (b < nblk && ufs_isset(g->clmap, (uint64_t)b)) {
            run++;
            continue;
        }
        if (run)
            g->clsum[run < max ? run : max]++;
        run = 0;
    }
}

/* Set fragments [f, f + n) of the group (one block) free or used, with
 * the accounting around the change. */
static void frags_mark(struct ufs_fs *fs, struct cgref *g, int64_t f, int n, bool free)
{
    int frag = fs->fs_sb.fs_frag;
    int64_t b = f - f % frag;
    bool was_whole = block_free_frags(fs, g, b) == frag;
    block_acct(fs, g, b, -1);
    for (int i = 0; i < n; i++) {
        if (free)
            ufs_setbit(g->ffree, (uint64_t)(f + i));
        else
            ufs_clrbit(g->ffree, (uint64_t)(f + i));
    }
    block_acct(fs, g, b, +1);
    bool whole = block_free_frags(fs, g, b) == frag;
    if (whole != was_whole && fs->fs_sb.fs_contigsumsize > 0) {
        if (whole)
            ufs_setbit(g->clmap, (uint64_t)(b / frag));
        else
            ufs_clrbit(g->clmap, (uint64_t)(b / frag));
        cluster_recount(fs, g);
    }
}

/* ---- finding space in a group ---- */

/* The first run of n free fragments inside one block, from block start
 * on (wrapping), in a block that is whole-free only if whole_ok; -1. */
static int64_t find_run(struct ufs_fs *fs, struct cgref *g, int64_t start, int n, bool whole_ok)
{
    int frag = fs->fs_sb.fs_frag;
    int64_t nblk = g->nfrags / frag;
    if (nblk == 0)
        return -1;
    int64_t first = ((start < 0 ? 0 : start) / frag) % nblk;
    for (int64_t k = 0; k < nblk; k++) {
        int64_t b = ((first + k) % nblk) * frag;
        int nfree = block_free_frags(fs, g, b), run = 0;
        if (nfree < n || (nfree == frag && !whole_ok))
            continue;
        for (int i = 0; i < frag; i++) {
            run = ufs_isset(g->ffree, (uint64_t)(b + i)) ? run + 1 : 0;
            if (run == n)
                return b + i - n + 1;
        }
    }
    return -1;
}

/* n fragments (n == fs_frag: a whole block) in group g near fragment
 * pref (group-relative, or -1); -1 if the group has none. */
static int64_t group_alloc(struct ufs_fs *fs, struct cgref *g, int64_t pref, int n)
{
    int frag = fs->fs_sb.fs_frag;
    int64_t f = -1;
    if (n < frag) {
        bool partial = false;
        for (int i = n; i < frag && !partial; i++)
            partial = g->cg->cg_frsum[i] > 0;
        if (partial)
            f = find_run(fs, g, pref, n, false);
    }
    if (f < 0)
        f = find_run(fs, g, pref, frag, true);
    if (f < 0)
        return -1;
    frags_mark(fs, g, f, n, false);
    g->cg->cg_rotor = (int32_t)f;
    return f;
}

/* Groups to try, from the preferred one on: does group c have room for n
 * fragments (by the summary, a hint)? */
static bool group_has_room(struct ufs_fs *fs, uint32_t c, int n)
{
    mutex_enter(&fs->fs_lock);
    const struct ufs_csum *cs = &fs->fs_cs[c];
    bool room = cs->cs_nbfree > 0 || (n < fs->fs_sb.fs_frag && cs->cs_nffree >= n);
    mutex_exit(&fs->fs_lock);
    return room;
}

/* Try to take n fragments near pref in group c, under its lock: the
 * group-relative fragment, or -1 (no room), or a negative errno. */
static int64_t try_group(struct ufs_fs *fs, uint32_t c, int64_t pref, int n)
{
    const struct ufs_super *sb = &fs->fs_sb;
    struct cgref g;
    int64_t f = -1;
    rlock_acquire(&fs->fs_cg[c].lock);
    if (cg_load(fs, c, &g) == 0) {
        int64_t rel = pref > 0 && ufs_dtog(sb, pref) == c ? pref - ufs_cgbase(sb, c)
                                                         : g.cg->cg_rotor;
        f = group_alloc(fs, &g, rel, n);
        if (f >= 0) {
            int err = cg_store(fs, &g);
            f = err ? err : f;
        }
    }
    rlock_release(&fs->fs_cg[c].lock);
    return f;
}

int ufs_frag_alloc(struct ufs_inode *ip, int64_t pref, int n, int64_t *fragp)
{
    struct ufs_fs *fs = ip->i_fs;
    const struct ufs_super *sb = &fs->fs_sb;
    uint32_t start = pref > 0 && pref < sb->fs_size ? ufs_dtog(sb, pref)
                                                    : ufs_ino_to_cg(sb, ip->i_number);
    for (uint32_t k = 0; k < (uint32_t)sb->fs_ncg; k++) {
        uint32_t c = (start + k) % (uint32_t)sb->fs_ncg;
        if (!group_has_room(fs, c, n))
            continue;
        int64_t f = try_group(fs, c, pref, n);
        if (f == -1)
            continue;
        if (f < -1)
            return (int)f;                  /* the write of the group block failed */
        *fragp = ufs_cgbase(sb, c) + f;
        ip->i_blocks += (uint32_t)n * (uint32_t)(sb->fs_fsize / UFS_DEV_BSIZE);
        ip->i_flag |= IMOD;
        return 0;
    }
    return -ENOSPC;
}

bool ufs_frag_extend(struct ufs_inode *ip, int64_t f, int osize, int nsize)
{
    struct ufs_fs *fs = ip->i_fs;
    const struct ufs_super *sb = &fs->fs_sb;
    uint32_t c = ufs_dtog(sb, f);
    int64_t rel = f - ufs_cgbase(sb, c);
    bool done = false;
    if (rel % sb->fs_frag + nsize > sb->fs_frag)
        return false;                       /* would cross into the next block */
    rlock_acquire(&fs->fs_cg[c].lock);
    struct cgref g;
    if (cg_load(fs, c, &g) == 0) {
        done = true;
        for (int i = osize; i < nsize && done; i++)
            done = rel + i < g.nfrags && ufs_isset(g.ffree, (uint64_t)(rel + i));
        if (done) {
            frags_mark(fs, &g, rel + osize, nsize - osize, false);
            done = cg_store(fs, &g) == 0;
        }
    }
    rlock_release(&fs->fs_cg[c].lock);
    if (done) {
        ip->i_blocks += (uint32_t)(nsize - osize) * (uint32_t)(sb->fs_fsize / UFS_DEV_BSIZE);
        ip->i_flag |= IMOD;
    }
    return done;
}

void ufs_frag_free(struct ufs_inode *ip, int64_t f, int n)
{
    struct ufs_fs *fs = ip->i_fs;
    const struct ufs_super *sb = &fs->fs_sb;
    uint32_t dev_per_frag = (uint32_t)(sb->fs_fsize / UFS_DEV_BSIZE);
    ip->i_blocks = ip->i_blocks >= (uint32_t)n * dev_per_frag ? ip->i_blocks - (uint32_t)n * dev_per_frag : 0;
    ip->i_flag |= IMOD;
    uint32_t c = ufs_dtog(sb, f);
    int64_t rel = f - ufs_cgbase(sb, c);
    if (!ufs_frag_valid(fs, f) || rel % sb->fs_frag + n > sb->fs_frag) {
        ufs_corrupt(fs, "inode %u: freeing fragments %ld..%ld, not one block's", ip->i_number,
                    (long)f, (long)(f + n - 1));
        return;
    }
    rlock_acquire(&fs->fs_cg[c].lock);
    struct cgref g;
    if (cg_load(fs, c, &g) == 0) {
        for (int i = 0; i < n; i++)
            if (ufs_isset(g.ffree, (uint64_t)(rel + i)))
                ufs_corrupt(fs, "fragment %ld freed twice", (long)(f + i));
        frags_mark(fs, &g, rel, n, true);
        cg_store(fs, &g);
    }
    rlock_release(&fs->fs_cg[c].lock);
}

/* ---- inodes ---- */

/* A directory's group: at least the average free inodes, fewest
 * directories; a file's: its directory's, or the next with a free one. */
static uint32_t inode_group(struct ufs_fs *fs, uint32_t parent_cg, bool dir)
{
    uint32_t ncg = (uint32_t)fs->fs_sb.fs_ncg, best = parent_cg;
    mutex_enter(&fs->fs_lock);
    if (dir) {
        int32_t avg = fs->fs_sb.fs_cstotal.cs_nifree / (int32_t)ncg, fewest = INT32_MAX;
        for (uint32_t c = 0; c < ncg; c++)
            if (fs->fs_cs[c].cs_nifree >= avg && fs->fs_cs[c].cs_nifree > 0 &&
                fs->fs_cs[c].cs_ndir < fewest) {
                fewest = fs->fs_cs[c].cs_ndir;
                best = c;
            }
    }
    mutex_exit(&fs->fs_lock);
    return best;
}

static int64_t group_ialloc(struct ufs_fs *fs, struct cgref *g, bool dir)
{
    uint32_t ipg = (uint32_t)fs->fs_sb.fs_ipg;
    for (uint32_t k = 0; k < ipg; k++) {
        uint32_t i = ((uint32_t)g->cg->cg_irotor + k) % ipg;
        if ((g->c == 0 && i < UFS_ROOTINO) || ufs_isset(g->iused, i))
            continue;
        ufs_setbit(g->iused, i);
        g->cg->cg_irotor = (int32_t)i;
        counts_add(fs, g, dir ? 1 : 0, 0, -1, 0);
        return (int64_t)g->c * ipg + i;
    }
    return -1;
}

/* An inode from group c's map, under its lock: its number, -1 (none
 * free), or a negative errno. */
static int64_t try_group_inode(struct ufs_fs *fs, uint32_t c, bool dir)
{
    struct cgref g;
    int64_t ino = -1;
    rlock_acquire(&fs->fs_cg[c].lock);
    if (cg_load(fs, c, &g) == 0 && (ino = group_ialloc(fs, &g, dir)) >= 0) {
        int err = cg_store(fs, &g);
        ino = err ? err : ino;
    }
    rlock_release(&fs->fs_cg[c].lock);
    return ino;
}

int ufs_ino_alloc(struct ufs_inode *dp, bool dir, uint32_t *inop)
{
    struct ufs_fs *fs = dp->i_fs;
    uint32_t ncg = (uint32_t)fs->fs_sb.fs_ncg;
    uint32_t start = inode_group(fs, ufs_ino_to_cg(&fs->fs_sb, dp->i_number), dir);
    for (uint32_t k = 0; k < ncg; k++) {
        uint32_t c = (start + k) % ncg;
        mutex_enter(&fs->fs_lock);
        bool room = fs->fs_cs[c].cs_nifree > 0;
        mutex_exit(&fs->fs_lock);
        int64_t ino = room ? try_group_inode(fs, c, dir) : -1;
        if (ino == -1)
            continue;
        if (ino < -1)
            return (int)ino;
        *inop = (uint32_t)ino;
        return 0;
    }
    return -ENOSPC;
}

void ufs_ino_free(struct ufs_fs *fs, uint32_t ino, bool dir)
{
    const struct ufs_super *sb = &fs->fs_sb;
    uint32_t c = ufs_ino_to_cg(sb, ino), i = ino % (uint32_t)sb->fs_ipg;
    rlock_acquire(&fs->fs_cg[c].lock);
    struct cgref g;
    if (cg_load(fs, c, &g) == 0) {
        if (!ufs_isset(g.iused, i)) {
            ufs_corrupt(fs, "inode %u freed twice", ino);
        } else {
            ufs_clrbit(g.iused, i);
            counts_add(fs, &g, dir ? -1 : 0, 0, 1, 0);
            cg_store(fs, &g);
        }
    }
    rlock_release(&fs->fs_cg[c].lock);
}

int64_t ufs_big_file_pref(struct ufs_inode *ip, int64_t prev)
{
    struct ufs_fs *fs = ip->i_fs;
    const struct ufs_super *sb = &fs->fs_sb;
    uint32_t ncg = (uint32_t)sb->fs_ncg, from = prev > 0 ? ufs_dtog(sb, prev) : 0;
    mutex_enter(&fs->fs_lock);
    int32_t avg = sb->fs_cstotal.cs_nbfree / (int32_t)ncg;
    uint32_t c = from;
    for (uint32_t k = 1; k <= ncg; k++) {
        c = (from + k) % ncg;
        if (fs->fs_cs[c].cs_nbfree >= avg && fs->fs_cs[c].cs_nbfree > 0)
            break;
    }
    mutex_exit(&fs->fs_lock);
    return ufs_cgdmin(sb, c);
}
