/*
 * S5 block mapping: logical block of a file to disk block, through the 10
 * direct pointers and the single, double and triple indirect blocks
 * (3-byte addresses in the inode, 4-byte ones in indirect blocks).  Every
 * pointer read is checked against the data area before it is used.  The
 * inode is ILOCKED throughout, which is what keeps its tree still; the
 * theory is in kern/s5/s5_vfsops.c.
 */
#include <kern/s5/s5_inode.h>
#include <kern/vfs/buf.h>
#include <kern/lib/string.h>
#include <kern/vm/kmem.h>

/* Pointer entry idx of indirect block bno into *nextp, checked. */
static int read_indirect(struct s5_inode *ip, uint32_t bno, uint32_t idx, uint32_t *nextp)
{
    struct s5_fs *fs = ip->i_fs;
    int err = 0;
    struct buf *bp = s5_bread(fs, bno, &err);
    if (!bp)
        return err;
    uint32_t next = ((const uint32_t *)bp->b_data)[idx];
    brelse(bp);
    if (next != 0 && !s5_bno_valid(&fs->fs_sb, next)) {
        s5_corrupt(fs, "inode %u: indirect block %u entry %u: block %u out of range [%u, %u)",
                   ip->i_number, bno, idx, next, fs->fs_sb.s_isize, fs->fs_sb.s_fsize);
        return -EUCLEAN;
    }
    *nextp = next;
    return 0;
}

/* A new indirect block bno, zero but for entry idx = child. */
static int write_new_indirect(struct s5_fs *fs, uint32_t bno, uint32_t idx, uint32_t child)
{
    struct buf *bp = s5_getblk(fs, bno);
    clrbuf(bp);
    ((uint32_t *)bp->b_data)[idx] = child;
    return s5_bwrite_meta(bp, s5_syncwrites());
}

/* Store child in the pointer that was missing: in the inode when parent
 * is 0, else entry idx of indirect block parent. */
static int link_pointer(struct s5_inode *ip, uint32_t parent, uint32_t idx, uint32_t child)
{
    if (parent == 0) {
        ip->i_addr[idx] = child;
        ip->i_flag |= IMOD;
        return 0;
    }
    int err = 0;
    struct buf *bp = s5_bread(ip->i_fs, parent, &err);
    if (!bp)
        return err;
    ((uint32_t *)bp->b_data)[idx] = child;
    return s5_bwrite_meta(bp, s5_syncwrites());
}

/*
 * Fill the hole at depth `depth` of the path idx[0..levels]: allocate the
 * missing indirect blocks and the data block all at once (so a full disk
 * leaves no half-built chain behind), write the new indirect blocks from
 * the bottom up, then link the top one in.
 */
static int fill_hole(struct s5_inode *ip, const uint32_t idx[4], int levels, int depth,
                     uint32_t parent, uint32_t *bnop)
{
    struct s5_fs *fs = ip->i_fs;
    int need = levels - depth + 1;
    uint32_t nb[4];
    for (int k = 0; k < need; k++) {
        int err = s5_balloc(fs, &nb[k]);
        if (err) {
            while (k-- > 0)
                s5_bfree(fs, nb[k]);
            return err;
        }
    }
    for (int k = need - 2; k >= 0; k--) {
        int err = write_new_indirect(fs, nb[k], idx[depth + 1 + k], nb[k + 1]);
        if (err) {
            for (k = 0; k < need; k++)
                s5_bfree(fs, nb[k]);
            return err;
        }
    }
    int err = link_pointer(ip, parent, idx[depth], nb[0]);
    if (err) {
        for (int k = 0; k < need; k++)
            s5_bfree(fs, nb[k]);
        return err;
    }
    if (ip->i_flag & IBLKS)
        ip->i_nblocks += need;
    *bnop = nb[need - 1];
    return 0;
}

int s5_bmap(struct s5_inode *ip, uint32_t lbn, bool alloc, uint32_t *bnop, bool *newp)
{
    struct s5_fs *fs = ip->i_fs;
    uint32_t idx[4];
    int levels = s5_lbn_path(lbn, idx);
    if (newp)
        *newp = false;
    if (levels < 0)
        return -EFBIG;
    uint32_t b = ip->i_addr[idx[0]], parent = 0;
    if (b != 0 && !s5_bno_valid(&fs->fs_sb, b)) {
        s5_corrupt(fs, "inode %u: block pointer %u is %u, out of range [%u, %u)", ip->i_number,
                   idx[0], b, fs->fs_sb.s_isize, fs->fs_sb.s_fsize);
        return -EUCLEAN;
    }
    int depth = 0;
    while (b != 0 && depth < levels) {
        uint32_t next = 0;
        int err = read_indirect(ip, b, idx[depth + 1], &next);
        if (err)
            return err;
        parent = b;
        b = next;
        depth++;
    }
    if (b != 0 || !alloc) {
        *bnop = b;
        return 0;
    }
    int err = fill_hole(ip, idx, levels, depth, parent, bnop);
    if (!err && newp)
        *newp = true;
    return err;
}

/* Blocks under pointer b at the given level (0: a data block). */
static int count_tree(struct s5_inode *ip, uint32_t b, int level, uint32_t *np)
{
    struct s5_fs *fs = ip->i_fs;
    if (b == 0)
        return 0;
    if (!s5_bno_valid(&fs->fs_sb, b))
        return -EUCLEAN;
    (*np)++;
    if (level == 0)
        return 0;
    int err = 0;
    struct buf *bp = s5_bread(fs, b, &err);
    if (!bp)
        return err;
    uint32_t *copy = NULL;
    if (level > 1) {
        /* Do not hold the buffer while reading the level below. */
        copy = kmalloc(S5_BSIZE);
        if (!copy) {
            brelse(bp);
            return -ENOMEM;
        }
        memcpy(copy, bp->b_data, S5_BSIZE);
        brelse(bp);
        for (uint32_t i = 0; i < S5_NINDIR && !err; i++)
            err = count_tree(ip, copy[i], level - 1, np);
        kfree(copy);
        return err;
    }
    const uint32_t *ptr = (const uint32_t *)bp->b_data;
    for (uint32_t i = 0; i < S5_NINDIR; i++)
        if (ptr[i] != 0)
            (*np)++;
    brelse(bp);
    return 0;
}

int s5_count_blocks(struct s5_inode *ip, uint32_t *np)
{
    *np = 0;
    int err = 0;
    for (int i = 0; i < S5_NADDR && !err; i++) {
        int level = i < S5_NDADDR ? 0 : i - S5_NDADDR + 1;
        err = count_tree(ip, ip->i_addr[i], level, np);
    }
    return err;
}
