/*
 * Hurricane's hierarchical clustering (seed 000, section 2.2): the CPUs
 * divided into clusters, one instance of a clustered structure per
 * cluster, and cross-cluster calls.  Theory in kern/cluster/cluster.c.
 */
#ifndef KERN_CLUSTER_H
#define KERN_CLUSTER_H

#include <kern/lib/types.h>
#include <kern/arch/cpu.h>

/* What one cluster did (the statistics lockstat -C and /proc/clusters
 * show).  Counted by the cluster that did it, with atomic adds. */
struct cluster_stats {
    uint64_t calls_out;     /* cross-cluster calls this cluster made */
    uint64_t calls_in;      /* cross-cluster calls this cluster served */
    uint64_t retries;       /* calls that met a reserve bit and were retried */
    uint64_t replications;  /* replicas made here of another cluster's data */
    uint64_t combined;      /* requests that waited on a local place-holder
                             * instead of calling out themselves */
    uint64_t invalidations; /* replicas removed here by another cluster */
    uint64_t reserve_waits; /* waits on a reserve bit (hybrid locks) */
    uint64_t pool_refills;  /* batches its faults' page pool took from its node
                             * (kern/cluster/cl_vm.c) */
} __cacheline;

/*
 * Which CPU is in which cluster.  The system's map (cluster_sys) is built
 * at boot from cluster=; tests build maps of other sizes on the same CPUs.
 * [c] constant once built, but stats [a].
 */
struct cluster_map {
    int ncl;                            /* clusters */
    int per;                            /* CPUs per cluster; 0: one per node */
    int8_t cl_of[MAX_CPUS];             /* a CPU's cluster */
    int8_t idx_of[MAX_CPUS];            /* a CPU's index within its cluster */
    int8_t size[MAX_CPUS];              /* CPUs in each cluster */
    int8_t node[MAX_CPUS];              /* each cluster's memory node */
    int8_t member[MAX_CPUS][MAX_CPUS];  /* [cluster][index]: the CPU */
    struct cluster_stats stats[MAX_CPUS];
};

/* A cross-cluster call: fn(arg) run on a CPU of the target cluster, from
 * its cross-cluster interrupt (interrupts off: fn must not sleep or wait
 * for anything a reserve bit guards; it fails instead).  The caller owns
 * the struct; it may be reused once cluster_call_wait returned. */
struct cluster_call {
    long (*fn)(void *arg);
    void *arg;
    long result;                        /* fn's result, once done */
    int target;                         /* the CPU it was sent to */
    volatile int done;                  /* [a] set by the target, release */
    struct cluster_call *next;          /* [a] the target CPU's inbox */
};

/* Whether cluster= was given.  Without it nothing here runs; the hooks
 * in other subsystems cost one load of this boot-time flag. [c] */
extern bool cluster_active;
static inline bool cluster_on(void) { return cluster_active; }
/* The boot's map (NULL when clustering is off). */
struct cluster_map *cluster_sys(void);
/* Boot, after sched_init: build the system map and take the interrupt. */
void cluster_init(void);

/* Build m with per CPUs per cluster over the online CPUs (0: one cluster
 * per NUMA node; per >= ncpus: one cluster). */
void cluster_map_build(struct cluster_map *m, int per);
/* The calling CPU's cluster in m. */
int cluster_self(const struct cluster_map *m);
/* The CPU a call from src to cluster cl goes to: the ith CPU of the source
 * cluster calls the ith of the target, wrapping when the target is smaller. */
int cluster_target_cpu(const struct cluster_map *m, int src, int cl);

/* Memory for cluster cl's instance of a structure: size bytes, zeroed,
 * whole pages from the cluster's node (or the nearest with memory).
 * NULL when memory is exhausted. */
void *cluster_alloc_instance(const struct cluster_map *m, int cl, size_t size);
void cluster_free_instance(void *p, size_t size);

/* Call fn(arg) on cluster cl and wait for its result.  On the caller's own
 * cluster it runs at once, locally.  While waiting, this CPU serves the
 * calls sent to it, so two clusters calling each other never deadlock. */
long cluster_call(struct cluster_map *m, int cl, long (*fn)(void *), void *arg);
/* The same in two halves, so the caller can continue and wait later (or
 * send to several clusters and wait for all). */
void cluster_call_start(struct cluster_map *m, int cl, struct cluster_call *c,
                        long (*fn)(void *), void *arg);
long cluster_call_wait(struct cluster_call *c);

/* Section 2.3's optimistic protocol: the caller has reserved what it needs
 * after the call and dropped its locks.  Call fn on cluster cl; while it
 * answers -EDEADLK (it met a reserve bit), give the local reservations
 * back (undo), back off, take them again (redo: false when the state it
 * needs is gone, which ends the call with -EAGAIN) and call again.  Each
 * retry is counted.  undo and redo may be NULL. */
struct cluster_undo {
    void (*undo)(void *arg);
    bool (*redo)(void *arg);
    void *arg;
};
long cluster_call_optimistic(struct cluster_map *m, int cl, long (*fn)(void *), void *arg,
                             const struct cluster_undo *u);

/* Count an event for cluster cl of m. */
#define cluster_count(m, cl, field) \
    __atomic_add_fetch(&(m)->stats[(cl)].field, 1, __ATOMIC_RELAXED)

/* A bounded, randomized exponential back-off step (serving this CPU's
 * calls meanwhile when interrupts are off; yielding the CPU after a few
 * steps when this is a thread that may). */
void cluster_backoff(unsigned *attempt);

/* Serve the calls queued for this CPU (interrupts off, or from the
 * cross-cluster interrupt). */
void cluster_serve(void);

/* The statistics for user space: fills up to max entries, returns the
 * number of clusters (0 when clustering is off). */
struct tempest_cluster_stat;
int cluster_stats_get(struct tempest_cluster_stat *out, int max);

#endif
