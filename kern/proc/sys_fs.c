/*
 * File system calls on top of the VFS path operations (kern/vfs/vfs.h)
 * and the vnode operations; the descriptor calls (dup, fcntl, ioctl...)
 * are kern/proc/sys_fd.c.
 *
 * Theory.  Every pathname is copied in first (copyinstr, PATH_MAX) and
 * every transfer goes through a kernel bounce buffer: the file systems see
 * kernel buffers only (uio_user is never set), and user memory is touched
 * only by copyin/copyout, outside every vnode and file-system lock, so a
 * fault on a user buffer (which may read a file to resolve it) can never
 * deadlock against the file system.  A bad user pointer is -EFAULT.
 *
 * The "at" calls take a directory descriptor or AT_FDCWD; relative paths
 * start there, absolute ones at the root.
 *
 * Locks.  A file's offset is read and written under f_lock (held only
 * around the offset arithmetic, never across a VOP: SVR4 mutexes are let
 * go at every context switch anyway, so they could not make a read and
 * its offset update atomic).  Two processes sharing an open file after
 * fork may therefore both read at the same offset: a known difference
 * from Unix, harmless for the programs run today.  The descriptor table
 * has its own lock (kern/proc/fd.c).
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/net/socket.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <drivers/tty/tty.h>

#define AT_REMOVEDIR        0x200
#define O_CLOEXEC           0x80000
#define SEEK_SET 0
#define SEEK_CUR 1
#define SEEK_END 2
#define BOUNCE     16384
#define IOV_MAX    1024

static struct cred *cr(void) { return curproc()->p_cred; }
static int build_path(struct vnode *start, char *out, size_t size);

static struct vnode *cwd(void)
{
    struct vnode *v = curproc()->p_cwd;
    return v ? v : rootdir;
}

/* Copy in a path; the caller frees *out. */
static int get_path(uint64_t upath, char **out)
{
    char *p = kmalloc(PATH_MAX);
    if (!p)
        return -ENOMEM;
    long n = copyinstr((const char *)upath, p, PATH_MAX);
    if (n == 0)
        n = -ENOENT;
    if (n < 0) {
        kfree(p);
        return (int)n;
    }
    *out = p;
    return 0;
}

/* The starting directory for an "at" call (held in *fpp when a
 * descriptor's): its vnode, or NULL with *err. */
static struct vnode *at_dir(int dirfd, const char *path, struct file **fpp, int *err)
{
    *fpp = NULL;
    if (path[0] == '/' || dirfd == AT_FDCWD)
        return cwd();
    struct file *fp = fd_get_raw(curproc(), dirfd);
    if (!fp) {
        *err = -EBADF;
        return NULL;
    }
    if (fp->f_vp->v_type != VDIR) {
        file_rele(fp);
        *err = -ENOTDIR;
        return NULL;
    }
    *fpp = fp;
    return fp->f_vp;
}

static void at_done(struct file *fp)
{
    if (fp)
        file_rele(fp);
}

/* ---- reading and writing ---- */


/*
 * RLIMIT_FSIZE: how many of the n bytes a write at off (or, appending, at
 * the end) of vp may move.  Only regular files are limited.  When none
 * may move the write fails with EFBIG and the process gets SIGXFSZ, as on
 * Linux; a write that crosses the limit moves the bytes below it.
 */
int64_t fsize_room(struct vnode *vp, uint64_t off, bool append, size_t n)
{
    struct proc *p = curproc();
    uint64_t limit = p->p_rlim[RLIMIT_FSIZE][0];
    if (vp->v_type != VREG || limit == RLIM_INFINITY || n == 0)
        return (int64_t)n;
    struct vattr va;
    if (append && VOP_GETATTR(vp, &va, p->p_cred) == 0)
        off = va.va_size;
    if (off >= limit) {
        struct ksiginfo si = { .si_signo = SIGXFSZ, .si_code = SI_USER, .si_pid = p->p_pid,
                               .si_uid = (int)p->p_cred->cr_ruid };
        sig_post(p, SIGXFSZ, &si);
        return -EFBIG;
    }
    return (int64_t)MIN((uint64_t)n, limit - off);
}

/* Move len bytes between user memory at ubuf and the file at *off. */
static int64_t rw_user(struct file *fp, bool write, uint64_t ubuf, size_t len, uint64_t *off)
{
    struct vnode *vp = fp->f_vp;
    if (vp->v_type == VDIR)
        return -EISDIR;
    if (len == 0 && (vp->v_flag & VNOSEEK)) {
        /* An event object judges an empty transfer itself (eventfd's
         * is EINVAL, as any shorter than 8 bytes). */
        char none;
        struct uio uio = { .uio_base = &none, .uio_resid = 0 };
        int io = fp->f_flags & O_NONBLOCK;
        return write ? VOP_WRITE(vp, &uio, io, cr()) : VOP_READ(vp, &uio, io, cr());
    }
    char *kbuf = kmalloc(MIN(len, (size_t)BOUNCE) ? MIN(len, (size_t)BOUNCE) : 1);
    if (!kbuf)
        return -ENOMEM;
    size_t done = 0;
    int err = 0;
    while (done < len) {
        size_t n = MIN(len - done, (size_t)BOUNCE), want = n;
        if (write) {
            int64_t room = fsize_room(vp, *off, fp->f_flags & O_APPEND, n);
            if (room < 0) {
                err = (int)room;
                break;
            }
            n = (size_t)room;
        }
        struct uio uio = { .uio_base = kbuf, .uio_resid = n, .uio_offset = *off };
        if (write) {
            if ((err = copyin((void *)(ubuf + done), kbuf, n)))
                break;
            int io = (fp->f_flags & O_APPEND) ? IO_APPEND : 0;
            /* O_DSYNC (and O_SYNC, which includes it): the data, the block
             * map and the inode are on the disk when the write returns
             * (the file system's IO_SYNC; PostgreSQL's open_datasync). */
            if ((fp->f_flags & O_DSYNC) && vp->v_type == VREG)
                io |= IO_SYNC;
            if (vn_is_stream(vp))
                io = fp->f_flags & O_NONBLOCK;      /* pipes (pipe.c) take O_NONBLOCK */
            err = VOP_WRITE(vp, &uio, io, cr());
        } else {
            int io = vn_is_stream(vp) ? (fp->f_flags & O_NONBLOCK) : 0;
            err = VOP_READ(vp, &uio, io, cr());
        }
        size_t moved = n - uio.uio_resid;
        /* Bytes read but not delivered (a bad buffer) do not move the offset. */
        if (!write && moved && copyout(kbuf, (void *)(ubuf + done), moved)) {
            err = -EFAULT;
            break;
        }
        *off = uio.uio_offset;
        done += moved;
        if (err || moved < want)
            break;
    }
    kfree(kbuf);
    if (done)
        vn_notify(vp, write ? IN_MODIFY : IN_ACCESS, NULL, 0);     /* inotify */
    return done ? (int64_t)done : err;
}

/* Could [ubuf, ubuf + len) be user memory at all?  (Linux's access_ok:
 * a buffer reaching past user space is -EFAULT before anything moves,
 * even where the transfer would stop early, at the end of a file.) */
static bool user_range(uint64_t ubuf, size_t len)
{
    return len <= USER_TOP && ubuf <= USER_TOP - len;
}

static int64_t rw_fd(int fd, bool write, uint64_t ubuf, size_t len, bool at_off, uint64_t off)
{
    struct file *fp = fd_get(curproc(), fd);
    if (!fp)
        return -EBADF;
    int64_t r;
    if (at_off && vn_is_stream(fp->f_vp)) {
        r = -ESPIPE;            /* first, as Linux's pread and pwrite */
    } else if (write ? !file_writable(fp) : !file_readable(fp)) {
        r = -EBADF;
    } else if (!user_range(ubuf, len)) {
        r = -EFAULT;
    } else if (vn_is_socket(fp->f_vp)) {
        struct kiovec v = { ubuf, MIN(len, (size_t)INT32_MAX) };
        r = socket_rw(fp, write, &v, 1);
    } else if (at_off || fp->f_vp->v_type == VFIFO) {
        /* A pipe has no offset to keep (Linux takes no f_pos lock on
         * one either): two lock round trips fewer per pipe call. */
        r = rw_user(fp, write, ubuf, len, &off);
    } else {
        mutex_enter(&fp->f_lock);
        uint64_t o = fp->f_offset;
        mutex_exit(&fp->f_lock);
        r = rw_user(fp, write, ubuf, len, &o);
        mutex_enter(&fp->f_lock);
        fp->f_offset = o;
        mutex_exit(&fp->f_lock);
    }
    file_rele(fp);
    return r;
}

SYSCALL_DECL(sys_read) { return rw_fd((int)a0, false, a1, a2, false, 0); }
SYSCALL_DECL(sys_write) { return rw_fd((int)a0, true, a1, a2, false, 0); }

SYSCALL_DECL(sys_pread64)
{
    if ((int64_t)a3 < 0)
        return -EINVAL;
    return rw_fd((int)a0, false, a1, a2, true, a3);
}

SYSCALL_DECL(sys_pwrite64)
{
    if ((int64_t)a3 < 0)
        return -EINVAL;
    return rw_fd((int)a0, true, a1, a2, true, a3);
}

struct iovec_u {
    uint64_t base;
    uint64_t len;
};

/* readv and writev of a socket (fp held, released here). */
static int64_t socket_vec(struct file *fp, bool write, uint64_t uiov, int cnt)
{
    struct kiovec *v = kmalloc(cnt ? (size_t)cnt * sizeof *v : 1);
    int64_t r = v ? 0 : -ENOMEM;
    if (!r && cnt && copyin((void *)uiov, v, (size_t)cnt * sizeof *v))
        r = -EFAULT;
    size_t total = 0;
    for (int i = 0; !r && i < cnt; i++) {
        if ((int64_t)v[i].len < 0)
            r = -EINVAL;
        else if (!user_range(v[i].base, v[i].len))
            r = -EFAULT;
        else
            total += v[i].len = MIN(v[i].len, (size_t)INT32_MAX - total);
    }
    if (!r && (write ? !file_writable(fp) : !file_readable(fp)))
        r = -EBADF;
    if (!r)
        r = socket_rw(fp, write, v, cnt);
    kfree(v);
    file_rele(fp);
    return r;
}

/* readv, writev, and with at_off the p- forms at off. */
static int64_t rw_vec(int fd, bool write, uint64_t uiov, int cnt, bool at_off, uint64_t off)
{
    /* As Linux: a bad descriptor comes before a bad count. */
    struct file *fp = fd_get(curproc(), fd);
    if (!fp)
        return -EBADF;
    if (at_off && vn_is_stream(fp->f_vp)) {
        file_rele(fp);
        return -ESPIPE;
    }
    if (vn_is_socket(fp->f_vp) && cnt >= 0 && cnt <= IOV_MAX)
        return socket_vec(fp, write, uiov, cnt);    /* one message, not one per piece */
    file_rele(fp);
    if (cnt < 0 || cnt > IOV_MAX)
        return -EINVAL;
    int64_t total = 0;
    for (int i = 0; i < cnt; i++) {
        struct iovec_u v;
        if (copyin((void *)(uiov + i * sizeof v), &v, sizeof v))
            return total ? total : -EFAULT;
        if (v.len == 0)
            continue;
        int64_t r = rw_fd(fd, write, v.base, v.len, at_off, off + (uint64_t)total);
        if (r < 0)
            return total ? total : r;
        total += r;
        if ((uint64_t)r < v.len)
            break;
    }
    return total;
}

SYSCALL_DECL(sys_readv) { return rw_vec((int)a0, false, a1, (int)a2, false, 0); }
SYSCALL_DECL(sys_writev) { return rw_vec((int)a0, true, a1, (int)a2, false, 0); }

/* preadv and pwritev: the offset is one 64-bit register on x86-64 (a3;
 * a4, its high half on 32-bit systems, is not looked at). */
static int64_t prw_vec(bool write, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t off)
{
    if ((int64_t)off < 0)
        return -EINVAL;
    return rw_vec((int)a0, write, a1, (int)a2, true, off);
}

SYSCALL_DECL(sys_preadv) { return prw_vec(false, a0, a1, a2, a3); }
SYSCALL_DECL(sys_pwritev) { return prw_vec(true, a0, a1, a2, a3); }

#define RWF_HIPRI   0x01
#define RWF_DSYNC   0x02
#define RWF_SYNC    0x04
#define RWF_NOWAIT  0x08
#define RWF_KNOWN   (RWF_HIPRI | RWF_DSYNC | RWF_SYNC | RWF_NOWAIT)

/* preadv2 and pwritev2: offset -1 is the file's own (as readv and
 * writev); RWF_HIPRI and RWF_NOWAIT change nothing here (no polled I/O,
 * and nothing blocks on a disk queue's room), RWF_DSYNC and RWF_SYNC
 * make a write durable before it returns; other flags EOPNOTSUPP. */
static int64_t prw_vec2(bool write, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t off,
                        uint64_t flags)
{
    if (flags & ~(uint64_t)RWF_KNOWN)
        return -EOPNOTSUPP;
    int64_t r = (int64_t)off == -1 ? rw_vec((int)a0, write, a1, (int)a2, false, 0)
                                   : prw_vec(write, a0, a1, a2, off);
    if (r > 0 && write && (flags & (RWF_DSYNC | RWF_SYNC))) {
        struct file *fp = fd_get(curproc(), (int)a0);
        int err = fp ? VOP_FSYNC(fp->f_vp, cr()) : -EBADF;
        if (fp)
            file_rele(fp);
        if (err && err != -EINVAL)
            return err;
    }
    return r;
}

SYSCALL_DECL(sys_preadv2) { return prw_vec2(false, a0, a1, a2, a3, a5); }
SYSCALL_DECL(sys_pwritev2) { return prw_vec2(true, a0, a1, a2, a3, a5); }

/* ---- open and close ---- */

static int64_t do_open(int dirfd, uint64_t upath, int flags, uint32_t mode, unsigned resolve)
{
    char *path = NULL;
    int err = get_path(upath, &path);
    if (err)
        return err;
    /* A scoped walk (BENEATH, IN_ROOT) starts at dirfd even for "/...". */
    bool scoped = resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT);
    struct file *dfp;
    struct vnode *dir = at_dir(dirfd, scoped ? "." : path, &dfp, &err);
    struct vnode *vp = NULL;
    if (dir)
        err = vn_open_resolve(path, dir, flags & ~O_CLOEXEC, mode & 07777 & ~curproc()->p_umask,
                              resolve, &vp, cr());
    at_done(dfp);
    kfree(path);
    if (err)
        return err;
    struct file *fp = file_alloc(vp, flags);
    if (!fp) {
        vn_close(vp, flags, cr());
        return -ENOMEM;
    }
    int fd = fd_install(curproc(), fp, 0, (flags & O_CLOEXEC) ? FD_CLOEXEC : 0);
    if (fd < 0)
        file_rele(fp);
    return fd;
}

SYSCALL_DECL(sys_open) { return do_open(AT_FDCWD, a0, (int)a1, (uint32_t)a2, 0); }
SYSCALL_DECL(sys_openat) { return do_open((int)a0, a1, (int)a2, (uint32_t)a3, 0); }
SYSCALL_DECL(sys_creat) { return do_open(AT_FDCWD, a0, O_CREAT | O_WRONLY | O_TRUNC, (uint32_t)a1, 0); }

/* openat2's struct open_how, version 0 (24 bytes); later versions only
 * add fields, which must then be zero. */
struct open_how_u {
    uint64_t flags, mode, resolve;
};

#define OPEN_VALID_FLAGS 037777703UL        /* Linux's VALID_OPEN_FLAGS on x86-64 */
#define O_TMPFILE_BITS   (020000000UL | O_DIRECTORY)
#define O_PATH_FLAGS     (O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC)

/* The open_how at uhow, size bytes, as copy_struct_from_user takes it:
 * EINVAL below version 0, E2BIG past a page or for unknown fields set. */
static int open_how_in(uint64_t uhow, uint64_t size, struct open_how_u *how)
{
    if (size < sizeof *how)
        return -EINVAL;
    if (size > PAGE_SIZE)
        return -E2BIG;
    if (copyin((void *)uhow, how, sizeof *how))
        return -EFAULT;
    for (uint64_t off = sizeof *how; off < size; off++) {
        uint8_t b;
        if (copyin((void *)(uhow + off), &b, 1))
            return -EFAULT;
        if (b)
            return -E2BIG;
    }
    return 0;
}

/* Linux's build_open_flags checks, in its order: openat2 refuses what
 * openat ignores. */
static int open_how_check(const struct open_how_u *how)
{
    bool create = (how->flags & O_CREAT) || (how->flags & O_TMPFILE_BITS) == O_TMPFILE_BITS;
    if (how->flags & ~OPEN_VALID_FLAGS)
        return -EINVAL;
    if (how->resolve & ~(uint64_t)RESOLVE_ALL)
        return -EINVAL;
    if ((how->resolve & RESOLVE_BENEATH) && (how->resolve & RESOLVE_IN_ROOT))
        return -EINVAL;
    if (create ? (how->mode & ~07777UL) != 0 : how->mode != 0)
        return -EINVAL;
    if ((how->flags & O_PATH) && (how->flags & ~(uint64_t)O_PATH_FLAGS))
        return -EINVAL;
    if ((how->resolve & RESOLVE_CACHED) && (how->flags & (O_TRUNC | O_CREAT | 020000000UL)))
        return -EAGAIN;
    return 0;
}

SYSCALL_DECL(sys_openat2)
{
    struct open_how_u how;
    int err = open_how_in(a2, a3, &how);
    if (!err)
        err = open_how_check(&how);
    if (err)
        return err;
    return do_open((int)a0, a1, (int)how.flags, (uint32_t)how.mode, (unsigned)how.resolve);
}
SYSCALL_DECL(sys_close) { return fd_close(curproc(), (int)a0); }

SYSCALL_DECL(sys_lseek)
{
    struct file *fp = fd_get(curproc(), (int)a0);
    if (!fp)
        return -EBADF;
    int64_t off = (int64_t)a1, base = 0, to = 0;
    /* A pipe has no position, whatever the whence (busybox's tail asks
     * for the end of its input and seeks back only if that works). */
    int64_t r = vn_is_stream(fp->f_vp) ? -ESPIPE : 0;
    if (r == 0 && a2 == SEEK_END) {
        struct vattr va;
        r = VOP_GETATTR(fp->f_vp, &va, cr());
        base = (int64_t)va.va_size;
    }
    mutex_enter(&fp->f_lock);
    if (a2 == SEEK_CUR)
        base = (int64_t)fp->f_offset;
    if (r == 0 && a2 > SEEK_END)
        r = -EINVAL;
    if (r == 0 && (__builtin_add_overflow(base, off, &to) || to < 0))
        r = -EINVAL;
    if (r == 0)
        r = (int64_t)(fp->f_offset = (uint64_t)to);
    mutex_exit(&fp->f_lock);
    file_rele(fp);
    return r;
}

/* fadvise64(fd, offset, len, advice): advice only, so nothing to do for
 * a file; the errors are Linux's generic_fadvise's, in its order: a bad
 * fd EBADF, a pipe ESPIPE, a negative length or an unknown advice EINVAL
 * (POSIX_FADV_NORMAL 0 to POSIX_FADV_NOREUSE 5). */
SYSCALL_DECL(sys_fadvise64)
{
    struct file *fp = fd_get(curproc(), (int)a0);
    if (!fp)
        return -EBADF;
    int64_t r = 0;
    if (vn_is_stream(fp->f_vp))
        r = -ESPIPE;
    else if ((int64_t)a2 < 0 || (int)a3 < 0 || (int)a3 > 5)
        r = -EINVAL;
    file_rele(fp);
    return r;
}

/* ---- attributes ---- */

struct stat_u {
    uint64_t st_dev, st_ino, st_nlink;
    uint32_t st_mode, st_uid, st_gid, pad0;
    uint64_t st_rdev;
    int64_t st_size, st_blksize, st_blocks;
    int64_t st_atime, st_atime_nsec, st_mtime, st_mtime_nsec, st_ctime, st_ctime_nsec;
    int64_t unused[3];
};

static int stat_out(const struct vattr *va, uint64_t ubuf)
{
    struct stat_u st;
    memset(&st, 0, sizeof st);
    st.st_dev = va->va_fsid;
    st.st_ino = va->va_ino;
    st.st_nlink = va->va_nlink;
    st.st_mode = va->va_mode;
    st.st_uid = va->va_uid;
    st.st_gid = va->va_gid;
    st.st_rdev = va->va_rdev;
    st.st_size = (int64_t)va->va_size;
    st.st_blksize = va->va_blksize;
    st.st_blocks = (int64_t)va->va_blocks;
    st.st_atime = va->va_atime;
    st.st_mtime = va->va_mtime;
    st.st_ctime = va->va_ctime;
    return copyout(&st, (void *)ubuf, sizeof st);
}

/* The attributes of what dirfd and upath name (AT_EMPTY_PATH with ""
 * or, for statx, no path at all: dirfd itself). */
static int stat_at(int dirfd, uint64_t upath, int flags, struct vattr *va)
{
    int err;
    if (flags & AT_EMPTY_PATH) {
        char c = 0;
        if (!upath || (copyin((void *)upath, &c, 1) == 0 && c == 0)) {
            struct file *fp = fd_get_raw(curproc(), dirfd);
            if (!fp)
                return -EBADF;
            err = VOP_GETATTR(fp->f_vp, va, cr());
            file_rele(fp);
            return err;
        }
    }
    char *path = NULL;
    if ((err = get_path(upath, &path)))
        return err;
    struct file *dfp;
    struct vnode *dir = at_dir(dirfd, path, &dfp, &err);
    if (dir)
        err = vn_stat(path, dir, !(flags & AT_SYMLINK_NOFOLLOW), va, cr());
    at_done(dfp);
    kfree(path);
    return err;
}

static int64_t do_stat(int dirfd, uint64_t upath, uint64_t ubuf, int flags)
{
    if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | 0x800 /* AT_NO_AUTOMOUNT */))
        return -EINVAL;
    struct vattr va;
    int err = stat_at(dirfd, upath, flags, &va);
    return err ? err : stat_out(&va, ubuf);
}

/* ---- statx ---- */

#define AT_STATX_SYNC_TYPE  0x6000
#define STATX_BASIC_STATS   0x7ffu
#define STATX_RESERVED      0x80000000u

struct statx_ts { int64_t sec; uint32_t nsec; int32_t pad; };

struct statx_u {
    uint32_t mask, blksize;
    uint64_t attributes;
    uint32_t nlink, uid, gid;
    uint16_t mode, pad0;
    uint64_t ino, size, blocks, attributes_mask;
    struct statx_ts atime, btime, ctime, mtime;
    uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
    uint64_t spare[14];
};
_Static_assert(sizeof(struct statx_u) == 256, "Linux's struct statx");

static int statx_out(const struct vattr *va, uint64_t ubuf)
{
    struct statx_u sx;
    memset(&sx, 0, sizeof sx);
    sx.mask = STATX_BASIC_STATS;        /* no birth time: S5 and UFS1 keep none */
    sx.blksize = va->va_blksize;
    sx.nlink = va->va_nlink;
    sx.uid = va->va_uid;
    sx.gid = va->va_gid;
    sx.mode = (uint16_t)va->va_mode;
    sx.ino = va->va_ino;
    sx.size = va->va_size;
    sx.blocks = va->va_blocks;
    sx.atime.sec = va->va_atime;
    sx.mtime.sec = va->va_mtime;
    sx.ctime.sec = va->va_ctime;
    sx.rdev_major = vn_major(va->va_rdev);
    sx.rdev_minor = vn_minor(va->va_rdev);
    sx.dev_major = vn_major(va->va_fsid);
    sx.dev_minor = vn_minor(va->va_fsid);
    return copyout(&sx, (void *)ubuf, sizeof sx);
}

/* statx(dirfd, path, flags, mask, buf): what stat gives, in Linux's
 * struct statx; every basic field is filled whatever the mask asks. */
SYSCALL_DECL(sys_statx)
{
    int flags = (int)a2;
    uint32_t mask = (uint32_t)a3;
    if ((flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | 0x800 | AT_STATX_SYNC_TYPE)) ||
        (flags & AT_STATX_SYNC_TYPE) == AT_STATX_SYNC_TYPE || (mask & STATX_RESERVED))
        return -EINVAL;
    struct vattr va;
    int err = stat_at((int)a0, a1, flags, &va);
    return err ? err : statx_out(&va, a4);
}

SYSCALL_DECL(sys_stat) { return do_stat(AT_FDCWD, a0, a1, 0); }
SYSCALL_DECL(sys_lstat) { return do_stat(AT_FDCWD, a0, a1, AT_SYMLINK_NOFOLLOW); }
SYSCALL_DECL(sys_newfstatat) { return do_stat((int)a0, a1, a2, (int)a3); }

SYSCALL_DECL(sys_fstat)
{
    struct file *fp = fd_get_raw(curproc(), (int)a0);
    if (!fp)
        return -EBADF;
    struct vattr va;
    int err = VOP_GETATTR(fp->f_vp, &va, cr());
    file_rele(fp);
    return err ? err : stat_out(&va, a1);
}

#define AT_EACCESS 0x200

static int64_t do_access(int dirfd, uint64_t upath, int mode, int flags)
{
    if (mode & ~7 || (flags & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)))
        return -EINVAL;
    if (flags & AT_EMPTY_PATH) {
        char c = 1;
        if (copyin((void *)upath, &c, 1) == 0 && c == 0) {
            struct file *fp = fd_get_raw(curproc(), dirfd);
            if (!fp)
                return -EBADF;
            int err = mode ? VOP_ACCESS(fp->f_vp, mode, cr()) : 0;
            file_rele(fp);
            return err;
        }
    }
    char *path = NULL;
    int err = get_path(upath, &path);
    if (err)
        return err;
    struct file *dfp;
    struct vnode *dir = at_dir(dirfd, path, &dfp, &err), *vp;
    if (dir && !(err = lookupname(path, dir, !(flags & AT_SYMLINK_NOFOLLOW), &vp, cr()))) {
        if (mode)
            err = VOP_ACCESS(vp, mode, cr());
        VN_RELE(vp);
    }
    at_done(dfp);
    kfree(path);
    return err;
}

SYSCALL_DECL(sys_access) { return do_access(AT_FDCWD, a0, (int)a1, 0); }
SYSCALL_DECL(sys_faccessat) { return do_access((int)a0, a1, (int)a2, 0); }
SYSCALL_DECL(sys_faccessat2) { return do_access((int)a0, a1, (int)a2, (int)a3); }

/* ---- directories ---- */

/* The old getdents's record (struct linux_dirent): the type in the last
 * byte, after the name.  It is as long as dirent64's for the same name,
 * so each record becomes one in place. */
static void dirents_to_old(char *buf, size_t len)
{
    for (size_t pos = 0; pos < len;) {
        struct dirent64 *d = (struct dirent64 *)(buf + pos);
        uint16_t reclen = d->d_reclen;
        if (reclen == 0)
            break;
        uint8_t type = d->d_type;
        size_t namelen = strlen(d->d_name);
        memmove(buf + pos + 18, d->d_name, namelen + 1);    /* over d_type */
        buf[pos + reclen - 1] = (char)type;
        pos += reclen;
    }
}

static int64_t do_getdents(uint64_t a0, uint64_t a1, uint64_t a2, bool old)
{
    struct file *fp = fd_get(curproc(), (int)a0);
    if (!fp)
        return -EBADF;
    size_t len = MIN(a2, (uint64_t)BOUNCE);
    int64_t r;
    char *kbuf = NULL;
    if (fp->f_vp->v_type != VDIR) {
        r = -ENOTDIR;
    } else if (len < sizeof(struct dirent64) + 8) {
        r = -EINVAL;
    } else if (!(kbuf = kmalloc(len))) {
        r = -ENOMEM;
    } else {
        mutex_enter(&fp->f_lock);
        struct uio uio = { .uio_base = kbuf, .uio_resid = len, .uio_offset = fp->f_offset };
        mutex_exit(&fp->f_lock);
        bool eof = false;
        r = VOP_READDIR(fp->f_vp, &uio, cr(), &eof);
        size_t got = len - uio.uio_resid;
        if (r == 0 && got == 0 && !eof)
            r = -EINVAL;            /* the buffer holds not even one entry */
        if (r == 0 && old)
            dirents_to_old(kbuf, got);
        if (r == 0 && got && copyout(kbuf, (void *)a1, got))
            r = -EFAULT;
        if (r == 0) {
            /* Resume after the last record returned: its d_off is the
             * file system's cookie for the next one. */
            uint64_t next = uio.uio_offset;
            for (size_t pos = 0; pos < got;) {
                struct dirent64 *d = (struct dirent64 *)(kbuf + pos);
                if (d->d_reclen == 0)
                    break;
                next = (uint64_t)d->d_off;
                pos += d->d_reclen;
            }
            mutex_enter(&fp->f_lock);
            fp->f_offset = next;
            mutex_exit(&fp->f_lock);
            r = (int64_t)got;
        }
    }
    kfree(kbuf);
    file_rele(fp);
    return r;
}

SYSCALL_DECL(sys_getdents64) { return do_getdents(a0, a1, a2, false); }
SYSCALL_DECL(sys_getdents) { return do_getdents(a0, a1, a2, true); }

typedef int (*path_op)(const char *path, struct vnode *dir, uint64_t arg);

/* Run op on a copied-in path relative to dirfd. */
static int64_t with_path(int dirfd, uint64_t upath, path_op op, uint64_t arg)
{
    char *path = NULL;
    int err = get_path(upath, &path);
    if (err)
        return err;
    struct file *dfp;
    struct vnode *dir = at_dir(dirfd, path, &dfp, &err);
    if (dir)
        err = op(path, dir, arg);
    at_done(dfp);
    kfree(path);
    return err;
}

static int op_mkdir(const char *path, struct vnode *dir, uint64_t mode)
{
    return vn_mkdir(path, dir, (uint32_t)mode & 07777 & ~curproc()->p_umask, cr());
}
static int op_rmdir(const char *path, struct vnode *dir, uint64_t unused)
{
    return vn_rmdir(path, dir, cr());
}
static int op_unlink(const char *path, struct vnode *dir, uint64_t flags)
{
    return (flags & AT_REMOVEDIR) ? vn_rmdir(path, dir, cr()) : vn_remove(path, dir, cr());
}

SYSCALL_DECL(sys_mkdir) { return with_path(AT_FDCWD, a0, op_mkdir, a1); }
SYSCALL_DECL(sys_mkdirat) { return with_path((int)a0, a1, op_mkdir, a2); }
SYSCALL_DECL(sys_rmdir) { return with_path(AT_FDCWD, a0, op_rmdir, 0); }
SYSCALL_DECL(sys_unlink) { return with_path(AT_FDCWD, a0, op_unlink, 0); }
/* The flags of the "at" calls are ints: bits above the low 32 are not
 * flags (Linux ignores them). */
SYSCALL_DECL(sys_unlinkat)
{
    int flags = (int)a2;
    if (flags & ~AT_REMOVEDIR)
        return -EINVAL;
    return with_path((int)a0, a1, op_unlink, (uint64_t)flags);
}

/* Two-path calls: link, rename, symlink. */
static int64_t two_paths(uint64_t ua, uint64_t ub, int which)
{
    char *a = NULL, *b = NULL;
    int err = get_path(ua, &a);
    if (err)
        return err;
    if ((err = get_path(ub, &b))) {
        kfree(a);
        return err;
    }
    switch (which) {
    case 0: err = vn_link(a, b, cwd(), cr()); break;
    case 1: err = vn_rename(a, b, cwd(), cr()); break;
    default: err = vn_symlink(a, b, cwd(), cr()); break;
    }
    kfree(a);
    kfree(b);
    return err;
}

SYSCALL_DECL(sys_link) { return two_paths(a0, a1, 0); }

/* An "at" path made absolute (vn_rename and vn_link take one starting
 * directory for both names): dirfd's directory path, "/", the name. */
static int abs_at(int dirfd, uint64_t upath, char **out)
{
    char *path = NULL;
    int err = get_path(upath, &path);
    if (err || path[0] == '/' || dirfd == AT_FDCWD) {
        *out = path;
        return err;
    }
    struct file *fp;
    struct vnode *dir = at_dir(dirfd, path, &fp, &err);
    char *full = dir ? kmalloc(PATH_MAX) : NULL;
    if (dir && !full)
        err = -ENOMEM;
    if (full) {
        int n = build_path(dir, full, PATH_MAX);
        size_t len = n > 0 ? strlen(full) : 0;
        if (n < 0)
            err = n;
        else if (len + 1 + strlen(path) + 1 > PATH_MAX)
            err = -ENAMETOOLONG;
        else {
            if (full[len - 1] != '/')
                full[len++] = '/';
            strlcpy(full + len, path, PATH_MAX - len);
        }
    }
    at_done(fp);
    kfree(path);
    if (err) {
        kfree(full);
        return err;
    }
    *out = full;
    return 0;
}

static int64_t two_at(int da, uint64_t ua, int db, uint64_t ub, int which)
{
    char *a = NULL, *b = NULL;
    int err = abs_at(da, ua, &a);
    if (!err)
        err = abs_at(db, ub, &b);
    if (!err && which == 0)
        err = vn_link(a, b, cwd(), cr());
    else if (!err && which == 1)
        err = vn_rename(a, b, cwd(), cr());
    else if (!err)
        err = vn_symlink(a, b, cwd(), cr());
    kfree(a);
    kfree(b);
    return err;
}

SYSCALL_DECL(sys_renameat) { return two_at((int)a0, a1, (int)a2, a3, 1); }
SYSCALL_DECL(sys_renameat2) { return (unsigned)a4 ? -EINVAL : two_at((int)a0, a1, (int)a2, a3, 1); }
/* AT_SYMLINK_FOLLOW (0x400) is what linkat does anyway here; AT_EMPTY_PATH
 * is accepted, and an empty name then fails to resolve (ENOENT), as it
 * does on Linux for a caller without CAP_DAC_READ_SEARCH. */
SYSCALL_DECL(sys_linkat)
{
    return ((int)a4 & ~(0x400 | AT_EMPTY_PATH)) ? -EINVAL : two_at((int)a0, a1, (int)a2, a3, 0);
}
SYSCALL_DECL(sys_rename) { return two_paths(a0, a1, 1); }
SYSCALL_DECL(sys_symlink) { return two_paths(a0, a1, 2); }
/* symlinkat(target, newdirfd, linkpath): the target is stored as given,
 * never resolved, so only the link's own name is taken at newdirfd
 * (coreutils' ln -s uses this call). */
SYSCALL_DECL(sys_symlinkat) { return two_at(AT_FDCWD, a0, (int)a1, a2, 2); }

static int64_t do_readlink(int dirfd, uint64_t upath, uint64_t ubuf, int64_t size)
{
    if (size <= 0)
        return -EINVAL;
    char *path = NULL;
    int err = get_path(upath, &path);
    if (err)
        return err;
    struct file *dfp;
    struct vnode *dir = at_dir(dirfd, path, &dfp, &err), *vp;
    int64_t r = err;
    if (dir && !(err = lookupname(path, dir, false, &vp, cr()))) {
        size_t len = MIN((size_t)size, (size_t)PATH_MAX);
        char *kbuf = kmalloc(len);
        if (vp->v_type != VLNK) {
            r = -EINVAL;
        } else if (!kbuf) {
            r = -ENOMEM;
        } else {
            struct uio uio = { .uio_base = kbuf, .uio_resid = len, .uio_offset = 0 };
            r = VOP_READLINK(vp, &uio, cr());
            size_t got = len - uio.uio_resid;
            if (r == 0)
                r = copyout(kbuf, (void *)ubuf, got) ? -EFAULT : (int64_t)got;
        }
        kfree(kbuf);
        VN_RELE(vp);
    } else if (dir) {
        r = err;
    }
    at_done(dfp);
    kfree(path);
    return r;
}

/* bufsiz is an int: a length whose low 32 bits are 0 or negative is EINVAL. */
SYSCALL_DECL(sys_readlink) { return do_readlink(AT_FDCWD, a0, a1, (int)a2); }
SYSCALL_DECL(sys_readlinkat) { return do_readlink((int)a0, a1, a2, (int)a3); }

static int set_cwd(struct vnode *vp)
{
    if (vp->v_type != VDIR)
        return -ENOTDIR;
    int err = VOP_ACCESS(vp, VEXEC, cr());
    if (err)
        return err;
    struct proc *p = curproc();
    VN_HOLD(vp);
    mutex_enter(&p->p_fdlock);          /* /proc reads it under this lock */
    struct vnode *old = p->p_cwd;
    p->p_cwd = vp;
    mutex_exit(&p->p_fdlock);
    if (old)
        VN_RELE(old);
    return 0;
}

static int op_chdir(const char *path, struct vnode *dir, uint64_t unused)
{
    struct vnode *vp;
    int err = lookupname(path, dir, true, &vp, cr());
    if (err)
        return err;
    err = set_cwd(vp);
    VN_RELE(vp);
    return err;
}

SYSCALL_DECL(sys_chdir) { return with_path(AT_FDCWD, a0, op_chdir, 0); }

SYSCALL_DECL(sys_fchdir)
{
    struct file *fp = fd_get_raw(curproc(), (int)a0);      /* O_PATH too, as Linux */
    if (!fp)
        return -EBADF;
    int err = set_cwd(fp->f_vp);
    file_rele(fp);
    return err;
}

/* The name in directory dvp of the entry with inode number ino. */
static int name_in_dir(struct vnode *dvp, uint64_t ino, char *name, size_t max)
{
    char *buf = kmalloc(4096);
    if (!buf)
        return -ENOMEM;
    uint64_t off = 0;
    int err = -ENOENT;
    for (int rounds = 0; rounds < 4096; rounds++) {
        struct uio uio = { .uio_base = buf, .uio_resid = 4096, .uio_offset = off };
        bool eof = false;
        int e = VOP_READDIR(dvp, &uio, cr(), &eof);
        size_t got = 4096 - uio.uio_resid;
        if (e) {
            err = e;
            break;
        }
        for (size_t pos = 0; pos < got;) {
            struct dirent64 *d = (struct dirent64 *)(buf + pos);
            if (d->d_reclen == 0)
                break;
            if (d->d_ino == ino && strcmp(d->d_name, ".") && strcmp(d->d_name, "..")) {
                strlcpy(name, d->d_name, max);
                kfree(buf);
                return 0;
            }
            pos += d->d_reclen;
        }
        if (eof || got == 0)
            break;
        off = uio.uio_offset;
    }
    kfree(buf);
    return err;
}

/* Build the path of directory start by walking "..". */
static int build_path(struct vnode *start, char *out, size_t size)
{
    char *path = kmalloc(PATH_MAX), name[NAME_MAX + 1];
    if (!path)
        return -ENOMEM;
    size_t pos = PATH_MAX - 1;
    path[pos] = 0;
    struct vnode *cur = start;
    VN_HOLD(cur);
    int err = 0;
    struct vnode *top = vfs_curroot();
    for (int depth = 0; cur != rootdir && cur != top && depth < 64; depth++) {
        struct vnode *named = cur;
        if ((cur->v_flag & VROOT) && cur->v_vfsp->vfs_vnodecovered)
            named = cur->v_vfsp->vfs_vnodecovered;
        struct vattr va;
        struct vnode *parent;
        if ((err = VOP_GETATTR(named, &va, cr())) ||
            (err = lookupname("..", cur, false, &parent, cr())))
            break;
        err = name_in_dir(parent, va.va_ino, name, sizeof name);
        VN_RELE(cur);
        cur = parent;
        size_t n = strlen(name);
        if (err || n + 1 > pos) {
            err = err ? err : -ENAMETOOLONG;
            break;
        }
        pos -= n;
        memcpy(path + pos, name, n);
        path[--pos] = '/';
    }
    VN_RELE(cur);
    if (!err && pos == PATH_MAX - 1)
        path[--pos] = '/';
    size_t len = PATH_MAX - 1 - pos;
    if (!err && len + 1 > size)
        err = -ERANGE;
    if (!err)
        memcpy(out, path + pos, len + 1);
    kfree(path);
    return err ? err : (int)(len + 1);
}

int proc_dir_path(struct vnode *dir, char *out, size_t size)
{
    return build_path(dir, out, size);
}

SYSCALL_DECL(sys_getcwd)
{
    char *k = kmalloc(PATH_MAX);
    if (!k)
        return -ENOMEM;
    int r = build_path(cwd(), k, MIN(a1, (uint64_t)PATH_MAX));
    if (r > 0 && copyout(k, (void *)a0, r))
        r = -EFAULT;
    kfree(k);
    return r;
}
