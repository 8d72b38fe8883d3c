/*
 * mkfs.ufs: make a UFS1 file system image (kern/ufs/ufs_fs.h), optionally
 * filled from a host directory.
 *
 *   mkfs.ufs [-d DIR [-o OWNERS]] [-b BSIZE] [-f FSIZE] [-i BYTES] IMAGE SIZE
 *
 * SIZE is in KiB, or has a K, M or G suffix; IMAGE is created or
 * truncated.  -b and -f set the block and fragment sizes (8192 and 1024 by
 * default; 4096 .. 65536, at most 8 fragments a block), -i the bytes of
 * data per inode (8192).  With -d, regular files, directories, symbolic
 * links, FIFOs and device files under DIR are copied in with their
 * permission bits, owner 0 and their modification time; hard links within
 * DIR stay hard links.  -o names files of DIR that get another owner
 * ("PATH UID GID" lines, tools/hostowners.h), as mkfs.s5 -o does.
 *
 * The layout is the one NetBSD's newfs and makefs write: cylinder groups as
 * large as a one-block group map allows, the superblock at 8192 and a copy
 * in every group, the summary area at the start of group 0's data.
 * Allocation is the FFS paper's, plainly: a directory goes to the group
 * with the fewest directories among those with free inodes at or above the
 * average, a file to its directory's group; blocks come from the file's
 * group (the next groups when it is full), the last block of a file of
 * fewer than 12 blocks as fragments, taken from a partly used block when
 * one has room.  SOURCE_DATE_EPOCH, if set, is the time written, so images
 * can be reproduced byte for byte.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "kern/ufs/ufs_fs.h"
#include "ufs_cg.h"
#include "hostlinks.h"
#include "hostowners.h"

#define DEFAULT_BSIZE   8192
#define DEFAULT_FSIZE   1024
#define DEFAULT_DENSITY 8192
#define MAX_IPG         32767           /* cg_niblk is 16 bits */

struct mkfs {
    const char *image;
    int fd;
    uint32_t now;
    struct ufs_super sb;
    uint8_t *iused;                     /* inode map, whole file system */
    uint8_t *ffree;                     /* fragment map (1 = free) */
    struct ufs_dinode *itab;
    uint32_t ninodes;
    int32_t *cg_ndir;                   /* directories per group */
    int32_t *cg_nifree;                 /* free inodes per group */
    struct hostlinks links;             /* the host tree's hard links (tools/hostlinks.h) */
    const char *top;                    /* the -d directory */
    struct hostowners owners;           /* the -o list (tools/hostowners.h) */
};

static struct mkfs *cleanup_m;

static void __attribute__((noreturn, format(printf, 1, 2))) fatal(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "mkfs.ufs: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (cleanup_m && cleanup_m->fd >= 0)
        unlink(cleanup_m->image);
    exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);

    if (!p)
        fatal("out of memory");
    return p;
}

static void write_at(struct mkfs *m, uint64_t off, const void *buf, size_t len)
{
    if (pwrite(m->fd, buf, len, (off_t)off) != (ssize_t)len)
        fatal("%s: write failed: %s", m->image, strerror(errno));
}

static uint64_t frag_off(const struct mkfs *m, int64_t frag)
{
    return (uint64_t)frag * (uint32_t)m->sb.fs_fsize;
}

static int ilog2(uint32_t x)
{
    int n = 0;

    while ((1u << n) < x)
        n++;
    return n;
}

/* ---- geometry ---- */

/* Bytes of a group block for fpg fragments and ipg inodes. */
static int32_t cg_bytes(int32_t fpg, int32_t ipg, int32_t frag)
{
    int32_t iused = (int32_t)sizeof(struct ufs_cg) + 4 + 2;
    int32_t freeoff = iused + (ipg + 7) / 8;
    int32_t sumoff = ((freeoff + (fpg + 7) / 8 + 3) & ~3) - 4;
    int32_t cloff = sumoff + (UFS_MAXCONTIG_SUM + 1) * 4;
    return cloff + (fpg / frag + 7) / 8;
}

static int32_t inodes_for(int32_t fpg, int32_t fsize, int32_t inopb, int64_t density)
{
    int64_t n = (int64_t)fpg * fsize / density;

    n = (n + inopb - 1) / inopb * inopb;
    if (n < inopb)
        n = inopb;
    while (n > MAX_IPG)
        n -= inopb;
    return (int32_t)n;
}

static void set_geometry(struct mkfs *m, int64_t bytes, int32_t bsize, int32_t fsize,
                         int64_t density)
{
    struct ufs_super *fs = &m->sb;
    int32_t frag = bsize / fsize, inopb = bsize / UFS_INODE_SIZE;
    int64_t size = bytes / fsize;
    int32_t sblkno = (UFS_SBOFF + UFS_SBSIZE + fsize - 1) / fsize;

    sblkno = (sblkno + frag - 1) / frag * frag;
    int32_t cblkno = sblkno + (UFS_SBSIZE + bsize - 1) / bsize * frag;
    int32_t iblkno = cblkno + frag;
    /* The largest group whose map fits one block, no larger than the disk. */
    int64_t fpg = (size + frag - 1) / frag * frag;
    if (fpg > (int64_t)8 * bsize)
        fpg = (int64_t)8 * bsize;       /* the fragment map alone fills the block */
    int32_t ipg = inodes_for((int32_t)fpg, fsize, inopb, density);
    while (cg_bytes((int32_t)fpg, ipg, frag) > bsize) {
        fpg -= frag * 8;
        ipg = inodes_for((int32_t)fpg, fsize, inopb, density);
    }
    int32_t dblkno = iblkno + ipg / inopb * frag;
    int64_t ncg = (size + fpg - 1) / fpg;
    /* A last group too small for its own metadata and a block is dropped. */
    if (ncg > 1 && size - (ncg - 1) * fpg < dblkno + frag) {
        ncg--;
        size = ncg * fpg;
    }
    if (ncg < 1 || size < dblkno + 2 * frag || fpg <= dblkno)
        fatal("%s: %lld bytes are too small for a file system with %d-byte blocks",
              m->image, (long long)bytes, bsize);
    if (size > 0x7fffffff || ncg * ipg > 0x7fffffff)
        fatal("%s: too large for UFS1's 32-bit fragment and inode numbers", m->image);
    fs->fs_sblkno = sblkno;
    fs->fs_cblkno = cblkno;
    fs->fs_iblkno = iblkno;
    fs->fs_dblkno = dblkno;
    fs->fs_cgmask = -1;
    fs->fs_size = (int32_t)size;
    fs->fs_ncg = (int32_t)ncg;
    fs->fs_bsize = bsize;
    fs->fs_fsize = fsize;
    fs->fs_frag = frag;
    fs->fs_minfree = 5;
    fs->fs_rps = 60;
    fs->fs_bmask = ~(bsize - 1);
    fs->fs_fmask = ~(fsize - 1);
    fs->fs_bshift = ilog2((uint32_t)bsize);
    fs->fs_fshift = ilog2((uint32_t)fsize);
    fs->fs_maxcontig = 65536 / bsize > 1 ? 65536 / bsize : 1;
    fs->fs_maxbpg = bsize / 4;
    fs->fs_fragshift = ilog2((uint32_t)frag);
    fs->fs_fsbtodb = ilog2((uint32_t)(fsize / UFS_DEV_BSIZE));
    fs->fs_sbsize = ((int32_t)sizeof(struct ufs_super) + fsize - 1) / fsize * fsize;
    fs->fs_nindir = bsize / 4;
    fs->fs_inopb = inopb;
    fs->fs_nspf = fsize / UFS_DEV_BSIZE;
    fs->fs_interleave = 1;
    fs->fs_cssize = (int32_t)((ncg * (int64_t)sizeof(struct ufs_csum) + fsize - 1) / fsize * fsize);
    fs->fs_csaddr = dblkno;
    fs->fs_cgsize = (cg_bytes((int32_t)fpg, ipg, frag) + fsize - 1) / fsize * fsize;
    fs->fs_spc = fs->fs_nsect = fs->fs_npsect = (int32_t)fpg * fs->fs_nspf;
    fs->fs_ncyl = (int32_t)ncg;
    fs->fs_cpg = 1;
    fs->fs_ipg = ipg;
    fs->fs_fpg = (int32_t)fpg;
    fs->fs_dsize = (int32_t)(size - sblkno - ncg * (dblkno - sblkno) - fs->fs_cssize / fsize);
    fs->fs_contigsumsize = UFS_MAXCONTIG_SUM;
    fs->fs_maxsymlinklen = UFS_MAXSYMLINKLEN;
    fs->fs_inodefmt = UFS_44INODEFMT;
    fs->fs_qbmask = bsize - 1;
    fs->fs_qfmask = fsize - 1;
    fs->fs_postblformat = UFS_DYNAMICPOSTBLFMT;
    fs->fs_nrpos = 1;
    fs->fs_avgfilesize = 16384;
    fs->fs_avgfpdir = 64;
    fs->fs_magic = UFS1_MAGIC;
    /* The largest file: the direct and indirect blocks' reach, capped at
     * 2^31 blocks of UFS_DEV_BSIZE (di_blocks is 32 bits). */
    uint64_t n = (uint64_t)fs->fs_nindir, blocks = UFS_NDADDR + n + n * n + n * n * n;
    uint64_t max = blocks * (uint64_t)bsize - 1, cap = ((uint64_t)1 << 31) * UFS_DEV_BSIZE - 1;
    fs->fs_maxfilesize = max < cap ? max : cap;
}

/* ---- allocation ---- */

static int frag_free(const struct mkfs *m, int64_t x)
{
    return ufs_isset(m->ffree, (uint64_t)x);
}

static void take_frags(struct mkfs *m, int64_t x, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        ufs_clrbit(m->ffree, (uint64_t)(x + i));
}

/* The first wholly free block of group c, or -1. */
static int64_t free_block_in(const struct mkfs *m, uint32_t c)
{
    const struct ufs_super *fs = &m->sb;
    int64_t base = ufs_cgbase(fs, c), end = base + ufs_cgfrags(fs, c);

    for (int64_t b = base; b + fs->fs_frag <= end; b += fs->fs_frag) {
        int32_t i = 0;
        while (i < fs->fs_frag && frag_free(m, b + i))
            i++;
        if (i == fs->fs_frag)
            return b;
    }
    return -1;
}

/* A run of n free fragments inside a partly used block of group c, the
 * shortest run that fits; or -1. */
static int64_t free_frags_in(const struct mkfs *m, uint32_t c, int32_t n)
{
    const struct ufs_super *fs = &m->sb;
    int64_t base = ufs_cgbase(fs, c), end = base + ufs_cgfrags(fs, c), best = -1;
    int32_t best_len = fs->fs_frag;

    for (int64_t b = base; b + fs->fs_frag <= end; b += fs->fs_frag) {
        int32_t nfree = 0;
        for (int32_t i = 0; i < fs->fs_frag; i++)
            nfree += frag_free(m, b + i);
        if (nfree == fs->fs_frag || nfree < n)
            continue;
        for (int32_t i = 0; i < fs->fs_frag; ) {
            int32_t len = 0;
            while (i + len < fs->fs_frag && frag_free(m, b + i + len))
                len++;
            if (len >= n && len < best_len) {
                best = b + i;
                best_len = len;
            }
            i += len ? len : 1;
        }
    }
    return best;
}

/* Allocates nfrags fragments (a whole block when nfrags == fs_frag) near
 * group pref; returns the fragment address. */
static int64_t alloc_frags(struct mkfs *m, uint32_t pref, int32_t nfrags)
{
    const struct ufs_super *fs = &m->sb;

    for (int32_t k = 0; k < fs->fs_ncg; k++) {
        uint32_t c = (pref + (uint32_t)k) % (uint32_t)fs->fs_ncg;
        int64_t x = nfrags < fs->fs_frag ? free_frags_in(m, c, nfrags) : -1;
        if (x < 0)
            x = free_block_in(m, c);
        if (x >= 0) {
            take_frags(m, x, nfrags);
            return x;
        }
    }
    fatal("%s: out of space", m->image);
}

static uint32_t alloc_inode(struct mkfs *m, uint32_t pref_cg, int is_dir)
{
    const struct ufs_super *fs = &m->sb;
    uint32_t c = pref_cg;

    if (is_dir) {
        int64_t total = 0;
        for (int32_t i = 0; i < fs->fs_ncg; i++)
            total += m->cg_nifree[i];
        int64_t avg = total / fs->fs_ncg;
        int32_t best = -1;
        for (int32_t i = 0; i < fs->fs_ncg; i++)
            if (m->cg_nifree[i] > 0 && m->cg_nifree[i] >= avg &&
                (best < 0 || m->cg_ndir[i] < m->cg_ndir[best]))
                best = i;
        if (best >= 0)
            c = (uint32_t)best;
    }
    for (int32_t k = 0; k < fs->fs_ncg; k++, c = (c + 1) % (uint32_t)fs->fs_ncg) {
        if (m->cg_nifree[c] == 0)
            continue;
        for (int32_t i = 0; i < fs->fs_ipg; i++) {
            uint32_t ino = c * (uint32_t)fs->fs_ipg + (uint32_t)i;
            if (!ufs_isset(m->iused, ino)) {
                ufs_setbit(m->iused, ino);
                m->cg_nifree[c]--;
                if (is_dir)
                    m->cg_ndir[c]++;
                return ino;
            }
        }
    }
    fatal("%s: out of inodes (%u); use -i with fewer bytes per inode", m->image, m->ninodes);
}

/* ---- writing file data ---- */

/* Writes the block pointer ptr for logical block lbn of an inode,
 * allocating indirect blocks (kept in memory in ind[]) as needed. */
struct indirect {
    int64_t addr;
    int32_t *ptrs;
    struct indirect *child[1];          /* fs_nindir children, allocated with it */
};

static struct indirect *new_indirect(struct mkfs *m, uint32_t cg, uint64_t *frags)
{
    const struct ufs_super *fs = &m->sb;
    size_t n = (size_t)fs->fs_nindir;
    struct indirect *ind = xcalloc(1, sizeof(*ind) + n * sizeof(ind->child[0]));

    ind->ptrs = xcalloc(n, sizeof(int32_t));
    ind->addr = alloc_frags(m, cg, fs->fs_frag);
    *frags += (uint64_t)fs->fs_frag;
    return ind;
}

static void flush_indirect(struct mkfs *m, struct indirect *ind)
{
    if (!ind)
        return;
    for (int32_t i = 0; i < m->sb.fs_nindir; i++)
        flush_indirect(m, ind->child[i]);
    write_at(m, frag_off(m, ind->addr), ind->ptrs, (size_t)m->sb.fs_bsize);
    free(ind->ptrs);
    free(ind);
}

static void set_pointer(struct mkfs *m, struct ufs_dinode *di, struct indirect *top[3],
                        uint64_t lbn, int64_t addr, uint32_t cg, uint64_t *frags)
{
    uint64_t n = (uint64_t)m->sb.fs_nindir, span = n;

    if (lbn < UFS_NDADDR) {
        di->di_db[lbn] = (int32_t)addr;
        return;
    }
    lbn -= UFS_NDADDR;
    int level = 0;
    while (lbn >= span) {
        lbn -= span;
        span *= n;
        level++;
    }
    if (!top[level]) {
        top[level] = new_indirect(m, cg, frags);
        di->di_ib[level] = (int32_t)top[level]->addr;
    }
    struct indirect *ind = top[level];
    for (int l = level; l > 0; l--) {
        span /= n;
        uint64_t i = lbn / span;
        lbn %= span;
        if (!ind->child[i]) {
            ind->child[i] = new_indirect(m, cg, frags);
            ind->ptrs[i] = (int32_t)ind->child[i]->addr;
        }
        ind = ind->child[i];
    }
    ind->ptrs[lbn] = (int32_t)addr;
}

/* Gives inode ino the len bytes at data as its contents. */
static void write_data(struct mkfs *m, uint32_t ino, const uint8_t *data, uint64_t len)
{
    const struct ufs_super *fs = &m->sb;
    struct ufs_dinode *di = &m->itab[ino];
    struct indirect *top[3] = { 0, 0, 0 };
    uint32_t cg = ufs_ino_to_cg(fs, ino);
    uint64_t nblocks = (len + (uint64_t)fs->fs_bsize - 1) >> fs->fs_bshift, frags = 0;
    uint8_t *blk = xcalloc(1, (size_t)fs->fs_bsize);

    if (len > fs->fs_maxfilesize)
        fatal("%s: a file of %llu bytes is larger than the file system allows", m->image,
              (unsigned long long)len);
    for (uint64_t lbn = 0; lbn < nblocks; lbn++) {
        uint64_t off = lbn << fs->fs_bshift;
        uint32_t bytes = lbn + 1 == nblocks ? ufs_lastblock_bytes(fs, len) : (uint32_t)fs->fs_bsize;
        uint64_t have = len - off < bytes ? len - off : bytes;
        int64_t addr = alloc_frags(m, cg, (int32_t)(bytes / (uint32_t)fs->fs_fsize));
        memset(blk, 0, bytes);
        memcpy(blk, data + off, have);
        write_at(m, frag_off(m, addr), blk, bytes);
        frags += bytes / (uint32_t)fs->fs_fsize;
        set_pointer(m, di, top, lbn, addr, cg, &frags);
    }
    for (int i = 0; i < 3; i++)
        flush_indirect(m, top[i]);
    free(blk);
    di->di_size = len;
    di->di_blocks = (uint32_t)(frags * (uint32_t)fs->fs_fsize / UFS_DEV_BSIZE);
}

/* ---- directories ---- */

struct dirbuf {
    uint8_t *data;
    uint32_t len, cap;                  /* bytes used (whole chunks), allocated */
    uint32_t last;                      /* offset of the last entry */
};

static void dir_add(struct dirbuf *d, const char *name, uint32_t ino, uint8_t type)
{
    uint32_t namlen = (uint32_t)strlen(name), need = ufs_direntsize(namlen);
    struct ufs_direct *e;

    if (d->len) {
        e = (struct ufs_direct *)(d->data + d->last);
        uint32_t used = ufs_direntsize(e->d_namlen);
        uint32_t chunk_end = (d->last / UFS_DIRBLKSIZ + 1) * UFS_DIRBLKSIZ;
        if (d->last + used + need <= chunk_end) {
            e->d_reclen = (uint16_t)used;
            d->last += used;
            goto put;
        }
    }
    if (d->len + UFS_DIRBLKSIZ > d->cap) {
        d->cap = d->cap ? 2 * d->cap : 4 * UFS_DIRBLKSIZ;
        d->data = realloc(d->data, d->cap);
        if (!d->data)
            fatal("out of memory");
    }
    memset(d->data + d->len, 0, UFS_DIRBLKSIZ);
    d->last = d->len;
    d->len += UFS_DIRBLKSIZ;
put:
    e = (struct ufs_direct *)(d->data + d->last);
    e->d_ino = ino;
    e->d_type = type;
    e->d_namlen = (uint8_t)namlen;
    memcpy(e->d_name, name, namlen + 1);
    e->d_reclen = (uint16_t)((d->last / UFS_DIRBLKSIZ + 1) * UFS_DIRBLKSIZ - d->last);
}

/* ---- copying the host tree ---- */

static uint32_t copy_entry(struct mkfs *m, const char *path, uint32_t parent);

static void set_times(struct ufs_dinode *di, const struct stat *st)
{
    di->di_atime = di->di_mtime = di->di_ctime = (int32_t)st->st_mtime;
}

static uint8_t *slurp(const char *path, uint64_t size)
{
    uint8_t *buf = xcalloc(1, (size_t)size);
    int fd = open(path, O_RDONLY);
    uint64_t got = 0;

    if (fd < 0)
        fatal("%s: %s", path, strerror(errno));
    while (got < size) {
        ssize_t n = read(fd, buf + got, (size_t)(size - got));
        if (n <= 0)
            fatal("%s: read failed or the file shrank", path);
        got += (uint64_t)n;
    }
    close(fd);
    return buf;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void copy_dir(struct mkfs *m, const char *path, uint32_t ino, uint32_t parent)
{
    struct dirbuf d = { 0 };
    char **names = NULL;
    size_t n = 0, cap = 0;
    DIR *dir = opendir(path);
    struct dirent *de;

    if (!dir)
        fatal("%s: %s", path, strerror(errno));
    while ((de = readdir(dir))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (strlen(de->d_name) > UFS_MAXNAMLEN)
            fatal("%s/%s: names are at most %d bytes", path, de->d_name, UFS_MAXNAMLEN);
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = realloc(names, cap * sizeof(*names));
            if (!names)
                fatal("out of memory");
        }
        names[n++] = strdup(de->d_name);
    }
    closedir(dir);
    qsort(names, n, sizeof(*names), compare_names);
    dir_add(&d, ".", ino, UFS_DT_DIR);
    dir_add(&d, "..", parent, UFS_DT_DIR);
    for (size_t i = 0; i < n; i++) {
        char *child = malloc(strlen(path) + strlen(names[i]) + 2);
        if (!child)
            fatal("out of memory");
        sprintf(child, "%s/%s", path, names[i]);
        uint32_t cino = copy_entry(m, child, ino);
        if (cino)
            dir_add(&d, names[i], cino, ufs_mode_to_dtype(m->itab[cino].di_mode));
        free(child);
        free(names[i]);
    }
    free(names);
    write_data(m, ino, d.data, d.len);
    free(d.data);
}

static void copy_symlink(struct mkfs *m, const char *path, uint32_t ino, const struct stat *st)
{
    char *target = xcalloc(1, (size_t)st->st_size + 1);
    ssize_t len = readlink(path, target, (size_t)st->st_size + 1);

    if (len < 0 || len > st->st_size)
        fatal("%s: cannot read the link", path);
    if (len < m->sb.fs_maxsymlinklen) {
        memcpy(m->itab[ino].di_db, target, (size_t)len);
        m->itab[ino].di_size = (uint64_t)len;
    } else
        write_data(m, ino, (const uint8_t *)target, (uint64_t)len);
    free(target);
}

/* Copies one host object; returns its inode, or 0 if it was skipped. */
static uint32_t copy_entry(struct mkfs *m, const char *path, uint32_t parent)
{
    struct stat st;

    if (lstat(path, &st) < 0)
        fatal("%s: %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode) && st.st_nlink > 1) {
        uint32_t ino = hostlinks_find(&m->links, &st);
        if (ino) {
            m->itab[ino].di_nlink++;
            return ino;
        }
    }
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode) &&
        !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
        fprintf(stderr, "mkfs.ufs: %s: skipping a socket\n", path);
        return 0;
    }
    uint32_t ino = alloc_inode(m, ufs_ino_to_cg(&m->sb, parent), S_ISDIR(st.st_mode));
    struct ufs_dinode *di = &m->itab[ino];
    di->di_mode = (uint16_t)(st.st_mode & 0177777);
    di->di_nlink = S_ISDIR(st.st_mode) ? 2 : 1;
    hostowners_find(&m->owners, m->top, path, &di->di_uid, &di->di_gid);
    set_times(di, &st);
    if (S_ISREG(st.st_mode)) {
        uint8_t *data = slurp(path, (uint64_t)st.st_size);
        write_data(m, ino, data, (uint64_t)st.st_size);
        free(data);
    } else if (S_ISLNK(st.st_mode)) {
        copy_symlink(m, path, ino, &st);
    } else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
        /* 4.4BSD's dev_t: the major in bits 8..15, the minor's low byte in
         * bits 0..7 and its other bits from bit 16 (NetBSD's makedev). */
        uint32_t maj = major(st.st_rdev), min = minor(st.st_rdev);
        di->di_db[0] = (int32_t)(((maj << 8) & 0xfff00u) | ((min << 12) & 0xfff00000u) |
                                 (min & 0xffu));
    } else if (S_ISDIR(st.st_mode)) {
        m->itab[parent].di_nlink++;
        copy_dir(m, path, ino, parent);
    }
    if (!S_ISDIR(st.st_mode) && st.st_nlink > 1 && hostlinks_add(&m->links, &st, ino) != 0)
        fatal("out of memory");
    return ino;
}

/* ---- the metadata ---- */

static void mark_metadata(struct mkfs *m)
{
    const struct ufs_super *fs = &m->sb;

    for (uint32_t c = 0; c < (uint32_t)fs->fs_ncg; c++) {
        int64_t base = ufs_cgbase(fs, c), end = base + ufs_cgfrags(fs, c);
        int64_t meta_from = c == 0 ? base : base + fs->fs_sblkno;
        for (int64_t x = base; x < end; x++)
            if (x < meta_from || x >= base + fs->fs_dblkno)
                ufs_setbit(m->ffree, (uint64_t)x);
        m->cg_nifree[c] = fs->fs_ipg;
    }
    take_frags(m, fs->fs_csaddr, fs->fs_cssize / fs->fs_fsize);
    for (uint32_t ino = 0; ino < UFS_ROOTINO; ino++) {
        ufs_setbit(m->iused, ino);
        m->cg_nifree[0]--;
    }
}

/* Is fragment x free (ufs_cg_fill_frags's view)? */
static int frag_free_cb(const void *m, int64_t x)
{
    return frag_free(m, x);
}

/* Fills one group's block in buf and returns its counts. */
static struct ufs_csum build_cg(struct mkfs *m, uint32_t c, uint8_t *buf)
{
    const struct ufs_super *fs = &m->sb;
    struct ufs_cg *cg = (struct ufs_cg *)buf;

    ufs_cg_start(fs, c, buf, (int32_t)m->now);
    uint8_t *iused = buf + cg->cg_iusedoff;
    for (int32_t i = 0; i < fs->fs_ipg; i++)
        if (ufs_isset(m->iused, c * (uint32_t)fs->fs_ipg + (uint32_t)i))
            ufs_setbit(iused, (uint64_t)i);
    cg->cg_cs.cs_nifree = m->cg_nifree[c];
    cg->cg_cs.cs_ndir = m->cg_ndir[c];
    ufs_cg_fill_frags(fs, c, buf, frag_free_cb, m);
    return cg->cg_cs;
}

static void write_metadata(struct mkfs *m)
{
    struct ufs_super *fs = &m->sb;
    uint8_t *buf = xcalloc(1, (size_t)fs->fs_bsize);
    struct ufs_csum *csum = xcalloc(1, (size_t)fs->fs_cssize);
    size_t per_cg = (size_t)fs->fs_ipg * UFS_INODE_SIZE;

    for (uint32_t c = 0; c < (uint32_t)fs->fs_ncg; c++) {
        csum[c] = build_cg(m, c, buf);
        write_at(m, frag_off(m, ufs_cgtod(fs, c)), buf, (size_t)fs->fs_cgsize);
        write_at(m, frag_off(m, ufs_cgimin(fs, c)), (uint8_t *)m->itab + c * per_cg, per_cg);
        fs->fs_cstotal.cs_ndir += csum[c].cs_ndir;
        fs->fs_cstotal.cs_nbfree += csum[c].cs_nbfree;
        fs->fs_cstotal.cs_nifree += csum[c].cs_nifree;
        fs->fs_cstotal.cs_nffree += csum[c].cs_nffree;
    }
    write_at(m, frag_off(m, fs->fs_csaddr), csum, (size_t)fs->fs_cssize);
    fs->fs_time = (int32_t)m->now;
    fs->fs_id[0] = (int32_t)m->now;
    fs->fs_id[1] = (int32_t)(m->now * 2654435761u ^ (uint32_t)fs->fs_size);
    fs->fs_clean = UFS_FSCLEAN;
    fs->fs_flags = UFS_FLAGS_UPDATED;
    fs->fs_maxbsize = fs->fs_bsize;
    fs->fs_sblockloc = UFS_SBOFF;
    fs->fs_cstotal64.cs_ndir = fs->fs_cstotal.cs_ndir;
    fs->fs_cstotal64.cs_nbfree = fs->fs_cstotal.cs_nbfree;
    fs->fs_cstotal64.cs_nifree = fs->fs_cstotal.cs_nifree;
    fs->fs_cstotal64.cs_nffree = fs->fs_cstotal.cs_nffree;
    fs->fs_time64 = fs->fs_time;
    fs->fs_size64 = fs->fs_size;
    fs->fs_dsize64 = fs->fs_dsize;
    fs->fs_csaddr64 = fs->fs_csaddr;
    memset(buf, 0, (size_t)fs->fs_bsize);
    memcpy(buf, fs, sizeof(*fs));
    write_at(m, UFS_SBOFF, buf, (size_t)fs->fs_sbsize);
    for (uint32_t c = 0; c < (uint32_t)fs->fs_ncg; c++)
        write_at(m, frag_off(m, ufs_cgbase(fs, c) + fs->fs_sblkno), buf, (size_t)fs->fs_sbsize);
    free(csum);
    free(buf);
}

/* ---- main ---- */

static int64_t parse_size(const char *s)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    int64_t unit = 1024;

    if (end == s || v <= 0)
        return -1;
    if (*end == 'K' || *end == 'k')
        end++;
    else if (*end == 'M' || *end == 'm')
        unit <<= 10, end++;
    else if (*end == 'G' || *end == 'g')
        unit <<= 20, end++;
    return *end ? -1 : v * unit;
}

static void usage(void)
{
    fprintf(stderr, "usage: mkfs.ufs [-d DIR [-o OWNERS]] [-b BSIZE] [-f FSIZE] [-i BYTES] IMAGE SIZE\n"
            "Makes a UFS1 image of SIZE (KiB, or with K, M or G), filled from DIR; the files\n"
            "OWNERS lists (\"PATH UID GID\" lines, PATH relative to DIR) get those owners.\n");
    exit(2);
}

static int32_t parse_pow2(const char *s, const char *what, int32_t lo, int32_t hi)
{
    char *end;
    long v = strtol(s, &end, 10);

    if (*end || v < lo || v > hi || (v & (v - 1)))
        fatal("%s %s: want a power of two from %d to %d", what, s, lo, hi);
    return (int32_t)v;
}

int main(int argc, char **argv)
{
    struct mkfs m;
    const char *src = NULL, *e;
    int32_t bsize = DEFAULT_BSIZE, fsize = DEFAULT_FSIZE;
    int64_t density = DEFAULT_DENSITY;
    int opt;

    memset(&m, 0, sizeof(m));
    m.fd = -1;
    if (argc > 1 && !strcmp(argv[1], "--help"))
        usage();
    while ((opt = getopt(argc, argv, "d:o:b:f:i:h")) != -1) {
        int bad;
        switch (opt) {
        case 'd': src = optarg; break;
        case 'o':
            if (hostowners_read(&m.owners, optarg, UINT32_MAX - 1, &bad) == 0)
                break;
            if (bad == -2)
                fatal("out of memory");
            if (bad == 0)
                fatal("%s: %s", optarg, strerror(errno));
            fatal("%s:%d: expected 'PATH UID GID'", optarg, bad);
        case 'b': bsize = parse_pow2(optarg, "block size", UFS_MINBSIZE, UFS_MAXBSIZE); break;
        case 'f': fsize = parse_pow2(optarg, "fragment size", UFS_DEV_BSIZE, UFS_MAXBSIZE); break;
        case 'i':
            density = strtoll(optarg, NULL, 10);
            if (density < 512)
                fatal("-i %s: want at least 512 bytes per inode", optarg);
            break;
        default: usage();
        }
    }
    if (argc - optind != 2)
        usage();
    if (fsize > bsize || bsize / fsize > UFS_MAXFRAG)
        fatal("fragment size %d with block size %d: want 1 to %d fragments a block", fsize,
              bsize, UFS_MAXFRAG);
    m.image = argv[optind];
    int64_t bytes = parse_size(argv[optind + 1]);
    if (bytes < 0)
        fatal("size '%s': want a number of KiB, or one with K, M or G", argv[optind + 1]);
    e = getenv("SOURCE_DATE_EPOCH");
    m.now = e ? (uint32_t)strtoul(e, NULL, 10) : (uint32_t)time(NULL);
    set_geometry(&m, bytes, bsize, fsize, density);
    m.top = src;
    struct stat st;
    if (src && (stat(src, &st) < 0 || !S_ISDIR(st.st_mode)))
        fatal("%s: not a directory", src);
    m.fd = open(m.image, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (m.fd < 0)
        fatal("%s: %s", m.image, strerror(errno));
    cleanup_m = &m;
    if (ftruncate(m.fd, (off_t)bytes) < 0)
        fatal("%s: %s", m.image, strerror(errno));
    m.ninodes = (uint32_t)m.sb.fs_ncg * (uint32_t)m.sb.fs_ipg;
    m.iused = xcalloc(1, (m.ninodes + 7) / 8);
    m.ffree = xcalloc(1, ((size_t)m.sb.fs_size + 7) / 8);
    m.itab = xcalloc(m.ninodes, sizeof(*m.itab));
    m.cg_ndir = xcalloc((size_t)m.sb.fs_ncg, sizeof(int32_t));
    m.cg_nifree = xcalloc((size_t)m.sb.fs_ncg, sizeof(int32_t));
    mark_metadata(&m);
    uint32_t root = UFS_ROOTINO;
    ufs_setbit(m.iused, root);
    m.cg_nifree[0]--;
    m.cg_ndir[0]++;
    struct ufs_dinode *di = &m.itab[root];
    di->di_mode = UFS_IFDIR | 0755;
    di->di_nlink = 2;
    di->di_atime = di->di_mtime = di->di_ctime = (int32_t)m.now;
    if (src) {
        stat(src, &st);
        di->di_mode = (uint16_t)(UFS_IFDIR | (st.st_mode & 07777));
        copy_dir(&m, src, root, root);
    } else {
        struct dirbuf d = { 0 };
        dir_add(&d, ".", root, UFS_DT_DIR);
        dir_add(&d, "..", root, UFS_DT_DIR);
        write_data(&m, root, d.data, d.len);
        free(d.data);
    }
    write_metadata(&m);
    if (close(m.fd) < 0)
        fatal("%s: %s", m.image, strerror(errno));
    printf("mkfs.ufs: %s: %d fragments of %d bytes (%d-byte blocks), %d groups of %d, "
           "%u inodes\n", m.image, m.sb.fs_size, fsize, bsize, m.sb.fs_ncg, m.sb.fs_fpg,
           m.ninodes);
    return 0;
}
