/*
 * t_filecalls: file calls Linux added after the classic set, which
 * Debian's programs use first and fall back from only on ENOSYS.
 *
 * statx (every basic field against fstat's, AT_EMPTY_PATH with "" and
 * with no path, symlinks followed or not, bad flags and mask), preadv
 * and pwritev (at an offset, the file offset untouched, ESPIPE on a
 * pipe, EINVAL for a negative offset), preadv2 and pwritev2 (offset -1
 * is the file's, RWF_SYNC, an unknown flag EOPNOTSUPP), close_range
 * (closing, CLOSE_RANGE_CLOEXEC, bad ranges and flags), faccessat2
 * (flags, AT_EMPTY_PATH, AT_SYMLINK_NOFOLLOW), the old getdents
 * (its record layout: the type in the last byte) and copy_file_range
 * (at the files' offsets and at given ones, stopping at the end of the
 * input, overlapping ranges of one file, the errors in Linux's order),
 * and flags words read as the int or unsigned int Linux declares them.
 */
#include "ut.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef STATX_BASIC_STATS
#define STATX_BASIC_STATS 0x7ffU
#endif

struct statx_ts_k { int64_t sec; uint32_t nsec; int32_t pad; };
struct statx_k {
	uint32_t mask, blksize;
	uint64_t attributes;
	uint32_t nlink, uid, gid;
	uint16_t mode, pad0;
	uint64_t ino, size, blocks, attributes_mask;
	struct statx_ts_k atime, btime, ctime, mtime;
	uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
	uint64_t spare[14];
};

static long raw_statx(int dirfd, const char *path, int flags, unsigned mask, struct statx_k *sx)
{
	return syscall(SYS_statx, dirfd, path, flags, mask, sx);
}

static void same_as_stat(const struct statx_k *sx, const struct stat *st)
{
	CHECK((sx->mask & STATX_BASIC_STATS) == STATX_BASIC_STATS);
	CHECK_EQ(sx->ino, st->st_ino);
	CHECK_EQ(sx->mode, st->st_mode);
	CHECK_EQ(sx->nlink, st->st_nlink);
	CHECK_EQ(sx->uid, st->st_uid);
	CHECK_EQ(sx->gid, st->st_gid);
	CHECK_EQ(sx->size, st->st_size);
	CHECK_EQ(sx->blocks, st->st_blocks);
	CHECK_EQ(sx->mtime.sec, st->st_mtime);
	CHECK_EQ(sx->dev_major, major(st->st_dev));
	CHECK_EQ(sx->dev_minor, minor(st->st_dev));
}

static void check_statx(void)
{
	struct statx_k sx;
	struct stat st;
	CHECK_OK(ut_write_file("f", "0123456789", 10, 0640));
	CHECK_OK(symlink("f", "lnk"));
	CHECK_OK(stat("f", &st));
	CHECK_OK(raw_statx(AT_FDCWD, "f", 0, STATX_BASIC_STATS, &sx));
	same_as_stat(&sx, &st);
	CHECK_OK(raw_statx(AT_FDCWD, "lnk", 0, STATX_BASIC_STATS, &sx));
	CHECK_EQ(sx.ino, st.st_ino);
	CHECK_OK(raw_statx(AT_FDCWD, "lnk", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx));
	CHECK(S_ISLNK(sx.mode));
	int fd = CHECK_OK(open("f", O_RDONLY));
	CHECK_OK(raw_statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &sx));
	CHECK_EQ(sx.ino, st.st_ino);
	CHECK_ERR(raw_statx(fd, "", 0, STATX_BASIC_STATS, &sx), ENOENT);
	CHECK_ERR(raw_statx(AT_FDCWD, "f", 0x6000, STATX_BASIC_STATS, &sx), EINVAL);
	CHECK_ERR(raw_statx(AT_FDCWD, "f", 0, 0x80000000U, &sx), EINVAL);
	CHECK_ERR(raw_statx(AT_FDCWD, "f", 0x10000000, STATX_BASIC_STATS, &sx), EINVAL);
	CHECK_ERR(raw_statx(AT_FDCWD, "nothere", 0, STATX_BASIC_STATS, &sx), ENOENT);
	CHECK_ERR(raw_statx(AT_FDCWD, "f", 0, STATX_BASIC_STATS, (void *)8), EFAULT);
	CHECK_ERR(raw_statx(99, "f", 0, STATX_BASIC_STATS, &sx), EBADF);
	CHECK_ERR(raw_statx(99, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &sx), EBADF);
	close(fd);
}

static void check_pv(void)
{
	int fd = CHECK_OK(open("v", O_RDWR | O_CREAT | O_TRUNC, 0644));
	char a[3] = "abc", b[4] = "defg", x[3], y[4];
	struct iovec w[2] = { { a, 3 }, { b, 4 } }, r[2] = { { x, 3 }, { y, 4 } };
	CHECK_EQ(pwritev(fd, w, 2, 100), 7);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 0);            /* the offset is left alone */
	CHECK_EQ(preadv(fd, r, 2, 100), 7);
	CHECK(memcmp(x, "abc", 3) == 0 && memcmp(y, "defg", 4) == 0);
	CHECK_EQ(preadv(fd, r, 2, 103), 4);             /* short at the end */
	CHECK(memcmp(x, "def", 3) == 0);
	CHECK_ERR(preadv(fd, r, 2, -1), EINVAL);
	CHECK_ERR(preadv(99, r, 2, 0), EBADF);
	int p[2];
	CHECK_OK(pipe(p));
	CHECK_ERR(pwritev(p[1], w, 2, 0), ESPIPE);
	/* the 2 forms: -1 is the file's own offset */
	CHECK_EQ(syscall(SYS_pwritev2, fd, w, 2, -1L, 0L, 0), 7);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 7);
	CHECK_EQ(syscall(SYS_preadv2, fd, r, 2, 100L, 0L, 0), 7);
	CHECK(memcmp(x, "abc", 3) == 0);
	CHECK_EQ(syscall(SYS_pwritev2, fd, w, 1, 0L, 0L, 4 /* RWF_SYNC */), 3);
	CHECK_ERR(syscall(SYS_preadv2, fd, r, 2, 0L, 0L, 0x40000000), EOPNOTSUPP);
	close(p[0]);
	close(p[1]);
	close(fd);
}

static void check_close_range(void)
{
	int base = CHECK_OK(open("f", O_RDONLY));
	int a = CHECK_OK(dup(base)), b = CHECK_OK(dup(base));
	CHECK_OK(syscall(SYS_close_range, a, a, 4 /* CLOSE_RANGE_CLOEXEC */));
	CHECK_EQ(fcntl(a, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(b, F_GETFD), 0);
	CHECK_OK(syscall(SYS_close_range, a, b, 0));
	CHECK_ERR(fcntl(a, F_GETFD), EBADF);
	CHECK_ERR(fcntl(b, F_GETFD), EBADF);
	CHECK_OK(fcntl(base, F_GETFD));
	CHECK_ERR(syscall(SYS_close_range, 5, 4, 0), EINVAL);
	CHECK_ERR(syscall(SYS_close_range, 0, 4, 1), EINVAL);
	CHECK_OK(syscall(SYS_close_range, 1000, ~0U, 0));        /* nothing there */
	close(base);
}

static void check_faccessat2(void)
{
	CHECK_OK(syscall(SYS_faccessat2, AT_FDCWD, "f", R_OK, 0));
	CHECK_OK(syscall(SYS_faccessat2, AT_FDCWD, "f", R_OK, AT_EACCESS));
	CHECK_ERR(syscall(SYS_faccessat2, AT_FDCWD, "f", R_OK, 0x1), EINVAL);
	CHECK_ERR(syscall(SYS_faccessat2, AT_FDCWD, "f", 8, 0), EINVAL);
	CHECK_OK(symlink("nothere", "dangling"));
	CHECK_ERR(syscall(SYS_faccessat2, AT_FDCWD, "dangling", F_OK, 0), ENOENT);
	CHECK_OK(syscall(SYS_faccessat2, AT_FDCWD, "dangling", F_OK, AT_SYMLINK_NOFOLLOW));
	int fd = CHECK_OK(open("f", O_RDONLY));
	CHECK_OK(syscall(SYS_faccessat2, fd, "", R_OK, AT_EMPTY_PATH));
	close(fd);
}

/* The old getdents's record. */
struct old_dirent {
	unsigned long d_ino, d_off;
	unsigned short d_reclen;
	char d_name[];
};

static void check_getdents(void)
{
	CHECK_OK(mkdir("d", 0755));
	CHECK_OK(ut_write_file("d/file", "", 0, 0644));
	CHECK_OK(mkdir("d/sub", 0755));
	int fd = CHECK_OK(open("d", O_RDONLY | O_DIRECTORY));
	char buf[1024];
	long n = syscall(SYS_getdents, fd, buf, sizeof buf);
	CHECK(n > 0);
	int seen = 0;
	for (long pos = 0; pos < n;) {
		struct old_dirent *d = (struct old_dirent *)(buf + pos);
		char type = buf[pos + d->d_reclen - 1];
		if (strcmp(d->d_name, "file") == 0 && type == DT_REG)
			seen |= 1;
		if (strcmp(d->d_name, "sub") == 0 && type == DT_DIR)
			seen |= 2;
		if (strcmp(d->d_name, ".") == 0 && type == DT_DIR)
			seen |= 4;
		pos += d->d_reclen;
	}
	CHECK_EQ(seen, 7);
	CHECK_EQ(syscall(SYS_getdents, fd, buf, sizeof buf), 0);     /* the end */
	close(fd);
	fd = CHECK_OK(open("d", O_RDONLY | O_DIRECTORY));
	CHECK_ERR(syscall(SYS_getdents, fd, buf, 4), EINVAL);        /* no room for one */
	close(fd);
	fd = CHECK_OK(open("f", O_RDONLY));
	CHECK_ERR(syscall(SYS_getdents, fd, buf, sizeof buf), ENOTDIR);
	close(fd);
}

static void check_copy_range(void)
{
	CHECK_OK(ut_write_file("src", "0123456789", 10, 0644));
	int in = CHECK_OK(open("src", O_RDONLY));
	int out = CHECK_OK(open("dst", O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_EQ(syscall(SYS_copy_file_range, in, NULL, out, NULL, 4, 0), 4);
	CHECK_EQ(lseek(in, 0, SEEK_CUR), 4);                    /* both offsets move */
	CHECK_EQ(lseek(out, 0, SEEK_CUR), 4);
	loff_t ip = 8, op = 20;
	CHECK_EQ(syscall(SYS_copy_file_range, in, &ip, out, &op, 100, 0), 2);   /* to the end */
	CHECK_EQ(ip, 10);
	CHECK_EQ(op, 22);
	CHECK_EQ(lseek(in, 0, SEEK_CUR), 4);                    /* given offsets: the file's stay */
	CHECK_EQ(syscall(SYS_copy_file_range, in, &ip, out, &op, 5, 0), 0);     /* at the end */
	char buf[32] = { 0 };
	CHECK_EQ(pread(out, buf, sizeof buf, 0), 22);
	CHECK(memcmp(buf, "0123", 4) == 0 && memcmp(buf + 20, "89", 2) == 0 && buf[10] == 0);
	CHECK_ERR(syscall(SYS_copy_file_range, in, NULL, out, NULL, 4, 1), EINVAL);
	CHECK_ERR(syscall(SYS_copy_file_range, out, NULL, in, NULL, 4, 0), EBADF);  /* in is read-only */
	int same = CHECK_OK(open("src", O_RDWR));
	ip = 0;
	op = 2;
	CHECK_ERR(syscall(SYS_copy_file_range, same, &ip, same, &op, 5, 0), EINVAL); /* overlap */
	op = 5;
	CHECK_EQ(syscall(SYS_copy_file_range, same, &ip, same, &op, 5, 0), 5);
	int p[2];
	CHECK_OK(pipe(p));
	CHECK_ERR(syscall(SYS_copy_file_range, in, NULL, p[1], NULL, 4, 0), EINVAL);
	int d = CHECK_OK(open(".", O_RDONLY));
	CHECK_ERR(syscall(SYS_copy_file_range, d, NULL, out, NULL, 4, 0), EISDIR);
	ip = -1;
	CHECK_ERR(syscall(SYS_copy_file_range, in, &ip, out, NULL, 4, 0), EOVERFLOW);
	close(d);
	close(p[0]);
	close(p[1]);
	close(same);
	close(in);
	close(out);
}

/* Flags Linux declares int or unsigned int: a caller's syscall() may
 * leave garbage in their register's upper half, which the kernel must
 * not read (dup3, close_range, tee, membarrier, move_pages). */
static void check_int_flags(void)
{
	const unsigned long high = 0xdead000000000000UL;
	int a = CHECK_OK(open(".", O_RDONLY));
	int b = CHECK_OK(syscall(SYS_dup3, a, 200, high | O_CLOEXEC));
	CHECK_EQ(b, 200);
	CHECK_EQ(fcntl(b, F_GETFD), FD_CLOEXEC);
	CHECK_OK(syscall(SYS_close_range, 200, 200, high));
	CHECK_ERR(fcntl(200, F_GETFD), EBADF);
	int p[2], q[2];
	CHECK_OK(pipe(p));
	CHECK_OK(pipe(q));
	CHECK_EQ(syscall(SYS_tee, p[0], q[1], 0, high), 0);
	CHECK(syscall(SYS_membarrier, 0, high, 0) > 0);
	CHECK_EQ(syscall(SYS_move_pages, 0, 0, NULL, NULL, NULL, high), 0);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	close(a);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	check_statx();
	check_pv();
	check_close_range();
	check_faccessat2();
	check_getdents();
	check_copy_range();
	check_int_flags();
	return ut_done();
}
