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


long long measure(long n)
{
	int fd, peer;
	int made = net_pair(1, &fd, &peer);

	if (made < 0)
		return made;
	long pid = syscall(SYS_fork);
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		syscall(SYS_close, fd);
		bench_echo_loop(peer);
	}
	syscall(SYS_close, peer);

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

	return bench_reap(fd, pid, err, 1, ns);   /* the child reads end of file */
}

BENCH_MAIN
