/*
 * tmpfs directories: entries, their hash, readdir, and rename.  Theory
 * and locks at the top of kern/tmpfs/tmpfs.c.
 *
 * A directory keeps its entries twice over, both under its TN_LOCKED: a
 * list in the order they were made, which readdir walks, and a hash table
 * of chains, which lookups search (it doubles when its entries outnumber
 * twice its chains, so a directory of many thousand files is searched in
 * a few steps).  "." and ".." have no entries: readdir makes them, and
 * lookup answers them from the node itself (tn_parent).
 *
 * readdir's positions: 0 is ".", 1 is "..", and each entry has a number
 * from 2 up, given in order as entries are made and never reused
 * (td_cookie).  A transfer resumes at the first entry whose number is not
 * below the offset, so entries removed meanwhile shift nothing, and an
 * entry made meanwhile is seen once, at the end.
 */
#include <kern/tmpfs/tmpfs.h>
#include <kern/vfs/dnlc.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>

#define HASH_FIRST  16      /* chains of a directory's first table */

/* FNV-1a over the name. */
static uint32_t name_hash(const char *name, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)name[i]) * 16777619u;
    return h;
}

struct tdirent *tdir_find(struct tmpnode *dp, const char *name, size_t len)
{
    if (!dp->tn_hash)
        return NULL;
    uint32_t h = name_hash(name, len);
    for (struct tdirent *de = dp->tn_hash[h & (dp->tn_hashsize - 1)]; de; de = de->td_hnext)
        if (de->td_hash == h && de->td_namelen == len && memcmp(de->td_name, name, len) == 0)
            return de;
    return NULL;
}

struct tdirent *tdir_new(const char *name, size_t len, struct tmpnode *tp)
{
    struct tdirent *de = kzalloc(sizeof *de + len + 1);
    if (!de)
        return NULL;
    memcpy(de->td_name, name, len);
    de->td_namelen = (uint16_t)len;
    de->td_hash = name_hash(name, len);
    de->td_node = tp;
    return de;
}

/* With dp TN_LOCKED: make the hash table twice as large (or the first). */
static int grow_hash(struct tmpnode *dp)
{
    uint32_t size = dp->tn_hashsize ? dp->tn_hashsize * 2 : HASH_FIRST;
    struct tdirent **tab = kzalloc(size * sizeof *tab);
    if (!tab)
        return -ENOMEM;
    for (struct tdirent *de = dp->tn_dirhead; de; de = de->td_next) {
        struct tdirent **chain = &tab[de->td_hash & (size - 1)];
        de->td_hnext = *chain;
        *chain = de;
    }
    kfree(dp->tn_hash);
    dp->tn_hash = tab;
    dp->tn_hashsize = size;
    return 0;
}

/* The directory changed: its size and its modification and change times. */
static void dir_changed(struct tmpnode *dp)
{
    dp->tn_size = (uint64_t)(dp->tn_nent + 2) * TMPFS_DIRENT_SIZE;
    dp->tn_mtime = dp->tn_ctime = tmpfs_now();
}

int tdir_enter(struct tmpnode *dp, struct tdirent *de)
{
    if (dp->tn_nent >= 2 * dp->tn_hashsize) {
        int err = grow_hash(dp);
        if (err && !dp->tn_hash)
            return err;             /* a larger table is only faster */
    }
    de->td_cookie = dp->tn_nextcookie++;
    de->td_next = NULL;
    de->td_prev = dp->tn_dirtail;
    if (dp->tn_dirtail)
        dp->tn_dirtail->td_next = de;
    else
        dp->tn_dirhead = de;
    dp->tn_dirtail = de;
    struct tdirent **chain = &dp->tn_hash[de->td_hash & (dp->tn_hashsize - 1)];
    de->td_hnext = *chain;
    *chain = de;
    dp->tn_nent++;
    dir_changed(dp);
    return 0;
}

void tdir_remove(struct tmpnode *dp, struct tdirent *de)
{
    struct tdirent **pp = &dp->tn_hash[de->td_hash & (dp->tn_hashsize - 1)];
    while (*pp != de)
        pp = &(*pp)->td_hnext;
    *pp = de->td_hnext;
    if (de->td_prev)
        de->td_prev->td_next = de->td_next;
    else
        dp->tn_dirhead = de->td_next;
    if (de->td_next)
        de->td_next->td_prev = de->td_prev;
    else
        dp->tn_dirtail = de->td_prev;
    dp->tn_nent--;
    dir_changed(dp);
    kfree(de);
}

void tdir_free_all(struct tmpnode *dp)
{
    struct tdirent *de = dp->tn_dirhead, *next;
    for (; de; de = next) {
        next = de->td_next;
        kfree(de);
    }
    dp->tn_dirhead = dp->tn_dirtail = NULL;
    dp->tn_nent = 0;
    kfree(dp->tn_hash);
    dp->tn_hash = NULL;
    dp->tn_hashsize = 0;
}

/* ---- readdir ---- */

static uint8_t dtype_of(const struct tmpnode *tp)
{
    switch (tp->tn_vnode.v_type) {
    case VREG:  return DT_REG;
    case VDIR:  return DT_DIR;
    case VLNK:  return DT_LNK;
    case VCHR:  return DT_CHR;
    case VBLK:  return DT_BLK;
    case VFIFO: return DT_FIFO;
    case VSOCK: return DT_SOCK;
    default:    return DT_UNKNOWN;
    }
}

int tmpfs_readdir(struct vnode *vp, struct uio *uio, struct cred *cr, bool *eofp)
{
    struct tmpnode *dp = VTOTN(vp);
    if (vp->v_type != VDIR)
        return -ENOTDIR;
    TN_LOCK(dp);
    if (dp->tn_nlink == 0) {
        TN_UNLOCK(dp);
        return -ENOENT;                     /* removed, as Linux's dead directory */
    }
    uint64_t pos = uio->uio_offset;
    int emitted = 0;
    bool full = false;
    if (pos == 0) {
        full = !vfs_put_dirent(uio, dp->tn_ino, 1, DT_DIR, ".", 1);
        pos = full ? 0 : 1;
        emitted += !full;
    }
    if (pos == 1 && !full) {
        full = !vfs_put_dirent(uio, dp->tn_parent->tn_ino, 2, DT_DIR, "..", 2);
        pos = full ? 1 : 2;
        emitted += !full;
    }
    struct tdirent *de = dp->tn_dirhead;
    while (de && de->td_cookie < pos)
        de = de->td_next;
    for (; de && !full; de = de->td_next) {
        full = !vfs_put_dirent(uio, de->td_node->tn_ino, (int64_t)de->td_cookie + 1,
                               dtype_of(de->td_node), de->td_name, de->td_namelen);
        if (!full) {
            pos = de->td_cookie + 1;
            emitted++;
        }
    }
    uio->uio_offset = full || de ? pos : dp->tn_nextcookie;
    *eofp = !full;
    TN_UNLOCK(dp);
    if (full && emitted == 0)
        return -EINVAL;             /* not even one record fits */
    return 0;
}

/* ---- rename ---- */

struct rename_args {
    struct tmpnode *sdp, *tdp, *sip, *tip;
    struct tdirent *se, *te, *ne;
    const char *sname, *tname;
    struct vnode *sdvp, *tdvp;
    struct cred *cr;
    bool isdir, moved;              /* a directory, to another parent */
};

/* Is directory anc dp itself or one of its ancestors?  (The rename lock
 * keeps every tn_parent still; dp is not removed, so neither is any
 * directory above it, and the walk ends at the root, its own parent.) */
static bool is_ancestor(struct tmpnode *anc, struct tmpnode *dp)
{
    for (struct tmpnode *d = dp; d; d = d->tn_parent) {
        if (d == anc)
            return true;
        if (d->tn_parent == d)
            break;
    }
    return false;
}

/* Is directory tp, which the caller has not locked unless it is one of
 * the two directories, empty? */
static bool dir_empty(struct rename_args *a, struct tmpnode *tp)
{
    if (tp == a->sdp || tp == a->tdp)
        return tp->tn_nent == 0;
    TN_LOCK(tp);
    bool empty = tp->tn_nent == 0;
    TN_UNLOCK(tp);
    return empty;
}

/* With both directories locked: the checks, in Linux's order where it
 * has one, before anything changes. */
static int rename_check(struct rename_args *a)
{
    int err = tmpnode_access(a->sdp, VWRITE | VEXEC, a->cr);
    if (!err && a->tdp != a->sdp)
        err = tmpnode_access(a->tdp, VWRITE | VEXEC, a->cr);
    if (err)
        return err;
    if (a->sdp->tn_nlink == 0 || a->tdp->tn_nlink == 0)
        return -ENOENT;                     /* removed meanwhile */
    a->se = tdir_find(a->sdp, a->sname, strlen(a->sname));
    if (!a->se)
        return -ENOENT;
    a->sip = a->se->td_node;
    a->isdir = TNTOV(a->sip)->v_type == VDIR;
    a->moved = a->isdir && a->sdp != a->tdp;
    if ((err = tmpnode_sticky(a->sdp, a->sip, a->cr)))
        return err;
    if (a->moved && is_ancestor(a->sip, a->tdp))
        return -EINVAL;                     /* into itself or below */
    a->te = tdir_find(a->tdp, a->tname, strlen(a->tname));
    a->tip = a->te ? a->te->td_node : NULL;
    if (a->tip == a->sip)
        return 0;                           /* two names of one file: nothing to do */
    if (a->tip) {
        bool tdir = TNTOV(a->tip)->v_type == VDIR;
        if (tdir && !a->isdir)
            return -EISDIR;
        if (!tdir && a->isdir)
            return -ENOTDIR;
        if (TNTOV(a->tip)->v_vfsmountedhere || (TNTOV(a->tip)->v_flag & VROOT))
            return -EBUSY;
        if ((err = tmpnode_sticky(a->tdp, a->tip, a->cr)))
            return err;
        if (tdir && !dir_empty(a, a->tip))
            return -ENOTEMPTY;
    }
    if (a->moved && (err = tmpnode_access(a->sip, VWRITE, a->cr)))
        return err;                         /* its ".." changes */
    a->ne = tdir_new(a->tname, strlen(a->tname), a->sip);
    return a->ne ? 0 : -ENOMEM;
}

/* The target's old node loses its name (a directory its "." and its ".."
 * in tdp too).  True when its link hold is to be dropped.  (tip is no
 * directory the caller holds: a target that is the source's directory is
 * not empty, and rename_check refused it.) */
static bool drop_target(struct rename_args *a)
{
    struct tmpnode *tip = a->tip;
    TN_LOCK(tip);
    if (TNTOV(tip)->v_type == VDIR) {
        tip->tn_nlink = 1;                  /* its "." goes; the name below */
        tip->tn_parent = NULL;              /* no ".." once removed (tmpfs_lookup) */
        a->tdp->tn_nlink--;                 /* its ".." */
    }
    bool last = tmpnode_unlinked(tip);
    TN_UNLOCK(tip);
    if (TNTOV(tip)->v_type == VDIR)
        dnlc_purge_vp(TNTOV(tip));
    return last;
}

/* With both directories locked: check, then enter the new name (the only
 * step that can fail, so it comes first), drop the replaced target, take
 * the old name out, and move a directory's "..". */
static int rename_locked(struct rename_args *a, bool *dropped)
{
    int err = rename_check(a);
    if (err || a->tip == a->sip)
        return err;
    err = tdir_enter(a->tdp, a->ne);
    if (err) {
        kfree(a->ne);
        return err;
    }
    if (a->te) {
        *dropped = drop_target(a);
        tdir_remove(a->tdp, a->te);
    }
    dnlc_remove(a->tdvp, a->tname);
    tdir_remove(a->sdp, a->se);
    dnlc_remove(a->sdvp, a->sname);
    TN_LOCK(a->sip);
    if (a->moved) {
        a->sdp->tn_nlink--;
        a->tdp->tn_nlink++;
        a->sip->tn_parent = a->tdp;
    }
    a->sip->tn_ctime = tmpfs_now();
    TN_UNLOCK(a->sip);
    if (a->moved)
        dnlc_purge_vp(TNTOV(a->sip));       /* its ".." */
    return 0;
}

int tmpfs_rename(struct vnode *sdvp, const char *sname, struct vnode *tdvp, const char *tname,
                 struct cred *cr)
{
    if (tdvp->v_op != &tmpfs_vnodeops || tdvp->v_vfsp != sdvp->v_vfsp)
        return -EXDEV;
    if (sdvp->v_type != VDIR || tdvp->v_type != VDIR)
        return -ENOTDIR;
    int err = vn_new_name_check(sname, NAME_MAX);
    if (!err)
        err = vn_new_name_check(tname, NAME_MAX);
    if (err)
        return err;
    struct rename_args a = {
        .sdp = VTOTN(sdvp), .tdp = VTOTN(tdvp), .sname = sname, .tname = tname,
        .sdvp = sdvp, .tdvp = tdvp, .cr = cr,
    };
    struct tmount *tm = a.sdp->tn_mount;
    bool dropped = false;
    rlock_acquire(&tm->tm_rename);
    TN_LOCK(a.sdp);
    if (a.tdp != a.sdp)
        TN_LOCK(a.tdp);
    err = rename_locked(&a, &dropped);
    if (a.tdp != a.sdp)
        TN_UNLOCK(a.tdp);
    TN_UNLOCK(a.sdp);
    rlock_release(&tm->tm_rename);
    if (dropped)
        VN_RELE(TNTOV(a.tip));              /* its link hold: the last frees it */
    return err;
}
