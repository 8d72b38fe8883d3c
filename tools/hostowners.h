/*
 * The owner list a mkfs takes with -o (mkfs.s5, mkfs.ufs): one "PATH UID
 * GID" a line, PATH relative to the -d directory; blank lines and lines
 * starting with '#' are skipped.  The listed files get that owner and
 * group instead of 0 (the host's owners are not used, so an image with
 * many users can be built without them existing on the host).  Shared by
 * the host tools, header only.
 */
#ifndef TOOLS_HOSTOWNERS_H
#define TOOLS_HOSTOWNERS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hostowner {
    char *path;                 /* relative to the -d directory */
    uint32_t uid, gid;
};

struct hostowners {
    struct hostowner *v;
    size_t n;
};

/* Read file into h, ids up to maxid.  0; or -1 with *badline the line at
 * fault (0: the file cannot be read, errno says why; -2: no memory). */
static inline int hostowners_read(struct hostowners *h, const char *file, unsigned long maxid,
                                  int *badline)
{
    FILE *f = fopen(file, "r");
    char line[4200], path[4097];
    unsigned long uid, gid;
    int lineno = 0;

    *badline = 0;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '#' || line[strspn(line, " \t\n")] == 0)
            continue;
        if (sscanf(line, "%4096s %lu %lu", path, &uid, &gid) != 3 || uid > maxid || gid > maxid) {
            *badline = lineno;
            fclose(f);
            return -1;
        }
        struct hostowner *v = realloc(h->v, (h->n + 1) * sizeof *v);
        char *p = strdup(path[0] == '/' ? path + 1 : path);
        if (!v || !p) {
            *badline = -2;
            fclose(f);
            return -1;
        }
        h->v = v;
        h->v[h->n++] = (struct hostowner){ p, (uint32_t)uid, (uint32_t)gid };
    }
    fclose(f);
    return 0;
}

/* The owner the list names for host path under top: 1 with *uid and
 * *gid set, or 0 (the last line naming it wins). */
static inline int hostowners_find(const struct hostowners *h, const char *top, const char *path,
                                  uint32_t *uid, uint32_t *gid)
{
    size_t toplen = top ? strlen(top) : 0;
    int found = 0;

    if (!h->n || !top || strncmp(path, top, toplen) != 0 || path[toplen] != '/')
        return 0;
    for (size_t i = 0; i < h->n; i++) {
        if (strcmp(path + toplen + 1, h->v[i].path) == 0) {
            *uid = h->v[i].uid;
            *gid = h->v[i].gid;
            found = 1;
        }
    }
    return found;
}

#endif
