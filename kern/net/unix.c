/*
 * AF_UNIX: sockets within one machine (SOCK_STREAM, SOCK_DGRAM,
 * SOCK_SEQPACKET), named by a path in a file system or by an abstract
 * name, with descriptors (SCM_RIGHTS) and credentials (SCM_CREDENTIALS)
 * passed beside the data.  The semantics, errno included, are Linux's
 * (net/unix/af_unix.c is the reference the user tests check against on
 * the host, userland/tests/t_unix.c).
 *
 * Theory.  Data goes straight into the receiver's queue: a send makes a
 * message (struct unix_msg, its bytes copied in before any lock is
 * taken), locks the receiver, appends it and wakes the receiver's
 * readers.  A stream's write is cut into messages of at most half the
 * send buffer; a datagram or a seqpacket record is one message, read
 * whole (the rest is cut off: MSG_TRUNC).  Each message counts against
 * its sender's buffer space until it is read (kern/net/socket.c says how
 * a sender waits for room); a datagram receiver also takes at most
 * UNIX_MAX_DGRAM_QLEN messages from senders it is not connected to.
 *
 * Connections.  connect on a stream or seqpacket socket finds the
 * listener by name (unix_find), makes the server's end at once, joins
 * the two ends (each holds the other: u_peer) and puts the server's end
 * in the listener's accept queue, waiting while that is longer than the
 * backlog (or -EAGAIN when non-blocking, as Linux's AF_UNIX, never
 * EINPROGRESS).  accept takes the first end from the queue.  A datagram
 * socket's connect only sets where send goes.
 *
 * Names.  A path name is a VSOCK node that bind makes (vn_mknod; an
 * existing name is EADDRINUSE); the table of bound names (unix_names,
 * under unix_names_lock) maps the node, or an abstract name's bytes, to
 * the socket.  connect and sendto look the path up, need write
 * permission on the node, and find the socket through the table.  A name
 * leaves the table when its socket is released; the node stays in the
 * file system until unlinked, as on Linux.
 *
 * Release.  The last close of a socket's file (socket_close) marks it
 * released, shuts both directions of its peer (which then reads end of
 * file, or ECONNRESET when data it had not read was dropped, and gets
 * EPIPE on a write), drops its queue (the descriptors in it are
 * released, which may close more sockets) and the connections its
 * listener had not accepted.
 *
 * Locks, in order: a connecting socket's so_lock is never held while the
 * listener's is taken (connect takes one, lets it go, takes the other);
 * a sender holds no lock of its own while it locks the receiver; the
 * names table's lock (unix_names_lock) is taken with no socket lock held
 * (bind marks the socket u_binding under its so_lock and lets it go
 * first); the collector's (unix_gc_lock, kern/net/unix_gc.c) is taken
 * with no socket lock held and takes socket locks under it.  Nobody
 * holds two socket locks at once.
 */
#include <kern/net/unix_impl.h>
#include <kern/proc/proc.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/vm/kmem.h>
#include <kern/lock/sleep.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <kern/lib/kprintf.h>

#define SOMAXCONN       4096        /* Linux's net.core.somaxconn */
#define OVERFLOW_ID     65534       /* Linux's overflowuid: no such id */

/* SOL_SOCKET options AF_UNIX answers itself */
#define SO_PEERCRED     17

LOCK_CLASS(unix_names_lock_class, "unixname", LK_MUTEX_SLEEP);
static struct mutex unix_names_lock;
static struct unix_name *unix_names;        /* [n] */
static uint32_t unix_autobind_next;         /* [n] */
LOCK_CLASS(unix_all_lock_class, "unixall", LK_MUTEX_SLEEP);
static struct mutex unix_all_lock;
static struct unpcb *unix_all;              /* [A] */

static void all_enter(struct unpcb *u)
{
    mutex_enter(&unix_all_lock);
    u->u_allnext = unix_all;
    if (unix_all)
        unix_all->u_allprev = &u->u_allnext;
    u->u_allprev = &unix_all;
    unix_all = u;
    mutex_exit(&unix_all_lock);
}

static void all_leave(struct unpcb *u)
{
    mutex_enter(&unix_all_lock);
    *u->u_allprev = u->u_allnext;
    if (u->u_allnext)
        u->u_allnext->u_allprev = u->u_allprev;
    mutex_exit(&unix_all_lock);
}

void unix_snapshot(struct sockvec *sv)
{
    do {
        mutex_enter(&unix_all_lock);
        for (struct unpcb *u = unix_all; u; u = u->u_allnext)
            sockvec_take_live(sv, u->u_so);
        mutex_exit(&unix_all_lock);
    } while (sockvec_again(sv));
}

struct unix_cred unix_cred_now(bool effective)
{
    struct proc *p = curproc();
    struct cred *c = p->p_cred;
    return (struct unix_cred){ .pid = p->p_pid,
                               .uid = effective ? c->cr_uid : c->cr_ruid,
                               .gid = effective ? c->cr_gid : c->cr_rgid };
}

static int unix_attach(struct socket *so)
{
    struct unpcb *u = kzalloc(sizeof *u);
    if (!u)
        return -ENOMEM;
    u->u_so = so;
    u->u_rqtail = &u->u_rq;
    u->u_aqtail = &u->u_aq;
    so->so_pcb = u;
    all_enter(u);
    return 0;
}

/* ---- names ---- */

static void name_rele(struct unix_name *n)
{
    if (!n || __atomic_sub_fetch(&n->n_refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    if (n->n_node)
        VN_RELE(n->n_node);
    kfree(n);
}

static bool is_abstract(const struct unix_name *n) { return !n->n_node; }

int unix_addr_check(const void *addr, size_t len)
{
    const uint16_t *family = addr;
    if (len <= 2 || len > UNIX_ADDR_MAX || *family != AF_UNIX)
        return -EINVAL;
    return 0;
}

/* A path name's text, NUL-terminated (addr is a checked sockaddr_un). */
static void path_of(const char *addr, size_t len, char *path)
{
    size_t n = len - 2;
    memcpy(path, addr + 2, n);
    path[n] = 0;
}

/* The table's entry for an abstract name, or for a node; [n] held. */
static struct unix_name *names_find(const char *addr, size_t len, struct vnode *node)
{
    for (struct unix_name *n = unix_names; n; n = n->n_next) {
        if (node ? n->n_node == node
                 : is_abstract(n) && n->n_len == len && memcmp(n->n_addr, addr, len) == 0)
            return n;
    }
    return NULL;
}

static struct unix_name *name_new(const char *addr, size_t len, struct vnode *node)
{
    struct unix_name *n = kzalloc(sizeof *n);
    if (!n)
        return NULL;
    memcpy(n->n_addr, addr, len);
    n->n_len = (uint32_t)len;
    n->n_node = node;
    n->n_refs = 1;
    return n;
}

/* Enter n for so, unless an abstract name is taken: 0 or -EADDRINUSE. */
static int names_insert(struct unix_name *n, struct socket *so)
{
    mutex_enter(&unix_names_lock);
    if (is_abstract(n) && names_find(n->n_addr, n->n_len, NULL)) {
        mutex_exit(&unix_names_lock);
        return -EADDRINUSE;
    }
    n->n_so = so;
    n->n_next = unix_names;
    unix_names = n;
    mutex_exit(&unix_names_lock);
    return 0;
}

static void names_remove(struct unix_name *n)
{
    mutex_enter(&unix_names_lock);
    for (struct unix_name **pp = &unix_names; *pp; pp = &(*pp)->n_next)
        if (*pp == n) {
            *pp = n->n_next;
            break;
        }
    n->n_so = NULL;
    mutex_exit(&unix_names_lock);
}

/* A path name: make its node (mode 0777 less the umask, as Linux). */
static int bind_path(const char *addr, size_t len, struct unix_name **np)
{
    char path[UNIX_PATH_MAX + 1];
    path_of(addr, len, path);
    struct proc *p = curproc();
    struct vnode *cwd = proc_cwd_hold(p), *node = NULL;
    int err = vn_mknod(path, cwd, VSOCK, 0777 & ~p->p_umask, 0, p->p_cred, &node);
    if (cwd)
        VN_RELE(cwd);
    if (err)
        return err == -EEXIST ? -EADDRINUSE : err;
    /* The name as getsockname gives it: up to the path's NUL. */
    *np = name_new(addr, 2 + strlen(path) + 1, node);
    if (!*np) {
        VN_RELE(node);
        return -ENOMEM;
    }
    return 0;
}

/* Autobind: an abstract name of five hex digits, as Linux's. */
static int bind_auto(struct socket *so, struct unix_name **np)
{
    char addr[9] = { AF_UNIX, 0, 0 };   /* and room for snprintf's NUL */
    for (int tries = 0; tries < 0x100000; tries++) {
        mutex_enter(&unix_names_lock);
        uint32_t k = unix_autobind_next++ & 0xfffff;
        mutex_exit(&unix_names_lock);
        snprintf(addr + 3, 6, "%05x", k);
        struct unix_name *n = name_new(addr, 8, NULL);
        if (!n)
            return -ENOMEM;
        int err = names_insert(n, so);
        if (!err) {
            *np = n;
            return 0;
        }
        name_rele(n);
    }
    return -ENOSPC;
}

/* bind of a bound socket, in Linux's order: an autobind changes nothing
 * (0), a path that exists is EADDRINUSE (its node is made first), and
 * anything else EINVAL. */
static int bound_again(const char *addr, size_t len)
{
    if (len == 2)
        return 0;
    if (addr[2] == 0)
        return -EINVAL;
    char path[UNIX_PATH_MAX + 1];
    path_of(addr, len, path);
    struct proc *p = curproc();
    struct vnode *cwd = proc_cwd_hold(p), *vp = NULL;
    int err = lookupname(path, cwd, false, &vp, p->p_cred);
    if (cwd)
        VN_RELE(cwd);
    if (!err)
        VN_RELE(vp);
    return err ? -EINVAL : -EADDRINUSE;
}

static int unix_bind(struct socket *so, const void *uaddr, size_t len)
{
    const char *addr = uaddr;
    const uint16_t *family = uaddr;
    if (len < 2 || len > UNIX_ADDR_MAX || *family != AF_UNIX)
        return -EINVAL;
    struct unpcb *u = sotounp(so);
    mutex_enter(&so->so_lock);
    bool bound = u->u_name || u->u_binding;
    u->u_binding = !bound;
    mutex_exit(&so->so_lock);
    if (bound)
        return bound_again(addr, len);
    struct unix_name *n = NULL;
    int err;
    if (len == 2) {
        err = bind_auto(so, &n);
    } else if (addr[2] == 0) {
        n = name_new(addr, len, NULL);
        err = n ? names_insert(n, so) : -ENOMEM;
    } else {
        err = bind_path(addr, len, &n);
        err = err ? err : names_insert(n, so);
    }
    if (err && n) {
        name_rele(n);
        n = NULL;
    }
    mutex_enter(&so->so_lock);
    __atomic_store_n(&u->u_name, n, __ATOMIC_RELEASE);
    u->u_binding = false;
    mutex_exit(&so->so_lock);
    return err;
}

/* Autobind a socket that sends or connects unnamed with SO_PASSCRED, as
 * Linux does, so its peer sees an address. */
static void bind_if_passcred(struct socket *so)
{
    struct unpcb *u = sotounp(so);
    if (so->so_passcred && !__atomic_load_n(&u->u_name, __ATOMIC_ACQUIRE)) {
        char fam[2] = { AF_UNIX, 0 };
        (void)unix_bind(so, fam, 2);
    }
}

int unix_find(const char *addr, size_t len, int type, struct socket **sop)
{
    struct vnode *node = NULL;
    int err = 0;
    if (addr[2] != 0) {
        char path[UNIX_PATH_MAX + 1];
        path_of(addr, len, path);
        struct proc *p = curproc();
        struct vnode *cwd = proc_cwd_hold(p);
        err = lookupname(path, cwd, true, &node, p->p_cred);
        if (cwd)
            VN_RELE(cwd);
        if (!err && node->v_type != VSOCK)
            err = -ECONNREFUSED;
        if (!err)
            err = VOP_LOCKED(node, node->v_op->vop_access(node, VWRITE, p->p_cred));
        if (err) {
            if (node)
                VN_RELE(node);
            return err;
        }
    }
    mutex_enter(&unix_names_lock);
    struct unix_name *n = names_find(addr, len, node);
    struct socket *so = n ? n->n_so : NULL;
    if (so)
        socket_hold(so);
    mutex_exit(&unix_names_lock);
    if (node)
        VN_RELE(node);
    if (!so)
        return -ECONNREFUSED;
    if (so->so_type != type) {
        socket_rele(so);
        return -EPROTOTYPE;
    }
    *sop = so;
    return 0;
}

/* ---- connections ---- */

static int unix_listen(struct socket *so, int backlog)
{
    if (so->so_type == SOCK_DGRAM)
        return -EOPNOTSUPP;
    struct unpcb *u = sotounp(so);
    mutex_enter(&so->so_lock);
    int err = u->u_connected || u->u_connecting || !u->u_name ? -EINVAL : 0;
    if (!err) {
        so->so_listening = true;
        u->u_backlog = (unsigned)backlog > SOMAXCONN ? SOMAXCONN : backlog;
        u->u_peercred = unix_cred_now(true);
        u->u_haspeercred = true;
        socket_notify(so, POLL_BOTHSIDES);  /* connectors waiting for room */
    }
    mutex_exit(&so->so_lock);
    return err;
}

/* Join a and b (new or connecting, no locks held): each holds the other. */
static void join(struct socket *a, struct socket *b)
{
    struct unpcb *ua = sotounp(a), *ub = sotounp(b);
    socket_hold(b);
    socket_hold(a);
    mutex_enter(&a->so_lock);
    ua->u_peer = b;
    ua->u_connected = true;
    mutex_exit(&a->so_lock);
    mutex_enter(&b->so_lock);
    ub->u_peer = a;
    ub->u_connected = true;
    mutex_exit(&b->so_lock);
}

static int unix_connect2(struct socket *a, struct socket *b)
{
    struct unpcb *ua = sotounp(a), *ub = sotounp(b);
    ua->u_peercred = ub->u_peercred = unix_cred_now(true);
    ua->u_haspeercred = ub->u_haspeercred = true;
    join(a, b);
    return 0;
}

/* Put the server's end srv in listener l's queue, waiting for room. */
static int enqueue_connection(struct socket *l, struct socket *srv, bool nonblock)
{
    struct unpcb *ul = sotounp(l);
    mutex_enter(&l->so_lock);
    int err = 0;
    for (;;) {
        if (!l->so_listening || ul->u_released) {
            err = -ECONNREFUSED;
            break;
        }
        if (ul->u_aqlen <= ul->u_backlog)
            break;
        if (nonblock) {
            err = -EAGAIN;
            break;
        }
        if ((err = socket_sleep(&l->so_wchan, socket_deadline(l->so_sndtimeo))))
            break;
    }
    if (!err) {
        sotounp(srv)->u_aqnext = NULL;
        *ul->u_aqtail = srv;
        ul->u_aqtail = &sotounp(srv)->u_aqnext;
        ul->u_aqlen++;
        socket_notify(l, POLL_READSIDE);
    }
    mutex_exit(&l->so_lock);
    return err;
}

/* Undo join for a connection that never reached the listener. */
static void unjoin(struct socket *so, struct socket *srv)
{
    struct unpcb *u = sotounp(so), *us = sotounp(srv);
    mutex_enter(&so->so_lock);
    u->u_peer = NULL;
    u->u_connected = false;
    mutex_exit(&so->so_lock);
    mutex_enter(&srv->so_lock);
    us->u_peer = NULL;
    mutex_exit(&srv->so_lock);
    socket_rele(srv);           /* so's hold on srv */
    socket_rele(so);            /* srv's hold on so */
    srv->so_ops->release(srv);
    socket_rele(srv);           /* its creation's reference */
}

static int connect_stream(struct socket *so, struct socket *l, bool nonblock)
{
    struct unpcb *u = sotounp(so);
    mutex_enter(&so->so_lock);
    int err = u->u_connected ? -EISCONN : so->so_listening ? -EINVAL
            : u->u_connecting ? -EALREADY : 0;
    u->u_connecting = !err;
    mutex_exit(&so->so_lock);
    if (err)
        return err;
    bind_if_passcred(so);
    struct socket *srv = NULL;
    err = socket_create(&unix_sockops, so->so_type, so->so_protocol, &srv);
    if (!err) {
        struct unpcb *us = sotounp(srv), *ul = sotounp(l);
        us->u_peercred = unix_cred_now(true);
        us->u_haspeercred = true;
        mutex_enter(&l->so_lock);
        u->u_peercred = ul->u_peercred;
        us->u_name = ul->u_name;            /* the accepted end's own name */
        if (us->u_name)
            __atomic_add_fetch(&us->u_name->n_refs, 1, __ATOMIC_RELAXED);
        mutex_exit(&l->so_lock);
        u->u_haspeercred = true;
        join(so, srv);
        err = enqueue_connection(l, srv, nonblock);
        if (err)
            unjoin(so, srv);
    }
    mutex_enter(&so->so_lock);
    u->u_connecting = false;
    mutex_exit(&so->so_lock);
    return err;
}

/* A datagram socket's destination: set (to), or cleared (to NULL). */
static int connect_dgram(struct socket *so, struct socket *to)
{
    struct unpcb *u = sotounp(so);
    if (to) {
        bind_if_passcred(so);
        struct unpcb *ut = sotounp(to);
        mutex_enter(&to->so_lock);
        bool may = !ut->u_peer || ut->u_peer == so;
        mutex_exit(&to->so_lock);
        if (!may)
            return -EPERM;
        socket_hold(to);
    }
    mutex_enter(&so->so_lock);
    struct socket *old = u->u_peer;
    u->u_peer = to;
    mutex_exit(&so->so_lock);
    if (old)
        socket_rele(old);
    return 0;
}

static int unix_connect(struct socket *so, const void *uaddr, size_t len, bool nonblock)
{
    const uint16_t *family = uaddr;
    if (so->so_type == SOCK_DGRAM && len >= 2 && *family == AF_UNSPEC)
        return connect_dgram(so, NULL);
    int err = unix_addr_check(uaddr, len);
    struct socket *to = NULL;
    if (!err)
        err = unix_find(uaddr, len, so->so_type, &to);
    if (err)
        return err;
    err = so->so_type == SOCK_DGRAM ? connect_dgram(so, to) : connect_stream(so, to, nonblock);
    socket_rele(to);
    return err;
}

static int unix_accept(struct socket *so, bool nonblock, struct socket **newp)
{
    if (so->so_type == SOCK_DGRAM)
        return -EOPNOTSUPP;
    struct unpcb *u = sotounp(so);
    mutex_enter(&so->so_lock);
    int err = so->so_listening ? 0 : -EINVAL;
    while (!err && !u->u_aq) {
        if (nonblock)
            err = -EAGAIN;
        else
            err = socket_sleep(&so->so_rchan, socket_deadline(so->so_rcvtimeo));
    }
    if (!err) {
        struct socket *n = u->u_aq;
        u->u_aq = sotounp(n)->u_aqnext;
        if (!u->u_aq)
            u->u_aqtail = &u->u_aq;
        u->u_aqlen--;
        socket_notify(so, POLL_WRITESIDE);  /* room for a waiting connector */
        *newp = n;
    }
    mutex_exit(&so->so_lock);
    return err;
}

static int unix_shutdown(struct socket *so, int how)
{
    if (how < SHUT_RD || how > SHUT_RDWR)
        return -EINVAL;
    uint32_t mine = (how == SHUT_RD ? SO_RCV_SHUT : how == SHUT_WR ? SO_SEND_SHUT
                     : SO_RCV_SHUT | SO_SEND_SHUT);
    uint32_t theirs = ((mine & SO_RCV_SHUT) ? SO_SEND_SHUT : 0) |
                      ((mine & SO_SEND_SHUT) ? SO_RCV_SHUT : 0);
    struct unpcb *u = sotounp(so);
    mutex_enter(&so->so_lock);
    struct socket *peer = u->u_peer;
    bool stream = so->so_type != SOCK_DGRAM;
    so->so_shut |= mine;                /* unconnected too: Linux's AF_UNIX answers 0 */
    socket_notify(so, POLL_BOTHSIDES);
    if (peer && stream)
        socket_hold(peer);
    mutex_exit(&so->so_lock);
    if (peer && stream) {
        mutex_enter(&peer->so_lock);
        peer->so_shut |= theirs;
        socket_notify(peer, POLL_BOTHSIDES);
        mutex_exit(&peer->so_lock);
        socket_rele(peer);
    }
    return 0;
}

/* ---- release ---- */

/* Tell the peer of a released stream or seqpacket socket: both its
 * directions are shut, and ECONNRESET when data was lost. */
static void hang_up(struct socket *peer, bool lost)
{
    mutex_enter(&peer->so_lock);
    peer->so_shut = SO_RCV_SHUT | SO_SEND_SHUT;
    if (lost)
        peer->so_error = ECONNRESET;
    socket_notify(peer, POLL_BOTHSIDES);
    mutex_exit(&peer->so_lock);
}

static void unix_release(struct socket *so)
{
    struct unpcb *u = sotounp(so);
    mutex_enter(&so->so_lock);
    u->u_released = true;
    so->so_listening = false;
    so->so_shut = SO_RCV_SHUT | SO_SEND_SHUT;
    struct socket *peer = u->u_peer, *aq = u->u_aq;
    struct unix_msg *rq = u->u_rq;
    u->u_peer = NULL;
    u->u_rq = NULL;
    u->u_rqtail = &u->u_rq;
    u->u_rqlen = 0;
    u->u_aq = NULL;
    u->u_aqtail = &u->u_aq;
    u->u_aqlen = 0;
    struct unix_name *name = u->u_name;
    socket_notify(so, POLL_BOTHSIDES);
    mutex_exit(&so->so_lock);
    if (name && name->n_so == so)
        names_remove(name);
    if (peer && so->so_type != SOCK_DGRAM)
        hang_up(peer, rq != NULL || aq != NULL);
    if (peer)
        socket_rele(peer);
    unix_msgs_free(rq);
    while (aq) {                    /* connections never accepted */
        struct socket *n = aq;
        aq = sotounp(n)->u_aqnext;
        unix_release(n);
        socket_rele(n);
    }
    unix_gc();
}

static void unix_destroy(struct socket *so)
{
    struct unpcb *u = sotounp(so);
    all_leave(u);
    name_rele(u->u_name);
    kfree(u);
}

/* ---- what a socket shows ---- */

static short unix_poll(struct socket *so, short events)
{
    struct unpcb *u = sotounp(so);
    short r = 0;
    mutex_enter(&so->so_lock);
    bool stream = so->so_type != SOCK_DGRAM;
    r |= socket_poll_shut(so);
    if (u->u_rq || u->u_aq)
        r |= POLLIN | POLLRDNORM;
    if (stream && !u->u_connected && !so->so_listening)
        r |= POLLHUP;
    bool writable = !so->so_listening &&
                    __atomic_load_n(&u->u_wmem, __ATOMIC_RELAXED) * 4 <= (uint64_t)so->so_sndbuf;
    if (stream && !u->u_connected)
        writable = writable && !so->so_listening;
    if (writable)
        r |= POLLOUT | POLLWRNORM;
    mutex_exit(&so->so_lock);
    return (short)(r & (events | POLLERR | POLLHUP));
}

static int unix_nread(struct socket *so)
{
    struct unpcb *u = sotounp(so);
    size_t n = 0;
    mutex_enter(&so->so_lock);
    for (struct unix_msg *m = u->u_rq; m; m = m->m_next) {
        n += m->m_len - m->m_off;
        if (so->so_type != SOCK_STREAM)
            break;                  /* a datagram's size: the next one's */
    }
    mutex_exit(&so->so_lock);
    return (int)MIN(n, (size_t)INT32_MAX);
}

static int unix_getname(struct socket *so, void *addr, size_t *len, bool peer)
{
    struct unpcb *u = sotounp(so);
    struct socket *s = so;
    mutex_enter(&so->so_lock);
    if (peer) {
        s = u->u_peer;
        if (!s || (so->so_type != SOCK_DGRAM && !u->u_connected)) {
            mutex_exit(&so->so_lock);
            return -ENOTCONN;
        }
    }
    struct unix_name *n = __atomic_load_n(&sotounp(s)->u_name, __ATOMIC_ACQUIRE);
    if (n) {
        memcpy(addr, n->n_addr, n->n_len);
        *len = n->n_len;
    } else {
        *(uint16_t *)addr = AF_UNIX;
        *len = 2;
    }
    mutex_exit(&so->so_lock);
    return 0;
}

/* Another level than SOL_SOCKET (IPPROTO_TCP ...) is EOPNOTSUPP on an
 * AF_UNIX socket, an unknown SOL_SOCKET option ENOPROTOOPT, as Linux. */
static int unix_getopt(struct socket *so, int level, int name, void *val, size_t *len)
{
    if (level != SOL_SOCKET)
        return -EOPNOTSUPP;
    if (name != SO_PEERCRED)
        return -ENOPROTOOPT;
    struct unpcb *u = sotounp(so);
    mutex_enter(&so->so_lock);
    struct unix_cred c = u->u_haspeercred ? u->u_peercred
                       : (struct unix_cred){ 0, OVERFLOW_ID, OVERFLOW_ID };
    mutex_exit(&so->so_lock);
    memcpy(val, &c, sizeof c);
    *len = sizeof c;
    return 0;
}

static int unix_setopt(struct socket *so, int level, int name, const void *val, size_t len)
{
    return level != SOL_SOCKET ? -EOPNOTSUPP : -ENOPROTOOPT;
}

/* socket(): SOCK_RAW is taken as SOCK_DGRAM, as Linux does; the only
 * protocol is 0 (or PF_UNIX itself). */
static int unix_protocol(int *type, int protocol)
{
    if (*type == SOCK_RAW)
        *type = SOCK_DGRAM;
    if (*type != SOCK_STREAM && *type != SOCK_DGRAM && *type != SOCK_SEQPACKET)
        return -ESOCKTNOSUPPORT;
    return protocol && protocol != AF_UNIX ? -EPROTONOSUPPORT : 0;
}

const struct sockops unix_sockops = {
    .family = AF_UNIX,
    .protocol = unix_protocol,
    .attach = unix_attach,
    .release = unix_release,
    .destroy = unix_destroy,
    .bind = unix_bind,
    .listen = unix_listen,
    .accept = unix_accept,
    .connect = unix_connect,
    .connect2 = unix_connect2,
    .send = unix_send,
    .recv = unix_recv,
    .shutdown = unix_shutdown,
    .getname = unix_getname,
    .getopt = unix_getopt,
    .setopt = unix_setopt,
    .poll = unix_poll,
    .nread = unix_nread,
};

void unix_init(void)
{
    mutex_init(&unix_names_lock, &unix_names_lock_class, 0, "unixname");
    mutex_init(&unix_all_lock, &unix_all_lock_class, 0, "unixall");
    unix_gc_init();
}
