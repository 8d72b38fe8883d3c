/*
 * pipe -- a round trip between two processes over two pipes: the parent
 * writes one byte to the child, the child writes one byte back (Sprite's
 * cswitch).  Each operation is one round trip, so two context switches
 * (or two cross-processor wake-ups, when the processes run on different
 * CPUs).
 *
 * System calls: pipe, fork, read, write, close, exit_group (child), wait4,
 * clock_gettime.
 */
#include "bench.h"
#include <sys/wait.h>

const char bench_name[] = "pipe";

/* The child's side: echo each byte back until end of file. */
static void echo_loop(int in, int out)
{
	char c;

	while (syscall(SYS_read, in, &c, 1) == 1) {
		if (syscall(SYS_write, out, &c, 1) != 1)
			syscall(SYS_exit_group, 1);
	}
	syscall(SYS_exit_group, 0);
}

long long measure(long n)
{
	int to_child[2], to_parent[2];

	if (syscall(SYS_pipe, to_child) < 0)
		return -errno;
	if (syscall(SYS_pipe, to_parent) < 0)
		return -errno;
	long pid = syscall(SYS_fork);
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		syscall(SYS_close, to_child[1]);
		syscall(SYS_close, to_parent[0]);
		echo_loop(to_child[0], to_parent[1]);
	}
	syscall(SYS_close, to_child[0]);
	syscall(SYS_close, to_parent[1]);

	long long err = 0;
	errno = 0;
	char c = 'x';
	long long start = bench_now_ns();
	for (long i = 0; i < n; i++) {
		if (syscall(SYS_write, to_child[1], &c, 1) != 1 ||
		    syscall(SYS_read, to_parent[0], &c, 1) != 1) {
			err = errno ? -errno : -EPIPE;
			break;
		}
	}
	long long ns = bench_now_ns() - start;

	syscall(SYS_close, to_child[1]);          /* the child sees end of file */
	int status;
	syscall(SYS_wait4, pid, &status, 0, NULL);
	syscall(SYS_close, to_parent[0]);
	if (err)
		return err;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -ECHILD;
	return ns;
}

BENCH_MAIN
