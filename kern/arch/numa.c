/*
 * NUMA topology.
 *
 * Theory.  The SRAT says which proximity domain every CPU and physical
 * memory range belongs to, and the SLIT how far apart the domains are;
 * drivers/platform/acpi.c has already checked those tables and renumbered the
 * domains as dense nodes 0..n-1.  Here we turn that into what the rest of
 * the kernel asks: the node of a logical CPU, the node of a physical
 * address, the distance between two nodes, and how much usable RAM (the
 * Multiboot2 memory map's usable ranges intersected with the node's SRAT
 * ranges) each node holds.
 *
 * Without a valid SRAT the machine is one node 0 holding every CPU and all
 * usable memory.  A CPU the SRAT does not mention goes to node 0.  A node
 * with CPUs but no memory, or memory but no CPUs, is legal.
 *
 * Locking: numa_init() runs once at boot on the boot CPU, before any other
 * CPU is started, so after it returns these arrays are read-only and every
 * reader may use them without a lock.
 */
#include <kern/arch/numa.h>
#include <kern/lib/kprintf.h>

int numa_nnodes;
struct numa_node numa_nodes[MAX_NODES];

static int cpu_node[NUMA_MAX_CPUS];
static int ncpu_known;
static bool have_slit;
static uint8_t slit[MAX_NODES][MAX_NODES];

/* Bytes of [base, end) covered by the usable ranges. */
static uint64_t usable_bytes(uint64_t base, uint64_t end,
                             const struct mmap_range *usable, int nusable)
{
    uint64_t sum = 0;
    for (int i = 0; i < nusable; i++) {
        uint64_t lo = MAX(base, usable[i].base), hi = MIN(end, usable[i].end);
        if (lo < hi)
            sum += hi - lo;
    }
    return sum;
}

static void add_range(struct numa_node *n, uint64_t base, uint64_t end)
{
    if (n->nranges == NUMA_MAX_RANGES) {
        kprintf("numa: node %d has more than %d ranges, ignoring 0x%lx-0x%lx\n",
                n->id, NUMA_MAX_RANGES, base, end);
        return;
    }
    n->range[n->nranges].base = base;
    n->range[n->nranges].end = end;
    n->nranges++;
}

static void reset(int nnodes)
{
    numa_nnodes = nnodes;
    have_slit = false;
    for (int i = 0; i < MAX_NODES; i++) {
        struct numa_node *n = &numa_nodes[i];
        n->id = i;
        n->cpumask = 0;
        n->mem_bytes = 0;
        n->nranges = 0;
    }
    for (int i = 0; i < NUMA_MAX_CPUS; i++)
        cpu_node[i] = 0;
}

/* Every logical CPU; with no MADT CPUs, the boot CPU alone. */
static int cpu_count(const struct acpi_info *ai)
{
    int n = ai->ncpus > 0 ? ai->ncpus : 1;
    if (n > NUMA_MAX_CPUS)
        n = NUMA_MAX_CPUS;
    return n;
}

static void init_one_node(const struct acpi_info *ai, const struct mmap_range *usable, int nusable)
{
    struct numa_node *n = &numa_nodes[0];
    reset(1);
    ncpu_known = cpu_count(ai);
    n->cpumask = ncpu_known == 64 ? ~0ULL : (1ULL << ncpu_known) - 1;
    for (int i = 0; i < nusable; i++) {
        if (usable[i].end <= usable[i].base)
            continue;
        add_range(n, usable[i].base, usable[i].end);
        n->mem_bytes += usable[i].end - usable[i].base;
    }
    kprintf("numa: no SRAT, one node\n");
}

static void assign_cpus(const struct acpi_info *ai)
{
    ncpu_known = cpu_count(ai);
    for (int i = 0; i < ncpu_known; i++) {
        int node = ai->ncpus > 0 ? acpi_node_of_apic(ai, ai->cpu[i].apic_id) : 0;
        if (node < 0) {
            kprintf("numa: cpu %d (apic id %u) is not in the SRAT, using node 0\n",
                    i, ai->cpu[i].apic_id);
            node = 0;
        }
        cpu_node[i] = node;
        numa_nodes[node].cpumask |= 1ULL << i;
    }
}

static void assign_memory(const struct acpi_info *ai, const struct mmap_range *usable, int nusable)
{
    for (int i = 0; i < ai->nmem; i++) {
        struct numa_node *n = &numa_nodes[ai->mem[i].node];
        uint64_t base = ai->mem[i].base, end = base + ai->mem[i].len;
        add_range(n, base, end);
        n->mem_bytes += usable_bytes(base, end, usable, nusable);
    }
}

void numa_init(const struct acpi_info *ai, const struct mmap_range *usable, int nusable)
{
    if (!ai->have_srat || ai->nnodes < 1 || ai->nnodes > MAX_NODES) {
        init_one_node(ai, usable, nusable);
        return;
    }
    reset(ai->nnodes);
    assign_cpus(ai);
    assign_memory(ai, usable, nusable);
    if (ai->have_slit && ai->slit_n == ai->nnodes) {
        have_slit = true;
        for (int a = 0; a < numa_nnodes; a++)
            for (int b = 0; b < numa_nnodes; b++)
                slit[a][b] = ai->slit[a][b];
    }
}

void numa_limit_cpus(int n)
{
    if (n <= 0 || n >= ncpu_known)
        return;
    uint64_t keep = (1ULL << n) - 1;
    for (int i = 0; i < numa_nnodes; i++)
        numa_nodes[i].cpumask &= keep;
    ncpu_known = n;
}

int numa_node_of_cpu(int cpu)
{
    return cpu >= 0 && cpu < ncpu_known ? cpu_node[cpu] : 0;
}

int numa_node_of_paddr(uint64_t pa)
{
    for (int i = 0; i < numa_nnodes; i++) {
        const struct numa_node *n = &numa_nodes[i];
        for (int r = 0; r < n->nranges; r++)
            if (pa >= n->range[r].base && pa < n->range[r].end)
                return i;
    }
    return 0;
}

int numa_distance(int a, int b)
{
    if (a < 0 || b < 0 || a >= numa_nnodes || b >= numa_nnodes)
        return a == b ? 10 : 20;
    if (have_slit)
        return slit[a][b];
    return a == b ? 10 : 20;
}

/* Append to buf at *len, keeping the snprintf convention of counting
 * what did not fit. */
static void append(char *buf, size_t n, int *len, const char *fmt, int a, int b)
{
    size_t off = (size_t)*len < n ? (size_t)*len : n;
    *len += snprintf(buf + off, n - off, fmt, a, b);
}

int format_cpu_list(char *buf, size_t n, uint64_t mask)
{
    int len = 0;
    if (n)
        buf[0] = 0;
    for (int i = 0; i < 64; i++) {
        if (!(mask >> i & 1))
            continue;
        int j = i;
        while (j + 1 < 64 && (mask >> (j + 1) & 1))
            j++;
        const char *sep = len ? "," : "";
        if (j == i)
            append(buf, n, &len, *sep ? ",%d" : "%d", i, 0);
        else
            append(buf, n, &len, *sep ? ",%d-%d" : "%d-%d", i, j);
        i = j;
    }
    return len;
}

void numa_print(void)
{
    for (int i = 0; i < numa_nnodes; i++) {
        const struct numa_node *n = &numa_nodes[i];
        char cpus[200], dist[MAX_NODES * 4 + 1];
        int dl = 0;
        format_cpu_list(cpus, sizeof cpus, n->cpumask);
        dist[0] = 0;
        for (int j = 0; j < numa_nnodes; j++)
            append(dist, sizeof dist, &dl, j ? " %d" : "%d", numa_distance(i, j), 0);
        kprintf("numa: node %d cpus %s mem %luM dist %s\n",
                i, cpus[0] ? cpus : "none", n->mem_bytes >> 20, dist);
    }
}
