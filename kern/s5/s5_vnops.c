/*
 * S5 vnode operations.  Each is called through a VOP_* macro with the
 * first vnode's lock held (kern/vfs/vnode.h); each takes the inode locks
 * it needs (ILOCK for the inode, IRWLOCK around a whole read or write) and
 * releases them before it returns, so no VOP here returns with ILOCKED
 * held.  Theory, lock order and the races handled are in
 * kern/s5/s5_vfsops.c.
 *
 * Directory operations lock the directory, then (through iget) the entry's
 * inode: parent before child, never the other way.  ".." is looked up
 * with the directory unlocked.  rmdir and rename (kern/s5/s5_rename.c)
 * also hold the file system's rename lock, so the shape of the directory
 * tree cannot change under them.
 */
#include <kern/s5/s5_inode.h>
#include <kern/vfs/buf.h>
#include <kern/vfs/dnlc.h>
#include <kern/vfs/cred.h>
#include <kern/string.h>
#include <kern/kmem.h>

/* ---- helpers ---- */

/* Move n bytes between kbuf and the transfer's buffer (to_uio: a read). */
static void uio_copy(void *kbuf, size_t n, bool to_uio, struct uio *uio)
{
    if (to_uio)
        memcpy(uio->uio_base, kbuf, n);
    else
        memcpy(kbuf, uio->uio_base, n);
    uio->uio_base = (char *)uio->uio_base + n;
    uio->uio_resid -= n;
}

static void uio_zero(size_t n, struct uio *uio)
{
    memset(uio->uio_base, 0, n);
    uio->uio_base = (char *)uio->uio_base + n;
    uio->uio_resid -= n;
}

int s5_iaccess(struct s5_inode *ip, int mode, struct cred *cr)
{
    if ((mode & VWRITE) && ip->i_fs->fs_rdonly)
        return -EROFS;
    return vn_access_check(ip->i_mode, ip->i_uid, ip->i_gid, mode, cr);
}

static bool is_dot_or_dotdot(const char *name)
{
    return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

/* A name to create or remove: valid, at most 14 bytes, not "." or "..". */
int s5_check_new_name(const char *name)
{
    int err = vn_name_check(name, S5_DIRSIZ);
    if (err)
        return err;
    return is_dot_or_dotdot(name) ? -EINVAL : 0;
}

/* In a sticky directory only the owner of the file or of the directory
 * (or the superuser) may remove or rename an entry. */
int s5_sticky_check(struct s5_inode *dp, struct s5_inode *ip, struct cred *cr)
{
    if (!(dp->i_mode & S5_ISVTX) || cr->cr_uid == 0 || cr->cr_uid == ip->i_uid ||
        cr->cr_uid == dp->i_uid)
        return 0;
    return -EPERM;
}

/*
 * The inode an entry of dp (ILOCKED) names, referenced and ILOCKED.  An
 * entry that names dp itself, or an inode this thread already holds
 * locked, or a free inode, is corruption (the directory tree is a tree).
 */
int s5_iget_entry(struct s5_inode *dp, uint32_t ino, struct s5_inode **ipp)
{
    struct s5_fs *fs = dp->i_fs;
    int err = ino == dp->i_number ? -EDEADLK : s5_iget(fs, ino, ipp);
    if (err == -EDEADLK) {
        s5_corrupt(fs, "directory %u: an entry names inode %u, which is the directory or "
                   "one of its ancestors", dp->i_number, ino);
        return -EUCLEAN;
    }
    if (err)
        return err;
    if ((*ipp)->i_mode == 0) {
        s5_corrupt(fs, "directory %u: an entry names free inode %u", dp->i_number, ino);
        s5_iput(*ipp);
        return -EUCLEAN;
    }
    return 0;
}

int s5_lock_entry(struct s5_inode *dp, const char *name, struct cred *cr,
                  struct s5_dirslot *ds, struct s5_inode **ipp)
{
    *ipp = NULL;
    ILOCK(dp);
    int err = s5_iaccess(dp, VWRITE | VEXEC, cr);
    if (!err)
        err = s5_dirsearch(dp, name, ds);
    if (!err)
        err = s5_iget_entry(dp, ds->ino, ipp);
    if (err)
        *ipp = NULL;
    return err;
}

/* Owner and group of a new inode. */
static void set_owner(struct s5_inode *ip, struct cred *cr)
{
    ip->i_uid = (uint16_t)cr->cr_uid;
    ip->i_gid = (uint16_t)cr->cr_gid;
}

/* ---- open, close, ioctl ---- */

static int s5_open(struct vnode **vpp, int flags, struct cred *cr)
{
    return 0;
}

static int s5_close(struct vnode *vp, int flags, struct cred *cr)
{
    return 0;
}

static int s5_ioctl(struct vnode *vp, unsigned long cmd, void *arg, struct cred *cr)
{
    return -ENOTTY;
}

/* ---- read and write ---- */

/* One block's worth of a read (ip ILOCKED); *eof at end of file. */
static int read_block(struct s5_inode *ip, struct uio *uio, bool *eof)
{
    if (uio->uio_offset >= ip->i_size) {
        *eof = true;
        return 0;
    }
    uint32_t boff = s5_blkoff(uio->uio_offset);
    size_t n = MIN((size_t)(S5_BSIZE - boff), uio->uio_resid);
    n = MIN(n, (size_t)(ip->i_size - uio->uio_offset));
    uint32_t bno;
    int err = s5_bmap(ip, s5_lblkno(uio->uio_offset), false, &bno, NULL);
    if (err)
        return err;
    if (bno == 0) {
        uio_zero(n, uio);                   /* a hole reads as zeros */
    } else {
        struct buf *bp = s5_bread(ip->i_fs, bno, &err);
        if (!bp)
            return err;
        uio_copy((char *)bp->b_data + boff, n, true, uio);
        brelse(bp);
    }
    uio->uio_offset += n;
    return 0;
}

/*
 * Reads hold IRWLOCKED throughout (a read sees no write half done) and
 * ILOCKED one block at a time, so a stat can get in between blocks
 * (seed 001: "a long read or write operation [proceeds] without blocking
 * a stat operation").
 */
static int s5_read(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    struct s5_inode *ip = VTOI(vp);
    if (vp->v_type != VREG && vp->v_type != VDIR && vp->v_type != VLNK)
        return -EINVAL;
    int err = 0;
    bool eof = false;
    IRWLOCK(ip);
    while (uio->uio_resid > 0 && !eof && !err) {
        ILOCK(ip);
        err = read_block(ip, uio, &eof);
        IUNLOCK(ip);
    }
    if (!ip->i_fs->fs_rdonly) {
        ILOCK(ip);
        s5_itimes(ip, S5_ACC);
        IUNLOCK(ip);
    }
    IRWUNLOCK(ip);
    /* A damaged block is reported even after a partial transfer (the
     * transfer's uio shows how far it got). */
    return err;
}

/* One block's worth of a write of n bytes (ip ILOCKED). */
static int write_block(struct s5_inode *ip, struct uio *uio, size_t n, int ioflag)
{
    struct s5_fs *fs = ip->i_fs;
    uint32_t boff = s5_blkoff(uio->uio_offset);
    uint32_t bno;
    bool fresh;
    int err = s5_bmap(ip, s5_lblkno(uio->uio_offset), true, &bno, &fresh);
    if (err)
        return err;
    struct buf *bp;
    if (fresh || n == S5_BSIZE) {
        bp = s5_getblk(fs, bno);            /* no need to read what is replaced */
        if (n != S5_BSIZE)
            clrbuf(bp);
    } else {
        bp = s5_bread(fs, bno, &err);
        if (!bp)
            return err;
    }
    uio_copy((char *)bp->b_data + boff, n, false, uio);
    bp->b_flags |= B_DONE;
    if (ioflag & IO_SYNC)
        err = bwrite(bp);
    else
        bdwrite(bp);
    uio->uio_offset += n;
    if (uio->uio_offset > ip->i_size)
        ip->i_size = (uint32_t)uio->uio_offset;
    s5_itimes(ip, S5_UPD | S5_CHG);
    return err;
}

static int s5_write(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    struct s5_inode *ip = VTOI(vp);
    if (vp->v_type == VDIR)
        return -EISDIR;
    if (vp->v_type != VREG)
        return -EINVAL;
    if (ip->i_fs->fs_rdonly)
        return -EROFS;
    size_t start = uio->uio_resid;
    int err = 0;
    IRWLOCK(ip);
    if (ioflag & IO_APPEND) {
        ILOCK(ip);
        uio->uio_offset = ip->i_size;
        IUNLOCK(ip);
    }
    while (uio->uio_resid > 0 && !err) {
        if (uio->uio_offset >= S5_MAXFILESIZE) {
            err = -EFBIG;
            break;
        }
        size_t n = MIN((size_t)(S5_BSIZE - s5_blkoff(uio->uio_offset)), uio->uio_resid);
        n = MIN(n, (size_t)(S5_MAXFILESIZE - uio->uio_offset));
        ILOCK(ip);
        err = write_block(ip, uio, n, ioflag);
        IUNLOCK(ip);
    }
    if (ioflag & IO_SYNC) {
        ILOCK(ip);
        int e = s5_iupdat(ip, true);
        err = err ? err : e;
        IUNLOCK(ip);
    }
    IRWUNLOCK(ip);
    /* A write cut short by a full disk or the size limit is a success;
     * the next one reports the error.  Other errors (a damaged file) are
     * reported at once, the uio showing how far the write got. */
    if (uio->uio_resid < start && (err == -ENOSPC || err == -EFBIG))
        return 0;
    return err;
}

/* ---- attributes ---- */

static int s5_getattr(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    struct s5_inode *ip = VTOI(vp);
    ILOCK(ip);
    if (!(ip->i_flag & IBLKS) && s5_count_blocks(ip, &ip->i_nblocks) == 0)
        ip->i_flag |= IBLKS;
    va->va_type = vp->v_type;
    va->va_mode = ip->i_mode;
    va->va_uid = ip->i_uid;
    va->va_gid = ip->i_gid;
    va->va_nlink = ip->i_nlink;
    va->va_ino = ip->i_number;
    va->va_size = ip->i_size;
    va->va_blocks = (ip->i_flag & IBLKS) ? (uint64_t)ip->i_nblocks * (S5_BSIZE / 512) : 0;
    va->va_blksize = S5_BSIZE;
    va->va_fsid = vp->v_vfsp ? vp->v_vfsp->vfs_fsid : 0;
    va->va_rdev = vp->v_rdev;
    va->va_atime = ip->i_atime;
    va->va_mtime = ip->i_mtime;
    va->va_ctime = ip->i_ctime;
    IUNLOCK(ip);
    return 0;
}

#define AT_ALL (AT_MODE | AT_UID | AT_GID | AT_SIZE | AT_ATIME | AT_MTIME | AT_CTIME)

/* May cr make the changes va asks for?  (ip ILOCKED) */
static int setattr_allowed(struct s5_inode *ip, const struct vattr *va, struct cred *cr)
{
    uint32_t mask = va->va_mask;
    bool root = cr->cr_uid == 0, owner = root || cr->cr_uid == ip->i_uid;
    if ((mask & AT_MODE) && !owner)
        return -EPERM;
    if ((mask & AT_UID) && va->va_uid != ip->i_uid && !root)
        return -EPERM;
    if ((mask & AT_GID) && va->va_gid != ip->i_gid &&
        !(root || (owner && cred_groupmember(cr, va->va_gid))))
        return -EPERM;
    if ((mask & (AT_ATIME | AT_MTIME)) && !owner)
        return -EPERM;
    if ((mask & (AT_UID | AT_GID)) && (va->va_uid > 0xffff || va->va_gid > 0xffff))
        return -EINVAL;
    if (mask & AT_SIZE) {
        if (ip->i_vnode.v_type == VDIR)
            return -EISDIR;
        if (ip->i_vnode.v_type != VREG)
            return -EINVAL;
        if (va->va_size > S5_MAXFILESIZE)
            return -EFBIG;
        int err = s5_iaccess(ip, VWRITE, cr);
        if (err)
            return err;
    }
    return 0;
}

static void setattr_apply(struct s5_inode *ip, const struct vattr *va, struct cred *cr)
{
    uint32_t mask = va->va_mask;
    bool root = cr->cr_uid == 0;
    if (mask & AT_MODE) {
        uint16_t perm = va->va_mode & S5_IPERM;
        if (!root && ip->i_vnode.v_type != VDIR)
            perm &= ~S5_ISVTX;
        if (!root && !cred_groupmember(cr, ip->i_gid))
            perm &= ~S5_ISGID;
        ip->i_mode = (ip->i_mode & S5_IFMT) | perm;
    }
    if (mask & AT_UID)
        ip->i_uid = (uint16_t)va->va_uid;
    if (mask & AT_GID)
        ip->i_gid = (uint16_t)va->va_gid;
    if ((mask & (AT_UID | AT_GID)) && !root)
        ip->i_mode &= ~(S5_ISUID | S5_ISGID);
    if (mask & AT_ATIME)
        ip->i_atime = (uint32_t)va->va_atime;
    if (mask & AT_MTIME)
        ip->i_mtime = (uint32_t)va->va_mtime;
    s5_itimes(ip, S5_CHG);
}

static int s5_setattr(struct vnode *vp, const struct vattr *va, struct cred *cr)
{
    struct s5_inode *ip = VTOI(vp);
    if (va->va_mask & ~AT_ALL)
        return -EINVAL;
    if (ip->i_fs->fs_rdonly)
        return -EROFS;
    bool sizing = va->va_mask & AT_SIZE;
    if (sizing)
        IRWLOCK(ip);
    ILOCK(ip);
    int err = setattr_allowed(ip, va, cr);
    if (!err && sizing)
        err = s5_itrunc(ip, (uint32_t)va->va_size);
    if (!err)
        setattr_apply(ip, va, cr);
    if (!err)
        err = s5_iupdat(ip, s5_syncwrites());
    IUNLOCK(ip);
    if (sizing)
        IRWUNLOCK(ip);
    return err;
}

int s5_access(struct vnode *vp, int mode, struct cred *cr)
{
    struct s5_inode *ip = VTOI(vp);
    ILOCK(ip);
    int err = s5_iaccess(ip, mode, cr);
    IUNLOCK(ip);
    return err;
}

/* ---- lookup ---- */

static int lookup_dotdot(struct s5_inode *dp, struct vnode **vpp, struct cred *cr)
{
    struct s5_dirslot ds;
    ILOCK(dp);
    int err = s5_iaccess(dp, VEXEC, cr);
    if (!err)
        err = s5_dirsearch(dp, "..", &ds);
    IUNLOCK(dp);
    if (err)
        return err;
    if (ds.ino == dp->i_number) {           /* the root's ".." */
        VN_HOLD(ITOV(dp));
        *vpp = ITOV(dp);
        return 0;
    }
    /* dp is unlocked: the parent is locked only after the child let go. */
    struct s5_inode *ip;
    err = s5_iget(dp->i_fs, ds.ino, &ip);
    if (err)
        return err == -EDEADLK ? -EUCLEAN : err;
    if (ip->i_mode == 0 || ip->i_vnode.v_type != VDIR) {
        s5_iput(ip);
        return -ENOENT;                     /* moved or removed meanwhile */
    }
    IUNLOCK(ip);
    *vpp = ITOV(ip);
    return 0;
}

static int s5_lookup(struct vnode *dvp, const char *name, struct vnode **vpp, struct cred *cr)
{
    struct s5_inode *dp = VTOI(dvp), *ip;
    if (dvp->v_type != VDIR)
        return -ENOTDIR;
    int err = vn_name_check(name, S5_DIRSIZ);
    if (err)
        return err;
    if (name[0] == '.' && name[1] == '\0') {
        err = s5_access(dvp, VEXEC, cr);
        if (!err) {
            VN_HOLD(dvp);
            *vpp = dvp;
        }
        return err;
    }
    if (name[0] == '.' && name[1] == '.' && name[2] == '\0')
        return lookup_dotdot(dp, vpp, cr);
    err = s5_access(dvp, VEXEC, cr);
    if (err)
        return err;
    struct vnode *vp = dnlc_lookup(dvp, name, cr);
    if (vp) {
        *vpp = vp;
        return 0;
    }
    struct s5_dirslot ds;
    ILOCK(dp);
    err = dp->i_nlink == 0 ? -ENOENT : s5_dirsearch(dp, name, &ds);
    if (!err)
        err = s5_iget_entry(dp, ds.ino, &ip);
    if (!err) {
        /* Entered while dp is locked, so a remove of the name (which purges
         * it under the same lock) cannot come in between. */
        dnlc_enter(dvp, name, ITOV(ip), cr);
        IUNLOCK(ip);
        *vpp = ITOV(ip);
    }
    IUNLOCK(dp);
    return err;
}

/* ---- creating files ---- */

static int mode_for(const struct vattr *va, uint16_t *modep)
{
    uint16_t type;
    switch (va->va_type) {
    case VREG:  type = S5_IFREG; break;
    case VCHR:  type = S5_IFCHR; break;
    case VBLK:  type = S5_IFBLK; break;
    case VFIFO: type = S5_IFIFO; break;
    default:    return -EINVAL;
    }
    *modep = type | (va->va_mode & S5_IPERM);
    return 0;
}

/* Make a new inode of mode with one link named name in dp (ILOCKED, ds
 * from the search that found no such name).  Returns it ILOCKED. */
static int make_entry(struct s5_inode *dp, const char *name, uint16_t mode,
                      const struct s5_dirslot *ds, struct cred *cr, struct s5_inode **ipp)
{
    struct s5_inode *ip;
    int err = s5_ialloc(dp->i_fs, mode, &ip);
    if (err)
        return err;
    set_owner(ip, cr);
    ip->i_nlink = 1;
    err = s5_iupdat(ip, s5_syncwrites());
    if (!err)
        err = s5_direnter(dp, name, ip->i_number, ds);
    if (err) {
        ip->i_nlink = 0;                    /* inactive frees it */
        s5_iput(ip);
        return err;
    }
    *ipp = ip;
    return 0;
}

/* create found the name: open the existing file. */
static int create_existing(struct s5_inode *dp, uint32_t ino, const struct vattr *va,
                           bool excl, struct s5_inode **ipp)
{
    if (excl)
        return -EEXIST;
    int err = s5_iget_entry(dp, ino, ipp);
    if (err)
        return err;
    if ((*ipp)->i_vnode.v_type == VDIR && va->va_type != VDIR) {
        s5_iput(*ipp);
        return -EISDIR;
    }
    return 0;
}

/* With dp ILOCKed: may cr add the entry name to directory dp?  0 with *ds
 * the slot the search found free, or -EACCES, -ENOENT (dp has been
 * removed), -EEXIST, or the search's read error. */
static int may_add_entry(struct s5_inode *dp, const char *name, struct s5_dirslot *ds,
                         struct cred *cr)
{
    int err = s5_iaccess(dp, VWRITE | VEXEC, cr);
    if (!err && dp->i_nlink == 0)
        err = -ENOENT;
    if (!err) {
        err = s5_dirsearch(dp, name, ds);
        err = err == 0 ? -EEXIST : err == -ENOENT ? 0 : err;
    }
    return err;
}

static int s5_create(struct vnode *dvp, const char *name, const struct vattr *va, bool excl,
                     struct vnode **vpp, struct cred *cr)
{
    struct s5_inode *dp = VTOI(dvp), *ip = NULL;
    uint16_t mode;
    if (dvp->v_type != VDIR)
        return -ENOTDIR;
    int err = s5_check_new_name(name);
    if (!err)
        err = mode_for(va, &mode);
    if (err)
        return err;
    if ((va->va_type == VCHR || va->va_type == VBLK) && cr->cr_uid != 0)
        return -EPERM;
    if ((va->va_type == VCHR || va->va_type == VBLK) &&
        (vn_major(va->va_rdev) > 0xfff || vn_minor(va->va_rdev) > 0xfff))
        return -EOVERFLOW;                  /* 12 bits each on disk */
    struct s5_dirslot ds;
    ILOCK(dp);
    err = s5_iaccess(dp, VEXEC, cr);
    if (!err)
        err = dp->i_nlink == 0 ? -ENOENT : s5_dirsearch(dp, name, &ds);
    if (!err) {
        err = create_existing(dp, ds.ino, va, excl, &ip);
    } else if (err == -ENOENT && dp->i_nlink != 0) {
        err = s5_iaccess(dp, VWRITE, cr);
        if (!err)
            err = make_entry(dp, name, mode, &ds, cr, &ip);
        if (!err && (va->va_type == VCHR || va->va_type == VBLK)) {
            ip->i_addr[0] = s5_dev_to_disk(va->va_rdev);
            ip->i_vnode.v_rdev = s5_dev_from_disk(ip->i_addr[0]);
            err = s5_iupdat(ip, s5_syncwrites());
        }
        if (!err)
            dnlc_enter(dvp, name, ITOV(ip), cr);
    }
    if (ip) {
        IUNLOCK(ip);
        if (err)
            VN_RELE(ITOV(ip));
        else
            *vpp = ITOV(ip);
    }
    IUNLOCK(dp);
    return err;
}

static int s5_mkdir(struct vnode *dvp, const char *name, const struct vattr *va,
                    struct vnode **vpp, struct cred *cr)
{
    struct s5_inode *dp = VTOI(dvp), *ip;
    if (dvp->v_type != VDIR)
        return -ENOTDIR;
    int err = s5_check_new_name(name);
    if (err)
        return err;
    struct s5_dirslot ds;
    ILOCK(dp);
    err = may_add_entry(dp, name, &ds, cr);
    if (!err && dp->i_nlink >= S5_MAXLINK)
        err = -EMLINK;
    if (!err)
        err = s5_ialloc(dp->i_fs, S5_IFDIR | (va->va_mode & S5_IPERM), &ip);
    if (err) {
        IUNLOCK(dp);
        return err;
    }
    set_owner(ip, cr);
    ip->i_nlink = 2;                        /* its entry and its "." */
    err = s5_dirinit(ip, dp->i_number);
    if (!err)
        err = s5_iupdat(ip, s5_syncwrites());
    if (!err) {
        /* The parent's count first: a crash leaves it too high, not too low. */
        dp->i_nlink++;
        s5_itimes(dp, S5_CHG);
        err = s5_iupdat(dp, s5_syncwrites());
        if (!err)
            err = s5_direnter(dp, name, ip->i_number, &ds);
        if (err) {
            dp->i_nlink--;
            s5_iupdat(dp, s5_syncwrites());
        }
    }
    if (err) {
        ip->i_nlink = 0;
        s5_iput(ip);
    } else {
        dnlc_enter(dvp, name, ITOV(ip), cr);
        IUNLOCK(ip);
        *vpp = ITOV(ip);
    }
    IUNLOCK(dp);
    return err;
}

static int s5_symlink(struct vnode *dvp, const char *name, const struct vattr *va,
                      const char *target, struct cred *cr)
{
    struct s5_inode *dp = VTOI(dvp), *ip;
    if (dvp->v_type != VDIR)
        return -ENOTDIR;
    int err = s5_check_new_name(name);
    if (err)
        return err;
    size_t tlen = strnlen(target, PATH_MAX);
    if (tlen == 0)
        return -ENOENT;
    if (tlen >= PATH_MAX)
        return -ENAMETOOLONG;
    struct s5_dirslot ds;
    ILOCK(dp);
    err = may_add_entry(dp, name, &ds, cr);
    if (!err)
        err = s5_ialloc(dp->i_fs, S5_IFLNK | 0777, &ip);
    if (err) {
        IUNLOCK(dp);
        return err;
    }
    set_owner(ip, cr);
    /* The target is the file's data: one block (PATH_MAX is 1 KiB). */
    uint32_t bno;
    bool fresh;
    err = s5_bmap(ip, 0, true, &bno, &fresh);
    if (!err) {
        struct buf *bp = s5_getblk(ip->i_fs, bno);
        clrbuf(bp);
        memcpy(bp->b_data, target, tlen);
        err = s5_bwrite_meta(bp, s5_syncwrites());
    }
    if (!err) {
        ip->i_size = (uint32_t)tlen;
        ip->i_nlink = 1;
        err = s5_iupdat(ip, s5_syncwrites());
    }
    if (!err)
        err = s5_direnter(dp, name, ip->i_number, &ds);
    if (err)
        ip->i_nlink = 0;
    s5_iput(ip);
    IUNLOCK(dp);
    return err;
}

static int s5_readlink(struct vnode *vp, struct uio *uio, struct cred *cr)
{
    struct s5_inode *ip = VTOI(vp);
    if (vp->v_type != VLNK)
        return -EINVAL;
    ILOCK(ip);
    uio->uio_offset = 0;
    int err = 0;
    bool eof = false;
    while (uio->uio_resid > 0 && !eof && !err)
        err = read_block(ip, uio, &eof);
    IUNLOCK(ip);
    return err;
}

/* ---- links ---- */

static int s5_link(struct vnode *tdvp, struct vnode *svp, const char *tname, struct cred *cr)
{
    struct s5_inode *tdp = VTOI(tdvp);
    if (svp->v_op != &s5_vnodeops || svp->v_vfsp != tdvp->v_vfsp)
        return -EXDEV;
    struct s5_inode *sip = VTOI(svp);
    if (tdvp->v_type != VDIR)
        return -ENOTDIR;
    if (svp->v_type == VDIR)
        return -EPERM;                      /* fsck.s5 allows no second link to a directory */
    int err = s5_check_new_name(tname);
    if (err)
        return err;
    struct s5_dirslot ds;
    ILOCK(tdp);
    err = may_add_entry(tdp, tname, &ds, cr);
    if (!err) {
        /* A directory, then a file that is no directory: no order problem. */
        ILOCK(sip);
        if (sip->i_nlink >= S5_MAXLINK)
            err = -EMLINK;
        else if (sip->i_nlink == 0)
            err = -ENOENT;
        else {
            sip->i_nlink++;
            s5_itimes(sip, S5_CHG);
            err = s5_iupdat(sip, s5_syncwrites());
        }
        IUNLOCK(sip);
        if (!err) {
            err = s5_direnter(tdp, tname, sip->i_number, &ds);
            if (err) {
                ILOCK(sip);
                sip->i_nlink--;
                s5_iupdat(sip, s5_syncwrites());
                IUNLOCK(sip);
            }
        }
    }
    IUNLOCK(tdp);
    return err;
}

static int s5_remove(struct vnode *dvp, const char *name, struct cred *cr)
{
    struct s5_inode *dp = VTOI(dvp), *ip = NULL;
    if (dvp->v_type != VDIR)
        return -ENOTDIR;
    int err = s5_check_new_name(name);
    if (err)
        return err;
    struct s5_dirslot ds;
    err = s5_lock_entry(dp, name, cr, &ds, &ip);
    if (!err && ip->i_vnode.v_type == VDIR)
        err = -EISDIR;
    if (!err)
        err = s5_sticky_check(dp, ip, cr);
    if (!err)
        err = s5_dirrewrite(dp, ds.off, 0);
    if (!err) {
        dnlc_remove(dvp, name);
        if (ip->i_nlink > 0)
            ip->i_nlink--;
        s5_itimes(ip, S5_CHG);
        err = s5_iupdat(ip, s5_syncwrites());
    }
    if (ip)
        IUNLOCK(ip);
    IUNLOCK(dp);
    if (ip)
        VN_RELE(ITOV(ip));                  /* the last one frees it */
    return err;
}

static int s5_rmdir(struct vnode *dvp, const char *name, struct cred *cr)
{
    struct s5_inode *dp = VTOI(dvp), *ip = NULL;
    if (dvp->v_type != VDIR)
        return -ENOTDIR;
    int err = s5_check_new_name(name);
    if (err)
        return err;
    struct s5_fs *fs = dp->i_fs;
    struct s5_dirslot ds;
    rlock_acquire(&fs->fs_rename);
    err = s5_lock_entry(dp, name, cr, &ds, &ip);
    if (!err && ip->i_vnode.v_type != VDIR)
        err = -ENOTDIR;
    if (!err && (ip == fs->fs_root || ITOV(ip)->v_vfsmountedhere))
        err = -EBUSY;
    if (!err)
        err = s5_sticky_check(dp, ip, cr);
    if (!err) {
        err = s5_dirempty(ip);
        err = err == 1 ? 0 : err == 0 ? -ENOTEMPTY : err;
    }
    if (!err)
        err = s5_dirrewrite(dp, ds.off, 0);
    if (!err) {
        dnlc_remove(dvp, name);
        dp->i_nlink--;                      /* its ".." */
        s5_itimes(dp, S5_CHG);
        s5_iupdat(dp, s5_syncwrites());
        ip->i_nlink = 0;                    /* its entry and its "." */
        s5_itimes(ip, S5_CHG);
        err = s5_iupdat(ip, s5_syncwrites());
        dnlc_purge_vp(ITOV(ip));
    }
    if (ip)
        IUNLOCK(ip);
    IUNLOCK(dp);
    rlock_release(&fs->fs_rename);
    if (ip)
        VN_RELE(ITOV(ip));
    return err;
}

/* ---- readdir ---- */

/* Emit one dirent64 record for entry de at offset off; false if it does
 * not fit in what is left of the transfer. */
static bool emit_dirent(const struct s5_direct *de, uint32_t next_off, struct uio *uio)
{
    char rec[sizeof(struct dirent64) + S5_DIRSIZ + 1 + 8];
    uint32_t len = s5_namelen(de->d_name);
    size_t reclen = ALIGN_UP(offsetof(struct dirent64, d_name) + len + 1, 8);
    if (reclen > uio->uio_resid)
        return false;
    memset(rec, 0, sizeof rec);
    struct dirent64 *d = (struct dirent64 *)rec;
    d->d_ino = de->d_ino;
    d->d_off = next_off;
    d->d_reclen = (uint16_t)reclen;
    bool dots = s5_namematch(de->d_name, ".", 1) || s5_namematch(de->d_name, "..", 2);
    d->d_type = dots ? DT_DIR : DT_UNKNOWN;
    memcpy(d->d_name, de->d_name, len);
    uio_copy(rec, reclen, true, uio);
    return true;
}

static int s5_readdir(struct vnode *vp, struct uio *uio, struct cred *cr, bool *eofp)
{
    struct s5_inode *ip = VTOI(vp);
    if (vp->v_type != VDIR)
        return -ENOTDIR;
    ILOCK(ip);
    uint32_t off = (uint32_t)MIN(ALIGN_UP(uio->uio_offset, S5_DIRENT_SIZE),
                                 (uint64_t)ip->i_size);
    int err = 0, emitted = 0;
    bool full = false;
    while (off < ip->i_size && !full && !err) {
        struct buf *bp;
        err = s5_dirblk(ip, off, &bp);
        if (err)
            break;
        uint32_t end = MIN(ip->i_size, (s5_lblkno(off) + 1) * S5_BSIZE);
        for (; off < end; off += S5_DIRENT_SIZE) {
            const struct s5_direct *de =
                (const struct s5_direct *)((char *)bp->b_data + s5_blkoff(off));
            if (de->d_ino == 0)
                continue;
            if (!s5_ino_valid(&ip->i_fs->fs_sb, de->d_ino)) {
                s5_corrupt(ip->i_fs, "directory %u: entry at offset %u points to inode %u "
                           "past the inode list", ip->i_number, off, de->d_ino);
                err = -EUCLEAN;
                break;
            }
            if (!emit_dirent(de, off + S5_DIRENT_SIZE, uio)) {
                full = true;
                break;
            }
            emitted++;
        }
        brelse(bp);
    }
    uio->uio_offset = off;
    *eofp = off >= ip->i_size;
    IUNLOCK(ip);
    if (full && emitted == 0)
        return -EINVAL;                     /* not even one record fits */
    return emitted ? 0 : err;
}

/* ---- fsync, truncate ---- */

static int s5_fsync(struct vnode *vp, struct cred *cr)
{
    struct s5_inode *ip = VTOI(vp);
    if (ip->i_fs->fs_rdonly)
        return 0;
    ILOCK(ip);
    int err = s5_iupdat(ip, true);
    IUNLOCK(ip);
    int e = bflush(ip->i_fs->fs_dev);
    return err ? err : e;
}

static int s5_truncate(struct vnode *vp, uint64_t size, struct cred *cr)
{
    struct s5_inode *ip = VTOI(vp);
    if (vp->v_type == VDIR)
        return -EISDIR;
    if (vp->v_type != VREG)
        return -EINVAL;
    if (size > S5_MAXFILESIZE)
        return -EFBIG;
    if (ip->i_fs->fs_rdonly)
        return -EROFS;
    IRWLOCK(ip);
    ILOCK(ip);
    int err = s5_itrunc(ip, (uint32_t)size);
    int e = s5_iupdat(ip, s5_syncwrites());
    IUNLOCK(ip);
    IRWUNLOCK(ip);
    return err ? err : e;
}

const struct vnodeops s5_vnodeops = {
    .vop_open = s5_open,
    .vop_close = s5_close,
    .vop_read = s5_read,
    .vop_write = s5_write,
    .vop_ioctl = s5_ioctl,
    .vop_getattr = s5_getattr,
    .vop_setattr = s5_setattr,
    .vop_access = s5_access,
    .vop_lookup = s5_lookup,
    .vop_create = s5_create,
    .vop_remove = s5_remove,
    .vop_link = s5_link,
    .vop_rename = s5_rename,
    .vop_mkdir = s5_mkdir,
    .vop_rmdir = s5_rmdir,
    .vop_readdir = s5_readdir,
    .vop_symlink = s5_symlink,
    .vop_readlink = s5_readlink,
    .vop_fsync = s5_fsync,
    .vop_truncate = s5_truncate,
    .vop_inactive = s5_inactive,
};
