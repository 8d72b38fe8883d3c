/*
 * S5 vnode operations on a file's data and attributes: read, write,
 * getattr, setattr, access, readlink, readdir, fsync, truncate, and the
 * vnodeops table (the name-space operations are in kern/s5/s5_namei.c,
 * rename in s5_rename.c).  Each is called through a VOP_* macro with the
 * vnode's lock held (kern/vfs/vnode.h); each takes the inode locks it
 * needs (ILOCK for the inode, IRWLOCK around a whole read or write) and
 * releases them before it returns, so no VOP here returns with ILOCKED
 * held.  Theory, lock order and the races handled are in
 * kern/s5/s5_vfsops.c.
 */
#include <kern/s5/s5_inode.h>
#include <kern/vfs/buf.h>
#include <kern/vfs/dnlc.h>
#include <kern/vfs/cred.h>
#include <kern/lib/string.h>
#include <kern/vm/kmem.h>

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

/* ---- read and write ---- */

/*
 * Copy n bytes at boff of data block bno to the uio (to_uio) or from it,
 * past the buffer cache: a regular file's data lives in the page cache
 * (kern/s5/s5_page.c), and these raw operations see the disk itself.
 * fresh: the block was just allocated (its old contents are not read).
 */
static int data_block_copy(struct s5_fs *fs, uint32_t bno, bool fresh, uint32_t boff, size_t n,
                           bool to_uio, struct uio *uio)
{
    char *tmp = kmalloc(S5_BSIZE);
    if (!tmp)
        return -ENOMEM;
    int err = 0;
    if (fresh)
        memset(tmp, 0, S5_BSIZE);
    else
        err = s5_data_rw(fs, bno, tmp, false);
    if (!err) {
        uio_copy(tmp + boff, n, to_uio, uio);
        if (!to_uio)
            err = s5_data_rw(fs, bno, tmp, true);
    }
    kfree(tmp);
    return err;
}

/* One block's worth of a read (ip ILOCKED); *eof at end of file. */
static int read_block(struct s5_inode *ip, struct uio *uio, bool *eof, bool data)
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
    } else if (data) {
        err = data_block_copy(ip->i_fs, bno, false, boff, n, true, uio);
        if (err)
            return err;
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
        err = read_block(ip, uio, &eof, vp->v_type == VREG);
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

/* One block's worth of a write of n bytes (ip ILOCKED), straight to the
 * disk: S5 writes only regular files, whose data is never buffered. */
static int write_block(struct s5_inode *ip, struct uio *uio, size_t n, int ioflag)
{
    struct s5_fs *fs = ip->i_fs;
    uint32_t boff = s5_blkoff(uio->uio_offset);
    uint32_t bno;
    bool fresh;
    int err = s5_bmap(ip, s5_lblkno(uio->uio_offset), true, &bno, &fresh);
    if (err)
        return err;
    if (fresh)
        s5_data_fresh(fs, bno);
    err = data_block_copy(fs, bno, fresh, boff, n, false, uio);
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

/* The attributes from the in-core inode (ILOCKed, or read racily by
 * s5_getattr_nolock). */
static void fill_attr(struct vnode *vp, struct s5_inode *ip, struct vattr *va)
{
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
}

static int s5_getattr(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    struct s5_inode *ip = VTOI(vp);
    ILOCK(ip);
    if (!(ip->i_flag & IBLKS) && s5_count_blocks(ip, &ip->i_nblocks) == 0)
        ip->i_flag |= IBLKS;
    fill_attr(vp, ip, va);
    IUNLOCK(ip);
    return 0;
}

/* fstat's short path: no vnode lock and no ILOCK once the block count is
 * known (IBLKS), as Linux fills stat from the inode without its lock.
 * The caller holds a reference, so the inode stays; a write racing this
 * may show its new size with the old times. */
static int s5_getattr_nolock(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    struct s5_inode *ip = VTOI(vp);
    if (!(READ_ONCE(ip->i_flag) & IBLKS))
        return 1;
    /* Racy on purpose (the comment above): a file's times may change under
     * the ILOCK meanwhile (s5_itimes), as KCSAN's campaign saw. */
    (void)data_race((fill_attr(vp, ip, va), 0));
    return (READ_ONCE(ip->i_flag) & IBLKS) ? 0 : 1;
}

/* The attributes setattr's rules look at. */
static void rule_attrs(const struct s5_inode *ip, struct vattr *cur)
{
    cur->va_type = ip->i_vnode.v_type;
    cur->va_mode = ip->i_mode;
    cur->va_uid = ip->i_uid;
    cur->va_gid = ip->i_gid;
    cur->va_atime = ip->i_atime;
    cur->va_mtime = ip->i_mtime;
}

/* May cr make the changes va asks for?  (ip ILOCKED) */
static int setattr_allowed(struct s5_inode *ip, const struct vattr *va, struct cred *cr)
{
    struct vattr cur;
    rule_attrs(ip, &cur);
    int err = vn_setattr_check(&cur, va, S5_MAXFILESIZE, cr);
    if (!err && (va->va_mask & (AT_UID | AT_GID)) && (va->va_uid > 0xffff || va->va_gid > 0xffff))
        err = -EINVAL;                      /* 16 bits on disk */
    if (!err && (va->va_mask & AT_SIZE))
        err = s5_iaccess(ip, VWRITE, cr);
    return err;
}

static void setattr_apply(struct s5_inode *ip, const struct vattr *va, struct cred *cr)
{
    struct vattr cur;
    rule_attrs(ip, &cur);
    vn_setattr_apply(&cur, va, cr);
    ip->i_mode = (uint16_t)cur.va_mode;
    ip->i_uid = (uint16_t)cur.va_uid;
    ip->i_gid = (uint16_t)cur.va_gid;
    ip->i_atime = (uint32_t)cur.va_atime;
    ip->i_mtime = (uint32_t)cur.va_mtime;
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

/* The DNLC path of lookup: s5_iaccess on fields read without ILOCK. */
static int s5_access_nolock(struct vnode *vp, int mode, struct cred *cr)
{
    struct s5_inode *ip = VTOI(vp);
    if ((mode & VWRITE) && ip->i_fs->fs_rdonly)
        return -EROFS;
    return vn_access_check(READ_ONCE(ip->i_mode), READ_ONCE(ip->i_uid), READ_ONCE(ip->i_gid),
                           mode, cr);
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
        err = read_block(ip, uio, &eof, vp->v_type == VREG);
    IUNLOCK(ip);
    return err;
}

/* ---- readdir ---- */

/* Emit one dirent64 record for entry de at offset off, with its type;
 * false if it does not fit in what is left of the transfer. */
static bool emit_dirent(struct s5_fs *fs, const struct s5_direct *de, uint32_t next_off,
                        struct uio *uio)
{
    bool dots = s5_namematch(de->d_name, ".", 1) || s5_namematch(de->d_name, "..", 2);
    uint8_t type = dots ? DT_DIR : s5_dtype(fs, de->d_ino);
    return vfs_put_dirent(uio, de->d_ino, next_off, type, de->d_name, s5_namelen(de->d_name));
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
            if (!emit_dirent(ip->i_fs, de, off + S5_DIRENT_SIZE, uio)) {
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
    int e = bflush_held(ip->i_fs->fs_dev);     /* holds no buffer */
    return err ? err : e;
}

static int s5_truncate(struct vnode *vp, uint64_t size, struct cred *cr)
{
    struct s5_inode *ip = VTOI(vp);
    int check = vn_truncate_check(vp, size, S5_MAXFILESIZE, ip->i_fs->fs_rdonly);
    if (check)
        return check;
    IRWLOCK(ip);
    ILOCK(ip);
    int err = s5_itrunc(ip, (uint32_t)size);
    int e = s5_iupdat(ip, s5_syncwrites());
    IUNLOCK(ip);
    IRWUNLOCK(ip);
    return err ? err : e;
}

const struct vnodeops s5_vnodeops = {
    .vop_open = vn_open_nop,
    .vop_close = vn_close_nop,
    .vop_read = s5_read,
    .vop_write = s5_write,
    .vop_ioctl = vn_ioctl_notty,
    .vop_getattr = s5_getattr,
    .vop_getattr_nolock = s5_getattr_nolock,
    .vop_access_nolock = s5_access_nolock,
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
    .vop_inactive = icache_inactive,
    .vop_getpage = s5_getpage,
    .vop_putpage = s5_putpage,
    .vop_wralloc = s5_wralloc,
    .vop_accessed = s5_accessed,
};
