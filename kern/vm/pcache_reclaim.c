/*
 * Reclaim: taking file pages back from the page cache when memory runs
 * short, and the pageout daemons (one per NUMA node) that do it ahead of
 * need and flush dirty pages periodically.
 *
 * Theory.  Since read(2) and write(2) go through the page cache (kern/vm/
 * pcache_rw.c), every file page ever touched stays cached while its file
 * is active; without reclaim, reading or writing a file larger than
 * memory would exhaust it.  A node is short when its free pages fall
 * below its low-water mark (1/32 of its pages, at least 1 MiB) and so do
 * every other node's: an allocation falls back to the other nodes in
 * distance order (kern/vm/page.c), and as Linux's default
 * (zone_reclaim_mode 0) a remote page is better than throwing a cached
 * one away.  (Reclaiming a node alone once cost pgbench a quarter of its
 * rate at 2 CPUs on `default`: node 0 sat at 10 MiB free, reading
 * PostgreSQL's binary back from the disk 16000 times in 30 s, while node
 * 1 had 250 MiB free.)  The daemon of a short node then, until its free
 * memory is back above the high-water mark (twice the low):
 *
 *   1. writes back the dirty pages of a few files found on the node's
 *      pages (a dirty page holds its vnode active: kern/vm/pcache.c,
 *      "Dirty pages", so the vnode can be held and flushed safely; a
 *      tmpfs file's are its only copy and stay: VMEMONLY), and
 *   2. frees clean pages that nothing but the cache holds (count 1: no
 *      mapping, no open segmap window), oldest first.
 *
 * Oldest first is the clock (second-chance) approximation of LRU: a hand
 * sweeps the hash rows; a lookup sets PG_REFD on the page it finds; the
 * hand clears PG_REFD the first time it passes a page and frees it the
 * second time if it was not looked up in between.
 *
 * Freeing a page: under its row's lock (count 1 and clean are stable
 * there: every new reference comes from a lookup under that lock) the
 * page is unhashed and PG_CACHED cleared, so no lookup finds it; the row
 * lock is dropped; then, under the vnode's list lock, the page leaves the
 * vnode's list, unless a purge or a truncation walking that list got to
 * it first (remove_locked sees !PG_CACHED, unlinks it and leaves it to
 * the reclaim, RM_RECLAIMED).  The list lock is never taken with a row
 * lock held (the order is list, then row).  The cache's reference is then
 * dropped, which frees the page.
 *
 * Readers and writers also reclaim directly: a fill on a short node frees
 * clean pages up to the high-water mark before allocating
 * (pcache_reclaim_for_fill; the fills after it need not), and
 * a writer writes its own file's dirty pages back when its node is short
 * (it holds that file's fill lock already; another file's would be a
 * second fill lock, which no thread ever holds), so one process writing a
 * file larger than memory keeps memory free without waiting.
 *
 *   3. has the buffer cache give back the pages of clean, unused
 *      buffers down to its floor (buf_shrink, kern/vfs/buf.c), and
 *   4. when that is not enough, unmaps mapped file pages, oldest first
 *      (the same clock, a hand of its own), a batch of one file at a
 *      time: the reverse mappings (kern/vm/rmap.c) remove every PTE of
 *      the batch in every address space, moving the PTEs' dirty bits to
 *      the pages; the dirty ones are written back (pcache_flush); then
 *      each page that only the cache and the reclaim now hold is freed
 *      (free_unmapped, under its row lock: count 2 is stable there, since
 *      a new PTE comes only from a fault's lookup under that lock).  A
 *      page the process touches again faults it back in from the file,
 *      so a process mapping a file larger than memory keeps working.
 *
 * Segmap's free windows hold their pages too: each reclaim first closes
 * a few of the least recently used ones (segmap_shrink), so those pages
 * can go on a later sweep.
 *
 * Out of memory.  A fault that finds no page (kern/vm/fault.c) lets its
 * a_lock go and waits here (pcache_wait_for_memory): the daemons are
 * woken and it waits until pages are free again, or until a daemon's pass
 * on a short node freed nothing, written nothing back and unmapped
 * nothing -- memory then holds no file page that could go, only
 * anonymous memory and the kernel's -- and only then does the fault fail
 * and the process get killed.  So the OOM killer acts only when anonymous
 * memory alone fills the machine.
 *
 * The periodic flush.  Node 0's daemon also calls vfs_sync_all every
 * FLUSH_SECONDS, which writes back every active file's dirty pages (S5's
 * sync) and the delayed metadata, after collecting the mappings' dirty
 * bits (rmap_harvest_all): dirty data never stays in memory much
 * longer than that, as SVR4's fsflush.
 *
 * Locks: a row lock, or a vnode list lock, one at a time (row 4 of
 * docs/architecture.md), and a reverse-map row lock inside a row lock
 * (rmap_hold_if_mapped); the write-backs take the fill lock and the file
 * system's locks through pcache_flush, and the unmapping the address
 * spaces' a_locks (one at a time), with no other lock held.  The
 * daemons sleep on their node's channel with a callout as the timeout.
 */
#include <kern/vm/pcache.h>
#include <kern/vm/pcache_impl.h>
#include <kern/vm/page.h>
#include <kern/vm/segmap.h>
#include <kern/vm/rmap.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/buf.h>
#include <kern/lock/sleep.h>
#include <kern/sched/thread.h>
#include <kern/sched/callout.h>
#include <kern/arch/numa.h>
#include <kern/lib/kprintf.h>
#include <drivers/platform/timer.h>
#include <kern/cluster/cluster.h>
#include <kern/cluster/cl_pcache.h>

#define RECLAIM_BATCH   32      /* pages taken from one row at a time */
#define WRITEBACK_FILES 8       /* files one daemon pass flushes */
#define DAEMON_TICK_NS  (50UL * 1000 * 1000)
#define FLUSH_SECONDS   30

static unsigned clock_hand;                    /* [a] the next row to sweep */
static unsigned mapped_hand;                   /* [a] the same, for mapped pages */
static uint64_t mapped_total;                  /* [a] mapped pages unmapped and freed */
static uint64_t starved_passes;                /* [a] daemon passes that found nothing */
static int daemon_holds;        /* [a] reclaims and write-backs holding vnodes right now */
static uint64_t lowat[MAX_NODES];               /* [boot] pages */
static int wake_chan[MAX_NODES];                /* [c] a daemon's sleep channel */
static uint64_t reclaimed_total, daemon_runs;   /* [a] statistics */

static uint64_t free_pages(int node)
{
    return page_free_count(node);
}

bool pcache_node_low(int node)
{
    return lowat[node] && free_pages(node) < lowat[node];
}

bool pcache_node_short(int node)
{
    if (!pcache_node_low(node))
        return false;
    for (int n = 0; n < numa_nnodes; n++)
        if (n != node && !pcache_node_low(n))
            return false;       /* its allocations find pages there */
    return true;
}

/* ---- freeing clean pages ---- */

static bool takeable(const struct page *pg, int node)
{
    return (node < 0 || pg->node == node) &&
           __atomic_load_n(&pg->count, __ATOMIC_ACQUIRE) == 1 &&
           !(__atomic_load_n(&pg->flags, __ATOMIC_ACQUIRE) & PG_DIRTY);
}

/* Unhash up to max clean, unused pages of row r on node (second chance
 * for those looked up since the last sweep) into out. */
static int take_clean(struct pc_row *r, int node, struct page **out, int max)
{
    if (!__atomic_load_n(&r->head, __ATOMIC_RELAXED))
        return 0;
    int n = 0;
    spin_lock(&r->lock);
    struct page **pp = &r->head;
    while (*pp && n < max) {
        struct page *pg = *pp;
        if (!takeable(pg, node)) {
            pp = &pg->p_hnext;
        } else if (page_flags(pg) & PG_REFD) {
            __atomic_and_fetch(&pg->flags, (uint16_t)~PG_REFD, __ATOMIC_RELAXED);
            pp = &pg->p_hnext;
        } else {
            *pp = pg->p_hnext;
            pg->p_hnext = NULL;
            __atomic_and_fetch(&pg->flags, (uint16_t)~PG_CACHED, __ATOMIC_RELEASE);
            out[n++] = pg;
        }
    }
    spin_unlock(&r->lock);
    return n;
}

/* pg was unhashed by take_clean: take it off its vnode's list (unless a
 * purge or truncation did) and free it. */
static void drop_taken(struct page *pg)
{
    struct vnode *vp = pg->p_vp;
    spinlock_t *vl = pcache_vlist_lock(vp);
    spin_lock(vl);
    for (struct page **link = &vp->v_pagelist; *link; link = &(*link)->p_vnext) {
        if (*link == pg) {
            *link = pg->p_vnext;
            pcache_npages_add(vp, -1);
            break;
        }
    }
    spin_unlock(vl);
    pg->p_vnext = NULL;
    pg->p_vp = NULL;
    page_rele(pg);
}

uint64_t pcache_reclaim(int node, uint64_t want)
{
    unsigned nrows = 1u << pcache_row_bits;
    uint64_t freed = 0;
    struct page *got[RECLAIM_BATCH];
    segmap_shrink(MIN(want, (uint64_t)RECLAIM_BATCH));     /* windows pin their pages */
    if (cluster_on())
        freed = cl_pcache_shrink(node, want);   /* clusters' unmapped replicas first */
    /* Two sweeps at most: the first may only clear PG_REFD. */
    for (unsigned i = 0; i < 2 * nrows && freed < want; i++) {
        unsigned r = __atomic_fetch_add(&clock_hand, 1, __ATOMIC_RELAXED) & (nrows - 1);
        int n = take_clean(&pcache_rows[r], node, got, (int)MIN(want - freed, RECLAIM_BATCH));
        for (int k = 0; k < n; k++)
            drop_taken(got[k]);
        freed += n;
    }
    __atomic_add_fetch(&reclaimed_total, freed, __ATOMIC_RELAXED);
    return freed;
}

void pcache_reclaim_for_fill(int node)
{
    if (!pcache_node_short(node))
        return;
    /* Up to the high-water mark, so the next fills find memory without
     * reclaiming each time. */
    uint64_t high = 2 * lowat[node];
    for (int i = 0; i < 64 && free_pages(node) < high; i++)
        if (pcache_reclaim(node, MIN(high - free_pages(node), (uint64_t)256)) == 0)
            break;
    wakeup(&wake_chan[node]);
}

/* ---- mapped pages ---- */

#define MAPPED_BATCH 32

struct mapped_batch {
    struct vnode *vp;               /* held */
    struct page *pgs[MAPPED_BATCH]; /* held */
    uint64_t idx[MAPPED_BATCH];
    int n;
};

/* Add row r's pages of node that something besides the cache holds, not
 * looked up since the hand last passed, to b: all of one file, the first
 * one found that some address space maps. */
static void take_mapped(struct pc_row *r, int node, struct mapped_batch *b)
{
    if (!__atomic_load_n(&r->head, __ATOMIC_RELAXED))
        return;
    spin_lock(&r->lock);
    for (struct page *pg = r->head; pg && b->n < MAPPED_BATCH; pg = pg->p_hnext) {
        if ((node >= 0 && pg->node != node) || __atomic_load_n(&pg->count, __ATOMIC_ACQUIRE) < 2)
            continue;
        if (page_flags(pg) & PG_REFD) {
            __atomic_and_fetch(&pg->flags, (uint16_t)~PG_REFD, __ATOMIC_RELAXED);
            continue;
        }
        if (!b->vp && rmap_hold_if_mapped(pg->p_vp))
            b->vp = pg->p_vp;
        if (pg->p_vp != b->vp)
            continue;
        page_hold(pg);
        b->pgs[b->n] = pg;
        b->idx[b->n++] = pg->p_index;
    }
    spin_unlock(&r->lock);
}

/* pg (held by the caller, page idx of vp) is now held by the cache and
 * the caller alone, and clean: take it out of the cache and free it. */
static bool free_unmapped(struct vnode *vp, uint64_t idx, struct page *pg)
{
    struct pc_row *r = pcache_row_of(vp, idx);
    spin_lock(&r->lock);
    uint16_t f = __atomic_load_n(&pg->flags, __ATOMIC_ACQUIRE);
    bool ok = (f & PG_CACHED) && !(f & PG_DIRTY) && pg->p_vp == vp && pg->p_index == idx &&
              __atomic_load_n(&pg->count, __ATOMIC_ACQUIRE) == 2;
    if (ok) {
        struct page **pp = &r->head;
        while (*pp != pg)
            pp = &(*pp)->p_hnext;
        *pp = pg->p_hnext;
        pg->p_hnext = NULL;
        __atomic_and_fetch(&pg->flags, (uint16_t)~PG_CACHED, __ATOMIC_RELEASE);
    }
    spin_unlock(&r->lock);
    if (!ok)
        return false;
    page_rele(pg);              /* ours: the cache's goes in drop_taken */
    drop_taken(pg);
    return true;
}

/* One batch of mapped pages of node (-1: any): unmapped everywhere,
 * written back when dirty, freed.  How many were freed; *found, how many
 * were unmapped. */
static uint64_t reclaim_mapped_batch(int node, int *found)
{
    unsigned nrows = 1u << pcache_row_bits;
    struct mapped_batch b = { .vp = NULL, .n = 0 };
    __atomic_add_fetch(&daemon_holds, 1, __ATOMIC_ACQ_REL);     /* an unmount waits */
    for (unsigned i = 0; i < 2 * nrows && b.n < MAPPED_BATCH; i++) {
        unsigned r = __atomic_fetch_add(&mapped_hand, 1, __ATOMIC_RELAXED) & (nrows - 1);
        take_mapped(&pcache_rows[r], node, &b);
    }
    *found = b.n;
    if (!b.vp) {
        __atomic_sub_fetch(&daemon_holds, 1, __ATOMIC_ACQ_REL);
        return 0;
    }
    rmap_unmap_pages(b.vp, b.pgs, b.idx, b.n);
    uint64_t lo = ~0UL, hi = 0;
    bool dirty = false;
    for (int k = 0; k < b.n; k++) {
        lo = MIN(lo, b.idx[k]);
        hi = MAX(hi, b.idx[k] + 1);
        dirty |= (__atomic_load_n(&b.pgs[k]->flags, __ATOMIC_ACQUIRE) & PG_DIRTY) != 0;
    }
    /* Only when the batch has a dirty page: a flush scans the file's list. */
    if (dirty && pcache_flush(b.vp, lo, hi))
        kprintf("pageout: write-back of mapped pages failed; they stay\n");
    uint64_t freed = 0;
    for (int k = 0; k < b.n; k++) {
        if (free_unmapped(b.vp, b.idx[k], b.pgs[k]))
            freed++;
        else
            page_rele(b.pgs[k]);
    }
    VN_RELE(b.vp);
    __atomic_sub_fetch(&daemon_holds, 1, __ATOMIC_ACQ_REL);
    __atomic_add_fetch(&mapped_total, freed, __ATOMIC_RELAXED);
    __atomic_add_fetch(&reclaimed_total, freed, __ATOMIC_RELAXED);
    return freed;
}

uint64_t pcache_reclaim_mapped(int node, uint64_t want)
{
    uint64_t freed = 0;
    int found = 1;
    for (int i = 0; i < 64 && freed < want && found; i++)
        freed += reclaim_mapped_batch(node, &found);
    return freed;
}

/* ---- writing dirty pages back ---- */

/* Up to max distinct vnodes with dirty pages on node, held. */
static int find_dirty_files(int node, struct vnode **out, int max)
{
    unsigned nrows = 1u << pcache_row_bits;
    int n = 0;
    for (unsigned r = 0; r < nrows && n < max; r++) {
        struct pc_row *row = &pcache_rows[r];
        if (!__atomic_load_n(&row->head, __ATOMIC_RELAXED))
            continue;
        spin_lock(&row->lock);
        for (struct page *pg = row->head; pg && n < max; pg = pg->p_hnext) {
            if (pg->node != node || !(__atomic_load_n(&pg->flags, __ATOMIC_ACQUIRE) & PG_DIRTY) ||
                (pg->p_vp->v_flag & VMEMONLY))
                continue;               /* clean, or never written back (tmpfs) */
            bool seen = false;
            for (int k = 0; k < n && !seen; k++)
                seen = out[k] == pg->p_vp;
            if (!seen) {
                VN_HOLD(pg->p_vp);      /* safe: its dirty hold keeps it active */
                out[n++] = pg->p_vp;
            }
        }
        spin_unlock(&row->lock);
    }
    return n;
}


bool pcache_pageout_holding(void)
{
    return __atomic_load_n(&daemon_holds, __ATOMIC_ACQUIRE) != 0;
}

/* How many files it found dirty. */
static int write_back_node(int node)
{
    struct vnode *files[WRITEBACK_FILES];
    __atomic_add_fetch(&daemon_holds, 1, __ATOMIC_ACQ_REL);
    int n = find_dirty_files(node, files, WRITEBACK_FILES);
    for (int k = 0; k < n; k++) {
        int err = pcache_flush(files[k], 0, ~0UL);
        if (err)
            kprintf("pageout: write-back failed (%d); the pages stay dirty\n", err);
        VN_RELE(files[k]);
    }
    __atomic_sub_fetch(&daemon_holds, 1, __ATOMIC_ACQ_REL);
    return n;
}

/* ---- the daemons ---- */

static void wake_daemon(void *chan)
{
    wakeup(chan);
}

/* Sleep on the node's channel for at most DAEMON_TICK_NS. */
static void daemon_nap(int node)
{
    struct callout co;
    callout_setup(&co);
    callout_arm(&co, uptime_ns() + DAEMON_TICK_NS, wake_daemon, &wake_chan[node]);
    struct sleepq *sq = sleepq_lock(&wake_chan[node]);
    sleep_locked(sq, &wake_chan[node]);
    callout_stop(&co);
}

/* A short node: write back, free clean pages, then mapped ones, up to
 * the high-water mark.  A pass that could do none of it counts as
 * starved (pcache_wait_for_memory). */
static void daemon_pass(int node)
{
    __atomic_add_fetch(&daemon_runs, 1, __ATOMIC_RELAXED);
    int wrote = write_back_node(node);
    uint64_t high = 2 * lowat[node], freed = 0;
    if (free_pages(node) < high)
        freed += pcache_reclaim(node, high - free_pages(node));
    if (free_pages(node) < high)
        freed += buf_shrink(MIN(high - free_pages(node), (uint64_t)256));
    if (free_pages(node) < high)
        freed += pcache_reclaim_mapped(node, high - free_pages(node));
    if (!wrote && !freed && pcache_node_short(node))
        __atomic_add_fetch(&starved_passes, 1, __ATOMIC_RELEASE);
    wakeup(&starved_passes);        /* the faults waiting for memory look again */
}

#define WAIT_MEMORY_NS  (10UL * 1000 * 1000 * 1000)
#define WAIT_FREE_PAGES 16

static uint64_t all_free_pages(void)
{
    uint64_t n = 0;
    for (int i = 0; i < numa_nnodes; i++)
        n += free_pages(i);
    return n;
}

/* Sleep on chan for at most ns. */
static void nap(void *chan, uint64_t ns)
{
    struct callout co;
    callout_setup(&co);
    callout_arm(&co, uptime_ns() + ns, wake_daemon, chan);
    struct sleepq *sq = sleepq_lock(chan);
    sleep_locked(sq, chan);
    callout_stop(&co);
}

bool pcache_wait_for_memory(void)
{
    /* Two passes that found nothing, after this wait began: one may
     * have raced with a fault that mapped the page it chose again. */
    uint64_t starved = __atomic_load_n(&starved_passes, __ATOMIC_ACQUIRE);
    uint64_t deadline = uptime_ns() + WAIT_MEMORY_NS;
    /* Sleep at least once: the daemon may be waiting for the a_lock the
     * fault just let go, and must run before the fault tries again. */
    do {
        for (int n = 0; n < numa_nnodes; n++)
            wakeup(&wake_chan[n]);
        nap(&starved_passes, DAEMON_TICK_NS);
        if (__atomic_load_n(&starved_passes, __ATOMIC_ACQUIRE) - starved >= 2)
            return false;       /* nothing left to take but anonymous memory */
    } while (all_free_pages() < WAIT_FREE_PAGES && uptime_ns() < deadline);
    return all_free_pages() >= WAIT_FREE_PAGES;
}

static void pageout_daemon(void *arg)
{
    int node = (int)(uintptr_t)arg;
    uint64_t next_flush = uptime_ns() + FLUSH_SECONDS * 1000000000UL;
    for (;;) {
        daemon_nap(node);
        if (pcache_node_short(node))
            daemon_pass(node);
        if (node == 0 && uptime_ns() >= next_flush) {
            __atomic_add_fetch(&daemon_holds, 1, __ATOMIC_ACQ_REL);
            rmap_harvest_all();
            __atomic_sub_fetch(&daemon_holds, 1, __ATOMIC_ACQ_REL);
            vfs_sync_all();
            next_flush = uptime_ns() + FLUSH_SECONDS * 1000000000UL;
        }
    }
}

void pcache_reclaim_start(void)
{
    for (int n = 0; n < numa_nnodes; n++) {
        uint64_t total = page_total_count(n);
        lowat[n] = MAX(total / 32, (uint64_t)(1 << 20) / PAGE_SIZE);
        uint64_t cpus = numa_nodes[n].cpumask ? numa_nodes[n].cpumask : ~0UL;
        if (!thread_create("pageout", pageout_daemon, (void *)(uintptr_t)n, cpus))
            kprintf("pageout: no daemon for node %d\n", n);
    }
}

uint64_t pcache_reclaim_mapped_count(void)
{
    return __atomic_load_n(&mapped_total, __ATOMIC_RELAXED);
}

void pcache_reclaim_stats(uint64_t *reclaimed, uint64_t *runs)
{
    *reclaimed = __atomic_load_n(&reclaimed_total, __ATOMIC_RELAXED);
    *runs = __atomic_load_n(&daemon_runs, __ATOMIC_RELAXED);
}
