/*
 * Inside the VFS layer: what kern/vfs/vfs.c, lookup.c and vnops.c share
 * and nothing else should use.  The interface is kern/vfs/vfs.h.
 */
#ifndef KERN_VFS_VFS_IMPL_H
#define KERN_VFS_VFS_IMPL_H

#include <kern/vfs/vfs.h>
#include <kern/lock/sleep.h>

/* The mount list and its shared/exclusive lock (kern/vfs/vfs.c). */
extern struct rwlock vfs_list_lock;
extern struct vfs *vfs_list;        /* [m] newest first */

/* Symbolic links followed in one lookup before -ELOOP. */
#define MAXSYMLINKS 8

/* namei flags */
#define LOOKUP_FOLLOW   0x1     /* follow a symbolic link at the end */
#define LOOKUP_PARENT   0x2     /* stop before the last component */
#define LOOKUP_LISTHELD 0x4     /* the caller holds vfs_list_lock (mount, unmount) */
#define LOOKUP_SLASHOK  0x8     /* with PARENT: a trailing '/' still names the last
                                   component (mkdir "a/"); trailing_slash tells */

/*
 * One pathname lookup.  In: path, cwd, cr, flags.  Out, on success: vp
 * (held) or, with LOOKUP_PARENT, dvp (held) and name, which is "" when the
 * path names a directory itself ("/", "a/.", "a/..", or "a/" without
 * LOOKUP_SLASHOK); trailing_slash when the last component was followed by
 * '/'.
 */
struct nameidata {
    const char *path;
    struct vnode *cwd;
    struct cred *cr;
    unsigned flags;
    struct vnode *vp;
    struct vnode *dvp;
    char name[NAME_MAX + 1];
    bool trailing_slash;
    int links;                  /* symbolic links followed so far */
    unsigned resolve;           /* RESOLVE_* (openat2), 0 for every other walk */
    struct vnode *top;          /* BENEATH, IN_ROOT: the start, the walk's scope */
    struct vfs *vfs0;           /* NO_XDEV: the start's file system */
};
int namei(struct nameidata *nd);

/* A symbolic link's text, NUL-terminated, in a new buffer of PATH_MAX
 * bytes (kfree it), and its length; -ENOENT if empty. */
int readlink_alloc(struct vnode *vp, char **textp, size_t *lenp, struct cred *cr);

/* What the last component of a path is, from the string alone. */
enum last_kind { LAST_NORM, LAST_DOT, LAST_DOTDOT, LAST_ROOT };
enum last_kind path_last_kind(const char *path);

/* Boot set-up of kern/vfs/vnops.c. */
void vnops_init(void);

#endif
