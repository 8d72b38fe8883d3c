/*
 * TCP's out-of-order data and selective acknowledgment (RFC 2018).
 *
 * Receiver.  A segment that arrives past rcv_nxt, inside the window, is
 * kept rather than dropped: its bytes are written into the receive ring
 * at their offset beyond the readable part (the ring's free space is the
 * window offered, so whatever the window admits fits, and nothing more is
 * allocated), and its sequence range is recorded in rcv_ooo, a short
 * sorted list of disjoint ranges (TCP_OOO_MAX; a segment that would need
 * one more range is dropped, as before, and sent again by the peer).
 * When rcv_nxt reaches the first range, its bytes are already in place:
 * the ring's length grows over them and rcv_nxt moves past them.  When
 * SACK was agreed (both SYNs carried SACK-permitted), every ACK reports
 * the ranges held, the one the latest segment joined first (RFC 2018 4).
 *
 * Sender.  The ranges an ACK's SACK option reports above snd_una are kept
 * in snd_sacked (the scoreboard).  Output never sends a SACKed byte again:
 * a retransmission skips over the ranges.  In fast recovery each further
 * duplicate ACK resends the next hole below the highest SACKed byte
 * (high_rxt keeps the end of the last one resent), so that several
 * segments lost from one window are resent within one round trip, where
 * NewReno alone resends one per round trip.  The scoreboard is dropped
 * when snd_una passes it, and kept across a retransmission timeout (as
 * Linux keeps it unless the peer reneges; a reneging peer is served by the
 * timeout's resends once the ranges are passed).
 *
 * Locks: all of it is the connection's, under its socket's so_lock.
 */
#include <kern/net/inet/tcp_impl.h>
#include <kern/lib/string.h>

/* ---- ranges ---- */

/* Add [start, end) to the sorted, disjoint list r of *n (at most max):
 * merged with the ranges it touches.  False when it would need a range
 * more than max. */
static bool range_add(struct tcp_range *r, uint8_t *n, int max, uint32_t start, uint32_t end)
{
    int i = 0;
    while (i < *n && SEQ_LT(r[i].end, start))
        i++;                                /* r[i] is the first that may touch */
    int j = i;
    while (j < *n && SEQ_LEQ(r[j].start, end)) {
        if (SEQ_LT(r[j].start, start))
            start = r[j].start;
        if (SEQ_GT(r[j].end, end))
            end = r[j].end;
        j++;                                /* r[i..j) merge into one */
    }
    if (i == j && *n >= max)
        return false;
    int shift = 1 - (j - i);                /* ranges gained (1) or lost */
    memmove(&r[j + shift], &r[j], (size_t)(*n - j) * sizeof *r);
    r[i].start = start;
    r[i].end = end;
    *n = (uint8_t)(*n + shift);
    return true;
}

/* Drop from list r what lies below seq. */
static void range_trim(struct tcp_range *r, uint8_t *n, uint32_t seq)
{
    int gone = 0;
    while (gone < *n && SEQ_LEQ(r[gone].end, seq))
        gone++;
    memmove(r, r + gone, (size_t)(*n - gone) * sizeof *r);
    *n = (uint8_t)(*n - gone);
    if (*n && SEQ_LT(r[0].start, seq))
        r[0].start = seq;
}

/* ---- the receiver ---- */

size_t tcp_ooo_store(struct tcpcb *tp, uint32_t seq, const uint8_t *data, size_t len)
{
    size_t n = ring_write_at(&tp->rcv, seq - tp->rcv_nxt, data, len);
    if (!n || !range_add(tp->rcv_ooo, &tp->rcv_ooo_n, TCP_OOO_MAX, seq, seq + (uint32_t)n))
        return 0;
    tp->rcv_ooo_last = seq;
    return n;
}

size_t tcp_ooo_advance(struct tcpcb *tp)
{
    size_t gained = 0;
    while (tp->rcv_ooo_n && SEQ_LEQ(tp->rcv_ooo[0].start, tp->rcv_nxt)) {
        if (SEQ_GT(tp->rcv_ooo[0].end, tp->rcv_nxt)) {
            uint32_t more = tp->rcv_ooo[0].end - tp->rcv_nxt;
            tp->rcv.r_len += more;          /* its bytes are in place already */
            tp->rcv_nxt += more;
            gained += more;
        }
        range_trim(tp->rcv_ooo, &tp->rcv_ooo_n, tp->rcv_nxt);
    }
    return gained;
}

void tcp_ooo_clear(struct tcpcb *tp)
{
    tp->rcv_ooo_n = 0;
}

static void put_block(uint8_t *o, const struct tcp_range *r)
{
    uint32_t b[2] = { htonl(r->start), htonl(r->end) };
    memcpy(o, b, sizeof b);
}

/* The blocks our next segment reports, in room bytes of option. */
static int sack_blocks(const struct tcpcb *tp, size_t room)
{
    if (!tp->t_sack_ok || room < 12)
        return 0;
    return MIN(MIN((int)(room - 4) / 8, TCP_SACK_MAX), (int)tp->rcv_ooo_n);
}

size_t tcp_sack_option_len(const struct tcpcb *tp, size_t room)
{
    int n = sack_blocks(tp, room);
    return n ? 4 + 8 * (size_t)n : 0;
}

size_t tcp_sack_option(const struct tcpcb *tp, uint8_t *o, size_t room)
{
    int most = sack_blocks(tp, room), n = 0, first = 0;
    if (!most)
        return 0;
    for (int i = 0; i < tp->rcv_ooo_n; i++)
        if (SEQ_GEQ(tp->rcv_ooo_last, tp->rcv_ooo[i].start) &&
            SEQ_LT(tp->rcv_ooo_last, tp->rcv_ooo[i].end))
            first = i;
    o[0] = OPT_NOP;
    o[1] = OPT_NOP;
    o[2] = OPT_SACK;
    put_block(o + 4, &tp->rcv_ooo[first]);
    n = 1;
    for (int i = 0; i < tp->rcv_ooo_n && n < most; i++)
        if (i != first)
            put_block(o + 4 + 8 * n++, &tp->rcv_ooo[i]);
    o[3] = (uint8_t)(2 + 8 * n);
    return 4 + 8 * (size_t)n;
}

/* ---- the sender ---- */

void tcp_sack_take(struct tcpcb *tp, const uint8_t *blocks, int n)
{
    if (!tp->t_sack_ok)
        return;
    for (int i = 0; i < n; i++) {
        uint32_t b[2];
        memcpy(b, blocks + 8 * i, sizeof b);
        uint32_t start = ntohl(b[0]), end = ntohl(b[1]);
        /* Only what lies above snd_una and was sent: a D-SACK (below) and
         * a block of bytes never sent are no news. */
        if (!SEQ_LT(start, end) || SEQ_LEQ(start, tp->snd_una) || SEQ_GT(end, tp->snd_max))
            continue;
        range_add(tp->snd_sacked, &tp->snd_sacked_n, TCP_OOO_MAX, start, end);
    }
}

void tcp_sack_prune(struct tcpcb *tp)
{
    range_trim(tp->snd_sacked, &tp->snd_sacked_n, tp->snd_una);
    if (SEQ_LT(tp->high_rxt, tp->snd_una))
        tp->high_rxt = tp->snd_una;
}

uint32_t tcp_sack_skip(const struct tcpcb *tp, uint32_t seq, size_t *len)
{
    for (int i = 0; i < tp->snd_sacked_n; i++) {
        const struct tcp_range *r = &tp->snd_sacked[i];
        if (SEQ_GEQ(seq, r->end))
            continue;
        if (SEQ_GEQ(seq, r->start))
            seq = r->end;                   /* SACKed: on past it */
        else if (*len > r->start - seq)
            *len = r->start - seq;          /* stop where it starts */
        if (SEQ_LT(seq, r->start))
            break;
    }
    return seq;
}

bool tcp_sack_next_hole(const struct tcpcb *tp, uint32_t from, uint32_t *start)
{
    if (!tp->snd_sacked_n)
        return false;
    size_t big = (size_t)-1;
    uint32_t seq = tcp_sack_skip(tp, SEQ_LT(from, tp->snd_una) ? tp->snd_una : from, &big);
    if (!SEQ_LT(seq, tp->snd_sacked[tp->snd_sacked_n - 1].start))
        return false;                       /* nothing SACKed above it: not yet a hole */
    *start = seq;
    return true;
}
