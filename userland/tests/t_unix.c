/*
 * t_unix: AF_UNIX sockets, with Linux semantics.
 *
 * socketpair of every type (data both ways, a stream merging writes while
 * datagram and sequenced-packet sockets keep message boundaries, truncation
 * and MSG_TRUNC, SOCK_CLOEXEC and SOCK_NONBLOCK); the error cases of socket,
 * socketpair, bind, connect, listen, accept, send, shutdown and the socket
 * options; names in the file system (the socket file and the umask,
 * getsockname, getpeername, unlink, stale files), abstract names and
 * autobind; named datagram sockets (sendto, recvfrom, connect, EPERM for a
 * socket connected elsewhere, the queue limit, EMSGSIZE); the listen
 * backlog; non-blocking calls, MSG_PEEK, MSG_WAITALL and poll; shutdown;
 * EPIPE and SIGPIPE, ECONNRESET, ECONNREFUSED from a vanished datagram
 * peer; /proc/self/fd links; calls that block until another process acts;
 * SOCK_SEQPACKET connections; and, when run as root, the permission checks
 * made for an unprivileged user.
 *
 * What travels beside the data (SCM_RIGHTS, SCM_CREDENTIALS), the socket
 * options and scatter-gather I/O are t_unixmsg.c's; the helpers both
 * programs use are in unix_util.h.
 */
#include "ut.h"
#include "unix_util.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAMILY_LEN ((socklen_t)sizeof(sa_family_t))
#define HANG_GUARD_MS 10000 /* poll timeout that only stops a hang */

/* ---- helpers (the shared ones are in unix_util.h) ---- */

/* Fills a with an abstract name unique to this run: a 0 byte, then text. */
static socklen_t abstract_addr(struct sockaddr_un *a, const char *tag)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "t_unix.%d.%s",
			 (int)getpid(), tag);
	return SUN_OFF + 1 + n;
}

/* connect() of sock to path; the result of connect. */
static int connect_path(int sock, const char *path)
{
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, path);
	return connect(sock, (struct sockaddr *)&a, len);
}

/* A new socket of the type connected to path, or -1. */
static int connected(int type, const char *path)
{
	int s = socket(AF_UNIX, type, 0);
	if (s >= 0 && connect_path(s, path) != 0) {
		close(s);
		return -1;
	}
	return s;
}

static int nonblocking(int fd)
{
	int f = fcntl(fd, F_GETFL);
	return f < 0 ? -1 : (f & O_NONBLOCK) != 0;
}

/* The events poll reports for fd right now (no waiting). */
static int revents(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };
	return poll(&p, 1, 0) < 0 ? -1 : p.revents;
}

/*
 * A child running concurrently with the parent (ut_child waits for its
 * child before returning; these tests need both sides at once).  The child
 * reports its check counts through a pipe, collected by join().
 */
struct kid {
	pid_t pid;
	int counts_fd;
};

static struct kid spawn(void (*fn)(void *), void *arg)
{
	struct kid k = { -1, -1 };
	int p[2];
	if (pipe(p) != 0) {
		CHECK(!"pipe for a child");
		return k;
	}
	k.pid = fork();
	if (k.pid < 0) {
		CHECK(!"fork");
		close(p[0]);
		close(p[1]);
		return k;
	}
	if (k.pid == 0) {
		close(p[0]);
		ut_passed = ut_failed = 0;
		fn(arg);
		int counts[2] = { ut_passed, ut_failed };
		if (write(p[1], counts, sizeof counts) != sizeof counts)
			_exit(2);
		_exit(0);
	}
	close(p[1]);
	k.counts_fd = p[0];
	return k;
}

static void join(struct kid k)
{
	if (k.pid < 0)
		return;
	int counts[2];
	ssize_t got = read(k.counts_fd, counts, sizeof counts);
	close(k.counts_fd);
	int status = ut_wait(k.pid);
	if (got == sizeof counts) {
		ut_passed += counts[0];
		ut_failed += counts[1];
	}
	ut_check(got == sizeof counts && status == 0, __FILE__, __LINE__,
		 "child %d finished and reported (status 0x%x)", (int)k.pid,
		 status);
}

/* ---- socketpair ---- */

static void test_pair_types(void)
{
	for (unsigned i = 0; i < 3; i++) {
		int type = all_types[i], sv[2] = { -1, -1 };
		char buf[100];
		CHECK_OK(socketpair(AF_UNIX, type, 0, sv));
		CHECK(sv[0] >= 0 && sv[1] >= 0 && sv[0] != sv[1]);
		CHECK_EQ(send(sv[0], "abc", 3, 0), 3);
		CHECK_EQ(send(sv[0], "defgh", 5, 0), 5);
		if (type == SOCK_STREAM) {
			/* A stream merges the two writes. */
			CHECK_EQ(recv(sv[1], buf, sizeof buf, 0), 8);
			CHECK(memcmp(buf, "abcdefgh", 8) == 0);
		} else {
			/* The others return one message per call. */
			CHECK_EQ(recv(sv[1], buf, sizeof buf, 0), 3);
			CHECK(memcmp(buf, "abc", 3) == 0);
			CHECK_EQ(recv(sv[1], buf, sizeof buf, 0), 5);
			CHECK(memcmp(buf, "defgh", 5) == 0);
		}
		/* And the other way. */
		CHECK_EQ(send(sv[1], "xyz", 3, 0), 3);
		CHECK_EQ(recv(sv[0], buf, sizeof buf, 0), 3);
		CHECK(memcmp(buf, "xyz", 3) == 0);
		CHECK_EQ(int_opt(sv[0], SO_TYPE), type);
		CHECK_EQ(int_opt(sv[1], SO_TYPE), type);
		CHECK_ERR(recv(sv[0], buf, sizeof buf, MSG_DONTWAIT), EAGAIN);
		close_pair(sv);
	}
}

static void test_truncation(void)
{
	char buf[16];
	for (unsigned i = 1; i < 3; i++) {
		int sv[2];
		CHECK_OK(socketpair(AF_UNIX, all_types[i], 0, sv));
		/* recvmsg reports a cut message with MSG_TRUNC ... */
		CHECK_EQ(send(sv[0], "abcdefgh", 8, 0), 8);
		struct iovec io = { .iov_base = buf, .iov_len = 3 };
		struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1 };
		CHECK_EQ(recvmsg(sv[1], &m, 0), 3);
		CHECK(m.msg_flags & MSG_TRUNC);
		CHECK(memcmp(buf, "abc", 3) == 0);
		/* ... and the rest of it is gone. */
		CHECK_ERR(recv(sv[1], buf, sizeof buf, MSG_DONTWAIT), EAGAIN);
		/* recv with MSG_TRUNC returns the real length. */
		CHECK_EQ(send(sv[0], "abcdefgh", 8, 0), 8);
		CHECK_EQ(recv(sv[1], buf, 2, MSG_TRUNC), 8);
		CHECK(memcmp(buf, "ab", 2) == 0);
		CHECK_EQ(send(sv[0], "abcdefgh", 8, 0), 8);
		CHECK_EQ(recv(sv[1], buf, 2, 0), 2);
		/* A whole message is not truncated. */
		CHECK_EQ(send(sv[0], "abcd", 4, 0), 4);
		m.msg_flags = 0;
		io.iov_len = sizeof buf;
		CHECK_EQ(recvmsg(sv[1], &m, 0), 4);
		CHECK(!(m.msg_flags & MSG_TRUNC));
		close_pair(sv);
	}
	/* A stream keeps what a short read leaves, without MSG_TRUNC. */
	int sv[2];
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_EQ(send(sv[0], "abcdefgh", 8, 0), 8);
	struct iovec io = { .iov_base = buf, .iov_len = 3 };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1 };
	CHECK_EQ(recvmsg(sv[1], &m, 0), 3);
	CHECK(!(m.msg_flags & MSG_TRUNC));
	CHECK_EQ(recv(sv[1], buf, sizeof buf, 0), 5);
	CHECK(memcmp(buf, "defgh", 5) == 0);
	close_pair(sv);
}

static void test_type_flags(void)
{
	int s = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_EQ(cloexec(s), 0);
	CHECK_EQ(nonblocking(s), 0);
	CHECK_EQ(fcntl(s, F_GETFL) & O_ACCMODE, O_RDWR);
	close(s);
	s = CHECK_OK(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
	CHECK_EQ(cloexec(s), 1);
	CHECK_EQ(nonblocking(s), 0);
	close(s);
	s = CHECK_OK(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0));
	CHECK_EQ(cloexec(s), 0);
	CHECK_EQ(nonblocking(s), 1);
	CHECK_EQ(int_opt(s, SO_TYPE), SOCK_SEQPACKET); /* flags not in type */
	close(s);

	int sv[2];
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    0, sv));
	CHECK_EQ(cloexec(sv[0]), 1);
	CHECK_EQ(cloexec(sv[1]), 1);
	CHECK_EQ(nonblocking(sv[0]), 1);
	CHECK_EQ(nonblocking(sv[1]), 1);
	char c;
	CHECK_ERR(read(sv[0], &c, 1), EAGAIN);
	/* O_NONBLOCK can be cleared and set again with fcntl. */
	CHECK_OK(fcntl(sv[0], F_SETFL, 0));
	CHECK_EQ(nonblocking(sv[0]), 0);
	CHECK_OK(fcntl(sv[0], F_SETFL, O_NONBLOCK));
	CHECK_ERR(recv(sv[0], &c, 1, 0), EAGAIN);
	close_pair(sv);
	CHECK_OK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	CHECK_EQ(cloexec(sv[0]), 0);
	CHECK_EQ(nonblocking(sv[1]), 0);
	close_pair(sv);

	/* Unknown flag bits in the type are refused. */
	CHECK_ERR(syscall(SYS_socket, AF_UNIX, SOCK_STREAM | 0x100, 0), EINVAL);
}

/* ---- bad arguments ---- */

static void test_bad_socket_args(void)
{
	int sv[2];
	CHECK_ERR(socket(AF_UNIX, 99, 0), EINVAL);
	CHECK_ERR(socket(AF_UNIX, SOCK_STREAM, 5), EPROTONOSUPPORT);
	CHECK_ERR(socket(12345, SOCK_STREAM, 0), EAFNOSUPPORT);
	CHECK_ERR(socket(AF_UNIX, SOCK_RDM, 0), ESOCKTNOSUPPORT);
	CHECK_ERR(socketpair(AF_UNIX, SOCK_STREAM, 0, UT_BADPTR), EFAULT);
	CHECK_ERR(socketpair(AF_UNIX, SOCK_STREAM, 0, UT_KERNPTR), EFAULT);
	CHECK_ERR(socketpair(AF_UNIX, SOCK_DGRAM, 5, sv), EPROTONOSUPPORT);
	CHECK_ERR(socketpair(AF_UNIX, 99, 0, sv), EINVAL);

	/* Protocol PF_UNIX is the same as 0; SOCK_RAW means SOCK_DGRAM. */
	int s = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, PF_UNIX));
	CHECK_EQ(int_opt(s, SO_PROTOCOL), 0);
	close(s);
	s = CHECK_OK(socket(AF_UNIX, SOCK_RAW, 0));
	CHECK_EQ(int_opt(s, SO_TYPE), SOCK_DGRAM);
	close(s);
}

static void test_bad_bind_connect(void)
{
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, "bb");
	int s = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_ERR(bind(s, (struct sockaddr *)&a, 1), EINVAL);
	CHECK_ERR(bind(s, (struct sockaddr *)&a, 0), EINVAL);
	CHECK_ERR(bind(s, (struct sockaddr *)&a, sizeof a + 1), EINVAL);
	CHECK_ERR(bind(s, (struct sockaddr *)&a, 300), EINVAL);
	CHECK_ERR(bind(s, UT_BADPTR, len), EFAULT);
	a.sun_family = AF_INET;
	CHECK_ERR(bind(s, (struct sockaddr *)&a, len), EINVAL);
	CHECK_ERR(connect(s, (struct sockaddr *)&a, len), EINVAL);
	/* AF_UNSPEC does not disconnect (or mean anything for) a stream. */
	a.sun_family = AF_UNSPEC;
	CHECK_ERR(connect(s, (struct sockaddr *)&a, len), EINVAL);
	a.sun_family = AF_UNIX;
	CHECK_ERR(connect(s, (struct sockaddr *)&a, 1), EINVAL);
	CHECK_ERR(connect(s, (struct sockaddr *)&a, FAMILY_LEN), EINVAL);
	CHECK_ERR(connect(s, UT_BADPTR, len), EFAULT);
	CHECK_ERR(access("bb", F_OK), ENOENT); /* nothing was created */

	/* A path in a missing directory. */
	CHECK_ERR(bind(s, (struct sockaddr *)&a, path_addr(&a, "nodir/s")), ENOENT);
	CHECK_ERR(connect(s, (struct sockaddr *)&a, path_addr(&a, "nodir/s")), ENOENT);
	close(s);
}

static void test_bad_state(void)
{
	char c = 'x';
	struct sockaddr_un a;
	socklen_t len;
	int s = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	/* An unconnected stream socket. */
	CHECK_ERR(send(s, "x", 1, 0), ENOTCONN);
	CHECK_ERR(write(s, "x", 1), ENOTCONN);
	len = path_addr(&a, "nobody");
	CHECK_ERR(sendto(s, "x", 1, 0, (struct sockaddr *)&a, len), EOPNOTSUPP);
	CHECK_ERR(recv(s, &c, 1, MSG_DONTWAIT), EINVAL);
	len = sizeof a;
	CHECK_ERR(getpeername(s, (struct sockaddr *)&a, &len), ENOTCONN);
	CHECK_ERR(accept(s, NULL, NULL), EINVAL);   /* not listening */
	CHECK_ERR(listen(s, 1), EINVAL);            /* no name */
	close(s);

	/* Datagram sockets neither listen nor accept. */
	s = CHECK_OK(socket(AF_UNIX, SOCK_DGRAM, 0));
	CHECK_ERR(send(s, "x", 1, 0), ENOTCONN);
	CHECK_ERR(listen(s, 1), EOPNOTSUPP);
	CHECK_ERR(accept(s, NULL, NULL), EOPNOTSUPP);
	close(s);

	/* A connected stream socket cannot listen, accept, or connect. */
	int sv[2];
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_ERR(listen(sv[0], 1), EINVAL);
	CHECK_ERR(accept(sv[0], NULL, NULL), EINVAL);
	len = path_addr(&a, "nobody");
	CHECK_ERR(sendto(sv[0], "x", 1, 0, (struct sockaddr *)&a, len), EISCONN);
	close_pair(sv);
}

static void test_not_sockets(void)
{
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, "x");
	char c;
	int v;
	socklen_t vl = sizeof v;
	CHECK_OK(ut_write_file("plain", "data", 4, 0644));
	int f = CHECK_OK(open("plain", O_RDWR));
	CHECK_ERR(bind(f, (struct sockaddr *)&a, len), ENOTSOCK);
	CHECK_ERR(connect(f, (struct sockaddr *)&a, len), ENOTSOCK);
	CHECK_ERR(listen(f, 1), ENOTSOCK);
	CHECK_ERR(accept(f, NULL, NULL), ENOTSOCK);
	CHECK_ERR(send(f, "x", 1, 0), ENOTSOCK);
	CHECK_ERR(recv(f, &c, 1, 0), ENOTSOCK);
	CHECK_ERR(shutdown(f, SHUT_RDWR), ENOTSOCK);
	CHECK_ERR(getsockopt(f, SOL_SOCKET, SO_TYPE, &v, &vl), ENOTSOCK);
	CHECK_ERR(setsockopt(f, SOL_SOCKET, SO_SNDBUF, &v, sizeof v), ENOTSOCK);
	len = sizeof a;
	CHECK_ERR(getsockname(f, (struct sockaddr *)&a, &len), ENOTSOCK);
	len = sizeof a;
	CHECK_ERR(getpeername(f, (struct sockaddr *)&a, &len), ENOTSOCK);
	struct msghdr m = { 0 };
	CHECK_ERR(sendmsg(f, &m, 0), ENOTSOCK);
	CHECK_ERR(recvmsg(f, &m, 0), ENOTSOCK);
	int p[2];
	CHECK_OK(pipe(p));
	CHECK_ERR(send(p[1], "x", 1, 0), ENOTSOCK);
	CHECK_ERR(listen(p[0], 1), ENOTSOCK);
	close(p[0]);
	close(p[1]);
	close(f);

	/* Descriptors that are not open at all. */
	len = path_addr(&a, "x");
	CHECK_ERR(bind(-1, (struct sockaddr *)&a, len), EBADF);
	CHECK_ERR(connect(f, (struct sockaddr *)&a, len), EBADF);
	CHECK_ERR(listen(9999, 1), EBADF);
	CHECK_ERR(accept(-1, NULL, NULL), EBADF);
	CHECK_ERR(send(f, "x", 1, 0), EBADF);
	CHECK_ERR(recv(9999, &c, 1, 0), EBADF);
	CHECK_ERR(shutdown(f, SHUT_RD), EBADF);
	CHECK_ERR(getsockopt(-1, SOL_SOCKET, SO_TYPE, &v, &vl), EBADF);
	len = sizeof a;
	CHECK_ERR(getsockname(f, (struct sockaddr *)&a, &len), EBADF);
}

static void test_bad_options(void)
{
	int sv[2], v = 4096;
	socklen_t vl = sizeof v;
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_ERR(getsockopt(sv[0], SOL_SOCKET, 9999, &v, &vl), ENOPROTOOPT);
	CHECK_ERR(setsockopt(sv[0], SOL_SOCKET, 9999, &v, sizeof v), ENOPROTOOPT);
	/* Unix sockets have no options at other levels. */
	CHECK_ERR(getsockopt(sv[0], IPPROTO_TCP, 1, &v, &vl), EOPNOTSUPP);
	CHECK_ERR(setsockopt(sv[0], IPPROTO_TCP, 1, &v, sizeof v), EOPNOTSUPP);
	CHECK_ERR(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &v, 2), EINVAL);
	CHECK_ERR(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, UT_BADPTR, sizeof v),
		  EFAULT);
	CHECK_ERR(getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &v, UT_BADPTR), EFAULT);
	vl = sizeof v;
	CHECK_ERR(getsockopt(sv[0], SOL_SOCKET, SO_TYPE, UT_BADPTR, &vl), EFAULT);

	/* shutdown: how must be SHUT_RD, SHUT_WR or SHUT_RDWR. */
	CHECK_ERR(shutdown(sv[0], 3), EINVAL);
	CHECK_ERR(shutdown(sv[0], -1), EINVAL);
	char c;
	CHECK_ERR(recv(sv[1], &c, 1, MSG_DONTWAIT), EAGAIN); /* no EOF */
	close_pair(sv);
	/* Linux accepts shutdown of an unconnected unix socket. */
	int s = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_EQ(shutdown(s, SHUT_RDWR), 0);
	close(s);
}

/* ---- names in the file system ---- */

static void check_name(int s, int peer, const char *path)
{
	struct sockaddr_un a;
	memset(&a, 'Z', sizeof a);
	socklen_t len = sizeof a;
	if (peer)
		CHECK_OK(getpeername(s, (struct sockaddr *)&a, &len));
	else
		CHECK_OK(getsockname(s, (struct sockaddr *)&a, &len));
	CHECK_EQ(len, SUN_OFF + strlen(path) + 1);
	CHECK_EQ(a.sun_family, AF_UNIX);
	CHECK(strcmp(a.sun_path, path) == 0);
}

static void check_unnamed(int s, int peer)
{
	struct sockaddr_un a;
	socklen_t len = sizeof a;
	if (peer)
		CHECK_OK(getpeername(s, (struct sockaddr *)&a, &len));
	else
		CHECK_OK(getsockname(s, (struct sockaddr *)&a, &len));
	CHECK_EQ(len, FAMILY_LEN);
	CHECK_EQ(a.sun_family, AF_UNIX);
}

static void test_bind_file(void)
{
	mode_t old = umask(027);
	int s = bound(SOCK_STREAM, "bf");
	umask(old);
	CHECK(s >= 0);
	struct stat st;
	CHECK_OK(stat("bf", &st));
	CHECK(S_ISSOCK(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0750);
	CHECK_EQ(st.st_uid, geteuid());
	CHECK_OK(lstat("bf", &st));
	CHECK(S_ISSOCK(st.st_mode));
	umask(0);
	int d = bound(SOCK_DGRAM, "bf0");
	umask(old);
	CHECK_OK(stat("bf0", &st));
	CHECK_EQ(st.st_mode & 07777, 0777);
	check_name(s, 0, "bf");

	/* A short buffer gets part of the name and the whole length. */
	struct sockaddr_un a;
	memset(&a, 'Z', sizeof a);
	socklen_t len = SUN_OFF + 2;
	CHECK_OK(getsockname(s, (struct sockaddr *)&a, &len));
	CHECK_EQ(len, SUN_OFF + 3);
	CHECK(a.sun_path[0] == 'b' && a.sun_path[1] == 'f' && a.sun_path[2] == 'Z');
	len = sizeof a;
	CHECK_ERR(getsockname(s, UT_BADPTR, &len), EFAULT);
	CHECK_ERR(getsockname(s, (struct sockaddr *)&a, UT_BADPTR), EFAULT);

	/* The length need not count the terminating 0. */
	path_addr(&a, "nonul");
	int t = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_OK(bind(t, (struct sockaddr *)&a, SUN_OFF + 5));
	check_name(t, 0, "nonul");
	CHECK_OK(access("nonul", F_OK));
	/* A bound socket cannot be bound again, to a new name or the same. */
	CHECK_ERR(bind(t, (struct sockaddr *)&a, path_addr(&a, "other")), EINVAL);
	CHECK_ERR(access("other", F_OK), ENOENT);
	CHECK_ERR(bind(t, (struct sockaddr *)&a, path_addr(&a, "nonul")), EADDRINUSE);
	close(t);

	/* An existing name is in use, whatever the file is. */
	t = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_ERR(bind(t, (struct sockaddr *)&a, path_addr(&a, "bf")), EADDRINUSE);
	CHECK_OK(ut_write_file("regular", "", 0, 0644));
	CHECK_ERR(bind(t, (struct sockaddr *)&a, path_addr(&a, "regular")), EADDRINUSE);
	CHECK_OK(mkdir("adir", 0755));
	CHECK_ERR(bind(t, (struct sockaddr *)&a, path_addr(&a, "adir")), EADDRINUSE);
	/* An unbound socket's name is just the family. */
	check_unnamed(t, 0);

	/* connect: missing, not a socket, not listening. */
	CHECK_ERR(connect_path(t, "missing"), ENOENT);
	CHECK_ERR(connect_path(t, "regular"), ECONNREFUSED);
	CHECK_ERR(connect_path(t, "bf"), ECONNREFUSED);
	/* A stream socket cannot connect to a datagram socket. */
	CHECK_ERR(connect_path(t, "bf0"), EPROTOTYPE);
	close(t);
	close(d);
	close(s);
}

struct conn_info {
	int listener; /* closed by the child */
};

/* In a child: connect to "srv", check both names, send our pid. */
static void connect_child(void *arg)
{
	struct conn_info *ci = arg;
	close(ci->listener);
	int c = connected(SOCK_STREAM, "srv");
	CHECK(c >= 0);
	check_name(c, 1, "srv");
	check_unnamed(c, 0);
	/* The client's peer credentials are the listener's, from listen(). */
	struct ucred cr = peercred(c);
	CHECK_EQ(cr.pid, getppid());
	CHECK_EQ(cr.uid, geteuid());
	pid_t me = getpid();
	CHECK_EQ(write(c, &me, sizeof me), sizeof me);
	close(c);
}

static void test_connect_path(void)
{
	int l = listening(SOCK_STREAM, "srv", 5);
	CHECK(l >= 0);
	struct ucred cr = peercred(l);
	CHECK_EQ(cr.pid, getpid());
	struct conn_info ci = { l };
	ut_child("connect", connect_child, &ci, 0);

	/* The connection waited in the backlog; accept returns it. */
	struct sockaddr_un a;
	memset(&a, 'Z', sizeof a);
	socklen_t len = sizeof a;
	int s = CHECK_OK(accept(l, (struct sockaddr *)&a, &len));
	CHECK_EQ(len, FAMILY_LEN); /* the client had no name */
	CHECK_EQ(a.sun_family, AF_UNIX);
	check_name(s, 0, "srv");
	check_unnamed(s, 1);
	pid_t child = 0;
	CHECK_EQ(read(s, &child, sizeof child), sizeof child);
	CHECK_EQ(read(s, &child, sizeof child), 0); /* the child is gone */
	cr = peercred(s);
	CHECK(child > 0);
	CHECK_EQ(cr.pid, child);
	CHECK_EQ(cr.uid, geteuid());
	CHECK_EQ(cr.gid, getegid());
	close(s);

	/* A connection from here: EISCONN for a second connect. */
	int c = connected(SOCK_STREAM, "srv");
	CHECK(c >= 0);
	CHECK_ERR(connect_path(c, "srv"), EISCONN);
	s = CHECK_OK(accept(l, NULL, NULL));
	/* A listener cannot connect either. */
	CHECK_ERR(connect_path(l, "srv"), EINVAL);

	/* unlink removes the name but not the sockets. */
	CHECK_OK(unlink("srv"));
	int t = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_ERR(connect_path(t, "srv"), ENOENT);
	char buf[8];
	CHECK_EQ(write(c, "after", 5), 5);
	CHECK_EQ(read(s, buf, sizeof buf), 5);
	check_name(l, 0, "srv"); /* the socket keeps its name */
	/* A new socket may take the name now. */
	int l2 = listening(SOCK_STREAM, "srv", 1);
	CHECK(l2 >= 0);
	CHECK_OK(connect_path(t, "srv"));
	int s2 = CHECK_OK(accept(l2, NULL, NULL));
	CHECK_EQ(revents(l, POLLIN), 0); /* nothing went to the old one */
	close(s2);
	close(l2);
	close(t);
	close(s);
	close(c);
	close(l);

	/* A closed listener leaves its file, which refuses connections. */
	l = listening(SOCK_STREAM, "stale", 1);
	CHECK(l >= 0);
	close(l);
	CHECK_OK(access("stale", F_OK));
	t = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_ERR(connect_path(t, "stale"), ECONNREFUSED);
	CHECK_EQ(bound(SOCK_STREAM, "stale"), -1);
	CHECK_EQ(errno, EADDRINUSE);
	CHECK_OK(unlink("stale"));
	l = listening(SOCK_STREAM, "stale", 1);
	CHECK(l >= 0);
	CHECK_OK(connect_path(t, "stale"));
	close(t);
	close(l);
}

static void test_accept_flags(void)
{
	int l = listening(SOCK_STREAM, "acc", 5);
	CHECK(l >= 0);
	CHECK_OK(fcntl(l, F_SETFL, O_NONBLOCK));
	CHECK_ERR(accept(l, NULL, NULL), EAGAIN);
	CHECK_EQ(revents(l, POLLIN), 0);
	int c = connected(SOCK_STREAM, "acc");
	CHECK(c >= 0);
	CHECK_EQ(revents(l, POLLIN), POLLIN); /* a connection is pending */
	int a = CHECK_OK(accept4(l, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK));
	CHECK_EQ(cloexec(a), 1);
	CHECK_EQ(nonblocking(a), 1);
	char ch;
	CHECK_ERR(read(a, &ch, 1), EAGAIN);
	close(a);
	/* accept does not copy the listener's O_NONBLOCK. */
	close(c);
	c = connected(SOCK_STREAM, "acc");
	a = CHECK_OK(accept(l, NULL, NULL));
	CHECK_EQ(cloexec(a), 0);
	CHECK_EQ(nonblocking(a), 0);
	CHECK_EQ(int_opt(a, SO_TYPE), SOCK_STREAM);
	CHECK_EQ(int_opt(a, SO_ACCEPTCONN), 0);
	close(a);
	close(c);
	CHECK_ERR(syscall(SYS_accept4, l, 0, 0, 0x1234), EINVAL);
	socklen_t len = sizeof(struct sockaddr_un);
	c = connected(SOCK_STREAM, "acc");
	CHECK_ERR(accept(l, UT_BADPTR, &len), EFAULT);
	close(c);
	close(l);
}

/* In a child: a blocking connect to a full backlog waits for accept. */
static void backlog_child(void *arg)
{
	int c = connected(SOCK_STREAM, "bl");
	CHECK(c >= 0);
	CHECK_EQ(write(c, "k", 1), 1);
	close(c);
}

static void test_backlog(void)
{
	int l = listening(SOCK_STREAM, "bl", 0);
	CHECK(l >= 0);
	int clients[16], n = 0, err = 0;
	while (n < 16) {
		int c = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (connect_path(c, "bl") != 0) {
			err = errno;
			close(c);
			break;
		}
		clients[n++] = c;
	}
	/* Linux gives EAGAIN, not EINPROGRESS, for a full backlog. */
	CHECK(n >= 1 && n < 16);
	CHECK_EQ(err, EAGAIN);
	struct kid k = spawn(backlog_child, NULL);
	/* Accepting the queued ones lets the blocked child in, last. */
	for (int i = 0; i <= n; i++) {
		int a = CHECK_OK(accept(l, NULL, NULL));
		if (i == n) {
			char c = 0;
			CHECK_EQ(read(a, &c, 1), 1);
			CHECK_EQ(c, 'k');
		}
		close(a);
	}
	join(k);
	for (int i = 0; i < n; i++)
		close(clients[i]);
	close(l);
}

/* ---- abstract names and autobind ---- */

static void test_abstract(void)
{
	struct sockaddr_un a, b;
	socklen_t len = abstract_addr(&a, "abs");
	int l = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_OK(bind(l, (struct sockaddr *)&a, len));
	CHECK_OK(listen(l, 4));
	/* getsockname returns exactly the bytes bound. */
	memset(&b, 'Z', sizeof b);
	socklen_t blen = sizeof b;
	CHECK_OK(getsockname(l, (struct sockaddr *)&b, &blen));
	CHECK_EQ(blen, len);
	CHECK(memcmp(&a, &b, len) == 0);
	/* No file appears (under the name's own text, and under a short name
	 * S5's 14-byte entries can hold). */
	int e = access(a.sun_path + 1, F_OK) == 0 ? 0 : errno;
	CHECK(e == ENOENT || e == ENAMETOOLONG);
	CHECK_ERR(access("abs", F_OK), ENOENT);

	int t = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_ERR(bind(t, (struct sockaddr *)&a, len), EADDRINUSE);
	/* The length is part of the name: one more 0 byte is another name. */
	CHECK_ERR(connect(t, (struct sockaddr *)&a, len + 1), ECONNREFUSED);
	CHECK_ERR(connect(t, (struct sockaddr *)&a, len - 1), ECONNREFUSED);
	/* An unknown abstract name is refused (ENOENT is for paths). */
	abstract_addr(&b, "none");
	CHECK_ERR(connect(t, (struct sockaddr *)&b, len), ECONNREFUSED);
	CHECK_OK(connect(t, (struct sockaddr *)&a, len));
	int s = CHECK_OK(accept(l, NULL, NULL));
	blen = sizeof b;
	CHECK_OK(getpeername(t, (struct sockaddr *)&b, &blen));
	CHECK_EQ(blen, len);
	CHECK(memcmp(&a, &b, len) == 0);
	char buf[4];
	CHECK_EQ(write(t, "abs", 3), 3);
	CHECK_EQ(read(s, buf, sizeof buf), 3);
	close(s);
	close(t);

	/* Closing the socket frees the name. */
	close(l);
	l = CHECK_OK(socket(AF_UNIX, SOCK_DGRAM, 0));
	CHECK_OK(bind(l, (struct sockaddr *)&a, len));
	/* A datagram sent to an abstract name. */
	t = CHECK_OK(socket(AF_UNIX, SOCK_DGRAM, 0));
	CHECK_EQ(sendto(t, "dg", 2, 0, (struct sockaddr *)&a, len), 2);
	CHECK_EQ(recv(l, buf, sizeof buf, 0), 2);
	CHECK(memcmp(buf, "dg", 2) == 0);
	close(t);
	close(l);
}

static int is_autobind_name(const struct sockaddr_un *a, socklen_t len)
{
	if (len != FAMILY_LEN + 6 || a->sun_family != AF_UNIX || a->sun_path[0])
		return 0;
	for (int i = 1; i <= 5; i++)
		if (!strchr("0123456789abcdef", a->sun_path[i]) || !a->sun_path[i])
			return 0;
	return 1;
}

static void test_autobind(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX }, n1, n2, from3;
	int s = CHECK_OK(socket(AF_UNIX, SOCK_DGRAM, 0));
	int t = CHECK_OK(socket(AF_UNIX, SOCK_DGRAM, 0));
	CHECK_OK(bind(s, (struct sockaddr *)&a, FAMILY_LEN));
	CHECK_OK(bind(t, (struct sockaddr *)&a, FAMILY_LEN));
	socklen_t l1 = sizeof n1, l2 = sizeof n2;
	CHECK_OK(getsockname(s, (struct sockaddr *)&n1, &l1));
	CHECK_OK(getsockname(t, (struct sockaddr *)&n2, &l2));
	/* A 0 byte and five hex digits: sizeof(sa_family_t) + 6 bytes. */
	CHECK_EQ(l1, FAMILY_LEN + 6);
	CHECK(is_autobind_name(&n1, l1));
	CHECK(is_autobind_name(&n2, l2));
	CHECK(memcmp(n1.sun_path, n2.sun_path, 6) != 0);
	/* Autobind of a bound socket succeeds and changes nothing. */
	CHECK_OK(bind(s, (struct sockaddr *)&a, FAMILY_LEN));
	socklen_t l3 = sizeof from3;
	CHECK_OK(getsockname(s, (struct sockaddr *)&from3, &l3));
	CHECK(l3 == l1 && memcmp(&from3, &n1, l1) == 0);
	/* But a bound socket cannot take a real name. */
	CHECK_ERR(bind(s, (struct sockaddr *)&a, abstract_addr(&from3, "late")),
		  EINVAL);
	/* The name works as an address, and recvfrom reports it. */
	CHECK_EQ(sendto(t, "auto", 4, 0, (struct sockaddr *)&n1, l1), 4);
	struct sockaddr_un from;
	socklen_t flen = sizeof from;
	char buf[8];
	CHECK_EQ(recvfrom(s, buf, sizeof buf, 0, (struct sockaddr *)&from, &flen), 4);
	CHECK_EQ(flen, l2);
	CHECK(memcmp(&from, &n2, l2) == 0);
	close(s);
	close(t);
	/* A stream socket autobinds too, and can then listen. */
	s = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_OK(bind(s, (struct sockaddr *)&a, FAMILY_LEN));
	CHECK_OK(listen(s, 1));
	l1 = sizeof n1;
	CHECK_OK(getsockname(s, (struct sockaddr *)&n1, &l1));
	CHECK(is_autobind_name(&n1, l1));
	t = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_OK(connect(t, (struct sockaddr *)&n1, l1));
	close(t);
	close(s);
}

/* ---- datagram sockets with names ---- */

static void test_dgram_names(void)
{
	struct sockaddr_un ra, from;
	socklen_t rlen = path_addr(&ra, "dr"), flen;
	char buf[16];
	int r = bound(SOCK_DGRAM, "dr");
	CHECK(r >= 0);
	int s = CHECK_OK(socket(AF_UNIX, SOCK_DGRAM, 0));
	/* From an unnamed sender, recvfrom reports an empty address. */
	CHECK_EQ(sendto(s, "hi", 2, 0, (struct sockaddr *)&ra, rlen), 2);
	flen = sizeof from;
	CHECK_EQ(recvfrom(r, buf, sizeof buf, 0, (struct sockaddr *)&from, &flen), 2);
	CHECK_EQ(flen, 0);
	/* From a named one, its name. */
	struct sockaddr_un sa;
	socklen_t slen = path_addr(&sa, "ds");
	CHECK_OK(bind(s, (struct sockaddr *)&sa, slen));
	CHECK_EQ(sendto(s, "hey", 3, 0, (struct sockaddr *)&ra, rlen), 3);
	memset(&from, 'Z', sizeof from);
	flen = sizeof from;
	CHECK_EQ(recvfrom(r, buf, sizeof buf, 0, (struct sockaddr *)&from, &flen), 3);
	CHECK_EQ(flen, slen);
	CHECK(strcmp(from.sun_path, "ds") == 0);
	/* Connected: send needs no address, and getpeername names the peer. */
	CHECK_OK(connect(s, (struct sockaddr *)&ra, rlen));
	check_name(s, 1, "dr");
	CHECK_EQ(send(s, "conn", 4, 0), 4);
	CHECK_EQ(recv(r, buf, sizeof buf, 0), 4);
	CHECK(memcmp(buf, "conn", 4) == 0);

	/* Errors naming the receiver. */
	int t = CHECK_OK(socket(AF_UNIX, SOCK_DGRAM, 0));
	struct sockaddr_un xa;
	socklen_t xlen = path_addr(&xa, "nothere");
	CHECK_ERR(sendto(t, "x", 1, 0, (struct sockaddr *)&xa, xlen), ENOENT);
	CHECK_ERR(connect(t, (struct sockaddr *)&xa, xlen), ENOENT);
	int l = listening(SOCK_STREAM, "dstream", 1);
	xlen = path_addr(&xa, "dstream");
	CHECK_ERR(sendto(t, "x", 1, 0, (struct sockaddr *)&xa, xlen), EPROTOTYPE);
	CHECK_ERR(connect(t, (struct sockaddr *)&xa, xlen), EPROTOTYPE);
	close(l);
	/* A socket connected to another one takes datagrams from it only. */
	CHECK_OK(connect(r, (struct sockaddr *)&sa, slen));
	CHECK_ERR(sendto(t, "x", 1, 0, (struct sockaddr *)&ra, rlen), EPERM);
	CHECK_ERR(connect(t, (struct sockaddr *)&ra, rlen), EPERM);
	CHECK_EQ(send(s, "ok", 2, 0), 2);
	CHECK_EQ(recv(r, buf, sizeof buf, 0), 2);
	/* connect to AF_UNSPEC dissolves the association. */
	struct sockaddr_un un = { .sun_family = AF_UNSPEC };
	CHECK_OK(connect(s, (struct sockaddr *)&un, sizeof un));
	CHECK_ERR(send(s, "x", 1, 0), ENOTCONN);
	socklen_t plen = sizeof from;
	CHECK_ERR(getpeername(s, (struct sockaddr *)&from, &plen), ENOTCONN);
	close(t);
	close(s);
	close(r);

	/* The receive queue of a named socket has a limit: EAGAIN. */
	r = bound(SOCK_DGRAM, "dq");
	rlen = path_addr(&ra, "dq");
	s = CHECK_OK(socket(AF_UNIX, SOCK_DGRAM, 0));
	int n = 0;
	while (n < 4096 && sendto(s, "q", 1, MSG_DONTWAIT, (struct sockaddr *)&ra,
				  rlen) == 1)
		n++;
	CHECK(n >= 1 && n < 4096);
	CHECK_ERR(sendto(s, "q", 1, MSG_DONTWAIT, (struct sockaddr *)&ra, rlen),
		  EAGAIN);
	int got = 0;
	while (recv(r, buf, sizeof buf, MSG_DONTWAIT) == 1)
		got++;
	CHECK_EQ(got, n);
	close(s);
	close(r);
}

static void test_dgram_misc(void)
{
	int sv[2];
	char buf[16];
	CHECK_OK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	/* An empty datagram is a message of its own. */
	CHECK_EQ(send(sv[0], "", 0, 0), 0);
	CHECK_EQ(send(sv[0], "a", 1, 0), 1);
	CHECK_EQ(recv(sv[1], buf, sizeof buf, MSG_DONTWAIT), 0);
	CHECK_EQ(recv(sv[1], buf, sizeof buf, MSG_DONTWAIT), 1);
	CHECK_ERR(recv(sv[1], buf, sizeof buf, MSG_DONTWAIT), EAGAIN);
	/* FIONREAD is the size of the next datagram. */
	CHECK_EQ(send(sv[0], "abc", 3, 0), 3);
	CHECK_EQ(send(sv[0], "defgh", 5, 0), 5);
	int n = -1;
	CHECK_OK(ioctl(sv[1], FIONREAD, &n));
	CHECK_EQ(n, 3);
	/* MSG_PEEK keeps the datagram, truncated or not. */
	CHECK_EQ(recv(sv[1], buf, 2, MSG_PEEK), 2);
	CHECK_EQ(recv(sv[1], buf, sizeof buf, MSG_PEEK), 3);
	CHECK_EQ(recv(sv[1], buf, sizeof buf, 0), 3);
	CHECK_EQ(recv(sv[1], buf, sizeof buf, 0), 5);
	/* A datagram larger than the send buffer can never go. */
	size_t big = 1 << 20;
	char *p = calloc(1, big);
	CHECK(p != NULL);
	if (p)
		CHECK_ERR(send(sv[0], p, big, 0), EMSGSIZE);
	free(p);
	/* SO_RCVTIMEO: a blocking receive gives up with EAGAIN. */
	struct timeval tv = { 0, 20000 };
	CHECK_OK(setsockopt(sv[1], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv));
	CHECK_ERR(recv(sv[1], buf, sizeof buf, 0), EAGAIN);
	/* After SHUT_WR a datagram socket sends nothing, but receives. */
	CHECK_OK(shutdown(sv[0], SHUT_WR));
	CHECK_ERR(send(sv[0], "x", 1, 0), EPIPE);
	CHECK_EQ(send(sv[1], "y", 1, 0), 1);
	CHECK_EQ(recv(sv[0], buf, sizeof buf, 0), 1);
	close_pair(sv);
}

/* ---- non-blocking calls and poll ---- */

static void test_nonblock_poll(void)
{
	int sv[2];
	char buf[4096];
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_ERR(recv(sv[1], buf, 1, MSG_DONTWAIT), EAGAIN);
	CHECK_EQ(revents(sv[1], POLLIN | POLLOUT), POLLOUT);
	CHECK_EQ(write(sv[0], "peek", 4), 4);
	CHECK_EQ(revents(sv[1], POLLIN), POLLIN);
	/* MSG_PEEK leaves the data for the next read. */
	CHECK_EQ(recv(sv[1], buf, sizeof buf, MSG_PEEK), 4);
	CHECK(memcmp(buf, "peek", 4) == 0);
	memset(buf, 0, 4);
	CHECK_EQ(recv(sv[1], buf, 2, MSG_PEEK | MSG_DONTWAIT), 2);
	int n = -1;
	CHECK_OK(ioctl(sv[1], FIONREAD, &n));
	CHECK_EQ(n, 4);
	CHECK_EQ(read(sv[1], buf, sizeof buf), 4);
	CHECK(memcmp(buf, "peek", 4) == 0);
	CHECK_EQ(revents(sv[1], POLLIN), 0);
	close_pair(sv);

	/* Fill a non-blocking stream until EAGAIN; then it is not writable. */
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv));
	memset(buf, 'f', sizeof buf);
	long total = 0, w;
	while ((w = write(sv[0], buf, sizeof buf)) > 0 && total < (64L << 20))
		total += w;
	CHECK(total > 0 && total < (64L << 20));
	CHECK_ERR(write(sv[0], buf, sizeof buf), EAGAIN);
	CHECK_ERR(send(sv[0], buf, 1, 0), EAGAIN);
	CHECK_EQ(revents(sv[0], POLLOUT), 0);
	CHECK_EQ(revents(sv[1], POLLIN), POLLIN);
	/* Draining the other side makes it writable again. */
	long got = 0, r;
	while ((r = read(sv[1], buf, sizeof buf)) > 0)
		got += r;
	CHECK_EQ(got, total);
	CHECK_EQ(revents(sv[0], POLLOUT), POLLOUT);
	CHECK_EQ(write(sv[0], buf, 10), 10);
	CHECK_EQ(read(sv[1], buf, sizeof buf), 10);

	/* The peer's close: POLLIN and POLLHUP, then end of file. */
	close(sv[0]);
	int ev = revents(sv[1], POLLIN | POLLOUT);
	CHECK((ev & (POLLIN | POLLHUP)) == (POLLIN | POLLHUP));
	CHECK_EQ(read(sv[1], buf, sizeof buf), 0);
	CHECK_EQ(recv(sv[1], buf, sizeof buf, MSG_DONTWAIT), 0);
	close(sv[1]);
}

static void test_shutdown(void)
{
	int sv[2];
	char buf[8];
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_EQ(write(sv[0], "last", 4), 4);
	CHECK_OK(shutdown(sv[0], SHUT_WR));
	/* The peer reads what was sent, then end of file ... */
	CHECK_EQ(revents(sv[1], POLLIN | POLLRDHUP), POLLIN | POLLRDHUP);
	CHECK_EQ(read(sv[1], buf, sizeof buf), 4);
	CHECK_EQ(read(sv[1], buf, sizeof buf), 0);
	CHECK_EQ(read(sv[1], buf, sizeof buf), 0);
	/* ... the shut side cannot write ... */
	CHECK_ERR(write(sv[0], "x", 1), EPIPE);
	/* ... and the other direction still works. */
	CHECK_EQ(write(sv[1], "back", 4), 4);
	CHECK_EQ(read(sv[0], buf, sizeof buf), 4);
	CHECK(memcmp(buf, "back", 4) == 0);
	CHECK_EQ(revents(sv[0], POLLHUP), 0);
	close_pair(sv);

	/* SHUT_RD: reads end at once and the peer's writes fail. */
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_OK(shutdown(sv[1], SHUT_RD));
	CHECK_EQ(read(sv[1], buf, sizeof buf), 0);
	CHECK_ERR(write(sv[0], "x", 1), EPIPE);
	CHECK_EQ(write(sv[1], "y", 1), 1);
	CHECK_EQ(read(sv[0], buf, sizeof buf), 1);
	close_pair(sv);

	/* SHUT_RDWR: POLLHUP on both sides. */
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_OK(shutdown(sv[0], SHUT_RDWR));
	CHECK(revents(sv[0], POLLIN) & POLLHUP);
	CHECK(revents(sv[1], POLLIN) & POLLHUP);
	CHECK_ERR(write(sv[1], "x", 1), EPIPE);
	CHECK_EQ(read(sv[1], buf, sizeof buf), 0);
	close_pair(sv);
}

/* ---- EPIPE, SIGPIPE, ECONNRESET, ECONNREFUSED ---- */

static volatile sig_atomic_t pipe_hits;

static void on_sigpipe(int sig)
{
	(void)sig;
	pipe_hits++;
}

static void test_epipe(void)
{
	int sv[2];
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	close(sv[1]);
	/* SIGPIPE is ignored (main does that): just EPIPE. */
	CHECK_ERR(write(sv[0], "x", 1), EPIPE);
	CHECK_ERR(send(sv[0], "x", 1, 0), EPIPE);

	/* With a handler: it runs, and the call still fails. */
	struct sigaction sa = { .sa_handler = on_sigpipe }, old;
	sigemptyset(&sa.sa_mask);
	CHECK_OK(sigaction(SIGPIPE, &sa, &old));
	pipe_hits = 0;
	CHECK_ERR(write(sv[0], "x", 1), EPIPE);
	CHECK_EQ(pipe_hits, 1);
	struct iovec io = { .iov_base = "m", .iov_len = 1 };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1 };
	CHECK_ERR(sendmsg(sv[0], &m, 0), EPIPE);
	CHECK_EQ(pipe_hits, 2);
	/* MSG_NOSIGNAL: no signal. */
	CHECK_ERR(send(sv[0], "x", 1, MSG_NOSIGNAL), EPIPE);
	CHECK_ERR(sendmsg(sv[0], &m, MSG_NOSIGNAL), EPIPE);
	CHECK_EQ(pipe_hits, 2);
	CHECK_OK(sigaction(SIGPIPE, &old, NULL));

	/* With the default action the writer dies of SIGPIPE. */
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGPIPE, SIG_DFL);
		(void)write(sv[0], "x", 1);
		_exit(0);
	}
	int st = ut_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE);
	close(sv[0]);

	/* SOCK_SEQPACKET too. */
	CHECK_OK(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	close(sv[1]);
	CHECK_ERR(send(sv[0], "x", 1, MSG_NOSIGNAL), EPIPE);
	close(sv[0]);
}

static void test_peer_gone(void)
{
	int sv[2];
	char buf[8];
	/* Closing with unread data resets the connection: ECONNRESET once. */
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_EQ(write(sv[0], "unread", 6), 6);
	close(sv[1]);
	CHECK_ERR(read(sv[0], buf, sizeof buf), ECONNRESET);
	CHECK_EQ(read(sv[0], buf, sizeof buf), 0);
	CHECK_ERR(write(sv[0], "x", 1), EPIPE);
	close(sv[0]);
	/* Data sent before a close is still read in full. */
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_EQ(write(sv[1], "bye", 3), 3);
	close(sv[1]);
	CHECK_EQ(read(sv[0], buf, sizeof buf), 3);
	CHECK_EQ(read(sv[0], buf, sizeof buf), 0);
	close(sv[0]);

	/*
	 * A datagram pair: sending to a closed peer is ECONNREFUSED, which
	 * also disconnects the socket, so the next send is ENOTCONN.  There
	 * is no end of file for datagrams.
	 */
	CHECK_OK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	close(sv[1]);
	CHECK_ERR(send(sv[0], "x", 1, 0), ECONNREFUSED);
	CHECK_ERR(send(sv[0], "x", 1, 0), ENOTCONN);
	CHECK_ERR(recv(sv[0], buf, sizeof buf, MSG_DONTWAIT), EAGAIN);
	close(sv[0]);
}

/* ---- /proc/self/fd and fstat ---- */

static void test_procfs(void)
{
	int sv[2];
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	for (int i = 0; i < 2; i++) {
		struct stat st;
		CHECK_OK(fstat(sv[i], &st));
		CHECK(S_ISSOCK(st.st_mode));
		char path[64], link[64], want[64];
		snprintf(path, sizeof path, "/proc/self/fd/%d", sv[i]);
		snprintf(want, sizeof want, "socket:[%lu]", (unsigned long)st.st_ino);
		ssize_t n = readlink(path, link, sizeof link - 1);
		CHECK_EQ(n, (ssize_t)strlen(want));
		link[n > 0 ? n : 0] = 0;
		CHECK(strcmp(link, want) == 0);
	}
	struct stat s0, s1;
	CHECK_OK(fstat(sv[0], &s0));
	CHECK_OK(fstat(sv[1], &s1));
	CHECK(s0.st_ino != s1.st_ino);
	/* Sockets cannot seek. */
	char c;
	CHECK_ERR(lseek(sv[0], 0, SEEK_SET), ESPIPE);
	CHECK_ERR(pread(sv[0], &c, 1, 0), ESPIPE);
	close_pair(sv);
}

/* ---- calls that block until another process acts ---- */

struct pair_and_pipe {
	int sv[2];
	int go[2]; /* handshake pipe: child to parent or parent to child */
};

/* Waits in recv until the parent sends. */
static void recv_child(void *arg)
{
	struct pair_and_pipe *pp = arg;
	close(pp->sv[0]);
	char buf[16];
	ut_tell(pp->go[1]);
	CHECK_EQ(recv(pp->sv[1], buf, sizeof buf, 0), 5);
	CHECK(memcmp(buf, "later", 5) == 0);
	/* MSG_WAITALL waits for all 8 bytes, sent in two parts. */
	ut_tell(pp->go[1]);
	CHECK_EQ(recv(pp->sv[1], buf, 8, MSG_WAITALL), 8);
	CHECK(memcmp(buf, "abcdefgh", 8) == 0);
	/* End of file while waiting. */
	ut_tell(pp->go[1]);
	CHECK_EQ(recv(pp->sv[1], buf, sizeof buf, 0), 0);
}

/* Writes 1 MiB in one blocking write, which the parent reads. */
static void big_write_child(void *arg)
{
	struct pair_and_pipe *pp = arg;
	close(pp->sv[1]);
	size_t len = 1 << 20;
	unsigned char *p = malloc(len);
	if (!p) {
		CHECK(!"malloc");
		return;
	}
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)(i % 251);
	CHECK_EQ(write(pp->sv[0], p, len), len);
	free(p);
}

/* Connects to "ba" once the parent says go. */
static void accept_child(void *arg)
{
	struct pair_and_pipe *pp = arg;
	if (ut_await(pp->go[0]) != 0)
		CHECK(!"handshake");
	int c = connected(SOCK_STREAM, "ba");
	CHECK(c >= 0);
	CHECK_EQ(write(c, "hello", 5), 5);
	close(c);
}

static void test_blocking(void)
{
	struct pair_and_pipe pp;
	char buf[4096];
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, pp.sv));
	CHECK_OK(pipe(pp.go));
	struct kid k = spawn(recv_child, &pp);
	close(pp.sv[1]);
	CHECK_EQ(ut_await(pp.go[0]), 0);
	CHECK_EQ(send(pp.sv[0], "later", 5, 0), 5);
	CHECK_EQ(ut_await(pp.go[0]), 0);
	CHECK_EQ(send(pp.sv[0], "abc", 3, 0), 3);
	CHECK_EQ(send(pp.sv[0], "defgh", 5, 0), 5);
	CHECK_EQ(ut_await(pp.go[0]), 0);
	close(pp.sv[0]);
	join(k);
	close(pp.go[0]);
	close(pp.go[1]);

	/* A writer blocks until the reader makes room. */
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, pp.sv));
	k = spawn(big_write_child, &pp);
	close(pp.sv[0]);
	long total = 0, r;
	int order_ok = 1;
	struct pollfd pf = { .fd = pp.sv[1], .events = POLLIN };
	while (total < (1 << 20) && poll(&pf, 1, HANG_GUARD_MS) == 1 &&
	       (r = read(pp.sv[1], buf, sizeof buf)) > 0) {
		for (long i = 0; i < r; i++)
			if ((unsigned char)buf[i] != (unsigned char)((total + i) % 251))
				order_ok = 0;
		total += r;
	}
	CHECK_EQ(total, 1 << 20);
	CHECK(order_ok);
	join(k);
	close(pp.sv[1]);

	/* A blocking accept is woken by a connection. */
	int l = listening(SOCK_STREAM, "ba", 1);
	CHECK(l >= 0);
	CHECK_OK(pipe(pp.go));
	k = spawn(accept_child, &pp);
	ut_tell(pp.go[1]);
	int a = CHECK_OK(accept(l, NULL, NULL));
	CHECK_EQ(read(a, buf, sizeof buf), 5);
	CHECK(memcmp(buf, "hello", 5) == 0);
	join(k);
	close(a);
	close(l);
	close(pp.go[0]);
	close(pp.go[1]);
}

/* ---- SOCK_SEQPACKET connections ---- */

static void test_seqpacket(void)
{
	int l = listening(SOCK_SEQPACKET, "sq", 4);
	CHECK(l >= 0);
	int c = connected(SOCK_SEQPACKET, "sq");
	CHECK(c >= 0);
	int a = CHECK_OK(accept(l, NULL, NULL));
	CHECK_EQ(int_opt(a, SO_TYPE), SOCK_SEQPACKET);
	check_name(c, 1, "sq");
	char buf[100];
	CHECK_EQ(send(c, "abc", 3, 0), 3);
	CHECK_EQ(send(c, "defgh", 5, 0), 5);
	CHECK_EQ(recv(a, buf, sizeof buf, 0), 3);
	CHECK_EQ(recv(a, buf, sizeof buf, 0), 5);
	CHECK(memcmp(buf, "defgh", 5) == 0);
	CHECK_EQ(write(a, "reply", 5), 5);
	CHECK_EQ(read(c, buf, 2), 2); /* the rest of the record is dropped */
	CHECK_ERR(recv(c, buf, sizeof buf, MSG_DONTWAIT), EAGAIN);
	/* Another type cannot connect to it. */
	int s = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_ERR(connect_path(s, "sq"), EPROTOTYPE);
	close(s);
	s = CHECK_OK(socket(AF_UNIX, SOCK_DGRAM, 0));
	CHECK_ERR(connect_path(s, "sq"), EPROTOTYPE);
	close(s);
	/* The peer's close: end of file, then EPIPE. */
	close(c);
	CHECK(revents(a, POLLIN) & POLLHUP);
	CHECK_EQ(recv(a, buf, sizeof buf, 0), 0);
	CHECK_ERR(send(a, "x", 1, 0), EPIPE);
	close(a);
	close(l);
}

/* ---- permissions (root only: the checks run as uid 65534) ---- */

struct unpriv_info {
	int sv[2]; /* datagram pair; the parent reads sv[1] */
	struct sockaddr_un abs;
	socklen_t abs_len;
};

static void unprivileged_checks(void *arg)
{
	struct unpriv_info *ui = arg;
	/* Connecting needs write permission on the socket file. */
	int s = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_ERR(connect_path(s, "priv"), EACCES);
	CHECK_OK(connect_path(s, "open"));
	close(s);
	/* Binding needs write permission on the directory. */
	s = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	struct sockaddr_un a;
	CHECK_ERR(bind(s, (struct sockaddr *)&a, path_addr(&a, "mine")), EACCES);
	/* Abstract names have no permissions. */
	CHECK_OK(connect(s, (struct sockaddr *)&ui->abs, ui->abs_len));
	close(s);
	/* Only one's own credentials can be sent. */
	CHECK_ERR(send_creds(ui->sv[0], getppid(), getuid(), getgid()), EPERM);
	CHECK_ERR(send_creds(ui->sv[0], getpid(), 0, getgid()), EPERM);
	CHECK_ERR(send_creds(ui->sv[0], getpid(), getuid(), 0), EPERM);
	CHECK_EQ(send_creds(ui->sv[0], getpid(), getuid(), getgid()), 1);
}

static void test_unprivileged(void)
{
	if (!ut_is_root()) {
		ut_note("skipped permission checks: need root to become another user");
		return;
	}
	mode_t old = umask(022);
	int priv = listening(SOCK_STREAM, "priv", 2);
	int open_ = listening(SOCK_STREAM, "open", 2);
	umask(old);
	CHECK(priv >= 0 && open_ >= 0);
	CHECK_OK(chmod("open", 0777));
	struct unpriv_info ui;
	ui.abs_len = abstract_addr(&ui.abs, "priv");
	int al = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_OK(bind(al, (struct sockaddr *)&ui.abs, ui.abs_len));
	CHECK_OK(listen(al, 2));
	CHECK_OK(socketpair(AF_UNIX, SOCK_DGRAM, 0, ui.sv));
	CHECK_OK(set_int_opt(ui.sv[1], SO_PASSCRED, 1));
	ut_unprivileged("unprivileged", unprivileged_checks, &ui);
	struct ucred cr;
	memset(&cr, 0, sizeof cr);
	CHECK_EQ(recv_creds(ui.sv[1], &cr), 1);
	CHECK_EQ(cr.uid, UT_NOBODY);
	CHECK_EQ(cr.gid, UT_NOBODY);
	CHECK(cr.pid > 0 && cr.pid != getpid());
	/* The child's own connection is waiting on "open". */
	int a = CHECK_OK(accept(open_, NULL, NULL));
	CHECK_EQ(peercred(a).uid, UT_NOBODY);
	close(a);
	close_pair(ui.sv);
	close(al);
	close(priv);
	close(open_);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	/* A broken test must not kill the program; test_epipe sets its own. */
	signal(SIGPIPE, SIG_IGN);

	test_pair_types();
	test_truncation();
	test_type_flags();
	test_bad_socket_args();
	test_bad_bind_connect();
	test_bad_state();
	test_not_sockets();
	test_bad_options();
	test_bind_file();
	test_connect_path();
	test_accept_flags();
	test_backlog();
	test_abstract();
	test_autobind();
	test_dgram_names();
	test_dgram_misc();
	test_nonblock_poll();
	test_shutdown();
	test_epipe();
	test_peer_gone();
	test_procfs();
	test_blocking();
	test_seqpacket();
	test_unprivileged();
	return ut_done();
}
