/*
 * echod: the servers of the frame-injection judge (tests/frames_check.py,
 * issue 35), one process on poll(2):
 *
 *   TCP port ECHO   echoes every byte of every connection (many at once)
 *   TCP port SINK   listens with a backlog of BACKLOG and never accepts:
 *                   the target of a SYN flood
 *   UDP port ECHO   echoes each datagram to its sender; these are
 *                   commands instead:
 *                     sockstat  answered with /proc/net/sockstat
 *                     netdev    answered with /proc/net/dev
 *                     hog       a child takes anonymous memory until
 *                               MemFree is below HOG_LEAVE_KB, answers
 *                               "hog TAKEN_KB FREE_KB" (or "hog failed
 *                               ...")
 *                               and holds it, taking more whenever the
 *                               kernel frees some, until "unhog"
 *                     unhog     the child is killed and reaped; answered
 *                               "unhog FREE_KB"
 *                     done      ends the program (exit status 0; a hog
 *                               still held is let go first)
 *
 *   usage: echod [ECHO SINK BACKLOG]      (defaults 7 8 16)
 *
 * It prints "echod: listening on ECHO and SINK" once all three sockets
 * are ready, and one line for each failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/memhog.h"

#define MAX_CONNS 64
#define HOG_LEAVE_KB 768                /* what the hog leaves free */

static pid_t hog_pid;                   /* the memory hog, 0 for none */

static int open_socket(int type, int port, int backlog)
{
	int fd = socket(AF_INET, type, 0);
	int one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
	if (fd < 0) {
		perror("echod: socket");
		exit(1);
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		fprintf(stderr, "echod: bind to port %d: %s\n", port, strerror(errno));
		exit(1);
	}
	if (type == SOCK_STREAM && listen(fd, backlog) < 0) {
		perror("echod: listen");
		exit(1);
	}
	return fd;
}

static int port_arg(const char *s, int lo)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || v < lo || v > 65535) {
		fprintf(stderr, "echod: bad number '%s'\n", s);
		exit(2);
	}
	return (int)v;
}

/* The file at path into buf (at most size bytes): its length, 0 on failure. */
static ssize_t read_file(const char *path, char *buf, size_t size)
{
	int f = open(path, O_RDONLY);
	ssize_t n = f < 0 ? 0 : read(f, buf, size);
	if (f >= 0)
		close(f);
	return n < 0 ? 0 : n;
}

static long mem_free_kb(void)
{
	return meminfo_kb("MemFree:");
}

/* The hog child: take the memory, say so to whoever asked, then keep it
 * taken until killed. */
static void hog(int fd, const struct sockaddr_in *to)
{
	char line[96];
	long kb = memhog_take(HOG_LEAVE_KB);
	int n = kb < 0 ? snprintf(line, sizeof line, "hog failed: %s", strerror(errno))
		       : snprintf(line, sizeof line, "hog %ld %ld", kb, mem_free_kb());
	sendto(fd, line, (size_t)n, 0, (const struct sockaddr *)to, sizeof *to);
	for (;;) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		memhog_take(HOG_LEAVE_KB);
	}
}

static void unhog(void)
{
	if (hog_pid > 0) {
		kill(hog_pid, SIGKILL);
		waitpid(hog_pid, NULL, 0);
	}
	hog_pid = 0;
}

/* A command datagram (buf, n bytes): true when it was one, with the
 * answer (if any) in buf and its length in *n. */
static int command(int fd, char *buf, size_t size, ssize_t *n, const struct sockaddr_in *from)
{
	if (*n == 8 && memcmp(buf, "sockstat", 8) == 0)
		*n = read_file("/proc/net/sockstat", buf, size);
	else if (*n == 6 && memcmp(buf, "netdev", 6) == 0)
		*n = read_file("/proc/net/dev", buf, size);
	else if (*n == 3 && memcmp(buf, "hog", 3) == 0 && !hog_pid) {
		hog_pid = fork();
		if (hog_pid == 0)
			hog(fd, from);
		*n = hog_pid < 0 ? snprintf(buf, size, "hog failed: fork: %s", strerror(errno)) : 0;
		if (hog_pid < 0)
			hog_pid = 0;
	} else if (*n == 5 && memcmp(buf, "unhog", 5) == 0) {
		unhog();
		*n = snprintf(buf, size, "unhog %ld", mem_free_kb());
	} else
		return 0;
	return 1;
}

/* Echo one datagram, or answer a command; true when it was "done". */
static int udp_echo(int fd)
{
	char buf[2048];
	struct sockaddr_in from;
	socklen_t len = sizeof from;
	ssize_t n = recvfrom(fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &len);
	if (n < 0)
		return 0;
	if (n == 4 && memcmp(buf, "done", 4) == 0) {
		unhog();
		return 1;
	}
	if (command(fd, buf, sizeof buf, &n, &from) && n == 0)
		return 0;
	sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, len);
	return 0;
}

/* Echo what connection fd has; false once it is over. */
static int tcp_echo(int fd)
{
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof buf);
	if (n <= 0)
		return 0;
	for (ssize_t off = 0; off < n;) {
		ssize_t w = write(fd, buf + off, (size_t)(n - off));
		if (w <= 0)
			return 0;
		off += w;
	}
	return 1;
}

int main(int argc, char **argv)
{
	if (argc != 1 && argc != 4) {
		fprintf(stderr, "usage: echod [ECHO SINK BACKLOG]\n");
		return 2;
	}
	int echo = argc == 4 ? port_arg(argv[1], 1) : 7;
	int sink = argc == 4 ? port_arg(argv[2], 1) : 8;
	int backlog = argc == 4 ? port_arg(argv[3], 0) : 16;
	struct pollfd p[3 + MAX_CONNS];
	p[0].fd = open_socket(SOCK_STREAM, echo, 16);
	p[1].fd = open_socket(SOCK_DGRAM, echo, 0);
	p[2].fd = open_socket(SOCK_STREAM, sink, backlog);
	p[2].events = 0;                        /* never accepted */
	p[0].events = p[1].events = POLLIN;
	int n = 3;
	printf("echod: listening on %d and %d\n", echo, sink);
	fflush(stdout);
	for (;;) {
		if (poll(p, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("echod: poll");
			return 1;
		}
		if ((p[1].revents & POLLIN) && udp_echo(p[1].fd))
			return 0;
		if ((p[0].revents & POLLIN) && n < 3 + MAX_CONNS) {
			int c = accept(p[0].fd, NULL, NULL);
			if (c >= 0) {
				p[n].fd = c;
				p[n].events = POLLIN;
				p[n++].revents = 0;
			}
		}
		for (int i = 3; i < n; i++) {
			if (p[i].revents && !tcp_echo(p[i].fd)) {
				close(p[i].fd);
				p[i--] = p[--n];
			}
		}
	}
}
