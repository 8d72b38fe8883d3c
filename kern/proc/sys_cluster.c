/*
 * TEMPEST_SYS_CLUSTER_STATS (kern/abi/tempest_abi.h): each cluster's
 * counts of Hurricane's clustering (kern/cluster/), for lockstat -C.  Any
 * user may read them; without cluster= there are none (returns 0).
 */
#include <kern/proc/syscalls.h>
#include <kern/abi/tempest_abi.h>
#include <kern/cluster/cluster.h>
#include <kern/vm/as.h>
#include <kern/vm/kmem.h>
#include <kern/lib/errno.h>

SYSCALL_DECL(sys_cluster_stats)
{
    uint64_t ubuf = a0, n = a1;
    struct tempest_cluster_stat *st = kmalloc(MAX_CPUS * sizeof *st);
    if (!st)
        return -ENOMEM;
    int ncl = cluster_stats_get(st, MAX_CPUS);
    size_t copy = MIN((size_t)ncl, (size_t)n);
    int err = copy && copyout(st, (void *)ubuf, copy * sizeof *st);
    kfree(st);
    return err ? -EFAULT : ncl;
}
