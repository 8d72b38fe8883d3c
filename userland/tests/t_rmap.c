/*
 * t_rmap: a file's pages know every mapping of them (Tempest: the reverse
 * mappings of kern/vm/rmap.c), seen from processes other than the one
 * that acts:
 *
 *   - a write(2) is seen at once through two other processes' shared
 *     mappings, and a store through one of them by read(2) in a third,
 *     with no msync;
 *   - ftruncate by the parent while a child maps the file shared and
 *     private, with every page touched: the child's access to a page
 *     wholly past the new end raises SIGBUS in both mappings (as Linux),
 *     and the rest of its last page reads as zeros;
 *   - fsync and msync(MS_SYNC) by the parent while a child's stores sit
 *     in its shared mapping succeed, and the parent reads the stores back
 *     after the child has unmapped nothing (Tempest's ktest pcache_rmap
 *     checks they reach the disk).
 */
#include "ut.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096

struct chan {
	int up[2], down[2];     /* child -> parent, parent -> child */
};

static int chan_open(struct chan *c)
{
	return pipe(c->up) || pipe(c->down) ? -1 : 0;
}

static void chan_close(struct chan *c)
{
	close(c->up[0]);
	close(c->up[1]);
	close(c->down[0]);
	close(c->down[1]);
}

/* The child's status: 0 when it exited 0. */
static int reap(pid_t pid)
{
	int status = 0;
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- a write seen through every mapping ---- */

/* Map the file, tell the parent, wait; then the parent's write must be
 * in the mapping; store there for the reader. */
static void watcher(int fd, struct chan *c, int id)
{
	char *m = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		_exit(4);
	volatile char touch = m[PG + 1];        /* mapped before the write */
	(void)touch;
	ut_tell(c->up[1]);
	if (ut_await(c->down[0]))
		_exit(5);
	if (memcmp(m + PG + 100, "WRITTEN", 7) != 0)
		_exit(6);
	m[200 + id] = (char)('A' + id);         /* for the parent's read(2) */
	ut_tell(c->up[1]);
	if (ut_await(c->down[0]))
		_exit(7);
	_exit(0);
}

static void test_write_seen_everywhere(void)
{
	int fd = CHECK_OK(open("seen", O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_OK(ftruncate(fd, 2 * PG));
	struct chan c[2];
	pid_t pid[2];
	for (int i = 0; i < 2; i++) {
		CHECK_OK(chan_open(&c[i]));
		pid[i] = fork();
		if (pid[i] == 0)
			watcher(fd, &c[i], i);
		CHECK(pid[i] > 0);
		CHECK_EQ(ut_await(c[i].up[0]), 0);
	}
	CHECK_EQ(pwrite(fd, "WRITTEN", 7, PG + 100), 7);
	for (int i = 0; i < 2; i++) {
		ut_tell(c[i].down[1]);
		CHECK_EQ(ut_await(c[i].up[0]), 0);
	}
	char got[2] = { 0, 0 };
	CHECK_EQ(pread(fd, got, 2, 200), 2);
	CHECK(got[0] == 'A' && got[1] == 'B');
	for (int i = 0; i < 2; i++) {
		ut_tell(c[i].down[1]);
		CHECK_EQ(reap(pid[i]), 0);
		chan_close(&c[i]);
	}
	close(fd);
}

/* ---- truncation under another process's mappings ---- */

static sigjmp_buf bus_jump;

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(bus_jump, 1);
}

/* Does reading p raise SIGBUS? */
static int raises_sigbus(const volatile char *p)
{
	if (sigsetjmp(bus_jump, 1))
		return 1;
	(void)*p;
	return 0;
}

/* Map the file shared and private, touch every page, tell the parent;
 * after its truncation to PG + 100 the third page is gone from both. */
static void truncated_child(int fd, struct chan *c)
{
	char *sh = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	char *pr = mmap(NULL, 3 * PG, PROT_READ, MAP_PRIVATE, fd, 0);
	if (sh == MAP_FAILED || pr == MAP_FAILED)
		_exit(4);
	for (int i = 0; i < 3; i++) {
		sh[i * PG + 7] = 'S';
		volatile char t = pr[i * PG];
		(void)t;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigbus;
	sigaction(SIGBUS, &sa, NULL);
	ut_tell(c->up[1]);
	if (ut_await(c->down[0]))
		_exit(5);
	if (!raises_sigbus(sh + 2 * PG + 7))
		_exit(6);
	if (!raises_sigbus(pr + 2 * PG))
		_exit(7);
	if (sh[PG + 100] != 0 || sh[PG + 7] != 'S')
		_exit(8);               /* the last page: data, then zeros */
	_exit(0);
}

static void test_truncate_other(void)
{
	int fd = CHECK_OK(open("trunc", O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_OK(ftruncate(fd, 3 * PG));
	struct chan c;
	CHECK_OK(chan_open(&c));
	pid_t pid = fork();
	if (pid == 0)
		truncated_child(fd, &c);
	CHECK(pid > 0);
	CHECK_EQ(ut_await(c.up[0]), 0);
	CHECK_OK(ftruncate(fd, PG + 100));
	ut_tell(c.down[1]);
	CHECK_EQ(reap(pid), 0);
	chan_close(&c);
	struct stat st;
	CHECK_OK(fstat(fd, &st));
	CHECK_EQ(st.st_size, PG + 100);
	close(fd);
}

/* ---- fsync and msync of another process's stores ---- */

static void storer(int fd, struct chan *c)
{
	char *m = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		_exit(4);
	memcpy(m + 10, "first", 5);
	ut_tell(c->up[1]);
	if (ut_await(c->down[0]))
		_exit(5);
	memcpy(m + PG + 10, "second", 6);
	ut_tell(c->up[1]);
	if (ut_await(c->down[0]))
		_exit(6);
	_exit(0);                       /* still mapped until here */
}

static void test_sync_other(void)
{
	int fd = CHECK_OK(open("synced", O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_OK(ftruncate(fd, 2 * PG));
	char *m = mmap(NULL, 2 * PG, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	struct chan c;
	CHECK_OK(chan_open(&c));
	pid_t pid = fork();
	if (pid == 0)
		storer(fd, &c);
	CHECK(pid > 0);
	CHECK_EQ(ut_await(c.up[0]), 0);
	CHECK_OK(fsync(fd));
	char got[6];
	CHECK_EQ(pread(fd, got, 5, 10), 5);
	CHECK(memcmp(got, "first", 5) == 0);
	ut_tell(c.down[1]);
	CHECK_EQ(ut_await(c.up[0]), 0);
	if (m != MAP_FAILED) {
		CHECK_OK(msync(m, 2 * PG, MS_SYNC));
		CHECK(memcmp(m + PG + 10, "second", 6) == 0);
	}
	CHECK_EQ(pread(fd, got, 6, PG + 10), 6);
	CHECK(memcmp(got, "second", 6) == 0);
	ut_tell(c.down[1]);
	CHECK_EQ(reap(pid), 0);
	chan_close(&c);
	if (m != MAP_FAILED)
		CHECK_OK(munmap(m, 2 * PG));
	close(fd);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	ut_alarm(60);
	test_write_seen_everywhere();
	test_truncate_other();
	test_sync_other();
	return ut_done();
}
