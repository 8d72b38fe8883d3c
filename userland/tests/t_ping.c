/*
 * t_ping: ICMP echo sockets ("ping sockets": SOCK_DGRAM with
 * IPPROTO_ICMP) over loopback, with Linux semantics.
 *
 * The socket's type and protocol; an echo request answered, its
 * identifier replaced by the socket's (chosen at the first send, or
 * bound), its sequence and payload back unchanged, the reply's checksum
 * right and its source the address pinged; two sockets each get only
 * their own reply; connect then send; what a send refuses (not an echo
 * request, a code other than 0, shorter than the header: EINVAL; no
 * destination: EDESTADDRREQ); a read with nothing there (EAGAIN); and the
 * same ping by a user who is not root, the point of these sockets.
 *
 * Who may make one is Linux's net.ipv4.ping_group_range: the kernel's
 * default lets no group, Debian's systemd every group, and Tempest behaves
 * as Debian does.  Where the file exists (on Linux) and the test runs as
 * root, it lets every group for the test and puts the range back after.
 */
#include "ut.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define RANGE "/proc/sys/net/ipv4/ping_group_range"
#define GUARD_MS 10000      /* a poll timeout that only stops a hang */
#define PAYLOAD "tempest ping"

static char saved_range[64];

static void restore_range(void)
{
	if (saved_range[0])
		ut_write_file(RANGE, saved_range, strlen(saved_range), 0644);
}

/* Let every group make ping sockets for the test, where Linux asks. */
static void open_range(void)
{
	long n = ut_read_file(RANGE, saved_range, sizeof saved_range - 1);
	if (n <= 0 || !ut_is_root()) {
		saved_range[0] = 0;
		return;
	}
	saved_range[n] = 0;
	const char *all = "0 2147483647\n";
	if (ut_write_file(RANGE, all, strlen(all), 0644) == 0)
		atexit(restore_range);
	else
		saved_range[0] = 0;
}

static struct sockaddr_in loopback(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}



/* An echo request: identifier id (the kernel replaces it), sequence seq. */
static size_t echo_request(uint8_t *buf, uint16_t id, uint16_t seq, int type, int code)
{
	struct icmphdr *h = (struct icmphdr *)buf;
	memset(h, 0, sizeof *h);
	h->type = (uint8_t)type;
	h->code = (uint8_t)code;
	h->un.echo.id = htons(id);
	h->un.echo.sequence = htons(seq);
	memcpy(buf + sizeof *h, PAYLOAD, sizeof PAYLOAD);
	return sizeof *h + sizeof PAYLOAD;
}

static uint16_t bound_id(int fd)
{
	struct sockaddr_in a;
	socklen_t len = sizeof a;
	CHECK_OK(getsockname(fd, (struct sockaddr *)&a, &len));
	return ntohs(a.sin_port);
}

/* Read the reply to sequence seq on fd: the checks of one round trip. */
static void check_reply(int fd, uint16_t seq)
{
	uint8_t buf[256];
	struct sockaddr_in from;
	socklen_t flen = sizeof from;
	CHECK(ut_readable(fd, GUARD_MS));
	ssize_t n = recvfrom(fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&from, &flen);
	CHECK_EQ(n, (ssize_t)(sizeof(struct icmphdr) + sizeof PAYLOAD));
	if (n < (ssize_t)sizeof(struct icmphdr))
		return;
	const struct icmphdr *h = (const struct icmphdr *)buf;
	CHECK_EQ(h->type, ICMP_ECHOREPLY);
	CHECK_EQ(h->code, 0);
	CHECK_EQ(ntohs(h->un.echo.id), bound_id(fd));
	CHECK_EQ(ntohs(h->un.echo.sequence), seq);
	CHECK(memcmp(buf + sizeof *h, PAYLOAD, sizeof PAYLOAD) == 0);
	CHECK_EQ(ut_inet_cksum(buf, (size_t)n), 0);
	CHECK_EQ(from.sin_family, AF_INET);
	CHECK_EQ(ntohl(from.sin_addr.s_addr), INADDR_LOOPBACK);
}

static void ping_once(int fd, uint16_t seq)
{
	uint8_t buf[64];
	struct sockaddr_in to = loopback();
	size_t len = echo_request(buf, 0x1111, seq, ICMP_ECHO, 0);
	CHECK_EQ(sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof to), (ssize_t)len);
	check_reply(fd, seq);
}

static void type_and_reply(void)
{
	int fd = CHECK_OK(socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP));
	int v = 0;
	socklen_t len = sizeof v;
	CHECK_OK(getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &len));
	CHECK_EQ(v, IPPROTO_ICMP);
	CHECK_OK(getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len));
	CHECK_EQ(v, SOCK_DGRAM);
	ping_once(fd, 7);
	CHECK(bound_id(fd) != 0);                   /* chosen at the first send */
	ping_once(fd, 8);
	close(fd);
}

static void bound_identifier(void)
{
	int fd = CHECK_OK(socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP));
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(4242) };
	CHECK_OK(bind(fd, (struct sockaddr *)&a, sizeof a));
	CHECK_EQ(bound_id(fd), 4242);
	ping_once(fd, 1);
	close(fd);
}

static void own_replies_only(void)
{
	int a = CHECK_OK(socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP));
	int b = CHECK_OK(socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP));
	ping_once(a, 21);
	ping_once(b, 22);
	CHECK(bound_id(a) != bound_id(b));
	CHECK(!ut_readable(a, 200));                   /* b's reply did not come here */
	close(a);
	close(b);
}

static void connected(void)
{
	int fd = CHECK_OK(socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP));
	struct sockaddr_in to = loopback();
	CHECK_OK(connect(fd, (struct sockaddr *)&to, sizeof to));
	uint8_t buf[64];
	size_t len = echo_request(buf, 0, 31, ICMP_ECHO, 0);
	CHECK_EQ(send(fd, buf, len, 0), (ssize_t)len);
	check_reply(fd, 31);
	close(fd);
}

static void refused(void)
{
	int fd = CHECK_OK(socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP));
	struct sockaddr_in to = loopback();
	uint8_t buf[64];
	size_t len = echo_request(buf, 0, 1, ICMP_ECHOREPLY, 0);
	CHECK_ERR(sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof to), EINVAL);
	len = echo_request(buf, 0, 1, ICMP_ECHO, 1);
	CHECK_ERR(sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof to), EINVAL);
	len = echo_request(buf, 0, 1, ICMP_ECHO, 0);
	CHECK_ERR(sendto(fd, buf, 4, 0, (struct sockaddr *)&to, sizeof to), EINVAL);
	CHECK_ERR(send(fd, buf, len, 0), EDESTADDRREQ);
	CHECK_ERR(recv(fd, buf, sizeof buf, MSG_DONTWAIT), EAGAIN);
	close(fd);
}

static void unprivileged_ping(void *unused)
{
	(void)unused;
	int fd = CHECK_OK(socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP));
	if (fd >= 0) {
		ping_once(fd, 41);
		close(fd);
	}
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	open_range();
	type_and_reply();
	bound_identifier();
	own_replies_only();
	connected();
	refused();
	if (ut_is_root())
		ut_unprivileged("ping as a user", unprivileged_ping, NULL);
	return ut_done();
}
