/*
 * ktests for spin locks: mutual exclusion under contention on every CPU for
 * each algorithm, TryLock (fails at once on a held lock and never joins its
 * queue), nesting and out-of-order release, the held-lock stack and the
 * interrupt state, and H2-MCS's node-less uncontended holds.
 */
#include <kern/tests/ktest.h>
#include <kern/lock/spinlock.h>
#include <kern/lock/pvspin.h>
#include <kern/lib/options.h>
#include <kern/arch/smp.h>
#include <kern/arch/cpu.h>
#include <kern/arch/arch.h>
#include <drivers/platform/timer.h>

LOCK_CLASS(test_spin_mx, "test_spin_mx", LK_SPIN);
LOCK_CLASS(test_spin_try, "test_spin_try", LK_SPIN);
LOCK_CLASS(test_spin_na, "test_spin_nest_a", LK_SPIN);
LOCK_CLASS(test_spin_nb, "test_spin_nest_b", LK_SPIN);
LOCK_CLASS(test_spin_nc, "test_spin_nest_c", LK_SPIN);

/*
 * Acquisitions per CPU.  On an emulator with more virtual CPUs than host
 * CPUs every hand-off of a queue lock may wait for the host to schedule the
 * successor's thread (milliseconds), so large machines get a small total:
 * every acquisition there is contended anyway.
 */
static int iterations(void)
{
    int total = ncpus_online <= 4 ? 4000 : 480;
    return MAX(total / ncpus_online, 16);
}

/* ---- Mutual exclusion ------------------------------------------------------ */

/* The shared state of the mutual-exclusion tests, all under mx_lock.  a and
 * b are equal whenever nobody is inside; owner is the CPU inside, or -1. */
static spinlock_t mx_lock;
static struct {
    uint64_t a, b;
    int owner;
} mx;

/* One critical section; returns the number of invariant violations seen. */
static int mx_critical(int me)
{
    int bad = 0;
    if (READ_ONCE(mx.owner) != -1 || READ_ONCE(mx.a) != READ_ONCE(mx.b))
        bad++;
    WRITE_ONCE(mx.owner, me);
    WRITE_ONCE(mx.a, READ_ONCE(mx.a) + 1);
    for (int k = 0; k < 16; k++)
        cpu_relax();                    /* widen the window for an intruder */
    if (READ_ONCE(mx.owner) != me || !spin_held(&mx_lock))
        bad++;
    WRITE_ONCE(mx.b, READ_ONCE(mx.b) + 1);
    WRITE_ONCE(mx.owner, -1);
    return bad;
}

/* Every CPU: CPU 0 makes a fresh lock of algorithm algo, then all start. */
static int mx_start(int algo)
{
    int me = cpu_id();
    if (me == 0) {
        spin_init_algo(&mx_lock, &test_spin_mx, algo);
        mx.a = mx.b = 0;
        mx.owner = -1;
    }
    ktest_barrier();
    return me;
}

/* Every CPU, after its n acquisitions: no CPU saw a broken invariant, and
 * (CPU 0) the counts add up. */
static int mx_finish(int me, int n, int bad)
{
    ktest_barrier();
    KT_ASSERT_EQ(bad, 0);
    if (me == 0) {
        KT_ASSERT_EQ(mx.a, (uint64_t)n * ncpus_online);
        KT_ASSERT_EQ(mx.b, (uint64_t)n * ncpus_online);
        spin_destroy(&mx_lock);
    }
    return 0;
}

static int mutual_exclusion(int algo)
{
    int me = mx_start(algo);
    int n = iterations(), bad = 0;
    for (int i = 0; i < n; i++) {
        spin_lock(&mx_lock);
        bad += mx_critical(me);
        spin_unlock(&mx_lock);
    }
    return mx_finish(me, n, bad);
}

KTEST_ALL_CPUS(spin_mutex_spin) { return mutual_exclusion(LOCK_SPIN); }
KTEST_ALL_CPUS(spin_mutex_mcs) { return mutual_exclusion(LOCK_MCS); }
KTEST_ALL_CPUS(spin_mutex_h2mcs) { return mutual_exclusion(LOCK_H2MCS); }

/* Half the acquisitions by TryLock (retried until it succeeds): TryLock and
 * lock exclude each other too. */
static int mutual_exclusion_try(int algo)
{
    int me = mx_start(algo);
    int n = iterations() / 2, bad = 0;
    for (int i = 0; i < n; i++) {
        if (i & 1) {
            while (!spin_trylock(&mx_lock))
                cpu_relax();
        } else {
            spin_lock(&mx_lock);
        }
        bad += mx_critical(me);
        spin_unlock(&mx_lock);
    }
    return mx_finish(me, n, bad);
}

KTEST_ALL_CPUS(spin_mutex_trylock_mixed)
{
    for (int algo = LOCK_SPIN; algo <= LOCK_H2MCS; algo++) {
        int r = mutual_exclusion_try(algo);
        if (r)
            return r;
        ktest_barrier();
    }
    return 0;
}

/* ---- TryLock --------------------------------------------------------------- */

static spinlock_t try_lock;
static volatile int try_result;
static volatile uint64_t try_cycles;

/* Runs on another CPU while the boot CPU holds try_lock. */
static void try_elsewhere(void *unused)
{
    uint64_t t0 = rdtsc();
    bool got = spin_trylock(&try_lock);
    try_cycles = rdtsc() - t0;
    try_result = got;
    if (got)
        spin_unlock(&try_lock);
}

static int trylock_one(int algo)
{
    spin_init_algo(&try_lock, &test_spin_try, algo);
    KT_ASSERT(spin_trylock(&try_lock));
    KT_ASSERT(spin_held(&try_lock));
    void *tail = try_lock.tail;
    /* Busy: fails at once, here and on another CPU, and joins no queue. */
    KT_ASSERT(!spin_trylock(&try_lock));
    if (ncpus_online > 1) {
        try_result = -1;
        smp_call_one(1, try_elsewhere, NULL);
        KT_ASSERT_EQ(try_result, 0);
        KT_ASSERT(try_cycles < tsc_hz / 10);
    }
    KT_ASSERT(try_lock.tail == tail);
    KT_ASSERT(spin_held(&try_lock));
    spin_unlock(&try_lock);
    KT_ASSERT(!spin_held(&try_lock));
    /* Free: succeeds, here and elsewhere; lock after trylock works. */
    if (ncpus_online > 1) {
        smp_call_one(1, try_elsewhere, NULL);
        KT_ASSERT_EQ(try_result, 1);
    }
    spin_lock(&try_lock);
    KT_ASSERT(!spin_trylock(&try_lock));
    spin_unlock(&try_lock);
    KT_ASSERT(try_lock.word == 0 && try_lock.tail == NULL);
    spin_destroy(&try_lock);
    return 0;
}

/* Run a single-algorithm case for spin, mcs and h2mcs in turn. */
static int each_algo(int (*one)(int algo))
{
    for (int algo = LOCK_SPIN; algo <= LOCK_H2MCS; algo++) {
        int r = one(algo);
        if (r)
            return r;
    }
    return 0;
}

KTEST(spin_trylock_all_algos)
{
    return each_algo(trylock_one);
}

/* ---- Nesting, the held stack and interrupts -------------------------------- */

static bool intr_on(void)
{
    return (read_rflags() & RFLAGS_IF) != 0;
}

static int nested_one(int algo)
{
    /* Static, so that a failed assertion leaves no dangling instance on
     * the class lists. */
    static spinlock_t a, b, c;
    spin_init_algo(&a, &test_spin_na, algo);
    spin_init_algo(&b, &test_spin_nb, algo);
    spin_init_algo(&c, &test_spin_nc, algo);
    bool was_on = intr_on();
    struct held_locks *h = held_locks_current();
    int n0 = h->n, d0 = spin_depth();

    spin_lock(&a);
    spin_lock(&b);
    spin_lock(&c);
    KT_ASSERT(!intr_on());
    KT_ASSERT_EQ(spin_depth(), d0 + 3);
    KT_ASSERT_EQ(h->n, n0 + 3);
    KT_ASSERT(h->e[n0].lock == &a && h->e[n0 + 2].lock == &c);
    KT_ASSERT(h->e[n0 + 1].cls == &test_spin_nb && h->e[n0 + 1].site != 0);
    KT_ASSERT(spin_held(&a) && spin_held(&b) && spin_held(&c));

    /* Out of order: the middle, then the bottom, then the top. */
    spin_unlock(&b);
    KT_ASSERT(!spin_held(&b) && !intr_on());
    KT_ASSERT(h->e[n0].lock == &a && h->e[n0 + 1].lock == &c);
    spin_unlock(&a);
    KT_ASSERT(!intr_on());
    spin_lock(&b);                  /* reuses a freed queue node */
    spin_unlock(&c);
    spin_unlock(&b);
    KT_ASSERT_EQ(h->n, n0);
    KT_ASSERT_EQ(spin_depth(), d0);
    KT_ASSERT_EQ(intr_on(), was_on);
    spin_destroy(&a);
    spin_destroy(&b);
    spin_destroy(&c);
    return 0;
}

KTEST(spin_nested_all_algos)
{
    return each_algo(nested_one);
}

/* Nested queue locks of both kinds, contended on every CPU: the per-CPU
 * queue nodes must keep working at depth 3. */
static spinlock_t nest_a, nest_b, nest_c;
static uint64_t nest_count;         /* under nest_c */

KTEST_ALL_CPUS(spin_nested_contended)
{
    int me = cpu_id();
    if (me == 0) {
        spin_init_algo(&nest_a, &test_spin_na, LOCK_MCS);
        spin_init_algo(&nest_b, &test_spin_nb, LOCK_H2MCS);
        spin_init_algo(&nest_c, &test_spin_nc, LOCK_H2MCS);
        nest_count = 0;
    }
    ktest_barrier();
    int n = iterations() / 2, bad = 0;
    for (int i = 0; i < n; i++) {
        /* Alternate between the full nest and the inner two, so that the
         * inner locks see waiters arriving with different node indices. */
        bool outer = (i + me) & 1;
        if (outer)
            spin_lock(&nest_a);
        spin_lock(&nest_b);
        spin_lock(&nest_c);
        nest_count++;
        if (!spin_held(&nest_b) || (outer && !spin_held(&nest_a)))
            bad++;
        spin_unlock(&nest_c);
        spin_unlock(&nest_b);
        if (outer)
            spin_unlock(&nest_a);
    }
    ktest_barrier();
    KT_ASSERT_EQ(bad, 0);
    if (me == 0) {
        KT_ASSERT_EQ(nest_count, (uint64_t)n * ncpus_online);
        spin_destroy(&nest_a);
        spin_destroy(&nest_b);
        spin_destroy(&nest_c);
    }
    return 0;
}

/* A statically initialized lock takes lock= at its first use. */
static spinlock_t static_lock = SPINLOCK_INIT(&test_spin_try);

KTEST(spin_static_init)
{
    KT_ASSERT(static_lock.algo == SPIN_ALGO_UNSET || spin_algo_of(&static_lock) == opts.lock);
    spin_lock(&static_lock);
    KT_ASSERT_EQ(spin_algo_of(&static_lock), opts.lock);
    /* A TTAS lock's release looks for halted waiters only under pvspin=on. */
    KT_ASSERT_EQ(static_lock.algo == SPIN_TTAS_PV, opts.lock == LOCK_SPIN && pvspin_on);
    KT_ASSERT(spin_held(&static_lock));
    spin_unlock(&static_lock);
    KT_ASSERT(spin_trylock(&static_lock));
    spin_unlock(&static_lock);
    return 0;
}

/* ---- H2-MCS's node-less holds --------------------------------------------- */

static spinlock_t nodeless_lock;
static volatile int nodeless_step;      /* 1: CPU 0 holds it; 2: CPU 1 got it */
static volatile uint32_t nodeless_node; /* CPU 1's holder node while it held it */

/* Spin until *flag reaches want or the bound runs out (TCG may schedule a
 * vCPU late): true if it did. */
static bool wait_for(volatile int *flag, int want)
{
    uint64_t give_up = rdtsc() + 10 * tsc_hz;
    while (*flag < want)
        if (rdtsc() > give_up)
            return false;
        else
            cpu_relax();
    return true;
}

/* The queue node published in qhead by the waiter behind a node-less holder,
 * or NULL if none came within the bound. */
static struct mcs_node *wait_qhead(spinlock_t *l)
{
    uint64_t give_up = rdtsc() + 10 * tsc_hz;
    struct mcs_node *n;
    while ((n = __atomic_load_n(&l->qhead, __ATOMIC_ACQUIRE)) == NULL && rdtsc() < give_up)
        cpu_relax();
    return n;
}

/* An uncontended H2-MCS acquisition uses no queue node (the tail holds the
 * marker); a waiter behind such a holder queues through qhead and gets the
 * lock with a node of its own at the holder's release. */
KTEST_ALL_CPUS(spin_h2mcs_nodeless)
{
#ifdef TEMPEST_UP
    KT_SKIP("the uniprocessor build (TEMPEST_UP) has no lock word to look at");
#endif
    int me = cpu_id();
    bool alone_ok = true, handed_ok = true;
    if (me == 0) {
        spin_init_algo(&nodeless_lock, &test_spin_try, LOCK_H2MCS);
        nodeless_step = 0;
        nodeless_node = SPIN_NO_NODE;
        spin_lock(&nodeless_lock);
        alone_ok = nodeless_lock.tail == H2MCS_NODELESS && nodeless_lock.qhead == NULL &&
                   nodeless_lock.node == SPIN_NO_NODE;
        spin_unlock(&nodeless_lock);
        alone_ok = alone_ok && nodeless_lock.tail == NULL;
    }
    ktest_barrier();
    if (me == 0 && ncpus_online > 1) {
        spin_lock(&nodeless_lock);
        nodeless_step = 1;
        struct mcs_node *waiter = wait_qhead(&nodeless_lock);
        bool queued = waiter != NULL && nodeless_lock.tail == waiter;
        spin_unlock(&nodeless_lock);        /* hands over to CPU 1 */
        handed_ok = queued && wait_for(&nodeless_step, 2) && nodeless_node != SPIN_NO_NODE;
    } else if (me == 1 && wait_for(&nodeless_step, 1)) {
        spin_lock(&nodeless_lock);
        nodeless_node = nodeless_lock.node;
        spin_unlock(&nodeless_lock);
        nodeless_step = 2;
    }
    ktest_barrier();
    if (me != 0)
        return 0;
    KT_ASSERT(alone_ok);
    KT_ASSERT(handed_ok);
    KT_ASSERT(nodeless_lock.tail == NULL && nodeless_lock.qhead == NULL);
    spin_destroy(&nodeless_lock);
    return 0;
}
