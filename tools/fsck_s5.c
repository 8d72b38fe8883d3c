/*
 * fsck.s5: check an S5 file system image, and repair it.
 *
 *   fsck.s5 [-n | -y | -p] IMAGE
 *
 * Without an option, or with -n, the image is only read.  Each problem is
 * printed as one line on standard output, then a summary line.  -y repairs
 * every problem and -p the safe ones (fsck_common.h has the modes and the
 * exit statuses; fsck_s5_fix.c the repairs): the image is checked again
 * after a repair, and must come out clean.  The exit status is 0 if the
 * file system is consistent, 1 if any problem was found (or, with -y or
 * -p, repaired), 4 if problems were left, and 2 for a usage error or an
 * unreadable image.
 *
 * The passes:
 *   1. the superblock (stop if it is unusable);
 *   2. every inode: type, size and its block tree (range, duplicates,
 *      pointers past the end of the file);
 *   3. the free-block chain (range, duplicates, blocks in use, s_tfree),
 *      then blocks that are neither in use nor free;
 *   4. the free-inode cache and s_tinode;
 *   5. the directory tree from the root (".", "..", entries, names);
 *   6. link counts and reachability of every allocated inode.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsck_s5.h"

static struct s5_dinode *inode(struct fsck *f, uint32_t ino)
{
    return &f->itab[ino - 1];
}

static uint16_t ftype(const struct s5_dinode *di)
{
    return di->di_mode & S5_IFMT;
}

static int has_blocks(uint16_t type)
{
    return type == S5_IFREG || type == S5_IFDIR || type == S5_IFLNK;
}

static int type_valid(uint16_t type)
{
    return has_blocks(type) || type == S5_IFCHR || type == S5_IFBLK || type == S5_IFIFO ||
           type == S5_IFSOCK;
}

/* Pass 1: the superblock. */

/* Reads and checks the superblock; returns 0 if checking can go on. */
static int check_super(struct fsck *f)
{
    const char *why;

    if (s5img_read_super(&f->img, &f->sb) < 0) {
        problem(f, "superblock: image is too small to hold a superblock (%llu bytes)",
                (unsigned long long)f->img.nblocks * S5_BSIZE);
        return -1;
    }
    why = s5_sb_invalid(&f->sb, 0);
    if (!why && f->sb.s_fsize > f->img.nblocks)
        why = "s_fsize is larger than the image";
    if (why) {
        problem(f, "superblock: %s (magic 0x%08x, type %u, s_isize %u, s_fsize %u, "
                "image %llu blocks, s_nfree %u, s_ninode %u)", why, f->sb.s_magic,
                f->sb.s_type, f->sb.s_isize, f->sb.s_fsize,
                (unsigned long long)f->img.nblocks, f->sb.s_nfree, f->sb.s_ninode);
        return -1;
    }
    if (f->sb.s_time < S5_TIME_MIN)
        safe_problem(f, "superblock: s_time %u is before 1980 (Linux would take the file system "
                "for System V Release 2's layout)", f->sb.s_time);
    if (f->sb.s_state == S5_FSBAD)
        problem(f, "superblock: file system is marked bad (s_state FsBAD)");
    else if (!s5_sb_is_clean(&f->sb))
        printf("fsck.s5: %s: note: not cleanly unmounted (s_state 0x%08x)\n",
               f->image, f->sb.s_state);
    f->ninodes = s5_ninodes(&f->sb);
    return 0;
}

/* Loads the whole inode list into memory. */
static int load_inodes(struct fsck *f)
{
    f->itab = xcalloc(f->ninodes, sizeof(struct s5_dinode));
    for (uint32_t b = 0; b < f->ninodes / S5_INOPB; b++) {
        if (s5img_read(&f->img, S5_ILISTBLOCK + b, &f->itab[b * S5_INOPB]) < 0) {
            fprintf(stderr, "fsck.s5: %s: cannot read inode block %u\n",
                    f->image, S5_ILISTBLOCK + b);
            return -1;
        }
    }
    return 0;
}

/* Pass 2: inodes and their block trees. */

/* Reports a bad pointer of the current inode, up to MAX_BAD_PER_INODE. */
static int bad_pointer(struct fsck *f, uint32_t ino)
{
    if (f->bad_here == MAX_BAD_PER_INODE)
        problem(f, "inode %u: too many bad block pointers; the rest are not checked", ino);
    return f->bad_here++ < MAX_BAD_PER_INODE;
}

/* Records that ino owns block b; returns 0 if the block was unclaimed. */
static int claim(struct fsck *f, uint32_t ino, uint32_t b, const char *what)
{
    if (f->owner[b] != OWN_NONE) {
        if (bad_pointer(f, ino))
            problem(f, "block %u claimed twice: %s of inode %u, already used by inode %u",
                    b, what, ino, f->owner[b]);
        return -1;
    }
    f->owner[b] = (uint16_t)ino;
    f->nused++;
    return 0;
}

/*
 * Checks one block pointer of inode ino and, for an indirect block, the
 * subtree below it.  level is 0 for a data block, 1..3 for indirect blocks;
 * lbn is the first logical block it covers and size_blocks the number of
 * logical blocks the file's size spans.
 */
static void walk(struct fsck *f, uint32_t ino, uint32_t b, int level, uint64_t lbn,
                 uint64_t size_blocks)
{
    static const uint64_t span[4] = { 1, S5_NBLK1, S5_NBLK2, S5_NBLK3 };
    const char *what = level ? "indirect block" : "data block";
    uint32_t ind[S5_NINDIR];

    if (b == 0 || f->bad_here > MAX_BAD_PER_INODE)
        return;
    if (level == 0 && lbn < size_blocks && lbn + 1 > f->mapped[ino])
        f->mapped[ino] = (uint32_t)(lbn + 1);
    if (lbn >= size_blocks) {
        if (f->beyond++ == 0) {
            f->beyond_b = b;
            f->beyond_level = level;
            f->beyond_lbn = lbn;
        }
        size_blocks = UINT64_MAX;       /* the subtree is covered by this pointer */
    }
    if (!s5_bno_valid(&f->sb, b)) {
        if (bad_pointer(f, ino))
            problem(f, "inode %u: %s %u out of range [%u, %u) at logical block %llu",
                    ino, what, b, f->sb.s_isize, f->sb.s_fsize, (unsigned long long)lbn);
        return;
    }
    if (claim(f, ino, b, what) < 0 || level == 0)
        return;
    if (s5img_read(&f->img, b, ind) < 0) {
        problem(f, "inode %u: cannot read indirect block %u", ino, b);
        return;
    }
    for (uint32_t i = 0; i < S5_NINDIR; i++)
        walk(f, ino, ind[i], level - 1, lbn + i * span[level - 1], size_blocks);
}

/* Checks the block pointers of a regular file, directory or symlink. */
static void check_blocks(struct fsck *f, uint32_t ino, const struct s5_dinode *di)
{
    uint64_t size_blocks = s5_size_blocks(di->di_size);

    f->bad_here = 0;
    f->beyond = 0;
    for (int i = 0; i < S5_NDADDR; i++)
        walk(f, ino, s5_getaddr(di, i), 0, (uint64_t)i, size_blocks);
    walk(f, ino, s5_getaddr(di, S5_IND1), 1, S5_NDADDR, size_blocks);
    walk(f, ino, s5_getaddr(di, S5_IND2), 2, S5_NDADDR + S5_NBLK1, size_blocks);
    walk(f, ino, s5_getaddr(di, S5_IND3), 3, S5_NDADDR + S5_NBLK1 + (uint64_t)S5_NBLK2,
         size_blocks);
    if (f->beyond)
        problem(f, "inode %u: %u block pointer%s beyond the file size %u (first: %s %u "
                "at logical block %llu)", ino, f->beyond, f->beyond == 1 ? "" : "s",
                di->di_size, f->beyond_level ? "indirect block" : "data block",
                f->beyond_b, (unsigned long long)f->beyond_lbn);
}

/* Devices keep the device number in slot 0; FIFOs and sockets have no
 * blocks. */
static void check_special(struct fsck *f, uint32_t ino, const struct s5_dinode *di)
{
    int first = ftype(di) == S5_IFIFO || ftype(di) == S5_IFSOCK ? 0 : 1;

    for (int i = first; i < S5_NADDR; i++) {
        if (s5_getaddr(di, i) != 0) {
            problem(f, "inode %u: special file (mode 0%o) has block pointer %d set",
                    ino, di->di_mode, i);
            return;
        }
    }
    if (di->di_size != 0)
        problem(f, "inode %u: special file (mode 0%o) has size %u", ino, di->di_mode,
                di->di_size);
}

static void check_inode(struct fsck *f, uint32_t ino)
{
    const struct s5_dinode *di = inode(f, ino);
    uint16_t type = ftype(di);

    if (di->di_mode == 0) {
        f->nfreeino++;
        /* Linux refills its free-inode cache only with inodes whose mode
         * and link count are both 0. */
        if (di->di_nlink != 0)
            safe_problem(f, "inode %u: free (mode 0) but its link count is %u", ino, di->di_nlink);
        return;
    }
    if (!type_valid(type)) {
        problem(f, "inode %u: bad mode 0%o (unknown file type)", ino, di->di_mode);
        return;
    }
    if (!has_blocks(type)) {
        check_special(f, ino, di);
        return;
    }
    if (di->di_size > S5_MAXFILESIZE)
        problem(f, "inode %u: size %u exceeds the maximum file size", ino, di->di_size);
    if (type == S5_IFDIR && di->di_size % S5_DIRENT_SIZE != 0)
        problem(f, "inode %u: directory size %u is not a multiple of %d", ino,
                di->di_size, S5_DIRENT_SIZE);
    check_blocks(f, ino, di);
}

/* Pass 3: the free-block chain and lost blocks. */

/* Records free-list entry b; returns 0 if it is a new, valid free block. */
static int mark_free(struct fsck *f, uint32_t b, const char *where, uint32_t slot)
{
    if (!s5_bno_valid(&f->sb, b)) {
        safe_problem(f, "free list (%s, entry %u): block %u out of range [%u, %u)",
                where, slot, b, f->sb.s_isize, f->sb.s_fsize);
        return -1;
    }
    if (f->owner[b] == OWN_FREE) {
        safe_problem(f, "free list (%s, entry %u): block %u is on the free list twice",
                where, slot, b);
        return -1;
    }
    if (f->owner[b] != OWN_NONE) {
        safe_problem(f, "free list (%s, entry %u): block %u is in use by inode %u",
                where, slot, b, f->owner[b]);
        return -1;
    }
    f->owner[b] = OWN_FREE;
    f->nfree++;
    return 0;
}

/*
 * Checks one cache of the chain (the superblock's or a chain block's).
 * Returns the next chain block, or 0 at the end or if the chain is broken.
 */
static uint32_t check_free_cache(struct fsck *f, uint32_t nfree, const uint32_t *list,
                                 const char *where)
{
    for (uint32_t i = nfree; i-- > 1; ) {
        if (list[i] == 0)
            safe_problem(f, "free list (%s, entry %u): block number 0", where, i);
        else
            mark_free(f, list[i], where, i);
    }
    if (nfree == 0 || list[0] == 0)
        return 0;
    if (mark_free(f, list[0], where, 0) < 0) {
        safe_problem(f, "free list: chain broken at %s; the rest of the list is not checked",
                where);
        return 0;
    }
    return list[0];
}

static void check_free_list(struct fsck *f)
{
    uint8_t blk[S5_BSIZE];
    const struct s5_fblk *fb = (const struct s5_fblk *)blk;
    char where[48];
    uint32_t next;

    next = check_free_cache(f, f->sb.s_nfree, f->sb.s_free, "superblock");
    while (next != 0) {
        snprintf(where, sizeof(where), "chain block %u", next);
        if (s5img_read(&f->img, next, blk) < 0) {
            safe_problem(f, "free list: cannot read %s", where);
            return;
        }
        if (fb->df_nfree > S5_NICFREE) {
            safe_problem(f, "free list: %s has df_nfree %u, more than %d", where,
                    fb->df_nfree, S5_NICFREE);
            return;
        }
        next = check_free_cache(f, fb->df_nfree, fb->df_free, where);
    }
}

/* Reports data blocks that are neither in use nor free, as ranges. */
static void check_lost(struct fsck *f)
{
    uint32_t b = f->sb.s_isize, end = f->sb.s_fsize;

    while (b < end) {
        uint32_t first = b;

        if (f->owner[b++] != OWN_NONE)
            continue;
        while (b < end && f->owner[b] == OWN_NONE)
            b++;
        if (b - first == 1)
            safe_problem(f, "block %u lost (neither in use nor free)", first);
        else
            safe_problem(f, "blocks %u-%u lost (%u blocks neither in use nor free)",
                    first, b - 1, b - first);
    }
}

static void check_block_counts(struct fsck *f)
{
    check_free_list(f);
    if (f->sb.s_tfree != f->nfree)
        safe_problem(f, "superblock: s_tfree is %u but the free list holds %u blocks",
                f->sb.s_tfree, f->nfree);
    check_lost(f);
}

/* Pass 4: the free-inode cache. */

static void check_inode_cache(struct fsck *f)
{
    for (uint32_t i = 0; i < f->sb.s_ninode; i++) {
        uint32_t ino = f->sb.s_inode[i];

        if (!s5_ino_valid(&f->sb, ino)) {
            safe_problem(f, "free-inode cache entry %u: inode %u out of range [1, %u]",
                    i, ino, f->ninodes);
            continue;
        }
        if (inode(f, ino)->di_mode != 0)
            safe_problem(f, "free-inode cache entry %u: inode %u is allocated (mode 0%o)",
                    i, ino, inode(f, ino)->di_mode);
        for (uint32_t j = 0; j < i; j++)
            if (f->sb.s_inode[j] == ino)
                safe_problem(f, "free-inode cache entry %u: inode %u is cached twice", i, ino);
    }
    if (f->sb.s_tinode != f->nfreeino)
        safe_problem(f, "superblock: s_tinode is %u but %u inodes are free (mode 0)",
                f->sb.s_tinode, f->nfreeino);
}

/* Pass 5: the directory tree. */

/* Checks that entry slot (0 or 1) is "." or ".." naming ino. */
static void check_dot(struct fsck *f, uint32_t dir, const struct s5_direct *de,
                      uint32_t slot, uint32_t want)
{
    const char *name = slot == 0 ? "." : "..";

    if (de->d_ino == 0 || !s5_namematch(de->d_name, name, slot + 1))
        problem(f, "directory %u: missing '%s' (entry %u is not '%s')", dir, name, slot, name);
    else if (de->d_ino != want)
        problem(f, "directory %u: '%s' points to inode %u, should be %u", dir, name,
                de->d_ino, want);
}

/* Queues a subdirectory the first time it is found. */
static void found_dir(struct fsck *f, uint32_t dir, uint32_t ino, const char *name)
{
    if (f->parent[ino] != 0) {
        problem(f, "directory %u: entry '%s' is a second link to directory %u "
                "(first found in directory %u)", dir, name, ino, f->parent[ino]);
        return;
    }
    f->parent[ino] = dir;
    f->queue[f->qtail++] = ino;
}

/* Checks entry number slot of directory dir. */
static void check_entry(struct fsck *f, uint32_t dir, const struct s5_direct *de, uint32_t slot)
{
    char name[4 * S5_DIRSIZ + 1];
    const char *why;
    int dot;

    if (slot < 2)
        check_dot(f, dir, de, slot, slot == 0 ? dir : f->parent[dir]);
    if (de->d_ino == 0)
        return;
    s5_name_print(de->d_name, name);
    dot = s5_namematch(de->d_name, ".", 1) || s5_namematch(de->d_name, "..", 2);
    if (dot && slot >= 2)
        problem(f, "directory %u: extra '%s' entry at slot %u", dir, name, slot);
    if ((why = s5_name_invalid(de->d_name)) != NULL)
        problem(f, "directory %u: entry %u ('%s'): %s", dir, slot, name, why);
    if (!s5_ino_valid(&f->sb, de->d_ino)) {
        problem(f, "directory %u: entry '%s' points to inode %u past the end of the "
                "inode list (%u inodes)", dir, name, de->d_ino, f->ninodes);
        return;
    }
    if (inode(f, de->d_ino)->di_mode == 0) {
        problem(f, "directory %u: entry '%s' points to free inode %u", dir, name, de->d_ino);
        return;
    }
    f->refs[de->d_ino]++;
    if (!dot && ftype(inode(f, de->d_ino)) == S5_IFDIR)
        found_dir(f, dir, de->d_ino, name);
}

/* Reads every entry of directory dir. */
static void scan_dir(struct fsck *f, uint32_t dir)
{
    const struct s5_dinode *di = inode(f, dir);
    struct s5_direct ents[S5_DIRPB];
    uint32_t nent = di->di_size / S5_DIRENT_SIZE;
    uint32_t nblocks = s5_size_blocks(di->di_size);

    if (nent < 2)
        problem(f, "directory %u: size %u is too small for '.' and '..'", dir, di->di_size);
    /*
     * Directories grow a block at a time and never have holes.  Blocks past
     * the last mapped one hold nothing to check, so the scan stops there.
     */
    if (nblocks > f->mapped[dir]) {
        problem(f, "directory %u: size %u runs past its last block (hole at logical "
                "block %u)", dir, di->di_size, f->mapped[dir]);
        nblocks = f->mapped[dir] > 1 ? f->mapped[dir] : 1;
    }
    for (uint32_t lbn = 0; lbn < nblocks; lbn++) {
        uint32_t bno;

        if (s5_bmap(&f->img, &f->sb, di, lbn, &bno) < 0)
            continue;                   /* the bad pointer is already reported */
        if (bno == 0 && lbn < f->mapped[dir])
            problem(f, "directory %u: hole at logical block %u", dir, lbn);
        if (bno == 0)
            memset(ents, 0, sizeof(ents));
        else if (s5img_read(&f->img, bno, ents) < 0)
            continue;
        for (uint32_t i = 0; i < S5_DIRPB && lbn * S5_DIRPB + i < nent; i++)
            check_entry(f, dir, &ents[i], lbn * S5_DIRPB + i);
    }
}

static void check_tree(struct fsck *f)
{
    if (ftype(inode(f, S5_ROOTINO)) != S5_IFDIR) {
        problem(f, "root inode %u is not a directory (mode 0%o); links and "
                "reachability not checked", S5_ROOTINO,
                inode(f, S5_ROOTINO)->di_mode);
        return;
    }
    f->root_ok = 1;
    f->parent[S5_ROOTINO] = S5_ROOTINO;
    f->queue[f->qtail++] = S5_ROOTINO;
    while (f->qhead < f->qtail)
        scan_dir(f, f->queue[f->qhead++]);
}

/* Pass 6: link counts and reachability. */

static void check_links(struct fsck *f)
{
    for (uint32_t ino = 1; ino <= f->ninodes; ino++) {
        const struct s5_dinode *di = inode(f, ino);

        if (di->di_mode == 0)
            continue;
        if (ino == S5_BADBLKINO) {
            if (f->refs[ino] != 0)
                problem(f, "inode %u (the bad-block inode) is linked into a directory", ino);
            continue;
        }
        if (ftype(di) == S5_IFDIR)
            f->ndirs++;
        else
            f->nfiles++;
        if (!f->root_ok)
            continue;                   /* nothing is reachable; already reported */
        if (f->refs[ino] == 0)
            fsck_problem(&f->rep, di->di_size == 0 && ftype(di) != S5_IFDIR, "inode %u (mode 0%o, nlink %u) is allocated but unreachable "
                    "from the root", ino, di->di_mode, di->di_nlink);
        else if (di->di_nlink != f->refs[ino])
            safe_problem(f, "inode %u: link count is %u but %u directory entries refer to it",
                    ino, di->di_nlink, f->refs[ino]);
    }
}

static void summary(struct fsck *f)
{
    if (f->rep.problems == 0)
        printf("fsck.s5: %s: %u files, %u dirs, %u blocks used, %u free\n",
               f->image, f->nfiles, f->ndirs, f->nused, f->nfree);
    else
        printf("fsck.s5: %s: %u problem%s; %u files, %u dirs, %u blocks used, %u free\n",
               f->image, f->rep.problems, f->rep.problems == 1 ? "" : "s",
               f->nfiles, f->ndirs, f->nused, f->nfree);
}

static int run(struct fsck *f)
{
    if (check_super(f) < 0) {
        printf("fsck.s5: %s: unusable superblock; not checked further\n", f->image);
        return 1;
    }
    if (load_inodes(f) < 0)
        return 2;
    f->owner = xcalloc(f->sb.s_fsize, sizeof(*f->owner));
    f->refs = xcalloc(f->ninodes + 1, sizeof(*f->refs));
    f->parent = xcalloc(f->ninodes + 1, sizeof(*f->parent));
    f->mapped = xcalloc(f->ninodes + 1, sizeof(*f->mapped));
    f->queue = xcalloc(f->ninodes + 1, sizeof(*f->queue));
    for (uint32_t ino = 1; ino <= f->ninodes; ino++)
        check_inode(f, ino);
    check_block_counts(f);
    check_inode_cache(f);
    check_tree(f);
    check_links(f);
    summary(f);
    return f->rep.problems ? 1 : 0;
}

#define USAGE "usage: fsck.s5 [-n | -y | -p] IMAGE"

/* Opens and checks image into a fresh f; the check's exit status. */
static int check_image(struct fsck *f, const char *image, int quiet)
{
    memset(f, 0, sizeof(*f));
    f->image = image;
    f->rep.quiet = quiet;
    if (s5img_open(&f->img, image) < 0) {
        fprintf(stderr, "fsck.s5: %s: %s\n", image, strerror(errno));
        return FSCK_EXIT_USAGE;
    }
    return run(f);
}

static int s5_check(void *st, const char *image, int quiet)
{
    return check_image(st, image, quiet);
}

static struct fsck_report *s5_report(void *st)
{
    return &((struct fsck *)st)->rep;
}

static int s5_dirty(void *st)
{
    return !s5_sb_is_clean(&((struct fsck *)st)->sb);
}

static int s5_clean(void *st)
{
    return s5_mark_clean(st);
}

static int s5_fix(void *st)
{
    return s5_repair(st);
}

static const struct fsck_tool s5_tool = {
    .prog = "fsck.s5",
    .usage = USAGE,
    .help = "  check an S5 file system (an image file or a disk); -n changes nothing,\n"
            "  -y repairs every problem, -p repairs the safe ones silently and stops\n"
            "  at any other; exit 0 when consistent, 1 on problems found (-n) or\n"
            "  repaired (-y, -p), 4 when problems are left, 2 when it cannot be read\n",
    .state_size = sizeof(struct fsck),
    .check = s5_check,
    .report = s5_report,
    .dirty = s5_dirty,
    .mark_clean = s5_clean,
    .repair = s5_fix,
};

int main(int argc, char **argv)
{
    return fsck_main(&s5_tool, argc, argv);
}
