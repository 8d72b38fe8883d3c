/*
 * AF_INET: IPv4 sockets, TCP (SOCK_STREAM) and UDP (SOCK_DGRAM), over the
 * loopback interface and Ethernet devices (ether.c).
 *
 * Theory.  The stack is BSD's in shape, as SVR4's sockets were: a socket
 * (kern/net/socket.c) has an Internet protocol control block (struct
 * inpcb, kern/net/inet/inpcb.c) naming its two ends, and the protocol's
 * own block behind it (struct tcpcb, struct udpcb).  Sending runs the
 * protocol's output in the caller's thread down to IPv4 (ip.c) and the
 * interface (netif.c); what comes in is queued by the interface and
 * taken up by the network thread, which runs IPv4's input and the
 * protocol's, so a protocol's input never nests inside a send.  This file
 * is the family's face to the socket layer: it checks the addresses and
 * the arguments as Linux's net/ipv4/af_inet.c does (errno and order) and
 * calls UDP (udp.c) or TCP (tcp_usr.c).
 *
 * What is here: 127.0.0.0/8 on "lo", Ethernet interfaces with ARP
 * (ether.c) on the network devices (drivers/net/), a routing table of
 * connected subnets and routes through gateways or interfaces (route.c,
 * SIOCADDRT), TCP with its
 * whole state machine (tcp_input.c), retransmission and TIME_WAIT
 * (tcp_output.c), UDP with ICMP "port unreachable" reported to connected
 * sockets, raw sockets (SOCK_RAW, raw.c: busybox ping's), ICMP echo
 * sockets (SOCK_DGRAM with IPPROTO_ICMP, ping.c), fragment reassembly
 * (ip_frag.c).  What is not yet: IPv6.
 *
 * Locks, in order: a socket's so_lock (class "socket"), then the control
 * block table's bucket locks (classes "inpcbport", then "inpcbconn",
 * inpcb.c), then the interface queue's netq (a spin
 * lock), the network thread's timer list (network) and the ARP cache
 * (arp, ether.c), leaves; a device's own ring locks (vnet_rx, vnet_tx)
 * are taken with none of these held.  netif_cfg (a sleep mutex) is taken
 * alone by the ioctls that set an interface's address or flags.  A TCP listener's
 * so_lock comes before that of a connection in its queues.  The network
 * thread takes a table bucket's lock alone to find a socket, lets it go, then
 * locks the socket.  No socket lock is held while copying to or from
 * user memory.
 */
#include <kern/net/inet/inet.h>
#include <kern/proc/proc.h>
#include <kern/vfs/cred.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

#define IPPROTO_MAX     263         /* Linux's, since IPPROTO_MPTCP (262) */
#define IP_TOS          1
#define IP_TTL          2
#define IP_HDRINCL      3
#define SOL_RAW         255
#define IP_RECVERR      11
#define IP_MTU_DISCOVER 10
#define IP_MULTICAST_TTL 33
#define IP_MULTICAST_LOOP 34

int inet_protocol(int *typep, int protocol)
{
    int type = *typep;
    if (protocol < 0 || protocol >= IPPROTO_MAX)
        return -EINVAL;
    if (type == SOCK_STREAM)
        return protocol == 0 || protocol == IPPROTO_TCP ? IPPROTO_TCP : -EPROTONOSUPPORT;
    if (type == SOCK_DGRAM) {
        if (protocol == IPPROTO_ICMP)
            return IPPROTO_ICMP;    /* ping sockets (ping.c), as Debian lets every group */
        if (protocol == IPPROTO_UDPLITE)
            return IPPROTO_UDPLITE;
        return protocol == 0 || protocol == IPPROTO_UDP ? IPPROTO_UDP : -EPROTONOSUPPORT;
    }
    if (type == SOCK_RAW) {
        if (protocol == 0)
            return -EPROTONOSUPPORT;
        return curproc()->p_cred->cr_uid != 0 ? -EPERM : protocol;
    }
    return -ESOCKTNOSUPPORT;
}

static bool is_tcp(const struct socket *so) { return so->so_type == SOCK_STREAM; }
static bool is_raw(const struct socket *so) { return so->so_type == SOCK_RAW; }
static bool is_ping(const struct socket *so)
{
    return so->so_type == SOCK_DGRAM && so->so_protocol == IPPROTO_ICMP;
}

static int inet_attach(struct socket *so)
{
    struct inpcb *inp = kzalloc(sizeof *inp);
    if (!inp)
        return -ENOMEM;
    inp->inp_so = so;
    inp->inp_proto = so->so_protocol;
    inp->inp_ttl = IP_DEFAULT_TTL;
    so->so_pcb = inp;
    int err = is_tcp(so) ? tcp_attach(so) : is_raw(so) ? raw_attach(so) : udp_attach(so);
    if (err) {
        kfree(inp);
        so->so_pcb = NULL;
    }
    return err;
}

static void inet_release(struct socket *so)
{
    if (is_tcp(so))
        tcp_release(so);
    else if (is_raw(so))
        raw_release(so);
    else
        udp_release(so);
}

static void inet_destroy(struct socket *so)
{
    if (is_tcp(so))
        tcp_destroy(so);
    else if (is_raw(so))
        raw_destroy(so);
    else
        udp_destroy(so);
    kfree(so->so_pcb);
}

int inet_sin_in(const void *addr, size_t len, in_addr_t *a, uint16_t *port)
{
    struct sockaddr_in_k sin;
    if (len < sizeof sin)
        return -EINVAL;
    memcpy(&sin, addr, sizeof sin);
    if (sin.sin_family != AF_INET)
        return -EAFNOSUPPORT;
    *a = sin.sin_addr;
    *port = sin.sin_port;
    return 0;
}

int inet_send_dest(struct socket *so, const struct sockxfer *sx, in_addr_t *a, uint16_t *port)
{
    struct inpcb *inp = sotoinp(so);
    if (sx->sx_name) {
        if (sx->sx_namelen < sizeof(struct sockaddr_in_k))
            return -EINVAL;
        const struct sockaddr_in_k *sin = sx->sx_name;
        if (sin->sin_family != AF_INET && sin->sin_family != AF_UNSPEC)
            return -EAFNOSUPPORT;
        if (port && !sin->sin_port)
            return -EINVAL;
        /* As Linux's routing: no address is this machine's loopback. */
        *a = sin->sin_addr == INADDR_ANY ? htonl(INADDR_LOOPBACK_H) : sin->sin_addr;
        if (port)
            *port = sin->sin_port;
        return 0;
    }
    if (inp->inp_faddr == INADDR_ANY)
        return -EDESTADDRREQ;
    *a = inp->inp_faddr;
    if (port)
        *port = inp->inp_fport;
    return 0;
}

bool inet_queue_copy(struct socket *so, const void *data, size_t len, const void *name,
                     size_t namelen)
{
    struct dgram *d = dgram_alloc(len, name, namelen);
    if (d)
        memcpy(d->d_data, data, len);
    mutex_enter(&so->so_lock);
    bool queued = d && dgram_enqueue(so, d, true);
    mutex_exit(&so->so_lock);
    if (!queued)
        kfree(d);
    return queued;
}

void inet_sin_out(void *addr, size_t *len, in_addr_t a, uint16_t port)
{
    struct sockaddr_in_k sin = { .sin_family = AF_INET, .sin_port = port, .sin_addr = a };
    memcpy(addr, &sin, sizeof sin);
    *len = sizeof sin;
}

static int inet_bind(struct socket *so, const void *addr, size_t len)
{
    in_addr_t a;
    uint16_t port;
    if (len < sizeof(struct sockaddr_in_k))
        return -EINVAL;
    const struct sockaddr_in_k *sin = addr;
    if (sin->sin_family == AF_UNSPEC && sin->sin_addr == INADDR_ANY)
        a = INADDR_ANY, port = sin->sin_port;       /* Linux accepts this, for old programs */
    else {
        int err = inet_sin_in(addr, len, &a, &port);
        if (err)
            return err;
    }
    if (is_raw(so))
        return raw_bind(so, a);     /* the port is ignored */
    if (a != INADDR_ANY && a != INADDR_BROADCAST && !inet_local_addr(a))
        return -EADDRNOTAVAIL;
    struct inpcb *inp = sotoinp(so);
    mutex_enter(&so->so_lock);
    int err = inp->inp_bound || (is_tcp(so) && tcp_connected(so)) ? -EINVAL
            : inpcb_bind(inp, a, port);
    if (!err) {
        inp->inp_portlock = port != 0;
        inp->inp_addrlock = a != INADDR_ANY;
    }
    mutex_exit(&so->so_lock);
    return err;
}

static int inet_connect(struct socket *so, const void *addr, size_t len, bool nonblock)
{
    if (len < sizeof(uint16_t))
        return -EINVAL;
    if (*(const uint16_t *)addr == AF_UNSPEC)
        return is_tcp(so) ? tcp_connect(so, INADDR_ANY, 0, nonblock)
             : is_raw(so) ? raw_connect(so, INADDR_ANY, 0)
                          : udp_connect(so, INADDR_ANY, 0);
    in_addr_t a;
    uint16_t port;
    int err = inet_sin_in(addr, len, &a, &port);
    if (err)
        return err;
    if (is_raw(so))
        return raw_connect(so, a, port);
    if (is_ping(so))
        return udp_connect(so, a, 0);           /* the port means nothing to ICMP */
    return is_tcp(so) ? tcp_connect(so, a, port, nonblock) : udp_connect(so, a, port);
}

static int inet_listen(struct socket *so, int backlog)
{
    return is_tcp(so) ? tcp_listen(so, backlog) : -EOPNOTSUPP;
}

static int inet_accept(struct socket *so, bool nonblock, struct socket **newp)
{
    return is_tcp(so) ? tcp_accept(so, nonblock, newp) : -EOPNOTSUPP;
}

static int inet_connect2(struct socket *a, struct socket *b) { return -EOPNOTSUPP; }

static int64_t inet_send(struct socket *so, struct sockxfer *sx)
{
    if (is_ping(so))
        return ping_send(so, sx);
    return is_tcp(so) ? tcp_send(so, sx) : is_raw(so) ? raw_send(so, sx) : udp_send(so, sx);
}

static int64_t inet_recv(struct socket *so, struct sockxfer *sx)
{
    if (is_tcp(so))
        return tcp_recv(so, sx);
    int64_t r = dgram_recv(so, sx);
    /* Linux counts UDP's InDatagrams when a datagram is read, not peeked. */
    if (r >= 0 && !is_raw(so) && !is_ping(so) && !(sx->sx_flags & MSG_PEEK))
        udp_mib_count(so->so_protocol, UDM_IN_DATAGRAMS);
    return r;
}

static int inet_shutdown(struct socket *so, int how)
{
    if (how < SHUT_RD || how > SHUT_RDWR)
        return -EINVAL;
    if (is_tcp(so))
        return tcp_shutdown(so, how);
    struct inpcb *inp = sotoinp(so);
    mutex_enter(&so->so_lock);
    int err = inp->inp_faddr == INADDR_ANY ? -ENOTCONN : 0;
    so->so_shut |= (uint32_t)how + 1;   /* SHUT_RD 0 -> RCV, SHUT_WR 1 -> SEND, RDWR both */
    mutex_exit(&so->so_lock);
    socket_notify(so, POLL_BOTHSIDES);
    return err;
}

static int inet_getname(struct socket *so, void *addr, size_t *len, bool peer)
{
    struct inpcb *inp = sotoinp(so);
    mutex_enter(&so->so_lock);
    int err = 0;
    if (peer && (inp->inp_faddr == INADDR_ANY || (is_tcp(so) && !tcp_connected(so))))
        err = -ENOTCONN;
    else if (peer)
        inet_sin_out(addr, len, inp->inp_faddr, inp->inp_fport);
    else
        inet_sin_out(addr, len, inp->inp_laddr, inp->inp_lport);
    mutex_exit(&so->so_lock);
    return err;
}

static int int_opt(const void *val, size_t len, int *v)
{
    if (len >= sizeof(int))
        memcpy(v, val, sizeof(int));
    else if (len == 1)
        *v = *(const uint8_t *)val;
    else
        return -EINVAL;
    return 0;
}

static int ip_setopt(struct socket *so, int name, const void *val, size_t len)
{
    struct inpcb *inp = sotoinp(so);
    int v, err = int_opt(val, len, &v);
    if (err)
        return err;
    mutex_enter(&so->so_lock);
    switch (name) {
    case IP_TTL:
        if (v == -1)
            v = IP_DEFAULT_TTL;
        err = v < 1 || v > 255 ? -EINVAL : 0;
        if (!err)
            inp->inp_ttl = (uint8_t)v;
        break;
    case IP_TOS:
        inp->inp_tos = (uint8_t)v;
        break;
    case IP_HDRINCL:
        if (is_raw(so))
            raw_set_hdrincl(so, v != 0);
        else
            err = -ENOPROTOOPT;
        break;
    case IP_RECVERR: case IP_MTU_DISCOVER: case IP_MULTICAST_TTL: case IP_MULTICAST_LOOP:
        break;                  /* accepted; loopback has nothing for them to change */
    default:
        err = -ENOPROTOOPT;
    }
    mutex_exit(&so->so_lock);
    return err;
}

static int ip_getopt(struct socket *so, int name, void *val, size_t *len)
{
    struct inpcb *inp = sotoinp(so);
    int v;
    mutex_enter(&so->so_lock);
    switch (name) {
    case IP_TTL: v = inp->inp_ttl; break;
    case IP_TOS: v = inp->inp_tos; break;
    case IP_HDRINCL: v = is_raw(so) && raw_hdrincl(so); break;
    default:
        mutex_exit(&so->so_lock);
        return -ENOPROTOOPT;
    }
    mutex_exit(&so->so_lock);
    memcpy(val, &v, sizeof v);
    *len = sizeof v;
    return 0;
}

static int inet_getopt(struct socket *so, int level, int name, void *val, size_t *len)
{
    if (level == SOL_IP)
        return ip_getopt(so, name, val, len);
    if (level == SOL_TCP && is_tcp(so))
        return tcp_getopt(so, name, val, len);
    if (level == IPPROTO_UDPLITE && so->so_protocol == IPPROTO_UDPLITE)
        return udp_getopt(so, name, val, len);
    if (level == SOL_RAW && is_raw(so))
        return raw_getopt(so, level, name, val, len);
    return level == SOL_SOCKET ? -ENOPROTOOPT : -EOPNOTSUPP;
}

static int inet_setopt(struct socket *so, int level, int name, const void *val, size_t len)
{
    if (level == SOL_IP)
        return ip_setopt(so, name, val, len);
    if (level == SOL_TCP && is_tcp(so))
        return tcp_setopt(so, name, val, len);
    if (level == IPPROTO_UDPLITE && so->so_protocol == IPPROTO_UDPLITE)
        return udp_setopt(so, name, val, len);
    if (level == SOL_RAW && is_raw(so))
        return raw_setopt(so, level, name, val, len);
    if (level == SOL_SOCKET && name == SO_KEEPALIVE && is_tcp(so))
        return tcp_keepalive_changed(so);
    return level == SOL_SOCKET ? -ENOPROTOOPT : -EOPNOTSUPP;
}

static short inet_poll(struct socket *so, short events)
{
    return is_tcp(so) ? tcp_poll(so, events) : dgram_poll(so, events);
}

static int inet_nread(struct socket *so)
{
    return is_tcp(so) ? tcp_nread(so) : dgram_nread(so);
}

const struct sockops inet_sockops = {
    .family = AF_INET,
    .protocol = inet_protocol,
    .attach = inet_attach,
    .release = inet_release,
    .destroy = inet_destroy,
    .bind = inet_bind,
    .listen = inet_listen,
    .accept = inet_accept,
    .connect = inet_connect,
    .connect2 = inet_connect2,
    .send = inet_send,
    .recv = inet_recv,
    .shutdown = inet_shutdown,
    .getname = inet_getname,
    .getopt = inet_getopt,
    .setopt = inet_setopt,
    .poll = inet_poll,
    .nread = inet_nread,
};
