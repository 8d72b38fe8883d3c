/*
 * t_xattr: the extended-attribute calls, as ls -l, cp -a and tar make
 * them.  Tempest's file systems keep no attributes, and answer as Linux's
 * sysv and ufs do (a list is empty, an attribute EOPNOTSUPP); the host's
 * file system may keep them (ENODATA for a missing one), so those answers
 * may be either.  The rest is the same everywhere: the file's errors
 * (ENOENT, EBADF, an O_PATH descriptor's EBADF), the name's (ERANGE for
 * an empty one or one of 256 bytes, EFAULT), the flags' EINVAL, a value
 * over 64 KiB E2BIG, and "user." names on a symbolic link (ENODATA to
 * read, EPERM to set).
 */
#include "ut.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define FILE_NAME "xattr.f"
#define LINK_NAME "xattr.l"

static int none_or_unsupported(long r)
{
	return r == -1 && (errno == ENODATA || errno == EOPNOTSUPP);
}

static void test_answers(void)
{
	char buf[64];
	long n = listxattr(FILE_NAME, buf, sizeof buf);
	CHECK(n >= 0);
	CHECK(llistxattr(FILE_NAME, NULL, 0) >= 0);
	ut_check(none_or_unsupported(getxattr(FILE_NAME, "user.tempest.none", buf, sizeof buf)),
		 __FILE__, __LINE__, "a missing attribute is ENODATA or EOPNOTSUPP (errno %d)", errno);
	ut_check(none_or_unsupported(removexattr(FILE_NAME, "user.tempest.none")),
		 __FILE__, __LINE__, "removing a missing one is ENODATA or EOPNOTSUPP (errno %d)", errno);
	int fd = CHECK_OK(open(FILE_NAME, O_RDONLY));
	CHECK(flistxattr(fd, buf, sizeof buf) >= 0);
	ut_check(none_or_unsupported(fgetxattr(fd, "user.tempest.none", buf, sizeof buf)),
		 __FILE__, __LINE__, "fgetxattr of a missing one (errno %d)", errno);
	close(fd);
}

static void test_errors(void)
{
	char buf[64], longname[300];
	memset(longname, 'a', sizeof longname);
	memcpy(longname, "user.", 5);
	longname[256] = 0;
	CHECK_ERR(getxattr("xattr.none", "user.x", buf, sizeof buf), ENOENT);
	CHECK_ERR(listxattr("xattr.none", buf, sizeof buf), ENOENT);
	CHECK_ERR(removexattr("xattr.none", "user.x"), ENOENT);
	CHECK_ERR(setxattr("xattr.none", "user.x", "v", 1, 0), ENOENT);
	CHECK_ERR(getxattr(FILE_NAME "/x", "user.x", buf, sizeof buf), ENOTDIR);
	CHECK_ERR(getxattr(FILE_NAME, "", buf, sizeof buf), ERANGE);
	CHECK_ERR(getxattr(FILE_NAME, longname, buf, sizeof buf), ERANGE);
	CHECK_ERR(getxattr(FILE_NAME, UT_BADPTR, buf, sizeof buf), EFAULT);
	CHECK_ERR(setxattr(FILE_NAME, "user.x", "v", 1, 4), EINVAL);
	CHECK_ERR(setxattr(FILE_NAME, "", "v", 1, 0), ERANGE);
	static char big[65537];
	CHECK_ERR(setxattr(FILE_NAME, "user.x", big, sizeof big, 0), E2BIG);
	CHECK_ERR(fgetxattr(999, "user.x", buf, sizeof buf), EBADF);
	CHECK_ERR(flistxattr(999, buf, sizeof buf), EBADF);
	CHECK_ERR(fremovexattr(999, "user.x"), EBADF);
	int pfd = CHECK_OK(open(FILE_NAME, O_PATH));
	CHECK_ERR(flistxattr(pfd, buf, sizeof buf), EBADF);
	CHECK_ERR(fgetxattr(pfd, "user.x", buf, sizeof buf), EBADF);
	close(pfd);
	CHECK_ERR(lgetxattr(LINK_NAME, "user.x", buf, sizeof buf), ENODATA);
	CHECK_ERR(lsetxattr(LINK_NAME, "user.x", "v", 1, 0), EPERM);
	CHECK_ERR(lremovexattr(LINK_NAME, "user.x"), EPERM);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	CHECK_OK(ut_write_file(FILE_NAME, "data\n", 5, 0644));
	CHECK_OK(symlink(FILE_NAME, LINK_NAME));
	test_answers();
	test_errors();
	unlink(LINK_NAME);
	unlink(FILE_NAME);
	return ut_done();
}
