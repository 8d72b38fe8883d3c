/*
 * The clustered directory name lookup cache (cluster=), the clustered
 * structure of seed 000's Figure 2 applied to Tempest's DNLC.
 *
 * Why the DNLC, not the process table.  The paper's example is a chained
 * hash table whose read-shared elements are replicated into every cluster
 * that uses them and whose changes go to every copy; the DNLC is exactly
 * such a table, and its load is the paper's third workload class: every
 * CPU resolving the same few directories (/, /bin, /lib, /usr) is read
 * sharing, and removals and renames are rare.  The process table is
 * mostly write-shared (fork, exit and wait change it, each from the
 * parent's and the child's clusters) and sits under one sleep mutex that
 * job control, signals and wait rely on; replicating it buys little and
 * would rewrite kern/proc.  A DNLC replica is also safe to drop at any
 * time: it is a cache, so evicting any copy is always correct.
 *
 * Theory.  Each cluster has an instance: CLD_ROWS rows of CLD_WAYS
 * entries on the cluster's node, under one coarse hybrid lock (class
 * cluster_dnlc).  A name (directory, name) has a home cluster, its hash
 * modulo the number of clusters (the "data specific location resolution"
 * of section 2.3), and its entries for every credential sit in one row of
 * each instance.  dnlc_enter goes to the home instance (a cross-cluster
 * call unless the caller is there).  dnlc_lookup searches the caller's
 * own instance; on a miss for a name homed elsewhere it makes a local
 * place-holder, reserved (Figure 2's Z0), drops the coarse lock and calls
 * the home cluster, which answers with the vnode (taking the references
 * the replica will hold) or a miss; the place-holder becomes the replica
 * or is emptied, and its bit released.  Other CPUs of the cluster that
 * want the same name meanwhile find the reserved place-holder and spin on
 * its bit: their requests are combined into the one call.  Entries hold
 * references on both vnodes and the credential, home copies and replicas
 * alike, so a replica stays valid on its own whatever happens to the home
 * copy; only the name's removal has to reach it.
 *
 * Changes (dnlc_remove, a re-pointing dnlc_enter, the purges by vnode, by
 * file system and of everything) are sent to the home cluster first and
 * then to every other cluster in parallel (cluster_call_start, then wait
 * for all): the tree's broadcast.  A remote handler never waits on a
 * reserve bit: finding a matching entry reserved (a place-holder whose
 * call is in flight) it removes what it can and answers -EDEADLK, and the
 * caller retries that cluster (section 2.3), so a replica being made while
 * its name is removed is removed once made, never left stale.
 *
 * A reserve bit is never held across a sleep (the kernel is not
 * preemptive, so a CPU whose waiter spins on a bit held by a sleeping
 * thread of its own would spin for ever): references are dropped only
 * with no reservation held.  Nor are they dropped with interrupts off:
 * handlers (and local removals under the coarse lock) move the vnodes
 * and credentials of the entries they remove into the request's release
 * list; the caller drops them afterwards, from its thread, and asks again
 * while the list came back full.
 *
 * Lock key: [H] the instance's coarse lock; [R] the entry's reserve bit
 * (its holder alone writes the entry's other fields); [c] constant after
 * cl_dnlc_init; [a] atomic.
 */
#include <kern/cluster/cl_dnlc.h>
#include <kern/cluster/cluster.h>
#include <kern/cluster/hybrid.h>
#include <kern/vfs/dnlc.h>
#include <kern/vfs/ssac.h>
#include <kern/vfs/vnode.h>
#include <kern/vfs/cred.h>
#include <kern/vm/kmem.h>
#include <kern/lib/errno.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/arch/panic.h>

LOCK_CLASS(cluster_dnlc_class, "cluster_dnlc", LK_SPIN);

#define CLD_ROW_BITS 6
#define CLD_ROWS (1u << CLD_ROW_BITS)
#define CLD_WAYS 8
#define REL_MAX 8               /* entries one request can hand back */

/* Entry flags, beside the reserve bit HRES_BIT. */
#define F_VALID   0x2u          /* holds a name */
#define F_PLACE   0x4u          /* a place-holder: its call is in flight */
#define F_REPLICA 0x8u          /* a copy of another cluster's entry */

struct cld_ent {
    uint32_t flags;             /* [H]; the reserve bit [a] */
    uint32_t nhash;             /* [H] to change, [R] */
    uint64_t stamp;             /* [H] last use, for LRU in the row */
    struct vnode *dvp, *vp;     /* [H] to change, [R]; held while valid */
    struct cred *cred;          /* [H] to change, [R]; held while valid */
    uint8_t namlen;
    char name[DNLC_NAMELEN + 1];
};

struct cld_inst {
    struct hlock h;
    uint64_t clock;             /* [H] the stamps */
    unsigned cursor;            /* [H] purge1's next row */
    struct cld_ent ents[CLD_ROWS * CLD_WAYS];
};

static struct cluster_map *map;                 /* [c] */
static struct cld_inst *insts[MAX_CPUS];        /* [c] one per cluster */
static uint64_t st_lookups, st_hits, st_misses, st_enters, st_purges;   /* [a] */

struct cld_key {
    struct vnode *dvp;
    struct cred *cred;          /* NULL: any credential (removal) */
    const char *name;
    uint32_t namlen, nhash;
    unsigned row;
    int home;
};

/* References taken out of removed entries, dropped by the caller. */
struct cld_rel {
    int n;
    struct vnode *vn[2 * REL_MAX];
    struct cred *cr[REL_MAX];
};

enum cld_what { M_NAME, M_VP, M_VFS, M_ALL, M_ONE };

/* One request to one cluster. */
struct cld_req {
    int cl;                     /* the cluster whose instance it works on */
    int src;                    /* the caller's cluster */
    const struct cld_key *k;
    enum cld_what what;         /* purges: what matches */
    struct vnode *vp;           /* M_VP; lookup's answer; enter's vnode */
    struct vfs *vfsp;           /* M_VFS */
    int limit;                  /* purges: at most this many (0: all) */
    int removed;                /* purges: how many were */
    bool more;                  /* the release list filled up: ask again */
    char *name;                 /* reverse: the name's buffer */
    size_t size;
    struct cld_rel rel;
};

#define stat_inc(v) __atomic_add_fetch(&(v), 1, __ATOMIC_RELAXED)

/* ---- keys, entries, releases ---- */

static bool make_key(struct cld_key *k, struct vnode *dvp, const char *name, struct cred *cr)
{
    size_t len = strlen(name);
    if (len == 0 || len > DNLC_NAMELEN)
        return false;
    k->dvp = dvp;
    k->cred = cr;
    k->name = name;
    k->namlen = (uint32_t)len;
    k->nhash = cache_name_hash(name, k->namlen);
    unsigned h = cache_hash(cache_ptr_tag(dvp) ^ ((uint64_t)k->nhash << 29), 16);
    k->row = h & (CLD_ROWS - 1);
    k->home = (int)((h >> CLD_ROW_BITS) % (unsigned)map->ncl);
    return true;
}

static bool name_matches(const struct cld_ent *e, const struct cld_key *k)
{
    return e->dvp == k->dvp && e->nhash == k->nhash && e->namlen == k->namlen &&
           memcmp(e->name, k->name, k->namlen) == 0;
}

static bool key_matches(const struct cld_ent *e, const struct cld_key *k)
{
    return (!k->cred || e->cred == k->cred) && name_matches(e, k);
}

static struct cld_ent *row_of(struct cld_inst *in, unsigned row)
{
    return &in->ents[row * CLD_WAYS];
}

/* Under [H]: the entry (valid or place-holder) for k in its row, or NULL. */
static struct cld_ent *find(struct cld_inst *in, const struct cld_key *k)
{
    struct cld_ent *e = row_of(in, k->row);
    for (int w = 0; w < CLD_WAYS; w++)
        if ((e[w].flags & (F_VALID | F_PLACE)) && key_matches(&e[w], k))
            return &e[w];
    return NULL;
}

static bool rel_full(const struct cld_rel *r)
{
    return r->n == REL_MAX;
}

/* Under [H]: empty valid, unreserved e, its references to rel (not full). */
static void drop_entry(struct cld_ent *e, struct cld_rel *r)
{
    r->vn[2 * r->n] = e->dvp;
    r->vn[2 * r->n + 1] = e->vp;
    r->cr[r->n++] = e->cred;
    e->flags = 0;
}

/* The caller's thread: drop the references collected. */
static void rel_drop(struct cld_rel *r)
{
    for (int i = 0; i < r->n; i++) {
        VN_RELE(r->vn[2 * i]);
        VN_RELE(r->vn[2 * i + 1]);
        cred_rele(r->cr[i]);
    }
    r->n = 0;
}

/* Under [H]: an entry of k's row to fill, emptied (its references to
 * rel): an empty one first, else the least recently used unreserved one.
 * NULL when every entry is reserved (the cache declines). */
static struct cld_ent *claim(struct cld_inst *in, unsigned row, struct cld_rel *rel)
{
    struct cld_ent *e = row_of(in, row), *victim = NULL;
    for (int w = 0; w < CLD_WAYS; w++) {
        if (e[w].flags == 0)
            return &e[w];
        if (!(e[w].flags & HRES_BIT) && (!victim || e[w].stamp < victim->stamp))
            victim = &e[w];
    }
    if (victim)
        drop_entry(victim, rel);
    return victim;
}

static void fill(struct cld_inst *in, struct cld_ent *e, const struct cld_key *k,
                 struct vnode *vp, uint32_t flags)
{
    e->dvp = k->dvp;
    e->vp = vp;
    e->cred = k->cred;
    e->nhash = k->nhash;
    e->namlen = (uint8_t)k->namlen;
    memcpy(e->name, k->name, k->namlen);
    e->name[k->namlen] = 0;
    e->stamp = ++in->clock;
    e->flags = flags;
}

/* ---- what runs on the target cluster ---- */

/* The home cluster: the vnode of a name, with the references its replica
 * will hold and the caller's own; -ENOENT, or -EDEADLK when reserved. */
static long home_lookup(void *arg)
{
    struct cld_req *q = arg;
    struct cld_inst *in = insts[q->cl];
    long r = -ENOENT;
    hlock_enter(&in->h);
    struct cld_ent *e = find(in, q->k);
    if (e && hres_busy(&e->flags)) {
        r = -EDEADLK;
    } else if (e) {
        VN_HOLD(e->vp);         /* the replica's */
        VN_HOLD(e->vp);         /* the caller's */
        VN_HOLD(e->dvp);
        cred_hold(e->cred);
        e->stamp = ++in->clock;
        q->vp = e->vp;
        r = 0;
    }
    hlock_exit(&in->h);
    return r;
}

/* The home cluster: enter a name with the references the caller took.
 * 0 entered; 1 nothing to do (the caller drops its references); 2
 * re-pointed (the replicas elsewhere must go); -EDEADLK reserved. */
static long home_enter(void *arg)
{
    struct cld_req *q = arg;
    struct cld_inst *in = insts[q->cl];
    long r = 1;
    hlock_enter(&in->h);
    struct cld_ent *e = find(in, q->k);
    if (e && hres_busy(&e->flags)) {
        r = -EDEADLK;
    } else if (e && e->vp != q->vp) {
        /* The entry keeps its directory and credential references; the
         * old vnode's and the caller's spare ones go back. */
        q->rel.vn[0] = e->vp;
        q->rel.vn[1] = q->k->dvp;
        q->rel.cr[0] = q->k->cred;
        q->rel.n = 1;
        e->vp = q->vp;
        e->stamp = ++in->clock;
        r = 2;
    } else if (!e && (e = claim(in, q->k->row, &q->rel))) {
        fill(in, e, q->k, q->vp, F_VALID);
        r = 0;
    }
    hlock_exit(&in->h);
    return r;
}

static bool is_dot_name(const struct cld_ent *e)
{
    return e->name[0] == '.' && (e->namlen == 1 || (e->namlen == 2 && e->name[1] == '.'));
}

static bool purge_matches(const struct cld_ent *e, const struct cld_req *q)
{
    switch (q->what) {
    case M_NAME:
        return key_matches(e, q->k);
    case M_VP:
        return e->vp == q->vp || e->dvp == q->vp;
    case M_VFS:
        return (e->vp && e->vp->v_vfsp == q->vfsp) || e->dvp->v_vfsp == q->vfsp;
    case M_ALL:
    case M_ONE:
        return true;
    }
    return false;
}

/* Any cluster: remove the entries matching q.  A matching reserved entry
 * is left and reported (-EDEADLK: retry); a full release list sets more. */
static long purge_here(void *arg)
{
    struct cld_req *q = arg;
    struct cld_inst *in = insts[q->cl];
    bool conflict = false;
    unsigned nrows = q->what == M_NAME ? 1 : CLD_ROWS;
    unsigned first = q->what == M_NAME ? q->k->row : q->what == M_ONE ? in->cursor : 0;
    hlock_enter(&in->h);
    for (unsigned i = 0; i < nrows && !q->more; i++) {
        unsigned row = (first + i) & (CLD_ROWS - 1);
        struct cld_ent *e = row_of(in, row);
        for (int w = 0; w < CLD_WAYS; w++) {
            if (!(e[w].flags & (F_VALID | F_PLACE)) || !purge_matches(&e[w], q))
                continue;
            if (hres_busy(&e[w].flags)) {
                conflict |= q->what != M_ONE;
                continue;
            }
            if (rel_full(&q->rel)) {
                q->more = true;
                break;
            }
            if ((e[w].flags & F_REPLICA) && q->src != q->cl)
                cluster_count(map, q->cl, invalidations);
            drop_entry(&e[w], &q->rel);
            if (q->limit && ++q->removed >= q->limit) {
                q->more = false;
                in->cursor = row + 1;
                hlock_exit(&in->h);
                return 0;
            }
            if (q->limit == 0)
                q->removed++;
        }
    }
    if (q->what == M_ONE)
        in->cursor++;
    hlock_exit(&in->h);
    return conflict ? -EDEADLK : 0;
}

/* Any cluster: a name of q->vp (not "." or ".."), its directory held. */
static long reverse_here(void *arg)
{
    struct cld_req *q = arg;
    struct cld_inst *in = insts[q->cl];
    long r = -ENOENT;
    hlock_enter(&in->h);
    for (unsigned i = 0; i < CLD_ROWS * CLD_WAYS && r; i++) {
        struct cld_ent *e = &in->ents[i];
        if ((e->flags & F_VALID) && !hres_busy(&e->flags) && e->vp == q->vp &&
            e->dvp != q->vp && !is_dot_name(e)) {
            VN_HOLD(e->dvp);
            q->vfsp = NULL;
            q->k = NULL;
            q->vp = e->dvp;
            size_t n = MIN((size_t)e->namlen, q->size - 1);
            memcpy(q->name, e->name, n);
            q->name[n] = 0;
            r = 0;
        }
    }
    hlock_exit(&in->h);
    return r;
}

/* ---- the caller's side ---- */

static void req_init(struct cld_req *q, int cl, const struct cld_key *k, enum cld_what what)
{
    memset(q, 0, sizeof *q);
    q->cl = cl;
    q->src = cluster_self(map);
    q->k = k;
    q->what = what;
}

/* Purge on one cluster until done: drop what came back, ask again while
 * the list was full, retry (counted) while it met a reservation. */
static int purge_cluster(struct cld_req *q)
{
    unsigned attempt = 0;
    int total = 0;
    for (;;) {
        int before = q->removed;
        q->more = false;
        long r = cluster_call(map, q->cl, purge_here, q);
        total += q->removed - before;
        rel_drop(&q->rel);
        if (q->limit && q->removed >= q->limit)
            return total;
        if (r == -EDEADLK) {
            cluster_count(map, cluster_self(map), retries);
            cluster_backoff(&attempt);
        } else if (!q->more) {
            return total;
        }
    }
}

/* Send a purge to every cluster (the home, when there is one, first), the
 * rest in parallel, then finish each cluster's part.  Returns the number
 * of entries removed. */
static int purge_everywhere(const struct cld_key *k, enum cld_what what, struct vnode *vp,
                            struct vfs *vfsp, int skip)
{
    int ncl = map->ncl, total = 0;
    struct cld_req *q = kmalloc(ncl * sizeof *q);
    struct cluster_call *calls = kmalloc(ncl * sizeof *calls);
    if (!q || !calls) {
        /* No memory for the parallel form: one cluster at a time. */
        kfree(q);
        kfree(calls);
        struct cld_req one;
        for (int cl = 0; cl < ncl; cl++) {
            if (cl == skip)
                continue;
            req_init(&one, cl, k, what);
            one.vp = vp;
            one.vfsp = vfsp;
            total += purge_cluster(&one);
        }
        return total;
    }
    for (int cl = 0; cl < ncl; cl++) {
        req_init(&q[cl], cl, k, what);
        q[cl].vp = vp;
        q[cl].vfsp = vfsp;
    }
    if (k && k->home != skip)
        total += purge_cluster(&q[k->home]);
    for (int cl = 0; cl < ncl; cl++)
        if (cl != skip && !(k && cl == k->home))
            cluster_call_start(map, cl, &calls[cl], purge_here, &q[cl]);
    for (int cl = 0; cl < ncl; cl++) {
        if (cl == skip || (k && cl == k->home))
            continue;
        long r = cluster_call_wait(&calls[cl]);
        total += q[cl].removed;
        rel_drop(&q[cl].rel);
        if (r == -EDEADLK || q[cl].more) {
            if (r == -EDEADLK)
                cluster_count(map, cluster_self(map), retries);
            q[cl].removed = 0;
            total += purge_cluster(&q[cl]);
        }
    }
    kfree(q);
    kfree(calls);
    return total;
}

/* Under [H] in the caller's instance: a place-holder for k, reserved;
 * NULL when the row has no entry to spare. */
static struct cld_ent *make_placeholder(struct cld_inst *in, const struct cld_key *k,
                                        struct cld_rel *rel)
{
    struct cld_ent *e = claim(in, k->row, rel);
    if (e)
        fill(in, e, k, NULL, HRES_BIT | F_PLACE);
    return e;
}

/* Ask k's home for the name through place-holder e: 0 with *vpp (the
 * caller's reference), -ENOENT, or -EDEADLK (retry). */
static int replicate(struct cld_inst *in, int cl, struct cld_ent *e, const struct cld_key *k,
                     struct vnode **vpp)
{
    struct cld_req q;
    req_init(&q, k->home, k, M_NAME);
    long r = cluster_call(map, k->home, home_lookup, &q);
    hlock_enter(&in->h);
    if (r == 0) {
        e->vp = q.vp;
        e->flags = HRES_BIT | F_VALID | F_REPLICA;
        e->stamp = ++in->clock;
        cluster_count(map, cl, replications);
        *vpp = q.vp;
    } else {
        e->flags = HRES_BIT;
    }
    hres_clear(&e->flags);
    hlock_exit(&in->h);
    return (int)r;
}

struct vnode *cl_dnlc_lookup(struct vnode *dvp, const char *name, struct cred *cr)
{
    struct cld_key k;
    if (!make_key(&k, dvp, name, cr))
        return NULL;
    stat_inc(st_lookups);
    unsigned attempt = 0;
    for (;;) {
        int cl = cluster_self(map);
        struct cld_inst *in = insts[cl];
        struct cld_rel rel = { 0 };
        struct vnode *vp = NULL;
        hlock_enter(&in->h);
        struct cld_ent *e = find(in, &k);
        if (e && !hres_busy(&e->flags)) {
            vp = e->vp;
            VN_HOLD(vp);        /* under the lock: the entry's hold keeps vp alive */
            e->stamp = ++in->clock;
            hlock_exit(&in->h);
            stat_inc(st_hits);
            return vp;
        }
        if (e) {
            /* Someone is at work on it; a place-holder means its call to
             * the home is in flight: ours is combined with it. */
            bool place = e->flags & F_PLACE;
            hlock_exit(&in->h);
            if (place)
                cluster_count(map, cl, combined);
            hres_wait(&in->h, &e->flags);
            continue;
        }
        if (k.home == cl || !(e = make_placeholder(in, &k, &rel))) {
            hlock_exit(&in->h);
            rel_drop(&rel);
            stat_inc(st_misses);
            return NULL;
        }
        hlock_exit(&in->h);
        /* The victim's references go after the call: dropping one may
         * sleep (VOP_INACTIVE), and a reservation is never held across a
         * sleep, or a waiter on this CPU would spin for ever. */
        int r = replicate(in, cl, e, &k, &vp);
        rel_drop(&rel);
        if (r != -EDEADLK) {
            if (r == 0)
                stat_inc(st_hits);
            else
                stat_inc(st_misses);
            return vp;
        }
        /* The home's entry is reserved: our reservation is gone, back off
         * and establish everything again (section 2.3). */
        cluster_count(map, cl, retries);
        cluster_backoff(&attempt);
    }
}

void cl_dnlc_enter(struct vnode *dvp, const char *name, struct vnode *vp, struct cred *cr)
{
    struct cld_key k;
    if (!vp || !make_key(&k, dvp, name, cr))
        return;
    stat_inc(st_enters);
    VN_HOLD(dvp);
    VN_HOLD(vp);
    cred_hold(cr);
    struct cld_req q;
    req_init(&q, k.home, &k, M_NAME);
    q.vp = vp;
    long r = cluster_call_optimistic(map, k.home, home_enter, &q, NULL);
    if (r == 1) {
        VN_RELE(vp);
        VN_RELE(dvp);
        cred_rele(cr);
    }
    if (r == 2) {
        /* Re-pointed: the drops of home_enter, and the old replicas. */
        VN_RELE(q.rel.vn[0]);
        VN_RELE(q.rel.vn[1]);
        cred_rele(q.rel.cr[0]);
        q.rel.n = 0;
        purge_everywhere(&k, M_NAME, NULL, NULL, k.home);
    }
    rel_drop(&q.rel);
}

void cl_dnlc_remove(struct vnode *dvp, const char *name)
{
    struct cld_key k;
    if (!make_key(&k, dvp, name, NULL))
        return;
    purge_everywhere(&k, M_NAME, NULL, NULL, -1);
}

void cl_dnlc_purge_vp(struct vnode *vp)
{
    stat_inc(st_purges);
    purge_everywhere(NULL, M_VP, vp, NULL, -1);
}

void cl_dnlc_purge(void)
{
    stat_inc(st_purges);
    purge_everywhere(NULL, M_ALL, NULL, NULL, -1);
}

int cl_dnlc_purge_vfsp(struct vfs *vfsp, int count)
{
    int total = 0;
    stat_inc(st_purges);
    if (count == 0)
        return purge_everywhere(NULL, M_VFS, NULL, vfsp, -1);
    for (int cl = 0; cl < map->ncl && total < count; cl++) {
        struct cld_req q;
        req_init(&q, cl, NULL, M_VFS);
        q.vfsp = vfsp;
        q.limit = count - total;
        total += purge_cluster(&q);
    }
    return total;
}

int cl_dnlc_purge1(void)
{
    int self = cluster_self(map);
    for (int i = 0; i < map->ncl; i++) {
        struct cld_req q;
        req_init(&q, (self + i) % map->ncl, NULL, M_ONE);
        q.limit = 1;
        if (purge_cluster(&q) > 0)
            return 1;
    }
    return 0;
}

int cl_dnlc_reverse(struct vnode *vp, struct vnode **dvpp, char *name, size_t size)
{
    int self = cluster_self(map);
    for (int i = 0; i < map->ncl; i++) {
        struct cld_req q;
        req_init(&q, (self + i) % map->ncl, NULL, M_VP);
        q.vp = vp;
        q.name = name;
        q.size = size;
        if (cluster_call(map, q.cl, reverse_here, &q) == 0) {
            *dvpp = q.vp;
            return 0;
        }
    }
    return -ENOENT;
}

void cl_dnlc_stats_get(struct dnlc_stats *out)
{
    out->lookups = __atomic_load_n(&st_lookups, __ATOMIC_RELAXED);
    out->hits = __atomic_load_n(&st_hits, __ATOMIC_RELAXED);
    out->misses = __atomic_load_n(&st_misses, __ATOMIC_RELAXED);
    out->enters = __atomic_load_n(&st_enters, __ATOMIC_RELAXED);
    out->purges = __atomic_load_n(&st_purges, __ATOMIC_RELAXED);
}

/* ---- tests and boot ---- */

int cl_dnlc_home(struct vnode *dvp, const char *name)
{
    struct cld_key k;
    return map && make_key(&k, dvp, name, NULL) ? k.home : -1;
}

int cl_dnlc_copies(struct vnode *dvp, const char *name, struct cred *cr)
{
    struct cld_key k;
    int n = 0;
    if (!map || !make_key(&k, dvp, name, cr))
        return 0;
    for (int cl = 0; cl < map->ncl; cl++) {
        hlock_enter(&insts[cl]->h);
        struct cld_ent *e = find(insts[cl], &k);
        n += e && (e->flags & F_VALID);
        hlock_exit(&insts[cl]->h);
    }
    return n;
}

void cl_dnlc_init(void)
{
    map = cluster_sys();
    if (!map)
        return;
    for (int cl = 0; cl < map->ncl; cl++) {
        insts[cl] = cluster_alloc_instance(map, cl, sizeof(struct cld_inst));
        if (!insts[cl])
            panic("cl_dnlc_init: no memory for cluster %d's name cache", cl);
        hlock_init(&insts[cl]->h, &cluster_dnlc_class, map, cl);
    }
    kprintf("dnlc: clustered, %d instances of %u rows x %u ways\n", map->ncl, CLD_ROWS,
            CLD_WAYS);
}
