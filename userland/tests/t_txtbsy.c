/*
 * t_txtbsy: a program file that runs cannot be written, and one open for
 * writing cannot be run (ETXTBSY), as on Linux; /proc/self/exe names the
 * program.
 *
 *   - While a copy of this program runs ("--as runner", waiting on a
 *     pipe), opening the copy with O_WRONLY, O_RDWR or O_WRONLY|O_TRUNC
 *     fails with ETXTBSY and leaves it whole; O_RDONLY works.
 *   - The runner forks and exits: its child still runs the file, so it
 *     stays busy until that child is gone too.
 *   - A file open for writing fails execve with ETXTBSY, and runs once
 *     closed.
 *   - readlink("/proc/self/exe") is this program's absolute path, and the
 *     runner's is the copy's.
 */
#include "ut.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* The runner: report whether /proc/self/exe is want (one byte on out),
 * fork a child that waits too, and exit; the child waits for in to close. */
static int as_runner(const char *want, int in, int out)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	char ok = n > 0 && (buf[n] = 0, strcmp(buf, want) == 0) ? 'y' : 'n';
	if (fork() == 0) {
		if (write(out, &ok, 1) != 1)
			_exit(1);
		close(out);
		char c;
		while (read(in, &c, 1) > 0)
			;
		_exit(0);
	}
	return 0;
}

static int copy_self(const char *to)
{
	int in = open(ut_self, O_RDONLY);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	char buf[65536];
	ssize_t n;
	int err = in < 0 || out < 0;
	while (!err && (n = read(in, buf, sizeof buf)) > 0)
		err = write(out, buf, n) != n;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return err ? -1 : 0;
}

static off_t size_of(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_size : -1;
}

static int open_err(const char *path, int flags)
{
	int fd = open(path, flags);
	int e = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	return e;
}

/* Wait up to 5 seconds for the file to become writable again. */
static int writable_soon(const char *path)
{
	for (int i = 0; i < 500; i++) {
		if (open_err(path, O_WRONLY) == 0)
			return 1;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return 0;
}

static void check_running_file(void)
{
	char cwd[PATH_MAX], copy[PATH_MAX + 16];
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	snprintf(copy, sizeof copy, "%s/runner", cwd);
	CHECK_OK(copy_self(copy));
	off_t size = size_of(copy);
	int down[2], up[2];
	CHECK_OK(pipe(down));
	CHECK_OK(pipe(up));
	pid_t pid = fork();
	if (pid == 0) {
		char in[16], out[16];
		snprintf(in, sizeof in, "%d", down[0]);
		snprintf(out, sizeof out, "%d", up[1]);
		close(down[1]);
		close(up[0]);
		char *argv[] = { copy, "--as", "runner", copy, in, out, NULL };
		execve(copy, argv, environ);
		_exit(99);
	}
	close(down[0]);
	close(up[1]);
	char ok = 0;
	CHECK_EQ(read(up[0], &ok, 1), 1);      /* the runner's child is running */
	ut_check(ok == 'y', __FILE__, __LINE__, "the runner's /proc/self/exe is %s", copy);
	int st = ut_wait(pid);                  /* the runner itself has exited */
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(open_err(copy, O_WRONLY), ETXTBSY);
	CHECK_EQ(open_err(copy, O_RDWR), ETXTBSY);
	CHECK_EQ(open_err(copy, O_WRONLY | O_TRUNC), ETXTBSY);
	CHECK_EQ(size_of(copy), size);
	CHECK_EQ(open_err(copy, O_RDONLY), 0);
	close(down[1]);                         /* the runner's child exits */
	close(up[0]);
	ut_check(writable_soon(copy), __FILE__, __LINE__,
		 "the copy is writable once nothing runs it");
}

static void check_exec_of_open_file(void)
{
	CHECK_OK(copy_self("wprog"));
	int fd = open("wprog", O_WRONLY);
	CHECK(fd >= 0);
	char *argv[] = { "wprog", "--as", "nothing", NULL };
	errno = 0;
	int r = execve("./wprog", argv, environ);
	ut_check(r == -1 && errno == ETXTBSY, __FILE__, __LINE__,
		 "exec of a file open for writing fails with ETXTBSY (errno %d)", errno);
	close(fd);
	pid_t pid = fork();
	if (pid == 0) {
		execve("./wprog", argv, environ);
		_exit(99);
	}
	int st = ut_wait(pid);
	ut_check(WIFEXITED(st) && WEXITSTATUS(st) == 7, __FILE__, __LINE__,
		 "it runs once closed (status %#x)", st);
}

static void check_proc_self_exe(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	CHECK(n > 0);
	if (n > 0) {
		buf[n] = 0;
		ut_check(strcmp(buf, ut_self) == 0, __FILE__, __LINE__,
			 "/proc/self/exe is %s (got %s)", ut_self, buf);
	}
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "--as") && !strcmp(argv[2], "runner"))
		return as_runner(argv[3], atoi(argv[4]), atoi(argv[5]));
	if (argc == 3 && !strcmp(argv[1], "--as"))
		return 7;
	ut_init(argc, argv);
	check_proc_self_exe();
	check_running_file();
	check_exec_of_open_file();
	return ut_done();
}
