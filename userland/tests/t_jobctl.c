/*
 * t_jobctl: job control, and the sleeps that signals end.
 *
 * Stopping and continuing: SIGSTOP stops a child and waitpid(WUNTRACED)
 * reports it once (WIFSTOPPED, WSTOPSIG); a stopped child does not run
 * and does not act on other signals; SIGCONT continues it and
 * waitpid(WCONTINUED) reports that (WIFCONTINUED); SIGKILL kills a stopped
 * child; SIGTSTP, SIGTTIN and SIGTTOU stop a child in a group of its own
 * but not one in an orphaned group, nor one that handles them; the parent
 * gets SIGCHLD with CLD_STOPPED and CLD_CONTINUED, and none with
 * SA_NOCLDSTOP; SIGCONT discards pending stop signals and a stop signal
 * a pending SIGCONT.
 *
 * Sleeps: poll (on nothing, and on an empty pipe), pause and wait4 end
 * with EINTR when a handled signal arrives (wait4 restarts under
 * SA_RESTART, poll does not); poll reports a pipe's data, room and
 * closed ends (POLLIN, POLLOUT, POLLHUP, POLLERR); poll,
 * nanosleep and pause go on across a stop and continue, and a pipe read
 * is restarted after one.
 *
 * Children that stop use groups of their own: a terminal stop signal
 * does nothing to an orphaned group, and the harness starts each test
 * program in a session of its own.
 */
#include "ut.h"

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t hits, usr1;
static volatile sig_atomic_t chld_code, chld_status, chld_pid;

static void count(int sig)
{
	(void)sig;
	hits++;
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1 = 1;
}

static void on_chld(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	hits++;
	chld_code = si->si_code;
	chld_status = si->si_status;
	chld_pid = si->si_pid;
}

static int handle(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa = { 0 };
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL);
}

static int killed_by(int st, int sig)
{
	return WIFSIGNALED(st) && WTERMSIG(st) == sig;
}

static int exit_status(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void snooze_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&t, &t) != 0 && errno == EINTR)
		;
}

/* Wait for a child's report, retrying when a handler interrupts. */
static pid_t wait_for(pid_t pid, int *st, int options)
{
	pid_t r;
	do
		r = waitpid(pid, st, options);
	while (r < 0 && errno == EINTR);
	return r;
}

/* fork, or the end of the program: a pid of -1 must never reach kill(),
   which would signal every process we may signal. */
static pid_t fork_or_die(void)
{
	pid_t pid = fork();
	if (pid < 0) {
		CHECK(!"fork failed");
		exit(ut_done());
	}
	return pid;
}

/* Fork a child that runs fn (in a group of its own when own_group),
   then tells the parent through a pipe that it is ready; the parent
   returns once it is (a signal may interrupt the read: it goes on). */
static pid_t spawn(void (*fn)(void), int own_group)
{
	int p[2];
	CHECK_OK(pipe(p));
	pid_t pid = fork_or_die();
	if (pid == 0) {
		close(p[0]);
		if (own_group)
			setpgid(0, 0);
		write(p[1], "r", 1);
		close(p[1]);
		fn();
		_exit(0);
	}
	close(p[1]);
	char c;
	ssize_t n;
	while ((n = read(p[0], &c, 1)) < 0 && errno == EINTR)
		;
	CHECK_EQ(n, 1);
	close(p[0]);
	return pid;
}

static void pause_forever(void)
{
	for (;;)
		pause();
}

/* Stop a child, check the report (once), continue it, check that. */
static void test_stop_continue(void)
{
	pid_t pid = spawn(pause_forever, 0);
	CHECK(pid > 0);
	int st = 0;
	CHECK_OK(kill(pid, SIGSTOP));
	CHECK_EQ(wait_for(pid, &st, WUNTRACED), pid);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	CHECK_EQ(wait_for(pid, &st, WUNTRACED | WNOHANG), 0); /* once */
	/* Stopped, it does not act on SIGTERM until continued. */
	CHECK_OK(kill(pid, SIGTERM));
	CHECK_EQ(wait_for(pid, &st, WNOHANG), 0);
	CHECK_OK(kill(pid, SIGSTOP)); /* pending: the SIGCONT discards it */
	CHECK_OK(kill(pid, SIGCONT));
	st = 0;
	pid_t r = wait_for(pid, &st, WCONTINUED);
	CHECK_EQ(r, pid);
	/* Continued, then the SIGTERM kills it: either may be reported
	   first. */
	if (r == pid && WIFCONTINUED(st))
		r = wait_for(pid, &st, 0);
	CHECK_EQ(r, pid);
	CHECK(killed_by(st, SIGTERM));
	/* Without WCONTINUED a continue is not reported. */
	pid = spawn(pause_forever, 0);
	CHECK_OK(kill(pid, SIGSTOP));
	CHECK_EQ(wait_for(pid, &st, WUNTRACED), pid);
	CHECK_OK(kill(pid, SIGCONT));
	CHECK_EQ(wait_for(pid, &st, WNOHANG), 0);
	CHECK_OK(kill(pid, SIGKILL));
	CHECK(killed_by(ut_wait(pid), SIGKILL));
}

/* SIGKILL ends a stopped child at once. */
static void test_kill_stopped(void)
{
	pid_t pid = spawn(pause_forever, 0);
	int st = 0;
	CHECK_OK(kill(pid, SIGSTOP));
	CHECK_EQ(wait_for(pid, &st, WUNTRACED), pid);
	CHECK(WIFSTOPPED(st));
	CHECK_OK(kill(pid, SIGKILL));
	CHECK(killed_by(ut_wait(pid), SIGKILL));
}

static volatile unsigned long *counter;

static void spin(void)
{
	for (;;)
		(*counter)++;
}

/* A stopped child does not run; continued, it runs again. */
static void test_stopped_does_not_run(void)
{
	counter = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(counter != MAP_FAILED);
	if (counter == MAP_FAILED)
		return;
	*counter = 0;
	pid_t pid = spawn(spin, 0);
	for (int i = 0; i < 2000 && *counter == 0; i++)
		snooze_ms(5);
	CHECK(*counter > 0);
	int st = 0;
	CHECK_OK(kill(pid, SIGSTOP));
	CHECK_EQ(wait_for(pid, &st, WUNTRACED), pid);
	unsigned long before = *counter;
	snooze_ms(50);
	CHECK_EQ(*counter, before);
	CHECK_OK(kill(pid, SIGCONT));
	for (int i = 0; i < 2000 && *counter == before; i++)
		snooze_ms(5);
	CHECK(*counter != before);
	CHECK_OK(kill(pid, SIGKILL));
	CHECK(killed_by(ut_wait(pid), SIGKILL));
	munmap((void *)counter, 4096);
}

/* The terminal's stop signals stop a child in a group of its own, which
   a signal to the group continues. */
static void test_terminal_stops(void)
{
	static const int sigs[] = { SIGTSTP, SIGTTIN, SIGTTOU };
	for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		pid_t pid = spawn(pause_forever, 1);
		int st = 0;
		CHECK_OK(kill(pid, sigs[i]));
		CHECK_EQ(wait_for(pid, &st, WUNTRACED), pid);
		CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == sigs[i]);
		CHECK_OK(kill(-pid, SIGCONT));
		CHECK_EQ(wait_for(pid, &st, WCONTINUED), pid);
		CHECK(WIFCONTINUED(st));
		CHECK_OK(kill(pid, SIGKILL));
		CHECK(killed_by(ut_wait(pid), SIGKILL));
	}
}

static void tstp_self_then_exit(void)
{
	raise(SIGTSTP);
	_exit(0);
}

/* SIGTSTP does not stop an orphaned group (a new session) nor a
   process that handles it. */
static void test_no_stop(void)
{
	pid_t pid = fork_or_die();
	if (pid == 0) {
		setsid();
		tstp_self_then_exit();
	}
	int st = 0;
	CHECK_EQ(wait_for(pid, &st, WUNTRACED), pid);
	CHECK_EQ(exit_status(st), 0);

	pid = fork_or_die();
	if (pid == 0) {
		setpgid(0, 0);
		handle(SIGTSTP, on_usr1, 0);
		tstp_self_then_exit();
	}
	CHECK_EQ(wait_for(pid, &st, WUNTRACED), pid);
	CHECK_EQ(exit_status(st), 0);
}

/* The child blocks the signals, lets the parent send, then looks at
   what is pending: SIGTSTP then SIGCONT then SIGTTOU leaves SIGTTOU
   alone (SIGCONT discarded the SIGTSTP, SIGTTOU the SIGCONT). */
static void test_discards(void)
{
	int ready[2], go[2];
	CHECK_OK(pipe(ready));
	CHECK_OK(pipe(go));
	pid_t pid = fork_or_die();
	if (pid == 0) {
		setpgid(0, 0);
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGTSTP);
		sigaddset(&set, SIGTTOU);
		sigaddset(&set, SIGCONT);
		sigprocmask(SIG_BLOCK, &set, NULL);
		char c;
		write(ready[1], "r", 1);
		read(go[0], &c, 1);
		sigset_t pend;
		sigpending(&pend);
		int r = 0;
		if (sigismember(&pend, SIGTSTP))
			r |= 1;
		if (sigismember(&pend, SIGCONT))
			r |= 2;
		if (!sigismember(&pend, SIGTTOU))
			r |= 4;
		signal(SIGTTOU, SIG_IGN); /* discards it */
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		_exit(r);
	}
	char c;
	CHECK_EQ(read(ready[0], &c, 1), 1);
	CHECK_OK(kill(pid, SIGTSTP));
	CHECK_OK(kill(pid, SIGCONT));
	CHECK_OK(kill(pid, SIGTTOU));
	CHECK_EQ(write(go[1], "g", 1), 1);
	int st = 0;
	CHECK_EQ(wait_for(pid, &st, WUNTRACED), pid);
	CHECK_EQ(exit_status(st), 0);
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
}

/* Give the SIGCHLD handler time to see the code want (Linux tells of a
   continue when the child runs again, after waitpid may have returned). */
static void await_chld(int want)
{
	for (int i = 0; i < 500 && chld_code != want; i++)
		snooze_ms(10);
}

/* SIGCHLD tells of stops and continues, unless SA_NOCLDSTOP. */
static void test_sigchld(void)
{
	struct sigaction sa = { 0 }, old;
	sa.sa_sigaction = on_chld;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	CHECK_OK(sigaction(SIGCHLD, &sa, &old));
	pid_t pid = spawn(pause_forever, 0);
	int st = 0;
	chld_code = 0;
	CHECK_OK(kill(pid, SIGSTOP));
	CHECK_EQ(wait_for(pid, &st, WUNTRACED), pid);
	await_chld(CLD_STOPPED);
	CHECK_EQ(chld_code, CLD_STOPPED);
	CHECK_EQ(chld_status, SIGSTOP);
	CHECK_EQ(chld_pid, pid);
	CHECK_OK(kill(pid, SIGCONT));
	CHECK_EQ(wait_for(pid, &st, WCONTINUED), pid);
	await_chld(CLD_CONTINUED);
	CHECK_EQ(chld_code, CLD_CONTINUED);
	CHECK_EQ(chld_status, SIGCONT);
	CHECK_OK(kill(pid, SIGKILL));
	CHECK(killed_by(ut_wait(pid), SIGKILL));

	/* SA_NOCLDSTOP: only the death is told. */
	sa.sa_flags |= SA_NOCLDSTOP;
	CHECK_OK(sigaction(SIGCHLD, &sa, NULL));
	pid = spawn(pause_forever, 0);
	hits = 0;
	chld_code = 0;
	CHECK_OK(kill(pid, SIGSTOP));
	CHECK_EQ(wait_for(pid, &st, WUNTRACED), pid);
	CHECK_OK(kill(pid, SIGCONT));
	CHECK_EQ(wait_for(pid, &st, WCONTINUED), pid);
	CHECK_OK(kill(pid, SIGKILL));
	CHECK(killed_by(ut_wait(pid), SIGKILL));
	await_chld(CLD_KILLED);
	CHECK_EQ(chld_code, CLD_KILLED);
	CHECK_EQ(hits, 1);
	sigaction(SIGCHLD, &old, NULL);
}

/* A child that signals the parent with SIGUSR1 every millisecond until
   killed. */
static pid_t pester(void)
{
	pid_t parent = getpid();
	pid_t pid = fork_or_die();
	if (pid == 0) {
		for (int i = 0; i < 100000; i++) {
			kill(parent, SIGUSR1);
			struct timespec t = { 0, 1000000 };
			nanosleep(&t, NULL);
		}
		_exit(0);
	}
	return pid;
}

static void stop_pester(pid_t pid)
{
	kill(pid, SIGKILL);
	ut_wait(pid);
}

/* poll, pause and wait4 end with EINTR for a handled signal; under
   SA_RESTART wait4 goes on and poll still ends. */
static void test_eintr(void)
{
	CHECK_OK(handle(SIGUSR1, count, SA_RESTART));
	pid_t pid = pester();
	CHECK_ERR(poll(NULL, 0, 20000), EINTR);
	/* An empty pipe keeps poll waiting until the signal. */
	int p[2];
	CHECK_OK(pipe(p));
	struct pollfd pf = { .fd = p[0], .events = POLLIN };
	CHECK_ERR(poll(&pf, 1, 20000), EINTR);
	stop_pester(pid);
	close(p[0]);
	close(p[1]);

	CHECK_OK(handle(SIGUSR1, count, 0));
	pid = pester();
	CHECK_ERR(pause(), EINTR);
	pid_t target = spawn(pause_forever, 0);
	int st;
	CHECK_ERR(waitpid(target, &st, 0), EINTR);
	stop_pester(pid);
	kill(target, SIGKILL);
	CHECK(killed_by(ut_wait(target), SIGKILL));

	/* SA_RESTART: wait4 outlasts the signals and reports the child. */
	CHECK_OK(handle(SIGUSR1, count, SA_RESTART));
	target = fork_or_die();
	if (target == 0) {
		snooze_ms(200); /* signals rain on the waiting parent */
		_exit(7);
	}
	hits = 0;
	pid = pester();
	CHECK_EQ(waitpid(target, &st, 0), target);
	CHECK_EQ(exit_status(st), 7);
	CHECK(hits > 0);
	stop_pester(pid);
	signal(SIGUSR1, SIG_DFL);
}

/* poll on pipes: data, room, and the other end gone. */
static void test_poll_pipe(void)
{
	int p[2];
	CHECK_OK(pipe(p));
	struct pollfd pf[2] = { { .fd = p[0], .events = POLLIN }, { .fd = p[1], .events = POLLOUT } };
	CHECK_EQ(poll(pf, 2, 0), 1);
	CHECK_EQ(pf[0].revents, 0);
	CHECK_EQ(pf[1].revents, POLLOUT);
	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_EQ(poll(pf, 1, 0), 1);
	CHECK_EQ(pf[0].revents, POLLIN);
	close(p[1]); /* data and no writer: both */
	CHECK_EQ(poll(pf, 1, 0), 1);
	CHECK_EQ(pf[0].revents, POLLIN | POLLHUP);
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);
	pf[0].events = 0; /* hang-up is reported unasked */
	CHECK_EQ(poll(pf, 1, 0), 1);
	CHECK_EQ(pf[0].revents, POLLHUP);
	close(p[0]);
	CHECK_OK(pipe(p));
	close(p[0]);
	pf[1].fd = p[1];
	CHECK_EQ(poll(&pf[1], 1, 0), 1);
	CHECK(pf[1].revents & POLLERR);
	close(p[1]);
}

static void poll_300ms(void)
{
	_exit(poll(NULL, 0, 300) == 0 ? 0 : 1);
}

static void nanosleep_300ms(void)
{
	struct timespec t = { 0, 300000000 };
	_exit(nanosleep(&t, NULL) == 0 ? 0 : 1);
}

static void pause_until_usr1(void)
{
	handle(SIGUSR1, on_usr1, 0);
	int r = pause();
	_exit(r == -1 && errno == EINTR && usr1 ? 0 : 1);
}

/* Stop a child sleeping in fn and continue it; *st is then its status. */
static pid_t stop_and_continue(void (*fn)(void), int *st)
{
	pid_t pid = spawn(fn, 0);
	snooze_ms(50); /* into its sleep (if not, the test is weaker, not wrong) */
	CHECK_OK(kill(pid, SIGSTOP));
	CHECK_EQ(wait_for(pid, st, WUNTRACED), pid);
	CHECK(WIFSTOPPED(*st));
	CHECK_OK(kill(pid, SIGCONT));
	return pid;
}

/* A stop and continue does not end poll, nanosleep or pause, and a pipe
   read is restarted after it. */
static void test_sleep_across_stop(void)
{
	int st = 0;
	pid_t pid = stop_and_continue(poll_300ms, &st);
	CHECK_EQ(exit_status(ut_wait(pid)), 0);
	pid = stop_and_continue(nanosleep_300ms, &st);
	CHECK_EQ(exit_status(ut_wait(pid)), 0);
	pid = stop_and_continue(pause_until_usr1, &st);
	snooze_ms(50); /* a pause the continue ended would have returned */
	CHECK_OK(kill(pid, SIGUSR1));
	CHECK_EQ(exit_status(ut_wait(pid)), 0);

	int p[2];
	CHECK_OK(pipe(p));
	pid = fork_or_die();
	if (pid == 0) {
		char c = 0;
		close(p[1]);
		_exit(read(p[0], &c, 1) == 1 && c == 'x' ? 0 : 1);
	}
	close(p[0]);
	snooze_ms(50);
	CHECK_OK(kill(pid, SIGSTOP));
	CHECK_EQ(wait_for(pid, &st, WUNTRACED), pid);
	CHECK_OK(kill(pid, SIGCONT));
	CHECK_EQ(wait_for(pid, &st, WCONTINUED), pid);
	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_EQ(exit_status(ut_wait(pid)), 0);
	close(p[1]);
}

static void say_continued(int sig)
{
	(void)sig;
	write(1, "SLEEPER-CONTINUED\n", 18);
}

/* `t_jobctl --as sleeper`, for the console test (tests/tty_check.py): a
   foreground job that says when it runs (after its exec, so the signals
   typed at it find it with its own dispositions), sleeps, and says when
   it is continued. */
static _Noreturn void mode_sleeper(void)
{
	handle(SIGCONT, say_continued, 0);
	write(1, "SLEEPER-READY\n", 14);
	for (;;) {
		struct timespec t = { 300, 0 };
		nanosleep(&t, NULL);
	}
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--as") && !strcmp(argv[2], "sleeper"))
		mode_sleeper();
	ut_init(argc, argv);
	test_stop_continue();
	test_kill_stopped();
	test_stopped_does_not_run();
	test_terminal_stops();
	test_no_stop();
	test_discards();
	test_sigchld();
	test_eintr();
	test_poll_pipe();
	test_sleep_across_stop();
	return ut_done();
}
