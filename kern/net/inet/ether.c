/*
 * Ethernet II framing and ARP (RFC 826) for the interfaces of network
 * devices (drivers/net/).
 *
 * Theory.  At boot every device found becomes an interface, "eth0" ...,
 * with no address until the ip= option (below) or SIOCSIFADDR gives one.
 * A frame comes in by the device's interrupt through nd_rx, which copies
 * it into a packet and queues it (netif_input); the network thread hands
 * it to ether_input, which checks it is for our MAC or broadcast, strips
 * the 14-byte header and gives IPv4 to ip_input and ARP to arp_input.
 * Anything else, or a frame too short, is dropped and counted (rx_dropped).
 *
 * Output (if_output) gets an IPv4 packet and its next hop.  A broadcast
 * next hop goes to ff:ff:ff:ff:ff:ff; any other is looked up in the ARP
 * cache.  A resolved entry younger than ARP_LIFETIME gives the MAC; else
 * the entry is (re)resolving: the packet is held (ARP_HOLD at most a
 * destination, the oldest dropped first, hold_overflow), and a request is
 * broadcast.  The network thread's ARP timer sends the request again each
 * ARP_RETRY_NS, ARP_TRIES times in all; then the held packets are dropped
 * and counted in "unresolved", each first answered to its sender with
 * ICMP "host unreachable" (ip_host_unreachable: a connect then fails with
 * EHOSTUNREACH, as on Linux), and the entry goes.
 *
 * Input follows RFC 826's algorithm with Linux's rules for what is learnt
 * (arp_accept off): a frame that is not Ethernet/IPv4 (hardware type 1,
 * protocol 0x0800, lengths 6 and 4) or too short is dropped and counted
 * (bad).  A sender already in the cache is updated (its held packets
 * sent); a new entry is made only when the frame asks for, or answers,
 * our own address; a gratuitous ARP (sender is target) of a stranger
 * creates nothing; a sender claiming our address, a zero sender (a probe)
 * or a broadcast or multicast sender MAC teaches nothing.  A request for
 * our address is answered.
 *
 * Configuration: ip=A.B.C.D/PREFIX[,GATEWAY] on the kernel command line
 * gives eth0 that address, marks it up, and sets the default gateway
 * (which must be on that subnet).  A value that does not parse is
 * reported on the console and eth0 stays without an address.
 *
 * Locks.  arp_lock (class "arp", a spin lock, row 4 of the order): the
 * cache, its held packets, the timer's armed state.  Nothing else is
 * taken inside it: packets leave the cache's hands (to send or to free)
 * after it is released.  The interfaces' list is fixed after boot.
 */
#include <kern/net/inet/inet.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/options.h>
#include <kern/sched/callout.h>
#include <kern/vm/kmem.h>
#include <drivers/platform/timer.h>

#define ETHERTYPE_IP    0x0800
#define ETHERTYPE_ARP   0x0806
#define ARP_REQUEST     1
#define ARP_REPLY       2
#define ARP_LEN         28

#define ARP_SIZE        32                  /* entries */
#define ARP_HOLD        3                   /* packets held per unresolved entry */
#define ARP_TRIES       3                   /* requests before giving up */
#define ARP_RETRY_NS    1000000000ull
#define ARP_LIFETIME_NS (60 * 1000000000ull)

enum { ARP_FREE, ARP_INCOMPLETE, ARP_RESOLVED };

struct arp_entry {
    uint8_t state;                  /* [arp] */
    uint8_t tries;                  /* [arp] requests sent */
    uint8_t nheld;                  /* [arp] */
    in_addr_t ip;                   /* [arp] */
    struct netif *ifp;              /* [arp] */
    uint8_t mac[ETH_ALEN];          /* [arp] */
    uint64_t when;                  /* [arp] resolved: when answered; incomplete:
                                     * when the last request went */
    struct pkt *held;               /* [arp] packets waiting, oldest first */
};

struct ethhdr {
    uint8_t dst[ETH_ALEN], src[ETH_ALEN];
    uint16_t type;
} __packed;

struct arphdr {
    uint16_t htype, ptype;
    uint8_t hlen, plen;
    uint16_t op;
    uint8_t sha[ETH_ALEN];
    in_addr_t spa;
    uint8_t tha[ETH_ALEN];
    in_addr_t tpa;
} __packed;

LOCK_CLASS(arp_lock_class, "arp", LK_SPIN);

static spinlock_t arp_lock;
static struct arp_entry arp_table[ARP_SIZE];    /* [arp] */
static struct net_timer arp_timer;              /* [c] */
static bool arp_timer_armed;                    /* [arp] */
static struct netif eth_ifs[NETDEV_MAX];        /* [c] after boot, but [a] fields */
struct arpstat arpstat;

static const uint8_t bcast_mac[ETH_ALEN] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

#define COUNT(f) __atomic_add_fetch(&arpstat.f, 1, __ATOMIC_RELAXED)
#define IFCOUNT(ifp, f) __atomic_add_fetch(&(ifp)->if_stats.f, 1, __ATOMIC_RELAXED)

/* ---- frames out ---- */

static void send_frame(struct netif *ifp, const uint8_t *dst, uint16_t type, const void *data,
                       size_t len)
{
    struct ethhdr eh;
    memcpy(eh.dst, dst, ETH_ALEN);
    memcpy(eh.src, ifp->if_hwaddr, ETH_ALEN);
    eh.type = htons(type);
    ifp->if_dev->nd_xmit(ifp->if_dev, &eh, sizeof eh, data, len);
}

static void send_arp(struct netif *ifp, int op, const uint8_t *tha, in_addr_t tpa,
                     const uint8_t *dst)
{
    struct arphdr ah = { .htype = htons(ARPHRD_ETHER), .ptype = htons(ETHERTYPE_IP),
                         .hlen = ETH_ALEN, .plen = 4, .op = htons((uint16_t)op),
                         .spa = __atomic_load_n(&ifp->if_addr, __ATOMIC_RELAXED), .tpa = tpa };
    memcpy(ah.sha, ifp->if_hwaddr, ETH_ALEN);
    memcpy(ah.tha, tha, ETH_ALEN);
    send_frame(ifp, dst, ETHERTYPE_ARP, &ah, sizeof ah);
    if (op == ARP_REQUEST)
        COUNT(requests_sent);
    else
        COUNT(replies_sent);
}

static void send_ip(struct netif *ifp, const uint8_t *mac, struct pkt *p)
{
    send_frame(ifp, mac, ETHERTYPE_IP, p->p_data, p->p_len);
    pkt_free(p);
}

static void free_list(struct pkt *p, uint64_t *counter)
{
    while (p) {
        struct pkt *next = p->p_next;
        if (counter)
            __atomic_add_fetch(counter, 1, __ATOMIC_RELAXED);
        pkt_free(p);
        p = next;
    }
}

/* ---- the cache (arp_lock held) ---- */

static struct arp_entry *arp_find(struct netif *ifp, in_addr_t ip)
{
    for (int i = 0; i < ARP_SIZE; i++)
        if (arp_table[i].state != ARP_FREE && arp_table[i].ip == ip && arp_table[i].ifp == ifp)
            return &arp_table[i];
    return NULL;
}

/* A free entry, or the oldest resolved one, or NULL when every entry is
 * resolving. */
static struct arp_entry *arp_new(struct netif *ifp, in_addr_t ip)
{
    struct arp_entry *e = NULL;
    for (int i = 0; i < ARP_SIZE && (!e || e->state != ARP_FREE); i++) {
        struct arp_entry *c = &arp_table[i];
        if (c->state == ARP_FREE || (c->state == ARP_RESOLVED && (!e || c->when < e->when)))
            e = c;
    }
    if (!e)
        return NULL;
    memset(e, 0, sizeof *e);
    e->ip = ip;
    e->ifp = ifp;
    return e;
}

/* Is the timer to be armed (by the caller, once arp_lock is released:
 * the callout's lock is not taken inside ours)? */
static bool arm_timer(void)
{
    if (arp_timer_armed)
        return false;
    arp_timer_armed = true;
    return true;
}

/* Record ip's MAC in e; its held packets come back to be sent. */
static struct pkt *arp_set(struct arp_entry *e, const uint8_t *mac)
{
    struct pkt *held = e->held;
    if (e->state != ARP_RESOLVED)
        COUNT(resolved);
    memcpy(e->mac, mac, ETH_ALEN);
    e->state = ARP_RESOLVED;
    e->when = uptime_ns();
    e->held = NULL;
    e->nheld = 0;
    return held;
}

/* ---- output ---- */

static void ether_output(struct netif *ifp, struct pkt *p, in_addr_t nexthop)
{
    in_addr_t a = __atomic_load_n(&ifp->if_addr, __ATOMIC_RELAXED);
    in_addr_t m = __atomic_load_n(&ifp->if_mask, __ATOMIC_RELAXED);
    if (nexthop == INADDR_BROADCAST || nexthop == (a | ~m)) {
        send_ip(ifp, bcast_mac, p);
        return;
    }
    uint8_t mac[ETH_ALEN];
    struct pkt *drop = NULL;
    bool request = false, known = false, arm = false;
    spin_lock(&arp_lock);
    struct arp_entry *e = arp_find(ifp, nexthop);
    if (e && e->state == ARP_RESOLVED && uptime_ns() - e->when < ARP_LIFETIME_NS) {
        memcpy(mac, e->mac, ETH_ALEN);
        known = true;
    } else {
        if (e && e->state == ARP_RESOLVED) {        /* stale: ask again */
            e->state = ARP_INCOMPLETE;
            e->tries = 0;
        }
        if (!e && (e = arp_new(ifp, nexthop)))
            e->state = ARP_INCOMPLETE;
        if (!e) {
            drop = p;                               /* every entry is resolving */
        } else {
            if (e->nheld == ARP_HOLD) {             /* the oldest goes, as Linux's */
                drop = e->held;
                e->held = drop->p_next;
                drop->p_next = NULL;
                e->nheld--;
            }
            p->p_next = NULL;
            struct pkt **pp = &e->held;
            while (*pp)
                pp = &(*pp)->p_next;
            *pp = p;
            e->nheld++;
            if (e->tries == 0) {
                e->tries = 1;
                e->when = uptime_ns();
                request = true;
            }
            arm = arm_timer();
        }
    }
    spin_unlock(&arp_lock);
    if (arm)
        net_timer_arm(&arp_timer, uptime_ns() + ARP_RETRY_NS);
    if (known) {
        send_ip(ifp, mac, p);
        return;
    }
    if (drop) {
        COUNT(hold_overflow);
        IFCOUNT(ifp, tx_dropped);
        pkt_free(drop);
    }
    if (request)
        send_arp(ifp, ARP_REQUEST, (const uint8_t[ETH_ALEN]){ 0 }, nexthop, bcast_mac);
}

/* The ARP timer (network thread): requests again, or gives up. */
static void arp_tick(void *unused)
{
    (void)unused;
    struct { struct netif *ifp; in_addr_t ip; } ask[ARP_SIZE];
    int nask = 0;
    struct pkt *dead = NULL;
    uint64_t now = uptime_ns();
    spin_lock(&arp_lock);
    arp_timer_armed = false;
    bool pending = false;
    for (int i = 0; i < ARP_SIZE; i++) {
        struct arp_entry *e = &arp_table[i];
        if (e->state != ARP_INCOMPLETE || now - e->when < ARP_RETRY_NS - ARP_RETRY_NS / 10) {
            pending |= e->state == ARP_INCOMPLETE;
            continue;
        }
        if (e->tries >= ARP_TRIES) {
            struct pkt **pp = &dead;
            while (*pp)
                pp = &(*pp)->p_next;
            *pp = e->held;
            e->state = ARP_FREE;
            e->held = NULL;
            e->nheld = 0;
            continue;
        }
        e->tries++;
        e->when = now;
        ask[nask].ifp = e->ifp;
        ask[nask++].ip = e->ip;
        pending = true;
    }
    bool arm = pending && arm_timer();
    spin_unlock(&arp_lock);
    if (arm)
        net_timer_arm(&arp_timer, uptime_ns() + ARP_RETRY_NS);
    for (struct pkt *p = dead; p; p = p->p_next)
        ip_host_unreachable(p);         /* the sender hears of it (EHOSTUNREACH) */
    free_list(dead, &arpstat.unresolved);
    for (int i = 0; i < nask; i++)
        send_arp(ask[i].ifp, ARP_REQUEST, (const uint8_t[ETH_ALEN]){ 0 }, ask[i].ip, bcast_mac);
}

/* ---- input ---- */

static void arp_input(struct netif *ifp, struct pkt *p)
{
    if (p->p_len < ARP_LEN) {
        COUNT(bad);
        return;
    }
    struct arphdr ah;
    memcpy(&ah, p->p_data, sizeof ah);
    if (ntohs(ah.htype) != ARPHRD_ETHER || ntohs(ah.ptype) != ETHERTYPE_IP ||
        ah.hlen != ETH_ALEN || ah.plen != 4) {
        COUNT(bad);
        return;
    }
    int op = ntohs(ah.op);
    if (op == ARP_REQUEST)
        COUNT(requests_rcvd);
    else if (op == ARP_REPLY)
        COUNT(replies_rcvd);
    else {
        COUNT(bad);
        return;
    }
    in_addr_t ours = __atomic_load_n(&ifp->if_addr, __ATOMIC_RELAXED);
    if (ours == INADDR_ANY)
        return;                     /* no address: nothing to answer or learn for */
    bool for_us = ah.tpa == ours;
    bool learnable = ah.spa != INADDR_ANY && ah.spa != ours && !(ah.sha[0] & 1) &&
                     (ah.spa != ah.tpa || !for_us);
    struct pkt *held = NULL;
    if (learnable) {
        spin_lock(&arp_lock);
        struct arp_entry *e = arp_find(ifp, ah.spa);
        if (!e && for_us)
            e = arp_new(ifp, ah.spa);
        if (e)
            held = arp_set(e, ah.sha);
        spin_unlock(&arp_lock);
    }
    while (held) {
        struct pkt *next = held->p_next;
        held->p_next = NULL;
        send_ip(ifp, ah.sha, held);
        held = next;
    }
    if (for_us && op == ARP_REQUEST && ah.spa != ours)
        send_arp(ifp, ARP_REPLY, ah.sha, ah.spa, ah.sha);
}

void ether_input(struct pkt *p)
{
    struct netif *ifp = p->p_if;
    if (p->p_len < ETH_HDR_LEN) {
        IFCOUNT(ifp, rx_dropped);
        pkt_free(p);
        return;
    }
    struct ethhdr eh;
    memcpy(&eh, p->p_data, sizeof eh);
    bool ours = memcmp(eh.dst, ifp->if_hwaddr, ETH_ALEN) == 0 ||
                memcmp(eh.dst, bcast_mac, ETH_ALEN) == 0;
    if (!ours || !(__atomic_load_n(&ifp->if_flags, __ATOMIC_RELAXED) & IFF_UP)) {
        IFCOUNT(ifp, rx_dropped);
        pkt_free(p);
        return;
    }
    pkt_pull(p, ETH_HDR_LEN);
    switch (ntohs(eh.type)) {
    case ETHERTYPE_IP:
        ip_input(p);
        return;
    case ETHERTYPE_ARP:
        arp_input(ifp, p);
        break;
    default:
        IFCOUNT(ifp, rx_dropped);
        break;
    }
    pkt_free(p);
}

/* The device's receive hook: interrupts off, the frame the driver's. */
static void ether_rx(struct netdev *nd, const void *frame, size_t len)
{
    struct netif *ifp = nd->nd_upper;
    struct pkt *p = pkt_alloc(len);
    if (!p) {
        IFCOUNT(ifp, rx_dropped);
        return;
    }
    memcpy(p->p_data, frame, len);
    netif_input(ifp, p);
}

void ether_test_input(struct netif *ifp, const void *frame, size_t len)
{
    struct pkt *p = pkt_alloc(len);
    if (!p)
        return;
    memcpy(p->p_data, frame, len);
    p->p_if = ifp;
    ether_input(p);
}

/* ---- the cache as text ---- */

size_t arp_format(char *buf, size_t size)
{
    size_t n = 0;
    uint64_t now = uptime_ns();
    n += (size_t)snprintf(buf + n, size - n, "IP address       HW address         State      Device\n");
    spin_lock(&arp_lock);
    for (int i = 0; i < ARP_SIZE && n < size; i++) {
        const struct arp_entry *e = &arp_table[i];
        if (e->state == ARP_FREE)
            continue;
        uint32_t a = ntohl(e->ip);
        char ip[16];
        snprintf(ip, sizeof ip, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
        const char *st = e->state == ARP_INCOMPLETE ? "incomplete"
                         : now - e->when < ARP_LIFETIME_NS ? "reachable" : "stale";
        n += (size_t)snprintf(buf + n, size - n, "%-16s %02x:%02x:%02x:%02x:%02x:%02x  %-10s %s\n",
                              ip, e->mac[0], e->mac[1], e->mac[2], e->mac[3], e->mac[4], e->mac[5],
                              st, e->ifp->if_name);
    }
    spin_unlock(&arp_lock);
    if (n < size)
        n += (size_t)snprintf(buf + n, size - n,
                              "requests_sent %lu requests_rcvd %lu replies_sent %lu replies_rcvd %lu "
                              "bad %lu resolved %lu unresolved %lu hold_overflow %lu\n",
                              arpstat.requests_sent, arpstat.requests_rcvd, arpstat.replies_sent,
                              arpstat.replies_rcvd, arpstat.bad, arpstat.resolved,
                              arpstat.unresolved, arpstat.hold_overflow);
    return MIN(n, size);
}

/* ---- configuration ---- */

/* "A.B.C.D" at *s, moving *s past it. */
static bool parse_addr(const char **s, in_addr_t *out)
{
    uint32_t a = 0;
    for (int part = 0; part < 4; part++) {
        if (part && *(*s)++ != '.')
            return false;
        if (**s < '0' || **s > '9')
            return false;
        uint32_t v = 0;
        for (int d = 0; **s >= '0' && **s <= '9'; d++, (*s)++) {
            v = v * 10 + (uint32_t)(**s - '0');
            if (d >= 3 || v > 255)
                return false;
        }
        a = a << 8 | v;
    }
    *out = htonl(a);
    return true;
}

/* ip=A.B.C.D/PREFIX[,GATEWAY]: false (and nothing set) if it does not parse. */
static bool parse_ip_option(const char *s, in_addr_t *addr, in_addr_t *mask, in_addr_t *gw)
{
    if (!parse_addr(&s, addr) || *s++ != '/')
        return false;
    int prefix = 0, digits = 0;
    for (; *s >= '0' && *s <= '9' && digits < 3; s++, digits++)
        prefix = prefix * 10 + (*s - '0');
    if (!digits || prefix < 1 || prefix > 32)
        return false;
    *mask = htonl(prefix == 32 ? 0xffffffffu : ~(0xffffffffu >> prefix));
    *gw = INADDR_ANY;
    if (*s == ',') {
        s++;
        if (!parse_addr(&s, gw) || ((*gw ^ *addr) & *mask) != 0 || *gw == *addr)
            return false;
    }
    uint32_t h = ntohl(*addr);
    if (*s || h == 0 || (h >> 24) == 127 || (h >> 28) >= 14 || *addr == (*addr | ~*mask))
        return false;
    return true;
}

void ether_init(void)
{
    spin_init(&arp_lock, &arp_lock_class);
    net_timer_init(&arp_timer, arp_tick, NULL);
    int n = MIN(netdev_count(), NETDEV_MAX);
    for (int i = 0; i < n; i++) {
        struct netdev *nd = netdev_get(i);
        struct netif *ifp = &eth_ifs[i];
        memcpy(ifp->if_name, nd->nd_name, sizeof nd->nd_name);
        ifp->if_index = 2 + i;
        ifp->if_mtu = nd->nd_mtu;
        ifp->if_flags = IFF_BROADCAST;
        ifp->if_type = ARPHRD_ETHER;
        memcpy(ifp->if_hwaddr, nd->nd_mac, ETH_ALEN);
        ifp->if_dev = nd;
        ifp->if_output = ether_output;
        nd->nd_upper = ifp;
        nd->nd_stats = &ifp->if_stats;
        nd->nd_rx = ether_rx;
        netif_attach(ifp);
        netdev_start(nd);
    }
    if (!opts.ip[0])
        return;
    in_addr_t addr, mask, gw;
    if (n == 0) {
        kprintf("inet: ip=%s: no network device\n", opts.ip);
    } else if (!parse_ip_option(opts.ip, &addr, &mask, &gw)) {
        kprintf("inet: ip=%s: not A.B.C.D/PREFIX[,GATEWAY] on that subnet; eth0 has no address\n",
                opts.ip);
    } else {
        struct netif *ifp = &eth_ifs[0];
        ifp->if_mask = mask;
        ifp->if_addr = addr;
        ifp->if_flags |= IFF_UP | IFF_RUNNING;
        if (gw && route_add_default(gw))
            kprintf("inet: ip=%s: no room for the default route\n", opts.ip);
        kprintf("inet: %s %s\n", ifp->if_name, opts.ip);
    }
}
