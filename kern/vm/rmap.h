/*
 * Reverse mappings: from a file to every address space that maps it, so
 * the page cache can reach other processes' PTEs of its pages (truncation,
 * write-back of stores made through mappings, reclaim of mapped pages).
 * Theory and locks in kern/vm/rmap.c.
 */
#ifndef KERN_VM_RMAP_H
#define KERN_VM_RMAP_H

#include <kern/lib/types.h>

struct vnode;
struct page;

/* Boot (from pcache_init): the table of mapping chains. */
void rmap_init(void);

/* A truncation dropped vp's pages from page number first on: remove every
 * address space's PTEs of them (shared, and private copies of file data),
 * so that the next access anywhere faults past the end of the file
 * (SIGBUS), as on Linux.  The caller holds no a_lock nor fill lock. */
void rmap_truncate(struct vnode *vp, uint64_t first);
/* Move the dirty bits of every PTE mapping vp shared to the pages
 * (pcache_mark_dirty), cleaning the PTEs, with TLB shootdown: the next
 * write-back sees every process's stores.  No a_lock nor fill lock held. */
void rmap_harvest(struct vnode *vp);
/* rmap_harvest of vp, then write back its dirty pages [lo, hi). */
int rmap_sync(struct vnode *vp, uint64_t lo, uint64_t hi);
/* rmap_harvest of every mapped file (sync(2), the periodic flush). */
void rmap_harvest_all(void);
/* Remove every PTE that maps one of the n cached pages pgs of vp (page
 * numbers idx[]), in every address space; the caller holds the pages and
 * vp.  Dirty bits go to the pages.  No a_lock nor fill lock held. */
void rmap_unmap_pages(struct vnode *vp, struct page **pgs, const uint64_t *idx, int n);
/* Remove every PTE that maps pg (a replica of page idx of vp, not the
 * cache's page) without waiting for any a_lock: 0, or -EBUSY when an
 * address space was busy (call again).  No a_lock nor spin lock held. */
int rmap_unmap_page(struct vnode *vp, uint64_t idx, struct page *pg);
/* Does some address space map vp?  If so vp is held for the caller
 * (VN_RELE it).  Spin locks only: may be called under a page cache row
 * lock. */
bool rmap_hold_if_mapped(struct vnode *vp);

/* Statistics: PTEs removed by truncations and reclaim, and dirty bits
 * collected from PTEs by write-backs, since boot. */
void rmap_stats(uint64_t *unmapped, uint64_t *harvested);

#endif
