/*
 * t_time: clocks and accounting.
 *
 * clock_gettime, gettimeofday, nanosleep (and sleeps finer than the
 * tick, by every timed wait), times, getrusage (ourselves,
 * reaped children and grandchildren), wait4's rusage, the CPU-time clocks,
 * sched_yield.  Nothing here depends on how fast the machine is: sleeps
 * are checked only for lasting at least as long as asked, and CPU time is
 * burnt until the accounting shows it (the alarm guards that loop).
 */
#include "ut.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static int64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return ns(&t);
}

static void test_clocks(void)
{
	struct timespec rt, mono, prev;
	CHECK_OK(clock_gettime(CLOCK_REALTIME, &rt));
	CHECK(rt.tv_nsec >= 0 && rt.tv_nsec < 1000000000);
	time_t now = time(NULL);
	CHECK(rt.tv_sec >= now - 2 && rt.tv_sec <= now + 2);
	CHECK(rt.tv_sec > 1600000000); /* after September 2020 */

	CHECK_OK(clock_gettime(CLOCK_MONOTONIC, &prev));
	int monotonic = 1;
	for (int i = 0; i < 2000; i++) {
		monotonic &= clock_gettime(CLOCK_MONOTONIC, &mono) == 0 &&
			     ns(&mono) >= ns(&prev) && mono.tv_nsec < 1000000000;
		prev = mono;
	}
	CHECK(monotonic);
	/* The raw system call, as Tempest (without a vDSO) will see it. */
	CHECK_OK(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &mono));
	CHECK(ns(&mono) >= ns(&prev));
	CHECK_OK(syscall(SYS_clock_gettime, CLOCK_REALTIME, &rt));
	CHECK(rt.tv_sec >= now - 2 && rt.tv_sec <= now + 2);
	CHECK_ERR(syscall(SYS_clock_gettime, 12345, &rt), EINVAL);
	CHECK_ERR(syscall(SYS_clock_gettime, -1000, &rt), EINVAL);
	CHECK_ERR(syscall(SYS_clock_gettime, CLOCK_REALTIME, UT_BADPTR), EFAULT);
	CHECK_ERR(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, UT_KERNPTR), EFAULT);

	struct timeval tv;
	CHECK_OK(gettimeofday(&tv, NULL));
	CHECK(tv.tv_usec >= 0 && tv.tv_usec < 1000000);
	CHECK(tv.tv_sec >= now - 2 && tv.tv_sec <= time(NULL) + 2);
	CHECK_OK(syscall(SYS_gettimeofday, &tv, NULL));
	CHECK(tv.tv_sec >= now - 2 && tv.tv_sec <= time(NULL) + 2);
	CHECK_ERR(syscall(SYS_gettimeofday, UT_BADPTR, NULL), EFAULT);
	CHECK_OK(syscall(SYS_gettimeofday, NULL, NULL));
}

static void test_nanosleep(void)
{
	struct timespec req = { 0, 20 * 1000000 }, rem;
	int64_t t0 = mono_ns();
	CHECK_OK(nanosleep(&req, &rem));
	CHECK(mono_ns() - t0 >= 20 * 1000000); /* at least as long as asked */
	req.tv_nsec = 0;
	CHECK_OK(nanosleep(&req, NULL));
	req.tv_nsec = 1000000000;
	CHECK_ERR(nanosleep(&req, NULL), EINVAL);
	req.tv_nsec = -1;
	CHECK_ERR(nanosleep(&req, NULL), EINVAL);
	req.tv_sec = -1;
	req.tv_nsec = 0;
	CHECK_ERR(nanosleep(&req, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_nanosleep, UT_BADPTR, NULL), EFAULT);
	req.tv_sec = 0;
	req.tv_nsec = 1000;
	CHECK_OK(syscall(SYS_nanosleep, &req, NULL));
}

/* Sleeps finer than the clock tick: a 1 ms sleep taken right after
 * another (so in phase with any tick) lasts about 1 ms, not the 10 ms a
 * tick-driven timer gives; and never less than asked.  Medians of 9, so
 * one late wakeup on a busy host does not decide it. */
enum { FINE_REPS = 9, FINE_NS = 1000000, FINE_MEDIAN_MAX_NS = 5000000 };

static int by_value(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static void sleep_1ms(int how)
{
	struct timespec req = { 0, FINE_NS }, abs;
	struct timeval tv = { 0, FINE_NS / 1000 };
	switch (how) {
	case 0:
		nanosleep(&req, NULL);
		break;
	case 1:
		clock_gettime(CLOCK_MONOTONIC, &abs);
		abs.tv_nsec += FINE_NS;
		if (abs.tv_nsec >= 1000000000) {
			abs.tv_sec++;
			abs.tv_nsec -= 1000000000;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL);
		break;
	case 2:
		ppoll(NULL, 0, &req, NULL);
		break;
	default:
		select(0, NULL, NULL, NULL, &tv);
	}
}

static void test_fine_sleeps(void)
{
	static const char *const names[] = { "nanosleep", "clock_nanosleep", "ppoll", "select" };
	for (int how = 0; how < 4; how++) {
		int64_t took[FINE_REPS];
		sleep_1ms(how);
		for (int i = 0; i < FINE_REPS; i++) {
			int64_t t0 = mono_ns();
			sleep_1ms(how);
			took[i] = mono_ns() - t0;
		}
		qsort(took, FINE_REPS, sizeof took[0], by_value);
		ut_check(took[0] >= FINE_NS, __FILE__, __LINE__, "%s: a 1 ms sleep ended after %lld ns",
			  names[how], (long long)took[0]);
		ut_check(took[FINE_REPS / 2] < FINE_MEDIAN_MAX_NS, __FILE__, __LINE__,
			  "%s: 1 ms sleeps took %lld ns (median): rounded to a tick?",
			  names[how], (long long)took[FINE_REPS / 2]);
	}
}

static volatile uint64_t sink;

static int64_t cpu_us(int who)
{
	struct rusage ru;
	if (getrusage(who, &ru) != 0)
		return -1;
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL +
	       ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

/* Burns CPU until getrusage shows at least us microseconds more. */
static void burn(int64_t us)
{
	int64_t start = cpu_us(RUSAGE_SELF);
	while (cpu_us(RUSAGE_SELF) - start < us)
		for (int i = 0; i < 100000; i++)
			sink += i * sink + 1;
}

static void test_rusage(void)
{
	struct rusage ru;
	CHECK_OK(getrusage(RUSAGE_SELF, &ru));
	CHECK(ru.ru_utime.tv_usec >= 0 && ru.ru_utime.tv_usec < 1000000);
	CHECK(ru.ru_stime.tv_usec >= 0 && ru.ru_stime.tv_usec < 1000000);
	int64_t before = cpu_us(RUSAGE_SELF);
	burn(30000);
	CHECK(cpu_us(RUSAGE_SELF) >= before + 30000);

	int64_t kids = cpu_us(RUSAGE_CHILDREN);
	CHECK(kids >= 0);
	pid_t pid = fork();
	if (pid == 0) {
		burn(50000);
		_exit(0);
	}
	CHECK_EQ(ut_wait(pid), 0);
	/* A reaped child's time is added to RUSAGE_CHILDREN. */
	CHECK(cpu_us(RUSAGE_CHILDREN) >= kids + 50000);
	CHECK_ERR(getrusage(5, &ru), EINVAL);
	CHECK_ERR(syscall(SYS_getrusage, RUSAGE_SELF, UT_BADPTR), EFAULT);
	CHECK_OK(syscall(SYS_getrusage, RUSAGE_CHILDREN, &ru));
	CHECK_OK(getrusage(RUSAGE_THREAD, &ru));
}

static int64_t ru_us(const struct rusage *ru)
{
	return (ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000000LL +
	       ru->ru_utime.tv_usec + ru->ru_stime.tv_usec;
}

/* wait4's rusage is the child's time and its own reaped children's; a
 * grandchild's time reaches us through the child that reaped it. */
static void test_wait_rusage(void)
{
	int64_t kids = cpu_us(RUSAGE_CHILDREN);
	pid_t pid = fork();
	if (pid == 0) {
		burn(40000);
		_exit(0);
	}
	struct rusage ru;
	int st;
	memset(&ru, 0, sizeof ru);
	CHECK_EQ(wait4(pid, &st, 0, &ru), pid);
	CHECK(ru_us(&ru) >= 40000);
	CHECK(ru.ru_utime.tv_usec < 1000000 && ru.ru_stime.tv_usec < 1000000);
	CHECK(cpu_us(RUSAGE_CHILDREN) >= kids + ru_us(&ru));

	kids = cpu_us(RUSAGE_CHILDREN);
	pid = fork();
	if (pid == 0) {
		pid_t grandchild = fork();
		if (grandchild == 0) {
			burn(40000);
			_exit(0);
		}
		_exit(ut_wait(grandchild) == 0 ? 0 : 1);
	}
	memset(&ru, 0, sizeof ru);
	CHECK_EQ(wait4(pid, &st, 0, &ru), pid);
	CHECK_EQ(st, 0);
	CHECK(ru_us(&ru) >= 40000);
	CHECK(cpu_us(RUSAGE_CHILDREN) >= kids + 40000);
}

static int64_t clock_us(clockid_t clk)
{
	struct timespec t;
	if (clock_gettime(clk, &t) != 0)
		return -1;
	return ns(&t) / 1000;
}

/* The CPU-time clocks move with the CPU we use, never back, and are at
 * least what getrusage said a moment before. */
static void test_cpu_clocks(void)
{
	struct timespec t, prev;
	CHECK_OK(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &prev));
	int monotonic = 1;
	for (int i = 0; i < 1000; i++) {
		monotonic &= clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) == 0 &&
			     ns(&t) >= ns(&prev) && t.tv_nsec < 1000000000;
		prev = t;
	}
	CHECK(monotonic);
	int64_t p0 = clock_us(CLOCK_PROCESS_CPUTIME_ID);
	int64_t t0 = clock_us(CLOCK_THREAD_CPUTIME_ID);
	burn(30000);
	CHECK(clock_us(CLOCK_PROCESS_CPUTIME_ID) >= p0 + 30000);
	CHECK(clock_us(CLOCK_THREAD_CPUTIME_ID) >= t0 + 30000);
	int64_t used = cpu_us(RUSAGE_SELF);
	CHECK(clock_us(CLOCK_PROCESS_CPUTIME_ID) >= used);
	CHECK_OK(syscall(SYS_clock_gettime, CLOCK_PROCESS_CPUTIME_ID, &t));
	CHECK_OK(syscall(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &t));
	CHECK_ERR(syscall(SYS_clock_gettime, CLOCK_PROCESS_CPUTIME_ID, UT_BADPTR), EFAULT);
	CHECK_OK(clock_getres(CLOCK_PROCESS_CPUTIME_ID, &t));
	CHECK(t.tv_sec == 0 && t.tv_nsec > 0);

	/* A new process starts from nothing (less than its parent has). */
	int p[2];
	CHECK_OK(pipe(p));
	pid_t pid = fork();
	if (pid == 0) {
		int64_t mine = clock_us(CLOCK_PROCESS_CPUTIME_ID);
		write(p[1], &mine, sizeof mine);
		_exit(0);
	}
	int64_t childs = -1;
	CHECK_EQ(read(p[0], &childs, sizeof childs), sizeof childs);
	CHECK(childs >= 0 && childs < clock_us(CLOCK_PROCESS_CPUTIME_ID));
	CHECK_EQ(ut_wait(pid), 0);
	close(p[0]);
	close(p[1]);
}

/* The CPU clocks by id (clock_getcpuclockid, pthread_getcpuclockid:
 * Linux's negative ids) read what the named clocks read. */
static void test_cpu_clock_ids(void)
{
	clockid_t pc, tc;
	CHECK_EQ(clock_getcpuclockid(0, &pc), 0);
	pthread_t me = pthread_self();
	CHECK_EQ(pthread_getcpuclockid(me, &tc), 0);
	burn(20000);
	struct timespec a, b, r;
	CHECK_OK(clock_gettime(pc, &a));
	CHECK_OK(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b));
	CHECK(a.tv_sec > 0 || a.tv_nsec >= 15000000);
	CHECK(b.tv_sec > a.tv_sec || (b.tv_sec == a.tv_sec && b.tv_nsec >= a.tv_nsec));
	CHECK_OK(clock_gettime(tc, &a));
	CHECK(a.tv_sec > 0 || a.tv_nsec >= 15000000);
	CHECK_OK(clock_getres(tc, &r));
	CHECK_OK(syscall(SYS_clock_gettime, (clockid_t)((~(clockid_t)getpid() << 3) | 2), &a));
	CHECK_ERR(syscall(SYS_clock_gettime, (clockid_t)((~(clockid_t)0 << 3) | 3), &a), EINVAL);
}

static void test_times(void)
{
	long hz = sysconf(_SC_CLK_TCK);
	CHECK(hz > 0);
	struct tms t0, t1;
	clock_t c0 = times(&t0);
	CHECK(c0 != (clock_t)-1);
	/* Burn until our user+system ticks move by 3. */
	do {
		for (int i = 0; i < 100000; i++)
			sink += i * sink + 1;
		times(&t1);
	} while (t1.tms_utime + t1.tms_stime < t0.tms_utime + t0.tms_stime + 3);
	clock_t c1 = times(&t1);
	CHECK(c1 >= c0); /* elapsed ticks do not go back */
	CHECK(t1.tms_utime >= t0.tms_utime && t1.tms_stime >= t0.tms_stime);

	pid_t pid = fork();
	if (pid == 0) {
		struct tms a, b;
		times(&a);
		do {
			for (int i = 0; i < 100000; i++)
				sink += i * sink + 1;
			times(&b);
		} while (b.tms_utime + b.tms_stime < a.tms_utime + a.tms_stime + 5);
		_exit(0);
	}
	CHECK_EQ(ut_wait(pid), 0);
	struct tms t2;
	times(&t2);
	CHECK(t2.tms_cutime + t2.tms_cstime >= t1.tms_cutime + t1.tms_cstime + 5);
	CHECK_ERR(syscall(SYS_times, UT_BADPTR), EFAULT);
	CHECK(syscall(SYS_times, NULL) != -1);
}

static void test_yield(void)
{
	for (int i = 0; i < 100; i++)
		if (sched_yield() != 0)
			break;
	CHECK_OK(sched_yield());
	CHECK_OK(syscall(SYS_sched_yield));
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	test_cpu_clock_ids();
	test_clocks();
	test_nanosleep();
	test_fine_sleeps();
	test_rusage();
	test_wait_rusage();
	test_cpu_clocks();
	test_times();
	test_yield();
	return ut_done();
}
