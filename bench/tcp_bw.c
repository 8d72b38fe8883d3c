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

/* The child: read until end of file, then send back one byte. */
static void sink(int fd)
{
	long r;

	while ((r = syscall(SYS_read, fd, buf, sizeof buf)) > 0)
		;
	char c = r == 0 ? 'k' : 'e';
	syscall(SYS_write, fd, &c, 1);
	syscall(SYS_exit_group, 0);
}

/* Write all of buf: the bytes written, or -errno. */
static long write_all(int fd)
{
	size_t done = 0;

	while (done < sizeof buf) {
		long w = syscall(SYS_write, fd, buf + done, sizeof buf - done);
		if (w <= 0)
			return w < 0 ? -errno : -EPIPE;
		done += (size_t)w;
	}
	return (long)done;
}

long long measure(long n)
{
	unsigned short port;
	int l = net_bound(SOCK_STREAM, &port);

	if (l < 0)
		return l;
	int fd = net_connect(port, 0);
	if (fd < 0)
		return fd;
	int peer = (int)syscall(SYS_accept, l, NULL, NULL);
	if (peer < 0)
		return -errno;
	long pid = syscall(SYS_fork);
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		syscall(SYS_close, fd);
		sink(peer);
	}
	syscall(SYS_close, peer);
	syscall(SYS_close, l);

	long long err = 0;
	long long start = bench_now_ns();
	for (long i = 0; i < n && !err; i++) {
		long w = write_all(fd);
		if (w < 0)
			err = w;
	}
	syscall(SYS_shutdown, fd, SHUT_WR);       /* the child reads end of file */
	char c = 0;
	if (!err && syscall(SYS_read, fd, &c, 1) != 1)
		err = -EPIPE;
	long long ns = bench_now_ns() - start;

	syscall(SYS_close, fd);
	int status;
	syscall(SYS_wait4, pid, &status, 0, NULL);
	if (err)
		return err;
	if (c != 'k' || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -ECHILD;
	return ns;
}

BENCH_MAIN
