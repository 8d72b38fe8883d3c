/*
 * t_opath: O_PATH descriptors, which glibc's and musl's fchmodat with
 * AT_SYMLINK_NOFOLLOW (lchmod) open (GNU tar extracting a symbolic link
 * as root calls it, and failed with ELOOP on Tempest).
 *
 * open(O_PATH | O_NOFOLLOW) of a link gives a descriptor of the link
 * itself; O_PATH needs no read permission and ignores O_TRUNC and the
 * access mode.  fstat, fstatat(AT_EMPTY_PATH), dup and use as an "at"
 * call's directory and fchdir work on one, and fcntl's F_GETFD, F_SETFD, F_GETFL
 * and F_DUPFD; read, write, getdents, fchmod, mmap and F_SETFL fail with
 * EBADF; O_DIRECTORY on a file is ENOTDIR.  fchmodat with
 * AT_SYMLINK_NOFOLLOW changes a file's mode and refuses a link's
 * (EOPNOTSUPP), as on Linux.
 */
#include "ut.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DIR_NAME "opath.d"

static void test_link_itself(void)
{
	CHECK_OK(symlink("file", DIR_NAME "/link"));
	int fd = CHECK_OK(open(DIR_NAME "/link", O_PATH | O_NOFOLLOW | O_CLOEXEC));
	struct stat st;
	CHECK_OK(fstat(fd, &st));
	CHECK(S_ISLNK(st.st_mode));
	CHECK_OK(fstatat(fd, "", &st, AT_EMPTY_PATH));
	CHECK(S_ISLNK(st.st_mode));
	CHECK_ERR(open(DIR_NAME "/link", O_RDONLY | O_NOFOLLOW), ELOOP);
	int fd2 = CHECK_OK(open(DIR_NAME "/link", O_PATH));      /* followed */
	CHECK_OK(fstat(fd2, &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_size, 5);
	close(fd2);
	close(fd);
}

static void test_refused_calls(void)
{
	int fd = CHECK_OK(open(DIR_NAME "/file", O_PATH | O_RDWR | O_TRUNC));
	struct stat st;
	CHECK_OK(stat(DIR_NAME "/file", &st));
	CHECK_EQ(st.st_size, 5);                /* O_TRUNC ignored */
	char buf[8];
	CHECK_ERR(read(fd, buf, sizeof buf), EBADF);
	CHECK_ERR(write(fd, "x", 1), EBADF);
	CHECK_ERR(pread(fd, buf, sizeof buf, 0), EBADF);
	CHECK_ERR(syscall(SYS_fchmod, fd, 0600), EBADF);   /* musl's fchmod retries by /proc */
	CHECK(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED && errno == EBADF);
	CHECK_OK(fcntl(fd, F_SETFD, FD_CLOEXEC));
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK(CHECK_OK(fcntl(fd, F_GETFL)) & O_PATH);
	CHECK_ERR(fcntl(fd, F_SETFL, O_NONBLOCK), EBADF);
	int d2 = CHECK_OK(fcntl(fd, F_DUPFD_CLOEXEC, 0));
	close(d2);
	int d = CHECK_OK(dup(fd));
	CHECK_OK(fstat(d, &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_ERR(read(d, buf, sizeof buf), EBADF);
	close(d);
	close(fd);
	CHECK_ERR(open(DIR_NAME "/file", O_PATH | O_DIRECTORY), ENOTDIR);
	CHECK_ERR(open(DIR_NAME "/none", O_PATH), ENOENT);
}

static void test_directory(void)
{
	int dfd = CHECK_OK(open(DIR_NAME, O_PATH | O_DIRECTORY));
	char ents[256];
	CHECK_ERR(syscall(SYS_getdents64, dfd, ents, sizeof ents), EBADF);
	int fd = CHECK_OK(openat(dfd, "file", O_RDONLY));
	char buf[8] = { 0 };
	CHECK_EQ(read(fd, buf, sizeof buf), 5);
	CHECK(memcmp(buf, "data\n", 5) == 0);
	close(fd);
	struct stat st;
	CHECK_OK(fstatat(dfd, "link", &st, AT_SYMLINK_NOFOLLOW));
	CHECK(S_ISLNK(st.st_mode));
	CHECK_OK(fchdir(dfd));
	CHECK_OK(stat("file", &st));
	CHECK_OK(chdir(".."));
	close(dfd);
}

static void test_lchmod(void)
{
	CHECK_OK(fchmodat(AT_FDCWD, DIR_NAME "/file", 0600, AT_SYMLINK_NOFOLLOW));
	struct stat st;
	CHECK_OK(stat(DIR_NAME "/file", &st));
	CHECK_EQ(st.st_mode & 07777, 0600);
	CHECK_ERR(fchmodat(AT_FDCWD, DIR_NAME "/link", 0600, AT_SYMLINK_NOFOLLOW), EOPNOTSUPP);
	CHECK_OK(stat(DIR_NAME "/file", &st));
	CHECK_EQ(st.st_mode & 07777, 0600);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	CHECK_OK(mkdir(DIR_NAME, 0755));
	CHECK_OK(ut_write_file(DIR_NAME "/file", "data\n", 5, 0644));
	test_link_itself();
	test_refused_calls();
	test_directory();
	test_lchmod();
	CHECK_OK(ut_rmtree(DIR_NAME));
	return ut_done();
}
