/*
 * The page cache: pages of regular files keyed by (vnode, page number),
 * shared by every mapping of the file.  Theory and locks in
 * kern/vm/pcache.c; the truncate hooks are declared with the VOP_*
 * macros in kern/vfs/vnode.h.
 */
#ifndef KERN_VM_PCACHE_H
#define KERN_VM_PCACHE_H

#include <kern/lib/types.h>

struct vnode;
struct page;

/* Boot: the hash rows and the per-vnode locks (after lock_init). */
void pcache_init(void);

/* The page of vp holding bytes [idx * PAGE_SIZE, +PAGE_SIZE), with a
 * reference for the caller (page_rele it): from the cache, or read from
 * the file at a miss into a page of this CPU's node (bytes past the end
 * of the file read as zeros).  -ENXIO when the page lies wholly past the
 * end of the file, -ENODEV for a file whose file system has no page
 * operations, -ENOMEM, or the file system's read error.  May sleep
 * (the caller may hold an address space's a_lock). */
int pcache_get(struct vnode *vp, uint64_t idx, struct page **pgp);

/* pcache_get with flags: PC_CREATE, a page wholly past the end of the
 * file is entered as zeros (a write is about to cover it); PC_LOCKED, the
 * caller holds vp's fill lock (pcache_fill_lock). */
#define PC_CREATE 0x1
#define PC_LOCKED 0x2
int pcache_get_flags(struct vnode *vp, uint64_t idx, int flags, struct page **pgp);
/* The fill lock of vp (a reader/writer lock shared by a few vnodes:
 * fills take it shared, everything else exclusive). */
struct rwlock *pcache_fill_lock(const struct vnode *vp);

/* The cached page (vp, idx) with a reference, or NULL; never reads. */
struct page *pcache_lookup(struct vnode *vp, uint64_t idx);

/* A mapping wrote to pg (its PTE's dirty bit): if pg is still cached,
 * it must be written back.  Any context; no lock. */
void pcache_mark_dirty(struct page *pg);

/* Write back the dirty cached pages of vp numbered [lo, hi) (never past
 * the end of the file).  0 or the first write error.  May sleep. */
int pcache_flush(struct vnode *vp, uint64_t lo, uint64_t hi);
/* vp lost its last name: its dirty pages need not be written (its blocks
 * are about to be freed).  The caller holds a reference to vp. */
void pcache_discard_dirty(struct vnode *vp);
/* pcache_flush with vp's fill lock held. */
int pcache_flush_locked(struct vnode *vp, uint64_t lo, uint64_t hi);
/* A cluster made (d = 1) or dropped (-1) a replica of a page of vp
 * (kern/cluster/cl_pcache.c): counted with its pages, so that the last
 * release purges the replicas too, before the vnode may be reused. */
void pcache_count_replica(struct vnode *vp, int d);
/* Pages the cache holds, of every file (/proc/meminfo's Cached). */
uint64_t pcache_pages(void);

/* read(2) and write(2) of a regular file whose file system supplies the
 * page operations (kern/vm/pcache_rw.c): through segmap windows only. */
struct uio;
struct cred;
int pcache_rw_read(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr);
int pcache_rw_write(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr);

/* The last reference to vp is gone, or (VKEEPPAGES) its in-core inode is
 * about to be another file's: free its cached pages.  Spin locks
 * only, so VN_RELE may call it from any context that may release. */
void pcache_purge(struct vnode *vp);

/* ---- reclaim (kern/vm/pcache_reclaim.c) ---- */

/* Boot: the low-water marks and a pageout daemon per node. */
void pcache_reclaim_start(void);
/* Must node's memory be reclaimed: is it below its low-water mark, and
 * so is every other node, which its allocations would fall back to?  (A
 * node alone below it is not short: as Linux with zone_reclaim_mode 0,
 * a remote page is taken before a cached one is thrown away.) */
bool pcache_node_short(int node);
/* Is node's own free memory below its low-water mark (whatever the other
 * nodes have)?  The clustered page cache makes no replicas there. */
bool pcache_node_low(int node);
/* Free up to want clean pages that only the cache holds, of node (-1:
 * any), oldest first (a clock over the hash rows).  How many it freed.
 * Spin locks only. */
uint64_t pcache_reclaim(int node, uint64_t want);
/* Unmap (through the reverse mappings), write back and free up to want
 * mapped file pages of node (-1: any), oldest first.  How many it freed.
 * No a_lock nor fill lock held (it takes both). */
uint64_t pcache_reclaim_mapped(int node, uint64_t want);
/* Mapped pages freed so far by pcache_reclaim_mapped. */
uint64_t pcache_reclaim_mapped_count(void);
/* A fault found no free page: with no lock held, wake the pageout daemons
 * and wait until pages are free (true), or until a daemon found nothing
 * more to write back, free or unmap (false: only anonymous memory is
 * left, the out-of-memory case). */
bool pcache_wait_for_memory(void);
/* On a short node (before a fill, or a write): free clean pages up to the
 * high-water mark, and wake the node's daemon. */
void pcache_reclaim_for_fill(int node);
/* Is a pageout daemon holding files (for a write-back) right now?  An
 * unmount waits for it rather than fail with EBUSY. */
bool pcache_pageout_holding(void);
/* Pages reclaimed since boot, and the daemons' runs on short memory. */
void pcache_reclaim_stats(uint64_t *reclaimed, uint64_t *runs);

/* Statistics (summed over the CPUs). */
struct pcache_stats {
    uint64_t hits;          /* pcache_get found the page */
    uint64_t misses;        /* pcache_get read it from the file */
    uint64_t past_eof;      /* misses wholly past the end of the file */
    uint64_t writebacks;    /* dirty pages written to their file */
    uint64_t purged;        /* pages freed at a file's last release */
    uint64_t truncated;     /* pages dropped by a truncation */
    uint64_t fill_waits;    /* pcache_get slept on another thread's fill of the page */
};
void pcache_get_stats(struct pcache_stats *st);

#endif
