/*
 * unix_lat -- AF_UNIX stream latency: one byte to a child and one byte
 * back over a socketpair, the pipe benchmark's round trip on a socket
 * (issue 31).  Each operation is one round trip.
 *
 * System calls: socketpair, fork, read, write, close, exit_group (child),
 * wait4, clock_gettime.
 */
#include "bench.h"
#include <sys/socket.h>
#include <sys/wait.h>

const char bench_name[] = "unix_lat";


long long measure(long n)
{
	int sv[2];

	if (syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return -errno;
	long pid = syscall(SYS_fork);
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		syscall(SYS_close, sv[0]);
		bench_echo_loop(sv[1]);
	}
	syscall(SYS_close, sv[1]);

	long long err = 0;
	errno = 0;
	char c = 'x';
	long long start = bench_now_ns();
	for (long i = 0; i < n; i++) {
		if (syscall(SYS_write, sv[0], &c, 1) != 1 || syscall(SYS_read, sv[0], &c, 1) != 1) {
			err = errno ? -errno : -EPIPE;
			break;
		}
	}
	long long ns = bench_now_ns() - start;

	return bench_reap(sv[0], pid, err, 1, ns);   /* the child reads end of file */
}

BENCH_MAIN
