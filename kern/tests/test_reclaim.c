/*
 * ktests for the page cache's reclaim (kern/vm/pcache_reclaim.c), on a
 * fresh S5 file system on the tests' RAM disk:
 *
 *   reclaim_clean     the clean pages of a file that nothing maps nor
 *                     holds in a window are freed by the clock (in two
 *                     sweeps at most: the first may only clear PG_REFD)
 *                     and read back intact from the disk; dirty pages are
 *                     not freed until written back
 *   reclaim_pressure  with the machine's memory taken down to a few MiB
 *                     (below the low-water marks, the pageout daemons
 *                     awake), a file 3 MiB larger than all that is
 *                     left is written and read back intact (pattern
 *                     checked) on a RAM disk of its own: the writer
 *                     writes its own pages back and frees them, the
 *                     readers free clean ones
 *   reclaim_mapped    the same pressure, and a file of the same size mapped
 *                     shared and read through the mapping twice, with a
 *                     store in every eighth page: the pageout daemons unmap
 *                     mapped pages (through the reverse mappings), write
 *                     the stored ones back and free them, and the second
 *                     read finds the pattern and the stores intact
 */
#include <kern/tests/ktest.h>
#include <kern/tests/s5t.h>
#include <kern/vm/pcache.h>
#include <kern/vm/segmap.h>
#include <kern/vm/page.h>
#include <kern/vm/as.h>
#include <kern/vm/kmem.h>
#include <kern/vfs/buf.h>
#include <kern/lib/string.h>
#include <kern/sched/thread.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/arch/numa.h>
#include <kern/s5/s5.h>
#include <kern/lib/options.h>
#include <drivers/block/bio.h>

#define CLEAN_BYTES (64 * PAGE_SIZE)

/* Reclaim until vp has no page left, at most a few sweeps. */
static void reclaim_all(void)
{
    for (int i = 0; i < 4; i++)
        pcache_reclaim(-1, ~0UL);
}

/* The checks of reclaim_clean on vp (the caller releases it whatever they
 * find, so that a failure does not leave the file system busy for the
 * tests after it). */
static int clean_checks(struct vnode *vp)
{
    KT_ASSERT_EQ(t_write_pat(vp, 0, CLEAN_BYTES, 3, 3000), 0);
    KT_ASSERT_EQ(pcache_flush(vp, 0, ~0UL), 0);
    segmap_purge(vp, 0);                    /* windows hold their pages */
    KT_ASSERT_EQ(vp->v_npages, CLEAN_BYTES / PAGE_SIZE);
    reclaim_all();
    KT_ASSERT_EQ(vp->v_npages, 0);
    KT_ASSERT_EQ(t_check_pat(vp, 0, CLEAN_BYTES, 3, 3000), 0);
    KT_ASSERT_EQ(vp->v_npages, CLEAN_BYTES / PAGE_SIZE);
    /* Dirty pages stay until written back. */
    KT_ASSERT_EQ(t_write_pat(vp, 0, CLEAN_BYTES, 4, 3000), 0);
    segmap_purge(vp, 0);
    reclaim_all();
    KT_ASSERT_EQ(vp->v_npages, CLEAN_BYTES / PAGE_SIZE);
    KT_ASSERT_EQ(pcache_flush(vp, 0, ~0UL), 0);
    reclaim_all();
    KT_ASSERT_EQ(vp->v_npages, 0);
    KT_ASSERT_EQ(t_check_pat(vp, 0, CLEAN_BYTES, 4, 3000), 0);
    return 0;
}

static int clean_body(struct s5t *t)
{
    /* The exact page counts below hold only while no pageout daemon takes
     * pages of its own accord: with this CPU's node short of memory (after
     * reclaim_pressure on a preset of small nodes, hector's 64 MiB) it
     * frees the file's clean pages as soon as they are written back.  The
     * cache's other clean pages go first; a node still short is a skip. */
    reclaim_all();
    int node = numa_node_of_cpu(cpu_id());
    if (pcache_node_short(node))
        KT_SKIP("node %d is short of memory, so its pageout daemon takes pages too", node);
    struct vnode *vp;
    KT_ASSERT_EQ(t_create(t->root, "clean", &vp), 0);
    int r = clean_checks(vp);
    VN_RELE(vp);
    return r;
}

KTEST(reclaim_clean)
{
    return t_on_fresh(1024, 32, clean_body);
}

#define PRESSURE_LEFT   (2UL << 20)     /* bytes left free in all (below the low-water marks) */
#define PRESSURE_DISK   24              /* MiB: the test's own RAM disk */
#define PRESSURE_MORE   (3UL << 20)     /* the file: this much more than all that is left */
#define PCP_PAGES       64              /* pages one CPU's cache of free pages may hold
                                         * (PCP_HIGH, kern/vm/page.c): out of others' reach */

/* Pages left free on node n: PRESSURE_LEFT spread over the nodes (at
 * least 64), plus what the per-CPU caches of its CPUs may keep, which a
 * CPU elsewhere cannot allocate. */
static uint64_t left_on(int n)
{
    uint64_t cpus = 0;
    for (uint64_t m = numa_nodes[n].cpumask; m; m &= m - 1)
        cpus++;
    return MAX(PRESSURE_LEFT / PAGE_SIZE / (uint64_t)numa_nnodes, 64UL) + PCP_PAGES * cpus;
}

#define BIG_ORDER 9             /* 2 MiB blocks first: fewer allocations */

struct taken {
    struct page *big, *small;   /* chained through page->next */
    uint64_t pages;
};

static void take(struct page **chain, struct page *pg)
{
    pg->next = *chain;
    *chain = pg;
}

/* Take memory of every node until each has left_on(n) pages free (the
 * pageout daemons are awake). */
static void take_memory(struct taken *t)
{
    for (int n = 0; n < numa_nnodes; n++) {
        uint64_t keep = left_on(n);
        struct page *pg;
        while (page_free_count(n) > keep + (2UL << BIG_ORDER) &&
               (pg = page_alloc_node(BIG_ORDER, n)) != NULL) {
            take(&t->big, pg);
            t->pages += 1UL << BIG_ORDER;
        }
        while (page_free_count(n) > keep && (pg = page_alloc_node(0, n)) != NULL) {
            take(&t->small, pg);
            t->pages++;
        }
    }
}

static void give_back(struct taken *t)
{
    for (struct page *pg = t->big, *next; pg; pg = next) {
        next = pg->next;
        page_free(pg, BIG_ORDER);
    }
    for (struct page *pg = t->small, *next; pg; pg = next) {
        next = pg->next;
        page_free(pg, 0);
    }
}

static int pressure_body(struct s5t *t)
{
    struct vnode *vp;
    KT_ASSERT_EQ(t_create(t->root, "big", &vp), 0);
    uint64_t before, runs;
    pcache_reclaim_stats(&before, &runs);
    uint64_t left = 0;
    for (int n = 0; n < numa_nnodes; n++)
        left += left_on(n) * PAGE_SIZE;
    uint64_t size = left + PRESSURE_MORE;
    KT_ASSERT(size <= (PRESSURE_DISK - 2) * (1UL << 20));  /* fits the disk, with its metadata */
    struct taken taken = { 0 };
    take_memory(&taken);
    int w = t_write_pat(vp, 0, size, 5, 8192);
    int c = w ? w : t_check_pat(vp, 0, size, 5, 8192);
    give_back(&taken);
    uint64_t after;
    pcache_reclaim_stats(&after, &runs);
    VN_RELE(vp);
    KT_ASSERT(taken.pages > 0);
    KT_ASSERT_EQ(w, 0);
    KT_ASSERT_EQ(c, 0);
    KT_ASSERT(after - before >= PRESSURE_MORE / PAGE_SIZE);
    return 0;
}

/* Run body on a fresh S5 file system on the reclaim RAM disk, under
 * cache=ssac only: seconds of emulated I/O, so once per machine in make
 * check (the ktest jobs' ssac variant), since reclaim is the same under
 * every model (reclaim_clean runs under all of them). */
static int on_pressure_disk(int (*body)(struct s5t *))
{
    if (opts.cache != CACHE_SSAC)
        KT_SKIP("runs under cache=ssac only (seconds of I/O; reclaim is model-blind)");
    struct s5t t;
    struct blkdev *dev = blk_find("reclaimram");
    if (!dev)
        dev = ramdisk_create("reclaimram", PRESSURE_DISK, 512);
    KT_ASSERT(dev != NULL);
    KT_ASSERT_EQ(s5_mkfs(dev, PRESSURE_DISK * 1000, 32), 0);
    KT_ASSERT_EQ(t_mount(&t, dev), 0);
    int r = body(&t);
    KT_ASSERT_EQ(t_finish(&t, NULL), 0);
    return r;
}

KTEST(reclaim_pressure)
{
    return on_pressure_disk(pressure_body);
}

/* ---- reclaim_mapped ---- */

#define MAPPED_VA 0x10000000UL
#define STORE_EVERY 8

/* Read the file through as's mapping a page at a time: the pattern f,
 * with the page number stored at the start of every STORE_EVERY-th page
 * (stored on the first pass, checked on the second).  0 or the first bad
 * offset plus one. */
static uint64_t mapped_pass(struct as *as, uint64_t size, uint8_t *buf, bool store)
{
    curthread()->as = as;
    as_activate(as);
    uint64_t bad = 0;
    for (uint64_t off = 0; off < size && !bad; off += PAGE_SIZE) {
        uint64_t pg = off / PAGE_SIZE;
        bool marked = pg % STORE_EVERY == 0;
        if (store && marked && copyout(&pg, (void *)(MAPPED_VA + off), 8)) {
            bad = off + 1;
            break;
        }
        if (copyin((void *)(MAPPED_VA + off), buf, PAGE_SIZE)) {
            bad = off + 1;
            break;
        }
        size_t from = 0;
        if (marked) {
            uint64_t got;
            memcpy(&got, buf, 8);
            if (got != pg)
                bad = off + 1;
            from = 8;
        }
        for (size_t i = from; i < PAGE_SIZE && !bad; i++)
            if (buf[i] != t_pat(off + i, 6))
                bad = off + i + 1;
    }
    curthread()->as = NULL;
    as_activate(NULL);
    return bad;
}

static int mapped_body(struct s5t *t)
{
    struct vnode *vp;
    KT_ASSERT_EQ(t_create(t->root, "mapped", &vp), 0);
    uint64_t left = 0;
    for (int n = 0; n < numa_nnodes; n++)
        left += left_on(n) * PAGE_SIZE;
    uint64_t size = ALIGN_UP(left + PRESSURE_MORE, PAGE_SIZE);
    KT_ASSERT(size <= (PRESSURE_DISK - 2) * (1UL << 20));
    KT_ASSERT_EQ(t_write_pat(vp, 0, size, 6, 8192), 0);
    KT_ASSERT_EQ(pcache_flush(vp, 0, ~0UL), 0);
    /* Nothing cached to fall back on: the file's pages, every clean file
     * page and the buffers' spare pages go first, and take_memory takes
     * the memory they leave. */
    segmap_purge(vp, 0);
    reclaim_all();
    buf_shrink(~0UL);
    struct as *as = as_create();
    uint8_t *buf = kmalloc(PAGE_SIZE);
    KT_ASSERT(as && buf);
    KT_ASSERT_EQ(as_map(as, MAPPED_VA, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                        vp, 0, 0), MAPPED_VA);
    uint64_t before = pcache_reclaim_mapped_count();
    struct taken taken = { 0 };
    take_memory(&taken);
    uint64_t bad1 = mapped_pass(as, size, buf, true);
    uint64_t bad2 = bad1 ? 0 : mapped_pass(as, size, buf, false);
    give_back(&taken);
    uint64_t unmapped = pcache_reclaim_mapped_count() - before;
    as_destroy(as);
    kfree(buf);
    VN_RELE(vp);
    KT_ASSERT(taken.pages > 0);
    KT_ASSERT_EQ(bad1, 0);
    KT_ASSERT_EQ(bad2, 0);
    KT_ASSERT(unmapped >= PRESSURE_MORE / PAGE_SIZE);
    return 0;
}

KTEST(reclaim_mapped)
{
    return on_pressure_disk(mapped_body);
}
