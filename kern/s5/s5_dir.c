/*
 * S5 directories: files of 16-byte entries (a 2-byte inode number, 0 for
 * an empty slot, and a 14-byte NUL-padded name), "." and ".." first,
 * never holes, never compacted.  Every function here runs with the
 * directory ILOCKED; the theory is in kern/s5/s5_vfsops.c.
 */
#include <kern/s5/s5_inode.h>
#include <kern/vfs/dnlc.h>
#include <kern/vfs/buf.h>
#include <kern/lib/string.h>

int s5_dirblk(struct s5_inode *dp, uint32_t off, struct buf **bpp)
{
    uint32_t bno;
    int err = s5_bmap(dp, s5_lblkno(off), false, &bno, NULL);
    if (err)
        return err;
    if (bno == 0) {
        s5_corrupt(dp->i_fs, "directory %u: hole at logical block %u (size %u)", dp->i_number,
                   s5_lblkno(off), dp->i_size);
        return -EUCLEAN;
    }
    *bpp = s5_bread(dp->i_fs, bno, &err);
    return *bpp ? 0 : err;
}

/* The entry at offset off within its (busy) directory block. */
static struct s5_direct *entry_at(struct buf *bp, uint32_t off)
{
    return (struct s5_direct *)((char *)bp->b_data + s5_blkoff(off));
}

/*
 * Call visit on each entry slot of dp, in order, a block at a time (the
 * block busy meanwhile), until it returns non-zero.  Returns that value,
 * 0 when every slot was visited, or a negative errno from a block read.
 */
static int dir_walk(struct s5_inode *dp,
                    int (*visit)(const struct s5_direct *de, uint32_t off, void *arg), void *arg)
{
    for (uint32_t off = 0; off < dp->i_size; ) {
        struct buf *bp;
        int err = s5_dirblk(dp, off, &bp);
        if (err)
            return err;
        uint32_t end = MIN(dp->i_size, (s5_lblkno(off) + 1) * S5_BSIZE);
        int r = 0;
        for (; off < end && !r; off += S5_DIRENT_SIZE)
            r = visit(entry_at(bp, off), off, arg);
        brelse(bp);
        if (r)
            return r;
    }
    return 0;
}

struct search {
    const char *name;
    uint32_t len;
    struct s5_dirslot *ds;
};

static int search_visit(const struct s5_direct *de, uint32_t off, void *arg)
{
    struct search *s = arg;
    if (de->d_ino == 0) {
        if (s->ds->free_off < 0)
            s->ds->free_off = off;
        return 0;
    }
    if (!s5_namematch(de->d_name, s->name, s->len))
        return 0;
    s->ds->ino = de->d_ino;
    s->ds->off = off;
    return 1;
}

int s5_dirsearch(struct s5_inode *dp, const char *name, struct s5_dirslot *ds)
{
    struct search s = { .name = name, .len = (uint32_t)strlen(name), .ds = ds };
    ds->ino = 0;
    ds->off = 0;
    ds->free_off = -1;
    int r = dir_walk(dp, search_visit, &s);
    if (r < 0)
        return r;
    if (r == 0)
        return -ENOENT;
    if (!s5_ino_valid(&dp->i_fs->fs_sb, ds->ino)) {
        s5_corrupt(dp->i_fs, "directory %u: entry '%s' points to inode %u past the "
                   "inode list (%u inodes)", dp->i_number, name, ds->ino,
                   s5_ninodes(&dp->i_fs->fs_sb));
        ds->ino = 0;
        return -EUCLEAN;
    }
    return 0;
}

int s5_direnter(struct s5_inode *dp, const char *name, uint32_t ino,
                const struct s5_dirslot *ds)
{
    dnlc_remove(ITOV(dp), name);            /* a negative entry for the name goes first */
    struct s5_fs *fs = dp->i_fs;
    uint32_t off = ds->free_off >= 0 ? (uint32_t)ds->free_off : dp->i_size;
    bool grow = off >= dp->i_size;
    struct buf *bp;
    int err;
    if (grow && dp->i_size + S5_DIRENT_SIZE > S5_MAXDIRSIZE)
        return -ENOSPC;
    if (grow && s5_blkoff(off) == 0) {
        /* A new block: allocated and zeroed before it is used. */
        uint32_t bno;
        bool fresh;
        err = s5_bmap(dp, s5_lblkno(off), true, &bno, &fresh);
        if (err)
            return err;
        bp = s5_getblk(fs, bno);
        clrbuf(bp);
    } else {
        err = s5_dirblk(dp, off, &bp);
        if (err)
            return err;
    }
    struct s5_direct *de = entry_at(bp, off);
    de->d_ino = (uint16_t)ino;
    s5_setname(de->d_name, name, (uint32_t)strlen(name));
    err = s5_bwrite_meta(bp, s5_syncwrites());
    if (err)
        return err;
    if (grow)
        dp->i_size = off + S5_DIRENT_SIZE;
    s5_itimes(dp, S5_UPD | S5_CHG);
    return s5_iupdat(dp, s5_syncwrites());
}

int s5_dirrewrite(struct s5_inode *dp, uint32_t off, uint32_t ino)
{
    struct buf *bp;
    int err = s5_dirblk(dp, off, &bp);
    if (err)
        return err;
    entry_at(bp, off)->d_ino = (uint16_t)ino;
    err = s5_bwrite_meta(bp, s5_syncwrites());
    if (err)
        return err;
    s5_itimes(dp, S5_UPD | S5_CHG);
    return s5_iupdat(dp, s5_syncwrites());
}

/* A slot that is neither free nor "." nor "..". */
static int occupied_visit(const struct s5_direct *de, uint32_t off, void *arg)
{
    return de->d_ino != 0 && !s5_namematch(de->d_name, ".", 1) &&
           !s5_namematch(de->d_name, "..", 2);
}

int s5_dirempty(struct s5_inode *dp)
{
    int r = dir_walk(dp, occupied_visit, NULL);
    return r < 0 ? r : !r;
}

int s5_dirinit(struct s5_inode *ip, uint32_t parent)
{
    uint32_t bno;
    bool fresh;
    int err = s5_bmap(ip, 0, true, &bno, &fresh);
    if (err)
        return err;
    struct buf *bp = s5_getblk(ip->i_fs, bno);
    clrbuf(bp);
    struct s5_direct *de = (struct s5_direct *)bp->b_data;
    de[0].d_ino = (uint16_t)ip->i_number;
    s5_setname(de[0].d_name, ".", 1);
    de[1].d_ino = (uint16_t)parent;
    s5_setname(de[1].d_name, "..", 2);
    err = s5_bwrite_meta(bp, s5_syncwrites());
    if (err)
        return err;
    ip->i_size = 2 * S5_DIRENT_SIZE;
    s5_itimes(ip, S5_UPD | S5_CHG);
    return 0;
}
