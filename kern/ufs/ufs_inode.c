/*
 * UFS in-core inodes: what the shared inode cache (kern/vfs/icache.c)
 * needs of UFS -- reading an inode from its group's inode blocks and
 * checking it, the work of an inactivation -- and writing an inode back.
 * Theory in kern/ufs/ufs_vfsops.c; lock key in kern/ufs/ufs_inode.h.
 */
#include <kern/ufs/ufs_inode.h>
#include <kern/vfs/buf.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>

LOCK_CLASS(ufs_icache_class, "ufs_icache", LK_MUTEX_SLEEP);
LOCK_CLASS(ufs_ilock_class, "ufs_ilock", LK_RESOURCE);
LOCK_CLASS(ufs_irwlock_class, "ufs_irwlock", LK_RESOURCE);
LOCK_CLASS(ufs_reap_class, "ufs_reap", LK_MUTEX_SLEEP);

static struct icstats ufs_icstats;
static const struct icache_ops ufs_icache_ops;

/* The UFS inode cache: constant fields here, the rest the cache's. */
static struct icache ufs_icache = {
    .name = "ufs",
    .ninode = UFS_NINODE,
    .node_size = sizeof(struct ufs_inode),
    .vnops = &ufs_vnodeops,
    .ops = &ufs_icache_ops,
    .cache_class = &ufs_icache_class,
    .ilock_class = &ufs_ilock_class,
    .irwlock_class = &ufs_irwlock_class,
    .reap_class = &ufs_reap_class,
    .stats = &ufs_icstats,
};

void ufs_icache_init(void)
{
    icache_init(&ufs_icache);
}

static enum vtype vtype_of(uint16_t mode)
{
    switch (mode & UFS_IFMT) {
    case UFS_IFREG: return VREG;
    case UFS_IFDIR: return VDIR;
    case UFS_IFLNK: return VLNK;
    case UFS_IFCHR: return VCHR;
    case UFS_IFBLK: return VBLK;
    case UFS_IFIFO: return VFIFO;
    case UFS_IFSOCK: return VSOCK;
    default:        return VNON;
    }
}

/* The largest file the pointers of an inode reach, in bytes. */
static uint64_t max_file_size(const struct ufs_super *sb)
{
    uint64_t n = (uint64_t)sb->fs_nindir, blocks = UFS_NDADDR + n + n * n + n * n * n;
    uint64_t limit = blocks << sb->fs_bshift;
    return limit < ((uint64_t)1 << 62) ? limit : (uint64_t)1 << 62;
}

/* Check what a disk inode claims before anyone believes it. */
static const char *dinode_invalid(const struct ufs_fs *fs, const struct ufs_dinode *di)
{
    if (di->di_mode == 0)
        return NULL;                        /* a free inode */
    if (vtype_of(di->di_mode) == VNON)
        return "unknown file type";
    if (di->di_nlink < 0)
        return "negative link count";
    if (di->di_size > max_file_size(&fs->fs_sb))
        return "size past the largest file";
    if ((di->di_mode & UFS_IFMT) == UFS_IFDIR &&
        (di->di_size % UFS_DIRBLKSIZ != 0 || di->di_size == 0))
        return "directory size not a multiple of 512";
    return NULL;
}

/* Read ip (ILOCKED, identity set) from its disk block: the cache's read. */
static int iread(struct icnode *icp)
{
    struct ufs_inode *ip = (struct ufs_inode *)icp;
    struct ufs_fs *fs = ip->i_fs;
    uint32_t at;
    int err;
    struct buf *bp = ufs_bread_byte(fs, ufs_ino_to_byte(&fs->fs_sb, ip->i_number), &at, &err);
    if (!bp)
        return err;
    const struct ufs_dinode *di = (const struct ufs_dinode *)((char *)bp->b_data + at);
    const char *why = dinode_invalid(fs, di);
    if (why) {
        ufs_corrupt(fs, "inode %u: %s (mode 0%o, size %lu)", ip->i_number, why, di->di_mode,
                    (unsigned long)di->di_size);
        brelse(bp);
        return -EUCLEAN;
    }
    ip->i_mode = di->di_mode;
    ip->i_nlink = di->di_nlink;
    ip->i_uid = di->di_uid;
    ip->i_gid = di->di_gid;
    ip->i_size = di->di_size;
    memcpy(ip->i_db, di->di_db, sizeof ip->i_db);
    memcpy(ip->i_ib, di->di_ib, sizeof ip->i_ib);
    ip->i_flags = di->di_flags;
    ip->i_blocks = di->di_blocks;
    ip->i_gen = di->di_gen;
    ip->i_atime = di->di_atime;
    ip->i_atimensec = di->di_atimensec;
    ip->i_mtime = di->di_mtime;
    ip->i_mtimensec = di->di_mtimensec;
    ip->i_ctime = di->di_ctime;
    ip->i_ctimensec = di->di_ctimensec;
    brelse(bp);
    ip->i_vnode.v_type = vtype_of(ip->i_mode);
    bool dev = ip->i_vnode.v_type == VCHR || ip->i_vnode.v_type == VBLK;
    /* 4.4BSD's dev_t as NetBSD's makedev packs it is Linux's encoding. */
    ip->i_vnode.v_rdev = dev ? (uint32_t)ip->i_db[0] : 0;
    return 0;
}

int ufs_iupdat(struct ufs_inode *ip, bool sync)
{
    struct ufs_fs *fs = ip->i_fs;
    if (fs->fs_rdonly) {
        ip->i_flag &= ~IMOD;
        return 0;
    }
    uint32_t at;
    int err;
    struct buf *bp = ufs_bread_byte(fs, ufs_ino_to_byte(&fs->fs_sb, ip->i_number), &at, &err);
    if (!bp)
        return err;
    struct ufs_dinode *di = (struct ufs_dinode *)((char *)bp->b_data + at);
    di->di_mode = ip->i_mode;
    di->di_nlink = ip->i_nlink;
    di->di_uid = ip->i_uid;
    di->di_gid = ip->i_gid;
    di->di_size = ip->i_size;
    memcpy(di->di_db, ip->i_db, sizeof ip->i_db);
    memcpy(di->di_ib, ip->i_ib, sizeof ip->i_ib);
    di->di_flags = ip->i_flags;
    di->di_blocks = ip->i_blocks;
    di->di_gen = ip->i_gen;
    di->di_atime = ip->i_atime;
    di->di_atimensec = ip->i_atimensec;
    di->di_mtime = ip->i_mtime;
    di->di_mtimensec = ip->i_mtimensec;
    di->di_ctime = ip->i_ctime;
    di->di_ctimensec = ip->i_ctimensec;
    ip->i_flag &= ~IMOD;
    if (sync)
        return bwrite(bp);
    bdwrite(bp);
    return 0;
}

int ufs_iget(struct ufs_fs *fs, uint32_t ino, struct ufs_inode **ipp)
{
    const struct ufs_super *sb = &fs->fs_sb;
    if (ino < UFS_ROOTINO || ino >= (uint64_t)sb->fs_ncg * (uint32_t)sb->fs_ipg) {
        ufs_corrupt(fs, "inode number %u outside the inodes (2..%lu)", ino,
                    (unsigned long)sb->fs_ncg * (uint32_t)sb->fs_ipg - 1);
        return -EUCLEAN;
    }
    return icache_iget(&ufs_icache, fs, ino, false, (struct icnode **)ipp);
}

void ufs_iput(struct ufs_inode *ip)
{
    icache_iput(ICNODE(ip));
}

void ufs_itimes(struct ufs_inode *ip, int which)
{
    int32_t now = (int32_t)ufs_now();
    if (which & UFS_ACC)
        ip->i_atime = now, ip->i_atimensec = 0;
    if (which & UFS_UPD)
        ip->i_mtime = now, ip->i_mtimensec = 0;
    if (which & UFS_CHG)
        ip->i_ctime = now, ip->i_ctimensec = 0;
    ip->i_flag |= IMOD;
}

/*
 * A new inode: a number from the maps, then iget.  The number was free in
 * the map under its group's lock, and only an inode with a mode is in use,
 * so a mode found on it means the map and the inode disagree: corruption.
 */
int ufs_ialloc(struct ufs_inode *dp, uint16_t mode, struct ufs_inode **ipp)
{
    struct ufs_fs *fs = dp->i_fs;
    bool dir = (mode & UFS_IFMT) == UFS_IFDIR;
    uint32_t ino;
    int err = ufs_ino_alloc(dp, dir, &ino);
    if (err)
        return err;
    struct ufs_inode *ip;
    err = ufs_iget(fs, ino, &ip);
    if (err) {
        ufs_ino_free(fs, ino, dir);
        return err;
    }
    if (ip->i_mode != 0) {
        ufs_corrupt(fs, "inode %u is free in its map but has mode 0%o", ino, ip->i_mode);
        ufs_iput(ip);
        return -EUCLEAN;
    }
    int32_t gen = ip->i_gen + 1;
    memset(&ip->i_mode, 0, sizeof *ip - offsetof(struct ufs_inode, i_mode));
    ip->i_mode = mode;
    ip->i_gen = gen;
    ip->i_vnode.v_type = vtype_of(mode);
    ip->i_vnode.v_rdev = 0;
    ufs_itimes(ip, UFS_ACC | UFS_UPD | UFS_CHG);
    *ipp = ip;
    return 0;
}

/* With ILOCK, the count 0: a file with no links loses its blocks and its
 * inode; a modified one is written back. */
static void inactive_work(struct icnode *icp)
{
    struct ufs_inode *ip = (struct ufs_inode *)icp;
    struct ufs_fs *fs = ip->i_fs;
    if (fs->fs_rdonly)
        return;
    if (ip->i_nlink <= 0 && ip->i_mode != 0) {
        bool dir = (ip->i_mode & UFS_IFMT) == UFS_IFDIR;
        ufs_itrunc(ip, 0);
        ip->i_mode = 0;
        ip->i_vnode.v_type = VNON;
        ip->i_blocks = 0;
        memset(ip->i_db, 0, sizeof ip->i_db);
        memset(ip->i_ib, 0, sizeof ip->i_ib);
        ufs_itimes(ip, UFS_CHG);
        ufs_iupdat(ip, ufs_syncwrites());
        ufs_ino_free(fs, ip->i_number, dir);
    } else if (ip->i_flag & IMOD) {
        ufs_iupdat(ip, false);
    }
}

static uint32_t inode_mode(struct icnode *icp)
{
    return ((struct ufs_inode *)icp)->i_mode;
}

static const struct icache_ops ufs_icache_ops = {
    .read = iread,
    .inactive = inactive_work,
    .mode = inode_mode,
};

/* ---- whole-file-system walks: the cache's ---- */

int ufs_iunmount(struct ufs_fs *fs, int (*sync)(void *fs), bool *still_used)
{
    return icache_unmount(&ufs_icache, fs, ICNODE(fs->fs_root), fs->fs_dev, sync, still_used);
}

static int iupdat_delayed(struct icnode *ip)
{
    return ufs_iupdat((struct ufs_inode *)ip, false);
}

int ufs_iflush(struct ufs_fs *fs)
{
    return icache_flush(&ufs_icache, fs, iupdat_delayed);
}

int ufs_iflush_pages(struct ufs_fs *fs)
{
    return icache_flush_pages(&ufs_icache, fs);
}

int ufs_icache_audit(int *nfree)
{
    return icache_audit(&ufs_icache, nfree);
}

void ufs_ievict(struct ufs_fs *fs)
{
    icache_evict(&ufs_icache, fs);
}
