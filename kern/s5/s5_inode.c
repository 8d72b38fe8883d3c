/*
 * S5 in-core inodes: the inode cache, iget, VOP_INACTIVE with the -1
 * protocol, reading and writing inodes, truncation.  The theory (cache
 * structure, locks, races) is at the top of kern/s5/s5_vfsops.c; the lock
 * key is in kern/s5/s5_inode.h.
 *
 * The cache itself -- one table of S5_NINODE inodes shared by every
 * mounted S5 file system, the hash chains, the free list, iget's recheck,
 * the -1 protocol and the reaper -- is the one both disk file systems use
 * (kern/vfs/icache.c); this file gives it S5's inode reading and
 * inactivation (s5_icache_ops).
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

static const struct icache_ops s5_icache_ops;
LOCK_CLASS(s5_reap_class, "s5_reap", LK_MUTEX_SLEEP);

/* The S5 inode cache: constant fields here, the rest the cache's. */
static struct icache s5_icache = {
    .name = "s5",
    .ninode = S5_NINODE,
    .node_size = sizeof(struct s5_inode),
    .vnops = &s5_vnodeops,
    .ops = &s5_icache_ops,
    .cache_class = &s5_icache_class,
    .ilock_class = &s5_ilock_class,
    .irwlock_class = &s5_irwlock_class,
    .reap_class = &s5_reap_class,
    .stats = (struct icstats *)&s5_stats,
};

/* File times come from the wall clock (drivers/platform/rtc.c). */
uint32_t s5_now(void)
{
    return (uint32_t)(realtime_ns() / 1000000000ull);
}

bool s5_syncwrites(void)
{
    return opts.syncwrites != 0;
}

void s5_icache_init(void)
{
    icache_init(&s5_icache);
}

/* ---- reading inodes ---- */

static enum vtype vtype_of(uint16_t mode)
{
    switch (mode & S5_IFMT) {
    case S5_IFREG: return VREG;
    case S5_IFDIR: return VDIR;
    case S5_IFLNK: return VLNK;
    case S5_IFCHR: return VCHR;
    case S5_IFBLK: return VBLK;
    case S5_IFIFO: return VFIFO;
    case S5_IFSOCK: return VSOCK;
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

/* Read ip (ILOCKED, identity set) from its disk block: the cache's read. */
static int iread(struct icnode *icp)
{
    struct s5_inode *ip = (struct s5_inode *)icp;
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
    return icache_iget(&s5_icache, fs, ino, try, (struct icnode **)ipp);
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
    icache_iput(ICNODE(ip));
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

/* With ILOCK, the count 0: the work of an inactivation (the cache's
 * inactive).  A file with no links loses its blocks and its inode; a
 * modified one is written back. */
static void inactive_work(struct icnode *icp)
{
    struct s5_inode *ip = (struct s5_inode *)icp;
    struct s5_fs *fs = ip->i_fs;
    if (fs->fs_rdonly)
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

static uint32_t inode_mode(struct icnode *icp)
{
    return ((struct s5_inode *)icp)->i_mode;
}

static const struct icache_ops s5_icache_ops = {
    .read = iread,
    .inactive = inactive_work,
    .mode = inode_mode,
};

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
    case S5_IFSOCK: return DT_SOCK;
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
    uint16_t mode = (uint16_t)icache_mode_hint(&s5_icache, fs, ino);
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

/* ---- whole-file-system walks (sync, unmount, the inode scan): the cache's ---- */

bool s5_iactive(struct s5_fs *fs, uint32_t ino)
{
    return icache_active(&s5_icache, fs, ino);
}

int s5_iunmount(struct s5_fs *fs, int (*sync)(void *fs), bool *still_used)
{
    return icache_unmount(&s5_icache, fs, ICNODE(fs->fs_root), fs->fs_dev, sync, still_used);
}

static int iupdat_delayed(struct icnode *ip)
{
    return s5_iupdat((struct s5_inode *)ip, false);
}

int s5_iflush_pages(struct s5_fs *fs)
{
    return icache_flush_pages(&s5_icache, fs);
}

int s5_iflush(struct s5_fs *fs)
{
    return icache_flush(&s5_icache, fs, iupdat_delayed);
}

void s5_ievict(struct s5_fs *fs)
{
    icache_evict(&s5_icache, fs);
}

void s5_reap_drain(void)
{
    icache_reap_drain(&s5_icache);
}

int s5_icache_audit(int *nfree)
{
    return icache_audit(&s5_icache, nfree);
}
