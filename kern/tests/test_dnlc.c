/*
 * ktests for the DNLC (kern/vfs/dnlc.c), whichever cache= model the kernel
 * booted with, on fake vnodes: a tiny vnodeops whose vop_inactive counts
 * its calls, and two fake file systems.  Every test starts from an empty
 * cache and checks that the reference counts come back to where they began.
 *
 *   dnlc_basic       enter/lookup/remove, credentials, long names, counters
 *   dnlc_purges      purge_vp, purge_vfsp (with a count), purge1, purge;
 *                    the DNLC's last reference going calls VOP_INACTIVE
 *   dnlc_negative    negative entries (DNLC_NO_VNODE): found per
 *                    credential, replaced by and replacing positive ones,
 *                    removed by name for every credential, purged by
 *                    directory, file system and purge1; never held
 *   dnlc_lru         in a full LRU set, enter replaces the least recently
 *                    used entry (a row under ssac; the cache otherwise)
 *   dnlc_mp_1cpu, dnlc_mp
 *                    enter/lookup/remove/purges from many threads (on one
 *                    CPU; on every CPU at once); every hit returns the
 *                    vnode entered for that name, counts balance at the end
 */
#include <kern/tests/ktest.h>
#include <kern/vfs/dnlc.h>
#include <kern/cluster/cluster.h>
#include <kern/vfs/ssac.h>
#include <kern/vfs/vnode.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/arch/cpu.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/sched/thread.h>

static volatile int inactive_calls;     /* [atomic] */

static void fake_inactive(struct vnode *vp, struct cred *cr)
{
    __atomic_add_fetch(&inactive_calls, 1, __ATOMIC_RELAXED);
}

static const struct vnodeops fake_ops = { .vop_inactive = fake_inactive };

enum { NDIRS = 4, NFILES = 8 };

static struct vfs fake_vfs[2];
static struct vnode dirs[NDIRS], files[NFILES];

/* Is the DNLC there?  (A test fails, rather than the kernel, when boot
 * did not call dnlc_init.) */
static bool ready(void)
{
    if (dnlc_test_lru_size() > 0)
        return true;
    ktest_fail("the DNLC is not initialized (dnlc_init not called at boot)");
    return false;
}

/* Fresh vnodes (one reference each, the test's) and an empty cache. */
static void setup(void)
{
    dnlc_purge();
    inactive_calls = 0;
    for (int i = 0; i < NDIRS; i++)
        vn_init(&dirs[i], &fake_ops, VDIR, &fake_vfs[i % 2], NULL);
    for (int i = 0; i < NFILES; i++)
        vn_init(&files[i], &fake_ops, VREG, &fake_vfs[i % 2], NULL);
}

static void teardown(void)
{
    dnlc_purge();
    for (int i = 0; i < NDIRS; i++)
        vn_destroy(&dirs[i]);
    for (int i = 0; i < NFILES; i++)
        vn_destroy(&files[i]);
}

/* Every fake vnode is back to the test's one reference. */
static int balanced(void)
{
    for (int i = 0; i < NDIRS; i++)
        KT_ASSERT_EQ(dirs[i].v_count, 1);
    for (int i = 0; i < NFILES; i++)
        KT_ASSERT_EQ(files[i].v_count, 1);
    KT_ASSERT_EQ(inactive_calls, 0);
    return 0;
}

/* Does name in dvp for cr find want (NULL: nothing; DNLC_NO_VNODE: a
 * negative entry)?  Drops the hold. */
static bool finds(struct vnode *dvp, const char *name, struct cred *cr, struct vnode *want)
{
    struct vnode *vp = dnlc_lookup(dvp, name, cr);
    if (vp && vp != DNLC_NO_VNODE)
        VN_RELE(vp);
    return vp == want;
}

static int basic(struct cred *other)
{
    struct vnode *d = &dirs[0], *f1 = &files[0], *f2 = &files[1];
    struct dnlc_stats s0, s1;
    dnlc_stats_get(&s0);
    KT_ASSERT(finds(d, "alpha", kcred, NULL));
    dnlc_enter(d, "alpha", f1, kcred);
    KT_ASSERT_EQ(d->v_count, 2);
    KT_ASSERT_EQ(f1->v_count, 2);
    struct vnode *vp = dnlc_lookup(d, "alpha", kcred);
    KT_ASSERT(vp == f1);
    KT_ASSERT_EQ(f1->v_count, 3);       /* the lookup's own reference */
    VN_RELE(vp);
    dnlc_stats_get(&s1);
    KT_ASSERT_EQ(s1.lookups - s0.lookups, 2);
    KT_ASSERT_EQ(s1.hits - s0.hits, 1);
    KT_ASSERT_EQ(s1.misses - s0.misses, 1);
    KT_ASSERT_EQ(s1.enters - s0.enters, 1);

    /* The credential is part of the match. */
    KT_ASSERT(finds(d, "alpha", other, NULL));
    dnlc_enter(d, "alpha", f2, other);
    KT_ASSERT(finds(d, "alpha", other, f2));
    KT_ASSERT(finds(d, "alpha", kcred, f1));
    KT_ASSERT(finds(d, "alphb", kcred, NULL));
    KT_ASSERT(finds(&dirs[1], "alpha", kcred, NULL));
    /* Entering it again changes nothing; re-pointing it moves the hold. */
    dnlc_enter(d, "alpha", f1, kcred);
    KT_ASSERT_EQ(f1->v_count, 2);
    KT_ASSERT_EQ(d->v_count, 3);
    dnlc_enter(d, "alpha", f2, kcred);
    KT_ASSERT_EQ(f1->v_count, 1);
    KT_ASSERT_EQ(f2->v_count, 3);
    KT_ASSERT(finds(d, "alpha", kcred, f2));
    dnlc_enter(d, "alpha", f1, kcred);

    /* remove takes the name away for every credential. */
    dnlc_enter(d, "beta", f2, kcred);
    dnlc_remove(d, "alpha");
    KT_ASSERT(finds(d, "alpha", kcred, NULL));
    KT_ASSERT(finds(d, "alpha", other, NULL));
    KT_ASSERT(finds(d, "beta", kcred, f2));
    dnlc_remove(d, "beta");
    dnlc_remove(d, "never-entered");
    if (balanced())
        return 1;

    /* Names longer than DNLC_NAMELEN are not cached. */
    char longname[DNLC_NAMELEN + 2];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    dnlc_enter(d, longname, f1, kcred);
    KT_ASSERT_EQ(f1->v_count, 1);
    KT_ASSERT(finds(d, longname, kcred, NULL));
    longname[DNLC_NAMELEN] = '\0';      /* exactly the limit: cached */
    dnlc_enter(d, longname, f1, kcred);
    KT_ASSERT(finds(d, longname, kcred, f1));
    dnlc_remove(d, longname);
    return balanced();
}

KTEST(dnlc_basic)
{
    if (cluster_on())
        KT_SKIP("cluster=: replicas hold references of their own (cluster_dnlc_* test it)");
    if (!ready())
        return 1;
    struct cred *other = cred_alloc(1000, 100);
    KT_ASSERT(other);
    setup();
    int r = basic(other);
    teardown();
    cred_rele(other);
    return r;
}

static int purges(void)
{
    struct vnode *d1 = &dirs[0], *d2 = &dirs[1];    /* in fake_vfs[0] and [1] */
    struct vnode *f1 = &files[0], *f2 = &files[2];  /* both in fake_vfs[0] */
    dnlc_enter(d1, "a", f1, kcred);
    dnlc_enter(d1, "b", f2, kcred);
    dnlc_enter(d2, "c", f1, kcred);
    dnlc_enter(d1, "sub", d2, kcred);
    /* By vnode: as the target and as the directory. */
    dnlc_purge_vp(f1);
    KT_ASSERT_EQ(f1->v_count, 1);
    KT_ASSERT(finds(d1, "a", kcred, NULL));
    KT_ASSERT(finds(d2, "c", kcred, NULL));
    KT_ASSERT(finds(d1, "b", kcred, f2));
    KT_ASSERT(finds(d1, "sub", kcred, d2));
    dnlc_enter(d2, "c", f1, kcred);
    dnlc_purge_vp(d2);
    KT_ASSERT_EQ(d2->v_count, 1);
    KT_ASSERT(finds(d1, "sub", kcred, NULL));
    KT_ASSERT(finds(d2, "c", kcred, NULL));

    /* By file system, with a count limit. */
    char name[8];
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "x%d", i);
        dnlc_enter(d1, name, f1, kcred);    /* all in fake_vfs[0], like "b" */
    }
    dnlc_enter(d2, "other", &files[1], kcred);  /* only fake_vfs[1] */
    KT_ASSERT_EQ(dnlc_purge_vfsp(&fake_vfs[0], 2), 2);
    KT_ASSERT_EQ(dnlc_purge_vfsp(&fake_vfs[0], 0), 5);
    KT_ASSERT_EQ(dnlc_purge_vfsp(&fake_vfs[0], 0), 0);
    KT_ASSERT(finds(d2, "other", kcred, &files[1]));

    /* Any one entry, until there are none. */
    dnlc_enter(d1, "p", f1, kcred);
    dnlc_enter(d1, "q", f2, kcred);
    KT_ASSERT_EQ(dnlc_purge1(), 1);
    KT_ASSERT_EQ(dnlc_purge1(), 1);
    KT_ASSERT_EQ(dnlc_purge1(), 1);
    KT_ASSERT_EQ(dnlc_purge1(), 0);
    if (balanced())
        return 1;

    /* All of them. */
    for (int i = 0; i < NFILES; i++) {
        snprintf(name, sizeof name, "f%d", i);
        dnlc_enter(&dirs[i % NDIRS], name, &files[i], kcred);
    }
    dnlc_purge();
    for (int i = 0; i < NFILES; i++) {
        snprintf(name, sizeof name, "f%d", i);
        KT_ASSERT(finds(&dirs[i % NDIRS], name, kcred, NULL));
    }
    if (balanced())
        return 1;

    /* When the DNLC holds the last reference, purging it inactivates. */
    struct vnode *g = &files[NFILES - 1];
    dnlc_enter(d1, "g", g, kcred);
    VN_RELE(g);                         /* the test's own reference */
    KT_ASSERT_EQ(g->v_count, 1);
    KT_ASSERT_EQ(inactive_calls, 0);
    dnlc_purge_vp(g);
    KT_ASSERT_EQ(g->v_count, 0);
    KT_ASSERT_EQ(inactive_calls, 1);
    VN_HOLD(g);                         /* as a file system would reactivate it */
    inactive_calls = 0;
    return balanced();
}

KTEST(dnlc_purges)
{
    if (cluster_on())
        KT_SKIP("cluster=: replicas hold references of their own (cluster_dnlc_* test it)");
    if (!ready())
        return 1;
    setup();
    int r = purges();
    teardown();
    return r;
}

/* ---- negative entries ---- */

static int negatives(struct cred *other)
{
    struct vnode *d = &dirs[0], *d2 = &dirs[1], *f = &files[0];
    dnlc_enter(d, "gone", DNLC_NO_VNODE, kcred);
    KT_ASSERT_EQ(d->v_count, 2);                /* the directory's hold alone */
    KT_ASSERT(finds(d, "gone", kcred, DNLC_NO_VNODE));
    KT_ASSERT(finds(d, "gone", other, NULL));   /* per credential, as a positive one */
    /* A positive entry replaces it, and a negative one the positive. */
    dnlc_enter(d, "gone", f, kcred);
    KT_ASSERT(finds(d, "gone", kcred, f));
    KT_ASSERT_EQ(f->v_count, 2);
    dnlc_enter(d, "gone", DNLC_NO_VNODE, kcred);
    KT_ASSERT_EQ(f->v_count, 1);
    KT_ASSERT(finds(d, "gone", kcred, DNLC_NO_VNODE));
    /* What a direnter does before it adds the name: gone for everyone. */
    dnlc_enter(d, "gone", DNLC_NO_VNODE, other);
    dnlc_remove(d, "gone");
    KT_ASSERT(finds(d, "gone", kcred, NULL));
    KT_ASSERT(finds(d, "gone", other, NULL));
    /* Purges: by the directory, by file system, any one. */
    dnlc_enter(d, "n1", DNLC_NO_VNODE, kcred);
    dnlc_enter(d2, "n2", DNLC_NO_VNODE, kcred);
    dnlc_purge_vp(d);
    KT_ASSERT(finds(d, "n1", kcred, NULL));
    KT_ASSERT(finds(d2, "n2", kcred, DNLC_NO_VNODE));
    KT_ASSERT_EQ(dnlc_purge_vfsp(&fake_vfs[1], 0), 1);     /* d2's file system */
    KT_ASSERT(finds(d2, "n2", kcred, NULL));
    dnlc_enter(d, "n3", DNLC_NO_VNODE, kcred);
    KT_ASSERT_EQ(dnlc_purge1(), 1);
    KT_ASSERT_EQ(dnlc_purge1(), 0);
    KT_ASSERT_EQ(DNLC_NO_VNODE->v_count, 0);    /* never held */
    return balanced();
}

KTEST(dnlc_negative)
{
    if (cluster_on())
        KT_SKIP("cluster=: the clustered cache keeps no negative entries");
    if (!ready())
        return 1;
    struct cred *other = cred_alloc(1000, 100);
    KT_ASSERT(other);
    setup();
    int r = negatives(other);
    teardown();
    cred_rele(other);
    return r;
}

/* ---- LRU replacement ---- */

static int lru(void)
{
    struct vnode *d = &dirs[0], *f = &files[0];
    unsigned size = dnlc_test_lru_size();
    KT_ASSERT(size >= 2 && size <= 4096);
    /* size + 1 names that compete for the same entries. */
    static char names[4097][12];
    unsigned set = dnlc_test_lru_set(d, "l0", kcred), n = 0;
    for (unsigned i = 0; n < size + 1 && i < 1000000; i++) {
        snprintf(names[n], sizeof names[n], "l%u", i);
        if (dnlc_test_lru_set(d, names[n], kcred) == set)
            n++;
    }
    KT_ASSERT_EQ(n, size + 1);
    for (unsigned i = 0; i < size; i++)
        dnlc_enter(d, names[i], f, kcred);
    KT_ASSERT_EQ(f->v_count, 1 + size);
    /* Use the oldest; the second oldest becomes the least recently used. */
    KT_ASSERT(finds(d, names[0], kcred, f));
    dnlc_enter(d, names[size], f, kcred);
    KT_ASSERT_EQ(f->v_count, 1 + size);
    KT_ASSERT(finds(d, names[1], kcred, NULL));
    KT_ASSERT(finds(d, names[0], kcred, f));
    for (unsigned i = 2; i <= size; i++)
        KT_ASSERT(finds(d, names[i], kcred, f));
    dnlc_purge();
    return balanced();
}

KTEST(dnlc_lru)
{
    if (cluster_on())
        KT_SKIP("cluster=: replicas hold references of their own (cluster_dnlc_* test it)");
    if (!ready())
        return 1;
    setup();
    int r = lru();
    teardown();
    return r;
}

/* ---- many threads ---- */

enum { MP_NAMES = 24, MP_MAX_THREADS = 2 * MAX_CPUS };

static struct cred *mp_creds[3];

/* The vnode a (directory, name) maps to: fixed, so every hit can be checked. */
static struct vnode *mp_target(int dir, int name)
{
    return &files[(dir * 7 + name * 3) % NFILES];
}

struct mp_arg {
    uint32_t seed;
    int iters;
    int bad;            /* lookups that returned the wrong vnode */
};

static uint32_t next_rand(uint32_t *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

static void mp_body(void *arg)
{
    struct mp_arg *a = arg;
    char name[8];
    for (int i = 0; i < a->iters; i++) {
        uint32_t r = next_rand(&a->seed);
        int dir = r % NDIRS, nm = (r >> 4) % MP_NAMES, op = (r >> 10) % 200;
        struct cred *cr = mp_creds[(r >> 18) % 3];
        struct vnode *dvp = &dirs[dir];
        snprintf(name, sizeof name, "m%d", nm);
        /* Whole-cache scans (the last three) are rare: see mp(). */
        if (op < 80) {
            dnlc_enter(dvp, name, mp_target(dir, nm), cr);
        } else if (op < 172) {
            struct vnode *vp = dnlc_lookup(dvp, name, cr);
            if (vp) {
                if (vp != mp_target(dir, nm))
                    a->bad++;
                VN_RELE(vp);
            }
        } else if (op < 186) {
            dnlc_remove(dvp, name);
        } else if (op < 194) {
            dnlc_purge1();
        } else if (op < 197) {
            dnlc_purge_vp(&files[r % NFILES]);
        } else if (op < 199) {
            dnlc_purge_vfsp(&fake_vfs[r % 2], 3);
        } else {
            dnlc_purge_vp(&dirs[r % NDIRS]);
        }
        if (i % 32 == 0)
            thread_yield();
    }
}

static int mp(bool one_cpu)
{
    static struct mp_arg args[MP_MAX_THREADS];
    static struct thread *t[MP_MAX_THREADS];
    /* 2 threads on one CPU, or one per CPU, and a bounded total: see
     * nthreads in test_buf.c (under cache=single every operation of every
     * CPU takes the one lock). */
    int n = one_cpu ? 2 : MIN(MP_MAX_THREADS, MAX(2, ncpus));
    int iters = MAX(32, (ncpus <= 4 ? 1600 : 960) / n);
    uint64_t here = 1UL << cpu_id();
    struct dnlc_stats s0, s1;
    dnlc_stats_get(&s0);
    for (int i = 0; i < n; i++) {
        args[i] = (struct mp_arg){ .seed = 0x1234567u * (i + 1), .iters = iters };
        t[i] = thread_create("ktest_dnlc", mp_body, &args[i], one_cpu ? here : 1UL << (i % ncpus));
    }
    for (int i = 0; i < n; i++)
        if (t[i])
            thread_join(t[i]);
    dnlc_stats_get(&s1);
    for (int i = 0; i < n; i++)
        KT_ASSERT_EQ(args[i].bad, 0);
    KT_ASSERT(s1.hits - s0.hits > 0);
    KT_ASSERT(s1.enters - s0.enters > 0);
    KT_ASSERT_EQ(s1.lookups - s0.lookups, (s1.hits - s0.hits) + (s1.misses - s0.misses));
    dnlc_purge();
    return balanced();
}

static int mp_test(bool one_cpu)
{
    if (!ready())
        return 1;
    mp_creds[0] = kcred;
    mp_creds[1] = cred_alloc(1, 1);
    mp_creds[2] = cred_alloc(2, 2);
    KT_ASSERT(mp_creds[1] && mp_creds[2]);
    setup();
    int r = mp(one_cpu);
    teardown();
    cred_rele(mp_creds[1]);
    cred_rele(mp_creds[2]);
    return r;
}

KTEST(dnlc_mp_1cpu) { return mp_test(true); }
KTEST(dnlc_mp) { return mp_test(false); }
