/*
 * Sleep and wakeup on wait channels, wake1proc, resource locks and
 * reader/writer locks.  The theory is in kern/sched/sleep.c and, for the
 * whole lock family, kern/lock/lock.c.
 */
#ifndef KERN_SLEEP_H
#define KERN_SLEEP_H

#include <kern/lib/types.h>
#include <kern/lock/lock.h>
#include <kern/lock/mutex.h>

struct sleepq;

/* Boot: initialize the sleep queues. */
void sleepq_init(void);

/* Lock the sleep queue that chan hashes to. */
struct sleepq *sleepq_lock(const void *chan);
void sleepq_unlock(struct sleepq *sq);
/* With sq locked: sleep on chan.  sq is unlocked before the switch; the
 * thread's mutexes are released while it sleeps and held again when this
 * returns. */
void sleep_locked(struct sleepq *sq, const void *chan);
/* With sq locked: wake every thread (all) or the first one sleeping on
 * chan.  Returns how many were woken. */
int sleepq_wakeup_locked(struct sleepq *sq, const void *chan, bool all);

/* Sleep on chan.  The caller holds a mutex that whoever changes the awaited
 * condition also holds when calling wakeup, so no wakeup is lost: the
 * mutex is released only after the thread is on the sleep queue. */
void sleep_on(const void *chan);
/* Wake all threads sleeping on chan. */
int wakeup(const void *chan);
/* Wake exactly one thread sleeping on chan (the longest sleeper). */
int wake1proc(const void *chan);

/* The bucket a channel hashes to, and the table size (tests). */
unsigned sleepq_hash(const void *chan);
#define SLEEPQ_BITS 8
#define SLEEPQ_SIZE (1 << SLEEPQ_BITS)

/*
 * Resource lock: a "locked" flag protected by a mutex and held across
 * blocking (I/O, sleeps), like the ILOCKED flag of an SVR4 inode.  Waiters
 * sleep on the lock; release wakes all (wakeup=all) or one (wakeup=one,
 * wake1proc).  Not recursive.
 */
struct rlock {
    struct mutex m;             /* protects the fields below */
    int locked;                 /* [m]; stored with WRITE_ONCE, as rlock_held and */
    struct thread *holder;      /* [m]; rlock_release read them without m (READ_ONCE) */
    int wanted;                 /* [m] threads sleeping for it */
    struct lock_instance inst;
};

void rlock_init(struct rlock *rl, struct lock_class *cls, const char *name);
void rlock_destroy(struct rlock *rl);
void rlock_acquire(struct rlock *rl);
bool rlock_tryacquire(struct rlock *rl);
void rlock_release(struct rlock *rl);
bool rlock_held(struct rlock *rl);     /* by the current thread */

/*
 * Reader/writer lock, held across blocking (like IRWLOCKED): many readers
 * or one writer.  Writers have priority over new readers.  Not recursive.
 */
struct rwlock {
    struct mutex m;             /* protects the fields below */
    int readers;                /* [m] */
    struct thread *writer;      /* [m] */
    int want_write;             /* [m] writers sleeping */
    int want_read;              /* [m] readers sleeping */
    struct lock_instance inst;
};

enum rw_mode { RW_READER, RW_WRITER };

void rw_init(struct rwlock *rw, struct lock_class *cls, const char *name);
void rw_destroy(struct rwlock *rw);
void rw_enter(struct rwlock *rw, enum rw_mode mode);
bool rw_tryenter(struct rwlock *rw, enum rw_mode mode);
void rw_exit(struct rwlock *rw);

#endif
