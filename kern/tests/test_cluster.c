/*
 * ktests for Hurricane's clustering (kern/cluster/).  The framework's tests
 * build their own maps of 1, 4 and 16 CPUs per cluster over this boot's
 * CPUs, so one boot covers every size (on hector and numachine, 16 CPUs:
 * 16 clusters, 4 and 1); the clustered DNLC's run on the boot's own map
 * and skip without cluster=.
 *
 *   cluster_maps        every CPU in exactly one cluster; a call from the
 *                       ith CPU of a cluster goes to the ith of the target
 *                       (wrapping); cluster=N's map is the sched's division
 *   cluster_calls       every CPU at once calls every other cluster, waiting
 *                       and continuing: each call runs on the right CPU,
 *                       nobody deadlocks, the counts add up
 *   cluster_forced_conflict
 *                       a remote operation meeting a reserve bit fails and
 *                       is retried (section 2.3), exactly as often as the
 *                       bit stays held, then succeeds
 *   cluster_mutual_conflict
 *                       two CPUs of two clusters each hold their own
 *                       element and want the other's: the optimistic
 *                       protocol retries instead of deadlocking
 *   cluster_same_cpu_waiter
 *                       two threads on one CPU: one holds a reserve bit
 *                       and gives the CPU away, the other waits for the
 *                       bit; the waiter's back-off yields, so the holder
 *                       runs and releases it (the kernel is not
 *                       preemptive: spinning alone it would wait for ever)
 *   cluster_dnlc_coherent
 *                       a name entered once is replicated into every
 *                       cluster that looks it up; re-pointing it and
 *                       removing it reach every replica; counts balance
 *   cluster_dnlc_combining
 *                       every CPU looking up one name at once makes exactly
 *                       one replica per cluster (requests combined)
 */
#include <kern/tests/ktest.h>
#include <kern/cluster/cluster.h>
#include <kern/cluster/hybrid.h>
#include <kern/cluster/cl_dnlc.h>
#include <kern/sched/sched.h>
#include <kern/sched/thread.h>
#include <kern/vfs/dnlc.h>
#include <kern/vfs/vnode.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/arch/cpu.h>
#include <kern/arch/smp.h>
#include <kern/lib/errno.h>
#include <kern/lib/options.h>
#include <kern/lib/string.h>

LOCK_CLASS(ktest_hybrid_class, "ktest_hybrid", LK_SPIN);

static const int sizes[] = { 1, 4, 16 };
static struct cluster_map test_map;

/* Run fn(arg) in a kernel thread on each online CPU of mask, at once, and
 * wait for all: the cluster code runs as the kernel's own does, in a
 * thread with interrupts on.  Returns false if a thread could not start. */
static bool run_on_cpus(void (*fn)(void *), void *arg, uint64_t mask)
{
    static struct thread *t[MAX_CPUS];
    bool ok = true;
    for (int c = 0; c < ncpus; c++) {
        t[c] = NULL;
        if (cpus[c].online && (mask & (1UL << c)) && !(t[c] = thread_create("ktest_cluster", fn,
                                                                          arg, 1UL << c)))
            ok = false;
    }
    for (int c = 0; c < ncpus; c++)
        if (t[c])
            thread_join(t[c]);
    return ok;
}

/* ---- maps ---- */

static int check_map(const struct cluster_map *m, int per)
{
    int seen[MAX_CPUS] = { 0 };
    KT_ASSERT(m->ncl >= 1 && m->ncl <= ncpus);
    if (per)
        KT_ASSERT_EQ(m->ncl, (ncpus + per - 1) / per);
    for (int cl = 0; cl < m->ncl; cl++) {
        KT_ASSERT(m->size[cl] >= 1);
        for (int i = 0; i < m->size[cl]; i++) {
            int c = m->member[cl][i];
            seen[c]++;
            KT_ASSERT_EQ(m->cl_of[c], cl);
            KT_ASSERT_EQ(m->idx_of[c], i);
        }
    }
    for (int c = 0; c < ncpus; c++) {
        KT_ASSERT_EQ(seen[c], 1);
        for (int cl = 0; cl < m->ncl; cl++) {
            int t = cluster_target_cpu(m, c, cl);
            KT_ASSERT_EQ(m->cl_of[t], cl);
            KT_ASSERT_EQ(m->idx_of[t], m->idx_of[c] % m->size[cl]);
        }
    }
    return 0;
}

KTEST(cluster_maps)
{
    for (unsigned i = 0; i < ARRAY_SIZE(sizes); i++) {
        cluster_map_build(&test_map, sizes[i]);
        if (check_map(&test_map, sizes[i]))
            return 1;
    }
    cluster_map_build(&test_map, 0);
    if (check_map(&test_map, 0))
        return 1;
    struct cluster_map *sys = cluster_sys();
    KT_ASSERT_EQ(sys != NULL, opts.clustering);
    if (sys) {
        if (check_map(sys, opts.cluster))
            return 1;
        /* The run queues' clusters are the same groups of CPUs. */
        for (int c = 0; c < ncpus; c++)
            for (int d = 0; d < ncpus; d++)
                KT_ASSERT_EQ(sys->cl_of[c] == sys->cl_of[d],
                             sched_cluster_of(c) == sched_cluster_of(d));
    }
    return 0;
}

/* ---- calls ---- */

static volatile int call_errors;        /* [a] */

static long whoami(void *arg)
{
    return cpu_id();
}

/* On every CPU: call every cluster, waiting, then all at once. */
static void call_everyone(void *arg)
{
    struct cluster_map *m = arg;
    static struct cluster_call calls[MAX_CPUS][MAX_CPUS];
    int me = cpu_id();
    for (int cl = 0; cl < m->ncl; cl++) {
        long r = cluster_call(m, cl, whoami, NULL);
        int want = cl == m->cl_of[me] ? me : cluster_target_cpu(m, me, cl);
        if (r != want)
            __atomic_add_fetch(&call_errors, 1, __ATOMIC_RELAXED);
    }
    for (int cl = 0; cl < m->ncl; cl++)
        cluster_call_start(m, cl, &calls[me][cl], whoami, NULL);
    for (int cl = 0; cl < m->ncl; cl++) {
        long r = cluster_call_wait(&calls[me][cl]);
        if (r != calls[me][cl].target || m->cl_of[r] != cl)
            __atomic_add_fetch(&call_errors, 1, __ATOMIC_RELAXED);
    }
}

KTEST(cluster_calls)
{
    for (unsigned i = 0; i < ARRAY_SIZE(sizes); i++) {
        cluster_map_build(&test_map, sizes[i]);
        call_errors = 0;
        KT_ASSERT(run_on_cpus(call_everyone, &test_map, ~0UL));
        KT_ASSERT_EQ(call_errors, 0);
        uint64_t out = 0, in = 0;
        for (int cl = 0; cl < test_map.ncl; cl++) {
            out += test_map.stats[cl].calls_out;
            in += test_map.stats[cl].calls_in;
            /* Each CPU called each other cluster twice. */
            KT_ASSERT_EQ(test_map.stats[cl].calls_out,
                         2 * test_map.size[cl] * (test_map.ncl - 1));
        }
        KT_ASSERT_EQ(out, 2 * ncpus_online * (test_map.ncl - 1));
        KT_ASSERT_EQ(in, out);
    }
    return 0;
}

/* ---- reserve bits and the optimistic protocol ---- */

struct element {
    struct hlock h;             /* its instance's coarse lock */
    uint32_t flags;             /* reserve bit */
};

static struct element elems[2];
static bool elem_live[2];       /* its lock is registered with lockstat */

/* A fresh element of cluster cl of the test map (a lock is unregistered
 * before its memory is initialized again, even after a failed test). */
static void elem_init(struct element *e, int cl)
{
    if (elem_live[e - elems])
        hlock_destroy(&e->h);
    hlock_init(&e->h, &ktest_hybrid_class, &test_map, cl);
    elem_live[e - elems] = true;
    e->flags = 0;
}

static void elem_done(struct element *e)
{
    hlock_destroy(&e->h);
    elem_live[e - elems] = false;
}

static uint32_t *find_elem(void *key)
{
    return &((struct element *)key)->flags;
}

/* The remote side: reserve the element or fail; release it at once. */
static long remote_reserve(void *arg)
{
    struct element *e = arg;
    bool conflict;
    uint32_t *w = hlock_reserve_remote(&e->h, find_elem, e, &conflict);
    if (conflict)
        return -EDEADLK;
    hres_clear(w);
    return 0;
}

struct forced {
    struct element *held;       /* the element whose bit "another CPU" holds */
    int undos, redos, release_after;
};

static void forced_undo(void *arg)
{
    ((struct forced *)arg)->undos++;
}

/* After release_after retries the holder is done with the element. */
static bool forced_redo(void *arg)
{
    struct forced *f = arg;
    if (++f->redos == f->release_after)
        hres_clear(&f->held->flags);
    return true;
}

/* A cluster other than the calling CPU's (the last one). */
static int other_cluster(const struct cluster_map *m)
{
    int me = cluster_self(m);
    return me == m->ncl - 1 ? 0 : m->ncl - 1;
}

/* The retries counted in every cluster: a caller that slept while the
 * holder was busy may wake on another cluster's CPU (sched=global), and
 * each retry is counted where it ran. */
static uint64_t all_retries(const struct cluster_map *m)
{
    uint64_t n = 0;
    for (int c = 0; c < m->ncl; c++)
        n += m->stats[c].retries;
    return n;
}

KTEST(cluster_forced_conflict)
{
    for (unsigned i = 0; i < ARRAY_SIZE(sizes); i++) {
        cluster_map_build(&test_map, sizes[i]);
        if (test_map.ncl < 2)
            continue;
        int target = other_cluster(&test_map);
        struct element *e = &elems[0];
        elem_init(e, target);
        /* A CPU of the target cluster reserved the element before its own
         * cross-cluster call, say. */
        KT_ASSERT(hlock_reserve(&e->h, find_elem, e) == &e->flags);
        struct forced f = { .held = e, .release_after = 3 };
        struct cluster_undo u = { forced_undo, forced_redo, &f };
        uint64_t before = all_retries(&test_map);
        long r = cluster_call_optimistic(&test_map, target, remote_reserve, e, &u);
        KT_ASSERT_EQ(r, 0);
        KT_ASSERT_EQ(f.undos, 3);
        KT_ASSERT_EQ(f.redos, 3);
        KT_ASSERT_EQ(all_retries(&test_map) - before, 3);
        KT_ASSERT(!hres_busy(&e->flags));
        elem_done(e);
    }
    return 0;
}

/* Two CPUs, each the first of its cluster: reserve your own element, call
 * the other's cluster to reserve its element too, with the protocol. */
enum { MUTUAL_ROUNDS = 40 };
static int mutual_cpu[2];
static volatile int mutual_done[2];     /* [a] rounds completed */

struct mutual { int side; };

static void mutual_undo(void *arg)
{
    hres_clear(&elems[((struct mutual *)arg)->side].flags);
}

static bool mutual_redo(void *arg)
{
    struct element *mine = &elems[((struct mutual *)arg)->side];
    hlock_reserve(&mine->h, find_elem, mine);
    return true;
}

static void mutual_body(void *arg)
{
    int side = cpu_id() == mutual_cpu[0] ? 0 : cpu_id() == mutual_cpu[1] ? 1 : -1;
    if (side < 0)
        return;
    struct mutual me = { side };
    struct element *mine = &elems[side], *theirs = &elems[1 - side];
    struct cluster_undo u = { mutual_undo, mutual_redo, &me };
    for (int i = 0; i < MUTUAL_ROUNDS; i++) {
        hlock_reserve(&mine->h, find_elem, mine);
        long r = cluster_call_optimistic(&test_map, theirs->h.cl, remote_reserve, theirs, &u);
        hres_clear(&mine->flags);
        if (r == 0)
            __atomic_add_fetch(&mutual_done[side], 1, __ATOMIC_RELAXED);
    }
}

KTEST(cluster_mutual_conflict)
{
    for (unsigned i = 0; i < ARRAY_SIZE(sizes); i++) {
        cluster_map_build(&test_map, sizes[i]);
        if (test_map.ncl < 2)
            continue;
        for (int s = 0; s < 2; s++) {
            int cl = s == 0 ? 0 : test_map.ncl - 1;
            mutual_cpu[s] = test_map.member[cl][0];
            elem_init(&elems[s], cl);
            mutual_done[s] = 0;
        }
        KT_ASSERT(run_on_cpus(mutual_body, NULL, (1UL << mutual_cpu[0]) | (1UL << mutual_cpu[1])));
        elem_done(&elems[0]);
        elem_done(&elems[1]);
        KT_ASSERT_EQ(mutual_done[0], MUTUAL_ROUNDS);
        KT_ASSERT_EQ(mutual_done[1], MUTUAL_ROUNDS);
        KT_ASSERT(!hres_busy(&elems[0].flags) && !hres_busy(&elems[1].flags));
    }
    return 0;
}

/* Two threads pinned to one CPU.  The holder reserves the element, lets
 * the waiter run (as a caller waiting for a slow cross-cluster call
 * does), and releases the bit only once it runs again; the waiter wants
 * the element meanwhile.  Nothing preempts the waiter's back-off, so the
 * holder runs again only if that back-off yields. */
enum { SC_START, SC_HELD, SC_WAITING, SC_RELEASED, SC_GOT };
static volatile int same_cpu_step;      /* [a] */

static void wait_for_step(int step)
{
    while (__atomic_load_n(&same_cpu_step, __ATOMIC_ACQUIRE) < step)
        thread_yield();
}

static void set_step(int step)
{
    __atomic_store_n(&same_cpu_step, step, __ATOMIC_RELEASE);
}

static void same_cpu_holder(void *arg)
{
    struct element *e = arg;
    hlock_reserve(&e->h, find_elem, e);
    set_step(SC_HELD);
    wait_for_step(SC_WAITING);
    /* The waiter said it is about to wait; give it the CPU once more so
     * it is inside its back-off when we come back. */
    thread_yield();
    set_step(SC_RELEASED);
    hres_clear(&e->flags);
}

static void same_cpu_waiter(void *arg)
{
    struct element *e = arg;
    wait_for_step(SC_HELD);
    set_step(SC_WAITING);
    uint32_t *w = hlock_reserve(&e->h, find_elem, e);
    if (__atomic_load_n(&same_cpu_step, __ATOMIC_ACQUIRE) == SC_RELEASED)
        set_step(SC_GOT);
    hres_clear(w);
}

KTEST(cluster_same_cpu_waiter)
{
    cluster_map_build(&test_map, 1);
    int me = cpu_id();
    struct element *e = &elems[0];
    elem_init(e, test_map.cl_of[me]);
    set_step(SC_START);
    uint64_t waits0 = test_map.stats[test_map.cl_of[me]].reserve_waits;
    struct thread *holder = thread_create("ktest_holder", same_cpu_holder, e, 1UL << me);
    struct thread *waiter = thread_create("ktest_waiter", same_cpu_waiter, e, 1UL << me);
    if (holder)
        thread_join(holder);
    if (waiter)
        thread_join(waiter);
    uint64_t waits = test_map.stats[test_map.cl_of[me]].reserve_waits - waits0;
    bool busy = hres_busy(&e->flags);
    elem_done(e);
    KT_ASSERT(holder && waiter);
    KT_ASSERT_EQ(same_cpu_step, SC_GOT);
    KT_ASSERT(waits >= 1);
    KT_ASSERT(!busy);
    return 0;
}

/* ---- the clustered DNLC ---- */

static const struct vnodeops fake_ops = { 0 };
static struct vfs fake_vfs;
static struct vnode dir, f1, f2;

static void fresh_vnodes(void)
{
    dnlc_purge();
    vn_init(&dir, &fake_ops, VDIR, &fake_vfs, NULL);
    vn_init(&f1, &fake_ops, VREG, &fake_vfs, NULL);
    vn_init(&f2, &fake_ops, VREG, &fake_vfs, NULL);
}

static void drop_vnodes(void)
{
    dnlc_purge();
    vn_destroy(&dir);
    vn_destroy(&f1);
    vn_destroy(&f2);
}

/* A lookup of "shared" in dir run on one CPU: what it found. */
static struct vnode *found[MAX_CPUS];

static void lookup_here(void *arg)
{
    struct vnode *vp = dnlc_lookup(&dir, arg, kcred);
    found[cpu_id()] = vp;
    if (vp)
        VN_RELE(vp);
}

/* Look name up from the first CPU of every cluster; each must find want. */
static int lookup_everywhere(struct cluster_map *m, const char *name, struct vnode *want)
{
    for (int cl = 0; cl < m->ncl; cl++) {
        int c = m->member[cl][0];
        found[c] = (struct vnode *)1;
        if (!run_on_cpus(lookup_here, (void *)name, 1UL << c))
            KT_ASSERT(!"thread_create failed");
        KT_ASSERT(found[c] == want);
    }
    return 0;
}

static uint64_t total(struct cluster_map *m, size_t field)
{
    uint64_t n = 0;
    for (int cl = 0; cl < m->ncl; cl++)
        n += *(uint64_t *)((char *)&m->stats[cl] + field);
    return n;
}

static int coherent(struct cluster_map *m)
{
    uint64_t rep0 = total(m, offsetof(struct cluster_stats, replications));
    dnlc_enter(&dir, "shared", &f1, kcred);
    KT_ASSERT_EQ(cl_dnlc_copies(&dir, "shared", kcred), 1);
    if (lookup_everywhere(m, "shared", &f1))
        return 1;
    /* One copy per cluster, each holding f1 and dir. */
    KT_ASSERT_EQ(cl_dnlc_copies(&dir, "shared", kcred), m->ncl);
    KT_ASSERT_EQ(total(m, offsetof(struct cluster_stats, replications)) - rep0, m->ncl - 1);
    KT_ASSERT_EQ(f1.v_count, 1 + m->ncl);
    KT_ASSERT_EQ(dir.v_count, 1 + m->ncl);
    /* A write (re-pointing the name) is seen by every cluster. */
    dnlc_enter(&dir, "shared", &f2, kcred);
    KT_ASSERT_EQ(f1.v_count, 1);
    if (lookup_everywhere(m, "shared", &f2))
        return 1;
    /* Removal reaches every replica. */
    dnlc_remove(&dir, "shared");
    KT_ASSERT_EQ(cl_dnlc_copies(&dir, "shared", kcred), 0);
    if (lookup_everywhere(m, "shared", NULL))
        return 1;
    KT_ASSERT_EQ(f2.v_count, 1);
    KT_ASSERT_EQ(dir.v_count, 1);
    /* Purging by vnode also reaches the replicas. */
    dnlc_enter(&dir, "shared", &f1, kcred);
    if (lookup_everywhere(m, "shared", &f1))
        return 1;
    dnlc_purge_vp(&f1);
    KT_ASSERT_EQ(f1.v_count, 1);
    KT_ASSERT_EQ(dir.v_count, 1);
    return 0;
}

KTEST(cluster_dnlc_coherent)
{
    struct cluster_map *m = cluster_sys();
    if (!m)
        KT_SKIP("boot without cluster=: the DNLC is not clustered");
    fresh_vnodes();
    int r = coherent(m);
    drop_vnodes();
    return r;
}

static void lookup_all_cpus(void *arg)
{
    lookup_here(arg);
}

KTEST(cluster_dnlc_combining)
{
    struct cluster_map *m = cluster_sys();
    if (!m)
        KT_SKIP("boot without cluster=: the DNLC is not clustered");
    fresh_vnodes();
    uint64_t rep0 = total(m, offsetof(struct cluster_stats, replications));
    dnlc_enter(&dir, "burst", &f1, kcred);
    KT_ASSERT(run_on_cpus(lookup_all_cpus, "burst", ~0UL));
    int bad = 0;
    for (int c = 0; c < ncpus; c++)
        bad += cpus[c].online && found[c] != &f1;
    uint64_t reps = total(m, offsetof(struct cluster_stats, replications)) - rep0;
    int copies = cl_dnlc_copies(&dir, "burst", kcred);
    drop_vnodes();
    KT_ASSERT_EQ(bad, 0);
    /* One request per cluster, however many of its CPUs asked. */
    KT_ASSERT_EQ(reps, m->ncl - 1);
    KT_ASSERT_EQ(copies, m->ncl);
    KT_ASSERT_EQ(f1.v_count, 1);
    return 0;
}
