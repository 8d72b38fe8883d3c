/*
 * unix_bw -- AF_UNIX stream bandwidth: 64 KiB writes from the parent to
 * a child that reads and discards them (issue 31).  Each operation is one
 * 64 KiB write; MB/s is 65536 / us_per_op.  The child's read of the last
 * byte is waited for (it acknowledges the total), so the time covers the
 * data's arrival, not only its queueing.
 *
 * System calls: socketpair, fork, read, write, shutdown, close,
 * exit_group (child), wait4, clock_gettime.
 */
#include "bench.h"
#include <sys/socket.h>
#include <sys/wait.h>

#define CHUNK 65536

const char bench_name[] = "unix_bw";

static char buf[CHUNK];



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
		bench_sink(sv[1], buf, sizeof buf);
	}
	syscall(SYS_close, sv[1]);

	long long err = 0;
	long long start = bench_now_ns();
	for (long i = 0; i < n && !err; i++) {
		long w = bench_write_all(sv[0], buf, sizeof buf);
		if (w < 0)
			err = w;
	}
	syscall(SYS_shutdown, sv[0], SHUT_WR);    /* the child reads end of file */
	char c = 0;
	if (!err && syscall(SYS_read, sv[0], &c, 1) != 1)
		err = -EPIPE;
	long long ns = bench_now_ns() - start;

	return bench_reap(sv[0], pid, err, c == 'k', ns);
}

BENCH_MAIN
