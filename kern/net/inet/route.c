/*
 * The routing table: which interface a datagram to an address that is
 * not this machine's leaves by, and the neighbour it goes to.
 *
 * Theory.  As Linux's main table, the longest prefix wins among two kinds
 * of route.  An up interface's own subnet is a connected route, implied
 * by its address and mask and not stored.  The table's entries are added
 * by SIOCADDRT (busybox route) and the ip= option's gateway: a network,
 * a host (RTF_HOST) or the default (0/0), each reached through a gateway
 * that a connected subnet holds (RTF_GATEWAY), or directly through a named
 * interface.  Among routes of one length a connected one comes first, then
 * the lower metric, then the older entry.  An entry whose gateway no up
 * interface reaches any more is skipped, not deleted, as Linux marks its
 * next hop dead.  This machine's own addresses always go by lo (Linux's
 * local table).  The rules of SIOCADDRT and SIOCDELRT are Linux's
 * (ip_rt_ioctl): root only (EPERM), AF_INET (EAFNOSUPPORT), a contiguous
 * mask with no bits of the destination outside it (EINVAL), a gateway an
 * up interface's subnet holds (ENETUNREACH), a known device (ENODEV), an
 * entry added twice (EEXIST), one deleted that is not there (ESRCH).
 *
 * Locks.  route_lock (class "route", a sleep mutex) serialises changes
 * and the walks of /proc/net/route and netlink's RTM_GETROUTE (taken
 * alone, or under the netlink socket's so_lock, never before a socket's).
 * The output path takes no lock: a lookup reads the entries under the
 * sequence count route_seq (odd while a change runs) and reads again if
 * it moved, so the many CPUs that send share no written line.  The
 * interfaces' addresses and flags are single words read atomically
 * (kern/net/inet/netif.c).
 */
#include <kern/net/inet/inet.h>
#include <kern/proc/proc.h>
#include <kern/vfs/cred.h>
#include <kern/vm/as.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <kern/lib/kprintf.h>

#define ROUTES_MAX      32
#define RTF_UP          0x0001
#define RTF_GATEWAY     0x0002
#define RTF_HOST        0x0004

struct route {
    bool rt_used;                   /* [S] */
    in_addr_t rt_dst, rt_mask;      /* [S] the destinations, dst & ~mask == 0 */
    in_addr_t rt_gw;                /* [S] the gateway, or 0: on the link of rt_ifp */
    struct netif *rt_ifp;           /* [S] the interface named, or NULL: the gateway's */
    int rt_metric;                  /* [S] */
};

/* [S]: written under route_lock while route_seq is odd, read under the
 * sequence count. */
static struct route routes[ROUTES_MAX];
static uint32_t route_seq;          /* [a] */
static struct mutex route_lock;
LOCK_CLASS(route_lock_class, "route", LK_MUTEX_SLEEP);

void route_init(void)
{
    mutex_init(&route_lock, &route_lock_class, 0, "route");
}

/* ---- reading under the sequence count ---- */

static uint32_t read_begin(void)
{
    uint32_t s;
    while ((s = __atomic_load_n(&route_seq, __ATOMIC_ACQUIRE)) & 1)
        cpu_relax();
    return s;
}

static bool read_again(uint32_t s)
{
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return __atomic_load_n(&route_seq, __ATOMIC_RELAXED) != s;
}

static struct route entry_read(int i)
{
    const struct route *r = &routes[i];
    return (struct route){
        __atomic_load_n(&r->rt_used, __ATOMIC_RELAXED),
        __atomic_load_n(&r->rt_dst, __ATOMIC_RELAXED),
        __atomic_load_n(&r->rt_mask, __ATOMIC_RELAXED),
        __atomic_load_n(&r->rt_gw, __ATOMIC_RELAXED),
        __atomic_load_n(&r->rt_ifp, __ATOMIC_RELAXED),
        __atomic_load_n(&r->rt_metric, __ATOMIC_RELAXED),
    };
}

/* ---- lookup ---- */

int inet_mask_len(in_addr_t mask)
{
    int n = 0;
    for (uint32_t m = ntohl(mask); m & 0x80000000u; m <<= 1)
        n++;
    return n;
}

/* Is ifp up with an address (lo counts only where allow_lo)? */
static bool usable(const struct netif *ifp, in_addr_t *addr, in_addr_t *mask, bool allow_lo)
{
    *addr = __atomic_load_n(&ifp->if_addr, __ATOMIC_RELAXED);
    *mask = __atomic_load_n(&ifp->if_mask, __ATOMIC_RELAXED);
    bool lo = ifp->if_flags & IFF_LOOPBACK;
    return (allow_lo || !lo) && (__atomic_load_n(&ifp->if_flags, __ATOMIC_RELAXED) & IFF_UP) &&
           *addr;
}

/* The up interface whose subnet holds a (not lo), and its address. */
static struct netif *connected(in_addr_t a, in_addr_t *src, uint32_t *plen)
{
    in_addr_t ia, m;
    for (struct netif *ifp = netifs; ifp; ifp = ifp->if_next)
        if (usable(ifp, &ia, &m, false) && ((a ^ ia) & m) == 0) {
            *src = ia;
            *plen = (uint32_t)inet_mask_len(m);
            return ifp;
        }
    return NULL;
}

struct hop {
    struct netif *ifp;
    in_addr_t src, nexthop;
    int plen, metric;
};

/* Where entry r takes a datagram to dst, if it applies and its next hop
 * is up: true and *h. */
static bool entry_hop(const struct route *r, in_addr_t dst, struct hop *h)
{
    if (!r->rt_used || ((dst ^ r->rt_dst) & r->rt_mask))
        return false;
    uint32_t plen;
    in_addr_t m;
    h->plen = inet_mask_len(r->rt_mask);
    h->metric = r->rt_metric;
    if (r->rt_gw) {
        h->ifp = connected(r->rt_gw, &h->src, &plen);
        h->nexthop = r->rt_gw;
        return h->ifp && (!r->rt_ifp || r->rt_ifp == h->ifp);
    }
    h->ifp = r->rt_ifp;
    h->nexthop = dst;
    if (!h->ifp || !usable(h->ifp, &h->src, &m, true))
        return false;
    if (h->ifp->if_flags & IFF_LOOPBACK)
        h->src = INADDR_ANY;        /* 127.0.0.1 is this host's alone (Linux's host scope) */
    return true;
}

/* The best table entry for dst, read under the sequence count. */
static bool table_hop(in_addr_t dst, struct hop *best)
{
    uint32_t s;
    bool found;
    do {
        s = read_begin();
        found = false;
        for (int i = 0; i < ROUTES_MAX; i++) {
            struct route r = entry_read(i);
            struct hop h;
            if (!entry_hop(&r, dst, &h))
                continue;
            if (!found || h.plen > best->plen || (h.plen == best->plen && h.metric < best->metric)) {
                *best = h;
                found = true;
            }
        }
    } while (read_again(s));
    return found;
}

struct netif *inet_route_nh(in_addr_t dst, in_addr_t *src, in_addr_t *nexthop)
{
    if (inet_local_addr(dst)) {
        *src = dst;             /* an address of ours speaks to itself */
        *nexthop = dst;
        return inet_loopback();
    }
    uint32_t plen = 0;
    in_addr_t csrc;
    struct netif *cifp = connected(dst, &csrc, &plen);
    struct hop t;
    if (table_hop(dst, &t) && (!cifp || t.plen > (int)plen)) {
        *src = t.src;
        *nexthop = t.nexthop;
        return t.ifp;
    }
    *src = csrc;
    *nexthop = dst;
    return cifp;
}

struct netif *inet_route(in_addr_t dst, in_addr_t *src)
{
    in_addr_t nh;
    return inet_route_nh(dst, src, &nh);
}

uint32_t inet_path_mtu(in_addr_t dst)
{
    in_addr_t src, nh;
    struct netif *ifp = inet_route_nh(dst, &src, &nh);
    return ifp ? MIN(ifp->if_mtu, (uint32_t)IP_MAXPACKET) : IP_MAXPACKET;
}

/* ---- changes ---- */

static void write_begin(void)
{
    __atomic_add_fetch(&route_seq, 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static void write_end(void)
{
    __atomic_add_fetch(&route_seq, 1, __ATOMIC_RELEASE);
}

/* r is the route want names: its destination and mask, its metric (any
 * metric when any_metric and want gives none: SIOCDELRT's rule), and its
 * gateway and interface when want gives them. */
static bool route_matches(const struct route *r, const struct route *want, bool any_metric)
{
    return r->rt_used && r->rt_dst == want->rt_dst && r->rt_mask == want->rt_mask &&
           (r->rt_metric == want->rt_metric || (any_metric && !want->rt_metric)) &&
           (!want->rt_gw || r->rt_gw == want->rt_gw) &&
           (!want->rt_ifp || r->rt_ifp == want->rt_ifp);
}

static void entry_store(struct route *r, const struct route *v)
{
    __atomic_store_n(&r->rt_dst, v->rt_dst, __ATOMIC_RELAXED);
    __atomic_store_n(&r->rt_mask, v->rt_mask, __ATOMIC_RELAXED);
    __atomic_store_n(&r->rt_gw, v->rt_gw, __ATOMIC_RELAXED);
    __atomic_store_n(&r->rt_ifp, v->rt_ifp, __ATOMIC_RELAXED);
    __atomic_store_n(&r->rt_metric, v->rt_metric, __ATOMIC_RELAXED);
    __atomic_store_n(&r->rt_used, v->rt_used, __ATOMIC_RELAXED);
}

/* Add r: 0, -EEXIST, -ENOSPC. */
static int route_add(const struct route *r)
{
    int err = -ENOSPC, slot = -1;
    mutex_enter(&route_lock);
    for (int i = 0; i < ROUTES_MAX; i++) {
        if (route_matches(&routes[i], r, false)) {
            slot = -1;
            err = -EEXIST;
            break;
        }
        if (!routes[i].rt_used && slot < 0)
            slot = i;
    }
    if (slot >= 0) {
        write_begin();
        entry_store(&routes[slot], r);
        write_end();
        err = 0;
    }
    mutex_exit(&route_lock);
    return err;
}

/* Delete the first entry r matches (a gateway or device left 0 matches
 * any): 0 or -ESRCH. */
static int route_delete(const struct route *r)
{
    int err = -ESRCH;
    mutex_enter(&route_lock);
    for (int i = 0; i < ROUTES_MAX && err; i++)
        if (route_matches(&routes[i], r, true)) {
            struct route none = { 0 };
            write_begin();
            entry_store(&routes[i], &none);
            write_end();
            err = 0;
        }
    mutex_exit(&route_lock);
    return err;
}

int route_add_default(in_addr_t gw)
{
    struct route r = { .rt_used = true, .rt_gw = gw };
    return route_add(&r);
}

/* ---- SIOCADDRT and SIOCDELRT ---- */

#define SIOCADDRT       0x890B
#define SIOCDELRT       0x890C

/* struct rtentry as x86-64 lays it out (include/uapi/linux/route.h). */
struct rtentry_k {
    uint64_t pad1;
    struct sockaddr_in_k dst, gateway, genmask;
    uint16_t flags;
    int16_t pad2;
    uint64_t pad3;
    uint64_t pad4;
    int16_t metric;
    uint64_t dev;                   /* a user pointer to the device's name, or 0 */
    uint64_t mtu, window;
    uint16_t irtt;
};
_Static_assert(sizeof(struct rtentry_k) == 120, "struct rtentry is 120 bytes on x86-64");

bool socket_route_cmd(uint32_t cmd) { return cmd == SIOCADDRT || cmd == SIOCDELRT; }

/* A mask that is contiguous and covers every bit of dst (bad_mask's test). */
static bool mask_ok(in_addr_t dst, in_addr_t mask)
{
    uint32_t inv = ntohl(~mask);
    return !(dst & ~mask) && !(inv & (inv + 1));
}

static int device_named(uint64_t udev, struct netif **ifpp)
{
    *ifpp = NULL;
    if (!udev)
        return 0;
    char name[NETIF_NAME_MAX];
    if (copyinstr((const char *)udev, name, sizeof name) < 0)
        return -EFAULT;
    for (struct netif *ifp = netifs; ifp; ifp = ifp->if_next)
        if (strncmp(ifp->if_name, name, NETIF_NAME_MAX) == 0)
            *ifpp = ifp;
    return *ifpp ? 0 : -ENODEV;
}

/* struct rtentry into a route, with Linux's checks (rtentry_to_fib_config). */
static int route_from_user(uint32_t cmd, const struct rtentry_k *rt, struct route *r)
{
    if (rt->dst.sin_family != AF_INET)
        return -EAFNOSUPPORT;
    memset(r, 0, sizeof *r);
    r->rt_used = true;
    r->rt_dst = rt->dst.sin_addr;
    r->rt_mask = 0xffffffffu;
    if (!(rt->flags & RTF_HOST)) {
        r->rt_mask = rt->genmask.sin_family == AF_INET ? rt->genmask.sin_addr : 0;
        if (rt->genmask.sin_family != AF_INET && (rt->genmask.sin_addr || rt->genmask.sin_family))
            return -EAFNOSUPPORT;
        if (!mask_ok(r->rt_dst, r->rt_mask))
            return -EINVAL;
    }
    r->rt_metric = rt->metric ? rt->metric - 1 : 0;
    int err = device_named(rt->dev, &r->rt_ifp);
    if (err)
        return err;
    if (rt->gateway.sin_family == AF_INET && rt->gateway.sin_addr && (rt->flags & RTF_GATEWAY))
        r->rt_gw = rt->gateway.sin_addr;
    if (cmd == SIOCDELRT)
        return 0;
    if ((rt->flags & RTF_GATEWAY) && !r->rt_gw)
        return -EINVAL;
    if (!r->rt_gw && !r->rt_ifp)
        return -EINVAL;             /* neither a gateway nor a device: nowhere */
    in_addr_t src;
    uint32_t plen;
    if (r->rt_gw && !connected(r->rt_gw, &src, &plen))
        return -ENETUNREACH;        /* "Nexthop has invalid gateway" */
    return 0;
}

int route_ioctl(uint32_t cmd, uint64_t uarg)
{
    if (curproc()->p_cred->cr_uid != 0)
        return -EPERM;
    struct rtentry_k rt;
    if (copyin((void *)uarg, &rt, sizeof rt))
        return -EFAULT;
    struct route r;
    int err = route_from_user(cmd, &rt, &r);
    if (err)
        return err;
    return cmd == SIOCADDRT ? route_add(&r) : route_delete(&r);
}

/* ---- what /proc/net/route shows (kern/net/inet/net_proc.c) ---- */

void route_walk(route_walk_fn *fn, void *arg)
{
    mutex_enter(&route_lock);
    for (int i = 0; i < ROUTES_MAX; i++) {
        struct route r = routes[i];
        struct hop h;
        if (!entry_hop(&r, r.rt_dst, &h))
            continue;           /* unused, or its next hop is down */
        int flags = RTF_UP | (r.rt_gw ? RTF_GATEWAY : 0) |
                    (r.rt_mask == 0xffffffffu ? RTF_HOST : 0);
        fn(arg, h.ifp, r.rt_dst, r.rt_gw, flags, r.rt_metric, r.rt_mask);
    }
    mutex_exit(&route_lock);
    for (struct netif *ifp = netifs; ifp; ifp = ifp->if_next) {
        in_addr_t a, m;
        if (usable(ifp, &a, &m, false))
            fn(arg, ifp, a & m, 0, RTF_UP, 0, m);
    }
}
