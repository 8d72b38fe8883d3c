/*
 * t_splice: splice, tee and vmsplice, as Linux answers them.
 *
 * splice from a file into a pipe (at the file's offset, which moves, and
 * at a given one, which the file's does not), out of a pipe into a file
 * (at an offset and appended to the file's), pipe to pipe, the end of a
 * pipe with no writer (0), SPLICE_F_NONBLOCK on an empty and a full
 * pipe (EAGAIN), a file-to-pipe splice bounded by the pipe's room, and
 * the errors in Linux's order (length 0 first, bad flags, bad
 * descriptors, no pipe, an offset on a pipe's side, one pipe on both
 * sides, an O_APPEND output, an offset on a pipe-less stream); tee
 * copying without consuming; vmsplice in and out of a pipe, and its
 * EBADF for what is no pipe.
 */
#include "ut.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define F_NONBLOCK 2    /* SPLICE_F_NONBLOCK */

static long sp(int in, loff_t *oin, int out, loff_t *oout, size_t len, unsigned flags)
{
	return syscall(SYS_splice, in, oin, out, oout, len, flags);
}

static long tee_(int in, int out, size_t len, unsigned flags)
{
	return syscall(SYS_tee, in, out, len, flags);
}

static int make_file(const char *name, const char *text)
{
	int fd = CHECK_OK(open(name, O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_EQ(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	CHECK_OK(lseek(fd, 0, SEEK_SET));
	return fd;
}

static void read_back(int fd, const char *want)
{
	char buf[64] = { 0 };
	CHECK_EQ(read(fd, buf, sizeof buf - 1), (ssize_t)strlen(want));
	CHECK(strcmp(buf, want) == 0);
}

static void check_file_to_pipe(void)
{
	int f = make_file("src", "hello, splice");
	int p[2];
	CHECK_OK(pipe(p));
	CHECK_EQ(sp(f, NULL, p[1], NULL, 5, 0), 5);
	CHECK_EQ(lseek(f, 0, SEEK_CUR), 5);             /* the file's offset moved */
	read_back(p[0], "hello");
	loff_t off = 7;
	CHECK_EQ(sp(f, &off, p[1], NULL, 100, 0), 6);   /* stops at the end */
	CHECK_EQ(off, 13);
	CHECK_EQ(lseek(f, 0, SEEK_CUR), 5);             /* ... and this one did not */
	read_back(p[0], "splice");
	off = 13;
	CHECK_EQ(sp(f, &off, p[1], NULL, 10, 0), 0);    /* at the end: nothing */
	close(f);
	close(p[0]);
	close(p[1]);
}

static void check_pipe_to_file(void)
{
	int f = make_file("dst", "0123456789");
	int p[2];
	CHECK_OK(pipe(p));
	CHECK_EQ(write(p[1], "abcdef", 6), 6);
	loff_t off = 2;
	CHECK_EQ(sp(p[0], NULL, f, &off, 3, 0), 3);      /* takes only what it is asked */
	CHECK_EQ(off, 5);
	CHECK_EQ(lseek(f, 0, SEEK_CUR), 0);
	CHECK_OK(lseek(f, 10, SEEK_SET));
	CHECK_EQ(sp(p[0], NULL, f, NULL, 100, 0), 3);    /* what the pipe holds */
	CHECK_EQ(lseek(f, 0, SEEK_CUR), 13);
	CHECK_OK(lseek(f, 0, SEEK_SET));
	read_back(f, "01abc56789def");
	CHECK_ERR(sp(p[0], NULL, f, NULL, 10, F_NONBLOCK), EAGAIN);  /* empty */
	close(p[1]);
	CHECK_EQ(sp(p[0], NULL, f, NULL, 10, 0), 0);     /* empty, no writer: the end */
	close(p[0]);
	close(f);
}

static void check_pipe_to_pipe_and_tee(void)
{
	int a[2], b[2];
	CHECK_OK(pipe(a));
	CHECK_OK(pipe(b));
	CHECK_EQ(write(a[1], "teeing", 6), 6);
	CHECK_EQ(tee_(a[0], b[1], 3, 0), 3);
	read_back(b[0], "tee");
	CHECK_EQ(tee_(a[0], b[1], 100, 0), 6);          /* the input kept all six */
	read_back(b[0], "teeing");
	CHECK_EQ(sp(a[0], NULL, b[1], NULL, 4, 0), 4);  /* now they move */
	read_back(b[0], "teei");
	read_back(a[0], "ng");
	CHECK_ERR(tee_(a[0], b[1], 1, F_NONBLOCK), EAGAIN);
	CHECK_ERR(tee_(a[0], a[1], 1, 0), EINVAL);      /* one pipe */
	CHECK_ERR(sp(a[0], NULL, a[1], NULL, 1, 0), EINVAL);
	CHECK_EQ(tee_(a[0], b[1], 0, 0), 0);
	CHECK_ERR(tee_(a[0], b[1], 1, 0x100), EINVAL);
	int f = make_file("plain", "x");
	CHECK_ERR(tee_(f, b[1], 1, 0), EINVAL);         /* not a pipe */
	CHECK_ERR(tee_(a[1], b[1], 1, 0), EBADF);       /* not readable */
	close(f);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
}

/* A file-to-pipe splice moves no more than the pipe has room for. */
static void check_room(void)
{
	int p[2];
	CHECK_OK(pipe(p));
	int size = CHECK_OK(fcntl(p[1], F_GETPIPE_SZ));
	char *big = calloc(1, (size_t)size * 2);
	CHECK(big != NULL);
	int f = CHECK_OK(open("big", O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_EQ(write(f, big, (size_t)size * 2), (ssize_t)size * 2);
	loff_t off = 0;
	CHECK_EQ(sp(f, &off, p[1], NULL, (size_t)size * 2, 0), size);
	CHECK_ERR(sp(f, &off, p[1], NULL, 10, F_NONBLOCK), EAGAIN);     /* full */
	free(big);
	close(f);
	close(p[0]);
	close(p[1]);
}

static void check_errors(void)
{
	int f = make_file("err", "data");
	int p[2];
	CHECK_OK(pipe(p));
	loff_t off = 0;
	CHECK_EQ(sp(-1, NULL, -1, NULL, 0, 0), 0);              /* length 0 comes first */
	CHECK_ERR(sp(f, NULL, p[1], NULL, 1, 0x10), EINVAL);
	CHECK_ERR(sp(-1, NULL, p[1], NULL, 1, 0), EBADF);
	CHECK_ERR(sp(f, NULL, 99, NULL, 1, 0), EBADF);
	CHECK_ERR(sp(p[1], NULL, f, NULL, 1, 0), EBADF);        /* a write end read */
	CHECK_ERR(sp(f, NULL, f, NULL, 1, 0), EINVAL);          /* no pipe */
	CHECK_ERR(sp(p[0], &off, f, NULL, 1, 0), ESPIPE);
	CHECK_ERR(sp(f, NULL, p[1], &off, 1, 0), ESPIPE);
	int app = CHECK_OK(open("err", O_WRONLY | O_APPEND));
	CHECK_EQ(write(p[1], "z", 1), 1);
	CHECK_ERR(sp(p[0], NULL, app, NULL, 1, 0), EINVAL);
	close(app);
	int q[2];
	CHECK_OK(pipe(q));
	signal(SIGPIPE, SIG_IGN);
	close(q[0]);
	CHECK_ERR(sp(f, NULL, q[1], NULL, 1, 0), EPIPE);        /* no reader */
	signal(SIGPIPE, SIG_DFL);
	close(q[1]);
	close(f);
	close(p[0]);
	close(p[1]);
}

static void check_vmsplice(void)
{
	int p[2];
	CHECK_OK(pipe(p));
	char one[] = "vm", two[] = "splice";
	struct iovec iov[2] = { { one, 2 }, { two, 6 } };
	CHECK_EQ(syscall(SYS_vmsplice, p[1], iov, 2, 0), 8);
	char a[3] = { 0 }, b[6] = { 0 };
	struct iovec out[2] = { { a, 2 }, { b, 5 } };
	CHECK_EQ(syscall(SYS_vmsplice, p[0], out, 2, 0), 7);
	CHECK(strcmp(a, "vm") == 0);
	CHECK(memcmp(b, "splic", 5) == 0);
	read_back(p[0], "e");
	CHECK_EQ(syscall(SYS_vmsplice, p[1], iov, 0, 0), 0);
	CHECK_ERR(syscall(SYS_vmsplice, p[1], iov, 1, 0x100), EINVAL);
	int f = make_file("vm", "x");
	CHECK_ERR(syscall(SYS_vmsplice, f, iov, 1, 0), EBADF);
	CHECK_ERR(syscall(SYS_vmsplice, -1, iov, 1, 0), EBADF);
	close(f);
	close(p[0]);
	close(p[1]);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	check_file_to_pipe();
	check_pipe_to_file();
	check_pipe_to_pipe_and_tee();
	check_room();
	check_errors();
	check_vmsplice();
	return ut_done();
}
