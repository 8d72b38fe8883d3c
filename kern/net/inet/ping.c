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
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

#define ICMP_ID_AT      4                   /* the identifier's offset in an echo message */

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
    in_addr_t dst, src;
    uint16_t id;
    uint8_t ttl, tos;
    mutex_enter(&so->so_lock);
    err = so->so_error ? -so->so_error : inet_send_dest(so, sx, &dst, NULL);
    so->so_error = 0;
    if (!err)
        err = udp_send_source(so, dst, &src, &id, &ttl, &tos);     /* the port is the id */
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
    inet_queue_copy(so, p->p_data, p->p_len, a, al);
    socket_rele(so);
}
