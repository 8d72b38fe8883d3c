/*
 * ktests for the page cache's fills (kern/vm/pcache.c: fills hold the
 * file's fill lock shared, and a record of each fill on its page's row
 * makes one page read once), on a fresh S5 file system on the tests' RAM
 * disk:
 *
 *   pcache_fill_once      a thread per CPU asks for the same page of a
 *                         file with no cached page, all at once, many
 *                         rounds (the page dropped between them): every
 *                         thread gets the one page, with the file's
 *                         bytes, and the file has one cached page (a
 *                         second fill of it would have entered two)
 *   pcache_fill_parallel  a thread per CPU asks for every page of such a
 *                         file, each starting at its own page, all at
 *                         once: every page cached once, with its bytes
 */
#include <kern/tests/ktest.h>
#include <kern/tests/s5t.h>
#include <kern/vm/pcache.h>
#include <kern/vm/segmap.h>
#include <kern/vm/page.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/sched/thread.h>
#include <kern/arch/cpu.h>
#include <kern/lib/string.h>

#define FILL_PAGES  24
#define FILL_ROUNDS 8
#define FILL_CHUNK  3000

struct fill_arg {
    struct vnode *vp;
    int id, nthreads;
    uint64_t first, count;      /* pages asked for, from first, wrapping */
    struct page *got[FILL_PAGES];
    int error;
};

static void fill_body(void *p)
{
    struct fill_arg *a = p;
    for (uint64_t k = 0; k < a->count && !a->error; k++) {
        uint64_t idx = (a->first + k) % FILL_PAGES;
        a->error = pcache_get(a->vp, idx, &a->got[idx]);
    }
}

/* Drop every (clean) page of vp, so the next gets fill. */
static int drop_pages(struct vnode *vp)
{
    segmap_purge(vp, 0);                    /* windows hold their pages */
    for (int i = 0; i < 4 && vp->v_npages; i++)
        pcache_reclaim(-1, ~0UL);
    return vp->v_npages == 0 ? 0 : -EBUSY;
}

/* Run fill_body on a thread per CPU (at most MAX_CPUS), each asking for
 * count pages from first + id * step; 0, or the first error. */
static int run_threads(struct fill_arg *args, struct vnode *vp, uint64_t first, uint64_t step,
                       uint64_t count)
{
    static struct thread *th[MAX_CPUS];
    int n = ncpus_online;
    for (int i = 0; i < n; i++) {
        memset(&args[i], 0, sizeof args[i]);
        args[i] = (struct fill_arg){ .vp = vp, .id = i, .nthreads = n,
                                     .first = first + (uint64_t)i * step, .count = count };
        th[i] = thread_create("pcfill", fill_body, &args[i], 1UL << i);
    }
    int err = 0;
    for (int i = 0; i < n; i++) {
        if (!th[i]) {
            err = err ? err : -ENOMEM;
            continue;
        }
        thread_join(th[i]);
        err = err ? err : args[i].error;
    }
    return err;
}

/* Does page idx (as got) hold the file's bytes, read past the cache? */
static bool page_right(struct vnode *vp, struct page *pg, uint64_t idx)
{
    static char want[PAGE_SIZE];
    struct uio u = { .uio_base = want, .uio_resid = PAGE_SIZE, .uio_offset = idx * PAGE_SIZE };
    if (!pg || VOP_READ_RAW(vp, &u, 0, kcred) || u.uio_resid)
        return false;
    return memcmp(page_to_virt(pg), want, PAGE_SIZE) == 0;
}

static void release_all(struct fill_arg *args, int n)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < FILL_PAGES; k++)
            if (args[i].got[k]) {
                page_rele(args[i].got[k]);
                args[i].got[k] = NULL;
            }
}

static int once_body(struct s5t *t)
{
    static struct fill_arg args[MAX_CPUS];
    struct vnode *vp;
    int n = ncpus_online;
    KT_ASSERT_EQ(t_create(t->root, "once", &vp), 0);
    KT_ASSERT_EQ(t_write_pat(vp, 0, FILL_PAGES * PAGE_SIZE, 5, FILL_CHUNK), 0);
    KT_ASSERT_EQ(pcache_flush(vp, 0, ~0UL), 0);
    int bad = 0;
    for (int round = 0; round < FILL_ROUNDS && !bad; round++) {
        uint64_t idx = (uint64_t)(round * 5) % FILL_PAGES;
        KT_ASSERT_EQ(drop_pages(vp), 0);
        KT_ASSERT_EQ(run_threads(args, vp, idx, 0, 1), 0);
        for (int i = 0; i < n; i++)
            bad |= args[i].got[idx] != args[0].got[idx];
        bad |= vp->v_npages != 1;
        bad |= pcache_lookup(vp, idx) != args[0].got[idx] ? 2 : 0;
        if (args[0].got[idx])
            page_rele(args[0].got[idx]);        /* pcache_lookup's */
        bad |= !page_right(vp, args[0].got[idx], idx) ? 4 : 0;
        if (bad)
            ktest_fail("round %d (page %lu): %d fills' results differ, %u pages cached",
                       round, (unsigned long)idx, bad, vp->v_npages);
        release_all(args, n);
    }
    VN_RELE(vp);
    KT_ASSERT(!bad);
    return 0;
}

KTEST(pcache_fill_once)
{
    return t_on_fresh(1024, 32, once_body);
}

static int parallel_body(struct s5t *t)
{
    static struct fill_arg args[MAX_CPUS];
    struct vnode *vp;
    int n = ncpus_online;
    KT_ASSERT_EQ(t_create(t->root, "parallel", &vp), 0);
    KT_ASSERT_EQ(t_write_pat(vp, 0, FILL_PAGES * PAGE_SIZE, 6, FILL_CHUNK), 0);
    KT_ASSERT_EQ(pcache_flush(vp, 0, ~0UL), 0);
    KT_ASSERT_EQ(drop_pages(vp), 0);
    KT_ASSERT_EQ(run_threads(args, vp, 0, FILL_PAGES / (uint64_t)MAX(n, 1) + 1, FILL_PAGES), 0);
    KT_ASSERT_EQ(vp->v_npages, FILL_PAGES);
    int bad = 0;
    for (uint64_t k = 0; k < FILL_PAGES; k++) {
        for (int i = 1; i < n; i++)
            bad += args[i].got[k] != args[0].got[k];
        bad += !page_right(vp, args[0].got[k], k);
    }
    release_all(args, n);
    VN_RELE(vp);
    KT_ASSERT_EQ(bad, 0);
    return 0;
}

KTEST(pcache_fill_parallel)
{
    return t_on_fresh(1024, 32, parallel_body);
}
