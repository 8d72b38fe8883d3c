/* ktests for SVR4 mutexes, resource locks and reader/writer locks. */
#include <kern/tests/ktest.h>
#include <kern/lock/mutex.h>
#include <kern/lock/sleep.h>
#include <kern/lock/lockstat.h>
#include <kern/lock/witness.h>
#include <kern/sched/thread.h>
#include <kern/arch/arch.h>
#include <drivers/platform/timer.h>

LOCK_CLASS(test_mx_sleep_class, "test_mutex_sleep", LK_MUTEX_SLEEP);
LOCK_CLASS(test_mx_spin_class, "test_mutex_spin", LK_MUTEX_SPIN);
LOCK_CLASS(test_mx_a_class, "test_mutex_a", LK_MUTEX_SLEEP);
LOCK_CLASS(test_mx_b_class, "test_mutex_b", LK_MUTEX_SLEEP);
LOCK_CLASS(test_rlock_class, "test_rlock", LK_RESOURCE);
LOCK_CLASS(test_rw_class, "test_rwlock", LK_RWLOCK);

/* Run fn(arg) in `per_cpu` threads bound to each CPU, and join them. */
static int run_everywhere(void (*fn)(void *), void *arg, int per_cpu)
{
    static struct thread *t[2 * MAX_CPUS * 4];
    int n = 0;
    for (int c = 0; c < ncpus; c++)
        for (int k = 0; k < per_cpu; k++)
            if ((t[n] = thread_create("ktest", fn, arg, 1UL << c)))
                n++;
    for (int i = 0; i < n; i++)
        thread_join(t[i]);
    return n;
}

/* ---- mutual exclusion ---- */

struct counter {
    struct mutex m;
    volatile uint64_t a, b;         /* [m] must stay equal */
    volatile struct thread *inside; /* [m] */
    volatile int broken;
    int iters;
};

static void counter_body(void *arg)
{
    struct counter *c = arg;
    for (int i = 0; i < c->iters; i++) {
        mutex_enter(&c->m);
        if (c->inside || c->a != c->b)
            c->broken = 1;
        c->inside = curthread();
        c->a++;
        for (volatile int d = 0; d < 20; d++)
            ;
        c->b++;
        if (c->inside != curthread())
            c->broken = 1;
        c->inside = NULL;
        mutex_exit(&c->m);
        if (i % 64 == 0)
            thread_yield();
    }
}

static int exclusion(struct lock_class *cls, unsigned flags)
{
    static struct counter c;
    c.a = c.b = 0;
    c.inside = NULL;
    c.broken = 0;
    c.iters = 500;
    mutex_init(&c.m, cls, flags, "counter");
    int n = run_everywhere(counter_body, &c, 2);
    KT_ASSERT_EQ(c.broken, 0);
    KT_ASSERT_EQ(c.a, (uint64_t)n * c.iters);
    KT_ASSERT_EQ(c.b, c.a);
    mutex_destroy(&c.m);
    return 0;
}

KTEST(mutex_exclusion_sleep) { return exclusion(&test_mx_sleep_class, MUTEX_SLEEP); }
KTEST(mutex_exclusion_spin) { return exclusion(&test_mx_spin_class, MUTEX_SPIN); }

KTEST(mutex_recursion)
{
    struct mutex m;
    mutex_init(&m, &test_mx_sleep_class, MUTEX_SLEEP, "recursive");
    KT_ASSERT(!mutex_owned(&m));
    mutex_enter(&m);
    mutex_enter(&m);
    KT_ASSERT(mutex_tryenter(&m));
    KT_ASSERT_EQ(mutex_depth(&m), 3);
    mutex_exit(&m);
    mutex_exit(&m);
    KT_ASSERT(mutex_owned(&m));
    mutex_exit(&m);
    KT_ASSERT(!mutex_owned(&m));
    KT_ASSERT(held_find(&m) == NULL);
    mutex_destroy(&m);
    return 0;
}

/* ---- released across a sleep, reacquired before running ---- */

struct handoff {
    struct mutex m;
    volatile int phase;
    volatile int other_got_it;
};

static void grabber_body(void *arg)
{
    struct handoff *h = arg;
    while (h->phase != 1)
        thread_yield();
    /* The holder cannot get past phase 1 until we set phase 2, so taking
     * the mutex here proves it was released when the holder slept. */
    mutex_enter(&h->m);
    h->other_got_it = h->phase == 1;
    h->phase = 2;
    wakeup((void *)&h->phase);
    mutex_exit(&h->m);
}

KTEST(mutex_released_across_sleep)
{
    struct handoff h = { .phase = 0, .other_got_it = 0 };
    mutex_init(&h.m, &test_mx_sleep_class, MUTEX_SLEEP, "handoff");
    struct thread *t = thread_create("grabber", grabber_body, &h, AFFINITY_ALL);
    KT_ASSERT(t != NULL);
    mutex_enter(&h.m);
    mutex_enter(&h.m);
    h.phase = 1;
    while (h.phase != 2)
        sleep_on((void *)&h.phase);
    /* Back with the mutex, at the same depth. */
    KT_ASSERT(mutex_owned(&h.m));
    KT_ASSERT_EQ(mutex_depth(&h.m), 2);
    mutex_exit(&h.m);
    mutex_exit(&h.m);
    thread_join(t);
    KT_ASSERT_EQ(h.other_got_it, 1);
    mutex_destroy(&h.m);
    return 0;
}

/* ---- two mutexes taken in opposite orders do not deadlock ---- */

struct twolocks {
    struct mutex a, b;
    int iters;
    volatile int done;
};

/* One locker: takes `first`, yields (which releases it), then `second`. */
struct locker {
    struct twolocks *t;
    struct mutex *first, *second;
};

static void locker_body(void *arg)
{
    struct locker *l = arg;
    for (int i = 0; i < l->t->iters; i++) {
        mutex_enter(l->first);
        thread_yield();
        mutex_enter(l->second);
        mutex_exit(l->second);
        mutex_exit(l->first);
    }
    __atomic_add_fetch(&l->t->done, 1, __ATOMIC_SEQ_CST);
}

/* The SVR4 MP two-vnode case: a sleeper gives up what it holds, so AB/BA
 * acquisition by sleeping mutexes completes. */
KTEST(mutex_ab_ba_no_deadlock)
{
    bool was = witness_set_enabled(false);      /* the order reversal is on purpose */
    struct twolocks t = { .iters = 300, .done = 0 };
    mutex_init(&t.a, &test_mx_a_class, MUTEX_SLEEP, "A");
    mutex_init(&t.b, &test_mx_b_class, MUTEX_SLEEP, "B");
    struct locker ab = { &t, &t.a, &t.b }, ba = { &t, &t.b, &t.a };
    struct thread *x = thread_create("ab", locker_body, &ab, AFFINITY_ALL);
    struct thread *y = thread_create("ba", locker_body, &ba, AFFINITY_ALL);
    KT_ASSERT(x && y);
    thread_join(x);
    thread_join(y);
    witness_set_enabled(was);
    KT_ASSERT_EQ(t.done, 2);
    mutex_destroy(&t.a);
    mutex_destroy(&t.b);
    return 0;
}

/* ---- shared/exclusive ---- */

struct shared_test {
    struct mutex m;
    volatile int reader_in;         /* a second reader got in */
    volatile int try_failed;        /* the writer's tryenter failed */
    volatile int released;          /* main has left its shared hold */
    volatile int writer_saw_release;
};

/* Spin (never switch: a switch would release our mutexes) until *flag is
 * set, at most `seconds` (a hang guard). */
static bool spin_for(volatile int *flag, uint64_t seconds)
{
    uint64_t deadline = uptime_ns() + seconds * 1000000000UL;
    while (!*flag && uptime_ns() < deadline)
        cpu_relax();
    return *flag != 0;
}

static void second_reader(void *arg)
{
    struct shared_test *s = arg;
    mutex_enter_shared(&s->m);      /* main holds it shared too */
    s->reader_in = 1;
    mutex_exit(&s->m);
}

static void writer(void *arg)
{
    struct shared_test *s = arg;
    if (!mutex_tryenter(&s->m))
        s->try_failed = 1;
    else
        mutex_exit(&s->m);
    mutex_enter(&s->m);             /* spins until main leaves */
    s->writer_saw_release = s->released;
    mutex_exit(&s->m);
}

/* Readers share; a writer is kept out until the last reader leaves.  The
 * main thread keeps its shared hold by spinning, not yielding: a context
 * switch would release it (the SVR4 rule). */
KTEST(mutex_shared_exclusive)
{
    static struct shared_test s;
    s.reader_in = s.try_failed = s.released = s.writer_saw_release = 0;
    mutex_init(&s.m, &test_mx_spin_class, MUTEX_SPIN | MUTEX_SHARED, "shared");
    mutex_enter_shared(&s.m);
    KT_ASSERT_EQ(mutex_depth(&s.m), 0);        /* shared is not ownership */
    KT_ASSERT(!mutex_tryenter(&s.m));           /* no writer beside a reader */
    if (ncpus > 1) {
        uint64_t elsewhere = AFFINITY_ALL & ~(1UL << cpu_id());
        struct thread *r = thread_create("reader", second_reader, &s, elsewhere);
        KT_ASSERT(r != NULL);
        KT_ASSERT(spin_for(&s.reader_in, 10));  /* it got in beside us */
        /* Only now the writer: a waiting writer holds off new readers. */
        struct thread *w = thread_create("writer", writer, &s, elsewhere);
        KT_ASSERT(w != NULL);
        KT_ASSERT(spin_for(&s.try_failed, 10));
        s.released = 1;
        mutex_exit(&s.m);
        thread_join(r);
        thread_join(w);
        KT_ASSERT_EQ(s.writer_saw_release, 1);
    } else {
        mutex_exit(&s.m);
    }
    KT_ASSERT(mutex_tryenter(&s.m));
    mutex_exit(&s.m);
    mutex_destroy(&s.m);
    return 0;
}

/* ---- resource locks are held across blocking ---- */

struct rtest {
    struct rlock rl;
    volatile int phase;
    volatile int try_failed, acquired_after;
};

static void rlock_contender(void *arg)
{
    struct rtest *r = arg;
    while (r->phase != 1)
        thread_yield();
    if (!rlock_tryacquire(&r->rl))
        r->try_failed = 1;
    r->phase = 2;
    rlock_acquire(&r->rl);          /* blocks until the holder releases */
    r->acquired_after = r->phase;
    rlock_release(&r->rl);
}

KTEST(rlock_held_across_sleep)
{
    struct rtest r = { .phase = 0 };
    rlock_init(&r.rl, &test_rlock_class, "rtest");
    struct thread *t = thread_create("contender", rlock_contender, &r, AFFINITY_ALL);
    KT_ASSERT(t != NULL);
    rlock_acquire(&r.rl);
    r.phase = 1;
    while (r.phase != 2)
        thread_yield();             /* blocking while holding it */
    clock_spin_us(10000);
    for (int i = 0; i < 20; i++)
        thread_yield();
    KT_ASSERT(rlock_held(&r.rl));
    r.phase = 3;
    rlock_release(&r.rl);
    thread_join(t);
    KT_ASSERT_EQ(r.try_failed, 1);
    KT_ASSERT_EQ(r.acquired_after, 3);
    rlock_destroy(&r.rl);
    return 0;
}

KTEST(rwlock_semantics)
{
    struct rwlock rw;
    rw_init(&rw, &test_rw_class, "rw");
    rw_enter(&rw, RW_READER);
    KT_ASSERT(rw_tryenter(&rw, RW_READER));
    KT_ASSERT(!rw_tryenter(&rw, RW_WRITER));
    rw_exit(&rw);
    rw_exit(&rw);
    KT_ASSERT(rw_tryenter(&rw, RW_WRITER));
    KT_ASSERT(!rw_tryenter(&rw, RW_READER));
    rw_exit(&rw);
    KT_ASSERT(held_find(&rw) == NULL);
    rw_destroy(&rw);
    return 0;
}

/* Sleep-lock statistics for a known workload: the main thread holds a
 * mutex while a thread on another CPU asks for it, so exactly two
 * acquisitions happen and the second one misses at least once. */
struct statcase {
    struct mutex m;
};

static void stat_contender(void *arg)
{
    struct statcase *sc = arg;
    mutex_enter(&sc->m);
    mutex_exit(&sc->m);
}

KTEST(mutex_stats_counted)
{
    if (lockstat_mode != LOCKSTAT_ON)
        return 0;
    static struct statcase sc;
    struct lockstat_totals before, after;
    mutex_init(&sc.m, &test_mx_sleep_class, MUTEX_SLEEP, "statcase");
    lockstat_class_totals(&test_mx_sleep_class, &before);
    mutex_enter(&sc.m);
    uint64_t others = ncpus > 1 ? AFFINITY_ALL & ~(1UL << cpu_id()) : AFFINITY_ALL;
    struct thread *t = thread_create("contender", stat_contender, &sc, others);
    KT_ASSERT(t != NULL);
    /* Spin (a yield would switch, and so release the mutex) until the
     * contender is asleep on it. */
    uint64_t deadline = uptime_ns() + 10000000000UL;    /* a hang guard */
    while (ncpus > 1 && READ_ONCE(sc.m.waiters) == 0 && uptime_ns() < deadline)
        cpu_relax();
    int waited = READ_ONCE(sc.m.waiters);
    mutex_exit(&sc.m);
    thread_join(t);
    lockstat_class_totals(&test_mx_sleep_class, &after);
    if (ncpus > 1)
        KT_ASSERT(waited > 0);
    KT_ASSERT_EQ(after.hits - before.hits, 2);
    if (waited)
        KT_ASSERT(after.misses - before.misses >= 1);
    mutex_destroy(&sc.m);
    return 0;
}
