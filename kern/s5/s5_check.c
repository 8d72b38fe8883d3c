/*
 * An in-kernel consistency check of an unmounted S5 file system, the same
 * checks as the host's fsck.s5 (tools/fsck_s5.c) in a smaller form: the
 * tests run it after concurrent work to prove that every block is either
 * in exactly one file or on the free list, that the superblock's counts
 * and free-inode hint are right, and that every link count matches the
 * directory entries.  It reads the disk directly (blk_rw), so it must run
 * after unmount has flushed and dropped the buffer cache.  It never
 * changes anything.
 */
#include <kern/s5/s5.h>
#include <kern/s5/s5_inode.h>
#include <drivers/block/bio.h>
#include <kern/vm/kmem.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>

#define OWN_NONE 0
#define OWN_FREE 0xffff
#define MAX_PRINTED 20

struct chk {
    struct blkdev *dev;
    struct s5_super sb;
    uint32_t ninodes;
    struct s5_dinode *itab;     /* inode i at itab[i - 1] */
    uint16_t *owner;            /* per block: OWN_NONE, OWN_FREE or the inode */
    uint16_t *refs, *parent;    /* per inode */
    uint32_t *mapped;           /* per inode: logical blocks up to the last mapped one */
    uint16_t *queue;
    uint32_t qhead, qtail;
    uint32_t *blk;              /* one block of scratch per indirect level */
    struct s5_check_result *res;
};

static void problem(struct chk *c, const char *fmt, ...)
{
    if (c->res->problems++ < MAX_PRINTED) {
        char msg[160];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        kprintf("s5check: %s: %s\n", c->dev->name, msg);
    }
}

static int get_block(struct chk *c, uint32_t bno, void *buf)
{
    uint32_t per = S5_BSIZE / c->dev->bsize;
    return blk_rw(c->dev, (uint64_t)bno * per, per, buf, false);
}

/* Claim block b (level 0: data) of inode ino and the tree below it. */
static void walk(struct chk *c, uint32_t ino, uint32_t b, int level, uint64_t lbn,
                 uint64_t size_blocks)
{
    static const uint64_t span[4] = { 1, S5_NBLK1, S5_NBLK2, S5_NBLK3 };
    if (b == 0)
        return;
    if (lbn >= size_blocks)
        problem(c, "inode %u: block %u at logical block %lu is past the size", ino, b, lbn);
    if (!s5_bno_valid(&c->sb, b)) {
        problem(c, "inode %u: block %u out of range", ino, b);
        return;
    }
    if (c->owner[b] != OWN_NONE) {
        problem(c, "block %u claimed by inode %u and %u", b, ino, c->owner[b]);
        return;
    }
    c->owner[b] = (uint16_t)ino;
    c->res->used++;
    if (level == 0) {
        if (lbn + 1 > c->mapped[ino])
            c->mapped[ino] = (uint32_t)(lbn + 1);
        return;
    }
    uint32_t *ind = c->blk + (level - 1) * S5_NINDIR;
    if (get_block(c, b, ind) != 0) {
        problem(c, "inode %u: cannot read indirect block %u", ino, b);
        return;
    }
    for (uint32_t i = 0; i < S5_NINDIR; i++)
        walk(c, ino, ind[i], level - 1, lbn + i * span[level - 1], size_blocks);
}

static bool has_blocks(uint16_t mode)
{
    uint16_t t = mode & S5_IFMT;
    return t == S5_IFREG || t == S5_IFDIR || t == S5_IFLNK;
}

static void check_inode(struct chk *c, uint32_t ino)
{
    const struct s5_dinode *di = &c->itab[ino - 1];
    uint16_t t = di->di_mode & S5_IFMT;
    if (di->di_mode == 0) {
        c->res->free_inodes++;
        if (di->di_nlink != 0)      /* Linux would never reuse it */
            problem(c, "inode %u: free but its link count is %u", ino, di->di_nlink);
        return;
    }
    if (!has_blocks(di->di_mode)) {
        if (t != S5_IFCHR && t != S5_IFBLK && t != S5_IFIFO && t != S5_IFSOCK)
            problem(c, "inode %u: bad mode 0%o", ino, di->di_mode);
        return;
    }
    if (t == S5_IFDIR && di->di_size % S5_DIRENT_SIZE)
        problem(c, "directory %u: size %u", ino, di->di_size);
    uint64_t nb = s5_size_blocks(di->di_size);
    for (int i = 0; i < S5_NDADDR; i++)
        walk(c, ino, s5_getaddr(di, i), 0, (uint64_t)i, nb);
    walk(c, ino, s5_getaddr(di, S5_IND1), 1, S5_NDADDR, nb);
    walk(c, ino, s5_getaddr(di, S5_IND2), 2, S5_NDADDR + S5_NBLK1, nb);
    walk(c, ino, s5_getaddr(di, S5_IND3), 3, S5_NDADDR + S5_NBLK1 + (uint64_t)S5_NBLK2, nb);
}

static void mark_free(struct chk *c, uint32_t b, uint32_t where)
{
    if (!s5_bno_valid(&c->sb, b))
        problem(c, "free list (at %u): block %u out of range", where, b);
    else if (c->owner[b] == OWN_FREE)
        problem(c, "free list (at %u): block %u twice", where, b);
    else if (c->owner[b] != OWN_NONE)
        problem(c, "free list (at %u): block %u is in inode %u", where, b, c->owner[b]);
    else {
        c->owner[b] = OWN_FREE;
        c->res->nfree++;
    }
}

static void check_free_list(struct chk *c)
{
    uint32_t nfree = c->sb.s_nfree, where = S5_SUPERBLOCK;
    uint32_t *list = c->sb.s_free;
    struct s5_fblk *fb = (struct s5_fblk *)c->blk;
    for (uint32_t guard = 0; guard < c->sb.s_fsize; guard++) {
        for (uint32_t i = nfree; i-- > 1;)
            mark_free(c, list[i], where);
        if (nfree == 0 || list[0] == 0)
            return;
        uint32_t next = list[0];
        mark_free(c, next, where);
        if (!s5_bno_valid(&c->sb, next) || get_block(c, next, fb) != 0)
            return;
        if (fb->df_nfree > S5_NICFREE) {
            problem(c, "free-list chain block %u: df_nfree %u", next, fb->df_nfree);
            return;
        }
        nfree = fb->df_nfree;
        list = fb->df_free;
        where = next;
    }
}

/* Logical block lbn of a directory (direct or single indirect only:
 * directories this big are not made by the tests). */
static uint32_t dir_bmap(struct chk *c, const struct s5_dinode *di, uint32_t lbn)
{
    if (lbn < S5_NDADDR)
        return s5_getaddr(di, lbn);
    uint32_t ind = s5_getaddr(di, S5_IND1);
    if (lbn >= S5_NDADDR + S5_NBLK1 || !s5_bno_valid(&c->sb, ind) || get_block(c, ind, c->blk))
        return 0;
    return c->blk[lbn - S5_NDADDR];
}

static void check_entry(struct chk *c, uint32_t dir, const struct s5_direct *de, uint32_t slot)
{
    if (slot < 2) {
        uint32_t want = slot == 0 ? dir : c->parent[dir];
        if (de->d_ino != want || !s5_namematch(de->d_name, slot ? ".." : ".", slot + 1))
            problem(c, "directory %u: entry %u should be '%s' -> %u", dir, slot,
                    slot ? ".." : ".", want);
    }
    if (de->d_ino == 0)
        return;
    if (!s5_ino_valid(&c->sb, de->d_ino) || c->itab[de->d_ino - 1].di_mode == 0) {
        problem(c, "directory %u: entry %u names bad or free inode %u", dir, slot, de->d_ino);
        return;
    }
    c->refs[de->d_ino]++;
    bool dot = s5_namematch(de->d_name, ".", 1) || s5_namematch(de->d_name, "..", 2);
    if (dot || (c->itab[de->d_ino - 1].di_mode & S5_IFMT) != S5_IFDIR)
        return;
    if (c->parent[de->d_ino]) {
        problem(c, "directory %u linked twice (in %u and %u)", de->d_ino, c->parent[de->d_ino],
                dir);
        return;
    }
    c->parent[de->d_ino] = (uint16_t)dir;
    c->queue[c->qtail++] = (uint16_t)de->d_ino;
}

static void scan_dir(struct chk *c, uint32_t dir, struct s5_direct *ents)
{
    const struct s5_dinode *di = &c->itab[dir - 1];
    uint32_t nent = di->di_size / S5_DIRENT_SIZE;
    for (uint32_t lbn = 0; lbn * S5_DIRPB < nent; lbn++) {
        uint32_t b = dir_bmap(c, di, lbn);
        if (b == 0 || !s5_bno_valid(&c->sb, b) || get_block(c, b, ents)) {
            problem(c, "directory %u: no block %u", dir, lbn);
            return;
        }
        for (uint32_t i = 0; i < S5_DIRPB && lbn * S5_DIRPB + i < nent; i++)
            check_entry(c, dir, &ents[i], lbn * S5_DIRPB + i);
    }
}

static void check_tree_and_links(struct chk *c)
{
    struct s5_direct *ents = kmalloc(S5_BSIZE);
    if (!ents) {
        problem(c, "out of memory");
        return;
    }
    c->parent[S5_ROOTINO] = S5_ROOTINO;
    c->queue[c->qtail++] = S5_ROOTINO;
    while (c->qhead < c->qtail)
        scan_dir(c, c->queue[c->qhead++], ents);
    kfree(ents);
    for (uint32_t ino = S5_ROOTINO; ino <= c->ninodes; ino++) {
        const struct s5_dinode *di = &c->itab[ino - 1];
        if (di->di_mode == 0)
            continue;
        if ((di->di_mode & S5_IFMT) == S5_IFDIR)
            c->res->dirs++;
        else
            c->res->files++;
        if (c->refs[ino] == 0)
            problem(c, "inode %u (mode 0%o) is unreachable", ino, di->di_mode);
        else if (c->refs[ino] != di->di_nlink)
            problem(c, "inode %u: nlink %u, %u entries", ino, di->di_nlink, c->refs[ino]);
    }
}

static void check_counts(struct chk *c)
{
    if (c->res->used + c->res->nfree != c->sb.s_fsize - c->sb.s_isize)
        problem(c, "%u blocks used + %u free != %u data blocks (lost blocks)", c->res->used,
                c->res->nfree, c->sb.s_fsize - c->sb.s_isize);
    if (c->sb.s_tfree != c->res->nfree)
        problem(c, "s_tfree %u, free list holds %u", c->sb.s_tfree, c->res->nfree);
    if (c->sb.s_tinode != c->res->free_inodes)
        problem(c, "s_tinode %u, %u inodes free", c->sb.s_tinode, c->res->free_inodes);
    for (uint32_t i = 0; i < c->sb.s_ninode; i++) {
        uint32_t ino = c->sb.s_inode[i];
        if (!s5_ino_valid(&c->sb, ino) || c->itab[ino - 1].di_mode != 0)
            problem(c, "free-inode cache entry %u: inode %u is not free", i, ino);
        for (uint32_t j = 0; j < i; j++)
            if (c->sb.s_inode[j] == ino)
                problem(c, "free-inode cache entry %u: inode %u twice", i, ino);
    }
}

static int run(struct chk *c)
{
    for (uint32_t b = 0; b < c->ninodes / S5_INOPB; b++)
        if (get_block(c, S5_ILISTBLOCK + b, &c->itab[b * S5_INOPB]))
            return -EIO;
    for (uint32_t ino = 1; ino <= c->ninodes; ino++)
        check_inode(c, ino);
    check_free_list(c);
    check_counts(c);
    check_tree_and_links(c);
    return 0;
}

int s5_check(struct blkdev *dev, struct s5_check_result *res)
{
    memset(res, 0, sizeof *res);
    struct chk *c = kzalloc(sizeof *c);
    if (!c)
        return -ENOMEM;
    c->dev = dev;
    c->res = res;
    int err = -ENOMEM;
    c->blk = kmalloc(3 * S5_BSIZE);
    if (!c->blk)
        goto out;
    err = get_block(c, S5_SUPERBLOCK, c->blk);
    if (err)
        goto out;
    memcpy(&c->sb, (char *)c->blk + S5_SBOFF, sizeof c->sb);
    const char *why = s5_sb_invalid(&c->sb, dev->nblocks * dev->bsize / S5_BSIZE);
    if (why) {
        problem(c, "superblock: %s", why);
        err = 0;
        goto out;
    }
    res->clean = s5_sb_is_clean(&c->sb);
    if (c->sb.s_state == S5_FSBAD)
        problem(c, "superblock marked bad");
    c->ninodes = s5_ninodes(&c->sb);
    c->itab = kmalloc(c->ninodes * sizeof *c->itab);
    c->owner = kzalloc(c->sb.s_fsize * sizeof *c->owner);
    c->refs = kzalloc((c->ninodes + 1) * sizeof *c->refs);
    c->parent = kzalloc((c->ninodes + 1) * sizeof *c->parent);
    c->mapped = kzalloc((c->ninodes + 1) * sizeof *c->mapped);
    c->queue = kzalloc((c->ninodes + 1) * sizeof *c->queue);
    err = -ENOMEM;
    if (c->itab && c->owner && c->refs && c->parent && c->mapped && c->queue)
        err = run(c);
out:
    kfree(c->itab);
    kfree(c->owner);
    kfree(c->refs);
    kfree(c->parent);
    kfree(c->mapped);
    kfree(c->queue);
    kfree(c->blk);
    kfree(c);
    return err ? err : (int)res->problems;
}
