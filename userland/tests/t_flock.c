/*
 * t_flock: flock and fcntl's record locks.
 *
 * flock: shared and exclusive locks between two opens of one file,
 * LOCK_NB's EWOULDBLOCK, a lock shared by dup and fork and let go with the
 * last descriptor, a blocked flock woken by the unlock, the errors.
 * Record locks: F_SETLK conflicts between processes (EAGAIN), F_GETLK
 * reporting the lock in the way (type, range, pid) or F_UNLCK, a lock
 * split by an unlock in its middle, SEEK_CUR and SEEK_END and negative
 * lengths, locks let go when the owner closes any descriptor of the file
 * and when it exits, F_SETLKW waiting for an unlock, ended by a signal
 * (EINTR), and refusing to deadlock (EDEADLK); the errors.  Open file
 * description locks (F_OFD_*): owned by the open file.  A counter in a
 * file incremented under each kind of lock by one child per CPU.
 */
#include "ut.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

/* Run fn in a child and return its exit status (0: all its checks held;
 * a child reports by exit status, 1 + the line of a failure). */
#define KID_CHECK(c) do { if (!(c)) _exit(__LINE__ % 250 + 1); } while (0)

static int setlk(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
	return fcntl(fd, cmd, &fl);
}

static struct flock getlk(int fd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
	if (fcntl(fd, F_GETLK, &fl) != 0)
		fl.l_type = -1;
	return fl;
}

static void test_flock(void)
{
	CHECK_OK(ut_write_file("fl", "0123456789", 10, 0644));
	int a = open("fl", O_RDWR), b = open("fl", O_RDWR);
	CHECK(a >= 0 && b >= 0);
	CHECK_OK(flock(a, LOCK_EX));
	CHECK_ERR(flock(b, LOCK_EX | LOCK_NB), EWOULDBLOCK);
	CHECK_ERR(flock(b, LOCK_SH | LOCK_NB), EWOULDBLOCK);
	CHECK_OK(flock(a, LOCK_EX));            /* again: no change */
	CHECK_OK(flock(a, LOCK_SH));            /* converted */
	CHECK_OK(flock(b, LOCK_SH | LOCK_NB));  /* two shared */
	CHECK_ERR(flock(a, LOCK_EX | LOCK_NB), EWOULDBLOCK);
	CHECK_OK(flock(b, LOCK_UN));
	CHECK_OK(flock(a, LOCK_EX | LOCK_NB));

	/* A dup shares the lock; closing one descriptor keeps it. */
	int a2 = dup(a);
	close(a);
	CHECK_ERR(flock(b, LOCK_EX | LOCK_NB), EWOULDBLOCK);
	/* A forked child shares it too: its unlock is ours. */
	pid_t pid = fork();
	if (pid == 0)
		_exit(flock(a2, LOCK_UN) == 0 ? 0 : 1);
	CHECK_EQ(ut_wait(pid), 0);
	CHECK_OK(flock(b, LOCK_EX | LOCK_NB));
	CHECK_OK(flock(b, LOCK_UN));
	CHECK_OK(flock(a2, LOCK_EX));
	close(a2);                              /* the last one: the lock goes */
	CHECK_OK(flock(b, LOCK_EX | LOCK_NB));

	/* A blocked flock wakes when the holder lets go. */
	pid = fork();
	if (pid == 0) {
		int c = open("fl", O_RDONLY);
		KID_CHECK(c >= 0);
		KID_CHECK(flock(c, LOCK_SH | LOCK_NB) == -1 && errno == EWOULDBLOCK);
		KID_CHECK(flock(c, LOCK_SH) == 0);
		_exit(0);
	}
	nap_ms(100);
	CHECK_OK(flock(b, LOCK_UN));
	CHECK_EQ(ut_wait(pid), 0);

	CHECK_ERR(flock(b, 0), EINVAL);
	CHECK_ERR(flock(b, LOCK_SH | LOCK_EX), EINVAL);
	CHECK_ERR(flock(b, 16), EINVAL);
	CHECK_ERR(flock(999, LOCK_SH), EBADF);
	CHECK_ERR(flock(-1, LOCK_SH), EBADF);
	close(b);
}

static void test_record_locks(void)
{
	CHECK_OK(ut_write_file("rl", "0123456789abcdefghij", 20, 0644));
	int fd = open("rl", O_RDWR);
	CHECK(fd >= 0);
	pid_t me = getpid();
	CHECK_OK(setlk(fd, F_SETLK, F_WRLCK, 0, 10));
	/* Our own locks never conflict with us. */
	struct flock fl = getlk(fd, F_WRLCK, 0, 0);
	CHECK_EQ(fl.l_type, F_UNLCK);
	CHECK_OK(setlk(fd, F_SETLK, F_RDLCK, 8, 4));    /* converts 8..9, adds 10..11 */

	pid_t pid = fork();
	if (pid == 0) {
		int c = open("rl", O_RDWR);
		KID_CHECK(c >= 0);
		struct flock g = getlk(c, F_RDLCK, 5, 1);
		KID_CHECK(g.l_type == F_WRLCK && g.l_start == 0 && g.l_len == 8 && g.l_pid == me);
		g = getlk(c, F_RDLCK, 8, 4);                /* shared with shared */
		KID_CHECK(g.l_type == F_UNLCK);
		g = getlk(c, F_WRLCK, 10, 1);
		KID_CHECK(g.l_type == F_RDLCK && g.l_pid == me);
		KID_CHECK(setlk(c, F_SETLK, F_WRLCK, 5, 1) == -1 && errno == EAGAIN);
		KID_CHECK(setlk(c, F_SETLK, F_RDLCK, 9, 3) == 0);
		KID_CHECK(setlk(c, F_SETLK, F_WRLCK, 12, 5) == 0);
		_exit(0);                   /* exiting lets its locks go */
	}
	CHECK_EQ(ut_wait(pid), 0);
	fl = getlk(fd, F_WRLCK, 12, 5);     /* would see the child's, were it left */
	CHECK_EQ(fl.l_type, F_UNLCK);

	/* Adjacent locks of one type merge: another process sees one range. */
	CHECK_OK(setlk(fd, F_SETLK, F_RDLCK, 30, 5));
	CHECK_OK(setlk(fd, F_SETLK, F_RDLCK, 35, 5));
	CHECK_OK(setlk(fd, F_SETLK, F_RDLCK, 25, 5));
	pid = fork();
	if (pid == 0) {
		int c = open("rl", O_RDWR);
		struct flock g = getlk(c, F_WRLCK, 32, 1);
		KID_CHECK(g.l_type == F_RDLCK && g.l_start == 25 && g.l_len == 15);
		_exit(0);
	}
	CHECK_EQ(ut_wait(pid), 0);
	CHECK_OK(setlk(fd, F_SETLK, F_UNLCK, 25, 15));

	/* An unlock in the middle splits the lock. */
	CHECK_OK(setlk(fd, F_SETLK, F_UNLCK, 3, 2));
	pid = fork();
	if (pid == 0) {
		int c = open("rl", O_RDWR);
		struct flock g = getlk(c, F_WRLCK, 3, 2);
		KID_CHECK(g.l_type == F_UNLCK);
		g = getlk(c, F_WRLCK, 4, 3);
		KID_CHECK(g.l_type == F_WRLCK && g.l_start == 5 && g.l_len == 3);
		g = getlk(c, F_WRLCK, 0, 1);
		KID_CHECK(g.l_type == F_WRLCK && g.l_start == 0 && g.l_len == 3);
		_exit(0);
	}
	CHECK_EQ(ut_wait(pid), 0);

	/* SEEK_CUR, SEEK_END and a negative length name the same bytes. */
	CHECK_OK(setlk(fd, F_SETLK, F_UNLCK, 0, 0));
	CHECK_EQ(lseek(fd, 15, SEEK_SET), 15);
	struct flock cur = { .l_type = F_WRLCK, .l_whence = SEEK_CUR, .l_start = 2, .l_len = -2 };
	CHECK_OK(fcntl(fd, F_SETLK, &cur));                     /* bytes 15..16 */
	pid = fork();
	if (pid == 0) {
		int c = open("rl", O_RDWR);
		struct flock g = { .l_type = F_WRLCK, .l_whence = SEEK_END, .l_start = -10, .l_len = 0 };
		KID_CHECK(fcntl(c, F_GETLK, &g) == 0);
		KID_CHECK(g.l_type == F_WRLCK && g.l_whence == SEEK_SET && g.l_start == 15 && g.l_len == 2);
		_exit(0);
	}
	CHECK_EQ(ut_wait(pid), 0);

	/* Closing any descriptor of the file lets our locks on it go. */
	int other = open("rl", O_RDONLY);
	close(other);
	pid = fork();
	if (pid == 0) {
		int c = open("rl", O_RDWR);
		struct flock g = getlk(c, F_WRLCK, 0, 0);
		_exit(g.l_type == F_UNLCK ? 0 : 1);
	}
	CHECK_EQ(ut_wait(pid), 0);

	/* Errors. */
	int ro = open("rl", O_RDONLY), wo = open("rl", O_WRONLY);
	CHECK_ERR(setlk(ro, F_SETLK, F_WRLCK, 0, 1), EBADF);
	CHECK_ERR(setlk(wo, F_SETLK, F_RDLCK, 0, 1), EBADF);
	CHECK_OK(setlk(ro, F_SETLK, F_RDLCK, 0, 1));
	CHECK_OK(setlk(wo, F_SETLK, F_WRLCK, 5, 1));
	CHECK_ERR(setlk(fd, F_SETLK, 7, 0, 1), EINVAL);
	CHECK_ERR(setlk(fd, F_SETLK, F_WRLCK, -1, 1), EINVAL);
	CHECK_ERR(setlk(fd, F_SETLK, F_WRLCK, 0, -1), EINVAL);
	struct flock badw = { .l_type = F_WRLCK, .l_whence = 9 };
	CHECK_ERR(fcntl(fd, F_SETLK, &badw), EINVAL);
	struct flock un = { .l_type = F_UNLCK };
	CHECK_ERR(fcntl(fd, F_GETLK, &un), EINVAL);
	CHECK_ERR(fcntl(fd, F_SETLK, UT_BADPTR), EFAULT);
	CHECK_ERR(fcntl(fd, F_GETLK, UT_BADPTR), EFAULT);
	CHECK_ERR(setlk(999, F_SETLK, F_WRLCK, 0, 1), EBADF);
	close(ro);
	close(wo);
	close(fd);
}

/* Open file description locks: owned by the open file, so they conflict
 * within one process, report pid -1, survive the close of another
 * descriptor of the file and go with their own. */
static void test_ofd_locks(void)
{
	int a = open("rl", O_RDWR), b = open("rl", O_RDWR);
	CHECK(a >= 0 && b >= 0);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10 };
	CHECK_OK(fcntl(a, F_OFD_SETLK, &fl));
	fl.l_start = 5;
	fl.l_len = 1;
	CHECK_ERR(fcntl(b, F_OFD_SETLK, &fl), EAGAIN);
	CHECK_ERR(setlk(b, F_SETLK, F_WRLCK, 5, 1), EAGAIN);   /* our own record lock too */
	struct flock q = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 3, .l_len = 1 };
	CHECK_OK(fcntl(b, F_OFD_GETLK, &q));
	CHECK_EQ(q.l_type, F_WRLCK);
	CHECK_EQ(q.l_pid, -1);
	CHECK_EQ(q.l_start, 0);
	CHECK_EQ(q.l_len, 10);
	q = (struct flock){ .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 3, .l_len = 1 };
	CHECK_OK(fcntl(a, F_OFD_GETLK, &q));       /* its own: no conflict */
	CHECK_EQ(q.l_type, F_UNLCK);
	close(b);
	b = open("rl", O_RDWR);
	fl.l_start = 5;
	CHECK_ERR(fcntl(b, F_OFD_SETLK, &fl), EAGAIN);   /* not let go by that close */
	struct flock badpid = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_pid = 1 };
	CHECK_ERR(fcntl(b, F_OFD_SETLK, &badpid), EINVAL);
	close(a);
	CHECK_OK(fcntl(b, F_OFD_SETLK, &fl));            /* gone with its open file */
	close(b);
}

static void on_alarm(int sig) { (void)sig; }

static void test_setlkw(void)
{
	int fd = open("rl", O_RDWR);
	CHECK(fd >= 0);
	CHECK_OK(setlk(fd, F_SETLK, F_WRLCK, 0, 1));

	/* A waiter gets the lock once we let go. */
	pid_t pid = fork();
	if (pid == 0) {
		int c = open("rl", O_RDWR);
		KID_CHECK(setlk(c, F_SETLKW, F_WRLCK, 0, 1) == 0);
		struct timespec ts = { 0, 0 };
		(void)ts;
		_exit(0);
	}
	nap_ms(100);
	CHECK_OK(setlk(fd, F_SETLK, F_UNLCK, 0, 1));
	CHECK_EQ(ut_wait(pid), 0);

	/* A signal ends the wait with EINTR. */
	CHECK_OK(setlk(fd, F_SETLK, F_WRLCK, 0, 1));
	pid = fork();
	if (pid == 0) {
		struct sigaction sa = { .sa_handler = on_alarm };
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, NULL);
		struct itimerval it = { { 0, 0 }, { 0, 100000 } };
		setitimer(ITIMER_REAL, &it, NULL);
		int c = open("rl", O_RDWR);
		KID_CHECK(setlk(c, F_SETLKW, F_WRLCK, 0, 1) == -1 && errno == EINTR);
		_exit(0);
	}
	CHECK_EQ(ut_wait(pid), 0);

	/* Deadlock: we hold byte 0, the child byte 1 and waits for byte 0;
	 * our wait for byte 1 would close the circle. */
	int go[2];
	CHECK_OK(pipe(go));
	pid = fork();
	if (pid == 0) {
		int c = open("rl", O_RDWR);
		KID_CHECK(setlk(c, F_SETLK, F_WRLCK, 1, 1) == 0);
		close(go[1]);                           /* byte 1 is ours */
		KID_CHECK(setlk(c, F_SETLKW, F_WRLCK, 0, 1) == 0);
		_exit(0);
	}
	close(go[1]);
	char ch;
	CHECK_EQ(read(go[0], &ch, 1), 0);
	close(go[0]);
	nap_ms(200);                                    /* the child is asleep */
	CHECK_ERR(setlk(fd, F_SETLKW, F_WRLCK, 1, 1), EDEADLK);
	CHECK_OK(setlk(fd, F_SETLK, F_UNLCK, 0, 1));    /* the child goes on */
	CHECK_EQ(ut_wait(pid), 0);
	close(fd);
}

/* A counter in the file, incremented by one child per CPU under an
 * exclusive lock: record locks (F_SETLKW on its bytes) and then flock.
 * No increment is lost. */
#define COUNTER_ROUNDS 200

static int bump(int fd, int use_flock)
{
	for (int i = 0; i < COUNTER_ROUNDS; i++) {
		if (use_flock ? flock(fd, LOCK_EX) : setlk(fd, F_SETLKW, F_WRLCK, 0, 8))
			return 1;
		long v = 0;
		if (pread(fd, &v, sizeof v, 0) != sizeof v)
			return 2;
		v++;
		if ((i & 7) == 0)
			sched_yield();  /* invite another child into the window */
		if (pwrite(fd, &v, sizeof v, 0) != sizeof v)
			return 3;
		if (use_flock ? flock(fd, LOCK_UN) : setlk(fd, F_SETLK, F_UNLCK, 0, 8))
			return 4;
	}
	return 0;
}

static void test_counter(void)
{
	long nproc = sysconf(_SC_NPROCESSORS_ONLN);
	int kids = nproc < 2 ? 2 : nproc > 8 ? 8 : (int)nproc;
	for (int use_flock = 0; use_flock < 2; use_flock++) {
		long zero = 0;
		CHECK_OK(ut_write_file("ctr", &zero, sizeof zero, 0644));
		pid_t pids[8];
		for (int k = 0; k < kids; k++) {
			pids[k] = fork();
			if (pids[k] == 0) {
				int fd = open("ctr", O_RDWR);   /* an open file of its own */
				_exit(fd < 0 ? 9 : bump(fd, use_flock));
			}
		}
		for (int k = 0; k < kids; k++)
			CHECK_EQ(ut_wait(pids[k]), 0);
		long v = -1;
		CHECK_EQ(ut_read_file("ctr", &v, sizeof v), sizeof v);
		CHECK_EQ(v, (long)kids * COUNTER_ROUNDS);
	}
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	test_flock();
	test_record_locks();
	test_ofd_locks();
	test_setlkw();
	test_counter();
	return ut_done();
}
