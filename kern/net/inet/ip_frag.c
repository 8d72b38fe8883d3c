/*
 * IPv4 fragment reassembly (RFC 791 section 3.2; RFC 1122 3.3.2).
 *
 * Theory.  A fragment (more-fragments set, or an offset) joins the queue of
 * its datagram, named by source, destination, identification and
 * protocol.  A queue keeps its fragments as they came, sorted by offset;
 * once the last fragment (no more-fragments) has said the datagram's
 * length and the fragments cover it from 0 without a gap, the datagram is
 * rebuilt in one packet: the first fragment's header, its length and
 * fragment field corrected, then every payload in order.  That packet
 * goes on through ip_input as if it had come whole.
 *
 * Bad fragments are dropped and counted, never trusted: a payload that is
 * not a multiple of 8 bytes before the last, one that ends past 65535, a
 * second "last" that disagrees, a fragment past the known end.  An exact
 * duplicate is dropped alone; any other overlap drops the whole datagram,
 * as Linux has done since 4.19 (overlaps are how attacks hide data from
 * firewalls; RFC 5722 says so for IPv6).  A queue not complete in
 * IPFRAG_TIME (30 s, Linux's ipfrag_time) is dropped, and when its first
 * fragment came, ICMP "fragment reassembly time exceeded" goes back
 * (RFC 792).  At most IPFRAG_QUEUES datagrams and IPFRAG_MEM bytes are
 * held at once; a fragment beyond either is dropped.
 *
 * Locks: none.  The queues belong to the network thread: ip_input and the
 * expiry timer (a net_timer, which runs there too) are their only users.
 * The two totals, shown in /proc/net/sockstat's FRAG line, are written
 * there with atomic stores so that a reader elsewhere sees them whole.
 * Lock key: [n] the network thread only; [a] atomic; [c] constant.
 */
#include <kern/net/inet/inet.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <drivers/platform/timer.h>

#define IPFRAG_TIME     30000000000ULL      /* 30 s */
#define IPFRAG_QUEUES   256                 /* Linux bounds by memory alone; this keeps
                                             * ipq_find's walk short */
#define IPFRAG_MEM      (4u << 20)          /* Linux's ipfrag_high_thresh */
#define ICMP_TIMXCEED_REASS 1

/* One fragment: its packet as it came (header included). */
struct frag {
    struct frag *f_next;            /* [n] by offset */
    struct pkt *f_pkt;              /* [n] */
    uint32_t f_off, f_end;          /* [n] its payload's bytes in the datagram */
    uint32_t f_hlen;                /* [n] its header's length */
};

/* One datagram being reassembled. */
struct ipq {
    struct ipq *q_next;             /* [n] the list of queues */
    in_addr_t q_src, q_dst;         /* [n] */
    uint16_t q_id;                  /* [n] network order */
    uint8_t q_proto;                /* [n] */
    bool q_last;                    /* [n] the last fragment came: q_len is known */
    uint32_t q_len;                 /* [n] the payload's length */
    uint32_t q_mem;                 /* [n] bytes of packets held */
    uint64_t q_expires;             /* [n] */
    struct frag *q_frags;           /* [n] */
};

static struct ipq *ipq_list;        /* [n] */
static int ipq_count;               /* [n], read anywhere [a] */
static uint32_t ipq_mem;            /* [n], read anywhere [a] */
static struct net_timer ipq_timer;  /* [c] */
static bool ipq_timer_armed;        /* [n] */

static void ipq_expire(void *unused);

void ip_frag_usage(int *datagrams, uint32_t *bytes)
{
    *datagrams = __atomic_load_n(&ipq_count, __ATOMIC_RELAXED);
    *bytes = __atomic_load_n(&ipq_mem, __ATOMIC_RELAXED);
}

void ip_frag_init(void)
{
    net_timer_init(&ipq_timer, ipq_expire, NULL);
}

/* A fragment dropped (bad, overlapping, no room): /proc/net/snmp's
 * ReasmFails, as Linux counts each. */
static void drop_count(void) { inet_mib_count(IPM_REASM_FAILS); }

static struct ipq *ipq_find(const struct iphdr *ip)
{
    for (struct ipq *q = ipq_list; q; q = q->q_next)
        if (q->q_id == ip->id && q->q_src == ip->src && q->q_dst == ip->dst &&
            q->q_proto == ip->proto)
            return q;
    return NULL;
}

static struct ipq *ipq_new(const struct iphdr *ip)
{
    if (ipq_count >= IPFRAG_QUEUES)
        return NULL;
    struct ipq *q = kzalloc(sizeof *q);
    if (!q)
        return NULL;
    q->q_src = ip->src;
    q->q_dst = ip->dst;
    q->q_id = ip->id;
    q->q_proto = ip->proto;
    q->q_expires = uptime_ns() + IPFRAG_TIME;
    q->q_next = ipq_list;
    ipq_list = q;
    __atomic_store_n(&ipq_count, ipq_count + 1, __ATOMIC_RELAXED);
    if (!ipq_timer_armed) {
        ipq_timer_armed = true;
        net_timer_arm(&ipq_timer, q->q_expires);
    }
    return q;
}

/* Take q off the list and free it with its fragments. */
static void ipq_free(struct ipq *q)
{
    struct ipq **pp = &ipq_list;
    while (*pp != q)
        pp = &(*pp)->q_next;
    *pp = q->q_next;
    __atomic_store_n(&ipq_count, ipq_count - 1, __ATOMIC_RELAXED);
    __atomic_store_n(&ipq_mem, ipq_mem - q->q_mem, __ATOMIC_RELAXED);
    for (struct frag *f = q->q_frags, *next; f; f = next) {
        next = f->f_next;
        pkt_free(f->f_pkt);
        kfree(f);
    }
    kfree(q);
}

/* Where [off, end) goes among q's fragments: the link to insert at, or
 * NULL when it overlaps one (*dup: it is an exact copy of one). */
static struct frag **insert_point(struct ipq *q, uint32_t off, uint32_t end, bool *dup)
{
    *dup = false;
    struct frag **pp = &q->q_frags;
    while (*pp && (*pp)->f_end <= off)
        pp = &(*pp)->f_next;
    if (*pp && (*pp)->f_off < end) {
        *dup = (*pp)->f_off == off && (*pp)->f_end == end;
        return NULL;
    }
    return pp;
}

/* Do the fragments cover the whole datagram? */
static bool complete(const struct ipq *q)
{
    if (!q->q_last)
        return false;
    uint32_t at = 0;
    for (const struct frag *f = q->q_frags; f; f = f->f_next) {
        if (f->f_off != at)
            return false;
        at = f->f_end;
    }
    return at == q->q_len;
}

/* The datagram rebuilt from q's fragments (q is freed), or NULL when
 * memory is short. */
static struct pkt *rebuild(struct ipq *q)
{
    const struct frag *first = q->q_frags;
    uint32_t hlen = first->f_hlen;
    struct pkt *p = pkt_alloc(hlen + q->q_len);
    if (p) {
        memcpy(p->p_data, first->f_pkt->p_data, hlen);
        for (const struct frag *f = q->q_frags; f; f = f->f_next)
            memcpy(p->p_data + hlen + f->f_off, f->f_pkt->p_data + f->f_hlen, f->f_end - f->f_off);
        struct iphdr *ip = (struct iphdr *)p->p_data;
        ip->len = htons((uint16_t)(hlen + q->q_len));
        ip->frag = 0;
        ip->cksum = 0;
        ip->cksum = in_cksum_fold(in_cksum_add(0, ip, hlen));
        p->p_if = first->f_pkt->p_if;
    }
    ipq_free(q);
    return p;
}

/* Is fragment [off, end) of a datagram, last or not, possible at all? */
static bool frag_sane(uint32_t off, uint32_t end, bool more, uint32_t hlen)
{
    if (end <= off && more)
        return false;               /* an empty fragment that is not the last */
    if (more && (end - off) % 8)
        return false;               /* only the last may end off an 8-byte boundary */
    return hlen + end <= IP_MAXPACKET;
}

/* The end of q's last fragment so far (0 when it has none). */
static uint32_t max_end(const struct ipq *q)
{
    uint32_t end = 0;
    for (const struct frag *f = q->q_frags; f; f = f->f_next)
        end = f->f_end;
    return end;
}

/* Does the fragment agree with what q knows of the datagram's end? */
static bool fits_end(const struct ipq *q, uint32_t end, bool more)
{
    if (q->q_last)
        return more ? end <= q->q_len : end == q->q_len;
    return more || end >= max_end(q);
}

enum add_result { ADD_HELD, ADD_COPY, ADD_NO_ROOM, ADD_CONFLICT };

/* Add p, a fragment of q's datagram, to q: ADD_HELD (q keeps p), or why
 * not (p stays the caller's): an exact copy of one q has, no memory, or a
 * conflict (an overlap, an end that disagrees) for which the whole
 * datagram is dropped. */
static enum add_result ipq_add(struct ipq *q, struct pkt *p, uint32_t hlen, uint32_t off,
                               uint32_t end, bool more)
{
    bool dup;
    if (!fits_end(q, end, more))
        return ADD_CONFLICT;
    struct frag **at = insert_point(q, off, end, &dup);
    if (!at)
        return dup ? ADD_COPY : ADD_CONFLICT;
    if (ipq_mem + p->p_size > IPFRAG_MEM)
        return ADD_NO_ROOM;
    struct frag *f = kzalloc(sizeof *f);
    if (!f)
        return ADD_NO_ROOM;
    f->f_pkt = p;
    f->f_off = off;
    f->f_end = end;
    f->f_hlen = hlen;
    f->f_next = *at;
    *at = f;
    q->q_mem += p->p_size;
    __atomic_store_n(&ipq_mem, ipq_mem + p->p_size, __ATOMIC_RELAXED);
    if (!more) {
        q->q_last = true;
        q->q_len = end;
    }
    return ADD_HELD;
}

struct pkt *ip_reassemble(struct pkt *p, size_t hlen)
{
    const struct iphdr *ip = (const struct iphdr *)p->p_data;
    uint16_t frag = ntohs(ip->frag);
    bool more = frag & IP_MF;
    uint32_t off = (uint32_t)(frag & IP_OFFMASK) * 8;
    uint32_t end = off + (p->p_len - (uint32_t)hlen);
    struct ipq *q = NULL;
    if (!frag_sane(off, end, more, (uint32_t)hlen) ||
        (!(q = ipq_find(ip)) && !(q = ipq_new(ip)))) {
        drop_count();
        pkt_free(p);
        return NULL;
    }
    enum add_result r = ipq_add(q, p, (uint32_t)hlen, off, end, more);
    if (r != ADD_HELD) {
        drop_count();
        pkt_free(p);
        if (r == ADD_CONFLICT || !q->q_frags)
            ipq_free(q);
        return NULL;
    }
    return complete(q) ? rebuild(q) : NULL;
}

/* The expiry timer: datagrams not complete in time are dropped, with ICMP
 * "reassembly time exceeded" to the sender when its first fragment came. */
static void ipq_expire(void *unused)
{
    (void)unused;
    uint64_t now = uptime_ns(), next = 0;
    struct ipq *q = ipq_list;
    while (q) {
        struct ipq *after = q->q_next;
        if (q->q_expires <= now) {
            const struct frag *f = q->q_frags;
            if (f && f->f_off == 0)
                icmp_send_error((const struct iphdr *)f->f_pkt->p_data, f->f_pkt->p_len,
                                ICMP_TIMXCEED, ICMP_TIMXCEED_REASS);
            inet_mib_count(IPM_REASM_TIMEOUT);
            inet_mib_count(IPM_REASM_FAILS);
            ipq_free(q);
        } else if (!next || q->q_expires < next) {
            next = q->q_expires;
        }
        q = after;
    }
    ipq_timer_armed = next != 0;
    if (next)
        net_timer_arm(&ipq_timer, next);
}
