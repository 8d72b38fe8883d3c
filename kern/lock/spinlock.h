/*
 * Spin locks (see the theory comment at the top of kern/lock/lock.c).
 *
 * One type, three algorithms chosen by lock= (or per lock for tests and the
 * benchmark):
 *
 *   spin   test-and-test-and-set with bounded exponential back-off
 *   mcs    Mellor-Crummey-Scott queue lock with per-CPU queue nodes
 *   h2mcs  MCS with Hurricane's two changes: queue nodes are initialized
 *          off the critical path (H1), and release does its compare-and-swap
 *          at once, without first looking for a successor (H2); and an
 *          acquisition that finds the lock free takes it without a queue
 *          node (a compare-and-swap of the tail from NULL to H2MCS_NODELESS)
 *
 * All three have a true TryLock that never waits and never enqueues.
 * spin_lock disables interrupts; spin_unlock restores them once the last
 * spin lock this CPU holds is released.  Never sleep with a spin lock held.
 *
 * Every spin lock belongs to a lock class, is pushed on the held-lock stack
 * while held, and feeds the statistics and the lock-order checker when
 * those are on.
 */
#ifndef KERN_SPINLOCK_H
#define KERN_SPINLOCK_H

#include <kern/lock/lock.h>

/* Queue nodes per CPU: how many MCS/H2-MCS locks one CPU may hold at once
 * (interrupt handlers included). */
#define MCS_NODES_PER_CPU 8

/* algo value of a statically initialized lock until its first use. */
#define SPIN_ALGO_UNSET 0xff
/* A TTAS lock under pvspin=on: acquired as LOCK_SPIN, but its release
 * looks for halted waiters to kick (kern/lock/pvspin.c).  A value of its
 * own, fixed at init, so that a TTAS release with pvspin=off tests
 * nothing; spin_algo_of reports it as LOCK_SPIN. */
#define SPIN_TTAS_PV 3

/*
 * An MCS queue node.  Each CPU owns MCS_NODES_PER_CPU of them; a node is
 * in use from the acquisition that enqueues it to the release that hands
 * the lock on.  A free node always has next == NULL and waiting == 0, which
 * is what lets H2-MCS skip initializing it when it acquires.
 */
struct mcs_node {
    struct mcs_node *next;  /* [atomic] written once by the successor; reset by the owner */
    uint32_t waiting;       /* [atomic] 1 while queued; cleared by the predecessor */
    uint32_t halted;        /* [atomic] pvspin=on: 1 while the waiter halts; written by
                               it, read by the predecessor's hand-off (kern/lock/pvspin.c) */
} __cacheline;

/* h2mcs's tail while a holder that took the lock free holds it and no one
 * waits: a node-less hold (kern/lock/spinlock.c, "H2-MCS"). */
#define H2MCS_NODELESS ((struct mcs_node *)1)

typedef struct spinlock {
    union {
        uint32_t word;          /* spin: 0 free, 1 held; SPIN_TTAS_PV also 2, held with
                                   halted waiters (kern/lock/pvspin.c) [atomic] */
        struct mcs_node *tail;  /* mcs, h2mcs: last node queued, NULL when free,
                                   H2MCS_NODELESS for a node-less hold [atomic] */
    };
    /* h2mcs: the first waiter behind a node-less holder, which has no node
     * for it to link to; written by that waiter, cleared by the holder's
     * hand-off [atomic]. */
    struct mcs_node *qhead;
    uint8_t algo;               /* enum lock_algo or SPIN_TTAS_PV; fixed at init or
                                   first use */
    union {
        struct {
            int16_t owner;      /* [holder] CPU holding the lock, -1 when free */
            uint8_t node;       /* [holder] index of the holder's queue node on that CPU,
                                   SPIN_NO_NODE for a hold without one */
            uint8_t reserved;
        };
        uint32_t holder;        /* [holder] owner and node, written together */
    };
    struct lock_instance inst;  /* class and per-instance statistics */
} spinlock_t;

#define SPIN_NO_NODE 0xffu           /* node of a hold that uses no queue node */
#define SPIN_HOLDER_FREE 0xffffu    /* holder of a free lock: owner -1, node 0 */

/*
 * Static initializer, usable before lock_init.  The algorithm is taken from
 * lock= at the lock's first use; the instance is linked into its class's
 * list the first time statistics are recorded for it.
 */
#define SPINLOCK_INIT(c) \
    { .word = 0, .algo = SPIN_ALGO_UNSET, .holder = SPIN_HOLDER_FREE, .inst = { .cls = (c) } }

void spin_init(spinlock_t *l, struct lock_class *cls);     /* algorithm from lock= */
void spin_init_named(spinlock_t *l, struct lock_class *cls, const char *name);
void spin_init_algo(spinlock_t *l, struct lock_class *cls, int algo);
/* Fold the lock's counts into its class and unlink it.  Must be free. */
void spin_destroy(spinlock_t *l);

void spin_lock(spinlock_t *l);
/* The same with an explicit call site, for wrappers (site is what witness
 * and the held stack record). */
void spin_lock_at(spinlock_t *l, uintptr_t site);
/* One attempt: true with the lock held, false at once if it is busy. */
bool spin_trylock(spinlock_t *l);
void spin_unlock(spinlock_t *l);
/* Whether this CPU holds l. */
bool spin_held(spinlock_t *l);

/* Name of an algorithm ("spin", "mcs", "h2mcs"). */
const char *spin_algo_name(int algo);
/* The lock's algorithm as lock= names it (enum lock_algo). */
int spin_algo_of(const spinlock_t *l);

/* Spin locks this CPU holds (for assertions such as "may sleep here"). */
int spin_depth(void);

#endif
