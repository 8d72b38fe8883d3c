/*
 * The Tempest lock family: classes, statistics hooks, and the held-lock
 * stack shared by every kind of lock.  The theory comment for the whole
 * family (what each kind is for, the rules, and the class order) is at the
 * top of kern/lock/lock.c.
 *
 *   kern/lock/spinlock.h  spin locks: TTAS with back-off, MCS, H2-MCS (lock=)
 *   kern/lock/mutex.h     SVR4 MP mutexes: recursive, released across context
 *                    switches, spin or sleep, optionally shared/exclusive
 *   kern/lock/sleep.h     sleep/wakeup on hashed wait channels, wake1proc,
 *                    resource locks, reader/writer locks
 *   kern/lock/lockstat.h  Sprite-style statistics per class (DESIGN §5)
 *   kern/lock/witness.h   the lock-order checker (witness=on)
 */
#ifndef KERN_LOCK_H
#define KERN_LOCK_H

#include <kern/lib/types.h>
#include <kern/arch/cpu.h>

enum lock_kind {
    LK_SPIN,            /* spin lock (any algorithm) */
    LK_MUTEX_SPIN,      /* SVR4 mutex that spins when busy */
    LK_MUTEX_SLEEP,     /* SVR4 mutex that sleeps when busy */
    LK_RWLOCK,          /* reader/writer lock */
    LK_RESOURCE,        /* resource lock (flag + mutex, held across blocking) */
};

/* Per-CPU statistics of one class, on its own cache line. */
struct lockstat_cpu {
    uint64_t hits;          /* acquisitions */
    uint64_t misses;        /* attempts that found the lock busy */
    uint64_t wait_cycles;   /* TSC cycles spent waiting */
    uint64_t hold_cycles;   /* TSC cycles held */
    uint64_t max_wait;      /* longest single wait, cycles */
    /* pvspin=on (kern/lock/pvspin.c), counted whatever lockstat= says:
     * halts this CPU made waiting for a lock of the class, and kicks it
     * sent handing one over to a halted waiter. */
    uint64_t pv_halts;
    uint64_t pv_kicks;
} __cacheline;

#define LOCK_CLASS_NAME_MAX 32

/*
 * A lock class: every lock belongs to one, named for the data it protects
 * ("page_node", "runq", "dnlc_row", ...).  Statistics and lock order are
 * kept per class.  Classes are defined statically with LOCK_CLASS() and
 * never freed.  The order rank documents the intended acquisition order
 * (lower ranks first); witness checks the order actually used.
 */
struct lock_class {
    const char *name;
    enum lock_kind kind;
    int id;                             /* [boot] index for witness; assigned at first use */
    struct lockstat_cpu stats[MAX_CPUS];    /* [own] each CPU writes its own line */
    /* Counts folded in from destroyed lock instances (under the class's
     * instance-list lock in kern/lock/lockstat.c). */
    uint64_t folded_hits, folded_misses, folded_wait;
    /* The live instances, for the per-instance "most contended" report. */
    struct lock_instance *instances;    /* under lockstat's registry lock */
    /* Call sites and histograms (kern/lock/lockstat.c): [boot] set once by
     * lockstat_tables_init, NULL before, when nothing is recorded. */
    struct lockstat_class_ext *ext;
};

#define LOCK_CLASS(var, cname, ckind) \
    struct lock_class var __attribute__((section(".data.lockclass"), aligned(64))) = \
        { .name = cname, .kind = ckind, .id = -1 }

/* Per-instance statistics, embedded in every lock. */
struct lock_instance {
    struct lock_class *cls;
    uint64_t hits, misses, wait_cycles; /* updated by the holder, racy reads */
    struct lock_instance *next;         /* class instance list */
    const char *name;                   /* optional instance name, may be NULL */
    /* The link pointing at this instance in cls->instances, or NULL when
     * not on the list (lockstat's registry lock).  Also read without it
     * (READ_ONCE) by the holder's lockstat_sampled_hit, which asks only
     * whether it is NULL: a linked instance's pprev changes, when another
     * instance is linked in front of it, from one non-NULL value to
     * another (written WRITE_ONCE; KCSAN's campaign saw the pair). */
    struct lock_instance **pprev;
};

/*
 * The held-lock stack: the locks the current thread holds, in acquisition
 * order, with the call site of each acquisition (for witness reports and
 * for SVR4 mutex release/reacquire across context switches).
 */
#define HELD_MAX 24

struct held_lock {
    void *lock;
    struct lock_class *cls;
    uintptr_t site;         /* return address of the acquiring call */
    uint64_t acquired_at;   /* TSC at acquisition (0 if not measured) */
    uint32_t flags;         /* HELD_* */
};

#define HELD_SHARED 0x1     /* held in shared mode (mutexes, rwlocks) */
#define HELD_KEEP   0x2     /* stays held across context switches (resource
                               locks, rwlocks); mutexes are released */

/*
 * An interrupt handler shares the stack of the thread it interrupts
 * (this_cpu()->held): it pushes and pops its spin locks there, LIFO, and
 * witness reads the entries below n.  Mutexes and rlocks push and pop
 * with interrupts on, so a handler may run between any two of their
 * stores.  Two rules keep it from seeing an entry that is not a held
 * lock: every slot at or above n has cls NULL (each pop clears the slot
 * it leaves), and a push names its entry (cls) last, so a slot the count
 * already covers but that is not filled yet reads as unnamed, which every
 * reader skips.  Before these rules a handler could meet the class left
 * in that slot by an earlier spin lock (runq_cpu, say) and witness
 * reported orders nobody took (issue 34's KCSAN soak: the hooks between
 * a mutex's stores widened the window).
 */
struct held_locks {
    int n;
    struct held_lock e[HELD_MAX];   /* cls NULL at and above n */
};

/* The current thread's held stack (or the CPU's before threads exist):
 * struct cpu keeps a pointer to it, switched with the thread. */
static inline struct held_locks *held_locks_current(void)
{
    return this_cpu()->held;
}


/* Does the current thread hold a lock kept across sleeps (a resource or
 * reader/writer lock)?  Code that would wait for another such lock in no
 * fixed order asks this first (kern/s5/s5_inode.c, s5_inactive). */
static inline bool held_any_kept(void)
{
    const struct held_locks *h = held_locks_current();
    for (int i = 0; i < h->n; i++)
        if (h->e[i].flags & HELD_KEEP)
            return true;
    return false;
}

/*
 * Held-stack helpers and boot set-up (kern/lock/lock.c), shared by every kind
 * of lock.  held_push panics when the stack is full; held_pop searches from
 * the top, so a lock released out of order is removed from the middle.
 */
void held_overflow(struct lock_class *cls) __attribute__((noreturn));
bool held_pop_slow(struct held_locks *h, void *lock, struct held_lock *out);

static inline __attribute__((always_inline))
struct held_lock *held_push(void *lock, struct lock_class *cls, uintptr_t site,
                            uint64_t acquired_at)
{
    struct held_locks *h = held_locks_current();
    int n = h->n;
    if (unlikely(n >= HELD_MAX))
        held_overflow(cls);
    struct held_lock *e = &h->e[n];
    h->n = n + 1;
    e->lock = lock;
    e->site = site;
    e->acquired_at = acquired_at;
    e->flags = 0;
    __atomic_signal_fence(__ATOMIC_RELEASE);
    e->cls = cls;                   /* last: see struct held_locks */
    return e;
}

/* held_push with HELD_* flags (shared holds, locks kept across switches). */
static inline void held_push_flags(void *lock, struct lock_class *cls, uintptr_t site,
                                   uint64_t acquired_at, uint32_t flags)
{
    held_push(lock, cls, site, acquired_at)->flags = flags;
}

/* Remove lock from the current stack; its entry is copied to *out (may be
 * NULL).  False if the current thread does not hold it. */
static inline bool held_pop(void *lock, struct held_lock *out)
{
    struct held_locks *h = held_locks_current();
    int i = h->n - 1;
    if (unlikely(i < 0 || h->e[i].lock != lock))
        return held_pop_slow(h, lock, out);
    if (out)
        *out = h->e[i];
    h->e[i].cls = NULL;
    __atomic_signal_fence(__ATOMIC_RELEASE);
    h->n = i;
    return true;
}

/* held_pop for a release that wants only the acquisition time. */
static inline bool held_pop_at(void *lock, uint64_t *acquired_at)
{
    struct held_locks *h = held_locks_current();
    int i = h->n - 1;
    if (likely(i >= 0 && h->e[i].lock == lock)) {
        *acquired_at = h->e[i].acquired_at;
        h->e[i].cls = NULL;
        __atomic_signal_fence(__ATOMIC_RELEASE);
        h->n = i;
        return true;
    }
    struct held_lock e;
    if (!held_pop_slow(h, lock, &e))
        return false;
    *acquired_at = e.acquired_at;
    return true;
}

/*
 * The call site at which the thread whose held stack is h took lock, or 0
 * when lock is not on it.  Another thread's stack may be read, racily: the
 * lock statistics ask a lock's holder's stack where it took the lock that
 * made them wait (kern/lock/lockstat.c), and a wrong or missing answer
 * there costs only one attribution.
 */
uintptr_t held_site_in(const struct held_locks *h, const void *lock);

/* The current stack's entry for lock, or NULL. */
struct held_lock *held_find(void *lock);
/* Remove entry i of stack h, keeping the order of the others. */
void held_remove_at(struct held_locks *h, int i);
/* Move lock's entry from one stack to another (a lock that one thread
 * takes and another releases, e.g. across a context switch). */
bool held_move(struct held_locks *from, struct held_locks *to, void *lock);

/*
 * lock_hooks says whether every acquisition is instrumented:
 * LOCK_HOOK_STAT while lockstat_mode is on (not contended, which records
 * only misses, found on the miss path), LOCK_HOOK_WITNESS while the
 * checker is on.  Lock fast paths test it once: if (unlikely(lock_hooks))
 * take the slow, instrumented path.  Written only by lockstat_set_mode/witness_set_enabled.
 */
#define LOCK_HOOK_STAT      1
#define LOCK_HOOK_WITNESS   2
extern int lock_hooks;

/*
 * ASSERT_HELD(lock): a field assertion.  The current thread (or, before
 * threads, the CPU) holds lock, in any mode, as its held-lock stack says;
 * put at the accessor of a field whose comment names lock, so that a
 * caller without it is caught at the access, not at the crash.  Checked
 * while the lock-order checker runs (witness=on) and always in a KCSAN=1
 * kernel; otherwise it costs one test of lock_hooks.  A failure is a
 * kernel bug: it panics naming the lock expression, its address, the
 * site and the locks held (docs/kcsan.md).
 */
void assert_held_failed(const void *lock, const char *expr, const char *file, int line,
                        const char *fn) __attribute__((noreturn));

#ifdef TEMPEST_KCSAN
#define ASSERT_HELD_CHECKED() true
#else
#define ASSERT_HELD_CHECKED() unlikely(lock_hooks & LOCK_HOOK_WITNESS)
#endif

#define ASSERT_HELD(lock)                                                       \
    do {                                                                        \
        if (ASSERT_HELD_CHECKED() && !held_find((void *)(lock)))                \
            assert_held_failed((lock), #lock, __FILE__, __LINE__, __func__);    \
    } while (0)

/* Boot, right after cpu_early_init and before the first lock: every CPU
 * records its held locks on a stack of its own until it runs threads. */
void lock_early_init(void);
/* Boot: read lock=, lockstat= and witness= (after options_parse). */
void lock_init(void);

#endif
