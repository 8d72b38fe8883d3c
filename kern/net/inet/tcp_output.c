/*
 * TCP's output and its timers: which segment to send next, building it,
 * retransmission (RFC 6298's timer, NewReno's fast retransmit is in
 * tcp_input.c), the zero-window probe, TIME_WAIT's end.  Theory in
 * kern/net/inet/tcp_input.c; locks in tcp_impl.h.
 */
#include <kern/net/inet/tcp_impl.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <drivers/platform/timer.h>

#define RTO_MAX         120000000000ULL     /* 120 s */
#define RETRIES_SYN     6                   /* Linux's tcp_syn_retries */
#define RETRIES_DATA    15                  /* Linux's tcp_retries2 */

/* Our timestamp clock (RFC 7323 5.4): milliseconds, from the
 * connection's own random start. */
uint32_t tcp_ts_now(const struct tcpcb *tp)
{
    return (uint32_t)(uptime_ns() / 1000000) + tp->ts_offset;
}

/* NOP, NOP and the timestamps option (TSval, TSecr) at o: its length. */
static size_t ts_option(const struct tcpcb *tp, uint8_t *o, uint32_t ecr)
{
    uint32_t val = htonl(tcp_ts_now(tp));
    ecr = htonl(ecr);
    o[0] = OPT_NOP;
    o[1] = OPT_NOP;
    o[2] = OPT_TIMESTAMP;
    o[3] = 10;
    memcpy(o + 4, &val, 4);
    memcpy(o + 8, &ecr, 4);
    return TCP_TS_LEN;
}

/* The SYN's options: MSS, SACK-permitted, timestamps and the window
 * scale we offer (a SYN-ACK carries the last three only when the peer's
 * SYN did), laid out as Linux's: SACK-permitted takes the place of the
 * two NOPs before the timestamps. */
static size_t syn_options(const struct tcpcb *tp, uint8_t *o, bool synack)
{
    size_t n = 0;
    uint32_t m = inet_path_mtu(sotoinp(tp->t_so)->inp_faddr) - IP_HDR_LEN - TCP_HDR_LEN;
    uint16_t mss = htons((uint16_t)MIN(m, (uint32_t)TCP_MSS_MAX));
    o[n++] = OPT_MSS;
    o[n++] = 4;
    memcpy(o + n, &mss, 2);
    n += 2;
    bool sack = !synack || tp->t_sack_ok;
    if (!synack || tp->t_ts_ok) {
        if (sack) {
            ts_option(tp, o + n, synack ? tp->ts_recent : 0);
            o[n] = OPT_SACK_PERM;
            o[n + 1] = 2;
            n += TCP_TS_LEN;
        } else {
            n += ts_option(tp, o + n, synack ? tp->ts_recent : 0);
        }
    } else if (sack) {
        o[n++] = OPT_NOP;
        o[n++] = OPT_NOP;
        o[n++] = OPT_SACK_PERM;
        o[n++] = 2;
    }
    if (!synack || tp->t_wscale_ok) {
        o[n++] = OPT_NOP;
        o[n++] = OPT_WSCALE;
        o[n++] = 3;
        o[n++] = TCP_WSCALE;
    }
    return n;
}

/* The room a segment's SACK blocks have: what the timestamps leave. */
static size_t sack_room(const struct tcpcb *tp)
{
    return TCP_OPT_ROOM - (tp->t_ts_ok ? TCP_TS_LEN : 0);
}

/* The options of a segment with flags: the SYN's, or the timestamps and
 * the SACK blocks. */
static size_t segment_options(const struct tcpcb *tp, uint8_t *o, int flags)
{
    if (flags & TH_SYN)
        return syn_options(tp, o, flags & TH_ACK);
    size_t n = tp->t_ts_ok ? ts_option(tp, o, tp->ts_recent) : 0;
    return n + tcp_sack_option(tp, o + n, sack_room(tp));
}

/* The most data a segment may carry now: the MSS less the SACK blocks it
 * will carry (the timestamps are already out of t_maxseg). */
static size_t segment_max(const struct tcpcb *tp)
{
    return tp->t_maxseg - tcp_sack_option_len(tp, sack_room(tp));
}

/* A segment's checksum left to be finished where it leaves the host
 * (PKT_CSUM_PARTIAL): the field holds the pseudo-header's sum; loopback
 * never finishes it, as Linux's CHECKSUM_PARTIAL on lo. */
static void checksum_partial(struct pkt *p, in_addr_t src, in_addr_t dst)
{
    struct tcphdr *th = (struct tcphdr *)p->p_data;
    th->cksum = (uint16_t)~in_cksum_fold(in_pseudo(src, dst, IPPROTO_TCP, p->p_len));
    p->p_csum = PKT_CSUM_PARTIAL;
    p->p_csum_at = __builtin_offsetof(struct tcphdr, cksum);
}

static void checksum(struct pkt *p, in_addr_t src, in_addr_t dst)
{
    struct tcphdr *th = (struct tcphdr *)p->p_data;
    th->cksum = 0;
    th->cksum = in_cksum_fold(in_cksum_add(in_pseudo(src, dst, IPPROTO_TCP, p->p_len),
                                           p->p_data, p->p_len));
}

void tcp_respond(in_addr_t src, uint16_t sport, in_addr_t dst, uint16_t dport, uint32_t seq,
                 uint32_t ack, int flags)
{
    struct pkt *p = pkt_alloc(TCP_HDR_LEN);
    if (!p)
        return;
    struct tcphdr *th = (struct tcphdr *)p->p_data;
    memset(th, 0, TCP_HDR_LEN);
    th->sport = sport;
    th->dport = dport;
    th->seq = htonl(seq);
    th->ack = htonl(ack);
    th->off = (TCP_HDR_LEN / 4) << 4;
    th->flags = (uint8_t)flags;
    checksum(p, src, dst);
    inet_mib_count(TCM_OUT_SEGS);
    if (flags & TH_RST)
        inet_mib_count(TCM_OUT_RSTS);
    ip_output(p, src, dst, IPPROTO_TCP, IP_DEFAULT_TTL, 0);
}

/* The window field of a segment (scaled unless it carries SYN). */
static uint16_t window_field(struct tcpcb *tp, bool syn)
{
    uint32_t w = tcp_rcv_window(tp);
    if (!syn)
        w >>= tp->rcv_wscale;
    w = MIN(w, 65535u);
    uint32_t edge = tp->rcv_nxt + (syn ? w : w << tp->rcv_wscale);
    if (SEQ_GT(edge, tp->rcv_adv))
        tp->rcv_adv = edge;
    return htons((uint16_t)w);
}

/* Build and send one segment: len bytes of the send buffer from sequence
 * seq, with flags. */
/* TCP_INFO's counts of a segment sent (before snd_max moves past it, so
 * one below snd_max is a retransmission). */
static void count_out(struct tcpcb *tp, uint32_t seq, size_t len, int flags)
{
    struct tcp_stats *st = &tp->t_stats;
    bool again = SEQ_LT(seq, tp->snd_max) && (len || (flags & (TH_SYN | TH_FIN)));
    st->segs_out++;
    inet_mib_count(TCM_OUT_SEGS);
    if (flags & TH_RST)
        inet_mib_count(TCM_OUT_RSTS);
    if (again) {
        st->total_retrans++;
        inet_mib_count(TCM_RETRANS_SEGS);
    }
    if (!len)
        return;
    st->data_segs_out++;
    st->bytes_sent += len;
    st->last_data_sent = uptime_ns();
    if (again)
        st->bytes_retrans += len;
}

static void send_segment(struct tcpcb *tp, uint32_t seq, size_t len, int flags)
{
    struct inpcb *inp = sotoinp(tp->t_so);
    uint8_t opts[TCP_OPT_ROOM];
    size_t olen = segment_options(tp, opts, flags);
    size_t hlen = TCP_HDR_LEN + ((olen + 3) & ~(size_t)3);
    struct pkt *p = pkt_alloc(hlen + len);
    if (!p)
        return;                     /* the retransmission timer sends it again */
    struct tcphdr *th = (struct tcphdr *)p->p_data;
    memset(th, 0, hlen);
    th->sport = inp->inp_lport;
    th->dport = inp->inp_fport;
    th->seq = htonl(seq);
    th->ack = (flags & TH_ACK) ? htonl(tp->rcv_nxt) : 0;
    th->off = (uint8_t)((hlen / 4) << 4);
    th->flags = (uint8_t)flags;
    th->win = window_field(tp, flags & TH_SYN);
    memcpy(p->p_data + TCP_HDR_LEN, opts, olen);
    if (len)
        ring_copy(&tp->snd, seq - tp->snd_una, p->p_data + hlen, len);
    checksum_partial(p, inp->inp_laddr, inp->inp_faddr);
    count_out(tp, seq, len, flags);
    if (len && len < tp->t_maxseg)
        tp->snd_sml = seq + (uint32_t)len;
    /* count_out has just stamped last_data_sent with this segment's time. */
    if (len && tp->t_stats.last_data_recv &&
        tp->t_stats.last_data_sent - tp->t_stats.last_data_recv < TCP_DELACK)
        tp->pingpong = true;            /* an answer to what came: interactive */
    if (flags & TH_ACK) {
        tp->last_ack_sent = tp->rcv_nxt;
        tp->ack_now = false;                /* this one carries it */
        tp->delack_at = 0;
        tp->segs_unacked = 0;
    }
    ip_output(p, inp->inp_laddr, inp->inp_faddr, IPPROTO_TCP, inp->inp_ttl, inp->inp_tos);
}

void tcp_resend(struct tcpcb *tp, uint32_t seq, size_t len)
{
    send_segment(tp, seq, len, TH_ACK);
}

static bool syn_state(const struct tcpcb *tp)
{
    return tp->t_state == TCPS_SYN_SENT || tp->t_state == TCPS_SYN_RECEIVED;
}

/* The sequence number of the FIN, when one is queued. */
static uint32_t fin_seq(const struct tcpcb *tp) { return tp->snd_una + (uint32_t)tp->snd.r_len; }

/* A segment smaller than the MSS is sent and not yet acknowledged. */
static bool small_in_flight(const struct tcpcb *tp)
{
    return SEQ_GT(tp->snd_sml, tp->snd_una) && SEQ_LEQ(tp->snd_sml, tp->snd_nxt);
}

/* Nagle (RFC 896) in Minshall's form, as Linux's: a full segment goes; a
 * small one goes when no other small one is in flight (full ones may be:
 * a bulk transfer's last piece does not wait for the delayed ACK of the
 * full segments before it), or with TCP_NODELAY, unless corked.
 * One the window cut short waits for a full one (sender-side silly window
 * avoidance, RFC 1122 4.2.3.4), unless it is half the largest window the
 * peer ever offered: where the MSS is as large as the receive buffer
 * (loopback's), waiting for a full segment would wait for ever, the
 * receiver announcing its window only once it has grown by half. */
static bool nagle_allows(const struct tcpcb *tp, size_t len, size_t unsent, size_t full)
{
    if (len >= full)
        return true;
    if (tp->cork)
        return false;
    if (len < unsent)
        return len >= tp->max_sndwnd / 2;
    return tp->nodelay || !small_in_flight(tp);
}

void tcp_rexmt_reset(struct tcpcb *tp)
{
    bool outstanding = tp->snd_max != tp->snd_una;
    tp->persisting = false;
    tp->rexmt_at = outstanding ? uptime_ns() + tp->rto : 0;
}

/* One pass of the decision: true when a segment was sent. */
static bool output_once(struct tcpcb *tp)
{
    if (tp->t_state == TCPS_CLOSED || tp->t_state == TCPS_LISTEN)
        return false;
    if (syn_state(tp) && tp->snd_nxt == tp->iss) {
        int flags = TH_SYN | (tp->t_state == TCPS_SYN_RECEIVED ? TH_ACK : 0);
        send_segment(tp, tp->iss, 0, flags);
        tp->snd_nxt = tp->iss + 1;
        if (SEQ_GT(tp->snd_nxt, tp->snd_max))
            tp->snd_max = tp->snd_nxt;
        return true;
    }
    if (syn_state(tp)) {
        if (tp->ack_now) {
            send_segment(tp, tp->snd_nxt, 0, TH_ACK);
            return true;
        }
        return false;
    }
    size_t full = segment_max(tp);
    if (tp->snd_sacked_n && SEQ_LT(tp->snd_nxt, tp->snd_max))
        tp->snd_nxt = tcp_sack_skip(tp, tp->snd_nxt, &full);    /* no SACKed byte again */
    size_t off = tp->snd_nxt - tp->snd_una;
    size_t unsent = off < tp->snd.r_len ? tp->snd.r_len - off : 0;
    uint32_t flight = tp->snd_nxt - tp->snd_una;
    uint32_t win = MIN(tp->snd_wnd, tp->cwnd);
    size_t usable = win > flight ? win - flight : 0;
    size_t len = MIN(MIN(unsent, usable), full);
    /* The FIN goes with the last of the data, or alone once all is sent;
     * Nagle never holds back the data a FIN ends (Linux's rule). */
    bool fin = tp->fin_queued && tp->snd_nxt + (uint32_t)len == fin_seq(tp);
    bool data = len && (fin || nagle_allows(tp, len, unsent, full));
    if (!data)
        len = 0;
    if (!len && !fin && !tp->ack_now)
        return false;
    int flags = TH_ACK | (fin ? TH_FIN : 0) | (len && len == unsent ? TH_PUSH : 0);
    uint32_t seq = tp->snd_nxt;
    send_segment(tp, seq, len, flags);
    tp->snd_nxt += (uint32_t)len + (fin ? 1 : 0);
    if (SEQ_GT(tp->snd_nxt, tp->snd_max))
        tp->snd_max = tp->snd_nxt;
    if ((len || fin) && !tp->rtt_timing) {
        tp->rtt_timing = true;
        tp->rtt_seq = seq;
        tp->rtt_start = uptime_ns();
    }
    return len || fin;
}

void tcp_output(struct tcpcb *tp)
{
    while (output_once(tp))
        ;
    if (tp->snd_max != tp->snd_una) {
        if (!tp->rexmt_at || tp->persisting)
            tcp_rexmt_reset(tp);
    } else if (tp->snd.r_len && tp->snd_wnd == 0 && !tp->rexmt_at) {
        tp->persisting = true;          /* the peer's window is shut: probe it */
        tp->rexmt_at = uptime_ns() + MAX(tp->rto, TCP_RTO_MIN);
    }
    tcp_timers_update(tp);
}

/* ---- timers ---- */

/* The retransmission timer went off: back off and send again from
 * snd_una (RFC 6298 5.4-5.7), or give up. */
static bool rexmt_timeout(struct tcpcb *tp)
{
    int limit = syn_state(tp) ? RETRIES_SYN : RETRIES_DATA;
    if (++tp->rxtshift > limit)
        return tcp_drop(tp, tp->t_softerr ? tp->t_softerr : ETIMEDOUT);
    tp->rto = MIN(tp->rto * 2, RTO_MAX);
    uint32_t flight = tp->snd_max - tp->snd_una;
    tp->ssthresh = MAX(flight / 2, 2 * tp->t_maxseg);
    tp->cwnd = tp->t_maxseg;
    tp->in_recovery = false;
    tp->dupacks = 0;
    tp->rtt_timing = false;             /* Karn: no sample from a retransmitted segment */
    tp->snd_nxt = tp->snd_una;
    tp->rexmt_at = 0;
    tcp_output(tp);
    return false;
}

/* The window was shut: send a segment the peer finds old (sequence
 * snd_una - 1, no data, as Linux's probe), which it answers with an ACK
 * that carries its window. */
static void persist_timeout(struct tcpcb *tp)
{
    tp->rexmt_at = 0;
    tp->persisting = false;
    if (!tp->snd.r_len || tp->snd_wnd) {
        tcp_output(tp);
        return;
    }
    send_segment(tp, tp->snd_una - 1, 0, TH_ACK);
    tp->rto = MIN(tp->rto * 2, RTO_MAX);
    tp->persisting = true;
    tp->rexmt_at = uptime_ns() + MAX(tp->rto, TCP_RTO_MIN);
}

/* Keepalive's time came (RFC 1122 4.2.3.6): after keepcnt unanswered
 * probes the connection is dropped (ETIMEDOUT); else one more probe, a
 * segment the peer finds old (sequence snd_una - 1, no data, as
 * Linux's), which it answers with an ACK. */
static bool keep_timeout(struct tcpcb *tp)
{
    if (tp->keep_probes >= tp->keepcnt)
        return tcp_drop(tp, ETIMEDOUT);
    send_segment(tp, tp->snd_una - 1, 0, TH_ACK);
    tp->keep_probes++;
    tp->keep_sent = uptime_ns();
    return false;
}

void tcp_timer_fire(void *arg)
{
    struct tcpcb *tp = arg;
    struct socket *so = tp->t_so;
    mutex_enter(&so->so_lock);
    if (tp->t_state == TCPS_CLOSED) {
        mutex_exit(&so->so_lock);
        return;                         /* its table reference may be gone: touch nothing */
    }
    socket_hold(so);
    uint64_t now = uptime_ns();
    bool rele = false;
    tp->timer_at = 0;
    if (tp->delack_at && now >= tp->delack_at) {
        tp->pingpong = false;               /* no answer came to carry it: not interactive */
        tp->ack_now = true;                 /* sent by tcp_output, which clears delack_at */
        tcp_output(tp);
    }
    if (tp->close_at && now >= tp->close_at)
        rele = tcp_close(tp, tp->t_state == TCPS_TIME_WAIT ? 0 : ETIMEDOUT);
    else if (tp->rexmt_at && now >= tp->rexmt_at && tp->persisting)
        persist_timeout(tp);
    else if (tp->rexmt_at && now >= tp->rexmt_at)
        rele = rexmt_timeout(tp);
    else if (tp->keep_at && now >= tp->keep_at)
        rele = keep_timeout(tp);
    tcp_timers_update(tp);
    mutex_exit(&so->so_lock);
    if (rele)
        socket_rele(so);
    socket_rele(so);
}
