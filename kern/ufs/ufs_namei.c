/*
 * UFS name-space operations that change the tree: create, mkdir,
 * symlink, link, remove, rmdir and rename.  Each is called through a VOP_*
 * macro with the directory's vnode lock held; locks go directory before
 * entry (ILOCK), rmdir and rename hold the file system's rename lock
 * first, and no operation returns with ILOCKED held.  Link counts change
 * before the entries that need them are written and after those that
 * drop them, so a crash leaves a count too high, never too low.  The
 * errors are Linux's: ENAMETOOLONG past 255 bytes, EEXIST, EMLINK at
 * 32767 links, ENOTEMPTY, EISDIR, ENOTDIR, EPERM in a sticky directory,
 * ENOSPC.  Theory in kern/ufs/ufs_vfsops.c.
 */
#include <kern/ufs/ufs_inode.h>
#include <kern/vfs/dnlc.h>
#include <kern/vm/pcache.h>
#include <kern/vfs/cred.h>
#include <kern/lib/string.h>

/* A name to create or remove: valid, at most 255 bytes, not "." or "..". */
static int check_new_name(const char *name)
{
    return vn_new_name_check(name, UFS_MAXNAMLEN);
}

static int sticky_check(struct ufs_inode *dp, struct ufs_inode *ip, struct cred *cr)
{
    return vn_sticky_check(dp->i_mode, dp->i_uid, ip->i_uid, cr);
}

static uint8_t dtype_of(const struct ufs_inode *ip)
{
    return ufs_mode_to_dtype(ip->i_mode);
}

/* Write ip with the structural-change rule (syncwrites=). */
static int iupdat_meta(struct ufs_inode *ip)
{
    return ufs_iupdat(ip, ufs_syncwrites());
}

/* With dp ILOCKED: may cr add name to dp?  -EACCES, -ENOENT (dp was
 * removed), -EEXIST, or the search's error. */
static int may_add_entry(struct ufs_inode *dp, const char *name, struct cred *cr)
{
    int err = ufs_iaccess(dp, VWRITE | VEXEC, cr);
    if (!err && dp->i_nlink <= 0)
        err = -ENOENT;
    if (!err) {
        uint32_t ino;
        err = ufs_dirsearch(dp, name, &ino);
        err = err == 0 ? -EEXIST : err == -ENOENT ? 0 : err;
    }
    return err;
}

/* A new inode of mode, owned by cr, with links, entered as name in dp
 * (ILOCKED); returned ILOCKED.  On failure the inode goes again. */
static int make_entry(struct ufs_inode *dp, const char *name, uint16_t mode, int16_t links,
                      struct cred *cr, struct ufs_inode **ipp,
                      int (*init)(struct ufs_inode *ip, const void *arg), const void *arg)
{
    struct ufs_inode *ip;
    int err = ufs_ialloc(dp, mode, &ip);
    if (err)
        return err;
    ip->i_uid = cr->cr_uid;
    ip->i_gid = (dp->i_mode & S_ISGID) ? dp->i_gid : cr->cr_gid;
    ip->i_nlink = links;
    err = init ? init(ip, arg) : 0;
    if (!err)
        err = iupdat_meta(ip);
    if (!err)
        err = ufs_direnter(dp, name, ip->i_number, dtype_of(ip));
    if (err) {
        ip->i_nlink = 0;                    /* inactive frees it */
        ufs_iput(ip);
        return err;
    }
    *ipp = ip;
    return 0;
}

static int mode_for(const struct vattr *va, uint16_t *modep)
{
    uint16_t type;
    switch (va->va_type) {
    case VREG:  type = UFS_IFREG; break;
    case VCHR:  type = UFS_IFCHR; break;
    case VBLK:  type = UFS_IFBLK; break;
    case VFIFO: type = UFS_IFIFO; break;
    case VSOCK: type = UFS_IFSOCK; break;
    default:    return -EINVAL;
    }
    *modep = type | (va->va_mode & 07777);
    return 0;
}

static int init_device(struct ufs_inode *ip, const void *arg)
{
    const struct vattr *va = arg;
    if (va->va_type == VCHR || va->va_type == VBLK) {
        ip->i_db[0] = (int32_t)va->va_rdev;     /* Linux's encoding is 4.4BSD's */
        ip->i_vnode.v_rdev = va->va_rdev;
    }
    return 0;
}

int ufs_create(struct vnode *dvp, const char *name, const struct vattr *va, bool excl,
               struct vnode **vpp, struct cred *cr)
{
    struct ufs_inode *dp = UFS_VTOI(dvp), *ip = NULL;
    uint16_t mode;
    if (dvp->v_type != VDIR)
        return -ENOTDIR;
    int err = check_new_name(name);
    if (!err)
        err = mode_for(va, &mode);
    if (err)
        return err;
    if ((va->va_type == VCHR || va->va_type == VBLK) && cr->cr_uid != 0)
        return -EPERM;
    uint32_t ino;
    ILOCK(dp);
    err = ufs_iaccess(dp, VEXEC, cr);
    if (!err)
        err = dp->i_nlink <= 0 ? -ENOENT : ufs_dirsearch(dp, name, &ino);
    if (!err) {
        err = excl ? -EEXIST : ufs_iget_entry(dp, ino, &ip);
        if (!err && ip->i_vnode.v_type == VDIR)
            err = -EISDIR;
    } else if (err == -ENOENT && dp->i_nlink > 0) {
        err = ufs_iaccess(dp, VWRITE, cr);
        if (!err)
            err = make_entry(dp, name, mode, 1, cr, &ip, init_device, va);
        if (!err)
            dnlc_enter(dvp, name, UFS_ITOV(ip), cr);
    }
    if (ip) {
        IUNLOCK(ip);
        if (err)
            VN_RELE(UFS_ITOV(ip));
        else
            *vpp = UFS_ITOV(ip);
    }
    IUNLOCK(dp);
    return err;
}

static int init_dir(struct ufs_inode *ip, const void *arg)
{
    return ufs_dirinit(ip, *(const uint32_t *)arg);
}

int ufs_mkdir(struct vnode *dvp, const char *name, const struct vattr *va,
              struct vnode **vpp, struct cred *cr)
{
    struct ufs_inode *dp = UFS_VTOI(dvp), *ip;
    if (dvp->v_type != VDIR)
        return -ENOTDIR;
    int err = check_new_name(name);
    if (err)
        return err;
    ILOCK(dp);
    err = may_add_entry(dp, name, cr);
    if (!err && dp->i_nlink >= UFS_LINK_MAX)
        err = -EMLINK;
    if (!err) {
        /* The parent's count first: a crash leaves it too high, not too low. */
        dp->i_nlink++;
        ufs_itimes(dp, UFS_CHG);
        err = iupdat_meta(dp);
        if (!err)
            err = make_entry(dp, name, UFS_IFDIR | (va->va_mode & 07777), 2, cr, &ip,
                             init_dir, &dp->i_number);
        if (err) {
            dp->i_nlink--;
            iupdat_meta(dp);
        }
    }
    if (!err) {
        dnlc_enter(dvp, name, UFS_ITOV(ip), cr);
        IUNLOCK(ip);
        *vpp = UFS_ITOV(ip);
    }
    IUNLOCK(dp);
    return err;
}

/* A short target lives in the block pointers, a long one in a block. */
static int init_link(struct ufs_inode *ip, const void *arg)
{
    const char *target = arg;
    size_t len = strlen(target);
    ip->i_size = len;
    if (len < (size_t)ip->i_fs->fs_sb.fs_maxsymlinklen) {
        char buf[UFS_MAXSYMLINKLEN] = { 0 };
        memcpy(buf, target, len);
        memcpy(ip->i_db, buf, sizeof ip->i_db);
        memcpy(ip->i_ib, buf + sizeof ip->i_db, sizeof ip->i_ib);
        return 0;
    }
    ip->i_size = 0;
    return ufs_writei(ip, 0, target, len, ufs_syncwrites());
}

int ufs_symlink(struct vnode *dvp, const char *name, const struct vattr *va,
                const char *target, struct cred *cr)
{
    struct ufs_inode *dp = UFS_VTOI(dvp), *ip;
    if (dvp->v_type != VDIR)
        return -ENOTDIR;
    int err = check_new_name(name);
    if (err)
        return err;
    size_t tlen;
    if ((err = vn_symlink_check(target, &tlen)))
        return err;
    ILOCK(dp);
    err = may_add_entry(dp, name, cr);
    if (!err)
        err = make_entry(dp, name, UFS_IFLNK | 0777, 1, cr, &ip, init_link, target);
    if (!err)
        ufs_iput(ip);
    IUNLOCK(dp);
    return err;
}

int ufs_link(struct vnode *tdvp, struct vnode *svp, const char *tname, struct cred *cr)
{
    struct ufs_inode *tdp = UFS_VTOI(tdvp);
    if (svp->v_op != &ufs_vnodeops || svp->v_vfsp != tdvp->v_vfsp)
        return -EXDEV;
    struct ufs_inode *sip = UFS_VTOI(svp);
    if (tdvp->v_type != VDIR)
        return -ENOTDIR;
    if (svp->v_type == VDIR)
        return -EPERM;
    int err = check_new_name(tname);
    if (err)
        return err;
    ILOCK(tdp);
    err = may_add_entry(tdp, tname, cr);
    if (!err) {
        /* A directory, then a file that is no directory: no order problem. */
        ILOCK(sip);
        if (sip->i_nlink >= UFS_LINK_MAX)
            err = -EMLINK;
        else if (sip->i_nlink <= 0)
            err = -ENOENT;
        else {
            sip->i_nlink++;
            ufs_itimes(sip, UFS_CHG);
            err = iupdat_meta(sip);
        }
        if (!err && (err = ufs_direnter(tdp, tname, sip->i_number, dtype_of(sip)))) {
            sip->i_nlink--;
            iupdat_meta(sip);
        }
        IUNLOCK(sip);
    }
    if (!err)
        ufs_itimes(tdp, UFS_UPD | UFS_CHG);
    IUNLOCK(tdp);
    return err;
}

/* ILOCK dp (it stays locked), check write and search permission, and
 * return the inode name names, ILOCKED. */
static int lock_entry(struct ufs_inode *dp, const char *name, struct cred *cr,
                      struct ufs_inode **ipp)
{
    uint32_t ino;
    *ipp = NULL;
    ILOCK(dp);
    int err = ufs_iaccess(dp, VWRITE | VEXEC, cr);
    if (!err)
        err = ufs_dirsearch(dp, name, &ino);
    if (!err)
        err = ufs_iget_entry(dp, ino, ipp);
    if (err)
        *ipp = NULL;
    return err;
}

int ufs_remove(struct vnode *dvp, const char *name, struct cred *cr)
{
    struct ufs_inode *dp = UFS_VTOI(dvp), *ip = NULL;
    if (dvp->v_type != VDIR)
        return -ENOTDIR;
    int err = check_new_name(name);
    if (!err)
        err = lock_entry(dp, name, cr, &ip);
    if (!err && ip->i_vnode.v_type == VDIR)
        err = -EISDIR;
    if (!err)
        err = sticky_check(dp, ip, cr);
    if (!err)
        err = ufs_dirremove(dp, name);
    if (!err) {
        dnlc_remove(dvp, name);
        ufs_itimes(dp, UFS_UPD | UFS_CHG);
        if (ip->i_nlink > 0)
            ip->i_nlink--;
        if (ip->i_nlink == 0)
            pcache_discard_dirty(UFS_ITOV(ip));     /* its pages need no write-back */
        ufs_itimes(ip, UFS_CHG);
        err = iupdat_meta(ip);
    }
    if (ip)
        IUNLOCK(ip);
    IUNLOCK(dp);
    if (ip)
        VN_RELE(UFS_ITOV(ip));              /* the last one frees it */
    return err;
}

int ufs_rmdir(struct vnode *dvp, const char *name, struct cred *cr)
{
    struct ufs_inode *dp = UFS_VTOI(dvp), *ip = NULL;
    if (dvp->v_type != VDIR)
        return -ENOTDIR;
    int err = check_new_name(name);
    if (err)
        return err;
    struct ufs_fs *fs = dp->i_fs;
    rlock_acquire(&fs->fs_rename);
    err = lock_entry(dp, name, cr, &ip);
    if (!err && ip->i_vnode.v_type != VDIR)
        err = -ENOTDIR;
    if (!err && (ip == fs->fs_root || UFS_ITOV(ip)->v_vfsmountedhere))
        err = -EBUSY;
    if (!err)
        err = sticky_check(dp, ip, cr);
    if (!err) {
        err = ufs_dirempty(ip);
        err = err == 1 ? 0 : err == 0 ? -ENOTEMPTY : err;
    }
    if (!err)
        err = ufs_dirremove(dp, name);
    if (!err) {
        dnlc_remove(dvp, name);
        dp->i_nlink--;                      /* its ".." */
        ufs_itimes(dp, UFS_UPD | UFS_CHG);
        iupdat_meta(dp);
        ip->i_nlink = 0;                    /* its entry and its "." */
        ufs_itimes(ip, UFS_CHG);
        err = iupdat_meta(ip);
        dnlc_purge_vp(UFS_ITOV(ip));
    }
    if (ip)
        IUNLOCK(ip);
    IUNLOCK(dp);
    rlock_release(&fs->fs_rename);
    if (ip)
        VN_RELE(UFS_ITOV(ip));
    return err;
}
