/*
 * kbench=fs: a concurrent file-system stress from kernel threads, one on
 * every CPU, for a fixed time; prints operations per second and the miss
 * ratio of the buffer-cache and DNLC lock classes under the running cache=
 * model (seed 001: the caches' contention under GAEDE-like load is what the
 * Software Set-Associative Cache removes).  A benchmark, not a test: it
 * prints numbers and judges nothing.
 *
 * Each thread loops over a small working set in its own directory: create
 * a file and write a block, look up a shared path (a DNLC hit on every
 * CPU), stat and read its file back, then remove it.  Lock statistics are
 * switched on for the run and reset at its start.
 *
 * It runs on the root file system, so the root image chooses the file
 * system measured: S5 (mkfs.s5) or UFS (mkfs.ufs; root= probes which).
 *
 * Output (one line each):
 *   fsbench fs=TYPE
 *   fsbench cache=MODEL cpus=N seconds=S ops=N ops_per_sec=N errors=N
 *   fsbench class NAME hits=N misses=N miss_ratio=R     (buf_*, dnlc_*, vnode, s5_*, ufs_*)
 *   fsbench buf lookups=N hits=N   /   fsbench dnlc lookups=N hits=N
 */
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/vm/kmem.h>
#include <kern/arch/cpu.h>
#include <kern/lib/options.h>
#include <kern/lock/lockstat.h>
#include <kern/sched/thread.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/buf.h>
#include <kern/vfs/dnlc.h>
#include <kern/vfs/cred.h>
#include <kern/vfs/fsbench.h>
#include <drivers/platform/timer.h>

#define BENCH_SECONDS   3
#define WORKING_SET     8       /* files per thread */

static struct {
    volatile uint64_t ops;      /* [a] */
    volatile int errors;        /* [a] */
    uint64_t end_ns;            /* [c] while threads run */
} fb;

/* One operation group on file k of CPU me: 5 file-system operations. */
static int one_round(int me, int k, uint8_t *buf)
{
    char path[48];
    struct vnode *vp;
    struct vattr va;
    size_t done;
    snprintf(path, sizeof(path), "/fsbench/c%d/f%d", me, k);
    int e = vn_open(path, NULL, O_CREAT | O_WRONLY | O_TRUNC, 0644, &vp, kcred);
    if (e)
        return e;
    e = vn_rdwr(vp, true, buf, 1024, 0, 0, &done, kcred);
    vn_close(vp, O_WRONLY, kcred);
    if (!e)
        e = vn_stat("/fsbench/shared/common", NULL, true, &va, kcred);
    if (!e)
        e = vn_stat(path, NULL, true, &va, kcred);
    if (!e)
        e = vn_open(path, NULL, O_RDONLY, 0, &vp, kcred);
    if (!e) {
        e = vn_rdwr(vp, false, buf, 1024, 0, 0, &done, kcred);
        vn_close(vp, O_RDONLY, kcred);
    }
    if (!e)
        e = vn_remove(path, NULL, kcred);
    return e;
}

static void bench_thread(void *arg)
{
    int me = (int)(uintptr_t)arg;
    uint8_t *buf = kzalloc(1024);
    uint64_t ops = 0;
    for (int k = 0; buf && uptime_ns() < fb.end_ns; k = (k + 1) % WORKING_SET) {
        if (one_round(me, k, buf)) {
            __atomic_add_fetch(&fb.errors, 1, __ATOMIC_RELAXED);
            break;
        }
        ops += 5;
    }
    kfree(buf);
    __atomic_add_fetch(&fb.ops, ops, __ATOMIC_RELAXED);
}

static bool class_reported(const char *name)
{
    return !strncmp(name, "buf_", 4) || !strncmp(name, "dnlc_", 5) ||
           !strncmp(name, "s5_", 3) || !strncmp(name, "ufs_", 4) || !strcmp(name, "vnode");
}

static int make_dirs(int n)
{
    char path[48];
    int e = vn_mkdir("/fsbench", NULL, 0755, kcred);
    if (!e)
        e = vn_mkdir("/fsbench/shared", NULL, 0755, kcred);
    if (!e) {
        struct vnode *vp;
        e = vn_open("/fsbench/shared/common", NULL, O_CREAT | O_WRONLY, 0644, &vp, kcred);
        if (!e)
            vn_close(vp, O_WRONLY, kcred);
    }
    for (int i = 0; i < n && !e; i++) {
        snprintf(path, sizeof(path), "/fsbench/c%d", i);
        e = vn_mkdir(path, NULL, 0755, kcred);
    }
    return e;
}

static void remove_dirs(int n)
{
    char path[48];
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "/fsbench/c%d", i);
        vn_rmdir(path, NULL, kcred);
    }
    vn_remove("/fsbench/shared/common", NULL, kcred);
    vn_rmdir("/fsbench/shared", NULL, kcred);
    vn_rmdir("/fsbench", NULL, kcred);
}

void fsbench_run(void)
{
    static const char *const models[] = { "single", "hashfree", "ssac" };
    int n = ncpus_online;
    if (!rootdir) {
        kprintf("fsbench: no root file system (boot with root=)\n");
        return;
    }
    int e = make_dirs(n);
    if (e) {
        kprintf("fsbench: cannot make /fsbench: errno %d\n", -e);
        remove_dirs(n);
        return;
    }
    struct thread **t = kzalloc(sizeof(*t) * n);
    if (!t)
        return;
    int old_mode = lockstat_mode;
    lockstat_set_mode(LOCKSTAT_ON);
    lockstat_reset();
    struct buf_stats b0, b1;
    struct dnlc_stats d0, d1;
    buf_stats_get(&b0);
    dnlc_stats_get(&d0);
    fb.ops = 0;
    fb.errors = 0;
    uint64_t start = uptime_ns();
    fb.end_ns = start + BENCH_SECONDS * 1000000000ULL;
    int started = 0;
    for (int i = 0; i < n; i++)
        if ((t[i] = thread_create("fsbench", bench_thread, (void *)(uintptr_t)i, 1UL << i)))
            started++;
    for (int i = 0; i < n; i++)
        if (t[i])
            thread_join(t[i]);
    uint64_t ns = uptime_ns() - start;
    lockstat_set_mode(old_mode);
    buf_stats_get(&b1);
    dnlc_stats_get(&d1);
    kfree(t);

    uint64_t ms = ns / 1000000 ? ns / 1000000 : 1;
    kprintf("fsbench fs=%s\n", rootvfs->vfs_sw->name);
    kprintf("fsbench cache=%s cpus=%d seconds=%lu.%03lu ops=%lu ops_per_sec=%lu errors=%d\n",
            models[opts.cache], started, ms / 1000, ms % 1000, fb.ops, fb.ops * 1000 / ms,
            fb.errors);
    lockstat_report_classes("fsbench", class_reported);
    kprintf("fsbench buf lookups=%lu hits=%lu\n", b1.lookups - b0.lookups, b1.hits - b0.hits);
    kprintf("fsbench dnlc lookups=%lu hits=%lu\n", d1.lookups - d0.lookups, d1.hits - d0.hits);
    remove_dirs(n);
}
