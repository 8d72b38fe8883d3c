/*
 * Raw IPv4 sockets (SOCK_RAW): a program sends and receives whole IP
 * datagrams of one protocol, as ping does with ICMP.
 *
 * Linux's rules.  Only root may make one (EPERM); protocol 0 is
 * EPROTONOSUPPORT, IPPROTO_RAW (255) sends only, with the caller's own
 * header (IP_HDRINCL, which any raw socket may set).  A send without
 * IP_HDRINCL gets a header made here with the socket's protocol, TTL and
 * TOS; with it, the caller's header is sent with its total length and
 * checksum filled in, and its identification and source address when 0.
 * The payload is the caller's: ICMP's checksum, for one, is the
 * program's to compute.  Every IPv4 datagram that comes in for this
 * machine is offered to the raw sockets of its protocol (bound to its
 * destination or to none, connected to its source or to none) before
 * the kernel's own protocol takes it, and each gets a copy, IP header
 * and all; ICMP sockets may filter message types (ICMP_FILTER).  A
 * protocol the kernel does not know answers "protocol unreachable" only
 * when no raw socket took the datagram.  getsockname shows the protocol
 * as the port, as on Linux.
 *
 * Received datagrams wait on the socket's datagram queue (dgram.c).
 *
 * Locks: raw_lock (class "rawpcb", a sleep mutex) guards the list of
 * raw sockets and, with the socket's so_lock, their addresses (both are
 * held to change them, either to read).  It comes before so_lock: input
 * holds it while queueing on each socket.  This is the reverse of the
 * control block table's order (inpcb.c); the two are never held
 * together.
 */
#include <kern/net/inet/inet.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

#define IPPROTO_RAW     255
#define SOL_RAW         255
#define ICMP_FILTER     1

/* Raw's part of a socket (inp_ppcb).  Lock key: [r] raw_lock; [s] the
 * socket's so_lock; [a] atomic; [c] constant once made. */
struct rawcb {
    struct rawcb *r_next;           /* [r] the list of raw sockets */
    struct socket *r_so;            /* [c] */
    bool r_hdrincl;                 /* [s] IP_HDRINCL */
    uint32_t r_icmp_filter;         /* [a] ICMP types not delivered (1 << type) */
};

LOCK_CLASS(raw_lock_class, "rawpcb", LK_MUTEX_SLEEP);
static struct mutex raw_lock;
static struct rawcb *raw_list;      /* [r] */

static struct rawcb *sotoraw(struct socket *so) { return sotoinp(so)->inp_ppcb; }

void raw_init(void) { mutex_init(&raw_lock, &raw_lock_class, 0, "rawpcb"); }

int raw_attach(struct socket *so)
{
    struct rawcb *r = kzalloc(sizeof *r);
    if (!r)
        return -ENOMEM;
    r->r_so = so;
    r->r_hdrincl = so->so_protocol == IPPROTO_RAW;
    struct inpcb *inp = sotoinp(so);
    inp->inp_ppcb = r;
    inp->inp_lport = htons((uint16_t)so->so_protocol);
    mutex_enter(&raw_lock);
    r->r_next = raw_list;
    raw_list = r;
    mutex_exit(&raw_lock);
    return 0;
}

void raw_release(struct socket *so)
{
    struct rawcb *r = sotoraw(so);
    mutex_enter(&raw_lock);
    struct rawcb **pp = &raw_list;
    while (*pp != r)
        pp = &(*pp)->r_next;
    *pp = r->r_next;
    mutex_exit(&raw_lock);
    mutex_enter(&so->so_lock);
    dgram_flush(so);
    mutex_exit(&so->so_lock);
}

void raw_destroy(struct socket *so) { kfree(sotoraw(so)); }

int raw_bind(struct socket *so, in_addr_t a)
{
    if (a != INADDR_ANY && a != INADDR_BROADCAST && !inet_local_addr(a))
        return -EADDRNOTAVAIL;
    struct inpcb *inp = sotoinp(so);
    mutex_enter(&raw_lock);
    mutex_enter(&so->so_lock);
    inp->inp_laddr = a;
    mutex_exit(&so->so_lock);
    mutex_exit(&raw_lock);
    return 0;
}

int raw_connect(struct socket *so, in_addr_t a, uint16_t port)
{
    in_addr_t src;
    if (a != INADDR_ANY && !inet_route(a, &src))
        return -ENETUNREACH;
    struct inpcb *inp = sotoinp(so);
    mutex_enter(&raw_lock);
    mutex_enter(&so->so_lock);
    inp->inp_faddr = a;
    inp->inp_fport = port;      /* kept for getpeername, as Linux does */
    mutex_exit(&so->so_lock);
    mutex_exit(&raw_lock);
    return 0;
}

/* The caller's own header (IP_HDRINCL) made whole, for a datagram that
 * leaves by the route to dst: -EINVAL when it is shorter than it says
 * (the destination in it is the caller's, as on Linux). */
static int raw_fill_header(struct pkt *p, in_addr_t dst)
{
    struct iphdr *ip = (struct iphdr *)p->p_data;
    size_t hlen = (size_t)(ip->ihl_version & 0xf) * 4;
    if (p->p_len < IP_HDR_LEN || hlen < IP_HDR_LEN || hlen > p->p_len)
        return -EINVAL;
    in_addr_t src;
    if (!inet_route(dst, &src))
        return -ENETUNREACH;
    ip->len = htons((uint16_t)p->p_len);
    if (!ip->id)
        ip->id = ip_new_id();
    if (!ip->src)
        ip->src = src;
    ip->cksum = 0;
    ip->cksum = in_cksum_fold(in_cksum_add(0, ip, hlen));
    return 0;
}

int64_t raw_send(struct socket *so, struct sockxfer *sx)
{
    if (sx->sx_flags & MSG_OOB)
        return -EOPNOTSUPP;
    size_t n = sx->sx_resid;
    if (n > IP_MAXPACKET)
        return -EMSGSIZE;
    struct inpcb *inp = sotoinp(so);
    in_addr_t dst;
    mutex_enter(&so->so_lock);
    int err = so->so_error ? -so->so_error : inet_send_dest(so, sx, &dst, NULL);
    so->so_error = 0;
    in_addr_t src = inp->inp_laddr;
    uint8_t ttl = inp->inp_ttl, tos = inp->inp_tos;
    bool hdrincl = sotoraw(so)->r_hdrincl;
    mutex_exit(&so->so_lock);
    if (err)
        return err;
    if (!hdrincl && n > IP_MAXPACKET - IP_HDR_LEN)
        return -EMSGSIZE;
    struct pkt *p;
    err = pkt_from_caller(sx, 0, &p);
    if (err)
        return err;
    if (hdrincl) {
        err = raw_fill_header(p, dst);
        if (err) {
            pkt_free(p);
            return err;
        }
        err = ip_output_raw(p, dst);
    } else {
        err = ip_output(p, src == INADDR_BROADCAST ? INADDR_ANY : src, dst, so->so_protocol,
                        ttl, tos);
    }
    return err ? err : (int64_t)n;
}

/* Does the raw socket so want the datagram at ip (raw_lock held)? */
static bool raw_wants(struct socket *so, const struct iphdr *ip, size_t hlen, size_t len)
{
    struct inpcb *inp = sotoinp(so);
    if (so->so_protocol != ip->proto)
        return false;
    if (inp->inp_laddr != INADDR_ANY && inp->inp_laddr != ip->dst)
        return false;
    if (inp->inp_faddr != INADDR_ANY && inp->inp_faddr != ip->src)
        return false;
    if (ip->proto == IPPROTO_ICMP && len > hlen) {
        uint8_t type = ((const uint8_t *)ip)[hlen];
        uint32_t filter = __atomic_load_n(&sotoraw(so)->r_icmp_filter, __ATOMIC_RELAXED);
        if (type < 32 && (filter >> type) & 1)
            return false;
    }
    return true;
}

bool raw_input(const struct pkt *p, size_t hlen)
{
    const struct iphdr *ip = (const struct iphdr *)p->p_data;
    char a[sizeof(struct sockaddr_in_k)];
    size_t al;
    inet_sin_out(a, &al, ip->src, 0);
    bool taken = false;
    mutex_enter(&raw_lock);
    for (struct rawcb *r = raw_list; r; r = r->r_next) {
        struct socket *so = r->r_so;
        if (!raw_wants(so, ip, hlen, p->p_len))
            continue;
        taken = true;
        inet_queue_copy(so, p->p_data, p->p_len, a, al);
    }
    mutex_exit(&raw_lock);
    return taken;
}

int raw_getopt(struct socket *so, int level, int name, void *val, size_t *len)
{
    if (level == SOL_RAW && name == ICMP_FILTER) {
        if (so->so_protocol != IPPROTO_ICMP)
            return -EOPNOTSUPP;
        uint32_t f = __atomic_load_n(&sotoraw(so)->r_icmp_filter, __ATOMIC_RELAXED);
        memcpy(val, &f, sizeof f);
        *len = sizeof f;            /* the socket layer cuts it to the caller's room */
        return 0;
    }
    return level == SOL_RAW ? -ENOPROTOOPT : -EOPNOTSUPP;
}

int raw_setopt(struct socket *so, int level, int name, const void *val, size_t len)
{
    if (level != SOL_RAW)
        return -EOPNOTSUPP;
    if (name != ICMP_FILTER)
        return -ENOPROTOOPT;
    if (so->so_protocol != IPPROTO_ICMP)
        return -EOPNOTSUPP;
    uint32_t f = __atomic_load_n(&sotoraw(so)->r_icmp_filter, __ATOMIC_RELAXED);
    memcpy(&f, val, MIN(len, sizeof f));      /* a short value changes its first bytes */
    __atomic_store_n(&sotoraw(so)->r_icmp_filter, f, __ATOMIC_RELAXED);
    return 0;
}

bool raw_hdrincl(struct socket *so) { return sotoraw(so)->r_hdrincl; }

void raw_set_hdrincl(struct socket *so, bool on) { sotoraw(so)->r_hdrincl = on; }

void raw_snapshot(struct sockvec *sv)
{
    do {
        mutex_enter(&raw_lock);
        for (struct rawcb *r = raw_list; r; r = r->r_next)
            sockvec_take(sv, r->r_so);
        mutex_exit(&raw_lock);
    } while (sockvec_again(sv));
}
