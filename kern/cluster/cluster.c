/*
 * Hurricane's hierarchical clustering (seed 000, sections 2.2-2.3), as a
 * boot option: cluster=N puts N consecutive CPUs in each cluster,
 * cluster=node one cluster per NUMA node (the same parsing and division as
 * the run queues' in kern/sched/sched.c); cluster=1 makes every CPU its own
 * cluster and cluster=ncpu one cluster of all.  Without cluster= nothing
 * in this folder runs: cluster_on() is false, no map is built, no call is
 * ever sent (only the tests' own maps send some), and the clustered
 * structures' hooks fall through to
 * the unclustered code after one test of a boot-time flag.
 *
 * Theory.  Instead of one set of kernel structures shared by every CPU,
 * each cluster has its own instance of a clustered structure, with its own
 * coarse lock (a hybrid lock, kern/cluster/hybrid.c), its memory on the
 * cluster's NUMA node (cluster_alloc_instance), touched only by the CPUs
 * of the cluster.  Read-mostly data is replicated into each cluster that
 * uses it; write-shared data lives in one cluster, its home.  An operation
 * on another cluster's instance is a cross-cluster call: a remote
 * procedure call carried by an interrupt (VEC_CLUSTER) from the ith CPU
 * of the source cluster to the ith CPU of the target (wrapping when the
 * target has fewer), so the calls spread over the target's CPUs as in the
 * paper's footnote 3.  The caller either waits (cluster_call) or continues
 * and waits later (cluster_call_start/cluster_call_wait), which is how an
 * invalidation is sent to every cluster in parallel: the tree of the paper
 * with its three levels (CPU, cluster, system).
 *
 * The call itself.  Each CPU has an inbox, a lock-free stack of struct
 * cluster_call pushed with compare-and-swap; the push that finds the inbox
 * empty sends the interrupt, and the handler takes the whole stack with
 * one exchange and runs each call, oldest first.  The target runs fn with
 * interrupts off, on top of whatever it interrupted: fn must never wait
 * for a reserve bit (the interrupted code may hold it: the processor
 * itself is the locked resource of section 2.3) and fails with -EDEADLK
 * instead, which cluster_call_optimistic turns into a retry.  Nor may fn
 * take a lock the interrupted code could hold: the coarse locks are spin
 * locks, which disable interrupts, so a CPU never takes the interrupt while
 * holding its cluster's coarse lock.  A waiting caller serves its own
 * inbox while it waits (and takes interrupts if they are on), so two CPUs
 * calling each other both make progress: no call waits on a CPU that is
 * itself waiting without serving.
 *
 * Liveness on one CPU.  The kernel is not preemptive, so a thread that
 * spins never lets the other threads of its CPU run.  A caller waiting
 * for a call and every back-off (cluster_backoff: the retries of
 * cluster_call_optimistic, the waits on reserve bits) therefore yield
 * the CPU after a bound when they may (a thread, interrupts on, no spin
 * lock held); in an interrupt or under a spin lock they keep spinning
 * and serving.  A waiting caller also interrupts its target again, soon
 * and then at doubling intervals, in case the first interrupt was lost.
 * (The livelock issue 20 saw in dnlc_mp_1cpu was a target CPU kept with
 * its interrupts off: every idle CPU tried on every tick to steal the
 * test's threads bound to one CPU, queueing on that run-queue lock; the
 * scheduler now leaves such queues alone, kern/sched/sched.c.)
 *
 * Locks: none of its own.  The inboxes are atomic; the map is written once
 * at boot ([c]); the statistics are atomic counters ([a]), one cache line
 * per cluster.  A caller must hold no spin lock across a call it waits
 * for (section 2.3: reserve, drop the locks, then call).
 */
#include <kern/cluster/cluster.h>
#include <kern/abi/tempest_abi.h>
#include <kern/arch/arch.h>
#include <kern/arch/trap.h>
#include <kern/lib/errno.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/options.h>
#include <kern/lib/string.h>
#include <kern/lock/spinlock.h>
#include <kern/sched/thread.h>
#include <kern/vm/page.h>
#include <drivers/platform/lapic.h>

/* One CPU's inbox, on a cache line of its own. */
struct inbox {
    struct cluster_call *head;  /* [a] newest first */
} __cacheline;

static struct inbox inboxes[MAX_CPUS];
static struct cluster_map sys_map;      /* [c] after cluster_init */
bool cluster_active;                    /* [c] */

struct cluster_map *cluster_sys(void) { return cluster_active ? &sys_map : NULL; }

/* ---- the map ---- */

/* The cluster a CPU falls in before renumbering: its block of per CPUs,
 * or its node. */
static int raw_cluster(int cpu, int per)
{
    return per ? cpu / per : cpus[cpu].node;
}

void cluster_map_build(struct cluster_map *m, int per)
{
    int renumber[MAX_CPUS];
    memset(m, 0, sizeof *m);
    for (int i = 0; i < MAX_CPUS; i++)
        renumber[i] = -1;
    m->per = per;
    for (int c = 0; c < ncpus; c++) {
        int raw = raw_cluster(c, per);
        if (renumber[raw] < 0)
            renumber[raw] = m->ncl++;
        int cl = renumber[raw];
        m->cl_of[c] = (int8_t)cl;
        m->idx_of[c] = m->size[cl];
        m->member[cl][m->size[cl]++] = (int8_t)c;
    }
    for (int cl = 0; cl < m->ncl; cl++)
        m->node[cl] = (int8_t)cpus[m->member[cl][0]].node;
}

int cluster_self(const struct cluster_map *m)
{
    return m->cl_of[cpu_id()];
}

int cluster_target_cpu(const struct cluster_map *m, int src, int cl)
{
    return m->member[cl][m->idx_of[src] % m->size[cl]];
}

/* ---- memory ---- */

static unsigned order_for(size_t size)
{
    unsigned order = 0;
    while (((size_t)PAGE_SIZE << order) < size)
        order++;
    return order;
}

void *cluster_alloc_instance(const struct cluster_map *m, int cl, size_t size)
{
    unsigned order = order_for(size);
    struct page *pg = page_alloc_node(order, m->node[cl]);
    if (!pg)
        return NULL;
    void *va = page_to_virt(pg);
    memset(va, 0, (size_t)PAGE_SIZE << order);
    return va;
}

void cluster_free_instance(void *p, size_t size)
{
    if (p)
        page_free(virt_to_page(p), order_for(size));
}

/* ---- calls ---- */

/* May this CPU give itself to another thread here?  Only a kernel thread
 * (not the idle one) outside any interrupt, with interrupts on and no
 * spin lock held: a thread that waits in an interrupt or under a spin
 * lock must spin (and serves its calls meanwhile). */
static bool may_yield(void)
{
    struct thread *t = curthread();
    return t && !t->idle && !this_cpu()->intr_depth && (read_rflags() & RFLAGS_IF) &&
           spin_depth() == 0;
}

/* After this many back-off steps a thread that may yields the CPU on
 * every further step: the kernel is not preemptive, so the thread whose
 * reservation it waits for may be another thread of this same CPU, which
 * runs only when this one yields.  (Spinning on alone, two threads on one
 * CPU can wait for each other for ever.) */
#define BACKOFF_YIELD_AFTER 4

/* Back off for a random time of up to 2^min(attempt, 12) pauses: two
 * CPUs retrying against each other in step would meet again each time.
 * With interrupts off, serve this CPU's calls meanwhile: a caller's
 * back-off is exactly when its reservations are free for the others.
 * From attempt BACKOFF_YIELD_AFTER on, yield the CPU too when allowed. */
void cluster_backoff(unsigned *attempt)
{
    unsigned n = 1u << (*attempt < 12 ? *attempt : 12);
    unsigned spins = n / 2 + (unsigned)(rdtsc() % n);
    bool serve = !(read_rflags() & RFLAGS_IF);
    if (*attempt >= BACKOFF_YIELD_AFTER && may_yield())
        thread_yield();
    for (unsigned i = 0; i < spins; i++) {
        if (serve && i % 64 == 0)
            cluster_serve();
        cpu_relax();
    }
    (*attempt)++;
}

/* Run the calls of one taken stack, oldest first (the stack is newest
 * first, so reverse it).  next is read before done is set: once done,
 * the caller may reuse the struct. */
static void run_calls(struct cluster_call *list)
{
    struct cluster_call *oldest = NULL;
    while (list) {
        struct cluster_call *next = list->next;
        list->next = oldest;
        oldest = list;
        list = next;
    }
    while (oldest) {
        struct cluster_call *next = oldest->next;
        oldest->result = oldest->fn(oldest->arg);
        __atomic_store_n(&oldest->done, 1, __ATOMIC_RELEASE);
        oldest = next;
    }
}

void cluster_serve(void)
{
    struct inbox *in = &inboxes[cpu_id()];
    struct cluster_call *list;
    while ((list = __atomic_exchange_n(&in->head, NULL, __ATOMIC_ACQUIRE)))
        run_calls(list);
}

static void cluster_interrupt(struct trapframe *tf, void *unused)
{
    cluster_serve();
}

/* Push c on the target's inbox; interrupt it if the inbox was empty.
 * Interrupts are off meanwhile: an xAPIC's interrupt command is two
 * register writes, and a handler sending its own between them would
 * misdirect ours. */
static void post(struct cluster_call *c)
{
    struct inbox *in = &inboxes[c->target];
    uint64_t flags = intr_save();
    struct cluster_call *old = __atomic_load_n(&in->head, __ATOMIC_RELAXED);
    do {
        c->next = old;
    } while (!__atomic_compare_exchange_n(&in->head, &old, c, true, __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED));
    if (!old)
        lapic_send_ipi(cpus[c->target].apic_id, VEC_CLUSTER);
    intr_restore(flags);
}

/* Interrupt the target again (a waiter that has waited long: cheap
 * insurance against an interrupt lost on the way; an extra one finds an
 * empty inbox and does nothing). */
static void nudge(int target)
{
    uint64_t flags = intr_save();
    lapic_send_ipi(cpus[target].apic_id, VEC_CLUSTER);
    intr_restore(flags);
}

void cluster_call_start(struct cluster_map *m, int cl, struct cluster_call *c,
                        long (*fn)(void *), void *arg)
{
    int src = cpu_id();
    c->fn = fn;
    c->arg = arg;
    c->result = 0;
    c->next = NULL;
    if (m->cl_of[src] == cl) {
        /* The caller's own cluster: no call, the function runs here. */
        c->target = src;
        c->result = fn(arg);
        c->done = 1;
        return;
    }
    c->done = 0;
    c->target = cluster_target_cpu(m, src, cl);
    cluster_count(m, m->cl_of[src], calls_out);
    cluster_count(m, cl, calls_in);
    post(c);
}

/* A waiting caller interrupts its target again after NUDGE_FIRST spins,
 * then after twice as long each time up to NUDGE_MAX (cheap insurance: an
 * extra interrupt finds an empty inbox).  One that may yields the CPU
 * every WAIT_YIELD_SPINS, so the other threads of its CPU run while its
 * target is slow (an idle CPU can spend long with interrupts off in the
 * scheduler's queues under an overloaded emulator). */
#define NUDGE_FIRST (1u << 12)
#define NUDGE_MAX (1u << 18)
#define WAIT_YIELD_SPINS (1u << 14)
#define LONG_WAIT_SPINS (1u << 22)

/* Once per boot, a call that waits far longer than a call takes: the
 * target CPU serves no interrupts (spinning with them off, or an
 * overloaded emulator host).  A hint for a hang's dump, not an error. */
static void report_long_wait(const struct cluster_call *c)
{
    static int reported;
    if (__atomic_exchange_n(&reported, 1, __ATOMIC_RELAXED))
        return;
    kprintf("cluster: cpu %d has waited %u spins for its call to cpu %d (in an interrupt: %s)\n",
            cpu_id(), LONG_WAIT_SPINS, c->target, cpus[c->target].intr_depth ? "yes" : "no");
}

long cluster_call_wait(struct cluster_call *c)
{
    unsigned spins = 0, nudge_at = NUDGE_FIRST, interval = NUDGE_FIRST;
    while (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE)) {
        /* With interrupts off no call reaches this CPU by interrupt:
         * serve them here, so a caller never blocks a call to itself. */
        if (!(read_rflags() & RFLAGS_IF))
            cluster_serve();
        if (++spins == nudge_at) {
            nudge(c->target);
            interval = interval < NUDGE_MAX ? interval * 2 : NUDGE_MAX;
            nudge_at = spins + interval;
        }
        if (spins % WAIT_YIELD_SPINS == 0 && may_yield())
            thread_yield();
        if (spins == LONG_WAIT_SPINS)
            report_long_wait(c);
        cpu_relax();
    }
    return c->result;
}

long cluster_call(struct cluster_map *m, int cl, long (*fn)(void *), void *arg)
{
    struct cluster_call c;
    cluster_call_start(m, cl, &c, fn, arg);
    return cluster_call_wait(&c);
}

long cluster_call_optimistic(struct cluster_map *m, int cl, long (*fn)(void *), void *arg,
                             const struct cluster_undo *u)
{
    unsigned attempt = 0;
    for (;;) {
        long r = cluster_call(m, cl, fn, arg);
        if (r != -EDEADLK)
            return r;
        cluster_count(m, cluster_self(m), retries);
        if (u && u->undo)
            u->undo(u->arg);
        cluster_backoff(&attempt);
        if (u && u->redo && !u->redo(u->arg))
            return -EAGAIN;
    }
}

/* ---- boot and statistics ---- */

void cluster_init(void)
{
    /* The interrupt is taken always (it costs nothing until a call is
     * sent): the ktests build maps of their own on any boot. */
    trap_set_handler(VEC_CLUSTER, cluster_interrupt, NULL);
    if (!opts.clustering)
        return;
    cluster_map_build(&sys_map, opts.cluster);
    cluster_active = true;
    kprintf("cluster: %d cluster%s of %s cpus\n", sys_map.ncl, sys_map.ncl == 1 ? "" : "s",
            opts.cluster ? "consecutive" : "one node's");
}

int cluster_stats_get(struct tempest_cluster_stat *out, int max)
{
    if (!cluster_active)
        return 0;
    for (int cl = 0; cl < sys_map.ncl && cl < max; cl++) {
        const struct cluster_stats *s = &sys_map.stats[cl];
        struct tempest_cluster_stat *o = &out[cl];
        memset(o, 0, sizeof *o);
        o->cluster = (uint32_t)cl;
        o->ncpus = (uint32_t)sys_map.size[cl];
        o->node = (uint32_t)sys_map.node[cl];
        o->first_cpu = (uint32_t)sys_map.member[cl][0];
        o->calls_out = __atomic_load_n(&s->calls_out, __ATOMIC_RELAXED);
        o->calls_in = __atomic_load_n(&s->calls_in, __ATOMIC_RELAXED);
        o->retries = __atomic_load_n(&s->retries, __ATOMIC_RELAXED);
        o->replications = __atomic_load_n(&s->replications, __ATOMIC_RELAXED);
        o->combined = __atomic_load_n(&s->combined, __ATOMIC_RELAXED);
        o->invalidations = __atomic_load_n(&s->invalidations, __ATOMIC_RELAXED);
        o->reserve_waits = __atomic_load_n(&s->reserve_waits, __ATOMIC_RELAXED);
        o->pool_refills = __atomic_load_n(&s->pool_refills, __ATOMIC_RELAXED);
    }
    return sys_map.ncl;
}
