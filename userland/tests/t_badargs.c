/*
 * t_badargs: bad arguments the random-syscall test (ut_fuzz) runs into,
 * each with Linux's error, in Linux's order when several are wrong.
 *
 *   lseek on a pipe is ESPIPE whatever the whence (SEEK_END too: busybox's
 *     tail asks for the end of its input and seeks back if it gets one);
 *     an offset that overflows is EINVAL.
 *   read/write with a buffer reaching past user space: EFAULT, even where
 *     nothing would move (end of file).
 *   readv/writev: a bad descriptor is EBADF before a bad count is EINVAL.
 *   ftruncate: a negative length is EINVAL before a bad descriptor.
 *   readlink: the size is an int; 0 or negative is EINVAL.
 *   getrandom: unknown flags are EINVAL.
 *   fchownat, unlinkat, linkat, renameat2: unknown flags are EINVAL, and
 *     flags are ints (bits above the low 32 are not looked at).
 *   getrlimit/setrlimit: a NULL pointer is EFAULT (after a bad resource
 *     for getrlimit, before it for setrlimit).
 *   prlimit64: a bad new limit is EFAULT before no such process; the
 *     descriptor limit cannot be raised past the kernel's table (EPERM,
 *     even for root), and a bad old-limit pointer fails the call after
 *     the new limit is set.
 *   poll with no descriptors and no timeout waits until a signal, and
 *     then fails with EINTR, SA_RESTART or not.
 */
#include "ut.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAST_USER ((void *)0x7ffffffff000UL) /* the last page below the hole */

static void test_lseek(void)
{
	int p[2];
	CHECK_OK(pipe(p));
	CHECK_ERR(lseek(p[0], 0, SEEK_END), ESPIPE);
	CHECK_ERR(lseek(p[0], 0, SEEK_SET), ESPIPE);
	CHECK_ERR(lseek(p[1], 0, SEEK_CUR), ESPIPE);
	CHECK_ERR(lseek(p[1], 5, SEEK_END), ESPIPE);
	close(p[0]);
	close(p[1]);
	CHECK_OK(ut_write_file("f", "0123456789", 10, 0644));
	int fd = CHECK_OK(open("f", O_RDWR));
	CHECK_EQ(lseek(fd, -3, SEEK_END), 7);
	CHECK_ERR(lseek(fd, 0x7fffffffffffffffL, SEEK_END), EINVAL);
	CHECK_ERR(lseek(fd, -11, SEEK_END), EINVAL);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 7); /* unmoved by the failures */
	close(fd);
}

static void test_rw_range(void)
{
	int fd = CHECK_OK(open("f", O_RDWR));
	char b[4];
	CHECK_EQ(lseek(fd, 0, SEEK_END), 10);
	/* At the end of the file nothing would be read; still EFAULT. */
	CHECK_ERR(read(fd, b, 1L << 62), EFAULT);
	CHECK_ERR(read(fd, PAST_USER, 0x2000), EFAULT);
	CHECK_ERR(pread(fd, UT_KERNPTR, 1, 0), EFAULT);
	CHECK_ERR(write(fd, b, -1UL >> 1), EFAULT);
	CHECK_EQ(read(fd, b, sizeof b), 0); /* a good buffer: end of file */
	CHECK_EQ(pread(fd, b, 4, 0), 4);
	CHECK(!memcmp(b, "0123", 4));
	close(fd);
}

static void test_vec_order(void)
{
	char b[4];
	struct iovec iov = { b, sizeof b };
	CHECK_ERR(readv(-1, &iov, -1), EBADF);
	CHECK_ERR(writev(999, &iov, 1 << 20), EBADF);
	int fd = CHECK_OK(open("f", O_RDWR));
	CHECK_ERR(readv(fd, &iov, -1), EINVAL);
	CHECK_ERR(writev(fd, &iov, 1 << 20), EINVAL);
	close(fd);
}

static void test_truncate_order(void)
{
	CHECK_ERR(ftruncate(999, -1), EINVAL);
	CHECK_ERR(ftruncate(-1, -5), EINVAL);
	CHECK_ERR(ftruncate(999, 0), EBADF);
	CHECK_ERR(truncate(UT_BADPTR, -1), EINVAL);
}

static void test_readlink_size(void)
{
	CHECK_OK(symlink("f", "l"));
	char b[16];
	CHECK_ERR(syscall(SYS_readlink, "l", b, 0L), EINVAL);
	CHECK_ERR(syscall(SYS_readlink, "l", b, 1L << 32), EINVAL); /* an int 0 */
	CHECK_ERR(syscall(SYS_readlink, "l", b, -1L), EINVAL);
	CHECK_ERR(syscall(SYS_readlinkat, AT_FDCWD, "l", b, 0xffffffff00000000L), EINVAL);
	CHECK_EQ(syscall(SYS_readlink, "l", b, (1L << 32) | 16), 1); /* an int 16 */
	CHECK_EQ(b[0], 'f');
}

static void test_flags(void)
{
	char b[8];
	CHECK_ERR(syscall(SYS_getrandom, b, sizeof b, 0x100), EINVAL);
	CHECK_ERR(syscall(SYS_getrandom, UT_BADPTR, sizeof b, 0x80000000L), EINVAL);
	CHECK_EQ(syscall(SYS_getrandom, b, sizeof b, 0), (long)sizeof b);
	CHECK_EQ(syscall(SYS_getrandom, b, sizeof b, 1 /* GRND_NONBLOCK */), (long)sizeof b);
	CHECK_ERR(syscall(SYS_fchownat, AT_FDCWD, "f", -1, -1, 0x8), EINVAL);
	CHECK_ERR(syscall(SYS_fchownat, 999, "f", -1, -1, 0x8000), EINVAL);
	CHECK_OK(syscall(SYS_fchownat, AT_FDCWD, "f", -1, -1, AT_SYMLINK_NOFOLLOW));
	/* Flags are ints. */
	CHECK_OK(syscall(SYS_fchownat, AT_FDCWD, "f", -1, -1, 1L << 40));
	CHECK_ERR(syscall(SYS_unlinkat, AT_FDCWD, "f", 0x8), EINVAL);
	CHECK_ERR(syscall(SYS_unlinkat, 999, "f", 0x8), EINVAL);
	CHECK_ERR(syscall(SYS_unlinkat, AT_FDCWD, "nothing", 1L << 40), ENOENT);
	CHECK_ERR(syscall(SYS_linkat, AT_FDCWD, "f", AT_FDCWD, "g", 0x1), EINVAL);
	CHECK_OK(syscall(SYS_linkat, AT_FDCWD, "f", AT_FDCWD, "g", 1L << 40));
	CHECK_OK(unlink("g"));
	CHECK_ERR(syscall(SYS_renameat2, AT_FDCWD, "f", AT_FDCWD, "g", 0x80), EINVAL);
	CHECK_OK(syscall(SYS_renameat2, AT_FDCWD, "f", AT_FDCWD, "g", 1L << 40));
	CHECK_OK(rename("g", "f"));
}

static void test_prlimit(void)
{
	struct rlimit rl, got;
	CHECK_OK(getrlimit(RLIMIT_NOFILE, &rl));
	/* EFAULT (the new limit) before ESRCH (the process) and EINVAL. */
	CHECK_ERR(syscall(SYS_prlimit64, 0x7ffffff0, RLIMIT_NOFILE, UT_BADPTR, NULL), EFAULT);
	CHECK_ERR(syscall(SYS_prlimit64, 0, 9999, UT_BADPTR, NULL), EFAULT);
	CHECK_ERR(syscall(SYS_prlimit64, 0x7ffffff0, 9999, NULL, &got), ESRCH);
	CHECK_ERR(syscall(SYS_prlimit64, 0, 9999, NULL, &got), EINVAL);
	CHECK_OK(syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, NULL));
	CHECK_ERR(syscall(SYS_getrlimit, RLIMIT_NOFILE, NULL), EFAULT);
	CHECK_ERR(syscall(SYS_getrlimit, 9999, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_setrlimit, RLIMIT_NOFILE, NULL), EFAULT);
	CHECK_ERR(syscall(SYS_setrlimit, 9999, NULL), EFAULT);
	/* Past the descriptor table (Linux: fs.nr_open): never, not even
	   for root. */
	struct rlimit inf = { rl.rlim_cur, RLIM_INFINITY };
	CHECK_ERR(setrlimit(RLIMIT_NOFILE, &inf), EPERM);
	CHECK_OK(getrlimit(RLIMIT_NOFILE, &got));
	CHECK_EQ(got.rlim_max, rl.rlim_max);
	/* A bad old pointer: EFAULT, but the new limit is in place. */
	struct rlimit lower = { rl.rlim_cur - 1, rl.rlim_max };
	CHECK_ERR(syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &lower, UT_BADPTR), EFAULT);
	CHECK_OK(getrlimit(RLIMIT_NOFILE, &got));
	CHECK_EQ(got.rlim_cur, rl.rlim_cur - 1);
	CHECK_OK(setrlimit(RLIMIT_NOFILE, &rl));
}

static volatile sig_atomic_t usr1;

static void on_usr1(int sig)
{
	(void)sig;
	usr1++;
}

/* poll(NULL, 0, -1) until a signal: a child keeps signalling until the
   parent says, through shared memory, that its poll returned. */
static void poll_interrupted(int flags)
{
	volatile int *done = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(done != MAP_FAILED);
	if (done == MAP_FAILED)
		return;
	struct sigaction sa = { 0 }, old;
	sa.sa_handler = on_usr1;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	CHECK_OK(sigaction(SIGUSR1, &sa, &old));
	*done = 0;
	usr1 = 0;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		while (!*done) {
			kill(parent, SIGUSR1);
			struct timespec ms = { 0, 1000 * 1000 };
			nanosleep(&ms, NULL);
		}
		_exit(0);
	}
	CHECK(pid > 0);
	CHECK_ERR(poll(NULL, 0, -1), EINTR);
	*done = 1;
	CHECK(usr1 > 0);
	CHECK_EQ(ut_wait(pid), 0);
	sigaction(SIGUSR1, &old, NULL);
	munmap((void *)done, 4096);
}

static void test_poll_signal(void)
{
	poll_interrupted(0);
	poll_interrupted(SA_RESTART); /* poll is never restarted */
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	test_lseek();
	test_rw_range();
	test_vec_order();
	test_truncate_order();
	test_readlink_size();
	test_flags();
	test_prlimit();
	test_poll_signal();
	return ut_done();
}
