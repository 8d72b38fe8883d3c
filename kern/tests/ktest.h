/*
 * ktest: in-kernel tests, registered in C and run at boot when the command
 * line says ktest=all or ktest=NAME,...  Each prints "ktest: PASS name" or
 * "ktest: FAIL name: reason"; the run ends with "ktest: N passed, N failed".
 *
 *   KTEST(name) { KT_ASSERT(x == 1); return 0; }          boot CPU only
 *   KTEST_ALL_CPUS(name) { ... }                           every CPU at once
 *
 * A test body returns 0 for success; KT_ASSERT records the first failure
 * (per CPU) and returns non-zero from the test.  A test that cannot run
 * on this boot (KT_SKIP, KT_NEED_ROOT) prints "ktest: SKIP name: reason"
 * and counts neither as passed nor as failed; the run then prints
 * "ktest: N skipped" before its summary line.
 */
#ifndef KERN_KTEST_H
#define KERN_KTEST_H

#include <kern/lib/types.h>

#define KTEST_F_ALL_CPUS 1

struct ktest {
    const char *name;
    int (*fn)(void);
    int flags;
};

#define KTEST_DEFINE(tname, fl) \
    static int ktest_fn_##tname(void); \
    static const struct ktest ktest_desc_##tname \
        __attribute__((section(".ktests"), used, aligned(8))) = { #tname, ktest_fn_##tname, fl }; \
    static int ktest_fn_##tname(void)

#define KTEST(tname)          KTEST_DEFINE(tname, 0)
#define KTEST_ALL_CPUS(tname) KTEST_DEFINE(tname, KTEST_F_ALL_CPUS)

struct trapframe;
/* Every CPU's timer interrupt: stop the machine with a dump of every
 * thread if the running test has overrun its time (a hang). */
void ktest_watchdog_tick(const struct trapframe *tf);
/* Watch something other than a ktest (crash=deadlock): after seconds the
 * machine stops through panic_hung, naming it. */
void ktest_watchdog_arm(const char *name, int seconds);

void ktest_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The test cannot run here (no root file system, no such disk...): it
 * prints "ktest: SKIP name: reason" and counts neither way. */
void ktest_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define KT_SKIP(...) do { ktest_skip(__VA_ARGS__); return 0; } while (0)
/* Skip unless a root file system is mounted. */
#define KT_NEED_ROOT() do { if (!rootdir) KT_SKIP("no root file system (boot with root=, " \
                                                  "as make check does)"); } while (0)

#define KT_ASSERT(cond) \
    do { if (!(cond)) { ktest_fail("%s (%s:%d)", #cond, __FILE__, __LINE__); return 1; } } while (0)
#define KT_ASSERT_EQ(a, b) \
    do { int64_t _a = (int64_t)(a), _b = (int64_t)(b); \
         if (_a != _b) { ktest_fail("%s == %s: %ld != %ld (%s:%d)", #a, #b, _a, _b, __FILE__, __LINE__); return 1; } } while (0)

/* Run the tests the list names; returns the number that failed. */
int ktest_run(const char *list);

/* A reusable barrier for tests running on every CPU. */
void ktest_barrier(void);

/* From a thread: yield until *v >= want, for at most `seconds` (a guard
 * against a hang, never a speed limit).  Returns whether it got there. */
bool ktest_await(volatile int *v, int want, uint64_t seconds);

#endif
