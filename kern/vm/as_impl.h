/*
 * Inside the address-space code: what kern/vm/as.c (segments),
 * kern/vm/as_pt.c (page tables, TLB) and kern/vm/fault.c (the fault path)
 * share.  Not for other files.
 * The caller holds the address space's a_lock for everything here that
 * touches its segments or page tables (the theory in as.c).
 */
#ifndef KERN_VM_AS_IMPL_H
#define KERN_VM_AS_IMPL_H

#include <kern/vm/as.h>
#include <kern/arch/cpu.h>

struct page;

/* A software PTE bit: a page kept, not present, under PROT_NONE. */
#define PTE_KEPT 0x200UL

/* A fresh page from this CPU's node for a user mapping, count 1. */
struct page *user_page_alloc(void);
/* The same for a page at va of segment s: by the segment's own policy
 * (mbind) when it has one. */
struct page *user_page_alloc_for(const struct seg *s, vaddr_t va);
/* The page offset of va in s's object (the file's, or the mapping's own
 * for anonymous memory): INTERLEAVE's index. */
static inline uint64_t seg_page_index(const struct seg *s, vaddr_t va)
{
    return s->s_off / PAGE_SIZE + (va - s->s_start) / PAGE_SIZE;
}
/* The page a present PTE maps. */
struct page *pte_page(uint64_t pte);
/* Replace the bits of a PTE outside keep with set, atomically: the CPU
 * may set the accessed and dirty bits meanwhile, and those are kept. */
void pte_update(uint64_t *pte, uint64_t keep, uint64_t set);
/* The PTE for va, making the tables on the way when create is set; NULL
 * when absent (or no memory). */
uint64_t *pt_walk(struct as *as, vaddr_t va, bool create);
typedef void (*pte_fn)(uint64_t *pte, vaddr_t va, void *arg);
/* Call fn for every present PTE in [s, e), skipping absent tables. */
void for_each_pte(struct as *as, vaddr_t s, vaddr_t e, pte_fn fn, void *arg);
/* The table a present page-table entry points to. */
uint64_t *table_of(uint64_t e);
/* Free the table t of the given level and every table below it. */
/* The PTEs of [va, va + npages) changed: flush them here and on every
 * other CPU that may hold them. */
void tlb_flush(struct as *as, vaddr_t va, size_t npages);
/* The address space loaded on each CPU (each CPU's own; as_activate). */
extern struct as *cpu_as[MAX_CPUS];
/* The segment holding va, or NULL. */
struct seg *seg_find(struct as *as, vaddr_t va);
/* Is s a shared mapping of a file? */
bool seg_shared_file(const struct seg *s);
/* The page number in the file of va, in a vnode segment. */
uint64_t file_index(const struct seg *s, vaddr_t va);
/* Remove a present PTE (arg: its as); a store it saw marks its page
 * cache page dirty.  The caller flushes the TLBs. */
void unmap_pte(uint64_t *pte, vaddr_t va, void *arg);
/* Put vnode segment s of as on its file's reverse-map chain, or take it
 * off (kern/vm/rmap.c); a_lock held.  No-ops for other segments. */
void rmap_link(struct as *as, struct seg *s);
void rmap_unlink(struct seg *s);
/* The PTE flags for a page of s, writable or not. */
uint64_t pte_flags(const struct seg *s, bool writable);

#endif
