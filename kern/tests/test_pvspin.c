/*
 * pvspin=on (kern/lock/pvspin.c): spinning waiters halt and are kicked.
 *
 *   pvspin_mcs_kick     every CPU: CPU 0 holds an MCS lock for 100 ms while
 *   pvspin_h2mcs_kick   the others queue behind it, far past their bounded
 *   pvspin_spin_kick    spin, so they halt; then each takes the lock in
 *   pvspin_mutex_kick   turn.  The same for a TTAS lock and for a spin
 *                       mutex, whose waiters all watch the lock.  Every
 *                       CPU got it (none was left halted: a lost kick
 *                       hangs here and the watchdog says so), mutual
 *                       exclusion held, and with two CPUs or more the
 *                       halts and kicks grew, in all and for the lock's
 *                       class (what lockstat reports).  Skipped with
 *                       pvspin=off.
 *   pvspin_rescue       a kick lost on purpose: one CPU marks a TTAS-style
 *                       word and halts on it; the CPU that takes its ticks
 *                       clears the word without kicking (what RELEASE_RACE
 *                       in spinlock.c can do).  The ticks' rescue must wake
 *                       the halted CPU within two seconds, and the rescues
 *                       grew.  Needs two CPUs.
 */
#include <kern/tests/ktest.h>
#include <kern/lock/spinlock.h>
#include <kern/lock/lock.h>
#include <kern/lock/pvspin.h>
#include <kern/lock/mutex.h>
#include <kern/lock/lockstat.h>
#include <kern/arch/cpu.h>
#include <kern/arch/smp.h>
#include <kern/arch/arch.h>
#include <drivers/platform/timer.h>

#define HOLD_US 100000          /* CPU 0's hold: far longer than a bounded spin */

LOCK_CLASS(test_pvspin_lock, "test_pvspin", LK_SPIN);
LOCK_CLASS(test_pvspin_mutex_class, "test_pvspin_mutex", LK_MUTEX_SPIN);
static spinlock_t pv_lock;
static struct mutex pv_mutex;
static volatile int pv_inside;          /* [the lock tested] CPUs inside: must stay 0 or 1 */
static volatile int pv_done;            /* [atomic] CPUs that got the lock */
static uint64_t halts0, kicks0;         /* [CPU 0] the counts before, in all */
static uint64_t cls_halts0, cls_kicks0; /* [CPU 0] and for the class tested */

/* The lock under test: a spin lock of algorithm algo, or (algo < 0) the
 * spin mutex. */
static struct lock_class *tested_class(int algo)
{
    return algo < 0 ? &test_pvspin_mutex_class : &test_pvspin_lock;
}

static void tested_init(int algo)
{
    if (algo < 0)
        mutex_init(&pv_mutex, &test_pvspin_mutex_class, MUTEX_SPIN, "pvspin");
    else
        spin_init_algo(&pv_lock, &test_pvspin_lock, algo);
}

static void tested_lock(int algo)
{
    if (algo < 0)
        mutex_enter(&pv_mutex);
    else
        spin_lock(&pv_lock);
}

static void tested_unlock(int algo)
{
    if (algo < 0)
        mutex_exit(&pv_mutex);
    else
        spin_unlock(&pv_lock);
}

static void tested_destroy(int algo)
{
    if (algo < 0)
        mutex_destroy(&pv_mutex);
    else
        spin_destroy(&pv_lock);
}

static void class_counts(int algo, uint64_t *halts, uint64_t *kicks)
{
    struct lockstat_totals t;
    lockstat_class_totals(tested_class(algo), &t);
    *halts = t.pv_halts;
    *kicks = t.pv_kicks;
}

static int kick_test(int algo)
{
    int me = cpu_id();
    if (!pvspin_on)
        KT_SKIP("runs under pvspin=on only");
    if (me == 0) {
        tested_init(algo);
        pv_inside = 0;
        pv_done = 0;
        pvspin_counts(&halts0, &kicks0);
        class_counts(algo, &cls_halts0, &cls_kicks0);
        tested_lock(algo);
    }
    ktest_barrier();
    int bad = 0;
    if (me == 0) {
        clock_spin_us(HOLD_US);         /* the others wait and halt meanwhile */
    } else {
        tested_lock(algo);
    }
    if (__atomic_add_fetch(&pv_inside, 1, __ATOMIC_ACQ_REL) != 1)
        bad++;
    for (int k = 0; k < 64; k++)
        cpu_relax();
    __atomic_sub_fetch(&pv_inside, 1, __ATOMIC_ACQ_REL);
    tested_unlock(algo);
    __atomic_add_fetch(&pv_done, 1, __ATOMIC_ACQ_REL);
    ktest_barrier();
    KT_ASSERT_EQ(bad, 0);
    if (me == 0) {
        uint64_t halts, kicks, cls_halts, cls_kicks;
        pvspin_counts(&halts, &kicks);
        class_counts(algo, &cls_halts, &cls_kicks);
        KT_ASSERT_EQ(pv_done, ncpus_online);
        if (ncpus_online > 1) {
            KT_ASSERT(halts > halts0);
            KT_ASSERT(kicks > kicks0);
            KT_ASSERT(cls_halts > cls_halts0);
            KT_ASSERT(cls_kicks > cls_kicks0);
        }
        tested_destroy(algo);
    }
    return 0;
}

KTEST_ALL_CPUS(pvspin_mcs_kick) { return kick_test(LOCK_MCS); }
KTEST_ALL_CPUS(pvspin_h2mcs_kick) { return kick_test(LOCK_H2MCS); }
KTEST_ALL_CPUS(pvspin_spin_kick) { return kick_test(LOCK_SPIN); }
KTEST_ALL_CPUS(pvspin_mutex_kick) { return kick_test(-1); }

/* ---- the rescue of a lost kick ---- */

static volatile uint32_t rescue_word;       /* [atomic] the fake lock word */
static volatile int rescue_back;            /* [atomic] the halter returned from its wait */
static volatile int rescue_releaser;        /* [atomic] the CPU that ticks: the runner's */

/*
 * The rescue needs a CPU that takes its tick: an all-CPU test runs in the
 * call IPI's handler, interrupts off, on every CPU but the one whose
 * thread called it.  That one releases; the next one halts.
 */
KTEST_ALL_CPUS(pvspin_rescue)
{
    int me = cpu_id();
    if (!pvspin_on)
        KT_SKIP("runs under pvspin=on only");
    if (ncpus_online < 2)
        KT_SKIP("needs two CPUs");
    static uint64_t rescues0;
    if (read_rflags() & RFLAGS_IF) {
        rescue_word = PVSPIN_WORD_HELD;
        rescue_back = 0;
        rescues0 = pvspin_rescues();
        __atomic_store_n(&rescue_releaser, me, __ATOMIC_RELEASE);
    }
    ktest_barrier();
    int releaser = __atomic_load_n(&rescue_releaser, __ATOMIC_ACQUIRE);
    int halter = (releaser + 1) % ncpus_online;
    if (me == halter) {
        uint64_t f = intr_save();           /* as a spin lock's waiter */
        pvspin_wait_word((const void *)&rescue_word, &rescue_word, &test_pvspin_lock);
        intr_restore(f);
        __atomic_store_n(&rescue_back, 1, __ATOMIC_RELEASE);
    } else if (me == releaser) {
        clock_spin_us(50000);               /* the halter marks the word and halts */
        uint32_t marked = __atomic_load_n(&rescue_word, __ATOMIC_ACQUIRE);
        __atomic_store_n(&rescue_word, 0, __ATOMIC_RELEASE);     /* no kick */
        uint64_t t0 = uptime_ns();
        while (!__atomic_load_n(&rescue_back, __ATOMIC_ACQUIRE) &&
               uptime_ns() - t0 < 2000000000ull)
            cpu_relax();
        bool rescued = rescue_back;
        if (!rescued)       /* the real kick, so that the barrier below is met */
            pvspin_kick_waiters((const void *)&rescue_word, &test_pvspin_lock);
        ktest_barrier();
        KT_ASSERT(read_rflags() & RFLAGS_IF);
        KT_ASSERT_EQ(marked, PVSPIN_WORD_SLEEPERS);
        KT_ASSERT(rescued);
        KT_ASSERT(pvspin_rescues() > rescues0);
        return 0;
    }
    ktest_barrier();
    return 0;
}
