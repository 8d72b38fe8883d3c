/*
 * ICMP echo sockets ("ping sockets": socket(AF_INET, SOCK_DGRAM,
 * IPPROTO_ICMP)), Linux's way to ping without a raw socket, which Debian's
 * iputils ping uses first.
 *
 * Linux's rules.  A send is one ICMP message, header included: it must be
 * an echo request (type 8, code 0, at least the 8-byte header), else
 * EINVAL.  The kernel replaces its identifier with the socket's, which is
 * its "port" (bind's sin_port, or one chosen at the first send, from the
 * ephemeral range, with no privilege needed for any value) and computes
 * its checksum.  The destination is sendto's address (its port ignored)
 * or the connected one.  An echo reply that comes in is delivered, whole
 * from its ICMP header on, to the socket bound to its identifier (and
 * connected to its source, or to none), with the source as the address
 * and port 0.  Who may make one: Linux asks net.ipv4.ping_group_range,
 * which the kernel sets to no group and Debian's systemd to every group;
 * Tempest answers as a Debian system does, for every group, and has no
 * such setting yet.  The sockets are UDP's otherwise (udp.c: attach,
 * bind, connect, the datagram queue, release), in the control-block
 * table (inpcb.c) under protocol IPPROTO_ICMP.
 *
 * Locks: the socket's so_lock for its ends, as UDP's; none held while a
 * message is built or sent.
 */
#include <kern/net/inet/inet.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

#define ICMP_ECHOREPLY  0
#define ICMP_ECHO       8
#define ICMP_HDR_LEN    8
#define ICMP_ID_AT      4                   /* the identifier's offset in an echo message */

/* The destination of a send: sendto's address (the port ignored) or the
 * connected one. */
static int ping_destination(struct socket *so, const struct sockxfer *sx, in_addr_t *a)
{
    struct inpcb *inp = sotoinp(so);
    if (sx->sx_name) {
        if (sx->sx_namelen < sizeof(struct sockaddr_in_k))
            return -EINVAL;
        const struct sockaddr_in_k *sin = sx->sx_name;
        if (sin->sin_family != AF_INET && sin->sin_family != AF_UNSPEC)
            return -EAFNOSUPPORT;
        *a = sin->sin_addr == INADDR_ANY ? htonl(INADDR_LOOPBACK_H) : sin->sin_addr;
        return 0;
    }
    if (inp->inp_faddr == INADDR_ANY)
        return -EDESTADDRREQ;
    *a = inp->inp_faddr;
    return 0;
}

/* The message in p is an echo request (type 8, code 0). */
static bool is_echo_request(const struct pkt *p)
{
    return p->p_len >= ICMP_HDR_LEN && p->p_data[0] == ICMP_ECHO && p->p_data[1] == 0;
}

int64_t ping_send(struct socket *so, struct sockxfer *sx)
{
    if (sx->sx_flags & MSG_OOB)
        return -EOPNOTSUPP;
    size_t n = sx->sx_resid;
    if (n > IP_MAXPACKET - IP_HDR_LEN)
        return -EMSGSIZE;
    if (n < ICMP_HDR_LEN)
        return -EINVAL;
    struct pkt *p;
    int err = pkt_from_caller(sx, 0, &p);
    if (err)
        return err;
    if (!is_echo_request(p)) {
        pkt_free(p);
        return -EINVAL;
    }
    struct inpcb *inp = sotoinp(so);
    in_addr_t dst, src;
    mutex_enter(&so->so_lock);
    err = so->so_error ? -so->so_error : ping_destination(so, sx, &dst);
    so->so_error = 0;
    if (!err && !inp->inp_bound)
        err = inpcb_bind(inp, INADDR_ANY, 0);
    if (!err && !inet_route(dst, &src))
        err = -ENETUNREACH;
    if (!err && inp->inp_laddr != INADDR_ANY)
        src = inp->inp_laddr;
    uint16_t id = inp->inp_lport;
    uint8_t ttl = inp->inp_ttl, tos = inp->inp_tos;
    mutex_exit(&so->so_lock);
    if (err) {
        pkt_free(p);
        return err;
    }
    memcpy(p->p_data + ICMP_ID_AT, &id, sizeof id);
    uint16_t zero = 0, ck;
    memcpy(p->p_data + 2, &zero, sizeof zero);
    ck = in_cksum_fold(in_cksum_add(0, p->p_data, p->p_len));
    memcpy(p->p_data + 2, &ck, sizeof ck);
    err = ip_output(p, src, dst, IPPROTO_ICMP, ttl, tos);
    return err ? err : (int64_t)n;
}

void ping_input(const struct pkt *p, in_addr_t src, in_addr_t dst)
{
    if (p->p_len < ICMP_HDR_LEN || p->p_data[0] != ICMP_ECHOREPLY)
        return;
    uint16_t id;
    memcpy(&id, p->p_data + ICMP_ID_AT, sizeof id);
    struct socket *so = inpcb_lookup(IPPROTO_ICMP, dst, id, src, 0);
    if (!so)
        return;
    char a[sizeof(struct sockaddr_in_k)];
    size_t al;
    inet_sin_out(a, &al, src, 0);
    struct dgram *d = dgram_alloc(p->p_len, a, al);
    if (d)
        memcpy(d->d_data, p->p_data, p->p_len);
    mutex_enter(&so->so_lock);
    if (d && dgram_enqueue(so, d, true))
        d = NULL;
    mutex_exit(&so->so_lock);
    kfree(d);
    socket_rele(so);
}
