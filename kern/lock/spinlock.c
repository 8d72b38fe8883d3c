/*
 * Spin locks: TTAS with back-off, MCS and H2-MCS (kern/lock/spinlock.h; the
 * theory of the lock family is at the top of kern/lock/lock.c).
 *
 * TTAS.  The lock is one word.  Acquire tries an exchange at once (the
 * uncontended case costs one atomic); when that fails it reads the word
 * until it looks free, tries again, and after each failed exchange waits an
 * exponentially growing number of pause instructions, up to BACKOFF_MAX, so
 * that a crowd of waiters does not hammer the line the holder needs.
 *
 * MCS.  The lock is a pointer to the last queue node.  Acquire (1) clears
 * its node's next pointer and (2) swaps the node into the tail; a NULL
 * predecessor means the lock was free.  Otherwise it marks its node waiting,
 * links itself behind the predecessor and spins on its own node.  Release
 * first looks for a successor; with none, it compare-and-swaps the tail
 * from its own node back to NULL, and if that fails (a successor is between
 * its swap and its link) waits for the link; then it clears the successor's
 * waiting flag, handing the lock over.
 *
 * H2-MCS (Unrau et al., "Experiences with locking in a NUMA multiprocessor
 * operating system kernel", section 3.1).  H1: step (1) moves off the
 * critical path; a free node is always kept with next == NULL, so the
 * release that used a node's next pointer resets it after the hand-off,
 * which happens only under contention.  H2: release does the
 * compare-and-swap immediately instead of first checking for a successor;
 * only when it fails (there is a successor) does it wait for the link and
 * hand over.  The uncontended pair is then one swap and one
 * compare-and-swap, with no other memory references to the node.  (The
 * original MCS release here also resets next after a hand-off, so both
 * algorithms share the invariant and one pool of nodes.)
 *
 * H2-MCS without a node when uncontended.  Choosing, claiming and freeing
 * a queue node cost the uncontended pair more than the two atomics (issue
 * 18 measured 1.19x the TTAS pair under icount), so an H2-MCS acquisition
 * first tries a compare-and-swap of the tail from NULL to the marker
 * H2MCS_NODELESS and, when that succeeds, holds the lock with no node
 * (holder's node is SPIN_NO_NODE); its release is the H2 compare-and-swap
 * of the tail from the marker back to NULL.  Only an acquisition that
 * finds the lock busy takes a node and queues as before.  A waiter whose
 * swap returns the marker has no predecessor node to link behind, so it
 * publishes its node in the lock's qhead instead; the node-less holder
 * whose compare-and-swap failed waits for qhead, clears it and hands the
 * lock to that node, exactly as a node's release hands it to next.  From
 * then on the queue is plain H2-MCS (holders that waited hold their node
 * until release), so under contention the order is FIFO and each waiter
 * spins on its own node; only the moment a waiter joins behind a free
 * lock changes.  qhead is written by one waiter per node-less hold (the
 * one whose swap replaced the marker), so it needs no lock.
 *
 * Queue nodes.  Each CPU has MCS_NODES_PER_CPU nodes, each on its own cache
 * line, and a bitmask of those in use; an acquisition takes the lowest free
 * one.  A bitmask rather than a depth counter, because nested locks may be
 * released in any order.  The nodes and the mask are touched only by their
 * CPU with interrupts off, so they need no lock.  The mask shares a 64-bit
 * word with the CPU's spin-lock depth, so taking a node and counting the
 * lock is one read-modify-write; the index of the node a holder used is
 * kept in the lock next to the owner's CPU number, so one store records
 * both (l->holder).  Those two choices keep the queue locks' bookkeeping
 * down to what the TTAS lock pays anyway.
 *
 * TryLock.  TTAS: one exchange, but only if the word reads free.  MCS:
 * compare-and-swap the tail from NULL to a node, H2-MCS from NULL to the
 * node-less marker, only if it reads NULL; a busy lock is never joined,
 * so TryLock never waits.
 *
 * Interrupts.  spin_enter saves the interrupt state and disables
 * interrupts; the state before the outermost spin lock is kept per CPU with
 * a depth count, and restored when the depth returns to 0.  That makes
 * out-of-order release safe, which a flags word saved in each lock is not.
 *
 * The uniprocessor build (make UP=1, TEMPEST_UP).  With one CPU and
 * interrupts off nothing else can run, so a spin lock needs no lock word:
 * acquire is spin_enter (interrupts masked, the depth counted), the holder
 * and the held stack; release undoes them.  No atomic instruction, no
 * queue node and no miss; lock= is accepted and means nothing.  The held
 * stack, witness= and lockstat='s hits and hold times stay, as SVR4 MP's
 * uniprocessor build kept its lock bookkeeping out of the compare but not
 * the code around it.  Taking a lock this CPU holds is a deadlock on a
 * multiprocessor and a panic here; a TryLock of it fails as it would.
 *
 * pvspin=on (kern/lock/pvspin.c).  A queued MCS or H2-MCS waiter halts
 * after PVSPIN_SPINS pauses and the hand-off kicks it with an NMI, so that
 * on a host with fewer cores than the machine has CPUs the waiters do not
 * burn the time a descheduled successor (or holder) needs.  A TTAS waiter
 * halts the same way, marking the lock word (2: held with halted
 * waiters), and the release that finds the mark kicks every halted
 * waiter.  The queue locks
 * look at it only in their slow paths (node_spin, node_hand_over).  A TTAS
 * lock made under pvspin=on has an algorithm value of its own,
 * SPIN_TTAS_PV, taken by compare-and-swap from 0 (an exchange would
 * overwrite the mark) and released by an exchange that looks for the
 * mark; a TTAS lock with
 * pvspin=off keeps LOCK_SPIN's release, which tests nothing more (under
 * icount on up the test cost cswitch 0.7%).  Acquiring, SPIN_TTAS_PV
 * shares the test that finds a static lock unresolved (lock_rare,
 * try_rare), so it costs the other algorithms nothing; RELEASE_TEST: the
 * release's "above LOCK_H2MCS" branch shares its compare with the H2-MCS
 * test, one more branch instruction in every release.
 *
 * Code shape.  spin_lock dispatches on the algorithm once and runs a path
 * inlined for it; statistics and witness live in one out-of-line function
 * reached through a single test of lock_hooks.
 */
#include <kern/lock/spinlock.h>
#include <kern/lock/lockstat.h>
#include <kern/lock/witness.h>
#include <kern/lock/pvspin.h>
#include <kern/lib/options.h>
#include <kern/arch/arch.h>
#include <kern/arch/cpu.h>
#include <kern/arch/panic.h>

#ifdef TEMPEST_UP
/* The multiprocessor paths below are compiled but unused (see the end). */
#pragma GCC diagnostic ignored "-Wunused-function"
#endif

#define BACKOFF_MIN 4           /* pause instructions after the first failed exchange */
#define BACKOFF_MAX 1024        /* ... doubling up to this bound */

/*
 * Per-CPU spin-lock state, touched only by its CPU with interrupts off
 * (the nodes' fields are also written by neighbours in a queue, see struct
 * mcs_node).  The depth/mask word and the flags share the first cache
 * line; each node has a line of its own, so a neighbour writing a node
 * never takes the line this CPU updates on every lock.
 */
struct spin_cpu {
    union {
        struct {
            uint32_t depth; /* [own] spin locks this CPU holds */
            uint32_t busy;  /* [own] bit i set while node[i] is in use */
        };
        uint64_t state;     /* [own] both, for one read-modify-write */
    };
    uint64_t flags;         /* [own] interrupt state before the outermost */
    struct mcs_node node[MCS_NODES_PER_CPU];    /* queue nodes */
} __cacheline;

#define DEPTH_ONE       1UL
#define NODE_BIT(i)     (1UL << (32 + (i)))

static struct spin_cpu spin_cpus[MAX_CPUS];

/* sc's queue node i, by pointer arithmetic from sc (one shift and an add;
 * indexing from the array's base recomputed the CPU's offset each time). */
static inline struct mcs_node *node_at(struct spin_cpu *sc, uint32_t i)
{
    _Static_assert(sizeof(struct mcs_node) == 64, "node_at's shift");
    return (struct mcs_node *)((char *)sc->node + ((uintptr_t)i << 6));
}

static const char *const algo_names[] = { "spin", "mcs", "h2mcs" };

const char *spin_algo_name(int algo)
{
    return (unsigned)algo < ARRAY_SIZE(algo_names) ? algo_names[algo] : "?";
}

static inline uint32_t holder_of(int cpu, uint32_t node)
{
    return (uint16_t)cpu | node << 16;
}

/* ---- Interrupts and per-CPU state ---------------------------------- */

static void __attribute__((noinline, noreturn)) nodes_exhausted(void)
{
    panic("spinlock: more than %d queue locks held on one cpu", MCS_NODES_PER_CPU);
}

/*
 * Disable interrupts and count one more spin lock on this CPU; with
 * queue set, also take a free queue node, whose index goes to *node
 * (SPIN_NO_NODE otherwise).  Returns this CPU's state; *cpu gets its
 * number.
 */
static inline __attribute__((always_inline))
struct spin_cpu *spin_enter(int *cpu, bool queue, uint32_t *node)
{
    uint64_t f = intr_save();
    *cpu = cpu_id();
    struct spin_cpu *sc = &spin_cpus[*cpu];
    uint64_t st = sc->state, next = st + DEPTH_ONE;
    *node = SPIN_NO_NODE;
    if (queue) {
        *node = (uint32_t)__builtin_ctz(~(uint32_t)(st >> 32));
        if (unlikely(*node >= MCS_NODES_PER_CPU))
            nodes_exhausted();
        next |= NODE_BIT(*node);        /* a bit set: one bts, not a shift and an or */
    }
    sc->state = next;
    if ((uint32_t)st == 0)
        sc->flags = f;
    return sc;
}

/* A queue node for an acquisition that spin_enter gave none (an H2-MCS
 * acquisition that found the lock busy): its index, its bit now set. */
static inline uint32_t node_take(struct spin_cpu *sc)
{
    uint32_t node = (uint32_t)__builtin_ctz(~sc->busy);
    if (unlikely(node >= MCS_NODES_PER_CPU))
        nodes_exhausted();
    sc->state |= NODE_BIT(node);
    return node;
}

/* Undo spin_enter: one spin lock fewer, the node (if queue) free again;
 * interrupts come back with the last one. */
static inline __attribute__((always_inline))
void spin_exit(struct spin_cpu *sc, bool queue, uint32_t node)
{
    uint64_t st = sc->state - DEPTH_ONE;
    if (queue)
        st &= ~NODE_BIT(node);          /* the node's bit was set: one btr */
    sc->state = st;
    if ((uint32_t)st == 0)
        intr_restore(sc->flags);
}

int spin_depth(void)
{
    uint64_t f = intr_save();
    int d = (int)spin_cpus[cpu_id()].depth;
    intr_restore(f);
    return d;
}

/*
 * Where the holder of l took it, read racily from the holding CPU's held
 * stack, for lockstat's contended holds; 0 when l looks free.  Asked by an
 * acquisition with statistics on before it tries the lock, so that the
 * waits (tas_wait, mcs_wait) call nothing: the compiler then knows they
 * keep the caller-saved registers, and the fast paths need no others.  A
 * lock freed between this look and a miss leaves its holder unnamed.
 */
static uintptr_t holder_site(spinlock_t *l)
{
    if (READ_ONCE(l->tail) == NULL)     /* free (TTAS's word shares the field) */
        return 0;
    int owner = READ_ONCE(l->owner);
    if (owner < 0 || owner >= MAX_CPUS)
        return 0;
    struct held_locks *h = READ_ONCE(cpus[owner].held);
    return h ? held_site_in(h, l) : 0;
}

/* ---- TTAS ------------------------------------------------------------ */

/* TTAS's word algorithms: LOCK_SPIN, and SPIN_TTAS_PV under pvspin=on. */
static inline bool is_ttas(int algo)
{
    return algo == LOCK_SPIN || algo == SPIN_TTAS_PV;
}

/* One attempt: an exchange, or under pvspin=on a compare-and-swap from 0,
 * which cannot overwrite a waiter's mark (PVSPIN_WORD_SLEEPERS). */
static inline bool tas_try(spinlock_t *l, int algo)
{
    if (algo == SPIN_TTAS_PV) {
        uint32_t free = 0;
        return __atomic_compare_exchange_n(&l->word, &free, PVSPIN_WORD_HELD, false,
                                           __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
    }
    return __atomic_exchange_n(&l->word, 1, __ATOMIC_ACQUIRE) == 0;
}

/* Wait for the word to look free; a SPIN_TTAS_PV lock's waiter (pvspin=on)
 * halts after PVSPIN_SPINS pauses until the release kicks. */
static inline void tas_spin(spinlock_t *l)
{
    uint32_t spins = 0;
    while (__atomic_load_n(&l->word, __ATOMIC_RELAXED)) {
        cpu_relax();
        if (unlikely(l->algo == SPIN_TTAS_PV) && ++spins >= PVSPIN_SPINS) {
            pvspin_wait_word(l, &l->word, l->inst.cls);
            spins = 0;
        }
    }
}

/* The first attempt failed: spin with back-off until the lock is ours.
 * *wait (if asked for) gets the cycles spent here. */
static void __attribute__((noinline)) tas_wait(spinlock_t *l, uint64_t *wait)
{
    uint64_t t0 = wait ? rdtsc() : 0;
    uint32_t backoff = BACKOFF_MIN;
    int algo = l->algo == SPIN_TTAS_PV ? SPIN_TTAS_PV : LOCK_SPIN;
    for (;;) {
        tas_spin(l);
        if (tas_try(l, algo))
            break;
        for (uint32_t i = 0; i < backoff; i++)
            cpu_relax();
        if (backoff < BACKOFF_MAX)
            backoff <<= 1;
    }
    if (wait)
        *wait = rdtsc() - t0;
}

/* ---- MCS and H2-MCS -------------------------------------------------- */

/* Spin on our queued node until the lock is handed to us; with pvspin=on
 * halt after PVSPIN_SPINS pauses until the hand-off kicks us. */
static inline void node_spin(spinlock_t *l, struct mcs_node *n)
{
    uint32_t spins = 0;
    while (__atomic_load_n(&n->waiting, __ATOMIC_ACQUIRE)) {
        cpu_relax();
        if (unlikely(pvspin_on) && ++spins >= PVSPIN_SPINS) {
            pvspin_wait(&n->waiting, &n->halted, l->inst.cls);
            spins = 0;
        }
    }
}

/* The CPU whose queue node n is (each CPU's nodes lie in its spin_cpus). */
static inline int node_cpu(const struct mcs_node *n)
{
    return (int)(((const char *)n - (const char *)spin_cpus) / sizeof(struct spin_cpu));
}

/* Hand the lock to succ: clear its waiting flag, and with pvspin=on kick
 * it if it halted. */
static inline void node_hand_over(spinlock_t *l, struct mcs_node *succ)
{
    __atomic_store_n(&succ->waiting, 0, __ATOMIC_RELEASE);
    if (unlikely(pvspin_on))
        pvspin_kick_if_halted(&succ->halted, node_cpu(succ), l->inst.cls);
}

/* The swap found a predecessor: queue behind it and spin on our node. */
static void __attribute__((noinline)) mcs_wait(spinlock_t *l, struct mcs_node *pred,
                                               struct mcs_node *n, uint64_t *wait)
{
    uint64_t t0 = wait ? rdtsc() : 0;
    __atomic_store_n(&n->waiting, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&pred->next, n, __ATOMIC_RELEASE);
    node_spin(l, n);
    if (wait)
        *wait = rdtsc() - t0;
}

/* MCS: enqueue n; true if the lock was free (no miss). */
static inline bool mcs_acquire(spinlock_t *l, struct mcs_node *n, uint64_t *wait)
{
    __atomic_store_n(&n->next, NULL, __ATOMIC_RELAXED);
    struct mcs_node *pred = __atomic_exchange_n(&l->tail, n, __ATOMIC_ACQ_REL);
    if (likely(pred == NULL))
        return true;
    mcs_wait(l, pred, n, wait);
    return false;
}

/* Wait for the successor to link itself behind n, then hand the lock over
 * and leave n with next == NULL for its next use (H1). */
static void __attribute__((noinline)) mcs_handoff(spinlock_t *l, struct mcs_node *n)
{
    struct mcs_node *succ;
    while ((succ = __atomic_load_n(&n->next, __ATOMIC_ACQUIRE)) == NULL)
        cpu_relax();
    __atomic_store_n(&n->next, NULL, __ATOMIC_RELAXED);
    node_hand_over(l, succ);
}

static inline bool tail_release(spinlock_t *l, struct mcs_node *n)
{
    struct mcs_node *expect = n;
    return __atomic_compare_exchange_n(&l->tail, &expect, NULL, false,
                                       __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/* Original MCS release: check for a successor before the compare-and-swap. */
static inline void mcs_release(spinlock_t *l, struct mcs_node *n)
{
    if (__atomic_load_n(&n->next, __ATOMIC_ACQUIRE) == NULL && tail_release(l, n))
        return;
    mcs_handoff(l, n);
}

/* H2: the compare-and-swap at once; a successor only on failure. */
static inline void h2mcs_release(spinlock_t *l, struct mcs_node *n)
{
    if (likely(tail_release(l, n)))
        return;
    mcs_handoff(l, n);
}

/* H2-MCS's uncontended acquisition: the tail from NULL to the marker. */
static inline bool h2_try_nodeless(spinlock_t *l)
{
    struct mcs_node *expect = NULL;
    return __atomic_compare_exchange_n(&l->tail, &expect, H2MCS_NODELESS, false,
                                       __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* The node-less attempt failed: take a node and queue it.  The swap may
 * find the lock free again (no wait); the marker means a node-less
 * holder, which finds this node in qhead; anything else is a node to link
 * behind.  Returns the node's index (a value, not through a pointer, so
 * that the fast path keeps it in a register). */
static uint32_t __attribute__((noinline)) h2_wait(spinlock_t *l, struct spin_cpu *sc,
                                                  uint64_t *wait)
{
    uint32_t node = node_take(sc);
    struct mcs_node *n = node_at(sc, node);
    struct mcs_node *pred = __atomic_exchange_n(&l->tail, n, __ATOMIC_ACQ_REL);
    if (pred == NULL)
        return node;
    uint64_t t0 = wait ? rdtsc() : 0;
    __atomic_store_n(&n->waiting, 1, __ATOMIC_RELAXED);
    if (pred == H2MCS_NODELESS)
        __atomic_store_n(&l->qhead, n, __ATOMIC_RELEASE);
    else
        __atomic_store_n(&pred->next, n, __ATOMIC_RELEASE);
    node_spin(l, n);
    if (wait)
        *wait = rdtsc() - t0;
    return node;
}

/* A node-less holder's release found a waiter: wait for it to publish
 * its node in qhead, then hand the lock over. */
static void __attribute__((noinline)) h2_handoff_nodeless(spinlock_t *l)
{
    struct mcs_node *succ;
    while ((succ = __atomic_load_n(&l->qhead, __ATOMIC_ACQUIRE)) == NULL)
        cpu_relax();
    __atomic_store_n(&l->qhead, NULL, __ATOMIC_RELAXED);
    node_hand_over(l, succ);
}

/* A node-less hold's release: the H2 compare-and-swap from the marker. */
static inline void h2_release_nodeless(spinlock_t *l)
{
    struct mcs_node *expect = H2MCS_NODELESS;
    if (likely(__atomic_compare_exchange_n(&l->tail, &expect, NULL, false,
                                           __ATOMIC_RELEASE, __ATOMIC_RELAXED)))
        return;
    h2_handoff_nodeless(l);
}

/* ---- One algorithm's lock word ---------------------------------------- */

/* Acquire l's word with algorithm algo (a constant after inlining), using
 * queue node *node of sc (MCS) or one it takes when it must wait (H2-MCS,
 * whose index it stores in *node); returns true if the first attempt found
 * it busy.  wait (may be NULL) receives the cycles spent waiting. */
static inline __attribute__((always_inline))
bool word_acquire(spinlock_t *l, int algo, struct spin_cpu *sc, uint32_t *node, uint64_t *wait)
{
    if (is_ttas(algo)) {
        if (likely(tas_try(l, algo)))
            return false;
        tas_wait(l, wait);
        return true;
    }
    if (algo == LOCK_H2MCS) {
        if (likely(h2_try_nodeless(l)))
            return false;
        *node = h2_wait(l, sc, wait);
        return true;
    }
    return !mcs_acquire(l, node_at(sc, *node), wait);
}

static inline __attribute__((always_inline))
void word_release(spinlock_t *l, int algo, struct spin_cpu *sc, uint32_t node)
{
    if (algo == LOCK_SPIN) {
        __atomic_store_n(&l->word, 0, __ATOMIC_RELEASE);
    } else if (algo == SPIN_TTAS_PV) {
        /* RELEASE_RACE: a waiter may mark the word between the load and
         * the store; the store then clears the mark unseen, and the
         * waiter's halt ends at the next tick (pvspin_rescue).  An
         * exchange would close the race at an atomic instruction per
         * release, which under TCG cost fault_indep 18% at 2 CPUs. */
        uint32_t was = __atomic_load_n(&l->word, __ATOMIC_RELAXED);
        __atomic_store_n(&l->word, 0, __ATOMIC_RELEASE);
        if (unlikely(was == PVSPIN_WORD_SLEEPERS))
            pvspin_kick_waiters(l, l->inst.cls);
    } else if (algo == LOCK_H2MCS && node == SPIN_NO_NODE)
        h2_release_nodeless(l);
    else if (algo == LOCK_H2MCS)
        h2mcs_release(l, node_at(sc, node));
    else
        mcs_release(l, node_at(sc, node));
}

/* One attempt that never waits and never joins a queue. */
static inline __attribute__((always_inline))
bool word_try(spinlock_t *l, int algo, struct spin_cpu *sc, uint32_t node)
{
    if (is_ttas(algo))
        return __atomic_load_n(&l->word, __ATOMIC_RELAXED) == 0 && tas_try(l, algo);
    if (__atomic_load_n(&l->tail, __ATOMIC_RELAXED) != NULL)
        return false;
    if (algo == LOCK_H2MCS)
        return h2_try_nodeless(l);
    struct mcs_node *n = node_at(sc, node), *expect = NULL;
    __atomic_store_n(&n->next, NULL, __ATOMIC_RELAXED);
    return __atomic_compare_exchange_n(&l->tail, &expect, n, false,
                                       __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* A statically initialized lock takes lock= at its first use.  Every CPU
 * resolves it to the same value, so the race is harmless. */
/* The value of l->algo for algorithm algo (enum lock_algo): a TTAS lock
 * is SPIN_TTAS_PV under pvspin=on. */
static uint8_t word_algo(int algo)
{
    return (uint8_t)(algo == LOCK_SPIN && pvspin_on ? SPIN_TTAS_PV : algo);
}

static void __attribute__((noinline)) algo_resolve(spinlock_t *l)
{
    uint8_t unset = SPIN_ALGO_UNSET;
    __atomic_compare_exchange_n(&l->algo, &unset, word_algo(opts.lock), false,
                                __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

int spin_algo_of(const spinlock_t *l)
{
    int algo = READ_ONCE(l->algo);
    if (algo == SPIN_ALGO_UNSET)
        return opts.lock;
    return algo == SPIN_TTAS_PV ? LOCK_SPIN : algo;
}

/* The lock's algorithm, after resolving a static lock's at its first use
 * (the rare paths: an unresolved lock, or SPIN_TTAS_PV). */
static int resolved_algo(spinlock_t *l)
{
    if (l->algo == SPIN_ALGO_UNSET)
        algo_resolve(l);
    return l->algo;
}

/* ---- Init and destroy ------------------------------------------------- */

void spin_init_algo(spinlock_t *l, struct lock_class *cls, int algo)
{
    if ((unsigned)algo > LOCK_H2MCS)
        panic("spin_init: bad algorithm %d", algo);
    l->tail = NULL;
    l->qhead = NULL;
    l->algo = word_algo(algo);
    l->holder = SPIN_HOLDER_FREE;
    lockstat_register(&l->inst, cls, NULL);
}

void spin_init(spinlock_t *l, struct lock_class *cls)
{
    spin_init_algo(l, cls, opts.lock);
}

void spin_init_named(spinlock_t *l, struct lock_class *cls, const char *name)
{
    spin_init_algo(l, cls, opts.lock);
    l->inst.name = name;
}

void spin_destroy(spinlock_t *l)
{
    if (l->owner != -1)
        panic("spin_destroy: %s is held by cpu %d", l->inst.cls->name, l->owner);
    lockstat_unregister(&l->inst);
}

/* ---- Lock -------------------------------------------------------------- */

/* The end of an acquisition that found the lock busy: the holder, the
 * held entry and, with statistics on (stat), the miss, its wait and the
 * site where the lock's holder took it. */
static void missed_finish(spinlock_t *l, int cpu, uint32_t node, uintptr_t site, bool stat,
                          uint64_t wait, uintptr_t holder)
{
    l->holder = holder_of(cpu, node);
    held_push(l, l->inst.cls, site, stat ? lockstat_hold_start(true) : 0);
    if (stat) {
        lockstat_acquired_irqoff(&l->inst, 1, wait, false, site);
        lockstat_contended_hold(&l->inst, holder, wait);
    }
}

/* Lock with witness on, or with lockstat=on after the inline attempt
 * failed (spin_enter already done). */
static void __attribute__((noinline))
lock_hooked(spinlock_t *l, int algo, struct spin_cpu *sc, int cpu, uint32_t node, uintptr_t site)
{
    witness_acquire_lock(l, l->inst.cls, site);
    int mode = lockstat_mode;
    bool stat = mode != LOCKSTAT_OFF;
    uint64_t wait = 0;
    uintptr_t holder = stat ? holder_site(l) : 0;
    bool missed;
    if (algo == LOCK_SPIN)
        missed = word_acquire(l, LOCK_SPIN, sc, &node, stat ? &wait : NULL);
    else if (algo == SPIN_TTAS_PV)
        missed = word_acquire(l, SPIN_TTAS_PV, sc, &node, stat ? &wait : NULL);
    else if (algo == LOCK_H2MCS)
        missed = word_acquire(l, LOCK_H2MCS, sc, &node, stat ? &wait : NULL);
    else
        missed = word_acquire(l, LOCK_MCS, sc, &node, stat ? &wait : NULL);
    if (likely(!missed)) {
        l->holder = holder_of(cpu, node);
        held_push(l, l->inst.cls, site, mode == LOCKSTAT_ON ? lockstat_hit_stamp(&l->inst) : 0);
        return;
    }
    missed_finish(l, cpu, node, site, stat, wait, holder);
}

/*
 * The rest of an acquisition without witness and without lockstat=on
 * whose first attempt found the lock busy (an MCS one is queued behind
 * pred already): wait, and with lockstat=contended record the miss.  Out
 * of line and to the end, so that the fast path keeps nothing live
 * across a call; the mode is looked at only here.
 */
static void __attribute__((noinline))
lock_missed(spinlock_t *l, int algo, struct spin_cpu *sc, int cpu, uint32_t node, uintptr_t site,
            struct mcs_node *pred)
{
    bool stat = lockstat_mode != LOCKSTAT_OFF;
    uint64_t wait = 0;
    uintptr_t holder = stat ? holder_site(l) : 0;
    if (is_ttas(algo))
        tas_wait(l, stat ? &wait : NULL);
    else if (algo == LOCK_H2MCS)
        node = h2_wait(l, sc, stat ? &wait : NULL);
    else
        mcs_wait(l, pred, node_at(sc, node), stat ? &wait : NULL);
    missed_finish(l, cpu, node, site, stat, wait, holder);
}

/* One attempt at l's word that joins the queue (MCS) but does not wait:
 * true if the lock is ours; *pred is MCS's predecessor otherwise. */
static inline __attribute__((always_inline))
bool word_first(spinlock_t *l, int algo, struct spin_cpu *sc, uint32_t node,
                struct mcs_node **pred)
{
    if (is_ttas(algo))
        return tas_try(l, algo);
    if (algo == LOCK_H2MCS)
        return h2_try_nodeless(l);
    struct mcs_node *n = node_at(sc, node);
    __atomic_store_n(&n->next, NULL, __ATOMIC_RELAXED);
    *pred = __atomic_exchange_n(&l->tail, n, __ATOMIC_ACQ_REL);
    return *pred == NULL;
}

/* lockstat=on's inline attempt: TTAS's exchange and H2-MCS's
 * compare-and-swap without a look first (a failure only sends the
 * acquisition to lock_hooked, which tries again); MCS's must not join the
 * queue, so it is word_try. */
static inline __attribute__((always_inline))
bool first_try(spinlock_t *l, int algo, struct spin_cpu *sc, uint32_t node)
{
    if (is_ttas(algo))
        return tas_try(l, algo);
    if (algo == LOCK_H2MCS)
        return h2_try_nodeless(l);
    return word_try(l, algo, sc, node);
}

static inline __attribute__((always_inline)) void lock_with(spinlock_t *l, int algo, uintptr_t site)
{
    int cpu;
    uint32_t node;
    struct spin_cpu *sc = spin_enter(&cpu, algo == LOCK_MCS, &node);
    if (unlikely(lock_hooks)) {
        /* lockstat=on without witness: an attempt that finds the lock
         * free is counted here, inline; only a miss pays for lock_hooked's
         * call, its holder lookup and its timing (issue 17's cost).  The
         * entry is pushed before the count, which stores its stamp, so
         * that nothing stays live across a call and the path with
         * statistics off keeps its few registers. */
        if (lock_hooks == LOCK_HOOK_STAT && first_try(l, algo, sc, node)) {
            l->holder = holder_of(cpu, node);
            lockstat_hit_held(&l->inst, held_push(l, l->inst.cls, site, 0));
            return;
        }
        lock_hooked(l, algo, sc, cpu, node, site);
        return;
    }
    /* Statistics off or contended: the same path, the mode read only
     * after a miss. */
    struct mcs_node *pred = NULL;
    if (unlikely(!word_first(l, algo, sc, node, &pred))) {
        lock_missed(l, algo, sc, cpu, node, site, pred);
        return;
    }
    l->holder = holder_of(cpu, node);
    held_push(l, l->inst.cls, site, 0);
}

/* lock_with for the lock's algorithm (a word algorithm: enum lock_algo or
 * SPIN_TTAS_PV), each branch a copy specialized for its algorithm. */
static inline __attribute__((always_inline)) void lock_by(spinlock_t *l, int algo, uintptr_t site)
{
    switch (algo) {
    case LOCK_SPIN:
        lock_with(l, LOCK_SPIN, site);
        break;
    case SPIN_TTAS_PV:
        lock_with(l, SPIN_TTAS_PV, site);
        break;
    case LOCK_H2MCS:
        lock_with(l, LOCK_H2MCS, site);
        break;
    default:
        lock_with(l, LOCK_MCS, site);
        break;
    }
}

/* An unresolved lock, or SPIN_TTAS_PV (both above LOCK_H2MCS). */
static void __attribute__((noinline)) lock_rare(spinlock_t *l, uintptr_t site)
{
    lock_by(l, resolved_algo(l), site);
}

/* The common algorithms inline, so no algorithm pays for the others.  The
 * rare values sit above LOCK_H2MCS, so their test shares its compare with
 * H2-MCS's (and the compiler drops SPIN_TTAS_PV's branch here). */
static inline __attribute__((always_inline)) void lock_dispatch(spinlock_t *l, uintptr_t site)
{
    int algo = l->algo;
    if (likely(algo == LOCK_SPIN)) {
        /* The default algorithm first, at one test. */
        lock_with(l, LOCK_SPIN, site);
        return;
    }
    if (unlikely(algo > LOCK_H2MCS)) {
        lock_rare(l, site);
        return;
    }
    lock_by(l, algo, site);
}

#ifndef TEMPEST_UP
void spin_lock_at(spinlock_t *l, uintptr_t site)
{
    lock_dispatch(l, site);
}

void spin_lock(spinlock_t *l)
{
    lock_dispatch(l, (uintptr_t)__builtin_return_address(0));
}

#endif /* !TEMPEST_UP */

/* ---- TryLock ------------------------------------------------------------ */

/* After a successful attempt: witness, holder, held stack, statistics. */
static void try_acquired(spinlock_t *l, int cpu, uint32_t node, uintptr_t site)
{
    /* Witness learns the order even from a TryLock, though a TryLock itself
     * cannot deadlock; the check runs once it has succeeded. */
    witness_acquire_lock(l, l->inst.cls, site);
    l->holder = holder_of(cpu, node);
    if (unlikely(lock_hooks & LOCK_HOOK_STAT)) {
        held_push(l, l->inst.cls, site, lockstat_hit_stamp(&l->inst));
    } else {
        held_push(l, l->inst.cls, site, 0);
    }
}

static inline __attribute__((always_inline)) bool try_with(spinlock_t *l, int algo, uintptr_t site)
{
    int cpu;
    uint32_t node;
    struct spin_cpu *sc = spin_enter(&cpu, algo == LOCK_MCS, &node);
    if (!word_try(l, algo, sc, node)) {
        spin_exit(sc, algo == LOCK_MCS, node);
        return false;
    }
    try_acquired(l, cpu, node, site);
    return true;
}

/* try_with for the lock's word algorithm, as lock_by. */
static inline __attribute__((always_inline)) bool try_by(spinlock_t *l, int algo, uintptr_t site)
{
    switch (algo) {
    case LOCK_SPIN:
        return try_with(l, LOCK_SPIN, site);
    case SPIN_TTAS_PV:
        return try_with(l, SPIN_TTAS_PV, site);
    case LOCK_H2MCS:
        return try_with(l, LOCK_H2MCS, site);
    default:
        return try_with(l, LOCK_MCS, site);
    }
}

/* An unresolved lock, or SPIN_TTAS_PV (both above LOCK_H2MCS). */
static bool __attribute__((noinline)) try_rare(spinlock_t *l, uintptr_t site)
{
    return try_by(l, resolved_algo(l), site);
}

#ifndef TEMPEST_UP
bool spin_trylock(spinlock_t *l)
{
    uintptr_t site = (uintptr_t)__builtin_return_address(0);
    int algo = l->algo;
    if (unlikely(algo > LOCK_H2MCS))
        return try_rare(l, site);
    return try_by(l, algo, site);
}

#endif /* !TEMPEST_UP */

/* ---- Unlock ------------------------------------------------------------- */

static void __attribute__((noinline, noreturn)) unlock_not_held(spinlock_t *l, int cpu)
{
    panic("spin_unlock: %s (%p) is held by cpu %d, not by cpu %d",
          l->inst.cls ? l->inst.cls->name : "?", l, l->owner, cpu);
}

/* The lock word's release, by algorithm. */
static inline __attribute__((always_inline))
void release_word(spinlock_t *l, struct spin_cpu *sc, uint32_t node)
{
    switch (l->algo) {
    case SPIN_TTAS_PV:
        word_release(l, SPIN_TTAS_PV, sc, node);
        break;
    case LOCK_SPIN:
        word_release(l, LOCK_SPIN, sc, node);
        break;
    case LOCK_H2MCS:
        word_release(l, LOCK_H2MCS, sc, node);
        break;
    default:
        word_release(l, LOCK_MCS, sc, node);
        break;
    }
}

/* release_word and spin_exit, with each algorithm's path knowing whether
 * the hold used a queue node (a TTAS hold and a node-less H2-MCS hold do
 * not), so that the common paths test nothing more. */
static inline __attribute__((always_inline))
void release_exit(spinlock_t *l, struct spin_cpu *sc, uint32_t node)
{
    int algo = l->algo;
    if (unlikely(algo > LOCK_H2MCS)) {      /* SPIN_TTAS_PV: see RELEASE_TEST */
        word_release(l, SPIN_TTAS_PV, sc, node);
        spin_exit(sc, false, node);
    } else if (algo == LOCK_H2MCS) {
        if (likely(node == SPIN_NO_NODE)) {
            h2_release_nodeless(l);
            spin_exit(sc, false, node);
        } else {
            h2mcs_release(l, node_at(sc, node));
            spin_exit(sc, true, node);
        }
    } else if (algo == LOCK_SPIN) {
        word_release(l, LOCK_SPIN, sc, node);
        spin_exit(sc, false, node);
    } else {
        word_release(l, LOCK_MCS, sc, node);
        spin_exit(sc, true, node);
    }
}

/* A release whose hold was timed.  It ends the release (spin_exit)
 * itself, so that the fast path keeps nothing live across the call. */
static void __attribute__((noinline))
release_timed(spinlock_t *l, struct spin_cpu *sc, uint32_t node, uint64_t acquired_at,
              bool queue)
{
    uint64_t now = rdtsc();
    release_word(l, sc, node);
    lockstat_released_irqoff(&l->inst, acquired_at, now);
    spin_exit(sc, queue, node);
}

#ifndef TEMPEST_UP
void spin_unlock(spinlock_t *l)
{
    int cpu = cpu_id();         /* interrupts are off: we hold a spin lock */
    uint64_t acquired_at;
    if (unlikely(l->owner != cpu) || unlikely(!held_pop_at(l, &acquired_at)))
        unlock_not_held(l, cpu);
    struct spin_cpu *sc = &spin_cpus[cpu];
    if (likely(l->algo == LOCK_SPIN) && likely(acquired_at == 0)) {
        /* The default algorithm's untimed hold first, testing nothing
         * more: every instruction here is part of the MP kernel's price
         * on one CPU (the MP-versus-UP table, bench/README.md). */
        l->holder = SPIN_HOLDER_FREE;
        word_release(l, LOCK_SPIN, sc, SPIN_NO_NODE);
        spin_exit(sc, false, SPIN_NO_NODE);
        return;
    }
    uint32_t node = l->node;
    bool queue = node != SPIN_NO_NODE;  /* MCS, and H2-MCS after a wait */
    l->holder = SPIN_HOLDER_FREE;
    if (unlikely(acquired_at != 0)) {
        release_timed(l, sc, node, acquired_at, queue);
        return;
    }
    release_exit(l, sc, node);
}

#endif /* !TEMPEST_UP */

bool spin_held(spinlock_t *l)
{
    uint64_t f = intr_save();
    bool held = READ_ONCE(l->owner) == cpu_id();
    intr_restore(f);
    return held;
}

#ifdef TEMPEST_UP
/* ---- The uniprocessor build ---------------------------------------------- */

/* The holder word of a lock this (the only) CPU holds. */
#define UP_HELD holder_of(0, SPIN_NO_NODE)

static void __attribute__((noinline, noreturn)) up_recursive(spinlock_t *l)
{
    panic("spin_lock: %s (%p) is already held by this cpu (a deadlock on a multiprocessor)",
          l->inst.cls ? l->inst.cls->name : "?", l);
}

/* An acquisition with witness or lockstat=on: the order check, and a hit
 * with its hold time. */
static void __attribute__((noinline)) up_lock_hooked(spinlock_t *l, uintptr_t site)
{
    witness_acquire_lock(l, l->inst.cls, site);
    held_push(l, l->inst.cls, site,
              lockstat_mode == LOCKSTAT_ON ? lockstat_hit_stamp(&l->inst) : 0);
}

static inline __attribute__((always_inline)) void up_lock(spinlock_t *l, uintptr_t site)
{
    int cpu;
    uint32_t node;
    spin_enter(&cpu, false, &node);
    if (unlikely(l->algo == SPIN_ALGO_UNSET))
        algo_resolve(l);        /* kept only so that lock= reads the same */
    if (unlikely(l->holder == UP_HELD))
        up_recursive(l);
    l->holder = UP_HELD;
    if (unlikely(lock_hooks)) {
        /* lockstat=on alone: the hit counted inline, as lock_with does. */
        if (lock_hooks == LOCK_HOOK_STAT) {
            lockstat_hit_held(&l->inst, held_push(l, l->inst.cls, site, 0));
            return;
        }
        up_lock_hooked(l, site);
        return;
    }
    held_push(l, l->inst.cls, site, 0);
}

void spin_lock_at(spinlock_t *l, uintptr_t site)
{
    up_lock(l, site);
}

void spin_lock(spinlock_t *l)
{
    up_lock(l, (uintptr_t)__builtin_return_address(0));
}

bool spin_trylock(spinlock_t *l)
{
    int cpu;
    uint32_t node;
    struct spin_cpu *sc = spin_enter(&cpu, false, &node);
    if (l->holder == UP_HELD) {
        spin_exit(sc, false, node);
        return false;
    }
    try_acquired(l, cpu, SPIN_NO_NODE, (uintptr_t)__builtin_return_address(0));
    return true;
}

void spin_unlock(spinlock_t *l)
{
    int cpu = cpu_id();         /* interrupts are off: we hold a spin lock */
    uint64_t acquired_at;
    if (unlikely(l->holder != UP_HELD) || unlikely(!held_pop_at(l, &acquired_at)))
        unlock_not_held(l, cpu);
    l->holder = SPIN_HOLDER_FREE;
    if (unlikely(acquired_at != 0))
        lockstat_released_irqoff(&l->inst, acquired_at, rdtsc());
    spin_exit(&spin_cpus[cpu], false, SPIN_NO_NODE);
}
#endif /* TEMPEST_UP */
