/*
 * The path-level operations of kern/vfs/vfs.h (vn_open, vn_remove,
 * vn_rename...): what the system calls of a later issue will call.  Each
 * looks the path up (kern/vfs/lookup.c), checks what the VFS checks for
 * every file system (permissions on the directory, ".", "..", mount
 * points, -EXDEV, a directory renamed into itself), and then makes one VOP
 * call that does the work under the directory's vnode lock.  The file
 * system re-checks what can change in between (a name appearing or
 * vanishing, a directory filling up) under its own locks: these checks
 * are for the error codes Linux gives, not for consistency.
 *
 * Error codes follow Linux: unlink of a directory (or of "." / "..") is
 * -EISDIR; rmdir of "." is -EINVAL, of ".." -ENOTEMPTY, of "/" or a mount
 * point -EBUSY; rename of "." or ".." or of a mount point -EBUSY; mkdir,
 * link and symlink onto an existing name -EEXIST; a hard link to a
 * directory -EPERM; in a sticky directory only the owner of the file or
 * of the directory (or the superuser) may remove or rename (-EPERM).
 *
 * Lock: vfs_rename, a resource lock (held across the disk reads of the
 * walk it covers), serializes the renames between two directories, so the
 * walk up from the target ("is the source an ancestor?") cannot race with
 * another rename moving a directory (Linux's s_vfs_rename_mutex).  Renames
 * within one directory do not take it.  It is taken holding no vnode lock
 * (only references), so it comes before vfs_list and the vnode locks.
 */
#include <kern/vfs/vfs_impl.h>
#include <kern/vfs/cred.h>
#include <kern/vm/pcache.h>
#include <kern/lock/sleep.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/options.h>

LOCK_CLASS(vfs_rename_class, "vfs_rename", LK_RESOURCE);

static struct rlock vfs_rename_lock;

void vnops_init(void)
{
    rlock_init(&vfs_rename_lock, &vfs_rename_class, "vfs_rename");
}

static bool vfs_rdonly(struct vnode *vp)
{
    return vp->v_vfsp && (vp->v_vfsp->vfs_flag & VFS_RDONLY);
}

/* May cr add or remove names in directory dvp? */
static int may_modify_dir(struct vnode *dvp, struct cred *cr)
{
    if (vfs_rdonly(dvp))
        return -EROFS;
    return VOP_ACCESS(dvp, VWRITE | VEXEC, cr);
}

/* May cr make a new entry named name in dvp (mkdir, link, symlink)?  A
 * name already taken is -EEXIST before the directory's write permission
 * or a read-only mount is asked about, as Linux's filename_create answers
 * (`mkdir -p` and PostgreSQL's pg_mkdir_p call mkdir on each existing
 * ancestor and go on at EEXIST, where /home is not theirs to write).  The
 * look-up holds no lock across the VOP that makes the entry: the file
 * system finds a name that appeared in between under its own lock. */
static int may_add_name(struct vnode *dvp, const char *name, struct cred *cr)
{
    struct vnode *vp;
    if (VOP_LOOKUP(dvp, name, &vp, cr) == 0) {
        VN_RELE(vp);
        return -EEXIST;
    }
    return may_modify_dir(dvp, cr);
}

/* The sticky-bit rule for removing or renaming vp out of dvp. */
static int sticky_check(struct vnode *dvp, struct vnode *vp, struct cred *cr)
{
    if (cr->cr_uid == 0)
        return 0;
    struct vattr dva, va;
    int err = VOP_GETATTR(dvp, &dva, cr);
    if (err || !(dva.va_mode & S_ISVTX))
        return err;
    if ((err = VOP_GETATTR(vp, &va, cr)))
        return err;
    return (va.va_uid == cr->cr_uid || dva.va_uid == cr->cr_uid) ? 0 : -EPERM;
}

static int parent_of_resolve(const char *path, struct vnode *cwd, unsigned flags,
                             unsigned resolve, struct nameidata *nd, struct cred *cr)
{
    nd->path = path;
    nd->cwd = cwd;
    nd->cr = cr;
    nd->flags = LOOKUP_PARENT | LOOKUP_FOLLOW | flags;
    nd->resolve = resolve;
    return namei(nd);
}

static int parent_of(const char *path, struct vnode *cwd, unsigned flags, struct nameidata *nd,
                     struct cred *cr)
{
    return parent_of_resolve(path, cwd, flags, 0, nd, cr);
}

/* ---- open, close, read and write ---- */

static int open_access_mode(int flags)
{
    switch (flags & O_ACCMODE) {
    case O_RDONLY: return VREAD;
    case O_WRONLY: return VWRITE;
    case O_RDWR:   return VREAD | VWRITE;
    default:       return -EINVAL;
    }
}

/*
 * O_CREAT: find the name in its directory, or create it.  *created tells
 * which.  An existing symbolic link is followed, and if it dangles its
 * target is created, as Linux does (O_EXCL fails on any existing name and
 * O_NOFOLLOW on a link).  links counts the links followed so far.
 */
static int open_create(const char *path, struct vnode *cwd, int flags, uint32_t mode,
                       unsigned resolve, struct vnode **vpp, bool *created, int links,
                       struct cred *cr)
{
    struct nameidata nd;
    int err = parent_of_resolve(path, cwd, 0, resolve, &nd, cr);
    if (err)
        return err;
    struct vnode *dvp = nd.dvp, *vp = NULL;
    if (nd.name[0] == 0) {              /* "/", "dir/", "dir/.": a directory */
        VN_RELE(dvp);
        return (flags & O_EXCL) ? -EEXIST : -EISDIR;
    }
    for (int tries = 0; tries < 4; tries++) {
        err = VOP_LOOKUP(dvp, nd.name, &vp, cr);
        if (err != -ENOENT)
            break;
        if ((err = may_modify_dir(dvp, cr)))
            break;
        struct vattr va = { .va_type = VREG, .va_mode = S_IFREG | (mode & 07777) };
        err = VOP_CREATE(dvp, nd.name, &va, true, &vp, cr);
        if (err == 0) {
            *created = true;
            vn_notify(dvp, IN_CREATE, nd.name, 0);
        }
        if (err != -EEXIST || (flags & O_EXCL))
            break;
        /* Someone created it between our lookup and create: open theirs. */
    }
    if (!err && !*created) {
        if (flags & O_EXCL)
            err = -EEXIST;
        else if (vp->v_type == VDIR)
            err = -EISDIR;
        else if (vp->v_type == VLNK && (flags & O_NOFOLLOW))
            err = -ELOOP;
        else if (vp->v_type == VLNK && (links >= MAXSYMLINKS || (resolve & RESOLVE_NO_SYMLINKS)))
            err = -ELOOP;
        else if (vp->v_type == VLNK && (resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT)))
            err = -EXDEV;       /* a scoped walk does not follow a final link to create */
        struct vnode *target = NULL;
        int magic = !err && vp->v_type == VLNK ? VOP_FOLLOW(vp, &target, cr) : -ENOSYS;
        if (magic != -ENOSYS) {
            /* a link naming its target itself (/proc's fd/N): open that */
            VN_RELE(vp);
            vp = target;
            err = magic ? magic : (resolve & RESOLVE_NO_MAGICLINKS) ? -ELOOP : 0;
        } else if (!err && vp->v_type == VLNK) {
            /* Open or create the link's target, relative to its directory. */
            char *text;
            err = readlink_alloc(vp, &text, NULL, cr);
            VN_RELE(vp);
            vp = NULL;
            if (!err) {
                err = open_create(text, dvp, flags, mode, resolve, &vp, created, links + 1, cr);
                kfree(text);
            }
        }
        if (err && vp) {
            VN_RELE(vp);
            vp = NULL;
        }
    }
    VN_RELE(dvp);
    *vpp = err ? NULL : vp;
    return err;
}

/* The checks on a vnode about to be opened that existed before. */
static int open_check(struct vnode *vp, int flags, int want, struct cred *cr)
{
    if (vp->v_type == VLNK)
        return -ELOOP;                  /* O_NOFOLLOW met a link */
    if ((flags & O_DIRECTORY) && vp->v_type != VDIR)
        return -ENOTDIR;
    bool writes = (want & VWRITE) || (flags & O_TRUNC);
    if (vp->v_type == VDIR && writes)
        return -EISDIR;
    if (writes && vfs_rdonly(vp) && vp->v_type != VCHR && vp->v_type != VBLK
        && vp->v_type != VFIFO && vp->v_type != VSOCK)
        return -EROFS;
    return VOP_ACCESS(vp, want | ((flags & O_TRUNC) ? VWRITE : 0), cr);
}

/* Set once at boot (vfs_set_notify_hook), before any process runs. */
static void (*notify_hook)(struct vnode *vp, uint32_t mask, const char *name, uint32_t cookie);
static uint32_t notify_cookie;      /* [a] */

void vfs_set_notify_hook(void (*fn)(struct vnode *vp, uint32_t mask, const char *name,
                                    uint32_t cookie))
{
    notify_hook = fn;
}

void vn_notify_watched(struct vnode *vp, uint32_t mask, const char *name, uint32_t cookie)
{
    if (notify_hook)
        notify_hook(vp, mask, name, cookie);
}

uint32_t vn_notify_cookie(void)
{
    return __atomic_add_fetch(&notify_cookie, 1, __ATOMIC_RELAXED);
}

/* A link went (unlink, rmdir, a rename's target): vp's own watchers
 * hear of it when it was the last. */
static void notify_unlinked(struct vnode *vp, struct cred *cr)
{
    struct vattr va;
    if (!__atomic_load_n(&vp->v_inwatch, __ATOMIC_ACQUIRE))
        return;
    if (vp->v_type != VDIR)
        vn_notify(vp, IN_ATTRIB, NULL, 0);      /* its link count */
    if (vp->v_type == VDIR || (VOP_GETATTR(vp, &va, cr) == 0 && va.va_nlink == 0))
        vn_notify(vp, IN_DELETE_SELF, NULL, 0);
}

/* Set once at boot (vfs_set_fifo_open), before any process runs. */
static int (*fifo_open_hook)(struct vnode **vpp, int flags);

void vfs_set_fifo_open(int (*fn)(struct vnode **vpp, int flags))
{
    fifo_open_hook = fn;
}

/* O_PATH: the file found, not opened (no access check, no VOP_OPEN, a
 * link itself with O_NOFOLLOW), as Linux's; the other flags but
 * O_DIRECTORY and O_NOFOLLOW are ignored.  kern/proc/fd.c keeps such a
 * descriptor to the calls that only name a file (fd_get_raw). */
static int open_path(const char *path, struct vnode *cwd, int flags, unsigned resolve,
                     struct vnode **vpp, struct cred *cr)
{
    struct vnode *vp;
    int err = lookupname_resolve(path, cwd, !(flags & O_NOFOLLOW), resolve, &vp, cr);
    if (!err && (flags & O_DIRECTORY) && vp->v_type != VDIR) {
        VN_RELE(vp);
        err = -ENOTDIR;
    }
    *vpp = err ? NULL : vp;
    return err;
}

/* The rest of an open once vp (held) is found and checked: the writer
 * count, O_TRUNC, the file's own open, devices and named pipes.  On
 * failure vp is released. */
static int open_found(struct vnode *vp, int flags, int want, bool created, struct vnode **vpp,
                      struct cred *cr)
{
    int err = 0;
    bool writer = vp->v_type == VREG && (want & VWRITE);
    if (writer)
        err = vn_get_write(vp);     /* before O_TRUNC: a running program stays whole */
    writer = writer && !err;
    if (!err && !created && (flags & O_TRUNC) && vp->v_type == VREG)
        err = VOP_TRUNCATE(vp, 0, cr);
    if (!err && vp->v_type == VSOCK)
        err = -ENXIO;                       /* a socket is not opened, it is connected to */
    if (!err)
        err = VOP_OPEN(&vp, flags, cr);     /* may replace vp (a cloning device) */
    if (!err && (vp->v_type == VCHR || vp->v_type == VBLK) && !vn_is_devfs(vp) &&
        !(vp->v_flag & VDEVICE))
        err = devfs_open_rdev(&vp);         /* mknod's nodes open the device */
    if (!err && vp->v_type == VFIFO && vp->v_vfsp && fifo_open_hook)
        err = fifo_open_hook(&vp, flags);   /* a named pipe opens its pipe */
    if (err) {
        if (writer)
            vn_put_write(vp);
        VN_RELE(vp);
        return err;
    }
    vn_notify(vp, IN_OPEN, NULL, 0);
    *vpp = vp;
    return 0;
}

int vn_open(const char *path, struct vnode *cwd, int flags, uint32_t mode, struct vnode **vpp,
            struct cred *cr)
{
    return vn_open_resolve(path, cwd, flags, mode, 0, vpp, cr);
}

int vn_open_resolve(const char *path, struct vnode *cwd, int flags, uint32_t mode,
                    unsigned resolve, struct vnode **vpp, struct cred *cr)
{
    *vpp = NULL;
    if (flags & O_PATH)
        return open_path(path, cwd, flags, resolve, vpp, cr);
    int want = open_access_mode(flags);
    if (want < 0)
        return want;
    struct vnode *vp;
    bool created = false;
    int err;
    if (flags & O_CREAT)
        err = open_create(path, cwd, flags, mode, resolve, &vp, &created, 0, cr);
    else
        err = lookupname_resolve(path, cwd, !(flags & O_NOFOLLOW), resolve, &vp, cr);
    if (err)
        return err;
    if (created && (flags & O_DIRECTORY))
        err = -ENOTDIR;     /* the creator may open what it made whatever the mode says */
    else if (!created)
        err = open_check(vp, flags, want, cr);
    if (err) {
        VN_RELE(vp);
        return err;
    }
    return open_found(vp, flags, want, created, vpp, cr);
}

int vn_open_vnode(struct vnode *vp, int flags, struct vnode **vpp, struct cred *cr)
{
    *vpp = NULL;
    int want = open_access_mode(flags & ~(O_CREAT | O_PATH));
    if (want < 0)
        return want;
    int err = open_check(vp, flags, want, cr);
    if (err)
        return err;
    VN_HOLD(vp);
    return open_found(vp, flags, want, false, vpp, cr);
}

/* mknod: a new file of type (VREG, VFIFO, VCHR, VBLK, VSOCK) named by path. */
int vn_mknod(const char *path, struct vnode *cwd, enum vtype type, uint32_t mode, uint32_t rdev,
             struct cred *cr, struct vnode **vpp)
{
    struct nameidata nd;
    int err = parent_of(path, cwd, 0, &nd, cr);
    if (err)
        return err;
    struct vnode *dvp = nd.dvp, *vp = NULL;
    if (nd.name[0] == 0) {
        VN_RELE(dvp);
        return -EEXIST;
    }
    err = VOP_LOOKUP(dvp, nd.name, &vp, cr);
    if (err == 0) {
        VN_RELE(vp);
        err = -EEXIST;
    } else if (err == -ENOENT && (type == VNON || type == VDIR)) {
        err = type == VNON ? -EINVAL : -EPERM;
    } else if (err == -ENOENT && !(err = may_modify_dir(dvp, cr))) {
        if ((type == VCHR || type == VBLK) && cr->cr_uid != 0) {
            VN_RELE(dvp);
            return -EPERM;
        }
        static const uint32_t bits[] = { [VREG] = S_IFREG, [VFIFO] = S_IFIFO,
                                         [VCHR] = S_IFCHR, [VBLK] = S_IFBLK, [VDIR] = S_IFDIR,
                                         [VLNK] = S_IFLNK, [VSOCK] = S_IFSOCK,
                                         [VNON] = 0 };
        struct vattr va = { .va_type = type, .va_mode = bits[type] | (mode & 07777),
                            .va_rdev = rdev };
        err = VOP_CREATE(dvp, nd.name, &va, true, &vp, cr);
        if (!err)
            vn_notify(dvp, IN_CREATE, nd.name, 0);
        if (!err && vpp)
            *vpp = vp;
        else if (!err)
            VN_RELE(vp);
    }
    VN_RELE(dvp);
    return err;
}

int vn_close(struct vnode *vp, int flags, struct cred *cr)
{
    if (flags & O_PATH) {               /* never opened (open_path) */
        VN_RELE(vp);
        return 0;
    }
    /* The last close of a file open for writing writes its dirty pages
     * back (kern/vm/pcache_rw.c): written data reaches the disk without
     * waiting for the page daemons.  Under syncwrites=off, whose delayed
     * writes already ask for fsck after a crash, the pages are left to
     * the daemons (written within 30 s, as Linux's write-back does):
     * GAEDE's users each waited for every file they wrote. */
    int werr = 0;
    if ((flags & O_ACCMODE) != O_RDONLY && vn_has_pageio(vp) &&
        opts.syncwrites != SYNCWRITES_OFF)
        werr = pcache_flush(vp, 0, ~0UL);
    if (vp->v_type == VREG && (open_access_mode(flags) & VWRITE))
        vn_put_write(vp);
    vn_notify(vp, (flags & O_ACCMODE) != O_RDONLY ? IN_CLOSE_WRITE : IN_CLOSE_NOWRITE, NULL, 0);
    int err = VOP_CLOSE(vp, flags, cr);
    err = err ? err : werr;
    VN_RELE(vp);
    return err;
}

int vn_get_write(struct vnode *vp)
{
    int32_t c = __atomic_load_n(&vp->v_writecount, __ATOMIC_RELAXED);
    do {
        if (c < 0)
            return -ETXTBSY;
    } while (!__atomic_compare_exchange_n(&vp->v_writecount, &c, c + 1, false,
                                          __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
    return 0;
}

void vn_put_write(struct vnode *vp)
{
    int32_t c = __atomic_load_n(&vp->v_writecount, __ATOMIC_RELAXED);
    do {
        if (c <= 0)
            return;
    } while (!__atomic_compare_exchange_n(&vp->v_writecount, &c, c - 1, false,
                                          __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
}

int vn_deny_write(struct vnode *vp)
{
    int32_t c = __atomic_load_n(&vp->v_writecount, __ATOMIC_RELAXED);
    do {
        if (c > 0)
            return -ETXTBSY;
    } while (!__atomic_compare_exchange_n(&vp->v_writecount, &c, c - 1, false,
                                          __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
    return 0;
}

void vn_allow_write(struct vnode *vp)
{
    int32_t c = __atomic_load_n(&vp->v_writecount, __ATOMIC_RELAXED);
    do {
        if (c >= 0)
            return;
    } while (!__atomic_compare_exchange_n(&vp->v_writecount, &c, c + 1, false,
                                          __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
}

int vn_rdwr(struct vnode *vp, bool write, void *buf, size_t len, uint64_t off, int ioflag,
            size_t *done, struct cred *cr)
{
    if (done)
        *done = 0;
    if (vp->v_type == VDIR)
        return -EISDIR;
    struct uio uio = { .uio_base = buf, .uio_resid = len, .uio_offset = off, .uio_user = false };
    int err = write ? VOP_WRITE(vp, &uio, ioflag, cr) : VOP_READ(vp, &uio, ioflag, cr);
    if (done)
        *done = len - uio.uio_resid;
    return err;
}

/* ---- names: remove, link, mkdir, rmdir, symlink ---- */

int vn_remove(const char *path, struct vnode *cwd, struct cred *cr)
{
    struct nameidata nd;
    int err = parent_of(path, cwd, 0, &nd, cr);
    if (err)
        return err;
    struct vnode *dvp = nd.dvp, *vp = NULL;
    if (nd.name[0] == 0)
        err = -EISDIR;                  /* ".", "..", "dir/": a directory */
    if (!err)
        err = may_modify_dir(dvp, cr);
    if (!err)
        err = VOP_LOOKUP(dvp, nd.name, &vp, cr);
    if (!err && vp->v_type == VDIR)
        err = -EISDIR;
    if (!err)
        err = sticky_check(dvp, vp, cr);
    if (!err)
        err = VOP_REMOVE(dvp, nd.name, cr);
    if (!err) {
        notify_unlinked(vp, cr);
        vn_notify(dvp, IN_DELETE, nd.name, 0);
    }
    if (vp)
        VN_RELE(vp);
    VN_RELE(dvp);
    return err;
}

int vn_link(const char *from, const char *to, struct vnode *cwd, struct cred *cr)
{
    struct vnode *svp;
    int err = lookupname(from, cwd, false, &svp, cr);
    if (err)
        return err;
    struct nameidata nd;
    if (svp->v_type == VDIR) {
        err = -EPERM;
    } else if (!(err = parent_of(to, cwd, 0, &nd, cr))) {
        struct vnode *tdvp = nd.dvp;
        if (nd.name[0] == 0)
            err = -EEXIST;
        else if (tdvp->v_vfsp != svp->v_vfsp)
            err = -EXDEV;
        else
            err = may_add_name(tdvp, nd.name, cr);
        if (!err)
            err = VOP_LINK(tdvp, svp, nd.name, cr);
        if (!err) {
            vn_notify(svp, IN_ATTRIB, NULL, 0);
            vn_notify(tdvp, IN_CREATE, nd.name, 0);
        }
        VN_RELE(tdvp);
    }
    VN_RELE(svp);
    return err;
}

int vn_mkdir(const char *path, struct vnode *cwd, uint32_t mode, struct cred *cr)
{
    struct nameidata nd;
    int err = parent_of(path, cwd, LOOKUP_SLASHOK, &nd, cr);
    if (err)
        return err;
    struct vnode *dvp = nd.dvp, *vp;
    if (nd.name[0] == 0)
        err = -EEXIST;
    if (!err)
        err = may_add_name(dvp, nd.name, cr);
    if (!err) {
        struct vattr va = { .va_type = VDIR, .va_mode = S_IFDIR | (mode & 01777) };
        err = VOP_MKDIR(dvp, nd.name, &va, &vp, cr);
        if (!err) {
            VN_RELE(vp);
            vn_notify(dvp, IN_CREATE | IN_ISDIR, nd.name, 0);
        }
    }
    VN_RELE(dvp);
    return err;
}

int vn_rmdir(const char *path, struct vnode *cwd, struct cred *cr)
{
    switch (path_last_kind(path)) {
    case LAST_DOT:    return -EINVAL;
    case LAST_DOTDOT: return -ENOTEMPTY;
    case LAST_ROOT:   return -EBUSY;
    case LAST_NORM:   break;
    }
    struct nameidata nd;
    int err = parent_of(path, cwd, LOOKUP_SLASHOK, &nd, cr);
    if (err)
        return err;
    struct vnode *dvp = nd.dvp, *vp = NULL;
    err = may_modify_dir(dvp, cr);
    if (!err)
        err = VOP_LOOKUP(dvp, nd.name, &vp, cr);
    if (!err) {
        if (vp->v_type != VDIR)
            err = -ENOTDIR;
        else if (vp->v_vfsmountedhere || vp == rootdir)
            err = -EBUSY;
        else
            err = sticky_check(dvp, vp, cr);
    }
    if (!err)
        err = VOP_RMDIR(dvp, nd.name, cr);
    if (!err) {
        notify_unlinked(vp, cr);
        vn_notify(dvp, IN_DELETE | IN_ISDIR, nd.name, 0);
    }
    if (vp)
        VN_RELE(vp);
    VN_RELE(dvp);
    return err;
}

int vn_symlink(const char *target, const char *path, struct vnode *cwd, struct cred *cr)
{
    size_t tlen;
    int err = vn_symlink_check(target, &tlen);
    if (err)
        return err;
    struct nameidata nd;
    err = parent_of(path, cwd, 0, &nd, cr);
    if (err)
        return err;
    struct vnode *dvp = nd.dvp;
    if (nd.name[0] == 0)
        err = -EEXIST;
    if (!err)
        err = may_add_name(dvp, nd.name, cr);
    if (!err) {
        struct vattr va = { .va_type = VLNK, .va_mode = S_IFLNK | 0777 };
        err = VOP_SYMLINK(dvp, nd.name, &va, target, cr);
        if (!err)
            vn_notify(dvp, IN_CREATE, nd.name, 0);
    }
    VN_RELE(dvp);
    return err;
}

int vn_stat(const char *path, struct vnode *cwd, bool follow, struct vattr *va, struct cred *cr)
{
    struct vnode *vp;
    int err = lookupname(path, cwd, follow, &vp, cr);
    if (err)
        return err;
    err = VOP_GETATTR(vp, va, cr);
    VN_RELE(vp);
    return err;
}

/* ---- rename ---- */

/*
 * Is directory dir (held by the caller) svp or below it?  Walks ".." up
 * to the root of the file system; the caller holds vfs_rename_lock so no
 * directory moves meanwhile.  Returns 1, 0 or a negative errno.
 */
static int is_below(struct vnode *dir, struct vnode *svp, struct cred *cr)
{
    struct vnode *d = dir;
    VN_HOLD(d);
    int result = 0;
    for (int depth = 0;; depth++) {
        if (d == svp) {
            result = 1;
            break;
        }
        if (d == rootdir || (d->v_vfsp && d == d->v_vfsp->vfs_rootvp))
            break;
        if (depth > PATH_MAX) {         /* a loop of ".." entries: a damaged disk */
            result = -ELOOP;
            break;
        }
        struct vnode *up;
        result = VOP_LOOKUP(d, "..", &up, cr);
        if (result)
            break;
        bool top = up == d;
        VN_RELE(d);
        d = up;
        if (top)
            break;
    }
    VN_RELE(d);
    return result;
}

/* The type rules between a rename's source and an existing target. */
static int rename_target_check(struct vnode *svp, struct vnode *tvp)
{
    if (tvp->v_vfsmountedhere || tvp == rootdir)
        return -EBUSY;
    if (svp->v_type == VDIR && tvp->v_type != VDIR)
        return -ENOTDIR;
    if (svp->v_type != VDIR && tvp->v_type == VDIR)
        return -EISDIR;
    return 0;
}

/* A rename's events: the old name moved from, the new moved to (one
 * cookie for both), the file moved, and a replaced file unlinked. */
static void notify_rename(struct nameidata *s, struct nameidata *t, struct vnode *svp,
                          struct vnode *tvp, struct cred *cr)
{
    uint32_t dir = svp->v_type == VDIR ? IN_ISDIR : 0;
    uint32_t cookie = vn_notify_cookie();
    vn_notify(s->dvp, IN_MOVED_FROM | dir, s->name, cookie);
    vn_notify(t->dvp, IN_MOVED_TO | dir, t->name, cookie);
    vn_notify(svp, IN_MOVE_SELF, NULL, 0);
    if (tvp)
        notify_unlinked(tvp, cr);
}

/* With both parents looked up and held: the checks, then VOP_RENAME. */
static int rename_in(struct nameidata *s, struct nameidata *t, struct cred *cr)
{
    struct vnode *sdvp = s->dvp, *tdvp = t->dvp, *svp = NULL, *tvp = NULL;
    int err;
    if (sdvp->v_vfsp != tdvp->v_vfsp)
        return -EXDEV;
    if ((err = may_modify_dir(sdvp, cr)) || (err = may_modify_dir(tdvp, cr)))
        return err;
    if ((err = VOP_LOOKUP(sdvp, s->name, &svp, cr)))
        return err;
    if (svp->v_vfsmountedhere || svp == rootdir)
        err = -EBUSY;
    else if ((s->trailing_slash || t->trailing_slash) && svp->v_type != VDIR)
        err = -ENOTDIR;
    else
        err = sticky_check(sdvp, svp, cr);
    if (!err) {
        int terr = VOP_LOOKUP(tdvp, t->name, &tvp, cr);
        if (terr == 0 && tvp != svp)
            err = rename_target_check(svp, tvp);
        if (terr == 0 && tvp != svp && !err)
            err = sticky_check(tdvp, tvp, cr);
        if (terr != 0 && terr != -ENOENT)
            err = terr;
    }
    /* A directory may not move into itself or below itself. */
    if (!err && svp->v_type == VDIR && sdvp != tdvp) {
        int below = is_below(tdvp, svp, cr);
        err = below < 0 ? below : below ? -EINVAL : 0;
    }
    /* Two names of one file: POSIX says do nothing and succeed. */
    if (!err && tvp != svp)
        err = VOP_RENAME(sdvp, s->name, tdvp, t->name, cr);
    if (!err && tvp != svp)
        notify_rename(s, t, svp, tvp, cr);
    if (tvp)
        VN_RELE(tvp);
    VN_RELE(svp);
    return err;
}

int vn_rename(const char *from, const char *to, struct vnode *cwd, struct cred *cr)
{
    if (path_last_kind(from) != LAST_NORM || path_last_kind(to) != LAST_NORM)
        return -EBUSY;
    struct nameidata s, t;
    int err = parent_of(from, cwd, LOOKUP_SLASHOK, &s, cr);
    if (err)
        return err;
    err = parent_of(to, cwd, LOOKUP_SLASHOK, &t, cr);
    if (!err) {
        /* Only a move between directories can put a directory below
         * itself; those take the rename lock (no vnode lock is held here,
         * only references). */
        bool cross = s.dvp != t.dvp;
        if (cross)
            rlock_acquire(&vfs_rename_lock);
        err = rename_in(&s, &t, cr);
        if (cross)
            rlock_release(&vfs_rename_lock);
        VN_RELE(t.dvp);
    }
    VN_RELE(s.dvp);
    return err;
}
