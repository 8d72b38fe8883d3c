/*
 * t_symlinkat: two calls Debian's coreutils make that Tempest lacked.
 *
 * symlinkat (coreutils' ln -s): the link's name is taken at the directory
 * fd, the target is stored as given, never resolved (a relative target
 * stays relative, a dangling one is fine); an existing name is EEXIST, a
 * missing directory ENOENT, a non-directory fd ENOTDIR, a bad fd EBADF, a
 * bad pointer EFAULT, an empty target or name ENOENT.
 *
 * fadvise64 (cp and sort advise sequential reads): 0 for every advice on
 * a file, ESPIPE on a pipe, EINVAL for an unknown advice or a negative
 * length, EBADF for a closed fd.  The raw call is used, since
 * posix_fadvise returns the error instead of setting errno.
 */
#include "ut.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DIR_NAME "symlinkat.d"

static long raw_fadvise(int fd, long off, long len, int advice)
{
	return syscall(SYS_fadvise64, fd, off, len, advice);
}

static void check_link(const char *path, const char *want)
{
	char buf[PATH_MAX];
	ssize_t n = readlink(path, buf, sizeof buf - 1);
	CHECK_EQ(n, (long)strlen(want));
	if (n >= 0) {
		buf[n] = 0;
		ut_check(strcmp(buf, want) == 0, __FILE__, __LINE__,
			 "%s points to %s (got %s)", path, want, buf);
	}
}

static void test_symlinkat(void)
{
	CHECK_OK(mkdir(DIR_NAME, 0755));
	int dfd = CHECK_OK(open(DIR_NAME, O_RDONLY | O_DIRECTORY));
	CHECK_OK(ut_write_file(DIR_NAME "/file", "data\n", 5, 0644));
	CHECK_OK(symlinkat("file", dfd, "rel"));
	check_link(DIR_NAME "/rel", "file");
	char buf[8] = { 0 };
	int fd = CHECK_OK(open(DIR_NAME "/rel", O_RDONLY));
	CHECK_EQ(read(fd, buf, sizeof buf), 5);
	CHECK(memcmp(buf, "data\n", 5) == 0);
	close(fd);
	CHECK_OK(symlinkat("../nowhere/at/all", dfd, "dangling"));
	check_link(DIR_NAME "/dangling", "../nowhere/at/all");
	CHECK_OK(symlinkat("/abs/target", AT_FDCWD, DIR_NAME "/abs"));
	check_link(DIR_NAME "/abs", "/abs/target");
	struct stat st;
	CHECK_OK(lstat(DIR_NAME "/abs", &st));
	CHECK(S_ISLNK(st.st_mode));

	CHECK_ERR(symlinkat("x", dfd, "file"), EEXIST);
	CHECK_ERR(symlinkat("x", dfd, "rel"), EEXIST);
	CHECK_ERR(symlinkat("x", dfd, "no/such/dir"), ENOENT);
	CHECK_ERR(symlinkat("", dfd, "empty"), ENOENT);
	CHECK_ERR(symlinkat("x", dfd, ""), ENOENT);
	int ffd = CHECK_OK(open(DIR_NAME "/file", O_RDONLY));
	CHECK_ERR(symlinkat("x", ffd, "name"), ENOTDIR);
	close(ffd);
	CHECK_ERR(symlinkat("x", 999, "name"), EBADF);
	CHECK_ERR(symlinkat(UT_BADPTR, dfd, "name"), EFAULT);
	CHECK_ERR(symlinkat("x", dfd, UT_BADPTR), EFAULT);
	close(dfd);
	CHECK_OK(ut_rmtree(DIR_NAME));
}

static void test_fadvise(void)
{
	CHECK_OK(ut_write_file("fadvise.f", "0123456789", 10, 0644));
	int fd = CHECK_OK(open("fadvise.f", O_RDONLY));
	for (int advice = 0; advice <= 5; advice++)
		ut_check(raw_fadvise(fd, 0, 0, advice) == 0, __FILE__, __LINE__,
			 "fadvise64 advice %d on a file succeeds", advice);
	CHECK_OK(raw_fadvise(fd, 4096, 1 << 20, 2));
	CHECK_ERR(raw_fadvise(fd, 0, 0, 6), EINVAL);
	CHECK_ERR(raw_fadvise(fd, 0, 0, -1), EINVAL);
	CHECK_ERR(raw_fadvise(fd, 0, -1, 0), EINVAL);
	close(fd);
	CHECK_ERR(raw_fadvise(fd, 0, 0, 0), EBADF);
	int p[2];
	CHECK_OK(pipe(p));
	CHECK_ERR(raw_fadvise(p[0], 0, 0, 0), ESPIPE);
	CHECK_ERR(raw_fadvise(p[1], 0, 0, 2), ESPIPE);
	close(p[0]);
	close(p[1]);
	CHECK_OK(unlink("fadvise.f"));
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	test_symlinkat();
	test_fadvise();
	return ut_done();
}
