/*
 * The page tables of user address spaces and the consistency of the TLBs
 * that cache them: the user pages' PTEs (pte_page, pte_update), the walk
 * (pt_walk, for_each_pte), the list of tables to free, the shootdown (tlb_flush)
 * and loading an address space on a CPU (as_activate, as_current).
 *
 * Theory (from kern/vm/as.c, which keeps the segments).  Each address
 * space has its own PML4 whose upper half (entries 256..511) is copied
 * from the kernel's, so the kernel half is shared and never changes after
 * boot.  Table pages come from the faulting CPU's node (page_alloc_node),
 * as SALSA and Tornado advise; fault pages from the node alloc= chooses
 * (page_alloc_data: that node too, or round robin over the nodes).  Under
 * cluster= both come from the faulting CPU's cluster's pool, on the
 * cluster's node (kern/cluster/cl_vm.c), and alloc= does not apply.
 * Each table page pt_walk makes is also put on the address space's
 * a_tables list (through page->next, which an allocated table page does
 * not otherwise use), so as_destroy frees them by the list instead of
 * scanning every slot of every table for them.
 *
 * TLB consistency.  a_cpumask has a bit for each CPU that has this
 * address space loaded in CR3 (as_activate sets it before loading and
 * clears it after loading another).  A change that removes or reduces a
 * mapping flushes the local TLB and sends a cross-CPU call only to the
 * CPUs in the mask: a CPU that has switched to another CR3 holds no
 * entries of ours (user PTEs are never global).  The PTE is changed before
 * the mask is read, and a CPU sets its bit before it loads CR3, so a CPU
 * missed by the shootdown loads the new PTE.
 *
 * Locks.  a_lock (a resource lock, class "as") protects the page tables:
 * the caller of pt_walk, for_each_pte and tlb_flush holds it
 * (or owns the address space alone, as as_destroy does).  a_cpumask is
 * changed atomically by as_activate, with interrupts off; cpu_as[] is
 * each CPU's own; page->count is atomic, and a PTE that a CPU may still
 * use is changed atomically (pte_update) to keep its accessed and dirty
 * bits.
 */
#include <kern/vm/as.h>
#include <kern/vm/as_impl.h>
#include <kern/vm/page.h>
#include <kern/vm/pmap.h>
#include <kern/lib/string.h>
#include <kern/arch/arch.h>
#include <kern/arch/cpu.h>
#include <kern/arch/smp.h>
#include <kern/cluster/cluster.h>
#include <kern/cluster/cl_vm.h>
#include <kern/sched/thread.h>

#define PTE_SHIFT(level) (PAGE_SHIFT + 9 * (level))

/* [own] loaded on each CPU; stored with WRITE_ONCE, as as_destroy's
 * assertion reads every CPU's (READ_ONCE) */
struct as *cpu_as[MAX_CPUS];
static volatile uint64_t shootdown_ipis;    /* [a] */

uint64_t as_shootdown_ipis(void) { return shootdown_ipis; }


/* ---- pages ---- */

struct page *user_page_alloc_for(const struct seg *s, vaddr_t va)
{
    if (!s || s->s_policy.mode == MPOL_DEFAULT)
        return user_page_alloc();
    struct mempolicy pol = s->s_policy;
    struct page *pg;
    if (pol.mode == MPOL_LOCAL) {
        pg = page_alloc_data();
    } else {
        /* INTERLEAVE by the page's place in the mapping, as Linux's
         * interleave_nid: the same page always lands on the same node. */
        if (pol.mode == MPOL_INTERLEAVE)
            pol.next = (uint32_t)mempolicy_node_for(&pol, seg_page_index(s, va));
        pg = page_alloc_policy(&pol);
    }
    if (pg)
        pg->count = 1;
    return pg;
}

struct page *user_page_alloc(void)
{
    struct thread *t = curthread();
    struct page *pg;
    if (t && t->mempolicy.mode != MPOL_DEFAULT && t->mempolicy.mode != MPOL_LOCAL)
        pg = page_alloc_policy(&t->mempolicy);      /* set_mempolicy's */
    else
        pg = cluster_on() ? page_count_data(cl_page_alloc()) : page_alloc_data();
    if (pg)
        pg->count = 1;
    return pg;
}

struct page *pte_page(uint64_t pte)
{
    return pfn_to_page((pte & PTE_ADDR) >> PAGE_SHIFT);
}

/* Replace the bits of a PTE outside keep with set, atomically: the CPU
 * may set the accessed and dirty bits meanwhile, and those are kept. */
void pte_update(uint64_t *pte, uint64_t keep, uint64_t set)
{
    uint64_t old = __atomic_load_n(pte, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(pte, &old, (old & keep) | set, false, __ATOMIC_SEQ_CST,
                                        __ATOMIC_RELAXED))
        ;
}

/* ---- page tables ---- */

uint64_t *table_of(uint64_t e)
{
    return phys_to_virt(e & PTE_ADDR);
}

/* The PTE for va, making the tables on the way when create is set; NULL
 * when absent (or no memory). */
uint64_t *pt_walk(struct as *as, vaddr_t va, bool create)
{
    uint64_t *t = as->a_pml4;
    for (int level = 3; level > 0; level--) {
        uint64_t *e = &t[(va >> PTE_SHIFT(level)) & 511];
        if (!(*e & PTE_P)) {
            if (!create)
                return NULL;
            struct page *pg = cluster_on() ? cl_page_alloc() :
                page_alloc_node(0, this_cpu()->node);
            if (!pg)
                return NULL;
            memset(page_to_virt(pg), 0, PAGE_SIZE);
            pg->next = as->a_tables;
            as->a_tables = pg;
            *e = page_to_phys(pg) | PTE_P | PTE_W | PTE_U;
        }
        t = table_of(*e);
    }
    return &t[(va >> PAGE_SHIFT) & 511];
}

/* Call fn for every present PTE in [s, e), skipping absent tables. */
static void walk_range(uint64_t *t, int level, vaddr_t base, vaddr_t s, vaddr_t e, pte_fn fn,
                       void *arg)
{
    uint64_t span = 1UL << PTE_SHIFT(level);
    vaddr_t lo = MAX(s, base);
    int first = (int)((lo - base) >> PTE_SHIFT(level));
    int last = (int)((MIN(e, base + 512 * span) - 1 - base) >> PTE_SHIFT(level));
    if (last > 511)
        last = 511;
    if (level == 0) {           /* the leaves: a tight loop over the slots */
        for (uint64_t *p = &t[first], *end = &t[last]; p <= end; p++)
            if (*p & (PTE_P | PTE_KEPT))
                fn(p, base + (uint64_t)(p - t) * PAGE_SIZE, arg);
        return;
    }
    for (int i = first; i <= last; i++)
        if (t[i] & PTE_P)
            walk_range(table_of(t[i]), level - 1, base + (uint64_t)i * span, s, e, fn, arg);
}

void for_each_pte(struct as *as, vaddr_t s, vaddr_t e, pte_fn fn, void *arg)
{
    if (s < e)
        walk_range(as->a_pml4, 3, 0, s, e, fn, arg);
}

/* ---- TLB consistency ---- */

struct shootdown {
    paddr_t root;
    vaddr_t va;
    size_t npages;
};

static void flush_local(paddr_t root, vaddr_t va, size_t npages)
{
    if ((read_cr3() & PTE_ADDR) != root)
        return;
    if (npages > 32) {
        write_cr3(read_cr3());
        return;
    }
    for (size_t i = 0; i < npages; i++)
        invlpg(va + i * PAGE_SIZE);
}

static void shootdown_handler(void *arg)
{
    struct shootdown *sd = arg;
    flush_local(sd->root, sd->va, sd->npages);
}

/* The PTEs of [va, va + npages) changed: flush them here and on every
 * other CPU that may hold them. */
void tlb_flush(struct as *as, vaddr_t va, size_t npages)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    flush_local(as->a_root, va, npages);
    struct shootdown sd = { as->a_root, va, npages };
    uint64_t mask = __atomic_load_n(&as->a_cpumask, __ATOMIC_SEQ_CST) & ~(1UL << cpu_id());
    while (mask) {
        int c = __builtin_ctzl(mask);
        mask &= mask - 1;
        __atomic_add_fetch(&shootdown_ipis, 1, __ATOMIC_RELAXED);
        smp_call_one(c, shootdown_handler, &sd);
    }
}

void as_activate(struct as *as)
{
    uint64_t f = intr_save();
    int me = cpu_id();
    struct as *old = cpu_as[me];
    if (old != as) {
        if (as)
            __atomic_or_fetch(&as->a_cpumask, 1UL << me, __ATOMIC_SEQ_CST);
        write_cr3(as ? as->a_root : pmap_kernel_root());
        if (old)
            __atomic_and_fetch(&old->a_cpumask, ~(1UL << me), __ATOMIC_SEQ_CST);
        WRITE_ONCE(cpu_as[me], as);     /* as_destroy's check reads it */
    }
    intr_restore(f);
}

struct as *as_current(void)
{
    return cpu_as[cpu_id()];
}
