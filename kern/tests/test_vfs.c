/*
 * ktests for the VFS layer: lookup, mounts, symbolic links, permissions,
 * reference counts and VOP_INACTIVE, the path operations, devfs and
 * procfs.  Lookups from every CPU at once, lookups racing mounts and the
 * global namespace are in kern/tests/test_vfs_mp.c.
 *
 * They need no disk and no root file system: each test builds its own
 * namespace on "memfs", a tiny in-memory file system for tests
 * (kern/tests/memfs.c).  The top memfs ("A") is not mounted
 * anywhere: its root serves as the working directory for relative paths.
 * Other memfs instances and devfs are mounted on A's directories through
 * vfs_mount_at, so they are on the real mount list and exercise mount-point
 * crossing, ".." across mounts and unmount.
 *
 * Every memfs VOP notes whether it was called with the vnode lock held
 * (memfs_unlocked_vops must stay 0), and the teardown unmounts A, which
 * fails if any reference leaked.
 */
#include <kern/tests/ktest.h>
#include <kern/tests/memfs.h>
#include <kern/tests/vfs_ns.h>
#include <drivers/tty/tty.h>
#include <kern/vfs/vfs.h>
#include <drivers/block/bio.h>
#include <kern/vfs/cred.h>
#include <kern/vm/kmem.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/lock/sleep.h>
#include <kern/sched/thread.h>
#include <drivers/platform/timer.h>

/* ======================= a test namespace ======================= */

/* The namespace A: its layout and struct ns are in kern/tests/vfs_ns.h. */

int mkfile(struct ns *ns, const char *path, uint32_t mode, struct cred *cr)
{
    struct vnode *vp;
    int err = vn_open(path, ns->a, O_CREAT | O_EXCL | O_WRONLY, mode, &vp, cr);
    return err ? err : vn_close(vp, O_WRONLY, cr);
}

static int ns_setup(struct ns *ns)
{
    memset(ns, 0, sizeof *ns);
    struct vfs *vfsp = kzalloc(sizeof *vfsp);
    if (!vfsp)
        return -ENOMEM;
    vfsp->vfs_op = &memfs_vfsops;
    vfsp->vfs_sw = &memfs_sw;
    vfsp->vfs_fsid = 0x7e57;
    int err = memfs_mount(vfsp, kcred);
    if (err) {
        kfree(vfsp);
        return err;
    }
    ns->avfs = vfsp;
    memfs_root(vfsp, &ns->a);
    static const char *const dirs[] = { "d1", "d1/d2", "d1/d2/d3", "secret", "open", "pub",
                                        "mnt", "dev" };
    static const uint32_t modes[] = { 0755, 0755, 0755, 0700, 0755, 01777, 0755, 0755 };
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0] && !err; i++)
        err = vn_mkdir(dirs[i], ns->a, modes[i], kcred);
    if (!err)
        err = mkfile(ns, "d1/d2/d3/f", 0644, kcred);
    if (!err)
        err = mkfile(ns, "secret/f", 0644, kcred);
    if (!err)
        err = mkfile(ns, "open/f", 0644, kcred);
    if (!err)
        err = mkfile(ns, "file", 0644, kcred);
    if (!err)
        err = vn_symlink("d1/d2", "lnk", ns->a, kcred);
    return err;
}

/* Unmount what the tests may have left on A's mount points, then A; this
 * fails (-EBUSY) if any reference leaked. */
static int ns_teardown(struct ns *ns)
{
    static const char *const mps[] = { "d1/mp", "mnt", "dev" };
    for (size_t i = 0; i < sizeof mps / sizeof mps[0]; i++)
        while (vfs_unmount_at(mps[i], ns->a, kcred) == 0)
            ;
    if (!ns->avfs)
        return 0;
    VN_RELE(ns->a);
    int err = memfs_unmount(ns->avfs, kcred);
    if (err == 0)
        kfree(ns->avfs);
    ns->avfs = NULL;
    return err;
}

/* Run body on a fresh namespace and tear it down whatever happened. */
int with_ns(int (*body)(struct ns *))
{
    struct ns ns;
    int before = __atomic_load_n(&memfs_unlocked_vops, __ATOMIC_RELAXED);
    int err = ns_setup(&ns);
    if (err) {
        ktest_fail("namespace set-up failed: errno %d", -err);
        ns_teardown(&ns);
        return 1;
    }
    int r = body(&ns);
    err = ns_teardown(&ns);
    KT_ASSERT(r == 0);
    KT_ASSERT_EQ(err, 0);                       /* no leaked reference */
    KT_ASSERT_EQ(__atomic_load_n(&memfs_unlocked_vops, __ATOMIC_RELAXED), before);
    return 0;
}

struct vnode *lookup_ok(struct ns *ns, const char *path)
{
    struct vnode *vp = NULL;
    return lookupname(path, ns->a, true, &vp, kcred) == 0 ? vp : NULL;
}

static int lookup_err(struct ns *ns, const char *path, bool follow, struct cred *cr)
{
    struct vnode *vp = NULL;
    int err = lookupname(path, ns->a, follow, &vp, cr);
    if (err == 0)
        VN_RELE(vp);
    return err;
}

/* Does path lead to the same vnode as want (held by the caller)? */
static bool same(struct ns *ns, const char *path, struct vnode *want)
{
    struct vnode *vp = lookup_ok(ns, path);
    if (vp)
        VN_RELE(vp);
    return vp && vp == want;
}

int32_t count_of(struct vnode *vp)
{
    return __atomic_load_n(&vp->v_count, __ATOMIC_ACQUIRE);
}

/* ======================= lookup ======================= */

static int body_lookup(struct ns *ns)
{
    struct vnode *f = lookup_ok(ns, "d1/d2/d3/f");
    KT_ASSERT(f && f->v_type == VREG);
    struct vnode *d2 = lookup_ok(ns, "d1/d2");
    KT_ASSERT(d2 && d2->v_type == VDIR);
    int32_t fc = count_of(f), d2c = count_of(d2), ac = count_of(ns->a);

    KT_ASSERT(same(ns, "d1//d2/./d3/f", f));
    KT_ASSERT(same(ns, "d1/d2/d3/../d3/f", f));
    KT_ASSERT(same(ns, "d1/d2/d3/..", d2));
    KT_ASSERT(same(ns, "d1/d2/", d2));
    KT_ASSERT(same(ns, "d1/d2/d3/../../d2", d2));
    KT_ASSERT(same(ns, "..", ns->a));               /* A's root is its own parent */
    KT_ASSERT(same(ns, "d1/../..", ns->a));
    KT_ASSERT(same(ns, ".", ns->a));
    /* A relative path from another directory. */
    struct vnode *vp = NULL;
    KT_ASSERT_EQ(lookupname("d3/f", d2, true, &vp, kcred), 0);
    KT_ASSERT(vp == f);
    VN_RELE(vp);

    KT_ASSERT_EQ(lookup_err(ns, "d1/nothere", true, kcred), -ENOENT);
    KT_ASSERT_EQ(lookup_err(ns, "d1/nothere/f", true, kcred), -ENOENT);
    KT_ASSERT_EQ(lookup_err(ns, "", true, kcred), -ENOENT);
    KT_ASSERT_EQ(lookup_err(ns, "file/x", true, kcred), -ENOTDIR);
    KT_ASSERT_EQ(lookup_err(ns, "file/", true, kcred), -ENOTDIR);
    KT_ASSERT_EQ(lookup_err(ns, "d1/d2/d3/f/..", true, kcred), -ENOTDIR);
    /* Longer than memfs takes (14), and longer than any file system (255). */
    KT_ASSERT_EQ(lookup_err(ns, "d1/abcdefghijklmnopq", true, kcred), -ENAMETOOLONG);
    static char longname[NAME_MAX + 8];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    KT_ASSERT_EQ(lookup_err(ns, longname, true, kcred), -ENAMETOOLONG);
    /* A path of PATH_MAX bytes or more. */
    static char longpath[PATH_MAX + 8];
    for (size_t i = 0; i < sizeof longpath - 1; i++)
        longpath[i] = i % 2 ? '/' : '.';
    longpath[sizeof longpath - 1] = 0;
    KT_ASSERT_EQ(lookup_err(ns, longpath, true, kcred), -ENAMETOOLONG);
    longpath[PATH_MAX - 8] = 0;                     /* shorter: "./././..." is fine */
    KT_ASSERT(same(ns, longpath, ns->a));

    /* lookup_parent */
    char name[NAME_MAX + 1];
    struct vnode *dvp;
    KT_ASSERT_EQ(lookup_parent("d1/d2/newname", ns->a, &dvp, name, kcred), 0);
    KT_ASSERT(dvp == d2 && strcmp(name, "newname") == 0);
    VN_RELE(dvp);
    KT_ASSERT_EQ(lookup_parent("d1/d2/d3/..", ns->a, &dvp, name, kcred), 0);
    KT_ASSERT(dvp == d2 && name[0] == 0);
    VN_RELE(dvp);
    KT_ASSERT_EQ(lookup_parent("d1/nothere/x", ns->a, &dvp, name, kcred), -ENOENT);

    /* Every count is back where it was. */
    KT_ASSERT_EQ(count_of(f), fc);
    KT_ASSERT_EQ(count_of(d2), d2c);
    KT_ASSERT_EQ(count_of(ns->a), ac);
    VN_RELE(f);
    VN_RELE(d2);
    return 0;
}

KTEST(vfs_lookup) { return with_ns(body_lookup); }

/* ======================= mounts ======================= */

static int body_mount(struct ns *ns)
{
    struct vnode *mnt = lookup_ok(ns, "mnt");       /* the covered directory */
    KT_ASSERT(mnt && !mnt->v_vfsmountedhere);
    KT_ASSERT_EQ(vfs_mount_at(&memfs_sw, NULL, "mnt", ns->a, 0, kcred), 0);
    KT_ASSERT(mnt->v_vfsmountedhere != NULL);
    struct vnode *broot = lookup_ok(ns, "mnt");
    KT_ASSERT(broot && broot != mnt && broot->v_vfsp == mnt->v_vfsmountedhere);
    KT_ASSERT(broot == broot->v_vfsp->vfs_rootvp && broot->v_vfsp->vfs_vnodecovered == mnt);

    KT_ASSERT_EQ(vn_mkdir("mnt/x", ns->a, 0755, kcred), 0);
    KT_ASSERT_EQ(mkfile(ns, "mnt/x/y", 0644, kcred), 0);
    int syncs = __atomic_load_n(&memfs_syncs, __ATOMIC_RELAXED);
    vfs_sync_all();                                 /* reaches the mounted memfs */
    KT_ASSERT(__atomic_load_n(&memfs_syncs, __ATOMIC_RELAXED) > syncs);
    struct vnode *x = lookup_ok(ns, "mnt/x");
    KT_ASSERT(x && x->v_vfsp == broot->v_vfsp);
    KT_ASSERT(same(ns, "mnt/x/..", broot));
    /* ".." at the mounted root leaves through the covered directory. */
    KT_ASSERT(same(ns, "mnt/..", ns->a));
    KT_ASSERT(same(ns, "mnt/x/../..", ns->a));
    KT_ASSERT(same(ns, "mnt/x/../../d1/..", ns->a));
    KT_ASSERT(same(ns, "mnt/../mnt/x", x));
    struct vnode *vp;
    KT_ASSERT_EQ(lookupname("..", broot, true, &vp, kcred), 0);
    KT_ASSERT(vp == ns->a);
    VN_RELE(vp);
    KT_ASSERT_EQ(lookupname("../../mnt/x", x, true, &vp, kcred), 0);
    KT_ASSERT(vp == x);
    VN_RELE(vp);
    /* The covered directory's own contents are hidden. */
    KT_ASSERT_EQ(lookup_err(ns, "mnt/d1", true, kcred), -ENOENT);

    /* Mounting again on it, or on a file, or as a user, is refused. */
    KT_ASSERT_EQ(vfs_mount_at(&memfs_sw, NULL, "mnt", ns->a, 0, kcred), -EBUSY);
    KT_ASSERT_EQ(vfs_mount_at(&memfs_sw, NULL, "file", ns->a, 0, kcred), -ENOTDIR);
    KT_ASSERT_EQ(vfs_mount_at(NULL, NULL, "d1", ns->a, 0, kcred), -ENODEV);
    struct cred *user = cred_alloc(1000, 1000);
    KT_ASSERT(user);
    KT_ASSERT_EQ(vfs_mount_at(&memfs_sw, NULL, "d1", ns->a, 0, user), -EPERM);
    KT_ASSERT_EQ(vfs_unmount_at("mnt", ns->a, user), -EPERM);
    cred_rele(user);
    KT_ASSERT_EQ(vfs_unmount_at("d1", ns->a, kcred), -EINVAL);   /* not a mount point */

    /* Busy while a vnode inside is held, or the root is (cwd-like). */
    KT_ASSERT_EQ(vfs_unmount_at("mnt", ns->a, kcred), -EBUSY);
    VN_RELE(x);
    KT_ASSERT_EQ(vfs_unmount_at("mnt", ns->a, kcred), -EBUSY);
    VN_RELE(broot);
    /* rmdir of a mount point */
    KT_ASSERT_EQ(vn_rmdir("mnt", ns->a, kcred), -EBUSY);
    KT_ASSERT_EQ(vfs_unmount_at("mnt", ns->a, kcred), 0);
    KT_ASSERT(mnt->v_vfsmountedhere == NULL);
    KT_ASSERT(same(ns, "mnt", mnt));
    KT_ASSERT_EQ(lookup_err(ns, "mnt/x", true, kcred), -ENOENT);
    VN_RELE(mnt);
    return 0;
}

KTEST(vfs_mount) { return with_ns(body_mount); }

/* ======================= symbolic links ======================= */

static int body_symlink(struct ns *ns)
{
    struct vnode *d2 = lookup_ok(ns, "d1/d2"), *f = lookup_ok(ns, "d1/d2/d3/f");
    KT_ASSERT(d2 && f);
    KT_ASSERT(same(ns, "lnk", d2));
    KT_ASSERT(same(ns, "lnk/d3/f", f));
    KT_ASSERT(same(ns, "lnk/", d2));
    struct vnode *d1 = lookup_ok(ns, "d1");
    bool up_ok = same(ns, "lnk/..", d1);           /* ".." of the target, not of lnk */
    VN_RELE(d1);
    KT_ASSERT(up_ok);
    struct vnode *vp;
    KT_ASSERT_EQ(lookupname("lnk", ns->a, false, &vp, kcred), 0);   /* not followed */
    KT_ASSERT(vp->v_type == VLNK);
    VN_RELE(vp);
    KT_ASSERT_EQ(lookupname("lnk/", ns->a, false, &vp, kcred), 0);  /* '/' follows */
    KT_ASSERT(vp == d2);
    VN_RELE(vp);
    /* A link in a link, relative to the link's own directory. */
    KT_ASSERT_EQ(vn_symlink("d3/f", "d1/d2/tof", ns->a, kcred), 0);
    KT_ASSERT(same(ns, "lnk/tof", f));
    KT_ASSERT_EQ(vn_symlink("../../..", "d1/d2/d3/top", ns->a, kcred), 0);
    KT_ASSERT(same(ns, "d1/d2/d3/top/lnk/tof", f));
    /* Dangling, through a file, and loops. */
    KT_ASSERT_EQ(vn_symlink("nothere", "dangle", ns->a, kcred), 0);
    KT_ASSERT_EQ(lookup_err(ns, "dangle", true, kcred), -ENOENT);
    KT_ASSERT_EQ(lookup_err(ns, "dangle", false, kcred), 0);
    KT_ASSERT_EQ(vn_symlink("file", "tofile", ns->a, kcred), 0);
    KT_ASSERT_EQ(lookup_err(ns, "tofile/x", true, kcred), -ENOTDIR);
    KT_ASSERT_EQ(vn_symlink("self", "self", ns->a, kcred), 0);
    KT_ASSERT_EQ(lookup_err(ns, "self", true, kcred), -ELOOP);
    KT_ASSERT_EQ(lookup_err(ns, "self/x", false, kcred), -ELOOP);
    /* A chain of n links: 8 are followed, the ninth is -ELOOP. */
    KT_ASSERT_EQ(vn_symlink("d1", "c0", ns->a, kcred), 0);
    char from[8], to[8];
    for (int i = 1; i <= 9; i++) {
        snprintf(from, sizeof from, "c%d", i);
        snprintf(to, sizeof to, "c%d", i - 1);
        KT_ASSERT_EQ(vn_symlink(to, from, ns->a, kcred), 0);
    }
    KT_ASSERT(same(ns, "c7/d2", d2));                   /* 8 links */
    KT_ASSERT_EQ(lookup_err(ns, "c8/d2", true, kcred), -ELOOP);   /* 9 */
    KT_ASSERT_EQ(lookup_err(ns, "c7", true, kcred), 0);
    KT_ASSERT_EQ(lookup_err(ns, "c8", true, kcred), -ELOOP);
    /* Through a mount point, and back out of it with "..". */
    KT_ASSERT_EQ(vfs_mount_at(&memfs_sw, NULL, "mnt", ns->a, 0, kcred), 0);
    KT_ASSERT_EQ(vn_symlink("../d1/d2", "mnt/up", ns->a, kcred), 0);
    KT_ASSERT(same(ns, "mnt/up/d3/f", f));
    KT_ASSERT_EQ(vn_symlink("mnt", "tomnt", ns->a, kcred), 0);
    KT_ASSERT(same(ns, "tomnt/up/d3/f", f));
    KT_ASSERT_EQ(vfs_unmount_at("tomnt", ns->a, kcred), 0);
    VN_RELE(d2);
    VN_RELE(f);
    return 0;
}

KTEST(vfs_symlink) { return with_ns(body_symlink); }

/* ======================= permissions ======================= */

static int body_perm(struct ns *ns)
{
    struct cred *user = cred_alloc(1000, 1000), *other = cred_alloc(1001, 1001);
    KT_ASSERT(user && other);
    int r = 1;
    struct vnode *vp;
    /* Search permission on every directory in the path. */
    if (lookup_err(ns, "secret/f", true, user) != -EACCES)
        goto out;
    if (lookup_err(ns, "secret/../secret/f", true, user) != -EACCES)
        goto out;
    if (lookup_err(ns, "secret", true, user) != 0)      /* A's root is 0755 */
        goto out;
    if (lookup_err(ns, "open/f", true, user) != 0)
        goto out;
    if (lookup_err(ns, "secret/f", true, kcred) != 0)
        goto out;
    /* Read, write, create. */
    if (vn_open("open/f", ns->a, O_WRONLY, 0, &vp, user) != -EACCES)
        goto out;
    if (vn_open("open/f", ns->a, O_RDONLY | O_TRUNC, 0, &vp, user) != -EACCES)
        goto out;
    if (vn_open("open/f", ns->a, O_RDONLY, 0, &vp, user) != 0)
        goto out;
    vn_close(vp, O_RDONLY, user);
    if (mkfile(ns, "open/g", 0644, user) != -EACCES)
        goto out;
    if (vn_remove("open/f", ns->a, user) != -EACCES)
        goto out;
    if (vn_mkdir("open/dd", ns->a, 0755, user) != -EACCES)
        goto out;
    if (mkfile(ns, "pub/mine", 0600, user) != 0)
        goto out;
    struct vattr va;
    if (vn_stat("pub/mine", ns->a, true, &va, user) != 0 || va.va_uid != 1000
        || (va.va_mode & 07777) != 0600)
        goto out;
    if (vn_open("pub/mine", ns->a, O_RDWR, 0, &vp, other) != -EACCES)
        goto out;
    /* Sticky: another user may not remove or rename it; the owner may. */
    if (vn_remove("pub/mine", ns->a, other) != -EPERM)
        goto out;
    if (vn_rename("pub/mine", "pub/theirs", ns->a, other) != -EPERM)
        goto out;
    if (vn_rename("pub/mine", "pub/mine2", ns->a, user) != 0)
        goto out;
    if (vn_remove("pub/mine2", ns->a, user) != 0)
        goto out;
    r = 0;
out:
    if (r)
        ktest_fail("a permission check gave the wrong answer (see body_perm)");
    cred_rele(user);
    cred_rele(other);
    return r;
}

KTEST(vfs_permissions) { return with_ns(body_perm); }

/* ======================= references and VOP_INACTIVE ======================= */

static int body_inactive(struct ns *ns)
{
    struct vnode *vp = lookup_ok(ns, "d1/d2/d3/f");
    KT_ASSERT(vp);
    struct mnode *n = VTOM(vp);
    KT_ASSERT_EQ(count_of(vp), 1);
    int calls = n->inactive_calls;
    VN_HOLD(vp);
    VN_RELE(vp);
    KT_ASSERT_EQ(n->inactive_calls, calls);         /* not the last reference */
    struct vnode *again = lookup_ok(ns, "d1/d2/d3/f");
    KT_ASSERT(again == vp);
    KT_ASSERT_EQ(count_of(vp), 2);
    VN_RELE(again);
    KT_ASSERT_EQ(n->inactive_calls, calls);
    VN_RELE(vp);                                    /* the last: inactive once */
    KT_ASSERT_EQ(n->inactive_calls, calls + 1);
    KT_ASSERT_EQ(count_of(vp), -1);
    /* Reactivated by a lookup, inactive again after. */
    vp = lookup_ok(ns, "d1/d2/d3/f");
    KT_ASSERT_EQ(count_of(vp), 1);
    VN_RELE(vp);
    KT_ASSERT_EQ(n->inactive_calls, calls + 2);
    /* A lookup-and-release of a path leaves every directory inactive. */
    struct vnode *d1 = lookup_ok(ns, "d1");
    int32_t d1c = count_of(d1);
    KT_ASSERT_EQ(lookup_err(ns, "d1/d2/d3/f", true, kcred), 0);
    KT_ASSERT_EQ(count_of(d1), d1c);
    VN_RELE(d1);
    KT_ASSERT_EQ(count_of(d1), -1);
    return 0;
}

KTEST(vfs_inactive) { return with_ns(body_inactive); }

/* ======================= path operations ======================= */

static int body_vnops(struct ns *ns)
{
    struct vnode *vp;
    size_t done;
    char buf[32];
    /* open: O_EXCL, O_DIRECTORY, directories, O_TRUNC, O_NOFOLLOW */
    KT_ASSERT_EQ(vn_open("file", ns->a, O_CREAT | O_EXCL | O_RDWR, 0644, &vp, kcred), -EEXIST);
    KT_ASSERT_EQ(vn_open("file", ns->a, O_DIRECTORY, 0, &vp, kcred), -ENOTDIR);
    KT_ASSERT_EQ(vn_open("d1", ns->a, O_WRONLY, 0, &vp, kcred), -EISDIR);
    KT_ASSERT_EQ(vn_open("d1", ns->a, O_CREAT | O_RDONLY, 0644, &vp, kcred), -EISDIR);
    KT_ASSERT_EQ(vn_open("lnk", ns->a, O_NOFOLLOW, 0, &vp, kcred), -ELOOP);
    KT_ASSERT_EQ(vn_open("nothere", ns->a, O_RDONLY, 0, &vp, kcred), -ENOENT);
    KT_ASSERT_EQ(vn_open("d1", ns->a, O_DIRECTORY | O_RDONLY, 0, &vp, kcred), 0);
    vn_close(vp, 0, kcred);
    KT_ASSERT_EQ(vn_open("file", ns->a, O_RDWR, 0, &vp, kcred), 0);
    KT_ASSERT_EQ(vn_rdwr(vp, true, "hello", 5, 0, 0, &done, kcred), 0);
    KT_ASSERT_EQ(done, 5);
    vn_close(vp, O_RDWR, kcred);
    KT_ASSERT_EQ(vn_open("file", ns->a, O_RDONLY, 0, &vp, kcred), 0);
    KT_ASSERT_EQ(vn_rdwr(vp, false, buf, sizeof buf, 0, 0, &done, kcred), 0);
    KT_ASSERT(done == 5 && memcmp(buf, "hello", 5) == 0);
    vn_close(vp, 0, kcred);
    KT_ASSERT_EQ(vn_open("file", ns->a, O_WRONLY | O_TRUNC, 0, &vp, kcred), 0);
    vn_close(vp, 0, kcred);
    struct vattr va;
    KT_ASSERT_EQ(vn_stat("file", ns->a, true, &va, kcred), 0);
    KT_ASSERT_EQ(va.va_size, 0);
    KT_ASSERT_EQ(vn_open("d1/new", ns->a, O_CREAT | O_WRONLY, 0640, &vp, kcred), 0);
    vn_close(vp, 0, kcred);
    KT_ASSERT_EQ(vn_stat("d1/new", ns->a, true, &va, kcred), 0);
    KT_ASSERT(va.va_type == VREG && (va.va_mode & 07777) == 0640);
    /* O_CREAT through a symbolic link opens its target. */
    KT_ASSERT_EQ(vn_symlink("d1/new", "tonew", ns->a, kcred), 0);
    KT_ASSERT_EQ(vn_open("tonew", ns->a, O_CREAT | O_RDONLY, 0644, &vp, kcred), 0);
    KT_ASSERT(same(ns, "d1/new", vp));
    vn_close(vp, 0, kcred);
    /* ... and creates the target of a dangling one, relative to the link. */
    KT_ASSERT_EQ(vn_symlink("made", "d1/dangle", ns->a, kcred), 0);
    KT_ASSERT_EQ(vn_open("d1/dangle", ns->a, O_CREAT | O_WRONLY, 0600, &vp, kcred), 0);
    KT_ASSERT(same(ns, "d1/made", vp));
    vn_close(vp, 0, kcred);
    KT_ASSERT_EQ(vn_open("d1/dangle", ns->a, O_CREAT | O_EXCL | O_WRONLY, 0600, &vp, kcred),
                 -EEXIST);
    KT_ASSERT_EQ(vn_symlink("loop", "loop", ns->a, kcred), 0);
    KT_ASSERT_EQ(vn_open("loop", ns->a, O_CREAT | O_WRONLY, 0600, &vp, kcred), -ELOOP);

    /* mkdir and rmdir */
    KT_ASSERT_EQ(vn_mkdir("d1", ns->a, 0755, kcred), -EEXIST);
    KT_ASSERT_EQ(vn_mkdir("nothere/x", ns->a, 0755, kcred), -ENOENT);
    KT_ASSERT_EQ(vn_mkdir("e/", ns->a, 0755, kcred), 0);
    KT_ASSERT_EQ(vn_mkdir("e/sub", ns->a, 0755, kcred), 0);
    KT_ASSERT_EQ(vn_rmdir("e", ns->a, kcred), -ENOTEMPTY);
    KT_ASSERT_EQ(vn_rmdir("e/sub/.", ns->a, kcred), -EINVAL);
    KT_ASSERT_EQ(vn_rmdir("e/sub/..", ns->a, kcred), -ENOTEMPTY);
    KT_ASSERT_EQ(vn_rmdir("file", ns->a, kcred), -ENOTDIR);
    KT_ASSERT_EQ(vn_rmdir("e/sub/", ns->a, kcred), 0);
    KT_ASSERT_EQ(vn_rmdir("e", ns->a, kcred), 0);
    KT_ASSERT_EQ(lookup_err(ns, "e", true, kcred), -ENOENT);

    /* remove */
    KT_ASSERT_EQ(vn_remove("d1", ns->a, kcred), -EISDIR);
    KT_ASSERT_EQ(vn_remove("d1/.", ns->a, kcred), -EISDIR);
    KT_ASSERT_EQ(vn_remove("nothere", ns->a, kcred), -ENOENT);
    KT_ASSERT_EQ(vn_remove("file/", ns->a, kcred), -ENOTDIR);
    KT_ASSERT_EQ(vn_remove("tonew", ns->a, kcred), 0);        /* the link, not its target */
    KT_ASSERT_EQ(lookup_err(ns, "d1/new", true, kcred), 0);

    /* link */
    KT_ASSERT_EQ(vn_link("d1/new", "d1/new2", ns->a, kcred), 0);
    struct vnode *n1 = lookup_ok(ns, "d1/new");
    KT_ASSERT(n1 && same(ns, "d1/new2", n1));
    KT_ASSERT_EQ(vn_link("d1/new", "file", ns->a, kcred), -EEXIST);
    KT_ASSERT_EQ(vn_link("d1", "d1link", ns->a, kcred), -EPERM);
    KT_ASSERT_EQ(vn_remove("d1/new", ns->a, kcred), 0);
    KT_ASSERT(same(ns, "d1/new2", n1));
    VN_RELE(n1);

    /* rename */
    KT_ASSERT_EQ(vn_rename("d1/new2", "d1/d2/moved", ns->a, kcred), 0);
    KT_ASSERT_EQ(lookup_err(ns, "d1/new2", true, kcred), -ENOENT);
    KT_ASSERT_EQ(lookup_err(ns, "d1/d2/moved", true, kcred), 0);
    KT_ASSERT_EQ(vn_rename("d1/d2/moved", "file", ns->a, kcred), 0);   /* replaces */
    KT_ASSERT_EQ(vn_rename("d1", "d1/d2/d3/inside", ns->a, kcred), -EINVAL);
    KT_ASSERT_EQ(vn_rename("d1/d2", "d1/d2/x", ns->a, kcred), -EINVAL);
    KT_ASSERT_EQ(vn_rename("d1/.", "x", ns->a, kcred), -EBUSY);
    KT_ASSERT_EQ(vn_rename("file", "d1/..", ns->a, kcred), -EBUSY);
    KT_ASSERT_EQ(vn_rename("file", "d1", ns->a, kcred), -EISDIR);
    KT_ASSERT_EQ(vn_rename("d1/d2", "file", ns->a, kcred), -ENOTDIR);
    KT_ASSERT_EQ(vn_rename("file", "file", ns->a, kcred), 0);
    KT_ASSERT_EQ(vn_rename("d1/d2/d3", "open/d3", ns->a, kcred), 0);   /* a directory moves */
    KT_ASSERT_EQ(lookup_err(ns, "open/d3/f", true, kcred), 0);
    struct vnode *open = lookup_ok(ns, "open");
    KT_ASSERT(open && same(ns, "open/d3/..", open));
    VN_RELE(open);

    /* Across file systems */
    KT_ASSERT_EQ(vfs_mount_at(&memfs_sw, NULL, "mnt", ns->a, 0, kcred), 0);
    KT_ASSERT_EQ(vn_link("file", "mnt/file", ns->a, kcred), -EXDEV);
    KT_ASSERT_EQ(vn_rename("file", "mnt/file", ns->a, kcred), -EXDEV);
    KT_ASSERT_EQ(vn_rename("mnt", "mnt2", ns->a, kcred), -EBUSY);
    KT_ASSERT_EQ(vn_remove("mnt", ns->a, kcred), -EISDIR);
    KT_ASSERT_EQ(vfs_unmount_at("mnt", ns->a, kcred), 0);

    /* stat and symlink errors */
    KT_ASSERT_EQ(vn_stat("lnk", ns->a, false, &va, kcred), 0);
    KT_ASSERT((va.va_mode & S_IFMT) == S_IFLNK);
    KT_ASSERT_EQ(vn_stat("lnk", ns->a, true, &va, kcred), 0);
    KT_ASSERT((va.va_mode & S_IFMT) == S_IFDIR);
    KT_ASSERT_EQ(vn_symlink("x", "lnk", ns->a, kcred), -EEXIST);
    KT_ASSERT_EQ(vn_symlink("", "empty", ns->a, kcred), -ENOENT);
    return 0;
}

KTEST(vfs_vnops) { return with_ns(body_vnops); }

/* ======================= devfs ======================= */

static int body_devfs(struct ns *ns)
{
    KT_ASSERT_EQ(vfs_mount_at(&devfs_vfssw, NULL, "dev", ns->a, 0, kcred), 0);
    struct vnode *vp;
    size_t done;
    static char buf[300];

    KT_ASSERT_EQ(vn_open("dev/null", ns->a, O_RDWR | O_TRUNC | O_CREAT, 0644, &vp, kcred), 0);
    KT_ASSERT(vp->v_type == VCHR);
    KT_ASSERT_EQ(vn_rdwr(vp, true, buf, 100, 0, 0, &done, kcred), 0);
    KT_ASSERT_EQ(done, 100);
    KT_ASSERT_EQ(vn_rdwr(vp, false, buf, 100, 0, 0, &done, kcred), 0);
    KT_ASSERT_EQ(done, 0);
    /* Busy while a device is open. */
    KT_ASSERT_EQ(vfs_unmount_at("dev", ns->a, kcred), -EBUSY);
    vn_close(vp, O_RDWR, kcred);

    KT_ASSERT_EQ(vn_open("dev/zero", ns->a, O_RDWR, 0, &vp, kcred), 0);
    memset(buf, 0xAA, sizeof buf);
    KT_ASSERT_EQ(vn_rdwr(vp, false, buf, 200, 7, 0, &done, kcred), 0);
    KT_ASSERT_EQ(done, 200);
    bool zeros = true;
    for (int i = 0; i < 200; i++)
        zeros &= buf[i] == 0;
    KT_ASSERT(zeros && (uint8_t)buf[200] == 0xAA);
    KT_ASSERT_EQ(vn_rdwr(vp, true, buf, 10, 0, 0, &done, kcred), 0);
    KT_ASSERT_EQ(done, 10);
    vn_close(vp, O_RDWR, kcred);

    KT_ASSERT_EQ(vn_open("dev/console", ns->a, O_RDWR, 0, &vp, kcred), 0);
    static const char msg[] = "vfs_devfs: this line was written through /dev/console\n";
    KT_ASSERT_EQ(vn_rdwr(vp, true, (void *)msg, sizeof msg - 1, 0, 0, &done, kcred), 0);
    KT_ASSERT_EQ(done, sizeof msg - 1);
    /* A read returns one line from the terminal (drivers/tty/tty.c); fed here as
     * the UART would.  Without console input it is end of file. */
    size_t want = tty_readable(&console_tty) ? 0 : 6;
    for (const char *c = "typed\r"; *c; c++)
        console_input(*c);
    KT_ASSERT_EQ(vn_rdwr(vp, false, buf, 10, 0, 0, &done, kcred), 0);
    KT_ASSERT_EQ(done, want);
    KT_ASSERT(want == 0 || memcmp(buf, "typed\n", 6) == 0);
    vn_close(vp, O_RDWR, kcred);

    /* Attributes with Linux's device numbers. */
    struct vattr va;
    KT_ASSERT_EQ(vn_stat("dev/null", ns->a, true, &va, kcred), 0);
    KT_ASSERT_EQ(va.va_mode, S_IFCHR | 0666);
    KT_ASSERT(vn_major(va.va_rdev) == 1 && vn_minor(va.va_rdev) == 3);
    KT_ASSERT_EQ(vn_stat("dev/zero", ns->a, true, &va, kcred), 0);
    KT_ASSERT(vn_major(va.va_rdev) == 1 && vn_minor(va.va_rdev) == 5);
    KT_ASSERT_EQ(vn_stat("dev/console", ns->a, true, &va, kcred), 0);
    KT_ASSERT(vn_major(va.va_rdev) == 5 && vn_minor(va.va_rdev) == 1);
    KT_ASSERT_EQ(vn_stat("dev", ns->a, true, &va, kcred), 0);
    KT_ASSERT((va.va_mode & S_IFMT) == S_IFDIR);
    KT_ASSERT(same(ns, "dev/..", ns->a));
    KT_ASSERT_EQ(lookup_err(ns, "dev/nosuchdev", true, kcred), -ENOENT);
    KT_ASSERT_EQ(vn_stat("dev/tty", ns->a, true, &va, kcred), 0);
    KT_ASSERT(vn_major(va.va_rdev) == 5 && vn_minor(va.va_rdev) == 0);
    KT_ASSERT_EQ(vn_stat("dev/urandom", ns->a, true, &va, kcred), 0);
    KT_ASSERT(vn_major(va.va_rdev) == 1 && vn_minor(va.va_rdev) == 9);
    KT_ASSERT_EQ(vn_open("dev/full", ns->a, O_RDWR, 0, &vp, kcred), 0);
    KT_ASSERT_EQ(vn_rdwr(vp, true, buf, 10, 0, 0, &done, kcred), -ENOSPC);
    vn_close(vp, O_RDWR, kcred);
    /* every disk, by its kernel name, as a block device of its size */
    for (int i = 0; i < blk_count(); i++) {
        struct blkdev *d = blk_get(i);
        char name[32];
        snprintf(name, sizeof name, "dev/%s", d->name);
        KT_ASSERT_EQ(vn_stat(name, ns->a, true, &va, kcred), 0);
        KT_ASSERT((va.va_mode & S_IFMT) == S_IFBLK);
        KT_ASSERT_EQ(va.va_size, d->nblocks * d->bsize);
    }
    KT_ASSERT_EQ(mkfile(ns, "dev/newfile", 0644, kcred), -EPERM);
    /* A user may use null but not create files in devfs. */
    struct cred *user = cred_alloc(1000, 1000);
    KT_ASSERT(user);
    int uerr = vn_open("dev/null", ns->a, O_WRONLY, 0, &vp, user);
    if (uerr == 0)
        vn_close(vp, O_WRONLY, user);
    int cerr = mkfile(ns, "dev/x", 0644, user);
    cred_rele(user);
    KT_ASSERT_EQ(uerr, 0);
    KT_ASSERT_EQ(cerr, -EACCES);

    /* readdir: ".", "..", the character devices and the disks, in small pieces. */
    KT_ASSERT_EQ(vn_open("dev", ns->a, O_RDONLY | O_DIRECTORY, 0, &vp, kcred), 0);
    int seen = 0, found = 0;
    struct uio uio = { .uio_offset = 0 };
    bool eof = false;
    for (int rounds = 0; !eof && rounds < 40; rounds++) {
        uio.uio_base = buf;
        uio.uio_resid = 48;                 /* two records at most */
        KT_ASSERT_EQ(VOP_READDIR(vp, &uio, kcred, &eof), 0);
        for (char *p = buf; p < (char *)uio.uio_base;) {
            struct dirent64 *d = (struct dirent64 *)p;
            seen++;
            if (strcmp(d->d_name, "null") == 0 && d->d_type == DT_CHR)
                found++;
            if (strcmp(d->d_name, "console") == 0 || strcmp(d->d_name, "zero") == 0)
                found++;
            p += d->d_reclen;
        }
    }
    vn_close(vp, 0, kcred);
    KT_ASSERT(eof);
    KT_ASSERT_EQ(seen, 2 + 9 + 2 + 4 + blk_count());   /* devices, pts and shm, links, disks */
    KT_ASSERT_EQ(found, 3);
    KT_ASSERT_EQ(vfs_unmount_at("dev", ns->a, kcred), 0);
    return 0;
}

KTEST(vfs_devfs) { return with_ns(body_devfs); }

/* ======================= procfs ======================= */

/* procfs on a directory: its system files read as text, "self" has no
 * meaning for a kernel thread, a held node keeps it mounted. */
static int body_procfs(struct ns *ns)
{
    KT_ASSERT_EQ(vfs_mount_at(vfs_findtype("proc"), NULL, "mnt", ns->a, 0, kcred), 0);
    static char buf[512];
    size_t done = 0;
    struct vnode *vp;
    KT_ASSERT_EQ(vn_open("mnt/filesystems", ns->a, O_RDONLY, 0, &vp, kcred), 0);
    KT_ASSERT_EQ(vn_rdwr(vp, false, buf, sizeof buf - 1, 0, 0, &done, kcred), 0);
    buf[done] = 0;
    bool listed = false;
    for (size_t i = 0; i + 11 <= done; i++)
        listed |= strncmp(buf + i, "nodev\tproc\n", 11) == 0;
    /* an offset past the text reads nothing */
    size_t past = 1;
    KT_ASSERT_EQ(vn_rdwr(vp, false, buf, 10, done + 5, 0, &past, kcred), 0);
    /* busy while a node is held */
    KT_ASSERT_EQ(vfs_unmount_at("mnt", ns->a, kcred), -EBUSY);
    vn_close(vp, O_RDONLY, kcred);
    KT_ASSERT(listed);
    KT_ASSERT_EQ(past, 0);
    KT_ASSERT_EQ(lookup_err(ns, "mnt/self", true, kcred), -ENOENT);
    KT_ASSERT_EQ(lookup_err(ns, "mnt/99999999", true, kcred), -ENOENT);
    KT_ASSERT_EQ(lookup_err(ns, "mnt/sysvipc/shm", true, kcred), 0);
    KT_ASSERT_EQ(mkfile(ns, "mnt/newfile", 0644, kcred), -EACCES);
    struct kstatfs sb;
    KT_ASSERT_EQ(vn_open("mnt", ns->a, O_RDONLY | O_DIRECTORY, 0, &vp, kcred), 0);
    KT_ASSERT_EQ(VFS_STATFS(vp->v_vfsp, &sb), 0);
    vn_close(vp, O_RDONLY, kcred);
    KT_ASSERT_EQ(sb.f_type, 0x9fa0);
    KT_ASSERT_EQ(vfs_unmount_at("mnt", ns->a, kcred), 0);
    return 0;
}

KTEST(vfs_procfs) { return with_ns(body_procfs); }
