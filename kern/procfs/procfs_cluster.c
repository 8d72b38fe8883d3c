/*
 * /proc/clusters: Hurricane clustering's counts (kern/cluster/), one line
 * per cluster after a header naming the columns; only the header when the
 * kernel runs without cluster=.  The same numbers as lockstat -C.
 */
#include <kern/procfs/procfs.h>
#include <kern/abi/tempest_abi.h>
#include <kern/cluster/cluster.h>
#include <kern/vm/kmem.h>
#include <kern/lib/errno.h>

int procfs_clusters(struct sbuf *sb)
{
    struct tempest_cluster_stat *st = kmalloc(MAX_CPUS * sizeof *st);
    if (!st)
        return -ENOMEM;
    int ncl = cluster_stats_get(st, MAX_CPUS);
    sbuf_printf(sb, "cluster cpus first_cpu node calls_out calls_in retries replications "
                    "combined invalidations reserve_waits pool_refills\n");
    for (int i = 0; i < ncl; i++)
        sbuf_printf(sb, "%u %u %u %u %lu %lu %lu %lu %lu %lu %lu %lu\n", st[i].cluster, st[i].ncpus,
                    st[i].first_cpu, st[i].node, st[i].calls_out, st[i].calls_in, st[i].retries,
                    st[i].replications, st[i].combined, st[i].invalidations,
                    st[i].reserve_waits, st[i].pool_refills);
    kfree(st);
    return 0;
}
