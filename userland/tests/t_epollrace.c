/*
 * t_epollrace: epoll_wait loses no readiness while other CPUs announce
 * changes at the same moment.
 *
 * A writer thread pinned to CPU 1 writes one byte to each of NPIPES
 * pipes, then a second byte to each in another order (every write
 * announces a change), then waits until a reader pinned to CPU 0 has
 * read them all, and starts over, for RACE_SECONDS.  The reader waits in epoll_wait on a
 * level-triggered set of the pipes' read ends and reads what it reports.
 * So while the reader moves announced items to its ready list, the writer
 * announces the same items again: the window where Tempest once lost
 * every item behind one announced twice (kern/event/epoll.c, take_dirty),
 * and redis-server slept with requests unread.  A lost item shows as an epoll_wait that
 * reports nothing for LOST_MS while poll(2) finds a pipe readable; the
 * writer then waits for ever, so the check fails at once.
 *
 * It needs two CPUs to race; on one it checks only that each round
 * arrives whole.
 */
#define UT_TIMEOUT 40
#include "ut.h"

#include <fcntl.h>
#include <stdbool.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#define NPIPES 32
#define RACE_SECONDS 4
#define LOST_MS 2000            /* quiet this long with data waiting: lost */

static int fds[NPIPES][2];
static int outstanding;         /* [a] bytes written and not yet read */
static volatile int stop;       /* [a] the reader saw a loss, or time is up */

struct writer {
	int cpu;                /* the CPU to pin to, or -1 */
	long rounds;            /* rounds the reader finished */
	int err;                /* errno of a failed write or pin, or 0 */
};

static int pin_self(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof set, &set);
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* A byte to every pipe in the order of perm. */
static int write_all(const int *perm)
{
	for (int i = 0; i < NPIPES; i++)
		if (write(fds[perm[i]][1], "x", 1) != 1)
			return errno;
	return 0;
}

/* A new order: a random step of the pipes' numbers. */
static void shuffle(int *perm, unsigned *seed)
{
	for (int i = NPIPES - 1; i > 0; i--) {
		*seed = *seed * 1103515245u + 12345u;
		int j = (int)((*seed >> 8) % (unsigned)(i + 1)), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
}

/* Two bytes to every pipe, each pass in its own order, then wait for the
 * reader to take them all. */
static void *writer_body(void *arg)
{
	struct writer *w = arg;
	if (w->cpu >= 0 && pin_self(w->cpu) != 0) {
		w->err = errno;
		__atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
		return NULL;
	}
	int first[NPIPES], second[NPIPES];
	unsigned seed = 1;
	for (int i = 0; i < NPIPES; i++)
		first[i] = second[i] = i;
	long long end = now_ms() + RACE_SECONDS * 1000;
	while (!__atomic_load_n(&stop, __ATOMIC_SEQ_CST) && now_ms() < end) {
		shuffle(first, &seed);
		shuffle(second, &seed);
		__atomic_store_n(&outstanding, 2 * NPIPES, __ATOMIC_SEQ_CST);
		if ((w->err = write_all(first)) || (w->err = write_all(second))) {
			__atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
			return NULL;
		}
		while (__atomic_load_n(&outstanding, __ATOMIC_SEQ_CST) > 0 &&
		       !__atomic_load_n(&stop, __ATOMIC_SEQ_CST))
			sched_yield();
		w->rounds++;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* The pipes poll(2) finds readable: what epoll should have reported. */
static int readable_by_poll(void)
{
	struct pollfd p[NPIPES];
	for (int i = 0; i < NPIPES; i++)
		p[i] = (struct pollfd){ .fd = fds[i][0], .events = POLLIN };
	int n = poll(p, NPIPES, 0);
	return n < 0 ? -errno : n;
}

/* Read what one event reports; the bytes taken. */
static int drain(int i)
{
	char buf[64];
	ssize_t n = read(fds[i][0], buf, sizeof buf);
	return n > 0 ? (int)n : 0;
}

/* Wait and read until the writer stops; the pipes found readable by poll
 * after a quiet LOST_MS (0: nothing was lost). */
static int reader(int ep, long *events)
{
	struct epoll_event ev[NPIPES];
	while (!__atomic_load_n(&stop, __ATOMIC_SEQ_CST)) {
		int n = epoll_wait(ep, ev, NPIPES, LOST_MS);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0 && __atomic_load_n(&outstanding, __ATOMIC_SEQ_CST) > 0) {
			int lost = readable_by_poll();
			if (lost != 0) {
				__atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
				return lost;
			}
		}
		for (int k = 0; k < n; k++) {
			int got = drain((int)ev[k].data.u32);
			__atomic_sub_fetch(&outstanding, got, __ATOMIC_SEQ_CST);
		}
		*events += n;
	}
	return 0;
}

static int make_set(void)
{
	int ep = CHECK_OK(epoll_create1(EPOLL_CLOEXEC));
	for (int i = 0; i < NPIPES; i++) {
		CHECK_OK(pipe2(fds[i], O_NONBLOCK | O_CLOEXEC));
		struct epoll_event e = { .events = EPOLLIN, .data.u32 = (uint32_t)i };
		CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, fds[i][0], &e));
	}
	return ep;
}

static void test_no_lost_readiness(void)
{
	int ep = make_set();
	bool two = sysconf(_SC_NPROCESSORS_ONLN) >= 2;
	if (two)
		CHECK_OK(pin_self(0));
	struct writer w = { two ? 1 : -1, 0, 0 };
	pthread_t t;
	CHECK_EQ(pthread_create(&t, NULL, writer_body, &w), 0);
	long events = 0;
	int lost = reader(ep, &events);
	CHECK_EQ(pthread_join(t, NULL), 0);
	ut_note("%ld rounds of %d pipes, %ld events; readable but not reported: %d",
		w.rounds, NPIPES, events, lost);
	CHECK_EQ(lost, 0);
	CHECK_EQ(w.err, 0);
	CHECK(w.rounds > 0);
	CHECK(events >= w.rounds);      /* each round is at least one report */
	for (int i = 0; i < NPIPES; i++) {
		close(fds[i][0]);
		close(fds[i][1]);
	}
	close(ep);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	test_no_lost_readiness();
	return ut_done();
}
