/*
 * SVR4 MP mutexes (Peacock, "File System Multithreading in System V
 * Release 4 MP", "Locking Model"):
 *
 *  - recursive: the owner may enter again; each enter needs an exit;
 *  - released automatically when the holder context-switches (it sleeps
 *    or yields) and reacquired before it runs again, so a sleeping thread
 *    never holds a mutex;
 *  - chosen at creation to spin or to sleep when busy (MUTEX_SPIN);
 *  - optionally shared/exclusive (MUTEX_SHARED allows mutex_enter_shared).
 *
 * A thread that must sleep for a busy mutex therefore gives up the mutexes
 * it holds first, which is what keeps two vnode lockers from deadlocking.
 * The other side of the bargain: data a mutex protects may change while
 * its holder sleeps, so code re-checks after anything that can block.
 */
#ifndef KERN_MUTEX_H
#define KERN_MUTEX_H

#include <kern/lib/types.h>
#include <kern/lock/lock.h>
#include <kern/arch/rawlock.h>

#define MUTEX_SLEEP  0x0        /* sleep when busy (the default) */
#define MUTEX_SPIN   0x1        /* spin when busy */
#define MUTEX_SHARED 0x2        /* may also be held in shared mode */

struct thread;

struct mutex {
    rawlock_t ilk;              /* interlock for the fields below; a leaf */
    struct thread *owner;       /* [ilk] exclusive holder, or NULL; stored with WRITE_ONCE, as
                                   the holder's nesting check and a spinning waiter
                                   read it without ilk (READ_ONCE) */
    uint32_t depth;             /* [owner] recursion depth */
    uint32_t readers;           /* [ilk] shared holders */
    uint32_t waiters;           /* [ilk] threads asleep on the mutex (or halted
                                   waiting for a spin mutex under pvspin=on) */
    uint32_t writers_waiting;   /* [ilk] exclusive requests waiting */
    uint32_t flags;             /* [c] MUTEX_* */
    /* MUTEX_SPIN with pvspin=on: set by a waiter about to halt, cleared by
     * the release that kicks (kern/lock/pvspin.c) [atomic]. */
    uint8_t pv_sleepers;
    struct lock_instance inst;  /* statistics; class from mutex_init */
};

void mutex_init(struct mutex *m, struct lock_class *cls, unsigned flags, const char *name);
void mutex_destroy(struct mutex *m);
void mutex_enter(struct mutex *m);
bool mutex_tryenter(struct mutex *m);
void mutex_enter_shared(struct mutex *m);
void mutex_exit(struct mutex *m);
/* Held exclusively by the current thread. */
bool mutex_owned(const struct mutex *m);
/* How many levels deep the current thread holds m (0: not held). */
uint32_t mutex_depth(const struct mutex *m);

/* Add the "mutex" line to kbench=locks (kern/lock/mutex_bench.c). */
void mutex_bench_register(void);

/* What sched_block releases and reacquires around a context switch. */
struct mutex_saved {
    int n;
    struct {
        struct mutex *m;
        uint32_t depth;
        bool shared;
        uintptr_t site;
    } e[HELD_MAX];
};

#endif
