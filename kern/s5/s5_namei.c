/*
 * S5 name-space operations: lookup, create, mkdir, symlink, link, remove
 * and rmdir (rename is kern/s5/s5_rename.c), and the helpers they share.
 * Each is called through a VOP_* macro with the directory's vnode lock
 * held; theory, lock order and races are in kern/s5/s5_vfsops.c.
 *
 * Directory operations lock the directory, then (through iget) the entry's
 * inode: parent before child, never the other way.  ".." is looked up
 * with the directory unlocked.  rmdir and rename also hold the file
 * system's rename lock, so the shape of the directory tree cannot change
 * under them.  No operation returns with ILOCKED held.
 */
#include <kern/s5/s5_inode.h>
#include <kern/vm/pcache.h>
#include <kern/vfs/buf.h>
#include <kern/vfs/dnlc.h>
#include <kern/vfs/cred.h>
#include <kern/lib/string.h>
#include <kern/vm/kmem.h>

/* A name to create or remove: valid, at most 14 bytes, not "." or "..". */
int s5_check_new_name(const char *name)
{
    return vn_new_name_check(name, S5_DIRSIZ);
}

int s5_sticky_check(struct s5_inode *dp, struct s5_inode *ip, struct cred *cr)
{
    return vn_sticky_check(dp->i_mode, dp->i_uid, ip->i_uid, cr);
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

int s5_lookup(struct vnode *dvp, const char *name, struct vnode **vpp, struct cred *cr)
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
    if (vp == DNLC_NO_VNODE)
        return -ENOENT;
    if (vp) {
        *vpp = vp;
        return 0;
    }
    struct s5_dirslot ds;
    ILOCK(dp);
    int found = dp->i_nlink == 0 ? -ENOENT : s5_dirsearch(dp, name, &ds);
    err = found;
    if (!err)
        err = s5_iget_entry(dp, ds.ino, &ip);
    if (!err) {
        /* Entered while dp is locked, so a remove of the name (which purges
         * it under the same lock) cannot come in between. */
        dnlc_enter(dvp, name, ITOV(ip), cr);
        IUNLOCK(ip);
        *vpp = ITOV(ip);
    } else if (found == -ENOENT && dp->i_nlink) {
        /* Known absent: entered under dp's lock, which the direnter that
         * adds the name (and removes this entry first) holds too. */
        dnlc_enter(dvp, name, DNLC_NO_VNODE, cr);
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
    case VSOCK: type = S5_IFSOCK; break;
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

int s5_create(struct vnode *dvp, const char *name, const struct vattr *va, bool excl,
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
    if ((va->va_type == VCHR || va->va_type == VBLK) && !s5_dev_fits(va->va_rdev))
        return -EINVAL;                     /* 8 bits each on disk, as Linux's sysv */
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

int s5_mkdir(struct vnode *dvp, const char *name, const struct vattr *va,
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

int s5_symlink(struct vnode *dvp, const char *name, const struct vattr *va,
               const char *target, struct cred *cr)
{
    struct s5_inode *dp = VTOI(dvp), *ip;
    if (dvp->v_type != VDIR)
        return -ENOTDIR;
    int err = s5_check_new_name(name);
    if (err)
        return err;
    size_t tlen;
    if ((err = vn_symlink_check(target, &tlen)))
        return err;
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

/* ---- links ---- */

int s5_link(struct vnode *tdvp, struct vnode *svp, const char *tname, struct cred *cr)
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

int s5_remove(struct vnode *dvp, const char *name, struct cred *cr)
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
        if (ip->i_nlink == 0)
            pcache_discard_dirty(ITOV(ip));     /* its pages need no write-back */
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

int s5_rmdir(struct vnode *dvp, const char *name, struct cred *cr)
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
