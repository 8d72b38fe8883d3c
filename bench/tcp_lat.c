/*
 * tcp_lat -- TCP round-trip latency over loopback: one byte to a child
 * and one byte back on an established connection, TCP_NODELAY on both
 * ends (issue 35; unix_lat on TCP).  Each operation is one round trip.
 *
 * System calls: socket, bind, listen, getsockname, connect, setsockopt,
 * accept, fork, read, write, close, exit_group (child), wait4,
 * clock_gettime.
 */
#include "bench.h"
#include "net.h"
#include <sys/wait.h>

const char bench_name[] = "tcp_lat";

static void echo_loop(int fd)
{
	char c;

	while (syscall(SYS_read, fd, &c, 1) == 1) {
		if (syscall(SYS_write, fd, &c, 1) != 1)
			syscall(SYS_exit_group, 1);
	}
	syscall(SYS_exit_group, 0);
}

long long measure(long n)
{
	unsigned short port;
	int one = 1;
	int l = net_bound(SOCK_STREAM, &port);

	if (l < 0)
		return l;
	int fd = net_connect(port, 1);
	if (fd < 0)
		return fd;
	int peer = (int)syscall(SYS_accept, l, NULL, NULL);
	if (peer < 0 || syscall(SYS_setsockopt, peer, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
		return -errno;
	long pid = syscall(SYS_fork);
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		syscall(SYS_close, fd);
		echo_loop(peer);
	}
	syscall(SYS_close, peer);
	syscall(SYS_close, l);

	long long err = 0;
	errno = 0;
	char c = 'x';
	long long start = bench_now_ns();
	for (long i = 0; i < n; i++) {
		if (syscall(SYS_write, fd, &c, 1) != 1 || syscall(SYS_read, fd, &c, 1) != 1) {
			err = errno ? -errno : -EPIPE;
			break;
		}
	}
	long long ns = bench_now_ns() - start;

	syscall(SYS_close, fd);                   /* the child reads end of file */
	int status;
	syscall(SYS_wait4, pid, &status, 0, NULL);
	if (err)
		return err;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -ECHILD;
	return ns;
}

BENCH_MAIN
