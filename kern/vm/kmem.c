/*
 * Kernel heap.
 *
 * Theory.  Small requests are rounded up to one of six size classes, 64 to
 * 2048 bytes, so every object starts on its own cache line and no two
 * objects share a line (Tornado: false sharing between unrelated objects
 * costs more than the wasted bytes).  Each class carves whole pages
 * ("slabs") into objects; a slab's struct page records its class and how
 * many objects are out.  Each class keeps, per NUMA node, a list of slabs
 * with free objects, and each CPU keeps a magazine of up to MAG_SIZE free
 * objects per class in front of that, so the usual kmalloc/kfree pair
 * touches only CPU-local data.  A magazine that runs dry is refilled from
 * the CPU's own node; a full one returns half.  Objects freed on a CPU of
 * another node go straight back to their home node's slab, so magazines
 * only ever hold local memory.  Requests over 2 KiB take 2^k whole pages.
 *
 * Heap checking (kmemdebug=on, kmem_debug.c).  Each small object then
 * carries a 64-byte header in front (its state, the requested size, the
 * call sites that allocated and freed it, a front red zone) and a red
 * zone behind the requested bytes to the end of its slot; the caller still
 * gets a cache-line-aligned pointer, from a class large enough for all of
 * it.  A free checks the state (a second free, or a pointer that is no
 * object's start, panics with both call sites symbolized) and both red
 * zones (an overrun panics), then poisons the object; an allocation that
 * reuses it checks the poison first (a write after the free panics).
 * Requests that do not fit a class with the header get whole pages, as
 * without checking.  The mode is chosen at boot, before the first
 * allocation, and never changes.
 *
 * Locks.  class->node[n].lock (class kmem_slab, a spin lock) protects that
 * node's slab list and the free lists inside its slabs.  Magazines belong
 * to their CPU and are used with interrupts off.  The slab lock may take
 * the page allocator's node lock (to get or return a page), never the
 * other way round.
 */
#include <kern/vm/kmem.h>
#include <kern/vm/page.h>
#include <kern/arch/numa.h>
#include <kern/arch/cpu.h>
#include <kern/lock/spinlock.h>
#include <kern/arch/arch.h>
#include <kern/lib/string.h>
#include <kern/arch/panic.h>
#include <kern/lib/options.h>
#include <kern/vm/kmem_debug.h>

#define NCLASSES 6
#define MIN_SHIFT 6
#define MAG_SIZE 16

struct freeobj {
    struct freeobj *next;
};

struct slab_hdr {
    struct freeobj *free;       /* objects free in this slab, under node lock */
    struct slab_hdr *next;      /* next slab with free objects, under node lock */
    struct page *page;
};

LOCK_CLASS(kmem_slab_class, "kmem_slab", LK_SPIN);

struct slab_node {
    spinlock_t lock;
    struct slab_hdr *partial;   /* slabs with at least one free object */
} __cacheline;

struct size_class {
    size_t size;
    struct slab_node node[MAX_NODES];
};

struct magazine {
    int count;
    void *obj[MAG_SIZE];
};

struct cpu_heap {
    struct magazine mag[NCLASSES];
} __cacheline;

static struct size_class classes[NCLASSES];
static struct cpu_heap cpu_heaps[MAX_CPUS];

/* The slab header lives in the first object slot of the page (every
 * class is at least as large as the header), so a page holds
 * 4096 / size - 1 objects. */
static int class_of(size_t size)
{
    for (int c = 0; c < NCLASSES; c++)
        if (size <= classes[c].size)
            return c;
    return -1;
}

static struct slab_hdr *new_slab(int cls, int node)
{
    struct page *pg = page_alloc_node(0, node);
    if (!pg)
        return NULL;
    size_t size = classes[cls].size;
    char *base = page_to_virt(pg);
    struct slab_hdr *h = (struct slab_hdr *)base;
    h->page = pg;
    h->free = NULL;
    h->next = NULL;
    for (size_t off = size; off + size <= PAGE_SIZE; off += size) {
        struct freeobj *o = (struct freeobj *)(base + off);
        o->next = h->free;
        h->free = o;
        if (kmem_debug_on)
            kmem_debug_fresh(o);
    }
    pg->flags |= PG_SLAB;
    pg->owner = &classes[cls];
    pg->count = 0;
    return h;
}

/* Take up to `want` objects from node's slabs into out[]; returns count. */
static int slab_take(int cls, int node, void **out, int want)
{
    struct slab_node *sn = &classes[cls].node[node];
    int got = 0;
    spin_lock(&sn->lock);
    while (got < want) {
        struct slab_hdr *h = sn->partial;
        if (!h) {
            h = new_slab(cls, node);
            if (!h)
                break;
            h->next = sn->partial;
            sn->partial = h;
        }
        struct freeobj *o = h->free;
        h->free = o->next;
        h->page->count++;
        out[got++] = o;
        if (!h->free)
            sn->partial = h->next;
    }
    spin_unlock(&sn->lock);
    return got;
}

static void slab_give(void *obj)
{
    struct page *pg = virt_to_page(obj);
    struct size_class *sc = pg->owner;
    struct slab_node *sn = &sc->node[pg->node];
    struct slab_hdr *h = page_to_virt(pg);
    spin_lock(&sn->lock);
    struct freeobj *o = obj;
    bool was_full = h->free == NULL;
    o->next = h->free;
    h->free = o;
    pg->count--;
    if (was_full) {
        h->next = sn->partial;
        sn->partial = h;
    }
    spin_unlock(&sn->lock);
}

static void *kmalloc_large(size_t size)
{
    unsigned order = 0;
    while ((PAGE_SIZE << order) < size)
        order++;
    struct page *pg = page_alloc(order);
    if (!pg)
        return NULL;
    pg->flags |= PG_LARGE;
    pg->order = order;
    return page_to_virt(pg);
}

static void *kmalloc_at(size_t size, uintptr_t caller)
{
    size_t need = kmem_debug_on ? kmem_debug_slot(size) : size;
    int cls = class_of(need ? need : 1);
    if (cls < 0)
        return kmalloc_large(size);
    uint64_t f = intr_save();
    struct cpu *cpu = this_cpu();
    struct magazine *m = &cpu_heaps[cpu->id].mag[cls];
    if (m->count == 0)
        m->count = slab_take(cls, cpu->node, m->obj, MAG_SIZE / 2);
    void *p = m->count ? m->obj[--m->count] : NULL;
    intr_restore(f);
    if (!p) {
        /* The local node is exhausted: take one from the nearest. */
        for (int n = 0; n < numa_nnodes && !p; n++)
            if (slab_take(cls, n, &p, 1) != 1)
                p = NULL;
    }
    if (p && kmem_debug_on)
        p = kmem_debug_alloc(p, classes[cls].size, size, caller);
    return p;
}

void *kmalloc(size_t size)
{
    return kmalloc_at(size, (uintptr_t)__builtin_return_address(0));
}

void *kzalloc(size_t size)
{
    void *p = kmalloc_at(size, (uintptr_t)__builtin_return_address(0));
    if (p)
        memset(p, 0, size);
    return p;
}

void kfree(void *p)
{
    if (!p)
        return;
    struct page *pg = virt_to_page(p);
    if (pg->flags & PG_LARGE) {
        page_free(pg, pg->order);
        return;
    }
    if (!(pg->flags & PG_SLAB)) {
        if (kmem_debug_on)
            kmem_debug_foreign(p, NULL, (uintptr_t)__builtin_return_address(0));
        panic("kfree: %p is not a heap object", p);
    }
    struct size_class *sc = pg->owner;
    int cls = (int)(sc - classes);
    if (kmem_debug_on)
        p = kmem_debug_free(p, page_to_virt(pg), sc->size,
                            (uintptr_t)__builtin_return_address(0));
    uint64_t f = intr_save();
    struct cpu *cpu = this_cpu();
    if (pg->node != cpu->node) {
        intr_restore(f);
        slab_give(p);
        return;
    }
    struct magazine *m = &cpu_heaps[cpu->id].mag[cls];
    if (m->count == MAG_SIZE)
        while (m->count > MAG_SIZE / 2)
            slab_give(m->obj[--m->count]);
    m->obj[m->count++] = p;
    intr_restore(f);
}

/* The head of the whole-page block page pfn belongs to, or NULL (a block
 * is at most 2^LARGE_ORDER_MAX pages). */
#define LARGE_ORDER_MAX 10
static struct page *large_head(uint64_t pfn)
{
    for (uint64_t i = 0; i < (1UL << LARGE_ORDER_MAX) && i <= pfn; i++) {
        struct page *pg = pfn_to_page(pfn - i);
        uint16_t f = page_flags(pg);
        if (f & PG_LARGE)
            return i < (1UL << pg->order) ? pg : NULL;
        if (f & PG_SLAB)
            return NULL;
    }
    return NULL;
}

static bool slab_object_of(uintptr_t addr, struct page *pg, struct kmem_object *o)
{
    const struct size_class *sc = pg->owner;
    if (!sc)
        return false;
    uintptr_t base = (uintptr_t)page_to_virt(pg);
    uintptr_t slot = base + (addr - base) / sc->size * sc->size;
    if (slot == base)
        return false;                   /* the slab's own header */
    o->start = slot;
    o->size = sc->size;
    o->site = 0;
    if (kmem_debug_on && !kmem_debug_object(slot, &o->start, &o->size, &o->site)) {
        o->start = slot;                /* a free slot: its whole size */
        o->size = sc->size;
    }
    return true;
}

bool kmem_object_of(uintptr_t addr, struct kmem_object *o)
{
    if (addr < DIRECT_MAP || addr - DIRECT_MAP >= (max_pfn << PAGE_SHIFT))
        return false;
    uint64_t pfn = (addr - DIRECT_MAP) >> PAGE_SHIFT;
    struct page *pg = pfn_to_page(pfn);
    if (page_flags(pg) & PG_SLAB)
        return slab_object_of(addr, pg, o);
    if (!(pg = large_head(pfn)))
        return false;
    o->start = (uintptr_t)page_to_virt(pg);
    o->size = PAGE_SIZE << pg->order;
    o->site = 0;
    return true;
}

void kmem_init(void)
{
    kmem_debug_on = opts.kmemdebug;
    for (int c = 0; c < NCLASSES; c++) {
        classes[c].size = 1UL << (MIN_SHIFT + c);
        for (int n = 0; n < MAX_NODES; n++)
            classes[c].node[n].lock = (spinlock_t)SPINLOCK_INIT(&kmem_slab_class);
    }
}
