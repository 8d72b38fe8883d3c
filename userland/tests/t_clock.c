/*
 * t_clock: setting the wall clock, and file times from it.
 *
 * clock_settime and settimeofday: their errors in Linux's order (clocks
 * that cannot be set, bad pointers, out-of-range values, then the
 * privilege, then settimeofday's time-zone range), a user refused, and
 * root setting the clock.  A new file's times come from the wall clock.
 *
 * On the build host the clock is only ever set to what it already reads
 * (other programs share it); inside Tempest (uname says so) the test also
 * moves it a day ahead, checks CLOCK_REALTIME and a new file's times
 * followed while CLOCK_MONOTONIC did not jump, and moves it back.
 */
#include "ut.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define DAY 86400

/* The kernel's struct timezone, for the raw call. */
struct tz_k {
	int minuteswest, dsttime;
};

static int64_t ns_of(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static int in_tempest(void)
{
	struct utsname u;
	return uname(&u) == 0 && strcmp(u.sysname, "Tempest") == 0;
}

/* Does this root hold CAP_SYS_TIME?  A container's root often does not;
 * where /proc/self/status shows no capabilities (Tempest), root can. */
static int may_set_clock(void)
{
	char buf[4096];
	long n = ut_read_file("/proc/self/status", buf, sizeof buf - 1);
	if (n <= 0)
		return 1;
	buf[n] = 0;
	char *cap = strstr(buf, "CapEff:");
	if (!cap)
		return 1;
	unsigned long long eff = strtoull(cap + 7, NULL, 16);
	return (eff >> 25) & 1; /* CAP_SYS_TIME */
}

/* Errors that come before the privilege check: anyone gets them. */
static void value_errors(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_MONOTONIC, &ts), EINVAL);
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_BOOTTIME, &ts), EINVAL);
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_MONOTONIC_RAW, &ts), EINVAL);
	CHECK_ERR(syscall(SYS_clock_settime, 12345, &ts), EINVAL);
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_MONOTONIC, UT_BADPTR), EINVAL);
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_REALTIME, UT_BADPTR), EFAULT);
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_REALTIME, UT_KERNPTR), EFAULT);
	/* A CPU-time clock is never set: refused before the pointer is read. */
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_PROCESS_CPUTIME_ID, UT_BADPTR), EINVAL);
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_PROCESS_CPUTIME_ID, &ts), EINVAL);
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_THREAD_CPUTIME_ID, &ts), EINVAL);
	struct timespec bad = ts;
	bad.tv_nsec = 1000000000;
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_REALTIME, &bad), EINVAL);
	bad.tv_nsec = -1;
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_REALTIME, &bad), EINVAL);
	bad.tv_sec = -1;
	bad.tv_nsec = 0;
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_REALTIME, &bad), EINVAL);

	struct timeval tv = { ts.tv_sec, 1000001 };
	CHECK_ERR(syscall(SYS_settimeofday, &tv, NULL), EINVAL);
	tv.tv_usec = 1000000;
	CHECK_ERR(syscall(SYS_settimeofday, &tv, NULL), EINVAL);
	tv.tv_usec = -1;
	CHECK_ERR(syscall(SYS_settimeofday, &tv, NULL), EINVAL);
	tv.tv_sec = -5;
	tv.tv_usec = 0;
	CHECK_ERR(syscall(SYS_settimeofday, &tv, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_settimeofday, UT_BADPTR, NULL), EFAULT);
	tv.tv_sec = ts.tv_sec;
	CHECK_ERR(syscall(SYS_settimeofday, &tv, UT_BADPTR), EFAULT);
	/* The microseconds are checked before the zone is read. */
	CHECK_ERR(syscall(SYS_settimeofday, UT_BADPTR, UT_BADPTR), EFAULT);
	tv.tv_usec = 1000000;
	CHECK_ERR(syscall(SYS_settimeofday, &tv, UT_KERNPTR), EINVAL);
	tv.tv_usec = 999999;
	CHECK_ERR(syscall(SYS_settimeofday, &tv, UT_KERNPTR), EFAULT);
}

static void user_refused(void *arg)
{
	value_errors();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_REALTIME, &ts), EPERM);
	struct timeval tv = { ts.tv_sec, 0 };
	CHECK_ERR(syscall(SYS_settimeofday, &tv, NULL), EPERM);
	CHECK_ERR(syscall(SYS_settimeofday, NULL, NULL), EPERM);
	struct tz_k tz = { 0, 0 };
	CHECK_ERR(syscall(SYS_settimeofday, NULL, &tz), EPERM);
	/* The privilege comes before the zone's range. */
	tz.minuteswest = 16 * 60;
	CHECK_ERR(syscall(SYS_settimeofday, NULL, &tz), EPERM);
}

/* Set the clock to what it reads: harmless on a shared host. */
static void set_to_now(void)
{
	struct timespec before, after;
	CHECK_OK(clock_gettime(CLOCK_REALTIME, &before));
	CHECK_OK(syscall(SYS_clock_settime, CLOCK_REALTIME, &before));
	CHECK_OK(clock_gettime(CLOCK_REALTIME, &after));
	CHECK(ns_of(&after) >= ns_of(&before));
	CHECK(ns_of(&after) - ns_of(&before) < 2000000000LL);
	struct timeval tv;
	CHECK_OK(gettimeofday(&tv, NULL));
	CHECK_OK(syscall(SYS_settimeofday, &tv, NULL));
	CHECK_OK(syscall(SYS_settimeofday, NULL, NULL));
	struct tz_k tz = { 0, 0 };
	CHECK_OK(syscall(SYS_settimeofday, NULL, &tz));
	tz.minuteswest = 15 * 60 + 1;
	CHECK_ERR(syscall(SYS_settimeofday, NULL, &tz), EINVAL);
	tz.minuteswest = -15 * 60 - 1;
	CHECK_ERR(syscall(SYS_settimeofday, NULL, &tz), EINVAL);
}

static void check_new_file_time(time_t want)
{
	struct stat st;
	unlink("stamp");
	CHECK_OK(ut_write_file("stamp", "x", 1, 0644));
	CHECK_OK(stat("stamp", &st));
	CHECK(st.st_mtime >= want - 2 && st.st_mtime <= want + 2);
	CHECK(st.st_ctime >= want - 2 && st.st_ctime <= want + 2);
}

/* Inside Tempest only: a day ahead and back. */
static void jump_a_day(void)
{
	struct timespec rt, mono0, mono1, ahead;
	CHECK_OK(clock_gettime(CLOCK_MONOTONIC, &mono0));
	CHECK_OK(clock_gettime(CLOCK_REALTIME, &rt));
	ahead = rt;
	ahead.tv_sec += DAY;
	CHECK_OK(syscall(SYS_clock_settime, CLOCK_REALTIME, &ahead));
	struct timespec now;
	CHECK_OK(clock_gettime(CLOCK_REALTIME, &now));
	CHECK(now.tv_sec >= rt.tv_sec + DAY && now.tv_sec <= rt.tv_sec + DAY + 2);
	CHECK(time(NULL) >= rt.tv_sec + DAY);
	check_new_file_time(now.tv_sec);
	CHECK_OK(clock_gettime(CLOCK_MONOTONIC, &mono1));
	CHECK(ns_of(&mono1) >= ns_of(&mono0));
	CHECK(ns_of(&mono1) - ns_of(&mono0) < 10LL * 1000000000);
	/* Back, by settimeofday. */
	struct timeval tv = { now.tv_sec - DAY, now.tv_nsec / 1000 };
	CHECK_OK(syscall(SYS_settimeofday, &tv, NULL));
	CHECK_OK(clock_gettime(CLOCK_REALTIME, &now));
	CHECK(now.tv_sec >= rt.tv_sec && now.tv_sec <= rt.tv_sec + 10);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	check_new_file_time(time(NULL));
	value_errors();
	ut_unprivileged("user", user_refused, NULL);
	if (!ut_is_root()) {
		ut_note("skipped setting the clock: not root");
		return ut_done();
	}
	if (!may_set_clock()) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		CHECK_ERR(syscall(SYS_clock_settime, CLOCK_REALTIME, &ts), EPERM);
		ut_note("skipped setting the clock: root here lacks CAP_SYS_TIME");
		return ut_done();
	}
	set_to_now();
	if (in_tempest())
		jump_a_day();
	else
		ut_note("the clock is not moved on a shared host");
	return ut_done();
}
