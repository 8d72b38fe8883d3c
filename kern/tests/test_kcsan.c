/*
 * The data-race detector's own test (make KCSAN=1, kern/kcsan/kcsan.c).
 *
 * kcsan_planted: a thread on CPU 1 stores to a word with plain stores and
 * one on CPU 0 loads it with plain loads, no lock between them: the detector must report the
 * race between the two functions that do it, racy_store and racy_load.
 * Then the same pair of accesses, each under one spin lock, runs three
 * times as long (at least a second) with watchpoints still being armed:
 * no race may be reported between locked_store and locked_load.
 *
 * In a kernel built without KCSAN=1, with kcsan=off, or on one CPU, the
 * test skips.
 */
#include <kern/tests/ktest.h>
#include <kern/kcsan/kcsan.h>
#include <kern/arch/cpu.h>

#ifdef TEMPEST_KCSAN
#include <kern/arch/smp.h>
#include <kern/lock/spinlock.h>
#include <kern/sched/thread.h>
#include <drivers/platform/timer.h>

LOCK_CLASS(test_kcsan_class, "test_kcsan", LK_SPIN);

static long racy_word;          /* no lock, on purpose: the planted race */
static long locked_word;        /* under locked_lock */
static spinlock_t locked_lock;
static int stop;                /* READ_ONCE/WRITE_ONCE: the test ends a phase */
static int found;               /* the test's: the planted race was reported */

/* noipa: no clone under another name, so each site lies in the function
 * whose address the test asks about. */
#define SITE_FN __attribute__((noinline, noipa))

static SITE_FN void racy_store(long v)
{
    racy_word = v;
}

static SITE_FN long racy_load(void)
{
    return racy_word;
}

static SITE_FN void locked_store(long v)
{
    spin_lock(&locked_lock);
    locked_word = v;
    spin_unlock(&locked_lock);
}

static SITE_FN long locked_load(void)
{
    spin_lock(&locked_lock);
    long v = locked_word;
    spin_unlock(&locked_lock);
    return v;
}

/* One side of a phase: a kernel thread pinned to one CPU, storing or
 * loading until the test says stop, yielding now and then so that the
 * CPU's other threads run. */
struct racer {
    bool locked, store;
};

static void racer_body(void *arg)
{
    const struct racer *r = arg;
    long sum = 0;
    for (long n = 1; !READ_ONCE(stop); n++) {
        if (r->store)
            r->locked ? locked_store(n) : racy_store(n);
        else
            sum += r->locked ? locked_load() : racy_load();
        if (!(n & 4095))
            thread_yield();
    }
    (void)sum;
}

/* Run a phase: the loader on CPU 0 and the storer on CPU 1 until the pair
 * is reported (want) or limit_ns passes.  Returns the nanoseconds taken,
 * or 0 when a thread could not be made. */
static uint64_t run_phase(bool locked, bool want, uint64_t limit_ns)
{
    struct racer load = { locked, false }, store = { locked, true };
    uint64_t start = uptime_ns();
    WRITE_ONCE(stop, 0);
    struct thread *t0 = thread_create("kcsan_load", racer_body, &load, 1UL << 0);
    struct thread *t1 = thread_create("kcsan_store", racer_body, &store, 1UL << 1);
    while (t0 && t1 && uptime_ns() - start < limit_ns) {
        if (want && kcsan_pair_reported(racy_store, racy_load)) {
            found = 1;
            break;
        }
        thread_yield();
    }
    WRITE_ONCE(stop, 1);
    if (t0)
        thread_join(t0);
    if (t1)
        thread_join(t1);
    return t0 && t1 ? uptime_ns() - start : 0;
}

/* Whether any race was reported on the locked pair, either side alone. */
static bool locked_reported(void)
{
    return kcsan_pair_reported(locked_store, locked_load) ||
           kcsan_pair_reported(locked_store, locked_store) ||
           kcsan_pair_reported(locked_load, locked_load) ||
           kcsan_pair_reported(locked_store, NULL) || kcsan_pair_reported(locked_load, NULL);
}
#endif

KTEST(kcsan_planted)
{
#ifndef TEMPEST_KCSAN
    KT_SKIP("not a KCSAN=1 kernel (make KCSAN=1)");
#else
    if (!kcsan_enabled())
        KT_SKIP("kcsan=off");
    if (ncpus_online < 2)
        KT_SKIP("one cpu: no race to plant");
    spin_init(&locked_lock, &test_kcsan_class);
    found = 0;
    uint64_t took = run_phase(false, true, 20 * 1000000000ULL), locked = 0;
    struct kcsan_totals t0, t1;
    kcsan_totals(&t0);
    if (took)
        locked = run_phase(true, false, MIN(MAX(3 * took, 1000000000ULL), 10 * 1000000000ULL));
    kcsan_totals(&t1);
    spin_destroy(&locked_lock);
    KT_ASSERT(took && locked);
    KT_ASSERT(found);
    KT_ASSERT(kcsan_pair_reported(racy_store, racy_load));
    KT_ASSERT(t1.watched > t0.watched);         /* the detector kept watching */
    KT_ASSERT(!locked_reported());
    return 0;
#endif
}
