/*
 * t_segmap: read(2), write(2) and shared mappings of one file are one
 * copy of its pages (Tempest: segmap windows onto the page cache).
 *
 *   - a store through a child's MAP_SHARED mapping is seen by the
 *     parent's read(2) at once, with no msync, and the parent's
 *     pwrite(2) is seen through the child's mapping;
 *   - a file written in page-sized and odd-sized pieces reads back
 *     intact (checksum) from another process, across page boundaries;
 *   - fsync and msync of mapped stores succeed and the data reads back
 *     after the mapping is gone;
 *   - truncation under the caller's own mapping: the page wholly past the
 *     new end raises SIGBUS, the rest of the last page reads as zeros;
 *   - /proc/meminfo (Tempest only) shows the Segmap lines.
 */
#include "ut.h"

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096

static uint32_t checksum(const unsigned char *p, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static void pattern(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)((i * 31 + seed) ^ (i >> 9));
}

/* The child: map the file shared, store, let the parent read; then see
 * the parent's pwrite through the mapping.  Exits 0 when all went well. */
static void coherence_child(int fd, int to_parent, int from_parent)
{
	char *m = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		_exit(4);
	memcpy(m + PG + 10, "CHILD", 5);
	ut_tell(to_parent);
	if (ut_await(from_parent))
		_exit(5);
	_exit(memcmp(m + 100, "PARENT", 6) == 0 ? 0 : 6);
}

static void test_coherence(void)
{
	int fd = CHECK_OK(open("coh", O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_OK(ftruncate(fd, 2 * PG));
	int up[2], down[2];
	CHECK_OK(pipe(up));
	CHECK_OK(pipe(down));
	pid_t pid = fork();
	if (pid == 0)
		coherence_child(fd, up[1], down[0]);
	CHECK(pid > 0);
	CHECK_EQ(ut_await(up[0]), 0);
	char got[6] = { 0 };
	CHECK_EQ(pread(fd, got, 5, PG + 10), 5);
	CHECK(memcmp(got, "CHILD", 5) == 0);
	CHECK_EQ(pwrite(fd, "PARENT", 6, 100), 6);
	ut_tell(down[1]);
	int status = 0;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	close(fd);
}

#define BIG (3 * 1024 * 1024 + 777)

static void test_pieces(void)
{
	unsigned char *buf = malloc(BIG), *back = malloc(BIG);
	CHECK(buf && back);
	if (!buf || !back)
		return;
	pattern(buf, BIG, 7);
	int fd = CHECK_OK(open("big", O_RDWR | O_CREAT | O_TRUNC, 0644));
	size_t off = 0;
	/* Page-sized pieces, then odd ones that straddle page boundaries. */
	for (; off + PG <= BIG / 2; off += PG)
		CHECK_EQ(pwrite(fd, buf + off, PG, off), PG);
	for (size_t n = 1000; off < BIG; off += n)
		CHECK_EQ(pwrite(fd, buf + off, off + n <= BIG ? n : BIG - off, off),
			 (long long)(off + n <= BIG ? n : BIG - off));
	CHECK_OK(close(fd));
	pid_t pid = fork();
	if (pid == 0) {
		int rfd = open("big", O_RDONLY);
		size_t got = 0;
		ssize_t r;
		while (rfd >= 0 && (r = read(rfd, back + got, 5000)) > 0)
			got += r;
		_exit(got == BIG && checksum(back, BIG) == checksum(buf, BIG) ? 0 : 7);
	}
	int status = 0;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	free(buf);
	free(back);
}

static void test_sync_mapped(void)
{
	int fd = CHECK_OK(open("synced", O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_OK(ftruncate(fd, 3 * PG));
	char *m = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	if (m == MAP_FAILED)
		return;
	memcpy(m + 2 * PG + 1, "fsync", 5);
	CHECK_EQ(fsync(fd), 0);
	memcpy(m + 5, "msync", 5);
	CHECK_EQ(msync(m, 3 * PG, MS_SYNC), 0);
	CHECK_EQ(munmap(m, 3 * PG), 0);
	char got[5];
	CHECK_EQ(pread(fd, got, 5, 2 * PG + 1), 5);
	CHECK(memcmp(got, "fsync", 5) == 0);
	CHECK_EQ(pread(fd, got, 5, 5), 5);
	CHECK(memcmp(got, "msync", 5) == 0);
	close(fd);
}

/* In a child: touch the second page after truncating to half a page. */
static void truncate_child(int fd)
{
	signal(SIGBUS, SIG_DFL);
	char *m = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		_exit(8);
	m[0] = 'a';
	m[PG / 2 + 1] = 'z';
	if (ftruncate(fd, PG / 2) != 0)
		_exit(9);
	if (m[PG / 2 + 1] != 0 || m[0] != 'a')
		_exit(10);              /* the tail of the last page reads as zeros */
	volatile char c = m[PG + 1];    /* wholly past the end: SIGBUS */
	(void)c;
	_exit(11);
}

static void test_truncate(void)
{
	int fd = CHECK_OK(open("trunc", O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_OK(ftruncate(fd, 2 * PG));
	pid_t pid = fork();
	if (pid == 0)
		truncate_child(fd);
	int status = 0;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS);
	struct stat st;
	CHECK_OK(fstat(fd, &st));
	CHECK_EQ(st.st_size, PG / 2);
	close(fd);
}

static void test_meminfo(void)
{
	char buf[4096];
	long n = ut_read_file("/proc/meminfo", buf, sizeof buf - 1);
	CHECK(n > 0);
	if (n <= 0)
		return;
	buf[n] = 0;
	if (!strstr(buf, "SegmapWindows:")) {
		ut_note("no Segmap lines in /proc/meminfo (not Tempest): skipped");
		return;
	}
	CHECK(strstr(buf, "Segmap:") != NULL);
	CHECK(strstr(buf, "SegmapHits:") != NULL);
	unsigned long windows = 0;
	CHECK(sscanf(strstr(buf, "SegmapWindows:"), "SegmapWindows: %lu", &windows) == 1);
	CHECK(windows > 0);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	test_coherence();
	test_pieces();
	test_sync_mapped();
	test_truncate();
	test_meminfo();
	return ut_done();
}
