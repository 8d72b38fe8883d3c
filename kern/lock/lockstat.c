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
 */
#include <kern/lock/lockstat.h>
#include <kern/lock/lock.h>
#include <kern/arch/rawlock.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/arch/cpu.h>
#include <drivers/platform/timer.h>

/* [atomic] enum lockstat_mode; set by lockstat_set_mode. */
int lockstat_mode = LOCKSTAT_OFF;

static rawlock_t registry_lock = RAWLOCK_INIT;

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

int lockstat_set_mode(int mode)
{
    int old = __atomic_exchange_n(&lockstat_mode, mode, __ATOMIC_SEQ_CST);
    if (mode != LOCKSTAT_OFF)
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
        c->instances->pprev = &li->next;
    c->instances = li;
    li->pprev = &c->instances;
}

static void unlink_locked(struct lock_instance *li)
{
    *li->pprev = li->next;
    if (li->next)
        li->next->pprev = li->pprev;
    li->next = NULL;
    li->pprev = NULL;
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
static void __attribute__((noinline)) link_lazily(struct lock_instance *li)
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

/* ---- Counting ---------------------------------------------------------- */

void lockstat_acquired_irqoff(struct lock_instance *li, uint32_t misses, uint64_t wait,
                              bool shared)
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
}

void lockstat_acquired(struct lock_instance *li, uint32_t misses, uint64_t wait_cycles)
{
    uint64_t f = intr_save();
    lockstat_acquired_irqoff(li, misses, wait_cycles, false);
    intr_restore(f);
}

void lockstat_acquired_shared(struct lock_instance *li, uint32_t misses, uint64_t wait_cycles)
{
    uint64_t f = intr_save();
    lockstat_acquired_irqoff(li, misses, wait_cycles, true);
    intr_restore(f);
}

void lockstat_released_irqoff(struct lock_instance *li, uint64_t hold_cycles)
{
    li->cls->stats[cpu_id()].hold_cycles += hold_cycles;
}

void lockstat_released(struct lock_instance *li, uint64_t hold_cycles)
{
    uint64_t f = intr_save();
    lockstat_released_irqoff(li, hold_cycles);
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

static void sum_cpus(struct lock_class *c, struct lockstat_totals *t)
{
    memset(t, 0, sizeof *t);
    for (int i = 0; i < MAX_CPUS; i++) {
        const struct lockstat_cpu *s = &c->stats[i];
        t->hits += READ_ONCE(s->hits);
        t->misses += READ_ONCE(s->misses);
        t->wait_cycles += READ_ONCE(s->wait_cycles);
        t->hold_cycles += READ_ONCE(s->hold_cycles);
        t->max_wait = MAX(t->max_wait, READ_ONCE(s->max_wait));
    }
}

void lockstat_class_totals(struct lock_class *c, struct lockstat_totals *t)
{
    sum_cpus(c, t);
    uint64_t f = rawlock_acquire_irqsave(&registry_lock);
    t->ninstances = count_instances_locked(c);
    rawlock_release_irqrestore(&registry_lock, f);
}

/* Whether a is more contended than b: more misses, then more hits. */
static bool more_contended(const struct lock_instance *a, const struct lock_instance *b)
{
    return a->misses != b->misses ? a->misses > b->misses : a->hits > b->hits;
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

static size_t snapshot_size_locked(uint32_t *nclasses, uint32_t *ninst)
{
    *nclasses = *ninst = 0;
    for_each_lock_class(c) {
        (*nclasses)++;
        *ninst += (uint32_t)MIN(count_instances_locked(c), (uint64_t)LOCKSTAT_TOPN);
    }
    return sizeof(struct lockstat_snapshot_hdr) + *nclasses * sizeof(struct lockstat_class_rec) +
           *ninst * sizeof(struct lockstat_inst_rec);
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
    r->ninstances = count_instances_locked(c);
}

static void fill_inst_rec(struct lockstat_inst_rec *r, struct lock_instance *li)
{
    memset(r, 0, sizeof *r);
    strlcpy(r->cls, li->cls->name, sizeof r->cls);
    strlcpy(r->name, li->name ? li->name : "", sizeof r->name);
    r->addr = (uint64_t)li;
    r->hits = li->hits;
    r->misses = li->misses;
    r->wait_cycles = li->wait_cycles;
}

long lockstat_snapshot(void *buf, size_t len, size_t *needed)
{
    uint32_t nclasses, ninst;
    uint64_t f = rawlock_acquire_irqsave(&registry_lock);
    size_t need = snapshot_size_locked(&nclasses, &ninst);
    if (needed)
        *needed = need;
    if (len < need || !buf) {
        rawlock_release_irqrestore(&registry_lock, f);
        return -LOCKSTAT_ENOSPC;
    }
    struct lockstat_snapshot_hdr *h = buf;
    *h = (struct lockstat_snapshot_hdr){ LOCKSTAT_VERSION, nclasses, ninst, 0, tsc_hz };
    struct lockstat_class_rec *cr = (void *)(h + 1);
    struct lockstat_inst_rec *ir = (void *)(cr + nclasses);
    for_each_lock_class(c) {
        fill_class_rec(cr++, c);
        struct lock_instance *top[LOCKSTAT_TOPN];
        int n = top_instances_locked(c, top);
        for (int i = 0; i < n; i++)
            fill_inst_rec(ir++, top[i]);
    }
    rawlock_release_irqrestore(&registry_lock, f);
    return (long)need;
}

/* ---- The console table (lockdump) -------------------------------------- */

static void dump_class(struct lock_class *c)
{
    struct lockstat_totals t;
    sum_cpus(c, &t);
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
}
