/*
 * mkfs.s5: make an S5 file system image, optionally filled from a host
 * directory.
 *
 *   mkfs.s5 [-d DIR] [-o OWNERS] [-i NINODES] IMAGE SIZE
 *
 * SIZE is in KiB, or has a K, M or G suffix.  IMAGE is created or
 * truncated.  The inode list has NINODES inodes (rounded up to a whole
 * block), by default one per 4 KiB of SIZE.  With -d, regular files,
 * directories and symbolic links under DIR are copied in with their
 * permission bits, owner 0 and their modification time; hard links within
 * DIR stay hard links.  Other file types are skipped with a warning.
 * With -o, OWNERS is a text file of lines "PATH UID GID" (PATH relative
 * to DIR, e.g. "home/user01"): those files get that owner and group
 * instead of 0 (the host's owners are not used, so an image with many
 * users can be built without root).
 *
 * Files are laid out first, in ascending block order from the start of the
 * data area; then the remaining blocks are freed into the chained free
 * list, highest first, so that the kernel allocates the lowest free block
 * first.  The inode list is built in memory and written at the end.
 * If SOURCE_DATE_EPOCH is set it is used as the current time, so images
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
#include <time.h>
#include <unistd.h>

#include "s5lib.h"
#include "hostlinks.h"
#include "hostowners.h"

/* A directory being assembled in memory before it is written. */
struct dirbuf {
    struct s5_direct *ents;
    size_t n, cap;
};

struct mkfs {
    const char *image;
    const char *top;            /* the -d directory */
    struct hostowners owners;   /* the -o list (tools/hostowners.h) */
    struct s5img img;
    struct s5_super sb;
    struct s5_dinode *itab;     /* the inode list; inode ino is itab[ino - 1] */
    uint32_t ninodes;
    uint32_t next_ino;          /* next unused inode number */
    uint32_t next_blk;          /* next unused data block */
    uint32_t now;
    struct hostlinks links;     /* the host tree's hard links (tools/hostlinks.h) */
};

static struct mkfs *cleanup_fs; /* the image to remove if mkfs fails */

static void usage_to(FILE *f)
{
    fprintf(f, "usage: mkfs.s5 [-d DIR] [-o OWNERS] [-i NINODES] IMAGE SIZE\n"
                    "  SIZE in KiB, or with a K, M or G suffix\n"
                    "  OWNERS: lines 'PATH UID GID', PATH relative to DIR\n");
}

static void usage(void)
{
    usage_to(stderr);
    exit(2);
}

/* Prints an error, removes the half-made image and exits with status 1. */
static void __attribute__((noreturn, format(printf, 1, 2))) fatal(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "mkfs.s5: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (cleanup_fs) {
        s5img_close(&cleanup_fs->img);
        unlink(cleanup_fs->image);
    }
    exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);

    if (!p)
        fatal("out of memory");
    return p;
}

/* Parses SIZE (KiB, or with a K/M/G suffix) into KiB; -1 if malformed. */
static int64_t parse_size(const char *s)
{
    char *end;
    unsigned long long v;
    int shift = 0;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return -1;
    if (*end == 'K' || *end == 'k')
        shift = 0, end++;
    else if (*end == 'M' || *end == 'm')
        shift = 10, end++;
    else if (*end == 'G' || *end == 'g')
        shift = 20, end++;
    if (*end != '\0' || v > (1ull << 40))
        return -1;
    return (int64_t)(v << shift);
}

/* Parses a positive decimal count; -1 if malformed. */
static int64_t parse_count(const char *s)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-' || *end != '\0' || v > (1ull << 40))
        return -1;
    return (int64_t)v;
}

/* Block allocation and data. */

static uint32_t alloc_block(struct mkfs *m)
{
    if (m->next_blk >= m->sb.s_fsize)
        fatal("%s: out of space: all %u blocks are in use", m->image, m->sb.s_fsize);
    return m->next_blk++;
}

static void write_block(struct mkfs *m, uint32_t bno, const void *buf)
{
    if (s5img_write(&m->img, bno, buf) < 0)
        fatal("%s: cannot write block %u: %s", m->image, bno, strerror(errno));
}

static void read_block(struct mkfs *m, uint32_t bno, void *buf)
{
    if (s5img_read(&m->img, bno, buf) < 0)
        fatal("%s: cannot read block %u: %s", m->image, bno, strerror(errno));
}

/* Allocates a zeroed indirect block. */
static uint32_t alloc_indirect(struct mkfs *m)
{
    static const uint8_t zero[S5_BSIZE];
    uint32_t b = alloc_block(m);

    write_block(m, b, zero);
    return b;
}

/*
 * Writes buf as logical block lbn of inode di, allocating the block and any
 * indirect blocks missing on the way (parents before children).
 */
static void append_block(struct mkfs *m, struct s5_dinode *di, uint32_t lbn, const void *buf)
{
    uint32_t idx[4], ind[S5_NINDIR], b;
    int level = s5_lbn_path(lbn, idx);

    if (level < 0)
        fatal("%s: file too large", m->image);
    b = s5_getaddr(di, (int)idx[0]);
    if (b == 0) {
        b = level > 0 ? alloc_indirect(m) : alloc_block(m);
        s5_setaddr(di, (int)idx[0], b);
    }
    for (int i = 1; i <= level; i++) {
        read_block(m, b, ind);
        if (ind[idx[i]] == 0) {
            ind[idx[i]] = i < level ? alloc_indirect(m) : alloc_block(m);
            write_block(m, b, ind);
        }
        b = ind[idx[i]];
    }
    write_block(m, b, buf);
}

/* Writes len bytes from memory as the whole contents of inode di. */
static void write_data(struct mkfs *m, struct s5_dinode *di, const void *data, size_t len)
{
    uint8_t blk[S5_BSIZE];

    for (size_t off = 0; off < len; off += S5_BSIZE) {
        size_t n = len - off < S5_BSIZE ? len - off : S5_BSIZE;

        memset(blk, 0, sizeof(blk));
        memcpy(blk, (const uint8_t *)data + off, n);
        append_block(m, di, s5_lblkno(off), blk);
    }
    di->di_size = (uint32_t)len;
}

/* Reads up to one block from fd, retrying short reads; returns the count. */
static size_t read_full(int fd, uint8_t *buf, const char *path)
{
    size_t got = 0;

    while (got < S5_BSIZE) {
        ssize_t n = read(fd, buf + got, S5_BSIZE - got);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            fatal("%s: %s", path, strerror(errno));
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return got;
}

/* Copies a host regular file into inode di. */
static void copy_file_data(struct mkfs *m, struct s5_dinode *di, const char *path)
{
    uint8_t blk[S5_BSIZE];
    uint64_t size = 0;
    int fd = open(path, O_RDONLY);

    if (fd < 0)
        fatal("%s: %s", path, strerror(errno));
    for (;;) {
        size_t n = read_full(fd, blk, path);

        if (n == 0)
            break;
        if (size + n > S5_MAXFILESIZE)
            fatal("%s: larger than the S5 maximum of %u bytes", path, S5_MAXFILESIZE);
        memset(blk + n, 0, S5_BSIZE - n);
        append_block(m, di, s5_lblkno(size), blk);
        size += n;
    }
    close(fd);
    di->di_size = (uint32_t)size;
}

/* Inodes. */

/* Allocates the next inode with the given mode and times. */
static uint32_t new_inode(struct mkfs *m, uint16_t mode, uint32_t mtime)
{
    struct s5_dinode *di;
    uint32_t ino = m->next_ino;

    if (ino > m->ninodes)
        fatal("%s: out of inodes: all %u are in use (use -i for more)", m->image, m->ninodes);
    m->next_ino++;
    di = &m->itab[ino - 1];
    di->di_mode = mode;
    di->di_atime = di->di_mtime = di->di_ctime = mtime;
    return ino;
}

static struct s5_dinode *inode(struct mkfs *m, uint32_t ino)
{
    return &m->itab[ino - 1];
}

/* Returns the S5 inode already made for a host file, or 0. */
/* Directories. */

/* Adds an entry to a directory under construction and counts the link. */
static void dir_add(struct mkfs *m, struct dirbuf *d, const char *name, uint32_t ino)
{
    struct s5_dinode *di = inode(m, ino);

    if (d->n == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 16;
        d->ents = realloc(d->ents, d->cap * sizeof(*d->ents));
        if (!d->ents)
            fatal("out of memory");
    }
    d->ents[d->n].d_ino = (uint16_t)ino;
    s5_setname(d->ents[d->n].d_name, name, (uint32_t)strlen(name));
    d->n++;
    if (di->di_nlink == 0xffff)
        fatal("%s: too many links to inode %u", m->image, ino);
    di->di_nlink++;
}

static void copy_dir(struct mkfs *m, const char *path, uint32_t ino, uint32_t parent);

static int name_cmp(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int not_dots(const struct dirent *e)
{
    return strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
}

/* Reads the -o list (tools/hostowners.h), ids of 16 bits. */
static void read_owners(struct mkfs *m, const char *file)
{
    int bad;
    if (hostowners_read(&m->owners, file, 65535, &bad) == 0)
        return;
    if (bad == -2)
        fatal("out of memory");
    if (bad == 0)
        fatal("%s: %s", file, strerror(errno));
    fatal("%s:%d: expected 'PATH UID GID' with ids up to 65535", file, bad);
}

/* Gives inode ino the owner the -o list names for host path, if any. */
static void apply_owner(struct mkfs *m, const char *path, uint32_t ino)
{
    uint32_t uid, gid;
    if (hostowners_find(&m->owners, m->top, path, &uid, &gid)) {
        m->itab[ino - 1].di_uid = (uint16_t)uid;
        m->itab[ino - 1].di_gid = (uint16_t)gid;
    }
}

/* Makes the S5 inode for one host file; returns 0 if the file is skipped. */
static uint32_t copy_entry(struct mkfs *m, const char *path, uint32_t dir)
{
    struct stat st;
    uint32_t ino;
    uint16_t perm;

    if (lstat(path, &st) < 0)
        fatal("%s: %s", path, strerror(errno));
    perm = (uint16_t)(st.st_mode & S5_IPERM);
    if (S_ISDIR(st.st_mode)) {
        ino = new_inode(m, S5_IFDIR | perm, (uint32_t)st.st_mtime);
        copy_dir(m, path, ino, dir);
    } else if (S_ISREG(st.st_mode)) {
        if (st.st_nlink > 1 && (ino = hostlinks_find(&m->links, &st)) != 0)
            return ino;
        ino = new_inode(m, S5_IFREG | perm, (uint32_t)st.st_mtime);
        copy_file_data(m, inode(m, ino), path);
        if (st.st_nlink > 1 && hostlinks_add(&m->links, &st, ino) != 0)
            fatal("out of memory");
    } else if (S_ISLNK(st.st_mode)) {
        char target[4096];
        ssize_t n = readlink(path, target, sizeof(target));

        if (n < 0 || n == (ssize_t)sizeof(target))
            fatal("%s: cannot read link: %s", path, n < 0 ? strerror(errno) : "too long");
        ino = new_inode(m, S5_IFLNK | 0777, (uint32_t)st.st_mtime);
        write_data(m, inode(m, ino), target, (size_t)n);
    } else {
        fprintf(stderr, "mkfs.s5: warning: skipping %s: not a regular file, "
                "directory or symbolic link\n", path);
        return 0;
    }
    return ino;
}

/*
 * Fills directory inode ino from the host directory path: "." and "..",
 * then the host entries in name order.  Children are made (and their data
 * written) before the directory's own blocks.
 */
static void copy_dir(struct mkfs *m, const char *path, uint32_t ino, uint32_t parent)
{
    struct dirbuf d = { 0 };
    struct dirent **names;
    int n = path ? scandir(path, &names, not_dots, name_cmp) : 0;

    if (n < 0)
        fatal("%s: %s", path, strerror(errno));
    dir_add(m, &d, ".", ino);
    dir_add(m, &d, "..", parent);
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        size_t len = strlen(name) + strlen(path) + 2;
        char *child = xcalloc(len, 1);
        uint32_t cino;

        snprintf(child, len, "%s/%s", path, name);
        if (strlen(name) > S5_DIRSIZ)
            fatal("%s: name '%s' is %zu characters; S5 names are at most %d",
                  child, name, strlen(name), S5_DIRSIZ);
        cino = copy_entry(m, child, ino);
        if (cino) {
            dir_add(m, &d, name, cino);
            apply_owner(m, child, cino);
        }
        free(child);
        free(names[i]);
    }
    if (path)
        free(names);
    if (d.n * sizeof(struct s5_direct) > S5_MAXFILESIZE)
        fatal("%s: directory too large", path);
    write_data(m, inode(m, ino), d.ents, d.n * sizeof(struct s5_direct));
    free(d.ents);
}

/* Free lists and the superblock. */

/* Frees block b into the superblock's chained list (the kernel's algorithm). */
static void free_block(struct mkfs *m, uint32_t b)
{
    struct s5_super *sb = &m->sb;

    if (sb->s_nfree == 0) {
        sb->s_free[0] = 0;
        sb->s_nfree = 1;
    }
    if (sb->s_nfree == S5_NICFREE) {
        uint8_t blk[S5_BSIZE] = { 0 };
        struct s5_fblk *fb = (struct s5_fblk *)blk;

        fb->df_nfree = sb->s_nfree;
        memcpy(fb->df_free, sb->s_free, sizeof(fb->df_free));
        write_block(m, b, blk);
        sb->s_nfree = 0;
    }
    sb->s_free[sb->s_nfree++] = b;
    sb->s_tfree++;
}

/* Frees every block not used by files, highest first. */
static void build_free_list(struct mkfs *m)
{
    m->sb.s_nfree = 1;                  /* a lone 0 terminates the list */
    m->sb.s_free[0] = 0;
    m->sb.s_tfree = 0;
    for (uint32_t b = m->sb.s_fsize; b-- > m->next_blk; )
        free_block(m, b);
}

/* Caches the lowest free inode numbers, the lowest on top. */
static void build_inode_cache(struct mkfs *m)
{
    uint32_t nfree = m->ninodes - (m->next_ino - 1);
    uint32_t n = nfree < S5_NICINOD ? nfree : S5_NICINOD;

    m->sb.s_ninode = (uint16_t)n;
    for (uint32_t i = 0; i < n; i++)
        m->sb.s_inode[i] = (uint16_t)(m->next_ino + n - 1 - i);
    m->sb.s_tinode = (uint16_t)nfree;
}

static void write_inodes(struct mkfs *m)
{
    for (uint32_t b = 0; b < m->ninodes / S5_INOPB; b++)
        write_block(m, S5_ILISTBLOCK + b, &m->itab[b * S5_INOPB]);
}

static void write_super(struct mkfs *m)
{
    uint8_t blk[S5_BSIZE] = { 0 };

    s5_sb_set_clean(&m->sb, m->now);
    memcpy(blk + S5_SBOFF, &m->sb, sizeof(m->sb));
    write_block(m, S5_SUPERBLOCK, blk);
}

/* Chooses the inode count: requested or one per 4 KiB, whole blocks. */
static uint32_t choose_ninodes(int64_t requested, uint64_t nblocks)
{
    uint64_t n = requested > 0 ? (uint64_t)requested : nblocks / 4;

    if (n < S5_INOPB)
        n = S5_INOPB;
    n = (n + S5_INOPB - 1) / S5_INOPB * S5_INOPB;
    if (requested <= 0 && n > S5_MAXINODES)
        n = S5_MAXINODES;
    return (uint32_t)n;
}

static uint32_t current_time(void)
{
    const char *e = getenv("SOURCE_DATE_EPOCH");

    return e ? (uint32_t)strtoul(e, NULL, 10) : (uint32_t)time(NULL);
}

/* Checks the geometry and sets up the superblock and inode table. */
static void init_fs(struct mkfs *m, uint64_t nblocks, int64_t ninodes_req)
{
    uint32_t iblocks;

    if (ninodes_req > S5_MAXINODES)
        fatal("%lld inodes requested; at most %u fit in 16-bit inode numbers",
              (long long)ninodes_req, S5_MAXINODES);
    m->ninodes = choose_ninodes(ninodes_req, nblocks);
    iblocks = m->ninodes / S5_INOPB;
    if (nblocks > S5_MAXBLOCKS)
        fatal("%s: %llu KiB is too large; S5 addresses at most %u blocks",
              m->image, (unsigned long long)nblocks, S5_MAXBLOCKS);
    if (nblocks < S5_ILISTBLOCK + iblocks + 1)
        fatal("%s: %llu KiB is too small: %u inodes need at least %u KiB",
              m->image, (unsigned long long)nblocks, m->ninodes, S5_ILISTBLOCK + iblocks + 1);
    m->sb.s_magic = S5_MAGIC;
    m->sb.s_type = S5_TYPE_1K;
    m->sb.s_isize = (uint16_t)(S5_ILISTBLOCK + iblocks);
    m->sb.s_fsize = (uint32_t)nblocks;
    m->itab = xcalloc(m->ninodes, sizeof(struct s5_dinode));
    m->next_ino = 1;
    m->next_blk = m->sb.s_isize;
}

/* Makes the bad-block inode and the root, then fills the tree. */
static void make_tree(struct mkfs *m, const char *dir)
{
    struct stat st;

    if (dir && stat(dir, &st) < 0)
        fatal("%s: %s", dir, strerror(errno));
    if (dir && !S_ISDIR(st.st_mode))
        fatal("%s: not a directory", dir);
    new_inode(m, S5_IFREG, m->now);                     /* inode 1 */
    new_inode(m, S5_IFDIR | 0755, m->now);              /* inode 2 */
    copy_dir(m, dir, S5_ROOTINO, S5_ROOTINO);
}

int main(int argc, char **argv)
{
    struct mkfs m = { 0 };
    const char *dir = NULL;
    int64_t ninodes = 0, kib;
    int c;

    const char *owners = NULL;

    if (argc == 2 && strcmp(argv[1], "--help") == 0) {
        usage_to(stdout);
        return 0;
    }
    while ((c = getopt(argc, argv, "d:i:o:")) != -1) {
        if (c == 'd')
            dir = optarg;
        else if (c == 'o')
            owners = optarg;
        else if (c == 'i' && (ninodes = parse_count(optarg)) <= 0)
            fatal("bad inode count '%s'", optarg);
        else if (c != 'i')
            usage();
    }
    if (argc - optind != 2)
        usage();
    m.image = argv[optind];
    kib = parse_size(argv[optind + 1]);
    if (kib <= 0)
        fatal("bad size '%s' (KiB, or with a K, M or G suffix)", argv[optind + 1]);
    m.top = dir;
    if (owners && !dir)
        fatal("-o needs -d: the owners name files of the directory copied in");
    if (owners)
        read_owners(&m, owners);
    m.now = current_time();
    init_fs(&m, (uint64_t)kib, ninodes);
    if (s5img_create(&m.img, m.image, (uint64_t)kib) < 0)
        fatal("%s: %s", m.image, strerror(errno));
    cleanup_fs = &m;
    make_tree(&m, dir);
    build_free_list(&m);
    build_inode_cache(&m);
    write_inodes(&m);
    write_super(&m);
    if (fsync(m.img.fd) < 0 && errno != EINVAL)
        fatal("%s: %s", m.image, strerror(errno));
    s5img_close(&m.img);
    return 0;
}
