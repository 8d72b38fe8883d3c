/* Host helpers for the S5 tools; see s5lib.h. */
#include "s5lib.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The bytes an image holds: a file's size, or a block device's (whose
 * st_size is 0), found by seeking to its end. */
static uint64_t image_bytes(int fd, const struct stat *st)
{
    off_t end;

    if (!S_ISBLK(st->st_mode))
        return (uint64_t)st->st_size;
    end = lseek(fd, 0, SEEK_END);
    return end > 0 ? (uint64_t)end : 0;
}

int s5img_open(struct s5img *img, const char *path)
{
    struct stat st;

    img->path = path;
    img->fd = open(path, O_RDONLY);
    if (img->fd < 0)
        return -1;
    if (fstat(img->fd, &st) < 0) {
        close(img->fd);
        return -1;
    }
    img->nblocks = image_bytes(img->fd, &st) / S5_BSIZE;
    return 0;
}

int s5img_create(struct s5img *img, const char *path, uint64_t nblocks)
{
    struct stat st;

    img->path = path;
    img->nblocks = nblocks;
    if (stat(path, &st) == 0 && S_ISBLK(st.st_mode)) {
        /* A disk: written over, never truncated; it must be large enough. */
        img->fd = open(path, O_RDWR);
        if (img->fd < 0)
            return -1;
        if (fstat(img->fd, &st) < 0 || image_bytes(img->fd, &st) < nblocks * S5_BSIZE) {
            close(img->fd);
            errno = ENOSPC;
            return -1;
        }
        return 0;
    }
    img->fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (img->fd < 0)
        return -1;
    if (ftruncate(img->fd, (off_t)(nblocks * S5_BSIZE)) < 0) {
        int e = errno;
        close(img->fd);
        errno = e;
        return -1;
    }
    return 0;
}

void s5img_close(struct s5img *img)
{
    if (img->fd >= 0)
        close(img->fd);
    img->fd = -1;
}

int s5img_read(struct s5img *img, uint32_t bno, void *buf)
{
    if (bno >= img->nblocks)
        return -1;
    if (pread(img->fd, buf, S5_BSIZE, (off_t)bno * S5_BSIZE) != S5_BSIZE)
        return -1;
    return 0;
}

int s5img_write(struct s5img *img, uint32_t bno, const void *buf)
{
    if (bno >= img->nblocks)
        return -1;
    if (pwrite(img->fd, buf, S5_BSIZE, (off_t)bno * S5_BSIZE) != S5_BSIZE)
        return -1;
    return 0;
}

int s5img_read_super(struct s5img *img, struct s5_super *sb)
{
    uint8_t buf[S5_BSIZE];

    if (s5img_read(img, S5_SUPERBLOCK, buf) < 0)
        return -1;
    memcpy(sb, buf + S5_SBOFF, sizeof(*sb));
    return 0;
}

int s5img_read_inode(struct s5img *img, const struct s5_super *sb, uint32_t ino,
                     struct s5_dinode *di)
{
    uint8_t buf[S5_BSIZE];

    if (!s5_ino_valid(sb, ino) || s5img_read(img, s5_itod(ino), buf) < 0)
        return -1;
    memcpy(di, buf + s5_itooff(ino), sizeof(*di));
    return 0;
}

int s5_bmap(struct s5img *img, const struct s5_super *sb, const struct s5_dinode *di,
            uint32_t lbn, uint32_t *bno)
{
    uint32_t idx[4], ind[S5_NINDIR], b;
    int level = s5_lbn_path(lbn, idx);

    if (level < 0)
        return -1;
    b = s5_getaddr(di, (int)idx[0]);
    for (int i = 1; i <= level && b != 0; i++) {
        if (!s5_bno_valid(sb, b) || s5img_read(img, b, ind) < 0)
            return -1;
        b = ind[idx[i]];
    }
    if (b != 0 && !s5_bno_valid(sb, b))
        return -1;
    *bno = b;
    return 0;
}

ssize_t s5_readi(struct s5img *img, const struct s5_super *sb, const struct s5_dinode *di,
                 uint64_t off, void *buf, size_t len)
{
    uint8_t blk[S5_BSIZE];
    size_t done = 0;

    if (off >= di->di_size)
        return 0;
    if (len > di->di_size - off)
        len = (size_t)(di->di_size - off);
    while (done < len) {
        uint32_t bno, boff = s5_blkoff(off + done);
        size_t n = S5_BSIZE - boff;

        if (n > len - done)
            n = len - done;
        if (s5_bmap(img, sb, di, s5_lblkno(off + done), &bno) < 0)
            return -1;
        if (bno == 0)
            memset(blk, 0, sizeof(blk));
        else if (s5img_read(img, bno, blk) < 0)
            return -1;
        memcpy((uint8_t *)buf + done, blk + boff, n);
        done += n;
    }
    return (ssize_t)done;
}

uint32_t s5_dirlookup(struct s5img *img, const struct s5_super *sb,
                      const struct s5_dinode *dir, const char *name, size_t len)
{
    struct s5_direct ents[S5_DIRPB];
    uint64_t off;

    if ((dir->di_mode & S5_IFMT) != S5_IFDIR || len > S5_DIRSIZ)
        return 0;
    for (off = 0; off < dir->di_size; off += sizeof(ents)) {
        ssize_t n = s5_readi(img, sb, dir, off, ents, sizeof(ents));

        if (n <= 0)
            return 0;
        for (size_t i = 0; i < (size_t)n / sizeof(ents[0]); i++)
            if (ents[i].d_ino != 0 && s5_namematch(ents[i].d_name, name, (uint32_t)len))
                return ents[i].d_ino;
    }
    return 0;
}

uint32_t s5_namei(struct s5img *img, const struct s5_super *sb, const char *path)
{
    uint32_t ino = S5_ROOTINO;
    struct s5_dinode di;

    while (*path) {
        size_t len;

        while (*path == '/')
            path++;
        if (*path == '\0')
            break;
        len = strcspn(path, "/");
        if (s5img_read_inode(img, sb, ino, &di) < 0)
            return 0;
        ino = s5_dirlookup(img, sb, &di, path, len);
        if (ino == 0)
            return 0;
        path += len;
    }
    return ino;
}

void s5_name_print(const char d_name[S5_DIRSIZ], char *out)
{
    uint32_t len = s5_namelen(d_name);

    for (uint32_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)d_name[i];

        if (c >= 0x20 && c < 0x7f && c != '\\')
            *out++ = (char)c;
        else
            out += sprintf(out, "\\%03o", c);
    }
    *out = '\0';
}
