/*
 * fsck.ufs's state, shared by the check (fsck_ufs.c) and the repairs
 * (fsck_ufs_fix.c).
 */
#ifndef TOOLS_FSCK_UFS_H
#define TOOLS_FSCK_UFS_H

#include <stdint.h>
#include <unistd.h>

#include "kern/ufs/ufs_fs.h"
#include "fsck_common.h"

#define OWN_FREE    0u                  /* owner of a fragment nobody uses */
#define OWN_META    0xffffffffu         /* boot area, superblocks, groups, summary */
#define MAX_REPORTS 12                  /* per kind of repeated problem */

struct fsck {
    const char *image;
    int fd;
    uint64_t image_bytes;
    struct ufs_super sb;
    uint32_t ninodes;                   /* fs_ncg * fs_ipg */
    uint8_t *iused;                     /* inode map, whole file system */
    uint8_t *ffree;                     /* fragment map (1 = free) */
    uint8_t *cgbuf;                     /* each group block, read in turn */
    struct ufs_dinode *itab;            /* every inode */
    uint32_t *owner;                    /* per fragment: inode, OWN_FREE or OWN_META */
    uint32_t *refs;                     /* per inode: directory entries naming it */
    uint32_t *parent;                   /* per directory: where it was found */
    uint32_t *queue, qhead, qtail;      /* directories to scan */
    struct ufs_csum *csum;              /* the summary area */
    uint8_t *blk;                       /* one block of scratch */
    struct fsck_report rep;             /* the problems found */
    unsigned reports;
    uint64_t nfiles, ndirs, used_frags, free_frags;
};

/* Reporting and allocating, shared with fsck.s5 (fsck_common.c): a
 * problem only -y repairs, and one -p may repair too. */
#define problem(f, ...) fsck_problem(&(f)->rep, 0, __VA_ARGS__)
#define safe_problem(f, ...) fsck_problem(&(f)->rep, 1, __VA_ARGS__)
#define xcalloc(n, size) fsck_xcalloc("fsck.ufs", (n), (size))

/* Reads len bytes at byte off of the image; 0, or -1 past its end. */
static inline int read_at(struct fsck *f, uint64_t off, void *buf, size_t len)
{
    if (off + len > f->image_bytes)
        return -1;
    return pread(f->fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -1;
}

static inline uint64_t frag_bytes(const struct fsck *f, int64_t frag)
{
    return (uint64_t)frag * (uint32_t)f->sb.fs_fsize;
}

/* Fragment address of logical block lbn of an inode, or 0 (a hole); only
 * the direct and single indirect blocks, as directories use. */
int64_t ufs_fsck_bmap(struct fsck *f, const struct ufs_dinode *di, uint64_t lbn);

/* True for the inode types UFS knows. */
int ufs_fsck_type_valid(uint16_t mode);

/* Repairs the image checked in f (fsck_ufs_fix.c): the number of
 * repairs, -1 when the image cannot be written or its superblock is
 * beyond repair, FSCK_AGAIN when the superblock was replaced by a copy. */
int ufs_repair(struct fsck *f);

/* Writes every group block anew from the inodes in f->itab and the
 * fragments used (1 per fragment in use), then the inodes, the summary
 * area, the totals and the superblock with its copies, marked clean
 * (fsck_ufs_super.c); 0, or -1 when a write failed. */
int ufs_write_maps(struct fsck *f, const uint8_t *used);

/* Makes fs_cgsize hold the maps of a group block as ufs_write_maps lays
 * them out (a damaged fs_cgsize or fs_contigsumsize may not); 0, or -1
 * when they cannot fit before the inodes. */
int ufs_fit_cg_size(struct fsck *f);

/* Replaces an unusable superblock with the first sound copy; 0 or -1. */
int ufs_use_a_copy(struct fsck *f);

/* The image again, for writing; 0 or -1 (said on stderr). */
int ufs_reopen_rw(struct fsck *f);

/* Marks a file system that checked clean clean on disk; 0 or -1. */
int ufs_mark_clean(struct fsck *f);

#endif /* TOOLS_FSCK_UFS_H */
