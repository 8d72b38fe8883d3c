/*
 * UDP (RFC 768): datagrams, each sent as one IPv4 packet and queued
 * whole at the receiving socket.
 *
 * A send copies the caller's bytes into a packet before any lock is
 * taken, then, under the socket's lock, picks the destination (the
 * given address, or the connected one) and an ephemeral port when the
 * socket has none, and hands the packet to IPv4 after letting the lock
 * go.  Input (the network thread) finds the socket by the table
 * (inpcb.c), copies the datagram into its queue when the queue is below
 * the receive buffer (else drops it and counts it, as Linux's
 * RcvbufErrors) and wakes a reader.  A datagram to a port nobody has
 * bound gets ICMP "port unreachable" back (ip.c), which a connected
 * sender sees as ECONNREFUSED on its next call, as on Linux.
 *
 * UDP-Lite (RFC 3828, IPPROTO_UDPLITE) is the same with its own ports and
 * a checksum that covers the first "coverage" bytes (the length field
 * carries it; 0 is the whole datagram) and is never left out.
 *
 * Locks: the socket's so_lock guards struct udpcb; the control block
 * table's bucket locks (inpcb.c) are taken under it (bind, connect).
 */
#include <kern/net/inet/inet.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

#define UDP_HDR_LEN     8
#define UDP_MAX_DATA    (IP_MAXPACKET - IP_HDR_LEN - UDP_HDR_LEN)   /* 65507 */

struct udphdr {
    uint16_t sport, dport, len, cksum;
};

/* UDP's part of a socket (inp_ppcb); the datagrams received wait on
 * the socket's so_dgq (kern/net/dgram.c). */
struct udpcb {
    int u_send_cscov, u_recv_cscov; /* [s] UDP-Lite's coverages (0: all) */
};

#define UDPLITE_SEND_CSCOV 10
#define UDPLITE_RECV_CSCOV 11


static struct udpcb *sotoudp(struct socket *so) { return sotoinp(so)->inp_ppcb; }

int udp_attach(struct socket *so)
{
    struct udpcb *u = kzalloc(sizeof *u);
    if (!u)
        return -ENOMEM;
    sotoinp(so)->inp_ppcb = u;
    return 0;
}

void udp_release(struct socket *so)
{
    struct inpcb *inp = sotoinp(so);
    mutex_enter(&so->so_lock);
    bool was = inp->inp_intable;
    inpcb_remove(inp);
    dgram_flush(so);
    mutex_exit(&so->so_lock);
    if (was)
        socket_rele(so);
}

void udp_destroy(struct socket *so) { kfree(sotoudp(so)); }

int udp_connect(struct socket *so, in_addr_t faddr, uint16_t fport)
{
    struct inpcb *inp = sotoinp(so);
    mutex_enter(&so->so_lock);
    int err = 0;
    bool left = false;
    if (fport == 0 && faddr == INADDR_ANY)
        left = inpcb_disconnect(inp);       /* AF_UNSPEC: dissolve the association */
    else
        err = inpcb_connect(inp, faddr, fport);
    mutex_exit(&so->so_lock);
    if (left)
        socket_rele(so);                    /* the table's reference */
    return err;
}

int udp_send_source(struct socket *so, in_addr_t dst, in_addr_t *src, uint16_t *sport,
                    uint8_t *ttl, uint8_t *tos)
{
    struct inpcb *inp = sotoinp(so);
    int err = inp->inp_bound ? 0 : inpcb_bind(inp, INADDR_ANY, 0);
    if (!err && !inet_route(dst, src))
        err = -ENETUNREACH;
    if (!err && inp->inp_laddr != INADDR_ANY)
        *src = inp->inp_laddr;
    *sport = inp->inp_lport;
    *ttl = inp->inp_ttl;
    *tos = inp->inp_tos;
    return err;
}

int64_t udp_send(struct socket *so, struct sockxfer *sx)
{
    if (sx->sx_flags & MSG_OOB)
        return -EOPNOTSUPP;
    size_t n = sx->sx_resid;
    if (n > UDP_MAX_DATA)
        return -EMSGSIZE;
    struct pkt *p;
    int err = pkt_from_caller(sx, UDP_HDR_LEN, &p);
    if (err)
        return err;
    struct inpcb *inp = sotoinp(so);
    in_addr_t dst, src;
    uint16_t dport, sport;
    uint8_t ttl, tos;
    mutex_enter(&so->so_lock);
    err = so->so_error ? -so->so_error : inet_send_dest(so, sx, &dst, &dport);
    so->so_error = 0;
    if (!err)
        err = udp_send_source(so, dst, &src, &sport, &ttl, &tos);
    mutex_exit(&so->so_lock);
    if (err) {
        pkt_free(p);
        return err == -EPIPE ? socket_epipe(sx->sx_flags) : err;
    }
    int proto = inp->inp_proto;
    size_t cover = p->p_len;
    struct udphdr *uh = (struct udphdr *)p->p_data;
    uh->sport = sport;
    uh->dport = dport;
    uh->len = htons((uint16_t)p->p_len);
    if (proto == IPPROTO_UDPLITE) {
        cover = sotoudp(so)->u_send_cscov;
        cover = cover && cover < p->p_len ? cover : p->p_len;
        uh->len = htons(cover == p->p_len ? 0 : (uint16_t)cover);
    }
    uh->cksum = 0;
    uint16_t ck = in_cksum_fold(in_cksum_add(in_pseudo(src, dst, proto, p->p_len),
                                             p->p_data, cover));
    uh->cksum = ck ? ck : 0xffff;       /* 0 means "no checksum" */
    err = ip_output(p, src, dst, proto, ttl, tos);
    if (!err)
        udp_mib_count(proto, UDM_OUT_DATAGRAMS);
    return err ? err : (int64_t)n;
}

/* A datagram's length and the bytes its checksum covers, or false when
 * it is to be dropped (RFC 768; RFC 3828 for UDP-Lite). */
static bool udp_lengths(const struct pkt *p, int proto, size_t *len, size_t *cover)
{
    const struct udphdr *uh = (const struct udphdr *)p->p_data;
    size_t field = ntohs(uh->len);
    if (proto == IPPROTO_UDPLITE) {
        *len = p->p_len;
        *cover = field ? field : p->p_len;
        return (field == 0 || field >= UDP_HDR_LEN) && *cover <= p->p_len && uh->cksum;
    }
    *len = *cover = field;
    return field >= UDP_HDR_LEN && field <= p->p_len;
}

bool udp_input(struct pkt *p, in_addr_t src, in_addr_t dst, int proto)
{
    size_t len, cover;
    if (p->p_len < UDP_HDR_LEN || !udp_lengths(p, proto, &len, &cover)) {
        udp_mib_count(proto, UDM_IN_ERRORS);
        return true;                /* malformed: dropped, no ICMP */
    }
    const struct udphdr *uh = (const struct udphdr *)p->p_data;
    if (uh->cksum && !pkt_csum_trusted(p) &&
        in_cksum_fold(in_cksum_add(in_pseudo(src, dst, proto, len), p->p_data, cover)) != 0) {
        udp_mib_count(proto, UDM_IN_ERRORS);
        udp_mib_count(proto, UDM_IN_CSUM_ERRORS);
        return true;
    }
    struct socket *so = inpcb_lookup(proto, dst, uh->dport, src, uh->sport);
    if (!so)
        return false;
    size_t n = len - UDP_HDR_LEN;
    char a[sizeof(struct sockaddr_in_k)];
    size_t al;
    inet_sin_out(a, &al, src, uh->sport);
    struct dgram *d = dgram_alloc(n, a, al);
    if (d)
        memcpy(d->d_data, p->p_data + UDP_HDR_LEN, n);
    mutex_enter(&so->so_lock);
    if (d && dgram_enqueue(so, d, true)) {
        d = NULL;                   /* InDatagrams counts when it is read (inet_recv) */
    } else {
        udp_mib_count(proto, UDM_IN_ERRORS);
        udp_mib_count(proto, UDM_RCVBUF_ERRORS);
    }
    mutex_exit(&so->so_lock);
    kfree(d);
    socket_rele(so);
    return true;
}

void udp_ctlinput(int proto, int err, in_addr_t src, uint16_t sport, in_addr_t dst,
                  uint16_t dport)
{
    struct socket *so = inpcb_lookup(proto, src, sport, dst, dport);
    if (!so)
        return;
    struct inpcb *inp = sotoinp(so);
    mutex_enter(&so->so_lock);
    bool connected = inp->inp_faddr == dst && inp->inp_fport == dport;
    if (connected)
        so->so_error = err;         /* Linux reports it to connected sockets only */
    mutex_exit(&so->so_lock);
    if (connected)
        socket_notify(so, POLLERR | POLL_READSIDE);
    socket_rele(so);
}

int udp_getopt(struct socket *so, int name, void *val, size_t *len)
{
    if (name != UDPLITE_SEND_CSCOV && name != UDPLITE_RECV_CSCOV)
        return -ENOPROTOOPT;
    mutex_enter(&so->so_lock);
    struct udpcb *u = sotoudp(so);
    int v = name == UDPLITE_SEND_CSCOV ? u->u_send_cscov : u->u_recv_cscov;
    mutex_exit(&so->so_lock);
    memcpy(val, &v, sizeof v);
    *len = sizeof v;
    return 0;
}

/* Linux's rule: a coverage below the header's 8 bytes (but not 0) is 8. */
int udp_setopt(struct socket *so, int name, const void *val, size_t len)
{
    if (name != UDPLITE_SEND_CSCOV && name != UDPLITE_RECV_CSCOV)
        return -ENOPROTOOPT;
    if (len < sizeof(int))
        return -EINVAL;
    int v;
    memcpy(&v, val, sizeof v);
    if (v != 0 && v < UDP_HDR_LEN)
        v = UDP_HDR_LEN;
    v = MIN(v, 0xffff);
    mutex_enter(&so->so_lock);
    struct udpcb *u = sotoudp(so);
    if (name == UDPLITE_SEND_CSCOV)
        u->u_send_cscov = v;
    else
        u->u_recv_cscov = v;
    mutex_exit(&so->so_lock);
    return 0;
}
