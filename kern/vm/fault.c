/*
 * Page faults on user address spaces (and on user memory touched by
 * copyin/copyout): as_fault and its cases, and as_lookup_page.
 *
 * Theory.  as_fault finds the segment of the address under the address
 * space's a_lock and checks the access against its protection; then
 *   - an absent page (fault_absent) is a demand-zero page (anonymous
 *     private), the amap's page (anonymous shared, made on first touch),
 *     or the page cache's page of the file (vnode segments: shared
 *     mappings map it, writable when allowed; private ones map it
 *     read-only, or a private copy at once for a write or a bss tail);
 *   - a write to a present read-only page (fault_cow) makes it writable
 *     in place in a shared segment, or in a private one when this is its
 *     only mapping; otherwise (after fork, or the page cache's page) it is
 *     copied: copy-on-write.
 * ptrace's writes (as_poke_remote) go where the program could not: into
 * a private mapping whatever its protection (a breakpoint in read-only
 * text), always through a page of the mapping's own, copied from the page
 * cache's or a forked sibling's, so neither the file nor another process
 * sees it; the PTE keeps the segment's protection.
 * A file page wholly past the end of the file is -ENXIO from the page
 * cache (SIGBUS for the process), and so is a shared mapping's page its
 * file system cannot back (VOP_BACKPAGE: a full tmpfs, -ENOSPC); no memory is -ENOMEM (the caller kills
 * the process), but only after the pageout daemons found no file page
 * left to take (pcache_wait_for_memory, kern/vm/pcache_reclaim.c).  Fault
 * pages come from the faulting CPU's node.  The segment code this uses
 * is kern/vm/as.c, whose theory holds the rest (segments, copy-on-write
 * after fork, dirty pages), and the page-table and TLB code
 * kern/vm/as_pt.c (TLB consistency).
 *
 * Under cluster= (and only then: one cluster_on() test per hook) a file
 * page goes through the clustered page cache (kern/cluster/cl_pcache.c):
 * a read fault off the home page's node maps the cluster's replica,
 * read-only; a shared mapping's PTE is writable only for a written home
 * page, so the first store faults, and when replicas must be invalidated
 * first the fault answers CLP_RETRY: as_fault lets a_lock go (the
 * invalidation takes other address spaces' a_locks, and may wait for a
 * fault holding one), cl_pcache_settle, and faults again.  Fault and
 * page-table pages come from the cluster's page pool (kern/cluster/cl_vm.c).
 *
 * Locks.  a_lock (resource) is held across the whole fault, including
 * the sleep of a read from the file; the page cache's fill and vnode
 * locks come inside it, an amap's am_lock too.  page->count is atomic.
 */
#include <kern/vm/as.h>
#include <kern/vfs/vnode.h>
#include <kern/vm/as_impl.h>
#include <kern/vm/page.h>
#include <kern/vm/pmap.h>
#include <kern/vm/pcache.h>
#include <kern/cluster/cluster.h>
#include <kern/cluster/cl_pcache.h>
#include <kern/sched/thread.h>
#include <kern/lib/string.h>
#include <kern/arch/arch.h>
#include <kern/arch/cpu.h>
#include <kern/lib/errno.h>
#include <kern/arch/panic.h>

static bool access_allowed(const struct seg *s, int access)
{
    if (access & FA_WRITE)
        return s->s_prot & PROT_WRITE;
    if (access & FA_EXEC)
        return s->s_prot & PROT_EXEC;
    return s->s_prot & (PROT_READ | PROT_WRITE | PROT_EXEC);
}

/* A new private page for va of s (placed by s's policy or the thread's),
 * of zeros, or of the first n bytes of src and zeros. */
static struct page *private_copy(const struct seg *s, vaddr_t va, struct page *src, size_t n)
{
    struct page *pg = user_page_alloc_for(s, va);
    if (!pg)
        return NULL;
    char *p = page_to_virt(pg);
    if (n)
        memcpy(p, page_to_virt(src), n);
    memset(p + n, 0, PAGE_SIZE - n);
    return pg;
}

/*
 * The page for va in a private file segment, held for the PTE; *writable
 * tells whether the PTE may allow writes.  A page wholly inside the
 * file's part is the page cache's own, mapped read-only, unless this is a
 * write; one that ends in zeros (bss) is copied at once; one wholly past
 * s_flen is demand-zero.
 */
static int private_file_page(struct seg *s, vaddr_t va, int access, struct page **pgp,
                             bool *writable)
{
    uint64_t rel = va - s->s_start;
    *writable = true;
    if (rel >= s->s_flen) {
        *pgp = private_copy(s, va, NULL, 0);
        return *pgp ? 0 : -ENOMEM;
    }
    struct page *cp;
    size_t n = MIN((uint64_t)PAGE_SIZE, s->s_flen - rel);
    bool ignored;
    int err = cluster_on() && n == PAGE_SIZE && !(access & FA_WRITE) ?
        cl_pcache_fault(s->s_vp, file_index(s, va), false, &cp, &ignored, NULL) :
        pcache_get(s->s_vp, file_index(s, va), &cp);
    if (err)
        return err;
    if (n == PAGE_SIZE && !(access & FA_WRITE)) {
        *pgp = cp;
        *writable = false;
        return 0;
    }
    *pgp = private_copy(s, va, cp, n);
    page_rele(cp);
    return *pgp ? 0 : -ENOMEM;
}

/* The shared amap page for va, made on first touch (held for the PTE). */
static struct page *amap_page(struct seg *s, vaddr_t va)
{
    return amap_page_at(s->s_amap, s->s_amap_off + (va - s->s_start) / PAGE_SIZE, s, va, true);
}

static int fault_absent(struct as *as, struct seg *s, vaddr_t va, uint64_t *pte, int access,
                        struct clp_pending *pend)
{
    if (*pte & PTE_KEPT)
        return -EACCES;         /* a PROT_NONE page kept */
    struct page *pg = NULL;
    bool writable = true;
    int err = seg_shared_file(s) ? VOP_BACKPAGE(s->s_vp, file_index(s, va)) : 0;
    if (err)
        return err;             /* no room for the page: SIGBUS */
    if (s->s_amap) {
        pg = amap_page(s, va);
    } else if (seg_shared_file(s) && cluster_on()) {
        err = cl_pcache_fault(s->s_vp, file_index(s, va), access & FA_WRITE, &pg, &writable,
                              pend);
    } else if (seg_shared_file(s)) {
        err = pcache_get(s->s_vp, file_index(s, va), &pg);
    } else if (s->s_vp) {
        err = private_file_page(s, va, access, &pg, &writable);
    } else {
        pg = private_copy(s, va, NULL, 0);
    }
    if (!err && !pg)
        err = -ENOMEM;
    if (err)
        return err;
    *pte = page_to_phys(pg) | pte_flags(s, writable);
    as->a_rss++;
    return 0;
}

/* Map a private copy of old at va in place of it (its PTE at pte). */
static int replace_with_copy(struct as *as, struct seg *s, vaddr_t va, uint64_t *pte,
                             struct page *old)
{
    struct page *pg = private_copy(s, va, old, PAGE_SIZE);
    if (!pg)
        return -ENOMEM;
    *pte = page_to_phys(pg) | pte_flags(s, true);
    page_rele(old);
    tlb_flush(as, va, 1);
    return 0;
}

/* A write to a present read-only page: a shared one becomes writable; a
 * private one is copied unless this is its only mapping. */
static int fault_cow(struct as *as, struct seg *s, vaddr_t va, uint64_t *pte,
                     struct clp_pending *pend)
{
    struct page *old = pte_page(*pte);
    int err = cluster_on() && seg_shared_file(s) ?
        cl_pcache_upgrade(old, s->s_vp, file_index(s, va), pend) : 0;
    if (err)
        return err;             /* CLP_RETRY: replicas to invalidate first */
    if (!(s->s_flags & MAP_SHARED) && __atomic_load_n(&old->count, __ATOMIC_ACQUIRE) != 1)
        return replace_with_copy(as, s, va, pte, old);
    pte_update(pte, ~0UL, PTE_W);
    tlb_flush(as, va, 1);
    return 0;
}

/* as_fault's work, with a_lock held (CLP_RETRY: see as_fault). */
static int fault_locked(struct as *as, vaddr_t va, int access, struct clp_pending *pend)
{
    struct seg *s = seg_find(as, va);
    if (!s)
        return -EFAULT;
    if (!access_allowed(s, access))
        return -EACCES;
    uint64_t *pte = pt_walk(as, va, true);
    if (!pte)
        return -ENOMEM;
    if (!(*pte & PTE_P))
        return fault_absent(as, s, va, pte, access, pend);
    if ((access & FA_WRITE) && !(*pte & PTE_W))
        return fault_cow(as, s, va, pte, pend);
    invlpg(va);                 /* a stale TLB entry: the PTE is fine now */
    return 0;
}

#define OOM_TRIES 8

int as_fault(struct as *as, vaddr_t va, int access)
{
    if (!as || va >= USER_TOP)
        return -EFAULT;
    va = ALIGN_DOWN(va, PAGE_SIZE);
    for (int tries = 0;; tries++) {
        struct clp_pending pend = { 0 };
        rlock_acquire(&as->a_lock);
        int err = fault_locked(as, va, access, &pend);
        rlock_release(&as->a_lock);
        if (err == CLP_RETRY) {
            /* cluster=: the page's replicas go, with no a_lock held (the
             * unmap takes other address spaces'), and the fault runs again. */
            cl_pcache_settle(&pend);
            tries--;
            continue;
        }
        /* No page: file pages, mapped ones too, go back before the
         * process is called out of memory (a_lock let go: the pageout
         * daemon may need it to unmap this process's pages). */
        if (err != -ENOMEM || tries == OOM_TRIES || !pcache_wait_for_memory())
            return err;
    }
}

struct page *as_lookup_page(struct as *as, vaddr_t va, bool *writable)
{
    rlock_acquire(&as->a_lock);
    uint64_t *pte = pt_walk(as, va, false);
    struct page *pg = pte && (*pte & PTE_P) ? pte_page(*pte) : NULL;
    if (writable)
        *writable = pte && (*pte & PTE_W);
    rlock_release(&as->a_lock);
    return pg;
}

/* For futexes (kern/proc/futex.c): fn on the kernel's view of the user
 * word at va, with its page present, user-writable and marked dirty, and
 * a_lock held so that it stays mapped while fn runs atomic operations on
 * it.  fn's result, -EFAULT (no writable mapping) or -ENOMEM. */
int as_user_word(struct as *as, vaddr_t va, int (*fn)(uint32_t *word, void *arg), void *arg)
{
    const uint64_t need = PTE_P | PTE_W | PTE_U;
    for (int tries = 0; tries < 4; tries++) {
        rlock_acquire(&as->a_lock);
        uint64_t *pte = pt_walk(as, va, false);
        if (pte && (*pte & need) == need) {
            __atomic_or_fetch(pte, PTE_D, __ATOMIC_RELAXED);
            char *page = page_to_virt(pte_page(*pte));
            int r = fn((uint32_t *)(page + (va & (PAGE_SIZE - 1))), arg);
            rlock_release(&as->a_lock);
            return r;
        }
        rlock_release(&as->a_lock);
        int err = as_fault(as, va, FA_WRITE);
        if (err)
            return err == -ENOMEM ? -ENOMEM : -EFAULT;
    }
    return -EFAULT;
}

/* One page's piece of as_copy_remote: copy n bytes (within one page) at
 * va of as and kbuf, the page present (writable for write) and held
 * mapped by a_lock while the bytes move; -EFAULT when it cannot be. */
static int copy_remote_piece(struct as *as, vaddr_t va, char *kbuf, size_t n, bool write)
{
    uint64_t need = PTE_P | PTE_U | (write ? PTE_W : 0);
    for (int tries = 0; tries < 4; tries++) {
        rlock_acquire(&as->a_lock);
        uint64_t *pte = pt_walk(as, va, false);
        if (pte && (*pte & need) == need) {
            char *at = (char *)page_to_virt(pte_page(*pte)) + (va & (PAGE_SIZE - 1));
            if (write) {
                __atomic_or_fetch(pte, PTE_D, __ATOMIC_RELAXED);
                memcpy(at, kbuf, n);
            } else {
                memcpy(kbuf, at, n);
            }
            rlock_release(&as->a_lock);
            return 0;
        }
        rlock_release(&as->a_lock);
        if (as_fault(as, va, write ? FA_WRITE : FA_READ))
            return -EFAULT;
    }
    return -EFAULT;
}

/* How a remote copy moves one page's piece (0, or -EFAULT). */
typedef int (*piece_fn)(struct as *as, vaddr_t va, char *kbuf, size_t n, bool write);

/* Move len bytes at va of as, a page's piece at a time: the bytes moved
 * before the first piece that cannot be, or -EFAULT for none. */
static int64_t copy_pieces(struct as *as, vaddr_t va, char *kbuf, size_t len, bool write,
                           piece_fn piece)
{
    size_t done = 0;
    while (done < len) {
        vaddr_t at = va + done;
        if (at < va || at >= USER_TOP)
            break;
        size_t n = MIN(len - done, PAGE_SIZE - (at & (PAGE_SIZE - 1)));
        if (piece(as, at, kbuf + done, n, write))
            break;
        done += n;
    }
    return done ? (int64_t)done : (len ? -EFAULT : 0);
}

int64_t as_copy_remote(struct as *as, vaddr_t va, char *kbuf, size_t len, bool write)
{
    return copy_pieces(as, va, kbuf, len, write, copy_remote_piece);
}

/* ---- ptrace's writes (FOLL_FORCE) ---- */

/* Is pg this mapping's own: not the page cache's nor a replica, and
 * mapped once? */
static bool page_is_private(const struct page *pg)
{
    return !(page_flags(pg) & (PG_CACHED | PG_REPLICA)) &&
           __atomic_load_n(&pg->count, __ATOMIC_ACQUIRE) == 1;
}

/* Make the page at va of private segment s the mapping's own, whatever
 * the segment's protection (a breakpoint in read-only text): absent, it
 * is faulted in as a write would; shared with the page cache or a forked
 * process, it is copied.  The PTE keeps the segment's protection.  With
 * a_lock held. */
static int force_private_locked(struct as *as, struct seg *s, vaddr_t va)
{
    uint64_t *pte = pt_walk(as, va, true);
    if (!pte)
        return -ENOMEM;
    if (!(*pte & PTE_P)) {
        struct clp_pending pend = { 0 };
        return fault_absent(as, s, va, pte, FA_WRITE, &pend);
    }
    struct page *old = pte_page(*pte);
    return page_is_private(old) ? 0 : replace_with_copy(as, s, va, pte, old);
}

/* One page's piece of as_poke_remote (write is always true). */
static int poke_piece(struct as *as, vaddr_t va, char *kbuf, size_t n, bool write)
{
    for (int tries = 0; tries < 4; tries++) {
        rlock_acquire(&as->a_lock);
        struct seg *s = seg_find(as, va);
        if (!s || (s->s_flags & MAP_SHARED)) {
            bool writable = s && (s->s_prot & PROT_WRITE);
            rlock_release(&as->a_lock);
            return writable ? copy_remote_piece(as, va, kbuf, n, write) : -EFAULT;
        }
        uint64_t *pte = pt_walk(as, va, false);
        if (pte && (*pte & (PTE_P | PTE_U)) == (PTE_P | PTE_U) && page_is_private(pte_page(*pte))) {
            memcpy((char *)page_to_virt(pte_page(*pte)) + (va & (PAGE_SIZE - 1)), kbuf, n);
            rlock_release(&as->a_lock);
            return 0;
        }
        int err = force_private_locked(as, s, va);
        rlock_release(&as->a_lock);
        if (err)
            return -EFAULT;
    }
    return -EFAULT;
}

int64_t as_poke_remote(struct as *as, vaddr_t va, const char *kbuf, size_t len)
{
    return copy_pieces(as, va, (char *)kbuf, len, true, poke_piece);
}
