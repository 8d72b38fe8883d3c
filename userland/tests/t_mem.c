/*
 * t_mem: the address space.
 *
 * mmap (anonymous and file, private and shared, across fork), munmap,
 * mprotect (a write to a PROT_READ page raises SIGSEGV, which a handler
 * sees with the right address and code, fixes with mprotect, and returns
 * from through rt_sigreturn so the write completes), brk (raw), and SIGBUS
 * past the end of a mapped file.  Shared file mappings: coherent with
 * read(2) and write(2) and between mappings and across fork, msync, and
 * truncation (zeros past the new end, SIGBUS for pages wholly past it).
 * mincore: untouched anonymous pages out, touched ones in, a file
 * mapping's pages in once the page cache has them (a write(2) before),
 * and its errors (EINVAL unaligned, ENOMEM for a hole or a range past
 * user space, EFAULT for the vector; length 0 is 0).
 */
#include "ut.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long page;

/* Runs fn in a child and returns its wait status. */
static int status_of(void (*fn)(void *), void *arg)
{
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		fn(arg);
		_exit(0);
	}
	return pid < 0 ? -1 : ut_wait(pid);
}

static void write_byte(void *p)
{
	*(volatile char *)p = 1;
}

static void read_byte(void *p)
{
	(void)*(volatile char *)p;
}

static int died_of(int status, int sig)
{
	return WIFSIGNALED(status) && WTERMSIG(status) == sig;
}

static void test_anonymous(void)
{
	char *p = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	CHECK_EQ((uintptr_t)p % page, 0);
	int zero = 1;
	for (long i = 0; i < 4 * page; i += 512)
		zero &= p[i] == 0;
	CHECK(zero);
	for (long i = 0; i < 4 * page; i++)
		p[i] = (char)i;
	CHECK_EQ(p[4 * page - 1], (char)(4 * page - 1));

	/* Private memory is copied on fork: the child's write stays there. */
	pid_t pid = fork();
	if (pid == 0) {
		p[10] = 99;
		_exit(p[10] == 99 ? 0 : 1);
	}
	int st = ut_wait(pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(p[10], 10);

	/* Unmapping the middle page leaves its neighbours. */
	CHECK_OK(munmap(p + page, page));
	CHECK_EQ(p[0], 0);
	CHECK_EQ(p[2 * page], (char)(2 * page));
	CHECK(died_of(status_of(read_byte, p + page), SIGSEGV));
	CHECK(died_of(status_of(write_byte, p + page + 100), SIGSEGV));
	/* MAP_FIXED fills the hole again, zeroed. */
	char *q = mmap(p + page, page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	CHECK(q == p + page);
	CHECK_EQ(q[5], 0);
	/* MAP_FIXED also replaces what is there. */
	q = mmap(p, page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	CHECK(q == p);
	CHECK_EQ(p[7], 0);
	CHECK_OK(munmap(p, 4 * page));
	CHECK(died_of(status_of(read_byte, p), SIGSEGV));
	/* Unmapping an unmapped range is not an error. */
	CHECK_OK(munmap(p, 4 * page));

	/* Shared anonymous memory is shared with a child. */
	volatile int *shared = mmap(NULL, page, PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shared != MAP_FAILED);
	pid = fork();
	if (pid == 0) {
		shared[3] = 1234;
		_exit(0);
	}
	ut_wait(pid);
	CHECK_EQ(shared[3], 1234);
	munmap((void *)shared, page);

	/* A big reservation costs nothing until it is touched. */
	size_t big = (size_t)1 << 32;
	char *r = mmap(NULL, big, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(r != MAP_FAILED);
	if (r != MAP_FAILED) {
		r[big - 1] = 1;
		r[0] = 2;
		CHECK(r[big - 1] == 1 && r[0] == 2);
		CHECK_OK(munmap(r, big));
	}
}

static void test_mmap_errors(void)
{
	int fd = CHECK_OK(open("file", O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_ERR(mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), EINVAL);
	CHECK_ERR(mmap(NULL, page, PROT_READ, MAP_ANONYMOUS, -1, 0), EINVAL);
	CHECK_ERR(mmap(NULL, page, PROT_READ, MAP_PRIVATE, fd, 100), EINVAL);
	CHECK_ERR(mmap((void *)(0x10000000 + 1), page, PROT_READ,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0), EINVAL);
	CHECK_ERR(mmap(NULL, page, PROT_READ, MAP_PRIVATE, -1, 0), EBADF);
	CHECK_ERR(mmap(NULL, page, PROT_READ, MAP_PRIVATE, 5555, 0), EBADF);
	CHECK_ERR(mmap(NULL, (size_t)1 << 62, PROT_READ,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), ENOMEM);
	CHECK_ERR(syscall(SYS_mmap, 0, -4096L, PROT_READ,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), ENOMEM);
	close(fd);
	fd = CHECK_OK(open("file", O_RDONLY));
	CHECK_ERR(mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), EACCES);
	void *ok = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(ok != MAP_FAILED); /* a private copy may be written */
	munmap(ok, page);
	close(fd);
	fd = CHECK_OK(open("file", O_WRONLY));
	CHECK_ERR(mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0), EACCES);
	close(fd);
	int p[2];
	CHECK_OK(pipe(p));
	CHECK_ERR(mmap(NULL, page, PROT_READ, MAP_PRIVATE, p[0], 0), ENODEV);
	close(p[0]);
	close(p[1]);

	CHECK_ERR(munmap((void *)(0x10000000 + 1), page), EINVAL);
	CHECK_ERR(munmap((void *)0x10000000, 0), EINVAL);
	CHECK_ERR(munmap(UT_KERNPTR, page), EINVAL);
}

static void test_file_mapping(void)
{
	char data[3 * 4096];
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (char)('a' + i % 26);
	size_t len = page + 100; /* a page and a bit */
	CHECK_OK(ut_write_file("m", data, len, 0644));
	int fd = CHECK_OK(open("m", O_RDWR));
	char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(p != MAP_FAILED);
	CHECK(memcmp(p, data, len) == 0);
	/* The tail of the last page reads as zeros. */
	CHECK(p[len] == 0 && p[2 * page - 1] == 0);
	/* A private write is not written back. */
	p[0] = 'X';
	char c;
	CHECK_EQ(pread(fd, &c, 1, 0), 1);
	CHECK_EQ(c, 'a');
	munmap(p, 2 * page);

	/* An offset mapping starts at that page of the file. */
	p = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, page);
	CHECK(p != MAP_FAILED);
	CHECK(memcmp(p, data + page, 100) == 0);
	munmap(p, page);

	/* A shared write reaches the file. */
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED);
	memcpy(p + 10, "SHARED", 6);
	CHECK_OK(munmap(p, page));
	char back[8] = { 0 };
	CHECK_EQ(pread(fd, back, 6, 10), 6);
	CHECK(memcmp(back, "SHARED", 6) == 0);

	/* A page wholly past the end of the file raises SIGBUS. */
	p = mmap(NULL, 3 * page, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED);
	CHECK(died_of(status_of(read_byte, p + 2 * page), SIGBUS));
	CHECK(WIFEXITED(status_of(read_byte, p + page + 50)));
	munmap(p, 3 * page);
	/* The mapping keeps the file open after close. */
	p = mmap(NULL, page, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	CHECK(p != MAP_FAILED && p[1] == 'b');
	munmap(p, page);
}

static void test_shared_file(void)
{
	char data[2 * 4096];
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (char)('A' + i % 23);
	CHECK_OK(ut_write_file("s", data, sizeof data, 0644));
	int fd = CHECK_OK(open("s", O_RDWR));
	char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	char *q = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED && q != MAP_FAILED && p != q);
	if (p == MAP_FAILED || q == MAP_FAILED)
		return;
	CHECK(memcmp(q, data, sizeof data) == 0);

	/* A store is seen by the other mapping and by read(2) at once. */
	p[5] = '!';
	CHECK_EQ(q[5], '!');
	char c = 0;
	CHECK_EQ(pread(fd, &c, 1, 5), 1);
	CHECK_EQ(c, '!');
	/* write(2) is seen by the mappings. */
	CHECK_EQ(pwrite(fd, "wx", 2, page + 7), 2);
	CHECK(p[page + 7] == 'w' && q[page + 8] == 'x');

	/* A child's store is the parent's too: no copy-on-write. */
	pid_t pid = fork();
	if (pid == 0) {
		p[page + 100] = '#';
		_exit(q[5] == '!' ? 0 : 1);
	}
	int st = ut_wait(pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(q[page + 100], '#');

	/* msync, and its errors. */
	memcpy(p + 200, "synced", 6);
	CHECK_OK(msync(p, 2 * page, MS_SYNC));
	int fd2 = CHECK_OK(open("s", O_RDONLY));
	char back[8] = { 0 };
	CHECK_EQ(pread(fd2, back, 6, 200), 6);
	CHECK(memcmp(back, "synced", 6) == 0);
	close(fd2);
	CHECK_OK(msync(p, page, MS_ASYNC));
	CHECK_ERR(msync(p + 1, page, MS_SYNC), EINVAL);
	CHECK_ERR(msync(p, page, MS_SYNC | MS_ASYNC), EINVAL);
	CHECK_ERR(msync(p, page, 0x100), EINVAL);

	/* MAP_FIXED_NOREPLACE does not replace. */
	CHECK_ERR(mmap(p, page, PROT_READ, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0), EEXIST);
	CHECK_EQ(p[5], '!');

	/* Shrinking the file: the rest of the last page reads as zeros, a
	 * page wholly past the end raises SIGBUS, and the size is not changed
	 * by a store past it. */
	CHECK_OK(ftruncate(fd, 100));
	CHECK_EQ(q[5], '!');
	CHECK_EQ(q[200], 0);
	CHECK(died_of(status_of(read_byte, q + page), SIGBUS));
	p[300] = 'z';
	struct stat sb;
	CHECK_OK(fstat(fd, &sb));
	CHECK_EQ(sb.st_size, 100);
	/* Growing it again: the new part reads as zeros. */
	CHECK_OK(ftruncate(fd, 2 * page));
	CHECK_EQ(q[page + 7], 0);
	CHECK_EQ(q[page + 100], 0);
	CHECK(WIFEXITED(status_of(read_byte, q + page)));
	CHECK_OK(munmap(p, 2 * page));
	CHECK_OK(munmap(q, 2 * page));
	CHECK_ERR(msync(p, page, MS_SYNC), ENOMEM);
	CHECK_EQ(pread(fd, back, 6, 0), 6);
	CHECK(memcmp(back, "ABCDE!", 6) == 0);
	close(fd);
}

static char *volatile fault_page;
static void *volatile fault_addr;
static volatile int fault_code, faults;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (++faults > 3) {
		ut_say("FAIL handler: the fault repeats, giving up");
		_exit(2);
	}
	fault_addr = si->si_addr;
	fault_code = si->si_code;
	/* Make the page writable and return: the write is retried. */
	mprotect((void *)fault_page, page, PROT_READ | PROT_WRITE);
}

static void test_mprotect(void)
{
	char *p = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	p[page] = 7;
	CHECK_OK(mprotect(p + page, page, PROT_READ));
	CHECK_EQ(p[page], 7); /* still readable */
	CHECK(died_of(status_of(write_byte, p + page), SIGSEGV));
	CHECK(WIFEXITED(status_of(write_byte, p)));     /* neighbours unchanged */
	CHECK(WIFEXITED(status_of(write_byte, p + 2 * page)));
	CHECK_OK(mprotect(p + page, page, PROT_NONE));
	CHECK(died_of(status_of(read_byte, p + page), SIGSEGV));
	CHECK_OK(mprotect(p + page, page, PROT_READ));

	struct sigaction sa = { 0 }, old;
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	CHECK_OK(sigaction(SIGSEGV, &sa, &old));
	fault_page = p + page;
	__asm__ volatile("" ::: "memory");
	*(volatile char *)(p + page + 123) = 42; /* faults once; fixed */
	CHECK_EQ(faults, 1);
	CHECK(fault_addr == p + page + 123);
	CHECK_EQ(fault_code, SEGV_ACCERR);
	CHECK_EQ(p[page + 123], 42);
	CHECK_EQ(p[page], 7);
	sigaction(SIGSEGV, &old, NULL);

	/* musl's mprotect rounds the address down itself: ask the kernel. */
	CHECK_ERR(syscall(SYS_mprotect, p + 1, page, PROT_READ), EINVAL);
	CHECK_ERR(mprotect(p, page, 0x1000), EINVAL);
	CHECK_OK(munmap(p, 3 * page));
	CHECK_ERR(mprotect(p, page, PROT_READ), ENOMEM);
	CHECK_OK(mprotect(p, 0, PROT_READ)); /* empty: nothing to do */

	int fd = CHECK_OK(open("mp", O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_OK(ftruncate(fd, page));
	close(fd);
	fd = CHECK_OK(open("mp", O_RDONLY));
	char *m = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	CHECK_ERR(mprotect(m, page, PROT_READ | PROT_WRITE), EACCES);
	munmap(m, page);
	close(fd);
}

static void brk_child(void *arg)
{
	(void)arg;
	char *cur = (char *)syscall(SYS_brk, 0);
	CHECK(cur != NULL);
	char *want = cur + 256 * 1024;
	CHECK(syscall(SYS_brk, want) == (long)want);
	CHECK(syscall(SYS_brk, 0) == (long)want);
	int zero = 1;
	for (char *q = cur; q < want; q += 4096)
		zero &= *q == 0;
	CHECK(zero);
	memset(cur, 0x5a, want - cur);
	CHECK(want[-1] == 0x5a);
	/* Shrinking gives memory back: the page past the break faults. */
	char *low = cur + 64 * 1024;
	low += (-(uintptr_t)low) & (page - 1);
	CHECK(syscall(SYS_brk, low) == (long)low);
	CHECK(died_of(status_of(read_byte, low + page), SIGSEGV));
	CHECK(WIFEXITED(status_of(read_byte, low - 1)));
	/* Growing again gives zeros, not the old bytes. */
	CHECK(syscall(SYS_brk, want) == (long)want);
	CHECK(low[page + 5] == 0);
	/* Failure is not an error return: the old break comes back. */
	CHECK(syscall(SYS_brk, UT_KERNPTR) == (long)want);
	CHECK(syscall(SYS_brk, (char *)1) == (long)want);
	CHECK(syscall(SYS_brk, 0) == (long)want);
}

static void test_mincore(void)
{
	unsigned char vec[4];
	char *a = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(a != MAP_FAILED);
	CHECK_OK(mincore(a, 4 * page, vec));
	CHECK_EQ(vec[0] | vec[1] | vec[2] | vec[3], 0);
	a[page] = 1;
	a[3 * page + 5] = 1;
	CHECK_OK(mincore(a, 4 * page, vec));
	CHECK_EQ(vec[0] & 1, 0);
	CHECK_EQ(vec[1] & 1, 1);
	CHECK_EQ(vec[2] & 1, 0);
	CHECK_EQ(vec[3] & 1, 1);
	CHECK_OK(mincore(a + page, page - 1, vec));     /* a partial page counts */
	CHECK_EQ(vec[0] & 1, 1);
	CHECK_EQ(mincore(a, 0, vec), 0);
	CHECK_ERR(mincore(a + 1, page, vec), EINVAL);
	CHECK_ERR(mincore(a, 4 * page, (unsigned char *)UT_KERNPTR), EFAULT);
	CHECK_OK(munmap(a + 2 * page, page));
	CHECK_ERR(mincore(a, 4 * page, vec), ENOMEM);   /* a hole */
	CHECK_ERR(mincore((void *)(0x800000000000UL - page), 2 * page, vec), ENOMEM);
	munmap(a, 4 * page);

	int fd = CHECK_OK(open("mincore", O_RDWR | O_CREAT | O_TRUNC, 0644));
	char *buf = calloc(1, (size_t)page);
	CHECK_EQ(write(fd, buf, (size_t)page), page);  /* page 0 in the cache */
	CHECK_OK(ftruncate(fd, 2 * page));
	char *f = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(f != MAP_FAILED);
	CHECK_OK(mincore(f, 2 * page, vec));
	CHECK_EQ(vec[0] & 1, 1);                         /* never touched through the map */
	free(buf);
	munmap(f, 2 * page);
	close(fd);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	page = sysconf(_SC_PAGESIZE);
	CHECK_EQ(page, 4096);
	ut_scratch();
	test_anonymous();
	test_mmap_errors();
	test_file_mapping();
	test_shared_file();
	test_mprotect();
	test_mincore();
	ut_child("brk", brk_child, NULL, 0);
	return ut_done();
}
