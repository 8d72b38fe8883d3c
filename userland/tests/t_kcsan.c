/*
 * t_kcsan: a data race planted through a system call is found by the
 * kernel's data-race detector (make KCSAN=1, docs/kcsan.md).
 *
 * Writing "racy" to /proc/kcsan makes the kernel increment a counter with
 * no lock (kcsan_hook_racy in kern/procfs/procfs_kcsan.c); "locked" does
 * the same under a spin lock (kcsan_hook_locked).  Two threads pinned to
 * CPUs 0 and 1 write one word or the other as fast as they can:
 *
 *   locked  for LOCKED_SECONDS: /proc/kcsan's user_locked must stay 0
 *           (a race reported in a properly locked path is a false alarm);
 *   racy    until user_racy is 1, at most RACY_SECONDS, when the detector
 *           is on; with kcsan=off it must stay 0, since nothing watches.
 *
 * Only a KCSAN=1 kernel has /proc/kcsan: anywhere else (host Linux, the
 * plain kernel) the program checks only that the hook is absent (ENOENT).
 * It skips on one CPU, where there is no second side to race.
 */
/* Both phases and the KCSAN kernel's slowness fit well inside this. */
#define UT_TIMEOUT 40
#include "ut.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define KCSAN_PROC "/proc/kcsan"
#define LOCKED_SECONDS 3
#define RACY_SECONDS 12

static volatile int stop;       /* the main thread ends a phase */

struct hammer {
	int cpu;                /* the CPU the thread pins itself to */
	const char *word;       /* "racy" or "locked" */
	long writes;            /* writes that succeeded */
	int err;                /* the errno of the first failure, or 0 */
};

static int pin_self(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof set, &set);
}

/* One side: pinned, writing its word to /proc/kcsan until told to stop. */
static void *hammer_body(void *arg)
{
	struct hammer *h = arg;
	int fd = open(KCSAN_PROC, O_WRONLY);
	if (fd < 0 || pin_self(h->cpu) != 0) {
		h->err = errno;
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	size_t len = strlen(h->word);
	while (!stop) {
		if (write(fd, h->word, len) != (ssize_t)len) {
			h->err = errno;
			break;
		}
		h->writes++;
	}
	close(fd);
	return NULL;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Run a phase: two hammers on CPUs 0 and 1 writing word until
 * /proc/kcsan's field is nonzero (when until_set) or seconds pass.
 * Returns the field's last value, or -1 when it could not be read.
 */
static long run_phase(const char *word, const char *field, int until_set, int seconds)
{
	struct hammer h[2] = { { 0, word, 0, 0 }, { 1, word, 0, 0 } };
	pthread_t th[2];
	stop = 0;
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, hammer_body, &h[i]), 0);
	double end = now() + seconds;
	long v = 0;
	while (now() < end) {
		v = ut_proc_number(KCSAN_PROC, field);
		if (v < 0 || (until_set && v > 0))
			break;
		usleep(50 * 1000);
	}
	stop = 1;
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(pthread_join(th[i], NULL), 0);
		CHECK_EQ(h[i].err, 0);
		CHECK(h[i].writes > 0);
	}
	ut_note("%s: %ld + %ld writes, %s %ld", word, h[0].writes, h[1].writes, field, v);
	return ut_proc_number(KCSAN_PROC, field);
}

/* Bad words are refused, and reading is unchanged by writes. */
static void test_bad_words(void)
{
	int fd = CHECK_OK(open(KCSAN_PROC, O_WRONLY));
	CHECK_ERR(write(fd, "racey", 5), EINVAL);
	CHECK_ERR(write(fd, "lockedlocked", 12), EINVAL);
	CHECK_EQ(write(fd, "locked\n", 7), 7);
	close(fd);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	if (access(KCSAN_PROC, F_OK) != 0) {
		/* The hook must not exist outside a KCSAN=1 kernel. */
		ut_note("no %s: not a KCSAN=1 Tempest kernel", KCSAN_PROC);
		CHECK_ERR(open(KCSAN_PROC, O_WRONLY), ENOENT);
		return ut_done();
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || !ut_is_root()) {
		ut_note("one CPU, or not root: no race to plant");
		return ut_done();
	}
	test_bad_words();
	long enabled = ut_proc_number(KCSAN_PROC, "enabled");
	CHECK(enabled == 0 || enabled == 1);
	CHECK_EQ(run_phase("locked", "user_locked", 0, LOCKED_SECONDS), 0);
	long racy = run_phase("racy", "user_racy", 1, RACY_SECONDS);
	CHECK_EQ(racy, enabled);
	CHECK_EQ(ut_proc_number(KCSAN_PROC, "user_locked"), 0);
	return ut_done();
}
