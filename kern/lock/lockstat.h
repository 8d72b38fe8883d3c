/*
 * Lock statistics, after Sprite's instrumentation (DESIGN §5): per class,
 * summed over its instances, the hits, misses, cycles spent waiting, hold
 * cycles and the longest wait; per instance, hits, misses and wait.  The
 * definitions (what a miss is, what contended mode measures) are in the
 * theory comment of kern/lock/lock.c.
 *
 * How a lock kind uses these hooks (kern/lock/spinlock.c is the model):
 *
 *   init:     lockstat_register(&l->inst, cls, name)
 *   acquire:  fast path as usual; if (unlikely(lock_hooks)) (witness, or
 *             lockstat=on) or after a miss take a slow path
 *             that calls witness_acquire_lock, times the wait (from the
 *             first failed attempt) when lockstat_on(), pushes
 *             acquired_at = lockstat_hold_start(missed) on the held stack
 *             and calls lockstat_acquired(&l->inst, misses, wait)
 *             and, when it missed, lockstat_contended_hold(&l->inst,
 *             holder_site, wait) with the site its holder took it at
 *   release:  pop the held entry (held_pop_at); if its acquired_at is
 *             non-zero, lockstat_released(&l->inst, acquired_at, rdtsc())
 *   destroy:  lockstat_unregister(&l->inst)
 *
 * With statistics off, and with lockstat=contended for an acquisition
 * that does not miss, that costs one test of lock_hooks (or of
 * lockstat_every) per acquisition and one of acquired_at per release.
 */
#ifndef KERN_LOCKSTAT_H
#define KERN_LOCKSTAT_H

#include <kern/lock/lock.h>
#include <kern/abi/tempest_abi.h>
#include <kern/lib/options.h>
#include <kern/arch/arch.h>
#include <kern/arch/cpu.h>

/* enum lockstat_mode (kern/lib/options.h); change it with lockstat_set_mode. */
extern int lockstat_mode;

static inline bool lockstat_on(void)
{
    return unlikely(lockstat_mode != LOCKSTAT_OFF);
}

/* 1 in mode on (every acquisition recorded), else 0: what the sleeping
 * locks test with an acquisition's misses, so that an acquisition that
 * did not miss costs the same one test with statistics off and contended
 * (set by lockstat_set_mode). */
extern uint32_t lockstat_every;

/* Set the mode (also updates lock_hooks); returns the previous mode. */
int lockstat_set_mode(int mode);

/*
 * Sampled holds.  With lockstat=on, the holds of exclusive acquisitions
 * that did not miss are timed one in lockstat_hold_period per lock: the
 * one whose hit finds the lock's own hit count a multiple of the period
 * (the count lockstat_hit_held bumps anyway, with one xadd, so choosing
 * costs a test).  Each timed one is recorded with the period as its
 * weight (its time multiplied by it, counted that many times in the hold
 * histogram, and that many hits on its CPU for -P): those are estimates
 * from a systematic sample, while the class's hits (the sum of its locks'
 * counts) stay exact, and the uncontended pair pays no TSC read and
 * touches no line but the lock's own fifteen times in sixteen (issue 17's
 * cost target).  A lock's first hit is always sampled (its count is 0),
 * which is where a statically initialized lock joins its class's list.
 * Acquisitions that missed, and shared ones, are always timed with weight
 * one, so contention is exact.  A sampled stamp is marked by its low bit
 * (one cycle of error).  lockstat_hold_period (a power of two) 1 times
 * every hold; the exact-count ktests set it.
 */
extern uint32_t lockstat_hold_period;           /* [a] a power of two */
#define LOCKSTAT_HOLD_PERIOD 64                 /* its default */
#define LOCKSTAT_SAMPLED 1ULL                   /* the stamp's mark */

/* The acquired_at to record for an acquisition not counted through
 * lockstat_hit_stamp (0: hold time not measured): one that missed in
 * either mode, any other in mode on. */
static inline uint64_t lockstat_hold_start(bool missed)
{
    if (lockstat_mode == LOCKSTAT_ON || (missed && lockstat_mode == LOCKSTAT_CONTENDED))
        return rdtsc() & ~LOCKSTAT_SAMPLED;
    return 0;
}

/*
 * Record one acquisition (a hit) with the misses that preceded it, the
 * cycles spent waiting (0 when it did not wait) and the call site of the
 * locking call (a return address; named as a miss site when misses > 0).
 * Spin locks pass at most one miss; sleep locks pass every failed attempt
 * after a wake-up.  Call it while holding the lock: the instance counts
 * are updated by the holder.  Callable with interrupts on or off.
 */
void lockstat_acquired(struct lock_instance *li, uint32_t misses, uint64_t wait_cycles,
                       uintptr_t site);
/* The same for a shared (reader) acquisition, where several holders may
 * update the instance at once: the instance counts use atomic adds. */
void lockstat_acquired_shared(struct lock_instance *li, uint32_t misses, uint64_t wait_cycles,
                              uintptr_t site);
/* The same, for callers that already run with interrupts off. */
void lockstat_acquired_irqoff(struct lock_instance *li, uint32_t misses, uint64_t wait_cycles,
                              bool shared, uintptr_t site);

/* One count by an exclusive holder, as one instruction that also returns
 * the old value (xadd without lock: an interrupt cannot split it, and
 * only the lock's holder writes the instance's counts). */
static inline uint64_t lockstat_count_one_old(uint64_t *counter)
{
    uint64_t old = 1;
    __asm__ volatile("xaddq %0, %1" : "+r"(old), "+m"(*counter));
    return old;
}

/* A sampled hit (lockstat_hit_held): links a lock not yet on its
 * class's list, counts the period's hits on this CPU and returns the
 * stamp for its held entry.  Out of line: one hit in the period pays. */
uint64_t lockstat_sampled_hit(struct lock_instance *li);

/*
 * A hit by an exclusive holder with lockstat=on (the caller checked the
 * mode): the lock's count, and its held entry e's stamp when the hit is
 * the period's sampled one ("Sampled holds" above).  In mode contended an
 * acquisition that did not miss records nothing at all (issue 17), so
 * its callers do not come here.
 */
static inline __attribute__((always_inline)) void lockstat_hit_held(struct lock_instance *li, struct held_lock *e)
{
    uint64_t n = lockstat_count_one_old(&li->hits);
    uint32_t mask = __atomic_load_n(&lockstat_hold_period, __ATOMIC_RELAXED) - 1;
    if (likely(n & mask))
        return;
    e->acquired_at = lockstat_sampled_hit(li);
}

/* The same for a caller that pushes its held entry after: the stamp. */
static inline uint64_t lockstat_hit_stamp(struct lock_instance *li)
{
    uint64_t n = lockstat_count_one_old(&li->hits);
    uint32_t mask = __atomic_load_n(&lockstat_hold_period, __ATOMIC_RELAXED) - 1;
    if (likely(n & mask))
        return 0;
    return lockstat_sampled_hit(li);
}

/* Record a hold when a lock is released: acquired_at is the stamp that
 * lockstat_hold_start gave, now the TSC at the release. */
void lockstat_released(struct lock_instance *li, uint64_t acquired_at, uint64_t now);
void lockstat_released_irqoff(struct lock_instance *li, uint64_t acquired_at, uint64_t now);
/*
 * Record whom a miss waited for: holder_site is where the lock's holder at
 * the time of the miss took it (read from the holder's held stack, 0 when
 * not found), wait_cycles how long the miss waited.  Called by the waiter
 * after it got the lock, so the holder pays nothing.
 */
void lockstat_contended_hold(struct lock_instance *li, uintptr_t holder_site,
                             uint64_t wait_cycles);

/*
 * The same steps for the locks built on mutexes (kern/lock/mutex.c,
 * kern/lock/rlock.c).  At its first miss a waiter notes the time and where
 * the holder took the lock (lockstat_wait_begin, out of line: only misses
 * pay, and the note lives in memory, not in the fast path's registers);
 * once it has the lock, lockstat_hold_begin gives its held entry's stamp
 * (and counts an exclusive hit), then lockstat_note_acquired counts any
 * other acquisition at site (w is read only when misses > 0).
 */
struct lockstat_wait {
    uint64_t t0;                /* TSC at the first miss; 0 with statistics off */
    uintptr_t holder_site;      /* where the holder took the lock; 0 if unknown */
};

/* holder: the held stack of the lock's holder, or NULL (readers hold it). */
void lockstat_wait_begin(struct lockstat_wait *w, const struct held_locks *holder,
                         const void *lock);

/*
 * The stamp of the held entry e just pushed (with acquired_at 0) for an
 * acquisition by the locks built on mutexes, before lockstat_note_acquired:
 * an exclusive hit is counted here (lockstat_hit_held, which samples its
 * hold), so that lockstat_note_acquired has nothing left to do for it.
 */
static inline void lockstat_hold_begin(struct lock_instance *li, uintptr_t site,
                                       uint32_t misses, bool shared, struct held_lock *e)
{
    if (likely(!misses)) {
        /* Off or contended: nothing, at the cost of one test in both. */
        if (likely(!__atomic_load_n(&lockstat_every, __ATOMIC_RELAXED)))
            return;
        if (!shared)
            lockstat_hit_held(li, e);
        else
            e->acquired_at = rdtsc() & ~LOCKSTAT_SAMPLED;
        return;
    }
    if (lockstat_on())
        e->acquired_at = rdtsc() & ~LOCKSTAT_SAMPLED;
}

static inline void lockstat_note_acquired(struct lock_instance *li, uint32_t misses,
                                          bool shared, uintptr_t site,
                                          const struct lockstat_wait *w)
{
    /* An exclusive hit was counted by lockstat_hold_begin (lockstat=on);
     * a shared one is counted here with lockstat=on only. */
    if (likely(!misses) && (!shared || !__atomic_load_n(&lockstat_every, __ATOMIC_RELAXED)))
        return;
    if (!lockstat_on())
        return;
    uint64_t wait = misses && w->t0 ? rdtsc() - w->t0 : 0;
    if (shared)     /* concurrent readers update the instance together */
        lockstat_acquired_shared(li, misses, wait, site);
    else
        lockstat_acquired(li, misses, wait, site);
    if (misses)
        lockstat_contended_hold(li, w->holder_site, wait);
}

static inline void lockstat_note_released(struct lock_instance *li, uint64_t acquired_at)
{
    if (unlikely(acquired_at) && lockstat_on())
        lockstat_released(li, acquired_at, rdtsc());
}

/*
 * The call-site tables and per-CPU histograms live in memory the boot
 * gives once it has a heap (kmain: lockstat_tables_size, then
 * lockstat_tables_init); until then acquisitions are counted but no site
 * or histogram is recorded.  ncpus bounds the CPUs that record.
 */
size_t lockstat_tables_size(int ncpus);
void lockstat_tables_init(void *mem, int ncpus);

/* Link an instance into its class's list (at lock init); unlink it and fold
 * its counts into the class (at destroy). */
void lockstat_register(struct lock_instance *li, struct lock_class *cls, const char *name);
void lockstat_unregister(struct lock_instance *li);

/* Zero every class, folded count, instance, site table and histogram. */
void lockstat_reset(void);

/* A class's totals, summed over CPUs (for tests and the console table). */
struct lockstat_totals {
    uint64_t hits, misses, wait_cycles, hold_cycles, max_wait;
    uint64_t pv_halts, pv_kicks;    /* pvspin=on's, kern/lock/pvspin.c */
    uint64_t ninstances;    /* live instances on the class's list */
    uint64_t wait_hist[LOCKSTAT_NBUCKETS], hold_hist[LOCKSTAT_NBUCKETS];
};
void lockstat_class_totals(struct lock_class *cls, struct lockstat_totals *t);
/* For the benchmarks: a console line "TAG class NAME hits=N misses=N
 * miss_ratio=R" for each class that wanted(NAME) and that was taken. */
void lockstat_report_classes(const char *tag, bool (*wanted)(const char *name));

/* The classes the kernel defines (LOCK_CLASS puts them in .data.lockclass). */
extern struct lock_class __lockclass_start[], __lockclass_end[];
#define for_each_lock_class(c) \
    for (struct lock_class *c = __lockclass_start; c < __lockclass_end; c++)

/* The call sites recorded of one kind (LOCKSTAT_SITE_*) for a class, for
 * tests: up to n into out[], most frequent first; returns how many. */
struct lockstat_site {
    uintptr_t site;
    uint64_t count, cycles;
};
int lockstat_class_sites(struct lock_class *cls, int what, struct lockstat_site *out, int n);
/* The same for one lock: the sites of its own misses and contended holds. */
int lockstat_instance_sites(struct lock_instance *li, int what, struct lockstat_site *out, int n);

/* The histogram bucket of a time in cycles (LOCKSTAT_NBUCKETS in the ABI). */
static inline unsigned lockstat_bucket(uint64_t cycles)
{
    if (cycles < 2)
        return 0;
    unsigned b = 63 - (unsigned)__builtin_clzll(cycles);
    return b < LOCKSTAT_NBUCKETS ? b : LOCKSTAT_NBUCKETS - 1;
}

/*
 * Snapshot for the statistics system call (the records are in
 * kern/abi/tempest_abi.h, shared with user space): a header, then nclasses class
 * records (every class, in link order, with its histograms), ninst
 * instance records (the LOCKSTAT_TOPN most-missed live instances of each
 * class, grouped by class), nsites call-site records (grouped by class:
 * the class's own, summed over its locks, misses before holds, most
 * frequent first, then each of its instance records' own, marked by the
 * record's index + 1 in inst) and npercpu per-CPU records.
 * Returns the bytes written, or -LOCKSTAT_ENOSPC with *needed set when len
 * is too small, in which case nothing is copied.
 */
#define LOCKSTAT_TOPN 4
/* Call sites kept per class and kind (a power of two), each slot one
 * site on one lock: the table is filled by first arrival, and events past
 * a full table are counted as lost, so a class with more distinct (site,
 * lock) pairs names only the first ones. */
#define LOCKSTAT_NSITES 32
#define LOCKSTAT_ENOSPC 28      /* ENOSPC */

long lockstat_snapshot(void *buf, size_t len, size_t *needed);

/* Print the per-class table and the top contended instances (lockdump). */
void lockstat_dump(void);

#endif
