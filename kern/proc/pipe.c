/*
 * Pipes: a vnode of type VFIFO with no file system, holding a ring
 * buffer.  pipe/pipe2 make one vnode and two open files on it, the read
 * end (O_RDONLY) and the write end (O_WRONLY).  VOP_CLOSE of an end (the
 * last reference to its struct file) lowers the count of readers or
 * writers; the last VN_RELE frees the pipe.
 *
 * A read waits while the pipe is empty and has writers, and returns 0
 * (end of file) once it is empty with no writer left.  A write waits
 * while the pipe is full; with no reader left it fails with -EPIPE and
 * SIGPIPE is sent to the writer (which dies by it unless it is ignored,
 * blocked or handled).
 * O_NONBLOCK makes either -EAGAIN instead of waiting.  poll asks
 * pipe_poll (the vnode's vop_poll), which says the same under pi_lock: readable with data or with
 * no writer left (then hung up), writable with room, an error with no
 * reader left.
 *
 * Locks.  pi_lock (class "pipe", a sleep mutex) guards the buffer and
 * the counts; readers sleep on &pi->pi_rchan and writers on
 * &pi->pi_wchan with sig_sleep under it, and each side wakes the other
 * under it, so no wakeup is lost.  The VOP macros hold the vnode lock
 * around every call; like every SVR4 mutex it is let go while the thread
 * sleeps, so a reader waiting inside VOP_READ does not block the writer's
 * VOP_WRITE.  Each side counts its sleepers under pi_lock (pipe_sleep),
 * so a read or write wakes the other side only when someone waits there
 * (pipe_wake): a ping-pong over a pipe takes a sleep queue's lock twice
 * a transfer, not three times.  A signal interrupts the wait: the call returns -ERESTARTSYS
 * (what was written so far, for a write), which becomes a restart or
 * -EINTR at the return to user mode.
 *
 * Named pipes (FIFOs).  A file system's FIFO node (mknod, mkfifo) is
 * only a name: vn_open hands it to fifo_open (the VFS's FIFO hook), which
 * finds the pipe of that node on the FIFO list or makes one, and opens
 * that instead; the pipe holds the node (pi_named) and leaves the list at
 * its last release.  As POSIX says, an open for reading waits for a
 * writer and one for writing waits for a reader (pi_ropens and pi_wopens
 * count the opens, so a sleeper sees one come and go), unless
 * O_NONBLOCK: then reading opens at once, and writing with no reader is
 * ENXIO.  O_RDWR never waits.  fifo_lock (class "fifo", a sleep mutex)
 * guards the list and comes before pi_lock; a pipe on the list whose
 * count has reached 0 is being freed and is not taken again.
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/lock/sleep.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

#define PIPE_SIZE 16384             /* a new pipe's buffer (F_SETPIPE_SZ changes it) */
#define PIPE_MAX_SIZE 1048576       /* Linux's fs.pipe-max-size: the most a user may ask */
#define O_CLOEXEC 0x80000

LOCK_CLASS(pipe_lock_class, "pipe", LK_MUTEX_SLEEP);

struct pipe {
    struct vnode pi_vn;
    struct mutex pi_lock;
    char *pi_buf;                   /* [pi_lock] pi_size bytes */
    size_t pi_size;                 /* [pi_lock] the buffer's size */
    size_t pi_head, pi_count;       /* [pi_lock] */
    int pi_readers, pi_writers;     /* [pi_lock] open ends */
    int pi_rchan, pi_wchan;         /* wait channels */
    int pi_rsleepers, pi_wsleepers; /* [pi_lock] threads asleep on each */
    uint64_t pi_ino;                /* [c] */
    struct vnode *pi_named;         /* [c] a FIFO's own node (held), or NULL */
    struct pipe *pi_next;           /* [fifo_lock] the FIFO list */
    uint64_t pi_ropens, pi_wopens;  /* [pi_lock] opens so far, for a FIFO's waits */
};

LOCK_CLASS(fifo_lock_class, "fifo", LK_MUTEX_SLEEP);
static struct mutex fifo_lock;
static struct pipe *fifo_list;      /* [fifo_lock] */

static volatile uint64_t next_pipe_ino = 1;
static const struct vnodeops pipe_vnodeops;

static struct pipe *vtopipe(struct vnode *vp) { return vp->v_data; }

/* Opened again through /proc's fd/N: one more reader or writer, which
 * its close takes away (pipe() counts its own two ends). */
static void count_open(struct pipe *pi, int flags)
{
    if ((flags & O_ACCMODE) != O_WRONLY) {
        pi->pi_readers++;
        pi->pi_ropens++;
    }
    if ((flags & O_ACCMODE) != O_RDONLY) {
        pi->pi_writers++;
        pi->pi_wopens++;
    }
    wakeup(&pi->pi_rchan);
    wakeup(&pi->pi_wchan);
}

static int pipe_open(struct vnode **vpp, int flags, struct cred *cr)
{
    struct pipe *pi = vtopipe(*vpp);
    mutex_enter(&pi->pi_lock);
    count_open(pi, flags);
    mutex_exit(&pi->pi_lock);
    return 0;
}

static int pipe_close(struct vnode *vp, int flags, struct cred *cr)
{
    struct pipe *pi = vtopipe(vp);
    mutex_enter(&pi->pi_lock);
    if ((flags & O_ACCMODE) != O_WRONLY)
        pi->pi_readers--;
    if ((flags & O_ACCMODE) != O_RDONLY)
        pi->pi_writers--;
    wakeup(&pi->pi_rchan);
    wakeup(&pi->pi_wchan);
    vn_poll_notify(vp, POLL_BOTHSIDES);     /* poll, select, epoll (kern/proc/sys_poll.c) */
    mutex_exit(&pi->pi_lock);
    return 0;
}

/* Sleep (pi_lock held) on the readers' or the writers' channel,
 * counted so that pipe_wake can skip an empty channel. */
static int pipe_sleep(struct pipe *pi, bool reader)
{
    int *sleepers = reader ? &pi->pi_rsleepers : &pi->pi_wsleepers;
    (*sleepers)++;
    int err = sig_sleep(reader ? &pi->pi_rchan : &pi->pi_wchan);
    (*sleepers)--;
    return err;
}

/* Wake the readers or the writers (pi_lock held), if any sleep. */
static void pipe_wake(struct pipe *pi, bool readers)
{
    if (readers ? pi->pi_rsleepers : pi->pi_wsleepers)
        wakeup(readers ? &pi->pi_rchan : &pi->pi_wchan);
}

static void uio_move(struct uio *uio, size_t n)
{
    uio->uio_base = (char *)uio->uio_base + n;
    uio->uio_resid -= n;
    uio->uio_offset += n;
}

static int pipe_read(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    struct pipe *pi = vtopipe(vp);
    mutex_enter(&pi->pi_lock);
    while (pi->pi_count == 0 && pi->pi_writers > 0) {
        if (ioflag & O_NONBLOCK) {
            mutex_exit(&pi->pi_lock);
            return -EAGAIN;
        }
        int err = pipe_sleep(pi, true);
        if (err) {
            mutex_exit(&pi->pi_lock);
            return err;
        }
    }
    while (uio->uio_resid && pi->pi_count) {
        size_t n = MIN(uio->uio_resid, MIN(pi->pi_count, pi->pi_size - pi->pi_head));
        memcpy(uio->uio_base, pi->pi_buf + pi->pi_head, n);
        pi->pi_head = (pi->pi_head + n) % pi->pi_size;
        pi->pi_count -= n;
        uio_move(uio, n);
    }
    pipe_wake(pi, false);
    vn_poll_notify(vp, POLL_WRITESIDE);    /* room */
    mutex_exit(&pi->pi_lock);
    return 0;
}

void sigpipe_self(void)
{
    struct proc *p = curproc();
    struct ksiginfo si = { .si_signo = SIGPIPE, .si_code = SI_USER, .si_pid = p->p_pid,
                           .si_uid = (int)p->p_cred->cr_ruid };
    sig_post(p, SIGPIPE, &si);
}

static int pipe_write(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    struct pipe *pi = vtopipe(vp);
    size_t start = uio->uio_resid;
    mutex_enter(&pi->pi_lock);
    while (uio->uio_resid) {
        if (pi->pi_readers == 0) {
            mutex_exit(&pi->pi_lock);
            sigpipe_self();
            return uio->uio_resid < start ? 0 : -EPIPE;
        }
        if (pi->pi_count == pi->pi_size) {
            if (ioflag & O_NONBLOCK) {
                mutex_exit(&pi->pi_lock);
                return uio->uio_resid < start ? 0 : -EAGAIN;
            }
            int err = pipe_sleep(pi, false);
            if (err) {
                mutex_exit(&pi->pi_lock);
                return uio->uio_resid < start ? 0 : err;
            }
            continue;
        }
        size_t tail = (pi->pi_head + pi->pi_count) % pi->pi_size;
        size_t n = MIN(uio->uio_resid, MIN(pi->pi_size - pi->pi_count, pi->pi_size - tail));
        memcpy(pi->pi_buf + tail, uio->uio_base, n);
        pi->pi_count += n;
        uio_move(uio, n);
        pipe_wake(pi, true);
        vn_poll_notify(vp, POLL_READSIDE);     /* data */
    }
    mutex_exit(&pi->pi_lock);
    return 0;
}

/* Readable with data or with no writer left (then also hung up);
 * writable with room, and an error for a writing end with no reader
 * left (both at once, as Linux's pipe_poll). */
static short pipe_poll(struct vnode *vp, short events, int fflags)
{
    struct pipe *pi = vtopipe(vp);
    bool rd = (fflags & O_ACCMODE) != O_WRONLY, wr = (fflags & O_ACCMODE) != O_RDONLY;
    short r = 0;
    mutex_enter(&pi->pi_lock);
    if (rd && pi->pi_count > 0)
        r |= POLLIN | POLLRDNORM;
    if (rd && pi->pi_writers == 0)
        r |= POLLHUP;
    if (wr && pi->pi_readers == 0)
        r |= POLLERR;
    if (wr && pi->pi_count < pi->pi_size)
        r |= POLLOUT | POLLWRNORM;      /* with POLLERR too, as Linux's pipe_poll */
    mutex_exit(&pi->pi_lock);
    return (short)(r & (events | POLLHUP | POLLERR));
}

static int pipe_getattr(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    struct pipe *pi = vtopipe(vp);
    if (pi->pi_named)               /* a FIFO: its node's attributes */
        return VOP_GETATTR(pi->pi_named, va, cr);
    memset(va, 0, sizeof *va);
    va->va_type = VFIFO;
    va->va_mode = S_IFIFO | 0600;
    va->va_uid = cr->cr_uid;
    va->va_gid = cr->cr_gid;
    va->va_nlink = 1;
    va->va_ino = pi->pi_ino;
    va->va_size = pi->pi_count;
    va->va_blksize = PAGE_SIZE;
    va->va_fsid = 0x50495045;       /* "PIPE" */
    return 0;
}

static int pipe_access(struct vnode *vp, int mode, struct cred *cr) { return 0; }
static int pipe_ioctl(struct vnode *vp, unsigned long cmd, void *arg, struct cred *cr) { return -ENOTTY; }
static int pipe_fsync(struct vnode *vp, struct cred *cr) { return -EINVAL; }
static int pipe_setattr(struct vnode *vp, const struct vattr *va, struct cred *cr) { return -EINVAL; }
static int pipe_truncate(struct vnode *vp, uint64_t size, struct cred *cr) { return -EINVAL; }
static int pipe_notdir(void) { return -ENOTDIR; }

static void pipe_inactive(struct vnode *vp, struct cred *cr)
{
    struct pipe *pi = vtopipe(vp);
    if (pi->pi_named) {
        mutex_enter(&fifo_lock);
        for (struct pipe **pp = &fifo_list; *pp; pp = &(*pp)->pi_next)
            if (*pp == pi) {
                *pp = pi->pi_next;
                break;
            }
        mutex_exit(&fifo_lock);
        VN_RELE(pi->pi_named);
    }
    vn_destroy(vp);
    mutex_destroy(&pi->pi_lock);
    kfree(pi->pi_buf);
    kfree(pi);
}

static const struct vnodeops pipe_vnodeops = {
    .vop_open = pipe_open,
    .vop_close = pipe_close,
    .vop_read = pipe_read,
    .vop_write = pipe_write,
    .vop_ioctl = pipe_ioctl,
    .vop_getattr = pipe_getattr,
    .vop_setattr = pipe_setattr,
    .vop_access = pipe_access,
    .vop_lookup = (void *)pipe_notdir,
    .vop_create = (void *)pipe_notdir,
    .vop_remove = (void *)pipe_notdir,
    .vop_link = (void *)pipe_notdir,
    .vop_rename = (void *)pipe_notdir,
    .vop_mkdir = (void *)pipe_notdir,
    .vop_rmdir = (void *)pipe_notdir,
    .vop_readdir = (void *)pipe_notdir,
    .vop_symlink = (void *)pipe_notdir,
    .vop_readlink = (void *)pipe_notdir,
    .vop_fsync = pipe_fsync,
    .vop_truncate = pipe_truncate,
    .vop_inactive = pipe_inactive,
    .vop_poll = pipe_poll,
};

/* A new pipe with no ends open, one reference; NULL for no memory. */
static struct pipe *pipe_alloc(void)
{
    struct pipe *pi = kzalloc(sizeof *pi);
    char *buf = kmalloc(PIPE_SIZE);
    if (!pi || !buf) {
        kfree(pi);
        kfree(buf);
        return NULL;
    }
    pi->pi_buf = buf;
    pi->pi_size = PIPE_SIZE;
    pi->pi_ino = __atomic_fetch_add(&next_pipe_ino, 1, __ATOMIC_RELAXED);
    mutex_init(&pi->pi_lock, &pipe_lock_class, 0, "pipe");
    vn_init(&pi->pi_vn, &pipe_vnodeops, VFIFO, NULL, pi);
    pi->pi_vn.v_flag |= VPOLLNOTIFY;     /* announces its changes (epoll's ready list) */
    return pi;
}

/* ---- the buffer's size (F_GETPIPE_SZ, F_SETPIPE_SZ) ---- */

/* Linux's round_pipe_size: at least a page, a power of two. */
static size_t round_size(uint64_t want)
{
    size_t n = PAGE_SIZE;
    while (n < want)
        n <<= 1;
    return n;
}

/* Move the ring's bytes to a new buffer of size bytes (pi_lock held). */
static int resize_locked(struct pipe *pi, size_t size)
{
    char *buf = kmalloc(size);
    if (!buf)
        return -ENOMEM;
    for (size_t i = 0; i < pi->pi_count; i++)
        buf[i] = pi->pi_buf[(pi->pi_head + i) % pi->pi_size];
    kfree(pi->pi_buf);
    pi->pi_buf = buf;
    pi->pi_head = 0;
    pi->pi_size = size;
    return 0;
}

int64_t pipe_size_fcntl(struct vnode *vp, bool set, uint64_t want, struct cred *cr)
{
    if (vp->v_op != &pipe_vnodeops)
        return -EBADF;
    struct pipe *pi = vtopipe(vp);
    if (set && (want > PIPE_MAX_SIZE * 1024UL || (want > PIPE_MAX_SIZE && cr->cr_uid != 0)))
        return want > PIPE_MAX_SIZE * 1024UL ? -EINVAL : -EPERM;
    mutex_enter(&pi->pi_lock);
    int64_t r = (int64_t)pi->pi_size;
    if (set) {
        size_t size = round_size(want);
        r = pi->pi_count > size ? -EBUSY : size == pi->pi_size ? (int64_t)size
          : resize_locked(pi, size) ?: (int64_t)size;
        wakeup(&pi->pi_wchan);
        vn_poll_notify(vp, POLL_WRITESIDE);
    }
    mutex_exit(&pi->pi_lock);
    return r;
}

/* ---- splice and tee (kern/proc/sys_splice.c) ---- */

bool vn_is_pipe(const struct vnode *vp)
{
    return vp->v_op == &pipe_vnodeops;
}

/* Wait until pipe vp has room: the free bytes, -EAGAIN (nonblock, full),
 * -EPIPE with SIGPIPE sent (no reader), or a signal's -ERESTARTSYS. */
int64_t pipe_wait_room(struct vnode *vp, bool nonblock)
{
    struct pipe *pi = vtopipe(vp);
    int64_t r;
    mutex_enter(&pi->pi_lock);
    for (;;) {
        if (pi->pi_readers == 0) {
            r = -EPIPE;
            break;
        }
        if (pi->pi_count < pi->pi_size) {
            r = (int64_t)(pi->pi_size - pi->pi_count);
            break;
        }
        r = nonblock ? -EAGAIN : pipe_sleep(pi, false);
        if (r)
            break;
    }
    mutex_exit(&pi->pi_lock);
    if (r == -EPIPE)
        sigpipe_self();
    return r;
}

/* tee's read: copy up to n bytes from the front of pipe vp without
 * consuming them, waiting for data as a read does.  Bytes copied, 0 at
 * the end (empty, no writer), -EAGAIN, or -ERESTARTSYS. */
int64_t pipe_peek(struct vnode *vp, char *buf, size_t n, bool nonblock)
{
    struct pipe *pi = vtopipe(vp);
    int64_t r = 0;
    mutex_enter(&pi->pi_lock);
    while (pi->pi_count == 0 && pi->pi_writers > 0) {
        r = nonblock ? -EAGAIN : pipe_sleep(pi, true);
        if (r)
            break;
    }
    if (r == 0) {
        size_t take = MIN(n, pi->pi_count);
        size_t first = MIN(take, pi->pi_size - pi->pi_head);
        memcpy(buf, pi->pi_buf + pi->pi_head, first);
        memcpy(buf + first, pi->pi_buf, take - first);
        r = (int64_t)take;
    }
    mutex_exit(&pi->pi_lock);
    return r;
}

/* ---- named pipes (the theory is at the top) ---- */

/* The pipe of FIFO node vp, held, made if there is none; NULL for no
 * memory. */
static struct pipe *fifo_pipe(struct vnode *vp)
{
    mutex_enter(&fifo_lock);
    struct pipe *pi;
    for (pi = fifo_list; pi; pi = pi->pi_next) {
        int32_t c = __atomic_load_n(&pi->pi_vn.v_count, __ATOMIC_ACQUIRE);
        while (pi->pi_named == vp && c > 0 &&
               !__atomic_compare_exchange_n(&pi->pi_vn.v_count, &c, c + 1, false,
                                            __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            ;
        if (pi->pi_named == vp && c > 0)
            break;                  /* held; one whose count reached 0 is on its way out */
    }
    if (!pi && (pi = pipe_alloc())) {
        VN_HOLD(vp);
        pi->pi_named = vp;
        pi->pi_next = fifo_list;
        fifo_list = pi;
    }
    mutex_exit(&fifo_lock);
    return pi;
}

/* Wait (pi_lock held) until the other side has opened since, or is open. */
static int fifo_wait(struct pipe *pi, bool reader)
{
    uint64_t seen = reader ? pi->pi_wopens : pi->pi_ropens;
    for (;;) {
        int others = reader ? pi->pi_writers : pi->pi_readers;
        uint64_t opens = reader ? pi->pi_wopens : pi->pi_ropens;
        if (others > 0 || opens != seen)
            return 0;
        int err = pipe_sleep(pi, reader);
        if (err)
            return err;
    }
}

/* vn_open's FIFO hook: *vpp, a FIFO node (held), becomes its pipe. */
static int fifo_open(struct vnode **vpp, int flags)
{
    struct pipe *pi = fifo_pipe(*vpp);
    if (!pi)
        return -ENOMEM;
    int acc = flags & O_ACCMODE, err = 0;
    mutex_enter(&pi->pi_lock);
    if (acc == O_WRONLY && (flags & O_NONBLOCK) && pi->pi_readers == 0)
        err = -ENXIO;
    if (!err)
        count_open(pi, flags);
    if (!err && acc != O_RDWR && !(flags & O_NONBLOCK))
        err = fifo_wait(pi, acc == O_RDONLY);
    if (err && err != -ENXIO) {
        /* interrupted: this open never happened */
        if (acc != O_WRONLY)
            pi->pi_readers--;
        if (acc != O_RDONLY)
            pi->pi_writers--;
        wakeup(&pi->pi_rchan);
        wakeup(&pi->pi_wchan);
    }
    mutex_exit(&pi->pi_lock);
    if (err) {
        VN_RELE(&pi->pi_vn);
        return err;
    }
    VN_RELE(*vpp);
    *vpp = &pi->pi_vn;
    return 0;
}

void fifo_init(void)
{
    mutex_init(&fifo_lock, &fifo_lock_class, 0, "fifo");
    vfs_set_fifo_open(fifo_open);
}

static int64_t do_pipe(uint64_t ufds, int flags)
{
    if (flags & ~(O_CLOEXEC | O_NONBLOCK))
        return -EINVAL;
    struct proc *p = curproc();
    struct pipe *pi = pipe_alloc();
    if (!pi)
        return -ENOMEM;
    pi->pi_readers = pi->pi_writers = 1;
    VN_HOLD(&pi->pi_vn);                        /* one reference per end */
    int extra = flags & O_NONBLOCK;
    struct file *rf = file_alloc(&pi->pi_vn, O_RDONLY | extra);
    struct file *wf = rf ? file_alloc(&pi->pi_vn, O_WRONLY | extra) : NULL;
    if (!wf) {
        if (rf)
            file_rele(rf);          /* closes the read end, drops its reference */
        else
            vn_close(&pi->pi_vn, O_RDONLY, p->p_cred);
        vn_close(&pi->pi_vn, O_WRONLY, p->p_cred);
        return -ENOMEM;
    }
    int fdflags = (flags & O_CLOEXEC) ? FD_CLOEXEC : 0;
    int fds[2];
    fds[0] = fd_install(p, rf, 0, fdflags);
    fds[1] = fds[0] < 0 ? -EMFILE : fd_install(p, wf, 0, fdflags);
    if (fds[1] < 0) {
        if (fds[0] >= 0)
            fd_close(p, fds[0]);
        else
            file_rele(rf);
        file_rele(wf);
        return -EMFILE;
    }
    if (copyout(fds, (void *)ufds, sizeof fds)) {
        fd_close(p, fds[0]);
        fd_close(p, fds[1]);
        return -EFAULT;
    }
    return 0;
}

SYSCALL_DECL(sys_pipe) { return do_pipe(a0, 0); }
SYSCALL_DECL(sys_pipe2) { return do_pipe(a0, (int)a1); }
