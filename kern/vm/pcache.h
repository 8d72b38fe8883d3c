/*
 * The page cache: pages of regular files keyed by (vnode, page number),
 * shared by every mapping of the file.  Theory and locks in
 * kern/vm/pcache.c; the read/write/truncate hooks are declared with the
 * VOP_* macros in kern/vfs/vnode.h.
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
 * end of the file, -ENOMEM, or the file system's read error.  May sleep
 * (the caller may hold an address space's a_lock). */
int pcache_get(struct vnode *vp, uint64_t idx, struct page **pgp);

/* The cached page (vp, idx) with a reference, or NULL; never reads. */
struct page *pcache_lookup(struct vnode *vp, uint64_t idx);

/* A mapping wrote to pg (its PTE's dirty bit): if pg is still cached,
 * it must be written back.  Any context; no lock. */
void pcache_mark_dirty(struct page *pg);

/* Write back the dirty cached pages of vp numbered [lo, hi) (never past
 * the end of the file).  0 or the first write error.  May sleep. */
int pcache_flush(struct vnode *vp, uint64_t lo, uint64_t hi);
/* Pages the cache holds, of every file (/proc/meminfo's Cached). */
uint64_t pcache_pages(void);

/* The last reference to vp is gone: free its cached pages.  Spin locks
 * only, so VN_RELE may call it from any context that may release. */
void pcache_purge(struct vnode *vp);

/* Statistics (summed over the CPUs). */
struct pcache_stats {
    uint64_t hits;          /* pcache_get found the page */
    uint64_t misses;        /* pcache_get read it from the file */
    uint64_t past_eof;      /* misses wholly past the end of the file */
    uint64_t writebacks;    /* dirty pages written to their file */
    uint64_t purged;        /* pages freed at a file's last release */
    uint64_t truncated;     /* pages dropped by a truncation */
    uint64_t patched;       /* cached pages updated by write(2) */
};
void pcache_get_stats(struct pcache_stats *st);

#endif
