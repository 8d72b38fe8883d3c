/*
 * Inside the page cache: what kern/vm/pcache.c (the cache) and
 * kern/vm/pcache_reclaim.c (the reclaim and the pageout daemons) share.
 * Not for other files.  Theory and locks in kern/vm/pcache.c.
 */
#ifndef KERN_VM_PCACHE_IMPL_H
#define KERN_VM_PCACHE_IMPL_H

#include <kern/vm/pcache.h>
#include <kern/vfs/ssac.h>
#include <kern/lock/spinlock.h>
#include <kern/arch/cpu.h>

/* A fill under way: page idx of vp is being read by one thread (on its
 * stack); others that want the page sleep on it (kern/vm/pcache.c). */
struct pc_fill {
    struct vnode *vp;
    uint64_t idx;
    struct pc_fill *next;       /* [row lock] */
};

struct pc_row {
    spinlock_t lock;
    struct page *head;          /* [lock] linked by p_hnext */
    struct pc_fill *fills;      /* [lock] the fills under way of its pages */
} __cacheline;

struct pc_vlock {
    spinlock_t lock;
} __cacheline;

#define VLOCK_BITS 6
#define NVLOCKS (1 << VLOCK_BITS)

extern struct pc_row *pcache_rows;          /* [boot] 2^pcache_row_bits rows */
extern unsigned pcache_row_bits;            /* [boot] */

enum { C_HIT, C_MISS, C_EOF, C_WRITEBACK, C_PURGED, C_TRUNCATED, C_FILLWAIT };
extern struct pcpu_counters pcache_counters[MAX_CPUS];

enum removal { RM_KEPT, RM_REMOVED, RM_RECLAIMED };

/* The hash row of page idx of vp. */
struct pc_row *pcache_row_of(const struct vnode *vp, uint64_t idx);
/* The lock of vp's page list (shared by a few vnodes). */
spinlock_t *pcache_vlist_lock(const struct vnode *vp);
/* Count d pages more (or fewer) for vp and in all. */
void pcache_npages_add(struct vnode *vp, int d);

#endif
