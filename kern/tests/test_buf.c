/*
 * ktests for the buffer cache (kern/vfs/buf.c), whichever cache= model the
 * kernel booted with.  They use a RAM disk of their own, "bufram" (not
 * ram0, which may hold the root file system: root=ram0); its contents are
 * the tests' own (each test starts and ends with binval); and a small disk of
 * their own, "buferr", that fails every request in a range of sectors.
 *
 *   buf_basic        getblk/bwrite/bread/bdwrite/bawrite/bflush/binval on
 *                    one CPU, checked against the disk read directly
 *   buf_identity     the same block twice is the same buffer; a second
 *                    getblk of a busy block sleeps until brelse (waiter on
 *                    the same CPU, then on another)
 *   buf_counters_1cpu, buf_counters_mp
 *                    threads (on one CPU; on every CPU at once) increment
 *                    per-block counters in a few shared blocks through
 *                    bread + bdwrite/bwrite/bawrite; no update may be lost
 *   buf_pressure_1cpu, buf_pressure_mp
 *                    1.5 times as many distinct blocks as buffers, written
 *                    with delayed writes (2 threads on one CPU; 4 threads
 *                    spread over the CPUs), partly read back through the
 *                    cache, then checked on the disk
 *   buf_flush_held   bflush_held (fsync's flush) waits for a delayed
 *                    block another thread holds busy and writes what that
 *                    thread left in it
 *   buf_errors       past the end of the disk, bad sizes, I/O errors
 */
#include <kern/tests/ktest.h>
#include <kern/vfs/buf.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/ssac.h>
#include <drivers/block/bio.h>
#include <kern/vm/kmem.h>
#include <kern/arch/cpu.h>
#include <kern/lib/string.h>
#include <kern/lib/kprintf.h>
#include <kern/sched/thread.h>
#include <drivers/platform/timer.h>

#define BSIZE 1024

static uint32_t pattern(uint32_t tag, uint64_t blkno, uint32_t word)
{
    uint64_t x = ((uint64_t)tag << 40) ^ (blkno << 12) ^ word ^ 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    return (uint32_t)((x * 0xBF58476D1CE4E5B9ull) >> 32);
}

static void fill(void *data, uint32_t size, uint32_t tag, uint64_t blkno)
{
    uint32_t *w = data;
    for (uint32_t i = 0; i < size / 4; i++)
        w[i] = pattern(tag, blkno, i);
}

static bool holds(const void *data, uint32_t size, uint32_t tag, uint64_t blkno)
{
    const uint32_t *w = data;
    for (uint32_t i = 0; i < size / 4; i++)
        if (w[i] != pattern(tag, blkno, i))
            return false;
    return true;
}

/* Read or write block blkno (in units of size) straight from the disk. */
static int raw_rw(struct blkdev *d, uint64_t blkno, uint32_t size, void *data, bool write)
{
    uint32_t n = size / d->bsize;
    return blk_rw(d, blkno * n, n, data, write);
}

/* Does the disk hold the pattern (tag, blkno)?  -1 when it cannot be read. */
static int disk_holds(struct blkdev *d, uint64_t blkno, uint32_t size, uint32_t tag)
{
    static char raw[BUF_MAX_SIZE];
    if (raw_rw(d, blkno, size, raw, false))
        return -1;
    return holds(raw, size, tag, blkno);
}

/* The tests' RAM disk, made on first use, once the cache is there (NULL,
 * with the test failed, if boot did not call binit or memory is short). */
static struct blkdev *ram(void)
{
    int nbuf, nrows, ngroups;
    buf_test_geometry(&nbuf, &nrows, &ngroups);
    if (nbuf == 0) {
        ktest_fail("the buffer cache is not initialized (binit not called at boot)");
        return NULL;
    }
    struct blkdev *d = blk_find("bufram");
    if (!d)
        d = ramdisk_create("bufram", 8, 512);
    if (!d)
        ktest_fail("cannot make the RAM disk bufram");
    return d;
}

/*
 * How many threads, and how much work.  The one-CPU variants run 2
 * threads, the others one per CPU (at least 2).  Few threads on purpose:
 * while threads wait in a CPU's run queue, every idle CPU looking for work
 * scans that queue under its lock, and on a 16-CPU machine emulated on 2
 * host cores an MCS lock then convoys behind waiters the host is not
 * running (hector with lock=mcs: up to seconds per context switch).  For
 * the same reason the total work is bounded, not per-CPU (as in
 * kern/tests/test_spinlock.c): a contended hand-off of an MCS lock there
 * costs milliseconds.  Concurrency comes from the CPUs, and on one CPU
 * from the sleeps of disk I/O and explicit yields.
 */
static int nthreads(bool one_cpu)
{
    return one_cpu ? 2 : MIN(2 * MAX_CPUS, MAX(2, ncpus));
}

/* Iterations per thread for a total of about `total` (at least 16). */
static int share(int total, int n)
{
    return MAX(16, total / n);
}

/* Run fn(args[i]) in n threads, all on this CPU (one_cpu) or spread over
 * every CPU, and wait for them. */
static void run_threads(void (*fn)(void *), void *args, size_t argsize, int n, bool one_cpu)
{
    static struct thread *t[2 * MAX_CPUS];
    uint64_t here = 1UL << cpu_id();
    for (int i = 0; i < n; i++) {
        int cpu = n <= ncpus ? i * ncpus / n : i % ncpus;  /* spread out */
        t[i] = thread_create("ktest_buf", fn, (char *)args + i * argsize,
                             one_cpu ? here : 1UL << cpu);
    }
    /* The threads are pinned: join them all (none may outlive the test). */
    for (int i = 0; i < n; i++)
        if (t[i])
            thread_join(t[i]);
}

/* ---- basic operations ---- */

KTEST(buf_basic)
{
    struct blkdev *d = ram();
    KT_ASSERT(d);
    KT_ASSERT_EQ(binval(d), 0);
    static char raw[BSIZE];
    enum { BASE = 100, N = 8 };
    /* Known old contents on the disk. */
    for (int i = 0; i < N + 2; i++) {
        fill(raw, BSIZE, 1, BASE + i);
        KT_ASSERT_EQ(raw_rw(d, BASE + i, BSIZE, raw, true), 0);
    }
    struct buf_stats s0, s1;

    /* getblk: busy, not valid, the identity asked for. */
    struct buf *bp = getblk(d, BASE, BSIZE);
    KT_ASSERT(bp->b_flags & B_BUSY);
    KT_ASSERT(!(bp->b_flags & B_DONE));
    KT_ASSERT(bp->b_dev == d && bp->b_blkno == BASE && bp->b_size == BSIZE);
    clrbuf(bp);
    KT_ASSERT(((uint32_t *)bp->b_data)[BSIZE / 4 - 1] == 0);
    fill(bp->b_data, BSIZE, 2, BASE);
    KT_ASSERT_EQ(bwrite(bp), 0);
    KT_ASSERT_EQ(disk_holds(d, BASE, BSIZE, 2), 1);

    /* bread of a cached block: the same buffer, valid, counted as a hit. */
    buf_stats_get(&s0);
    int err = 1;
    struct buf *bp2 = bread(d, BASE, BSIZE, &err);
    buf_stats_get(&s1);
    KT_ASSERT(bp2 == bp);
    KT_ASSERT_EQ(err, 0);
    KT_ASSERT(bp2->b_flags & B_DONE);
    KT_ASSERT(holds(bp2->b_data, BSIZE, 2, BASE));
    KT_ASSERT_EQ(s1.hits - s0.hits, 1);
    KT_ASSERT_EQ(s1.misses - s0.misses, 0);
    brelse(bp2);

    /* Delayed writes stay in memory until bflush. */
    for (int i = 1; i <= N; i++) {
        bp = bread(d, BASE + i, BSIZE, &err);
        KT_ASSERT(bp && err == 0);
        KT_ASSERT(holds(bp->b_data, BSIZE, 1, BASE + i));
        fill(bp->b_data, BSIZE, 3, BASE + i);
        bdwrite(bp);
    }
    for (int i = 1; i <= N; i++)
        KT_ASSERT_EQ(disk_holds(d, BASE + i, BSIZE, 1), 1);
    buf_stats_get(&s0);
    KT_ASSERT_EQ(bflush(d), 0);
    buf_stats_get(&s1);
    KT_ASSERT(s1.writes - s0.writes >= N);
    for (int i = 1; i <= N; i++)
        KT_ASSERT_EQ(disk_holds(d, BASE + i, BSIZE, 3), 1);

    /* After binval, bread misses and reads the disk. */
    KT_ASSERT_EQ(binval(d), 0);
    buf_stats_get(&s0);
    bp = bread(d, BASE + 1, BSIZE, &err);
    buf_stats_get(&s1);
    KT_ASSERT(bp && err == 0);
    KT_ASSERT_EQ(s1.misses - s0.misses, 1);
    KT_ASSERT(holds(bp->b_data, BSIZE, 3, BASE + 1));
    brelse(bp);

    /* bawrite: bflush waits for the write to reach the disk. */
    bp = getblk(d, BASE + N + 1, BSIZE);
    fill(bp->b_data, BSIZE, 4, BASE + N + 1);
    bawrite(bp);
    KT_ASSERT_EQ(bflush(d), 0);
    KT_ASSERT_EQ(disk_holds(d, BASE + N + 1, BSIZE, 4), 1);
    KT_ASSERT_EQ(binval(d), 0);
    return 0;
}

/* ---- identity and waiting for a busy buffer ---- */

struct waiter {
    struct blkdev *d;
    uint64_t blkno;
    struct buf *got;
    uint32_t seen;
    volatile int started, finished;
};

static void waiter_body(void *arg)
{
    struct waiter *w = arg;
    __atomic_store_n(&w->started, 1, __ATOMIC_RELEASE);
    struct buf *bp = getblk(w->d, w->blkno, BSIZE);
    w->got = bp;
    w->seen = *(volatile uint32_t *)bp->b_data;
    brelse(bp);
    __atomic_store_n(&w->finished, 1, __ATOMIC_RELEASE);
}

/* Wait (yielding) until the cache has counted more waits than before. */
static bool await_waits(uint64_t before)
{
    uint64_t deadline = uptime_ns() + 5000000000UL;
    struct buf_stats s;
    do {
        thread_yield();
        buf_stats_get(&s);
    } while (s.waits <= before && uptime_ns() < deadline);
    return s.waits > before;
}

static int busy_wait_case(struct blkdev *d, uint64_t blkno, int cpu, uint32_t marker)
{
    static struct waiter w;
    memset(&w, 0, sizeof w);
    w.d = d;
    w.blkno = blkno;
    struct buf *bp = getblk(d, blkno, BSIZE);
    struct buf_stats s;
    buf_stats_get(&s);
    struct thread *t = thread_create("buf_waiter", waiter_body, &w, 1UL << cpu);
    KT_ASSERT(t);
    KT_ASSERT(ktest_await(&w.started, 1, 5));
    /* The waiter has found the buffer busy and sleeps. */
    bool waited = await_waits(s.waits);
    KT_ASSERT(!w.finished);
    *(volatile uint32_t *)bp->b_data = marker;
    brelse(bp);
    thread_join(t);
    KT_ASSERT(waited);
    KT_ASSERT(w.finished);
    KT_ASSERT(w.got == bp);
    KT_ASSERT_EQ(w.seen, marker);
    return 0;
}

KTEST(buf_identity)
{
    struct blkdev *d = ram();
    KT_ASSERT(d);
    KT_ASSERT_EQ(binval(d), 0);
    struct buf *a = getblk(d, 300, BSIZE);
    brelse(a);
    struct buf *b = getblk(d, 300, BSIZE);
    KT_ASSERT(a == b);
    struct buf *c = getblk(d, 301, BSIZE);
    KT_ASSERT(c != b);
    brelse(c);
    brelse(b);
    /* A waiter on this CPU, then on another one. */
    if (busy_wait_case(d, 300, cpu_id(), 0xabcd0001))
        return 1;
    if (busy_wait_case(d, 302, (cpu_id() + 1) % ncpus, 0xabcd0002))
        return 1;
    KT_ASSERT_EQ(binval(d), 0);
    return 0;
}

/* ---- fsync's and sync's flush: a held block is waited for ---- */

struct flusher {
    struct blkdev *d;
    int (*flush)(struct blkdev *d);
    int rc;
    volatile int started, finished;
};

static void flusher_body(void *arg)
{
    struct flusher *f = arg;
    __atomic_store_n(&f->started, 1, __ATOMIC_RELEASE);
    f->rc = f->flush(f->d);
    __atomic_store_n(&f->finished, 1, __ATOMIC_RELEASE);
}

/* A change to block 310 is made and delayed, then its block is held busy
 * again while another CPU's thread runs flush: the flush must wait for the
 * holder and write what the holder leaves. */
static int flush_waits_for_held(int (*flush)(struct blkdev *d))
{
    static struct flusher f;
    struct blkdev *d = ram();
    KT_ASSERT(d);
    KT_ASSERT_EQ(binval(d), 0);
    int err;
    struct buf *bp = bread(d, 310, BSIZE, &err);
    KT_ASSERT(bp);
    fill(bp->b_data, BSIZE, 31, 310);
    bdwrite(bp);                        /* a change made, delayed ... */
    bp = getblk(d, 310, BSIZE);         /* ... and its block in use again */
    memset(&f, 0, sizeof f);
    f.d = d;
    f.flush = flush;
    struct buf_stats s;
    buf_stats_get(&s);
    struct thread *t = thread_create("buf_flusher", flusher_body, &f,
                                     1UL << ((cpu_id() + 1) % ncpus));
    KT_ASSERT(t);
    KT_ASSERT(ktest_await(&f.started, 1, 5));
    bool waited = await_waits(s.waits);
    bool early = __atomic_load_n(&f.finished, __ATOMIC_ACQUIRE);
    fill(bp->b_data, BSIZE, 32, 310);
    bdwrite(bp);
    thread_join(t);
    KT_ASSERT(waited);
    KT_ASSERT(!early);
    KT_ASSERT_EQ(f.rc, 0);
    KT_ASSERT_EQ(disk_holds(d, 310, BSIZE, 32), 1);
    KT_ASSERT_EQ(binval(d), 0);
    return 0;
}

KTEST(buf_flush_held)
{
    return flush_waits_for_held(bflush_held);
}

static int sync_everything(struct blkdev *unused)
{
    return vfs_sync_wait();
}

/* sync(2)'s flush (every disk) waits for held blocks as fsync's does. */
KTEST(buf_sync_held)
{
    return flush_waits_for_held(sync_everything);
}

/* ---- shared counters: no update lost under B_BUSY ---- */

enum { CNT_BLOCKS = 8, CNT_BASE = 2000, CNT_TOTAL = 256, MAX_THREADS = 2 * MAX_CPUS };

struct counter_arg {
    struct blkdev *d;
    int id, iters;
    bool yield;         /* threads share a CPU: yield holding the buffer */
    int error;
};

/* Word 0 of each block counts every increment; word 1 + id this thread's. */
static void counter_body(void *arg)
{
    struct counter_arg *a = arg;
    uint32_t seed = 0x9E3779B9u * (uint32_t)(a->id + 1);
    for (int i = 0; i < a->iters && !a->error; i++) {
        seed = seed * 1103515245u + 12345u;
        uint64_t blk = CNT_BASE + (seed >> 16) % CNT_BLOCKS;
        int err;
        struct buf *bp = bread(a->d, blk, BSIZE, &err);
        if (!bp) {
            a->error = err ? err : -1;
            break;
        }
        uint32_t *w = bp->b_data;
        uint32_t v = w[0];
        /* Hold the buffer a while between reading and writing the count,
         * so that others find it busy (and a second owner would lose an
         * update): by yielding on a shared CPU, by a delay across CPUs. */
        if (a->yield && i % 2)
            thread_yield();
        else if (!a->yield)
            for (volatile int k = 0; k < 2000; k++)
                ;
        w[0] = v + 1;
        w[1 + a->id]++;
        if (i % 8 == 0) {
            int e = bwrite(bp);     /* sleeps holding the buffer busy */
            if (e)
                a->error = e;
        } else if (i % 8 == 1) {
            bawrite(bp);
        } else {
            bdwrite(bp);
        }
    }
}

static int counters(bool one_cpu)
{
    struct blkdev *d = ram();
    KT_ASSERT(d);
    KT_ASSERT_EQ(binval(d), 0);
    for (int b = 0; b < CNT_BLOCKS; b++) {
        struct buf *bp = getblk(d, CNT_BASE + b, BSIZE);
        clrbuf(bp);
        KT_ASSERT_EQ(bwrite(bp), 0);
    }
    static struct counter_arg args[MAX_THREADS];
    int n = nthreads(one_cpu);
    int iters = share(CNT_TOTAL, n);
    for (int i = 0; i < n; i++)
        args[i] = (struct counter_arg){ .d = d, .id = i, .iters = iters,
                                        .yield = one_cpu || ncpus < 2 };
    run_threads(counter_body, args, sizeof args[0], n, one_cpu);
    for (int i = 0; i < n; i++)
        KT_ASSERT_EQ(args[i].error, 0);
    /* Everything to the disk, forget it, and count from the disk. */
    KT_ASSERT_EQ(bflush(d), 0);
    KT_ASSERT_EQ(binval(d), 0);
    uint64_t total = 0, per[MAX_THREADS] = { 0 };
    for (int b = 0; b < CNT_BLOCKS; b++) {
        int err;
        struct buf *bp = bread(d, CNT_BASE + b, BSIZE, &err);
        KT_ASSERT(bp);
        uint32_t *w = bp->b_data;
        total += w[0];
        for (int i = 0; i < n; i++)
            per[i] += w[1 + i];
        brelse(bp);
    }
    KT_ASSERT_EQ(total, (uint64_t)n * iters);
    for (int i = 0; i < n; i++)
        KT_ASSERT_EQ(per[i], iters);
    KT_ASSERT_EQ(binval(d), 0);
    return 0;
}

KTEST(buf_counters_1cpu) { return counters(true); }
KTEST(buf_counters_mp) { return counters(false); }

/* ---- more blocks than buffers ---- */

struct pressure_arg {
    struct blkdev *d;
    uint64_t base, count;
    uint32_t tag;
    int error;
    int64_t bad;
};

/* Write the range with delayed writes (the cache cannot hold it all, so
 * reused buffers are written first), then read back every 8th block from
 * the end: the oldest ones come from the disk, the newest from memory. */
static void pressure_body(void *arg)
{
    struct pressure_arg *a = arg;
    a->bad = -1;
    for (uint64_t i = 0; i < a->count; i++) {
        struct buf *bp = getblk(a->d, a->base + i, BSIZE);
        fill(bp->b_data, BSIZE, a->tag, a->base + i);
        bdwrite(bp);
    }
    for (uint64_t i = 0; i < a->count; i += 8) {
        uint64_t blk = a->base + a->count - 1 - i;
        int err;
        struct buf *bp = bread(a->d, blk, BSIZE, &err);
        if (!bp) {
            a->error = err ? err : -1;
            a->bad = (int64_t)blk;
            return;
        }
        bool ok = holds(bp->b_data, BSIZE, a->tag, blk);
        brelse(bp);
        if (!ok) {
            a->error = -EIO;
            a->bad = (int64_t)blk;
            return;
        }
    }
}

/* Blocks [0, count) on the disk itself hold pattern tag; -1 if they all
 * do, else the first bad block (or -2 on a read error). */
static int64_t disk_check_range(struct blkdev *d, uint64_t count, uint32_t tag)
{
    enum { CHUNK = 32 };
    char *buf = kmalloc(CHUNK * BSIZE);
    if (!buf)
        return -2;
    int64_t bad = -1;
    for (uint64_t b = 0; b < count && bad == -1; b += CHUNK) {
        uint64_t n = MIN(CHUNK, count - b);
        if (blk_rw(d, b * (BSIZE / d->bsize), n * (BSIZE / d->bsize), buf, false)) {
            bad = -2;
            break;
        }
        for (uint64_t i = 0; i < n; i++)
            if (!holds(buf + i * BSIZE, BSIZE, tag, b + i)) {
                bad = (int64_t)(b + i);
                break;
            }
    }
    kfree(buf);
    return bad;
}

static int pressure(bool one_cpu, uint32_t tag)
{
    struct blkdev *d = ram();
    KT_ASSERT(d);
    KT_ASSERT_EQ(binval(d), 0);
    int nbuf, nrows, ngroups;
    buf_test_geometry(&nbuf, &nrows, &ngroups);
    /* At most 4 threads: each block costs a few cache-lock acquisitions,
     * and there are thousands of blocks (see nthreads). */
    int n = MIN(4, nthreads(one_cpu));
    uint64_t each = (3 * (uint64_t)nbuf / 2 + n - 1) / n;
    uint64_t blocks = each * n;
    KT_ASSERT(blocks <= d->nblocks / (BSIZE / d->bsize));
    static struct pressure_arg args[MAX_THREADS];
    for (int i = 0; i < n; i++)
        args[i] = (struct pressure_arg){ .d = d, .base = i * each, .count = each, .tag = tag };
    struct buf_stats s0, s1;
    buf_stats_get(&s0);
    run_threads(pressure_body, args, sizeof args[0], n, one_cpu);
    buf_stats_get(&s1);
    for (int i = 0; i < n; i++) {
        if (args[i].error)
            ktest_fail("thread %d: error %d at block %ld", i, args[i].error, args[i].bad);
        KT_ASSERT_EQ(args[i].error, 0);
    }
    /* The cache could not hold them all: blocks were written to make room. */
    KT_ASSERT(s1.writes - s0.writes >= blocks - nbuf);
    KT_ASSERT_EQ(bflush(d), 0);
    KT_ASSERT_EQ(disk_check_range(d, blocks, tag), -1);
    KT_ASSERT_EQ(binval(d), 0);
    return 0;
}

KTEST(buf_pressure_1cpu) { return pressure(true, 7); }
KTEST(buf_pressure_mp) { return pressure(false, 8); }

/* ---- errors ---- */

/* A small disk in memory whose sectors [ERR_LO, ERR_HI) fail. */
enum { ERR_SECTORS = 64, ERR_LO = 32, ERR_HI = 48 };

static struct {
    struct blkdev bd;
    char data[ERR_SECTORS * 512];
    volatile int reads;
} errdisk;

static int errdisk_submit(struct blkdev *d, struct bio *b)
{
    if (!b->write)
        __atomic_add_fetch(&errdisk.reads, 1, __ATOMIC_RELAXED);
    if (b->blkno < ERR_HI && b->blkno + b->count > ERR_LO)
        return -EIO;
    char *p = errdisk.data + b->blkno * 512;
    if (b->write)
        memcpy(p, b->buf, b->count * 512);
    else
        memcpy(b->buf, p, b->count * 512);
    blk_complete(b, 0);
    return 0;
}

static const struct blkdev_ops errdisk_ops = { .submit = errdisk_submit };

static struct blkdev *error_disk(void)
{
    struct blkdev *d = blk_find("buferr");
    if (d)
        return d;
    snprintf(errdisk.bd.name, sizeof errdisk.bd.name, "buferr");
    errdisk.bd.bsize = 512;
    errdisk.bd.nblocks = ERR_SECTORS;
    errdisk.bd.max_blocks = 8;
    errdisk.bd.max_inflight = 1;
    errdisk.bd.ops = &errdisk_ops;
    return blk_register(&errdisk.bd) == 0 ? &errdisk.bd : NULL;
}

KTEST(buf_errors)
{
    struct blkdev *d = ram();
    KT_ASSERT(d);
    KT_ASSERT_EQ(binval(d), 0);
    int err = 0;
    uint64_t nb1k = d->nblocks / (BSIZE / d->bsize);
    /* Past the end, bad sizes, no disk: -EINVAL, no buffer. */
    KT_ASSERT(bread(d, d->nblocks, 512, &err) == NULL);
    KT_ASSERT_EQ(err, -EINVAL);
    KT_ASSERT(bread(d, nb1k, BSIZE, &err) == NULL);
    KT_ASSERT_EQ(err, -EINVAL);
    KT_ASSERT(bread(d, ~0ull, BSIZE, &err) == NULL);
    KT_ASSERT_EQ(err, -EINVAL);
    KT_ASSERT(bread(d, 0, 700, &err) == NULL);
    KT_ASSERT_EQ(err, -EINVAL);
    KT_ASSERT(bread(d, 0, 2 * BUF_MAX_SIZE, &err) == NULL);
    KT_ASSERT_EQ(err, -EINVAL);
    KT_ASSERT(bread(NULL, 0, BSIZE, &err) == NULL);
    KT_ASSERT_EQ(err, -EINVAL);
    /* The last block is fine. */
    struct buf *bp = bread(d, nb1k - 1, BSIZE, &err);
    KT_ASSERT(bp && err == 0);
    brelse(bp);
    /* getblk past the end works, but the write fails and is forgotten. */
    bp = getblk(d, nb1k + 5, BSIZE);
    clrbuf(bp);
    KT_ASSERT_EQ(bwrite(bp), -EINVAL);
    bp = getblk(d, nb1k + 5, BSIZE);
    KT_ASSERT(!(bp->b_flags & B_DONE));
    brelse(bp);

    /* I/O errors: -EIO, and not cached (the next bread tries again). */
    struct blkdev *e = error_disk();
    KT_ASSERT(e);
    KT_ASSERT_EQ(binval(e), 0);
    bp = bread(e, 1, 512, &err);
    KT_ASSERT(bp && err == 0);
    brelse(bp);
    int reads = errdisk.reads;
    KT_ASSERT(bread(e, 40, 512, &err) == NULL);
    KT_ASSERT_EQ(err, -EIO);
    KT_ASSERT(bread(e, 40, 512, &err) == NULL);
    KT_ASSERT_EQ(err, -EIO);
    KT_ASSERT_EQ(errdisk.reads - reads, 2);
    /* A 1 KiB block overlapping the bad range fails too. */
    KT_ASSERT(bread(e, ERR_LO / 2, BSIZE, &err) == NULL);
    KT_ASSERT_EQ(err, -EIO);
    /* Writes: synchronous, and delayed ones found by bflush. */
    bp = getblk(e, 41, 512);
    clrbuf(bp);
    KT_ASSERT_EQ(bwrite(bp), -EIO);
    bp = getblk(e, 42, 512);
    clrbuf(bp);
    bdwrite(bp);
    KT_ASSERT_EQ(bflush(e), -EIO);
    KT_ASSERT_EQ(bflush(e), 0);     /* the failed buffer was forgotten */
    KT_ASSERT_EQ(binval(e), 0);
    /* binval refuses while a buffer of the disk is busy. */
    bp = getblk(e, 2, 512);
    KT_ASSERT_EQ(binval(e), -EBUSY);
    brelse(bp);
    KT_ASSERT_EQ(binval(e), 0);
    KT_ASSERT_EQ(binval(d), 0);
    return 0;
}

/*
 * buf_shrink: the buffer cache gives back the pages of clean, unused
 * buffers (never below a quarter of them), and the buffers that lost
 * their pages get new ones when reused: every block written through the
 * cache afterwards reads back intact.
 */
KTEST(buf_shrink)
{
    struct blkdev *d = ram();
    KT_ASSERT(d);
    KT_ASSERT_EQ(binval(d), 0);
    int nbuf, nrows, ngroups;
    buf_test_geometry(&nbuf, &nrows, &ngroups);
    int before = buf_data_count();
    uint64_t freed = buf_shrink((uint64_t)nbuf);
    int after = buf_data_count();
    KT_ASSERT(freed > 0);
    KT_ASSERT_EQ(after, before - (int)freed);
    KT_ASSERT(after >= nbuf / 4);
    /* Every buffer reused: more blocks than buffers, written and read. */
    uint64_t nblocks = MIN((uint64_t)nbuf + 64, d->nblocks * d->bsize / BSIZE);
    for (uint64_t b = 0; b < nblocks; b++) {
        struct buf *bp = getblk(d, b, BSIZE);
        fill(bp->b_data, BSIZE, 9, b);
        KT_ASSERT_EQ(bwrite(bp), 0);
    }
    KT_ASSERT(buf_data_count() > after);
    for (uint64_t b = 0; b < nblocks; b++) {
        int err = 1;
        struct buf *bp = bread(d, b, BSIZE, &err);
        KT_ASSERT(bp != NULL);
        bool ok = holds(bp->b_data, BSIZE, 9, b);
        brelse(bp);
        KT_ASSERT(ok);
    }
    return 0;
}
