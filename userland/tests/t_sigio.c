/*
 * t_sigio: signal-driven I/O on sockets, with Linux semantics.
 *
 * O_ASYNC set by fcntl(F_SETFL) and by ioctl(FIOASYNC), kept in F_GETFL;
 * the owner by F_SETOWN, FIOSETOWN and SIOCSPGRP, read back by F_GETOWN,
 * FIOGETOWN and SIOCGPGRP; ESRCH for an owner that does not exist and
 * ENOTTY for the socket ioctls on a pipe; SIGIO (si_code SI_KERNEL
 * without F_SETSIG) when data comes to an AF_UNIX socket and to a UDP
 * socket, none once O_ASYNC is off or without an owner; and a process
 * group as the owner.  nginx's master sets these on its channels.
 */
#include "ut.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WAIT_S 10           /* a wait that only stops a hang */
#define QUIET_MS 300        /* how long "no signal comes" is watched for */

/* Wait for SIGIO (blocked, so it stays pending): its si_code, or -1. */
static int await_sigio(int ms)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGIO);
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	siginfo_t si;
	return sigtimedwait(&set, &si, &ts) == SIGIO ? si.si_code : -1;
}

static void test_settings(void)
{
	int sv[2];
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	int fl = CHECK_OK(fcntl(sv[0], F_GETFL));
	CHECK(!(fl & O_ASYNC));
	CHECK_OK(fcntl(sv[0], F_SETFL, fl | O_ASYNC));
	CHECK(fcntl(sv[0], F_GETFL) & O_ASYNC);
	int off = 0, on = 1;
	CHECK_OK(ioctl(sv[0], FIOASYNC, &off));
	CHECK(!(fcntl(sv[0], F_GETFL) & O_ASYNC));
	CHECK_OK(ioctl(sv[0], FIOASYNC, &on));
	CHECK(fcntl(sv[0], F_GETFL) & O_ASYNC);

	CHECK_EQ(fcntl(sv[0], F_GETOWN), 0);
	CHECK_OK(fcntl(sv[0], F_SETOWN, getpid()));
	CHECK_EQ(fcntl(sv[0], F_GETOWN), getpid());
	int owner = -1;
	CHECK_OK(ioctl(sv[0], FIOGETOWN, &owner));
	CHECK_EQ(owner, getpid());
	owner = -getpgrp();     /* recorded only: nothing is written to it */
	CHECK_OK(ioctl(sv[0], SIOCSPGRP, &owner));
	CHECK_EQ(fcntl(sv[0], F_GETOWN), -getpgrp());
	owner = 0;
	CHECK_OK(ioctl(sv[0], SIOCGPGRP, &owner));
	CHECK_EQ(owner, -getpgrp());
	owner = getpid();
	CHECK_OK(ioctl(sv[0], FIOSETOWN, &owner));
	CHECK_EQ(fcntl(sv[0], F_GETOWN), getpid());
	CHECK_ERR(fcntl(sv[0], F_SETOWN, 0x3ffffff0), ESRCH);
	CHECK_EQ(fcntl(sv[0], F_GETOWN), getpid());   /* unchanged */
	CHECK_ERR(ioctl(sv[0], FIOASYNC, (void *)8), EFAULT);

	int p[2];
	CHECK_OK(pipe(p));
	CHECK_ERR(ioctl(p[0], SIOCGPGRP, &owner), ENOTTY);
	CHECK_ERR(ioctl(p[0], FIOSETOWN, &owner), ENOTTY);
	CHECK_OK(ioctl(p[0], FIOASYNC, &on));        /* any file takes O_ASYNC */
	CHECK(fcntl(p[0], F_GETFL) & O_ASYNC);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}

static void test_unix(void)
{
	int sv[2];
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_OK(fcntl(sv[0], F_SETOWN, getpid()));
	CHECK_OK(fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_ASYNC | O_NONBLOCK));
	CHECK_EQ(write(sv[1], "x", 1), 1);
	CHECK_EQ(await_sigio(WAIT_S * 1000), SI_KERNEL);
	char c;
	CHECK_EQ(read(sv[0], &c, 1), 1);
	while (await_sigio(QUIET_MS) != -1)
		;                       /* the read's own change may send one more */
	/* O_ASYNC off: data comes, no signal. */
	CHECK_OK(fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) & ~O_ASYNC));
	CHECK_EQ(write(sv[1], "y", 1), 1);
	CHECK_EQ(await_sigio(QUIET_MS), -1);
	CHECK_EQ(read(sv[0], &c, 1), 1);
	/* On again but no owner: still none. */
	CHECK_OK(fcntl(sv[0], F_SETOWN, 0));
	CHECK_OK(fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_ASYNC));
	CHECK_EQ(write(sv[1], "z", 1), 1);
	CHECK_EQ(await_sigio(QUIET_MS), -1);
	CHECK_EQ(read(sv[0], &c, 1), 1);
	close(sv[0]);
	close(sv[1]);
}

/* A process group as the owner: in a child that leads a group of its own,
 * so the signal reaches nobody else (SIGIO's default ends a process). */
static void group_owner(void *arg)
{
	(void)arg;
	CHECK_OK(setpgid(0, 0));
	int sv[2];
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_OK(fcntl(sv[0], F_SETOWN, -getpgrp()));
	CHECK_OK(fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_ASYNC));
	CHECK_EQ(write(sv[1], "w", 1), 1);
	CHECK_EQ(await_sigio(WAIT_S * 1000), SI_KERNEL);
	close(sv[0]);
	close(sv[1]);
}

static void test_udp(void)
{
	int a = CHECK_OK(socket(AF_INET, SOCK_DGRAM, 0));
	int b = CHECK_OK(socket(AF_INET, SOCK_DGRAM, 0));
	struct sockaddr_in to = { .sin_family = AF_INET };
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof to;
	CHECK_OK(bind(b, (struct sockaddr *)&to, sizeof to));
	CHECK_OK(getsockname(b, (struct sockaddr *)&to, &len));
	int on = 1, me = getpid();
	CHECK_OK(ioctl(b, FIOSETOWN, &me));
	CHECK_OK(ioctl(b, FIOASYNC, &on));
	CHECK_EQ(sendto(a, "ping", 4, 0, (struct sockaddr *)&to, sizeof to), 4);
	CHECK_EQ(await_sigio(WAIT_S * 1000), SI_KERNEL);
	char buf[8];
	CHECK_EQ(recv(b, buf, sizeof buf, 0), 4);
	close(a);
	close(b);
	while (await_sigio(QUIET_MS) != -1)
		;
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGIO);
	CHECK_OK(sigprocmask(SIG_BLOCK, &set, NULL));
	test_settings();
	test_unix();
	ut_child("group_owner", group_owner, NULL, 0);
	test_udp();
	return ut_done();
}
