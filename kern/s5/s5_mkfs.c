/*
 * A small in-kernel mkfs for S5: enough to make an empty file system on a
 * RAM disk for the tests (the full tool, with -d and its checks, is the
 * host's tools/mkfs_s5.c).  The layout is the one mkfs.s5 makes: block 0
 * (a zero boot sector, then the superblock), an unused block 1, the inode
 * list (inode 1 the bad-block inode, inode 2 the
 * root directory), the root's block first in the data area, and every
 * other block on the free chain, freed from the highest down so that the
 * lowest is allocated first.  It writes the disk directly (blk_rw), after
 * dropping whatever the buffer cache holds for it, and refuses a disk that
 * someone has claimed (a mounted file system).
 */
#include <kern/s5/s5.h>
#include <kern/s5/s5_inode.h>
#include <kern/vfs/buf.h>
#include <drivers/block/bio.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>

/* Write S5 block bno of dev from buf. */
static int put_block(struct blkdev *dev, uint32_t bno, const void *buf)
{
    uint32_t per = S5_BSIZE / dev->bsize;
    return blk_rw(dev, (uint64_t)bno * per, per, (void *)buf, true);
}

/* Free block b into the in-memory superblock, as the kernel's bfree does;
 * a full cache is written into b, which becomes the next chain block. */
static int mkfs_free(struct blkdev *dev, struct s5_super *sb, uint32_t b, void *scratch)
{
    if (sb->s_nfree == S5_NICFREE) {
        memset(scratch, 0, S5_BSIZE);
        struct s5_fblk *fb = scratch;
        fb->df_nfree = sb->s_nfree;
        memcpy(fb->df_free, sb->s_free, sizeof fb->df_free);
        int err = put_block(dev, b, scratch);
        if (err)
            return err;
        sb->s_nfree = 0;
    } else if (sb->s_nfree == 0) {
        sb->s_free[0] = 0;
        sb->s_nfree = 1;
    }
    sb->s_free[sb->s_nfree++] = b;
    sb->s_tfree++;
    return 0;
}

static void mkfs_inodes(struct s5_dinode *di, uint32_t root_block, uint32_t now)
{
    /* Inode 1: the bad-block inode, an empty regular file with no links. */
    di[0].di_mode = S5_IFREG;
    di[0].di_atime = di[0].di_mtime = di[0].di_ctime = now;
    /* Inode 2: the root directory, "." and ".." both itself. */
    di[1].di_mode = S5_IFDIR | 0755;
    di[1].di_nlink = 2;
    di[1].di_size = 2 * S5_DIRENT_SIZE;
    s5_setaddr(&di[1], 0, root_block);
    di[1].di_atime = di[1].di_mtime = di[1].di_ctime = now;
}

int s5_mkfs(struct blkdev *dev, uint32_t fsize, uint32_t ninodes)
{
    if (dev->bsize == 0 || S5_BSIZE % dev->bsize != 0)
        return -EINVAL;
    ninodes = ALIGN_UP(MAX(ninodes, (uint32_t)S5_INOPB), (uint32_t)S5_INOPB);
    uint32_t isize = S5_ILISTBLOCK + ninodes / S5_INOPB;
    uint64_t devblocks = dev->nblocks * dev->bsize / S5_BSIZE;
    if (ninodes > S5_MAXINODES || fsize > devblocks || fsize > S5_MAXBLOCKS || fsize < isize + 2)
        return -EINVAL;
    if (blk_claimed(dev))
        return -EBUSY;                      /* mounted, or another writer's */
    int err = binval(dev);
    if (err)
        return err;
    char *buf = kzalloc(2 * S5_BSIZE);
    struct s5_super *sb = kzalloc(sizeof *sb);
    if (!buf || !sb) {
        kfree(buf);
        kfree(sb);
        return -ENOMEM;
    }
    char *scratch = buf + S5_BSIZE;
    uint32_t now = s5_now(), root_block = isize;
    sb->s_isize = (uint16_t)isize;
    sb->s_fsize = fsize;
    sb->s_magic = S5_MAGIC;
    sb->s_type = S5_TYPE_1K;
    /* Blocks 1 .. isize-1 (block 1 and the inode list): zeros, then
     * inodes 1 and 2; block 0 is written last, with the superblock. */
    for (uint32_t b = 1; b < isize && !err; b++)
        err = put_block(dev, b, buf);
    mkfs_inodes((struct s5_dinode *)buf, root_block, now);
    if (!err)
        err = put_block(dev, S5_ILISTBLOCK, buf);
    /* The root directory's block. */
    memset(buf, 0, S5_BSIZE);
    struct s5_direct *de = (struct s5_direct *)buf;
    de[0].d_ino = de[1].d_ino = S5_ROOTINO;
    s5_setname(de[0].d_name, ".", 1);
    s5_setname(de[1].d_name, "..", 2);
    if (!err)
        err = put_block(dev, root_block, buf);
    for (uint32_t b = fsize - 1; b > root_block && !err; b--)
        err = mkfs_free(dev, sb, b, scratch);
    /* Free inodes 3..ninodes; the cache holds the lowest, lowest on top. */
    sb->s_tinode = (uint16_t)(ninodes - 2);
    uint32_t ncache = MIN(ninodes - 2, (uint32_t)S5_NICINOD);
    for (uint32_t i = 0; i < ncache; i++)
        sb->s_inode[i] = (uint16_t)(3 + ncache - 1 - i);
    sb->s_ninode = (uint16_t)ncache;
    s5_sb_set_clean(sb, now);
    memset(buf, 0, S5_BSIZE);
    memcpy(buf + S5_SBOFF, sb, sizeof *sb);
    if (!err)
        err = put_block(dev, S5_SUPERBLOCK, buf);
    kfree(buf);
    kfree(sb);
    return err;
}
