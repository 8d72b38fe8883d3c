/*
 * The ktest runner.  Tests live in the .ktests section (see ktest.h).  A
 * boot-CPU test runs once; an all-CPU test runs on every online CPU at the
 * same time through smp_call_all and passes only if it passed everywhere.
 * The first failure message of each CPU is kept in fail_msg[cpu] (written
 * only by that CPU while the test runs, read by the runner after).
 *
 * A watchdog guards against hangs: every CPU's timer interrupt calls
 * ktest_watchdog_tick (any of them, in case one spins with interrupts
 * off), and a test still running KTEST_HANG_SECONDS after
 * it started stops the machine through panic_hung, which prints every
 * thread with its held locks and backtrace -- the evidence a deadlock
 * leaves, which a host-side time limit would throw away.
 */
#include <kern/tests/ktest.h>
#include <kern/arch/panic.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/options.h>
#include <kern/arch/cpu.h>
#include <kern/arch/smp.h>
#include <kern/arch/arch.h>
#include <kern/lib/string.h>
#include <kern/sched/thread.h>
#include <drivers/platform/timer.h>

extern const struct ktest __ktest_start[], __ktest_end[];

/* Generous: the slowest test (reclaim_mapped on hector under lock=h2mcs,
 * TCG on a two-core host with the host to itself) took 49 s; beside another
 * 16-CPU boot such tests crawled past this (make check no longer runs them
 * so: tests/hostcores.py).  The limit only catches hangs. */
#ifndef KTEST_HANG_SECONDS
#define KTEST_HANG_SECONDS 300
#endif

static const char *volatile running_test;       /* [atomic] name, or NULL */
static volatile uint64_t running_deadline;      /* [atomic] uptime_ns() */
static volatile int running_limit;              /* [atomic] seconds, for the message */

static char fail_msg[MAX_CPUS][160];   /* [own] slot c written only on cpu c */
static int results[MAX_CPUS];           /* [own] as fail_msg; read after the test */
static char skip_msg[MAX_CPUS][160];   /* [own] as fail_msg: why the test skipped */

void ktest_fail(const char *fmt, ...)
{
    char *m = fail_msg[cpu_id()];
    if (m[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof fail_msg[0], fmt, ap);
    va_end(ap);
}

static volatile int barrier_count, barrier_gen;    /* [atomic] */

void ktest_barrier(void)
{
    int gen = __atomic_load_n(&barrier_gen, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&barrier_count, 1, __ATOMIC_ACQ_REL) == ncpus_online) {
        barrier_count = 0;
        __atomic_store_n(&barrier_gen, gen + 1, __ATOMIC_RELEASE);
        return;
    }
    while (__atomic_load_n(&barrier_gen, __ATOMIC_ACQUIRE) == gen)
        cpu_relax();
}

bool ktest_await(volatile int *v, int want, uint64_t seconds)
{
    uint64_t deadline = uptime_ns() + seconds * 1000000000UL;
    while (*v < want && uptime_ns() < deadline)
        thread_yield();
    return *v >= want;
}

static bool ktest_exists(const char *name, size_t len)
{
    for (const struct ktest *t = __ktest_start; t < __ktest_end; t++)
        if (option_item_matches(name, len, t->name, strlen(t->name)))
            return true;
    return false;
}

static void run_on_cpu(void *arg)
{
    const struct ktest *t = arg;
    results[cpu_id()] = t->fn();
}

/* The first failure message any CPU recorded, or NULL. */
static const char *first_message(int *cpu)
{
    for (int c = 0; c < ncpus; c++)
        if (fail_msg[c][0]) {
            *cpu = c;
            return fail_msg[c];
        }
    return NULL;
}

void ktest_watchdog_tick(const struct trapframe *tf)
{
    const char *name = READ_ONCE(running_test);
    if (name && uptime_ns() > READ_ONCE(running_deadline))
        panic_hung(tf, "ktest: %s still running after %d s: hung", name,
                   READ_ONCE(running_limit));
}

void ktest_watchdog_arm(const char *name, int seconds)
{
    WRITE_ONCE(running_limit, seconds);
    WRITE_ONCE(running_deadline, uptime_ns() + (uint64_t)seconds * 1000000000ull);
    __atomic_store_n(&running_test, name, __ATOMIC_RELEASE);
}

static void watch(const char *name)
{
    ktest_watchdog_arm(name, KTEST_HANG_SECONDS);
}

void ktest_skip(const char *fmt, ...)
{
    char *m = skip_msg[cpu_id()];
    if (m[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof skip_msg[0], fmt, ap);
    va_end(ap);
}

/* The first reason any CPU gave for skipping, or NULL. */
static const char *first_skip(void)
{
    for (int c = 0; c < ncpus; c++)
        if (skip_msg[c][0])
            return skip_msg[c];
    return NULL;
}

enum outcome { KT_PASSED, KT_FAILED, KT_SKIPPED };

static enum outcome run_one(const struct ktest *t, char *why, size_t n)
{
    memset(fail_msg, 0, sizeof fail_msg);
    memset(skip_msg, 0, sizeof skip_msg);
    memset(results, 0, sizeof results);
    if (t->flags & KTEST_F_ALL_CPUS) {
        barrier_count = 0;
        smp_call_all(run_on_cpu, (void *)t);
    } else {
        /* A boot-CPU test may sleep and wake on another CPU, so its
         * message can be in any CPU's slot. */
        int start = cpu_id();
        results[start] = t->fn();
    }
    int c = 0;
    const char *msg = first_message(&c);
    for (int i = 0; i < ncpus && !msg; i++)
        if (results[i]) {
            c = i;
            msg = "returned failure";
        }
    if (!msg && first_skip()) {
        strlcpy(why, first_skip(), n);
        return KT_SKIPPED;
    }
    if (!msg)
        return KT_PASSED;
    snprintf(why, n, "cpu %d: %s", c, msg);
    return KT_FAILED;
}

/* A test that took KTEST_SLOW_SECONDS or more says how long, so that the
 * slowest tests of a boot (say, under a queue lock on a preset with more
 * virtual CPUs than the host has cores) can be read off its console. */
#define KTEST_SLOW_SECONDS 2

static void report_slow(const char *name, uint64_t ns)
{
    uint64_t ds = ns / 100000000ull;    /* tenths of a second */
    if (ds >= KTEST_SLOW_SECONDS * 10)
        kprintf("ktest: slow %s: %lu.%lu s\n", name, (unsigned long)(ds / 10),
                (unsigned long)(ds % 10));
}

int ktest_run(const char *list)
{
    int passed = 0, failed = 0, skipped = 0;
    kprintf("ktest: running '%s' on %d cpus\n", list, ncpus_online);
    for (const struct ktest *t = __ktest_start; t < __ktest_end; t++) {
        if (!option_list_has(list, t->name))
            continue;
        char why[200];
        uint64_t t0 = uptime_ns();
        watch(t->name);
        enum outcome r = run_one(t, why, sizeof why);
        watch(NULL);
        report_slow(t->name, uptime_ns() - t0);
        if (r == KT_PASSED) {
            kprintf("ktest: PASS %s\n", t->name);
            passed++;
        } else if (r == KT_SKIPPED) {
            kprintf("ktest: SKIP %s: %s\n", t->name, why);
            skipped++;
        } else {
            kprintf("ktest: FAIL %s: %s\n", t->name, why);
            failed++;
        }
    }
    /* Names asked for that no test has are failures too. */
    failed += option_list_report_unknown(list, ktest_exists,
                                         "ktest: FAIL %.*s: no such test\n");
    if (skipped)
        kprintf("ktest: %d skipped\n", skipped);
    kprintf("ktest: %d passed, %d failed\n", passed, failed);
    return failed;
}
