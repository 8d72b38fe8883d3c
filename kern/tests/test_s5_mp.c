/*
 * ktests for the S5 file system (kern/s5/) with several threads at once:
 * the inode cache's -1 protocol and its races, a full inode table, and
 * every CPU creating, writing, renaming and removing at the same time.
 * Helpers in kern/tests/s5t.c.
 *
 *   s5_inactive    the -1 protocol: a released inode comes back from the
 *                  cache, VOP_INACTIVE runs exactly once per release, and
 *                  concurrent lookups and releases leave the cache sound
 *   s5_reap        an inactivation that arises while the releasing thread
 *                  holds another inode's ILOCK, and finds the released
 *                  inode ILOCKED by a thread waiting for that other inode,
 *                  goes to the reaper instead of deadlocking
 *   s5_mp          create/write/unlink/rename from every CPU at once, in one
 *                  shared directory and in private ones, then the check
 *                  and a remount that finds every surviving file intact
 *   s5_enfile      a full in-core inode table: the DNLC is purged before
 *                  -ENFILE, and releasing inodes makes room again
 *   s5_mp_rename   every CPU moving two directories into each other at
 *                  once: exactly one move wins, never a cycle
 */
#include <kern/tests/ktest.h>
#include <kern/tests/s5t.h>
#include <kern/s5/s5_inode.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/dnlc.h>
#include <kern/vm/pcache.h>
#include <kern/vfs/cred.h>
#include <kern/vfs/buf.h>
#include <drivers/block/bio.h>
#include <kern/arch/cpu.h>
#include <kern/vm/kmem.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/sched/thread.h>

/* A mismatch in data read back. */

/* ---- s5_inactive ---- */

struct churn_arg {
    struct vnode *dvp;
    int rounds;
    volatile int *finished;
    int error;
};

/* Look the same name up and release it, over and over. */
static void churn_body(void *p)
{
    struct churn_arg *a = p;
    for (int i = 0; i < a->rounds && !a->error; i++) {
        struct vnode *vp;
        int err = VOP_LOOKUP(a->dvp, "x", &vp, kcred);
        if (err) {
            a->error = err;
            break;
        }
        if (i % 3 == 0)
            dnlc_remove(a->dvp, "x");       /* so the last reference is often ours */
        VN_RELE(vp);
    }
    __atomic_add_fetch(a->finished, 1, __ATOMIC_SEQ_CST);
}

static int inactive_churn(struct s5t *t)
{
    static struct churn_arg args[MAX_CPUS];
    static struct thread *th[MAX_CPUS];
    volatile int finished = 0;
    int n = ncpus_online;
    for (int i = 0; i < n; i++) {
        args[i] = (struct churn_arg){ .dvp = t->root, .rounds = 200, .finished = &finished };
        th[i] = thread_create("s5_churn", churn_body, &args[i], 1UL << i);
    }
    for (int i = 0; i < n; i++)
        if (th[i])
            thread_join(th[i]);
    for (int i = 0; i < n; i++) {
        KT_ASSERT(th[i] != NULL);
        KT_ASSERT_EQ(args[i].error, 0);
    }
    int nfree;
    KT_ASSERT_EQ(s5_icache_audit(&nfree), 0);
    return 0;
}

KTEST(s5_inactive)
{
    struct s5t t;
    struct vnode *vp, *vp2;
    KT_ASSERT_EQ(t_fresh(&t, 512, 64), 0);
    KT_ASSERT_EQ(t_create(t.root, "x", &vp), 0);
    dnlc_purge_vp(vp);                          /* only our reference is left */
    uint64_t inact = s5_stats.inactives, hits = s5_stats.ihits, misses = s5_stats.imisses;
    VN_RELE(vp);
    KT_ASSERT_EQ(s5_stats.inactives - inact, 1);
    KT_ASSERT_EQ(__atomic_load_n(&vp->v_count, __ATOMIC_ACQUIRE), -1);
    /* Looked up again: the same in-core inode, from the cache. */
    KT_ASSERT_EQ(VOP_LOOKUP(t.root, "x", &vp2, kcred), 0);
    KT_ASSERT(vp2 == vp);
    KT_ASSERT(s5_stats.ihits > hits);
    KT_ASSERT_EQ(s5_stats.imisses, misses);
    KT_ASSERT(__atomic_load_n(&vp->v_count, __ATOMIC_ACQUIRE) >= 1);
    /* An extra hold and release does not inactivate it. */
    VN_HOLD(vp2);
    VN_RELE(vp2);
    KT_ASSERT_EQ(s5_stats.inactives - inact, 1);
    dnlc_purge_vp(vp2);
    VN_RELE(vp2);
    KT_ASSERT_EQ(s5_stats.inactives - inact, 2);
    KT_ASSERT_EQ(__atomic_load_n(&vp->v_count, __ATOMIC_ACQUIRE), -1);
    int nfree;
    KT_ASSERT_EQ(s5_icache_audit(&nfree), 0);
    /* Every CPU looks up and releases the same file at once. */
    int r = inactive_churn(&t);
    if (r) {
        t_unmount(&t);
        return r;
    }
    KT_ASSERT_EQ(t_finish(&t, NULL), 0);
    KT_ASSERT_EQ(s5_icache_audit(&nfree), 0);
    return 0;
}

/* ---- s5_keep_pages ---- */

/* A file's clean pages outlive its last release (VKEEPPAGES): looked up
 * again it finds them, with no disk read.  Deleted, its in-core inode is
 * the next reused, and the new file it becomes sees none of the old
 * pages (they are purged first: page_purges). */
KTEST(s5_keep_pages)
{
    struct s5t t;
    struct vnode *vp, *vp2;
    KT_ASSERT_EQ(t_fresh(&t, 512, 64), 0);
    KT_ASSERT_EQ(t_create(t.root, "x", &vp), 0);
    KT_ASSERT(vp->v_flag & VKEEPPAGES);
    KT_ASSERT_EQ(t_write_pat(vp, 0, 3 * PAGE_SIZE, 7, 1024), 0);
    KT_ASSERT_EQ(pcache_flush(vp, 0, ~0UL), 0);     /* clean: no dirty hold */
    uint64_t pages = __atomic_load_n(&vp->v_npages, __ATOMIC_ACQUIRE);
    KT_ASSERT(pages >= 3);
    dnlc_purge_vp(vp);
    VN_RELE(vp);
    KT_ASSERT_EQ(__atomic_load_n(&vp->v_count, __ATOMIC_ACQUIRE), -1);
    KT_ASSERT_EQ(__atomic_load_n(&vp->v_npages, __ATOMIC_ACQUIRE), pages);
    uint64_t misses = s5_stats.imisses, purged = s5_stats.page_purges;
    KT_ASSERT_EQ(VOP_LOOKUP(t.root, "x", &vp2, kcred), 0);
    KT_ASSERT(vp2 == vp);
    KT_ASSERT_EQ(s5_stats.imisses, misses);
    KT_ASSERT_EQ(t_check_pat(vp2, 0, 3 * PAGE_SIZE, 7, 1024), 0);
    KT_ASSERT_EQ(__atomic_load_n(&vp2->v_npages, __ATOMIC_ACQUIRE), pages);
    VN_RELE(vp2);
    /* Deleted: its identity goes, its pages wait for the reuse. */
    KT_ASSERT_EQ(VOP_REMOVE(t.root, "x", kcred), 0);
    KT_ASSERT_EQ(__atomic_load_n(&vp->v_count, __ATOMIC_ACQUIRE), -1);
    KT_ASSERT_EQ(t_create(t.root, "y", &vp2), 0);
    KT_ASSERT(vp2 == vp);                       /* the head of the free list */
    KT_ASSERT(s5_stats.page_purges > purged);
    KT_ASSERT_EQ(__atomic_load_n(&vp2->v_npages, __ATOMIC_ACQUIRE), 0);
    KT_ASSERT_EQ(VOP_TRUNCATE(vp2, 3 * PAGE_SIZE, kcred), 0);
    KT_ASSERT(t_reads_zero(vp2, 0, 64));
    KT_ASSERT(t_reads_zero(vp2, 2 * PAGE_SIZE, 64));
    VN_RELE(vp2);
    int nfree;
    KT_ASSERT_EQ(s5_icache_audit(&nfree), 0);
    KT_ASSERT_EQ(t_finish(&t, NULL), 0);
    return 0;
}

/* ---- s5_reap ---- */

struct reap_arg {
    struct s5_inode *v, *x;
    volatile int stage;         /* [a] 1: holds v's ILOCK; 2: done */
};

/* Stands for a thread that revived v and locked it, and now wants x
 * (say, v is x's parent directory). */
static void reap_holder(void *p)
{
    struct reap_arg *a = p;
    ILOCK(a->v);
    __atomic_store_n(&a->stage, 1, __ATOMIC_RELEASE);
    ILOCK(a->x);
    IUNLOCK(a->x);
    IUNLOCK(a->v);
    __atomic_store_n(&a->stage, 2, __ATOMIC_RELEASE);
}

KTEST(s5_reap)
{
    struct s5t t;
    struct vnode *vx, *vv;
    KT_ASSERT_EQ(t_fresh(&t, 1024, 64), 0);
    KT_ASSERT_EQ(t_create(t.root, "x", &vx), 0);
    KT_ASSERT_EQ(t_create(t.root, "v", &vv), 0);
    dnlc_purge_vp(vv);                      /* ours is the only reference */
    KT_ASSERT_EQ(__atomic_load_n(&vv->v_count, __ATOMIC_ACQUIRE), 1);
    static struct reap_arg a;
    a = (struct reap_arg){ .v = VTOI(vv), .x = VTOI(vx) };
    uint64_t reaped = s5_stats.reaped;
    ILOCK(a.x);
    struct thread *th = thread_create("s5_reap", reap_holder, &a, AFFINITY_ALL);
    if (!th) {
        IUNLOCK(a.x);
        KT_ASSERT(th != NULL);
    }
    while (__atomic_load_n(&a.stage, __ATOMIC_ACQUIRE) < 1)
        thread_yield();
    /* The last reference goes while we hold x and the holder holds v:
     * waiting for v here would never end. */
    VN_RELE(vv);
    IUNLOCK(a.x);
    thread_join(th);
    s5_reap_drain();
    KT_ASSERT_EQ(a.stage, 2);
    KT_ASSERT_EQ(s5_stats.reaped - reaped, 1);
    KT_ASSERT_EQ(__atomic_load_n(&vv->v_count, __ATOMIC_ACQUIRE), -1);
    VN_RELE(vx);
    int nfree;
    KT_ASSERT_EQ(s5_icache_audit(&nfree), 0);
    KT_ASSERT_EQ(t_finish(&t, NULL), 0);
    return 0;
}

/* ---- s5_mp ---- */

#define MP_FILES 8

struct mp_arg {
    struct vnode *shared, *root;
    int id;
    volatile int *finished;
    int error;
    const char *what;
};

static int mp_fail(struct mp_arg *a, const char *what, int err)
{
    if (!a->error) {
        a->error = err ? err : -EIO;
        a->what = what;
    }
    return a->error;
}

/* In the shared directory: make files, write and check them, remove
 * every other one. */
static int mp_shared(struct mp_arg *a)
{
    char name[16];
    for (int k = 0; k < MP_FILES; k++) {
        struct vnode *vp;
        snprintf(name, sizeof name, "s%d_%d", a->id, k);
        int err = t_create(a->shared, name, &vp);
        if (err)
            return mp_fail(a, "create shared", err);
        uint32_t f = (uint32_t)(a->id * 100 + k);
        err = t_write_pat(vp, 0, 1500 + k * 700, f, 1024);
        if (!err)
            err = t_check_pat(vp, 0, 1500 + k * 700, f, 999);
        VN_RELE(vp);
        if (err)
            return mp_fail(a, "write shared", err);
    }
    for (int k = 0; k < MP_FILES; k += 2) {
        snprintf(name, sizeof name, "s%d_%d", a->id, k);
        int err = VOP_REMOVE(a->shared, name, kcred);
        if (err)
            return mp_fail(a, "remove shared", err);
    }
    return 0;
}

/* In a private directory: files, a subdirectory, renames, all removed
 * but one file. */
static int mp_private(struct mp_arg *a)
{
    char name[16], name2[16];
    struct vnode *d, *sub, *vp;
    snprintf(name, sizeof name, "d%d", a->id);
    int err = t_mkdir(a->root, name, &d);
    if (err)
        return mp_fail(a, "mkdir", err);
    err = t_mkdir(d, "sub", &sub);
    for (int k = 0; k < MP_FILES && !err; k++) {
        snprintf(name, sizeof name, "p%d", k);
        err = t_create(d, name, &vp);
        if (!err) {
            err = t_write_pat(vp, 0, 3000, (uint32_t)(a->id * 1000 + k), 3000);
            VN_RELE(vp);
        }
        if (!err)
            err = VOP_RENAME(d, name, sub, name, kcred);
    }
    for (int k = 1; k < MP_FILES && !err; k++) {
        snprintf(name, sizeof name, "p%d", k);
        err = VOP_REMOVE(sub, name, kcred);
    }
    if (!err) {
        snprintf(name2, sizeof name2, "keep%d", a->id);
        err = VOP_RENAME(sub, "p0", a->root, name2, kcred);
    }
    if (!err)
        err = VOP_RMDIR(d, "sub", kcred);
    if (sub)
        VN_RELE(sub);
    VN_RELE(d);
    return err ? mp_fail(a, "private dir", err) : 0;
}

static void mp_body(void *p)
{
    struct mp_arg *a = p;
    if (mp_shared(a) == 0)
        mp_private(a);
    __atomic_add_fetch(a->finished, 1, __ATOMIC_SEQ_CST);
}

static int mp_verify(struct s5t *t, int n)
{
    /* The survivors: odd files in the shared directory, keep<i> in the root. */
    struct vnode *shared, *vp;
    char name[16];
    KT_ASSERT_EQ(VOP_LOOKUP(t->root, "shared", &shared, kcred), 0);
    int err = 0;
    for (int i = 0; i < n && !err; i++) {
        for (int k = 1; k < MP_FILES && !err; k += 2) {
            snprintf(name, sizeof name, "s%d_%d", i, k);
            err = VOP_LOOKUP(shared, name, &vp, kcred);
            if (!err) {
                err = t_check_pat(vp, 0, 1500 + k * 700, (uint32_t)(i * 100 + k), 1024);
                VN_RELE(vp);
            }
        }
        snprintf(name, sizeof name, "keep%d", i);
        if (!err)
            err = VOP_LOOKUP(t->root, name, &vp, kcred);
        if (!err) {
            err = t_check_pat(vp, 0, 3000, (uint32_t)(i * 1000), 3000);
            VN_RELE(vp);
        }
    }
    VN_RELE(shared);
    KT_ASSERT_EQ(err, 0);
    return 0;
}

KTEST(s5_mp)
{
    static struct mp_arg args[MAX_CPUS];
    static struct thread *th[MAX_CPUS];
    struct s5t t;
    struct vnode *shared;
    KT_ASSERT_EQ(t_fresh(&t, 4096, 1024), 0);
    uint64_t ffree0 = t_ffree(&t);
    KT_ASSERT_EQ(t_mkdir(t.root, "shared", &shared), 0);
    volatile int finished = 0;
    int n = ncpus_online;
    for (int i = 0; i < n; i++) {
        args[i] = (struct mp_arg){ .shared = shared, .root = t.root, .id = i,
                                   .finished = &finished };
        th[i] = thread_create("s5_mp", mp_body, &args[i], 1UL << i);
    }
    for (int i = 0; i < n; i++)
        if (th[i])
            thread_join(th[i]);
    VN_RELE(shared);
    for (int i = 0; i < n; i++) {
        if (!th[i] || args[i].error) {
            t_unmount(&t);
            ktest_fail("cpu %d: %s: error %d", i, th[i] ? args[i].what : "no thread",
                       args[i].error);
            return 1;
        }
    }
    /* shared, then per CPU: the odd files, the private dir, keep<i>. */
    KT_ASSERT_EQ(ffree0 - t_ffree(&t), 1 + (uint64_t)n * (MP_FILES / 2 + 2));
    struct s5_check_result res;
    KT_ASSERT_EQ(t_finish(&t, &res), 0);
    KT_ASSERT_EQ(res.dirs, 2 + n);
    KT_ASSERT_EQ(t_mount(&t, t.dev), 0);
    KT_ASSERT_EQ(ffree0 - t_ffree(&t), 1 + (uint64_t)n * (MP_FILES / 2 + 2));
    int r = mp_verify(&t, n);
    if (r) {
        t_unmount(&t);
        return r;
    }
    KT_ASSERT_EQ(t_finish(&t, NULL), 0);
    return 0;
}

/* ---- s5_enfile ---- */

/*
 * Hold in-core inodes until the table is full: iget first purges the DNLC
 * (whose references keep released inodes active) and only then says
 * -ENFILE; after some are released, creating works again.  Nothing else
 * may be using S5 meanwhile, or its inodes count against the table too.
 */
KTEST(s5_enfile)
{
    struct s5t t;
    KT_ASSERT_EQ(t_fresh(&t, 2048, 1024), 0);
    struct vnode **held = kzalloc(S5_NINODE * sizeof *held);
    KT_ASSERT(held != NULL);
    uint64_t purges = s5_stats.purges;
    int n = 0, err = 0;
    char name[16];
    while (n < S5_NINODE) {
        snprintf(name, sizeof name, "f%d", n);
        err = t_create(t.root, name, &held[n]);
        if (err)
            break;
        n++;
    }
    int r = 0;
    if (err != -ENFILE || n < S5_NINODE / 2 || s5_stats.purges == purges) {
        ktest_fail("after %d files: error %d, %lu purges", n, err, s5_stats.purges - purges);
        r = 1;
    }
    /* With some released, new files can be made again. */
    for (int i = 0; i < 8 && i < n; i++) {
        VN_RELE(held[i]);
        held[i] = NULL;
    }
    struct vnode *vp;
    if (!r && (err = t_create(t.root, "again", &vp)) != 0) {
        ktest_fail("create after release: error %d", err);
        r = 1;
    }
    if (!r)
        VN_RELE(vp);
    for (int i = 0; i < n; i++)
        if (held[i])
            VN_RELE(held[i]);
    kfree(held);
    int nfree;
    if (!r && s5_icache_audit(&nfree) != 0) {
        ktest_fail("inode cache audit failed");
        r = 1;
    }
    int problems = t_finish(&t, NULL);
    KT_ASSERT_EQ(r, 0);
    KT_ASSERT_EQ(problems, 0);
    return 0;
}

/* ---- s5_mp_rename ---- */

struct swap_arg {
    struct vnode *root, *p, *q;
    int id;
    volatile int *go;
    int result;
};

/*
 * Even threads try to move P into Q, odd ones Q into P, all at once.
 * Exactly one move can succeed: after it, the other would make P and Q
 * each other's parent, a cycle cut off from the root, and must fail with
 * EINVAL (the rename lock and its ancestor check); the same move again
 * finds its name gone (ENOENT).
 */
static void swap_body(void *p)
{
    struct swap_arg *a = p;
    bool even = a->id % 2 == 0;
    while (!__atomic_load_n(a->go, __ATOMIC_ACQUIRE))
        thread_yield();
    a->result = VOP_RENAME(a->root, even ? "P" : "Q", even ? a->q : a->p, even ? "P" : "Q",
                           kcred);
}

static int swap_round(struct s5t *t, struct vnode *p, struct vnode *q, int n)
{
    static struct swap_arg args[MAX_CPUS];
    static struct thread *th[MAX_CPUS];
    volatile int go = 0;
    for (int i = 0; i < n; i++) {
        args[i] = (struct swap_arg){ .root = t->root, .p = p, .q = q, .id = i, .go = &go,
                                     .result = 1 };
        th[i] = thread_create("s5_swap", swap_body, &args[i], 1UL << (i % ncpus_online));
    }
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    int moved = 0, other = 0;
    for (int i = 0; i < n; i++) {
        if (th[i])
            thread_join(th[i]);
        if (!th[i])
            other = -ENOMEM;
        else if (args[i].result == 0)
            moved++;
        else if (args[i].result != -EINVAL && args[i].result != -ENOENT)
            other = args[i].result;
    }
    /* Back to the root for the next round. */
    VOP_RENAME(p, "Q", t->root, "Q", kcred);
    VOP_RENAME(q, "P", t->root, "P", kcred);
    KT_ASSERT_EQ(other, 0);
    KT_ASSERT_EQ(moved, 1);
    return 0;
}

KTEST(s5_mp_rename)
{
    struct s5t t;
    struct vnode *p, *q;
    KT_ASSERT_EQ(t_fresh(&t, 1024, 64), 0);
    KT_ASSERT_EQ(t_mkdir(t.root, "P", &p), 0);
    KT_ASSERT_EQ(t_mkdir(t.root, "Q", &q), 0);
    int n = MAX(ncpus_online, 2), r = 0;
    for (int round = 0; round < 6 && !r; round++)
        r = swap_round(&t, p, q, n);
    VN_RELE(p);
    VN_RELE(q);
    int problems = t_finish(&t, NULL);
    if (r)
        return r;
    KT_ASSERT_EQ(problems, 0);
    return 0;
}
