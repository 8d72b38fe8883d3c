/*
 * memtouch -- SALSA's local against global memory allocation (seed 002,
 * sections 4-5): P processes, each pinned to its own CPU, touch a private
 * anonymous region (its pages are allocated then, by the touching CPU,
 * from the node alloc= chooses on Tempest) and read it again and again.
 *
 *     memtouch [-p PROCS] [-m MIB] [-r PASSES]
 *
 *     bench memtouch procs=P mib=M us_per_op=U ops=N total_s=S touch_s=T
 *           [local_pages=L remote_pages=R]
 *
 * PROCS defaults to one per usable CPU, MIB to 4 per process, PASSES to 8.
 * An operation is the re-read of one page (a load from each of its 64-byte
 * lines); U is microseconds per page re-read as one process sees it,
 * averaged over the processes; N counts every process's pages re-read; S
 * is the longest process's re-reading time, T the longest first touch.
 * L and R, when /proc/vmstat has numa_local and numa_other (Tempest: the
 * user data pages taken on the allocating CPU's node and on another;
 * Linux: every page allocation), are how much they grew over the run.
 *
 * Under emulation a remote access costs what a local one does (QEMU has no
 * NUMA latency), so U does not change with the policy there; L and R show
 * where the pages went, which is what alloc= changes.
 *
 * System calls: mmap, munmap, fork, wait4, pipe, read, write, open, close,
 * sched_getaffinity, sched_setaffinity, clock_gettime, exit_group.
 */
#include "bench.h"
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>

const char bench_name[] = "memtouch";

#define PAGE 4096L
#define LINE 64
#define MAX_PROCS 256

struct report {
	long long read_ns, touch_ns;
	long pages;
	long err;
};

static volatile unsigned long sink;     /* keeps the re-reads */

/* One process: map, touch (timed), re-read PASSES times (timed), report. */
static void worker(int cpu, long pages, int passes, int out)
{
	struct report r = { 0, 0, 0, 0 };

	bench_pin(cpu);
	volatile char *p = (void *)syscall(SYS_mmap, NULL, pages * PAGE, PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		r.err = errno;
	} else {
		long long t0 = bench_now_ns();
		for (long i = 0; i < pages; i++)
			p[i * PAGE] = (char)i;
		long long t1 = bench_now_ns();
		unsigned long sum = 0;
		for (int k = 0; k < passes; k++)
			for (long off = 0; off < pages * PAGE; off += LINE)
				sum += p[off];
		r.read_ns = bench_now_ns() - t1;
		r.touch_ns = t1 - t0;
		r.pages = pages * passes;
		sink += sum;
		syscall(SYS_munmap, p, pages * PAGE);
	}
	syscall(SYS_write, out, &r, sizeof r);
	syscall(SYS_exit_group, r.err ? 1 : 0);
}

/* numa_local and numa_other from /proc/vmstat; false if it has neither. */
static int vmstat(long *local, long *other)
{
	char buf[8192];
	int fd = syscall(SYS_open, "/proc/vmstat", O_RDONLY);

	*local = *other = -1;
	if (fd < 0)
		return 0;
	long n = 0, r;
	while (n < (long)sizeof buf - 1 && (r = syscall(SYS_read, fd, buf + n, sizeof buf - 1 - n)) > 0)
		n += r;
	syscall(SYS_close, fd);
	buf[n] = 0;
	for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (strncmp(line, "numa_local ", 11) == 0)
			*local = strtol(line + 11, NULL, 10);
		else if (strncmp(line, "numa_other ", 11) == 0)
			*other = strtol(line + 11, NULL, 10);
	}
	return *local >= 0 && *other >= 0;
}

static void usage(int status)
{
	bench_puts(status ? 2 : 1,
		   "usage: memtouch [-p PROCS] [-m MIB] [-r PASSES]\n"
		   "  PROCS processes (default one per usable CPU), each pinned to a CPU, touch\n"
		   "  MIB MiB (default 4) of private memory and read it PASSES times (default 8).\n"
		   "  Prints: bench memtouch procs=P mib=M us_per_op=U ops=N total_s=S touch_s=T\n"
		   "  [local_pages=L remote_pages=R]   (U: microseconds per page re-read)\n");
	syscall(SYS_exit_group, status);
}

int main(int argc, char **argv)
{
	int list[CPU_SETSIZE];
	int ncpu = bench_allowed_cpus(list, CPU_SETSIZE), procs = ncpu > 0 ? ncpu : 1, passes = 8;
	long mib = 4;

	if (ncpu == 0)
		list[ncpu++] = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			usage(0);
		if (i + 1 >= argc)
			usage(2);
		const char *opt = argv[i], *val = argv[++i];
		if (strcmp(opt, "-p") == 0)
			procs = bench_arg(val, 1, MAX_PROCS, usage);
		else if (strcmp(opt, "-m") == 0)
			mib = bench_arg(val, 1, 1024, usage);
		else if (strcmp(opt, "-r") == 0)
			passes = bench_arg(val, 1, 100000, usage);
		else
			usage(2);
	}
	long pages = mib * (1024 * 1024 / PAGE);
	int out[2];
	if (syscall(SYS_pipe, out) < 0)
		bench_fail("pipe", errno);
	long local0, other0, local1, other1;
	int have = vmstat(&local0, &other0);
	for (int i = 0; i < procs; i++) {
		long pid = syscall(SYS_fork);
		if (pid < 0)
			bench_fail("fork", errno);
		if (pid == 0)
			worker(list[i % ncpu], pages, passes, out[1]);
	}
	syscall(SYS_close, out[1]);
	struct report r;
	long ops = 0, err = 0;
	int got = 0;
	double us_sum = 0, longest = 0, touch = 0;
	while (syscall(SYS_read, out[0], &r, sizeof r) == (long)sizeof r) {
		got++;
		if (r.err) {
			err = r.err;
			continue;
		}
		ops += r.pages;
		us_sum += r.pages ? r.read_ns / 1e3 / r.pages : 0;
		longest = r.read_ns / 1e9 > longest ? r.read_ns / 1e9 : longest;
		touch = r.touch_ns / 1e9 > touch ? r.touch_ns / 1e9 : touch;
	}
	int failed = got != procs;
	for (int i = 0; i < procs; i++) {
		int status = 0;
		if (syscall(SYS_wait4, -1, &status, 0, NULL) < 0)
			break;
		failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	}
	if (err)
		bench_fail("mmap", err);
	if (failed)
		bench_fail("worker", 0);
	have = have && vmstat(&local1, &other1);
	char line[320], counts[96] = "";
	if (have)
		snprintf(counts, sizeof counts, " local_pages=%ld remote_pages=%ld",
			 local1 - local0, other1 - other0);
	snprintf(line, sizeof line, "bench memtouch procs=%d mib=%ld us_per_op=%.4f ops=%ld "
		 "total_s=%.6f touch_s=%.6f%s\n", procs, mib, us_sum / procs, ops, longest, touch,
		 counts);
	bench_puts(1, line);
	return 0;
}
