/*
 * t_execveat: execveat as Linux answers it.
 *
 * The program runs itself again: by an absolute path, by a name relative
 * to a directory descriptor, and by a descriptor of the file itself with
 * AT_EMPTY_PATH (opened for reading, and O_PATH), each in a child that
 * must exit with RAN and see the name Linux gives it in AT_EXECFN
 * (/dev/fd/N or /dev/fd/N/NAME for what a descriptor found).  Then the
 * errors: unknown flags (EINVAL), "" without AT_EMPTY_PATH (ENOENT), a
 * bad descriptor (EBADF), a relative name from a file's descriptor
 * (ENOTDIR), a final symbolic link under AT_SYMLINK_NOFOLLOW (ELOOP), a
 * directory (EACCES), a missing name (ENOENT).
 */
#include "ut.h"

#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif
#define RAN 42

extern char **environ;

static char self[PATH_MAX];

static long execveat_(int dirfd, const char *path, char *const argv[], int flags)
{
	return syscall(SYS_execveat, dirfd, path, argv, environ, flags);
}

/* Run execveat in a child told to expect execfn; its exit status. */
static int run(int dirfd, const char *path, int flags, const char *execfn)
{
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = { "t_execveat", "--ran", (char *)execfn, NULL };
		execveat_(dirfd, path, argv, flags);
		_exit(99);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void check_runs(void)
{
	char dir[PATH_MAX], base[PATH_MAX], name[64];
	strcpy(dir, self);
	strcpy(base, self);
	CHECK_EQ(run(AT_FDCWD, self, 0, self), RAN);
	int d = CHECK_OK(open(dirname(dir), O_RDONLY | O_DIRECTORY));
	char *b = basename(base);
	snprintf(name, sizeof name, "/dev/fd/%d/%s", d, b);
	CHECK_EQ(run(d, b, 0, name), RAN);
	CHECK_EQ(run(d, self, 0, self), RAN);           /* an absolute path ignores dirfd */
	int f = CHECK_OK(open(self, O_RDONLY));
	snprintf(name, sizeof name, "/dev/fd/%d", f);
	CHECK_EQ(run(f, "", AT_EMPTY_PATH, name), RAN);
	int o = CHECK_OK(open(self, O_PATH));
	snprintf(name, sizeof name, "/dev/fd/%d", o);
	CHECK_EQ(run(o, "", AT_EMPTY_PATH, name), RAN);

	char *argv[] = { "x", NULL };
	CHECK_ERR(execveat_(d, b, argv, 0x1), EINVAL);
	CHECK_ERR(execveat_(f, "", argv, 0x1), ENOENT);       /* the empty name first */
	CHECK_ERR(execveat_(f, "", argv, 0), ENOENT);
	CHECK_ERR(execveat_(-1, b, argv, 0), EBADF);
	CHECK_ERR(execveat_(f, b, argv, 0), ENOTDIR);
	CHECK_ERR(execveat_(d, "nosuchprog", argv, 0), ENOENT);
	CHECK_ERR(execveat_(d, "", argv, AT_EMPTY_PATH), EACCES);
	CHECK_OK(symlink(self, "link"));
	CHECK_ERR(execveat_(AT_FDCWD, "link", argv, AT_SYMLINK_NOFOLLOW), ELOOP);
	CHECK_EQ(run(AT_FDCWD, "link", 0, "link"), RAN);
	close(o);
	close(f);
	close(d);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--ran") == 0) {
		const char *fn = (const char *)getauxval(AT_EXECFN);
		if (!fn || strcmp(fn, argv[2]) != 0) {
			fprintf(stderr, "AT_EXECFN %s, expected %s\n", fn ? fn : "(none)", argv[2]);
			return 1;
		}
		return RAN;
	}
	ut_init(argc, argv);
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	CHECK(n > 0);
	self[n > 0 ? n : 0] = 0;
	ut_scratch();
	check_runs();
	return ut_done();
}
