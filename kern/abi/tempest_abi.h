/*
 * Tempest's own system calls: the user ABI beyond Linux's.  This header is
 * shared by the kernel and user programs (userland/ includes it), so it
 * uses only <stdint.h> types and fixed-size records.
 *
 * The numbers sit far above Linux's range, so a Tempest binary run on
 * Linux gets ENOSYS, never another call.  Arguments and results follow the
 * Linux convention: rdi, rsi, rdx; a negative errno on failure.
 *
 *   TEMPEST_SYS_LOCKSTAT_RESET ()
 *       zero every lock statistic (classes, instances, call sites and
 *       histograms) and the disk statistics' counters.  Root only: any
 *       other user gets -EPERM (anyone may read them).
 *   TEMPEST_SYS_LOCKSTAT_SNAPSHOT (void *buf, size_t len, size_t *needed)
 *       copy out a snapshot: a struct lockstat_snapshot_hdr, then four
 *       arrays one after another: nclasses struct lockstat_class_rec (every
 *       class, with its wait and hold histograms), ninst struct
 *       lockstat_inst_rec (the most contended instances of each class),
 *       nsites struct lockstat_site_rec (the call sites of misses and of
 *       contended holds, grouped by class: the class's, then each of its
 *       instance records' own) and npercpu struct
 *       lockstat_cpu_rec (each class's counts on each CPU that used it).
 *       Returns the bytes copied.  When len is too small nothing is copied:
 *       the call returns -ENOSPC and stores the size needed at *needed
 *       (when needed is not NULL).
 *   TEMPEST_SYS_BLKSTAT_SNAPSHOT (void *buf, size_t len, size_t *needed)
 *       the same for the disks: a struct blkstat_snapshot_hdr, then ndisks
 *       struct blkstat_rec.
 *   TEMPEST_SYS_ENOSYS_COUNTS (uint64_t *counts, size_t n)
 *       how often each system call number below n was refused with ENOSYS
 *       since boot; returns how many numbers the kernel counts.
 */
#ifndef TEMPEST_ABI_H
#define TEMPEST_ABI_H

#include <stdint.h>

#define TEMPEST_SYS_LOCKSTAT_RESET      1000
#define TEMPEST_SYS_LOCKSTAT_SNAPSHOT   1001
#define TEMPEST_SYS_BLKSTAT_SNAPSHOT    1002
#define TEMPEST_SYS_ENOSYS_COUNTS       1003
#define TEMPEST_SYS_CLUSTER_STATS       1004

/* TEMPEST_SYS_CLUSTER_STATS (struct tempest_cluster_stat *buf, size_t n):
 * each cluster's counts (kern/cluster/), up to n entries; returns the
 * number of clusters, 0 when the kernel runs without cluster=. */
struct tempest_cluster_stat {
    uint32_t cluster, ncpus, node, first_cpu;
    uint64_t calls_out;         /* cross-cluster calls it made */
    uint64_t calls_in;          /* cross-cluster calls it served */
    uint64_t retries;           /* calls that met a reserve bit, retried */
    uint64_t replications;      /* replicas it made of other clusters' data */
    uint64_t combined;          /* requests combined into another's call */
    uint64_t invalidations;     /* its replicas removed by other clusters */
    uint64_t reserve_waits;     /* waits on reserve bits (hybrid locks) */
    uint64_t pool_refills;      /* batches its faults' page pool took from its node */
};

#define LOCKSTAT_VERSION 4

/* Histogram buckets: bucket 0 counts times of 0 and 1 cycle, bucket b
 * (1 <= b < LOCKSTAT_NBUCKETS - 1) times in [2^b, 2^(b+1)) cycles, and the
 * last bucket every time of 2^(LOCKSTAT_NBUCKETS-1) cycles or more. */
#define LOCKSTAT_NBUCKETS 32

struct lockstat_snapshot_hdr {
    uint32_t version;           /* LOCKSTAT_VERSION */
    uint32_t nclasses;
    uint32_t ninst;
    uint32_t nsites;
    uint64_t tsc_hz;            /* to turn cycles into time */
    uint32_t npercpu;
    uint32_t ncpus;             /* CPUs the kernel counts for */
    uint32_t mode;              /* 0 off, 1 on, 2 contended (lockstat=) */
    uint32_t reserved;          /* 0 */
};

/* enum lock_kind values of struct lockstat_class_rec's kind. */
#define LOCKSTAT_KIND_NAMES { "spin", "mutex_spin", "mutex_sleep", "rwlock", "resource" }

struct lockstat_class_rec {
    char name[32];
    uint32_t kind;              /* enum lock_kind (kern/lock/lock.h) */
    uint32_t reserved;          /* 0 */
    uint64_t hits, misses, wait_cycles, hold_cycles, max_wait;
    uint64_t ninstances;        /* live instances */
    /* Call-site events that found the class's site table full (their
     * counts are in hits/misses, but no site is named for them). */
    uint64_t miss_sites_lost, hold_sites_lost;
    /* pvspin=on: halts its waiters made, and kicks its releasers sent to
     * halted waiters (0 with pvspin=off; counted in every lockstat= mode). */
    uint64_t pv_halts, pv_kicks;
    uint64_t wait_hist[LOCKSTAT_NBUCKETS];  /* waits of acquisitions that missed */
    uint64_t hold_hist[LOCKSTAT_NBUCKETS];  /* hold times that were measured */
};

struct lockstat_inst_rec {
    char cls[32];
    char name[32];              /* instance name, or "" */
    uint64_t addr;              /* address of the lock_instance */
    uint64_t hits, misses, wait_cycles;
};

/* What a call site record counts. */
#define LOCKSTAT_SITE_MISS  0   /* where a waiter called the lock and found it busy */
#define LOCKSTAT_SITE_HOLD  1   /* where the holder took the lock a miss waited for */

struct lockstat_site_rec {
    char cls[32];
    uint32_t what;              /* LOCKSTAT_SITE_* */
    uint32_t inst;              /* 0: the class's site (summed over its locks);
                                   i + 1: instance record i's own */
    uint64_t site;              /* the return address of the locking call */
    uint64_t count;             /* events */
    uint64_t cycles;            /* cycles waited: at this site (miss), or for holds taken here (hold) */
    char sym[64];               /* "function+0xOFF", or "" when not in the symbol table */
};

struct lockstat_cpu_rec {
    uint32_t cls;               /* index into the class records */
    uint32_t cpu;
    uint64_t hits, misses, wait_cycles, hold_cycles;
};

#define BLKSTAT_VERSION 1

struct blkstat_snapshot_hdr {
    uint32_t version;           /* BLKSTAT_VERSION */
    uint32_t ndisks;
    uint64_t tsc_hz;
};

struct blkstat_rec {
    char name[16];
    uint64_t ops, reads, writes, blocks, errors;
    uint64_t qlen_sum, qlen_samples, qlen_max;  /* queue length seen by arrivals */
    uint64_t busy_tsc, qlen_tsc, wait_tsc, service_tsc, elapsed_tsc;
};

#endif
