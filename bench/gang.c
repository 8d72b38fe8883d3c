/*
 * gang -- SALSA's space sharing against time slicing (seed 002, section
 * 6, Figure 11): two parallel programs on the same CPUs, each with W
 * workers that meet at a barrier after every few microseconds of work.
 *
 *     gang -m timeslice|spaceshare [-c CPUS] [-w WORKERS] [-r ROUNDS] [-u WORK]
 *
 *     bench gang mode=M cpus=C workers=W rounds=R elapsed_s=E a_s=A b_s=B
 *           rounds_per_s=X
 *
 * Each program is a process of W threads (W defaults to 4).  A round is
 * WORK units of arithmetic (default 2000, a few microseconds) and a
 * barrier; a thread waiting at the barrier spins for a while and then
 * gives up its processor with sched_yield until the last one arrives, as
 * SALSA's workers would, so a worker whose partner is not running lets
 * it run.  timeslice: both programs' threads may run on all C CPUs (the
 * first C this process may use, default 4), so the scheduler interleaves
 * them and a barrier often waits for a thread that is not running.
 * spaceshare: the first program's threads are pinned to the first half of
 * the CPUs, the second's to the other half (sched_setaffinity), a static
 * space sharing.  A and B are each program's completion time, E the time
 * until both finished (the paper's "total completion time"), X the rounds
 * of both programs per second of E.  Lower E is better.
 *
 * System calls: fork, wait4, mmap, sched_getaffinity, sched_setaffinity,
 * sched_yield, clock_gettime, write, exit_group; threads through musl's
 * pthread_create (clone, futex).
 */
#include "bench.h"
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>

const char bench_name[] = "gang";

#define MAX_WORKERS 32
#define SPIN_TRIES 2000         /* barrier polls before the first yield */

/* A sense-reversing barrier shared by one program's threads. */
struct barrier {
	volatile int count;     /* [atomic] threads still to arrive this round */
	volatile int sense;     /* [atomic] flips when the last one arrives */
	int n;
};

static struct barrier bar;
static int workers = 4, work = 2000;
static long rounds = 2000;
static cpu_set_t program_cpus;

static void barrier_wait(struct barrier *b, int *local_sense)
{
	*local_sense = !*local_sense;
	if (__atomic_sub_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == 0) {
		b->count = b->n;
		__atomic_store_n(&b->sense, *local_sense, __ATOMIC_RELEASE);
		return;
	}
	for (long i = 0; __atomic_load_n(&b->sense, __ATOMIC_ACQUIRE) != *local_sense; i++) {
		if (i < SPIN_TRIES)
			__builtin_ia32_pause();
		else
			syscall(SYS_sched_yield);
	}
}

static volatile unsigned long sink;

static void *worker(void *arg)
{
	int sense = 0;
	unsigned long x = (unsigned long)arg + 1;

	syscall(SYS_sched_setaffinity, 0, sizeof program_cpus, &program_cpus);
	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < work; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		barrier_wait(&bar, &sense);
	}
	sink += x;
	return NULL;
}

/* One program: W threads over the CPUs in cpus; its time in *ns. */
static int program(const cpu_set_t *cpus, volatile long long *ns)
{
	pthread_t th[MAX_WORKERS];

	program_cpus = *cpus;
	bar.n = bar.count = workers;
	long long start = bench_now_ns();
	for (int i = 0; i < workers; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(long)i))
			return 1;
	for (int i = 0; i < workers; i++)
		pthread_join(th[i], NULL);
	*ns = bench_now_ns() - start;
	return 0;
}

static void usage(int status)
{
	bench_puts(status ? 2 : 1,
		   "usage: gang -m timeslice|spaceshare [-c CPUS] [-w WORKERS] [-r ROUNDS] [-u WORK]\n"
		   "  two programs of WORKERS threads (default 4) each, ROUNDS rounds (default\n"
		   "  2000) of WORK units (default 2000) and a barrier; timeslice: both over the\n"
		   "  first CPUS usable CPUs (default 4); spaceshare: each on its own half.\n"
		   "  Prints: bench gang mode=M cpus=C workers=W rounds=R elapsed_s=E a_s=A b_s=B\n"
		   "  rounds_per_s=X\n");
	syscall(SYS_exit_group, status);
}

int main(int argc, char **argv)
{
	int cpus = 4, space = -1;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			usage(0);
		if (i + 1 >= argc)
			usage(2);
		const char *opt = argv[i], *val = argv[++i];
		if (strcmp(opt, "-m") == 0 && strcmp(val, "timeslice") == 0)
			space = 0;
		else if (strcmp(opt, "-m") == 0 && strcmp(val, "spaceshare") == 0)
			space = 1;
		else if (strcmp(opt, "-c") == 0)
			cpus = bench_arg(val, 1, CPU_SETSIZE, usage);
		else if (strcmp(opt, "-w") == 0)
			workers = bench_arg(val, 1, MAX_WORKERS, usage);
		else if (strcmp(opt, "-r") == 0)
			rounds = bench_arg(val, 1, 100000000, usage);
		else if (strcmp(opt, "-u") == 0)
			work = bench_arg(val, 0, 100000000, usage);
		else
			usage(2);
	}
	if (space < 0)
		usage(2);
	int list[CPU_SETSIZE];
	cpus = bench_allowed_cpus(list, cpus);
	if (cpus == 0)
		bench_fail("sched_getaffinity", errno);
	cpu_set_t sets[2];
	for (int p = 0; p < 2; p++) {
		CPU_ZERO(&sets[p]);
		/* Space sharing: program p gets half p (with one CPU, both share it). */
		int lo = space && cpus > 1 ? p * (cpus / 2) : 0;
		int hi = space && cpus > 1 ? (p ? cpus : cpus / 2) : cpus;
		for (int i = lo; i < hi; i++)
			CPU_SET(list[i], &sets[p]);
	}
	volatile long long *ns = (void *)syscall(SYS_mmap, NULL, 4096, PROT_READ | PROT_WRITE,
						 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ns == MAP_FAILED)
		bench_fail("mmap", errno);
	long long start = bench_now_ns();
	long pids[2];
	for (int p = 0; p < 2; p++) {
		pids[p] = syscall(SYS_fork);
		if (pids[p] < 0)
			bench_fail("fork", errno);
		if (pids[p] == 0)
			syscall(SYS_exit_group, program(&sets[p], &ns[p]));
	}
	int failed = 0;
	for (int p = 0; p < 2; p++) {
		int status = 0;
		while (syscall(SYS_wait4, pids[p], &status, 0, NULL) < 0 && errno == EINTR)
			;
		failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	}
	double elapsed = (bench_now_ns() - start) / 1e9;
	if (failed)
		bench_fail("program", 0);
	char line[256];
	snprintf(line, sizeof line, "bench gang mode=%s cpus=%d workers=%d rounds=%ld "
		 "elapsed_s=%.6f a_s=%.6f b_s=%.6f rounds_per_s=%.2f\n",
		 space ? "spaceshare" : "timeslice", cpus, workers, rounds, elapsed,
		 ns[0] / 1e9, ns[1] / 1e9, 2 * rounds / elapsed);
	bench_puts(1, line);
	return 0;
}
