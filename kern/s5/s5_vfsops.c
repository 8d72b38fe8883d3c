/*
 * The S5 file system: System V Release 4's disk layout, byte for byte as
 * Linux's sysv driver reads it (kern/s5/s5_fs.h, docs/s5-format.md), under the SVR4 MP locking model (Peacock, "File
 * System Multithreading in System V Release 4 MP", seed 001).  This file
 * holds the theory, mount/unmount/sync/statfs and the buffer helpers; the
 * rest is in s5_inode.c (inode cache, iget, inactive, truncate),
 * s5_alloc.c (free lists), s5_bmap.c (block mapping), s5_dir.c
 * (directory entries), s5_vnops.c, s5_namei.c and s5_rename.c (the vnode
 * operations), and s5_mkfs.c and s5_check.c (an in-kernel mkfs and fsck
 * for RAM disks and tests).  The in-core structures and their lock key are in
 * s5_inode.h.
 *
 * Theory.
 *
 * In-core inodes.  One table of S5_NINODE in-core inodes serves every
 * mounted S5 file system.  Each embeds its vnode (v_data points back).
 * The inodes are hashed on (file system, inode number) and the inactive
 * ones sit on one LRU free list; the hash chains, the free list and each
 * inode's identity are under ONE mutex, s5_icache_lock, as the paper found
 * sufficient ("a single lock has been used for the entire collection of
 * inode hash queues and the inode free list").  An inactive inode keeps
 * its identity and contents, so iget finds it again without the disk.
 * The cache's code (this and the next three paragraphs) is shared with
 * UFS: kern/vfs/icache.c; S5 gives it the reading and inactivation of
 * its inodes (kern/s5/s5_inode.c).
 *
 * The -1 protocol (seed 001, "VN_HOLD/VN_RELE Locking").  v_count is
 * changed by atomic VN_HOLD/VN_RELE.  When VN_RELE takes it to 0 it calls
 * s5_inactive, but 0 does not mean inactive: a concurrent iget may find the
 * inode and VN_HOLD it.  s5_inactive does its work (free a file with no
 * links; write back a modified inode) under ILOCK only while the count is
 * still 0, then, under the cache lock, sets the count to -1 and puts the
 * inode on the free list only if it is STILL 0.  iget, under the same
 * lock, turns a -1 back into 0 (taking the inode off the free list) before
 * its VN_HOLD.  So an inode is put on the free list once however the
 * releases and lookups interleave, and a second inactivation finds a count
 * other than 0 and does nothing.  The -1 is set while the inactivating
 * thread still holds ILOCK, so no other inactivation can slip between its
 * work and the free list.
 *
 * Inactivation under other inode locks: the reaper.  VN_RELE can reach 0
 * while the releasing thread holds other ILOCKs -- a DNLC enter during a
 * lookup (directory and child locked) evicts an entry and drops its
 * references; an iget on a full table purges the DNLC.  The inode it
 * releases is arbitrary, so waiting for its ILOCK there breaks the parent-
 * before-child order: a thread that revived that inode may hold it and wait
 * for one of ours.  (This deadlock hung s5_mp and fs_mp now and then.)  So
 * a thread that holds any kept lock only tries the ILOCK, and on failure
 * queues the inode to the reaper thread, which waits for it holding
 * nothing else; unmount drains the queue before counting busy inodes.
 *
 * iget.  Under the cache lock: find the inode (reviving it if -1, then
 * VN_HOLD) or take the head of the free list and give it the new identity.
 * Then ILOCK, which can sleep; so after it the identity (fs, ino) is
 * checked again, since a failed read by another thread may have dropped it
 * meanwhile ("recheck after the vnode is locked that the inode obtained
 * still matches the identity").  Whoever first holds ILOCK on a fresh
 * inode reads it from disk.  When no in-core inode is free, iget calls
 * dnlc_purge1 over and over: the last reference to many inodes is the
 * DNLC's, and purging it inactivates them onto the free list; -ENFILE only
 * when the DNLC is empty too.
 *
 * Inode locks.  ILOCKED and IRWLOCKED are resource locks (struct rlock),
 * held across disk I/O; a release wakes one waiter with wake1proc
 * (wakeup=one) or all (wakeup=all), as kern/lock/rlock.c does for every
 * resource lock.  ILOCK and IRWLOCK also take the vnode lock, and IUNLOCK
 * and IRWUNLOCK release it, so that the two flags held by two threads
 * never let those threads run in the inode at the same time (the paper's
 * emulation of uniprocessor semantics).  Reads and writes hold IRWLOCKED
 * throughout and ILOCKED a block at a time, so stat gets in between.
 * Directory operations hold the directory's ILOCKED across the search and
 * the update, and take an entry's inode (iget) while holding it.
 *
 * Free lists.  The in-core superblock is under the per-file-system mutex
 * fs_lock, never taken recursively.  Because any sleep releases a mutex,
 * changes that need I/O in the middle also hold a resource lock: fs_flock
 * for the free-block chain (reading the next chain block, writing a full
 * cache out as a new chain block), fs_ilist for the inode scan that
 * refills the free-inode cache.  The superblock is consistent whenever
 * fs_lock is free.  Every block number taken from the free list, an inode
 * or an indirect block is checked against the data area; a bad one fails
 * that operation with -EUCLEAN and a console message, and the file system
 * is marked FsBAD on disk at the next superblock write, so fsck.s5 looks.
 *
 * The ialloc/ifree race (seed 001).  ialloc takes an inode number from the
 * cache under fs_lock and releases fs_lock BEFORE iget: iget may purge the
 * DNLC, whose VN_RELE may inactivate an unlinked file, whose ifree takes
 * fs_lock -- which, held by ialloc, would deadlock.  With the lock
 * released two allocators can get the same number (a refill scan may have
 * put back one being allocated), so after iget ialloc checks di_mode and
 * drops and retries an inode that is already allocated.  Before the
 * superblock is written, cache entries found allocated are dropped, so
 * the hint fsck.s5 checks is exact.
 *
 * Directory tree.  Locks go parent before child; ".." is looked up with
 * the child unlocked.  rename and rmdir take the file system's rename lock
 * (fs_rename) first, so directories do not move while rename checks that a
 * directory is not moved below itself and while it updates the tree one
 * directory at a time; the link count rules (2 + subdirectories for a
 * directory) are kept at each step.
 *
 * Synchronous writes.  With syncwrites=on (SVR3's behaviour) inode and
 * directory updates of structural changes (create, remove, link, rename,
 * mkdir, rmdir, symlink, setattr, freeing) and new indirect and chain
 * blocks are written with bwrite; with syncwrites=off (seed 001's
 * "benchmark flag") they are delayed writes.  File data is a delayed write
 * unless IO_SYNC.  sync writes every modified inode, then the buffers
 * (bflush), then the superblock; unmount does the same and marks the
 * superblock clean (S5_FSOKAY - s_time); mount marks it active.
 *
 * Lock order (outer first):
 *   fs_rename  ->  vnode lock + ILOCKED (directory before entry; a
 *   directory being searched before the inode iget returns)  ->
 *   IRWLOCKED before ILOCKED of one inode  ->  fs_ilist  ->  fs_flock  ->
 *   buffer busy  ->  fs_lock, s5_icache_lock  ->  DNLC row locks.
 * A vnode lock is a sleeping mutex and is released whenever its holder
 * sleeps, so the vnode/ILOCKED pairs form no deadlock among themselves;
 * witness, which checks classes, does see "vnode" and "s5_ilock" taken in
 * both orders (ILOCK of a directory, then of its entry) -- the seed 001
 * design, not a deadlock.
 */
#include <kern/s5/s5_inode.h>
#include <kern/vfs/buf.h>
#include <kern/vfs/dnlc.h>
#include <drivers/block/bio.h>
#include <kern/vm/kmem.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>

LOCK_CLASS(s5_fs_class, "s5_fs", LK_MUTEX_SLEEP);
LOCK_CLASS(s5_flock_class, "s5_flock", LK_RESOURCE);
LOCK_CLASS(s5_ilist_class, "s5_ilist", LK_RESOURCE);
LOCK_CLASS(s5_rename_class, "s5_rename", LK_RESOURCE);

const struct vfssw s5_vfssw = { .name = "s5", .ops = &s5_vfsops, .needs_dev = true };

/* statfs's f_type: what Linux's sysv driver reports for an SVR4 file
 * system (SYSV_MAGIC_BASE + FSTYPE_SYSV4), so `stat -f` agrees. */
#define S5_STATFS_MAGIC 0x012FF7B5u

/* ---- helpers shared by the S5 files ---- */

void s5_corrupt(struct s5_fs *fs, const char *fmt, ...)
{
    char msg[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    kprintf("s5: %s: corrupted file system: %s\n", fs->fs_dev->name, msg);
    WRITE_ONCE(fs->fs_bad, true);
}

struct buf *s5_bread(struct s5_fs *fs, uint32_t bno, int *err)
{
    struct buf *bp = bread(fs->fs_dev, bno, S5_BSIZE, err);
    if (!bp && *err == 0)
        *err = -EIO;
    if (!bp)
        kprintf("s5: %s: cannot read block %u: error %d\n", fs->fs_dev->name, bno, *err);
    return bp;
}

struct buf *s5_getblk(struct s5_fs *fs, uint32_t bno)
{
    return getblk(fs->fs_dev, bno, S5_BSIZE);
}

/* bwrite and bdwrite mark the contents valid (B_DONE) themselves. */
int s5_bwrite_meta(struct buf *bp, bool sync)
{
    if (sync)
        return bwrite(bp);
    bdwrite(bp);
    return 0;
}

/* ---- the superblock ---- */

/*
 * What s5_sb_invalid does not check and the kernel cannot live with.
 * Bad entries in the free caches are not refused here: they fail the
 * operation that takes them (the allocation), as fsck.s5's corruption
 * matrix expects of the kernel.
 */
static const char *sb_insane(const struct s5_super *sb)
{
    if (sb->s_tfree > sb->s_fsize - sb->s_isize)
        return "s_tfree is larger than the data area";
    if (sb->s_tinode > s5_ninodes(sb))
        return "s_tinode is larger than the inode list";
    if (s5_ninodes(sb) < S5_ROOTINO)
        return "the inode list has no root inode";
    if (sb->s_state == S5_FSBAD)
        return "marked bad (FsBAD); run fsck.s5";
    return NULL;
}

/*
 * Look at the first chain block of the free list now, so that a broken
 * chain is known before an allocation needs it: allocation is then refused
 * (-EUCLEAN) rather than wandering into garbage later.
 */
static void check_chain_head(struct s5_fs *fs)
{
    const struct s5_super *sb = &fs->fs_sb;
    if (sb->s_nfree == 0 || sb->s_free[0] == 0)
        return;
    uint32_t b = sb->s_free[0];
    if (!s5_bno_valid(sb, b)) {
        s5_corrupt(fs, "free-list chain pointer %u out of range [%u, %u); no block will be "
                   "allocated", b, sb->s_isize, sb->s_fsize);
        fs->fs_freebad = true;
        return;
    }
    int err = 0;
    struct buf *bp = s5_bread(fs, b, &err);
    if (!bp) {
        fs->fs_freebad = true;
        return;
    }
    uint32_t n = ((const struct s5_fblk *)bp->b_data)->df_nfree;
    brelse(bp);
    if (n > S5_NICFREE) {
        s5_corrupt(fs, "free-list chain block %u has df_nfree %u (0..%d allowed); "
                   "no block will be allocated", b, n, S5_NICFREE);
        fs->fs_freebad = true;
    }
}

/*
 * Write the in-core superblock to the second half of block 0, marked clean
 * or active.  The first half, the boot sector, is read and kept.
 */
static int write_super(struct s5_fs *fs, bool clean)
{
    int err = 0;
    struct buf *bp = s5_bread(fs, S5_SUPERBLOCK, &err);
    if (!bp)
        return err;
    struct s5_super *sb = (struct s5_super *)(bp->b_data + S5_SBOFF);
    uint32_t now = s5_now();
    mutex_enter(&fs->fs_lock);
    if (clean)
        s5_sb_set_clean(&fs->fs_sb, now);
    else
        s5_sb_set_active(&fs->fs_sb, now);
    if (READ_ONCE(fs->fs_bad))
        fs->fs_sb.s_state = S5_FSBAD;
    *sb = fs->fs_sb;
    fs->fs_fmod = false;
    mutex_exit(&fs->fs_lock);
    sb->s_flock = sb->s_ilock = sb->s_fmod = sb->s_ronly = 0;
    return s5_bwrite_meta(bp, true);
}

/* Read and check the superblock of dev into fs->fs_sb. */
static int read_super(struct s5_fs *fs)
{
    const char *dev = fs->fs_dev->name;
    int err = 0;
    struct buf *bp = s5_bread(fs, S5_SUPERBLOCK, &err);
    if (!bp)
        return err;
    memcpy(&fs->fs_sb, bp->b_data + S5_SBOFF, sizeof fs->fs_sb);
    brelse(bp);
    const struct s5_super *sb = &fs->fs_sb;
    const char *why = s5_sb_invalid(sb, fs->fs_devblocks);
    if (why) {
        kprintf("s5: %s: cannot mount: %s (magic 0x%08x, type %u, s_isize %u, s_fsize %u, "
                "device %lu blocks, s_nfree %u, s_ninode %u)\n", dev, why, sb->s_magic,
                sb->s_type, sb->s_isize, sb->s_fsize, fs->fs_devblocks, sb->s_nfree,
                sb->s_ninode);
        return sb->s_magic != S5_MAGIC || sb->s_type != S5_TYPE_1K ? -EINVAL : -EUCLEAN;
    }
    why = sb_insane(sb);
    if (why) {
        kprintf("s5: %s: cannot mount: %s\n", dev, why);
        return -EUCLEAN;
    }
    if (!s5_sb_is_clean(sb))
        kprintf("s5: %s: note: not cleanly unmounted (s_state 0x%08x); run fsck.s5\n", dev,
                sb->s_state);
    return 0;
}

/* ---- vfsops ---- */

static struct s5_fs *fs_create(struct vfs *vfsp)
{
    struct s5_fs *fs = kzalloc(sizeof *fs);
    if (!fs)
        return NULL;
    fs->fs_vfs = vfsp;
    fs->fs_dev = vfsp->vfs_dev;
    fs->fs_devblocks = vfsp->vfs_dev->nblocks * vfsp->vfs_dev->bsize / S5_BSIZE;
    fs->fs_rdonly = (vfsp->vfs_flag & VFS_RDONLY) != 0;
    fs->fs_hashid = vfsp->vfs_fsid;
    mutex_init(&fs->fs_lock, &s5_fs_class, MUTEX_SLEEP, "s5_fs");
    rlock_init(&fs->fs_flock, &s5_flock_class, "s5_flock");
    rlock_init(&fs->fs_ilist, &s5_ilist_class, "s5_ilist");
    rlock_init(&fs->fs_rename, &s5_rename_class, "s5_rename");
    return fs;
}

static void fs_destroy(struct s5_fs *fs)
{
    rlock_destroy(&fs->fs_rename);
    rlock_destroy(&fs->fs_ilist);
    rlock_destroy(&fs->fs_flock);
    mutex_destroy(&fs->fs_lock);
    kfree(fs);
}

static int mount_root(struct s5_fs *fs)
{
    struct s5_inode *ip;
    int err = s5_iget(fs, S5_ROOTINO, &ip);
    if (err)
        return err;
    if (ITOV(ip)->v_type != VDIR) {
        s5_corrupt(fs, "root inode %u is not a directory (mode 0%o)", S5_ROOTINO, ip->i_mode);
        s5_iput(ip);
        return -EUCLEAN;
    }
    ITOV(ip)->v_flag |= VROOT;
    IUNLOCK(ip);
    fs->fs_root = ip;
    return 0;
}

static int s5_mount(struct vfs *vfsp, struct cred *cr)
{
    struct blkdev *dev = vfsp->vfs_dev;
    if (!dev)
        return -ENODEV;
    if (dev->bsize == 0 || S5_BSIZE % dev->bsize != 0) {
        kprintf("s5: %s: cannot mount: device block size %u does not divide %d\n", dev->name,
                dev->bsize, S5_BSIZE);
        return -EINVAL;
    }
    s5_icache_init();
    /* The disk is ours while mounted: no second mount, no raw writer. */
    if (blk_claim(dev, "s5") != 0) {
        kprintf("s5: %s: cannot mount: the disk is in use\n", dev->name);
        return -EBUSY;
    }
    struct s5_fs *fs = fs_create(vfsp);
    int err = fs ? read_super(fs) : -ENOMEM;
    if (!err)
        err = mount_root(fs);
    if (err) {
        if (fs) {
            s5_ievict(fs);
            binval(dev);
            fs_destroy(fs);
        }
        blk_unclaim(dev);
        return err;
    }
    vfsp->vfs_data = fs;
    vfsp->vfs_bsize = S5_BSIZE;
    if (!fs->fs_rdonly) {
        check_chain_head(fs);
        s5_icache_sanitize(fs);
        err = write_super(fs, false);
        if (err)
            kprintf("s5: %s: cannot mark the superblock active: error %d\n", dev->name, err);
    }
    return 0;
}

/* Write everything of fs to disk; the superblock last, marked clean or
 * active. */
static int sync_fs(struct s5_fs *fs, bool clean)
{
    if (fs->fs_rdonly)
        return 0;
    int err = s5_iflush(fs);
    s5_icache_sanitize(fs);
    int e = bflush(fs->fs_dev);
    err = err ? err : e;
    e = write_super(fs, clean);
    return err ? err : e;
}

static int sync_clean(void *fs)
{
    return sync_fs(fs, true);
}

static int s5_unmount(struct vfs *vfsp, struct cred *cr)
{
    struct s5_fs *fs = vfsp->vfs_data;
    bool still_used;
    int err = s5_iunmount(fs, sync_clean, &still_used);
    if (err == -EBUSY)
        return err;
    vfsp->vfs_data = NULL;
    if (still_used)
        fs->fs_rdonly = true;               /* stays, read-only, for the root's inode */
    else
        fs_destroy(fs);
    return err;
}

static int s5_root(struct vfs *vfsp, struct vnode **vpp)
{
    struct s5_fs *fs = vfsp->vfs_data;
    VN_HOLD(ITOV(fs->fs_root));
    *vpp = ITOV(fs->fs_root);
    return 0;
}

static int s5_statfs(struct vfs *vfsp, struct kstatfs *st)
{
    struct s5_fs *fs = vfsp->vfs_data;
    memset(st, 0, sizeof *st);
    mutex_enter(&fs->fs_lock);
    st->f_type = S5_STATFS_MAGIC;
    st->f_bsize = S5_BSIZE;
    st->f_blocks = fs->fs_sb.s_fsize - fs->fs_sb.s_isize;
    st->f_bfree = fs->fs_sb.s_tfree;
    st->f_files = s5_ninodes(&fs->fs_sb);
    st->f_ffree = fs->fs_sb.s_tinode;
    mutex_exit(&fs->fs_lock);
    st->f_namelen = S5_DIRSIZ;
    st->f_fsid = vfsp->vfs_fsid;
    return 0;
}

static int s5_sync(struct vfs *vfsp, struct cred *cr)
{
    return sync_fs(vfsp->vfs_data, false);
}

const struct vfsops s5_vfsops = {
    .vfs_mount = s5_mount,
    .vfs_unmount = s5_unmount,
    .vfs_root = s5_root,
    .vfs_statfs = s5_statfs,
    .vfs_sync = s5_sync,
};
