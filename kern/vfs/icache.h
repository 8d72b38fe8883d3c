/*
 * The inode cache both disk file systems share (S5 and UFS): in-core
 * inodes hashed on (file system, inode number), the free list of inactive
 * ones, iget with the identity recheck, VOP_INACTIVE with the -1 protocol
 * and the reaper, and the ILOCK/IRWLOCK resource locks.  Theory in
 * kern/vfs/icache.c; each file system keeps one struct icache and embeds
 * ICNODE_FIELDS at the start of its inode.
 *
 * Lock key (the same for every file system; the classes are the file
 * system's own, e.g. "s5_icache", "ufs_ilock"):
 *   [ic]  the cache's mutex (c->lock): hash chains, free list, every
 *         inode's identity (i_fs, i_number) and the -1 of its v_count
 *   [I]   the inode's ILOCKED resource lock (i_lock)
 *   [rq]  the cache's reap_lock: the reaper's queue
 *   [c]   constant once the cache is built
 */
#ifndef KERN_VFS_ICACHE_H
#define KERN_VFS_ICACHE_H

#include <kern/lib/types.h>
#include <kern/lock/mutex.h>
#include <kern/lock/sleep.h>
#include <kern/vfs/vnode.h>

/* Hash chains: 2^n - 1 of them, so the modulus spreads inode numbers that
 * differ by powers of two (seed 001's lesson about the buffer cache). */
#define IC_NHASH        127

/* i_flag bits every file system uses [I]; bits from 0x100 up are its own. */
#define IVALID  0x01    /* the in-core copy has been read from disk */
#define IMOD    0x02    /* the in-core copy differs from the disk copy */

struct icache;

/*
 * The fields that start every cached inode, FS being the file system's
 * type (so that its code reads ip->i_fs typed).  struct icnode is the same
 * prefix with FS void: the cache works on that.
 */
#define ICNODE_FIELDS(FS)                                                       \
    struct vnode i_vnode;           /* v_data points back here */              \
    struct icnode *i_hnext, *i_hprev;   /* [ic] hash chain */                  \
    struct icnode *i_fnext, *i_fprev;   /* [ic] free list (v_count == -1) */   \
    bool i_hashed, i_onfree;        /* [ic] */                                  \
    FS *i_fs;                       /* [ic] identity: file system (NULL: none) ... */ \
    uint32_t i_number;              /* [ic] ... and inode number */             \
    struct icache *i_cache;         /* [c] the cache it belongs to */           \
    struct icnode *i_reapnext;      /* [rq] next on the reaper's queue */       \
    bool i_reapq;                   /* [rq] on the reaper's queue */            \
    struct rlock i_lock;            /* ILOCKED */                               \
    struct rlock i_rwlock;          /* IRWLOCKED */                             \
    uint32_t i_flag;                /* [I] IVALID, IMOD and the fs's own */

struct icnode {
    ICNODE_FIELDS(void)
};

#define ICNODE(ip)  ((struct icnode *)(ip))

/* Counters (racy sums).  A file system's statistics may start with these
 * fields (ICSTATS_FIELDS) and give the cache a pointer to them. */
#define ICSTATS_FIELDS                                                          \
    uint64_t igets, ihits, imisses, iretries; /* iget: calls, cache hits, reads, rechecks failed */ \
    uint64_t inactives, reactivations;        /* VOP_INACTIVE calls; revived from -1 */ \
    uint64_t reaped;                          /* inactivations deferred to the reaper */ \
    uint64_t purges;                          /* dnlc_purge1 calls made by iget */ \
    uint64_t page_purges;                     /* reused inodes whose old pages went */
struct icstats {
    ICSTATS_FIELDS
};

/* What the cache asks of the file system; each runs with the inode ILOCKED. */
struct icache_ops {
    /* Read the inode (identity set) from disk; set v_type and v_rdev. */
    int (*read)(struct icnode *ip);
    /* The work of an inactivation while the count is 0: free a file with
     * no links, write back a modified inode. */
    void (*inactive)(struct icnode *ip);
    /* The file type (S_IFMT bits) of a valid in-core inode; 0 when the
     * inode is free (it is then reused first). */
    uint32_t (*mode)(struct icnode *ip);
};

struct icache {
    /* Set by the file system, constant [c]. */
    const char *name;                   /* "s5", "ufs": messages, threads */
    int ninode;                         /* in-core inodes (at most) */
    size_t node_size;                   /* sizeof its inode */
    const struct vnodeops *vnops;
    const struct icache_ops *ops;
    struct lock_class *cache_class, *ilock_class, *irwlock_class, *reap_class;
    struct icstats *stats;
    /* The cache's own. */
    int state;                          /* [a] 0 none, 1 building, 2 ready */
    struct mutex lock;                  /* [ic] */
    struct icnode **table;              /* [c] once built */
    int nbuilt;                         /* [c] entries of table */
    struct icnode *hash[IC_NHASH];      /* [ic] */
    struct icnode *free_head, *free_tail;   /* [ic] */
    struct mutex reap_lock;
    struct icnode *reap_head;           /* [rq] */
    int reap_busy;                      /* [rq] queued or being inactivated */
};

/* Build the table and start the reaper, once (any caller; others wait). */
void icache_init(struct icache *c);

/* The inode (fs, ino), referenced and ILOCKED, read if need be.  -ENFILE
 * when the table stays full after purging the DNLC; the read's error;
 * -EDEADLK if this thread holds its ILOCKED; with try, -EBUSY at once when
 * another thread has it ILOCKED. */
int icache_iget(struct icache *c, void *fs, uint32_t ino, bool try, struct icnode **ipp);
/* IUNLOCK and VN_RELE. */
void icache_iput(struct icnode *ip);
/* The VOP_INACTIVE routine. */
void icache_inactive(struct vnode *vp, struct cred *cr);
/* Wait until the inactivations deferred to the reaper are done. */
void icache_reap_drain(struct icache *c);
/* Is (fs, ino) in core and referenced? */
bool icache_active(struct icache *c, void *fs, uint32_t ino);
/* The file type of (fs, ino) if it is in core and valid, else 0 (a hint). */
uint32_t icache_mode_hint(struct icache *c, void *fs, uint32_t ino);
/* -EBUSY if an inode of fs other than root is referenced. */
int icache_busy(struct icache *c, void *fs, struct icnode *root);
/* Call update (ILOCKED) on every valid modified in-core inode of fs;
 * the first error. */
int icache_flush(struct icache *c, void *fs, int (*update)(struct icnode *ip));
/* Write back the dirty pages of fs's active regular files (sync,
 * unmount: kern/vm/pcache_rw.c); the first error. */
int icache_flush_pages(struct icache *c, void *fs);
/* Forget every inactive in-core inode of fs, and drop its cached pages
 * (after unmount). */
void icache_evict(struct icache *c, void *fs);
struct blkdev;
/* Unmount's part that is the same for every file system: purge the DNLC
 * of it, drain the reaper, -EBUSY if an inode other than root is in use;
 * else drop the mount's reference to root, sync (the file system's
 * function, marking it clean), forget its buffers and inodes and give the
 * disk back.  *still_used says root is still referenced: the file
 * system's structure must then stay (read-only), as its inode points at
 * it.  Returns the first error of the sync. */
int icache_unmount(struct icache *c, void *fs, struct icnode *root, struct blkdev *dev,
                   int (*sync)(void *fs), bool *still_used);
/* Tests: broken invariants (0 is good); *nfree the free list's length. */
int icache_audit(struct icache *c, int *nfree);

/*
 * The inode resource locks (seed 001, "Inode Locking").  ILOCK takes the
 * vnode lock and then the ILOCKED flag; IUNLOCK releases both, so a VOP
 * that returns with ILOCKED held leaves the vnode lock held too (one more
 * recursion level), exactly as the paper describes.  Waiting for the flag
 * sleeps, which releases the vnode lock (and every other mutex) until the
 * flag's holder lets it go with wake1proc (wakeup=one) or wakeup (all).
 * IRWLOCK/IRWUNLOCK are the same with IRWLOCKED, which makes a read or
 * write atomic while ILOCK is taken and dropped around each block.
 * Inline so that the lock statistics and witness name the real call site;
 * the macros take any file system's inode.
 */
static inline void ic_ilock(struct icnode *ip)
{
    mutex_enter(&ip->i_vnode.v_lock);
    rlock_acquire(&ip->i_lock);
}

static inline void ic_iunlock(struct icnode *ip)
{
    rlock_release(&ip->i_lock);
    mutex_exit(&ip->i_vnode.v_lock);
}

static inline void ic_irwlock(struct icnode *ip)
{
    mutex_enter(&ip->i_vnode.v_lock);
    rlock_acquire(&ip->i_rwlock);
}

static inline void ic_irwunlock(struct icnode *ip)
{
    rlock_release(&ip->i_rwlock);
    mutex_exit(&ip->i_vnode.v_lock);
}

#define ILOCK(ip)       ic_ilock(ICNODE(ip))
#define IUNLOCK(ip)     ic_iunlock(ICNODE(ip))
#define IRWLOCK(ip)     ic_irwlock(ICNODE(ip))
#define IRWUNLOCK(ip)   ic_irwunlock(ICNODE(ip))

#endif
