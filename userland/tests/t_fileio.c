/*
 * t_fileio: reading and writing files.
 *
 * open, openat, close, read, write, readv, writev, pread64, pwrite64,
 * lseek, truncate, ftruncate, fsync, sync, with their error cases.
 */
#include "ut.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static const char text[] = "The quick brown fox jumps over the lazy dog";

static off_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_size : -1;
}

static void test_open(void)
{
	int fd = CHECK_OK(open("a", O_WRONLY | O_CREAT | O_EXCL, 0644));
	CHECK(fd >= 3);
	CHECK_EQ(write(fd, text, 10), 10);
	CHECK_OK(close(fd));

	/* The lowest free descriptor is handed out. */
	int fd1 = CHECK_OK(open("a", O_RDONLY));
	int fd2 = CHECK_OK(open("a", O_RDONLY));
	CHECK_EQ(fd2, fd1 + 1);
	CHECK_OK(close(fd1));
	CHECK_EQ(open("a", O_RDONLY), fd1);
	close(fd1);
	close(fd2);

	CHECK_ERR(open("a", O_WRONLY | O_CREAT | O_EXCL, 0644), EEXIST);
	CHECK_ERR(open("missing", O_RDONLY), ENOENT);
	CHECK_ERR(open("nodir/x", O_WRONLY | O_CREAT, 0644), ENOENT);
	CHECK_ERR(open("", O_RDONLY), ENOENT);
	CHECK_ERR(open("a/x", O_RDONLY), ENOTDIR);
	CHECK_ERR(open("a/x", O_WRONLY | O_CREAT, 0644), ENOTDIR);
	CHECK_ERR(open("a", O_RDONLY | O_DIRECTORY), ENOTDIR);
	CHECK_ERR(open(UT_BADPTR, O_RDONLY), EFAULT);
	CHECK_ERR(open(UT_KERNPTR, O_RDONLY), EFAULT);

	CHECK_OK(mkdir("d", 0755));
	CHECK_ERR(open("d", O_WRONLY), EISDIR);
	CHECK_ERR(open("d", O_RDWR), EISDIR);
	CHECK_ERR(open("d", O_WRONLY | O_CREAT, 0644), EISDIR);
	fd = CHECK_OK(open("d", O_RDONLY | O_DIRECTORY));
	close(fd);
	fd = CHECK_OK(open(".", O_RDONLY));
	close(fd);

	char longname[NAME_MAX + 20];
	memset(longname, 'x', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	CHECK_ERR(open(longname, O_RDONLY | O_CREAT, 0644), ENAMETOOLONG);

	/* O_TRUNC empties; O_APPEND writes at the end whatever the offset. */
	fd = CHECK_OK(open("a", O_WRONLY | O_TRUNC));
	CHECK_EQ(file_size("a"), 0);
	CHECK_EQ(write(fd, "12345", 5), 5);
	close(fd);
	fd = CHECK_OK(open("a", O_WRONLY | O_APPEND));
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(write(fd, "678", 3), 3);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 8);
	close(fd);
	char buf[64] = { 0 };
	CHECK_EQ(ut_read_file("a", buf, sizeof buf), 8);
	CHECK(memcmp(buf, "12345678", 8) == 0);

	/* O_CREAT without O_EXCL opens an existing file unchanged. */
	fd = CHECK_OK(open("a", O_RDONLY | O_CREAT, 0600));
	close(fd);
	CHECK_EQ(file_size("a"), 8);
}

static void test_openat(void)
{
	CHECK_OK(mkdir("oa", 0755));
	int dfd = CHECK_OK(open("oa", O_RDONLY | O_DIRECTORY));
	int fd = CHECK_OK(openat(dfd, "f", O_WRONLY | O_CREAT, 0644));
	CHECK_EQ(write(fd, "xy", 2), 2);
	close(fd);
	CHECK_EQ(file_size("oa/f"), 2);
	fd = CHECK_OK(openat(AT_FDCWD, "oa/f", O_RDONLY));
	close(fd);
	/* An absolute path ignores the descriptor, even a bad one. */
	char abs[PATH_MAX];
	CHECK(getcwd(abs, sizeof abs) != NULL);
	strcat(abs, "/oa/f");
	fd = CHECK_OK(openat(9999, abs, O_RDONLY));
	close(fd);
	CHECK_ERR(openat(9999, "f", O_RDONLY), EBADF);
	CHECK_ERR(openat(-5, "f", O_RDONLY), EBADF);
	fd = CHECK_OK(openat(dfd, "f", O_RDONLY));
	CHECK_ERR(openat(fd, "x", O_RDONLY), ENOTDIR);
	close(fd);
	CHECK_ERR(openat(dfd, "nope", O_RDONLY), ENOENT);
	CHECK_ERR(openat(dfd, "f", O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST);
	CHECK_ERR(openat(dfd, UT_BADPTR, O_RDONLY), EFAULT);
	fd = CHECK_OK(openat(dfd, "..", O_RDONLY | O_DIRECTORY));
	close(fd);
	close(dfd);
}

static void test_close(void)
{
	int fd = CHECK_OK(open("c", O_WRONLY | O_CREAT, 0644));
	CHECK_OK(close(fd));
	CHECK_ERR(close(fd), EBADF);
	CHECK_ERR(close(-1), EBADF);
	CHECK_ERR(close(100000), EBADF);
	CHECK_ERR(write(fd, "x", 1), EBADF);
}

static void test_read_write(void)
{
	int fd = CHECK_OK(open("rw", O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_EQ(write(fd, text, sizeof text - 1), sizeof text - 1);
	CHECK_EQ(write(fd, text, 0), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	char buf[128];
	CHECK_EQ(read(fd, buf, 0), 0);
	CHECK_EQ(read(fd, buf, 4), 4);
	CHECK(memcmp(buf, "The ", 4) == 0);
	CHECK_EQ(read(fd, buf, sizeof buf), sizeof text - 5);
	CHECK(memcmp(buf, text + 4, sizeof text - 5) == 0);
	CHECK_EQ(read(fd, buf, sizeof buf), 0); /* end of file */

	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_ERR(read(fd, UT_BADPTR, 10), EFAULT);
	CHECK_ERR(read(fd, UT_KERNPTR, 10), EFAULT);
	CHECK_ERR(write(fd, UT_BADPTR, 10), EFAULT);
	CHECK_ERR(write(fd, UT_KERNPTR, 10), EFAULT);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 0); /* nothing moved */
	close(fd);

	CHECK_ERR(read(-1, buf, 1), EBADF);
	CHECK_ERR(write(-1, buf, 1), EBADF);
	CHECK_ERR(read(55555, buf, 1), EBADF);
	fd = CHECK_OK(open("rw", O_WRONLY));
	CHECK_ERR(read(fd, buf, 1), EBADF);
	close(fd);
	fd = CHECK_OK(open("rw", O_RDONLY));
	CHECK_ERR(write(fd, "x", 1), EBADF);
	close(fd);
	fd = CHECK_OK(open(".", O_RDONLY));
	CHECK_ERR(read(fd, buf, sizeof buf), EISDIR);
	close(fd);

	/* A write past the end leaves a hole that reads as zeros. */
	fd = CHECK_OK(open("sparse", O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_EQ(lseek(fd, 10000, SEEK_SET), 10000);
	CHECK_EQ(write(fd, "end", 3), 3);
	CHECK_EQ(file_size("sparse"), 10003);
	CHECK_EQ(pread(fd, buf, 100, 5000), 100);
	int zeros = 1;
	for (int i = 0; i < 100; i++)
		zeros &= buf[i] == 0;
	CHECK(zeros);
	close(fd);

	/* A larger transfer across several blocks round-trips. */
	enum { BIG = 70000 };
	char *big = malloc(BIG), *back = malloc(BIG);
	for (int i = 0; i < BIG; i++)
		big[i] = (char)(i * 7 + i / 251);
	fd = CHECK_OK(open("big", O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_EQ(write(fd, big, BIG), BIG);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	long got = 0, r;
	while ((r = read(fd, back + got, BIG - got)) > 0)
		got += r;
	CHECK_EQ(got, BIG);
	CHECK(memcmp(big, back, BIG) == 0);
	close(fd);
	free(big);
	free(back);
}

static void test_vectors(void)
{
	int fd = CHECK_OK(open("vec", O_RDWR | O_CREAT | O_TRUNC, 0644));
	struct iovec out[3] = {
		{ "abc", 3 }, { "", 0 }, { "defgh", 5 },
	};
	CHECK_EQ(writev(fd, out, 3), 8);
	CHECK_EQ(writev(fd, out, 0), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	char a[2], b[4], c[10];
	struct iovec in[3] = { { a, 2 }, { b, 4 }, { c, 10 } };
	CHECK_EQ(readv(fd, in, 3), 8);
	CHECK(memcmp(a, "ab", 2) == 0);
	CHECK(memcmp(b, "cdef", 4) == 0);
	CHECK(memcmp(c, "gh", 2) == 0);
	CHECK_EQ(readv(fd, in, 3), 0);

	CHECK_ERR(writev(fd, out, -1), EINVAL);
	CHECK_ERR(writev(fd, out, 1025), EINVAL); /* more than IOV_MAX */
	CHECK_ERR(readv(fd, in, -1), EINVAL);
	CHECK_ERR(writev(fd, UT_BADPTR, 1), EFAULT);
	CHECK_ERR(readv(fd, UT_KERNPTR, 1), EFAULT);
	struct iovec bad[1] = { { UT_BADPTR, 5 } };
	CHECK_ERR(writev(fd, bad, 1), EFAULT);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_ERR(readv(fd, bad, 1), EFAULT);
	CHECK_ERR(writev(-1, out, 3), EBADF);
	CHECK_ERR(readv(77777, in, 3), EBADF);
	close(fd);
}

static void test_positional(void)
{
	int fd = CHECK_OK(open("pos", O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_EQ(write(fd, "0123456789", 10), 10);
	CHECK_EQ(lseek(fd, 3, SEEK_SET), 3);
	char buf[16] = { 0 };
	CHECK_EQ(pread(fd, buf, 4, 5), 4);
	CHECK(memcmp(buf, "5678", 4) == 0);
	CHECK_EQ(pwrite(fd, "AB", 2, 1), 2);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 3); /* the offset did not move */
	CHECK_EQ(pread(fd, buf, 16, 0), 10);
	CHECK(memcmp(buf, "0AB3456789", 10) == 0);
	CHECK_EQ(pread(fd, buf, 4, 100), 0);
	CHECK_EQ(pwrite(fd, "Z", 1, 20), 1); /* extends with a hole */
	CHECK_EQ(file_size("pos"), 21);
	CHECK_ERR(pread(fd, buf, 1, -1), EINVAL);
	CHECK_ERR(pwrite(fd, buf, 1, -1), EINVAL);
	CHECK_ERR(pread(fd, UT_BADPTR, 4, 0), EFAULT);
	CHECK_ERR(pwrite(fd, UT_KERNPTR, 4, 0), EFAULT);
	CHECK_ERR(pread(-1, buf, 1, 0), EBADF);
	CHECK_ERR(pwrite(4321, buf, 1, 0), EBADF);
	close(fd);

	/* Linux quirk: pwrite on an O_APPEND descriptor appends. */
	fd = CHECK_OK(open("pos", O_WRONLY | O_APPEND));
	CHECK_EQ(pwrite(fd, "Q", 1, 0), 1);
	CHECK_EQ(file_size("pos"), 22);
	close(fd);

	int p[2];
	CHECK_OK(pipe(p));
	CHECK_ERR(pread(p[0], buf, 1, 0), ESPIPE);
	CHECK_ERR(pwrite(p[1], buf, 1, 0), ESPIPE);
	close(p[0]);
	close(p[1]);
}

static void test_lseek(void)
{
	int fd = CHECK_OK(open("seek", O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_EQ(write(fd, "0123456789", 10), 10);
	CHECK_EQ(lseek(fd, 2, SEEK_SET), 2);
	CHECK_EQ(lseek(fd, 3, SEEK_CUR), 5);
	CHECK_EQ(lseek(fd, -1, SEEK_CUR), 4);
	CHECK_EQ(lseek(fd, 0, SEEK_END), 10);
	CHECK_EQ(lseek(fd, -4, SEEK_END), 6);
	char c;
	CHECK_EQ(read(fd, &c, 1), 1);
	CHECK_EQ(c, '6');
	CHECK_EQ(lseek(fd, 100, SEEK_END), 110); /* past the end is allowed */
	CHECK_EQ(file_size("seek"), 10);         /* and changes nothing */
	CHECK_ERR(lseek(fd, -1, SEEK_SET), EINVAL);
	CHECK_ERR(lseek(fd, -11, SEEK_END), EINVAL);
	CHECK_ERR(lseek(fd, 0, 42), EINVAL);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 110); /* failed seeks left it alone */
	CHECK_ERR(lseek(-1, 0, SEEK_SET), EBADF);
	close(fd);
	CHECK_ERR(lseek(fd, 0, SEEK_SET), EBADF);
	int p[2];
	CHECK_OK(pipe(p));
	CHECK_ERR(lseek(p[0], 0, SEEK_CUR), ESPIPE);
	CHECK_ERR(lseek(p[1], 0, SEEK_SET), ESPIPE);
	close(p[0]);
	close(p[1]);
}

static void test_truncate(void)
{
	CHECK_OK(ut_write_file("tr", "0123456789", 10, 0644));
	CHECK_OK(truncate("tr", 4));
	CHECK_EQ(file_size("tr"), 4);
	CHECK_OK(truncate("tr", 8000));
	CHECK_EQ(file_size("tr"), 8000);
	char buf[16];
	int fd = CHECK_OK(open("tr", O_RDWR));
	CHECK_EQ(pread(fd, buf, 8, 0), 8);
	CHECK(memcmp(buf, "0123\0\0\0\0", 8) == 0);
	CHECK_OK(ftruncate(fd, 2));
	CHECK_EQ(file_size("tr"), 2);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 0); /* the offset is untouched */
	CHECK_OK(ftruncate(fd, 0));
	CHECK_EQ(read(fd, buf, 8), 0);
	CHECK_ERR(ftruncate(fd, -1), EINVAL);
	close(fd);
	CHECK_ERR(truncate("tr", -1), EINVAL);
	CHECK_ERR(truncate("missing", 0), ENOENT);
	CHECK_ERR(truncate("tr/x", 0), ENOTDIR);
	CHECK_OK(mkdir("trd", 0755));
	CHECK_ERR(truncate("trd", 0), EISDIR);
	CHECK_ERR(truncate(UT_BADPTR, 0), EFAULT);
	/* Linux gives EINVAL, not EBADF, for a descriptor not open to write. */
	fd = CHECK_OK(open("tr", O_RDONLY));
	CHECK_ERR(ftruncate(fd, 0), EINVAL);
	close(fd);
	CHECK_ERR(ftruncate(-1, 0), EBADF);
	int p[2];
	CHECK_OK(pipe(p));
	CHECK_ERR(ftruncate(p[1], 0), EINVAL);
	close(p[0]);
	close(p[1]);
}

static void test_sync(void)
{
	int fd = CHECK_OK(open("sy", O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_EQ(write(fd, "data", 4), 4);
	CHECK_OK(fsync(fd));
	CHECK_OK(fdatasync(fd));
	sync();
	char buf[8];
	CHECK_EQ(pread(fd, buf, 8, 0), 4);
	CHECK(memcmp(buf, "data", 4) == 0);
	close(fd);
	CHECK_ERR(fsync(fd), EBADF);
	CHECK_ERR(fsync(-1), EBADF);
	int p[2];
	CHECK_OK(pipe(p));
	CHECK_ERR(fsync(p[0]), EINVAL);
	close(p[0]);
	close(p[1]);
	fd = CHECK_OK(open(".", O_RDONLY));
	CHECK_OK(fsync(fd)); /* directories can be synced */
	close(fd);
}

/* Run as uid 65534: permission checks on root's files. */
static void unprivileged(void *arg)
{
	(void)arg;
	char buf[4];
	CHECK_ERR(open("priv/secret", O_RDONLY), EACCES);
	CHECK_ERR(open("priv/ro", O_WRONLY), EACCES);
	CHECK_ERR(open("priv/ro", O_RDWR), EACCES);
	int fd = CHECK_OK(open("priv/ro", O_RDONLY));
	CHECK_EQ(read(fd, buf, 4), 2);
	close(fd);
	CHECK_ERR(open("priv/new", O_WRONLY | O_CREAT, 0644), EACCES);
	CHECK_ERR(truncate("priv/ro", 0), EACCES);
	CHECK_ERR(open("closed/any", O_RDONLY), EACCES); /* no search permission */
	fd = CHECK_OK(open("pub/mine", O_WRONLY | O_CREAT, 0600));
	close(fd);
}

static void test_permissions(void)
{
	CHECK_OK(mkdir("priv", 0755));
	CHECK_OK(mkdir("pub", 0777));
	CHECK_OK(chmod("pub", 0777));
	CHECK_OK(mkdir("closed", 0700));
	CHECK_OK(ut_write_file("closed/any", "x", 1, 0644));
	CHECK_OK(ut_write_file("priv/secret", "s", 1, 0600));
	CHECK_OK(ut_write_file("priv/ro", "ro", 2, 0644));
	if (ut_unprivileged("permissions", unprivileged, NULL)) {
		struct stat st;
		CHECK_OK(stat("pub/mine", &st));
		CHECK_EQ(st.st_uid, UT_NOBODY);
		CHECK_EQ(st.st_gid, UT_NOBODY);
	}
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	umask(022);
	test_open();
	test_openat();
	test_close();
	test_read_write();
	test_vectors();
	test_positional();
	test_lseek();
	test_truncate();
	test_sync();
	test_permissions();
	return ut_done();
}
