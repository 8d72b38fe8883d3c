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
 *                     awake), a 20 MiB file, larger than all that is
 *                     left, is written and read back intact (pattern
 *                     checked) on a RAM disk of its own: the writer
 *                     writes its own pages back and frees them, the
 *                     readers free clean ones
 */
#include <kern/tests/ktest.h>
#include <kern/tests/s5t.h>
#include <kern/vm/pcache.h>
#include <kern/vm/segmap.h>
#include <kern/vm/page.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/arch/numa.h>
#include <kern/s5/s5.h>
#include <drivers/block/bio.h>

#define CLEAN_BYTES (64 * PAGE_SIZE)

/* Reclaim until vp has no page left, at most a few sweeps. */
static void reclaim_all(void)
{
    for (int i = 0; i < 4; i++)
        pcache_reclaim(-1, ~0UL);
}

static int clean_body(struct s5t *t)
{
    struct vnode *vp;
    KT_ASSERT_EQ(t_create(t->root, "clean", &vp), 0);
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
    VN_RELE(vp);
    return 0;
}

KTEST(reclaim_clean)
{
    struct s5t t;
    KT_ASSERT_EQ(t_fresh(&t, 1024, 32), 0);
    int r = clean_body(&t);
    KT_ASSERT_EQ(t_finish(&t, NULL), 0);
    return r;
}

#define PRESSURE_LEFT   (2UL << 20)     /* bytes left free in all (below the low-water marks) */
#define PRESSURE_DISK   24              /* MiB: the test's own RAM disk */
#define PRESSURE_FILE   (20UL << 20)    /* the file: more than all that is left */
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

/* Take pages of every node until each has left_on(n) free (the
 * pageout daemons are awake); they are chained through page->next.
 * Returns the chain. */
static struct page *take_memory(uint64_t *taken)
{
    struct page *chain = NULL;
    *taken = 0;
    for (int n = 0; n < numa_nnodes; n++) {
        uint64_t keep = left_on(n);
        while (page_free_count(n) > keep) {
            struct page *pg = page_alloc_node(0, n);
            if (!pg)
                break;
            pg->next = chain;
            chain = pg;
            (*taken)++;
        }
    }
    return chain;
}

static void give_back(struct page *chain)
{
    while (chain) {
        struct page *next = chain->next;
        page_free(chain, 0);
        chain = next;
    }
}

static int pressure_body(struct s5t *t)
{
    struct vnode *vp;
    KT_ASSERT_EQ(t_create(t->root, "big", &vp), 0);
    uint64_t before, runs;
    pcache_reclaim_stats(&before, &runs);
    uint64_t taken;
    struct page *chain = take_memory(&taken);
    int w = t_write_pat(vp, 0, PRESSURE_FILE, 5, 8192);
    int c = w ? w : t_check_pat(vp, 0, PRESSURE_FILE, 5, 8192);
    give_back(chain);
    uint64_t after;
    pcache_reclaim_stats(&after, &runs);
    VN_RELE(vp);
    KT_ASSERT(taken > 0);
    KT_ASSERT_EQ(w, 0);
    KT_ASSERT_EQ(c, 0);
    uint64_t left = 0;
    for (int n = 0; n < numa_nnodes; n++)
        left += left_on(n) * PAGE_SIZE;
    KT_ASSERT(left < PRESSURE_FILE);
    KT_ASSERT(after - before >= (PRESSURE_FILE - left) / PAGE_SIZE);
    return 0;
}

KTEST(reclaim_pressure)
{
    struct s5t t;
    struct blkdev *dev = blk_find("reclaimram");
    if (!dev)
        dev = ramdisk_create("reclaimram", PRESSURE_DISK, 512);
    KT_ASSERT(dev != NULL);
    KT_ASSERT_EQ(s5_mkfs(dev, PRESSURE_DISK * 1000, 32), 0);
    KT_ASSERT_EQ(t_mount(&t, dev), 0);
    int r = pressure_body(&t);
    KT_ASSERT_EQ(t_finish(&t, NULL), 0);
    return r;
}
