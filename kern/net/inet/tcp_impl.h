/*
 * TCP's own structures, shared by kern/net/inet/tcp_usr.c (the socket
 * calls), tcp_input.c (segments that arrive), tcp_output.c (segments
 * sent, timers) and tcp_subr.c (the buffers, the life of a connection).
 * Theory in tcp_input.c.
 *
 * Lock key: [s] the socket's so_lock; [L] the listener's so_lock (its
 * queues); [c] constant once set.
 */
#ifndef KERN_NET_INET_TCP_IMPL_H
#define KERN_NET_INET_TCP_IMPL_H

#include <kern/net/inet/inet.h>

/* The states of RFC 9293, section 3.3.2. */
enum tcp_state {
    TCPS_CLOSED, TCPS_LISTEN, TCPS_SYN_SENT, TCPS_SYN_RECEIVED, TCPS_ESTABLISHED,
    TCPS_CLOSE_WAIT, TCPS_FIN_WAIT_1, TCPS_CLOSING, TCPS_LAST_ACK, TCPS_FIN_WAIT_2,
    TCPS_TIME_WAIT,
};

/* What the socket layer sees, as Linux's sock->state: a connect's
 * progress, apart from the protocol's state. */
enum tcp_sostate { SS_UNCONNECTED, SS_CONNECTING, SS_CONNECTED };

#define TH_FIN  0x01
#define TH_SYN  0x02
#define TH_RST  0x04
#define TH_PUSH 0x08
#define TH_ACK  0x10
#define TH_URG  0x20

#define TCP_HDR_LEN     20
#define TCP_MSS_MAX     (IP_MAXPACKET - IP_HDR_LEN - TCP_HDR_LEN)  /* 65495 */
#define TCP_MSS_DEFAULT 536                 /* RFC 9293: when the peer names none */
#define TCP_WSCALE      7                   /* the window scale we offer (Linux's usual) */
#define TCP_TS_LEN      12                  /* NOP, NOP, then the 10-byte timestamps option */
#define TCP_OPT_ROOM    40                  /* the most options a header holds */

/* Option kinds (RFC 9293 3.2, RFC 7323). */
#define OPT_EOL         0
#define OPT_NOP         1
#define OPT_MSS         2
#define OPT_WSCALE      3
#define OPT_SACK_PERM   4
#define OPT_SACK        5
#define OPT_TIMESTAMP   8
#define TCP_OOO_MAX     8                   /* out-of-order ranges a receiver holds */
#define TCP_SACK_MAX    4                   /* SACK blocks one option carries at most */
#define TCP_SNDBUF      16384               /* Linux's tcp_wmem[1] */
#define TCP_RCVBUF      131072              /* Linux's tcp_rmem[1] */
#define TCP_RING_MIN    65536               /* the least a connection buffers each way */
#define TCP_RTO_MIN     200000000ULL        /* Linux's TCP_RTO_MIN: 200 ms */
#define TCP_TIME_WAIT   60000000000ULL      /* Linux's TCP_TIMEWAIT_LEN: 60 s */
#define TCP_FIN_TIMEOUT 60000000000ULL      /* Linux's tcp_fin_timeout: an orphan's FIN_WAIT_2 */
#define TCP_DELACK      40000000ULL         /* a delayed ACK's delay, Linux's 40 ms */
#define TCP_QUICKACK_SEGS 16                  /* a new connection's segments ACKed at once */

#define SEQ_LT(a, b)    ((int32_t)((a) - (b)) < 0)
#define SEQ_LEQ(a, b)   ((int32_t)((a) - (b)) <= 0)
#define SEQ_GT(a, b)    ((int32_t)((a) - (b)) > 0)
#define SEQ_GEQ(a, b)   ((int32_t)((a) - (b)) >= 0)

struct tcphdr {
    uint16_t sport, dport;
    uint32_t seq, ack;
    uint8_t off;                    /* data offset in words, high nibble */
    uint8_t flags;
    uint16_t win, cksum, urp;
};

/* A byte ring: a connection's send buffer (from snd_una on) or its
 * receive buffer (bytes not yet read). */
struct tcp_ring {
    char *r_buf;
    size_t r_size, r_head, r_len;
};

/* A range of sequence space, [start, end): bytes held out of order, or
 * bytes the peer reported in a SACK block (RFC 2018). */
struct tcp_range {
    uint32_t start, end;
};

/* What TCP_INFO reports that the protocol itself does not keep. */
struct tcp_stats {
    uint64_t bytes_sent, bytes_retrans; /* data bytes sent, and of those sent again */
    uint64_t bytes_acked;           /* sequence space the peer acknowledged (SYN, FIN too) */
    uint64_t bytes_received;        /* data bytes taken in order */
    uint32_t segs_out, segs_in;     /* every segment, and those with data: */
    uint32_t data_segs_out, data_segs_in;
    uint32_t total_retrans;         /* segments sent again (SYNs and FINs too) */
    uint32_t rcv_ooopack;           /* data segments that came out of order */
    uint64_t min_rtt;               /* the least RTT sample, ns (0: none yet) */
    uint64_t last_data_sent, last_data_recv;   /* uptime_ns() of each, 0 for never */
};

struct tcpcb {
    struct socket *t_so;            /* [c] */
    enum tcp_state t_state;         /* [s] */
    enum tcp_sostate t_sostate;     /* [s] */
    bool connect_unseen;            /* [s] an active open completed that no connect()
                                     * has reported (Linux's reports it once, with 0) */
    /* send sequence space (RFC 9293 3.3.1) */
    uint32_t iss, snd_una, snd_nxt, snd_max, snd_wnd, snd_wl1, snd_wl2;   /* [s] */
    uint32_t max_sndwnd;            /* [s] the largest window the peer offered */
    uint32_t snd_sml;               /* [s] the end of the last segment sent smaller
                                     * than the MSS (Minshall's Nagle) */
    /* receive sequence space */
    uint32_t irs, rcv_nxt, rcv_adv; /* [s] rcv_adv: the right edge last advertised */
    uint32_t t_maxseg;              /* [s] the most data a segment carries */
    uint8_t snd_wscale, rcv_wscale; /* [s] window scale (RFC 7323), both 0 unless agreed */
    bool t_wscale_ok;               /* [s] the peer's SYN offered window scaling */
    /* timestamps (RFC 7323), on every segment once both SYNs carried them */
    bool t_ts_ok;                   /* [s] */
    bool ts_recent_set;             /* [s] ts_recent holds a value */
    uint32_t ts_recent;             /* [s] the peer's TSval that our segments echo */
    uint32_t ts_offset;             /* [c] added to our clock: a random start (RFC 7323 5.4) */
    uint32_t last_ack_sent;         /* [s] the ACK field of our last segment */
    /* SACK (RFC 2018), once both SYNs carried SACK-permitted; the
     * out-of-order ranges are kept whether or not it was agreed */
    bool t_sack_ok;                 /* [s] */
    struct tcp_range rcv_ooo[TCP_OOO_MAX];  /* [s] bytes held in rcv past rcv_nxt (at
                                     * their offsets beyond r_len), sorted, disjoint */
    uint8_t rcv_ooo_n;              /* [s] */
    uint32_t rcv_ooo_last;          /* [s] a sequence number of the last segment held
                                     * out of order: its range is reported first */
    struct tcp_range snd_sacked[TCP_OOO_MAX];   /* [s] what the peer SACKed of
                                     * (snd_una, snd_max), sorted, disjoint */
    uint8_t snd_sacked_n;           /* [s] */
    uint32_t high_rxt;              /* [s] the end of the last hole resent in recovery */
    /* congestion control: NewReno (RFC 6582) */
    uint32_t cwnd, ssthresh, recover;   /* [s] */
    int dupacks;                    /* [s] */
    bool in_recovery;               /* [s] */
    /* round-trip time (RFC 6298), in nanoseconds */
    uint64_t srtt, rttvar, rto;     /* [s] */
    bool rtt_timing;                /* [s] a segment is being timed */
    uint32_t rtt_seq;               /* [s] */
    uint64_t rtt_start;             /* [s] */
    int rxtshift;                   /* [s] retransmissions in a row */
    int t_softerr;                  /* [s] the last ICMP error heard while established (RFC
                                     * 1122 4.2.3.9): reported if the connection times out */
    /* the buffers */
    struct tcp_ring snd, rcv;       /* [s] */
    bool fin_queued;                /* [s] the FIN follows the data in snd */
    bool fin_acked;                 /* [s] */
    bool ack_now;                   /* [s] an ACK is owed */
    uint64_t delack_at;             /* [s] a delayed ACK is due then (0: none owed) */
    uint8_t segs_unacked;           /* [s] data segments taken since the last ACK sent */
    uint8_t quickack;               /* [s] data segments still to ACK at once */
    bool pingpong;                  /* [s] interactive: the application answers what
                                     * it reads within TCP_DELACK (its answer carries
                                     * the ACK), as Linux's pingpong mode */
    bool nodelay, cork;             /* [s] TCP_NODELAY, TCP_CORK */
    int keepidle, keepintvl, keepcnt;   /* [s] TCP_KEEPIDLE, TCP_KEEPINTVL (s), TCP_KEEPCNT */
    /* keepalive (SO_KEEPALIVE; RFC 1122 4.2.3.6) */
    uint64_t t_rcvtime;             /* [s] when the last segment came in */
    uint64_t keep_sent;             /* [s] when the last probe went */
    int keep_probes;                /* [s] probes sent since that segment */
    bool orphan;                    /* [s] its file is closed */
    /* timers: one net_timer for the earliest of these (0: not armed) */
    struct net_timer t_timer;       /* [c] */
    uint64_t rexmt_at;              /* [s] retransmission or persist */
    bool persisting;                /* [s] rexmt_at is a zero-window probe */
    uint64_t close_at;              /* [s] TIME_WAIT's end, or an orphan's FIN_WAIT_2 */
    uint64_t keep_at;               /* [s] keepalive's next probe or verdict, 0 for none */
    uint64_t timer_at;              /* [s] what t_timer is armed for */
    /* a listener's queues, and a passive connection's link in them */
    struct socket *t_listener;      /* [s] held until the connection is queued */
    struct tcpcb *t_aq, **t_aqtail; /* [s] a listener's established, not accepted */
    struct tcpcb *t_aqnext;         /* [L] */
    int t_aqlen, t_backlog;         /* [s] queued, the limit; written [a], read [a]
                                     * without the lock by a handshake ending */
    int t_synlen;                   /* [a] half-open connections (SYN_RECEIVED) */
    struct tcp_stats t_stats;       /* [s] TCP_INFO's counters */
};

static inline struct tcpcb *sototcp(struct socket *so) { return sotoinp(so)->inp_ppcb; }

/* tcp_subr.c */
size_t ring_append(struct tcp_ring *r, const void *data, size_t n);
void ring_copy(const struct tcp_ring *r, size_t off, void *dst, size_t n);
void ring_drop(struct tcp_ring *r, size_t n);
/* Write n bytes at off past the ring's end without taking them in (r_len
 * unchanged): the bytes that fit in its free space. */
size_t ring_write_at(struct tcp_ring *r, size_t off, const void *data, size_t n);
int tcp_rings_alloc(struct tcpcb *tp);
/* A connection in TIME_WAIT sends and receives nothing more: its send ring
 * goes at once, its receive ring once no file can read it (an orphan), so
 * that the thousands a busy client leaves for 60 s hold no buffers (Linux
 * keeps a small timewait sock in their place).  so_lock held. */
void tcp_shed_rings(struct tcpcb *tp);
/* Listener lt's accept queue is past its backlog (Linux's test), read
 * without lt's lock. */
static inline bool tcp_accept_queue_full(const struct tcpcb *lt)
{
    return __atomic_load_n(&lt->t_aqlen, __ATOMIC_RELAXED) >
           __atomic_load_n(&lt->t_backlog, __ATOMIC_RELAXED);
}
uint32_t tcp_new_iss(void);
/* The window to advertise now (unscaled bytes of free receive buffer). */
uint32_t tcp_rcv_window(const struct tcpcb *tp);
/* The peer's window is now wnd (unscaled bytes). */
static inline void tcp_set_snd_wnd(struct tcpcb *tp, uint32_t wnd)
{
    tp->snd_wnd = wnd;
    if (wnd > tp->max_sndwnd)
        tp->max_sndwnd = wnd;
}
/* Enter state (waking whoever waits on a change). */
void tcp_set_state(struct tcpcb *tp, enum tcp_state state);
/* The connection ends (so_lock held): CLOSED, its buffers dropped, out of
 * the table, err reported (0: none).  Returns true when the caller must
 * drop the table's reference (socket_rele) after letting so_lock go. */
bool tcp_close(struct tcpcb *tp, int err);
/* The connection is torn down with a RST to the peer, as tcp_close. */
bool tcp_drop(struct tcpcb *tp, int err);
/* A segment came in on a synchronized connection: keepalive starts over. */
void tcp_keep_heard(struct tcpcb *tp);
/* Enter TIME_WAIT: the port gives way to SO_REUSEADDR, and the
 * connection ends when its 60 s are over. */
void tcp_enter_time_wait(struct tcpcb *tp);
/* The timers: (re)arm t_timer for the earliest deadline. */
void tcp_timers_update(struct tcpcb *tp);

/* tcp_sack.c: the out-of-order ranges (receiver) and the SACK
 * scoreboard (sender); so_lock held throughout. */
/* Hold len bytes that came at seq, past rcv_nxt: the bytes held. */
size_t tcp_ooo_store(struct tcpcb *tp, uint32_t seq, const uint8_t *data, size_t len);
/* rcv_nxt moved: the bytes held that are now in order join the ring's
 * readable part; returns how many. */
size_t tcp_ooo_advance(struct tcpcb *tp);
void tcp_ooo_clear(struct tcpcb *tp);
/* The SACK option for our next segment (NOPs and all) at o, at most room
 * bytes: its length, 0 when there is nothing to report. */
size_t tcp_sack_option(const struct tcpcb *tp, uint8_t *o, size_t room);
/* Its length alone. */
size_t tcp_sack_option_len(const struct tcpcb *tp, size_t room);
/* An ACK's SACK option (its blocks, n of them, in network order). */
void tcp_sack_take(struct tcpcb *tp, const uint8_t *blocks, int n);
/* snd_una moved: forget what it passed. */
void tcp_sack_prune(struct tcpcb *tp);
/* The next sequence to send from seq, past what the peer SACKed, and the
 * most that may go from there before the next SACKed range. */
uint32_t tcp_sack_skip(const struct tcpcb *tp, uint32_t seq, size_t *len);
/* The next hole (not SACKed, below the highest SACKed byte) at or past
 * from: true with its start. */
bool tcp_sack_next_hole(const struct tcpcb *tp, uint32_t from, uint32_t *start);

/* tcp_output.c */
/* Send again len bytes of the send buffer from seq (a hole SACK found). */
void tcp_resend(struct tcpcb *tp, uint32_t seq, size_t len);
/* Our timestamp clock for tp (RFC 7323): milliseconds from a random start. */
uint32_t tcp_ts_now(const struct tcpcb *tp);
/* Send what the state, the windows and the buffers allow (so_lock held). */
void tcp_output(struct tcpcb *tp);
/* A bare segment from the given ends (a RST to a segment no socket owns). */
void tcp_respond(in_addr_t src, uint16_t sport, in_addr_t dst, uint16_t dport, uint32_t seq,
                 uint32_t ack, int flags);
void tcp_timer_fire(void *arg);
/* Stop the retransmission timer, or start it for what is outstanding. */
void tcp_rexmt_reset(struct tcpcb *tp);

/* tcp_input.c: a passive connection became established (the listener's
 * lock not held): put it in its listener's accept queue. */
void tcp_queue_accepted(struct tcpcb *tp);

#endif
