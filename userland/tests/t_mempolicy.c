/*
 * t_mempolicy: set_mempolicy and get_mempolicy, as Linux answers them.
 *
 * The nodes memory may come from (MPOL_F_MEMS_ALLOWED, and /proc/self/
 * status's Mems_allowed_list saying the same); the default
 * policy; BIND to one node, read back, and a page faulted in then found
 * on that node (MPOL_F_NODE|MPOL_F_ADDR); on a machine of two nodes or
 * more, BIND and PREFERRED to the last node and INTERLEAVE over all of
 * them placing pages there; PREFERRED with no node read back as LOCAL;
 * /proc/self/numa_maps naming the policy and counting a mapping's pages
 * on its node; move_pages telling where pages are and moving them (their
 * bytes kept; a page never touched ENOENT, nothing mapped EFAULT, a page a
 * fork shares EACCES, a node without memory ENODEV) and migrate_pages
 * moving them back; mbind's policy of a mapping (check_mbind); a fork and
 * an exec keeping the policy; and the errors (an unknown
 * mode, STATIC and RELATIVE together, BIND with no node or only a node
 * the machine has not, DEFAULT and LOCAL with nodes, a bad mask pointer,
 * unknown get flags, MEMS_ALLOWED with NODE, an address without ADDR,
 * an unmapped address, NODE alone under BIND).
 */
#include "ut.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DEFAULT    0
#define PREFERRED  1
#define BIND       2
#define INTERLEAVE 3
#define LOCAL      4
#define F_STATIC   (1 << 15)
#define F_RELATIVE (1 << 14)
#define F_NODE     1
#define F_ADDR     2
#define F_ALLOWED  4
#define WORDS      16           /* 1024 bits: more than any kernel's nodes */

static long setp(int mode, const uint64_t *mask, unsigned long maxnode)
{
	return syscall(SYS_set_mempolicy, mode, mask, maxnode);
}

static long getp(int *mode, uint64_t *mask, unsigned long maxnode, void *addr, int flags)
{
	return syscall(SYS_get_mempolicy, mode, mask, maxnode, addr, flags);
}

/* The node the page at p (touched now) lives on. */
static int node_of(char *p)
{
	p[0] = 1;
	int node = -1;
	CHECK_OK(getp(&node, NULL, 0, p, F_NODE | F_ADDR));
	return node;
}

static char *fresh_pages(int n)
{
	char *p = mmap(NULL, (size_t)n * 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	return p;
}

static int policy_mode(uint64_t *mask)
{
	int mode = -1;
	uint64_t m[WORDS];
	CHECK_OK(getp(&mode, m, WORDS * 64, NULL, 0));
	if (mask)
		*mask = m[0];
	return mode;
}

static void check_placement(uint64_t allowed)
{
	int first = __builtin_ctzll(allowed), last = 63 - __builtin_clzll(allowed);
	uint64_t one = 1ULL << first, got;
	CHECK_OK(setp(BIND, &one, 65));
	CHECK_EQ(policy_mode(&got), BIND);
	CHECK_EQ(got, one);
	char *p = fresh_pages(8);
	CHECK_EQ(node_of(p), first);
	if (first != last) {
		uint64_t l = 1ULL << last;
		CHECK_OK(setp(BIND, &l, 65));
		CHECK_EQ(node_of(p + 4096), last);
		CHECK_OK(setp(PREFERRED, &l, 65));
		CHECK_EQ(node_of(p + 2 * 4096), last);
		CHECK_OK(setp(INTERLEAVE, &allowed, 65));
		int next = -1;
		CHECK_OK(getp(&next, NULL, 0, NULL, F_NODE));
		CHECK(allowed & (1ULL << next));
		uint64_t seen = 0;
		for (int i = 3; i < 8; i++)
			seen |= 1ULL << node_of(p + i * 4096);
		CHECK_EQ(seen & ~allowed, 0);
		CHECK(__builtin_popcountll(seen) >= 2);     /* spread, not one node */
	}
	munmap(p, 8 * 4096);
	CHECK_OK(setp(PREFERRED, NULL, 0));
	CHECK_EQ(policy_mode(NULL), LOCAL);
	CHECK_OK(setp(DEFAULT, NULL, 0));
	CHECK_EQ(policy_mode(&got), DEFAULT);
	CHECK_EQ(got, 0);
}

/* /proc/self/numa_maps's line for a mapping: its policy word and the
 * pages on node, after the thread binds to node and touches n pages. */
static void check_numa_maps(int node, int n)
{
	uint64_t one = 1ULL << node;
	CHECK_OK(setp(BIND, &one, 65));
	/* PROT_NONE pages on both sides keep the mapping from merging with
	 * its neighbours, so its line is its own. */
	char *g = fresh_pages(n + 2), *p = g + 4096;
	CHECK_OK(mprotect(g, 4096, PROT_NONE));
	CHECK_OK(mprotect(p + (size_t)n * 4096, 4096, PROT_NONE));
	for (int i = 0; i < n; i++)
		p[i * 4096] = 1;
	char want_start[32], want_bind[32], want_pages[32], line[512];
	snprintf(want_start, sizeof want_start, "%lx ", (unsigned long)p);
	snprintf(want_bind, sizeof want_bind, " bind:%d ", node);
	snprintf(want_pages, sizeof want_pages, " N%d=%d ", node, n);
	FILE *f = fopen("/proc/self/numa_maps", "r");
	CHECK(f != NULL);
	int found = 0;
	while (f && fgets(line, sizeof line, f)) {
		if (strncmp(line, want_start, strlen(want_start)) != 0)
			continue;
		found = 1;
		CHECK(strstr(line, want_bind) != NULL);
		CHECK(strstr(line, want_pages) != NULL);
	}
	if (f)
		fclose(f);
	CHECK(found);
	munmap(g, (size_t)(n + 2) * 4096);
	CHECK_OK(setp(DEFAULT, NULL, 0));
}

static long move_pages_(int pid, unsigned long n, void **pages, const int *nodes, int *status,
			int flags)
{
	return syscall(SYS_move_pages, pid, n, pages, nodes, status, flags);
}

/* move_pages: where pages are, moving them with their bytes, and its
 * errors; migrate_pages: every page off a node. */
static void check_move_pages(uint64_t allowed)
{
	int first = __builtin_ctzll(allowed), last = 63 - __builtin_clzll(allowed);
	char *g = fresh_pages(6), *p = g + 4096;
	CHECK_OK(mprotect(g, 4096, PROT_NONE));
	CHECK_OK(mprotect(p + 4 * 4096, 4096, PROT_NONE));
	for (int i = 0; i < 3; i++)
		memset(p + i * 4096, 'a' + i, 4096);
	void *pages[5] = { p, p + 4096, p + 2 * 4096, p + 3 * 4096, (void *)4096 };
	int status[5], to[5] = { last, last, last, last, last };
	CHECK_EQ(move_pages_(0, 5, pages, NULL, status, 0), 0);
	for (int i = 0; i < 3; i++)
		CHECK(status[i] >= 0 && (allowed & (1ULL << status[i])));
	CHECK_EQ(status[3], -ENOENT);                   /* never touched */
	CHECK_EQ(status[4], -EFAULT);                   /* nothing mapped */
	CHECK_EQ(move_pages_(0, 4, pages, to, status, 1 << 1), 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(status[i], last);
	CHECK_EQ(status[3], -ENOENT);
	CHECK_EQ(move_pages_(0, 3, pages, NULL, status, 0), 0);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(status[i], last);
		CHECK(p[i * 4096] == 'a' + i && p[i * 4096 + 4095] == 'a' + i);
	}
	int bad = 63;
	if (!(allowed & (1ULL << bad)))
		CHECK_ERR(move_pages_(0, 1, pages, &bad, status, 1 << 1), ENODEV);
	CHECK_ERR(move_pages_(0, 1, pages, NULL, status, 1 << 5), EINVAL);
	CHECK_ERR(move_pages_(0, 1, (void **)UT_BADPTR, NULL, status, 0), EFAULT);
	CHECK_ERR(move_pages_(1 << 30, 1, pages, NULL, status, 0), ESRCH);
	if (first != last) {
		/* A page a fork shares is mapped by two processes: EACCES. */
		int fd[2];
		CHECK_OK(pipe(fd));
		pid_t pid = fork();
		if (pid == 0) {
			char c;
			_exit(read(fd[0], &c, 1) == 1 ? 0 : 1);
		}
		int back[1] = { first };
		CHECK_EQ(move_pages_(0, 1, pages, back, status, 1 << 1), 0);
		CHECK_EQ(status[0], -EACCES);
		CHECK_EQ(write(fd[1], "x", 1), 1);
		CHECK_EQ(ut_wait(pid), 0);
		close(fd[0]);
		close(fd[1]);
		uint64_t from = 1ULL << last, onto = 1ULL << first;
		long left = syscall(SYS_migrate_pages, 0, 65, &from, &onto);
		CHECK(left >= 0);
		CHECK_EQ(move_pages_(0, 3, pages, NULL, status, 0), 0);
		for (int i = 0; i < 3; i++)
			CHECK_EQ(status[i], first);
		CHECK(p[2 * 4096 + 7] == 'c');
	} else {
		CHECK(syscall(SYS_migrate_pages, 0, 65, &allowed, &allowed) >= 0);
	}
	munmap(g, 6 * 4096);
}

static long mbindp(void *addr, unsigned long len, int mode, const uint64_t *mask,
		   unsigned long maxnode, unsigned flags)
{
	return syscall(SYS_mbind, addr, len, mode, mask, maxnode, flags);
}

#define MF_STRICT 1
#define MF_MOVE   2

/* mbind: a mapping's own policy, read back at an address in it (and
 * DEFAULT beside it), placing its pages whatever the thread's policy
 * says; on two nodes, MPOL_MF_MOVE bringing pages already there onto the
 * policy's node, STRICT without MOVE refusing them (EIO), INTERLEAVE
 * spreading a mapping; a fork keeping it; and the errors. */
static void check_mbind(uint64_t allowed)
{
	int first = __builtin_ctzll(allowed), last = 63 - __builtin_clzll(allowed);
	uint64_t one = 1ULL << last, got = 0;
	char *p = fresh_pages(8);
	CHECK_OK(mbindp(p + 4096, 4 * 4096, BIND, &one, 65, 0));
	int mode = -1;
	CHECK_OK(getp(&mode, &got, 64, p + 2 * 4096, F_ADDR));
	CHECK_EQ(mode, BIND);
	CHECK_EQ(got, one);
	CHECK_OK(getp(&mode, &got, 64, p, F_ADDR));
	CHECK_EQ(mode, DEFAULT);                        /* outside the range */
	CHECK_OK(getp(&mode, &got, 64, p + 5 * 4096, F_ADDR));
	CHECK_EQ(mode, DEFAULT);
	uint64_t f = 1ULL << first;
	CHECK_OK(setp(BIND, &f, 65));                   /* the thread's says the other node */
	CHECK_EQ(node_of(p + 3 * 4096), last);          /* the mapping's wins */
	CHECK_OK(setp(DEFAULT, NULL, 0));
	pid_t pid = fork();
	if (pid == 0) {
		int m2 = -1;
		uint64_t g2 = 0;
		_exit(getp(&m2, &g2, 64, p + 2 * 4096, F_ADDR) == 0 && m2 == BIND && g2 == one ? 0 : 1);
	}
	CHECK_EQ(ut_wait(pid), 0);
	if (first != last) {
		char *q = fresh_pages(4);
		CHECK_OK(setp(BIND, &f, 65));           /* its pages on the first node */
		for (int i = 0; i < 4; i++)
			CHECK_EQ(node_of(q + i * 4096), first);
		CHECK_OK(setp(DEFAULT, NULL, 0));
		CHECK_ERR(mbindp(q, 4 * 4096, BIND, &one, 65, MF_STRICT), EIO);
		CHECK_OK(mbindp(q, 4 * 4096, BIND, &one, 65, MF_MOVE | MF_STRICT));
		for (int i = 0; i < 4; i++)
			CHECK_EQ(node_of(q + i * 4096), last);
		CHECK_EQ(q[0], 1);                      /* the bytes came along */
		munmap(q, 4 * 4096);
		char *r = fresh_pages(8);
		CHECK_OK(mbindp(r, 8 * 4096, INTERLEAVE, &allowed, 65, 0));
		uint64_t seen = 0;
		for (int i = 0; i < 8; i++)
			seen |= 1ULL << node_of(r + i * 4096);
		int weight = __builtin_popcountll(allowed);
		CHECK_EQ(seen & ~allowed, 0);
		CHECK_EQ(__builtin_popcountll(seen), weight < 8 ? weight : 8);   /* page by page */
		munmap(r, 8 * 4096);
	}
	CHECK_ERR(mbindp(p + 1, 4096, BIND, &one, 65, 0), EINVAL);          /* unaligned */
	CHECK_ERR(mbindp(p, 4096, 99, &one, 65, 0), EINVAL);
	CHECK_ERR(mbindp(p, 4096, BIND, &one, 65, 8), EINVAL);              /* unknown flag */
	CHECK_ERR(mbindp(p, 4096, BIND, NULL, 0, 0), EINVAL);               /* no node */
	CHECK_ERR(mbindp(p, 4096, DEFAULT, &one, 65, 0), EINVAL);
	CHECK_OK(mbindp(p, 0, BIND, &one, 65, 0));                          /* nothing to do */
	munmap(p + 6 * 4096, 2 * 4096);
	CHECK_ERR(mbindp(p + 5 * 4096, 2 * 4096, BIND, &one, 65, 0), EFAULT);   /* a hole */
	CHECK_OK(getp(&mode, &got, 64, p + 5 * 4096, F_ADDR));
	CHECK_EQ(mode, DEFAULT);                        /* nothing changed */
	CHECK_OK(mbindp(p + 4096, 4 * 4096, DEFAULT, NULL, 0, 0));          /* its own goes */
	CHECK_OK(getp(&mode, &got, 64, p + 2 * 4096, F_ADDR));
	CHECK_EQ(mode, DEFAULT);
	munmap(p, 6 * 4096);
}

static void check_errors(uint64_t allowed)
{
	uint64_t one = allowed & -allowed, none = 0, far = 1ULL << 63;
	CHECK_ERR(setp(42, &one, 65), EINVAL);
	CHECK_ERR(setp(BIND | F_STATIC | F_RELATIVE, &one, 65), EINVAL);
	CHECK_ERR(setp(BIND, &none, 65), EINVAL);
	CHECK_ERR(setp(BIND, NULL, 0), EINVAL);
	if (!(allowed & far))
		CHECK_ERR(setp(BIND, &far, 65), EINVAL);
	CHECK_ERR(setp(DEFAULT, &one, 65), EINVAL);
	CHECK_ERR(setp(LOCAL, &one, 65), EINVAL);
	CHECK_ERR(setp(BIND, (uint64_t *)UT_BADPTR, 65), EFAULT);
	int mode;
	uint64_t m[WORDS];
	CHECK_ERR(getp(&mode, m, WORDS * 64, NULL, 8), EINVAL);
	CHECK_ERR(getp(&mode, m, WORDS * 64, NULL, F_ALLOWED | F_NODE), EINVAL);
	CHECK_ERR(getp(&mode, m, WORDS * 64, &mode, 0), EINVAL);
	CHECK_ERR(getp(&mode, m, WORDS * 64, NULL, F_ADDR), EFAULT);     /* page 0 */
	CHECK_OK(setp(BIND, &one, 65));
	CHECK_ERR(getp(&mode, NULL, 0, NULL, F_NODE), EINVAL);
	char *p = fresh_pages(1);
	CHECK_OK(getp(&mode, m, WORDS * 64, p, F_ADDR));
	CHECK_EQ(mode, DEFAULT);        /* no policy of the mapping's own */
	munmap(p, 4096);
	CHECK_OK(setp(DEFAULT, NULL, 0));
}

static void check_inherited(uint64_t allowed, const char *self)
{
	uint64_t one = allowed & -allowed;
	CHECK_OK(setp(BIND, &one, 65));
	pid_t pid = fork();
	if (pid == 0)
		_exit(policy_mode(NULL) == BIND ? 0 : 1);
	CHECK_EQ(ut_wait(pid), 0);
	pid = fork();
	if (pid == 0) {
		execl(self, self, "--bound", (char *)NULL);
		_exit(3);
	}
	CHECK_EQ(ut_wait(pid), 0);
	CHECK_OK(setp(DEFAULT, NULL, 0));
}

/* /proc/self/status's Mems_allowed_list ("0-1,3"), as a mask. */
static uint64_t mems_allowed_list(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[512];
	uint64_t mask = 0;
	while (f && fgets(line, sizeof line, f)) {
		if (strncmp(line, "Mems_allowed_list:", 18) != 0)
			continue;
		for (char *p = line + 18; *p;) {
			while (*p == ' ' || *p == '\t' || *p == ',')
				p++;
			if (*p < '0' || *p > '9')
				break;
			long a = strtol(p, &p, 10), b = a;
			if (*p == '-')
				b = strtol(p + 1, &p, 10);
			for (long n = a; n <= b && n < 64; n++)
				mask |= 1ULL << n;
		}
	}
	if (f)
		fclose(f);
	return mask;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--bound") == 0) {
		int mode = -1;
		uint64_t m[WORDS];
		return syscall(SYS_get_mempolicy, &mode, m, WORDS * 64, NULL, 0) == 0 &&
		       mode == BIND ? 0 : 1;
	}
	ut_init(argc, argv);
	char self[256];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	CHECK(n > 0);
	self[n > 0 ? n : 0] = 0;
	uint64_t m[WORDS] = { 0 };
	int mode = -1;
	CHECK_OK(getp(&mode, m, WORDS * 64, NULL, F_ALLOWED));
	uint64_t allowed = m[0];
	CHECK(allowed != 0);
	CHECK_EQ(mems_allowed_list(), allowed);
	CHECK_EQ(policy_mode(NULL), DEFAULT);
	check_placement(allowed);
	check_numa_maps(63 - __builtin_clzll(allowed), 5);
	check_move_pages(allowed);
	check_errors(allowed);
	check_mbind(allowed);
	check_inherited(allowed, self);
	return ut_done();
}
