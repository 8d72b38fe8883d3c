/*
 * The Tempest lock family: theory.
 *
 * Every lock in the kernel belongs to a lock class, a static
 * LOCK_CLASS(var, "name", kind) named for the data it protects.  Statistics
 * and the lock order are kept per class, not per lock, because the class is
 * what a person reasons about ("the run queue", "a DNLC row") and because
 * locks come and go with the objects they protect.  The kinds, and what
 * each is for:
 *
 * Spin locks (kern/lock/spinlock.h).  For short critical sections, and for any
 * data an interrupt handler touches.  spin_lock disables interrupts, so an
 * interrupt handler on the same CPU can never spin on a lock its own CPU
 * holds; interrupts come back when the CPU releases its last spin lock (a
 * per-CPU count, so locks may be released in any order).  The algorithm is
 * chosen at boot by lock=: TTAS with bounded exponential back-off (cheapest
 * uncontended, worst under heavy contention), MCS (waiters queue and each
 * spins on its own node, so a contended lock costs one remote write per
 * hand-off and the order is FIFO), or H2-MCS (MCS with Hurricane's two
 * changes, which bring its uncontended cost close to the TTAS lock).  All
 * three have a true TryLock, which is what interrupt-level code uses when it
 * must not wait.
 *
 * SVR4 MP mutexes (kern/lock/mutex.h).  The general-purpose lock for data that
 * threads, not interrupt handlers, share.  Recursive: the owner may take a
 * mutex again and must release it as often.  When a thread context-switches
 * every mutex it holds is released, and reacquired (in the original order)
 * before it runs again, so a mutex is never held by a thread that is not
 * running; and a thread that sleeps on a busy mutex gives up the mutexes it
 * holds first, which is what keeps two vnode locks from deadlocking.  Each
 * mutex is created to spin or to sleep when busy, and optionally
 * shared/exclusive (many readers or one writer).
 *
 * Resource locks (kern/lock/sleep.h).  For state that stays locked across
 * blocking, typically across I/O: an ILOCKED-style flag in the object,
 * protected by a mutex.  To take one, hold the mutex; while the flag is set,
 * mark "wanted" and sleep on the object's address; then set the flag and drop
 * the mutex.  Release clears the flag and wakes the waiters (wakeup=all) or
 * one of them (wakeup=one, wake1proc).
 *
 * sleep/wakeup.  A thread sleeps on a wait channel (any address); the
 * channels hash into a table of sleep queues, each under its own spin lock.
 * The hash is multiplicative (Fibonacci hashing: multiply by a 64-bit odd
 * constant, keep the top bits), so structures aligned to large powers of
 * two do not all land in queue 0, as they did with SVR4's 2^n-1 mask.  wakeup wakes every sleeper of a
 * channel; wake1proc wakes exactly one.  A sleeper must re-check its
 * condition when it wakes.
 *
 * Reader/writer locks.  Where the papers call for shared/exclusive access
 * (the mount list, for instance): many readers or one writer; waiting
 * writers hold off new readers.
 *
 * Raw locks (kern/arch/rawlock.h) are outside the family: no class, no
 * statistics, no checking.  Only the console, the panic path, early
 * allocators and the instrumentation itself (the lockstat registry and the
 * witness graph) use them.
 *
 * The rules.
 *   1. Never sleep, block or context-switch while holding a spin lock (or a
 *      spin mutex).  Spin locks keep interrupts off, so this also means
 *      nothing that waits for an interrupt.
 *   2. Interrupt handlers take only spin locks, and should use spin_trylock
 *      for locks that thread-level code may hold for long.
 *   3. A lock is released by the thread (for spin locks, the CPU) that took
 *      it.  The held-lock stack of each thread records every lock it holds
 *      with the acquiring call site; unlock searches it, so locks may be
 *      released in any order.  A lock handed across a context switch must
 *      be moved between stacks with held_move.
 *   4. Take locks in class order (below).  Two locks of the same class may
 *      be held together (a parent and child directory, two run queues while
 *      stealing) only under a rule the code states at that place, e.g.
 *      "lower address first"; witness does not check same-class pairs.
 *   5. Never take a mutex or a resource lock while holding a spin lock.
 *
 * Class order.  Outer classes first; a lock may be taken while holding any
 * lock from an earlier row.  witness=on checks the order actually used.
 *
 *   1. resource locks, held across I/O: directory renames
 *      (vfs_rename, s5_rename), inodes (s5_irwlock, then s5_ilock), the
 *      S5 free lists (s5_flock, s5_ilist), buffer busy (B_BUSY)
 *   2. sleep mutexes and rwlocks, which may block: the mount list
 *      (vfs_list), vnode, the S5 inode cache (s5_icache) and superblock
 *      (s5_fs), the S5 reaper's queue (s5_reap); later file and process
 *      tables
 *   3. spin mutexes                                              no blocking
 *   4. spin locks on caches and lists: the buffer cache (buf_single;
 *      buf_hash, buf_free, buf_elem; buf_group), the DNLC (dnlc_single;
 *      dnlc_hash, dnlc_free; dnlc_row), disk queues (blk_queue,
 *      blk_registry), page lists (page_node)
 *   5. sleep-queue buckets (sleepq), then run queues (sched_global,
 *      runq_cluster, runq_cpu): wakeup is called with anything above
 *      held, so these are innermost; stealing holds one run queue at a time
 *   6. raw locks: console, lockstat registry, witness graph      leaves
 *
 * Statistics (kern/lock/lockstat.c, DESIGN §5, Sprite's instrumentation).  A hit
 * is an acquisition.  A miss is an attempt that found the lock busy: a spin
 * lock counts at most one miss per hit (it found the lock busy, then spun
 * until it got it), while a sleep lock counts every failed attempt after a
 * wake-up, so its misses may exceed its hits.  A failed TryLock is neither
 * a hit nor a miss: the caller did not wait and did not get the lock.  Wait
 * cycles run from the first attempt that found the lock busy to the
 * acquisition; hold cycles from the acquisition to the release.  In mode
 * "on" every acquisition is counted and its hold timed (an uncontended one
 * has wait 0; its hold is sampled, one in 64 per lock, kern/lock/lockstat.h);
 * in mode "contended" only acquisitions that missed are recorded (their
 * hit, miss, wait and hold), so an acquisition that finds its lock free
 * takes exactly the path of mode "off" (issue 17: the spin locks' fast
 * path looks at the mode only after a miss, the sleeping locks test the
 * same word, lockstat_every, in both modes), and a class's hits are then
 * its acquisitions that missed.  In mode "off" an
 * acquisition pays one predictable branch (on lock_hooks) and a release one
 * (on the held entry's acquired_at, which is 0; a spin lock also reads its
 * contended byte, on the line it is about to write), and nothing else: no
 * clock, no counter.  Beyond the counts, each class names the call sites
 * of its misses and of its contended holds and keeps log2 histograms of
 * wait and hold times (lockstat.c says how, and what it costs: nothing on
 * an uncontended acquisition).  Counters are per CPU, each CPU's on its own cache line, and
 * summed when read.  The class counters include every acquisition; each
 * lock also keeps its own hits, misses and wait so the most contended
 * instances can be named, and a destroyed lock adds those into its class's
 * folded_* counts (so live instances plus folded counts account for the
 * class).
 *
 * Checking (kern/lock/witness.c, witness=on).  Every acquisition, before it is
 * pushed on the held stack, is checked against the classes already held:
 * the checker learns "A before B" edges and reports an acquisition that
 * closes a cycle, with both call sites, once per pair of classes.
 */
#include <kern/lock/lock.h>
#include <kern/lock/lockstat.h>
#include <kern/lock/witness.h>
#include <kern/lock/spinlock.h>
#include <kern/lib/options.h>
#include <kern/arch/panic.h>
#include <kern/lib/string.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/ksyms.h>

/* [boot/atomic] see lock.h; written by lockstat_set_mode and
 * witness_set_enabled with atomic operations. */
int lock_hooks;

/* Held-lock stacks for each CPU until it runs threads. */
static struct held_locks early_held[MAX_CPUS];

void lock_early_init(void)
{
    for (int i = 0; i < MAX_CPUS; i++)
        cpus[i].held = &early_held[i];
}

void lock_init(void)
{
    lockstat_set_mode(opts.lockstat);
    witness_set_enabled(opts.witness);
}

void held_overflow(struct lock_class *cls)
{
    panic("lock: more than %d locks held (taking %s)", HELD_MAX, cls ? cls->name : "?");
}

/* ASSERT_HELD's failure: the locks held go to the console first, then the
 * panic names the one missing. */
void assert_held_failed(const void *lock, const char *expr, const char *file, int line,
                        const char *fn)
{
    const struct held_locks *h = held_locks_current();
    kprintf("lock: ASSERT_HELD(%s) in %s: %d locks held\n", expr, fn, h->n);
    for (int i = 0; i < h->n; i++) {
        char site[64];
        ksym_format(site, sizeof site, h->e[i].site);
        kprintf("lock:   %s %p taken at %s\n", h->e[i].cls ? h->e[i].cls->name : "?",
                h->e[i].lock, site);
    }
    panic("ASSERT_HELD(%s) failed at %s:%d in %s: lock %p not held by cpu %d", expr, file,
          line, fn, lock, cpu_id());
}

static int held_index(struct held_locks *h, void *lock)
{
    for (int i = h->n - 1; i >= 0; i--)
        if (h->e[i].lock == lock)
            return i;
    return -1;
}

void held_remove_at(struct held_locks *h, int i)
{
    for (int j = i; j < h->n - 1; j++)
        h->e[j] = h->e[j + 1];
    h->e[h->n - 1].cls = NULL;      /* the slot left: unnamed (struct held_locks) */
    __atomic_signal_fence(__ATOMIC_RELEASE);
    h->n--;
}

/* held_pop when lock is not on top: a release out of order. */
bool held_pop_slow(struct held_locks *h, void *lock, struct held_lock *out)
{
    int i = held_index(h, lock);
    if (i < 0)
        return false;
    if (out)
        *out = h->e[i];
    held_remove_at(h, i);
    return true;
}

struct held_lock *held_find(void *lock)
{
    struct held_locks *h = held_locks_current();
    int i = held_index(h, lock);
    return i < 0 ? NULL : &h->e[i];
}

bool held_move(struct held_locks *from, struct held_locks *to, void *lock)
{
    int i = held_index(from, lock);
    if (i < 0)
        return false;
    if (to->n >= HELD_MAX)
        panic("lock: held_move overflows the target stack");
    to->e[to->n++] = from->e[i];
    held_remove_at(from, i);
    return true;
}

uintptr_t held_site_in(const struct held_locks *h, const void *lock)
{
    int n = READ_ONCE(h->n);
    for (int i = MIN(n, HELD_MAX) - 1; i >= 0; i--)
        if (READ_ONCE(h->e[i].lock) == lock)
            return READ_ONCE(h->e[i].site);
    return 0;
}
