/*
 * Callouts: a function run at a time, from the clock tick.  The theory is
 * in kern/sched/callout.c.
 */
#ifndef KERN_SCHED_CALLOUT_H
#define KERN_SCHED_CALLOUT_H

#include <kern/lib/types.h>

/* A callout belongs to its owner (a sleeping thread's stack frame, a
 * process's interval timer).  All fields are the callout code's. */
struct callout {
    struct callout *c_next;     /* [list] the pending list of CPU c_cpu */
    struct callout *c_prev;     /* [list] */
    uint64_t c_when;            /* [list] uptime_ns() at which it is due */
    void (*c_fn)(void *arg);    /* [list] run with interrupts disabled, no lock held */
    void *c_arg;                /* [list] */
    volatile int c_cpu;         /* [list] the list it is on or runs from; -1: idle */
    bool c_pending;             /* [list] on the list, not yet run */
};

/* Boot: the per-CPU lists (before the tick starts). */
void callout_init(void);
/* A timer interrupt of the calling CPU (the clock's event hook,
 * kern/arch/smp.c): run its callouts due at now; returns when the next
 * one is due (UINT64_MAX: none pending). */
uint64_t callout_expire(uint64_t now);

/* A callout that is idle (never armed). */
void callout_setup(struct callout *c);
/* Run fn(arg) once uptime_ns() >= when, from the timer interrupt of the
 * calling CPU.  An armed callout is stopped first.  fn may arm its own callout
 * again (an interval timer). */
void callout_arm(struct callout *c, uint64_t when, void (*fn)(void *), void *arg);
/* Make sure fn is neither pending nor running: waits when another CPU is
 * running it (not from inside fn itself).  True when it was pending.  The owner
 * calls this before the callout's memory goes. */
bool callout_stop(struct callout *c);

/* Statistics for tests: callouts run since boot. */
uint64_t callout_fired(void);

#endif
