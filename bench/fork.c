/*
 * fork -- fork() of a small process whose child exits at once, and the
 * parent's wait4() for it: process creation, address-space copy (copy on
 * write), exit and reaping.  The raw fork system call is used, not musl's
 * fork(), which adds signal-mask and gettid calls.
 *
 * System calls: fork, exit_group (child), wait4, clock_gettime, write.
 */
#include "bench.h"
#include <sys/wait.h>

const char bench_name[] = "fork";

long long measure(long n)
{
	long long start = bench_now_ns();

	for (long i = 0; i < n; i++) {
		long pid = syscall(SYS_fork);
		if (pid < 0)
			return -errno;
		if (pid == 0)
			syscall(SYS_exit_group, 0);
		int status;
		if (syscall(SYS_wait4, pid, &status, 0, NULL) != pid)
			return -errno;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			return -ECHILD;
	}
	return bench_now_ns() - start;
}

BENCH_MAIN
