/*
 * pvspin=on (kern/lock/pvspin.c): queue-lock waiters halt and are kicked.
 *
 *   pvspin_mcs_kick     every CPU: CPU 0 holds an MCS lock for 100 ms while
 *   pvspin_h2mcs_kick   the others queue behind it, far past their bounded
 *                       spin, so they halt; then each takes the lock in
 *                       turn.  Every CPU got it (none was left halted: a
 *                       lost kick hangs here and the watchdog says so),
 *                       mutual exclusion held, and with two CPUs or more
 *                       the halts and kicks grew.  Skipped with pvspin=off.
 */
#include <kern/tests/ktest.h>
#include <kern/lock/spinlock.h>
#include <kern/lock/lock.h>
#include <kern/lock/pvspin.h>
#include <kern/arch/cpu.h>
#include <kern/arch/smp.h>
#include <kern/arch/arch.h>
#include <drivers/platform/timer.h>

#define HOLD_US 100000          /* CPU 0's hold: far longer than a bounded spin */

LOCK_CLASS(test_pvspin_lock, "test_pvspin", LK_SPIN);
static spinlock_t pv_lock;
static volatile int pv_inside;          /* [pv_lock] CPUs inside: must stay 0 or 1 */
static volatile int pv_done;            /* [atomic] CPUs that got the lock */
static uint64_t halts0, kicks0;         /* [CPU 0] the counts before */

static int kick_test(int algo)
{
    int me = cpu_id();
    if (!pvspin_on)
        KT_SKIP("runs under pvspin=on only");
    if (me == 0) {
        spin_init_algo(&pv_lock, &test_pvspin_lock, algo);
        pv_inside = 0;
        pv_done = 0;
        pvspin_counts(&halts0, &kicks0);
        spin_lock(&pv_lock);
    }
    ktest_barrier();
    int bad = 0;
    if (me == 0) {
        clock_spin_us(HOLD_US);         /* the others queue and halt meanwhile */
    } else {
        spin_lock(&pv_lock);
    }
    if (__atomic_add_fetch(&pv_inside, 1, __ATOMIC_ACQ_REL) != 1)
        bad++;
    for (int k = 0; k < 64; k++)
        cpu_relax();
    __atomic_sub_fetch(&pv_inside, 1, __ATOMIC_ACQ_REL);
    spin_unlock(&pv_lock);
    __atomic_add_fetch(&pv_done, 1, __ATOMIC_ACQ_REL);
    ktest_barrier();
    KT_ASSERT_EQ(bad, 0);
    if (me == 0) {
        uint64_t halts, kicks;
        pvspin_counts(&halts, &kicks);
        KT_ASSERT_EQ(pv_done, ncpus_online);
        if (ncpus_online > 1) {
            KT_ASSERT(halts > halts0);
            KT_ASSERT(kicks > kicks0);
        }
        spin_destroy(&pv_lock);
    }
    return 0;
}

KTEST_ALL_CPUS(pvspin_mcs_kick) { return kick_test(LOCK_MCS); }
KTEST_ALL_CPUS(pvspin_h2mcs_kick) { return kick_test(LOCK_H2MCS); }
