/*
 * Pathname lookup (namei): a path string to a held vnode, one VOP_LOOKUP
 * per component.  The design and the locks are in kern/vfs/vfs.c's theory
 * comment; this file follows it:
 *
 *  - A name the DNLC holds is found without the directory's vnode lock:
 *    the cache has its own row locks, and the search permission comes
 *    from the file system's unlocked check (vop_access_nolock), so
 *    lookups through a busy directory ("/", "/usr/bin") by many CPUs no
 *    longer queue on its lock.  GAEDE on svr4mp at 2 CPUs had missed the
 *    vnode lock of one directory about 3000 times in 20 s, for 2.8 s of
 *    waiting, at namei's lock; a chmod racing the check is seen before or
 *    after it, as in Linux's lookup without locks.
 *  - Otherwise the directory is checked for VEXEC and then searched, both
 *    under one hold of its vnode lock (the SVR4 MP way of making two VOPs
 *    atomic: the lock is recursive, so the VOP macros inside take it
 *    again).  The file system's VOP_LOOKUP consults the DNLC itself.
 *  - Crossing into a mounted file system reads v_vfsmountedhere without a
 *    lock (NULL, the common case, costs nothing) and, when it is set, takes
 *    the mount-list lock shared to read it again and hold the mounted
 *    root: an unmount, which takes the lock exclusive and checks the root's
 *    references, then either sees our hold or has finished before we look.
 *  - ".." at the root of a mounted file system moves to the covered
 *    directory first.  No lock is needed: we hold the root, so the file
 *    system cannot be unmounted and vfs_vnodecovered stays put.  ".." at
 *    rootdir, or at the process's chroot directory, stays there.
 *  - The root a walk starts from is vfs_curroot(): rootdir, or the
 *    calling process's chroot directory, which the process layer names
 *    through a hook (curroot_hook, set once at boot before any process
 *    runs: no lock).
 *  - A symbolic link is read with VOP_READLINK and spliced in front of the
 *    rest of the path; the ninth in one lookup gives -ELOOP.
 *  - openat2's resolve flags (nd->resolve, RESOLVE_* in vfs.h) limit the
 *    walk where it starts (start_walk: BENEATH and IN_ROOT scope it to
 *    the start), at ".." (not above the top), at each link (none, no
 *    /proc links, no absolute ones under BENEATH, IN_ROOT's from the top),
 *    at each step (check_xdev: NO_XDEV keeps it on the start's file
 *    system) and at each name (CACHED: only the DNLC's).
 *
 * References: the walk holds exactly one directory at a time (plus the
 * vnode just found), releasing each as it moves on, so a lookup returns
 * every count it touched to where it was, except the one it hands back.
 */
#include <kern/vfs/vfs_impl.h>
#include <kern/vfs/cred.h>
#include <kern/vfs/dnlc.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>

static bool is_dot(const char *c)
{
    return c[0] == '.' && c[1] == 0;
}

static bool is_dotdot(const char *c)
{
    return c[0] == '.' && c[1] == '.' && c[2] == 0;
}

static struct vnode *(*curroot_hook)(void);     /* [c] set at boot */

void vfs_set_curroot_hook(struct vnode *(*fn)(void))
{
    curroot_hook = fn;
}

struct vnode *vfs_curroot(void)
{
    struct vnode *r = curroot_hook ? curroot_hook() : NULL;
    return r ? r : __atomic_load_n(&rootdir, __ATOMIC_ACQUIRE);
}

/* The directory a path starts from, held; NULL when there is none. */
static struct vnode *start_dir(const char *path, struct vnode *cwd)
{
    struct vnode *d = (path[0] == '/' || !cwd) ? vfs_curroot() : cwd;
    if (d)
        VN_HOLD(d);
    return d;
}

/* The directory the walk starts from, held, and openat2's scope: with
 * BENEATH or IN_ROOT the start (cwd, the dirfd) is the top, which an
 * absolute path starts from (IN_ROOT) or may not use (BENEATH). */
static int start_walk(struct nameidata *nd, const char *path, struct vnode **dirp)
{
    bool scoped = nd->resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT);
    nd->top = NULL;
    if (scoped && path[0] == '/' && (nd->resolve & RESOLVE_BENEATH))
        return -EXDEV;
    struct vnode *d;
    if (scoped) {
        d = nd->top = nd->cwd ? nd->cwd : vfs_curroot();
        VN_HOLD(d);
    } else if (!(d = start_dir(path, nd->cwd))) {
        return -ENOENT;
    }
    nd->vfs0 = d->v_vfsp;
    *dirp = d;
    return 0;
}

/* NO_XDEV: the walk may not leave the file system it started in. */
static int check_xdev(const struct nameidata *nd, const struct vnode *vp)
{
    return (nd->resolve & RESOLVE_NO_XDEV) && vp->v_vfsp != nd->vfs0 ? -EXDEV : 0;
}

/* vp is held; if a file system is mounted on it, return that file
 * system's root instead (held, vp released), and so on up a stack of
 * mounts. */
static struct vnode *cross_mounts(struct nameidata *nd, struct vnode *vp)
{
    bool locked = nd->flags & LOOKUP_LISTHELD;
    while (vp->v_type == VDIR && __atomic_load_n(&vp->v_vfsmountedhere, __ATOMIC_ACQUIRE)) {
        if (!locked)
            rw_enter(&vfs_list_lock, RW_READER);
        struct vfs *m = vp->v_vfsmountedhere;
        struct vnode *root = m ? m->vfs_rootvp : NULL;
        if (root)
            VN_HOLD(root);
        if (!locked)
            rw_exit(&vfs_list_lock);
        if (!root)
            break;
        VN_RELE(vp);
        vp = root;
    }
    return vp;
}

/* dir is held; while it is the root of a mounted file system, replace it
 * by the directory that file system covers (".." leaves through there). */
static struct vnode *climb_mount_roots(struct vnode *dir)
{
    struct vnode *top = vfs_curroot();
    for (;;) {
        struct vfs *vfsp = dir->v_vfsp;
        if (dir == rootdir || dir == top || !vfsp || dir != vfsp->vfs_rootvp || !vfsp->vfs_vnodecovered)
            return dir;
        struct vnode *covered = vfsp->vfs_vnodecovered;
        VN_HOLD(covered);
        VN_RELE(dir);
        dir = covered;
    }
}

/* The DNLC's vnode for comp in dir, held, found with no lock of dir's;
 * NULL to search the directory (*err 0), or with *err when dir refuses
 * the search (its check without locks said so) or the DNLC knows comp
 * is not there (-ENOENT). */
static struct vnode *cached_component(struct vnode *dir, const char *comp, struct cred *cr,
                                      int *err)
{
    *err = 0;
    if (!dir->v_op->vop_access_nolock)
        return NULL;
    struct vnode *vp = dnlc_lookup(dir, comp, cr);
    if (!vp)
        return NULL;
    *err = dir->v_op->vop_access_nolock(dir, VEXEC, cr);
    if (vp == DNLC_NO_VNODE) {
        *err = *err ? *err : -ENOENT;       /* known absent; search permission first */
        return NULL;
    }
    if (*err) {
        VN_RELE(vp);
        return NULL;
    }
    return vp;
}

/* Check dir for VEXEC and search it for comp, under one hold of its
 * vnode lock. */
static int search_locked(struct vnode *dir, const char *comp, struct vnode **vpp,
                         struct cred *cr)
{
    mutex_enter(&dir->v_lock);
    int err = VOP_ACCESS(dir, VEXEC, cr);
    if (!err && is_dot(comp)) {
        VN_HOLD(dir);
        *vpp = dir;
    } else if (!err) {
        err = VOP_LOOKUP(dir, comp, vpp, cr);
    }
    mutex_exit(&dir->v_lock);
    return err;
}

/*
 * Look comp up in *dirp (held).  ".." may replace *dirp by a covered
 * directory (still held by the caller's reference).  On success *vpp is
 * held, with mount points crossed.
 */
static int lookup_component(struct nameidata *nd, struct vnode **dirp, const char *comp,
                            struct vnode **vpp)
{
    struct vnode *dir = *dirp;
    if (dir->v_type != VDIR)
        return -ENOTDIR;
    int err;
    if (is_dotdot(comp)) {
        if ((err = VOP_ACCESS(dir, VEXEC, nd->cr)))
            return err;
        if (nd->top && dir == nd->top && (nd->resolve & RESOLVE_BENEATH))
            return -EXDEV;              /* BENEATH: ".." may not climb out */
        if (dir == rootdir || dir == vfs_curroot() || dir == nd->top) {
            VN_HOLD(dir);
            *vpp = dir;
            return 0;
        }
        dir = *dirp = climb_mount_roots(dir);
        err = VOP_LOOKUP(dir, comp, vpp, nd->cr);
    } else {
        err = 0;
        *vpp = is_dot(comp) ? NULL : cached_component(dir, comp, nd->cr, &err);
        if (!*vpp && !err)
            err = (nd->resolve & RESOLVE_CACHED) && !is_dot(comp) ? -EAGAIN
                : search_locked(dir, comp, vpp, nd->cr);
    }
    if (err)
        return err;
    *vpp = cross_mounts(nd, *vpp);
    return 0;
}

int readlink_alloc(struct vnode *vp, char **textp, size_t *lenp, struct cred *cr)
{
    char *text = kmalloc(PATH_MAX);
    if (!text)
        return -ENOMEM;
    struct uio uio = { .uio_base = text, .uio_resid = PATH_MAX, .uio_offset = 0 };
    int err = VOP_READLINK(vp, &uio, cr);
    size_t n = PATH_MAX - uio.uio_resid;
    if (!err && n == 0)
        err = -ENOENT;
    if (!err && n == PATH_MAX)
        err = -ENAMETOOLONG;
    if (err) {
        kfree(text);
        return err;
    }
    text[n] = 0;
    *textp = text;
    if (lenp)
        *lenp = n;
    return 0;
}

/*
 * vp is a symbolic link met with rest (a pointer into buf) still to walk:
 * rewrite buf as the link's text followed by rest.
 */
static int splice_symlink(struct nameidata *nd, struct vnode *vp, char *buf, const char *rest)
{
    if (++nd->links > MAXSYMLINKS)
        return -ELOOP;
    char *link;
    size_t n;
    int err = readlink_alloc(vp, &link, &n, nd->cr);
    if (err)
        return err;
    size_t restlen = strlen(rest);
    if (n + restlen >= PATH_MAX) {
        err = -ENAMETOOLONG;
    } else {
        memmove(buf + n, rest, restlen + 1);
        memcpy(buf, link, n);
    }
    kfree(link);
    return err;
}

/* The last component stops a LOOKUP_PARENT walk: check the directory the
 * caller will work in and hand it back with the name. */
static int finish_parent(struct nameidata *nd, struct vnode *dir, const char *comp, bool slash)
{
    int err = dir->v_type == VDIR ? VOP_ACCESS(dir, VEXEC, nd->cr) : -ENOTDIR;
    if (err) {
        VN_RELE(dir);
        return err;
    }
    nd->dvp = dir;
    strlcpy(nd->name, comp, sizeof nd->name);
    nd->trailing_slash = slash;
    return 0;
}

/* The walk ended on vp (held): the result, or with LOOKUP_PARENT a
 * directory named by the path itself. */
static int finish_at(struct nameidata *nd, struct vnode *vp, bool slash)
{
    if ((slash || (nd->flags & LOOKUP_PARENT)) && vp->v_type != VDIR) {
        VN_RELE(vp);
        return -ENOTDIR;
    }
    nd->trailing_slash = slash;
    if (nd->flags & LOOKUP_PARENT) {
        nd->dvp = vp;
        nd->name[0] = 0;
    } else {
        nd->vp = vp;
    }
    return 0;
}

/* A /proc link to an open file (VOP_FOLLOW) under openat2's limits:
 * -ELOOP with NO_MAGICLINKS, -EXDEV in a scoped walk or, with NO_XDEV,
 * to another file system. */
static int magic_link_allowed(const struct nameidata *nd, const struct vnode *target)
{
    if (nd->resolve & RESOLVE_NO_MAGICLINKS)
        return -ELOOP;
    if (nd->top)
        return -EXDEV;
    return check_xdev(nd, target);
}

int namei(struct nameidata *nd)
{
    char buf[PATH_MAX];
    size_t len = strnlen(nd->path, PATH_MAX);
    nd->vp = nd->dvp = NULL;
    nd->name[0] = 0;
    nd->trailing_slash = false;
    nd->links = 0;
    if (len == 0)
        return -ENOENT;
    if (len >= PATH_MAX)
        return -ENAMETOOLONG;
    memcpy(buf, nd->path, len + 1);

    struct vnode *dir;
    int err = start_walk(nd, buf, &dir);
    if (err)
        return err;
    char *p = buf;
    for (;;) {
        while (*p == '/')
            p++;
        if (*p == 0)                /* only slashes left: "/" itself */
            return finish_at(nd, dir, false);
        char *end = p;
        while (*end && *end != '/')
            end++;
        size_t n = (size_t)(end - p);
        if (n > NAME_MAX) {
            VN_RELE(dir);
            return -ENAMETOOLONG;
        }
        char comp[NAME_MAX + 1];
        memcpy(comp, p, n);
        comp[n] = 0;
        const char *q = end;
        while (*q == '/')
            q++;
        bool last = *q == 0;
        bool slash = last && *end == '/';

        if (last && (nd->flags & LOOKUP_PARENT) && !is_dot(comp) && !is_dotdot(comp)
            && (!slash || (nd->flags & LOOKUP_SLASHOK)))
            return finish_parent(nd, dir, comp, slash);

        struct vnode *vp;
        err = lookup_component(nd, &dir, comp, &vp);
        if (!err && (err = check_xdev(nd, vp)))
            VN_RELE(vp);
        if (err) {
            VN_RELE(dir);
            return err;
        }
        if (vp->v_type == VLNK && (!last || slash || (nd->flags & LOOKUP_FOLLOW))) {
            struct vnode *target = NULL;
            err = ++nd->links > MAXSYMLINKS || (nd->resolve & RESOLVE_NO_SYMLINKS) ? -ELOOP
                : VOP_FOLLOW(vp, &target, nd->cr);
            if (err != -ENOSYS) {       /* a link naming its target (VOP_FOLLOW) */
                VN_RELE(vp);
                if (!err && (err = magic_link_allowed(nd, target)))
                    VN_RELE(target);
                if (err) {
                    VN_RELE(dir);
                    return err;
                }
                vp = target;
            } else {
                nd->links--;            /* splice_symlink counts it */
                err = splice_symlink(nd, vp, buf, end);
                VN_RELE(vp);
                if (err) {
                    VN_RELE(dir);
                    return err;
                }
                p = buf;
                if (buf[0] == '/') {    /* an absolute link restarts at the root */
                    VN_RELE(dir);
                    if ((nd->resolve & RESOLVE_BENEATH))
                        return -EXDEV;
                    if (nd->top)        /* IN_ROOT: its root is the top */
                        VN_HOLD(dir = nd->top);
                    else if (!(dir = start_dir(buf, NULL)))
                        return -ENOENT;
                    if ((err = check_xdev(nd, dir))) {
                        VN_RELE(dir);
                        return err;
                    }
                }
                continue;
            }
        }
        VN_RELE(dir);
        if (last)
            return finish_at(nd, vp, slash);
        dir = vp;
        p = end;
    }
}

int lookupname(const char *path, struct vnode *cwd, bool follow, struct vnode **vpp,
               struct cred *cr)
{
    return lookupname_resolve(path, cwd, follow, 0, vpp, cr);
}

int lookupname_resolve(const char *path, struct vnode *cwd, bool follow, unsigned resolve,
                       struct vnode **vpp, struct cred *cr)
{
    struct nameidata nd = { .path = path, .cwd = cwd, .cr = cr, .resolve = resolve,
                            .flags = follow ? LOOKUP_FOLLOW : 0 };
    int err = namei(&nd);
    *vpp = err ? NULL : nd.vp;
    return err;
}

int lookup_parent(const char *path, struct vnode *cwd, struct vnode **dvpp, char *name,
                  struct cred *cr)
{
    struct nameidata nd = { .path = path, .cwd = cwd, .cr = cr,
                            .flags = LOOKUP_PARENT | LOOKUP_FOLLOW };
    int err = namei(&nd);
    *dvpp = err ? NULL : nd.dvp;
    if (!err)
        memcpy(name, nd.name, strlen(nd.name) + 1);
    return err;
}

enum last_kind path_last_kind(const char *path)
{
    size_t n = strnlen(path, PATH_MAX);
    while (n > 0 && path[n - 1] == '/')
        n--;
    if (n == 0)
        return path[0] == '/' ? LAST_ROOT : LAST_NORM;
    size_t start = n;
    while (start > 0 && path[start - 1] != '/')
        start--;
    size_t len = n - start;
    if (len == 1 && path[start] == '.')
        return LAST_DOT;
    if (len == 2 && path[start] == '.' && path[start + 1] == '.')
        return LAST_DOTDOT;
    return LAST_NORM;
}
