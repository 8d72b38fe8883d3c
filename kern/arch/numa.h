/* NUMA topology: which node each CPU and each physical address belongs
 * to, and how far apart the nodes are.  Filled once at boot by numa_init()
 * and read-only afterwards. */
#ifndef KERN_NUMA_H
#define KERN_NUMA_H

#include <kern/lib/types.h>
#include <drivers/platform/acpi.h>

#define MAX_NODES           ACPI_MAX_NODES
#define NUMA_MAX_RANGES     16      /* SRAT memory ranges kept per node */
#define NUMA_MAX_CPUS       64      /* cpumask is one uint64_t */

/* A usable RAM range from the Multiboot2 memory map, end exclusive. */
struct mmap_range {
    uint64_t base, end;
};

struct numa_node {
    int id;                     /* its index in numa_nodes[] */
    uint64_t cpumask;           /* bit i = logical cpu i */
    uint64_t mem_bytes;         /* usable RAM inside the node's ranges */
    int nranges;
    struct {
        uint64_t base, end;     /* the node's SRAT ranges (end exclusive);
                                   without an SRAT, the usable RAM ranges */
    } range[NUMA_MAX_RANGES];
};

extern int numa_nnodes;
extern struct numa_node numa_nodes[MAX_NODES];

/* Build the topology from the ACPI tables and the usable RAM ranges.
 * Logical cpu i is ai->cpu[i]; with no MADT CPUs, cpu 0 alone. */
void numa_init(const struct acpi_info *ai, const struct mmap_range *usable, int nusable);

/* Forget logical CPUs n and up (maxcpus=): they leave every node's mask. */
void numa_limit_cpus(int n);

int numa_node_of_cpu(int cpu);          /* 0 for an unknown cpu */
int numa_node_of_paddr(uint64_t pa);    /* node whose range holds pa; 0 if none */
int numa_distance(int a, int b);        /* SLIT; else 10 local, 20 remote */
/* One line per node: "numa: node N cpus LIST mem SIZEM dist D0 D1 ..."
 * (LIST is "none" for a node without CPUs; SIZE is in MiB). */
void numa_print(void);

/* Format a CPU mask as ranges ("0-3", "0,2,5-7", "" for none).  Returns
 * the length snprintf would have produced. */
int format_cpu_list(char *buf, size_t n, uint64_t mask);

#endif
