/*
 * t_calls: the calls programs ask for at start-up and in passing.
 *
 * prctl (the name, the parent death signal sent when the parent exits,
 * dumpable, keepcaps, no_new_privs, the capability bounding set, unknown
 * options); set_robust_list and get_robust_list; madvise (argument
 * checks, ENOMEM for a hole, MADV_DONTNEED making private anonymous
 * memory read as zeros again); utimensat, utimes, futimesat and utime
 * (explicit times, UTIME_NOW and UTIME_OMIT, a descriptor's file, another
 * user's EPERM and EACCES, the errors); sendfile (with and without an
 * offset, into a pipe, the errors); rseq's and clone3's bad sizes;
 * sethostname and setdomainname (in a UTS namespace of the test's own on
 * Linux, root only, 64 bytes at most); clone with CLONE_VM|CLONE_VFORK
 * and a child stack, and posix_spawn, which uses it.
 */
#include "ut.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

static void test_prctl_name(void)
{
	char name[32];
	memset(name, 'x', sizeof name);
	CHECK_OK(prctl(PR_SET_NAME, "t_calls-renamed-long-name"));
	CHECK_OK(prctl(PR_GET_NAME, name));
	CHECK_EQ(strcmp(name, "t_calls-renamed"), 0); /* 15 bytes and a NUL */
	CHECK_EQ(name[16], 'x');                       /* 16 bytes written */
	CHECK_OK(prctl(PR_SET_NAME, "short"));
	CHECK_OK(prctl(PR_GET_NAME, name));
	CHECK_EQ(strcmp(name, "short"), 0);
	CHECK_ERR(prctl(PR_SET_NAME, UT_BADPTR), EFAULT);
	CHECK_ERR(prctl(PR_GET_NAME, UT_KERNPTR), EFAULT);
	/* A forked child inherits the name. */
	pid_t pid = fork();
	if (pid == 0) {
		char n[16];
		_exit(prctl(PR_GET_NAME, n) == 0 && strcmp(n, "short") == 0 ? 0 : 1);
	}
	CHECK_EQ(ut_wait(pid), 0);
}

static void test_prctl_flags(void)
{
	int sig = -1;
	CHECK_OK(prctl(PR_GET_PDEATHSIG, &sig));
	CHECK_EQ(sig, 0);
	CHECK_OK(prctl(PR_SET_PDEATHSIG, SIGUSR1));
	CHECK_OK(prctl(PR_GET_PDEATHSIG, &sig));
	CHECK_EQ(sig, SIGUSR1);
	CHECK_OK(prctl(PR_SET_PDEATHSIG, 0));
	CHECK_ERR(prctl(PR_SET_PDEATHSIG, 65), EINVAL);
	CHECK_ERR(prctl(PR_GET_PDEATHSIG, UT_BADPTR), EFAULT);

	CHECK_EQ(prctl(PR_GET_DUMPABLE), 1);
	CHECK_ERR(prctl(PR_SET_DUMPABLE, 3), EINVAL);
	CHECK_OK(prctl(PR_SET_KEEPCAPS, 1));
	CHECK_EQ(prctl(PR_GET_KEEPCAPS), 1);
	CHECK_OK(prctl(PR_SET_KEEPCAPS, 0));
	CHECK_EQ(prctl(PR_GET_KEEPCAPS), 0);
	CHECK_ERR(prctl(PR_SET_KEEPCAPS, 2), EINVAL);
	CHECK_EQ(prctl(PR_CAPBSET_READ, 0), 1);         /* CAP_CHOWN */
	CHECK_ERR(prctl(PR_CAPBSET_READ, 1000), EINVAL);
	CHECK_ERR(prctl(PR_GET_NO_NEW_PRIVS, 1, 0, 0, 0), EINVAL);
	CHECK_ERR(prctl(PR_SET_NO_NEW_PRIVS, 2, 0, 0, 0), EINVAL);
	CHECK_ERR(prctl(99999, 0, 0, 0, 0), EINVAL);

	/* no_new_privs sticks and is inherited: in a child, not to keep it. */
	pid_t pid = fork();
	if (pid == 0) {
		int ok = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 0 &&
			 prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
			 prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1;
		pid_t g = fork();
		if (g == 0)
			_exit(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ? 0 : 1);
		int st;
		ok = ok && waitpid(g, &st, 0) == g && WIFEXITED(st) && WEXITSTATUS(st) == 0;
		_exit(ok ? 0 : 1);
	}
	CHECK_EQ(ut_wait(pid), 0);
}

/* The parent death signal: a grandchild asks for SIGUSR1 when its parent
 * (our child) exits, and reports through a pipe that it got it. */
static volatile sig_atomic_t got_usr1;
static void on_usr1(int s) { (void)s; got_usr1 = 1; }

static void test_pdeathsig(void)
{
	int fds[2];
	CHECK_OK(pipe(fds));
	pid_t child = fork();
	if (child == 0) {
		int ready[2];
		if (pipe(ready) != 0)
			_exit(2);
		pid_t g = fork();
		if (g == 0) {
			signal(SIGUSR1, on_usr1);
			prctl(PR_SET_PDEATHSIG, SIGUSR1);
			close(ready[0]);
			close(ready[1]);            /* tells the parent to exit */
			for (int i = 0; i < 500 && !got_usr1; i++) {
				struct timespec ts = { 0, 10000000 };
				nanosleep(&ts, NULL);
			}
			char c = got_usr1 ? 'y' : 'n';
			(void)!write(fds[1], &c, 1);
			_exit(0);
		}
		close(ready[1]);
		char c;
		(void)!read(ready[0], &c, 1);   /* end of file once g is set */
		_exit(0);
	}
	close(fds[1]);
	CHECK_EQ(ut_wait(child), 0);
	char c = 0;
	CHECK_EQ(read(fds[0], &c, 1), 1);
	CHECK_EQ(c, 'y');
	close(fds[0]);
}

static void test_robust_list(void)
{
	static uint64_t head[3];
	CHECK_OK(syscall(SYS_set_robust_list, head, sizeof head));
	void *got = NULL;
	size_t len = 0;
	CHECK_OK(syscall(SYS_get_robust_list, 0, &got, &len));
	CHECK(got == (void *)head);
	CHECK_EQ(len, 24);
	CHECK_OK(syscall(SYS_get_robust_list, getpid(), &got, &len));
	CHECK(got == (void *)head);
	CHECK_ERR(syscall(SYS_set_robust_list, head, 23), EINVAL);
	CHECK_ERR(syscall(SYS_set_robust_list, head, 0), EINVAL);
	CHECK_ERR(syscall(SYS_get_robust_list, 0, UT_BADPTR, &len), EFAULT);
	CHECK_ERR(syscall(SYS_get_robust_list, 0, &got, UT_BADPTR), EFAULT);
	CHECK_ERR(syscall(SYS_get_robust_list, 999999, &got, &len), ESRCH);
}

static void test_madvise(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED);
	memset(m, 0x5a, 4 * pg);
	CHECK_OK(madvise(m, 4 * pg, MADV_NORMAL));
	CHECK_OK(madvise(m, 4 * pg, MADV_WILLNEED));
	CHECK_OK(madvise(m, 4 * pg, MADV_SEQUENTIAL));
	CHECK_OK(madvise(m, 0, MADV_NORMAL));
	CHECK_EQ(m[pg], 0x5a);
	CHECK_OK(madvise(m + pg, 2 * pg, MADV_DONTNEED));
	CHECK_EQ(m[0], 0x5a);
	CHECK_EQ(m[pg], 0);
	CHECK_EQ(m[3 * pg - 1], 0);
	CHECK_EQ(m[3 * pg], 0x5a);
	m[pg] = 1;                      /* still mapped, writable */
	CHECK_EQ(m[pg], 1);
	CHECK_ERR(madvise(m + 1, pg, MADV_NORMAL), EINVAL);
	CHECK_ERR(madvise(m, pg, 9999), EINVAL);
	CHECK_ERR(madvise(m, (size_t)-1, MADV_NORMAL), EINVAL);
	CHECK_OK(munmap(m + 2 * pg, pg));
	CHECK_ERR(madvise(m, 4 * pg, MADV_WILLNEED), ENOMEM);
	CHECK_ERR(madvise(m, 4 * pg, MADV_DONTNEED), ENOMEM);
	munmap(m, 4 * pg);
}

static time_t mtime_of(const char *path, time_t *atime)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	if (atime)
		*atime = st.st_atime;
	return st.st_mtime;
}

struct times_arg { const char *path; };

static void times_as_other(void *arg)
{
	const char *path = ((struct times_arg *)arg)->path;
	struct timespec ts[2] = { { 1000, 0 }, { 2000, 0 } };
	CHECK_ERR(utimensat(AT_FDCWD, path, ts, 0), EPERM);
	CHECK_ERR(utimensat(AT_FDCWD, path, NULL, 0), EACCES);
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1].tv_nsec = UTIME_OMIT;
	CHECK_OK(utimensat(AT_FDCWD, path, ts, 0)); /* nothing to do */
}

static void times_writable_other(void *arg)
{
	const char *path = ((struct times_arg *)arg)->path;
	CHECK_OK(utimensat(AT_FDCWD, path, NULL, 0));     /* may write: may touch */
	struct timespec ts[2] = { { 0, UTIME_NOW }, { 0, UTIME_NOW } };
	CHECK_OK(utimensat(AT_FDCWD, path, ts, 0));
	ts[1].tv_sec = 5;
	ts[1].tv_nsec = 0;
	CHECK_ERR(utimensat(AT_FDCWD, path, ts, 0), EPERM);
}

static void test_file_times(void)
{
	CHECK_OK(ut_write_file("tf", "data", 4, 0644));
	struct timespec ts[2] = { { 1000000000, 0 }, { 1100000000, 500 } };
	CHECK_OK(utimensat(AT_FDCWD, "tf", ts, 0));
	time_t at;
	CHECK_EQ(mtime_of("tf", &at), 1100000000);
	CHECK_EQ(at, 1000000000);

	/* UTIME_OMIT keeps one, UTIME_NOW sets it to now. */
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1].tv_nsec = UTIME_NOW;
	time_t before = time(NULL);
	CHECK_OK(utimensat(AT_FDCWD, "tf", ts, 0));
	time_t m = mtime_of("tf", &at);
	CHECK_EQ(at, 1000000000);
	CHECK(m >= before - 1 && m <= time(NULL) + 1);

	/* utimes, futimesat, utime, and a descriptor (a NULL path). */
	struct timeval tv[2] = { { 1200000000, 0 }, { 1300000000, 999999 } };
	CHECK_OK(utimes("tf", tv));
	CHECK_EQ(mtime_of("tf", &at), 1300000000);
	CHECK_EQ(at, 1200000000);
	tv[1].tv_sec = 1310000000;
	CHECK_OK(syscall(SYS_futimesat, AT_FDCWD, "tf", tv));
	CHECK_EQ(mtime_of("tf", NULL), 1310000000);
	struct utimbuf ub = { 1400000000, 1500000000 };
	CHECK_OK(utime("tf", &ub));
	CHECK_EQ(mtime_of("tf", &at), 1500000000);
	int fd = open("tf", O_RDONLY);
	CHECK(fd >= 0);
	ts[0] = (struct timespec){ 1600000000, 0 };
	ts[1] = (struct timespec){ 1650000000, 0 };
	CHECK_OK(syscall(SYS_utimensat, fd, NULL, ts, 0));
	CHECK_EQ(mtime_of("tf", NULL), 1650000000);
	ts[1].tv_sec = 1660000000;
	CHECK_OK(utimensat(fd, "", ts, AT_EMPTY_PATH));
	CHECK_EQ(mtime_of("tf", NULL), 1660000000);
	CHECK_OK(futimens(fd, NULL));
	CHECK(mtime_of("tf", NULL) >= before - 1);
	close(fd);

	/* Errors. */
	ts[0].tv_nsec = 1000000000;
	CHECK_ERR(utimensat(AT_FDCWD, "tf", ts, 0), EINVAL);
	ts[0].tv_nsec = -1;
	CHECK_ERR(utimensat(AT_FDCWD, "tf", ts, 0), EINVAL);
	CHECK_ERR(utimensat(AT_FDCWD, "tf", NULL, 0x4), EINVAL);
	CHECK_ERR(utimensat(AT_FDCWD, "nope", NULL, 0), ENOENT);
	CHECK_ERR(utimensat(AT_FDCWD, "", NULL, 0), ENOENT);
	CHECK_ERR(utimensat(AT_FDCWD, UT_BADPTR, NULL, 0), EFAULT);
	CHECK_ERR(syscall(SYS_utimensat, AT_FDCWD, "tf", UT_BADPTR, 0), EFAULT);
	CHECK_ERR(syscall(SYS_utimensat, AT_FDCWD, NULL, NULL, 0), EFAULT);
	CHECK_ERR(syscall(SYS_utimensat, 999, NULL, NULL, 0), EBADF);
	CHECK_ERR(utimensat(999, "tf", NULL, 0), EBADF);
	CHECK_ERR(utimensat(AT_FDCWD, "tf/x", NULL, 0), ENOTDIR);
	tv[0].tv_usec = 1000000;
	CHECK_ERR(syscall(SYS_utimes, "tf", tv), EINVAL);
	tv[0].tv_usec = -1;
	CHECK_ERR(syscall(SYS_utimes, "tf", tv), EINVAL);
	CHECK_ERR(syscall(SYS_utimes, UT_BADPTR, NULL), EFAULT);
	CHECK_ERR(syscall(SYS_utimes, "tf", UT_BADPTR), EFAULT);
	CHECK_ERR(utime("nope", NULL), ENOENT);

	/* Another user: EPERM for explicit times, EACCES for now without
	 * write permission, and now allowed once the file is writable. */
	struct times_arg a = { "tf" };
	if (ut_unprivileged("times of another's file", times_as_other, &a)) {
		CHECK_OK(chmod("tf", 0666));
		ut_unprivileged("touching a writable file", times_writable_other, &a);
	}
}

static void test_sendfile(void)
{
	char data[10000];
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (char)('a' + i % 26);
	CHECK_OK(ut_write_file("src", data, sizeof data, 0644));
	int in = open("src", O_RDONLY);
	int out = open("dst", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(in >= 0 && out >= 0);
	/* From the file's offset, which moves. */
	CHECK_EQ(sendfile(out, in, NULL, 4000), 4000);
	CHECK_EQ(lseek(in, 0, SEEK_CUR), 4000);
	/* From an offset given, which moves instead of the file's. */
	off_t off = 4000;
	CHECK_EQ(sendfile(out, in, &off, 100000), 6000);
	CHECK_EQ(off, 10000);
	CHECK_EQ(lseek(in, 0, SEEK_CUR), 4000);
	CHECK_EQ(sendfile(out, in, &off, 10), 0);   /* at the end */
	close(out);
	char back[10001];
	CHECK_EQ(ut_read_file("dst", back, sizeof back), 10000);
	CHECK(memcmp(back, data, sizeof data) == 0);

	/* Into a pipe. */
	int fds[2];
	CHECK_OK(pipe(fds));
	off = 26;
	CHECK_EQ(sendfile(fds[1], in, &off, 26), 26);
	char buf[26];
	CHECK_EQ(read(fds[0], buf, 26), 26);
	CHECK(memcmp(buf, data, 26) == 0);

	/* Errors. */
	CHECK_ERR(sendfile(fds[1], 999, NULL, 1), EBADF);
	CHECK_ERR(sendfile(999, in, NULL, 1), EBADF);
	CHECK_ERR(sendfile(in, in, NULL, 1), EBADF);       /* not open for writing */
	int wo = open("dst", O_WRONLY);
	CHECK_ERR(sendfile(fds[1], wo, NULL, 1), EBADF);   /* not open for reading */
	close(wo);
	int app = open("dst", O_WRONLY | O_APPEND);
	CHECK_ERR(sendfile(app, in, NULL, 1), EINVAL);
	close(app);
	off = -1;
	CHECK_ERR(sendfile(fds[1], in, &off, 1), EINVAL);
	CHECK_ERR(sendfile(fds[1], in, UT_BADPTR, 1), EFAULT);
	close(fds[0]);
	close(fds[1]);
	close(in);
}

/* posix_spawn's way (glibc's, after clone3's ENOSYS; musl's always):
 * clone with CLONE_VM|CLONE_VFORK and a stack of the caller's. */
static volatile int clone_saw;
static char clone_stack[64 * 1024] __attribute__((aligned(16)));

static int clone_child(void *arg)
{
	clone_saw = *(int *)arg;        /* the caller's memory, shared */
	_exit(7);
}

static void test_spawn(void)
{
	int token = 42;
	clone_saw = 0;
	pid_t pid = clone(clone_child, clone_stack + sizeof clone_stack,
			  CLONE_VM | CLONE_VFORK | SIGCHLD, &token);
	CHECK(pid > 0);
	CHECK_EQ(clone_saw, 42);        /* CLONE_VFORK: the child has run */
	int st = 0;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);

	char *argv[] = { "sh", "-c", "exit 5", NULL };
	CHECK_EQ(posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ), 0);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 5);
	char *none[] = { "nothing", NULL };
	CHECK_EQ(posix_spawn(&pid, "/nonexistent/prog", NULL, NULL, none, environ), ENOENT);
	/* File actions run in the child: its output goes to a file. */
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "spawned", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	char *echo[] = { "sh", "-c", "echo spawned", NULL };
	CHECK_EQ(posix_spawn(&pid, "/bin/sh", &fa, NULL, echo, environ), 0);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	posix_spawn_file_actions_destroy(&fa);
	char out[16] = { 0 };
	CHECK_EQ(ut_read_file("spawned", out, sizeof out - 1), 8);
	CHECK_EQ(strcmp(out, "spawned\n"), 0);
}

static int on_tempest(void)
{
	struct utsname u;
	return uname(&u) == 0 && strcmp(u.sysname, "Tempest") == 0;
}

static void test_bad_sizes(void)
{
	/* rseq and clone3 exist on both (t_rseq and t_proc test them). */
	CHECK_ERR(syscall(334, NULL, 1, 0, 0), EINVAL);           /* rseq: a bad size */
	CHECK_ERR(syscall(435, NULL, 0), EINVAL);                 /* clone3: too small */
}

/* In a child, in a UTS namespace of its own where there are namespaces
 * (Linux: the host keeps its name whatever happens here), on the
 * machine where there are none (Tempest: a throwaway boot). */
static void uts_names_child(void *arg)
{
	(void)arg;
	if (unshare(CLONE_NEWUTS) != 0 && !on_tempest()) {
		ut_note("skipped the name changes: no UTS namespace for us");
		return;
	}
	struct utsname u;
	CHECK_OK(sethostname("box-7", 5));
	CHECK_OK(uname(&u));
	CHECK_EQ(strcmp(u.nodename, "box-7"), 0);
	char name[64];
	CHECK_OK(gethostname(name, sizeof name));
	CHECK_EQ(strcmp(name, "box-7"), 0);
	CHECK_OK(setdomainname("example", 7));
	CHECK_OK(uname(&u));
	CHECK_EQ(strcmp(u.domainname, "example"), 0);
	char longname[66];
	memset(longname, 'x', sizeof longname);
	CHECK_OK(sethostname(longname, 64));                      /* 64 bytes fit */
	CHECK_OK(uname(&u));
	CHECK_EQ(strlen(u.nodename), 64);
	CHECK_ERR(sethostname(longname, 65), EINVAL);
	CHECK_ERR(syscall(SYS_sethostname, "x", -1), EINVAL);
	CHECK_ERR(syscall(SYS_sethostname, UT_BADPTR, 4), EFAULT);
	CHECK_ERR(syscall(SYS_setdomainname, longname, 65), EINVAL);
	CHECK_OK(sethostname("tempest", 7));
}

static void uts_unprivileged(void *arg)
{
	(void)arg;
	CHECK_ERR(sethostname("nope", 4), EPERM);
	CHECK_ERR(setdomainname("nope", 4), EPERM);
}

static void test_uts_names(void)
{
	if (!ut_is_root()) {
		ut_note("skipped sethostname: needs root");
		return;
	}
	ut_child("uts", uts_names_child, NULL, 0);
	ut_unprivileged("uts", uts_unprivileged, NULL);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	test_prctl_name();
	test_prctl_flags();
	test_pdeathsig();
	test_robust_list();
	test_madvise();
	test_file_times();
	test_sendfile();
	test_bad_sizes();
	test_uts_names();
	test_spawn();
	return ut_done();
}
