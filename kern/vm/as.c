/*
 * User address spaces (SVR4's struct as and its segments).
 *
 * Theory.  An address space is a sorted list of segments and the page
 * tables of the user half of the address space.  Each segment is a range
 * of pages with one protection and one backing:
 *
 *   anonymous private   demand-zero pages, copied on write after fork
 *   anonymous shared    pages kept in an amap shared by every address
 *                       space the segment was inherited into (fork)
 *   vnode shared        the file's pages in the page cache
 *                       (kern/vm/pcache.c), mapped writable when the
 *                       protection allows; stores reach the file when the
 *                       pages are written back (msync, munmap, exit, exec)
 *   vnode private       the page cache's page mapped read-only, copied at
 *                       the first write (copy-on-write), so a write never
 *                       reaches the file; s_flen bytes of the file and
 *                       zeros after them (an ELF segment's bss tail: such a
 *                       page is copied at once)
 *
 * page->count is the number of mappings of a page plus one for an amap or
 * the page cache holding it, changed atomically; a private page with
 * count 1 is written in place, one with more is copied at the write fault
 * (copy-on-write) -- a page cache page always has more.  fork (as_dup)
 * write-protects every private page in the parent and maps it read-only
 * into the child; shared pages (amap or file) stay writable in both.
 *
 * A file page wholly past the end of the file is not mapped: the fault
 * returns -ENXIO and the process gets SIGBUS.  A shared mapping of a file
 * opened read-only carries MAP_KERN_NOWRITE and can never be made
 * writable.
 *
 * Dirty pages.  Stores through a shared file mapping set the PTE's dirty
 * bit.  Before PTEs of such a segment are removed (munmap, MAP_FIXED,
 * brk, exit, exec) or cleaned (msync), the bit moves to the page
 * (pcache_mark_dirty); after the TLB flush -- so no CPU can still store
 * through an old entry without setting the bit again -- the segment's
 * dirty pages are written back (pcache_flush).  Changes to a PTE that
 * keep the page (mprotect, fork) keep the bit, with atomic updates, since
 * a CPU may set it at any moment.
 *
 * Page tables.  Each address space has its own PML4 whose upper half
 * (entries 256..511) is copied from the kernel's, so the kernel half is
 * shared and never changes after boot.  Table pages come from the
 * faulting CPU's node (page_alloc_node), as SALSA and Tornado advise;
 * fault pages from the node alloc= chooses (page_alloc_data).
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
 * Locks.  a_lock is a resource lock (class "as"), held across the sleep of
 * a fault that reads a file: it protects the segment list, the page
 * tables and the break.  It is taken by faults, mmap, munmap, mprotect,
 * brk and fork; never while copying to or from user memory (a copy can
 * fault, and the fault takes a_lock).  An amap's am_lock (class "amap", a
 * mutex) is taken inside a_lock.  The page cache's locks come after
 * a_lock (a fault that misses reads the file holding it, as does a
 * write-back).  page->count is atomic.  Vnode segments are also on
 * their file's reverse-map chain (kern/vm/rmap.c), which lets truncation,
 * msync, fsync and the reclaim take another address space's a_lock -- with
 * no a_lock or fill lock of their own held -- and reach its PTEs.
 *
 * Files.  This file keeps the address space itself: segments (map,
 * unmap, protect, sync, brk), truncation and fork.  The user page tables
 * and the TLB (the walk, the shootdown, as_activate) are
 * kern/vm/as_pt.c; the page-fault path (demand zero, demand load from the
 * page cache, copy-on-write) is kern/vm/fault.c; the helpers they share
 * are declared in kern/vm/as_impl.h.
 */
#include <kern/vm/as.h>
#include <kern/vm/as_impl.h>
#include <kern/vm/page.h>
#include <kern/vm/pmap.h>
#include <kern/vm/pcache.h>
#include <kern/vm/rmap.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/sched/thread.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/arch/arch.h>
#include <kern/arch/cpu.h>
#include <kern/arch/smp.h>
#include <kern/lib/errno.h>
#include <kern/arch/panic.h>
#include <kern/lib/kprintf.h>
#include <kern/cluster/cluster.h>
#include <kern/cluster/cl_pcache.h>

LOCK_CLASS(as_lock_class, "as", LK_RESOURCE);
LOCK_CLASS(amap_lock_class, "amap", LK_MUTEX_SLEEP);

static uint64_t nx_bit(void)
{
    return (rdmsr(MSR_EFER) & (1UL << 11)) ? PTE_NX : 0;
}

/* ---- creation and destruction ---- */

struct as *as_create(void)
{
    struct as *as = kzalloc(sizeof *as);
    if (!as)
        return NULL;
    struct page *pg = page_alloc_node(0, this_cpu()->node);
    if (!pg) {
        kfree(as);
        return NULL;
    }
    as->a_pml4 = page_to_virt(pg);
    as->a_root = page_to_phys(pg);
    memset(as->a_pml4, 0, PAGE_SIZE / 2);
    const uint64_t *kpml4 = phys_to_virt(pmap_kernel_root());
    memcpy(as->a_pml4 + 256, kpml4 + 256, PAGE_SIZE / 2);
    rlock_init(&as->a_lock, &as_lock_class, "as");
    as->a_holds = 1;
    return as;
}

void amap_hold(struct amap *am)
{
    __atomic_add_fetch(&am->am_ref, 1, __ATOMIC_RELAXED);
}

int amap_refs(const struct amap *am)
{
    return __atomic_load_n(&am->am_ref, __ATOMIC_ACQUIRE);
}

void amap_set_owner(struct amap *am, void (*unref)(uint64_t cookie), uint64_t cookie)
{
    am->am_unref = unref;
    am->am_cookie = cookie;
}

size_t amap_resident(struct amap *am)
{
    size_t n = 0;
    mutex_enter(&am->am_lock);
    for (size_t i = 0; i < am->am_npages; i++)
        n += am->am_pages[i] != NULL;
    mutex_exit(&am->am_lock);
    return n;
}

/* The owner's function and cookie are read before the reference goes:
 * once it has, the owner may free the amap at any moment, so the owner is
 * told by cookie and looks its object up. */
void amap_rele(struct amap *am)
{
    void (*unref)(uint64_t) = am->am_unref;
    uint64_t cookie = am->am_cookie;
    if (__atomic_sub_fetch(&am->am_ref, 1, __ATOMIC_ACQ_REL) != 0) {
        if (unref)
            unref(cookie);
        return;
    }
    for (size_t i = 0; i < am->am_npages; i++)
        if (am->am_pages[i])
            page_rele(am->am_pages[i]);
    mutex_destroy(&am->am_lock);
    kfree(am->am_pages);
    kfree(am);
}

static void seg_free(struct seg *s)
{
    rmap_unlink(s);
    if (s->s_vp)
        VN_RELE(s->s_vp);
    if (s->s_amap)
        amap_rele(s->s_amap);
    kfree(s);
}

/* Remove a PTE; a store it saw marks its page cache page dirty. */
void unmap_pte(uint64_t *pte, vaddr_t va, void *arg)
{
    struct as *as = arg;
    uint64_t old = __atomic_exchange_n(pte, 0, __ATOMIC_SEQ_CST);
    struct page *pg = pte_page(old);
    if (old & PTE_D)
        pcache_mark_dirty(pg);
    as->a_rss--;
    page_rele(pg);
}

bool seg_shared_file(const struct seg *s)
{
    return s->s_vp && (s->s_flags & MAP_SHARED);
}

/* The page number in the file of va, in a vnode segment. */
uint64_t file_index(const struct seg *s, vaddr_t va)
{
    return (s->s_off + (va - s->s_start)) >> PAGE_SHIFT;
}

/* After the PTEs of [lo, hi) were removed or cleaned and the TLBs
 * flushed: write back the dirty pages of the shared file segments there.
 * Returns the first write error. */
static int flush_shared(struct as *as, vaddr_t lo, vaddr_t hi)
{
    int first_err = 0;
    for (struct seg *s = as->a_segs; s && s->s_start < hi; s = s->s_next) {
        if (!seg_shared_file(s) || s->s_end <= lo)
            continue;
        vaddr_t a = MAX(lo, s->s_start), b = MIN(hi, s->s_end);
        int err = pcache_flush(s->s_vp, file_index(s, a), file_index(s, b - 1) + 1);
        if (err && !first_err)
            first_err = err;
    }
    return first_err;
}

/* fn for every PTE inside as's segments: the pages a process has are all
 * in its segments, so exit and fork walk only those ranges' tables, not
 * every slot of every table under USER_TOP (issue 18: the whole-range
 * walk was a third of fork's time). */
static void for_each_seg_pte(struct as *as, pte_fn fn, void *arg)
{
    for (struct seg *s = as->a_segs; s; s = s->s_next)
        for_each_pte(as, s->s_start, s->s_end, fn, arg);
}

void as_destroy(struct as *as)
{
    /* Another CPU's entry changes meanwhile, but never to as (make KCSAN=1
     * reported the plain read racing with as_activate's store). */
    for (int c = 0; c < ncpus; c++)
        assert(READ_ONCE(cpu_as[c]) != as);
    /* No CPU has it loaded, so no TLB holds its entries: the stores of
     * exit or exec go straight to the files.  a_lock: a reverse-map walk
     * (kern/vm/rmap.c) may visit it meanwhile. */
    rlock_acquire(&as->a_lock);
    for_each_seg_pte(as, unmap_pte, as);
    flush_shared(as, 0, USER_TOP);
    while (as->a_segs) {
        struct seg *s = as->a_segs;
        as->a_segs = s->s_next;
        seg_free(s);
    }
    while (as->a_tables) {      /* every table pt_walk made, not a scan for them */
        struct page *pg = as->a_tables;
        as->a_tables = pg->next;
        page_free(pg, 0);
    }
    page_free(virt_to_page(as->a_pml4), 0);
    as->a_pml4 = NULL;
    rlock_release(&as->a_lock);
    if (as->a_exe) {
        vn_allow_write(as->a_exe);
        VN_RELE(as->a_exe);
    }
    as_rele(as);
}

int as_set_exe(struct as *as, struct vnode *vp)
{
    int err = vn_deny_write(vp);
    if (err)
        return err;
    VN_HOLD(vp);
    as->a_exe = vp;
    return 0;
}

/* ---- segments ---- */

struct seg *seg_find(struct as *as, vaddr_t va)
{
    for (struct seg *s = as->a_segs; s && s->s_start <= va; s = s->s_next)
        if (va < s->s_end)
            return s;
    return NULL;
}

static void seg_insert(struct as *as, struct seg *n)
{
    struct seg **pp = &as->a_segs;
    while (*pp && (*pp)->s_start < n->s_start)
        pp = &(*pp)->s_next;
    n->s_next = *pp;
    *pp = n;
}

/* Split s at addr (inside it): s keeps [start, addr), a new segment
 * after it gets [addr, end).  -ENOMEM when no memory. */
static int seg_split(struct seg *s, vaddr_t addr)
{
    struct seg *n = kmalloc(sizeof *n);
    if (!n)
        return -ENOMEM;
    *n = *s;
    uint64_t d = addr - s->s_start;
    n->s_start = addr;
    n->s_off = s->s_off + d;
    n->s_flen = s->s_flen > d ? s->s_flen - d : 0;
    n->s_amap_off = s->s_amap_off + d / PAGE_SIZE;
    if (n->s_vp)
        VN_HOLD(n->s_vp);
    rmap_link(s->s_as, n);
    if (n->s_amap)
        __atomic_add_fetch(&n->s_amap->am_ref, 1, __ATOMIC_RELAXED);
    s->s_end = addr;
    s->s_flen = MIN(s->s_flen, d);
    s->s_next = n;
    return 0;
}

/* Make segment boundaries at lo and hi. */
static int split_at(struct as *as, vaddr_t lo, vaddr_t hi)
{
    struct seg *s = seg_find(as, lo);
    if (s && s->s_start < lo) {
        int err = seg_split(s, lo);
        if (err)
            return err;
    }
    s = seg_find(as, hi);
    if (s && s->s_start < hi)
        return seg_split(s, hi);
    return 0;
}

/* Remove every mapping in [lo, hi) (page aligned). */
static int unmap_locked(struct as *as, vaddr_t lo, vaddr_t hi)
{
    int err = split_at(as, lo, hi);
    if (err)
        return err;
    for_each_pte(as, lo, hi, unmap_pte, as);
    tlb_flush(as, lo, (hi - lo) / PAGE_SIZE);
    flush_shared(as, lo, hi);       /* munmap's write-back: errors are not reported */
    struct seg **pp = &as->a_segs;
    while (*pp) {
        struct seg *s = *pp;
        if (s->s_start >= lo && s->s_end <= hi) {
            *pp = s->s_next;
            seg_free(s);
        } else {
            pp = &s->s_next;
        }
    }
    return 0;
}

static bool range_free(struct as *as, vaddr_t lo, vaddr_t hi)
{
    for (struct seg *s = as->a_segs; s; s = s->s_next)
        if (s->s_start < hi && lo < s->s_end)
            return false;
    return true;
}

/* The highest free range of len bytes below USER_MMAP_TOP, or 0. */
static vaddr_t find_room(struct as *as, size_t len)
{
    vaddr_t top = USER_MMAP_TOP;
    for (int tries = 0; tries < 10000 && top >= USER_MIN + len; tries++) {
        vaddr_t lo = top - len;
        struct seg *clash = NULL;
        for (struct seg *s = as->a_segs; s; s = s->s_next)
            if (s->s_start < top && lo < s->s_end)
                clash = s;
        if (!clash)
            return lo < MAX(as->a_brk, USER_MIN) ? 0 : lo;
        top = clash->s_start;
    }
    return 0;
}

struct page *amap_page_at(struct amap *am, size_t idx, const struct seg *s, vaddr_t va,
                          bool make)
{
    mutex_enter(&am->am_lock);
    struct page *pg = idx < am->am_npages ? am->am_pages[idx] : NULL;
    if (!pg && make && idx < am->am_npages && (pg = user_page_alloc_for(s, va))) {
        memset(page_to_virt(pg), 0, PAGE_SIZE);
        am->am_pages[idx] = pg;
    }
    if (pg)
        page_hold(pg);
    mutex_exit(&am->am_lock);
    return pg;
}

int amap_grow(struct amap *am, size_t npages)
{
    if (npages <= __atomic_load_n(&am->am_npages, __ATOMIC_ACQUIRE))
        return 0;
    struct page **pages = kzalloc(npages * sizeof *pages);
    if (!pages)
        return -ENOMEM;
    mutex_enter(&am->am_lock);
    struct page **old = am->am_pages;
    memcpy(pages, old, am->am_npages * sizeof *pages);
    am->am_pages = pages;
    __atomic_store_n(&am->am_npages, MAX(npages, am->am_npages), __ATOMIC_RELEASE);
    mutex_exit(&am->am_lock);
    kfree(old);
    return 0;
}

void amap_zero_from(struct amap *am, size_t idx, bool free_pages)
{
    mutex_enter(&am->am_lock);
    for (size_t i = idx; i < am->am_npages; i++) {
        struct page *pg = am->am_pages[i];
        if (pg && free_pages) {
            am->am_pages[i] = NULL;
            page_rele(pg);
        } else if (pg) {
            memset(page_to_virt(pg), 0, PAGE_SIZE);
        }
    }
    mutex_exit(&am->am_lock);
}

struct amap *amap_alloc(size_t npages)
{
    struct amap *am = kzalloc(sizeof *am);
    if (!am)
        return NULL;
    am->am_pages = kzalloc(npages * sizeof(struct page *));
    if (!am->am_pages) {
        kfree(am);
        return NULL;
    }
    am->am_npages = npages;
    am->am_ref = 1;
    mutex_init(&am->am_lock, &amap_lock_class, 0, "amap");
    return am;
}

/* Place a new mapping of len bytes (a_lock held): at va for MAP_FIXED
 * (replacing what is there) or MAP_FIXED_NOREPLACE, else at va if free or
 * wherever there is room.  The address, or a negative errno. */
static int64_t place(struct as *as, vaddr_t va, size_t len, int flags)
{
    if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) {
        if (va < USER_MIN || va + len > USER_TOP || va + len < va)
            return -EINVAL;
        if (flags & MAP_FIXED_NOREPLACE)
            return range_free(as, va, va + len) ? (int64_t)va : -EEXIST;
        int err = unmap_locked(as, va, va + len);
        return err ? err : (int64_t)va;
    }
    if (va >= USER_MIN && va + len <= USER_MMAP_TOP && va + len > va &&
        range_free(as, va, va + len))
        return (int64_t)va;
    va = find_room(as, len);
    return va ? (int64_t)va : -ENOMEM;
}

int64_t as_map(struct as *as, vaddr_t va, size_t len, int prot, int flags, struct vnode *vp,
               uint64_t off, uint64_t flen)
{
    if (len == 0 || (va & (PAGE_SIZE - 1)) || (off & (PAGE_SIZE - 1)))
        return -EINVAL;
    if (len > USER_TOP)
        return -ENOMEM;
    len = ALIGN_UP(len, PAGE_SIZE);
    if (vp && off + len < off)
        return -EOVERFLOW;          /* the file offsets would wrap */
    bool shared = (flags & MAP_SHARED) != 0;
    bool nowrite = shared && vp && (flags & MAP_KERN_NOWRITE);
    if (nowrite && (prot & PROT_WRITE))
        return -EACCES;
    struct seg *s = kzalloc(sizeof *s);
    if (!s)
        return -ENOMEM;
    if (shared && !vp && !(s->s_amap = amap_alloc(len / PAGE_SIZE))) {
        kfree(s);
        return -ENOMEM;
    }
    rlock_acquire(&as->a_lock);
    int64_t r = place(as, va, len, flags);
    if (r < 0) {
        rlock_release(&as->a_lock);
        seg_free(s);
        return r;
    }
    va = (vaddr_t)r;
    s->s_start = va;
    s->s_end = va + len;
    s->s_prot = prot;
    s->s_flags = (shared ? MAP_SHARED : MAP_PRIVATE) | (vp ? 0 : MAP_ANONYMOUS) |
                 (nowrite ? MAP_KERN_NOWRITE : 0);
    s->s_vp = vp;
    if (vp)
        VN_HOLD(vp);
    s->s_off = off;
    s->s_flen = vp && !shared ? flen : 0;
    seg_insert(as, s);
    rmap_link(as, s);
    rlock_release(&as->a_lock);
    return (int64_t)va;
}

int64_t as_map_amap(struct as *as, vaddr_t va, size_t len, int prot, int flags,
                    struct amap *am)
{
    return as_map_amap_at(as, va, len, prot, flags, am, 0);
}

int64_t as_map_amap_at(struct as *as, vaddr_t va, size_t len, int prot, int flags,
                       struct amap *am, size_t first)
{
    if (len == 0 || (va & (PAGE_SIZE - 1)) ||
        ALIGN_UP(len, PAGE_SIZE) / PAGE_SIZE + first > am->am_npages)
        return -EINVAL;
    len = ALIGN_UP(len, PAGE_SIZE);
    if (va == 0)
        flags &= ~(MAP_FIXED | MAP_FIXED_NOREPLACE);
    struct seg *s = kzalloc(sizeof *s);
    if (!s)
        return -ENOMEM;
    rlock_acquire(&as->a_lock);
    int64_t r = place(as, va, len, flags);
    if (r < 0) {
        rlock_release(&as->a_lock);
        kfree(s);
        return r;
    }
    s->s_start = (vaddr_t)r;
    s->s_end = (vaddr_t)r + len;
    s->s_prot = prot;
    s->s_flags = MAP_SHARED | MAP_ANONYMOUS;
    s->s_amap = am;                 /* the caller's reference */
    s->s_amap_off = first;
    seg_insert(as, s);
    rlock_release(&as->a_lock);
    return r;
}

/* The segment of an owned amap's first page starting at va, or NULL. */
static struct seg *owned_amap_at(struct as *as, vaddr_t va)
{
    for (struct seg *s = as->a_segs; s; s = s->s_next)
        if (s->s_start == va && s->s_amap && s->s_amap->am_unref && s->s_amap_off == 0)
            return s;
    return NULL;
}

int as_unmap_amap(struct as *as, vaddr_t va)
{
    rlock_acquire(&as->a_lock);
    struct seg *first = owned_amap_at(as, va);
    if (!first) {
        rlock_release(&as->a_lock);
        return -EINVAL;
    }
    struct amap *am = first->s_amap;
    vaddr_t end = va + am->am_npages * PAGE_SIZE;
    if (end < va || end > USER_TOP)
        end = USER_TOP;
    /* Each unmap frees segments: look again from the start each time.
     * The amap stays: its owner holds it. */
    for (;;) {
        struct seg *s = as->a_segs;
        while (s && !(s->s_amap == am && s->s_start >= va && s->s_end <= end))
            s = s->s_next;
        if (!s)
            break;
        unmap_locked(as, s->s_start, s->s_end);
    }
    rlock_release(&as->a_lock);
    return 0;
}

int as_unmap(struct as *as, vaddr_t va, size_t len)
{
    if ((va & (PAGE_SIZE - 1)) || len == 0 || va >= USER_TOP || len > USER_TOP - va)
        return -EINVAL;
    vaddr_t hi = MIN(va + ALIGN_UP(len, PAGE_SIZE), USER_TOP);
    rlock_acquire(&as->a_lock);
    int err = unmap_locked(as, va, hi);
    rlock_release(&as->a_lock);
    return err;
}

/* ---- mremap ---- */

struct move_ctx {
    struct as *as;
    int64_t delta;              /* new address minus old */
};

/* Move one PTE (its page, dirty bit and protection) delta bytes on; the
 * destination's table exists (remap_move made it). */
static void move_pte(uint64_t *pte, vaddr_t va, void *arg)
{
    struct move_ctx *m = arg;
    uint64_t *to = pt_walk(m->as, va + (uint64_t)m->delta, false);
    *to = __atomic_exchange_n(pte, 0, __ATOMIC_SEQ_CST);
}

/* Move the one segment [old, old + len) to dest (free), with its pages.
 * keep (MREMAP_DONTUNMAP): the old range stays mapped, as a segment of
 * the same kind with no pages (they fault in afresh: zeros, or the file).
 * a_lock held. */
static int remap_move(struct as *as, vaddr_t old, size_t len, vaddr_t dest, bool keep)
{
    for (vaddr_t va = dest; va < dest + len; va += PAGE_SIZE)
        if (!pt_walk(as, va, true))
            return -ENOMEM;
    struct seg *left = keep ? kmalloc(sizeof *left) : NULL;
    if (keep && !left)
        return -ENOMEM;
    int err = split_at(as, old, old + len);
    if (err) {
        kfree(left);
        return err;
    }
    struct seg *s = seg_find(as, old), **pp = &as->a_segs;
    while (*pp != s)
        pp = &(*pp)->s_next;
    *pp = s->s_next;
    if (left) {
        *left = *s;
        if (left->s_vp)
            VN_HOLD(left->s_vp);
        rmap_link(as, left);
        if (left->s_amap)
            __atomic_add_fetch(&left->s_amap->am_ref, 1, __ATOMIC_RELAXED);
    }
    struct move_ctx m = { as, (int64_t)(dest - old) };
    for_each_pte(as, old, old + len, move_pte, &m);
    tlb_flush(as, old, len / PAGE_SIZE);
    s->s_start = dest;
    s->s_end = dest + len;
    seg_insert(as, s);
    if (left)
        seg_insert(as, left);
    return 0;
}

int64_t as_remap(struct as *as, vaddr_t old, size_t oldlen, size_t newlen, int flags,
                 vaddr_t newaddr)
{
    rlock_acquire(&as->a_lock);
    int64_t r;
    struct seg *s = seg_find(as, old);
    bool fixed = flags & MREMAP_FIXED, keep = flags & MREMAP_DONTUNMAP;
    if (!fixed && !keep && newlen <= oldlen) {    /* Linux shrinks without looking */
        r = unmap_locked(as, old + newlen, MIN(old + oldlen, USER_TOP));
        r = r ? r : (int64_t)old;
    } else if (!s || old + oldlen > s->s_end || old + oldlen < old) {
        r = -EFAULT;
    } else if (s->s_amap && newlen > oldlen) {
        r = -ENOMEM;            /* an amap has a fixed size */
    } else if (!fixed && !keep && old + oldlen == s->s_end && old + newlen <= USER_MMAP_TOP &&
               old + newlen > old && range_free(as, old + oldlen, old + newlen)) {
        s->s_end = old + newlen;        /* room after it: grow in place */
        r = (int64_t)old;
    } else if (!(flags & MREMAP_MAYMOVE)) {
        r = -ENOMEM;
    } else {
        vaddr_t dest = fixed ? newaddr : find_room(as, newlen);
        int err = !dest ? -ENOMEM : fixed ? unmap_locked(as, dest, dest + newlen) : 0;
        if (!err && newlen < oldlen) {
            err = unmap_locked(as, old + newlen, old + oldlen);
            oldlen = newlen;
        }
        err = err ? err : remap_move(as, old, oldlen, dest, keep);
        if (!err && newlen > oldlen)
            seg_find(as, dest)->s_end = dest + newlen;
        r = err ? err : (int64_t)dest;
    }
    rlock_release(&as->a_lock);
    return r;
}

uint64_t pte_flags(const struct seg *s, bool writable)
{
    uint64_t f = PTE_P | PTE_U;
    if (writable && (s->s_prot & PROT_WRITE))
        f |= PTE_W;
    if (!(s->s_prot & PROT_EXEC))
        f |= nx_bit();
    return f;
}

static void protect_pte(uint64_t *pte, vaddr_t va, void *arg)
{
    const struct seg *s = arg;
    if (!(s->s_prot & (PROT_READ | PROT_WRITE | PROT_EXEC))) {
        pte_update(pte, ~PTE_P, PTE_KEPT);  /* PROT_NONE: keep the page, forbid access */
        return;
    }
    uint64_t cur = __atomic_load_n(pte, __ATOMIC_RELAXED);
    struct page *pg = pte_page(cur);
    bool w = (s->s_flags & MAP_SHARED) ||
             ((cur & PTE_W) && __atomic_load_n(&pg->count, __ATOMIC_ACQUIRE) == 1);
    if (cluster_on() && seg_shared_file(s) && !cl_pcache_may_write(pg))
        w = false;              /* a replica, or a page not yet written (cl_pcache.c) */
    pte_update(pte, PTE_ADDR | PTE_A | PTE_D, pte_flags(s, w));
}

#define PROT_SEM        0x8         /* accepted and ignored, as on x86 Linux */

/* Every page of [lo, hi) in some segment? */
static bool range_mapped(struct as *as, vaddr_t lo, vaddr_t hi)
{
    for (vaddr_t a = lo; a < hi;) {
        struct seg *s = seg_find(as, a);
        if (!s)
            return false;
        a = s->s_end;
    }
    return true;
}

/* The page-rounded end *hi of [va, va + len) in user space, for mprotect
 * and msync: 1, or 0 for an empty range (nothing to do), or -ENOMEM for
 * one that leaves user space. */
static int user_range_end(vaddr_t va, size_t len, vaddr_t *hi)
{
    if (len == 0)
        return 0;
    if (va >= USER_TOP || len > USER_TOP - va)
        return -ENOMEM;
    *hi = MIN(va + ALIGN_UP(len, PAGE_SIZE), USER_TOP);
    return 1;
}

int as_check_mapped(struct as *as, vaddr_t va, size_t len)
{
    vaddr_t hi;
    int r = user_range_end(va & ~(vaddr_t)(PAGE_SIZE - 1), len + (va & (PAGE_SIZE - 1)), &hi);
    if (r <= 0)
        return r;
    rlock_acquire(&as->a_lock);
    bool ok = range_mapped(as, va & ~(vaddr_t)(PAGE_SIZE - 1), hi);
    rlock_release(&as->a_lock);
    return ok ? 0 : -ENOMEM;
}

int as_protect(struct as *as, vaddr_t va, size_t len, int prot)
{
    /* Linux's order of checks. */
    if ((va & (PAGE_SIZE - 1)))
        return -EINVAL;
    vaddr_t hi;
    int r = user_range_end(va, len, &hi);
    if (r <= 0)
        return r;
    if (prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC | PROT_SEM))
        return -EINVAL;
    prot &= ~PROT_SEM;
    rlock_acquire(&as->a_lock);
    int err = range_mapped(as, va, hi) ? 0 : -ENOMEM;
    for (struct seg *s = as->a_segs; !err && s && s->s_start < hi; s = s->s_next)
        if (s->s_end > va && (prot & PROT_WRITE) && (s->s_flags & MAP_KERN_NOWRITE))
            err = -EACCES;      /* a shared mapping of a file opened read-only */
    if (!err)
        err = split_at(as, va, hi);
    if (!err) {
        for (struct seg *s = as->a_segs; s; s = s->s_next) {
            if (s->s_start < va || s->s_end > hi)
                continue;
            s->s_prot = prot;
            for_each_pte(as, s->s_start, s->s_end, protect_pte, s);
        }
        tlb_flush(as, va, (hi - va) / PAGE_SIZE);
    }
    rlock_release(&as->a_lock);
    return err;
}

int as_set_policy(struct as *as, vaddr_t va, size_t len, const struct mempolicy *pol)
{
    vaddr_t hi = va + len;
    rlock_acquire(&as->a_lock);
    int err = range_mapped(as, va, hi) ? split_at(as, va, hi) : -EFAULT;
    for (struct seg *s = as->a_segs; !err && s && s->s_start < hi; s = s->s_next)
        if (s->s_start >= va)
            s->s_policy = *pol;
    rlock_release(&as->a_lock);
    return err;
}

int as_policy_at(struct as *as, vaddr_t va, struct mempolicy *pol, int *node)
{
    rlock_acquire(&as->a_lock);
    struct seg *s = seg_find(as, va);
    if (s) {
        *pol = s->s_policy;
        if (node)
            *node = mempolicy_node_for(pol, seg_page_index(s, va));
    }
    rlock_release(&as->a_lock);
    return s ? 0 : -EFAULT;
}

/* The first shared file segment of [at, hi) from at: its file held, the
 * file's pages [*lo, *hi_idx) it maps there, and where it ends (*next). */
static struct vnode *next_shared_file(struct as *as, vaddr_t at, vaddr_t hi, uint64_t *lo,
                                      uint64_t *hi_idx, vaddr_t *next)
{
    struct vnode *vp = NULL;
    rlock_acquire(&as->a_lock);
    struct seg *s = as->a_segs;
    while (s && s->s_start < hi && (s->s_end <= at || !seg_shared_file(s)))
        s = s->s_next;
    if (s && s->s_start < hi) {
        vaddr_t a = MAX(at, s->s_start), b = MIN(hi, s->s_end);
        vp = s->s_vp;
        VN_HOLD(vp);
        *lo = file_index(s, a);
        *hi_idx = file_index(s, b - 1) + 1;
        *next = b;
    }
    rlock_release(&as->a_lock);
    return vp;
}

int as_sync(struct as *as, vaddr_t va, size_t len, int flags)
{
    if ((va & (PAGE_SIZE - 1)) || (flags & ~(MS_ASYNC | MS_INVALIDATE | MS_SYNC)) ||
        ((flags & MS_ASYNC) && (flags & MS_SYNC)))
        return -EINVAL;
    vaddr_t hi;
    int r = user_range_end(va, len, &hi);
    if (r <= 0)
        return r;
    rlock_acquire(&as->a_lock);
    /* Like Linux, sync what is mapped and then report a hole. */
    int hole = range_mapped(as, va, hi) ? 0 : -ENOMEM;
    rlock_release(&as->a_lock);
    /* A file at a time, a_lock let go: every address space's stores
     * through its mappings of the file are collected under its own a_lock
     * (rmap_sync, kern/vm/rmap.c), and then the file written back. */
    int err = 0;
    uint64_t lo, hi_idx;
    struct vnode *vp;
    for (vaddr_t at = va; at < hi && (vp = next_shared_file(as, at, hi, &lo, &hi_idx, &at));) {
        int e = rmap_sync(vp, lo, hi_idx);
        VN_RELE(vp);
        if (e && !err)
            err = e;
    }
    return hole ? hole : err;
}

/* Is page i of amap am in memory?  (am_lock inside a_lock.) */
static bool amap_has(struct amap *am, size_t i)
{
    mutex_enter(&am->am_lock);
    bool in = i < am->am_npages && am->am_pages[i] != NULL;
    mutex_exit(&am->am_lock);
    return in;
}

/* Is the page at a of segment s resident: mapped, or else in the page
 * cache (a file) or in its amap (shared anonymous memory)? */
static bool page_resident(struct as *as, struct seg *s, vaddr_t a)
{
    uint64_t *pte = pt_walk(as, a, false);
    if (pte && (*pte & PTE_P))
        return true;
    if (s->s_amap)
        return amap_has(s->s_amap, s->s_amap_off + (a - s->s_start) / PAGE_SIZE);
    if (!s->s_vp)
        return false;
    struct page *pg = pcache_lookup(s->s_vp, file_index(s, a));
    if (pg)
        page_rele(pg);
    return pg != NULL;
}

int as_mincore(struct as *as, vaddr_t va, size_t npages, uint8_t *vec)
{
    int err = 0;
    rlock_acquire(&as->a_lock);
    for (size_t i = 0; i < npages && !err; i++) {
        vaddr_t a = va + i * PAGE_SIZE;
        struct seg *s = seg_find(as, a);
        if (!s)
            err = -ENOMEM;
        else
            vec[i] = page_resident(as, s, a);
    }
    rlock_release(&as->a_lock);
    return err;
}

static void count_pte(uint64_t *pte, vaddr_t va, void *arg)
{
    struct as_numa_counts *c = arg;
    struct page *pg = pte_page(*pte);
    c->pages++;
    c->node[pg->node & 63]++;
    if (*pte & PTE_D)
        c->dirty++;
}

void as_numa_count(struct as *as, struct seg *s, struct as_numa_counts *c)
{
    memset(c, 0, sizeof *c);
    for_each_pte(as, s->s_start, s->s_end, count_pte, c);
    if (!s->s_vp)
        c->anon = c->pages;     /* anonymous memory, private or shared */
}

vaddr_t as_set_brk(struct as *as, vaddr_t newbrk)
{
    rlock_acquire(&as->a_lock);
    vaddr_t cur = as->a_brk;
    if (newbrk < as->a_brk_base || newbrk > USER_MMAP_TOP) {
        rlock_release(&as->a_lock);
        return cur;
    }
    vaddr_t old_end = ALIGN_UP(cur, PAGE_SIZE), new_end = ALIGN_UP(newbrk, PAGE_SIZE);
    if (new_end > old_end) {
        if (!range_free(as, old_end, new_end)) {
            rlock_release(&as->a_lock);
            return cur;
        }
        struct seg *prev = old_end > as->a_brk_base ? seg_find(as, old_end - 1) : NULL;
        if (prev && prev->s_end == old_end && !prev->s_vp && !prev->s_amap &&
            prev->s_prot == (PROT_READ | PROT_WRITE)) {
            prev->s_end = new_end;
        } else {
            struct seg *s = kzalloc(sizeof *s);
            if (!s) {
                rlock_release(&as->a_lock);
                return cur;
            }
            s->s_start = old_end;
            s->s_end = new_end;
            s->s_prot = PROT_READ | PROT_WRITE;
            s->s_flags = MAP_PRIVATE | MAP_ANONYMOUS;
            seg_insert(as, s);
        }
    } else if (new_end < old_end) {
        if (unmap_locked(as, new_end, old_end) != 0) {
            rlock_release(&as->a_lock);
            return cur;
        }
    }
    as->a_brk = newbrk;
    rlock_release(&as->a_lock);
    return newbrk;
}

/* ---- fork ---- */

struct dup_ctx {
    struct as *parent, *child;
    int err;
    struct seg *seg;            /* the parent's segment of the last PTE */
    uint64_t *ctable;           /* the child's page table last found ... */
    vaddr_t cbase;              /* ... and the 2 MiB it maps */
};

#define PT_SPAN (512UL * PAGE_SIZE)

/* The child's PTE for va: one pt_walk per page table, not per page. */
static uint64_t *child_pte(struct dup_ctx *d, vaddr_t va)
{
    vaddr_t base = va & ~(PT_SPAN - 1);
    unsigned i = (va >> PAGE_SHIFT) & 511;
    if (!d->ctable || base != d->cbase) {
        uint64_t *pte = pt_walk(d->child, va, true);
        if (!pte)
            return NULL;
        d->ctable = pte - i;
        d->cbase = base;
    }
    return &d->ctable[i];
}

static void dup_pte(uint64_t *pte, vaddr_t va, void *arg)
{
    struct dup_ctx *d = arg;
    if (d->err)
        return;
    struct seg *s = d->seg;
    if (!s || va < s->s_start || va >= s->s_end)
        s = d->seg = seg_find(d->parent, va);
    if (!s)
        return;
    uint64_t *cpte = child_pte(d, va);
    if (!cpte) {
        d->err = -ENOMEM;
        return;
    }
    page_hold(pte_page(*pte));
    if (!(s->s_flags & MAP_SHARED))
        pte_update(pte, ~PTE_W, 0);     /* both sides copy on their next write */
    *cpte = *pte & ~PTE_D;              /* the parent's PTE keeps the store to write back */
    d->child->a_rss++;
}

struct as *as_dup(struct as *as, int *err)
{
    struct as *n = as_create();
    if (!n) {
        *err = -ENOMEM;
        return NULL;
    }
    rlock_acquire(&as->a_lock);
    struct seg **tail = &n->a_segs;
    for (struct seg *s = as->a_segs; s; s = s->s_next) {
        struct seg *c = kmalloc(sizeof *c);
        if (!c) {
            rlock_release(&as->a_lock);
            as_destroy(n);
            *err = -ENOMEM;
            return NULL;
        }
        *c = *s;
        c->s_next = NULL;
        c->s_as = NULL;             /* linked once its PTEs are copied */
        if (c->s_vp)
            VN_HOLD(c->s_vp);
        if (c->s_amap)
            __atomic_add_fetch(&c->s_amap->am_ref, 1, __ATOMIC_RELAXED);
        *tail = c;
        tail = &c->s_next;
    }
    n->a_brk_base = as->a_brk_base;
    n->a_brk = as->a_brk;
    if (as->a_exe)
        as_set_exe(n, as->a_exe);       /* already denied writers: cannot fail */
    struct dup_ctx d = { as, n, 0, NULL, NULL, 0 };
    for_each_seg_pte(as, dup_pte, &d);
    for (struct seg *c = n->a_segs; c; c = c->s_next)
        rmap_link(n, c);                /* see "fork" in kern/vm/rmap.c */
    tlb_flush(as, 0, 1UL << 40);        /* many pages: a full flush */
    rlock_release(&as->a_lock);
    if (d.err) {
        as_destroy(n);
        *err = d.err;
        return NULL;
    }
    return n;
}
