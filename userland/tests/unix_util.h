/*
 * unix_util.h: the helpers t_unix.c and t_unixmsg.c both use (each
 * program includes this once, after "ut.h").
 *
 * Names in the file system (path_addr, bound, listening), FD_CLOEXEC, the
 * int socket options, credentials sent and received as control messages,
 * SO_PEERCRED, and the three socket types for the tests that try each.
 * The functions are static, and each is used by both programs (gcc warns
 * of one a program leaves unused); a helper only one program needs stays
 * in that program.
 */
#ifndef UNIX_UTIL_H
#define UNIX_UTIL_H

#include "ut.h"

#include <fcntl.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define SUN_OFF offsetof(struct sockaddr_un, sun_path)

static const int all_types[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET };

/* Fills a with the path name; returns the length bind() expects. */
static socklen_t path_addr(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	strncpy(a->sun_path, path, sizeof a->sun_path - 1);
	return SUN_OFF + strlen(a->sun_path) + 1;
}

/* A socket of the type bound to path, or -1. */
static int bound(int type, const char *path)
{
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, path);
	int s = socket(AF_UNIX, type, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&a, len) != 0) {
		if (s >= 0)
			close(s);
		return -1;
	}
	return s;
}

/* A listening socket at path, or -1. */
static int listening(int type, const char *path, int backlog)
{
	int s = bound(type, path);
	if (s >= 0 && listen(s, backlog) != 0) {
		close(s);
		return -1;
	}
	return s;
}

static int cloexec(int fd)
{
	int f = fcntl(fd, F_GETFD);
	return f < 0 ? -1 : (f & FD_CLOEXEC) != 0;
}

/* An int socket option, or -1000 when getsockopt fails. */
static int int_opt(int fd, int opt)
{
	int v = 0;
	socklen_t len = sizeof v;
	if (getsockopt(fd, SOL_SOCKET, opt, &v, &len) != 0 || len != sizeof v)
		return -1000;
	return v;
}

static int set_int_opt(int fd, int opt, int v)
{
	return setsockopt(fd, SOL_SOCKET, opt, &v, sizeof v);
}

/* Sends one byte "C" with explicit SCM_CREDENTIALS. */
static long send_creds(int s, pid_t pid, uid_t uid, gid_t gid)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} ctl;
	memset(&ctl, 0, sizeof ctl);
	struct ucred cr = { .pid = pid, .uid = uid, .gid = gid };
	struct iovec io = { .iov_base = "C", .iov_len = 1 };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1,
			    .msg_control = ctl.buf,
			    .msg_controllen = sizeof ctl.buf };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_CREDENTIALS;
	c->cmsg_len = CMSG_LEN(sizeof cr);
	memcpy(CMSG_DATA(c), &cr, sizeof cr);
	return sendmsg(s, &m, 0);
}

/*
 * Receives one byte (without waiting); returns 1 and fills *cr when an
 * SCM_CREDENTIALS message came with it, 0 when none did, -1 on failure.
 */
static int recv_creds(int s, struct ucred *cr)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred)) + 64];
		struct cmsghdr align;
	} ctl;
	char byte;
	struct iovec io = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1,
			    .msg_control = ctl.buf,
			    .msg_controllen = sizeof ctl.buf };
	if (recvmsg(s, &m, MSG_DONTWAIT) != 1)
		return -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len == CMSG_LEN(sizeof *cr)) {
			memcpy(cr, CMSG_DATA(c), sizeof *cr);
			return 1;
		}
	return 0;
}

static struct ucred peercred(int s)
{
	struct ucred cr = { -1, (uid_t)-1, (gid_t)-1 };
	socklen_t len = sizeof cr;
	if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 ||
	    len != sizeof cr)
		cr.pid = -2;
	return cr;
}

static void close_pair(int sv[2])
{
	close(sv[0]);
	close(sv[1]);
}

#endif /* UNIX_UTIL_H */
