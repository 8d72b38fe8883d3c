/*
 * read(2) and write(2) of regular files through segmap onto the page
 * cache, for file systems that supply the page operations (VOP_GETPAGE,
 * VOP_PUTPAGE, VOP_WRALLOC: struct vnodeops, kern/vfs/vnode.h): S5 and
 * UFS.  The VOP_READ and VOP_WRITE macros send a regular file of such a
 * file system here.
 *
 * Theory.  Each page-sized piece of a transfer maps a window onto the
 * file's page (segmap_getmap; a miss reads the page through VOP_GETPAGE
 * into the page cache), copies, and releases the window; a write marks
 * the page dirty and leaves it for write-back (pcache_flush: fsync, the
 * close of a file open for writing unless syncwrites=off, msync, unmap).  There is one copy of
 * each file page in memory, the page cache's, so read, write and every
 * shared mapping see each other's bytes at once, by construction: there
 * is nothing to overlay or patch.
 *
 * Reads take no lock of their own: the size is read for each piece (a
 * piece at or past the end ends the read), and a page that a truncation
 * removed meanwhile reads as the end of the file (-ENXIO from the window).
 * A read then tells the file system it touched the file
 * (VOP's vop_accessed), which sets the access time by Linux's relatime
 * rule (vn_atime_due, kern/vfs/vnode.h): only when the access time is not
 * after the last change or is a day old, so a file read over and over
 * takes its inode lock once a day, not once a read.
 *
 * Writes hold the file's fill lock throughout (kern/vm/pcache.c), which
 * orders them with fills, write-backs, truncations and each other.  For
 * each piece the window comes FIRST (SM_LOCKED, since this thread holds
 * the fill lock; SM_CREATE, since a page past the end is a zero page),
 * and only then does VOP_WRALLOC give the piece its blocks and move the
 * end of the file: so a block allocated now is never read into the page
 * from the disk (where it holds an old file's bytes); the page already
 * shows zeros there.  The bytes then go into the page, which is marked
 * dirty.  IO_SYNC (O_SYNC), and every write under syncwrites=data, writes
 * the pages back, then the inode and the delayed metadata (the file
 * system's fsync, once per call, not per piece) before returning.
 * (syncwrites=on, the default, keeps data delayed: written back so, a
 * test writing 3 MiB in 1000-byte pieces, t_segmap, took 20 s instead of
 * 3 under the emulator, so data joins only with the third value.)
 *
 * The buffers are kernel memory: system calls copy through a bounce
 * buffer (kern/proc/sys_fs.c), so no copy here can fault, and none under
 * the fill lock can take an address space's lock after it.
 *
 * A file system adopts this by filling in the three operations with its
 * block map (S5's are in kern/s5/s5_page.c, about 150 lines, UFS's in
 * kern/ufs/ufs_page.c, with fragments): getpage
 * reads the page's blocks or zeros holes, putpage writes them (allocating
 * a hole the page has data for), wralloc allocates and extends; and by
 * keeping its own read and write of regular files off the buffer cache
 * (the raw operations are then only the tests' view of the disk).
 */
#include <kern/vm/pcache.h>
#include <kern/vm/segmap.h>
#include <kern/vm/page.h>
#include <kern/vm/as.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/lock/sleep.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <kern/lib/options.h>
#include <kern/arch/cpu.h>
#include <kern/cluster/cluster.h>
#include <kern/cluster/cl_pcache.h>

static int size_of(struct vnode *vp, uint64_t *size)
{
    struct vattr va;
    int err = VOP_GETATTR(vp, &va, kcred);
    *size = err ? 0 : va.va_size;
    return err;
}

/* Move n bytes between a window and the transfer (a read: to the uio). */
static void copy_piece(char *win, size_t n, bool read, struct uio *uio)
{
    if (uio->uio_user) {
        if (read)
            copyout(win, uio->uio_base, n);
        else
            copyin(uio->uio_base, win, n);
    } else if (read) {
        memcpy(uio->uio_base, win, n);
    } else {
        memcpy(win, uio->uio_base, n);
    }
    uio->uio_base = (char *)uio->uio_base + n;
    uio->uio_resid -= n;
    uio->uio_offset += n;
}

/* One piece of a read, within one page and below the end; 1 at the end. */
static int read_piece(struct vnode *vp, struct uio *uio)
{
    uint64_t size;
    int err = size_of(vp, &size);
    if (err)
        return err;
    uint64_t off = uio->uio_offset;
    if (off >= size)
        return 1;
    size_t in = off & (PAGE_SIZE - 1);
    size_t n = MIN(uio->uio_resid, PAGE_SIZE - in);
    n = MIN((uint64_t)n, size - off);
    struct smap *sm;
    char *win;
    err = segmap_getmap(vp, off >> PAGE_SHIFT, &sm, &win);
    if (err == -ENXIO)
        return 1;               /* truncated meanwhile */
    if (err)
        return err;
    copy_piece(win + in, n, true, uio);
    segmap_release(sm, 0);
    return 0;
}

/* A read that finds no page to fill waits for the pageout daemons and
 * tries again, at most this many times in one call, as a fault does
 * (kern/vm/fault.c): file pages, mapped ones too, go back before the
 * read fails with ENOMEM.  It holds no lock of the page cache's meanwhile,
 * so the daemons can write back and unmap whatever they need. */
#define READ_NOMEM_TRIES 3

int pcache_rw_read(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    int err = 0, waits = 0;
    bool asked = uio->uio_resid > 0;
    while (uio->uio_resid > 0 && err == 0) {
        err = read_piece(vp, uio);
        if (err == -ENOMEM && waits++ < READ_NOMEM_TRIES && pcache_wait_for_memory())
            err = 0;
    }
    if (asked && vp->v_op->vop_accessed)
        vp->v_op->vop_accessed(vp);     /* as Linux's file_accessed, even at the end */
    return err < 0 ? err : 0;
}

/* One piece of a write (the fill lock held): how many bytes it wrote, or
 * a negative errno when none. */
static int64_t write_piece(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    uint64_t off = uio->uio_offset;
    size_t in = off & (PAGE_SIZE - 1);
    size_t n = MIN(uio->uio_resid, PAGE_SIZE - in);
    struct smap *sm;
    char *win;
    int err = segmap_getmapf(vp, off >> PAGE_SHIFT, SM_CREATE | SM_LOCKED, &sm, &win);
    if (err)
        return err;
    /* A synchronous write's inode goes out once, at its end (sync_end). */
    int64_t done = VOP_WRALLOC(vp, off, n, ioflag & ~IO_SYNC, cr);
    if (done > 0)
        copy_piece(win + in, (size_t)done, false, uio);
    segmap_release(sm, done > 0 ? SM_DIRTY : 0);
    return done;
}

/*
 * With vp's fill lock, before a piece: when this CPU's node is short of
 * memory, write this file's dirty pages back and free clean pages up to
 * twice the low-water mark, so a writer of a file larger than memory
 * keeps going.  (Other files' dirty pages are the pageout daemon's: their
 * fill locks cannot be taken here.)
 */
static void throttle(struct vnode *vp)
{
    int node = this_cpu()->node;
    if (!pcache_node_short(node))
        return;
    pcache_flush_locked(vp, 0, ~0UL);
    pcache_reclaim_for_fill(node);
}

/* With the fill lock, at the end of a synchronous write of n bytes at
 * start: its pages, then the inode and the file system's delayed blocks
 * (the file system's fsync), so the data and what finds it are on the
 * disk when write(2) returns. */
static int sync_end(struct vnode *vp, uint64_t start, size_t n, struct cred *cr)
{
    int err = pcache_flush_locked(vp, start >> PAGE_SHIFT, ((start + n - 1) >> PAGE_SHIFT) + 1);
    int e = VOP_FSYNC_RAW(vp, cr);
    return err ? err : e;
}

int pcache_rw_write(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    if (opts.syncwrites == SYNCWRITES_DATA)
        ioflag |= IO_SYNC;              /* syncwrites=data: every write as O_SYNC */
    struct rwlock *fl = pcache_fill_lock(vp);
    rw_enter(fl, RW_WRITER);
    if (ioflag & IO_APPEND) {
        uint64_t size;
        int err = size_of(vp, &size);
        if (err) {
            rw_exit(fl);
            return err;
        }
        uio->uio_offset = size;
    }
    uint64_t start = uio->uio_offset;
    size_t want = uio->uio_resid;
    int err = 0;
    while (uio->uio_resid > 0 && !err) {
        throttle(vp);
        int64_t done = write_piece(vp, uio, ioflag, cr);
        if (done < 0)
            err = (int)done;
    }
    size_t wrote = want - uio->uio_resid;
    if (wrote && (ioflag & IO_SYNC)) {
        int e = sync_end(vp, start, wrote, cr);
        err = err ? err : e;
    }
    rw_exit(fl);
    if (wrote && cluster_on())          /* other clusters' replicas of these pages */
        cl_pcache_invalidate(vp, start >> PAGE_SHIFT, (start + wrote - 1) / PAGE_SIZE + 1);
    /* A write cut short by a full disk or the size limit is a success;
     * the next one reports the error (as the file systems' own writes). */
    if (wrote && (err == -ENOSPC || err == -EFBIG))
        return 0;
    return err;
}
