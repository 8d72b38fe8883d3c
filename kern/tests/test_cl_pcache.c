/*
 * ktests for the clustered page cache (kern/cluster/cl_pcache.c), on the
 * boot's own cluster map (cluster=1, 4, 16 or node; they skip without
 * cluster=), with a file on a fresh S5 file system on the tests' RAM
 * disk.  The file's home page is read in on a CPU chosen so that some
 * cluster lies on another node (there are replicas to make) whenever the
 * machine has more than one node.
 *
 *   cluster_pcache_coherent
 *                       a thread per CPU maps the file shared and reads
 *                       it: clusters off the home node map their own
 *                       replica, on their node, the others the home page;
 *                       a write(2) reaches every mapping (replicas
 *                       invalidated), as do the zeros a truncation puts
 *                       in the page's tail, and so does a store through one
 *                       cluster's mapping, after which every CPU maps
 *                       the home page
 *   cluster_pcache_combining
 *                       four threads per CPU of one cluster fault on one
 *                       page at once: exactly one replica is made, all map
 *                       it, and (the cluster having more than one CPU) a
 *                       fault met the place-holder and waited on it
 *                       instead of making its own (combined)
 *   cluster_pcache_mp   a thread per CPU reads a word of the file through
 *                       its own mapping over and over while one CPU
 *                       write(2)s a new value 60 times: a reader never
 *                       reads a value older than the last write that
 *                       returned (no stale replica outlives a write)
 *   cluster_vm_pool     anonymous pages touched on the last cluster's last
 *                       CPU come from that cluster's pool, on the
 *                       cluster's node, taken from the node in batches
 *   cluster_pcache_conflict
 *                       rmap_unmap_page answers -EBUSY rather than wait
 *                       for a held a_lock; an invalidation that meets a
 *                       reserved replica (section 2.3), then an address
 *                       space whose a_lock is held, retries until the
 *                       conflict ends instead of deadlocking, then
 *                       removes the replica and its mapping (these two
 *                       need a cluster off the home page's node: not with
 *                       one cluster of every CPU)
 */
#include <kern/tests/ktest.h>
#include <kern/tests/s5t.h>
#include <kern/cluster/cluster.h>
#include <kern/cluster/cl_pcache.h>
#include <kern/vm/as.h>
#include <kern/vm/page.h>
#include <kern/vm/pcache.h>
#include <kern/vm/rmap.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/sched/thread.h>
#include <kern/arch/cpu.h>
#include <kern/lib/errno.h>
#include <kern/lib/string.h>
#include <kern/vm/kmem.h>
#include <kern/lib/kprintf.h>
#include <drivers/platform/timer.h>

#define TVA 0x10000000UL
#define FILE_LEN (2 * PAGE_SIZE)
#define WAIT_NS (30ULL * 1000 * 1000 * 1000)

#define NEED_CLUSTERS() \
    do { if (!cluster_on()) KT_SKIP("needs cluster= (the clustered page cache is off)"); } while (0)

static struct cluster_map *m;

static uint64_t total(size_t field)
{
    uint64_t n = 0;
    for (int cl = 0; cl < m->ncl; cl++)
        n += *(const uint64_t *)((const char *)&m->stats[cl] + field);
    return n;
}
#define TOTAL(f) total(offsetof(struct cluster_stats, f))

/* Does cluster cl have a CPU on node? */
static bool cluster_on_node(int cl, int node)
{
    for (int i = 0; i < m->size[cl]; i++)
        if (cpus[m->member[cl][i]].node == node)
            return true;
    return false;
}

/* A CPU whose node holds no CPU of some cluster (the home page read in
 * there leaves replicas to make), or this CPU when there is none (one
 * cluster of every CPU, or one node). */
static int filler_cpu(void)
{
    for (int c = 0; c < ncpus; c++)
        for (int cl = 0; cpus[c].online && cl < m->ncl; cl++)
            if (!cluster_on_node(cl, cpus[c].node))
                return c;
    return cpu_id();
}

/* ---- threads ---- */

struct job {
    void (*fn)(struct job *j);
    struct vnode *vp;
    struct as *as;
    struct page *pg;            /* what the mapping maps after the read */
    char got[8];
    uint64_t off;
    int err;
};

static void job_main(void *p)
{
    struct job *j = p;
    j->fn(j);
}

/* Run job j[c] in a thread on CPU c for each online CPU of mask, wait for
 * all.  False when a thread could not start. */
static bool run_jobs(struct job *j, uint64_t mask)
{
    static struct thread *t[MAX_CPUS];
    bool ok = true;
    for (int c = 0; c < ncpus; c++) {
        t[c] = NULL;
        if (cpus[c].online && (mask & (1UL << c)) &&
            !(t[c] = thread_create("ktest_clpc", job_main, &j[c], 1UL << c)))
            ok = false;
    }
    for (int c = 0; c < ncpus; c++)
        if (t[c])
            thread_join(t[c]);
    return ok;
}

static uint64_t all_cpus(void)
{
    uint64_t mask = 0;
    for (int c = 0; c < ncpus; c++)
        if (cpus[c].online)
            mask |= 1UL << c;
    return mask;
}

/* Map the file shared (once), read 5 bytes at j->off through it, and
 * note the page mapped. */
static void read_job(struct job *j)
{
    if (!j->as) {
        j->as = as_create();
        if (!j->as || as_map(j->as, TVA, FILE_LEN, PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_FIXED, j->vp, 0, 0) != (int64_t)TVA) {
            j->err = -ENOMEM;
            return;
        }
    }
    curthread()->as = j->as;
    as_activate(j->as);
    memset(j->got, 0, sizeof j->got);
    j->err = copyin((void *)(TVA + j->off), j->got, 5);
    curthread()->as = NULL;
    as_activate(NULL);
    j->pg = as_lookup_page(j->as, TVA, NULL);
}

/* Store "STORE" at j->off through the mapping. */
static void store_job(struct job *j)
{
    curthread()->as = j->as;
    as_activate(j->as);
    j->err = copyout("STORE", (void *)(TVA + j->off), 5);
    curthread()->as = NULL;
    as_activate(NULL);
}

/* Create the file (a pattern) from CPU c: its home pages come from c's
 * node. */
static struct s5t *fs;
static void create_job(struct job *j)
{
    char *buf = kmalloc(FILE_LEN);
    if (!buf || (j->err = t_create(fs->root, "f", &j->vp)) != 0) {
        j->err = j->err ? j->err : -ENOMEM;
        kfree(buf);
        return;
    }
    for (size_t i = 0; i < FILE_LEN; i++)
        buf[i] = (char)('a' + i % 26);
    size_t done;
    j->err = t_io(j->vp, true, buf, FILE_LEN, 0, 0, &done);
    kfree(buf);
    if (!j->err)
        j->err = pcache_flush(j->vp, 0, ~0UL);
}

static struct job jobs[MAX_CPUS];

/* A fresh file system and file; its home page 0, held. */
static int setup(struct s5t *t, struct vnode **vpp, struct page **homep)
{
    m = cluster_sys();
    fs = t;
    KT_ASSERT_EQ(t_fresh(t, 2048, 64), 0);
    int c = filler_cpu();
    memset(jobs, 0, sizeof jobs);
    jobs[c].fn = create_job;
    KT_ASSERT(run_jobs(jobs, 1UL << c));
    KT_ASSERT_EQ(jobs[c].err, 0);
    *vpp = jobs[c].vp;
    *homep = pcache_lookup(*vpp, 0);
    KT_ASSERT(*homep != NULL);
    memset(jobs, 0, sizeof jobs);
    return 0;
}

static void teardown(struct s5t *t, struct vnode *vp, struct page *home)
{
    for (int c = 0; c < ncpus; c++)
        if (jobs[c].as)
            as_destroy(jobs[c].as);
    memset(jobs, 0, sizeof jobs);
    page_rele(home);
    VN_RELE(vp);
    t_finish(t, NULL);
}

/* Every CPU reads off through its mapping: each sees want[0..4]. */
static int read_everywhere(struct vnode *vp, uint64_t off, const char *want)
{
    for (int c = 0; c < ncpus; c++) {
        jobs[c].fn = read_job;
        jobs[c].vp = vp;
        jobs[c].off = off;
    }
    KT_ASSERT(run_jobs(jobs, all_cpus()));
    for (int c = 0; c < ncpus; c++) {
        if (!cpus[c].online)
            continue;
        if (jobs[c].err || memcmp(jobs[c].got, want, 5)) {
            ktest_fail("cpu %d read '%.5s' (error %d), not '%.5s'", c, jobs[c].got,
                       jobs[c].err, want);
            return 1;
        }
    }
    return 0;
}

/* Each CPU maps its cluster's replica (on the cluster's node) when its
 * cluster is off the home node, else the home page.  How many clusters
 * hold a replica, in *nrep. */
static int maps_as_expected(struct vnode *vp, struct page *home, int *nrep)
{
    *nrep = 0;
    for (int cl = 0; cl < m->ncl; cl++) {
        struct page *rep = cl_pcache_replica(cl, vp, 0);
        bool off_home = !cluster_on_node(cl, home->node);
        KT_ASSERT_EQ(off_home, !cl_pcache_home_in(cl, home));
        if (off_home != (rep != NULL)) {
            ktest_fail("cluster %d (node %d, home page on %d): replica %p", cl, m->node[cl],
                       home->node, (void *)rep);
            return 1;
        }
        if (rep) {
            (*nrep)++;
            KT_ASSERT_EQ(rep->node, m->node[cl]);
        }
        for (int i = 0; i < m->size[cl]; i++) {
            int c = m->member[cl][i];
            struct page *want = rep ? rep : home;
            if (jobs[c].pg != want) {
                ktest_fail("cpu %d of cluster %d maps %p, not %p", c, cl, (void *)jobs[c].pg,
                           (void *)want);
                return 1;
            }
        }
    }
    return 0;
}

static int coherent_body(struct s5t *t)
{
    struct vnode *vp;
    struct page *home;
    if (setup(t, &vp, &home))
        return 1;
    uint64_t rep0 = TOTAL(replications), inv0 = TOTAL(invalidations);
    KT_ASSERT_EQ(read_everywhere(vp, 0, "abcde"), 0);
    int nrep;
    KT_ASSERT_EQ(maps_as_expected(vp, home, &nrep), 0);
    KT_ASSERT_EQ(TOTAL(replications) - rep0, (uint64_t)nrep);

    /* write(2) at home: every replica goes, and the next reads see it. */
    size_t done;
    KT_ASSERT_EQ(t_io(vp, true, "WRITE", 5, 200, 0, &done), 0);
    KT_ASSERT_EQ(TOTAL(invalidations) - inv0, (uint64_t)nrep);
    KT_ASSERT_EQ(read_everywhere(vp, 200, "WRITE"), 0);
    KT_ASSERT_EQ(maps_as_expected(vp, home, &nrep), 0);

    /* A truncation into the page zeros its tail at home: the replicas go
     * again, and every CPU reads the zeros. */
    inv0 = TOTAL(invalidations);
    KT_ASSERT_EQ(VOP_TRUNCATE(vp, 150, kcred), 0);
    KT_ASSERT_EQ(TOTAL(invalidations) - inv0, (uint64_t)nrep);
    KT_ASSERT_EQ(read_everywhere(vp, 200, "\0\0\0\0\0"), 0);
    KT_ASSERT_EQ(maps_as_expected(vp, home, &nrep), 0);

    /* A store through one cluster's mapping (a replica's, if any): the
     * page becomes written, every CPU then maps the home page. */
    int writer = cpu_id();
    for (int c = 0; c < ncpus; c++)
        if (cpus[c].online && jobs[c].pg != home)
            writer = c;
    jobs[writer].fn = store_job;
    jobs[writer].off = 300;
    KT_ASSERT(run_jobs(jobs, 1UL << writer));
    KT_ASSERT_EQ(jobs[writer].err, 0);
    KT_ASSERT(home->flags & PG_WRITTEN);
    KT_ASSERT_EQ(read_everywhere(vp, 300, "STORE"), 0);
    for (int c = 0; c < ncpus; c++)
        KT_ASSERT(!cpus[c].online || jobs[c].pg == home);
    for (int cl = 0; cl < m->ncl; cl++)
        KT_ASSERT(cl_pcache_replica(cl, vp, 0) == NULL);
    teardown(t, vp, home);
    return 0;
}

KTEST(cluster_pcache_coherent)
{
    NEED_CLUSTERS();
    struct s5t t;
    return coherent_body(&t);
}

/* ---- combining ---- */

#define PER_CPU_THREADS 4

static volatile int go;                 /* [a] the threads start together */
static struct job cjobs[MAX_CPUS * PER_CPU_THREADS];

static void combining_job(void *p)
{
    struct job *j = p;
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
        thread_yield();
    read_job(j);
}

/* A cluster off the home page's node, or -1. */
static int off_home_cluster(const struct page *home)
{
    for (int cl = 0; cl < m->ncl; cl++)
        if (!cluster_on_node(cl, home->node))
            return cl;
    return -1;
}

KTEST(cluster_pcache_combining)
{
    NEED_CLUSTERS();
    struct s5t t;
    struct vnode *vp;
    struct page *home;
    if (setup(&t, &vp, &home))
        return 1;
    /* With no cluster off the home node (one cluster of all CPUs), the
     * faults of cluster 0 must all map the home page, and make nothing. */
    int k = off_home_cluster(home);
    bool replicas = k >= 0;
    if (!replicas)
        k = 0;
    static struct thread *th[MAX_CPUS * PER_CPU_THREADS];
    int n = 0;
    __atomic_store_n(&go, 0, __ATOMIC_RELEASE);
    for (int i = 0; i < m->size[k]; i++) {
        for (int r = 0; r < PER_CPU_THREADS; r++, n++) {
            cjobs[n] = (struct job){ .vp = vp };
            th[n] = thread_create("ktest_clpc", combining_job, &cjobs[n],
                                  1UL << m->member[k][i]);
        }
    }
    uint64_t rep0 = m->stats[k].replications, comb0 = m->stats[k].combined;
    cl_pcache_test_hold = true;         /* the maker waits for a second fault */
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < n; i++)
        if (th[i])
            thread_join(th[i]);
    cl_pcache_test_hold = false;
    uint64_t combined = m->stats[k].combined - comb0;
    struct page *rep = replicas ? cl_pcache_replica(k, vp, 0) : home;
    int bad = rep == NULL;
    for (int i = 0; i < n; i++) {
        if (!th[i] || cjobs[i].err || memcmp(cjobs[i].got, "abcde", 5) || cjobs[i].pg != rep) {
            ktest_fail("thread %d: error %d, read '%.5s', maps %p (replica %p)", i, cjobs[i].err,
                       cjobs[i].got, (void *)cjobs[i].pg, (void *)rep);
            bad = 1;
        }
        if (cjobs[i].as)
            as_destroy(cjobs[i].as);
    }
    uint64_t reps = m->stats[k].replications - rep0;
    kprintf("ktest: %d faults in cluster %d: %lu replica(s), %lu combined\n", n, k,
               (unsigned long)reps, (unsigned long)combined);
    teardown(&t, vp, home);
    KT_ASSERT(!bad);
    KT_ASSERT_EQ(reps, replicas ? 1 : 0);
    /* With another CPU in the cluster, a fault met the place-holder (on
     * one CPU the maker keeps it, and the others cannot run meanwhile). */
    KT_ASSERT(!replicas || m->size[k] == 1 || combined >= 1);
    return 0;
}

/* ---- forced conflicts ---- */

static struct vnode *inval_vp;
static volatile int inval_done;         /* [a] */

static void inval_thread(void *arg)
{
    (void)arg;
    cl_pcache_invalidate(inval_vp, 0, 1);
    __atomic_store_n(&inval_done, 1, __ATOMIC_RELEASE);
}

/* Wait (bounded) until the retries counted grow past r0. */
static bool retried_since(uint64_t r0)
{
    uint64_t end = uptime_ns() + WAIT_NS;
    while (TOTAL(retries) <= r0 && uptime_ns() < end) {
        thread_yield();
        clock_spin_us(200);
    }
    return TOTAL(retries) > r0;
}

/* Make cluster k's replica of page 0 (a read on one of its CPUs). */
static int make_replica(int k, struct vnode *vp)
{
    int c = m->member[k][0];
    jobs[c].fn = read_job;
    jobs[c].vp = vp;
    jobs[c].off = 0;
    KT_ASSERT(run_jobs(jobs, 1UL << c));
    KT_ASSERT_EQ(jobs[c].err, 0);
    KT_ASSERT(cl_pcache_replica(k, vp, 0) != NULL);
    KT_ASSERT(jobs[c].pg == cl_pcache_replica(k, vp, 0));
    return c;
}

/* Invalidate page 0 in a thread while the conflict lasts; end it with
 * release() once a retry was seen; the invalidation must then finish. */
static int invalidate_through(struct vnode *vp, void (*release)(void *), void *arg)
{
    uint64_t r0 = TOTAL(retries);
    inval_vp = vp;
    __atomic_store_n(&inval_done, 0, __ATOMIC_RELEASE);
    struct thread *th = thread_create("ktest_clpc", inval_thread, NULL, ~0UL);
    KT_ASSERT(th != NULL);
    bool retried = retried_since(r0);
    bool early = __atomic_load_n(&inval_done, __ATOMIC_ACQUIRE);
    release(arg);
    thread_join(th);
    KT_ASSERT(retried);
    KT_ASSERT(!early);
    return 0;
}

struct reserved { int k; struct vnode *vp; };

static void unreserve(void *arg)
{
    struct reserved *r = arg;
    cl_pcache_test_reserve(r->k, r->vp, 0, false);
}

static void unlock_as(void *arg)
{
    rlock_release(&((struct as *)arg)->a_lock);
}

KTEST(cluster_pcache_conflict)
{
    NEED_CLUSTERS();
    struct s5t t;
    struct vnode *vp;
    struct page *home;
    if (setup(&t, &vp, &home))
        return 1;
    /* rmap_unmap_page never waits: a held a_lock is -EBUSY. */
    struct job *own = &jobs[cpu_id()];
    own->fn = read_job;
    own->vp = vp;
    read_job(own);
    KT_ASSERT_EQ(own->err, 0);
    KT_ASSERT(own->pg != NULL);
    rlock_acquire(&own->as->a_lock);
    int busy = rmap_unmap_page(vp, 0, own->pg);
    rlock_release(&own->as->a_lock);
    KT_ASSERT_EQ(busy, -EBUSY);
    KT_ASSERT(as_lookup_page(own->as, TVA, NULL) == own->pg);
    KT_ASSERT_EQ(rmap_unmap_page(vp, 0, own->pg), 0);
    KT_ASSERT(as_lookup_page(own->as, TVA, NULL) == NULL);

    int k = off_home_cluster(home);
    if (k < 0) {
        kprintf("ktest: no cluster off the home page's node: no replica to conflict over\n");
        teardown(&t, vp, home);
        return 0;
    }
    /* A reserved replica: the remote handler answers -EDEADLK. */
    int c = make_replica(k, vp);
    KT_ASSERT(cl_pcache_test_reserve(k, vp, 0, true));
    struct reserved r = { k, vp };
    if (invalidate_through(vp, unreserve, &r))
        return 1;
    KT_ASSERT(cl_pcache_replica(k, vp, 0) == NULL);
    KT_ASSERT(as_lookup_page(jobs[c].as, TVA, NULL) == NULL);

    /* A mapping's a_lock held: rmap_unmap_page answers -EBUSY. */
    make_replica(k, vp);
    rlock_acquire(&jobs[c].as->a_lock);
    if (invalidate_through(vp, unlock_as, jobs[c].as))
        return 1;
    KT_ASSERT(cl_pcache_replica(k, vp, 0) == NULL);
    KT_ASSERT(as_lookup_page(jobs[c].as, TVA, NULL) == NULL);
    teardown(&t, vp, home);
    return 0;
}

/* ---- readers racing writes ---- */

#define MP_ROUNDS 60
#define MP_OFF 512              /* where the round number is written */

static volatile uint64_t published;     /* [a] the last round whose write(2) returned */
static volatile int mp_errors;          /* [a] */

/* A reader: its own shared mapping; a value read after a round was
 * published is never older than that round (no stale replica survives a
 * write(2)). */
static void mp_reader(struct job *j)
{
    j->as = as_create();
    if (!j->as || as_map(j->as, TVA, FILE_LEN, PROT_READ, MAP_SHARED | MAP_FIXED, j->vp, 0, 0) !=
        (int64_t)TVA) {
        j->err = -ENOMEM;
        __atomic_add_fetch(&mp_errors, 1, __ATOMIC_RELAXED);
        return;
    }
    curthread()->as = j->as;
    as_activate(j->as);
    for (;;) {
        uint64_t p = __atomic_load_n(&published, __ATOMIC_ACQUIRE), v = 0;
        if (copyin((void *)(TVA + MP_OFF), &v, 8) || v < p) {
            j->err = -EILSEQ;
            j->off = v;
            __atomic_add_fetch(&mp_errors, 1, __ATOMIC_RELAXED);
            break;
        }
        if (p >= MP_ROUNDS)
            break;
        thread_yield();
    }
    curthread()->as = NULL;
    as_activate(NULL);
}

/* The writer: each round's value by write(2), then published. */
static void mp_writer(struct job *j)
{
    for (uint64_t r = 1; r <= MP_ROUNDS; r++) {
        size_t done;
        if (t_io(j->vp, true, &r, 8, MP_OFF, 0, &done)) {
            j->err = -EIO;
            __atomic_add_fetch(&mp_errors, 1, __ATOMIC_RELAXED);
        }
        __atomic_store_n(&published, r, __ATOMIC_RELEASE);
        thread_yield();
    }
}

KTEST(cluster_pcache_mp)
{
    NEED_CLUSTERS();
    struct s5t t;
    struct vnode *vp;
    struct page *home;
    if (setup(&t, &vp, &home))
        return 1;
    uint64_t zero = 0;
    size_t done;
    KT_ASSERT_EQ(t_io(vp, true, &zero, 8, MP_OFF, 0, &done), 0);
    __atomic_store_n(&published, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&mp_errors, 0, __ATOMIC_RELEASE);
    uint64_t inv0 = TOTAL(invalidations), rep0 = TOTAL(replications);
    int writer = -1;
    for (int c = 0; c < ncpus; c++) {
        jobs[c].vp = vp;
        jobs[c].fn = mp_reader;
        if (cpus[c].online && writer < 0)
            writer = c;
    }
    jobs[writer].fn = mp_writer;
    KT_ASSERT(run_jobs(jobs, all_cpus()));
    for (int c = 0; c < ncpus; c++)
        if (cpus[c].online && jobs[c].err)
            ktest_fail("cpu %d: error %d (read %lu)", c, jobs[c].err, (unsigned long)jobs[c].off);
    kprintf("ktest: %lu replicas made, %lu invalidated\n",
            (unsigned long)(TOTAL(replications) - rep0),
            (unsigned long)(TOTAL(invalidations) - inv0));
    int errors = mp_errors;
    teardown(&t, vp, home);
    KT_ASSERT_EQ(errors, 0);
    return 0;
}

/* ---- the faults' page pools (kern/cluster/cl_vm.c) ---- */

#define POOL_PAGES 64

static int pool_wrong_node;                     /* pages not from the cluster's node */

/* Touch POOL_PAGES anonymous pages on this CPU: each comes from the
 * cluster's pool, on the cluster's node. */
static void pool_job(struct job *j)
{
    int cl = cluster_self(m);
    j->as = as_create();
    if (!j->as || as_map(j->as, TVA, POOL_PAGES * PAGE_SIZE, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, 0) != (int64_t)TVA) {
        j->err = -ENOMEM;
        return;
    }
    curthread()->as = j->as;
    as_activate(j->as);
    for (int i = 0; i < POOL_PAGES && !j->err; i++)
        j->err = copyout("x", (void *)(TVA + i * PAGE_SIZE), 1);
    curthread()->as = NULL;
    as_activate(NULL);
    for (int i = 0; i < POOL_PAGES && !j->err; i++) {
        struct page *pg = as_lookup_page(j->as, TVA + i * PAGE_SIZE, NULL);
        if (!pg)
            j->err = -EFAULT;
        else if (pg->node != m->node[cl])
            pool_wrong_node++;
    }
}

KTEST(cluster_vm_pool)
{
    NEED_CLUSTERS();
    m = cluster_sys();
    memset(jobs, 0, sizeof jobs);
    int c = m->member[m->ncl - 1][m->size[m->ncl - 1] - 1];   /* the last cluster's last CPU */
    int cl = m->cl_of[c];
    uint64_t refills0 = m->stats[cl].pool_refills;
    pool_wrong_node = 0;
    jobs[c].fn = pool_job;
    KT_ASSERT(run_jobs(jobs, 1UL << c));
    int err = jobs[c].err;
    if (jobs[c].as)
        as_destroy(jobs[c].as);
    jobs[c].as = NULL;
    uint64_t refills = m->stats[cl].pool_refills - refills0;
    kprintf("ktest: %d anonymous pages on cpu %d: %lu pool refills, %d off node %d\n",
            POOL_PAGES, c, (unsigned long)refills, pool_wrong_node, m->node[cl]);
    KT_ASSERT_EQ(err, 0);
    /* Batches, not a page at a time (page tables come from the pool too). */
    KT_ASSERT(refills >= 1 && refills <= POOL_PAGES / 2);
    KT_ASSERT_EQ(pool_wrong_node, 0);
    return 0;
}
