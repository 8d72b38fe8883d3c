/*
 * The socket system calls: socket, socketpair, bind, listen, accept,
 * accept4, connect, the send and receive families (sendto, recvfrom,
 * sendmsg, recvmsg, sendmmsg, recvmmsg), shutdown, getsockname,
 * getpeername, setsockopt and getsockopt.
 *
 * Theory.  Each call checks what Linux's net/socket.c checks, in its
 * order (the descriptor, then ENOTSOCK, then the lengths), copies the
 * caller's address, message header and control messages into kernel
 * memory, and calls the socket's family (struct sockops,
 * kern/net/socket.h); the data moves between the caller's buffers and
 * the family's queues through struct sockxfer, never under a socket
 * lock.  The options every family shares (SO_TYPE, SO_ERROR, the buffer
 * sizes, the timeouts, SO_PASSCRED ...) are kept here; the family
 * answers its own (SO_PEERCRED).
 *
 * The families: AF_UNIX (kern/net/unix.c) and AF_INET (kern/net/inet/).
 * AF_INET6 answers EAFNOSUPPORT until the network stack registers its
 * sockops in family_ops, the seam it plugs into.
 *
 * Locks: none of its own.
 */
#include <kern/net/socket.h>
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vfs/vfs.h>
#include <kern/vm/as.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <drivers/platform/timer.h>

#define AF_NETLINK      16
#define NPROTO          46          /* Linux's AF_MAX: a family past it is EAFNOSUPPORT */
#define SOCK_MAX        11          /* types at or past it are EINVAL */
#define IOV_MAX         1024
#define ADDR_MAX        128         /* struct sockaddr_storage */
#define OPTMEM_MAX      20480       /* Linux's net.core.optmem_max: control messages */
#define BUF_MAX         212992      /* Linux's wmem_max and rmem_max */
#define SOCK_MIN_SNDBUF 4608
#define SOCK_MIN_RCVBUF 2304
#define NSEC            1000000000UL

/* SOL_SOCKET options */
#define SO_DEBUG        1
#define SO_REUSEADDR    2
#define SO_TYPE         3
#define SO_ERROR        4
#define SO_DONTROUTE    5
#define SO_BROADCAST    6
#define SO_SNDBUF       7
#define SO_RCVBUF       8
#define SO_OOBINLINE    10
#define SO_PRIORITY     12
#define SO_LINGER       13
#define SO_REUSEPORT    15
#define SO_PASSCRED     16
#define SO_RCVLOWAT     18
#define SO_SNDLOWAT     19
#define SO_RCVTIMEO_OLD 20
#define SO_SNDTIMEO_OLD 21
#define SO_ACCEPTCONN   30
#define SO_SNDBUFFORCE  32
#define SO_RCVBUFFORCE  33
#define SO_PROTOCOL     38
#define SO_DOMAIN       39
#define SO_RCVTIMEO_NEW 66
#define SO_SNDTIMEO_NEW 67

/* Could [base, base + len) be user memory (Linux's access_ok)? */
static bool user_buffer(uint64_t base, size_t len)
{
    return len <= USER_TOP && base <= USER_TOP - len;
}

static const struct sockops *family_ops(int family)
{
    if (family == AF_UNIX)
        return &unix_sockops;
    if (family == AF_NETLINK)
        return &netlink_sockops;
    return family == AF_INET ? &inet_sockops : NULL;
}

/* The socket behind descriptor fd, with its file held: 0, -EBADF or
 * -ENOTSOCK. */
static int sock_get(int fd, struct file **fpp, struct socket **sop)
{
    struct file *fp = fd_get(curproc(), fd);
    if (!fp)
        return -EBADF;
    if (!vn_is_socket(fp->f_vp)) {
        file_rele(fp);
        return -ENOTSOCK;
    }
    *fpp = fp;
    *sop = vtosock(fp->f_vp);
    return 0;
}

/* The common frame of the calls on one socket: fn(fp, so, a, b, c) with
 * the descriptor's file held, or sock_get's error. */
typedef int64_t (*sock_fn)(struct file *fp, struct socket *so, uint64_t a, uint64_t b, uint64_t c);

static int64_t on_socket(int fd, sock_fn fn, uint64_t a, uint64_t b, uint64_t c)
{
    struct file *fp;
    struct socket *so;
    int err = sock_get(fd, &fp, &so);
    if (err)
        return err;
    int64_t r = fn(fp, so, a, b, c);
    file_rele(fp);
    return r;
}

/* A new open file and descriptor for so (whose reference passes to it). */
static int sock_install(struct socket *so, int flags)
{
    struct file *fp = file_alloc(&so->so_vn, O_RDWR | (flags & SOCK_NONBLOCK));
    if (!fp) {
        so->so_ops->release(so);
        socket_rele(so);
        return -ENOMEM;
    }
    so->so_file = fp;
    int fd = fd_install(curproc(), fp, 0, (flags & SOCK_CLOEXEC) ? FD_CLOEXEC : 0);
    if (fd < 0)
        file_rele(fp);
    return fd;
}

static int sock_new(int family, int type, int protocol, struct socket **sop)
{
    if (family < 0 || family >= NPROTO)
        return -EAFNOSUPPORT;
    int kind = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (kind < 0 || kind >= SOCK_MAX)
        return -EINVAL;
    const struct sockops *ops = family_ops(family);
    if (!ops)
        return -EAFNOSUPPORT;
    int proto = ops->protocol(&kind, protocol);
    return proto < 0 ? proto : socket_create(ops, kind, proto, sop);
}

SYSCALL_DECL(sys_socket)
{
    int type = (int)a1;
    struct socket *so;
    if (type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC | 0xf))
        return -EINVAL;
    int err = sock_new((int)a0, type, (int)a2, &so);
    return err ? err : sock_install(so, type);
}

SYSCALL_DECL(sys_socketpair)
{
    int type = (int)a1;
    struct socket *a, *b;
    if (type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC | 0xf))
        return -EINVAL;
    int err = sock_new((int)a0, type, (int)a2, &a);
    if (err)
        return err;
    if ((err = socket_create(a->so_ops, a->so_type, a->so_protocol, &b))) {
        a->so_ops->release(a);
        socket_rele(a);
        return err;
    }
    if ((err = a->so_ops->connect2(a, b))) {
        a->so_ops->release(a);
        socket_rele(a);
        b->so_ops->release(b);
        socket_rele(b);
        return err;
    }
    int fds[2] = { sock_install(a, type), sock_install(b, type) };
    if (fds[0] < 0 || fds[1] < 0 || copyout(fds, (void *)a3, sizeof fds)) {
        err = fds[0] < 0 ? fds[0] : fds[1] < 0 ? fds[1] : -EFAULT;
        for (int i = 0; i < 2; i++)
            if (fds[i] >= 0)
                fd_close(curproc(), fds[i]);
        return err;
    }
    return 0;
}

/* ---- addresses ---- */

static int addr_in(uint64_t uaddr, int64_t len, char *addr)
{
    if (len < 0 || len > ADDR_MAX)
        return -EINVAL;
    if (len && copyin((void *)uaddr, addr, (size_t)len))
        return -EFAULT;
    return 0;
}

/* Linux's move_addr_to_user: the address cut to the caller's room, and
 * its true length back. */
static int addr_out(const char *addr, size_t len, uint64_t uaddr, uint64_t ulenp)
{
    int room;
    if (!ulenp)
        return 0;
    if (copyin((void *)ulenp, &room, sizeof room))
        return -EFAULT;
    if (room < 0)
        return -EINVAL;
    size_t n = MIN((size_t)room, len);
    if (n && copyout(addr, (void *)uaddr, n))
        return -EFAULT;
    int l = (int)len;
    return copyout(&l, (void *)ulenp, sizeof l) ? -EFAULT : 0;
}

/* bind and connect: the address copied in, then the family's call. */
static int64_t bind_or_connect(struct file *fp, struct socket *so, uint64_t uaddr, uint64_t len,
                               uint64_t connect)
{
    char addr[ADDR_MAX];
    int err = addr_in(uaddr, (int)len, addr);
    if (err)
        return err;
    if (connect)
        return so->so_ops->connect(so, addr, (size_t)(int)len, fp->f_flags & O_NONBLOCK);
    return so->so_ops->bind(so, addr, (size_t)(int)len);
}

static int64_t do_listen(struct file *fp, struct socket *so, uint64_t backlog, uint64_t b,
                         uint64_t c)
{
    return so->so_ops->listen(so, (int)backlog);
}

SYSCALL_DECL(sys_bind) { return on_socket((int)a0, bind_or_connect, a1, a2, 0); }
SYSCALL_DECL(sys_connect) { return on_socket((int)a0, bind_or_connect, a1, a2, 1); }
SYSCALL_DECL(sys_listen) { return on_socket((int)a0, do_listen, a1, 0, 0); }

static int64_t do_accept(int fd, uint64_t uaddr, uint64_t ulenp, int flags)
{
    if (flags & ~(SOCK_CLOEXEC | SOCK_NONBLOCK))
        return -EINVAL;
    struct file *fp;
    struct socket *so, *n = NULL;
    int err = sock_get(fd, &fp, &so);
    if (err)
        return err;
    err = so->so_ops->accept(so, fp->f_flags & O_NONBLOCK, &n);
    file_rele(fp);
    if (err)
        return err;
    char addr[ADDR_MAX];
    size_t len = 0;
    if (ulenp && (err = n->so_ops->getname(n, addr, &len, true)))
        len = 0;
    int newfd = sock_install(n, flags);
    if (newfd >= 0 && ulenp && (err = addr_out(addr, len, uaddr, ulenp))) {
        fd_close(curproc(), newfd);
        return err;
    }
    return newfd;
}

SYSCALL_DECL(sys_accept) { return do_accept((int)a0, a1, a2, 0); }
SYSCALL_DECL(sys_accept4) { return do_accept((int)a0, a1, a2, (int)a3); }

static int64_t do_getname(struct file *fp, struct socket *so, uint64_t uaddr, uint64_t ulenp,
                          uint64_t peer)
{
    char addr[ADDR_MAX];
    size_t len = 0;
    int err = so->so_ops->getname(so, addr, &len, peer);
    return err ? err : addr_out(addr, len, uaddr, ulenp);
}

static int64_t do_shutdown(struct file *fp, struct socket *so, uint64_t how, uint64_t b,
                           uint64_t c)
{
    return so->so_ops->shutdown(so, (int)how);
}

SYSCALL_DECL(sys_getsockname) { return on_socket((int)a0, do_getname, a1, a2, false); }
SYSCALL_DECL(sys_getpeername) { return on_socket((int)a0, do_getname, a1, a2, true); }
SYSCALL_DECL(sys_shutdown) { return on_socket((int)a0, do_shutdown, a1, 0, 0); }

/* ---- sending and receiving ---- */

struct msghdr_u {
    uint64_t name;
    uint32_t namelen, pad0;
    uint64_t iov;
    uint64_t iovlen;
    uint64_t control;
    uint64_t controllen;
    int32_t flags, pad1;
};

struct mmsghdr_u {
    struct msghdr_u hdr;
    uint32_t len, pad;
};

/* A message's buffers and side data in kernel memory (msg_in), freed by
 * msg_done. */
struct kmsg {
    struct kiovec *iov;
    char name[ADDR_MAX];
    void *control;
    struct sockxfer sx;
};

static void msg_done(struct kmsg *k)
{
    kfree(k->iov);
    kfree(k->control);
}

static int iov_in(uint64_t uiov, uint64_t cnt, struct kmsg *k)
{
    if (cnt > IOV_MAX)
        return -EMSGSIZE;
    k->iov = kmalloc(cnt ? cnt * sizeof *k->iov : 1);
    if (!k->iov)
        return -ENOMEM;
    if (cnt && copyin((void *)uiov, k->iov, cnt * sizeof *k->iov))
        return -EFAULT;
    size_t total = 0;
    for (uint64_t i = 0; i < cnt; i++) {
        if ((int64_t)k->iov[i].len < 0)
            return -EINVAL;
        if (k->iov[i].len > USER_TOP || k->iov[i].base > USER_TOP - k->iov[i].len)
            return -EFAULT;
        k->iov[i].len = MIN(k->iov[i].len, (size_t)INT32_MAX - total);   /* Linux's MAX_RW_COUNT */
        total += k->iov[i].len;
    }
    k->sx.sx_iov = k->iov;
    k->sx.sx_iovcnt = (int)cnt;
    k->sx.sx_user = true;
    k->sx.sx_resid = total;
    return 0;
}

/* A user message header into k: its buffers, its name (a send's
 * destination, or a receive's room) and its control messages (copied in
 * for a send, room for a receive). */
static int msg_in(const struct msghdr_u *h, bool send, struct kmsg *k)
{
    memset(k, 0, sizeof *k);
    int err = iov_in(h->iov, h->iovlen, k);
    if (err)
        return err;
    /* Linux's copy_msghdr_from_user cuts a long name to sockaddr_storage. */
    size_t nl = MIN((size_t)h->namelen, (size_t)ADDR_MAX);
    if (h->name && (nl > 0 || !send)) {
        k->sx.sx_name = k->name;
        k->sx.sx_namelen = nl;
        if (send && copyin((void *)h->name, k->name, nl))
            return -EFAULT;
    }
    size_t clen = h->control ? h->controllen : 0;
    if (clen > INT32_MAX || (send && clen > OPTMEM_MAX))
        return -ENOBUFS;
    clen = MIN(clen, (size_t)OPTMEM_MAX);
    if (clen) {
        if (!(k->control = kmalloc(clen)))
            return -ENOMEM;
        if (send && copyin((void *)h->control, k->control, clen))
            return -EFAULT;
        k->sx.sx_control = k->control;
        k->sx.sx_controllen = clen;
    }
    return 0;
}

static int64_t sock_send(struct file *fp, struct socket *so, struct kmsg *k, int flags)
{
    k->sx.sx_flags = flags;
    k->sx.sx_nonblock = (fp->f_flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
    return so->so_ops->send(so, &k->sx);
}

static int64_t sock_recv(struct file *fp, struct socket *so, struct kmsg *k, int flags)
{
    k->sx.sx_flags = flags;
    k->sx.sx_fdflags = (flags & MSG_CMSG_CLOEXEC) ? FD_CLOEXEC : 0;
    k->sx.sx_nonblock = (fp->f_flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
    return so->so_ops->recv(so, &k->sx);
}

/* After a receive: the name, the control messages, their lengths and
 * the flags back into the user's header at uh. */
static int msg_out(struct kmsg *k, const struct msghdr_u *h, uint64_t uh)
{
    struct sockxfer *sx = &k->sx;
    struct msghdr_u o = *h;
    size_t nl = sx->sx_name ? sx->sx_nameout : 0;
    if (nl && copyout(k->name, (void *)h->name, MIN(nl, (size_t)h->namelen)))
        return -EFAULT;
    o.namelen = (uint32_t)nl;
    if (sx->sx_controlout && copyout(k->control, (void *)h->control, sx->sx_controlout))
        return -EFAULT;
    o.controllen = sx->sx_controlout;
    o.flags = sx->sx_oflags;
    return copyout(&o, (void *)uh, sizeof o) ? -EFAULT : 0;
}

/* sendto's and recvfrom's one buffer as the message's. */
static struct kmsg *one_buffer(struct kmsg *k, struct kiovec *v)
{
    k->sx.sx_iov = v;
    k->sx.sx_iovcnt = 1;
    k->sx.sx_resid = v->len;
    return k;
}

SYSCALL_DECL(sys_sendto)
{
    struct file *fp;
    struct socket *so;
    int err = sock_get((int)a0, &fp, &so);
    if (err)
        return err;
    struct msghdr_u h = { .name = a4, .namelen = (uint32_t)a5 };
    struct kiovec v = { a1, MIN(a2, (uint64_t)INT32_MAX) };
    struct kmsg k = { 0 };
    int64_t r = a4 && ((int)a5 < 0 || (int)a5 > ADDR_MAX) ? -EINVAL : msg_in(&h, true, &k);
    if (!r && !user_buffer(v.base, v.len))
        r = -EFAULT;
    if (!r)
        r = sock_send(fp, so, one_buffer(&k, &v), (int)a3);
    msg_done(&k);
    file_rele(fp);
    return r;
}

SYSCALL_DECL(sys_recvfrom)
{
    struct file *fp;
    struct socket *so;
    int err = sock_get((int)a0, &fp, &so);
    if (err)
        return err;
    struct msghdr_u h = { .name = a4, .namelen = ADDR_MAX };
    struct kiovec v = { a1, MIN(a2, (uint64_t)INT32_MAX) };
    struct kmsg k = { 0 };
    int64_t r = msg_in(&h, false, &k);
    if (!r && !user_buffer(v.base, v.len))
        r = -EFAULT;
    if (!r)
        r = sock_recv(fp, so, one_buffer(&k, &v), (int)a3);
    if (r >= 0 && a4) {
        int e = addr_out(k.name, k.sx.sx_name ? k.sx.sx_nameout : 0, a4, a5);
        r = e ? e : r;
    }
    msg_done(&k);
    file_rele(fp);
    return r;
}

/* sendmsg (send) and recvmsg: the user's header at uh in, the message
 * moved, and for a receive the name, control and flags back out. */
static int64_t do_msg(struct file *fp, struct socket *so, uint64_t uh, uint64_t flags,
                      uint64_t send)
{
    struct msghdr_u h;
    if (copyin((void *)uh, &h, sizeof h))
        return -EFAULT;
    struct kmsg k;
    int64_t r = msg_in(&h, send, &k);
    if (!r)
        r = send ? sock_send(fp, so, &k, (int)flags) : sock_recv(fp, so, &k, (int)flags);
    if (!send && r >= 0) {
        int e = msg_out(&k, &h, uh);
        r = e ? e : r;
    }
    msg_done(&k);
    return r;
}

SYSCALL_DECL(sys_sendmsg) { return on_socket((int)a0, do_msg, a1, (int)a2, true); }
SYSCALL_DECL(sys_recvmsg) { return on_socket((int)a0, do_msg, a1, (int)a2, false); }

/* sendmmsg and recvmmsg: each message's byte count into its msg_len;
 * the number done, or the first message's error. */
static int64_t do_mmsg(int fd, uint64_t uvec, unsigned vlen, int flags, bool send,
                       uint64_t deadline)
{
    struct file *fp;
    struct socket *so;
    int err = sock_get(fd, &fp, &so);
    if (err)
        return err;
    vlen = MIN(vlen, (unsigned)IOV_MAX);
    unsigned done = 0;
    int64_t r = 0;
    for (; done < vlen; done++) {
        uint64_t uh = uvec + done * sizeof(struct mmsghdr_u);
        r = do_msg(fp, so, uh, (uint64_t)flags, send);
        if (r < 0)
            break;
        uint32_t len = (uint32_t)r;
        if (copyout(&len, (void *)(uh + offsetof(struct mmsghdr_u, len)), sizeof len)) {
            r = -EFAULT;
            break;
        }
        if (!send && (flags & MSG_WAITFORONE))
            flags |= MSG_DONTWAIT;
        if (deadline && uptime_ns() >= deadline) {
            done++;
            break;
        }
    }
    file_rele(fp);
    return done ? (int64_t)done : r;
}

SYSCALL_DECL(sys_sendmmsg) { return do_mmsg((int)a0, a1, (unsigned)a2, (int)a3, true, 0); }

SYSCALL_DECL(sys_recvmmsg)
{
    uint64_t deadline = 0;
    if (a4) {
        struct { int64_t sec, nsec; } ts;
        if (copyin((void *)a4, &ts, sizeof ts))
            return -EFAULT;
        if (ts.sec < 0 || ts.nsec < 0 || ts.nsec >= (int64_t)NSEC)
            return -EINVAL;
        deadline = uptime_ns() + (uint64_t)ts.sec * NSEC + (uint64_t)ts.nsec;
    }
    return do_mmsg((int)a0, a1, (unsigned)a2, (int)a3, false, deadline);
}

/* ---- options ---- */

struct timeval_u { int64_t sec, usec; };

static int timeo_set(uint64_t *ns, const void *val, size_t len)
{
    struct timeval_u tv;
    if (len < sizeof tv)
        return -EINVAL;
    memcpy(&tv, val, sizeof tv);
    if (tv.usec < 0 || tv.usec >= 1000000)
        return -EDOM;
    *ns = tv.sec < 0 ? 0 : (uint64_t)tv.sec * NSEC + (uint64_t)tv.usec * 1000;
    return 0;
}

static int buf_size(int v, int min)
{
    v = (unsigned)v > BUF_MAX ? BUF_MAX : v;
    return MAX(v * 2, min);
}

/* The SOL_SOCKET options every family shares; 1 when opt is not one. */
static int generic_setopt(struct socket *so, int opt, const void *val, size_t len)
{
    if (opt == SO_RCVTIMEO_OLD || opt == SO_RCVTIMEO_NEW)
        return timeo_set(&so->so_rcvtimeo, val, len);
    if (opt == SO_SNDTIMEO_OLD || opt == SO_SNDTIMEO_NEW)
        return timeo_set(&so->so_sndtimeo, val, len);
    if (len < sizeof(int))
        return -EINVAL;
    int v;
    memcpy(&v, val, sizeof v);
    switch (opt) {
    case SO_SNDBUF: case SO_SNDBUFFORCE:
        so->so_sndbuf = buf_size(v, SOCK_MIN_SNDBUF);
        socket_notify(so, POLL_WRITESIDE);
        return 0;
    case SO_RCVBUF: case SO_RCVBUFFORCE:
        so->so_rcvbuf = buf_size(v, SOCK_MIN_RCVBUF);
        return 0;
    case SO_PASSCRED:
        so->so_passcred = v != 0;
        return 0;
    case SO_DEBUG: case SO_REUSEADDR: case SO_DONTROUTE: case SO_BROADCAST:
    case SO_KEEPALIVE: case SO_OOBINLINE: case SO_REUSEPORT:
        if (v)
            so->so_bools |= 1u << opt;
        else
            so->so_bools &= ~(1u << opt);
        return 0;
    case SO_PRIORITY:
        so->so_priority = v;
        return 0;
    case SO_RCVLOWAT:
        so->so_rcvlowat = v < 1 ? 1 : v;
        return 0;
    case SO_LINGER: {
        int linger[2];              /* struct linger: l_onoff, l_linger (seconds) */
        if (len < sizeof linger)
            return -EINVAL;
        memcpy(linger, val, sizeof linger);
        so->so_linger = linger[0] ? (linger[1] < 0 ? INT32_MAX : linger[1]) : -1;
        return 0;
    }
    default:
        return 1;
    }
}

SYSCALL_DECL(sys_setsockopt)
{
    struct file *fp;
    struct socket *so;
    int err = sock_get((int)a0, &fp, &so);
    if (err)
        return err;
    int level = (int)a1, opt = (int)a2, len = (int)a4;
    char val[64];
    if (len < 0)
        err = -EINVAL;
    else if (len && copyin((void *)a3, val, MIN((size_t)len, sizeof val)))
        err = -EFAULT;
    if (!err) {
        size_t n = MIN((size_t)len, sizeof val);
        mutex_enter(&so->so_lock);
        err = level == SOL_SOCKET ? generic_setopt(so, opt, val, n) : 1;
        mutex_exit(&so->so_lock);
        if (err == 1)
            err = so->so_ops->setopt(so, level, opt, val, n);
        else if (!err && level == SOL_SOCKET && opt == SO_KEEPALIVE)
            so->so_ops->setopt(so, level, opt, val, n);    /* TCP arms its timer; others ignore it */
    }
    file_rele(fp);
    return err;
}

/* The value of a shared option into val (room for 64 bytes); 1 when opt
 * is not one. */
static int generic_getopt(struct socket *so, int opt, void *val, size_t *len)
{
    int v;
    switch (opt) {
    case SO_TYPE:       v = so->so_type; break;
    case SO_PROTOCOL:   v = so->so_protocol; break;
    case SO_DOMAIN:     v = so->so_ops->family; break;
    case SO_ERROR:      v = so->so_error; so->so_error = 0; break;
    case SO_SNDBUF:     v = so->so_sndbuf; break;
    case SO_RCVBUF:     v = so->so_rcvbuf; break;
    case SO_PASSCRED:   v = so->so_passcred; break;
    case SO_ACCEPTCONN: v = so->so_listening; break;
    case SO_PRIORITY:   v = so->so_priority; break;
    case SO_RCVLOWAT:   v = so->so_rcvlowat ? so->so_rcvlowat : 1; break;
    case SO_SNDLOWAT:   v = 1; break;
    case SO_DEBUG: case SO_REUSEADDR: case SO_DONTROUTE: case SO_BROADCAST:
    case SO_KEEPALIVE: case SO_OOBINLINE: case SO_REUSEPORT:
        v = (so->so_bools >> opt) & 1;
        break;
    case SO_LINGER: {
        int linger[2] = { so->so_linger >= 0, so->so_linger >= 0 ? so->so_linger : 0 };
        memcpy(val, linger, sizeof linger);
        *len = sizeof linger;
        return 0;
    }
    case SO_RCVTIMEO_OLD: case SO_SNDTIMEO_OLD: case SO_RCVTIMEO_NEW: case SO_SNDTIMEO_NEW: {
        uint64_t ns = (opt == SO_RCVTIMEO_OLD || opt == SO_RCVTIMEO_NEW) ? so->so_rcvtimeo
                                                                          : so->so_sndtimeo;
        struct timeval_u tv = { (int64_t)(ns / NSEC), (int64_t)(ns % NSEC / 1000) };
        memcpy(val, &tv, sizeof tv);
        *len = sizeof tv;
        return 0;
    }
    default:
        return 1;
    }
    memcpy(val, &v, sizeof v);
    *len = sizeof v;
    return 0;
}

SYSCALL_DECL(sys_getsockopt)
{
    struct file *fp;
    struct socket *so;
    int err = sock_get((int)a0, &fp, &so);
    if (err)
        return err;
    int level = (int)a1, opt = (int)a2, room;
    char val[256] __attribute__((aligned(8)));     /* the largest answer: TCP_INFO, 232 */
    size_t len = 0;
    if (copyin((void *)a4, &room, sizeof room))
        err = -EFAULT;
    else if (room < 0)
        err = -EINVAL;
    if (!err) {
        mutex_enter(&so->so_lock);
        err = level == SOL_SOCKET ? generic_getopt(so, opt, val, &len) : 1;
        mutex_exit(&so->so_lock);
        if (err == 1)
            err = so->so_ops->getopt(so, level, opt, val, &len);
    }
    if (!err) {
        int n = (int)MIN((size_t)room, len);
        if ((n && copyout(val, (void *)a3, (size_t)n)) || copyout(&n, (void *)a4, sizeof n))
            err = -EFAULT;
    }
    file_rele(fp);
    return err;
}
