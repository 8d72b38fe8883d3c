/*
 * t_unixmsg: what AF_UNIX sockets carry beside plain data, with Linux
 * semantics.
 *
 * Descriptors as control messages (SCM_RIGHTS: the received descriptors
 * share the sender's open files, MSG_CMSG_CLOEXEC, MSG_CTRUNC when there
 * is no room and nothing kept, EBADF failing the whole send, a stream read
 * stopping after the byte that carried them; sockets in flight inside
 * themselves or each other); credentials (SCM_CREDENTIALS and
 * SO_PASSCRED, explicit credentials and who may send them); socket
 * options (SO_TYPE, SO_DOMAIN, SO_PROTOCOL, SO_ACCEPTCONN, SO_PEERCRED,
 * buffer sizes, a short optlen); and scatter-gather I/O, read and write,
 * sendmmsg and recvmmsg.
 *
 * The rest of AF_UNIX (names, errors, blocking, shutdown, permissions) is
 * t_unix.c's; the helpers both programs use are in unix_util.h.
 */
#include "ut.h"
#include "unix_util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

/* ---- helpers (the shared ones are in unix_util.h) ---- */

/* The lowest descriptor number free right now. */
static int lowest_free_fd(void)
{
	int fd = fcntl(1, F_DUPFD, 0);
	if (fd >= 0)
		close(fd);
	return fd;
}

/* Sends one byte "F" with n descriptors in an SCM_RIGHTS message. */
static long send_fds(int s, const int *fds, int n)
{
	union {
		char buf[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	memset(&ctl, 0, sizeof ctl);
	struct iovec io = { .iov_base = "F", .iov_len = 1 };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1,
			    .msg_control = ctl.buf,
			    .msg_controllen = CMSG_SPACE(n * sizeof(int)) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	return sendmsg(s, &m, 0);
}

/*
 * Receives one byte with at most ctl_len bytes of control data; stores up
 * to max descriptors in fds and the message flags in *flags.  Returns the
 * number of descriptors received, or -1 when recvmsg does not return 1.
 */
static int recv_fds(int s, int *fds, int max, int flags, socklen_t ctl_len,
		    int *msg_flags)
{
	union {
		char buf[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	char byte;
	struct iovec io = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1,
			    .msg_control = ctl_len ? ctl.buf : NULL,
			    .msg_controllen = ctl_len };
	if (recvmsg(s, &m, flags) != 1)
		return -1;
	*msg_flags = m.msg_flags;
	int n = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		int k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (int i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
			if (n < max)
				fds[n] = fd;
			else
				close(fd);
			n++;
		}
	}
	return n;
}

/* ---- SCM_RIGHTS ---- */

static int same_file(int a, int b)
{
	struct stat sa, sb;
	if (fstat(a, &sa) != 0 || fstat(b, &sb) != 0)
		return 0;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static void test_scm_rights(void)
{
	int sv[2], p[2], got[8], flags = 0;
	char buf[8];
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_OK(pipe(p));
	int f = CHECK_OK(open("scm", O_RDWR | O_CREAT | O_TRUNC, 0644));

	/* A pipe's write end and a file; both work on the other side. */
	int two[2] = { p[1], f };
	CHECK_EQ(send_fds(sv[0], two, 2), 1);
	CHECK_EQ(recv_fds(sv[1], got, 8, 0, CMSG_SPACE(2 * sizeof(int)), &flags), 2);
	CHECK(got[0] != p[1] && got[0] != f && got[1] != p[1] && got[1] != f);
	CHECK(got[0] != got[1]);
	CHECK_EQ(cloexec(got[0]), 0);
	CHECK(same_file(got[0], p[1]));
	CHECK_EQ(write(got[0], "via", 3), 3);
	CHECK_EQ(read(p[0], buf, sizeof buf), 3);
	CHECK(memcmp(buf, "via", 3) == 0);
	/* The same open file: one shared offset. */
	CHECK_EQ(write(got[1], "file", 4), 4);
	CHECK_EQ(lseek(f, 0, SEEK_CUR), 4);
	CHECK_EQ(pread(f, buf, 4, 0), 4);
	CHECK(memcmp(buf, "file", 4) == 0);
	CHECK_EQ(fcntl(got[1], F_GETFL) & O_ACCMODE, O_RDWR);
	close(got[0]);
	close(got[1]);

	/* MSG_CMSG_CLOEXEC. */
	CHECK_EQ(send_fds(sv[0], &f, 1), 1);
	CHECK_EQ(recv_fds(sv[1], got, 8, MSG_CMSG_CLOEXEC, CMSG_SPACE(sizeof(int)),
			  &flags), 1);
	CHECK_EQ(cloexec(got[0]), 1);
	CHECK(!(flags & MSG_CTRUNC));
	close(got[0]);

	/* Several descriptors, one of them a socket that then works. */
	int inner[2];
	CHECK_OK(socketpair(AF_UNIX, SOCK_DGRAM, 0, inner));
	int four[4] = { p[0], p[1], f, inner[0] };
	CHECK_EQ(send_fds(sv[0], four, 4), 1);
	CHECK_EQ(recv_fds(sv[1], got, 8, 0, CMSG_SPACE(4 * sizeof(int)), &flags), 4);
	for (int i = 0; i < 4; i++)
		CHECK(same_file(got[i], four[i]));
	CHECK_EQ(send(got[3], "in", 2, 0), 2);
	CHECK_EQ(recv(inner[1], buf, sizeof buf, 0), 2);
	for (int i = 0; i < 4; i++)
		close(got[i]);
	close_pair(inner);

	/* No room for control data: MSG_CTRUNC, and no descriptor is kept. */
	int free_fd = lowest_free_fd();
	int three[3] = { p[0], p[1], f };
	CHECK_EQ(send_fds(sv[0], three, 3), 1);
	CHECK_EQ(recv_fds(sv[1], got, 8, 0, 0, &flags), 0);
	CHECK(flags & MSG_CTRUNC);
	CHECK_EQ(lowest_free_fd(), free_fd);
	/* Room for one: one arrives, the others are closed. */
	CHECK_EQ(send_fds(sv[0], three, 3), 1);
	CHECK_EQ(recv_fds(sv[1], got, 8, 0, CMSG_LEN(sizeof(int)), &flags), 1);
	CHECK(flags & MSG_CTRUNC);
	CHECK(same_file(got[0], p[0]));
	close(got[0]);
	CHECK_EQ(lowest_free_fd(), free_fd);

	/* A bad descriptor fails the whole send. */
	int bad = lowest_free_fd();
	CHECK_ERR(send_fds(sv[0], &bad, 1), EBADF);
	int minus = -1;
	CHECK_ERR(send_fds(sv[0], &minus, 1), EBADF);
	int mixed[2] = { f, bad };
	CHECK_ERR(send_fds(sv[0], mixed, 2), EBADF);
	CHECK_ERR(recv(sv[1], buf, sizeof buf, MSG_DONTWAIT), EAGAIN);

	/* A stream read stops after the byte that carried descriptors. */
	CHECK_EQ(write(sv[0], "ab", 2), 2);
	CHECK_EQ(send_fds(sv[0], &f, 1), 1);
	CHECK_EQ(write(sv[0], "cd", 2), 2);
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec io = { .iov_base = buf, .iov_len = sizeof buf };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1,
			    .msg_control = ctl.buf, .msg_controllen = sizeof ctl };
	CHECK_EQ(recvmsg(sv[1], &m, 0), 3);
	CHECK(memcmp(buf, "abF", 3) == 0);
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	CHECK(c && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)));
	if (c) {
		int fd;
		memcpy(&fd, CMSG_DATA(c), sizeof fd);
		CHECK(same_file(fd, f));
		close(fd);
	}
	m.msg_controllen = sizeof ctl;
	CHECK_EQ(recvmsg(sv[1], &m, 0), 2);
	CHECK_EQ(m.msg_controllen, 0);
	close_pair(sv);
	close(p[0]);
	close(p[1]);
	close(f);
}

static void test_scm_loops(void)
{
	/*
	 * Sockets in flight inside themselves or each other: after the
	 * closes nothing refers to them but the queues, and the calls
	 * simply succeed (the kernel must collect them, not hang).
	 */
	int free_fd = lowest_free_fd();
	for (int i = 0; i < 3; i++) {
		int sv[2];
		CHECK_OK(socketpair(AF_UNIX, all_types[i], 0, sv));
		CHECK_EQ(send_fds(sv[0], &sv[0], 1), 1);
		CHECK_EQ(send_fds(sv[1], &sv[1], 1), 1);
		CHECK_EQ(send_fds(sv[0], &sv[1], 1), 1);
		CHECK_OK(close(sv[0]));
		CHECK_OK(close(sv[1]));
	}
	/* Two pairs holding each other's ends. */
	int a[2], b[2];
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, a));
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, b));
	CHECK_EQ(send_fds(a[0], b, 2), 1);
	CHECK_EQ(send_fds(b[0], a, 2), 1);
	CHECK_OK(close(a[0]));
	CHECK_OK(close(a[1]));
	CHECK_OK(close(b[0]));
	CHECK_OK(close(b[1]));
	CHECK_EQ(lowest_free_fd(), free_fd);
	/* And sockets work as before. */
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, a));
	CHECK_EQ(write(a[0], "ok", 2), 2);
	char buf[4];
	CHECK_EQ(read(a[1], buf, sizeof buf), 2);
	close_pair(a);
}

/* ---- SCM_CREDENTIALS ---- */

static void test_scm_credentials(void)
{
	int sv[2];
	struct ucred cr;
	CHECK_OK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	CHECK_EQ(int_opt(sv[1], SO_PASSCRED), 0);
	/* Without SO_PASSCRED no credentials arrive. */
	CHECK_EQ(send(sv[0], "p", 1, 0), 1);
	CHECK_EQ(recv_creds(sv[1], &cr), 0);
	/* With it, every message carries the sender's. */
	CHECK_OK(set_int_opt(sv[1], SO_PASSCRED, 1));
	CHECK_EQ(int_opt(sv[1], SO_PASSCRED), 1);
	CHECK_EQ(send(sv[0], "p", 1, 0), 1);
	memset(&cr, 0, sizeof cr);
	CHECK_EQ(recv_creds(sv[1], &cr), 1);
	CHECK_EQ(cr.pid, getpid());
	CHECK_EQ(cr.uid, getuid());
	CHECK_EQ(cr.gid, getgid());
	/* Explicit credentials that are one's own. */
	CHECK_EQ(send_creds(sv[0], getpid(), getuid(), getgid()), 1);
	memset(&cr, 0, sizeof cr);
	CHECK_EQ(recv_creds(sv[1], &cr), 1);
	CHECK_EQ(cr.pid, getpid());
	CHECK_EQ(cr.uid, getuid());
	/* Root may name another process, but not one that does not exist. */
	if (ut_is_root())
		CHECK_ERR(send_creds(sv[0], 99999999, getuid(), getgid()), ESRCH);
	else
		CHECK_ERR(send_creds(sv[0], 99999999, getuid(), getgid()), EPERM);
	CHECK_ERR(recv(sv[1], &cr, 1, MSG_DONTWAIT), EAGAIN);
	close_pair(sv);

	/* A stream socket with SO_PASSCRED. */
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_OK(set_int_opt(sv[0], SO_PASSCRED, 1));
	CHECK_EQ(write(sv[1], "s", 1), 1);
	memset(&cr, 0, sizeof cr);
	CHECK_EQ(recv_creds(sv[0], &cr), 1);
	CHECK_EQ(cr.pid, getpid());
	close_pair(sv);
}

/* ---- socket options ---- */

static void test_sockopts(void)
{
	int sv[2];
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_EQ(int_opt(sv[0], SO_TYPE), SOCK_STREAM);
	CHECK_EQ(int_opt(sv[0], SO_ERROR), 0);
	CHECK_EQ(int_opt(sv[0], SO_DOMAIN), AF_UNIX);
	CHECK_EQ(int_opt(sv[0], SO_PROTOCOL), 0);
	CHECK_EQ(int_opt(sv[0], SO_ACCEPTCONN), 0);
	/* socketpair: the peer is this process. */
	struct ucred cr = peercred(sv[1]);
	CHECK_EQ(cr.pid, getpid());
	CHECK_EQ(cr.uid, geteuid());
	CHECK_EQ(cr.gid, getegid());
	/* Buffer sizes: Linux doubles what is set, so at least that. */
	CHECK_OK(set_int_opt(sv[0], SO_SNDBUF, 65536));
	CHECK(int_opt(sv[0], SO_SNDBUF) >= 65536);
	CHECK_OK(set_int_opt(sv[0], SO_RCVBUF, 32768));
	CHECK(int_opt(sv[0], SO_RCVBUF) >= 32768);
	/* A short optlen truncates; the length returned says how much. */
	int v = 0;
	socklen_t len = 2 * sizeof v;
	CHECK_OK(getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &v, &len));
	CHECK_EQ(len, sizeof v);
	close_pair(sv);

	CHECK_OK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	CHECK_EQ(int_opt(sv[0], SO_TYPE), SOCK_DGRAM);
	CHECK_EQ(int_opt(sv[0], SO_DOMAIN), AF_UNIX);
	close_pair(sv);
	int l = listening(SOCK_SEQPACKET, "opt", 1);
	CHECK(l >= 0);
	CHECK_EQ(int_opt(l, SO_TYPE), SOCK_SEQPACKET);
	CHECK_EQ(int_opt(l, SO_ACCEPTCONN), 1);
	close(l);
}

/* ---- scatter-gather, sendmmsg, recvmmsg, read and write ---- */

static void test_iovecs(void)
{
	int sv[2];
	char a[4], b[10];
	struct iovec out[3] = { { "ab", 2 }, { "cde", 3 }, { "f", 1 } };
	struct iovec in[2] = { { a, sizeof a }, { b, sizeof b } };
	struct msghdr sm = { .msg_iov = out, .msg_iovlen = 3 };
	struct msghdr rm = { .msg_iov = in, .msg_iovlen = 2 };
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_EQ(sendmsg(sv[0], &sm, 0), 6);
	CHECK_EQ(recvmsg(sv[1], &rm, 0), 6);
	CHECK(memcmp(a, "abcd", 4) == 0 && memcmp(b, "ef", 2) == 0);
	/* writev and readv. */
	CHECK_EQ(writev(sv[1], out, 3), 6);
	memset(a, 0, sizeof a);
	CHECK_EQ(readv(sv[0], in, 2), 6);
	CHECK(memcmp(a, "abcd", 4) == 0 && memcmp(b, "ef", 2) == 0);
	/* read and write as on a pipe. */
	CHECK_EQ(write(sv[0], "plain", 5), 5);
	CHECK_EQ(read(sv[1], b, sizeof b), 5);
	CHECK(memcmp(b, "plain", 5) == 0);
	/* A bad buffer. */
	CHECK_ERR(write(sv[0], UT_BADPTR, 4), EFAULT);
	close_pair(sv);

	/* A datagram gathers the iovecs into one message. */
	CHECK_OK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	CHECK_EQ(sendmsg(sv[0], &sm, 0), 6);
	struct iovec small[2] = { { a, 2 }, { b, 2 } };
	rm.msg_iov = small;
	rm.msg_flags = 0;
	CHECK_EQ(recvmsg(sv[1], &rm, 0), 4);
	CHECK(rm.msg_flags & MSG_TRUNC);
	CHECK(memcmp(a, "ab", 2) == 0 && memcmp(b, "cd", 2) == 0);
	/* write and read on a datagram pair keep boundaries too. */
	CHECK_EQ(write(sv[0], "one", 3), 3);
	CHECK_EQ(write(sv[0], "two", 3), 3);
	CHECK_EQ(read(sv[1], b, sizeof b), 3);
	CHECK_EQ(read(sv[1], b, sizeof b), 3);
	CHECK(memcmp(b, "two", 3) == 0);
	close_pair(sv);
}

static void test_mmsg(void)
{
	int sv[2];
	CHECK_OK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	static const char *texts[3] = { "a", "bb", "ccc" };
	struct iovec out[3], in[3];
	struct mmsghdr sm[3], rm[4];
	char bufs[4][8];
	memset(sm, 0, sizeof sm);
	memset(rm, 0, sizeof rm);
	for (int i = 0; i < 3; i++) {
		out[i].iov_base = (void *)texts[i];
		out[i].iov_len = i + 1;
		sm[i].msg_hdr.msg_iov = &out[i];
		sm[i].msg_hdr.msg_iovlen = 1;
	}
	for (int i = 0; i < 3; i++) {
		in[i].iov_base = bufs[i];
		in[i].iov_len = sizeof bufs[i];
		rm[i].msg_hdr.msg_iov = &in[i];
		rm[i].msg_hdr.msg_iovlen = 1;
	}
	CHECK_EQ(sendmmsg(sv[0], sm, 3, 0), 3);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(sm[i].msg_len, i + 1);
	CHECK_EQ(recvmmsg(sv[1], rm, 3, MSG_DONTWAIT, NULL), 3);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(rm[i].msg_len, i + 1);
		CHECK(memcmp(bufs[i], texts[i], i + 1) == 0);
	}
	/* Fewer messages than asked for: what is there. */
	CHECK_EQ(sendmmsg(sv[0], sm, 2, 0), 2);
	CHECK_EQ(recvmmsg(sv[1], rm, 3, MSG_DONTWAIT, NULL), 2);
	CHECK_EQ(rm[1].msg_len, 2);
	CHECK_ERR(recvmmsg(sv[1], rm, 3, MSG_DONTWAIT, NULL), EAGAIN);
	close_pair(sv);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	/* A broken test must not kill the program. */
	signal(SIGPIPE, SIG_IGN);

	test_scm_rights();
	test_scm_loops();
	test_scm_credentials();
	test_sockopts();
	test_iovecs();
	test_mmsg();
	return ut_done();
}
