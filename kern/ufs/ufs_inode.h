/*
 * UFS inside the kernel: in-core inodes, the mounted file system, and the
 * functions the UFS source files share.  The on-disk format is
 * kern/ufs/ufs_fs.h (docs/ufs-format.md); the theory of the kernel side is
 * at the top of kern/ufs/ufs_vfsops.c.
 *
 * Lock key:
 *   [ic]  ufs_icache's lock (class "ufs_icache", kern/vfs/icache.h): the
 *         hash chains, the free list, each inode's identity and the -1 of
 *         its v_count
 *   [I]   the inode's ILOCKED resource lock (class "ufs_ilock"), taken with
 *         ILOCK(), which also takes the vnode lock
 *   [fs]  the file system's fs_lock mutex (class "ufs_fs") over the
 *         in-core superblock counts and the summary area
 *   [cg]  a group's allocation resource lock (fs_cg[c].lock, class
 *         "ufs_cglock"), held across the read and write of its block
 *   [c]   constant while mounted (or while the inode has this identity)
 */
#ifndef KERN_UFS_UFS_INODE_H
#define KERN_UFS_UFS_INODE_H

#include <kern/lib/types.h>
#include <kern/lock/mutex.h>
#include <kern/vfs/vnode.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/icache.h>
#include <kern/ufs/ufs_fs.h>

struct blkdev;
struct buf;

/* In-core inodes in the one UFS inode table. */
#define UFS_NINODE      512
/* Most links an inode may have (4.4BSD's LINK_MAX). */
#define UFS_LINK_MAX    32767
/* statfs's f_type: Linux's UFS_MAGIC, so `stat -f` agrees with Linux. */
#define UFS_STATFS_MAGIC 0x00011954u

struct ufs_fs;

struct ufs_inode {
    ICNODE_FIELDS(struct ufs_fs)    /* the inode cache's part (kern/vfs/icache.h) */
    /* The inode itself, as on disk [I]. */
    uint16_t i_mode;
    int16_t i_nlink;
    uint32_t i_uid, i_gid;
    uint64_t i_size;
    int32_t i_db[UFS_NDADDR];       /* direct blocks, or a short link's target */
    int32_t i_ib[UFS_NIADDR];       /* single, double, triple indirect */
    uint32_t i_flags;               /* di_flags */
    uint32_t i_blocks;              /* 512-byte units held */
    int32_t i_gen;
    int32_t i_atime, i_atimensec, i_mtime, i_mtimensec, i_ctime, i_ctimensec;
};

/* A cylinder group's allocation lock and the copy of its block that is
 * changed under it (allocated at its first use). */
struct ufs_cgslot {
    struct rlock lock;              /* class "ufs_cglock", held across I/O */
    uint8_t *buf;                   /* [cg] */
};

struct ufs_fs {
    struct vfs *fs_vfs;             /* [c] first: the inode cache finds it here */
    struct blkdev *fs_dev;          /* [c] */
    bool fs_rdonly;                 /* [c] */
    uint32_t fs_unit;               /* [c] bytes of one buffer-cache block:
                                       the fragment size, at most BUF_MAX_SIZE */
    struct mutex fs_lock;           /* class "ufs_fs": the [fs] fields */
    struct ufs_super fs_sb;         /* [fs] counts, fs_clean, fs_time; the geometry [c] */
    struct ufs_csum *fs_cs;         /* [fs] the summary area, one per group */
    bool fs_fmod;                   /* [fs] the superblock or summary needs writing */
    struct ufs_cgslot *fs_cg;       /* [c] one per group: its allocation lock
                                       and the copy of its block changed under it */
    struct rlock fs_rename;         /* class "ufs_rename": serializes rename
                                       and rmdir (the tree's shape) */
    bool fs_bad;                    /* [a] corruption seen */
    struct ufs_inode *fs_root;      /* [c] held while mounted */
};

static inline struct ufs_inode *UFS_VTOI(struct vnode *vp)
{
    return (struct ufs_inode *)vp->v_data;
}

static inline struct vnode *UFS_ITOV(struct ufs_inode *ip)
{
    return &ip->i_vnode;
}

extern const struct vnodeops ufs_vnodeops;
extern const struct vfsops ufs_vfsops;

/* ---- ufs_vfsops.c: the mount and the buffer helpers ---- */

/* Report corruption of fs on the console and remember it. */
void ufs_corrupt(struct ufs_fs *fs, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The buffer holding byte off of the file system (busy; brelse it), and
 * where in it *at the byte is.  NULL with *err on a read error. */
struct buf *ufs_bread_byte(struct ufs_fs *fs, uint64_t off, uint32_t *at, int *err);
/* Copy len bytes at byte off of the file system into dst. */
int ufs_read_bytes(struct ufs_fs *fs, uint64_t off, void *dst, size_t len);
/* Write len bytes from src at byte off of the file system through the
 * buffer cache (sync: bwrite, else delayed writes); zero len bytes. */
int ufs_write_bytes(struct ufs_fs *fs, uint64_t off, const void *src, size_t len, bool sync);
int ufs_zero_bytes(struct ufs_fs *fs, uint64_t off, size_t len, bool sync);
/* Seconds since 1970; the syncwrites= flag. */
uint32_t ufs_now(void);
bool ufs_syncwrites(void);
/* Is fragment address f inside the file system's data (not the boot area
 * or past the end)? */
bool ufs_frag_valid(const struct ufs_fs *fs, int64_t f);

/* ---- ufs_inode.c: the inode cache's UFS part ---- */

void ufs_icache_init(void);
/* The inode (fs, ino), referenced and ILOCKED; -EUCLEAN for a bad number
 * or a bad inode, -EIO, -ENFILE, -EDEADLK (see icache_iget). */
int ufs_iget(struct ufs_fs *fs, uint32_t ino, struct ufs_inode **ipp);
void ufs_iput(struct ufs_inode *ip);
/* Unmount's common part (icache_unmount, kern/vfs/icache.h). */
int ufs_iunmount(struct ufs_fs *fs, int (*sync)(void *fs), bool *still_used);
int ufs_iflush(struct ufs_fs *fs);
/* Write back the dirty cached pages of fs's active files (sync). */
int ufs_iflush_pages(struct ufs_fs *fs);
void ufs_ievict(struct ufs_fs *fs);
/* Tests: the number of broken cache invariants (icache_audit). */
int ufs_icache_audit(int *nfree);
/* Write the in-core inode into its disk block. */
int ufs_iupdat(struct ufs_inode *ip, bool sync);
/* Set times from the flags and mark the inode modified. */
#define UFS_ACC 0x1
#define UFS_UPD 0x2
#define UFS_CHG 0x4
void ufs_itimes(struct ufs_inode *ip, int which);
/* A new inode in dp's group (a directory's: by the spreading rule),
 * referenced, ILOCKED, of mode with no links. */
int ufs_ialloc(struct ufs_inode *dp, uint16_t mode, struct ufs_inode **ipp);

/* ---- ufs_alloc.c: groups, blocks, fragments, inode maps ---- */

/* n fragments of one block (n == fs_frag: a whole block) for ip, near
 * fragment pref (0: ip's group); counted in ip's i_blocks.  -ENOSPC. */
int ufs_frag_alloc(struct ufs_inode *ip, int64_t pref, int n, int64_t *fragp);
/* Extend the run of osize fragments at f to nsize in place, if free. */
bool ufs_frag_extend(struct ufs_inode *ip, int64_t f, int osize, int nsize);
void ufs_frag_free(struct ufs_inode *ip, int64_t f, int n);
/* An inode number from the maps (dir: the directory policy). */
int ufs_ino_alloc(struct ufs_inode *dp, bool dir, uint32_t *inop);
void ufs_ino_free(struct ufs_fs *fs, uint32_t ino, bool dir);
/* Where a big file's next run of fs_maxbpg blocks starts. */
int64_t ufs_big_file_pref(struct ufs_inode *ip, int64_t prev);

/* ---- ufs_write.c ---- */

/* Write n bytes (within one block) at off, allocating as needed. */
int ufs_writei(struct ufs_inode *ip, uint64_t off, const void *src, size_t n, bool sync);
/* Set the size: free past it, or grow (holes). */
int ufs_itrunc(struct ufs_inode *ip, uint64_t nsize);
/* Give logical block lbn its fragments for a file about to be nsize
 * bytes (the last block grown or moved as need be, new data fragments
 * zeroed on the disk); its fragment address in *fp.  The size is the
 * caller's to set. */
int ufs_balloc(struct ufs_inode *ip, uint64_t lbn, uint64_t nsize, int64_t *fp);

/* ---- ufs_page.c: the page operations and the direct I/O of file data ---- */

/* Read or write len bytes at byte off of the disk straight to or from buf
 * (a regular file's data, past the buffer cache). */
int ufs_data_io(struct ufs_fs *fs, uint64_t off, void *buf, size_t len, bool write);
int ufs_data_zero(struct ufs_fs *fs, uint64_t off, size_t len);
/* The n fragments at f become file data: drop any buffer over them. */
void ufs_data_fresh(struct ufs_fs *fs, int64_t f, int n);
int ufs_getpage(struct vnode *vp, uint64_t idx, void *page, struct cred *cr);
int ufs_putpage(struct vnode *vp, uint64_t idx, const void *page, size_t len, struct cred *cr);
void ufs_accessed(struct vnode *vp);
int64_t ufs_wralloc(struct vnode *vp, uint64_t off, size_t len, int ioflag, struct cred *cr);
/* Largest file: what the block pointers reach, within 64-bit offsets. */
uint64_t ufs_max_file_size(const struct ufs_fs *fs);

/* ---- ufs_bmap.c: logical blocks to fragments ---- */

/* For logical block lbn >= UFS_NDADDR: the level of indirection (1..3)
 * that reaches it, its block's place among that level's (*relp) and the
 * blocks the level covers (*spanp); -EFBIG past the triple indirect. */
int ufs_indir_level(const struct ufs_fs *fs, uint64_t lbn, uint64_t *relp, uint64_t *spanp);

/* The fragment address of logical block lbn of ip (ILOCKED); 0 for a
 * hole.  -EFBIG past the triple indirect block; -EUCLEAN for a pointer
 * outside the file system. */
int ufs_bmap(struct ufs_inode *ip, uint64_t lbn, int64_t *fragp);
/* Copy up to len bytes of ip's data at off into dst (holes read as
 * zeros); *done the bytes copied (short at end of file). */
int ufs_readi(struct ufs_inode *ip, uint64_t off, void *dst, size_t len, size_t *done);

/* ---- ufs_dir.c: directories (dp ILOCKED) ---- */

/* The inode number name names in dp, in *inop; -ENOENT. */
int ufs_dirsearch(struct ufs_inode *dp, const char *name, uint32_t *inop);
/* readdir: entries from uio_offset into uio via vfs_put_dirent. */
int ufs_dirread(struct ufs_inode *dp, struct uio *uio, bool *eofp);
/* Add name -> (ino, type): into room in a chunk, else a new chunk. */
int ufs_direnter(struct ufs_inode *dp, const char *name, uint32_t ino, uint8_t type);
/* Remove name's entry (merged into the one before it); -ENOENT. */
int ufs_dirremove(struct ufs_inode *dp, const char *name);
/* Point name's entry at (ino, type). */
int ufs_dirrewrite(struct ufs_inode *dp, const char *name, uint32_t ino, uint8_t type);
/* 1 if only "." and ".." are left, 0 if not, <0 an error. */
int ufs_dirempty(struct ufs_inode *dp);
/* The first chunk of new directory ip: "." and "..". */
int ufs_dirinit(struct ufs_inode *ip, uint32_t parent);

/* ---- ufs_vnops.c ---- */

int ufs_iaccess(struct ufs_inode *ip, int mode, struct cred *cr);
/* The inode entry ino of dp (ILOCKED) names, referenced and ILOCKED; an
 * entry naming dp itself, a held inode or a free inode is -EUCLEAN. */
int ufs_iget_entry(struct ufs_inode *dp, uint32_t ino, struct ufs_inode **ipp);

/* ---- ufs_namei.c and ufs_rename.c: the VOPs that change the tree ---- */
int ufs_create(struct vnode *dvp, const char *name, const struct vattr *va, bool excl,
               struct vnode **vpp, struct cred *cr);
int ufs_mkdir(struct vnode *dvp, const char *name, const struct vattr *va, struct vnode **vpp,
              struct cred *cr);
int ufs_symlink(struct vnode *dvp, const char *name, const struct vattr *va, const char *target,
                struct cred *cr);
int ufs_link(struct vnode *tdvp, struct vnode *svp, const char *tname, struct cred *cr);
int ufs_remove(struct vnode *dvp, const char *name, struct cred *cr);
int ufs_rmdir(struct vnode *dvp, const char *name, struct cred *cr);
int ufs_rename(struct vnode *sdvp, const char *sname, struct vnode *tdvp, const char *tname,
               struct cred *cr);

#endif
