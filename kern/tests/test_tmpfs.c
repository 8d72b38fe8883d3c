/*
 * ktests for tmpfs (kern/tmpfs/), on a mount of its own outside the name
 * space (no root file system needed), driven through the VOPs:
 *
 *   tmpfs_basic  options refused and taken; a file made, written through
 *                the page cache (a hole reserving no page, a short write
 *                and ENOSPC at size=), read, renamed, linked, truncated
 *                and removed; statfs's counts back where they started;
 *                unmount.
 *   tmpfs_mp     a thread per CPU (and one more) making files in one
 *                shared directory, writing and reading them back, moving
 *                them and their own directory to a second one and back,
 *                and removing them, while the directories are also listed;
 *                afterwards no node and no page is left, and unmount
 *                succeeds.  Under witness=on it checks the order of
 *                tmpfs_rename, tmpfs_node and the vnode locks.
 */
#include <kern/tests/ktest.h>
#include <kern/tmpfs/tmpfs.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/dnlc.h>
#include <kern/vfs/cred.h>
#include <kern/vm/kmem.h>
#include <kern/arch/cpu.h>
#include <kern/sched/thread.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>

struct tmt {
    struct vfs vfs;
    struct vnode *root;
};

static uint32_t next_fsid = 0x7700;

static int tm_mount(struct tmt *t, const char *opts)
{
    memset(&t->vfs, 0, sizeof t->vfs);
    t->vfs.vfs_op = tmpfs_vfssw.ops;
    t->vfs.vfs_sw = &tmpfs_vfssw;
    t->vfs.vfs_fsid = __atomic_add_fetch(&next_fsid, 1, __ATOMIC_RELAXED);
    t->vfs.vfs_mntopts = opts;
    int err = t->vfs.vfs_op->vfs_mount(&t->vfs, kcred);
    t->vfs.vfs_mntopts = NULL;
    return err ? err : VFS_ROOT(&t->vfs, &t->root);
}

/* As the VFS unmounts: the DNLC's holds go first. */
static int tm_unmount(struct tmt *t)
{
    dnlc_purge_vfsp(&t->vfs, 0);
    VN_RELE(t->root);
    return t->vfs.vfs_op->vfs_unmount(&t->vfs, kcred);
}

static int make(struct vnode *dvp, const char *name, enum vtype type, struct vnode **vpp)
{
    struct vattr va = { .va_type = type, .va_mode = 0644 };
    if (type == VDIR)
        return VOP_MKDIR(dvp, name, &va, vpp, kcred);
    return VOP_CREATE(dvp, name, &va, true, vpp, kcred);
}

static void pattern(char *buf, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)(seed + i * 13);
}

/* ---- basic ---- */

KTEST(tmpfs_basic)
{
    struct tmt t;
    KT_ASSERT_EQ(tm_mount(&t, "size=5%x"), -EINVAL);
    KT_ASSERT_EQ(tm_mount(&t, "mode=8"), -EINVAL);
    KT_ASSERT_EQ(tm_mount(&t, "size=64k,nr_inodes=10,mode=0700"), 0);
    struct kstatfs sb;
    KT_ASSERT_EQ(VFS_STATFS(&t.vfs, &sb), 0);
    KT_ASSERT_EQ(sb.f_blocks, 16);
    KT_ASSERT_EQ(sb.f_ffree, 9);
    struct vattr va;
    KT_ASSERT_EQ(VOP_GETATTR(t.root, &va, kcred), 0);
    KT_ASSERT_EQ(va.va_mode, S_IFDIR | 0700);

    static char buf[3 * 4096], got[3 * 4096];
    pattern(buf, sizeof buf, 7);
    struct vnode *f, *g;
    KT_ASSERT_EQ(make(t.root, "f", VREG, &f), 0);
    size_t done;
    KT_ASSERT_EQ(vn_rdwr(f, true, buf, sizeof buf, 0, 0, &done, kcred), 0);
    KT_ASSERT_EQ(done, sizeof buf);
    KT_ASSERT_EQ(VFS_STATFS(&t.vfs, &sb), 0);
    KT_ASSERT_EQ(sb.f_bfree, 13);
    KT_ASSERT_EQ(vn_rdwr(f, false, got, sizeof got, 0, 0, &done, kcred), 0);
    KT_ASSERT_EQ(done, sizeof got);
    KT_ASSERT(memcmp(buf, got, sizeof buf) == 0);
    /* A hole costs nothing: 3 pages' bytes at 60000 reserve pages 14 to 17
     * only, though the file now passes size=. */
    KT_ASSERT_EQ(vn_rdwr(f, true, buf, sizeof buf, 60000, 0, &done, kcred), 0);
    KT_ASSERT_EQ(done, sizeof buf);
    KT_ASSERT_EQ(vn_rdwr(f, true, buf, sizeof buf, 3 * 4096, 0, &done, kcred), 0);
    KT_ASSERT_EQ(vn_rdwr(f, true, buf, sizeof buf, 6 * 4096, 0, &done, kcred), 0);
    KT_ASSERT_EQ(VFS_STATFS(&t.vfs, &sb), 0);
    KT_ASSERT_EQ(sb.f_bfree, 3);
    /* Past size=: a short write (pages 10 to 12 of 10 to 13), then ENOSPC. */
    KT_ASSERT_EQ(vn_rdwr(f, true, buf, sizeof buf, 43008, 0, &done, kcred), 0);
    KT_ASSERT_EQ(done, 13 * 4096 - 43008);
    KT_ASSERT_EQ(vn_rdwr(f, true, buf, 1, 13 * 4096, 0, &done, kcred), -ENOSPC);
    KT_ASSERT_EQ(vn_rdwr(f, true, buf, 1, 14 * 4096, 0, &done, kcred), 0);   /* reserved */
    KT_ASSERT_EQ(done, 1);
    KT_ASSERT_EQ(VOP_TRUNCATE(f, 100, kcred), 0);
    KT_ASSERT_EQ(VFS_STATFS(&t.vfs, &sb), 0);
    KT_ASSERT_EQ(sb.f_bfree, 15);
    /* Names. */
    KT_ASSERT_EQ(VOP_LINK(t.root, f, "g", kcred), 0);
    KT_ASSERT_EQ(VOP_RENAME(t.root, "g", t.root, "h", kcred), 0);
    KT_ASSERT_EQ(VOP_LOOKUP(t.root, "g", &g, kcred), -ENOENT);
    KT_ASSERT_EQ(VOP_LOOKUP(t.root, "h", &g, kcred), 0);
    KT_ASSERT(g == f);
    VN_RELE(g);
    KT_ASSERT_EQ(VOP_GETATTR(f, &va, kcred), 0);
    KT_ASSERT_EQ(va.va_nlink, 2);
    KT_ASSERT_EQ(VOP_REMOVE(t.root, "f", kcred), 0);
    KT_ASSERT_EQ(VOP_REMOVE(t.root, "h", kcred), 0);
    KT_ASSERT_EQ(VOP_GETATTR(f, &va, kcred), 0);
    KT_ASSERT_EQ(va.va_nlink, 0);
    /* Unmount waits for the last reference to the unlinked file. */
    dnlc_purge_vfsp(&t.vfs, 0);
    VN_RELE(t.root);
    KT_ASSERT_EQ(t.vfs.vfs_op->vfs_unmount(&t.vfs, kcred), -EBUSY);
    KT_ASSERT_EQ(VFS_ROOT(&t.vfs, &t.root), 0);
    VN_RELE(f);
    KT_ASSERT_EQ(VFS_STATFS(&t.vfs, &sb), 0);
    KT_ASSERT_EQ(sb.f_bfree, 16);
    KT_ASSERT_EQ(sb.f_ffree, 9);
    KT_ASSERT_EQ(tm_unmount(&t), 0);
    return 0;
}

/* ---- every CPU at once ---- */

#define MP_ROUNDS 12
#define MP_BYTES 6000

static struct {
    struct vnode *a, *b;            /* the two shared directories */
    int bad;                        /* [atomic] */
    int ops;                        /* [atomic] */
} mp;

static void mp_fail(int id, const char *what, int err)
{
    if (__atomic_add_fetch(&mp.bad, 1, __ATOMIC_RELAXED) <= 5)
        kprintf("tmpfs_mp: thread %d: %s: %d\n", id, what, err);
}

/* A thread's buffers (off its small stack). */
struct mp_bufs {
    char buf[MP_BYTES], got[MP_BYTES], ents[512];
};

static void mp_rounds(int id, const char *dir, struct mp_bufs *m);

static void mp_worker(void *arg)
{
    int id = (int)(uintptr_t)arg;
    char dir[24];
    snprintf(dir, sizeof dir, "d%d", id);
    struct mp_bufs *m = kmalloc(sizeof *m);
    struct vnode *d;
    int err = m ? make(mp.a, dir, VDIR, &d) : -ENOMEM;
    if (err) {
        mp_fail(id, "mkdir", err);
        kfree(m);
        return;
    }
    VN_RELE(d);
    mp_rounds(id, dir, m);
    kfree(m);
    if ((err = VOP_RMDIR(mp.a, dir, kcred)))
        mp_fail(id, "rmdir", err);
}

static void mp_rounds(int id, const char *dir, struct mp_bufs *m)
{
    char name[24], moved[24];
    char *buf = m->buf, *got = m->got;
    int err;
    for (int r = 0; r < MP_ROUNDS; r++) {
        snprintf(name, sizeof name, "f%d.%d", id, r);
        snprintf(moved, sizeof moved, "m%d.%d", id, r);
        struct vnode *f;
        if ((err = make(mp.a, name, VREG, &f))) {
            mp_fail(id, "create", err);
            continue;
        }
        pattern(buf, MP_BYTES, (unsigned)(id * 100 + r));
        size_t done = 0;
        err = vn_rdwr(f, true, buf, MP_BYTES, 0, 0, &done, kcred);
        if (!err)
            err = vn_rdwr(f, false, got, MP_BYTES, 0, 0, &done, kcred);
        if (err || done != MP_BYTES || memcmp(buf, got, MP_BYTES))
            mp_fail(id, "write and read back", err);
        VN_RELE(f);
        /* The file to the other directory, the thread's own directory
         * there and back (the moves that take the rename lock). */
        if ((err = VOP_RENAME(mp.a, name, mp.b, moved, kcred)))
            mp_fail(id, "rename file", err);
        if ((err = VOP_RENAME(mp.a, dir, mp.b, dir, kcred)) ||
            (err = VOP_RENAME(mp.b, dir, mp.a, dir, kcred)))
            mp_fail(id, "rename directory", err);
        if ((err = VOP_LOOKUP(mp.b, moved, &f, kcred))) {
            mp_fail(id, "lookup moved", err);
        } else {
            err = vn_rdwr(f, false, got, MP_BYTES, 0, 0, &done, kcred);
            if (err || done != MP_BYTES || memcmp(buf, got, MP_BYTES))
                mp_fail(id, "read after the move", err);
            VN_RELE(f);
        }
        if ((err = VOP_REMOVE(mp.b, moved, kcred)))
            mp_fail(id, "remove", err);
        /* A listing meanwhile. */
        struct uio uio = { .uio_base = m->ents, .uio_resid = sizeof m->ents };
        bool eof;
        if ((err = VOP_READDIR(mp.a, &uio, kcred, &eof)))
            mp_fail(id, "readdir", err);
        __atomic_add_fetch(&mp.ops, 1, __ATOMIC_RELAXED);
    }
}

KTEST(tmpfs_mp)
{
    struct tmt t;
    KT_ASSERT_EQ(tm_mount(&t, "size=8m"), 0);
    memset(&mp, 0, sizeof mp);
    KT_ASSERT_EQ(make(t.root, "a", VDIR, &mp.a), 0);
    KT_ASSERT_EQ(make(t.root, "b", VDIR, &mp.b), 0);
    struct kstatfs before, after;
    KT_ASSERT_EQ(VFS_STATFS(&t.vfs, &before), 0);
    static struct thread *th[MAX_CPUS + 1];
    int n = 0;
    for (int i = 0; i <= ncpus && i < MAX_CPUS + 1; i++)
        if ((th[n] = thread_create("tmpfs_mp", mp_worker, (void *)(uintptr_t)i,
                                   1UL << (i % ncpus))))
            n++;
    for (int i = 0; i < n; i++)
        thread_join(th[i]);
    KT_ASSERT(n > ncpus);
    KT_ASSERT_EQ(mp.bad, 0);
    KT_ASSERT_EQ(mp.ops, n * MP_ROUNDS);
    KT_ASSERT_EQ(VFS_STATFS(&t.vfs, &after), 0);
    KT_ASSERT_EQ(after.f_bfree, before.f_bfree);
    KT_ASSERT_EQ(after.f_ffree, before.f_ffree);
    VN_RELE(mp.a);
    VN_RELE(mp.b);
    KT_ASSERT_EQ(tm_unmount(&t), 0);
    return 0;
}
