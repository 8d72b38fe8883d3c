/*
 * t_openat2: openat2 and its resolve flags, as Linux answers them.
 *
 * The struct's size (EINVAL below version 0, E2BIG past a page or with
 * an unknown field set, a longer zeroed struct accepted); the checks
 * openat does not make (unknown flags, a mode without O_CREAT, a mode
 * past 07777, unknown resolve flags, BENEATH with IN_ROOT, O_PATH with
 * other flags: EINVAL; CACHED with O_CREAT: EAGAIN); then each resolve
 * flag on a small tree: NO_SYMLINKS (ELOOP for a link in the walk, a
 * final one kept by O_PATH|O_NOFOLLOW), BENEATH (EXDEV for "..",
 * absolute paths and links out of the start; ".." that stays inside is
 * fine), IN_ROOT ("/" and ".." stop at the start; an absolute link
 * starts there), NO_XDEV (EXDEV into /proc), NO_MAGICLINKS (ELOOP for
 * /proc/self/fd/N, which opens without it) and CACHED (a name just
 * looked up).
 */
#include "ut.h"

#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

#define R_NO_XDEV       0x01
#define R_NO_MAGICLINKS 0x02
#define R_NO_SYMLINKS   0x04
#define R_BENEATH       0x08
#define R_IN_ROOT       0x10
#define R_CACHED        0x20

struct how { uint64_t flags, mode, resolve; };

static long oa2(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	struct how h = { flags, mode, resolve };
	return syscall(SYS_openat2, dirfd, path, &h, sizeof h);
}

static ino_t ino_of_fd(int fd)
{
	struct stat st;
	CHECK_OK(fstat(fd, &st));
	return st.st_ino;
}

/* The file opened is the one named want (relative to the cwd). */
static void same_file(long fd, const char *want)
{
	struct stat st;
	CHECK(fd >= 0);
	CHECK_OK(stat(want, &st));
	if (fd >= 0) {
		CHECK_EQ(ino_of_fd((int)fd), st.st_ino);
		close((int)fd);
	}
}

static void check_struct(void)
{
	char big[64] = { 0 };
	struct how *h = (struct how *)big;
	h->flags = O_RDONLY;
	CHECK_ERR(syscall(SYS_openat2, AT_FDCWD, "a/f", big, 23), EINVAL);
	CHECK_ERR(syscall(SYS_openat2, AT_FDCWD, "a/f", big, 4097), E2BIG);
	long fd = CHECK_OK(syscall(SYS_openat2, AT_FDCWD, "a/f", big, 40));
	close((int)fd);
	big[33] = 1;
	CHECK_ERR(syscall(SYS_openat2, AT_FDCWD, "a/f", big, 40), E2BIG);

	CHECK_ERR(oa2(AT_FDCWD, "a/f", 1ULL << 40, 0, 0), EINVAL);
	CHECK_ERR(oa2(AT_FDCWD, "a/f", O_RDONLY, 0644, 0), EINVAL);     /* mode, no O_CREAT */
	CHECK_ERR(oa2(AT_FDCWD, "a/n", O_CREAT | O_WRONLY, 010000, 0), EINVAL);
	CHECK_ERR(oa2(AT_FDCWD, "a/f", O_RDONLY, 0, 0x40), EINVAL);
	CHECK_ERR(oa2(AT_FDCWD, "a/f", O_RDONLY, 0, R_BENEATH | R_IN_ROOT), EINVAL);
	CHECK_ERR(oa2(AT_FDCWD, "a/f", O_PATH | O_RDWR, 0, 0), EINVAL);
	CHECK_ERR(oa2(AT_FDCWD, "a/n", O_CREAT | O_WRONLY, 0644, R_CACHED), EAGAIN);
	fd = CHECK_OK(oa2(AT_FDCWD, "a/n", O_CREAT | O_WRONLY, 0600, 0));
	struct stat st;
	CHECK_OK(fstat((int)fd, &st));
	CHECK_EQ(st.st_mode & 0777, 0600);     /* no umask takes bits of 0600 here */
	close((int)fd);
}

static void check_symlinks(int a)
{
	same_file(oa2(a, "f", O_RDONLY, 0, R_NO_SYMLINKS), "a/f");
	CHECK_ERR(oa2(a, "ln", O_RDONLY, 0, R_NO_SYMLINKS), ELOOP);
	CHECK_ERR(oa2(a, "lnb/f", O_RDONLY, 0, R_NO_SYMLINKS), ELOOP);     /* in the middle */
	long fd = CHECK_OK(oa2(a, "ln", O_PATH | O_NOFOLLOW, 0, R_NO_SYMLINKS));
	close((int)fd);
	same_file(oa2(a, "ln", O_RDONLY, 0, 0), "a/f");
}

static void check_beneath(int a, const char *abs_f)
{
	same_file(oa2(a, "f", O_RDONLY, 0, R_BENEATH), "a/f");
	same_file(oa2(a, "b/../f", O_RDONLY, 0, R_BENEATH), "a/f");
	CHECK_ERR(oa2(a, "../a/f", O_RDONLY, 0, R_BENEATH), EXDEV);
	CHECK_ERR(oa2(a, abs_f, O_RDONLY, 0, R_BENEATH), EXDEV);
	CHECK_ERR(oa2(a, "abs", O_RDONLY, 0, R_BENEATH), EXDEV);
	CHECK_ERR(oa2(a, "up", O_RDONLY, 0, R_BENEATH), EXDEV);
	same_file(oa2(a, "ln", O_RDONLY, 0, R_BENEATH), "a/f");        /* a link inside */
}

static void check_in_root(int a)
{
	same_file(oa2(a, "/f", O_RDONLY, 0, R_IN_ROOT), "a/f");
	same_file(oa2(a, "../f", O_RDONLY, 0, R_IN_ROOT), "a/f");
	same_file(oa2(a, "b/../../../f", O_RDONLY, 0, R_IN_ROOT), "a/f");
	same_file(oa2(a, "root", O_RDONLY, 0, R_IN_ROOT), "a/f");       /* "/f" from a */
	CHECK_ERR(oa2(a, "abs", O_RDONLY, 0, R_IN_ROOT), ENOENT);       /* not there under a */
}

static void check_proc(int a)
{
	CHECK_ERR(oa2(AT_FDCWD, "/proc/self/status", O_RDONLY, 0, R_NO_XDEV), EXDEV);
	same_file(oa2(AT_FDCWD, "a/f", O_RDONLY, 0, R_NO_XDEV), "a/f");
	int f = CHECK_OK(open("a/f", O_RDONLY));
	char link[64];
	snprintf(link, sizeof link, "/proc/self/fd/%d", f);
	CHECK_ERR(oa2(AT_FDCWD, link, O_RDONLY, 0, R_NO_MAGICLINKS), ELOOP);
	same_file(oa2(AT_FDCWD, link, O_RDONLY, 0, 0), "a/f");
	close(f);
	(void)a;
}

static void check_cached(void)
{
	int f = CHECK_OK(open("a/f", O_RDONLY));
	close(f);
	same_file(oa2(AT_FDCWD, "a/f", O_RDONLY, 0, R_CACHED), "a/f");
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	const char *dir = ut_scratch();
	char abs_f[PATH_MAX];
	snprintf(abs_f, sizeof abs_f, "%s/a/f", dir);
	CHECK_OK(mkdir("a", 0755));
	CHECK_OK(mkdir("a/b", 0755));
	int f = CHECK_OK(open("a/f", O_CREAT | O_WRONLY, 0644));
	close(f);
	CHECK_OK(symlink("f", "a/ln"));
	CHECK_OK(symlink("b/..", "a/lnb"));
	CHECK_OK(symlink(abs_f, "a/abs"));
	CHECK_OK(symlink("../a/f", "a/up"));
	CHECK_OK(symlink("/f", "a/root"));
	int a = CHECK_OK(open("a", O_RDONLY | O_DIRECTORY));
	check_struct();
	check_symlinks(a);
	check_beneath(a, abs_f);
	check_in_root(a);
	check_proc(a);
	check_cached();
	close(a);
	return ut_done();
}
