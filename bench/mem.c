/*
 * mem -- Sprite's memory benchmark (seed 003, 5.2): grow the heap with
 * brk one page at a time and touch the new page, so each operation is a
 * heap extension plus a demand-zero fault on an untouched page.
 *
 * The heap grows to at most TOP_PAGES pages (8 MiB).  At the top the
 * program execs itself (Sprite's version started afresh the same way),
 * handing on in its arguments the operations still to do and the time
 * and count so far, so the new image starts with an empty heap; the exec
 * is outside the timed part.  The result line is the usual one
 * (bench.h), printed by the last image.
 *
 *     mem [COUNT | -t SECONDS]
 *
 * With a time, the count comes from a calibration run of CAL_PAGES
 * pages, then one run of the count that should fill the time.
 *
 * System calls: brk, execve, clock_gettime, write, exit_group.
 */
#include "bench.h"

const char bench_name[] = "mem";

#define PAGE 4096L
#define TOP_PAGES 2048L
#define CAL_PAGES 256L

/* Grows the heap by pages pages from its current end, touching each;
 * returns the nanoseconds, or -errno. */
static long long grow(long pages)
{
	char *base = (char *)syscall(SYS_brk, 0);
	long long start = bench_now_ns();

	for (long i = 0; i < pages; i++) {
		char *want = base + (i + 1) * PAGE;
		if ((char *)syscall(SYS_brk, want) != want)
			return -ENOMEM;
		((volatile char *)base)[i * PAGE] = 1;
	}
	return bench_now_ns() - start;
}

/* Shrinks the heap back to base (between calibration and the run). */
static void shrink(char *base)
{
	syscall(SYS_brk, base);
}

static void print_result(long long ns, long n)
{
	char line[256];

	snprintf(line, sizeof line, "bench %s us_per_op=%.4f ops=%ld total_s=%.6f\n",
		 bench_name, ns / 1e3 / n, n, ns / 1e9);
	bench_puts(1, line);
}

/* Does left more operations, re-execing at the top; never returns. */
static void run(char *self, long left, long long ns_so_far, long done)
{
	long pages = left < TOP_PAGES ? left : TOP_PAGES;
	long long ns = grow(pages);

	if (ns < 0)
		bench_fail("brk", ns);
	ns_so_far += ns;
	done += pages;
	left -= pages;
	if (left == 0) {
		print_result(ns_so_far, done);
		syscall(SYS_exit_group, 0);
	}
	char a1[32], a2[32], a3[32];
	snprintf(a1, sizeof a1, "%ld", left);
	snprintf(a2, sizeof a2, "%lld", ns_so_far);
	snprintf(a3, sizeof a3, "%ld", done);
	char *argv[] = { self, "--continue", a1, a2, a3, NULL };
	char *envp[] = { NULL };
	syscall(SYS_execve, self, argv, envp);
	bench_fail("execve", errno);
}

int main(int argc, char **argv)
{
	long n = 0;
	double target_s = 1.0;

	if (argc == 5 && strcmp(argv[1], "--continue") == 0) {
		run(argv[0], atol(argv[2]), atoll(argv[3]), atol(argv[4]));
	} else if (argc == 3 && strcmp(argv[1], "-t") == 0) {
		target_s = strtod(argv[2], NULL);
		if (!(target_s > 0))
			bench_usage();
	} else if (argc == 2) {
		char *end;
		n = strtol(argv[1], &end, 10);
		if (*end || n <= 0)
			bench_usage();
	} else if (argc != 1) {
		bench_usage();
	}
	if (n == 0) {
		char *base = (char *)syscall(SYS_brk, 0);
		long long ns = grow(CAL_PAGES);
		if (ns < 0)
			bench_fail("brk", ns);
		shrink(base);
		n = (long)(target_s * 1e9 / ((double)ns / CAL_PAGES));
		if (n < 1)
			n = 1;
	}
	run(argv[0], n, 0, 0);
	return 0;
}
