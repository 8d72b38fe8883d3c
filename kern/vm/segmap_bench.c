/*
 * kbench=segmap: seed 001's segmap experiment, cache-bound file I/O.
 * Each thread (one per CPU, pinned) reads and rewrites its own file,
 * which fits in the cache, one page-sized piece at a time, for a fixed
 * time; run with 1, 2 and all CPUs under the boot's cache= model.  Prints
 * operations per second and the miss ratio of segmap's lock classes
 * (seed 001: 10-15% contention at two CPUs under one lock, below 0.1%
 * with SSAC).  A benchmark: it prints numbers and judges nothing.
 *
 * Output (one line each, per CPU count):
 *   segbench cache=MODEL cpus=N seconds=S ops=N ops_per_sec=N errors=N
 *   segbench class NAME hits=N misses=N miss_ratio=R      (segmap_*, pcache_*)
 *   segbench segmap hits=N misses=N
 */
#include <kern/vm/segmap.h>
#include <kern/vm/kmem.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/vfs/ssac.h>
#include <kern/lock/lockstat.h>
#include <kern/sched/thread.h>
#include <kern/arch/cpu.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/lib/options.h>
#include <drivers/platform/timer.h>

#define BENCH_SECONDS   2
#define FILE_PAGES      16      /* 64 KiB per thread: cache-bound */

static struct {
    uint64_t ops;               /* [a] */
    int errors;                 /* [a] */
    uint64_t end_ns;            /* [c] while threads run */
} sb;

static void file_name(char *buf, size_t len, int i)
{
    snprintf(buf, len, "/segbench/f%d", i);
}

/* One pass over the file: read each page, write it back. */
static int one_pass(struct vnode *vp, char *buf, uint64_t *ops)
{
    for (int p = 0; p < FILE_PAGES; p++) {
        size_t done;
        uint64_t off = (uint64_t)p * PAGE_SIZE;
        int e = vn_rdwr(vp, false, buf, PAGE_SIZE, off, 0, &done, kcred);
        if (!e) {
            buf[p] ^= 1;
            e = vn_rdwr(vp, true, buf, PAGE_SIZE, off, 0, &done, kcred);
        }
        if (e)
            return e;
        *ops += 2;
    }
    return 0;
}

static void bench_thread(void *arg)
{
    int me = (int)(uintptr_t)arg;
    char path[32];
    file_name(path, sizeof path, me);
    struct vnode *vp;
    char *buf = kzalloc(PAGE_SIZE);
    int e = buf ? vn_open(path, NULL, O_RDWR, 0, &vp, kcred) : -ENOMEM;
    uint64_t ops = 0;
    while (!e && uptime_ns() < sb.end_ns)
        e = one_pass(vp, buf, &ops);
    if (buf && !e)
        vn_close(vp, O_RDWR, kcred);
    if (e)
        __atomic_add_fetch(&sb.errors, 1, __ATOMIC_RELAXED);
    kfree(buf);
    __atomic_add_fetch(&sb.ops, ops, __ATOMIC_RELAXED);
}

static int make_files(int n)
{
    char path[32];
    char *buf = kzalloc(PAGE_SIZE);
    int e = buf ? vn_mkdir("/segbench", NULL, 0755, kcred) : -ENOMEM;
    for (int i = 0; i < n && !e; i++) {
        struct vnode *vp;
        file_name(path, sizeof path, i);
        e = vn_open(path, NULL, O_CREAT | O_WRONLY, 0644, &vp, kcred);
        if (e)
            break;
        for (int p = 0; p < FILE_PAGES && !e; p++)
            e = vn_rdwr(vp, true, buf, PAGE_SIZE, (uint64_t)p * PAGE_SIZE, 0, NULL, kcred);
        vn_close(vp, O_WRONLY, kcred);
    }
    kfree(buf);
    return e;
}

static void remove_files(int n)
{
    char path[32];
    for (int i = 0; i < n; i++) {
        file_name(path, sizeof path, i);
        vn_remove(path, NULL, kcred);
    }
    vn_rmdir("/segbench", NULL, kcred);
}

static bool class_reported(const char *name)
{
    return !strncmp(name, "segmap_", 7) || !strncmp(name, "pcache_", 7);
}

static void run_with(int n)
{
    static struct thread *t[MAX_CPUS];
    struct segmap_stats s0, s1;
    lockstat_reset();
    segmap_get_stats(&s0);
    sb.ops = 0;
    sb.errors = 0;
    uint64_t start = uptime_ns();
    sb.end_ns = start + BENCH_SECONDS * 1000000000ULL;
    for (int i = 0; i < n; i++)
        t[i] = thread_create("segbench", bench_thread, (void *)(uintptr_t)i, 1UL << i);
    for (int i = 0; i < n; i++)
        if (t[i])
            thread_join(t[i]);
    uint64_t ms = MAX((uptime_ns() - start) / 1000000, 1UL);
    segmap_get_stats(&s1);
    kprintf("segbench cache=%s cpus=%d seconds=%lu.%03lu ops=%lu ops_per_sec=%lu errors=%d\n",
            cache_model_name(opts.cache), n, ms / 1000, ms % 1000, sb.ops, sb.ops * 1000 / ms,
            sb.errors);
    lockstat_report_classes("segbench", class_reported);
    kprintf("segbench segmap hits=%lu misses=%lu\n", s1.hits - s0.hits, s1.misses - s0.misses);
}

void segmap_bench_run(void)
{
    int n = ncpus_online;
    if (!rootdir) {
        kprintf("segbench: no root file system (boot with root=)\n");
        return;
    }
    int e = make_files(n);
    if (e) {
        kprintf("segbench: cannot make /segbench: errno %d\n", -e);
        remove_files(n);
        return;
    }
    int old_mode = lockstat_mode;
    lockstat_set_mode(LOCKSTAT_ON);
    int counts[3] = { 1, 2, n };
    for (int i = 0; i < 3; i++)
        if (counts[i] <= n && (i == 0 || counts[i] > counts[i - 1]))
            run_with(counts[i]);
    lockstat_set_mode(old_mode);
    remove_files(n);
}
