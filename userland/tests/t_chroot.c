/*
 * t_chroot: a process's root directory.
 *
 * chroot's errors in Linux's order (a bad pointer, a missing path, a
 * file, a directory without search permission, then the privilege), and
 * as root: absolute paths, "..", absolute symbolic links and getcwd all
 * stay inside the new root; the working directory is not moved; a file
 * outside cannot be reached; fork inherits the root and exec finds its
 * program inside it.
 */
#include "ut.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int copy_file(const char *from, const char *to)
{
	static char buf[1 << 16];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n;
	int ok = in >= 0 && out >= 0;
	while (ok && (n = read(in, buf, sizeof buf)) > 0)
		ok = write(out, buf, (size_t)n) == n;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ok ? 0 : -1;
}

static void user_errors(void *arg)
{
	CHECK_ERR(chroot("jail"), EPERM);
	CHECK_ERR(chroot("/"), EPERM);
	CHECK_ERR(chroot("closed"), EACCES);
	CHECK_ERR(chroot("missing"), ENOENT);
	CHECK_ERR(chroot("jail/inside"), ENOTDIR);
}

static void test_errors(void)
{
	CHECK_ERR(syscall(SYS_chroot, UT_BADPTR), EFAULT);
	CHECK_ERR(syscall(SYS_chroot, UT_KERNPTR), EFAULT);
	CHECK_ERR(chroot(""), ENOENT);
	CHECK_ERR(chroot("missing"), ENOENT);
	CHECK_ERR(chroot("jail/inside"), ENOTDIR);
	CHECK_ERR(chroot("jail/inside/x"), ENOTDIR);
	ut_unprivileged("user", user_errors, NULL);
}

static void inside(void *arg)
{
	struct stat root, up, outside_root;
	CHECK_OK(stat("/", &outside_root));
	CHECK_OK(chroot("jail"));
	/* The working directory stays where it was (outside the new root). */
	CHECK_OK(access("outside", F_OK));
	CHECK_OK(chdir("/"));
	char cwd[PATH_MAX];
	CHECK(getcwd(cwd, sizeof cwd) && strcmp(cwd, "/") == 0);
	char c = 0;
	CHECK_EQ(ut_read_file("/inside", &c, 1), 1);
	CHECK_EQ(c, 'i');
	CHECK_ERR(access("/outside", F_OK), ENOENT);
	CHECK_ERR(access("/../outside", F_OK), ENOENT);
	CHECK_ERR(access("../../outside", F_OK), ENOENT);
	/* ".." at the new root is the root itself. */
	CHECK_OK(stat("/", &root));
	CHECK_OK(stat("/..", &up));
	CHECK(root.st_ino == up.st_ino && root.st_dev == up.st_dev);
	CHECK_OK(stat("../../..", &up));
	CHECK(root.st_ino == up.st_ino);
	CHECK(!(root.st_ino == outside_root.st_ino && root.st_dev == outside_root.st_dev));
	/* An absolute symbolic link resolves inside. */
	c = 0;
	CHECK_EQ(ut_read_file("/link", &c, 1), 1);
	CHECK_EQ(c, 'i');
	CHECK_OK(chdir("/sub"));
	CHECK(getcwd(cwd, sizeof cwd) && strcmp(cwd, "/sub") == 0);
	CHECK_OK(chdir(".."));
	CHECK(getcwd(cwd, sizeof cwd) && strcmp(cwd, "/") == 0);
	/* A child inherits the root; exec finds its program inside it. */
	pid_t pid = fork();
	if (pid == 0)
		_exit(access("/inside", F_OK) == 0 && access("/outside", F_OK) != 0 ? 0 : 1);
	int st = ut_wait(pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	pid = fork();
	if (pid == 0) {
		execl("/prog", "/prog", "--probe", (char *)NULL);
		_exit(3);
	}
	st = ut_wait(pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* A chroot further in, by a relative path, nests. */
	CHECK_OK(chroot("sub"));
	CHECK_OK(chdir("/"));
	CHECK_OK(access("/deeper", F_OK));
	CHECK_ERR(access("/inside", F_OK), ENOENT);
}

int main(int argc, char **argv)
{
	/* Run inside the jail: the root must be the jail's. */
	if (argc > 1 && strcmp(argv[1], "--probe") == 0)
		return access("/inside", F_OK) == 0 && access("/outside", F_OK) != 0 ? 0 : 1;
	ut_init(argc, argv);
	ut_scratch();
	CHECK_OK(mkdir("jail", 0755));
	CHECK_OK(mkdir("jail/sub", 0755));
	CHECK_OK(mkdir("closed", 0));
	CHECK_OK(chmod("closed", 0));
	CHECK_OK(ut_write_file("jail/inside", "i", 1, 0644));
	CHECK_OK(ut_write_file("jail/sub/deeper", "d", 1, 0644));
	CHECK_OK(ut_write_file("outside", "o", 1, 0644));
	CHECK_OK(symlink("/inside", "jail/link"));
	CHECK_OK(copy_file(ut_self, "jail/prog"));
	test_errors();
	if (!ut_is_root()) {
		ut_note("skipped chroot itself: not root");
		return ut_done();
	}
	ut_child("inside", inside, NULL, 0);
	/* Our own root is untouched. */
	CHECK_OK(access("jail/inside", F_OK));
	CHECK_OK(chmod("closed", 0755));
	return ut_done();
}
