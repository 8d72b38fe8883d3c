/*
 * The S5 file system inside the kernel: in-core inodes, the mounted file
 * system, and the functions the S5 source files share.  The on-disk format
 * is kern/s5/s5_fs.h; the theory of the kernel side (the inode cache, the
 * inode resource locks, the free lists and the races they handle) is at the
 * top of kern/s5/s5_vfsops.c.
 *
 * Lock key:
 *   [ic]  s5_icache's lock (kern/vfs/icache.h): the one mutex over the
 *         inode hash chains, the inode free list, every inode's identity
 *         (i_fs, i_number) and the -1 "inactive" value of its v_count
 *         (class "s5_icache")
 *   [I]   the inode's ILOCKED resource lock (i_lock, class "s5_ilock"),
 *         taken with ILOCK(), which also takes the vnode lock
 *   [fs]  the file system's fs_lock mutex (class "s5_fs") over the
 *         in-core superblock; never taken recursively
 *   [fl]  fs_flock, the free-block list's resource lock (class "s5_flock"),
 *         held across the chain-block I/O of one allocation or free
 *   [rq]  s5_icache's reap_lock (class "s5_reap"): the queue of
 *         inactivations deferred to the reaper thread
 *   [c]   constant while mounted (or while the inode has this identity)
 */
#ifndef KERN_S5_S5_INODE_H
#define KERN_S5_S5_INODE_H

#include <kern/lib/types.h>
#include <kern/lock/mutex.h>
#include <kern/lock/sleep.h>
#include <kern/vfs/vnode.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/icache.h>
#include <kern/s5/s5_fs.h>
#include <kern/s5/s5.h>

struct blkdev;
struct buf;

/* In-core inodes in the one S5 inode table (all mounted S5 file systems). */
#define S5_NINODE       512
/* Most links an inode may have (SVR3's MAXLINK). */
#define S5_MAXLINK      1000
/* Largest directory the kernel believes (4096 blocks of 64 entries): a
 * bigger di_size is taken as corruption. */
#define S5_MAXDIRSIZE   (4096u * S5_BSIZE)

/*
 * Device numbers of character and block special files live in address
 * slot 0 as SVR4's 16-bit dev_t (s5_dev_encode in s5_fs.h); in the vnode
 * they are Linux-encoded (vn_makedev).
 */
static inline bool s5_dev_fits(uint32_t rdev)
{
    return vn_major(rdev) <= S5_DEV_MAXMAJOR && vn_minor(rdev) <= S5_DEV_MAXMINOR;
}

static inline uint32_t s5_dev_to_disk(uint32_t rdev)
{
    return s5_dev_encode(vn_major(rdev), vn_minor(rdev));
}

static inline uint32_t s5_dev_from_disk(uint32_t addr0)
{
    return vn_makedev(s5_dev_major(addr0), s5_dev_minor(addr0));
}

/* i_flag bits [I]: IVALID and IMOD are the cache's (kern/vfs/icache.h) */
#define IBLKS   0x04    /* i_nblocks is known */

struct s5_fs;

struct s5_inode {
    ICNODE_FIELDS(struct s5_fs)     /* the inode cache's part (kern/vfs/icache.h) */
    /* The inode itself, as on disk [I]. */
    uint16_t i_mode, i_nlink, i_uid, i_gid;
    uint32_t i_size;
    uint32_t i_addr[S5_NADDR];
    uint8_t i_gen;
    uint32_t i_atime, i_mtime, i_ctime;
    uint32_t i_nblocks;             /* [I] data + indirect blocks, when IBLKS */
};

/* Counters for the tests and for kbench (racy sums; [a]): the inode
 * cache's (kern/vfs/icache.h), then S5's own. */
struct s5_stats {
    ICSTATS_FIELDS
    uint64_t ialloc_races;                      /* ialloc found its inode already allocated */
    uint64_t iscans;                            /* free-inode cache refills */
};
extern struct s5_stats s5_stats;

struct s5_fs {
    struct vfs *fs_vfs;             /* [c] first: the inode cache finds it here */
    struct blkdev *fs_dev;          /* [c] */
    uint64_t fs_devblocks;          /* [c] device size in S5 blocks */
    bool fs_rdonly;                 /* [c] */
    uint32_t fs_hashid;             /* [c] mixes into the inode hash */
    struct mutex fs_lock;           /* class "s5_fs": the [fs] fields */
    struct rlock fs_flock;          /* [fl] the free-block list across I/O */
    struct rlock fs_ilist;          /* serializes free-inode cache refills (scans) */
    struct rlock fs_rename;         /* serializes rename and rmdir (tree shape) */
    struct s5_super fs_sb;          /* [fs] the in-core superblock; s_isize,
                                       s_fsize [c] */
    bool fs_fmod;                   /* [fs] the superblock needs writing */
    bool fs_bad;                    /* [a] corruption seen: mark FsBAD */
    uint32_t fs_irotor;             /* [fs] where the next inode scan starts */
    bool fs_freebad;                /* [c] the free chain is broken: allocate nothing */
    struct s5_inode *fs_root;       /* [c] held while mounted */
};

static inline struct s5_inode *VTOI(struct vnode *vp)
{
    return (struct s5_inode *)vp->v_data;
}

static inline struct vnode *ITOV(struct s5_inode *ip)
{
    return &ip->i_vnode;
}

extern const struct vnodeops s5_vnodeops;
extern const struct vfsops s5_vfsops;

/* ---- s5_inode.c: the inode cache and inode locks ---- */

void s5_icache_init(void);
/* The inode (fs, ino), referenced and ILOCKED.  -ENFILE when the table
 * stays full after purging the DNLC; -EUCLEAN/-EIO for a bad inode;
 * -EDEADLK if the calling thread already holds that inode's ILOCKED. */
int s5_iget(struct s5_fs *fs, uint32_t ino, struct s5_inode **ipp);
/* The same, but -EBUSY at once if another thread has it ILOCKED (for a
 * caller that holds other ILOCKs and may not wait for an arbitrary one). */
int s5_iget_try(struct s5_fs *fs, uint32_t ino, struct s5_inode **ipp);
/* IUNLOCK and VN_RELE. */
void s5_iput(struct s5_inode *ip);
/* ILOCK, IUNLOCK, IRWLOCK and IRWUNLOCK: kern/vfs/icache.h. */

/* Does the current thread hold ip's ILOCKED? */
static inline bool s5_ilocked(struct s5_inode *ip)
{
    return rlock_held(&ip->i_lock);
}
/* Write the in-core inode into its disk block (sync: bwrite, else bdwrite). */
int s5_iupdat(struct s5_inode *ip, bool sync);
/* Set times from the flags (S5_ACC, S5_UPD, S5_CHG) and mark modified. */
#define S5_ACC  0x1
#define S5_UPD  0x2
#define S5_CHG  0x4
void s5_itimes(struct s5_inode *ip, int which);
/* Free the blocks past size and set the size (ILOCKED). */
int s5_itrunc(struct s5_inode *ip, uint32_t size);
/* Unmount's common part (icache_unmount, kern/vfs/icache.h). */
int s5_iunmount(struct s5_fs *fs, int (*sync)(void *fs), bool *still_used);
/* Write back the dirty pages of fs's active regular files (sync, unmount):
 * the first error, or 0. */
int s5_iflush_pages(struct s5_fs *fs);
/* Write every modified in-core inode of fs. */
int s5_iflush(struct s5_fs *fs);
/* Forget every inactive in-core inode of fs (after unmount). */
void s5_ievict(struct s5_fs *fs);
/* Wait until the inactivations deferred to the reaper are done (unmount
 * does, before it counts busy inodes). */
void s5_reap_drain(void);
/* The DT_* type of inode ino, for readdir (a hint; see s5_inode.c). */
uint8_t s5_dtype(struct s5_fs *fs, uint32_t ino);
/* Is (fs, ino) in core and referenced (v_count >= 0)? (the inode scan) */
bool s5_iactive(struct s5_fs *fs, uint32_t ino);
/* Tests: the number of broken cache invariants (0 is good); *nfree gets
 * the length of the free list. */
int s5_icache_audit(int *nfree);
/* Seconds since 1970 as the file system records them. */
uint32_t s5_now(void);
/* Inode updates of structure changes: synchronous when opts.syncwrites. */
bool s5_syncwrites(void);

/* ---- s5_alloc.c: the superblock free lists ---- */

/* Take a free block off the list into *bnop (its contents are the
 * caller's to initialize). */
int s5_balloc(struct s5_fs *fs, uint32_t *bnop);
void s5_bfree(struct s5_fs *fs, uint32_t bno);
/* A free inode, referenced, ILOCKED and initialized to mode (nlink 0). */
int s5_ialloc(struct s5_fs *fs, uint16_t mode, struct s5_inode **ipp);
void s5_ifree(struct s5_fs *fs, uint32_t ino);
/* Drop free-inode cache entries that are no longer free (before the
 * superblock goes to disk, so fsck finds the hint exact). */
void s5_icache_sanitize(struct s5_fs *fs);

/* ---- s5_bmap.c: logical to physical blocks ---- */

/* The disk block holding logical block lbn of ip (ILOCKED); 0 for a hole.
 * With alloc, a hole is filled (*newp says so; the caller initializes the
 * data block).  -EFBIG past the largest file, -ENOSPC, -EUCLEAN. */
int s5_bmap(struct s5_inode *ip, uint32_t lbn, bool alloc, uint32_t *bnop, bool *newp);
/* Count the blocks ip owns (ILOCKED). */
int s5_count_blocks(struct s5_inode *ip, uint32_t *np);

/* ---- s5_page.c: the page operations and data blocks' direct I/O ---- */

/* Read or write S5 block bno of fs (S5_BSIZE bytes at buf), past the
 * buffer cache: file data only.  0 or -EIO. */
int s5_data_rw(struct s5_fs *fs, uint32_t bno, void *buf, bool write);
/* Block bno just became file data: forget any buffer of its old life. */
void s5_data_fresh(struct s5_fs *fs, uint32_t bno);
int s5_getpage(struct vnode *vp, uint64_t idx, void *page, struct cred *cr);
int s5_putpage(struct vnode *vp, uint64_t idx, const void *page, size_t len, struct cred *cr);
void s5_accessed(struct vnode *vp);
int64_t s5_wralloc(struct vnode *vp, uint64_t off, size_t len, int ioflag, struct cred *cr);

/* ---- s5_dir.c: directories (dp ILOCKED throughout) ---- */

struct s5_dirslot {
    uint32_t ino;           /* the entry found, or 0 */
    uint32_t off;           /* its byte offset */
    int64_t free_off;       /* first empty slot seen, or -1 */
};
int s5_dirsearch(struct s5_inode *dp, const char *name, struct s5_dirslot *ds);
/* Add name -> ino at ds->free_off or at the end. */
int s5_direnter(struct s5_inode *dp, const char *name, uint32_t ino, const struct s5_dirslot *ds);
/* Set the inode number of the entry at off (0 removes it). */
int s5_dirrewrite(struct s5_inode *dp, uint32_t off, uint32_t ino);
/* Is the directory empty but for "." and ".."?  (1 yes, 0 no, <0 error) */
int s5_dirempty(struct s5_inode *dp);
/* Initialize the first block of new directory ip with "." and "..". */
int s5_dirinit(struct s5_inode *ip, uint32_t parent);
/* The buffer for the directory block holding offset off. */
int s5_dirblk(struct s5_inode *dp, uint32_t off, struct buf **bpp);

/* ---- s5_vnops.c, s5_namei.c and s5_rename.c: the vnode operations ---- */

/* Permission check on an ILOCKED inode (-EROFS for writes on a read-only
 * mount). */
int s5_iaccess(struct s5_inode *ip, int mode, struct cred *cr);
/* A name to create, remove or rename to: valid, at most 14 bytes, not "."
 * or "..". */
int s5_check_new_name(const char *name);
/* The sticky-directory rule for removing or renaming ip out of dp. */
int s5_sticky_check(struct s5_inode *dp, struct s5_inode *ip, struct cred *cr);
/* The inode entry ino of ILOCKED directory dp names, referenced and
 * ILOCKED; an entry naming dp itself, a held inode or a free inode is
 * corruption (-EUCLEAN). */
/* ---- s5_namei.c: the name-space VOPs (in s5_vnodeops) ---- */
int s5_lookup(struct vnode *dvp, const char *name, struct vnode **vpp, struct cred *cr);
int s5_create(struct vnode *dvp, const char *name, const struct vattr *va, bool excl,
              struct vnode **vpp, struct cred *cr);
int s5_mkdir(struct vnode *dvp, const char *name, const struct vattr *va, struct vnode **vpp,
             struct cred *cr);
int s5_symlink(struct vnode *dvp, const char *name, const struct vattr *va, const char *target,
               struct cred *cr);
int s5_link(struct vnode *tdvp, struct vnode *svp, const char *tname, struct cred *cr);
int s5_remove(struct vnode *dvp, const char *name, struct cred *cr);
int s5_rmdir(struct vnode *dvp, const char *name, struct cred *cr);
int s5_iget_entry(struct s5_inode *dp, uint32_t ino, struct s5_inode **ipp);
/* For removing or renaming the entry name of dp: ILOCK dp (it stays
 * locked, error or not), check write and search permission, find the
 * entry (*ds) and return its inode referenced and ILOCKED (*ipp, NULL on
 * error). */
int s5_lock_entry(struct s5_inode *dp, const char *name, struct cred *cr,
                  struct s5_dirslot *ds, struct s5_inode **ipp);
int s5_access(struct vnode *vp, int mode, struct cred *cr);
int s5_rename(struct vnode *sdvp, const char *sname, struct vnode *tdvp, const char *tname,
              struct cred *cr);

/* ---- s5_vfsops.c ---- */

/* Report corruption of fs on the console and remember it (the superblock
 * is marked FsBAD at the next write). */
void s5_corrupt(struct s5_fs *fs, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Read/write S5 block bno through the buffer cache. */
struct buf *s5_bread(struct s5_fs *fs, uint32_t bno, int *err);
struct buf *s5_getblk(struct s5_fs *fs, uint32_t bno);
/* Write a modified metadata buffer: bwrite when sync, bdwrite otherwise. */
int s5_bwrite_meta(struct buf *bp, bool sync);

#endif
