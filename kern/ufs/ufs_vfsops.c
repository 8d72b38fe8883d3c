/*
 * UFS, the Berkeley Fast File System (McKusick, Joy, Leffler and Fabry, "A
 * Fast File System for UNIX", 1984), on the UFS1 layout 4.4BSD and NetBSD
 * write (kern/ufs/ufs_fs.h, docs/ufs-format.md), under the SVR4 MP locking
 * model of seed 001 as S5 is.  This file holds the theory, mount, unmount,
 * statfs, sync and the buffer helpers; ufs_inode.c reads and writes
 * inodes for the shared inode cache, ufs_bmap.c maps logical blocks to
 * fragments, ufs_dir.c reads directories, ufs_vnops.c has the vnode
 * operations.  The in-core structures and their lock key are in
 * ufs_inode.h.
 *
 * Theory.
 *
 * The disk.  Every address in UFS counts fragments (1 KiB by default) from
 * the start of the file system; a block (8 KiB) is fs_frag fragments.  The
 * buffer cache holds blocks of at most BUF_MAX_SIZE bytes, and two buffers
 * of different sizes over the same bytes would not see each other's
 * changes, so a mounted UFS reads and writes its disk through buffers of
 * one size only, fs_unit: the fragment size, or BUF_MAX_SIZE if that is
 * smaller.  Every piece of metadata lies inside one unit: an inode (128
 * bytes, aligned), a directory chunk (512 bytes, aligned), a pointer of an
 * indirect block, the superblock's fields (read and written by byte range).
 * A directory's or a long link's block is read a unit at a time.  A
 * regular file's data never enters the buffer cache: it lives in the
 * page cache, moved to and from the disk by the page operations
 * (ufs_page.c, which has the rules that keep the two caches apart).
 *
 * In-core inodes.  The inode cache is the one S5 uses (kern/vfs/icache.c:
 * one table for every mounted UFS, hashed on (file system, inode number),
 * inactive inodes on an LRU free list under one mutex, the -1 inactive
 * protocol, iget's identity recheck, the reaper); this file system gives it
 * the reading of an inode (ufs_inode.c), and takes ILOCKED (a resource
 * lock, with the vnode lock) around every use of an inode and IRWLOCKED
 * around a whole read.
 *
 * Names.  Directories hold variable-length entries (names up to 255 bytes)
 * in 512-byte chunks no entry crosses; lookups go through the DNLC first
 * (entered while the directory is ILOCKED, so a removal cannot come in
 * between), then a linear search of the chunks.  ".." is looked up with
 * the directory unlocked, parent before child as in S5.
 *
 * Mounting.  The superblock at byte 8192 is checked before anything
 * believes it (ufs_sb_invalid: magic, sizes and shifts, group geometry,
 * the summary area's place), then the summary area is read and the root
 * inode must be a directory; any failure is a mount error with the reason
 * on the console, never a panic.  Every block pointer read from an inode
 * or an indirect block is checked against the file system before use.
 * A read-write mount marks the superblock not clean (fs_clean 0) at
 * once; sync writes inodes, buffers, the summary area and the superblock;
 * unmount does the same and marks it clean.
 *
 * Allocation (ufs_alloc.c has the policy).  A group block is read whole,
 * changed and written back under that group's allocation lock (fs_cg[c],
 * a resource lock held across that I/O), so allocations in different
 * groups go on at once; no thread holds two of them.  The summary area
 * and the superblock's totals change under fs_lock, a mutex never held
 * across I/O.
 *
 * Tree changes (ufs_namei.c, ufs_rename.c) follow S5's rules: directory
 * before entry, ".." looked up unlocked, rmdir and rename under the file
 * system's rename lock (fs_rename), link counts raised before the entries
 * that need them and lowered after those that drop them.
 *
 * Lock order (outer first): fs_rename -> vnode lock + ILOCKED (directory
 * before entry) -> IRWLOCKED before ILOCKED of one inode -> a group's lock ->
 * buffer busy -> fs_lock, the cache lock -> DNLC row locks.
 */
#include <kern/ufs/ufs_inode.h>
#include <kern/vfs/buf.h>
#include <kern/vfs/dnlc.h>
#include <drivers/block/bio.h>
#include <kern/vm/kmem.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/lib/options.h>
#include <drivers/platform/rtc.h>

LOCK_CLASS(ufs_fs_class, "ufs_fs", LK_MUTEX_SLEEP);
LOCK_CLASS(ufs_cglock_class, "ufs_cglock", LK_RESOURCE);
LOCK_CLASS(ufs_rename_class, "ufs_rename", LK_RESOURCE);

const struct vfssw ufs_vfssw = { .name = "ufs", .ops = &ufs_vfsops, .needs_dev = true };

/* ---- helpers shared by the UFS files ---- */

void ufs_corrupt(struct ufs_fs *fs, const char *fmt, ...)
{
    char msg[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    kprintf("ufs: %s: corrupted file system: %s\n", fs->fs_dev->name, msg);
    WRITE_ONCE(fs->fs_bad, true);
}

struct buf *ufs_bread_byte(struct ufs_fs *fs, uint64_t off, uint32_t *at, int *err)
{
    uint64_t unit = off / fs->fs_unit;
    *at = (uint32_t)(off % fs->fs_unit);
    *err = 0;
    struct buf *bp = bread(fs->fs_dev, unit, fs->fs_unit, err);
    if (!bp && *err == 0)
        *err = -EIO;
    if (!bp)
        kprintf("ufs: %s: cannot read byte %lu: error %d\n", fs->fs_dev->name, off, *err);
    return bp;
}

int ufs_read_bytes(struct ufs_fs *fs, uint64_t off, void *dst, size_t len)
{
    while (len > 0) {
        uint32_t at;
        int err;
        struct buf *bp = ufs_bread_byte(fs, off, &at, &err);
        if (!bp)
            return err;
        size_t n = MIN(len, (size_t)(fs->fs_unit - at));
        memcpy(dst, (char *)bp->b_data + at, n);
        brelse(bp);
        dst = (char *)dst + n;
        off += n;
        len -= n;
    }
    return 0;
}

/* Change len bytes at off through the buffer cache: each unit read
 * (unless wholly replaced), changed by fill, written. */
static int change_bytes(struct ufs_fs *fs, uint64_t off, size_t len, bool sync,
                        void (*fill)(void *dst, const void *src, size_t n), const void *src)
{
    int first_err = 0;
    while (len > 0) {
        uint32_t at = (uint32_t)(off % fs->fs_unit);
        size_t n = MIN(len, (size_t)(fs->fs_unit - at));
        struct buf *bp;
        int err = 0;
        if (n == fs->fs_unit)
            bp = getblk(fs->fs_dev, off / fs->fs_unit, fs->fs_unit);
        else
            bp = ufs_bread_byte(fs, off, &at, &err);
        if (!bp)
            return err;
        fill((char *)bp->b_data + at, src, n);
        if (sync)
            err = bwrite(bp);
        else
            bdwrite(bp);
        first_err = first_err ? first_err : err;
        if (src)
            src = (const char *)src + n;
        off += n;
        len -= n;
    }
    return first_err;
}

static void fill_copy(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}

static void fill_zero(void *dst, const void *src, size_t n)
{
    memset(dst, 0, n);
}

int ufs_write_bytes(struct ufs_fs *fs, uint64_t off, const void *src, size_t len, bool sync)
{
    return change_bytes(fs, off, len, sync, fill_copy, src);
}

int ufs_zero_bytes(struct ufs_fs *fs, uint64_t off, size_t len, bool sync)
{
    return change_bytes(fs, off, len, sync, fill_zero, NULL);
}

uint32_t ufs_now(void)
{
    return (uint32_t)(realtime_ns() / 1000000000ull);
}

bool ufs_syncwrites(void)
{
    return opts.syncwrites != 0;
}

bool ufs_frag_valid(const struct ufs_fs *fs, int64_t f)
{
    return f >= (UFS_SBOFF + UFS_SBSIZE) / fs->fs_sb.fs_fsize && f < fs->fs_sb.fs_size;
}

/* ---- the superblock ---- */

/* What ufs_sb_invalid does not check and the kernel cannot live with. */
static const char *sb_insane(const struct ufs_super *sb)
{
    const struct ufs_csum *t = &sb->fs_cstotal;
    if (sb->fs_inodefmt != UFS_44INODEFMT)
        return "not the 4.4BSD inode format (fs_inodefmt)";
    if (sb->fs_sbsize < (int32_t)sizeof(struct ufs_super) || sb->fs_sbsize > UFS_SBSIZE)
        return "impossible fs_sbsize";
    if (t->cs_nbfree < 0 || t->cs_nffree < 0 || t->cs_nifree < 0 || t->cs_ndir < 0 ||
        (int64_t)t->cs_nbfree * sb->fs_frag + t->cs_nffree > sb->fs_size ||
        (int64_t)t->cs_nifree > (int64_t)sb->fs_ncg * sb->fs_ipg)
        return "the free counts are larger than the file system";
    return NULL;
}

/* Read the superblock at byte 8192 of the disk into fs->fs_sb, through a
 * buffer of BUF_MAX_SIZE bytes (dropped again before the mount uses the
 * file system's own unit). */
static int read_super(struct ufs_fs *fs)
{
    const char *dev = fs->fs_dev->name;
    int err = 0;
    struct buf *bp = bread(fs->fs_dev, UFS_SBOFF / BUF_MAX_SIZE, BUF_MAX_SIZE, &err);
    if (!bp) {
        kprintf("ufs: %s: cannot mount: the superblock cannot be read (error %d)\n", dev, err);
        return err ? err : -EIO;
    }
    memcpy(&fs->fs_sb, (char *)bp->b_data + UFS_SBOFF % BUF_MAX_SIZE, sizeof fs->fs_sb);
    brelse(bp);
    binval(fs->fs_dev);
    const struct ufs_super *sb = &fs->fs_sb;
    uint64_t dev_frags = 0;
    if (sb->fs_fsize > 0 && (sb->fs_fsize & (sb->fs_fsize - 1)) == 0)
        dev_frags = fs->fs_dev->nblocks * fs->fs_dev->bsize / (uint32_t)sb->fs_fsize;
    const char *why = ufs_sb_invalid(sb, dev_frags);
    if (why) {
        kprintf("ufs: %s: cannot mount: %s (magic 0x%x, bsize %d, fsize %d, ncg %d, "
                "fpg %d, ipg %d, size %d)\n", dev, why, sb->fs_magic, sb->fs_bsize,
                sb->fs_fsize, sb->fs_ncg, sb->fs_fpg, sb->fs_ipg, sb->fs_size);
        return sb->fs_magic != UFS1_MAGIC ? -EINVAL : -EUCLEAN;
    }
    why = sb_insane(sb);
    if (why) {
        kprintf("ufs: %s: cannot mount: %s\n", dev, why);
        return -EUCLEAN;
    }
    if (!(sb->fs_clean & UFS_FSCLEAN))
        kprintf("ufs: %s: note: not cleanly unmounted; run fsck.ufs\n", dev);
    return 0;
}

/* Read the summary area (one struct ufs_csum per group). */
static int read_summary(struct ufs_fs *fs)
{
    const struct ufs_super *sb = &fs->fs_sb;
    size_t len = (size_t)sb->fs_ncg * sizeof(struct ufs_csum);
    fs->fs_cs = kzalloc(len);
    if (!fs->fs_cs)
        return -ENOMEM;
    int err = ufs_read_bytes(fs, (uint64_t)sb->fs_csaddr * (uint32_t)sb->fs_fsize, fs->fs_cs, len);
    if (err)
        kprintf("ufs: %s: cannot mount: the summary area cannot be read (error %d)\n",
                fs->fs_dev->name, err);
    return err;
}

/*
 * Write the summary area and the superblock (its first sizeof bytes; the
 * rest of fs_sbsize is kept), marked clean or active, synchronously: the
 * superblock last, so a clean mark never precedes what it vouches for.
 */
static int write_super(struct ufs_fs *fs, bool clean)
{
    struct ufs_super *sb = &fs->fs_sb;
    size_t cslen = (size_t)sb->fs_ncg * sizeof(struct ufs_csum);
    struct ufs_csum *cs = kmalloc(cslen);
    if (!cs)
        return -ENOMEM;
    struct ufs_super copy;
    mutex_enter(&fs->fs_lock);
    sb->fs_time = (int32_t)ufs_now();
    sb->fs_clean = clean && !READ_ONCE(fs->fs_bad) ? UFS_FSCLEAN : 0;
    if (sb->fs_flags & UFS_FLAGS_UPDATED) {
        sb->fs_time64 = sb->fs_time;
        sb->fs_cstotal64.cs_ndir = sb->fs_cstotal.cs_ndir;
        sb->fs_cstotal64.cs_nbfree = sb->fs_cstotal.cs_nbfree;
        sb->fs_cstotal64.cs_nifree = sb->fs_cstotal.cs_nifree;
        sb->fs_cstotal64.cs_nffree = sb->fs_cstotal.cs_nffree;
    }
    memcpy(cs, fs->fs_cs, cslen);
    copy = *sb;
    fs->fs_fmod = false;
    mutex_exit(&fs->fs_lock);
    copy.fs_fmod = copy.fs_ronly = 0;
    int err = ufs_write_bytes(fs, (uint64_t)sb->fs_csaddr * (uint32_t)sb->fs_fsize, cs, cslen, true);
    kfree(cs);
    int e = bflush(fs->fs_dev);
    err = err ? err : e;
    e = ufs_write_bytes(fs, UFS_SBOFF, &copy, sizeof copy, true);
    return err ? err : e;
}

/* ---- vfsops ---- */

static struct ufs_fs *fs_create(struct vfs *vfsp)
{
    struct ufs_fs *fs = kzalloc(sizeof *fs);
    if (!fs)
        return NULL;
    fs->fs_vfs = vfsp;
    fs->fs_dev = vfsp->vfs_dev;
    fs->fs_rdonly = (vfsp->vfs_flag & VFS_RDONLY) != 0;
    mutex_init(&fs->fs_lock, &ufs_fs_class, MUTEX_SLEEP, "ufs_fs");
    rlock_init(&fs->fs_rename, &ufs_rename_class, "ufs_rename");
    return fs;
}

static void fs_destroy(struct ufs_fs *fs)
{
    rlock_destroy(&fs->fs_rename);
    for (int32_t c = 0; fs->fs_cg && c < fs->fs_sb.fs_ncg; c++) {
        rlock_destroy(&fs->fs_cg[c].lock);
        kfree(fs->fs_cg[c].buf);
    }
    kfree(fs->fs_cg);
    mutex_destroy(&fs->fs_lock);
    kfree(fs->fs_cs);
    kfree(fs);
}

static int mount_root(struct ufs_fs *fs)
{
    struct ufs_inode *ip;
    int err = ufs_iget(fs, UFS_ROOTINO, &ip);
    if (err)
        return err;
    if (UFS_ITOV(ip)->v_type != VDIR) {
        ufs_corrupt(fs, "root inode %u is not a directory (mode 0%o)", UFS_ROOTINO, ip->i_mode);
        ufs_iput(ip);
        return -EUCLEAN;
    }
    UFS_ITOV(ip)->v_flag |= VROOT;
    IUNLOCK(ip);
    fs->fs_root = ip;
    return 0;
}

/* Each group's allocation lock (its block's copy comes at first use). */
static int make_group_slots(struct ufs_fs *fs)
{
    fs->fs_cg = kzalloc(sizeof *fs->fs_cg * (size_t)fs->fs_sb.fs_ncg);
    if (!fs->fs_cg)
        return -ENOMEM;
    for (int32_t c = 0; c < fs->fs_sb.fs_ncg; c++)
        rlock_init(&fs->fs_cg[c].lock, &ufs_cglock_class, "ufs_cglock");
    return 0;
}

/* The superblock, the summary and the root, in that order. */
static int mount_fs(struct ufs_fs *fs)
{
    int err = read_super(fs);
    if (err)
        return err;
    fs->fs_unit = (uint32_t)MIN(fs->fs_sb.fs_fsize, BUF_MAX_SIZE);
    if (fs->fs_unit % fs->fs_dev->bsize) {
        kprintf("ufs: %s: cannot mount: fragment size %d is not a multiple of the disk's "
                "block size %u\n", fs->fs_dev->name, fs->fs_sb.fs_fsize, fs->fs_dev->bsize);
        return -EINVAL;
    }
    err = read_summary(fs);
    if (!err)
        err = make_group_slots(fs);
    return err ? err : mount_root(fs);
}

static int ufs_mount(struct vfs *vfsp, struct cred *cr)
{
    struct blkdev *dev = vfsp->vfs_dev;
    if (!dev)
        return -ENODEV;
    if (dev->bsize == 0 || BUF_MAX_SIZE % dev->bsize != 0) {
        kprintf("ufs: %s: cannot mount: device block size %u\n", dev->name, dev->bsize);
        return -EINVAL;
    }
    ufs_icache_init();
    if (blk_claim(dev, "ufs") != 0) {
        kprintf("ufs: %s: cannot mount: the disk is in use\n", dev->name);
        return -EBUSY;
    }
    struct ufs_fs *fs = fs_create(vfsp);
    int err = fs ? mount_fs(fs) : -ENOMEM;
    if (err) {
        if (fs) {
            ufs_ievict(fs);
            fs_destroy(fs);
        }
        binval(dev);
        blk_unclaim(dev);
        return err;
    }
    vfsp->vfs_data = fs;
    vfsp->vfs_bsize = (uint32_t)fs->fs_sb.fs_bsize;
    if (!fs->fs_rdonly && (err = write_super(fs, false)))
        kprintf("ufs: %s: cannot mark the superblock active: error %d\n", dev->name, err);
    return 0;
}

/* Everything of fs to disk: inodes, buffers, then the summary area and
 * the superblock, marked clean or not. */
static int sync_fs(struct ufs_fs *fs, bool clean)
{
    if (fs->fs_rdonly)
        return 0;
    int err = ufs_iflush_pages(fs);     /* first: a write-back may fill holes */
    int e = ufs_iflush(fs);
    err = err ? err : e;
    e = bflush(fs->fs_dev);
    err = err ? err : e;
    e = write_super(fs, clean);
    return err ? err : e;
}

static int sync_clean(void *fs)
{
    return sync_fs(fs, true);
}

static int ufs_unmount(struct vfs *vfsp, struct cred *cr)
{
    struct ufs_fs *fs = vfsp->vfs_data;
    bool still_used;
    int err = ufs_iunmount(fs, sync_clean, &still_used);
    if (err == -EBUSY)
        return err;
    vfsp->vfs_data = NULL;
    if (still_used)
        fs->fs_rdonly = true;               /* stays, read-only, for the root's inode */
    else
        fs_destroy(fs);
    return err;
}

static int ufs_root(struct vfs *vfsp, struct vnode **vpp)
{
    struct ufs_fs *fs = vfsp->vfs_data;
    VN_HOLD(UFS_ITOV(fs->fs_root));
    *vpp = UFS_ITOV(fs->fs_root);
    return 0;
}

/* As Linux's ufs reports it: fragments as the unit. */
static int ufs_statfs(struct vfs *vfsp, struct kstatfs *st)
{
    struct ufs_fs *fs = vfsp->vfs_data;
    memset(st, 0, sizeof *st);
    mutex_enter(&fs->fs_lock);
    const struct ufs_super *sb = &fs->fs_sb;
    st->f_type = UFS_STATFS_MAGIC;
    st->f_bsize = (uint32_t)sb->fs_fsize;
    st->f_blocks = (uint64_t)sb->fs_dsize;
    st->f_bfree = (uint64_t)sb->fs_cstotal.cs_nbfree * (uint32_t)sb->fs_frag +
                  (uint64_t)sb->fs_cstotal.cs_nffree;
    st->f_files = (uint64_t)sb->fs_ncg * (uint32_t)sb->fs_ipg;
    st->f_ffree = (uint64_t)sb->fs_cstotal.cs_nifree;
    mutex_exit(&fs->fs_lock);
    st->f_namelen = UFS_MAXNAMLEN;
    st->f_fsid = vfsp->vfs_fsid;
    return 0;
}

static int ufs_sync(struct vfs *vfsp, struct cred *cr)
{
    return sync_fs(vfsp->vfs_data, false);
}

const struct vfsops ufs_vfsops = {
    .vfs_mount = ufs_mount,
    .vfs_unmount = ufs_unmount,
    .vfs_root = ufs_root,
    .vfs_statfs = ufs_statfs,
    .vfs_sync = ufs_sync,
};
