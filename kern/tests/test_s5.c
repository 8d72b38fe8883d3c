/*
 * ktests for the S5 file system (kern/s5/), one thread at a time.  Each
 * test makes a fresh S5 file system on its own RAM disk, s5ram, with the
 * in-kernel mkfs (s5_mkfs), mounts it through the S5 vfsops, works through
 * the vnode operations, and at the end unmounts and runs the in-kernel
 * consistency check (s5_check, fsck.s5's checks) on the disk.  The helpers
 * are in kern/tests/s5t.c; the tests of several CPUs at once are in
 * kern/tests/test_s5_mp.c.
 *
 *   s5_rw          write/read-back across direct, single-, double- and
 *                  triple-indirect blocks; holes; block counts; truncate
 *                  frees exactly what was allocated; EFBIG; data survives
 *                  a remount; the superblock is clean after unmount
 *   s5_names       ENAMETOOLONG past 14 bytes, 14-byte names, ".", "..",
 *                  readdir records and offsets, symlinks
 *   s5_enospc      filling a small file system: ENOSPC for blocks and for
 *                  inodes, counts still exact (check), all back after remove
 *   s5_links       link/unlink/rename/mkdir/rmdir link counts, EMLINK,
 *                  ENOTEMPTY, EISDIR, rename over files and directories,
 *                  rename of a directory into its own subtree
 *   s5_corrupt     corrupted superblocks fail the mount; a bad directory
 *                  entry, block pointer, chain block or directory size
 *                  fails the operation; never a panic
 *   s5_attr        getattr/setattr/access: owner and root rules, truncate
 *                  through setattr, IO_APPEND; device files keep their
 *                  numbers; a mounted disk cannot be mounted again or
 *                  formatted
 *   s5_vfs         through the VFS: mounted on a directory of the root file
 *                  system (when root= gave one), path operations, unmount
 */
#include <kern/tests/ktest.h>
#include <kern/tests/s5t.h>
#include <kern/s5/s5_inode.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/dnlc.h>
#include <kern/vfs/cred.h>
#include <kern/vfs/buf.h>
#include <drivers/block/bio.h>
#include <kern/arch/cpu.h>
#include <kern/vm/kmem.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/sched/thread.h>

/* A mismatch in data read back. */


/* ---- s5_rw ---- */

/* Logical blocks of the contiguous part: direct, single and some double. */
#define RW_BLOCKS 300
/* A far logical block, in the triple-indirect tree. */
#define RW_FAR_LBN (S5_NDADDR + S5_NBLK1 + S5_NBLK2 + 3)

static int rw_big_file(struct s5t *t, struct vnode *vp, uint64_t free0)
{
    KT_ASSERT_EQ(t_write_pat(vp, 0, RW_BLOCKS * S5_BSIZE, 1, 3000), 0);
    uint64_t far = (uint64_t)RW_FAR_LBN * S5_BSIZE + 100;
    KT_ASSERT_EQ(t_write_pat(vp, far, 700, 1, 700), 0);
    KT_ASSERT_EQ(t_check_pat(vp, 0, RW_BLOCKS * S5_BSIZE, 1, 5000), 0);
    KT_ASSERT_EQ(t_check_pat(vp, far, 700, 1, 700), 0);
    /* Holes read as zeros: in the double tree, and before the far write. */
    KT_ASSERT(t_reads_zero(vp, (uint64_t)RW_BLOCKS * S5_BSIZE, 64));
    KT_ASSERT(t_reads_zero(vp, (uint64_t)(S5_NDADDR + S5_NBLK1 + 5000) * S5_BSIZE, 64));
    KT_ASSERT(t_reads_zero(vp, far - 64, 64));
    /* Blocks: the data, the indirect blocks of a contiguous file, and for
     * the far block its data block plus triple, double and single blocks. */
    uint64_t expect = RW_BLOCKS + s5_indir_blocks(RW_BLOCKS) + 4;
    struct vattr va;
    KT_ASSERT_EQ(VOP_GETATTR(vp, &va, kcred), 0);
    KT_ASSERT_EQ(va.va_size, far + 700);
    KT_ASSERT_EQ(va.va_blocks, expect * 2);
    KT_ASSERT_EQ(free0 - t_bfree(t), expect);
    /* Truncating to zero gives every block back. */
    KT_ASSERT_EQ(VOP_TRUNCATE(vp, 0, kcred), 0);
    KT_ASSERT_EQ(t_bfree(t), free0);
    KT_ASSERT_EQ(VOP_GETATTR(vp, &va, kcred), 0);
    KT_ASSERT_EQ(va.va_blocks, 0);
    return 0;
}

static int rw_partial_truncate(struct s5t *t, struct vnode *vp, uint64_t free0)
{
    KT_ASSERT_EQ(t_write_pat(vp, 0, 20 * S5_BSIZE, 2, 4096), 0);
    KT_ASSERT_EQ(free0 - t_bfree(t), 20 + s5_indir_blocks(20));
    KT_ASSERT_EQ(VOP_TRUNCATE(vp, 5000, kcred), 0);
    KT_ASSERT_EQ(free0 - t_bfree(t), 5);
    KT_ASSERT_EQ(t_check_pat(vp, 0, 5000, 2, 5000), 0);
    /* Extending again shows zeros where the old data was. */
    KT_ASSERT_EQ(VOP_TRUNCATE(vp, 10000, kcred), 0);
    KT_ASSERT(t_reads_zero(vp, 5000, 64));
    KT_ASSERT(t_reads_zero(vp, 9000, 64));
    KT_ASSERT_EQ(free0 - t_bfree(t), 5);
    /* EFBIG at the largest size; one byte short of it works. */
    uint8_t two[2] = { 1, 2 };
    size_t moved;
    KT_ASSERT_EQ(t_io(vp, true, two, 2, S5_MAXFILESIZE, 0, &moved), -EFBIG);
    KT_ASSERT_EQ(t_io(vp, true, two, 2, S5_MAXFILESIZE - 1, 0, &moved), 0);
    KT_ASSERT_EQ(moved, 1);
    KT_ASSERT_EQ(VOP_TRUNCATE(vp, (uint64_t)S5_MAXFILESIZE + 1, kcred), -EFBIG);
    KT_ASSERT_EQ(VOP_TRUNCATE(vp, 10000, kcred), 0);
    KT_ASSERT_EQ(free0 - t_bfree(t), 5);
    return 0;
}

/* The superblock inside a copy of block 0. */
static struct s5_super *super_in(void *block0)
{
    return (struct s5_super *)((uint8_t *)block0 + S5_SBOFF);
}

static bool disk_is_clean(struct blkdev *dev)
{
    uint8_t *blk = kmalloc(S5_BSIZE);
    bool clean = blk && t_raw_block(dev, S5_SUPERBLOCK, blk, false) == 0 &&
                 s5_sb_is_clean(super_in(blk));
    kfree(blk);
    return clean;
}

KTEST(s5_rw)
{
    struct s5t t;
    struct vnode *vp;
    KT_ASSERT_EQ(t_fresh(&t, 4096, 256), 0);
    KT_ASSERT(!disk_is_clean(t.dev));           /* active while mounted */
    uint64_t free0 = t_bfree(&t);
    KT_ASSERT_EQ(t_create(t.root, "big", &vp), 0);
    int r = rw_big_file(&t, vp, free0);
    if (!r)
        r = rw_partial_truncate(&t, vp, free0);
    VN_RELE(vp);
    if (r)
        return r;
    struct s5_check_result res;
    KT_ASSERT_EQ(t_finish(&t, &res), 0);
    KT_ASSERT(res.clean);
    KT_ASSERT_EQ(res.files, 1);                 /* "big" (the bad-block inode is not counted) */
    /* After a remount the data is still there. */
    KT_ASSERT_EQ(t_mount(&t, t.dev), 0);
    KT_ASSERT_EQ(VOP_LOOKUP(t.root, "big", &vp, kcred), 0);
    struct vattr va;
    KT_ASSERT_EQ(VOP_GETATTR(vp, &va, kcred), 0);
    KT_ASSERT_EQ(va.va_size, 10000);
    r = t_check_pat(vp, 0, 5000, 2, 1000);
    VN_RELE(vp);
    KT_ASSERT_EQ(r, 0);
    KT_ASSERT_EQ(t_finish(&t, NULL), 0);
    return 0;
}

/* ---- s5_names ---- */

/* Read the whole directory; count entries and check that the names in
 * want[] are all there.  Reads with a small buffer to test resumption. */
static int readdir_all(struct vnode *dvp, const char *const *want, int nwant, int *count)
{
    char buf[80];
    uint64_t off = 0;
    bool eof = false;
    int found = 0, n = 0;
    for (int rounds = 0; !eof && rounds < 1000; rounds++) {
        struct uio uio = { .uio_base = buf, .uio_resid = sizeof buf, .uio_offset = off };
        int err = VOP_READDIR(dvp, &uio, kcred, &eof);
        if (err)
            return err;
        size_t len = sizeof buf - uio.uio_resid;
        for (size_t p = 0; p < len; ) {
            struct dirent64 *d = (struct dirent64 *)(buf + p);
            if (d->d_reclen == 0 || d->d_off % S5_DIRENT_SIZE != 0)
                return -EINVAL;
            for (int i = 0; i < nwant; i++)
                if (strcmp(d->d_name, want[i]) == 0)
                    found |= 1 << i;
            n++;
            off = (uint64_t)d->d_off;
            p += d->d_reclen;
        }
        if (len == 0)
            off = uio.uio_offset;
    }
    *count = n;
    return found == (1 << nwant) - 1 ? 0 : -ENOENT;
}

KTEST(s5_names)
{
    struct s5t t;
    struct vnode *vp, *vp2;
    KT_ASSERT_EQ(t_fresh(&t, 1024, 128), 0);
    const char *name14 = "abcdefghijklmn", *name15 = "abcdefghijklmno";
    KT_ASSERT_EQ(t_create(t.root, name15, &vp), -ENAMETOOLONG);
    KT_ASSERT_EQ(t_mkdir(t.root, name15, NULL), -ENAMETOOLONG);
    KT_ASSERT_EQ(VOP_LOOKUP(t.root, name15, &vp, kcred), -ENAMETOOLONG);
    KT_ASSERT_EQ(t_create(t.root, name14, &vp), 0);
    KT_ASSERT_EQ(VOP_LOOKUP(t.root, name14, &vp2, kcred), 0);
    KT_ASSERT(vp2 == vp);
    VN_RELE(vp2);
    KT_ASSERT_EQ(t_create(t.root, name14, &vp2), -EEXIST);
    VN_RELE(vp);
    KT_ASSERT_EQ(VOP_LOOKUP(t.root, "abcdefghijklm", &vp, kcred), -ENOENT);
    /* "." and ".." of the root are the root. */
    KT_ASSERT_EQ(VOP_LOOKUP(t.root, ".", &vp, kcred), 0);
    KT_ASSERT(vp == t.root);
    VN_RELE(vp);
    KT_ASSERT_EQ(VOP_LOOKUP(t.root, "..", &vp, kcred), 0);
    KT_ASSERT(vp == t.root);
    VN_RELE(vp);
    /* A subdirectory's ".." is its parent. */
    KT_ASSERT_EQ(t_mkdir(t.root, "sub", &vp), 0);
    KT_ASSERT_EQ(VOP_LOOKUP(vp, "..", &vp2, kcred), 0);
    KT_ASSERT(vp2 == t.root);
    VN_RELE(vp2);
    /* Symbolic links keep their target in a data block. */
    struct vattr va = { .va_mode = 0777 };
    KT_ASSERT_EQ(VOP_SYMLINK(vp, "ln", &va, "../abcdefghijklmn", kcred), 0);
    KT_ASSERT_EQ(VOP_LOOKUP(vp, "ln", &vp2, kcred), 0);
    KT_ASSERT_EQ(vp2->v_type, VLNK);
    char target[64] = { 0 };
    struct uio uio = { .uio_base = target, .uio_resid = sizeof target - 1 };
    KT_ASSERT_EQ(VOP_READLINK(vp2, &uio, kcred), 0);
    KT_ASSERT(strcmp(target, "../abcdefghijklmn") == 0);
    VN_RELE(vp2);
    VN_RELE(vp);
    /* Enough entries for readdir to need several calls and two blocks. */
    for (int i = 0; i < 70; i++) {
        char name[16];
        snprintf(name, sizeof name, "file%02d", i);
        KT_ASSERT_EQ(t_create(t.root, name, &vp), 0);
        VN_RELE(vp);
    }
    KT_ASSERT_EQ(VOP_REMOVE(t.root, "file10", kcred), 0);
    static const char *const want[] = { ".", "..", "abcdefghijklmn", "sub", "file00", "file69" };
    int count = 0;
    KT_ASSERT_EQ(readdir_all(t.root, want, 6, &count), 0);
    KT_ASSERT_EQ(count, 2 + 1 + 1 + 69);
    KT_ASSERT_EQ(t_finish(&t, NULL), 0);
    return 0;
}

/* ---- s5_enospc ---- */

KTEST(s5_enospc)
{
    struct s5t t;
    struct vnode *vp;
    KT_ASSERT_EQ(t_fresh(&t, 200, 32), 0);
    uint64_t free0 = t_bfree(&t), ffree0 = t_ffree(&t);
    KT_ASSERT_EQ(t_create(t.root, "fill", &vp), 0);
    int err = t_write_pat(vp, 0, 400 * S5_BSIZE, 3, 2048);
    KT_ASSERT_EQ(err, -ENOSPC);
    KT_ASSERT_EQ(t_bfree(&t), 0);
    /* Everything written before the disk filled reads back. */
    struct vattr va;
    KT_ASSERT_EQ(VOP_GETATTR(vp, &va, kcred), 0);
    KT_ASSERT(va.va_size > 100 * S5_BSIZE);
    KT_ASSERT_EQ(t_check_pat(vp, 0, va.va_size, 3, 4096), 0);
    KT_ASSERT_EQ(va.va_blocks / 2, free0);
    VN_RELE(vp);
    /* A new directory needs a block: none left. */
    KT_ASSERT_EQ(t_mkdir(t.root, "d", NULL), -ENOSPC);
    KT_ASSERT_EQ(t_ffree(&t), ffree0 - 1);
    /* Inodes run out too (empty files need no block). */
    int made = 0;
    for (int i = 0; i < 64; i++) {
        char name[16];
        snprintf(name, sizeof name, "e%d", i);
        err = t_create(t.root, name, &vp);
        if (err)
            break;
        VN_RELE(vp);
        made++;
    }
    KT_ASSERT_EQ(err, -ENOSPC);
    KT_ASSERT_EQ(made, (int)ffree0 - 1);
    KT_ASSERT_EQ(t_ffree(&t), 0);
    struct s5_check_result res;
    KT_ASSERT_EQ(t_finish(&t, &res), 0);
    KT_ASSERT_EQ(res.nfree, 0);
    /* Removing it all gives every block and inode back. */
    KT_ASSERT_EQ(t_mount(&t, t.dev), 0);
    KT_ASSERT_EQ(VOP_REMOVE(t.root, "fill", kcred), 0);
    for (int i = 0; i < made; i++) {
        char name[16];
        snprintf(name, sizeof name, "e%d", i);
        KT_ASSERT_EQ(VOP_REMOVE(t.root, name, kcred), 0);
    }
    KT_ASSERT_EQ(t_bfree(&t), free0);
    KT_ASSERT_EQ(t_ffree(&t), ffree0);
    KT_ASSERT_EQ(t_finish(&t, &res), 0);
    KT_ASSERT_EQ(res.nfree, free0);
    return 0;
}

/* ---- s5_links ---- */

static int links_files(struct s5t *t)
{
    struct vnode *a, *f, *vp;
    KT_ASSERT_EQ(t_mkdir(t->root, "a", &a), 0);
    KT_ASSERT_EQ(t_create(a, "f", &f), 0);
    KT_ASSERT_EQ(VOP_LINK(t->root, f, "g", kcred), 0);
    KT_ASSERT_EQ(t_nlink(f), 2);
    KT_ASSERT_EQ(VOP_LINK(t->root, f, "g", kcred), -EEXIST);
    KT_ASSERT_EQ(VOP_LINK(t->root, a, "adir", kcred), -EPERM);
    KT_ASSERT_EQ(VOP_REMOVE(a, "f", kcred), 0);
    KT_ASSERT_EQ(t_nlink(f), 1);
    KT_ASSERT_EQ(VOP_REMOVE(t->root, "a", kcred), -EISDIR);
    /* Rename over an existing file frees the file it replaces. */
    KT_ASSERT_EQ(t_create(t->root, "h", &vp), 0);
    VN_RELE(vp);
    uint64_t ffree = t_ffree(t);
    KT_ASSERT_EQ(VOP_RENAME(t->root, "g", t->root, "h", kcred), 0);
    KT_ASSERT_EQ(t_ffree(t), ffree + 1);
    KT_ASSERT_EQ(VOP_LOOKUP(t->root, "h", &vp, kcred), 0);
    KT_ASSERT(vp == f);
    VN_RELE(vp);
    KT_ASSERT_EQ(VOP_LOOKUP(t->root, "g", &vp, kcred), -ENOENT);
    KT_ASSERT_EQ(t_nlink(f), 1);
    /* Across directories, and to a name that is already the same file. */
    KT_ASSERT_EQ(VOP_RENAME(t->root, "h", a, "f2", kcred), 0);
    KT_ASSERT_EQ(VOP_LINK(t->root, f, "same", kcred), 0);
    KT_ASSERT_EQ(VOP_RENAME(t->root, "same", a, "f2", kcred), 0);
    KT_ASSERT_EQ(t_nlink(f), 2);
    KT_ASSERT_EQ(VOP_REMOVE(t->root, "same", kcred), 0);
    KT_ASSERT_EQ(t_nlink(f), 1);
    VN_RELE(f);
    VN_RELE(a);
    return 0;
}

static int links_dirs(struct s5t *t)
{
    struct vnode *a, *b, *c, *vp;
    KT_ASSERT_EQ(VOP_LOOKUP(t->root, "a", &a, kcred), 0);
    KT_ASSERT_EQ(t_nlink(t->root), 3);          /* ".", "..", a's ".." */
    KT_ASSERT_EQ(t_mkdir(a, "b", &b), 0);
    KT_ASSERT_EQ(t_nlink(a), 3);
    KT_ASSERT_EQ(t_nlink(b), 2);
    KT_ASSERT_EQ(t_mkdir(b, "c", &c), 0);
    /* A directory may not move into its own subtree. */
    KT_ASSERT_EQ(VOP_RENAME(a, "b", c, "b2", kcred), -EINVAL);
    KT_ASSERT_EQ(VOP_RENAME(a, "b", b, "b2", kcred), -EINVAL);
    /* Moving b to the root moves its ".." link from a to the root. */
    KT_ASSERT_EQ(VOP_RENAME(a, "b", t->root, "b", kcred), 0);
    KT_ASSERT_EQ(t_nlink(a), 2);
    KT_ASSERT_EQ(t_nlink(t->root), 4);
    KT_ASSERT_EQ(VOP_LOOKUP(b, "..", &vp, kcred), 0);
    KT_ASSERT(vp == t->root);
    VN_RELE(vp);
    /* Over a non-empty directory: no; over an empty one: yes. */
    KT_ASSERT_EQ(t_mkdir(a, "e", NULL), 0);
    KT_ASSERT_EQ(VOP_RENAME(a, "e", t->root, "b", kcred), -ENOTEMPTY);
    KT_ASSERT_EQ(VOP_RMDIR(t->root, "b", kcred), -ENOTEMPTY);
    KT_ASSERT_EQ(VOP_RENAME(t->root, "b", a, "e", kcred), 0);
    KT_ASSERT_EQ(t_nlink(t->root), 3);
    KT_ASSERT_EQ(t_nlink(a), 3);                /* b replaced e */
    KT_ASSERT_EQ(VOP_LOOKUP(b, "..", &vp, kcred), 0);
    KT_ASSERT(vp == a);
    VN_RELE(vp);
    /* A directory over a file, a file over a directory. */
    KT_ASSERT_EQ(VOP_RENAME(a, "e", a, "f2", kcred), -ENOTDIR);
    KT_ASSERT_EQ(VOP_RENAME(a, "f2", a, "e", kcred), -EISDIR);
    VN_RELE(c);
    VN_RELE(b);
    VN_RELE(a);
    return 0;
}

static int links_rmdir(struct s5t *t)
{
    struct vnode *a, *vp;
    KT_ASSERT_EQ(VOP_LOOKUP(t->root, "a", &a, kcred), 0);
    KT_ASSERT_EQ(VOP_RMDIR(a, "e", kcred), -ENOTEMPTY);
    KT_ASSERT_EQ(VOP_LOOKUP(a, "e", &vp, kcred), 0);
    KT_ASSERT_EQ(VOP_RMDIR(vp, "c", kcred), 0);
    KT_ASSERT_EQ(t_nlink(vp), 2);
    VN_RELE(vp);
    KT_ASSERT_EQ(VOP_RMDIR(a, "e", kcred), 0);
    KT_ASSERT_EQ(t_nlink(a), 2);
    KT_ASSERT_EQ(VOP_RMDIR(a, "f2", kcred), -ENOTDIR);
    KT_ASSERT_EQ(VOP_RMDIR(a, "nothing", kcred), -ENOENT);
    VN_RELE(a);
    return 0;
}

/* EMLINK at S5_MAXLINK links; every name then removed. */
static int links_max(struct s5t *t)
{
    struct vnode *d, *f;
    KT_ASSERT_EQ(t_mkdir(t->root, "many", &d), 0);
    KT_ASSERT_EQ(t_create(d, "m", &f), 0);
    char name[16];
    int err = 0;
    for (int i = 1; i < S5_MAXLINK && !err; i++) {
        snprintf(name, sizeof name, "l%d", i);
        err = VOP_LINK(d, f, name, kcred);
    }
    KT_ASSERT_EQ(err, 0);
    KT_ASSERT_EQ(t_nlink(f), S5_MAXLINK);
    KT_ASSERT_EQ(VOP_LINK(d, f, "one_more", kcred), -EMLINK);
    for (int i = 1; i < S5_MAXLINK && !err; i++) {
        snprintf(name, sizeof name, "l%d", i);
        err = VOP_REMOVE(d, name, kcred);
    }
    KT_ASSERT_EQ(err, 0);
    KT_ASSERT_EQ(t_nlink(f), 1);
    VN_RELE(f);
    VN_RELE(d);
    return 0;
}

KTEST(s5_links)
{
    struct s5t t;
    KT_ASSERT_EQ(t_fresh(&t, 2048, 128), 0);
    int r = links_files(&t);
    if (!r)
        r = links_dirs(&t);
    if (!r)
        r = links_rmdir(&t);
    if (!r)
        r = links_max(&t);
    if (r) {
        t_unmount(&t);
        return r;
    }
    KT_ASSERT_EQ(t_lookup_nlink(t.root, "a"), 2);
    struct s5_check_result res;
    KT_ASSERT_EQ(t_finish(&t, &res), 0);
    KT_ASSERT_EQ(res.dirs, 3);                  /* root, a, many */
    return 0;
}

/* ---- s5_corrupt ---- */

/* Make a small file system with a file "f" of 3 blocks and a directory
 * "d", unmounted; *ino_f and *ino_d get their inode numbers. */
static int corrupt_base(struct blkdev *dev, uint32_t *ino_f, uint32_t *ino_d)
{
    struct s5t t;
    struct vnode *vp;
    struct vattr va;
    int err = t_fresh(&t, 600, 64);
    if (err)
        return err;
    err = t_create(t.root, "f", &vp);
    if (!err) {
        err = t_write_pat(vp, 0, 3 * S5_BSIZE, 9, 1024);
        VOP_GETATTR(vp, &va, kcred);
        *ino_f = (uint32_t)va.va_ino;
        VN_RELE(vp);
    }
    if (!err)
        err = t_mkdir(t.root, "d", &vp);
    if (!err) {
        VOP_GETATTR(vp, &va, kcred);
        *ino_d = (uint32_t)va.va_ino;
        VN_RELE(vp);
    }
    int e = t_unmount(&t);
    return err ? err : e;
}

/* Read-modify-write of the superblock or an inode on the raw disk. */
static int patch_super(struct blkdev *dev, void (*fn)(struct s5_super *))
{
    uint8_t *blk = kmalloc(S5_BSIZE);
    if (!blk)
        return -ENOMEM;
    int err = t_raw_block(dev, S5_SUPERBLOCK, blk, false);
    if (!err) {
        fn(super_in(blk));
        err = t_raw_block(dev, S5_SUPERBLOCK, blk, true);
    }
    kfree(blk);
    return err;
}

static int patch_inode(struct blkdev *dev, uint32_t ino, int addr_slot, uint32_t addr,
                       int64_t size)
{
    uint8_t *blk = kmalloc(S5_BSIZE);
    if (!blk)
        return -ENOMEM;
    int err = t_raw_block(dev, s5_itod(ino), blk, false);
    if (!err) {
        struct s5_dinode *di = (struct s5_dinode *)(blk + s5_itooff(ino));
        if (addr_slot >= 0)
            s5_setaddr(di, addr_slot, addr);
        if (size >= 0)
            di->di_size = (uint32_t)size;
        err = t_raw_block(dev, s5_itod(ino), blk, true);
    }
    kfree(blk);
    return err;
}

static void sb_bad_magic(struct s5_super *sb) { sb->s_magic = 0x12345678; }
static void sb_nfree_51(struct s5_super *sb) { sb->s_nfree = 51; }
static void sb_fsize_huge(struct s5_super *sb) { sb->s_fsize = 100000; }
static void sb_isize_big(struct s5_super *sb) { sb->s_isize = (uint16_t)sb->s_fsize; }

static int corrupt_superblocks(struct blkdev *dev)
{
    static void (*const fns[])(struct s5_super *) = {
        sb_bad_magic, sb_nfree_51, sb_fsize_huge, sb_isize_big
    };
    static const int want[] = { -EINVAL, -EUCLEAN, -EUCLEAN, -EUCLEAN };
    uint32_t ino_f, ino_d;
    for (size_t i = 0; i < ARRAY_SIZE(fns); i++) {
        KT_ASSERT_EQ(corrupt_base(dev, &ino_f, &ino_d), 0);
        KT_ASSERT_EQ(patch_super(dev, fns[i]), 0);
        struct s5t t;
        int err = t_mount(&t, dev);
        if (err == 0)
            t_unmount(&t);
        KT_ASSERT_EQ(err, want[i]);
    }
    /* The root inode not a directory. */
    KT_ASSERT_EQ(corrupt_base(dev, &ino_f, &ino_d), 0);
    uint8_t *blk = kmalloc(S5_BSIZE);
    KT_ASSERT(blk != NULL);
    t_raw_block(dev, s5_itod(S5_ROOTINO), blk, false);
    ((struct s5_dinode *)(blk + s5_itooff(S5_ROOTINO)))->di_mode = S5_IFREG | 0644;
    t_raw_block(dev, s5_itod(S5_ROOTINO), blk, true);
    kfree(blk);
    struct s5t t;
    KT_ASSERT_EQ(t_mount(&t, dev), -EUCLEAN);
    return 0;
}

/* Mount (which must work), try op, unmount. */
static int mount_and(struct blkdev *dev, int (*op)(struct s5t *), int want)
{
    struct s5t t;
    KT_ASSERT_EQ(t_mount(&t, dev), 0);
    int got = op(&t);
    t_unmount(&t);
    KT_ASSERT_EQ(got, want);
    return 0;
}

static int op_lookup_f(struct s5t *t)
{
    struct vnode *vp;
    int err = VOP_LOOKUP(t->root, "f", &vp, kcred);
    if (!err)
        VN_RELE(vp);
    return err;
}

static int op_read_f(struct s5t *t)
{
    struct vnode *vp;
    int err = VOP_LOOKUP(t->root, "f", &vp, kcred);
    if (err)
        return err;
    uint8_t buf[32];
    err = t_io(vp, false, buf, sizeof buf, 10, 0, NULL);
    VN_RELE(vp);
    return err;
}

static int op_write_new(struct s5t *t)
{
    struct vnode *vp;
    int err = t_create(t->root, "new", &vp);
    if (err)
        return err;
    err = t_write_pat(vp, 0, 4 * S5_BSIZE, 5, 1024);
    VN_RELE(vp);
    return err;
}

static int op_lookup_d(struct s5t *t)
{
    struct vnode *vp;
    int err = VOP_LOOKUP(t->root, "d", &vp, kcred);
    if (!err)
        VN_RELE(vp);
    return err;
}

/* Point root entry slot 2 (the first name made) at inode ino. */
static int patch_root_entry(struct blkdev *dev, uint32_t root_block, uint16_t ino)
{
    uint8_t *blk = kmalloc(S5_BSIZE);
    if (!blk)
        return -ENOMEM;
    int err = t_raw_block(dev, root_block, blk, false);
    ((struct s5_direct *)blk)[2].d_ino = ino;
    if (!err)
        err = t_raw_block(dev, root_block, blk, true);
    kfree(blk);
    return err;
}

static int corrupt_operations(struct blkdev *dev)
{
    uint32_t ino_f, ino_d;
    uint8_t *blk = kmalloc(S5_BSIZE);
    KT_ASSERT(blk != NULL);
    struct s5_super *sb = super_in(blk);
    /* A directory entry past the inode list. */
    KT_ASSERT_EQ(corrupt_base(dev, &ino_f, &ino_d), 0);
    t_raw_block(dev, S5_SUPERBLOCK, blk, false);
    uint32_t root_block = sb->s_isize, fsize = sb->s_fsize, ninodes = s5_ninodes(sb);
    KT_ASSERT_EQ(patch_root_entry(dev, root_block, (uint16_t)(ninodes + 5)), 0);
    if (mount_and(dev, op_lookup_f, -EUCLEAN))
        goto fail;
    /* A block pointer past the end of the file system. */
    KT_ASSERT_EQ(corrupt_base(dev, &ino_f, &ino_d), 0);
    KT_ASSERT_EQ(patch_inode(dev, ino_f, 0, fsize + 5, -1), 0);
    if (mount_and(dev, op_read_f, -EUCLEAN))
        goto fail;
    /* A free-list chain block claiming more than 50 entries. */
    KT_ASSERT_EQ(corrupt_base(dev, &ino_f, &ino_d), 0);
    t_raw_block(dev, S5_SUPERBLOCK, blk, false);
    uint32_t chain = sb->s_free[0];
    KT_ASSERT(chain != 0);
    t_raw_block(dev, chain, blk, false);
    ((struct s5_fblk *)blk)->df_nfree = 77;
    t_raw_block(dev, chain, blk, true);
    if (mount_and(dev, op_write_new, -EUCLEAN))
        goto fail;
    /* An absurd directory size. */
    KT_ASSERT_EQ(corrupt_base(dev, &ino_f, &ino_d), 0);
    KT_ASSERT_EQ(patch_inode(dev, ino_d, -1, 0, 0x7fff0000), 0);
    if (mount_and(dev, op_lookup_d, -EUCLEAN))
        goto fail;
    kfree(blk);
    return 0;
fail:
    kfree(blk);
    return 1;
}

KTEST(s5_corrupt)
{
    struct blkdev *dev = t_disk();
    KT_ASSERT(dev != NULL);
    int r = corrupt_superblocks(dev);
    if (!r)
        r = corrupt_operations(dev);
    return r;
}

/* ---- s5_svr4: the layout Linux's sysv driver shares ---- */

/* The boot sector, the first half of block 0, survives mount, writes and
 * unmount; the superblock in the second half is clean afterwards. */
static int svr4_boot_sector(void)
{
    struct s5t t;
    struct vnode *vp;
    KT_ASSERT_EQ(t_fresh(&t, 300, 32), 0);
    KT_ASSERT_EQ(t_unmount(&t), 0);
    uint8_t *blk = kmalloc(S5_BSIZE);
    KT_ASSERT(blk != NULL);
    KT_ASSERT_EQ(t_raw_block(t.dev, S5_SUPERBLOCK, blk, false), 0);
    for (int i = 0; i < S5_SBOFF; i++)
        blk[i] = (uint8_t)(i * 7 + 1);
    KT_ASSERT_EQ(t_raw_block(t.dev, S5_SUPERBLOCK, blk, true), 0);
    KT_ASSERT_EQ(t_mount(&t, t.dev), 0);
    KT_ASSERT_EQ(t_create(t.root, "f", &vp), 0);
    KT_ASSERT_EQ(t_write_pat(vp, 0, 5 * S5_BSIZE, 2, 1024), 0);
    VN_RELE(vp);
    KT_ASSERT_EQ(VFS_SYNC(&t.vfs, kcred), 0);
    KT_ASSERT_EQ(t_finish(&t, NULL), 0);
    memset(blk, 0, S5_BSIZE);
    KT_ASSERT_EQ(t_raw_block(t.dev, S5_SUPERBLOCK, blk, false), 0);
    int kept = 1;
    for (int i = 0; i < S5_SBOFF; i++)
        kept &= blk[i] == (uint8_t)(i * 7 + 1);
    bool clean = s5_sb_is_clean(super_in(blk)) && super_in(blk)->s_magic == S5_MAGIC;
    kfree(blk);
    KT_ASSERT(kept);
    KT_ASSERT(clean);
    return 0;
}

/*
 * A free list as Linux leaves it after freeing a block into an empty cache:
 * the block freed holds a chain block with a count of 0, so the list ends
 * with it.  The kernel hands out the plain entries, then that block, then
 * reports no space; freeing restarts the list.  (The other free blocks are
 * left out of the list on purpose, so no fsck at the end.)
 */
static int svr4_empty_chain_block(void)
{
    struct s5t t;
    struct vnode *vp;
    KT_ASSERT_EQ(t_fresh(&t, 300, 32), 0);
    KT_ASSERT_EQ(t_unmount(&t), 0);
    uint8_t *blk = kmalloc(S5_BSIZE);
    KT_ASSERT(blk != NULL);
    struct s5_super *sb = super_in(blk);
    KT_ASSERT_EQ(t_raw_block(t.dev, S5_SUPERBLOCK, blk, false), 0);
    uint32_t x = sb->s_isize + 10;
    sb->s_nfree = 3;
    sb->s_free[0] = x;
    sb->s_free[1] = x + 1;
    sb->s_free[2] = x + 2;
    sb->s_tfree = 3;
    KT_ASSERT_EQ(t_raw_block(t.dev, S5_SUPERBLOCK, blk, true), 0);
    memset(blk, 0, S5_BSIZE);
    KT_ASSERT_EQ(t_raw_block(t.dev, x, blk, true), 0);
    kfree(blk);
    KT_ASSERT_EQ(t_mount(&t, t.dev), 0);
    KT_ASSERT_EQ(t_bfree(&t), 3);
    KT_ASSERT_EQ(t_create(t.root, "f", &vp), 0);
    KT_ASSERT_EQ(t_write_pat(vp, 0, 3 * S5_BSIZE, 4, 1024), 0);
    KT_ASSERT_EQ(t_bfree(&t), 0);
    KT_ASSERT_EQ(t_write_pat(vp, 3 * S5_BSIZE, S5_BSIZE, 4, 1024), -ENOSPC);
    KT_ASSERT_EQ(t_check_pat(vp, 0, 3 * S5_BSIZE, 4, 1024), 0);
    VN_RELE(vp);
    KT_ASSERT_EQ(VOP_REMOVE(t.root, "f", kcred), 0);
    KT_ASSERT_EQ(t_bfree(&t), 3);
    KT_ASSERT_EQ(t_create(t.root, "g", &vp), 0);
    KT_ASSERT_EQ(t_write_pat(vp, 0, 3 * S5_BSIZE, 6, 1024), 0);
    KT_ASSERT_EQ(t_check_pat(vp, 0, 3 * S5_BSIZE, 6, 1024), 0);
    VN_RELE(vp);
    KT_ASSERT_EQ(t_unmount(&t), 0);
    return 0;
}

KTEST(s5_svr4)
{
    int r = svr4_boot_sector();
    return r ? r : svr4_empty_chain_block();
}

/* ---- s5_attr ---- */

KTEST(s5_attr)
{
    struct s5t t;
    struct vnode *vp;
    KT_ASSERT_EQ(t_fresh(&t, 1024, 64), 0);
    struct cred *user = cred_alloc(100, 100), *other = cred_alloc(200, 200);
    KT_ASSERT(user && other);
    struct vattr va = { .va_type = VREG, .va_mode = 0640 };
    KT_ASSERT_EQ(VOP_CREATE(t.root, "u", &va, true, &vp, kcred), 0);
    /* Only root gives a file away. */
    struct vattr set = { .va_mask = AT_UID | AT_GID, .va_uid = 100, .va_gid = 100 };
    KT_ASSERT_EQ(VOP_SETATTR(vp, &set, user), -EPERM);
    KT_ASSERT_EQ(VOP_SETATTR(vp, &set, kcred), 0);
    set = (struct vattr){ .va_mask = AT_UID, .va_uid = 200 };
    KT_ASSERT_EQ(VOP_SETATTR(vp, &set, user), -EPERM);
    /* The owner changes the mode; someone else may not. */
    set = (struct vattr){ .va_mask = AT_MODE, .va_mode = 0604 };
    KT_ASSERT_EQ(VOP_SETATTR(vp, &set, other), -EPERM);
    KT_ASSERT_EQ(VOP_SETATTR(vp, &set, user), 0);
    struct vattr got;
    KT_ASSERT_EQ(VOP_GETATTR(vp, &got, kcred), 0);
    KT_ASSERT_EQ(got.va_mode, S_IFREG | 0604);
    KT_ASSERT_EQ(got.va_uid, 100);
    KT_ASSERT_EQ(VOP_ACCESS(vp, VREAD, other), 0);
    KT_ASSERT_EQ(VOP_ACCESS(vp, VWRITE, other), -EACCES);
    KT_ASSERT_EQ(VOP_ACCESS(vp, VWRITE, user), 0);
    /* Size through setattr needs write permission. */
    set = (struct vattr){ .va_mask = AT_SIZE, .va_size = 5000 };
    KT_ASSERT_EQ(VOP_SETATTR(vp, &set, other), -EACCES);
    KT_ASSERT_EQ(VOP_SETATTR(vp, &set, user), 0);
    KT_ASSERT_EQ(VOP_GETATTR(vp, &got, kcred), 0);
    KT_ASSERT_EQ(got.va_size, 5000);
    /* IO_APPEND writes at the end whatever the offset. */
    uint8_t abc[3] = { 'a', 'b', 'c' };
    size_t moved;
    KT_ASSERT_EQ(t_io(vp, true, abc, 3, 0, IO_APPEND, &moved), 0);
    KT_ASSERT_EQ(VOP_GETATTR(vp, &got, kcred), 0);
    KT_ASSERT_EQ(got.va_size, 5003);
    uint8_t back[3];
    KT_ASSERT_EQ(t_io(vp, false, back, 3, 5000, 0, &moved), 0);
    KT_ASSERT(memcmp(back, abc, 3) == 0);
    KT_ASSERT_EQ(VOP_IOCTL(vp, 1, NULL, kcred), -ENOTTY);
    /* Nobody but root writes in a 0755 root-owned directory. */
    struct vnode *x;
    KT_ASSERT_EQ(VOP_CREATE(t.root, "x", &va, true, &x, user), -EACCES);
    VN_RELE(vp);
    /* A character device keeps its number across a remount; SVR4's 16-bit
     * dev_t holds 8 bits of major and minor, and more is EINVAL as on
     * Linux's sysv. */
    struct vattr dva = { .va_type = VCHR, .va_mode = 0600, .va_rdev = vn_makedev(4, 300) };
    KT_ASSERT_EQ(VOP_CREATE(t.root, "tty", &dva, true, &vp, kcred), -EINVAL);
    dva.va_rdev = vn_makedev(4, 200);
    KT_ASSERT_EQ(VOP_CREATE(t.root, "tty", &dva, true, &vp, user), -EPERM);
    KT_ASSERT_EQ(VOP_CREATE(t.root, "tty", &dva, true, &vp, kcred), 0);
    KT_ASSERT_EQ(vp->v_type, VCHR);
    VN_RELE(vp);
    /* The mounted disk is claimed: no second mount, no mkfs. */
    struct s5t t2;
    KT_ASSERT_EQ(t_mount(&t2, t.dev), -EBUSY);
    KT_ASSERT_EQ(s5_mkfs(t.dev, 1024, 64), -EBUSY);
    cred_rele(user);
    cred_rele(other);
    KT_ASSERT_EQ(t_finish(&t, NULL), 0);
    KT_ASSERT_EQ(t_mount(&t, t.dev), 0);
    KT_ASSERT_EQ(VOP_LOOKUP(t.root, "tty", &vp, kcred), 0);
    KT_ASSERT_EQ(VOP_GETATTR(vp, &got, kcred), 0);
    VN_RELE(vp);
    KT_ASSERT_EQ(got.va_rdev, vn_makedev(4, 200));
    KT_ASSERT_EQ(got.va_mode, S_IFCHR | 0600);
    KT_ASSERT_EQ(t_finish(&t, NULL), 0);
    return 0;
}

/* ---- s5_vfs ---- */

static int vfs_ops(void)
{
    struct vnode *vp;
    KT_ASSERT_EQ(vn_mkdir("/s5mnt/a", NULL, 0755, kcred), 0);
    KT_ASSERT_EQ(vn_open("/s5mnt/a/f", NULL, O_CREAT | O_EXCL | O_RDWR, 0644, &vp, kcred), 0);
    KT_ASSERT_EQ(t_write_pat(vp, 0, 5000, 11, 1000), 0);
    KT_ASSERT_EQ(vn_close(vp, O_RDWR, kcred), 0);
    KT_ASSERT_EQ(vn_rename("/s5mnt/a/f", "/s5mnt/g", NULL, kcred), 0);
    KT_ASSERT_EQ(vn_symlink("g", "/s5mnt/ln", NULL, kcred), 0);
    KT_ASSERT_EQ(vn_open("/s5mnt/ln", NULL, O_RDONLY, 0, &vp, kcred), 0);
    int r = t_check_pat(vp, 0, 5000, 11, 700);
    vn_close(vp, O_RDONLY, kcred);
    KT_ASSERT_EQ(r, 0);
    KT_ASSERT_EQ(vn_open("/s5mnt/abcdefghijklmno", NULL, O_CREAT | O_RDWR, 0644, &vp, kcred),
                 -ENAMETOOLONG);
    struct vattr va;
    KT_ASSERT_EQ(vn_stat("/s5mnt/a/..", NULL, true, &va, kcred), 0);
    KT_ASSERT_EQ(va.va_ino, S5_ROOTINO);
    /* Busy while a file in it is open. */
    KT_ASSERT_EQ(vn_open("/s5mnt/g", NULL, O_RDONLY, 0, &vp, kcred), 0);
    KT_ASSERT_EQ(vfs_unmount("/s5mnt", kcred), -EBUSY);
    vn_close(vp, O_RDONLY, kcred);
    KT_ASSERT_EQ(vn_remove("/s5mnt/ln", NULL, kcred), 0);
    KT_ASSERT_EQ(vn_rmdir("/s5mnt/a", NULL, kcred), 0);
    return 0;
}

KTEST(s5_vfs)
{
    KT_NEED_ROOT();
    struct blkdev *dev = t_disk();
    KT_ASSERT(dev != NULL);
    KT_ASSERT_EQ(s5_mkfs(dev, 2048, 128), 0);
    int err = vn_mkdir("/s5mnt", NULL, 0755, kcred);
    KT_ASSERT(err == 0 || err == -EEXIST);
    KT_ASSERT_EQ(vfs_mount("s5", dev->name, "/s5mnt", 0, kcred), 0);
    KT_ASSERT_EQ(vfs_mount("s5", dev->name, "/s5mnt", 0, kcred), -EBUSY);
    int r = vfs_ops();
    err = vfs_unmount("/s5mnt", kcred);
    vn_rmdir("/s5mnt", NULL, kcred);
    if (r)
        return r;
    KT_ASSERT_EQ(err, 0);
    struct s5_check_result res;
    KT_ASSERT_EQ(s5_check(dev, &res), 0);
    KT_ASSERT(res.clean);
    KT_ASSERT_EQ(res.files, 1);                 /* g */
    return 0;
}
