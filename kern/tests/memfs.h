/*
 * memfs: a tiny in-memory file system for the VFS ktests
 * (kern/tests/test_vfs.c): directories, files of up to MEMFS_FILEMAX
 * bytes, symbolic links, hard links; names of up to 14 bytes like S5.
 *
 * memfs keeps the SVR4 MP reference protocol: an unreferenced node has the
 * count -1 ("truly inactive"), set under the memfs lock by VOP_INACTIVE
 * only if the count is still 0; a lookup that finds -1 sets 0 before its
 * VN_HOLD.  Every memfs VOP notes whether it was called with the vnode
 * lock held (memfs_unlocked_vops must stay 0).
 */
#ifndef KERN_TESTS_MEMFS_H
#define KERN_TESTS_MEMFS_H

#include <kern/vfs/vfs.h>
#include <kern/lock/mutex.h>

#define MEMFS_NAMEMAX 14
#define MEMFS_FILEMAX 256

struct mnode;

struct mdirent {
    char name[MEMFS_NAMEMAX + 1];
    struct mnode *node;
    struct mdirent *next;
};

struct memfs {
    struct mutex lock;          /* the tree, the links and the -1 transitions */
    struct mnode *root;         /* [c] held by memfs while mounted */
    struct mnode *all;          /* [lock] every node, freed at unmount */
    uint64_t next_ino;          /* [lock] */
};

struct mnode {
    struct vnode vn;
    struct memfs *fs;               /* [c] */
    struct mnode *all_next;         /* [fs lock] */
    struct mnode *parent;           /* [fs lock] directories: ".." */
    struct mdirent *entries;        /* [fs lock] directories */
    uint32_t nlink;                 /* [fs lock] */
    uint64_t ino;                   /* [c] */
    uint32_t mode, uid, gid;        /* [v] permission bits */
    size_t size;                    /* [v] files and links */
    char data[MEMFS_FILEMAX];       /* [v] */
    int inactive_calls;             /* [fs lock] true inactivations */
};

static inline struct mnode *VTOM(struct vnode *vp)
{
    return vp->v_data;
}

extern int memfs_unlocked_vops;     /* [atomic] VOPs called without the vnode lock */
extern int memfs_syncs;             /* [atomic] VFS_SYNC calls */
extern const struct vfsops memfs_vfsops;
extern const struct vfssw memfs_sw;

/* The vfsops, callable directly for a memfs mounted nowhere. */
int memfs_mount(struct vfs *vfsp, struct cred *cr);
int memfs_unmount(struct vfs *vfsp, struct cred *cr);
int memfs_root(struct vfs *vfsp, struct vnode **vpp);

#endif
