/*
 * UFS directories: 512-byte chunks (UFS_DIRBLKSIZ) of variable-length
 * entries (struct ufs_direct: inode number, record length, type, name
 * length, the name of up to 255 bytes), each chunk's entries reaching
 * exactly to its end; an entry with inode 0 is free space.  Every entry
 * is checked before it is believed.  The directory is ILOCKED throughout;
 * theory in kern/ufs/ufs_vfsops.c.
 */
#include <kern/ufs/ufs_inode.h>
#include <kern/vfs/dnlc.h>
#include <kern/lib/string.h>

/* A name of n bytes with neither '/' nor NUL in it. */
static bool name_sound(const char *name, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (name[i] == '/' || name[i] == '\0')
            return false;
    return n > 0;
}

/* Is the entry at chunk offset at (of a chunk of UFS_DIRBLKSIZ bytes)
 * sound?  NULL, or what is wrong. */
static const char *entry_invalid(const struct ufs_fs *fs, const uint8_t *chunk, uint32_t at)
{
    const struct ufs_direct *de = (const struct ufs_direct *)(chunk + at);
    if (de->d_reclen < 8 || de->d_reclen % 4 || at + de->d_reclen > UFS_DIRBLKSIZ)
        return "bad record length";
    if (de->d_ino == 0)
        return NULL;
    if (ufs_direntsize(de->d_namlen) > de->d_reclen)
        return "name longer than its record";
    if (!name_sound(de->d_name, de->d_namlen))
        return "bad name";
    if (de->d_ino >= (uint64_t)fs->fs_sb.fs_ncg * (uint32_t)fs->fs_sb.fs_ipg)
        return "inode number past the last inode";
    return NULL;
}

/*
 * Call visit on each entry of dp from byte offset start on (entries before
 * it in its chunk are skipped), chunk by chunk, until it returns non-zero.
 * Returns that value, 0 at the end, or a negative errno.
 */
static int dir_walk(struct ufs_inode *dp, uint64_t start,
                    int (*visit)(const struct ufs_direct *de, uint64_t off, void *arg), void *arg)
{
    uint8_t chunk[UFS_DIRBLKSIZ];
    for (uint64_t base = start & ~(uint64_t)(UFS_DIRBLKSIZ - 1); base < dp->i_size;
         base += UFS_DIRBLKSIZ) {
        size_t got;
        int err = ufs_readi(dp, base, chunk, UFS_DIRBLKSIZ, &got);
        if (err)
            return err;
        if (got != UFS_DIRBLKSIZ)
            break;
        for (uint32_t at = 0; at < UFS_DIRBLKSIZ;) {
            const struct ufs_direct *de = (const struct ufs_direct *)(chunk + at);
            const char *why = entry_invalid(dp->i_fs, chunk, at);
            if (why) {
                ufs_corrupt(dp->i_fs, "directory %u: entry at offset %lu: %s", dp->i_number,
                            (unsigned long)(base + at), why);
                return -EUCLEAN;
            }
            if (base + at >= start && de->d_ino != 0) {
                int r = visit(de, base + at, arg);
                if (r)
                    return r;
            }
            at += de->d_reclen;
        }
    }
    return 0;
}

struct search {
    const char *name;
    size_t len;
    uint32_t ino;
};

static int search_visit(const struct ufs_direct *de, uint64_t off, void *arg)
{
    struct search *s = arg;
    if (de->d_namlen != s->len || memcmp(de->d_name, s->name, s->len) != 0)
        return 0;
    s->ino = de->d_ino;
    return 1;
}

int ufs_dirsearch(struct ufs_inode *dp, const char *name, uint32_t *inop)
{
    struct search s = { .name = name, .len = strlen(name) };
    int r = dir_walk(dp, 0, search_visit, &s);
    if (r < 0)
        return r;
    if (r == 0)
        return -ENOENT;
    *inop = s.ino;
    return 0;
}

struct reading {
    struct uio *uio;
    uint64_t next;          /* where the next readdir resumes */
    int emitted;
};

static int read_visit(const struct ufs_direct *de, uint64_t off, void *arg)
{
    struct reading *r = arg;
    if (!vfs_put_dirent(r->uio, de->d_ino, (int64_t)(off + de->d_reclen), de->d_type,
                        de->d_name, de->d_namlen)) {
        r->next = off;
        return 1;
    }
    r->next = off + de->d_reclen;
    r->emitted++;
    return 0;
}

int ufs_dirread(struct ufs_inode *dp, struct uio *uio, bool *eofp)
{
    struct reading r = { .uio = uio, .next = dp->i_size };
    uint64_t start = uio->uio_offset;
    int err = start < dp->i_size ? dir_walk(dp, start, read_visit, &r) : 0;
    bool full = err == 1;
    if (err == 0)
        r.next = MAX(start, dp->i_size);
    uio->uio_offset = r.next;
    *eofp = r.next >= dp->i_size;
    if (full && r.emitted == 0)
        return -EINVAL;                     /* not even one record fits */
    return r.emitted ? 0 : MIN(err, 0);
}

/* ---- changing directories ---- */

/* The chunk at base (read into chunk) and the entry named name in it:
 * its offset *atp and the one before it *prevp (-1 for the first). */
struct dirpos {
    uint64_t base;
    int32_t at, prev;
    uint8_t chunk[UFS_DIRBLKSIZ];
};

static int dir_find(struct ufs_inode *dp, const char *name, struct dirpos *pos)
{
    size_t len = strlen(name);
    for (pos->base = 0; pos->base < dp->i_size; pos->base += UFS_DIRBLKSIZ) {
        size_t got;
        int err = ufs_readi(dp, pos->base, pos->chunk, UFS_DIRBLKSIZ, &got);
        if (err)
            return err;
        pos->prev = -1;
        for (uint32_t at = 0; got == UFS_DIRBLKSIZ && at < UFS_DIRBLKSIZ;) {
            const struct ufs_direct *de = (const struct ufs_direct *)(pos->chunk + at);
            if (entry_invalid(dp->i_fs, pos->chunk, at)) {
                ufs_corrupt(dp->i_fs, "directory %u: bad entry at offset %lu", dp->i_number,
                            (unsigned long)(pos->base + at));
                return -EUCLEAN;
            }
            if (de->d_ino && de->d_namlen == len && memcmp(de->d_name, name, len) == 0) {
                pos->at = (int32_t)at;
                return 0;
            }
            pos->prev = (int32_t)at;
            at += de->d_reclen;
        }
    }
    return -ENOENT;
}

static int chunk_write(struct ufs_inode *dp, const struct dirpos *pos)
{
    return ufs_writei(dp, pos->base, pos->chunk, UFS_DIRBLKSIZ, ufs_syncwrites());
}

/* Fill the entry at p with (ino, type, name) and record length reclen. */
static void entry_set(uint8_t *p, uint32_t ino, uint8_t type, const char *name, uint16_t reclen)
{
    struct ufs_direct *de = (struct ufs_direct *)p;
    size_t len = strlen(name);
    de->d_ino = ino;
    de->d_reclen = reclen;
    de->d_type = type;
    de->d_namlen = (uint8_t)len;
    memset(de->d_name, 0, ufs_direntsize((uint32_t)len) - 8);
    memcpy(de->d_name, name, len);
}

/* Room for an entry of need bytes in the chunk: the offset of the entry
 * to split (or of a free first entry), or -1. */
static int32_t chunk_room(const uint8_t *chunk, uint32_t need)
{
    for (uint32_t at = 0; at < UFS_DIRBLKSIZ;) {
        const struct ufs_direct *de = (const struct ufs_direct *)(chunk + at);
        uint32_t used = de->d_ino ? ufs_direntsize(de->d_namlen) : 0;
        if (de->d_reclen >= used + need)
            return (int32_t)at;
        at += de->d_reclen;
    }
    return -1;
}

int ufs_direnter(struct ufs_inode *dp, const char *name, uint32_t ino, uint8_t type)
{
    dnlc_remove(UFS_ITOV(dp), name);        /* a negative entry for the name goes first */
    uint32_t need = ufs_direntsize((uint32_t)strlen(name));
    struct dirpos pos;
    for (pos.base = 0; pos.base < dp->i_size; pos.base += UFS_DIRBLKSIZ) {
        size_t got;
        int err = ufs_readi(dp, pos.base, pos.chunk, UFS_DIRBLKSIZ, &got);
        if (err)
            return err;
        int32_t at = chunk_room(pos.chunk, need);
        if (at < 0)
            continue;
        struct ufs_direct *de = (struct ufs_direct *)(pos.chunk + at);
        if (de->d_ino == 0) {
            entry_set(pos.chunk + at, ino, type, name, de->d_reclen);
        } else {
            uint16_t used = (uint16_t)ufs_direntsize(de->d_namlen), rest = de->d_reclen - used;
            de->d_reclen = used;
            entry_set(pos.chunk + at + used, ino, type, name, rest);
        }
        return chunk_write(dp, &pos);
    }
    memset(pos.chunk, 0, sizeof pos.chunk);
    entry_set(pos.chunk, ino, type, name, UFS_DIRBLKSIZ);
    pos.base = dp->i_size;
    return chunk_write(dp, &pos);
}

int ufs_dirremove(struct ufs_inode *dp, const char *name)
{
    struct dirpos pos;
    int err = dir_find(dp, name, &pos);
    if (err)
        return err;
    struct ufs_direct *de = (struct ufs_direct *)(pos.chunk + pos.at);
    if (pos.prev >= 0)
        ((struct ufs_direct *)(pos.chunk + pos.prev))->d_reclen += de->d_reclen;
    else
        de->d_ino = 0;
    return chunk_write(dp, &pos);
}

int ufs_dirrewrite(struct ufs_inode *dp, const char *name, uint32_t ino, uint8_t type)
{
    struct dirpos pos;
    int err = dir_find(dp, name, &pos);
    if (err)
        return err;
    struct ufs_direct *de = (struct ufs_direct *)(pos.chunk + pos.at);
    de->d_ino = ino;
    de->d_type = type;
    return chunk_write(dp, &pos);
}

static int empty_visit(const struct ufs_direct *de, uint64_t off, void *arg)
{
    bool dot = de->d_namlen == 1 && de->d_name[0] == '.';
    bool dotdot = de->d_namlen == 2 && de->d_name[0] == '.' && de->d_name[1] == '.';
    return dot || dotdot ? 0 : 1;
}

int ufs_dirempty(struct ufs_inode *dp)
{
    int r = dir_walk(dp, 0, empty_visit, NULL);
    return r < 0 ? r : r == 0;
}

int ufs_dirinit(struct ufs_inode *ip, uint32_t parent)
{
    struct dirpos pos = { .base = 0 };
    memset(pos.chunk, 0, sizeof pos.chunk);
    uint16_t dot = (uint16_t)ufs_direntsize(1);
    entry_set(pos.chunk, ip->i_number, UFS_DT_DIR, ".", dot);
    entry_set(pos.chunk + dot, parent, UFS_DT_DIR, "..", UFS_DIRBLKSIZ - dot);
    return chunk_write(ip, &pos);
}
