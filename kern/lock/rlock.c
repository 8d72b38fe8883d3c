/*
 * Resource locks and reader/writer locks: locks held across blocking.
 *
 * A resource lock is the SVR4 MP pattern of a flag (ILOCKED) guarded by a
 * mutex: to take it, enter the mutex, sleep while the flag is set, set it,
 * exit the mutex.  The flag stays set while its holder sleeps for I/O; the
 * mutex, like every mutex, is released whenever its holder sleeps, which
 * is why waiting for the flag cannot lose a wakeup (the waiter is on the
 * sleep queue before its mutex is released).  Release clears the flag and
 * wakes all waiters (wakeup=all) or one (wakeup=one, wake1proc): with
 * wakeup=all, every waiter wakes, one wins and the rest count a miss and
 * sleep again -- exactly the herd the statistics are meant to show.
 *
 * A reader/writer lock (IRWLOCKED) is the same with a reader count: many
 * readers or one writer, writers first once one is waiting.
 *
 * Waiters sleep on a field of the lock (&rl->wanted, &rw->readers), never
 * on its address, which is also the address of its first member and maybe
 * of the structure that embeds it (see mutex_chan in kern/lock/mutex.c).
 *
 * Both appear on the holder's held-lock stack with HELD_KEEP, so witness
 * sees them and the context switch leaves them alone.
 *
 * Locks: each lock's own mutex (classes rlock_ilk and rwlock_ilk) guards
 * its fields; the lock itself has the caller's class.
 */
#include <kern/lock/sleep.h>
#include <kern/lock/lockstat.h>
#include <kern/lock/witness.h>
#include <kern/lib/options.h>
#include <kern/sched/thread.h>
#include <kern/arch/arch.h>
#include <kern/lib/string.h>
#include <kern/arch/panic.h>

LOCK_CLASS(rlock_ilk_class, "rlock_ilk", LK_MUTEX_SLEEP);
LOCK_CLASS(rwlock_ilk_class, "rwlock_ilk", LK_MUTEX_SLEEP);

static void keep_push(void *lock, struct lock_instance *li, uintptr_t site,
                      uint32_t misses, uint32_t flags)
{
    struct held_lock *e = held_push(lock, li->cls, site, 0);
    e->flags = flags | HELD_KEEP;
    lockstat_hold_begin(li, site, misses, flags & HELD_SHARED, e);
}

static void keep_pop(void *lock, struct lock_instance *li)
{
    struct held_lock e;
    if (!held_pop(lock, &e))
        panic("release of %s, which this thread does not hold", li->cls->name);
    lockstat_note_released(li, e.acquired_at);
}

/* At the first miss (the lock's mutex held, so the holder stays): the
 * time, and the holder's held stack for where it took lock. */
static void wait_begin(struct lockstat_wait *w, const void *lock, const struct thread *holder)
{
    lockstat_wait_begin(w, holder ? &holder->held : NULL, lock);
}

static void wake_for_release(const void *chan)
{
    if (opts.wakeup == WAKEUP_ONE)
        wake1proc(chan);
    else
        wakeup(chan);
}

/* ---- resource locks ---- */

void rlock_init(struct rlock *rl, struct lock_class *cls, const char *name)
{
    memset(rl, 0, sizeof *rl);
    mutex_init(&rl->m, &rlock_ilk_class, MUTEX_SLEEP, name);
    lockstat_register(&rl->inst, cls, name);
}

void rlock_destroy(struct rlock *rl)
{
    if (rl->locked)
        panic("rlock_destroy: %s is held", rl->inst.cls->name);
    lockstat_unregister(&rl->inst);
    mutex_destroy(&rl->m);
}

void rlock_acquire(struct rlock *rl)
{
    uintptr_t site = (uintptr_t)__builtin_return_address(0);
    uint32_t misses = 0;
    struct lockstat_wait w;
    witness_acquire(rl->inst.cls, site);
    mutex_enter(&rl->m);
    while (rl->locked) {
        if (misses++ == 0)
            wait_begin(&w, rl, rl->holder);
        rl->wanted++;
        sleep_on(&rl->wanted);
        rl->wanted--;
    }
    WRITE_ONCE(rl->locked, 1);
    WRITE_ONCE(rl->holder, curthread());
    mutex_exit(&rl->m);
    keep_push(rl, &rl->inst, site, misses, 0);
    lockstat_note_acquired(&rl->inst, misses, false, site, &w);
}

bool rlock_tryacquire(struct rlock *rl)
{
    mutex_enter(&rl->m);
    bool got = !rl->locked;
    if (got) {
        WRITE_ONCE(rl->locked, 1);
        WRITE_ONCE(rl->holder, curthread());
    }
    mutex_exit(&rl->m);
    if (got) {
        uintptr_t site = (uintptr_t)__builtin_return_address(0);
        keep_push(rl, &rl->inst, site, 0, 0);
        lockstat_note_acquired(&rl->inst, 0, false, site, NULL);
    }
    return got;
}

void rlock_release(struct rlock *rl)
{
    if (READ_ONCE(rl->holder) != curthread())
        panic("rlock_release: %s not held by this thread", rl->inst.cls->name);
    keep_pop(rl, &rl->inst);
    mutex_enter(&rl->m);
    WRITE_ONCE(rl->locked, 0);
    WRITE_ONCE(rl->holder, NULL);
    bool waiters = rl->wanted > 0;
    if (waiters)
        wake_for_release(&rl->wanted);
    mutex_exit(&rl->m);
}

/* Without m: only this thread makes holder itself or stops it being so,
 * so the answer about itself is exact even while other threads take and
 * release the lock (make KCSAN=1 reported the unmarked reads). */
bool rlock_held(struct rlock *rl)
{
    return READ_ONCE(rl->locked) && READ_ONCE(rl->holder) == curthread();
}

/* ---- reader/writer locks ---- */

void rw_init(struct rwlock *rw, struct lock_class *cls, const char *name)
{
    memset(rw, 0, sizeof *rw);
    mutex_init(&rw->m, &rwlock_ilk_class, MUTEX_SLEEP, name);
    lockstat_register(&rw->inst, cls, name);
}

void rw_destroy(struct rwlock *rw)
{
    if (rw->readers || rw->writer)
        panic("rw_destroy: %s is held", rw->inst.cls->name);
    lockstat_unregister(&rw->inst);
    mutex_destroy(&rw->m);
}

static bool rw_can_enter(const struct rwlock *rw, enum rw_mode mode)
{
    if (mode == RW_WRITER)
        return rw->writer == NULL && rw->readers == 0;
    return rw->writer == NULL && rw->want_write == 0;
}

static void rw_take(struct rwlock *rw, enum rw_mode mode)
{
    if (mode == RW_WRITER)
        rw->writer = curthread();
    else
        rw->readers++;
}

void rw_enter(struct rwlock *rw, enum rw_mode mode)
{
    uintptr_t site = (uintptr_t)__builtin_return_address(0);
    uint32_t misses = 0;
    struct lockstat_wait w;
    witness_acquire(rw->inst.cls, site);
    mutex_enter(&rw->m);
    while (!rw_can_enter(rw, mode)) {
        if (misses++ == 0)
            wait_begin(&w, rw, rw->writer);
        int *want = mode == RW_WRITER ? &rw->want_write : &rw->want_read;
        (*want)++;
        sleep_on(&rw->readers);
        (*want)--;
    }
    rw_take(rw, mode);
    mutex_exit(&rw->m);
    keep_push(rw, &rw->inst, site, misses, mode == RW_READER ? HELD_SHARED : 0);
    lockstat_note_acquired(&rw->inst, misses, mode == RW_READER, site, &w);
}

bool rw_tryenter(struct rwlock *rw, enum rw_mode mode)
{
    mutex_enter(&rw->m);
    bool got = rw_can_enter(rw, mode);
    if (got)
        rw_take(rw, mode);
    mutex_exit(&rw->m);
    if (got) {
        uintptr_t site = (uintptr_t)__builtin_return_address(0);
        keep_push(rw, &rw->inst, site, 0, mode == RW_READER ? HELD_SHARED : 0);
        lockstat_note_acquired(&rw->inst, 0, mode == RW_READER, site, NULL);
    }
    return got;
}

void rw_exit(struct rwlock *rw)
{
    keep_pop(rw, &rw->inst);
    mutex_enter(&rw->m);
    if (rw->writer == curthread())
        rw->writer = NULL;
    else
        rw->readers--;
    bool wake = rw->writer == NULL && rw->readers == 0 && (rw->want_write || rw->want_read);
    if (wake)
        wakeup(&rw->readers);
    mutex_exit(&rw->m);
}
