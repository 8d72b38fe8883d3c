/*
 * Paravirtual-aware spinning for the queue locks (kern/lock/pvspin.c has
 * the theory): pvspin=on makes an MCS or H2-MCS waiter halt after a
 * bounded spin, and the hand-off that passes the lock to a halted waiter
 * kick it with an NMI.
 */
#ifndef KERN_LOCK_PVSPIN_H
#define KERN_LOCK_PVSPIN_H

#include <kern/lib/types.h>
#include <kern/lib/options.h>

struct trapframe;

/* Spins a queued waiter makes before it halts (each a pause). */
#define PVSPIN_SPINS 4096

/* Whether pvspin=on.  Fixed at boot: a waiter that halts and a releaser
 * that did not look for halted waiters would lose the kick. */
#define pvspin_on (opts.pvspin)

/* With pvspin=on, take NMIs as kicks (trap_set_nmi_hook); called by kmain
 * once the options are parsed, before the other CPUs start. */
void pvspin_init(void);

/* A queued waiter that has spun PVSPIN_SPINS times on *waiting: mark
 * *halted, halt until *waiting is 0 or a kick comes, unmark.  Interrupts
 * are off.  Returns with *waiting possibly still set (spin again). */
void pvspin_wait(volatile uint32_t *waiting, volatile uint32_t *halted);

/* The hand-off has cleared the waiter's flag: kick cpu if it halted. */
void pvspin_kick_if_halted(volatile uint32_t *halted, int cpu);

/* An NMI while pvspin=on is a kick (or a stale one): if it landed between
 * the waiter's last look and its hlt, resume after the hlt.  Returns true
 * when the NMI was taken as a kick. */
bool pvspin_nmi(struct trapframe *tf);

/* Halts and kicks since boot, over every CPU. */
void pvspin_counts(uint64_t *halts, uint64_t *kicks);

/* With pvspin=on, print "pvspin: N halts, M kicks" (before power-off). */
void pvspin_report(void);

#endif
