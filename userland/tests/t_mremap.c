/*
 * t_mremap: growing, shrinking and moving mappings.
 *
 * An anonymous mapping grown in place when the pages after it are free,
 * moved (MREMAP_MAYMOVE) when they are not, with its contents and the old
 * range gone, shrunk, moved to a chosen address (MREMAP_FIXED); a shared
 * file mapping moved and still writing the file; a private copy-on-write
 * page kept private through the move and a fork; MREMAP_DONTUNMAP
 * leaving the old range mapped and empty; the errors.
 */
#include "ut.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long pg;

static char *map_anon(size_t n)
{
	char *p = mmap(NULL, n * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static int mapped(void *p, size_t len)
{
	return madvise(p, len, MADV_WILLNEED) == 0;
}

static long raw_mremap(void *old, size_t oldlen, size_t newlen, int flags, void *newaddr)
{
	return syscall(SYS_mremap, old, oldlen, newlen, flags, newaddr);
}

static void test_grow_and_shrink(void)
{
	/* In place: the two pages after it were just freed. */
	char *a = map_anon(4);
	CHECK(a != NULL);
	CHECK_OK(munmap(a + 2 * pg, 2 * pg));
	memset(a, 'a', 2 * pg);
	char *g = mremap(a, 2 * pg, 4 * pg, 0);
	CHECK(g == a);
	CHECK_EQ(a[2 * pg - 1], 'a');
	CHECK_EQ(a[4 * pg - 1], 0);
	a[4 * pg - 1] = 'z';

	/* Shrink: the tail goes. */
	CHECK(mremap(a, 4 * pg, pg, 0) == a);
	CHECK_EQ(a[0], 'a');
	CHECK(!mapped(a + pg, pg));
	CHECK_OK(munmap(a, pg));

	/* Blocked by a neighbour: ENOMEM without MAYMOVE, a move with it. */
	char *b = map_anon(3);
	CHECK(b != NULL);
	CHECK_OK(munmap(b + 2 * pg, pg));
	char *n = mmap(b + 2 * pg, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	CHECK(n == b + 2 * pg);
	for (long i = 0; i < 2 * pg; i++)
		b[i] = (char)i;
	CHECK_ERR(raw_mremap(b, 2 * pg, 8 * pg, 0, NULL), ENOMEM);
	char *m = mremap(b, 2 * pg, 8 * pg, MREMAP_MAYMOVE);
	CHECK(m != MAP_FAILED && m != b);
	int same = 1;
	for (long i = 0; i < 2 * pg; i++)
		same &= m[i] == (char)i;
	CHECK(same);
	CHECK_EQ(m[8 * pg - 1], 0);
	m[8 * pg - 1] = 1;
	CHECK(!mapped(b, 2 * pg));
	CHECK(mapped(n, pg));
	CHECK_OK(munmap(m, 8 * pg));
	CHECK_OK(munmap(n, pg));
}

static void test_fixed(void)
{
	char *a = map_anon(2), *dest = map_anon(6);
	CHECK(a && dest);
	memset(a, 'q', 2 * pg);
	char *r = mremap(a, 2 * pg, 3 * pg, MREMAP_MAYMOVE | MREMAP_FIXED, dest + 2 * pg);
	CHECK(r == dest + 2 * pg);
	CHECK_EQ(r[0], 'q');
	CHECK_EQ(r[2 * pg - 1], 'q');
	CHECK_EQ(r[3 * pg - 1], 0);
	CHECK(!mapped(a, 2 * pg));
	CHECK(mapped(dest, pg));        /* the rest of dest is still there */
	CHECK_ERR(raw_mremap(r, pg, pg, MREMAP_MAYMOVE | MREMAP_FIXED, r), EINVAL); /* overlap */
	CHECK_OK(munmap(dest, 6 * pg));
}

static void test_file_and_cow(void)
{
	CHECK_OK(ut_write_file("mf", "", 0, 0644));
	int fd = open("mf", O_RDWR);
	CHECK(fd >= 0);
	CHECK_OK(ftruncate(fd, 4 * pg));
	char *s = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(s != MAP_FAILED);
	s[0] = 'S';
	char *blocker = mmap(s + 2 * pg, pg, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	char *t = mremap(s, 2 * pg, 4 * pg, MREMAP_MAYMOVE);
	CHECK(t != MAP_FAILED);
	CHECK_EQ(t[0], 'S');
	t[3 * pg] = 'T';                /* the file's fourth page, through the grown part */
	CHECK_OK(msync(t, 4 * pg, MS_SYNC));
	char buf[1];
	CHECK_EQ(pread(fd, buf, 1, 3 * pg), 1);
	CHECK_EQ(buf[0], 'T');
	CHECK_EQ(pread(fd, buf, 1, 0), 1);
	CHECK_EQ(buf[0], 'S');
	CHECK_OK(munmap(t, 4 * pg));
	if (blocker != MAP_FAILED)
		munmap(blocker, pg);
	close(fd);

	/* A page shared copy-on-write with a child stays private after the
	 * move: the child sees its own copy. */
	char *c = map_anon(1);
	c[0] = 'p';
	int fds[2];
	CHECK_OK(pipe(fds));
	pid_t pid = fork();
	if (pid == 0) {
		char x;
		close(fds[1]);
		(void)!read(fds[0], &x, 1);
		_exit(c[0] == 'p' ? 0 : 1);
	}
	char *moved = mremap(c, pg, 16 * pg, MREMAP_MAYMOVE);
	CHECK(moved != MAP_FAILED);
	moved[0] = 'P';
	CHECK_EQ(write(fds[1], "g", 1), 1);
	CHECK_EQ(ut_wait(pid), 0);
	CHECK_EQ(moved[0], 'P');
	close(fds[0]);
	close(fds[1]);
	munmap(moved, 16 * pg);
}

/* MREMAP_DONTUNMAP: the pages move, the old range stays mapped and
 * reads zeros again. */
static void test_dontunmap(void)
{
	char *a = map_anon(2);
	CHECK(a != NULL);
	memset(a, 'd', 2 * pg);
	char *m = mremap(a, 2 * pg, 2 * pg, MREMAP_MAYMOVE | 4 /* MREMAP_DONTUNMAP */);
	CHECK(m != MAP_FAILED && m != a);
	if (m == MAP_FAILED)
		return;
	CHECK_EQ(m[0], 'd');
	CHECK_EQ(m[2 * pg - 1], 'd');
	CHECK(mapped(a, 2 * pg));
	CHECK_EQ(a[0], 0);
	a[1] = 'x';                     /* still writable */
	CHECK_EQ(m[1], 'd');
	CHECK_ERR(raw_mremap(m, 2 * pg, 3 * pg, MREMAP_MAYMOVE | 4, NULL), EINVAL);
	CHECK_ERR(raw_mremap(m, 2 * pg, 2 * pg, 4, NULL), EINVAL);
	munmap(a, 2 * pg);
	munmap(m, 2 * pg);
}

static void test_errors(void)
{
	char *a = map_anon(2);
	CHECK(a != NULL);
	CHECK_ERR(raw_mremap(a + 1, pg, 2 * pg, MREMAP_MAYMOVE, NULL), EINVAL);
	CHECK_ERR(raw_mremap(a, pg, 2 * pg, 8, NULL), EINVAL);
	CHECK_ERR(raw_mremap(a, pg, 2 * pg, MREMAP_FIXED, a + 8 * pg), EINVAL);
	CHECK_ERR(raw_mremap(a, pg, 0, MREMAP_MAYMOVE, NULL), EINVAL);
	CHECK_ERR(raw_mremap(a, 3 * pg, 4 * pg, MREMAP_MAYMOVE, NULL), EFAULT); /* past its end */
	CHECK_OK(munmap(a, 2 * pg));
	CHECK_ERR(raw_mremap(a, pg, 2 * pg, MREMAP_MAYMOVE, NULL), EFAULT);     /* unmapped */
	CHECK_ERR(raw_mremap(a, pg, 2 * pg, MREMAP_MAYMOVE | MREMAP_FIXED, a + 1), EINVAL);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	pg = sysconf(_SC_PAGESIZE);
	test_grow_and_shrink();
	test_fixed();
	test_file_and_cow();
	test_dontunmap();
	test_errors();
	return ut_done();
}
