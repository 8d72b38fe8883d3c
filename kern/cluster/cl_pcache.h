/*
 * The clustered page cache (cluster=): read-shared file pages replicated
 * into each cluster that faults on them, one copy per cluster on its
 * node; a written page has one home copy.  Theory in
 * kern/cluster/cl_pcache.c.  The fault path (kern/vm/fault.c, as.c) and
 * the page cache (kern/vm/pcache.c, pcache_rw.c) call these only when
 * cluster_on().
 */
#ifndef KERN_CLUSTER_CL_PCACHE_H
#define KERN_CLUSTER_CL_PCACHE_H

#include <kern/lib/types.h>

struct vnode;
struct page;

/* A fault's answer (positive, never seen outside kern/vm/fault.c): the
 * page must become writable at home and its replicas be invalidated,
 * which needs no a_lock held: let a_lock go, cl_pcache_settle, fault
 * again. */
#define CLP_RETRY 1

/* What a fault that answered CLP_RETRY leaves to do (vp held). */
struct clp_pending {
    struct vnode *vp;
    uint64_t idx;
};

/* Boot, from pcache_init, after cluster_init (only when cluster_on()). */
void cl_pcache_init(void);

/*
 * The page a fault on page idx of vp maps (held for the PTE): for a read,
 * this cluster's replica, or the home copy when this cluster is on the
 * home copy's node or the page is written; for a write (want_write), the
 * home copy, after every replica is gone (else CLP_RETRY, *pend filled).
 * *writable: whether the PTE may allow writes (only a written home copy).
 * Errors as pcache_get's.  May sleep; the caller may hold its a_lock.
 */
int cl_pcache_fault(struct vnode *vp, uint64_t idx, bool want_write, struct page **pgp,
                    bool *writable, struct clp_pending *pend);
/* A store to a present read-only PTE of a shared mapping of page idx of
 * vp that maps pg: 0 when the PTE may simply become writable (pg is the
 * written home copy), else CLP_RETRY with *pend filled. */
int cl_pcache_upgrade(struct page *pg, struct vnode *vp, uint64_t idx, struct clp_pending *pend);
/* May a PTE of a shared file mapping that maps pg allow writes?  (mprotect) */
bool cl_pcache_may_write(const struct page *pg);
/* With no lock held: do what a CLP_RETRY left to do, and drop vp. */
void cl_pcache_settle(struct clp_pending *pend);

/* Pages [lo, hi) of vp changed at home (write(2), a truncation): every
 * cluster's replicas of them go, their mappings removed through the
 * reverse mappings.  No a_lock nor fill lock held; may sleep. */
void cl_pcache_invalidate(struct vnode *vp, uint64_t lo, uint64_t hi);
/* vp's last reference went (pcache_purge): every cluster drops its
 * replicas of it.  Spin locks only. */
void cl_pcache_purge_vp(struct vnode *vp);

/* Memory is short: free up to want replicas of node (-1: any) that no
 * PTE maps, from every cluster.  How many.  Spin locks only. */
uint64_t cl_pcache_shrink(int node, uint64_t want);

/* Does cluster cl's memory (its CPUs' nodes) hold home?  Then it maps
 * home rather than a replica. */
bool cl_pcache_home_in(int cl, const struct page *home);

/* For tests: cluster cl's replica of (vp, idx), or NULL (no reference
 * taken: compare it only); reserve or release it as a place-holder
 * being filled would be (true if it was there to reserve). */
struct page *cl_pcache_replica(int cl, struct vnode *vp, uint64_t idx);
bool cl_pcache_test_reserve(int cl, struct vnode *vp, uint64_t idx, bool reserve);
/* For tests: while set, a replica's maker keeps its place-holder reserved
 * until another fault waits on it (at most a few seconds), so that
 * combining is seen even when the copy is quicker than the faults. */
extern volatile bool cl_pcache_test_hold;

#endif
