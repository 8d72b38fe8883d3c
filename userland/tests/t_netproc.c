/*
 * t_netproc: what programs read about the network, with Linux semantics:
 * the interface ioctls busybox's ifconfig uses (SIOCGIFCONF with and
 * without a buffer, SIOCGIFHWADDR, SIOCGIFTXQLEN, SIOCGIFMETRIC,
 * SIOCGIFBRDADDR, an unknown interface), and /proc/net's tables: dev
 * (loopback's counters move with its traffic), udp (a bound socket with
 * its port, closed or connected state, its inode and the bytes waiting),
 * tcp (a listener, and a connection's two ends established), raw, and
 * unix (a listener by path, its connection's two ends, an abstract
 * datagram socket, a seqpacket pair; a closed socket's line gone); snmp's
 * counters, sockstat's counts of the sockets made and of TIME_WAIT's
 * (which hold no buffers), and netstat's
 * ListenOverflows and ListenDrops for connections past a backlog.
 */
#include "ut.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define GUARD_MS 10000

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
	return getsockname(fd, (struct sockaddr *)&a, &len) == 0 ? ntohs(a.sin_port) : 0;
}

static unsigned long ino_of(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 ? (unsigned long)st.st_ino : 0;
}

/* Field n (0 the slot) of a /proc/net socket line. */
static void field(const char *line, int n, char *out, size_t room)
{
	char copy[256];
	snprintf(copy, sizeof copy, "%s", line);
	char *save, *t = strtok_r(copy, " \n", &save);
	for (int i = 0; t && i < n; i++)
		t = strtok_r(NULL, " \n", &save);
	snprintf(out, room, "%s", t ? t : "");
}

/* The line of /proc/net/NAME whose local end is 0100007F:port (or, with
 * any, 00000000:port), into line; 1 when found. */
static int proc_line(const char *name, uint16_t port, int any, char *line, size_t room)
{
	char path[64], want[32], local[64];
	snprintf(path, sizeof path, "/proc/net/%s", name);
	snprintf(want, sizeof want, "%s:%04X", any ? "00000000" : "0100007F", port);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	int found = 0;
	while (!found && fgets(line, (int)room, f)) {
		field(line, 1, local, sizeof local);
		found = strcmp(local, want) == 0;
	}
	fclose(f);
	return found;
}

static void test_ifconf(void)
{
	int fd = CHECK_OK(socket(AF_INET, SOCK_DGRAM, 0));
	struct ifconf ifc = { .ifc_len = 0, .ifc_buf = NULL };
	CHECK_OK(ioctl(fd, SIOCGIFCONF, &ifc));
	CHECK(ifc.ifc_len > 0 && ifc.ifc_len % (int)sizeof(struct ifreq) == 0);
	struct ifreq reqs[16];
	ifc.ifc_len = sizeof reqs;
	ifc.ifc_req = reqs;
	CHECK_OK(ioctl(fd, SIOCGIFCONF, &ifc));
	int n = ifc.ifc_len / (int)sizeof(struct ifreq), lo = -1;
	for (int i = 0; i < n; i++)
		if (strcmp(reqs[i].ifr_name, "lo") == 0)
			lo = i;
	CHECK(lo >= 0);
	if (lo >= 0) {
		struct sockaddr_in *a = (struct sockaddr_in *)&reqs[lo].ifr_addr;
		CHECK_EQ(a->sin_family, AF_INET);
		CHECK_EQ(a->sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	}
	/* Room for none: nothing written, length 0. */
	ifc.ifc_len = (int)sizeof(struct ifreq) - 1;
	CHECK_OK(ioctl(fd, SIOCGIFCONF, &ifc));
	CHECK_EQ(ifc.ifc_len, 0);
	CHECK_ERR(ioctl(fd, SIOCGIFCONF, (void *)8), EFAULT);

	struct ifreq r;
	memset(&r, 0, sizeof r);
	strcpy(r.ifr_name, "lo");
	CHECK_OK(ioctl(fd, SIOCGIFHWADDR, &r));
	CHECK_EQ(r.ifr_hwaddr.sa_family, 772);     /* ARPHRD_LOOPBACK */
	CHECK_OK(ioctl(fd, SIOCGIFTXQLEN, &r));
	CHECK_EQ(r.ifr_qlen, 1000);
	CHECK_OK(ioctl(fd, SIOCGIFMETRIC, &r));
	CHECK_EQ(r.ifr_metric, 0);
	strcpy(r.ifr_name, "nosuch0");
	CHECK_ERR(ioctl(fd, SIOCGIFHWADDR, &r), ENODEV);
	CHECK_ERR(ioctl(fd, SIOCGIFTXQLEN, &r), ENODEV);
	close(fd);
}

static unsigned long lo_rx_packets(void)
{
	FILE *f = fopen("/proc/net/dev", "r");
	char line[256];
	unsigned long bytes = 0, packets = 0;
	int found = 0;
	while (f && !found && fgets(line, sizeof line, f))
		found = sscanf(line, " lo: %lu %lu", &bytes, &packets) == 2;
	if (f)
		fclose(f);
	return found ? packets : 0;
}

static void test_dev_and_udp(void)
{
	char line[256], f[64];
	unsigned long before = lo_rx_packets();
	int a = CHECK_OK(socket(AF_INET, SOCK_DGRAM, 0));
	int b = CHECK_OK(socket(AF_INET, SOCK_DGRAM, 0));
	struct sockaddr_in to = loopback(0);
	CHECK_OK(bind(b, (struct sockaddr *)&to, sizeof to));
	uint16_t port = port_of(b);
	CHECK(proc_line("udp", port, 0, line, sizeof line));
	field(line, 3, f, sizeof f);
	CHECK_EQ(strcmp(f, "07"), 0);              /* not connected: TCP_CLOSE */
	field(line, 9, f, sizeof f);
	CHECK_EQ(strtoul(f, NULL, 10), ino_of(b));
	to = loopback(port);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(sendto(a, "0123456789", 10, 0, (struct sockaddr *)&to, sizeof to), 10);
	struct pollfd p = { b, POLLIN, 0 };
	CHECK_EQ(poll(&p, 1, GUARD_MS), 1);
	CHECK(proc_line("udp", port, 0, line, sizeof line));
	field(line, 4, f, sizeof f);                /* tx_queue:rx_queue */
	CHECK(strtoul(strchr(f, ':') ? strchr(f, ':') + 1 : "0", NULL, 16) > 0);
	CHECK(lo_rx_packets() >= before + 3);
	CHECK_OK(connect(b, (struct sockaddr *)&to, sizeof to));
	CHECK(proc_line("udp", port, 0, line, sizeof line));
	field(line, 3, f, sizeof f);
	CHECK_EQ(strcmp(f, "01"), 0);              /* connected: TCP_ESTABLISHED */
	close(b);
	CHECK(!proc_line("udp", port, 0, line, sizeof line));
	close(a);
}

static void test_tcp(void)
{
	char line[256], f[64];
	int l = CHECK_OK(socket(AF_INET, SOCK_STREAM, 0));
	struct sockaddr_in a = loopback(0);
	CHECK_OK(bind(l, (struct sockaddr *)&a, sizeof a));
	CHECK_OK(listen(l, 4));
	uint16_t port = port_of(l);
	CHECK(proc_line("tcp", port, 0, line, sizeof line));
	field(line, 3, f, sizeof f);
	CHECK_EQ(strcmp(f, "0A"), 0);              /* TCP_LISTEN */
	field(line, 9, f, sizeof f);
	CHECK_EQ(strtoul(f, NULL, 10), ino_of(l));
	int c = CHECK_OK(socket(AF_INET, SOCK_STREAM, 0));
	a = loopback(port);
	CHECK_OK(connect(c, (struct sockaddr *)&a, sizeof a));
	int s = CHECK_OK(accept(l, NULL, NULL));
	CHECK(proc_line("tcp", port_of(c), 0, line, sizeof line));
	field(line, 3, f, sizeof f);
	CHECK_EQ(strcmp(f, "01"), 0);              /* the client's end: established */
	field(line, 2, f, sizeof f);
	char want[32];
	snprintf(want, sizeof want, "0100007F:%04X", port);
	CHECK_EQ(strcmp(f, want), 0);
	close(s);
	close(c);
	close(l);
}

static void test_raw(void)
{
	if (!ut_is_root()) {
		ut_note("skipped /proc/net/raw: raw sockets need root");
		return;
	}
	char line[256], f[64];
	int r = CHECK_OK(socket(AF_INET, SOCK_RAW, 253));
	CHECK(proc_line("raw", 253, 1, line, sizeof line));   /* the protocol as the port */
	field(line, 9, f, sizeof f);
	CHECK_EQ(strtoul(f, NULL, 10), ino_of(r));
	close(r);
	CHECK(!proc_line("raw", 253, 1, line, sizeof line));
}

/* The line of /proc/net/unix whose Inode column is ino, into line; 1 when
 * found, -1 when the header is not Linux's. */
static int unix_line(unsigned long ino, char *line, size_t room)
{
	FILE *f = fopen("/proc/net/unix", "r");
	if (!f)
		return 0;
	int found = 0;
	char col[64];
	if (!fgets(line, (int)room, f) ||
	    strcmp(line, "Num       RefCount Protocol Flags    Type St Inode Path\n") != 0)
		found = -1;
	while (!found && fgets(line, (int)room, f)) {
		field(line, 6, col, sizeof col);
		found = strtoul(col, NULL, 10) == ino;
	}
	fclose(f);
	return found;
}

/* Flags, Type, St and Path of fd's line, as one string ("?" when none). */
static const char *unix_cols(int fd)
{
	static char out[300];
	char line[256], c[4][64];
	if (unix_line(ino_of(fd), line, sizeof line) != 1)
		return "?";
	field(line, 3, c[0], sizeof c[0]);
	field(line, 4, c[1], sizeof c[1]);
	field(line, 5, c[2], sizeof c[2]);
	field(line, 7, c[3], sizeof c[3]);
	snprintf(out, sizeof out, "%s %s %s %s", c[0], c[1], c[2], c[3]);
	return out;
}

/* fd's columns are want (a failure shows both). */
#define CHECK_COLS(fd, want)                                                  \
	do {                                                                  \
		const char *got_ = unix_cols(fd);                             \
		ut_check(strcmp(got_, (want)) == 0, __FILE__, __LINE__,       \
			 "/proc/net/unix of %s: '%s', want '%s'", #fd, got_, (want)); \
	} while (0)

static void test_unix(void)
{
	char line[256], want[160];
	CHECK_EQ(unix_line(0, line, sizeof line), 0);     /* Linux's header, no inode 0 */
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof a.sun_path, "/tmp/t_netproc.%d", (int)getpid());
	unlink(a.sun_path);
	int l = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_OK(bind(l, (struct sockaddr *)&a, sizeof a));
	CHECK_OK(listen(l, 4));
	snprintf(want, sizeof want, "00010000 0001 01 %s", a.sun_path);
	CHECK_COLS(l, want);
	int c = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_OK(connect(c, (struct sockaddr *)&a, sizeof a));
	int s = CHECK_OK(accept(l, NULL, NULL));
	CHECK_COLS(c, "00000000 0001 03 ");
	snprintf(want, sizeof want, "00000000 0001 03 %s", a.sun_path);
	CHECK_COLS(s, want);     /* the accepted end shows the listener's name */
	unsigned long lino = ino_of(l);
	close(l);
	CHECK_EQ(unix_line(lino, line, sizeof line), 0);
	close(c);
	close(s);
	unlink(a.sun_path);

	/* An abstract name: '@', then its bytes. */
	struct sockaddr_un b = { .sun_family = AF_UNIX };
	int n = snprintf(b.sun_path + 1, sizeof b.sun_path - 1, "tnp%d", (int)getpid());
	int d = CHECK_OK(socket(AF_UNIX, SOCK_DGRAM, 0));
	CHECK_OK(bind(d, (struct sockaddr *)&b, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)));
	snprintf(want, sizeof want, "00000000 0002 01 @tnp%d", (int)getpid());
	CHECK_COLS(d, want);
	close(d);

	int sv[2];
	CHECK_OK(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	CHECK_COLS(sv[0], "00000000 0005 03 ");
	CHECK_COLS(sv[1], "00000000 0005 03 ");
	close(sv[0]);
	close(sv[1]);
}

/* /proc/net/snmp: each group a line of names and a line of as many
 * values, the constants Linux shows, and counters that move as Linux's
 * do (other traffic may move them more, so only "at least").  A datagram
 * to a closed port: NoPorts, and the ICMP "port unreachable" sent and
 * received over loopback; one to a bound socket, once read: InDatagrams; a TCP
 * connection: an active and a passive open, both ends in CurrEstab; a
 * connection to a closed port: AttemptFails and the RST sent. */
/* A listener on loopback (*l) and a connection to it, both ends (*c, *s). */
static void tcp_connection(int *l, int *c, int *s)
{
	*l = CHECK_OK(socket(AF_INET, SOCK_STREAM, 0));
	struct sockaddr_in a = loopback(0);
	CHECK_OK(bind(*l, (struct sockaddr *)&a, sizeof a));
	CHECK_OK(listen(*l, 4));
	*c = CHECK_OK(socket(AF_INET, SOCK_STREAM, 0));
	a = loopback(port_of(*l));
	CHECK_OK(connect(*c, (struct sockaddr *)&a, sizeof a));
	*s = CHECK_OK(accept(*l, NULL, NULL));
}

static void test_snmp(void)
{
	char buf[8192];
	long n = ut_read_file("/proc/net/snmp", buf, sizeof buf - 1);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = 0;
	int groups = 0, even = 1;
	for (char *l = buf; *l;) {
		char *names = l, *values = strchr(l, '\n');
		if (!values)
			break;
		values++;
		char *end = strchr(values, '\n');
		if (!end)
			break;
		int nn = 0, nv = 0;
		for (char *c = names; c < values; c++)
			nn += *c == ' ';
		for (char *c = values; c < end; c++)
			nv += *c == ' ';
		even &= nn == nv && strncmp(names, values, (size_t)(strchr(names, ':') - names)) == 0;
		groups++;
		l = end + 1;
	}
	CHECK(even);
	CHECK(groups >= 5);
	CHECK_EQ(ut_snmp("Ip", "DefaultTTL"), 64);
	CHECK(ut_snmp("Ip", "Forwarding") == 1 || ut_snmp("Ip", "Forwarding") == 2);
	CHECK_EQ(ut_snmp("Tcp", "RtoAlgorithm"), 1);
	CHECK_EQ(ut_snmp("Tcp", "RtoMin"), 200);
	CHECK_EQ(ut_snmp("Tcp", "RtoMax"), 120000);
	CHECK_EQ(ut_snmp("Tcp", "MaxConn"), -1);
	CHECK_EQ(ut_snmp("Udp", "NoSuchCounter"), -1);

	long long noports = ut_snmp("Udp", "NoPorts"), out = ut_snmp("Udp", "OutDatagrams");
	long long in = ut_snmp("Udp", "InDatagrams"), unreach = ut_snmp("Icmp", "OutDestUnreachs");
	long long heard = ut_snmp("Icmp", "InDestUnreachs"), recv_ip = ut_snmp("Ip", "InReceives");
	int u = CHECK_OK(socket(AF_INET, SOCK_DGRAM, 0)), closed = CHECK_OK(socket(AF_INET, SOCK_DGRAM, 0));
	struct sockaddr_in a = loopback(0);
	CHECK_OK(bind(closed, (struct sockaddr *)&a, sizeof a));
	a = loopback(port_of(closed));
	close(closed);                              /* its port is now closed */
	CHECK_EQ(sendto(u, "x", 1, 0, (struct sockaddr *)&a, sizeof a), 1);
	struct pollfd pf = { u, POLLIN, 0 };
	poll(&pf, 1, 1000);                         /* the ICMP error comes back */
	CHECK(ut_snmp("Udp", "NoPorts") > noports);
	CHECK(ut_snmp("Udp", "OutDatagrams") > out);
	CHECK(ut_snmp("Icmp", "OutDestUnreachs") > unreach);
	CHECK(ut_snmp("Icmp", "InDestUnreachs") > heard);
	CHECK(ut_snmp("IcmpMsg", "OutType3") > 0);
	CHECK(ut_snmp("Ip", "InReceives") >= recv_ip + 2);
	int r = CHECK_OK(socket(AF_INET, SOCK_DGRAM, 0));
	a = loopback(0);
	CHECK_OK(bind(r, (struct sockaddr *)&a, sizeof a));
	a = loopback(port_of(r));
	CHECK_EQ(sendto(u, "y", 1, 0, (struct sockaddr *)&a, sizeof a), 1);
	pf.fd = r;
	CHECK_EQ(poll(&pf, 1, GUARD_MS), 1);
	char y;
	CHECK_EQ(recv(r, &y, 1, 0), 1);             /* Linux counts it when it is read */
	CHECK(ut_snmp("Udp", "InDatagrams") > in);
	close(r);
	close(u);

	long long active = ut_snmp("Tcp", "ActiveOpens"), passive = ut_snmp("Tcp", "PassiveOpens");
	long long fails = ut_snmp("Tcp", "AttemptFails"), rsts = ut_snmp("Tcp", "OutRsts");
	long long segs = ut_snmp("Tcp", "OutSegs");
	int l, c, s;
	tcp_connection(&l, &c, &s);
	CHECK(ut_snmp("Tcp", "ActiveOpens") > active);
	CHECK(ut_snmp("Tcp", "PassiveOpens") > passive);
	CHECK(ut_snmp("Tcp", "CurrEstab") >= 2);
	CHECK(ut_snmp("Tcp", "OutSegs") >= segs + 3);   /* SYN, SYN-ACK, ACK */
	close(s);
	close(c);
	a = loopback(port_of(l));
	close(l);                                   /* now nobody listens there */
	int f = CHECK_OK(socket(AF_INET, SOCK_STREAM, 0));
	CHECK_ERR(connect(f, (struct sockaddr *)&a, sizeof a), ECONNREFUSED);
	CHECK(ut_snmp("Tcp", "AttemptFails") > fails);
	CHECK(ut_snmp("Tcp", "OutRsts") > rsts);
	close(f);
}

/* A field of /proc/net/sockstat's line ("TCP:", "inuse"), or -1. */
static long sockstat(const char *line, const char *field)
{
	char buf[4096], key[32];
	long n = ut_read_file("/proc/net/sockstat", buf, sizeof buf - 1);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	snprintf(key, sizeof key, " %s ", field);
	for (char *l = buf; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		if (strncmp(l, line, strlen(line)) != 0)
			continue;
		char *end = strchr(l, '\n'), *at = strstr(l, key);
		return at && (!end || at < end) ? strtol(at + strlen(key), NULL, 10) : -1;
	}
	return -1;
}

/* One try of test_sockstat's counts: a UDP socket and a TCP connection
 * (three sockets) made, the counts read before and with them.  Whether
 * every count grew by at least as much. */
static int sockstat_grows(void)
{
	long used = sockstat("sockets:", "used"), tcp = sockstat("TCP:", "inuse");
	long alloc = sockstat("TCP:", "alloc"), udp = sockstat("UDP:", "inuse");
	CHECK(used >= 0 && tcp >= 0 && alloc >= 0 && udp >= 0);
	int u = CHECK_OK(socket(AF_INET, SOCK_DGRAM, 0));
	struct sockaddr_in a = loopback(0);
	CHECK_OK(bind(u, (struct sockaddr *)&a, sizeof a));
	int l, c, s;
	tcp_connection(&l, &c, &s);
	int grew = sockstat("UDP:", "inuse") >= udp + 1 &&
		   sockstat("TCP:", "inuse") >= tcp + 3 &&         /* listener and both ends */
		   sockstat("TCP:", "alloc") >= alloc + 3 &&
		   sockstat("sockets:", "used") >= used + 4;
	close(s);
	close(c);
	close(l);
	close(u);
	return grew;
}

/* sockstat's counts follow the sockets made and closed.  The counts are
 * the machine's: an earlier test's connection finishing its close in the
 * background (a FIN exchange, TIME_WAIT's end) lowers them meanwhile, so
 * a try that sees less than it made is tried again, up to five times. */
static void test_sockstat(void)
{
	CHECK(sockstat("FRAG:", "inuse") >= 0);
	CHECK(sockstat("RAW:", "inuse") >= 0);
	int grew = 0;
	for (int try = 0; try < 5 && !grew; try++)
		grew = sockstat_grows();
	CHECK(grew);
}

/* Connections the client closed first wait in TIME_WAIT for a minute;
 * sockstat counts them (tw), and they hold no buffers (TCP's mem does not
 * grow with them: a busy client leaves thousands). */
static void test_time_wait(void)
{
	enum { N = 64 };
	long tw = sockstat("TCP:", "tw"), mem = sockstat("TCP:", "mem");
	long inuse = sockstat("TCP:", "inuse");
	CHECK(tw >= 0 && mem >= 0 && inuse >= 0);
	int l = CHECK_OK(socket(AF_INET, SOCK_STREAM, 0));
	struct sockaddr_in a = loopback(0);
	CHECK_OK(bind(l, (struct sockaddr *)&a, sizeof a));
	CHECK_OK(listen(l, N));
	a = loopback(port_of(l));
	for (int i = 0; i < N; i++) {
		int c = socket(AF_INET, SOCK_STREAM, 0);
		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof a) < 0) {
			CHECK(!"connect");
			break;
		}
		int s = accept(l, NULL, NULL);
		close(c);                           /* the client first: it keeps TIME_WAIT */
		char b;
		struct pollfd pf = { s, POLLIN, 0 };
		poll(&pf, 1, GUARD_MS);
		CHECK_EQ(read(s, &b, 1), 0);
		close(s);
	}
	/* until the clients are all in TIME_WAIT and the servers' ends gone
	 * (the last LAST_ACK may still wait for its ACK) */
	long now = 0;
	for (int t = 0; t < 100; t++) {
		now = sockstat("TCP:", "tw");
		if (now >= tw + N && sockstat("TCP:", "inuse") <= inuse + 1)
			break;
		usleep(20000);
	}
	CHECK(now >= tw + N);
	CHECK(sockstat("TCP:", "mem") <= mem + 16);
	close(l);
}

/* A listener that never accepts: the SYNs past its backlog are dropped
 * and counted in /proc/net/netstat's TcpExt. */
static void test_listen_drops(void)
{
	const char *ns = "/proc/net/netstat";
	long long over = ut_snmp_in(ns, "TcpExt", "ListenOverflows");
	long long drops = ut_snmp_in(ns, "TcpExt", "ListenDrops");
	CHECK(over >= 0 && drops >= 0);
	int l = CHECK_OK(socket(AF_INET, SOCK_STREAM, 0));
	struct sockaddr_in a = loopback(0);
	CHECK_OK(bind(l, (struct sockaddr *)&a, sizeof a));
	CHECK_OK(listen(l, 1));
	a = loopback(port_of(l));
	int c[5];
	for (int i = 0; i < 5; i++) {
		c[i] = CHECK_OK(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
		int r = connect(c[i], (struct sockaddr *)&a, sizeof a);
		CHECK(r == 0 || errno == EINPROGRESS);
	}
	long long now = 0;
	for (int t = 0; t < 50 && (now = ut_snmp_in(ns, "TcpExt", "ListenOverflows")) <= over; t++)
		usleep(20000);
	CHECK(now > over);
	CHECK(ut_snmp_in(ns, "TcpExt", "ListenDrops") > drops);
	for (int i = 0; i < 5; i++)
		close(c[i]);
	close(l);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	test_ifconf();
	test_dev_and_udp();
	test_tcp();
	test_raw();
	test_unix();
	test_snmp();
	test_sockstat();
	test_time_wait();
	test_listen_drops();
	return ut_done();
}
