/*
 * System services: mount, umount2, statfs and fstatfs, mknod and
 * mknodat, sysinfo, and syslog (klogctl), with Linux's arguments, errors
 * and their order.
 *
 * mount takes a type the VFS knows ("s5", "devfs", "proc", "tmpfs";
 * "sysv", "devtmpfs" are accepted as Linux's names for the first two)
 * and, for a disk's file system, the path of a block device (a devfs node
 * or a mknod'd one).  The data argument is an option string (at most a
 * page, as Linux copies) handed to the file system's mount, which reads
 * the options it takes (tmpfs: size=, mode=...; kern/tmpfs/tmpfs.c).  MS_RDONLY mounts read-only; MS_REMOUNT of a mount point
 * that keeps its read-only state succeeds without change; binds and moves
 * are refused (EINVAL).  Only root mounts and unmounts (EPERM), checked
 * after the target is found, as Linux does.
 *
 * syslog reads the kernel message log (kern/arch/kmsg.h).  As on a Linux
 * with kernel.dmesg_restrict=0, everyone may read the whole log (action 3)
 * and ask its size (10); the rest is root's.  Action 2 (read and consume)
 * returns what has not been consumed yet and never sleeps: the log is
 * written by kprintf, which cannot wake a sleeper.  The consumed and
 * cleared marks are sequence numbers changed with atomic operations.
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/procfs/procfs.h>
#include <kern/sched/sched.h>
#include <kern/vm/as.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/vm/kmem.h>
#include <kern/arch/kmsg.h>
#include <drivers/block/bio.h>
#include <drivers/platform/timer.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

#define MS_RDONLY   0x1
#define MS_REMOUNT  0x20
#define MS_BIND     0x1000
#define MS_MOVE     0x2000
#define MS_NOUSER   (1U << 31)
#define MS_MGC_VAL  0xC0ED0000U
#define MS_MGC_MSK  0xffff0000U
#define MNT_FORCE        0x1
#define MNT_DETACH       0x2
#define MNT_EXPIRE       0x4
#define UMOUNT_NOFOLLOW  0x8
#define ST_RDONLY   0x1
#define ST_VALID    0x20
#define PIPEFS_MAGIC 0x50495045

static struct cred *cr(void) { return curproc()->p_cred; }

static struct vnode *cwd(void)
{
    struct vnode *v = curproc()->p_cwd;
    return v ? v : rootdir;
}

static bool is_root(void) { return cr()->cr_uid == 0; }

/* Could [ubuf, ubuf + len) be user memory (Linux's access_ok)? */
static bool user_range_ok(uint64_t ubuf, size_t len)
{
    return len <= USER_TOP && ubuf <= USER_TOP - len;
}

/* Copy in a string of at most max bytes; the caller frees *out.  An
 * empty one is ENOENT unless empty_ok (a path must name something). */
static int get_string(uint64_t u, size_t max, bool empty_ok, char **out)
{
    char *s = kmalloc(max);
    if (!s)
        return -ENOMEM;
    long n = copyinstr((const char *)u, s, max);
    if (n == 0 && !empty_ok)
        n = -ENOENT;
    if (n < 0) {
        kfree(s);
        return (int)n;
    }
    *out = s;
    return 0;
}

/* ---- mount and umount2 ---- */

static const struct vfssw *mount_type(const char *name)
{
    if (strcmp(name, "sysv") == 0)
        name = "s5";
    else if (strcmp(name, "devtmpfs") == 0)
        name = "devfs";
    return vfs_findtype(name);
}

/* The disk named by the block-device path source (NULL: none given). */
static int source_disk(const char *source, struct blkdev **dp)
{
    if (!source)
        return -EFAULT;
    if (!source[0])
        return -ENOENT;
    struct vnode *vp;
    int err = lookupname(source, cwd(), true, &vp, cr());
    if (err)
        return err;
    if (vp->v_type != VBLK)
        err = -ENOTBLK;
    else if (!(*dp = devfs_disk_of(vp)))
        err = -ENXIO;
    VN_RELE(vp);
    return err;
}

/* Is path (a looked-up vnode) the root of a mounted file system? */
static bool is_mount_point(struct vnode *vp)
{
    return vp->v_vfsp && vp == vp->v_vfsp->vfs_rootvp;
}

static int64_t remount(struct vnode *target, uint64_t flags)
{
    if (!is_mount_point(target))
        return -EINVAL;
    bool ro = target->v_vfsp->vfs_flag & VFS_RDONLY;
    return ro == !!(flags & MS_RDONLY) ? 0 : -EBUSY;
}

SYSCALL_DECL(sys_mount)
{
    uint64_t flags = a3 & 0xffffffff;
    if ((flags & MS_MGC_MSK) == MS_MGC_VAL)
        flags &= ~MS_MGC_MSK;               /* the old magic number, as Linux drops it */
    char *type = NULL, *source = NULL, *target = NULL, *data = NULL;
    /* the strings first, as Linux copies them: type, source, then the
     * target; the options last (a string here: every type that takes
     * options takes text) */
    int err = a2 ? get_string(a2, PATH_MAX, true, &type) : 0;
    if (!err && a0)
        err = get_string(a0, PATH_MAX, true, &source);
    if (!err)
        err = get_string(a1, PATH_MAX, false, &target);
    if (!err && a4 && !(flags & MS_REMOUNT)) {
        err = get_string(a4, PAGE_SIZE, true, &data);
        if (err == -ENAMETOOLONG)
            err = -EINVAL;                  /* options longer than a page */
    }
    if (err) {
        kfree(target);
        kfree(type);
        kfree(source);
        return err;
    }
    struct vnode *tvp = NULL;
    err = lookupname(target, cwd(), true, &tvp, cr());
    if (!err && (flags & MS_NOUSER))
        err = -EINVAL;
    if (!err && !is_root())
        err = -EPERM;
    if (!err && (flags & MS_REMOUNT))
        err = (int)remount(tvp, flags);
    else if (!err && (flags & (MS_BIND | MS_MOVE)))
        err = -EINVAL;                      /* not supported */
    else if (!err) {
        const struct vfssw *sw = type ? mount_type(type) : NULL;
        struct blkdev *disk = NULL;
        if (!type)
            err = -EINVAL;
        else if (!sw)
            err = -ENODEV;
        else if (sw->needs_dev)
            err = source_disk(source, &disk);
        if (!err && tvp->v_type != VDIR)
            err = -ENOTDIR;
        if (!err)
            err = vfs_mount_opts(sw, disk ? disk->name : NULL, target, cwd(),
                                 (flags & MS_RDONLY) ? VFS_RDONLY : 0, data, cr());
    }
    if (tvp)
        VN_RELE(tvp);
    kfree(data);
    kfree(target);
    kfree(source);
    kfree(type);
    return err;
}

SYSCALL_DECL(sys_umount2)
{
    int flags = (int)a1;
    if (flags & ~(MNT_FORCE | MNT_DETACH | MNT_EXPIRE | UMOUNT_NOFOLLOW))
        return -EINVAL;
    char *target = NULL;
    int err = get_string(a0, PATH_MAX, false, &target);
    if (err)
        return err;
    struct vnode *vp;
    err = lookupname(target, cwd(), !(flags & UMOUNT_NOFOLLOW), &vp, cr());
    if (!err) {
        bool mp = is_mount_point(vp);
        VN_RELE(vp);
        err = !is_root() ? -EPERM : !mp ? -EINVAL : (flags & MNT_EXPIRE) ? -EAGAIN : 0;
    }
    if (!err)
        err = vfs_unmount_at(target, cwd(), cr());
    kfree(target);
    return err;
}

/* ---- statfs ---- */

struct statfs_u {
    int64_t f_type, f_bsize;
    uint64_t f_blocks, f_bfree, f_bavail, f_files, f_ffree;
    int32_t f_fsid[2];
    int64_t f_namelen, f_frsize, f_flags;
    int64_t f_spare[4];
};
_Static_assert(sizeof(struct statfs_u) == 120, "Linux's struct statfs is 120 bytes");

static int statfs_out(struct vnode *vp, uint64_t ubuf)
{
    struct vfs *vfsp = vp->v_vfsp;
    struct kstatfs k = { .f_type = PIPEFS_MAGIC, .f_bsize = 4096, .f_namelen = 255 };
    int err = vfsp ? VFS_STATFS(vfsp, &k) : 0;     /* no vfs: a pipe, Linux's pipefs */
    if (err)
        return err;
    struct statfs_u s = {
        .f_type = k.f_type, .f_bsize = k.f_bsize, .f_blocks = k.f_blocks,
        .f_bfree = k.f_bfree, .f_bavail = k.f_bfree, .f_files = k.f_files,
        .f_ffree = k.f_ffree, .f_fsid = { (int32_t)k.f_fsid, 0 },
        .f_namelen = k.f_namelen, .f_frsize = k.f_bsize,
        .f_flags = ST_VALID | (vfsp && (vfsp->vfs_flag & VFS_RDONLY) ? ST_RDONLY : 0),
    };
    return copyout(&s, (void *)ubuf, sizeof s) ? -EFAULT : 0;
}

SYSCALL_DECL(sys_statfs)
{
    char *path = NULL;
    int err = get_string(a0, PATH_MAX, false, &path);
    if (err)
        return err;
    struct vnode *vp;
    err = lookupname(path, cwd(), true, &vp, cr());
    kfree(path);
    if (err)
        return err;
    err = statfs_out(vp, a1);
    VN_RELE(vp);
    return err;
}

SYSCALL_DECL(sys_fstatfs)
{
    struct file *fp = fd_get(curproc(), (int)a0);
    if (!fp)
        return -EBADF;
    int err = statfs_out(fp->f_vp, a1);
    file_rele(fp);
    return err;
}

/* ---- mknod ---- */

static int64_t do_mknod(int dirfd, uint64_t upath, uint32_t mode, uint32_t dev)
{
    /* A type mknod cannot make is refused before the path is looked up
     * (a directory EPERM, anything else EINVAL), as Linux's may_mknod. */
    enum vtype type;
    switch (mode & S_IFMT) {
    case 0: case S_IFREG: type = VREG; break;
    case S_IFIFO:         type = VFIFO; break;
    case S_IFCHR:         type = VCHR; break;
    case S_IFBLK:         type = VBLK; break;
    case S_IFDIR:         type = VDIR; break;
    case S_IFSOCK:        type = VSOCK; break;
    default:              type = VNON; break;
    }
    char *path = NULL;
    int err = get_string(upath, PATH_MAX, false, &path);
    if (err)
        return err;
    if (type == VNON || type == VDIR) {
        kfree(path);
        return type == VNON ? -EINVAL : -EPERM;
    }
    struct vnode *dir = cwd();
    struct file *dfp = NULL;
    if (path[0] != '/' && dirfd != AT_FDCWD) {
        dfp = fd_get(curproc(), dirfd);
        dir = dfp ? dfp->f_vp : NULL;
        err = !dfp ? -EBADF : dir->v_type != VDIR ? -ENOTDIR : 0;
    }
    if (!err)
        err = vn_mknod(path, dir, type, mode & 07777 & ~curproc()->p_umask, dev, cr(), NULL);
    if (dfp)
        file_rele(dfp);
    kfree(path);
    return err;
}

SYSCALL_DECL(sys_mknod) { return do_mknod(AT_FDCWD, a0, (uint32_t)a1, (uint32_t)a2); }
SYSCALL_DECL(sys_mknodat) { return do_mknod((int)a0, a1, (uint32_t)a2, (uint32_t)a3); }

/* ---- sysinfo ---- */

struct sysinfo_u {
    int64_t uptime;
    uint64_t loads[3];
    uint64_t totalram, freeram, sharedram, bufferram, totalswap, freeswap;
    uint16_t procs, pad;
    uint64_t totalhigh, freehigh;
    uint32_t mem_unit;
};
_Static_assert(sizeof(struct sysinfo_u) == 112, "Linux's struct sysinfo is 112 bytes");

SYSCALL_DECL(sys_sysinfo)
{
    struct sysinfo_u si;
    memset(&si, 0, sizeof si);
    si.uptime = (int64_t)(uptime_ns() / 1000000000UL);
    sched_loadavg(si.loads, 16);            /* SI_LOAD_SHIFT */
    struct procfs_mem m;
    procfs_memory(&m);
    si.totalram = m.total;
    si.freeram = m.free;
    si.bufferram = m.buffers;
    int none[1];
    si.procs = (uint16_t)MIN(proc_pids(none, 0), 0xffff);
    si.mem_unit = 1;
    return copyout(&si, (void *)a0, sizeof si) ? -EFAULT : 0;
}

/* ---- syslog ---- */

enum {
    SYSLOG_CLOSE, SYSLOG_OPEN, SYSLOG_READ, SYSLOG_READ_ALL, SYSLOG_READ_CLEAR, SYSLOG_CLEAR,
    SYSLOG_CONSOLE_OFF, SYSLOG_CONSOLE_ON, SYSLOG_CONSOLE_LEVEL, SYSLOG_SIZE_UNREAD,
    SYSLOG_SIZE_BUFFER,
};

static uint64_t syslog_read_seq;    /* [a] the first record action 2 has not consumed */
static uint64_t syslog_clear_seq;   /* [a] the first record since the last clear */

/* Copy the log from *seq on into the user's buffer; *seq moves past what
 * was copied when advance is set. */
static int64_t syslog_copy(uint64_t ubuf, int64_t len, uint64_t *seq, bool advance)
{
    if (!ubuf || len < 0)
        return -EINVAL;
    if (len == 0)
        return 0;
    if (!user_range_ok(ubuf, (size_t)len))
        return -EFAULT;
    size_t n = MIN((size_t)len, (size_t)KMSG_BUFFER_SIZE);
    char *k = kmalloc(n);
    if (!k)
        return -ENOMEM;
    uint64_t next;
    size_t got = kmsg_read_text(k, n, __atomic_load_n(seq, __ATOMIC_RELAXED), &next);
    int64_t r = copyout(k, (void *)ubuf, got) ? -EFAULT : (int64_t)got;
    if (r >= 0 && advance)
        __atomic_store_n(seq, next, __ATOMIC_RELAXED);
    kfree(k);
    return r;
}

SYSCALL_DECL(sys_syslog)
{
    int type = (int)a0;
    int64_t len = (int32_t)a2;
    if (type != SYSLOG_READ_ALL && type != SYSLOG_SIZE_BUFFER && !is_root())
        return -EPERM;
    uint64_t first, next;
    switch (type) {
    case SYSLOG_CLOSE:
    case SYSLOG_OPEN:
        return 0;
    case SYSLOG_READ:
        return syslog_copy(a1, len, &syslog_read_seq, true);
    case SYSLOG_READ_ALL:
        return syslog_copy(a1, len, &syslog_clear_seq, false);
    case SYSLOG_READ_CLEAR: {
        int64_t r = syslog_copy(a1, len, &syslog_clear_seq, false);
        if (r >= 0) {
            kmsg_bounds(&first, &next);
            __atomic_store_n(&syslog_clear_seq, next, __ATOMIC_RELAXED);
        }
        return r;
    }
    case SYSLOG_CLEAR:
        kmsg_bounds(&first, &next);
        __atomic_store_n(&syslog_clear_seq, next, __ATOMIC_RELAXED);
        return 0;
    case SYSLOG_CONSOLE_OFF:
    case SYSLOG_CONSOLE_ON:
        return 0;
    case SYSLOG_CONSOLE_LEVEL:
        return len < 1 || len > 8 ? -EINVAL : 0;
    case SYSLOG_SIZE_UNREAD:
        return (int64_t)kmsg_text_size(__atomic_load_n(&syslog_read_seq, __ATOMIC_RELAXED));
    case SYSLOG_SIZE_BUFFER:
        return KMSG_BUFFER_SIZE;
    default:
        return -EINVAL;
    }
}
