/*
 * Helpers shared by the S5 ktests; see kern/tests/s5t.h.
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

/* ---- mounting ---- */


static uint32_t next_fsid = 0x5500;

int t_mount(struct s5t *t, struct blkdev *dev)
{
    memset(&t->vfs, 0, sizeof t->vfs);
    t->dev = dev;
    t->vfs.vfs_op = &s5_vfsops;
    t->vfs.vfs_sw = &s5_vfssw;
    t->vfs.vfs_dev = dev;
    t->vfs.vfs_fsid = __atomic_add_fetch(&next_fsid, 1, __ATOMIC_RELAXED);
    int err = s5_vfsops.vfs_mount(&t->vfs, kcred);
    if (err)
        return err;
    return VFS_ROOT(&t->vfs, &t->root);
}

int t_unmount(struct s5t *t)
{
    VN_RELE(t->root);
    t->root = NULL;
    return s5_vfsops.vfs_unmount(&t->vfs, kcred);
}

/*
 * The tests' own RAM disk (8 MiB of 512-byte sectors, made at first use
 * and kept): ram0 may be the root file system (root=ram0).
 */
struct blkdev *t_disk(void)
{
    struct blkdev *dev = blk_find("s5ram");
    return dev ? dev : ramdisk_create("s5ram", 8, 512);
}

/* A fresh file system on the test disk, mounted. */
int t_fresh(struct s5t *t, uint32_t fsize, uint32_t ninodes)
{
    struct blkdev *dev = t_disk();
    if (!dev)
        return -ENXIO;
    int err = s5_mkfs(dev, fsize, ninodes);
    return err ? err : t_mount(t, dev);
}

/* Unmount and check the disk: the number of problems (0 good), or <0. */
int t_finish(struct s5t *t, struct s5_check_result *res)
{
    int err = t_unmount(t);
    if (err)
        return err;
    struct s5_check_result local;
    return s5_check(t->dev, res ? res : &local);
}

int t_on_fresh(uint32_t fsize, uint32_t ninodes, int (*body)(struct s5t *t))
{
    struct s5t t;
    KT_ASSERT_EQ(t_fresh(&t, fsize, ninodes), 0);
    int r = body(&t);
    KT_ASSERT_EQ(t_finish(&t, NULL), 0);
    return r;
}

uint64_t t_bfree(struct s5t *t)
{
    struct kstatfs st;
    VFS_STATFS(&t->vfs, &st);
    return st.f_bfree;
}

uint64_t t_ffree(struct s5t *t)
{
    struct kstatfs st;
    VFS_STATFS(&t->vfs, &st);
    return st.f_ffree;
}

/* ---- vnode helpers ---- */

int t_create(struct vnode *dvp, const char *name, struct vnode **vpp)
{
    struct vattr va = { .va_type = VREG, .va_mode = 0644 };
    return VOP_CREATE(dvp, name, &va, true, vpp, kcred);
}

int t_mkdir(struct vnode *dvp, const char *name, struct vnode **vpp)
{
    struct vattr va = { .va_type = VDIR, .va_mode = 0755 };
    struct vnode *vp;
    int err = VOP_MKDIR(dvp, name, &va, &vp, kcred);
    if (!err && vpp)
        *vpp = vp;
    else if (!err)
        VN_RELE(vp);
    return err;
}

int t_io(struct vnode *vp, bool write, void *buf, size_t len, uint64_t off, int ioflag,
         size_t *done)
{
    struct uio uio = { .uio_base = buf, .uio_resid = len, .uio_offset = off };
    int err = write ? VOP_WRITE(vp, &uio, ioflag, kcred) : VOP_READ(vp, &uio, ioflag, kcred);
    if (done)
        *done = len - uio.uio_resid;
    return err;
}

uint32_t t_nlink(struct vnode *vp)
{
    struct vattr va;
    VOP_GETATTR(vp, &va, kcred);
    return va.va_nlink;
}

int t_lookup_nlink(struct vnode *dvp, const char *name)
{
    struct vnode *vp;
    int err = VOP_LOOKUP(dvp, name, &vp, kcred);
    if (err)
        return err;
    int n = (int)t_nlink(vp);
    VN_RELE(vp);
    return n;
}

/* The byte at offset off of file number f. */
static uint8_t pat(uint64_t off, uint32_t f)
{
    return (uint8_t)((off * 31 + f * 7 + (off >> 10) * 13) & 0xff);
}

uint8_t t_pat(uint64_t off, uint32_t f)
{
    return pat(off, f);
}

static void fill_pat(uint8_t *buf, size_t len, uint64_t off, uint32_t f)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = pat(off + i, f);
}

/* Offset of the first byte of buf that is not the pattern, or -1. */
static int64_t bad_pat(const uint8_t *buf, size_t len, uint64_t off, uint32_t f)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != pat(off + i, f))
            return (int64_t)(off + i);
    return -1;
}

/* Write the pattern of file f over [off, off + len) in chunks of chunk. */
int t_write_pat(struct vnode *vp, uint64_t off, size_t len, uint32_t f, size_t chunk)
{
    uint8_t *buf = kmalloc(chunk);
    if (!buf)
        return -ENOMEM;
    int err = 0;
    for (size_t done = 0; done < len && !err; ) {
        size_t n = MIN(chunk, len - done), moved;
        fill_pat(buf, n, off + done, f);
        err = t_io(vp, true, buf, n, off + done, 0, &moved);
        if (!err && moved != n)
            err = -ENOSPC;
        done += n;
    }
    kfree(buf);
    return err;
}

/* Read back [off, off + len) and compare; -EILSEQ on a mismatch. */
int t_check_pat(struct vnode *vp, uint64_t off, size_t len, uint32_t f, size_t chunk)
{
    uint8_t *buf = kmalloc(chunk);
    if (!buf)
        return -ENOMEM;
    int err = 0;
    for (size_t done = 0; done < len && !err; ) {
        size_t n = MIN(chunk, len - done), moved;
        err = t_io(vp, false, buf, n, off + done, 0, &moved);
        if (!err && (moved != n || bad_pat(buf, n, off + done, f) >= 0)) {
            kprintf("ktest: s5: mismatch near offset %lu (moved %lu of %lu)\n",
                    (uint64_t)bad_pat(buf, n, off + done, f), moved, n);
            err = -EILSEQ;
        }
        done += n;
    }
    kfree(buf);
    return err;
}

/* Are the len bytes at off all zero? */
bool t_reads_zero(struct vnode *vp, uint64_t off, size_t len)
{
    uint8_t buf[64];
    size_t moved;
    len = MIN(len, sizeof buf);
    if (t_io(vp, false, buf, len, off, 0, &moved) || moved != len)
        return false;
    for (size_t i = 0; i < len; i++)
        if (buf[i])
            return false;
    return true;
}

/* Raw access to S5 block bno of dev (for corrupting a disk on purpose). */
int t_raw_block(struct blkdev *dev, uint32_t bno, void *buf, bool write)
{
    uint32_t per = S5_BSIZE / dev->bsize;
    return blk_rw(dev, (uint64_t)bno * per, per, buf, write);
}
