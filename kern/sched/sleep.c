/*
 * Sleep and wakeup on wait channels.
 *
 * Theory.  A wait channel is any kernel address; threads sleeping on it
 * wait in the sleep queue its address hashes to, SLEEPQ_SIZE queues each
 * under its own spin lock.  The hash matters: kernel objects are aligned
 * (proc structures on 512-byte boundaries, buffers on pages), and a hash
 * that keeps the low bits -- "address mod 2^n" -- sent all of SVR4 MP's
 * 512-byte-aligned proc structures to queue 0 (Peacock, the 2^n-1 lesson).
 * We multiply by a 64-bit odd constant (Fibonacci hashing) and keep the
 * top bits, so every address bit, the high ones included, moves the
 * result; ktest sleepq_hash_spread shows aligned addresses spreading.
 *
 * wakeup wakes every sleeper on the channel; wake1proc wakes only the one
 * that has slept longest (each queue is FIFO), which is what a lock
 * release wants: waking all of them to fight for one lock is a thundering
 * herd (Peacock's wake1proc for inode locks).
 *
 * A sleeper takes its queue's lock, checks its condition, queues itself
 * and sleeps (sleep_locked); the lock is dropped before the switch.  A
 * waker takes the same lock, so a wakeup cannot fall between the check and
 * the sleep.  sleep_on is for callers whose condition is protected by a
 * mutex: the mutex is released by the context switch, after the thread is
 * on the queue.
 *
 * Locks: sleepq (one class, all buckets).  Order: mutex interlocks ->
 * sleepq -> run queue (sched_make_runnable is called with sleepq held).
 */
#include <kern/lock/sleep.h>
#include <kern/lock/spinlock.h>
#include <kern/sched/thread.h>
#include <kern/sched/sched.h>
#include <kern/lib/kprintf.h>
#include <kern/arch/panic.h>

struct sleepq {
    spinlock_t lock;
    struct thread *head, *tail;     /* [lock] FIFO of sleepers */
} __cacheline;

LOCK_CLASS(sleepq_class, "sleepq", LK_SPIN);

static struct sleepq sleepqs[SLEEPQ_SIZE];

void sleepq_init(void)
{
    for (int i = 0; i < SLEEPQ_SIZE; i++)
        spin_init(&sleepqs[i].lock, &sleepq_class);
}

unsigned sleepq_hash(const void *chan)
{
    return (unsigned)(((uint64_t)chan * 0x9E3779B97F4A7C15UL) >> (64 - SLEEPQ_BITS));
}

struct sleepq *sleepq_lock(const void *chan)
{
    struct sleepq *sq = &sleepqs[sleepq_hash(chan)];
    spin_lock(&sq->lock);
    return sq;
}

void sleepq_unlock(struct sleepq *sq)
{
    spin_unlock(&sq->lock);
}

static void sq_append(struct sleepq *sq, struct thread *t)
{
    t->sq_next = NULL;
    t->sq_prev = sq->tail;
    if (sq->tail)
        sq->tail->sq_next = t;
    else
        sq->head = t;
    sq->tail = t;
}

static void sq_remove(struct sleepq *sq, struct thread *t)
{
    if (t->sq_prev)
        t->sq_prev->sq_next = t->sq_next;
    else
        sq->head = t->sq_next;
    if (t->sq_next)
        t->sq_next->sq_prev = t->sq_prev;
    else
        sq->tail = t->sq_prev;
    t->sq_next = t->sq_prev = NULL;
}

void sleep_locked(struct sleepq *sq, const void *chan)
{
    struct thread *t = curthread();
    if (t->idle)
        panic("the idle thread of cpu %d tried to sleep", t->cpu);
    t->wchan = (void *)chan;
    t->state = TS_SLEEPING;
    sq_append(sq, t);
    spin_unlock(&sq->lock);
    sched_block();
}

int sleepq_wakeup_locked(struct sleepq *sq, const void *chan, bool all)
{
    int woken = 0;
    struct thread *t = sq->head;
    while (t) {
        struct thread *next = t->sq_next;
        if (t->wchan == chan) {
            sq_remove(sq, t);
            t->wchan = NULL;
            sched_make_runnable(t);
            woken++;
            if (!all)
                break;
        }
        t = next;
    }
    return woken;
}

void sleep_on(const void *chan)
{
    sleep_locked(sleepq_lock(chan), chan);
}

static int wake(const void *chan, bool all)
{
    struct sleepq *sq = sleepq_lock(chan);
    int n = sleepq_wakeup_locked(sq, chan, all);
    sleepq_unlock(sq);
    return n;
}

int wakeup(const void *chan)
{
    return wake(chan, true);
}

int wake1proc(const void *chan)
{
    return wake(chan, false);
}
