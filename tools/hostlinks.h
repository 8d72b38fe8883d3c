/*
 * The hard links of a host tree that a mkfs copies in (mkfs.s5 -d,
 * mkfs.ufs -d): a host file with several names (its device and inode
 * number) is made once, and each later name links to the file-system
 * inode made for the first.  Shared by the host tools, header only.
 */
#ifndef TOOLS_HOSTLINKS_H
#define TOOLS_HOSTLINKS_H

#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

struct hostlink {
    dev_t dev;
    ino_t ino;
    uint32_t fsino;             /* the inode made for it */
};

struct hostlinks {
    struct hostlink *v;
    size_t n, cap;
};

/* The inode made for the host file st, or 0 if none was yet. */
static inline uint32_t hostlinks_find(const struct hostlinks *h, const struct stat *st)
{
    for (size_t i = 0; i < h->n; i++)
        if (h->v[i].dev == st->st_dev && h->v[i].ino == st->st_ino)
            return h->v[i].fsino;
    return 0;
}

/* Remember that host file st became inode fsino; -1 when out of memory. */
static inline int hostlinks_add(struct hostlinks *h, const struct stat *st, uint32_t fsino)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 64;
        struct hostlink *v = realloc(h->v, cap * sizeof *v);
        if (!v)
            return -1;
        h->v = v;
        h->cap = cap;
    }
    h->v[h->n++] = (struct hostlink){ st->st_dev, st->st_ino, fsino };
    return 0;
}

#endif
