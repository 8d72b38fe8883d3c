/*
 * t_limits: the per-user process limit.
 *
 * A fork bomb stops at the limit with EAGAIN: an unprivileged process
 * (root is exempt from RLIMIT_NPROC on Linux and from Tempest's per-user
 * limit) lowers RLIMIT_NPROC to a few processes, and then it and every
 * child it makes fork for as long as fork succeeds.  Each one's last fork
 * must fail with EAGAIN, the processes of the user must never exceed the
 * limit, and when they are let go every one of them is reaped (each
 * waits for its own children, so the tree unwinds from the leaves), after
 * which fork works again.  The limit is small, so a host running the test
 * is not hurt; the bomb runs as a uid of its own (BOMB_UID) so that no
 * other process of the user counts against it.  Run unprivileged, the
 * program cannot change its uid and skips the bomb with a note.
 *
 * Also getrlimit, setrlimit and prlimit64 on RLIMIT_NPROC: the values
 * read back, a soft limit above the hard one (EINVAL), an unprivileged
 * raise of the hard limit (EPERM), bad pointers (EFAULT).
 */
#include "ut.h"

#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>

#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define BOMB_UID 54321   /* a user nobody else is on the machine */
#define LIMIT 8          /* processes the bomb's user may have */

/* Report bytes: what a process saw when its fork loop ended. */
#define SAW_EAGAIN 'A'
#define SAW_OTHER 'X'

struct bomb {
	int report[2];   /* each process writes one byte; EOF: all done */
	int release[2];  /* EOF on the read end lets every process go */
};

/* Wait for every child of ours; 0 when each exited 0. */
static int reap_all(void)
{
	int bad = 0, st;
	for (;;) {
		pid_t r = wait(&st);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno == ECHILD ? bad : 1;
		bad |= !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
}

/*
 * One process of the bomb (the first one included): fork until fork
 * fails, each child going through the same loop; report how the loop
 * ended; wait to be released; reap our own children.  Returns the exit
 * status a child of the bomb uses: 0 when all went well below it.
 */
static int bomb_process(struct bomb *b, int forks)
{
	int err = 0;
	for (;;) {
		pid_t pid = fork();
		if (pid == 0) {
			forks = 0; /* a new process of the bomb */
			continue;
		}
		if (pid < 0) {
			err = errno;
			break;
		}
		forks++;
	}
	char c = err == EAGAIN ? SAW_EAGAIN : SAW_OTHER;
	write(b->report[1], &c, 1);
	close(b->release[1]);
	close(b->report[1]); /* the last writer closed: all have reported */
	char junk;
	while (read(b->release[0], &junk, 1) < 0 && errno == EINTR)
		;
	close(b->release[0]);
	return reap_all() | (c != SAW_EAGAIN);
}

/* The bomb's first process, already as BOMB_UID with the limit set. */
static void bomb_run(void)
{
	struct bomb b;
	CHECK_OK(pipe(b.report));
	CHECK_OK(pipe(b.release));
	pid_t first = fork();
	if (first == 0) {
		close(b.report[0]);
		_exit(bomb_process(&b, 0));
	}
	CHECK(first > 0);
	close(b.report[1]);
	/* Every report, until the last process has closed its end. */
	int eagain = 0, other = 0;
	char c;
	for (;;) {
		ssize_t r = read(b.report[0], &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		eagain += c == SAW_EAGAIN;
		other += c != SAW_EAGAIN;
	}
	close(b.report[0]);
	ut_note("fork bomb: %d processes stopped by EAGAIN, %d by another error",
		eagain, other);
	CHECK_EQ(other, 0);
	/* We count too: the bomb made at most LIMIT - 1, and at least one. */
	CHECK(eagain >= 1 && eagain <= LIMIT - 1);
	/* At the limit: our own fork fails the same way. */
	errno = 0;
	pid_t extra = fork();
	if (extra == 0)
		_exit(0);
	CHECK(extra < 0 && errno == EAGAIN);
	close(b.release[1]);
	close(b.release[0]);
	CHECK_EQ(ut_wait(first), 0);
	CHECK_ERR(wait(NULL), ECHILD);
	/* Everything reaped: fork works again. */
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	CHECK(pid > 0);
	if (pid > 0)
		CHECK_EQ(ut_wait(pid), 0);
}

/* Run in a child of ours (ut_child): become BOMB_UID, set the limit, bomb. */
static void fork_bomb(void *arg)
{
	(void)arg;
	(void)setgroups(0, NULL);
	if (setgid(BOMB_UID) != 0 || setuid(BOMB_UID) != 0) {
		CHECK(!"cannot become the bomb's user");
		return;
	}
	struct rlimit rl = { LIMIT, LIMIT };
	CHECK_OK(setrlimit(RLIMIT_NPROC, &rl));
	bomb_run();
}

static void test_rlimit_calls(void)
{
	struct rlimit rl, back;
	CHECK_OK(getrlimit(RLIMIT_NPROC, &rl));
	CHECK(rl.rlim_cur <= rl.rlim_max);
	/* prlimit64 (pid 0: ourselves) reads the same. */
	CHECK_OK(syscall(SYS_prlimit64, 0, RLIMIT_NPROC, NULL, &back));
	CHECK_EQ(back.rlim_cur, rl.rlim_cur);
	CHECK_EQ(back.rlim_max, rl.rlim_max);
	CHECK_OK(syscall(SYS_prlimit64, getpid(), RLIMIT_NPROC, NULL, &back));
	CHECK_EQ(back.rlim_max, rl.rlim_max);
	CHECK_ERR(syscall(SYS_getrlimit, RLIMIT_NPROC, UT_BADPTR), EFAULT);
	CHECK_ERR(syscall(SYS_setrlimit, RLIMIT_NPROC, UT_BADPTR), EFAULT);
	CHECK_ERR(getrlimit(1000, &back), EINVAL);
	struct rlimit bad = { 10, 5 };
	CHECK_ERR(setrlimit(RLIMIT_NPROC, &bad), EINVAL);
}

/* In a child (the limits stay its own): lower, read back, and as another
 * user fail to raise the hard limit again. */
static void lower_and_raise(void *arg)
{
	(void)arg;
	struct rlimit rl = { 100, 200 }, back, old;
	CHECK_OK(setrlimit(RLIMIT_NPROC, &rl));
	CHECK_OK(getrlimit(RLIMIT_NPROC, &back));
	CHECK_EQ(back.rlim_cur, 100);
	CHECK_EQ(back.rlim_max, 200);
	struct rlimit lower = { 50, 150 };
	CHECK_OK(syscall(SYS_prlimit64, 0, RLIMIT_NPROC, &lower, &old));
	CHECK_EQ(old.rlim_cur, 100);
	CHECK_EQ(old.rlim_max, 200);
	/* The soft limit may go up to the hard one... */
	struct rlimit up = { 150, 150 };
	CHECK_OK(setrlimit(RLIMIT_NPROC, &up));
	/* ...but the hard one does not go up again, unprivileged. */
	struct rlimit higher = { 150, 300 };
	CHECK_ERR(setrlimit(RLIMIT_NPROC, &higher), EPERM);
	CHECK_OK(getrlimit(RLIMIT_NPROC, &back));
	CHECK_EQ(back.rlim_max, 150);
}

static volatile sig_atomic_t xfsz_seen;

static void on_xfsz(int sig)
{
	(void)sig;
	xfsz_seen++;
}

/* RLIMIT_FSIZE: a write that crosses the limit moves the bytes below it;
 * one at the limit fails with EFBIG and raises SIGXFSZ (here caught);
 * sendfile stops at the limit too (the fuzzer's sendfile of a file onto
 * itself once filled the disk). */
static void file_size_limit(void *arg)
{
	(void)arg;
	struct rlimit lim = { 10000, 10000 };
	CHECK_OK(setrlimit(RLIMIT_FSIZE, &lim));
	signal(SIGXFSZ, on_xfsz);
	int fd = open("big", O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	static char buf[16384];
	memset(buf, 'x', sizeof buf);
	CHECK_EQ(write(fd, buf, sizeof buf), 10000);
	CHECK_EQ(xfsz_seen, 0);
	CHECK_ERR(write(fd, buf, 1), EFBIG);
	CHECK_EQ(xfsz_seen, 1);
	CHECK_ERR(pwrite(fd, buf, 1, 20000), EFBIG);
	CHECK_EQ(pwrite(fd, buf, 100, 9950), 50);
	CHECK_OK(ftruncate(fd, 4000));
	off_t pos = 0;
	CHECK_OK(lseek(fd, 4000, SEEK_SET));
	CHECK_EQ(sendfile(fd, fd, &pos, 1L << 30), 6000); /* onto itself, to the limit */
	struct stat st;
	CHECK_OK(fstat(fd, &st));
	CHECK_EQ(st.st_size, 10000);
	close(fd);
	CHECK_OK(unlink("big"));
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	test_rlimit_calls();
	ut_child("file size limit", file_size_limit, NULL, 0);
	if (ut_is_root()) {
		ut_child("fork bomb", fork_bomb, NULL, 0);
		ut_child("limits as another user", lower_and_raise, NULL, 1);
	} else {
		ut_note("skipped the fork bomb: needs root to become user %d, so "
			"that the limit counts the bomb's processes alone",
			BOMB_UID);
		ut_child("limits", lower_and_raise, NULL, 0);
	}
	return ut_done();
}
