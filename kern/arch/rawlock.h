/*
 * Raw spin locks: a bare test-and-test-and-set word with no class, no
 * statistics and no lock-order checking.  They exist for the few places
 * that must work before (or underneath) the lock family of kern/lock/lock.c:
 * the console, the panic path and the early allocators.  Everything else
 * uses the classed locks.
 */
#ifndef KERN_RAWLOCK_H
#define KERN_RAWLOCK_H

#include <kern/arch/arch.h>

typedef struct {
    volatile uint32_t locked;
} rawlock_t;

#define RAWLOCK_INIT { 0 }

static inline bool rawlock_try(rawlock_t *l)
{
    return l->locked == 0 && __atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE) == 0;
}

static inline void rawlock_acquire(rawlock_t *l)
{
    while (!rawlock_try(l))
        while (READ_ONCE(l->locked))
            cpu_relax();
}

static inline void rawlock_release(rawlock_t *l)
{
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

/* Acquire with interrupts disabled; returns the saved interrupt state. */
static inline uint64_t rawlock_acquire_irqsave(rawlock_t *l)
{
    uint64_t f = intr_save();
    rawlock_acquire(l);
    return f;
}

static inline void rawlock_release_irqrestore(rawlock_t *l, uint64_t f)
{
    rawlock_release(l);
    intr_restore(f);
}

#endif
