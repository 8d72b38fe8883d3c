/*
 * S5 in-core inodes: the inode cache, iget, VOP_INACTIVE with the -1
 * protocol, reading and writing inodes, truncation.  The theory (cache
 * structure, locks, races) is at the top of kern/s5/s5_vfsops.c; the lock
 * key is in kern/s5/s5_inode.h.
 *
 * The cache is one table of S5_NINODE inodes shared by every mounted S5
 * file system, with hash chains on (file system, inode number) and one free
 * list of inactive inodes (v_count == -1) in least-recently-inactivated
 * order, all under the one mutex s5_icache_lock, as in SVR4 MP ("a single
 * lock has been used for the entire collection of inode hash queues and the
 * inode free list").  An in-core inode keeps its identity after it becomes
 * inactive, so a later iget finds it again without reading the disk; it is
 * reused for another inode only when it reaches the head of the free list.
 */
#include <kern/s5/s5_inode.h>
#include <kern/vfs/buf.h>
#include <kern/vfs/dnlc.h>
#include <kern/vfs/cred.h>
#include <kern/vm/kmem.h>
#include <kern/vm/pcache.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/lib/options.h>
#include <kern/arch/panic.h>
#include <kern/sched/thread.h>
#include <drivers/platform/timer.h>
#include <drivers/platform/rtc.h>

LOCK_CLASS(s5_icache_class, "s5_icache", LK_MUTEX_SLEEP);
LOCK_CLASS(s5_ilock_class, "s5_ilock", LK_RESOURCE);
LOCK_CLASS(s5_irwlock_class, "s5_irwlock", LK_RESOURCE);

struct s5_stats s5_stats;

static struct mutex s5_icache_lock;
static struct s5_inode *itable[S5_NINODE];      /* [c] once initialized */
static struct s5_inode *ihash[S5_NIHASH];       /* [ic] chain heads */
static struct s5_inode *ifree_head, *ifree_tail;/* [ic] the free list */
static int icache_state;                        /* [a] 0 none, 1 building, 2 ready */

#define STAT_INC(f) __atomic_add_fetch(&s5_stats.f, 1, __ATOMIC_RELAXED)

/* File times come from the wall clock (drivers/platform/rtc.c). */
uint32_t s5_now(void)
{
    return (uint32_t)(realtime_ns() / 1000000000ull);
}

bool s5_syncwrites(void)
{
    return opts.syncwrites != 0;
}

/* ---- the free list and hash chains [ic] ---- */

static void free_insert(struct s5_inode *ip, bool at_head)
{
    ip->i_onfree = true;
    if (at_head) {
        ip->i_fprev = NULL;
        ip->i_fnext = ifree_head;
        if (ifree_head)
            ifree_head->i_fprev = ip;
        else
            ifree_tail = ip;
        ifree_head = ip;
    } else {
        ip->i_fnext = NULL;
        ip->i_fprev = ifree_tail;
        if (ifree_tail)
            ifree_tail->i_fnext = ip;
        else
            ifree_head = ip;
        ifree_tail = ip;
    }
}

static void free_remove(struct s5_inode *ip)
{
    if (!ip->i_onfree)
        return;
    if (ip->i_fprev)
        ip->i_fprev->i_fnext = ip->i_fnext;
    else
        ifree_head = ip->i_fnext;
    if (ip->i_fnext)
        ip->i_fnext->i_fprev = ip->i_fprev;
    else
        ifree_tail = ip->i_fprev;
    ip->i_fnext = ip->i_fprev = NULL;
    ip->i_onfree = false;
}

static unsigned ihash_of(const struct s5_fs *fs, uint32_t ino)
{
    return (ino + fs->fs_hashid * 2654435761u) % S5_NIHASH;
}

static void hash_insert(struct s5_inode *ip)
{
    struct s5_inode **head = &ihash[ihash_of(ip->i_fs, ip->i_number)];
    ip->i_hprev = NULL;
    ip->i_hnext = *head;
    if (*head)
        (*head)->i_hprev = ip;
    *head = ip;
    ip->i_hashed = true;
}

static void hash_remove(struct s5_inode *ip)
{
    if (!ip->i_hashed)
        return;
    if (ip->i_hprev)
        ip->i_hprev->i_hnext = ip->i_hnext;
    else
        ihash[ihash_of(ip->i_fs, ip->i_number)] = ip->i_hnext;
    if (ip->i_hnext)
        ip->i_hnext->i_hprev = ip->i_hprev;
    ip->i_hnext = ip->i_hprev = NULL;
    ip->i_hashed = false;
}

static struct s5_inode *hash_find(struct s5_fs *fs, uint32_t ino)
{
    for (struct s5_inode *ip = ihash[ihash_of(fs, ino)]; ip; ip = ip->i_hnext)
        if (ip->i_fs == fs && ip->i_number == ino)
            return ip;
    return NULL;
}

/* Take ip off its hash chain and give it no identity [ic]. */
static void forget_identity(struct s5_inode *ip)
{
    hash_remove(ip);
    ip->i_fs = NULL;
    ip->i_number = 0;
}

static void reap_init(void);
static bool ilock_try(struct s5_inode *ip);

/* ---- building the table ---- */

static void build_table(void)
{
    mutex_init(&s5_icache_lock, &s5_icache_class, MUTEX_SLEEP, "s5_icache");
    for (int i = 0; i < S5_NINODE; i++) {
        struct s5_inode *ip = kzalloc(sizeof *ip);
        if (!ip)
            break;                  /* a smaller table still works */
        vn_init(&ip->i_vnode, &s5_vnodeops, VNON, NULL, ip);
        ip->i_vnode.v_count = -1;
        rlock_init(&ip->i_lock, &s5_ilock_class, "s5_ilock");
        rlock_init(&ip->i_rwlock, &s5_irwlock_class, "s5_irwlock");
        itable[i] = ip;
        free_insert(ip, false);
    }
}

void s5_icache_init(void)
{
    int expect = 0;
    if (__atomic_compare_exchange_n(&icache_state, &expect, 1, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        build_table();
        reap_init();
        __atomic_store_n(&icache_state, 2, __ATOMIC_RELEASE);
        return;
    }
    while (__atomic_load_n(&icache_state, __ATOMIC_ACQUIRE) != 2)
        thread_yield();
}

/* ---- iget ---- */

/* Revive ip from the free list if it is inactive, then count our
 * reference [ic]: the -1 protocol of kern/vfs/vnode.h. */
static void activate_locked(struct s5_inode *ip)
{
    if (__atomic_load_n(&ip->i_vnode.v_count, __ATOMIC_ACQUIRE) == -1) {
        free_remove(ip);
        __atomic_store_n(&ip->i_vnode.v_count, 0, __ATOMIC_RELEASE);
        STAT_INC(reactivations);
    }
    VN_HOLD(&ip->i_vnode);
}

/* Give the inode at the head of the free list the identity (fs, ino) [ic]. */
static struct s5_inode *reuse_locked(struct s5_fs *fs, uint32_t ino)
{
    struct s5_inode *ip = ifree_head;
    if (!ip)
        return NULL;
    free_remove(ip);
    forget_identity(ip);
    ip->i_fs = fs;
    ip->i_number = ino;
    ip->i_flag = 0;
    ip->i_vnode.v_vfsp = fs->fs_vfs;
    ip->i_vnode.v_flag = 0;
    ip->i_vnode.v_vfsmountedhere = NULL;
    __atomic_store_n(&ip->i_vnode.v_count, 1, __ATOMIC_RELEASE);
    hash_insert(ip);
    return ip;
}

/*
 * Find (fs, ino) in the cache or give it a free in-core inode, and return
 * it referenced but not locked.  When no inode is free, the last reference
 * to many inodes is the DNLC's: purge DNLC entries one at a time (which
 * may inactivate an inode onto the free list) until one is free or the
 * DNLC is empty (seed 001, "Directory Name Lookup Cache").
 */
static int icache_get(struct s5_fs *fs, uint32_t ino, struct s5_inode **ipp)
{
    for (;;) {
        mutex_enter(&s5_icache_lock);
        struct s5_inode *ip = hash_find(fs, ino);
        if (ip) {
            activate_locked(ip);
            mutex_exit(&s5_icache_lock);
            STAT_INC(ihits);
            *ipp = ip;
            return 0;
        }
        ip = reuse_locked(fs, ino);
        mutex_exit(&s5_icache_lock);
        if (ip) {
            *ipp = ip;
            return 0;
        }
        STAT_INC(purges);
        if (dnlc_purge1() == 0) {
            kprintf("s5: inode table full (%d in-core inodes all in use)\n", S5_NINODE);
            return -ENFILE;
        }
    }
}

static enum vtype vtype_of(uint16_t mode)
{
    switch (mode & S5_IFMT) {
    case S5_IFREG: return VREG;
    case S5_IFDIR: return VDIR;
    case S5_IFLNK: return VLNK;
    case S5_IFCHR: return VCHR;
    case S5_IFBLK: return VBLK;
    case S5_IFIFO: return VFIFO;
    default:       return VNON;
    }
}

static bool has_blocks(uint16_t mode)
{
    uint16_t t = mode & S5_IFMT;
    return t == S5_IFREG || t == S5_IFDIR || t == S5_IFLNK;
}

/* Check what a disk inode claims before anyone believes it. */
static const char *dinode_invalid(const struct s5_dinode *di)
{
    if (di->di_mode == 0)
        return NULL;                        /* a free inode */
    if (vtype_of(di->di_mode) == VNON)
        return "unknown file type";
    if (di->di_size > S5_MAXFILESIZE)
        return "size past the largest file";
    if (!has_blocks(di->di_mode) && di->di_size != 0)
        return "special file with a size";
    if ((di->di_mode & S5_IFMT) == S5_IFDIR &&
        (di->di_size % S5_DIRENT_SIZE != 0 || di->di_size < 2 * S5_DIRENT_SIZE ||
         di->di_size > S5_MAXDIRSIZE))
        return "absurd directory size";
    return NULL;
}

/* Read ip (ILOCKED, identity set) from its disk block. */
static int iread(struct s5_inode *ip)
{
    struct s5_fs *fs = ip->i_fs;
    int err = 0;
    struct buf *bp = s5_bread(fs, s5_itod(ip->i_number), &err);
    if (!bp)
        return err;
    const struct s5_dinode *di =
        (const struct s5_dinode *)((char *)bp->b_data + s5_itooff(ip->i_number));
    const char *why = dinode_invalid(di);
    if (why) {
        s5_corrupt(fs, "inode %u: %s (mode 0%o, size %u)", ip->i_number, why, di->di_mode,
                   di->di_size);
        brelse(bp);
        return -EUCLEAN;
    }
    ip->i_mode = di->di_mode;
    ip->i_nlink = di->di_nlink;
    ip->i_uid = di->di_uid;
    ip->i_gid = di->di_gid;
    ip->i_size = di->di_size;
    for (int i = 0; i < S5_NADDR; i++)
        ip->i_addr[i] = s5_getaddr(di, i);
    ip->i_gen = di->di_gen;
    ip->i_atime = di->di_atime;
    ip->i_mtime = di->di_mtime;
    ip->i_ctime = di->di_ctime;
    brelse(bp);
    ip->i_flag = IVALID;
    ip->i_vnode.v_type = vtype_of(ip->i_mode);
    bool dev = ip->i_vnode.v_type == VCHR || ip->i_vnode.v_type == VBLK;
    ip->i_vnode.v_rdev = dev ? s5_dev_from_disk(ip->i_addr[0]) : 0;
    return 0;
}

/* iget; with try, an inode another thread has ILOCKED is -EBUSY instead
 * of a wait. */
static int iget(struct s5_fs *fs, uint32_t ino, struct s5_inode **ipp, bool try)
{
    if (!s5_ino_valid(&fs->fs_sb, ino)) {
        s5_corrupt(fs, "inode number %u outside the inode list (1..%u)", ino,
                   s5_ninodes(&fs->fs_sb));
        return -EUCLEAN;
    }
    STAT_INC(igets);
    for (;;) {
        struct s5_inode *ip;
        int err = icache_get(fs, ino, &ip);
        if (err)
            return err;
        if (s5_ilocked(ip)) {
            /* Waiting for our own ILOCKED would never end: only a
             * corrupted directory or a stale free-inode hint leads here. */
            VN_RELE(ITOV(ip));
            return -EDEADLK;
        }
        if (!try) {
            ILOCK(ip);
        } else if (!ilock_try(ip)) {
            VN_RELE(ITOV(ip));
            return -EBUSY;
        }
        /* The sleep for the lock may have let the identity change (a
         * failed read dropped it): check it again (seed 001). */
        if (ip->i_fs != fs || ip->i_number != ino) {
            STAT_INC(iretries);
            s5_iput(ip);
            continue;
        }
        if (!(ip->i_flag & IVALID)) {
            STAT_INC(imisses);
            err = iread(ip);
            if (err) {
                mutex_enter(&s5_icache_lock);
                forget_identity(ip);
                mutex_exit(&s5_icache_lock);
                s5_iput(ip);
                return err;
            }
        }
        *ipp = ip;
        return 0;
    }
}

int s5_iget(struct s5_fs *fs, uint32_t ino, struct s5_inode **ipp)
{
    return iget(fs, ino, ipp, false);
}

int s5_iget_try(struct s5_fs *fs, uint32_t ino, struct s5_inode **ipp)
{
    return iget(fs, ino, ipp, true);
}

void s5_iput(struct s5_inode *ip)
{
    IUNLOCK(ip);
    VN_RELE(ITOV(ip));
}

/* ---- writing inodes ---- */

void s5_itimes(struct s5_inode *ip, int which)
{
    uint32_t now = s5_now();
    if (which & S5_ACC)
        ip->i_atime = now;
    if (which & S5_UPD)
        ip->i_mtime = now;
    if (which & S5_CHG)
        ip->i_ctime = now;
    ip->i_flag |= IMOD;
}

int s5_iupdat(struct s5_inode *ip, bool sync)
{
    struct s5_fs *fs = ip->i_fs;
    if (fs->fs_rdonly) {
        ip->i_flag &= ~IMOD;
        return 0;
    }
    int err = 0;
    struct buf *bp = s5_bread(fs, s5_itod(ip->i_number), &err);
    if (!bp)
        return err;
    struct s5_dinode *di = (struct s5_dinode *)((char *)bp->b_data + s5_itooff(ip->i_number));
    di->di_mode = ip->i_mode;
    di->di_nlink = ip->i_nlink;
    di->di_uid = ip->i_uid;
    di->di_gid = ip->i_gid;
    di->di_size = ip->i_size;
    for (int i = 0; i < S5_NADDR; i++)
        s5_setaddr(di, i, ip->i_addr[i]);
    di->di_gen = ip->i_gen;
    di->di_atime = ip->i_atime;
    di->di_mtime = ip->i_mtime;
    di->di_ctime = ip->i_ctime;
    ip->i_flag &= ~IMOD;
    return s5_bwrite_meta(bp, sync);
}

/* ---- truncation ---- */

/* Free one block of ip, keeping the block count. */
static void ifree_block(struct s5_inode *ip, uint32_t bno)
{
    s5_bfree(ip->i_fs, bno);
    if ((ip->i_flag & IBLKS) && ip->i_nblocks > 0)
        ip->i_nblocks--;
}

/* Logical blocks covered by one pointer in an indirect block of level l
 * (1: data blocks; 2: single indirect blocks; 3: double). */
static uint64_t child_span(int level)
{
    return level == 1 ? 1 : level == 2 ? S5_NBLK1 : S5_NBLK2;
}

/*
 * Free what indirect block bno (of the given level, covering logical
 * blocks from first) holds at or past logical block keep; *gone says the
 * block itself was freed (its pointer must be cleared).  Children wholly
 * past keep go entirely; at most one child straddles keep and is trimmed
 * by recursion.  Bad pointers are reported and dropped, never followed.
 */
static int trunc_indirect(struct s5_inode *ip, uint32_t bno, int level, uint64_t first,
                          uint64_t keep, bool *gone)
{
    struct s5_fs *fs = ip->i_fs;
    int err = 0, first_err = 0;
    *gone = false;
    struct buf *bp = s5_bread(fs, bno, &err);
    if (!bp)
        return err;
    uint32_t *ptr = (uint32_t *)bp->b_data;
    uint32_t *doomed = kzalloc(S5_BSIZE);
    if (!doomed) {
        brelse(bp);
        return -ENOMEM;
    }
    bool whole = first >= keep, changed = false;
    uint64_t span = child_span(level);
    uint32_t straddle = 0;
    uint64_t straddle_first = 0;
    for (uint32_t i = 0; i < S5_NINDIR; i++) {
        uint32_t b = ptr[i];
        uint64_t c = first + i * span;
        if (b == 0 || c + span <= keep)
            continue;                       /* nothing there, or kept */
        if (!s5_bno_valid(&fs->fs_sb, b)) {
            s5_corrupt(fs, "inode %u: indirect block %u entry %u: block %u out of range",
                       ip->i_number, bno, i, b);
            first_err = -EUCLEAN;
        } else if (c < keep) {
            straddle = b;                   /* partly kept: its pointer stays */
            straddle_first = c;
            continue;
        } else {
            doomed[i] = b;
        }
        if (!whole) {
            ptr[i] = 0;
            changed = true;
        }
    }
    /* The pointers leave the block before the blocks they name are freed. */
    if (changed)
        s5_bwrite_meta(bp, s5_syncwrites());
    else
        brelse(bp);
    if (straddle) {
        bool child_gone;
        err = trunc_indirect(ip, straddle, level - 1, straddle_first, keep, &child_gone);
        if (err && !first_err)
            first_err = err;
    }
    for (uint32_t i = 0; i < S5_NINDIR; i++) {
        if (!doomed[i])
            continue;
        if (level == 1) {
            ifree_block(ip, doomed[i]);
            continue;
        }
        bool child_gone;
        err = trunc_indirect(ip, doomed[i], level - 1, first + i * span, keep, &child_gone);
        if (err && !first_err)
            first_err = err;
    }
    kfree(doomed);
    if (whole) {
        ifree_block(ip, bno);
        *gone = true;
    }
    return first_err;
}

/* Zero the bytes of the last block past the new size, so that a later
 * extension reads zeros. */
static int zero_tail(struct s5_inode *ip, uint32_t size)
{
    if (s5_blkoff(size) == 0)
        return 0;
    uint32_t bno;
    int err = s5_bmap(ip, s5_lblkno(size), false, &bno, NULL);
    if (err || bno == 0)
        return err;
    if ((ip->i_mode & S5_IFMT) == S5_IFREG) {
        /* File data: on the disk itself, never in the buffer cache. */
        char *tmp = kmalloc(S5_BSIZE);
        if (!tmp)
            return -ENOMEM;
        err = s5_data_rw(ip->i_fs, bno, tmp, false);
        if (!err) {
            memset(tmp + s5_blkoff(size), 0, S5_BSIZE - s5_blkoff(size));
            err = s5_data_rw(ip->i_fs, bno, tmp, true);
        }
        kfree(tmp);
        return err;
    }
    struct buf *bp = s5_bread(ip->i_fs, bno, &err);
    if (!bp)
        return err;
    memset((char *)bp->b_data + s5_blkoff(size), 0, S5_BSIZE - s5_blkoff(size));
    bdwrite(bp);
    return 0;
}

int s5_itrunc(struct s5_inode *ip, uint32_t size)
{
    static const uint64_t ind_first[3] = {
        S5_NDADDR, S5_NDADDR + S5_NBLK1, S5_NDADDR + S5_NBLK1 + (uint64_t)S5_NBLK2
    };
    if (size >= ip->i_size || !has_blocks(ip->i_mode)) {
        if (has_blocks(ip->i_mode))
            ip->i_size = size;
        s5_itimes(ip, S5_UPD | S5_CHG);
        return 0;
    }
    int first_err = zero_tail(ip, size);
    uint64_t keep = s5_size_blocks(size);
    struct s5_fs *fs = ip->i_fs;
    for (int i = 0; i < S5_NDADDR; i++) {
        uint32_t b = ip->i_addr[i];
        if (i < (int)keep || b == 0)
            continue;
        ip->i_addr[i] = 0;
        if (s5_bno_valid(&fs->fs_sb, b))
            ifree_block(ip, b);
        else
            s5_corrupt(fs, "inode %u: block pointer %d is %u, out of range", ip->i_number, i, b);
    }
    for (int level = 1; level <= 3; level++) {
        int slot = S5_NDADDR + level - 1;
        uint32_t b = ip->i_addr[slot];
        if (b == 0 || ind_first[level - 1] + child_span(level) * S5_NINDIR <= keep)
            continue;
        if (!s5_bno_valid(&fs->fs_sb, b)) {
            s5_corrupt(fs, "inode %u: indirect pointer %d is %u, out of range",
                       ip->i_number, slot, b);
            ip->i_addr[slot] = 0;
            continue;
        }
        bool gone;
        int err = trunc_indirect(ip, b, level, ind_first[level - 1], keep, &gone);
        if (gone)
            ip->i_addr[slot] = 0;
        if (err && !first_err)
            first_err = err;
    }
    ip->i_size = size;
    s5_itimes(ip, S5_UPD | S5_CHG);
    return first_err;
}

/* ---- VOP_INACTIVE ---- */

/* With ILOCK: the work of an inactivation.  A file with no links loses
 * its blocks and its inode; a modified one is written back. */
static void inactive_work(struct s5_inode *ip)
{
    struct s5_fs *fs = ip->i_fs;
    if (!fs || !(ip->i_flag & IVALID) || fs->fs_rdonly)
        return;
    if (ip->i_nlink == 0 && ip->i_mode != 0) {
        s5_itrunc(ip, 0);
        ip->i_mode = 0;
        ip->i_vnode.v_type = VNON;
        ip->i_flag &= ~IBLKS;
        memset(ip->i_addr, 0, sizeof ip->i_addr);
        s5_itimes(ip, S5_CHG);
        s5_iupdat(ip, s5_syncwrites());
        s5_ifree(fs, ip->i_number);
    } else if (ip->i_flag & IMOD) {
        s5_iupdat(ip, false);
    }
}

/*
 * Called by VN_RELE when the count reached 0, without the vnode lock.  The
 * count 0 is not yet "inactive": another thread may find the inode in the
 * cache and VN_HOLD it meanwhile, and may even release it again (a second
 * call here).  So the work is done under ILOCK only while the count is
 * still 0, and the count goes to -1 (truly inactive, on the free list)
 * only under the cache lock, only if it is still 0, and still under the
 * same ILOCK -- so the thread that did the work is the one that frees the
 * inode, and no other inactivation can see the count 0, skip the work and
 * free it meanwhile.  If the count is not 0, the inode was reactivated and
 * its new last VN_RELE will come back here.
 *
 * Deadlock: VN_RELE may be called with other inodes ILOCKED -- a DNLC
 * enter under a lookup's locks evicts an entry and drops its references,
 * and an iget on a full table purges DNLC entries.  Waiting there for the
 * ILOCK of an arbitrary inode breaks the parent-before-child order: its
 * holder may have revived it and be waiting for one of ours.  So a thread
 * that holds any kept lock only TRIES the ILOCK; if another thread has it,
 * the inactivation goes to the reaper thread, which holds nothing else
 * when it waits.  (Whoever holds the ILOCK holds a reference or is itself
 * inactivating, so the inode cannot be reused before the reaper runs:
 * only an inode with count -1 is on the free list.)
 */
static void inactive_locked(struct s5_inode *ip)
{
    struct vnode *vp = ITOV(ip);
    if (__atomic_load_n(&vp->v_count, __ATOMIC_ACQUIRE) == 0) {
        inactive_work(ip);
        /* A freed or unnamed inode is the best one to reuse next. */
        bool useless = !ip->i_fs || !(ip->i_flag & IVALID) || ip->i_mode == 0;
        mutex_enter(&s5_icache_lock);
        if (__atomic_load_n(&vp->v_count, __ATOMIC_ACQUIRE) == 0) {
            __atomic_store_n(&vp->v_count, -1, __ATOMIC_RELEASE);
            if (useless)
                forget_identity(ip);
            free_insert(ip, useless);
        }
        mutex_exit(&s5_icache_lock);
    }
    IUNLOCK(ip);
}

static bool ilock_try(struct s5_inode *ip)
{
    mutex_enter(&ip->i_vnode.v_lock);
    if (rlock_tryacquire(&ip->i_lock))
        return true;
    mutex_exit(&ip->i_vnode.v_lock);
    return false;
}

/* ---- the reaper: inactivations that could not wait where they arose ---- */

LOCK_CLASS(s5_reap_class, "s5_reap", LK_MUTEX_SLEEP);

static struct mutex reap_lock;
static struct s5_inode *reap_head;      /* [rq] */
static int reap_busy;                   /* [rq] inodes queued or being inactivated */

static void reap_queue(struct s5_inode *ip)
{
    mutex_enter(&reap_lock);
    if (!ip->i_reapq) {
        ip->i_reapq = true;
        ip->i_reapnext = reap_head;
        reap_head = ip;
        reap_busy++;
        wakeup(&reap_head);
    }
    mutex_exit(&reap_lock);
    STAT_INC(reaped);
}

static void reaper(void *unused)
{
    for (;;) {
        mutex_enter(&reap_lock);
        while (!reap_head)
            sleep_on(&reap_head);
        struct s5_inode *ip = reap_head;
        reap_head = ip->i_reapnext;
        ip->i_reapnext = NULL;
        ip->i_reapq = false;
        mutex_exit(&reap_lock);
        ILOCK(ip);
        inactive_locked(ip);
        mutex_enter(&reap_lock);
        if (--reap_busy == 0)
            wakeup(&reap_busy);
        mutex_exit(&reap_lock);
    }
}

void s5_reap_drain(void)
{
    mutex_enter(&reap_lock);
    while (reap_busy)
        sleep_on(&reap_busy);
    mutex_exit(&reap_lock);
}

static void reap_init(void)
{
    mutex_init(&reap_lock, &s5_reap_class, MUTEX_SLEEP, "s5_reap");
    if (!thread_create("s5_reaper", reaper, NULL, AFFINITY_ALL))
        panic("s5: no memory for the reaper thread");
}

void s5_inactive(struct vnode *vp, struct cred *cr)
{
    struct s5_inode *ip = VTOI(vp);
    STAT_INC(inactives);
    if (!held_any_kept())
        ILOCK(ip);
    else if (!ilock_try(ip)) {
        reap_queue(ip);
        return;
    }
    inactive_locked(ip);
}

/* ---- directory entry types (readdir's d_type) ---- */

static uint8_t dtype_of(uint16_t mode)
{
    switch (mode & S5_IFMT) {
    case S5_IFREG: return DT_REG;
    case S5_IFDIR: return DT_DIR;
    case S5_IFLNK: return DT_LNK;
    case S5_IFCHR: return DT_CHR;
    case S5_IFBLK: return DT_BLK;
    case S5_IFIFO: return DT_FIFO;
    default:       return DT_UNKNOWN;
    }
}

/*
 * The type of inode ino, for readdir: from the in-core inode when there
 * is one, else from its disk block.  A hint, read without the inode's
 * ILOCK (a type changes only when an inode is freed and reused, and
 * readdir races with that anyway); DT_UNKNOWN when it cannot tell.
 */
uint8_t s5_dtype(struct s5_fs *fs, uint32_t ino)
{
    mutex_enter(&s5_icache_lock);
    struct s5_inode *ip = hash_find(fs, ino);
    uint16_t mode = ip && (READ_ONCE(ip->i_flag) & IVALID) ? READ_ONCE(ip->i_mode) : 0;
    mutex_exit(&s5_icache_lock);
    if (mode)
        return dtype_of(mode);
    int err = 0;
    struct buf *bp = s5_bread(fs, s5_itod(ino), &err);
    if (!bp)
        return DT_UNKNOWN;
    mode = ((const struct s5_dinode *)((char *)bp->b_data + s5_itooff(ino)))->di_mode;
    brelse(bp);
    return dtype_of(mode);
}

/* ---- whole-file-system walks (sync, unmount, the inode scan) ---- */

bool s5_iactive(struct s5_fs *fs, uint32_t ino)
{
    mutex_enter(&s5_icache_lock);
    struct s5_inode *ip = hash_find(fs, ino);
    bool active = ip && __atomic_load_n(&ip->i_vnode.v_count, __ATOMIC_ACQUIRE) >= 0;
    mutex_exit(&s5_icache_lock);
    return active;
}

int s5_iflush_busy(struct s5_fs *fs)
{
    int busy = 0;
    mutex_enter(&s5_icache_lock);
    for (int i = 0; i < S5_NINODE && itable[i]; i++) {
        struct s5_inode *ip = itable[i];
        if (ip->i_fs == fs && ip != fs->fs_root &&
            __atomic_load_n(&ip->i_vnode.v_count, __ATOMIC_ACQUIRE) >= 0)
            busy++;
    }
    mutex_exit(&s5_icache_lock);
    return busy ? -EBUSY : 0;
}

int s5_iflush_pages(struct s5_fs *fs)
{
    int first_err = 0;
    for (int i = 0; i < S5_NINODE && itable[i]; i++) {
        struct s5_inode *ip = itable[i];
        struct vnode *vp = ITOV(ip);
        mutex_enter(&s5_icache_lock);
        /* v_npages is only a hint here; pcache_flush looks again. */
        bool take = ip->i_fs == fs && vp->v_type == VREG &&
                    __atomic_load_n(&vp->v_npages, __ATOMIC_ACQUIRE) &&
                    __atomic_load_n(&vp->v_count, __ATOMIC_ACQUIRE) >= 0;
        if (take)
            VN_HOLD(vp);
        mutex_exit(&s5_icache_lock);
        if (!take)
            continue;
        int err = pcache_flush(vp, 0, ~0UL);
        if (err && !first_err)
            first_err = err;
        VN_RELE(vp);
    }
    return first_err;
}

int s5_iflush(struct s5_fs *fs)
{
    int first_err = 0;
    for (int i = 0; i < S5_NINODE && itable[i]; i++) {
        struct s5_inode *ip = itable[i];
        mutex_enter(&s5_icache_lock);
        /* i_flag is read without ILOCK: only a hint, checked again below. */
        bool take = ip->i_fs == fs && (READ_ONCE(ip->i_flag) & IMOD) &&
                    __atomic_load_n(&ip->i_vnode.v_count, __ATOMIC_ACQUIRE) >= 0;
        if (take)
            VN_HOLD(ITOV(ip));
        mutex_exit(&s5_icache_lock);
        if (!take)
            continue;
        ILOCK(ip);
        if (ip->i_fs == fs && (ip->i_flag & (IMOD | IVALID)) == (IMOD | IVALID)) {
            int err = s5_iupdat(ip, false);
            if (err && !first_err)
                first_err = err;
        }
        s5_iput(ip);
    }
    return first_err;
}

void s5_ievict(struct s5_fs *fs)
{
    mutex_enter(&s5_icache_lock);
    for (int i = 0; i < S5_NINODE && itable[i]; i++) {
        struct s5_inode *ip = itable[i];
        if (ip->i_fs != fs || __atomic_load_n(&ip->i_vnode.v_count, __ATOMIC_ACQUIRE) != -1)
            continue;
        forget_identity(ip);
        ip->i_flag = 0;
        free_remove(ip);
        free_insert(ip, true);
    }
    mutex_exit(&s5_icache_lock);
}

/*
 * For the tests: check the cache's invariants under its lock.  Every
 * inode with count -1 is on the free list exactly once and every inode on
 * the free list has count -1; every hashed inode is on the chain of its
 * identity.  Returns the number of violations.
 */
int s5_icache_audit(int *nfree)
{
    int bad = 0, onlist = 0, inactive = 0;
    mutex_enter(&s5_icache_lock);
    for (struct s5_inode *ip = ifree_head; ip && onlist <= S5_NINODE; ip = ip->i_fnext) {
        onlist++;
        if (__atomic_load_n(&ip->i_vnode.v_count, __ATOMIC_ACQUIRE) != -1 || !ip->i_onfree)
            bad++;
    }
    for (int i = 0; i < S5_NINODE && itable[i]; i++) {
        struct s5_inode *ip = itable[i];
        int32_t count = __atomic_load_n(&ip->i_vnode.v_count, __ATOMIC_ACQUIRE);
        if (count == -1)
            inactive++;
        if ((count == -1) != ip->i_onfree)
            bad++;
        if (ip->i_hashed && hash_find(ip->i_fs, ip->i_number) != ip)
            bad++;
    }
    if (onlist != inactive)
        bad++;
    mutex_exit(&s5_icache_lock);
    if (nfree)
        *nfree = onlist;
    return bad;
}
