/*
 * The lock-order checker (witness=on).  It learns the order in which lock
 * classes are taken from the held-lock stack and reports an acquisition
 * that closes a cycle, before the cycle can deadlock.  See kern/lock/witness.c.
 *
 * Every lock kind calls witness_acquire (or witness_acquire_lock) just
 * before it pushes a new acquisition on the held stack, and only for a real
 * acquisition: not for a recursive re-entry of a mutex it already holds and
 * not for the reacquisition of the mutexes released across a context
 * switch (their order was checked when they were first taken).
 */
#ifndef KERN_WITNESS_H
#define KERN_WITNESS_H

#include <kern/lock/lock.h>

#define WITNESS_MAX_CLASSES 256

/* The checks behind the inline wrappers below. */
void witness_check(void *lock, struct lock_class *cls, uintptr_t site);

/* Check the acquisition of a lock of class cls at call site site against
 * the locks the current thread holds. */
static inline void witness_acquire(struct lock_class *cls, uintptr_t site)
{
    if (unlikely(lock_hooks & LOCK_HOOK_WITNESS))
        witness_check(NULL, cls, site);
}

/* The same, but silent when lock itself is already on the held stack (a
 * recursive acquisition is not an order problem). */
static inline void witness_acquire_lock(void *lock, struct lock_class *cls, uintptr_t site)
{
    if (unlikely(lock_hooks & LOCK_HOOK_WITNESS))
        witness_check(lock, cls, site);
}

/* Turn the checker on or off (updates lock_hooks); returns the old state. */
bool witness_set_enabled(bool on);

/* Reports printed since boot. */
uint64_t witness_reports(void);
/* The text of the last report (its call sites symbolized as function+0xOFF,
 * as lockstat names its sites and panics their backtraces) into buf,
 * NUL-terminated; returns its length ("" before any report). */
size_t witness_last_report(char *buf, size_t n);

#endif
