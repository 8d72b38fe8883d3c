/*
 * tcp_bw -- TCP bandwidth over loopback: 64 KiB writes from the parent to
 * a child that reads and discards them (issue 35; unix_bw on TCP, what
 * iperf3 measures, without its own costs).  Each operation is one 64 KiB
 * write; MB/s is 65536 / us_per_op.  The child's read of the last byte
 * is waited for (it answers one byte after end of file), so the time
 * covers the data's arrival, not only its queueing.
 *
 * System calls: socket, bind, listen, getsockname, connect, accept, fork,
 * read, write, shutdown, close, exit_group (child), wait4, clock_gettime.
 */
#include "bench.h"
#include "net.h"
#include <sys/wait.h>

#define CHUNK 65536

const char bench_name[] = "tcp_bw";

static char buf[CHUNK];



long long measure(long n)
{
	int fd, peer;
	int made = net_pair(0, &fd, &peer);

	if (made < 0)
		return made;
	long pid = syscall(SYS_fork);
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		syscall(SYS_close, fd);
		bench_sink(peer, buf, sizeof buf);
	}
	syscall(SYS_close, peer);

	long long err = 0;
	long long start = bench_now_ns();
	for (long i = 0; i < n && !err; i++) {
		long w = bench_write_all(fd, buf, sizeof buf);
		if (w < 0)
			err = w;
	}
	syscall(SYS_shutdown, fd, SHUT_WR);       /* the child reads end of file */
	char c = 0;
	if (!err && syscall(SYS_read, fd, &c, 1) != 1)
		err = -EPIPE;
	long long ns = bench_now_ns() - start;

	return bench_reap(fd, pid, err, c == 'k', ns);
}

BENCH_MAIN
