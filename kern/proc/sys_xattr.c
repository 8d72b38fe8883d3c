/*
 * Extended attributes: the twelve xattr calls (get, set, list, remove,
 * each by path, by path without following a link, and by descriptor).
 *
 * No file system of Tempest's keeps extended attributes, so the calls
 * answer as Linux does on one without them (its sysv and ufs): once the
 * file is found and the name is checked, getting, setting or removing an
 * attribute is EOPNOTSUPP, and a file's list of attributes is empty (0).
 * Debian's coreutils (ls -l, cp -a) and tar ask, and take EOPNOTSUPP as
 * "none"; ENOSYS made ls -l print an error for each file.
 *
 * The checks and their order are Linux 6.1's (fs/xattr.c): the file
 * (ENOENT, ENOTDIR, EBADF for a bad or O_PATH descriptor), EROFS for a
 * change on a read-only mount, for a change the flags (EINVAL), the name
 * (EFAULT; ERANGE when empty or 256 bytes or more), for a change the
 * value's size (E2BIG over 64 KiB), then the permission: "user." names
 * only on regular files and directories (ENODATA to read, EPERM to
 * change), "trusted." ones for root only, and otherwise the file's read
 * or write permission (EACCES).
 *
 * No locks of its own: the VOPs it calls take the vnode's.
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

#define XATTR_NAME_MAX  255
#define XATTR_SIZE_MAX  65536
#define XATTR_CREATE    1
#define XATTR_REPLACE   2

enum xattr_op { XA_GET, XA_SET, XA_LIST, XA_REMOVE };

static struct cred *xcr(void) { return curproc()->p_cred; }

static struct vnode *xcwd(void)
{
    struct vnode *v = curproc()->p_cwd;
    return v ? v : rootdir;
}

/* The vnode a path names (held), following a last link or not. */
static int xattr_lookup(uint64_t upath, bool follow, struct vnode **vpp)
{
    char *path = kmalloc(PATH_MAX);
    if (!path)
        return -ENOMEM;
    long n = copyinstr((const char *)upath, path, PATH_MAX);
    int err = n == 0 ? -ENOENT : n < 0 ? (int)n : 0;
    if (!err)
        err = lookupname(path, xcwd(), follow, vpp, xcr());
    kfree(path);
    return err;
}

/* The name, checked as Linux's strncpy_from_user of 256 bytes. */
static int xattr_name(uint64_t uname)
{
    char name[XATTR_NAME_MAX + 1];
    long n = copyinstr((const char *)uname, name, sizeof name);
    if (n == -ENAMETOOLONG || n == 0)
        return -ERANGE;
    return n < 0 ? (int)n : 0;
}

/* Linux's xattr_permission, for the name at uname (already checked). */
static int xattr_permission(struct vnode *vp, uint64_t uname, bool write)
{
    char name[XATTR_NAME_MAX + 1];
    if (copyinstr((const char *)uname, name, sizeof name) < 0)
        return -EFAULT;
    if (strncmp(name, "security.", 9) == 0 || strncmp(name, "system.", 7) == 0)
        return 0;
    if (strncmp(name, "trusted.", 8) == 0)
        return xcr()->cr_uid == 0 ? 0 : write ? -EPERM : -ENODATA;
    if (strncmp(name, "user.", 5) == 0 && vp->v_type != VREG && vp->v_type != VDIR)
        return write ? -EPERM : -ENODATA;
    return VOP_ACCESS(vp, write ? VWRITE : VREAD, xcr());
}

/* The checks after the file is found; the answer of a file system that
 * keeps no attributes. */
static int64_t xattr_on(struct vnode *vp, enum xattr_op op, uint64_t uname, uint64_t size,
                        int flags)
{
    if (op == XA_LIST)
        return 0;
    bool change = op == XA_SET || op == XA_REMOVE;
    if (change && vp->v_vfsp && (vp->v_vfsp->vfs_flag & VFS_RDONLY))
        return -EROFS;
    if (op == XA_SET && (flags & ~(XATTR_CREATE | XATTR_REPLACE)))
        return -EINVAL;
    int err = xattr_name(uname);
    if (!err && op == XA_SET && size > XATTR_SIZE_MAX)
        err = -E2BIG;
    if (!err)
        err = xattr_permission(vp, uname, change);
    return err ? err : -EOPNOTSUPP;
}

static int64_t xattr_path(uint64_t upath, bool follow, enum xattr_op op, uint64_t uname,
                          uint64_t size, int flags)
{
    struct vnode *vp;
    int err = xattr_lookup(upath, follow, &vp);
    if (err)
        return err;
    int64_t r = xattr_on(vp, op, uname, size, flags);
    VN_RELE(vp);
    return r;
}

static int64_t xattr_fd(int fd, enum xattr_op op, uint64_t uname, uint64_t size, int flags)
{
    struct file *fp = fd_get(curproc(), fd);
    if (!fp)
        return -EBADF;
    int64_t r = xattr_on(fp->f_vp, op, uname, size, flags);
    file_rele(fp);
    return r;
}

SYSCALL_DECL(sys_setxattr) { return xattr_path(a0, true, XA_SET, a1, a3, (int)a4); }
SYSCALL_DECL(sys_lsetxattr) { return xattr_path(a0, false, XA_SET, a1, a3, (int)a4); }
SYSCALL_DECL(sys_fsetxattr) { return xattr_fd((int)a0, XA_SET, a1, a3, (int)a4); }
SYSCALL_DECL(sys_getxattr) { return xattr_path(a0, true, XA_GET, a1, a3, 0); }
SYSCALL_DECL(sys_lgetxattr) { return xattr_path(a0, false, XA_GET, a1, a3, 0); }
SYSCALL_DECL(sys_fgetxattr) { return xattr_fd((int)a0, XA_GET, a1, a3, 0); }
SYSCALL_DECL(sys_listxattr) { return xattr_path(a0, true, XA_LIST, 0, a2, 0); }
SYSCALL_DECL(sys_llistxattr) { return xattr_path(a0, false, XA_LIST, 0, a2, 0); }
SYSCALL_DECL(sys_flistxattr) { return xattr_fd((int)a0, XA_LIST, 0, a2, 0); }
SYSCALL_DECL(sys_removexattr) { return xattr_path(a0, true, XA_REMOVE, a1, 0, 0); }
SYSCALL_DECL(sys_lremovexattr) { return xattr_path(a0, false, XA_REMOVE, a1, 0, 0); }
SYSCALL_DECL(sys_fremovexattr) { return xattr_fd((int)a0, XA_REMOVE, a1, 0, 0); }
