/*
 * t_inotify: file events (inotify_init1, inotify_add_watch,
 * inotify_rm_watch) on the file system the test runs on.
 *
 * A directory's watch hears of entries made (files, directories: with
 * IN_ISDIR), renamed (IN_MOVED_FROM and IN_MOVED_TO with one cookie) and
 * removed; a file's watch of its opens, writes (two in a row merged
 * into one event), reads, closes (for writing or not), attribute
 * changes and deletion (IN_DELETE_SELF, then IN_IGNORED); IN_ONESHOT
 * ends a watch after one event; inotify_rm_watch queues IN_IGNORED.
 * Reads give whole events (a buffer too small for the next is EINVAL,
 * none queued is EAGAIN), poll and epoll see the queue, and the errors
 * of inotify_add_watch are Linux's.  dnotify (fcntl F_NOTIFY): SIGIO for
 * a directory's changes asked for, once or (DN_MULTISHOT) each time, a
 * second F_NOTIFY adding to the first's events.
 */
#include "ut.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <poll.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAXEV 32

struct ev {
	int wd;
	uint32_t mask, cookie;
	char name[64];
};

/* Every event queued now (the descriptor is non-blocking). */
static int drain(int fd, struct ev *out, int max)
{
	char buf[4096] __attribute__((aligned(8)));
	int n = 0;
	long got;
	while ((got = read(fd, buf, sizeof buf)) > 0) {
		for (long off = 0; off < got && n < max;) {
			struct inotify_event *e = (struct inotify_event *)(buf + off);
			out[n].wd = e->wd;
			out[n].mask = e->mask;
			out[n].cookie = e->cookie;
			snprintf(out[n].name, sizeof out[n].name, "%s", e->len ? e->name : "");
			n++;
			off += (long)sizeof *e + e->len;
		}
	}
	return n;
}

/* The index of the first event with mask (and name, when given) at or
 * after from, or -1. */
static int find(const struct ev *ev, int n, int from, uint32_t mask, const char *name)
{
	for (int i = from; i < n; i++)
		if (ev[i].mask == mask && (!name || strcmp(ev[i].name, name) == 0))
			return i;
	return -1;
}

static void check_directory(int in)
{
	CHECK_OK(mkdir("w", 0755));
	int wd = CHECK_OK(inotify_add_watch(in, "w", IN_CREATE | IN_DELETE | IN_MOVED_FROM |
					    IN_MOVED_TO));
	CHECK_EQ(inotify_add_watch(in, "w", IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO),
		 wd);                                   /* the same file: the same wd */
	CHECK_OK(ut_write_file("w/a", "x", 1, 0644));
	CHECK_OK(mkdir("w/d", 0755));
	CHECK_OK(rename("w/a", "w/b"));
	CHECK_OK(unlink("w/b"));
	CHECK_OK(rmdir("w/d"));
	struct ev ev[MAXEV];
	int n = drain(in, ev, MAXEV);
	CHECK_EQ(n, 6);
	int c = find(ev, n, 0, IN_CREATE, "a");
	int d = find(ev, n, 0, IN_CREATE | IN_ISDIR, "d");
	int from = find(ev, n, 0, IN_MOVED_FROM, "a");
	int to = find(ev, n, 0, IN_MOVED_TO, "b");
	int del = find(ev, n, 0, IN_DELETE, "b");
	int rmd = find(ev, n, 0, IN_DELETE | IN_ISDIR, "d");
	CHECK(c == 0 && d == 1 && from == 2 && to == 3 && del == 4 && rmd == 5);
	if (from >= 0 && to >= 0) {
		CHECK(ev[from].cookie != 0);
		CHECK_EQ(ev[from].cookie, ev[to].cookie);
	}
	CHECK_EQ(ev[0].wd, wd);
	CHECK_OK(inotify_rm_watch(in, wd));
	n = drain(in, ev, MAXEV);
	CHECK(n == 1 && ev[0].mask == IN_IGNORED && ev[0].wd == wd);
	CHECK_ERR(inotify_rm_watch(in, wd), EINVAL);
	CHECK_OK(rmdir("w"));
}

static void check_file(int in)
{
	CHECK_OK(ut_write_file("f", "", 0, 0644));
	int wd = CHECK_OK(inotify_add_watch(in, "f", IN_ALL_EVENTS));
	int fd = CHECK_OK(open("f", O_WRONLY));
	CHECK_EQ(write(fd, "ab", 2), 2);
	CHECK_EQ(write(fd, "cd", 2), 2);                /* merged with the one before */
	close(fd);
	CHECK_OK(chmod("f", 0600));
	char buf[8];
	fd = CHECK_OK(open("f", O_RDONLY));
	CHECK_EQ(read(fd, buf, sizeof buf), 4);
	close(fd);
	struct ev ev[MAXEV];
	int n = drain(in, ev, MAXEV);
	uint32_t want[] = { IN_OPEN, IN_MODIFY, IN_CLOSE_WRITE, IN_ATTRIB, IN_OPEN, IN_ACCESS,
			    IN_CLOSE_NOWRITE };
	CHECK_EQ(n, 7);
	for (int i = 0; i < n && i < 7; i++) {
		CHECK_EQ(ev[i].mask, want[i]);
		CHECK_EQ(ev[i].wd, wd);
		CHECK_EQ(ev[i].name[0], 0);
	}
	CHECK_OK(unlink("f"));
	n = drain(in, ev, MAXEV);
	CHECK(n == 3 && ev[0].mask == IN_ATTRIB && ev[1].mask == IN_DELETE_SELF &&
	      ev[2].mask == IN_IGNORED);
}

static void check_oneshot_and_reads(int in)
{
	CHECK_OK(ut_write_file("g", "", 0, 0644));
	int wd = CHECK_OK(inotify_add_watch(in, "g", IN_ATTRIB | IN_ONESHOT));
	CHECK_OK(chmod("g", 0600));
	CHECK_OK(chmod("g", 0644));                     /* the watch is gone by now */
	struct ev ev[MAXEV];
	int n = drain(in, ev, MAXEV);
	CHECK(n == 2 && ev[0].mask == IN_ATTRIB && ev[1].mask == IN_IGNORED && ev[1].wd == wd);
	/* whole events only */
	CHECK_OK(mkdir("r", 0755));
	int w2 = CHECK_OK(inotify_add_watch(in, "r", IN_CREATE));
	CHECK_OK(ut_write_file("r/longname", "", 0, 0644));
	char small[20];
	CHECK_ERR(read(in, small, sizeof small), EINVAL);   /* the name does not fit */
	struct pollfd p = { in, POLLIN, 0 };
	CHECK_EQ(poll(&p, 1, 0), 1);
	int ep = CHECK_OK(epoll_create1(0));
	struct epoll_event e = { .events = EPOLLIN }, out;
	CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, in, &e));
	CHECK_EQ(epoll_wait(ep, &out, 1, 0), 1);
	n = drain(in, ev, MAXEV);
	CHECK(n == 1 && strcmp(ev[0].name, "longname") == 0);
	CHECK_EQ(poll(&p, 1, 0), 0);
	CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0);
	char buf[64];
	CHECK_ERR(read(in, buf, sizeof buf), EAGAIN);
	CHECK_OK(inotify_rm_watch(in, w2));
	drain(in, ev, MAXEV);
	CHECK_OK(unlink("r/longname"));
	CHECK_OK(rmdir("r"));
	close(ep);
}

static void check_errors(int in)
{
	CHECK_OK(ut_write_file("h", "", 0, 0644));
	CHECK_ERR(inotify_add_watch(in, "h", 0), EINVAL);
	CHECK_ERR(inotify_add_watch(99, "h", IN_OPEN), EBADF);
	int fd = CHECK_OK(open("h", O_RDONLY));
	CHECK_ERR(inotify_add_watch(fd, "h", IN_OPEN), EINVAL);
	close(fd);
	CHECK_ERR(inotify_add_watch(in, "nothere", IN_OPEN), ENOENT);
	CHECK_ERR(inotify_add_watch(in, "h", IN_OPEN | IN_ONLYDIR), ENOTDIR);
	int wd = CHECK_OK(inotify_add_watch(in, "h", IN_OPEN));
	CHECK_ERR(inotify_add_watch(in, "h", IN_OPEN | IN_MASK_CREATE), EEXIST);
	CHECK_ERR(inotify_add_watch(in, "h", IN_OPEN | IN_MASK_CREATE | IN_MASK_ADD), EINVAL);
	CHECK_EQ(inotify_add_watch(in, "h", IN_CLOSE | IN_MASK_ADD), wd);
	CHECK_ERR(inotify_init1(5), EINVAL);
	CHECK_OK(inotify_rm_watch(in, wd));
	struct ev ev[MAXEV];
	drain(in, ev, MAXEV);
	CHECK_OK(unlink("h"));
}

static volatile sig_atomic_t sigios;

static void on_sigio(int sig)
{
	(void)sig;
	sigios++;
}

/* dnotify (fcntl F_NOTIFY): SIGIO for an entry made in a directory,
 * once unless DN_MULTISHOT; none after F_NOTIFY 0 or for an event not
 * asked for; ENOTDIR on a file. */
static void check_dnotify(void)
{
	signal(SIGIO, on_sigio);
	CHECK_EQ(mkdir("dn", 0755), 0);
	int d = CHECK_OK(open("dn", O_RDONLY | O_DIRECTORY));
	CHECK_EQ(fcntl(d, F_NOTIFY, DN_CREATE), 0);
	close(CHECK_OK(open("dn/a", O_CREAT | O_WRONLY, 0644)));
	CHECK_EQ(sigios, 1);
	close(CHECK_OK(open("dn/b", O_CREAT | O_WRONLY, 0644)));
	CHECK_EQ(sigios, 1);                    /* one shot */
	CHECK_EQ(fcntl(d, F_NOTIFY, DN_CREATE | DN_DELETE | DN_MULTISHOT), 0);
	close(CHECK_OK(open("dn/c", O_CREAT | O_WRONLY, 0644)));
	CHECK_EQ(unlink("dn/a"), 0);
	CHECK_EQ(sigios, 3);
	CHECK_EQ(fcntl(d, F_NOTIFY, DN_ATTRIB | DN_MULTISHOT), 0);
	close(CHECK_OK(open("dn/d", O_CREAT | O_WRONLY, 0644)));
	CHECK_EQ(sigios, 4);                    /* added to, not replaced: creation still */
	CHECK_EQ(fcntl(d, F_NOTIFY, 0), 0);
	CHECK_EQ(unlink("dn/b"), 0);
	CHECK_EQ(sigios, 4);                    /* ended */
	int f = CHECK_OK(open("dn/c", O_RDONLY));
	CHECK_ERR(fcntl(f, F_NOTIFY, DN_CREATE), ENOTDIR);
	close(f);
	close(d);
	signal(SIGIO, SIG_DFL);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	int in = CHECK_OK(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
	CHECK_EQ(fcntl(in, F_GETFD), FD_CLOEXEC);
	char buf[64];
	CHECK_ERR(read(in, buf, sizeof buf), EAGAIN);
	check_directory(in);
	check_file(in);
	check_oneshot_and_reads(in);
	check_errors(in);
	check_dnotify();
	close(in);
	return ut_done();
}
