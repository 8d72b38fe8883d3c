/*
 * The scheduler.
 *
 * Theory.  The kernel is not preemptive: a thread runs until it blocks,
 * yields or exits.  Runnable threads wait on run queues; which queues
 * exist is the sched= boot option, so one kernel can compare them:
 *
 *   global   One queue under one lock, as Sprite's sched_Mutex.  Every
 *            CPU takes work from it, so the lock is the point of
 *            contention the Sprite measurements showed.
 *   percpu   A queue per CPU.  A thread goes back to the queue of the CPU
 *            it last ran on; a CPU whose queue is empty steals from the
 *            busiest queue (by its racy length) a thread allowed to run
 *            there.
 *   cluster  SALSA's hierarchy: a queue per CPU, per cluster (cluster=
 *            CPUs, default the NUMA node) and one global queue.  A thread
 *            bound to one CPU goes to that CPU's queue, one whose affinity
 *            is one cluster goes to the cluster's queue, others go to the
 *            queue of the cluster they last ran in (or the global queue if
 *            new).  An idle CPU looks in its own queue, then its cluster's,
 *            then the global queue, and only then in other clusters.
 *
 * Priorities.  Each queue keeps a FIFO list per dispatch priority and a
 * bitmap of the lists that are not empty; a CPU takes the first thread it
 * may run from the highest list (kern/sched/class.c gives the classes and
 * their priorities).  The cluster model looks first at the local queue
 * (its CPU's, its cluster's or the global one) whose best thread is the
 * highest, then in the order above.  A thread made runnable at a
 * real-time priority above what every CPU it may use is running, with
 * none idle, asks the CPU running the lowest to reschedule (VEC_WAKE with
 * its resched flag set), which it does at its next return to user mode.
 *
 * Switching.  A thread's registers live on its stack while it is switched
 * out (kern/sched/switch.asm).  A thread can be made runnable by another CPU
 * while it is still finishing its switch-out (a wakeup right after it put
 * itself on a sleep queue, or a yield), so t->on_cpu is 1 from switch-in
 * until the switch-out is complete, and a CPU about to run t waits for it
 * to drop -- but only from its idle thread, never half way through a
 * switch (see switch_away for the deadlock that avoids).  Run-queue locks
 * are never held across the switch itself.
 *
 * SVR4 MP mutexes are released when their holder switches and reacquired
 * before it runs again (sched_block, kern/lock/mutex.c): a thread never sleeps
 * holding a mutex, which is what keeps two sleeping vnode lockers from
 * deadlocking.  Spin locks may not be held across a switch at all.
 *
 * Idle CPUs halt.  idle_mask has a bit per CPU that is halted or about to
 * be; whoever makes a thread runnable sends VEC_WAKE to an idle CPU that
 * may run it.  The idle CPU sets its bit before its last look at the
 * queues, and the enqueuer reads the mask after enqueueing, so one of the
 * two always sees the other.
 *
 * Locks (classes): sched_global, runq_cpu, runq_cluster.  A run-queue lock
 * is a leaf except that stealing holds one queue's lock at a time.
 */
#include <kern/sched/sched.h>
#include <kern/lock/spinlock.h>
#include <kern/lock/mutex.h>
#include <kern/lib/options.h>
#include <kern/arch/numa.h>
#include <kern/arch/trap.h>
#include <kern/arch/arch.h>
#include <kern/lib/kprintf.h>
#include <kern/arch/panic.h>
#include <drivers/platform/lapic.h>

#define PRI_WORDS ((NPRI + 63) / 64)

struct runq {
    spinlock_t lock;
    volatile int n;                 /* [lock] threads queued; read racily when choosing */
    volatile int pinned;            /* [lock] of them bound to this CPU alone; read racily */
    volatile uint64_t busy[PRI_WORDS];  /* [lock] bit p: level[p] is not empty; read racily */
    struct {
        struct thread *head, *tail; /* [lock] FIFO of runnable threads at this priority */
    } level[NPRI];
} __cacheline;

LOCK_CLASS(sched_global_class, "sched_global", LK_SPIN);
LOCK_CLASS(runq_cpu_class, "runq_cpu", LK_SPIN);
LOCK_CLASS(runq_cluster_class, "runq_cluster", LK_SPIN);

static struct runq global_rq;
static struct runq cpu_rq[MAX_CPUS];
static struct runq cluster_rq[MAX_CPUS];
static int cpu_cluster[MAX_CPUS];           /* [boot] */
static uint64_t cluster_cpus[MAX_CPUS];     /* [boot] */
static int nclusters;                       /* [boot] */
static volatile uint64_t idle_mask;         /* [a] */
static volatile uint64_t steal_count;       /* [a] */
/* The priority of the thread each CPU runs (-1: idle), and whether it has
 * been asked to reschedule for a higher one (see "Priorities"). */
static struct {
    volatile int pri;           /* [own] written at each switch; read racily */
    volatile bool resched;      /* [a] */
} __cacheline cpu_run[MAX_CPUS];    /* a line each: written at every switch */

extern void swtch(uint64_t *save_rsp, uint64_t new_rsp);

int sched_cluster_of(int cpu) { return cpu_cluster[cpu]; }
uint64_t sched_cluster_mask(int cluster) { return cluster_cpus[cluster]; }
int sched_nclusters(void) { return nclusters; }
uint64_t sched_steals(void) { return steal_count; }

int sched_nr_running(void)
{
    int n = 0;
    for (int i = 0; i < ncpus; i++) {
        struct cpu *c = &cpus[i];
        if (c->online && READ_ONCE(c->thread) != c->idle_thread)
            n++;
        n += cpu_rq[i].n + cluster_rq[i].n;
    }
    return n + global_rq.n;
}

static void build_clusters(void)
{
    nclusters = 0;
    for (int c = 0; c < ncpus; c++) {
        int cl = opts.cluster ? c / opts.cluster : cpus[c].node;
        cpu_cluster[c] = cl;
        cluster_cpus[cl] |= 1UL << c;
        if (cl + 1 > nclusters)
            nclusters = cl + 1;
    }
}

/* VEC_WAKE: returning from the interrupt ends an idle halt; a CPU asked
 * to reschedule has its thread yield on its way back to user mode. */
static void wake_handler(struct trapframe *tf, void *arg)
{
    struct cpu *c = this_cpu();
    if (cpu_run[c->id].resched) {
        cpu_run[c->id].resched = false;
        if (!c->thread->idle)
            thread_ast_post(c->thread, THREAD_AST_PREEMPT);
    }
}

/* Written once at boot, before the first switch; read without a lock. */
static void (*switch_hook)(struct cpu *c, struct thread *prev, struct thread *next);

void sched_set_switch_hook(void (*hook)(struct cpu *c, struct thread *prev, struct thread *next))
{
    switch_hook = hook;
}

void sched_init(void)
{
    spin_init(&global_rq.lock, &sched_global_class);
    for (int i = 0; i < MAX_CPUS; i++) {
        spin_init(&cpu_rq[i].lock, &runq_cpu_class);
        spin_init(&cluster_rq[i].lock, &runq_cluster_class);
    }
    build_clusters();
    for (int i = 0; i < MAX_CPUS; i++)
        cpu_run[i].pri = -1;
    trap_set_handler(VEC_WAKE, wake_handler, NULL);
    schedstat_init();
    sched_class_init();
    static const char *const names[] = { "global", "percpu", "cluster" };
    kprintf("sched: %s run queues, %d cluster%s\n", names[opts.sched], nclusters,
            nclusters == 1 ? "" : "s");
}

/* ---- queue primitives (caller holds rq->lock) ---- */

static bool single_cpu(uint64_t mask) { return mask && !(mask & (mask - 1)); }

/* t->affinity is [a]: sched_set_affinity stores it with no queue lock held,
 * so every read here is an atomic one (found by make KCSAN=1: a plain read
 * in level_take raced with the store). */
static inline uint64_t affinity_of(const struct thread *t)
{
    return __atomic_load_n(&t->affinity, __ATOMIC_RELAXED);
}

/* Is t bound to the CPU whose queue rq is, and to no other?  (No other CPU
 * may ever take it from there: see stealable.) */
static bool bound_to_queue(const struct runq *rq, const struct thread *t)
{
    return rq >= cpu_rq && rq < cpu_rq + MAX_CPUS && affinity_of(t) == 1UL << (rq - cpu_rq);
}

static void rq_push(struct runq *rq, struct thread *t)
{
    ASSERT_HELD(&rq->lock);
    int p = t->pri;
    t->rq_next = NULL;
    t->rq = rq;
    if (rq->level[p].tail)
        rq->level[p].tail->rq_next = t;
    else
        rq->level[p].head = t;
    rq->level[p].tail = t;
    rq->busy[p / 64] |= 1UL << (p % 64);
    rq->n++;
    t->rq_pinned = bound_to_queue(rq, t);
    rq->pinned += t->rq_pinned;
}

/* Unlink t, which follows prev (NULL: t is the head) on its level of rq. */
static void rq_remove_after(struct runq *rq, struct thread *prev, struct thread *t)
{
    ASSERT_HELD(&rq->lock);
    int p = t->pri;
    if (prev)
        prev->rq_next = t->rq_next;
    else
        rq->level[p].head = t->rq_next;
    if (rq->level[p].tail == t)
        rq->level[p].tail = prev;
    if (!rq->level[p].head)
        rq->busy[p / 64] &= ~(1UL << (p % 64));
    rq->n--;
    rq->pinned -= t->rq_pinned;
    t->rq_next = NULL;
    t->rq = NULL;
}

/* Remove and return the first thread allowed on cpu at priority p, or NULL. */
static struct thread *level_take(struct runq *rq, int p, int cpu)
{
    struct thread *prev = NULL;
    for (struct thread *t = rq->level[p].head; t; prev = t, t = t->rq_next) {
        if (affinity_of(t) & (1UL << cpu)) {
            rq_remove_after(rq, prev, t);
            return t;
        }
    }
    return NULL;
}

/* Remove and return the highest-priority thread allowed on cpu, or NULL. */
static struct thread *rq_take(struct runq *rq, int cpu)
{
    for (int w = PRI_WORDS - 1; w >= 0; w--) {
        uint64_t bits = rq->busy[w];
        while (bits) {
            int bit = 63 - __builtin_clzl(bits);
            struct thread *t = level_take(rq, w * 64 + bit, cpu);
            if (t)
                return t;
            bits &= ~(1UL << bit);
        }
    }
    return NULL;
}

/* The highest priority queued on rq (-1: none), read without the lock. */
static int rq_top(const struct runq *rq)
{
    for (int w = PRI_WORDS - 1; w >= 0; w--) {
        uint64_t bits = READ_ONCE(rq->busy[w]);
        if (bits)
            return w * 64 + 63 - __builtin_clzl(bits);
    }
    return -1;
}

/* Unlink t from rq if it is there; true when it was. */
static bool rq_unlink(struct runq *rq, struct thread *t)
{
    struct thread *prev = NULL;
    for (struct thread *q = rq->level[t->pri].head; q; prev = q, q = q->rq_next) {
        if (q == t) {
            rq_remove_after(rq, prev, t);
            return true;
        }
    }
    return false;
}

static struct thread *rq_take_locked(struct runq *rq, int cpu)
{
    if (READ_ONCE(rq->n) == 0)
        return NULL;
    spin_lock(&rq->lock);
    struct thread *t = rq_take(rq, cpu);
    spin_unlock(&rq->lock);
    return t;
}

/* ---- choosing a queue for a runnable thread ---- */

static int least_loaded_cpu(const struct thread *t)
{
    int best = -1;
    for (int c = 0; c < ncpus; c++) {
        if (!(affinity_of(t) & (1UL << c)) || !cpus[c].online)
            continue;
        if (best < 0 || READ_ONCE(cpu_rq[c].n) < READ_ONCE(cpu_rq[best].n))
            best = c;
    }
    return best < 0 ? affinity_first_cpu(affinity_of(t)) : best;
}

static struct runq *choose_percpu(struct thread *t, uint64_t *kick)
{
    int c = (t->cpu >= 0 && (affinity_of(t) & (1UL << t->cpu))) ? t->cpu : least_loaded_cpu(t);
    *kick = 1UL << c;
    return &cpu_rq[c];
}

static int cluster_containing(uint64_t mask)
{
    for (int cl = 0; cl < nclusters; cl++)
        if ((mask & ~cluster_cpus[cl]) == 0)
            return cl;
    return -1;
}

static struct runq *choose_cluster(struct thread *t, uint64_t *kick)
{
    uint64_t allowed = affinity_of(t) & ((ncpus == 64) ? ~0UL : (1UL << ncpus) - 1);
    if (single_cpu(allowed)) {
        int c = __builtin_ctzl(allowed);
        *kick = allowed;
        return &cpu_rq[c];
    }
    int cl = cluster_containing(allowed);
    if (cl < 0 && t->cpu >= 0)
        cl = cpu_cluster[t->cpu];
    if (cl >= 0) {
        *kick = cluster_cpus[cl] & allowed;
        return &cluster_rq[cl];
    }
    *kick = allowed;
    return &global_rq;
}

static struct runq *choose_queue(struct thread *t, uint64_t *kick)
{
    switch (opts.sched) {
    case SCHED_GLOBAL:
        *kick = affinity_of(t);
        return &global_rq;
    case SCHED_PERCPU:
        return choose_percpu(t, kick);
    default:
        return choose_cluster(t, kick);
    }
}

/* Wake one idle CPU among `mask` (not this one); false when none is idle. */
static bool kick_idle(uint64_t mask)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    uint64_t idle = READ_ONCE(idle_mask) & mask & ~(1UL << cpu_id());
    if (!idle)
        return false;
    int c = __builtin_ctzl(idle);
    lapic_send_ipi(cpus[c].apic_id, VEC_WAKE);
    return true;
}

/* A thread at priority pri is waiting for one of the CPUs in mask, none
 * of them idle: ask the one running the lowest priority, if it is lower,
 * to reschedule at its next return to user mode. */
static void preempt_lowest(uint64_t mask, int pri)
{
    int victim = -1;
    for (int c = 0; c < ncpus; c++)
        if ((mask & (1UL << c)) && cpus[c].online &&
            (victim < 0 || cpu_run[c].pri < cpu_run[victim].pri))
            victim = c;
    if (victim < 0 || cpu_run[victim].pri >= pri)
        return;
    if (victim == cpu_id()) {
        thread_ast_post(curthread(), THREAD_AST_PREEMPT);
        return;
    }
    cpu_run[victim].resched = true;
    lapic_send_ipi(cpus[victim].apic_id, VEC_WAKE);
}

void sched_make_runnable(struct thread *t)
{
    uint64_t kick = 0;
    struct runq *rq = choose_queue(t, &kick);
    int pri = sched_priority(t);
    spin_lock(&rq->lock);
    t->state = TS_RUNNABLE;
    t->pri = pri;
    rq_push(rq, t);
    spin_unlock(&rq->lock);
    if (!kick_idle(kick) && pri > PRI_RT_BASE && t != curthread())
        preempt_lowest(kick, pri);
}

/* ---- choosing the next thread on this CPU ---- */

/* How many of a CPU queue's threads another CPU might take, read without
 * the lock: those not bound to that CPU alone (bound_to_queue).  Every idle CPU looks at
 * every queue on each of its ticks, with interrupts off; a queue holding
 * only a bound thread (a test's, a per-CPU daemon's) must not draw them
 * all into its lock for nothing, or the CPU that owns it, and every
 * cross-CPU call to an idle CPU, waits behind that crowd. */
static int stealable(const struct runq *rq)
{
    return READ_ONCE(rq->n) - READ_ONCE(rq->pinned);
}

static struct thread *steal_busiest(int cpu, uint64_t among)
{
    for (int tries = 0; tries < 3; tries++) {
        int best = -1;
        for (int c = 0; c < ncpus; c++) {
            if (c == cpu || !(among & (1UL << c)) || stealable(&cpu_rq[c]) == 0)
                continue;
            if (best < 0 || READ_ONCE(cpu_rq[c].n) > READ_ONCE(cpu_rq[best].n))
                best = c;
        }
        if (best < 0)
            return NULL;
        struct thread *t = rq_take_locked(&cpu_rq[best], cpu);
        if (t) {
            __atomic_add_fetch(&steal_count, 1, __ATOMIC_RELAXED);
            return t;
        }
    }
    return NULL;
}

/* The local queue (cpu's, its cluster's, the global one) whose best
 * thread is the highest, or NULL when all three are empty. */
static struct runq *best_local(int cpu)
{
    struct runq *order[3] = { &cpu_rq[cpu], &cluster_rq[cpu_cluster[cpu]], &global_rq };
    struct runq *best = NULL;
    int best_pri = -1;
    for (int i = 0; i < 3; i++) {
        int top = rq_top(order[i]);
        if (top > best_pri) {
            best = order[i];
            best_pri = top;
        }
    }
    return best;
}

static struct thread *pick_cluster(int cpu)
{
    int cl = cpu_cluster[cpu];
    struct thread *t;
    struct runq *best = best_local(cpu);
    if (best && (t = rq_take_locked(best, cpu)))
        return t;
    if ((t = rq_take_locked(&cpu_rq[cpu], cpu)))
        return t;
    if ((t = rq_take_locked(&cluster_rq[cl], cpu)))
        return t;
    if ((t = rq_take_locked(&global_rq, cpu)))
        return t;
    if ((t = steal_busiest(cpu, cluster_cpus[cl])))
        return t;
    for (int other = 0; other < nclusters; other++)
        if (other != cl && (t = rq_take_locked(&cluster_rq[other], cpu)))
            return t;
    return steal_busiest(cpu, ~cluster_cpus[cl]);
}

static struct thread *pick_next(int cpu)
{
    switch (opts.sched) {
    case SCHED_GLOBAL:
        return rq_take_locked(&global_rq, cpu);
    case SCHED_PERCPU: {
        struct thread *t = rq_take_locked(&cpu_rq[cpu], cpu);
        return t ? t : steal_busiest(cpu, ~0UL);
    }
    default:
        return pick_cluster(cpu);
    }
}

/* ---- switching ---- */

/* Called by every thread right after it is switched in: the previous
 * thread of this CPU is now fully off it. */
void sched_finish_switch(void)
{
    struct cpu *c = this_cpu();
    struct thread *prev = c->switch_from;
    c->switch_from = NULL;
    if (prev)
        __atomic_store_n(&prev->on_cpu, 0, __ATOMIC_RELEASE);
}

/* Switch from prev to next on this CPU.  next must be fully off any
 * other CPU (on_cpu clear): only the idle loop waits for that. */
static void switch_to(struct thread *prev, struct thread *next)
{
    struct cpu *c = this_cpu();
    next->on_cpu = 1;
    next->state = TS_RUNNING;
    next->cpu = c->id;
    next->switches++;
    cpu_run[c->id].pri = next->idle ? -1 : next->pri;
    __atomic_or_fetch(&next->last_ran_mask, 1UL << c->id, __ATOMIC_RELAXED);
    c->thread = next;
    c->held = &next->held;
    c->switch_from = prev;
    if (switch_hook)
        switch_hook(c, prev, next);
    swtch(&prev->rsp, next->rsp);
    sched_finish_switch();
}

/*
 * Leave the current thread for the next runnable one.  If that one is
 * still being switched out by another CPU (it was woken or stolen in the
 * middle of its switch), we do not wait here, half switched: two CPUs
 * could each wait for the thread the other is leaving.  Instead we hand
 * it to this CPU's idle thread, which waits once our thread is fully
 * saved.  A CPU never waits while it holds a half-switched thread, so
 * every wait ends.
 */
static void switch_away(void)
{
    uint64_t f = intr_save();
    struct cpu *c = this_cpu();
    struct thread *prev = c->thread;
    struct thread *next = pick_next(c->id);
    if (next == prev) {
        prev->state = TS_RUNNING;
    } else if (next && !__atomic_load_n(&next->on_cpu, __ATOMIC_ACQUIRE)) {
        switch_to(prev, next);
    } else {
        c->handoff = next;
        switch_to(prev, c->idle_thread);
    }
    intr_restore(f);
}

static void assert_no_spinlocks(const struct thread *t)
{
    for (int i = 0; i < t->held.n; i++)
        if (t->held.e[i].cls->kind == LK_SPIN)
            panic("thread %s switches holding spin lock %s (taken at %lx)",
                  t->name, t->held.e[i].cls->name, t->held.e[i].site);
}

void sched_block(void)
{
    struct thread *t = curthread();
    assert(!t->idle);
    assert_no_spinlocks(t);
    struct mutex_saved sv;
    mutex_release_all(&sv);
    switch_away();
    mutex_reacquire_all(&sv);
}

uint64_t sched_online_mask(void)
{
    uint64_t online = 0;
    for (int c = 0; c < ncpus; c++)
        if (cpus[c].online)
            online |= 1UL << c;
    return online;
}

/*
 * A thread waiting on a queue chosen before its affinity changed may sit
 * where no CPU it is now allowed on looks first (the queue of a CPU it
 * has left): take it off and queue it again by the new mask (and at its
 * new priority when its parameters changed).  A thread
 * that is running or asleep is queued by the new mask when it next is.
 */
static void requeue_stranded(struct thread *t)
{
    struct runq *rq = READ_ONCE(t->rq);
    if (!rq)
        return;
    spin_lock(&rq->lock);
    bool taken = t->rq == rq && rq_unlink(rq, t);
    spin_unlock(&rq->lock);
    if (taken)
        sched_make_runnable(t);
}

/* Ask t, running on another CPU, to yield at its next return to user mode. */
static void yield_remote(struct thread *t)
{
    int c = READ_ONCE(t->cpu);
    if (!__atomic_load_n(&t->on_cpu, __ATOMIC_ACQUIRE))
        return;
    thread_ast_post(t, THREAD_AST_PREEMPT);
    if (c != cpu_id())
        lapic_send_ipi(cpus[c].apic_id, VEC_WAKE);
}

/* A thread running on a CPU its new mask leaves out yields at its next
 * return to user mode (posted here, and that CPU interrupted so one comes
 * soon), and is queued by the mask then: as with Linux's, the new mask
 * holds before the thread runs user code again, not from its next sleep
 * (t_affinity: a child pinned while running, whose next call returned
 * without sleeping, went on reporting its old CPU). */
static void move_off_cpu(struct thread *t, uint64_t mask)
{
    if (!(mask & (1UL << READ_ONCE(t->cpu))))
        yield_remote(t);
}

void sched_set_affinity(struct thread *t, uint64_t mask)
{
    __atomic_store_n(&t->affinity, mask, __ATOMIC_SEQ_CST);
    if (t != curthread()) {
        requeue_stranded(t);
        move_off_cpu(t, mask);
        return;
    }
    if (!(mask & (1UL << cpu_id())))
        thread_yield();     /* queued by the new mask: another CPU runs us */
}

void sched_set_params(struct thread *t, const struct sched_params *sp)
{
    t->rr_left = RR_TICKS;
    WRITE_ONCE(t->sp, *sp);
    if (t == curthread()) {
        thread_ast_post(t, THREAD_AST_PREEMPT);     /* weighed again on its way out */
        return;
    }
    requeue_stranded(t);        /* queued again at its new priority */
    yield_remote(t);
}

void thread_yield(void)
{
    struct thread *t = curthread();
    if (!t || t->idle)
        return;
    sched_make_runnable(t);
    sched_block();
}

/* The next thread for an idle CPU: one handed over by switch_away, or
 * one from the queues (announcing itself idle first, see above). */
static struct thread *idle_pick(struct cpu *c, uint64_t bit)
{
    struct thread *next = c->handoff;
    c->handoff = NULL;
    if (next)
        return next;
    __atomic_or_fetch(&idle_mask, bit, __ATOMIC_SEQ_CST);
    next = pick_next(c->id);
    if (next)
        __atomic_and_fetch(&idle_mask, ~bit, __ATOMIC_SEQ_CST);
    return next;
}

void thread_idle_loop(void)
{
    struct cpu *c = this_cpu();
    uint64_t bit = 1UL << c->id;
    for (;;) {
        intr_disable();
        struct thread *next = idle_pick(c, bit);
        if (next) {
            while (__atomic_load_n(&next->on_cpu, __ATOMIC_ACQUIRE))
                cpu_relax();
            switch_to(c->thread, next);
            continue;
        }
        __asm__ volatile("sti; hlt" ::: "memory");
        __atomic_and_fetch(&idle_mask, ~bit, __ATOMIC_SEQ_CST);
    }
}
