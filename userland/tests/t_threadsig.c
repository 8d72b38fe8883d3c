/*
 * t_threadsig: signals in a process of several threads.
 *
 * A thread's own mask (a signal sent to it with pthread_kill, tgkill,
 * stays pending for it alone while it blocks it, and is handled in it
 * once unblocked); a signal sent to the process is handled by the one
 * thread that does not block it; tgkill's and tkill's errors;
 * rt_sigtimedwait (a blocked signal taken with its siginfo, the timeout's
 * EAGAIN, EINVAL for a bad timeout); SIGSTOP stops every thread and
 * SIGCONT continues them; SIGKILL ends them all.
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

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static volatile pid_t handled_by;
static volatile int handled;

static void record_tid(int sig)
{
	(void)sig;
	handled_by = gettid_();
	handled++;
}

static void on(int sig, void (*fn)(int))
{
	struct sigaction sa = { .sa_handler = fn };
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static void block(int sig, int how)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	pthread_sigmask(how, &s, NULL);
}

/* ---- a thread's own mask ---- */

static volatile int step, pending_seen, main_sees_pending;
static volatile pid_t masked_tid;

static void *masked_thread(void *arg)
{
	(void)arg;
	block(SIGUSR1, SIG_BLOCK);
	masked_tid = gettid_();
	step = 1;
	while (step < 2)
		sched_yield();
	sigset_t pend;
	sigpending(&pend);
	pending_seen = sigismember(&pend, SIGUSR1);
	block(SIGUSR1, SIG_UNBLOCK);        /* the handler runs here, now */
	step = 3;
	return NULL;
}

static void thread_mask(void)
{
	on(SIGUSR1, record_tid);
	handled = 0;
	pthread_t th;
	CHECK_EQ(pthread_create(&th, NULL, masked_thread, NULL), 0);
	while (step < 1)
		sched_yield();
	CHECK_EQ(pthread_kill(th, SIGUSR1), 0);
	sleep_ms(20);
	CHECK_EQ(handled, 0);               /* blocked in that thread */
	sigset_t pend;
	sigpending(&pend);
	main_sees_pending = sigismember(&pend, SIGUSR1);
	step = 2;
	pthread_join(th, NULL);
	CHECK_EQ(pending_seen, 1);
	CHECK_EQ(main_sees_pending, 0);     /* pending for that thread only */
	CHECK_EQ(handled, 1);
	CHECK_EQ(handled_by, masked_tid);
}

/* ---- a process signal goes to the thread that does not block it ---- */

static volatile int stop_all;
static volatile pid_t open_tid;

static void *blocking_thread(void *arg)
{
	(void)arg;
	block(SIGUSR2, SIG_BLOCK);
	while (!stop_all)
		sleep_ms(1);
	return NULL;
}

static void *open_thread(void *arg)
{
	(void)arg;
	block(SIGUSR2, SIG_UNBLOCK);
	open_tid = gettid_();
	while (!stop_all)
		pause();
	return NULL;
}

static void process_signal_to_open_thread(void)
{
	on(SIGUSR2, record_tid);
	handled = 0;
	block(SIGUSR2, SIG_BLOCK);          /* main blocks it, and so do those it makes */
	pthread_t b1, b2, o;
	pthread_create(&b1, NULL, blocking_thread, NULL);
	pthread_create(&b2, NULL, blocking_thread, NULL);
	pthread_create(&o, NULL, open_thread, NULL);
	while (!open_tid)
		sched_yield();
	sleep_ms(20);
	CHECK_EQ(kill(getpid(), SIGUSR2), 0);
	for (int i = 0; i < 500 && !handled; i++)
		sleep_ms(2);
	CHECK_EQ(handled, 1);
	CHECK_EQ(handled_by, open_tid);
	stop_all = 1;
	pthread_kill(o, SIGUSR2);           /* ends its pause */
	pthread_join(b1, NULL);
	pthread_join(b2, NULL);
	pthread_join(o, NULL);
	block(SIGUSR2, SIG_UNBLOCK);
}

/* ---- tgkill and tkill ---- */

static volatile pid_t alive_tid;
static volatile int alive_stop;

static void *stay_alive(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);     /* the signals below are not its */
	alive_tid = gettid_();
	while (!alive_stop)
		sleep_ms(1);
	return NULL;
}

/* The tid of a thread that lives until the end of the program. */
static pid_t masked_tid_alive(void)
{
	static pthread_t th;
	if (!alive_tid) {
		pthread_create(&th, NULL, stay_alive, NULL);
		while (!alive_tid)
			sched_yield();
	}
	return alive_tid;
}

static void tgkill_errors(void)
{
	pid_t me = getpid();
	CHECK_EQ(syscall(SYS_tgkill, me, gettid_(), 0), 0);
	CHECK_EQ(syscall(SYS_tkill, gettid_(), 0), 0);
	CHECK_ERR(syscall(SYS_tgkill, 0, gettid_(), 0), EINVAL);
	CHECK_ERR(syscall(SYS_tgkill, me, 0, 0), EINVAL);
	CHECK_ERR(syscall(SYS_tkill, 0, 0), EINVAL);
	CHECK_ERR(syscall(SYS_tgkill, me, gettid_(), 65), EINVAL);
	CHECK_ERR(syscall(SYS_tgkill, me, 999999, 0), ESRCH);
	/* kill with a thread's tid names its process. */
	CHECK_EQ(kill(masked_tid_alive(), 0), 0);
	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	/* The child's tid is its pid, but not a thread of our process. */
	CHECK_ERR(syscall(SYS_tgkill, me, child, 0), ESRCH);
	CHECK_EQ(syscall(SYS_tgkill, child, child, SIGKILL), 0);
	int st;
	CHECK_EQ(waitpid(child, &st, 0), child);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

/* ---- rt_sigtimedwait ---- */

static pthread_t main_thread;

static void *send_later(void *arg)
{
	(void)arg;
	sleep_ms(30);
	pthread_kill(main_thread, SIGUSR1);
	return NULL;
}

static void timedwait(void)
{
	main_thread = pthread_self();
	block(SIGUSR1, SIG_BLOCK);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	struct timespec short_wait = { 0, 20 * 1000000L };
	CHECK_ERR(sigtimedwait(&set, NULL, &short_wait), EAGAIN);
	struct timespec bad = { 0, -1 };
	CHECK_ERR(sigtimedwait(&set, NULL, &bad), EINVAL);
	pthread_t th;
	pthread_create(&th, NULL, send_later, NULL);
	siginfo_t si;
	struct timespec long_wait = { 5, 0 };
	CHECK_EQ(sigtimedwait(&set, &si, &long_wait), SIGUSR1);
	CHECK_EQ(si.si_signo, SIGUSR1);
	CHECK_EQ(si.si_code, SI_TKILL);
	CHECK_EQ(si.si_pid, getpid());
	pthread_join(th, NULL);
	/* A process-directed signal already pending is taken at once. */
	kill(getpid(), SIGUSR1);
	CHECK_EQ(sigtimedwait(&set, &si, &short_wait), SIGUSR1);
	CHECK_EQ(si.si_code, SI_USER);
	block(SIGUSR1, SIG_UNBLOCK);
}

/* ---- stops and kills reach every thread ---- */

static volatile uint64_t *spins;

static void *spinner(void *arg)
{
	int i = (int)(intptr_t)arg;
	for (;;)
		spins[i]++;
	return NULL;
}

static uint64_t spin_total(void)
{
	return spins[0] + spins[1];
}

static void stop_and_kill_all(void)
{
	spins = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(spins != MAP_FAILED);
	if (spins == MAP_FAILED)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		pthread_t a, b;
		pthread_create(&a, NULL, spinner, (void *)0);
		pthread_create(&b, NULL, spinner, (void *)1);
		for (;;)
			pause();
	}
	while (!spins[0] || !spins[1])
		sched_yield();
	CHECK_EQ(kill(pid, SIGSTOP), 0);
	int st = 0;
	CHECK_EQ(waitpid(pid, &st, WUNTRACED), pid);
	CHECK(WIFSTOPPED(st));
	/* A running thread stops at its next clock tick; under emulation a
	 * processor may lag, so wait for the counts to settle first. */
	uint64_t before = spin_total();
	for (int i = 0; i < 40; i++) {
		sleep_ms(50);
		uint64_t now = spin_total();
		if (now == before)
			break;
		before = now;
	}
	sleep_ms(60);
	CHECK_EQ(spin_total(), before);
	CHECK_EQ(kill(pid, SIGCONT), 0);
	for (int i = 0; i < 500 && spin_total() == before; i++)
		sleep_ms(2);
	CHECK(spin_total() > before);
	CHECK_EQ(kill(pid, SIGKILL), 0);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	munmap((void *)spins, 4096);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	thread_mask();
	process_signal_to_open_thread();
	tgkill_errors();
	timedwait();
	stop_and_kill_all();
	return ut_done();
}
