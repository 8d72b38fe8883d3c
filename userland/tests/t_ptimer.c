/*
 * t_ptimer: POSIX timers (timer_create, timer_settime, timer_gettime,
 * timer_getoverrun, timer_delete).
 *
 * The default notification (SIGALRM with the timer's id as its value),
 * SIGEV_SIGNAL with a signal and value of one's own reaching a handler,
 * SIGEV_NONE (the time runs, nothing is sent), SIGEV_THREAD_ID to the
 * calling thread, a periodic timer whose signal stays blocked counting
 * overruns (carried by the signal when it is taken, then by
 * timer_getoverrun), absolute times, disarming, the old value, deletion,
 * and the errors.  Times are lower bounds only, with seconds to spare.
 */
#include "ut.h"

#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000L

static volatile int got_sig, got_value, got_code;

static void on_sig(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	got_sig = sig;
	got_value = si->si_value.sival_int;
	got_code = si->si_code;
}

static struct itimerspec after(long value_ns, long interval_ns)
{
	struct itimerspec it = { { 0, interval_ns }, { value_ns / 1000000000L, value_ns % 1000000000L } };
	return it;
}

static sigset_t only(int sig)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	return s;
}

static int wait_sig(int sig, siginfo_t *si)
{
	sigset_t s = only(sig);
	struct timespec limit = { 10, 0 };
	return sigtimedwait(&s, si, &limit);
}

static void check_default(void)
{
	sigset_t s = only(SIGALRM);
	CHECK_OK(sigprocmask(SIG_BLOCK, &s, NULL));
	timer_t t;
	CHECK_OK(timer_create(CLOCK_MONOTONIC, NULL, &t));
	struct itimerspec it = after(20 * MS, 0), cur;
	CHECK_OK(timer_settime(t, 0, &it, NULL));
	CHECK_OK(timer_gettime(t, &cur));
	CHECK(cur.it_value.tv_nsec > 0 && cur.it_value.tv_nsec <= 20 * MS);
	siginfo_t si;
	CHECK_EQ(wait_sig(SIGALRM, &si), SIGALRM);
	CHECK_EQ(si.si_code, SI_TIMER);
	CHECK_EQ(si.si_value.sival_int, (int)(intptr_t)t);       /* the id, by default */
	CHECK_OK(timer_gettime(t, &cur));
	CHECK_EQ(cur.it_value.tv_sec + cur.it_value.tv_nsec, 0);
	CHECK_OK(timer_delete(t));
	CHECK_ERR(syscall(SYS_timer_delete, (long)(intptr_t)t), EINVAL);   /* musl returns -EINVAL raw */
}

static void check_handler(void)
{
	struct sigaction sa = { .sa_sigaction = on_sig, .sa_flags = SA_SIGINFO };
	sigemptyset(&sa.sa_mask);
	CHECK_OK(sigaction(SIGUSR1, &sa, NULL));
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1 };
	ev.sigev_value.sival_int = 77;
	timer_t t;
	CHECK_OK(timer_create(CLOCK_REALTIME, &ev, &t));
	struct itimerspec it = after(10 * MS, 0);
	CHECK_OK(timer_settime(t, 0, &it, NULL));
	for (int i = 0; i < 500 && !got_sig; i++) {
		struct timespec nap = { 0, 10 * MS };
		nanosleep(&nap, NULL);
	}
	CHECK_EQ(got_sig, SIGUSR1);
	CHECK_EQ(got_value, 77);
	CHECK_EQ(got_code, SI_TIMER);
	CHECK_OK(timer_delete(t));
}

static void check_none_and_thread(void)
{
	struct sigevent ev = { .sigev_notify = SIGEV_NONE };
	timer_t t;
	CHECK_OK(timer_create(CLOCK_MONOTONIC, &ev, &t));
	struct itimerspec it = after(2000 * MS, 0), cur, old;
	CHECK_OK(timer_settime(t, 0, &it, NULL));
	CHECK_OK(timer_gettime(t, &cur));
	CHECK(cur.it_value.tv_sec >= 1);
	it = after(0, 0);
	CHECK_OK(timer_settime(t, 0, &it, &old));               /* disarm; the old value back */
	CHECK(old.it_value.tv_sec >= 1);
	CHECK_OK(timer_delete(t));
	/* SIGEV_THREAD_ID: to this thread */
	sigset_t s = only(SIGUSR2);
	CHECK_OK(sigprocmask(SIG_BLOCK, &s, NULL));
	struct sigevent tev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGUSR2 };
	tev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
	CHECK_OK(timer_create(CLOCK_MONOTONIC, &tev, &t));
	it = after(10 * MS, 0);
	CHECK_OK(timer_settime(t, 0, &it, NULL));
	siginfo_t si;
	CHECK_EQ(wait_sig(SIGUSR2, &si), SIGUSR2);
	CHECK_EQ(si.si_code, SI_TIMER);
	CHECK_OK(timer_delete(t));
	tev.sigev_notify_thread_id = 999999;                            /* no such thread here */
	CHECK_ERR(timer_create(CLOCK_MONOTONIC, &tev, &t), EINVAL);
}

static void check_overrun(void)
{
	sigset_t s = only(SIGRTMIN);
	CHECK_OK(sigprocmask(SIG_BLOCK, &s, NULL));
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN };
	timer_t t;
	CHECK_OK(timer_create(CLOCK_MONOTONIC, &ev, &t));
	struct itimerspec it = after(10 * MS, 10 * MS);
	CHECK_OK(timer_settime(t, 0, &it, NULL));
	struct timespec nap = { 0, 150 * MS };
	nanosleep(&nap, NULL);                                  /* 15 periods, one signal */
	siginfo_t si;
	CHECK_EQ(wait_sig(SIGRTMIN, &si), SIGRTMIN);
	CHECK(si.si_overrun >= 5);
	CHECK_EQ(timer_getoverrun(t), si.si_overrun);
	it = after(0, 0);
	CHECK_OK(timer_settime(t, 0, &it, NULL));
	CHECK_OK(timer_delete(t));
}

static void check_absolute_and_errors(void)
{
	sigset_t s = only(SIGALRM);
	CHECK_OK(sigprocmask(SIG_BLOCK, &s, NULL));
	timer_t t;
	CHECK_OK(timer_create(CLOCK_MONOTONIC, NULL, &t));
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	struct itimerspec it = { { 0, 0 }, now };
	it.it_value.tv_nsec += 20 * MS;
	if (it.it_value.tv_nsec >= 1000000000L) {
		it.it_value.tv_sec++;
		it.it_value.tv_nsec -= 1000000000L;
	}
	CHECK_OK(timer_settime(t, TIMER_ABSTIME, &it, NULL));
	siginfo_t si;
	CHECK_EQ(wait_sig(SIGALRM, &si), SIGALRM);
	it.it_value.tv_nsec = 1000000000L;
	CHECK_ERR(timer_settime(t, 0, &it, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_timer_settime, 999, 0, &it, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_timer_gettime, 999, &it), EINVAL);
	CHECK_ERR(syscall(SYS_timer_getoverrun, 999), EINVAL);
	CHECK_OK(timer_delete(t));
	struct sigevent bad = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = 99 };
	CHECK_ERR(syscall(SYS_timer_create, CLOCK_MONOTONIC, &bad, &t), EINVAL);
	bad.sigev_notify = 77;
	bad.sigev_signo = SIGALRM;
	CHECK_ERR(syscall(SYS_timer_create, CLOCK_MONOTONIC, &bad, &t), EINVAL);
	CHECK_ERR(syscall(SYS_timer_create, 99, NULL, &t), EINVAL);
	CHECK_ERR(syscall(SYS_timer_create, CLOCK_MONOTONIC, (void *)8, &t), EFAULT);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	check_default();
	check_handler();
	check_none_and_thread();
	check_overrun();
	check_absolute_and_errors();
	return ut_done();
}
