/*
 * The data-race detector's own test (make KCSAN=1, kern/kcsan/kcsan.c).
 *
 * kcsan_planted: CPU 1 stores to a word with plain stores and CPU 0 loads
 * it with plain loads, no lock between them: the detector must report the
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
#include <drivers/platform/timer.h>

LOCK_CLASS(test_kcsan_class, "test_kcsan", LK_SPIN);

static long racy_word;          /* no lock, on purpose: the planted race */
static long locked_word;        /* under locked_lock */
static spinlock_t locked_lock;
static int stop;                /* READ_ONCE/WRITE_ONCE: CPU 0 ends a phase */
static int found;               /* [boot CPU] the planted race was reported */

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

/* CPU 0 loads, CPU 1 stores, until CPU 0 says stop: when the pair was
 * reported (want set) or at the deadline.  Returns the seconds taken. */
static uint64_t run_phase(bool locked, bool want, uint64_t limit_ns)
{
    int me = cpu_id();
    uint64_t start = uptime_ns(), n = 0;
    long sum = 0;
    if (me == 0)
        WRITE_ONCE(stop, 0);
    ktest_barrier();
    while (!READ_ONCE(stop)) {
        n++;
        if (me == 1)
            locked ? locked_store((long)n) : racy_store((long)n);
        else if (me == 0)
            sum += locked ? locked_load() : racy_load();
        if (me != 0 || (n & 1023))
            continue;
        bool done = uptime_ns() - start > limit_ns;
        if (want && kcsan_pair_reported(racy_store, racy_load))
            found = done = 1;
        if (done)
            WRITE_ONCE(stop, 1);
    }
    ktest_barrier();
    (void)sum;
    return uptime_ns() - start;
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

KTEST_ALL_CPUS(kcsan_planted)
{
#ifndef TEMPEST_KCSAN
    KT_SKIP("not a KCSAN=1 kernel (make KCSAN=1)");
#else
    if (!kcsan_enabled())
        KT_SKIP("kcsan=off");
    if (ncpus_online < 2)
        KT_SKIP("one cpu: no race to plant");
    if (cpu_id() == 0) {
        spin_init(&locked_lock, &test_kcsan_class);
        found = 0;
    }
    uint64_t took = run_phase(false, true, 20 * 1000000000ULL);
    uint64_t limit = MAX(3 * took, 1000000000ULL);
    struct kcsan_totals t0, t1;
    if (cpu_id() == 0)
        kcsan_totals(&t0);
    run_phase(true, false, MIN(limit, 10 * 1000000000ULL));
    if (cpu_id() != 0)
        return 0;
    kcsan_totals(&t1);
    KT_ASSERT(found);
    KT_ASSERT(kcsan_pair_reported(racy_store, racy_load));
    KT_ASSERT(t1.watched > t0.watched);         /* the detector kept watching */
    KT_ASSERT(!locked_reported());
    spin_destroy(&locked_lock);
    return 0;
#endif
}
