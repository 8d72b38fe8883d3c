/* ktests for threads, the run-queue models, sleep/wakeup and wake1proc. */
#include <kern/tests/ktest.h>
#include <kern/sched/thread.h>
#include <kern/sched/sched.h>
#include <kern/lock/sleep.h>
#include <kern/lock/mutex.h>
#include <kern/lib/options.h>
#include <kern/lib/kprintf.h>
#include <kern/arch/arch.h>
#include <drivers/platform/timer.h>

LOCK_CLASS(test_sched_mutex_class, "test_sched_mutex", LK_MUTEX_SLEEP);

struct fanout {
    volatile int ran;
    int yields;
};

static void fanout_body(void *arg)
{
    struct fanout *f = arg;
    for (int i = 0; i < f->yields; i++)
        thread_yield();
    __atomic_add_fetch(&f->ran, 1, __ATOMIC_SEQ_CST);
}

/* A fan-out of threads, one bound to each CPU and three times as many
 * free ones, all run to completion; bound ones never leave their CPU. */
KTEST(sched_fanout)
{
    enum { MAXT = 4 * MAX_CPUS };
    static struct thread *t[MAXT];
    struct fanout f = { 0, 5 };
    int n = 4 * ncpus;
    uint64_t ran_on = 0;
    for (int i = 0; i < n; i++) {
        uint64_t aff = i < ncpus ? 1UL << i : AFFINITY_ALL;
        t[i] = thread_create("fanout", fanout_body, &f, aff);
        KT_ASSERT(t[i] != NULL);
    }
    for (int i = 0; i < n; i++) {
        while (!t[i]->done)
            thread_yield();
        uint64_t mask = t[i]->last_ran_mask;
        ran_on |= mask;
        if (i < ncpus)
            KT_ASSERT_EQ(mask, 1UL << i);
        thread_join(t[i]);
    }
    KT_ASSERT_EQ(f.ran, n);
    KT_ASSERT_EQ(ran_on, ncpus == 64 ? ~0UL : (1UL << ncpus) - 1);
    return 0;
}

/* A thread bound to one cluster stays in it across yields. */
KTEST(sched_cluster_affinity)
{
    int last = sched_nclusters() - 1;
    uint64_t mask = sched_cluster_mask(last);
    struct fanout f = { 0, 20 };
    struct thread *t[4];
    for (int i = 0; i < 4; i++)
        KT_ASSERT((t[i] = thread_create("incluster", fanout_body, &f, mask)) != NULL);
    for (int i = 0; i < 4; i++) {
        while (!t[i]->done)
            thread_yield();
        KT_ASSERT((t[i]->last_ran_mask & ~mask) == 0);
        thread_join(t[i]);
    }
    KT_ASSERT_EQ(f.ran, 4);
    return 0;
}

/* sched_set_affinity on the calling thread moves it before returning. */
KTEST(sched_set_affinity_self)
{
    struct thread *me = curthread();
    uint64_t saved = me->affinity;
    for (int c = 0; c < ncpus; c++) {
        sched_set_affinity(me, 1UL << c);
        KT_ASSERT_EQ(cpu_id(), c);
        thread_yield();
        KT_ASSERT_EQ(cpu_id(), c);
    }
    sched_set_affinity(me, saved);
    return 0;
}

struct mover {
    volatile int stop, record;
    volatile uint64_t iter;     /* yields completed */
    volatile uint64_t seen;     /* CPUs it ran on while recording */
};

static void mover_body(void *arg)
{
    struct mover *m = arg;
    while (!m->stop) {
        if (m->record)
            __atomic_or_fetch(&m->seen, 1UL << cpu_id(), __ATOMIC_SEQ_CST);
        thread_yield();
        __atomic_add_fetch(&m->iter, 1, __ATOMIC_SEQ_CST);
    }
}

static void wait_iterations(struct mover *m, uint64_t n)
{
    uint64_t start = __atomic_load_n(&m->iter, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&m->iter, __ATOMIC_SEQ_CST) < start + n)
        thread_yield();
}

/* Another thread, running or runnable on a queue of the CPU it is bound
 * to, runs only on its new CPU once its affinity changes: from the first
 * yield it begins after the change (one already under way may still end
 * on the old CPU). */
KTEST(sched_set_affinity_other)
{
    if (ncpus < 2)
        return 0;
    struct mover m = { 0 };
    struct thread *t = thread_create("mover", mover_body, &m, 1UL);
    KT_ASSERT(t != NULL);
    wait_iterations(&m, 1);
    int last = ncpus - 1;
    sched_set_affinity(t, 1UL << last);
    wait_iterations(&m, 2);
    m.record = 1;
    wait_iterations(&m, 3);
    m.stop = 1;
    while (!t->done)
        thread_yield();
    thread_join(t);
    KT_ASSERT_EQ(m.seen, 1UL << last);
    return 0;
}

/* 512-byte-aligned addresses (SVR4's proc structures) spread over the
 * sleep queues instead of piling into one. */
KTEST(sleepq_hash_spread)
{
    static uint8_t used[SLEEPQ_SIZE];
    int buckets = 0, naive = 0;
    static uint8_t naive_used[SLEEPQ_SIZE];
    for (int i = 0; i < SLEEPQ_SIZE; i++)
        used[i] = naive_used[i] = 0;
    for (uint64_t i = 0; i < 512; i++) {
        uint64_t addr = 0xFFFF800001000000UL + i * 512;
        unsigned h = sleepq_hash((void *)addr);
        KT_ASSERT(h < SLEEPQ_SIZE);
        if (!used[h]++)
            buckets++;
        if (!naive_used[addr & (SLEEPQ_SIZE - 1)]++)
            naive++;
    }
    kprintf("ktest: sleepq_hash_spread: 512 aligned addresses use %d of %d queues "
            "(address mod %d would use %d)\n", buckets, SLEEPQ_SIZE, SLEEPQ_SIZE, naive);
    KT_ASSERT(buckets >= SLEEPQ_SIZE * 3 / 4);
    return 0;
}

/* ---- wake1proc wakes exactly one ---- */

struct waitgroup {
    struct mutex m;
    volatile int asleep, woken, go;
};

static void waiter_body(void *arg)
{
    struct waitgroup *w = arg;
    mutex_enter(&w->m);
    w->asleep++;
    while (w->go == 0)
        sleep_on((void *)&w->go);
    w->go--;                    /* consume one permission */
    w->woken++;
    mutex_exit(&w->m);
}

KTEST(wake1proc_wakes_one)
{
    enum { N = 6 };
    struct waitgroup w = { .asleep = 0, .woken = 0, .go = 0 };
    mutex_init(&w.m, &test_sched_mutex_class, MUTEX_SLEEP, "waitgroup");
    struct thread *t[N];
    for (int i = 0; i < N; i++)
        KT_ASSERT((t[i] = thread_create("waiter", waiter_body, &w, AFFINITY_ALL)) != NULL);
    ktest_await(&w.asleep, N, 10);
    KT_ASSERT_EQ(w.asleep, N);
    /* All N are on the queue once asleep == N and we hold the mutex. */
    mutex_enter(&w.m);
    w.go = 1;
    int n = wake1proc((void *)&w.go);
    mutex_exit(&w.m);
    KT_ASSERT_EQ(n, 1);
    ktest_await(&w.woken, 1, 10);
    clock_spin_us(20000);
    for (int i = 0; i < 50; i++)
        thread_yield();
    KT_ASSERT_EQ(w.woken, 1);
    mutex_enter(&w.m);
    w.go = N - 1;
    n = wakeup((void *)&w.go);
    mutex_exit(&w.m);
    KT_ASSERT_EQ(n, N - 1);
    for (int i = 0; i < N; i++)
        thread_join(t[i]);
    KT_ASSERT_EQ(w.woken, N);
    mutex_destroy(&w.m);
    return 0;
}

/* ---- no lost wake-ups: a ping-pong across CPUs ---- */

struct pingpong {
    struct mutex m;
    volatile int turn;          /* [m] 0: ping's turn, 1: pong's */
    int rounds;
};

static void pong_body(void *arg)
{
    struct pingpong *p = arg;
    for (int i = 0; i < p->rounds; i++) {
        mutex_enter(&p->m);
        while (p->turn != 1)
            sleep_on((void *)&p->turn);
        p->turn = 0;
        wakeup((void *)&p->turn);
        mutex_exit(&p->m);
    }
}

KTEST(no_lost_wakeups)
{
    struct pingpong p = { .turn = 0, .rounds = 2000 };
    mutex_init(&p.m, &test_sched_mutex_class, MUTEX_SLEEP, "pingpong");
    uint64_t other = ncpus > 1 ? 1UL << (ncpus - 1) : 1;
    struct thread *t = thread_create("pong", pong_body, &p, other);
    KT_ASSERT(t != NULL);
    for (int i = 0; i < p.rounds; i++) {
        mutex_enter(&p.m);
        while (p.turn != 0)
            sleep_on((void *)&p.turn);
        p.turn = 1;
        wakeup((void *)&p.turn);
        mutex_exit(&p.m);
    }
    thread_join(t);
    KT_ASSERT_EQ(p.turn, 0);
    mutex_destroy(&p.m);
    return 0;
}
