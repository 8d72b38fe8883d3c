/*
 * ktests for lock statistics: exact hit counts for a known workload, no
 * misses on one CPU, misses under contention on every CPU, the off and
 * contended modes, folding on destroy, reset, and the snapshot format.
 * Each test uses classes of its own, so other locks cannot disturb the
 * counts, and restores the statistics mode it found.
 */
#include <kern/tests/ktest.h>
#include <kern/lock/spinlock.h>
#include <kern/lock/lockstat.h>
#include <kern/lib/options.h>
#include <kern/lib/string.h>
#include <kern/vm/kmem.h>
#include <kern/arch/smp.h>
#include <kern/arch/cpu.h>
#include <kern/arch/arch.h>
#include <drivers/platform/timer.h>
#include <kern/lib/ksyms.h>

LOCK_CLASS(test_ls_hits, "test_ls_hits", LK_SPIN);
LOCK_CLASS(test_ls_cont, "test_ls_contended", LK_SPIN);
LOCK_CLASS(test_ls_modes, "test_ls_modes", LK_SPIN);
LOCK_CLASS(test_ls_fold, "test_ls_fold", LK_SPIN);
LOCK_CLASS(test_ls_snap, "test_ls_snapshot", LK_SPIN);
LOCK_CLASS(test_ls_static, "test_ls_static", LK_SPIN);
LOCK_CLASS(test_ls_sampled, "test_ls_sampled", LK_SPIN);

/* The tests count holds exactly: with a test's mode every hold is timed
 * (lockstat_hold_period 1, kern/lock/lockstat.h), and restoring the mode
 * it found brings back the default period of sampled holds. */
static int set_mode_exact(int mode)
{
    __atomic_store_n(&lockstat_hold_period, 1, __ATOMIC_RELAXED);
    return lockstat_set_mode(mode);
}

static void restore_mode(int mode)
{
    lockstat_set_mode(mode);
    __atomic_store_n(&lockstat_hold_period, LOCKSTAT_HOLD_PERIOD, __ATOMIC_RELAXED);
}

static struct lockstat_totals totals(struct lock_class *c)
{
    struct lockstat_totals t;
    lockstat_class_totals(c, &t);
    return t;
}

/* n locks and m successful trylocks of l on this CPU. */
static void workload(spinlock_t *l, int n, int m)
{
    for (int i = 0; i < n; i++) {
        spin_lock(l);
        spin_unlock(l);
    }
    for (int i = 0; i < m; i++) {
        if (spin_trylock(l))
            spin_unlock(l);
    }
}

/* ---- Exact counts on one CPU ------------------------------------------------- */

static int exact_one(int algo)
{
    static spinlock_t l;
    enum { N = 1000, M = 24 };
    struct lockstat_totals t0 = totals(&test_ls_hits);
    spin_init_algo(&l, &test_ls_hits, algo);
    workload(&l, N, M);
    struct lockstat_totals t1 = totals(&test_ls_hits);
    KT_ASSERT_EQ(t1.hits - t0.hits, N + M);
    KT_ASSERT_EQ(l.inst.hits, N + M);
    /* One CPU: nobody else can hold it, so no misses and no waiting. */
    KT_ASSERT_EQ(t1.misses - t0.misses, 0);
    KT_ASSERT_EQ(l.inst.misses, 0);
    KT_ASSERT_EQ(t1.wait_cycles - t0.wait_cycles, 0);
    KT_ASSERT(t1.hold_cycles > t0.hold_cycles);
    KT_ASSERT_EQ(t1.ninstances, t0.ninstances + 1);
    spin_destroy(&l);
    return 0;
}

KTEST(lockstat_exact_hits_one_cpu)
{
    int mode = set_mode_exact(LOCKSTAT_ON);
    int r = 0;
    for (int algo = LOCK_SPIN; algo <= LOCK_H2MCS && !r; algo++)
        r = exact_one(algo);
    restore_mode(mode);
    return r;
}

/* ---- Misses under contention on every CPU -------------------------------------- */

static spinlock_t cont_lock;
static volatile int cont_held, cont_arrived;
static uint64_t cont_count;        /* under cont_lock */
static struct lockstat_totals cont_t0;

/* The boot CPU holds the lock while every other CPU arrives and tries it,
 * so at least one acquisition must find it busy. */
static void forced_contention(int me)
{
    if (me == 0) {
        spin_lock(&cont_lock);
        cont_count++;
        __atomic_store_n(&cont_held, 1, __ATOMIC_RELEASE);
        while (__atomic_load_n(&cont_arrived, __ATOMIC_ACQUIRE) < ncpus_online - 1)
            cpu_relax();
        /* Long enough that a CPU descheduled by the host between arriving
         * and trying still finds the lock busy. */
        delay_us(30000);
        spin_unlock(&cont_lock);
        return;
    }
    while (!__atomic_load_n(&cont_held, __ATOMIC_ACQUIRE))
        cpu_relax();
    __atomic_add_fetch(&cont_arrived, 1, __ATOMIC_ACQ_REL);
    spin_lock(&cont_lock);
    cont_count++;
    spin_unlock(&cont_lock);
}

/* Acquisitions per CPU after the forced contention (kept small on large
 * emulated machines, as in test_spinlock.c). */
static int contended_iterations(void)
{
    int total = ncpus_online <= 4 ? 1200 : 320;
    return MAX(total / ncpus_online, 10);
}

static int contended_one(int algo, int me)
{
    int N = contended_iterations();
    if (me == 0) {
        cont_t0 = totals(&test_ls_cont);
        spin_init_algo(&cont_lock, &test_ls_cont, algo);
        cont_held = cont_arrived = 0;
        cont_count = 0;
    }
    ktest_barrier();
    forced_contention(me);
    for (int i = 0; i < N; i++) {
        spin_lock(&cont_lock);
        cont_count++;
        spin_unlock(&cont_lock);
    }
    ktest_barrier();
    if (me == 0) {
        uint64_t want = (uint64_t)(N + 1) * ncpus_online;
        struct lockstat_totals t = totals(&test_ls_cont);
        uint64_t hits = t.hits - cont_t0.hits, misses = t.misses - cont_t0.misses;
        KT_ASSERT_EQ(cont_count, want);
        KT_ASSERT_EQ(hits, want);
        KT_ASSERT_EQ(cont_lock.inst.hits, want);
        KT_ASSERT(misses <= hits);          /* at most one miss per hit */
        KT_ASSERT_EQ(cont_lock.inst.misses, misses);
        if (ncpus_online > 1) {
            KT_ASSERT(misses > 0);
            KT_ASSERT(t.wait_cycles > cont_t0.wait_cycles);
            KT_ASSERT(t.max_wait > 0);
        } else {
            KT_ASSERT_EQ(misses, 0);
        }
        spin_destroy(&cont_lock);
    }
    ktest_barrier();
    return 0;
}

static int each_algo(int mode, int (*run)(int algo, int me));

KTEST_ALL_CPUS(lockstat_misses_contended)
{
    return each_algo(LOCKSTAT_ON, contended_one);
}

/* ---- Modes ----------------------------------------------------------------- */

KTEST(lockstat_off_records_nothing)
{
    static spinlock_t l;
    int mode = set_mode_exact(LOCKSTAT_OFF);
    spin_init(&l, &test_ls_modes);
    struct lockstat_totals t0 = totals(&test_ls_modes);
    workload(&l, 500, 10);
    struct lockstat_totals t1 = totals(&test_ls_modes);
    restore_mode(mode);
    KT_ASSERT_EQ(t1.hits, t0.hits);
    KT_ASSERT_EQ(t1.misses, t0.misses);
    KT_ASSERT_EQ(t1.hold_cycles, t0.hold_cycles);
    KT_ASSERT_EQ(l.inst.hits, 0);
    /* Only lockstat=on sends the spin locks' fast path to the counting. */
    KT_ASSERT(((lock_hooks & LOCK_HOOK_STAT) != 0) == (mode == LOCKSTAT_ON));
    spin_destroy(&l);
    return 0;
}

/* Contended mode records only acquisitions that missed (issue 17: nothing
 * on an uncontended one), and on one CPU none do: nothing is counted, and
 * the spin locks' fast path is the one of lockstat=off. */
KTEST(lockstat_contended_mode)
{
    static spinlock_t l;
    int mode = set_mode_exact(LOCKSTAT_CONTENDED);
    bool plain_path = !(lock_hooks & LOCK_HOOK_STAT);
    spin_init(&l, &test_ls_modes);
    struct lockstat_totals t0 = totals(&test_ls_modes);
    workload(&l, 500, 10);
    struct lockstat_totals t1 = totals(&test_ls_modes);
    restore_mode(mode);
    KT_ASSERT(plain_path);
    KT_ASSERT_EQ(t1.hits, t0.hits);
    KT_ASSERT_EQ(t1.misses, t0.misses);
    KT_ASSERT_EQ(t1.wait_cycles, t0.wait_cycles);
    KT_ASSERT_EQ(t1.hold_cycles, t0.hold_cycles);
    KT_ASSERT_EQ(l.inst.hits, 0);
    spin_destroy(&l);
    return 0;
}

/* ---- Destroy and reset --------------------------------------------------------- */

KTEST(lockstat_destroy_folds)
{
    static spinlock_t l;
    int mode = set_mode_exact(LOCKSTAT_ON);
    spin_init_named(&l, &test_ls_fold, "fold-me");
    workload(&l, 77, 0);
    struct lockstat_totals t0 = totals(&test_ls_fold);
    uint64_t folded0 = test_ls_fold.folded_hits;
    spin_destroy(&l);
    struct lockstat_totals t1 = totals(&test_ls_fold);
    restore_mode(mode);
    KT_ASSERT_EQ(test_ls_fold.folded_hits - folded0, 77);
    KT_ASSERT_EQ(t1.hits, t0.hits);                 /* the class keeps them */
    KT_ASSERT_EQ(t1.ninstances, t0.ninstances - 1); /* the instance is gone */
    for (struct lock_instance *li = test_ls_fold.instances; li; li = li->next)
        KT_ASSERT(li != &l.inst);
    return 0;
}

KTEST(lockstat_reset_zeroes)
{
    static spinlock_t l;
    int mode = set_mode_exact(LOCKSTAT_ON);
    spin_init(&l, &test_ls_fold);
    workload(&l, 10, 0);
    lockstat_reset();
    struct lockstat_totals t = totals(&test_ls_fold);
    uint64_t inst_hits = l.inst.hits, folded = test_ls_fold.folded_hits;
    workload(&l, 3, 0);
    struct lockstat_totals t2 = totals(&test_ls_fold);
    spin_destroy(&l);
    restore_mode(mode);
    KT_ASSERT_EQ(t.hits, 0);
    KT_ASSERT_EQ(t.misses, 0);
    KT_ASSERT_EQ(t.hold_cycles, 0);
    KT_ASSERT_EQ(t.max_wait, 0);
    KT_ASSERT_EQ(folded, 0);
    KT_ASSERT_EQ(inst_hits, 0);
    KT_ASSERT_EQ(t2.hits, 3);
    /* Every other class is zero too (nothing else took one of them since,
     * on this CPU at least: check the classes of these tests). */
    KT_ASSERT_EQ(totals(&test_ls_hits).hits, 0);
    KT_ASSERT_EQ(totals(&test_ls_cont).hits, 0);
    return 0;
}

/* ---- Snapshot -------------------------------------------------------------- */

static uint64_t hist_sum(const uint64_t hist[LOCKSTAT_NBUCKETS])
{
    uint64_t n = 0;
    for (int b = 0; b < LOCKSTAT_NBUCKETS; b++)
        n += hist[b];
    return n;
}

/* The per-CPU records of class index ci add up to hits. */
static int check_percpu(const struct lockstat_snapshot_hdr *h, const struct lockstat_cpu_rec *pr,
                        uint32_t ci, int hits)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < h->npercpu; i++) {
        KT_ASSERT(pr[i].cpu < h->ncpus);
        KT_ASSERT(pr[i].hits > 0);
        if (pr[i].cls == ci)
            sum += pr[i].hits;
    }
    KT_ASSERT_EQ(sum, hits);
    return 0;
}

static int check_snapshot(const void *buf, size_t len, spinlock_t *l, int hits)
{
    const struct lockstat_snapshot_hdr *h = buf;
    KT_ASSERT_EQ(h->version, LOCKSTAT_VERSION);
    KT_ASSERT_EQ(h->nclasses, (uint64_t)(__lockclass_end - __lockclass_start));
    KT_ASSERT_EQ(len, sizeof *h + h->nclasses * sizeof(struct lockstat_class_rec) +
                          h->ninst * sizeof(struct lockstat_inst_rec) +
                          h->nsites * sizeof(struct lockstat_site_rec) +
                          h->npercpu * sizeof(struct lockstat_cpu_rec));
    KT_ASSERT(h->tsc_hz > 0);
    KT_ASSERT_EQ(h->ncpus, ncpus);
    const struct lockstat_class_rec *cr = (const void *)(h + 1);
    const struct lockstat_inst_rec *ir = (const void *)(cr + h->nclasses);
    const struct lockstat_site_rec *sr = (const void *)(ir + h->ninst);
    const struct lockstat_cpu_rec *pr = (const void *)(sr + h->nsites);
    int found = 0;
    for (uint32_t i = 0; i < h->nclasses; i++) {
        if (strcmp(cr[i].name, "test_ls_snapshot") != 0)
            continue;
        KT_ASSERT_EQ(cr[i].hits, hits);
        KT_ASSERT_EQ(cr[i].ninstances, 1);
        KT_ASSERT_EQ(cr[i].kind, LK_SPIN);
        /* One CPU, lockstat=on: no wait, and every hold timed. */
        KT_ASSERT_EQ(hist_sum(cr[i].wait_hist), 0);
        KT_ASSERT_EQ(hist_sum(cr[i].hold_hist), hits);
        if (check_percpu(h, pr, i, hits))
            return 1;
        found++;
    }
    KT_ASSERT_EQ(found, 1);
    for (uint32_t i = 0; i < h->nsites; i++)    /* nothing contended it */
        KT_ASSERT(strcmp(sr[i].cls, "test_ls_snapshot") != 0);
    found = 0;
    for (uint32_t i = 0; i < h->ninst; i++) {
        if (ir[i].addr != (uint64_t)&l->inst)
            continue;
        KT_ASSERT_EQ(strcmp(ir[i].cls, "test_ls_snapshot"), 0);
        KT_ASSERT_EQ(strcmp(ir[i].name, "snap"), 0);
        KT_ASSERT_EQ(ir[i].hits, hits);
        found++;
    }
    KT_ASSERT_EQ(found, 1);
    return 0;
}

/* Room for what other threads register between sizing and writing. */
#define SNAP_SLACK 16384

KTEST(lockstat_snapshot_format)
{
    static spinlock_t l;
    static uint8_t small[64];
    int mode = set_mode_exact(LOCKSTAT_ON);
    spin_init_named(&l, &test_ls_snap, "snap");
    lockstat_reset();
    workload(&l, 42, 0);
    set_mode_exact(LOCKSTAT_OFF);        /* freeze the counts */

    /* Too small: an error, the size needed, and not one byte copied. */
    size_t need = 0;
    memset(small, 0xA5, sizeof small);
    KT_ASSERT_EQ(lockstat_snapshot(small, sizeof small, &need), -LOCKSTAT_ENOSPC);
    KT_ASSERT(need > sizeof small);
    for (size_t i = 0; i < sizeof small; i++)
        KT_ASSERT_EQ(small[i], 0xA5);
    KT_ASSERT_EQ(lockstat_snapshot(NULL, 0, &need), -LOCKSTAT_ENOSPC);

    /* Other threads may register lock instances and sites meanwhile (the
     * kmalloc below may itself), so the size can grow between two calls:
     * room beyond need, and the exact size is the one the writing call
     * reports.  A buffer one byte short of that is refused. */
    size_t room = need + SNAP_SLACK;
    uint8_t *buf = kmalloc(room + 64);
    KT_ASSERT(buf != NULL);
    memset(buf, 0xA5, room + 64);
    size_t need2 = 0;
    long n = lockstat_snapshot(buf, room, &need2);
    int r = 0;
    if (n < 0 || (size_t)n != need2 || need2 < need || buf[n] != 0xA5) {
        ktest_fail("snapshot wrote %ld bytes, needed %lu then %lu", n, need, need2);
        r = 1;
    } else {
        r = check_snapshot(buf, (size_t)n, &l, 42);
        memset(buf, 0xA5, room + 64);
        size_t need3 = 0;
        long short_by_one = lockstat_snapshot(buf, (size_t)n - 1, &need3);
        if (need3 == (size_t)n && (short_by_one != -LOCKSTAT_ENOSPC || buf[0] != 0xA5)) {
            ktest_fail("a buffer one byte short got %ld", short_by_one);
            r = 1;
        }
    }
    kfree(buf);
    spin_destroy(&l);
    restore_mode(mode);
    return r;
}

/* A statically initialized lock joins its class list at its first counted
 * acquisition. */
static spinlock_t ls_static = SPINLOCK_INIT(&test_ls_static);

KTEST(lockstat_static_lock)
{
    int mode = set_mode_exact(LOCKSTAT_ON);
    uint64_t before = ls_static.inst.hits;
    workload(&ls_static, 9, 0);
    struct lockstat_totals t = totals(&test_ls_static);
    restore_mode(mode);
    KT_ASSERT_EQ(ls_static.inst.hits - before, 9);
    KT_ASSERT_EQ(t.ninstances, 1);
    KT_ASSERT(test_ls_static.instances == &ls_static.inst);
    return 0;
}

/* ---- Call sites and histograms ----------------------------------------------- */

LOCK_CLASS(test_ls_sites, "test_ls_sites", LK_SPIN);

static spinlock_t site_lock;
static volatile int site_step;
static uint64_t site_count;         /* under site_lock */

/* The two named callers whose sites the statistics must name.  noinline,
 * and the kernel is built without sibling calls, so the return address of
 * spin_lock lies inside each. */
static void __attribute__((noinline)) contend_alpha(void)
{
    spin_lock(&site_lock);
    site_count++;
}

static void __attribute__((noinline)) contend_beta(void)
{
    spin_lock(&site_lock);
    site_count++;
}

static void step_to(int s)
{
    __atomic_store_n(&site_step, s, __ATOMIC_RELEASE);
}

static void wait_step(int s)
{
    while (__atomic_load_n(&site_step, __ATOMIC_ACQUIRE) < s)
        cpu_relax();
}

static volatile int site_missed;    /* the last forced round's waiter missed */

static bool site_in(uintptr_t site, const char *fn);

/* The events of kind what recorded at sites inside function fn. */
static uint64_t events_in(int what, const char *fn)
{
    struct lockstat_site sites[LOCKSTAT_NSITES];
    int n = lockstat_class_sites(&test_ls_sites, what, sites, LOCKSTAT_NSITES);
    uint64_t sum = 0;
    for (int i = 0; i < n; i++)
        if (site_in(sites[i].site, fn))
            sum += sites[i].count;
    return sum;
}

/* Waits (of test_ls_sites) in the buckets of a millisecond or more. */
static uint64_t long_waits_now(void)
{
    struct lockstat_totals t = totals(&test_ls_sites);
    uint64_t n = 0;
    for (unsigned b = lockstat_bucket(tsc_hz / 1000); b < LOCKSTAT_NBUCKETS; b++)
        n += t.wait_hist[b];
    return n;
}

/*
 * One forced miss: the holder takes the lock through its function and
 * keeps it 5 ms after the waiter says it is about to try; the waiter then
 * tries through its own function and reports whether it missed while the
 * holder held it (a contended hold at the holder's function was counted)
 * and waited a millisecond or more.  A host that deschedules the waiter
 * for most of the 5 ms spoils a round (no miss, or a short wait: seen
 * under make check's load), and the round is repeated, so the test does
 * not depend on the host's timing.
 */
static int forced_miss(int me, int holder, void (*take)(void), int *step)
{
    const char *holder_fn = holder == 0 ? "contend_alpha" : "contend_beta";
    for (int round = 0; round < 50; round++) {
        int base = *step;       /* both CPUs count the steps alike */
        *step += 4;
        if (me == holder) {
            take();
            step_to(base + 1);
            wait_step(base + 2);
            delay_us(5000);
            spin_unlock(&site_lock);
        } else {
            wait_step(base + 1);
            uint64_t before = events_in(LOCKSTAT_SITE_HOLD, holder_fn);
            uint64_t long_before = long_waits_now();
            step_to(base + 2);
            take();
            spin_unlock(&site_lock);
            /* It missed, found the holder in the holder's function, and
             * waited long. */
            bool missed = events_in(LOCKSTAT_SITE_HOLD, holder_fn) > before &&
                          long_waits_now() > long_before;
            __atomic_store_n(&site_missed, missed, __ATOMIC_RELEASE);
            step_to(base + 3);
        }
        wait_step(base + 3);
        bool missed = __atomic_load_n(&site_missed, __ATOMIC_ACQUIRE);
        /* Both have read the outcome before the next round begins. */
        if (me == holder)
            step_to(base + 4);
        wait_step(base + 4);
        if (missed)
            return 0;
    }
    return -1;
}

/* CPU 0 calls through contend_alpha, CPU 1 through contend_beta: first
 * each makes the other miss, then both run n rounds freely.  Returns 0, or
 * -1 if a forced miss never happened. */
static int site_pattern(int me, int n)
{
    void (*take)(void) = me == 0 ? contend_alpha : contend_beta;
    int step = 0;
    if (forced_miss(me, 0, take, &step) || forced_miss(me, 1, take, &step))
        return -1;
    for (int i = 0; i < n; i++) {
        take();
        spin_unlock(&site_lock);
    }
    return 0;
}

/* Whether site lies in function fn, by the kernel's symbol table. */
static bool site_in(uintptr_t site, const char *fn)
{
    uint64_t off;
    const char *name = ksym_lookup(site, &off);
    return name && strcmp(name, fn) == 0;
}

/* The sites of kind what: only alpha and beta, both present, counts adding
 * up to want (when want is not -1). */
static int check_sites(int what, int64_t want)
{
    struct lockstat_site sites[LOCKSTAT_NSITES];
    int n = lockstat_class_sites(&test_ls_sites, what, sites, LOCKSTAT_NSITES);
    int alpha = 0, beta = 0;
    uint64_t sum = 0;
    for (int i = 0; i < n; i++) {
        alpha += site_in(sites[i].site, "contend_alpha");
        beta += site_in(sites[i].site, "contend_beta");
        KT_ASSERT(site_in(sites[i].site, "contend_alpha") || site_in(sites[i].site, "contend_beta"));
        KT_ASSERT(i == 0 || sites[i].count <= sites[i - 1].count);
        sum += sites[i].count;
    }
    KT_ASSERT_EQ(alpha, 1);
    KT_ASSERT_EQ(beta, 1);
    if (want >= 0)
        KT_ASSERT_EQ(sum, want);
    return 0;
}

static int check_site_results(uint64_t min_hits)
{
    struct lockstat_totals t = totals(&test_ls_sites);
    KT_ASSERT(site_count >= min_hits);
    KT_ASSERT_EQ(t.hits, site_count);
    KT_ASSERT(t.misses >= 2);       /* the two forced ones at least */
    if (check_sites(LOCKSTAT_SITE_MISS, (int64_t)t.misses))
        return 1;
    /* Each miss names the holder's site, or counts it as not found
     * (the holder let go before the waiter looked). */
    struct lockstat_site sites[LOCKSTAT_NSITES];
    uint64_t named = 0;
    int n = lockstat_class_sites(&test_ls_sites, LOCKSTAT_SITE_HOLD, sites, LOCKSTAT_NSITES);
    for (int i = 0; i < n; i++)
        named += sites[i].count;
    KT_ASSERT(named <= t.misses);
    if (check_sites(LOCKSTAT_SITE_HOLD, -1))
        return 1;
    /* A spin lock misses at most once per acquisition, and each miss's
     * wait lands in one bucket; every hold was timed (lockstat=on). */
    KT_ASSERT_EQ(hist_sum(t.wait_hist), t.misses);
    KT_ASSERT_EQ(hist_sum(t.hold_hist), t.hits);
    /* The forced waits and holds lasted over a millisecond: buckets at or
     * above one millisecond have them. */
    uint64_t long_holds = 0;
    for (unsigned b = lockstat_bucket(tsc_hz / 1000); b < LOCKSTAT_NBUCKETS; b++)
        long_holds += t.hold_hist[b];
    KT_ASSERT(long_waits_now() >= 2);
    KT_ASSERT(long_holds >= 2);
    return 0;
}

static volatile int sites_failed;

/* Boot CPU: a fresh site_lock under algo and zeroed statistics. */
static void sites_start(int algo)
{
    spin_init_algo(&site_lock, &test_ls_sites, algo);
    lockstat_reset();
    site_count = 0;
    site_step = 0;
    sites_failed = 0;
}

/*
 * Every CPU: sites_start on the boot CPU, the pattern on CPUs 0 and 1
 * (n free rounds each), then check() on the boot CPU, and a barrier after
 * it whatever it found, so that a failure cannot strand the other CPUs.
 */
static int sites_run(int algo, int me, int n, int (*check)(int n))
{
    if (me == 0)
        sites_start(algo);
    ktest_barrier();
    if (me < 2)
        sites_failed |= site_pattern(me, n) != 0;
    ktest_barrier();
    int r = 0;
    if (me == 0) {
        r = check(n);
        spin_destroy(&site_lock);
    }
    ktest_barrier();
    return r;
}

static int check_on_mode(int n)
{
    KT_ASSERT(!sites_failed);       /* a forced miss never came (50 rounds) */
    return check_site_results(2 * ((uint64_t)n + 2));
}

/* Contended mode names the same sites, though it counts and times only
 * acquisitions that missed: each of them is one hit with one miss. */
static int check_contended_mode(int n)
{
    struct lockstat_totals t = totals(&test_ls_sites);
    KT_ASSERT(!sites_failed);
    KT_ASSERT(t.misses >= 2);       /* the two forced ones at least */
    KT_ASSERT_EQ(t.hits, t.misses);
    KT_ASSERT(site_count >= 2 * ((uint64_t)n + 2) && t.hits < site_count);
    if (check_sites(LOCKSTAT_SITE_MISS, (int64_t)t.misses) ||
        check_sites(LOCKSTAT_SITE_HOLD, -1))
        return 1;
    KT_ASSERT(hist_sum(t.hold_hist) <= t.misses);
    return 0;
}

/* Every CPU runs run(algo, me) for each spin-lock algorithm with the
 * statistics in mode, restored afterwards. */
static int each_algo(int mode, int (*run)(int algo, int me))
{
    static int saved;
    int me = cpu_id();
    if (me == 0)
        saved = set_mode_exact(mode);
    ktest_barrier();
    int r = 0;
    for (int algo = LOCK_SPIN; algo <= LOCK_H2MCS; algo++)
        r |= run(algo, me);
    if (me == 0)
        restore_mode(saved);
    return r;
}

static int sites_on(int algo, int me)
{
    return sites_run(algo, me, 300, check_on_mode);
}

static int sites_contended(int algo, int me)
{
    return sites_run(algo, me, 50, check_contended_mode);
}

/* One CPU cannot contend: the class may name no site at all. */
static int no_sites_on_one_cpu(void)
{
    struct lockstat_site sites[LOCKSTAT_NSITES];
    KT_ASSERT_EQ(lockstat_class_sites(&test_ls_sites, LOCKSTAT_SITE_MISS, sites,
                                      LOCKSTAT_NSITES), 0);
    KT_ASSERT_EQ(lockstat_class_sites(&test_ls_sites, LOCKSTAT_SITE_HOLD, sites,
                                      LOCKSTAT_NSITES), 0);
    return 0;
}

KTEST_ALL_CPUS(lockstat_call_sites)
{
    if (ncpus_online < 2)
        return no_sites_on_one_cpu();
    return each_algo(LOCKSTAT_ON, sites_on);
}

KTEST_ALL_CPUS(lockstat_call_sites_contended_mode)
{
    if (ncpus_online < 2)
        return no_sites_on_one_cpu();
    return each_algo(LOCKSTAT_CONTENDED, sites_contended);
}

/* ---- Sampled holds ----------------------------------------------------------- */

/* With lockstat=on and the default period, one uncontended hold in a
 * period is timed and stands for the period (kern/lock/lockstat.h): the
 * hold histogram counts whole periods, within one period of the hits,
 * and the hold time is still there.  Interrupts stay off, so no other
 * lock takes a turn of this CPU's countdown. */
KTEST(lockstat_sampled_holds)
{
    static spinlock_t l;
    enum { N = 100 * LOCKSTAT_HOLD_PERIOD };
    int mode = lockstat_set_mode(LOCKSTAT_ON);
    __atomic_store_n(&lockstat_hold_period, LOCKSTAT_HOLD_PERIOD, __ATOMIC_RELAXED);
    spin_init_algo(&l, &test_ls_sampled, LOCK_SPIN);
    struct lockstat_totals t0 = totals(&test_ls_sampled);
    uint64_t f = intr_save();
    workload(&l, N, 0);
    intr_restore(f);
    struct lockstat_totals t1 = totals(&test_ls_sampled);
    spin_destroy(&l);
    lockstat_set_mode(mode);
    uint64_t counted = hist_sum(t1.hold_hist) - hist_sum(t0.hold_hist);
    KT_ASSERT_EQ(t1.hits - t0.hits, N);
    KT_ASSERT_EQ(counted % LOCKSTAT_HOLD_PERIOD, 0);
    KT_ASSERT(counted + LOCKSTAT_HOLD_PERIOD >= N && counted <= N + LOCKSTAT_HOLD_PERIOD);
    KT_ASSERT(t1.hold_cycles > t0.hold_cycles);
    return 0;
}

/* ---- Call sites per instance -------------------------------------------------- */

LOCK_CLASS(test_ls_inst, "test_ls_inst", LK_SPIN);

static spinlock_t inst_a, inst_b;
static volatile int inst_missed, inst_failed;
static int inst_mode;

/* Two locks of one class, each contended through a function of its own. */
static void __attribute__((noinline)) take_inst_a(void)
{
    spin_lock(&inst_a);
}

static void __attribute__((noinline)) take_inst_b(void)
{
    spin_lock(&inst_b);
}

/* CPU 0 holds l (taken here) for 5 ms after CPU 1 says it is about to
 * take it through take; rounds until l's own miss count grew (a host that
 * deschedules CPU 1 past the 5 ms spoils a round).  0, or -1 if no round
 * made it miss. */
static int __attribute__((noinline)) inst_forced_miss(int me, spinlock_t *l, void (*take)(void),
                                                      int *step)
{
    for (int round = 0; round < 50; round++) {
        int base = *step;
        *step += 4;
        if (me == 0) {
            spin_lock(l);
            step_to(base + 1);
            wait_step(base + 2);
            delay_us(5000);
            spin_unlock(l);
        } else {
            wait_step(base + 1);
            uint64_t before = READ_ONCE(l->inst.misses);
            step_to(base + 2);
            take();
            spin_unlock(l);
            __atomic_store_n(&inst_missed, READ_ONCE(l->inst.misses) > before, __ATOMIC_RELEASE);
            step_to(base + 3);
        }
        wait_step(base + 3);
        bool missed = __atomic_load_n(&inst_missed, __ATOMIC_ACQUIRE);
        if (me == 0)
            step_to(base + 4);
        wait_step(base + 4);
        if (missed)
            return 0;
    }
    return -1;
}

/* l's own sites of kind what: at least want of them, every one inside fn. */
static int check_own_sites(spinlock_t *l, int what, const char *fn, int want)
{
    struct lockstat_site sites[LOCKSTAT_NSITES];
    int n = lockstat_instance_sites(&l->inst, what, sites, LOCKSTAT_NSITES);
    KT_ASSERT(n >= want);
    for (int i = 0; i < n; i++)
        KT_ASSERT(site_in(sites[i].site, fn));
    return 0;
}

static int check_instance_sites(void)
{
    KT_ASSERT(!inst_failed);
    if (check_own_sites(&inst_a, LOCKSTAT_SITE_MISS, "take_inst_a", 1) ||
        check_own_sites(&inst_b, LOCKSTAT_SITE_MISS, "take_inst_b", 1) ||
        check_own_sites(&inst_a, LOCKSTAT_SITE_HOLD, "inst_forced_miss", 0) ||
        check_own_sites(&inst_b, LOCKSTAT_SITE_HOLD, "inst_forced_miss", 0))
        return 1;
    /* The class's view sums its locks: both functions are there. */
    struct lockstat_site sites[LOCKSTAT_NSITES];
    int n = lockstat_class_sites(&test_ls_inst, LOCKSTAT_SITE_MISS, sites, LOCKSTAT_NSITES);
    int a = 0, b = 0;
    for (int i = 0; i < n; i++) {
        a += site_in(sites[i].site, "take_inst_a");
        b += site_in(sites[i].site, "take_inst_b");
    }
    KT_ASSERT(a == 1 && b == 1);
    return 0;
}

/* Each reported instance names its own call sites (issue 17): two locks
 * of one class made to miss from two named functions each keep only
 * their own function, and the class has both. */
KTEST_ALL_CPUS(lockstat_instance_call_sites)
{
    if (ncpus_online < 2)
        return 0;
    int me = cpu_id();
    if (me == 0) {
        inst_mode = set_mode_exact(LOCKSTAT_CONTENDED);
        spin_init_named(&inst_a, &test_ls_inst, "inst-a");
        spin_init_named(&inst_b, &test_ls_inst, "inst-b");
        lockstat_reset();
        site_step = 0;
        inst_failed = 0;
    }
    ktest_barrier();
    int step = 0;
    if (me < 2 && (inst_forced_miss(me, &inst_a, take_inst_a, &step) ||
                   inst_forced_miss(me, &inst_b, take_inst_b, &step)))
        inst_failed = 1;
    ktest_barrier();
    int r = 0;
    if (me == 0) {
        r = check_instance_sites();
        spin_destroy(&inst_a);
        spin_destroy(&inst_b);
        restore_mode(inst_mode);
    }
    ktest_barrier();
    return r;
}
