/*
 * t_proc: processes.
 *
 * fork, vfork (the child runs in our memory and we wait for its exec or
 * exit), clone (as fork), posix_spawn, execve (argv, envp, close-on-exec,
 * the pid kept, #! scripts, ENOENT/ENOEXEC/EACCES...), exit, exit_group,
 * wait4 (exit and signal statuses, WNOHANG, ECHILD, process groups),
 * waitid (P_PID, P_PGID, P_ALL, WNOHANG, WNOWAIT, the siginfo), children
 * reaped by nobody when SIGCHLD is ignored, getpid, getppid (and
 * reparenting), kill, setpgid, getpgid, getsid, setsid, and a fork bomb
 * stopped by RLIMIT_NPROC with EAGAIN (as uid 65534; root ignores it).
 *
 * The program re-executes itself (ut_self) with "--as MODE ..." to be the
 * target of execve; those modes report through their exit status.
 */
#include "ut.h"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---- the modes run after execve; exit status 0 means "as expected" ---- */

static int mode_args(int argc, char **argv)
{
	/* argv: self --as args one "two words" "" */
	const char *env = getenv("UT_ENV");
	if (argc != 6 || strcmp(argv[3], "one") || strcmp(argv[4], "two words") ||
	    strcmp(argv[5], ""))
		return 10;
	if (!env || strcmp(env, "hello"))
		return 11;
	if (getenv("PATH_SHOULD_BE_GONE"))
		return 12;
	return 0;
}

static int mode_fds(int argc, char **argv)
{
	/* argv: self --as fds KEPT CLOSED PID */
	if (argc != 6)
		return 10;
	int kept = atoi(argv[3]), closed = atoi(argv[4]);
	if (fcntl(kept, F_GETFD) != 0)
		return 11;
	if (fcntl(closed, F_GETFD) != -1 || errno != EBADF)
		return 12;
	char c;
	if (read(kept, &c, 1) != 1 || c != 'K')
		return 13;
	if (getpid() != atoi(argv[5]))
		return 14;
	return 0;
}

static int mode_script(int argc, char **argv)
{
	/* #!SELF --as         -> argv: SELF --as SCRIPT arg1 */
	if (argc != 4 || strcmp(argv[1], "--as"))
		return 10;
	if (strcmp(argv[2], "./script") || strcmp(argv[3], "arg1"))
		return 11;
	return 0;
}

static int mode_script_arg(int argc, char **argv)
{
	/* #!SELF --as scriptarg    -> argv: SELF "--as scriptarg" SCRIPT */
	if (argc != 3 || strcmp(argv[1], "--as scriptarg") ||
	    strcmp(argv[2], "./script2"))
		return 10;
	return 0;
}

static int run_mode(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--as scriptarg"))
		return mode_script_arg(argc, argv);
	if (argc == 4 && !strcmp(argv[1], "--as") && !strcmp(argv[2], "./script"))
		return mode_script(argc, argv);
	if (argc < 3)
		return 20;
	if (!strcmp(argv[2], "args"))
		return mode_args(argc, argv);
	if (!strcmp(argv[2], "fds"))
		return mode_fds(argc, argv);
	if (!strcmp(argv[2], "drain") && argc == 4) {
		char c;
		while (read(atoi(argv[3]), &c, 1) > 0)
			;
		return 0;
	}
	if (!strcmp(argv[2], "exit"))
		return argc > 3 ? atoi(argv[3]) : 0;
	return 21;
}

/* ---- tests ---- */

static int exit_status(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_fork_wait(void)
{
	pid_t me = getpid();
	CHECK(me > 0);
	int p[2];
	CHECK_OK(pipe(p));
	pid_t pid = fork();
	if (pid == 0) {
		pid_t mine = getpid(), parent = getppid();
		write(p[1], &mine, sizeof mine);
		write(p[1], &parent, sizeof parent);
		_exit(42);
	}
	CHECK(pid > 0 && pid != me);
	pid_t child_pid = 0, child_parent = 0;
	CHECK_EQ(read(p[0], &child_pid, sizeof child_pid), sizeof child_pid);
	CHECK_EQ(read(p[0], &child_parent, sizeof child_parent), sizeof child_parent);
	CHECK_EQ(child_pid, pid);
	CHECK_EQ(child_parent, me);
	close(p[0]);
	close(p[1]);
	int st = 0;
	struct rusage ru;
	memset(&ru, 0xff, sizeof ru);
	CHECK_EQ(wait4(pid, &st, 0, &ru), pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 42);
	CHECK(!WIFSIGNALED(st));
	CHECK(ru.ru_utime.tv_sec >= 0 && ru.ru_utime.tv_usec >= 0 &&
	      ru.ru_utime.tv_usec < 1000000);
	CHECK_ERR(wait4(pid, &st, 0, NULL), ECHILD);
	CHECK_ERR(wait4(-1, &st, 0, NULL), ECHILD);
	CHECK_ERR(wait4(1, &st, 0, NULL), ECHILD); /* not our child */
	CHECK_ERR(wait4(-1, &st, 0x10000, NULL), EINVAL);

	/* Only the low 8 bits of the exit code reach the parent. */
	pid = fork();
	if (pid == 0)
		_exit(256 + 3);
	CHECK_EQ(exit_status(ut_wait(pid)), 3);
	/* exit and exit_group, raw. */
	pid = fork();
	if (pid == 0)
		syscall(SYS_exit, 7);
	CHECK_EQ(exit_status(ut_wait(pid)), 7);
	pid = fork();
	if (pid == 0)
		syscall(SYS_exit_group, 8);
	CHECK_EQ(exit_status(ut_wait(pid)), 8);
	/* exit() from C returns from main's caller: status too. */
	pid = fork();
	if (pid == 0)
		exit(9);
	CHECK_EQ(exit_status(ut_wait(pid)), 9);

	/* Death by a signal. */
	CHECK_OK(pipe(p));
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		char c;
		read(p[0], &c, 1); /* waits for ever */
		_exit(0);
	}
	close(p[0]);
	/* WNOHANG: still running, so 0 and the status untouched. */
	st = 12345;
	CHECK_EQ(wait4(pid, &st, WNOHANG, NULL), 0);
	CHECK_EQ(st, 12345);
	CHECK_OK(kill(pid, 0));
	CHECK_OK(kill(pid, SIGKILL));
	CHECK_EQ(wait4(pid, &st, 0, NULL), pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	CHECK(!WIFEXITED(st));
	CHECK_ERR(kill(pid, 0), ESRCH); /* reaped: gone */
	close(p[1]);

	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	CHECK_OK(kill(pid, SIGTERM));
	st = ut_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);

	/* A zombie still exists for kill(pid, 0) until it is reaped. */
	CHECK_OK(pipe(p));
	pid = fork();
	if (pid == 0)
		_exit(0);
	siginfo_t si;
	CHECK_OK(waitid(P_PID, pid, &si, WEXITED | WNOWAIT));
	CHECK_OK(kill(pid, 0));
	CHECK_EQ(exit_status(ut_wait(pid)), 0);
	close(p[0]);
	close(p[1]);

	/* Linux looks the process up first: ESRCH beats EINVAL. */
	CHECK_ERR(kill(pid, 1000), ESRCH);
	CHECK_ERR(kill(getpid(), 1000), EINVAL);
	CHECK_ERR(kill(getpid(), -1), EINVAL);
	CHECK_OK(kill(getpid(), 0));
	CHECK_ERR(kill(0x7ffffff0, 0), ESRCH);

	/* Several children, reaped in any order by wait4(-1). */
	enum { N = 12 };
	pid_t kids[N];
	for (int i = 0; i < N; i++) {
		kids[i] = fork();
		if (kids[i] == 0)
			_exit(100 + i);
	}
	int found = 0;
	for (int i = 0; i < N; i++) {
		pid_t w = wait4(-1, &st, 0, NULL);
		for (int k = 0; k < N; k++)
			if (kids[k] == w && exit_status(st) == 100 + k)
				found |= 1 << k;
	}
	CHECK_EQ(found, (1 << N) - 1);
	CHECK_ERR(wait4(-1, &st, WNOHANG, NULL), ECHILD);
}

/* ---- clone3 ---- */

#ifndef SYS_clone3
#define SYS_clone3 435
#endif

struct clone_args_u {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
	uint64_t set_tid, set_tid_size, cgroup;
};

static long clone3_(struct clone_args_u *ca, size_t size)
{
	return syscall(SYS_clone3, ca, size);
}

static void clone3_unprivileged(void *arg)
{
	(void)arg;
	pid_t want = 30000;
	struct clone_args_u ca = { .exit_signal = SIGCHLD, .set_tid = (uint64_t)(uintptr_t)&want,
				   .set_tid_size = 1 };
	CHECK_ERR(clone3_(&ca, sizeof ca), EPERM);      /* choosing a pid is privileged */
}

static void test_clone3(void)
{
	/* A fork: the exit signal in its own field, the pid in parent_tid. */
	pid_t ptid = 0;
	struct clone_args_u ca = { .flags = CLONE_PARENT_SETTID, .exit_signal = SIGCHLD,
				   .parent_tid = (uint64_t)(uintptr_t)&ptid };
	long pid = clone3_(&ca, sizeof ca);
	if (pid == 0)
		syscall(SYS_exit_group, 23);
	CHECK(pid > 0);
	CHECK_EQ(ptid, pid);
	CHECK_EQ(exit_status(ut_wait(pid)), 23);
	/* The first version's size (64 bytes) is enough. */
	struct clone_args_u v0 = { .exit_signal = SIGCHLD };
	pid = clone3_(&v0, 64);
	if (pid == 0)
		syscall(SYS_exit_group, 24);
	CHECK(pid > 0);
	CHECK_EQ(exit_status(ut_wait(pid)), 24);

	/* Refusals, in Linux's words. */
	struct clone_args_u bad = { .exit_signal = SIGCHLD };
	CHECK_ERR(clone3_(&bad, 8), EINVAL);
	CHECK_ERR(clone3_(&bad, 8192), E2BIG);
	CHECK_ERR(syscall(SYS_clone3, UT_BADPTR, sizeof bad), EFAULT);
	struct { struct clone_args_u a; uint64_t more; } big = { { .exit_signal = SIGCHLD }, 1 };
	CHECK_ERR(clone3_(&big.a, sizeof big), E2BIG);  /* a field we do not know, set */
	bad.flags = SIGCHLD;                            /* the signal goes in exit_signal */
	CHECK_ERR(clone3_(&bad, sizeof bad), EINVAL);
	bad.flags = 1ULL << 40;
	CHECK_ERR(clone3_(&bad, sizeof bad), EINVAL);
	bad.flags = 0;
	bad.exit_signal = 65;
	CHECK_ERR(clone3_(&bad, sizeof bad), EINVAL);
	bad.exit_signal = SIGCHLD;
	bad.stack_size = 4096;                          /* a size without a stack */
	CHECK_ERR(clone3_(&bad, sizeof bad), EINVAL);
	bad.stack_size = 0;
	bad.flags = CLONE_THREAD | CLONE_VM;            /* a thread shares the handlers */
	CHECK_ERR(clone3_(&bad, sizeof bad), EINVAL);
	bad.flags = 0;
	bad.set_tid_size = 33;
	CHECK_ERR(clone3_(&bad, sizeof bad), EINVAL);
	ut_unprivileged("clone3", clone3_unprivileged, NULL);
}

static void test_clone_vfork(void)
{
	/* clone with only SIGCHLD is fork. */
	long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	if (pid == 0)
		syscall(SYS_exit_group, 17);
	CHECK(pid > 0);
	CHECK_EQ(exit_status(ut_wait(pid)), 17);

	/* vfork: the child borrows the memory and the parent waits. */
	static volatile int borrowed;
	borrowed = 0;
	pid = vfork();
	if (pid == 0) {
		borrowed = 1;
		_exit(5);
	}
	CHECK(pid > 0);
	CHECK_EQ(borrowed, 1);
	CHECK_EQ(exit_status(ut_wait(pid)), 5);

	/* The parent sleeps until the child exits: what the child wrote
	 * after a pause is there when vfork returns. */
	borrowed = 0;
	pid = vfork();
	if (pid == 0) {
		struct timespec ms = { 0, 20000000 };
		nanosleep(&ms, NULL);
		borrowed = 2;
		_exit(6);
	}
	CHECK_EQ(borrowed, 2);
	CHECK_EQ(exit_status(ut_wait(pid)), 6);

	/* vfork then execve. */
	char *args[] = { (char *)ut_self, "--as", "exit", "33", NULL };
	pid = vfork();
	if (pid == 0) {
		execve(ut_self, args, environ);
		_exit(99);
	}
	CHECK_EQ(exit_status(ut_wait(pid)), 33);

	/* The parent goes on at the child's execve, while the new program
	 * runs: this one waits for us to close the pipe. */
	int hold[2];
	CHECK_OK(pipe(hold));
	char fd[16];
	snprintf(fd, sizeof fd, "%d", hold[0]);
	char *drain[] = { (char *)ut_self, "--as", "drain", fd, NULL };
	pid = vfork();
	if (pid == 0) {
		close(hold[1]);
		execve(ut_self, drain, environ);
		_exit(99);
	}
	CHECK(pid > 0);
	int st = 12345;
	CHECK_EQ(waitpid(pid, &st, WNOHANG), 0); /* still running */
	close(hold[1]);
	close(hold[0]);
	CHECK_EQ(exit_status(ut_wait(pid)), 0);

	/* A failed execve in the child leaves the parent's memory usable. */
	pid = vfork();
	if (pid == 0) {
		char *none[] = { "missing", NULL };
		execve("missing/nothing", none, environ);
		borrowed = errno;
		_exit(7);
	}
	CHECK_EQ(borrowed, ENOENT);
	CHECK_EQ(exit_status(ut_wait(pid)), 7);

	/* posix_spawn (musl: clone with CLONE_VM|CLONE_VFORK on a stack of
	 * its own). */
	char *sargs[] = { (char *)ut_self, "--as", "exit", "44", NULL };
	pid_t spid = 0;
	CHECK_EQ(posix_spawn(&spid, ut_self, NULL, NULL, sargs, environ), 0);
	CHECK(spid > 0);
	CHECK_EQ(exit_status(ut_wait(spid)), 44);
	char *nargs[] = { "missing", NULL };
	CHECK_EQ(posix_spawn(&spid, "missing/x", NULL, NULL, nargs, environ), ENOENT);
	while (waitpid(-1, &st, WNOHANG) > 0) /* the failed one, where it is a child */
		;
}

static void test_waitid(void)
{
	siginfo_t si;
	/* An exit: the siginfo says who and how, and the child is reaped. */
	pid_t pid = fork();
	if (pid == 0)
		_exit(23);
	memset(&si, 0x5a, sizeof si);
	CHECK_OK(waitid(P_PID, pid, &si, WEXITED));
	CHECK_EQ(si.si_signo, SIGCHLD);
	CHECK_EQ(si.si_errno, 0);
	CHECK_EQ(si.si_code, CLD_EXITED);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_uid, getuid());
	CHECK_EQ(si.si_status, 23);
	CHECK_ERR(waitid(P_PID, pid, &si, WEXITED), ECHILD);

	/* A death by a signal: CLD_KILLED and the signal. */
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	CHECK_OK(kill(pid, SIGKILL));
	CHECK_OK(waitid(P_ALL, 0, &si, WEXITED));
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_code, CLD_KILLED);
	CHECK_EQ(si.si_status, SIGKILL);

	/* WNOHANG with a running child: 0, and si_pid and si_signo zeroed. */
	int hold[2];
	CHECK_OK(pipe(hold));
	pid = fork();
	if (pid == 0) {
		char c;
		close(hold[1]);
		read(hold[0], &c, 1);
		_exit(3);
	}
	close(hold[0]);
	memset(&si, 0x5a, sizeof si);
	CHECK_OK(waitid(P_PID, pid, &si, WEXITED | WNOHANG));
	CHECK_EQ(si.si_pid, 0);
	CHECK_EQ(si.si_signo, 0);
	close(hold[1]);
	CHECK_OK(waitid(P_PID, pid, &si, WEXITED | WNOWAIT));
	CHECK_EQ(si.si_pid, pid);
	/* Asked for stopped or continued children only, a zombie is no
	 * child at all (Linux). */
	memset(&si, 0x5a, sizeof si);
	CHECK_ERR(waitid(P_PID, pid, &si, WSTOPPED | WCONTINUED | WNOHANG), ECHILD);
	CHECK_EQ(si.si_pid, 0);
	/* WNOWAIT leaves the zombie: asked again, the same answer. */
	CHECK_OK(waitid(P_ALL, 0, &si, WEXITED | WNOWAIT));
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_status, 3);
	CHECK_OK(kill(pid, 0));
	/* The reap takes the rusage too (waitid's fifth argument). */
	struct rusage ru;
	memset(&ru, 0xff, sizeof ru);
	CHECK_OK(syscall(SYS_waitid, P_PID, pid, &si, WEXITED, &ru));
	CHECK_EQ(si.si_status, 3);
	CHECK(ru.ru_utime.tv_sec >= 0 && ru.ru_utime.tv_usec >= 0 &&
	      ru.ru_utime.tv_usec < 1000000 && ru.ru_stime.tv_usec < 1000000);
	CHECK_ERR(kill(pid, 0), ESRCH);

	/* P_PGID: a child in a group of its own; 0 means our group. */
	int go[2];
	CHECK_OK(pipe(go));
	pid_t other = fork();
	if (other == 0) {
		char c;
		close(go[1]);
		read(go[0], &c, 1);
		_exit(4);
	}
	CHECK_OK(setpgid(other, other));
	pid_t same = fork();
	if (same == 0) {
		char c;
		close(go[1]);
		read(go[0], &c, 1);
		_exit(5);
	}
	close(go[0]);
	close(go[1]);
	CHECK_OK(waitid(P_PGID, other, &si, WEXITED));
	CHECK_EQ(si.si_pid, other);
	CHECK_EQ(si.si_status, 4);
	CHECK_OK(waitid(P_PGID, 0, &si, WEXITED));
	CHECK_EQ(si.si_pid, same);
	CHECK_EQ(si.si_status, 5);
	/* wait4 by group as well: -pgid, and 0 for ours. */
	other = fork();
	if (other == 0) {
		setpgid(0, 0);
		struct timespec ms = { 0, 5000000 };
		nanosleep(&ms, NULL); /* a zombie's group can still be set */
		_exit(8);
	}
	setpgid(other, other); /* whoever is first */
	int st;
	CHECK_EQ(waitpid(-other, &st, WUNTRACED), other);
	CHECK_EQ(exit_status(st), 8);

	/* Errors. */
	CHECK_ERR(waitid(P_ALL, 0, &si, WEXITED), ECHILD);
	CHECK_ERR(waitid(P_ALL, 0, &si, WEXITED | WNOHANG), ECHILD);
	CHECK_ERR(waitid(P_ALL, 0, &si, 0), EINVAL);     /* no event asked for */
	CHECK_ERR(waitid(P_ALL, 0, &si, WNOHANG), EINVAL);
	CHECK_ERR(waitid(P_ALL, 0, &si, WEXITED | 0x10000), EINVAL);
	CHECK_ERR(waitid((idtype_t)42, 0, &si, WEXITED), EINVAL);
	CHECK_ERR(waitid(P_PID, 0, &si, WEXITED), EINVAL);
	CHECK_ERR(waitid(P_PID, -5, &si, WEXITED), EINVAL);
	CHECK_ERR(waitid(P_PGID, -5, &si, WEXITED), EINVAL);
	CHECK_ERR(wait4(-1, &st, WNOWAIT, NULL), EINVAL); /* waitid's only */
	CHECK_ERR(wait4(-1, &st, WEXITED, NULL), EINVAL);
	pid = fork();
	if (pid == 0)
		_exit(0);
	CHECK_ERR(syscall(SYS_waitid, P_PID, pid, UT_BADPTR, WEXITED, NULL), EFAULT);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR) /* if the fault kept it */
		;
}

/* With SIGCHLD ignored nobody waits for the children: they vanish when
 * they exit, and a wait sleeps until the last is gone, then says ECHILD. */
static void test_nocldwait(void)
{
	CHECK(signal(SIGCHLD, SIG_IGN) != SIG_ERR);
	int hold[2];
	CHECK_OK(pipe(hold));
	pid_t slow = fork();
	if (slow == 0) {
		char c;
		close(hold[1]);
		read(hold[0], &c, 1);
		_exit(1);
	}
	pid_t quick = fork();
	if (quick == 0)
		_exit(2);
	close(hold[0]);
	int st;
	/* The quick one is gone by itself; the slow one holds the wait. */
	struct timespec ms = { 0, 10000000 };
	for (int i = 0; i < 500 && kill(quick, 0) == 0; i++)
		nanosleep(&ms, NULL);
	CHECK_ERR(kill(quick, 0), ESRCH);
	CHECK_EQ(waitpid(-1, &st, WNOHANG), 0);
	close(hold[1]);
	CHECK_ERR(waitpid(-1, &st, 0), ECHILD);
	CHECK_ERR(kill(slow, 0), ESRCH);
	CHECK(signal(SIGCHLD, SIG_DFL) != SIG_ERR);
	/* SA_NOCLDWAIT with the default action: the same. */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sa.sa_flags = SA_NOCLDWAIT;
	CHECK_OK(sigaction(SIGCHLD, &sa, NULL));
	pid_t pid = fork();
	if (pid == 0)
		_exit(3);
	CHECK_ERR(waitpid(pid, &st, 0), ECHILD);
	sa.sa_flags = 0;
	CHECK_OK(sigaction(SIGCHLD, &sa, NULL));
}

static int run(const char *path, char **argv, char **envp)
{
	pid_t pid = fork();
	if (pid == 0) {
		execve(path, argv, envp);
		_exit(100 + errno);
	}
	return exit_status(ut_wait(pid));
}

static void test_execve(void)
{
	char *args[] = { (char *)ut_self, "--as", "args", "one", "two words", "", NULL };
	char *env[] = { "UT_ENV=hello", "OTHER=1", NULL };
	CHECK_EQ(run(ut_self, args, env), 0);
	char *exit_args[] = { "anything", "--as", "exit", "77", NULL };
	CHECK_EQ(run(ut_self, exit_args, env), 77);

	/* Close-on-exec closes; other descriptors stay; the pid stays. */
	int p[2], q[2];
	CHECK_OK(pipe(p));
	CHECK_OK(pipe2(q, O_CLOEXEC));
	CHECK_EQ(write(p[1], "K", 1), 1);
	pid_t pid = fork();
	if (pid == 0) {
		char kept[16], closed[16], me[16];
		snprintf(kept, sizeof kept, "%d", p[0]);
		snprintf(closed, sizeof closed, "%d", q[0]);
		snprintf(me, sizeof me, "%d", getpid());
		char *a[] = { (char *)ut_self, "--as", "fds", kept, closed, me, NULL };
		execve(ut_self, a, environ);
		_exit(99);
	}
	CHECK_EQ(exit_status(ut_wait(pid)), 0);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);

	/* Errors come back to the caller, who goes on. */
	char *none[] = { "x", NULL };
	CHECK_ERR(execve("missing", none, environ), ENOENT);
	CHECK_ERR(execve("missing/x", none, environ), ENOENT);
	CHECK_OK(ut_write_file("plain", "#!/nothing/here\n", 16, 0644));
	CHECK_ERR(execve("plain", none, environ), EACCES);
	CHECK_ERR(execve("plain/x", none, environ), ENOTDIR);
	CHECK_OK(mkdir("dir", 0755));
	CHECK_ERR(execve("dir", none, environ), EACCES);
	char garbage[512];
	for (size_t i = 0; i < sizeof garbage; i++)
		garbage[i] = (char)(i * 37 + 11);
	garbage[0] = 'G'; /* neither "\177ELF" nor "#!" */
	CHECK_OK(ut_write_file("garbage", garbage, sizeof garbage, 0755));
	CHECK_ERR(execve("garbage", none, environ), ENOEXEC);
	CHECK_OK(ut_write_file("emptyexe", "", 0, 0755));
	CHECK_ERR(execve("emptyexe", none, environ), ENOEXEC);
	/* A truncated ELF header is not executable either. */
	CHECK_OK(ut_write_file("badelf", "\177ELF\2\1\1", 7, 0755));
	CHECK_ERR(execve("badelf", none, environ), ENOEXEC);
	CHECK_ERR(execve(UT_BADPTR, none, environ), EFAULT);
	CHECK_ERR(execve(ut_self, UT_BADPTR, environ), EFAULT);
	CHECK_ERR(execve(ut_self, none, UT_KERNPTR), EFAULT);
	char *badargv[] = { "x", UT_BADPTR, NULL };
	CHECK_ERR(execve(ut_self, badargv, environ), EFAULT);
	/* A script whose interpreter is missing: ENOENT. */
	CHECK_OK(ut_write_file("noint", "#!/nothing/here\n", 16, 0755));
	CHECK_ERR(execve("noint", none, environ), ENOENT);

	/* #! scripts: the interpreter gets its argument and the script path. */
	char text[PATH_MAX + 64];
	int n = snprintf(text, sizeof text, "#!%s --as\nnot run\n", ut_self);
	CHECK_OK(ut_write_file("script", text, n, 0755));
	char *sargs[] = { "./script", "arg1", NULL };
	CHECK_EQ(run("./script", sargs, environ), 0);
	/* Everything after the interpreter is one argument, spaces and all. */
	n = snprintf(text, sizeof text, "#! %s --as scriptarg\n", ut_self);
	CHECK_OK(ut_write_file("script2", text, n, 0755));
	char *sargs2[] = { "whatever", NULL };
	CHECK_EQ(run("./script2", sargs2, environ), 0);
}

static void test_getppid_reparent(void)
{
	int p[2];
	CHECK_OK(pipe(p));
	pid_t middle = fork();
	if (middle == 0) {
		pid_t first = getpid(); /* the grandchild's first parent */
		pid_t grandchild = fork();
		if (grandchild == 0) {
			if (getppid() != first && getppid() != 1)
				first = -1; /* neither parent nor reaper */
			close(p[0]);
			/* Wait (bounded) for the middle process to die. */
			for (int i = 0; i < 5000 && getppid() == first; i++) {
				struct timespec ms = { 0, 1000000 };
				nanosleep(&ms, NULL);
			}
			pid_t now = getppid();
			char ok = now != first && now > 0;
			write(p[1], &ok, 1);
			_exit(0);
		}
		_exit(0);
	}
	close(p[1]);
	CHECK_EQ(exit_status(ut_wait(middle)), 0);
	char ok = 0;
	CHECK_EQ(read(p[0], &ok, 1), 1);
	CHECK_EQ(ok, 1);
	close(p[0]);
}

static void test_groups_sessions(void)
{
	pid_t me = getpid();
	pid_t pg = getpgid(0);
	CHECK(pg > 0);
	CHECK_EQ(getpgid(me), pg);
	CHECK_EQ(getpgrp(), pg);
	CHECK_ERR(getpgid(0x7ffffff0), ESRCH);
	CHECK_ERR(getsid(0x7ffffff0), ESRCH);
	/* 0 when our session's leader is outside this pid namespace (a
	 * container's init started us without setsid): Linux allows it. */
	CHECK(getsid(0) >= 0);

	pid_t pid = fork();
	if (pid == 0)
		_exit(getpgid(0) == pg && getsid(0) == getsid(getppid()) ? 0 : 1);
	CHECK_EQ(exit_status(ut_wait(pid)), 0); /* inherited */

	int go[2], back[2];
	CHECK_OK(pipe(go));
	pid = fork();
	if (pid == 0) {
		char c;
		int r = 0;
		read(go[0], &c, 1); /* the parent set our group */
		if (getpgid(0) != getpid())
			r |= 2;
		/* A group leader may not start a session. */
		if (setsid() != -1 || errno != EPERM)
			r |= 4;
		_exit(r);
	}
	CHECK_OK(setpgid(pid, pid));
	CHECK_EQ(getpgid(pid), pid);
	CHECK_OK(setpgid(pid, pid)); /* again: no change, fine */
	CHECK_ERR(setpgid(pid, -1), EINVAL);
	CHECK_ERR(setpgid(0x7ffffff0, 0), ESRCH);
	CHECK_ERR(setpgid(pid, 0x7ffffff0), EPERM); /* no such group */
	CHECK_EQ(write(go[1], "g", 1), 1);
	CHECK_EQ(exit_status(ut_wait(pid)), 0);
	CHECK_ERR(setpgid(pid, pid), ESRCH); /* not our child any more */

	pid = fork();
	if (pid == 0) {
		int r = 0;
		if (setpgid(0, 0) != 0 || getpgid(0) != getpid())
			r |= 1;
		if (setpgid(0, pg) != 0 || getpgid(0) != pg) /* back again */
			r |= 2;
		pid_t sid = setsid();
		if (sid != getpid() || getsid(0) != sid || getpgid(0) != sid)
			r |= 4;
		/* A session leader cannot change group... */
		if (setpgid(0, 0) != -1 || errno != EPERM)
			r |= 8;
		/* ...nor join a group of another session. */
		if (setpgid(0, pg) != -1 || errno != EPERM)
			r |= 16;
		_exit(r);
	}
	CHECK_EQ(exit_status(ut_wait(pid)), 0);

	/* After its execve, a child's group can no longer be set. */
	int hold[2];
	CHECK_OK(pipe2(back, O_CLOEXEC));
	CHECK_OK(pipe(hold));
	pid = fork();
	if (pid == 0) {
		char fd[16];
		snprintf(fd, sizeof fd, "%d", hold[0]);
		char *a[] = { (char *)ut_self, "--as", "drain", fd, NULL };
		close(hold[1]);
		close(back[0]);
		execve(ut_self, a, environ); /* closes back[1]: the signal */
		_exit(99);
	}
	close(back[1]);
	close(hold[0]);
	char c;
	CHECK_EQ(read(back[0], &c, 1), 0); /* the exec happened */
	CHECK_ERR(setpgid(pid, pid), EACCES);
	close(hold[1]); /* lets it finish */
	CHECK_EQ(exit_status(ut_wait(pid)), 0);
	close(back[0]);
	close(go[0]);
	close(go[1]);

}

/*
 * kill(0, sig) signals our whole group: a child in its own group is not
 * hit; one in ours is.  Run in a child that leads a group of its own, so
 * that whoever started us is not signalled.
 */
static void group_kill(void *arg)
{
	CHECK_OK(setpgid(0, 0));
	int hold[2];
	CHECK_OK(pipe(hold));
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(hold[1]);
		setpgid(0, 0);
		read(hold[0], &c, 1); /* until the parent closes it */
		_exit(0);
	}
	close(hold[0]);
	CHECK_OK(setpgid(pid, pid));
	pid_t same = fork();
	if (same == 0) {
		pause();
		_exit(0);
	}
	signal(SIGUSR1, SIG_IGN);
	CHECK_OK(kill(0, SIGUSR1));
	signal(SIGUSR1, SIG_DFL);
	close(hold[1]);
	int st = ut_wait(same);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR1);
	CHECK_EQ(exit_status(ut_wait(pid)), 0);
	/* kill(-pgid) signals that group. */
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		pause();
		_exit(0);
	}
	setpgid(pid, pid);
	CHECK_OK(kill(-pid, SIGTERM));
	st = ut_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	CHECK_ERR(kill(-0x7ffffff0, SIGTERM), ESRCH);
}

/* As uid 65534: fork until RLIMIT_NPROC says EAGAIN. */
static void fork_bomb(void *arg)
{
	struct rlimit rl = { 6, 6 };
	CHECK_OK(setrlimit(RLIMIT_NPROC, &rl));
	int hold[2];
	CHECK_OK(pipe(hold));
	pid_t kids[64];
	int n = 0, err = 0;
	while (n < 64) {
		pid_t pid = fork();
		if (pid == 0) {
			char c;
			close(hold[1]);
			read(hold[0], &c, 1); /* until the parent lets go */
			_exit(0);
		}
		if (pid < 0) {
			err = errno;
			break;
		}
		kids[n++] = pid;
	}
	CHECK_EQ(err, EAGAIN);
	CHECK(n < 6); /* this process counts too */
	close(hold[1]);
	close(hold[0]);
	int reaped = 0;
	for (int i = 0; i < n; i++)
		reaped += ut_wait(kids[i]) == 0;
	CHECK_EQ(reaped, n);
	/* With the children gone, fork works again. */
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	CHECK(pid > 0);
	if (pid > 0)
		ut_wait(pid);
	/* Other users' processes cannot be signalled. */
	CHECK_ERR(kill(1, 0), EPERM);
	CHECK_ERR(kill(getppid(), SIGKILL), EPERM);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strncmp(argv[1], "--as", 4))
		return run_mode(argc, argv);
	ut_init(argc, argv);
	ut_scratch();
	test_fork_wait();
	test_clone_vfork();
	test_clone3();
	test_waitid();
	test_nocldwait();
	test_execve();
	test_getppid_reparent();
	test_groups_sessions();
	ut_child("group kill", group_kill, NULL, 0);
	ut_unprivileged("fork bomb", fork_bomb, NULL);
	return ut_done();
}
