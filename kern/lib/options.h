/*
 * Kernel command-line options (DESIGN §3).  Parsed once on the boot CPU
 * before any other CPU starts; read-only afterwards, so no lock.
 */
#ifndef KERN_OPTIONS_H
#define KERN_OPTIONS_H

#include <kern/lib/types.h>

enum lock_algo { LOCK_SPIN, LOCK_MCS, LOCK_H2MCS };
enum cache_model { CACHE_SINGLE, CACHE_HASHFREE, CACHE_SSAC };
enum sched_model { SCHED_GLOBAL, SCHED_PERCPU, SCHED_CLUSTER };
enum wakeup_mode { WAKEUP_ALL, WAKEUP_ONE };
/* alloc=: where user data pages come from (kern/vm/page.c, page_data_node). */
enum alloc_policy { ALLOC_LOCAL, ALLOC_INTERLEAVE };
enum lockstat_mode { LOCKSTAT_OFF, LOCKSTAT_ON, LOCKSTAT_CONTENDED };
enum crash_kind { CRASH_NONE, CRASH_PAGEFAULT, CRASH_DIVIDE, CRASH_PANIC, CRASH_DEADLOCK,
                  CRASH_KMEM_DOUBLE, CRASH_KMEM_OVERRUN, CRASH_KMEM_UAF, CRASH_KMEM_FOREIGN };

/* A string option's room, its terminating NUL included.  ktest= lists of a
 * dozen test names (tests/cluster_check.py's) run past 200 bytes; GRUB's
 * whole command line has 512 (kern/arch/multiboot.h). */
#define OPT_STR_MAX 320

/* syncwrites=: off, on (structural metadata written synchronously), data
 * (that, and every write(2) of a regular file as O_SYNC). */
enum { SYNCWRITES_OFF, SYNCWRITES_ON, SYNCWRITES_DATA };

#ifdef TEMPEST_KCSAN
/* kcsan_interval= and kcsan_delay= (microseconds): defaults and the
 * largest accepted (a watch keeps interrupts off for its delay). */
#define KCSAN_INTERVAL_DEFAULT 2000
#define KCSAN_DELAY_DEFAULT    20
#define KCSAN_DELAY_MAX        1000
#endif

struct options {
    int lock;           /* enum lock_algo */
    int cache;          /* enum cache_model */
    int sched;          /* enum sched_model */
    int cluster;        /* CPUs per cluster; 0 means "node" */
    int clustering;     /* bool: cluster= was given, so Hurricane's clustering
                         * runs (kern/cluster/); not an option of its own */
    int wakeup;         /* enum wakeup_mode */
    int lockstat;       /* enum lockstat_mode */
    int syncwrites;     /* SYNCWRITES_*: a flag, or data */
    int witness;        /* bool */
    int kmemdebug;      /* bool: heap checking (kern/vm/kmem_debug.c) */
    int poweroff;       /* bool: power off when boot and tests finish */
    int lockdump;       /* bool: print lock statistics before power-off */
    int crash;          /* enum crash_kind: fault on purpose after boot (tests the panic path) */
    char ktest[OPT_STR_MAX];    /* "", "all", or a comma list of test names */
    char kbench[OPT_STR_MAX];   /* "", or a comma list of benchmark names */
    char root[32];              /* root file system's disk: "vda", "ata0", "ram0"; "" none */
    char fsprobe[OPT_STR_MAX];  /* disks to mount, walk and report (kern/vfs/fsprobe.c) */
    char init[64];              /* program run as pid 1 (kern/proc/proc.c): "" means
                                 * /sbin/init when it exists, "none" no user space */
    int maxcpus;        /* bring only CPUs 0..maxcpus-1 online; 0 means all
                         * (kern/arch/smp.c, smp_cpus_to_use) */
    int kprof;          /* bool: the tick samples the kernel (kern/arch/kprof.c) */
    int alloc;          /* enum alloc_policy: user data pages from the allocating
                         * CPU's node, or round robin over the nodes (SALSA) */
    int pvspin;         /* bool: queue-lock waiters halt after a bounded spin and
                         * are kicked (kern/lock/pvspin.c) */
    char ip[48];        /* eth0's static address: "A.B.C.D/PREFIX[,GATEWAY]"
                         * (kern/net/inet/ether.c); "" none */
#ifdef TEMPEST_KCSAN
    /* The data-race detector's (kern/kcsan/kcsan.c), in a KCSAN=1 kernel only. */
    int kcsan;          /* bool: watch (default on) */
    int kcsan_interval; /* one plain access in this many per CPU is watched */
    int kcsan_delay;    /* microseconds a watchpoint stays armed */
#endif
};

extern struct options opts;
/* Whether options_parse/options_validate report problems (tests turn it off). */
extern bool options_verbose;
#define opt_poweroff (opts.poweroff)

/* Parse a command line into o (starting from the defaults).  Problems are
 * reported on the console and the default kept.  Returns the number of
 * problems found. */
int options_parse(struct options *o, const char *cmdline);

/* Checks that need the CPU count (cluster=); call once it is known. */
int options_validate(struct options *o, int ncpus);

/* Print "options: name=value ..." with every effective value. */
void options_print(const struct options *o);
/* Format the same into buf. */
int options_format(const struct options *o, char *buf, size_t n);

/* Whether name is in the comma list (or the list is "all"); items ending
 * in "*" are prefixes. */
bool option_list_has(const char *list, const char *name);

/* Walk a comma list: returns the next item at or after *p with its length
 * in *len, and moves *p past it; NULL at the end.  Empty items are skipped.
 *   for (const char *p = list, *item; (item = option_list_next(&p, &len));) */
const char *option_list_next(const char **p, size_t *len);
/* Does the list item (len bytes) name name?  An item ending in '*' is a
 * prefix ("fs_*" names every name starting with "fs_"). */
bool option_item_matches(const char *item, size_t len, const char *name, size_t nlen);

/* Print fmt (one "%.*s" for the name) for every name in the comma list
 * for which known(name, len) is false; "all" names nothing.  Returns how
 * many. */
int option_list_report_unknown(const char *list, bool (*known)(const char *, size_t),
                               const char *fmt);

#endif
