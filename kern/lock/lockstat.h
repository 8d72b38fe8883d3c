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
 *   acquire:  fast path as usual; if (unlikely(lock_hooks)) take a slow path
 *             that calls witness_acquire_lock, times the wait (from the
 *             first failed attempt) when lockstat_on(), pushes
 *             acquired_at = lockstat_hold_start(missed) on the held stack
 *             and calls lockstat_acquired(&l->inst, misses, wait)
 *   release:  pop the held entry (held_pop_at); if its acquired_at is
 *             non-zero, lockstat_released(&l->inst, rdtsc() - acquired_at)
 *   destroy:  lockstat_unregister(&l->inst)
 *
 * With statistics off that costs one test of lock_hooks per acquisition
 * and one of acquired_at per release.
 */
#ifndef KERN_LOCKSTAT_H
#define KERN_LOCKSTAT_H

#include <kern/lock/lock.h>
#include <kern/abi/tempest_abi.h>
#include <kern/lib/options.h>
#include <kern/arch/arch.h>

/* enum lockstat_mode (kern/lib/options.h); change it with lockstat_set_mode. */
extern int lockstat_mode;

static inline bool lockstat_on(void)
{
    return unlikely(lockstat_mode != LOCKSTAT_OFF);
}

/* Set the mode (also updates lock_hooks); returns the previous mode. */
int lockstat_set_mode(int mode);

/*
 * The acquired_at to record for an acquisition (0: hold time not measured):
 * every acquisition in mode on, only those that missed in mode contended.
 */
static inline uint64_t lockstat_hold_start(bool missed)
{
    if (lockstat_mode == LOCKSTAT_ON || (missed && lockstat_mode == LOCKSTAT_CONTENDED))
        return rdtsc();
    return 0;
}


/*
 * Record one acquisition (a hit) with the misses that preceded it and the
 * cycles spent waiting (0 when it did not wait).  Spin locks pass at most
 * one miss; sleep locks pass every failed attempt after a wake-up.  Call it
 * while holding the lock: the instance counts are updated by the holder.
 * Callable with interrupts on or off.
 */
void lockstat_acquired(struct lock_instance *li, uint32_t misses, uint64_t wait_cycles);
/* The same for a shared (reader) acquisition, where several holders may
 * update the instance at once: the instance counts use atomic adds. */
void lockstat_acquired_shared(struct lock_instance *li, uint32_t misses, uint64_t wait_cycles);
/* The same, for callers that already run with interrupts off. */
void lockstat_acquired_irqoff(struct lock_instance *li, uint32_t misses, uint64_t wait_cycles,
                              bool shared);
/* Record a hold time when a lock is released. */
void lockstat_released(struct lock_instance *li, uint64_t hold_cycles);
void lockstat_released_irqoff(struct lock_instance *li, uint64_t hold_cycles);

/*
 * The same steps for the locks built on mutexes (kern/lock/mutex.c,
 * kern/lock/rlock.c): count an acquisition whose first failed attempt was at
 * TSC t0 (ignored when misses is 0), by a shared holder or not; and a
 * release whose held entry recorded acquired_at.
 */
static inline void lockstat_note_acquired(struct lock_instance *li, uint32_t misses,
                                          uint64_t t0, bool shared)
{
    if (!lockstat_on())
        return;
    uint64_t wait = misses ? rdtsc() - t0 : 0;
    if (shared)     /* concurrent readers update the instance together */
        lockstat_acquired_shared(li, misses, wait);
    else
        lockstat_acquired(li, misses, wait);
}

static inline void lockstat_note_released(struct lock_instance *li, uint64_t acquired_at)
{
    if (lockstat_on() && acquired_at)
        lockstat_released(li, rdtsc() - acquired_at);
}

/* Link an instance into its class's list (at lock init); unlink it and fold
 * its counts into the class (at destroy). */
void lockstat_register(struct lock_instance *li, struct lock_class *cls, const char *name);
void lockstat_unregister(struct lock_instance *li);

/* Zero every class, folded count and instance. */
void lockstat_reset(void);

/* A class's totals, summed over CPUs (for tests and the console table). */
struct lockstat_totals {
    uint64_t hits, misses, wait_cycles, hold_cycles, max_wait;
    uint64_t ninstances;    /* live instances on the class's list */
};
void lockstat_class_totals(struct lock_class *cls, struct lockstat_totals *t);

/* The classes the kernel defines (LOCK_CLASS puts them in .data.lockclass). */
extern struct lock_class __lockclass_start[], __lockclass_end[];
#define for_each_lock_class(c) \
    for (struct lock_class *c = __lockclass_start; c < __lockclass_end; c++)

/*
 * Snapshot for the statistics system call (the records are in
 * kern/abi/tempest_abi.h, shared with user space): a header, then nclasses class
 * records (every class, in link order), then ninst instance records (the
 * LOCKSTAT_TOPN most-missed live instances of each class, grouped by
 * class).  Returns the bytes written, or -LOCKSTAT_ENOSPC with *needed set
 * when len is too small, in which case nothing is copied.
 */
#define LOCKSTAT_TOPN 4
#define LOCKSTAT_ENOSPC 28      /* ENOSPC */

long lockstat_snapshot(void *buf, size_t len, size_t *needed);

/* Print the per-class table and the top contended instances (lockdump). */
void lockstat_dump(void);

#endif
