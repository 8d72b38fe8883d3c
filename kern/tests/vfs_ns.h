/*
 * The test namespace that the VFS ktests share (kern/tests/test_vfs.c,
 * which makes it, and kern/tests/test_vfs_mp.c): its layout, and the
 * helpers both files use.  Not for other files.
 */
#ifndef KERN_TESTS_VFS_NS_H
#define KERN_TESTS_VFS_NS_H

#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>

/*
 * A: a memfs not mounted anywhere, its root the working directory.
 *   d1/d2/d3/f   file              secret/ 0700 with secret/f
 *   open/ 0755 with open/f 0644    pub/ 01777 (sticky)
 *   mnt/  (mount point)            dev/  (mount point)
 *   lnk -> d1/d2                   file (a file)
 */
struct ns {
    struct vfs *avfs;
    struct vnode *a;
};

/* Create the file path (relative to A) with mode, as cr. */
int mkfile(struct ns *ns, const char *path, uint32_t mode, struct cred *cr);
/* Run body on a fresh namespace and tear it down whatever happened. */
int with_ns(int (*body)(struct ns *));
/* The vnode path leads to (held), or NULL. */
struct vnode *lookup_ok(struct ns *ns, const char *path);
/* A vnode's reference count. */
int32_t count_of(struct vnode *vp);

#endif
