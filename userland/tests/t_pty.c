/*
 * t_pty: pseudo-terminals as Linux's: posix_openpt, grantpt, unlockpt,
 * ptsname and the slave in /dev/pts (a character device 136:N, locked
 * until unlockpt: EIO); bytes typed at the master read as lines from the
 * slave (CR made NL, erase editing), echoed back with NL made CR NL, as
 * is what the slave writes; raw mode without echo; the window size;
 * FIONREAD; packet mode; TIOCGPTPEER; poll on the master; a child's
 * session taking the slave as its controlling terminal (TIOCSCTTY,
 * tcsetpgrp, /dev/tty writes to the slave, ^C typed at the master is its
 * SIGINT, a new window size its SIGWINCH); the ends (the master closed:
 * the slave reads end of file and writes EIO; the slave closed: the
 * master reads EIO); a file that is no terminal (ENOTTY).
 */
#include "ut.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#ifndef TIOCGPTPEER
#define TIOCGPTPEER 0x5441
#endif

/* A new pair: the master, and the slave opened (or -1 when open_slave
 * is false); *n its number. */
static int new_pair(int *slave, int *n, int open_slave)
{
	int m = CHECK_OK(posix_openpt(O_RDWR | O_NOCTTY));
	CHECK_EQ(grantpt(m), 0);
	CHECK_EQ(unlockpt(m), 0);
	CHECK_EQ(ioctl(m, TIOCGPTN, n), 0);
	*slave = open_slave ? CHECK_OK(open(ptsname(m), O_RDWR | O_NOCTTY)) : -1;
	return m;
}

/* Everything the master has to read, as a string: what arrives until
 * nothing more has for 200 ms (Linux hands a pty's bytes on from a
 * worker, a moment after the write). */
static const char *drain(int m, char *buf, size_t size)
{
	size_t got = 0;
	struct pollfd pf = { m, POLLIN, 0 };
	long k;
	while (got + 1 < size && poll(&pf, 1, 200) == 1 && (pf.revents & POLLIN) &&
	       (k = read(m, buf + got, size - 1 - got)) > 0)
		got += (size_t)k;
	buf[got] = 0;
	return buf;
}

static void test_names(void)
{
	int s, n;
	int m = new_pair(&s, &n, 1);
	char want[32];
	snprintf(want, sizeof want, "/dev/pts/%d", n);
	CHECK(strcmp(ptsname(m), want) == 0);
	struct stat st;
	CHECK_EQ(stat(want, &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(major(st.st_rdev), 136);
	CHECK_EQ(minor(st.st_rdev), n);
	CHECK_EQ(st.st_uid, getuid());
	struct stat fs;
	CHECK_EQ(fstat(s, &fs), 0);
	CHECK_EQ(fs.st_rdev, st.st_rdev);
	CHECK(isatty(m) && isatty(s));
	DIR *d = opendir("/dev/pts");
	CHECK(d != NULL);
	int found = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		found += strcmp(e->d_name, want + 9) == 0;
	if (d)
		closedir(d);
	CHECK_EQ(found, 1);
	/* Locked until unlockpt. */
	int m2 = CHECK_OK(posix_openpt(O_RDWR | O_NOCTTY));
	CHECK_ERR(open(ptsname(m2), O_RDWR | O_NOCTTY), EIO);
	int peer = CHECK_OK(unlockpt(m2) == 0 ? (int)ioctl(m2, TIOCGPTPEER, O_RDWR | O_NOCTTY) : -1);
	CHECK(isatty(peer));
	close(peer);
	close(m2);
	int pfd[2];
	CHECK_EQ(pipe(pfd), 0);
	struct termios tio;
	CHECK_ERR(tcgetattr(pfd[0], &tio), ENOTTY);
	close(pfd[0]);
	close(pfd[1]);
	close(s);
	close(m);
}

static void test_lines(void)
{
	int s, n;
	int m = new_pair(&s, &n, 1);
	char buf[128];
	CHECK_EQ(write(m, "hello\r", 6), 6);                     /* CR typed: NL read */
	CHECK_EQ(read(s, buf, sizeof buf), 6);
	CHECK(memcmp(buf, "hello\n", 6) == 0);
	CHECK(strcmp(drain(m, buf, sizeof buf), "hello\r\n") == 0);   /* the echo */
	CHECK_EQ(write(m, "xy\x7fz\n", 5), 5);                   /* erase edits */
	CHECK_EQ(read(s, buf, sizeof buf), 3);
	CHECK(memcmp(buf, "xz\n", 3) == 0);
	drain(m, buf, sizeof buf);
	CHECK_EQ(write(s, "out\n", 4), 4);                      /* NL shown as CR NL */
	CHECK(strcmp(drain(m, buf, sizeof buf), "out\r\n") == 0);
	CHECK_EQ(write(m, "abc\n", 4), 4);
	struct pollfd sp = { s, POLLIN, 0 };
	CHECK_EQ(poll(&sp, 1, 1000), 1);                        /* Linux hands input on later */
	int q = -1;
	CHECK_EQ(ioctl(s, FIONREAD, &q), 0);
	CHECK_EQ(q, 4);
	CHECK_EQ(tcflush(s, TCIFLUSH), 0);
	CHECK_EQ(ioctl(s, FIONREAD, &q), 0);
	CHECK_EQ(q, 0);
	drain(m, buf, sizeof buf);
	/* Raw, without echo: each byte at once. */
	struct termios tio, saved;
	CHECK_EQ(tcgetattr(s, &saved), 0);
	CHECK(saved.c_lflag & ICANON);
	tio = saved;
	cfmakeraw(&tio);
	CHECK_EQ(tcsetattr(s, TCSANOW, &tio), 0);
	CHECK_EQ(write(m, "ab", 2), 2);
	CHECK_EQ(read(s, buf, sizeof buf), 2);
	CHECK(memcmp(buf, "ab", 2) == 0);
	CHECK(strcmp(drain(m, buf, sizeof buf), "") == 0);
	CHECK_EQ(write(s, "r\n", 2), 2);                        /* no OPOST: as is */
	CHECK(strcmp(drain(m, buf, sizeof buf), "r\n") == 0);
	CHECK_EQ(tcsetattr(s, TCSANOW, &saved), 0);
	/* The window size, set at the master, seen at the slave. */
	struct winsize ws = { .ws_row = 30, .ws_col = 100 }, got;
	CHECK_EQ(ioctl(m, TIOCSWINSZ, &ws), 0);
	CHECK_EQ(ioctl(s, TIOCGWINSZ, &got), 0);
	CHECK(got.ws_row == 30 && got.ws_col == 100);
	/* poll: readable once the slave wrote. */
	struct pollfd pf = { m, POLLIN, 0 };
	CHECK_EQ(poll(&pf, 1, 0), 0);
	CHECK_EQ(write(s, "p", 1), 1);
	CHECK_EQ(poll(&pf, 1, 1000), 1);
	CHECK(pf.revents & POLLIN);
	drain(m, buf, sizeof buf);
	/* Packet mode: a status byte first, 0 for data. */
	int on = 1;
	CHECK_EQ(ioctl(m, TIOCPKT, &on), 0);
	CHECK_EQ(write(s, "k", 1), 1);
	CHECK_EQ(read(m, buf, sizeof buf), 2);
	CHECK(buf[0] == 0 && buf[1] == 'k');
	close(s);
	close(m);
}

static volatile sig_atomic_t got_int, got_winch;

static void on_sig(int sig)
{
	if (sig == SIGINT)
		got_int = 1;
	else
		got_winch = 1;
}

/* The child: a session with the slave as its terminal; it reports,
 * through its exit status, the signals the master's side sent it. */
static int session_child(const char *name, int ready)
{
	signal(SIGINT, on_sig);
	signal(SIGWINCH, on_sig);
	if (setsid() < 0)
		return 10;
	int s = open(name, O_RDWR);                             /* no O_NOCTTY: ours now */
	if (s < 0)
		return 11;
	if (tcgetsid(s) != getpid() || tcgetpgrp(s) != getpid())
		return 12;
	int t = open("/dev/tty", O_RDWR);                       /* the slave */
	if (t < 0 || write(t, "via tty\n", 8) != 8)
		return 13;
	if (write(ready, "r", 1) != 1)
		return 14;
	for (int i = 0; i < 200 && !(got_int && got_winch); i++)
		usleep(10000);
	return got_int && got_winch ? 0 : 15;
}

static void test_session(void)
{
	int s, n;
	int m = new_pair(&s, &n, 0);
	int pfd[2];
	CHECK_EQ(pipe(pfd), 0);
	const char *name = ptsname(m);
	pid_t pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		_exit(session_child(name, pfd[1]));
	}
	close(pfd[1]);
	CHECK_EQ(ut_await(pfd[0]), 0);
	close(pfd[0]);
	char buf[64];
	CHECK(strcmp(drain(m, buf, sizeof buf), "via tty\r\n") == 0);
	CHECK_EQ(write(m, "\x03", 1), 1);                       /* ^C */
	struct winsize ws = { .ws_row = 40, .ws_col = 120 };
	CHECK_EQ(ioctl(m, TIOCSWINSZ, &ws), 0);
	CHECK_EQ(ut_wait(pid), 0);
	close(m);
}

static void test_ends(void)
{
	int s, n;
	int m = new_pair(&s, &n, 1);
	close(m);
	char buf[8];
	CHECK_EQ(read(s, buf, sizeof buf), 0);                  /* hung up */
	CHECK_ERR(write(s, "x", 1), EIO);
	close(s);
	m = new_pair(&s, &n, 1);
	close(s);
	CHECK_ERR(read(m, buf, sizeof buf), EIO);               /* the slave is gone */
	close(m);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	test_names();
	test_lines();
	test_session();
	test_ends();
	return ut_done();
}
