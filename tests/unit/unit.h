/*
 * A tiny host test framework shared by the unit tests.
 *
 * Each test is a function run by RUN(); it prints "PASS: name" or
 * "FAIL: name (where: what)" followed by the kernel messages it produced.
 * The kernel's kprintf/vkprintf are replaced by a stub that captures their
 * output into test_log so tests can assert on messages.  run.sh totals the
 * PASS/FAIL lines of every test binary.
 */
#ifndef TESTS_UNIT_UNIT_H
#define TESTS_UNIT_UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <kern/lib/kprintf.h>

static char test_log[1 << 16];
static size_t test_log_len;
static const char *test_name;
static bool test_failed;
static int tests_passed, tests_failed;

void vkprintf(const char *fmt, va_list ap)
{
    size_t start = test_log_len, room = sizeof test_log - start;
    int n = vsnprintf(test_log + start, room, fmt, ap);
    if (n > 0)
        test_log_len += (size_t)n < room ? (size_t)n : room - 1;
    if (getenv("UNIT_VERBOSE"))
        fputs(test_log + start, stdout);
}

void kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vkprintf(fmt, ap);
    va_end(ap);
}

static bool log_has(const char *s)
{
    return strstr(test_log, s) != NULL;
}

#define CHECK(cond) do {                                                    \
        if (!(cond) && !test_failed) {                                      \
            printf("FAIL: %s (%s:%d: %s)\n", test_name, __FILE__, __LINE__, #cond); \
            test_failed = true;                                             \
        } else if (!(cond)) {                                               \
            test_failed = true;                                             \
        }                                                                   \
    } while (0)

#define CHECK_EQ(a, b) do {                                                 \
        long long _a = (long long)(a), _b = (long long)(b);                 \
        if (_a != _b && !test_failed) {                                     \
            printf("FAIL: %s (%s:%d: %s == %s: %lld != %lld)\n", test_name, \
                   __FILE__, __LINE__, #a, #b, _a, _b);                     \
            test_failed = true;                                             \
        } else if (_a != _b) {                                              \
            test_failed = true;                                             \
        }                                                                   \
    } while (0)

#define CHECK_STR(a, b) do {                                                \
        const char *_a = (a), *_b = (b);                                    \
        if (strcmp(_a, _b) != 0 && !test_failed) {                          \
            printf("FAIL: %s (%s:%d: %s == \"%s\": got \"%s\")\n", test_name, \
                   __FILE__, __LINE__, #a, _b, _a);                         \
        }                                                                   \
        if (strcmp(_a, _b) != 0)                                            \
            test_failed = true;                                             \
    } while (0)

#define CHECK_LOG(s) do {                                                   \
        if (!log_has(s) && !test_failed)                                    \
            printf("FAIL: %s (%s:%d: no message \"%s\")\n", test_name,      \
                   __FILE__, __LINE__, s);                                  \
        if (!log_has(s))                                                    \
            test_failed = true;                                             \
    } while (0)

static void test_begin(const char *name)
{
    test_name = name;
    test_failed = false;
    test_log_len = 0;
    test_log[0] = 0;
}

static void test_end(void)
{
    if (test_failed) {
        tests_failed++;
        printf("---- messages ----\n%s------------------\n", test_log);
    } else {
        tests_passed++;
        printf("PASS: %s\n", test_name);
    }
    fflush(stdout);
}

#define RUN(fn) do { test_begin(#fn); fn(); test_end(); } while (0)

/* Print this binary's tally; run.sh prints the overall "N passed, N failed". */
static int test_summary(const char *prog)
{
    printf("# %s: pass %d fail %d\n", prog, tests_passed, tests_failed);
    return tests_failed ? 1 : 0;
}

#endif
