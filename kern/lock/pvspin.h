/*
 * Paravirtual-aware spinning (kern/lock/pvspin.c has the theory):
 * pvspin=on makes a spinning waiter halt after a bounded spin, and the
 * release that frees or hands over the lock kick it with an NMI.  Queue
 * locks (MCS, H2-MCS) use the node calls; TTAS marks its lock word
 * (pvspin_wait_word); spin mutexes use the busy calls.
 */
#ifndef KERN_LOCK_PVSPIN_H
#define KERN_LOCK_PVSPIN_H

#include <kern/lib/types.h>
#include <kern/lib/options.h>

struct trapframe;
struct lock_class;

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
 * are off.  Returns with *waiting possibly still set (spin again).  The
 * halt is counted for cls (pv_halts of struct lockstat_cpu). */
void pvspin_wait(volatile uint32_t *waiting, volatile uint32_t *halted,
                 struct lock_class *cls);

/* The hand-off has cleared the waiter's flag: kick cpu if it halted
 * (counted for cls as a pv_kick). */
void pvspin_kick_if_halted(volatile uint32_t *halted, int cpu, struct lock_class *cls);

/* A waiter on lock (any lock whose waiters all watch the lock itself)
 * that has spun PVSPIN_SPINS times: note the wait in *sleepers (a byte in
 * the lock) and halt while busy(lock) held at the last look, until its
 * release kicks.  Returns with the lock possibly still busy (try again). */
void pvspin_wait_busy(const void *lock, volatile uint8_t *sleepers,
                      bool (*busy)(const void *lock), struct lock_class *cls);

/*
 * A TTAS waiter under pvspin=on (SPIN_TTAS_PV in kern/lock/spinlock.c)
 * that has spun PVSPIN_SPINS times.  Its lock word is 0 when free,
 * PVSPIN_WORD_HELD when held, PVSPIN_WORD_SLEEPERS when held with halted
 * waiters: the waiter marks the word and halts while it stays marked,
 * until the release, which exchanges the word to 0 and finds the mark,
 * kicks it (pvspin_kick_waiters).  Returns with the lock perhaps free.
 */
#define PVSPIN_WORD_HELD 1u
#define PVSPIN_WORD_SLEEPERS 2u
void pvspin_wait_word(const void *lock, volatile uint32_t *word, struct lock_class *cls);

/* Kick every CPU waiting on lock (pvspin_wait_word, pvspin_wait_busy). */
void pvspin_kick_waiters(const void *lock, struct lock_class *cls);

/* Clear *sleepers and kick every CPU waiting on lock in pvspin_wait_busy
 * (pvspin_release_busy's slow path). */
void pvspin_kick_sleepers(const void *lock, volatile uint8_t *sleepers, struct lock_class *cls);

/* After lock's release store: if *sleepers says a waiter may halt, kick
 * every CPU waiting on lock.  A fence and one load when nobody halted. */
static inline void pvspin_release_busy(const void *lock, volatile uint8_t *sleepers,
                                       struct lock_class *cls)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(sleepers, __ATOMIC_RELAXED))
        pvspin_kick_sleepers(lock, sleepers, cls);
}

/* An NMI while pvspin=on is a kick (or a stale one): if it landed between
 * the waiter's last look and its hlt, resume after the hlt.  Returns true
 * when the NMI was taken as a kick. */
bool pvspin_nmi(struct trapframe *tf);

/* Halts and kicks since boot, over every CPU. */
void pvspin_counts(uint64_t *halts, uint64_t *kicks);
/* Kicks the ticks' backstop sent (a kick the protocol lost). */
uint64_t pvspin_rescues(void);

/* With pvspin=on, print "pvspin: N halts, M kicks, R rescues" (before
 * power-off). */
void pvspin_report(void);

#endif
