/*
 * The buffer cache: blocks of a disk kept in memory, for file-system
 * metadata (superblocks, inode blocks, directory and indirect blocks).
 * File data of a file system with the page operations (S5) lives in the
 * page cache instead, moved by segmap (kern/vm/segmap.c); a file system
 * without them (until it adopts them) still reads data here.  Theory and
 * the three locking models (cache=single|hashfree|ssac, seed 001 Figures
 * 3, 2 and 4) in kern/vfs/buf.c.
 *
 * Lock key for struct buf:
 *   [B]  the buffer's busy resource lock (B_BUSY): owned by the thread that
 *        got it from getblk/bread until brelse/bwrite/bdwrite/bawrite.
 *        Held across disk I/O.
 *   [H]  the lock that covers the buffer's hash chain for the running
 *        model: the single cache lock (single), the hash-queue lock
 *        (hashfree), or the row group's lock (ssac)
 *   [F]  the lock that covers the free list the buffer is on: the single
 *        lock, the free-list lock, or the row group's lock
 *   [E]  hashfree only: the element lock (field changes while not busy);
 *        under the other models the same as [H]
 *   [c]  constant after boot
 */
#ifndef KERN_VFS_BUF_H
#define KERN_VFS_BUF_H

#include <kern/lib/types.h>
#include <kern/lib/errno.h>

struct blkdev;

/* b_flags */
#define B_BUSY      0x001   /* owned; others wait (the resource lock) */
#define B_DONE      0x002   /* contents valid */
#define B_ERROR     0x004   /* I/O failed; b_error holds the errno */
#define B_DELWRI    0x008   /* modified; write before reuse */
#define B_STALE     0x010   /* contents no longer wanted: reuse first */
#define B_WANTED    0x020   /* someone sleeps for it */
#define B_ASYNC     0x040   /* release when the write completes */

#define BUF_MAX_SIZE 4096   /* largest block the cache holds */

struct buf {
    /* [E] B_BUSY set and cleared under [E]; the other bits by the owner
     * -- but only ever by buf.c's atomic operations, never a plain "|=":
     * a waiter sets B_WANTED concurrently (under [E], which the owner does
     * not hold), and a plain read-modify-write by the owner would erase
     * it, so the release would wake nobody and the waiter would sleep on
     * a free buffer forever.  Outside buf.c, read only. */
    uint32_t b_flags;
    struct blkdev *b_dev;       /* [H] identity: disk ... */
    uint64_t b_blkno;           /* [H] ... block number in units of b_size ... */
    uint32_t b_size;            /* [H] ... and block size in bytes */
    void *b_data;               /* [B] BUF_MAX_SIZE bytes; NULL once buf_shrink took its page (only
                                 * while free: a busy buffer always has one) */
    int b_error;                /* [B] negative errno after B_ERROR */
    struct buf *b_hnext, *b_hprev;  /* [H] hash chain */
    struct buf *b_fnext, *b_fprev;  /* [F] free list (when not busy) */
    uint32_t b_row;             /* [c] ssac: the hash row group it is bound to */
    void *b_lock;               /* [c] hashfree: its element lock */
};

/* Boot: allocate nbuf buffers (0: a default from memory size) and build
 * the structure for opts.cache. */
void binit(int nbuf);
/* Buffers in the cache (each of one page), for /proc/meminfo. */
int buf_count(void);
/* Buffers that hold a data page now (buf_shrink gives pages back). */
int buf_data_count(void);
void buf_note_data_pages(int n);
/* Memory is short: free the data pages of up to want clean, unused
 * buffers, least recently used first, keeping a quarter of the buffers
 * with pages.  How many it freed.  No lock held. */
uint64_t buf_shrink(uint64_t want);

/*
 * Get the buffer for (dev, blkno, size), busy, valid or not (B_DONE tells).
 * Sleeps while another thread has it busy.  Never fails: when every
 * buffer that could be reused is busy it waits for one.
 */
struct buf *getblk(struct blkdev *dev, uint64_t blkno, uint32_t size);
/* getblk, then read it from disk if not valid.  Returns the busy buffer,
 * or NULL with *err set (-EIO; -EINVAL past the end of the disk) and the
 * buffer released. */
struct buf *bread(struct blkdev *dev, uint64_t blkno, uint32_t size, int *err);
/* Release a busy buffer (keep its contents for later hits). */
void brelse(struct buf *bp);
/* Write synchronously and release; returns 0 or a negative errno. */
int bwrite(struct buf *bp);
/* Mark modified and release; written before reuse or by bflush. */
void bdwrite(struct buf *bp);
/* Start the write and release when it finishes. */
void bawrite(struct buf *bp);
/* Zero the buffer's contents. */
void clrbuf(struct buf *bp);
/* Write every delayed-write buffer of dev (all disks when NULL); waits. */
int bflush(struct blkdev *dev);
/* As bflush, and also waits for buffers other threads hold busy and
 * writes them if they come back delayed: what fsync needs, so that a
 * change already made is on disk even if its block is in use again.  The
 * caller must hold no buffer. */
int bflush_held(struct blkdev *dev);
/* For the hang dump (panic_hung): every busy buffer and its owner.  No lock. */
void buf_dump_busy(void);
/* Forget every buffer of dev (unmount): flushes first; -EBUSY if any busy. */
int binval(struct blkdev *dev);
/* Forget the buffer of (dev, blkno, size), if cached: its contents (even a
 * delayed write) are dropped.  For a block that becomes file data, which
 * the page cache writes to the disk itself: a stale buffer of its old
 * life as metadata must not be written over it later.  May sleep. */
void bforget(struct blkdev *dev, uint64_t blkno, uint32_t size);

/* Counters for kbench=fs and the tests. */
struct buf_stats {
    uint64_t lookups, hits, misses, writes, waits;
};
void buf_stats_get(struct buf_stats *out);

#endif
