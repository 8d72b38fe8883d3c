/*
 * tmpfs vnode operations: attributes, the page operations, and the name
 * space (lookup, create, mkdir, symlink, link, remove, rmdir; rename and
 * readdir are in tmpfs_dir.c).  Each is called through a VOP_* macro with
 * the vnode's lock held and takes the TN_LOCKED locks it needs, parent
 * before child; none returns holding one.  Theory and lock order at the
 * top of kern/tmpfs/tmpfs.c.
 */
#include <kern/tmpfs/tmpfs.h>
#include <kern/vfs/cred.h>
#include <kern/vfs/dnlc.h>
#include <kern/vm/pcache.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>

static bool rdonly(const struct tmpnode *tp)
{
    return tp->tn_mount->tm_vfsp->vfs_flag & VFS_RDONLY;
}

static uint64_t pages_of(uint64_t size)
{
    return (size >> PAGE_SHIFT) + ((size & (PAGE_SIZE - 1)) != 0);
}

/* ---- permissions and attributes ---- */

/* A read-only mount refuses writing files, directories and links, not
 * devices, FIFOs and sockets (Linux's rule). */
static int rofs_check(const struct vnode *vp, int mode)
{
    bool data = vp->v_type == VREG || vp->v_type == VDIR || vp->v_type == VLNK;
    return (mode & VWRITE) && data && (vp->v_vfsp->vfs_flag & VFS_RDONLY) ? -EROFS : 0;
}

int tmpnode_access(struct tmpnode *tp, int mode, struct cred *cr)
{
    int err = rofs_check(TNTOV(tp), mode);
    return err ? err : vn_access_check(tp->tn_mode, tp->tn_uid, tp->tn_gid, mode, cr);
}

int tmpnode_sticky(struct tmpnode *dp, struct tmpnode *tp, struct cred *cr)
{
    return vn_sticky_check(dp->tn_mode, dp->tn_uid, READ_ONCE(tp->tn_uid), cr);
}

static int tmpfs_access(struct vnode *vp, int mode, struct cred *cr)
{
    struct tmpnode *tp = VTOTN(vp);
    TN_LOCK(tp);
    int err = tmpnode_access(tp, mode, cr);
    TN_UNLOCK(tp);
    return err;
}

/* Lookup's DNLC path: the mode and owner each read once, unlocked. */
static int tmpfs_access_nolock(struct vnode *vp, int mode, struct cred *cr)
{
    struct tmpnode *tp = VTOTN(vp);
    int err = rofs_check(vp, mode);
    return err ? err : vn_access_check(READ_ONCE(tp->tn_mode), READ_ONCE(tp->tn_uid),
                                       READ_ONCE(tp->tn_gid), mode, cr);
}

/* The attributes, TN_LOCKED or (getattr_nolock) each field read once. */
static void fill_attr(struct vnode *vp, struct tmpnode *tp, struct vattr *va)
{
    va->va_type = vp->v_type;
    va->va_mode = READ_ONCE(tp->tn_mode);
    va->va_uid = READ_ONCE(tp->tn_uid);
    va->va_gid = READ_ONCE(tp->tn_gid);
    va->va_nlink = READ_ONCE(tp->tn_nlink);
    va->va_ino = tp->tn_ino;
    va->va_size = READ_ONCE(tp->tn_size);
    /* The pages the file has in memory, as Linux counts a tmpfs file's
     * blocks (a hole has none). */
    va->va_blocks = vp->v_type == VREG ?
        (uint64_t)__atomic_load_n(&vp->v_npages, __ATOMIC_RELAXED) * (PAGE_SIZE / 512) : 0;
    va->va_blksize = PAGE_SIZE;
    va->va_fsid = vp->v_vfsp->vfs_fsid;
    va->va_rdev = vp->v_rdev;
    va->va_atime = READ_ONCE(tp->tn_atime);
    va->va_mtime = READ_ONCE(tp->tn_mtime);
    va->va_ctime = READ_ONCE(tp->tn_ctime);
}

static int tmpfs_getattr(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    struct tmpnode *tp = VTOTN(vp);
    TN_LOCK(tp);
    fill_attr(vp, tp, va);
    TN_UNLOCK(tp);
    return 0;
}

/* fstat's short path: everything is in memory, so it always answers; a
 * change racing it may show some fields new and some old. */
static int tmpfs_getattr_nolock(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    fill_attr(vp, VTOTN(vp), va);
    return 0;
}

/* With tp TN_LOCKED: a regular file's new size.  Shrinking gives back
 * the pages reserved past the new end; growing reserves nothing (the new
 * part is a hole), so it never fails. */
static int resize(struct tmpnode *tp, uint64_t size)
{
    uint64_t cut = tresv_cut(tp, pages_of(size));
    if (cut)
        tmpfs_reserve(tp->tn_mount, -(int64_t)cut);
    tp->tn_size = size;
    tp->tn_mtime = tp->tn_ctime = tmpfs_now();
    return 0;
}

/* With tp TN_LOCKED: reserve the pages [first, last) lack, or as many of
 * them as the mount has, from the first on.  How far from page first the
 * reserved run reaches (last when all fit); -ENOMEM. */
static int64_t reserve_run(struct tmpnode *tp, uint64_t first, uint64_t last)
{
    uint64_t want = tresv_missing(tp, first, last);
    if (!want)
        return (int64_t)last;
    uint64_t got = MIN(want, tmpfs_pages_free(tp->tn_mount));
    uint64_t reach = got < want ? tresv_reach(tp, first, last, got) : last;
    if (!got || tmpfs_reserve(tp->tn_mount, (int64_t)got))
        return (int64_t)tresv_reach(tp, first, last, 0);
    if (tresv_add(tp, first, reach)) {
        tmpfs_reserve(tp->tn_mount, -(int64_t)got);
        return -ENOMEM;
    }
    return (int64_t)reach;
}

/* The attributes setattr's rules look at. */
static void rule_attrs(const struct tmpnode *tp, struct vattr *cur)
{
    cur->va_type = tp->tn_vnode.v_type;
    cur->va_mode = tp->tn_mode;
    cur->va_uid = tp->tn_uid;
    cur->va_gid = tp->tn_gid;
    cur->va_atime = tp->tn_atime;
    cur->va_mtime = tp->tn_mtime;
}

/* A size change arrives here through the page cache (pcache_vop_setattr),
 * which holds the file's fill lock and drops the pages past the new end
 * afterwards. */
static int tmpfs_setattr(struct vnode *vp, const struct vattr *va, struct cred *cr)
{
    struct tmpnode *tp = VTOTN(vp);
    if (va->va_mask & ~AT_ALL)
        return -EINVAL;
    if (rdonly(tp))
        return -EROFS;
    struct vattr cur;
    TN_LOCK(tp);
    rule_attrs(tp, &cur);
    int err = vn_setattr_check(&cur, va, TMPFS_MAXFILESIZE, cr);
    if (!err && (va->va_mask & AT_SIZE))
        err = tmpnode_access(tp, VWRITE, cr);
    if (!err && (va->va_mask & AT_SIZE))
        err = resize(tp, va->va_size);
    if (!err) {
        vn_setattr_apply(&cur, va, cr);
        tp->tn_mode = cur.va_mode;
        tp->tn_uid = cur.va_uid;
        tp->tn_gid = cur.va_gid;
        tp->tn_atime = cur.va_atime;
        tp->tn_mtime = cur.va_mtime;
        tp->tn_ctime = tmpfs_now();
    }
    TN_UNLOCK(tp);
    return err;
}

static int tmpfs_truncate(struct vnode *vp, uint64_t size, struct cred *cr)
{
    struct tmpnode *tp = VTOTN(vp);
    int err = vn_truncate_check(vp, size, TMPFS_MAXFILESIZE, rdonly(tp));
    if (err)
        return err;
    TN_LOCK(tp);
    err = resize(tp, size);
    TN_UNLOCK(tp);
    return err;
}

/* ---- data ---- */

/* Regular files' reads and writes go through the page cache (the VOP_READ
 * and VOP_WRITE macros); what is left here is the rest. */
static int tmpfs_read(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    return vp->v_type == VDIR ? -EISDIR : -EINVAL;
}

static int tmpfs_write(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    return vp->v_type == VDIR ? -EISDIR : -EINVAL;
}

/* A page the cache does not hold: a hole, zeros (the page cache keeps
 * every page that was written; see the theory). */
static int tmpfs_getpage(struct vnode *vp, uint64_t idx, void *page, struct cred *cr)
{
    struct tmpnode *tp = VTOTN(vp);
    TN_LOCK(tp);
    uint64_t size = tp->tn_size;
    TN_UNLOCK(tp);
    if (idx >= pages_of(size))
        return -ENXIO;
    memset(page, 0, PAGE_SIZE);
    return 0;
}

/* VOP_BACKPAGE: a shared mapping maps page idx, which a store may then
 * fill, so it is reserved now (a page past the end is left to the page
 * cache's -ENXIO).  Linux's tmpfs allocates the page at this fault too. */
static int tmpfs_backpage(struct vnode *vp, uint64_t idx)
{
    struct tmpnode *tp = VTOTN(vp);
    if (vp->v_type != VREG || rdonly(tp))
        return 0;
    TN_LOCK(tp);
    int64_t reach = idx < pages_of(tp->tn_size) ? reserve_run(tp, idx, idx + 1) : (int64_t)idx + 1;
    TN_UNLOCK(tp);
    return reach < 0 ? (int)reach : reach == (int64_t)idx ? -ENOSPC : 0;
}

/* Never called: the page cache writes nothing of a VMEMONLY file back. */
static int tmpfs_putpage(struct vnode *vp, uint64_t idx, const void *page, size_t len,
                         struct cred *cr)
{
    return 0;
}

/* Room for a write of len bytes at off: the pages it adds to the file
 * reserved, the end moved.  Short (down to the last page that could be
 * reserved) when the mount fills; -ENOSPC when not even one byte fits. */
static int64_t tmpfs_wralloc(struct vnode *vp, uint64_t off, size_t len, int ioflag,
                             struct cred *cr)
{
    struct tmpnode *tp = VTOTN(vp);
    if (rdonly(tp))
        return -EROFS;
    if (off >= TMPFS_MAXFILESIZE)
        return -EFBIG;
    len = MIN(len, (size_t)(TMPFS_MAXFILESIZE - off));
    TN_LOCK(tp);
    uint64_t end = off + len;
    int err = 0;
    int64_t reach = reserve_run(tp, off >> PAGE_SHIFT, pages_of(end));
    if (reach < 0)
        err = (int)reach;
    else if ((uint64_t)reach << PAGE_SHIFT <= off)
        err = -ENOSPC;          /* not one byte fits */
    else
        end = MIN(end, (uint64_t)reach << PAGE_SHIFT);
    if (!err) {
        if (end > tp->tn_size)
            tp->tn_size = end;
        tp->tn_mtime = tp->tn_ctime = tmpfs_now();
    }
    TN_UNLOCK(tp);
    return err ? err : (int64_t)(end - off);
}

static bool atime_due(const struct tmpnode *tp)
{
    return vn_atime_due(READ_ONCE(tp->tn_atime), READ_ONCE(tp->tn_mtime),
                        READ_ONCE(tp->tn_ctime), tmpfs_now());
}

/* A read touched the file: its access time by the relatime rule, checked
 * first without the lock, so most reads take none. */
static void tmpfs_accessed(struct vnode *vp)
{
    struct tmpnode *tp = VTOTN(vp);
    if (rdonly(tp) || !atime_due(tp))
        return;
    TN_LOCK(tp);
    if (atime_due(tp))
        tp->tn_atime = tmpfs_now();
    TN_UNLOCK(tp);
}

static int tmpfs_readlink(struct vnode *vp, struct uio *uio, struct cred *cr)
{
    struct tmpnode *tp = VTOTN(vp);
    if (vp->v_type != VLNK)
        return -EINVAL;
    size_t n = MIN(uio->uio_resid, (size_t)tp->tn_size);
    memcpy(uio->uio_base, tp->tn_target, n);
    uio->uio_base = (char *)uio->uio_base + n;
    uio->uio_resid -= n;
    uio->uio_offset = n;
    return 0;
}

/* Nothing to write: memory is the store. */
static int tmpfs_fsync(struct vnode *vp, struct cred *cr)
{
    return 0;
}

/* ---- the name space ---- */

/* A directory operation's first checks: dvp is a directory and name a
 * name it may hold (-ENOTDIR, -EINVAL, -ENAMETOOLONG). */
static int dir_op_check(struct vnode *dvp, const char *name)
{
    return dvp->v_type != VDIR ? -ENOTDIR : vn_new_name_check(name, NAME_MAX);
}

static int tmpfs_lookup(struct vnode *dvp, const char *name, struct vnode **vpp, struct cred *cr)
{
    struct tmpnode *dp = VTOTN(dvp);
    if (dvp->v_type != VDIR)
        return -ENOTDIR;
    int err = vn_name_check(name, NAME_MAX);
    if (err)
        return err;
    bool dot = name[0] == '.' && name[1] == 0;
    if (!dot) {
        struct vnode *vp = dnlc_lookup(dvp, name, cr);
        if (vp == DNLC_NO_VNODE)
            vp = NULL;                  /* tmpfs enters none; searched as a miss */
        if (vp) {
            err = tmpfs_access_nolock(dvp, VEXEC, cr);
            if (err)
                VN_RELE(vp);
            else
                *vpp = vp;
            return err;
        }
    }
    TN_LOCK(dp);
    err = tmpnode_access(dp, VEXEC, cr);
    struct tmpnode *tp = NULL;
    if (!err && dot) {
        tp = dp;
    } else if (!err && name[0] == '.' && name[1] == '.' && name[2] == 0) {
        tp = dp->tn_parent;                 /* the root's is itself */
        err = tp ? 0 : -ENOENT;             /* dp was removed: it has none */
    } else if (!err) {
        struct tdirent *de = dp->tn_nlink ? tdir_find(dp, name, strlen(name)) : NULL;
        tp = de ? de->td_node : NULL;
        err = tp ? 0 : -ENOENT;
        if (tp)
            /* Entered while dp is locked, so a remove of the name (which
             * purges it under the same lock) cannot come in between. */
            dnlc_enter(dvp, name, TNTOV(tp), cr);
    }
    if (tp) {
        VN_HOLD(TNTOV(tp));
        *vpp = TNTOV(tp);
    }
    TN_UNLOCK(dp);
    return err;
}

/* A node made by the caller that never got its name: let it go. */
static void discard_new(struct tmpnode *tp)
{
    tp->tn_nlink = 0;
    tp->tn_linkhold = false;
    VN_RELE(TNTOV(tp));                     /* the link hold */
    VN_RELE(TNTOV(tp));                     /* the maker's: frees it */
}

/* With dp TN_LOCKED: may cr add a name to dp?  0, -EACCES, -EROFS,
 * -ENOENT (dp was removed), -EEXIST. */
static int may_add(struct tmpnode *dp, const char *name, struct cred *cr)
{
    int err = tmpnode_access(dp, VWRITE | VEXEC, cr);
    if (!err && dp->tn_nlink == 0)
        err = -ENOENT;
    if (!err && tdir_find(dp, name, strlen(name)))
        err = -EEXIST;
    return err;
}

/* With dp TN_LOCKED and the name checked free: a new node of mode named
 * name in dp, held for the caller in *tpp (NULL: not wanted). */
static int make_node(struct vnode *dvp, const char *name, uint32_t mode, uint32_t rdev,
                     struct cred *cr, struct tmpnode **tpp)
{
    struct tmpnode *dp = VTOTN(dvp), *tp;
    int err = tmpnode_alloc(dp->tn_mount, mode, rdev, dp, cr, &tp);
    if (err)
        return err;
    struct tdirent *de = tdir_new(name, strlen(name), tp);
    err = de ? tdir_enter(dp, de) : -ENOMEM;
    if (err) {
        kfree(de);
        discard_new(tp);
        return err;
    }
    if ((mode & S_IFMT) == S_IFDIR)
        dp->tn_nlink++;                     /* its ".." */
    dnlc_enter(dvp, name, TNTOV(tp), cr);
    if (tpp)
        *tpp = tp;
    else
        VN_RELE(TNTOV(tp));
    return 0;
}

static uint32_t type_bits(enum vtype t)
{
    switch (t) {
    case VREG:  return S_IFREG;
    case VCHR:  return S_IFCHR;
    case VBLK:  return S_IFBLK;
    case VFIFO: return S_IFIFO;
    case VSOCK: return S_IFSOCK;
    default:    return 0;
    }
}

static int tmpfs_create(struct vnode *dvp, const char *name, const struct vattr *va, bool excl,
                        struct vnode **vpp, struct cred *cr)
{
    struct tmpnode *dp = VTOTN(dvp), *tp = NULL;
    int err = dir_op_check(dvp, name);
    if (err)
        return err;
    uint32_t type = type_bits(va->va_type);
    if (!type)
        return -EINVAL;
    bool dev = va->va_type == VCHR || va->va_type == VBLK;
    if (dev && cr->cr_uid != 0)
        return -EPERM;
    TN_LOCK(dp);
    err = tmpnode_access(dp, VEXEC, cr);
    struct tdirent *de = NULL;
    if (!err && dp->tn_nlink == 0)
        err = -ENOENT;
    if (!err)
        de = tdir_find(dp, name, strlen(name));
    if (!err && de) {
        tp = de->td_node;
        if (excl)
            err = -EEXIST;
        else if (TNTOV(tp)->v_type == VDIR)
            err = -EISDIR;
        else
            VN_HOLD(TNTOV(tp));
    } else if (!err) {
        err = may_add(dp, name, cr);
        if (!err)
            err = make_node(dvp, name, type | (va->va_mode & 07777), dev ? va->va_rdev : 0, cr,
                            &tp);
    }
    TN_UNLOCK(dp);
    if (!err)
        *vpp = TNTOV(tp);
    return err;
}

static int tmpfs_mkdir(struct vnode *dvp, const char *name, const struct vattr *va,
                       struct vnode **vpp, struct cred *cr)
{
    struct tmpnode *dp = VTOTN(dvp), *tp = NULL;
    int err = dir_op_check(dvp, name);
    if (err)
        return err;
    TN_LOCK(dp);
    err = may_add(dp, name, cr);
    if (!err && dp->tn_nlink == UINT32_MAX)
        err = -EMLINK;
    if (!err)
        err = make_node(dvp, name, S_IFDIR | (va->va_mode & 07777), 0, cr, &tp);
    TN_UNLOCK(dp);
    if (!err)
        *vpp = TNTOV(tp);
    return err;
}

static int tmpfs_symlink(struct vnode *dvp, const char *name, const struct vattr *va,
                         const char *target, struct cred *cr)
{
    struct tmpnode *dp = VTOTN(dvp), *tp;
    int err = dir_op_check(dvp, name);
    if (err)
        return err;
    size_t tlen;
    if ((err = vn_symlink_check(target, &tlen)))
        return err;
    char *text = kmalloc(tlen + 1);
    if (!text)
        return -ENOMEM;
    memcpy(text, target, tlen + 1);
    TN_LOCK(dp);
    err = may_add(dp, name, cr);
    if (!err)
        err = tmpnode_alloc(dp->tn_mount, S_IFLNK | 0777, 0, dp, cr, &tp);
    if (!err) {
        tp->tn_target = text;               /* set before the name makes it visible */
        tp->tn_size = tlen;
        text = NULL;
        struct tdirent *de = tdir_new(name, strlen(name), tp);
        err = de ? tdir_enter(dp, de) : -ENOMEM;
        if (err) {
            kfree(de);
            discard_new(tp);
        } else {
            VN_RELE(TNTOV(tp));             /* the maker's; its name holds it */
        }
    }
    TN_UNLOCK(dp);
    kfree(text);
    return err;
}

static int tmpfs_link(struct vnode *tdvp, struct vnode *svp, const char *tname, struct cred *cr)
{
    struct tmpnode *tdp = VTOTN(tdvp);
    if (svp->v_op != &tmpfs_vnodeops || svp->v_vfsp != tdvp->v_vfsp)
        return -EXDEV;
    if (tdvp->v_type != VDIR)
        return -ENOTDIR;
    if (svp->v_type == VDIR)
        return -EPERM;
    int err = vn_new_name_check(tname, NAME_MAX);
    if (err)
        return err;
    struct tmpnode *sip = VTOTN(svp);
    struct tdirent *de = tdir_new(tname, strlen(tname), sip);
    if (!de)
        return -ENOMEM;
    TN_LOCK(tdp);
    err = may_add(tdp, tname, cr);
    if (!err) {
        /* A directory, then a file that is no directory: no order problem. */
        TN_LOCK(sip);
        if (sip->tn_nlink == 0)
            err = -ENOENT;                  /* unlinked meanwhile, as Linux's */
        else if (sip->tn_nlink == UINT32_MAX)
            err = -EMLINK;
        if (!err)
            err = tdir_enter(tdp, de);
        if (!err) {
            sip->tn_nlink++;
            sip->tn_ctime = tmpfs_now();
            de = NULL;
        }
        TN_UNLOCK(sip);
    }
    TN_UNLOCK(tdp);
    kfree(de);
    return err;
}

/* With dp TN_LOCKED: the entry name of dp that cr may remove, or NULL
 * with *errp (-ENOENT, -EACCES, -EPERM by the sticky rule). */
static struct tdirent *removable(struct tmpnode *dp, const char *name, struct cred *cr,
                                 int *errp)
{
    int err = tmpnode_access(dp, VWRITE | VEXEC, cr);
    struct tdirent *de = err ? NULL : tdir_find(dp, name, strlen(name));
    if (!err && !de)
        err = -ENOENT;
    if (!err)
        err = tmpnode_sticky(dp, de->td_node, cr);
    *errp = err;
    return err ? NULL : de;
}

static int tmpfs_remove(struct vnode *dvp, const char *name, struct cred *cr)
{
    struct tmpnode *dp = VTOTN(dvp), *tp = NULL;
    int err = dir_op_check(dvp, name);
    if (err)
        return err;
    bool last = false;
    TN_LOCK(dp);
    struct tdirent *de = removable(dp, name, cr, &err);
    if (de && TNTOV(de->td_node)->v_type == VDIR)
        err = -EISDIR;
    if (!err) {
        tp = de->td_node;
        tdir_remove(dp, de);
        dnlc_remove(dvp, name);
        TN_LOCK(tp);
        last = tmpnode_unlinked(tp);
        TN_UNLOCK(tp);
    }
    TN_UNLOCK(dp);
    if (last)
        VN_RELE(TNTOV(tp));                 /* the link hold: the last reference frees it */
    return err;
}

static int tmpfs_rmdir(struct vnode *dvp, const char *name, struct cred *cr)
{
    struct tmpnode *dp = VTOTN(dvp), *tp = NULL;
    int err = dir_op_check(dvp, name);
    if (err)
        return err;
    struct tmount *tm = dp->tn_mount;
    bool last = false;
    rlock_acquire(&tm->tm_rename);          /* no rename moves anything into it */
    TN_LOCK(dp);
    struct tdirent *de = removable(dp, name, cr, &err);
    if (de) {
        tp = de->td_node;
        if (TNTOV(tp)->v_type != VDIR)
            err = -ENOTDIR;
        else if (TNTOV(tp)->v_vfsmountedhere)
            err = -EBUSY;
    }
    if (!err) {
        TN_LOCK(tp);
        if (tp->tn_nent)
            err = -ENOTEMPTY;
        else {
            tdir_remove(dp, de);
            dp->tn_nlink--;                 /* its ".." */
            tp->tn_nlink = 1;               /* its "." goes; its name here */
            tp->tn_parent = NULL;           /* which may go next: no ".." to find */
            last = tmpnode_unlinked(tp);
        }
        TN_UNLOCK(tp);
    }
    if (!err) {
        dnlc_remove(dvp, name);
        dnlc_purge_vp(TNTOV(tp));
    }
    TN_UNLOCK(dp);
    rlock_release(&tm->tm_rename);
    if (last)
        VN_RELE(TNTOV(tp));
    return err;
}

const struct vnodeops tmpfs_vnodeops = {
    .vop_open = vn_open_nop,
    .vop_close = vn_close_nop,
    .vop_read = tmpfs_read,
    .vop_write = tmpfs_write,
    .vop_ioctl = vn_ioctl_notty,
    .vop_getattr = tmpfs_getattr,
    .vop_getattr_nolock = tmpfs_getattr_nolock,
    .vop_access_nolock = tmpfs_access_nolock,
    .vop_setattr = tmpfs_setattr,
    .vop_access = tmpfs_access,
    .vop_lookup = tmpfs_lookup,
    .vop_create = tmpfs_create,
    .vop_remove = tmpfs_remove,
    .vop_link = tmpfs_link,
    .vop_rename = tmpfs_rename,
    .vop_mkdir = tmpfs_mkdir,
    .vop_rmdir = tmpfs_rmdir,
    .vop_readdir = tmpfs_readdir,
    .vop_symlink = tmpfs_symlink,
    .vop_readlink = tmpfs_readlink,
    .vop_fsync = tmpfs_fsync,
    .vop_truncate = tmpfs_truncate,
    .vop_inactive = tmpfs_inactive,
    .vop_getpage = tmpfs_getpage,
    .vop_putpage = tmpfs_putpage,
    .vop_wralloc = tmpfs_wralloc,
    .vop_backpage = tmpfs_backpage,
    .vop_accessed = tmpfs_accessed,
};
