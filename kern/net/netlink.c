/*
 * AF_NETLINK: the part of NETLINK_ROUTE that C libraries ask at start-up,
 * the interface list (RTM_GETLINK) and the addresses (RTM_GETADDR), and
 * the main routing table (RTM_GETROUTE, kern/net/inet/route.c), as dumps.
 * glibc's if_nameindex and getaddrinfo's AI_ADDRCONFIG read them; so do
 * busybox's ip and ip route.
 *
 * Theory.  A request is a datagram of netlink messages (RFC 3549's
 * format, Linux's constants); each dump request is answered at once by
 * queueing one reply datagram per interface or address and an
 * NLMSG_DONE, which the caller then receives as datagrams.  A request of
 * another type gets NLMSG_ERROR with EOPNOTSUPP.  There is no multicast
 * (groups are refused) and nothing to change: the interfaces are the
 * network stack's (kern/net/inet/netif.c); routes change by SIOCADDRT.
 *
 * Locks: the socket's so_lock guards its reply queue; nothing else.
 */
#include <kern/net/inet/inet.h>
#include <kern/proc/proc.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

#define AF_NETLINK      16
#define NETLINK_ROUTE   0
#define NLMSG_ERROR     2
#define NLMSG_DONE      3
#define NLM_F_MULTI     0x2
#define NLM_F_DUMP      0x300
#define RTM_NEWLINK     16
#define RTM_GETLINK     18
#define RTM_NEWADDR     20
#define RTM_GETADDR     22
#define RTM_NEWROUTE    24
#define RTM_GETROUTE    26
#define RTA_DST         1
#define RTA_OIF         4
#define RTA_GATEWAY     5
#define RTA_PRIORITY    6
#define RTA_PREFSRC     7
#define RTA_TABLE       15
#define RT_TABLE_MAIN   254
#define RTPROT_KERNEL   2           /* a connected subnet's route */
#define RTPROT_BOOT     3           /* one added by ioctl or the boot option */
#define RTN_UNICAST     1
#define RT_SCOPE_LINK   253
#define RTF_GATEWAY     0x0002
#define IFLA_ADDRESS    1
#define IFLA_IFNAME     3
#define IFLA_MTU        4
#define IFLA_BROADCAST  2
#define IFLA_TXQLEN     13
#define IFF_LOWER_UP    0x10000     /* the link is up (RFC 2863's operational state) */
#define IFA_F_PERMANENT 0x80        /* configured, not learnt: no lifetime */
#define LINK_TXQLEN     1000        /* Linux's default txqueuelen */
#define IFA_ADDRESS     1
#define IFA_LOCAL       2
#define IFA_LABEL       3
#define RT_SCOPE_UNIVERSE 0
#define RT_SCOPE_HOST   254
#define REQUEST_MAX     65536
#define NL_ALIGN(n)     (((n) + 3) & ~(size_t)3)

struct nlmsghdr_k { uint32_t len; uint16_t type, flags; uint32_t seq, pid; };
struct sockaddr_nl_k { uint16_t family, pad; uint32_t pid, groups; };
struct ifinfomsg_k { uint8_t family, pad; uint16_t type; int32_t index; uint32_t flags, change; };
struct ifaddrmsg_k { uint8_t family, prefixlen, flags, scope; uint32_t index; };
struct rtmsg_k { uint8_t family, dst_len, src_len, tos, table, protocol, scope, type; uint32_t flags; };
struct rtattr_k { uint16_t len, type; };

/* Netlink's part of a socket; its replies wait on so_dgq (dgram.c). */
struct nlpcb {
    uint32_t n_portid;              /* [s] */
};

static struct nlpcb *sotonl(struct socket *so) { return so->so_pcb; }

static int nl_protocol(int *type, int protocol)
{
    if (*type != SOCK_RAW && *type != SOCK_DGRAM)
        return -ESOCKTNOSUPPORT;
    return protocol == NETLINK_ROUTE ? NETLINK_ROUTE : -EPROTONOSUPPORT;
}

static int nl_attach(struct socket *so)
{
    struct nlpcb *n = kzalloc(sizeof *n);
    if (!n)
        return -ENOMEM;
    so->so_pcb = n;
    return 0;
}

static void nl_release(struct socket *so)
{
    mutex_enter(&so->so_lock);
    dgram_flush(so);
    mutex_exit(&so->so_lock);
}

static void nl_destroy(struct socket *so) { kfree(so->so_pcb); }

static int nl_bind(struct socket *so, const void *addr, size_t len)
{
    struct sockaddr_nl_k a;
    if (len < sizeof a)
        return -EINVAL;
    memcpy(&a, addr, sizeof a);
    if (a.family != AF_NETLINK)
        return -EINVAL;
    if (a.groups)
        return -EPERM;              /* no multicast groups here */
    mutex_enter(&so->so_lock);
    sotonl(so)->n_portid = a.pid ? a.pid : (uint32_t)curproc()->p_pid;
    mutex_exit(&so->so_lock);
    return 0;
}

static int nl_connect(struct socket *so, const void *addr, size_t len, bool nonblock)
{
    return len < sizeof(uint16_t) ? -EINVAL : 0;    /* the kernel is the only peer */
}

/* ---- building replies ---- */

/* A reply being built: its bytes grow by put(). */
struct builder {
    char buf[256];
    size_t len;
    uint32_t portid;                /* the asking socket's, which every reply names */
};

static void put(struct builder *b, const void *data, size_t n)
{
    memcpy(b->buf + b->len, data, n);
    b->len = NL_ALIGN(b->len + n);
}

static void put_attr(struct builder *b, uint16_t type, const void *data, size_t n)
{
    struct rtattr_k a = { (uint16_t)(sizeof a + n), type };
    memcpy(b->buf + b->len, &a, sizeof a);
    memcpy(b->buf + b->len + sizeof a, data, n);
    b->len = NL_ALIGN(b->len + sizeof a + n);
}

static void begin(struct builder *b, const struct nlmsghdr_k *req, uint16_t type, uint16_t flags)
{
    struct nlmsghdr_k h = { 0, type, flags, req->seq, b->portid };
    b->len = 0;
    put(b, &h, sizeof h);
}

/* Finish the message in b and queue it as one datagram. */
static void queue(struct socket *so, struct builder *b)
{
    ((struct nlmsghdr_k *)b->buf)->len = (uint32_t)b->len;
    struct sockaddr_nl_k a = { .family = AF_NETLINK };
    struct dgram *d = dgram_alloc(b->len, &a, sizeof a);
    if (!d)
        return;
    memcpy(d->d_data, b->buf, b->len);
    if (!dgram_enqueue(so, d, false))
        kfree(d);
}

static void dump_links(struct socket *so, const struct nlmsghdr_k *req, struct builder *b)
{
    for (struct netif *ifp = netifs; ifp; ifp = ifp->if_next) {
        begin(b, req, RTM_NEWLINK, NLM_F_MULTI);
        struct ifinfomsg_k ii = { .family = AF_UNSPEC, .type = ifp->if_type,
                                  .index = ifp->if_index,
                                  .flags = ifp->if_flags |
                                           (ifp->if_flags & IFF_RUNNING ? IFF_LOWER_UP : 0) };
        put(b, &ii, sizeof ii);
        put_attr(b, IFLA_IFNAME, ifp->if_name, strlen(ifp->if_name) + 1);
        put_attr(b, IFLA_MTU, &ifp->if_mtu, sizeof ifp->if_mtu);
        put_attr(b, IFLA_ADDRESS, ifp->if_hwaddr, sizeof ifp->if_hwaddr);
        uint8_t brd[ETH_ALEN];      /* Ethernet's broadcast address; loopback has none */
        memset(brd, ifp->if_type == ARPHRD_ETHER ? 0xff : 0, sizeof brd);
        put_attr(b, IFLA_BROADCAST, brd, sizeof brd);
        uint32_t txqlen = LINK_TXQLEN;
        put_attr(b, IFLA_TXQLEN, &txqlen, sizeof txqlen);
        queue(so, b);
    }
}

static uint8_t prefix_len(in_addr_t mask) { return (uint8_t)inet_mask_len(mask); }

static void dump_addrs(struct socket *so, const struct nlmsghdr_k *req, struct builder *b)
{
    for (struct netif *ifp = netifs; ifp; ifp = ifp->if_next) {
        if (ifp->if_addr == INADDR_ANY)
            continue;               /* an interface with no address yet */
        begin(b, req, RTM_NEWADDR, NLM_F_MULTI);
        struct ifaddrmsg_k ia = { .family = AF_INET, .flags = IFA_F_PERMANENT,
                                  .prefixlen = prefix_len(ifp->if_mask),
                                  .scope = ifp->if_dev ? RT_SCOPE_UNIVERSE : RT_SCOPE_HOST,
                                  .index = (uint32_t)ifp->if_index };
        put(b, &ia, sizeof ia);
        put_attr(b, IFA_ADDRESS, &ifp->if_addr, 4);
        put_attr(b, IFA_LOCAL, &ifp->if_addr, 4);
        put_attr(b, IFA_LABEL, ifp->if_name, strlen(ifp->if_name) + 1);
        queue(so, b);
    }
}

struct route_dump {
    struct socket *so;
    const struct nlmsghdr_k *req;
    struct builder *b;
};

/* One route as RTM_NEWROUTE: a subnet's is the kernel's, scope link, with
 * the interface's address as its preferred source, as Linux shows it. */
static void dump_route(void *arg, const struct netif *ifp, in_addr_t dst, in_addr_t gw,
                       int flags, int metric, in_addr_t mask)
{
    struct route_dump *rd = arg;
    struct builder *b = rd->b;
    bool subnet = !gw && !(flags & RTF_GATEWAY) && dst == (ifp->if_addr & mask) && !metric &&
                  !(ifp->if_flags & IFF_LOOPBACK);
    begin(b, rd->req, RTM_NEWROUTE, NLM_F_MULTI);
    struct rtmsg_k rm = { .family = AF_INET, .dst_len = prefix_len(mask),
                          .table = RT_TABLE_MAIN,
                          .protocol = subnet ? RTPROT_KERNEL : RTPROT_BOOT,
                          .scope = gw ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK,
                          .type = RTN_UNICAST };
    put(b, &rm, sizeof rm);
    uint32_t table = RT_TABLE_MAIN, oif = (uint32_t)ifp->if_index, prio = (uint32_t)metric;
    put_attr(b, RTA_TABLE, &table, sizeof table);
    if (rm.dst_len)
        put_attr(b, RTA_DST, &dst, 4);
    if (subnet)
        put_attr(b, RTA_PREFSRC, &ifp->if_addr, 4);
    if (gw)
        put_attr(b, RTA_GATEWAY, &gw, 4);
    if (metric)
        put_attr(b, RTA_PRIORITY, &prio, sizeof prio);
    put_attr(b, RTA_OIF, &oif, sizeof oif);
    queue(rd->so, b);
}

static void dump_routes(struct socket *so, const struct nlmsghdr_k *req, struct builder *b)
{
    struct route_dump rd = { so, req, b };
    route_walk(dump_route, &rd);
}

/* Answer one request message (so_lock held).  The answers carry the
 * asking socket's port id, as Linux's do (busybox's ip skips any other;
 * nl_send gives a socket never bound one, as Linux's autobind does). */
static void answer(struct socket *so, const struct nlmsghdr_k *req)
{
    struct builder b = { .portid = sotonl(so)->n_portid };
    bool dump = (req->flags & NLM_F_DUMP) == NLM_F_DUMP;
    if (dump && (req->type == RTM_GETLINK || req->type == RTM_GETADDR ||
                 req->type == RTM_GETROUTE)) {
        if (req->type == RTM_GETLINK)
            dump_links(so, req, &b);
        else if (req->type == RTM_GETADDR)
            dump_addrs(so, req, &b);
        else
            dump_routes(so, req, &b);
        begin(&b, req, NLMSG_DONE, NLM_F_MULTI);
        int zero = 0;
        put(&b, &zero, sizeof zero);
    } else {
        begin(&b, req, NLMSG_ERROR, 0);
        int err = -EOPNOTSUPP;
        put(&b, &err, sizeof err);
        put(&b, req, sizeof *req);
    }
    queue(so, &b);
}

static int64_t nl_send(struct socket *so, struct sockxfer *sx)
{
    size_t n = sx->sx_resid;
    if (n > REQUEST_MAX)
        return -EMSGSIZE;
    char *req = kmalloc(n ? n : 1);
    if (!req)
        return -ENOBUFS;
    if (sockxfer_in(sx, req, n)) {
        kfree(req);
        return -EFAULT;
    }
    mutex_enter(&so->so_lock);
    if (!sotonl(so)->n_portid)
        sotonl(so)->n_portid = (uint32_t)curproc()->p_pid;     /* Linux's autobind */
    for (size_t off = 0; off + sizeof(struct nlmsghdr_k) <= n;) {
        struct nlmsghdr_k h;
        memcpy(&h, req + off, sizeof h);
        if (h.len < sizeof h || h.len > n - off)
            break;                  /* Linux ignores a malformed tail */
        answer(so, &h);
        off += NL_ALIGN(h.len);
    }
    socket_notify(so, POLL_READSIDE);
    mutex_exit(&so->so_lock);
    kfree(req);
    return (int64_t)n;
}

static int nl_getname(struct socket *so, void *addr, size_t *len, bool peer)
{
    struct sockaddr_nl_k a = { .family = AF_NETLINK };
    if (!peer) {
        mutex_enter(&so->so_lock);
        a.pid = sotonl(so)->n_portid;
        mutex_exit(&so->so_lock);
    }
    memcpy(addr, &a, sizeof a);
    *len = sizeof a;
    return 0;
}

static int nl_eopnotsupp(void) { return -EOPNOTSUPP; }

static int nl_shutdown(struct socket *so, int how)
{
    if (how < SHUT_RD || how > SHUT_RDWR)
        return -EINVAL;
    mutex_enter(&so->so_lock);
    so->so_shut |= (uint32_t)how + 1;
    mutex_exit(&so->so_lock);
    socket_notify(so, POLL_BOTHSIDES);
    return 0;
}

#define SOL_NETLINK     270

static int nl_getopt(struct socket *so, int level, int name, void *val, size_t *len)
{
    return -ENOPROTOOPT;
}

/* SOL_NETLINK's options (extended acks, strict checking ...) are taken
 * and have no effect: a dump's answer is the same either way. */
static int nl_setopt(struct socket *so, int level, int name, const void *val, size_t len)
{
    return level == SOL_NETLINK ? 0 : -ENOPROTOOPT;
}

const struct sockops netlink_sockops = {
    .family = AF_NETLINK,
    .protocol = nl_protocol,
    .attach = nl_attach,
    .release = nl_release,
    .destroy = nl_destroy,
    .bind = nl_bind,
    .listen = (void *)nl_eopnotsupp,
    .accept = (void *)nl_eopnotsupp,
    .connect = nl_connect,
    .connect2 = (void *)nl_eopnotsupp,
    .send = nl_send,
    .recv = dgram_recv,
    .shutdown = nl_shutdown,
    .getname = nl_getname,
    .getopt = nl_getopt,
    .setopt = nl_setopt,
    .poll = dgram_poll,
    .nread = dgram_nread,
};
