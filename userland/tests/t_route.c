/*
 * t_route: the routing table's ioctls, SIOCADDRT and SIOCDELRT (busybox
 * route's), with Linux's rules; routes that decide where a datagram can
 * go; and the table as /proc/net/route and netlink's RTM_GETROUTE dump
 * (busybox ip route's) show it.
 *
 * On the host it runs in a network namespace of its own (unshare
 * CLONE_NEWNET: only lo, brought up here), so the host's routes are never
 * touched; in Tempest, on the machine's table, every route it adds is
 * deleted again.  With only lo, a route is seen working by connect: a
 * UDP socket's connect to 10.9.0.1 is ENETUNREACH until a route to
 * 10.9.0.0/16 through lo exists, and then succeeds with no source
 * address (lo's 127.0.0.1 serves this host only: Linux's host scope).
 */
#include "ut.h"
#include <arpa/inet.h>
#include <net/if.h>
#include <net/route.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void set_in(struct sockaddr *sa, const char *addr)
{
	struct sockaddr_in *in = (struct sockaddr_in *)sa;
	memset(in, 0, sizeof *in);
	in->sin_family = AF_INET;
	in->sin_addr.s_addr = inet_addr(addr);
}

/* A struct rtentry: dst/mask, through gw (NULL: none) or dev (NULL). */
static struct rtentry route(const char *dst, const char *mask, const char *gw, char *dev,
			    int flags)
{
	struct rtentry rt;
	memset(&rt, 0, sizeof rt);
	set_in(&rt.rt_dst, dst);
	set_in(&rt.rt_genmask, mask);
	if (gw) {
		set_in(&rt.rt_gateway, gw);
		flags |= RTF_GATEWAY;
	}
	rt.rt_flags = (unsigned short)(RTF_UP | flags);
	rt.rt_dev = dev;
	return rt;
}

/* 0 or the errno of a UDP connect to addr:9; *src the source chosen. */
static int connect_errno(const char *addr, char *src, size_t len)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9) };
	a.sin_addr.s_addr = inet_addr(addr);
	int err = connect(fd, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : errno;
	socklen_t sl = sizeof a;
	if (!err && getsockname(fd, (struct sockaddr *)&a, &sl) == 0)
		inet_ntop(AF_INET, &a.sin_addr, src, (socklen_t)len);
	close(fd);
	return err;
}

/* Does /proc/net/route have a line on lo for dst (hex) with flags and mask? */
static int proc_route(const char *dst_hex, const char *flags_hex, const char *mask_hex)
{
	char buf[8192], want[128];
	long n = ut_read_file("/proc/net/route", buf, sizeof buf - 1);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	snprintf(want, sizeof want, "lo\t%s\t00000000\t%s\t", dst_hex, flags_hex);
	char *l = strstr(buf, want);
	return l && strstr(l, mask_hex) && strstr(l, mask_hex) < strchr(l, '\n');
}

/* Netlink's route dump as Linux's ABI lays it out (include/uapi/linux/
 * netlink.h, rtnetlink.h), written out since musl has no kernel headers. */
#define NETLINK_ROUTE_K 0
#define NLMSG_DONE_K    3
#define NLMSG_ERROR_K   2
#define NLM_F_REQUEST_K 1
#define NLM_F_DUMP_K    0x300
#define RTM_NEWROUTE_K  24
#define RTM_GETROUTE_K  26
#define RTA_DST_K       1
#define RTA_OIF_K       4
#define RT_TABLE_MAIN_K 254
#define NL_ALIGN(n)     (((n) + 3) & ~3u)

struct nlhdr { uint32_t len; uint16_t type, flags; uint32_t seq, pid; };
struct rtm { uint8_t family, dst_len, src_len, tos, table, protocol, scope, type; uint32_t flags; };
struct rta { uint16_t len, type; };

/* The destination and interface of one RTM_NEWROUTE of the main table
 * with prefix len: 1 and *dst, *oif, or 0. */
static int route_of(const struct nlhdr *h, int len, in_addr_t *dst, int *oif)
{
	const struct rtm *r = (const struct rtm *)(h + 1);
	if (h->type != RTM_NEWROUTE_K || h->len < sizeof *h + sizeof *r ||
	    r->table != RT_TABLE_MAIN_K || r->dst_len != len)
		return 0;
	*dst = 0;
	*oif = -1;
	const char *end = (const char *)h + h->len;
	for (const char *p = (const char *)(r + 1); p + sizeof(struct rta) <= end;) {
		const struct rta *a = (const struct rta *)p;
		if (a->len < sizeof *a || p + a->len > end)
			break;
		if (a->type == RTA_DST_K && a->len >= sizeof *a + 4)
			memcpy(dst, a + 1, 4);
		if (a->type == RTA_OIF_K && a->len >= sizeof *a + 4)
			memcpy(oif, a + 1, 4);
		p += NL_ALIGN(a->len);
	}
	return 1;
}

/* Does a netlink RTM_GETROUTE dump of the main table hold dst/len
 * through the interface with index oif?  (busybox ip route's question.) */
static int netlink_has_route(const char *dst, int len, int oif)
{
	int fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE_K);
	if (fd < 0)
		return 0;
	struct {
		struct nlhdr h;
		struct rtm r;
	} req = { { sizeof req, RTM_GETROUTE_K, NLM_F_REQUEST_K | NLM_F_DUMP_K, 1, 0 },
		  { .family = AF_INET } };
	int found = 0, done = 0;
	in_addr_t want = inet_addr(dst);
	if (send(fd, &req, sizeof req, 0) != sizeof req) {
		close(fd);
		return 0;
	}
	static char buf[32768];
	while (!done) {
		ssize_t n = recv(fd, buf, sizeof buf, 0);
		if (n <= 0)
			break;
		for (char *p = buf; p + sizeof(struct nlhdr) <= buf + n;) {
			const struct nlhdr *h = (const struct nlhdr *)p;
			if (h->len < sizeof *h || p + h->len > buf + n)
				break;
			if (h->type == NLMSG_DONE_K || h->type == NLMSG_ERROR_K) {
				done = 1;
				break;
			}
			in_addr_t d = 0;
			int o = -1;
			found |= route_of(h, len, &d, &o) && d == want && o == oif;
			p += NL_ALIGN(h->len);
		}
	}
	close(fd);
	return found;
}

static void bring_lo_up(int fd)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	CHECK_OK(ioctl(fd, SIOCGIFFLAGS, &ifr));
	ifr.ifr_flags |= IFF_UP;
	CHECK_OK(ioctl(fd, SIOCSIFFLAGS, &ifr));
}

static void test_add_delete(int fd)
{
	char lo[] = "lo", src[32] = "";
	struct rtentry net = route("10.9.0.0", "255.255.0.0", NULL, lo, 0);
	CHECK_EQ(connect_errno("10.9.0.1", src, sizeof src), ENETUNREACH);
	CHECK_OK(ioctl(fd, SIOCADDRT, &net));
	CHECK_EQ(connect_errno("10.9.0.1", src, sizeof src), 0);
	CHECK_EQ(strcmp(src, "0.0.0.0"), 0);        /* lo's 127.0.0.1 is for this host only */
	CHECK(proc_route("0000090A", "0001", "0000FFFF"));
	CHECK(netlink_has_route("10.9.0.0", 16, (int)if_nametoindex("lo")));
	CHECK_ERR(ioctl(fd, SIOCADDRT, &net), EEXIST);
	struct rtentry host = route("10.8.0.7", "0.0.0.0", NULL, lo, RTF_HOST);
	CHECK_OK(ioctl(fd, SIOCADDRT, &host));
	CHECK(proc_route("0700080A", "0005", "FFFFFFFF"));
	CHECK_EQ(connect_errno("10.8.0.7", src, sizeof src), 0);
	CHECK_EQ(connect_errno("10.8.0.8", src, sizeof src), ENETUNREACH);
	CHECK_OK(ioctl(fd, SIOCDELRT, &host));
	CHECK_OK(ioctl(fd, SIOCDELRT, &net));
	CHECK_ERR(ioctl(fd, SIOCDELRT, &net), ESRCH);
	CHECK(!proc_route("0000090A", "0001", "0000FFFF"));
	CHECK(!netlink_has_route("10.9.0.0", 16, (int)if_nametoindex("lo")));
	CHECK_EQ(connect_errno("10.9.0.1", src, sizeof src), ENETUNREACH);
}

static void test_refused(int fd)
{
	char lo[] = "lo", nosuch[] = "nosuch0";
	struct rtentry rt = route("10.9.0.0", "255.0.255.0", NULL, lo, 0);
	CHECK_ERR(ioctl(fd, SIOCADDRT, &rt), EINVAL);            /* not contiguous */
	rt = route("10.9.0.1", "255.255.0.0", NULL, lo, 0);
	CHECK_ERR(ioctl(fd, SIOCADDRT, &rt), EINVAL);            /* bits past the mask */
	rt = route("10.9.0.0", "255.255.0.0", NULL, nosuch, 0);
	CHECK_ERR(ioctl(fd, SIOCADDRT, &rt), ENODEV);
	rt = route("10.9.0.0", "255.255.0.0", "192.0.2.1", NULL, 0);
	CHECK_ERR(ioctl(fd, SIOCADDRT, &rt), ENETUNREACH);       /* no link holds the gateway */
	rt = route("10.9.0.0", "255.255.0.0", NULL, lo, 0);
	rt.rt_dst.sa_family = AF_INET6;
	CHECK_ERR(ioctl(fd, SIOCADDRT, &rt), EAFNOSUPPORT);
	rt = route("10.9.0.0", "255.255.0.0", NULL, lo, 0);
	CHECK_ERR(ioctl(fd, SIOCADDRT, (void *)8), EFAULT);
	pid_t pid = fork();
	if (pid == 0) {
		if (setuid(65534) != 0)
			_exit(2);
		_exit(ioctl(fd, SIOCADDRT, &rt) < 0 && errno == EPERM ? 0 : 1);
	}
	int status = -1;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	if (!ut_is_root()) {
		ut_note("not root: SIOCADDRT needs it");
		return ut_done();
	}
	if (unshare(CLONE_NEWNET) != 0)
		ut_note("no network namespace (%s): the machine's own table", strerror(errno));
	int fd = CHECK_OK(socket(AF_INET, SOCK_DGRAM, 0));
	bring_lo_up(fd);
	test_add_delete(fd);
	test_refused(fd);
	close(fd);
	return ut_done();
}
