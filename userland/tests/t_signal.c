/*
 * t_signal: signals.
 *
 * rt_sigaction (flags, masks, SA_SIGINFO, SA_RESETHAND, SA_RESTART, the
 * uncatchable signals), rt_sigprocmask (blocking, pending, coalescing),
 * rt_sigreturn (a handler returning, with registers intact while signals
 * rain on a busy loop), kill to oneself, SIGCHLD (info, SIG_IGN
 * auto-reaping), SIGPIPE (EPIPE when ignored, death otherwise), SIGSEGV on
 * bad accesses (caught, blocked, ignored), SIGKILL, EINTR, and what execve
 * keeps and resets.
 */
#include "ut.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static volatile sig_atomic_t hits, last_sig;
static volatile int blocked_inside;
static volatile pid_t info_pid;
static volatile int info_code, info_status;
static volatile uid_t info_uid;

static void count(int sig)
{
	hits++;
	last_sig = sig;
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	blocked_inside = sigismember(&cur, sig) * 1 + sigismember(&cur, SIGUSR2) * 2;
}

static void with_info(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	hits++;
	last_sig = sig;
	info_pid = si->si_pid;
	info_uid = si->si_uid;
	info_code = si->si_code;
	info_status = si->si_status;
}

static int handle(int sig, void (*fn)(int), int flags, int also_block)
{
	struct sigaction sa = { 0 };
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (also_block)
		sigaddset(&sa.sa_mask, also_block);
	return sigaction(sig, &sa, NULL);
}

static int exit_status(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int killed_by(int st, int sig)
{
	return WIFSIGNALED(st) && WTERMSIG(st) == sig;
}

static void test_sigaction(void)
{
	struct sigaction sa = { 0 }, old;
	CHECK_OK(sigaction(SIGUSR1, NULL, &old));
	CHECK(old.sa_handler == SIG_DFL);
	CHECK_OK(handle(SIGUSR1, count, 0, SIGUSR2));
	hits = 0;
	CHECK_OK(kill(getpid(), SIGUSR1));
	CHECK_EQ(hits, 1); /* delivered before kill returned */
	CHECK_EQ(last_sig, SIGUSR1);
	CHECK_EQ(blocked_inside, 3); /* itself and sa_mask, in the handler */
	sigset_t now;
	sigprocmask(SIG_BLOCK, NULL, &now);
	CHECK(!sigismember(&now, SIGUSR1) && !sigismember(&now, SIGUSR2));
	CHECK_OK(raise(SIGUSR1));
	CHECK_EQ(hits, 2);

	CHECK_OK(sigaction(SIGUSR1, NULL, &old));
	CHECK(old.sa_handler == count);
	CHECK(sigismember(&old.sa_mask, SIGUSR2));

	/* SA_NODEFER: the signal is not blocked in its own handler. */
	CHECK_OK(handle(SIGUSR1, count, SA_NODEFER, 0));
	CHECK_OK(kill(getpid(), SIGUSR1));
	CHECK_EQ(blocked_inside, 0);

	/* SA_RESETHAND: one delivery, then back to the default. */
	CHECK_OK(handle(SIGUSR1, count, SA_RESETHAND, 0));
	CHECK_OK(kill(getpid(), SIGUSR1));
	CHECK_OK(sigaction(SIGUSR1, NULL, &old));
	CHECK(old.sa_handler == SIG_DFL);

	/* SIG_IGN: nothing happens. */
	CHECK_OK(handle(SIGUSR1, SIG_IGN, 0, 0));
	hits = 0;
	CHECK_OK(kill(getpid(), SIGUSR1));
	CHECK_EQ(hits, 0);

	/* SA_SIGINFO: who sent it. */
	sa.sa_sigaction = with_info;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	CHECK_OK(sigaction(SIGUSR2, &sa, NULL));
	CHECK_OK(kill(getpid(), SIGUSR2));
	CHECK_EQ(hits, 1);
	CHECK_EQ(info_pid, getpid());
	CHECK_EQ(info_uid, getuid());
	CHECK_EQ(info_code, SI_USER);

	/* The uncatchable ones and bad numbers. */
	sa.sa_handler = count;
	sa.sa_flags = 0;
	CHECK_ERR(sigaction(SIGKILL, &sa, NULL), EINVAL);
	CHECK_ERR(sigaction(SIGSTOP, &sa, NULL), EINVAL);
	CHECK_OK(sigaction(SIGKILL, NULL, &old)); /* reading is fine */
	CHECK_ERR(sigaction(0, &sa, NULL), EINVAL);
	CHECK_ERR(sigaction(65, &sa, NULL), EINVAL);
	/* Raw: the kernel's struct and set size. */
	CHECK_ERR(syscall(SYS_rt_sigaction, SIGUSR1, NULL, NULL, 4), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigaction, SIGUSR1, UT_BADPTR, NULL, 8), EFAULT);
	CHECK_ERR(syscall(SYS_rt_sigaction, SIGUSR1, NULL, UT_KERNPTR, 8), EFAULT);
	CHECK_OK(syscall(SYS_rt_sigaction, SIGUSR1, NULL, NULL, 8));
	signal(SIGUSR1, SIG_DFL);
	signal(SIGUSR2, SIG_DFL);
}

static void test_sigprocmask(void)
{
	sigset_t set, old, pend;
	CHECK_OK(handle(SIGUSR1, count, 0, 0));
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	CHECK_OK(sigprocmask(SIG_BLOCK, &set, &old));
	CHECK(!sigismember(&old, SIGUSR1));
	hits = 0;
	CHECK_OK(kill(getpid(), SIGUSR1));
	CHECK_OK(kill(getpid(), SIGUSR1)); /* coalesces with the first */
	CHECK_EQ(hits, 0);
	CHECK_OK(sigpending(&pend));
	CHECK(sigismember(&pend, SIGUSR1));
	CHECK(!sigismember(&pend, SIGUSR2));
	/* Unblocking delivers it before sigprocmask returns. */
	CHECK_OK(sigprocmask(SIG_UNBLOCK, &set, NULL));
	CHECK_EQ(hits, 1);
	CHECK_OK(sigpending(&pend));
	CHECK(!sigismember(&pend, SIGUSR1));

	/* SIG_SETMASK, and SIGKILL/SIGSTOP silently stay unblocked. */
	sigfillset(&set);
	CHECK_OK(sigprocmask(SIG_SETMASK, &set, &old));
	sigset_t got;
	CHECK_OK(sigprocmask(SIG_BLOCK, NULL, &got));
	CHECK(sigismember(&got, SIGUSR1) && sigismember(&got, SIGTERM));
	CHECK(!sigismember(&got, SIGKILL) && !sigismember(&got, SIGSTOP));
	CHECK_OK(sigprocmask(SIG_SETMASK, &old, NULL));
	CHECK_OK(sigprocmask(SIG_BLOCK, NULL, &got));
	CHECK(!sigismember(&got, SIGUSR1));

	uint64_t raw = 0, rawold = 0;
	CHECK_ERR(syscall(SYS_rt_sigprocmask, 99, &raw, NULL, 8), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &raw, NULL, 4), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigprocmask, SIG_BLOCK, UT_BADPTR, NULL, 8), EFAULT);
	CHECK_ERR(syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, UT_KERNPTR, 8), EFAULT);
	raw = 1ULL << (SIGUSR2 - 1);
	CHECK_OK(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &raw, &rawold, 8));
	CHECK_EQ(rawold & (1ULL << (SIGUSR2 - 1)), 0);
	CHECK_OK(syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &raw, &rawold, 8));
	CHECK(rawold & (1ULL << (SIGUSR2 - 1)));

	/* A child inherits the mask and handlers but not pending signals. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	kill(getpid(), SIGUSR1);
	pid_t pid = fork();
	if (pid == 0) {
		sigset_t m, p;
		sigprocmask(SIG_BLOCK, NULL, &m);
		sigpending(&p);
		struct sigaction a;
		sigaction(SIGUSR1, NULL, &a);
		_exit((sigismember(&m, SIGUSR1) ? 0 : 1) |
		      (sigismember(&p, SIGUSR1) ? 2 : 0) |
		      (a.sa_handler == count ? 0 : 4));
	}
	CHECK_EQ(exit_status(ut_wait(pid)), 0);
	hits = 0;
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	CHECK_EQ(hits, 1);
	signal(SIGUSR1, SIG_DFL);
}

/* A busy loop whose result must not depend on how many signals hit it. */
static volatile sig_atomic_t storm;

static void clobber(int sig)
{
	(void)sig;
	storm++;
	/* Disturb integer and floating-point registers. */
	volatile double d = 1.0;
	for (int i = 0; i < 50; i++)
		d = d * 1.0001 + i;
	volatile uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < 50; i++)
		x = x * 6364136223846793005ULL + 1;
}

static uint64_t churn(long n, double *fp)
{
	uint64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6;
	double x = 0.5, y = 0.25;
	for (long i = 0; i < n; i++) {
		a = a * 6364136223846793005ULL + b;
		b ^= a >> 13;
		c += b * 31 + d;
		d = (d << 7) ^ (d >> 3) ^ e;
		e += f ^ c;
		f = f * 3 + a;
		x = x * 0.999 + (double)(i & 7);
		y = y + x * 1e-9;
	}
	*fp = x + y;
	return a ^ b ^ c ^ d ^ e ^ f;
}

static void test_sigreturn(void)
{
	CHECK_OK(handle(SIGUSR1, clobber, 0, 0));
	storm = 0;
	pid_t me = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 100000; i++) {
			if (kill(me, SIGUSR1) != 0)
				_exit(1);
			struct timespec t = { 0, 100000 };
			nanosleep(&t, NULL);
		}
		_exit(0);
	}
	/* Run in slices until at least 50 signals arrived (bounded). */
	long done = 0;
	uint64_t acc = 0;
	double facc = 0;
	while (storm < 50 && done < 1000L * 100000) {
		double fp;
		acc = acc * 31 + churn(100000, &fp);
		facc += fp;
		done += 100000;
	}
	kill(pid, SIGKILL);
	ut_wait(pid);
	CHECK(storm >= 50);
	/* The same work again with the signal blocked. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	uint64_t quiet = 0;
	double fquiet = 0;
	for (long n = 0; n < done; n += 100000) {
		double fp;
		quiet = quiet * 31 + churn(100000, &fp);
		fquiet += fp;
	}
	CHECK(acc == quiet);
	CHECK(facc == fquiet);
	signal(SIGUSR1, SIG_DFL);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

static void test_sigchld(void)
{
	struct sigaction sa = { 0 };
	sa.sa_sigaction = with_info;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	CHECK_OK(sigaction(SIGCHLD, &sa, NULL));
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	hits = 0;
	pid_t pid = fork();
	if (pid == 0)
		_exit(23);
	CHECK_EQ(exit_status(ut_wait(pid)), 23);
	sigset_t pend;
	sigpending(&pend);
	CHECK(sigismember(&pend, SIGCHLD));
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	CHECK_EQ(hits, 1);
	CHECK_EQ(last_sig, SIGCHLD);
	CHECK_EQ(info_pid, pid);
	CHECK_EQ(info_code, CLD_EXITED);
	CHECK_EQ(info_status, 23);

	sigprocmask(SIG_BLOCK, &set, NULL);
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	kill(pid, SIGKILL);
	CHECK(killed_by(ut_wait(pid), SIGKILL));
	hits = 0;
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	CHECK_EQ(hits, 1);
	CHECK_EQ(info_code, CLD_KILLED);
	CHECK_EQ(info_status, SIGKILL);

	/* The default action of SIGCHLD is to do nothing. */
	signal(SIGCHLD, SIG_DFL);
	CHECK_OK(kill(getpid(), SIGCHLD));

	/* Ignoring SIGCHLD reaps children: wait4 waits for them all, then
	   finds none. */
	signal(SIGCHLD, SIG_IGN);
	pid = fork();
	if (pid == 0)
		_exit(1);
	int st;
	CHECK_ERR(wait4(-1, &st, 0, NULL), ECHILD);
	CHECK_ERR(kill(pid, 0), ESRCH);
	signal(SIGCHLD, SIG_DFL);
}

static void test_sigpipe(void)
{
	int p[2];
	CHECK_OK(pipe(p));
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	CHECK_ERR(write(p[1], "x", 1), EPIPE);
	/* Blocked: EPIPE, and the signal waits. */
	signal(SIGPIPE, SIG_DFL);
	sigset_t set, pend;
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &set, NULL);
	CHECK_ERR(write(p[1], "x", 1), EPIPE);
	sigpending(&pend);
	CHECK(sigismember(&pend, SIGPIPE));
	CHECK_OK(handle(SIGPIPE, count, 0, 0));
	hits = 0;
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	CHECK_EQ(hits, 1);
	/* Caught: the handler runs and write says EPIPE. */
	hits = 0;
	CHECK_ERR(write(p[1], "x", 1), EPIPE);
	CHECK_EQ(hits, 1);
	CHECK_EQ(last_sig, SIGPIPE);
	signal(SIGPIPE, SIG_DFL);
	/* Default: death by SIGPIPE. */
	pid_t pid = fork();
	if (pid == 0) {
		write(p[1], "x", 1);
		_exit(0);
	}
	CHECK(killed_by(ut_wait(pid), SIGPIPE));
	close(p[1]);
}

static sigjmp_buf escape;
static void *volatile segv_addr;
static volatile int segv_code;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	segv_addr = si->si_addr;
	segv_code = si->si_code;
	siglongjmp(escape, sig);
}

static void touch(void *arg)
{
	*(volatile int *)arg = 1;
}

static int status_of_touch(void *addr, int how)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (how == 1) {
			sigset_t all;
			sigfillset(&all);
			sigprocmask(SIG_BLOCK, &all, NULL);
		} else if (how == 2) {
			signal(SIGSEGV, SIG_IGN);
		}
		touch(addr);
		_exit(0);
	}
	return ut_wait(pid);
}

static void test_sigsegv(void)
{
	CHECK(killed_by(status_of_touch(UT_BADPTR, 0), SIGSEGV));
	CHECK(killed_by(status_of_touch(UT_KERNPTR, 0), SIGSEGV));
	CHECK(killed_by(status_of_touch(NULL, 0), SIGSEGV));
	/* A fault cannot be blocked or ignored away: still death. */
	CHECK(killed_by(status_of_touch(UT_BADPTR, 1), SIGSEGV));
	CHECK(killed_by(status_of_touch(UT_BADPTR, 2), SIGSEGV));

	struct sigaction sa = { 0 }, old;
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	CHECK_OK(sigaction(SIGSEGV, &sa, &old));
	int got = sigsetjmp(escape, 1);
	if (got == 0) {
		touch(UT_BADPTR);
		CHECK(!"the bad write came back");
	}
	CHECK_EQ(got, SIGSEGV);
	CHECK(segv_addr == UT_BADPTR);
	CHECK_EQ(segv_code, SEGV_MAPERR);
	/* siglongjmp restored the mask: SIGSEGV is not left blocked. */
	sigset_t now;
	sigprocmask(SIG_BLOCK, NULL, &now);
	CHECK(!sigismember(&now, SIGSEGV));
	got = sigsetjmp(escape, 1);
	if (got == 0) {
		touch(UT_KERNPTR);
		CHECK(!"the kernel-address write came back");
	}
	CHECK_EQ(got, SIGSEGV);
	CHECK(segv_addr == UT_KERNPTR);
	sigaction(SIGSEGV, &old, NULL);
}

static void test_sigkill(void)
{
	int p[2];
	CHECK_OK(pipe(p));
	pid_t pid = fork();
	if (pid == 0) {
		for (int s = 1; s < 32; s++)
			signal(s, SIG_IGN);
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, NULL);
		close(p[0]);
		write(p[1], "r", 1);
		for (;;)
			pause();
	}
	close(p[1]);
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);
	close(p[0]);
	CHECK_OK(kill(pid, SIGTERM)); /* ignored */
	CHECK_OK(kill(pid, SIGKILL));
	CHECK(killed_by(ut_wait(pid), SIGKILL));
	/* SIGKILL to oneself never returns. */
	pid = fork();
	if (pid == 0) {
		kill(getpid(), SIGKILL);
		_exit(0);
	}
	CHECK(killed_by(ut_wait(pid), SIGKILL));
	/* The default action of SIGTERM, SIGUSR1 kills; raise works. */
	pid = fork();
	if (pid == 0) {
		raise(SIGUSR2);
		_exit(0);
	}
	CHECK(killed_by(ut_wait(pid), SIGUSR2));
}

static void nothing(int sig)
{
	(void)sig;
	hits++;
}

/* A child that signals the parent every 200us until killed. */
static pid_t pester(void)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 200000; i++) {
			kill(parent, SIGUSR1);
			struct timespec t = { 0, 200000 };
			nanosleep(&t, NULL);
		}
		_exit(0);
	}
	return pid;
}

static void test_eintr(void)
{
	int p[2];
	char c;
	CHECK_OK(pipe(p));
	CHECK_OK(handle(SIGUSR1, nothing, 0, 0));
	pid_t pid = pester();
	CHECK_ERR(read(p[0], &c, 1), EINTR);
	kill(pid, SIGKILL);
	ut_wait(pid);

	/* With SA_RESTART the read goes on until data arrives. */
	CHECK_OK(handle(SIGUSR1, nothing, SA_RESTART, 0));
	hits = 0;
	pid = pester();
	pid_t writer = fork();
	if (writer == 0) {
		struct timespec t = { 0, 50000000 };
		nanosleep(&t, NULL);
		write(p[1], "d", 1);
		_exit(0);
	}
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'd');
	kill(pid, SIGKILL);
	ut_wait(pid);
	ut_wait(writer);
	/* nanosleep is interrupted even with SA_RESTART, and says how long
	   was left. */
	pid = pester();
	struct timespec req = { 5, 0 }, rem = { 0, 0 };
	CHECK_ERR(nanosleep(&req, &rem), EINTR);
	CHECK(rem.tv_sec <= 5 && (rem.tv_sec > 0 || rem.tv_nsec > 0));
	kill(pid, SIGKILL);
	ut_wait(pid);
	signal(SIGUSR1, SIG_DFL);
	close(p[0]);
	close(p[1]);
}

/* After execve: handled signals are default again; ignored stay ignored;
   the mask is kept. */
static int mode_sigstate(void)
{
	struct sigaction a;
	int r = 0;
	sigaction(SIGUSR1, NULL, &a);
	if (a.sa_handler != SIG_DFL)
		r |= 1;
	sigaction(SIGUSR2, NULL, &a);
	if (a.sa_handler != SIG_IGN)
		r |= 2;
	sigset_t m;
	sigprocmask(SIG_BLOCK, NULL, &m);
	if (!sigismember(&m, SIGTERM) || sigismember(&m, SIGUSR1))
		r |= 4;
	return r;
}

static void test_exec_state(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		handle(SIGUSR1, count, 0, 0);
		signal(SIGUSR2, SIG_IGN);
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGTERM);
		sigprocmask(SIG_BLOCK, &set, NULL);
		char *a[] = { (char *)ut_self, "--as", "sigstate", NULL };
		execve(ut_self, a, environ);
		_exit(99);
	}
	CHECK_EQ(exit_status(ut_wait(pid)), 0);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--as") && !strcmp(argv[2], "sigstate"))
		return mode_sigstate();
	ut_init(argc, argv);
	test_sigaction();
	test_sigprocmask();
	test_sigreturn();
	test_sigchld();
	test_sigpipe();
	test_sigsegv();
	test_sigkill();
	test_eintr();
	test_exec_state();
	return ut_done();
}
