/*
 * epollN -- epoll's wake-up with N descriptors watched (issue 31; built
 * as epoll1, epoll100 and epoll1000 with EPOLL_FDS set).  The parent
 * watches N eventfds with one epoll set and waits; a child writes to one
 * of them (a different one each time) and waits for the parent's answer
 * on a pipe.  Each operation is one round trip: the child's write, the
 * parent's wake-up in epoll_wait and its read, the answer.
 *
 * System calls: epoll_create1, eventfd2, epoll_ctl, epoll_wait, pipe2,
 * fork, read, write, close, exit_group (child), wait4, clock_gettime.
 */
#include "bench.h"
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/wait.h>

#ifndef EPOLL_FDS
#define EPOLL_FDS 1
#endif
#define STR2(x) #x
#define STR(x) STR2(x)

const char bench_name[] = "epoll" STR(EPOLL_FDS);

static int efd[EPOLL_FDS];

/* The child: poke eventfd i % N, wait for the answer; n times. */
static void poker(long n, int answer)
{
	uint64_t one = 1;
	char c;

	for (long i = 0; i < n; i++) {
		if (syscall(SYS_write, efd[i % EPOLL_FDS], &one, sizeof one) != sizeof one ||
		    syscall(SYS_read, answer, &c, 1) != 1)
			syscall(SYS_exit_group, 1);
	}
	syscall(SYS_exit_group, 0);
}

static int make_set(void)
{
	int ep = (int)syscall(SYS_epoll_create1, 0);
	if (ep < 0)
		return -errno;
	for (int i = 0; i < EPOLL_FDS; i++) {
		efd[i] = (int)syscall(SYS_eventfd2, 0, 0);
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)i };
		if (efd[i] < 0 || syscall(SYS_epoll_ctl, ep, EPOLL_CTL_ADD, efd[i], &ev) < 0)
			return -errno;
	}
	return ep;
}

long long measure(long n)
{
	int ep = make_set(), p[2];

	if (ep < 0)
		return ep;
	if (syscall(SYS_pipe2, p, 0) < 0)
		return -errno;
	long pid = syscall(SYS_fork);
	if (pid < 0)
		return -errno;
	if (pid == 0)
		poker(n, p[0]);

	long long err = 0;
	long long start = bench_now_ns();
	for (long i = 0; i < n && !err; i++) {
		struct epoll_event ev;
		uint64_t v;
		if (syscall(SYS_epoll_wait, ep, &ev, 1, -1) != 1 ||
		    syscall(SYS_read, efd[ev.data.u32], &v, sizeof v) != sizeof v ||
		    syscall(SYS_write, p[1], "a", 1) != 1)
			err = errno ? -errno : -EIO;
	}
	long long ns = bench_now_ns() - start;

	int status;
	if (err)
		syscall(SYS_kill, pid, 9);
	syscall(SYS_wait4, pid, &status, 0, NULL);
	for (int i = 0; i < EPOLL_FDS; i++)
		syscall(SYS_close, efd[i]);
	syscall(SYS_close, ep);
	syscall(SYS_close, p[0]);
	syscall(SYS_close, p[1]);
	if (err)
		return err;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -ECHILD;
	return ns;
}

BENCH_MAIN
