/* ktests for callouts (kern/sched/callout.c): order by due time, never
 * early (three, and many inserted at both ends of the list), a stopped
 * callout never runs, a callout that arms itself again,
 * and a stop that waits for a callout running on another CPU. */
#include <kern/tests/ktest.h>
#include <kern/sched/callout.h>
#include <kern/sched/thread.h>
#include <kern/arch/cpu.h>
#include <kern/arch/arch.h>
#include <kern/lib/kprintf.h>
#include <drivers/platform/timer.h>

#define MS 1000000UL

struct fired {
    volatile int n;
    int order[8];
    uint64_t due[8], at[8];
};

struct mark {
    struct fired *f;
    int id;
    uint64_t due;
};

static void record(void *arg)
{
    struct mark *m = arg;
    int i = m->f->n;
    if (i < 8) {
        m->f->order[i] = m->id;
        m->f->due[i] = m->due;
        m->f->at[i] = uptime_ns();
    }
    __atomic_store_n(&m->f->n, i + 1, __ATOMIC_RELEASE);
}

/* Three callouts armed out of order run in the order they are due, each
 * at or after its time. */
KTEST(callout_order)
{
    static struct fired f;
    static struct callout c[3];
    static struct mark m[3];
    f.n = 0;
    uint64_t now = uptime_ns();
    static const int after_ms[3] = { 60, 20, 40 };
    for (int i = 0; i < 3; i++) {
        callout_setup(&c[i]);
        m[i] = (struct mark){ &f, i, now + after_ms[i] * MS };
        callout_arm(&c[i], m[i].due, record, &m[i]);
    }
    KT_ASSERT(ktest_await(&f.n, 3, 10));
    for (int i = 0; i < 3; i++)
        callout_stop(&c[i]);
    KT_ASSERT_EQ(f.order[0], 1);
    KT_ASSERT_EQ(f.order[1], 2);
    KT_ASSERT_EQ(f.order[2], 0);
    for (int i = 0; i < 3; i++)
        KT_ASSERT(f.at[i] >= f.due[i]);
    return 0;
}

#define MANY 48

struct fired_many {
    volatile int n;
    int id[MANY];
    uint64_t due[MANY], at[MANY];
};

static void record_many(void *arg)
{
    struct mark *m = arg;
    struct fired_many *f = (struct fired_many *)m->f;
    int i = f->n;
    if (i < MANY) {
        f->id[i] = m->id;
        f->due[i] = m->due;
        f->at[i] = uptime_ns();
    }
    __atomic_store_n(&f->n, i + 1, __ATOMIC_RELEASE);
}

/* Many callouts armed in a scrambled order, so that insertions go in at
 * the head, at the tail and by walks from either end, and every fifth
 * stopped again (unlinked from the middle): the rest run in the order
 * they are due, never early, the stopped never. */
KTEST(callout_list_ends)
{
    static struct fired_many f;
    static struct callout c[MANY];
    static struct mark m[MANY];
    f.n = 0;
    uint64_t now = uptime_ns();
    for (int i = 0; i < MANY; i++) {
        int slot = (i * 29 + 7) % MANY;             /* a permutation of 0..MANY-1 */
        callout_setup(&c[i]);
        m[i] = (struct mark){ (struct fired *)&f, i, now + (40 + slot) * MS };
        callout_arm(&c[i], m[i].due, record_many, &m[i]);
    }
    int stopped = 0;
    for (int i = 0; i < MANY; i += 5, stopped++)
        KT_ASSERT(callout_stop(&c[i]));
    KT_ASSERT(ktest_await(&f.n, MANY - stopped, 10));
    KT_ASSERT(!ktest_await(&f.n, MANY - stopped + 1, 1));  /* no stopped one runs */
    for (int i = 0; i < MANY; i++)
        callout_stop(&c[i]);
    KT_ASSERT_EQ(f.n, MANY - stopped);
    for (int i = 0; i < f.n; i++) {
        KT_ASSERT(f.id[i] % 5 != 0);
        KT_ASSERT(f.at[i] >= f.due[i]);
        if (i)
            KT_ASSERT(f.due[i] >= f.due[i - 1]);
    }
    return 0;
}

/* A stopped callout never runs; stopping an idle one says so. */
KTEST(callout_stop_pending)
{
    static struct fired f;
    static struct callout c;
    static struct mark m;
    f.n = 0;
    callout_setup(&c);
    KT_ASSERT(!callout_stop(&c));
    m = (struct mark){ &f, 0, uptime_ns() + 30 * MS };
    callout_arm(&c, m.due, record, &m);
    KT_ASSERT(callout_stop(&c));
    KT_ASSERT(!callout_stop(&c));
    KT_ASSERT(!ktest_await(&f.n, 1, 1));        /* well past its time: still 0 */
    KT_ASSERT_EQ(f.n, 0);
    return 0;
}

struct periodic {
    struct callout c;
    volatile int n;
    int times;
};

static void again(void *arg)
{
    struct periodic *p = arg;
    int n = __atomic_add_fetch(&p->n, 1, __ATOMIC_RELEASE);
    if (n < p->times)
        callout_arm(&p->c, uptime_ns() + 5 * MS, again, p);
}

/* A callout that arms itself again from its own function. */
KTEST(callout_rearm)
{
    static struct periodic p;
    p.n = 0;
    p.times = 5;
    callout_setup(&p.c);
    callout_arm(&p.c, uptime_ns() + 5 * MS, again, &p);
    KT_ASSERT(ktest_await(&p.n, 5, 10));
    callout_stop(&p.c);
    KT_ASSERT(!ktest_await(&p.n, 6, 1));
    KT_ASSERT_EQ(p.n, 5);
    return 0;
}

struct slow {
    struct callout c;
    volatile int started, done;
};

static void slow_fn(void *arg)
{
    struct slow *s = arg;
    __atomic_store_n(&s->started, 1, __ATOMIC_RELEASE);
    delay_us(50000);            /* 50 ms inside the tick, on purpose */
    __atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
}

static void arm_slow(void *arg)
{
    struct slow *s = arg;
    callout_arm(&s->c, uptime_ns() + 10 * MS, slow_fn, s);
}

/* callout_stop from another CPU waits for a running function to end. */
KTEST(callout_stop_waits)
{
    if (ncpus < 2) {
        kprintf("ktest: callout_stop_waits: one CPU, nothing to wait across\n");
        return 0;
    }
    static struct slow s;
    s.started = s.done = 0;
    callout_setup(&s.c);
    int other = cpu_id() == 0 ? 1 : 0;
    struct thread *t = thread_create("callout_arm", arm_slow, &s, 1UL << other);
    KT_ASSERT(t != NULL);
    thread_join(t);
    KT_ASSERT(ktest_await(&s.started, 1, 10));
    callout_stop(&s.c);
    KT_ASSERT_EQ(s.done, 1);
    return 0;
}
