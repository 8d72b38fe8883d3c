/*
 * The lock benchmark (kbench=locks; kern/lock/lockbench.c).  The kbench=
 * option's table of benchmarks is kern/tests/kbench.h.
 */
#ifndef KERN_LOCKBENCH_H
#define KERN_LOCKBENCH_H

#include <kern/lib/types.h>

/* kbench=locks: one line per lock kind (the theory in lockbench.c). */
void lockbench_locks(void);
/* kbench=lockcurve: Hurricane's Figure 5 points at this CPU count. */
void lockbench_curve(void);

/*
 * A lock kind for the lock benchmark beyond the three spin-lock algorithms
 * (the mutex code registers "mutex").  make returns a fresh, free lock;
 * lock and unlock take it.  The lock must be usable from every CPU at once
 * with interrupts off (the contended run is an smp_call_all), so a sleeping
 * lock must spin rather than block when it runs there.
 */
struct lockbench_ops {
    const char *name;
    void *(*make)(void);
    void (*lock)(void *);
    void (*unlock)(void *);
};

/* Add a kind (kept by pointer; at most 8).  Call before kbench_run. */
void lockbench_register(const struct lockbench_ops *ops);

/* Measure one kind on lock (already made) and print its line:
 *   lockbench NAME uncontended_off=CYCLES uncontended_on=CYCLES contended_ops=N */
void lockbench_measure(const char *name, void (*lock)(void *), void (*unlock)(void *), void *arg);

#endif
