/*
 * UFS vnode operations: read, getattr, access, lookup (through the DNLC),
 * readdir, readlink, and the vnodeops table.  Each is called through a
 * VOP_* macro with the vnode's lock held (kern/vfs/vnode.h) and takes the
 * inode locks it needs (ILOCK for the inode, IRWLOCK around a whole read),
 * releasing them before it returns.  The operations that change the
 * tree are in ufs_namei.c and ufs_rename.c.  Theory in
 * kern/ufs/ufs_vfsops.c.
 */
#include <kern/ufs/ufs_inode.h>
#include <kern/vfs/dnlc.h>
#include <kern/vfs/cred.h>
#include <kern/lib/string.h>
#include <kern/vfs/buf.h>

int ufs_iaccess(struct ufs_inode *ip, int mode, struct cred *cr)
{
    if ((mode & VWRITE) && ip->i_fs->fs_rdonly)
        return -EROFS;
    return vn_access_check(ip->i_mode, ip->i_uid, ip->i_gid, mode, cr);
}

/* The DNLC path of lookup: ufs_iaccess on fields read without ILOCK. */
static int ufs_access_nolock(struct vnode *vp, int mode, struct cred *cr)
{
    struct ufs_inode *ip = UFS_VTOI(vp);
    if ((mode & VWRITE) && ip->i_fs->fs_rdonly)
        return -EROFS;
    return vn_access_check(READ_ONCE(ip->i_mode), READ_ONCE(ip->i_uid), READ_ONCE(ip->i_gid),
                           mode, cr);
}

/* ---- reading ---- */

/*
 * Reads hold IRWLOCKED throughout and ILOCKED one block at a time, so a
 * stat can get in between blocks (seed 001), as S5's do.  The access time
 * is set as the read ends (on a read-write mount).
 */
static int ufs_read(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    struct ufs_inode *ip = UFS_VTOI(vp);
    if (vp->v_type != VREG && vp->v_type != VDIR && vp->v_type != VLNK)
        return -EINVAL;
    uint32_t bsize = (uint32_t)ip->i_fs->fs_sb.fs_bsize;
    int err = 0;
    IRWLOCK(ip);
    while (uio->uio_resid > 0 && !err) {
        size_t want = MIN(uio->uio_resid, (size_t)(bsize - uio->uio_offset % bsize)), got;
        ILOCK(ip);
        err = ufs_readi(ip, uio->uio_offset, uio->uio_base, want, &got);
        IUNLOCK(ip);
        uio->uio_base = (char *)uio->uio_base + got;
        uio->uio_resid -= got;
        uio->uio_offset += got;
        if (got < want)
            break;                          /* end of file */
    }
    if (!ip->i_fs->fs_rdonly) {
        ILOCK(ip);
        ufs_itimes(ip, UFS_ACC);
        IUNLOCK(ip);
    }
    IRWUNLOCK(ip);
    return err;
}

uint64_t ufs_max_file_size(const struct ufs_fs *fs)
{
    uint64_t n = (uint64_t)fs->fs_sb.fs_nindir, blocks = UFS_NDADDR + n + n * n + n * n * n;
    uint64_t limit = blocks << fs->fs_sb.fs_bshift;
    return MIN(limit, (uint64_t)1 << 62);
}

/* Writes hold IRWLOCKED throughout and ILOCKED a block at a time. */
static int ufs_write(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    struct ufs_inode *ip = UFS_VTOI(vp);
    if (vp->v_type == VDIR)
        return -EISDIR;
    if (vp->v_type != VREG)
        return -EINVAL;
    struct ufs_fs *fs = ip->i_fs;
    if (fs->fs_rdonly)
        return -EROFS;
    uint64_t bsize = (uint64_t)fs->fs_sb.fs_bsize, limit = ufs_max_file_size(fs);
    size_t start = uio->uio_resid;
    int err = 0;
    IRWLOCK(ip);
    if (ioflag & IO_APPEND) {
        ILOCK(ip);
        uio->uio_offset = ip->i_size;
        IUNLOCK(ip);
    }
    while (uio->uio_resid > 0 && !err) {
        if (uio->uio_offset >= limit) {
            err = -EFBIG;
            break;
        }
        size_t n = MIN(uio->uio_resid, (size_t)(bsize - uio->uio_offset % bsize));
        n = MIN(n, (size_t)(limit - uio->uio_offset));
        ILOCK(ip);
        err = ufs_writei(ip, uio->uio_offset, uio->uio_base, n, ioflag & IO_SYNC);
        if (!err) {
            ip->i_mode &= (uint16_t)(cr->cr_uid ? ~(S_ISUID | S_ISGID) : ~0);
            ufs_itimes(ip, UFS_UPD | UFS_CHG);
        }
        IUNLOCK(ip);
        if (!err) {
            uio->uio_base = (char *)uio->uio_base + n;
            uio->uio_resid -= n;
            uio->uio_offset += n;
        }
    }
    if (ioflag & IO_SYNC) {
        ILOCK(ip);
        int e = ufs_iupdat(ip, true);
        err = err ? err : e;
        IUNLOCK(ip);
    }
    IRWUNLOCK(ip);
    /* A write cut short by a full disk or the size limit is a success;
     * the next one reports the error. */
    if (uio->uio_resid < start && (err == -ENOSPC || err == -EFBIG))
        return 0;
    return err;
}

/* ---- attributes ---- */

static int ufs_getattr(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    struct ufs_inode *ip = UFS_VTOI(vp);
    ILOCK(ip);
    va->va_type = vp->v_type;
    va->va_mode = ip->i_mode;
    va->va_uid = ip->i_uid;
    va->va_gid = ip->i_gid;
    va->va_nlink = (uint32_t)ip->i_nlink;
    va->va_ino = ip->i_number;
    va->va_size = ip->i_size;
    va->va_blocks = ip->i_blocks;
    va->va_blksize = (uint32_t)ip->i_fs->fs_sb.fs_bsize;
    va->va_fsid = vp->v_vfsp ? vp->v_vfsp->vfs_fsid : 0;
    va->va_rdev = vp->v_rdev;
    va->va_atime = ip->i_atime;
    va->va_mtime = ip->i_mtime;
    va->va_ctime = ip->i_ctime;
    IUNLOCK(ip);
    return 0;
}

/* The attributes setattr's rules look at. */
static void rule_attrs(const struct ufs_inode *ip, struct vattr *cur)
{
    cur->va_type = ip->i_vnode.v_type;
    cur->va_mode = ip->i_mode;
    cur->va_uid = ip->i_uid;
    cur->va_gid = ip->i_gid;
    cur->va_atime = ip->i_atime;
    cur->va_mtime = ip->i_mtime;
}

/* May cr make the changes va asks for?  (ip ILOCKED) */
static int setattr_allowed(struct ufs_inode *ip, const struct vattr *va, struct cred *cr)
{
    struct vattr cur;
    rule_attrs(ip, &cur);
    int err = vn_setattr_check(&cur, va, ufs_max_file_size(ip->i_fs), cr);
    if (!err && (va->va_mask & AT_SIZE))
        err = ufs_iaccess(ip, VWRITE, cr);
    return err;
}

static void setattr_apply(struct ufs_inode *ip, const struct vattr *va, struct cred *cr)
{
    struct vattr cur;
    rule_attrs(ip, &cur);
    vn_setattr_apply(&cur, va, cr);
    ip->i_mode = (uint16_t)cur.va_mode;
    ip->i_uid = cur.va_uid;
    ip->i_gid = cur.va_gid;
    if (va->va_mask & AT_ATIME)
        ip->i_atime = (int32_t)cur.va_atime, ip->i_atimensec = 0;
    if (va->va_mask & AT_MTIME)
        ip->i_mtime = (int32_t)cur.va_mtime, ip->i_mtimensec = 0;
    ufs_itimes(ip, UFS_CHG);
}

static int ufs_setattr(struct vnode *vp, const struct vattr *va, struct cred *cr)
{
    struct ufs_inode *ip = UFS_VTOI(vp);
    if (va->va_mask & ~AT_ALL)
        return -EINVAL;
    if (ip->i_fs->fs_rdonly)
        return (va->va_mask & AT_SIZE) && vp->v_type == VDIR ? -EISDIR : -EROFS;
    bool sizing = va->va_mask & AT_SIZE;
    if (sizing)
        IRWLOCK(ip);
    ILOCK(ip);
    int err = setattr_allowed(ip, va, cr);
    if (!err && sizing)
        err = ufs_itrunc(ip, va->va_size);
    if (!err)
        setattr_apply(ip, va, cr);
    if (!err)
        err = ufs_iupdat(ip, ufs_syncwrites());
    IUNLOCK(ip);
    if (sizing)
        IRWUNLOCK(ip);
    return err;
}

static int ufs_access(struct vnode *vp, int mode, struct cred *cr)
{
    struct ufs_inode *ip = UFS_VTOI(vp);
    ILOCK(ip);
    int err = ufs_iaccess(ip, mode, cr);
    IUNLOCK(ip);
    return err;
}

/* ---- names ---- */

/* Create, mkdir, symlink, link, remove, rmdir: ufs_namei.c; rename:
 * ufs_rename.c. */

/* ".." with dp unlocked: the parent is locked only after the child let go. */
static int lookup_dotdot(struct ufs_inode *dp, struct vnode **vpp, struct cred *cr)
{
    uint32_t ino;
    ILOCK(dp);
    int err = ufs_iaccess(dp, VEXEC, cr);
    if (!err)
        err = ufs_dirsearch(dp, "..", &ino);
    IUNLOCK(dp);
    if (err)
        return err;
    if (ino == dp->i_number) {              /* the root's ".." */
        VN_HOLD(UFS_ITOV(dp));
        *vpp = UFS_ITOV(dp);
        return 0;
    }
    struct ufs_inode *ip;
    err = ufs_iget(dp->i_fs, ino, &ip);
    if (err)
        return err == -EDEADLK ? -EUCLEAN : err;
    if (ip->i_mode == 0 || ip->i_vnode.v_type != VDIR) {
        ufs_iput(ip);
        return -ENOENT;                     /* moved or removed meanwhile */
    }
    IUNLOCK(ip);
    *vpp = UFS_ITOV(ip);
    return 0;
}

/* The inode entry ino of dp (ILOCKED) names, referenced and ILOCKED; an
 * entry naming dp itself, a held inode or a free inode is corruption. */
int ufs_iget_entry(struct ufs_inode *dp, uint32_t ino, struct ufs_inode **ipp)
{
    struct ufs_fs *fs = dp->i_fs;
    int err = ino == dp->i_number ? -EDEADLK : ufs_iget(fs, ino, ipp);
    if (err == -EDEADLK) {
        ufs_corrupt(fs, "directory %u: an entry names inode %u, which is the directory or "
                    "one of its ancestors", dp->i_number, ino);
        return -EUCLEAN;
    }
    if (err)
        return err;
    if ((*ipp)->i_mode == 0) {
        ufs_corrupt(fs, "directory %u: an entry names free inode %u", dp->i_number, ino);
        ufs_iput(*ipp);
        return -EUCLEAN;
    }
    return 0;
}

static int ufs_lookup(struct vnode *dvp, const char *name, struct vnode **vpp, struct cred *cr)
{
    struct ufs_inode *dp = UFS_VTOI(dvp), *ip;
    if (dvp->v_type != VDIR)
        return -ENOTDIR;
    int err = vn_name_check(name, UFS_MAXNAMLEN);
    if (err)
        return err;
    if (name[0] == '.' && name[1] == '\0') {
        err = ufs_access(dvp, VEXEC, cr);
        if (!err) {
            VN_HOLD(dvp);
            *vpp = dvp;
        }
        return err;
    }
    if (name[0] == '.' && name[1] == '.' && name[2] == '\0')
        return lookup_dotdot(dp, vpp, cr);
    err = ufs_access(dvp, VEXEC, cr);
    if (err)
        return err;
    struct vnode *vp = dnlc_lookup(dvp, name, cr);
    if (vp == DNLC_NO_VNODE)
        return -ENOENT;
    if (vp) {
        *vpp = vp;
        return 0;
    }
    uint32_t ino;
    ILOCK(dp);
    int found = dp->i_nlink == 0 ? -ENOENT : ufs_dirsearch(dp, name, &ino);
    err = found;
    if (!err)
        err = ufs_iget_entry(dp, ino, &ip);
    if (!err) {
        /* Entered while dp is locked, so a remove of the name (which purges
         * it under the same lock) cannot come in between. */
        dnlc_enter(dvp, name, UFS_ITOV(ip), cr);
        IUNLOCK(ip);
        *vpp = UFS_ITOV(ip);
    } else if (found == -ENOENT && dp->i_nlink) {
        /* Known absent: entered under dp's lock, which the direnter that
         * adds the name (and removes this entry first) holds too. */
        dnlc_enter(dvp, name, DNLC_NO_VNODE, cr);
    }
    IUNLOCK(dp);
    return err;
}

static int ufs_readdir(struct vnode *vp, struct uio *uio, struct cred *cr, bool *eofp)
{
    struct ufs_inode *ip = UFS_VTOI(vp);
    if (vp->v_type != VDIR)
        return -ENOTDIR;
    ILOCK(ip);
    int err = ufs_dirread(ip, uio, eofp);
    IUNLOCK(ip);
    return err;
}

/* A short link keeps its target in the block pointers (4.4BSD's
 * "fast" symbolic link); a long one in its data block. */
static int ufs_readlink(struct vnode *vp, struct uio *uio, struct cred *cr)
{
    struct ufs_inode *ip = UFS_VTOI(vp);
    if (vp->v_type != VLNK)
        return -EINVAL;
    ILOCK(ip);
    int err = 0;
    size_t n = (size_t)MIN((uint64_t)uio->uio_resid, ip->i_size), got = 0;
    if (ip->i_size < (uint64_t)ip->i_fs->fs_sb.fs_maxsymlinklen && ip->i_blocks == 0) {
        char target[UFS_MAXSYMLINKLEN];
        memcpy(target, ip->i_db, sizeof ip->i_db);
        memcpy(target + sizeof ip->i_db, ip->i_ib, sizeof ip->i_ib);
        memcpy(uio->uio_base, target, n);
        got = n;
    } else {
        err = ufs_readi(ip, 0, uio->uio_base, n, &got);
    }
    IUNLOCK(ip);
    uio->uio_base = (char *)uio->uio_base + got;
    uio->uio_resid -= got;
    uio->uio_offset = got;
    return err;
}

static int ufs_fsync(struct vnode *vp, struct cred *cr)
{
    struct ufs_inode *ip = UFS_VTOI(vp);
    if (ip->i_fs->fs_rdonly)
        return 0;
    ILOCK(ip);
    int err = ufs_iupdat(ip, true);
    IUNLOCK(ip);
    int e = bflush_held(ip->i_fs->fs_dev);     /* holds no buffer */
    return err ? err : e;
}

static int ufs_truncate(struct vnode *vp, uint64_t size, struct cred *cr)
{
    struct ufs_inode *ip = UFS_VTOI(vp);
    int check = vn_truncate_check(vp, size, ufs_max_file_size(ip->i_fs), ip->i_fs->fs_rdonly);
    if (check)
        return check;
    IRWLOCK(ip);
    ILOCK(ip);
    int err = ufs_itrunc(ip, size);
    int e = ufs_iupdat(ip, ufs_syncwrites());
    IUNLOCK(ip);
    IRWUNLOCK(ip);
    return err ? err : e;
}

const struct vnodeops ufs_vnodeops = {
    .vop_open = vn_open_nop,
    .vop_close = vn_close_nop,
    .vop_read = ufs_read,
    .vop_write = ufs_write,
    .vop_ioctl = vn_ioctl_notty,
    .vop_getattr = ufs_getattr,
    .vop_setattr = ufs_setattr,
    .vop_access = ufs_access,
    .vop_access_nolock = ufs_access_nolock,
    .vop_lookup = ufs_lookup,
    .vop_create = ufs_create,
    .vop_remove = ufs_remove,
    .vop_link = ufs_link,
    .vop_rename = ufs_rename,
    .vop_mkdir = ufs_mkdir,
    .vop_rmdir = ufs_rmdir,
    .vop_readdir = ufs_readdir,
    .vop_symlink = ufs_symlink,
    .vop_readlink = ufs_readlink,
    .vop_fsync = ufs_fsync,
    .vop_truncate = ufs_truncate,
    .vop_inactive = icache_inactive,
    .vop_getpage = ufs_getpage,
    .vop_putpage = ufs_putpage,
    .vop_wralloc = ufs_wralloc,
    .vop_accessed = ufs_accessed,
};
