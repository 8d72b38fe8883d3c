/*
 * tcp_crr -- TCP connection rate over loopback: connect, one byte each
 * way, close (issue 35: netperf's TCP_CRR).  A child accepts, reads the
 * byte, answers it and closes; each operation is one whole connection,
 * its handshake, the exchange and the client's close (the side that
 * closes first keeps TIME_WAIT, as on a real client).  The accept side
 * closes after the client's end of file, so its own close never resets.
 *
 * System calls: socket, bind, listen, getsockname, connect, setsockopt,
 * accept, fork, read, write, close, kill, exit_group (child), wait4,
 * clock_gettime.
 */
#include "bench.h"
#include "net.h"
#include <signal.h>
#include <sys/wait.h>

const char bench_name[] = "tcp_crr";

static void server(int l)
{
	for (;;) {
		int fd = (int)syscall(SYS_accept, l, NULL, NULL);
		char c;

		if (fd < 0)
			syscall(SYS_exit_group, 1);
		if (syscall(SYS_read, fd, &c, 1) == 1)
			syscall(SYS_write, fd, &c, 1);
		while (syscall(SYS_read, fd, &c, 1) > 0)       /* to the client's FIN */
			;
		syscall(SYS_close, fd);
	}
}

/* One connection: 0 or -errno. */
static long one_connection(unsigned short port)
{
	char c = 'x';
	int fd = net_connect(port, 1);

	if (fd < 0)
		return fd;
	long err = 0;
	if (syscall(SYS_write, fd, &c, 1) != 1 || syscall(SYS_read, fd, &c, 1) != 1)
		err = errno ? -errno : -EPIPE;
	syscall(SYS_close, fd);
	return err;
}

long long measure(long n)
{
	unsigned short port;
	int l = net_bound(SOCK_STREAM, &port);

	if (l < 0)
		return l;
	long pid = syscall(SYS_fork);
	if (pid < 0)
		return -errno;
	if (pid == 0)
		server(l);
	syscall(SYS_close, l);

	long long err = 0;
	errno = 0;
	long long start = bench_now_ns();
	for (long i = 0; i < n && !err; i++)
		err = one_connection(port);
	long long ns = bench_now_ns() - start;

	return bench_kill_reap(pid, err, ns);
}

BENCH_MAIN
