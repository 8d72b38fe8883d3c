/*
 * The texts of sysfs (mounted on /sys; the tree is in procfs.c): the
 * part of Linux's /sys/devices/system that numactl, libnuma and lscpu
 * read, from the firmware's tables (kern/arch/numa.c) and the page
 * allocator, in Linux's formats:
 *
 *   node/{online,possible,has_memory,has_cpu,has_normal_memory}   lists ("0-1")
 *   node/nodeN/{cpulist,cpumap,distance,meminfo}
 *   cpu/{online,possible,present}, cpu/kernel_max, cpu/cpuN/
 *
 * A list is Linux's "0-3,5"; a map its hex mask in 32-bit words with
 * commas between; meminfo's lines are "Node N MemTotal:  X kB".  Linux's
 * per-node numastat is left out: Tempest does not count those events per
 * node.
 */
#include <kern/procfs/procfs.h>
#include <kern/arch/numa.h>
#include <kern/arch/cpu.h>
#include <kern/vm/page.h>

/* mask as Linux prints a list, and the line's end. */
static void put_list(struct sbuf *sb, uint64_t mask)
{
    sbuf_list(sb, mask);
    sbuf_printf(sb, "\n");
}

static uint64_t all_nodes(void)
{
    return numa_nnodes >= 64 ? ~0UL : (1UL << numa_nnodes) - 1;
}

static uint64_t nodes_with_cpus(void)
{
    uint64_t m = 0;
    for (int n = 0; n < numa_nnodes; n++)
        if (numa_nodes[n].cpumask)
            m |= 1UL << n;
    return m;
}

static uint64_t cpus_online(void)
{
    uint64_t m = 0;
    for (int c = 0; c < ncpus && c < 64; c++)
        if (cpus[c].online)
            m |= 1UL << c;
    return m;
}

int sysfs_node_online(struct sbuf *sb) { put_list(sb, all_nodes()); return 0; }
int sysfs_node_has_memory(struct sbuf *sb) { put_list(sb, page_nodes_with_memory()); return 0; }
int sysfs_node_has_cpu(struct sbuf *sb) { put_list(sb, nodes_with_cpus()); return 0; }
int sysfs_cpu_online(struct sbuf *sb) { put_list(sb, cpus_online()); return 0; }

int sysfs_cpu_possible(struct sbuf *sb)
{
    put_list(sb, ncpus >= 64 ? ~0UL : (1UL << ncpus) - 1);
    return 0;
}

int sysfs_cpu_kernel_max(struct sbuf *sb)
{
    sbuf_printf(sb, "%d\n", MAX_CPUS - 1);
    return 0;
}

int sysfs_node_cpulist(struct sbuf *sb, int node)
{
    put_list(sb, numa_nodes[node].cpumask & cpus_online());
    return 0;
}

int sysfs_node_cpumap(struct sbuf *sb, int node)
{
    uint64_t m = numa_nodes[node].cpumask & cpus_online();
    if (ncpus > 32)
        sbuf_printf(sb, "%08x,", (unsigned)(m >> 32));
    sbuf_printf(sb, "%08x\n", (unsigned)m);
    return 0;
}

int sysfs_node_distance(struct sbuf *sb, int node)
{
    for (int n = 0; n < numa_nnodes; n++)
        sbuf_printf(sb, n ? " %d" : "%d", numa_distance(node, n));
    sbuf_printf(sb, "\n");
    return 0;
}

int sysfs_node_meminfo(struct sbuf *sb, int node)
{
    uint64_t total = page_total_count(node) * 4, free = page_free_count(node) * 4;
    sbuf_printf(sb, "Node %d MemTotal:       %8lu kB\n", node, (unsigned long)total);
    sbuf_printf(sb, "Node %d MemFree:        %8lu kB\n", node, (unsigned long)free);
    sbuf_printf(sb, "Node %d MemUsed:        %8lu kB\n", node, (unsigned long)(total - free));
    return 0;
}
