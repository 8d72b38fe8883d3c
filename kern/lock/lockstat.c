/*
 * Lock statistics (DESIGN §5; the definitions of hit, miss, wait and hold
 * are in the theory comment of kern/lock/lock.c).
 *
 * Where the counts live.  Each class has one struct lockstat_cpu per CPU,
 * on its own cache line, written only by that CPU with interrupts off, so
 * counting needs no atomic operation and no shared line (Tornado's counter
 * lesson); readers sum the lines.  Each lock also carries its own hits,
 * misses and wait in its lock_instance, updated by the lock's holder, so the
 * most contended instances of a class can be named.  The class counters
 * include every acquisition ever made (live and destroyed locks alike);
 * when a lock is destroyed its instance counts are added to the class's
 * folded_* counts, so that the live instances plus the folded counts always
 * account for the class totals.
 *
 * Locking.  registry_lock (a raw lock, interrupts off) protects every
 * class's instance list, each instance's pprev/next, and the folded counts.
 * It is a leaf: nothing else is taken under it but the console.  Reads of
 * the counters are racy by design; a reset while locks are in use may keep
 * an update that was in flight.
 *
 * Static locks (SPINLOCK_INIT) are not on their class's list until the
 * first acquisition that records statistics links them in.
 *
 * Call sites (illumos lockstat's callers, Linux lock_stat's contention and
 * contending points).  A miss names the site of the call that found the
 * lock busy, with the time it waited; and the same miss names, as a
 * contended hold, the site where the lock's holder at that moment took it,
 * with the same wait: how long holds taken there kept others waiting.  The
 * waiter finds the holder's site on the holder's held stack (a spin lock's
 * owner CPU, a mutex's or resource lock's owner thread, a reader/writer
 * lock's writer), racily and only on its waiting path, so the holder pays
 * nothing; when the holder let go before the waiter looked, or readers
 * hold the lock, the hold is counted as not named.  Each class has a small
 * open-addressed table per kind (struct lockstat_class_ext) whose key is
 * the site and the lock (instance), so that the class's sites (summed
 * over its locks) and those of each reported instance both come from it:
 * a slot is claimed by a compare-and-swap of its site (through a
 * "claiming" value while the key is stored; a recorder that meets one
 * passes on, and the readers sum slots of one key, so a rare duplicate
 * costs nothing but a slot) and counted with atomic adds, so recording
 * needs no lock and happens only after a miss; the uncontended path
 * records nothing.  A table that is full counts the event as lost (the
 * class's counts still have it).  A destroyed lock's slots stay with its
 * address, counted in the class's sites.
 *
 * Histograms.  Per class and per CPU, log2 buckets of the wait of every
 * acquisition that missed and of every hold that was timed (all of them
 * with lockstat=on, those that missed with contended).  Like the counters,
 * each CPU writes its own lines with interrupts off and readers sum them.
 * The tables and histograms take memory from the heap, so they exist only
 * after kmain hands it over (lockstat_tables_init); acquisitions before
 * that are counted in the class totals only.
 */
#include <kern/lock/lockstat.h>
#include <kern/lock/lock.h>
#include <kern/arch/rawlock.h>
#include <kern/lib/ksyms.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/arch/cpu.h>
#include <drivers/platform/timer.h>

/* [atomic] enum lockstat_mode; set by lockstat_set_mode. */
int lockstat_mode = LOCKSTAT_OFF;

/* [a] kern/lock/lockstat.h; written by lockstat_set_mode. */
uint32_t lockstat_every;

/* Sampled holds (kern/lock/lockstat.h): the period. */
uint32_t lockstat_hold_period = LOCKSTAT_HOLD_PERIOD;

static rawlock_t registry_lock = RAWLOCK_INIT;

/* One call site's counts on one lock (instance); every field [atomic]:
 * the slot is claimed by a compare-and-swap of site from 0 (free) to
 * SITE_CLAIMING, then inst and the site are stored, and it is counted with
 * atomic adds. */
struct site_slot {
    uintptr_t site;
    const struct lock_instance *inst;
    uint64_t count, cycles;
};

/* A slot's site while its claimer stores the key: others pass it by. */
#define SITE_CLAIMING ((uintptr_t)1)

/* One CPU's histograms of one class: [own] written by that CPU only, with
 * interrupts off; read racily by the snapshot. */
struct lockstat_hist {
    uint64_t wait[LOCKSTAT_NBUCKETS];
    uint64_t hold[LOCKSTAT_NBUCKETS];
} __cacheline;

/* What a class records beyond its counters, in the boot's heap memory. */
struct lockstat_class_ext {
    struct site_slot sites[2][LOCKSTAT_NSITES];  /* [atomic] by LOCKSTAT_SITE_* */
    uint64_t lost[2];                            /* [atomic] events that found it full */
    struct lockstat_hist *hist;                  /* [boot] tables_ncpus of them */
} __cacheline;

/* [boot] the CPUs that have histograms (lockstat_tables_init). */
static int tables_ncpus;

/* Locks created without a class count here. */
LOCK_CLASS(lock_class_unclassed, "unclassed", LK_SPIN);

static const char *const kind_names[] = {
    [LK_SPIN] = "spin", [LK_MUTEX_SPIN] = "mutex-spin", [LK_MUTEX_SLEEP] = "mutex-sleep",
    [LK_RWLOCK] = "rwlock", [LK_RESOURCE] = "resource",
};

static const char *kind_name(unsigned k)
{
    return k < ARRAY_SIZE(kind_names) && kind_names[k] ? kind_names[k] : "?";
}

/* lock_hooks's statistics bit sends every spin-lock acquisition to the
 * counting path; only mode on wants that.  In mode contended the spin
 * locks take their plain path and look at the mode only after a miss, so
 * an acquisition that finds the lock free costs what it costs with the
 * statistics off (issue 17). */
int lockstat_set_mode(int mode)
{
    int old = __atomic_exchange_n(&lockstat_mode, mode, __ATOMIC_SEQ_CST);
    __atomic_store_n(&lockstat_every, mode == LOCKSTAT_ON, __ATOMIC_SEQ_CST);
    if (mode == LOCKSTAT_ON)
        __atomic_or_fetch(&lock_hooks, LOCK_HOOK_STAT, __ATOMIC_SEQ_CST);
    else
        __atomic_and_fetch(&lock_hooks, ~LOCK_HOOK_STAT, __ATOMIC_SEQ_CST);
    return old;
}

/* ---- Registry ---------------------------------------------------------- */

/* Put li on its class's list.  Caller holds registry_lock. */
static void link_locked(struct lock_instance *li)
{
    struct lock_class *c = li->cls;
    li->next = c->instances;
    if (c->instances)
        WRITE_ONCE(c->instances->pprev, &li->next);
    c->instances = li;
    WRITE_ONCE(li->pprev, &c->instances);
}

static void unlink_locked(struct lock_instance *li)
{
    *li->pprev = li->next;
    if (li->next)
        WRITE_ONCE(li->next->pprev, li->pprev);
    li->next = NULL;
    WRITE_ONCE(li->pprev, NULL);
}

void lockstat_register(struct lock_instance *li, struct lock_class *cls, const char *name)
{
    li->cls = cls ? cls : &lock_class_unclassed;
    li->name = name;
    li->hits = li->misses = li->wait_cycles = 0;
    li->next = NULL;
    uint64_t f = rawlock_acquire_irqsave(&registry_lock);
    link_locked(li);
    rawlock_release_irqrestore(&registry_lock, f);
}

/* A statically initialized lock's first recorded acquisition. */
static void link_lazily(struct lock_instance *li)
{
    uint64_t f = rawlock_acquire_irqsave(&registry_lock);
    if (!li->cls)
        li->cls = &lock_class_unclassed;
    if (!li->pprev)
        link_locked(li);
    rawlock_release_irqrestore(&registry_lock, f);
}

void lockstat_unregister(struct lock_instance *li)
{
    if (!li->cls)
        return;
    uint64_t f = rawlock_acquire_irqsave(&registry_lock);
    struct lock_class *c = li->cls;
    c->folded_hits += li->hits;
    c->folded_misses += li->misses;
    c->folded_wait += li->wait_cycles;
    if (li->pprev)
        unlink_locked(li);
    rawlock_release_irqrestore(&registry_lock, f);
}

uint64_t lockstat_sampled_hit(struct lock_instance *li)
{
    if (unlikely(!READ_ONCE(li->pprev)))
        link_lazily(li);            /* (which looks again under registry_lock) */
    uint32_t period = __atomic_load_n(&lockstat_hold_period, __ATOMIC_RELAXED);
    uint64_t f = intr_save();
    li->cls->stats[cpu_id()].hits += period;
    intr_restore(f);
    return period > 1 ? rdtsc() | LOCKSTAT_SAMPLED : rdtsc() & ~LOCKSTAT_SAMPLED;
}

void lockstat_wait_begin(struct lockstat_wait *w, const struct held_locks *holder,
                         const void *lock)
{
    w->t0 = lockstat_on() ? rdtsc() : 0;
    w->holder_site = w->t0 && holder ? held_site_in(holder, lock) : 0;
}

/* ---- Counting ---------------------------------------------------------- */

/* ---- Call sites and histograms ------------------------------------------ */

size_t lockstat_tables_size(int ncpus)
{
    size_t per_class = sizeof(struct lockstat_class_ext) +
                       (size_t)ncpus * sizeof(struct lockstat_hist);
    return (size_t)(__lockclass_end - __lockclass_start) * per_class + CACHE_LINE;
}

void lockstat_tables_init(void *mem, int ncpus)
{
    char *p = (char *)ALIGN_UP((uintptr_t)mem, CACHE_LINE);
    memset(p, 0, lockstat_tables_size(ncpus) - CACHE_LINE);
    tables_ncpus = ncpus;
    for_each_lock_class(c) {
        struct lockstat_class_ext *x = (void *)p;
        p += sizeof *x;
        x->hist = (void *)p;
        p += (size_t)ncpus * sizeof(struct lockstat_hist);
        __atomic_store_n(&c->ext, x, __ATOMIC_RELEASE);
    }
}

static inline struct lockstat_class_ext *ext_of(struct lock_class *c)
{
    return __atomic_load_n(&c->ext, __ATOMIC_ACQUIRE);
}

/* This CPU's histograms of x, or NULL for a CPU beyond the tables. */
static inline struct lockstat_hist *hist_here(struct lockstat_class_ext *x)
{
    int cpu = cpu_id();
    return cpu < tables_ncpus ? &x->hist[cpu] : NULL;
}

static unsigned site_hash(uintptr_t site, const struct lock_instance *li)
{
    uint64_t k = site ^ ((uintptr_t)li >> 6);
    return (unsigned)((k * 0x9E3779B97F4A7C15ULL) >> 32) & (LOCKSTAT_NSITES - 1);
}

/* Whether slot s is (site, li)'s, claiming it if it is free. */
static bool slot_is(struct site_slot *s, uintptr_t site, const struct lock_instance *li)
{
    uintptr_t cur = __atomic_load_n(&s->site, __ATOMIC_ACQUIRE);
    if (cur == 0) {
        uintptr_t expect = 0;
        if (!__atomic_compare_exchange_n(&s->site, &expect, SITE_CLAIMING, false,
                                         __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return false;       /* another CPU claimed it first */
        __atomic_store_n(&s->inst, li, __ATOMIC_RELAXED);
        __atomic_store_n(&s->site, site, __ATOMIC_RELEASE);
        return true;
    }
    return cur == site && __atomic_load_n(&s->inst, __ATOMIC_RELAXED) == li;
}

/* Count one event of kind what at site on li, claiming a slot if new. */
static void note_site(struct lockstat_class_ext *x, int what, uintptr_t site,
                      const struct lock_instance *li, uint64_t cycles)
{
    struct site_slot *tab = x->sites[what];
    unsigned h = site_hash(site, li);
    for (unsigned i = 0; i < LOCKSTAT_NSITES; i++) {
        struct site_slot *s = &tab[(h + i) & (LOCKSTAT_NSITES - 1)];
        if (slot_is(s, site, li)) {
            __atomic_add_fetch(&s->count, 1, __ATOMIC_RELAXED);
            __atomic_add_fetch(&s->cycles, cycles, __ATOMIC_RELAXED);
            return;
        }
    }
    __atomic_add_fetch(&x->lost[what], 1, __ATOMIC_RELAXED);
}

/* A miss at site that waited wait cycles: its site and its wait bucket. */
static void note_miss(struct lock_instance *li, uintptr_t site, uint64_t wait)
{
    struct lockstat_class_ext *x = ext_of(li->cls);
    if (!x)
        return;
    note_site(x, LOCKSTAT_SITE_MISS, site, li, wait);
    struct lockstat_hist *h = hist_here(x);
    if (h)
        h->wait[lockstat_bucket(wait)]++;
}

void lockstat_contended_hold(struct lock_instance *li, uintptr_t site, uint64_t hold_cycles)
{
    struct lockstat_class_ext *x = li->cls ? ext_of(li->cls) : NULL;
    if (x && site)
        note_site(x, LOCKSTAT_SITE_HOLD, site, li, hold_cycles);
    else if (x)         /* released out of order: its site is not known */
        __atomic_add_fetch(&x->lost[LOCKSTAT_SITE_HOLD], 1, __ATOMIC_RELAXED);
}

void lockstat_acquired_irqoff(struct lock_instance *li, uint32_t misses, uint64_t wait,
                              bool shared, uintptr_t site)
{
    if (unlikely(!li->pprev))
        link_lazily(li);
    struct lockstat_cpu *s = &li->cls->stats[cpu_id()];
    s->hits++;
    s->misses += misses;
    if (wait) {
        s->wait_cycles += wait;
        if (wait > s->max_wait)
            s->max_wait = wait;
    }
    if (shared) {
        __atomic_add_fetch(&li->hits, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&li->misses, misses, __ATOMIC_RELAXED);
        __atomic_add_fetch(&li->wait_cycles, wait, __ATOMIC_RELAXED);
    } else {
        li->hits++;
        li->misses += misses;
        li->wait_cycles += wait;
    }
    if (misses)
        note_miss(li, site, wait);
}

void lockstat_acquired(struct lock_instance *li, uint32_t misses, uint64_t wait_cycles,
                       uintptr_t site)
{
    uint64_t f = intr_save();
    lockstat_acquired_irqoff(li, misses, wait_cycles, false, site);
    intr_restore(f);
}

void lockstat_acquired_shared(struct lock_instance *li, uint32_t misses, uint64_t wait_cycles,
                              uintptr_t site)
{
    uint64_t f = intr_save();
    lockstat_acquired_irqoff(li, misses, wait_cycles, true, site);
    intr_restore(f);
}

/* A sampled hold stands for the period's holds (lockstat.h, "Sampled
 * holds"); the period in force at the release is the one it was taken
 * under but for a change in between, which only the ktests make. */
void lockstat_released_irqoff(struct lock_instance *li, uint64_t acquired_at, uint64_t now)
{
    uint64_t hold = now > acquired_at ? now - acquired_at : 0;
    uint64_t weight = 1;
    if (acquired_at & LOCKSTAT_SAMPLED)
        weight = __atomic_load_n(&lockstat_hold_period, __ATOMIC_RELAXED);
    struct lock_class *c = li->cls;
    c->stats[cpu_id()].hold_cycles += hold * weight;
    struct lockstat_class_ext *x = ext_of(c);
    struct lockstat_hist *h = x ? hist_here(x) : NULL;
    if (h)
        h->hold[lockstat_bucket(hold)] += weight;
}

void lockstat_released(struct lock_instance *li, uint64_t acquired_at, uint64_t now)
{
    uint64_t f = intr_save();
    lockstat_released_irqoff(li, acquired_at, now);
    intr_restore(f);
}

/* ---- Reading and resetting --------------------------------------------- */

void lockstat_reset(void)
{
    uint64_t f = rawlock_acquire_irqsave(&registry_lock);
    for_each_lock_class(c) {
        memset(c->stats, 0, sizeof c->stats);
        c->folded_hits = c->folded_misses = c->folded_wait = 0;
        for (struct lock_instance *li = c->instances; li; li = li->next)
            li->hits = li->misses = li->wait_cycles = 0;
        struct lockstat_class_ext *x = ext_of(c);
        if (x) {
            memset(x->sites, 0, sizeof x->sites);
            memset(x->lost, 0, sizeof x->lost);
            memset(x->hist, 0, (size_t)tables_ncpus * sizeof x->hist[0]);
        }
    }
    rawlock_release_irqrestore(&registry_lock, f);
}

static uint64_t count_instances_locked(struct lock_class *c)
{
    uint64_t n = 0;
    for (struct lock_instance *li = c->instances; li; li = li->next)
        n++;
    return n;
}

/*
 * A class's hits: its live instances' and the destroyed ones' (folded).
 * An uncontended hit with lockstat=on is counted on its lock only (one
 * xadd, which also picks the sampled holds); the per-CPU counts get the
 * acquisitions that missed and the period's weight for each sampled hold,
 * an estimate for -P, so the exact class total comes from the instances.
 * Caller holds registry_lock.
 */
static uint64_t class_hits_locked(struct lock_class *c)
{
    uint64_t n = c->folded_hits;
    for (struct lock_instance *li = c->instances; li; li = li->next)
        n += READ_ONCE(li->hits);
    return n;
}

/* Caller holds registry_lock. */
static void sum_cpus(struct lock_class *c, struct lockstat_totals *t)
{
    memset(t, 0, sizeof *t);
    t->hits = class_hits_locked(c);
    for (int i = 0; i < MAX_CPUS; i++) {
        const struct lockstat_cpu *s = &c->stats[i];
        t->misses += READ_ONCE(s->misses);
        t->wait_cycles += READ_ONCE(s->wait_cycles);
        t->hold_cycles += READ_ONCE(s->hold_cycles);
        t->max_wait = MAX(t->max_wait, READ_ONCE(s->max_wait));
        t->pv_halts += READ_ONCE(s->pv_halts);
        t->pv_kicks += READ_ONCE(s->pv_kicks);
    }
}

/* The class's histograms summed over CPUs (zero before the tables exist). */
static void sum_hists(struct lock_class *c, uint64_t wait[LOCKSTAT_NBUCKETS],
                      uint64_t hold[LOCKSTAT_NBUCKETS])
{
    memset(wait, 0, LOCKSTAT_NBUCKETS * sizeof wait[0]);
    memset(hold, 0, LOCKSTAT_NBUCKETS * sizeof hold[0]);
    struct lockstat_class_ext *x = ext_of(c);
    for (int cpu = 0; x && cpu < tables_ncpus; cpu++) {
        for (int b = 0; b < LOCKSTAT_NBUCKETS; b++) {
            wait[b] += READ_ONCE(x->hist[cpu].wait[b]);
            hold[b] += READ_ONCE(x->hist[cpu].hold[b]);
        }
    }
}

/* The sites of kind what in x's table, each summed over the slots of the
 * locks it names (all of them when li is NULL, else li's alone), most
 * frequent first; returns how many. */
static int sorted_sites(struct lockstat_class_ext *x, int what, const struct lock_instance *li,
                        struct lockstat_site out[LOCKSTAT_NSITES])
{
    int n = 0;
    for (int i = 0; x && i < LOCKSTAT_NSITES; i++) {
        const struct site_slot *s = &x->sites[what][i];
        uintptr_t site = __atomic_load_n(&s->site, __ATOMIC_ACQUIRE);
        uint64_t count = READ_ONCE(s->count);
        if (site <= SITE_CLAIMING || count == 0 || (li && READ_ONCE(s->inst) != li))
            continue;
        int j = 0;
        while (j < n && out[j].site != site)
            j++;
        if (j == n)
            out[n++] = (struct lockstat_site){ site, 0, 0 };
        out[j].count += count;
        out[j].cycles += READ_ONCE(s->cycles);
    }
    for (int i = 1; i < n; i++)         /* by count, most first */
        for (int j = i; j > 0 && out[j - 1].count < out[j].count; j--) {
            struct lockstat_site t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

int lockstat_class_sites(struct lock_class *c, int what, struct lockstat_site *out, int n)
{
    struct lockstat_site all[LOCKSTAT_NSITES];
    int got = sorted_sites(ext_of(c), what, NULL, all);
    got = MIN(got, n);
    memcpy(out, all, (size_t)got * sizeof all[0]);
    return got;
}

int lockstat_instance_sites(struct lock_instance *li, int what, struct lockstat_site *out, int n)
{
    struct lockstat_site all[LOCKSTAT_NSITES];
    int got = li->cls ? sorted_sites(ext_of(li->cls), what, li, all) : 0;
    got = MIN(got, n);
    memcpy(out, all, (size_t)got * sizeof all[0]);
    return got;
}

void lockstat_class_totals(struct lock_class *c, struct lockstat_totals *t)
{
    uint64_t f = rawlock_acquire_irqsave(&registry_lock);
    sum_cpus(c, t);
    t->ninstances = count_instances_locked(c);
    rawlock_release_irqrestore(&registry_lock, f);
    sum_hists(c, t->wait_hist, t->hold_hist);
}

void lockstat_report_classes(const char *tag, bool (*wanted)(const char *name))
{
    for_each_lock_class(c) {
        if (!wanted(c->name))
            continue;
        struct lockstat_totals t;
        lockstat_class_totals(c, &t);
        if (!t.hits && !t.misses)
            continue;
        /* The ratio in parts per million, printed as a decimal fraction. */
        uint64_t ppm = t.hits ? t.misses * 1000000 / t.hits : 0;
        kprintf("%s class %s hits=%lu misses=%lu miss_ratio=0.%06lu\n",
                tag, c->name, t.hits, t.misses, ppm);
    }
}

/* Whether a is more contended than b: more misses, then more hits. */
/* The counts are the holders' (racy reads, struct lock_instance): each is
 * read once, marked, so that one comparison sees one value of it (make
 * KCSAN=1 saw them change under lockstat_snapshot). */
static bool more_contended(const struct lock_instance *a, const struct lock_instance *b)
{
    uint64_t am = READ_ONCE(a->misses), bm = READ_ONCE(b->misses);
    return am != bm ? am > bm : READ_ONCE(a->hits) > READ_ONCE(b->hits);
}

/* The (up to) LOCKSTAT_TOPN most contended instances of c into top[],
 * most contended first; returns how many.  Caller holds registry_lock. */
static int top_instances_locked(struct lock_class *c, struct lock_instance *top[LOCKSTAT_TOPN])
{
    int n = 0;
    for (struct lock_instance *li = c->instances; li; li = li->next) {
        int i = n < LOCKSTAT_TOPN ? n++ : LOCKSTAT_TOPN;
        if (i == LOCKSTAT_TOPN && !more_contended(li, top[LOCKSTAT_TOPN - 1]))
            continue;
        if (i == LOCKSTAT_TOPN)
            i = LOCKSTAT_TOPN - 1;
        while (i > 0 && more_contended(li, top[i - 1])) {
            top[i] = top[i - 1];
            i--;
        }
        top[i] = li;
    }
    return n;
}

/* What a snapshot holds; the counts of sites and per-CPU records are upper
 * bounds taken under registry_lock (sites can be added meanwhile, without
 * it; the fill stops at these counts). */
struct snap_counts {
    uint32_t nclasses, ninst, nsites, npercpu;
};

/* The site records of c's view (li NULL) or of its lock li: both kinds. */
static uint32_t count_sites(struct lockstat_class_ext *x, const struct lock_instance *li)
{
    struct lockstat_site sites[LOCKSTAT_NSITES];
    return (uint32_t)(sorted_sites(x, LOCKSTAT_SITE_MISS, li, sites) +
                      sorted_sites(x, LOCKSTAT_SITE_HOLD, li, sites));
}

static size_t snapshot_size_locked(struct snap_counts *n)
{
    *n = (struct snap_counts){ 0 };
    for_each_lock_class(c) {
        n->nclasses++;
        struct lock_instance *top[LOCKSTAT_TOPN];
        int ntop = top_instances_locked(c, top);
        n->ninst += (uint32_t)ntop;
        struct lockstat_class_ext *x = ext_of(c);
        n->nsites += count_sites(x, NULL);
        for (int i = 0; i < ntop; i++)
            n->nsites += count_sites(x, top[i]);
        for (int cpu = 0; cpu < ncpus && cpu < MAX_CPUS; cpu++)
            n->npercpu += READ_ONCE(c->stats[cpu].hits) != 0 ||
                          READ_ONCE(c->stats[cpu].misses) != 0;
    }
    return sizeof(struct lockstat_snapshot_hdr) +
           n->nclasses * sizeof(struct lockstat_class_rec) +
           n->ninst * sizeof(struct lockstat_inst_rec) +
           n->nsites * sizeof(struct lockstat_site_rec) +
           n->npercpu * sizeof(struct lockstat_cpu_rec);
}

static void fill_class_rec(struct lockstat_class_rec *r, struct lock_class *c)
{
    struct lockstat_totals t;
    sum_cpus(c, &t);
    memset(r, 0, sizeof *r);
    strlcpy(r->name, c->name, sizeof r->name);
    r->kind = c->kind;
    r->hits = t.hits;
    r->misses = t.misses;
    r->wait_cycles = t.wait_cycles;
    r->hold_cycles = t.hold_cycles;
    r->max_wait = t.max_wait;
    r->pv_halts = t.pv_halts;
    r->pv_kicks = t.pv_kicks;
    r->ninstances = count_instances_locked(c);
    sum_hists(c, r->wait_hist, r->hold_hist);
    struct lockstat_class_ext *x = ext_of(c);
    if (x) {
        r->miss_sites_lost = READ_ONCE(x->lost[LOCKSTAT_SITE_MISS]);
        r->hold_sites_lost = READ_ONCE(x->lost[LOCKSTAT_SITE_HOLD]);
    }
}

/* The counts are the holder's, read racily (struct lock_instance): each is
 * read once, marked (make KCSAN=1 saw hits change under a snapshot taken
 * by ut_fuzz's lockstat_snapshot calls). */
static void fill_inst_rec(struct lockstat_inst_rec *r, struct lock_instance *li)
{
    memset(r, 0, sizeof *r);
    strlcpy(r->cls, li->cls->name, sizeof r->cls);
    strlcpy(r->name, li->name ? li->name : "", sizeof r->name);
    r->addr = (uint64_t)li;
    r->hits = READ_ONCE(li->hits);
    r->misses = READ_ONCE(li->misses);
    r->wait_cycles = READ_ONCE(li->wait_cycles);
}

/* c's sites of kind what into r[] (those of its lock li alone when li is
 * not NULL, marked with inst, its record's index + 1), at most room of
 * them; returns how many. */
static uint32_t fill_site_recs(struct lockstat_site_rec *r, uint32_t room, struct lock_class *c,
                               int what, const struct lock_instance *li, uint32_t inst)
{
    struct lockstat_site sites[LOCKSTAT_NSITES];
    uint32_t n = (uint32_t)sorted_sites(ext_of(c), what, li, sites);
    n = MIN(n, room);
    for (uint32_t i = 0; i < n; i++) {
        memset(&r[i], 0, sizeof r[i]);
        strlcpy(r[i].cls, c->name, sizeof r[i].cls);
        r[i].what = (uint32_t)what;
        r[i].inst = inst;
        r[i].site = sites[i].site;
        r[i].count = sites[i].count;
        r[i].cycles = sites[i].cycles;
        ksym_format(r[i].sym, sizeof r[i].sym, sites[i].site);
    }
    return n;
}

/* c's counts on each CPU that used it into r[], at most room of them. */
static uint32_t fill_cpu_recs(struct lockstat_cpu_rec *r, uint32_t room, struct lock_class *c,
                              uint32_t index)
{
    uint32_t n = 0;
    for (int cpu = 0; cpu < ncpus && cpu < MAX_CPUS && n < room; cpu++) {
        const struct lockstat_cpu *s = &c->stats[cpu];
        if (READ_ONCE(s->hits) == 0 && READ_ONCE(s->misses) == 0)
            continue;
        r[n++] = (struct lockstat_cpu_rec){ index, (uint32_t)cpu, READ_ONCE(s->hits),
                                            READ_ONCE(s->misses), READ_ONCE(s->wait_cycles),
                                            READ_ONCE(s->hold_cycles) };
    }
    return n;
}

/* Where the next records go, and how many of each fit and were written. */
struct snap_cursor {
    struct lockstat_class_rec *cr;
    struct lockstat_inst_rec *ir;
    struct lockstat_site_rec *sr;
    struct snap_counts room, used;
};

/* The site records of c's view (li NULL, inst 0) or of its lock li. */
static void fill_sites_of(struct snap_cursor *k, struct lock_class *c,
                          const struct lock_instance *li, uint32_t inst)
{
    for (int what = LOCKSTAT_SITE_MISS; what <= LOCKSTAT_SITE_HOLD; what++)
        k->used.nsites += fill_site_recs(k->sr + k->used.nsites,
                                         k->room.nsites - k->used.nsites, c, what, li, inst);
}

/* A class's record, its top instances, its call sites and each top
 * instance's own. */
static void fill_class_locked(struct snap_cursor *k, struct lock_class *c)
{
    fill_class_rec(k->cr++, c);
    struct lock_instance *top[LOCKSTAT_TOPN];
    int n = MIN(top_instances_locked(c, top), (int)(k->room.ninst - k->used.ninst));
    uint32_t first = k->used.ninst;
    for (int i = 0; i < n; i++)
        fill_inst_rec(k->ir++, top[i]);
    k->used.ninst += (uint32_t)n;
    fill_sites_of(k, c, NULL, 0);
    for (int i = 0; i < n; i++)
        fill_sites_of(k, c, top[i], first + (uint32_t)i + 1);
}

long lockstat_snapshot(void *buf, size_t len, size_t *needed)
{
    struct snap_counts n;
    uint64_t f = rawlock_acquire_irqsave(&registry_lock);
    size_t need = snapshot_size_locked(&n);
    if (needed)
        *needed = need;
    if (len < need || !buf) {
        rawlock_release_irqrestore(&registry_lock, f);
        return -LOCKSTAT_ENOSPC;
    }
    struct lockstat_snapshot_hdr *h = buf;
    struct snap_cursor k = { .room = n };
    k.cr = (void *)(h + 1);
    k.ir = (void *)(k.cr + n.nclasses);
    k.sr = (void *)(k.ir + n.ninst);
    for_each_lock_class(c)
        fill_class_locked(&k, c);
    /* The per-CPU records follow the sites actually written. */
    struct lockstat_cpu_rec *pr = (void *)(k.sr + k.used.nsites);
    uint32_t index = 0;
    for_each_lock_class(c)
        k.used.npercpu += fill_cpu_recs(pr + k.used.npercpu, n.npercpu - k.used.npercpu, c,
                                        index++);
    rawlock_release_irqrestore(&registry_lock, f);
    *h = (struct lockstat_snapshot_hdr){
        .version = LOCKSTAT_VERSION, .nclasses = n.nclasses, .ninst = k.used.ninst,
        .nsites = k.used.nsites, .tsc_hz = tsc_hz, .npercpu = k.used.npercpu,
        .ncpus = (uint32_t)ncpus, .mode = (uint32_t)lockstat_mode,
    };
    return (long)((char *)(pr + k.used.npercpu) - (char *)buf);
}

/* ---- The console table (lockdump) -------------------------------------- */

static void dump_class(struct lock_class *c)
{
    struct lockstat_totals t;
    uint64_t f = rawlock_acquire_irqsave(&registry_lock);
    sum_cpus(c, &t);
    rawlock_release_irqrestore(&registry_lock, f);
    if (t.hits == 0)
        return;
    uint64_t pct = t.misses * 10000 / t.hits;     /* hundredths of a percent */
    kprintf("lockstat: %-20s %-11s %12lu %10lu %4lu.%02lu%% %14lu %11lu %14lu\n",
            c->name, kind_name(c->kind), t.hits, t.misses, pct / 100, pct % 100,
            t.wait_cycles, t.max_wait, t.hold_cycles);
}

/* The contended instances of c (misses > 0), most contended first. */
static void dump_instances(struct lock_class *c)
{
    struct lockstat_inst_rec rec[LOCKSTAT_TOPN];
    struct lock_instance *top[LOCKSTAT_TOPN];
    uint64_t f = rawlock_acquire_irqsave(&registry_lock);
    int n = top_instances_locked(c, top);
    for (int i = 0; i < n; i++)
        fill_inst_rec(&rec[i], top[i]);
    rawlock_release_irqrestore(&registry_lock, f);
    for (int i = 0; i < n && rec[i].misses > 0; i++)
        kprintf("lockstat:   %-20s %-16s %p %12lu %10lu %14lu\n", rec[i].cls,
                rec[i].name[0] ? rec[i].name : "-", (void *)rec[i].addr, rec[i].hits,
                rec[i].misses, rec[i].wait_cycles);
}

/* The top call sites of c's misses and contended holds. */
static void dump_sites(struct lock_class *c)
{
    static const char *const what_names[] = { "miss", "hold" };
    for (int what = LOCKSTAT_SITE_MISS; what <= LOCKSTAT_SITE_HOLD; what++) {
        struct lockstat_site sites[3];
        int n = lockstat_class_sites(c, what, sites, 3);
        for (int i = 0; i < n; i++) {
            char sym[64];
            ksym_format(sym, sizeof sym, sites[i].site);
            kprintf("lockstat:   %-20s %-4s %-40s %10lu %14lu\n", c->name, what_names[what], sym,
                    sites[i].count, sites[i].cycles);
        }
    }
}

void lockstat_dump(void)
{
    static const char *const mode_names[] = { "off", "on", "contended" };
    kprintf("lockstat: mode %s, tsc %lu Hz\n",
            (unsigned)lockstat_mode < 3 ? mode_names[lockstat_mode] : "?", tsc_hz);
    kprintf("lockstat: %-20s %-11s %12s %10s %8s %14s %11s %14s\n", "class", "kind", "hits",
            "misses", "miss%", "wait-cycles", "max-wait", "hold-cycles");
    for_each_lock_class(c)
        dump_class(c);
    kprintf("lockstat: most contended instances:\n");
    kprintf("lockstat:   %-20s %-16s %-18s %12s %10s %14s\n", "class", "instance", "address",
            "hits", "misses", "wait-cycles");
    for_each_lock_class(c)
        dump_instances(c);
    kprintf("lockstat: call sites (miss: where a waiter called; hold: where a holder of a "
            "lock others waited for took it):\n");
    for_each_lock_class(c)
        dump_sites(c);
}
