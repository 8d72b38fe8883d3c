/*
 * UFS writing a file: filling holes and growing the last block (bmap with
 * allocation), writing bytes, and truncation.  A file's last block, while
 * it is a direct block, holds only the fragments its size needs; when the
 * file grows within that block the run is extended in place if the next
 * fragments are free, else moved to a bigger run or a whole block (the
 * data copied); when the file grows past it, it becomes a whole block
 * first.  New fragments are zeroed as they are taken, so a hole or the
 * part of a block past the size always reads as zeros.  Indirect blocks
 * are whole blocks.  A regular file's data never passes through the
 * buffer cache (its pages are the page cache's, kern/ufs/ufs_page.c):
 * its new fragments are zeroed, its runs moved and its tails zeroed
 * straight on the disk (data_read, data_write, data_zero), after any
 * buffer left over those fragments from metadata is dropped; directories
 * and long links keep theirs in the buffer cache.  The inode is ILOCKED
 * throughout; the allocation policy is in ufs_alloc.c, the theory in
 * ufs_vfsops.c.
 */
#include <kern/ufs/ufs_inode.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>

static int64_t frag_bytes(const struct ufs_fs *fs, int64_t f)
{
    return f * fs->fs_sb.fs_fsize;
}

/* The logical block holding the last byte of a file of size sz (> 0). */
static uint64_t last_lbn(const struct ufs_fs *fs, uint64_t sz)
{
    return (sz - 1) >> fs->fs_sb.fs_bshift;
}

/* Fragments block lbn holds in a file of size sz. */
static int block_frags(const struct ufs_fs *fs, uint64_t lbn, uint64_t sz)
{
    if (sz == 0 || lbn > last_lbn(fs, sz))
        return 0;
    if (lbn < last_lbn(fs, sz))
        return fs->fs_sb.fs_frag;
    return (int)(ufs_lastblock_bytes(&fs->fs_sb, sz) >> fs->fs_sb.fs_fshift);
}

/* Does ip's data live in the page cache (a regular file), not in the
 * buffer cache? */
static bool paged(const struct ufs_inode *ip)
{
    return (ip->i_mode & UFS_IFMT) == UFS_IFREG;
}

static int data_read(struct ufs_inode *ip, uint64_t off, void *dst, size_t len)
{
    if (paged(ip))
        return ufs_data_io(ip->i_fs, off, dst, len, false);
    return ufs_read_bytes(ip->i_fs, off, dst, len);
}

static int data_write(struct ufs_inode *ip, uint64_t off, const void *src, size_t len, bool sync)
{
    if (paged(ip))
        return ufs_data_io(ip->i_fs, off, (void *)src, len, true);
    return ufs_write_bytes(ip->i_fs, off, src, len, sync);
}

static int data_zero(struct ufs_inode *ip, uint64_t off, size_t len)
{
    if (paged(ip))
        return ufs_data_zero(ip->i_fs, off, len);
    return ufs_zero_bytes(ip->i_fs, off, len, false);
}

/* Zero the new data fragments [from, to) of ip's run at f. */
static int zero_frags(struct ufs_inode *ip, int64_t f, int from, int to)
{
    struct ufs_fs *fs = ip->i_fs;
    if (to <= from)
        return 0;
    if (paged(ip))
        ufs_data_fresh(fs, f + from, to - from);
    return data_zero(ip, (uint64_t)frag_bytes(fs, f + from),
                     (size_t)(to - from) * (uint32_t)fs->fs_sb.fs_fsize);
}

/*
 * Zero the fragments [0, n) of the new metadata block at f (an indirect
 * block: always through the buffer cache), on the disk before this
 * returns, whatever syncwrites= says.  The pointer to the block is
 * written after, so a crash can never leave an inode or indirect block
 * pointing at the block's old contents: read as an indirect block, those
 * would claim blocks that other files own now, and fsck, which gives a
 * block claimed twice to one owner only, could take a block from a file
 * that was synced (the crash test saw this on S5).  BSD FFS writes its
 * new indirect blocks synchronously for the same reason.
 */
static int zero_meta(struct ufs_fs *fs, int64_t f, int n)
{
    return ufs_zero_bytes(fs, (uint64_t)frag_bytes(fs, f), (size_t)n * (uint32_t)fs->fs_sb.fs_fsize,
                          true);
}

/* Move the have fragments at *fp to a new run of need, near them. */
static int move_run(struct ufs_inode *ip, int64_t *fp, int have, int need)
{
    struct ufs_fs *fs = ip->i_fs;
    size_t len = (size_t)have * (uint32_t)fs->fs_sb.fs_fsize;
    void *tmp = kmalloc(len);
    if (!tmp)
        return -ENOMEM;
    int64_t nf;
    int err = data_read(ip, (uint64_t)frag_bytes(fs, *fp), tmp, len);
    if (!err)
        err = ufs_frag_alloc(ip, *fp, need, &nf);
    if (!err && paged(ip))
        ufs_data_fresh(fs, nf, have);
    if (!err)
        err = data_write(ip, (uint64_t)frag_bytes(fs, nf), tmp, len, false);
    if (!err)
        err = zero_frags(ip, nf, have, need);
    kfree(tmp);
    if (err)
        return err;
    ufs_frag_free(ip, *fp, have);
    *fp = nf;
    return 0;
}

/* Make the run at *fp (have fragments, 0 for none) need fragments long. */
static int grow_run(struct ufs_inode *ip, int64_t *fp, int have, int need, int64_t pref)
{
    if (have >= need)
        return 0;
    if (have == 0) {
        int err = ufs_frag_alloc(ip, pref, need, fp);
        return err ? err : zero_frags(ip, *fp, 0, need);
    }
    if (ufs_frag_extend(ip, *fp, have, need))
        return zero_frags(ip, *fp, have, need);
    return move_run(ip, fp, have, need);
}

/* Where the next block of a file goes: after the one before it, or, for a
 * big file every fs_maxbpg blocks, in the next group with room. */
static int64_t block_pref(struct ufs_inode *ip, uint64_t lbn, int64_t prev)
{
    const struct ufs_super *sb = &ip->i_fs->fs_sb;
    if (lbn >= UFS_NDADDR && (lbn - UFS_NDADDR) % (uint64_t)sb->fs_maxbpg == 0)
        return ufs_big_file_pref(ip, prev);
    return prev ? prev + sb->fs_frag : 0;
}

/* Entry idx of the indirect block at ind: read it, or with val >= 0 set it. */
static int ind_entry(struct ufs_fs *fs, int64_t ind, uint64_t idx, int32_t *val, bool set)
{
    int64_t at = frag_bytes(fs, ind) + (int64_t)(idx * sizeof(int32_t));
    if (set)
        return ufs_write_bytes(fs, (uint64_t)at, val, sizeof *val, ufs_syncwrites());
    return ufs_read_bytes(fs, (uint64_t)at, val, sizeof *val);
}

/* A new, zeroed indirect block for *slot (an inode pointer or an entry). */
static int new_indirect(struct ufs_inode *ip, int64_t pref, int32_t *slot)
{
    struct ufs_fs *fs = ip->i_fs;
    int64_t f;
    int err = ufs_frag_alloc(ip, pref, fs->fs_sb.fs_frag, &f);
    if (!err)
        err = zero_meta(fs, f, fs->fs_sb.fs_frag);
    if (!err)
        *slot = (int32_t)f;
    return err;
}

/* The data block of logical block lbn >= UFS_NDADDR, allocated with the
 * indirect blocks on its way if need be. */
static int bmap_indirect_alloc(struct ufs_inode *ip, uint64_t lbn, int64_t *fp)
{
    struct ufs_fs *fs = ip->i_fs;
    uint64_t rel, span, nindir = (uint64_t)fs->fs_sb.fs_nindir;
    int level = ufs_indir_level(fs, lbn, &rel, &span);
    if (level < 0)
        return level;
    int64_t prev;
    int err = lbn > 0 ? ufs_bmap(ip, lbn - 1, &prev) : 0;
    if (err)
        prev = 0;
    int32_t *slot = &ip->i_ib[level - 1], ptr = *slot;
    if (ptr == 0 && (err = new_indirect(ip, prev, slot)))
        return err;
    ip->i_flag |= IMOD;
    ptr = *slot;
    for (span /= nindir; ; span /= nindir) {
        uint64_t idx = (rel / span) % nindir;
        int32_t child;
        if ((err = ind_entry(fs, ptr, idx, &child, false)))
            return err;
        if (child == 0) {
            if (span == 1) {
                err = ufs_frag_alloc(ip, block_pref(ip, lbn, prev), fs->fs_sb.fs_frag, fp);
                if (!err)
                    err = zero_frags(ip, *fp, 0, fs->fs_sb.fs_frag);
                child = (int32_t)*fp;
            } else {
                err = new_indirect(ip, prev, &child);
            }
            if (!err)
                err = ind_entry(fs, ptr, idx, &child, true);
            if (err)
                return err;
        }
        if (span == 1) {
            *fp = child;
            return 0;
        }
        ptr = child;
    }
}

/* Make block lbn hold need fragments (a direct block) or a whole block;
 * its fragment address in *fp. */
static int bmap_alloc(struct ufs_inode *ip, uint64_t lbn, int need, int64_t *fp)
{
    struct ufs_fs *fs = ip->i_fs;
    if (lbn >= UFS_NDADDR) {
        int err = ufs_bmap(ip, lbn, fp);
        return err || *fp ? err : bmap_indirect_alloc(ip, lbn, fp);
    }
    int64_t f = ip->i_db[lbn];
    int have = f ? block_frags(fs, lbn, ip->i_size) : 0;
    if (f && have == 0)
        have = fs->fs_sb.fs_frag;           /* past the size: a whole block */
    int64_t pref = lbn > 0 && ip->i_db[lbn - 1] ? ip->i_db[lbn - 1] + fs->fs_sb.fs_frag : 0;
    int err = grow_run(ip, &f, have, need, pref);
    if (err)
        return err;
    ip->i_db[lbn] = (int32_t)f;
    ip->i_flag |= IMOD;
    *fp = f;
    return 0;
}

/* Before the size goes to nsize: a fragment-run last block that the file
 * grows past becomes a whole block, and the size covers it. */
static int grow_last_block(struct ufs_inode *ip, uint64_t nsize)
{
    struct ufs_fs *fs = ip->i_fs;
    if (ip->i_size == 0)
        return 0;
    uint64_t olast = last_lbn(fs, ip->i_size);
    if (olast >= UFS_NDADDR || last_lbn(fs, nsize) == olast || ip->i_db[olast] == 0 ||
        block_frags(fs, olast, ip->i_size) == fs->fs_sb.fs_frag)
        return 0;
    int64_t f;
    int err = bmap_alloc(ip, olast, fs->fs_sb.fs_frag, &f);
    if (!err)
        ip->i_size = (olast + 1) << fs->fs_sb.fs_bshift;
    return err;
}

/* Fragments block lbn needs in a file of size nsize (whole past the
 * direct blocks or before the last). */
static int frags_needed(const struct ufs_fs *fs, uint64_t lbn, uint64_t nsize)
{
    if (lbn >= UFS_NDADDR || lbn < last_lbn(fs, nsize))
        return fs->fs_sb.fs_frag;
    return (int)(ufs_lastblock_bytes(&fs->fs_sb, nsize) >> fs->fs_sb.fs_fshift);
}

int ufs_balloc(struct ufs_inode *ip, uint64_t lbn, uint64_t nsize, int64_t *fp)
{
    int err = grow_last_block(ip, nsize);
    return err ? err : bmap_alloc(ip, lbn, frags_needed(ip->i_fs, lbn, nsize), fp);
}

int ufs_writei(struct ufs_inode *ip, uint64_t off, const void *src, size_t n, bool sync)
{
    struct ufs_fs *fs = ip->i_fs;
    uint64_t nsize = MAX(ip->i_size, off + n), lbn = off >> fs->fs_sb.fs_bshift;
    int64_t f;
    int err = ufs_balloc(ip, lbn, nsize, &f);
    if (!err)
        err = data_write(ip, (uint64_t)frag_bytes(fs, f) + (off & (uint64_t)(fs->fs_sb.fs_bsize - 1)),
                         src, n, sync);
    if (!err && off + n > ip->i_size)
        ip->i_size = off + n;
    return err;
}

/* ---- truncation ---- */

/*
 * Free what the indirect block ind (of level: 1 holds data blocks) holds
 * for logical blocks at or past keep; first is the first block it covers.
 * Returns true when the block itself was freed (its pointer must go).
 * Bad pointers are reported and dropped, never followed.
 */
static bool trunc_indirect(struct ufs_inode *ip, int32_t ind, int level, uint64_t first,
                           uint64_t keep)
{
    struct ufs_fs *fs = ip->i_fs;
    const struct ufs_super *sb = &fs->fs_sb;
    if (!ufs_frag_valid(fs, ind) || ind % sb->fs_frag) {
        ufs_corrupt(fs, "inode %u: indirect block %d out of range", ip->i_number, ind);
        return true;
    }
    uint64_t span = 1;
    for (int l = 1; l < level; l++)
        span *= (uint64_t)sb->fs_nindir;
    size_t len = (size_t)sb->fs_bsize;
    int32_t *ptr = kmalloc(len);
    if (!ptr || ufs_read_bytes(fs, (uint64_t)frag_bytes(fs, ind), ptr, len)) {
        kfree(ptr);
        return false;
    }
    bool changed = false;
    for (int32_t i = 0; i < sb->fs_nindir; i++) {
        uint64_t c = first + (uint64_t)i * span;
        if (ptr[i] == 0 || c + span <= keep)
            continue;
        bool gone = true;
        if (level > 1)
            gone = trunc_indirect(ip, ptr[i], level - 1, c, keep);
        else if (ufs_frag_valid(fs, ptr[i]))
            ufs_frag_free(ip, ptr[i], sb->fs_frag);
        if (gone) {
            ptr[i] = 0;
            changed = true;
        }
    }
    bool whole = first >= keep;
    if (whole)
        ufs_frag_free(ip, ind, sb->fs_frag);
    else if (changed)
        ufs_write_bytes(fs, (uint64_t)frag_bytes(fs, ind), ptr, len, ufs_syncwrites());
    kfree(ptr);
    return whole;
}

/* Shrink to nsize < i_size: zero past the new end, free what lies past. */
static int shrink(struct ufs_inode *ip, uint64_t nsize)
{
    struct ufs_fs *fs = ip->i_fs;
    const struct ufs_super *sb = &fs->fs_sb;
    uint64_t keep = (nsize + (uint64_t)sb->fs_bsize - 1) >> sb->fs_bshift;
    if (nsize > 0) {
        uint64_t lbn = last_lbn(fs, nsize), end = MIN((lbn + 1) << sb->fs_bshift, ip->i_size);
        int64_t f;
        int err = ufs_bmap(ip, lbn, &f);
        if (!err && f && end > nsize)
            err = data_zero(ip, (uint64_t)frag_bytes(fs, f) + (nsize & (uint64_t)(sb->fs_bsize - 1)),
                            (size_t)(end - nsize));
        if (err)
            return err;
    }
    for (uint64_t lbn = 0; lbn < UFS_NDADDR; lbn++) {
        int have = block_frags(fs, lbn, ip->i_size), need = block_frags(fs, lbn, nsize);
        if (ip->i_db[lbn] == 0 || have <= need)
            continue;
        if (ufs_frag_valid(fs, ip->i_db[lbn]))
            ufs_frag_free(ip, ip->i_db[lbn] + need, have - need);
        if (need == 0)
            ip->i_db[lbn] = 0;
    }
    uint64_t first = UFS_NDADDR, span = (uint64_t)sb->fs_nindir;
    for (int level = 1; level <= UFS_NIADDR; level++, span *= (uint64_t)sb->fs_nindir) {
        if (ip->i_ib[level - 1] && first + span > keep &&
            trunc_indirect(ip, ip->i_ib[level - 1], level, first, keep))
            ip->i_ib[level - 1] = 0;
        first += span;
    }
    ip->i_size = nsize;
    ip->i_flag |= IMOD;
    return 0;
}

int ufs_itrunc(struct ufs_inode *ip, uint64_t nsize)
{
    struct ufs_fs *fs = ip->i_fs;
    int err = 0;
    uint16_t type = ip->i_mode & UFS_IFMT;
    if (type != UFS_IFREG && type != UFS_IFDIR && type != UFS_IFLNK)
        return 0;
    if (type == UFS_IFLNK && ip->i_blocks == 0) {
        memset(ip->i_db, 0, sizeof ip->i_db);   /* a short link's target */
        memset(ip->i_ib, 0, sizeof ip->i_ib);
        ip->i_size = nsize;
    } else if (nsize < ip->i_size) {
        err = shrink(ip, nsize);
    } else if (nsize > ip->i_size) {
        err = grow_last_block(ip, nsize);
        uint64_t lbn = last_lbn(fs, nsize);
        int64_t f;
        if (!err && lbn < UFS_NDADDR && ip->i_db[lbn])
            err = bmap_alloc(ip, lbn, frags_needed(fs, lbn, nsize), &f);
        if (!err)
            ip->i_size = nsize;
    }
    ufs_itimes(ip, UFS_UPD | UFS_CHG);
    return err;
}
