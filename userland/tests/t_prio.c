/*
 * t_prio: nice values through getpriority and setpriority.
 *
 * The raw call's 20 - nice result, the bad "which" and the missing
 * process, the range clamp, fork inheriting the value, process groups and
 * users as targets, and the permissions: only root lowers a nice value,
 * and a user cannot touch another user's process.  Every change is made
 * in forked children, on processes and a uid no one else has.
 */
#include "ut.h"

#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define LONE_UID 54321 /* a uid no other process has */
#define UNUSED_UID 54329

static long raw_get(int which, int who)
{
	return syscall(SYS_getpriority, which, who);
}

static void test_errors(void)
{
	CHECK_ERR(raw_get(3, 0), EINVAL);
	CHECK_ERR(raw_get(-1, 0), EINVAL);
	CHECK_ERR(setpriority(3, 0, 0), EINVAL);
	CHECK_ERR(setpriority(-1, 0, 0), EINVAL);
	CHECK_ERR(raw_get(PRIO_PROCESS, 999999), ESRCH);
	CHECK_ERR(setpriority(PRIO_PROCESS, 999999, 5), ESRCH);
	CHECK_ERR(raw_get(PRIO_PROCESS, -5), ESRCH);
	CHECK_ERR(raw_get(PRIO_PGRP, 999999), ESRCH);
	CHECK_ERR(raw_get(PRIO_USER, UNUSED_UID), ESRCH);
	CHECK_ERR(setpriority(PRIO_USER, UNUSED_UID, 1), ESRCH);
	/* The raw call's result is 20 - nice, never negative. */
	long raw = raw_get(PRIO_PROCESS, 0);
	CHECK(raw >= 1 && raw <= 40);
	errno = 0;
	CHECK_EQ(getpriority(PRIO_PROCESS, 0), 20 - raw);
	CHECK_EQ(errno, 0);
	CHECK_EQ(raw_get(PRIO_PROCESS, getpid()), raw);
}

static void nice_child(void *arg)
{
	CHECK_OK(setpriority(PRIO_PROCESS, 0, 5));
	CHECK_EQ(getpriority(PRIO_PROCESS, 0), 5);
	CHECK_EQ(raw_get(PRIO_PROCESS, getpid()), 15);
	CHECK_OK(setpriority(PRIO_PROCESS, getpid(), 100));
	CHECK_EQ(getpriority(PRIO_PROCESS, 0), 19); /* clamped */
	CHECK_OK(setpriority(PRIO_PROCESS, 0, 7));
	/* A child starts with its parent's value. */
	pid_t pid = fork();
	if (pid == 0)
		_exit(getpriority(PRIO_PROCESS, 0) == 7 ? 0 : 1);
	int st = ut_wait(pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* Its own process group: the group is the target. */
	CHECK_OK(setpgid(0, 0));
	CHECK_OK(setpriority(PRIO_PGRP, 0, 3));
	CHECK_EQ(getpriority(PRIO_PROCESS, 0), 3);
	CHECK_EQ(getpriority(PRIO_PGRP, getpid()), 3);
	if (!ut_is_root())
		return;
	/* Root may lower it, even below zero (and the clamp at -20). */
	CHECK_OK(setpriority(PRIO_PROCESS, 0, -5));
	CHECK_EQ(getpriority(PRIO_PROCESS, 0), -5);
	CHECK_OK(setpriority(PRIO_PROCESS, 0, -100));
	CHECK_EQ(getpriority(PRIO_PROCESS, 0), -20);
	CHECK_EQ(raw_get(PRIO_PROCESS, 0), 40);
	CHECK_OK(setpriority(PRIO_PROCESS, 0, 0));
}

static void user_child(void *arg)
{
	pid_t root_pid = *(pid_t *)arg;
	CHECK_OK(setpriority(PRIO_PROCESS, 0, 10));
	/* Lowering needs privilege; raising does not. */
	CHECK_ERR(setpriority(PRIO_PROCESS, 0, 9), EACCES);
	CHECK_EQ(getpriority(PRIO_PROCESS, 0), 10);
	CHECK_OK(setpriority(PRIO_PROCESS, 0, 12));
	CHECK_OK(setpriority(PRIO_PROCESS, 0, 12));
	/* Another user's process: seen, but not changed. */
	errno = 0;
	int theirs = getpriority(PRIO_PROCESS, root_pid);
	CHECK_EQ(errno, 0);
	CHECK_ERR(setpriority(PRIO_PROCESS, root_pid, 19), EPERM);
	CHECK_EQ(getpriority(PRIO_PROCESS, root_pid), theirs);
}

static void lone_user_child(void *arg)
{
	CHECK_OK(setgid(LONE_UID));
	CHECK_OK(setuid(LONE_UID));
	CHECK_OK(setpriority(PRIO_USER, 0, 6));
	CHECK_EQ(getpriority(PRIO_USER, LONE_UID), 6);
	CHECK_EQ(getpriority(PRIO_PROCESS, 0), 6);
	/* A second process of the user at 11: the user's value is the
	 * highest priority of its processes, so 6 until both are 11. */
	int fds[2];
	CHECK_OK(pipe(fds));
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(fds[1]);
		setpriority(PRIO_PROCESS, 0, 11);
		read(fds[0], &c, 1);
		_exit(getpriority(PRIO_PROCESS, 0) == 13 ? 0 : 1);
	}
	close(fds[0]);
	while (getpriority(PRIO_PROCESS, pid) != 11)
		sched_yield();
	CHECK_EQ(getpriority(PRIO_USER, 0), 6);
	CHECK_OK(setpriority(PRIO_PROCESS, 0, 11));
	CHECK_EQ(getpriority(PRIO_USER, 0), 11);
	/* Setting the user's value reaches both. */
	CHECK_OK(setpriority(PRIO_USER, LONE_UID, 13));
	CHECK_EQ(getpriority(PRIO_PROCESS, 0), 13);
	close(fds[1]);
	int st = ut_wait(pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	/* Start from nice 0 whatever we were started at (make check may run
	 * under nice), so an unprivileged child can still raise it to 5..12. */
	if (ut_is_root())
		CHECK_OK(setpriority(PRIO_PROCESS, 0, 0));
	test_errors();
	ut_child("nice", nice_child, NULL, 0);
	pid_t me = getpid();
	if (ut_unprivileged("user", user_child, &me) && ut_is_root())
		ut_child("lone user", lone_user_child, NULL, 0);
	return ut_done();
}
