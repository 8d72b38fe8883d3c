/*
 * The lock benchmark (kbench=locks; the kbench table is kern/tests/kbench.c).
 *
 * The lock benchmark prints one line per lock kind:
 *
 *   lockbench ALGO uncontended_off=CYCLES uncontended_on=CYCLES contended_ops=N
 *
 * uncontended_off and uncontended_on are TSC cycles per acquire/release
 * pair of a lock only the boot CPU touches, with lockstat off and on (the
 * best of UNC_ROUNDS runs of UNC_PAIRS pairs, so a timer tick in one run
 * does not count).  The witness checker is turned off for the whole
 * benchmark.  contended_ops is acquisitions per second, summed over every
 * online CPU, with all of them taking and releasing one lock (and bumping a
 * counter under it) for CONT_MS milliseconds of TSC time, statistics off.
 * The kinds are spin, mcs and h2mcs, then any registered with
 * lockbench_register (the SVR4 mutex).
 *
 * kbench=lockcurve is Hurricane's Figure 5 (seed 000): for each spin-lock
 * algorithm and a hold time of 0 and LOCKCURVE_HOLD_US microseconds, all
 * online CPUs take and release one lock (spinning for the hold time inside
 * it) for CONT_MS ms, and the line
 *
 *   lockcurve ALGO hold_us=H cpus=P pairs=N response_us=R
 *
 * gives R = P * CONT_MS ms / N: the time one processor spends per
 * lock/unlock pair, waiting included, with P contending.  Booted with
 * maxcpus=1..n (the benchmark harness), the lines trace the figure's
 * curves.
 *
 * These are figures to read, not a test: nothing here passes or fails,
 * except that a contended run whose counter disagrees with its operation
 * count (lost mutual exclusion) says so.
 */
#include <kern/lock/lockbench.h>
#include <kern/lock/spinlock.h>
#include <kern/lock/lockstat.h>
#include <kern/lock/witness.h>
#include <kern/lib/options.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/arch/smp.h>
#include <kern/arch/cpu.h>
#include <kern/arch/arch.h>
#include <drivers/platform/timer.h>

#define UNC_PAIRS   20000
#define UNC_ROUNDS  15
#define CONT_MS     200
#define CONT_BATCH  16      /* pairs between clock reads */
#define MAX_EXTRA   8
#define LOCKCURVE_HOLD_US 25

LOCK_CLASS(lockbench_class, "lockbench", LK_SPIN);

/* Registered kinds; written before kbench_run, on the boot CPU. */
static const struct lockbench_ops *extra[MAX_EXTRA];
static int nextra;

void lockbench_register(const struct lockbench_ops *ops)
{
    if (nextra < MAX_EXTRA)
        extra[nextra++] = ops;
    else
        kprintf("lockbench: too many kinds, '%s' left out\n", ops->name);
}

/* ---- Uncontended ----------------------------------------------------------- */

/* One lock kind being measured, and its figures. */
struct kind {
    const char *name;
    void (*lock)(void *);
    void (*unlock)(void *);
    void *arg;
    uint64_t best[2];           /* cycles per pair: [0] lockstat off, [1] on */
};

/* Cycles for UNC_PAIRS pairs.  Inlined into each caller so that the
 * spin-lock calls are direct. */
static inline __attribute__((always_inline))
uint64_t time_pairs(void (*lock)(void *), void (*unlock)(void *), void *arg)
{
    uint64_t t0 = rdtsc();
    for (int i = 0; i < UNC_PAIRS; i++) {
        lock(arg);
        unlock(arg);
    }
    return rdtsc() - t0;
}

static void bench_spin_lock(void *l) { spin_lock(l); }
static void bench_spin_unlock(void *l) { spin_unlock(l); }

static uint64_t time_kind(const struct kind *k)
{
    if (k->lock == bench_spin_lock)
        return time_pairs(bench_spin_lock, bench_spin_unlock, k->arg);
    return time_pairs(k->lock, k->unlock, k->arg);
}

/*
 * The best of UNC_ROUNDS runs for each kind, with the kinds interleaved
 * round by round, so that a disturbance (a timer tick, or on an emulator
 * the host's other work) is as likely to hit one kind as another.
 */
static void uncontended(struct kind *k, int nk)
{
    int mode = lockstat_mode;
    for (int on = 0; on < 2; on++) {
        lockstat_set_mode(on ? LOCKSTAT_ON : LOCKSTAT_OFF);
        for (int i = 0; i < nk; i++)
            k[i].best[on] = ~0UL;
        for (int r = 0; r < UNC_ROUNDS; r++)
            for (int i = 0; i < nk; i++)
                k[i].best[on] = MIN(k[i].best[on], time_kind(&k[i]));
        for (int i = 0; i < nk; i++)
            k[i].best[on] /= UNC_PAIRS;
    }
    lockstat_set_mode(mode);
}

/* ---- Contended ------------------------------------------------------------- */

struct hammer {
    void (*lock)(void *);
    void (*unlock)(void *);
    void *arg;
    uint64_t cycles;            /* [const] run length in TSC cycles */
    uint64_t hold;              /* [const] TSC cycles to spin inside the lock */
    int ready;                  /* [atomic] CPUs at the start line */
    uint64_t ops;               /* [atomic] pairs done, summed at the end */
    uint64_t counter;           /* under the lock being measured */
};

static void hold_for(uint64_t cycles)
{
    uint64_t until = rdtsc() + cycles;
    while (rdtsc() < until)
        cpu_relax();
}

static void hammer_cpu(void *arg)
{
    struct hammer *h = arg;
    __atomic_add_fetch(&h->ready, 1, __ATOMIC_ACQ_REL);
    while (__atomic_load_n(&h->ready, __ATOMIC_ACQUIRE) < ncpus_online)
        cpu_relax();
    uint64_t end = rdtsc() + h->cycles, n = 0;
    while (rdtsc() < end) {
        for (int i = 0; i < CONT_BATCH; i++) {
            h->lock(h->arg);
            h->counter++;
            if (h->hold)
                hold_for(h->hold);
            h->unlock(h->arg);
        }
        n += CONT_BATCH;
    }
    __atomic_add_fetch(&h->ops, n, __ATOMIC_ACQ_REL);
}

/* Pairs per second, all CPUs together, each pair holding the lock for
 * hold TSC cycles. */
static uint64_t contended_hold(const char *name, void (*lock)(void *), void (*unlock)(void *),
                               void *arg, uint64_t hold)
{
    static struct hammer h;
    memset(&h, 0, sizeof h);
    h.lock = lock;
    h.unlock = unlock;
    h.arg = arg;
    h.cycles = tsc_hz / 1000 * CONT_MS;
    h.hold = hold;
    smp_call_all(hammer_cpu, &h);
    if (h.counter != h.ops)
        kprintf("lockbench: %s lost mutual exclusion: counter %lu, operations %lu\n",
                name, h.counter, h.ops);
    return h.ops * 1000 / CONT_MS;
}

static uint64_t contended(const char *name, void (*lock)(void *), void (*unlock)(void *), void *arg)
{
    return contended_hold(name, lock, unlock, arg, 0);
}

/* ---- The lines ------------------------------------------------------------- */

static void report(struct kind *k, int nk)
{
    uncontended(k, nk);
    int mode = lockstat_set_mode(LOCKSTAT_OFF);
    for (int i = 0; i < nk; i++) {
        uint64_t ops = contended(k[i].name, k[i].lock, k[i].unlock, k[i].arg);
        kprintf("lockbench %s uncontended_off=%lu uncontended_on=%lu contended_ops=%lu\n",
                k[i].name, k[i].best[0], k[i].best[1], ops);
    }
    lockstat_set_mode(mode);
}

void lockbench_measure(const char *name, void (*lock)(void *), void (*unlock)(void *), void *arg)
{
    struct kind k = { name, lock, unlock, arg, { 0, 0 } };
    bool witness = witness_set_enabled(false);
    report(&k, 1);
    witness_set_enabled(witness);
}

void lockbench_locks(void)
{
    /* Each lock on its own cache line (and so never across a page). */
    static struct {
        spinlock_t l;
    } __cacheline locks[3];
    struct kind k[3 + MAX_EXTRA];
    int nk = 0;
    bool witness = witness_set_enabled(false);
    kprintf("lockbench: %d cpus, tsc %lu Hz, %d ms contended runs\n", ncpus_online, tsc_hz,
            CONT_MS);
    for (int algo = LOCK_SPIN; algo <= LOCK_H2MCS; algo++) {
        spin_init_algo(&locks[algo].l, &lockbench_class, algo);
        k[nk++] = (struct kind){ spin_algo_name(algo), bench_spin_lock, bench_spin_unlock,
                                 &locks[algo].l, { 0, 0 } };
    }
    for (int i = 0; i < nextra; i++)
        k[nk++] = (struct kind){ extra[i]->name, extra[i]->lock, extra[i]->unlock,
                                 extra[i]->make(), { 0, 0 } };
    report(k, nk);
    for (int algo = LOCK_SPIN; algo <= LOCK_H2MCS; algo++)
        spin_destroy(&locks[algo].l);
    witness_set_enabled(witness);
}

void lockbench_curve(void)
{
    static struct {
        spinlock_t l;
    } __cacheline lock;
    static const int holds_us[] = { 0, LOCKCURVE_HOLD_US };
    bool witness = witness_set_enabled(false);
    int mode = lockstat_set_mode(LOCKSTAT_OFF);
    for (int algo = LOCK_SPIN; algo <= LOCK_H2MCS; algo++) {
        spin_init_algo(&lock.l, &lockbench_class, algo);
        for (size_t i = 0; i < ARRAY_SIZE(holds_us); i++) {
            uint64_t hold = tsc_hz / 1000000 * holds_us[i];
            uint64_t per_s = contended_hold(spin_algo_name(algo), bench_spin_lock,
                                            bench_spin_unlock, &lock.l, hold);
            uint64_t pairs = per_s * CONT_MS / 1000;
            /* Hundredths of a microsecond: kprintf has no floating point. */
            uint64_t r100 = pairs ? (uint64_t)ncpus_online * CONT_MS * 100000 / pairs : 0;
            kprintf("lockcurve %s hold_us=%d cpus=%d pairs=%lu response_us=%lu.%02lu\n",
                    spin_algo_name(algo), holds_us[i], ncpus_online, pairs, r100 / 100,
                    r100 % 100);
        }
        spin_destroy(&lock.l);
    }
    lockstat_set_mode(mode);
    witness_set_enabled(witness);
}
