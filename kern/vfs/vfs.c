/*
 * The VFS layer: file-system types, the mount list, mounting and
 * unmounting, sync, and the boot-time root.  Pathname lookup is in
 * kern/vfs/lookup.c, the path-level operations (vn_open, vn_remove...) in
 * kern/vfs/vnops.c, devfs in kern/vfs/devfs.c, reference counting and the
 * permission rule in kern/vfs/vnode.c.
 *
 * Theory.  This is the SunOS/SVR4 vnode architecture (Kleiman) with the
 * locking of SVR4 MP (Peacock, seed 001).  A file system type is a struct
 * vfssw naming its vfsops; each mounted instance is a struct vfs on the
 * mount list; each active file is a struct vnode whose vnodeops the VOP_*
 * macros call.  Almost every way into a file system is a VOP call, which
 * is what makes one generic locking model possible:
 *
 *  - The vnode lock.  VOP_* holds v_lock, an SVR4 sleep mutex, around the
 *    file system's operation: "a lock on a vnode is obtained and released
 *    around almost every VOP call".  It is recursive, so the VFS may hold
 *    it around several VOPs to make them one atomic step (lookup holds the
 *    directory's lock around VOP_ACCESS and VOP_LOOKUP), and a VOP may call
 *    another on the same vnode.  It is released when its holder sleeps and
 *    taken again before it runs, so a thread waiting for a second vnode
 *    lock (lookup of "..", a rename between two directories) has given up
 *    the first: vnode locks cannot deadlock among themselves.
 *  - ILOCK and IRWLOCK.  Inside S5 the inode's ILOCKED (contents) and
 *    IRWLOCKED (atomic read/write) flags are resource locks kept across
 *    disk I/O.  ILOCK and IRWLOCK take the vnode lock too and IUNLOCK and
 *    IRWUNLOCK release it, so two processes holding the two flags are never
 *    running in the inode at once, as on a uniprocessor.  A VOP that
 *    returns with ILOCKED set returns with the vnode lock still held one
 *    level deep; the matching IUNLOCK in a later VOP drops it.
 *  - References.  VN_HOLD and VN_RELE are single atomic operations.  The
 *    VN_RELE that reaches 0 calls VOP_INACTIVE without the vnode lock.  A
 *    file system that keeps inactive vnodes cached marks them truly
 *    inactive by taking the count on to -1 under its inode-cache lock, and
 *    a cache lookup that finds -1 sets 0 before its VN_HOLD: so a lookup
 *    racing with the last VN_RELE cannot cause two inactivations (the
 *    protocol in kern/vfs/vnode.h; the ktests' memfs runs it too).
 *  - The mount list.  vfs_list_lock is a shared/exclusive lock (an rwlock,
 *    class "vfs_list", held across blocking).  Mount and unmount take it
 *    exclusive for their whole work, including the lookup of the mount
 *    point (namei then skips taking it: LOOKUP_LISTHELD); sync and a lookup
 *    crossing a mount point take it shared.  This is the paper's VFS
 *    locking: it "serializes access to mount points during pathname
 *    lookup, mount and unmount" and resolves the race between an unmount
 *    and a lookup entering the file system being unmounted.  The lookup
 *    holds the mounted root before releasing the lock; unmount, under the
 *    lock, refuses (-EBUSY) when the root has more references than just
 *    after mount (vfs_rootrefs) or the file system reports other vnodes in
 *    use.  A vnode inside a mounted file system that someone holds keeps
 *    that file system mounted, so ".." and v_vfsp need no lock.
 *  - Each vfs holds its root (vfs_rootvp) and the covered directory
 *    (vfs_vnodecovered) from mount to unmount; rootdir, the root file
 *    system's root, is held for ever (released only by vfs_unmount_all at
 *    power-off).
 *
 * Lock order (outer first): the rename resource lock (vfs_rename, in
 * vnops.c) -> vfs_list -> vnode locks (several may be held; the sleep rule
 * above makes any order safe) -> the file systems' own locks (inode cache,
 * superblock) -> buffer cache and DNLC spin locks.  The VFS never calls a
 * VOP while holding vfs_list shared, only VN_HOLD; mount and unmount call
 * VOPs and vfsops under it exclusive.
 *
 * Root: vfs_mountroot mounts S5 from the disk named by root= and then
 * devfs on its /dev.  With no root= (or a root that will not mount) there
 * is no root file system: rootdir stays NULL, absolute lookups give
 * -ENOENT, and nothing panics.  devfs is not made the root in its place:
 * nothing needs a namespace without a disk (user programs come from the
 * disk), and the ktests build their own (kern/tests/test_vfs.c).
 */
#include <kern/vfs/vfs_impl.h>
#include <kern/vfs/cred.h>
#include <kern/vfs/dnlc.h>
#include <kern/vfs/buf.h>
#include <kern/arch/panic.h>
#include <drivers/block/bio.h>
#include <kern/s5/s5.h>
#include <kern/s5/s5_fs.h>
#include <kern/ufs/ufs_fs.h>
#include <kern/vm/kmem.h>
#include <kern/vm/rmap.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>

LOCK_CLASS(vfs_list_class, "vfs_list", LK_RWLOCK);

struct rwlock vfs_list_lock;
struct vfs *vfs_list;               /* [m] newest first */
static uint32_t vfs_next_fsid = 1;  /* [m] */

struct vfs *rootvfs;                /* [m] set once at boot */
struct vnode *rootdir;              /* [m] set once at boot; held */

/* The file-system types. */
static const struct vfssw *const vfs_types[] = { &s5_vfssw, &devfs_vfssw, &ufs_vfssw,
                                                  &tmpfs_vfssw };
/* Types of higher layers (procfs), registered at boot before any mount. */
#define VFS_MORE_TYPES 4
static const struct vfssw *vfs_more_types[VFS_MORE_TYPES];    /* [c] after boot */

const struct vfssw *vfs_type_at(int i)
{
    int fixed = (int)(sizeof vfs_types / sizeof vfs_types[0]);
    if (i < 0)
        return NULL;
    if (i < fixed)
        return vfs_types[i];
    return i - fixed < VFS_MORE_TYPES ? vfs_more_types[i - fixed] : NULL;
}

int vfs_register_type(const struct vfssw *sw)
{
    for (int i = 0; i < VFS_MORE_TYPES; i++)
        if (!vfs_more_types[i]) {
            vfs_more_types[i] = sw;
            return 0;
        }
    return -ENOSPC;
}

const struct vfssw *vfs_findtype(const char *name)
{
    const struct vfssw *sw;
    for (int i = 0; (sw = vfs_type_at(i)); i++)
        if (strcmp(sw->name, name) == 0)
            return sw;
    return NULL;
}

int vfs_list_mounts(struct vfs_mountinfo *out, int max)
{
    int n = 0;
    rw_enter(&vfs_list_lock, RW_READER);
    for (struct vfs *m = vfs_list; m; m = m->vfs_next, n++) {
        if (n >= max)
            continue;
        /* newest first on the list; oldest first in out */
        memmove(&out[1], &out[0], (size_t)MIN(n, max - 1) * sizeof *out);
        struct vfs_mountinfo *mi = &out[0];
        mi->sw = m->vfs_sw;
        snprintf(mi->dev, sizeof mi->dev, "%s", m->vfs_dev ? m->vfs_dev->name : "");
        mi->flags = m->vfs_flag;
        mi->covered = m->vfs_vnodecovered;
        if (mi->covered)
            VN_HOLD(mi->covered);
    }
    rw_exit(&vfs_list_lock);
    return MIN(n, max);
}

static void purge_dnlc_of(struct vfs *vfsp)
{
    dnlc_purge_vfsp(vfsp, 0);
}

void vfs_init(void)
{
    cred_init();
    dnlc_init();
    binit(0);
    panic_register_hang_dump(HANG_DUMP_BUFFERS, buf_dump_busy);
    rw_init(&vfs_list_lock, &vfs_list_class, "vfs_list");
    vnops_init();
}

/* ---- mounting ---- */

static bool disk_in_use(struct blkdev *dev)
{
    for (struct vfs *m = vfs_list; m; m = m->vfs_next)
        if (m->vfs_dev == dev)
            return true;
    return false;
}

/* Look up the directory to mount on, with the list lock held exclusive:
 * it must be a directory and not the root of a file system (which also
 * refuses mounting twice on one place, since lookup crosses into what is
 * mounted there). */
static int find_mount_point(const char *path, struct vnode *cwd, struct cred *cr,
                            struct vnode **vpp)
{
    struct nameidata nd = { .path = path, .cwd = cwd, .cr = cr,
                            .flags = LOOKUP_FOLLOW | LOOKUP_LISTHELD };
    int err = namei(&nd);
    if (err)
        return err;
    struct vnode *vp = nd.vp;
    if (vp->v_type != VDIR)
        err = -ENOTDIR;
    else if (vp->v_vfsmountedhere || (vp->v_vfsp && vp == vp->v_vfsp->vfs_rootvp))
        err = -EBUSY;
    if (err) {
        VN_RELE(vp);
        return err;
    }
    *vpp = vp;
    return 0;
}

/* With the list lock held exclusive: mount vfsp and put it on the list.
 * covered (held; the reference passes to the vfs) is NULL for the root. */
static int mount_locked(struct vfs *vfsp, const struct vfssw *sw, struct blkdev *dev,
                        struct vnode *covered, uint32_t flags, const char *mntopts,
                        struct cred *cr)
{
    vfsp->vfs_op = sw->ops;
    vfsp->vfs_sw = sw;
    vfsp->vfs_dev = dev;
    vfsp->vfs_flag = flags;
    vfsp->vfs_fsid = vfs_next_fsid++;
    vfsp->vfs_mntopts = mntopts;
    int err = sw->ops->vfs_mount(vfsp, cr);
    vfsp->vfs_mntopts = NULL;           /* the caller's string: not kept */
    if (err)
        return err;
    struct vnode *root;
    err = VFS_ROOT(vfsp, &root);
    if (!err && root->v_type != VDIR) {
        kprintf("vfs: %s%s%s: its root is not a directory\n", sw->name,
                dev ? " on " : "", dev ? dev->name : "");
        VN_RELE(root);
        err = -EUCLEAN;
    }
    if (err) {
        sw->ops->vfs_unmount(vfsp, cr);
        return err;
    }
    vfsp->vfs_rootvp = root;
    vfsp->vfs_rootrefs = __atomic_load_n(&root->v_count, __ATOMIC_ACQUIRE);
    vfsp->vfs_vnodecovered = covered;
    vfsp->vfs_next = vfs_list;
    vfs_list = vfsp;
    if (covered) {
        __atomic_store_n(&covered->v_vfsmountedhere, vfsp, __ATOMIC_RELEASE);
    } else {
        VN_HOLD(root);
        rootvfs = vfsp;
        __atomic_store_n(&rootdir, root, __ATOMIC_RELEASE);
    }
    return 0;
}

int vfs_mount_at(const struct vfssw *sw, const char *devname, const char *path,
                 struct vnode *cwd, uint32_t flags, struct cred *cr)
{
    return vfs_mount_opts(sw, devname, path, cwd, flags, NULL, cr);
}

int vfs_mount_opts(const struct vfssw *sw, const char *devname, const char *path,
                   struct vnode *cwd, uint32_t flags, const char *mntopts, struct cred *cr)
{
    if (!sw)
        return -ENODEV;
    if (cr->cr_uid != 0)
        return -EPERM;
    struct blkdev *dev = NULL;
    if (sw->needs_dev && (!devname || !(dev = blk_find(devname))))
        return -ENXIO;
    struct vfs *vfsp = kzalloc(sizeof *vfsp);
    if (!vfsp)
        return -ENOMEM;

    rw_enter(&vfs_list_lock, RW_WRITER);
    struct vnode *covered = NULL;
    int err = 0;
    if (path)
        err = find_mount_point(path, cwd, cr, &covered);
    else if (rootvfs)
        err = -EBUSY;
    if (!err && dev && disk_in_use(dev))
        err = -EBUSY;
    if (!err)
        err = mount_locked(vfsp, sw, dev, covered, flags, mntopts, cr);
    rw_exit(&vfs_list_lock);

    if (err) {
        if (covered)
            VN_RELE(covered);
        kfree(vfsp);
    }
    return err;
}

int vfs_mount(const char *fstype, const char *devname, const char *path, uint32_t flags,
              struct cred *cr)
{
    return vfs_mount_at(vfs_findtype(fstype), devname, path, NULL, flags, cr);
}

/* ---- unmounting ---- */

static void list_remove(struct vfs *vfsp)
{
    for (struct vfs **pp = &vfs_list; *pp; pp = &(*pp)->vfs_next)
        if (*pp == vfsp) {
            *pp = vfsp->vfs_next;
            return;
        }
}

/*
 * With the list lock held exclusive: unmount vfsp if nothing uses it.
 * On success it is off the list and *coveredp is the directory it covered
 * (still held: the caller releases it and frees vfsp).  The VFS drops its
 * hold on the root before asking the file system, which may then dispose
 * of every vnode; if the file system refuses, the root is held again.
 */
static int unmount_locked(struct vfs *vfsp, struct cred *cr, struct vnode **coveredp)
{
    for (struct vfs *m = vfs_list; m; m = m->vfs_next)
        if (m->vfs_vnodecovered && m->vfs_vnodecovered->v_vfsp == vfsp)
            return -EBUSY;              /* something is mounted inside it */
    purge_dnlc_of(vfsp);
    struct vnode *root = vfsp->vfs_rootvp;
    if (__atomic_load_n(&root->v_count, __ATOMIC_ACQUIRE) > vfsp->vfs_rootrefs)
        return -EBUSY;
    VN_RELE(root);
    int err = vfsp->vfs_op->vfs_unmount(vfsp, cr);
    if (err) {
        if (VFS_ROOT(vfsp, &root) == 0) {
            vfsp->vfs_rootvp = root;
        } else {
            kprintf("vfs: %s refused to unmount and lost its root; it stays unreachable\n",
                    vfsp->vfs_sw->name);
            vfsp->vfs_rootvp = NULL;
        }
        return err;
    }
    list_remove(vfsp);
    struct vnode *covered = vfsp->vfs_vnodecovered;
    if (covered)
        __atomic_store_n(&covered->v_vfsmountedhere, NULL, __ATOMIC_RELEASE);
    if (vfsp == rootvfs)
        rootvfs = NULL;
    *coveredp = covered;
    return 0;
}

int vfs_unmount_at(const char *path, struct vnode *cwd, struct cred *cr)
{
    if (cr->cr_uid != 0)
        return -EPERM;
    rw_enter(&vfs_list_lock, RW_WRITER);
    struct nameidata nd = { .path = path, .cwd = cwd, .cr = cr,
                            .flags = LOOKUP_FOLLOW | LOOKUP_LISTHELD };
    struct vnode *covered = NULL;
    struct vfs *vfsp = NULL;
    int err = namei(&nd);
    if (!err) {
        vfsp = nd.vp->v_vfsp;
        if (!vfsp || nd.vp != vfsp->vfs_rootvp)
            err = -EINVAL;              /* not a mount point */
        else if (vfsp == rootvfs)
            err = -EBUSY;
        VN_RELE(nd.vp);
    }
    if (!err)
        err = unmount_locked(vfsp, cr, &covered);
    rw_exit(&vfs_list_lock);
    if (!err) {
        if (covered)
            VN_RELE(covered);
        kfree(vfsp);
    }
    return err;
}

int vfs_unmount(const char *path, struct cred *cr)
{
    return vfs_unmount_at(path, NULL, cr);
}

/* ---- sync and power-off ---- */

void vfs_sync_all(void)
{
    rw_enter(&vfs_list_lock, RW_READER);
    for (struct vfs *m = vfs_list; m; m = m->vfs_next)
        VFS_SYNC(m, kcred);
    rw_exit(&vfs_list_lock);
}

int vfs_sync_wait(void)
{
    rmap_harvest_all();         /* every process's stores through mappings, too */
    vfs_sync_all();
    return bflush_held(NULL);
}

static void describe(const struct vfs *vfsp, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s%s%s", vfsp->vfs_sw->name, vfsp->vfs_dev ? " on " : "",
             vfsp->vfs_dev ? vfsp->vfs_dev->name : "", vfsp == rootvfs ? " (root)" : "");
}

void vfs_unmount_all(void)
{
    dnlc_purge();
    rw_enter(&vfs_list_lock, RW_WRITER);
    struct vfs *next;
    for (struct vfs *vfsp = vfs_list; vfsp; vfsp = next) {
        next = vfsp->vfs_next;
        char what[48];
        describe(vfsp, what, sizeof what);
        int err = VFS_SYNC(vfsp, kcred);
        if (err)
            kprintf("vfs: sync of %s failed (errno %d)\n", what, -err);
        bool isroot = vfsp == rootvfs;
        if (isroot && rootdir) {
            VN_RELE(rootdir);
            rootdir = NULL;
        }
        struct vnode *covered = NULL;
        err = unmount_locked(vfsp, kcred, &covered);
        if (err) {
            kprintf("vfs: %s still in use at power-off (errno %d): synced, not unmounted\n",
                    what, -err);
            if (isroot && vfsp->vfs_rootvp) {
                VN_HOLD(vfsp->vfs_rootvp);
                rootdir = vfsp->vfs_rootvp;
            }
            continue;
        }
        kprintf("vfs: unmounted %s\n", what);
        if (covered)
            VN_RELE(covered);
        kfree(vfsp);
    }
    rw_exit(&vfs_list_lock);
}

/* ---- the root at boot ---- */

static const char *mount_error_reason(int err, const char *type)
{
    bool ufs = strcmp(type, "ufs") == 0;
    switch (-err) {
    case ENXIO:   return "no such disk";
    case ENODEV:  return "this kernel has no such file system";
    case EINVAL:  return ufs ? "not a ufs file system" : "neither an s5 nor a ufs file system";
    case EUCLEAN: return ufs ? "the file system is damaged (run fsck.ufs)"
                             : "the file system is damaged (run fsck.s5)";
    case EIO:     return "I/O error";
    case ENOMEM:  return "out of memory";
    case EBUSY:   return "already mounted";
    default:      return "mount failed";
    }
}

/* Does the 32-bit word at byte off of disk d equal magic?  (Read
 * through a buffer of BUF_MAX_SIZE bytes, which the caller drops.) */
static bool magic_at(struct blkdev *d, uint64_t off, uint32_t magic)
{
    int err = 0;
    uint32_t word = 0;
    struct buf *bp = bread(d, off / BUF_MAX_SIZE, BUF_MAX_SIZE, &err);
    if (!bp)
        return false;
    memcpy(&word, (char *)bp->b_data + off % BUF_MAX_SIZE, sizeof word);
    brelse(bp);
    return word == magic;
}

/* The probe's buffers are dropped, so the file system reads the disk in
 * its own block size. */
const char *vfs_probe_fstype(const char *name)
{
    struct blkdev *d = blk_find(name);
    if (!d || blk_claimed(d) || d->bsize == 0 || BUF_MAX_SIZE % d->bsize)
        return "s5";
    const char *type = "s5";
    if (!magic_at(d, S5_SBOFF + offsetof(struct s5_super, s_magic), S5_MAGIC) &&
        magic_at(d, UFS_SBOFF + offsetof(struct ufs_super, fs_magic), UFS1_MAGIC))
        type = "ufs";
    binval(d);
    return type;
}

/* root=ram0 and the RAM disk holds no S5 file system (it starts empty):
 * make a new one that fills it, and mount that. */
static int format_ram_root(void)
{
    struct blkdev *d = blk_find("ram0");
    if (!d)
        return -ENXIO;
    uint32_t kib = (uint32_t)(d->nblocks * d->bsize / 1024);
    int err = s5_mkfs(d, kib, kib / 8);
    if (err)
        return err;
    kprintf("vfs: ram0 holds no file system; made a new S5 file system of %u KiB\n", kib);
    return vfs_mount("s5", "ram0", NULL, 0, kcred);
}

/* With a root mounted: put devfs on its /dev, if it has one. */
static void mount_devfs_on_dev(void)
{
    struct vnode *vp;
    int err = lookupname("/dev", NULL, true, &vp, kcred);
    if (err) {
        kprintf("vfs: the root has no /dev (errno %d); devfs not mounted\n", -err);
        return;
    }
    bool dir = vp->v_type == VDIR;
    VN_RELE(vp);
    if (!dir) {
        kprintf("vfs: /dev on the root is not a directory; devfs not mounted\n");
        return;
    }
    err = vfs_mount("devfs", NULL, "/dev", 0, kcred);
    if (err) {
        kprintf("vfs: cannot mount devfs on /dev (errno %d)\n", -err);
        return;
    }
    kprintf("vfs: devfs on /dev\n");
    /* The pseudo-terminals' slaves (kern/pty/pty.c), as Linux's
     * /dev/pts. */
    err = vfs_mount("devpts", NULL, "/dev/pts", 0, kcred);
    if (err)
        kprintf("vfs: cannot mount devpts on /dev/pts (errno %d)\n", -err);
    /* POSIX shared memory and named semaphores (glibc's shm_open and
     * sem_open, Python's multiprocessing), as every Linux system's. */
    err = vfs_mount_opts(vfs_findtype("tmpfs"), "tmpfs", "/dev/shm", NULL, 0, "mode=1777", kcred);
    if (err)
        kprintf("vfs: cannot mount tmpfs on /dev/shm (errno %d)\n", -err);
}

void vfs_mountroot(const char *dev)
{
    if (!dev || !dev[0]) {
        kprintf("vfs: no root= given; no root file system\n");
        return;
    }
    const char *type = vfs_probe_fstype(dev);
    int err = vfs_mount(type, dev, NULL, 0, kcred);
    bool fresh = false;
    if (err == -EINVAL && strcmp(dev, "ram0") == 0) {
        err = format_ram_root();
        fresh = !err;
    }
    if (err) {
        kprintf("vfs: cannot mount root %s: %s (errno %d)\n", dev, mount_error_reason(err, type),
                -err);
        return;
    }
    struct kstatfs sb;
    memset(&sb, 0, sizeof sb);
    if (VFS_STATFS(rootvfs, &sb) == 0)
        kprintf("vfs: root %s on %s (%lu blocks free, %lu inodes free)\n", rootvfs->vfs_sw->name, dev,
                (unsigned long)sb.f_bfree, (unsigned long)sb.f_ffree);
    else
        kprintf("vfs: root %s on %s\n", rootvfs->vfs_sw->name, dev);
    if (fresh)
        vn_mkdir("/dev", NULL, 0755, kcred);     /* a mount point for devfs */
    mount_devfs_on_dev();
}
