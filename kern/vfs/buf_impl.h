/*
 * Inside the buffer cache: what kern/vfs/buf.c (the cache at work) and
 * kern/vfs/buf_init.c (boot and statistics) share.  Not for other files.
 * The theory, and the lock keys ([H] hash row, [F] free list, [E] the
 * buffer, [B] its owner while busy, [c] constant after binit), are in
 * kern/vfs/buf.c and kern/vfs/buf.h.
 */
#ifndef KERN_VFS_BUF_IMPL_H
#define KERN_VFS_BUF_IMPL_H

#include <kern/vfs/buf.h>
#include <kern/vfs/ssac.h>
#include <drivers/block/bio.h>
#include <kern/lock/spinlock.h>
#include <kern/arch/cpu.h>

#define NO_ROW 0xffffffffu

/* A buffer and the fields only the buffer cache sees. */
struct bufx {
    struct buf b;
    uint32_t group;             /* [c] the free list it lives on */
    uint32_t row;               /* [H] the hash row it is on, NO_ROW when unhashed */
    struct bio io;              /* [B] asynchronous writes (see the theory) */
    struct thread *owner;       /* [B] who made it busy; NULL while an asynchronous
                                 * write owns it (read only by the hang dump) */
    spinlock_t elem;            /* hashfree: E (b_lock points here) */
} __cacheline;

struct brow {
    struct buf *head;           /* [H] the chain */
    spinlock_t *lock;           /* [c] H: own below (hashfree) or a group's */
    spinlock_t own;             /* hashfree: this row's lock */
} __cacheline;

struct bgroup {
    spinlock_t lock;            /* F (and under single/ssac also H and E) */
    struct buf *head, *tail;    /* [F] the free list, least recently used first */
    uint32_t nwant;             /* [F] threads sleeping for a free buffer */
} __cacheline;

enum { ST_LOOKUPS, ST_HITS, ST_MISSES, ST_WRITES, ST_WAITS };

struct bcache {
    int model;                  /* [c] enum cache_model */
    int nbuf;                   /* [c] */
    unsigned rowbits;           /* [c] rows = 2^rowbits */
    unsigned nrows, ngroups;    /* [c] */
    unsigned rows_per_group;    /* [c] */
    struct bufx *bufs;          /* [c] nbuf of them */
    struct brow *rows;          /* [c] */
    struct bgroup *groups;      /* [c] */
    struct pcpu_counters stats[MAX_CPUS];
};
extern struct bcache bc;

static inline struct bufx *BX(struct buf *bp)
{
    return container_of(bp, struct bufx, b);
}

/* The free list of hash row row (ssac binds rows to groups at binit). */
static inline struct bgroup *group_of_row(unsigned row)
{
    return &bc.groups[row / bc.rows_per_group];
}

/* Put a free buffer on g's free list: at the tail (most recently used), or
 * at the head when its contents are useless.  The caller holds F. */
void free_insert(struct bgroup *g, struct buf *bp, bool at_head);

#endif
