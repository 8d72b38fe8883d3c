/*
 * The buffer cache's boot and statistics (the cache itself, and its
 * theory, are kern/vfs/buf.c).
 *
 * binit sizes the cache (about 1/64 of memory unless told), gives every
 * buffer a page of data spread over the NUMA nodes, and builds the hash
 * rows, free lists and locks of the model cache= chose: under single one
 * lock for everything, under hashfree a lock per row, one for the free
 * list and one per buffer, under ssac the rows bound to groups of about
 * BUF_PER_GROUP buffers, each group with one lock and its own free list.
 * It runs on one CPU before the cache is used (or, in the ktests, when
 * nothing else uses it), so it takes no lock; everything it sets is [c]
 * afterwards.  The statistics are per-CPU counters summed when read.
 */
#include <kern/vfs/buf.h>
#include <kern/vfs/buf_impl.h>
#include <kern/vm/kmem.h>
#include <kern/vm/page.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/options.h>
#include <kern/arch/panic.h>
#include <kern/arch/numa.h>

LOCK_CLASS(buf_single_class, "buf_single", LK_SPIN);
LOCK_CLASS(buf_hash_class, "buf_hash", LK_SPIN);
LOCK_CLASS(buf_free_class, "buf_free", LK_SPIN);
LOCK_CLASS(buf_elem_class, "buf_elem", LK_SPIN);
LOCK_CLASS(buf_group_class, "buf_group", LK_SPIN);

#define BUF_PER_ROW 4           /* average chain length aimed at */
#define BUF_PER_GROUP 64        /* ssac: buffers sharing one free list */
#define NBUF_MIN 512
#define NBUF_MAX 2048

/* ---- statistics ---- */

void buf_stats_get(struct buf_stats *out)
{
    out->lookups = pcpu_sum(bc.stats, ST_LOOKUPS);
    out->hits = pcpu_sum(bc.stats, ST_HITS);
    out->misses = pcpu_sum(bc.stats, ST_MISSES);
    out->writes = pcpu_sum(bc.stats, ST_WRITES);
    out->waits = pcpu_sum(bc.stats, ST_WAITS);
}

int buf_count(void)
{
    return bc.nbuf;
}

void buf_test_geometry(int *nbuf, int *nrows, int *ngroups)
{
    *nbuf = bc.nbuf;
    *nrows = (int)bc.nrows;
    *ngroups = (int)bc.ngroups;
}

/* ---- boot ---- */

/* About 1/64 of memory: 4 buffers (16 KiB) per MiB, the memory size first
 * rounded to the nearest power of two (firmware keeps a little of it), so
 * the geometry comes out even: 256 MiB gives 1024 buffers. */
static int default_nbuf(void)
{
    uint64_t bytes = 0;
    for (int i = 0; i < numa_nnodes; i++)
        bytes += numa_nodes[i].mem_bytes;
    uint64_t mib = MAX(1, bytes >> 20);
    unsigned up = cache_log2_ceil(mib);
    if (up > 0 && (1ull << up) - mib > mib - (1ull << (up - 1)))
        up--;
    uint64_t n = (1ull << up) * 4;
    return (int)MAX(NBUF_MIN, MIN(NBUF_MAX, n));
}

static void *zalloc_or_panic(size_t size, const char *what)
{
    void *p = kzalloc(size);
    if (!p)
        panic("binit: no memory for %s (%zu bytes)", what, size);
    return p;
}

/* Give every buffer a page of data, spread over the nodes; returns how
 * many got one (fewer only when memory runs out). */
static int alloc_data(int nbuf)
{
    for (int i = 0; i < nbuf; i++) {
        int node = numa_nnodes > 0 ? i % numa_nnodes : 0;
        struct page *pg = page_alloc_node(0, node);
        if (!pg)
            return i;
        bc.bufs[i].b.b_data = page_to_virt(pg);
        buf_note_data_pages(1);
    }
    return nbuf;
}

static void init_locks(void)
{
    unsigned G = bc.ngroups;
    struct lock_class *gcls = bc.model == CACHE_SINGLE ? &buf_single_class
                            : bc.model == CACHE_HASHFREE ? &buf_free_class : &buf_group_class;
    for (unsigned g = 0; g < G; g++)
        spin_init(&bc.groups[g].lock, gcls);
    bool own = bc.model == CACHE_HASHFREE;
    for (unsigned r = 0; r < bc.nrows; r++) {
        struct brow *row = &bc.rows[r];
        if (own)
            spin_init(&row->own, &buf_hash_class);
        row->lock = own ? &row->own : &group_of_row(r)->lock;
    }
    for (int i = 0; i < bc.nbuf; i++) {
        struct bufx *x = &bc.bufs[i];
        if (own)
            spin_init(&x->elem, &buf_elem_class);
        x->b.b_lock = own ? &x->elem : &bc.groups[x->group].lock;
    }
}

/* Buffers per group close to BUF_PER_GROUP, a power of two of groups, at
 * most one group per row (ssac only; the others have one free list). */
static unsigned choose_groups(void)
{
    if (bc.model != CACHE_SSAC)
        return 1;
    unsigned g = 1u << cache_log2_ceil(MAX(1, bc.nbuf / BUF_PER_GROUP));
    while (g > 1 && (unsigned)bc.nbuf / g < BUF_PER_GROUP / 2)
        g >>= 1;
    return MIN(g, bc.nrows);
}

void binit(int nbuf)
{
    bc.model = opts.cache;
    bc.nbuf = nbuf > 0 ? nbuf : default_nbuf();
    bc.bufs = zalloc_or_panic(bc.nbuf * sizeof(struct bufx), "buffer headers");
    int got = alloc_data(bc.nbuf);
    if (got < bc.nbuf) {
        kprintf("buf: memory for only %d of %d buffers\n", got, bc.nbuf);
        if (got < 16)
            panic("binit: too little memory for a buffer cache");
        bc.nbuf = got;
    }
    bc.rowbits = cache_log2_ceil(MAX(16, bc.nbuf / BUF_PER_ROW));
    bc.nrows = 1u << bc.rowbits;
    bc.ngroups = choose_groups();
    bc.rows_per_group = bc.nrows / bc.ngroups;
    bc.rows = zalloc_or_panic(bc.nrows * sizeof(struct brow), "hash rows");
    bc.groups = zalloc_or_panic(bc.ngroups * sizeof(struct bgroup), "free lists");
    for (int i = 0; i < bc.nbuf; i++) {
        struct bufx *x = &bc.bufs[i];
        x->group = (uint32_t)i % bc.ngroups;
        x->b.b_row = x->group;
        x->row = NO_ROW;
        x->io.done = 1;     /* no request in flight on it */
    }
    init_locks();
    for (int i = 0; i < bc.nbuf; i++)
        free_insert(&bc.groups[bc.bufs[i].group], &bc.bufs[i].b, false);
    if (bc.model == CACHE_SSAC)
        kprintf("buf: %d buffers, model ssac (%u rows in %u groups)\n", bc.nbuf, bc.nrows,
                bc.ngroups);
    else
        kprintf("buf: %d buffers, model %s (%u rows, one free list)\n", bc.nbuf,
                cache_model_name(bc.model), bc.nrows);
}
