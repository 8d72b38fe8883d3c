/*
 * ut_fuzz_threads.h: threads and futexes in the fuzzing mix (ut_fuzz.c
 * includes this once, after ut_fuzz_bound.h; a part of that program).
 *
 * The pseudo-call start_thread() joins the helper thread the previous
 * one started, if any, and starts another (clone with CLONE_THREAD, as
 * musl's pthread_create makes it).  The helper makes a few futex calls
 * drawn from the call's argument word while the fuzzing goes on beside
 * it: WAIT and WAIT_BITSET with a timeout of a millisecond (so none can
 * hang the child), WAKE, CMP_REQUEUE and WAKE_OP between two words, and
 * a tgkill of itself with a caught signal; the main thread's own calls
 * meanwhile race with them in the kernel.  Its stack is a static array,
 * so no random munmap of the fuzzing can take it away.  The helper is
 * joined before the child's final checks.
 */
#ifndef UT_FUZZ_THREADS_H
#define UT_FUZZ_THREADS_H

#include <pthread.h>

/* The futex operations (Linux's ABI; musl has no <linux/futex.h>). */
#define FZ_FUTEX_WAIT 0
#define FZ_FUTEX_WAKE 1
#define FZ_FUTEX_CMP_REQUEUE 4
#define FZ_FUTEX_WAKE_OP 5
#define FZ_FUTEX_WAIT_BITSET 9
#define FZ_FUTEX_PRIVATE 128

#define PSEUDO_THREAD (-3L)
#define HELPER_STACK (64 * 1024)

static _Alignas(64) char helper_stack[HELPER_STACK];
static pthread_t helper;
static int helper_running;
static volatile int futex_words[2];

static long futex_call(volatile int *uaddr, int op, int val, const struct timespec *ts,
		       volatile int *uaddr2, int val3)
{
	return syscall(SYS_futex, uaddr, op, val, ts, uaddr2, val3);
}

/* One futex operation (or a signal) chosen by the three bits in k. */
static void helper_op(unsigned k, unsigned long word)
{
	struct timespec ms = { 0, 1000000 }, deadline;
	int cur = futex_words[0];
	switch (k % 6) {
	case 0:
		futex_call(&futex_words[0], FZ_FUTEX_WAIT | FZ_FUTEX_PRIVATE, cur, &ms, NULL, 0);
		break;
	case 1:
		futex_call(&futex_words[0], FZ_FUTEX_WAKE | FZ_FUTEX_PRIVATE, 1 + (int)(word % 3), NULL, NULL, 0);
		break;
	case 2:
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_nsec += 1000000;
		if (deadline.tv_nsec >= 1000000000) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000;
		}
		futex_call(&futex_words[1], FZ_FUTEX_WAIT_BITSET | FZ_FUTEX_PRIVATE,
			   futex_words[1], &deadline, NULL, (int)(word | 1));
		break;
	case 3:
		futex_call(&futex_words[0], FZ_FUTEX_CMP_REQUEUE | FZ_FUTEX_PRIVATE, 1,
			   (const struct timespec *)(long)(word % 4), &futex_words[1], cur);
		break;
	case 4:
		futex_call(&futex_words[0], FZ_FUTEX_WAKE_OP | FZ_FUTEX_PRIVATE, 1,
			   (const struct timespec *)1L, &futex_words[1], (int)(word & 0xff7fffff));
		break;
	default:
		syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGUSR1);
		break;
	}
}

static void *helper_main(void *arg)
{
	unsigned long word = (unsigned long)arg;
	int n = 1 + (int)(word % 8);
	for (int k = 0; k < n; k++)
		helper_op((unsigned)(word >> (3 * k + 3)), word);
	return NULL;
}

static void join_helper(void)
{
	if (helper_running)
		pthread_join(helper, NULL);
	helper_running = 0;
}

static long start_thread(long a0)
{
	join_helper();
	futex_words[0]++;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, helper_stack, sizeof helper_stack);
	int err = pthread_create(&helper, &attr, helper_main, (void *)a0);
	pthread_attr_destroy(&attr);
	if (err) {
		errno = err;
		return -1;
	}
	helper_running = 1;
	return 0;
}

#endif
