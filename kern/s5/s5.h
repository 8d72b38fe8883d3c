/*
 * The S5 file system's entry points outside the VFS: making an empty file
 * system on a disk (the root RAM disk, the tests) and checking one.  The
 * file system itself is reached through s5_vfssw (kern/vfs/vfs.h); its
 * internals are in kern/s5/s5_inode.h, the on-disk format in
 * kern/s5/s5_fs.h.
 */
#ifndef KERN_S5_S5_H
#define KERN_S5_S5_H

#include <kern/lib/types.h>

struct blkdev;

/* Make an empty S5 file system of fsize 1 KiB blocks with ninodes inodes
 * (rounded up to a multiple of 16) on dev, the layout mkfs.s5 makes.  The
 * disk must not be claimed (mounted).  0, -EINVAL (does not fit), -EBUSY,
 * or an I/O error. */
int s5_mkfs(struct blkdev *dev, uint32_t fsize, uint32_t ninodes);

/* Check an unmounted S5 file system as fsck.s5 does: prints each problem
 * (the first 20) and returns the number found, or a negative errno if it
 * could not be read. */
struct s5_check_result {
    uint32_t problems;
    uint32_t files, dirs;       /* allocated inodes from 2 up, by type */
    uint32_t used, nfree;       /* data and indirect blocks; free blocks */
    uint32_t free_inodes;
    bool clean;                 /* the superblock was marked clean */
};
int s5_check(struct blkdev *dev, struct s5_check_result *res);

#endif
