/*
 * Vnodes: reference counting and the vnode lock (SVR4 MP, seed 001).
 *
 * Theory.  A vnode is the file-system-independent face of a file.  Its
 * operations are called through the VOP_* macros in kern/vfs/vnode.h,
 * which hold the vnode lock (v_lock) around the file system's function:
 * "a lock on a vnode is obtained and released around almost every VOP
 * call", giving each file system a blanket of per-file mutual exclusion.
 * v_lock is an SVR4 mutex: recursive (a VOP may call another VOP on the
 * same vnode), sleeping when busy, and released by the scheduler whenever
 * its holder blocks and reacquired before the holder runs again.  So a
 * thread that holds one vnode lock and waits for a second one has given up
 * the first while it waits: two lookups walking a directory tree in
 * opposite directions (a/b and b/..) cannot deadlock.
 *
 * Inode resource locks (ILOCKED, IRWLOCKED in the file systems) stay held
 * across blocking; ILOCK and IRWLOCK take the vnode lock as well and
 * IUNLOCK/IRWUNLOCK release it, so the uniprocessor semantics of the two
 * flags are kept on a multiprocessor.
 *
 * References: VN_HOLD and VN_RELE are single atomic operations.  The last
 * VN_RELE calls VOP_INACTIVE without the vnode lock; a file system that
 * caches inactive vnodes marks them inactive with the count -1 under its
 * inode-cache lock (the protocol is described in kern/vfs/vnode.h).
 * Before that call the page cache drops the file's cached pages
 * (pcache_purge): it keeps pages only of files someone holds.
 *
 * Lock order: a vnode lock may be taken while holding another (the sleep
 * releases both); the file system's inode-cache lock and the buffer-cache
 * and DNLC locks come after (inside) any vnode lock.
 */
#include <kern/vfs/vnode.h>
#include <kern/vfs/cred.h>
#include <kern/vm/pcache.h>
#include <kern/lock/lock.h>
#include <kern/arch/panic.h>
#include <kern/lib/string.h>

LOCK_CLASS(vnode_lock_class, "vnode", LK_MUTEX_SLEEP);

void vn_init(struct vnode *vp, const struct vnodeops *ops, enum vtype type,
             struct vfs *vfsp, void *data)
{
    mutex_init(&vp->v_lock, &vnode_lock_class, MUTEX_SLEEP, "vnode");
    vp->v_count = 1;
    vp->v_flag = 0;
    vp->v_type = type;
    vp->v_vfsp = vfsp;
    vp->v_vfsmountedhere = NULL;
    vp->v_op = ops;
    vp->v_data = data;
    vp->v_rdev = 0;
    vp->v_npages = 0;
    vp->v_pagelist = NULL;
}

void vn_destroy(struct vnode *vp)
{
    mutex_destroy(&vp->v_lock);
}

void VN_RELE(struct vnode *vp)
{
    int32_t left = __atomic_sub_fetch(&vp->v_count, 1, __ATOMIC_ACQ_REL);
    if (left == 0) {
        /* The page cache holds no reference: a file's cached pages go
         * with its last one, before the file system may reuse the vnode
         * (kern/vm/pcache.c); but an inode cache's vnode keeps them until
         * its in-core inode is reused (kern/vfs/icache.c, VKEEPPAGES). */
        if (!(vp->v_flag & VKEEPPAGES) && __atomic_load_n(&vp->v_npages, __ATOMIC_SEQ_CST))
            pcache_purge(vp);
        vp->v_op->vop_inactive(vp, kcred);
    }
    else if (left < 0)
        panic("VN_RELE: vnode %p count %d", vp, left);
}

int vn_open_nop(struct vnode **vpp, int flags, struct cred *cr)
{
    return 0;
}

int vn_close_nop(struct vnode *vp, int flags, struct cred *cr)
{
    return 0;
}

int vn_ioctl_notty(struct vnode *vp, unsigned long cmd, void *arg, struct cred *cr)
{
    return -ENOTTY;
}

int vn_truncate_check(const struct vnode *vp, uint64_t size, uint64_t maxsize, bool rdonly)
{
    if (vp->v_type == VDIR)
        return -EISDIR;
    if (vp->v_type != VREG)
        return -EINVAL;
    if (size > maxsize)
        return -EFBIG;
    return rdonly ? -EROFS : 0;
}

int vn_access_check(uint32_t mode, uint32_t uid, uint32_t gid, int want, const struct cred *cr)
{
    if (cr->cr_uid == 0) {
        /* The superuser may do anything, except execute a file that no
         * one may execute. */
        if ((want & VEXEC) && (mode & S_IFMT) != S_IFDIR && !(mode & 0111))
            return -EACCES;
        return 0;
    }
    uint32_t bits;
    if (cr->cr_uid == uid)
        bits = mode >> 6;
    else if (cred_groupmember(cr, gid))
        bits = mode >> 3;
    else
        bits = mode;
    return ((bits & 7 & want) == (uint32_t)want) ? 0 : -EACCES;
}

int vn_name_check(const char *name, size_t max)
{
    size_t n = 0;
    for (; name[n]; n++)
        if (name[n] == '/')
            return -EINVAL;
    if (n == 0)
        return -EINVAL;
    return n > max ? -ENAMETOOLONG : 0;
}

int vn_new_name_check(const char *name, size_t max)
{
    int err = vn_name_check(name, max);
    if (err)
        return err;
    bool dots = name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
    return dots ? -EINVAL : 0;
}

int vn_symlink_check(const char *target, size_t *lenp)
{
    size_t n = strnlen(target, PATH_MAX);
    if (n == 0)
        return -ENOENT;
    if (n >= PATH_MAX)
        return -ENAMETOOLONG;
    *lenp = n;
    return 0;
}

int vn_sticky_check(uint32_t dmode, uint32_t duid, uint32_t fuid, const struct cred *cr)
{
    if (!(dmode & S_ISVTX) || cr->cr_uid == 0 || cr->cr_uid == fuid || cr->cr_uid == duid)
        return 0;
    return -EPERM;
}

/* ---- setattr's rules ---- */

int vn_setattr_check(const struct vattr *cur, const struct vattr *va, uint64_t maxsize,
                     const struct cred *cr)
{
    uint32_t mask = va->va_mask;
    bool root = cr->cr_uid == 0, owner = root || cr->cr_uid == cur->va_uid;
    if ((mask & AT_MODE) && !owner)
        return -EPERM;
    if ((mask & AT_UID) && va->va_uid != cur->va_uid && !root)
        return -EPERM;
    if ((mask & AT_GID) && va->va_gid != cur->va_gid &&
        !(root || (owner && cred_groupmember(cr, va->va_gid))))
        return -EPERM;
    if ((mask & (AT_ATIME | AT_MTIME)) && !owner)
        return -EPERM;
    if (mask & AT_SIZE) {
        if (cur->va_type == VDIR)
            return -EISDIR;
        if (cur->va_type != VREG)
            return -EINVAL;
        if (va->va_size > maxsize)
            return -EFBIG;
    }
    return 0;
}

void vn_setattr_apply(struct vattr *cur, const struct vattr *va, const struct cred *cr)
{
    uint32_t mask = va->va_mask;
    bool root = cr->cr_uid == 0;
    if (mask & AT_MODE) {
        uint32_t perm = va->va_mode & 07777;
        if (!root && cur->va_type != VDIR)
            perm &= ~(uint32_t)S_ISVTX;
        if (!root && !cred_groupmember(cr, cur->va_gid))
            perm &= ~(uint32_t)S_ISGID;
        cur->va_mode = (cur->va_mode & S_IFMT) | perm;
    }
    if (mask & AT_UID)
        cur->va_uid = va->va_uid;
    if (mask & AT_GID)
        cur->va_gid = va->va_gid;
    if ((mask & (AT_UID | AT_GID)) && !root)
        cur->va_mode &= ~(uint32_t)(S_ISUID | S_ISGID);
    if (mask & AT_ATIME)
        cur->va_atime = va->va_atime;
    if (mask & AT_MTIME)
        cur->va_mtime = va->va_mtime;
}

/* ---- readdir records ---- */

bool vfs_put_dirent(struct uio *uio, uint64_t ino, int64_t next, uint8_t type,
                    const char *name, size_t namelen)
{
    char rec[offsetof(struct dirent64, d_name) + 256 + 8];
    size_t reclen = ALIGN_UP(offsetof(struct dirent64, d_name) + namelen + 1, 8);
    if (namelen > 255 || reclen > uio->uio_resid)
        return false;
    memset(rec, 0, reclen);
    struct dirent64 *d = (struct dirent64 *)rec;
    d->d_ino = ino;
    d->d_off = next;
    d->d_reclen = (uint16_t)reclen;
    d->d_type = type;
    memcpy(d->d_name, name, namelen);
    memcpy(uio->uio_base, rec, reclen);     /* readdir's buffers are the kernel's */
    uio->uio_base = (char *)uio->uio_base + reclen;
    uio->uio_resid -= reclen;
    return true;
}

int vn_op_notdir(void)
{
    return -ENOTDIR;
}

int vn_set_owner_mode(const struct vattr *va, const struct cred *cr, uint32_t *mode,
                      uint32_t *uid, uint32_t *gid)
{
    uint32_t m = va->va_mask;
    if (!(m & (AT_MODE | AT_UID | AT_GID)))
        return 0;
    if (cr->cr_uid != 0 && (cr->cr_uid != *uid || (m & (AT_UID | AT_GID))))
        return -EPERM;
    if (m & AT_MODE)
        *mode = va->va_mode & 07777;
    if (m & AT_UID)
        *uid = va->va_uid;
    if (m & AT_GID)
        *gid = va->va_gid;
    return 0;
}
