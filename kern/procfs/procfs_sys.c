/*
 * procfs: the system's files (theory in procfs.c).  Where Linux defines
 * the format (mounts, cpuinfo, meminfo, uptime, loadavg, stat,
 * diskstats, filesystems, the sysvipc files) Tempest writes Linux's, so that
 * busybox and the tests compare like with like; lockstat and options are
 * Tempest's own: the lock statistics as text, one class a line, and the
 * effective boot options as the kernel printed them at boot.
 */
#include <kern/procfs/procfs.h>
#include <kern/proc/proc.h>
#include <kern/ipc/ipc.h>
#include <kern/net/inet/inet.h>
#include <kern/sched/sched.h>
#include <kern/vfs/buf.h>
#include <kern/vm/pcache.h>
#include <kern/tmpfs/tmpfs.h>
#include <kern/vm/segmap.h>
#include <kern/vm/page.h>
#include <kern/vm/kmem.h>
#include <kern/lock/lock.h>
#include <kern/lock/lockstat.h>
#include <kern/lib/options.h>
#include <kern/arch/cpu.h>
#include <kern/arch/arch.h>
#include <kern/arch/numa.h>
#include <kern/arch/smp.h>
#include <kern/arch/kprof.h>
#include <kern/lib/ksyms.h>
#include <drivers/block/bio.h>
#include <drivers/platform/timer.h>
#include <kern/abi/tempest_abi.h>
#include <kern/lib/string.h>
#include <kern/lib/kprintf.h>

#define MAX_MOUNTS 64

/* ---- mounts and filesystems ---- */

int procfs_mounts(struct sbuf *sb)
{
    struct vfs_mountinfo *mi = kmalloc(MAX_MOUNTS * sizeof *mi);
    char *path = kmalloc(PATH_MAX);
    if (!mi || !path) {
        kfree(mi);
        kfree(path);
        return -ENOMEM;
    }
    int n = vfs_list_mounts(mi, MAX_MOUNTS);
    for (int i = 0; i < n; i++) {
        int len = mi[i].covered ? proc_dir_path(mi[i].covered, path, PATH_MAX) : 2;
        if (!mi[i].covered)
            strlcpy(path, "/", PATH_MAX);
        if (len > 0) {
            const char *type = mi[i].sw->name;
            if (mi[i].dev[0])
                sbuf_printf(sb, "/dev/%s %s %s %s 0 0\n", mi[i].dev, path, type,
                            (mi[i].flags & VFS_RDONLY) ? "ro" : "rw");
            else
                sbuf_printf(sb, "%s %s %s %s 0 0\n", type, path, type,
                            (mi[i].flags & VFS_RDONLY) ? "ro" : "rw");
        }
        if (mi[i].covered)
            VN_RELE(mi[i].covered);
    }
    kfree(path);
    kfree(mi);
    return 0;
}

int procfs_filesystems(struct sbuf *sb)
{
    const struct vfssw *sw;
    for (int i = 0; (sw = vfs_type_at(i)); i++)
        sbuf_printf(sb, "%s\t%s\n", sw->needs_dev ? "" : "nodev", sw->name);
    return 0;
}

/* ---- processors ---- */

static void cpu_brand(char out[49])
{
    uint32_t r[12], a, b, c, d;
    cpuid(0x80000000, 0, &a, &b, &c, &d);
    if (a < 0x80000004) {
        strlcpy(out, "unknown", 49);
        return;
    }
    for (uint32_t i = 0; i < 3; i++)
        cpuid(0x80000002 + i, 0, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
    memcpy(out, r, 48);
    out[48] = 0;
    char *s = out;
    while (*s == ' ')
        s++;
    memmove(out, s, strlen(s) + 1);
}

int procfs_cpuinfo(struct sbuf *sb)
{
    uint32_t a, b, c, d, vendor[4] = { 0 };
    cpuid(0, 0, &a, &vendor[0], &vendor[2], &vendor[1]);
    cpuid(1, 0, &a, &b, &c, &d);
    uint32_t family = (a >> 8) & 0xf, model = (a >> 4) & 0xf, stepping = a & 0xf;
    if (family == 0xf)
        family += (a >> 20) & 0xff;
    if (family >= 6)
        model |= ((a >> 16) & 0xf) << 4;
    char brand[49];
    cpu_brand(brand);
    uint64_t khz = tsc_hz / 1000;
    for (int i = 0; i < ncpus; i++) {
        if (!cpus[i].online)
            continue;
        sbuf_printf(sb, "processor\t: %d\nvendor_id\t: %s\ncpu family\t: %u\nmodel\t\t: %u\n", i,
                    (const char *)vendor, family, model);
        sbuf_printf(sb, "model name\t: %s\nstepping\t: %u\ncpu MHz\t\t: %lu.%03lu\n", brand,
                    stepping, (unsigned long)(khz / 1000), (unsigned long)(khz % 1000));
        sbuf_printf(sb, "physical id\t: 0\nsiblings\t: %d\ncore id\t\t: %d\ncpu cores\t: %d\n",
                    ncpus_online, i, ncpus_online);
        sbuf_printf(sb, "apicid\t\t: %u\nnode\t\t: %d\nfpu\t\t: yes\nflags\t\t: fpu tsc msr apic sse sse2\n\n",
                    cpus[i].apic_id, cpus[i].node);
    }
    return 0;
}

/* ---- memory ---- */

void procfs_memory(struct procfs_mem *m)
{
    uint64_t total = 0, free = 0;
    for (int n = 0; n < numa_nnodes; n++) {
        total += page_total_count(n);
        free += page_free_count(n);
    }
    m->total = total * PAGE_SIZE;
    m->free = free * PAGE_SIZE;
    m->buffers = (uint64_t)buf_data_count() * PAGE_SIZE;
    m->cached = pcache_pages() * PAGE_SIZE;
}

int procfs_meminfo(struct sbuf *sb)
{
    struct procfs_mem m;
    procfs_memory(&m);
    uint64_t kb = 1024;
    /* tmpfs's pages are in Cached, as Linux counts them, and in Shmem,
     * but not available: only giving up the files frees them. */
    uint64_t shmem = MIN(tmpfs_pages_reserved() * PAGE_SIZE, m.cached);
    sbuf_printf(sb, "MemTotal:       %8lu kB\nMemFree:        %8lu kB\nMemAvailable:   %8lu kB\n",
                (unsigned long)(m.total / kb), (unsigned long)(m.free / kb),
                (unsigned long)((m.free + m.cached - shmem) / kb));
    sbuf_printf(sb, "Buffers:        %8lu kB\nCached:         %8lu kB\nSwapCached:     %8lu kB\n",
                (unsigned long)(m.buffers / kb), (unsigned long)(m.cached / kb), 0UL);
    sbuf_printf(sb, "SwapTotal:      %8lu kB\nSwapFree:       %8lu kB\nShmem:          %8lu kB\n",
                0UL, 0UL, (unsigned long)(shmem / kb));
    /* Tempest's own: segmap (kern/vm/segmap.c), the windows read(2) and
     * write(2) copy through: the file memory open windows show, how many
     * windows there are, and the lookups that found the page in a window
     * or not; and the page cache's reclaim. */
    struct segmap_stats ss;
    segmap_get_stats(&ss);
    uint64_t reclaimed, runs;
    pcache_reclaim_stats(&reclaimed, &runs);
    sbuf_printf(sb, "Segmap:         %8lu kB\nSegmapWindows:  %8lu\n",
                (unsigned long)(ss.open * PAGE_SIZE / kb), (unsigned long)ss.windows);
    sbuf_printf(sb, "SegmapHits:     %8lu\nSegmapMisses:   %8lu\nReclaimed:      %8lu kB\n",
                (unsigned long)ss.hits, (unsigned long)ss.misses,
                (unsigned long)(reclaimed * PAGE_SIZE / kb));
    return 0;
}

/* /proc/vmstat: the lines of Linux's that Tempest keeps, for now the user
 * data pages by where alloc= put them (kern/vm/page.c): numa_local on the
 * allocating CPU's node, numa_other on another. */
int procfs_vmstat(struct sbuf *sb)
{
    uint64_t local, other;
    page_data_counts(&local, &other);
    sbuf_printf(sb, "numa_local %lu\nnuma_other %lu\n", (unsigned long)local,
                (unsigned long)other);
    uint64_t interleaved, migrated, failed;
    page_numa_counts(&interleaved, &migrated, &failed);
    sbuf_printf(sb, "numa_interleave %lu\npgmigrate_success %lu\npgmigrate_fail %lu\n",
                (unsigned long)interleaved, (unsigned long)migrated, (unsigned long)failed);
    return 0;
}

/* ---- time and load ---- */

/* A duration in ticks as seconds with two decimals. */
static void print_centis(struct sbuf *sb, uint64_t ticks)
{
    uint64_t centis = ticks * 100 / TICK_HZ;
    sbuf_printf(sb, "%lu.%02lu", (unsigned long)(centis / 100), (unsigned long)(centis % 100));
}

int procfs_uptime(struct sbuf *sb)
{
    uint64_t idle = 0;
    for (int i = 0; i < ncpus; i++)
        idle += sched_cpu_ticks(i, CPU_TICK_IDLE);
    print_centis(sb, uptime_ns() / (1000000000UL / TICK_HZ));
    sbuf_add(sb, " ", 1);
    print_centis(sb, idle);
    sbuf_add(sb, "\n", 1);
    return 0;
}

int procfs_loadavg(struct sbuf *sb)
{
    uint64_t load[3];
    sched_loadavg(load, 11);
    for (int i = 0; i < 3; i++) {
        uint64_t centis = (load[i] * 100 + (1 << 10)) >> 11;
        sbuf_printf(sb, "%lu.%02lu ", (unsigned long)(centis / 100), (unsigned long)(centis % 100));
    }
    int pids[1];
    int nproc = proc_pids(pids, 0);
    int *all = kmalloc((size_t)(nproc + 1) * sizeof *all);
    int n = all ? MIN(proc_pids(all, nproc + 1), nproc + 1) : 0;
    sbuf_printf(sb, "%d/%d %d\n", sched_nr_running(), n, n ? all[n - 1] : 0);
    kfree(all);
    return 0;
}

static void cpu_line(struct sbuf *sb, const char *name, uint64_t u, uint64_t s, uint64_t i)
{
    sbuf_printf(sb, "%s %lu 0 %lu %lu 0 0 0 0 0 0\n", name, (unsigned long)u, (unsigned long)s,
                (unsigned long)i);
}

int procfs_stat(struct sbuf *sb)
{
    uint64_t u = 0, s = 0, i = 0;
    for (int c = 0; c < ncpus; c++) {
        u += sched_cpu_ticks(c, CPU_TICK_USER);
        s += sched_cpu_ticks(c, CPU_TICK_SYSTEM);
        i += sched_cpu_ticks(c, CPU_TICK_IDLE);
    }
    cpu_line(sb, "cpu ", u, s, i);
    for (int c = 0; c < ncpus; c++) {
        if (!cpus[c].online)
            continue;
        char name[16];
        snprintf(name, sizeof name, "cpu%d", c);
        cpu_line(sb, name, sched_cpu_ticks(c, CPU_TICK_USER), sched_cpu_ticks(c, CPU_TICK_SYSTEM),
                 sched_cpu_ticks(c, CPU_TICK_IDLE));
    }
    int64_t boot = realtime_sec() - (int64_t)(uptime_ns() / 1000000000UL);
    int pids[1];
    sbuf_printf(sb, "btime %ld\nprocesses %d\nprocs_running %d\nprocs_blocked 0\n", (long)boot,
                proc_pids(pids, 0), sched_nr_running());
    return 0;
}

/* ---- disks ---- */

static unsigned long tsc_ms(uint64_t cycles)
{
    return (unsigned long)(tsc_to_ns(cycles) / 1000000);
}

int procfs_diskstats(struct sbuf *sb)
{
    for (int i = 0; i < blk_count(); i++) {
        struct blkdev *d = blk_get(i);
        struct blk_stats st;
        blk_stats_get(d, &st);
        uint32_t rdev = devfs_disk_rdev(d);
        uint64_t per = d->bsize / 512;
        uint64_t rsec = st.read_blocks * per, wsec = (st.blocks - st.read_blocks) * per;
        spin_lock(&d->qlock);
        uint32_t inflight = d->qlen + d->inflight;
        spin_unlock(&d->qlock);
        sbuf_printf(sb, "%4u %7u %s %lu 0 %lu %lu %lu 0 %lu %lu %u %lu %lu\n", vn_major(rdev),
                    vn_minor(rdev), d->name, (unsigned long)st.reads, (unsigned long)rsec,
                    tsc_ms(st.read_tsc), (unsigned long)st.writes, (unsigned long)wsec,
                    tsc_ms(st.write_tsc), inflight, tsc_ms(st.busy_tsc), tsc_ms(st.qlen_tsc));
    }
    return 0;
}

/* Every disk and its size in KiB, as Linux's /proc/partitions. */
int procfs_partitions(struct sbuf *sb)
{
    sbuf_printf(sb, "major minor  #blocks  name\n\n");
    for (int i = 0; i < blk_count(); i++) {
        struct blkdev *d = blk_get(i);
        uint32_t rdev = devfs_disk_rdev(d);
        sbuf_printf(sb, "%4u %7u %10lu %s\n", vn_major(rdev), vn_minor(rdev),
                    (unsigned long)(d->nblocks * d->bsize / 1024), d->name);
    }
    return 0;
}

/* ---- Tempest's own ---- */

static const char *kind_name(uint32_t kind)
{
    static const char *const names[] = { "spin", "mutex_spin", "mutex", "rwlock", "resource" };
    return kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

/* One line per lock class: its kind, hits, misses, miss ratio in
 * hundredths of a percent, and total wait, total hold and longest wait in
 * nanoseconds. */
int procfs_lockstat(struct sbuf *sb)
{
    size_t need = 0;
    void *buf = NULL;
    long r = -ENOSPC;
    for (int tries = 0; tries < 4 && r == -ENOSPC; tries++) {
        kfree(buf);
        buf = need ? kmalloc(need) : NULL;
        if (need && !buf)
            return -ENOMEM;
        r = lockstat_snapshot(buf, need, &need);
    }
    if (r < 0) {
        kfree(buf);
        return (int)r;
    }
    const struct lockstat_snapshot_hdr *h = buf;
    const struct lockstat_class_rec *c = (const void *)(h + 1);
    sbuf_printf(sb, "%-24s %-10s %12s %12s %8s %14s %14s %12s\n", "class", "kind", "hits", "misses",
                "miss%", "wait_ns", "hold_ns", "maxwait_ns");
    for (uint32_t i = 0; i < h->nclasses; i++, c++) {
        uint64_t ratio = c->hits ? c->misses * 10000 / c->hits : 0;
        char pct[24];
        snprintf(pct, sizeof pct, "%lu.%02lu", (unsigned long)(ratio / 100),
                 (unsigned long)(ratio % 100));
        sbuf_printf(sb, "%-24s %-10s %12lu %12lu %8s %14lu %14lu %12lu\n", c->name,
                    kind_name(c->kind), (unsigned long)c->hits, (unsigned long)c->misses, pct,
                    (unsigned long)tsc_to_ns(c->wait_cycles), (unsigned long)tsc_to_ns(c->hold_cycles),
                    (unsigned long)tsc_to_ns(c->max_wait));
    }
    kfree(buf);
    return 0;
}

/* The kernel profiler's samples since boot (kern/arch/kprof.c): a header
 * line, the totals, then one line per kernel function, most sampled
 * first: its samples and its name (the kprof tool reads this). */
int procfs_kprof(struct sbuf *sb)
{
    enum { MAXFN = 1024 };
    if (!kprof_enabled()) {
        sbuf_printf(sb, "kprof off (boot with kprof=on)\n");
        return 0;
    }
    struct kprof_entry *e = kmalloc(MAXFN * sizeof *e);
    if (!e)
        return -ENOMEM;
    struct kprof_totals t;
    int n = kprof_read(e, MAXFN, &t);
    sbuf_printf(sb, "kprof on hz %d cpus %d\n", TICK_HZ, t.ncpus);
    sbuf_printf(sb, "samples user %lu kernel %lu lost %lu\n", (unsigned long)t.user,
                (unsigned long)t.kernel, (unsigned long)t.lost);
    for (int i = 0; i < n; i++) {
        uint64_t off;
        const char *name = e[i].fn ? ksym_lookup(e[i].fn, &off) : NULL;
        sbuf_printf(sb, "%lu %s\n", (unsigned long)e[i].count, name ? name : "(unknown)");
    }
    kfree(e);
    return 0;
}

int procfs_options(struct sbuf *sb)
{
    char line[512];
    options_format(&opts, line, sizeof line);
    const char *s = line;
    if (strncmp(s, "options:", 8) == 0)
        s += 8;
    while (*s == ' ')
        s++;
    sbuf_printf(sb, "%s\n", s);
    return 0;
}

/* ---- System V IPC ---- */

static void add_line(void *arg, const char *line)
{
    sbuf_add(arg, line, strlen(line));
}

int procfs_ipc_shm(struct sbuf *sb)
{
    sbuf_printf(sb, "       key      shmid perms                  size  cpid  lpid nattch   uid   gid"
                "  cuid  cgid      atime      dtime      ctime                   rss                  swap\n");
    shm_proc_lines(add_line, sb);
    return 0;
}

int procfs_ipc_sem(struct sbuf *sb)
{
    sbuf_printf(sb, "       key      semid perms      nsems   uid   gid  cuid  cgid      otime      ctime\n");
    sem_proc_lines(add_line, sb);
    return 0;
}

int procfs_ipc_msg(struct sbuf *sb)
{
    sbuf_printf(sb, "       key      msqid perms      cbytes       qnum lspid lrpid   uid   gid  cuid  cgid"
                "      stime      rtime      ctime\n");
    msg_proc_lines(add_line, sb);
    return 0;
}
