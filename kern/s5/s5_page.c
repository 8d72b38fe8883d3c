/*
 * S5's page operations (VOP_GETPAGE, VOP_PUTPAGE, VOP_WRALLOC; the
 * interface is described with struct vnodeops in kern/vfs/vnode.h) and
 * the direct I/O of data blocks.
 *
 * A regular file's data lives in the page cache, never in the buffer
 * cache: read(2) and write(2) copy through segmap windows onto the cached
 * pages (kern/vm/pcache_rw.c), mappings map the same pages, and these
 * operations move a page to and from its blocks, found through s5_bmap,
 * with the block layer's synchronous I/O (blk_rw) straight into or out of
 * the page, the page's blocks that lie next to each other on the disk in
 * one transfer.  The buffer cache keeps the metadata only: the superblock,
 * inode blocks, directories, indirect blocks, the free-block chain.
 *
 * Two rules keep the two caches from overwriting each other's blocks:
 *
 *   - A block that becomes file data (s5_bmap filled a hole) may have
 *     been metadata before, and a delayed write of its old contents may
 *     still sit in the buffer cache: bforget drops that buffer before the
 *     page is ever written to the block.
 *   - A block freed from a file is reused only after the file's pages
 *     past the new end are gone: a truncation frees the blocks and drops
 *     the pages under the file's fill lock (kern/vm/pcache.c), and the
 *     write-backs take that lock too, so no write-back reaches a freed
 *     block.
 *
 * Bytes past the end of the file are zero on disk as in the page: the
 * last block is written with its tail zeroed, and a truncation zeroes the
 * tail of the new last block (s5_itrunc), so growing the file again shows
 * zeros whether the page is cached or read back.
 *
 * Locks: each operation holds the inode's ILOCK while it maps blocks
 * (s5_bmap's rule) and does its I/O; the caller holds the vnode lock and
 * the file's fill lock (the page cache's), which come before IRWLOCK and
 * ILOCK in the lock order (docs/architecture.md, row 1).
 */
#include <kern/s5/s5_inode.h>
#include <kern/vfs/buf.h>
#include <kern/vfs/vnode.h>
#include <drivers/block/bio.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/kprintf.h>

#define BLOCKS_PER_PAGE (PAGE_SIZE / S5_BSIZE)

/* n data blocks from bno, in one transfer. */
static int data_run_rw(struct s5_fs *fs, uint32_t bno, uint32_t n, void *buf, bool write)
{
    if (bno >= fs->fs_devblocks || n > fs->fs_devblocks - bno)
        return -EIO;
    uint32_t per = S5_BSIZE / fs->fs_dev->bsize;
    if (blk_rw(fs->fs_dev, (uint64_t)bno * per, per * n, buf, write)) {
        kprintf("s5: %s: cannot %s data blocks %u..%u\n", fs->fs_dev->name,
                write ? "write" : "read", bno, bno + n - 1);
        return -EIO;
    }
    return 0;
}

int s5_data_rw(struct s5_fs *fs, uint32_t bno, void *buf, bool write)
{
    return data_run_rw(fs, bno, 1, buf, write);
}

void s5_data_fresh(struct s5_fs *fs, uint32_t bno)
{
    bforget(fs->fs_dev, bno, S5_BSIZE);
}

/* ---- getpage ---- */

/* Read the page's blocks (bno[k] for its k-th, 0 for a hole or past the
 * end: zeros), consecutive blocks in one transfer. */
static int read_blocks(struct s5_fs *fs, char *page, const uint32_t *bno)
{
    int err = 0;
    for (unsigned k = 0; k < BLOCKS_PER_PAGE && !err; ) {
        unsigned run = 1;
        while (bno[k] && k + run < BLOCKS_PER_PAGE && bno[k + run] == bno[k] + run)
            run++;
        if (bno[k])
            err = data_run_rw(fs, bno[k], run, page + k * S5_BSIZE, false);
        else
            memset(page + k * S5_BSIZE, 0, S5_BSIZE);
        k += run;
    }
    return err;
}

int s5_getpage(struct vnode *vp, uint64_t idx, void *page, struct cred *cr)
{
    struct s5_inode *ip = VTOI(vp);
    uint64_t start = idx << PAGE_SHIFT;
    ILOCK(ip);
    uint64_t size = ip->i_size;
    int err = start >= size ? -ENXIO : 0;
    uint32_t bno[BLOCKS_PER_PAGE] = { 0 };
    for (unsigned k = 0; k < BLOCKS_PER_PAGE && !err; k++) {
        uint64_t off = start + (uint64_t)k * S5_BSIZE;
        if (off < size)
            err = s5_bmap(ip, s5_lblkno(off), false, &bno[k], NULL);
    }
    if (!err)
        err = read_blocks(ip->i_fs, page, bno);
    IUNLOCK(ip);
    if (!err && size < start + PAGE_SIZE)
        memset((char *)page + (size - start), 0, start + PAGE_SIZE - size);
    return err;
}

/* ---- putpage ---- */

static bool all_zero(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

/* The block for the n bytes at src (n <= S5_BSIZE, the block's part
 * below the end of the file) holding off, in *bnop: allocated if it is a
 * hole and the bytes are not all zero, else 0 (nothing to write). */
static int place_block(struct s5_inode *ip, uint64_t off, const char *src, size_t n,
                       uint32_t *bnop)
{
    struct s5_fs *fs = ip->i_fs;
    uint32_t bno;
    int err = s5_bmap(ip, s5_lblkno(off), false, &bno, NULL);
    if (err)
        return err;
    if (bno == 0 && !all_zero(src, n)) {
        bool fresh;
        err = s5_bmap(ip, s5_lblkno(off), true, &bno, &fresh);
        if (err)
            return err;
        if (fresh)
            s5_data_fresh(fs, bno);
    }
    *bnop = bno;                    /* 0: the hole still reads right */
    return 0;
}

/* Write the page's blocks (bno[k] for its k-th, 0 to skip; the last
 * holding only last bytes below the end), consecutive blocks in one
 * transfer, the last one's tail past the end as zeros. */
static int write_blocks(struct s5_fs *fs, const char *page, const uint32_t *bno, unsigned nb,
                        size_t last, char *tmp)
{
    int err = 0;
    unsigned full = last < S5_BSIZE ? nb - 1 : nb;
    for (unsigned k = 0; k < full && !err; ) {
        unsigned run = 1;
        while (bno[k] && k + run < full && bno[k + run] == bno[k] + run)
            run++;
        if (bno[k])
            err = data_run_rw(fs, bno[k], run, (void *)(page + k * S5_BSIZE), true);
        k += run;
    }
    if (!err && full < nb && bno[full]) {
        memcpy(tmp, page + full * S5_BSIZE, last);
        memset(tmp + last, 0, S5_BSIZE - last);
        err = s5_data_rw(fs, bno[full], tmp, true);
    }
    return err;
}

int s5_putpage(struct vnode *vp, uint64_t idx, const void *page, size_t len,
                      struct cred *cr)
{
    struct s5_inode *ip = VTOI(vp);
    if (ip->i_fs->fs_rdonly)
        return -EROFS;
    char *tmp = kmalloc(S5_BSIZE);
    if (!tmp)
        return -ENOMEM;
    uint64_t start = idx << PAGE_SHIFT;
    ILOCK(ip);
    uint64_t end = MIN(start + MIN(len, (size_t)PAGE_SIZE), (uint64_t)ip->i_size);
    uint32_t bno[BLOCKS_PER_PAGE];
    unsigned nb = 0;
    int err = 0;
    for (uint64_t off = start; off < end && !err; off += S5_BSIZE, nb++)
        err = place_block(ip, off, (const char *)page + (off - start),
                          MIN((uint64_t)S5_BSIZE, end - off), &bno[nb]);
    if (!err && nb)
        err = write_blocks(ip->i_fs, page, bno, nb, (size_t)(end - (start + (nb - 1) * S5_BSIZE)),
                           tmp);
    IUNLOCK(ip);
    kfree(tmp);
    return err;
}

/* ---- access time ---- */

static bool atime_due(const struct s5_inode *ip)
{
    return vn_atime_due(READ_ONCE(ip->i_atime), READ_ONCE(ip->i_mtime), READ_ONCE(ip->i_ctime),
                        s5_now());
}

/* Checked first without the lock, so most reads take no lock here; the
 * inode is written later (sync, its last release), as the old read's. */
void s5_accessed(struct vnode *vp)
{
    struct s5_inode *ip = VTOI(vp);
    if (ip->i_fs->fs_rdonly || !atime_due(ip))
        return;
    ILOCK(ip);
    if (atime_due(ip))
        s5_itimes(ip, S5_ACC);
    IUNLOCK(ip);
}

/* ---- wralloc ---- */

/* With ip ILOCKED: allocate the blocks of [off, off + len); how many
 * bytes from off got blocks, or the error of the first block. */
static int64_t alloc_range(struct s5_inode *ip, uint64_t off, size_t len)
{
    uint64_t pos = off, end = off + len;
    int err = 0;
    while (pos < end) {
        uint32_t bno;
        bool fresh;
        err = s5_bmap(ip, s5_lblkno(pos), true, &bno, &fresh);
        if (err)
            break;
        if (fresh)
            s5_data_fresh(ip->i_fs, bno);
        pos = MIN(end, (pos / S5_BSIZE + 1) * S5_BSIZE);
    }
    return pos > off ? (int64_t)(pos - off) : err;
}

int64_t s5_wralloc(struct vnode *vp, uint64_t off, size_t len, int ioflag,
                          struct cred *cr)
{
    struct s5_inode *ip = VTOI(vp);
    if (ip->i_fs->fs_rdonly)
        return -EROFS;
    if (off >= S5_MAXFILESIZE)
        return -EFBIG;
    len = MIN(len, (size_t)(S5_MAXFILESIZE - off));
    ILOCK(ip);
    int64_t done = alloc_range(ip, off, len);
    if (done > 0) {
        if (off + done > ip->i_size)
            ip->i_size = (uint32_t)(off + done);
        s5_itimes(ip, S5_UPD | S5_CHG);
        if (ioflag & IO_SYNC) {
            int e = s5_iupdat(ip, true);
            if (e)
                done = e;
        }
    }
    IUNLOCK(ip);
    return done;
}
