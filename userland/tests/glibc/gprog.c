/*
 * gprog: a glibc program, dynamically linked, for sh_glibc.sh (built on the
 * host by tools/glibc_bundle.py).  It exercises what glibc's loader and
 * malloc need from the kernel and prints one line per check:
 *
 *   auxv     AT_EXECFN is argv[0]; AT_PHDR, AT_ENTRY and AT_BASE are set,
 *            AT_RANDOM is there (the stack protector's canary comes from it);
 *            with --by-loader (run as "./ld.so gprog --by-loader"),
 *            AT_BASE is 0
 *   malloc   small blocks (brk), a large block (mmap) grown with realloc
 *            (mremap), and freed
 *   strings  glibc's string functions (its AVX2 versions where the CPU and
 *            the kernel offer AVX2) on unaligned buffers of many lengths,
 *            checked against plain loops
 *   stdio    printf of numbers and text
 *
 * It exits with the number of failed checks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

static int failed;

static void check(int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok" : "FAIL", what);
	failed += !ok;
}

static size_t plain_strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

static void check_strings(void)
{
	static char buf[4096 + 64];
	int ok = 1;
	for (size_t len = 0; len < 700 && ok; len += 7) {
		for (size_t align = 0; align < 33; align += 5) {
			char *s = buf + align;
			memset(buf, 'x', sizeof buf);
			s[len] = 0;
			ok &= strlen(s) == plain_strlen(s);
			ok &= memchr(s, 0, len + 1) == s + len;
			char *copy = strdup(s);
			ok &= copy && strcmp(copy, s) == 0 && memcmp(copy, s, len) == 0;
			if (copy && len) {
				copy[len - 1] = 'y';
				ok &= strcmp(copy, s) > 0;
			}
			free(copy);
		}
	}
	check(ok, "strings");
}

static void check_malloc(void)
{
	int ok = 1;
	void *small[100];
	for (int i = 0; i < 100; i++) {
		small[i] = malloc(16 + i * 8);
		ok &= small[i] != NULL;
		if (small[i])
			memset(small[i], i, 16 + i * 8);
	}
	for (int i = 0; i < 100; i++)
		free(small[i]);
	size_t big = 1 << 20;
	unsigned char *p = malloc(big);
	ok &= p != NULL;
	if (p) {
		memset(p, 0xa5, big);
		p = realloc(p, 8 * big);
		ok &= p != NULL && p[big - 1] == 0xa5 && p[0] == 0xa5;
		if (p)
			memset(p + big, 1, 7 * big);
		free(p);
	}
	check(ok, "malloc");
}

int main(int argc, char **argv)
{
	/* Started as "ld.so PROGRAM --by-loader", the kernel ran ld.so as the
	 * program, with no interpreter (AT_BASE 0); ld.so makes AT_EXECFN
	 * the program's name. */
	int by_loader = argc > 1 && strcmp(argv[1], "--by-loader") == 0;
	const char *execfn = (const char *)getauxval(AT_EXECFN);
	unsigned char *rnd = (unsigned char *)getauxval(AT_RANDOM);
	check(execfn && strcmp(execfn, argv[0]) == 0 && getauxval(AT_PHDR) &&
	      getauxval(AT_ENTRY) && (getauxval(AT_BASE) != 0) == !by_loader && rnd, "auxv");
	check_malloc();
	check_strings();
	printf("stdio %d %s %.2f\n", 42, "text", 2.5);
	return failed;
}
