/*
 * fsck.s5's repairs (-y, -p): after the check (fsck_s5.c) found problems,
 * the file system is rebuilt from what can be trusted, in passes much as
 * BSD fsck's:
 *
 *   1. inodes: an inode of unknown type is cleared; a special file loses
 *      its block pointers and size; every block pointer that is out of
 *      range or points past the file's size is set to 0 (the file gets a
 *      hole), and an indirect block that cannot be read is dropped.  A
 *      pointer that claims a block an earlier inode (by number) already
 *      owns gets a copy of the block in a block nobody claims (e2fsck
 *      clones the same way), so that the repair changes no file's
 *      contents, whichever of the two claims is the stale one: after a
 *      crash the stale claim may be the lower inode's, and a hole would
 *      then be made in the file that was synced.  Only when no unclaimed
 *      block is left does the pointer become 0;
 *   2. directories, from the root (made anew when it is not a directory):
 *      "." and ".." are set right, a directory with no first block gets
 *      one, a size past the last block is cut back, and every entry that
 *      names a free or out-of-range inode, has a bad name, is an extra "."
 *      or "..", or is a second link to a directory is cleared;
 *   3. unreachable inodes: empty ones (size 0, not directories) are
 *      cleared, the rest linked into /lost+found as "#INO" (made when
 *      missing), directories with their subtrees;
 *   4. link counts set to the entries found;
 *   5. the free lists: every free inode zeroed, the free-block chain
 *      rebuilt from the blocks no inode owns (highest first, as mkfs.s5),
 *      the free-inode cache and the totals made again, the superblock
 *      marked clean.
 *
 * The whole inode list is kept in memory (struct fsck's itab) and written
 * back at the end; directory and indirect blocks are written as they are
 * changed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fsck_s5.h"

struct fix {
    struct fsck *f;
    uint8_t *used;              /* per block: owned by a kept inode */
    uint32_t *refs;             /* per inode: entries found */
    uint32_t *parent;           /* per directory: where it was found */
    uint32_t *mapped;           /* per inode: 1 + last data block's lbn */
    uint32_t *queue, qhead, qtail;
    uint32_t lost_found;        /* its inode, 0 until needed */
    uint32_t clone_next;        /* where clone_block looks for a block next */
    unsigned fixes;
    int failed;                 /* a write failed */
};

static struct s5_dinode *fx_inode(struct fix *x, uint32_t ino)
{
    return &x->f->itab[ino - 1];
}

static uint16_t fx_type(const struct s5_dinode *di)
{
    return di->di_mode & S5_IFMT;
}

static void fx_write(struct fix *x, uint32_t b, const void *blk)
{
    if (s5img_write(&x->f->img, b, blk) < 0)
        x->failed = 1;
}

/* Gives back the blocks under pointer b (level 0 data, 1..3 indirect),
   which pass 1 found good. */
static void release(struct fix *x, uint32_t b, int level)
{
    uint32_t ind[S5_NINDIR];

    if (b == 0 || !s5_bno_valid(&x->f->sb, b))
        return;
    x->used[b] = 0;
    if (level == 0 || s5img_read(&x->f->img, b, ind) < 0)
        return;
    for (uint32_t i = 0; i < S5_NINDIR; i++)
        release(x, ind[i], level - 1);
}

static void release_blocks(struct fix *x, const struct s5_dinode *di)
{
    uint16_t type = di->di_mode & S5_IFMT;

    if (type != S5_IFREG && type != S5_IFDIR && type != S5_IFLNK)
        return;
    for (int i = 0; i < S5_NADDR; i++)
        release(x, s5_getaddr(di, i), i < S5_NDADDR ? 0 : i - S5_NDADDR + 1);
}

/* Frees inode ino, keeping its generation; walked says whether pass 1
   has claimed its blocks (which then go back). */
static void clear_inode(struct fix *x, uint32_t ino, int walked)
{
    struct s5_dinode *di = fx_inode(x, ino);
    uint8_t gen = di->di_gen;

    if (walked)
        release_blocks(x, di);
    memset(di, 0, sizeof(*di));
    di->di_gen = gen;
    x->fixes++;
}

/* Pass 1: block trees. */

/* A copy of block b in a block no inode claims and no repair has used,
 * for the second claimant of b; 0 when there is none (or the check did
 * not record the claims). */
static uint32_t clone_block(struct fix *x, uint32_t b)
{
    struct fsck *f = x->f;
    uint8_t blk[S5_BSIZE];

    if (!f->owner || s5img_read(&f->img, b, blk) < 0)
        return 0;
    if (x->clone_next < f->sb.s_isize)
        x->clone_next = f->sb.s_isize;
    for (uint32_t c = x->clone_next; c < f->sb.s_fsize; c++) {
        if (x->used[c] || (f->owner[c] != OWN_NONE && f->owner[c] != OWN_FREE))
            continue;
        x->used[c] = 1;
        x->clone_next = c + 1;
        fx_write(x, c, blk);
        return c;
    }
    return 0;
}

/* Checks pointer *bp (level 0 data, 1..3 indirect) covering logical
 * blocks from lbn of inode ino; points it at a copy when an earlier inode
 * claimed its block, sets it to 0 when it cannot be kept.  Returns 1 when
 * *bp changed. */
static int fix_pointer(struct fix *x, uint32_t ino, uint32_t *bp, int level, uint64_t lbn,
                       uint64_t size_blocks)
{
    static const uint64_t span[4] = { 1, S5_NBLK1, S5_NBLK2, S5_NBLK3 };
    uint32_t b = *bp, ind[S5_NINDIR];
    int changed = 0, moved = 0;

    if (b == 0)
        return 0;
    if (lbn < size_blocks && s5_bno_valid(&x->f->sb, b) && x->used[b]) {
        uint32_t c = clone_block(x, b);     /* claimed before: a copy of its own */
        if (c) {
            *bp = b = c;
            x->fixes++;
            moved = 1;
        }
    }
    if (lbn >= size_blocks || !s5_bno_valid(&x->f->sb, b) || (x->used[b] && !moved) ||
        (level > 0 && s5img_read(&x->f->img, b, ind) < 0)) {
        if (moved)
            x->used[b] = 0;                 /* the copy cannot be read back: given up */
        *bp = 0;
        x->fixes++;
        return 1;
    }
    x->used[b] = 1;
    if (level == 0) {
        if (lbn + 1 > x->mapped[ino])
            x->mapped[ino] = (uint32_t)(lbn + 1);
        return moved;
    }
    for (uint32_t i = 0; i < S5_NINDIR; i++)
        changed |= fix_pointer(x, ino, &ind[i], level - 1, lbn + i * span[level - 1],
                               size_blocks);
    if (changed)
        fx_write(x, b, ind);
    return moved;
}

static void fix_blocks(struct fix *x, uint32_t ino, struct s5_dinode *di)
{
    static const uint64_t first[S5_NADDR] = {
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, S5_NDADDR, S5_NDADDR + S5_NBLK1,
        S5_NDADDR + S5_NBLK1 + (uint64_t)S5_NBLK2 };
    uint64_t size_blocks = s5_size_blocks(di->di_size);

    for (int i = 0; i < S5_NADDR; i++) {
        uint32_t b = s5_getaddr(di, i);
        int level = i < S5_NDADDR ? 0 : i - S5_NDADDR + 1;

        if (fix_pointer(x, ino, &b, level, first[i], size_blocks))
            s5_setaddr(di, i, b);
    }
}

static void fix_inode(struct fix *x, uint32_t ino)
{
    struct s5_dinode *di = fx_inode(x, ino);
    uint16_t type = fx_type(di);

    if (di->di_mode == 0)
        return;
    if (type == S5_IFCHR || type == S5_IFBLK || type == S5_IFIFO || type == S5_IFSOCK) {
        int nodev = type == S5_IFIFO || type == S5_IFSOCK;
        uint32_t dev = nodev ? 0 : s5_getaddr(di, 0);

        if (di->di_size != 0 || memcmp(di->di_addr + 3, (uint8_t[3 * S5_NADDR]){ 0 },
                                       3 * S5_NADDR - 3) != 0 || (nodev && dev)) {
            memset(di->di_addr, 0, sizeof(di->di_addr));
            s5_setaddr(di, 0, dev);
            di->di_size = 0;
            x->fixes++;
        }
        return;
    }
    if (type != S5_IFREG && type != S5_IFDIR && type != S5_IFLNK) {
        clear_inode(x, ino, 0);
        return;
    }
    if (di->di_size > S5_MAXFILESIZE)
        di->di_size = S5_MAXFILESIZE;
    if (type == S5_IFDIR && di->di_size % S5_DIRENT_SIZE != 0) {
        di->di_size -= di->di_size % S5_DIRENT_SIZE;
        x->fixes++;
    }
    fix_blocks(x, ino, di);
}

/* Blocks and inodes for what the repair makes. */

static uint32_t alloc_block(struct fix *x)
{
    static const uint8_t zero[S5_BSIZE];

    for (uint32_t b = x->f->sb.s_isize; b < x->f->sb.s_fsize; b++)
        if (!x->used[b]) {
            x->used[b] = 1;
            fx_write(x, b, zero);
            return b;
        }
    return 0;
}

static uint32_t alloc_inode(struct fix *x)
{
    for (uint32_t ino = S5_ROOTINO + 1; ino <= x->f->ninodes; ino++)
        if (fx_inode(x, ino)->di_mode == 0)
            return ino;
    return 0;
}

/* Makes ino an empty directory inside parent; 0, or -1 with no space. */
static int make_dir(struct fix *x, uint32_t ino, uint32_t parent)
{
    struct s5_direct ents[S5_DIRPB];
    struct s5_dinode *di = fx_inode(x, ino);
    uint32_t b = alloc_block(x), now = (uint32_t)time(NULL);

    if (b == 0)
        return -1;
    memset(di, 0, sizeof(*di));
    di->di_mode = S5_IFDIR | 0755;
    di->di_size = 2 * S5_DIRENT_SIZE;
    di->di_atime = di->di_mtime = di->di_ctime = now;
    s5_setaddr(di, 0, b);
    memset(ents, 0, sizeof(ents));
    ents[0].d_ino = (uint16_t)ino;
    s5_setname(ents[0].d_name, ".", 1);
    ents[1].d_ino = (uint16_t)parent;
    s5_setname(ents[1].d_name, "..", 2);
    fx_write(x, b, ents);
    x->mapped[ino] = 1;
    x->fixes++;
    return 0;
}

/* Pass 2: the directory tree. */

/* Is entry slot of directory dir one to clear?  Counts it otherwise. */
static int bad_entry(struct fix *x, uint32_t dir, struct s5_direct *de, uint32_t slot)
{
    uint32_t ino = de->d_ino;

    if (slot < 2) {
        uint32_t want = slot == 0 ? dir : x->parent[dir];
        char name[S5_DIRSIZ];

        s5_setname(name, slot ? ".." : ".", slot + 1);
        if (de->d_ino != want || memcmp(de->d_name, name, S5_DIRSIZ) != 0) {
            de->d_ino = (uint16_t)want;
            memcpy(de->d_name, name, S5_DIRSIZ);
            x->fixes++;
        }
        x->refs[want]++;
        return 0;
    }
    if (ino == 0)
        return 0;
    if (s5_name_invalid(de->d_name) || s5_namematch(de->d_name, ".", 1) ||
        s5_namematch(de->d_name, "..", 2) || !s5_ino_valid(&x->f->sb, ino) ||
        ino == S5_BADBLKINO || fx_inode(x, ino)->di_mode == 0)
        return 1;
    if (fx_type(fx_inode(x, ino)) == S5_IFDIR) {
        if (x->parent[ino] != 0)
            return 1;           /* a second link to a directory */
        x->parent[ino] = dir;
        x->queue[x->qtail++] = ino;
    }
    x->refs[ino]++;
    return 0;
}

static void fix_dir_block(struct fix *x, uint32_t dir, uint32_t bno, uint32_t first,
                          uint32_t nent)
{
    struct s5_direct ents[S5_DIRPB];
    int changed = 0;

    if (s5img_read(&x->f->img, bno, ents) < 0)
        return;
    for (uint32_t i = 0; i < S5_DIRPB && first + i < nent; i++) {
        unsigned before = x->fixes;

        if (bad_entry(x, dir, &ents[i], first + i)) {
            memset(&ents[i], 0, sizeof(ents[i]));
            x->fixes++;
        }
        changed |= x->fixes != before;
    }
    if (changed)
        fx_write(x, bno, ents);
}

static void scan_dir(struct fix *x, uint32_t dir)
{
    struct s5_dinode *di = fx_inode(x, dir);
    uint32_t nblocks, nent;

    if (x->mapped[dir] == 0 || s5_getaddr(di, 0) == 0) {
        /* No first block: an empty directory again, its entries lost. */
        release_blocks(x, di);
        if (make_dir(x, dir, x->parent[dir]) < 0) {
            clear_inode(x, dir, 1);
            return;
        }
        di = fx_inode(x, dir);
    }
    if (s5_size_blocks(di->di_size) > x->mapped[dir]) {
        di->di_size = x->mapped[dir] * S5_BSIZE;
        x->fixes++;
    }
    if (di->di_size < 2 * S5_DIRENT_SIZE) {
        di->di_size = 2 * S5_DIRENT_SIZE;
        x->fixes++;
    }
    nent = di->di_size / S5_DIRENT_SIZE;
    nblocks = s5_size_blocks(di->di_size);
    for (uint32_t lbn = 0; lbn < nblocks; lbn++) {
        uint32_t bno;

        if (s5_bmap(&x->f->img, &x->f->sb, di, lbn, &bno) == 0 && bno != 0)
            fix_dir_block(x, dir, bno, lbn * S5_DIRPB, nent);
    }
}

static void scan_queue(struct fix *x)
{
    while (x->qhead < x->qtail) {
        uint32_t dir = x->queue[x->qhead++];

        if (fx_inode(x, dir)->di_mode != 0)
            scan_dir(x, dir);
    }
}

static void fix_tree(struct fix *x)
{
    struct s5_dinode *root = fx_inode(x, S5_ROOTINO);

    if (fx_type(root) != S5_IFDIR) {
        release_blocks(x, root);
        if (make_dir(x, S5_ROOTINO, S5_ROOTINO) < 0)
            return;
    }
    x->parent[S5_ROOTINO] = S5_ROOTINO;
    x->queue[x->qtail++] = S5_ROOTINO;
    scan_queue(x);
}

/* Pass 3: lost+found. */

/* Adds entry name -> ino to directory dir, growing it by a block when
 * full (direct blocks only); 0, or -1. */
static int add_entry(struct fix *x, uint32_t dir, const char *name, uint32_t ino)
{
    struct s5_dinode *di = fx_inode(x, dir);
    struct s5_direct ents[S5_DIRPB];
    uint32_t nent = di->di_size / S5_DIRENT_SIZE;

    for (uint32_t slot = 2; slot < S5_NDADDR * S5_DIRPB; slot++) {
        uint32_t lbn = slot / S5_DIRPB, bno = s5_getaddr(di, lbn);

        if (bno == 0) {
            if (slot < nent || (bno = alloc_block(x)) == 0)
                return -1;
            s5_setaddr(di, lbn, bno);
            x->mapped[dir] = lbn + 1;
        }
        if (s5img_read(&x->f->img, bno, ents) < 0)
            return -1;
        if (slot < nent && ents[slot % S5_DIRPB].d_ino != 0)
            continue;
        ents[slot % S5_DIRPB].d_ino = (uint16_t)ino;
        s5_setname(ents[slot % S5_DIRPB].d_name, name, (uint32_t)strlen(name));
        fx_write(x, bno, ents);
        if (slot >= nent)
            di->di_size = (slot + 1) * S5_DIRENT_SIZE;
        x->refs[ino]++;
        return 0;
    }
    return -1;
}

static uint32_t lost_found(struct fix *x)
{
    uint32_t ino;

    if (x->lost_found)
        return x->lost_found;
    ino = s5_dirlookup(&x->f->img, &x->f->sb, fx_inode(x, S5_ROOTINO), "lost+found", 10);
    if (s5_ino_valid(&x->f->sb, ino) && fx_type(fx_inode(x, ino)) == S5_IFDIR &&
        x->parent[ino] == S5_ROOTINO)
        return x->lost_found = ino;
    ino = alloc_inode(x);
    if (ino == 0 || make_dir(x, ino, S5_ROOTINO) < 0)
        return 0;
    if (add_entry(x, S5_ROOTINO, "lost+found", ino) < 0) {
        clear_inode(x, ino, 1);
        return 0;
    }
    x->parent[ino] = S5_ROOTINO;
    x->refs[ino]++;             /* its "." */
    x->refs[S5_ROOTINO]++;      /* its ".." */
    return x->lost_found = ino;
}

/* Links unreachable inode ino into lost+found, or clears it. */
static void reconnect(struct fix *x, uint32_t ino)
{
    struct s5_dinode *di = fx_inode(x, ino);
    char name[S5_DIRSIZ + 1];
    uint32_t lf;

    if (di->di_size == 0 && fx_type(di) != S5_IFDIR) {
        clear_inode(x, ino, 1);
        return;
    }
    lf = lost_found(x);
    snprintf(name, sizeof(name), "#%u", ino);
    if (lf == 0 || add_entry(x, lf, name, ino) < 0) {
        fprintf(stderr, "fsck.s5: %s: no room in lost+found for inode %u; cleared\n",
                x->f->image, ino);
        clear_inode(x, ino, 1);
        return;
    }
    x->fixes++;
    if (fx_type(di) == S5_IFDIR) {
        x->parent[ino] = lf;
        x->queue[x->qtail++] = ino;
        scan_queue(x);
    }
}

static void fix_unreachable(struct fix *x)
{
    for (uint32_t ino = S5_ROOTINO + 1; ino <= x->f->ninodes; ino++) {
        struct s5_dinode *di = fx_inode(x, ino);

        if (di->di_mode != 0 && x->refs[ino] == 0 &&
            (fx_type(di) != S5_IFDIR || x->parent[ino] == 0))
            reconnect(x, ino);
    }
}

/* Pass 4: link counts, and inodes cleared since pass 1 free their blocks. */

static void fix_links(struct fix *x)
{
    for (uint32_t ino = 1; ino <= x->f->ninodes; ino++) {
        struct s5_dinode *di = fx_inode(x, ino);

        if (di->di_mode == 0) {
            if (di->di_nlink != 0) {
                di->di_nlink = 0;
                x->fixes++;
            }
            continue;
        }
        if (ino == S5_BADBLKINO || x->refs[ino] == di->di_nlink)
            continue;
        di->di_nlink = (uint16_t)(x->refs[ino] > 0xffff ? 0xffff : x->refs[ino]);
        x->fixes++;
    }
}

/* Pass 5: free lists and the superblock. */

/* Frees block b into the superblock's chain, as the kernel and mkfs.s5. */
static void free_block(struct fix *x, uint32_t b)
{
    struct s5_super *sb = &x->f->sb;

    if (sb->s_nfree == S5_NICFREE) {
        uint8_t blk[S5_BSIZE] = { 0 };
        struct s5_fblk *fb = (struct s5_fblk *)blk;

        fb->df_nfree = sb->s_nfree;
        memcpy(fb->df_free, sb->s_free, sizeof(fb->df_free));
        fx_write(x, b, blk);
        sb->s_nfree = 0;
    }
    sb->s_free[sb->s_nfree++] = b;
    sb->s_tfree++;
}

static void rebuild_free_lists(struct fix *x)
{
    struct s5_super *sb = &x->f->sb;
    uint32_t nfree = 0, n = 0;

    memset(sb->s_free, 0, sizeof(sb->s_free));
    sb->s_nfree = 1;            /* a lone 0 ends the chain */
    sb->s_tfree = 0;
    for (uint32_t b = sb->s_fsize; b-- > sb->s_isize; )
        if (!x->used[b])
            free_block(x, b);
    for (uint32_t ino = 1; ino <= x->f->ninodes; ino++)
        if (fx_inode(x, ino)->di_mode == 0)
            nfree++;
    memset(sb->s_inode, 0, sizeof(sb->s_inode));
    for (uint32_t ino = x->f->ninodes; ino > S5_ROOTINO && n < S5_NICINOD; ino--)
        if (fx_inode(x, ino)->di_mode == 0 && ino <= 0xffff)
            n++;
    sb->s_ninode = (uint16_t)n;
    /* The lowest free inodes, the lowest on top (last), as mkfs.s5. */
    for (uint32_t ino = S5_ROOTINO + 1, i = n; ino <= x->f->ninodes && i > 0; ino++)
        if (fx_inode(x, ino)->di_mode == 0)
            sb->s_inode[--i] = (uint16_t)ino;
    sb->s_tinode = (uint16_t)(nfree > 0xffff ? 0xffff : nfree);
    sb->s_flock = sb->s_ilock = sb->s_fmod = sb->s_ronly = 0;
}

static void write_back_super(struct fix *x);

static void write_back(struct fix *x)
{
    struct fsck *f = x->f;

    for (uint32_t b = 0; b < f->ninodes / S5_INOPB; b++)
        fx_write(x, S5_ILISTBLOCK + b, &f->itab[b * S5_INOPB]);
    write_back_super(x);
}

/* The superblock, marked clean. */
static void write_back_super(struct fix *x)
{
    struct fsck *f = x->f;
    uint8_t blk[S5_BSIZE];

    if (s5img_read(&f->img, S5_SUPERBLOCK, blk) < 0) {
        x->failed = 1;
        return;
    }
    s5_sb_set_clean(&f->sb, (uint32_t)time(NULL));
    memcpy(blk + S5_SBOFF, &f->sb, sizeof(f->sb));
    fx_write(x, S5_SUPERBLOCK, blk);
    if (fsync(f->img.fd) < 0)
        x->failed = 1;
}

/* The image again, for writing. */
static int reopen_rw(struct fsck *f)
{
    int fd = open(f->image, O_RDWR);

    if (fd < 0) {
        fprintf(stderr, "fsck.s5: %s: cannot open for repair: %s\n", f->image,
                strerror(errno));
        return -1;
    }
    close(f->img.fd);
    f->img.fd = fd;
    return 0;
}

/* Can the superblock be used once its caches are made again? */
static int sb_repairable(struct fsck *f)
{
    struct s5_super sb = f->sb;

    sb.s_nfree = 0;
    sb.s_ninode = 0;
    return s5_sb_invalid(&sb, f->img.nblocks) == NULL;
}

/* The inode list, when the check stopped before reading it. */
static int load_itab(struct fsck *f)
{
    f->ninodes = s5_ninodes(&f->sb);
    f->itab = xcalloc(f->ninodes, sizeof(struct s5_dinode));
    for (uint32_t b = 0; b < f->ninodes / S5_INOPB; b++)
        if (s5img_read(&f->img, S5_ILISTBLOCK + b, &f->itab[b * S5_INOPB]) < 0) {
            fprintf(stderr, "fsck.s5: %s: cannot read inode block %u\n", f->image,
                    S5_ILISTBLOCK + b);
            return -1;
        }
    return 0;
}

int s5_repair(struct fsck *f)
{
    struct fix x = { .f = f };

    if (!sb_repairable(f)) {
        printf("fsck.s5: %s: the superblock is beyond repair; nothing changed\n", f->image);
        return -1;
    }
    if (reopen_rw(f) < 0 || (!f->itab && load_itab(f) < 0))
        return -1;
    x.used = xcalloc(f->sb.s_fsize, 1);
    x.refs = xcalloc(f->ninodes + 1, sizeof(uint32_t));
    x.parent = xcalloc(f->ninodes + 1, sizeof(uint32_t));
    x.mapped = xcalloc(f->ninodes + 1, sizeof(uint32_t));
    x.queue = xcalloc(f->ninodes + 1, sizeof(uint32_t));
    for (uint32_t ino = 1; ino <= f->ninodes; ino++)
        fix_inode(&x, ino);
    fix_tree(&x);
    fix_unreachable(&x);
    fix_links(&x);
    rebuild_free_lists(&x);
    write_back(&x);
    free(x.used);
    free(x.refs);
    free(x.parent);
    free(x.mapped);
    free(x.queue);
    if (x.failed) {
        fprintf(stderr, "fsck.s5: %s: a write failed during the repair\n", f->image);
        return -1;
    }
    return (int)x.fixes;
}

int s5_mark_clean(struct fsck *f)
{
    struct fix x = { .f = f };

    if (reopen_rw(f) < 0)
        return -1;
    write_back_super(&x);
    return x.failed ? -1 : 0;
}
