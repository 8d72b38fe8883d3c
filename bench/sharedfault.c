/*
 * sharedfault -- Hurricane's shared page-fault test (seed 000, 4.2): P
 * processes, one per processor, map the same few pages of one file
 * MAP_SHARED, each writes every page (each write a fault of its own on a
 * page the others fault on too), meet at a barrier, unmap, meet again and
 * repeat.  Only the writes are timed; the result is microseconds per
 * fault as one process sees it, averaged over the processes.
 *
 *     sharedfault [-t] [-i] P [ROUNDS]     (ROUNDS defaults to 100)
 *
 *     bench sharedfault procs=P us_per_op=U ops=N total_s=S
 *
 * With -i each process maps a file of its own instead (printed as
 * "bench incorefault ..."): after the first round its pages stay in the
 * page cache, so every fault is Tornado's in-core page fault on an
 * independent object (seed 004, 7.2), with nothing shared but the kernel.
 *
 * With -t the workers are P threads of one process instead ("bench
 * sharedfault_mt ..." or "incorefault_mt"): Tornado's multithreaded form,
 * every fault in one address space.
 *
 * N counts every process's faults, S is the longest process's timed
 * total.  The barrier is kept by the parent with pipes: each worker writes
 * a byte to the parent's pipe and blocks reading its own; once the parent
 * has read a byte from every worker it writes one to each.  Nobody spins,
 * so it also works with more processes than (host) processors.  The
 * workers report their times through a shared file mapping.  The files
 * are made in /tmp.
 *
 * System calls: open, ftruncate, unlink, mmap, munmap, fork,
 * sched_getaffinity, sched_setaffinity, pipe, read, wait4, clock_gettime,
 * write, exit_group.
 */
#include "bench.h"
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>

const char bench_name[] = "sharedfault";
static const char *name = bench_name;

#define PAGE 4096L
#define PAGES 4L
#define MAX_PROCS 64

struct shared {
	volatile long long ns[MAX_PROCS];
	volatile long bad[MAX_PROCS];
};

static int procs;
static int threaded;            /* -t: the workers are threads */
static struct shared *sh;

static void *map_file(const char *path, long len)
{
	int fd = syscall(SYS_open, path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		bench_fail("open", errno);
	if (syscall(SYS_ftruncate, fd, len) < 0)
		bench_fail("ftruncate", errno);
	void *p = (void *)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		bench_fail("mmap", errno);
	syscall(SYS_unlink, path);
	return p;
}

static int arrive[2];                   /* workers -> parent */
static int go[MAX_PROCS][2];            /* parent -> worker i */

/* A worker at the barrier: say so, wait for the parent's word. */
static void barrier(int i)
{
	char c = 1;

	syscall(SYS_write, arrive[1], &c, 1);
	while (syscall(SYS_read, go[i][0], &c, 1) < 0 && errno == EINTR)
		;
}

/* The parent's side of every barrier of the run. */
static void keep_barriers(long count)
{
	char c;

	for (long k = 0; k < count; k++) {
		for (int n = 0; n < procs; n++)
			if (syscall(SYS_read, arrive[0], &c, 1) != 1)
				return;         /* every worker is gone: wait4 says how */
		for (int i = 0; i < procs; i++)
			syscall(SYS_write, go[i][1], &c, 1);
	}
}

static void pin(int i)
{
	int cpus[MAX_PROCS], n = bench_allowed_cpus(cpus, MAX_PROCS);

	if (n > 0)
		bench_pin(cpus[i % n]);
}

/* A file of PAGES pages, already unlinked. */
static int data_file(int i)
{
	char path[64];

	snprintf(path, sizeof path, "/tmp/sf.%d", i);
	int fd = syscall(SYS_open, path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		bench_fail("open", errno);
	if (syscall(SYS_ftruncate, fd, PAGES * PAGE) < 0)
		bench_fail("ftruncate", errno);
	syscall(SYS_unlink, path);
	return fd;
}

static void worker(int i, int fd, long rounds)
{
	long long ns = 0;

	pin(i);
	if (fd < 0)
		fd = data_file(i);
	for (long r = 0; r < rounds; r++) {
		char *p = (char *)syscall(SYS_mmap, NULL, PAGES * PAGE, PROT_READ | PROT_WRITE,
					  MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) {
			sh->bad[i] = errno;
			p = NULL;
		}
		long long start = bench_now_ns();
		for (long pg = 0; p && pg < PAGES; pg++)
			((volatile char *)p)[pg * PAGE + i] = (char)r;
		ns += bench_now_ns() - start;
		barrier(i);
		if (p)
			syscall(SYS_munmap, p, PAGES * PAGE);
		barrier(i);
	}
	sh->ns[i] = ns;
	if (!threaded)
		syscall(SYS_exit_group, 0);
}

static int thread_fd;
static long thread_rounds;

static void *worker_thread(void *arg)
{
	worker((int)(long)arg, thread_fd, thread_rounds);
	return NULL;
}

/* -t: the workers as threads; the main thread keeps the barriers. */
static int run_threads(int fd, long rounds)
{
	pthread_t th[MAX_PROCS];
	thread_fd = fd;
	thread_rounds = rounds;
	for (int i = 0; i < procs; i++)
		if (pthread_create(&th[i], NULL, worker_thread, (void *)(long)i))
			bench_fail("pthread_create", EAGAIN);
	keep_barriers(2 * rounds);
	int failed = 0;
	for (int i = 0; i < procs; i++) {
		pthread_join(th[i], NULL);
		failed |= sh->bad[i] != 0;
	}
	return failed;
}

int main(int argc, char **argv)
{
	long rounds = 100;
	char *end;

	int independent = 0;
	for (; argc > 1 && argv[1][0] == '-'; argv++, argc--) {
		if (strcmp(argv[1], "-i") == 0)
			independent = 1;
		else if (strcmp(argv[1], "-t") == 0)
			threaded = 1;
		else
			goto usage;
	}
	name = independent ? (threaded ? "incorefault_mt" : "incorefault")
			   : (threaded ? "sharedfault_mt" : "sharedfault");
	if (argc < 2 || argc > 3)
		goto usage;
	procs = strtol(argv[1], &end, 10);
	if (*end || procs < 1 || procs > MAX_PROCS)
		goto usage;
	if (argc == 3 && ((rounds = strtol(argv[2], &end, 10)) < 1 || *end))
		goto usage;
	sh = map_file("/tmp/sf.bar", sizeof *sh);
	int fd = independent ? -1 : data_file(MAX_PROCS);
	int pids[MAX_PROCS];
	if (syscall(SYS_pipe, arrive) < 0)
		bench_fail("pipe", errno);
	for (int i = 0; i < procs; i++)
		if (syscall(SYS_pipe, go[i]) < 0)
			bench_fail("pipe", errno);
	int failed = threaded ? run_threads(fd, rounds) : 0;
	for (int i = 0; !threaded && i < procs; i++) {
		pids[i] = syscall(SYS_fork);
		if (pids[i] < 0)
			bench_fail("fork", errno);
		if (pids[i] == 0)
			worker(i, fd, rounds);
	}
	if (!threaded) {
		syscall(SYS_close, arrive[1]);     /* once every worker is gone, reads see the end */
		keep_barriers(2 * rounds);
	}
	for (int i = 0; !threaded && i < procs; i++) {
		int status;
		while (syscall(SYS_wait4, pids[i], &status, 0, NULL) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || sh->bad[i])
			failed = 1;
	}
	if (failed)
		bench_fail("worker", 0);
	double us_sum = 0, longest = 0;
	for (int i = 0; i < procs; i++) {
		us_sum += sh->ns[i] / 1e3 / (rounds * PAGES);
		if (sh->ns[i] / 1e9 > longest)
			longest = sh->ns[i] / 1e9;
	}
	char line[256];
	snprintf(line, sizeof line, "bench %s procs=%d us_per_op=%.4f ops=%ld total_s=%.6f\n",
		 name, procs, us_sum / procs, rounds * PAGES * procs, longest);
	bench_puts(1, line);
	return 0;
usage:
	bench_puts(2, "usage: sharedfault [-t] [-i] PROCS [ROUNDS]\n");
	return 2;
}
