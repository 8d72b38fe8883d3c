/*
 * The page cache (SVR4's pages named by <vnode, offset>).
 *
 * Theory.  A page of a regular file that some address space maps, or
 * that read(2) or write(2) moved through a segmap window, is kept here
 * under its name (p_vp, p_index): the vnode and the page number in the
 * file.  A fault on a vnode segment (kern/vm/as.c) or a segmap miss
 * (kern/vm/segmap.c) asks for the page with pcache_get: a hit takes a
 * reference; a miss reads the page from the file with the file system's
 * VOP_GETPAGE (S5 and UFS read it straight from their blocks,
 * kern/s5/s5_page.c, kern/ufs/ufs_page.c) into a page of the CPU's node
 * and enters it.  Only files of a file system with the page operations
 * are cached (vn_has_pageio); the others (/proc's) cannot be mapped.  Every MAP_SHARED mapping of the
 * file maps that one page, writable, so all of them see each other's
 * stores; a MAP_PRIVATE mapping maps it read-only and copies it at its
 * first write (or at once, for a write fault or a page that ends in an
 * ELF segment's bss), so exec'd programs share their text.  A page wholly
 * past the end of the file is not entered: the fault gets -ENXIO, which
 * the trap code turns into SIGBUS, as on Linux.
 *
 * References.  page->count counts the cache's own reference (1 while
 * the page is cached), one per PTE mapping it, and short holds by the
 * code here.  The cache holds no reference on the vnode: the segments
 * that map the file hold those.  A file's pages stay cached while the
 * vnode is active, so a program run again while another process still
 * runs it finds its pages here.  What happens at the last VN_RELE
 * depends on whose vnode it is.  An inode cache's vnode (S5, UFS:
 * VKEEPPAGES) keeps its clean pages while inactive, as SVR4's does: the
 * in-core inode keeps its identity on the cache's free list, a later
 * lookup revives it with its pages, and they are purged only when the
 * in-core inode is reused for another file (kern/vfs/icache.c,
 * drop_old_pages), or freed by the reclaim like any clean page.  (Before
 * that, a program whose last reference was the DNLC's lost its pages
 * whenever the DNLC let the name go: GAEDE's compiles re-read gcc's
 * binaries, four times the disk reads at one CPU.)  Every other vnode
 * (tmpfs, devices, sockets) has pcache_purge called before VOP_INACTIVE,
 * which frees every page only the cache holds (a page still mapped
 * implies a segment still holding the vnode, whose own last release
 * purges again).  Either way the file system never gives a vnode a new
 * identity with pages here, and an unlinked file's blocks are freed as
 * before (its pages, clean, go with the reuse).
 * (A reference held by the cache itself would keep every file ever
 * mapped active: unlinked files would never be freed, nor file systems
 * unmounted.)  v_npages counts the vnode's pages plus fills under way,
 * and is the one-load test of "does this file have cached pages"; under
 * cluster= it counts the clusters' replicas of them too
 * (kern/cluster/cl_pcache.c), so the last release drops those as well.
 *
 * Dirty pages.  A store through a shared mapping sets the PTE's dirty
 * bit (the CPU does).  Whoever removes or cleans such PTEs -- munmap,
 * msync, exit and exec (as_destroy), MAP_FIXED over them -- first moves
 * the bit to the page (PG_DIRTY, pcache_mark_dirty), flushes the TLBs,
 * and then writes the dirty pages of that range back (pcache_flush),
 * only up to the end of the file.  write(2) marks the pages it copied
 * into (segmap_release with SM_DIRTY).  fsync, msync and sync(2) first
 * collect the dirty bits of every PTE mapping the file, in every address
 * space, through the reverse mappings (kern/vm/rmap.c, rmap_sync), so
 * they write back the stores every process made; munmap and exit write
 * back their own.
 *
 * A vnode with a dirty page is held by the cache (v_dirtyhold: the first
 * page marked takes a VN_HOLD, the flush that leaves none dirty drops it,
 * dirty_drop), so the file stays active, and its pages cached, until
 * they are written back: by fsync (pcache_vop_fsync), the close of a file
 * open for writing (vn_close; not under syncwrites=off, which leaves it to
 * the daemons, as Linux's write-back does), the file system's sync and unmount
 * (s5_iflush_pages, ufs_iflush_pages), the pageout daemons
 * (kern/vm/pcache_reclaim.c, also every 30 s), or an O_SYNC write.  The last release can therefore never
 * drop unwritten data, and needs no sleep.  A file that loses its last
 * name drops the hold at once (pcache_discard_dirty): its blocks are
 * about to be freed, and its pages need no write-back.
 *
 * A file whose pages are its only copy (VMEMONLY: tmpfs, kern/tmpfs/) has
 * nowhere to write them: the flushes leave its pages alone, so a page once
 * written stays dirty until the file is truncated below it or released
 * for the last time, and the reclaim, which takes only clean pages, never
 * takes it.  Its clean pages (holes read as zeros, never written) go back
 * as any file's, and read as zeros again.  Such a file takes no dirty
 * hold: there is no write-back to wait for, and the file system keeps a
 * named file active itself.
 *
 * read(2) and write(2) of a regular file go through segmap onto these
 * pages only (kern/vm/pcache_rw.c, called by the VOP_READ and VOP_WRITE
 * macros, kern/vfs/vnode.h): one copy of each file page, coherent with
 * every mapping by construction.  A size change (the VOP_TRUNCATE and
 * VOP_SETATTR macros) drops the pages wholly past the new end (they are
 * zeroed, and every PTE mapping them is then removed through the reverse
 * mappings, so a later access faults: SIGBUS) and zeros the bytes past
 * the end in the last page.
 *
 * The races between a fill (file -> page), a write-back (page -> file),
 * a write and a truncation are settled by the vnode's fill lock (below):
 * each holds it throughout.
 *
 * Structure and locks.  The cache is a hash table of rows, each a chain
 * of pages under a spin lock (class "pcache_row"), in the manner of the
 * software set-associative caches of the buffer cache and the DNLC
 * (Peacock et al.): a lookup locks one short row, so faults on different
 * pages of one file, and on different files, run in parallel; the row
 * count scales with memory.  Unlike those caches there are no fixed ways
 * and no replacement at lookup: a row is a chain, and pages leave it by
 * the reclaim (kern/vm/pcache_reclaim.c), mapped ones after the reverse
 * mappings removed their PTEs.  Each vnode also lists its own pages (v_pagelist,
 * linked by p_vnext) for purges, truncations and write-backs; that list
 * is under a spin lock picked by hashing the vnode ("pcache_vlist", 64 of
 * them, so struct vnode grows by two words and no lock).  Changes to a
 * page's identity take its vnode's list lock and then its row lock.
 *
 * The fill lock is a reader/writer lock per vnode, also picked by
 * hashing the vnode ("pcache_vnode", 64 of them), held across the file
 * system's I/O: shared by fills, exclusive by a write-back, a write or a
 * truncation.  So a fill never meets a truncation freeing the blocks it
 * reads, nor a write or write-back changing the block map under it, while
 * fills of different pages of one file (8 cc1 faulting one program's
 * text) read in parallel; an exclusive lock held across every fill's
 * disk read made them queue up, and missed 92% of the time under that
 * load.  (On svr4mp, 4 dd's each reading a quarter of one uncached
 * 16 MiB file at once: 3943 misses in 4270 acquisitions, 27 s of waiting,
 * before; 0 in 4369 with fills shared.)  One page is still read once: a fill first puts a record of
 * itself (struct pc_fill, on its stack) on the page's row, under the row
 * lock and only if neither the page nor another fill of it is there;
 * whoever then wants the page finds the record and sleeps on it, and the
 * filler enters the page and takes the record off in one hold of the row
 * lock, then wakes them, and they look again.  (The record stands for
 * the busy page: a page enters the cache only once it is read, so the
 * lookups, the reclaim, purges and truncations never meet a half-read
 * page.)  Two vnodes may share one lock; no thread ever holds two.
 *
 * Order: an address space's a_lock, then a fill lock, then the vnode
 * lock and the file system's locks (ILOCK...), then the vnode list lock,
 * then a row lock, then the page allocator's node lock or a sleep queue
 * (a wait for a fill).  The row and list
 * locks are never held across a sleep, a copy to user memory or a VOP.
 * write(2) holds a fill lock only with the kernel bounce buffer of
 * kern/proc/sys_fs.c, never touching user memory under it (a fault there
 * would take a_lock after the fill lock).  pcache_purge takes spin locks
 * only, since VN_RELE is called holding all sorts of locks.  The reverse
 * mappings (kern/vm/rmap.c) take other address spaces' a_locks, so they
 * run with no fill lock held: a truncation lets its fill lock go first,
 * fsync collects the dirty bits before taking it.
 */
#include <kern/vm/pcache.h>
#include <kern/vm/pcache_impl.h>
#include <kern/vm/segmap.h>
#include <kern/vm/page.h>
#include <kern/vm/as.h>
#include <kern/vm/rmap.h>
#include <kern/cluster/cluster.h>
#include <kern/cluster/cl_pcache.h>
#include <kern/cluster/cl_vm.h>
#include <kern/sched/thread.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/vfs/ssac.h>
#include <kern/lock/spinlock.h>
#include <kern/lock/sleep.h>
#include <kern/vm/kmem.h>
#include <kern/arch/cpu.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <kern/arch/panic.h>
#include <kern/lib/kprintf.h>
#include <kern/arch/numa.h>

LOCK_CLASS(pcache_row_class, "pcache_row", LK_SPIN);
LOCK_CLASS(pcache_vlist_class, "pcache_vlist", LK_SPIN);
LOCK_CLASS(pcache_vnode_class, "pcache_vnode", LK_RWLOCK);

static struct pc_vlock vlist_locks[NVLOCKS];
static struct rwlock fill_locks[NVLOCKS];
struct pc_row *pcache_rows;                 /* [boot] */
unsigned pcache_row_bits;                   /* [boot] */
struct pcpu_counters pcache_counters[MAX_CPUS];
#define rows pcache_rows
#define row_bits pcache_row_bits
#define counters pcache_counters

void pcache_init(void)
{
    uint64_t pages = 0;
    for (int n = 0; n < numa_nnodes; n++)
        pages += page_free_count(n);
    /* One row (two cache lines) per 64 pages of memory, 256 to 4096 rows:
     * chains stay short while much of memory is file pages. */
    row_bits = cache_log2_ceil(MAX(pages / 64, 1));
    row_bits = MAX(row_bits, 8u);
    row_bits = MIN(row_bits, 12u);
    rows = kzalloc(sizeof(struct pc_row) << row_bits);
    if (!rows)
        panic("pcache_init: no memory for %u rows", 1u << row_bits);
    for (unsigned i = 0; i < (1u << row_bits); i++)
        spin_init_named(&rows[i].lock, &pcache_row_class, "pcache_row");
    for (int i = 0; i < NVLOCKS; i++) {
        spin_init_named(&vlist_locks[i].lock, &pcache_vlist_class, "pcache_vlist");
        rw_init(&fill_locks[i], &pcache_vnode_class, "pcache_vnode");
    }
    rmap_init();
    if (cluster_on())
        cl_pcache_init();       /* cluster=: replicas per cluster */
    if (cluster_on())
        cl_vm_init();           /* cluster=: the faults' page pools */
    kprintf("pcache: %u hash rows\n", 1u << row_bits);
}

/* ---- names and locks ---- */

static struct pc_row *row_of(const struct vnode *vp, uint64_t idx)
{
    return &rows[cache_hash(cache_ptr_tag(vp) + idx, row_bits)];
}

struct pc_row *pcache_row_of(const struct vnode *vp, uint64_t idx)
{
    return row_of(vp, idx);
}

spinlock_t *pcache_vlist_lock(const struct vnode *vp)
{
    return &vlist_locks[cache_hash(cache_ptr_tag(vp), VLOCK_BITS)].lock;
}

static struct rwlock *fill_lock(const struct vnode *vp)
{
    return &fill_locks[cache_hash(cache_ptr_tag(vp), VLOCK_BITS)];
}

static int64_t pcache_pages_total;     /* [a] pages of every file, for /proc/meminfo */

void pcache_npages_add(struct vnode *vp, int d)
{
    __atomic_add_fetch(&vp->v_npages, d, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&pcache_pages_total, d, __ATOMIC_RELAXED);
}

void pcache_count_replica(struct vnode *vp, int d)
{
    pcache_npages_add(vp, d);
}

uint64_t pcache_pages(void)
{
    int64_t n = __atomic_load_n(&pcache_pages_total, __ATOMIC_RELAXED);
    return n > 0 ? (uint64_t)n : 0;
}

static bool has_pages(struct vnode *vp)
{
    return __atomic_load_n(&vp->v_npages, __ATOMIC_SEQ_CST) != 0;
}

static uint64_t page_offset(uint64_t idx)
{
    return idx << PAGE_SHIFT;
}

/* The page (vp, idx) on row r, or NULL.  The caller holds r's lock. */
static struct page *row_find(const struct pc_row *r, const struct vnode *vp, uint64_t idx)
{
    ASSERT_HELD(&r->lock);
    struct page *pg = r->head;
    while (pg && (pg->p_vp != vp || pg->p_index != idx))
        pg = pg->p_hnext;
    return pg;
}

struct page *pcache_lookup(struct vnode *vp, uint64_t idx)
{
    struct pc_row *r = row_of(vp, idx);
    spin_lock(&r->lock);
    struct page *pg = row_find(r, vp, idx);
    if (pg) {
        page_hold(pg);
        if (!(page_flags(pg) & PG_REFD))    /* used again: the reclaim clock passes it once */
            __atomic_or_fetch(&pg->flags, PG_REFD, __ATOMIC_RELAXED);
    }
    spin_unlock(&r->lock);
    return pg;
}

/* With r locked: the fill of (vp, idx) under way in row r, or NULL. */
static struct pc_fill *fill_of(struct pc_row *r, const struct vnode *vp, uint64_t idx)
{
    ASSERT_HELD(&r->lock);
    struct pc_fill *f = r->fills;
    while (f && (f->vp != vp || f->idx != idx))
        f = f->next;
    return f;
}

/* With r locked: take the finished fill f off its row. */
static void fill_done(struct pc_row *r, struct pc_fill *f)
{
    struct pc_fill **pp = &r->fills;
    while (*pp != f)
        pp = &(*pp)->next;
    *pp = f->next;
}

/* With vp's fill lock: enter pg (its reservation in v_npages already
 * made) under its name, in place of the fill f that read it. */
static void enter(struct vnode *vp, uint64_t idx, struct page *pg, struct pc_fill *f)
{
    spinlock_t *vl = pcache_vlist_lock(vp);
    struct pc_row *r = row_of(vp, idx);
    spin_lock(vl);
    spin_lock(&r->lock);
    fill_done(r, f);
    pg->p_vp = vp;
    pg->p_index = idx;
    __atomic_or_fetch(&pg->flags, PG_CACHED, __ATOMIC_RELEASE);
    pg->p_hnext = r->head;
    r->head = pg;
    spin_unlock(&r->lock);
    pg->p_vnext = vp->v_pagelist;
    vp->v_pagelist = pg;
    spin_unlock(vl);
}

/*
 * With vp's list lock: take the page at *link out of the cache, if only
 * the cache holds it or force is set.  RM_REMOVED: the cache's reference
 * passes to the caller.  RM_KEPT: left alone.  RM_RECLAIMED: the reclaim
 * (kern/vm/pcache_reclaim.c) had already taken it out of its row and
 * owns it; it is now off vp's list too, and the caller does nothing.
 */
static enum removal remove_locked(struct vnode *vp, struct page **link, bool force)
{
    ASSERT_HELD(pcache_vlist_lock(vp));
    struct page *pg = *link;
    if (!(__atomic_load_n(&pg->flags, __ATOMIC_ACQUIRE) & PG_CACHED)) {
        *link = pg->p_vnext;
        pg->p_vnext = NULL;
        pcache_npages_add(vp, -1);
        return RM_RECLAIMED;
    }
    struct pc_row *r = row_of(vp, pg->p_index);
    spin_lock(&r->lock);
    if (!force && __atomic_load_n(&pg->count, __ATOMIC_ACQUIRE) != 1) {
        spin_unlock(&r->lock);
        return RM_KEPT;
    }
    struct page **pp = &r->head;
    while (*pp != pg)
        pp = &(*pp)->p_hnext;
    *pp = pg->p_hnext;
    __atomic_and_fetch(&pg->flags, (uint16_t)~(PG_CACHED | PG_DIRTY), __ATOMIC_RELEASE);
    pg->p_vp = NULL;
    spin_unlock(&r->lock);
    *link = pg->p_vnext;
    pg->p_vnext = pg->p_hnext = NULL;
    pcache_npages_add(vp, -1);
    return RM_REMOVED;
}

/* ---- fills ---- */

/* Read page idx of vp into pg: -ENXIO when it is wholly past the end. */
static int fill(struct vnode *vp, uint64_t idx, struct page *pg)
{
    int err = VOP_GETPAGE(vp, idx, page_to_virt(pg), kcred);
    return err < 0 ? err : err ? -EIO : 0;
}

struct rwlock *pcache_fill_lock(const struct vnode *vp)
{
    return fill_lock(vp);
}

/* With vp's fill lock, f on its row: read page idx into a new page and
 * enter it, held for the caller; f leaves the row either way.
 * PC_CREATE: a page wholly past the end is entered as zeros instead of
 * failing with -ENXIO (a write is about to extend the file over it). */
static int fill_and_enter(struct vnode *vp, uint64_t idx, int flags, struct pc_fill *f,
                          struct page **pgp)
{
    /* Counted while under way, so the file shows pages (v_npages). */
    pcache_npages_add(vp, 1);
    int node = this_cpu()->node;
    pcache_reclaim_for_fill(node);
    struct page *pg = page_alloc_node(0, node);
    if (!pg && pcache_reclaim(-1, 64))
        pg = page_alloc_node(0, node);  /* clean pages of any node went back */
    int err = pg ? fill(vp, idx, pg) : -ENOMEM;
    if (err == -ENXIO && (flags & PC_CREATE)) {
        memset(page_to_virt(pg), 0, PAGE_SIZE);
        err = 0;
    }
    if (err) {
        struct pc_row *r = row_of(vp, idx);
        spin_lock(&r->lock);
        fill_done(r, f);
        spin_unlock(&r->lock);
        if (pg)
            page_free(pg, 0);
        pcache_npages_add(vp, -1);
        pcpu_count(counters, err == -ENXIO ? C_EOF : C_MISS);
        return err;
    }
    pg->count = 2;              /* the cache's and the caller's */
    enter(vp, idx, pg, f);
    pcpu_count(counters, C_MISS);
    *pgp = pg;
    return 0;
}

/*
 * With vp's fill lock (shared, or the caller's exclusive hold): the page
 * if it is cached now; else, if another thread is reading it, sleep
 * until that fill is done and return -EAGAIN (look again); else read it
 * here, the fill on its row meanwhile, and wake whoever came for it.
 */
static int fill_or_wait(struct vnode *vp, uint64_t idx, int flags, struct page **pgp)
{
    struct pc_row *r = row_of(vp, idx);
    spin_lock(&r->lock);
    struct page *pg = row_find(r, vp, idx);
    if (pg) {
        page_hold(pg);
        spin_unlock(&r->lock);
        pcpu_count(counters, C_HIT);
        *pgp = pg;
        return 0;
    }
    struct pc_fill *other = fill_of(r, vp, idx);
    if (other) {
        /* The sleep queue is locked before the row lets go, and the
         * filler takes it only after leaving the row: no lost wakeup. */
        struct sleepq *sq = sleepq_lock(other);
        spin_unlock(&r->lock);
        pcpu_count(counters, C_FILLWAIT);
        sleep_locked(sq, other);
        return -EAGAIN;
    }
    struct pc_fill me = { .vp = vp, .idx = idx, .next = r->fills };
    r->fills = &me;
    spin_unlock(&r->lock);
    int err = fill_and_enter(vp, idx, flags, &me, pgp);
    struct sleepq *sq = sleepq_lock(&me);
    sleepq_wakeup_locked(sq, &me, true);
    sleepq_unlock(sq);
    return err;
}

int pcache_get_flags(struct vnode *vp, uint64_t idx, int flags, struct page **pgp)
{
    *pgp = NULL;
    if (!vn_has_pageio(vp))
        return -ENODEV;                 /* not a file the cache holds */
    if (idx > (~0UL >> PAGE_SHIFT))
        return -ENXIO;
    struct page *pg = pcache_lookup(vp, idx);
    if (pg) {
        pcpu_count(counters, C_HIT);
        *pgp = pg;
        return 0;
    }
    struct rwlock *fl = fill_lock(vp);
    bool locked = flags & PC_LOCKED;
    int err;
    do {
        if (!locked)
            rw_enter(fl, RW_READER);
        err = fill_or_wait(vp, idx, flags, pgp);
        if (!locked)
            rw_exit(fl);
    } while (err == -EAGAIN);
    return err;
}

int pcache_get(struct vnode *vp, uint64_t idx, struct page **pgp)
{
    return pcache_get_flags(vp, idx, 0, pgp);
}

/* ---- dirty pages ---- */

/* vp has a dirty page: keep it active until the page is written back. */
static void dirty_hold(struct vnode *vp)
{
    if (__atomic_exchange_n(&vp->v_dirtyhold, 1, __ATOMIC_SEQ_CST) == 0)
        VN_HOLD(vp);
}

void pcache_mark_dirty(struct page *pg)
{
    if (!(__atomic_load_n(&pg->flags, __ATOMIC_ACQUIRE) & PG_CACHED))
        return;
    __atomic_or_fetch(&pg->flags, PG_DIRTY, __ATOMIC_SEQ_CST);
    struct vnode *vp = __atomic_load_n(&pg->p_vp, __ATOMIC_ACQUIRE);
    if (vp && !(vp->v_flag & VMEMONLY))
        dirty_hold(vp);         /* (a tmpfs file's name holds it: no write-back to wait for) */
}

static int file_size(struct vnode *vp, uint64_t *size)
{
    struct vattr va;
    int err = VOP_GETATTR(vp, &va, kcred);
    *size = err ? 0 : va.va_size;
    return err;
}

/* With the fill lock: write pg (page idx of vp) to the file, up to size. */
static int write_page(struct vnode *vp, struct page *pg, uint64_t idx, uint64_t size)
{
    uint64_t off = page_offset(idx);
    if (off >= size)
        return 0;
    size_t n = MIN((uint64_t)PAGE_SIZE, size - off);
    int err = VOP_PUTPAGE(vp, idx, page_to_virt(pg), n, kcred);
    pcpu_count(counters, C_WRITEBACK);
    return err;
}

#define FLUSH_BATCH 16

/* Up to FLUSH_BATCH dirty pages of vp in [lo, hi), held, their PG_DIRTY
 * cleared (a store after this marks them again). */
static int take_dirty(struct vnode *vp, uint64_t lo, uint64_t hi, struct page **out)
{
    int n = 0;
    spinlock_t *vl = pcache_vlist_lock(vp);
    spin_lock(vl);
    for (struct page *pg = vp->v_pagelist; pg && n < FLUSH_BATCH; pg = pg->p_vnext) {
        if (pg->p_index < lo || pg->p_index >= hi ||
            !(__atomic_load_n(&pg->flags, __ATOMIC_ACQUIRE) & PG_DIRTY))
            continue;
        __atomic_and_fetch(&pg->flags, (uint16_t)~PG_DIRTY, __ATOMIC_ACQ_REL);
        page_hold(pg);
        out[n++] = pg;
    }
    spin_unlock(vl);
    return n;
}

static bool any_dirty(struct vnode *vp, uint64_t lo, uint64_t hi)
{
    bool found = false;
    spinlock_t *vl = pcache_vlist_lock(vp);
    spin_lock(vl);
    for (struct page *pg = vp->v_pagelist; pg && !found; pg = pg->p_vnext)
        found = pg->p_index >= lo && pg->p_index < hi &&
                (__atomic_load_n(&pg->flags, __ATOMIC_ACQUIRE) & PG_DIRTY);
    spin_unlock(vl);
    return found;
}

/*
 * After a flush, with no lock held: if vp has no dirty page left, drop the
 * dirty hold (which may be the last reference: VOP_INACTIVE runs here).  A
 * store that marks a page meanwhile sets the flag before looking at it,
 * so a dirty page seen after clearing it keeps (or retakes) the hold.
 */
static void dirty_drop(struct vnode *vp)
{
    if (!__atomic_load_n(&vp->v_dirtyhold, __ATOMIC_SEQ_CST) || any_dirty(vp, 0, ~0UL))
        return;
    if (__atomic_exchange_n(&vp->v_dirtyhold, 0, __ATOMIC_SEQ_CST) == 0)
        return;
    if (any_dirty(vp, 0, ~0UL) &&
        __atomic_exchange_n(&vp->v_dirtyhold, 1, __ATOMIC_SEQ_CST) == 0)
        return;                 /* dirty again: the hold stays */
    VN_RELE(vp);
}

void pcache_discard_dirty(struct vnode *vp)
{
    spinlock_t *vl = pcache_vlist_lock(vp);
    spin_lock(vl);
    for (struct page *pg = vp->v_pagelist; pg; pg = pg->p_vnext)
        __atomic_and_fetch(&pg->flags, (uint16_t)~PG_DIRTY, __ATOMIC_SEQ_CST);
    spin_unlock(vl);
    dirty_drop(vp);
}

int pcache_flush(struct vnode *vp, uint64_t lo, uint64_t hi)
{
    if (vp->v_flag & VMEMONLY)
        return 0;               /* nowhere to write: the pages stay dirty (tmpfs) */
    if (!has_pages(vp) || !any_dirty(vp, lo, hi)) {
        dirty_drop(vp);         /* a truncation may have dropped the dirty pages */
        return 0;
    }
    struct rwlock *fl = fill_lock(vp);
    rw_enter(fl, RW_WRITER);
    int err = pcache_flush_locked(vp, lo, hi);
    rw_exit(fl);
    dirty_drop(vp);
    return err;
}

int pcache_flush_locked(struct vnode *vp, uint64_t lo, uint64_t hi)
{
    if (vp->v_flag & VMEMONLY)
        return 0;
    uint64_t size;
    int first_err = file_size(vp, &size);
    struct page *batch[FLUSH_BATCH];
    int n;
    while (!first_err && (n = take_dirty(vp, lo, hi, batch)) > 0) {
        for (int i = 0; i < n; i++) {
            struct page *pg = batch[i];
            /* A truncation cannot run (it takes the fill lock), so a page
             * taken from the list is still cached under its name. */
            int err = write_page(vp, pg, pg->p_index, size);
            if (err) {
                pcache_mark_dirty(pg);
                if (!first_err)
                    first_err = err;
            }
            page_rele(pg);
        }
    }
    return first_err;
}

int pcache_vop_fsync(struct vnode *vp, struct cred *cr)
{
    /* Every process's stores through its mappings, too (no lock held). */
    int err = vp->v_type == VREG ? rmap_sync(vp, 0, ~0UL) : 0;
    int e = VOP_FSYNC_RAW(vp, cr);
    return err ? err : e;
}

/* ---- the last release ---- */

void pcache_purge(struct vnode *vp)
{
    if (cluster_on())
        cl_pcache_purge_vp(vp);     /* every cluster's replicas of it */
    segmap_purge(vp, 0);            /* windows hold page references */
    spinlock_t *vl = pcache_vlist_lock(vp);
    spin_lock(vl);
    struct page **link = &vp->v_pagelist;
    while (*link) {
        struct page *pg = *link;
        enum removal rm = remove_locked(vp, link, false);
        if (rm == RM_REMOVED) {
            page_rele(pg);              /* the cache's reference: the last */
            pcpu_count(counters, C_PURGED);
        } else if (rm == RM_KEPT) {
            link = &pg->p_vnext;
        }
    }
    spin_unlock(vl);
}

/* ---- truncate ---- */

/* Zero the bytes of the cached page holding offset size from there to
 * its end (the part past the end of the file). */
static void zero_tail(struct vnode *vp, uint64_t size)
{
    size_t in = size & (PAGE_SIZE - 1);
    if (!in)
        return;
    struct page *pg = pcache_lookup(vp, size >> PAGE_SHIFT);
    if (pg) {
        memset((char *)page_to_virt(pg) + in, 0, PAGE_SIZE - in);
        page_rele(pg);
    }
}

/* With the fill lock, after the size went from old to size. */
static void resized(struct vnode *vp, uint64_t old, uint64_t size)
{
    if (!has_pages(vp))
        return;
    if (size < old) {
        uint64_t first = ALIGN_UP(size, PAGE_SIZE) >> PAGE_SHIFT;
        segmap_purge(vp, first);
        spinlock_t *vl = pcache_vlist_lock(vp);
        spin_lock(vl);
        struct page **link = &vp->v_pagelist;
        while (*link) {
            struct page *pg = *link;
            if (pg->p_index < first) {
                link = &pg->p_vnext;
                continue;
            }
            if (remove_locked(vp, link, true) != RM_REMOVED)
                continue;               /* the reclaim's now */
            memset(page_to_virt(pg), 0, PAGE_SIZE);
            page_rele(pg);
            pcpu_count(counters, C_TRUNCATED);
        }
        spin_unlock(vl);
        zero_tail(vp, size);
    } else if (size > old) {
        zero_tail(vp, old);
    }
}

/*
 * A size change (truncate, or setattr with AT_SIZE) of a regular file.
 * After the fill lock is let go (a_lock comes before it), every address
 * space's mappings of the dropped pages are removed through the reverse
 * mappings (kern/vm/rmap.c), so that any process gets SIGBUS past the new
 * end, as on Linux.
 */
static int change_size(struct vnode *vp, const struct vattr *va, uint64_t size, struct cred *cr)
{
    struct rwlock *fl = fill_lock(vp);
    rw_enter(fl, RW_WRITER);
    uint64_t old;
    bool sized = file_size(vp, &old) == 0;
    int err = va ? VOP_SETATTR_RAW(vp, va, cr) : VOP_TRUNCATE_RAW(vp, size, cr);
    if (!err && sized)
        resized(vp, old, size);
    rw_exit(fl);
    if (!err && sized && size < old)
        rmap_truncate(vp, ALIGN_UP(size, PAGE_SIZE) >> PAGE_SHIFT);
    if (!err && sized && cluster_on())
        cl_pcache_invalidate(vp, MIN(old, size) >> PAGE_SHIFT, ~0UL);  /* replicas */
    return err;
}

int pcache_vop_truncate(struct vnode *vp, uint64_t size, struct cred *cr)
{
    if (!vn_has_pageio(vp))
        return VOP_TRUNCATE_RAW(vp, size, cr);
    return change_size(vp, NULL, size, cr);
}

int pcache_vop_setattr(struct vnode *vp, const struct vattr *va, struct cred *cr)
{
    if (!vn_has_pageio(vp) || !(va->va_mask & AT_SIZE))
        return VOP_SETATTR_RAW(vp, va, cr);
    return change_size(vp, va, va->va_size, cr);
}

void pcache_get_stats(struct pcache_stats *st)
{
    st->hits = pcpu_sum(counters, C_HIT);
    st->misses = pcpu_sum(counters, C_MISS);
    st->past_eof = pcpu_sum(counters, C_EOF);
    st->writebacks = pcpu_sum(counters, C_WRITEBACK);
    st->purged = pcpu_sum(counters, C_PURGED);
    st->truncated = pcpu_sum(counters, C_TRUNCATED);
    st->fill_waits = pcpu_sum(counters, C_FILLWAIT);
}
