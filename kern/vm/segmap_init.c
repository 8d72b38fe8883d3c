/*
 * Segmap's boot and statistics: how many windows, their rows and free
 * lists, and the locks of the cache= model (theory in kern/vm/segmap.c).
 *
 * Sizes.  One window per 32 pages of memory, 256 to 4096 windows (8 MiB
 * of windows on a 256 MiB machine, about what SVR4 gave segkmap), and a
 * hash row per SM_SSAC_WAYS windows, so chains average 4 windows (the
 * paper's traditional length) and, under ssac, each row owns exactly 4.
 * The row count is a power of two (cache_hash keeps the top bits of a
 * multiplicative hash, so strided names still spread).
 */
#include <kern/vm/segmap.h>
#include <kern/vm/segmap_impl.h>
#include <kern/vm/page.h>
#include <kern/vm/kmem.h>
#include <kern/arch/numa.h>
#include <kern/arch/panic.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/options.h>

LOCK_CLASS(segmap_single_class, "segmap_single", LK_SPIN);
LOCK_CLASS(segmap_hash_class, "segmap_hash", LK_SPIN);
LOCK_CLASS(segmap_free_class, "segmap_free", LK_SPIN);
LOCK_CLASS(segmap_elem_class, "segmap_elem", LK_SPIN);
LOCK_CLASS(segmap_row_class, "segmap_row", LK_SPIN);

#define SM_MIN_WINDOWS 256
#define SM_MAX_WINDOWS 4096
#define SM_PAGES_PER_WINDOW 32

struct segmap sm_cache;
static spinlock_t single_lock;

static unsigned window_count(void)
{
    uint64_t pages = 0;
    for (int n = 0; n < numa_nnodes; n++)
        pages += page_total_count(n);
    uint64_t w = pages / SM_PAGES_PER_WINDOW;
    w = MAX(w, (uint64_t)SM_MIN_WINDOWS);
    w = MIN(w, (uint64_t)SM_MAX_WINDOWS);
    return (unsigned)w;
}

static void *alloc_or_panic(size_t size, const char *what)
{
    void *p = kzalloc(size);
    if (!p)
        panic("segmap_init: no memory for the %s", what);
    return p;
}

/* The locks each role points at under the running model. */
static void set_row_locks(void)
{
    for (unsigned r = 0; r < sm_cache.nrows; r++) {
        struct smrow *row = &sm_cache.rows[r];
        if (sm_cache.model == CACHE_SINGLE) {
            row->lock = &single_lock;
            continue;
        }
        bool ssac = sm_cache.model == CACHE_SSAC;
        spin_init_named(&row->own, ssac ? &segmap_row_class : &segmap_hash_class,
                        ssac ? "segmap_row" : "segmap_hash");
        row->lock = &row->own;
    }
}

static void set_list_locks(void)
{
    for (unsigned i = 0; i < sm_cache.nlists; i++) {
        struct smlist *l = &sm_cache.lists[i];
        if (sm_cache.model == CACHE_SINGLE) {
            l->lock = &single_lock;
        } else if (sm_cache.model == CACHE_SSAC) {
            l->lock = sm_cache.rows[i].lock;
        } else {
            spin_init_named(&l->own, &segmap_free_class, "segmap_free");
            l->lock = &l->own;
        }
    }
}

/* Window i: bound to its list (ssac: row i / ways), closed and free. */
static void init_window(unsigned i)
{
    struct smap *sm = &sm_cache.win[i];
    sm->sm_row = SM_NO_ROW;
    sm->sm_list = sm_cache.model == CACHE_SSAC ? i / SM_SSAC_WAYS : 0;
    struct smlist *l = &sm_cache.lists[sm->sm_list];
    if (sm_cache.model == CACHE_HASHFREE) {
        spin_init_named(&sm->own, &segmap_elem_class, "segmap_elem");
        sm->sm_lock = &sm->own;
    } else {
        sm->sm_lock = l->lock;
    }
    sm_free_insert(l, sm);
}

void segmap_init(void)
{
    sm_cache.model = opts.cache;
    sm_cache.rowbits = cache_log2_ceil(window_count() / SM_SSAC_WAYS);
    sm_cache.nrows = 1u << sm_cache.rowbits;
    sm_cache.nwin = sm_cache.nrows * SM_SSAC_WAYS;
    sm_cache.nlists = sm_cache.model == CACHE_SSAC ? sm_cache.nrows : 1;
    sm_cache.win = alloc_or_panic(sizeof(struct smap) * sm_cache.nwin, "windows");
    sm_cache.rows = alloc_or_panic(sizeof(struct smrow) * sm_cache.nrows, "rows");
    sm_cache.lists = alloc_or_panic(sizeof(struct smlist) * sm_cache.nlists, "free lists");
    spin_init_named(&single_lock, &segmap_single_class, "segmap_single");
    set_row_locks();
    set_list_locks();
    for (unsigned i = 0; i < sm_cache.nwin; i++)
        init_window(i);
    kprintf("segmap: %u windows, %u rows, %u free lists (cache=%s)\n", sm_cache.nwin,
            sm_cache.nrows, sm_cache.nlists, cache_model_name(sm_cache.model));
}

void segmap_get_stats(struct segmap_stats *st)
{
    st->hits = pcpu_sum(sm_cache.stats, SMS_HIT);
    st->misses = pcpu_sum(sm_cache.stats, SMS_MISS);
    st->waits = pcpu_sum(sm_cache.stats, SMS_WAIT);
    st->purged = pcpu_sum(sm_cache.stats, SMS_PURGED);
    st->windows = sm_cache.nwin;
    int64_t open = __atomic_load_n(&sm_cache.open, __ATOMIC_RELAXED);
    st->open = open > 0 ? (uint64_t)open : 0;
}

void segmap_test_geometry(int *nwin, int *nrows, int *nlists, int *per_list)
{
    *nwin = (int)sm_cache.nwin;
    *nrows = (int)sm_cache.nrows;
    *nlists = (int)sm_cache.nlists;
    *per_list = sm_cache.nlists ? (int)(sm_cache.nwin / sm_cache.nlists) : 0;
}

unsigned segmap_test_list_of(struct vnode *vp, uint64_t idx)
{
    unsigned row = sm_hash_row(vp, idx);
    return sm_cache.model == CACHE_SSAC ? row : 0;
}
