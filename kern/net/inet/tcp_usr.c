/*
 * TCP's socket calls: listen, accept, connect, send, receive, shutdown,
 * close, poll and the IPPROTO_TCP options, with Linux's errno (its
 * net/ipv4/af_inet.c and tcp.c are the reference the user tests check
 * against on the host).  Theory in kern/net/inet/tcp_input.c; locks in
 * tcp_impl.h.
 *
 * Data crosses user memory through a bounce buffer with no lock held:
 * a send copies a piece in, then appends it to the send ring under the
 * socket's lock (waiting for room); a receive gathers from the receive
 * ring under the lock, lets it go, then copies out.
 */
#include <kern/net/inet/tcp_impl.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <drivers/platform/timer.h>

#define SOMAXCONN       4096
#define CHUNK           65536       /* the most one pass of send or receive moves */
#define TCP_NODELAY     1
#define TCP_MAXSEG      2
#define TCP_CORK        3
#define TCP_KEEPIDLE    4
#define TCP_KEEPINTVL   5
#define TCP_KEEPCNT     6
#define TCP_INFO        11
#define TCP_QUICKACK    12
#define TCP_CONGESTION  13

bool tcp_connected(struct socket *so)
{
    enum tcp_state s = sototcp(so)->t_state;
    return s != TCPS_CLOSED && s != TCPS_LISTEN && s != TCPS_SYN_SENT;
}

static bool can_send(enum tcp_state s) { return s == TCPS_ESTABLISHED || s == TCPS_CLOSE_WAIT; }

static bool connecting(enum tcp_state s) { return s == TCPS_SYN_SENT || s == TCPS_SYN_RECEIVED; }

/* ---- listen and accept ---- */

int tcp_listen(struct socket *so, int backlog)
{
    struct tcpcb *tp = sototcp(so);
    struct inpcb *inp = sotoinp(so);
    int err = 0;
    mutex_enter(&so->so_lock);
    if (tp->t_sostate != SS_UNCONNECTED || (tp->t_state != TCPS_CLOSED && tp->t_state != TCPS_LISTEN))
        err = -EINVAL;
    else if (!inp->inp_bound)
        err = inpcb_bind(inp, INADDR_ANY, 0);
    if (!err) {
        __atomic_store_n(&tp->t_backlog, (unsigned)backlog > SOMAXCONN ? SOMAXCONN : backlog,
                         __ATOMIC_RELAXED);
        so->so_listening = true;
        so->so_shut = 0;
        tcp_set_state(tp, TCPS_LISTEN);
    }
    mutex_exit(&so->so_lock);
    return err;
}

int tcp_accept(struct socket *so, bool nonblock, struct socket **newp)
{
    struct tcpcb *lt = sototcp(so);
    uint64_t deadline = socket_deadline(so->so_rcvtimeo);
    int err = 0;
    mutex_enter(&so->so_lock);
    while (!lt->t_aq) {
        if (lt->t_state != TCPS_LISTEN) {
            err = -EINVAL;
            break;
        }
        if (nonblock) {
            err = -EAGAIN;
            break;
        }
        if ((err = socket_sleep(&so->so_rchan, deadline)))
            break;
    }
    struct tcpcb *tp = err ? NULL : lt->t_aq;
    if (tp) {
        lt->t_aq = tp->t_aqnext;
        if (!lt->t_aq)
            lt->t_aqtail = &lt->t_aq;
        __atomic_store_n(&lt->t_aqlen, lt->t_aqlen - 1, __ATOMIC_RELAXED);
    }
    mutex_exit(&so->so_lock);
    if (tp)
        *newp = tp->t_so;           /* the queue's reference passes to the caller */
    return err;
}

/* ---- connect ---- */

/* Wait, holding so_lock, while the handshake goes on. */
static int wait_connected(struct socket *so, struct tcpcb *tp)
{
    uint64_t deadline = socket_deadline(so->so_sndtimeo);
    while (connecting(tp->t_state)) {
        int err = socket_sleep(&so->so_wchan, deadline);
        if (err)
            return err == -EAGAIN ? -EINPROGRESS : err;
    }
    return 0;
}

/* The end of a connect (so_lock held): 0 when established, else the
 * reason it failed (the pending error, taken). */
static int connect_result(struct socket *so, struct tcpcb *tp)
{
    if (tp->t_state != TCPS_CLOSED)
        return 0;
    int err = so->so_error ? -so->so_error : -ECONNABORTED;
    so->so_error = 0;
    so->so_shut = 0;                /* Linux's tcp_disconnect: ready for another connect */
    tp->t_sostate = SS_UNCONNECTED;
    return err;
}

/* AF_UNSPEC: break the association (Linux's tcp_disconnect). */
static int disconnect(struct socket *so, struct tcpcb *tp)
{
    bool rele = false;
    if (tp->t_state == TCPS_LISTEN) {
        mutex_exit(&so->so_lock);
        return 0;
    }
    if (tp->t_state != TCPS_CLOSED)
        rele = tcp_drop(tp, 0);
    tp->t_sostate = SS_UNCONNECTED;
    mutex_exit(&so->so_lock);
    if (rele)
        socket_rele(so);
    return 0;
}

static int start_connect(struct socket *so, struct tcpcb *tp, in_addr_t faddr, uint16_t fport)
{
    struct inpcb *inp = sotoinp(so);
    int err = inpcb_connect(inp, faddr, fport);
    if (!err)
        err = tcp_rings_alloc(tp);
    if (err)
        return err;
    so->so_shut = 0;
    so->so_error = 0;
    tp->ack_now = tp->fin_queued = tp->fin_acked = false;
    tp->snd.r_len = tp->rcv.r_len = 0;
    tp->iss = tcp_new_iss();
    tp->ts_offset = tcp_new_iss();
    tp->t_ts_ok = tp->ts_recent_set = false;
    tp->snd_una = tp->snd_nxt = tp->snd_max = tp->snd_sml = tp->iss;
    tp->snd_wnd = 1;                /* until the peer's SYN says */
    tp->cwnd = 10 * TCP_MSS_DEFAULT;
    tp->ssthresh = UINT32_MAX;
    tp->rxtshift = 0;
    tp->t_sostate = SS_CONNECTING;
    tcp_set_state(tp, TCPS_SYN_SENT);
    tcp_output(tp);
    return 0;
}

int tcp_connect(struct socket *so, in_addr_t faddr, uint16_t fport, bool nonblock)
{
    struct tcpcb *tp = sototcp(so);
    mutex_enter(&so->so_lock);
    if (faddr == INADDR_ANY && fport == 0)
        return disconnect(so, tp);
    int err;
    if (tp->t_sostate == SS_CONNECTED)
        err = tp->connect_unseen ? 0 : -EISCONN;
    else if (tp->t_sostate == SS_CONNECTING)
        err = connecting(tp->t_state) ? -EALREADY : 0;
    else if (tp->t_state != TCPS_CLOSED)
        err = -EISCONN;             /* a listener */
    else if (!(err = start_connect(so, tp, faddr, fport)))
        err = -EINPROGRESS;
    if ((err == -EINPROGRESS || err == -EALREADY) && !nonblock)
        err = wait_connected(so, tp);
    if (!err && (err = connect_result(so, tp)) == 0) {
        tp->t_sostate = SS_CONNECTED;
        tp->connect_unseen = false;
    }
    mutex_exit(&so->so_lock);
    return err;
}

/* ---- send ---- */

/* Wait, holding so_lock, until the connection can take data and the send
 * ring has room: 0, or why it cannot. */
static int wait_room(struct socket *so, struct tcpcb *tp, bool nonblock)
{
    uint64_t deadline = socket_deadline(so->so_sndtimeo);
    for (;;) {
        if (so->so_error) {
            int err = -so->so_error;
            so->so_error = 0;
            return err;
        }
        if ((so->so_shut & SO_SEND_SHUT) || tp->fin_queued || tp->fin_acked)
            return -EPIPE;
        if (can_send(tp->t_state) && tp->snd.r_len < tp->snd.r_size)
            return 0;
        if (!connecting(tp->t_state) && !can_send(tp->t_state))
            return -EPIPE;
        if (nonblock)
            return -EAGAIN;
        int err = socket_sleep(&so->so_wchan, deadline);
        if (err)
            return err;
    }
}

/* Append n bytes of kbuf to the send ring, waiting for room: how many
 * went in, or an error when none did. */
static int64_t append(struct socket *so, struct tcpcb *tp, const char *kbuf, size_t n,
                      bool nonblock)
{
    size_t done = 0;
    int err = 0;
    mutex_enter(&so->so_lock);
    while (done < n && !(err = wait_room(so, tp, nonblock))) {
        done += ring_append(&tp->snd, kbuf + done, n - done);
        tcp_output(tp);
    }
    mutex_exit(&so->so_lock);
    return done ? (int64_t)done : err;
}

/* How much the next pass may copy in: the room there is now (at least
 * one byte once the connection can take data), or an error. */
static int64_t room_now(struct socket *so, struct tcpcb *tp, size_t want, bool nonblock)
{
    mutex_enter(&so->so_lock);
    int err = wait_room(so, tp, nonblock);
    size_t room = err ? 0 : tp->snd.r_size - tp->snd.r_len;
    mutex_exit(&so->so_lock);
    return err ? err : (int64_t)MIN(MIN(room, want), (size_t)CHUNK);
}

int64_t tcp_send(struct socket *so, struct sockxfer *sx)
{
    struct tcpcb *tp = sototcp(so);
    size_t sent = 0;
    int64_t r = 0;
    char *kbuf = NULL;
    while (sx->sx_resid) {
        r = room_now(so, tp, sx->sx_resid, sx->sx_nonblock);
        if (r < 0)
            break;
        if (!kbuf && !(kbuf = kmalloc(CHUNK))) {
            r = -ENOBUFS;
            break;
        }
        size_t n = (size_t)r;
        if (sockxfer_in(sx, kbuf, n)) {
            r = -EFAULT;
            break;
        }
        r = append(so, tp, kbuf, n, sx->sx_nonblock);
        if (r > 0)
            sent += (size_t)r;
        if (r < (int64_t)n)
            break;
    }
    kfree(kbuf);
    if (sent)
        return (int64_t)sent;
    if (r == -EPIPE)
        return socket_epipe(sx->sx_flags);
    return r;
}

/* ---- receive ---- */

/* The peer may send more once this much was read: tell it when the window
 * grew by half the buffer or from nothing (receiver-side silly window
 * avoidance, RFC 1122 4.2.3.3). */
static void window_update(struct tcpcb *tp)
{
    uint32_t offered = tp->rcv_adv - tp->rcv_nxt;
    uint32_t now = tcp_rcv_window(tp);
    if (now > offered && (now - offered >= tp->rcv.r_size / 2 || offered == 0)) {
        tp->ack_now = true;
        tcp_output(tp);
    }
}

/* The application has read all there was: a delayed ACK goes now unless
 * the connection is interactive (its answer will carry it), as Linux's
 * tcp_cleanup_rbuf does, so that a sender holding a small segment back
 * (Nagle) does not wait out the delay. */
static void ack_after_read(struct tcpcb *tp)
{
    if (tp->delack_at && !tp->pingpong && tp->rcv.r_len == 0) {
        tp->ack_now = true;
        tcp_output(tp);
    }
}

/* Bytes to read (1), none yet (0), or a connection that never was
 * (-ENOTCONN); one that was and is over has its reading side shut. */
static int has_bytes(struct socket *so)
{
    struct tcpcb *tp = sototcp(so);
    if (tp->rcv.r_len)
        return 1;
    if (tp->t_state == TCPS_LISTEN ||
        (tp->t_state == TCPS_CLOSED && tp->t_sostate != SS_CONNECTED && !so->so_error))
        return -ENOTCONN;
    return 0;
}

int64_t tcp_recv(struct socket *so, struct sockxfer *sx)
{
    if (sx->sx_flags & MSG_OOB)
        return -EINVAL;             /* no urgent data is ever kept */
    struct tcpcb *tp = sototcp(so);
    bool peek = sx->sx_flags & MSG_PEEK;
    bool waitall = (sx->sx_flags & MSG_WAITALL) && !peek;
    size_t chunk = MIN(sx->sx_resid, (size_t)CHUNK), copied = 0;
    char *kbuf = kmalloc(chunk ? chunk : 1);
    if (!kbuf)
        return -ENOMEM;
    int err = 0;
    do {
        bool eof = false;
        mutex_enter(&so->so_lock);
        err = socket_wait_readable(so, sx->sx_nonblock, has_bytes, &eof);
        size_t n = err || eof ? 0 : MIN(MIN(sx->sx_resid, chunk), tp->rcv.r_len);
        if (n) {
            ring_copy(&tp->rcv, 0, kbuf, n);
            if (!peek) {
                ring_drop(&tp->rcv, n);
                window_update(tp);
                ack_after_read(tp);
                tcp_timers_update(tp);
            }
        }
        mutex_exit(&so->so_lock);
        if (n && sockxfer_out(sx, kbuf, n))
            err = -EFAULT;
        copied += n;
        if (err || eof || !n)
            break;
    } while (sx->sx_resid && waitall);
    kfree(kbuf);
    return copied ? (int64_t)copied : err;
}

/* ---- shutdown and close ---- */

/* Queue our FIN: the states that still send move on (so_lock held). */
static void send_fin(struct tcpcb *tp)
{
    if (tp->t_state == TCPS_ESTABLISHED || tp->t_state == TCPS_SYN_RECEIVED)
        tcp_set_state(tp, TCPS_FIN_WAIT_1);
    else if (tp->t_state == TCPS_CLOSE_WAIT)
        tcp_set_state(tp, TCPS_LAST_ACK);
    else
        return;
    tp->fin_queued = true;
    tcp_output(tp);
}

/* A listener closes: its queued connections are reset (so_lock held);
 * they are returned for the caller to drop. */
static struct tcpcb *close_listener(struct tcpcb *lt)
{
    struct tcpcb *q = lt->t_aq;
    lt->t_aq = NULL;
    lt->t_aqtail = &lt->t_aq;
    __atomic_store_n(&lt->t_aqlen, 0, __ATOMIC_RELAXED);
    lt->t_so->so_listening = false;
    return q;
}

static void drop_queued(struct tcpcb *q)
{
    while (q) {
        struct tcpcb *next = q->t_aqnext;
        struct socket *so = q->t_so;
        mutex_enter(&so->so_lock);
        bool rele = tcp_drop(q, ECONNABORTED);
        mutex_exit(&so->so_lock);
        if (rele)
            socket_rele(so);
        socket_rele(so);            /* the queue's reference */
        q = next;
    }
}

int tcp_shutdown(struct socket *so, int how)
{
    struct tcpcb *tp = sototcp(so);
    struct tcpcb *queued = NULL;
    bool rele = false;
    int err = 0;
    mutex_enter(&so->so_lock);
    if (tp->t_state == TCPS_CLOSED)
        err = -ENOTCONN;
    if (how != SHUT_WR)
        so->so_shut |= SO_RCV_SHUT;
    if (tp->t_state == TCPS_LISTEN && how != SHUT_WR) {
        queued = close_listener(tp);
        rele = tcp_close(tp, 0);    /* accept() then answers EINVAL */
    } else if (tp->t_state == TCPS_SYN_SENT) {
        rele = tcp_close(tp, 0);
    } else if (how != SHUT_RD) {
        so->so_shut |= SO_SEND_SHUT;
        send_fin(tp);
    }
    tcp_timers_update(tp);
    mutex_exit(&so->so_lock);
    socket_notify(so, POLL_BOTHSIDES);
    drop_queued(queued);
    if (rele)
        socket_rele(so);
    return err;
}

/* SO_LINGER of some seconds: the close waits (so_lock held, let go while
 * asleep) until everything sent and the FIN are acknowledged, the
 * connection is gone, the time is up or a signal comes; the connection
 * goes on as an orphan if it is not done. */
static void linger_wait(struct socket *so, struct tcpcb *tp)
{
    uint64_t deadline = uptime_ns() + (uint64_t)so->so_linger * 1000000000ULL;
    while (!tp->fin_acked && tp->t_state != TCPS_CLOSED && tp->t_state != TCPS_TIME_WAIT)
        if (socket_sleep(&so->so_wchan, deadline) != 0)
            break;
}

void tcp_release(struct socket *so)
{
    struct tcpcb *tp = sototcp(so);
    struct tcpcb *queued = NULL;
    bool rele = false;
    mutex_enter(&so->so_lock);
    tp->orphan = true;
    so->so_shut |= SO_RCV_SHUT;
    if (tp->t_state == TCPS_LISTEN) {
        queued = close_listener(tp);
        rele = tcp_close(tp, 0);
    } else if (tp->t_state == TCPS_CLOSED || tp->t_state == TCPS_SYN_SENT) {
        rele = tcp_close(tp, 0);
    } else if (tp->rcv.r_len || so->so_linger == 0) {
        rele = tcp_drop(tp, 0);     /* unread data, or SO_LINGER of 0: reset, as Linux */
    } else {
        send_fin(tp);
        if (tp->t_state == TCPS_FIN_WAIT_2)
            tp->close_at = uptime_ns() + TCP_FIN_TIMEOUT;
        tcp_shed_rings(tp);
    }
    tcp_timers_update(tp);
    if (!rele && so->so_linger > 0)
        linger_wait(so, tp);
    mutex_exit(&so->so_lock);
    drop_queued(queued);
    if (rele)
        socket_rele(so);
}

/* ---- poll, FIONREAD, options ---- */

short tcp_poll(struct socket *so, short events)
{
    struct tcpcb *tp = sototcp(so);
    short r = 0;
    mutex_enter(&so->so_lock);
    enum tcp_state s = tp->t_state;
    r |= socket_poll_shut(so) & POLLERR;
    if (s == TCPS_LISTEN) {
        if (tp->t_aq)
            r |= POLLIN | POLLRDNORM;
    } else {
        r |= socket_poll_shut(so);
        if (s == TCPS_CLOSED)
            r |= POLLHUP;
        if (!connecting(s) && tp->rcv.r_len)
            r |= POLLIN | POLLRDNORM;
        bool room = !tp->snd.r_buf || tp->snd.r_size - tp->snd.r_len >= tp->snd.r_len / 2;
        if (!connecting(s) && !(so->so_shut & SO_SEND_SHUT) && room)
            r |= POLLOUT | POLLWRNORM;
    }
    mutex_exit(&so->so_lock);
    return (short)(r & (events | POLLERR | POLLHUP));
}

int tcp_nread(struct socket *so)
{
    mutex_enter(&so->so_lock);
    int n = (int)sototcp(so)->rcv.r_len;
    mutex_exit(&so->so_lock);
    return n;
}

/* Linux's numbers for the states (include/net/tcp_states.h). */
static const uint8_t linux_state[] = {
    [TCPS_CLOSED] = 7, [TCPS_LISTEN] = 10, [TCPS_SYN_SENT] = 2, [TCPS_SYN_RECEIVED] = 3,
    [TCPS_ESTABLISHED] = 1, [TCPS_CLOSE_WAIT] = 8, [TCPS_FIN_WAIT_1] = 4, [TCPS_CLOSING] = 11,
    [TCPS_LAST_ACK] = 9, [TCPS_FIN_WAIT_2] = 5, [TCPS_TIME_WAIT] = 6,
};

/* TCP_INFO's answer: Linux 6.1's struct tcp_info (include/uapi/linux/
 * tcp.h), 232 bytes; a caller with a shorter one gets its first bytes. */
struct tcp_info_k {
    uint8_t state, ca_state, retransmits, probes, backoff, options;
    uint8_t wscale;                 /* snd_wscale in the low 4 bits, rcv_wscale above */
    uint8_t app_limited;
    uint32_t rto, ato, snd_mss, rcv_mss;            /* times in microseconds */
    uint32_t unacked, sacked, lost, retrans, fackets;
    uint32_t last_data_sent, last_ack_sent, last_data_recv, last_ack_recv;  /* ms ago */
    uint32_t pmtu, rcv_ssthresh, rtt, rttvar, snd_ssthresh, snd_cwnd, advmss, reordering;
    uint32_t rcv_rtt, rcv_space, total_retrans;
    uint64_t pacing_rate, max_pacing_rate, bytes_acked, bytes_received;
    uint32_t segs_out, segs_in, notsent_bytes, min_rtt, data_segs_in, data_segs_out;
    uint64_t delivery_rate, busy_time, rwnd_limited, sndbuf_limited;
    uint32_t delivered, delivered_ce;
    uint64_t bytes_sent, bytes_retrans;
    uint32_t dsack_dups, reord_seen, rcv_ooopack, snd_wnd;
};
_Static_assert(sizeof(struct tcp_info_k) == 232, "Linux 6.1's struct tcp_info");

#define TCPI_OPT_TIMESTAMPS     1
#define TCPI_OPT_SACK           2
#define TCPI_OPT_WSCALE         4
#define TCP_CA_OPEN             0
#define TCP_CA_DISORDER         1
#define TCP_CA_RECOVERY         3
#define TCP_CA_LOSS             4
#define TCP_INFINITE_SSTHRESH   0x7fffffffu
#define TCP_REORDERING          3           /* Linux's net.ipv4.tcp_reordering */

static uint32_t ms_since(uint64_t then, uint64_t now)
{
    return (uint32_t)((now - MIN(then, now)) / 1000000);
}

/* Segments of mss bytes that n bytes take. */
static uint32_t segments(uint64_t n, uint32_t mss)
{
    return mss ? (uint32_t)((n + mss - 1) / mss) : 0;
}

static uint8_t ca_state(const struct tcpcb *tp)
{
    if (tp->rxtshift)
        return TCP_CA_LOSS;
    if (tp->in_recovery)
        return TCP_CA_RECOVERY;
    return tp->dupacks ? TCP_CA_DISORDER : TCP_CA_OPEN;
}

/* The connection's window, timing and progress, as Linux's tcp_get_info
 * reports them (so_lock held).  Always 0 here: what needs more of SACK
 * than Tempest keeps (lost, fackets, dsack_dups, reord_seen), delayed ACKs (ato), pacing and
 * the delivery-rate estimator (pacing_rate, delivery_rate, busy_time,
 * rwnd_limited, sndbuf_limited, delivered), ECN (delivered_ce) and the
 * receiver's RTT estimate (rcv_rtt); max_pacing_rate is "no limit". */
/* The bytes the peer SACKed above snd_una. */
static uint32_t sacked_bytes(const struct tcpcb *tp)
{
    uint32_t n = 0;
    for (int i = 0; i < tp->snd_sacked_n; i++)
        n += tp->snd_sacked[i].end - tp->snd_sacked[i].start;
    return n;
}

static void tcp_info_fill(struct tcpcb *tp, struct tcp_info_k *ti)
{
    const struct tcp_stats *st = &tp->t_stats;
    uint64_t now = uptime_ns();
    bool up = tcp_connected(tp->t_so);
    uint32_t mss = up ? tp->t_maxseg : TCP_MSS_DEFAULT;
    uint32_t flight = tp->snd_max - tp->snd_una;
    memset(ti, 0, sizeof *ti);
    ti->state = linux_state[tp->t_state];
    ti->ca_state = ca_state(tp);
    ti->retransmits = ti->backoff = (uint8_t)MIN(tp->rxtshift, 255);
    ti->probes = (uint8_t)MIN(tp->keep_probes, 255);
    ti->options = (tp->t_ts_ok ? TCPI_OPT_TIMESTAMPS : 0) | (tp->t_sack_ok ? TCPI_OPT_SACK : 0) |
                  (tp->t_wscale_ok ? TCPI_OPT_WSCALE : 0);
    ti->wscale = (uint8_t)((tp->snd_wscale & 15) | (tp->rcv_wscale & 15) << 4);
    ti->rto = (uint32_t)(tp->rto / 1000);
    ti->snd_mss = ti->rcv_mss = ti->advmss = mss;
    if (tp->t_state == TCPS_LISTEN) {
        ti->unacked = (uint32_t)tp->t_aqlen;    /* as Linux: the accept queue, its limit */
        ti->sacked = (uint32_t)tp->t_backlog;
    } else {
        ti->unacked = segments(flight, mss);
        ti->sacked = segments(sacked_bytes(tp), mss);
        ti->retrans = tp->rxtshift ? segments(tp->snd_nxt - tp->snd_una, mss) : 0;
    }
    ti->last_data_sent = ms_since(st->last_data_sent, now);
    ti->last_data_recv = ms_since(st->last_data_recv, now);
    ti->last_ack_recv = ms_since(tp->t_rcvtime, now);
    ti->pmtu = up ? mss + IP_HDR_LEN + TCP_HDR_LEN + (tp->t_ts_ok ? TCP_TS_LEN : 0) : 0;
    ti->rcv_ssthresh = ti->rcv_space = (uint32_t)tp->rcv.r_size;
    ti->rtt = (uint32_t)(tp->srtt / 1000);
    ti->rttvar = (uint32_t)(tp->rttvar / 1000);
    ti->snd_ssthresh = tp->ssthresh >= TCP_INFINITE_SSTHRESH ? TCP_INFINITE_SSTHRESH
                                                             : tp->ssthresh / mss;
    ti->snd_cwnd = tp->cwnd / mss;
    ti->reordering = TCP_REORDERING;
    ti->total_retrans = st->total_retrans;
    ti->max_pacing_rate = UINT64_MAX;
    ti->bytes_acked = st->bytes_acked;
    ti->bytes_received = st->bytes_received;
    ti->segs_out = st->segs_out;
    ti->segs_in = st->segs_in;
    ti->notsent_bytes = (uint32_t)(tp->snd.r_len - MIN(tp->snd.r_len, (size_t)flight));
    ti->min_rtt = st->min_rtt ? (uint32_t)(st->min_rtt / 1000) : UINT32_MAX;
    ti->data_segs_in = st->data_segs_in;
    ti->data_segs_out = st->data_segs_out;
    ti->bytes_sent = st->bytes_sent;
    ti->bytes_retrans = st->bytes_retrans;
    ti->rcv_ooopack = st->rcv_ooopack;
    ti->snd_wnd = tp->snd_wnd;
}

static int *int_field(struct tcpcb *tp, int name)
{
    switch (name) {
    case TCP_KEEPIDLE: return &tp->keepidle;
    case TCP_KEEPINTVL: return &tp->keepintvl;
    case TCP_KEEPCNT: return &tp->keepcnt;
    default: return NULL;
    }
}

int tcp_getopt(struct socket *so, int name, void *val, size_t *len)
{
    struct tcpcb *tp = sototcp(so);
    int v;
    mutex_enter(&so->so_lock);
    if (name == TCP_INFO) {
        tcp_info_fill(tp, val);
        mutex_exit(&so->so_lock);
        *len = sizeof(struct tcp_info_k);
        return 0;
    }
    int *f = int_field(tp, name);
    int err = 0;
    if (f)
        v = *f;
    else if (name == TCP_NODELAY)
        v = tp->nodelay;
    else if (name == TCP_CORK)
        v = tp->cork;
    else if (name == TCP_MAXSEG)
        v = (int)(tcp_connected(so) ? tp->t_maxseg : TCP_MSS_DEFAULT);
    else if (name == TCP_QUICKACK)
        v = tp->quickack > 0;
    else if (name != TCP_CONGESTION)
        err = -ENOPROTOOPT;
    mutex_exit(&so->so_lock);
    if (err)
        return err;
    if (name == TCP_CONGESTION) {
        memset(val, 0, 16);
        memcpy(val, "reno", 4);
        *len = 16;
        return 0;
    }
    memcpy(val, &v, sizeof v);
    *len = sizeof v;
    return 0;
}

int tcp_keepalive_changed(struct socket *so)
{
    mutex_enter(&so->so_lock);
    tcp_timers_update(sototcp(so));
    mutex_exit(&so->so_lock);
    return 0;
}

/* TCP_QUICKACK, as Linux's: 1 acknowledges the next segments at once (and
 * an ACK being delayed now), 0 delays them; neither is permanent. */
static void set_quickack(struct tcpcb *tp, bool on)
{
    tp->quickack = on ? TCP_QUICKACK_SEGS : 0;
    if (on && tp->delack_at)
        tp->ack_now = true;
}

int tcp_setopt(struct socket *so, int name, const void *val, size_t len)
{
    struct tcpcb *tp = sototcp(so);
    if (name == TCP_CONGESTION)
        return len >= 4 && !memcmp(val, "reno", 4) ? 0 : -ENOENT;
    if (len < sizeof(int))
        return -EINVAL;
    int v;
    memcpy(&v, val, sizeof v);
    int err = 0;
    mutex_enter(&so->so_lock);
    int *f = int_field(tp, name);
    if (f)
        err = v < 1 || v > 32767 ? -EINVAL : (*f = v, 0);
    else if (name == TCP_NODELAY)
        tp->nodelay = v != 0;
    else if (name == TCP_CORK)
        tp->cork = v != 0;
    else if (name == TCP_MAXSEG)
        err = v < 0 || v > 65535 ? -EINVAL : 0;     /* kept at the path's */
    else if (name == TCP_QUICKACK)
        set_quickack(tp, v != 0);
    else
        err = -ENOPROTOOPT;
    if (!err && (name == TCP_NODELAY || name == TCP_CORK || name == TCP_QUICKACK))
        tcp_output(tp);             /* what Nagle, the cork or a delayed ACK held back goes */
    tcp_timers_update(tp);
    mutex_exit(&so->so_lock);
    return err;
}

int tcp_proc_state(struct socket *so, size_t *txq, size_t *rxq)
{
    struct tcpcb *tp = sototcp(so);
    if (tp->t_state == TCPS_LISTEN) {
        *rxq = (size_t)tp->t_aqlen;         /* as Linux: the accept queue and its limit */
        *txq = (size_t)tp->t_backlog;
    } else {
        *rxq = tp->rcv.r_len;
        *txq = tp->snd.r_len;
    }
    return linux_state[tp->t_state];
}

void tcp_sockstat_add(struct socket *so, struct tcp_sockstat *c)
{
    struct tcpcb *tp = sototcp(so);
    if (tp->t_state == TCPS_TIME_WAIT)
        c->tw++;
    else
        c->inuse++;
    c->orphan += tp->orphan;
    c->alloc++;
    c->ring_bytes += tp->snd.r_size + tp->rcv.r_size;
}
