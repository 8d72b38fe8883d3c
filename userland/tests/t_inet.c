/*
 * t_inet: AF_INET sockets over loopback, with Linux semantics.
 *
 * socket()'s protocol and type rules; bind (short and foreign addresses,
 * ports chosen and in use, SO_REUSEADDR, a second bind); UDP (sendto and
 * recvfrom with the sender's address, connected sockets, MSG_PEEK,
 * MSG_TRUNC, EMSGSIZE, EDESTADDRREQ, ECONNREFUSED from a closed port,
 * non-blocking receive, FIONREAD, poll); UDP-Lite's coverage; the
 * interface list through AF_NETLINK (if_nameindex, getifaddrs); TCP (listen, connect, accept and
 * both names, a megabyte each way checked byte for byte, MSG_PEEK and
 * MSG_WAITALL, a reader that leaves the window opened by less than a
 * segment, shutdown of one direction, end of file, ECONNREFUSED,
 * a non-blocking connect with EINPROGRESS, poll and SO_ERROR, EISCONN,
 * connect() again after a refusal and after success,
 * ENOTCONN, EPIPE with and without SIGPIPE, a reset by close with unread
 * data, SO_LINGER (a close that waits, and one that resets), accept's EAGAIN and EINVAL, the listener's POLLIN, TCP_NODELAY,
 * epoll) between two processes.
 */
#include "ut.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define GUARD_MS 10000      /* a poll timeout that only stops a hang */
#define BIG (1 << 20)

static struct sockaddr_in loopback(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static uint16_t port_of(int fd)
{
	struct sockaddr_in a;
	socklen_t len = sizeof a;
	if (getsockname(fd, (struct sockaddr *)&a, &len) != 0)
		return 0;
	return ntohs(a.sin_port);
}

/* A socket of type bound to 127.0.0.1 and a port the kernel picks. */
static int bound(int type)
{
	int fd = socket(AF_INET, type, 0);
	struct sockaddr_in a = loopback(0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0)
		return -1;
	return fd;
}

static int listener(void)
{
	int fd = bound(SOCK_STREAM);
	if (fd < 0 || listen(fd, 8) != 0)
		return -1;
	return fd;
}

static int connect_to(uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = loopback(port);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
		return -1;
	return fd;
}

static int readable(int fd) { struct pollfd p = { fd, POLLIN, 0 }; return poll(&p, 1, GUARD_MS) == 1; }

static uint8_t pattern(size_t i) { return (uint8_t)(i * 7 + (i >> 9)); }

/* ---- socket() and bind() ---- */

static void test_socket_rules(void)
{
	int fd = CHECK_OK(socket(AF_INET, SOCK_STREAM, 0));
	int v = 0;
	socklen_t len = sizeof v;
	CHECK_OK(getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &len));
	CHECK_EQ(v, IPPROTO_TCP);
	CHECK_OK(getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len));
	CHECK_EQ(v, AF_INET);
	close(fd);
	fd = CHECK_OK(socket(AF_INET, SOCK_DGRAM, IPPROTO_UDP));
	CHECK_OK(getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &len));
	CHECK_EQ(v, IPPROTO_UDP);
	close(fd);
	CHECK_ERR(socket(AF_INET, SOCK_STREAM, IPPROTO_UDP), EPROTONOSUPPORT);
	CHECK_ERR(socket(AF_INET, SOCK_DGRAM, IPPROTO_TCP), EPROTONOSUPPORT);
	CHECK_ERR(socket(AF_INET, SOCK_SEQPACKET, 0), ESOCKTNOSUPPORT);
	CHECK_ERR(socket(AF_INET, SOCK_STREAM, -1), EINVAL);
	int sv[2];
	CHECK_ERR(socketpair(AF_INET, SOCK_STREAM, 0, sv), EOPNOTSUPP);
}

static void test_bind_rules(void)
{
	int fd = CHECK_OK(socket(AF_INET, SOCK_DGRAM, 0));
	struct sockaddr_in a = loopback(0);
	CHECK_ERR(bind(fd, (struct sockaddr *)&a, sizeof a - 1), EINVAL);
	a.sin_family = AF_UNIX;
	CHECK_ERR(bind(fd, (struct sockaddr *)&a, sizeof a), EAFNOSUPPORT);
	a = loopback(0);
	a.sin_addr.s_addr = inet_addr("10.254.253.252");
	CHECK_ERR(bind(fd, (struct sockaddr *)&a, sizeof a), EADDRNOTAVAIL);
	a = loopback(0);
	CHECK_OK(bind(fd, (struct sockaddr *)&a, sizeof a));
	uint16_t port = port_of(fd);
	CHECK(port >= 1024);
	CHECK_ERR(bind(fd, (struct sockaddr *)&a, sizeof a), EINVAL);
	int other = CHECK_OK(socket(AF_INET, SOCK_DGRAM, 0));
	a.sin_port = htons(port);
	CHECK_ERR(bind(other, (struct sockaddr *)&a, sizeof a), EADDRINUSE);
	close(other);
	close(fd);
	/* Two sockets that both ask for SO_REUSEADDR share a UDP port. */
	int one = 1, x = CHECK_OK(socket(AF_INET, SOCK_DGRAM, 0)), y = CHECK_OK(socket(AF_INET, SOCK_DGRAM, 0));
	CHECK_OK(setsockopt(x, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one));
	CHECK_OK(setsockopt(y, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one));
	a = loopback(0);
	CHECK_OK(bind(x, (struct sockaddr *)&a, sizeof a));
	a.sin_port = htons(port_of(x));
	CHECK_OK(bind(y, (struct sockaddr *)&a, sizeof a));
	close(x);
	close(y);
}

/* ---- UDP ---- */

static void test_udp(void)
{
	int s = bound(SOCK_DGRAM), c = bound(SOCK_DGRAM);
	CHECK(s >= 0 && c >= 0);
	struct sockaddr_in to = loopback(port_of(s)), from;
	socklen_t flen = sizeof from;
	CHECK_EQ(sendto(c, "hello", 5, 0, (struct sockaddr *)&to, sizeof to), 5);
	CHECK_EQ(sendto(c, "world!", 6, 0, (struct sockaddr *)&to, sizeof to), 6);
	CHECK(readable(s));
	int n = 0;
	CHECK_OK(ioctl(s, FIONREAD, &n));
	CHECK_EQ(n, 5);
	char buf[64] = { 0 };
	CHECK_EQ(recv(s, buf, sizeof buf, MSG_PEEK), 5);
	CHECK_EQ(recvfrom(s, buf, 3, MSG_TRUNC, (struct sockaddr *)&from, &flen), 5);
	CHECK(memcmp(buf, "hel", 3) == 0);
	CHECK_EQ(flen, sizeof from);
	CHECK_EQ(ntohs(from.sin_port), port_of(c));
	CHECK_EQ(ntohl(from.sin_addr.s_addr), INADDR_LOOPBACK);
	CHECK_EQ(recv(s, buf, sizeof buf, 0), 6);
	CHECK(memcmp(buf, "world!", 6) == 0);
	CHECK_ERR(recv(s, buf, sizeof buf, MSG_DONTWAIT), EAGAIN);
	CHECK_ERR(send(c, "x", 1, 0), EDESTADDRREQ);
	static char huge[65508];
	CHECK_ERR(sendto(c, huge, sizeof huge, 0, (struct sockaddr *)&to, sizeof to), EMSGSIZE);
	CHECK_EQ(sendto(c, huge, sizeof huge - 1, 0, (struct sockaddr *)&to, sizeof to), 65507);
	CHECK(readable(s));
	CHECK_EQ(recv(s, huge, sizeof huge, 0), 65507);
	/* Connected: send needs no address, and the peer's close shows as
	 * ECONNREFUSED (ICMP port unreachable) on the next call. */
	CHECK_OK(connect(c, (struct sockaddr *)&to, sizeof to));
	struct sockaddr_in peer;
	socklen_t plen = sizeof peer;
	CHECK_OK(getpeername(c, (struct sockaddr *)&peer, &plen));
	CHECK_EQ(ntohs(peer.sin_port), port_of(s));
	CHECK_EQ(send(c, "abc", 3, 0), 3);
	CHECK(readable(s));
	CHECK_EQ(recv(s, buf, sizeof buf, 0), 3);
	close(s);
	CHECK_EQ(send(c, "abc", 3, 0), 3);
	CHECK(readable(c));
	CHECK_ERR(recv(c, buf, sizeof buf, 0), ECONNREFUSED);
	close(c);
}

/* One datagram from the socket from to port, and whether sock got it. */
static int delivered(int from, uint16_t port, int sock, const char *word)
{
	struct sockaddr_in to = loopback(port);
	char buf[32] = { 0 };
	if (sendto(from, word, strlen(word), 0, (struct sockaddr *)&to, sizeof to) < 0)
		return -1;
	struct pollfd p = { sock, POLLIN, 0 };
	if (poll(&p, 1, 300) != 1)
		return 0;
	ssize_t n = recv(sock, buf, sizeof buf - 1, MSG_DONTWAIT);
	return n == (ssize_t)strlen(word) && strcmp(buf, word) == 0;
}

/* A connected UDP socket hears only its peer; connect to AF_UNSPEC makes
 * it hear anyone again, and, as Linux's, lets go of the port unless bind
 * named it (here the first bind asked for port 0); a second connect
 * changes the peer.  Two sockets on one port (SO_REUSEADDR): the one
 * connected to the sender gets its datagram, the other the rest. */
static void test_udp_demux(void)
{
	int s = bound(SOCK_DGRAM), a = bound(SOCK_DGRAM), b = bound(SOCK_DGRAM);
	CHECK(s >= 0 && a >= 0 && b >= 0);
	uint16_t port = port_of(s);
	struct sockaddr_in to_a = loopback(port_of(a)), to_b = loopback(port_of(b));
	CHECK_OK(connect(s, (struct sockaddr *)&to_a, sizeof to_a));
	CHECK_EQ(delivered(b, port, s, "from-b"), 0);
	CHECK_EQ(delivered(a, port, s, "from-a"), 1);
	struct sockaddr none = { .sa_family = AF_UNSPEC };
	CHECK_OK(connect(s, &none, sizeof none));
	struct sockaddr_in peer;
	socklen_t plen = sizeof peer;
	CHECK_ERR(getpeername(s, (struct sockaddr *)&peer, &plen), ENOTCONN);
	CHECK_EQ(port_of(s), 0);                /* the kernel's port, given back */
	struct sockaddr_in at = loopback(port);
	CHECK_OK(bind(s, (struct sockaddr *)&at, sizeof at));
	CHECK_EQ(delivered(b, port, s, "b-again"), 1);
	CHECK_OK(connect(s, (struct sockaddr *)&to_b, sizeof to_b));
	CHECK_EQ(delivered(a, port, s, "a-again"), 0);
	CHECK_EQ(delivered(b, port, s, "b-third"), 1);
	CHECK_OK(connect(s, &none, sizeof none));
	CHECK_EQ(port_of(s), port);             /* named by bind: kept */
	CHECK_EQ(delivered(a, port, s, "a-third"), 1);
	close(s);

	int one = 1, u = socket(AF_INET, SOCK_DGRAM, 0), v = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(u >= 0 && v >= 0);
	CHECK_OK(setsockopt(u, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one));
	CHECK_OK(setsockopt(v, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one));
	at = loopback(0);
	CHECK_OK(bind(u, (struct sockaddr *)&at, sizeof at));
	at.sin_port = htons(port_of(u));
	CHECK_OK(bind(v, (struct sockaddr *)&at, sizeof at));
	CHECK_OK(connect(v, (struct sockaddr *)&to_a, sizeof to_a));
	CHECK_EQ(delivered(a, port_of(u), v, "to-v"), 1);
	CHECK_EQ(delivered(b, port_of(u), u, "to-u"), 1);
	close(u);
	close(v);
	close(a);
	close(b);
}

/* Many connections to one listening port: each accepted socket is the
 * one whose peer is that client (getpeername) and gets that client's
 * bytes, however the connections hash. */
#define MANY 40
static void test_tcp_many(void)
{
	int l = listener();
	CHECK(l >= 0);
	CHECK_OK(listen(l, MANY));
	int c[MANY], ok = 0;
	for (int i = 0; i < MANY; i++) {
		c[i] = connect_to(port_of(l));
		CHECK(c[i] >= 0);
		unsigned char tag = (unsigned char)i;
		CHECK_EQ(write(c[i], &tag, 1), 1);
	}
	for (int i = 0; i < MANY; i++) {
		int a = accept(l, NULL, NULL);
		struct sockaddr_in peer;
		socklen_t plen = sizeof peer;
		unsigned char tag = 0xff;
		if (a < 0 || getpeername(a, (struct sockaddr *)&peer, &plen) != 0 ||
		    !readable(a) || read(a, &tag, 1) != 1) {
			CHECK(!"accepted, named and read");
			break;
		}
		ok += tag < MANY && port_of(c[tag]) == ntohs(peer.sin_port);
		close(a);
	}
	CHECK_EQ(ok, MANY);
	for (int i = 0; i < MANY; i++)
		close(c[i]);
	close(l);
}

/* UDP-Lite: its own protocol, a checksum coverage set and read back. */
static void test_udplite(void)
{
	int s = CHECK_OK(socket(AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE));
	int v = 20, got = 0;
	socklen_t len = sizeof got;
	CHECK_OK(setsockopt(s, IPPROTO_UDPLITE, 10 /* UDPLITE_SEND_CSCOV */, &v, sizeof v));
	CHECK_OK(getsockopt(s, IPPROTO_UDPLITE, 10, &got, &len));
	CHECK_EQ(got, 20);
	CHECK_OK(getsockopt(s, SOL_SOCKET, SO_PROTOCOL, &got, &len));
	CHECK_EQ(got, IPPROTO_UDPLITE);
	struct sockaddr_in a = loopback(0);
	CHECK_OK(bind(s, (struct sockaddr *)&a, sizeof a));
	a.sin_port = htons(port_of(s));
	char msg[40], buf[64];
	memset(msg, 'u', sizeof msg);
	CHECK_EQ(sendto(s, msg, sizeof msg, 0, (struct sockaddr *)&a, sizeof a), 40);
	CHECK(readable(s));
	CHECK_EQ(recv(s, buf, sizeof buf, 0), 40);
	CHECK(memcmp(buf, msg, 40) == 0);
	close(s);
}

/* The interface list as the C library reads it (AF_NETLINK's dumps):
 * if_nameindex, if_nametoindex and getifaddrs find lo and 127.0.0.1. */
static void test_interfaces(void)
{
	struct if_nameindex *ni = if_nameindex();
	CHECK(ni != NULL);
	unsigned lo = 0;
	for (struct if_nameindex *i = ni; i && i->if_index; i++)
		if (strcmp(i->if_name, "lo") == 0)
			lo = i->if_index;
	if (ni)
		if_freenameindex(ni);
	CHECK(lo != 0);
	CHECK_EQ(if_nametoindex("lo"), lo);
	char name[IF_NAMESIZE];
	CHECK(if_indextoname(lo, name) && strcmp(name, "lo") == 0);
	struct ifaddrs *ifa = NULL;
	CHECK_OK(getifaddrs(&ifa));
	int found = 0;
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == htonl(INADDR_LOOPBACK))
			found = strcmp(i->ifa_name, "lo") == 0;
	CHECK(found);
	freeifaddrs(ifa);
	CHECK_ERR(socket(AF_NETLINK, SOCK_RAW, 12345), EPROTONOSUPPORT);
}

/* ---- TCP ---- */

struct pair { int l, c, a; };

static int tcp_pair(struct pair *p)
{
	p->l = listener();
	p->c = p->l >= 0 ? connect_to(port_of(p->l)) : -1;
	p->a = p->c >= 0 ? accept(p->l, NULL, NULL) : -1;
	return p->a >= 0 ? 0 : -1;
}

static void pair_close(struct pair *p) { close(p->l); close(p->c); close(p->a); }

static void test_tcp_names(void)
{
	struct pair p;
	CHECK_OK(tcp_pair(&p));
	struct sockaddr_in a, b;
	socklen_t la = sizeof a, lb = sizeof b;
	CHECK_OK(getsockname(p.c, (struct sockaddr *)&a, &la));
	CHECK_OK(getpeername(p.a, (struct sockaddr *)&b, &lb));
	CHECK_EQ(a.sin_port, b.sin_port);
	CHECK_EQ(a.sin_addr.s_addr, b.sin_addr.s_addr);
	CHECK_OK(getpeername(p.c, (struct sockaddr *)&a, &la));
	CHECK_EQ(ntohs(a.sin_port), port_of(p.l));
	CHECK_EQ(port_of(p.a), port_of(p.l));
	CHECK_ERR(getpeername(p.l, (struct sockaddr *)&a, &la), ENOTCONN);
	struct sockaddr_in again = loopback(port_of(p.l));
	CHECK_ERR(connect(p.c, (struct sockaddr *)&again, sizeof again), EISCONN);
	CHECK_ERR(connect(p.l, (struct sockaddr *)&again, sizeof again), EISCONN);
	int v = 0;
	socklen_t len = sizeof v;
	CHECK_OK(getsockopt(p.c, IPPROTO_TCP, TCP_NODELAY, &v, &len));
	CHECK_EQ(v, 0);
	v = 1;
	CHECK_OK(setsockopt(p.c, IPPROTO_TCP, TCP_NODELAY, &v, sizeof v));
	CHECK_OK(getsockopt(p.c, IPPROTO_TCP, TCP_NODELAY, &v, &len));
	CHECK_EQ(v, 1);
	CHECK_OK(getsockopt(p.l, SOL_SOCKET, SO_ACCEPTCONN, &v, &len));
	CHECK_EQ(v, 1);
	pair_close(&p);
}

/* A megabyte each way between two processes, every byte checked. */
static void test_tcp_bulk(void)
{
	struct pair p;
	CHECK_OK(tcp_pair(&p));
	pid_t pid = fork();
	if (pid == 0) {
		close(p.a);
		close(p.l);
		static uint8_t out[BIG];
		for (size_t i = 0; i < BIG; i++)
			out[i] = pattern(i);
		size_t done = 0;
		while (done < BIG) {
			ssize_t n = write(p.c, out + done, BIG - done);
			if (n <= 0)
				_exit(2);
			done += (size_t)n;
		}
		shutdown(p.c, SHUT_WR);
		char b[8];
		size_t got = 0;
		ssize_t r;
		while ((r = read(p.c, b + got, sizeof b - got)) > 0)
			got += (size_t)r;
		/* what the other side sent after our FIN, then its end of file */
		_exit(r == 0 && got == 5 && memcmp(b, "still", 5) == 0 ? 0 : 3);
	}
	close(p.c);
	static uint8_t in[BIG];
	size_t got = 0;
	ssize_t n;
	while (got < BIG && (n = read(p.a, in + got, BIG - got)) > 0)
		got += (size_t)n;
	CHECK_EQ(got, BIG);
	size_t bad = 0;
	for (size_t i = 0; i < got; i++)
		bad += in[i] != pattern(i);
	CHECK_EQ(bad, 0);
	char b;
	CHECK_EQ(read(p.a, &b, 1), 0);
	CHECK_EQ(send(p.a, "still", 5, 0), 5);  /* the other direction stays open */
	close(p.a);
	CHECK_EQ(ut_wait(pid), 0);
	close(p.l);
}

/* A reader that takes 40000 bytes of a full buffer, then the rest of it,
 * then waits: the window it opened first was cut short of a segment
 * (loopback's MSS is as large as the buffer) and the rest opened it by
 * less than half, so it said nothing more; the writer must still send
 * (sender-side silly window avoidance, RFC 1122 4.2.3.4), or both wait
 * for ever. */
static void test_tcp_partial_reads(void)
{
	enum { TOTAL = 3 * 65536 };
	struct pair p;
	int small = 4096;                       /* the least buffer: Tempest's 64 KiB */
	p.l = CHECK_OK(listener());
	CHECK_OK(setsockopt(p.l, SOL_SOCKET, SO_RCVBUF, &small, sizeof small));
	p.c = CHECK_OK(connect_to(port_of(p.l)));
	p.a = CHECK_OK(accept(p.l, NULL, NULL));
	pid_t pid = fork();
	if (pid == 0) {
		static uint8_t out[TOTAL];
		for (size_t i = 0; i < TOTAL; i++)
			out[i] = pattern(i);
		_exit(write(p.c, out, TOTAL) == TOTAL ? 0 : 2);
	}
	close(p.c);
	static uint8_t in[TOTAL];
	size_t got = 0;
	int avail = 0, before = -1;
	while (avail != before) {               /* until the buffer stops filling */
		before = avail;
		usleep(200000);
		ioctl(p.a, FIONREAD, &avail);
	}
	while (got < 40000 && readable(p.a)) {
		ssize_t n = read(p.a, in + got, 40000 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	usleep(200000);
	ssize_t n;
	while ((n = recv(p.a, in + got, TOTAL - got, MSG_DONTWAIT)) > 0)
		got += (size_t)n;
	while (got < TOTAL && readable(p.a) && (n = read(p.a, in + got, TOTAL - got)) > 0)
		got += (size_t)n;
	CHECK_EQ(got, TOTAL);
	size_t bad = 0;
	for (size_t i = 0; i < got; i++)
		bad += in[i] != pattern(i);
	CHECK_EQ(bad, 0);
	CHECK_EQ(ut_wait(pid), 0);
	pair_close(&p);
}

static void test_tcp_peek_waitall(void)
{
	struct pair p;
	CHECK_OK(tcp_pair(&p));
	CHECK_EQ(send(p.c, "abcdef", 6, 0), 6);
	char buf[16] = { 0 };
	CHECK(readable(p.a));
	CHECK_EQ(recv(p.a, buf, 3, MSG_PEEK), 3);
	CHECK(memcmp(buf, "abc", 3) == 0);
	int n = 0;
	CHECK_OK(ioctl(p.a, FIONREAD, &n));
	CHECK_EQ(n, 6);
	pid_t pid = fork();
	if (pid == 0) {
		usleep(100000);
		_exit(send(p.c, "ghij", 4, 0) == 4 ? 0 : 1);
	}
	CHECK_EQ(recv(p.a, buf, 10, MSG_WAITALL), 10);
	CHECK(memcmp(buf, "abcdefghij", 10) == 0);
	CHECK_EQ(ut_wait(pid), 0);
	CHECK_ERR(recv(p.a, buf, 1, MSG_DONTWAIT), EAGAIN);
	pair_close(&p);
}

static void test_tcp_errors(void)
{
	/* A port nobody listens on refuses. */
	int l = listener();
	uint16_t port = port_of(l);
	close(l);
	int fd = CHECK_OK(socket(AF_INET, SOCK_STREAM, 0));
	struct sockaddr_in a = loopback(port);
	CHECK_ERR(connect(fd, (struct sockaddr *)&a, sizeof a), ECONNREFUSED);
	char b[8];
	CHECK_ERR(recv(fd, b, 1, MSG_DONTWAIT), ENOTCONN);
	close(fd);
	fd = CHECK_OK(socket(AF_INET, SOCK_STREAM, 0));
	CHECK_ERR(recv(fd, b, 1, 0), ENOTCONN);
	CHECK_ERR(send(fd, "x", 1, MSG_NOSIGNAL), EPIPE);
	CHECK_ERR(accept(fd, NULL, NULL), EINVAL);
	CHECK_ERR(shutdown(fd, SHUT_RDWR), ENOTCONN);
	CHECK_ERR(shutdown(fd, 7), EINVAL);
	close(fd);
	/* Non-blocking accept and connect. */
	l = listener();
	CHECK_OK(fcntl(l, F_SETFL, O_NONBLOCK));
	CHECK_ERR(accept(l, NULL, NULL), EAGAIN);
	fd = CHECK_OK(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
	a = loopback(port_of(l));
	int r = connect(fd, (struct sockaddr *)&a, sizeof a);
	CHECK(r == 0 || errno == EINPROGRESS);
	struct pollfd pf = { fd, POLLOUT, 0 };
	CHECK_EQ(poll(&pf, 1, GUARD_MS), 1);
	CHECK(pf.revents & POLLOUT);
	int err = -1;
	socklen_t len = sizeof err;
	CHECK_OK(getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len));
	CHECK_EQ(err, 0);
	struct pollfd lp = { l, POLLIN, 0 };
	CHECK_EQ(poll(&lp, 1, GUARD_MS), 1);
	int s = CHECK_OK(accept4(l, NULL, NULL, SOCK_CLOEXEC));
	CHECK_EQ(fcntl(s, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	/* Unread data at close resets the connection. */
	CHECK_EQ(send(fd, "lost", 4, 0), 4);
	CHECK(readable(s));
	close(s);
	pf.events = POLLIN;
	CHECK_EQ(poll(&pf, 1, GUARD_MS), 1);
	CHECK_ERR(recv(fd, b, sizeof b, 0), ECONNRESET);
	CHECK_EQ(recv(fd, b, sizeof b, 0), 0);
	close(fd);
	close(l);
}

static volatile sig_atomic_t got_sigpipe;
static void on_sigpipe(int sig) { got_sigpipe = 1; }

/* Writing to a connection whose other end is closed: the first write is
 * answered by a reset, after which writes fail with EPIPE and SIGPIPE. */
/* connect() again after a non-blocking one ended, as Linux answers it:
 * a refusal not yet read is the next connect's error (ECONNREFUSED), or
 * ECONNABORTED once SO_ERROR took it; the connect after that starts
 * afresh (a new port) and succeeds; the first connect() after success
 * returns 0, the next EISCONN. */
static void test_tcp_reconnect(void)
{
	int l = CHECK_OK(socket(AF_INET, SOCK_STREAM, 0));
	struct sockaddr_in a = loopback(0);
	CHECK_OK(bind(l, (struct sockaddr *)&a, sizeof a));
	a = loopback(port_of(l));               /* bound, not yet listening: refused */
	int fd = CHECK_OK(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
	int kept = CHECK_OK(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
	CHECK_ERR(connect(fd, (struct sockaddr *)&a, sizeof a), EINPROGRESS);
	CHECK_ERR(connect(kept, (struct sockaddr *)&a, sizeof a), EINPROGRESS);
	struct pollfd pf[2] = { { fd, POLLOUT, 0 }, { kept, POLLOUT, 0 } };
	CHECK_EQ(poll(pf, 1, GUARD_MS), 1);
	CHECK_EQ(poll(pf + 1, 1, GUARD_MS), 1);
	int err = -1;
	socklen_t len = sizeof err;
	CHECK_OK(getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len));
	CHECK_EQ(err, ECONNREFUSED);
	CHECK_OK(listen(l, 4));
	CHECK_ERR(connect(kept, (struct sockaddr *)&a, sizeof a), ECONNREFUSED);
	CHECK_ERR(connect(fd, (struct sockaddr *)&a, sizeof a), ECONNABORTED);
	CHECK_ERR(connect(fd, (struct sockaddr *)&a, sizeof a), EINPROGRESS);
	CHECK_EQ(poll(pf, 1, GUARD_MS), 1);
	CHECK(pf[0].revents & POLLOUT);
	CHECK_OK(getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len));
	CHECK_EQ(err, 0);
	CHECK_OK(connect(fd, (struct sockaddr *)&a, sizeof a));
	CHECK_ERR(connect(fd, (struct sockaddr *)&a, sizeof a), EISCONN);
	int s = CHECK_OK(accept(l, NULL, NULL));
	CHECK_EQ(send(fd, "again", 5, 0), 5);
	char b[8];
	CHECK(readable(s));
	CHECK_EQ(recv(s, b, sizeof b, 0), 5);
	close(s);
	close(fd);
	close(kept);
	close(l);
}

static void test_tcp_epipe(void)
{
	struct pair p;
	CHECK_OK(tcp_pair(&p));
	close(p.a);
	char b;
	CHECK(readable(p.c));
	CHECK_EQ(read(p.c, &b, 1), 0);
	CHECK_EQ(send(p.c, "x", 1, 0), 1);
	/* The reset comes back when the network gets to it: wait up to 2 s. */
	struct pollfd pf = { p.c, POLLIN, 0 };
	for (int i = 0; i < 200 && !(pf.revents & (POLLERR | POLLHUP)); i++) {
		pf.revents = 0;
		if (poll(&pf, 1, 10) == 1 && !(pf.revents & (POLLERR | POLLHUP)))
			usleep(10000);
	}
	CHECK(pf.revents & (POLLERR | POLLHUP));
	signal(SIGPIPE, on_sigpipe);
	CHECK_ERR(send(p.c, "y", 1, 0), EPIPE);
	CHECK_EQ(got_sigpipe, 1);
	got_sigpipe = 0;
	CHECK_ERR(send(p.c, "y", 1, MSG_NOSIGNAL), EPIPE);
	CHECK_EQ(got_sigpipe, 0);
	signal(SIGPIPE, SIG_DFL);
	close(p.c);
	close(p.l);
}

static void test_tcp_epoll(void)
{
	struct pair p;
	CHECK_OK(tcp_pair(&p));
	int ep = CHECK_OK(epoll_create1(0));
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.fd = p.a };
	CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, p.a, &ev));
	CHECK_EQ(epoll_wait(ep, &ev, 1, 0), 0);
	CHECK_EQ(send(p.c, "ping", 4, 0), 4);
	CHECK_EQ(epoll_wait(ep, &ev, 1, GUARD_MS), 1);
	CHECK(ev.events & EPOLLIN);
	shutdown(p.c, SHUT_WR);
	CHECK_EQ(epoll_wait(ep, &ev, 1, GUARD_MS), 1);
	CHECK(ev.events & EPOLLRDHUP || ev.events & EPOLLIN);
	char b[8];
	CHECK_EQ(read(p.a, b, sizeof b), 4);
	CHECK_EQ(read(p.a, b, sizeof b), 0);
	close(ep);
	pair_close(&p);
}

/* SO_LINGER: kept and read back; 0 resets the connection at close (the
 * peer reads ECONNRESET, and no TIME_WAIT keeps the port: it binds
 * again at once); some seconds make close wait for the data to be
 * taken, which the peer then reads whole. */
static void test_tcp_linger(void)
{
	struct pair p;
	CHECK_OK(tcp_pair(&p));
	struct linger l = { 0, 0 };
	socklen_t len = sizeof l;
	CHECK_OK(getsockopt(p.c, SOL_SOCKET, SO_LINGER, &l, &len));
	CHECK_EQ(l.l_onoff, 0);
	CHECK_EQ(len, sizeof l);
	l.l_onoff = 1;
	l.l_linger = 5;
	CHECK_OK(setsockopt(p.c, SOL_SOCKET, SO_LINGER, &l, sizeof l));
	memset(&l, 0, sizeof l);
	CHECK_OK(getsockopt(p.c, SOL_SOCKET, SO_LINGER, &l, &len));
	CHECK(l.l_onoff != 0);
	CHECK_EQ(l.l_linger, 5);
	CHECK_ERR(setsockopt(p.c, SOL_SOCKET, SO_LINGER, &l, 4), EINVAL);
	/* Some seconds: close returns once the data is taken; all arrives. */
	static uint8_t out[65536], in[65536];
	for (size_t i = 0; i < sizeof out; i++)
		out[i] = pattern(i);
	CHECK_EQ(write(p.c, out, sizeof out), (ssize_t)sizeof out);
	CHECK_OK(close(p.c));
	size_t got = 0;
	ssize_t n;
	while (got < sizeof in && readable(p.a) && (n = read(p.a, in + got, sizeof in - got)) > 0)
		got += (size_t)n;
	CHECK_EQ(got, sizeof in);
	CHECK(memcmp(in, out, sizeof in) == 0);
	CHECK(readable(p.a));
	CHECK_EQ(read(p.a, in, 1), 0);
	close(p.a);
	close(p.l);

	/* 0: a reset, and the port free at once. */
	CHECK_OK(tcp_pair(&p));
	uint16_t port = port_of(p.c);
	l.l_onoff = 1;
	l.l_linger = 0;
	CHECK_OK(setsockopt(p.c, SOL_SOCKET, SO_LINGER, &l, sizeof l));
	CHECK_OK(close(p.c));
	CHECK(readable(p.a));
	CHECK_ERR(read(p.a, in, 1), ECONNRESET);
	int again = CHECK_OK(socket(AF_INET, SOCK_STREAM, 0));
	struct sockaddr_in a = loopback(port);
	CHECK_OK(bind(again, (struct sockaddr *)&a, sizeof a));
	close(again);
	close(p.a);
	close(p.l);

	/* Without it the closing end keeps its port in TIME_WAIT. */
	CHECK_OK(tcp_pair(&p));
	port = port_of(p.c);
	CHECK_OK(close(p.c));
	CHECK(readable(p.a));
	CHECK_EQ(read(p.a, in, 1), 0);
	CHECK_OK(close(p.a));
	again = CHECK_OK(socket(AF_INET, SOCK_STREAM, 0));
	a = loopback(port);
	CHECK_ERR(bind(again, (struct sockaddr *)&a, sizeof a), EADDRINUSE);
	close(again);
	close(p.l);
}

/* An accepted connection starts with its listener's socket options, as
 * Linux's clone of the listening sock gives it: SO_LINGER, the timeouts,
 * SO_KEEPALIVE and TCP's keepalive times, TCP_NODELAY. */
static void test_tcp_accept_inherits(void)
{
	int l = CHECK_OK(listener());
	struct linger lg = { 1, 7 };
	struct timeval tv = { 3, 0 };
	int on = 1, idle = 123;
	CHECK_OK(setsockopt(l, SOL_SOCKET, SO_LINGER, &lg, sizeof lg));
	CHECK_OK(setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv));
	CHECK_OK(setsockopt(l, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv));
	CHECK_OK(setsockopt(l, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on));
	CHECK_OK(setsockopt(l, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle));
	CHECK_OK(setsockopt(l, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on));
	int c = CHECK_OK(connect_to(port_of(l)));
	int a = CHECK_OK(accept(l, NULL, NULL));
	struct linger got = { 0, 0 };
	socklen_t len = sizeof got;
	CHECK_OK(getsockopt(a, SOL_SOCKET, SO_LINGER, &got, &len));
	CHECK(got.l_onoff != 0);
	CHECK_EQ(got.l_linger, 7);
	struct timeval t = { 0, 0 };
	len = sizeof t;
	CHECK_OK(getsockopt(a, SOL_SOCKET, SO_RCVTIMEO, &t, &len));
	CHECK_EQ(t.tv_sec, 3);
	len = sizeof t;
	t.tv_sec = 0;
	CHECK_OK(getsockopt(a, SOL_SOCKET, SO_SNDTIMEO, &t, &len));
	CHECK_EQ(t.tv_sec, 3);
	int v = 0;
	len = sizeof v;
	CHECK_OK(getsockopt(a, SOL_SOCKET, SO_KEEPALIVE, &v, &len));
	CHECK(v != 0);
	v = 0;
	CHECK_OK(getsockopt(a, IPPROTO_TCP, TCP_KEEPIDLE, &v, &len));
	CHECK_EQ(v, 123);
	v = 0;
	CHECK_OK(getsockopt(a, IPPROTO_TCP, TCP_NODELAY, &v, &len));
	CHECK(v != 0);
	/* The connecting side's are its own: none of these. */
	len = sizeof got;
	CHECK_OK(getsockopt(c, SOL_SOCKET, SO_LINGER, &got, &len));
	CHECK_EQ(got.l_onoff, 0);
	close(a);
	close(c);
	close(l);
}

/* Linux's struct tcp_info as of 6.1 (include/uapi/linux/tcp.h), 232
 * bytes: glibc's <netinet/tcp.h> stops at tcpi_total_retrans. */
struct tcpi {
	uint8_t state, ca_state, retransmits, probes, backoff, options, wscale, app_limited;
	uint32_t rto, ato, snd_mss, rcv_mss, unacked, sacked, lost, retrans, fackets;
	uint32_t last_data_sent, last_ack_sent, last_data_recv, last_ack_recv;
	uint32_t pmtu, rcv_ssthresh, rtt, rttvar, snd_ssthresh, snd_cwnd, advmss, reordering;
	uint32_t rcv_rtt, rcv_space, total_retrans;
	uint64_t pacing_rate, max_pacing_rate, bytes_acked, bytes_received;
	uint32_t segs_out, segs_in, notsent_bytes, min_rtt, data_segs_in, data_segs_out;
	uint64_t delivery_rate, busy_time, rwnd_limited, sndbuf_limited;
	uint32_t delivered, delivered_ce;
	uint64_t bytes_sent, bytes_retrans;
	uint32_t dsack_dups, reord_seen, rcv_ooopack, snd_wnd;
};

static int tcp_info_of(int fd, struct tcpi *ti, socklen_t *len)
{
	memset(ti, 0xee, sizeof *ti);
	*len = sizeof *ti;
	return getsockopt(fd, IPPROTO_TCP, TCP_INFO, ti, len);
}

/* TCP_INFO: 128 KiB over loopback, then each end's figures: the state,
 * timestamps and window scaling agreed, the sender's bytes sent and
 * acknowledged and the receiver's bytes received, data segments both
 * ways, no retransmission, an RTT; a listener's accept queue and its
 * limit; a short buffer gets the first bytes only. */
static void test_tcp_info(void)
{
	struct pair p;
	CHECK_OK(tcp_pair(&p));
	static char buf[128 * 1024];
	size_t sent = 0, got = 0;
	while (sent < sizeof buf) {
		ssize_t n = write(p.c, buf + sent, sizeof buf - sent);
		if (n <= 0)
			break;
		sent += (size_t)n;
		while (got < sent && readable(p.a)) {
			ssize_t r = read(p.a, buf, sizeof buf);
			if (r <= 0)
				break;
			got += (size_t)r;
		}
	}
	CHECK_EQ(sent, sizeof buf);
	CHECK_EQ(got, sizeof buf);
	struct tcpi c, a;
	socklen_t clen, alen;
	for (int i = 0; i < 100; i++) {             /* the last ACK, or the window the
							 * reader opened, may be on its way */
		CHECK_OK(tcp_info_of(p.c, &c, &clen));
		if (c.unacked == 0 && c.bytes_acked >= sizeof buf && c.snd_wnd > 0)
			break;
		usleep(10000);
	}
	CHECK_OK(tcp_info_of(p.a, &a, &alen));
	CHECK(clen >= 232 && alen >= 232);
	CHECK_EQ(c.state, 1);                       /* TCP_ESTABLISHED */
	CHECK_EQ(a.state, 1);
	CHECK(c.options & 1);                       /* TCPI_OPT_TIMESTAMPS */
	CHECK(c.options & 2);                       /* TCPI_OPT_SACK: both SYNs offer it */
	CHECK(c.options & 4);                       /* TCPI_OPT_WSCALE */
	CHECK(c.snd_mss > 0 && c.snd_mss <= 65535);
	CHECK(c.rto >= 200000);                     /* microseconds: at least TCP_RTO_MIN */
	CHECK(c.bytes_sent >= sizeof buf);
	CHECK(c.bytes_acked >= sizeof buf && c.bytes_acked <= sizeof buf + 2);
	CHECK_EQ(a.bytes_received, sizeof buf);
	CHECK(c.data_segs_out >= sizeof buf / c.snd_mss);
	CHECK(a.data_segs_in >= sizeof buf / c.snd_mss);
	CHECK(c.segs_in > 0 && a.segs_out > 0);
	CHECK_EQ(c.total_retrans, 0);
	CHECK_EQ(c.bytes_retrans, 0);
	CHECK_EQ(c.unacked, 0);                     /* all of it acknowledged */
	CHECK_EQ(c.notsent_bytes, 0);
	CHECK(c.rtt > 0 && c.min_rtt <= c.rtt * 8);
	CHECK(c.snd_cwnd > 0 && c.snd_wnd > 0);
	CHECK(c.last_data_sent < 10000 && a.last_data_recv < 10000);
	/* A short buffer: the first bytes, and the length says so. */
	uint8_t head[8];
	socklen_t hlen = sizeof head;
	CHECK_OK(getsockopt(p.c, IPPROTO_TCP, TCP_INFO, head, &hlen));
	CHECK_EQ(hlen, sizeof head);
	CHECK_EQ(head[0], 1);
	/* A listener: TCP_LISTEN, its queue (one not yet accepted) and limit. */
	int extra = connect_to(port_of(p.l));
	CHECK(extra >= 0);
	struct tcpi l;
	socklen_t llen;
	for (int i = 0; i < 100; i++) {
		CHECK_OK(tcp_info_of(p.l, &l, &llen));
		if (l.unacked == 1)
			break;
		usleep(10000);
	}
	CHECK_EQ(l.state, 10);                      /* TCP_LISTEN */
	CHECK_EQ(l.unacked, 1);
	CHECK_EQ(l.sacked, 8);                      /* listener()'s backlog */
	close(extra);
	pair_close(&p);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	test_socket_rules();
	test_bind_rules();
	test_udp();
	test_udp_demux();
	test_udplite();
	test_interfaces();
	test_tcp_names();
	test_tcp_bulk();
	test_tcp_partial_reads();
	test_tcp_peek_waitall();
	test_tcp_errors();
	test_tcp_reconnect();
	test_tcp_epipe();
	test_tcp_epoll();
	test_tcp_linger();
	test_tcp_accept_inherits();
	test_tcp_many();
	test_tcp_info();
	return ut_done();
}
