/*
 * t_sigqueue: signals with a value (sigqueue, rt_sigqueueinfo,
 * rt_tgsigqueueinfo).
 *
 * The value and SI_QUEUE reach an SA_SIGINFO handler and sigtimedwait;
 * a siginfo that claims to come from the kernel or kill(2) (si_code 0 or
 * above, or SI_TKILL) may go only to oneself (EPERM otherwise); a thread
 * gets its own with rt_tgsigqueueinfo; ESRCH and EINVAL as Linux.
 */
#include "ut.h"

#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int got_value, got_code, got_pid;

static void on_usr1(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	got_value = si->si_value.sival_int;
	got_code = si->si_code;
	got_pid = si->si_pid;
}

static long queueinfo(pid_t pid, int sig, int code, int value)
{
	siginfo_t si;
	memset(&si, 0, sizeof si);
	si.si_signo = sig;
	si.si_code = code;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_int = value;
	return syscall(SYS_rt_sigqueueinfo, pid, sig, &si);
}

static void check_self(void)
{
	struct sigaction sa = { .sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO };
	sigemptyset(&sa.sa_mask);
	CHECK_OK(sigaction(SIGUSR1, &sa, NULL));
	union sigval v = { .sival_int = 4242 };
	CHECK_OK(sigqueue(getpid(), SIGUSR1, v));
	CHECK_EQ(got_value, 4242);
	CHECK_EQ(got_code, SI_QUEUE);
	CHECK_EQ(got_pid, getpid());
	CHECK_OK(queueinfo(getpid(), SIGUSR1, 0 /* SI_USER */, 7));  /* to oneself: allowed */
	CHECK_EQ(got_code, SI_USER);
	CHECK_ERR(queueinfo(getpid(), 99, SI_QUEUE, 1), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigqueueinfo, getpid(), SIGUSR1, (void *)8), EFAULT);
}

static void check_wait(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	CHECK_OK(sigprocmask(SIG_BLOCK, &set, NULL));
	union sigval v = { .sival_int = -77 };
	CHECK_OK(sigqueue(getpid(), SIGUSR2, v));
	siginfo_t si;
	struct timespec ts = { 5, 0 };
	CHECK_EQ(sigtimedwait(&set, &si, &ts), SIGUSR2);
	CHECK_EQ(si.si_value.sival_int, -77);
	CHECK_EQ(si.si_code, SI_QUEUE);
}

static void check_other(void)
{
	int p[2];
	CHECK_OK(pipe(p));
	pid_t child = fork();
	if (child == 0) {
		sigset_t set;
		siginfo_t si;
		struct timespec ts = { 10, 0 };
		sigemptyset(&set);
		sigaddset(&set, SIGUSR2);
		sigprocmask(SIG_BLOCK, &set, NULL);
		ut_tell(p[1]);
		int sig = sigtimedwait(&set, &si, &ts);
		_exit(sig == SIGUSR2 && si.si_value.sival_int == 99 && si.si_code == SI_QUEUE ? 0 : 1);
	}
	CHECK_EQ(ut_await(p[0]), 0);
	CHECK_ERR(queueinfo(child, SIGUSR2, 0 /* SI_USER */, 1), EPERM);
	CHECK_ERR(queueinfo(child, SIGUSR2, SI_TKILL, 1), EPERM);
	CHECK_OK(queueinfo(child, SIGUSR2, SI_QUEUE, 99));
	CHECK_EQ(ut_wait(child), 0);
	CHECK_ERR(queueinfo(child, SIGUSR2, SI_QUEUE, 1), ESRCH);      /* reaped */
	close(p[0]);
	close(p[1]);
}

static void check_thread(void)
{
	siginfo_t si;
	memset(&si, 0, sizeof si);
	si.si_code = SI_QUEUE;
	si.si_value.sival_int = 31;
	got_value = 0;
	CHECK_OK(syscall(SYS_rt_tgsigqueueinfo, getpid(), (pid_t)syscall(SYS_gettid), SIGUSR1, &si));
	CHECK_EQ(got_value, 31);
	CHECK_ERR(syscall(SYS_rt_tgsigqueueinfo, getpid(), 999999, SIGUSR1, &si), ESRCH);
	CHECK_ERR(syscall(SYS_rt_tgsigqueueinfo, 0, 1, SIGUSR1, &si), EINVAL);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	check_self();
	check_wait();
	check_other();
	check_thread();
	return ut_done();
}
