/*
 * The clustered page cache (cluster=): seed 000's Figure 2 applied to the
 * file pages that faults map (issue 20).
 *
 * Theory.  The page cache (kern/vm/pcache.c) stays the one home of every
 * file page: it reads the page from the file, holds it under its name,
 * takes the stores of write(2) and of writable mappings, writes it back,
 * and reclaims it.  On top of it each cluster has an instance of this
 * cache: CLP_ROWS chains of entries (vnode, page number, replica page) on
 * the cluster's node, under one coarse hybrid lock (class
 * cluster_pcache), each entry with a reserve bit (kern/cluster/hybrid.h).
 * A cluster's memory is its CPUs' nodes.  A read fault (kern/vm/fault.c)
 * of a cluster whose memory does not hold the home copy maps that
 * cluster's replica: a copy of the home page on the cluster's node,
 * read-shared data, Figure 2's X.  A cluster whose memory holds the home
 * copy maps the home page itself: a second copy in the same memory buys
 * no locality, only memory and invalidations.  (So cluster=node gives one
 * copy per node, cluster=1 one per CPU off the home node, and one cluster
 * of every CPU none at all.)
 *
 * Making a replica.  A fault searches its own instance (a hit: map the
 * replica, no other lock taken).  At a miss it gets the home page
 * (pcache_get: it may read the file and sleep, so no reservation is held
 * yet), then makes a local place-holder entry, reserved, drops the coarse
 * lock, copies the home page into a new page of the cluster's node and
 * publishes it (the bit released).  Other faults of the cluster on the
 * same page meanwhile find the reserved place-holder and spin on its bit,
 * then search again and map the one replica: their requests are combined
 * (section 2.2, counted as combined).  An entry that a fault spun on is
 * not detached until that fault is done with it (busy()); a place-holder
 * its maker gives up is freed by its last waiter.  A reserve bit is never held across
 * a sleep (the kernel is not preemptive: a waiter spinning on its own
 * CPU would keep the holder from running).  An entry is freed only when
 * no waiter spins on it (e->waiters, under the coarse lock).
 *
 * Writes.  A written page has one copy, the home one.  A page becomes
 * written (PG_WRITTEN) at the first write fault on it, or store through a
 * read-only PTE of a shared mapping; from then on no replica of it is
 * made, and every fault maps the home copy, writable where the mapping
 * allows.  Until then every PTE of a file page in a shared mapping is
 * read-only (mprotect too, cl_pcache_may_write), so the first store
 * faults.  The writer sets PG_WRITING and then reads how many replicas of
 * the file's hash slot exist (live[]); a replica maker counts itself in
 * live[] and then reads PG_WRITING (both sequentially consistent), so
 * either the maker sees the flag and maps the home copy, or the writer
 * sees the count and invalidates.  To invalidate, the fault answers
 * CLP_RETRY: it lets its a_lock go (section 2.3: drop the locks before
 * the remote operation), cl_pcache_settle runs, and the fault runs
 * again.  The first writer to settle takes PG_INVALIDATING, removes
 * every replica and its PTEs, then sets PG_WRITTEN; a second writer
 * meanwhile waits for PG_WRITTEN, so no store through the home copy is
 * made while a replica may still be mapped (live[] drops when a replica
 * is detached, before its PTEs go).  write(2) and truncations invalidate the pages they changed
 * after they let the fill lock go.
 *
 * Invalidation goes to every cluster in parallel (cluster_call_start,
 * then wait for all: the tree's broadcast).  The handler, in the target's
 * cross-cluster interrupt, takes its coarse lock and detaches the entries
 * of the range; one it finds reserved (a replica being made) makes it
 * answer -EDEADLK after detaching the rest, and the caller backs off and
 * calls that cluster again (a retry, counted): the maker publishes soon,
 * with no lock that the caller could hold.  The detached replicas are
 * handed to the caller, which removes their PTEs through the reverse
 * mappings with rmap_unmap_page (kern/vm/rmap.c) and frees them.  That
 * unmap runs in the caller's thread, not in the handler as the design of
 * docs/cluster-pcache.md first had it: it needs the address spaces'
 * a_locks (sleep locks) and TLB shootdowns, which wait for other CPUs,
 * and an interrupt handler may do neither.  It still never waits: an
 * a_lock that is held gives -EBUSY, and the caller tries again after a
 * back-off and a yield (a retry, counted), since the holder may be a fault
 * spinning on this very cluster's place-holder.  A fault that found a
 * replica before it was detached holds its a_lock until its PTE is made,
 * so the unmap either meets that a_lock (and comes back) or finds the PTE.
 *
 * Each replica counts in its vnode's v_npages (pcache_count_replica), so
 * that the last release purges even a file whose home pages were all
 * reclaimed: a replica left behind would be found under a reused vnode.
 * A file's last release (pcache_purge, which may hold any spin lock) and
 * nothing else reaches into other clusters' instances directly, under
 * their coarse locks, dropping every replica of the file: no mapping of
 * it is left then, and a cross-cluster wait there could deadlock.
 * Memory: no replica is made on a node short of memory, and the page
 * cache's reclaim (pcache_reclaim, kern/vm/pcache_reclaim.c) first frees
 * the replicas that no PTE maps (cl_pcache_shrink, directly, spin locks
 * only): copies go before originals.  Mapped replicas go only at an
 * invalidation or the last release.
 *
 * Off means off: without cluster= no instance exists and each hook in
 * kern/vm is one cluster_on() test.
 *
 * Locks: the coarse lock [H] of an instance is a spin lock (it disables
 * interrupts), taken after a_lock and the page cache's locks, and held
 * only to search and to set or clear reserve bits; no other lock is taken
 * under it except the page allocator's.  Lock key: [H] the instance's
 * coarse lock; [R] the entry's reserve bit (its holder alone writes the
 * entry's page); [c] constant after cl_pcache_init; [a] atomic.
 */
#include <kern/cluster/cl_pcache.h>
#include <kern/cluster/cluster.h>
#include <kern/cluster/hybrid.h>
#include <kern/vm/pcache.h>
#include <kern/vm/page.h>
#include <kern/vm/rmap.h>
#include <kern/vm/kmem.h>
#include <kern/vfs/vnode.h>
#include <kern/vfs/ssac.h>
#include <kern/sched/thread.h>
#include <kern/lib/errno.h>
#include <kern/lib/string.h>
#include <kern/arch/cpu.h>
#include <kern/arch/panic.h>
#include <kern/arch/arch.h>
#include <drivers/platform/timer.h>

LOCK_CLASS(cluster_pcache_class, "cluster_pcache", LK_SPIN);

#define CLP_ROW_BITS 8
#define CLP_ROWS (1 << CLP_ROW_BITS)
#define LIVE_BITS 6
#define RANGE_BY_INDEX 16       /* an invalidation of fewer pages looks each up */

#define E_STALE 0x2u            /* the place-holder must not be published */

struct clp_entry {
    uint32_t word;              /* HRES_BIT [H to set]; E_STALE [H] */
    int waiters;                /* [H] faults spinning on the reserve bit */
    bool linked;                /* [H] on its chain */
    bool abandoned;             /* [H] its maker gave it up: the last waiter frees it */
    struct vnode *vp;           /* [c once linked] */
    uint64_t idx;               /* [c once linked] */
    struct page *pg;            /* [R] the replica (NULL while a place-holder) */
    struct clp_entry *next;     /* [H] its chain; after detaching, the caller's list */
};

struct cl_pcache {
    struct hlock h;
    struct clp_entry *rows[CLP_ROWS];   /* [H] */
};

static struct cluster_map *map;                 /* [c] */
static struct cl_pcache *insts[MAX_CPUS];       /* [c] */
static uint64_t node_mask[MAX_CPUS];            /* [c] the nodes of each cluster's CPUs */
static int64_t live[1 << LIVE_BITS];            /* [a] replicas per vnode hash slot */
volatile bool cl_pcache_test_hold;              /* [a] tests only */

void cl_pcache_init(void)
{
    map = cluster_sys();
    for (int cl = 0; cl < map->ncl; cl++) {
        insts[cl] = cluster_alloc_instance(map, cl, sizeof(struct cl_pcache));
        if (!insts[cl])
            panic("cl_pcache_init: no memory for cluster %d's page cache", cl);
        hlock_init(&insts[cl]->h, &cluster_pcache_class, map, cl);
        for (int i = 0; i < map->size[cl]; i++) {
            int node = cpus[map->member[cl][i]].node;
            if (node < 64)
                node_mask[cl] |= 1UL << node;
        }
    }
}

static struct clp_entry **chain(struct cl_pcache *c, const struct vnode *vp, uint64_t idx)
{
    return &c->rows[cache_hash(cache_ptr_tag(vp) + idx, CLP_ROW_BITS)];
}

static int64_t *live_of(const struct vnode *vp)
{
    return &live[cache_hash(cache_ptr_tag(vp), LIVE_BITS)];
}

/* [H] The entry (vp, idx) of c, or NULL. */
static struct clp_entry *find(struct cl_pcache *c, const struct vnode *vp, uint64_t idx)
{
    struct clp_entry *e = *chain(c, vp, idx);
    while (e && (e->vp != vp || e->idx != idx))
        e = e->next;
    return e;
}

/* [H] Is e reserved, or still touched by a fault that spun on it?  Then
 * only its maker (or that fault) may take it out and free it. */
static bool busy(const struct clp_entry *e)
{
    return hres_busy(&e->word) || e->waiters > 0;
}

/* [H] Take e off its chain. */
static void unlink(struct cl_pcache *c, struct clp_entry *e)
{
    struct clp_entry **pp = chain(c, e->vp, e->idx);
    while (*pp != e)
        pp = &(*pp)->next;
    *pp = e->next;
    e->next = NULL;
    e->linked = false;
}

/* [H] A replica leaves its instance: it no longer counts for its vnode
 * (done under the lock, while the vnode is surely alive: a purge of it
 * takes this lock too). */
static void replica_uncount(struct clp_entry *e)
{
    __atomic_sub_fetch(live_of(e->vp), 1, __ATOMIC_SEQ_CST);
    pcache_count_replica(e->vp, -1);
}

/* A replica out of every instance and uncounted: its page goes when its
 * last PTE does. */
static void replica_free(struct clp_entry *e)
{
    page_rele(e->pg);
    kfree(e);
}

bool cl_pcache_home_in(int cl, const struct page *home)
{
    return home->node < 64 && (node_mask[cl] & (1UL << home->node));
}

static uint16_t flags_of(const struct page *pg)
{
    return __atomic_load_n(&pg->flags, __ATOMIC_SEQ_CST);
}

/* Written: every replica is gone, and the home copy may be mapped writable. */
static bool written(const struct page *pg)
{
    return flags_of(pg) & PG_WRITTEN;
}

/* Being written or written: no new replica of it may be made. */
static bool no_replicas(const struct page *pg)
{
    return flags_of(pg) & (PG_WRITING | PG_WRITTEN);
}

/* ---- making a replica ---- */

/* This cluster's replica of (vp, idx), held; *waited set when it was a
 * place-holder first.  NULL when there is none. */
static struct page *local_hit(struct cl_pcache *c, struct vnode *vp, uint64_t idx, bool *waited)
{
    for (;;) {
        hlock_enter(&c->h);
        struct clp_entry *e = find(c, vp, idx);
        if (!e || !hres_busy(&e->word)) {
            struct page *pg = e ? e->pg : NULL;
            if (pg)
                page_hold(pg);
            hlock_exit(&c->h);
            return pg;
        }
        e->waiters++;
        hlock_exit(&c->h);
        hres_wait(&c->h, &e->word);
        *waited = true;
        hlock_enter(&c->h);
        bool last = --e->waiters == 0 && e->abandoned;
        hlock_exit(&c->h);
        if (last)
            kfree(e);           /* its maker gave it up while we spun */
    }
}

/* The maker gives its place-holder up (no replica). */
static void placeholder_drop(struct cl_pcache *c, struct clp_entry *e)
{
    hlock_enter(&c->h);
    if (e->linked)
        unlink(c, e);
    bool waited_on = e->waiters > 0;
    e->abandoned = waited_on;
    hres_clear(&e->word);
    hlock_exit(&c->h);
    if (!waited_on)
        kfree(e);               /* else the last waiter frees it */
}

/* Copy home into a new page of cluster cl's node, marked as a replica of
 * (vp, idx), with the instance's reference and the caller's; NULL when
 * memory is short (the caller maps the home copy then). */
static struct page *copy_of(int cl, struct page *home, struct vnode *vp, uint64_t idx)
{
    if (pcache_node_low(map->node[cl]))
        return NULL;            /* memory is short there: no copies */
    struct page *pg = page_alloc_node(0, map->node[cl]);
    if (!pg)
        return NULL;
    memcpy(page_to_virt(pg), page_to_virt(home), PAGE_SIZE);
    pg->flags = (uint16_t)((pg->flags & ~PG_WRITTEN) | PG_REPLICA);
    pg->p_vp = vp;
    pg->p_index = idx;
    pg->count = 2;
    return pg;
}

#define TEST_HOLD_NS (5ULL * 1000 * 1000 * 1000)

/* Tests: keep the place-holder until a fault waits on it (bounded). */
static void test_hold(struct clp_entry *e)
{
    uint64_t end = uptime_ns() + TEST_HOLD_NS;
    while (!__atomic_load_n(&e->waiters, __ATOMIC_RELAXED) && uptime_ns() < end)
        cpu_relax();
}

/* With the place-holder e reserved: make the replica of home, or give up
 * (NULL). */
static struct page *fill_placeholder(struct cl_pcache *c, int cl, struct clp_entry *e,
                                     struct page *home)
{
    int64_t *lv = live_of(e->vp);
    __atomic_add_fetch(lv, 1, __ATOMIC_SEQ_CST);
    struct page *pg = no_replicas(home) ? NULL : copy_of(cl, home, e->vp, e->idx);
    if (pg && cl_pcache_test_hold && map->size[cl] > 1)
        test_hold(e);
    if (pg) {
        hlock_enter(&c->h);
        bool stale = __atomic_load_n(&e->word, __ATOMIC_RELAXED) & E_STALE;
        if (!stale) {
            pcache_count_replica(e->vp, 1);
            e->pg = pg;
            hres_clear(&e->word);
            hlock_exit(&c->h);
            cluster_count(map, cl, replications);
            return pg;
        }
        hlock_exit(&c->h);
        page_rele(pg);
        page_rele(pg);
    }
    __atomic_sub_fetch(lv, 1, __ATOMIC_SEQ_CST);
    placeholder_drop(c, e);
    return NULL;
}

/*
 * A read fault's page off the home node: the local replica, or a new one
 * made from home (held, given up here), combining with the other faults
 * of the cluster.  Returns home itself when no replica can be made.
 */
static struct page *replica_for(int cl, struct vnode *vp, uint64_t idx, struct page *home)
{
    struct cl_pcache *c = insts[cl];
    struct clp_entry *e = kzalloc(sizeof *e);
    if (!e)
        return home;
    e->vp = vp;
    e->idx = idx;
    for (;;) {
        bool waited = false;
        struct page *pg = local_hit(c, vp, idx, &waited);
        if (pg) {
            if (waited)
                cluster_count(map, cl, combined);
            kfree(e);
            page_rele(home);
            return pg;
        }
        hlock_enter(&c->h);
        if (find(c, vp, idx)) {         /* another maker came first */
            hlock_exit(&c->h);
            continue;
        }
        hres_set(&e->word);
        e->next = *chain(c, vp, idx);
        *chain(c, vp, idx) = e;
        e->linked = true;
        hlock_exit(&c->h);
        pg = fill_placeholder(c, cl, e, home);
        if (!pg)
            return home;
        page_rele(home);
        return pg;
    }
}

/* ---- the fault path ---- */

/* Make home written; CLP_RETRY (pend filled, home dropped) when replicas
 * of vp may exist and must be invalidated first. */
static int make_written(struct page *home, struct vnode *vp, uint64_t idx,
                        struct clp_pending *pend)
{
    if (written(home))
        return 0;
    __atomic_or_fetch(&home->flags, PG_WRITING, __ATOMIC_SEQ_CST);
    /* No replica, and nobody still unmapping one: written at once. */
    if (__atomic_load_n(live_of(vp), __ATOMIC_SEQ_CST) == 0 &&
        !(flags_of(home) & PG_INVALIDATING)) {
        __atomic_or_fetch(&home->flags, PG_WRITTEN, __ATOMIC_SEQ_CST);
        return 0;
    }
    VN_HOLD(vp);
    pend->vp = vp;
    pend->idx = idx;
    return CLP_RETRY;
}

int cl_pcache_fault(struct vnode *vp, uint64_t idx, bool want_write, struct page **pgp,
                    bool *writable, struct clp_pending *pend)
{
    int cl = cluster_self(map);
    *writable = false;
    *pgp = NULL;
    if (!want_write) {
        bool waited = false;
        struct page *pg = local_hit(insts[cl], vp, idx, &waited);
        if (pg) {
            if (waited)
                cluster_count(map, cl, combined);
            *pgp = pg;
            return 0;
        }
    }
    struct page *home;
    int err = pcache_get(vp, idx, &home);
    if (err)
        return err;
    cl = cluster_self(map);     /* the fill may have slept, and moved us */
    if (want_write) {
        err = make_written(home, vp, idx, pend);
        if (err) {
            page_rele(home);
            return err;
        }
    }
    if (no_replicas(home) || cl_pcache_home_in(cl, home)) {
        *writable = written(home);
        *pgp = home;
        return 0;
    }
    *pgp = replica_for(cl, vp, idx, home);
    *writable = *pgp == home && written(home);
    return 0;
}

int cl_pcache_upgrade(struct page *pg, struct vnode *vp, uint64_t idx, struct clp_pending *pend)
{
    if (__atomic_load_n(&pg->flags, __ATOMIC_ACQUIRE) & PG_REPLICA) {
        VN_HOLD(vp);            /* the retry finds the home copy */
        pend->vp = vp;
        pend->idx = idx;
        return CLP_RETRY;
    }
    return make_written(pg, vp, idx, pend);
}

bool cl_pcache_may_write(const struct page *pg)
{
    uint16_t f = __atomic_load_n(&pg->flags, __ATOMIC_ACQUIRE);
    return !(f & PG_REPLICA) && (f & PG_WRITTEN);
}

/* Make home written: the first thread here removes every replica, then
 * sets PG_WRITTEN; a second writer meanwhile waits for that rather than
 * store while a replica may still be mapped elsewhere (the live count
 * drops when a replica is detached, before its PTEs go).  Our reference
 * keeps home, and so its flags, alive throughout. */
static void settle_home(struct page *home, struct clp_pending *pend)
{
    /* Being written before the replicas go: none is made meanwhile. */
    __atomic_or_fetch(&home->flags, PG_WRITING, __ATOMIC_SEQ_CST);
    if (__atomic_fetch_or(&home->flags, PG_INVALIDATING, __ATOMIC_SEQ_CST) & PG_INVALIDATING) {
        while ((flags_of(home) & (PG_WRITTEN | PG_INVALIDATING)) == PG_INVALIDATING)
            thread_yield();
        return;
    }
    cl_pcache_invalidate(pend->vp, pend->idx, pend->idx + 1);
    __atomic_or_fetch(&home->flags, PG_WRITTEN, __ATOMIC_SEQ_CST);
    __atomic_and_fetch(&home->flags, (uint16_t)~PG_INVALIDATING, __ATOMIC_SEQ_CST);
}

void cl_pcache_settle(struct clp_pending *pend)
{
    struct page *home;
    if (pcache_get(pend->vp, pend->idx, &home) != 0) {
        cl_pcache_invalidate(pend->vp, pend->idx, pend->idx + 1);
    } else {
        settle_home(home, pend);
        page_rele(home);
    }
    VN_RELE(pend->vp);
    pend->vp = NULL;
}

/* ---- invalidation ---- */

struct inval_req {
    struct vnode *vp;
    uint64_t lo, hi;
    struct clp_entry *gone[MAX_CPUS];   /* per cluster: detached entries */
};

/* [H] Detach e onto the request's list of cluster cl, or report it
 * reserved. */
static bool detach_one(struct cl_pcache *c, struct clp_entry *e, struct inval_req *q, int cl)
{
    if (busy(e))
        return false;
    unlink(c, e);
    replica_uncount(e);
    e->next = q->gone[cl];
    q->gone[cl] = e;
    cluster_count(map, cl, invalidations);
    return true;
}

static bool in_range(const struct clp_entry *e, const struct inval_req *q)
{
    return e->vp == q->vp && e->idx >= q->lo && e->idx < q->hi;
}

/* The cross-cluster handler: this cluster's replicas of the range leave
 * its instance; -EDEADLK when one was reserved (call again). */
static long inval_here(void *arg)
{
    struct inval_req *q = arg;
    int cl = cluster_self(map);
    struct cl_pcache *c = insts[cl];
    bool conflict = false;
    hlock_enter(&c->h);
    if (q->hi - q->lo <= RANGE_BY_INDEX) {
        for (uint64_t i = q->lo; i < q->hi; i++) {
            struct clp_entry *e = find(c, q->vp, i);
            if (e && !detach_one(c, e, q, cl))
                conflict = true;
        }
    } else {
        for (int r = 0; r < CLP_ROWS; r++) {
            for (struct clp_entry *e = c->rows[r], *nx; e; e = nx) {
                nx = e->next;
                if (in_range(e, q) && !detach_one(c, e, q, cl))
                    conflict = true;
            }
        }
    }
    hlock_exit(&c->h);
    return conflict ? -EDEADLK : 0;
}

/* Call every cluster in pending[], at once when calls (one per cluster)
 * is given, else one after the other (no memory for the parallel
 * calls); those that met a reservation stay pending.  How many do. */
static int call_round(struct inval_req *q, struct cluster_call *calls, bool *pending)
{
    struct cluster_call one;
    int left = 0;
    for (int cl = 0; cl < map->ncl; cl++) {
        if (!pending[cl])
            continue;
        cluster_call_start(map, cl, calls ? &calls[cl] : &one, inval_here, q);
        if (!calls) {
            pending[cl] = cluster_call_wait(&one) == -EDEADLK;
            left += pending[cl];
        }
    }
    for (int cl = 0; calls && cl < map->ncl; cl++) {
        if (pending[cl]) {
            pending[cl] = cluster_call_wait(&calls[cl]) == -EDEADLK;
            left += pending[cl];
        }
    }
    return left;
}

/* A retry: back off, and let a thread of this CPU that holds what we
 * wait for run (the kernel is not preemptive). */
static void retry_pause(unsigned *attempt)
{
    cluster_count(map, cluster_self(map), retries);
    cluster_backoff(attempt);
    thread_yield();
}

/* Remove every PTE of a detached replica, then free it. */
static void unmap_and_free(struct clp_entry *e)
{
    unsigned attempt = 0;
    while (rmap_unmap_page(e->vp, e->idx, e->pg) == -EBUSY)
        retry_pause(&attempt);
    replica_free(e);
}

void cl_pcache_invalidate(struct vnode *vp, uint64_t lo, uint64_t hi)
{
    if (!cluster_on() || lo >= hi || __atomic_load_n(live_of(vp), __ATOMIC_SEQ_CST) == 0)
        return;
    struct inval_req q = { .vp = vp, .lo = lo, .hi = hi };
    bool pending[MAX_CPUS];
    /* NULL (memory short): the calls go one at a time. */
    struct cluster_call *calls = kmalloc(sizeof(struct cluster_call) * (size_t)map->ncl);
    for (int cl = 0; cl < map->ncl; cl++)
        pending[cl] = true;
    unsigned attempt = 0;
    while (call_round(&q, calls, pending) > 0)
        retry_pause(&attempt);
    kfree(calls);
    for (int cl = 0; cl < map->ncl; cl++) {
        for (struct clp_entry *e = q.gone[cl], *nx; e; e = nx) {
            nx = e->next;
            unmap_and_free(e);
        }
    }
}

/* ---- the last release ---- */

/* [H] of c: drop c's replicas of vp; a busy entry (a place-holder, or one
 * a fault still touches: neither exists at a last release, when no fault
 * holds the file) is marked stale instead. */
static void purge_instance(struct cl_pcache *c, struct vnode *vp, struct clp_entry **out)
{
    for (int r = 0; r < CLP_ROWS; r++) {
        for (struct clp_entry *e = c->rows[r], *nx; e; e = nx) {
            nx = e->next;
            if (e->vp != vp)
                continue;
            if (busy(e)) {
                __atomic_or_fetch(&e->word, E_STALE, __ATOMIC_RELAXED);
                continue;
            }
            unlink(c, e);
            replica_uncount(e);
            e->next = *out;
            *out = e;
        }
    }
}

void cl_pcache_purge_vp(struct vnode *vp)
{
    if (__atomic_load_n(live_of(vp), __ATOMIC_SEQ_CST) == 0)
        return;
    for (int cl = 0; cl < map->ncl; cl++) {
        struct cl_pcache *c = insts[cl];
        struct clp_entry *gone = NULL;
        hlock_enter(&c->h);
        purge_instance(c, vp, &gone);
        hlock_exit(&c->h);
        for (struct clp_entry *e = gone, *nx; e; e = nx) {
            nx = e->next;
            replica_free(e);
        }
    }
}

/* ---- memory ---- */

/* [H] of c: move up to want of c's replicas of node (-1: any) that no PTE
 * maps (the instance's reference is their only one: stable under [H],
 * since a fault takes its reference under it) onto *out.  How many. */
static uint64_t shrink_instance(struct cl_pcache *c, int node, uint64_t want,
                                struct clp_entry **out)
{
    uint64_t n = 0;
    for (int r = 0; r < CLP_ROWS && n < want; r++) {
        for (struct clp_entry *e = c->rows[r], *nx; e && n < want; e = nx) {
            nx = e->next;
            if (busy(e) || !e->pg || (node >= 0 && e->pg->node != node) ||
                __atomic_load_n(&e->pg->count, __ATOMIC_ACQUIRE) != 1)
                continue;
            unlink(c, e);
            replica_uncount(e);
            e->next = *out;
            *out = e;
            n++;
        }
    }
    return n;
}

uint64_t cl_pcache_shrink(int node, uint64_t want)
{
    uint64_t freed = 0;
    for (int cl = 0; cl < map->ncl && freed < want; cl++) {
        struct cl_pcache *c = insts[cl];
        struct clp_entry *gone = NULL;
        hlock_enter(&c->h);
        freed += shrink_instance(c, node, want - freed, &gone);
        hlock_exit(&c->h);
        for (struct clp_entry *e = gone, *nx; e; e = nx) {
            nx = e->next;
            replica_free(e);
        }
    }
    return freed;
}

/* ---- for tests ---- */

struct page *cl_pcache_replica(int cl, struct vnode *vp, uint64_t idx)
{
    struct cl_pcache *c = insts[cl];
    hlock_enter(&c->h);
    struct clp_entry *e = find(c, vp, idx);
    struct page *pg = e && !hres_busy(&e->word) ? e->pg : NULL;
    hlock_exit(&c->h);
    return pg;
}

bool cl_pcache_test_reserve(int cl, struct vnode *vp, uint64_t idx, bool reserve)
{
    struct cl_pcache *c = insts[cl];
    hlock_enter(&c->h);
    struct clp_entry *e = find(c, vp, idx);
    bool ok = e && hres_busy(&e->word) != reserve;
    if (ok && reserve)
        hres_set(&e->word);
    else if (ok)
        hres_clear(&e->word);
    hlock_exit(&c->h);
    return ok;
}
