/*
 * The buffer cache (SVR4 getblk/bread/brelse/bwrite/bdwrite/bawrite), with
 * the three locking models of seed 001 chosen at boot by cache=.
 *
 * Theory.  A buffer holds one block of one disk: its identity is (dev,
 * blkno, size), blkno counted in units of size.  Buffers are found through
 * hash rows (chains of buffers whose identities hash to the row) and are
 * reused from a free list kept in least-recently-used order.  B_BUSY is a
 * resource lock (seed 001, "Locking Model"): getblk hands a buffer out
 * busy, its owner keeps it across disk I/O and sleeps, and a thread that
 * finds it busy sets B_WANTED and sleeps on the buffer until brelse wakes
 * it (one waiter with wakeup=one, wake1proc; all with wakeup=all).  A
 * buffer is on its group's free list exactly when it is not busy.
 *
 * getblk: look in the row.  Hit, not busy: take it off the free list, mark
 * it busy.  Hit, busy: wait, then look again (its identity may have
 * changed meanwhile).  Miss: take the head of the free list (the least
 * recently used buffer); if it holds a delayed write, start that write
 * (the completion releases it) and look again; otherwise move it from its
 * old row to the new one and return it busy and not valid (B_DONE clear).
 * brelse puts a buffer at the tail of the free list (or the head when its
 * contents are useless: B_STALE or B_ERROR, which also unhash it).
 *
 * Only the locks differ between the models; the code above is written once
 * and asks for "the lock of hash row r" (H), "the lock of free list g" (F)
 * and "the lock of buffer bp" (E) through pointers resolved at binit, then
 * takes them through a lockset (kern/vfs/ssac.h) that skips a lock it
 * already holds in another role:
 *
 *   single   (Figure 3)  H = F = E = one spin lock (class buf_single) over
 *                        every hash chain and the one free list.
 *   hashfree (Figure 2)  H = a spin lock per hash row (buf_hash), F = the
 *                        one free list's lock (buf_free), E = a lock per
 *                        buffer (buf_elem).  Every lookup takes the free
 *                        list lock, which is why this model stops scaling
 *                        (Encore's finding, repeated by seed 001).
 *   ssac     (Figure 4, with the paper's shared free lists)  the rows are
 *                        bound at binit to G row groups; each group has
 *                        one spin lock (buf_group) covering its rows'
 *                        chains, its own free list and its buffers, so
 *                        H = F = E = the group lock.  A miss reuses a
 *                        buffer of the SAME group, so a buffer moves only
 *                        between rows of its group.
 *
 * Why groups and not 4 buffers per row.  Seed 001 found that an SSAC with
 * a free list of ~4 buffers per hash row deadlocks: operations that hold
 * two or more buffers at once can use up every buffer of one small free
 * list and then wait for that list forever.  Sharing one free list among
 * the rows of a group makes each list large: binit aims at 64 buffers per
 * group (1024 buffers: 256 rows in 16 groups, of 16 rows each), so the
 * deadlock needs 64 simultaneous holders in one group, while 16 group
 * locks still split the contention 16 ways (more ways than the 16 CPUs of
 * the largest preset).
 *
 * Hash.  cache_hash (kern/vfs/ssac.h) multiplies (dev, blkno) by a 64-bit
 * odd constant and keeps the top bits, so blocks numbered in strides of 8
 * (4 KiB blocks in 512-byte sectors), which "tag & (2^n - 1)" would send
 * to every 8th row, spread over all 2^n rows; rows are 2^n (about 4 buffers
 * per row, the paper's traditional chain length).
 *
 * Lock type.  Spin locks, for three reasons: the critical sections are a
 * few list operations; the release of an asynchronous write runs in the
 * disk's completion context, which may be an interrupt handler, where only
 * spin locks may be taken; and a buffer cache lock must not be released
 * behind the code's back by a context switch (an SVR4 mutex would be) in
 * the middle of moving a buffer between lists.  No spin lock is ever held
 * across a sleep: a waiter takes the sleep queue of its channel, drops the
 * cache locks, and sleeps (sleep_locked), so the waker, who changes the
 * state under the cache lock and then wakes, cannot slip in between.
 *
 * Lock order (class order row 4, before sleepq): H -> F -> E.  A hit takes
 * H(row), F, E(bp); brelse takes F, E (and first H when it unhashes).
 * Deadlock avoidance under hashfree, where a miss needs TWO row locks (the
 * new row, held, and the old row of the reused buffer): the victim is
 * first made busy (so its identity is ours and cannot change), F and E are
 * dropped, and the old row lock is only TRIED while holding the new one.
 * A try never waits, so two misses moving buffers in opposite directions
 * cannot deadlock.  If the try fails the miss backs off: it drops the new
 * row, releases the victim as stale (brelse unhashes it under its old row
 * lock alone) and starts over; the next attempt usually takes the same,
 * now unhashed, buffer and needs one row lock.  (Two locks of class
 * buf_hash are never both waited for, which is also why witness, which
 * learns orders even from a TryLock, sees no cycle.)
 *
 * Wake-ups.  With wakeup=one a release wakes one waiter and leaves B_WANTED
 * set (others may sleep); it is cleared when a wake1proc finds nobody.  A
 * woken waiter that finds the buffer free but no longer the block it
 * wanted passes the wake-up on (seed 001: the woken process "must do
 * another wake1proc"), or the others would sleep on a free buffer.
 * Threads waiting for an empty free list are counted (nwant, under F) and
 * woken by releases to that list.
 *
 * Asynchronous writes (bawrite, and delayed writes of reused buffers) use
 * the bio embedded in the buffer; its completion (write_done) releases the
 * buffer.  blk_complete calls that completion BEFORE it marks the bio done,
 * so before the embedded bio is used again start_async_write waits
 * (blk_wait) until the previous request on it is entirely finished.
 *
 * Sizes.  A buffer holds up to BUF_MAX_SIZE bytes; size must be a multiple
 * of the disk's logical block size.  The size is part of the identity, but
 * the cache does not detect overlapping blocks of different sizes: use one
 * block size per disk at a time, and binval the disk before switching.
 *
 * Errors.  bread of a block past the end of the disk (or with a bad size)
 * returns NULL with -EINVAL and touches no buffer; a failed read or write
 * sets B_ERROR, b_error = -EIO, and the release forgets the buffer so the
 * next bread tries the disk again.  A failed delayed or asynchronous write
 * is reported on the console (its data is lost).  getblk itself never
 * fails; a NULL disk or an impossible size is a kernel bug and panics.
 *
 * Giving memory back.  Under memory pressure the pageout daemons
 * (kern/vm/pcache_reclaim.c) call buf_shrink: it takes clean free
 * buffers from the heads of the free lists (least recently used first),
 * makes each busy (so its identity is ours), frees its data page and
 * releases it stale, unhashed at the head of its list, with b_data NULL.
 * At least a quarter of the buffers keep their pages (the floor), so
 * metadata I/O always has buffers to work with.  A miss that reuses a
 * buffer with no page gives it one (reuse_victim, under the cache's spin
 * locks: the page allocator's lock comes after them, row 4); when memory
 * is out, the buffer goes to the tail of its list and the miss starts
 * over after a reclaim of clean file pages, so it takes a buffer that
 * has a page.  bc_data_pages counts the buffers with a page (atomic;
 * /proc/meminfo's Buffers).
 *
 * Files.  This file is the cache at work: lookup, reuse, release,
 * waiting, disk I/O, flushing and the hang dump.  Boot (how many buffers,
 * their memory, the rows, groups and locks of the chosen model) and the
 * statistics are kern/vfs/buf_init.c; the structures both see are in
 * kern/vfs/buf_impl.h, whose fields carry the lock keys of
 * kern/vfs/buf.h ([H], [F], [E], [B], [c]).
 */
#include <kern/vfs/buf.h>
#include <kern/vfs/buf_impl.h>
#include <kern/vfs/ssac.h>
#include <drivers/block/bio.h>
#include <kern/lock/sleep.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/arch/panic.h>
#include <kern/lib/options.h>
#include <kern/sched/thread.h>
#include <kern/vm/page.h>
#include <kern/vm/pcache.h>
#include <kern/arch/cpu.h>

#define NO_ROW 0xffffffffu
struct bcache bc;

/* ---- locks by role ---- */

static inline spinlock_t *row_lock(unsigned row)
{
    return bc.rows[row].lock;
}

static inline struct bgroup *group_of(struct buf *bp)
{
    return &bc.groups[BX(bp)->group];
}

static inline spinlock_t *elem_lock(struct buf *bp)
{
    return bp->b_lock;
}

/* ---- flags: every change is atomic, since the owner changes its bits
 * while other threads change B_WANTED under E ---- */

static inline void flag_set(struct buf *bp, uint32_t f)
{
    __atomic_or_fetch(&bp->b_flags, f, __ATOMIC_RELAXED);
}

static inline void flag_clear(struct buf *bp, uint32_t f)
{
    __atomic_and_fetch(&bp->b_flags, ~f, __ATOMIC_RELAXED);
}

static inline uint32_t flags_of(struct buf *bp)
{
    return __atomic_load_n(&bp->b_flags, __ATOMIC_RELAXED);
}

/* ---- hash rows and free lists (caller holds the covering lock) ---- */

static unsigned hash_row(struct blkdev *dev, uint64_t blkno)
{
    return cache_hash(blkno ^ (cache_ptr_tag(dev) << 20), bc.rowbits);
}

static bool same_block(struct buf *bp, struct blkdev *dev, uint64_t blkno, uint32_t size)
{
    return bp->b_dev == dev && bp->b_blkno == blkno && bp->b_size == size;
}

static struct buf *chain_find(unsigned row, struct blkdev *dev, uint64_t blkno, uint32_t size)
{
    ASSERT_HELD(row_lock(row));
    for (struct buf *bp = bc.rows[row].head; bp; bp = bp->b_hnext)
        if (same_block(bp, dev, blkno, size))
            return bp;
    return NULL;
}

static void chain_insert(unsigned row, struct buf *bp)
{
    struct brow *r = &bc.rows[row];
    ASSERT_HELD(r->lock);
    bp->b_hprev = NULL;
    bp->b_hnext = r->head;
    if (r->head)
        r->head->b_hprev = bp;
    r->head = bp;
    BX(bp)->row = row;
}

static void chain_remove(struct buf *bp)
{
    struct brow *r = &bc.rows[BX(bp)->row];
    ASSERT_HELD(r->lock);
    if (bp->b_hprev)
        bp->b_hprev->b_hnext = bp->b_hnext;
    else
        r->head = bp->b_hnext;
    if (bp->b_hnext)
        bp->b_hnext->b_hprev = bp->b_hprev;
    bp->b_hnext = bp->b_hprev = NULL;
    BX(bp)->row = NO_ROW;
}

/* Forget the identity of a buffer being unhashed or set up. */
static void clear_identity(struct buf *bp)
{
    bp->b_dev = NULL;
    bp->b_blkno = 0;
    bp->b_size = 0;
}

static void free_remove(struct bgroup *g, struct buf *bp)
{
    if (bp->b_fprev)
        bp->b_fprev->b_fnext = bp->b_fnext;
    else
        g->head = bp->b_fnext;
    if (bp->b_fnext)
        bp->b_fnext->b_fprev = bp->b_fprev;
    else
        g->tail = bp->b_fprev;
    bp->b_fnext = bp->b_fprev = NULL;
}

void free_insert(struct bgroup *g, struct buf *bp, bool at_head)
{
    if (at_head) {
        bp->b_fprev = NULL;
        bp->b_fnext = g->head;
        if (g->head)
            g->head->b_fprev = bp;
        else
            g->tail = bp;
        g->head = bp;
    } else {
        bp->b_fnext = NULL;
        bp->b_fprev = g->tail;
        if (g->tail)
            g->tail->b_fnext = bp;
        else
            g->head = bp;
        g->tail = bp;
    }
}

/* With F and E held: bp, which is free, becomes busy. */
static void take_free(struct buf *bp)
{
    free_remove(group_of(bp), bp);
    flag_set(bp, B_BUSY);
    BX(bp)->owner = curthread();
}

/* ---- the buffers' memory ---- */

static int64_t bc_data_pages;       /* [a] buffers that have a data page */

void buf_note_data_pages(int n)
{
    __atomic_add_fetch(&bc_data_pages, n, __ATOMIC_RELAXED);
}

int buf_data_count(void)
{
    return (int)__atomic_load_n(&bc_data_pages, __ATOMIC_RELAXED);
}

/* bp (busy, ours) has no data page: give it one.  False when memory is
 * out.  Spin locks may be held (the page allocator's come after them). */
static bool give_data(struct buf *bp)
{
    struct page *pg = page_alloc_node(0, this_cpu()->node);
    if (!pg)
        return false;
    bp->b_data = page_to_virt(pg);
    buf_note_data_pages(1);
    return true;
}

/* ---- sleeping and waking ---- */

/* Wake waiters of wakeup_mode for a channel; returns how many woke. */
static int wake_for_release(const void *chan)
{
    return opts.wakeup == WAKEUP_ONE ? wake1proc(chan) : wakeup(chan);
}

/* With E held: bp was released or forgotten; wake whoever waits for it. */
static void wake_buf_waiters(struct buf *bp)
{
    if (!(flags_of(bp) & B_WANTED))
        return;
    if (opts.wakeup == WAKEUP_ONE) {
        if (wake1proc(bp) == 0)
            flag_clear(bp, B_WANTED);
    } else {
        flag_clear(bp, B_WANTED);
        wakeup(bp);
    }
}

/* With F held: a buffer went onto g's list; wake threads waiting for one. */
static void wake_free_waiters(struct bgroup *g)
{
    if (g->nwant)
        g->nwant -= wake_for_release(&g->nwant);
}

/* With the locks of ls held, E among them: bp is busy.  Sleep until its
 * release; every lock of ls is dropped. */
static void wait_busy(struct lockset *ls, struct buf *bp)
{
    flag_set(bp, B_WANTED);
    pcpu_count(bc.stats, ST_WAITS);
    struct sleepq *sq = sleepq_lock(bp);
    ls_unlock_all(ls);
    sleep_locked(sq, bp);
}

/*
 * After waking from wait_busy under wakeup=one: if bp is free but not the
 * block this thread wants (want_dev NULL: it wants none), the wake-up was
 * meant for someone else too; pass it on.  Under E alone: a free buffer's
 * identity can only change after E makes it busy, so it is stable here.
 */
static void pass_wakeup_on(struct buf *bp, struct blkdev *want_dev, uint64_t blkno, uint32_t size)
{
    if (opts.wakeup != WAKEUP_ONE)
        return;
    struct lockset ls;
    ls_init(&ls);
    ls_lock(&ls, elem_lock(bp));
    uint32_t f = flags_of(bp);
    if (!(f & B_BUSY) && (f & B_WANTED) && !(want_dev && same_block(bp, want_dev, blkno, size)))
        wake_buf_waiters(bp);
    ls_unlock_all(&ls);
}

/* With H(row) and F(g) held: g has no free buffer; sleep until a release. */
static void wait_free(struct lockset *ls, struct bgroup *g)
{
    g->nwant++;
    pcpu_count(bc.stats, ST_WAITS);
    struct sleepq *sq = sleepq_lock(&g->nwant);
    ls_unlock_all(ls);
    sleep_locked(sq, &g->nwant);
}

/* ---- release ---- */

/*
 * Release busy bp: free again, at the tail of its free list, or, when its
 * contents are useless (B_STALE or B_ERROR), unhashed and at the head so
 * it is reused first.  Identity is stable: the caller owns bp.
 */
static void release(struct buf *bp)
{
    struct lockset ls;
    ls_init(&ls);
    bool forget = flags_of(bp) & (B_STALE | B_ERROR);
    if (forget && BX(bp)->row != NO_ROW)
        ls_lock(&ls, row_lock(BX(bp)->row));
    struct bgroup *g = group_of(bp);
    ls_lock(&ls, &g->lock);
    ls_lock(&ls, elem_lock(bp));
    if (forget) {
        if (BX(bp)->row != NO_ROW)
            chain_remove(bp);
        clear_identity(bp);
        flag_clear(bp, B_DONE | B_DELWRI);
    }
    free_insert(g, bp, forget);
    BX(bp)->owner = NULL;
    flag_clear(bp, B_BUSY | B_ASYNC);
    wake_buf_waiters(bp);
    wake_free_waiters(g);
    ls_unlock_all(&ls);
}

void brelse(struct buf *bp)
{
    if (!(flags_of(bp) & B_BUSY))
        panic("brelse: buffer %p (block %lu) is not busy", bp, bp->b_blkno);
    release(bp);
}

/* ---- disk I/O (the caller owns bp, and holds no spin lock) ---- */

static uint32_t sectors_of(struct buf *bp)
{
    return bp->b_size / bp->b_dev->bsize;
}

static bool size_ok(struct blkdev *dev, uint32_t size)
{
    return size > 0 && size <= BUF_MAX_SIZE && size % dev->bsize == 0;
}

static bool in_range(struct blkdev *dev, uint64_t blkno, uint32_t size)
{
    return blkno < dev->nblocks / (size / dev->bsize);
}

/* Synchronous read or write of bp: 0, -EINVAL past the end, or -EIO. */
static int buf_io(struct buf *bp, bool write)
{
    if (!in_range(bp->b_dev, bp->b_blkno, bp->b_size))
        return -EINVAL;
    uint32_t n = sectors_of(bp);
    if (write)
        pcpu_count(bc.stats, ST_WRITES);
    return blk_rw(bp->b_dev, bp->b_blkno * n, n, bp->b_data, write) ? -EIO : 0;
}

static void note_error(struct buf *bp, int err)
{
    bp->b_error = err;
    flag_set(bp, B_ERROR);
}

/* A write finished (err 0 or negative): record it and release bp. */
static void write_done(struct buf *bp, int err)
{
    if (err) {
        kprintf("buf: %s block %lu (%u bytes): asynchronous write failed (%d), data lost\n",
                bp->b_dev->name, bp->b_blkno, bp->b_size, err);
        note_error(bp, err);
    } else {
        flag_clear(bp, B_DELWRI);
    }
    release(bp);
}

static void async_write_done(struct bio *io)
{
    write_done(io->priv, io->error ? -EIO : 0);
}

/* Start writing busy bp; its completion releases it. */
static void start_async_write(struct buf *bp)
{
    flag_set(bp, B_ASYNC);
    BX(bp)->owner = NULL;
    uint32_t n = sectors_of(bp);
    if (!in_range(bp->b_dev, bp->b_blkno, bp->b_size) || n > bp->b_dev->max_blocks) {
        write_done(bp, buf_io(bp, true));
        return;
    }
    struct bio *io = &BX(bp)->io;
    blk_wait(io);       /* the previous request on io has completely finished */
    io->dev = bp->b_dev;
    io->blkno = bp->b_blkno * n;
    io->count = n;
    io->buf = bp->b_data;
    io->write = true;
    io->done_fn = async_write_done;
    io->priv = bp;
    pcpu_count(bc.stats, ST_WRITES);
    int e = blk_submit(io);
    if (e < 0)
        write_done(bp, -EIO);
}

/* ---- getblk ---- */

static void check_request(struct blkdev *dev, uint32_t size)
{
    if (!dev || !size_ok(dev, size))
        panic("getblk: bad request (dev %s, size %u)", dev ? dev->name : "NULL", size);
}

/*
 * With H(row) held and the block absent from the row: take a free buffer
 * of the row's group and give it the new identity, or find out why not.
 * Returns the buffer (busy, hashed on row, every lock of ls dropped), or
 * NULL when the caller must start over (every lock of ls dropped too).
 */
static struct buf *reuse_victim(struct lockset *ls, unsigned row, struct blkdev *dev,
                                uint64_t blkno, uint32_t size)
{
    struct bgroup *g = group_of_row(row);
    ls_lock(ls, &g->lock);
    struct buf *bp = g->head;
    if (!bp) {
        wait_free(ls, g);
        return NULL;
    }
    ls_lock(ls, elem_lock(bp));
    take_free(bp);
    if (!bp->b_data && !give_data(bp)) {
        /* Memory is out: a buffer that has a page, after a reclaim. */
        flag_clear(bp, B_BUSY);
        BX(bp)->owner = NULL;
        free_insert(g, bp, false);
        ls_unlock_all(ls);
        pcache_reclaim(-1, 8);
        return NULL;
    }
    if (flags_of(bp) & B_DELWRI) {
        /* Written first; its completion puts it back on the list. */
        ls_unlock_all(ls);
        start_async_write(bp);
        return NULL;
    }
    /* Only the new row's lock is needed from here on (bp is ours). */
    ls_release_except(ls, row_lock(row));
    if (BX(bp)->row != NO_ROW) {
        if (!ls_trylock(ls, row_lock(BX(bp)->row))) {
            /* hashfree only: back off rather than wait for a second row
             * lock; release unhashes bp under its old row's lock alone. */
            ls_unlock_all(ls);
            flag_set(bp, B_STALE);
            release(bp);
            return NULL;
        }
        chain_remove(bp);
    }
    bp->b_dev = dev;
    bp->b_blkno = blkno;
    bp->b_size = size;
    bp->b_error = 0;
    flag_clear(bp, B_DONE | B_ERROR | B_STALE | B_DELWRI | B_ASYNC);
    chain_insert(row, bp);
    ls_unlock_all(ls);
    return bp;
}

struct buf *getblk(struct blkdev *dev, uint64_t blkno, uint32_t size)
{
    check_request(dev, size);
    unsigned row = hash_row(dev, blkno);
    pcpu_count(bc.stats, ST_LOOKUPS);
    for (;;) {
        struct lockset ls;
        ls_init(&ls);
        ls_lock(&ls, row_lock(row));
        struct buf *bp = chain_find(row, dev, blkno, size);
        if (!bp) {
            bp = reuse_victim(&ls, row, dev, blkno, size);
            if (bp) {
                pcpu_count(bc.stats, ST_MISSES);
                return bp;
            }
            continue;
        }
        ls_lock(&ls, &group_of(bp)->lock);
        ls_lock(&ls, elem_lock(bp));
        if (flags_of(bp) & B_BUSY) {
            wait_busy(&ls, bp);
            pass_wakeup_on(bp, dev, blkno, size);
            continue;
        }
        take_free(bp);
        ls_unlock_all(&ls);
        pcpu_count(bc.stats, ST_HITS);
        return bp;
    }
}

struct buf *bread(struct blkdev *dev, uint64_t blkno, uint32_t size, int *err)
{
    int dummy;
    if (!err)
        err = &dummy;
    if (!dev || !size_ok(dev, size) || !in_range(dev, blkno, size)) {
        *err = -EINVAL;
        return NULL;
    }
    struct buf *bp = getblk(dev, blkno, size);
    if (flags_of(bp) & B_DONE) {
        *err = 0;
        return bp;
    }
    int e = buf_io(bp, false);
    if (e) {
        note_error(bp, e);
        release(bp);
        *err = e;
        return NULL;
    }
    flag_set(bp, B_DONE);
    *err = 0;
    return bp;
}

int bwrite(struct buf *bp)
{
    int e = buf_io(bp, true);
    if (e) {
        note_error(bp, e);
    } else {
        flag_clear(bp, B_DELWRI);
        flag_set(bp, B_DONE);
    }
    release(bp);
    return e;
}

void bdwrite(struct buf *bp)
{
    flag_set(bp, B_DELWRI | B_DONE);
    release(bp);
}

void bawrite(struct buf *bp)
{
    flag_set(bp, B_DONE);
    start_async_write(bp);
}

void clrbuf(struct buf *bp)
{
    memset(bp->b_data, 0, bp->b_size);
}

/* ---- flushing and invalidation ---- */

/*
 * Write bp if it is a delayed write of dev (NULL: any disk); wait for it
 * if it is being written asynchronously.  A buffer another thread holds
 * busy is skipped unless wait_held: then this thread waits until it is
 * released and writes it if it came back delayed (fsync: another thread's
 * create may hold the very directory block an fsync'ed rename changed).
 * Only a thread that holds no buffer may pass wait_held.  Returns 0 or
 * the write's error.
 */
static int flush_one(struct buf *bp, struct blkdev *dev, bool wait_held)
{
    for (;;) {
        struct lockset ls;
        ls_init(&ls);
        ls_lock(&ls, &group_of(bp)->lock);
        ls_lock(&ls, elem_lock(bp));
        uint32_t f = flags_of(bp);
        struct blkdev *bdev = READ_ONCE(bp->b_dev);     /* stable unless busy */
        bool mine = bdev && (!dev || bdev == dev);
        if (mine && !(f & B_BUSY) && (f & B_DELWRI)) {
            take_free(bp);
            ls_unlock_all(&ls);
            return bwrite(bp);
        }
        if (mine && (f & B_BUSY) && ((f & B_ASYNC) || wait_held)) {
            /* An asynchronous write always finishes, so waiting for it
             * cannot deadlock even if this thread owns other buffers; a
             * held buffer is released by its owner, who never waits for
             * a thread that holds none. */
            wait_busy(&ls, bp);
            pass_wakeup_on(bp, NULL, 0, 0);
            continue;
        }
        ls_unlock_all(&ls);
        return 0;
    }
}

void buf_dump_busy(void)
{
    for (int i = 0; bc.bufs && i < bc.nbuf; i++) {
        struct bufx *x = &bc.bufs[i];
        uint32_t f = flags_of(&x->b);
        if (!(f & B_BUSY))
            continue;
        kprintf("buffer %p %s block %lu: flags %#x, ", &x->b,
                x->b.b_dev ? x->b.b_dev->name : "-", x->b.b_blkno, f);
        if (x->owner)
            kprintf("busy for thread %d\n", x->owner->tid);
        else
            kprintf("%s\n", (f & B_ASYNC) ? "being written asynchronously" : "no owner");
    }
}

static int flush_all(struct blkdev *dev, bool wait_held)
{
    int rc = 0;
    for (int i = 0; i < bc.nbuf; i++) {
        int e = flush_one(&bc.bufs[i].b, dev, wait_held);
        if (e && !rc)
            rc = e;
    }
    return rc;
}

int bflush(struct blkdev *dev)
{
    return flush_all(dev, false);
}

int bflush_held(struct blkdev *dev)
{
    return flush_all(dev, true);
}

/* With H(row) held: forget every free buffer of dev on the row; returns
 * how many were busy (or dirtied again) and so kept. */
static int forget_row(unsigned row, struct blkdev *dev, struct lockset *ls)
{
    int kept = 0;
    struct buf *next;
    for (struct buf *bp = bc.rows[row].head; bp; bp = next) {
        next = bp->b_hnext;
        if (bp->b_dev != dev)
            continue;
        struct bgroup *g = group_of(bp);
        ls_lock(ls, &g->lock);
        ls_lock(ls, elem_lock(bp));
        uint32_t f = flags_of(bp);
        if (f & (B_BUSY | B_DELWRI)) {
            kept++;
        } else {
            chain_remove(bp);
            clear_identity(bp);
            flag_clear(bp, B_DONE | B_ERROR);
            flag_set(bp, B_STALE);
            free_remove(g, bp);
            free_insert(g, bp, true);
            wake_buf_waiters(bp);
        }
        ls_release_except(ls, row_lock(row));
    }
    return kept;
}

void bforget(struct blkdev *dev, uint64_t blkno, uint32_t size)
{
    check_request(dev, size);
    unsigned row = hash_row(dev, blkno);
    struct lockset ls;
    ls_init(&ls);
    ls_lock(&ls, row_lock(row));
    bool cached = chain_find(row, dev, blkno, size) != NULL;
    ls_unlock_all(&ls);
    if (!cached)
        return;         /* nothing enters a block of file data into the cache */
    struct buf *bp = getblk(dev, blkno, size);
    flag_set(bp, B_STALE);
    release(bp);        /* unhashed, its delayed write cleared */
}

int binval(struct blkdev *dev)
{
    if (!dev)
        return -EINVAL;
    int rc = bflush(dev);
    int kept = 0;
    for (unsigned row = 0; row < bc.nrows; row++) {
        struct lockset ls;
        ls_init(&ls);
        ls_lock(&ls, row_lock(row));
        kept += forget_row(row, dev, &ls);
        ls_unlock_all(&ls);
    }
    if (kept)
        return -EBUSY;
    return rc;
}

/* ---- giving memory back ---- */

/* A clean free buffer of g with a data page, made busy (ours), or NULL. */
static struct buf *take_clean(struct bgroup *g)
{
    struct lockset ls;
    ls_init(&ls);
    ls_lock(&ls, &g->lock);
    struct buf *bp = g->head;
    while (bp && (!bp->b_data || (flags_of(bp) & B_DELWRI)))
        bp = bp->b_fnext;
    if (bp) {
        ls_lock(&ls, elem_lock(bp));
        take_free(bp);
    }
    ls_unlock_all(&ls);
    return bp;
}

uint64_t buf_shrink(uint64_t want)
{
    int floor = bc.nbuf / 4;
    uint64_t freed = 0;
    for (unsigned g = 0; g < bc.ngroups && freed < want; g++) {
        for (int k = 0; k < 8 && freed < want && buf_data_count() > floor; k++) {
            struct buf *bp = take_clean(&bc.groups[g]);
            if (!bp)
                break;
            void *data = bp->b_data;
            bp->b_data = NULL;
            buf_note_data_pages(-1);
            flag_set(bp, B_STALE);
            release(bp);
            page_free(virt_to_page(data), 0);
            freed++;
        }
    }
    return freed;
}
