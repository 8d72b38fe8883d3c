/*
 * S5 rename: the one directory operation that changes the shape of the
 * tree.  Theory in kern/s5/s5_vfsops.c.
 *
 * All of it runs under the file system's rename lock (fs_rename, which
 * rmdir takes too), so no directory moves or disappears meanwhile; the
 * work is then done one directory at a time, each step under that
 * directory's ILOCK alone, so rename never holds two directory locks in an
 * order that lookups (parent, then child) could contradict:
 *
 *   1. find the source entry and its inode (sdp locked);
 *   2. a directory moving to another parent must not move into its own
 *      subtree: walk ".." up from the target directory to the root;
 *   3. enter the new name, or replace what it named (tdp locked; the
 *      source's link count goes up first, so a crash leaves it too high,
 *      not too low);
 *   4. a moved directory's ".." names its new parent (the source locked);
 *   5. remove the old name, if it still names the source (sdp locked).
 * Link counts follow fsck.s5's rule at each step: a directory has 2 plus
 * its subdirectories.
 */
#include <kern/s5/s5_inode.h>
#include <kern/vm/pcache.h>
#include <kern/vfs/dnlc.h>

/*
 * Is directory inode anc the directory dino or one of its ancestors?
 * Walks ".." from dino to the root, one directory locked at a time (the
 * rename lock keeps directories from moving meanwhile).
 */
static int check_ancestor(struct s5_fs *fs, uint32_t anc, uint32_t dino)
{
    uint32_t cur = dino;
    for (uint32_t steps = 0; steps < S5_MAXINODES; steps++) {
        if (cur == anc)
            return -EINVAL;
        if (cur == S5_ROOTINO)
            return 0;
        struct s5_inode *ip;
        struct s5_dirslot ds;
        int err = s5_iget(fs, cur, &ip);
        if (err)
            return err == -EDEADLK ? -EUCLEAN : err;
        err = ip->i_vnode.v_type == VDIR ? s5_dirsearch(ip, "..", &ds) : -ENOTDIR;
        s5_iput(ip);
        if (err)
            return err == -ENOENT ? -EUCLEAN : err;
        if (ds.ino == cur)
            break;
        cur = ds.ino;
    }
    s5_corrupt(fs, "the \"..\" chain from directory %u does not reach the root", dino);
    return -EUCLEAN;
}

struct rename_args {
    struct s5_inode *sdp, *tdp, *sip;
    const char *sname, *tname;
    struct vnode *sdvp, *tdvp;
    struct cred *cr;
    uint32_t sino;
    bool isdir, moved;          /* a directory, to another parent */
};

/* Step 1: the source entry and its inode (referenced, unlocked). */
static int rename_source(struct rename_args *a)
{
    struct s5_dirslot ds;
    struct s5_inode *sip;
    int err = s5_lock_entry(a->sdp, a->sname, a->cr, &ds, &sip);
    if (!err) {
        err = s5_sticky_check(a->sdp, sip, a->cr);
        IUNLOCK(sip);
        if (err)
            VN_RELE(ITOV(sip));
    }
    IUNLOCK(a->sdp);
    if (err)
        return err;
    a->sip = sip;
    a->sino = ds.ino;
    a->isdir = ITOV(sip)->v_type == VDIR;
    a->moved = a->isdir && a->sdp != a->tdp;
    return 0;
}

/* May target tip (ILOCKED) be replaced by the source? */
static int rename_replace_ok(struct rename_args *a, struct s5_inode *tip)
{
    bool tdir = ITOV(tip)->v_type == VDIR;
    if (tdir && !a->isdir)
        return -EISDIR;
    if (!tdir && a->isdir)
        return -ENOTDIR;
    if (tdir && ITOV(tip)->v_vfsmountedhere)
        return -EBUSY;
    int err = s5_sticky_check(a->tdp, tip, a->cr);
    if (err || !tdir)
        return err;
    err = s5_dirempty(tip);
    return err == 1 ? 0 : err == 0 ? -ENOTEMPTY : err;
}

/* sip's link count up by one (or back down), for the new name. */
static int rename_count_link(struct s5_inode *sip, int delta)
{
    int err = 0;
    ILOCK(sip);
    if (delta > 0 && sip->i_nlink == 0)
        err = -ENOENT;                      /* unlinked meanwhile */
    else if (delta > 0 && sip->i_nlink >= S5_MAXLINK)
        err = -EMLINK;
    else {
        sip->i_nlink = (uint16_t)(sip->i_nlink + delta);
        s5_itimes(sip, S5_CHG);
        err = s5_iupdat(sip, s5_syncwrites());
    }
    IUNLOCK(sip);
    return err;
}

/* The replaced target loses its name; a directory also its "." and its
 * ".." link to tdp.  (tdp and tip ILOCKED) */
static void rename_drop_target(struct rename_args *a, struct s5_inode *tip)
{
    if (ITOV(tip)->v_type == VDIR) {
        tip->i_nlink = 0;
        a->tdp->i_nlink--;
        dnlc_purge_vp(ITOV(tip));
    } else if (tip->i_nlink > 0) {
        tip->i_nlink--;
        if (tip->i_nlink == 0)
            pcache_discard_dirty(ITOV(tip));    /* its pages need no write-back */
    }
    s5_itimes(tip, S5_CHG);
    s5_iupdat(tip, s5_syncwrites());
}

/* Step 2: the new name, entered or replacing an existing one.  *same is
 * set when the target already names the source (nothing to do). */
static int rename_target(struct rename_args *a, bool *same)
{
    struct s5_inode *tdp = a->tdp, *tip = NULL;
    struct s5_dirslot ds;
    *same = false;
    ILOCK(tdp);
    int err = s5_iaccess(tdp, VWRITE | VEXEC, a->cr);
    if (!err && tdp->i_nlink == 0)
        err = -ENOENT;
    if (!err) {
        err = s5_dirsearch(tdp, a->tname, &ds);
        if (err == -ENOENT) {
            err = 0;
            ds.ino = 0;
        }
    }
    if (!err && ds.ino == a->sino) {
        IUNLOCK(tdp);
        *same = true;
        return 0;
    }
    if (!err && ds.ino)
        err = s5_iget_entry(tdp, ds.ino, &tip);
    if (!err && tip)
        err = rename_replace_ok(a, tip);
    if (!err && !tip && a->moved && tdp->i_nlink >= S5_MAXLINK)
        err = -EMLINK;
    if (!err)
        err = rename_count_link(a->sip, +1);
    if (!err) {
        err = tip ? s5_dirrewrite(tdp, ds.off, a->sino)
                  : s5_direnter(tdp, a->tname, a->sino, &ds);
        if (err)
            rename_count_link(a->sip, -1);
    }
    if (!err) {
        dnlc_remove(a->tdvp, a->tname);
        if (tip)
            rename_drop_target(a, tip);
        if (a->moved)
            tdp->i_nlink++;                 /* the source's ".." */
        s5_itimes(tdp, S5_UPD | S5_CHG);
        s5_iupdat(tdp, s5_syncwrites());
    }
    if (tip)
        IUNLOCK(tip);
    IUNLOCK(tdp);
    if (tip)
        VN_RELE(ITOV(tip));
    return err;
}

/* Step 3: a moved directory's ".." names its new parent. */
static int rename_dotdot(struct rename_args *a)
{
    struct s5_dirslot ds;
    ILOCK(a->sip);
    int err = s5_dirsearch(a->sip, "..", &ds);
    if (!err)
        err = s5_dirrewrite(a->sip, ds.off, a->tdp->i_number);
    IUNLOCK(a->sip);
    dnlc_purge_vp(ITOV(a->sip));
    return err;
}

/* Step 4: the old name goes, if it still names the source (an unlink of
 * a file may have removed it meanwhile; directories cannot go, since
 * rmdir waits for the rename lock). */
static int rename_remove_source(struct rename_args *a)
{
    struct s5_dirslot ds;
    ILOCK(a->sdp);
    int err = s5_dirsearch(a->sdp, a->sname, &ds);
    if (err == -ENOENT || (!err && ds.ino != a->sino)) {
        IUNLOCK(a->sdp);
        return 0;
    }
    if (!err)
        err = s5_dirrewrite(a->sdp, ds.off, 0);
    if (!err) {
        dnlc_remove(a->sdvp, a->sname);
        if (a->moved) {
            a->sdp->i_nlink--;              /* the source's ".." went to tdp */
            s5_itimes(a->sdp, S5_CHG);
            s5_iupdat(a->sdp, s5_syncwrites());
        }
        err = rename_count_link(a->sip, -1);
    }
    IUNLOCK(a->sdp);
    return err;
}

static int rename_locked(struct rename_args *a)
{
    int err = rename_source(a);
    if (err)
        return err;
    if (a->moved) {
        err = check_ancestor(a->sdp->i_fs, a->sino, a->tdp->i_number);
        if (!err)
            err = s5_access(ITOV(a->sip), VWRITE, a->cr);   /* its ".." changes */
    }
    bool same = false;
    if (!err)
        err = rename_target(a, &same);
    if (!err && !same && a->moved)
        err = rename_dotdot(a);
    if (!err && !same)
        err = rename_remove_source(a);
    VN_RELE(ITOV(a->sip));
    return err;
}

int s5_rename(struct vnode *sdvp, const char *sname, struct vnode *tdvp,
                     const char *tname, struct cred *cr)
{
    if (tdvp->v_op != &s5_vnodeops || tdvp->v_vfsp != sdvp->v_vfsp)
        return -EXDEV;
    if (sdvp->v_type != VDIR || tdvp->v_type != VDIR)
        return -ENOTDIR;
    int err = s5_check_new_name(sname);
    if (!err)
        err = s5_check_new_name(tname);
    if (err)
        return err;
    struct rename_args a = {
        .sdp = VTOI(sdvp), .tdp = VTOI(tdvp), .sname = sname, .tname = tname,
        .sdvp = sdvp, .tdvp = tdvp, .cr = cr,
    };
    struct s5_fs *fs = a.sdp->i_fs;
    if (fs->fs_rdonly)
        return -EROFS;
    rlock_acquire(&fs->fs_rename);
    err = rename_locked(&a);
    rlock_release(&fs->fs_rename);
    return err;
}
