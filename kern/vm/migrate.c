/*
 * Page migration: a process's page moved to another node, for
 * move_pages and migrate_pages (kern/proc/sys_mempolicy.c).
 *
 * Theory.  Only a page its mapping owns alone can move: a private page
 * (anonymous, or a private file mapping's own copy) that no other
 * mapping holds (count 1) and that is not the page cache's (PG_CACHED,
 * PG_REPLICA).  Linux moves the others too, through its reverse maps of
 * anonymous memory and the page cache; Tempest has neither for these, so
 * a page mapped elsewhere as well is -EACCES (Linux's answer without
 * MPOL_MF_MOVE_ALL, which here changes nothing) and a page of the file
 * cache -EBUSY (Linux's "cannot be moved now").
 *
 * A move holds the address space's a_lock throughout (class "as").  It
 * first clears the PTE and flushes it from every CPU running the
 * address space, so no thread can store into the old page while it is
 * copied (one that touches it faults, and its fault waits for a_lock,
 * then finds the new page: fault_locked walks the PTE again); then it
 * copies the page to one from the target node, installs that with the
 * old PTE's bits (accessed, dirty, writable), and releases the old page.
 * No TLB holds a not-present entry, so the new PTE needs no flush.
 *
 * Locks: a_lock of the address space; the page allocator's own.
 */
#include <kern/vm/as.h>
#include <kern/vm/as_impl.h>
#include <kern/vm/page.h>
#include <kern/vm/pmap.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

/* The page at va, present, or NULL; -EFAULT in *err with no mapping. */
static uint64_t *present_pte(struct as *as, vaddr_t va, struct seg **sp, int *err)
{
    *sp = seg_find(as, va);
    if (!*sp) {
        *err = -EFAULT;
        return NULL;
    }
    uint64_t *pte = pt_walk(as, va, false);
    if (!pte || !(*pte & PTE_P)) {
        *err = -ENOENT;
        return NULL;
    }
    *err = 0;
    return pte;
}

int as_page_node(struct as *as, vaddr_t va)
{
    struct seg *s;
    int err;
    va = ALIGN_DOWN(va, PAGE_SIZE);
    rlock_acquire(&as->a_lock);
    uint64_t *pte = present_pte(as, va, &s, &err);
    int node = pte ? pte_page(*pte)->node : err;
    rlock_release(&as->a_lock);
    return node;
}

/* Why pg, mapped by s, may not move (0: it may). */
static int unmovable(const struct seg *s, const struct page *pg)
{
    if ((s->s_flags & MAP_SHARED) || s->s_amap)
        return -EACCES;
    if (page_flags(pg) & (PG_CACHED | PG_REPLICA | PG_SLAB | PG_RESERVED))
        return -EBUSY;
    return __atomic_load_n(&pg->count, __ATOMIC_ACQUIRE) == 1 ? 0 : -EACCES;
}

/* With a_lock held: move the page *pte maps at va to node. */
static int move_locked(struct as *as, vaddr_t va, uint64_t *pte, struct seg *s, int node)
{
    struct page *old = pte_page(*pte);
    if (old->node == node)
        return node;
    int err = unmovable(s, old);
    if (err)
        return err;             /* not tried: Linux counts these nowhere either */
    struct mempolicy only = { .mode = MPOL_BIND, .nodes = 1UL << node };
    struct page *pg = page_alloc_policy(&only);
    page_count_migration(pg != NULL);       /* /proc/vmstat's pgmigrate_* */
    if (!pg)
        return -ENOMEM;
    pg->count = 1;
    uint64_t was = __atomic_exchange_n(pte, 0, __ATOMIC_ACQ_REL);
    tlb_flush(as, va, 1);
    memcpy(page_to_virt(pg), page_to_virt(old), PAGE_SIZE);
    __atomic_store_n(pte, page_to_phys(pg) | (was & ~PTE_ADDR), __ATOMIC_RELEASE);
    page_rele(old);
    return node;
}

int as_migrate_page(struct as *as, vaddr_t va, int node)
{
    struct seg *s;
    int err;
    va = ALIGN_DOWN(va, PAGE_SIZE);
    rlock_acquire(&as->a_lock);
    uint64_t *pte = present_pte(as, va, &s, &err);
    int r = pte ? move_locked(as, va, pte, s, node) : err;
    rlock_release(&as->a_lock);
    return r;
}

/* migrate_pages's map from an old node to a new one: the k-th node of
 * from goes to the k-th of to (wrapping), as Linux's node remapping. */
static int bits_in(uint64_t m)
{
    int n = 0;
    for (; m; m &= m - 1)
        n++;
    return n;
}

static int remap_node(int node, uint64_t from, uint64_t to)
{
    int k = bits_in(from & ((1UL << node) - 1));
    int nto = bits_in(to);
    k %= nto;
    for (int n = 0; n < 64; n++)
        if ((to & (1UL << n)) && k-- == 0)
            return n;
    return node;
}

struct migrate_walk {
    struct as *as;
    struct seg *s;
    uint64_t from, to, left;
};

/* for_each_pte's visit of one present page for as_migrate_nodes. */
static void migrate_pte(uint64_t *pte, vaddr_t va, void *arg)
{
    struct migrate_walk *w = arg;
    int node = pte_page(*pte)->node;
    if (!(w->from & (1UL << node)) || (w->to & (1UL << node)))
        return;                     /* not asked, or already where it may stay */
    if (move_locked(w->as, va, pte, w->s, remap_node(node, w->from, w->to)) < 0)
        w->left++;
}

uint64_t as_migrate_nodes(struct as *as, uint64_t from, uint64_t to)
{
    struct migrate_walk w = { .as = as, .from = from, .to = to };
    rlock_acquire(&as->a_lock);
    for (w.s = as->a_segs; w.s; w.s = w.s->s_next)
        for_each_pte(as, w.s->s_start, w.s->s_end, migrate_pte, &w);
    rlock_release(&as->a_lock);
    return w.left;
}
