/*
 * Reverse mappings: which address spaces map a file, so that a page of
 * the page cache can find every PTE that maps it.
 *
 * Theory.  The design is object-based, as SVR4's vnode segment lists and
 * Linux's i_mmap, not per page: each vnode segment (struct seg with s_vp,
 * shared or private) is linked, for its whole life, on a chain of a hash
 * table keyed by its vnode (s_rnext, and s_as naming its address space).
 * The PTE of page idx of a file in an address space is found by walking
 * that address space's segments of the file and computing the address,
 * s_start + (idx - s_off / PAGE_SIZE) pages, then its page table.  There
 * is no allocation per page or per PTE, a fault adds no work, and a
 * segment's split, move (mremap) or growth needs no update here, since the
 * chain names only the segment and its address space, and the addresses
 * are read under that address space's a_lock.  The cost moves to the rare
 * operations that need it: truncation, fsync/msync/sync and the reclaim
 * of mapped pages, which visit each address space mapping the file.
 *
 * Locks.  A chain is under a spin lock of the table's row (class "rmap",
 * row 4 of docs/architecture.md, after pcache_row: the reclaim asks
 * rmap_hold_if_mapped under a row lock).  A segment is linked (rmap_link)
 * and unlinked (rmap_unlink, in seg_free) with its address space's a_lock
 * held.  A walk (each_mapping) takes the row lock, holds each address
 * space on the chain of the file (a_holds: the struct as outlives
 * as_destroy until its last hold goes), lets the row lock go, and then
 * visits one address space at a time under its a_lock, the lock that
 * protects its segments and page tables everywhere else (faults, munmap,
 * mprotect, mremap, fork, exit).  Since a_lock comes before the page
 * cache's fill lock, every walk runs with neither held: a truncation
 * walks after it let the fill lock go (the pages past the end are out of
 * the cache by then, so a fault anywhere now gets -ENXIO, and the walk
 * removes the PTEs made before; between the two a store through an old
 * PTE lands in a page already dropped, as on Linux), msync lets its own
 * a_lock go first, and the reclaim runs from the pageout daemons.
 *
 * fork links the child's segments only after their PTEs are copied,
 * still under the parent's a_lock, and each link bumps its row's
 * generation: a walk whose row changed while it ran walks again, so a
 * child made while a truncation was under way is visited too (each
 * visit is idempotent).
 *
 * The clustered page cache (kern/cluster/cl_pcache.c) removes the PTEs
 * of a replica with rmap_unmap_page, which walks the same way but never
 * waits for an a_lock: an address space whose a_lock is held is skipped
 * and the answer is -EBUSY, as when the chain changed meanwhile, and the
 * caller tries again later (a fault holding that a_lock may be spinning
 * on the caller's cluster's reservation: seed 000, section 2.3).
 *
 * Dirty bits.  Stores through a shared mapping set the PTE's dirty bit.
 * rmap_harvest moves each such bit to its page (PG_DIRTY, through
 * pcache_mark_dirty) and clears it, then flushes the TLBs of that address
 * space, so a CPU still holding the old entry cannot store without
 * setting the bit again; the write-back that follows (pcache_flush) sees
 * every process's stores: fsync, msync(MS_SYNC) and sync(2) use it.
 */
#include <kern/vm/rmap.h>
#include <kern/vm/as.h>
#include <kern/vm/as_impl.h>
#include <kern/vm/pcache.h>
#include <kern/vm/page.h>
#include <kern/vm/pmap.h>
#include <kern/vm/kmem.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/ssac.h>
#include <kern/lock/spinlock.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/errno.h>

LOCK_CLASS(rmap_class, "rmap", LK_SPIN);

#define RMAP_BITS 8
#define WALK_PASSES 8           /* walks again while the chain changed, at most */
#define STACK_MAPPERS 16        /* address spaces a walk holds without kmalloc */

struct rmap_row {
    spinlock_t lock;
    struct seg *head;           /* [lock] vnode segments, linked by s_rnext */
    uint64_t gen;               /* [lock] bumped by every link */
} __cacheline;

static struct rmap_row rmap_rows[1 << RMAP_BITS];
static uint64_t unmapped_total, harvested_total;   /* [a] statistics */

void rmap_init(void)
{
    for (int i = 0; i < (1 << RMAP_BITS); i++)
        spin_init_named(&rmap_rows[i].lock, &rmap_class, "rmap");
}

static struct rmap_row *row_of(const struct vnode *vp)
{
    return &rmap_rows[cache_hash(cache_ptr_tag(vp), RMAP_BITS)];
}

void rmap_link(struct as *as, struct seg *s)
{
    if (!s->s_vp)
        return;
    struct rmap_row *r = row_of(s->s_vp);
    s->s_as = as;
    spin_lock(&r->lock);
    s->s_rnext = r->head;
    r->head = s;
    r->gen++;
    spin_unlock(&r->lock);
}

void rmap_unlink(struct seg *s)
{
    if (!s->s_vp || !s->s_as)
        return;                 /* never linked (a failed fork's copy) */
    struct rmap_row *r = row_of(s->s_vp);
    spin_lock(&r->lock);
    struct seg **pp = &r->head;
    while (*pp && *pp != s)
        pp = &(*pp)->s_rnext;
    if (*pp)
        *pp = s->s_rnext;
    spin_unlock(&r->lock);
    s->s_rnext = NULL;
    s->s_as = NULL;
}

void as_hold(struct as *as)
{
    __atomic_add_fetch(&as->a_holds, 1, __ATOMIC_RELAXED);
}

void as_rele(struct as *as)
{
    if (__atomic_sub_fetch(&as->a_holds, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    rlock_destroy(&as->a_lock);
    kfree(as);
}

bool rmap_hold_if_mapped(struct vnode *vp)
{
    struct rmap_row *r = row_of(vp);
    bool found = false;
    spin_lock(&r->lock);
    for (struct seg *s = r->head; s && !found; s = s->s_rnext)
        found = s->s_vp == vp;
    if (found)
        VN_HOLD(vp);            /* safe: the segment holds it */
    spin_unlock(&r->lock);
    return found;
}

/* ---- the walk ---- */

/* The distinct address spaces on r's chain mapping vp, at most max, into
 * out, each held; *gen the row's generation.  -1 when there are more. */
static int snapshot(struct rmap_row *r, struct vnode *vp, struct as **out, int max,
                    uint64_t *gen)
{
    int n = 0;
    spin_lock(&r->lock);
    *gen = r->gen;
    for (struct seg *s = r->head; s; s = s->s_rnext) {
        if (s->s_vp != vp)
            continue;
        bool seen = false;
        for (int k = 0; k < n && !seen; k++)
            seen = out[k] == s->s_as;
        if (seen)
            continue;
        if (n == max) {
            n = -1;
            break;
        }
        out[n++] = s->s_as;
    }
    for (int k = 0; k < n; k++)
        as_hold(out[k]);
    spin_unlock(&r->lock);
    return n;
}

typedef void (*seg_fn)(struct as *as, struct seg *s, void *arg);

/* fn for each segment of vp of each address space mapping it, under that
 * address space's a_lock. */
static void each_mapping(struct vnode *vp, seg_fn fn, void *arg)
{
    struct rmap_row *r = row_of(vp);
    struct as *few[STACK_MAPPERS];      /* no allocation in the common case:
                                         * the reclaim runs when memory is out */
    int max = STACK_MAPPERS;
    for (int pass = 0; pass < WALK_PASSES; pass++) {
        struct as **v = max == STACK_MAPPERS ? few : kmalloc((size_t)max * sizeof *v);
        if (!v) {
            kprintf("rmap: no memory to walk a file's %d mappings\n", max);
            return;
        }
        uint64_t gen;
        int n = snapshot(r, vp, v, max, &gen);
        if (n < 0) {
            if (v != few)
                kfree(v);
            max *= 4;
            pass--;
            continue;
        }
        for (int k = 0; k < n; k++) {
            struct as *as = v[k];
            rlock_acquire(&as->a_lock);
            for (struct seg *s = as->a_segs; s; s = s->s_next)
                if (s->s_vp == vp)
                    fn(as, s, arg);
            rlock_release(&as->a_lock);
            as_rele(as);
        }
        if (v != few)
            kfree(v);
        spin_lock(&r->lock);
        bool same = r->gen == gen;
        spin_unlock(&r->lock);
        if (same)
            return;
    }
}

static uint64_t seg_first_index(const struct seg *s)
{
    return s->s_off >> PAGE_SHIFT;
}

static uint64_t seg_pages(const struct seg *s)
{
    return (s->s_end - s->s_start) >> PAGE_SHIFT;
}

/* ---- truncation ---- */

static void count_unmapped(uint64_t n)
{
    __atomic_add_fetch(&unmapped_total, n, __ATOMIC_RELAXED);
}

static void truncate_seg(struct as *as, struct seg *s, void *arg)
{
    uint64_t first = *(const uint64_t *)arg;
    uint64_t sidx = seg_first_index(s);
    if (sidx + seg_pages(s) <= first)
        return;
    vaddr_t lo = first > sidx ? s->s_start + ((first - sidx) << PAGE_SHIFT) : s->s_start;
    vaddr_t hi = s->s_end;
    /* A private segment's pages past s_flen never came from the file. */
    if (!(s->s_flags & MAP_SHARED) && s->s_flen < hi - s->s_start)
        hi = s->s_start + ALIGN_UP(s->s_flen, PAGE_SIZE);
    if (lo >= hi)
        return;
    uint64_t before = as->a_rss;
    for_each_pte(as, lo, hi, unmap_pte, as);
    tlb_flush(as, lo, (hi - lo) >> PAGE_SHIFT);
    count_unmapped(before - as->a_rss);
}

void rmap_truncate(struct vnode *vp, uint64_t first)
{
    each_mapping(vp, truncate_seg, &first);
}

/* ---- dirty bits ---- */

static void harvest_pte(uint64_t *pte, vaddr_t va, void *arg)
{
    uint64_t *got = arg;
    uint64_t old = __atomic_fetch_and(pte, ~PTE_D, __ATOMIC_SEQ_CST);
    if (old & PTE_D) {
        pcache_mark_dirty(pte_page(old));
        (*got)++;
    }
}

static void harvest_seg(struct as *as, struct seg *s, void *arg)
{
    if (!seg_shared_file(s))
        return;
    uint64_t got = 0;
    for_each_pte(as, s->s_start, s->s_end, harvest_pte, &got);
    if (got)
        tlb_flush(as, s->s_start, seg_pages(s));
    __atomic_add_fetch(&harvested_total, got, __ATOMIC_RELAXED);
}

void rmap_harvest(struct vnode *vp)
{
    each_mapping(vp, harvest_seg, NULL);
}

int rmap_sync(struct vnode *vp, uint64_t lo, uint64_t hi)
{
    rmap_harvest(vp);
    return pcache_flush(vp, lo, hi);
}

#define HARVEST_CHUNK 16

/* Up to HARVEST_CHUNK distinct vnodes of row r, skipping the first skip
 * of them, held, into out. */
static int row_vnodes(struct rmap_row *r, int skip, struct vnode **out)
{
    int n = 0, seen_total = 0;
    struct vnode *seen[HARVEST_CHUNK * 4];
    spin_lock(&r->lock);
    for (struct seg *s = r->head; s && n < HARVEST_CHUNK; s = s->s_rnext) {
        bool dup = false;
        for (int k = 0; k < seen_total && !dup; k++)
            dup = seen[k] == s->s_vp;
        if (dup)
            continue;
        if (seen_total == (int)(sizeof seen / sizeof seen[0]))
            break;
        seen[seen_total++] = s->s_vp;
        if (seen_total > skip) {
            VN_HOLD(s->s_vp);
            out[n++] = s->s_vp;
        }
    }
    spin_unlock(&r->lock);
    return n;
}

void rmap_harvest_all(void)
{
    struct vnode *vps[HARVEST_CHUNK];
    for (int i = 0; i < (1 << RMAP_BITS); i++) {
        if (!__atomic_load_n(&rmap_rows[i].head, __ATOMIC_RELAXED))
            continue;
        int n;
        for (int skip = 0; (n = row_vnodes(&rmap_rows[i], skip, vps)) > 0; skip += n) {
            for (int k = 0; k < n; k++) {
                rmap_harvest(vps[k]);
                VN_RELE(vps[k]);
            }
        }
    }
}

/* ---- reclaim ---- */

struct unmap_req {
    struct page **pgs;
    const uint64_t *idx;
    int n;
};

static void unmap_seg_pages(struct as *as, struct seg *s, void *arg)
{
    const struct unmap_req *q = arg;
    uint64_t sidx = seg_first_index(s), npages = seg_pages(s);
    vaddr_t lo = USER_TOP, hi = 0;
    uint64_t before = as->a_rss;
    for (int k = 0; k < q->n; k++) {
        if (q->idx[k] < sidx || q->idx[k] >= sidx + npages)
            continue;
        vaddr_t va = s->s_start + ((q->idx[k] - sidx) << PAGE_SHIFT);
        if (!(s->s_flags & MAP_SHARED) && va - s->s_start >= s->s_flen)
            continue;           /* bss: never the file's page */
        uint64_t *pte = pt_walk(as, va, false);
        if (!pte || !(*pte & (PTE_P | PTE_KEPT)) || pte_page(*pte) != q->pgs[k])
            continue;           /* not mapped, or a private copy */
        unmap_pte(pte, va, as);
        lo = MIN(lo, va);
        hi = MAX(hi, va + PAGE_SIZE);
    }
    if (lo < hi)
        tlb_flush(as, lo, (hi - lo) >> PAGE_SHIFT);
    count_unmapped(before - as->a_rss);
}

void rmap_unmap_pages(struct vnode *vp, struct page **pgs, const uint64_t *idx, int n)
{
    struct unmap_req q = { pgs, idx, n };
    each_mapping(vp, unmap_seg_pages, &q);
}

/* ---- one page, without waiting (the clustered page cache) ---- */

/* The address spaces mapping vp, held, into *vp_out (v itself, or a
 * kmalloc'd array when more than fit); their count, or -ENOMEM. */
static int snapshot_all(struct rmap_row *r, struct vnode *vp, struct as **few,
                        struct as ***out, uint64_t *gen)
{
    int max = STACK_MAPPERS;
    for (;;) {
        struct as **v = max == STACK_MAPPERS ? few : kmalloc((size_t)max * sizeof *v);
        if (!v)
            return -ENOMEM;
        int n = snapshot(r, vp, v, max, gen);
        if (n >= 0) {
            *out = v;
            return n;
        }
        if (v != few)
            kfree(v);
        max *= 4;
    }
}

/*
 * Remove every PTE that maps pg, a replica of page idx of vp made by the
 * clustered page cache (kern/cluster/cl_pcache.c), in every address space
 * mapping vp -- but take no a_lock that is held: those address spaces are
 * skipped and the answer is -EBUSY, and the caller tries again later (it
 * may hold a reservation that the a_lock's holder is waiting for: seed
 * 000's section 2.3).  So is it when a mapping was added meanwhile (a
 * fork may have copied a PTE of pg).  Thread context, no spin lock held.
 */
int rmap_unmap_page(struct vnode *vp, uint64_t idx, struct page *pg)
{
    struct rmap_row *r = row_of(vp);
    struct as *few[STACK_MAPPERS], **v;
    uint64_t gen;
    int n = snapshot_all(r, vp, few, &v, &gen);
    if (n < 0)
        return -EBUSY;
    struct unmap_req q = { &pg, &idx, 1 };
    bool busy = false;
    for (int k = 0; k < n; k++) {
        struct as *as = v[k];
        if (rlock_tryacquire(&as->a_lock)) {
            for (struct seg *s = as->a_segs; s; s = s->s_next)
                if (s->s_vp == vp)
                    unmap_seg_pages(as, s, &q);
            rlock_release(&as->a_lock);
        } else {
            busy = true;
        }
        as_rele(as);
    }
    if (v != few)
        kfree(v);
    spin_lock(&r->lock);
    busy = busy || r->gen != gen;
    spin_unlock(&r->lock);
    return busy ? -EBUSY : 0;
}

void rmap_stats(uint64_t *unmapped, uint64_t *harvested)
{
    *unmapped = __atomic_load_n(&unmapped_total, __ATOMIC_RELAXED);
    *harvested = __atomic_load_n(&harvested_total, __ATOMIC_RELAXED);
}
