/*
 * The block-device layer: a registry of disks, a sorted (C-SCAN) request
 * queue per disk served by a per-disk thread, and per-disk statistics.
 * Theory in drivers/block/bio.c.
 *
 * Lock key:
 *   [c]  constant after blk_register
 *   [q]  the disk's queue lock (blkdev.qlock, class blk_queue, spin)
 *   [o]  the submitter owns it until completion; the layer and the driver
 *        own it from blk_submit until done is set
 *   [a]  atomic operations
 *   [d]  the driver's while the request is in flight (dispatch .. completion)
 */
#ifndef KERN_BIO_H
#define KERN_BIO_H

#include <kern/lib/types.h>
#include <kern/abi/tempest_abi.h>
#include <kern/lock/spinlock.h>

/* Negative errno values (kern/lib/errno.h) returned by this layer and the
 * disk drivers: -EINVAL a malformed request, -ENXIO one past the end of the
 * disk, -EIO the device failed it. */
#include <kern/lib/errno.h>

#define BLK_NAME_MAX 16
#define BLK_MAX_DEVS 32

struct blkdev;
struct bio;

struct blkdev_ops {
    /* Start one request.  Called from the disk's service thread with no
     * lock held (it may block briefly, e.g. polled ATA).  The driver
     * finishes it later, from any context including an interrupt handler,
     * with blk_complete(); or it returns a negative errno at once and the
     * layer completes the bio with that error. */
    int (*submit)(struct blkdev *d, struct bio *b);
    /* Optional, for the hang dump (panic path, other CPUs stopped, no
     * locks): print the driver's view of its requests on one line. */
    void (*dump)(struct blkdev *d);
};

/* Per-disk statistics.  Plain fixed-width counters, so a copy from
 * blk_stats_get can go to user space as it is (the future disk-statistics
 * system call).  Times are TSC cycles; tsc_hz converts them. */
struct blk_stats {
    uint64_t ops;               /* [q] requests completed */
    uint64_t reads, writes;     /* [q] of which reads / writes */
    uint64_t blocks;            /* [q] logical blocks transferred */
    uint64_t errors;            /* [q] requests completed with an error */
    uint64_t qlen_sum;          /* [q] sum of queue-length samples (one per enqueue) */
    uint64_t qlen_samples;      /* [q] number of samples */
    uint64_t qlen_max;          /* [q] longest queue seen (waiting + in flight) */
    uint64_t busy_tsc;          /* [q] TSC cycles with at least one request in flight */
    /* Added after the first draft (new fields go at the end): */
    uint64_t qlen_tsc;          /* [q] integral of (waiting + in flight) over time:
                                 * time-averaged queue length = qlen_tsc / elapsed_tsc */
    uint64_t wait_tsc;          /* [q] summed queue wait of completed requests (submit -> dispatch) */
    uint64_t service_tsc;       /* [q] summed service time (dispatch -> completion) */
    uint64_t elapsed_tsc;       /* filled by blk_stats_get: cycles since the disk registered */
    /* For /proc/diskstats, which splits reads from writes: */
    uint64_t read_blocks;       /* [q] of blocks, those read */
    uint64_t read_tsc, write_tsc;   /* [q] summed submit -> completion time of reads, writes */
};

struct blkdev {
    char name[BLK_NAME_MAX];    /* [c] "ram0", "vda", "ata0"... */
    uint32_t bsize;             /* [c] logical block size: 512 or 1024 */
    uint64_t nblocks;           /* [c] size in logical blocks */
    uint32_t max_blocks;        /* [c] largest request the driver takes */
    uint32_t max_inflight;      /* [c] requests the driver accepts at once */
    const struct blkdev_ops *ops;   /* [c] */
    void *priv;                 /* [c] driver data */

    spinlock_t qlock;           /* protects the [q] fields */
    struct bio *queue;          /* [q] waiting requests in C-SCAN order */
    uint32_t qlen;              /* [q] requests waiting */
    uint32_t inflight;          /* [q] requests handed to the driver */
    uint64_t head_pos;          /* [q] blkno of the last request dispatched */
    uint64_t dispatch_seq;      /* [q] numbers the requests as they are dispatched */
    bool paused;                /* [q] service thread holds off dispatching (tests) */
    uint64_t busy_since;        /* [q] TSC when inflight went 0 -> 1 */
    struct blk_stats st;        /* [q] */
    struct thread *svc;         /* [a] the service thread (sleeps on &qlen); set once just
                                 * after registration; NULL: requests fail with -EIO */
    uint64_t start_tsc;         /* [c] TSC at registration */
    uint64_t qlen_changed;      /* [q] TSC of the last change of qlen + inflight */
    const char *claimed_by;     /* [a] who holds the disk exclusively (a mounted file
                                 * system), or NULL; see blk_claim */
};

struct bio {
    struct blkdev *dev;         /* [o] */
    uint64_t blkno;             /* [o] first logical block */
    uint32_t count;             /* [o] logical blocks (<= dev->max_blocks) */
    void *buf;                  /* [o] count * bsize bytes, kernel virtual */
    bool write;                 /* [o] */
    volatile int done;          /* [a] set by blk_complete; then the layer is done with it */
    int error;                  /* [d] 0 or a negative errno; the owner's once done */
    uint64_t seq;               /* [q] order of dispatch (set when dispatched) */
    void (*done_fn)(struct bio *);  /* [o] optional: called at completion (any context) */
    void *priv;                 /* [o] caller's */
    struct bio *next;           /* [q] queue link */
    void *drv;                  /* [d] */
    uint64_t queued_tsc;        /* [q] TSC at blk_submit (statistics) */
    uint64_t dispatch_tsc;      /* [q] TSC when handed to the driver (statistics) */
};

/* Register a disk (fields [c] filled, ops set).  Starts its service thread.
 * Returns 0, or -EINVAL (bad geometry or no ops), -EEXIST (name taken),
 * -ENOSPC (registry full). */
int blk_register(struct blkdev *d);
/* The disk of that name ("vda", "ata0", "ram0"), or NULL (also for NULL). */
struct blkdev *blk_find(const char *name);
/* Take the disk for exclusive use by owner (a string naming it, e.g. "s5"):
 * a mounted file system claims its disk so that a second mount, or a test
 * that writes raw blocks, keeps off.  Returns 0, or -EBUSY if already
 * claimed.  blk_unclaim gives it back. */
int blk_claim(struct blkdev *d, const char *owner);
void blk_unclaim(struct blkdev *d);
static inline bool blk_claimed(const struct blkdev *d)
{
    return __atomic_load_n(&d->claimed_by, __ATOMIC_ACQUIRE) != NULL;
}
/* Disks registered so far, and the i-th in registration order (NULL out of
 * range).  Registration order is deterministic: virtio disks in PCI order
 * (the order they were attached in), then ATA, then ram0. */
int blk_count(void);
struct blkdev *blk_get(int i);

/* Asynchronous: queue b (dev, blkno, count, buf, write filled in).  The
 * bio completes later (done set, done_fn called, sleepers on b woken).
 * Returns 0 or a negative errno (then b is not queued). */
int blk_submit(struct bio *b);
/* Sleep until b is done; returns b->error. */
int blk_wait(struct bio *b);
/* Synchronous read or write of count blocks at blkno (split as needed). */
int blk_rw(struct blkdev *d, uint64_t blkno, uint32_t count, void *buf, bool write);

/* Driver: request b finished with error (0 or negative errno). */
void blk_complete(struct bio *b, int error);

/* Tests: hold the queue (requests accumulate, sorted) and let it go. */
void blk_pause(struct blkdev *d);
void blk_resume(struct blkdev *d);

/* Copy a disk's statistics consistently (one snapshot under the queue
 * lock, busy and queue time brought up to now, elapsed_tsc filled). */
void blk_stats_get(struct blkdev *d, struct blk_stats *out);
/* The same by name, for the system call: 0, or -ENXIO (no such disk) /
 * -EINVAL (NULL argument). */
int blk_stats_lookup(const char *name, struct blk_stats *out);
/* Zero every disk's statistics (the lockstat reset system call). */
void blk_stats_reset(void);
/* The disks' statistics for the system call (records in
 * kern/abi/tempest_abi.h): the bytes written, or -ENOSPC with *needed set
 * when len is too small, in which case nothing is written.  A disk that
 * registers between two calls can make the second one need more. */
long blk_stats_snapshot(void *buf, size_t len, size_t *needed);
/* A header and one "blkstat:" line per disk (printed by lockdump). */
void blk_stats_print(void);

/* Boot: run every disk driver's probe (after pci_scan), and print
 * "blk: N virtio, N ata, N ram".  Call after the scheduler and the APs are
 * up (interrupts get routed to online CPUs, and each disk starts a
 * thread). */
void blk_init(void);

/*
 * Disk drivers register themselves: BLK_DRIVER(ORDER, "name", probe) puts
 * an entry in the table blk_init walks, in ascending two-digit ORDER, so
 * the block layer names no driver.  probe finds the driver's disks,
 * registers each (blk_register) and returns how many.
 */
struct blk_driver {
    const char *name;
    int (*probe)(void);
};
#define BLK_DRIVER(order, dname, fn)                                            \
    static const struct blk_driver blk_driver_##fn                              \
        __attribute__((section(".blkdrivers." #order), used, aligned(8))) = { dname, fn }

/* A RAM disk of mib MiB with the given block size; NULL on failure. */
struct blkdev *ramdisk_create(const char *name, uint32_t mib, uint32_t bsize);

/* For the hang dump (panic_hung): every disk with requests queued or in
 * flight, with the driver's view.  Takes no lock. */
void blk_dump_busy(void);

#endif
