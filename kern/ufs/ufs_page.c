/*
 * UFS's page operations (VOP_GETPAGE, VOP_PUTPAGE, VOP_WRALLOC; the
 * interface is described with struct vnodeops in kern/vfs/vnode.h) and
 * the direct I/O of a regular file's data.
 *
 * A regular file's data lives in the page cache, never in the buffer
 * cache, as S5's does (kern/s5/s5_page.c): read(2) and write(2) copy
 * through segmap windows onto the cached pages (kern/vm/pcache_rw.c),
 * mappings map the same pages, and these operations move a page to and
 * from its fragments, found through ufs_bmap, with the block layer's
 * synchronous I/O (blk_rw) straight into or out of the page.  The buffer
 * cache keeps the metadata only: the superblock, the summary area, group
 * blocks, inode blocks, directories, indirect blocks and long symbolic
 * links.  A block is at least UFS_MINBSIZE (4 KiB) and a multiple of the
 * page size, so a page lies inside one block: one bmap per page.
 *
 * Fragments.  A file's last block, while it is a direct block, holds only
 * the fragments its size needs.  wralloc grows it as ufs_writei always
 * has (kern/ufs/ufs_write.c: extended in place, moved to a bigger run, or
 * made a whole block when the file grows past it), and the new fragments
 * are zeroed on the disk as they are taken, so a part of a block that no
 * page ever wrote reads as zeros.  A move copies the run's old bytes from
 * the disk; a cached page of the block may be newer (dirty) and is written
 * to the new place at its write-back, since putpage maps the block again.
 *
 * Two rules keep the two caches from overwriting each other's blocks:
 *
 *   - Fragments that become file data may have been metadata before, and
 *     a delayed write of their old contents may still sit in the buffer
 *     cache: ufs_data_fresh drops those buffers (bforget) as the
 *     fragments are taken, before anything is written to them.
 *   - Every write of a regular file's data (the zeroing of new fragments,
 *     a moved run, the zeroed tail at a truncation, the pages) goes
 *     straight to the disk, so no buffer of file data ever exists to be
 *     written late over a page's write-back.
 *
 * Bytes past the end of the file are zero on disk as in the page: putpage
 * writes the last sector with its tail zeroed, and a truncation zeroes
 * the tail of the new last block.
 *
 * Locks: each operation holds the inode's ILOCK while it maps and
 * allocates blocks and does its I/O; the caller holds the vnode lock and
 * the file's fill lock (the page cache's), which come before IRWLOCK and
 * ILOCK in the lock order (docs/architecture.md, row 1).
 */
#include <kern/ufs/ufs_inode.h>
#include <kern/vfs/buf.h>
#include <kern/vfs/cred.h>
#include <drivers/block/bio.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/kprintf.h>

/* ---- direct I/O of file data ---- */

static int sectors_rw(struct ufs_fs *fs, uint64_t off, void *buf, size_t len, bool write)
{
    struct blkdev *dev = fs->fs_dev;
    uint64_t devbytes = (uint64_t)fs->fs_sb.fs_size * (uint32_t)fs->fs_sb.fs_fsize;
    int err = off + len > devbytes ? -EIO :
              blk_rw(dev, off / dev->bsize, (uint32_t)(len / dev->bsize), buf, write);
    if (err) {
        kprintf("ufs: %s: cannot %s data at byte %lu: error %d\n", dev->name,
                write ? "write" : "read", (unsigned long)off, err);
        return err < 0 ? err : -EIO;
    }
    return 0;
}

int ufs_data_io(struct ufs_fs *fs, uint64_t off, void *buf, size_t len, bool write)
{
    uint32_t sec = fs->fs_dev->bsize;
    if (len == 0)
        return 0;
    if (off % sec == 0 && len % sec == 0)
        return sectors_rw(fs, off, buf, len, write);
    /* Unaligned: through a bounce buffer of whole sectors (a write reads
     * them first, so the bytes around the range stay). */
    uint64_t a = ALIGN_DOWN(off, (uint64_t)sec), b = ALIGN_UP(off + len, (uint64_t)sec);
    char *tmp = kmalloc(b - a);
    if (!tmp)
        return -ENOMEM;
    int err = sectors_rw(fs, a, tmp, b - a, false);
    if (!err && write) {
        memcpy(tmp + (off - a), buf, len);
        err = sectors_rw(fs, a, tmp, b - a, true);
    } else if (!err) {
        memcpy(buf, tmp + (off - a), len);
    }
    kfree(tmp);
    return err;
}

int ufs_data_zero(struct ufs_fs *fs, uint64_t off, size_t len)
{
    void *zeros = kzalloc(len ? len : 1);
    if (!zeros)
        return -ENOMEM;
    int err = ufs_data_io(fs, off, zeros, len, true);
    kfree(zeros);
    return err;
}

void ufs_data_fresh(struct ufs_fs *fs, int64_t f, int n)
{
    uint64_t first = (uint64_t)f * (uint32_t)fs->fs_sb.fs_fsize / fs->fs_unit;
    uint64_t units = (uint64_t)n * (uint32_t)fs->fs_sb.fs_fsize / fs->fs_unit;
    for (uint64_t u = 0; u < units; u++)
        bforget(fs->fs_dev, first + u, fs->fs_unit);
}

/* ---- getpage ---- */

/* Where page idx starts in its block: the block's fragment address (0
 * for a hole) in *fp, and the byte offset in the block in *inp. */
static int page_place(struct ufs_inode *ip, uint64_t idx, int64_t *fp, uint64_t *inp)
{
    const struct ufs_super *sb = &ip->i_fs->fs_sb;
    uint64_t start = idx << PAGE_SHIFT;
    *inp = start & (uint64_t)(sb->fs_bsize - 1);
    return ufs_bmap(ip, start >> sb->fs_bshift, fp);
}

static uint64_t frag_byte(const struct ufs_fs *fs, int64_t f)
{
    return (uint64_t)f * (uint32_t)fs->fs_sb.fs_fsize;
}

/* Do n bytes at byte in of the block at fragment f stay inside the block
 * f starts in?  A damaged pointer to a fragment in mid-block would read
 * (or write) the next block, another file's. */
static bool in_block(const struct ufs_super *sb, int64_t f, uint64_t in, size_t n)
{
    return (uint64_t)(f % sb->fs_frag) * (uint32_t)sb->fs_fsize + in + n <= (uint64_t)sb->fs_bsize;
}

int ufs_getpage(struct vnode *vp, uint64_t idx, void *page, struct cred *cr)
{
    struct ufs_inode *ip = UFS_VTOI(vp);
    struct ufs_fs *fs = ip->i_fs;
    uint64_t start = idx << PAGE_SHIFT;
    ILOCK(ip);
    uint64_t size = ip->i_size;
    int64_t f = 0;
    uint64_t in = 0;
    int err = start >= size ? -ENXIO : page_place(ip, idx, &f, &in);
    /* Only the sectors below the end are read: the last block holds just
     * the fragments the size needs. */
    size_t n = err ? 0 : (size_t)MIN((uint64_t)PAGE_SIZE, size - start);
    size_t nread = MIN(ALIGN_UP(n, (size_t)fs->fs_dev->bsize), (size_t)PAGE_SIZE);
    if (!err && f && !in_block(&fs->fs_sb, f, in, nread)) {
        ufs_corrupt(fs, "inode %u: the block at fragment %ld runs over a block's end",
                    ip->i_number, (long)f);
        err = -EUCLEAN;
    }
    if (!err && f)
        err = ufs_data_io(fs, frag_byte(fs, f) + in, page, nread, false);
    IUNLOCK(ip);
    if (err)
        return err;
    if (!f)
        memset(page, 0, PAGE_SIZE);         /* a hole reads as zeros */
    else
        memset((char *)page + n, 0, PAGE_SIZE - n);
    return 0;
}

/* ---- putpage ---- */

static bool all_zero(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

/* Write the n bytes at src (the page's part below the end) at byte off of
 * the disk, the rest of the last sector as zeros. */
static int put_bytes(struct ufs_fs *fs, uint64_t off, const char *src, size_t n)
{
    size_t whole = ALIGN_UP(n, (size_t)fs->fs_dev->bsize);
    if (whole == n)
        return ufs_data_io(fs, off, (void *)src, n, true);
    char *tmp = kmalloc(whole);
    if (!tmp)
        return -ENOMEM;
    memcpy(tmp, src, n);
    memset(tmp + n, 0, whole - n);
    int err = ufs_data_io(fs, off, tmp, whole, true);
    kfree(tmp);
    return err;
}

int ufs_putpage(struct vnode *vp, uint64_t idx, const void *page, size_t len, struct cred *cr)
{
    struct ufs_inode *ip = UFS_VTOI(vp);
    struct ufs_fs *fs = ip->i_fs;
    if (fs->fs_rdonly)
        return -EROFS;
    uint64_t start = idx << PAGE_SHIFT;
    ILOCK(ip);
    int err = 0;
    if (start < ip->i_size) {
        size_t n = (size_t)MIN((uint64_t)MIN(len, (size_t)PAGE_SIZE), ip->i_size - start);
        int64_t f;
        uint64_t in;
        err = page_place(ip, idx, &f, &in);
        if (!err && !f && !all_zero(page, n)) {
            /* A hole the page has data for (a store through a mapping). */
            err = ufs_balloc(ip, start >> fs->fs_sb.fs_bshift, ip->i_size, &f);
            if (!err)
                ufs_itimes(ip, UFS_UPD | UFS_CHG);
        }
        if (!err && f && !in_block(&fs->fs_sb, f, in, ALIGN_UP(n, (size_t)fs->fs_dev->bsize))) {
            ufs_corrupt(fs, "inode %u: the block at fragment %ld runs over a block's end",
                        ip->i_number, (long)f);
            err = -EUCLEAN;
        }
        if (!err && f)
            err = put_bytes(fs, frag_byte(fs, f) + in, page, n);
    }
    IUNLOCK(ip);
    return err;
}

/* ---- access time ---- */

static bool atime_due(const struct ufs_inode *ip)
{
    return vn_atime_due(READ_ONCE(ip->i_atime), READ_ONCE(ip->i_mtime), READ_ONCE(ip->i_ctime),
                        (int64_t)ufs_now());
}

/* Checked first without the lock, so most reads take no lock here; the
 * inode is written later (sync, its last release), as the old read's. */
void ufs_accessed(struct vnode *vp)
{
    struct ufs_inode *ip = UFS_VTOI(vp);
    if (ip->i_fs->fs_rdonly || !atime_due(ip))
        return;
    ILOCK(ip);
    if (atime_due(ip))
        ufs_itimes(ip, UFS_ACC);
    IUNLOCK(ip);
}

/* ---- wralloc ---- */

int64_t ufs_wralloc(struct vnode *vp, uint64_t off, size_t len, int ioflag, struct cred *cr)
{
    struct ufs_inode *ip = UFS_VTOI(vp);
    struct ufs_fs *fs = ip->i_fs;
    if (fs->fs_rdonly)
        return -EROFS;
    uint64_t limit = ufs_max_file_size(fs), bsize = (uint64_t)fs->fs_sb.fs_bsize;
    if (off >= limit)
        return -EFBIG;
    len = (size_t)MIN((uint64_t)len, limit - off);
    len = (size_t)MIN((uint64_t)len, bsize - (off & (bsize - 1)));   /* one block */
    ILOCK(ip);
    int64_t f;
    int err = ufs_balloc(ip, off >> fs->fs_sb.fs_bshift, MAX(ip->i_size, off + len), &f);
    if (!err) {
        if (off + len > ip->i_size)
            ip->i_size = off + len;
        ip->i_mode &= (uint16_t)(cr->cr_uid ? ~(S_ISUID | S_ISGID) : ~0);
        ufs_itimes(ip, UFS_UPD | UFS_CHG);
        if (ioflag & IO_SYNC)
            err = ufs_iupdat(ip, true);
    }
    IUNLOCK(ip);
    return err ? err : (int64_t)len;
}
