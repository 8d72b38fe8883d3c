/*
 * SVR4 MP mutexes (see kern/lock/mutex.h for the model, kern/lock/lock.c for the
 * family's rules and class order).
 *
 * Implementation.  Each mutex has a raw interlock (ilk) guarding owner,
 * readers and the waiter counts; it is held only for a few instructions
 * and never across a sleep, spin or call out.  A busy sleep mutex puts the
 * caller on the sleep queue of the mutex's address (taking the queue's
 * lock before dropping ilk, so an exit between the two cannot miss it) and
 * sleeps; the context switch releases every other mutex the caller holds
 * (mutex_release_all) and takes them back before the caller continues
 * (mutex_reacquire_all), in the order they were first taken.  Exit wakes
 * one waiter (wake1proc), or all of them for a shared-capable mutex whose
 * waiters may all be readers.  A busy spin mutex's caller spins until it
 * looks free; with pvspin=on it halts after a bounded spin, counted in
 * the waiter count so that exit's wake test kicks it (halt_for,
 * kern/lock/pvspin.c).
 *
 * Statistics (kern/lock/lockstat.c): a hit per top-level acquisition (recursive
 * entries are not acquisitions; reacquisitions after a switch are).  A spin
 * mutex counts at most one miss per hit; a sleep mutex counts every failed
 * attempt, including each one after a wake-up, so its misses may exceed
 * its hits (Sprite's monitor-lock rule).
 */
#include <kern/lock/mutex.h>
#include <kern/lock/sleep.h>
#include <kern/lock/lockstat.h>
#include <kern/lock/witness.h>
#include <kern/lock/pvspin.h>
#include <kern/sched/thread.h>
#include <kern/sched/sched.h>
#include <kern/arch/arch.h>
#include <kern/lib/string.h>
#include <kern/arch/panic.h>

static bool is_mutex(const struct lock_class *c)
{
    return c->kind == LK_MUTEX_SPIN || c->kind == LK_MUTEX_SLEEP;
}

void mutex_init(struct mutex *m, struct lock_class *cls, unsigned flags, const char *name)
{
    memset(m, 0, sizeof *m);
    m->flags = flags;
    lockstat_register(&m->inst, cls, name);
}

void mutex_destroy(struct mutex *m)
{
    if (m->owner || m->readers)
        panic("mutex_destroy: %s is held", m->inst.cls->name);
    lockstat_unregister(&m->inst);
}

/* ---- the held stack (helpers in kern/lock/lock.c) ---- */

/* The uncontended pair's helpers are inlined into enter and exit: five
 * calls' prologues and epilogues were a fifth of the pair (issue 18). */
static inline __attribute__((always_inline))
void push_held(struct mutex *m, uintptr_t site, uint32_t misses, uint32_t flags)
{
    struct held_lock *e = held_push(m, m->inst.cls, site, 0);
    e->flags = flags;
    lockstat_hold_begin(&m->inst, site, misses, flags & HELD_SHARED, e);
}

/* ---- waiting ---- */

/*
 * The wait channel of a mutex is its waiter count, not its address: a
 * structure whose first member is a mutex has the mutex's address, and a
 * thread sleeping on that structure must not take the mutex's wake1proc
 * (the mutex's real waiter would then sleep on with nobody to wake it).
 */
static const void *mutex_chan(const struct mutex *m)
{
    return &m->waiters;
}

/* Under ilk, or (busy_for_exclusive) a waiter's lockless peek that the
 * interlock then re-checks: hence the marked reads. */
static bool free_for_exclusive(const struct mutex *m)
{
    return READ_ONCE(m->owner) == NULL && READ_ONCE(m->readers) == 0;
}

static bool busy_for_exclusive(const void *m)
{
    return !free_for_exclusive(m);
}

static bool busy_for_shared(const void *m)
{
    return READ_ONCE(((const struct mutex *)m)->owner) != NULL;
}

/* A spin mutex's waiter under pvspin=on that has spun PVSPIN_SPINS times:
 * counted in m->waiters, so that the release, which tests the count
 * anyway, goes to wake_waiters and kicks it; then halted until the kick
 * (or, since a spin mutex's waiter keeps interrupts on, an interrupt; the
 * kernel does not preempt, so the waiter stays on its CPU). */
static void halt_for(struct mutex *m, bool (*busy)(const void *))
{
    rawlock_acquire(&m->ilk);
    m->waiters++;
    rawlock_release(&m->ilk);
    pvspin_wait_busy(m, &m->pv_sleepers, busy, m->inst.cls);
    rawlock_acquire(&m->ilk);
    m->waiters--;
    rawlock_release(&m->ilk);
}

/* A spin mutex's wait, ilk released: spin until m looks free. */
static void spin_until_free(struct mutex *m, bool exclusive)
{
    bool (*busy)(const void *) = exclusive ? busy_for_exclusive : busy_for_shared;
    uint32_t spins = 0;
    while (busy(m)) {
        cpu_relax();
        if (unlikely(pvspin_on) && ++spins >= PVSPIN_SPINS) {
            halt_for(m, busy);
            spins = 0;
        }
    }
}

/* Called with ilk held; returns with it released, after the mutex looked
 * free (spin) or after a wake-up (sleep). */
static void wait_busy(struct mutex *m, bool exclusive)
{
    if (m->flags & MUTEX_SPIN) {
        rawlock_release(&m->ilk);
        spin_until_free(m, exclusive);
        return;
    }
    struct sleepq *sq = sleepq_lock(mutex_chan(m));
    m->waiters++;
    rawlock_release(&m->ilk);
    sleep_locked(sq, mutex_chan(m));
    rawlock_acquire(&m->ilk);
    m->waiters--;
    rawlock_release(&m->ilk);
}

static void wake_waiters(struct mutex *m)
{
    if (m->flags & MUTEX_SPIN)              /* halted spinners (halt_for) */
        pvspin_release_busy(m, &m->pv_sleepers, m->inst.cls);
    else if (m->flags & MUTEX_SHARED)
        wakeup(mutex_chan(m));
    else
        wake1proc(mutex_chan(m));
}

static uint32_t counted_misses(const struct mutex *m, uint32_t misses)
{
    return (m->flags & MUTEX_SPIN) && misses > 1 ? 1 : misses;
}

static inline __attribute__((always_inline))
void account(struct mutex *m, uint32_t misses, bool shared, uintptr_t site,
             const struct lockstat_wait *w)
{
    /* An exclusive acquisition that did not miss is never recorded here
     * (push_held counted it with lockstat=on): one test, before
     * counted_misses, so that it computes nothing (issue 17). */
    if (likely(!misses && !shared))
        return;
    lockstat_note_acquired(&m->inst, counted_misses(m, misses), shared, site, w);
}

/* At the first miss (ilk held, so the owner stays): the time, and the
 * exclusive owner's held stack for where it took m (none when shared
 * holders made us wait). */
static void wait_begin(struct mutex *m, struct lockstat_wait *w)
{
    lockstat_wait_begin(w, m->owner ? &m->owner->held : NULL, m);
}

/* ---- exclusive ---- */

/* check_order: false when reacquiring after a context switch, whose order
 * witness checked when the mutex was first taken (kern/lock/witness.h). */
static void enter_exclusive(struct mutex *m, uintptr_t site, bool check_order)
{
    struct thread *me = curthread();
    uint32_t misses = 0;
    struct lockstat_wait w;
    if (check_order)
        witness_acquire_lock(m, m->inst.cls, site);
    rawlock_acquire(&m->ilk);
    while (!free_for_exclusive(m)) {
        if (misses++ == 0) {
            wait_begin(m, &w);
            m->writers_waiting++;
        }
        wait_busy(m, true);
        rawlock_acquire(&m->ilk);
    }
    if (misses)
        m->writers_waiting--;
    WRITE_ONCE(m->owner, me);
    m->depth = 1;
    rawlock_release(&m->ilk);
    push_held(m, site, misses, 0);
    account(m, misses, false, site, &w);
}

void mutex_enter(struct mutex *m)
{
    if (READ_ONCE(m->owner) == curthread()) {
        m->depth++;
        return;
    }
    enter_exclusive(m, (uintptr_t)__builtin_return_address(0), true);
}

bool mutex_tryenter(struct mutex *m)
{
    struct thread *me = curthread();
    if (READ_ONCE(m->owner) == me) {
        m->depth++;
        return true;
    }
    rawlock_acquire(&m->ilk);
    bool got = free_for_exclusive(m);
    if (got) {
        WRITE_ONCE(m->owner, me);
        m->depth = 1;
    }
    rawlock_release(&m->ilk);
    if (got) {
        uintptr_t site = (uintptr_t)__builtin_return_address(0);
        push_held(m, site, 0, 0);
        account(m, 0, false, site, NULL);
    }
    return got;
}

/* ---- shared ---- */

static void enter_shared(struct mutex *m, uintptr_t site, bool already_reader)
{
    uint32_t misses = 0;
    struct lockstat_wait w;
    if (!already_reader)    /* a re-entry or a reacquisition was checked before */
        witness_acquire_lock(m, m->inst.cls, site);
    rawlock_acquire(&m->ilk);
    /* A thread that already reads may read again past waiting writers;
     * otherwise it would wait for a writer that waits for it. */
    while (m->owner != NULL || (m->writers_waiting && !already_reader)) {
        if (misses++ == 0)
            wait_begin(m, &w);
        wait_busy(m, false);
        rawlock_acquire(&m->ilk);
    }
    m->readers++;
    rawlock_release(&m->ilk);
    push_held(m, site, misses, HELD_SHARED);
    account(m, misses, true, site, &w);
}

void mutex_enter_shared(struct mutex *m)
{
    struct thread *me = curthread();
    if (!(m->flags & MUTEX_SHARED))
        panic("mutex_enter_shared: %s is not a shared mutex", m->inst.cls->name);
    if (READ_ONCE(m->owner) == me) {
        m->depth++;             /* exclusive holders just nest */
        return;
    }
    bool reader = held_find(m) != NULL;
    enter_shared(m, (uintptr_t)__builtin_return_address(0), reader);
}

/* ---- release ---- */

/* Drop the mutex held by entry e (already removed from the held stack). */
static inline __attribute__((always_inline))
void release_entry(struct mutex *m, const struct held_lock *e)
{
    bool wake;
    rawlock_acquire(&m->ilk);
    if (e->flags & HELD_SHARED) {
        m->readers--;
        wake = m->readers == 0 && m->waiters;
    } else {
        WRITE_ONCE(m->owner, NULL);
        m->depth = 0;
        wake = m->waiters != 0;
    }
    rawlock_release(&m->ilk);
    lockstat_note_released(&m->inst, e->acquired_at);
    if (wake)
        wake_waiters(m);
}

void mutex_exit(struct mutex *m)
{
    struct thread *me = curthread();
    if (READ_ONCE(m->owner) == me && m->depth > 1) {
        m->depth--;
        return;
    }
    struct held_lock e;
    if (!held_pop(m, &e))
        panic("mutex_exit: %s is not held by %s", m->inst.cls->name, me->name);
    release_entry(m, &e);
}

bool mutex_owned(const struct mutex *m)
{
    return READ_ONCE(m->owner) == curthread();
}

uint32_t mutex_depth(const struct mutex *m)
{
    return mutex_owned(m) ? m->depth : 0;
}

/* ---- across a context switch (called by sched_block) ---- */

void mutex_release_all(struct mutex_saved *sv)
{
    struct held_locks *h = &curthread()->held;
    sv->n = 0;
    for (int i = 0; i < h->n;) {
        if (!is_mutex(h->e[i].cls)) {
            i++;
            continue;
        }
        struct mutex *m = h->e[i].lock;
        bool shared = h->e[i].flags & HELD_SHARED;
        sv->e[sv->n].m = m;
        sv->e[sv->n].shared = shared;
        sv->e[sv->n].depth = shared ? 1 : m->depth;
        sv->e[sv->n].site = h->e[i].site;
        sv->n++;
        struct held_lock e = h->e[i];
        held_remove_at(h, i);
        release_entry(m, &e);
    }
}

void mutex_reacquire_all(struct mutex_saved *sv)
{
    for (int i = 0; i < sv->n; i++) {
        struct mutex *m = sv->e[i].m;
        if (sv->e[i].shared) {
            enter_shared(m, sv->e[i].site, true);
        } else {
            enter_exclusive(m, sv->e[i].site, false);
            m->depth = sv->e[i].depth;
        }
    }
}
