/* Freestanding string and memory routines.  GCC may emit calls to
 * memset/memcpy/memmove/memcmp itself, so these names must exist. */
#include <kern/lib/string.h>

/*
 * memset and memcpy move eight bytes per string iteration (rep stosq,
 * rep movsq) and the last n % 8 bytes one at a time.  On a CPU with fast
 * byte strings (ERMS) rep stosb would be as quick, but not on one
 * without, and under QEMU's instruction counting (ACCEL=icount) each
 * iteration counts as an instruction: a page cleared with stosb costs
 * 4096, with stosq 512, which is what Linux pays there too (the peer is
 * booted with clearcpuid=erms, bench/README.md).
 *
 * Large clears (a page, a page table) go 128 bytes per loop turn through
 * sixteen plain stores instead: QEMU's TCG ends its translated block at
 * every iteration of a rep string instruction, so a page cleared by rep
 * stosq costs 512 trips through its dispatcher (kprof: memset was 40% of
 * exec's busy time under TCG), while the loop runs as straight code; it
 * costs 576 instructions a page under icount against 512.
 */
#define CLEAR_BLOCK 128

static void clear_blocks(void *d, uint64_t pattern, size_t blocks)
{
    __asm__ volatile(
        "1:\n\t"
        "movq %2, 0(%0)\n\t"   "movq %2, 8(%0)\n\t"   "movq %2, 16(%0)\n\t"  "movq %2, 24(%0)\n\t"
        "movq %2, 32(%0)\n\t"  "movq %2, 40(%0)\n\t"  "movq %2, 48(%0)\n\t"  "movq %2, 56(%0)\n\t"
        "movq %2, 64(%0)\n\t"  "movq %2, 72(%0)\n\t"  "movq %2, 80(%0)\n\t"  "movq %2, 88(%0)\n\t"
        "movq %2, 96(%0)\n\t"  "movq %2, 104(%0)\n\t" "movq %2, 112(%0)\n\t" "movq %2, 120(%0)\n\t"
        "addq $128, %0\n\t"
        "subq $1, %1\n\t"
        "jnz 1b"
        : "+r"(d), "+r"(blocks) : "r"(pattern) : "memory", "cc");
}

void *memset(void *d, int c, size_t n)
{
    void *ret = d;
    uint64_t pattern = 0x0101010101010101ULL * (uint8_t)c;
    if (n >= 4 * CLEAR_BLOCK) {
        size_t blocks = n / CLEAR_BLOCK;
        clear_blocks(d, pattern, blocks);
        d = (char *)d + blocks * CLEAR_BLOCK;
        n -= blocks * CLEAR_BLOCK;
    }
    size_t words = n >> 3, tail = n & 7;
    __asm__ volatile("rep stosq" : "+D"(d), "+c"(words) : "a"(pattern) : "memory");
    __asm__ volatile("rep stosb" : "+D"(d), "+c"(tail) : "a"(pattern) : "memory");
    return ret;
}

void *memcpy(void *d, const void *s, size_t n)
{
    void *ret = d;
    size_t words = n >> 3, tail = n & 7;
    __asm__ volatile("rep movsq" : "+D"(d), "+S"(s), "+c"(words) :: "memory");
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(tail) :: "memory");
    return ret;
}

void *memmove(void *d, const void *s, size_t n)
{
    unsigned char *dp = d;
    const unsigned char *sp = s;
    if (dp <= sp || dp >= sp + n)
        return memcpy(d, s, n);
    while (n--)
        dp[n] = sp[n];
    return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return x[i] - y[i];
    return 0;
}

size_t strlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

size_t strnlen(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n])
        n++;
    return n;
}

int strcmp(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
    for (; n; n--, a++, b++) {
        if (*a != *b)
            return (unsigned char)*a - (unsigned char)*b;
        if (!*a)
            return 0;
    }
    return 0;
}

char *strchr(const char *s, int c)
{
    for (; *s; s++)
        if (*s == (char)c)
            return (char *)s;
    return c == 0 ? (char *)s : NULL;
}

size_t strlcpy(char *d, const char *s, size_t n)
{
    size_t len = strlen(s);
    if (n) {
        size_t c = len < n - 1 ? len : n - 1;
        memcpy(d, s, c);
        d[c] = 0;
    }
    return len;
}
