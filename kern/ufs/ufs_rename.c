/*
 * UFS rename, in the steps S5's takes (kern/s5/s5_rename.c has the
 * argument): under the file system's rename lock, one directory locked at
 * a time --
 *
 *   1. find the source entry and its inode (sdp locked);
 *   2. a directory moving to another parent must not move into its own
 *      subtree: walk ".." up from the target directory to the root;
 *   3. enter the new name, or point the existing one at the source (tdp
 *      locked; the source's link count goes up first);
 *   4. a moved directory's ".." names its new parent;
 *   5. remove the old name, if it still names the source (sdp locked).
 *
 * Link counts keep fsck.ufs's rule at each step: a directory has 2 plus
 * its subdirectories.  Theory in kern/ufs/ufs_vfsops.c.
 */
#include <kern/ufs/ufs_inode.h>
#include <kern/vfs/dnlc.h>
#include <kern/vm/pcache.h>
#include <kern/vfs/cred.h>
#include <kern/lib/string.h>

/* Is directory anc the directory dino or one of its ancestors? */
static int check_ancestor(struct ufs_fs *fs, uint32_t anc, uint32_t dino)
{
    uint64_t ninodes = (uint64_t)fs->fs_sb.fs_ncg * (uint32_t)fs->fs_sb.fs_ipg;
    uint32_t cur = dino;
    for (uint64_t steps = 0; steps < ninodes; steps++) {
        if (cur == anc)
            return -EINVAL;
        if (cur == UFS_ROOTINO)
            return 0;
        struct ufs_inode *ip;
        uint32_t up;
        int err = ufs_iget(fs, cur, &ip);
        if (err)
            return err == -EDEADLK ? -EUCLEAN : err;
        err = ip->i_vnode.v_type == VDIR ? ufs_dirsearch(ip, "..", &up) : -ENOTDIR;
        ufs_iput(ip);
        if (err)
            return err == -ENOENT ? -EUCLEAN : err;
        if (up == cur)
            break;
        cur = up;
    }
    ufs_corrupt(fs, "the \"..\" chain from directory %u does not reach the root", dino);
    return -EUCLEAN;
}

static int sticky_ok(struct ufs_inode *dp, struct ufs_inode *ip, struct cred *cr)
{
    return vn_sticky_check(dp->i_mode, dp->i_uid, ip->i_uid, cr);
}

struct rename_args {
    struct ufs_inode *sdp, *tdp, *sip;
    const char *sname, *tname;
    struct vnode *sdvp, *tdvp;
    struct cred *cr;
    uint32_t sino;
    uint8_t stype;
    bool isdir, moved;          /* a directory, to another parent */
};

/* Step 1: the source entry and its inode (referenced, unlocked). */
static int rename_source(struct rename_args *a)
{
    uint32_t ino;
    struct ufs_inode *sip = NULL;
    ILOCK(a->sdp);
    int err = ufs_iaccess(a->sdp, VWRITE | VEXEC, a->cr);
    if (!err)
        err = ufs_dirsearch(a->sdp, a->sname, &ino);
    if (!err)
        err = ufs_iget_entry(a->sdp, ino, &sip);
    if (!err) {
        err = sticky_ok(a->sdp, sip, a->cr);
        IUNLOCK(sip);
        if (err)
            VN_RELE(UFS_ITOV(sip));
    }
    IUNLOCK(a->sdp);
    if (err)
        return err;
    a->sip = sip;
    a->sino = ino;
    a->stype = ufs_mode_to_dtype(sip->i_mode);
    a->isdir = UFS_ITOV(sip)->v_type == VDIR;
    a->moved = a->isdir && a->sdp != a->tdp;
    return 0;
}

/* May target tip (ILOCKED) be replaced by the source? */
static int replace_ok(struct rename_args *a, struct ufs_inode *tip)
{
    bool tdir = UFS_ITOV(tip)->v_type == VDIR;
    if (tdir && !a->isdir)
        return -EISDIR;
    if (!tdir && a->isdir)
        return -ENOTDIR;
    if (tdir && UFS_ITOV(tip)->v_vfsmountedhere)
        return -EBUSY;
    int err = sticky_ok(a->tdp, tip, a->cr);
    if (err || !tdir)
        return err;
    err = ufs_dirempty(tip);
    return err == 1 ? 0 : err == 0 ? -ENOTEMPTY : err;
}

/* sip's link count up by one (or back down), for the new name. */
static int count_link(struct ufs_inode *sip, int delta)
{
    int err = 0;
    ILOCK(sip);
    if (delta > 0 && sip->i_nlink <= 0)
        err = -ENOENT;                      /* unlinked meanwhile */
    else if (delta > 0 && sip->i_nlink >= UFS_LINK_MAX)
        err = -EMLINK;
    else {
        sip->i_nlink = (int16_t)(sip->i_nlink + delta);
        ufs_itimes(sip, UFS_CHG);
        err = ufs_iupdat(sip, ufs_syncwrites());
    }
    IUNLOCK(sip);
    return err;
}

/* The replaced target loses its name; a directory also its "." and its
 * ".." link to tdp.  (tdp and tip ILOCKED) */
static void drop_target(struct rename_args *a, struct ufs_inode *tip)
{
    if (UFS_ITOV(tip)->v_type == VDIR) {
        tip->i_nlink = 0;
        a->tdp->i_nlink--;
        dnlc_purge_vp(UFS_ITOV(tip));
    } else if (tip->i_nlink > 0) {
        tip->i_nlink--;
        if (tip->i_nlink == 0)
            pcache_discard_dirty(UFS_ITOV(tip));    /* its pages need no write-back */
    }
    ufs_itimes(tip, UFS_CHG);
    ufs_iupdat(tip, ufs_syncwrites());
}

/* What the target name holds now: 0 (none) or an inode (tdp ILOCKED). */
static int target_lookup(struct rename_args *a, uint32_t *inop)
{
    int err = ufs_iaccess(a->tdp, VWRITE | VEXEC, a->cr);
    if (!err && a->tdp->i_nlink <= 0)
        err = -ENOENT;
    if (!err)
        err = ufs_dirsearch(a->tdp, a->tname, inop);
    if (err == -ENOENT && a->tdp->i_nlink > 0) {
        *inop = 0;
        err = 0;
    }
    return err;
}

/* Step 3: the new name.  *same when it already names the source. */
static int rename_target(struct rename_args *a, bool *same)
{
    struct ufs_inode *tdp = a->tdp, *tip = NULL;
    uint32_t tino = 0;
    *same = false;
    ILOCK(tdp);
    int err = target_lookup(a, &tino);
    if (!err && tino == a->sino) {
        IUNLOCK(tdp);
        *same = true;
        return 0;
    }
    if (!err && tino)
        err = ufs_iget_entry(tdp, tino, &tip);
    if (!err && tip)
        err = replace_ok(a, tip);
    if (!err && !tip && a->moved && tdp->i_nlink >= UFS_LINK_MAX)
        err = -EMLINK;
    if (!err)
        err = count_link(a->sip, +1);
    if (!err) {
        err = tip ? ufs_dirrewrite(tdp, a->tname, a->sino, a->stype)
                  : ufs_direnter(tdp, a->tname, a->sino, a->stype);
        if (err)
            count_link(a->sip, -1);
    }
    if (!err) {
        dnlc_remove(a->tdvp, a->tname);
        if (tip)
            drop_target(a, tip);
        if (a->moved)
            tdp->i_nlink++;                 /* the source's ".." */
        ufs_itimes(tdp, UFS_UPD | UFS_CHG);
        ufs_iupdat(tdp, ufs_syncwrites());
    }
    if (tip)
        IUNLOCK(tip);
    IUNLOCK(tdp);
    if (tip)
        VN_RELE(UFS_ITOV(tip));
    return err;
}

/* Step 4: a moved directory's ".." names its new parent. */
static int rename_dotdot(struct rename_args *a)
{
    ILOCK(a->sip);
    int err = ufs_dirrewrite(a->sip, "..", a->tdp->i_number, UFS_DT_DIR);
    IUNLOCK(a->sip);
    dnlc_purge_vp(UFS_ITOV(a->sip));
    return err;
}

/* Step 5: the old name goes, if it still names the source. */
static int rename_remove_source(struct rename_args *a)
{
    uint32_t ino;
    ILOCK(a->sdp);
    int err = ufs_dirsearch(a->sdp, a->sname, &ino);
    if (err == -ENOENT || (!err && ino != a->sino)) {
        IUNLOCK(a->sdp);
        return 0;
    }
    if (!err)
        err = ufs_dirremove(a->sdp, a->sname);
    if (!err) {
        dnlc_remove(a->sdvp, a->sname);
        if (a->moved)
            a->sdp->i_nlink--;              /* the source's ".." went to tdp */
        ufs_itimes(a->sdp, UFS_UPD | UFS_CHG);
        ufs_iupdat(a->sdp, ufs_syncwrites());
        err = count_link(a->sip, -1);
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
        if (!err) {
            ILOCK(a->sip);
            err = ufs_iaccess(a->sip, VWRITE, a->cr);      /* its ".." changes */
            IUNLOCK(a->sip);
        }
    }
    bool same = false;
    if (!err)
        err = rename_target(a, &same);
    if (!err && !same && a->moved)
        err = rename_dotdot(a);
    if (!err && !same)
        err = rename_remove_source(a);
    VN_RELE(UFS_ITOV(a->sip));
    return err;
}

int ufs_rename(struct vnode *sdvp, const char *sname, struct vnode *tdvp, const char *tname,
               struct cred *cr)
{
    if (tdvp->v_op != &ufs_vnodeops || tdvp->v_vfsp != sdvp->v_vfsp)
        return -EXDEV;
    if (sdvp->v_type != VDIR || tdvp->v_type != VDIR)
        return -ENOTDIR;
    int err = vn_new_name_check(sname, UFS_MAXNAMLEN);
    if (!err)
        err = vn_new_name_check(tname, UFS_MAXNAMLEN);
    if (err)
        return err;
    struct rename_args a = {
        .sdp = UFS_VTOI(sdvp), .tdp = UFS_VTOI(tdvp), .sname = sname, .tname = tname,
        .sdvp = sdvp, .tdvp = tdvp, .cr = cr,
    };
    struct ufs_fs *fs = a.sdp->i_fs;
    if (fs->fs_rdonly)
        return -EROFS;
    rlock_acquire(&fs->fs_rename);
    err = rename_locked(&a);
    rlock_release(&fs->fs_rename);
    return err;
}
