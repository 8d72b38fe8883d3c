/*
 * Inside segmap: what kern/vm/segmap.c (the cache at work) and
 * kern/vm/segmap_init.c (boot, the models' locks, statistics) share.  Not
 * for other files.  Lock keys ([H] the window's hash row lock, [F] its
 * free list's lock, [E] its element lock, [c] constant after boot, [a]
 * atomic) are explained in kern/vm/segmap.c.
 */
#ifndef KERN_VM_SEGMAP_IMPL_H
#define KERN_VM_SEGMAP_IMPL_H

#include <kern/vm/segmap.h>
#include <kern/vfs/ssac.h>
#include <kern/lock/spinlock.h>
#include <kern/arch/cpu.h>

#define SM_NO_ROW 0xffffffffu
#define SM_SSAC_WAYS 4          /* ssac: windows per hash row (seed 001) */

struct smap {
    struct vnode *sm_vp;        /* [H+E] identity: the file (NULL: closed) ... */
    uint64_t sm_idx;            /* [H+E] ... and the page number in it */
    struct page *sm_page;       /* [E] the page shown (one reference), NULL when closed */
    uint32_t sm_refcnt;         /* [F+E] holders; on the free list exactly when 0 */
    uint32_t sm_row;            /* [H+E] the row it is hashed on, SM_NO_ROW when closed;
                                 * stable under [F] while on the free list */
    uint32_t sm_list;           /* [c] its free list */
    struct smap *sm_hnext, *sm_hprev;   /* [H] the row's chain */
    struct smap *sm_fnext, *sm_fprev;   /* [F] the free list */
    spinlock_t *sm_lock;        /* [c] E: own (hashfree), its row's (ssac), the single lock */
    spinlock_t own;             /* hashfree: this window's element lock */
} __cacheline;

struct smrow {
    struct smap *head;          /* [H] the chain */
    spinlock_t *lock;           /* [c] H: own (hashfree, ssac) or the single lock */
    spinlock_t own;
} __cacheline;

struct smlist {
    struct smap *head, *tail;   /* [F] free open windows, least recently used first */
    struct smap *chead;         /* [F] free closed windows (no page), reused first */
    uint32_t nwant;             /* [F] misses sleeping for a free window */
    spinlock_t *lock;           /* [c] F: own (hashfree), its row's (ssac), the single lock */
    spinlock_t own;
} __cacheline;

enum { SMS_HIT, SMS_MISS, SMS_WAIT, SMS_PURGED, SMS_RETRY };

struct segmap {
    int model;                  /* [c] enum cache_model */
    unsigned nwin;              /* [c] windows */
    unsigned rowbits, nrows;    /* [c] rows = 2^rowbits */
    unsigned nlists;            /* [c] 1, or nrows under ssac */
    struct smap *win;           /* [c] nwin of them */
    struct smrow *rows;         /* [c] */
    struct smlist *lists;       /* [c] */
    int64_t open;               /* [a] windows onto a page */
    struct pcpu_counters stats[MAX_CPUS];
};
extern struct segmap sm_cache;

/* The hash row of page idx of vp. */
static inline unsigned sm_hash_row(const struct vnode *vp, uint64_t idx)
{
    return cache_hash(cache_ptr_tag(vp) + idx * 0x10001ull, sm_cache.rowbits);
}

/* The free list a miss in row draws its window from. */
static inline struct smlist *sm_list_for_row(unsigned row)
{
    return &sm_cache.lists[sm_cache.model == CACHE_SSAC ? row : 0];
}

/* Put a free window on its list: an open one at the tail of the open
 * list (most recently used), a closed one (sm_row SM_NO_ROW) on the
 * closed list, reused first.  The caller holds F. */
void sm_free_insert(struct smlist *l, struct smap *sm);

#endif
