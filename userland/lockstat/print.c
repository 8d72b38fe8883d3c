/*
 * lockstat's output: the class table and, as asked, the instances (-c),
 * call sites (-k), histograms (-H), per-CPU counts (-P) and disks (-d);
 * or all of them as one JSON object per table (-j).  `lockstat -h`
 * documents every column.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lockstat.h"

static const char *const kind_names[] = LOCKSTAT_KIND_NAMES;

static const char *kind_name(uint32_t kind)
{
    return kind < sizeof kind_names / sizeof kind_names[0] ? kind_names[kind] : "?";
}

static double ratio(const struct lockstat_class_rec *c)
{
    return c->hits ? (double)c->misses / (double)c->hits : 0.0;
}

/* ---- Choosing the rows ---- */

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

static int wanted(const struct lockstat_class_rec *c, const struct opts *o)
{
    if (o->cls)
        return strcmp(c->name, o->cls) == 0;
    if (o->pattern && !strstr(c->name, o->pattern))
        return 0;
    return c->hits > 0;
}

/* The classes to print, sorted, in rows[]; returns how many. */
static int select_rows(const struct snap *s, const struct opts *o,
                       const struct lockstat_class_rec **rows)
{
    int n = 0;
    for (uint32_t i = 0; i < s->h->nclasses; i++)
        if (wanted(&s->cls[i], o))
            rows[n++] = &s->cls[i];
    sort_key = o->key;
    qsort(rows, (size_t)n, sizeof rows[0], by_key);
    if (o->top > 0 && n > o->top)
        n = o->top;
    return n;
}

static uint32_t class_index(const struct snap *s, const struct lockstat_class_rec *c)
{
    return (uint32_t)(c - s->cls);
}

/* ---- Text ---- */

/* Whether any row has pvspin=on's halts or kicks (their columns). */
static int any_pv(const struct lockstat_class_rec **rows, int n)
{
    for (int i = 0; i < n; i++)
        if (rows[i]->pv_halts || rows[i]->pv_kicks)
            return 1;
    return 0;
}

static void print_classes(const struct snap *s, const struct lockstat_class_rec **rows, int n)
{
    int pv = any_pv(rows, n);
    printf("%-20s %-11s %12s %10s %8s %12s %10s %12s", "class", "kind", "hits", "misses",
           "miss%", "wait_us", "maxwait_us", "hold_us");
    printf(pv ? " %10s %10s\n" : "\n", "halts", "kicks");
    for (int i = 0; i < n; i++) {
        const struct lockstat_class_rec *c = rows[i];
        printf("%-20s %-11s %12llu %10llu %7.3f%% %12.1f %10.1f %12.1f", c->name,
               kind_name(c->kind), (unsigned long long)c->hits, (unsigned long long)c->misses,
               100.0 * ratio(c), cycles_us(s, c->wait_cycles), cycles_us(s, c->max_wait),
               cycles_us(s, c->hold_cycles));
        if (pv)
            printf(" %10llu %10llu", (unsigned long long)c->pv_halts,
                   (unsigned long long)c->pv_kicks);
        printf("\n");
    }
}

static void print_instances(const struct snap *s, const char *cls)
{
    printf("\n%-20s %-20s %18s %12s %10s %12s\n", "class", "instance", "address", "hits",
           "misses", "wait_us");
    for (uint32_t i = 0; i < s->h->ninst; i++) {
        const struct lockstat_inst_rec *r = &s->inst[i];
        if (strcmp(r->cls, cls) == 0)
            printf("%-20s %-20s %#18llx %12llu %10llu %12.1f\n", r->cls,
                   r->name[0] ? r->name : "-", (unsigned long long)r->addr,
                   (unsigned long long)r->hits, (unsigned long long)r->misses,
                   cycles_us(s, r->wait_cycles));
    }
}

static const char *site_name(const struct lockstat_site_rec *r, char *buf, size_t n)
{
    if (r->sym[0])
        return r->sym;
    snprintf(buf, n, "%#llx", (unsigned long long)r->site);
    return buf;
}

static void print_sites(const struct snap *s, const struct lockstat_class_rec **rows, int n)
{
    static const char *const what[] = { "miss", "hold" };
    printf("\n%-20s %-4s %10s %12s  %s\n", "class", "what", "count", "time_us", "site");
    for (int i = 0; i < n; i++) {
        for (uint32_t j = 0; j < s->h->nsites; j++) {
            const struct lockstat_site_rec *r = &s->sites[j];
            char buf[32];
            if (r->inst || strcmp(r->cls, rows[i]->name) != 0 || r->count == 0)
                continue;
            printf("%-20s %-4s %10llu %12.1f  %s\n", r->cls, what[r->what & 1],
                   (unsigned long long)r->count, cycles_us(s, r->cycles),
                   site_name(r, buf, sizeof buf));
        }
        if (rows[i]->miss_sites_lost || rows[i]->hold_sites_lost)
            printf("%-20s (sites not named: %llu misses, %llu holds)\n", rows[i]->name,
                   (unsigned long long)rows[i]->miss_sites_lost,
                   (unsigned long long)rows[i]->hold_sites_lost);
    }
}

/* The instances' own sites, for the classes printed: instance i's lines
 * follow the class's, named by the instance's name or address. */
static void print_instance_sites(const struct snap *s, const struct lockstat_class_rec **rows,
                                 int n)
{
    static const char *const what[] = { "miss", "hold" };
    int header = 0;
    for (int i = 0; i < n; i++) {
        for (uint32_t j = 0; j < s->h->nsites; j++) {
            const struct lockstat_site_rec *r = &s->sites[j];
            char buf[32], id[24];
            if (!r->inst || r->inst > s->h->ninst || strcmp(r->cls, rows[i]->name) != 0 ||
                r->count == 0)
                continue;
            const struct lockstat_inst_rec *in = &s->inst[r->inst - 1];
            if (!header++)
                printf("\n%-20s %-18s %-4s %10s %12s  %s\n", "class", "instance", "what",
                       "count", "time_us", "site");
            snprintf(id, sizeof id, "%#llx", (unsigned long long)in->addr);
            printf("%-20s %-18s %-4s %10llu %12.1f  %s\n", r->cls, in->name[0] ? in->name : id,
                   what[r->what & 1], (unsigned long long)r->count, cycles_us(s, r->cycles),
                   site_name(r, buf, sizeof buf));
        }
    }
}

/* The lower bound of bucket b in microseconds. */
static double bucket_us(const struct snap *s, int b)
{
    return b == 0 ? 0.0 : cycles_us(s, 1ULL << b);
}

static void print_hist(const struct snap *s, const char *cls, const char *what,
                       const uint64_t *hist)
{
    int lo = LOCKSTAT_NBUCKETS, hi = -1;
    uint64_t max = 0;
    for (int b = 0; b < LOCKSTAT_NBUCKETS; b++) {
        if (!hist[b])
            continue;
        lo = b < lo ? b : lo;
        hi = b;
        max = hist[b] > max ? hist[b] : max;
    }
    if (hi < 0)
        return;
    printf("\n%s: %s time (us, from)        count\n", cls, what);
    for (int b = lo; b <= hi; b++) {
        int bar = (int)(hist[b] * 40 / max);
        printf("  %14.3f %14llu  %.*s\n", bucket_us(s, b), (unsigned long long)hist[b], bar,
               "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@");
    }
}

static void print_percpu(const struct snap *s, const struct lockstat_class_rec **rows, int n)
{
    printf("\n%-20s %4s %12s %10s %8s %12s %12s\n", "class", "cpu", "hits", "misses", "miss%",
           "wait_us", "hold_us");
    for (int i = 0; i < n; i++) {
        uint32_t ci = class_index(s, rows[i]);
        for (uint32_t j = 0; j < s->h->npercpu; j++) {
            const struct lockstat_cpu_rec *r = &s->cpus[j];
            if (r->cls != ci || r->hits == 0)
                continue;
            printf("%-20s %4u %12llu %10llu %7.3f%% %12.1f %12.1f\n", rows[i]->name, r->cpu,
                   (unsigned long long)r->hits, (unsigned long long)r->misses,
                   100.0 * (double)r->misses / (double)r->hits, cycles_us(s, r->wait_cycles),
                   cycles_us(s, r->hold_cycles));
        }
    }
}

static void print_disks(const struct snap *s, const struct blkstat_snapshot_hdr *d)
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
               r->ops ? cycles_us(s, r->wait_tsc) / (double)r->ops : 0.0,
               r->ops ? cycles_us(s, r->service_tsc) / (double)r->ops : 0.0);
    }
}

static void print_text(const struct snap *s, const struct opts *o,
                       const struct lockstat_class_rec **rows, int n,
                       const struct blkstat_snapshot_hdr *d, const struct interval *iv)
{
    if (iv && iv->index)
        printf("interval %d: %.2f s to %.2f s\n", iv->index, iv->t0, iv->t1);
    else if (iv)
        printf("whole run: %.2f s\n", iv->t1);
    print_classes(s, rows, n);
    if (o->cls)
        print_instances(s, o->cls);
    if (o->sites) {
        print_sites(s, rows, n);
        print_instance_sites(s, rows, n);
    }
    for (int i = 0; o->hist && i < n; i++) {
        print_hist(s, rows[i]->name, "wait", rows[i]->wait_hist);
        print_hist(s, rows[i]->name, "hold", rows[i]->hold_hist);
    }
    if (o->percpu)
        print_percpu(s, rows, n);
    if (d)
        print_disks(s, d);
    if (iv)
        printf("\n");
}

/* ---- JSON ---- */

static void json_hist(const char *name, const uint64_t *hist)
{
    printf(", \"%s\": [", name);
    for (int b = 0; b < LOCKSTAT_NBUCKETS; b++)
        printf("%s%llu", b ? ", " : "", (unsigned long long)hist[b]);
    printf("]");
}

/* The sites of kind what of class c (inst 0) or of its instance record
 * inst - 1. */
static void json_sites(const struct snap *s, const struct lockstat_class_rec *c, uint32_t what,
                       uint32_t inst)
{
    printf(", \"%s_sites\": [", what == LOCKSTAT_SITE_MISS ? "miss" : "hold");
    int first = 1;
    for (uint32_t j = 0; j < s->h->nsites; j++) {
        const struct lockstat_site_rec *r = &s->sites[j];
        char buf[32];
        if (r->what != what || r->inst != inst || strcmp(r->cls, c->name) != 0 || r->count == 0)
            continue;
        printf("%s{\"site\": \"%s\", \"addr\": \"%#llx\", \"count\": %llu, \"time_us\": %.3f}",
               first ? "" : ", ", site_name(r, buf, sizeof buf), (unsigned long long)r->site,
               (unsigned long long)r->count, cycles_us(s, r->cycles));
        first = 0;
    }
    printf("]");
}

/* The class's most contended instances, each with its own sites. */
static void json_instances(const struct snap *s, const struct lockstat_class_rec *c)
{
    printf(", \"top_instances\": [");
    int first = 1;
    for (uint32_t i = 0; i < s->h->ninst; i++) {
        const struct lockstat_inst_rec *r = &s->inst[i];
        if (strcmp(r->cls, c->name) != 0)
            continue;
        printf("%s{\"name\": \"%s\", \"addr\": \"%#llx\", \"hits\": %llu, \"misses\": %llu, "
               "\"wait_us\": %.3f", first ? "" : ", ", r->name, (unsigned long long)r->addr,
               (unsigned long long)r->hits, (unsigned long long)r->misses,
               cycles_us(s, r->wait_cycles));
        json_sites(s, c, LOCKSTAT_SITE_MISS, i + 1);
        json_sites(s, c, LOCKSTAT_SITE_HOLD, i + 1);
        printf("}");
        first = 0;
    }
    printf("]");
}

static void json_percpu(const struct snap *s, const struct lockstat_class_rec *c)
{
    uint32_t ci = class_index(s, c);
    printf(", \"per_cpu\": [");
    int first = 1;
    for (uint32_t j = 0; j < s->h->npercpu; j++) {
        const struct lockstat_cpu_rec *r = &s->cpus[j];
        if (r->cls != ci || r->hits == 0)
            continue;
        printf("%s{\"cpu\": %u, \"hits\": %llu, \"misses\": %llu, \"wait_us\": %.3f, "
               "\"hold_us\": %.3f}", first ? "" : ", ", r->cpu, (unsigned long long)r->hits,
               (unsigned long long)r->misses, cycles_us(s, r->wait_cycles),
               cycles_us(s, r->hold_cycles));
        first = 0;
    }
    printf("]");
}

static void json_class(const struct snap *s, const struct lockstat_class_rec *c)
{
    printf("{\"class\": \"%s\", \"kind\": \"%s\", \"hits\": %llu, \"misses\": %llu, "
           "\"miss_ratio\": %.6f, \"wait_us\": %.3f, \"max_wait_us\": %.3f, "
           "\"hold_us\": %.3f, \"instances\": %llu, \"miss_sites_lost\": %llu, "
           "\"hold_sites_lost\": %llu, \"pv_halts\": %llu, \"pv_kicks\": %llu", c->name,
           kind_name(c->kind), (unsigned long long)c->hits, (unsigned long long)c->misses,
           ratio(c), cycles_us(s, c->wait_cycles), cycles_us(s, c->max_wait),
           cycles_us(s, c->hold_cycles), (unsigned long long)c->ninstances,
           (unsigned long long)c->miss_sites_lost, (unsigned long long)c->hold_sites_lost,
           (unsigned long long)c->pv_halts, (unsigned long long)c->pv_kicks);
    json_sites(s, c, LOCKSTAT_SITE_MISS, 0);
    json_sites(s, c, LOCKSTAT_SITE_HOLD, 0);
    json_hist("wait_hist", c->wait_hist);
    json_hist("hold_hist", c->hold_hist);
    json_percpu(s, c);
    json_instances(s, c);
    printf("}");
}

static void json_disks(const struct blkstat_snapshot_hdr *d, const char *nl)
{
    const struct blkstat_rec *r = (const void *)(d + 1);
    printf(", \"disks\": [");
    for (uint32_t i = 0; i < d->ndisks; i++, r++)
        printf("%s%s{\"disk\": \"%s\", \"ops\": %llu, \"reads\": %llu, \"writes\": %llu, "
               "\"blocks\": %llu, \"errors\": %llu, \"max_queue\": %llu}", i ? "," : "", nl,
               r->name, (unsigned long long)r->ops, (unsigned long long)r->reads,
               (unsigned long long)r->writes, (unsigned long long)r->blocks,
               (unsigned long long)r->errors, (unsigned long long)r->qlen_max);
    printf("]");
}

static void print_json(const struct snap *s, const struct lockstat_class_rec **rows, int n,
                       const struct blkstat_snapshot_hdr *d, const struct interval *iv)
{
    static const char *const modes[] = { "off", "on", "contended" };
    printf("{\"version\": %u, \"tsc_hz\": %llu, \"ncpus\": %u, \"mode\": \"%s\", "
           "\"hist_buckets\": %d", s->h->version, (unsigned long long)s->h->tsc_hz, s->h->ncpus,
           s->h->mode < 3 ? modes[s->h->mode] : "?", LOCKSTAT_NBUCKETS);
    if (iv)
        printf(", \"interval\": %d, \"t_start\": %.3f, \"t_end\": %.3f", iv->index, iv->t0,
               iv->t1);
    /* One object per line with -i (JSON Lines), spread over lines without. */
    const char *nl = iv ? "" : "\n  ";
    printf(", \"classes\": [");
    for (int i = 0; i < n; i++) {
        printf("%s%s", i ? "," : "", nl);
        json_class(s, rows[i]);
    }
    printf("]");
    if (d)
        json_disks(d, nl);
    printf("}\n");
}

void print_snapshot(const struct snap *s, const struct opts *o,
                    const struct blkstat_snapshot_hdr *d, const struct interval *iv)
{
    const struct lockstat_class_rec **rows = calloc(s->h->nclasses + 1, sizeof *rows);
    if (!rows) {
        perror("lockstat");
        exit(2);
    }
    int n = select_rows(s, o, rows);
    if (o->json)
        print_json(s, rows, n, d, iv);
    else
        print_text(s, o, rows, n, d, iv);
    fflush(stdout);
    free(rows);
}
