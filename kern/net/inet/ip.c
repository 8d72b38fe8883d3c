/*
 * IPv4 (RFC 791) and the part of ICMP (RFC 792) that the transports
 * need: echo replies, and "destination unreachable" both ways: sent for a
 * port or protocol nobody takes, and taken, whoever sent it, to the
 * socket whose datagram or segment it quotes, with Linux's errno for its
 * code (icmp_err_convert).  A packet this machine could not deliver
 * because its next hop never answered ARP comes back to its sender as
 * "host unreachable" (ip_host_unreachable), as Linux's neighbour failure
 * does, so a connect to a dead address fails with EHOSTUNREACH at once
 * rather than retrying for minutes.
 *
 * The transports never keep an input packet: they copy what they queue,
 * and ip_input frees it.
 *
 * Output puts the 20-byte header in front of a transport's packet and
 * hands it to the interface the route names.  Input checks what RFC 1122
 * says a host must (version, header length and checksum, total length,
 * a destination that is ours), strips the header and calls the protocol.
 * A packet is never fragmented: loopback's MTU is the largest datagram,
 * and TCP's MSS follows the route's MTU (inet_path_mtu); a UDP datagram
 * larger than an Ethernet MTU is -EMSGSIZE.  Fragments that come in are
 * reassembled (ip_frag.c) before anyone sees them.
 *
 * Every datagram for this machine is offered to the raw sockets of its
 * protocol (raw.c) before its own protocol takes it; a protocol the
 * kernel does not know is "unreachable" only when no raw socket took it.
 *
 * Locks: none of its own; counters are atomic.
 */
#include <kern/net/inet/inet.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

#define ICMP_UNREACH_HOST 1
#define ICMP_UNREACH_PROTO 2
#define ICMP_UNREACH_PORT 3
#define ICMP_UNREACH_NEEDFRAG 4
#define ICMP_UNREACH_LAST 15

struct icmphdr {
    uint8_t type, code;
    uint16_t cksum;
    uint32_t rest;
};

static uint16_t ip_next_id;     /* [a] */

#define COUNT(m) inet_mib_count(m)      /* /proc/net/snmp (mib.c) */

uint16_t ip_new_id(void)
{
    return htons(__atomic_add_fetch(&ip_next_id, 1, __ATOMIC_RELAXED));
}

int ip_output_raw(struct pkt *p, in_addr_t dst)
{
    in_addr_t src, nexthop;
    struct netif *ifp = inet_route_nh(dst, &src, &nexthop);
    COUNT(IPM_OUT_REQUESTS);
    if (!ifp) {
        COUNT(IPM_OUT_NO_ROUTES);
        pkt_free(p);
        return -ENETUNREACH;
    }
    if (p->p_len > ifp->if_mtu) {
        COUNT(IPM_FRAG_FAILS);
        pkt_free(p);
        return -EMSGSIZE;
    }
    const struct iphdr *ip = (const struct iphdr *)p->p_data;
    size_t hlen = (size_t)(ip->ihl_version & 0xf) * 4;
    if (ip->proto == IPPROTO_ICMP && p->p_len > hlen)
        icmp_mib_out(p->p_data[hlen]);
    COUNT(IPM_OUT_TRANSMITS);
    ifp->if_output(ifp, p, nexthop);
    return 0;
}

int ip_output(struct pkt *p, in_addr_t src, in_addr_t dst, int proto, uint8_t ttl, uint8_t tos)
{
    in_addr_t rsrc, nexthop;
    struct netif *ifp = inet_route_nh(dst, &rsrc, &nexthop);
    COUNT(IPM_OUT_REQUESTS);
    if (!ifp) {
        COUNT(IPM_OUT_NO_ROUTES);
        pkt_free(p);
        return -ENETUNREACH;
    }
    if (p->p_len + IP_HDR_LEN > MIN((uint32_t)IP_MAXPACKET, ifp->if_mtu)) {
        COUNT(IPM_FRAG_FAILS);
        pkt_free(p);
        return -EMSGSIZE;
    }
    if (proto == IPPROTO_ICMP && p->p_len)
        icmp_mib_out(p->p_data[0]);
    if (!(ifp->if_flags & IFF_LOOPBACK))
        pkt_csum_finish(p);                 /* it leaves the host: the sum must be whole */
    struct iphdr *ip = pkt_push(p, IP_HDR_LEN);
    ip->ihl_version = 0x45;
    ip->tos = tos;
    ip->len = htons((uint16_t)p->p_len);
    ip->id = ip_new_id();
    ip->frag = 0;
    ip->ttl = ttl;
    ip->proto = (uint8_t)proto;
    ip->cksum = 0;
    ip->src = src ? src : rsrc;
    ip->dst = dst;
    ip->cksum = in_cksum_fold(in_cksum_add(0, ip, IP_HDR_LEN));
    COUNT(IPM_OUT_TRANSMITS);
    ifp->if_output(ifp, p, nexthop);
    return 0;
}

static size_t ip_header_ok(const struct pkt *p);

void icmp_send_error(const struct iphdr *ip, size_t len, int type, int code)
{
    size_t quote = MIN(len, (size_t)((ip->ihl_version & 0xf) * 4 + 8));
    struct pkt *r = pkt_alloc(ICMP_HDR_LEN + quote);
    if (!r)
        return;
    struct icmphdr *ic = (struct icmphdr *)r->p_data;
    ic->type = (uint8_t)type;
    ic->code = (uint8_t)code;
    ic->cksum = 0;
    ic->rest = 0;
    memcpy(r->p_data + ICMP_HDR_LEN, ip, quote);
    ic->cksum = in_cksum_fold(in_cksum_add(0, r->p_data, r->p_len));
    ip_output(r, ip->dst, ip->src, IPPROTO_ICMP, IP_DEFAULT_TTL, 0);
}

static void icmp_echo(struct pkt *p, in_addr_t src, in_addr_t dst)
{
    struct pkt *r = pkt_alloc(p->p_len);
    if (!r)
        return;
    memcpy(r->p_data, p->p_data, p->p_len);
    struct icmphdr *ic = (struct icmphdr *)r->p_data;
    ic->type = ICMP_ECHOREPLY;
    ic->cksum = 0;
    ic->cksum = in_cksum_fold(in_cksum_add(0, r->p_data, r->p_len));
    ip_output(r, dst, src, IPPROTO_ICMP, IP_DEFAULT_TTL, 0);
}

/* Linux's icmp_err_convert: the errno of each "destination unreachable"
 * code, and whether it is hard (a connected UDP socket hears of it, a
 * connection being made fails).  Fragmentation needed (4) and source
 * route failed (5) are not errors a socket hears of here. */
static const struct { int err; bool hard; } unreach_errno[ICMP_UNREACH_LAST + 1] = {
    { ENETUNREACH, true }, { EHOSTUNREACH, true }, { ENOPROTOOPT, true },
    { ECONNREFUSED, true }, { 0, false }, { 0, false }, { ENETUNREACH, true },
    { EHOSTDOWN, true }, { ENONET, true }, { ENETUNREACH, true }, { EHOSTUNREACH, true },
    { ENETUNREACH, false }, { EHOSTUNREACH, false }, { EHOSTUNREACH, true },
    { EHOSTUNREACH, true }, { EHOSTUNREACH, true },
};

/* An ICMP "destination unreachable" about a packet this machine sent: the
 * quoted header says which socket. */
static void icmp_unreach(struct pkt *p, int code)
{
    if (code > ICMP_UNREACH_LAST || !unreach_errno[code].err)
        return;
    if (p->p_len < ICMP_HDR_LEN + IP_HDR_LEN + 8)
        return;
    const struct iphdr *q = (const struct iphdr *)(p->p_data + ICMP_HDR_LEN);
    size_t qhlen = (size_t)(q->ihl_version & 0xf) * 4;
    if (qhlen < IP_HDR_LEN || p->p_len < ICMP_HDR_LEN + qhlen + 8)
        return;
    const uint8_t *t = (const uint8_t *)q + qhlen;
    const uint16_t *ports = (const uint16_t *)t;
    int err = unreach_errno[code].err;
    bool hard = unreach_errno[code].hard;
    if ((q->proto == IPPROTO_UDP || q->proto == IPPROTO_UDPLITE) && hard)
        udp_ctlinput(q->proto, err, q->src, ports[0], q->dst, ports[1]);
    else if (q->proto == IPPROTO_TCP) {
        uint32_t seq;
        memcpy(&seq, t + 4, 4);
        tcp_ctlinput(err, q->src, ports[0], q->dst, ports[1], ntohl(seq));
    }
}

/* Is this ICMP message an error (never answered with another)? */
static bool icmp_is_error(int type)
{
    return type == ICMP_UNREACH || type == ICMP_SOURCEQUENCH || type == ICMP_REDIRECT ||
           type == ICMP_TIMXCEED || type == ICMP_PARAMPROB;
}

void ip_host_unreachable(struct pkt *p)
{
    const struct iphdr *ip = (const struct iphdr *)p->p_data;
    size_t hlen = ip_header_ok(p);
    if (!hlen || !inet_local_addr(ip->src))
        return;
    if (ip->proto == IPPROTO_ICMP &&
        (p->p_len < hlen + 1 || icmp_is_error(p->p_data[hlen])))
        return;                     /* RFC 1122 3.2.2: no error about an error */
    icmp_send_error(ip, ntohs(ip->len), ICMP_UNREACH, ICMP_UNREACH_HOST);
}

static void icmp_input(struct pkt *p, in_addr_t src, in_addr_t dst)
{
    if (p->p_len < ICMP_HDR_LEN) {
        inet_mib_count(ICM_IN_MSGS);
        inet_mib_count(ICM_IN_ERRORS);
        return;
    }
    if (in_cksum_fold(in_cksum_add(0, p->p_data, p->p_len)) != 0) {
        inet_mib_count(ICM_IN_MSGS);
        inet_mib_count(ICM_IN_ERRORS);
        inet_mib_count(ICM_IN_CSUM_ERRORS);
        return;
    }
    const struct icmphdr *ic = (const struct icmphdr *)p->p_data;
    icmp_mib_in(ic->type);
    if (ic->type == ICMP_ECHO)
        icmp_echo(p, src, dst);
    else if (ic->type == ICMP_ECHOREPLY)
        ping_input(p, src, dst);
    else if (ic->type == ICMP_UNREACH)
        icmp_unreach(p, ic->code);
}

/* The header checks RFC 1122 asks of a host: the header's length, or 0
 * when the packet is to be dropped. */
static size_t ip_header_ok(const struct pkt *p)
{
    const struct iphdr *ip = (const struct iphdr *)p->p_data;
    if (p->p_len < IP_HDR_LEN || (ip->ihl_version >> 4) != 4)
        return 0;
    size_t hlen = (size_t)(ip->ihl_version & 0xf) * 4;
    if (hlen < IP_HDR_LEN || hlen > p->p_len || ntohs(ip->len) < hlen || ntohs(ip->len) > p->p_len)
        return 0;
    if (in_cksum_fold(in_cksum_add(0, ip, hlen)) != 0)
        return 0;
    return hlen;
}

void ip_input(struct pkt *p)
{
    COUNT(IPM_IN_RECEIVES);
    size_t hlen = ip_header_ok(p);
    if (!hlen) {
        COUNT(IPM_IN_HDR_ERRORS);
        pkt_free(p);
        return;
    }
    const struct iphdr *ip = (const struct iphdr *)p->p_data;
    in_addr_t src = ip->src, dst = ip->dst;
    if (!inet_local_addr(dst)) {
        COUNT(IPM_IN_ADDR_ERRORS);
        pkt_free(p);
        return;
    }
    p->p_len = ntohs(ip->len);      /* drop what a device padded after the packet */
    if (ntohs(ip->frag) & (IP_MF | IP_OFFMASK)) {
        COUNT(IPM_REASM_REQDS);
        if (!(p = ip_reassemble(p, hlen)))
            return;                 /* held for the rest, or dropped */
        COUNT(IPM_REASM_OKS);
        ip = (const struct iphdr *)p->p_data;
    }
    int proto = ip->proto;
    uint32_t total = p->p_len;
    bool raw = raw_input(p, hlen);
    pkt_pull(p, hlen);
    COUNT(IPM_IN_DELIVERS);
    if (proto == IPPROTO_TCP)
        tcp_input(p, src, dst);
    else if ((proto == IPPROTO_UDP || proto == IPPROTO_UDPLITE) && !udp_input(p, src, dst, proto)) {
        udp_mib_count(proto, UDM_NO_PORTS);
        icmp_send_error(ip, total, ICMP_UNREACH, ICMP_UNREACH_PORT);
    }
    else if (proto == IPPROTO_ICMP)
        icmp_input(p, src, dst);
    else if (proto != IPPROTO_UDP && proto != IPPROTO_UDPLITE && !raw) {
        COUNT(IPM_IN_UNKNOWN_PROTOS);
        icmp_send_error(ip, total, ICMP_UNREACH, ICMP_UNREACH_PROTO);
    }
    pkt_free(p);
}
