/*
 * fsck.ufs's repairs (-y, -p): after the check (fsck_ufs.c) found
 * problems, the file system is rebuilt from what can be trusted, in passes
 * much as BSD fsck_ffs's (and fsck.s5's, fsck_s5_fix.c):
 *
 *   0. the superblock (fsck_ufs_super.c): one whose geometry cannot be
 *      used is replaced by the first sound copy found in a later group
 *      (the image is checked again from the start); with none, nothing is
 *      changed;
 *   1. inodes: one of unknown type, larger than fs_maxfilesize, or a root
 *      that is not a directory is cleared; a directory's size is cut to
 *      whole 512-byte chunks and to its first hole; every block pointer
 *      that is out of range, misaligned, runs over a block's end, points
 *      past the file's size, or claims a fragment that metadata or an
 *      earlier inode (by number) already owns is set to 0 (the file gets
 *      a hole), and an indirect block that cannot be read is dropped;
 *      di_blocks is counted again;
 *   2. directories, from the root (made anew when it was cleared): the
 *      first chunk is made to start with "." and ".." (rebuilt around the
 *      entries that fit when it does not), a chunk whose record lengths
 *      break is cut at the break, and every entry that names a free or
 *      out-of-range inode, has a bad name, is an extra "." or "..", or
 *      is a second link to a directory is removed; d_type is set right;
 *   3. unreachable inodes: empty files are cleared, the rest linked into
 *      /lost+found as "#INO" (made when missing), a directory at the top
 *      of its unreachable subtree, so the subtree comes with it;
 *   4. link counts set to the entries found;
 *   5. the maps and counts (fsck_ufs_super.c): every group block written
 *      anew (mkfs.ufs's layout) from the inodes kept and the fragments
 *      they own, then the summary area, fs_cstotal (and its 64-bit copy),
 *      fs_dsize, the superblock copies, and the clean flag.
 *
 * The whole inode table is kept in memory (struct fsck's itab) and written
 * back at the end; directory and indirect blocks are written as they are
 * changed.  A single-threaded tool: no locks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fsck_ufs.h"

struct fix {
    struct fsck *f;
    uint8_t *used;              /* per fragment: metadata or a kept inode's */
    uint32_t *refs;             /* per inode: entries found */
    uint32_t *parent;           /* per directory: where it was found */
    uint32_t *queue, qhead, qtail;
    uint32_t lost_found;        /* its inode, 0 until found or made */
    unsigned fixes;
    int failed;                 /* a write failed */
};

/* One inode's block tree being claimed (or given back). */
struct tree_walk {
    uint64_t nblocks;           /* the file's logical blocks */
    uint64_t size;
    uint64_t frags;             /* fragments claimed, indirect ones too */
    int release;                /* give the fragments back instead */
};

static const struct ufs_super *fx_sb(const struct fix *x)
{
    return &x->f->sb;
}

static void fx_write(struct fix *x, uint64_t off, const void *buf, size_t len)
{
    if (pwrite(x->f->fd, buf, len, (off_t)off) != (ssize_t)len)
        x->failed = 1;
}

static void set_used(struct fix *x, int64_t addr, uint32_t n, uint8_t v)
{
    memset(x->used + addr, v, n);
}

/* Fragments the logical block lbn of a file of w's size takes. */
static uint32_t block_frags(const struct fix *x, const struct tree_walk *w, uint64_t lbn)
{
    const struct ufs_super *fs = fx_sb(x);

    if (lbn + 1 == w->nblocks && lbn < UFS_NDADDR)
        return ufs_lastblock_bytes(fs, w->size) / (uint32_t)fs->fs_fsize;
    return (uint32_t)fs->fs_frag;
}

/* Can nfrags fragments at addr be given to an inode: inside the file
 * system and one block, aligned when a whole block, and nobody's yet? */
static int frags_free(const struct fix *x, int64_t addr, uint32_t nfrags)
{
    const struct ufs_super *fs = fx_sb(x);

    if (addr <= 0 || addr + nfrags > fs->fs_size)
        return 0;
    if (nfrags == (uint32_t)fs->fs_frag && addr % fs->fs_frag)
        return 0;
    if (addr / fs->fs_frag != (addr + nfrags - 1) / fs->fs_frag)
        return 0;
    for (uint32_t i = 0; i < nfrags; i++)
        if (x->used[addr + i])
            return 0;
    return 1;
}

/* ---- pass 1: inodes and their blocks ---- */

static int fix_pointer(struct fix *x, struct tree_walk *w, int32_t *p, int level,
                       uint64_t lbn);

/* Walks the pointers of the indirect block at addr; -1 if unreadable. */
static int walk_indirect(struct fix *x, struct tree_walk *w, int64_t addr, int level,
                         uint64_t lbn)
{
    const struct ufs_super *fs = fx_sb(x);
    int32_t *ptrs = xcalloc((size_t)fs->fs_nindir, 4);
    uint64_t span = 1;
    int changed = 0;

    if (read_at(x->f, frag_bytes(x->f, addr), ptrs, (size_t)fs->fs_bsize) < 0) {
        free(ptrs);
        return -1;
    }
    for (int l = 1; l < level; l++)
        span *= (uint32_t)fs->fs_nindir;
    for (int32_t i = 0; i < fs->fs_nindir; i++)
        changed |= fix_pointer(x, w, &ptrs[i], level - 1, lbn + (uint64_t)i * span);
    if (changed)
        fx_write(x, frag_bytes(x->f, addr), ptrs, (size_t)fs->fs_bsize);
    free(ptrs);
    return 0;
}

/* Claims (or gives back) the fragments under one pointer of the given
 * level (0 data, 1..3 indirect) covering logical blocks from lbn; a bad
 * pointer is set to 0.  Returns 1 if *p changed. */
static int fix_pointer(struct fix *x, struct tree_walk *w, int32_t *p, int level,
                       uint64_t lbn)
{
    uint32_t n = level ? (uint32_t)fx_sb(x)->fs_frag : block_frags(x, w, lbn);

    if (*p == 0)
        return 0;
    if (w->release) {
        if (lbn < w->nblocks && *p > 0 && *p + (int64_t)n <= fx_sb(x)->fs_size) {
            set_used(x, *p, n, 0);
            if (level)
                walk_indirect(x, w, *p, level, lbn);
        }
        return 0;
    }
    if (lbn >= w->nblocks || !frags_free(x, *p, n)) {
        *p = 0;
        x->fixes++;
        return 1;
    }
    set_used(x, *p, n, 1);
    if (level && walk_indirect(x, w, *p, level, lbn) < 0) {
        set_used(x, *p, n, 0);
        *p = 0;
        x->fixes++;
        return 1;
    }
    w->frags += n;
    return 0;
}

/* Claims (or gives back) every fragment of an inode; the fragment count. */
static uint64_t walk_inode(struct fix *x, struct ufs_dinode *di, int release)
{
    const struct ufs_super *fs = fx_sb(x);
    struct tree_walk w = { .size = di->di_size, .release = release };
    uint64_t span = UFS_NDADDR, n = 1;

    w.nblocks = (di->di_size + (uint64_t)fs->fs_bsize - 1) >> fs->fs_bshift;
    for (uint32_t i = 0; i < UFS_NDADDR; i++)
        fix_pointer(x, &w, &di->di_db[i], 0, i);
    for (int level = 1; level <= UFS_NIADDR; level++) {
        fix_pointer(x, &w, &di->di_ib[level - 1], level, span);
        n *= (uint32_t)fs->fs_nindir;
        span += n;
    }
    return w.frags;
}

static int has_blocks(const struct fix *x, const struct ufs_dinode *di)
{
    uint16_t t = di->di_mode & UFS_IFMT;

    return t == UFS_IFREG || t == UFS_IFDIR ||
           (t == UFS_IFLNK && !ufs_link_is_short(fx_sb(x), di));
}

/* Byte offset of a directory's first hole (directories have none), or
 * its size. */
static uint64_t first_dir_hole(struct fix *x, const struct ufs_dinode *di)
{
    const struct ufs_super *fs = fx_sb(x);

    for (uint64_t off = 0; off < di->di_size; off += (uint64_t)fs->fs_bsize)
        if (ufs_fsck_bmap(x->f, di, off >> fs->fs_bshift) <= 0)
            return off;
    return di->di_size;
}

static void clear_inode(struct fix *x, uint32_t ino, int walked)
{
    struct ufs_dinode *di = &x->f->itab[ino];

    if (walked && has_blocks(x, di))
        walk_inode(x, di, 1);
    memset(di, 0, sizeof(*di));
    x->fixes++;
}

static void fix_inode(struct fix *x, uint32_t ino)
{
    const struct ufs_super *fs = fx_sb(x);
    struct ufs_dinode *di = &x->f->itab[ino];
    uint16_t t = di->di_mode & UFS_IFMT;
    uint64_t frags;

    if (!di->di_mode)
        return;
    if (!ufs_fsck_type_valid(di->di_mode) || di->di_size > fs->fs_maxfilesize ||
        (ino == UFS_ROOTINO && t != UFS_IFDIR)) {
        clear_inode(x, ino, 0);
        return;
    }
    if (t == UFS_IFDIR && di->di_size % UFS_DIRBLKSIZ) {
        di->di_size -= di->di_size % UFS_DIRBLKSIZ;
        x->fixes++;
    }
    if (!has_blocks(x, di))
        return;
    frags = walk_inode(x, di, 0);
    if (t == UFS_IFDIR) {
        uint64_t hole = first_dir_hole(x, di);
        if (hole < di->di_size) {
            walk_inode(x, di, 1);
            di->di_size = hole;
            frags = walk_inode(x, di, 0);
            x->fixes++;
        }
    }
    if (di->di_blocks != frags * (uint32_t)fs->fs_fsize / UFS_DEV_BSIZE) {
        di->di_blocks = (uint32_t)(frags * (uint32_t)fs->fs_fsize / UFS_DEV_BSIZE);
        x->fixes++;
    }
}

/* The boot area, superblocks, group blocks, inodes and summary area. */
static void mark_metadata(struct fix *x)
{
    const struct ufs_super *fs = fx_sb(x);

    for (uint32_t c = 0; c < (uint32_t)fs->fs_ncg; c++) {
        int64_t base = ufs_cgbase(fs, c);
        int64_t from = c == 0 ? 0 : base + fs->fs_sblkno, to = base + fs->fs_dblkno;
        if (to > fs->fs_size)
            to = fs->fs_size;
        if (to > from)
            set_used(x, from, (uint32_t)(to - from), 1);
    }
    set_used(x, fs->fs_csaddr, (uint32_t)((fs->fs_cssize + fs->fs_fsize - 1) / fs->fs_fsize), 1);
}

/* ---- allocation, for lost+found and directories made anew ---- */

static int64_t alloc_frags(struct fix *x, uint32_t n)
{
    const struct ufs_super *fs = fx_sb(x);

    for (int64_t b = 0; b + fs->fs_frag <= fs->fs_size; b += fs->fs_frag)
        for (int64_t a = b; a + n <= b + fs->fs_frag; a += n == (uint32_t)fs->fs_frag ? n : 1)
            if (frags_free(x, a, n)) {
                set_used(x, a, n, 1);
                return a;
            }
    return 0;
}

static uint32_t alloc_inode(struct fix *x)
{
    for (uint32_t ino = UFS_ROOTINO + 1; ino < x->f->ninodes; ino++)
        if (x->f->itab[ino].di_mode == 0)
            return ino;
    return 0;
}

/* An empty directory chunk: one free entry reaching its end. */
static void empty_chunk(uint8_t *chunk)
{
    struct ufs_direct *d = (struct ufs_direct *)chunk;

    memset(chunk, 0, UFS_DIRBLKSIZ);
    d->d_reclen = UFS_DIRBLKSIZ;
}

/* Puts an entry at pos of a chunk with the given record length. */
static void put_entry(uint8_t *chunk, uint32_t pos, uint32_t ino, uint8_t type,
                      const char *name, uint32_t namlen, uint32_t reclen)
{
    struct ufs_direct *d = (struct ufs_direct *)(chunk + pos);

    memset(d, 0, ufs_direntsize(namlen));
    d->d_ino = ino;
    d->d_reclen = (uint16_t)reclen;
    d->d_type = type;
    d->d_namlen = (uint8_t)namlen;
    memcpy(d->d_name, name, namlen);
}

/* Gives directory ino (mode set, no blocks) its first block of bytes
 * (512 or a whole block): "." and ".." and empty chunks; 0 or -1. */
static int new_dir_data(struct fix *x, uint32_t ino, uint32_t parent, uint32_t bytes)
{
    const struct ufs_super *fs = fx_sb(x);
    struct ufs_dinode *di = &x->f->itab[ino];
    uint32_t alloc = (bytes + (uint32_t)fs->fs_fsize - 1) & ~((uint32_t)fs->fs_fsize - 1);
    int64_t addr = alloc_frags(x, alloc / (uint32_t)fs->fs_fsize);
    uint8_t *buf = xcalloc(1, alloc);

    if (!addr) {
        free(buf);
        return -1;
    }
    for (uint32_t off = 0; off < alloc; off += UFS_DIRBLKSIZ)
        empty_chunk(buf + off);
    put_entry(buf, 0, ino, UFS_DT_DIR, ".", 1, 12);
    put_entry(buf, 12, parent, UFS_DT_DIR, "..", 2, UFS_DIRBLKSIZ - 12);
    fx_write(x, frag_bytes(x->f, addr), buf, alloc);
    free(buf);
    memset(di->di_db, 0, sizeof(di->di_db));
    memset(di->di_ib, 0, sizeof(di->di_ib));
    di->di_db[0] = (int32_t)addr;
    di->di_size = bytes;
    di->di_blocks = alloc / UFS_DEV_BSIZE;
    x->fixes++;
    return 0;
}

/* A new directory inode; 0 when there is no room. */
static uint32_t make_dir(struct fix *x, uint32_t ino, uint32_t parent, uint32_t bytes)
{
    struct ufs_dinode *di = &x->f->itab[ino];
    int32_t now = (int32_t)time(NULL);

    memset(di, 0, sizeof(*di));
    di->di_mode = UFS_IFDIR | 0755;
    di->di_atime = di->di_mtime = di->di_ctime = now;
    if (new_dir_data(x, ino, parent, bytes) < 0) {
        memset(di, 0, sizeof(*di));
        return 0;
    }
    return ino;
}

/* ---- pass 2: directories ---- */

static int name_is(const struct ufs_direct *d, const char *name)
{
    return d->d_namlen == strlen(name) && !memcmp(d->d_name, name, d->d_namlen);
}

/* An entry of left bytes at most whose length and name are sound. */
static int entry_sound(const struct ufs_direct *d, uint32_t left)
{
    if (d->d_reclen < 8 || d->d_reclen % 4 || d->d_reclen > left)
        return 0;
    if (d->d_ino == 0)
        return 1;
    return ufs_direntsize(d->d_namlen) <= d->d_reclen && d->d_namlen &&
           !memchr(d->d_name, '\0', d->d_namlen) && !memchr(d->d_name, '/', d->d_namlen) &&
           d->d_name[d->d_namlen] == '\0';
}

/* Rebuilds a first chunk as ".", "..", then the sound entries of the old
 * one that fit; those that do not become unreachable (pass 3). */
static void rebuild_first_chunk(struct fix *x, uint32_t dir, uint8_t *chunk)
{
    uint8_t out[UFS_DIRBLKSIZ];
    uint32_t pos = 0, at = 24, last = 12;

    empty_chunk(out);
    put_entry(out, 0, dir, UFS_DT_DIR, ".", 1, 12);
    put_entry(out, 12, x->parent[dir], UFS_DT_DIR, "..", 2, UFS_DIRBLKSIZ - 12);
    while (pos < UFS_DIRBLKSIZ) {
        const struct ufs_direct *d = (const struct ufs_direct *)(chunk + pos);
        uint32_t need = ufs_direntsize(d->d_namlen);
        if (!entry_sound(d, UFS_DIRBLKSIZ - pos))
            break;
        if (d->d_ino && !name_is(d, ".") && !name_is(d, "..") && at + need <= UFS_DIRBLKSIZ) {
            ((struct ufs_direct *)(out + last))->d_reclen = (uint16_t)(at - last);
            put_entry(out, at, d->d_ino, d->d_type, d->d_name, d->d_namlen,
                      UFS_DIRBLKSIZ - at);
            last = at;
            at += need;
        }
        pos += d->d_reclen;
    }
    memcpy(chunk, out, UFS_DIRBLKSIZ);
    x->fixes++;
}

/* Makes the first chunk start with "." and ".." naming the right
 * inodes; 1 if it changed. */
static int fix_dots(struct fix *x, uint32_t dir, uint8_t *chunk)
{
    struct ufs_direct *d0 = (struct ufs_direct *)chunk, *d1;
    int changed = 0;

    if (entry_sound(d0, UFS_DIRBLKSIZ) && name_is(d0, ".") && d0->d_reclen < UFS_DIRBLKSIZ) {
        d1 = (struct ufs_direct *)(chunk + d0->d_reclen);
        if (entry_sound(d1, UFS_DIRBLKSIZ - d0->d_reclen) && name_is(d1, "..")) {
            if (d0->d_ino != dir || d0->d_type != UFS_DT_DIR ||
                d1->d_ino != x->parent[dir] || d1->d_type != UFS_DT_DIR) {
                d0->d_ino = dir;
                d1->d_ino = x->parent[dir];
                d0->d_type = d1->d_type = UFS_DT_DIR;
                x->fixes++;
                changed = 1;
            }
            return changed;
        }
    }
    rebuild_first_chunk(x, dir, chunk);
    return 1;
}

static void enqueue_dir(struct fix *x, uint32_t ino, uint32_t parent)
{
    x->parent[ino] = parent;
    x->queue[x->qtail++] = ino;
}

/* Decides about one entry (not "." or ".." of the first chunk) naming an
 * inode: 1 to keep it (d_type set right), 0 to remove it. */
static int keep_entry(struct fix *x, uint32_t dir, struct ufs_direct *d, uint32_t left)
{
    struct fsck *f = x->f;
    const struct ufs_dinode *target;

    if (!entry_sound(d, left) || d->d_ino >= f->ninodes || d->d_ino < UFS_ROOTINO ||
        !f->itab[d->d_ino].di_mode || name_is(d, ".") || name_is(d, ".."))
        return 0;
    target = &f->itab[d->d_ino];
    if ((target->di_mode & UFS_IFMT) == UFS_IFDIR) {
        if (x->parent[d->d_ino])
            return 0;                   /* a second link to a directory */
        enqueue_dir(x, d->d_ino, dir);
        if (dir == UFS_ROOTINO && name_is(d, "lost+found"))
            x->lost_found = d->d_ino;
    }
    if (d->d_type != ufs_mode_to_dtype(target->di_mode)) {
        d->d_type = ufs_mode_to_dtype(target->di_mode);
        x->fixes++;
    }
    x->refs[d->d_ino]++;
    return 1;
}

/* Walks one chunk's entries, cutting it at a broken record length and
 * removing the entries not kept; 1 if it changed. */
static int fix_chunk(struct fix *x, uint32_t dir, uint8_t *chunk, int first)
{
    uint32_t pos = 0, prev = UINT32_MAX;
    int changed = 0;

    while (pos < UFS_DIRBLKSIZ) {
        struct ufs_direct *d = (struct ufs_direct *)(chunk + pos);
        uint32_t left = UFS_DIRBLKSIZ - pos;
        if (d->d_reclen < 8 || d->d_reclen % 4 || d->d_reclen > left) {
            if (prev == UINT32_MAX)
                empty_chunk(chunk);
            else
                ((struct ufs_direct *)(chunk + prev))->d_reclen += (uint16_t)left;
            x->fixes++;
            return 1;
        }
        if (first && pos == 0) {
            x->refs[dir]++;                             /* "." */
        } else if (first && prev == 0) {
            x->refs[x->parent[dir]]++;                  /* ".." */
        } else if (d->d_ino) {
            uint8_t type = d->d_type;
            if (keep_entry(x, dir, d, left)) {
                changed |= d->d_type != type;
            } else {
                x->fixes++;
                changed = 1;
                if (prev != UINT32_MAX) {
                    ((struct ufs_direct *)(chunk + prev))->d_reclen += d->d_reclen;
                    pos += d->d_reclen;
                    continue;
                }
                d->d_ino = 0;
            }
        }
        prev = pos;
        pos += d->d_reclen;
    }
    return changed;
}

static void scan_dir(struct fix *x, uint32_t dir)
{
    const struct ufs_super *fs = fx_sb(x);
    struct ufs_dinode *di = &x->f->itab[dir];
    uint8_t chunk[UFS_DIRBLKSIZ];

    if (di->di_size == 0 && new_dir_data(x, dir, x->parent[dir], UFS_DIRBLKSIZ) < 0)
        return;
    for (uint64_t off = 0; off < di->di_size; off += UFS_DIRBLKSIZ) {
        int64_t addr = ufs_fsck_bmap(x->f, di, off >> fs->fs_bshift);
        uint64_t at = frag_bytes(x->f, addr) + (off & (uint64_t)(fs->fs_bsize - 1));
        int changed = 0;
        if (addr <= 0 || read_at(x->f, at, chunk, sizeof(chunk)) < 0)
            return;                     /* pass 1 leaves none */
        if (off == 0)
            changed = fix_dots(x, dir, chunk);
        changed |= fix_chunk(x, dir, chunk, off == 0);
        if (changed)
            fx_write(x, at, chunk, sizeof(chunk));
    }
}

static void scan_queue(struct fix *x)
{
    while (x->qhead < x->qtail)
        scan_dir(x, x->queue[x->qhead++]);
}

static void fix_tree(struct fix *x)
{
    if (!x->f->itab[UFS_ROOTINO].di_mode && !make_dir(x, UFS_ROOTINO, UFS_ROOTINO, UFS_DIRBLKSIZ))
        return;
    enqueue_dir(x, UFS_ROOTINO, UFS_ROOTINO);
    scan_queue(x);
}

/* ---- pass 3: unreachable inodes to lost+found ---- */

/* Adds one chunk to a directory, in its direct blocks; 0 or -1. */
static int grow_dir(struct fix *x, uint32_t dir)
{
    const struct ufs_super *fs = fx_sb(x);
    struct ufs_dinode *di = &x->f->itab[dir];
    uint64_t off = di->di_size, lbn = off >> fs->fs_bshift;
    uint32_t in_block = (uint32_t)(off & (uint64_t)(fs->fs_bsize - 1));
    uint32_t had = in_block ? ufs_lastblock_bytes(fs, off) : 0;
    uint32_t want = ufs_lastblock_bytes(fs, off + UFS_DIRBLKSIZ);
    uint8_t *buf;
    int64_t addr;

    if (lbn >= UFS_NDADDR)
        return -1;
    buf = xcalloc(1, (size_t)fs->fs_bsize);
    if (had && read_at(x->f, frag_bytes(x->f, di->di_db[lbn]), buf, had) < 0) {
        free(buf);
        return -1;
    }
    empty_chunk(buf + in_block);
    addr = want <= had ? di->di_db[lbn] : alloc_frags(x, want / (uint32_t)fs->fs_fsize);
    if (!addr) {
        free(buf);
        return -1;
    }
    fx_write(x, frag_bytes(x->f, addr), buf, want > had ? want : had);
    free(buf);
    if (want > had) {
        if (had)
            set_used(x, di->di_db[lbn], had / (uint32_t)fs->fs_fsize, 0);
        di->di_db[lbn] = (int32_t)addr;
        di->di_blocks += (want - had) / UFS_DEV_BSIZE;
    }
    di->di_size = off + UFS_DIRBLKSIZ;
    return 0;
}

/* Finds room for an entry in a chunk; its position or -1. */
static int room_in_chunk(uint8_t *chunk, uint32_t need)
{
    for (uint32_t pos = 0; pos < UFS_DIRBLKSIZ; ) {
        struct ufs_direct *d = (struct ufs_direct *)(chunk + pos);
        uint32_t used = d->d_ino ? ufs_direntsize(d->d_namlen) : 0;
        if (d->d_reclen < 8 || d->d_reclen > UFS_DIRBLKSIZ - pos)
            return -1;
        if (d->d_reclen >= used + need) {
            if (used) {
                uint32_t rest = d->d_reclen - used;
                d->d_reclen = (uint16_t)used;
                put_entry(chunk, pos + used, 0, 0, "", 0, rest);
                return (int)(pos + used);
            }
            return (int)pos;
        }
        pos += d->d_reclen;
    }
    return -1;
}

/* Adds the entry name -> ino to a directory; 0 or -1. */
static int add_entry(struct fix *x, uint32_t dir, const char *name, uint32_t ino)
{
    const struct ufs_super *fs = fx_sb(x);
    struct ufs_dinode *di = &x->f->itab[dir];
    uint32_t namlen = (uint32_t)strlen(name), need = ufs_direntsize(namlen);
    uint8_t chunk[UFS_DIRBLKSIZ];

    for (int round = 0; round < 2; round++) {
        for (uint64_t off = 0; off < di->di_size; off += UFS_DIRBLKSIZ) {
            int64_t addr = ufs_fsck_bmap(x->f, di, off >> fs->fs_bshift);
            uint64_t at = frag_bytes(x->f, addr) + (off & (uint64_t)(fs->fs_bsize - 1));
            if (addr <= 0 || read_at(x->f, at, chunk, sizeof(chunk)) < 0)
                return -1;
            int pos = room_in_chunk(chunk, need);
            if (pos < 0)
                continue;
            uint32_t reclen = ((struct ufs_direct *)(chunk + pos))->d_reclen;
            put_entry(chunk, (uint32_t)pos, ino, ufs_mode_to_dtype(x->f->itab[ino].di_mode),
                      name, namlen, reclen);
            fx_write(x, at, chunk, sizeof(chunk));
            x->refs[ino]++;
            return 0;
        }
        if (grow_dir(x, dir) < 0)
            return -1;
    }
    return -1;
}

/* /lost+found, made when missing; 0 when there is no room. */
static uint32_t lost_found(struct fix *x)
{
    uint32_t ino;

    if (x->lost_found)
        return x->lost_found;
    ino = alloc_inode(x);
    if (!ino || !make_dir(x, ino, UFS_ROOTINO, (uint32_t)fx_sb(x)->fs_bsize))
        return 0;
    ino = add_entry(x, UFS_ROOTINO, "lost+found", ino) < 0 ? 0 : ino;
    if (ino) {
        enqueue_dir(x, ino, UFS_ROOTINO);
        scan_queue(x);
        x->lost_found = ino;
    }
    return ino;
}

/* The ".." a directory's first chunk names, or 0. */
static uint32_t dotdot_of(struct fix *x, uint32_t dir)
{
    const struct ufs_dinode *di = &x->f->itab[dir];
    uint8_t chunk[UFS_DIRBLKSIZ];
    int64_t addr = ufs_fsck_bmap(x->f, di, 0);
    const struct ufs_direct *d0 = (const struct ufs_direct *)chunk, *d1;

    if (addr <= 0 || di->di_size == 0 ||
        read_at(x->f, frag_bytes(x->f, addr), chunk, sizeof(chunk)) < 0 ||
        !entry_sound(d0, UFS_DIRBLKSIZ) || d0->d_reclen >= UFS_DIRBLKSIZ)
        return 0;
    d1 = (const struct ufs_direct *)(chunk + d0->d_reclen);
    return entry_sound(d1, UFS_DIRBLKSIZ - d0->d_reclen) && name_is(d1, "..") ? d1->d_ino : 0;
}

/* The top of the unreachable subtree holding directory dir. */
static uint32_t subtree_top(struct fix *x, uint32_t dir)
{
    for (uint32_t steps = 0; steps < x->f->ninodes; steps++) {
        uint32_t up = dotdot_of(x, dir);
        if (up < UFS_ROOTINO || up >= x->f->ninodes || up == dir || x->parent[up] ||
            (x->f->itab[up].di_mode & UFS_IFMT) != UFS_IFDIR)
            break;
        dir = up;
    }
    return dir;
}

static void reconnect(struct fix *x, uint32_t ino)
{
    uint32_t lf = lost_found(x);
    char name[16];

    snprintf(name, sizeof(name), "#%u", ino);
    if (!lf || add_entry(x, lf, name, ino) < 0) {
        printf("fsck.ufs: %s: no room in /lost+found for inode %u\n", x->f->image, ino);
        return;
    }
    x->fixes++;
    if ((x->f->itab[ino].di_mode & UFS_IFMT) == UFS_IFDIR) {
        enqueue_dir(x, ino, lf);
        scan_queue(x);
    }
}

static void fix_unreachable(struct fix *x)
{
    struct ufs_dinode *itab = x->f->itab;

    for (uint32_t ino = UFS_ROOTINO + 1; ino < x->f->ninodes; ino++)
        if ((itab[ino].di_mode & UFS_IFMT) == UFS_IFDIR && !x->parent[ino])
            reconnect(x, subtree_top(x, ino));
    for (uint32_t ino = UFS_ROOTINO + 1; ino < x->f->ninodes; ino++) {
        if (!itab[ino].di_mode || (itab[ino].di_mode & UFS_IFMT) == UFS_IFDIR || x->refs[ino])
            continue;
        if (itab[ino].di_size == 0)
            clear_inode(x, ino, 1);
        else
            reconnect(x, ino);
    }
}

/* ---- pass 4: link counts ---- */

static void fix_links(struct fix *x)
{
    for (uint32_t ino = UFS_ROOTINO; ino < x->f->ninodes; ino++) {
        struct ufs_dinode *di = &x->f->itab[ino];
        int16_t want = (int16_t)(x->refs[ino] > 0x7fff ? 0x7fff : x->refs[ino]);
        if (di->di_mode && di->di_nlink != want) {
            di->di_nlink = want;
            x->fixes++;
        }
    }
}

int ufs_repair(struct fsck *f)
{
    struct fix x = { .f = f };

    if (ufs_reopen_rw(f) < 0)
        return -1;
    if (ufs_sb_invalid(&f->sb, f->image_bytes / (f->sb.fs_fsize > 0 ? f->sb.fs_fsize : 1)) ||
        !f->csum) {
        if (ufs_use_a_copy(f) == 0)
            return FSCK_AGAIN;
        printf("fsck.ufs: %s: the superblock is beyond repair and no copy is sound; "
               "nothing changed\n", f->image);
        return -1;
    }
    if (!f->itab || !f->refs) {
        printf("fsck.ufs: %s: the inodes cannot be read; nothing changed\n", f->image);
        return -1;
    }
    if (ufs_fit_cg_size(f) < 0) {
        printf("fsck.ufs: %s: the superblock is beyond repair: a group block cannot hold "
               "its maps; nothing changed\n", f->image);
        return -1;
    }
    x.used = xcalloc((size_t)f->sb.fs_size, 1);
    x.refs = xcalloc(f->ninodes, sizeof(uint32_t));
    x.parent = xcalloc(f->ninodes, sizeof(uint32_t));
    x.queue = xcalloc(f->ninodes, sizeof(uint32_t));
    mark_metadata(&x);
    for (uint32_t ino = UFS_ROOTINO; ino < f->ninodes; ino++)
        fix_inode(&x, ino);
    fix_tree(&x);
    fix_unreachable(&x);
    fix_links(&x);
    if (ufs_write_maps(f, x.used) < 0)
        x.failed = 1;
    free(x.used);
    free(x.refs);
    free(x.parent);
    free(x.queue);
    if (x.failed) {
        fprintf(stderr, "fsck.ufs: %s: a write failed during the repair\n", f->image);
        return -1;
    }
    return (int)x.fixes;
}
