/*
 * The block-device layer.
 *
 * Theory.  Every disk (RAM disk, virtio-blk, ATA) registers a struct
 * blkdev with its geometry and one operation, submit.  Requests (struct
 * bio) never go to a driver directly: blk_submit puts them on the disk's
 * queue, kept SORTED by block number in C-SCAN (circular elevator) order,
 * and the disk's service thread takes them off the front and hands them
 * to the driver, up to max_inflight at once.  The driver finishes each
 * request with blk_complete, from a thread or from its interrupt handler;
 * that sets bio->done and wakes whoever sleeps on the bio's address.
 * blk_rw is the synchronous wrapper: submit, then sleep until done.
 *
 * C-SCAN.  head_pos is the block number of the request dispatched last.
 * A waiting request is "ahead" if its blkno >= head_pos and "behind"
 * otherwise; the queue holds the ahead requests in ascending order
 * followed by the behind ones in ascending order, so the head sweeps
 * upward, then jumps back to the lowest block and sweeps up again.
 * Dispatching the front request (key (sweep, blkno)) keeps that order
 * valid for the new head_pos: the rest of its sweep is still >= it, and if
 * it came from the behind sweep, the ahead sweep was empty and every
 * remaining request is now ahead and already ascending.  Insertion is a
 * linear walk (queues are short; the statistics show how short).
 *
 * Statistics, per disk, under the queue lock (the figures sar -d reports,
 * for the disk tables of the SVR4 MP paper): operations, reads, writes,
 * blocks, errors; the queue length (waiting + in flight) both as seen by
 * arrivals (a sample after every insertion, summed, with the maximum) and
 * averaged over time (its integral, qlen_tsc, accumulated whenever it
 * changes: at submit and at completion; dispatch moves a request from
 * waiting to in flight and changes nothing); busy time, the TSC cycles
 * during which at least one request was in flight (utilization = busy /
 * elapsed); and per request the queue wait (submit -> dispatch) and the
 * service time (dispatch -> completion), summed.  blk_stats_get copies
 * them in one critical section and brings the running intervals up to
 * the moment of the copy, so a reader (lockdump, the future system call)
 * always sees busy <= elapsed.  blk_stats_print prints a table.
 *
 * Locks.  blk_queue (spin, one per disk): the queue, counters and
 * statistics; taken by threads and by completion in interrupt handlers,
 * held only for list and counter updates.  It is class-order row 4 (a
 * list lock); wakeup (sleepq, row 5) is called after releasing it, except
 * in the service thread's sleep, which takes the sleepq bucket before
 * dropping the queue lock so a submit cannot slip between its check and
 * its sleep.  Drivers' submit is called with no lock held, and drivers
 * call blk_complete holding none of their own locks (virtio completes
 * after dropping its virtqueue lock, ATA after releasing its channel);
 * since blk_complete takes only blk_queue and sleepq, a driver that did
 * hold a list-level lock would still keep the class order.
 * blk_registry (spin): appends to the disk table; readers use the count
 * (release/acquire) and need no lock, as disks are never removed.
 *
 * Waiting.  A requester sleeps on its bio's address: it takes the sleepq
 * bucket, checks done, and sleeps; blk_complete sets done and then calls
 * wakeup, so the wakeup cannot be lost.  blk_complete touches nothing of
 * the bio after setting done except its address as a wait channel (the
 * owner may already have reused the memory; a stray wakeup on that address
 * is harmless, since every sleeper re-checks its condition).
 */
#include <drivers/block/bio.h>
#include <kern/arch/panic.h>
#include <kern/lib/errno.h>
#include <kern/lock/sleep.h>
#include <kern/sched/thread.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/arch/arch.h>
#include <drivers/platform/timer.h>

LOCK_CLASS(blk_queue_class, "blk_queue", LK_SPIN);
LOCK_CLASS(blk_registry_class, "blk_registry", LK_SPIN);

static spinlock_t blk_registry = SPINLOCK_INIT(&blk_registry_class);
static struct blkdev *blk_devs[BLK_MAX_DEVS];   /* [blk_registry] append-only */
static int blk_ndevs;                           /* [blk_registry] written; read with acquire */

int blk_count(void)
{
    return __atomic_load_n(&blk_ndevs, __ATOMIC_ACQUIRE);
}

struct blkdev *blk_get(int i)
{
    return i >= 0 && i < blk_count() ? blk_devs[i] : NULL;
}

struct blkdev *blk_find(const char *name)
{
    if (!name)
        return NULL;
    int n = blk_count();
    for (int i = 0; i < n; i++)
        if (strcmp(blk_devs[i]->name, name) == 0)
            return blk_devs[i];
    return NULL;
}

int blk_claim(struct blkdev *d, const char *owner)
{
    const char *none = NULL;
    if (!__atomic_compare_exchange_n(&d->claimed_by, &none, owner, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return -EBUSY;
    return 0;
}

void blk_unclaim(struct blkdev *d)
{
    __atomic_store_n(&d->claimed_by, NULL, __ATOMIC_RELEASE);
}

/* C-SCAN order of a against b for the current head position. */
static bool before(const struct blkdev *d, const struct bio *a, const struct bio *b)
{
    bool a_behind = a->blkno < d->head_pos, b_behind = b->blkno < d->head_pos;
    if (a_behind != b_behind)
        return !a_behind;
    return a->blkno < b->blkno;
}

static void service(void *arg)
{
    struct blkdev *d = arg;
    for (;;) {
        spin_lock(&d->qlock);
        while (d->paused || !d->queue || d->inflight >= d->max_inflight) {
            struct sleepq *sq = sleepq_lock(&d->qlen);
            spin_unlock(&d->qlock);
            sleep_locked(sq, &d->qlen);
            spin_lock(&d->qlock);
        }
        struct bio *b = d->queue;
        d->queue = b->next;
        b->next = NULL;
        d->qlen--;
        d->head_pos = b->blkno;
        b->seq = d->dispatch_seq++;
        b->dispatch_tsc = rdtsc();
        if (d->inflight++ == 0)
            d->busy_since = b->dispatch_tsc;
        spin_unlock(&d->qlock);
        int e = d->ops->submit(d, b);
        if (e < 0)
            blk_complete(b, e);
    }
}

int blk_register(struct blkdev *d)
{
    if (!d || !d->ops || !d->ops->submit || (d->bsize != 512 && d->bsize != 1024) || d->nblocks == 0)
        return -EINVAL;
    if (d->name[0] == '\0' || strnlen(d->name, BLK_NAME_MAX) == BLK_NAME_MAX)
        return -EINVAL;
    if (d->max_blocks == 0)
        d->max_blocks = 128;
    if (d->max_inflight == 0)
        d->max_inflight = 1;
    spin_lock(&blk_registry);
    if (blk_ndevs >= BLK_MAX_DEVS || blk_find(d->name)) {
        bool full = blk_ndevs >= BLK_MAX_DEVS;
        spin_unlock(&blk_registry);
        kprintf("blk: cannot register %s (%s)\n", d->name, full ? "table full" : "name taken");
        return full ? -ENOSPC : -EEXIST;
    }
    /* Not yet visible to anyone: set up, then publish. */
    spin_init_named(&d->qlock, &blk_queue_class, d->name);
    d->queue = NULL;
    d->qlen = d->inflight = 0;
    d->head_pos = 0;
    d->dispatch_seq = 0;
    d->paused = false;
    d->svc = NULL;
    memset(&d->st, 0, sizeof d->st);
    d->start_tsc = d->qlen_changed = rdtsc();
    blk_devs[blk_ndevs] = d;
    __atomic_store_n(&blk_ndevs, blk_ndevs + 1, __ATOMIC_RELEASE);
    spin_unlock(&blk_registry);
    char tname[THREAD_NAME_MAX];
    snprintf(tname, sizeof tname, "blk_%s", d->name);
    struct thread *t = thread_create(tname, service, d, AFFINITY_ALL);
    if (!t)
        kprintf("blk: %s: no memory for a service thread; requests will fail\n", d->name);
    __atomic_store_n(&d->svc, t, __ATOMIC_RELEASE);
    kprintf("blk: %s: %lu blocks of %u bytes (%lu KiB)\n", d->name, d->nblocks, d->bsize,
            d->nblocks * d->bsize / 1024);
    return 0;
}

/* With d->qlock held: the queue length (waiting + in flight) is about to
 * change at time now; add the time it spent at its current value. */
static void qlen_account(struct blkdev *d, uint64_t now)
{
    if (now > d->qlen_changed) {
        d->st.qlen_tsc += (uint64_t)(d->qlen + d->inflight) * (now - d->qlen_changed);
        d->qlen_changed = now;
    }
}

int blk_submit(struct bio *b)
{
    struct blkdev *d = b ? b->dev : NULL;
    if (!d || !b->buf || b->count == 0 || b->count > d->max_blocks)
        return -EINVAL;
    if (b->blkno >= d->nblocks || b->count > d->nblocks - b->blkno)
        return -ENXIO;
    if (!__atomic_load_n(&d->svc, __ATOMIC_ACQUIRE))
        return -EIO;
    b->done = 0;
    b->error = 0;
    b->next = NULL;
    spin_lock(&d->qlock);
    b->queued_tsc = rdtsc();
    qlen_account(d, b->queued_tsc);
    struct bio **pp = &d->queue;
    while (*pp && !before(d, b, *pp))
        pp = &(*pp)->next;
    b->next = *pp;
    *pp = b;
    d->qlen++;
    uint64_t len = d->qlen + d->inflight;
    d->st.qlen_sum += len;
    d->st.qlen_samples++;
    if (len > d->st.qlen_max)
        d->st.qlen_max = len;
    bool kick = !d->paused && d->inflight < d->max_inflight;
    spin_unlock(&d->qlock);
    if (kick)
        wakeup(&d->qlen);
    return 0;
}

void blk_complete(struct bio *b, int error)
{
    struct blkdev *d = b->dev;
    b->error = error;
    spin_lock(&d->qlock);
    uint64_t now = rdtsc();
    qlen_account(d, now);
    /* The stamps may come from different CPUs: never let a TSC skew
     * between them wrap a sum. */
    d->st.wait_tsc += b->dispatch_tsc > b->queued_tsc ? b->dispatch_tsc - b->queued_tsc : 0;
    d->st.service_tsc += now > b->dispatch_tsc ? now - b->dispatch_tsc : 0;
    d->st.ops++;
    if (b->write)
        d->st.writes++;
    else
        d->st.reads++;
    if (error)
        d->st.errors++;
    else
        d->st.blocks += b->count;
    if (!error && !b->write)
        d->st.read_blocks += b->count;
    if (!b->write)
        d->st.read_tsc += now > b->queued_tsc ? now - b->queued_tsc : 0;
    else
        d->st.write_tsc += now > b->queued_tsc ? now - b->queued_tsc : 0;
    if (d->inflight > 0 && --d->inflight == 0 && now > d->busy_since)
        d->st.busy_tsc += now - d->busy_since;
    bool kick = d->queue && !d->paused;
    spin_unlock(&d->qlock);
    if (kick)
        wakeup(&d->qlen);
    if (b->done_fn)
        b->done_fn(b);
    __atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
    wakeup(b);
}

int blk_wait(struct bio *b)
{
    for (;;) {
        struct sleepq *sq = sleepq_lock(b);
        if (__atomic_load_n(&b->done, __ATOMIC_ACQUIRE)) {
            sleepq_unlock(sq);
            return b->error;
        }
        sleep_locked(sq, b);
    }
}

int blk_rw(struct blkdev *d, uint64_t blkno, uint32_t count, void *buf, bool write)
{
    if (!d || !buf)
        return -EINVAL;
    char *p = buf;
    while (count > 0) {
        uint32_t n = MIN(count, d->max_blocks);
        struct bio b;
        memset(&b, 0, sizeof b);
        b.dev = d;
        b.blkno = blkno;
        b.count = n;
        b.buf = p;
        b.write = write;
        int e = blk_submit(&b);
        if (e == 0)
            e = blk_wait(&b);
        if (e < 0)
            return e;
        blkno += n;
        count -= n;
        p += (size_t)n * d->bsize;
    }
    return 0;
}

void blk_dump_busy(void)
{
    int n = __atomic_load_n(&blk_ndevs, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        struct blkdev *d = blk_devs[i];
        if (!d->qlen && !d->inflight)
            continue;
        kprintf("disk %s: %u queued, %u in flight%s", d->name, d->qlen, d->inflight,
                d->paused ? ", paused" : "");
        for (struct bio *b = d->queue; b; b = b->next)
            kprintf(" [q %s %lu+%u]", b->write ? "w" : "r", b->blkno, b->count);
        kprintf("\n");
        if (d->ops->dump)
            d->ops->dump(d);
    }
}

void blk_pause(struct blkdev *d)
{
    spin_lock(&d->qlock);
    d->paused = true;
    spin_unlock(&d->qlock);
}

void blk_resume(struct blkdev *d)
{
    spin_lock(&d->qlock);
    d->paused = false;
    spin_unlock(&d->qlock);
    wakeup(&d->qlen);
}

void blk_stats_get(struct blkdev *d, struct blk_stats *out)
{
    spin_lock(&d->qlock);
    uint64_t now = rdtsc();
    qlen_account(d, now);
    *out = d->st;
    if (d->inflight && now > d->busy_since)
        out->busy_tsc += now - d->busy_since;
    out->elapsed_tsc = now - d->start_tsc;
    spin_unlock(&d->qlock);
}

int blk_stats_lookup(const char *name, struct blk_stats *out)
{
    if (!name || !out)
        return -EINVAL;
    struct blkdev *d = blk_find(name);
    if (!d)
        return -ENXIO;
    blk_stats_get(d, out);
    return 0;
}

void blk_stats_reset(void)
{
    int n = blk_count();
    for (int i = 0; i < n; i++) {
        struct blkdev *d = blk_devs[i];
        spin_lock(&d->qlock);
        uint64_t now = rdtsc();
        memset(&d->st, 0, sizeof d->st);
        d->start_tsc = d->qlen_changed = now;
        if (d->inflight)
            d->busy_since = now;
        spin_unlock(&d->qlock);
    }
}

long blk_stats_snapshot(void *buf, size_t len, size_t *needed)
{
    uint32_t n = (uint32_t)blk_count();
    size_t need = sizeof(struct blkstat_snapshot_hdr) + n * sizeof(struct blkstat_rec);
    if (needed)
        *needed = need;
    if (!buf || len < need)
        return -ENOSPC;
    struct blkstat_snapshot_hdr *h = buf;
    *h = (struct blkstat_snapshot_hdr){ .version = BLKSTAT_VERSION, .ndisks = n, .tsc_hz = tsc_hz };
    struct blkstat_rec *r = (void *)(h + 1);
    for (uint32_t i = 0; i < n; i++, r++) {
        struct blk_stats st;
        blk_stats_get(blk_devs[i], &st);
        memset(r, 0, sizeof *r);
        strlcpy(r->name, blk_devs[i]->name, sizeof r->name);
        r->ops = st.ops;
        r->reads = st.reads;
        r->writes = st.writes;
        r->blocks = st.blocks;
        r->errors = st.errors;
        r->qlen_sum = st.qlen_sum;
        r->qlen_samples = st.qlen_samples;
        r->qlen_max = st.qlen_max;
        r->busy_tsc = st.busy_tsc;
        r->qlen_tsc = st.qlen_tsc;
        r->wait_tsc = st.wait_tsc;
        r->service_tsc = st.service_tsc;
        r->elapsed_tsc = st.elapsed_tsc;
    }
    return (long)need;
}

/* a * scale / b without overflow (0 when b is 0): both are halved until
 * the product fits, which costs only low-order precision. */
static uint64_t scaled_ratio(uint64_t a, uint64_t b, uint64_t scale)
{
    while (b && a > ~0ull / scale) {
        a >>= 1;
        b >>= 1;
    }
    return b ? a * scale / b : 0;
}

static uint64_t cycles_to_us(uint64_t c)
{
    uint64_t per_us = tsc_hz / 1000000;
    return per_us ? c / per_us : 0;
}

void blk_stats_print(void)
{
    int n = blk_count();
    kprintf("blkstat: %-6s %9s %9s %9s %10s %5s %7s %7s %5s %7s %10s %9s %9s\n", "disk", "ops",
            "reads", "writes", "blocks", "err", "avgq", "arrq", "maxq", "busy%", "busy_us",
            "wait_us", "svc_us");
    for (int i = 0; i < n; i++) {
        struct blkdev *d = blk_devs[i];
        struct blk_stats s;
        blk_stats_get(d, &s);
        uint64_t avgq = scaled_ratio(s.qlen_tsc, s.elapsed_tsc, 100);     /* time average */
        uint64_t arrq = scaled_ratio(s.qlen_sum, s.qlen_samples, 100);    /* seen by arrivals */
        uint64_t busy = scaled_ratio(s.busy_tsc, s.elapsed_tsc, 10000);   /* percent, 2 decimals */
        kprintf("blkstat: %-6s %9lu %9lu %9lu %10lu %5lu %4lu.%02lu %4lu.%02lu %5lu %4lu.%02lu %10lu %9lu %9lu\n",
                d->name, s.ops, s.reads, s.writes, s.blocks, s.errors, avgq / 100, avgq % 100,
                arrq / 100, arrq % 100, s.qlen_max, busy / 100, busy % 100,
                cycles_to_us(s.busy_tsc), s.ops ? cycles_to_us(s.wait_tsc / s.ops) : 0,
                s.ops ? cycles_to_us(s.service_tsc / s.ops) : 0);
    }
}

void blk_init(void)
{
    panic_register_hang_dump(HANG_DUMP_DISKS, blk_dump_busy);
    extern const struct blk_driver __blkdriver_start[], __blkdriver_end[];
    char line[160];
    int len = snprintf(line, sizeof line, "blk:");
    for (const struct blk_driver *d = __blkdriver_start; d < __blkdriver_end; d++) {
        int n = d->probe();
        if ((size_t)len < sizeof line)
            len += snprintf(line + len, sizeof line - (size_t)len, "%s %d %s",
                            d == __blkdriver_start ? "" : ",", n, d->name);
    }
    kprintf("%s\n", line);
}
