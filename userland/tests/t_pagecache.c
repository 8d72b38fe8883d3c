/*
 * t_pagecache: a file's data through the page cache, on whatever file
 * system the tests run from (S5 or UFS inside Tempest: segmap windows
 * onto the cached pages, written back with VOP_PUTPAGE; UFS's fragment
 * tails grow, move and become whole blocks under these writes).
 *
 *   - two files grown alternately by appends of odd sizes, across
 *     fragment, page, block and indirect-block boundaries, read back
 *     intact after every append by pread, and at the end through a
 *     mapping and from another process;
 *   - a store through a shared mapping into a hole reaches the file (read
 *     back after the mapping and the descriptor are gone); a write far
 *     past the end leaves a hole that reads as zeros;
 *   - a truncation down and a growth again read zeros past the old cut,
 *     by pread and through a mapping;
 *   - a read sets the access time by the relatime rule: updated when it
 *     is older than the modification time, left alone when it is newer
 *     (skipped on a host file system mounted noatime).
 */
#include "ut.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PG 4096

static unsigned char byte_at(size_t i, unsigned seed)
{
	return (unsigned char)((i * 131 + seed * 7) ^ (i >> 11));
}

/* Does fd hold exactly len bytes of seed's pattern (pread, 3000 at a time)? */
static int holds(int fd, size_t len, unsigned seed)
{
	static unsigned char buf[3000];
	size_t off = 0;
	while (off < len) {
		ssize_t n = pread(fd, buf, sizeof buf, (off_t)off);
		if (n <= 0)
			return 0;
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] != byte_at(off + (size_t)i, seed))
				return 0;
		off += (size_t)n;
	}
	struct stat st;
	return fstat(fd, &st) == 0 && (size_t)st.st_size == len;
}

static int append(int fd, size_t from, size_t n, unsigned seed)
{
	unsigned char *p = malloc(n);
	if (!p)
		return -1;
	for (size_t i = 0; i < n; i++)
		p[i] = byte_at(from + i, seed);
	ssize_t w = write(fd, p, n);
	free(p);
	return w == (ssize_t)n ? 0 : -1;
}

static int mapped_holds(int fd, size_t len, unsigned seed)
{
	unsigned char *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return 0;
	size_t i = 0;
	while (i < len && m[i] == byte_at(i, seed))
		i++;
	munmap(m, len);
	return i == len;
}

/* Another process reads the file by name: exit 0 when it holds the pattern. */
static int child_holds(const char *name, size_t len, unsigned seed)
{
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(name, O_RDONLY);
		_exit(fd >= 0 && holds(fd, len, seed) ? 0 : 1);
	}
	return pid > 0 && ut_wait(pid) == 0;
}

static void test_tails(void)
{
	static const size_t steps[] = { 100, 900, 1100, 2000, 3000, 5000, 1, 9000, 17000,
					40000, 333, 70000, 120000 };
	int a = CHECK_OK(open("tail_a", O_RDWR | O_CREAT | O_TRUNC | O_APPEND, 0644));
	int b = CHECK_OK(open("tail_b", O_RDWR | O_CREAT | O_TRUNC | O_APPEND, 0644));
	size_t la = 0, lb = 0;
	int bad = 0;
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		/* Alternating, so the other file's fragments are often the
		 * next ones and a tail must move rather than extend. */
		bad += append(a, la, steps[i], 1) != 0;
		la += steps[i];
		bad += append(b, lb, steps[(i + 3) % 13], 2) != 0;
		lb += steps[(i + 3) % 13];
		bad += !holds(a, la, 1) + !holds(b, lb, 2);
	}
	CHECK_EQ(bad, 0);
	CHECK(mapped_holds(a, la, 1));
	CHECK(mapped_holds(b, lb, 2));
	CHECK_EQ(fsync(a), 0);
	close(a);
	close(b);
	CHECK(child_holds("tail_a", la, 1));
	CHECK(child_holds("tail_b", lb, 2));
}

static int zeros(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static void test_holes(void)
{
	size_t len = 16 * PG + 100;
	int fd = CHECK_OK(open("holes", O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_EQ(ftruncate(fd, (off_t)len), 0);
	unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	if (m != MAP_FAILED) {
		m[5 * PG + 17] = 0xa5;
		m[len - 1] = 0x5a;
		CHECK_EQ(msync(m, len, MS_SYNC), 0);
		munmap(m, len);
	}
	close(fd);
	static unsigned char buf[16 * PG + 100];
	fd = CHECK_OK(open("holes", O_RDONLY));
	CHECK_EQ(pread(fd, buf, len, 0), (ssize_t)len);
	CHECK_EQ(buf[5 * PG + 17], 0xa5);
	CHECK_EQ(buf[len - 1], 0x5a);
	buf[5 * PG + 17] = buf[len - 1] = 0;
	CHECK(zeros(buf, len));
	close(fd);
	/* A write far past the end: the bytes between read as zeros. */
	fd = CHECK_OK(open("far", O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_EQ(pwrite(fd, "head", 4, 0), 4);
	CHECK_EQ(pwrite(fd, "tail", 4, 300000), 4);
	CHECK_EQ(pread(fd, buf, 8 * PG, 290000), 10004);
	CHECK(zeros(buf, 10000));
	CHECK(memcmp(buf + 10000, "tail", 4) == 0);
	close(fd);
}

static void test_shrink_grow(void)
{
	int fd = CHECK_OK(open("shrink", O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_EQ(append(fd, 0, 10000, 3), 0);
	CHECK_EQ(ftruncate(fd, 3000), 0);
	CHECK_EQ(ftruncate(fd, 10000), 0);
	static unsigned char buf[10000];
	CHECK_EQ(pread(fd, buf, sizeof buf, 0), 10000);
	int head_ok = 1;
	for (size_t i = 0; i < 3000; i++)
		head_ok &= buf[i] == byte_at(i, 3);
	CHECK(head_ok);
	CHECK(zeros(buf + 3000, 7000));
	unsigned char *m = mmap(NULL, 10000, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	if (m != MAP_FAILED) {
		CHECK(zeros(m + 3000, 7000));
		CHECK_EQ(m[2999], byte_at(2999, 3));
		munmap(m, 10000);
	}
	close(fd);
}

static void set_times(const char *name, time_t atime, time_t mtime)
{
	struct timespec ts[2] = { { atime, 0 }, { mtime, 0 } };
	CHECK_EQ(utimensat(AT_FDCWD, name, ts, 0), 0);
}

static void test_atime(void)
{
	struct statvfs vfs;
	if (statvfs(".", &vfs) == 0 && (vfs.f_flag & ST_NOATIME)) {
		ut_note("the scratch file system is mounted noatime: access times not checked");
		return;
	}
	CHECK_EQ(ut_write_file("atime", "some bytes", 10, 0644), 0);
	time_t now = time(NULL);
	char c;
	/* Older than the modification time: a read updates it. */
	set_times("atime", now - 1000, now - 500);
	int fd = CHECK_OK(open("atime", O_RDONLY));
	CHECK_EQ(read(fd, &c, 1), 1);
	struct stat st;
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK(st.st_atime >= now - 2);
	close(fd);
	/* Newer than the modification and change times, and not a day old:
	 * the read leaves it (relatime). */
	set_times("atime", now + 1000, now - 500);
	fd = CHECK_OK(open("atime", O_RDONLY));
	CHECK_EQ(read(fd, &c, 1), 1);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ((long long)st.st_atime, (long long)(now + 1000));
	close(fd);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	test_tails();
	test_holes();
	test_shrink_grow();
	test_atime();
	return ut_done();
}
