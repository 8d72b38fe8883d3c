/*
 * memfs, the VFS ktests' in-memory file system; see kern/tests/memfs.h.
 */
#include <kern/tests/memfs.h>
#include <kern/vfs/cred.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>

LOCK_CLASS(memfs_class, "ktest_memfs", LK_MUTEX_SLEEP);

int memfs_unlocked_vops;            /* [atomic] VOPs called without the vnode lock */

static void note_locked(struct vnode *vp)
{
    if (!mutex_owned(&vp->v_lock))
        __atomic_add_fetch(&memfs_unlocked_vops, 1, __ATOMIC_RELAXED);
}

static const struct vnodeops memfs_vnodeops;

/* With fs->lock held: a new reference to node (reactivating it from -1). */
static struct vnode *mnode_get(struct mnode *n)
{
    if (__atomic_load_n(&n->vn.v_count, __ATOMIC_ACQUIRE) == -1)
        __atomic_store_n(&n->vn.v_count, 0, __ATOMIC_RELEASE);
    VN_HOLD(&n->vn);
    return &n->vn;
}

/* With fs->lock held: a new node with one reference. */
static struct mnode *mnode_new(struct memfs *fs, struct vfs *vfsp, enum vtype type,
                               uint32_t mode, struct cred *cr)
{
    struct mnode *n = kzalloc(sizeof *n);
    if (!n)
        return NULL;
    vn_init(&n->vn, &memfs_vnodeops, type, vfsp, n);
    n->fs = fs;
    n->ino = fs->next_ino++;
    n->mode = mode & 07777;
    n->uid = cr->cr_uid;
    n->gid = cr->cr_gid;
    n->nlink = type == VDIR ? 2 : 1;
    n->all_next = fs->all;
    fs->all = n;
    return n;
}

static struct mdirent **dir_find(struct mnode *d, const char *name)
{
    struct mdirent **pp = &d->entries;
    while (*pp && strcmp((*pp)->name, name) != 0)
        pp = &(*pp)->next;
    return pp;
}

static int dir_add(struct mnode *d, const char *name, struct mnode *n)
{
    struct mdirent *e = kzalloc(sizeof *e);
    if (!e)
        return -ENOMEM;
    strlcpy(e->name, name, sizeof e->name);
    e->node = n;
    e->next = d->entries;
    d->entries = e;
    return 0;
}

static void dir_unlink(struct mdirent **pp)
{
    struct mdirent *e = *pp;
    *pp = e->next;
    e->node->nlink--;
    kfree(e);
}

static int memfs_open(struct vnode **vpp, int flags, struct cred *cr)
{
    note_locked(*vpp);
    return 0;
}

static int memfs_close(struct vnode *vp, int flags, struct cred *cr)
{
    note_locked(vp);
    return 0;
}

static int memfs_read(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    note_locked(vp);
    struct mnode *n = VTOM(vp);
    if (vp->v_type == VDIR)
        return -EISDIR;
    if (uio->uio_offset >= n->size)
        return 0;
    size_t k = MIN(uio->uio_resid, n->size - uio->uio_offset);
    memcpy(uio->uio_base, n->data + uio->uio_offset, k);
    uio->uio_base = (char *)uio->uio_base + k;
    uio->uio_resid -= k;
    uio->uio_offset += k;
    return 0;
}

static int memfs_write(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    note_locked(vp);
    struct mnode *n = VTOM(vp);
    if (vp->v_type == VDIR)
        return -EISDIR;
    if (ioflag & IO_APPEND)
        uio->uio_offset = n->size;
    if (uio->uio_offset >= MEMFS_FILEMAX)
        return -EFBIG;
    size_t k = MIN(uio->uio_resid, MEMFS_FILEMAX - uio->uio_offset);
    memcpy(n->data + uio->uio_offset, uio->uio_base, k);
    uio->uio_base = (char *)uio->uio_base + k;
    uio->uio_resid -= k;
    uio->uio_offset += k;
    n->size = MAX(n->size, uio->uio_offset);
    return 0;
}

static int memfs_ioctl(struct vnode *vp, unsigned long cmd, void *arg, struct cred *cr)
{
    note_locked(vp);
    return -ENOTTY;
}

static uint32_t type_bits(enum vtype t)
{
    return t == VDIR ? S_IFDIR : t == VLNK ? S_IFLNK : t == VCHR ? S_IFCHR : S_IFREG;
}

static int memfs_getattr(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    note_locked(vp);
    struct mnode *n = VTOM(vp);
    memset(va, 0, sizeof *va);
    va->va_type = vp->v_type;
    va->va_mode = type_bits(vp->v_type) | n->mode;
    va->va_uid = n->uid;
    va->va_gid = n->gid;
    va->va_nlink = n->nlink;
    va->va_ino = n->ino;
    va->va_size = n->size;
    va->va_fsid = vp->v_vfsp->vfs_fsid;
    return 0;
}

static int memfs_setattr(struct vnode *vp, const struct vattr *va, struct cred *cr)
{
    note_locked(vp);
    struct mnode *n = VTOM(vp);
    if (va->va_mask & AT_MODE)
        n->mode = va->va_mode & 07777;
    if (va->va_mask & AT_SIZE)
        n->size = MIN(va->va_size, (uint64_t)MEMFS_FILEMAX);
    return 0;
}

static int memfs_access(struct vnode *vp, int mode, struct cred *cr)
{
    note_locked(vp);
    struct mnode *n = VTOM(vp);
    return vn_access_check(type_bits(vp->v_type) | n->mode, n->uid, n->gid, mode, cr);
}

static int memfs_lookup(struct vnode *dvp, const char *name, struct vnode **vpp, struct cred *cr)
{
    note_locked(dvp);
    struct mnode *d = VTOM(dvp);
    if (dvp->v_type != VDIR)
        return -ENOTDIR;
    int err = vn_name_check(name, MEMFS_NAMEMAX);
    if (err)
        return err;
    mutex_enter(&d->fs->lock);
    struct mdirent *e = NULL;
    if (strcmp(name, "..") == 0)
        *vpp = mnode_get(d->parent ? d->parent : d);
    else if ((e = *dir_find(d, name)))
        *vpp = mnode_get(e->node);
    else
        err = -ENOENT;
    mutex_exit(&d->fs->lock);
    return err;
}

/* Make a node called name in d (fs lock held). */
static int make_node(struct vnode *dvp, const char *name, enum vtype type, uint32_t mode,
                     struct mnode **np, struct cred *cr)
{
    struct mnode *d = VTOM(dvp);
    int err = vn_name_check(name, MEMFS_NAMEMAX);
    if (err)
        return err;
    if (*dir_find(d, name))
        return -EEXIST;
    struct mnode *n = mnode_new(d->fs, dvp->v_vfsp, type, mode, cr);
    if (!n)
        return -ENOMEM;
    if ((err = dir_add(d, name, n))) {
        n->nlink = 0;
        VN_RELE(&n->vn);
        return err;
    }
    if (type == VDIR) {
        n->parent = d;
        d->nlink++;
    }
    *np = n;
    return 0;
}

static int memfs_create(struct vnode *dvp, const char *name, const struct vattr *va, bool excl,
                        struct vnode **vpp, struct cred *cr)
{
    note_locked(dvp);
    struct mnode *d = VTOM(dvp), *n;
    mutex_enter(&d->fs->lock);
    struct mdirent *e = *dir_find(d, name);
    int err = 0;
    if (e && excl)
        err = -EEXIST;
    else if (e)
        *vpp = mnode_get(e->node);
    else if (!(err = make_node(dvp, name, va->va_type, va->va_mode, &n, cr)))
        *vpp = &n->vn;
    mutex_exit(&d->fs->lock);
    return err;
}

static int memfs_remove(struct vnode *dvp, const char *name, struct cred *cr)
{
    note_locked(dvp);
    struct mnode *d = VTOM(dvp);
    mutex_enter(&d->fs->lock);
    struct mdirent **pp = dir_find(d, name);
    int err = 0;
    if (!*pp)
        err = -ENOENT;
    else if ((*pp)->node->vn.v_type == VDIR)
        err = -EISDIR;
    else
        dir_unlink(pp);
    mutex_exit(&d->fs->lock);
    return err;
}

static int memfs_link(struct vnode *tdvp, struct vnode *svp, const char *tname, struct cred *cr)
{
    note_locked(tdvp);
    struct mnode *d = VTOM(tdvp);
    int err = vn_name_check(tname, MEMFS_NAMEMAX);
    if (err)
        return err;
    mutex_enter(&d->fs->lock);
    if (*dir_find(d, tname))
        err = -EEXIST;
    else if (!(err = dir_add(d, tname, VTOM(svp))))
        VTOM(svp)->nlink++;
    mutex_exit(&d->fs->lock);
    return err;
}

static int memfs_rename(struct vnode *sdvp, const char *sname, struct vnode *tdvp,
                        const char *tname, struct cred *cr)
{
    note_locked(sdvp);
    struct mnode *sd = VTOM(sdvp), *td = VTOM(tdvp);
    int err = vn_name_check(tname, MEMFS_NAMEMAX);
    if (err)
        return err;
    mutex_enter(&sd->fs->lock);
    struct mdirent **sp = dir_find(sd, sname), **tp;
    if (!*sp) {
        err = -ENOENT;
    } else if (*(tp = dir_find(td, tname)) && (*tp)->node->entries) {
        err = -ENOTEMPTY;
    } else {
        struct mnode *n = (*sp)->node;
        if (*tp)
            dir_unlink(tp);
        if ((err = dir_add(td, tname, n)) == 0) {
            n->nlink++;
            dir_unlink(dir_find(sd, sname));
            if (n->vn.v_type == VDIR)
                n->parent = td;
        }
    }
    mutex_exit(&sd->fs->lock);
    return err;
}

static int memfs_mkdir(struct vnode *dvp, const char *name, const struct vattr *va,
                       struct vnode **vpp, struct cred *cr)
{
    note_locked(dvp);
    struct mnode *d = VTOM(dvp), *n;
    mutex_enter(&d->fs->lock);
    int err = make_node(dvp, name, VDIR, va->va_mode, &n, cr);
    if (!err)
        *vpp = &n->vn;
    mutex_exit(&d->fs->lock);
    return err;
}

static int memfs_rmdir(struct vnode *dvp, const char *name, struct cred *cr)
{
    note_locked(dvp);
    struct mnode *d = VTOM(dvp);
    mutex_enter(&d->fs->lock);
    struct mdirent **pp = dir_find(d, name);
    int err = 0;
    if (!*pp)
        err = -ENOENT;
    else if ((*pp)->node->vn.v_type != VDIR)
        err = -ENOTDIR;
    else if ((*pp)->node->entries)
        err = -ENOTEMPTY;
    else {
        d->nlink--;
        dir_unlink(pp);
    }
    mutex_exit(&d->fs->lock);
    return err;
}

static int memfs_readdir(struct vnode *vp, struct uio *uio, struct cred *cr, bool *eofp)
{
    note_locked(vp);
    *eofp = true;                   /* the tests list devfs, not memfs */
    return 0;
}

static int memfs_symlink(struct vnode *dvp, const char *name, const struct vattr *va,
                         const char *target, struct cred *cr)
{
    note_locked(dvp);
    size_t len = strlen(target);
    if (len > MEMFS_FILEMAX)
        return -ENAMETOOLONG;
    struct mnode *d = VTOM(dvp), *n;
    mutex_enter(&d->fs->lock);
    int err = make_node(dvp, name, VLNK, 0777, &n, cr);
    if (!err) {
        memcpy(n->data, target, len);
        n->size = len;
    }
    mutex_exit(&d->fs->lock);
    if (!err)
        VN_RELE(&n->vn);
    return err;
}

static int memfs_readlink(struct vnode *vp, struct uio *uio, struct cred *cr)
{
    note_locked(vp);
    if (vp->v_type != VLNK)
        return -EINVAL;
    return memfs_read(vp, uio, 0, cr);
}

static int memfs_fsync(struct vnode *vp, struct cred *cr)
{
    note_locked(vp);
    return 0;
}

static int memfs_truncate(struct vnode *vp, uint64_t size, struct cred *cr)
{
    note_locked(vp);
    VTOM(vp)->size = MIN(size, (uint64_t)MEMFS_FILEMAX);
    return 0;
}

/* The count reached 0: inactive for real (-1) unless someone took a new
 * reference meanwhile. */
static void memfs_inactive(struct vnode *vp, struct cred *cr)
{
    struct mnode *n = VTOM(vp);
    mutex_enter(&n->fs->lock);
    if (__atomic_load_n(&vp->v_count, __ATOMIC_ACQUIRE) == 0) {
        __atomic_store_n(&vp->v_count, -1, __ATOMIC_RELEASE);
        n->inactive_calls++;
    }
    mutex_exit(&n->fs->lock);
}

static const struct vnodeops memfs_vnodeops = {
    .vop_open = memfs_open, .vop_close = memfs_close, .vop_read = memfs_read,
    .vop_write = memfs_write, .vop_ioctl = memfs_ioctl, .vop_getattr = memfs_getattr,
    .vop_setattr = memfs_setattr, .vop_access = memfs_access, .vop_lookup = memfs_lookup,
    .vop_create = memfs_create, .vop_remove = memfs_remove, .vop_link = memfs_link,
    .vop_rename = memfs_rename, .vop_mkdir = memfs_mkdir, .vop_rmdir = memfs_rmdir,
    .vop_readdir = memfs_readdir, .vop_symlink = memfs_symlink,
    .vop_readlink = memfs_readlink, .vop_fsync = memfs_fsync,
    .vop_truncate = memfs_truncate, .vop_inactive = memfs_inactive,
};

int memfs_mount(struct vfs *vfsp, struct cred *cr)
{
    struct memfs *fs = kzalloc(sizeof *fs);
    if (!fs)
        return -ENOMEM;
    mutex_init(&fs->lock, &memfs_class, MUTEX_SLEEP, "memfs");
    fs->next_ino = 1;
    mutex_enter(&fs->lock);
    fs->root = mnode_new(fs, vfsp, VDIR, 0755, kcred);  /* memfs's own reference */
    mutex_exit(&fs->lock);
    if (!fs->root) {
        kfree(fs);
        return -ENOMEM;
    }
    fs->root->vn.v_flag |= VROOT;
    vfsp->vfs_data = fs;
    vfsp->vfs_bsize = 512;
    return 0;
}

int memfs_unmount(struct vfs *vfsp, struct cred *cr)
{
    struct memfs *fs = vfsp->vfs_data;
    mutex_enter(&fs->lock);
    for (struct mnode *n = fs->all; n; n = n->all_next)
        if (n != fs->root && __atomic_load_n(&n->vn.v_count, __ATOMIC_ACQUIRE) >= 0) {
            mutex_exit(&fs->lock);
            return -EBUSY;
        }
    mutex_exit(&fs->lock);
    struct mnode *next;
    for (struct mnode *n = fs->all; n; n = next) {
        next = n->all_next;
        while (n->entries) {
            struct mdirent *e = n->entries;
            n->entries = e->next;
            kfree(e);
        }
        vn_destroy(&n->vn);
        kfree(n);
    }
    mutex_destroy(&fs->lock);
    kfree(fs);
    return 0;
}

int memfs_root(struct vfs *vfsp, struct vnode **vpp)
{
    struct memfs *fs = vfsp->vfs_data;
    VN_HOLD(&fs->root->vn);
    *vpp = &fs->root->vn;
    return 0;
}

static int memfs_statfs(struct vfs *vfsp, struct kstatfs *sb)
{
    memset(sb, 0, sizeof *sb);
    sb->f_namelen = MEMFS_NAMEMAX;
    return 0;
}

int memfs_syncs;                    /* [atomic] VFS_SYNC calls */

static int memfs_sync(struct vfs *vfsp, struct cred *cr)
{
    __atomic_add_fetch(&memfs_syncs, 1, __ATOMIC_RELAXED);
    return 0;
}

const struct vfsops memfs_vfsops = {
    .vfs_mount = memfs_mount, .vfs_unmount = memfs_unmount, .vfs_root = memfs_root,
    .vfs_statfs = memfs_statfs, .vfs_sync = memfs_sync,
};

const struct vfssw memfs_sw = { .name = "ktest_memfs", .ops = &memfs_vfsops };

