/*
 * UFS block mapping: a file's logical block to the fragment address where
 * it starts, through 12 direct pointers and the single, double and triple
 * indirect blocks (each a full block of fs_nindir 32-bit fragment
 * addresses), and the reading of a file's bytes over it.  A file's last
 * block, when it is a direct block, may hold only as many fragments as the
 * size needs (ufs_lastblock_bytes); reads never go past the size, so they
 * never look past those fragments.  Every pointer is checked before it is
 * followed.  The inode is ILOCKED throughout; theory in
 * kern/ufs/ufs_vfsops.c.
 */
#include <kern/ufs/ufs_inode.h>
#include <kern/vfs/buf.h>
#include <kern/lib/string.h>

/* A pointer to n fragments must lie wholly inside the file system. */
static bool run_valid(const struct ufs_fs *fs, int64_t f, int64_t n)
{
    return ufs_frag_valid(fs, f) && f + n <= fs->fs_sb.fs_size;
}

/* A regular file's data is read past the buffer cache (kern/ufs/ufs_page.c). */
static int read_data(struct ufs_inode *ip, uint64_t off, void *dst, size_t len)
{
    if ((ip->i_mode & UFS_IFMT) == UFS_IFREG)
        return ufs_data_io(ip->i_fs, off, dst, len, false);
    return ufs_read_bytes(ip->i_fs, off, dst, len);
}

/* Entry idx of the indirect block at fragment ind. */
static int indirect_entry(struct ufs_fs *fs, int64_t ind, uint64_t idx, int32_t *out)
{
    uint32_t at;
    int err;
    uint64_t byte = (uint64_t)ind * (uint32_t)fs->fs_sb.fs_fsize + idx * sizeof(int32_t);
    struct buf *bp = ufs_bread_byte(fs, byte, &at, &err);
    if (!bp)
        return err;
    memcpy(out, (char *)bp->b_data + at, sizeof *out);
    brelse(bp);
    return 0;
}

/* Follow level levels of indirect blocks from ind to the entry for
 * logical block rel (counted from the first block ind covers). */
static int walk_indirect(struct ufs_inode *ip, int32_t ind, int level, uint64_t rel,
                         int64_t *fragp)
{
    struct ufs_fs *fs = ip->i_fs;
    uint64_t nindir = (uint64_t)fs->fs_sb.fs_nindir, span = 1;
    for (int l = 1; l < level; l++)
        span *= nindir;
    for (; level > 0; level--, span /= nindir) {
        if (ind == 0) {
            *fragp = 0;                     /* a hole */
            return 0;
        }
        if (!run_valid(fs, ind, fs->fs_sb.fs_frag) || ind % fs->fs_sb.fs_frag) {
            ufs_corrupt(fs, "inode %u: indirect block address %d outside the file system",
                        ip->i_number, ind);
            return -EUCLEAN;
        }
        int err = indirect_entry(fs, ind, (rel / span) % nindir, &ind);
        if (err)
            return err;
    }
    *fragp = ind;
    return 0;
}

int ufs_indir_level(const struct ufs_fs *fs, uint64_t lbn, uint64_t *relp, uint64_t *spanp)
{
    uint64_t rel = lbn - UFS_NDADDR, nindir = (uint64_t)fs->fs_sb.fs_nindir, span = nindir;
    int level = 1;
    while (level <= UFS_NIADDR && rel >= span) {
        rel -= span;
        span *= nindir;
        level++;
    }
    if (level > UFS_NIADDR)
        return -EFBIG;
    *relp = rel;
    *spanp = span;
    return level;
}

int ufs_bmap(struct ufs_inode *ip, uint64_t lbn, int64_t *fragp)
{
    struct ufs_fs *fs = ip->i_fs;
    int64_t f;
    if (lbn < UFS_NDADDR) {
        f = ip->i_db[lbn];
    } else {
        uint64_t rel, span;
        int level = ufs_indir_level(fs, lbn, &rel, &span);
        if (level < 0)
            return level;
        int err = walk_indirect(ip, ip->i_ib[level - 1], level, rel, &f);
        if (err)
            return err;
    }
    if (f != 0 && !run_valid(fs, f, 1)) {
        ufs_corrupt(fs, "inode %u: logical block %lu at fragment %ld, outside the file system",
                    ip->i_number, (unsigned long)lbn, (long)f);
        return -EUCLEAN;
    }
    *fragp = f;
    return 0;
}

/* Do the n bytes at byte boff of the block at fragment f lie inside the
 * block f starts in?  A damaged pointer to a fragment in mid-block, where
 * a whole block belongs, would read the next block's data (another
 * file's). */
static bool read_in_block(const struct ufs_super *sb, int64_t f, uint64_t boff, size_t n)
{
    return (uint64_t)(f % sb->fs_frag) * (uint32_t)sb->fs_fsize + boff + n <=
           (uint64_t)sb->fs_bsize;
}

int ufs_readi(struct ufs_inode *ip, uint64_t off, void *dst, size_t len, size_t *done)
{
    struct ufs_fs *fs = ip->i_fs;
    const struct ufs_super *sb = &fs->fs_sb;
    *done = 0;
    while (len > 0 && off < ip->i_size) {
        uint64_t boff = off & (uint64_t)(sb->fs_bsize - 1);
        size_t n = MIN(len, (size_t)((uint64_t)sb->fs_bsize - boff));
        n = MIN(n, (size_t)(ip->i_size - off));
        int64_t f;
        int err = ufs_bmap(ip, off >> sb->fs_bshift, &f);
        if (err)
            return err;
        if (f != 0 && !read_in_block(sb, f, boff, n)) {
            ufs_corrupt(fs, "inode %u: the block at fragment %ld runs over a block's end",
                        ip->i_number, (long)f);
            return -EUCLEAN;
        }
        if (f == 0)
            memset(dst, 0, n);              /* a hole reads as zeros */
        else if ((err = read_data(ip, (uint64_t)f * (uint32_t)sb->fs_fsize + boff, dst, n)))
            return err;
        dst = (char *)dst + n;
        off += n;
        len -= n;
        *done += n;
    }
    return 0;
}
