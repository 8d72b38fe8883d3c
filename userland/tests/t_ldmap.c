/*
 * t_ldmap: the mmap semantics a dynamic loader and malloc rely on, done
 * the way glibc's ld.so loads a library:
 *
 *   - reserve the library's whole span with one PROT_NONE mapping of the
 *     file (MAP_DENYWRITE, which Linux ignores, set as ld.so sets it);
 *   - map each segment over the reservation with MAP_FIXED: the text
 *     PROT_READ|PROT_EXEC from the file (it runs: a function copied from
 *     this program is called there), the data read-write and private (a
 *     store does not reach the file);
 *   - make the first page of the data read-only again (RELRO: a partial
 *     mprotect of a file mapping) and check a store there faults while the
 *     next page still takes one;
 *   - unmap one page in the middle of the reservation (a partial munmap)
 *     and find its neighbours intact;
 *   - MAP_NORESERVE anonymous memory that is used;
 *   - mremap of a file mapping: grown in place or moved, its data kept.
 */
#include "ut.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096
#define NPAGES 8

static sigjmp_buf fault_jmp;

static void on_segv(int sig)
{
	siglongjmp(fault_jmp, 1);
}

static int store_faults(volatile char *p)
{
	if (sigsetjmp(fault_jmp, 1))
		return 1;
	*p = 1;
	return 0;
}

/* A tiny function as machine code: mov eax, 42; ret. */
static const unsigned char code[] = { 0xb8, 42, 0, 0, 0, 0xc3 };

static int make_library(const char *path)
{
	unsigned char *img = calloc(NPAGES, PAGE);
	if (!img)
		return -1;
	memcpy(img, code, sizeof code);
	for (int i = 1; i < NPAGES; i++)
		memset(img + i * PAGE, 'a' + i, PAGE);
	int r = ut_write_file(path, img, NPAGES * PAGE, 0644);
	free(img);
	return r;
}

static void check_loader_pattern(int fd)
{
	/* The reservation. */
	char *base = mmap(NULL, NPAGES * PAGE, PROT_NONE, MAP_PRIVATE | MAP_DENYWRITE, fd, 0);
	CHECK(base != MAP_FAILED);
	if (base == MAP_FAILED)
		return;
	/* Text: page 0, read and execute. */
	char *text = mmap(base, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED | MAP_DENYWRITE,
			  fd, 0);
	CHECK(text == base);
	int (*fn)(void) = (int (*)(void))(uintptr_t)text;
	CHECK_EQ(fn(), 42);
	/* Data: pages 2..5 read-write, private. */
	char *data = mmap(base + 2 * PAGE, 4 * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_FIXED, fd, 2 * PAGE);
	CHECK(data == base + 2 * PAGE);
	CHECK_EQ(data[0], 'c');
	data[0] = 'Z';
	char back;
	CHECK_EQ(pread(fd, &back, 1, 2 * PAGE), 1);
	CHECK_EQ(back, 'c');            /* private: the file keeps its byte */
	/* RELRO: the first data page read-only again. */
	CHECK_OK(mprotect(data, PAGE, PROT_READ));
	struct sigaction sa = { 0 }, old;
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, &old);
	ut_check(store_faults(data), __FILE__, __LINE__, "a store to the RELRO page faults");
	ut_check(!store_faults(data + PAGE), __FILE__, __LINE__,
		 "the next data page still takes a store");
	/* The page between text and data is still reserved: no access. */
	ut_check(store_faults(base + PAGE), __FILE__, __LINE__, "the gap stays PROT_NONE");
	sigaction(SIGSEGV, &old, NULL);
	CHECK_EQ(data[0], 'Z');
	/* A partial munmap in the middle. */
	CHECK_OK(munmap(data + 2 * PAGE, PAGE));
	CHECK_EQ(data[PAGE + 1], 'd');
	CHECK_EQ(data[3 * PAGE], 'f');
	CHECK_EQ(fn(), 42);
	CHECK_OK(munmap(base, NPAGES * PAGE));
}

static void check_noreserve(void)
{
	size_t len = 64 * PAGE;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(p != MAP_FAILED);
	if (p == MAP_FAILED)
		return;
	p[0] = 1;
	p[len - 1] = 2;
	CHECK(p[0] == 1 && p[len - 1] == 2 && p[PAGE] == 0);
	CHECK_OK(munmap(p, len));
}

static void check_mremap_file(int fd)
{
	char *p = mmap(NULL, 2 * PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(p != MAP_FAILED);
	if (p == MAP_FAILED)
		return;
	char *q = mremap(p, 2 * PAGE, 4 * PAGE, MREMAP_MAYMOVE);
	CHECK(q != MAP_FAILED);
	if (q == MAP_FAILED)
		return;
	CHECK_EQ(q[PAGE], 'b');
	CHECK_EQ(q[3 * PAGE], 'd');      /* the grown part is the file's too */
	CHECK_OK(munmap(q, 4 * PAGE));
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	CHECK_OK(make_library("lib"));
	int fd = open("lib", O_RDONLY);
	CHECK(fd >= 0);
	if (fd >= 0) {
		check_loader_pattern(fd);
		check_mremap_file(fd);
		close(fd);
	}
	check_noreserve();
	return ut_done();
}
