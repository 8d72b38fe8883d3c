/*
 * Physical memory: page frames, per-node buddy free lists, per-CPU caches.
 */
#ifndef KERN_VM_PAGE_H
#define KERN_VM_PAGE_H

#include <kern/types.h>

#define PAGE_MAX_ORDER 11       /* orders 0..10: 4 KiB .. 4 MiB */

/* One per physical page frame (see kern/vm/page.c for the locking). */
struct page {
    struct page *next, *prev;   /* free list links, under the node lock */
    uint16_t flags;             /* PG_* */
    uint8_t order;              /* block order while free or allocated as a block */
    uint8_t node;               /* [boot] home node */
    uint32_t count;             /* owner-defined (slab: objects in use) */
    void *owner;                /* slab cache that carved the page, or NULL */
};

#define PG_FREE      0x01       /* head of a free buddy block */
#define PG_RESERVED  0x02       /* never allocatable (firmware, kernel image) */
#define PG_SLAB      0x04       /* carved into kmalloc objects */
#define PG_LARGE     0x08       /* head of a multi-page kmalloc block */

extern struct page *page_array;
extern uint64_t max_pfn;

static inline struct page *pfn_to_page(uint64_t pfn) { return &page_array[pfn]; }
static inline uint64_t page_to_pfn(const struct page *p) { return (uint64_t)(p - page_array); }
static inline paddr_t page_to_phys(const struct page *p) { return page_to_pfn(p) << PAGE_SHIFT; }
static inline void *page_to_virt(const struct page *p) { return phys_to_virt(page_to_phys(p)); }
static inline struct page *virt_to_page(const void *va) { return pfn_to_page(virt_to_phys(va) >> PAGE_SHIFT); }

/* Allocate 2^order contiguous pages, preferring the calling CPU's node and
 * then the nearest nodes by SLIT distance.  NULL when memory is exhausted. */
struct page *page_alloc(unsigned order);
/* The same, preferring a given node. */
struct page *page_alloc_node(unsigned order, int node);
void page_free(struct page *p, unsigned order);

/* Convenience: one zeroed page's direct-map address, or NULL. */
void *page_alloc_zeroed_va(void);

/* Free pages per node (for tests and statistics). */
uint64_t page_free_count(int node);

/* Boot: build frame array and free lists from the memory map and NUMA
 * ranges (after pmap_init and numa_init). */
void page_init(void);
/* Per-CPU page caches are usable once each CPU has its struct cpu. */

#endif
