/*
 * t_timerfd: timers and signals as files (timerfd, signalfd).
 *
 * timerfd: one-shot and periodic expiries counted by read (8 bytes), a
 * blocking read woken by the expiry, O_NONBLOCK's EAGAIN, absolute times
 * (one already past is due at once), disarming, timerfd_gettime and the
 * old value settime returns, readiness for poll and epoll, and the
 * errors (bad clock, flags, times, a descriptor that is no timerfd).
 * signalfd: blocked signals read as struct signalfd_siginfo (the number,
 * the sender, sigqueue's value), several in one read, a new set by
 * signalfd4 on the same descriptor, a blocking read woken by a signal
 * from another process, readiness, and the errors.  Times are only lower
 * bounds: a timer never fires early, and every wait for one has seconds
 * to spare.
 */
#include "ut.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000L

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static struct itimerspec after(long value_ns, long interval_ns)
{
	struct itimerspec it = { { interval_ns / 1000000000L, interval_ns % 1000000000L },
				 { value_ns / 1000000000L, value_ns % 1000000000L } };
	return it;
}

static void check_oneshot(void)
{
	int fd = CHECK_OK(timerfd_create(CLOCK_MONOTONIC, 0));
	uint64_t n = 0, t0 = now_ns(CLOCK_MONOTONIC);
	struct itimerspec it = after(50 * MS, 0), old;
	CHECK_OK(timerfd_settime(fd, 0, &it, &old));
	CHECK_EQ(old.it_value.tv_sec + old.it_value.tv_nsec, 0);     /* was disarmed */
	CHECK_OK(timerfd_gettime(fd, &old));
	CHECK(old.it_value.tv_sec == 0 && old.it_value.tv_nsec > 0 && old.it_value.tv_nsec <= 50 * MS);
	CHECK_EQ(read(fd, &n, sizeof n), 8);                    /* waits for it */
	CHECK_EQ(n, 1);
	CHECK(now_ns(CLOCK_MONOTONIC) - t0 >= 50 * MS);         /* never early */
	CHECK_OK(timerfd_gettime(fd, &old));
	CHECK_EQ(old.it_value.tv_sec + old.it_value.tv_nsec, 0);     /* spent */
	char small[4];
	CHECK_ERR(read(fd, small, sizeof small), EINVAL);
	close(fd);
}

static void check_periodic(void)
{
	int fd = CHECK_OK(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
	uint64_t n = 0;
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK_ERR(read(fd, &n, sizeof n), EAGAIN);
	struct itimerspec it = after(20 * MS, 20 * MS), old;
	CHECK_OK(timerfd_settime(fd, 0, &it, NULL));
	struct timespec nap = { 0, 130 * MS };
	nanosleep(&nap, NULL);
	CHECK_EQ(read(fd, &n, sizeof n), 8);
	CHECK(n >= 5);                                          /* 130 ms of 20 ms periods */
	CHECK_OK(timerfd_gettime(fd, &old));
	CHECK_EQ(old.it_interval.tv_nsec, 20 * MS);
	it = after(0, 0);                                       /* disarm */
	CHECK_OK(timerfd_settime(fd, 0, &it, &old));
	CHECK_EQ(old.it_interval.tv_nsec, 20 * MS);
	nanosleep(&nap, NULL);
	CHECK_ERR(read(fd, &n, sizeof n), EAGAIN);              /* nothing since */
	close(fd);
}

static void check_absolute(void)
{
	int fd = CHECK_OK(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK));
	uint64_t n = 0, t = now_ns(CLOCK_MONOTONIC) + 30 * MS;
	struct itimerspec it = after((long)(t % 1000000000ULL), 0);
	it.it_value.tv_sec = (time_t)(t / 1000000000ULL);
	CHECK_OK(timerfd_settime(fd, TFD_TIMER_ABSTIME, &it, NULL));
	struct pollfd p = { fd, POLLIN, 0 };
	CHECK_EQ(poll(&p, 1, 0), 0);
	CHECK_EQ(poll(&p, 1, 5000), 1);                         /* readable when due */
	CHECK(now_ns(CLOCK_MONOTONIC) >= t);
	CHECK_EQ(read(fd, &n, sizeof n), 8);
	it.it_value.tv_sec = 1;                                 /* long past */
	CHECK_OK(timerfd_settime(fd, TFD_TIMER_ABSTIME, &it, NULL));
	CHECK_EQ(poll(&p, 1, 5000), 1);
	CHECK_EQ(read(fd, &n, sizeof n), 8);
	CHECK_EQ(n, 1);
	close(fd);
	/* CLOCK_REALTIME, absolute */
	fd = CHECK_OK(timerfd_create(CLOCK_REALTIME, 0));
	t = now_ns(CLOCK_REALTIME) + 30 * MS;
	it.it_value.tv_sec = (time_t)(t / 1000000000ULL);
	it.it_value.tv_nsec = (long)(t % 1000000000ULL);
	CHECK_OK(timerfd_settime(fd, TFD_TIMER_ABSTIME, &it, NULL));
	CHECK_EQ(read(fd, &n, sizeof n), 8);
	CHECK(now_ns(CLOCK_REALTIME) >= t);
	close(fd);
}

static void check_timer_errors(void)
{
	CHECK_ERR(timerfd_create(99, 0), EINVAL);
	CHECK_ERR(timerfd_create(CLOCK_MONOTONIC, 1), EINVAL);
	int fd = CHECK_OK(timerfd_create(CLOCK_BOOTTIME, 0));
	struct itimerspec it = after(0, 0), cur;
	it.it_value.tv_nsec = 1000000000L;
	CHECK_ERR(timerfd_settime(fd, 0, &it, NULL), EINVAL);
	it.it_value.tv_nsec = 0;
	CHECK_ERR(timerfd_settime(fd, 4, &it, NULL), EINVAL);
	CHECK_ERR(timerfd_settime(fd, 0, (void *)8, NULL), EFAULT);
	CHECK_ERR(timerfd_settime(99, 0, &it, NULL), EBADF);
	CHECK_ERR(timerfd_gettime(0 + 99, &cur), EBADF);
	int p[2];
	CHECK_OK(pipe(p));
	CHECK_ERR(timerfd_settime(p[0], 0, &it, NULL), EINVAL);
	CHECK_ERR(timerfd_gettime(p[0], &cur), EINVAL);
	char path[64], link[64] = { 0 };
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	CHECK(readlink(path, link, sizeof link - 1) > 0);
	CHECK(strcmp(link, "anon_inode:[timerfd]") == 0);
	close(p[0]);
	close(p[1]);
	close(fd);
}

static void check_timer_epoll(void)
{
	int fd = CHECK_OK(timerfd_create(CLOCK_MONOTONIC, 0));
	int ep = CHECK_OK(epoll_create1(0));
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 7 }, out;
	CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0);
	struct itimerspec it = after(20 * MS, 0);
	CHECK_OK(timerfd_settime(fd, 0, &it, NULL));
	CHECK_EQ(epoll_wait(ep, &out, 1, 5000), 1);
	CHECK_EQ(out.data.u32, 7);
	close(ep);
	close(fd);
}

/* ---- signalfd ---- */

static sigset_t only(int sig)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	return s;
}

static void check_signalfd(void)
{
	sigset_t both = only(SIGUSR1);
	sigaddset(&both, SIGUSR2);
	CHECK_OK(sigprocmask(SIG_BLOCK, &both, NULL));
	sigset_t s1 = only(SIGUSR1);
	int fd = CHECK_OK(signalfd(-1, &s1, SFD_NONBLOCK | SFD_CLOEXEC));
	struct signalfd_siginfo si[2];
	CHECK_ERR(read(fd, si, sizeof si[0]), EAGAIN);
	struct pollfd p = { fd, POLLIN, 0 };
	CHECK_EQ(poll(&p, 1, 0), 0);
	CHECK_OK(raise(SIGUSR1));
	CHECK_EQ(poll(&p, 1, 0), 1);
	CHECK_EQ(read(fd, si, sizeof si), (long)sizeof si[0]);
	CHECK_EQ(si[0].ssi_signo, SIGUSR1);
	CHECK_EQ(si[0].ssi_pid, getpid());
	CHECK_EQ(si[0].ssi_uid, getuid());
	union sigval v = { .sival_int = 1234 };
	CHECK_OK(sigqueue(getpid(), SIGUSR1, v));
	CHECK_EQ(read(fd, si, sizeof si), (long)sizeof si[0]);
	CHECK_EQ(si[0].ssi_code, SI_QUEUE);
	CHECK_EQ(si[0].ssi_int, 1234);
	/* a new set on the same descriptor; two in one read */
	CHECK_EQ(signalfd(fd, &both, 0), fd);
	CHECK_OK(raise(SIGUSR2));
	CHECK_OK(raise(SIGUSR1));
	CHECK_EQ(read(fd, si, sizeof si), 2 * (long)sizeof si[0]);
	CHECK_EQ(si[0].ssi_signo, SIGUSR1);                     /* the lowest first */
	CHECK_EQ(si[1].ssi_signo, SIGUSR2);
	char small[64];
	CHECK_ERR(read(fd, small, sizeof small), EINVAL);
	CHECK_ERR(syscall(SYS_signalfd4, -1, &s1, 4, 0), EINVAL);
	CHECK_ERR(signalfd(-1, &s1, 1), EINVAL);
	int pp[2];
	CHECK_OK(pipe(pp));
	CHECK_ERR(signalfd(pp[0], &s1, 0), EINVAL);
	CHECK_ERR(signalfd(99, &s1, 0), EBADF);
	close(pp[0]);
	close(pp[1]);
	close(fd);
}

static void check_signalfd_wait(void)
{
	int hs[2];
	CHECK_OK(pipe(hs));
	pid_t child = fork();
	if (child == 0) {
		sigset_t s1 = only(SIGUSR1);
		sigprocmask(SIG_BLOCK, &s1, NULL);
		int fd = signalfd(-1, &s1, 0);
		ut_tell(hs[1]);
		struct signalfd_siginfo si;
		long n = read(fd, &si, sizeof si);              /* waits */
		_exit(n == (long)sizeof si && si.ssi_signo == SIGUSR1 &&
		      si.ssi_pid == (uint32_t)getppid() ? 0 : 1);
	}
	CHECK_EQ(ut_await(hs[0]), 0);
	CHECK_OK(kill(child, SIGUSR1));
	CHECK_EQ(ut_wait(child), 0);
	close(hs[0]);
	close(hs[1]);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	check_oneshot();
	check_periodic();
	check_absolute();
	check_timer_errors();
	check_timer_epoll();
	check_signalfd();
	check_signalfd_wait();
	return ut_done();
}
