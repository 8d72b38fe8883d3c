/*
 * tmpfs, the memory file system: what its source files share.  The
 * theory (the page cache as the store, reservations, the node lifetime,
 * the locks and their order) is at the top of kern/tmpfs/tmpfs.c.
 *
 * Lock key:
 *   [c]   constant while the node (or the mount) exists
 *   [T]   the node's TN_LOCKED resource lock (tn_lock, class
 *         "tmpfs_node"), taken with TN_LOCK, which takes the vnode lock
 *         first, as S5's ILOCK does; read once without it (READ_ONCE)
 *         only where a comment says so
 *   [D]   the TN_LOCKED lock of the directory holding the entry
 *   [R]   the mount's rename lock (tm_rename, class "tmpfs_rename") and
 *         the directory's [T] both: written holding both, read under
 *         either
 *   [M]   the mount's spin lock (tm_lock, class "tmpfs_mount"): the
 *         reservation of pages and nodes, the list of nodes
 */
#ifndef KERN_TMPFS_TMPFS_H
#define KERN_TMPFS_TMPFS_H

#include <kern/lib/types.h>
#include <kern/lock/spinlock.h>
#include <kern/lock/sleep.h>
#include <kern/vfs/vnode.h>
#include <kern/vfs/vfs.h>

#define TMPFS_MAGIC     0x01021994      /* Linux's TMPFS_MAGIC, for statfs */
/* Largest file: Linux's MAX_LFS_FILESIZE (the page index must fit too). */
#define TMPFS_MAXFILESIZE 0x7fffffffffffffffULL
/* Linux's tmpfs gives a directory 20 bytes of size per entry, "." and
 * ".." included (BOGO_DIRENT_SIZE), so `ls -l` shows sizes that grow. */
#define TMPFS_DIRENT_SIZE 20

struct tmpnode;

/* A directory entry: in its directory's list (creation order, which
 * readdir follows) and in its hash chain. */
struct tdirent {
    struct tdirent *td_next, *td_prev;  /* [D] the directory's list */
    struct tdirent *td_hnext;           /* [D] the directory's hash chain */
    struct tmpnode *td_node;            /* [D] the node it names (not held: the
                                           node's link hold keeps it) */
    uint64_t td_cookie;                 /* [c] readdir's position of the entry */
    uint32_t td_hash;                   /* [c] */
    uint16_t td_namelen;                /* [c] */
    char td_name[];                     /* [c] NUL-terminated */
};

/* One mounted tmpfs. */
struct tmount {
    struct vfs *tm_vfsp;                /* [c] */
    struct tmpnode *tm_root;            /* [c] */
    uint64_t tm_maxpages;               /* [c] size=, in pages (0: no limit) */
    uint64_t tm_maxnodes;               /* [c] nr_inodes= (0: no limit) */
    spinlock_t tm_lock;
    uint64_t tm_pages;                  /* [M] pages reserved by the files' sizes */
    uint64_t tm_nodes;                  /* [M] nodes in existence */
    uint64_t tm_nextino;                /* [M] the next node's number */
    struct tmpnode *tm_nodelist;        /* [M] every node, for unmount */
    struct rlock tm_rename;             /* renames and rmdirs: the tree's shape */
};

/*
 * A file.  The vnode is its first member (v_data points back).  While the
 * node has a name (nlink > 0) it holds one reference to its own vnode,
 * the link hold, so the vnode never goes inactive and the page cache keeps
 * its pages; losing the last name drops it, and the last release then
 * frees the node and its pages (tmpfs_inactive).
 */
/* A run of reserved pages of a file, [start, end) in page numbers. */
struct tresv {
    uint64_t start, end;
};

struct tmpnode {
    struct vnode tn_vnode;
    struct rlock tn_lock;               /* TN_LOCKED */
    struct tmount *tn_mount;            /* [c] */
    struct tmpnode *tn_lnext, *tn_lprev;    /* [M] the mount's list of nodes */
    uint64_t tn_ino;                    /* [c] */
    uint32_t tn_mode;                   /* [T] S_IF* type and permission bits */
    uint32_t tn_uid, tn_gid;            /* [T] */
    uint32_t tn_nlink;                  /* [T] */
    bool tn_linkhold;                   /* [T] the vnode holds itself (see above) */
    uint64_t tn_size;                   /* [T] bytes (a directory: TMPFS_DIRENT_SIZE each) */
    struct tresv *tn_ext;               /* [T] pages reserved, as extents (tmpfs_resv.c) */
    uint32_t tn_next, tn_extcap;        /* [T] extents in use, and room */
    int64_t tn_atime, tn_mtime, tn_ctime;   /* [T] seconds */
    /* A directory. */
    struct tmpnode *tn_parent;          /* [R] its ".." (the root: itself; NULL once
                                           removed, since the parent may go too) */
    struct tdirent *tn_dirhead, *tn_dirtail;    /* [T] entries, creation order */
    struct tdirent **tn_hash;           /* [T] hash chains (NULL until the first entry) */
    uint32_t tn_hashsize;               /* [T] chains: a power of two */
    uint32_t tn_nent;                   /* [T] entries, "." and ".." not counted */
    uint64_t tn_nextcookie;             /* [T] the next entry's td_cookie */
    /* A symbolic link. */
    char *tn_target;                    /* [c] its text, NUL-terminated */
};

#define TNTOV(tp)   (&(tp)->tn_vnode)
#define VTOTN(vp)   ((struct tmpnode *)(vp)->v_data)

/*
 * TN_LOCK: the vnode lock, then TN_LOCKED, as S5's ILOCK (seed 001's
 * "inode locking": a VOP that waits for a second node's lock sleeps, which
 * gives up every vnode lock it holds, so two callers cannot deadlock on
 * vnode locks; TN_LOCKED itself stays held across the sleep).
 */
static inline void TN_LOCK(struct tmpnode *tp)
{
    mutex_enter(&tp->tn_vnode.v_lock);
    rlock_acquire(&tp->tn_lock);
}

static inline void TN_UNLOCK(struct tmpnode *tp)
{
    rlock_release(&tp->tn_lock);
    mutex_exit(&tp->tn_vnode.v_lock);
}

extern const struct vnodeops tmpfs_vnodeops;

/* ---- kern/tmpfs/tmpfs.c: nodes, reservations, the clock ---- */

int64_t tmpfs_now(void);
/* A new node of mode (S_IF* type and permission bits) owned by cr, in
 * directory dp (NULL for the root: the mount's owner then), with its link
 * hold and one reference for the caller; -ENOSPC at nr_inodes, -ENOMEM. */
int tmpnode_alloc(struct tmount *tm, uint32_t mode, uint32_t rdev, struct tmpnode *dp,
                  struct cred *cr, struct tmpnode **tpp);
/* Reserve (delta > 0) or give back (delta < 0) pages of the mount's size:
 * -ENOSPC when fewer than delta are free. */
int tmpfs_reserve(struct tmount *tm, int64_t delta);
/* How many pages could still be reserved now (no limit: a large number). */
uint64_t tmpfs_pages_free(struct tmount *tm);
/* With tp TN_LOCKED: one name fewer.  At none, the link hold is to be
 * dropped: returns true, and the caller VN_RELEs the vnode once it holds
 * no lock of tmpfs's. */
bool tmpnode_unlinked(struct tmpnode *tp);
/* VOP_INACTIVE: free a node that lost its last name and reference. */
void tmpfs_inactive(struct vnode *vp, struct cred *cr);

/* ---- kern/tmpfs/tmpfs_resv.c: a file's reserved pages (TN_LOCKED) ---- */

/* Pages of [a, b) not reserved. */
uint64_t tresv_missing(const struct tmpnode *tp, uint64_t a, uint64_t b);
/* The end p of the longest [a, p), p <= b, with at most n pages not reserved. */
uint64_t tresv_reach(const struct tmpnode *tp, uint64_t a, uint64_t b, uint64_t n);
/* Mark [a, b) reserved (the caller counts the new pages); -ENOMEM. */
int tresv_add(struct tmpnode *tp, uint64_t a, uint64_t b);
/* Forget the reserved pages from page from on; how many there were. */
uint64_t tresv_cut(struct tmpnode *tp, uint64_t from);
void tresv_free(struct tmpnode *tp);

/* ---- kern/tmpfs/tmpfs_dir.c: directories ---- */

/* With dp TN_LOCKED: the entry called name (len bytes), or NULL. */
struct tdirent *tdir_find(struct tmpnode *dp, const char *name, size_t len);
/* With dp TN_LOCKED: a new entry name -> tp (not entered yet), or NULL. */
struct tdirent *tdir_new(const char *name, size_t len, struct tmpnode *tp);
/* With dp TN_LOCKED: enter de (made by tdir_new) at the end of dp; the
 * directory's size and times follow.  -ENOMEM if its hash cannot grow
 * (de is then not entered). */
int tdir_enter(struct tmpnode *dp, struct tdirent *de);
/* With dp TN_LOCKED: take de out of dp and free it. */
void tdir_remove(struct tmpnode *dp, struct tdirent *de);
/* With dp TN_LOCKED, at its last release: free every entry. */
void tdir_free_all(struct tmpnode *dp);
int tmpfs_readdir(struct vnode *vp, struct uio *uio, struct cred *cr, bool *eofp);
int tmpfs_rename(struct vnode *sdvp, const char *sname, struct vnode *tdvp, const char *tname,
                 struct cred *cr);

/* ---- kern/tmpfs/tmpfs_vnops.c ---- */

/* With tp TN_LOCKED: may cr have access mode to it? */
int tmpnode_access(struct tmpnode *tp, int mode, struct cred *cr);
/* The sticky-directory rule for removing or renaming tp out of dp. */
int tmpnode_sticky(struct tmpnode *dp, struct tmpnode *tp, struct cred *cr);

/* Pages tmpfs files reserve, over every mount (/proc/meminfo's Shmem). */
uint64_t tmpfs_pages_reserved(void);

#endif
