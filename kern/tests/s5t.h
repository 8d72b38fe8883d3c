/*
 * Helpers shared by the S5 ktests (kern/tests/test_s5.c, test_s5_mp.c):
 * a fresh S5 file system on the tests' own RAM disk "s5ram", mounted
 * through the S5 vfsops; vnode shortcuts; files filled with a pattern
 * that depends on the offset, written and checked in chunks.
 */
#ifndef KERN_TESTS_S5T_H
#define KERN_TESTS_S5T_H

#include <kern/s5/s5_inode.h>
#include <kern/vfs/vfs.h>

/* A mismatch in data read back. */
#define EILSEQ 84

struct blkdev;
struct s5_check_result;

struct s5t {
    struct vfs vfs;
    struct vnode *root;
    struct blkdev *dev;
};

/* Mount S5 from dev as t (root vnode in t->root); unmount releases it. */
int t_mount(struct s5t *t, struct blkdev *dev);
int t_unmount(struct s5t *t);
/* The tests' own RAM disk, made at first use and kept (ram0 may be the
 * root file system). */
struct blkdev *t_disk(void);
/* A fresh file system on the test disk, mounted. */
int t_fresh(struct s5t *t, uint32_t fsize, uint32_t ninodes);
/* Unmount and check the disk: the number of problems (0 good), or <0. */
int t_finish(struct s5t *t, struct s5_check_result *res);
/* A test's body on a fresh file system (t_fresh), which must then unmount
 * and check clean (t_finish): the body's result, or 1 (failed) when the
 * file system's making or its check fails. */
int t_on_fresh(uint32_t fsize, uint32_t ninodes, int (*body)(struct s5t *t));
/* Free blocks and free inodes, from statfs. */
uint64_t t_bfree(struct s5t *t);
uint64_t t_ffree(struct s5t *t);

/* VOP_CREATE of a regular file and VOP_MKDIR, mode 0644 and 0755. */
int t_create(struct vnode *dvp, const char *name, struct vnode **vpp);
int t_mkdir(struct vnode *dvp, const char *name, struct vnode **vpp);
/* One VOP_READ or VOP_WRITE of len bytes at off; *done gets the count. */
int t_io(struct vnode *vp, bool write, void *buf, size_t len, uint64_t off, int ioflag,
         size_t *done);
/* The link count of vp, or of the entry name in dvp (<0: lookup error). */
uint32_t t_nlink(struct vnode *vp);
int t_lookup_nlink(struct vnode *dvp, const char *name);

/* Write, or check, the pattern of file f over [off, off + len) in chunks
 * of chunk bytes (check: -EILSEQ at the first wrong byte). */
/* The pattern's byte at offset off of file f. */
uint8_t t_pat(uint64_t off, uint32_t f);
int t_write_pat(struct vnode *vp, uint64_t off, size_t len, uint32_t f, size_t chunk);
int t_check_pat(struct vnode *vp, uint64_t off, size_t len, uint32_t f, size_t chunk);
/* Do the first bytes (at most 64) at off read as zeros? */
bool t_reads_zero(struct vnode *vp, uint64_t off, size_t len);
/* Raw access to S5 block bno of dev (for corrupting a disk on purpose). */
int t_raw_block(struct blkdev *dev, uint32_t bno, void *buf, bool write);

#endif
