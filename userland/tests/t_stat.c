/*
 * t_stat: file attributes.
 *
 * stat, fstat, lstat, newfstatat, access, faccessat, chmod, fchmod, chown,
 * fchown, umask, with their error cases; EACCES/EPERM as uid 65534.
 * The EFAULT cases for the stat buffer use raw syscalls: musl's wrappers
 * copy through a local buffer and would fault in user space instead.
 */
#include "ut.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void test_stat(void)
{
	time_t before = time(NULL);
	CHECK_OK(ut_write_file("f", "hello", 5, 0640));
	struct stat st, st2;
	CHECK_OK(stat("f", &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0640);
	CHECK_EQ(st.st_size, 5);
	CHECK_EQ(st.st_nlink, 1);
	CHECK_EQ(st.st_uid, geteuid());
	CHECK_EQ(st.st_gid, getegid());
	CHECK(st.st_ino != 0);
	CHECK(st.st_blksize > 0);
	CHECK(st.st_mtime >= before - 2 && st.st_mtime <= time(NULL) + 2);

	int fd = CHECK_OK(open("f", O_RDONLY));
	CHECK_OK(fstat(fd, &st2));
	CHECK_EQ(st2.st_ino, st.st_ino);
	CHECK_EQ(st2.st_dev, st.st_dev);
	CHECK_EQ(st2.st_size, 5);
	close(fd);
	CHECK_ERR(fstat(fd, &st2), EBADF);
	CHECK_ERR(fstat(-1, &st2), EBADF);

	CHECK_OK(mkdir("d", 0755));
	CHECK_OK(stat("d", &st));
	CHECK(S_ISDIR(st.st_mode));
	CHECK(st.st_nlink >= 2);
	CHECK_OK(stat(".", &st2));
	CHECK(S_ISDIR(st2.st_mode));
	CHECK_OK(stat("d/..", &st));
	CHECK_EQ(st.st_ino, st2.st_ino); /* d/.. is the scratch directory */

	int p[2];
	CHECK_OK(pipe(p));
	CHECK_OK(fstat(p[0], &st));
	CHECK(S_ISFIFO(st.st_mode));
	close(p[0]);
	close(p[1]);

	CHECK_ERR(stat("missing", &st), ENOENT);
	CHECK_ERR(stat("", &st), ENOENT);
	CHECK_ERR(stat("f/x", &st), ENOTDIR);
	CHECK_ERR(stat(UT_BADPTR, &st), EFAULT);
	CHECK_ERR(stat(UT_KERNPTR, &st), EFAULT);
	char longname[NAME_MAX + 10];
	memset(longname, 'n', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	CHECK_ERR(stat(longname, &st), ENAMETOOLONG);

	/* The raw calls, with bad buffers. */
	CHECK_OK(syscall(SYS_stat, "f", &st));
	CHECK_EQ(st.st_size, 5);
	CHECK_ERR(syscall(SYS_stat, "f", UT_BADPTR), EFAULT);
	CHECK_ERR(syscall(SYS_stat, "f", UT_KERNPTR), EFAULT);
	CHECK_ERR(syscall(SYS_lstat, "f", UT_BADPTR), EFAULT);
	fd = CHECK_OK(open("f", O_RDONLY));
	CHECK_OK(syscall(SYS_fstat, fd, &st));
	CHECK_EQ(st.st_size, 5);
	CHECK_ERR(syscall(SYS_fstat, fd, UT_BADPTR), EFAULT);
	CHECK_ERR(syscall(SYS_fstat, fd, UT_KERNPTR), EFAULT);
	CHECK_ERR(syscall(SYS_newfstatat, AT_FDCWD, "f", UT_BADPTR, 0), EFAULT);
	close(fd);
}

static void test_lstat(void)
{
	CHECK_OK(ut_write_file("target", "0123456789", 10, 0644));
	CHECK_OK(symlink("target", "link"));
	CHECK_OK(symlink("nowhere", "dangling"));
	struct stat st;
	CHECK_OK(lstat("link", &st));
	CHECK(S_ISLNK(st.st_mode));
	CHECK_EQ(st.st_size, 6); /* the length of "target" */
	CHECK_OK(stat("link", &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_size, 10);
	CHECK_OK(lstat("target", &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_ERR(stat("dangling", &st), ENOENT);
	CHECK_OK(lstat("dangling", &st));
	CHECK(S_ISLNK(st.st_mode));
	CHECK_ERR(lstat("missing", &st), ENOENT);
	CHECK_ERR(lstat(UT_BADPTR, &st), EFAULT);
	CHECK_OK(syscall(SYS_lstat, "link", &st));
	CHECK(S_ISLNK(st.st_mode));
}

static void test_fstatat(void)
{
	CHECK_OK(mkdir("at", 0755));
	CHECK_OK(ut_write_file("at/x", "abc", 3, 0600));
	CHECK_OK(symlink("x", "at/lx"));
	int dfd = CHECK_OK(open("at", O_RDONLY | O_DIRECTORY));
	struct stat st;
	CHECK_OK(fstatat(dfd, "x", &st, 0));
	CHECK_EQ(st.st_size, 3);
	CHECK_OK(fstatat(dfd, "lx", &st, 0));
	CHECK(S_ISREG(st.st_mode));
	CHECK_OK(fstatat(dfd, "lx", &st, AT_SYMLINK_NOFOLLOW));
	CHECK(S_ISLNK(st.st_mode));
	CHECK_OK(fstatat(AT_FDCWD, "at/x", &st, 0));
	CHECK_EQ(st.st_size, 3);
	CHECK_OK(fstatat(dfd, "", &st, AT_EMPTY_PATH));
	CHECK(S_ISDIR(st.st_mode));
	CHECK_ERR(fstatat(dfd, "", &st, 0), ENOENT);
	CHECK_ERR(fstatat(dfd, "missing", &st, 0), ENOENT);
	CHECK_ERR(fstatat(9999, "x", &st, 0), EBADF);
	CHECK_ERR(syscall(SYS_newfstatat, dfd, "x", &st, 0x40000000), EINVAL);
	int fd = CHECK_OK(openat(dfd, "x", O_RDONLY));
	CHECK_ERR(fstatat(fd, "y", &st, 0), ENOTDIR);
	CHECK_OK(syscall(SYS_newfstatat, fd, "", &st, AT_EMPTY_PATH));
	CHECK_EQ(st.st_size, 3);
	close(fd);
	CHECK_OK(syscall(SYS_newfstatat, dfd, "x", &st, 0));
	CHECK_EQ(st.st_size, 3);
	CHECK_ERR(syscall(SYS_newfstatat, dfd, UT_BADPTR, &st, 0), EFAULT);
	close(dfd);
}

static void test_access(void)
{
	CHECK_OK(ut_write_file("acc", "x", 1, 0644));
	CHECK_OK(ut_write_file("exe", "x", 1, 0755));
	CHECK_OK(access("acc", F_OK));
	CHECK_OK(access("acc", R_OK | W_OK));
	CHECK_OK(access("exe", X_OK));
	CHECK_OK(access(".", X_OK));
	/* Even root needs an execute bit somewhere for X_OK on a file. */
	CHECK_ERR(access("acc", X_OK), EACCES);
	CHECK_ERR(access("missing", F_OK), ENOENT);
	CHECK_ERR(access("acc/x", F_OK), ENOTDIR);
	CHECK_ERR(access("acc", 0100), EINVAL);
	CHECK_ERR(access(UT_BADPTR, F_OK), EFAULT);

	CHECK_OK(mkdir("fa", 0755));
	CHECK_OK(ut_write_file("fa/f", "x", 1, 0644));
	int dfd = CHECK_OK(open("fa", O_RDONLY | O_DIRECTORY));
	CHECK_OK(faccessat(dfd, "f", R_OK, 0));
	CHECK_OK(faccessat(AT_FDCWD, "fa/f", W_OK, 0));
	CHECK_ERR(faccessat(dfd, "g", F_OK, 0), ENOENT);
	CHECK_ERR(faccessat(dfd, "f", X_OK, 0), EACCES);
	CHECK_ERR(faccessat(-7, "f", F_OK, 0), EBADF);
	CHECK_ERR(syscall(SYS_faccessat, dfd, "f", 0100), EINVAL);
	CHECK_OK(syscall(SYS_faccessat, dfd, "f", R_OK));
	int fd = CHECK_OK(openat(dfd, "f", O_RDONLY));
	CHECK_ERR(faccessat(fd, "x", F_OK, 0), ENOTDIR);
	close(fd);
	close(dfd);
}

static void test_chmod(void)
{
	CHECK_OK(ut_write_file("m", "x", 1, 0600));
	struct stat st;
	CHECK_OK(chmod("m", 0754));
	CHECK_OK(stat("m", &st));
	CHECK_EQ(st.st_mode & 07777, 0754);
	CHECK(S_ISREG(st.st_mode));
	CHECK_OK(chmod("m", 04711)); /* the set-user-ID bit is kept */
	CHECK_OK(stat("m", &st));
	CHECK_EQ(st.st_mode & 07777, 04711);
	int fd = CHECK_OK(open("m", O_RDONLY));
	CHECK_OK(fchmod(fd, 0640));
	CHECK_OK(fstat(fd, &st));
	CHECK_EQ(st.st_mode & 07777, 0640);
	close(fd);
	CHECK_ERR(fchmod(fd, 0644), EBADF);
	CHECK_ERR(fchmod(-1, 0644), EBADF);
	CHECK_ERR(chmod("missing", 0644), ENOENT);
	CHECK_ERR(chmod("m/x", 0644), ENOTDIR);
	CHECK_ERR(chmod(UT_BADPTR, 0644), EFAULT);
	/* chmod follows a symbolic link to its target. */
	CHECK_OK(symlink("m", "ml"));
	CHECK_OK(chmod("ml", 0604));
	CHECK_OK(stat("m", &st));
	CHECK_EQ(st.st_mode & 07777, 0604);
	CHECK_OK(mkdir("md", 0700));
	CHECK_OK(chmod("md", 0751));
	CHECK_OK(stat("md", &st));
	CHECK_EQ(st.st_mode & 07777, 0751);
	CHECK(S_ISDIR(st.st_mode));
}

static void test_chown(void)
{
	CHECK_OK(ut_write_file("o", "x", 1, 0644));
	struct stat st;
	CHECK_OK(stat("o", &st));
	uid_t uid = st.st_uid;
	gid_t gid = st.st_gid;
	CHECK_OK(chown("o", -1, -1)); /* no change is always allowed */
	CHECK_OK(chown("o", uid, gid));
	CHECK_ERR(chown("missing", 0, 0), ENOENT);
	CHECK_ERR(chown(UT_BADPTR, 0, 0), EFAULT);
	CHECK_ERR(fchown(-1, 0, 0), EBADF);
	if (!ut_is_root())
		return;
	CHECK_OK(chown("o", 1234, 5678));
	CHECK_OK(stat("o", &st));
	CHECK_EQ(st.st_uid, 1234);
	CHECK_EQ(st.st_gid, 5678);
	CHECK_OK(chown("o", -1, 42));
	CHECK_OK(stat("o", &st));
	CHECK_EQ(st.st_uid, 1234);
	CHECK_EQ(st.st_gid, 42);
	int fd = CHECK_OK(open("o", O_RDONLY));
	CHECK_OK(fchown(fd, 7, -1));
	CHECK_OK(fstat(fd, &st));
	CHECK_EQ(st.st_uid, 7);
	CHECK_EQ(st.st_gid, 42);
	close(fd);
	/* Changing the owner clears set-user-ID, even when root does it. */
	CHECK_OK(chmod("o", 04755));
	CHECK_OK(chown("o", 8, -1));
	CHECK_OK(stat("o", &st));
	CHECK_EQ(st.st_mode & 07777, 0755);
}

static void test_umask(void)
{
	mode_t old = umask(027);
	CHECK_EQ(umask(027), 027);
	CHECK_OK(ut_write_file("u1", "", 0, 0666));
	CHECK_OK(mkdir("u2", 0777));
	struct stat st;
	CHECK_OK(stat("u1", &st));
	CHECK_EQ(st.st_mode & 0777, 0640);
	CHECK_OK(stat("u2", &st));
	CHECK_EQ(st.st_mode & 0777, 0750);
	CHECK_EQ(umask(0), 027);
	CHECK_OK(ut_write_file("u3", "", 0, 0666));
	CHECK_OK(stat("u3", &st));
	CHECK_EQ(st.st_mode & 0777, 0666);
	/* Only the permission bits are kept. */
	umask(0177777);
	CHECK_EQ(umask(old), 0777);
	/* chmod is not filtered by the umask. */
	umask(077);
	CHECK_OK(chmod("u3", 0666));
	CHECK_OK(stat("u3", &st));
	CHECK_EQ(st.st_mode & 0777, 0666);
	umask(old);
}

/* Run as uid 65534 on files owned by root. */
static void unprivileged(void *arg)
{
	struct stat st;
	CHECK_OK(stat("p/rootfile", &st));
	CHECK_ERR(access("p/rootfile", W_OK), EACCES);
	CHECK_OK(access("p/rootfile", R_OK));
	CHECK_ERR(access("p/secret", R_OK), EACCES);
	CHECK_ERR(faccessat(AT_FDCWD, "p/secret", R_OK, 0), EACCES);
	CHECK_ERR(stat("hidden/f", &st), EACCES);   /* no search permission */
	CHECK_ERR(access("hidden/f", F_OK), EACCES);
	CHECK_ERR(chmod("p/rootfile", 0777), EPERM);
	int fd = CHECK_OK(open("p/rootfile", O_RDONLY));
	CHECK_ERR(fchmod(fd, 0777), EPERM);
	CHECK_ERR(fchown(fd, UT_NOBODY, UT_NOBODY), EPERM);
	close(fd);
	CHECK_ERR(chown("p/rootfile", UT_NOBODY, -1), EPERM);
	/* An owner may not give a file away, nor to a group it is not in. */
	CHECK_OK(ut_write_file("pub/mine", "", 0, 0644));
	CHECK_ERR(chown("pub/mine", 0, -1), EPERM);
	CHECK_ERR(chown("pub/mine", -1, 0), EPERM);
	CHECK_OK(chown("pub/mine", UT_NOBODY, UT_NOBODY));
	CHECK_OK(chmod("pub/mine", 0600));
	CHECK_OK(stat("pub/mine", &st));
	CHECK_EQ(st.st_mode & 0777, 0600);
	CHECK_EQ(st.st_uid, UT_NOBODY);
	/* Set-group-ID is kept: the owner is in the file's group 65534. */
	CHECK_OK(chmod("pub/mine", 02644));
	CHECK_OK(stat("pub/mine", &st));
	CHECK_EQ(st.st_mode & 07777, 02644);
}

static void test_permissions(void)
{
	CHECK_OK(mkdir("p", 0755));
	CHECK_OK(mkdir("pub", 0777));
	CHECK_OK(chmod("pub", 0777));
	CHECK_OK(mkdir("hidden", 0700));
	CHECK_OK(ut_write_file("hidden/f", "", 0, 0644));
	CHECK_OK(ut_write_file("p/rootfile", "r", 1, 0644));
	CHECK_OK(ut_write_file("p/secret", "s", 1, 0600));
	ut_unprivileged("permissions", unprivileged, NULL);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	umask(022);
	test_stat();
	test_lstat();
	test_fstatat();
	test_access();
	test_chmod();
	test_chown();
	test_umask();
	test_permissions();
	return ut_done();
}
