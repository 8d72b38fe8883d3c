/*
 * lockstat's pieces (userland/lockstat/): snap.c takes and subtracts the
 * kernel's snapshots, print.c prints them as tables or JSON, lockstat.c
 * reads the command line and runs the command.
 */
#ifndef LOCKSTAT_H
#define LOCKSTAT_H

#include <stddef.h>
#include <stdint.h>

#include "../../kern/abi/tempest_abi.h"

enum key { KEY_HITS, KEY_MISSES, KEY_RATIO, KEY_WAIT, KEY_HOLD };

struct opts {
    enum key key;
    int top;                /* rows kept (0: all) */
    const char *cls;        /* -c: exactly this class, with its instances */
    const char *pattern;    /* -l: classes whose names contain this */
    int disks, json, sites, hist, percpu;
    double interval;        /* -i: seconds between tables (0: one table) */
};

/* A lock statistics snapshot and the arrays inside it. */
struct snap {
    void *buf;
    struct lockstat_snapshot_hdr *h;
    struct lockstat_class_rec *cls;
    struct lockstat_inst_rec *inst;
    struct lockstat_site_rec *sites;
    struct lockstat_cpu_rec *cpus;
};

/* The kernel's lock and disk statistics now; exits 2 with one line on
 * any failure (a kernel without them, a version this tool does not read). */
void snap_take(struct snap *s);
void *blk_take(void);
/* cur minus prev, in place in cur: the counts of the interval between
 * them (longest waits stay as they were: they cannot be subtracted). */
void snap_subtract(struct snap *cur, const struct snap *prev);
void snap_free(struct snap *s);
/* A copy of from, with a buffer of its own. */
void snap_copy(struct snap *to, const struct snap *from);

/* Which interval of a -i run a table covers: its number from 1 (0 for
 * the whole run, printed last) and its bounds in seconds since the
 * command started. */
struct interval {
    int index;
    double t0, t1;
};

/* Print one table (or one JSON object) of s; iv is NULL for the single
 * table of a run without -i. */
void print_snapshot(const struct snap *s, const struct opts *o,
                    const struct blkstat_snapshot_hdr *d, const struct interval *iv);

/* The address of the lock whose own site r is, or 0 for a class's site. */
uint64_t site_inst_addr(const struct snap *s, const struct lockstat_site_rec *r);

/* Cycles to microseconds with the snapshot's TSC rate. */
double cycles_us(const struct snap *s, uint64_t cycles);

#endif
