/*
 * udp_lat -- UDP request-response latency over loopback: a one-byte
 * datagram to a child that sends it back (issue 35: netperf's UDP_RR).
 * Each operation is one round trip; both sockets are connected, so each
 * send and receive is a plain write and read.
 *
 * System calls: socket, bind, getsockname, connect, fork, read, write,
 * close, kill, exit_group (child), wait4, clock_gettime.
 */
#include "bench.h"
#include "net.h"
#include <signal.h>
#include <sys/wait.h>

const char bench_name[] = "udp_lat";

static void echo_loop(int fd)
{
	char c;

	while (syscall(SYS_read, fd, &c, 1) == 1)
		syscall(SYS_write, fd, &c, 1);
	syscall(SYS_exit_group, 1);
}

/* Connect fd to 127.0.0.1:port: 0 or -errno. */
static long connect_to(int fd, unsigned short port)
{
	struct sockaddr_in a = net_loopback(port);

	return syscall(SYS_connect, fd, &a, sizeof a) < 0 ? -errno : 0;
}

long long measure(long n)
{
	unsigned short mine = 0, theirs = 0;
	int me = net_bound(SOCK_DGRAM, &mine);
	int other = net_bound(SOCK_DGRAM, &theirs);

	if (me < 0 || other < 0)
		return me < 0 ? me : other;
	if (connect_to(me, theirs) < 0 || connect_to(other, mine) < 0)
		return -errno;
	long pid = syscall(SYS_fork);
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		syscall(SYS_close, me);
		echo_loop(other);
	}
	syscall(SYS_close, other);

	long long err = 0;
	errno = 0;
	char c = 'x';
	long long start = bench_now_ns();
	for (long i = 0; i < n; i++) {
		if (syscall(SYS_write, me, &c, 1) != 1 || syscall(SYS_read, me, &c, 1) != 1) {
			err = errno ? -errno : -EPIPE;
			break;
		}
	}
	long long ns = bench_now_ns() - start;

	syscall(SYS_close, me);
	return bench_kill_reap(pid, err, ns);
}

BENCH_MAIN
