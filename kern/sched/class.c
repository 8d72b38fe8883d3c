/*
 * Scheduling classes: what a thread's priority is, and when its turn ends.
 *
 * Theory.  As in SVR4's dispatcher, each class maps its threads onto one
 * range of global priorities, and the run queues (kern/sched/sched.c) keep
 * a FIFO list per priority: the highest non-empty list runs first, and
 * threads of one priority take turns.  Higher numbers run first:
 *
 *   0 .. 63    time sharing: SCHED_OTHER and SCHED_BATCH by decay usage
 *              and nice; SCHED_IDLE always 0.
 *   65 .. 163  real time: SCHED_FIFO and SCHED_RR at PRI_RT_BASE plus
 *              their priority (1..99), above every time-sharing thread.
 *
 * Time sharing is the decay-usage scheduler of 4.4BSD and SVR4's TS class
 * in a small form.  Each clock tick that finds a thread running adds one
 * to its usage, and usage halves at every second of uptime (CPU 0's
 * tick counts the seconds; the halving is applied lazily, when the thread
 * is next charged or queued, so nothing walks all threads).  A CPU-bound thread reaches about 200; its priority is
 *
 *     PRI_TS_MAX - usage / 8 - (nice + 20)
 *
 * so a thread that has used the CPU lately yields to one that has not,
 * and nice shifts the balance: two CPU-bound threads on one CPU, at nice
 * 0 and 19, settle near 88% and 12% (Linux's weights give 98.5% and
 * 1.5%; both are "nice honoured", neither starves in the long run,
 * though a nice 19 spinner started beside a nice 0 one waits about 1.5 s,
 * until the other's usage has grown past the 19 levels between them, for
 * its first turn).  Kernel threads are time sharing at nice 0 like any
 * other.
 *
 * When a turn ends.  The kernel is not preemptive: a thread gives up the
 * CPU when it blocks or yields, and a user thread is asked to yield at its
 * next return to user mode (THREAD_AST_PREEMPT).  The clock asks a
 * time-sharing thread every tick (it is queued again behind its equals,
 * and runs on at once if it is still the highest), a SCHED_RR thread when
 * its quantum of RR_TICKS has run, and a SCHED_FIFO thread never.  A
 * thread made runnable at a real-time priority higher than what a CPU it
 * may use is running asks that CPU to reschedule (sched_make_runnable), so
 * a real-time thread waits at most until the other thread next leaves the
 * kernel, not for the tick.
 *
 * Not here: Linux's real-time throttling (a runaway SCHED_FIFO thread keeps
 * its CPU), priority inheritance, and SCHED_DEADLINE (refused, as without
 * the privilege).
 *
 * Locks.  A thread's parameters (t->sp) are written by the process layer
 * under its proc_lock (sched_set_params) and read without a lock by the
 * dispatcher, whole bytes that are each always valid.  The usage fields are
 * touched by the CPU running the thread or by whoever queues it while it
 * is off every CPU, never by two at once.
 */
#include <kern/sched/sched.h>
#include <kern/arch/smp.h>
#include <kern/arch/panic.h>

#define USAGE_SHIFT 3           /* usage / 8: about 25 levels for a CPU-bound thread */
#define USAGE_MAX 10000         /* a bound, far above the ~200 a second's halving allows */

/* Seconds of uptime, counted by CPU 0's tick: what decay_usage reads on
 * every enqueue and tick, cheaper than the clock. */
static volatile uint32_t seconds;       /* [own] CPU 0's tick writes; read racily */
static uint32_t cpu0_ticks;             /* [own] CPU 0's */

/* Halve t's usage once for each second boundary passed since it was last
 * decayed. */
static void decay_usage(struct thread *t)
{
    uint32_t now = seconds;
    uint32_t passed = now - t->ts_second;
    t->ts_second = now;
    t->ts_usage = passed >= 32 ? 0 : t->ts_usage >> passed;
}

/* t's usage as decay_usage would leave it, without storing it: the
 * priority is asked for by other CPUs too (a wakeup of a thread still
 * running elsewhere), and the two fields are [o], the tick's alone.  make
 * KCSAN=1 caught sched_priority's store racing with class_tick's. */
static uint32_t decayed_usage(const struct thread *t)
{
    uint32_t passed = seconds - READ_ONCE(t->ts_second);
    uint32_t usage = READ_ONCE(t->ts_usage);
    return passed >= 32 ? 0 : usage >> passed;
}

static int ts_priority(const struct thread *t, const struct sched_params *sp)
{
    if (sp->policy == SCHED_IDLE)
        return 0;
    int pri = PRI_TS_MAX - (int)(decayed_usage(t) >> USAGE_SHIFT) - (sp->nice + 20);
    return pri < 0 ? 0 : pri;
}

int sched_priority(struct thread *t)
{
    const struct sched_params sp = t->sp;
    if (sched_policy_rt(sp.policy))
        return PRI_RT_BASE + sp.rt_prio;
    return ts_priority(t, &sp);
}

/* The tick (a tick hook, every CPU): charge the running thread, and ask it
 * to yield when its class says its turn is over. */
static void class_tick(const struct trapframe *tf)
{
    if (cpu_id() == 0 && ++cpu0_ticks % TICK_HZ == 0)
        seconds++;
    struct thread *t = curthread();
    if (t->idle)
        return;
    bool over;
    switch (READ_ONCE(t->sp.policy)) {
    case SCHED_FIFO:
        over = false;
        break;
    case SCHED_RR:
        over = --t->rr_left <= 0;
        if (over)
            t->rr_left = RR_TICKS;
        break;
    default:
        decay_usage(t);
        if (t->ts_usage < USAGE_MAX)
            t->ts_usage++;
        over = true;
    }
    if (over)
        thread_ast_post(t, THREAD_AST_PREEMPT);
}

void sched_class_init(void)
{
    if (!smp_add_tick_hook(class_tick))
        panic("sched: no room for the scheduling classes' tick hook");
}

void sched_inherit(struct thread *child, const struct thread *parent)
{
    struct sched_params sp = parent->sp;
    if (sp.reset_on_fork) {
        if (sched_policy_rt(sp.policy))
            sp.policy = SCHED_OTHER;
        sp.rt_prio = 0;
        if (sp.nice < 0)
            sp.nice = 0;
        sp.reset_on_fork = false;
    }
    child->sp = sp;
    child->rr_left = RR_TICKS;
    child->ts_usage = parent->ts_usage;
    child->ts_second = parent->ts_second;
}
