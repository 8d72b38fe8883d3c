/*
 * t_raw: raw IPv4 sockets (SOCK_RAW) over loopback, with Linux semantics.
 *
 * socket()'s rules (root only, protocol 0, -1 and 263); the name (the
 * protocol as the port); an ICMP echo request answered by the kernel and
 * read back IP header and all, the request itself seen first; the
 * ICMP_FILTER option; IP_HDRINCL (a caller-made header completed by the
 * kernel; IPPROTO_RAW sockets have it on; other sockets refuse it); a
 * copy of every UDP datagram for a raw UDP socket while UDP still gets
 * it; a UDP datagram sent as fragments, reassembled in any order, and
 * never delivered when they overlap, leave a gap or pass 65535 bytes;
 * no "protocol unreachable" for a protocol a raw socket takes, one
 * for a protocol nobody takes; connect, send's and bind's errors, and a
 * datagram cut short (MSG_TRUNC); TCP's keepalive probes and its
 * timestamps (offered, answered, then on every segment), seen by a raw
 * TCP socket.  Needs root, as on Linux.
 */
#include "ut.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef ICMP_FILTER
#define ICMP_FILTER 1
#endif
#ifndef SOL_RAW
#define SOL_RAW 255
#endif

#define GUARD_MS 10000      /* a poll timeout that only stops a hang */
#define QUIET_MS 300        /* how long "nothing comes" is watched for */
#define PROTO_TAKEN 253     /* RFC 3692's experimental protocol numbers */
#define PROTO_UNTAKEN 254
#define ECHO_ID 0x5454

static struct sockaddr_in loopback(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}



/* An ICMP echo request of 8 + n bytes into buf. */
static size_t make_echo(uint8_t *buf, uint16_t seq, size_t n)
{
	struct icmphdr *ic = (struct icmphdr *)buf;
	memset(ic, 0, sizeof *ic);
	ic->type = ICMP_ECHO;
	ic->un.echo.id = htons(ECHO_ID);
	ic->un.echo.sequence = htons(seq);
	for (size_t i = 0; i < n; i++)
		buf[8 + i] = (uint8_t)(i * 13 + seq);
	ic->checksum = ut_inet_cksum(buf, 8 + n);
	return 8 + n;
}

/* Read datagrams from fd until one is an ICMP message of type with our
 * id and seq: its length (IP header included), or -1. */
static ssize_t await_icmp(int fd, uint8_t *buf, size_t room, int type, uint16_t seq)
{
	for (int i = 0; i < 8 && ut_readable(fd, GUARD_MS); i++) {
		ssize_t n = recv(fd, buf, room, 0);
		if (n < 28)
			return -1;
		size_t hl = (size_t)(buf[0] & 0xf) * 4;
		struct icmphdr *ic = (struct icmphdr *)(buf + hl);
		if (ic->type == type && ntohs(ic->un.echo.id) == ECHO_ID &&
		    ntohs(ic->un.echo.sequence) == seq)
			return n;
	}
	return -1;
}

static void test_socket_rules(void)
{
	CHECK_ERR(socket(AF_INET, SOCK_RAW, 0), EPROTONOSUPPORT);
	CHECK_ERR(socket(AF_INET, SOCK_RAW, 263), EINVAL);   /* Linux's IPPROTO_MAX */
	CHECK_ERR(socket(AF_INET, SOCK_RAW, -1), EINVAL);
	int fd = CHECK_OK(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
	int v = 0;
	socklen_t len = sizeof v;
	CHECK_OK(getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len));
	CHECK_EQ(v, SOCK_RAW);
	CHECK_OK(getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &len));
	CHECK_EQ(v, IPPROTO_ICMP);
	struct sockaddr_in a;
	len = sizeof a;
	CHECK_OK(getsockname(fd, (struct sockaddr *)&a, &len));
	CHECK_EQ(ntohs(a.sin_port), IPPROTO_ICMP);  /* the protocol, as the port */
	CHECK_EQ(a.sin_addr.s_addr, htonl(INADDR_ANY));
	len = sizeof a;
	CHECK_ERR(getpeername(fd, (struct sockaddr *)&a, &len), ENOTCONN);
	CHECK_ERR(listen(fd, 1), EOPNOTSUPP);
	close(fd);
}

static void unprivileged_raw(void *arg)
{
	(void)arg;
	CHECK_ERR(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP), EPERM);
	CHECK_ERR(socket(AF_INET, SOCK_RAW, 0), EPROTONOSUPPORT);
}

static void test_echo(void)
{
	int fd = CHECK_OK(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
	struct sockaddr_in to = loopback();
	uint8_t out[64], in[256];
	size_t n = make_echo(out, 1, 56);
	CHECK_EQ(sendto(fd, out, n, 0, (struct sockaddr *)&to, sizeof to), (ssize_t)n);
	/* The request comes back in over loopback first, then the reply. */
	ssize_t got = await_icmp(fd, in, sizeof in, ICMP_ECHO, 1);
	CHECK_EQ(got, (ssize_t)(20 + n));
	got = await_icmp(fd, in, sizeof in, ICMP_ECHOREPLY, 1);
	CHECK_EQ(got, (ssize_t)(20 + n));
	if (got == (ssize_t)(20 + n)) {
		struct iphdr *ip = (struct iphdr *)in;
		CHECK_EQ(ip->version, 4);
		CHECK_EQ(ip->protocol, IPPROTO_ICMP);
		CHECK_EQ(ntohs(ip->tot_len), 20 + n);
		CHECK_EQ(ip->saddr, htonl(INADDR_LOOPBACK));
		CHECK_EQ(ut_inet_cksum(in, 20), 0);
		CHECK_EQ(ut_inet_cksum(in + 20, n), 0);
		CHECK(memcmp(in + 28, out + 8, n - 8) == 0);
	}
	/* The sender's address comes with it; the port is 0. */
	struct sockaddr_in from;
	socklen_t flen = sizeof from;
	n = make_echo(out, 2, 8);
	CHECK_EQ(sendto(fd, out, n, 0, (struct sockaddr *)&to, sizeof to), (ssize_t)n);
	CHECK(ut_readable(fd, GUARD_MS));
	CHECK_EQ(recvfrom(fd, in, sizeof in, 0, (struct sockaddr *)&from, &flen), (ssize_t)(20 + n));
	CHECK_EQ(flen, sizeof from);
	CHECK_EQ(from.sin_family, AF_INET);
	CHECK_EQ(from.sin_port, 0);
	CHECK_EQ(from.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	close(fd);
}

static void test_filter(void)
{
	int fd = CHECK_OK(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
	uint32_t f = 1u << ICMP_ECHO, g = 0;
	socklen_t len = sizeof g;
	CHECK_OK(setsockopt(fd, SOL_RAW, ICMP_FILTER, &f, sizeof f));
	CHECK_OK(getsockopt(fd, SOL_RAW, ICMP_FILTER, &g, &len));
	CHECK_EQ(g, f);
	CHECK_EQ(len, sizeof g);
	CHECK_ERR(setsockopt(fd, SOL_RAW, 99, &f, sizeof f), ENOPROTOOPT);
	struct sockaddr_in to = loopback();
	uint8_t out[64], in[256];
	size_t n = make_echo(out, 3, 16);
	CHECK_EQ(sendto(fd, out, n, 0, (struct sockaddr *)&to, sizeof to), (ssize_t)n);
	/* The request is filtered out: until our reply, nothing read is an
	   echo request (a late reply to another socket's echo may come). */
	int requests = 0;
	ssize_t got = -1;
	for (int i = 0; i < 8 && ut_readable(fd, GUARD_MS); i++) {
		got = recv(fd, in, sizeof in, 0);
		if (got < 28)
			break;
		requests += in[20] == ICMP_ECHO;
		if (in[20] == ICMP_ECHOREPLY && in[20 + 7] == 3)   /* our sequence */
			break;
	}
	CHECK_EQ(got, (ssize_t)(20 + n));
	CHECK_EQ(in[20], ICMP_ECHOREPLY);
	CHECK_EQ(requests, 0);
	close(fd);
	int u = CHECK_OK(socket(AF_INET, SOCK_RAW, IPPROTO_UDP));
	CHECK_ERR(setsockopt(u, SOL_RAW, ICMP_FILTER, &f, sizeof f), EOPNOTSUPP);
	close(u);
}

static void test_hdrincl(void)
{
	int icmp = CHECK_OK(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
	int rawp = CHECK_OK(socket(AF_INET, SOCK_RAW, IPPROTO_RAW));
	int udp = CHECK_OK(socket(AF_INET, SOCK_DGRAM, 0));
	int v = -1, one = 1;
	socklen_t len = sizeof v;
	CHECK_OK(getsockopt(icmp, IPPROTO_IP, IP_HDRINCL, &v, &len));
	CHECK_EQ(v, 0);
	CHECK_OK(getsockopt(rawp, IPPROTO_IP, IP_HDRINCL, &v, &len));
	CHECK_EQ(v, 1);
	CHECK_OK(getsockopt(udp, IPPROTO_IP, IP_HDRINCL, &v, &len));
	CHECK_EQ(v, 0);
	CHECK_ERR(setsockopt(udp, IPPROTO_IP, IP_HDRINCL, &one, sizeof one), ENOPROTOOPT);
	uint32_t f = ~(1u << ICMP_ECHOREPLY);
	CHECK_OK(setsockopt(icmp, SOL_RAW, ICMP_FILTER, &f, sizeof f));
	/* Our own header, its length, checksum, id and source left 0. */
	uint8_t pkt[20 + 40], in[256];
	memset(pkt, 0, 20);
	struct iphdr *ip = (struct iphdr *)pkt;
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = IPPROTO_ICMP;
	ip->daddr = htonl(INADDR_LOOPBACK);
	size_t n = make_echo(pkt + 20, 4, 32);
	struct sockaddr_in to = loopback();
	CHECK_EQ(sendto(rawp, pkt, 20 + n, 0, (struct sockaddr *)&to, sizeof to), (ssize_t)(20 + n));
	ssize_t got = await_icmp(icmp, in, sizeof in, ICMP_ECHOREPLY, 4);
	CHECK_EQ(got, (ssize_t)(20 + n));
	/* A header shorter than it says is refused. */
	pkt[0] = 0x4f;
	CHECK_ERR(sendto(rawp, pkt, 24, 0, (struct sockaddr *)&to, sizeof to), EINVAL);
	/* IP_HDRINCL turned on for an ICMP socket. */
	CHECK_OK(setsockopt(icmp, IPPROTO_IP, IP_HDRINCL, &one, sizeof one));
	CHECK_OK(getsockopt(icmp, IPPROTO_IP, IP_HDRINCL, &v, &len));
	CHECK_EQ(v, 1);
	pkt[0] = 0x45;
	n = make_echo(pkt + 20, 5, 8);
	CHECK_EQ(sendto(icmp, pkt, 20 + n, 0, (struct sockaddr *)&to, sizeof to), (ssize_t)(20 + n));
	CHECK_EQ(await_icmp(icmp, in, sizeof in, ICMP_ECHOREPLY, 5), (ssize_t)(20 + n));
	close(icmp);
	close(rawp);
	close(udp);
}

/* ---- fragments, sent by hand through an IPPROTO_RAW socket ---- */

#define FRAG_BYTES 3000     /* a datagram's UDP payload, cut in three */

/* A whole UDP datagram from 127.0.0.1 to port, IP header and all, its
 * payload a pattern from seed and its UDP checksum right: its length. */
static size_t make_udp(uint8_t *buf, uint16_t port, uint16_t id, uint8_t seed)
{
	size_t ulen = 8 + FRAG_BYTES;
	memset(buf, 0, 28);
	struct iphdr *ip = (struct iphdr *)buf;
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->id = htons(id);
	ip->protocol = IPPROTO_UDP;
	ip->saddr = ip->daddr = htonl(INADDR_LOOPBACK);
	uint8_t *u = buf + 20;
	u[0] = 0x9c;                            /* source port 40000 */
	u[1] = 0x40;
	memcpy(u + 2, &(uint16_t){ htons(port) }, 2);
	memcpy(u + 4, &(uint16_t){ htons((uint16_t)ulen) }, 2);
	for (size_t i = 0; i < FRAG_BYTES; i++)
		u[8 + i] = (uint8_t)(i * 7 + seed);
	/* The pseudo-header (RFC 768) before the datagram, summed together. */
	static uint8_t sum[12 + 8 + FRAG_BYTES];
	memcpy(sum, &ip->saddr, 4);
	memcpy(sum + 4, &ip->daddr, 4);
	sum[8] = 0;
	sum[9] = IPPROTO_UDP;
	memcpy(sum + 10, u + 4, 2);
	memcpy(sum + 12, u, ulen);
	uint16_t c = ut_inet_cksum(sum, 12 + ulen);
	memcpy(u + 6, &c, 2);
	return 20 + ulen;
}

/* len bytes of dgram's IP payload from byte from, as the fragment at
 * offset off. */
static void send_piece(int rawp, const uint8_t *dgram, size_t from, size_t off, size_t len,
		       int more)
{
	static uint8_t pkt[20 + 8 + FRAG_BYTES];
	memcpy(pkt, dgram, 20);
	memcpy(pkt + 20, dgram + 20 + from, len);
	struct iphdr *ip = (struct iphdr *)pkt;
	ip->frag_off = htons((uint16_t)((more ? IP_MF : 0) | (off / 8)));
	ip->tot_len = htons((uint16_t)(20 + len));
	struct sockaddr_in to = loopback();
	CHECK_EQ(sendto(rawp, pkt, 20 + len, 0, (struct sockaddr *)&to, sizeof to), (ssize_t)(20 + len));
}

/* Bytes [off, off + len) of dgram's IP payload as one fragment. */
static void send_frag(int rawp, const uint8_t *dgram, size_t off, size_t len, int more)
{
	send_piece(rawp, dgram, off, off, len, more);
}

/* Does one datagram of FRAG_BYTES with seed's pattern arrive at udp within
 * ms (1), or nothing (0), or something else (-1)? */
static int got_datagram(int udp, uint8_t seed, int ms)
{
	static uint8_t in[FRAG_BYTES + 16];
	if (!ut_readable(udp, ms))
		return 0;
	if (recv(udp, in, sizeof in, 0) != FRAG_BYTES)
		return -1;
	for (size_t i = 0; i < FRAG_BYTES; i++)
		if (in[i] != (uint8_t)(i * 7 + seed))
			return -1;
	return 1;
}

/* Fragments are reassembled whatever their order, an exact copy of one
 * is ignored; a datagram with overlapping fragments, a missing one or
 * one past 65535 bytes never arrives, and later datagrams still do. */
static void test_fragments(void)
{
	int rawp = CHECK_OK(socket(AF_INET, SOCK_RAW, IPPROTO_RAW));
	int udp = CHECK_OK(socket(AF_INET, SOCK_DGRAM, 0));
	struct sockaddr_in a = loopback();
	socklen_t len = sizeof a;
	CHECK_OK(bind(udp, (struct sockaddr *)&a, sizeof a));
	CHECK_OK(getsockname(udp, (struct sockaddr *)&a, &len));
	uint16_t port = ntohs(a.sin_port), id = (uint16_t)(getpid() * 8);
	static uint8_t d[20 + 8 + FRAG_BYTES];
	size_t total = make_udp(d, port, id, 1) - 20;       /* 3008: 1480 + 1480 + 48 */

	long long reqds = ut_snmp("Ip", "ReasmReqds"), oks = ut_snmp("Ip", "ReasmOKs");
	send_frag(rawp, d, 0, 1480, 1);                     /* in order */
	send_frag(rawp, d, 1480, 1480, 1);
	send_frag(rawp, d, 2960, total - 2960, 0);
	CHECK_EQ(got_datagram(udp, 1, GUARD_MS), 1);
	CHECK(ut_snmp("Ip", "ReasmReqds") >= reqds + 3);    /* /proc/net/snmp counts them */
	CHECK(ut_snmp("Ip", "ReasmOKs") > oks);

	make_udp(d, port, ++id, 2);                         /* last first */
	send_frag(rawp, d, 2960, total - 2960, 0);
	send_frag(rawp, d, 1480, 1480, 1);
	send_frag(rawp, d, 0, 1480, 1);
	CHECK_EQ(got_datagram(udp, 2, GUARD_MS), 1);

	make_udp(d, port, ++id, 3);                         /* a copy of the middle */
	send_frag(rawp, d, 0, 1480, 1);
	send_frag(rawp, d, 1480, 1480, 1);
	send_frag(rawp, d, 1480, 1480, 1);
	send_frag(rawp, d, 2960, total - 2960, 0);
	CHECK_EQ(got_datagram(udp, 3, GUARD_MS), 1);
	CHECK_EQ(got_datagram(udp, 3, QUIET_MS), 0);

	make_udp(d, port, ++id, 4);                         /* overlapping by 8 bytes */
	send_frag(rawp, d, 0, 1480, 1);
	send_frag(rawp, d, 1472, 1488, 1);
	send_frag(rawp, d, 2960, total - 2960, 0);
	CHECK_EQ(got_datagram(udp, 4, QUIET_MS), 0);

	make_udp(d, port, ++id, 5);                         /* the middle missing */
	send_frag(rawp, d, 0, 1480, 1);
	send_frag(rawp, d, 2960, total - 2960, 0);
	CHECK_EQ(got_datagram(udp, 5, QUIET_MS), 0);

	make_udp(d, port, ++id, 6);                         /* one ending past 65535 */
	send_frag(rawp, d, 0, 1480, 1);
	send_piece(rawp, d, 0, 65528, 16, 0);
	CHECK_EQ(got_datagram(udp, 6, QUIET_MS), 0);

	make_udp(d, port, ++id, 7);                         /* and all is still well */
	send_frag(rawp, d, 1480, 1480, 1);
	send_frag(rawp, d, 0, 1480, 1);
	send_frag(rawp, d, 2960, total - 2960, 0);
	CHECK_EQ(got_datagram(udp, 7, GUARD_MS), 1);
	close(rawp);
	close(udp);
}

static void test_udp_copy(void)
{
	int raw = CHECK_OK(socket(AF_INET, SOCK_RAW, IPPROTO_UDP));
	int a = CHECK_OK(socket(AF_INET, SOCK_DGRAM, 0));
	int b = CHECK_OK(socket(AF_INET, SOCK_DGRAM, 0));
	struct sockaddr_in to = loopback();
	socklen_t len = sizeof to;
	CHECK_OK(bind(b, (struct sockaddr *)&to, sizeof to));
	CHECK_OK(getsockname(b, (struct sockaddr *)&to, &len));
	CHECK_EQ(sendto(a, "hello", 5, 0, (struct sockaddr *)&to, sizeof to), 5);
	uint8_t in[256];
	CHECK(ut_readable(b, GUARD_MS));
	CHECK_EQ(recv(b, in, sizeof in, 0), 5);
	/* The raw socket's copy: IP header, UDP header, the bytes. */
	int found = 0;
	for (int i = 0; i < 8 && !found && ut_readable(raw, GUARD_MS); i++) {
		ssize_t n = recv(raw, in, sizeof in, 0);
		found = n == 20 + 8 + 5 && memcmp(in + 22, &to.sin_port, 2) == 0 &&
			memcmp(in + 28, "hello", 5) == 0;
	}
	CHECK(found);
	close(raw);
	close(a);
	close(b);
}

/* A datagram of proto from a raw IPPROTO_RAW socket, by hand. */
static void send_proto(int fd, int proto)
{
	uint8_t pkt[28] = { 0x45 };
	struct iphdr *ip = (struct iphdr *)pkt;
	ip->ttl = 64;
	ip->protocol = (uint8_t)proto;
	ip->daddr = htonl(INADDR_LOOPBACK);
	memcpy(pkt + 20, "payload!", 8);
	struct sockaddr_in to = loopback();
	CHECK_EQ(sendto(fd, pkt, sizeof pkt, 0, (struct sockaddr *)&to, sizeof to), (ssize_t)sizeof pkt);
}

/* The "unreachable" messages that come to icmp within ms, looking only at
 * those quoting a datagram of proto (other programs on the machine make
 * their own): how many, and the last one's code. */
static int unreach_quoting(int icmp, int proto, int ms, int *code)
{
	uint8_t in[256];
	int n = 0;
	while (ut_readable(icmp, ms)) {
		ssize_t got = recv(icmp, in, sizeof in, 0);
		if (got >= 20 + 8 + 20 && in[20] == ICMP_DEST_UNREACH && in[20 + 8 + 9] == proto) {
			*code = in[21];
			n++;
			ms = QUIET_MS;      /* the one sought came: a short look for more */
		}
	}
	return n;
}

static void test_unreachable(void)
{
	int icmp = CHECK_OK(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
	uint32_t f = ~(1u << ICMP_DEST_UNREACH);
	CHECK_OK(setsockopt(icmp, SOL_RAW, ICMP_FILTER, &f, sizeof f));
	int rawp = CHECK_OK(socket(AF_INET, SOCK_RAW, IPPROTO_RAW));
	int taker = CHECK_OK(socket(AF_INET, SOCK_RAW, PROTO_TAKEN));
	uint8_t in[256];
	/* A protocol a raw socket takes: delivered, and no error back. */
	send_proto(rawp, PROTO_TAKEN);
	CHECK(ut_readable(taker, GUARD_MS));
	CHECK_EQ(recv(taker, in, sizeof in, 0), 28);
	CHECK_EQ(in[9], PROTO_TAKEN);
	CHECK(memcmp(in + 20, "payload!", 8) == 0);
	int code = -1;
	CHECK_EQ(unreach_quoting(icmp, PROTO_TAKEN, QUIET_MS, &code), 0);
	/* One nobody takes: "protocol unreachable" quoting it. */
	send_proto(rawp, PROTO_UNTAKEN);
	CHECK_EQ(unreach_quoting(icmp, PROTO_UNTAKEN, GUARD_MS, &code), 1);
	CHECK_EQ(code, ICMP_PROT_UNREACH);
	close(icmp);
	close(rawp);
	close(taker);
}

static void test_errors(void)
{
	int fd = CHECK_OK(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
	uint8_t out[64], in[16];
	size_t n = make_echo(out, 6, 40);
	CHECK_ERR(send(fd, out, n, 0), EDESTADDRREQ);
	struct sockaddr_in to = loopback(), far = loopback();
	far.sin_addr.s_addr = inet_addr("192.0.2.1");   /* TEST-NET-1: never routed */
	CHECK_ERR(bind(fd, (struct sockaddr *)&far, sizeof far), EADDRNOTAVAIL);
	CHECK_ERR(bind(fd, (struct sockaddr *)&to, 4), EINVAL);
	CHECK_ERR(sendto(fd, out, n, 0, (struct sockaddr *)&to, 4), EINVAL);
	static uint8_t huge[65536];
	CHECK_ERR(sendto(fd, huge, sizeof huge, 0, (struct sockaddr *)&to, sizeof to), EMSGSIZE);
	CHECK_ERR(send(fd, out, n, MSG_OOB), EOPNOTSUPP);
	uint32_t f = ~(1u << ICMP_ECHOREPLY);
	CHECK_OK(setsockopt(fd, SOL_RAW, ICMP_FILTER, &f, sizeof f));
	/* Connected: send needs no address, getpeername names it (with the
	   port given, which means nothing to a raw socket). */
	to.sin_port = htons(99);
	CHECK_OK(connect(fd, (struct sockaddr *)&to, sizeof to));
	struct sockaddr_in peer;
	socklen_t len = sizeof peer;
	CHECK_OK(getpeername(fd, (struct sockaddr *)&peer, &len));
	CHECK_EQ(peer.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	CHECK_EQ(peer.sin_port, htons(99));
	CHECK_EQ(send(fd, out, n, 0), (ssize_t)n);
	/* A buffer too small: the datagram is cut, MSG_TRUNC says so. */
	CHECK(ut_readable(fd, GUARD_MS));
	struct iovec iov = { in, sizeof in };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	CHECK_EQ(recvmsg(fd, &m, 0), (ssize_t)sizeof in);
	CHECK(m.msg_flags & MSG_TRUNC);
	CHECK(!ut_readable(fd, QUIET_MS));     /* the rest is gone, not left queued */
	close(fd);
}

/* TCP keepalive, seen through a raw TCP socket: with SO_KEEPALIVE and a
 * one-second TCP_KEEPIDLE, an idle connection's end sends probes (no data,
 * sequence one below what the peer has acknowledged), which the peer
 * answers, so the connection stays up; without SO_KEEPALIVE none go. */
static long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* The segments with no data from from_port (to to_port) that raw sees in
 * the next ms milliseconds (the machine's other TCP traffic ignored). */
static int probes_seen(int raw, uint16_t from_port, uint16_t to_port, int ms)
{
	uint8_t in[256];
	int n = 0;
	for (long end = now_ms() + ms, left; (left = end - now_ms()) > 0;) {
		if (!ut_readable(raw, (int)left))
			break;
		ssize_t got = recv(raw, in, sizeof in, 0);
		if (got < 40)
			continue;
		size_t hl = (size_t)(in[0] & 0xf) * 4;
		uint16_t sport = (uint16_t)(in[hl] << 8 | in[hl + 1]);
		uint16_t dport = (uint16_t)(in[hl + 2] << 8 | in[hl + 3]);
		size_t thl = (size_t)(in[hl + 12] >> 4) * 4;
		if (sport == from_port && dport == to_port && (size_t)got == hl + thl)
			n++;
	}
	return n;
}

/* A TCP connection over loopback: its listener, its client and server
 * ends, and their ports (host order). */
struct tcp_conn { int l, c, s; uint16_t server, client; };

static void tcp_conn_open(struct tcp_conn *t)
{
	struct sockaddr_in a = loopback(), me;
	socklen_t len = sizeof a;
	t->l = CHECK_OK(socket(AF_INET, SOCK_STREAM, 0));
	CHECK_OK(bind(t->l, (struct sockaddr *)&a, sizeof a));
	CHECK_OK(listen(t->l, 1));
	CHECK_OK(getsockname(t->l, (struct sockaddr *)&a, &len));
	t->c = CHECK_OK(socket(AF_INET, SOCK_STREAM, 0));
	CHECK_OK(connect(t->c, (struct sockaddr *)&a, sizeof a));
	t->s = CHECK_OK(accept(t->l, NULL, NULL));
	len = sizeof me;
	CHECK_OK(getsockname(t->c, (struct sockaddr *)&me, &len));
	t->server = ntohs(a.sin_port);
	t->client = ntohs(me.sin_port);
}

static void tcp_conn_close(struct tcp_conn *t)
{
	close(t->c);
	close(t->s);
	close(t->l);
}

/* rounds of an 8-byte request and its 8-byte answer: 1 when all went. */
static int exchange(struct tcp_conn *t, int rounds)
{
	char buf[8];
	int ok = 1;
	for (int i = 0; i < rounds && ok; i++)
		ok = write(t->c, "request.", 8) == 8 && ut_readable(t->s, GUARD_MS) &&
		     read(t->s, buf, 8) == 8 && write(t->s, "answer..", 8) == 8 &&
		     ut_readable(t->c, GUARD_MS) && read(t->c, buf, 8) == 8;
	return ok;
}

/* The timestamps option of the TCP segment at t (its header, thl bytes):
 * 1 and its two values, or 0 when it has none. */
static int tcp_timestamps(const uint8_t *t, size_t thl, uint32_t *val, uint32_t *ecr)
{
	for (size_t i = 20; i < thl && t[i] != 0;) {
		if (t[i] == 1) {
			i++;
			continue;
		}
		if (i + 1 >= thl || t[i + 1] < 2)
			return 0;
		if (t[i] == 8 && t[i + 1] == 10 && i + 10 <= thl) {
			*val = (uint32_t)t[i + 2] << 24 | (uint32_t)t[i + 3] << 16 | t[i + 4] << 8 | t[i + 5];
			*ecr = (uint32_t)t[i + 6] << 24 | (uint32_t)t[i + 7] << 16 | t[i + 8] << 8 | t[i + 9];
			return 1;
		}
		i += t[i + 1];
	}
	return 0;
}

/* Timestamps (RFC 7323) over loopback: the SYN offers them (an echo of
 * 0), the SYN-ACK answers with the SYN's value echoed, and then every
 * segment carries one, each echoing a value the other side sent. */
static void test_timestamps(void)
{
	int raw = CHECK_OK(socket(AF_INET, SOCK_RAW, IPPROTO_TCP));
	struct tcp_conn t;
	tcp_conn_open(&t);
	CHECK(exchange(&t, 1));
	uint16_t server = t.server;
	uint32_t syn_val = 0, val = 0, ecr = 0, last_from[2] = { 0, 0 };
	int syn = 0, synack = 0, later = 0, later_ts = 0, echoes = 0;
	uint8_t in[2048];
	while (ut_readable(raw, QUIET_MS)) {
		ssize_t n = recv(raw, in, sizeof in, 0);
		if (n < 40)
			continue;
		size_t hl = (size_t)(in[0] & 0xf) * 4;
		const uint8_t *t = in + hl;
		uint16_t sp = (uint16_t)(t[0] << 8 | t[1]), dp = (uint16_t)(t[2] << 8 | t[3]);
		if (sp != server && dp != server)
			continue;
		int from_server = sp == server, has = tcp_timestamps(t, (size_t)(t[12] >> 4) * 4, &val, &ecr);
		if ((t[13] & 0x12) == 0x02) {           /* the SYN */
			syn = has && ecr == 0;
			syn_val = val;
		} else if ((t[13] & 0x12) == 0x12) {    /* the SYN-ACK */
			synack = has && ecr == syn_val;
		} else {
			later++;
			later_ts += has;
			echoes += has && ecr == last_from[!from_server];
		}
		if (has)
			last_from[from_server] = val;
	}
	CHECK(syn);
	CHECK(synack);
	CHECK(later >= 3);
	CHECK_EQ(later_ts, later);
	ut_check(echoes >= later - 1, __FILE__, __LINE__,
		 "segments echoing the other side's last timestamp: %d of %d", echoes, later);
	close(raw);
	tcp_conn_close(&t);
}

static void test_keepalive(void)
{
	struct tcp_conn t;
	tcp_conn_open(&t);
	int c = t.c, s = t.s;
	int raw = CHECK_OK(socket(AF_INET, SOCK_RAW, IPPROTO_TCP));
	/* Idle without SO_KEEPALIVE: nothing goes. */
	CHECK_EQ(probes_seen(raw, t.client, t.server, 1500), 0);
	int one = 1, v = 0;
	socklen_t len;
	CHECK_OK(setsockopt(c, IPPROTO_TCP, TCP_KEEPIDLE, &one, sizeof one));
	CHECK_OK(setsockopt(c, IPPROTO_TCP, TCP_KEEPINTVL, &one, sizeof one));
	CHECK_OK(setsockopt(c, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one));
	len = sizeof v;
	CHECK_OK(getsockopt(c, SOL_SOCKET, SO_KEEPALIVE, &v, &len));
	CHECK_EQ(v, 1);
	/* About two probes in 2.5 s (each answered, so each idle second
	 * starts over), and the connection still carries data. */
	int n = probes_seen(raw, t.client, t.server, 2500);
	CHECK(n >= 1 && n <= 4);
	CHECK_EQ(write(c, "k", 1), 1);
	char b;
	CHECK(ut_readable(s, 10000));
	CHECK_EQ(read(s, &b, 1), 1);
	close(raw);
	tcp_conn_close(&t);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_alarm(60);           /* the keepalive checks watch for seconds */
	if (!ut_is_root()) {
		ut_note("skipped: raw sockets need root");
		return ut_done();
	}
	test_socket_rules();
	ut_unprivileged("unprivileged_raw", unprivileged_raw, NULL);
	test_echo();
	test_filter();
	test_hdrincl();
	test_fragments();
	test_timestamps();
	test_udp_copy();
	test_unreachable();
	test_errors();
	test_keepalive();
	return ut_done();
}
