/*
 * ktests for the VFS layer from every CPU at once: lookups of the test
 * namespace on every CPU (vfs_concurrent_lookup), lookups racing a thread
 * that mounts and unmounts (vfs_mount_race); and the global namespace,
 * whatever the boot mounted (vfs_root).
 *
 * They use the namespace of kern/tests/test_vfs.c (kern/tests/vfs_ns.h):
 * a memfs "A" not mounted anywhere, its root the working directory, torn
 * down after each test, which fails if any reference leaked.
 */
#include <kern/tests/ktest.h>
#include <kern/tests/memfs.h>
#include <kern/tests/vfs_ns.h>
#include <drivers/tty/tty.h>
#include <kern/vfs/vfs.h>
#include <drivers/block/bio.h>
#include <kern/vfs/cred.h>
#include <kern/vm/kmem.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/lock/sleep.h>
#include <kern/sched/thread.h>
#include <drivers/platform/timer.h>


/* ======================= every CPU at once ======================= */

#define NPATHS 10
#define LOOKUP_ROUNDS 10

struct par {
    struct ns *ns;
    const char *path[NPATHS];
    struct vnode *want[NPATHS];     /* NULL: -ENOENT expected */
    int bad;                        /* [atomic] wrong answers */
    int lookups;                    /* [atomic] */
    volatile int mounter_done;
    int mounts, unmounts, mount_errors;
    int started, nracers, saw_mounted;      /* [atomic] */
    int hold_off;                           /* [atomic] racers pause between lookups */
    int32_t base_counts[64];
    struct vnode *counted[64];
    int ncounted;
};

static struct par par;

static void lookup_worker(void *arg)
{
    int start = (int)(uintptr_t)arg;
    for (int r = 0; r < LOOKUP_ROUNDS; r++)
        for (int k = 0; k < NPATHS; k++) {
            int i = (start + k) % NPATHS;
            struct vnode *vp = NULL;
            int err = lookupname(par.path[i], par.ns->a, true, &vp, kcred);
            bool ok = par.want[i] ? (err == 0 && vp == par.want[i]) : err == -ENOENT;
            if (!ok)
                __atomic_add_fetch(&par.bad, 1, __ATOMIC_RELAXED);
            if (err == 0)
                VN_RELE(vp);
            __atomic_add_fetch(&par.lookups, 1, __ATOMIC_RELAXED);
        }
}

/* Snapshot the count of every node of memfs instance fs. */
static void count_nodes(struct memfs *fs)
{
    mutex_enter(&fs->lock);
    for (struct mnode *n = fs->all; n && par.ncounted < 64; n = n->all_next) {
        par.counted[par.ncounted] = &n->vn;
        par.base_counts[par.ncounted++] = count_of(&n->vn);
    }
    mutex_exit(&fs->lock);
}

static int counts_unchanged(void)
{
    for (int i = 0; i < par.ncounted; i++)
        if (count_of(par.counted[i]) != par.base_counts[i]) {
            ktest_fail("vnode %d: count %d, was %d", i, count_of(par.counted[i]),
                       par.base_counts[i]);
            return 0;
        }
    return 1;
}

/* Run fn in n threads, thread i on CPU i % ncpus with argument i, and
 * join them all.  Returns how many were started. */
static int run_threads(void (*fn)(void *), int n)
{
    static struct thread *t[MAX_CPUS * 2];
    int started = 0;
    for (int i = 0; i < n && i < MAX_CPUS * 2; i++)
        if ((t[started] = thread_create("vfstest", fn, (void *)(uintptr_t)i, 1UL << (i % ncpus))))
            started++;
    for (int i = 0; i < started; i++)
        thread_join(t[i]);
    return started;
}

static int body_concurrent(struct ns *ns)
{
    memset(&par, 0, sizeof par);
    par.ns = ns;
    KT_ASSERT_EQ(vfs_mount_at(&memfs_sw, NULL, "mnt", ns->a, 0, kcred), 0);
    KT_ASSERT_EQ(vn_mkdir("mnt/x", ns->a, 0755, kcred), 0);
    KT_ASSERT_EQ(mkfile(ns, "mnt/x/y", 0644, kcred), 0);
    KT_ASSERT_EQ(vn_symlink("../d1", "mnt/up", ns->a, kcred), 0);
    struct vnode *f = lookup_ok(ns, "d1/d2/d3/f"), *y = lookup_ok(ns, "mnt/x/y");
    struct vnode *d2 = lookup_ok(ns, "d1/d2"), *broot = lookup_ok(ns, "mnt");
    KT_ASSERT(f && y && d2 && broot);
    static const char *const paths[NPATHS] = {
        "d1/d2/d3/f", "mnt/x/y", "mnt/x/../x/y", "mnt/up/d2/d3/f", "d1/d2/../d2/d3/f",
        "lnk/d3/f", "mnt/../d1/d2", "mnt", "mnt/x/../..", "d1/nothere",
    };
    struct vnode *const want[NPATHS] = { f, y, y, f, f, f, d2, broot, ns->a, NULL };
    for (int i = 0; i < NPATHS; i++) {
        par.path[i] = paths[i];
        par.want[i] = want[i];
    }
    count_nodes(VTOM(ns->a)->fs);
    count_nodes(VTOM(broot)->fs);
    int threads = run_threads(lookup_worker, MAX(ncpus, 2));   /* every CPU */
    KT_ASSERT(threads >= ncpus);
    KT_ASSERT_EQ(par.bad, 0);
    KT_ASSERT_EQ(par.lookups, threads * LOOKUP_ROUNDS * NPATHS);
    KT_ASSERT(counts_unchanged());
    VN_RELE(f);
    VN_RELE(y);
    VN_RELE(d2);
    VN_RELE(broot);
    KT_ASSERT_EQ(vfs_unmount_at("mnt", ns->a, kcred), 0);
    return 0;
}

KTEST(vfs_concurrent_lookup) { return with_ns(body_concurrent); }

/* Lookups through d1/mp while one thread mounts and unmounts there: each
 * lookup sees the file system either mounted or not, never half; unmount
 * is refused while a lookup holds the mounted root, and nothing leaks. */
#define MOUNT_CYCLES 6

/* Wait a moment without a run-queue trip when each thread has its own CPU
 * (the scheduler's queues are not what this test is about, and under
 * sched=global thousands of yields make it crawl); with one CPU the
 * threads share it and must yield (the kernel is not preemptive). */
static void pause_briefly(void)
{
    if (ncpus == 1)
        thread_yield();
    else
        delay_us(20);
}

/* Wait until the racers have done `more` lookups beyond now (at most a
 * few seconds: a guard, not a speed requirement). */
static void let_racers_run(int more)
{
    int want = __atomic_load_n(&par.lookups, __ATOMIC_ACQUIRE) + more;
    uint64_t deadline = uptime_ns() + 5000000000UL;
    while (__atomic_load_n(&par.lookups, __ATOMIC_ACQUIRE) < want && uptime_ns() < deadline)
        pause_briefly();
}

static void mounter(void *arg)
{
    uint64_t start_by = uptime_ns() + 10000000000UL;
    while (__atomic_load_n(&par.started, __ATOMIC_ACQUIRE) < par.nracers
           && uptime_ns() < start_by)
        pause_briefly();
    for (int i = 0; i < MOUNT_CYCLES; i++) {
        if (vfs_mount_at(&memfs_sw, NULL, "d1/mp", par.ns->a, 0, kcred) != 0) {
            par.mount_errors++;
            break;
        }
        par.mounts++;
        let_racers_run(4);
        /* The first attempt races with the lookups in flight; if a lookup
         * holds the mounted root it is refused, and then the racers hold
         * off (between lookups) until the unmount has gone through. */
        uint64_t deadline = uptime_ns() + 20000000000UL;
        int err;
        while ((err = vfs_unmount_at("d1/mp", par.ns->a, kcred)) == -EBUSY
               && uptime_ns() < deadline) {
            __atomic_store_n(&par.hold_off, 1, __ATOMIC_RELEASE);
            pause_briefly();
        }
        __atomic_store_n(&par.hold_off, 0, __ATOMIC_RELEASE);
        if (err) {
            par.mount_errors++;
            break;
        }
        par.unmounts++;
        let_racers_run(4);
    }
    __atomic_store_n(&par.mounter_done, 1, __ATOMIC_RELEASE);
}

static void racer(void *arg)
{
    struct vnode *d1 = par.want[0], *mp = par.want[1];
    uint64_t deadline = uptime_ns() + 60000000000UL;
    __atomic_add_fetch(&par.started, 1, __ATOMIC_RELEASE);
    for (int i = 0; !__atomic_load_n(&par.mounter_done, __ATOMIC_ACQUIRE); i++) {
        if ((i & 63) == 0 && uptime_ns() > deadline)
            break;
        while (__atomic_load_n(&par.hold_off, __ATOMIC_ACQUIRE)
               && !__atomic_load_n(&par.mounter_done, __ATOMIC_ACQUIRE))
            pause_briefly();
        struct vnode *vp;
        int err = lookupname((i & 1) ? "d1/mp/.." : "d1/mp/../mp/..", par.ns->a, true, &vp,
                             kcred);
        if (err || vp != d1)
            __atomic_add_fetch(&par.bad, 1, __ATOMIC_RELAXED);
        if (!err)
            VN_RELE(vp);
        if ((err = lookupname("d1/mp", par.ns->a, true, &vp, kcred)) != 0) {
            __atomic_add_fetch(&par.bad, 1, __ATOMIC_RELAXED);
            continue;
        }
        /* The covered directory, or the root of a file system mounted there. */
        bool ok = vp == mp || (vp->v_type == VDIR && vp->v_vfsp->vfs_vnodecovered == mp
                               && vp == vp->v_vfsp->vfs_rootvp);
        if (vp != mp)
            __atomic_add_fetch(&par.saw_mounted, 1, __ATOMIC_RELAXED);
        if (!ok)
            __atomic_add_fetch(&par.bad, 1, __ATOMIC_RELAXED);
        VN_RELE(vp);
        __atomic_add_fetch(&par.lookups, 1, __ATOMIC_RELAXED);
        if (ncpus == 1)
            thread_yield();
    }
}

static void mount_race_worker(void *arg)
{
    if ((uintptr_t)arg == 0)
        mounter(arg);
    else
        racer(arg);
}

static int body_mount_race(struct ns *ns)
{
    memset(&par, 0, sizeof par);
    par.ns = ns;
    KT_ASSERT_EQ(vn_mkdir("d1/mp", ns->a, 0755, kcred), 0);
    struct vnode *d1 = lookup_ok(ns, "d1"), *mp = lookup_ok(ns, "d1/mp");
    KT_ASSERT(d1 && mp);
    par.want[0] = d1;
    par.want[1] = mp;
    count_nodes(VTOM(ns->a)->fs);
    /* The mounter on CPU 0 and a few racers: more only make a convoy on
     * the same three vnode locks (what vfs_concurrent_lookup measures). */
    int n = MIN(MAX(ncpus, 2), 5);
    par.nracers = n - 1;
    KT_ASSERT_EQ(run_threads(mount_race_worker, n), n);
    KT_ASSERT_EQ(par.mount_errors, 0);
    KT_ASSERT_EQ(par.mounts, MOUNT_CYCLES);
    KT_ASSERT_EQ(par.unmounts, MOUNT_CYCLES);
    KT_ASSERT_EQ(par.bad, 0);
    KT_ASSERT(par.saw_mounted > 0);                 /* the lookups did meet the mounts */
    KT_ASSERT(mp->v_vfsmountedhere == NULL);
    KT_ASSERT(counts_unchanged());
    VN_RELE(d1);
    VN_RELE(mp);
    return 0;
}

KTEST(vfs_mount_race) { return with_ns(body_mount_race); }

/* ======================= the global namespace ======================= */

/* Whatever the boot mounted: with a root, "/" and "/.." are rootdir; with
 * none, absolute paths fail cleanly.  devfs and s5 are registered. */
KTEST(vfs_root)
{
    KT_ASSERT(vfs_findtype("devfs") == &devfs_vfssw);
    KT_ASSERT(vfs_findtype("nosuchfs") == NULL);
    KT_ASSERT_EQ(vfs_mount("nosuchfs", NULL, "/", 0, kcred), -ENODEV);
    struct vnode *vp;
    if (!rootdir) {
        KT_ASSERT_EQ(lookupname("/", NULL, true, &vp, kcred), -ENOENT);
        KT_ASSERT_EQ(lookupname("/dev/null", NULL, true, &vp, kcred), -ENOENT);
        return 0;
    }
    int32_t c = count_of(rootdir);
    KT_ASSERT_EQ(lookupname("/", NULL, true, &vp, kcred), 0);
    KT_ASSERT(vp == rootdir);
    VN_RELE(vp);
    KT_ASSERT_EQ(lookupname("/../..", NULL, true, &vp, kcred), 0);
    KT_ASSERT(vp == rootdir);
    VN_RELE(vp);
    KT_ASSERT_EQ(count_of(rootdir), c);
    KT_ASSERT_EQ(vfs_unmount("/", kcred), -EBUSY);
    return 0;
}
