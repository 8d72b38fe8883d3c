/*
 * Vnodes and the vnode operations (SunOS/SVR4 VFS, with the SVR4 MP
 * locking of seed 001).  Theory in kern/vfs/vnode.c.
 *
 * Lock key for struct vnode:
 *   [c]  constant while the vnode has a reference (set by the file system
 *        when it makes the vnode)
 *   [a]  atomic operations only
 *   [v]  v_lock, the vnode lock: an SVR4 sleep mutex (recursive, released
 *        across context switches), taken around each VOP_* call
 *   [m]  the mount-list lock (vfs_list_lock in kern/vfs/vfs.c)
 *   [fs] the owning file system's own locks (documented there)
 *
 * Reference counts (seed 001, "VN_HOLD/VN_RELE Locking").  v_count is
 * changed only with atomic operations.  VN_RELE that takes it to 0 calls
 * VOP_INACTIVE.  A file system that keeps inactive vnodes cached (S5) does
 * NOT treat 0 as "inactive": under its inode-cache lock its inactive
 * routine decrements the count again, to -1, and only then is the vnode
 * truly inactive (free for reuse).  A cache lookup, under the same lock,
 * that finds -1 sets the count back to 0 and then does VN_HOLD.  A lookup
 * that finds 0 (inactivation pending) just does VN_HOLD, and the pending
 * inactive routine, seeing a count other than 0 under the lock, leaves the
 * vnode active.  So two inactivations of one vnode cannot happen.
 */
#ifndef KERN_VFS_VNODE_H
#define KERN_VFS_VNODE_H

#include <kern/lib/types.h>
#include <kern/lock/mutex.h>
#include <kern/lib/errno.h>

struct vfs;
struct cred;
struct page;
struct epitem;
struct inwatch;

/* VSOCK: a socket, or a file system's node naming one (bind of AF_UNIX). */
enum vtype { VNON, VREG, VDIR, VCHR, VBLK, VLNK, VFIFO, VSOCK };

/* v_flag bits */
#define VROOT   0x1     /* the root of its file system */
#define VNOSEEK 0x2     /* [c] no offset (eventfd, epoll ...): see vn_is_stream */
#define VPOLLNOTIFY 0x4 /* [c] announces every readiness change (vn_poll_notify) */
#define VDEVICE 0x8     /* [c] a device's own vnode (a pty end): opened as it is, not
                           through the devfs node of its number */
#define VMEMONLY 0x10   /* [c] the page cache holds the file's only copy (tmpfs): its
                           dirty pages are never written back, so they stay dirty and
                           the reclaim leaves them (kern/vm/pcache.c, "Dirty pages") */
#define VKEEPPAGES 0x20 /* [c] an inode cache's vnode (kern/vfs/icache.c): its clean
                           pages outlive its last release and go when the in-core
                           inode is reused for another file, as SVR4's */

struct vnode {
    struct mutex v_lock;            /* the vnode lock; class "vnode" */
    int32_t v_count;                /* [a] references; -1 = inactive (see above) */
    uint32_t v_flag;                /* [v] VROOT ... ([c] for VROOT) */
    enum vtype v_type;              /* [c] */
    struct vfs *v_vfsp;             /* [c] the file system it belongs to */
    struct vfs *v_vfsmountedhere;   /* [m] a file system mounted on this directory */
    const struct vnodeops *v_op;    /* [c] */
    void *v_data;                   /* [c] the file system's object (inode) */
    uint32_t v_rdev;                /* [c] device number (VCHR, VBLK) */
    /* The page cache (kern/vm/pcache.c): pages of this file it holds,
     * plus fills under way; the cache holds no reference, and the last
     * VN_RELE drops the pages before VOP_INACTIVE. */
    uint32_t v_npages;              /* [a] */
    struct page *v_pagelist;        /* [pcache vnode list lock] linked by p_vnext */
    /* ETXTBSY, as Linux's i_writecount: above 0, the opens for writing;
     * below 0, minus the address spaces running the file as their program
     * (vn_get_write and vn_deny_write in kern/vfs/vnops.c). */
    int32_t v_writecount;           /* [a] */
    /* 1 while the page cache holds a reference for the file's dirty
     * pages, so the file stays active (its pages kept) until they are
     * written back: by a flush (close, fsync), or the file system's sync
     * and unmount (kern/vm/pcache.c, "Dirty pages"). */
    uint32_t v_dirtyhold;           /* [a] */
    /* Readiness events (kern/proc/sys_poll.c): bumped at every change a
     * poller may want (vn_poll_notify), [0] on the reading side (data,
     * end of file, hang-up) and [1] on the writing side (room), so
     * edge-triggered epoll reports each new event of the kind it watches
     * once; v_pollclaim is the last reading-side event an EPOLLEXCLUSIVE
     * watcher took, so one waiter reports it. */
    uint32_t v_pollgen[2];          /* [a] */
    uint32_t v_pollclaim;           /* [a] */
    struct epitem *v_epwatch;       /* [epoll watcher lock] the epoll items watching it
                                     * (kern/event/epoll.c); read [a] */
    struct inwatch *v_inwatch;      /* [inotify_lock] the inotify watches on it
                                     * (kern/event/inotify.c); read [a] */
};

/* Attributes (getattr fills all of them; setattr uses those in va_mask). */
#define AT_MODE     0x01
#define AT_UID      0x02
#define AT_GID      0x04
#define AT_SIZE     0x08
#define AT_ATIME    0x10
#define AT_MTIME    0x20
#define AT_CTIME    0x40
#define AT_ALL      (AT_MODE | AT_UID | AT_GID | AT_SIZE | AT_ATIME | AT_MTIME | AT_CTIME)

struct vattr {
    uint32_t va_mask;       /* AT_* (setattr only) */
    enum vtype va_type;
    uint32_t va_mode;       /* permission bits and S_IS* type bits (Linux values) */
    uint32_t va_uid, va_gid;
    uint32_t va_nlink;
    uint64_t va_ino;
    uint64_t va_size;
    uint64_t va_blocks;     /* 512-byte units */
    uint32_t va_blksize;
    uint32_t va_fsid;
    uint32_t va_rdev;
    int64_t va_atime, va_mtime, va_ctime;   /* seconds */
};

/* File type bits of va_mode (Linux/SVR4 values) */
#define S_IFMT   0170000
#define S_IFSOCK 0140000
#define S_IFLNK  0120000
#define S_IFREG  0100000
#define S_IFBLK  0060000
#define S_IFDIR  0040000
#define S_IFCHR  0020000
#define S_IFIFO  0010000
#define S_ISUID  04000
#define S_ISGID  02000
#define S_ISVTX  01000

/* Access modes for VOP_ACCESS (the "other" permission bits) */
#define VREAD   04
#define VWRITE  02
#define VEXEC   01

/*
 * A transfer for VOP_READ, VOP_WRITE, VOP_READDIR and VOP_READLINK: one
 * contiguous buffer.  uio_user marks a user-space buffer (a later issue
 * copies those through copyin/copyout; today every buffer is kernel).
 * The operation advances uio_offset and uio_base and lowers uio_resid.
 */
struct uio {
    void *uio_base;
    size_t uio_resid;
    uint64_t uio_offset;
    bool uio_user;
};

/* ioflag bits for VOP_READ / VOP_WRITE */
#define IO_APPEND   0x1     /* write at end of file */
#define IO_SYNC     0x2     /* write through to disk before returning */

/*
 * VOP_READDIR fills the buffer with records in the Linux dirent64 layout
 * (so getdents64 can pass them straight out): d_off is the cookie to resume
 * from (for S5 the byte offset of the next directory slot).
 */
struct dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    uint16_t d_reclen;      /* 8-byte aligned */
    uint8_t d_type;         /* DT_* */
    char d_name[];          /* NUL-terminated */
};
/* Append one record to a readdir transfer: inode ino, resume cookie next,
 * type (DT_*) and the name's first namelen bytes (at most 255; the NUL is
 * added).  False, with nothing written, when it does not fit in what is
 * left: the caller stops there and the next readdir resumes at it.  Every
 * file system's VOP_READDIR uses it (kern/vfs/vnode.c). */
bool vfs_put_dirent(struct uio *uio, uint64_t ino, int64_t next, uint8_t type,
                    const char *name, size_t namelen);

#define DT_UNKNOWN 0
#define DT_FIFO    1
#define DT_CHR     2
#define DT_DIR     4
#define DT_BLK     6
#define DT_REG     8
#define DT_LNK     10
#define DT_SOCK    12

/* Device numbers in v_rdev and va_rdev: Linux's encoding (glibc
 * makedev for 12-bit majors and 20-bit minors), so stat can pass them out. */
static inline uint32_t vn_makedev(uint32_t major, uint32_t minor)
{
    return ((major & 0xfff) << 8) | (minor & 0xff) | ((minor & 0xfff00) << 12);
}
static inline uint32_t vn_major(uint32_t dev) { return (dev >> 8) & 0xfff; }
static inline uint32_t vn_minor(uint32_t dev) { return (dev & 0xff) | ((dev >> 12) & 0xfff00); }

/* Longest name component any file system here accepts (S5 takes 14). */
#define NAME_MAX 255
#define PATH_MAX 1024

/*
 * The vnode operations.  All return 0 or a negative errno.  A vnode
 * returned through a struct vnode ** carries a new reference (VN_RELE it).
 * Names are single components (no '/'); the VFS has checked that "." and
 * ".." are not passed to create/remove/link/rename/mkdir/rmdir.
 */
struct vnodeops {
    int (*vop_open)(struct vnode **vpp, int flags, struct cred *cr);
    int (*vop_close)(struct vnode *vp, int flags, struct cred *cr);
    int (*vop_read)(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr);
    int (*vop_write)(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr);
    int (*vop_ioctl)(struct vnode *vp, unsigned long cmd, void *arg, struct cred *cr);
    int (*vop_getattr)(struct vnode *vp, struct vattr *va, struct cred *cr);
    /* Changes the attributes in va->va_mask; AT_SIZE truncates or extends. */
    int (*vop_setattr)(struct vnode *vp, const struct vattr *va, struct cred *cr);
    /* mode: VREAD|VWRITE|VEXEC; -EACCES when denied. */
    int (*vop_access)(struct vnode *vp, int mode, struct cred *cr);
    int (*vop_lookup)(struct vnode *dvp, const char *name, struct vnode **vpp, struct cred *cr);
    /* Create name in dvp, or open it if it exists and !excl (-EEXIST if excl).
     * va gives va_type (VREG, VCHR...) and va_mode. */
    int (*vop_create)(struct vnode *dvp, const char *name, const struct vattr *va, bool excl,
                      struct vnode **vpp, struct cred *cr);
    int (*vop_remove)(struct vnode *dvp, const char *name, struct cred *cr);
    /* Make tname in tdvp another name for svp. */
    int (*vop_link)(struct vnode *tdvp, struct vnode *svp, const char *tname, struct cred *cr);
    int (*vop_rename)(struct vnode *sdvp, const char *sname, struct vnode *tdvp, const char *tname,
                      struct cred *cr);
    int (*vop_mkdir)(struct vnode *dvp, const char *name, const struct vattr *va,
                     struct vnode **vpp, struct cred *cr);
    int (*vop_rmdir)(struct vnode *dvp, const char *name, struct cred *cr);
    /* *eofp set true when the directory has no more entries. */
    int (*vop_readdir)(struct vnode *vp, struct uio *uio, struct cred *cr, bool *eofp);
    int (*vop_symlink)(struct vnode *dvp, const char *name, const struct vattr *va,
                       const char *target, struct cred *cr);
    int (*vop_readlink)(struct vnode *vp, struct uio *uio, struct cred *cr);
    int (*vop_fsync)(struct vnode *vp, struct cred *cr);
    /* Sets the size (frees blocks past it, or extends with a hole). */
    int (*vop_truncate)(struct vnode *vp, uint64_t size, struct cred *cr);
    /* Called by VN_RELE when the count reaches 0; see the theory above.
     * Called WITHOUT the vnode lock: the file system takes what it needs
     * (ILOCK takes the vnode lock), and may put the vnode up for reuse,
     * after which VN_RELE must not touch it. */
    void (*vop_inactive)(struct vnode *vp, struct cred *cr);
    /* Optional (NULL for ordinary links): a symbolic link that names its
     * target itself, as /proc's fd/N, cwd and exe do (Linux's "magic"
     * links: a pipe or a file whose name is gone opens all the same).
     * The target, held, in *vpp; -ENOSYS to follow the text instead.
     * Called under the link's vnode lock. */
    int (*vop_follow)(struct vnode *vp, struct vnode **vpp, struct cred *cr);
    /* Optional: the attributes without the vnode lock (fstat's and
     * stat's short path, issue 18), each field read once as Linux's
     * generic_fillattr reads its inode: a change racing it may show some
     * fields new and some old.  Returns 1 when it cannot answer so (S5:
     * the block count is not known yet), and vop_getattr runs locked. */
    int (*vop_getattr_nolock)(struct vnode *vp, struct vattr *va, struct cred *cr);
    /* Optional: the permission check without the vnode lock or the
     * inode's, the mode and owner each read once (a chmod racing it is
     * seen before or after, as Linux's lookup without locks sees it).
     * Lookup's DNLC path asks it (kern/vfs/lookup.c). */
    int (*vop_access_nolock)(struct vnode *vp, int mode, struct cred *cr);
    /*
     * Optional: the page I/O of regular files (SVR4's VOP_GETPAGE and
     * VOP_PUTPAGE).  A file system that supplies all three keeps no copy
     * of a regular file's data in the buffer cache: read(2), write(2) and
     * mappings all go through the one page of the page cache
     * (kern/vm/pcache_rw.c, through segmap windows), and these move it
     * to and from the disk through the file system's block map.  Each is
     * called with the vnode lock and with the file's fill lock held
     * (kern/vm/pcache.c), so no two run at once on one file.
     *
     *   getpage   read page idx into page (PAGE_SIZE bytes): holes and
     *             bytes past the end of the file read as zeros; -ENXIO
     *             when the page starts at or past the end.
     *   putpage   write the first len bytes of page idx (never past the
     *             end of the file) to its blocks, allocating a hole that
     *             the page has non-zero bytes for.
     *   wralloc   before a write of len bytes at off: allocate the blocks
     *             it covers, move the end of the file past it, set the
     *             modification times (and with IO_SYNC write the inode).
     *             Returns how many bytes from off it made room for (less
     *             than len when the disk filled or the size limit is
     *             reached), or a negative errno when none.
     */
    int (*vop_getpage)(struct vnode *vp, uint64_t idx, void *page, struct cred *cr);
    int (*vop_putpage)(struct vnode *vp, uint64_t idx, const void *page, size_t len,
                       struct cred *cr);
    int64_t (*vop_wralloc)(struct vnode *vp, uint64_t off, size_t len, int ioflag,
                           struct cred *cr);
    /* Optional, with the page operations: a read through the page cache
     * (kern/vm/pcache_rw.c) touched the file's data; mark its access
     * time by the relatime rule (vn_atime_due).  Called with no lock. */
    void (*vop_accessed)(struct vnode *vp);
    /* Optional, with the page operations: a shared mapping is about to
     * map page idx of the file.  Give the page the backing a store into it
     * will need (tmpfs: a page of the mount's size=, since nothing writes
     * a tmpfs page back), or -ENOSPC when there is none: the fault then
     * gives the process SIGBUS, as Linux's tmpfs does.  Called with the
     * address space's lock held, before the page cache is asked. */
    int (*vop_backpage)(struct vnode *vp, uint64_t idx);
    /* Optional: what an open file of this vnode is ready for (poll,
     * select, epoll): of the POLL* bits below, those of events that hold
     * now, with POLLERR and POLLHUP whether asked or not.  fflags is the
     * open file's f_flags (a pipe's end reads or writes by its access
     * mode).  Called with no lock held; the object takes its own.  NULL
     * means ready for whatever was asked (regular files, disks). */
    short (*vop_poll)(struct vnode *vp, short events, int fflags);
    /* Optional: the name /proc/PID/fd/N shows for an object with no
     * path, such as "anon_inode:[eventfd]" (at most len bytes with the
     * NUL). */
    void (*vop_fdname)(struct vnode *vp, char *buf, size_t len);
};

/* chmod and chown on an object that keeps its mode and owner in memory
 * (devfs, a pty's slave, a memfd): the owner or root may change the
 * mode, root alone the owner; va's AT_MODE, AT_UID and AT_GID applied to
 * *mode, *uid, *gid.  0 or -EPERM (kern/vfs/vnode.c). */
int vn_set_owner_mode(const struct vattr *va, const struct cred *cr, uint32_t *mode,
                      uint32_t *uid, uint32_t *gid);

/* The directory operations of a vnode that is no directory (an event
 * object, a terminal's end, a memfd): ENOTDIR (kern/vfs/vnode.c). */
int vn_op_notdir(void);
#define VNODEOPS_NOT_A_DIRECTORY \
    .vop_lookup = (void *)vn_op_notdir, .vop_create = (void *)vn_op_notdir, \
    .vop_remove = (void *)vn_op_notdir, .vop_link = (void *)vn_op_notdir, \
    .vop_rename = (void *)vn_op_notdir, .vop_mkdir = (void *)vn_op_notdir, \
    .vop_rmdir = (void *)vn_op_notdir, .vop_readdir = (void *)vn_op_notdir, \
    .vop_symlink = (void *)vn_op_notdir

/* A pipe, a socket or an event object: no offset (lseek and pread are ESPIPE), and
 * O_NONBLOCK passed to VOP_READ and VOP_WRITE in ioflag. */
static inline bool vn_is_stream(const struct vnode *vp)
{
    return vp->v_type == VFIFO || vp->v_type == VSOCK || (vp->v_flag & VNOSEEK);
}

/* poll's event bits (Linux's values, which every readiness interface
 * here passes through unchanged). */
#define POLLIN      0x001
#define POLLPRI     0x002
#define POLLOUT     0x004
#define POLLERR     0x008
#define POLLHUP     0x010
#define POLLNVAL    0x020
#define POLLRDNORM  0x040
#define POLLWRNORM  0x100
#define POLLRDHUP   0x2000

/* The kinds of event, for vn_poll_notify: the reading side's, the
 * writing side's, and both (a change of state: an error, a hang-up). */
#define POLL_READSIDE   (POLLIN | POLLRDNORM | POLLPRI | POLLRDHUP)
#define POLL_WRITESIDE  (POLLOUT | POLLWRNORM)
#define POLL_BOTHSIDES  (POLL_READSIDE | POLL_WRITESIDE | POLLHUP | POLLERR)

/* What an open file of vp (flags fflags) is ready for, of events. */
static inline short vn_poll(struct vnode *vp, short events, int fflags)
{
    if (vp->v_op->vop_poll)
        return vp->v_op->vop_poll(vp, events, fflags);
    return (short)(events & (POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM));
}

/* The relatime rule (Linux's default mount option): a read updates the
 * access time only when it is not after the modification or change time,
 * or is a day old, so most reads of a file write nothing.  Times in
 * seconds. */
static inline bool vn_atime_due(int64_t atime, int64_t mtime, int64_t ctime, int64_t now)
{
    return atime <= mtime || atime <= ctime || now - atime >= 24 * 3600;
}

/* The vnode lock's class (defined in kern/vfs/vnode.c). */
extern struct lock_class vnode_lock_class;

/* Initialize a vnode the file system has allocated: count 1, lock ready. */
void vn_init(struct vnode *vp, const struct vnodeops *ops, enum vtype type,
             struct vfs *vfsp, void *data);
/* Before the file system frees a vnode's memory. */
void vn_destroy(struct vnode *vp);

static inline void VN_HOLD(struct vnode *vp)
{
    __atomic_add_fetch(&vp->v_count, 1, __ATOMIC_ACQ_REL);
}
/* Drop a reference; the last one calls VOP_INACTIVE. */
void VN_RELE(struct vnode *vp);

/*
 * The VOP_* calls: the vnode lock of the first vnode argument is held
 * around the file system's operation, as in SVR4 MP ("locking around the
 * VOP calls").  Because v_lock is a sleeping, recursive SVR4 mutex that is
 * released across a context switch, a VOP that waits on another vnode's
 * lock (lookup of "..", rename between directories) cannot deadlock.  An
 * ILOCK taken inside a VOP and not released keeps the vnode lock held on
 * return (seed 001), released at the matching IUNLOCK.
 */
#define VOP_LOCKED(vp, call) ({ struct vnode *_v = (vp); mutex_enter(&_v->v_lock); \
        __typeof__(call) _r = (call); mutex_exit(&_v->v_lock); _r; })


/* VOP_GETATTR: the file system's unlocked getattr when it has one and can
 * answer, else its getattr under the vnode lock. */
static inline int vn_getattr(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    if (vp->v_op->vop_getattr_nolock) {
        int r = vp->v_op->vop_getattr_nolock(vp, va, cr);
        if (r <= 0)
            return r;
    }
    return VOP_LOCKED(vp, vp->v_op->vop_getattr(vp, va, cr));
}

/*
 * Reads and writes of regular files of a file system with the page
 * operations (S5, UFS) go through segmap onto the page cache only
 * (pcache_rw_read, pcache_rw_write: kern/vm/pcache_rw.c), the one copy
 * of each file page that mappings map too; a size change drops the pages
 * past the new end (pcache_vop_setattr, pcache_vop_truncate).  Other
 * files (/proc's, devices, directories) use the file system's own
 * operations.  The *_RAW forms are the file system's own operations:
 * for the tests, the disk seen past the page cache.
 */
int pcache_rw_read(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr);
int pcache_rw_write(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr);
int pcache_vop_setattr(struct vnode *vp, const struct vattr *va, struct cred *cr);
int pcache_vop_truncate(struct vnode *vp, uint64_t size, struct cred *cr);
/* Write back the file's dirty pages, then the file system's fsync. */
int pcache_vop_fsync(struct vnode *vp, struct cred *cr);

/* Does vp's data move through the page cache only (the file system
 * supplies the page operations, and vp is a regular file)? */
static inline bool vn_has_pageio(const struct vnode *vp)
{
    return vp->v_type == VREG && vp->v_op->vop_getpage != NULL;
}

#define VOP_READ_RAW(vp, u, io, cr)   VOP_LOCKED(vp, (vp)->v_op->vop_read(vp, u, io, cr))
#define VOP_WRITE_RAW(vp, u, io, cr)  VOP_LOCKED(vp, (vp)->v_op->vop_write(vp, u, io, cr))
#define VOP_SETATTR_RAW(vp, va, cr)   VOP_LOCKED(vp, (vp)->v_op->vop_setattr(vp, va, cr))
#define VOP_TRUNCATE_RAW(vp, sz, cr)  VOP_LOCKED(vp, (vp)->v_op->vop_truncate(vp, sz, cr))

#define VOP_OPEN(vpp, f, cr)          VOP_LOCKED(*(vpp), (*(vpp))->v_op->vop_open(vpp, f, cr))
#define VOP_CLOSE(vp, f, cr)          VOP_LOCKED(vp, (vp)->v_op->vop_close(vp, f, cr))
#define VOP_READ(vp, u, io, cr) ({ struct vnode *_rv = (vp); \
        vn_has_pageio(_rv) ? pcache_rw_read(_rv, u, io, cr) : VOP_READ_RAW(_rv, u, io, cr); })
#define VOP_WRITE(vp, u, io, cr) ({ struct vnode *_wv = (vp); \
        vn_has_pageio(_wv) ? pcache_rw_write(_wv, u, io, cr) : VOP_WRITE_RAW(_wv, u, io, cr); })
#define VOP_IOCTL(vp, c, a, cr)       VOP_LOCKED(vp, (vp)->v_op->vop_ioctl(vp, c, a, cr))
#define VOP_GETATTR(vp, va, cr)       vn_getattr(vp, va, cr)
#define VOP_SETATTR(vp, va, cr)       pcache_vop_setattr(vp, va, cr)
#define VOP_ACCESS(vp, m, cr)         VOP_LOCKED(vp, (vp)->v_op->vop_access(vp, m, cr))
#define VOP_LOOKUP(dvp, n, vpp, cr)   VOP_LOCKED(dvp, (dvp)->v_op->vop_lookup(dvp, n, vpp, cr))
#define VOP_CREATE(dvp, n, va, x, vpp, cr) \
        VOP_LOCKED(dvp, (dvp)->v_op->vop_create(dvp, n, va, x, vpp, cr))
#define VOP_REMOVE(dvp, n, cr)        VOP_LOCKED(dvp, (dvp)->v_op->vop_remove(dvp, n, cr))
#define VOP_LINK(tdvp, svp, n, cr)    VOP_LOCKED(tdvp, (tdvp)->v_op->vop_link(tdvp, svp, n, cr))
#define VOP_RENAME(sdvp, sn, tdvp, tn, cr) \
        VOP_LOCKED(sdvp, (sdvp)->v_op->vop_rename(sdvp, sn, tdvp, tn, cr))
#define VOP_MKDIR(dvp, n, va, vpp, cr) VOP_LOCKED(dvp, (dvp)->v_op->vop_mkdir(dvp, n, va, vpp, cr))
#define VOP_RMDIR(dvp, n, cr)         VOP_LOCKED(dvp, (dvp)->v_op->vop_rmdir(dvp, n, cr))
#define VOP_READDIR(vp, u, cr, eof)   VOP_LOCKED(vp, (vp)->v_op->vop_readdir(vp, u, cr, eof))
#define VOP_SYMLINK(dvp, n, va, t, cr) VOP_LOCKED(dvp, (dvp)->v_op->vop_symlink(dvp, n, va, t, cr))
#define VOP_READLINK(vp, u, cr)       VOP_LOCKED(vp, (vp)->v_op->vop_readlink(vp, u, cr))
#define VOP_FOLLOW(vp, vpp, cr)       ((vp)->v_op->vop_follow ? \
        VOP_LOCKED(vp, (vp)->v_op->vop_follow(vp, vpp, cr)) : -ENOSYS)
#define VOP_FSYNC(vp, cr)             pcache_vop_fsync(vp, cr)
#define VOP_FSYNC_RAW(vp, cr)         VOP_LOCKED(vp, (vp)->v_op->vop_fsync(vp, cr))
#define VOP_GETPAGE(vp, idx, pg, cr)  VOP_LOCKED(vp, (vp)->v_op->vop_getpage(vp, idx, pg, cr))
#define VOP_PUTPAGE(vp, idx, pg, n, cr) VOP_LOCKED(vp, (vp)->v_op->vop_putpage(vp, idx, pg, n, cr))
#define VOP_WRALLOC(vp, off, n, io, cr) VOP_LOCKED(vp, (vp)->v_op->vop_wralloc(vp, off, n, io, cr))
#define VOP_BACKPAGE(vp, idx)         ((vp)->v_op->vop_backpage ? \
        VOP_LOCKED(vp, (vp)->v_op->vop_backpage(vp, idx)) : 0)
#define VOP_TRUNCATE(vp, sz, cr)      pcache_vop_truncate(vp, sz, cr)
/* VOP_INACTIVE is called only by VN_RELE (kern/vfs/vnode.c), without the vnode lock. */

/* Helpers for file systems: the usual Unix permission check (owner,
 * group, other; the superuser passes except VEXEC on a file with no x bit). */
int vn_access_check(uint32_t mode, uint32_t uid, uint32_t gid, int want, const struct cred *cr);
/* A name to create, remove or rename to: vn_name_check, and not "." or
 * ".." (-EINVAL). */
int vn_new_name_check(const char *name, size_t max);
/* A symbolic link's text: its length in *lenp, or -ENOENT when empty and
 * -ENAMETOOLONG at PATH_MAX bytes or more (Linux's errors for symlink). */
int vn_symlink_check(const char *target, size_t *lenp);
/* The sticky-directory rule: in a directory of mode dmode owned by duid,
 * only the owner of the file (fuid) or of the directory, or the superuser,
 * may remove or rename an entry; else -EPERM. */
int vn_sticky_check(uint32_t dmode, uint32_t duid, uint32_t fuid, const struct cred *cr);
/* setattr's rules (Linux's), for every file system.  cur holds the file's
 * va_type, va_mode, va_uid, va_gid (and times).  vn_setattr_check: may cr
 * make va's changes?  0, -EPERM (chmod or utimes by another than the
 * owner, chown by another than root, chgrp to a group the owner is not
 * in), or for AT_SIZE -EISDIR, -EINVAL (not a regular file), -EFBIG (past
 * maxsize); AT_SIZE's write permission is the caller's to check.
 * vn_setattr_apply: cur after the changes: without root, no sticky bit on
 * a file, no setgid outside the file's group, and chown drops the set-id
 * bits. */
int vn_setattr_check(const struct vattr *cur, const struct vattr *va, uint64_t maxsize,
                     const struct cred *cr);
void vn_setattr_apply(struct vattr *cur, const struct vattr *va, const struct cred *cr);
/* truncate's checks on vp, in this order: -EISDIR for a directory,
 * -EINVAL for anything else but a regular file, -EFBIG past maxsize,
 * -EROFS on a read-only file system; else 0. */
int vn_truncate_check(const struct vnode *vp, uint64_t size, uint64_t maxsize, bool rdonly);
/* The open, close and ioctl of a file system for which they do nothing:
 * open and close succeed, ioctl is -ENOTTY (no such request). */
int vn_open_nop(struct vnode **vpp, int flags, struct cred *cr);
int vn_close_nop(struct vnode *vp, int flags, struct cred *cr);
int vn_ioctl_notty(struct vnode *vp, unsigned long cmd, void *arg, struct cred *cr);
/* Is the name component valid for a file system whose names are at most
 * max bytes?  -ENAMETOOLONG, -EINVAL (empty or contains '/'), or 0. */
int vn_name_check(const char *name, size_t max);

#endif
