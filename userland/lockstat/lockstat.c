/*
 * lockstat: which kernel locks a command hit and missed, from where, and
 * for how long (seed 003's instrumentation, deepened in the manner of
 * illumos lockstat(8) and Linux's lock_stat; read through Tempest's
 * statistics system calls).
 *
 *   lockstat [-kHPdj] [-s KEY] [-n N] [-c CLASS | -l PATTERN] [-i SECS]
 *            [-o FILE] [command [args...]]
 *   lockstat -e [command [args...]]
 *   lockstat -C [command [args...]]
 *   lockstat -h
 *
 * With a command: run it and print the statistics of its run; lockstat
 * exits with the command's status.  Root resets the statistics first (so
 * the longest waits are the run's own); anyone else cannot, and gets the
 * difference between a snapshot before and one after.  Without a command:
 * the statistics since boot or the last reset.  -i SECS prints one table
 * (or JSON object, one a line) per interval while the command runs, then
 * one for the whole run (interval 0).
 * `lockstat -h` lists every option and column.
 *
 * -e prints instead the system calls the kernel refused with ENOSYS, one
 * line "enosys NUMBER COUNT" each (numbers of 511 and up are counted at
 * 511): those the command made, or all since boot without a command.
 *
 * -C prints each cluster's counts of Hurricane's clustering (cluster=):
 * cross-cluster calls, retries, replications, combined requests,
 * invalidations, reserve-bit waits and the fault page pools' refills.
 *
 * On a kernel without these calls (Linux) it says so and exits 2.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lockstat.h"

static const char usage_text[] =
    "usage: lockstat [-kHPdj] [-s hits|misses|ratio|wait|hold] [-n N] [-c CLASS | -l PATTERN]\n"
    "                [-i SECS] [-o FILE] [command [args...]]\n"
    "       lockstat -e [command [args...]]\n"
    "       lockstat -C [command [args...]]\n"
    "       lockstat -h\n";

static const char help_text[] =
    "\n"
    "Runs command and prints the kernel lock statistics of its run (without a\n"
    "command: since boot or the last reset).  Exits with the command's status;\n"
    "2 on a bad option or a kernel without lock statistics.\n"
    "\n"
    "options:\n"
    "  -s KEY      sort the classes by hits, misses, ratio (the default), wait or hold\n"
    "  -n N        print the first N classes (default 25; 0 for all)\n"
    "  -c CLASS    only this class, followed by its most contended instances\n"
    "  -l PATTERN  only the classes whose names contain PATTERN\n"
    "  -k          call sites: where misses were called, and where the holders of\n"
    "              contended locks took them\n"
    "  -H          histograms of wait and hold times (log2 buckets)\n"
    "  -P          each class's counts on each CPU\n"
    "  -d          the disk queues\n"
    "  -i SECS     one table per SECS seconds while the command runs (needs a command),\n"
    "              then one for the whole run (interval 0)\n"
    "  -o FILE     print into FILE; the command keeps the standard output\n"
    "  -j          JSON instead of tables: one object per table, on one line with -i;\n"
    "              every object has the sites, histograms and per-CPU counts, and\n"
    "              its most contended instances (top_instances) with their own sites\n"
    "  -e          the system calls the kernel refused with ENOSYS instead\n"
    "  -C          each cluster's counts instead (cluster=): cross-cluster calls made\n"
    "              and served, retries (a remote operation met a reserve bit),\n"
    "              replicas made, requests combined into another's call, replicas\n"
    "              invalidated by other clusters, waits on reserve bits, batches\n"
    "              the cluster's fault page pool took from its node (refills)\n"
    "  -h          this text\n"
    "\n"
    "class table:\n"
    "  class       the lock class (what the locks of the class protect)\n"
    "  kind        spin, mutex_spin, mutex_sleep, rwlock or resource\n"
    "  hits        acquisitions (with lockstat=contended only those that missed:\n"
    "              an acquisition that finds its lock free is not recorded at all)\n"
    "  misses      acquisitions that found the lock busy (a sleeping lock counts each\n"
    "              failed attempt after a wake-up, so misses may exceed hits)\n"
    "  miss%       misses per hit\n"
    "  wait_us     total time waiting for the locks of the class\n"
    "  maxwait_us  the longest single wait since the last reset\n"
    "  hold_us     total time held: with lockstat=on every hold that missed and one\n"
    "              in 64 of the others (per lock), each of those counted 64 times;\n"
    "              only the holds of acquisitions that missed with lockstat=contended\n"
    "  halts       pvspin=on, shown when a class has any: the times a waiter stopped\n"
    "              spinning and halted its CPU (counted whatever lockstat= says)\n"
    "  kicks       pvspin=on: the times a release woke a halted waiter\n"
    "instances (-c): the class's most contended locks, by name and address, with\n"
    "  their hits, misses and wait\n"
    "call sites (-k):\n"
    "  what        miss: the call that found the lock busy; hold: where the holder\n"
    "              of a lock that others waited for took it\n"
    "  count       events at that site\n"
    "  time_us     miss: time waited there; hold: time others waited while a lock\n"
    "              taken there was held\n"
    "  site        function+offset in the kernel (the return address of the call)\n"
    "  A class keeps 32 sites of each kind, each on one lock; events beyond are\n"
    "  counted as not named.  Then the same columns for each of the class's most\n"
    "  contended instances (by name, or address), its own sites\n"
    "histograms (-H): per class, the number of waits (of acquisitions that missed)\n"
    "  and of timed holds whose time is at least the bucket's lower bound, in\n"
    "  microseconds, and below the next bucket's\n"
    "per CPU (-P): class, cpu, hits, misses, miss%, wait_us and hold_us of the\n"
    "  class's locks taken on that CPU (a CPU's hits are its acquisitions that\n"
    "  missed, and with lockstat=on 64 for each sampled hold of the others: an\n"
    "  estimate; the class's hits are exact, counted per lock)\n"
    "disks (-d): ops, reads, writes, blocks, errors, the average and longest\n"
    "  queue, busy%, and the average wait and service time per request\n"
    "\n"
    "Only root resets the statistics; for other users lockstat subtracts a snapshot\n"
    "taken before the command, and the longest wait and the disks are since the\n"
    "last reset.\n";

static void usage(void)
{
    fputs(usage_text, stderr);
    exit(2);
}

static void bad_option(const char *what, const char *arg)
{
    fprintf(stderr, "lockstat: bad %s '%s'\n", what, arg);
    usage();
}

/* ---- The command ---- */

/* With -o, the command's own standard output (lockstat's is the file). */
static int command_stdout = -1;

static pid_t start_command(char **argv)
{
    pid_t pid = fork();
    if (pid < 0) {
        perror("lockstat: fork");
        exit(2);
    }
    if (pid == 0) {
        if (command_stdout >= 0) {
            dup2(command_stdout, STDOUT_FILENO);
            close(command_stdout);
        }
        execvp(argv[0], argv);
        fprintf(stderr, "lockstat: %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    return pid;
}

static int exit_status(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int wait_command(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            perror("lockstat: wait");
            exit(2);
        }
    return exit_status(status);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait for pid until time `until`; true (and *status) if it ended. */
static int wait_until(pid_t pid, double until, int *status)
{
    for (;;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            *status = exit_status(st);
            return 1;
        }
        if (r < 0 && errno != EINTR) {
            perror("lockstat: wait");
            exit(2);
        }
        double left = until - now_s();
        if (left <= 0)
            return 0;
        double step = left < 0.02 ? left : 0.02;
        struct timespec ts = { 0, (long)(step * 1e9) };
        nanosleep(&ts, NULL);
    }
}

/* Reset the statistics if we may (root), else take in base the snapshot
 * to subtract.  Returns whether it took one. */
static int start_counting(struct snap *base)
{
    if (syscall(TEMPEST_SYS_LOCKSTAT_RESET) == 0)
        return 0;
    if (errno == ENOSYS) {
        fprintf(stderr, "lockstat: this kernel keeps no lock statistics (ENOSYS)\n");
        exit(2);
    }
    if (errno != EPERM) {
        perror("lockstat: reset");
        exit(2);
    }
    snap_take(base);
    return 1;
}

/* ---- One table, or one per interval ---- */

/* Print cur, less base when there is one (base->buf not NULL). */
static void print_diff(const struct snap *cur, const struct snap *base, const struct opts *o,
                       const struct interval *iv)
{
    struct snap s;
    snap_copy(&s, cur);
    if (base->buf)
        snap_subtract(&s, base);
    struct blkstat_snapshot_hdr *d = o->disks || o->json ? blk_take() : NULL;
    print_snapshot(&s, o, d, iv);
    free(d);
    snap_free(&s);
}

static int one_table(char **argv, const struct opts *o)
{
    struct snap base = { 0 }, end;
    int status = 0;
    if (argv[0]) {
        start_counting(&base);
        status = wait_command(start_command(argv));
    }
    snap_take(&end);
    print_diff(&end, &base, o, NULL);
    snap_free(&end);
    snap_free(&base);
    return status;
}

/* One table per interval while the command runs, then one for the whole
 * run: interval 0, from the start to the end. */
static int intervals(char **argv, const struct opts *o)
{
    struct snap prev = { 0 }, first;
    if (!start_counting(&prev))
        snap_take(&prev);           /* just reset: the first interval starts here */
    snap_copy(&first, &prev);
    pid_t pid = start_command(argv);
    double t_start = now_s(), t_prev = 0;
    int status = 0, done = 0;
    for (int i = 1; !done; i++) {
        done = wait_until(pid, t_start + i * o->interval, &status);
        double t = now_s() - t_start;
        struct snap cur;
        snap_take(&cur);
        struct interval iv = { i, t_prev, t };
        print_diff(&cur, &prev, o, &iv);
        snap_free(&prev);
        prev = cur;
        t_prev = t;
    }
    struct interval whole = { 0, 0, t_prev };
    print_diff(&prev, &first, o, &whole);
    snap_free(&prev);
    snap_free(&first);
    return status;
}

/* ---- -e: the calls refused with ENOSYS ---- */

#define ENOSYS_NRS 512

static void enosys_counts(uint64_t counts[ENOSYS_NRS])
{
    memset(counts, 0, ENOSYS_NRS * sizeof counts[0]);
    if (syscall(TEMPEST_SYS_ENOSYS_COUNTS, counts, (long)ENOSYS_NRS) < 0) {
        fprintf(stderr, "lockstat: this kernel keeps no ENOSYS counts (%s)\n",
                strerror(errno));
        exit(2);
    }
}

static int print_enosys(char **argv)
{
    static uint64_t before[ENOSYS_NRS], after[ENOSYS_NRS];
    int status = 0;
    if (argv[0]) {
        enosys_counts(before);
        status = wait_command(start_command(argv));
    }
    enosys_counts(after);
    for (int nr = 0; nr < ENOSYS_NRS; nr++)
        if (after[nr] != before[nr])
            printf("enosys %d %llu\n", nr, (unsigned long long)(after[nr] - before[nr]));
    return status;
}

/* ---- -C: Hurricane clustering's counts (cluster=) ---- */

#define MAX_CLUSTERS 64

/* The kernel's per-cluster counts into st; how many clusters (0 when it
 * runs without cluster=). */
static int cluster_counts(struct tempest_cluster_stat *st)
{
    long n = syscall(TEMPEST_SYS_CLUSTER_STATS, st, (long)MAX_CLUSTERS);
    if (n < 0) {
        fprintf(stderr, "lockstat: this kernel keeps no cluster counts (%s)\n", strerror(errno));
        exit(2);
    }
    return n > MAX_CLUSTERS ? MAX_CLUSTERS : (int)n;
}

#define CDIFF(f) (unsigned long long)(a->f - (b ? b->f : 0))

static int print_clusters(char **argv)
{
    static struct tempest_cluster_stat before[MAX_CLUSTERS], after[MAX_CLUSTERS];
    int status = 0, nb = 0;
    if (argv[0]) {
        nb = cluster_counts(before);
        status = wait_command(start_command(argv));
    }
    int n = cluster_counts(after);
    if (n == 0) {
        printf("no clusters: the kernel runs without cluster=\n");
        return status;
    }
    printf("%-7s %4s %4s %9s %9s %8s %8s %8s %8s %9s %8s\n", "cluster", "cpus", "node",
           "calls_out", "calls_in", "retries", "replicas", "combined", "invalid", "res_waits",
           "refills");
    for (int i = 0; i < n; i++) {
        const struct tempest_cluster_stat *a = &after[i], *b = i < nb ? &before[i] : NULL;
        printf("%-7u %4u %4u %9llu %9llu %8llu %8llu %8llu %8llu %9llu %8llu\n", a->cluster,
               a->ncpus, a->node, CDIFF(calls_out), CDIFF(calls_in), CDIFF(retries),
               CDIFF(replications), CDIFF(combined), CDIFF(invalidations), CDIFF(reserve_waits),
               CDIFF(pool_refills));
    }
    return status;
}

/* ---- Options ---- */

/* -o FILE: lockstat prints into FILE, the command keeps the standard
 * output, so tables printed while it runs (-i) never mix with its lines. */
static void output_to(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "lockstat: %s: %s\n", path, strerror(errno));
        exit(2);
    }
    command_stdout = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (command_stdout < 0 || dup2(fd, STDOUT_FILENO) < 0) {
        perror("lockstat: -o");
        exit(2);
    }
    close(fd);
}

static enum key parse_key(const char *s)
{
    static const char *const names[] = { "hits", "misses", "ratio", "wait", "hold" };
    for (int i = 0; i < 5; i++)
        if (strcmp(s, names[i]) == 0)
            return (enum key)i;
    bad_option("sort key", s);
    return KEY_RATIO;
}

static int parse_count(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 0 || v > 1000000)
        bad_option("count", s);
    return (int)v;
}

static double parse_seconds(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || !(v >= 0.01 && v <= 86400))
        bad_option("interval (seconds, 0.01 to 86400)", s);
    return v;
}

int main(int argc, char **argv)
{
    struct opts o = { .key = KEY_RATIO, .top = 25 };
    int c, enosys = 0, clusters = 0;
    while ((c = getopt(argc, argv, "+s:n:c:l:i:o:kHPdjeCh")) != -1) {
        switch (c) {
        case 'e': enosys = 1; break;
        case 'C': clusters = 1; break;
        case 's': o.key = parse_key(optarg); break;
        case 'n': o.top = parse_count(optarg); break;
        case 'c': o.cls = optarg; break;
        case 'l': o.pattern = optarg; break;
        case 'i': o.interval = parse_seconds(optarg); break;
        case 'k': o.sites = 1; break;
        case 'H': o.hist = 1; break;
        case 'P': o.percpu = 1; break;
        case 'd': o.disks = 1; break;
        case 'j': o.json = 1; break;
        case 'o': output_to(optarg); break;
        case 'h': fputs(usage_text, stdout); fputs(help_text, stdout); return 0;
        default:  usage();
        }
    }
    if (enosys)
        return print_enosys(argv + optind);
    if (clusters)
        return print_clusters(argv + optind);
    if (o.interval > 0) {
        if (optind >= argc) {
            fprintf(stderr, "lockstat: -i needs a command to watch\n");
            usage();
        }
        return intervals(argv + optind, &o);
    }
    return one_table(argv + optind, &o);
}
