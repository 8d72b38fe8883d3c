/*
 * Sockets: one vnode per socket, the address families behind it.
 *
 * Theory.  A socket is a vnode of type VSOCK with no file system, as a
 * pipe is a VFIFO one (kern/proc/pipe.c), so descriptors, dup, fork,
 * close-on-exec, fstat, /proc/PID/fd and poll treat it as any open file.
 * The vnode operations read, write, poll, ioctl and close go to the
 * socket's address family through struct sockops (kern/net/socket.h);
 * the socket system calls (kern/net/sys_socket.c) call the family
 * directly.  The family keeps its state in so_pcb: AF_UNIX today
 * (kern/net/unix.c) and AF_INET (kern/net/inet/, theory in its
 * inet.c); AF_INET6 is the seam left for the rest of the network
 * stack, a struct sockops registered in sys_socket.c's family table.
 *
 * Lifetime.  A socket has one open file (opening /proc/PID/fd/N of one
 * is ENXIO, as on Linux), so the file's last close is the socket's
 * release: VOP_CLOSE calls the family's release, which disconnects it
 * and drops what is queued.  The vnode's references are the file's and
 * the family's (a peer holds its peer, a queued message its sender);
 * the last VN_RELE frees the socket (VOP_INACTIVE).
 *
 * Locks.  so_lock (class "socket", an SVR4 sleep mutex) guards a
 * socket's state, its queues and its options; it is released while its
 * holder sleeps, so a reader waiting for data does not keep a writer
 * out.  The family documents what else it takes and in which order; no
 * socket lock is held while copying to or from user memory.  The vnode
 * lock, taken around the VOP calls, comes before so_lock.  Waiters sleep
 * on so_rchan (data, connections) and so_wchan (room); every change
 * that makes a socket readable or writable also calls poll_notify (poll,
 * select and epoll: kern/proc/sys_poll.c).
 *
 * Buffer space is counted per sender, as Linux counts sk_wmem_alloc:
 * the bytes of its messages still queued at receivers.  A sender that
 * finds no room waits on its so_wchan for so_wgen to move (a
 * generation checked under the sleep queue's lock, so the receiver's
 * wakeup, done without the sender's lock, is not lost).
 */
#include <kern/net/socket.h>
#include <kern/proc/proc.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/vm/as.h>
#include <kern/vm/kmem.h>
#include <kern/lock/sleep.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <drivers/platform/timer.h>

#define FIONREAD        0x541B
#define SOCK_DEFAULT_BUF 212992     /* Linux's wmem_default and rmem_default */

LOCK_CLASS(socket_lock_class, "socket", LK_MUTEX_SLEEP);

static volatile uint64_t next_socket_ino = 1;
static int64_t sockets_live;                /* [a] /proc/net/sockstat's "used" */
static const struct vnodeops socket_vnodeops;

bool vn_is_socket(const struct vnode *vp)
{
    return vp->v_op == &socket_vnodeops;
}

void socket_hold(struct socket *so) { VN_HOLD(&so->so_vn); }
void socket_rele(struct socket *so) { VN_RELE(&so->so_vn); }

bool socket_tryhold(struct socket *so)
{
    int32_t c = __atomic_load_n(&so->so_vn.v_count, __ATOMIC_ACQUIRE);
    do {
        if (c <= 0)
            return false;
    } while (!__atomic_compare_exchange_n(&so->so_vn.v_count, &c, c + 1, false,
                                          __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
    return true;
}

/* ---- snapshots for /proc/net ---- */

void sockvec_take(struct sockvec *sv, struct socket *so)
{
    if (sv->sv_n < 0)
        return;
    if (sv->sv_n < sv->sv_room) {
        socket_hold(so);
        sv->sv_v[sv->sv_n] = so;
    }
    sv->sv_n++;
}

void sockvec_take_live(struct sockvec *sv, struct socket *so)
{
    if (sv->sv_n < 0)
        return;
    if (sv->sv_n < sv->sv_room) {
        if (!socket_tryhold(so))
            return;
        sv->sv_v[sv->sv_n] = so;
    }
    sv->sv_n++;
}

static void sockvec_drop(struct sockvec *sv)
{
    for (int i = 0; i < MIN(sv->sv_n, sv->sv_room); i++)
        socket_rele(sv->sv_v[i]);
}

bool sockvec_again(struct sockvec *sv)
{
    if (sv->sv_n <= sv->sv_room)
        return false;
    sockvec_drop(sv);
    kfree(sv->sv_v);
    sv->sv_room = sv->sv_n + 8;
    sv->sv_n = 0;
    if (!(sv->sv_v = kmalloc((size_t)sv->sv_room * sizeof *sv->sv_v))) {
        sv->sv_room = 0;
        sv->sv_n = -1;
        return false;
    }
    return true;
}

void sockvec_free(struct sockvec *sv)
{
    if (sv->sv_n > 0)
        sockvec_drop(sv);
    kfree(sv->sv_v);
}


int socket_create(const struct sockops *ops, int type, int protocol, struct socket **sop)
{
    struct socket *so = kzalloc(sizeof *so);
    if (!so)
        return -ENOMEM;
    struct cred *c = curproc() ? curproc()->p_cred : kcred;
    so->so_ops = ops;
    so->so_type = type;
    so->so_protocol = protocol;
    so->so_ino = __atomic_fetch_add(&next_socket_ino, 1, __ATOMIC_RELAXED);
    so->so_uid = c->cr_uid;
    so->so_gid = c->cr_gid;
    so->so_sndbuf = so->so_rcvbuf = SOCK_DEFAULT_BUF;
    so->so_linger = -1;
    mutex_init(&so->so_lock, &socket_lock_class, 0, "socket");
    vn_init(&so->so_vn, &socket_vnodeops, VSOCK, NULL, so);
    so->so_vn.v_flag |= VPOLLNOTIFY;     /* announces its changes (epoll's ready list) */
    int err = ops->attach(so);
    if (err) {
        vn_destroy(&so->so_vn);
        mutex_destroy(&so->so_lock);
        kfree(so);
        return err;
    }
    __atomic_add_fetch(&sockets_live, 1, __ATOMIC_RELAXED);
    *sop = so;
    return 0;
}

int64_t socket_count(void) { return __atomic_load_n(&sockets_live, __ATOMIC_RELAXED); }

uint64_t socket_deadline(uint64_t timeo_ns)
{
    if (timeo_ns == 0)
        return UINT64_MAX;
    uint64_t now = uptime_ns();
    return timeo_ns > UINT64_MAX - now ? UINT64_MAX : now + timeo_ns;
}

int socket_sleep(const void *chan, uint64_t deadline)
{
    if (deadline != UINT64_MAX && uptime_ns() >= deadline)
        return -EAGAIN;
    return deadline == UINT64_MAX ? sig_sleep(chan) : sig_sleep_until(chan, deadline);
}

int socket_wait_readable(struct socket *so, bool nonblock, int (*ready)(struct socket *so),
                         bool *eof)
{
    uint64_t deadline = socket_deadline(so->so_rcvtimeo);
    for (;;) {
        int r = ready(so);
        if (r)
            return r < 0 ? r : 0;
        if (so->so_error) {
            int err = -so->so_error;
            so->so_error = 0;
            return err;
        }
        if (so->so_shut & SO_RCV_SHUT) {
            *eof = true;
            return 0;
        }
        if (nonblock)
            return -EAGAIN;
        int err = socket_sleep(&so->so_rchan, deadline);
        if (err)
            return err;
    }
}

int64_t socket_dgram_out(struct sockxfer *sx, const void *data, size_t len, const void *name,
                         size_t namelen)
{
    size_t n = MIN(sx->sx_resid, len);
    if (sockxfer_out(sx, data, n))
        return -EFAULT;
    if (sx->sx_name) {
        memcpy(sx->sx_name, name, MIN(namelen, sx->sx_namelen));
        sx->sx_nameout = namelen;
    }
    if (len > n)
        sx->sx_oflags |= MSG_TRUNC;
    return (int64_t)((sx->sx_flags & MSG_TRUNC) ? len : n);
}

short socket_poll_shut(const struct socket *so)
{
    short r = 0;
    if (so->so_error)
        r |= POLLERR;
    if (so->so_shut == (SO_RCV_SHUT | SO_SEND_SHUT))
        r |= POLLHUP;
    if (so->so_shut & SO_RCV_SHUT)
        r |= POLLRDHUP | POLLIN | POLLRDNORM;
    return r;
}

void socket_notify(struct socket *so, short events)
{
    wakeup(&so->so_rchan);
    wakeup(&so->so_wchan);
    vn_poll_notify(&so->so_vn, events);
    sigio_post(&so->so_sigio, &so->so_vn, events);
}

int socket_epipe(int flags)
{
    if (!(flags & MSG_NOSIGNAL))
        sigpipe_self();
    return -EPIPE;
}

/* ---- the caller's buffers ---- */

static int xfer_move(struct sockxfer *sx, void *kbuf, size_t n, bool in)
{
    while (n) {
        struct kiovec *v = &sx->sx_iov[sx->sx_idx];
        size_t k = MIN(n, v->len - sx->sx_off);
        void *at = (void *)(v->base + sx->sx_off);
        if (k && sx->sx_user) {
            if (in ? copyin(at, kbuf, k) : copyout(kbuf, at, k))
                return -EFAULT;
        } else if (k) {
            memcpy(in ? kbuf : at, in ? at : kbuf, k);
        }
        kbuf = (char *)kbuf + k;
        n -= k;
        sx->sx_resid -= k;
        sx->sx_off += k;
        if (sx->sx_off == v->len && sx->sx_idx + 1 < sx->sx_iovcnt) {
            sx->sx_idx++;
            sx->sx_off = 0;
        }
    }
    return 0;
}

int sockxfer_in(struct sockxfer *sx, void *dst, size_t n) { return xfer_move(sx, dst, n, true); }

int sockxfer_out(struct sockxfer *sx, const void *src, size_t n)
{
    return xfer_move(sx, (void *)src, n, false);
}

/* ---- the vnode operations ---- */

int64_t socket_rw(struct file *fp, bool write, struct kiovec *iov, int iovcnt)
{
    struct socket *so = vtosock(fp->f_vp);
    size_t total = 0;
    for (int i = 0; i < iovcnt; i++)
        total += iov[i].len;
    struct sockxfer sx = { .sx_iov = iov, .sx_iovcnt = iovcnt, .sx_user = true,
                           .sx_resid = total, .sx_nonblock = fp->f_flags & O_NONBLOCK };
    return write ? so->so_ops->send(so, &sx) : so->so_ops->recv(so, &sx);
}

/* VOP_READ and VOP_WRITE: kernel buffers (sendfile, vn_rdwr). */
static int socket_uio(struct vnode *vp, struct uio *uio, int ioflag, bool write)
{
    struct socket *so = vtosock(vp);
    struct kiovec v = { (uint64_t)uio->uio_base, uio->uio_resid };
    struct sockxfer sx = { .sx_iov = &v, .sx_iovcnt = 1, .sx_user = uio->uio_user,
                           .sx_resid = v.len, .sx_nonblock = ioflag & O_NONBLOCK };
    int64_t r = write ? so->so_ops->send(so, &sx) : so->so_ops->recv(so, &sx);
    if (r < 0)
        return (int)r;
    uio->uio_base = (char *)uio->uio_base + r;
    uio->uio_resid -= (size_t)r;
    return 0;
}

static int socket_read(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    return socket_uio(vp, uio, ioflag, false);
}

static int socket_write(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    return socket_uio(vp, uio, ioflag, true);
}

/* Opened again (through /proc/PID/fd/N): not a socket's way, as Linux. */
static int socket_open(struct vnode **vpp, int flags, struct cred *cr) { return -ENXIO; }

static int socket_close(struct vnode *vp, int flags, struct cred *cr)
{
    struct socket *so = vtosock(vp);
    so->so_ops->release(so);
    return 0;
}

static void socket_inactive(struct vnode *vp, struct cred *cr)
{
    struct socket *so = vtosock(vp);
    so->so_ops->destroy(so);
    vn_destroy(vp);
    mutex_destroy(&so->so_lock);
    kfree(so);
    __atomic_sub_fetch(&sockets_live, 1, __ATOMIC_RELAXED);
}

static short socket_poll(struct vnode *vp, short events, int fflags)
{
    struct socket *so = vtosock(vp);
    return so->so_ops->poll(so, events);
}

static int socket_ioctl(struct vnode *vp, unsigned long cmd, void *arg, struct cred *cr)
{
    struct socket *so = vtosock(vp);
    if (socket_ifreq_cmd((uint32_t)cmd))
        return netif_ioctl((uint32_t)cmd, arg);
    if (cmd != FIONREAD)
        return -ENOTTY;
    *(int *)arg = so->so_ops->nread(so);
    return 0;
}

static int socket_getattr(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    struct socket *so = vtosock(vp);
    memset(va, 0, sizeof *va);
    va->va_type = VSOCK;
    va->va_mode = S_IFSOCK | 0777;
    va->va_uid = so->so_uid;
    va->va_gid = so->so_gid;
    va->va_nlink = 1;
    va->va_ino = so->so_ino;
    va->va_blksize = PAGE_SIZE;
    va->va_fsid = 0x534f434b;       /* "SOCK" */
    return 0;
}

static int socket_access(struct vnode *vp, int mode, struct cred *cr) { return 0; }
static int socket_einval(void) { return -EINVAL; }
static int socket_notdir(void) { return -ENOTDIR; }

static const struct vnodeops socket_vnodeops = {
    .vop_open = socket_open,
    .vop_close = socket_close,
    .vop_read = socket_read,
    .vop_write = socket_write,
    .vop_ioctl = socket_ioctl,
    .vop_getattr = socket_getattr,
    .vop_setattr = (void *)socket_einval,
    .vop_access = socket_access,
    .vop_lookup = (void *)socket_notdir,
    .vop_create = (void *)socket_notdir,
    .vop_remove = (void *)socket_notdir,
    .vop_link = (void *)socket_notdir,
    .vop_rename = (void *)socket_notdir,
    .vop_mkdir = (void *)socket_notdir,
    .vop_rmdir = (void *)socket_notdir,
    .vop_readdir = (void *)socket_notdir,
    .vop_symlink = (void *)socket_notdir,
    .vop_readlink = (void *)socket_notdir,
    .vop_fsync = (void *)socket_einval,
    .vop_truncate = (void *)socket_einval,
    .vop_inactive = socket_inactive,
    .vop_poll = socket_poll,
};

struct socket *file_socket(struct file *fp)
{
    return vn_is_socket(fp->f_vp) ? vtosock(fp->f_vp) : NULL;
}

void net_init(void)
{
    unix_init();
    inet_init();
}
