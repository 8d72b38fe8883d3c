/*
 * Callouts: functions run at a time, from the clock tick.
 *
 * Theory.  Timed sleeps (nanosleep, poll's and select's timeouts, the
 * futex-free waits of musl), alarm and the interval timers all need
 * something to happen at a time, with nobody running meanwhile.  A
 * callout is that something: a function, an argument and a due time on
 * the monotonic clock (uptime_ns).  Each CPU keeps its own list of
 * pending callouts, sorted by due time, under its own spin lock
 * (Tornado's per-processor data: a sleeper arms its callout on the CPU it
 * runs on, and the tick of that CPU runs it, so the common case touches
 * no other CPU's line).  The list is doubly linked, with its tail: a stop
 * unlinks in constant time, and an insertion walks from whichever end is
 * nearer its due time, so that the two usual kinds both go in at once or
 * nearly: the short (a sleep, a TCP retransmission) near the head, the
 * long armed in turn with one delay (thousands of TCP connections in
 * TIME_WAIT, each due 60 s on) at the tail.  The CPU's one-shot timer (kern/arch/smp.c, "the
 * clock") is armed for the head of its list or the next tick, whichever
 * is first, and its interrupt runs what is due: a callout runs when it is
 * due (give or take the interrupt's latency), not at the next tick, and
 * never before.  callout_arm brings the timer forward when the new
 * callout is the earliest.
 *
 * A callout's function runs in the timer's interrupt, with interrupts
 * disabled and no lock held: it may take spin locks (wakeup, posting a
 * signal) but never sleep.  While it runs, its list records it as
 * running, and callout_stop waits for it to finish: so once stop returns
 * the function is neither pending nor running, and the owner may let the
 * callout's memory go (a sleeper's stack frame, an exiting process).
 * The function may arm its own callout again (a periodic interval timer):
 * a stop from the CPU that runs it can only come from the function itself,
 * and does not wait.
 *
 * Locks: callout (class "callout", a spin lock per CPU), a leaf: nothing
 * is taken under it, and the functions run after it is let go.
 */
#include <kern/sched/callout.h>
#include <kern/lock/spinlock.h>
#include <kern/arch/cpu.h>
#include <kern/arch/smp.h>
#include <kern/arch/arch.h>
#include <drivers/platform/timer.h>

struct callout_list {
    spinlock_t lock;
    struct callout *head;       /* [lock] pending, earliest first */
    struct callout *tail;       /* [lock] the latest */
    struct callout *running;    /* [lock] the callout whose function runs now */
} __cacheline;

LOCK_CLASS(callout_class, "callout", LK_SPIN);

static struct callout_list lists[MAX_CPUS];
static uint64_t fired;          /* [a] */

void callout_init(void)
{
    for (int i = 0; i < MAX_CPUS; i++)
        spin_init(&lists[i].lock, &callout_class);
}

void callout_setup(struct callout *c)
{
    c->c_next = c->c_prev = NULL;
    c->c_fn = NULL;
    c->c_arg = NULL;
    c->c_cpu = -1;
    c->c_pending = false;
}

/* Unlink pending c from l. */
static void list_remove(struct callout_list *l, struct callout *c)
{
    if (c->c_prev)
        c->c_prev->c_next = c->c_next;
    else
        l->head = c->c_next;
    if (c->c_next)
        c->c_next->c_prev = c->c_prev;
    else
        l->tail = c->c_prev;
    c->c_next = c->c_prev = NULL;
    c->c_pending = false;
}

/* The callout c goes after in l: the last one due no later, found from
 * the end nearer c's due time. */
static struct callout *insert_after(const struct callout_list *l, const struct callout *c)
{
    const struct callout *h = l->head, *t = l->tail;
    if (!h || c->c_when < h->c_when)
        return NULL;
    if (c->c_when >= t->c_when)
        return l->tail;
    if (c->c_when - h->c_when < t->c_when - c->c_when) {
        struct callout *before = l->head;
        while (before->c_next && before->c_next->c_when <= c->c_when)
            before = before->c_next;
        return before;
    }
    struct callout *before = l->tail;
    while (before && before->c_when > c->c_when)
        before = before->c_prev;
    return before;
}

/* Link c into l after every callout due no later. */
static void list_insert(struct callout_list *l, struct callout *c)
{
    struct callout *before = insert_after(l, c);
    c->c_prev = before;
    c->c_next = before ? before->c_next : l->head;
    if (before)
        before->c_next = c;
    else
        l->head = c;
    if (c->c_next)
        c->c_next->c_prev = c;
    else
        l->tail = c;
    c->c_pending = true;
}

bool callout_stop(struct callout *c)
{
    bool was_pending = false;
    for (;;) {
        int cpu = __atomic_load_n(&c->c_cpu, __ATOMIC_ACQUIRE);
        if (cpu < 0)
            return was_pending;
        struct callout_list *l = &lists[cpu];
        spin_lock(&l->lock);
        if (c->c_cpu != cpu) {          /* it moved (finished, or armed elsewhere) */
            spin_unlock(&l->lock);
            continue;
        }
        if (c->c_pending) {
            list_remove(l, c);
            was_pending = true;
        }
        if (l->running == c && cpu != cpu_id()) {   /* another CPU runs it: wait */
            spin_unlock(&l->lock);
            cpu_relax();
            continue;
        }
        __atomic_store_n(&c->c_cpu, -1, __ATOMIC_RELEASE);
        spin_unlock(&l->lock);
        return was_pending;
    }
}

void callout_arm(struct callout *c, uint64_t when, void (*fn)(void *), void *arg)
{
    callout_stop(c);
    int cpu = cpu_id();         /* the kernel is not preempted: we stay here */
    struct callout_list *l = &lists[cpu];
    spin_lock(&l->lock);
    c->c_when = when;
    c->c_fn = fn;
    c->c_arg = arg;
    list_insert(l, c);
    __atomic_store_n(&c->c_cpu, cpu, __ATOMIC_RELEASE);
    if (l->head == c)
        smp_timer_event_armed(when);    /* interrupts are off under the lock */
    spin_unlock(&l->lock);
}

/* Run one due callout, entered and left with l locked. */
static void run_one(struct callout_list *l, struct callout *c, int cpu)
{
    list_remove(l, c);
    l->running = c;
    void (*fn)(void *) = c->c_fn;
    void *arg = c->c_arg;
    spin_unlock(&l->lock);
    fn(arg);
    __atomic_add_fetch(&fired, 1, __ATOMIC_RELAXED);
    spin_lock(&l->lock);
    /* Still under the lock that callout_stop waits on, so c is valid. */
    if (!c->c_pending && c->c_cpu == cpu)
        __atomic_store_n(&c->c_cpu, -1, __ATOMIC_RELEASE);
    l->running = NULL;
}

uint64_t callout_expire(uint64_t now)
{
    struct callout_list *l = &lists[cpu_id()];
    /* A peek without the lock: most interrupts (the ticks) find nothing. */
    if (!__atomic_load_n(&l->head, __ATOMIC_RELAXED))
        return UINT64_MAX;
    spin_lock(&l->lock);
    while (l->head && l->head->c_when <= now)
        run_one(l, l->head, cpu_id());
    uint64_t next = l->head ? l->head->c_when : UINT64_MAX;
    spin_unlock(&l->lock);
    return next;
}

uint64_t callout_fired(void)
{
    return __atomic_load_n(&fired, __ATOMIC_RELAXED);
}
