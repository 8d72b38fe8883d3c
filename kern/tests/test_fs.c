/*
 * File-system ktests through the path-level VFS calls (kern/vfs/vfs.h), on
 * the root file system that root= mounted, S5 or UFS (make check attaches
 * a fresh image made by mkfs.s5 or mkfs.ufs, runs fsck.s5 or fsck.ufs on
 * it after power-off, and reads back what fs_persist wrote).
 *
 * Each test works in its own top-level directory and removes what it made,
 * except fs_persist, whose file the host checks.  The multiprocessor tests
 * run a thread on every CPU at once, in shared and private directories
 * (fs_mp), and race renames of two directories into each other
 * (fs_mp_rename, s5_mp_rename's race on whichever file system the root is).
 */
#include <kern/tests/ktest.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/vm/kmem.h>
#include <kern/arch/cpu.h>
#include <kern/sched/thread.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/s5/s5_inode.h>
#include <kern/ufs/ufs_inode.h>

/* ---- Helpers ----------------------------------------------------------------- */

/* The byte at offset off of the test pattern with this seed. */
static uint8_t pattern_byte(uint32_t seed, uint64_t off)
{
    uint64_t x = (off + 1) * 0x9E3779B97F4A7C15ULL ^ seed;
    return (uint8_t)(x >> 29);
}

static void fill_pattern(uint8_t *buf, size_t len, uint32_t seed, uint64_t off)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = pattern_byte(seed, off + i);
}

/* Create path (it must not exist) holding len bytes of the pattern.
 * Returns 0 or a negative errno. */
static int write_file(const char *path, uint32_t seed, size_t len)
{
    struct vnode *vp;
    int e = vn_open(path, NULL, O_CREAT | O_EXCL | O_WRONLY, 0644, &vp, kcred);
    if (e)
        return e;
    uint8_t *buf = kmalloc(1024);
    if (!buf) {
        vn_close(vp, O_WRONLY, kcred);
        return -ENOMEM;
    }
    for (size_t off = 0; off < len && !e; off += 1024) {
        size_t n = len - off < 1024 ? len - off : 1024, done = 0;
        fill_pattern(buf, n, seed, off);
        e = vn_rdwr(vp, true, buf, n, off, 0, &done, kcred);
        if (!e && done != n)
            e = -EIO;
    }
    kfree(buf);
    int e2 = vn_close(vp, O_WRONLY, kcred);
    return e ? e : e2;
}

/* Does path hold exactly len bytes of the pattern?  0, -EIO on a
 * mismatch or wrong size, or the errno of the failed call. */
static int verify_file(const char *path, uint32_t seed, size_t len)
{
    struct vnode *vp;
    int e = vn_open(path, NULL, O_RDONLY, 0, &vp, kcred);
    if (e)
        return e;
    struct vattr va;
    e = VOP_GETATTR(vp, &va, kcred);
    if (!e && va.va_size != len)
        e = -EIO;
    uint8_t *buf = kmalloc(1024);
    if (!buf)
        e = e ? e : -ENOMEM;
    for (size_t off = 0; !e && off <= len; off += 1024) {
        size_t want = len - off < 1024 ? len - off : 1024, done = 0;
        /* Ask for a full block: the read must stop at end of file. */
        e = vn_rdwr(vp, false, buf, 1024, off, 0, &done, kcred);
        if (!e && done != want)
            e = -EIO;
        for (size_t i = 0; !e && i < done; i++)
            if (buf[i] != pattern_byte(seed, off + i))
                e = -EIO;
        if (want < 1024)
            break;
    }
    kfree(buf);
    vn_close(vp, O_RDONLY, kcred);
    return e;
}

static int nlink_of(const char *path)
{
    struct vattr va;
    int e = vn_stat(path, NULL, false, &va, kcred);
    return e ? e : (int)va.va_nlink;
}

static bool exists(const char *path)
{
    struct vattr va;
    return vn_stat(path, NULL, false, &va, kcred) == 0;
}

/* Entries in a directory other than "." and "..", or a negative errno. */
static int count_entries(const char *path)
{
    struct vnode *vp;
    int e = lookupname(path, NULL, true, &vp, kcred);
    if (e)
        return e;
    uint8_t *buf = kmalloc(1024);
    int count = 0;
    bool eof = false;
    uint64_t off = 0;
    while (buf && !e && !eof) {
        struct uio u = { .uio_base = buf, .uio_resid = 1024, .uio_offset = off };
        e = VOP_READDIR(vp, &u, kcred, &eof);
        size_t got = 1024 - u.uio_resid;
        if (!e && got == 0 && !eof)
            e = -EIO;           /* no progress and no end: a broken readdir */
        for (size_t p = 0; !e && p < got;) {
            struct dirent64 *d = (struct dirent64 *)(buf + p);
            if (d->d_reclen == 0) {
                e = -EIO;
                break;
            }
            if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
                count++;
            p += d->d_reclen;
        }
        off = u.uio_offset;
    }
    if (!buf)
        e = -ENOMEM;
    kfree(buf);
    VN_RELE(vp);
    return e ? e : count;
}

#define KT_OK(call) KT_ASSERT_EQ((call), 0)

/* A test that needs a mounted root skips without one (KT_NEED_ROOT). */
#define NEED_ROOT() KT_NEED_ROOT()

/* ---- One CPU ------------------------------------------------------------------- */

KTEST(fs_root)
{
    NEED_ROOT();
    KT_ASSERT_EQ(rootdir->v_type, VDIR);
    struct kstatfs sb;
    KT_OK(VFS_STATFS(rootvfs, &sb));
    KT_ASSERT(sb.f_bfree > 0 && sb.f_bfree <= sb.f_blocks);
    KT_ASSERT(sb.f_ffree > 0 && sb.f_ffree <= sb.f_files);
    return 0;
}

/* Files of every size class: empty, one byte, one block, past the direct
 * blocks (single indirect) and past 266 KiB (double indirect). */
KTEST(fs_file_rw)
{
    NEED_ROOT();
    static const size_t sizes[] = { 0, 1, 1024, 1025, 10 * 1024 + 7, 300 * 1024 + 3 };
    struct kstatfs before, after;
    KT_OK(VFS_STATFS(rootvfs, &before));
    KT_OK(vn_mkdir("/kt_rw", NULL, 0755, kcred));
    char path[64];
    for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
        snprintf(path, sizeof(path), "/kt_rw/f%d", (int)i);
        KT_OK(write_file(path, 100 + i, sizes[i]));
        KT_OK(verify_file(path, 100 + i, sizes[i]));
    }
    /* Overwrite in the middle of the largest: the rest is unchanged. */
    struct vnode *vp;
    KT_OK(vn_open("/kt_rw/f5", NULL, O_RDWR, 0, &vp, kcred));
    uint8_t blk[100];
    size_t done;
    fill_pattern(blk, sizeof(blk), 105, 150000);
    KT_OK(vn_rdwr(vp, true, blk, sizeof(blk), 150000, 0, &done, kcred));
    KT_ASSERT_EQ(done, sizeof(blk));
    /* Truncate to 2000 bytes: the size follows and a read stops there. */
    KT_OK(VOP_TRUNCATE(vp, 2000, kcred));
    KT_OK(vn_rdwr(vp, false, blk, sizeof(blk), 1990, 0, &done, kcred));
    KT_ASSERT_EQ(done, 10);
    KT_OK(vn_rdwr(vp, false, blk, sizeof(blk), 5000, 0, &done, kcred));
    KT_ASSERT_EQ(done, 0);
    KT_OK(vn_close(vp, O_RDWR, kcred));
    KT_OK(verify_file("/kt_rw/f5", 105, 2000));
    KT_OK(vn_open("/kt_rw/f5", NULL, O_WRONLY | O_TRUNC, 0, &vp, kcred));
    KT_OK(vn_close(vp, O_WRONLY, kcred));
    KT_OK(verify_file("/kt_rw/f5", 105, 0));

    for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
        snprintf(path, sizeof(path), "/kt_rw/f%d", (int)i);
        KT_OK(vn_remove(path, NULL, kcred));
    }
    KT_OK(vn_rmdir("/kt_rw", NULL, kcred));
    /* Every block and inode came back. */
    KT_OK(VFS_STATFS(rootvfs, &after));
    KT_ASSERT_EQ(after.f_bfree, before.f_bfree);
    KT_ASSERT_EQ(after.f_ffree, before.f_ffree);
    return 0;
}

/* "/kt_nm/" and a name of len bytes (at most NAME_MAX + 1) in path. */
static void long_name(char *path, size_t len, char c)
{
    strlcpy(path, "/kt_nm/", 8);
    memset(path + 7, c, len);
    path[7 + len] = 0;
}

/* Names: rename within and across directories and over an existing file,
 * hard links and their counts, and the root's name limit (statfs's
 * f_namelen: 14 on S5, 255 on UFS). */
KTEST(fs_names)
{
    NEED_ROOT();
    KT_OK(vn_mkdir("/kt_nm", NULL, 0755, kcred));
    KT_OK(vn_mkdir("/kt_nm/a", NULL, 0755, kcred));
    KT_OK(vn_mkdir("/kt_nm/b", NULL, 0755, kcred));
    KT_OK(write_file("/kt_nm/a/one", 1, 3000));
    KT_ASSERT_EQ(write_file("/kt_nm/a/one", 1, 10), -EEXIST);

    KT_OK(vn_rename("/kt_nm/a/one", "/kt_nm/a/two", NULL, kcred));        /* same dir */
    KT_ASSERT(!exists("/kt_nm/a/one"));
    KT_OK(verify_file("/kt_nm/a/two", 1, 3000));
    KT_OK(vn_rename("/kt_nm/a/two", "/kt_nm/b/three", NULL, kcred));      /* other dir */
    KT_ASSERT(!exists("/kt_nm/a/two"));
    KT_OK(verify_file("/kt_nm/b/three", 1, 3000));
    KT_OK(write_file("/kt_nm/a/victim", 2, 500));
    KT_OK(vn_rename("/kt_nm/b/three", "/kt_nm/a/victim", NULL, kcred));   /* over a file */
    KT_OK(verify_file("/kt_nm/a/victim", 1, 3000));
    KT_ASSERT_EQ(count_entries("/kt_nm/b"), 0);

    KT_OK(vn_link("/kt_nm/a/victim", "/kt_nm/b/hard", NULL, kcred));
    KT_ASSERT_EQ(nlink_of("/kt_nm/a/victim"), 2);
    KT_ASSERT_EQ(vn_link("/kt_nm/a/victim", "/kt_nm/b/hard", NULL, kcred), -EEXIST);
    KT_OK(vn_remove("/kt_nm/a/victim", NULL, kcred));
    KT_ASSERT_EQ(nlink_of("/kt_nm/b/hard"), 1);
    KT_OK(verify_file("/kt_nm/b/hard", 1, 3000));

    /* f_namelen characters fit; one more does not. */
    struct kstatfs sb;
    KT_OK(VFS_STATFS(rootvfs, &sb));
    KT_ASSERT(sb.f_namelen >= 14 && sb.f_namelen <= NAME_MAX);
    char fits[8 + NAME_MAX + 1], over[8 + NAME_MAX + 1];
    long_name(fits, sb.f_namelen, 'f');
    long_name(over, sb.f_namelen + 1, 'o');
    KT_OK(write_file(fits, 3, 10));
    KT_ASSERT_EQ(write_file(over, 3, 10), -ENAMETOOLONG);
    KT_ASSERT_EQ(vn_mkdir(over, NULL, 0755, kcred), -ENAMETOOLONG);
    KT_ASSERT_EQ(vn_remove("/kt_nm/nonexistent", NULL, kcred), -ENOENT);
    KT_ASSERT_EQ(vn_remove("/kt_nm/b/hard/x", NULL, kcred), -ENOTDIR);

    KT_OK(vn_remove(fits, NULL, kcred));
    KT_OK(vn_remove("/kt_nm/b/hard", NULL, kcred));
    KT_OK(vn_rmdir("/kt_nm/a", NULL, kcred));
    KT_OK(vn_rmdir("/kt_nm/b", NULL, kcred));
    KT_OK(vn_rmdir("/kt_nm", NULL, kcred));
    KT_ASSERT(!exists("/kt_nm"));
    return 0;
}

/* Directories: link counts of parents, non-empty rmdir, and ".." after a
 * directory moves to another parent. */
KTEST(fs_dirs)
{
    NEED_ROOT();
    KT_OK(vn_mkdir("/kt_d", NULL, 0755, kcred));
    KT_ASSERT_EQ(nlink_of("/kt_d"), 2);
    KT_OK(vn_mkdir("/kt_d/x", NULL, 0755, kcred));
    KT_OK(vn_mkdir("/kt_d/y", NULL, 0755, kcred));
    KT_ASSERT_EQ(nlink_of("/kt_d"), 4);
    KT_ASSERT_EQ(vn_mkdir("/kt_d/x", NULL, 0755, kcred), -EEXIST);
    KT_OK(vn_mkdir("/kt_d/x/sub", NULL, 0755, kcred));
    KT_OK(write_file("/kt_d/x/sub/file", 4, 100));
    KT_ASSERT_EQ(vn_rmdir("/kt_d/x/sub", NULL, kcred), -ENOTEMPTY);

    /* Move sub from x to y: both parents' counts and sub's ".." follow. */
    KT_OK(vn_rename("/kt_d/x/sub", "/kt_d/y/sub", NULL, kcred));
    KT_ASSERT_EQ(nlink_of("/kt_d/x"), 2);
    KT_ASSERT_EQ(nlink_of("/kt_d/y"), 3);
    struct vattr up, y;
    KT_OK(vn_stat("/kt_d/y/sub/..", NULL, true, &up, kcred));
    KT_OK(vn_stat("/kt_d/y", NULL, true, &y, kcred));
    KT_ASSERT_EQ(up.va_ino, y.va_ino);
    KT_OK(verify_file("/kt_d/y/sub/file", 4, 100));
    /* A directory cannot move into itself. */
    KT_ASSERT_EQ(vn_rename("/kt_d/y", "/kt_d/y/sub/y", NULL, kcred), -EINVAL);

    KT_OK(vn_remove("/kt_d/y/sub/file", NULL, kcred));
    KT_OK(vn_rmdir("/kt_d/y/sub", NULL, kcred));
    KT_OK(vn_rmdir("/kt_d/x", NULL, kcred));      /* same parent ... */
    KT_OK(vn_rmdir("/kt_d/y", NULL, kcred));
    KT_ASSERT_EQ(nlink_of("/kt_d"), 2);
    KT_OK(vn_rmdir("/kt_d", NULL, kcred));
    return 0;
}

/* Permissions: an ordinary user cannot search a 0700 directory of root's
 * or write into a 0755 one, and can read a 0644 file. */
KTEST(fs_perms)
{
    NEED_ROOT();
    struct cred *user = cred_alloc(1000, 1000);
    KT_ASSERT(user != NULL);
    KT_OK(vn_mkdir("/kt_p", NULL, 0755, kcred));
    KT_OK(vn_mkdir("/kt_p/private", NULL, 0700, kcred));
    KT_OK(write_file("/kt_p/private/secret", 5, 10));
    KT_OK(write_file("/kt_p/public", 6, 10));
    struct vnode *vp = NULL;
    int denied = vn_open("/kt_p/private/secret", NULL, O_RDONLY, 0, &vp, user);
    int readable = vn_open("/kt_p/public", NULL, O_RDONLY, 0, &vp, user);
    if (!readable)
        vn_close(vp, O_RDONLY, user);
    int nowrite = vn_open("/kt_p/new", NULL, O_CREAT | O_WRONLY, 0644, &vp, user);
    cred_rele(user);
    KT_ASSERT_EQ(denied, -EACCES);
    KT_ASSERT_EQ(readable, 0);
    KT_ASSERT_EQ(nowrite, -EACCES);
    KT_OK(vn_remove("/kt_p/private/secret", NULL, kcred));
    KT_OK(vn_remove("/kt_p/public", NULL, kcred));
    KT_OK(vn_rmdir("/kt_p/private", NULL, kcred));
    KT_OK(vn_rmdir("/kt_p", NULL, kcred));
    return 0;
}

/* devfs is mounted on the root's /dev: /dev/zero reads zeros, /dev/null
 * swallows writes and reads end of file, and ".." leaves the mount. */
KTEST(fs_dev)
{
    NEED_ROOT();
    struct vnode *vp;
    uint8_t buf[64];
    size_t done;
    memset(buf, 0xAA, sizeof buf);
    KT_OK(vn_open("/dev/zero", NULL, O_RDONLY, 0, &vp, kcred));
    KT_OK(vn_rdwr(vp, false, buf, sizeof buf, 0, 0, &done, kcred));
    vn_close(vp, O_RDONLY, kcred);
    KT_ASSERT_EQ(done, sizeof buf);
    for (size_t i = 0; i < sizeof buf; i++)
        KT_ASSERT_EQ(buf[i], 0);
    KT_OK(vn_open("/dev/null", NULL, O_RDWR, 0, &vp, kcred));
    KT_OK(vn_rdwr(vp, true, buf, sizeof buf, 0, 0, &done, kcred));
    KT_ASSERT_EQ(done, sizeof buf);
    KT_OK(vn_rdwr(vp, false, buf, sizeof buf, 0, 0, &done, kcred));
    KT_ASSERT_EQ(done, 0);
    vn_close(vp, O_RDWR, kcred);
    struct vattr va, root;
    KT_OK(vn_stat("/dev/console", NULL, true, &va, kcred));
    KT_ASSERT_EQ(va.va_type, VCHR);
    KT_OK(vn_stat("/dev/..", NULL, true, &va, kcred));
    KT_OK(vn_stat("/", NULL, true, &root, kcred));
    KT_ASSERT_EQ(va.va_ino, root.va_ino);
    return 0;
}

/* A file the host reads back after power-off (tests/fs_check.py): what
 * was written and synced must be on the disk.  The content is text so
 * that the check is a plain comparison. */
KTEST(fs_persist)
{
    NEED_ROOT();
    static const char line[] = "tempest persist: the quick brown fox jumps over the lazy dog\n";
    if (exists("/persist"))
        return 0;       /* a second run on the same image: already there */
    KT_OK(vn_mkdir("/persist", NULL, 0755, kcred));
    struct vnode *vp;
    KT_OK(vn_open("/persist/fox.txt", NULL, O_CREAT | O_EXCL | O_WRONLY, 0644, &vp, kcred));
    size_t done, len = sizeof(line) - 1;
    for (int i = 0; i < 40; i++) {
        KT_OK(vn_rdwr(vp, true, (void *)line, len, (uint64_t)i * len, 0, &done, kcred));
        KT_ASSERT_EQ(done, len);
    }
    KT_OK(VOP_FSYNC(vp, kcred));
    KT_OK(vn_close(vp, O_WRONLY, kcred));
    return 0;
}

/* The invariants of the root's inode cache (S5's or UFS's): 0 is good. */
static int root_icache_audit(void)
{
    int nfree;
    return rootvfs->vfs_sw == &ufs_vfssw ? ufs_icache_audit(&nfree) : s5_icache_audit(&nfree);
}

/* ---- Every CPU at once -------------------------------------------------------- */

#define MP_ROUNDS 6

static struct {
    volatile int started, finished;     /* [a] */
    volatile int errors;                /* [a] */
    volatile int first_error;           /* [a] the first errno seen */
    volatile int first_line;            /* [a] and where */
    int nthreads;                       /* [c] while the threads run */
} mp;

#define MP_DO(call) do { int _e = (call); if (_e) { mp_error(_e, __LINE__); return; } } while (0)

static void mp_error(int e, int line)
{
    if (__atomic_add_fetch(&mp.errors, 1, __ATOMIC_ACQ_REL) == 1) {
        mp.first_error = e;
        mp.first_line = line;
    }
}

/* One CPU's share: files made in its own directory, moved into the
 * shared one, linked back, unlinked; directories made and removed in the
 * shared directory and in its own. */
static void mp_rounds(int me)
{
    char a[64], b[64], c[64];
    for (int k = 0; k < MP_ROUNDS; k++) {
        uint32_t seed = (uint32_t)(me * 100 + k);
        size_t len = 700 + (size_t)(me * 37 + k * 1500) % 12000;
        snprintf(a, sizeof(a), "/kt_mp/c%d/f%d", me, k);
        snprintf(b, sizeof(b), "/kt_mp/sh/c%df%d", me, k);
        snprintf(c, sizeof(c), "/kt_mp/c%d/l%d", me, k);
        MP_DO(write_file(a, seed, len));
        MP_DO(verify_file(a, seed, len));
        MP_DO(vn_rename(a, b, NULL, kcred));            /* across directories */
        MP_DO(vn_link(b, c, NULL, kcred));
        MP_DO(verify_file(c, seed, len));
        MP_DO(vn_remove(b, NULL, kcred));               /* the link survives */
        snprintf(a, sizeof(a), "/kt_mp/sh/d%d_%d", me, k);
        MP_DO(vn_mkdir(a, NULL, 0755, kcred));
        snprintf(b, sizeof(b), "/kt_mp/sh/d%d_%d/in", me, k);
        MP_DO(write_file(b, seed, 50));
        MP_DO(vn_remove(b, NULL, kcred));
        MP_DO(vn_rmdir(a, NULL, kcred));
        snprintf(a, sizeof(a), "/kt_mp/c%d/d%d", me, k);
        MP_DO(vn_mkdir(a, NULL, 0755, kcred));          /* same directory */
        MP_DO(vn_rmdir(a, NULL, kcred));
    }
    for (int k = 0; k < MP_ROUNDS; k++) {
        uint32_t seed = (uint32_t)(me * 100 + k);
        size_t len = 700 + (size_t)(me * 37 + k * 1500) % 12000;
        snprintf(c, sizeof(c), "/kt_mp/c%d/l%d", me, k);
        MP_DO(verify_file(c, seed, len));
    }
}

static void mp_thread(void *arg)
{
    int me = (int)(uintptr_t)arg;
    __atomic_add_fetch(&mp.started, 1, __ATOMIC_ACQ_REL);
    while (mp.started < mp.nthreads)        /* start together */
        thread_yield();
    mp_rounds(me);
    __atomic_add_fetch(&mp.finished, 1, __ATOMIC_ACQ_REL);
}

KTEST(fs_mp)
{
    NEED_ROOT();
    int n = ncpus_online;
    struct kstatfs before, after;
    KT_OK(VFS_STATFS(rootvfs, &before));
    KT_OK(vn_mkdir("/kt_mp", NULL, 0755, kcred));
    KT_OK(vn_mkdir("/kt_mp/sh", NULL, 0755, kcred));
    char path[64];
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "/kt_mp/c%d", i);
        KT_OK(vn_mkdir(path, NULL, 0755, kcred));
    }
    memset((void *)&mp, 0, sizeof(mp));
    mp.nthreads = n;
    struct thread **t = kzalloc(sizeof(*t) * n);
    KT_ASSERT(t != NULL);
    for (int i = 0; i < n; i++) {
        t[i] = thread_create("fs_mp", mp_thread, (void *)(uintptr_t)i, 1UL << i);
        KT_ASSERT(t[i] != NULL);
    }
    /* Join every thread before judging: none may outlive this frame. */
    for (int i = 0; i < n; i++)
        thread_join(t[i]);
    kfree(t);
    if (mp.errors)
        ktest_fail("%d errors, the first %d at test_fs.c:%d", mp.errors, mp.first_error,
                   mp.first_line);
    KT_ASSERT_EQ(mp.errors, 0);
    KT_ASSERT_EQ(mp.finished, n);
    KT_ASSERT_EQ(count_entries("/kt_mp/sh"), 0);
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "/kt_mp/c%d", i);
        KT_ASSERT_EQ(count_entries(path), MP_ROUNDS);
        for (int k = 0; k < MP_ROUNDS; k++) {
            snprintf(path, sizeof(path), "/kt_mp/c%d/l%d", i, k);
            KT_OK(vn_remove(path, NULL, kcred));
        }
        snprintf(path, sizeof(path), "/kt_mp/c%d", i);
        KT_OK(vn_rmdir(path, NULL, kcred));
    }
    KT_OK(vn_rmdir("/kt_mp/sh", NULL, kcred));
    KT_OK(vn_rmdir("/kt_mp", NULL, kcred));
    KT_ASSERT_EQ(root_icache_audit(), 0);
    KT_OK(VFS_STATFS(rootvfs, &after));
    KT_ASSERT_EQ(after.f_bfree, before.f_bfree);
    KT_ASSERT_EQ(after.f_ffree, before.f_ffree);
    return 0;
}

/* ---- Renames racing on every CPU ------------------------------------------------ */

static struct {
    volatile int go;                    /* [a] */
    int result[64];                     /* each thread's own */
} sw;

/*
 * Even threads try to move P into Q, odd ones Q into P, all at once (as
 * s5_mp_rename does on S5's RAM disk, here on the root, S5 or UFS).
 * Exactly one move can succeed: after it the other would make P and Q
 * each other's parent, a cycle cut off from the root, and must fail with
 * EINVAL (the rename lock and the ancestor walk); the same move again
 * finds its name gone (ENOENT).
 */
static void swap_thread(void *arg)
{
    int me = (int)(uintptr_t)arg;
    bool even = me % 2 == 0;
    while (!__atomic_load_n(&sw.go, __ATOMIC_ACQUIRE))
        thread_yield();
    sw.result[me] = vn_rename(even ? "/kt_sw/P" : "/kt_sw/Q", even ? "/kt_sw/Q/P" : "/kt_sw/P/Q",
                              NULL, kcred);
}

/* One round on n threads: how many moves succeeded, or a negative errno
 * other than the two expected. */
static int swap_round(int n)
{
    struct thread *t[64];
    int moved = 0, other = 0;
    __atomic_store_n(&sw.go, 0, __ATOMIC_RELEASE);
    for (int i = 0; i < n; i++)
        t[i] = thread_create("fs_swap", swap_thread, (void *)(uintptr_t)i, 1UL << (i % ncpus_online));
    __atomic_store_n(&sw.go, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < n; i++) {
        if (!t[i]) {
            other = -ENOMEM;
            continue;
        }
        thread_join(t[i]);
        if (sw.result[i] == 0)
            moved++;
        else if (sw.result[i] != -EINVAL && sw.result[i] != -ENOENT)
            other = sw.result[i];
    }
    /* Back to the top for the next round (one of the two is nested). */
    vn_rename("/kt_sw/Q/P", "/kt_sw/P", NULL, kcred);
    vn_rename("/kt_sw/P/Q", "/kt_sw/Q", NULL, kcred);
    return other ? other : moved;
}

KTEST(fs_mp_rename)
{
    NEED_ROOT();
    int n = MIN(MAX(ncpus_online, 2) * 2, 64);
    struct kstatfs before, after;
    KT_OK(VFS_STATFS(rootvfs, &before));
    KT_OK(vn_mkdir("/kt_sw", NULL, 0755, kcred));
    KT_OK(vn_mkdir("/kt_sw/P", NULL, 0755, kcred));
    KT_OK(vn_mkdir("/kt_sw/Q", NULL, 0755, kcred));
    for (int round = 0; round < 6; round++) {
        KT_ASSERT_EQ(swap_round(n), 1);
        KT_ASSERT_EQ(nlink_of("/kt_sw"), 4);
        KT_ASSERT_EQ(nlink_of("/kt_sw/P"), 2);
        KT_ASSERT_EQ(nlink_of("/kt_sw/Q"), 2);
    }
    KT_OK(vn_rmdir("/kt_sw/P", NULL, kcred));
    KT_OK(vn_rmdir("/kt_sw/Q", NULL, kcred));
    KT_OK(vn_rmdir("/kt_sw", NULL, kcred));
    KT_ASSERT_EQ(root_icache_audit(), 0);
    KT_OK(VFS_STATFS(rootvfs, &after));
    KT_ASSERT_EQ(after.f_ffree, before.f_ffree);
    return 0;
}
