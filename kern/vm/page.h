/*
 * Physical memory: page frames, per-node buddy free lists, per-CPU caches.
 */
#ifndef KERN_VM_PAGE_H
#define KERN_VM_PAGE_H

#include <kern/lib/types.h>

#define PAGE_MAX_ORDER 11       /* orders 0..10: 4 KiB .. 4 MiB */

struct vnode;

/* One per physical page frame (see kern/vm/page.c for the locking, and
 * kern/vm/pcache.c for the page cache's fields). */
struct page {
    union {
        struct page *next;      /* free list links, under the node lock */
        struct page *p_hnext;   /* page cache: its hash row's chain [row lock] */
    };
    union {
        struct page *prev;
        struct page *p_vnext;   /* page cache: its vnode's page list [vnode list lock] */
    };
    uint16_t flags;             /* PG_*; PG_CACHED and PG_DIRTY change atomically */
    uint8_t order;              /* block order while free or allocated as a block */
    uint8_t node;               /* [boot] home node */
    uint32_t count;             /* owner-defined (slab: objects in use; user and
                                 * cached pages: references, atomic) */
    union {
        void *owner;            /* slab cache that carved the page, or NULL */
        struct vnode *p_vp;     /* page cache: the file it caches [row lock] */
    };
    uint64_t p_index;           /* page cache: its page number in p_vp [row lock] */
};

#define PG_FREE      0x01       /* head of a free buddy block */
#define PG_RESERVED  0x02       /* never allocatable (firmware, kernel image) */
#define PG_SLAB      0x04       /* carved into kmalloc objects */
#define PG_LARGE     0x08       /* head of a multi-page kmalloc block */
#define PG_CACHED    0x10       /* in the page cache as (p_vp, p_index) */
#define PG_DIRTY     0x20       /* cached, and newer than the file: to be written back */
#define PG_REFD      0x40       /* cached, and looked up since the reclaim clock passed it */
#define PG_REPLICA   0x80       /* a cluster's replica of a cached page (kern/cluster/cl_pcache.c) */
#define PG_WRITTEN   0x100      /* cached, written under cluster=: never replicated */
#define PG_WRITING   0x200      /* cached, being made written under cluster=: no new replica */
#define PG_INVALIDATING 0x400   /* cached: one thread is removing its replicas (cl_pcache_settle) */

extern struct page *page_array;
extern uint64_t max_pfn;

static inline struct page *pfn_to_page(uint64_t pfn) { return &page_array[pfn]; }
/* The flags of a page other CPUs may change meanwhile (a cached page's
 * PG_DIRTY and PG_REFD, a home page's PG_WRITTEN, PG_WRITING and
 * PG_INVALIDATING change by atomic read-modify-writes): an atomic load,
 * so that no plain read races with those writes. */
static inline uint16_t page_flags(const struct page *p)
{
    return __atomic_load_n(&p->flags, __ATOMIC_RELAXED);
}
static inline uint64_t page_to_pfn(const struct page *p) { return (uint64_t)(p - page_array); }
static inline paddr_t page_to_phys(const struct page *p) { return page_to_pfn(p) << PAGE_SHIFT; }
static inline void *page_to_virt(const struct page *p) { return phys_to_virt(page_to_phys(p)); }
static inline struct page *virt_to_page(const void *va) { return pfn_to_page(virt_to_phys(va) >> PAGE_SHIFT); }

/* Allocate 2^order contiguous pages, preferring the calling CPU's node and
 * then the nearest nodes by SLIT distance.  NULL when memory is exhausted. */
struct page *page_alloc(unsigned order);
/* The same, preferring a given node. */
struct page *page_alloc_node(unsigned order, int node);
/* A user data page (anonymous or copy-on-write; kern/vm/as_pt.c), from the
 * node alloc= chooses (page_data_node), counted as local or other. */
struct page *page_alloc_data(void);
/* Count p, a user data page got some other way (a cluster's pool,
 * kern/cluster/cl_vm.c), as local or other; returns p (NULL passes). */
struct page *page_count_data(struct page *p);
/* The node the next user data page should come from under policy (enum
 * alloc_policy): the calling CPU's, or the next of its round robin. */
int page_data_node_for(int policy);
/* The same under alloc=. */
int page_data_node(void);
/* User data pages allocated so far on the allocating CPU's node (local)
 * and on another node (other), summed over the CPUs: /proc/vmstat's
 * numa_local and numa_other. */
void page_data_counts(uint64_t *local, uint64_t *other);
/* /proc/vmstat's NUMA counts: pages an INTERLEAVE policy placed, pages
 * moved to another node and moves refused; and a move's count. */
void page_numa_counts(uint64_t *interleaved, uint64_t *migrated, uint64_t *migrate_failed);
void page_count_migration(bool moved);
void page_free(struct page *p, unsigned order);

/*
 * A thread's memory policy (set_mempolicy, kern/proc/sys_mempolicy.c;
 * Linux's modes and values): where its user data pages come from.
 * DEFAULT (and LOCAL) leave it to alloc= and cluster=; PREFERRED tries
 * its node first, then the nearest; PREFERRED_MANY the nearest of its
 * nodes, then any; BIND only its nodes, nearest first; INTERLEAVE its
 * nodes in turn, a page each, then the nearest with memory.
 */
#define MPOL_DEFAULT        0
#define MPOL_PREFERRED      1
#define MPOL_BIND           2
#define MPOL_INTERLEAVE     3
#define MPOL_LOCAL          4
#define MPOL_PREFERRED_MANY 5
#define MPOL_MAX            6
struct mempolicy {
    uint16_t mode;              /* MPOL_* */
    uint16_t flags;             /* MPOL_F_STATIC_NODES, MPOL_F_RELATIVE_NODES, as given */
    uint32_t next;              /* INTERLEAVE: the node the next page tries */
    uint64_t nodes;             /* the nodes (bit n: node n), memory-less ones left out */
    uint64_t asked;             /* the mask as given (get_mempolicy with the flags) */
};
/* A user data page by the policy pol (not DEFAULT or LOCAL), counted as
 * page_alloc_data counts; NULL when its nodes have none free. */
struct page *page_alloc_policy(struct mempolicy *pol);
/* INTERLEAVE's node for the thread's next page (not taken). */
int mempolicy_interleave_node(const struct mempolicy *pol);
/* The nodes that have memory (a policy's nodes must be among them). */
uint64_t page_nodes_with_memory(void);

/* References to a page of user memory or of the page cache (count, set
 * to 1 by its allocator): the last page_rele frees it. */
static inline void page_hold(struct page *p)
{
    __atomic_add_fetch(&p->count, 1, __ATOMIC_RELAXED);
}
void page_rele(struct page *p);

/* Convenience: one zeroed page's direct-map address, or NULL. */
void *page_alloc_zeroed_va(void);

/* Free pages per node (for tests and statistics). */
uint64_t page_free_count(int node);
/* Pages the node's allocator manages in all (free or not). */
uint64_t page_total_count(int node);

/* Boot: build frame array and free lists from the memory map and NUMA
 * ranges (after pmap_init and numa_init). */
void page_init(void);
/* Per-CPU page caches are usable once each CPU has its struct cpu. */

#endif
