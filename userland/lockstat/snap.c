/*
 * Taking the kernel's snapshots (TEMPEST_SYS_LOCKSTAT_SNAPSHOT and
 * TEMPEST_SYS_BLKSTAT_SNAPSHOT) and subtracting one from another, for the
 * interval tables of lockstat -i.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lockstat.h"

static void die(const char *what)
{
    fprintf(stderr, "lockstat: %s: %s\n", what, strerror(errno));
    exit(2);
}

/* Ask for a snapshot with call nr until the buffer is large enough (a lock
 * or disk may appear between asking the size and copying). */
static void *take(long nr, size_t *lenp)
{
    size_t need = 0;
    for (int tries = 0; tries < 8; tries++) {
        long r = syscall(nr, NULL, 0, &need);
        if (r < 0 && errno == ENOSYS) {
            fprintf(stderr, "lockstat: this kernel keeps no lock statistics "
                            "(call %ld: ENOSYS)\n", nr);
            exit(2);
        }
        if (r < 0 && errno != ENOSPC)
            die("snapshot");
        void *buf = malloc(need);
        if (!buf)
            die("snapshot");
        r = syscall(nr, buf, need, &need);
        if (r >= 0) {
            *lenp = (size_t)r;
            return buf;
        }
        free(buf);
        if (errno != ENOSPC)
            die("snapshot");
    }
    fprintf(stderr, "lockstat: the snapshot keeps growing\n");
    exit(2);
}

/* Point s's arrays into its buffer. */
static void snap_view(struct snap *s)
{
    s->h = s->buf;
    s->cls = (void *)(s->h + 1);
    s->inst = (void *)(s->cls + s->h->nclasses);
    s->sites = (void *)(s->inst + s->h->ninst);
    s->cpus = (void *)(s->sites + s->h->nsites);
}

static size_t snap_len(const struct snap *s)
{
    return (size_t)((char *)(s->cpus + s->h->npercpu) - (char *)s->buf);
}

void snap_copy(struct snap *to, const struct snap *from)
{
    size_t len = snap_len(from);
    to->buf = malloc(len);
    if (!to->buf)
        die("snapshot");
    memcpy(to->buf, from->buf, len);
    snap_view(to);
}

void snap_take(struct snap *s)
{
    size_t len;
    s->buf = take(TEMPEST_SYS_LOCKSTAT_SNAPSHOT, &len);
    s->h = s->buf;
    if (len < sizeof *s->h || s->h->version != LOCKSTAT_VERSION) {
        fprintf(stderr, "lockstat: snapshot version %u, this lockstat reads %u\n",
                len < sizeof *s->h ? 0 : s->h->version, LOCKSTAT_VERSION);
        exit(2);
    }
    snap_view(s);
    if (snap_len(s) != len) {
        fprintf(stderr, "lockstat: snapshot of %zu bytes does not match its header\n", len);
        exit(2);
    }
}

void *blk_take(void)
{
    size_t len;
    return take(TEMPEST_SYS_BLKSTAT_SNAPSHOT, &len);
}

void snap_free(struct snap *s)
{
    free(s->buf);
    s->buf = NULL;
}

static void sub_class(struct lockstat_class_rec *c, const struct lockstat_class_rec *p)
{
    c->hits -= p->hits;
    c->misses -= p->misses;
    c->wait_cycles -= p->wait_cycles;
    c->hold_cycles -= p->hold_cycles;
    c->miss_sites_lost -= p->miss_sites_lost;
    c->hold_sites_lost -= p->hold_sites_lost;
    c->pv_halts -= p->pv_halts;
    c->pv_kicks -= p->pv_kicks;
    for (int b = 0; b < LOCKSTAT_NBUCKETS; b++) {
        c->wait_hist[b] -= p->wait_hist[b];
        c->hold_hist[b] -= p->hold_hist[b];
    }
}

static const struct lockstat_inst_rec *find_inst(const struct snap *s, uint64_t addr)
{
    for (uint32_t i = 0; i < s->h->ninst; i++)
        if (s->inst[i].addr == addr)
            return &s->inst[i];
    return NULL;
}

uint64_t site_inst_addr(const struct snap *s, const struct lockstat_site_rec *r)
{
    return r->inst && r->inst <= s->h->ninst ? s->inst[r->inst - 1].addr : 0;
}

/* want's record in s: the same site, kind and class, and the same lock
 * (an instance record's index differs from snapshot to snapshot, its
 * address does not). */
static const struct lockstat_site_rec *find_site(const struct snap *s, const struct snap *ws,
                                                 const struct lockstat_site_rec *want)
{
    uint64_t addr = site_inst_addr(ws, want);
    for (uint32_t i = 0; i < s->h->nsites; i++) {
        const struct lockstat_site_rec *r = &s->sites[i];
        if (r->site == want->site && r->what == want->what && !strcmp(r->cls, want->cls) &&
            (r->inst != 0) == (want->inst != 0) && site_inst_addr(s, r) == addr)
            return r;
    }
    return NULL;
}

static const struct lockstat_cpu_rec *find_cpu(const struct snap *s, uint32_t cls, uint32_t cpu)
{
    for (uint32_t i = 0; i < s->h->npercpu; i++)
        if (s->cpus[i].cls == cls && s->cpus[i].cpu == cpu)
            return &s->cpus[i];
    return NULL;
}

void snap_subtract(struct snap *cur, const struct snap *prev)
{
    /* The classes are the kernel's static table: the same in every
     * snapshot of one boot, in the same order. */
    for (uint32_t i = 0; i < cur->h->nclasses && i < prev->h->nclasses; i++)
        if (!strcmp(cur->cls[i].name, prev->cls[i].name))
            sub_class(&cur->cls[i], &prev->cls[i]);
    for (uint32_t i = 0; i < cur->h->ninst; i++) {
        const struct lockstat_inst_rec *p = find_inst(prev, cur->inst[i].addr);
        if (p && p->hits <= cur->inst[i].hits) {
            cur->inst[i].hits -= p->hits;
            cur->inst[i].misses -= p->misses;
            cur->inst[i].wait_cycles -= p->wait_cycles;
        }
    }
    for (uint32_t i = 0; i < cur->h->nsites; i++) {
        const struct lockstat_site_rec *p = find_site(prev, cur, &cur->sites[i]);
        if (p) {
            cur->sites[i].count -= p->count;
            cur->sites[i].cycles -= p->cycles;
        }
    }
    for (uint32_t i = 0; i < cur->h->npercpu; i++) {
        struct lockstat_cpu_rec *c = &cur->cpus[i];
        const struct lockstat_cpu_rec *p = find_cpu(prev, c->cls, c->cpu);
        if (p) {
            c->hits -= p->hits;
            c->misses -= p->misses;
            c->wait_cycles -= p->wait_cycles;
            c->hold_cycles -= p->hold_cycles;
        }
    }
}

double cycles_us(const struct snap *s, uint64_t cycles)
{
    return s->h->tsc_hz ? (double)cycles * 1e6 / (double)s->h->tsc_hz : 0.0;
}
