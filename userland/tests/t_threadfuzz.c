/*
 * t_threadfuzz: random thread and futex calls from several threads at once.
 *
 * One thread per CPU (at least four) makes a seeded random mix of futex
 * operations (WAIT with short timeouts, WAKE, REQUEUE, CMP_REQUEUE,
 * WAKE_OP, the bitset forms, bad addresses and operations) on a few shared
 * words, creates and joins short-lived threads, sends itself and the
 * others ignored signals with tgkill, maps and unmaps pages the others
 * may be waiting in, and yields.  Every result must be one Linux allows
 * for that call; at the end every thread is joined and the process is
 * whole.  Usage: t_threadfuzz [OPS_PER_THREAD [SEED]].
 */
#include "ut.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WORDS 4
#define MAX_THREADS 16

static volatile uint32_t words[WORDS];
static long ops = 800;
static unsigned seed = 1;
static int nthreads;
static pid_t tids[MAX_THREADS];
static volatile long unexpected, calls;

static uint32_t rnd(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static long futex(volatile uint32_t *a, int op, uint32_t val, long val2, volatile uint32_t *b,
		  uint32_t val3)
{
	return syscall(SYS_futex, a, op, val, val2, b, val3);
}

/* Is errno e a result Linux may give for this kind of call? */
static void expect(long r, int ok_errs)
{
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	if (r != -1)
		return;
	int e = errno;
	int ok = (ok_errs & 1 && e == EAGAIN) || (ok_errs & 2 && e == ETIMEDOUT) ||
		 (ok_errs & 4 && e == EINTR) || (ok_errs & 8 && e == EINVAL) ||
		 (ok_errs & 16 && e == EFAULT) || (ok_errs & 32 && e == ENOSYS) ||
		 (ok_errs & 64 && e == ESRCH);
	if (!ok) {
		__atomic_add_fetch(&unexpected, 1, __ATOMIC_RELAXED);
		ut_say("unexpected errno %d (%s)", e, strerror(e));
	}
}

static void *nothing(void *arg)
{
	return arg;
}

static void one_op(uint32_t *s)
{
	volatile uint32_t *w = &words[rnd(s) % WORDS], *w2 = &words[rnd(s) % WORDS];
	int priv = (rnd(s) & 1) ? 128 : 0;
	struct timespec ts = { 0, (long)(rnd(s) % 2000000) };
	switch (rnd(s) % 12) {
	case 0:
		expect(futex(w, 0 | priv, *w, (long)&ts, NULL, 0), 1 | 2 | 4);
		break;
	case 1:
		__atomic_add_fetch(w, 1, __ATOMIC_SEQ_CST);
		expect(futex(w, 1 | priv, rnd(s) % 4, 0, NULL, 0), 0);
		break;
	case 2:
		expect(futex(w, 3 | priv, rnd(s) % 2, rnd(s) % 3, w2, 0), 0);
		break;
	case 3:
		expect(futex(w, 4 | priv, 1, 1, w2, rnd(s) % 3), 1);
		break;
	case 4:
		expect(futex(w, 5 | priv, 1, 1, w2, rnd(s)), 32);
		break;
	case 5: {
		struct timespec abs;
		clock_gettime(CLOCK_MONOTONIC, &abs);
		abs.tv_nsec = (abs.tv_nsec + ts.tv_nsec) % 1000000000L;
		expect(futex(w, 9 | priv, *w, (long)&abs, NULL, rnd(s)), 1 | 2 | 4 | 8);
		break;
	}
	case 6:
		expect(futex(w, 10 | priv, 2, 0, NULL, rnd(s)), 8);
		break;
	case 7: {
		pthread_t t;
		if (pthread_create(&t, NULL, nothing, NULL) == 0)
			pthread_join(t, NULL);
		break;
	}
	case 8:
		expect(syscall(SYS_tgkill, getpid(), tids[rnd(s) % nthreads], SIGURG), 64);
		break;
	case 9: {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) {
			expect(futex(p, 1 | priv, 1, 0, NULL, 0), 0);
			munmap(p, 4096);
			expect(futex(p, 0 | priv, 0, (long)&ts, NULL, 0), 16 | 2 | 1);
		}
		break;
	}
	case 10:
		expect(futex((uint32_t *)((char *)w + 1 + rnd(s) % 3), 0, 0, 0, NULL, 0), 8);
		/* past LOCK_PI2 (13): no such operation */
		expect(futex(w, 14 + (int)(rnd(s) % 18), 0, 0, NULL, 0), 32);
		break;
	default:
		sched_yield();
		break;
	}
}

static pthread_barrier_t start;

static void *fuzzer(void *arg)
{
	int i = (int)(intptr_t)arg;
	uint32_t s = seed * 2654435761u + (uint32_t)i;
	tids[i] = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&start);
	for (long n = 0; n < ops; n++)
		one_op(&s);
	return NULL;
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	if (argc > 1)
		ops = atol(argv[1]);
	if (argc > 2)
		seed = (unsigned)atol(argv[2]);
	signal(SIGURG, SIG_IGN);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	nthreads = cpus < 4 ? 4 : cpus > MAX_THREADS ? MAX_THREADS : (int)cpus;
	pthread_barrier_init(&start, NULL, (unsigned)nthreads);
	pthread_t th[MAX_THREADS];
	for (int i = 0; i < nthreads; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, fuzzer, (void *)(intptr_t)i), 0);
	/* A waiter whose timeout ran out may miss a final wake: nobody waits
	 * without a timeout, so the joins end. */
	for (int i = 0; i < nthreads; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	CHECK_EQ(unexpected, 0);
	CHECK(calls > 0);
	ut_note("%d threads, %ld calls checked", nthreads, (long)calls);
	return ut_done();
}
