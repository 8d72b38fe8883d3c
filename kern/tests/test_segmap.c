/*
 * ktests for segmap (kern/vm/segmap.c), under whichever cache= model and
 * lock= algorithm the boot chose (make check runs them under all nine
 * pairings: fs/matrix and the ktest jobs), on a fresh S5 file system on
 * the tests' RAM disk:
 *
 *   segmap_basic    a window shows the file's page; a second getmap of it
 *                   is a hit and shares the window (a reference, not a
 *                   busy mark); a store released SM_DIRTY reaches the
 *                   file at pcache_flush; past the end is -ENXIO; a
 *                   truncation closes the windows past the new end, and
 *                   the file's last release closes the rest
 *   segmap_lru      the least recently used free window of a list is the
 *                   one reused: under ssac a row's 4 windows (a fifth
 *                   page of the row evicts the oldest, the others stay
 *                   hits); under single and hashfree the one list
 *   segmap_wait     ssac: with every window of a row held, a miss in that
 *                   row sleeps until one is released (no busy-waiting, no
 *                   failure); skipped under the one-list models
 *   segmap_mp       a thread per CPU maps every page of one file over and
 *                   over, stores its own slot and reads the others' back,
 *                   all at once; every getmap counted as a hit or a miss;
 *                   the file ends with every thread's last values
 */
#include <kern/tests/ktest.h>
#include <kern/tests/s5t.h>
#include <kern/vm/segmap.h>
#include <kern/vm/pcache.h>
#include <kern/vm/page.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/sched/thread.h>
#include <kern/arch/cpu.h>
#include <kern/lib/string.h>
#include <kern/lib/options.h>
#include <kern/vm/kmem.h>
#include <drivers/platform/timer.h>

/* A file of npages pages, byte i holding 'a' + i % 26 ^ page number. */
static int make_file(struct s5t *t, const char *name, int npages, struct vnode **vpp)
{
    int err = t_create(t->root, name, vpp);
    if (err)
        return err;
    char *buf = kmalloc(PAGE_SIZE);
    if (!buf)
        return -ENOMEM;
    for (int p = 0; p < npages && !err; p++) {
        for (size_t i = 0; i < PAGE_SIZE; i++)
            buf[i] = (char)(('a' + i % 26) ^ p);
        size_t done;
        err = t_io(*vpp, true, buf, PAGE_SIZE, (uint64_t)p * PAGE_SIZE, 0, &done);
        if (!err && done != PAGE_SIZE)
            err = -EIO;
    }
    kfree(buf);
    return err;
}

static char expect(int page, size_t i)
{
    return (char)(('a' + i % 26) ^ page);
}

/* Read len bytes at off past the page cache (what the file holds). */
static int read_raw(struct vnode *vp, void *buf, size_t len, uint64_t off)
{
    struct uio u = { .uio_base = buf, .uio_resid = len, .uio_offset = off };
    int err = VOP_READ_RAW(vp, &u, 0, kcred);
    return err ? err : (int)(len - u.uio_resid);
}

static struct segmap_stats stats(void)
{
    struct segmap_stats s;
    segmap_get_stats(&s);
    return s;
}

static int basic_body(struct s5t *t, uint64_t *open_after)
{
    struct vnode *vp;
    KT_ASSERT_EQ(make_file(t, "basic", 3, &vp), 0);
    KT_ASSERT_EQ(pcache_flush(vp, 0, ~0UL), 0);    /* the file now holds the pattern */
    segmap_purge(vp, 0);        /* the writes left windows open onto the pages */
    struct segmap_stats s0 = stats();
    struct smap *a, *b;
    char *wa, *wb;
    KT_ASSERT_EQ(segmap_getmap(vp, 1, &a, &wa), 0);
    KT_ASSERT_EQ(stats().misses, s0.misses + 1);
    KT_ASSERT_EQ(wa[0], expect(1, 0));
    KT_ASSERT_EQ(wa[PAGE_SIZE - 1], expect(1, PAGE_SIZE - 1));
    /* A second holder shares the window: a hit, the same page. */
    KT_ASSERT_EQ(segmap_getmap(vp, 1, &b, &wb), 0);
    KT_ASSERT(a == b && wa == wb);
    KT_ASSERT_EQ(stats().hits, s0.hits + 1);
    KT_ASSERT(segmap_page(a) == pcache_lookup(vp, 1));
    page_rele(segmap_page(a));
    wa[5] = '#';
    segmap_release(a, SM_DIRTY);
    segmap_release(b, 0);
    /* Released, still open: the next getmap is a hit. */
    KT_ASSERT_EQ(segmap_getmap(vp, 1, &a, &wa), 0);
    KT_ASSERT_EQ(stats().hits, s0.hits + 2);
    KT_ASSERT_EQ(wa[5], '#');
    segmap_release(a, 0);
    char c = 0;
    KT_ASSERT_EQ(read_raw(vp, &c, 1, PAGE_SIZE + 5), 1);
    KT_ASSERT_EQ(c, expect(1, 5));          /* not yet written back */
    KT_ASSERT_EQ(pcache_flush(vp, 0, ~0UL), 0);
    KT_ASSERT_EQ(read_raw(vp, &c, 1, PAGE_SIZE + 5), 1);
    KT_ASSERT_EQ(c, '#');
    KT_ASSERT_EQ(segmap_getmap(vp, 3, &a, &wa), -ENXIO);
    KT_ASSERT(a == NULL);
    /* Truncation to one page closes the windows onto pages 1 and 2. */
    KT_ASSERT_EQ(segmap_getmap(vp, 2, &a, &wa), 0);
    segmap_release(a, 0);
    uint64_t open_before = stats().open;
    KT_ASSERT_EQ(VOP_TRUNCATE(vp, PAGE_SIZE, kcred), 0);
    KT_ASSERT_EQ(stats().open, open_before - 2);
    KT_ASSERT_EQ(segmap_getmap(vp, 1, &a, &wa), -ENXIO);
    KT_ASSERT_EQ(segmap_getmap(vp, 0, &a, &wa), 0);
    KT_ASSERT_EQ(wa[0], expect(0, 0));
    segmap_release(a, 0);
    VN_RELE(vp);
    *open_after = open_before - 2;      /* page 0's window is opened since */
    return 0;
}

KTEST(segmap_basic)
{
    struct s5t t;
    KT_ASSERT_EQ(t_fresh(&t, 1024, 32), 0);
    uint64_t open_after = 0;
    int r = basic_body(&t, &open_after);
    KT_ASSERT_EQ(t_finish(&t, NULL), 0);
    /* The unmount drops the pages of the file, inactive since the DNLC
     * let it go (kern/vfs/icache.c, icache_evict): that closes the rest. */
    KT_ASSERT(r != 0 || stats().open == open_after);
    return r;
}

/* Up to want page numbers < limit whose windows come from list. */
static int pages_of_list(struct vnode *vp, unsigned list, int limit, uint64_t *out, int want)
{
    int n = 0;
    for (int i = 0; i < limit && n < want; i++)
        if (segmap_test_list_of(vp, i) == list)
            out[n++] = i;
    return n;
}

static int getmap_release(struct vnode *vp, uint64_t idx)
{
    struct smap *sm;
    char *w;
    int err = segmap_getmap(vp, idx, &sm, &w);
    if (!err)
        segmap_release(sm, 0);
    return err;
}

#define LRU_FILE_PAGES 65536     /* a sparse 256 MiB: holes cost no blocks */

/* After four pages of one list were mapped in turn, the oldest (idx[0])
 * is touched again, so idx[1] becomes the least recently used: a fifth
 * page evicts it, the others stay hits, and idx[1] comes back a miss. */
#define LRU_STEPS 6
static const int lru_order[LRU_STEPS] = { 0, 4, 0, 2, 3, 1 };
static const int lru_expect[LRU_STEPS] = { 1, 0, 1, 1, 1, 0 };   /* 1: a hit */

/* The sequence, each getmap's hit (1) or miss (0) in hit. */
static int lru_sequence(struct vnode *vp, const uint64_t idx[5], int hit[LRU_STEPS])
{
    for (int i = 0; i < LRU_STEPS; i++) {
        uint64_t hits = stats().hits;
        int err = getmap_release(vp, idx[lru_order[i]]);
        if (err)
            return err;
        hit[i] = stats().hits != hits;
    }
    return 0;
}

static int lru_body(struct s5t *t)
{
    int nwin, nrows, nlists, per;
    segmap_test_geometry(&nwin, &nrows, &nlists, &per);
    KT_ASSERT(nwin > 0 && nwin == nrows * 4);
    KT_ASSERT_EQ(nlists, opts.cache == CACHE_SSAC ? nrows : 1);
    KT_ASSERT_EQ(per, opts.cache == CACHE_SSAC ? 4 : nwin);
    if (opts.cache != CACHE_SSAC)
        return 0;               /* one list of every window: the pages would not fit the disk */
    struct vnode *vp;
    KT_ASSERT_EQ(t_create(t->root, "lru", &vp), 0);
    uint64_t idx[5];
    /* A sparse file: holes read as zeros, so any page below the size works. */
    KT_ASSERT_EQ(VOP_TRUNCATE(vp, (uint64_t)LRU_FILE_PAGES * PAGE_SIZE, kcred), 0);
    unsigned list = segmap_test_list_of(vp, 0);
    KT_ASSERT_EQ(pages_of_list(vp, list, LRU_FILE_PAGES, idx, 5), 5);
    struct segmap_stats s0 = stats();
    int err = 0;
    for (int i = 0; i < 4 && !err; i++)
        err = getmap_release(vp, idx[i]);
    int hit[LRU_STEPS];
    if (!err)
        err = lru_sequence(vp, idx, hit);
    struct segmap_stats s1 = stats();
    VN_RELE(vp);
    KT_ASSERT_EQ(err, 0);
    /* Windows are shared by the whole machine: another getmap into this
     * list (a pageout daemon's write-back on a loaded 16-CPU run), or a
     * purge, changes which window is oldest.  Then the order proves
     * nothing either way. */
    uint64_t others = (s1.hits + s1.misses) - (s0.hits + s0.misses) - 4 - LRU_STEPS +
                      (s1.purged - s0.purged);
    if (others)
        KT_SKIP("%lu getmaps or purges from elsewhere during the sequence", others);
    for (int i = 0; i < LRU_STEPS; i++)
        KT_ASSERT_EQ(hit[i], lru_expect[i]);
    return 0;
}

KTEST(segmap_lru)
{
    return t_on_fresh(1024, 32, lru_body);
}

struct wait_arg {
    struct vnode *vp;
    uint64_t idx;
    volatile int done;
    int err;
};

static void waiter(void *p)
{
    struct wait_arg *a = p;
    a->err = getmap_release(a->vp, a->idx);
    __atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
}

static int wait_body(struct s5t *t)
{
    struct vnode *vp;
    KT_ASSERT_EQ(t_create(t->root, "wait", &vp), 0);
    KT_ASSERT_EQ(VOP_TRUNCATE(vp, (uint64_t)LRU_FILE_PAGES * PAGE_SIZE, kcred), 0);
    uint64_t idx[5];
    KT_ASSERT_EQ(pages_of_list(vp, segmap_test_list_of(vp, 0), LRU_FILE_PAGES, idx, 5), 5);
    struct smap *held[4];
    char *w;
    for (int i = 0; i < 4; i++)
        KT_ASSERT_EQ(segmap_getmap(vp, idx[i], &held[i], &w), 0);
    static struct wait_arg a;
    a = (struct wait_arg){ .vp = vp, .idx = idx[4] };
    uint64_t waits = stats().waits;
    struct thread *th = thread_create("segmap_wait", waiter, &a, 1UL << cpu_id());
    KT_ASSERT(th != NULL);
    /* Let it run into the full row (it sleeps; we keep the windows).  A
     * bound against a hang, not a speed limit. */
    uint64_t give_up = uptime_ns() + 20 * 1000000000UL;
    while (stats().waits == waits && uptime_ns() < give_up)
        thread_yield();
    KT_ASSERT_EQ(stats().waits, waits + 1);
    KT_ASSERT_EQ(a.done, 0);
    segmap_release(held[2], 0);
    thread_join(th);
    KT_ASSERT_EQ(a.done, 1);
    KT_ASSERT_EQ(a.err, 0);
    segmap_release(held[0], 0);
    segmap_release(held[1], 0);
    segmap_release(held[3], 0);
    VN_RELE(vp);
    return 0;
}

KTEST(segmap_wait)
{
    if (opts.cache != CACHE_SSAC)
        KT_SKIP("only ssac has free lists of 4 windows");
    return t_on_fresh(1024, 32, wait_body);
}

#define MP_PAGES  12
#define MP_ROUNDS 64

struct mp_arg {
    struct vnode *vp;
    int id, nthreads;
    int error;
    const char *what;
};

/* One round of thread a over every page: store its slot, check that each
 * other slot holds a value its owner could have stored. */
static void mp_round(struct mp_arg *a, uint64_t round)
{
    for (int pg = 0; pg < MP_PAGES && !a->error; pg++) {
        struct smap *sm;
        char *w;
        int err = segmap_getmap(a->vp, pg, &sm, &w);
        if (err) {
            a->error = err;
            a->what = "getmap";
            return;
        }
        uint64_t *slots = (uint64_t *)w;
        __atomic_store_n(&slots[a->id], ((uint64_t)a->id << 32) | round, __ATOMIC_RELAXED);
        for (int j = 0; j < a->nthreads; j++) {
            uint64_t v = __atomic_load_n(&slots[j], __ATOMIC_RELAXED);
            if (v != 0 && (v >> 32) != (uint64_t)j) {
                a->error = -EILSEQ;
                a->what = "a slot holds another thread's value";
            }
        }
        segmap_release(sm, SM_DIRTY);
    }
}

static void mp_body(void *p)
{
    struct mp_arg *a = p;
    for (uint64_t round = 1; round <= MP_ROUNDS && !a->error; round++) {
        mp_round(a, round);
        if (round % 16 == 0)
            thread_yield();
    }
}

static int mp_check_file(struct vnode *vp, int n)
{
    KT_ASSERT_EQ(pcache_flush(vp, 0, ~0UL), 0);
    for (int pg = 0; pg < MP_PAGES; pg++) {
        for (int i = 0; i < n; i++) {
            uint64_t v = 0;
            KT_ASSERT_EQ(read_raw(vp, &v, 8, (uint64_t)pg * PAGE_SIZE + i * 8), 8);
            KT_ASSERT_EQ(v, ((uint64_t)i << 32) | MP_ROUNDS);
        }
    }
    return 0;
}

KTEST(segmap_mp)
{
    static struct mp_arg args[MAX_CPUS];
    static struct thread *th[MAX_CPUS];
    struct s5t t;
    KT_ASSERT_EQ(t_fresh(&t, 1024, 32), 0);
    struct vnode *vp;
    KT_ASSERT_EQ(t_create(t.root, "mp", &vp), 0);
    KT_ASSERT_EQ(VOP_TRUNCATE(vp, (uint64_t)MP_PAGES * PAGE_SIZE, kcred), 0);
    int n = MAX(2, ncpus_online);
    struct segmap_stats s0 = stats();
    for (int i = 0; i < n; i++) {
        args[i] = (struct mp_arg){ .vp = vp, .id = i, .nthreads = n };
        th[i] = thread_create("segmap_mp", mp_body, &args[i], 1UL << (i % ncpus_online));
    }
    for (int i = 0; i < n; i++)
        if (th[i])
            thread_join(th[i]);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        if (!th[i] || args[i].error) {
            ktest_fail("thread %d: %s: error %d", i, th[i] ? args[i].what : "no thread",
                       args[i].error);
            bad = 1;
        }
    }
    struct segmap_stats s1 = stats();
    uint64_t ops = (uint64_t)n * MP_ROUNDS * MP_PAGES;
    int r = bad ? 1 : mp_check_file(vp, n);
    VN_RELE(vp);
    KT_ASSERT_EQ(t_finish(&t, NULL), 0);
    KT_ASSERT(!bad && r == 0);
    /* Other threads may use segmap meanwhile: at least ours are counted. */
    KT_ASSERT((s1.hits - s0.hits) + (s1.misses - s0.misses) >= ops);
    KT_ASSERT(s1.misses - s0.misses >= MP_PAGES);
    return 0;
}
