/*
 * fsck.s5's state, shared by the check (fsck_s5.c) and the repairs
 * (fsck_s5_fix.c).
 */
#ifndef TOOLS_FSCK_S5_H
#define TOOLS_FSCK_S5_H

#include "fsck_common.h"
#include "s5lib.h"

/* Owners recorded per block; inode numbers are 1 .. S5_MAXINODES. */
#define OWN_NONE        0
#define OWN_FREE        0xffff

/* Block pointer problems reported per inode before the rest are skipped. */
#define MAX_BAD_PER_INODE 10

struct fsck {
    const char *image;
    struct s5img img;
    struct s5_super sb;
    uint32_t ninodes;
    struct s5_dinode *itab;     /* inode ino is itab[ino - 1] */
    uint16_t *owner;            /* per block of the file system */
    uint32_t *refs;             /* per inode: entries in reachable directories */
    uint32_t *parent;           /* per inode: directory it was first found in */
    uint32_t *mapped;           /* per inode: 1 + last logical block with a pointer */
    uint32_t *queue;            /* directories waiting to be scanned */
    uint32_t qhead, qtail;
    struct fsck_report rep;     /* the problems found */
    unsigned bad_here;          /* bad pointers reported for the current inode */
    uint32_t beyond;            /* pointers past the size in the current inode */
    uint32_t beyond_b;          /* the first of them: block, level, logical block */
    int beyond_level;
    uint64_t beyond_lbn;
    int root_ok;                /* the root is a directory */
    uint32_t nfiles, ndirs, nused, nfree, nfreeino;
};

/* A problem only -y repairs, and one -p may repair too. */
#define problem(f, ...) fsck_problem(&(f)->rep, 0, __VA_ARGS__)
#define safe_problem(f, ...) fsck_problem(&(f)->rep, 1, __VA_ARGS__)
#define xcalloc(n, size) fsck_xcalloc("fsck.s5", (n), (size))

/* Repairs the image checked in f (fsck_s5_fix.c): the inodes' block
 * trees, the directory tree, lost+found, link counts, the free lists and
 * the superblock.  Returns the number of repairs, or -1 when the image
 * cannot be written or its superblock is beyond repair. */
int s5_repair(struct fsck *f);

/* Marks a file system that checked clean clean on disk too (after a stop
 * without an unmount); 0 or -1. */
int s5_mark_clean(struct fsck *f);

#endif /* TOOLS_FSCK_S5_H */
