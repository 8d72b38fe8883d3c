/*
 * strace_cost -- what a tracer adds to a system call (issue 31): a child
 * makes getppid() n times while its parent traces it as strace does,
 * resuming it with PTRACE_SYSCALL and, at each of the call's two stops,
 * waiting for it and asking for the call (PTRACE_GET_SYSCALL_INFO).  One
 * operation is one traced call; the null_syscall figure is the same call
 * untraced, so the cost strace adds is the difference.
 *
 * System calls: fork, ptrace, kill, wait4, getppid (child), exit_group,
 * clock_gettime.
 */
#include "bench.h"
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

const char bench_name[] = "strace_cost";

#define GET_SYSCALL_INFO 0x420e

static void traced_child(long n)
{
	if (syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0) < 0)
		syscall(SYS_exit_group, 2);
	syscall(SYS_kill, syscall(SYS_getpid), SIGSTOP);
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	syscall(SYS_exit_group, 0);
}

/* Resume pid to its next stop; its wait status, or -1. */
static int next_stop(long pid)
{
	int status;
	unsigned char info[88];
	if (syscall(SYS_ptrace, PTRACE_SYSCALL, pid, 0, 0) < 0 ||
	    syscall(SYS_wait4, pid, &status, 0, NULL) != pid)
		return -1;
	if (WIFSTOPPED(status))
		syscall(SYS_ptrace, GET_SYSCALL_INFO, pid, sizeof info, info);
	return status;
}

long long measure(long n)
{
	long pid = syscall(SYS_fork);
	if (pid < 0)
		return -errno;
	if (pid == 0)
		traced_child(n);
	int status;
	if (syscall(SYS_wait4, pid, &status, 0, NULL) != pid || !WIFSTOPPED(status))
		return -ECHILD;
	long long start = bench_now_ns();
	do
		status = next_stop(pid);
	while (status != -1 && WIFSTOPPED(status));
	long long ns = bench_now_ns() - start;
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -ECHILD;
	return ns;
}

BENCH_MAIN
