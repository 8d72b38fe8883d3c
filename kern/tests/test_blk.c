/*
 * ktests for the block layer and the disk drivers.
 *
 *   blk_errors       bad requests come back as errno values and are never
 *                    queued; blk_find of a missing name is NULL; bad
 *                    registrations and RAM disks are refused
 *   blk_faults       a fault-injecting test disk ("ktfail"): a driver that
 *                    refuses a request at submit, and one that completes it
 *                    with an error, both reach the caller and the counters
 *   blk_stats        a private RAM disk with 1024-byte blocks ("ktram"):
 *                    data round trip, and every counter of a known request
 *                    sequence exact; then the statistics table
 *   blk_snapshot     the statistics system call's snapshot: -ENOSPC and
 *                    the size needed when the buffer is short, with nothing
 *                    written; then every disk, counts as blk_stats_lookup's
 *   blk_ram          ram0: patterns over the whole disk, read back in other
 *                    chunk sizes, the last blocks, blk_rw's splitting
 *   blk_ram_mp       a thread on every CPU at once against ram0, each on its
 *                    own region, data verified, every request counted
 *   blk_ram_sort     requests queued out of order on a paused ram0 are
 *                    dispatched in C-SCAN order
 *   blk_virtio       blk_ram's checks on every virtio disk, completions by
 *                    interrupt; with none attached it says "ktest: blk: no
 *                    virtio disk attached" and passes -- but only if PCI
 *                    showed no virtio-blk function at all
 *   blk_virtio_mp, blk_virtio_sort   the same on every virtio disk
 *   blk_ata, blk_ata_mp, blk_ata_sort   the same on every ATA disk (none:
 *                    says so and passes).  Polled PIO under emulation is
 *                    slow, so the ATA variants move less data.
 *   blk_image        a host-made image attached as vda (make check's
 *                    disks/image job): block 0 starts with IMAGE_MAGIC and
 *                    blocks 1..15 hold host_byte(); the test verifies them
 *                    and writes kernel_byte() over blocks 16..31, which the
 *                    host checks after power-off.  Any other vda (or none):
 *                    says so and passes without writing anything.
 *
 * Waiting.  Every wait here sleeps (blk_rw, blk_wait, and the runner
 * sleeping until its threads report): a waiting CPU halts, leaving the
 * host core to the emulator's I/O threads, which matters under TCG with
 * 16 vCPUs sharing two host cores, where a CPU spinning on a flag slowed
 * every request tenfold.  The kernel has no timed sleep, so no wait has a
 * guard of its own: a request that never completes leaves its test
 * asleep, and the harness's time limit fails the boot.  What must not
 * happen is a test returning while something can still write to its
 * memory, so a runner never returns before its threads have finished
 * (their state is static in any case), and requests live in the waiting
 * frame or in static storage until they are done.
 *
 * Work is sized to finish in a few seconds on a 16-CPU preset under TCG on
 * two loaded host cores: small regions, and the multi-thread tests stop
 * starting rounds once MP_SOFT_NS have passed (every thread finishes at
 * least one round, so every test still checks something).
 */
#include <kern/tests/ktest.h>
#include <drivers/block/bio.h>
#include <kern/lib/errno.h>
#include <kern/vm/kmem.h>
#include <kern/arch/cpu.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/sched/thread.h>
#include <kern/lock/sleep.h>
#include <drivers/platform/timer.h>
#include <drivers/block/virtio_blk.h>

#define MP_SOFT_NS   1000000000ull   /* no new round after a second */

static uint64_t now_ms(void)
{
    return uptime_ns() / 1000000;
}

static uint64_t pattern(uint64_t tag, uint64_t blkno, uint64_t word)
{
    uint64_t x = (tag << 40) ^ (blkno << 12) ^ word ^ 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    return x * 0xBF58476D1CE4E5B9ull;
}

static void fill(struct blkdev *d, void *buf, uint64_t blkno, uint32_t n, uint64_t tag)
{
    uint64_t *w = buf;
    uint32_t per = d->bsize / 8;
    for (uint32_t b = 0; b < n; b++)
        for (uint32_t i = 0; i < per; i++)
            w[b * per + i] = pattern(tag, blkno + b, i);
}

/* Index of the first bad word, or -1. */
static int64_t check(struct blkdev *d, const void *buf, uint64_t blkno, uint32_t n, uint64_t tag)
{
    const uint64_t *w = buf;
    uint32_t per = d->bsize / 8;
    for (uint32_t b = 0; b < n; b++)
        for (uint32_t i = 0; i < per; i++)
            if (w[b * per + i] != pattern(tag, blkno + b, i))
                return (int64_t)(b * per + i);
    return -1;
}

/* Requests that must be refused before they are queued. */
static int bad_requests(struct blkdev *d, void *buf)
{
    struct blk_stats s0, s1;
    blk_stats_get(d, &s0);
    KT_ASSERT_EQ(blk_rw(d, d->nblocks, 1, buf, false), -ENXIO);
    KT_ASSERT_EQ(blk_rw(d, d->nblocks - 1, 2, buf, true), -ENXIO);
    KT_ASSERT_EQ(blk_rw(d, ~0ull, 1, buf, false), -ENXIO);
    KT_ASSERT_EQ(blk_rw(d, ~0ull - 1, 4, buf, false), -ENXIO);     /* blkno + count wraps */
    KT_ASSERT_EQ(blk_rw(d, 0, 1, NULL, false), -EINVAL);
    struct bio b = { .dev = d, .blkno = 0, .count = d->max_blocks + 1, .buf = buf };
    KT_ASSERT_EQ(blk_submit(&b), -EINVAL);
    b.count = 0;
    KT_ASSERT_EQ(blk_submit(&b), -EINVAL);
    b.count = 1;
    b.blkno = d->nblocks;
    KT_ASSERT_EQ(blk_submit(&b), -ENXIO);
    blk_stats_get(d, &s1);
    KT_ASSERT_EQ(s1.ops, s0.ops);               /* nothing reached the disk */
    KT_ASSERT_EQ(s1.qlen_samples, s0.qlen_samples);
    return 0;
}

/* Write the first `limit` blocks in chunks of varying size, read back in
 * other chunks and verify; the last blocks of the disk; one blk_rw call
 * that must be split; the bad requests. */
static int rw_whole(struct blkdev *d, uint64_t limit, uint32_t max_chunk, bool split, uint64_t tag)
{
    uint32_t chunk = MIN(max_chunk, d->max_blocks);
    uint32_t big = split ? 2 * d->max_blocks + 5 : 0;  /* blk_rw splits it in three */
    uint64_t nb = MIN(limit, d->nblocks);
    uint64_t t0 = now_ms();
    char *buf = kmalloc((size_t)MAX(chunk, big) * d->bsize);
    KT_ASSERT(buf != NULL);
    int e = 0;
    int64_t bad = -1;
    uint64_t b = 0;
    uint32_t n = 0;
    for (uint32_t k = 1; b < nb; k = k % chunk + 7) {
        n = (uint32_t)MIN((uint64_t)k, nb - b);
        fill(d, buf, b, n, tag);
        if ((e = blk_rw(d, b, n, buf, true)))
            goto fail_write;
        b += n;
    }
    b = 0;
    for (uint32_t k = chunk; b < nb; k = k > 13 ? k - 13 : chunk) {
        n = (uint32_t)MIN((uint64_t)k, nb - b);
        memset(buf, 0xA5, (size_t)n * d->bsize);
        if ((e = blk_rw(d, b, n, buf, false)) || (bad = check(d, buf, b, n, tag)) >= 0)
            goto fail_read;
        b += n;
    }
    /* The very end of the disk. */
    n = (uint32_t)MIN((uint64_t)chunk, d->nblocks);
    b = d->nblocks - n;
    fill(d, buf, b, n, tag ^ 0xE0D);
    if ((e = blk_rw(d, b, n, buf, true)))
        goto fail_write;
    memset(buf, 0, (size_t)n * d->bsize);
    if ((e = blk_rw(d, b, n, buf, false)) || (bad = check(d, buf, b, n, tag ^ 0xE0D)) >= 0)
        goto fail_read;
    /* blk_rw, the synchronous API the buffer cache uses, splits a request
     * larger than max_blocks. */
    if (split && d->nblocks >= big) {
        b = d->nblocks / 2 - MIN(d->nblocks / 2, (uint64_t)big / 2);
        n = big;
        fill(d, buf, b, n, tag ^ 0xB16);
        if ((e = blk_rw(d, b, n, buf, true)))
            goto fail_write;
        memset(buf, 0, (size_t)n * d->bsize);
        if ((e = blk_rw(d, b, n, buf, false)) || (bad = check(d, buf, b, n, tag ^ 0xB16)) >= 0)
            goto fail_read;
    }
    e = bad_requests(d, buf);
    kfree(buf);
    if (e == 0)
        kprintf("ktest: blk: %s: %lu blocks written and verified in %lu ms\n", d->name, nb,
                now_ms() - t0);
    return e;

fail_write:
    kfree(buf);
    ktest_fail("%s: write %lu+%u: error %d", d->name, b, n, e);
    return 1;
fail_read:
    kfree(buf);
    ktest_fail("%s: read %lu+%u: error %d, bad word %ld", d->name, b, n, e, bad);
    return 1;
}

/* ---- Many threads at once -------------------------------------------- */

#define MP_CHUNK 8              /* blocks a write moves; reads move half */

struct mp_thread {
    uint64_t base, nblocks, tag;    /* [c] set before the thread starts */
    uint64_t requests;              /* [o] requests completed; read after the join */
    int rounds;                     /* [o] rounds finished */
    int error;                      /* [o] first error */
    int64_t bad;                    /* [o] block that read back wrong, or -1 */
    struct thread *t;               /* the runner's */
};

/* One run at a time (tests run one after another).  Static rather than in
 * the runner's frame, and the runner returns only after every thread it
 * started has finished (wait_threads, then thread_join). */
static struct {
    struct blkdev *d;               /* [c] for the run */
    int rounds;                     /* [c] at most this many rounds */
    uint64_t soft_deadline;         /* [c] no new round after this (uptime ns) */
    volatile int finished;          /* [a] threads done; the runner sleeps on it */
    struct mp_thread th[MAX_CPUS];
} mp;

/* The runner sleeps on this channel until mp.finished reaches its count. */
#define MP_CHAN ((const void *)&mp.finished)

/* Chunk visited i-th: alternately from the front and the back, rotated by
 * the round, so requests from different CPUs land far apart. */
static uint64_t scatter(uint64_t i, uint64_t chunks, uint64_t round)
{
    uint64_t c = (i % 2 == 0) ? i / 2 : chunks - 1 - i / 2;
    return (c + round) % chunks;
}

static void mp_body(void *arg)
{
    struct mp_thread *a = arg;
    struct blkdev *d = mp.d;
    void *buf = kmalloc(MP_CHUNK * d->bsize);
    uint64_t chunks = a->nblocks / MP_CHUNK;
    a->bad = -1;
    if (!buf) {
        a->error = -ENOMEM;
        goto out;
    }
    for (int round = 0; round < mp.rounds && !a->error; round++) {
        if (round > 0 && uptime_ns() > mp.soft_deadline)
            break;
        uint64_t tag = a->tag + (uint64_t)round;
        for (uint64_t i = 0; i < chunks && !a->error; i++) {
            uint64_t blk = a->base + scatter(i, chunks, (uint64_t)round) * MP_CHUNK;
            fill(d, buf, blk, MP_CHUNK, tag);
            int e = blk_rw(d, blk, MP_CHUNK, buf, true);
            if (e)
                a->error = e;
            else
                a->requests++;
        }
        for (uint64_t blk = a->base; blk < a->base + chunks * MP_CHUNK && !a->error; blk += MP_CHUNK / 2) {
            memset(buf, 0, MP_CHUNK * d->bsize);
            int e = blk_rw(d, blk, MP_CHUNK / 2, buf, false);
            if (e) {
                a->error = e;
                break;
            }
            a->requests++;
            if (check(d, buf, blk, MP_CHUNK / 2, tag) >= 0) {
                a->error = -EIO;
                a->bad = (int64_t)blk;
            }
        }
        if (!a->error)
            a->rounds++;
    }
    kfree(buf);
out:
    /* Under the channel's bucket lock, so the runner cannot check the
     * count and then miss this wakeup (see wait_threads). */
    struct sleepq *sq = sleepq_lock(MP_CHAN);
    __atomic_add_fetch(&mp.finished, 1, __ATOMIC_RELEASE);
    sleepq_wakeup_locked(sq, MP_CHAN, true);
    sleepq_unlock(sq);
}

/* Sleep until n threads have finished. */
static void wait_threads(int n)
{
    for (;;) {
        struct sleepq *sq = sleepq_lock(MP_CHAN);
        if (__atomic_load_n(&mp.finished, __ATOMIC_ACQUIRE) >= n) {
            sleepq_unlock(sq);
            return;
        }
        sleep_locked(sq, MP_CHAN);
    }
}

/* nthreads threads (thread i on CPU i % online), each on its own region
 * of per_thread blocks, up to `rounds` rounds of scattered writes then
 * reads, verified; the disk's counters must account for every request. */
static int rw_threads(struct blkdev *d, int nthreads, uint64_t per_thread, int rounds, uint64_t tag)
{
    int online = ncpus_online;
    nthreads = MAX(1, MIN(nthreads, MAX_CPUS));
    uint64_t per = MIN(d->nblocks / (uint64_t)nthreads, per_thread) / MP_CHUNK * MP_CHUNK;
    KT_ASSERT(per >= MP_CHUNK);
    memset(&mp, 0, sizeof mp);
    mp.d = d;
    mp.rounds = rounds;
    uint64_t t0 = uptime_ns();
    mp.soft_deadline = t0 + MP_SOFT_NS;
    struct blk_stats before, after;
    blk_stats_get(d, &before);
    int started = 0;
    for (int i = 0; i < nthreads; i++) {
        struct mp_thread *a = &mp.th[i];
        a->base = (uint64_t)i * per;
        a->nblocks = per;
        a->tag = tag + (uint64_t)i * 16;
        a->t = thread_create("blk_mp", mp_body, a, 1UL << (i % online));
        if (!a->t)
            break;
        started++;
    }
    /* Whatever happened, no return before every started thread is done. */
    wait_threads(started);
    uint64_t ms = (uptime_ns() - t0) / 1000000;
    for (int i = 0; i < started; i++)
        thread_join(mp.th[i].t);
    KT_ASSERT_EQ(started, nthreads);
    uint64_t requests = 0;
    int min_rounds = rounds;
    for (int i = 0; i < nthreads; i++) {
        struct mp_thread *a = &mp.th[i];
        if (a->error) {
            ktest_fail("%s: thread %d: error %d (bad block %ld)", d->name, i, a->error, a->bad);
            return 1;
        }
        requests += a->requests;
        min_rounds = MIN(min_rounds, a->rounds);
    }
    KT_ASSERT(min_rounds >= 1);
    blk_stats_get(d, &after);
    KT_ASSERT_EQ(after.ops - before.ops, requests);
    KT_ASSERT_EQ(after.errors, before.errors);
    kprintf("ktest: blk: %s: %d threads on %d cpus, %d-%d rounds, %lu requests in %lu ms, "
            "max queue %lu\n", d->name, nthreads, MIN(nthreads, online), min_rounds, rounds,
            requests, ms, after.qlen_max);
    return 0;
}

/* ---- C-SCAN order ----------------------------------------------------- */

#define NSORT 12

static struct bio sort_bio[NSORT];      /* [o] the running test's (see Waiting above) */

/* Pause the disk, queue requests in a scrambled order, check they are
 * dispatched in C-SCAN order from the head position, and complete. */
static int sort_order(struct blkdev *d)
{
    /* Ranks 0..11 at evenly spaced blocks pos(r) = (r + 1) * step, in a
     * scrambled submission order; the head goes just past rank 5. */
    static const int order[NSORT] = { 7, 2, 5, 0, 10, 4, 1, 11, 8, 6, 9, 3 };
    KT_ASSERT(d->nblocks >= 64);
    uint64_t step = (d->nblocks - 1) / (NSORT + 1);
    uint64_t head = 6 * step + 1;               /* between ranks 5 and 6 */
    char *buf = kmalloc((NSORT + 1) * d->bsize);
    KT_ASSERT(buf != NULL);
    int e = blk_rw(d, head, 1, buf + NSORT * d->bsize, false);
    if (e) {
        kfree(buf);
        ktest_fail("%s: read at %lu: %d", d->name, head, e);
        return 1;
    }
    blk_pause(d);
    for (int i = 0; i < NSORT; i++) {
        struct bio *b = &sort_bio[i];
        uint64_t blk = (uint64_t)(order[i] + 1) * step;
        memset(b, 0, sizeof *b);
        b->dev = d;
        b->blkno = blk;
        b->count = 1;
        b->buf = buf + i * d->bsize;
        fill(d, b->buf, blk, 1, 0x5047);
        b->write = true;
        if ((e = blk_submit(b))) {
            /* Those already queued must finish before buf is freed. */
            blk_resume(d);
            for (int j = 0; j < i; j++)
                (void)blk_wait(&sort_bio[j]);
            kfree(buf);
            ktest_fail("%s: submit of block %lu: %d", d->name, blk, e);
            return 1;
        }
    }
    spin_lock(&d->qlock);
    uint64_t head_pos = d->head_pos;
    uint32_t qlen = d->qlen;
    spin_unlock(&d->qlock);
    blk_resume(d);
    int err = 0;
    for (int i = 0; i < NSORT; i++)
        if (blk_wait(&sort_bio[i]))
            err = sort_bio[i].error;
    if (err) {
        kfree(buf);
        ktest_fail("%s: request failed: %d", d->name, err);
        return 1;
    }
    if (qlen != NSORT || head_pos != head) {
        kfree(buf);
        ktest_fail("%s: %u queued (want %d), head at %lu (want %lu)", d->name, qlen, NSORT,
                   head_pos, head);
        return 1;
    }
    /* C-SCAN from the head: ranks 6..11 upward, then back to 0..5. */
    uint64_t seq0 = ~0ull;
    for (int i = 0; i < NSORT; i++)
        seq0 = MIN(seq0, sort_bio[i].seq);
    for (int k = 0; k < NSORT; k++) {
        int found = -1;
        for (int i = 0; i < NSORT; i++)
            if (sort_bio[i].seq == seq0 + (uint64_t)k)
                found = i;
        uint64_t want = (uint64_t)((k + 6) % NSORT + 1) * step;
        if (found < 0 || sort_bio[found].blkno != want) {
            kfree(buf);
            ktest_fail("%s: dispatch %d was block %ld, expected %lu", d->name, k,
                       found < 0 ? -1L : (long)sort_bio[found].blkno, want);
            return 1;
        }
    }
    /* And the data went where it should. */
    for (int r = 0; r < NSORT; r++) {
        uint64_t blk = (uint64_t)(r + 1) * step;
        if ((e = blk_rw(d, blk, 1, buf, false)) || check(d, buf, blk, 1, 0x5047) >= 0) {
            kfree(buf);
            ktest_fail("%s: block %lu read back wrong (error %d)", d->name, blk, e);
            return 1;
        }
    }
    kfree(buf);
    return 0;
}

/* ---- Test disks -------------------------------------------------------- */

/* "ktfail": no storage.  An even block is refused at submit (the layer
 * completes it), an odd one is completed with an error by the driver. */
static int fail_submit(struct blkdev *d, struct bio *b)
{
    (void)d;
    if (b->blkno % 2 == 0)
        return -EIO;
    blk_complete(b, -EIO);
    return 0;
}

static const struct blkdev_ops fail_ops = { .submit = fail_submit };
static struct blkdev fail_disk = {
    .name = "ktfail", .bsize = 512, .nblocks = 64, .max_blocks = 8, .ops = &fail_ops,
};

/* The test disks are made on first use and stay (disks are never removed). */
static struct blkdev *test_disk(const char *name)
{
    struct blkdev *d = blk_find(name);
    if (d)
        return d;
    if (strcmp(name, "ktfail") == 0)
        return blk_register(&fail_disk) == 0 ? &fail_disk : NULL;
    return ramdisk_create(name, 1, 1024);
}

static int t_errors(void)
{
    KT_ASSERT(blk_find(NULL) == NULL);
    KT_ASSERT(blk_find("") == NULL);
    KT_ASSERT(blk_find("nosuchdisk") == NULL);
    KT_ASSERT(blk_find("vd") == NULL);
    KT_ASSERT(blk_get(-1) == NULL);
    KT_ASSERT(blk_get(blk_count()) == NULL);
    for (int i = 0; i < blk_count(); i++)
        KT_ASSERT(blk_find(blk_get(i)->name) == blk_get(i));
    struct blk_stats s;
    KT_ASSERT_EQ(blk_stats_lookup("nosuchdisk", &s), -ENXIO);
    KT_ASSERT_EQ(blk_stats_lookup(NULL, &s), -EINVAL);
    KT_ASSERT_EQ(blk_stats_lookup("ram0", NULL), -EINVAL);
    KT_ASSERT_EQ(blk_stats_lookup("ram0", &s), 0);
    static char buf[512];       /* never reaches a disk, but not on a stack regardless */
    KT_ASSERT_EQ(blk_submit(NULL), -EINVAL);
    struct bio nodev = { .dev = NULL, .count = 1, .buf = buf };
    KT_ASSERT_EQ(blk_submit(&nodev), -EINVAL);
    KT_ASSERT_EQ(blk_rw(NULL, 0, 1, buf, false), -EINVAL);
    /* Registrations that must be refused (static: a refused disk is not
     * touched, but nothing of it may live on a stack regardless). */
    static struct blkdev bad;
    static const struct blkdev_ops ops = { .submit = fail_submit };
    KT_ASSERT_EQ(blk_register(NULL), -EINVAL);
    bad = (struct blkdev){ .name = "ktbad", .bsize = 512, .nblocks = 8, .ops = NULL };
    KT_ASSERT_EQ(blk_register(&bad), -EINVAL);
    bad = (struct blkdev){ .name = "ktbad", .bsize = 4096, .nblocks = 8, .ops = &ops };
    KT_ASSERT_EQ(blk_register(&bad), -EINVAL);
    bad = (struct blkdev){ .name = "ktbad", .bsize = 512, .nblocks = 0, .ops = &ops };
    KT_ASSERT_EQ(blk_register(&bad), -EINVAL);
    bad = (struct blkdev){ .name = "", .bsize = 512, .nblocks = 8, .ops = &ops };
    KT_ASSERT_EQ(blk_register(&bad), -EINVAL);
    bad = (struct blkdev){ .name = "ram0", .bsize = 512, .nblocks = 8, .ops = &ops };
    KT_ASSERT_EQ(blk_register(&bad), -EEXIST);
    KT_ASSERT(blk_find("ktbad") == NULL);
    KT_ASSERT(ramdisk_create("ktbad", 0, 512) == NULL);
    KT_ASSERT(ramdisk_create("ktbad", 1, 4096) == NULL);
    KT_ASSERT(ramdisk_create("ram0", 1, 512) == NULL);     /* name taken */
    KT_ASSERT(blk_find("ktbad") == NULL);
    struct blkdev *r = blk_find("ram0");
    KT_ASSERT(r != NULL);
    return bad_requests(r, buf);
}

static int t_faults(void)
{
    struct blkdev *d = test_disk("ktfail");
    KT_ASSERT(d != NULL);
    struct blk_stats s0, s1;
    blk_stats_get(d, &s0);
    static char buf[8 * 512];
    KT_ASSERT_EQ(blk_rw(d, 0, 1, buf, false), -EIO);       /* refused at submit */
    KT_ASSERT_EQ(blk_rw(d, 1, 1, buf, true), -EIO);        /* completed with an error */
    KT_ASSERT_EQ(blk_rw(d, 2, 8, buf, false), -EIO);
    KT_ASSERT_EQ(blk_rw(d, 3, 8, buf, true), -EIO);
    KT_ASSERT_EQ(blk_rw(d, 64, 1, buf, false), -ENXIO);
    blk_stats_get(d, &s1);
    KT_ASSERT_EQ(s1.ops - s0.ops, 4);
    KT_ASSERT_EQ(s1.errors - s0.errors, 4);
    KT_ASSERT_EQ(s1.blocks, s0.blocks);                 /* failed requests move nothing */
    KT_ASSERT_EQ(s1.reads - s0.reads, 2);
    KT_ASSERT_EQ(s1.writes - s0.writes, 2);
    return 0;
}

static int t_stats(void)
{
    struct blkdev *d = test_disk("ktram");
    KT_ASSERT(d != NULL);
    KT_ASSERT_EQ(d->bsize, 1024);
    KT_ASSERT_EQ(d->nblocks, 1024);
    if (rw_whole(d, d->nblocks, 96, true, 0x1C))
        return 1;
    char *buf = kmalloc(4 * 1024);
    KT_ASSERT(buf != NULL);
    struct blk_stats s0, s1;
    blk_stats_get(d, &s0);
    int e = 0;
    for (int i = 0; i < 5 && !e; i++) {
        fill(d, buf, 100 + 10 * (uint64_t)i, 3, 0x57);
        e = blk_rw(d, 100 + 10 * (uint64_t)i, 3, buf, true);
    }
    for (int i = 0; i < 4 && !e; i++)
        e = blk_rw(d, 100 + 10 * (uint64_t)i, 2, buf, false);
    int64_t bad = e ? -1 : check(d, buf, 130, 2, 0x57);
    int past_end = e ? 0 : blk_rw(d, d->nblocks, 1, buf, false);  /* refused: not counted */
    kfree(buf);
    KT_ASSERT_EQ(e, 0);
    KT_ASSERT(bad < 0);
    KT_ASSERT_EQ(past_end, -ENXIO);
    blk_stats_get(d, &s1);
    KT_ASSERT_EQ(s1.ops - s0.ops, 9);
    KT_ASSERT_EQ(s1.writes - s0.writes, 5);
    KT_ASSERT_EQ(s1.reads - s0.reads, 4);
    KT_ASSERT_EQ(s1.blocks - s0.blocks, 5 * 3 + 4 * 2);
    KT_ASSERT_EQ(s1.errors, s0.errors);
    KT_ASSERT_EQ(s1.qlen_samples - s0.qlen_samples, 9);
    KT_ASSERT(s1.qlen_sum - s0.qlen_sum >= 9);          /* each saw at least itself */
    KT_ASSERT(s1.qlen_max >= 1);
    KT_ASSERT(s1.busy_tsc > s0.busy_tsc);
    KT_ASSERT(s1.service_tsc > s0.service_tsc);
    KT_ASSERT(s1.qlen_tsc > s0.qlen_tsc);
    KT_ASSERT(s1.elapsed_tsc > s0.elapsed_tsc);
    KT_ASSERT(s1.busy_tsc <= s1.elapsed_tsc);
    KT_ASSERT(s1.qlen_tsc >= s1.busy_tsc);              /* queue >= 1 whenever busy */
    blk_stats_print();
    return 0;
}

/* ---- Per-driver tests ---------------------------------------------------- */

static struct blkdev *ram0(void)
{
    return blk_find("ram0");
}

/* A disk a mounted file system holds (blk_claim) is not written by these
 * tests; say so, so a skipped device is visible. */
static bool in_use(struct blkdev *d)
{
    if (!blk_claimed(d))
        return false;
    kprintf("ktest: blk: %s is in use by %s, its I/O tests skipped\n", d->name, d->claimed_by);
    return true;
}

static int t_ram(void)
{
    struct blkdev *d = ram0();
    KT_ASSERT(d != NULL);
    KT_ASSERT_EQ(d->nblocks * d->bsize, 8ull << 20);
    if (in_use(d))
        return 0;
    return rw_whole(d, 2048, 96, true, 0x11);  /* and the end of the disk */
}

static int t_ram_mp(void)
{
    struct blkdev *d = ram0();
    KT_ASSERT(d != NULL);
    if (in_use(d))
        return 0;
    return rw_threads(d, ncpus_online, 64, 3, 0x200);
}

static int t_ram_sort(void)
{
    struct blkdev *d = ram0();
    KT_ASSERT(d != NULL);
    if (in_use(d))
        return 0;
    return sort_order(d);
}

/* Every virtio disk PCI showed must have attached; none at all passes. */
static int virtio_disks(void)
{
    if (virtio_blk_found() == 0) {
        kprintf("ktest: blk: no virtio disk attached\n");
        return 0;
    }
    if (virtio_blk_count() != virtio_blk_found()) {
        ktest_fail("%d virtio-blk functions found, %d attached", virtio_blk_found(),
                   virtio_blk_count());
        return -1;
    }
    return virtio_blk_count();
}

static int t_virtio(void)
{
    int n = virtio_disks();
    KT_ASSERT(n >= 0);
    for (int i = 0; i < n; i++) {
        struct blkdev *d = virtio_blk_get(i);
        KT_ASSERT(d != NULL);
        KT_ASSERT(blk_find(d->name) == d);
        /* Named in attachment order: vda, vdb, ... */
        KT_ASSERT(d->name[0] == 'v' && d->name[1] == 'd' && d->name[2] == 'a' + i);
        if (in_use(d))
            continue;
        uint64_t i0 = virtio_blk_intr_count(i);
        if (rw_whole(d, 2048, 96, true, 0x30 + (uint64_t)i))
            return 1;
        uint64_t i1 = virtio_blk_intr_count(i);
        KT_ASSERT(i1 > i0);     /* completions came by interrupt */
    }
    return 0;
}

static int t_virtio_mp(void)
{
    int n = virtio_disks();
    KT_ASSERT(n >= 0);
    for (int i = 0; i < n; i++)
        if (!in_use(virtio_blk_get(i)) &&
            rw_threads(virtio_blk_get(i), ncpus_online, 64, 3, 0x400 + (uint64_t)i * 0x100))
            return 1;
    return 0;
}

static int t_virtio_sort(void)
{
    int n = virtio_disks();
    KT_ASSERT(n >= 0);
    for (int i = 0; i < n; i++)
        if (!in_use(virtio_blk_get(i)) && sort_order(virtio_blk_get(i)))
            return 1;
    return 0;
}

/* ATA disks (Bochs; QEMU with -drive if=ide).  kind 0: data, 1: threads,
 * 2: C-SCAN.  Polled PIO costs an emulator exit per word and keeps a CPU
 * busy for the whole transfer (16 vCPUs under TCG made it 25 ms a
 * sector), so these move a few hundred sectors in all: 64 blocks and the
 * end of the disk in chunks of at most 16, no split test (blk_rw's
 * splitting is the layer's, tested on the other disks), and four threads
 * of 16 blocks for one round -- the drive serializes every command anyway,
 * so more submitters would only queue longer. */
static int t_ata(int kind)
{
    int n = 0;
    for (int i = 0; i < blk_count(); i++) {
        struct blkdev *d = blk_get(i);
        if (strncmp(d->name, "ata", 3) != 0 || in_use(d))
            continue;
        n++;
        int e = kind == 0 ? rw_whole(d, 64, 16, false, 0x70 + (uint64_t)i)
              : kind == 1 ? rw_threads(d, MIN(ncpus_online, 4), 2 * MP_CHUNK, 1, 0x800)
              : sort_order(d);
        if (e)
            return 1;
    }
    if (n == 0)
        kprintf("ktest: blk: no ata disk attached\n");
    return 0;
}

/* ---- A host image ------------------------------------------------------ */

#define IMAGE_MAGIC "TEMPEST-HOST-IMAGE"

/* Byte i of block b: what the host wrote (blocks 1..15), and what the
 * kernel writes (16..31).  tests/check.py computes the same. */
static uint8_t host_byte(uint64_t b, uint64_t i) { return (uint8_t)(b * 31 + i * 7 + 0x11); }
static uint8_t kernel_byte(uint64_t b, uint64_t i) { return (uint8_t)(b * 13 + i * 3 + 0x5A); }

static int t_image(void)
{
    struct blkdev *d = blk_find("vda");
    if (!d || d->nblocks < 32 || d->bsize != 512) {
        kprintf("ktest: blk: no host image on vda\n");
        return 0;
    }
    uint8_t *buf = kmalloc(16 * 512);
    KT_ASSERT(buf != NULL);
    int e = blk_rw(d, 0, 16, buf, false);
    if (e || memcmp(buf, IMAGE_MAGIC, sizeof IMAGE_MAGIC - 1) != 0) {
        kfree(buf);
        KT_ASSERT_EQ(e, 0);
        kprintf("ktest: blk: no host image on vda\n");
        return 0;
    }
    for (uint64_t b = 1; b < 16; b++)
        for (uint64_t i = 0; i < 512; i++)
            if (buf[b * 512 + i] != host_byte(b, i)) {
                kfree(buf);
                ktest_fail("vda: host image block %lu byte %lu is 0x%x, want 0x%x", b, i,
                           buf[b * 512 + i], host_byte(b, i));
                return 1;
            }
    for (uint64_t b = 16; b < 32; b++)
        for (uint64_t i = 0; i < 512; i++)
            buf[(b - 16) * 512 + i] = kernel_byte(b, i);
    e = blk_rw(d, 16, 16, buf, true);
    kfree(buf);
    KT_ASSERT_EQ(e, 0);
    kprintf("ktest: blk: vda: host image verified, blocks 16-31 written\n");
    return 0;
}

/* The snapshot for the statistics system call: all or nothing, and the
 * same counts blk_stats_lookup gives. */
static int t_snapshot(void)
{
    size_t need = 0;
    KT_ASSERT_EQ(blk_stats_snapshot(NULL, 0, &need), -ENOSPC);
    KT_ASSERT(need >= sizeof(struct blkstat_snapshot_hdr) + sizeof(struct blkstat_rec));
    uint8_t *buf = kmalloc(need + 64);
    KT_ASSERT(buf != NULL);
    memset(buf, 0xA5, need + 64);
    size_t need2 = 0;
    long r = blk_stats_snapshot(buf, need - 1, &need2);
    bool untouched = true;
    for (size_t i = 0; i < need + 64; i++)
        untouched &= buf[i] == 0xA5;
    r = r == -ENOSPC && untouched && need2 == need ? blk_stats_snapshot(buf, need + 64, &need2) : -1;
    const struct blkstat_snapshot_hdr *h = (const void *)buf;
    const struct blkstat_rec *rec = (const void *)(h + 1);
    int ram0 = -1;
    for (uint32_t i = 0; r > 0 && i < h->ndisks; i++)
        if (strcmp(rec[i].name, "ram0") == 0)
            ram0 = (int)i;
    struct blk_stats st;
    int err = blk_stats_lookup("ram0", &st);
    bool same = ram0 >= 0 && err == 0 && rec[ram0].ops <= st.ops && rec[ram0].blocks <= st.blocks;
    uint32_t version = h->version, ndisks = h->ndisks;
    kfree(buf);
    KT_ASSERT_EQ(r, (long)need);
    KT_ASSERT_EQ(version, BLKSTAT_VERSION);
    KT_ASSERT_EQ(ndisks, (uint32_t)blk_count());
    KT_ASSERT(same);
    return 0;
}

KTEST(blk_snapshot) { return t_snapshot(); }
KTEST(blk_image) { return t_image(); }
KTEST(blk_errors) { return t_errors(); }
KTEST(blk_faults) { return t_faults(); }
KTEST(blk_stats) { return t_stats(); }
KTEST(blk_ram) { return t_ram(); }
KTEST(blk_ram_mp) { return t_ram_mp(); }
KTEST(blk_ram_sort) { return t_ram_sort(); }
KTEST(blk_virtio) { return t_virtio(); }
KTEST(blk_virtio_mp) { return t_virtio_mp(); }
KTEST(blk_virtio_sort) { return t_virtio_sort(); }
KTEST(blk_ata) { return t_ata(0); }
KTEST(blk_ata_mp) { return t_ata(1); }
KTEST(blk_ata_sort) { return t_ata(2); }
