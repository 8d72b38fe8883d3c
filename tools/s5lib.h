/*
 * Host helpers shared by mkfs.s5, fsck.s5 and s5cat: block I/O on an image
 * file, reading inodes, mapping logical blocks through the indirect tree,
 * reading file data and looking up names.  The on-disk format itself is in
 * kern/s5/s5_fs.h, which the kernel uses too.
 */
#ifndef TOOLS_S5LIB_H
#define TOOLS_S5LIB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kern/s5/s5_fs.h"

/* An open image file. */
struct s5img {
    int fd;
    const char *path;
    uint64_t nblocks;           /* whole 1 KiB blocks in the file */
};

/* Opens an existing image read-only; returns 0, or -1 with errno set. */
int s5img_open(struct s5img *img, const char *path);

/* Creates or truncates an image of nblocks zero blocks; 0 or -1 (errno). */
int s5img_create(struct s5img *img, const char *path, uint64_t nblocks);

void s5img_close(struct s5img *img);

/* Reads or writes one block; -1 if bno is outside the image or on I/O error. */
int s5img_read(struct s5img *img, uint32_t bno, void *buf);
int s5img_write(struct s5img *img, uint32_t bno, const void *buf);

/* Reads the superblock (no validation); 0 or -1. */
int s5img_read_super(struct s5img *img, struct s5_super *sb);

/* Reads inode ino; -1 if ino is not in sb's inode list or on I/O error. */
int s5img_read_inode(struct s5img *img, const struct s5_super *sb, uint32_t ino,
                     struct s5_dinode *di);

/*
 * Maps logical block lbn of a file to a disk block: stores the block number
 * (0 for a hole) in *bno and returns 0, or returns -1 if a pointer on the
 * way lies outside the data area or an indirect block cannot be read.
 */
int s5_bmap(struct s5img *img, const struct s5_super *sb, const struct s5_dinode *di,
            uint32_t lbn, uint32_t *bno);

/*
 * Reads up to len bytes at offset off of a file, stopping at di_size;
 * holes read as zeros.  Returns the byte count or -1 on a bad block map.
 */
ssize_t s5_readi(struct s5img *img, const struct s5_super *sb, const struct s5_dinode *di,
                 uint64_t off, void *buf, size_t len);

/* Looks up one name in a directory; returns its inode number or 0. */
uint32_t s5_dirlookup(struct s5img *img, const struct s5_super *sb,
                      const struct s5_dinode *dir, const char *name, size_t len);

/*
 * Resolves a path from the root (leading and repeated slashes are ignored;
 * symbolic links are not followed); returns the inode number or 0.
 */
uint32_t s5_namei(struct s5img *img, const struct s5_super *sb, const char *path);

/* Copies a directory entry name into out (at least 4*S5_DIRSIZ+1 bytes),
 * escaping non-printable bytes as \ooo so it can be printed safely. */
void s5_name_print(const char d_name[S5_DIRSIZ], char *out);

#endif /* TOOLS_S5LIB_H */
