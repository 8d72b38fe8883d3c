/*
 * t_fd: file descriptors.
 *
 * dup, dup2, dup3, pipe, pipe2, fcntl, ioctl (TCGETS on a non-terminal is
 * ENOTTY), prlimit64 with RLIMIT_NOFILE (EMFILE at the limit), with their
 * error cases; a pipe's buffer size (F_GETPIPE_SZ, F_SETPIPE_SZ: rounded
 * to pages, what it holds kept, EBUSY below that, EBADF on a file);
 * O_DSYNC and O_SYNC kept by the open file (F_GETFL shows them, F_SETFL
 * neither sets nor clears them) and, inside Tempest, a write through such
 * a descriptor on the disk before it returns (/proc/diskstats).
 * Where musl checks arguments itself the raw call is used.
 */
#include "ut.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <termios.h>
#include <unistd.h>

#define TMPFS_MAGIC 0x01021994 /* statfs of a tmpfs (Linux's value) */

static int cloexec(int fd)
{
	int f = fcntl(fd, F_GETFD);
	return f < 0 ? -1 : (f & FD_CLOEXEC) != 0;
}

static void test_dup(void)
{
	CHECK_OK(ut_write_file("f", "0123456789", 10, 0644));
	int fd = CHECK_OK(open("f", O_RDONLY | O_CLOEXEC));
	int d = CHECK_OK(dup(fd));
	CHECK(d != fd);
	CHECK_EQ(cloexec(fd), 1);
	CHECK_EQ(cloexec(d), 0); /* the flag belongs to the descriptor */
	/* Both share one open file, so one offset. */
	char c;
	CHECK_EQ(read(fd, &c, 1), 1);
	CHECK_EQ(lseek(d, 0, SEEK_CUR), 1);
	CHECK_EQ(read(d, &c, 1), 1);
	CHECK_EQ(c, '1');
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 2);
	/* The lowest free number is used. */
	CHECK_OK(close(fd));
	CHECK_EQ(dup(d), fd);
	CHECK_ERR(dup(-1), EBADF);
	CHECK_ERR(dup(9999), EBADF);

	int e = CHECK_OK(dup2(d, 50));
	CHECK_EQ(e, 50);
	CHECK_EQ(lseek(50, 0, SEEK_CUR), 2);
	/* dup2 onto an open descriptor closes it first. */
	int p[2];
	CHECK_OK(pipe(p));
	CHECK_EQ(dup2(d, p[0]), p[0]);
	CHECK_EQ(lseek(p[0], 0, SEEK_CUR), 2); /* now the file, not the pipe */
	close(p[1]);
	CHECK_EQ(dup2(d, d), d);   /* same descriptor: nothing happens */
	CHECK_ERR(dup2(12345, 51), EBADF);
	CHECK_ERR(dup2(12345, 12345), EBADF);
	CHECK_ERR(dup2(d, -1), EBADF);
	CHECK_ERR(dup2(d, 1 << 30), EBADF); /* beyond RLIMIT_NOFILE */
	CHECK_ERR(fcntl(51, F_GETFD), EBADF);

	CHECK_EQ(dup3(d, 60, O_CLOEXEC), 60);
	CHECK_EQ(cloexec(60), 1);
	CHECK_EQ(dup3(d, 60, 0), 60);
	CHECK_EQ(cloexec(60), 0);
	CHECK_ERR(syscall(SYS_dup3, d, d, 0), EINVAL);
	CHECK_ERR(syscall(SYS_dup3, d, 61, 0x4), EINVAL);
	CHECK_ERR(syscall(SYS_dup3, 7777, 61, 0), EBADF);
	CHECK_EQ(syscall(SYS_dup2, d, 62), 62);
	CHECK_EQ(syscall(SYS_dup, d) >= 0, 1);
	close(50);
	close(60);
	close(62);
	close(p[0]);
	close(d);
	close(fd);
}

static void test_pipe(void)
{
	int p[2] = { -1, -1 };
	CHECK_OK(pipe(p));
	CHECK(p[0] >= 0 && p[1] >= 0 && p[0] != p[1]);
	CHECK_EQ(write(p[1], "hello", 5), 5);
	char buf[4096 * 2];
	CHECK_EQ(read(p[0], buf, 3), 3);
	CHECK(memcmp(buf, "hel", 3) == 0);
	CHECK_EQ(read(p[0], buf, sizeof buf), 2); /* what is there, no waiting */
	CHECK_ERR(write(p[0], "x", 1), EBADF);
	CHECK_ERR(read(p[1], buf, 1), EBADF);
	CHECK_EQ(fcntl(p[0], F_GETFL) & O_ACCMODE, O_RDONLY);
	CHECK_EQ(fcntl(p[1], F_GETFL) & O_ACCMODE, O_WRONLY);
	int n = 0;
	CHECK_OK(write(p[1], "abcd", 4));
	CHECK_OK(ioctl(p[0], FIONREAD, &n));
	CHECK_EQ(n, 4);
	CHECK_EQ(read(p[0], buf, 4), 4);
	/* At least PIPE_BUF (4096) bytes fit without a reader. */
	memset(buf, 'p', 4096);
	CHECK_EQ(write(p[1], buf, 4096), 4096);
	CHECK_EQ(read(p[0], buf + 4096, 4096), 4096);
	CHECK(buf[4096] == 'p' && buf[8191] == 'p');
	/* With every writer closed, a read returns 0. */
	CHECK_EQ(write(p[1], "z", 1), 1);
	close(p[1]);
	CHECK_EQ(read(p[0], buf, 10), 1);
	CHECK_EQ(read(p[0], buf, 10), 0);
	close(p[0]);

	CHECK_ERR(pipe(UT_BADPTR), EFAULT);
	CHECK_ERR(pipe(UT_KERNPTR), EFAULT);

	CHECK_OK(pipe2(p, O_CLOEXEC | O_NONBLOCK));
	CHECK_EQ(cloexec(p[0]), 1);
	CHECK_EQ(cloexec(p[1]), 1);
	CHECK(fcntl(p[0], F_GETFL) & O_NONBLOCK);
	CHECK_ERR(read(p[0], buf, 1), EAGAIN); /* empty and non-blocking */
	/* Fill it: a non-blocking writer eventually gets EAGAIN. */
	long total = 0, w;
	while ((w = write(p[1], buf, sizeof buf)) > 0 && total < (64L << 20))
		total += w;
	CHECK(total >= 4096);
	CHECK_ERR(write(p[1], buf, sizeof buf), EAGAIN);
	close(p[0]);
	close(p[1]);
	CHECK_OK(pipe2(p, 0));
	CHECK_EQ(cloexec(p[0]), 0);
	CHECK(!(fcntl(p[1], F_GETFL) & O_NONBLOCK));
	close(p[0]);
	close(p[1]);
	CHECK_ERR(pipe2(p, 0x1), EINVAL);
	CHECK_ERR(pipe2(UT_BADPTR, 0), EFAULT);
}

static void test_fcntl(void)
{
	int fd = CHECK_OK(open("fc", O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_EQ(fcntl(fd, F_GETFD), 0);
	CHECK_OK(fcntl(fd, F_SETFD, FD_CLOEXEC));
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK_OK(fcntl(fd, F_SETFD, 0));
	CHECK_EQ(fcntl(fd, F_GETFD), 0);

	int fl = CHECK_OK(fcntl(fd, F_GETFL));
	CHECK_EQ(fl & O_ACCMODE, O_RDWR);
	CHECK(!(fl & O_APPEND));
	CHECK_OK(fcntl(fd, F_SETFL, fl | O_APPEND | O_NONBLOCK));
	fl = fcntl(fd, F_GETFL);
	CHECK((fl & O_APPEND) && (fl & O_NONBLOCK));
	/* The access mode cannot be changed by F_SETFL. */
	CHECK_OK(fcntl(fd, F_SETFL, O_RDONLY));
	fl = fcntl(fd, F_GETFL);
	CHECK_EQ(fl & O_ACCMODE, O_RDWR);
	CHECK(!(fl & O_APPEND));
	/* O_APPEND set by fcntl takes effect on writes. */
	CHECK_EQ(write(fd, "ab", 2), 2);
	CHECK_OK(fcntl(fd, F_SETFL, O_APPEND));
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(write(fd, "c", 1), 1);
	char buf[4];
	CHECK_EQ(pread(fd, buf, 4, 0), 3);
	CHECK(memcmp(buf, "abc", 3) == 0);

	int d = CHECK_OK(fcntl(fd, F_DUPFD, 40));
	CHECK(d >= 40);
	CHECK_EQ(cloexec(d), 0);
	int d2 = CHECK_OK(fcntl(fd, F_DUPFD, 40));
	CHECK(d2 > 40 && d2 != d);
	int d3 = CHECK_OK(fcntl(fd, F_DUPFD_CLOEXEC, 0));
	CHECK_EQ(cloexec(d3), 1);
	CHECK(d3 < 40);
	close(d);
	close(d2);
	close(d3);
	CHECK_ERR(fcntl(fd, F_DUPFD, -1), EINVAL);
	CHECK_ERR(fcntl(fd, F_DUPFD, 1 << 30), EINVAL);
	CHECK_ERR(fcntl(fd, 9999), EINVAL);
	CHECK_ERR(fcntl(-1, F_GETFD), EBADF);
	CHECK_ERR(fcntl(333, F_GETFL), EBADF);
	CHECK_ERR(fcntl(333, F_DUPFD, 0), EBADF);
	close(fd);
	CHECK_ERR(fcntl(fd, F_SETFD, 0), EBADF);
}

#ifndef F_SETPIPE_SZ
#define F_SETPIPE_SZ 1031
#define F_GETPIPE_SZ 1032
#endif

static int on_tempest(void)
{
	struct utsname u;
	return uname(&u) == 0 && strcmp(u.sysname, "Tempest") == 0;
}

/* Writes completed on every disk (/proc/diskstats), or -1. */
static long disk_writes(void)
{
	FILE *f = fopen("/proc/diskstats", "r");
	if (!f)
		return -1;
	long total = 0, w;
	char line[256];
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "%*u %*u %*s %*u %*u %*u %*u %ld", &w) == 1)
			total += w;
	fclose(f);
	return total;
}

static void test_osync(void)
{
	CHECK_OK(ut_write_file("sy", "0123456789", 10, 0644));
	int d = CHECK_OK(open("sy", O_WRONLY | O_DSYNC));
	CHECK_EQ(fcntl(d, F_GETFL) & O_SYNC, O_DSYNC);
	CHECK_OK(fcntl(d, F_SETFL, O_NONBLOCK)); /* F_SETFL does not clear it */
	CHECK_EQ(fcntl(d, F_GETFL) & O_SYNC, O_DSYNC);
	int s = CHECK_OK(open("sy", O_WRONLY | O_SYNC));
	CHECK_EQ(fcntl(s, F_GETFL) & O_SYNC, O_SYNC);
	int plain = CHECK_OK(open("sy", O_WRONLY));
	CHECK_OK(fcntl(plain, F_SETFL, O_SYNC)); /* nor set it */
	CHECK_EQ(fcntl(plain, F_GETFL) & O_SYNC, 0);
	/* In Tempest nothing else writes to the disk within the call (the
	   host's disks have other writers), when the scratch directory is on
	   a disk at all (not on tmpfs, /tmp's file system: make run's own
	   runs).  The file is clean first. */
	struct statfs fs;
	int mine = on_tempest() && statfs(".", &fs) == 0 && fs.f_type != TMPFS_MAGIC;
	if (on_tempest() && !mine)
		ut_note("skipped the disk-write counts: the scratch directory is on tmpfs");
	CHECK_OK(fsync(plain));
	long before = disk_writes();
	CHECK_EQ(pwrite(d, "abc", 3, 0), 3);
	if (mine)
		CHECK(before >= 0 && disk_writes() > before);
	before = disk_writes();
	CHECK_EQ(pwrite(s, "def", 3, 3), 3);
	if (mine)
		CHECK(disk_writes() > before);
	char buf[10];
	CHECK_EQ(ut_read_file("sy", buf, sizeof buf), 10);
	CHECK(memcmp(buf, "abcdef6789", 10) == 0);
	close(d);
	close(s);
	close(plain);
}

static void test_pipe_size(void)
{
	int p[2];
	CHECK_OK(pipe(p));
	long size = CHECK_OK(fcntl(p[1], F_GETPIPE_SZ));
	CHECK(size >= 4096);
	CHECK_EQ(fcntl(p[0], F_GETPIPE_SZ), size);              /* one buffer, both ends */
	CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, 5000), 8192);        /* rounded to pages, a power of two */
	CHECK_EQ(fcntl(p[1], F_GETPIPE_SZ), 8192);
	CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, 1), 4096);           /* at least a page */
	char buf[4096];
	memset(buf, 'x', sizeof buf);
	CHECK_OK(fcntl(p[1], F_SETFL, O_NONBLOCK));
	CHECK_EQ(write(p[1], buf, sizeof buf), (long)sizeof buf);
	CHECK_ERR(write(p[1], buf, 1), EAGAIN);                 /* full at its size */
	CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, 65536), 65536);      /* grown, the bytes kept */
	CHECK_EQ(write(p[1], "y", 1), 1);
	CHECK_EQ(read(p[0], buf, sizeof buf), (long)sizeof buf);
	CHECK_EQ(buf[4095], 'x');
	CHECK_EQ(read(p[0], buf, 1), 1);
	CHECK_EQ(buf[0], 'y');
	CHECK_EQ(write(p[1], buf, sizeof buf), (long)sizeof buf);
	CHECK_EQ(write(p[1], buf, sizeof buf), (long)sizeof buf);
	CHECK_ERR(fcntl(p[1], F_SETPIPE_SZ, 4096), EBUSY);      /* holds more than that */
	int f = CHECK_OK(open(".", O_RDONLY));
	CHECK_ERR(fcntl(f, F_GETPIPE_SZ), EBADF);
	close(f);
	close(p[0]);
	close(p[1]);
}

static void test_ioctl(void)
{
	int nb[2], on = 1, off = 0;
	char c;
	CHECK_OK(pipe(nb));
	CHECK_OK(ioctl(nb[0], FIONBIO, &on));               /* O_NONBLOCK, as CPython sets it */
	CHECK(fcntl(nb[0], F_GETFL) & O_NONBLOCK);
	CHECK_ERR(read(nb[0], &c, 1), EAGAIN);
	CHECK_OK(ioctl(nb[0], FIONBIO, &off));
	CHECK(!(fcntl(nb[0], F_GETFL) & O_NONBLOCK));
	CHECK_ERR(ioctl(nb[0], FIONBIO, (void *)8), EFAULT);
	close(nb[0]);
	close(nb[1]);
	int fd = CHECK_OK(open("io", O_RDWR | O_CREAT, 0644));
	struct termios t;
	CHECK_ERR(ioctl(fd, TCGETS, &t), ENOTTY);
	CHECK_ERR(tcgetattr(fd, &t), ENOTTY);
	CHECK_EQ(isatty(fd), 0);
	struct winsize ws;
	CHECK_ERR(ioctl(fd, TIOCGWINSZ, &ws), ENOTTY);
	int p[2];
	CHECK_OK(pipe(p));
	CHECK_ERR(ioctl(p[0], TCGETS, &t), ENOTTY);
	CHECK_ERR(ioctl(-1, TCGETS, &t), EBADF);
	CHECK_ERR(ioctl(4444, FIONREAD, &t), EBADF);
	CHECK_ERR(ioctl(p[0], FIONREAD, UT_BADPTR), EFAULT);
	/* FIOCLEX and FIONCLEX work on any descriptor. */
	CHECK_OK(ioctl(fd, FIOCLEX));
	CHECK_EQ(cloexec(fd), 1);
	CHECK_OK(ioctl(fd, FIONCLEX));
	CHECK_EQ(cloexec(fd), 0);
	close(p[0]);
	close(p[1]);
	close(fd);
}

static void limited(void *arg)
{
	struct rlimit rl;
	CHECK_OK(getrlimit(RLIMIT_NOFILE, &rl));
	struct rlimit small = { 12, rl.rlim_max };
	CHECK_OK(setrlimit(RLIMIT_NOFILE, &small));
	struct rlimit now;
	CHECK_OK(syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &now));
	CHECK_EQ(now.rlim_cur, 12);
	CHECK_EQ(now.rlim_max, rl.rlim_max);
	int opened = 0, fd, last = -1;
	while ((fd = open(".", O_RDONLY)) >= 0 && opened < 100) {
		opened++;
		last = fd;
	}
	CHECK_EQ(errno, EMFILE);
	CHECK_EQ(last, 11); /* every number below the limit was used */
	CHECK(opened >= 1 && opened <= 12);
	int p[2];
	CHECK_ERR(dup(0), EMFILE);
	CHECK_ERR(pipe(p), EMFILE);
	CHECK_ERR(fcntl(0, F_DUPFD, 0), EMFILE);
	CHECK_ERR(fcntl(0, F_DUPFD, 12), EINVAL);
	CHECK_ERR(dup2(0, 12), EBADF);
	CHECK_EQ(dup2(0, 11), 11); /* below the limit is fine */
	close(11);
	CHECK_ERR(pipe(p), EMFILE); /* one free number is not enough */
	close(10);
	CHECK_OK(pipe(p));
	CHECK(p[0] == 10 && p[1] == 11);
}

static void test_nofile(void)
{
	struct rlimit rl, got;
	CHECK_OK(getrlimit(RLIMIT_NOFILE, &rl));
	CHECK(rl.rlim_cur > 12 && rl.rlim_cur <= rl.rlim_max);
	CHECK_OK(syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &got));
	CHECK_EQ(got.rlim_cur, rl.rlim_cur);
	CHECK_OK(syscall(SYS_prlimit64, getpid(), RLIMIT_NOFILE, NULL, &got));
	CHECK_EQ(got.rlim_max, rl.rlim_max);
	/* Soft above hard is invalid; so is an unknown resource. */
	struct rlimit bad = { rl.rlim_max == RLIM_INFINITY ? RLIM_INFINITY : rl.rlim_max + 1,
			      rl.rlim_max };
	if (rl.rlim_max != RLIM_INFINITY)
		CHECK_ERR(setrlimit(RLIMIT_NOFILE, &bad), EINVAL);
	struct rlimit inverted = { 100, 50 };
	CHECK_ERR(syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &inverted, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_prlimit64, 0, 999, NULL, &got), EINVAL);
	CHECK_ERR(syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, UT_BADPTR, NULL), EFAULT);
	CHECK_ERR(syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, UT_KERNPTR), EFAULT);
	CHECK_ERR(syscall(SYS_prlimit64, 0x7ffffff0, RLIMIT_NOFILE, NULL, &got), ESRCH);
	ut_child("nofile", limited, NULL, 0);
	/* The child's limit did not touch ours. */
	CHECK_OK(getrlimit(RLIMIT_NOFILE, &got));
	CHECK_EQ(got.rlim_cur, rl.rlim_cur);
}

static void lower_hard(void *arg)
{
	struct rlimit rl;
	CHECK_OK(getrlimit(RLIMIT_NOFILE, &rl));
	struct rlimit lower = { 20, 30 };
	CHECK_OK(setrlimit(RLIMIT_NOFILE, &lower));
	struct rlimit raise = { 20, 40 };
	CHECK_ERR(setrlimit(RLIMIT_NOFILE, &raise), EPERM);
	CHECK_OK(getrlimit(RLIMIT_NOFILE, &rl));
	CHECK_EQ(rl.rlim_max, 30);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	test_dup();
	test_pipe();
	test_fcntl();
	test_osync();
	test_pipe_size();
	test_ioctl();
	test_nofile();
	ut_child("lower hard limit", lower_hard, NULL, 1); /* any user */
	return ut_done();
}
