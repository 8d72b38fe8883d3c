/*
 * tmpfs: the memory file system of SunOS 4 and SVR4 (Snyder, "tmpfs: A
 * Virtual Memory File System", 1990; Solaris keeps it in
 * uts/common/fs/tmpfs/), on Tempest's page cache.  Mount options, nodes,
 * reservations and the vfsops are here; the vnode operations in
 * tmpfs_vnops.c, directories and rename in tmpfs_dir.c; the structures and
 * the lock key in tmpfs.h.
 *
 * Theory.  A tmpfs file has no blocks anywhere: its data is the pages the
 * page cache holds under its name (kern/vm/pcache.c), the same pages that
 * read(2) and write(2) copy through segmap windows and that mappings map,
 * shared or private, exactly as for S5 and UFS.  So tmpfs supplies the
 * page operations (vnode.h's VOP_GETPAGE, VOP_PUTPAGE, VOP_WRALLOC) and
 * the page cache does the rest.  getpage is asked only for a page the
 * cache does not hold, which for tmpfs is a hole: it gives zeros.
 * putpage is never asked: a tmpfs vnode carries VMEMONLY, for which the
 * page cache writes nothing back, so a page once written (write(2)
 * marks it dirty; a store through a mapping reaches the page's dirty flag
 * when the mapping is harvested, unmapped or synced) stays dirty, and the
 * reclaim, which frees only clean pages, leaves it.  That is Snyder's
 * "anonymous memory" without a swap device: Tempest has none, so, like
 * the other anonymous memory here (a process's heap, System V shared
 * memory), a tmpfs page comes back only when its file gives it up.  Pages
 * that were never written (a hole read, a page a failed write made past
 * the end) are clean, go back under memory pressure like any file's, and
 * read as zeros again.
 *
 * Space.  A regular file reserves one page of the mount's size= for each
 * page data can land in (tn_ext, kept as extents: kern/tmpfs/tmpfs_resv.c):
 * VOP_WRALLOC reserves the pages a write covers, VOP_BACKPAGE the page a
 * shared mapping maps (a store through it can then never need space it
 * has not got), and a truncation gives back the pages past the new end.
 * A hole reserves nothing, so a sparse file costs what was written and a
 * truncation up never fails, as on Linux (Python's test_io writes a byte
 * at 2 GiB in /tmp).  A write that would pass size= stops at the last
 * page it could reserve (a short write, then ENOSPC, as on a full disk);
 * a shared mapping's fault on a page the mount cannot back gets SIGBUS,
 * as Linux's does.  So the memory a mount can pin is its size.  (SVR4's
 * tmpfs reserved a file's whole size, tmp_resv; Tempest did too until a
 * sparse 2 GiB file in a 256 MiB /tmp failed with ENOSPC where Linux
 * succeeds.)  Nodes count
 * against nr_inodes= (ENOSPC); directory entries and link texts are
 * kernel heap, bounded by the nodes.
 *
 * Lifetime.  Each node holds one reference on its own vnode while it has
 * a name (tn_linkhold), so a named file's vnode never goes inactive, and
 * the page cache, which drops a file's pages at its last release, keeps
 * them (and an unlinked file still open keeps its pages, dirty, until
 * its last close).  The remove, rmdir or rename that takes the last name away drops
 * that hold (after letting its locks go); the last reference after it,
 * the remover's or the last close's, calls tmpfs_inactive, which gives
 * back the node's pages (the page cache has already freed them),
 * reservation and memory.  A node without a name is found by nobody (no
 * entry names it, and the DNLC entry went with the name), so only one
 * inactivation can happen and the -1 protocol of the disk file systems'
 * inode cache is not needed.  Unmount refuses (EBUSY) while any node has
 * a reference besides its link hold (the page cache takes no dirty hold
 * on a VMEMONLY file); otherwise it drops every link hold, and each node
 * frees itself.
 *
 * Locks (SVR4 MP's model, Peacock et al., as S5 applies it):
 *   - The vnode lock, which the VOP macros take around each operation.
 *   - TN_LOCKED (class "tmpfs_node"), the node's resource lock, taken by
 *     TN_LOCK after the vnode lock, like S5's ILOCKED: it keeps a node's
 *     attributes and a directory's entries for one operation even when
 *     the operation sleeps (a second node's lock, the heap), which would
 *     release the vnode lock.  A directory is locked before a node in it
 *     (parent, then child); ".." is found with the directory's own lock
 *     alone (tn_parent), never by locking the parent.
 *   - tm_rename (class "tmpfs_rename"), a resource lock per mount, held
 *     by rename and rmdir around their whole work, so the shape of the
 *     tree stays put while rename checks that a directory does not move
 *     below itself and while it holds two directories' TN_LOCKED (the
 *     source's, then the target's): every other operation holds at most one
 *     directory's, so the order cannot be contradicted.
 *   - tm_lock (class "tmpfs_mount"), a spin lock over the mount's counts
 *     (pages reserved, nodes) and its list of nodes: a leaf, taken for a
 *     few instructions, from VOP_INACTIVE too, which may run under other
 *     spin locks.
 * Order: the VFS's vfs_rename and vfs_list, then tm_rename, then vnode
 * locks with TN_LOCKED (directories before the nodes they name; the page
 * cache's fill lock comes before both, as for every file system), then
 * the DNLC's and the page cache's spin locks, and tm_lock innermost.
 * Times are seconds (struct vattr's), from the wall clock.
 */
#include <kern/tmpfs/tmpfs.h>
#include <kern/vfs/cred.h>
#include <kern/vfs/dnlc.h>
#include <kern/vm/pcache.h>
#include <kern/vm/page.h>
#include <kern/vm/kmem.h>
#include <kern/arch/numa.h>
#include <kern/lib/string.h>
#include <kern/lib/kprintf.h>
#include <drivers/platform/rtc.h>

LOCK_CLASS(tmpfs_node_class, "tmpfs_node", LK_RESOURCE);
LOCK_CLASS(tmpfs_rename_class, "tmpfs_rename", LK_RESOURCE);
LOCK_CLASS(tmpfs_mount_class, "tmpfs_mount", LK_SPIN);

static uint64_t reserved_total;     /* [a] pages reserved over every mount */

int64_t tmpfs_now(void)
{
    return (int64_t)(realtime_ns() / 1000000000ull);
}

uint64_t tmpfs_pages_reserved(void)
{
    return __atomic_load_n(&reserved_total, __ATOMIC_RELAXED);
}

static uint64_t ram_pages(void)
{
    uint64_t n = 0;
    for (int i = 0; i < numa_nnodes; i++)
        n += page_total_count(i);
    return n;
}

/* ---- reservations ---- */

uint64_t tmpfs_pages_free(struct tmount *tm)
{
    if (!tm->tm_maxpages)
        return UINT64_MAX >> PAGE_SHIFT;
    spin_lock(&tm->tm_lock);
    uint64_t n = tm->tm_maxpages > tm->tm_pages ? tm->tm_maxpages - tm->tm_pages : 0;
    spin_unlock(&tm->tm_lock);
    return n;
}

int tmpfs_reserve(struct tmount *tm, int64_t delta)
{
    int err = 0;
    spin_lock(&tm->tm_lock);
    if (delta > 0 && tm->tm_maxpages && tm->tm_pages + (uint64_t)delta > tm->tm_maxpages)
        err = -ENOSPC;
    else
        tm->tm_pages += (uint64_t)delta;
    spin_unlock(&tm->tm_lock);
    if (!err)
        __atomic_add_fetch(&reserved_total, (uint64_t)delta, __ATOMIC_RELAXED);
    return err;
}

/* ---- nodes ---- */

static enum vtype vtype_of(uint32_t mode)
{
    switch (mode & S_IFMT) {
    case S_IFREG:  return VREG;
    case S_IFDIR:  return VDIR;
    case S_IFLNK:  return VLNK;
    case S_IFCHR:  return VCHR;
    case S_IFBLK:  return VBLK;
    case S_IFIFO:  return VFIFO;
    case S_IFSOCK: return VSOCK;
    default:       return VNON;
    }
}

/*
 * The owner of a new node, as Linux's inode_init_owner: the caller's ids,
 * except that in a set-group-ID directory the group is the directory's
 * (and a new directory is set-group-ID too); a file made set-group-ID
 * for a group its maker is not in loses the bit, unless root made it.
 */
static void init_owner(struct tmpnode *tp, struct tmpnode *dp, struct cred *cr)
{
    tp->tn_uid = cr->cr_uid;
    tp->tn_gid = cr->cr_gid;
    if (!dp || !(dp->tn_mode & S_ISGID))
        return;
    tp->tn_gid = dp->tn_gid;
    if ((tp->tn_mode & S_IFMT) == S_IFDIR)
        tp->tn_mode |= S_ISGID;
    else if ((tp->tn_mode & S_ISGID) && cr->cr_uid != 0 && !cred_groupmember(cr, tp->tn_gid))
        tp->tn_mode &= ~(uint32_t)S_ISGID;
}

int tmpnode_alloc(struct tmount *tm, uint32_t mode, uint32_t rdev, struct tmpnode *dp,
                  struct cred *cr, struct tmpnode **tpp)
{
    enum vtype type = vtype_of(mode);
    if (type == VNON)
        return -EINVAL;
    struct tmpnode *tp = kzalloc(sizeof *tp);
    if (!tp)
        return -ENOMEM;
    spin_lock(&tm->tm_lock);
    if (tm->tm_maxnodes && tm->tm_nodes >= tm->tm_maxnodes) {
        spin_unlock(&tm->tm_lock);
        kfree(tp);
        return -ENOSPC;
    }
    tm->tm_nodes++;
    tp->tn_ino = tm->tm_nextino++;
    tp->tn_lnext = tm->tm_nodelist;
    if (tm->tm_nodelist)
        tm->tm_nodelist->tn_lprev = tp;
    tm->tm_nodelist = tp;
    spin_unlock(&tm->tm_lock);

    rlock_init(&tp->tn_lock, &tmpfs_node_class, "tmpfs_node");
    vn_init(&tp->tn_vnode, &tmpfs_vnodeops, type, tm->tm_vfsp, tp);
    if (type == VREG)
        tp->tn_vnode.v_flag |= VMEMONLY;    /* before anyone sees it: [c] */
    if (type == VCHR || type == VBLK)
        tp->tn_vnode.v_rdev = rdev;
    tp->tn_mount = tm;
    tp->tn_mode = mode & (S_IFMT | 07777);
    init_owner(tp, dp, cr);
    tp->tn_atime = tp->tn_mtime = tp->tn_ctime = tmpfs_now();
    if (type == VDIR) {
        tp->tn_nlink = 2;                   /* its name and its "." */
        tp->tn_parent = dp ? dp : tp;
        tp->tn_size = 2 * TMPFS_DIRENT_SIZE;
        tp->tn_nextcookie = 2;              /* 0 and 1 are "." and ".." */
    } else {
        tp->tn_nlink = 1;
    }
    tp->tn_linkhold = true;
    VN_HOLD(TNTOV(tp));                     /* the link hold; vn_init's is the caller's */
    *tpp = tp;
    return 0;
}

bool tmpnode_unlinked(struct tmpnode *tp)
{
    if (tp->tn_nlink > 0)
        tp->tn_nlink--;
    tp->tn_ctime = tmpfs_now();
    if (tp->tn_nlink > 0 || !tp->tn_linkhold)
        return false;
    tp->tn_linkhold = false;
    return true;
}

/*
 * VOP_INACTIVE: the last reference to a node without a name (or of an
 * unmounted tmpfs) is gone, and the page cache has freed its pages: give
 * back its reservation, entries, link text and memory.  No lock of the
 * node's is needed: nobody can find it.  Spin locks only (VN_RELE may be
 * called under them).
 */
void tmpfs_inactive(struct vnode *vp, struct cred *cr)
{
    struct tmpnode *tp = VTOTN(vp);
    struct tmount *tm = tp->tn_mount;
    uint64_t resv = tresv_cut(tp, 0);
    if (resv)
        tmpfs_reserve(tm, -(int64_t)resv);
    tresv_free(tp);
    if (vp->v_type == VDIR)
        tdir_free_all(tp);
    kfree(tp->tn_target);
    spin_lock(&tm->tm_lock);
    if (tp->tn_lprev)
        tp->tn_lprev->tn_lnext = tp->tn_lnext;
    else
        tm->tm_nodelist = tp->tn_lnext;
    if (tp->tn_lnext)
        tp->tn_lnext->tn_lprev = tp->tn_lprev;
    tm->tm_nodes--;
    spin_unlock(&tm->tm_lock);
    rlock_destroy(&tp->tn_lock);
    vn_destroy(vp);
    kfree(tp);
}

/* ---- mount options ---- */

struct tmpfs_args {
    uint64_t maxpages, maxnodes;
    uint32_t mode, uid, gid;
};

/* The value of digit c, or 16 when it is none. */
static unsigned digit(char c)
{
    if (c >= '0' && c <= '9')
        return (unsigned)(c - '0');
    if (c >= 'a' && c <= 'f')
        return (unsigned)(c - 'a' + 10);
    if (c >= 'A' && c <= 'F')
        return (unsigned)(c - 'A' + 10);
    return 16;
}

/* An unsigned number at *sp in base (0: C's notation, decimal, 0x hex or
 * 0 octal), *sp moved past it: false when there are no digits or it
 * overflows 64 bits. */
static bool parse_number(const char **sp, unsigned base, uint64_t *out)
{
    const char *s = *sp;
    if (base == 0) {
        base = 10;
        if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && digit(s[2]) < 16) {
            base = 16;
            s += 2;
        } else if (s[0] == '0') {
            base = 8;
        }
    }
    uint64_t v = 0;
    const char *start = s;
    for (unsigned d; (d = digit(*s)) < base; s++) {
        if (v > (UINT64_MAX - d) / base)
            return false;
        v = v * base + d;
    }
    if (s == start)
        return false;
    *sp = s;
    *out = v;
    return true;
}

/* Linux's memparse: a number with an optional k, m, g, t, p or e
 * (binary multiples); false on overflow. */
static bool parse_size(const char **sp, uint64_t *out)
{
    uint64_t v;
    if (!parse_number(sp, 0, &v))
        return false;
    static const char units[] = "kmgtpe";
    char c = **sp;
    for (int i = 0; units[i]; i++) {
        if (c == units[i] || c == units[i] - 'a' + 'A') {
            unsigned shift = 10 * (unsigned)(i + 1);
            if (v > (UINT64_MAX >> shift))
                return false;
            v <<= shift;
            (*sp)++;
            break;
        }
    }
    *out = v;
    return true;
}

/* One option (key of klen bytes, value val or NULL): 0, or -EINVAL with
 * the reason on the console and in the kernel log, as Linux's "tmpfs: Bad
 * value for 'size'". */
static int apply_option(struct tmpfs_args *a, const char *key, size_t klen, const char *val)
{
    static const char *const noops[] = { "rw", "async", "silent", "lazytime", "nolazytime",
                                         "nomand", NULL };
    for (int i = 0; noops[i]; i++)
        if (strlen(noops[i]) == klen && strncmp(key, noops[i], klen) == 0 && !val)
            return 0;                   /* the VFS's flags, which change nothing here */
#define KEY(k) (klen == sizeof k - 1 && strncmp(key, k, klen) == 0)
    uint64_t v = 0;
    const char *s = val;
    bool ok = s && *s;
    if (KEY("size") && ok) {
        ok = parse_size(&s, &v);
        if (ok && *s == '%') {          /* a percentage of memory */
            s++;
            ok = v <= 100000 && (v = ram_pages() * v / 100 * PAGE_SIZE, true);
        }
        if (ok && !*s)
            a->maxpages = v / PAGE_SIZE + (v % PAGE_SIZE != 0);
    } else if (KEY("nr_blocks") && ok) {
        ok = parse_size(&s, &v);
        if (ok && !*s)
            a->maxpages = v;
    } else if (KEY("nr_inodes") && ok) {
        ok = parse_size(&s, &v);
        if (ok && !*s)
            a->maxnodes = v;
    } else if (KEY("mode") && ok) {
        ok = parse_number(&s, 8, &v) && v <= UINT32_MAX;
        if (ok && !*s)
            a->mode = (uint32_t)v & 07777;
    } else if ((KEY("uid") || KEY("gid")) && ok) {
        /* (uid_t)-1 is no id: Linux's uid_valid refuses it */
        ok = parse_number(&s, 10, &v) && v < UINT32_MAX;
        if (ok && !*s)
            *(key[0] == 'u' ? &a->uid : &a->gid) = (uint32_t)v;
    } else if (KEY("size") || KEY("nr_blocks") || KEY("nr_inodes") || KEY("mode") ||
               KEY("uid") || KEY("gid")) {
        ok = false;                     /* no value */
    } else {
        kprintf("tmpfs: unknown mount option '%.*s'\n", (int)klen, key);
        return -EINVAL;
    }
#undef KEY
    if (ok && !*s)
        return 0;
    kprintf("tmpfs: bad value '%s' for mount option '%.*s'\n", val ? val : "", (int)klen, key);
    return -EINVAL;
}

/* mount(2)'s option string: comma-separated key=value words; empty words
 * are skipped, as Linux's parser does. */
static int parse_options(struct tmpfs_args *a, const char *opts)
{
    if (!opts)
        return 0;
    char word[128];
    while (*opts) {
        size_t n = 0;
        while (opts[n] && opts[n] != ',')
            n++;
        if (n >= sizeof word) {
            kprintf("tmpfs: mount option '%.20s...' is too long\n", opts);
            return -EINVAL;
        }
        memcpy(word, opts, n);
        word[n] = 0;
        opts += n + (opts[n] == ',');
        if (n == 0)
            continue;
        char *eq = strchr(word, '=');
        int err = apply_option(a, word, eq ? (size_t)(eq - word) : n, eq ? eq + 1 : NULL);
        if (err)
            return err;
    }
    return 0;
}

/* ---- vfsops ---- */

static int tmpfs_mount(struct vfs *vfsp, struct cred *cr)
{
    /* Linux's defaults: half of memory, and as many nodes as half its
     * pages; the root 1777 and owned by whoever mounts. */
    struct tmpfs_args a = { .maxpages = ram_pages() / 2, .maxnodes = ram_pages() / 2,
                            .mode = 01777, .uid = cr->cr_uid, .gid = cr->cr_gid };
    int err = parse_options(&a, vfsp->vfs_mntopts);
    if (err)
        return err;
    struct tmount *tm = kzalloc(sizeof *tm);
    if (!tm)
        return -ENOMEM;
    tm->tm_vfsp = vfsp;
    tm->tm_maxpages = a.maxpages;
    tm->tm_maxnodes = a.maxnodes;
    tm->tm_nextino = 2;                 /* the root is 2, as Linux's ext2 and UFS */
    spin_init_named(&tm->tm_lock, &tmpfs_mount_class, "tmpfs_mount");
    rlock_init(&tm->tm_rename, &tmpfs_rename_class, "tmpfs_rename");
    struct tmpnode *root;
    err = tmpnode_alloc(tm, S_IFDIR | a.mode, 0, NULL, cr, &root);
    if (err) {
        rlock_destroy(&tm->tm_rename);
        spin_destroy(&tm->tm_lock);
        kfree(tm);
        return err;
    }
    root->tn_uid = a.uid;
    root->tn_gid = a.gid;
    root->tn_vnode.v_flag |= VROOT;
    VN_RELE(TNTOV(root));               /* the link hold keeps it */
    tm->tm_root = root;
    vfsp->vfs_data = tm;
    vfsp->vfs_bsize = PAGE_SIZE;
    return 0;
}

static int tmpfs_root(struct vfs *vfsp, struct vnode **vpp)
{
    struct tmount *tm = vfsp->vfs_data;
    VN_HOLD(TNTOV(tm->tm_root));
    *vpp = TNTOV(tm->tm_root);
    return 0;
}

/* Does any node have a reference besides its link hold?  (The VFS holds
 * the mount list exclusive and has purged the DNLC of this file system,
 * so nothing new can find a node; the page cache takes no dirty hold on
 * a VMEMONLY file.) */
static bool busy(struct tmount *tm)
{
    bool used = false;
    spin_lock(&tm->tm_lock);
    for (struct tmpnode *tp = tm->tm_nodelist; tp && !used; tp = tp->tn_lnext) {
        int32_t own = READ_ONCE(tp->tn_linkhold) ? 1 : 0;
        used = __atomic_load_n(&TNTOV(tp)->v_count, __ATOMIC_ACQUIRE) > own;
    }
    spin_unlock(&tm->tm_lock);
    return used;
}

/* A node that still holds itself, its hold now the caller's, or NULL. */
static struct tmpnode *take_linked(struct tmount *tm)
{
    spin_lock(&tm->tm_lock);
    struct tmpnode *tp = tm->tm_nodelist;
    while (tp && !tp->tn_linkhold)
        tp = tp->tn_lnext;
    if (tp)
        tp->tn_linkhold = false;
    spin_unlock(&tm->tm_lock);
    return tp;
}

/* Nothing uses the file system: each node lets go of itself and is
 * freed with its pages (tmpfs_inactive). */
static int tmpfs_unmount(struct vfs *vfsp, struct cred *cr)
{
    struct tmount *tm = vfsp->vfs_data;
    if (!tm)
        return 0;
    if (busy(tm))
        return -EBUSY;
    struct tmpnode *tp;
    while ((tp = take_linked(tm)))
        VN_RELE(TNTOV(tp));
    if (tm->tm_nodelist)                /* cannot be: busy() said none was used */
        kprintf("tmpfs: unmount left %lu nodes behind\n", (unsigned long)tm->tm_nodes);
    rlock_destroy(&tm->tm_rename);
    spin_destroy(&tm->tm_lock);         /* (its statistics leave lockstat's lists) */
    vfsp->vfs_data = NULL;
    kfree(tm);
    return 0;
}

static int tmpfs_statfs(struct vfs *vfsp, struct kstatfs *sb)
{
    struct tmount *tm = vfsp->vfs_data;
    spin_lock(&tm->tm_lock);
    uint64_t pages = tm->tm_pages, nodes = tm->tm_nodes;
    spin_unlock(&tm->tm_lock);
    sb->f_type = TMPFS_MAGIC;
    sb->f_bsize = PAGE_SIZE;
    /* No limit: zeros, as Linux's statfs of a tmpfs with size=0. */
    sb->f_blocks = tm->tm_maxpages;
    sb->f_bfree = tm->tm_maxpages > pages ? tm->tm_maxpages - pages : 0;
    sb->f_files = tm->tm_maxnodes;
    sb->f_ffree = tm->tm_maxnodes > nodes ? tm->tm_maxnodes - nodes : 0;
    sb->f_namelen = NAME_MAX;
    sb->f_fsid = vfsp->vfs_fsid;
    return 0;
}

/* Nothing to write: memory is the store. */
static int tmpfs_sync(struct vfs *vfsp, struct cred *cr)
{
    return 0;
}

static const struct vfsops tmpfs_vfsops = {
    .vfs_mount = tmpfs_mount,
    .vfs_unmount = tmpfs_unmount,
    .vfs_root = tmpfs_root,
    .vfs_statfs = tmpfs_statfs,
    .vfs_sync = tmpfs_sync,
};

const struct vfssw tmpfs_vfssw = { .name = "tmpfs", .ops = &tmpfs_vfsops, .needs_dev = false };
