/*
 * t_epoll: eventfd and epoll.
 *
 * eventfd2: the counter (adding, reading and resetting, EFD_SEMAPHORE, the
 * largest value, overflow), EFD_NONBLOCK and EFD_CLOEXEC, bad flags and
 * sizes, poll readiness, the /proc/self/fd link, and readers and writers
 * that block until the other side acts.
 *
 * epoll: epoll_create, epoll_create1, epoll_ctl and epoll_wait with their
 * error cases; level-triggered, edge-triggered (EPOLLET) and one-shot
 * (EPOLLONESHOT) reporting on pipes and eventfds; EPOLLERR and EPOLLHUP,
 * which are reported whether asked for or not; AF_UNIX sockets (EPOLLIN,
 * EPOLLOUT, EPOLLRDHUP, EPOLLHUP, a listening socket with a pending
 * connection); many descriptors and maxevents; the set losing a descriptor
 * when its open file is closed; epoll_pwait with a signal mask and
 * epoll_wait interrupted by a signal; epoll_pwait2; a blocked epoll_wait
 * woken by another process; EPOLLEXCLUSIVE; an epoll fd inside another.
 *
 * Nothing depends on timing for its result: processes meet through
 * one-byte handshakes over pipes, and where a short nap makes it likely
 * that a child is already asleep, the check holds as well if it is not.
 * Timeouts are only guards against hangs.
 */
#include "ut.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_epoll_pwait2
#define SYS_epoll_pwait2 441
#endif

#define EFD_MAX 0xfffffffffffffffeULL /* the largest count an eventfd holds */
#define BAD 0xbad00000u /* what events_now() gives when the wait fails */
#define LONG_WAIT 5000  /* ms: a guard where an event is expected */

/* A child reports by its exit status: 0 when all its checks held, else a
 * number derived from the line of the failed one. */
#define KID_CHECK(c) do { if (!(c)) _exit(__LINE__ % 250 + 1); } while (0)

static uint64_t last_data; /* data of the event events_within() saw */

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int cloexec(int fd)
{
	int f = fcntl(fd, F_GETFD);
	return f < 0 ? -1 : (f & FD_CLOEXEC) != 0;
}

/* Add v to an eventfd's counter: 0 on success, -1 with errno. */
static int put(int fd, uint64_t v)
{
	ssize_t w = write(fd, &v, sizeof v);
	return w == (ssize_t)sizeof v ? 0 : -1;
}

/* Read an eventfd's counter; 0 (never a readable count) when it fails. */
static uint64_t take(int fd)
{
	uint64_t v;
	return read(fd, &v, sizeof v) == (ssize_t)sizeof v ? v : 0;
}

/* The target of /proc/self/fd/FD, or "" when it cannot be read. */
static const char *fd_link(int fd)
{
	static char link[128];
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, link, sizeof link - 1);
	link[n > 0 ? n : 0] = 0;
	return link;
}

/* poll() revents of fd for POLLIN|POLLOUT, without waiting. */
static int revents(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT };
	return poll(&p, 1, 0) < 0 ? -1 : p.revents;
}

static int watch(int ep, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = { .events = events, .data.u64 = data };
	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static int rewatch(int ep, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = { .events = events, .data.u64 = data };
	return epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
}

/* A new epoll fd watching fd alone (data: the fd), or -1. */
static int watch_one(int fd, uint32_t events)
{
	int ep = epoll_create1(0);
	if (ep >= 0 && watch(ep, fd, events, (uint64_t)fd) != 0) {
		close(ep);
		return -1;
	}
	return ep;
}

/*
 * The events epoll_wait reports on ep within ms milliseconds when at most
 * one descriptor can be ready: 0 when none is, BAD when the call fails or
 * reports more than one.  The event's data goes to last_data.
 */
static uint32_t events_within(int ep, int ms)
{
	struct epoll_event ev[4];
	memset(ev, 0, sizeof ev);
	int n = epoll_wait(ep, ev, 4, ms);
	if (n == 0)
		return 0;
	if (n != 1)
		return BAD;
	last_data = ev[0].data.u64;
	return ev[0].events;
}

static uint32_t events_now(int ep)
{
	return events_within(ep, 0);
}

/* ---- eventfd ---- */

static void test_eventfd_counter(void)
{
	uint64_t v = 0;
	int e = CHECK_OK(eventfd(0, EFD_NONBLOCK));
	CHECK_EQ(cloexec(e), 0);
	CHECK_EQ(fcntl(e, F_GETFL), O_RDWR | O_NONBLOCK);
	CHECK(strcmp(fd_link(e), "anon_inode:[eventfd]") == 0);
	CHECK_ERR(read(e, &v, 8), EAGAIN); /* zero: nothing to read */
	/* Writes add up; a read returns the sum and resets it to zero. */
	CHECK_EQ(put(e, 3), 0);
	CHECK_EQ(put(e, 4), 0);
	CHECK_EQ(read(e, &v, 8), 8);
	CHECK_EQ(v, 7);
	CHECK_ERR(read(e, &v, 8), EAGAIN);
	/* Writing 0 succeeds and leaves nothing to read. */
	CHECK_EQ(put(e, 0), 0);
	CHECK_ERR(read(e, &v, 8), EAGAIN);
	/* A larger read buffer still gets 8 bytes; a smaller one is refused. */
	uint64_t big[2] = { 0, 99 };
	CHECK_EQ(put(e, 5), 0);
	CHECK_ERR(read(e, &v, 7), EINVAL);
	CHECK_ERR(read(e, &v, 0), EINVAL);
	CHECK_EQ(read(e, big, sizeof big), 8);
	CHECK_EQ(big[0], 5);
	CHECK_EQ(big[1], 99);
	CHECK_ERR(write(e, &v, 4), EINVAL);
	CHECK_ERR(write(e, UT_BADPTR, 8), EFAULT);

	/* All ones is never a valid value; EFD_MAX is the largest count. */
	CHECK_ERR(put(e, ~0ULL), EINVAL);
	CHECK_EQ(revents(e), POLLOUT);
	CHECK_EQ(put(e, EFD_MAX - 1), 0);
	CHECK_EQ(revents(e), POLLIN | POLLOUT); /* 1 more still fits */
	CHECK_EQ(put(e, 1), 0);
	CHECK_EQ(revents(e), POLLIN); /* full: a write of 1 would block */
	CHECK_ERR(put(e, 1), EAGAIN);
	CHECK_EQ(take(e), EFD_MAX);
	CHECK_EQ(revents(e), POLLOUT);
	CHECK_EQ(put(e, 10), 0);
	CHECK_ERR(put(e, EFD_MAX - 9), EAGAIN); /* would pass EFD_MAX */
	CHECK_EQ(put(e, EFD_MAX - 10), 0);      /* exactly EFD_MAX */
	CHECK_EQ(take(e), EFD_MAX);
	close(e);

	/* The initial value is readable at once. */
	e = CHECK_OK(eventfd(42, EFD_NONBLOCK | EFD_CLOEXEC));
	CHECK_EQ(cloexec(e), 1);
	CHECK_EQ(take(e), 42);
	close(e);

	/* EFD_SEMAPHORE: each read takes 1. */
	e = CHECK_OK(eventfd(0, EFD_SEMAPHORE | EFD_NONBLOCK));
	CHECK_EQ(put(e, 3), 0);
	CHECK_EQ(take(e), 1);
	CHECK_EQ(take(e), 1);
	CHECK_EQ(revents(e), POLLIN | POLLOUT);
	CHECK_EQ(take(e), 1);
	CHECK_ERR(read(e, &v, 8), EAGAIN);
	CHECK_EQ(revents(e), POLLOUT);
	close(e);

	/* Blocking by default; only the three EFD_ flags are accepted. */
	e = CHECK_OK(syscall(SYS_eventfd2, 0, 0));
	CHECK_EQ(fcntl(e, F_GETFL), O_RDWR);
	close(e);
	CHECK_ERR(syscall(SYS_eventfd2, 0, 2), EINVAL);
	CHECK_ERR(syscall(SYS_eventfd2, 0, O_RDWR), EINVAL);
	CHECK_ERR(syscall(SYS_eventfd2, 0, O_APPEND), EINVAL);
}

/* A reader blocked on an empty eventfd wakes when another process writes,
 * and a writer blocked on a full one wakes when another process reads. */
static void test_eventfd_blocking(void)
{
	int e = CHECK_OK(eventfd(0, 0));
	int up[2], down[2]; /* child to parent, parent to child */
	CHECK_OK(pipe(up));
	CHECK_OK(pipe(down));
	pid_t pid = fork();
	if (pid == 0) {
		close(up[0]);
		close(down[1]);
		ut_tell(up[1]);
		uint64_t v = 0;
		KID_CHECK(read(e, &v, 8) == 8); /* blocks until the parent writes */
		KID_CHECK(v == 42);
		ut_tell(up[1]);
		KID_CHECK(ut_await(down[0]) == 0);
		KID_CHECK(put(e, 1) == 0); /* blocks: the count is full */
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	CHECK_EQ(ut_await(up[0]), 0);
	nap_ms(20); /* best effort: let the child fall asleep in read */
	CHECK_EQ(put(e, 42), 0);
	CHECK_EQ(ut_await(up[0]), 0);
	/* The child has read the 42.  Fill the counter before it writes 1,
	 * so that its write blocks, then empty it: the write goes through
	 * and the 1 is read. */
	CHECK_EQ(put(e, EFD_MAX), 0);
	ut_tell(down[1]);
	nap_ms(20); /* best effort: let the child fall asleep in write */
	CHECK_EQ(take(e), EFD_MAX);
	CHECK_EQ(take(e), 1); /* blocks until the child's write is done */
	CHECK_EQ(ut_wait(pid), 0);
	close(up[0]);
	close(down[1]);
	close(e);
}

/* ---- epoll: creation and errors ---- */

static void test_create(void)
{
	int ep = CHECK_OK(epoll_create1(0));
	CHECK_EQ(cloexec(ep), 0);
	CHECK_EQ(fcntl(ep, F_GETFL), O_RDWR);
	CHECK(strcmp(fd_link(ep), "anon_inode:[eventpoll]") == 0);
	/* An epoll fd is neither read nor written. */
	char buf[8] = { 0 };
	CHECK_ERR(read(ep, buf, sizeof buf), EINVAL);
	CHECK_ERR(write(ep, buf, sizeof buf), EINVAL);
	close(ep);
	ep = CHECK_OK(epoll_create1(EPOLL_CLOEXEC));
	CHECK_EQ(cloexec(ep), 1);
	close(ep);
	CHECK_ERR(epoll_create1(1), EINVAL);
	CHECK_ERR(epoll_create1(O_NONBLOCK), EINVAL);
	/* musl's epoll_create ignores its size, so the system call is used. */
	CHECK_ERR(syscall(SYS_epoll_create, 0), EINVAL);
	CHECK_ERR(syscall(SYS_epoll_create, -1), EINVAL);
	ep = CHECK_OK(syscall(SYS_epoll_create, 1));
	CHECK_EQ(cloexec(ep), 0);
	close(ep);
}

static void test_ctl_errors(void)
{
	int ep = CHECK_OK(epoll_create1(0));
	int e = CHECK_OK(eventfd(0, EFD_NONBLOCK));
	int other = CHECK_OK(eventfd(0, EFD_NONBLOCK));
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 1 };

	CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, e, &ev));
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, e, &ev), EEXIST);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_MOD, other, &ev), ENOENT);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_DEL, other, &ev), ENOENT);
	CHECK_ERR(epoll_ctl(-1, EPOLL_CTL_ADD, other, &ev), EBADF);
	CHECK_ERR(epoll_ctl(63, EPOLL_CTL_ADD, other, &ev), EBADF);
	CHECK_ERR(epoll_ctl(e, EPOLL_CTL_ADD, other, &ev), EINVAL);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, -1, &ev), EBADF);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, 63, &ev), EBADF);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, ep, &ev), EINVAL);
	CHECK_ERR(epoll_ctl(ep, 0, other, &ev), EINVAL);
	CHECK_ERR(epoll_ctl(ep, 4, other, &ev), EINVAL);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, other, NULL), EFAULT);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, other, UT_BADPTR), EFAULT);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_MOD, e, NULL), EFAULT);

	/* A regular file cannot be watched: it is always ready. */
	CHECK_OK(ut_write_file("plain", "x", 1, 0644));
	int f = CHECK_OK(open("plain", O_RDONLY));
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, f, &ev), EPERM);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_DEL, f, &ev), EPERM);
	/* Nor is a regular file an epoll fd. */
	CHECK_ERR(epoll_ctl(f, EPOLL_CTL_ADD, other, &ev), EINVAL);
	close(f);

	/* EPOLLEXCLUSIVE: only with ADD, not with EPOLLONESHOT or EPOLLRDHUP,
	 * and not on an epoll fd. */
	ev.events = EPOLLIN | EPOLLEXCLUSIVE;
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_MOD, e, &ev), EINVAL);
	ev.events = EPOLLIN | EPOLLEXCLUSIVE | EPOLLONESHOT;
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, other, &ev), EINVAL);
	ev.events = EPOLLIN | EPOLLEXCLUSIVE | EPOLLRDHUP;
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, other, &ev), EINVAL);
	int inner = CHECK_OK(epoll_create1(0));
	ev.events = EPOLLIN | EPOLLEXCLUSIVE;
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, inner, &ev), EINVAL);
	close(inner);
	/* Once added with EPOLLEXCLUSIVE, it cannot be modified either. */
	CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, other, &ev));
	ev.events = EPOLLIN;
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_MOD, other, &ev), EINVAL);

	/* DEL takes no event (NULL is fine); once gone, it is gone. */
	CHECK_OK(epoll_ctl(ep, EPOLL_CTL_DEL, e, NULL));
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_DEL, e, NULL), ENOENT);
	CHECK_OK(epoll_ctl(ep, EPOLL_CTL_DEL, other, NULL));
	/* MOD changes both the events and the data. */
	CHECK_EQ(watch(ep, e, EPOLLOUT, 5), 0);
	CHECK_EQ(events_now(ep), EPOLLOUT);
	CHECK_EQ(last_data, 5);
	CHECK_EQ(rewatch(ep, e, EPOLLIN, 6), 0);
	CHECK_EQ(events_now(ep), 0);
	CHECK_EQ(put(e, 1), 0);
	CHECK_EQ(events_now(ep), EPOLLIN);
	CHECK_EQ(last_data, 6);
	close(other);
	close(e);
	close(ep);
}

static void test_wait_errors(void)
{
	int ep = CHECK_OK(epoll_create1(0));
	int e = CHECK_OK(eventfd(0, EFD_NONBLOCK));
	struct epoll_event out[2];
	CHECK_EQ(watch(ep, e, EPOLLIN, 1), 0);

	CHECK_ERR(epoll_wait(ep, out, 0, 0), EINVAL);
	CHECK_ERR(epoll_wait(ep, out, -1, 0), EINVAL);
	CHECK_ERR(epoll_wait(ep, out, 0x7fffffff, 0), EINVAL); /* too many */
	CHECK_ERR(epoll_wait(-1, out, 2, 0), EBADF);
	CHECK_ERR(epoll_wait(63, out, 2, 0), EBADF);
	CHECK_ERR(epoll_wait(e, out, 2, 0), EINVAL);
	/* A bad buffer in user space is noticed when an event is copied
	 * out; one in the kernel's half of the address space at once. */
	CHECK_ERR(epoll_wait(ep, UT_KERNPTR, 2, 0), EFAULT);
	CHECK_EQ(put(e, 1), 0);
	CHECK_ERR(epoll_wait(ep, UT_BADPTR, 2, 0), EFAULT);
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 1); /* still there, level-triggered */

	/* epoll_pwait insists on the kernel's signal set size (8). */
	sigset_t none;
	sigemptyset(&none);
	CHECK_ERR(syscall(SYS_epoll_pwait, ep, out, 2, 0, &none, 4), EINVAL);
	CHECK_EQ(syscall(SYS_epoll_pwait, ep, out, 2, 0, &none, 8), 1);
	CHECK_EQ(syscall(SYS_epoll_pwait, ep, out, 2, 0, NULL, 8), 1);
	CHECK_ERR(syscall(SYS_epoll_pwait, ep, out, 2, 0, UT_BADPTR, 8), EFAULT);
	CHECK_EQ(take(e), 1);

	/* A timeout with nothing ready returns 0, never early. */
	long long t0 = now_ms();
	CHECK_EQ(epoll_wait(ep, out, 2, 30), 0);
	CHECK(now_ms() - t0 >= 25);
	close(e);
	close(ep);
}

/* ---- level- and edge-triggered, one-shot ---- */

static void test_level_pipe(void)
{
	int p[2];
	char c;
	CHECK_OK(pipe(p));
	int ep = CHECK_OK(epoll_create1(0));
	CHECK_EQ(watch(ep, p[0], EPOLLIN, 0x1122334455667788ULL), 0);
	CHECK_EQ(events_now(ep), 0);
	CHECK_EQ(write(p[1], "a", 1), 1);
	last_data = 0;
	CHECK_EQ(events_now(ep), EPOLLIN);
	CHECK_EQ(last_data, 0x1122334455667788ULL);
	CHECK_EQ(events_within(ep, LONG_WAIT), EPOLLIN); /* still: level */
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(events_now(ep), 0);
	close(ep);

	/* The write end: writable while there is room; EPOLLERR (with the
	 * EPOLLOUT a write that would not block) once the readers are gone,
	 * whether or not it was asked for. */
	ep = CHECK_OK(watch_one(p[1], EPOLLOUT));
	int ep_in = CHECK_OK(watch_one(p[1], EPOLLIN));
	CHECK_EQ(events_now(ep), EPOLLOUT);
	CHECK_EQ(last_data, p[1]);
	CHECK_EQ(events_now(ep_in), 0);
	close(p[0]);
	CHECK_EQ(events_now(ep), EPOLLOUT | EPOLLERR);
	CHECK_EQ(events_now(ep_in), EPOLLERR);
	close(ep_in);
	close(ep);
	close(p[1]);

	/* The read end: EPOLLHUP once the writers are gone, with EPOLLIN
	 * while data remains, even with no events asked for. */
	CHECK_OK(pipe(p));
	ep = CHECK_OK(watch_one(p[0], EPOLLIN));
	int ep_none = CHECK_OK(watch_one(p[0], 0));
	CHECK_EQ(write(p[1], "b", 1), 1);
	CHECK_EQ(events_now(ep_none), 0);
	close(p[1]);
	CHECK_EQ(events_now(ep), EPOLLIN | EPOLLHUP);
	CHECK_EQ(events_now(ep_none), EPOLLHUP);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(events_now(ep), EPOLLHUP);
	CHECK_EQ(read(p[0], &c, 1), 0);
	close(ep_none);
	close(ep);
	close(p[0]);
}

static void test_edge(void)
{
	int p[2];
	char buf[16];
	CHECK_OK(pipe(p));
	int ep = CHECK_OK(watch_one(p[0], EPOLLIN | EPOLLET));
	CHECK_EQ(events_now(ep), 0);
	CHECK_EQ(write(p[1], "ab", 2), 2);
	CHECK_EQ(events_now(ep), EPOLLIN);
	CHECK_EQ(events_now(ep), 0); /* reported once */
	/* More data is a new edge, though the pipe was never drained. */
	CHECK_EQ(write(p[1], "c", 1), 1);
	CHECK_EQ(events_within(ep, LONG_WAIT), EPOLLIN);
	CHECK_EQ(events_now(ep), 0);
	CHECK_EQ(read(p[0], buf, 1), 1); /* reading is no new edge */
	CHECK_EQ(events_now(ep), 0);
	CHECK_EQ(read(p[0], buf, sizeof buf), 2);
	CHECK_EQ(events_now(ep), 0);
	CHECK_EQ(write(p[1], "d", 1), 1);
	CHECK_EQ(events_now(ep), EPOLLIN);
	close(ep);
	close(p[0]);
	close(p[1]);

	/* The same on an eventfd, where each write is an edge. */
	int e = CHECK_OK(eventfd(0, EFD_NONBLOCK));
	ep = CHECK_OK(watch_one(e, EPOLLIN | EPOLLET));
	CHECK_EQ(events_now(ep), 0);
	CHECK_EQ(put(e, 1), 0);
	CHECK_EQ(events_now(ep), EPOLLIN);
	CHECK_EQ(events_now(ep), 0);
	CHECK_EQ(put(e, 1), 0);
	CHECK_EQ(events_now(ep), EPOLLIN);
	CHECK_EQ(events_now(ep), 0);
	CHECK_EQ(take(e), 2);
	CHECK_EQ(events_now(ep), 0);
	close(ep);
	/* Asked for both, an edge reports the whole current state. */
	ep = CHECK_OK(watch_one(e, EPOLLIN | EPOLLOUT | EPOLLET));
	CHECK_EQ(events_now(ep), EPOLLOUT);
	CHECK_EQ(events_now(ep), 0);
	CHECK_EQ(put(e, 1), 0);
	CHECK_EQ(events_now(ep), EPOLLIN | EPOLLOUT);
	CHECK_EQ(events_now(ep), 0);
	close(ep);
	close(e);
}

static void test_oneshot(void)
{
	int e = CHECK_OK(eventfd(0, EFD_NONBLOCK));
	int ep = CHECK_OK(epoll_create1(0));
	CHECK_EQ(watch(ep, e, EPOLLIN | EPOLLONESHOT, 77), 0);
	CHECK_EQ(events_now(ep), 0);
	CHECK_EQ(put(e, 1), 0);
	CHECK_EQ(events_now(ep), EPOLLIN);
	CHECK_EQ(last_data, 77);
	CHECK_EQ(events_now(ep), 0); /* disarmed, though still readable */
	CHECK_EQ(put(e, 1), 0);
	CHECK_EQ(events_now(ep), 0);
	/* Disarmed is still in the set: ADD fails, MOD re-arms. */
	CHECK_ERR(watch(ep, e, EPOLLIN, 0), EEXIST);
	CHECK_EQ(rewatch(ep, e, EPOLLIN | EPOLLONESHOT, 78), 0);
	CHECK_EQ(events_now(ep), EPOLLIN);
	CHECK_EQ(last_data, 78);
	CHECK_EQ(events_now(ep), 0);
	CHECK_EQ(take(e), 2);
	/* Re-armed while nothing is ready, it fires on the next write. */
	CHECK_EQ(rewatch(ep, e, EPOLLIN | EPOLLONESHOT, 79), 0);
	CHECK_EQ(events_now(ep), 0);
	CHECK_EQ(put(e, 1), 0);
	CHECK_EQ(events_within(ep, LONG_WAIT), EPOLLIN);
	CHECK_EQ(events_now(ep), 0);
	CHECK_OK(epoll_ctl(ep, EPOLL_CTL_DEL, e, NULL));
	close(ep);
	close(e);
}

/* ---- sockets ---- */

static void test_unix_sockets(void)
{
	int sv[2];
	char buf[8];
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	int ep_io = CHECK_OK(watch_one(sv[0], EPOLLIN | EPOLLOUT));
	int ep_rd = CHECK_OK(watch_one(sv[0], EPOLLIN | EPOLLRDHUP));
	CHECK_EQ(events_now(ep_io), EPOLLOUT); /* fresh: writable only */
	CHECK_EQ(events_now(ep_rd), 0);
	CHECK_EQ(write(sv[1], "x", 1), 1);
	CHECK_EQ(events_now(ep_io), EPOLLIN | EPOLLOUT);
	CHECK_EQ(events_now(ep_rd), EPOLLIN);
	/* The peer stops writing: EPOLLRDHUP, only where asked for. */
	CHECK_OK(shutdown(sv[1], SHUT_WR));
	CHECK_EQ(events_now(ep_rd), EPOLLIN | EPOLLRDHUP);
	CHECK_EQ(events_now(ep_io), EPOLLIN | EPOLLOUT);
	CHECK_EQ(read(sv[0], buf, sizeof buf), 1);
	CHECK_EQ(events_now(ep_rd), EPOLLIN | EPOLLRDHUP); /* end of file */
	CHECK_EQ(read(sv[0], buf, sizeof buf), 0);
	/* The peer closes: EPOLLHUP too.  A write would not block (it fails
	 * with EPIPE), so EPOLLOUT stays. */
	close(sv[1]);
	CHECK_EQ(events_now(ep_rd), EPOLLIN | EPOLLRDHUP | EPOLLHUP);
	CHECK_EQ(events_now(ep_io), EPOLLIN | EPOLLOUT | EPOLLHUP);
	close(ep_rd);
	close(ep_io);
	close(sv[0]);

	/* With data unread and only EPOLLIN asked for. */
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	int ep = CHECK_OK(watch_one(sv[0], EPOLLIN));
	CHECK_EQ(events_now(ep), 0);
	CHECK_EQ(write(sv[1], "yz", 2), 2);
	close(sv[1]);
	CHECK_EQ(events_now(ep), EPOLLIN | EPOLLHUP);
	CHECK_EQ(read(sv[0], buf, sizeof buf), 2);
	CHECK_EQ(events_now(ep), EPOLLIN | EPOLLHUP);
	close(ep);
	close(sv[0]);

	/* A listening socket is readable while a connection is pending. */
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	strcpy(sa.sun_path, "sock");
	int l = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_OK(bind(l, (struct sockaddr *)&sa, sizeof sa));
	CHECK_OK(listen(l, 4));
	ep = CHECK_OK(watch_one(l, EPOLLIN | EPOLLOUT));
	CHECK_EQ(events_now(ep), 0);
	int c = CHECK_OK(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0));
	CHECK_OK(connect(c, (struct sockaddr *)&sa, sizeof sa));
	CHECK_EQ(events_within(ep, LONG_WAIT), EPOLLIN);
	int cep = CHECK_OK(watch_one(c, EPOLLIN | EPOLLOUT));
	CHECK_EQ(events_now(cep), EPOLLOUT); /* connected, nothing to read */
	int s = CHECK_OK(accept(l, NULL, NULL));
	CHECK_EQ(events_now(ep), 0);
	CHECK_EQ(write(s, "h", 1), 1);
	CHECK_EQ(events_now(cep), EPOLLIN | EPOLLOUT);
	close(s);
	close(cep);
	close(c);
	close(ep);
	close(l);
	unlink("sock");
}

/* ---- many descriptors, closing ---- */

static int has_data(struct epoll_event *ev, int n, uint64_t data)
{
	for (int i = 0; i < n; i++)
		if (ev[i].data.u64 == data && ev[i].events == EPOLLIN)
			return 1;
	return 0;
}

static void test_many(void)
{
	enum { N = 10 };
	int e[N];
	struct epoll_event out[N];
	int ep = CHECK_OK(epoll_create1(0));
	for (int i = 0; i < N; i++) {
		e[i] = CHECK_OK(eventfd(0, EFD_NONBLOCK));
		CHECK_EQ(watch(ep, e[i], EPOLLIN, 1000 + i), 0);
	}
	CHECK_EQ(epoll_wait(ep, out, N, 0), 0);
	CHECK_EQ(put(e[2], 1), 0);
	CHECK_EQ(put(e[5], 1), 0);
	CHECK_EQ(put(e[9], 1), 0);
	memset(out, 0, sizeof out);
	CHECK_EQ(epoll_wait(ep, out, N, 0), 3);
	CHECK(has_data(out, 3, 1002));
	CHECK(has_data(out, 3, 1005));
	CHECK(has_data(out, 3, 1009));

	/* maxevents 2: two of the three; the next call includes the one
	 * left out (level-triggered events go round, none starves). */
	memset(out, 0, sizeof out);
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 2);
	uint64_t a = out[0].data.u64, b = out[1].data.u64;
	CHECK(a != b);
	uint64_t rest = 1002 + 1005 + 1009 - a - b;
	CHECK(rest == 1002 || rest == 1005 || rest == 1009);
	memset(out, 0, sizeof out);
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 2);
	CHECK(has_data(out, 2, rest));
	/* With the first two read, only the one left is ready. */
	if (a >= 1000 && a < 1000 + N && b >= 1000 && b < 1000 + N) {
		CHECK_EQ(take(e[a - 1000]), 1);
		CHECK_EQ(take(e[b - 1000]), 1);
	}
	memset(out, 0, sizeof out);
	CHECK_EQ(epoll_wait(ep, out, N, 0), 1);
	CHECK_EQ(out[0].data.u64, rest);
	for (int i = 0; i < N; i++)
		close(e[i]);
	CHECK_EQ(epoll_wait(ep, out, N, 0), 0);
	close(ep);
}

/*
 * An entry belongs to an open file and the descriptor number it was added
 * with; it leaves the set when that open file is closed for good, not when
 * the descriptor alone is (epoll(7), questions 6 and 7).
 */
static void test_close(void)
{
	int ep = CHECK_OK(epoll_create1(0));
	int e = CHECK_OK(eventfd(1, EFD_NONBLOCK));
	CHECK_EQ(watch(ep, e, EPOLLIN, 3), 0);
	CHECK_EQ(events_now(ep), EPOLLIN);
	close(e);
	CHECK_EQ(events_now(ep), 0);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_DEL, e, NULL), EBADF);
	/* A new file under the same number is not in the set. */
	int e2 = CHECK_OK(eventfd(1, EFD_NONBLOCK));
	CHECK_EQ(e2, e);
	CHECK_EQ(events_now(ep), 0);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_DEL, e2, NULL), ENOENT);

	/* Another descriptor keeps the file open, so its entry stays and
	 * goes on reporting, though the number it was added with is closed. */
	CHECK_EQ(watch(ep, e2, EPOLLIN, 4), 0);
	int d = CHECK_OK(dup(e2));
	close(e2);
	CHECK_EQ(events_now(ep), EPOLLIN);
	CHECK_EQ(last_data, 4);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_DEL, e2, NULL), EBADF);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_DEL, d, NULL), ENOENT);
	close(d);
	CHECK_EQ(events_now(ep), 0);
	close(ep);
}

/* ---- signals ---- */

static volatile sig_atomic_t hits;

static void on_signal(int sig)
{
	(void)sig;
	hits++;
}

static int handle(int sig, int flags)
{
	struct sigaction sa = { 0 };
	sa.sa_handler = on_signal;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL);
}

static int is_blocked(int sig)
{
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	return sigismember(&cur, sig);
}

static void test_pwait_sigmask(void)
{
	int ep = CHECK_OK(epoll_create1(0));
	int e = CHECK_OK(eventfd(0, EFD_NONBLOCK));
	CHECK_EQ(watch(ep, e, EPOLLIN, 1), 0);
	sigset_t usr1, old, during;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	CHECK_OK(sigprocmask(SIG_BLOCK, &usr1, &old));
	CHECK_OK(handle(SIGUSR1, 0));
	hits = 0;

	/* A child sends SIGUSR1 and exits; the signal stays pending while
	 * blocked, so epoll_pwait, unblocking it, is interrupted at once. */
	int go[2];
	CHECK_OK(pipe(go));
	pid_t pid = fork();
	if (pid == 0) {
		close(go[1]);
		KID_CHECK(ut_await(go[0]) == 0);
		KID_CHECK(kill(getppid(), SIGUSR1) == 0);
		_exit(0);
	}
	close(go[0]);
	ut_tell(go[1]);
	CHECK_EQ(ut_wait(pid), 0);
	close(go[1]);
	sigset_t pending;
	sigpending(&pending);
	CHECK(sigismember(&pending, SIGUSR1));
	CHECK_EQ(hits, 0);
	struct epoll_event out[2];
	sigprocmask(SIG_BLOCK, NULL, &during);
	sigdelset(&during, SIGUSR1);
	CHECK_ERR(epoll_pwait(ep, out, 2, LONG_WAIT, &during), EINTR);
	CHECK_EQ(hits, 1);
	CHECK(is_blocked(SIGUSR1)); /* the old mask is back */

	/* With the signal unblocked by the mask but not pending, it waits
	 * as epoll_wait does. */
	CHECK_EQ(epoll_pwait(ep, out, 2, 0, &during), 0);
	CHECK_EQ(put(e, 1), 0);
	CHECK_EQ(epoll_pwait(ep, out, 2, LONG_WAIT, &during), 1);
	CHECK_EQ(hits, 1);
	CHECK(is_blocked(SIGUSR1));

	signal(SIGUSR1, SIG_DFL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(e);
	close(ep);
}

/*
 * A handled signal ends a blocked epoll_wait with EINTR, even with
 * SA_RESTART: epoll_wait is never restarted.  A child sends SIGUSR2 every
 * 10 ms until told to stop, so one arrives while the parent waits however
 * the two are scheduled.
 */
static void test_wait_eintr(void)
{
	int ep = CHECK_OK(epoll_create1(0));
	int e = CHECK_OK(eventfd(0, EFD_NONBLOCK));
	CHECK_EQ(watch(ep, e, EPOLLIN, 1), 0);
	CHECK_OK(handle(SIGUSR2, SA_RESTART));
	hits = 0;
	int stop[2];
	CHECK_OK(pipe(stop));
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		close(stop[1]);
		struct pollfd p = { .fd = stop[0], .events = POLLIN };
		for (int i = 0; i < 500 && poll(&p, 1, 10) == 0; i++)
			kill(parent, SIGUSR2);
		_exit(0);
	}
	close(stop[0]);
	struct epoll_event out[2];
	CHECK_ERR(epoll_wait(ep, out, 2, LONG_WAIT), EINTR);
	CHECK(hits >= 1);
	ut_tell(stop[1]);
	CHECK_EQ(ut_wait(pid), 0);
	close(stop[1]);
	signal(SIGUSR2, SIG_DFL);
	close(e);
	close(ep);
}

/* ---- epoll_pwait2 ---- */

static void test_pwait2(void)
{
	int ep = CHECK_OK(epoll_create1(0));
	int e = CHECK_OK(eventfd(0, EFD_NONBLOCK));
	CHECK_EQ(watch(ep, e, EPOLLIN, 9), 0);
	struct epoll_event out[2];
	struct timespec zero = { 0, 0 };
	errno = 0;
	long r = syscall(SYS_epoll_pwait2, ep, out, 2, &zero, NULL, 8);
	if (r < 0 && errno == ENOSYS) {
		ut_note("skipped epoll_pwait2: the kernel lacks it");
		close(e);
		close(ep);
		return;
	}
	CHECK_EQ(r, 0);
	struct timespec bad = { 0, 1000000000 };
	CHECK_ERR(syscall(SYS_epoll_pwait2, ep, out, 2, &bad, NULL, 8), EINVAL);
	bad.tv_nsec = -1;
	CHECK_ERR(syscall(SYS_epoll_pwait2, ep, out, 2, &bad, NULL, 8), EINVAL);
	bad = (struct timespec){ -1, 0 };
	CHECK_ERR(syscall(SYS_epoll_pwait2, ep, out, 2, &bad, NULL, 8), EINVAL);
	CHECK_ERR(syscall(SYS_epoll_pwait2, ep, out, 2, UT_BADPTR, NULL, 8), EFAULT);
	CHECK_ERR(syscall(SYS_epoll_pwait2, ep, out, 0, &zero, NULL, 8), EINVAL);
	sigset_t none;
	sigemptyset(&none);
	CHECK_ERR(syscall(SYS_epoll_pwait2, ep, out, 2, &zero, &none, 4), EINVAL);
	/* A short timeout runs out and gives 0. */
	struct timespec short_ts = { 0, 20 * 1000000 };
	long long t0 = now_ms();
	CHECK_EQ(syscall(SYS_epoll_pwait2, ep, out, 2, &short_ts, NULL, 8), 0);
	CHECK(now_ms() - t0 >= 15);
	/* NULL means no timeout: with an event ready, it returns it. */
	CHECK_EQ(put(e, 1), 0);
	memset(out, 0, sizeof out);
	CHECK_EQ(syscall(SYS_epoll_pwait2, ep, out, 2, NULL, NULL, 8), 1);
	CHECK_EQ(out[0].events, EPOLLIN);
	CHECK_EQ(out[0].data.u64, 9);
	CHECK_EQ(syscall(SYS_epoll_pwait2, ep, out, 2, &zero, &none, 8), 1);
	close(e);
	close(ep);
}

/* ---- other processes ---- */

/* A child blocked in epoll_wait on an epoll fd it inherited wakes when the
 * parent writes to an eventfd in the set. */
static void test_wakeup(void)
{
	int ep = CHECK_OK(epoll_create1(0));
	int e = CHECK_OK(eventfd(0, EFD_NONBLOCK));
	CHECK_EQ(watch(ep, e, EPOLLIN, 0xabcdef), 0);
	int go[2];
	CHECK_OK(pipe(go));
	pid_t pid = fork();
	if (pid == 0) {
		close(go[0]);
		ut_tell(go[1]);
		struct epoll_event out[4];
		int n = epoll_wait(ep, out, 4, LONG_WAIT);
		KID_CHECK(n == 1);
		KID_CHECK(out[0].events == EPOLLIN);
		KID_CHECK(out[0].data.u64 == 0xabcdef);
		_exit(0);
	}
	close(go[1]);
	CHECK_EQ(ut_await(go[0]), 0);
	nap_ms(20); /* best effort: let the child fall asleep in epoll_wait */
	CHECK_EQ(put(e, 1), 0);
	CHECK_EQ(ut_wait(pid), 0);
	/* The child did not read it: it is still there for the parent. */
	CHECK_EQ(events_now(ep), EPOLLIN);
	close(go[0]);
	close(e);
	close(ep);
}

/*
 * EPOLLEXCLUSIVE: three children, each with an epoll fd of its own made
 * after the fork, watch one eventfd exclusively and sleep in epoll_wait.
 * A write wakes one or more of them (Linux promises no more than that),
 * so at least one must report the event.
 */
static void test_exclusive(void)
{
	enum { KIDS = 3 };
	int e = CHECK_OK(eventfd(0, EFD_NONBLOCK));
	int ready[2], report[2];
	CHECK_OK(pipe(ready));
	CHECK_OK(pipe(report));
	pid_t pid[KIDS];
	for (int i = 0; i < KIDS; i++) {
		pid[i] = fork();
		if (pid[i] == 0) {
			close(ready[0]);
			close(report[0]);
			int ep = epoll_create1(0);
			struct epoll_event ev = {
				.events = EPOLLIN | EPOLLEXCLUSIVE, .data.u64 = 7
			};
			char r = 'y';
			if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, e, &ev) != 0)
				r = 'c';
			ut_tell(ready[1]);
			struct epoll_event out[2];
			int n = epoll_wait(ep, out, 2, LONG_WAIT);
			if (n == 0)
				_exit(0); /* not woken: the parent kills first */
			if (r == 'y' && (n != 1 || out[0].events != EPOLLIN ||
					 out[0].data.u64 != 7))
				r = 'n';
			if (write(report[1], &r, 1) != 1)
				_exit(3);
			_exit(0);
		}
		CHECK(pid[i] > 0);
	}
	close(ready[1]);
	close(report[1]);
	for (int i = 0; i < KIDS; i++)
		CHECK_EQ(ut_await(ready[0]), 0);
	nap_ms(100); /* best effort: let all three fall asleep */
	CHECK_EQ(put(e, 1), 0);
	struct pollfd p = { .fd = report[0], .events = POLLIN };
	CHECK_EQ(poll(&p, 1, LONG_WAIT), 1);
	char r[KIDS] = { 0 };
	long n = read(report[0], r, sizeof r);
	CHECK(n >= 1);
	for (long i = 0; i < n; i++)
		CHECK_EQ(r[i], 'y');
	CHECK_EQ(take(e), 1);
	for (int i = 0; i < KIDS; i++) {
		if (pid[i] <= 0)
			continue;
		kill(pid[i], SIGKILL);
		int st = ut_wait(pid[i]);
		CHECK((WIFEXITED(st) && WEXITSTATUS(st) == 0) ||
		      (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL));
	}
	close(ready[0]);
	close(report[0]);
	close(e);
}

/* ---- nesting ---- */

static void test_nested(void)
{
	int inner = CHECK_OK(epoll_create1(0));
	int outer = CHECK_OK(epoll_create1(0));
	int e = CHECK_OK(eventfd(0, EFD_NONBLOCK));
	CHECK_EQ(watch(inner, e, EPOLLIN, 1), 0);
	CHECK_EQ(watch(outer, inner, EPOLLIN | EPOLLOUT, 0x5eed), 0);
	CHECK_EQ(events_now(outer), 0);
	CHECK_EQ(revents(inner), 0);
	CHECK_EQ(put(e, 1), 0);
	/* An epoll fd is only ever readable: no EPOLLOUT. */
	CHECK_EQ(events_within(outer, LONG_WAIT), EPOLLIN);
	CHECK_EQ(last_data, 0x5eed);
	CHECK_EQ(revents(inner), POLLIN);
	CHECK_EQ(events_now(inner), EPOLLIN);
	CHECK_EQ(take(e), 1);
	CHECK_EQ(events_now(outer), 0);
	/* A loop is refused. */
	CHECK_ERR(watch(inner, outer, EPOLLIN, 2), ELOOP);
	/* Edge-triggered on an epoll fd: once per new event. */
	int et = CHECK_OK(watch_one(inner, EPOLLIN | EPOLLET));
	CHECK_EQ(put(e, 1), 0);
	CHECK_EQ(events_now(et), EPOLLIN);
	CHECK_EQ(events_now(et), 0);
	CHECK_EQ(events_now(outer), EPOLLIN);
	close(et);
	close(e);
	close(outer);
	close(inner);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	test_eventfd_counter();
	test_eventfd_blocking();
	test_create();
	test_ctl_errors();
	test_wait_errors();
	test_level_pipe();
	test_edge();
	test_oneshot();
	test_unix_sockets();
	test_many();
	test_close();
	test_pwait_sigmask();
	test_wait_eintr();
	test_pwait2();
	test_wakeup();
	test_exclusive();
	test_nested();
	return ut_done();
}
