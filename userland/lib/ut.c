/*
 * ut.c: the test framework's counters, output, scratch directories and
 * child processes.  See ut.h for how a test program uses it.
 *
 * Output is formatted into a local buffer and written to fd 1 with one
 * write() call per line; stdio is never used, so forked children cannot
 * repeat buffered text.
 */
#include "ut.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int ut_passed, ut_failed;
const char *ut_self = "";
void *ut_badptr = (void *)1;
void *ut_kernptr = (void *)0xffff800000000000UL;

static char self_path[PATH_MAX];
static char scratch_path[PATH_MAX]; /* empty when no scratch dir exists */
static char start_dir[PATH_MAX];
static pid_t scratch_owner;          /* only this process removes it */

static void write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void vsay(const char *prefix, const char *fmt, va_list ap)
{
	char line[1024];
	int n = snprintf(line, sizeof line, "%s", prefix);
	n += vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
	if (n > (int)sizeof line - 2)
		n = sizeof line - 2;
	line[n++] = '\n';
	write_all(1, line, n);
}

void ut_say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay("", fmt, ap);
	va_end(ap);
}

void ut_note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay("note: ", fmt, ap);
	va_end(ap);
}

void ut_check(int ok, const char *file, int line, const char *fmt, ...)
{
	int saved = errno;
	if (ok) {
		ut_passed++;
		errno = saved;
		return;
	}
	ut_failed++;
	char prefix[256];
	snprintf(prefix, sizeof prefix, "FAIL %s:%d: ", file, line);
	va_list ap;
	va_start(ap, fmt);
	vsay(prefix, fmt, ap);
	va_end(ap);
	errno = saved;
}

static void print_counts(void)
{
	ut_say("%d passed, %d failed", ut_passed, ut_failed);
}

static void on_alarm(int sig)
{
	(void)sig;
	/* Not async-signal-safe in general, but the program is stuck anyway. */
	ut_failed++;
	ut_say("FAIL timeout: no progress after %d seconds", UT_TIMEOUT);
	if (scratch_path[0] && getpid() == scratch_owner) {
		if (chdir(start_dir) != 0)
			(void)chdir("/");
		ut_rmtree(scratch_path);
	}
	print_counts();
	_exit(1);
}

void ut_init(int argc, char **argv)
{
	(void)argc;
	if (argv && argv[0]) {
		if (argv[0][0] == '/' || !getcwd(self_path, sizeof self_path))
			snprintf(self_path, sizeof self_path, "%s", argv[0]);
		else {
			size_t n = strlen(self_path);
			snprintf(self_path + n, sizeof self_path - n, "/%s", argv[0]);
		}
		ut_self = self_path;
	}
	/* No core files from the children that die on purpose. */
	struct rlimit nocore = { 0, 0 };
	setrlimit(RLIMIT_CORE, &nocore);
	signal(SIGALRM, on_alarm);
	ut_alarm(UT_TIMEOUT);
}

/* alarm() as the system call itself: musl's alarm() uses setitimer. */
unsigned ut_alarm(unsigned seconds)
{
	long r = syscall(SYS_alarm, seconds);
	return r < 0 ? 0 : (unsigned)r;
}

int ut_done(void)
{
	if (scratch_path[0] && getpid() == scratch_owner) {
		if (chdir(start_dir) != 0)
			(void)chdir("/");
		if (ut_rmtree(scratch_path) != 0)
			ut_check(0, __FILE__, __LINE__, "scratch %s removed",
				 scratch_path);
		scratch_path[0] = 0;
	}
	print_counts();
	return ut_failed ? 1 : 0;
}

const char *ut_scratch(void)
{
	static int serial;
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (!getcwd(start_dir, sizeof start_dir))
		strcpy(start_dir, "/");
	/* "ut<pid>.<n>": short, because S5 names hold 14 bytes at most. */
	snprintf(scratch_path, sizeof scratch_path, "%s/ut%d.%d", tmp, (int)getpid(),
		 serial++);
	ut_rmtree(scratch_path); /* left over by a killed earlier run */
	if (mkdir(scratch_path, 0755) != 0 || chmod(scratch_path, 0755) != 0 ||
	    chdir(scratch_path) != 0) {
		ut_say("FAIL cannot make scratch directory %s: %s",
		       scratch_path, strerror(errno));
		ut_failed++;
		print_counts();
		exit(1);
	}
	scratch_owner = getpid();
	return scratch_path;
}

/* Remove path and everything under it; 0 on success or when absent. */
int ut_rmtree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	chmod(path, 0700);
	DIR *d = opendir(path);
	if (d) {
		struct dirent *e;
		char child[PATH_MAX];
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(child, sizeof child, "%s/%s", path, e->d_name);
			ut_rmtree(child);
		}
		closedir(d);
	}
	return rmdir(path);
}

int ut_is_root(void)
{
	return geteuid() == 0;
}

/*
 * Become uid/gid 65534 when running as root (supplementary groups dropped
 * first; a kernel without setgroups is tolerated).  Does nothing for an
 * unprivileged user, who already is one.  Returns 0 on success.
 */
int ut_drop_privileges(void)
{
	if (!ut_is_root())
		return 0;
	(void)setgroups(0, NULL);
	if (setgid(UT_NOBODY) != 0 || setuid(UT_NOBODY) != 0)
		return -1;
	return geteuid() == UT_NOBODY ? 0 : -1;
}

int ut_wait(pid_t pid)
{
	int status;
	pid_t r;
	do
		r = waitpid(pid, &status, 0);
	while (r < 0 && errno == EINTR);
	return r == pid ? status : -1;
}

int ut_await(int fd)
{
	char c;
	return read(fd, &c, 1) == 1 ? 0 : -1;
}

void ut_tell(int fd)
{
	if (write(fd, "x", 1) != 1)
		_exit(3);
}

void ut_child(const char *name, void (*fn)(void *), void *arg, int unprivileged)
{
	int fds[2];
	if (pipe(fds) != 0) {
		ut_check(0, __FILE__, __LINE__, "pipe for child %s: %s", name,
			 strerror(errno));
		return;
	}
	pid_t pid = fork();
	if (pid < 0) {
		ut_check(0, __FILE__, __LINE__, "fork for child %s: %s", name,
			 strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0) {
		close(fds[0]);
		ut_passed = ut_failed = 0;
		if (unprivileged && ut_drop_privileges() != 0)
			ut_check(0, __FILE__, __LINE__,
				 "child %s cannot drop privileges: %s", name,
				 strerror(errno));
		else
			fn(arg);
		int counts[2] = { ut_passed, ut_failed };
		write_all(fds[1], (const char *)counts, sizeof counts);
		_exit(0);
	}
	close(fds[1]);
	int counts[2];
	size_t got = 0;
	while (got < sizeof counts) {
		ssize_t r = read(fds[0], (char *)counts + got, sizeof counts - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fds[0]);
	int status = ut_wait(pid);
	if (got == sizeof counts) {
		ut_passed += counts[0];
		ut_failed += counts[1];
	}
	ut_check(got == sizeof counts && status == 0, __FILE__, __LINE__,
		 "child %s finished and reported (status 0x%x)", name, status);
}

int ut_unprivileged(const char *name, void (*fn)(void *), void *arg)
{
	if (!ut_is_root()) {
		ut_note("skipped %s: needs root to become another user", name);
		return 0;
	}
	ut_child(name, fn, arg, 1);
	return 1;
}

int ut_write_file(const char *path, const void *data, size_t len, int mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd < 0)
		return -1;
	ssize_t w = write(fd, data, len);
	close(fd);
	return w == (ssize_t)len ? 0 : -1;
}

long ut_read_file(const char *path, void *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t r = read(fd, buf, len);
	close(fd);
	return r;
}

/* The index of name among the words of line (after its "Group:"), or -1. */
static int snmp_index(const char *line, const char *name)
{
	int i = 0;
	size_t n = strlen(name);
	const char *eol = strchr(line, '\n');
	for (const char *w = strchr(line, ' '); w && (!eol || w < eol); w = strchr(w + 1, ' '), i++)
		if (strncmp(w + 1, name, n) == 0 && (w[1 + n] == ' ' || w[1 + n] == '\n' ||
						     w[1 + n] == 0))
			return i;
	return -1;
}

long long ut_snmp(const char *group, const char *name)
{
	return ut_snmp_in("/proc/net/snmp", group, name);
}

long long ut_snmp_in(const char *path, const char *group, const char *name)
{
	static char buf[16384];
	long n = ut_read_file(path, buf, sizeof buf - 1);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char head[64];
	snprintf(head, sizeof head, "%s:", group);
	size_t hl = strlen(head);
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, head, hl) != 0)
			continue;
		int at = snmp_index(l, name);
		char *v = strchr(l, '\n');             /* the line of values follows */
		if (at < 0 || !v || strncmp(v + 1, head, hl) != 0)
			return -1;
		char *p = v + 1 + hl;
		for (int i = 0; i < at; i++)
			strtoll(p, &p, 10);
		return strtoll(p, NULL, 10);
	}
	return -1;
}

long ut_proc_number(const char *path, const char *field)
{
	char buf[16384];
	long n = ut_read_file(path, buf, sizeof buf - 1);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	size_t len = strlen(field);
	for (char *l = buf; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
		if (strncmp(l, field, len) == 0)
			return strtol(l + len, NULL, 10);
	return -1;
}

int ut_readable(int fd, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	return poll(&p, 1, ms) == 1;
}

unsigned short ut_inet_cksum(const void *data, size_t len)
{
	const unsigned char *b = data;
	unsigned long s = 0;
	for (; len >= 2; b += 2, len -= 2)
		s += (unsigned long)(b[0] << 8 | b[1]);
	if (len)
		s += (unsigned long)b[0] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return htons((unsigned short)~s);
}
