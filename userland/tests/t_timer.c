/*
 * t_timer: timed sleeps and timers.
 *
 * alarm, setitimer and getitimer (ITIMER_REAL firing once and
 * periodically, the value counting down, the old value returned, a timer
 * cleared in a forked child, the errors; ITIMER_VIRTUAL and ITIMER_PROF
 * firing after so much CPU time, and again by their interval);
 * nanosleep and a blocking poll that use no CPU while they sleep (the
 * process's CPU time barely moves over a sleep that lasts many ticks);
 * select, pselect6 and ppoll (readiness of pipes, timeouts that expire and
 * are written back, a wake-up by a write from a child, a signal ending the
 * wait with EINTR, the temporary signal mask, and the errors).  Times are
 * checked only for lasting at least as long as asked, never for how fast
 * the machine is.
 */
#include "ut.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static int64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int64_t cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The alarm framework's own SIGALRM is replaced for these tests and put
 * back with a fresh alarm at the end. */
static void catch_alarms(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	alarms = 0;
}

static void test_alarm(void)
{
	catch_alarms();
	long guard = syscall(SYS_alarm, 0);     /* the framework's hang guard */
	CHECK(guard > 0 && guard <= UT_TIMEOUT);
	CHECK_EQ(syscall(SYS_alarm, 0), 0);
	CHECK_EQ(syscall(SYS_alarm, 100), 0);
	long left = syscall(SYS_alarm, 50);
	CHECK(left >= 99 && left <= 100);      /* the old one, rounded */
	left = syscall(SYS_alarm, 0);
	CHECK(left >= 49 && left <= 50);
	CHECK_EQ(syscall(SYS_alarm, 0), 0);     /* cancelled */

	/* One second: pause returns once the handler ran. */
	int64_t t0 = mono_ns();
	syscall(SYS_alarm, 1);
	while (!alarms)
		pause();
	CHECK_EQ(alarms, 1);
	CHECK(mono_ns() - t0 >= 1000000000LL - 1000000);
}

static void test_itimer(void)
{
	struct itimerval it, old;
	catch_alarms();
	CHECK_OK(getitimer(ITIMER_REAL, &it));
	it.it_value.tv_sec = 30;
	it.it_value.tv_usec = 0;
	it.it_interval.tv_sec = 0;
	it.it_interval.tv_usec = 0;
	CHECK_OK(setitimer(ITIMER_REAL, &it, &old));
	CHECK_OK(getitimer(ITIMER_REAL, &it));
	CHECK(it.it_value.tv_sec >= 28 && it.it_value.tv_sec <= 30);
	CHECK(it.it_value.tv_usec >= 0 && it.it_value.tv_usec < 1000000);
	CHECK_EQ(it.it_interval.tv_sec, 0);

	/* A forked child starts with the timer disarmed. */
	pid_t pid = fork();
	if (pid == 0) {
		struct itimerval c;
		getitimer(ITIMER_REAL, &c);
		_exit(c.it_value.tv_sec == 0 && c.it_value.tv_usec == 0 ? 0 : 1);
	}
	CHECK_EQ(ut_wait(pid), 0);

	/* Periodic: 50 ms, three times. */
	struct itimerval per = { { 0, 50000 }, { 0, 50000 } };
	CHECK_OK(setitimer(ITIMER_REAL, &per, &old));
	CHECK(old.it_value.tv_sec >= 28 && old.it_value.tv_sec <= 30); /* the 30 s one */
	int64_t t0 = mono_ns();
	while (alarms < 3)
		pause();
	CHECK(mono_ns() - t0 >= 3 * 50000000LL - 3000000);
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	CHECK_OK(setitimer(ITIMER_REAL, &off, &old));
	CHECK_EQ(old.it_interval.tv_usec, 50000);
	CHECK_OK(getitimer(ITIMER_REAL, &it));
	CHECK(it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0);

	/* ITIMER_VIRTUAL keeps what it was given while no CPU time passes. */
	struct itimerval v = { { 0, 0 }, { 100, 0 } };
	CHECK_OK(setitimer(ITIMER_VIRTUAL, &v, NULL));
	CHECK_OK(getitimer(ITIMER_VIRTUAL, &it));
	CHECK(it.it_value.tv_sec >= 99 && it.it_value.tv_sec <= 100);
	CHECK_OK(setitimer(ITIMER_VIRTUAL, &off, &old));
	CHECK(old.it_value.tv_sec >= 99 && old.it_value.tv_sec <= 100);

	CHECK_ERR(getitimer(3, &it), EINVAL);
	CHECK_ERR(getitimer(-1, &it), EINVAL);
	CHECK_ERR(syscall(SYS_getitimer, ITIMER_REAL, UT_BADPTR), EFAULT);
	CHECK_ERR(syscall(SYS_setitimer, ITIMER_REAL, UT_BADPTR, NULL), EFAULT);
	CHECK_ERR(syscall(SYS_setitimer, 7, &off, NULL), EINVAL);
	struct itimerval bad = { { 0, 0 }, { 1, 1000000 } };
	CHECK_ERR(syscall(SYS_setitimer, ITIMER_REAL, &bad, NULL), EINVAL);
	bad.it_value.tv_usec = -1;
	CHECK_ERR(syscall(SYS_setitimer, ITIMER_REAL, &bad, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_setitimer, ITIMER_REAL, &off, UT_KERNPTR), EFAULT);
}

static volatile int cpu_sigs;
static void on_cpu_timer(int sig) { (void)sig; cpu_sigs++; }

/* ITIMER_VIRTUAL and ITIMER_PROF fire after that much CPU time: burn it
 * in user mode until the signal comes (the alarm guards the loop). */
static void test_cpu_timers(void)
{
	static const int which[2] = { ITIMER_VIRTUAL, ITIMER_PROF };
	static const int sigs[2] = { SIGVTALRM, SIGPROF };
	for (int k = 0; k < 2; k++) {
		struct sigaction sa = { .sa_handler = on_cpu_timer };
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[k], &sa, NULL);
		cpu_sigs = 0;
		int64_t c0 = cpu_ns();
		struct itimerval it = { { 0, 20000 }, { 0, 50000 } };   /* 50 ms, then every 20 */
		CHECK_OK(setitimer(which[k], &it, NULL));
		/* Sleeping uses no CPU time: no signal meanwhile. */
		struct timespec ts = { 0, 200000000 };
		nanosleep(&ts, NULL);
		CHECK_EQ(cpu_sigs, 0);
		struct itimerval now;
		volatile unsigned long spin = 0;
		while (!cpu_sigs)
			spin++;
		/* Linux samples CPU time at its ticks, and under load its
		 * split of user and system time is rough: only a clearly
		 * CPU-driven delay is asked for. */
		CHECK(cpu_ns() - c0 >= 10000000);
		while (cpu_sigs < 3)
			spin++;
		CHECK(cpu_ns() - c0 >= 30000000);
		CHECK_OK(getitimer(which[k], &now));
		CHECK_EQ(now.it_interval.tv_usec, 20000);
		CHECK(now.it_value.tv_sec == 0 && now.it_value.tv_usec <= 20000);
		struct itimerval off = { { 0, 0 }, { 0, 0 } };
		CHECK_OK(setitimer(which[k], &off, NULL));
		signal(sigs[k], SIG_DFL);
	}
}

/* A sleep of 300 ms costs (almost) no CPU time: a timed sleep, not a
 * loop.  The bound is generous (a tenth of the sleep). */
static void test_sleep_is_free(void)
{
	int64_t c0 = cpu_ns(), t0 = mono_ns();
	struct timespec ts = { 0, 300000000 };
	CHECK_OK(nanosleep(&ts, NULL));
	CHECK(mono_ns() - t0 >= 300000000);
	CHECK(cpu_ns() - c0 < 30000000);

	int fds[2];
	CHECK_OK(pipe(fds));
	struct pollfd pf = { .fd = fds[0], .events = POLLIN };
	c0 = cpu_ns();
	t0 = mono_ns();
	CHECK_EQ(poll(&pf, 1, 300), 0);
	CHECK(mono_ns() - t0 >= 300000000 - 1000000);
	CHECK(cpu_ns() - c0 < 30000000);
	close(fds[0]);
	close(fds[1]);
}

/* A sleep too long to count in nanoseconds still sleeps (it does not
 * wrap to a short one), and a huge timer is kept as huge. */
static void test_huge_times(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec ts = { INT64_MAX, 999999999 };
		nanosleep(&ts, NULL);
		_exit(3);
	}
	struct timespec nap = { 0, 200000000 };
	nanosleep(&nap, NULL);
	int st;
	CHECK_EQ(waitpid(pid, &st, WNOHANG), 0);        /* still asleep */
	kill(pid, SIGKILL);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

	struct itimerval big = { { 0, 0 }, { INT64_MAX / 4, 0 } }, now;
	CHECK_OK(setitimer(ITIMER_REAL, &big, NULL));
	CHECK_OK(getitimer(ITIMER_REAL, &now));
	CHECK(now.it_value.tv_sec > 1000000000L);       /* centuries away */
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	CHECK_OK(setitimer(ITIMER_REAL, &off, NULL));
}

static void test_select(void)
{
	int fds[2];
	CHECK_OK(pipe(fds));
	fd_set r, w;
	FD_ZERO(&r);
	FD_ZERO(&w);
	FD_SET(fds[0], &r);
	FD_SET(fds[1], &w);
	struct timeval tv = { 0, 0 };
	/* Empty pipe: writable, not readable. */
	CHECK_EQ(select(fds[1] + 1, &r, &w, NULL, &tv), 1);
	CHECK(!FD_ISSET(fds[0], &r));
	CHECK(FD_ISSET(fds[1], &w));
	CHECK_EQ(write(fds[1], "x", 1), 1);
	FD_ZERO(&r);
	FD_SET(fds[0], &r);
	CHECK_EQ(select(fds[0] + 1, &r, NULL, NULL, NULL), 1);
	CHECK(FD_ISSET(fds[0], &r));

	/* A timeout that expires, and is written back as zero. */
	char c;
	CHECK_EQ(read(fds[0], &c, 1), 1);
	FD_ZERO(&r);
	FD_SET(fds[0], &r);
	tv.tv_sec = 0;
	tv.tv_usec = 100000;
	int64_t t0 = mono_ns();
	CHECK_EQ(syscall(SYS_select, fds[0] + 1, &r, NULL, NULL, &tv), 0);
	CHECK(mono_ns() - t0 >= 100000000 - 1000000);
	CHECK(tv.tv_sec == 0 && tv.tv_usec == 0);
	CHECK(!FD_ISSET(fds[0], &r));

	/* A child's write wakes a select with no timeout. */
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec ts = { 0, 100000000 };
		nanosleep(&ts, NULL);
		_exit(write(fds[1], "y", 1) == 1 ? 0 : 1);
	}
	FD_ZERO(&r);
	FD_SET(fds[0], &r);
	CHECK_EQ(select(fds[0] + 1, &r, NULL, NULL, NULL), 1);
	CHECK(FD_ISSET(fds[0], &r));
	CHECK_EQ(ut_wait(pid), 0);
	CHECK_EQ(read(fds[0], &c, 1), 1);

	/* The other end closed: readable (end of file). */
	int fds2[2];
	CHECK_OK(pipe(fds2));
	close(fds2[1]);
	FD_ZERO(&r);
	FD_SET(fds2[0], &r);
	tv.tv_sec = 5;
	tv.tv_usec = 0;
	CHECK_EQ(select(fds2[0] + 1, &r, NULL, NULL, &tv), 1);
	close(fds2[0]);

	/* Errors. */
	FD_ZERO(&r);
	FD_SET(fds2[0], &r);        /* closed now */
	tv.tv_sec = 0;
	CHECK_ERR(select(fds2[0] + 1, &r, NULL, NULL, &tv), EBADF);
	CHECK_ERR(syscall(SYS_select, -1, NULL, NULL, NULL, &tv), EINVAL);
	struct timeval neg = { -1, 0 };
	CHECK_ERR(syscall(SYS_select, 0, NULL, NULL, NULL, &neg), EINVAL);
	neg = (struct timeval){ 1, -1 };
	CHECK_ERR(syscall(SYS_select, 0, NULL, NULL, NULL, &neg), EINVAL);
	struct timeval carried = { -1, 1000000 };       /* carried: 0 s, valid */
	CHECK_EQ(syscall(SYS_select, 0, NULL, NULL, NULL, &carried), 0);
	CHECK_ERR(syscall(SYS_select, 1, UT_BADPTR, NULL, NULL, &tv), EFAULT);
	CHECK_ERR(syscall(SYS_select, 0, NULL, NULL, NULL, UT_BADPTR), EFAULT);
	close(fds[0]);
	close(fds[1]);
}

static void test_pselect_ppoll(void)
{
	int fds[2];
	CHECK_OK(pipe(fds));
	fd_set r;
	FD_ZERO(&r);
	FD_SET(fds[0], &r);
	struct timespec ts = { 0, 50000000 };
	int64_t t0 = mono_ns();
	CHECK_EQ(syscall(SYS_pselect6, fds[0] + 1, &r, NULL, NULL, &ts, NULL), 0);
	CHECK(mono_ns() - t0 >= 50000000 - 1000000);
	CHECK(ts.tv_sec == 0 && ts.tv_nsec == 0);
	struct timespec badts = { 0, 1000000000 };
	CHECK_ERR(syscall(SYS_pselect6, 0, NULL, NULL, NULL, &badts, NULL), EINVAL);
	uint64_t set = 0;
	struct { void *p; size_t n; } sm = { &set, 4 };
	ts.tv_nsec = 0;
	CHECK_ERR(syscall(SYS_pselect6, 0, NULL, NULL, NULL, &ts, &sm), EINVAL);

	struct pollfd pf = { .fd = fds[0], .events = POLLIN };
	ts.tv_sec = 0;
	ts.tv_nsec = 20000000;
	CHECK_EQ(syscall(SYS_ppoll, &pf, 1, &ts, NULL, 8), 0);
	CHECK(ts.tv_sec == 0 && ts.tv_nsec == 0);
	CHECK_EQ(write(fds[1], "z", 1), 1);
	CHECK_EQ(syscall(SYS_ppoll, &pf, 1, NULL, NULL, 8), 1);
	CHECK_EQ(pf.revents, POLLIN);
	CHECK_ERR(syscall(SYS_ppoll, &pf, 1, &badts, NULL, 8), EINVAL);
	CHECK_ERR(syscall(SYS_ppoll, &pf, 1, NULL, &set, 7), EINVAL);
	CHECK_ERR(syscall(SYS_ppoll, &pf, 1, UT_BADPTR, NULL, 8), EFAULT);
	CHECK_ERR(syscall(SYS_ppoll, UT_BADPTR, 1, NULL, NULL, 8), EFAULT);
	CHECK_ERR(syscall(SYS_ppoll, &pf, 100000, NULL, NULL, 8), EINVAL);

	/* A signal ends ppoll with EINTR; the temporary mask blocks SIGUSR1
	 * while SIGALRM (unblocked there) comes; the old mask is back after. */
	catch_alarms();
	char c;
	CHECK_EQ(read(fds[0], &c, 1), 1);
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	sigprocmask(SIG_BLOCK, &block, &old);
	uint64_t during = 1UL << (SIGUSR1 - 1);
	struct itimerval it = { { 0, 0 }, { 0, 100000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	CHECK_ERR(syscall(SYS_ppoll, &pf, 1, NULL, &during, 8), EINTR);
	CHECK_EQ(alarms, 1);
	sigset_t now;
	sigprocmask(SIG_SETMASK, NULL, &now);
	CHECK(sigismember(&now, SIGALRM));
	CHECK(!sigismember(&now, SIGUSR1));
	sigprocmask(SIG_SETMASK, &old, NULL);

	/* The same for select, from a plain alarm. */
	FD_ZERO(&r);
	FD_SET(fds[0], &r);
	syscall(SYS_alarm, 1);
	CHECK_ERR(select(fds[0] + 1, &r, NULL, NULL, NULL), EINTR);
	CHECK_EQ(alarms, 2);
	close(fds[0]);
	close(fds[1]);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	test_alarm();
	test_itimer();
	test_cpu_timers();
	test_sleep_is_free();
	test_huge_times();
	test_select();
	test_pselect_ppoll();
	signal(SIGALRM, SIG_DFL);
	ut_init(argc, argv); /* the framework's hang guard again */
	return ut_done();
}
