/*
 * null_syscall -- the cost of the cheapest system call: getppid(), made
 * with syscall() so that no library cache can answer it.
 *
 * System calls: getppid, clock_gettime, write, exit_group.
 */
#include "bench.h"

const char bench_name[] = "null_syscall";

long long measure(long n)
{
	long long start = bench_now_ns();

	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	return bench_now_ns() - start;
}

BENCH_MAIN
