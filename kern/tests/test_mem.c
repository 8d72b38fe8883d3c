/* ktests for the page allocator and the heap. */
#include <kern/tests/ktest.h>
#include <kern/arch/cpu.h>
#include <kern/arch/arch.h>
#include <kern/vm/kmem.h>
#include <kern/arch/numa.h>
#include <kern/lib/string.h>
#include <kern/vm/page.h>
#include <kern/lib/options.h>

KTEST(page_alloc_orders)
{
    struct page *p[8];
    uint64_t free0 = 0;
    for (int n = 0; n < numa_nnodes; n++)
        free0 += page_free_count(n);
    for (unsigned o = 0; o < 8; o++) {
        p[o] = page_alloc(o);
        KT_ASSERT(p[o] != NULL);
        KT_ASSERT((page_to_pfn(p[o]) & ((1UL << o) - 1)) == 0);
        memset(page_to_virt(p[o]), 0xA0 + o, PAGE_SIZE << o);
    }
    for (unsigned o = 0; o < 8; o++) {
        uint8_t *b = page_to_virt(p[o]);
        for (uint64_t i = 0; i < (PAGE_SIZE << o); i += 512)
            KT_ASSERT_EQ(b[i], 0xA0 + o);
    }
    for (unsigned o = 0; o < 8; o++)
        page_free(p[o], o);
    uint64_t free1 = 0;
    for (int n = 0; n < numa_nnodes; n++)
        free1 += page_free_count(n);
    KT_ASSERT_EQ(free1, free0);
    KT_ASSERT(page_alloc(PAGE_MAX_ORDER) == NULL);
    return 0;
}

/* Pages come from the calling CPU's node while it has memory. */
KTEST_ALL_CPUS(page_alloc_local)
{
    int node = this_cpu()->node;
    struct page *p[32];
    for (int i = 0; i < 32; i++) {
        p[i] = page_alloc(i & 1);
        KT_ASSERT(p[i] != NULL);
        KT_ASSERT_EQ(p[i]->node, node);
    }
    for (int i = 0; i < 32; i++)
        page_free(p[i], i & 1);
    return 0;
}

KTEST(kmalloc_sizes)
{
    static const size_t sizes[] = { 1, 8, 63, 64, 65, 200, 1000, 2048, 2049, 5000, 70000 };
    void *p[ARRAY_SIZE(sizes)];
    for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
        p[i] = kmalloc(sizes[i]);
        KT_ASSERT(p[i] != NULL);
        KT_ASSERT(((uint64_t)p[i] & (CACHE_LINE - 1)) == 0);
        memset(p[i], (int)i, sizes[i]);
    }
    for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
        uint8_t *b = p[i];
        KT_ASSERT(b[0] == i && b[sizes[i] - 1] == i);
        kfree(p[i]);
    }
    uint8_t *z = kzalloc(300);
    KT_ASSERT(z && z[0] == 0 && z[299] == 0);
    kfree(z);
    kfree(NULL);
    return 0;
}

/* All CPUs allocate, fill, check and free at once: no object is handed to
 * two CPUs, and objects stay in the CPU's node. */
KTEST_ALL_CPUS(kmalloc_concurrent)
{
    enum { N = 128 };
    uint64_t *obj[N];
    int me = cpu_id();
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < N; i++) {
            size_t size = 64UL << (i % 5);
            obj[i] = kmalloc(size);
            KT_ASSERT(obj[i] != NULL);
            for (size_t w = 0; w < size / 8; w++)
                obj[i][w] = ((uint64_t)me << 32) | (uint64_t)i;
        }
        ktest_barrier();
        for (int i = 0; i < N; i++) {
            size_t size = 64UL << (i % 5);
            for (size_t w = 0; w < size / 8; w++)
                KT_ASSERT_EQ(obj[i][w], ((uint64_t)me << 32) | (uint64_t)i);
            KT_ASSERT_EQ(virt_to_page(obj[i])->node, this_cpu()->node);
            kfree(obj[i]);
        }
        ktest_barrier();
    }
    return 0;
}

/* alloc=: a data page comes from the node the policy names.  local: this
 * CPU's node every time; interleave: nnodes pages in a row land on every
 * node once.  page_alloc_data follows the boot's alloc= and counts each
 * page as local or other (/proc/vmstat). */
static int data_pages_land(int policy, int n, struct page **pg)
{
    int home = this_cpu()->node, seen[MAX_NODES] = { 0 };
    for (int i = 0; i < n; i++) {
        int want = page_data_node_for(policy);
        KT_ASSERT(want >= 0 && want < numa_nnodes);
        if (policy == ALLOC_LOCAL)
            KT_ASSERT_EQ(want, home);
        pg[i] = page_alloc_node(0, want);
        KT_ASSERT(pg[i] != NULL);
        KT_ASSERT_EQ(pg[i]->node, want);
        seen[want]++;
    }
    for (int node = 0; policy == ALLOC_INTERLEAVE && node < numa_nnodes; node++)
        KT_ASSERT_EQ(seen[node], n / numa_nnodes);
    return 0;
}

static int data_pages_counted(int n, struct page **pg)
{
    uint64_t local0, other0, local1, other1;
    int here = 0;
    page_data_counts(&local0, &other0);
    for (int i = 0; i < n; i++) {
        pg[i] = page_alloc_data();
        KT_ASSERT(pg[i] != NULL);
        here += pg[i]->node == this_cpu()->node;
        if (opts.alloc == ALLOC_LOCAL)
            KT_ASSERT_EQ(pg[i]->node, this_cpu()->node);
    }
    page_data_counts(&local1, &other1);
    KT_ASSERT(local1 - local0 >= (uint64_t)here);
    KT_ASSERT(other1 - other0 >= (uint64_t)(n - here));
    if (opts.alloc == ALLOC_INTERLEAVE)
        KT_ASSERT_EQ(here, n / numa_nnodes);
    return 0;
}

KTEST(page_alloc_policy)
{
    enum { ROUNDS = 4 };
    struct page *pg[ROUNDS * MAX_NODES];
    int n = ROUNDS * numa_nnodes, r = 0;
    /* Interrupts off: the thread stays on this CPU, whose rotor it reads. */
    uint64_t f = intr_save();
    for (int policy = ALLOC_LOCAL; policy <= ALLOC_INTERLEAVE && !r; policy++) {
        memset(pg, 0, sizeof pg);
        r = data_pages_land(policy, n, pg);
        for (int i = 0; i < n; i++)
            if (pg[i])
                page_free(pg[i], 0);
    }
    if (!r) {
        memset(pg, 0, sizeof pg);
        r = data_pages_counted(n, pg);
        for (int i = 0; i < n; i++)
            if (pg[i])
                page_free(pg[i], 0);
    }
    intr_restore(f);
    return r;
}
