/*
 * Physical page allocator: a binary buddy allocator per NUMA node, with a
 * small per-CPU cache of single pages in front of it.
 *
 * Theory.  Every page frame has a struct page in page_array (indexed by
 * frame number).  Each node owns the frames its SRAT ranges cover and keeps
 * free blocks of 2^order pages on free lists per order.  An allocation asks
 * the calling CPU's node first and then the other nodes in increasing SLIT
 * distance (SALSA's and Tornado's locality lesson: memory near the CPU
 * that will touch it).  Single pages, the common case, come from a per-CPU
 * cache of up to PCP_HIGH pages refilled and drained in batches, so most
 * page allocations take no shared lock at all.
 *
 * User data pages (page_alloc_data: anonymous and copy-on-write pages)
 * follow alloc= (SALSA's user control of memory allocation): local takes
 * them from the allocating CPU's node as above; interleave spreads them
 * round robin over the nodes, each CPU with a rotor of its own (started
 * at its own number, so CPUs do not move in step and share no counter).
 * Each CPU counts the data pages it got from its own node and from
 * another, which /proc/vmstat shows as numa_local and numa_other: the
 * emulator has no NUMA latency, so those counts are what shows the
 * policy's effect there.
 *
 * Locks.  node->lock (class page_node, a spin lock, so interrupts are off
 * while it is held) protects the node's free lists, nfree, and the
 * flags/order of free blocks.  The per-CPU cache is touched only by its
 * own CPU with interrupts off.  The node lock is a leaf.  It is statically
 * initialized, so it works before lock_init (it takes the lock= algorithm
 * at first use); its contention shows in lockstat like any other class.
 */
#include <kern/vm/page.h>
#include <kern/vm/pmap.h>
#include <kern/arch/multiboot.h>
#include <kern/arch/numa.h>
#include <kern/arch/cpu.h>
#include <kern/lock/spinlock.h>
#include <kern/arch/arch.h>
#include <kern/lib/kprintf.h>
#include <kern/arch/panic.h>
#include <kern/lib/string.h>
#include <kern/lib/options.h>

struct page *page_array;
uint64_t max_pfn;

struct free_area {
    struct page head;           /* circular list sentinel */
};

LOCK_CLASS(page_node_class, "page_node", LK_SPIN);

struct page_node {
    spinlock_t lock;
    uint64_t nfree;                             /* pages free, under lock */
    uint64_t ntotal;                            /* [boot] */
    struct free_area area[PAGE_MAX_ORDER];      /* under lock */
    int fallback[MAX_NODES];                    /* [boot] nodes by distance */
} __cacheline;

static struct page_node page_nodes[MAX_NODES];

#define PCP_HIGH  64
#define PCP_BATCH 16

struct pcp {
    int count;
    struct page *pages[PCP_HIGH];
    uint32_t rotor;             /* [own] alloc=interleave: the next node, mod nodes */
    uint64_t data_local;        /* [own] data pages from this CPU's node ... */
    uint64_t data_other;        /* [own] ... and from another (read racily) */
    uint64_t interleaved;       /* [own] of them, placed by an INTERLEAVE policy */
    uint64_t migrated[2];       /* [own] page moves that failed [0] and succeeded [1] */
} __cacheline;

static struct pcp pcps[MAX_CPUS];
static bool pcp_enabled;

static void list_init(struct page *h) { h->next = h->prev = h; }
static bool list_empty(const struct page *h) { return h->next == h; }

static void list_add(struct page *h, struct page *p)
{
    p->next = h->next;
    p->prev = h;
    h->next->prev = p;
    h->next = p;
}

static void list_del(struct page *p)
{
    p->prev->next = p->next;
    p->next->prev = p->prev;
    p->next = p->prev = NULL;
}

/* Return a block to its node's lists, merging with free buddies. */
static void free_block_locked(struct page_node *pn, struct page *p, unsigned order)
{
    uint64_t pfn = page_to_pfn(p);
    pn->nfree += 1UL << order;
    while (order < PAGE_MAX_ORDER - 1) {
        uint64_t buddy_pfn = pfn ^ (1UL << order);
        if (buddy_pfn >= max_pfn)
            break;
        struct page *b = pfn_to_page(buddy_pfn);
        if (!(page_flags(b) & PG_FREE) || b->order != order || b->node != p->node)
            break;
        list_del(b);
        b->flags &= ~PG_FREE;
        pfn &= ~(1UL << order);
        order++;
    }
    struct page *head = pfn_to_page(pfn);
    head->flags |= PG_FREE;
    head->order = order;
    list_add(&pn->area[order].head, head);
}

static struct page *alloc_block_locked(struct page_node *pn, unsigned order)
{
    unsigned o = order;
    while (o < PAGE_MAX_ORDER && list_empty(&pn->area[o].head))
        o++;
    if (o == PAGE_MAX_ORDER)
        return NULL;
    struct page *p = pn->area[o].head.next;
    list_del(p);
    p->flags &= ~PG_FREE;
    /* Split: give back the upper halves. */
    while (o > order) {
        o--;
        struct page *half = p + (1UL << o);
        half->flags |= PG_FREE;
        half->order = o;
        list_add(&pn->area[o].head, half);
    }
    p->order = order;
    pn->nfree -= 1UL << order;
    return p;
}

static struct page *node_alloc(int node, unsigned order)
{
    struct page_node *pn = &page_nodes[node];
    spin_lock(&pn->lock);
    struct page *p = alloc_block_locked(pn, order);
    spin_unlock(&pn->lock);
    return p;
}

static void node_free(struct page *p, unsigned order)
{
    struct page_node *pn = &page_nodes[p->node];
    spin_lock(&pn->lock);
    free_block_locked(pn, p, order);
    spin_unlock(&pn->lock);
}

static struct page *alloc_from_nodes(unsigned order, int node)
{
    struct page_node *home = &page_nodes[node];
    for (int i = 0; i < numa_nnodes; i++) {
        struct page *p = node_alloc(home->fallback[i], order);
        if (p)
            return p;
    }
    return NULL;
}

/* Refill this CPU's cache with a batch from its node (or the nearest). */
static void pcp_refill(struct pcp *c, int node)
{
    while (c->count < PCP_BATCH) {
        struct page *p = alloc_from_nodes(0, node);
        if (!p)
            break;
        c->pages[c->count++] = p;
    }
}

static void pcp_drain(struct pcp *c, int keep)
{
    while (c->count > keep)
        node_free(c->pages[--c->count], 0);
}

static struct page *pcp_alloc(void)
{
    uint64_t f = intr_save();
    struct cpu *cpu = this_cpu();
    struct pcp *c = &pcps[cpu->id];
    if (c->count == 0)
        pcp_refill(c, cpu->node);
    struct page *p = c->count ? c->pages[--c->count] : NULL;
    intr_restore(f);
    return p;
}

static void pcp_free(struct page *p)
{
    uint64_t f = intr_save();
    struct cpu *cpu = this_cpu();
    struct pcp *c = &pcps[cpu->id];
    if (p->node != cpu->node) {
        node_free(p, 0);        /* keep the cache node-local */
    } else {
        c->pages[c->count++] = p;
        if (c->count == PCP_HIGH)
            pcp_drain(c, PCP_HIGH - PCP_BATCH);
    }
    intr_restore(f);
}

struct page *page_alloc_node(unsigned order, int node)
{
    if (order >= PAGE_MAX_ORDER)
        return NULL;
    if (node < 0 || node >= numa_nnodes)
        node = 0;
    /* This CPU's cache first when it is the node asked for: the pages
     * freed here (the page cache's reclaim among them) are reachable. */
    if (order == 0 && pcp_enabled && node == this_cpu()->node) {
        struct page *p = pcp_alloc();
        if (p)
            return p;
    }
    return alloc_from_nodes(order, node);
}

struct page *page_alloc(unsigned order)
{
    if (order == 0 && pcp_enabled)
        return pcp_alloc();
    return page_alloc_node(order, this_cpu()->node);
}

int page_data_node_for(int policy)
{
    uint64_t f = intr_save();
    struct cpu *cpu = this_cpu();
    int node = cpu->node;
    if (policy == ALLOC_INTERLEAVE && numa_nnodes > 1) {
        struct pcp *c = &pcps[cpu->id];
        node = (int)((c->rotor + (uint32_t)cpu->id) % (uint32_t)numa_nnodes);
        c->rotor++;
    }
    intr_restore(f);
    return node;
}

int page_data_node(void)
{
    return page_data_node_for(opts.alloc);
}

/* A user data page is counted as local or other (/proc/vmstat). */
/* Add one to the calling CPU's count of field (each CPU writes its own;
 * readers add them up racily). */
#define PCP_COUNT(field) do {                                   \
        uint64_t f_ = intr_save();                              \
        pcps[this_cpu()->id].field++;                           \
        intr_restore(f_);                                       \
    } while (0)

struct page *page_count_data(struct page *p)
{
    if (!p)
        return NULL;
    uint64_t f = intr_save();
    struct cpu *cpu = this_cpu();
    if (p->node == cpu->node)
        pcps[cpu->id].data_local++;
    else
        pcps[cpu->id].data_other++;
    intr_restore(f);
    return p;
}

struct page *page_alloc_data(void)
{
    return page_count_data(page_alloc_node(0, page_data_node()));
}

/* One page from the nodes in allowed, those nearest node first. */
static struct page *alloc_among(int node, uint64_t allowed)
{
    const struct page_node *home = &page_nodes[node];
    for (int i = 0; i < numa_nnodes; i++) {
        int n = home->fallback[i];
        struct page *p = (allowed & (1UL << n)) ? node_alloc(n, 0) : NULL;
        if (p)
            return p;
    }
    return NULL;
}

int mempolicy_interleave_node(const struct mempolicy *pol)
{
    for (uint32_t i = 0; i < MAX_NODES; i++) {
        uint32_t n = (pol->next + i) % MAX_NODES;
        if (pol->nodes & (1UL << n))
            return (int)n;
    }
    return this_cpu()->node;
}

int mempolicy_node_for(const struct mempolicy *pol, uint64_t index)
{
    int weight = 0;
    for (uint64_t m = pol->nodes; m; m &= m - 1)
        weight++;               /* the kernel has no popcount instruction to count on */
    if (!weight)
        return this_cpu()->node;
    uint64_t nth = pol->mode == MPOL_INTERLEAVE ? index % (uint64_t)weight : 0;
    uint64_t m = pol->nodes;
    while (nth--)
        m &= m - 1;
    return __builtin_ctzl(m);
}

/* INTERLEAVE's node for the next page, taken: the cursor moves past it. */
static int interleave_next(struct mempolicy *pol)
{
    int n = mempolicy_interleave_node(pol);
    pol->next = (uint32_t)n + 1;
    return n;
}

struct page *page_alloc_policy(struct mempolicy *pol)
{
    int here = this_cpu()->node;
    uint64_t all = page_nodes_with_memory();
    struct page *p;
    switch (pol->mode) {
    case MPOL_BIND:
        p = alloc_among(here, pol->nodes);
        break;
    case MPOL_INTERLEAVE:
        p = alloc_among(interleave_next(pol), all);
        if (p)
            PCP_COUNT(interleaved);
        break;
    case MPOL_PREFERRED:
        p = alloc_among(__builtin_ctzl(pol->nodes), all);   /* its one node */
        break;
    default:                        /* PREFERRED_MANY */
        p = alloc_among(here, pol->nodes);
        if (!p)
            p = alloc_among(here, all);
        break;
    }
    return page_count_data(p);
}

uint64_t page_nodes_with_memory(void)
{
    uint64_t m = 0;
    for (int n = 0; n < numa_nnodes; n++)
        if (page_total_count(n))
            m |= 1UL << n;
    return m;
}

void page_data_counts(uint64_t *local, uint64_t *other)
{
    *local = *other = 0;
    for (int i = 0; i < ncpus; i++) {
        *local += READ_ONCE(pcps[i].data_local);
        *other += READ_ONCE(pcps[i].data_other);
    }
}

void page_numa_counts(uint64_t *interleaved, uint64_t *migrated, uint64_t *migrate_failed)
{
    *interleaved = *migrated = *migrate_failed = 0;
    for (int i = 0; i < ncpus; i++) {
        *interleaved += READ_ONCE(pcps[i].interleaved);
        *migrated += READ_ONCE(pcps[i].migrated[1]);
        *migrate_failed += READ_ONCE(pcps[i].migrated[0]);
    }
}

void page_count_migration(bool moved)
{
    PCP_COUNT(migrated[moved]);
}

void page_free(struct page *p, unsigned order)
{
    p->owner = NULL;
    p->flags &= ~(PG_SLAB | PG_LARGE);
    if (order == 0 && pcp_enabled)
        pcp_free(p);
    else
        node_free(p, order);
}

void page_rele(struct page *p)
{
    if (__atomic_sub_fetch(&p->count, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    p->flags &= ~(PG_CACHED | PG_DIRTY | PG_REPLICA | PG_WRITTEN | PG_WRITING | PG_INVALIDATING);
    page_free(p, 0);
}

void *page_alloc_zeroed_va(void)
{
    struct page *p = page_alloc(0);
    if (!p)
        return NULL;
    void *va = page_to_virt(p);
    memset(va, 0, PAGE_SIZE);
    return va;
}

uint64_t page_total_count(int node)
{
    return node >= 0 && node < MAX_NODES ? page_nodes[node].ntotal : 0;
}

uint64_t page_free_count(int node)
{
    uint64_t n = READ_ONCE(page_nodes[node].nfree);
    for (int i = 0; i < ncpus; i++)
        if (cpus[i].node == node)
            n += READ_ONCE(pcps[i].count);
    return n;
}

/* Nodes ordered by distance from `node`, nearest (itself) first. */
static void build_fallback(int node)
{
    int *order = page_nodes[node].fallback;
    for (int i = 0; i < numa_nnodes; i++)
        order[i] = i;
    for (int i = 1; i < numa_nnodes; i++)
        for (int j = i; j > 0; j--) {
            int a = order[j - 1], b = order[j];
            int da = a == node ? 0 : numa_distance(node, a);
            int db = b == node ? 0 : numa_distance(node, b);
            if (db >= da)
                break;
            order[j - 1] = b;
            order[j] = a;
        }
}

static bool page_is_free_ram(paddr_t pa, paddr_t early_lo, paddr_t early_hi)
{
    extern char _boot_start[], _kernel_end[];
    if (pa < 0x100000)
        return false;                       /* BIOS, trampoline */
    if (pa >= (paddr_t)_boot_start && pa < virt_to_phys(_kernel_end))
        return false;
    if (pa >= early_lo && pa < early_hi)
        return false;
    return true;
}

static void add_range(paddr_t base, paddr_t end, paddr_t early_lo, paddr_t early_hi)
{
    for (paddr_t pa = ALIGN_UP(base, PAGE_SIZE); pa + PAGE_SIZE <= end; pa += PAGE_SIZE) {
        struct page *p = pfn_to_page(pa >> PAGE_SHIFT);
        int node = numa_node_of_paddr(pa);
        p->node = node;
        page_nodes[node].ntotal++;
        if (!page_is_free_ram(pa, early_lo, early_hi))
            continue;
        p->flags &= ~PG_RESERVED;
        free_block_locked(&page_nodes[node], p, 0);
    }
}

void page_init(void)
{
    for (int i = 0; i < bootinfo.nranges; i++) {
        const struct mb_range *r = &bootinfo.range[i];
        if (r->type == 1)
            max_pfn = MAX(max_pfn, (r->base + r->len) >> PAGE_SHIFT);
    }
    uint64_t bytes = ALIGN_UP(max_pfn * sizeof(struct page), PAGE_SIZE);
    /* The frame array comes from the early allocator, which gives
     * contiguous pages in the direct map as long as the RAM below 1 GiB is
     * contiguous after the kernel, as it is on PC firmware. */
    page_array = early_alloc_page();
    for (uint64_t off = PAGE_SIZE; off < bytes; off += PAGE_SIZE) {
        void *next = early_alloc_page();
        if ((char *)next != (char *)page_array + off)
            panic("page_init: RAM after the kernel is not contiguous");
    }
    for (uint64_t i = 0; i < max_pfn; i++)
        page_array[i].flags = PG_RESERVED;
    for (int n = 0; n < MAX_NODES; n++) {
        page_nodes[n].lock = (spinlock_t)SPINLOCK_INIT(&page_node_class);
        for (int o = 0; o < PAGE_MAX_ORDER; o++)
            list_init(&page_nodes[n].area[o].head);
    }

    paddr_t early_lo, early_hi;
    early_alloc_range(&early_lo, &early_hi);
    early_alloc_finish();
    for (int i = 0; i < bootinfo.nranges; i++) {
        const struct mb_range *r = &bootinfo.range[i];
        if (r->type == 1)
            add_range(r->base, r->base + r->len, early_lo, early_hi);
    }
    for (int n = 0; n < numa_nnodes; n++)
        build_fallback(n);
    pcp_enabled = true;
    uint64_t total = 0;
    for (int n = 0; n < numa_nnodes; n++)
        total += page_nodes[n].nfree;
    kprintf("page: %lu MiB free in %d node%s, frame array %lu KiB\n",
            total >> (20 - PAGE_SHIFT), numa_nnodes, numa_nnodes == 1 ? "" : "s", bytes >> 10);
}
