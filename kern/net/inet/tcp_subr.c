/*
 * TCP's common parts: a connection's buffers (byte rings), its initial
 * sequence number, the window it offers, its states and its end.
 * Theory in kern/net/inet/tcp_input.c; locks in tcp_impl.h.
 */
#include <kern/net/inet/tcp_impl.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <kern/arch/arch.h>
#include <drivers/platform/timer.h>

#define RTO_INITIAL     1000000000ULL       /* RFC 6298: 1 s */

static uint32_t iss_count;          /* [a] */

/* ---- the rings ---- */

/* A ring with no buffer (not yet allocated, or shed in TIME_WAIT) takes
 * nothing and has nothing. */
size_t ring_append(struct tcp_ring *r, const void *data, size_t n)
{
    n = MIN(n, r->r_size - r->r_len);
    if (!n)
        return 0;
    size_t tail = (r->r_head + r->r_len) % r->r_size;
    size_t first = MIN(n, r->r_size - tail);
    memcpy(r->r_buf + tail, data, first);
    memcpy(r->r_buf, (const char *)data + first, n - first);
    r->r_len += n;
    return n;
}

size_t ring_write_at(struct tcp_ring *r, size_t off, const void *data, size_t n)
{
    size_t room = r->r_size - r->r_len;
    if (off >= room)
        return 0;
    n = MIN(n, room - off);
    size_t at = (r->r_head + r->r_len + off) % r->r_size;
    size_t first = MIN(n, r->r_size - at);
    memcpy(r->r_buf + at, data, first);
    memcpy(r->r_buf, (const char *)data + first, n - first);
    return n;
}

void ring_copy(const struct tcp_ring *r, size_t off, void *dst, size_t n)
{
    if (!n)
        return;
    size_t at = (r->r_head + off) % r->r_size;
    size_t first = MIN(n, r->r_size - at);
    memcpy(dst, r->r_buf + at, first);
    memcpy((char *)dst + first, r->r_buf, n - first);
}

void ring_drop(struct tcp_ring *r, size_t n)
{
    n = MIN(n, r->r_len);
    if (!n)
        return;
    r->r_head = (r->r_head + n) % r->r_size;
    r->r_len -= n;
}

static int ring_alloc(struct tcp_ring *r, size_t size)
{
    if (r->r_buf)
        return 0;
    if (!(r->r_buf = kmalloc(size)))
        return -ENOBUFS;
    r->r_size = size;
    r->r_head = r->r_len = 0;
    return 0;
}

static size_t ring_size(int buf) { return MAX((size_t)buf, (size_t)TCP_RING_MIN); }

int tcp_rings_alloc(struct tcpcb *tp)
{
    struct socket *so = tp->t_so;
    int err = ring_alloc(&tp->snd, ring_size(so->so_sndbuf));
    return err ? err : ring_alloc(&tp->rcv, ring_size(so->so_rcvbuf));
}

static void ring_free(struct tcp_ring *r)
{
    kfree(r->r_buf);
    memset(r, 0, sizeof *r);
}

static void rings_free(struct tcpcb *tp)
{
    ring_free(&tp->snd);
    ring_free(&tp->rcv);
    tcp_ooo_clear(tp);
}

void tcp_shed_rings(struct tcpcb *tp)
{
    if (tp->t_state != TCPS_TIME_WAIT)
        return;
    ring_free(&tp->snd);
    if (tp->orphan) {
        ring_free(&tp->rcv);
        tcp_ooo_clear(tp);
    }
}

/* RFC 6528 asks for a keyed hash of the ends beside the clock; the clock
 * and a counter are what this first stack has. */
uint32_t tcp_new_iss(void)
{
    return (uint32_t)(rdtsc() >> 6) + __atomic_add_fetch(&iss_count, 64000, __ATOMIC_RELAXED);
}

uint32_t tcp_rcv_window(const struct tcpcb *tp)
{
    if (!tp->rcv.r_buf)             /* a passive open's rings come with the handshake's ACK */
        return tp->t_state == TCPS_SYN_RECEIVED ? (uint32_t)ring_size(tp->t_so->so_rcvbuf) : 0;
    return (uint32_t)(tp->rcv.r_size - tp->rcv.r_len);
}

static bool synchronized_open(enum tcp_state s)
{
    return s == TCPS_ESTABLISHED || s == TCPS_CLOSE_WAIT;
}

/* /proc/net/snmp's TCP counts of a change of state (RFC 1213's rules:
 * CurrEstab counts ESTABLISHED and CLOSE_WAIT). */
static void count_state(enum tcp_state from, enum tcp_state to)
{
    if (from == TCPS_CLOSED && to == TCPS_SYN_SENT)
        inet_mib_count(TCM_ACTIVE_OPENS);
    if ((from == TCPS_SYN_SENT || from == TCPS_SYN_RECEIVED) &&
        (to == TCPS_CLOSED || to == TCPS_LISTEN))
        inet_mib_count(TCM_ATTEMPT_FAILS);
    if (synchronized_open(from) && to == TCPS_CLOSED)
        inet_mib_count(TCM_ESTAB_RESETS);
    if (synchronized_open(from) != synchronized_open(to))
        inet_mib_add(TCM_CURR_ESTAB, synchronized_open(to) ? 1 : -1);
}

void tcp_set_state(struct tcpcb *tp, enum tcp_state state)
{
    count_state(tp->t_state, state);
    tp->t_state = state;
    tcp_shed_rings(tp);
    socket_notify(tp->t_so, POLL_BOTHSIDES);
}

/* ---- attach, end, destroy ---- */

int tcp_attach(struct socket *so)
{
    struct tcpcb *tp = kzalloc(sizeof *tp);
    if (!tp)
        return -ENOMEM;
    tp->t_so = so;
    tp->t_state = TCPS_CLOSED;
    tp->t_maxseg = TCP_MSS_DEFAULT;
    tp->rto = RTO_INITIAL;
    tp->t_aqtail = &tp->t_aq;
    tp->keepidle = 7200;
    tp->keepintvl = 75;
    tp->keepcnt = 9;
    net_timer_init(&tp->t_timer, tcp_timer_fire, tp);
    so->so_sndbuf = TCP_SNDBUF;
    so->so_rcvbuf = TCP_RCVBUF;
    sotoinp(so)->inp_ppcb = tp;
    return 0;
}

void tcp_destroy(struct socket *so)
{
    struct tcpcb *tp = sototcp(so);
    net_timer_stop(&tp->t_timer);
    rings_free(tp);
    kfree(tp);
}

bool tcp_close(struct tcpcb *tp, int err)
{
    struct socket *so = tp->t_so;
    struct inpcb *inp = sotoinp(so);
    if (err)
        so->so_error = err;
    tp->rexmt_at = tp->close_at = 0;
    tp->snd.r_len = 0;
    tp->fin_queued = false;
    so->so_shut |= SO_RCV_SHUT | SO_SEND_SHUT;
    tcp_set_state(tp, TCPS_CLOSED);     /* a failed connect stays SS_CONNECTING: the next
                                         * connect() reports it (connect_result) */
    bool was = inp->inp_intable;
    inpcb_remove(inp);
    inp->inp_timewait = false;
    if (tp->t_listener) {
        /* A half-open connection leaves its listener's count.  Dropping
         * the listener here, under our lock, is safe: its destruction
         * takes no connection's lock. */
        __atomic_sub_fetch(&sototcp(tp->t_listener)->t_synlen, 1, __ATOMIC_RELAXED);
        socket_rele(tp->t_listener);
        tp->t_listener = NULL;
    }
    return was;
}

bool tcp_drop(struct tcpcb *tp, int err)
{
    struct inpcb *inp = sotoinp(tp->t_so);
    if (tp->t_state != TCPS_CLOSED && tp->t_state != TCPS_LISTEN && tp->t_state != TCPS_SYN_SENT)
        tcp_respond(inp->inp_laddr, inp->inp_lport, inp->inp_faddr, inp->inp_fport, tp->snd_nxt,
                    0, TH_RST);
    return tcp_close(tp, err);
}

void tcp_enter_time_wait(struct tcpcb *tp)
{
    tcp_set_state(tp, TCPS_TIME_WAIT);
    sotoinp(tp->t_so)->inp_timewait = true;
    tp->close_at = uptime_ns() + TCP_TIME_WAIT;
}

/* ---- timers ---- */

#define NSEC_PER_S      1000000000ULL

void tcp_keep_heard(struct tcpcb *tp)
{
    tp->t_rcvtime = uptime_ns();
    tp->keep_probes = 0;
}

/* When keepalive next acts on tp: an idle connection (nothing in flight)
 * whose socket set SO_KEEPALIVE is probed keepidle seconds after the last
 * segment came in, then every keepintvl seconds; 0 when it is not due. */
static uint64_t keep_deadline(const struct tcpcb *tp)
{
    bool on = (tp->t_so->so_bools >> SO_KEEPALIVE) & 1;
    bool synced = tp->t_state == TCPS_ESTABLISHED || tp->t_state == TCPS_CLOSE_WAIT ||
                  tp->t_state == TCPS_FIN_WAIT_2;
    if (!on || !synced || tp->snd_max != tp->snd_una)
        return 0;
    return tp->keep_probes ? tp->keep_sent + (uint64_t)tp->keepintvl * NSEC_PER_S
                           : tp->t_rcvtime + (uint64_t)tp->keepidle * NSEC_PER_S;
}

void tcp_timers_update(struct tcpcb *tp)
{
    uint64_t at = 0;
    tp->keep_at = keep_deadline(tp);
    if (tp->rexmt_at)
        at = tp->rexmt_at;
    if (tp->keep_at && (!at || tp->keep_at < at))
        at = tp->keep_at;
    if (tp->close_at && (!at || tp->close_at < at))
        at = tp->close_at;
    if (tp->delack_at && (!at || tp->delack_at < at))
        at = tp->delack_at;
    if (at && at != tp->timer_at)
        net_timer_arm(&tp->t_timer, at);
    tp->timer_at = at;      /* a timer that fires with nothing due does nothing */
}
