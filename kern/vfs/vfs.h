/*
 * File systems: the mount list, the file-system types, pathname lookup and
 * the path-level operations (what the system calls of a later issue and
 * the ktests use).  Theory in kern/vfs/vfs.c.
 *
 * Lock key for struct vfs:
 *   [c]  constant while mounted
 *   [m]  vfs_list_lock: the mount list's shared/exclusive lock (an rwlock,
 *        class "vfs_list"): lookups crossing mount points and sync hold it
 *        shared, mount and unmount exclusive
 *   [fs] the file system's own locks
 */
#ifndef KERN_VFS_VFS_H
#define KERN_VFS_VFS_H

#include <kern/lib/types.h>
#include <kern/vfs/vnode.h>

struct blkdev;
struct cred;

/* vfs_flag */
#define VFS_RDONLY  0x1

struct kstatfs {
    uint32_t f_type;        /* magic of the file-system type */
    uint32_t f_bsize;       /* block size in bytes */
    uint64_t f_blocks;      /* data blocks in all */
    uint64_t f_bfree;       /* free blocks */
    uint64_t f_files;       /* inodes in all */
    uint64_t f_ffree;       /* free inodes */
    uint32_t f_namelen;     /* longest name */
    uint32_t f_fsid;
};

struct vfs {
    struct vfs *vfs_next;           /* [m] the mount list */
    const struct vfsops *vfs_op;    /* [c] */
    const struct vfssw *vfs_sw;     /* [c] its type */
    struct vnode *vfs_vnodecovered; /* [c] mounted on (held); NULL for root */
    uint32_t vfs_flag;              /* [c] VFS_* */
    uint32_t vfs_bsize;             /* [c] */
    uint32_t vfs_fsid;              /* [c] unique per mount */
    struct blkdev *vfs_dev;         /* [c] the disk, or NULL */
    void *vfs_data;                 /* [c] the file system's own (superblock) */
    /* mount(2)'s data: the option string ("size=1m,mode=1777"), NULL for
     * none.  Valid only during the vfs_mount call, which parses what it
     * takes (tmpfs); the types that take no options ignore it. */
    const char *vfs_mntopts;
    /* Kept by the VFS (kern/vfs/vfs.c): the root directory, held from
     * mount to unmount so a lookup crossing into the file system needs no
     * VFS_ROOT call, and its reference count just after mount (the
     * baseline: more than that at unmount means someone uses the root). */
    struct vnode *vfs_rootvp;       /* [c] held by the VFS */
    int32_t vfs_rootrefs;           /* [c] */
};

/*
 * The file-system operations.  mount gets a zeroed vfs with vfs_op,
 * vfs_sw, vfs_dev, vfs_flag and vfs_fsid set, fills vfs_data and
 * vfs_bsize, and returns 0 or a negative errno (a corrupted image gives
 * -EINVAL or -EUCLEAN and prints why).  unmount returns -EBUSY while any
 * vnode of the file system other than its root has references.
 */
struct vfsops {
    int (*vfs_mount)(struct vfs *vfsp, struct cred *cr);
    int (*vfs_unmount)(struct vfs *vfsp, struct cred *cr);
    /* The root directory, with a new reference. */
    int (*vfs_root)(struct vfs *vfsp, struct vnode **vpp);
    int (*vfs_statfs)(struct vfs *vfsp, struct kstatfs *sb);
    /* Write every modified buffer and inode of the file system. */
    int (*vfs_sync)(struct vfs *vfsp, struct cred *cr);
};

/* A file-system type. */
struct vfssw {
    const char *name;               /* "s5", "devfs" */
    const struct vfsops *ops;
    bool needs_dev;                 /* mounted from a disk */
    bool nommap;                    /* its regular files cannot be mapped (procfs) */
};

#define VFS_ROOT(vfsp, vpp)     ((vfsp)->vfs_op->vfs_root(vfsp, vpp))
#define VFS_STATFS(vfsp, sb)    ((vfsp)->vfs_op->vfs_statfs(vfsp, sb))
#define VFS_SYNC(vfsp, cr)      ((vfsp)->vfs_op->vfs_sync(vfsp, cr))

/* The root file system and its root directory (held for ever once set). */
extern struct vfs *rootvfs;
extern struct vnode *rootdir;

/* Boot: the DNLC, the buffer cache, devfs; then mount root= if given
 * (prints what it mounted or why not; never panics). */
void vfs_init(void);
void vfs_mountroot(const char *dev);

/* Mount a file system of type fstype from disk devname (NULL for types
 * without one) on the directory path (NULL: as the root).  Returns 0 or a
 * negative errno: -ENODEV (unknown type), -ENXIO (no such disk), -EBUSY
 * (already mounted there or the disk is in use), -ENOTDIR, or the file
 * system's mount error. */
int vfs_mount(const char *fstype, const char *devname, const char *path, uint32_t flags,
              struct cred *cr);
/* Unmount the file system mounted on path (its root directory's path). */
int vfs_unmount(const char *path, struct cred *cr);
/* The type of the file system on disk name (not mounted), by its
 * superblock's magic number: S5's at byte 512 + s_magic, UFS's at
 * 8192 + fs_magic; "s5" when neither is there (whose mount then says
 * why).  root= and fsprobe= use it. */
const char *vfs_probe_fstype(const char *name);
/* The registered type called name, or NULL. */
const struct vfssw *vfs_findtype(const char *name);
/* vfs_mount and vfs_unmount with a relative path resolved from cwd (as the
 * mount system calls will) and, for vfs_mount_at, the type given directly
 * (a type need not be in the boot table: the ktests mount their own). */
int vfs_mount_at(const struct vfssw *sw, const char *devname, const char *path,
                 struct vnode *cwd, uint32_t flags, struct cred *cr);
/* vfs_mount_at with mount(2)'s option string (NULL for none), which the
 * file system's mount reads (vfs_mntopts); a bad option is its -EINVAL. */
int vfs_mount_opts(const struct vfssw *sw, const char *devname, const char *path,
                   struct vnode *cwd, uint32_t flags, const char *mntopts, struct cred *cr);
int vfs_unmount_at(const char *path, struct vnode *cwd, struct cred *cr);
/* The file-system types: the i-th (NULL past the last), and a type of a
 * higher layer registered at boot (0, or -ENOSPC). */
const struct vfssw *vfs_type_at(int i);
int vfs_register_type(const struct vfssw *sw);
/* A copy of the mount list, oldest first, for /proc/mounts: each
 * mount's type, disk name ("" for none), VFS_* flags and the directory it
 * covers (held: VN_RELE it; NULL for the root).  Returns how many were
 * copied (at most max). */
struct vfs_mountinfo {
    const struct vfssw *sw;
    char dev[16];
    uint32_t flags;
    struct vnode *covered;
};
int vfs_list_mounts(struct vfs_mountinfo *out, int max);
/* Sync every mounted file system (the page daemon's periodic flush):
 * buffers other threads hold busy are left for the next round. */
void vfs_sync_all(void);
/* sync(2) and syncfs: collect every mapping's dirty bits, sync every file
 * system, then wait for every held buffer of every disk and write it if
 * it comes back delayed, so what was written before the call is on disk
 * when it returns.  The caller holds no buffer. */
int vfs_sync_wait(void);
/* Sync and unmount every file system, newest first (power-off). */
void vfs_unmount_all(void);

/* The calling thread's root directory: its process's chroot directory,
 * or rootdir (not held; it stays while the caller runs, as only the
 * process itself changes it).  The process layer says which through
 * vfs_set_curroot_hook at boot; lookups start there and ".." stops
 * there. */
struct vnode *vfs_curroot(void);
void vfs_set_curroot_hook(struct vnode *(*fn)(void));

/*
 * Pathname lookup.  Absolute paths start at vfs_curroot() (rootdir unless
 * the process has a chroot directory); relative ones at cwd
 * (rootdir when NULL).  ".." at the root of a mounted file system goes to
 * the covered directory's parent; a mount point is crossed into the
 * mounted root.  Symbolic links are followed in the middle of a path and,
 * when follow is true, at its end (at most 8 links: -ELOOP).  Every
 * directory searched needs VEXEC for cr.  Errors: -ENOENT, -ENOTDIR,
 * -ENAMETOOLONG (a component longer than the file system takes, or the
 * path longer than PATH_MAX), -EACCES, -ELOOP.
 */
int lookupname(const char *path, struct vnode *cwd, bool follow, struct vnode **vpp,
               struct cred *cr);

/* openat2's resolve flags (Linux's values): limits on the walk itself.
 * NO_XDEV: no mount point crossed (-EXDEV); NO_MAGICLINKS: no /proc link
 * to an open file followed (-ELOOP); NO_SYMLINKS: no link followed at
 * all (-ELOOP); BENEATH: nothing outside the start directory, so no
 * absolute path or link and no ".." above it (-EXDEV); IN_ROOT: the
 * start directory is the root for this walk ("/" and ".." stop there);
 * CACHED: only names the DNLC holds (-EAGAIN otherwise). */
#define RESOLVE_NO_XDEV       0x01
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_NO_SYMLINKS   0x04
#define RESOLVE_BENEATH       0x08
#define RESOLVE_IN_ROOT       0x10
#define RESOLVE_CACHED        0x20
#define RESOLVE_ALL           0x3f
/* lookupname under resolve flags; cwd is the start (dirfd) they scope. */
int lookupname_resolve(const char *path, struct vnode *cwd, bool follow, unsigned resolve,
                       struct vnode **vpp, struct cred *cr);
/* Look up all but the last component: returns the held parent directory
 * and copies the last component into name (NAME_MAX + 1 bytes).  A path
 * whose last component is "." or ".." or that ends in "/" gets the
 * directory itself in *dvpp with name "" (callers that need a name
 * return -EINVAL or -EEXIST as the system call would). */
int lookup_parent(const char *path, struct vnode *cwd, struct vnode **dvpp, char *name,
                  struct cred *cr);

/* Path-level operations, as the system calls will use them.  All return 0
 * or a negative errno and check permissions for cr. */
#define O_RDONLY    0x0000
#define O_WRONLY    0x0001
#define O_RDWR      0x0002
#define O_ACCMODE   0x0003
#define O_CREAT     0x0040
#define O_EXCL      0x0080
#define O_NOCTTY    0x0100
#define O_TRUNC     0x0200
#define O_APPEND    0x0400
#define O_NONBLOCK  0x0800
#define O_ASYNC     0x2000      /* SIGIO to the owner at each change (kern/proc/sigio.c) */
#define O_DSYNC     0x1000      /* each write's data on the disk before it returns */
#define O_SYNC      0x101000    /* O_DSYNC and Linux's __O_SYNC: the inode too */
#define O_DIRECTORY 0x10000
#define O_NOFOLLOW  0x20000
#define O_PATH      0x200000    /* a descriptor that only names a file (vn_open) */

int vn_open(const char *path, struct vnode *cwd, int flags, uint32_t mode, struct vnode **vpp,
            struct cred *cr);
/* vn_open with openat2's resolve flags (RESOLVE_*) on its walk. */
int vn_open_resolve(const char *path, struct vnode *cwd, int flags, uint32_t mode,
                    unsigned resolve, struct vnode **vpp, struct cred *cr);
/* Open a file already found (vp, which the caller keeps its own hold
 * on): vn_open's checks and open without the lookup (execveat's
 * AT_EMPTY_PATH). */
int vn_open_vnode(struct vnode *vp, int flags, struct vnode **vpp, struct cred *cr);
int vn_close(struct vnode *vp, int flags, struct cred *cr);     /* also drops the reference */
/* ETXTBSY's count (v_writecount): an open for writing takes a writer's
 * place (-ETXTBSY while the file runs), a program's address space a
 * runner's (-ETXTBSY while it is open for writing); each put undoes one
 * get, and a put with nothing to undo does nothing. */
int vn_get_write(struct vnode *vp);
void vn_put_write(struct vnode *vp);
int vn_deny_write(struct vnode *vp);
void vn_allow_write(struct vnode *vp);
/* mknod: type VREG, VFIFO, VCHR, VBLK or VSOCK; in Linux's order, -EEXIST
 * when the name exists, then -EINVAL for VNON and -EPERM for VDIR (types
 * mknod cannot make), -EACCES, and -EPERM for a device made by another
 * than root.  The new node, held, in *vpp unless vpp is NULL (AF_UNIX's
 * bind keeps the node it made). */
int vn_mknod(const char *path, struct vnode *cwd, enum vtype type, uint32_t mode, uint32_t rdev,
             struct cred *cr, struct vnode **vpp);
/* Read or write len bytes at off from/to a kernel buffer; *done gets the
 * byte count moved (may be short at end of file). */
int vn_rdwr(struct vnode *vp, bool write, void *buf, size_t len, uint64_t off, int ioflag,
            size_t *done, struct cred *cr);
int vn_remove(const char *path, struct vnode *cwd, struct cred *cr);
int vn_link(const char *from, const char *to, struct vnode *cwd, struct cred *cr);
int vn_rename(const char *from, const char *to, struct vnode *cwd, struct cred *cr);
int vn_mkdir(const char *path, struct vnode *cwd, uint32_t mode, struct cred *cr);
int vn_rmdir(const char *path, struct vnode *cwd, struct cred *cr);
int vn_symlink(const char *target, const char *path, struct vnode *cwd, struct cred *cr);
int vn_stat(const char *path, struct vnode *cwd, bool follow, struct vattr *va, struct cred *cr);

/* File events for inotify (Linux's IN_* values).  The VFS reports them
 * through the hook the event layer gives at boot (vfs_set_notify_hook,
 * kern/event/inotify.c), only for a vnode something watches
 * (v_inwatch): vn_notify(vp, mask, name, cookie) -- name the entry of
 * directory vp the event is about, or NULL; cookie ties a rename's two
 * halves (vn_notify_cookie). */
#define IN_ACCESS        0x001
#define IN_MODIFY        0x002
#define IN_ATTRIB        0x004
#define IN_CLOSE_WRITE   0x008
#define IN_CLOSE_NOWRITE 0x010
#define IN_OPEN          0x020
#define IN_MOVED_FROM    0x040
#define IN_MOVED_TO      0x080
#define IN_CREATE        0x100
#define IN_DELETE        0x200
#define IN_DELETE_SELF   0x400
#define IN_MOVE_SELF     0x800
#define IN_ISDIR         0x40000000
void vfs_set_notify_hook(void (*fn)(struct vnode *vp, uint32_t mask, const char *name,
                                    uint32_t cookie));
void vn_notify_watched(struct vnode *vp, uint32_t mask, const char *name, uint32_t cookie);
/* Inline, so an unwatched vnode's read or write pays one load. */
static inline void vn_notify(struct vnode *vp, uint32_t mask, const char *name, uint32_t cookie)
{
    if (vp && __atomic_load_n(&vp->v_inwatch, __ATOMIC_ACQUIRE))
        vn_notify_watched(vp, mask, name, cookie);
}
uint32_t vn_notify_cookie(void);

/* Named pipes: the processes' layer gives the function that turns an
 * opened FIFO node (held) into its pipe (kern/proc/pipe.c); vn_open calls
 * it.  Until then a FIFO opens as the file system's node. */
void vfs_set_fifo_open(int (*fn)(struct vnode **vpp, int flags));

/* A device node (VCHR or VBLK) outside devfs, *vpp (held): replace it by
 * the device of its number on the devfs mounted at /dev (the reference
 * passes), or -ENXIO when there is no such device.  vn_open calls it. */
int devfs_open_rdev(struct vnode **vpp);
bool vn_is_devfs(const struct vnode *vp);
/* The pseudo-terminals' part of devfs, which kern/pty/pty.c (a layer
 * above) registers at boot: /dev/ptmx's open (*vpp replaced by a new
 * master), and the slave's vnode (held) of a pty's terminal, for /dev/tty.
 * Without them /dev/ptmx is ENODEV. */
struct tty;
struct devfs_pty_hooks {
    int (*open_master)(struct vnode **vpp, int flags, struct cred *cr);
    struct vnode *(*slave_of)(struct tty *t);
};
void devfs_set_pty_hooks(const struct devfs_pty_hooks *h);
/* Linux's device number of a disk (devfs's /dev node of it). */
uint32_t devfs_disk_rdev(const struct blkdev *d);
/* The disk a block-device vnode (devfs's or a mknod'd node) names, or NULL. */
struct blkdev *devfs_disk_of(struct vnode *vp);
/* A devfs node's name ("" for the root or another file system's vnode). */
const char *devfs_name(struct vnode *vp);

/* Types registered at boot (kern/vfs/vfs.c's table). */
extern const struct vfssw s5_vfssw;     /* kern/s5/ */
extern const struct vfssw devfs_vfssw;  /* kern/vfs/devfs.c */
extern const struct vfssw ufs_vfssw;    /* kern/ufs/ */
extern const struct vfssw tmpfs_vfssw;  /* kern/tmpfs/ */

#endif
