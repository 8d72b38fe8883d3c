/*
 * Packets, interfaces and the network thread.
 *
 * A packet is one buffer with headroom for the headers the layers below
 * push in front of the data.  An interface hands a packet that came in
 * to netif_input, which queues it (a spin lock, as a device's interrupt
 * would need) and wakes the network thread, "netisr" after BSD's network
 * interrupt service routine; that thread runs IPv4's input and what it
 * calls (UDP, TCP), so a protocol's input may sleep on a socket lock and
 * never runs inside the sender's call: a TCP segment that answers another
 * is sent from the thread, not nested in the first one's send.
 *
 * The loopback interface "lo" (127.0.0.1/8, MTU 65536 as Linux's) turns
 * every packet it is given straight into input.  Ethernet interfaces
 * (ether.c) come in through the same queue; the thread gives their frames
 * to ether_input.  Routing is kern/net/inet/route.c's.  An interface's
 * address, mask and flags are
 * set by the ioctls under netif_cfg (a sleep mutex) and read as single
 * words without it.
 *
 * The protocols' timers (retransmission, TIME_WAIT) are callouts whose
 * function only puts the timer on the thread's work list: a callout runs
 * in the clock's interrupt, where no socket lock may be taken.
 *
 * Locks: netq (a spin lock, the input queue) and network (a spin lock,
 * the timer work list) are leaves; netif_cfg (a sleep mutex) is taken
 * alone.
 */
#include <kern/net/inet/inet.h>
#include <kern/sched/thread.h>
#include <kern/lock/sleep.h>
#include <kern/vm/kmem.h>
#include <kern/vm/as.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <kern/lib/kprintf.h>
#include <kern/arch/panic.h>
#include <kern/proc/proc.h>
#include <kern/vfs/cred.h>

#define LO_MTU          65536

LOCK_CLASS(netq_lock_class, "netq", LK_SPIN);
LOCK_CLASS(net_work_lock_class, "network", LK_SPIN);

static spinlock_t netq_lock;
static struct pkt *netq_head, **netq_tail = &netq_head;     /* [q] */
static spinlock_t net_work_lock;
static struct net_timer *net_work;                          /* [w] */
static struct net_timer *net_running;   /* [w] the timer whose function runs now */
static struct thread *netisr_thread;    /* [c] */
static int net_chan;            /* the thread sleeps here */

struct netif *netifs;
struct mutex netif_cfg_lock;
LOCK_CLASS(netif_cfg_lock_class, "netif_cfg", LK_MUTEX_SLEEP);

/* ---- packets ---- */

struct pkt *pkt_alloc(size_t len)
{
    size_t size = PKT_HEADROOM + len;
    struct pkt *p = kmalloc(sizeof *p + size);
    if (!p)
        return NULL;
    p->p_next = NULL;
    p->p_if = NULL;
    p->p_size = (uint32_t)size;
    p->p_data = p->p_buf + PKT_HEADROOM;
    p->p_len = (uint32_t)len;
    p->p_csum = PKT_CSUM_NONE;
    inet_mib_count(NET_PKTS_LIVE);
    inet_mib_add(NET_PKT_BYTES_LIVE, (int64_t)size);
    return p;
}

void pkt_free(struct pkt *p)
{
    inet_mib_add(NET_PKTS_LIVE, -1);
    inet_mib_add(NET_PKT_BYTES_LIVE, -(int64_t)p->p_size);
    kfree(p);
}

int pkt_from_caller(struct sockxfer *sx, size_t hdr, struct pkt **pp)
{
    struct pkt *p = pkt_alloc(hdr + sx->sx_resid);
    if (!p)
        return -ENOBUFS;
    if (sockxfer_in(sx, p->p_data + hdr, sx->sx_resid)) {
        pkt_free(p);
        return -EFAULT;
    }
    *pp = p;
    return 0;
}

void *pkt_push(struct pkt *p, size_t n)
{
    if ((size_t)(p->p_data - p->p_buf) < n)
        panic("pkt_push: %zu bytes of header, no room", n);
    p->p_data -= n;
    p->p_len += (uint32_t)n;
    return p->p_data;
}

void pkt_pull(struct pkt *p, size_t n)
{
    p->p_data += n;
    p->p_len -= (uint32_t)n;
}

/* ---- the Internet checksum ---- */

/* RFC 1071: the one's complement sum does not depend on byte order, so
 * the bulk is summed eight bytes a load in the machine's order, folded,
 * and its two bytes swapped to the network order's value; the last few
 * bytes (at an even offset still) are added as before. */
uint32_t in_cksum_add(uint32_t sum, const void *data, size_t len)
{
    const uint8_t *b = data;
    uint64_t native = 0;
    for (; len >= 8; b += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, b, 8);
        native += (w & 0xffffffff) + (w >> 32);
    }
    while (native >> 16)
        native = (native & 0xffff) + (native >> 16);
    uint64_t s = (uint64_t)sum + ((native & 0xff) << 8 | native >> 8);
    for (; len >= 2; b += 2, len -= 2)
        s += (uint32_t)(b[0] << 8 | b[1]);
    if (len)
        s += (uint32_t)b[0] << 8;
    while (s >> 32)
        s = (s & 0xffffffff) + (s >> 32);
    return (uint32_t)((s & 0xffff) + (s >> 16));
}

uint16_t in_cksum_fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return htons((uint16_t)~sum);
}

void pkt_csum_finish(struct pkt *p)
{
    if (p->p_csum != PKT_CSUM_PARTIAL)
        return;
    /* The field holds the pseudo-header's sum, so the sum of the whole
     * transport part, field included, is the checksum's complement. */
    uint16_t ck = in_cksum_fold(in_cksum_add(0, p->p_data, p->p_len));
    memcpy(p->p_data + p->p_csum_at, &ck, sizeof ck);
    p->p_csum = PKT_CSUM_NONE;
}

uint32_t in_pseudo(in_addr_t src, in_addr_t dst, int proto, size_t len)
{
    uint32_t s = in_cksum_add(0, &src, 4);
    s = in_cksum_add(s, &dst, 4);
    return s + (uint32_t)proto + (uint32_t)len;
}

/* ---- interfaces ---- */

static void lo_output(struct netif *ifp, struct pkt *p, in_addr_t nexthop)
{
    (void)nexthop;
    __atomic_add_fetch(&ifp->if_stats.tx_packets, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&ifp->if_stats.tx_bytes, p->p_len, __ATOMIC_RELAXED);
    if (p->p_csum == PKT_CSUM_NONE)
        p->p_csum = PKT_CSUM_UNNECESSARY;   /* it never leaves memory (a PARTIAL */
    netif_input(ifp, p);                    /* one stays so, trusted too) */
}

static struct netif lo = {
    .if_name = "lo",
    .if_index = 1,
    .if_mtu = LO_MTU,
    .if_flags = IFF_UP | IFF_LOOPBACK | IFF_RUNNING,
    .if_type = ARPHRD_LOOPBACK,
    .if_output = lo_output,
};

void netif_input(struct netif *ifp, struct pkt *p)
{
    p->p_if = ifp;
    p->p_next = NULL;
    __atomic_add_fetch(&ifp->if_stats.rx_packets, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&ifp->if_stats.rx_bytes, p->p_len, __ATOMIC_RELAXED);
    spin_lock(&netq_lock);
    *netq_tail = p;
    netq_tail = &p->p_next;
    spin_unlock(&netq_lock);
    wakeup(&net_chan);
}

bool inet_local_addr(in_addr_t addr)
{
    if ((ntohl(addr) >> 24) == 127)
        return true;
    if (addr == INADDR_ANY)
        return false;           /* an interface without an address has none */
    for (struct netif *ifp = netifs; ifp; ifp = ifp->if_next)
        if (__atomic_load_n(&ifp->if_addr, __ATOMIC_RELAXED) == addr)
            return true;
    return false;
}

void netif_attach(struct netif *ifp)
{
    struct netif **pp = &netifs;
    while (*pp)
        pp = &(*pp)->if_next;
    *pp = ifp;
}

struct netif *inet_loopback(void) { return &lo; }

/* ---- the interface ioctls ---- */

#define SIOCGIFNAME     0x8910
#define SIOCGIFFLAGS    0x8913
#define SIOCGIFADDR     0x8915
#define SIOCGIFNETMASK  0x891b
#define SIOCGIFMTU      0x8921
#define SIOCGIFINDEX    0x8933
#define SIOCGIFCONF     0x8912
#define SIOCGIFDSTADDR  0x8917
#define SIOCGIFBRDADDR  0x8919
#define SIOCGIFMETRIC   0x891d
#define SIOCGIFHWADDR   0x8927
#define SIOCGIFTXQLEN   0x8942
#define SIOCGIFMAP      0x8970
#define SIOCSIFFLAGS    0x8914
#define SIOCSIFADDR     0x8916
#define SIOCSIFNETMASK  0x891c
#define IF_TXQLEN       1000        /* Linux's default txqueuelen */

/* struct ifreq: a name, then one of an address, flags, an int or a
 * hardware address (a family and its bytes). */
struct ifreq_k {
    char name[NETIF_NAME_MAX];
    union {
        struct sockaddr_in_k addr;
        int16_t flags;
        int32_t ival;
        struct { uint16_t sa_family; uint8_t sa_data[14]; } hwaddr;
        uint8_t map[24];            /* struct ifmap, the union's largest member */
    };
};
_Static_assert(sizeof(struct ifreq_k) == IFREQ_SIZE, "struct ifreq is 40 bytes on x86-64");

bool socket_ifreq_cmd(uint32_t cmd)
{
    switch (cmd) {
    case SIOCGIFNAME: case SIOCGIFFLAGS: case SIOCGIFADDR: case SIOCGIFNETMASK:
    case SIOCGIFMTU: case SIOCGIFINDEX: case SIOCGIFDSTADDR: case SIOCGIFBRDADDR:
    case SIOCGIFMETRIC: case SIOCGIFHWADDR: case SIOCGIFTXQLEN: case SIOCGIFMAP:
    case SIOCSIFFLAGS: case SIOCSIFADDR: case SIOCSIFNETMASK:
        return true;
    default:
        return false;
    }
}

/* The setting ioctls, as Linux's devinet_ioctl and dev_ifsioc check them:
 * root only, an AF_INET address, a mask that is contiguous.  lo's
 * configuration is fixed here. */
static int netif_set(struct netif *ifp, uint32_t cmd, struct ifreq_k *ifr)
{
    if (curproc()->p_cred->cr_uid != 0)
        return -EPERM;
    if (cmd != SIOCSIFFLAGS && ifr->addr.sin_family != AF_INET)
        return -EINVAL;
    in_addr_t a = ifr->addr.sin_addr;
    if (cmd == SIOCSIFNETMASK) {
        uint32_t h = ntohl(a);
        if (h & (~h >> 1))      /* a one after a zero: not contiguous */
            return -EINVAL;
    }
    if (ifp == &lo)
        return cmd == SIOCSIFFLAGS && (ifr->flags & IFF_UP) ? 0 : -EPERM;
    mutex_enter(&netif_cfg_lock);
    if (cmd == SIOCSIFADDR) {
        /* Linux gives the address its class's mask when it sets one. */
        uint32_t h = ntohl(a);
        uint32_t m = h >> 31 == 0 ? 0xff000000u : h >> 30 == 2 ? 0xffff0000u : 0xffffff00u;
        __atomic_store_n(&ifp->if_mask, htonl(m), __ATOMIC_RELAXED);
        __atomic_store_n(&ifp->if_addr, a, __ATOMIC_RELAXED);
    } else if (cmd == SIOCSIFNETMASK) {
        __atomic_store_n(&ifp->if_mask, a, __ATOMIC_RELAXED);
    } else {
        uint32_t f = (uint16_t)ifr->flags & IFF_UP ? IFF_UP | IFF_RUNNING : 0;
        uint32_t old = __atomic_load_n(&ifp->if_flags, __ATOMIC_RELAXED);
        __atomic_store_n(&ifp->if_flags, (old & ~(uint32_t)(IFF_UP | IFF_RUNNING)) | f,
                         __ATOMIC_RELAXED);
    }
    mutex_exit(&netif_cfg_lock);
    return 0;
}

static struct netif *netif_named(const char *name)
{
    for (struct netif *ifp = netifs; ifp; ifp = ifp->if_next)
        if (strncmp(ifp->if_name, name, NETIF_NAME_MAX) == 0)
            return ifp;
    return NULL;
}

int netif_ioctl(uint32_t cmd, void *arg)
{
    struct ifreq_k *ifr = arg;
    struct netif *ifp = NULL;
    if (cmd == SIOCGIFNAME) {
        for (ifp = netifs; ifp && ifp->if_index != ifr->ival; ifp = ifp->if_next)
            ;
        if (ifp)
            memcpy(ifr->name, ifp->if_name, NETIF_NAME_MAX);
        return ifp ? 0 : -ENODEV;
    }
    ifr->name[NETIF_NAME_MAX - 1] = 0;
    if (!(ifp = netif_named(ifr->name)))
        return -ENODEV;
    if (cmd == SIOCSIFFLAGS || cmd == SIOCSIFADDR || cmd == SIOCSIFNETMASK)
        return netif_set(ifp, cmd, ifr);
    in_addr_t a = cmd == SIOCGIFNETMASK ? ifp->if_mask : ifp->if_addr;
    if (cmd == SIOCGIFBRDADDR)      /* loopback has none, as on Linux */
        a = ifp->if_flags & IFF_LOOPBACK ? 0 : ifp->if_addr | ~ifp->if_mask;
    switch (cmd) {
    case SIOCGIFHWADDR:
        memset(&ifr->hwaddr, 0, sizeof ifr->hwaddr);
        ifr->hwaddr.sa_family = ifp->if_type;
        memcpy(ifr->hwaddr.sa_data, ifp->if_hwaddr, ETH_ALEN);
        break;
    case SIOCGIFINDEX: ifr->ival = ifp->if_index; break;
    case SIOCGIFFLAGS: ifr->flags = (int16_t)ifp->if_flags; break;
    case SIOCGIFMTU: ifr->ival = (int32_t)ifp->if_mtu; break;
    case SIOCGIFMETRIC: ifr->ival = 0; break;
    case SIOCGIFTXQLEN: ifr->ival = IF_TXQLEN; break;
    case SIOCGIFMAP: memset(ifr->map, 0, sizeof ifr->map); break;
    default:
        memset(&ifr->addr, 0, sizeof ifr->addr);
        ifr->addr.sin_family = AF_INET;
        ifr->addr.sin_addr = a;
        break;
    }
    return 0;
}

/* struct ifconf as x86-64 lays it out: a length, then a pointer. */
struct ifconf_k {
    int32_t len;
    uint32_t pad;
    uint64_t buf;
};

bool socket_ifconf_cmd(uint32_t cmd) { return cmd == SIOCGIFCONF; }

int netif_ifconf(uint64_t uarg)
{
    struct ifconf_k ifc;
    if (copyin((void *)uarg, &ifc, sizeof ifc))
        return -EFAULT;
    int32_t used = 0;
    for (struct netif *ifp = netifs; ifp; ifp = ifp->if_next) {
        if (!ifp->if_addr)
            continue;               /* only interfaces with an IPv4 address */
        if (ifc.buf) {
            if (ifc.len - used < (int32_t)sizeof(struct ifreq_k))
                break;
            struct ifreq_k r;
            memset(&r, 0, sizeof r);
            memcpy(r.name, ifp->if_name, NETIF_NAME_MAX);
            r.addr.sin_family = AF_INET;
            r.addr.sin_addr = ifp->if_addr;
            if (copyout(&r, (void *)(ifc.buf + (uint64_t)used), sizeof r))
                return -EFAULT;
        }
        used += (int32_t)sizeof(struct ifreq_k);
    }
    ifc.len = used;                 /* with no buffer: the room all of them need */
    return copyout(&ifc, (void *)uarg, sizeof ifc) ? -EFAULT : 0;
}

/* ---- the network thread ---- */

void net_timer_init(struct net_timer *nt, void (*fn)(void *), void *arg)
{
    callout_setup(&nt->nt_callout);
    nt->nt_next = NULL;
    nt->nt_prevp = NULL;
    nt->nt_queued = false;
    nt->nt_fn = fn;
    nt->nt_arg = arg;
}

static void net_timer_fire(void *arg)
{
    struct net_timer *nt = arg;
    spin_lock(&net_work_lock);
    if (!nt->nt_queued) {
        nt->nt_queued = true;
        nt->nt_next = net_work;
        if (net_work)
            net_work->nt_prevp = &nt->nt_next;
        nt->nt_prevp = &net_work;
        net_work = nt;
    }
    spin_unlock(&net_work_lock);
    wakeup(&net_chan);
}

void net_timer_arm(struct net_timer *nt, uint64_t when)
{
    callout_arm(&nt->nt_callout, when, net_timer_fire, nt);
}

void net_timer_stop(struct net_timer *nt)
{
    callout_stop(&nt->nt_callout);
    spin_lock(&net_work_lock);
    while (net_running == nt && curthread() != netisr_thread) {
        spin_unlock(&net_work_lock);
        thread_yield();
        spin_lock(&net_work_lock);
    }
    if (nt->nt_queued) {
        *nt->nt_prevp = nt->nt_next;
        if (nt->nt_next)
            nt->nt_next->nt_prevp = nt->nt_prevp;
        nt->nt_queued = false;
    }
    spin_unlock(&net_work_lock);
}

static struct pkt *take_input(void)
{
    spin_lock(&netq_lock);
    struct pkt *p = netq_head;
    netq_head = NULL;
    netq_tail = &netq_head;
    spin_unlock(&netq_lock);
    return p;
}

/* One timer off the work list, its function and argument copied under
 * the lock; net_running marks it until its function returns, and
 * net_timer_stop waits for that. */
static bool take_work(void (**fn)(void *), void **arg)
{
    spin_lock(&net_work_lock);
    struct net_timer *nt = net_work;
    if (nt) {
        net_work = nt->nt_next;
        if (net_work)
            net_work->nt_prevp = &net_work;
        nt->nt_queued = false;
        net_running = nt;
        *fn = nt->nt_fn;
        *arg = nt->nt_arg;
    }
    spin_unlock(&net_work_lock);
    return nt != NULL;
}

static bool idle(void)
{
    return !__atomic_load_n(&netq_head, __ATOMIC_ACQUIRE) &&
           !__atomic_load_n(&net_work, __ATOMIC_ACQUIRE);
}

static void netisr_main(void *unused)
{
    for (;;) {
        for (struct pkt *p = take_input(), *next; p; p = next) {
            next = p->p_next;
            if (p->p_if->if_dev)
                ether_input(p);
            else
                ip_input(p);
        }
        void (*fn)(void *);
        void *arg;
        while (take_work(&fn, &arg)) {
            fn(arg);
            spin_lock(&net_work_lock);
            net_running = NULL;
            spin_unlock(&net_work_lock);
        }
        struct sleepq *sq = sleepq_lock(&net_chan);
        if (idle())
            sleep_locked(sq, &net_chan);
        else
            sleepq_unlock(sq);
    }
}

void inet_init(void)
{
    spin_init(&netq_lock, &netq_lock_class);
    spin_init(&net_work_lock, &net_work_lock_class);
    lo.if_addr = htonl(INADDR_LOOPBACK_H);
    lo.if_mask = htonl(0xff000000u);
    netifs = &lo;
    mutex_init(&netif_cfg_lock, &netif_cfg_lock_class, 0, "netif_cfg");
    route_init();
    inpcb_init();
    raw_init();
    ip_frag_init();
    if (!(netisr_thread = thread_create("netisr", netisr_main, NULL, AFFINITY_ALL)))
        panic("inet: no memory for the network thread");
    ether_init();
}
