/*
 * AF_UNIX's messages: send and receive, and what travels beside the
 * data (SCM_RIGHTS, SCM_CREDENTIALS).  Theory and locks in
 * kern/net/unix.c and kern/net/unix_impl.h.
 *
 * A message's bytes are copied in from the caller before the receiver
 * is locked, and copied out after it is let go (a datagram, taken off
 * the queue first; a stream's bytes, gathered into a bounce buffer under
 * the lock), so no socket lock is held across user memory.  A message
 * holds its sender and the files passed in it; freeing it gives the
 * sender its buffer space back (so_wgen, so_wchan) and releases the
 * files that were not received.
 */
#include <kern/net/unix_impl.h>
#include <kern/proc/proc.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/vm/kmem.h>
#include <kern/lock/sleep.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <drivers/platform/timer.h>

#define SCM_RIGHTS      1
#define SCM_CREDENTIALS 2
#define CMSG_HDR        16                      /* struct cmsghdr on x86-64 */
#define CMSG_ALIGN(n)   (((n) + 7) & ~(size_t)7)
#define STREAM_CHUNK    65536                   /* the most a stream message holds */
#define MSG_OVERHEAD    256                     /* what a message costs beyond its bytes */

struct cmsghdr_k {
    uint64_t len;
    int32_t level, type;
};

/* What a send carries beside its data. */
struct scm {
    struct file **files;
    int nfiles;
    bool hascred;
    struct unix_cred cred;
};

static void scm_drop(struct scm *scm)
{
    for (int i = 0; i < scm->nfiles; i++)
        file_rele(scm->files[i]);
    kfree(scm->files);
    scm->files = NULL;
    scm->nfiles = 0;
}

static int scm_rights(struct scm *scm, const int *fds, int n)
{
    if (n <= 0)
        return 0;
    if (scm->nfiles + n > SCM_MAX_FD)
        return -EINVAL;
    struct file **f = kmalloc((size_t)(scm->nfiles + n) * sizeof *f);
    if (!f)
        return -ENOMEM;
    memcpy(f, scm->files, (size_t)scm->nfiles * sizeof *f);
    kfree(scm->files);
    scm->files = f;
    for (int i = 0; i < n; i++) {
        struct file *fp = fd_get(curproc(), fds[i]);
        if (!fp)
            return -EBADF;
        scm->files[scm->nfiles++] = fp;
    }
    return 0;
}

/* Linux's scm_check_creds: one's own pid and any of one's ids, unless
 * root. */
static int scm_creds(struct scm *scm, const struct unix_cred *c)
{
    struct proc *p = curproc();
    struct cred *cr = p->p_cred;
    bool root = cr->cr_uid == 0;
    bool pid_ok = c->pid == p->p_pid || root;
    bool uid_ok = c->uid == cr->cr_ruid || c->uid == cr->cr_uid || c->uid == cr->cr_suid || root;
    bool gid_ok = c->gid == cr->cr_rgid || c->gid == cr->cr_gid || c->gid == cr->cr_sgid || root;
    if (!pid_ok || !uid_ok || !gid_ok)
        return -EPERM;
    if (c->pid != p->p_pid && proc_signal(c->pid, 0, false) == -ESRCH)
        return -ESRCH;              /* root named a process that is not there */
    scm->cred = *c;
    scm->hascred = true;
    return 0;
}

/* The control messages of a send (in kernel memory), as Linux's
 * __scm_send: other levels are passed over, an unknown SOL_SOCKET type
 * or a malformed header is -EINVAL. */
static int scm_parse(const struct sockxfer *sx, struct scm *scm)
{
    const char *c = sx->sx_control;
    size_t len = sx->sx_controllen, off = 0;
    while (c && len - off >= CMSG_HDR) {
        struct cmsghdr_k h;
        memcpy(&h, c + off, sizeof h);
        if (h.len < CMSG_HDR || h.len > len - off)
            return -EINVAL;
        const void *data = c + off + CMSG_HDR;
        size_t dlen = h.len - CMSG_HDR;
        int err = 0;
        if (h.level == SOL_SOCKET && h.type == SCM_RIGHTS) {
            int fds[SCM_MAX_FD + 1];
            size_t n = dlen / sizeof(int);
            if (n > SCM_MAX_FD)
                return -EINVAL;
            memcpy(fds, data, n * sizeof(int));
            err = scm_rights(scm, fds, (int)n);
        } else if (h.level == SOL_SOCKET && h.type == SCM_CREDENTIALS) {
            struct unix_cred uc;
            if (dlen != sizeof uc)
                return -EINVAL;
            memcpy(&uc, data, sizeof uc);
            err = scm_creds(scm, &uc);
        } else if (h.level == SOL_SOCKET) {
            err = -EINVAL;
        }
        if (err)
            return err;
        off += MIN(CMSG_ALIGN(h.len), len - off);
    }
    return 0;
}

/* ---- messages ---- */

static void uncharge(struct socket *from, size_t charge)
{
    struct unpcb *u = sotounp(from);
    __atomic_sub_fetch(&u->u_wmem, charge, __ATOMIC_RELEASE);
    __atomic_add_fetch(&from->so_wgen, 1, __ATOMIC_SEQ_CST);
    wakeup(&from->so_wchan);
    vn_poll_notify(&from->so_vn, POLL_WRITESIDE);
}

void unix_msg_free(struct unix_msg *m)
{
    if (m->m_nfiles) {
        unix_inflight(m->m_files, m->m_nfiles, -1);
        for (int i = 0; i < m->m_nfiles; i++)
            file_rele(m->m_files[i]);
    }
    kfree(m->m_files);
    uncharge(m->m_from, m->m_charge);
    socket_rele(m->m_from);
    kfree(m);
}

void unix_msgs_free(struct unix_msg *m)
{
    while (m) {
        struct unix_msg *next = m->m_next;
        unix_msg_free(m);
        m = next;
    }
}

/* A message of n bytes from so, charged to it, its bytes copied in from
 * the caller; the scm's files move into it. */
static int msg_make(struct socket *so, struct sockxfer *sx, size_t n, struct scm *scm,
                    struct unix_msg **mp)
{
    struct unix_msg *m = kmalloc(sizeof *m + (n ? n : 1));
    if (!m)
        return -ENOMEM;
    memset(m, 0, sizeof *m);
    if (sockxfer_in(sx, m->m_data, n)) {
        kfree(m);
        return -EFAULT;
    }
    struct unpcb *u = sotounp(so);
    m->m_len = n;
    m->m_from = so;
    socket_hold(so);
    m->m_charge = n + MSG_OVERHEAD;
    __atomic_add_fetch(&u->u_wmem, m->m_charge, __ATOMIC_RELAXED);
    m->m_cred = scm->hascred ? scm->cred : unix_cred_now(false);
    m->m_files = scm->files;
    m->m_nfiles = scm->nfiles;
    if (m->m_nfiles)
        unix_inflight(m->m_files, m->m_nfiles, 1);
    scm->files = NULL;
    scm->nfiles = 0;
    struct unix_name *name = __atomic_load_n(&u->u_name, __ATOMIC_ACQUIRE);
    if (name) {
        memcpy(m->m_addr, name->n_addr, name->n_len);
        m->m_addrlen = name->n_len;
    }
    *mp = m;
    return 0;
}

/* Wait, holding no lock, until so has buffer space: Linux's rule, room
 * while what it has queued is below its send buffer. */
static int wait_room(struct socket *so, bool nonblock)
{
    struct unpcb *u = sotounp(so);
    uint64_t deadline = socket_deadline(so->so_sndtimeo);
    for (;;) {
        uint64_t gen = __atomic_load_n(&so->so_wgen, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&u->u_wmem, __ATOMIC_ACQUIRE) < (uint64_t)so->so_sndbuf)
            return 0;
        if (nonblock)
            return -EAGAIN;
        if (deadline != UINT64_MAX && uptime_ns() >= deadline)
            return -EAGAIN;
        int err = sig_sleep_until_gen(&so->so_wchan, deadline, &so->so_wgen, gen);
        if (err)
            return err;
    }
}

static void enqueue(struct socket *to, struct unix_msg *m)
{
    struct unpcb *u = sotounp(to);
    m->m_next = NULL;
    *u->u_rqtail = m;
    u->u_rqtail = &m->m_next;
    u->u_rqlen++;
    socket_notify(to, POLL_READSIDE);
}

/* Deliver m to a stream or seqpacket peer: 0, or -EPIPE. */
static int deliver_conn(struct socket *peer, struct unix_msg *m)
{
    mutex_enter(&peer->so_lock);
    int err = sotounp(peer)->u_released || (peer->so_shut & SO_RCV_SHUT) ? -EPIPE : 0;
    if (!err)
        enqueue(peer, m);
    mutex_exit(&peer->so_lock);
    return err;
}

/* Deliver datagram m from so to to, waiting while to's queue is full
 * (unless they are connected to each other). */
static int deliver_dgram(struct socket *so, struct socket *to, struct unix_msg *m, bool nonblock)
{
    struct unpcb *ut = sotounp(to);
    uint64_t deadline = socket_deadline(so->so_sndtimeo);
    int err = 0;
    mutex_enter(&to->so_lock);
    for (;;) {
        if (ut->u_released) {
            err = -ECONNREFUSED;
            break;
        }
        if (ut->u_peer && ut->u_peer != so) {
            err = -EPERM;
            break;
        }
        if (to->so_shut & SO_RCV_SHUT) {
            err = -EPIPE;
            break;
        }
        if (ut->u_peer == so || ut->u_rqlen <= UNIX_MAX_DGRAM_QLEN)
            break;
        if (nonblock) {
            err = -EAGAIN;
            break;
        }
        if ((err = socket_sleep(&to->so_wchan, deadline)))
            break;
    }
    if (!err)
        enqueue(to, m);
    mutex_exit(&to->so_lock);
    return err;
}

/* The socket a send goes to, held: the name given, or the peer. */
static int send_target(struct socket *so, struct sockxfer *sx, struct socket **top)
{
    struct unpcb *u = sotounp(so);
    if (sx->sx_name && so->so_type == SOCK_DGRAM) {
        int err = unix_addr_check(sx->sx_name, sx->sx_namelen);
        return err ? err : unix_find(sx->sx_name, sx->sx_namelen, so->so_type, top);
    }
    mutex_enter(&so->so_lock);
    struct socket *peer = u->u_peer;
    int err = !peer || (so->so_type != SOCK_DGRAM && !u->u_connected) ? -ENOTCONN : 0;
    if (!err && (so->so_shut & SO_SEND_SHUT))
        err = -EPIPE;
    if (!err && so->so_error && so->so_type != SOCK_DGRAM) {
        err = -so->so_error;
        so->so_error = 0;
    }
    if (!err)
        socket_hold(peer);
    mutex_exit(&so->so_lock);
    *top = peer;
    return err;
}

/* A datagram's destination is gone: forget it if it was the peer. */
static void forget_peer(struct socket *so, struct socket *to)
{
    struct unpcb *u = sotounp(so);
    mutex_enter(&so->so_lock);
    bool was = u->u_peer == to;
    if (was)
        u->u_peer = NULL;
    mutex_exit(&so->so_lock);
    if (was)
        socket_rele(to);
}

/* One message: a datagram or a seqpacket record. */
static int64_t send_record(struct socket *so, struct socket *to, struct sockxfer *sx,
                           struct scm *scm)
{
    size_t len = sx->sx_resid;
    if (len > (size_t)so->so_sndbuf - 32)
        return -EMSGSIZE;
    int err = wait_room(so, sx->sx_nonblock);
    struct unix_msg *m = NULL;
    if (!err)
        err = msg_make(so, sx, len, scm, &m);
    if (!err)
        err = so->so_type == SOCK_DGRAM ? deliver_dgram(so, to, m, sx->sx_nonblock)
                                        : deliver_conn(to, m);
    if (err && m)
        unix_msg_free(m);
    if (err == -ECONNREFUSED)
        forget_peer(so, to);
    if (err == -EPIPE)
        return socket_epipe(sx->sx_flags);
    return err ? err : (int64_t)len;
}

/* A stream: pieces of at most half the send buffer. */
static int64_t send_stream(struct socket *so, struct socket *to, struct sockxfer *sx,
                           struct scm *scm)
{
    size_t total = sx->sx_resid, sent = 0;
    int err = 0;
    while (sent < total) {
        size_t n = MIN(total - sent, MIN((size_t)so->so_sndbuf / 2 - 64, (size_t)STREAM_CHUNK));
        struct unix_msg *m = NULL;
        if ((err = wait_room(so, sx->sx_nonblock)))
            break;
        if ((err = msg_make(so, sx, n, scm, &m)))
            break;
        if ((err = deliver_conn(to, m))) {
            unix_msg_free(m);
            break;
        }
        sent += n;
    }
    if (sent)
        return (int64_t)sent;
    return err == -EPIPE ? socket_epipe(sx->sx_flags) : err;
}

int64_t unix_send(struct socket *so, struct sockxfer *sx)
{
    if (sx->sx_flags & MSG_OOB)
        return -EOPNOTSUPP;
    if (so->so_type == SOCK_STREAM && sx->sx_name) {
        mutex_enter(&so->so_lock);
        bool conn = sotounp(so)->u_connected;
        mutex_exit(&so->so_lock);
        return conn ? -EISCONN : -EOPNOTSUPP;
    }
    if (so->so_type == SOCK_SEQPACKET)
        sx->sx_name = NULL;             /* a seqpacket socket ignores it, as Linux */
    struct scm scm = { 0 };
    int err = scm_parse(sx, &scm);
    struct socket *to = NULL;
    if (!err)
        err = send_target(so, sx, &to);
    if (err) {
        scm_drop(&scm);
        return err == -EPIPE ? socket_epipe(sx->sx_flags) : err;
    }
    int64_t r = so->so_type == SOCK_STREAM ? send_stream(so, to, sx, &scm)
                                           : send_record(so, to, sx, &scm);
    scm_drop(&scm);
    socket_rele(to);
    return r;
}

/* ---- receive ---- */

static void put_cmsg(struct sockxfer *sx, size_t *used, int type, const void *data, size_t n)
{
    size_t room = sx->sx_controllen - *used;
    if (room < CMSG_HDR + n) {
        sx->sx_oflags |= MSG_CTRUNC;
        return;
    }
    struct cmsghdr_k h = { CMSG_HDR + n, SOL_SOCKET, type };
    memcpy((char *)sx->sx_control + *used, &h, sizeof h);
    memcpy((char *)sx->sx_control + *used + CMSG_HDR, data, n);
    *used += MIN(CMSG_ALIGN(CMSG_HDR + n), room);
}

/* Descriptors taken off a message under the receiver's lock, installed
 * after it is let go (fd_install and file_rele take other locks). */
struct rights {
    struct file **files;
    int n;
};

/* Install the descriptors as SCM_RIGHTS, as many as the control buffer
 * and the table take; the rest are closed (MSG_CTRUNC). */
static void put_rights(struct sockxfer *sx, struct rights *r)
{
    if (!r->n)
        return;
    size_t used = sx->sx_controlout, room = sx->sx_controllen - used;
    int max = room > CMSG_HDR ? (int)((room - CMSG_HDR) / sizeof(int)) : 0;
    int fds[SCM_MAX_FD], n = 0;
    unix_inflight(r->files, r->n, -1);
    for (int i = 0; i < r->n; i++) {
        int fd = n < max ? fd_install(curproc(), r->files[i], 0, sx->sx_fdflags) : -1;
        if (fd >= 0)
            fds[n++] = fd;
        else
            file_rele(r->files[i]);
    }
    if (n < r->n)
        sx->sx_oflags |= MSG_CTRUNC;
    if (n)
        put_cmsg(sx, &used, SCM_RIGHTS, fds, (size_t)n * sizeof(int));
    sx->sx_controlout = used;
    kfree(r->files);
    r->files = NULL;
    r->n = 0;
}

/* m's descriptors, taken off it into r. */
static void take_rights(struct unix_msg *m, struct rights *r)
{
    if (!m->m_nfiles)
        return;
    r->files = m->m_files;
    r->n = m->m_nfiles;
    m->m_files = NULL;
    m->m_nfiles = 0;
}

/* What travels beside a message's data, to the receiver of sx: its
 * credentials now (SO_PASSCRED), its descriptors into r (none when
 * peeking: they stay with the message). */
static void put_control(struct socket *so, struct sockxfer *sx, struct unix_msg *m,
                        struct rights *r)
{
    size_t used = 0;
    if (so->so_passcred)
        put_cmsg(sx, &used, SCM_CREDENTIALS, &m->m_cred, sizeof m->m_cred);
    sx->sx_controlout = used;
    if (r)
        take_rights(m, r);
}

static void put_name(struct sockxfer *sx, struct unix_msg *m)
{
    /* An unnamed sender: no address at all (Linux's unix_copy_addr). */
    if (!sx->sx_name || !m->m_addrlen)
        return;
    memcpy(sx->sx_name, m->m_addr, MIN((size_t)m->m_addrlen, sx->sx_namelen));
    sx->sx_nameout = m->m_addrlen;
}

static int has_message(struct socket *so) { return sotounp(so)->u_rq != NULL; }

/* Wait, holding so_lock, for a message: 0, or 0 with *eof set, or an
 * error. */
static int wait_data(struct socket *so, struct sockxfer *sx, bool *eof)
{
    return socket_wait_readable(so, sx->sx_nonblock, has_message, eof);
}

static struct unix_msg *dequeue(struct socket *so)
{
    struct unpcb *u = sotounp(so);
    struct unix_msg *m = u->u_rq;
    u->u_rq = m->m_next;
    if (!u->u_rq)
        u->u_rqtail = &u->u_rq;
    u->u_rqlen--;
    socket_notify(so, POLL_WRITESIDE);  /* room for a datagram sender waiting on the queue */
    return m;
}

static int64_t recv_record(struct socket *so, struct sockxfer *sx)
{
    bool peek = sx->sx_flags & MSG_PEEK, eof = false;
    struct rights rights = { 0 };
    size_t want = sx->sx_resid;
    char *kbuf = peek ? kmalloc(want ? want : 1) : NULL;
    if (peek && !kbuf)
        return -ENOMEM;
    mutex_enter(&so->so_lock);
    int err = wait_data(so, sx, &eof);
    struct unix_msg *m = NULL;
    size_t n = 0, len = 0;
    if (!err && !eof) {
        m = peek ? sotounp(so)->u_rq : dequeue(so);
        len = m->m_len;
        n = MIN(want, len);
        if (peek)
            memcpy(kbuf, m->m_data, n);
        put_name(sx, m);
        put_control(so, sx, m, peek ? NULL : &rights);
    }
    mutex_exit(&so->so_lock);
    put_rights(sx, &rights);
    if (!err && !eof && sockxfer_out(sx, peek ? kbuf : m->m_data, n))
        err = -EFAULT;
    if (m && !peek)
        unix_msg_free(m);
    kfree(kbuf);
    if (err)
        return err;
    if (len > n)
        sx->sx_oflags |= MSG_TRUNC;
    return (int64_t)((sx->sx_flags & MSG_TRUNC) ? len : n);   /* MSG_TRUNC asks the true size */
}

/* Gather up to n stream bytes into kbuf under so_lock; consumed
 * messages go to *done.  The bytes before a message with descriptors
 * join its read, which ends with it (Linux's unix_stream_read_generic);
 * a later round of MSG_WAITALL stops before one. */
static size_t gather(struct socket *so, struct sockxfer *sx, char *kbuf, size_t n, bool first,
                     struct unix_msg ***donetail, struct rights *r)
{
    struct unpcb *u = sotounp(so);
    bool peek = sx->sx_flags & MSG_PEEK, stop = false;
    size_t got = 0;
    struct unix_msg *m = u->u_rq;
    while (m && got < n && !stop) {
        bool files = m->m_nfiles != 0;
        if (files && !first)
            break;                  /* a later round (MSG_WAITALL) takes no descriptors */
        if (got == 0 && first) {
            put_name(sx, m);
            put_control(so, sx, m, peek ? NULL : r);
        } else if (files && !peek) {
            take_rights(m, r);      /* bytes before it join its read */
        }
        stop = files;               /* and the read ends with it, as Linux's */
        size_t k = MIN(n - got, m->m_len - m->m_off);
        memcpy(kbuf + got, m->m_data + m->m_off, k);
        got += k;
        if (peek) {
            m = m->m_next;
            continue;
        }
        m->m_off += k;
        if (m->m_off < m->m_len)
            break;
        struct unix_msg *d = dequeue(so);
        d->m_next = NULL;
        **donetail = d;
        *donetail = &d->m_next;
        m = u->u_rq;
    }
    return got;
}

static int64_t recv_stream(struct socket *so, struct sockxfer *sx)
{
    struct unpcb *u = sotounp(so);
    size_t chunk = MIN(sx->sx_resid, (size_t)STREAM_CHUNK);
    char *kbuf = kmalloc(chunk ? chunk : 1);
    if (!kbuf)
        return -ENOMEM;
    size_t copied = 0;
    int err = 0;
    bool waitall = (sx->sx_flags & MSG_WAITALL) && !(sx->sx_flags & MSG_PEEK);
    do {
        bool eof = false;
        struct rights rights = { 0 };
        struct unix_msg *done = NULL, **donetail = &done;
        mutex_enter(&so->so_lock);
        err = u->u_connected ? 0 : -EINVAL;
        if (!err && !(copied && !waitall))
            err = wait_data(so, sx, &eof);
        size_t got = 0;
        if (!err && !eof && u->u_rq)
            got = gather(so, sx, kbuf, MIN(sx->sx_resid, chunk), copied == 0, &donetail,
                         &rights);
        mutex_exit(&so->so_lock);
        put_rights(sx, &rights);
        unix_msgs_free(done);
        if (got && sockxfer_out(sx, kbuf, got))
            err = -EFAULT;
        copied += got;
        if (err || eof || !got || (sx->sx_flags & MSG_PEEK))
            break;
    } while (sx->sx_resid && waitall);
    kfree(kbuf);
    if (copied)
        return (int64_t)copied;
    return err;
}

int64_t unix_recv(struct socket *so, struct sockxfer *sx)
{
    if (sx->sx_flags & MSG_OOB)
        return -EOPNOTSUPP;
    if (so->so_type == SOCK_SEQPACKET) {
        mutex_enter(&so->so_lock);
        bool conn = sotounp(so)->u_connected;
        mutex_exit(&so->so_lock);
        if (!conn)
            return -ENOTCONN;
    }
    return so->so_type == SOCK_STREAM ? recv_stream(so, sx) : recv_record(so, sx);
}
