/*
 * s5cat: read a file or list a directory in an S5 image (a debugging aid).
 *
 *   s5cat IMAGE [PATH]
 *   s5cat -w IMAGE PATH < DATA
 *
 * A regular file's contents (or a symbolic link's target) go to standard
 * output.  A directory is listed one entry per line as
 * "inode mode links size name", in directory order.  PATH defaults to the
 * root; symbolic links inside PATH are not followed.
 *
 * With -w the regular file PATH is overwritten in place with standard
 * input, padded with newlines to the file's size: the file keeps its
 * size, its blocks and every other byte of the image, so the file system
 * stays as consistent as it was.  Input longer than the file is refused.
 * (make run uses it for the command slot /etc/rc.run of a kept root image.)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "s5lib.h"

static int cat_file(struct s5img *img, const struct s5_super *sb, const struct s5_dinode *di)
{
    uint8_t buf[16 * S5_BSIZE];
    uint64_t off = 0;

    for (;;) {
        ssize_t n = s5_readi(img, sb, di, off, buf, sizeof(buf));

        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
            return -1;
        off += (uint64_t)n;
    }
}

static int list_dir(struct s5img *img, const struct s5_super *sb, const struct s5_dinode *dir)
{
    struct s5_direct ents[S5_DIRPB];
    char name[4 * S5_DIRSIZ + 1];

    for (uint64_t off = 0; off < dir->di_size; off += sizeof(ents)) {
        ssize_t n = s5_readi(img, sb, dir, off, ents, sizeof(ents));

        if (n < 0)
            return -1;
        for (size_t i = 0; i < (size_t)n / sizeof(ents[0]); i++) {
            struct s5_dinode di;

            if (ents[i].d_ino == 0)
                continue;
            s5_name_print(ents[i].d_name, name);
            if (s5img_read_inode(img, sb, ents[i].d_ino, &di) < 0)
                printf("%5u ?       ?  ? %s\n", ents[i].d_ino, name);
            else
                printf("%5u %07o %3u %8u %s\n", ents[i].d_ino, di.di_mode, di.di_nlink,
                       di.di_size, name);
        }
    }
    return 0;
}

/* -w: the new contents, padded, written over the file's own blocks. */
static int overwrite(struct s5img *img, const struct s5_super *sb, const struct s5_dinode *di,
                     const char *path)
{
    size_t size = di->di_size, got = 0;
    char *data = malloc(size + 1);
    size_t n;

    if (!data) {
        fprintf(stderr, "s5cat: out of memory\n");
        return 1;
    }
    while (got <= size && (n = fread(data + got, 1, size + 1 - got, stdin)) > 0)
        got += n;
    if (got > size) {
        fprintf(stderr, "s5cat: %s: the input is longer than the file's %zu bytes\n", path, size);
        free(data);
        return 1;
    }
    memset(data + got, '\n', size - got);
    for (uint32_t lbn = 0; (uint64_t)lbn * S5_BSIZE < size; lbn++) {
        uint8_t blk[S5_BSIZE];
        uint32_t bno;
        size_t off = (size_t)lbn * S5_BSIZE, len = size - off < S5_BSIZE ? size - off : S5_BSIZE;

        if (s5_bmap(img, sb, di, lbn, &bno) < 0 || bno == 0 || s5img_read(img, bno, blk) < 0) {
            fprintf(stderr, "s5cat: %s: block %u cannot be written in place\n", path, lbn);
            free(data);
            return 1;
        }
        memcpy(blk, data + off, len);
        if (s5img_write(img, bno, blk) < 0) {
            fprintf(stderr, "s5cat: %s: %s\n", img->path, strerror(errno));
            free(data);
            return 1;
        }
    }
    free(data);
    return fsync(img->fd) < 0 && errno != EINVAL ? 1 : 0;
}

int main(int argc, char **argv)
{
    bool write_mode = argc > 1 && strcmp(argv[1], "-w") == 0;
    struct s5img img;
    struct s5_super sb;
    struct s5_dinode di;
    const char *path;
    const char *why;
    uint32_t ino;
    int rc;

    if (argc == 2 && strcmp(argv[1], "--help") == 0) {
        printf("usage: s5cat IMAGE [PATH]        print a file, or list a directory\n"
               "       s5cat -w IMAGE PATH < DATA  rewrite a file in place, padded with newlines\n");
        return 0;
    }
    if (write_mode) {
        argv++;
        argc--;
    }
    if (argc < 2 || argc > 3 || (write_mode && argc != 3)) {
        fprintf(stderr, "usage: s5cat IMAGE [PATH]\n       s5cat -w IMAGE PATH < DATA\n");
        return 2;
    }
    path = argc > 2 ? argv[2] : "/";
    if (s5img_open(&img, argv[1]) == 0 && write_mode) {
        close(img.fd);
        img.fd = open(argv[1], O_RDWR);
    }
    if (img.fd < 0 || s5img_read_super(&img, &sb) < 0) {
        fprintf(stderr, "s5cat: %s: %s\n", argv[1], errno ? strerror(errno) : "too small");
        return 1;
    }
    if ((why = s5_sb_invalid(&sb, img.nblocks)) != NULL) {
        fprintf(stderr, "s5cat: %s: %s\n", argv[1], why);
        return 1;
    }
    ino = s5_namei(&img, &sb, path);
    if (ino == 0 || s5img_read_inode(&img, &sb, ino, &di) < 0) {
        fprintf(stderr, "s5cat: %s: not found\n", path);
        return 1;
    }
    if (write_mode && (di.di_mode & S5_IFMT) != S5_IFREG) {
        fprintf(stderr, "s5cat: %s: not a regular file\n", path);
        return 1;
    }
    if (write_mode)
        return overwrite(&img, &sb, &di, path);
    if ((di.di_mode & S5_IFMT) == S5_IFDIR)
        rc = list_dir(&img, &sb, &di);
    else
        rc = cat_file(&img, &sb, &di);
    if (rc < 0) {
        fprintf(stderr, "s5cat: %s: bad block map\n", path);
        return 1;
    }
    return 0;
}
