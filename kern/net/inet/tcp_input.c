/*
 * TCP (RFC 9293): segments that arrive.
 *
 * Theory.  A connection is a struct tcpcb behind the socket's inpcb.  Its
 * send buffer is a byte ring holding everything from snd_una on (sent and
 * not yet acknowledged, then not yet sent); its receive buffer a ring of
 * the bytes in order not yet read, whose free space is the window it
 * offers.  Output (tcp_output.c) sends what the peer's window, the
 * congestion window and Nagle's rule allow, and keeps one timer for
 * retransmission (RFC 6298: smoothed RTT, 200 ms floor, backoff, 15
 * tries), the zero-window probe and TIME_WAIT (60 s, Linux's).  Input,
 * here, follows RFC 9293's "SEGMENT ARRIVES" (3.10.7) state by state:
 * LISTEN makes a new connection per SYN (its own socket, in the
 * listener's count of half-open ones, at most SYN_QUEUE_MAX, and no
 * buffers: its send and receive rings are allocated when the handshake's
 * ACK comes, so that a flood of SYNs holds little memory), which joins
 * the accept queue then; SYN_SENT
 * completes an active open or is refused by RST; the synchronized states
 * check that a segment is in the window, take RST (exact sequence only,
 * RFC 5961), acknowledge what the ACK covers, take data in order (an
 * out-of-order segment is held in the receive ring past the readable
 * bytes and answered at once with a duplicate ACK, which reports it by
 * SACK when both SYNs offered it: tcp_sack.c) and the FIN.  Data in order is acknowledged at once for
 * a new connection's first TCP_QUICKACK_SEGS segments and every second one
 * after, else within TCP_DELACK (40 ms, Linux's delayed ACK): in the answer
 * of an interactive connection (pingpong: it answered within the delay
 * before), or once the application has read it all; a FIN, a segment out
 * of order or cut by the window at once.  Congestion control is NewReno (RFC 5681
 * slow start and congestion avoidance, RFC 6582 fast retransmit and
 * recovery on three duplicate ACKs), with SACK's help where agreed: in
 * recovery every further duplicate ACK resends the next hole the peer's
 * SACK blocks show, and no SACKed byte is sent again.  The window scale option (RFC 7323)
 * is offered and used when both SYNs carry it; so are timestamps (RFC
 * 7323: every segment then carries one, echoes the peer's per 4.3, and a
 * segment older than the last echoed is dropped by PAWS).  An ICMP
 * "destination unreachable" that quotes a segment in flight
 * (tcp_ctlinput) ends a connection still being made with its
 * errno (EHOSTUNREACH, ECONNREFUSED ...); an established one keeps it as
 * a soft error, reported instead of ETIMEDOUT if it times out.
 *
 * A connection outlives its socket's file: the table of control blocks
 * holds the socket until the connection reaches CLOSED (its FIN
 * acknowledged, TIME_WAIT over, a RST, or its retransmissions given up),
 * so close() returns at once while the FIN exchange goes on (an orphan).
 * Closing with unread data resets the connection, as Linux does.
 *
 * Locks: a connection's state is under its socket's so_lock.  Input runs
 * in the network thread: it finds the socket (the table's lock alone),
 * then takes its so_lock.  A listener's lock comes before its
 * connections'; a connection whose handshake completes lets its own lock
 * go before it takes its listener's to join the accept queue.
 */
#include <kern/net/inet/tcp_impl.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <drivers/platform/timer.h>

#define SYN_QUEUE_MAX   256                 /* half-open connections per listener */

/* A segment as input sees it, in host order. */
struct seg {
    uint32_t seq, ack, wnd;
    int flags;
    const uint8_t *data;
    uint32_t len;                   /* bytes of data */
    uint16_t mss;                   /* the MSS option (0: none; SYN only) */
    int wscale;                     /* the window scale option (-1: none; SYN only) */
    bool has_ts;                    /* the timestamps option came: */
    uint32_t tsval, tsecr;
    bool sack_perm;                 /* SACK-permitted (SYN only) */
    const uint8_t *sack;            /* the SACK option's blocks (8 bytes each), */
    int sack_n;                     /* sack_n of them */
    in_addr_t src, dst;
    uint16_t sport, dport;          /* network order */
};

/* ---- parsing ---- */

static void parse_options(const uint8_t *o, size_t n, struct seg *s)
{
    size_t i = 0;
    while (i < n && o[i] != OPT_EOL) {
        if (o[i] == OPT_NOP) {
            i++;
            continue;
        }
        if (i + 1 >= n || o[i + 1] < 2 || i + o[i + 1] > n)
            return;
        bool syn = s->flags & TH_SYN;
        if (syn && o[i] == OPT_MSS && o[i + 1] == 4)
            s->mss = (uint16_t)(o[i + 2] << 8 | o[i + 3]);
        else if (syn && o[i] == OPT_WSCALE && o[i + 1] == 3)
            s->wscale = MIN(o[i + 2], 14);
        else if (syn && o[i] == OPT_SACK_PERM && o[i + 1] == 2)
            s->sack_perm = true;
        else if (!syn && o[i] == OPT_SACK && (o[i + 1] - 2) % 8 == 0 && o[i + 1] > 2) {
            s->sack = o + i + 2;
            s->sack_n = (o[i + 1] - 2) / 8;
        } else if (o[i] == OPT_TIMESTAMP && o[i + 1] == 10) {
            s->has_ts = true;
            s->tsval = (uint32_t)o[i + 2] << 24 | (uint32_t)o[i + 3] << 16 | o[i + 4] << 8 | o[i + 5];
            s->tsecr = (uint32_t)o[i + 6] << 24 | (uint32_t)o[i + 7] << 16 | o[i + 8] << 8 | o[i + 9];
        }
        i += o[i + 1];
    }
}

/* The segment in p, checked: false when it is to be dropped. */
static bool parse(const struct pkt *p, in_addr_t src, in_addr_t dst, struct seg *s)
{
    const struct tcphdr *th = (const struct tcphdr *)p->p_data;
    size_t hlen = p->p_len < TCP_HDR_LEN ? 0 : (size_t)(th->off >> 4) * 4;
    if (hlen < TCP_HDR_LEN || hlen > p->p_len) {
        inet_mib_count(TCM_IN_ERRS);
        return false;
    }
    if (!pkt_csum_trusted(p) &&
        in_cksum_fold(in_cksum_add(in_pseudo(src, dst, IPPROTO_TCP, p->p_len), p->p_data,
                                   p->p_len)) != 0) {
        inet_mib_count(TCM_IN_ERRS);
        inet_mib_count(TCM_IN_CSUM_ERRORS);
        return false;
    }
    inet_mib_count(TCM_IN_SEGS);
    memset(s, 0, sizeof *s);
    s->seq = ntohl(th->seq);
    s->ack = ntohl(th->ack);
    s->wnd = ntohs(th->win);
    s->flags = th->flags;
    s->data = p->p_data + hlen;
    s->len = p->p_len - (uint32_t)hlen;
    s->wscale = -1;
    s->src = src;
    s->dst = dst;
    s->sport = th->sport;
    s->dport = th->dport;
    parse_options(p->p_data + TCP_HDR_LEN, hlen - TCP_HDR_LEN, s);
    return true;
}

/* A RST for a segment nobody takes (RFC 9293 3.10.7.1). */
static void reset_reply(const struct seg *s)
{
    if (s->flags & TH_RST)
        return;
    if (s->flags & TH_ACK)
        tcp_respond(s->dst, s->dport, s->src, s->sport, s->ack, 0, TH_RST);
    else
        tcp_respond(s->dst, s->dport, s->src, s->sport, 0,
                    s->seq + s->len + !!(s->flags & TH_SYN) + !!(s->flags & TH_FIN),
                    TH_RST | TH_ACK);
}

/* ---- the handshake ---- */

/* The peer's SYN: its sequence space, MSS and window scale. */
static void take_syn(struct tcpcb *tp, const struct seg *s)
{
    tp->irs = s->seq;
    tp->rcv_nxt = s->seq + 1;
    tp->rcv_adv = tp->rcv_nxt;
    uint32_t ours = inet_path_mtu(sotoinp(tp->t_so)->inp_faddr) - IP_HDR_LEN - TCP_HDR_LEN;
    tp->t_maxseg = MIN((uint32_t)(s->mss ? s->mss : TCP_MSS_DEFAULT), MIN(ours, (uint32_t)TCP_MSS_MAX));
    tp->t_wscale_ok = s->wscale >= 0;
    tp->snd_wscale = tp->t_wscale_ok ? (uint8_t)s->wscale : 0;
    tp->rcv_wscale = tp->t_wscale_ok ? TCP_WSCALE : 0;
    /* Timestamps once both SYNs carry them (we always offer them): every
     * segment then carries 12 bytes of option, which the MSS leaves room
     * for, as Linux's does. */
    tp->t_ts_ok = s->has_ts;
    tp->t_sack_ok = s->sack_perm;       /* offered by us always, so agreed when the peer's is */
    tp->ts_recent = s->has_ts ? s->tsval : 0;
    tp->ts_recent_set = s->has_ts;
    if (tp->t_ts_ok)
        tp->t_maxseg -= TCP_TS_LEN;
    tcp_set_snd_wnd(tp, s->wnd);    /* a SYN's window is never scaled */
    tp->snd_wl1 = s->seq;
    tp->snd_wl2 = s->ack;
    tp->cwnd = 10 * tp->t_maxseg;   /* RFC 6928's initial window */
    tp->ssthresh = UINT32_MAX;
}

static void start_send_space(struct tcpcb *tp)
{
    tp->iss = tcp_new_iss();
    tp->ts_offset = tcp_new_iss();
    tp->snd_una = tp->snd_nxt = tp->snd_max = tp->snd_sml = tp->iss;
}

/* A passive connection starts with its listener's options, as Linux's
 * clone of the listening sock (l's so_lock held; so is not yet seen). */
static void inherit_options(struct socket *so, struct socket *l)
{
    const struct tcpcb *lt = sototcp(l);
    struct tcpcb *tp = sototcp(so);
    so->so_uid = l->so_uid;
    so->so_gid = l->so_gid;
    so->so_bools = l->so_bools;
    so->so_sndbuf = l->so_sndbuf;
    so->so_rcvbuf = l->so_rcvbuf;
    so->so_sndtimeo = l->so_sndtimeo;
    so->so_rcvtimeo = l->so_rcvtimeo;
    so->so_priority = l->so_priority;
    so->so_rcvlowat = l->so_rcvlowat;
    so->so_linger = l->so_linger;
    tp->nodelay = lt->nodelay;
    tp->keepidle = lt->keepidle;
    tp->keepintvl = lt->keepintvl;
    tp->keepcnt = lt->keepcnt;
}

/* A SYN to listener l: a new connection in SYN_RECEIVED, its SYN-ACK
 * sent (l's so_lock held). */
static void passive_open(struct socket *l, const struct seg *s)
{
    struct tcpcb *lt = sototcp(l);
    bool overflow = tcp_accept_queue_full(lt);
    if (overflow || __atomic_load_n(&lt->t_synlen, __ATOMIC_RELAXED) >= SYN_QUEUE_MAX) {
        if (overflow)               /* a full queue (Linux's test): the SYN is dropped, the */
            inet_mib_count(TXM_LISTEN_OVERFLOWS);   /* peer sends it again */
        inet_mib_count(TXM_LISTEN_DROPS);
        return;
    }
    struct socket *so;
    if (socket_create(&inet_sockops, SOCK_STREAM, IPPROTO_TCP, &so))
        return;
    inherit_options(so, l);
    struct inpcb *inp = sotoinp(so);
    struct tcpcb *tp = sototcp(so);
    inp->inp_laddr = s->dst;
    inp->inp_lport = s->dport;
    inp->inp_faddr = s->src;
    inp->inp_fport = s->sport;
    inp->inp_bound = true;
    inp->inp_ttl = sotoinp(l)->inp_ttl;
    mutex_enter(&so->so_lock);
    take_syn(tp, s);
    start_send_space(tp);
    tp->t_state = TCPS_SYN_RECEIVED;
    inet_mib_count(TCM_PASSIVE_OPENS);
    tp->t_sostate = SS_CONNECTED;
    socket_hold(l);
    tp->t_listener = l;
    __atomic_add_fetch(&lt->t_synlen, 1, __ATOMIC_RELAXED);
    inpcb_insert(inp);
    tcp_output(tp);
    mutex_exit(&so->so_lock);
    socket_rele(so);                /* the table's reference keeps it */
}

static void listen_input(struct socket *so, const struct seg *s)
{
    if (s->flags & TH_RST)
        return;
    if (s->flags & TH_ACK) {
        reset_reply(s);
        return;
    }
    if (s->flags & TH_SYN)
        passive_open(so, s);
}

/* SYN_SENT (RFC 9293 3.10.7.3): true when the caller must drop the
 * table's reference. */
static bool syn_sent_input(struct tcpcb *tp, const struct seg *s)
{
    bool ack_ok = (s->flags & TH_ACK) && SEQ_GT(s->ack, tp->iss) && SEQ_LEQ(s->ack, tp->snd_max);
    if ((s->flags & TH_ACK) && !ack_ok) {
        reset_reply(s);
        return false;
    }
    if (s->flags & TH_RST)
        return ack_ok ? tcp_close(tp, ECONNREFUSED) : false;
    if (!(s->flags & TH_SYN))
        return false;
    take_syn(tp, s);
    if (!ack_ok) {
        tcp_set_state(tp, TCPS_SYN_RECEIVED);      /* a simultaneous open */
        tp->snd_nxt = tp->iss;                      /* the SYN goes again, with an ACK */
        tcp_output(tp);
        return false;
    }
    tp->t_stats.bytes_acked += s->ack - tp->snd_una;     /* our SYN */
    tp->snd_una = s->ack;
    tp->rxtshift = 0;
    tp->rexmt_at = 0;
    tp->t_sostate = SS_CONNECTED;
    tp->connect_unseen = true;          /* the next connect() returns 0, once */
    tcp_set_state(tp, TCPS_ESTABLISHED);
    tp->quickack = TCP_QUICKACK_SEGS;
    tp->ack_now = true;
    tcp_output(tp);
    return false;
}

/* ---- the synchronized states ---- */

/* RFC 9293's acceptability test (3.10.7.4, first check). */
static bool in_window(const struct tcpcb *tp, const struct seg *s, uint32_t seglen)
{
    uint32_t wnd = tcp_rcv_window(tp);
    if (SEQ_GT(tp->rcv_adv, tp->rcv_nxt + wnd))
        wnd = tp->rcv_adv - tp->rcv_nxt;    /* never shrink what was offered */
    if (seglen == 0)
        return wnd == 0 ? s->seq == tp->rcv_nxt
                        : SEQ_GEQ(s->seq, tp->rcv_nxt) && SEQ_LT(s->seq, tp->rcv_nxt + wnd);
    if (wnd == 0)
        return false;
    return (SEQ_GEQ(s->seq, tp->rcv_nxt) && SEQ_LT(s->seq, tp->rcv_nxt + wnd)) ||
           (SEQ_GEQ(s->seq + seglen - 1, tp->rcv_nxt) &&
            SEQ_LT(s->seq + seglen - 1, tp->rcv_nxt + wnd));
}

/* Cut what was already received off the front (the peer's SYN again, old
 * bytes).  A SYN at or past rcv_nxt is a new one, left for RFC 5961's
 * challenge. */
static void trim_front(struct tcpcb *tp, struct seg *s)
{
    if ((s->flags & TH_SYN) && SEQ_LT(s->seq, tp->rcv_nxt)) {
        s->flags &= ~TH_SYN;
        s->seq++;
    }
    if (SEQ_LT(s->seq, tp->rcv_nxt)) {
        uint32_t old = tp->rcv_nxt - s->seq;
        if (old >= s->len) {
            if (old > s->len)
                s->flags &= ~TH_FIN;        /* the FIN was received already, too */
            old = s->len;
        }
        s->data += old;
        s->len -= old;
        s->seq += old;
    }
}

/* RST in a synchronized state: true to drop the table's reference. */
static bool take_rst(struct tcpcb *tp, const struct seg *s)
{
    if (s->seq != tp->rcv_nxt) {
        inet_mib_count(TXM_CHALLENGE_ACK);
        tp->ack_now = true;                 /* RFC 5961's challenge ACK */
        tcp_output(tp);
        return false;
    }
    switch (tp->t_state) {
    case TCPS_SYN_RECEIVED:
        return tcp_close(tp, tp->t_listener ? 0 : ECONNREFUSED);
    case TCPS_CLOSE_WAIT:
        return tcp_close(tp, EPIPE);
    case TCPS_CLOSING: case TCPS_LAST_ACK: case TCPS_TIME_WAIT:
        return tcp_close(tp, 0);
    default:
        return tcp_close(tp, ECONNRESET);
    }
}

/* An RTT sample (RFC 6298 2.2-2.3) in nanoseconds. */
static void rtt_sample(struct tcpcb *tp, uint64_t r)
{
    if (!tp->t_stats.min_rtt || r < tp->t_stats.min_rtt)
        tp->t_stats.min_rtt = r;
    if (!tp->srtt) {
        tp->srtt = r;
        tp->rttvar = r / 2;
    } else {
        uint64_t d = tp->srtt > r ? tp->srtt - r : r - tp->srtt;
        tp->rttvar = (3 * tp->rttvar + d) / 4;
        tp->srtt = (7 * tp->srtt + r) / 8;
    }
    tp->rto = MAX(tp->srtt + MAX(4 * tp->rttvar, 1000000ULL), TCP_RTO_MIN);
}

/* NewReno on an ACK of acked new bytes (RFC 5681 3.1, RFC 6582 3.2). */
static void cc_ack(struct tcpcb *tp, uint32_t acked, uint32_t ack)
{
    if (tp->in_recovery) {
        if (SEQ_GEQ(ack, tp->recover)) {
            tp->in_recovery = false;        /* a full ACK: recovery ends */
            tp->cwnd = tp->ssthresh;
        } else {
            /* A partial ACK: resend the next hole (SACK may have resent
             * some already, up to high_rxt). */
            tp->snd_nxt = tp->snd_sacked_n && SEQ_GT(tp->high_rxt, ack) ? tp->high_rxt : ack;
            tp->cwnd = tp->cwnd > acked ? tp->cwnd - acked + tp->t_maxseg : tp->t_maxseg;
        }
        return;
    }
    if (tp->cwnd < tp->ssthresh)
        tp->cwnd += MIN(acked, tp->t_maxseg);
    else
        tp->cwnd += MAX(1u, tp->t_maxseg * tp->t_maxseg / tp->cwnd);
}

/* A duplicate ACK: the third starts fast retransmit. */
/* In recovery with SACK: the next hole below the highest SACKed byte
 * goes again, one segment a duplicate ACK. */
static void sack_resend_hole(struct tcpcb *tp)
{
    uint32_t seq;
    if (!tcp_sack_next_hole(tp, tp->high_rxt, &seq))
        return;
    size_t len = MIN((size_t)tp->t_maxseg, tp->snd.r_len - (size_t)(seq - tp->snd_una));
    seq = tcp_sack_skip(tp, seq, &len);
    if (!len)
        return;
    tcp_resend(tp, seq, len);
    tp->high_rxt = seq + (uint32_t)len;
}

static void cc_dupack(struct tcpcb *tp)
{
    if (tp->in_recovery) {
        tp->cwnd += tp->t_maxseg;
        sack_resend_hole(tp);
        return;
    }
    if (++tp->dupacks < 3)
        return;
    uint32_t flight = tp->snd_max - tp->snd_una;
    tp->ssthresh = MAX(flight / 2, 2 * tp->t_maxseg);
    tp->cwnd = tp->ssthresh + 3 * tp->t_maxseg;
    tp->recover = tp->snd_max;
    tp->in_recovery = true;
    inet_mib_count(tp->snd_sacked_n ? TXM_SACK_RECOVERY : TXM_RENO_RECOVERY);
    tp->rtt_timing = false;
    uint32_t save = tp->snd_nxt;
    tp->snd_nxt = tp->snd_una;              /* the lost segment again */
    uint32_t cw = tp->cwnd;
    tp->cwnd = tp->t_maxseg;
    tcp_output(tp);
    tp->high_rxt = tp->snd_nxt;             /* the end of what just went again */
    tp->cwnd = cw;
    if (SEQ_GT(save, tp->snd_nxt))
        tp->snd_nxt = save;
}

/* What the ACK field says (3.10.7.4, fifth check): false when the
 * segment is to be dropped. */
static bool take_ack(struct tcpcb *tp, const struct seg *s)
{
    if (tp->t_state == TCPS_SYN_RECEIVED) {
        if (SEQ_LEQ(s->ack, tp->snd_una) || SEQ_GT(s->ack, tp->snd_max)) {
            reset_reply(s);
            return false;
        }
        if (tp->t_listener && tcp_accept_queue_full(sototcp(tp->t_listener))) {
            inet_mib_count(TXM_LISTEN_OVERFLOWS);   /* as Linux: the ACK is dropped, the */
            inet_mib_count(TXM_LISTEN_DROPS);       /* SYN-ACK sent again asks for it later */
            return false;
        }
        if (tcp_rings_alloc(tp)) {          /* no memory: the ACK is dropped, as Linux, */
            inet_mib_count(TXM_LISTEN_DROPS);   /* and the SYN-ACK sent again brings it back */
            return false;
        }
        tcp_set_state(tp, TCPS_ESTABLISHED);
        tp->quickack = TCP_QUICKACK_SEGS;
        tcp_set_snd_wnd(tp, s->wnd << tp->snd_wscale);
        tp->snd_wl1 = s->seq;
        tp->snd_wl2 = s->ack;
    }
    if (SEQ_GT(s->ack, tp->snd_max)) {
        tp->ack_now = true;                 /* acknowledges what was never sent */
        return false;
    }
    uint32_t wnd = s->wnd << tp->snd_wscale;
    tcp_sack_take(tp, s->sack, s->sack_n);
    if (SEQ_LEQ(s->ack, tp->snd_una)) {
        if (s->ack == tp->snd_una && s->len == 0 && wnd == tp->snd_wnd &&
            tp->snd_max != tp->snd_una)
            cc_dupack(tp);
    } else {
        uint32_t acked = s->ack - tp->snd_una;
        tp->t_stats.bytes_acked += acked;
        if (tp->snd_una == tp->iss) {
            acked--;                        /* our SYN */
            tp->snd_una++;
        }
        size_t data = MIN((size_t)acked, tp->snd.r_len);
        if (tp->fin_queued && acked > tp->snd.r_len) {
            tp->fin_queued = false;         /* our FIN is acknowledged */
            tp->fin_acked = true;
        }
        ring_drop(&tp->snd, data);
        tp->snd_una = s->ack;
        tcp_sack_prune(tp);
        if (SEQ_LT(tp->snd_nxt, tp->snd_una))
            tp->snd_nxt = tp->snd_una;
        if (tp->rtt_timing && SEQ_GT(s->ack, tp->rtt_seq)) {
            tp->rtt_timing = false;
            rtt_sample(tp, uptime_ns() - tp->rtt_start);
        }
        tp->rxtshift = 0;
        tp->dupacks = 0;
        tp->t_softerr = 0;                  /* the path works after all */
        cc_ack(tp, acked, s->ack);
        tcp_rexmt_reset(tp);
        if (data)
            socket_notify(tp->t_so, POLL_WRITESIDE);
    }
    if (SEQ_LT(tp->snd_wl1, s->seq) || (tp->snd_wl1 == s->seq && SEQ_LEQ(tp->snd_wl2, s->ack))) {
        bool opened = wnd > tp->snd_wnd;
        tcp_set_snd_wnd(tp, wnd);
        tp->snd_wl1 = s->seq;
        tp->snd_wl2 = s->ack;
        if (opened && tp->persisting) {
            tp->persisting = false;
            tp->rexmt_at = 0;
        }
    }
    return true;
}

/* Our FIN was acknowledged: the states that waited for it move on.  True
 * to drop the table's reference. */
static bool fin_acked_moves(struct tcpcb *tp)
{
    if (!tp->fin_acked)
        return false;
    switch (tp->t_state) {
    case TCPS_FIN_WAIT_1:
        tcp_set_state(tp, TCPS_FIN_WAIT_2);
        if (tp->orphan)
            tp->close_at = uptime_ns() + TCP_FIN_TIMEOUT;
        return false;
    case TCPS_CLOSING:
        tcp_enter_time_wait(tp);
        return false;
    case TCPS_LAST_ACK:
        return tcp_close(tp, 0);
    default:
        return false;
    }
}

/* Data in order into the receive buffer (3.10.7.4, seventh check). */
/* In-order data came: acknowledge it at once while the connection is
 * young (quick-ack: slow start is not held back) and for every second
 * segment, else within TCP_DELACK, most often in the answer the
 * application sends meanwhile (RFC 9293 3.8.6.3, Linux's delayed ACK). */
static void ack_data(struct tcpcb *tp)
{
    if (tp->quickack) {
        tp->quickack--;
        tp->ack_now = true;
    } else if (++tp->segs_unacked >= 2) {
        tp->ack_now = true;
    } else if (!tp->delack_at) {
        tp->delack_at = uptime_ns() + TCP_DELACK;
    }
}

/* Data past rcv_nxt: held for when the hole before it fills (its FIN is
 * not: the peer sends it again), and a duplicate ACK at once says what
 * came. */
static void take_out_of_order(struct tcpcb *tp, struct seg *s)
{
    tp->ack_now = true;
    s->flags &= ~TH_FIN;
    tp->t_stats.rcv_ooopack++;
    if (tcp_ooo_store(tp, s->seq, s->data, s->len))
        inet_mib_count(TXM_OFO_QUEUE);
    else
        inet_mib_count(TXM_OFO_DROP);       /* no range left for it: the peer resends it */
}

static void take_data(struct tcpcb *tp, struct seg *s)
{
    if (!s->len)
        return;
    if (tp->t_state != TCPS_ESTABLISHED && tp->t_state != TCPS_FIN_WAIT_1 &&
        tp->t_state != TCPS_FIN_WAIT_2)
        return;
    if (s->seq != tp->rcv_nxt) {
        take_out_of_order(tp, s);
        return;
    }
    size_t n = ring_append(&tp->rcv, s->data, s->len);
    tp->rcv_nxt += (uint32_t)n;
    if (tp->rcv_ooo_n) {
        tp->ack_now = true;                 /* a hole (partly) filled: ACK at once (RFC 5681 4.2) */
        n += tcp_ooo_advance(tp);
    }
    tp->t_stats.bytes_received += n;
    if (n)
        tp->t_stats.last_data_recv = tp->t_rcvtime;     /* this segment's arrival */
    if (n < s->len) {
        s->flags &= ~TH_FIN;                /* cut by the window: the FIN comes again */
        tp->ack_now = true;
    }
    ack_data(tp);
    socket_notify(tp->t_so, POLL_READSIDE);
}

/* The FIN (3.10.7.4, eighth check). */
static void take_fin(struct tcpcb *tp, const struct seg *s)
{
    if (!(s->flags & TH_FIN) || s->seq + s->len != tp->rcv_nxt)
        return;
    tp->rcv_nxt++;
    tp->ack_now = true;
    tp->t_so->so_shut |= SO_RCV_SHUT;
    switch (tp->t_state) {
    case TCPS_SYN_RECEIVED: case TCPS_ESTABLISHED:
        tcp_set_state(tp, TCPS_CLOSE_WAIT);
        break;
    case TCPS_FIN_WAIT_1:
        tcp_set_state(tp, TCPS_CLOSING);
        break;
    case TCPS_FIN_WAIT_2: case TCPS_TIME_WAIT:
        tcp_enter_time_wait(tp);        /* a FIN again restarts the wait */
        break;
    default:
        socket_notify(tp->t_so, POLL_READSIDE);
        break;
    }
}

/* A synchronized state's input: true to drop the table's reference. */
/* RFC 7323's PAWS (5.3): a segment whose timestamp is older than the
 * last one echoed is an old duplicate, dropped (a RST is never). */
static bool paws_rejects(const struct tcpcb *tp, const struct seg *s)
{
    return tp->t_ts_ok && s->has_ts && tp->ts_recent_set && !(s->flags & TH_RST) &&
           SEQ_LT(s->tsval, tp->ts_recent);
}

/* RFC 7323 4.3: the timestamp to echo is that of the segment that covers
 * the point our last ACK named. */
static void take_timestamp(struct tcpcb *tp, const struct seg *s)
{
    if (tp->t_ts_ok && s->has_ts && SEQ_LEQ(s->seq, tp->last_ack_sent) &&
        (!tp->ts_recent_set || SEQ_GEQ(s->tsval, tp->ts_recent))) {
        tp->ts_recent = s->tsval;
        tp->ts_recent_set = true;
    }
}

static bool sync_input(struct tcpcb *tp, struct seg *s, bool *queue)
{
    uint32_t seglen = s->len + !!(s->flags & TH_SYN) + !!(s->flags & TH_FIN);
    if (paws_rejects(tp, s)) {
        inet_mib_count(TXM_PAWS_ESTAB);
        tp->ack_now = true;
        tcp_output(tp);
        return false;
    }
    if (!in_window(tp, s, seglen)) {
        if (!(s->flags & TH_RST)) {
            tp->ack_now = true;
            tcp_output(tp);
        }
        return false;
    }
    if (s->flags & TH_RST)
        return take_rst(tp, s);
    take_timestamp(tp, s);
    trim_front(tp, s);
    if (s->flags & TH_SYN) {
        inet_mib_count(TXM_CHALLENGE_ACK);
        tp->ack_now = true;                 /* RFC 5961: a SYN in the window, challenged */
        tcp_output(tp);
        return false;
    }
    if (!(s->flags & TH_ACK))
        return false;
    bool was_syn_received = tp->t_state == TCPS_SYN_RECEIVED;
    if (!take_ack(tp, s)) {
        tcp_output(tp);
        return false;
    }
    *queue = was_syn_received && tp->t_listener;
    if (fin_acked_moves(tp))
        return true;
    if (tp->orphan && s->len && (tp->t_so->so_shut & SO_RCV_SHUT))
        return tcp_drop(tp, 0);             /* data for a closed socket: reset, as Linux */
    take_data(tp, s);
    take_fin(tp, s);
    tcp_output(tp);
    return false;
}

/* ---- the accept queue ---- */

void tcp_queue_accepted(struct tcpcb *tp)
{
    struct socket *so = tp->t_so, *l;
    mutex_enter(&so->so_lock);
    l = tp->t_listener;
    tp->t_listener = NULL;
    mutex_exit(&so->so_lock);
    if (!l)
        return;
    struct tcpcb *lt = sototcp(l);
    mutex_enter(&l->so_lock);
    __atomic_sub_fetch(&lt->t_synlen, 1, __ATOMIC_RELAXED);
    bool listening = lt->t_state == TCPS_LISTEN;
    if (listening) {
        socket_hold(so);                    /* the queue's reference, then accept's file's */
        tp->t_aqnext = NULL;
        *lt->t_aqtail = tp;
        lt->t_aqtail = &tp->t_aqnext;
        __atomic_store_n(&lt->t_aqlen, lt->t_aqlen + 1, __ATOMIC_RELAXED);
        socket_notify(l, POLL_READSIDE);
    }
    mutex_exit(&l->so_lock);
    if (!listening) {
        mutex_enter(&so->so_lock);
        bool rele = tcp_drop(tp, ECONNABORTED);
        mutex_exit(&so->so_lock);
        if (rele)
            socket_rele(so);
    }
    socket_rele(l);
}

/* ---- ICMP errors ---- */

void tcp_ctlinput(int err, in_addr_t src, uint16_t sport, in_addr_t dst, uint16_t dport,
                  uint32_t seq)
{
    struct socket *so = inpcb_lookup(IPPROTO_TCP, src, sport, dst, dport);
    if (!so)
        return;
    struct tcpcb *tp = sototcp(so);
    struct inpcb *inp = sotoinp(so);
    bool rele = false;
    mutex_enter(&so->so_lock);
    /* It must quote this connection and a sequence number in flight (RFC
     * 5927's check against forged errors). */
    bool ours = inp->inp_faddr == dst && inp->inp_fport == dport &&
                SEQ_GEQ(seq, tp->snd_una) && SEQ_LEQ(seq, tp->snd_max);
    bool live = ours && tp->t_state != TCPS_CLOSED && tp->t_state != TCPS_LISTEN;
    if (live && (tp->t_state == TCPS_SYN_SENT || tp->t_state == TCPS_SYN_RECEIVED))
        rele = tcp_close(tp, tp->t_listener ? 0 : err);
    else if (live)
        tp->t_softerr = err;
    mutex_exit(&so->so_lock);
    if (rele)
        socket_rele(so);
    socket_rele(so);
}

/* ---- the entry ---- */

/* TCP_INFO's counts of a segment that came in. */
static void count_in(struct tcpcb *tp, const struct seg *s)
{
    tp->t_stats.segs_in++;
    if (s->len)
        tp->t_stats.data_segs_in++;
}

void tcp_input(struct pkt *p, in_addr_t src, in_addr_t dst)
{
    struct seg s;
    if (!parse(p, src, dst, &s))
        return;
    struct socket *so = inpcb_lookup(IPPROTO_TCP, dst, s.dport, src, s.sport);
    if (!so) {
        reset_reply(&s);
        return;
    }
    struct tcpcb *tp = sototcp(so);
    bool rele = false, queue = false;
    mutex_enter(&so->so_lock);
    switch (tp->t_state) {
    case TCPS_CLOSED:
        reset_reply(&s);
        break;
    case TCPS_LISTEN:
        listen_input(so, &s);
        break;
    case TCPS_SYN_SENT:
        tcp_keep_heard(tp);
        count_in(tp, &s);
        rele = syn_sent_input(tp, &s);
        break;
    default:
        tcp_keep_heard(tp);
        count_in(tp, &s);
        rele = sync_input(tp, &s, &queue);
        break;
    }
    tcp_timers_update(tp);
    mutex_exit(&so->so_lock);
    if (queue)
        tcp_queue_accepted(tp);
    if (rele)
        socket_rele(so);
    socket_rele(so);
}
