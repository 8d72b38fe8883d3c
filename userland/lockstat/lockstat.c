/*
 * lockstat: which kernel locks a command hit and missed (seed 003's
 * instrumentation, read through Tempest's statistics system calls).
 *
 *   lockstat [-s hits|misses|ratio|wait|hold] [-n N] [-c CLASS] [-d] [-j]
 *            [command [args...]]
 *   lockstat -e [command [args...]]
 *
 * With a command: reset the statistics, run it, take a snapshot and print
 * it; lockstat exits with the command's status.  Without one: print the
 * statistics since boot (or since the last reset).
 *
 * The table has one row per lock class that was acquired: class, kind,
 * hits, misses, miss ratio, total and longest wait, total hold (times in
 * microseconds), sorted by the key -s names, largest first (default: miss
 * ratio).  -n keeps the first N rows (default 25; 0 for all).  -c CLASS
 * shows only that class, followed by its most contended instances.  -d
 * adds the disk queues.  -j prints the same as one JSON object instead.
 *
 * -e prints instead the system calls the kernel refused with ENOSYS, one
 * line "enosys NUMBER COUNT" each (numbers of 511 and up are counted at
 * 511): those the command made, or all since boot without a command.  It
 * is how to find which calls a program needs that the kernel lacks.
 *
 * On a kernel without these calls (Linux) it says so and exits 2.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../kern/abi/tempest_abi.h"

enum key { KEY_HITS, KEY_MISSES, KEY_RATIO, KEY_WAIT, KEY_HOLD };

struct opts {
    enum key key;
    int top;
    const char *cls;
    int disks, json;
};

static const char *const kind_names[] = LOCKSTAT_KIND_NAMES;
static uint64_t tsc_hz;

static void usage(void)
{
    fprintf(stderr, "usage: lockstat [-s hits|misses|ratio|wait|hold] [-n N] [-c CLASS] [-d] "
                    "[-j] [command [args...]]\n"
                    "       lockstat -e [command [args...]]\n");
    exit(2);
}

/* Ask for a snapshot with call nr until the buffer is large enough (a lock
 * or disk may appear between asking the size and copying). */
static void *snapshot(long nr, size_t *lenp)
{
    size_t need = 0;
    for (int tries = 0; tries < 8; tries++) {
        long r = syscall(nr, NULL, 0, &need);
        if (r < 0 && errno == ENOSYS) {
            fprintf(stderr, "lockstat: this kernel keeps no lock statistics "
                            "(call %ld: ENOSYS)\n", nr);
            exit(2);
        }
        if (r < 0 && errno != ENOSPC) {
            perror("lockstat: snapshot");
            exit(2);
        }
        void *buf = malloc(need);
        if (!buf) {
            perror("lockstat");
            exit(2);
        }
        r = syscall(nr, buf, need, &need);
        if (r >= 0) {
            *lenp = (size_t)r;
            return buf;
        }
        free(buf);
        if (errno != ENOSPC) {
            perror("lockstat: snapshot");
            exit(2);
        }
    }
    fprintf(stderr, "lockstat: the snapshot keeps growing\n");
    exit(2);
}

static double us(uint64_t cycles)
{
    return tsc_hz ? (double)cycles * 1e6 / (double)tsc_hz : 0.0;
}

static double ratio(const struct lockstat_class_rec *c)
{
    return c->hits ? (double)c->misses / (double)c->hits : 0.0;
}

static enum key sort_key;

static double key_of(const struct lockstat_class_rec *c)
{
    switch (sort_key) {
    case KEY_HITS:   return (double)c->hits;
    case KEY_MISSES: return (double)c->misses;
    case KEY_WAIT:   return (double)c->wait_cycles;
    case KEY_HOLD:   return (double)c->hold_cycles;
    default:         return ratio(c);
    }
}

static int by_key(const void *a, const void *b)
{
    const struct lockstat_class_rec *x = *(const struct lockstat_class_rec *const *)a;
    const struct lockstat_class_rec *y = *(const struct lockstat_class_rec *const *)b;
    double kx = key_of(x), ky = key_of(y);
    if (kx != ky)
        return kx < ky ? 1 : -1;
    if (x->hits != y->hits)
        return x->hits < y->hits ? 1 : -1;
    return strcmp(x->name, y->name);
}

static const char *kind_name(uint32_t kind)
{
    return kind < sizeof kind_names / sizeof kind_names[0] ? kind_names[kind] : "?";
}

/* The classes to print, sorted, in rows[]; returns how many. */
static int select_rows(const struct lockstat_snapshot_hdr *h, const struct opts *o,
                       const struct lockstat_class_rec **rows)
{
    const struct lockstat_class_rec *c = (const void *)(h + 1);
    int n = 0;
    for (uint32_t i = 0; i < h->nclasses; i++) {
        if (o->cls ? strcmp(c[i].name, o->cls) == 0 : c[i].hits > 0)
            rows[n++] = &c[i];
    }
    sort_key = o->key;
    qsort(rows, (size_t)n, sizeof rows[0], by_key);
    if (o->top > 0 && n > o->top)
        n = o->top;
    return n;
}

static void print_table(const struct lockstat_snapshot_hdr *h, const struct opts *o,
                        const struct lockstat_class_rec **rows, int n)
{
    printf("%-20s %-11s %12s %10s %8s %12s %10s %12s\n", "class", "kind", "hits", "misses",
           "miss%", "wait_us", "maxwait_us", "hold_us");
    for (int i = 0; i < n; i++) {
        const struct lockstat_class_rec *c = rows[i];
        printf("%-20s %-11s %12llu %10llu %7.3f%% %12.1f %10.1f %12.1f\n", c->name,
               kind_name(c->kind), (unsigned long long)c->hits, (unsigned long long)c->misses,
               100.0 * ratio(c), us(c->wait_cycles), us(c->max_wait), us(c->hold_cycles));
    }
    if (!o->cls)
        return;
    const struct lockstat_inst_rec *in =
        (const void *)((const struct lockstat_class_rec *)(h + 1) + h->nclasses);
    printf("\n%-20s %-20s %18s %12s %10s %12s\n", "class", "instance", "address", "hits",
           "misses", "wait_us");
    for (uint32_t i = 0; i < h->ninst; i++)
        if (strcmp(in[i].cls, o->cls) == 0)
            printf("%-20s %-20s %#18llx %12llu %10llu %12.1f\n", in[i].cls,
                   in[i].name[0] ? in[i].name : "-", (unsigned long long)in[i].addr,
                   (unsigned long long)in[i].hits, (unsigned long long)in[i].misses,
                   us(in[i].wait_cycles));
}

static void print_disks(const struct blkstat_snapshot_hdr *d)
{
    const struct blkstat_rec *r = (const void *)(d + 1);
    printf("\n%-8s %10s %10s %10s %10s %6s %8s %6s %7s %10s %10s\n", "disk", "ops", "reads",
           "writes", "blocks", "errors", "avgq", "maxq", "busy%", "wait_us", "svc_us");
    for (uint32_t i = 0; i < d->ndisks; i++, r++) {
        double el = (double)r->elapsed_tsc;
        printf("%-8s %10llu %10llu %10llu %10llu %6llu %8.2f %6llu %6.2f%% %10.1f %10.1f\n",
               r->name, (unsigned long long)r->ops, (unsigned long long)r->reads,
               (unsigned long long)r->writes, (unsigned long long)r->blocks,
               (unsigned long long)r->errors, el > 0 ? (double)r->qlen_tsc / el : 0.0,
               (unsigned long long)r->qlen_max, el > 0 ? 100.0 * (double)r->busy_tsc / el : 0.0,
               r->ops ? us(r->wait_tsc) / (double)r->ops : 0.0,
               r->ops ? us(r->service_tsc) / (double)r->ops : 0.0);
    }
}

static void print_json(const struct lockstat_snapshot_hdr *h, const struct opts *o,
                       const struct lockstat_class_rec **rows, int n,
                       const struct blkstat_snapshot_hdr *d)
{
    printf("{\"version\": %u, \"tsc_hz\": %llu, \"classes\": [", h->version,
           (unsigned long long)h->tsc_hz);
    for (int i = 0; i < n; i++) {
        const struct lockstat_class_rec *c = rows[i];
        printf("%s\n  {\"class\": \"%s\", \"kind\": \"%s\", \"hits\": %llu, \"misses\": %llu, "
               "\"miss_ratio\": %.6f, \"wait_us\": %.3f, \"max_wait_us\": %.3f, "
               "\"hold_us\": %.3f, \"instances\": %llu}", i ? "," : "", c->name,
               kind_name(c->kind), (unsigned long long)c->hits, (unsigned long long)c->misses,
               ratio(c), us(c->wait_cycles), us(c->max_wait), us(c->hold_cycles),
               (unsigned long long)c->ninstances);
    }
    printf("]");
    if (d) {
        const struct blkstat_rec *r = (const void *)(d + 1);
        printf(",\n \"disks\": [");
        for (uint32_t i = 0; i < d->ndisks; i++, r++)
            printf("%s\n  {\"disk\": \"%s\", \"ops\": %llu, \"reads\": %llu, \"writes\": %llu, "
                   "\"blocks\": %llu, \"errors\": %llu, \"max_queue\": %llu}", i ? "," : "",
                   r->name, (unsigned long long)r->ops, (unsigned long long)r->reads,
                   (unsigned long long)r->writes, (unsigned long long)r->blocks,
                   (unsigned long long)r->errors, (unsigned long long)r->qlen_max);
        printf("]");
    }
    printf("}\n");
    (void)o;
}

#define ENOSYS_NRS 512

/* The ENOSYS count of each system call number since boot. */
static void enosys_counts(uint64_t counts[ENOSYS_NRS])
{
    memset(counts, 0, ENOSYS_NRS * sizeof counts[0]);
    if (syscall(TEMPEST_SYS_ENOSYS_COUNTS, counts, (long)ENOSYS_NRS) < 0) {
        fprintf(stderr, "lockstat: this kernel keeps no ENOSYS counts (%s)\n",
                strerror(errno));
        exit(2);
    }
}

static int run_command(char **argv);

/* -e: the calls refused with ENOSYS (during the command, if any). */
static int print_enosys(char **argv)
{
    static uint64_t before[ENOSYS_NRS], after[ENOSYS_NRS];
    int status = 0;
    if (argv[0]) {
        enosys_counts(before);
        status = run_command(argv);
    }
    enosys_counts(after);
    for (int nr = 0; nr < ENOSYS_NRS; nr++)
        if (after[nr] != before[nr])
            printf("enosys %d %llu\n", nr, (unsigned long long)(after[nr] - before[nr]));
    return status;
}

static int run_command(char **argv)
{
    if (syscall(TEMPEST_SYS_LOCKSTAT_RESET) < 0 && errno == ENOSYS) {
        fprintf(stderr, "lockstat: this kernel keeps no lock statistics (ENOSYS)\n");
        exit(2);
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("lockstat: fork");
        exit(2);
    }
    if (pid == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, "lockstat: %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            perror("lockstat: wait");
            exit(2);
        }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static enum key parse_key(const char *s)
{
    static const char *const names[] = { "hits", "misses", "ratio", "wait", "hold" };
    for (int i = 0; i < 5; i++)
        if (strcmp(s, names[i]) == 0)
            return (enum key)i;
    usage();
    return KEY_RATIO;
}

int main(int argc, char **argv)
{
    struct opts o = { .key = KEY_RATIO, .top = 25 };
    int c, enosys = 0;
    while ((c = getopt(argc, argv, "+s:n:c:dje")) != -1) {
        switch (c) {
        case 'e': enosys = 1; break;
        case 's': o.key = parse_key(optarg); break;
        case 'n': o.top = atoi(optarg); break;
        case 'c': o.cls = optarg; break;
        case 'd': o.disks = 1; break;
        case 'j': o.json = 1; break;
        default:  usage();
        }
    }
    if (enosys)
        return print_enosys(argv + optind);
    int status = optind < argc ? run_command(argv + optind) : 0;
    size_t len, dlen;
    struct lockstat_snapshot_hdr *h = snapshot(TEMPEST_SYS_LOCKSTAT_SNAPSHOT, &len);
    struct blkstat_snapshot_hdr *d =
        o.disks || o.json ? snapshot(TEMPEST_SYS_BLKSTAT_SNAPSHOT, &dlen) : NULL;
    if (h->version != LOCKSTAT_VERSION) {
        fprintf(stderr, "lockstat: snapshot version %u, expected %u\n", h->version,
                LOCKSTAT_VERSION);
        return 2;
    }
    tsc_hz = h->tsc_hz;
    const struct lockstat_class_rec **rows = calloc(h->nclasses + 1, sizeof *rows);
    int n = select_rows(h, &o, rows);
    if (o.json)
        print_json(h, &o, rows, n, d);
    else {
        print_table(h, &o, rows, n);
        if (d)
            print_disks(d);
    }
    return status;
}
