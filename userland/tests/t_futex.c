/*
 * t_futex: the futex system call, raw.
 *
 * WAIT's value check (EAGAIN), its relative timeout (ETIMEDOUT, not
 * early), WAIT_BITSET's absolute timeouts on CLOCK_MONOTONIC and
 * CLOCK_REALTIME, WAKE's count, WAKE_BITSET's selection, REQUEUE and
 * CMP_REQUEUE (moved waiters woken from the second word; EAGAIN on a
 * changed value), WAKE_OP (the operation done atomically, the comparison
 * deciding the second wake), a signal ending a wait (EINTR), a shared
 * futex in a MAP_SHARED page between two processes, and the errors:
 * misaligned and bad addresses, a zero bitset, unknown operations.
 */
#include "ut.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Linux's futex operations (musl has no <linux/futex.h>). */
#define FUTEX_WAIT              0
#define FUTEX_WAKE              1
#define FUTEX_REQUEUE           3
#define FUTEX_CMP_REQUEUE       4
#define FUTEX_WAKE_OP           5
#define FUTEX_WAIT_BITSET       9
#define FUTEX_WAKE_BITSET       10
#define FUTEX_PRIVATE_FLAG      128
#define FUTEX_CLOCK_REALTIME    256
#define FUTEX_WAIT_PRIVATE      (FUTEX_WAIT | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAKE_PRIVATE      (FUTEX_WAKE | FUTEX_PRIVATE_FLAG)
#define FUTEX_REQUEUE_PRIVATE   (FUTEX_REQUEUE | FUTEX_PRIVATE_FLAG)
#define FUTEX_CMP_REQUEUE_PRIVATE (FUTEX_CMP_REQUEUE | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAKE_OP_PRIVATE   (FUTEX_WAKE_OP | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAIT_BITSET_PRIVATE (FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAKE_BITSET_PRIVATE (FUTEX_WAKE_BITSET | FUTEX_PRIVATE_FLAG)
#define FUTEX_BITSET_MATCH_ANY  0xffffffffu
#define FUTEX_OP_SET            0
#define FUTEX_OP_ADD            1
#define FUTEX_OP_OR             2
#define FUTEX_OP_ANDN           3
#define FUTEX_OP_XOR            4
#define FUTEX_OP_OPARG_SHIFT    8
#define FUTEX_OP_CMP_EQ         0
#define FUTEX_OP_CMP_NE         1
#define FUTEX_OP_CMP_GT         4
#define FUTEX_OP(op, oparg, cmp, cmparg) \
	((((op) & 0xf) << 28) | (((cmp) & 0xf) << 24) | (((oparg) & 0xfff) << 12) | ((cmparg) & 0xfff))

static long futex(volatile uint32_t *uaddr, int op, uint32_t val, const struct timespec *ts,
		  volatile uint32_t *uaddr2, uint32_t val3)
{
	return syscall(SYS_futex, uaddr, op, val, ts, uaddr2, val3);
}

static long futex_val2(volatile uint32_t *uaddr, int op, uint32_t val, long val2,
		       volatile uint32_t *uaddr2, uint32_t val3)
{
	return syscall(SYS_futex, uaddr, op, val, val2, uaddr2, val3);
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static struct timespec ts_of(uint64_t ns)
{
	return (struct timespec){ (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) };
}

static void sleep_ms(int ms)
{
	struct timespec ts = ts_of((uint64_t)ms * 1000000ULL);
	nanosleep(&ts, NULL);
}

/* ---- waits that do not sleep, timeouts ---- */

static void value_and_timeouts(void)
{
	static uint32_t w = 5;
	CHECK_ERR(futex(&w, FUTEX_WAIT_PRIVATE, 4, NULL, NULL, 0), EAGAIN);
	CHECK_ERR(futex(&w, FUTEX_WAIT, 4, NULL, NULL, 0), EAGAIN);

	struct timespec rel = ts_of(50 * 1000000ULL);
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	CHECK_ERR(futex(&w, FUTEX_WAIT_PRIVATE, 5, &rel, NULL, 0), ETIMEDOUT);
	uint64_t took = now_ns(CLOCK_MONOTONIC) - t0;
	CHECK(took >= 50 * 1000000ULL);
	CHECK(took < 2000 * 1000000ULL);

	struct timespec mono = ts_of(now_ns(CLOCK_MONOTONIC) + 30 * 1000000ULL);
	t0 = now_ns(CLOCK_MONOTONIC);
	CHECK_ERR(futex(&w, FUTEX_WAIT_BITSET_PRIVATE, 5, &mono, NULL, FUTEX_BITSET_MATCH_ANY),
		  ETIMEDOUT);
	CHECK(now_ns(CLOCK_MONOTONIC) - t0 >= 20 * 1000000ULL);

	struct timespec real = ts_of(now_ns(CLOCK_REALTIME) + 30 * 1000000ULL);
	CHECK_ERR(futex(&w, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 5, &real, NULL,
			FUTEX_BITSET_MATCH_ANY), ETIMEDOUT);
	struct timespec past = ts_of(1);
	CHECK_ERR(futex(&w, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 5, &past, NULL,
			FUTEX_BITSET_MATCH_ANY), ETIMEDOUT);

	struct timespec bad = { 0, 1000000000L };
	CHECK_ERR(futex(&w, FUTEX_WAIT_PRIVATE, 5, &bad, NULL, 0), EINVAL);
	CHECK_EQ(futex(&w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0), 0);
}

/* ---- waiters in threads ---- */

struct waiter {
	volatile uint32_t *word;
	uint32_t val, bits;
	int op;
	long result;
	int err;
	volatile int started, done;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;
	w->started = 1;
	w->result = futex(w->word, w->op, w->val, NULL, NULL, w->bits);
	w->err = errno;
	w->done = 1;
	return NULL;
}

static void start_waiters(struct waiter *w, pthread_t *th, int n, volatile uint32_t *word,
			  int op, uint32_t bits)
{
	for (int i = 0; i < n; i++) {
		w[i] = (struct waiter){ .word = word, .val = *word, .op = op, .bits = bits };
		pthread_create(&th[i], NULL, wait_thread, &w[i]);
	}
	for (int i = 0; i < n; i++)
		while (!w[i].started)
			sched_yield();
	sleep_ms(50);           /* long enough for each to be asleep in the kernel */
}

static int count_done(struct waiter *w, int n)
{
	int d = 0;
	for (int i = 0; i < n; i++)
		d += w[i].done;
	return d;
}

/* WAKE up to n at a time until want waiters were woken in all (a slow
 * processor may bring a waiter into the kernel late): how many. */
static long wake_until(volatile uint32_t *word, int n, long want)
{
	long woken = 0;
	for (int i = 0; i < 100 && woken < want; i++) {
		long r = futex(word, FUTEX_WAKE_PRIVATE, (uint32_t)(want - woken < n ? want - woken : n),
			       NULL, NULL, 0);
		if (r < 0)
			return r;
		woken += r;
		if (woken < want)
			sleep_ms(5);
	}
	return woken;
}

static void wake_counts(void)
{
	static volatile uint32_t word = 1;
	struct waiter w[4];
	pthread_t th[4];
	start_waiters(w, th, 4, &word, FUTEX_WAIT_PRIVATE, 0);
	CHECK_EQ(count_done(w, 4), 0);
	CHECK_EQ(wake_until(&word, 1, 1), 1);
	for (int i = 0; i < 100 && count_done(w, 4) < 1; i++)
		sleep_ms(5);
	sleep_ms(20);
	CHECK_EQ(count_done(w, 4), 1);      /* one wake, one waiter gone */
	CHECK_EQ(wake_until(&word, 10, 3), 3);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CHECK_EQ(w[i].result, 0);
	}
}

static void bitsets(void)
{
	static volatile uint32_t word = 2;
	struct waiter w[2];
	pthread_t th[2];
	w[0] = (struct waiter){ .word = &word, .val = 2, .op = FUTEX_WAIT_BITSET_PRIVATE, .bits = 1 };
	w[1] = (struct waiter){ .word = &word, .val = 2, .op = FUTEX_WAIT_BITSET_PRIVATE, .bits = 2 };
	pthread_create(&th[0], NULL, wait_thread, &w[0]);
	pthread_create(&th[1], NULL, wait_thread, &w[1]);
	while (!w[0].started || !w[1].started)
		sched_yield();
	sleep_ms(50);
	CHECK_EQ(futex(&word, FUTEX_WAKE_BITSET_PRIVATE, 10, NULL, NULL, 2), 1);
	pthread_join(th[1], NULL);
	CHECK_EQ(w[0].done, 0);
	CHECK_EQ(futex(&word, FUTEX_WAKE_BITSET_PRIVATE, 10, NULL, NULL, 4), 0);
	CHECK_EQ(futex(&word, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0), 1);   /* all bits */
	pthread_join(th[0], NULL);
	CHECK_ERR(futex(&word, FUTEX_WAIT_BITSET_PRIVATE, 2, NULL, NULL, 0), EINVAL);
	CHECK_ERR(futex(&word, FUTEX_WAKE_BITSET_PRIVATE, 1, NULL, NULL, 0), EINVAL);
}

static void requeue(void)
{
	static volatile uint32_t from = 3, to = 9;
	struct waiter w[4];
	pthread_t th[4];
	start_waiters(w, th, 4, &from, FUTEX_WAIT_PRIVATE, 0);
	/* Changed value: nothing moves. */
	CHECK_ERR(futex_val2(&from, FUTEX_CMP_REQUEUE_PRIVATE, 1, 2, &to, 4), EAGAIN);
	/* Wake one, move two, leave one. */
	CHECK_EQ(futex_val2(&from, FUTEX_CMP_REQUEUE_PRIVATE, 1, 2, &to, 3), 3);
	sleep_ms(30);
	CHECK_EQ(count_done(w, 4), 1);
	CHECK_EQ(futex(&from, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0), 1);
	sleep_ms(30);
	CHECK_EQ(count_done(w, 4), 2);
	CHECK_EQ(futex(&to, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0), 2);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(count_done(w, 4), 4);

	/* Plain REQUEUE: all moved, none woken. */
	start_waiters(w, th, 2, &from, FUTEX_WAIT_PRIVATE, 0);
	CHECK_EQ(futex_val2(&from, FUTEX_REQUEUE_PRIVATE, 0, 10, &to, 0), 2);
	sleep_ms(20);
	CHECK_EQ(count_done(w, 2), 0);
	CHECK_EQ(futex(&to, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0), 2);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	CHECK_ERR(futex_val2(&from, FUTEX_CMP_REQUEUE_PRIVATE, -1, 1, &to, 3), EINVAL);
}

static void wake_op(void)
{
	static volatile uint32_t a = 0, b = 10;
	struct waiter wa[1], wb[1];
	pthread_t ta[1], tb[1];
	start_waiters(wa, ta, 1, &a, FUTEX_WAIT_PRIVATE, 0);
	start_waiters(wb, tb, 1, &b, FUTEX_WAIT_PRIVATE, 0);
	/* b += 5, and wake b's waiter when the old b was > 9: both woken. */
	uint32_t op = FUTEX_OP(FUTEX_OP_ADD, 5, FUTEX_OP_CMP_GT, 9);
	CHECK_EQ(futex_val2(&a, FUTEX_WAKE_OP_PRIVATE, 1, 1, &b, op), 2);
	CHECK_EQ(b, 15);
	pthread_join(ta[0], NULL);
	pthread_join(tb[0], NULL);
	/* OR with a shifted argument, comparison false: only the first wake. */
	op = FUTEX_OP(FUTEX_OP_OR | FUTEX_OP_OPARG_SHIFT, 4, FUTEX_OP_CMP_EQ, 0);
	CHECK_EQ(futex_val2(&a, FUTEX_WAKE_OP_PRIVATE, 1, 1, &b, op), 0);
	CHECK_EQ(b, 15 | 16);
	op = FUTEX_OP(FUTEX_OP_ANDN, 1, FUTEX_OP_CMP_NE, 0);
	futex_val2(&a, FUTEX_WAKE_OP_PRIVATE, 1, 1, &b, op);
	CHECK_EQ(b, 30);
	op = FUTEX_OP(FUTEX_OP_SET, 7, FUTEX_OP_CMP_EQ, 0);
	futex_val2(&a, FUTEX_WAKE_OP_PRIVATE, 1, 1, &b, op);
	CHECK_EQ(b, 7);
	op = FUTEX_OP(FUTEX_OP_XOR, 3, FUTEX_OP_CMP_EQ, 0);
	futex_val2(&a, FUTEX_WAKE_OP_PRIVATE, 1, 1, &b, op);
	CHECK_EQ(b, 4);
}

/* ---- a signal ends a wait ---- */

static void on_usr1(int sig)
{
	(void)sig;
}

static volatile int eintr_started;
static pthread_t eintr_thread;

static void *wait_for_signal(void *arg)
{
	static volatile uint32_t word = 0;
	struct timespec rel = ts_of(5000 * 1000000ULL);
	eintr_started = 1;
	long r = futex(&word, FUTEX_WAIT_PRIVATE, 0, &rel, NULL, 0);
	*(int *)arg = r == -1 ? errno : 0;
	return NULL;
}

static void eintr(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigaction(SIGUSR1, &sa, NULL);
	int err = -1;
	pthread_create(&eintr_thread, NULL, wait_for_signal, &err);
	while (!eintr_started)
		sched_yield();
	sleep_ms(50);
	CHECK_EQ(pthread_kill(eintr_thread, SIGUSR1), 0);
	pthread_join(eintr_thread, NULL);
	CHECK_EQ(err, EINTR);
}

/* ---- a shared futex between processes ---- */

static void shared_between_processes(void)
{
	volatile uint32_t *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shared != MAP_FAILED);
	if (shared == MAP_FAILED)
		return;
	shared[0] = 0;
	shared[1] = 0;
	pid_t pid = fork();
	if (pid == 0) {
		shared[1] = 1;
		long r = futex(&shared[0], FUTEX_WAIT, 0, NULL, NULL, 0);
		_exit(r == 0 ? 0 : 1);
	}
	while (!shared[1])
		sched_yield();
	sleep_ms(50);
	shared[0] = 1;
	CHECK_EQ(futex(&shared[0], FUTEX_WAKE, 1, NULL, NULL, 0), 1);
	int st = 0;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	munmap((void *)shared, 4096);
}

/* ---- errors ---- */

static void errors(void)
{
	static uint32_t words[2];
	CHECK_ERR(futex((uint32_t *)((char *)words + 1), FUTEX_WAKE, 1, NULL, NULL, 0), EINVAL);
	CHECK_ERR(futex((uint32_t *)UT_KERNPTR, FUTEX_WAIT, 0, NULL, NULL, 0), EFAULT);
	CHECK_ERR(futex(words, 99, 0, NULL, NULL, 0), ENOSYS);
	CHECK_ERR(futex(words, FUTEX_WAKE | FUTEX_CLOCK_REALTIME, 1, NULL, NULL, 0), ENOSYS);
	uint32_t bad_op = FUTEX_OP(7, 0, FUTEX_OP_CMP_EQ, 0);
	CHECK_ERR(futex_val2(&words[0], FUTEX_WAKE_OP, 1, 1, &words[1], bad_op), ENOSYS);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	value_and_timeouts();
	wake_counts();
	bitsets();
	requeue();
	wake_op();
	eintr();
	shared_between_processes();
	errors();
	return ut_done();
}
