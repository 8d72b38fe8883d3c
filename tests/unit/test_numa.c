/*
 * Host unit tests for kern/arch/numa.c.  The ACPI results are written by hand
 * here (test_acpi.c covers the path from real tables), so each test states
 * exactly the topology it feeds in.
 */
#include "unit.h"
#include <drivers/platform/acpi.h>
#include <kern/arch/numa.h>

#define MiB (1ULL << 20)

static struct acpi_info ai;

static void set_cpus(int n)
{
    memset(&ai, 0, sizeof ai);
    ai.ncpus = n;
    for (int i = 0; i < n; i++)
        ai.cpu[i].apic_id = i;
}

/* An SRAT with nnodes dense nodes whose domain numbers equal their index. */
static void set_srat(int nnodes)
{
    ai.have_srat = true;
    ai.nnodes = nnodes;
    for (int i = 0; i < nnodes; i++)
        ai.domain_of_node[i] = i;
}

static void srat_cpu(uint32_t apic, int node)
{
    ai.srat_cpu[ai.srat_ncpus].apic_id = apic;
    ai.srat_cpu[ai.srat_ncpus].domain = node;
    ai.srat_cpu[ai.srat_ncpus].node = node;
    ai.srat_ncpus++;
}

static void srat_mem(uint64_t base, uint64_t len, int node)
{
    ai.mem[ai.nmem].base = base;
    ai.mem[ai.nmem].len = len;
    ai.mem[ai.nmem].domain = node;
    ai.mem[ai.nmem].node = node;
    ai.nmem++;
}

static const struct mmap_range usable[] = {
    { 0, 0x9FC00 }, { 0x100000, 200 * MiB }, { 300 * MiB, 512 * MiB },
};

static void t_no_srat_one_node(void)
{
    set_cpus(4);
    numa_init(&ai, usable, 3);
    CHECK_EQ(numa_nnodes, 1);
    CHECK_EQ(numa_nodes[0].id, 0);
    CHECK_EQ(numa_nodes[0].cpumask, 0xF);
    CHECK_EQ(numa_nodes[0].mem_bytes, 0x9FC00 + 199 * MiB + 212 * MiB);
    CHECK_EQ(numa_nodes[0].nranges, 3);
    CHECK_EQ(numa_node_of_paddr(400 * MiB), 0);
    CHECK_EQ(numa_node_of_paddr(~0ULL), 0);
    CHECK_EQ(numa_node_of_cpu(3), 0);
    CHECK_EQ(numa_distance(0, 0), 10);
    numa_print();
    CHECK_LOG("numa: no SRAT, one node\n");
    CHECK_LOG("numa: node 0 cpus 0-3 mem 411M dist 10\n");
    CHECK(strstr(strstr(test_log, "no SRAT") + 1, "no SRAT") == NULL);    /* said once */
}

static void t_no_srat_no_madt(void)
{
    set_cpus(0);
    numa_init(&ai, usable, 3);
    CHECK_EQ(numa_nnodes, 1);
    CHECK_EQ(numa_nodes[0].cpumask, 1);
    CHECK_EQ(numa_node_of_cpu(0), 0);
}

static void t_no_srat_64_cpus(void)
{
    set_cpus(64);
    numa_init(&ai, usable, 3);
    CHECK_EQ(numa_nodes[0].cpumask, ~0ULL);
    numa_print();
    CHECK_LOG("cpus 0-63 mem");
}

static void t_two_nodes_intersection(void)
{
    set_cpus(4);
    set_srat(2);
    for (int i = 0; i < 4; i++)
        srat_cpu(i, i / 2);
    srat_mem(0, 256 * MiB, 0);              /* usable: 639K + 199M */
    srat_mem(256 * MiB, 256 * MiB, 1);      /* usable: 212M (300M..512M) */
    numa_init(&ai, usable, 3);
    CHECK_EQ(numa_nnodes, 2);
    CHECK_EQ(numa_nodes[0].mem_bytes, 0x9FC00 + 199 * MiB);
    CHECK_EQ(numa_nodes[1].mem_bytes, 212 * MiB);
    CHECK_EQ(numa_nodes[1].nranges, 1);
    CHECK_EQ(numa_nodes[1].range[0].base, 256 * MiB);
    CHECK_EQ(numa_nodes[1].range[0].end, 512 * MiB);
    CHECK_EQ(numa_node_of_paddr(256 * MiB - 1), 0);
    CHECK_EQ(numa_node_of_paddr(256 * MiB), 1);
    CHECK_EQ(numa_node_of_paddr(512 * MiB), 0);     /* past every range */
    CHECK_EQ(numa_distance(0, 1), 20);      /* no SLIT: defaults */
    CHECK_EQ(numa_distance(1, 1), 10);
    numa_print();
    CHECK_LOG("numa: node 0 cpus 0-1 mem 199M dist 10 20\n");
    CHECK_LOG("numa: node 1 cpus 2-3 mem 212M dist 20 10\n");
    CHECK(!log_has("no SRAT"));
}

static void t_slit_distances(void)
{
    set_cpus(4);
    set_srat(4);
    for (int i = 0; i < 4; i++) {
        srat_cpu(i, i);
        srat_mem(i * 128 * MiB, 128 * MiB, i);
    }
    ai.have_slit = true;
    ai.slit_n = 4;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            ai.slit[a][b] = a == b ? 10 : a / 2 == b / 2 ? 20 : 30;
    numa_init(&ai, usable, 3);
    CHECK_EQ(numa_distance(0, 1), 20);
    CHECK_EQ(numa_distance(0, 3), 30);
    CHECK_EQ(numa_distance(3, 3), 10);
    CHECK_EQ(numa_distance(-1, 2), 20);     /* out of range: defaults */
    CHECK_EQ(numa_distance(9, 9), 10);
    numa_print();
    CHECK_LOG("numa: node 2 cpus 2 mem 84M dist 30 30 10 20\n");     /* 300M..384M usable */
}

static void t_cpu_not_in_srat(void)
{
    set_cpus(3);
    set_srat(2);
    srat_cpu(0, 0);
    srat_cpu(1, 1);                         /* apic 2 is missing */
    srat_mem(0, 512 * MiB, 1);
    numa_init(&ai, usable, 3);
    CHECK_LOG("numa: cpu 2 (apic id 2) is not in the SRAT, using node 0");
    CHECK_EQ(numa_node_of_cpu(2), 0);
    CHECK_EQ(numa_nodes[0].cpumask, 0x5);
    CHECK_EQ(numa_nodes[0].mem_bytes, 0);   /* CPUs but no memory: fine */
    numa_print();
    CHECK_LOG("numa: node 0 cpus 0,2 mem 0M dist 10 20\n");
}

static void t_memory_only_node(void)
{
    set_cpus(2);
    set_srat(3);
    srat_cpu(0, 0);
    srat_cpu(1, 1);
    srat_mem(0, 128 * MiB, 0);
    srat_mem(128 * MiB, 128 * MiB, 1);
    srat_mem(256 * MiB, 256 * MiB, 2);
    numa_init(&ai, usable, 3);
    CHECK_EQ(numa_nnodes, 3);
    CHECK_EQ(numa_nodes[2].cpumask, 0);
    CHECK_EQ(numa_node_of_paddr(400 * MiB), 2);
    numa_print();
    CHECK_LOG("numa: node 2 cpus none mem 212M dist 20 20 10\n");
}

static void t_many_ranges_in_one_node(void)
{
    set_cpus(1);
    set_srat(1);
    srat_cpu(0, 0);
    for (int i = 0; i < 20; i++)
        srat_mem(i * MiB, MiB, 0);
    numa_init(&ai, usable, 3);
    CHECK_EQ(numa_nodes[0].nranges, NUMA_MAX_RANGES);
    CHECK_LOG("numa: node 0 has more than 16 ranges");
}

static void t_node_of_cpu_bounds(void)
{
    set_cpus(2);
    numa_init(&ai, usable, 3);
    CHECK_EQ(numa_node_of_cpu(-1), 0);
    CHECK_EQ(numa_node_of_cpu(64), 0);
    CHECK_EQ(numa_node_of_cpu(1000), 0);
}

static void t_reinit_clears_state(void)
{
    set_cpus(4);
    set_srat(2);
    for (int i = 0; i < 4; i++)
        srat_cpu(i, i / 2);
    srat_mem(0, 256 * MiB, 0);
    srat_mem(256 * MiB, 256 * MiB, 1);
    ai.have_slit = true;
    ai.slit_n = 2;
    ai.slit[0][0] = ai.slit[1][1] = 10;
    ai.slit[0][1] = ai.slit[1][0] = 40;
    numa_init(&ai, usable, 3);
    CHECK_EQ(numa_distance(0, 1), 40);
    set_cpus(4);
    numa_init(&ai, usable, 3);
    CHECK_EQ(numa_nnodes, 1);
    CHECK_EQ(numa_nodes[1].cpumask, 0);
    CHECK_EQ(numa_distance(0, 1), 20);
}

static void t_format_cpu_list(void)
{
    char b[64];
    CHECK_EQ(format_cpu_list(b, sizeof b, 0), 0);
    CHECK_STR(b, "");
    format_cpu_list(b, sizeof b, 0xF);
    CHECK_STR(b, "0-3");
    format_cpu_list(b, sizeof b, 0xE5);
    CHECK_STR(b, "0,2,5-7");
    format_cpu_list(b, sizeof b, 1ULL << 63);
    CHECK_STR(b, "63");
    format_cpu_list(b, sizeof b, ~0ULL);
    CHECK_STR(b, "0-63");
    format_cpu_list(b, sizeof b, 0x5);
    CHECK_STR(b, "0,2");
    format_cpu_list(b, sizeof b, 0xC000000000000003ULL);
    CHECK_STR(b, "0-1,62-63");
    format_cpu_list(b, sizeof b, 0x2);
    CHECK_STR(b, "1");
    /* Truncation keeps a terminated prefix and reports the full length. */
    CHECK_EQ(format_cpu_list(b, 4, 0xE5), 7);
    CHECK_STR(b, "0,2");
    CHECK_EQ(format_cpu_list(NULL, 0, 0xE5), 7);
    char big[200];
    CHECK_EQ(format_cpu_list(big, sizeof big, 0x5555555555555555ULL), 32 * 2 - 1 + 27);
}

int main(void)
{
    RUN(t_no_srat_one_node);
    RUN(t_no_srat_no_madt);
    RUN(t_no_srat_64_cpus);
    RUN(t_two_nodes_intersection);
    RUN(t_slit_distances);
    RUN(t_cpu_not_in_srat);
    RUN(t_memory_only_node);
    RUN(t_many_ranges_in_one_node);
    RUN(t_node_of_cpu_bounds);
    RUN(t_reinit_clears_state);
    RUN(t_format_cpu_list);
    return test_summary("test_numa");
}
