/*
 * thread -- Tornado's thread creation test (seed 004, 7.2): n workers,
 * one per processor, each creating a thread and joining it, over and
 * over.  Two forms, as in the paper:
 *
 *     thread P [COUNT]       multithreaded: P worker threads in one process
 *     thread -p P [COUNT]    multiprogrammed: P processes of one worker each
 *
 *     bench thread procs=P us_per_op=U ops=N total_s=S     (or threadmp)
 *
 * A worker is pinned to processor i mod the processors allowed
 * (sched_setaffinity), waits until all workers exist, then times COUNT
 * (default 1000) pthread_create + pthread_join pairs of a thread that
 * returns at once.  U is microseconds per create+join as one worker sees
 * it, averaged over the workers; N counts every worker's pairs, S is the
 * longest worker's time.  The gap between the two forms is the cost of
 * what the threads of one process share in the kernel.
 *
 * System calls: those of musl's pthread_create and pthread_join (mmap,
 * mprotect, clone, futex, munmap, rt_sigprocmask, exit), fork and wait4
 * (-p), sched_getaffinity, sched_setaffinity, clock_gettime, write,
 * exit_group.
 */
#include "bench.h"
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>

const char bench_name[] = "thread";

#define MAX_WORKERS 64

struct shared {
	volatile long long ns[MAX_WORKERS];
	volatile long bad[MAX_WORKERS];
	volatile int ready;             /* workers waiting at the start */
};

static struct shared *sh;
static int workers;
static long count = 1000;
static cpu_set_t allowed;

static void pin(int i)
{
	int cpus = CPU_COUNT(&allowed), seen = 0;
	for (int c = 0; c < CPU_SETSIZE && cpus > 0; c++) {
		if (!CPU_ISSET(c, &allowed) || seen++ != i % cpus)
			continue;
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		sched_setaffinity(0, sizeof one, &one);
		return;
	}
}

static void *child(void *arg)
{
	return arg;
}

/* Worker i: meet the others, then time count create+join pairs. */
static void work(int i)
{
	pin(i);
	__atomic_add_fetch(&sh->ready, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&sh->ready, __ATOMIC_SEQ_CST) < workers)
		sched_yield();
	long long start = bench_now_ns();
	for (long n = 0; n < count; n++) {
		pthread_t t;
		void *ret;
		if (pthread_create(&t, NULL, child, (void *)n) || pthread_join(t, &ret) ||
		    ret != (void *)n) {
			sh->bad[i] = 1;
			return;
		}
	}
	sh->ns[i] = bench_now_ns() - start;
}

static void *worker_thread(void *arg)
{
	work((int)(long)arg);
	return NULL;
}

static void run_threads(void)
{
	pthread_t t[MAX_WORKERS];
	for (int i = 0; i < workers; i++)
		if (pthread_create(&t[i], NULL, worker_thread, (void *)(long)i))
			bench_fail("pthread_create", EAGAIN);
	for (int i = 0; i < workers; i++)
		pthread_join(t[i], NULL);
}

static void run_processes(void)
{
	for (int i = 0; i < workers; i++) {
		long pid = syscall(SYS_fork);
		if (pid < 0)
			bench_fail("fork", errno);
		if (pid == 0) {
			work(i);
			syscall(SYS_exit_group, 0);
		}
	}
	for (int i = 0; i < workers; i++) {
		int st;
		if (syscall(SYS_wait4, -1, &st, 0, NULL) < 0)
			bench_fail("wait4", errno);
	}
}

static void usage(void)
{
	bench_puts(2, "usage: thread [-p] WORKERS [COUNT]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int procs = argc > 1 && !strcmp(argv[1], "-p");
	int a = 1 + procs;
	if (argc <= a || argc > a + 2)
		usage();
	workers = atoi(argv[a]);
	if (argc > a + 1)
		count = atol(argv[a + 1]);
	if (workers < 1 || workers > MAX_WORKERS || count < 1)
		usage();
	sched_getaffinity(0, sizeof allowed, &allowed);
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		bench_fail("mmap", errno);
	if (procs)
		run_processes();
	else
		run_threads();
	long long longest = 0;
	double us = 0;
	for (int i = 0; i < workers; i++) {
		if (sh->bad[i] || !sh->ns[i])
			bench_fail("create+join", EAGAIN);
		longest = sh->ns[i] > longest ? sh->ns[i] : longest;
		us += sh->ns[i] / 1000.0 / count;
	}
	char line[256];
	snprintf(line, sizeof line, "bench %s procs=%d us_per_op=%.4f ops=%ld total_s=%.6f\n",
		 procs ? "threadmp" : "thread", workers, us / workers, count * workers,
		 longest / 1e9);
	bench_puts(1, line);
	return 0;
}
