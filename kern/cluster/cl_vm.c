/*
 * Per-cluster page pools for the fault path (cluster=), seed 000's
 * hierarchical clustering applied to where Hurricane's fault test spends
 * its time beside the page cache: getting a frame for an anonymous page,
 * a private copy or a page-table page.
 *
 * Theory.  In Hurricane each cluster manages its own memory: a fault is
 * served from the cluster's own structures, under the cluster's coarse
 * lock, and never touches another cluster's.  Here each cluster has a
 * small pool of free pages on the cluster's node (cluster_alloc_instance
 * puts the pool itself there too), under one coarse hybrid lock (class
 * cluster_vm, held only to pop or push a page, never across the
 * allocator).  A fault takes a page from its cluster's pool; an empty
 * pool is refilled with a batch from the cluster's node (page_alloc_node,
 * which falls back to the nearest node with memory) taken outside the
 * lock, so the node allocator's lock is taken once per POOL_BATCH faults
 * instead of once per fault, and the frames of one cluster's address
 * spaces stay on one node.  Pages go back to the node allocator when their
 * last reference goes (page_rele), as unclustered pages do: the memory
 * layer (kern/vm/page.c) sits below the clusters and cannot call up, and
 * a freed page of another cluster's process would be the wrong cluster's
 * anyway.  So a pool holds at most POOL_MAX pages that the node's free
 * count does not show.  The price: a cluster spanning several nodes (on
 * hector, one CPU per node, any cluster of more than one CPU) gets its
 * pages from its first CPU's node, one hop away for the others, where
 * unclustered faults take the faulting CPU's own node: the cluster's
 * memory, as in Hurricane, rather than the CPU's.  Reserve bits are not needed: a free page has no
 * longer work done on it under the pool.
 *
 * Why these pages and not the address space's own structures: an address
 * space is private to its process, and its a_lock is already the one lock
 * a fault holds; what independent faults of one cluster share is the
 * page allocator, and the cluster's pool is what bounds that sharing to
 * the cluster (the paper's point of clustering: contention bounded by the
 * cluster size, not the machine's).
 *
 * Off means off: without cluster= no pool exists, and the two hooks in
 * kern/vm/as_pt.c are one cluster_on() test each.
 *
 * Locks: [H] the pool's coarse lock (a spin lock, a leaf but for the
 * page allocator's node lock, which is never taken under it); [c]
 * constant after cl_vm_init.
 */
#include <kern/cluster/cl_vm.h>
#include <kern/cluster/cluster.h>
#include <kern/cluster/hybrid.h>
#include <kern/vm/page.h>
#include <kern/arch/cpu.h>
#include <kern/arch/panic.h>

LOCK_CLASS(cluster_vm_class, "cluster_vm", LK_SPIN);

#define POOL_BATCH 8            /* pages a refill takes from the node */
#define POOL_MAX 32             /* pages a pool keeps at most */

struct cl_pool {
    struct hlock h;
    struct page *free;          /* [H] linked by page->next */
    int nfree;                  /* [H] */
};

static struct cluster_map *map;                 /* [c] */
static struct cl_pool *pools[MAX_CPUS];         /* [c] */

void cl_vm_init(void)
{
    map = cluster_sys();
    for (int cl = 0; cl < map->ncl; cl++) {
        pools[cl] = cluster_alloc_instance(map, cl, sizeof(struct cl_pool));
        if (!pools[cl])
            panic("cl_vm_init: no memory for cluster %d's page pool", cl);
        hlock_init(&pools[cl]->h, &cluster_vm_class, map, cl);
    }
}

/* [H] Pop a page, or NULL. */
static struct page *pop(struct cl_pool *p)
{
    struct page *pg = p->free;
    if (pg) {
        p->free = pg->next;
        pg->next = NULL;
        p->nfree--;
    }
    return pg;
}

/* Refill p from the cluster's node: one page for the caller, the rest of
 * a batch into the pool (up to POOL_MAX).  NULL when memory is out. */
static struct page *refill(struct cl_pool *p, int cl)
{
    struct page *batch[POOL_BATCH];
    int n = 0;
    while (n < POOL_BATCH && (batch[n] = page_alloc_node(0, map->node[cl])) != NULL)
        n++;
    if (n == 0)
        return NULL;
    cluster_count(map, cl, pool_refills);
    int i = 1;
    hlock_enter(&p->h);
    for (; i < n && p->nfree < POOL_MAX; i++) {
        batch[i]->next = p->free;
        p->free = batch[i];
        p->nfree++;
    }
    hlock_exit(&p->h);
    for (; i < n; i++)
        page_free(batch[i], 0);
    return batch[0];
}

struct page *cl_page_alloc(void)
{
    int cl = cluster_self(map);
    struct cl_pool *p = pools[cl];
    hlock_enter(&p->h);
    struct page *pg = pop(p);
    hlock_exit(&p->h);
    if (!pg)
        pg = refill(p, cl);
    return pg;
}
