/*
 * devfs: a small in-memory file system holding the character devices,
 * mounted on the root's /dev at boot.  Its root directory lists console
 * (5:1), null (1:3) and zero (1:5), with Linux's device numbers, so that
 * programs built for Linux find what they expect.
 *
 * Each mount has its own vnodes (a vnode belongs to one vfs, which ".."
 * across the mount point relies on) but the devices behind them are
 * shared.  devfs holds one reference on each of its vnodes for as long as
 * it is mounted, so VOP_INACTIVE never runs while mounted, and unmount is
 * refused (-EBUSY) while any device vnode has a reference besides that one.
 *
 * Locking: the only mutable per-vnode state is the permission triple
 * (mode, uid, gid), changed by VOP_SETATTR and read by VOP_GETATTR and
 * VOP_ACCESS, all of which run under the vnode lock the VOP macros take:
 * [v] is the whole story, the paper's "vnode lock as the mutual exclusion
 * lock for all of the per-vnode data, including file system dependent
 * data".  The rest is constant while mounted.  The devices need no lock
 * (the console serializes its own output).
 */
#include <kern/vfs/vfs.h>
#include <drivers/tty/tty.h>
#include <kern/vfs/cred.h>
#include <kern/vm/kmem.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>

#define DEVFS_MAGIC 0x1373          /* Linux's DEVFS_SUPER_MAGIC */

struct devfs_dev {
    const char *name;
    uint32_t major, minor;
    int (*read)(struct uio *uio);
    int (*write)(struct uio *uio);
};

struct devfs_node {
    struct vnode vn;
    const struct devfs_dev *dev;    /* [c] NULL for the root directory */
    uint64_t ino;                   /* [c] */
    uint32_t mode, uid, gid;        /* [v] permission bits only */
};

/* ---- the devices ---- */

/* Every buffer is kernel memory today; user buffers arrive with the
 * system calls, which will copy them in and out first. */
static void uio_advance(struct uio *uio, size_t n)
{
    uio->uio_base = (char *)uio->uio_base + n;
    uio->uio_resid -= n;
    uio->uio_offset += n;
}

static int read_eof(struct uio *uio)
{
    return 0;
}

static int write_swallow(struct uio *uio)
{
    uio_advance(uio, uio->uio_resid);
    return 0;
}

static int read_zeros(struct uio *uio)
{
    memset(uio->uio_base, 0, uio->uio_resid);
    uio_advance(uio, uio->uio_resid);
    return 0;
}

/* The console: output goes to the kernel console; input comes a line at
 * a time from the terminal line discipline (drivers/tty/tty.c). */
static int console_dev_read(struct uio *uio)
{
    long n = tty_read(uio->uio_base, uio->uio_resid, false);
    if (n < 0)
        return (int)n;
    uio_advance(uio, (size_t)n);
    return 0;
}

static int console_dev_write(struct uio *uio)
{
    console_write(uio->uio_base, uio->uio_resid);
    uio_advance(uio, uio->uio_resid);
    return 0;
}

static const struct devfs_dev devfs_devs[] = {
    { "console", 5, 1, console_dev_read, console_dev_write },
    { "null", 1, 3, read_eof, write_swallow },
    { "zero", 1, 5, read_zeros, write_swallow },
};
#define NDEVS (sizeof devfs_devs / sizeof devfs_devs[0])

/* One mount: the root and one node per device, in one allocation. */
struct devfs_mount {
    struct devfs_node root;
    struct devfs_node node[NDEVS];
};

static struct devfs_node *VTODN(struct vnode *vp)
{
    return vp->v_data;
}

/* ---- vnode operations ---- */

static int devfs_open(struct vnode **vpp, int flags, struct cred *cr)
{
    return 0;
}

static int devfs_close(struct vnode *vp, int flags, struct cred *cr)
{
    return 0;
}

static int devfs_read(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    struct devfs_node *dn = VTODN(vp);
    if (!dn->dev)
        return -EISDIR;
    if (uio->uio_user)
        return -EFAULT;
    return dn->dev->read(uio);
}

static int devfs_write(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    struct devfs_node *dn = VTODN(vp);
    if (!dn->dev)
        return -EISDIR;
    if (uio->uio_user)
        return -EFAULT;
    return dn->dev->write(uio);
}

static int devfs_ioctl(struct vnode *vp, unsigned long cmd, void *arg, struct cred *cr)
{
    return -ENOTTY;
}

static int devfs_getattr(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    struct devfs_node *dn = VTODN(vp);
    memset(va, 0, sizeof *va);
    va->va_type = vp->v_type;
    va->va_mode = (dn->dev ? S_IFCHR : S_IFDIR) | dn->mode;
    va->va_uid = dn->uid;
    va->va_gid = dn->gid;
    va->va_nlink = dn->dev ? 1 : 2;
    va->va_ino = dn->ino;
    va->va_blksize = 1024;
    va->va_fsid = vp->v_vfsp->vfs_fsid;
    va->va_rdev = vp->v_rdev;
    return 0;
}

/* chmod and chown work (in memory, for this mount); sizes do not apply. */
static int devfs_setattr(struct vnode *vp, const struct vattr *va, struct cred *cr)
{
    struct devfs_node *dn = VTODN(vp);
    if (va->va_mask & (AT_SIZE | AT_ATIME | AT_MTIME | AT_CTIME))
        return dn->dev ? 0 : -EISDIR;
    if (cr->cr_uid != 0 && cr->cr_uid != dn->uid)
        return -EPERM;
    if ((va->va_mask & (AT_UID | AT_GID)) && cr->cr_uid != 0)
        return -EPERM;
    if (va->va_mask & AT_MODE)
        dn->mode = va->va_mode & 07777;
    if (va->va_mask & AT_UID)
        dn->uid = va->va_uid;
    if (va->va_mask & AT_GID)
        dn->gid = va->va_gid;
    return 0;
}

static int devfs_access(struct vnode *vp, int mode, struct cred *cr)
{
    struct devfs_node *dn = VTODN(vp);
    uint32_t type = dn->dev ? S_IFCHR : S_IFDIR;
    return vn_access_check(type | dn->mode, dn->uid, dn->gid, mode, cr);
}

static int devfs_lookup(struct vnode *dvp, const char *name, struct vnode **vpp,
                        struct cred *cr)
{
    struct devfs_node *dn = VTODN(dvp);
    if (dn->dev)
        return -ENOTDIR;
    int err = vn_name_check(name, NAME_MAX);
    if (err)
        return err;
    struct devfs_mount *dm = (struct devfs_mount *)dn;
    struct vnode *vp = NULL;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        vp = &dm->root.vn;
    for (size_t i = 0; i < NDEVS && !vp; i++)
        if (strcmp(name, devfs_devs[i].name) == 0)
            vp = &dm->node[i].vn;
    if (!vp)
        return -ENOENT;
    VN_HOLD(vp);
    *vpp = vp;
    return 0;
}

/* Opening an existing device with O_CREAT reaches here only through a
 * race-free VFS path that looked it up first; new names are refused. */
static int devfs_create(struct vnode *dvp, const char *name, const struct vattr *va, bool excl,
                        struct vnode **vpp, struct cred *cr)
{
    int err = devfs_lookup(dvp, name, vpp, cr);
    if (err == 0 && excl) {
        VN_RELE(*vpp);
        return -EEXIST;
    }
    return err == -ENOENT ? -EPERM : err;
}

static int devfs_no_names(void)
{
    return -EPERM;                  /* the device set is fixed */
}

static int devfs_remove(struct vnode *dvp, const char *name, struct cred *cr)
{
    return devfs_no_names();
}

static int devfs_link(struct vnode *tdvp, struct vnode *svp, const char *tname, struct cred *cr)
{
    return devfs_no_names();
}

static int devfs_rename(struct vnode *sdvp, const char *sname, struct vnode *tdvp,
                        const char *tname, struct cred *cr)
{
    return devfs_no_names();
}

static int devfs_mkdir(struct vnode *dvp, const char *name, const struct vattr *va,
                       struct vnode **vpp, struct cred *cr)
{
    return devfs_no_names();
}

static int devfs_rmdir(struct vnode *dvp, const char *name, struct cred *cr)
{
    return devfs_no_names();
}

static int devfs_symlink(struct vnode *dvp, const char *name, const struct vattr *va,
                         const char *target, struct cred *cr)
{
    return devfs_no_names();
}

/* Append one dirent64 record; false when it does not fit. */
static bool put_dirent(struct uio *uio, uint64_t ino, int64_t next, uint8_t type,
                       const char *name)
{
    size_t namelen = strlen(name);
    size_t reclen = (offsetof(struct dirent64, d_name) + namelen + 1 + 7) & ~(size_t)7;
    if (reclen > uio->uio_resid)
        return false;
    struct dirent64 *d = uio->uio_base;
    memset(d, 0, reclen);
    d->d_ino = ino;
    d->d_off = next;
    d->d_reclen = (uint16_t)reclen;
    d->d_type = type;
    memcpy(d->d_name, name, namelen + 1);
    uio->uio_base = (char *)uio->uio_base + reclen;
    uio->uio_resid -= reclen;
    return true;
}

/* Entries: 0 ".", 1 "..", then the devices; the offset is the entry
 * number, and each record's d_off the number of the next. */
static int devfs_readdir(struct vnode *vp, struct uio *uio, struct cred *cr, bool *eofp)
{
    struct devfs_node *dn = VTODN(vp);
    if (dn->dev)
        return -ENOTDIR;
    if (uio->uio_user)
        return -EFAULT;
    struct devfs_mount *dm = (struct devfs_mount *)dn;
    uint64_t i = uio->uio_offset;
    for (; i < 2 + NDEVS; i++) {
        const char *name = i == 0 ? "." : i == 1 ? ".." : devfs_devs[i - 2].name;
        uint64_t ino = i < 2 ? dm->root.ino : dm->node[i - 2].ino;
        if (!put_dirent(uio, ino, (int64_t)i + 1, i < 2 ? DT_DIR : DT_CHR, name))
            break;
    }
    uio->uio_offset = i;
    if (eofp)
        *eofp = i >= 2 + NDEVS;
    return 0;
}

static int devfs_readlink(struct vnode *vp, struct uio *uio, struct cred *cr)
{
    return -EINVAL;
}

static int devfs_fsync(struct vnode *vp, struct cred *cr)
{
    return 0;
}

static int devfs_truncate(struct vnode *vp, uint64_t size, struct cred *cr)
{
    return VTODN(vp)->dev ? 0 : -EISDIR;
}

/* Not reached while mounted (devfs holds every vnode); kept for VN_RELE's
 * contract. */
static void devfs_inactive(struct vnode *vp, struct cred *cr)
{
}

static const struct vnodeops devfs_vnodeops = {
    .vop_open = devfs_open,
    .vop_close = devfs_close,
    .vop_read = devfs_read,
    .vop_write = devfs_write,
    .vop_ioctl = devfs_ioctl,
    .vop_getattr = devfs_getattr,
    .vop_setattr = devfs_setattr,
    .vop_access = devfs_access,
    .vop_lookup = devfs_lookup,
    .vop_create = devfs_create,
    .vop_remove = devfs_remove,
    .vop_link = devfs_link,
    .vop_rename = devfs_rename,
    .vop_mkdir = devfs_mkdir,
    .vop_rmdir = devfs_rmdir,
    .vop_readdir = devfs_readdir,
    .vop_symlink = devfs_symlink,
    .vop_readlink = devfs_readlink,
    .vop_fsync = devfs_fsync,
    .vop_truncate = devfs_truncate,
    .vop_inactive = devfs_inactive,
};

/* ---- file-system operations ---- */

static void node_init(struct devfs_node *dn, struct vfs *vfsp, const struct devfs_dev *dev,
                      uint64_t ino)
{
    vn_init(&dn->vn, &devfs_vnodeops, dev ? VCHR : VDIR, vfsp, dn);
    dn->dev = dev;
    dn->ino = ino;
    dn->mode = dev ? 0666 : 0755;
    dn->uid = dn->gid = 0;
    if (dev)
        dn->vn.v_rdev = vn_makedev(dev->major, dev->minor);
}

static int devfs_mount(struct vfs *vfsp, struct cred *cr)
{
    struct devfs_mount *dm = kzalloc(sizeof *dm);
    if (!dm)
        return -ENOMEM;
    node_init(&dm->root, vfsp, NULL, 1);
    dm->root.vn.v_flag |= VROOT;
    for (size_t i = 0; i < NDEVS; i++)
        node_init(&dm->node[i], vfsp, &devfs_devs[i], 2 + i);
    vfsp->vfs_data = dm;
    vfsp->vfs_bsize = 1024;
    return 0;
}

/* Called by the VFS with the list lock held exclusive and its own hold on
 * the root dropped: only devfs's own references may remain. */
static int devfs_unmount(struct vfs *vfsp, struct cred *cr)
{
    struct devfs_mount *dm = vfsp->vfs_data;
    for (size_t i = 0; i < NDEVS; i++)
        if (__atomic_load_n(&dm->node[i].vn.v_count, __ATOMIC_ACQUIRE) > 1)
            return -EBUSY;
    vn_destroy(&dm->root.vn);
    for (size_t i = 0; i < NDEVS; i++)
        vn_destroy(&dm->node[i].vn);
    kfree(dm);
    vfsp->vfs_data = NULL;
    return 0;
}

static int devfs_root(struct vfs *vfsp, struct vnode **vpp)
{
    struct devfs_mount *dm = vfsp->vfs_data;
    VN_HOLD(&dm->root.vn);
    *vpp = &dm->root.vn;
    return 0;
}

static int devfs_statfs(struct vfs *vfsp, struct kstatfs *sb)
{
    memset(sb, 0, sizeof *sb);
    sb->f_type = DEVFS_MAGIC;
    sb->f_bsize = 1024;
    sb->f_files = 1 + NDEVS;
    sb->f_namelen = NAME_MAX;
    sb->f_fsid = vfsp->vfs_fsid;
    return 0;
}

static int devfs_sync(struct vfs *vfsp, struct cred *cr)
{
    return 0;
}

static const struct vfsops devfs_vfsops = {
    .vfs_mount = devfs_mount,
    .vfs_unmount = devfs_unmount,
    .vfs_root = devfs_root,
    .vfs_statfs = devfs_statfs,
    .vfs_sync = devfs_sync,
};

const struct vfssw devfs_vfssw = { .name = "devfs", .ops = &devfs_vfsops, .needs_dev = false };
