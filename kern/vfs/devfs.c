/*
 * devfs: a small in-memory file system holding the devices, mounted on
 * the root's /dev at boot.  Its root directory lists the character
 * devices, with Linux's numbers so that programs built for Linux find what
 * they expect: console (5:1), tty (5:0, the caller's controlling
 * terminal, the console or a pty's slave; ENXIO for a process whose
 * session has none, as Linux's), ptmx (5:2: each open a new
 * pseudo-terminal, kern/pty/pty.c), the directories pts (where the
 * kernel mounts devpts) and shm (where it mounts a tmpfs, for POSIX
 * shared memory and semaphores: sem_open, shm_open),
 * null (1:3), zero (1:5), full (1:7), random (1:8), urandom (1:9) and kmsg
 * (1:11, the kernel message log); Linux's links fd, stdin, stdout and
 * stderr into /proc/self/fd; and every disk the block layer
 * registered, by its kernel name: vda, vdb... (virtio, 254:16n), ata0...
 * (the ATA disks, 8:16n as Linux's sd) and ram0 (1:0).
 *
 * The disks read and write through the block layer (blk_rw) at any byte
 * offset: a partial block is read, changed and written back.  Opened with
 * O_EXCL, a disk a file system is mounted from is EBUSY.  Their size
 * is the disk's, so lseek(SEEK_END) and BLKGETSIZE64 give it.  A device
 * node on another file system (mknod on S5) opens the devfs device of its
 * number (devfs_open_rdev, called by vn_open): a light specfs.
 *
 * random and urandom are one generator that never blocks: each read
 * seeds a splitmix64 stream from RDSEED or RDRAND when the CPU has them,
 * the TSC (which carries the timing of interrupts and of the reads
 * themselves) and a global counter.  It is no cryptographic generator
 * beyond what RDRAND gives.  kmsg reads one record per read(2), its file
 * offset being the record's sequence number; at the newest record it
 * returns EAGAIN rather than blocking (the log is filled by kprintf, which
 * may not wake anyone).  Writes to kmsg become kernel messages.
 *
 * Each mount has its own vnodes (a vnode belongs to one vfs, which ".."
 * across the mount point relies on) but the devices behind them are
 * shared.  devfs holds one reference on each of its vnodes for as long as
 * it is mounted, so VOP_INACTIVE never runs while mounted, and unmount is
 * refused (-EBUSY) while any device vnode has a reference besides that one.
 *
 * Locking: the only mutable per-vnode state is the permission triple
 * (mode, uid, gid), changed by VOP_SETATTR and read by VOP_GETATTR and
 * VOP_ACCESS, all of which run under the vnode lock the VOP macros take:
 * [v] is the whole story, the paper's "vnode lock as the mutual exclusion
 * lock for all of the per-vnode data, including file system dependent
 * data".  The rest is constant while mounted.  The devices need no lock of
 * their own: the console serializes its output, the block layer its
 * queue, the message log is under the console lock; devfs_primary, the
 * mount on /dev that device nodes elsewhere open through, is [m] (the
 * mount-list lock: set by mount, cleared by unmount, both exclusive).
 */
#include <kern/vfs/vfs.h>
#include <kern/vfs/vfs_impl.h>
#include <drivers/tty/tty.h>
#include <drivers/block/bio.h>
#include <drivers/platform/rtc.h>
#include <kern/vfs/cred.h>
#include <kern/vm/kmem.h>
#include <kern/arch/arch.h>
#include <kern/arch/kmsg.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>

#define DEVFS_MAGIC 0x1373          /* Linux's DEVFS_SUPER_MAGIC */
#define BLKGETSIZE    0x1260
#define BLKSSZGET     0x1268
#define BLKGETSIZE64  0x80081272

struct devfs_dev {
    const char *name;
    uint32_t major, minor;
    int (*read)(struct uio *uio);
    int (*write)(struct uio *uio);
    const char *link;               /* a symbolic link's text instead (fd, stdin...) */
    bool dir;                       /* an empty directory instead (a mount point: pts, shm) */
};

struct devfs_node {
    struct vnode vn;
    const struct devfs_dev *dev;    /* [c] a character device, or NULL */
    struct blkdev *blk;             /* [c] a disk, or NULL; neither: the root directory */
    char name[BLK_NAME_MAX];        /* [c] */
    uint64_t ino;                   /* [c] */
    uint32_t mode, uid, gid;        /* [v] permission bits only */
};

/* ---- the character devices ---- */

static void uio_advance(struct uio *uio, size_t n)
{
    uio->uio_base = (char *)uio->uio_base + n;
    uio->uio_resid -= n;
    uio->uio_offset += n;
}

static int read_eof(struct uio *uio)
{
    return 0;
}

static int write_swallow(struct uio *uio)
{
    uio_advance(uio, uio->uio_resid);
    return 0;
}

static int write_full(struct uio *uio)
{
    return -ENOSPC;
}

static int read_zeros(struct uio *uio)
{
    memset(uio->uio_base, 0, uio->uio_resid);
    uio_advance(uio, uio->uio_resid);
    return 0;
}

/* The console: output goes to the kernel console; input comes a line at
 * a time from the terminal line discipline (drivers/tty/tty.c). */
static int console_dev_read(struct uio *uio)
{
    long n = tty_read(&console_tty, uio->uio_base, uio->uio_resid, false);
    if (n < 0)
        return (int)n;
    uio_advance(uio, (size_t)n);
    return 0;
}

static int console_dev_write(struct uio *uio)
{
    console_write(uio->uio_base, uio->uio_resid);
    uio_advance(uio, uio->uio_resid);
    return 0;
}

static bool cpu_has_rdseed, cpu_has_rdrand, cpu_checked;   /* [a] set once, same values */
static uint64_t random_counter;                            /* [a] */

/* 64 bits from RDSEED or RDRAND when the CPU has one, else 0. */
static uint64_t hardware_random(void)
{
    if (!__atomic_load_n(&cpu_checked, __ATOMIC_ACQUIRE)) {
        uint32_t a, b, c, d;
        cpuid(1, 0, &a, &b, &c, &d);
        cpu_has_rdrand = (c >> 30) & 1;
        cpuid(7, 0, &a, &b, &c, &d);
        cpu_has_rdseed = (b >> 18) & 1;
        __atomic_store_n(&cpu_checked, true, __ATOMIC_RELEASE);
    }
    uint64_t v = 0;
    uint8_t ok = 0;
    for (int tries = 0; tries < 10 && !ok; tries++) {
        if (cpu_has_rdseed)
            __asm__ volatile("rdseed %0; setc %1" : "=r"(v), "=qm"(ok));
        else if (cpu_has_rdrand)
            __asm__ volatile("rdrand %0; setc %1" : "=r"(v), "=qm"(ok));
        else
            break;
    }
    return ok ? v : 0;
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int read_random(struct uio *uio)
{
    uint64_t x = hardware_random() ^ rdtsc() ^
                 __atomic_add_fetch(&random_counter, 0x632be59bd9b4e019ULL, __ATOMIC_RELAXED);
    uint8_t *out = uio->uio_base;
    for (size_t i = 0; i < uio->uio_resid; i += 8) {
        uint64_t r = splitmix64(&x);
        memcpy(out + i, &r, MIN((size_t)8, uio->uio_resid - i));
    }
    uio_advance(uio, uio->uio_resid);
    return 0;
}

/* One log record per read, the offset being its sequence number (see the
 * theory).  A buffer too small for the record is EINVAL, as Linux's. */
static int kmsg_dev_read(struct uio *uio)
{
    uint64_t next;
    long n = kmsg_read_record(uio->uio_offset, uio->uio_base, uio->uio_resid, &next);
    uio->uio_offset = next;
    if (n < 0)
        return (int)n;
    uio->uio_base = (char *)uio->uio_base + n;
    uio->uio_resid -= (size_t)n;
    return 0;
}

/* A write to /dev/kmsg is a kernel message (a leading "<N>" level is
 * dropped, as Linux keeps it apart). */
static int kmsg_dev_write(struct uio *uio)
{
    const char *s = uio->uio_base;
    size_t n = uio->uio_resid, skip = 0;
    if (n >= 3 && s[0] == '<') {
        size_t i = 1;
        while (i < n && i < 5 && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i < n && s[i] == '>')
            skip = i + 1;
    }
    size_t len = n - skip;
    while (len && s[skip + len - 1] == '\n')
        len--;
    kprintf("%.*s\n", (int)MIN(len, (size_t)KMSG_TEXT), s + skip);
    uio_advance(uio, n);
    return 0;
}

static const struct devfs_dev devfs_devs[] = {
    { "console", 5, 1, console_dev_read, console_dev_write, NULL, false },
    { "tty", 5, 0, console_dev_read, console_dev_write, NULL, false },
    { "ptmx", 5, 2, read_eof, write_swallow, NULL, false },     /* opens a new pty (pty_open_master) */
    { "pts", 0, 0, NULL, NULL, NULL, true },
    { "shm", 0, 0, NULL, NULL, NULL, true },   /* tmpfs's mount point, as Linux's /dev/shm */
    { "null", 1, 3, read_eof, write_swallow, NULL, false },
    { "zero", 1, 5, read_zeros, write_swallow, NULL, false },
    { "full", 1, 7, read_zeros, write_full, NULL, false },
    { "random", 1, 8, read_random, write_swallow, NULL, false },
    { "urandom", 1, 9, read_random, write_swallow, NULL, false },
    { "kmsg", 1, 11, kmsg_dev_read, kmsg_dev_write, NULL, false },
    /* Linux's links into /proc: a process's own descriptors */
    { "fd", 0, 0, NULL, NULL, "/proc/self/fd", false },
    { "stdin", 0, 0, NULL, NULL, "/proc/self/fd/0", false },
    { "stdout", 0, 0, NULL, NULL, "/proc/self/fd/1", false },
    { "stderr", 0, 0, NULL, NULL, "/proc/self/fd/2", false },
};
#define NDEVS (sizeof devfs_devs / sizeof devfs_devs[0])

/* ---- the disks ---- */

/* Linux's numbers for a disk: virtio 254:16n, ATA 8:16n (sd), ram 1:n. */
uint32_t devfs_disk_rdev(const struct blkdev *d)
{
    const char *n = d->name;
    size_t len = strlen(n);
    if (len == 3 && n[0] == 'v' && n[1] == 'd')
        return vn_makedev(254, (uint32_t)(n[2] - 'a') * 16);
    if (strncmp(n, "ata", 3) == 0)
        return vn_makedev(8, (uint32_t)(n[len - 1] - '0') * 16);
    if (strncmp(n, "ram", 3) == 0)
        return vn_makedev(1, (uint32_t)(n[len - 1] - '0'));
    return vn_makedev(259, 0);      /* Linux's "block extended" major */
}

/* Move uio's bytes between it and the disk, through a block buffer: a
 * partial block is read first, and written back changed. */
static int disk_rw(struct blkdev *d, struct uio *uio, bool write)
{
    uint64_t size = d->nblocks * d->bsize;
    if (uio->uio_offset >= size)
        return write && uio->uio_resid ? -ENOSPC : 0;
    char *blk = kmalloc(d->bsize);
    if (!blk)
        return -ENOMEM;
    int err = 0;
    while (uio->uio_resid && uio->uio_offset < size && !err) {
        uint64_t bno = uio->uio_offset / d->bsize;
        size_t in = uio->uio_offset % d->bsize;
        size_t n = MIN(uio->uio_resid, (size_t)d->bsize - in);
        bool whole = write && in == 0 && n == d->bsize;
        if (!whole)
            err = blk_rw(d, bno, 1, blk, false);
        if (err)
            break;
        if (write) {
            memcpy(blk + in, uio->uio_base, n);
            err = blk_rw(d, bno, 1, blk, true);
        } else {
            memcpy(uio->uio_base, blk + in, n);
        }
        if (!err)
            uio_advance(uio, n);
    }
    kfree(blk);
    return err;
}

/* One mount: the root and one node per device, then per disk.  The
 * nodes are made with the mount and carry its time as their access,
 * modification and change times, as devtmpfs's nodes carry their
 * creation time (not 1970). */
struct devfs_mount {
    int nnodes;                     /* [c] */
    int64_t made;                   /* [c] the wall clock at mount, seconds */
    struct devfs_node root;
    struct devfs_node node[];
};

static struct devfs_mount *devfs_primary;  /* [m] the mount device nodes open through */

static struct devfs_node *VTODN(struct vnode *vp)
{
    return vp->v_data;
}

static const struct vnodeops devfs_vnodeops;

/* ---- vnode operations ---- */

static struct devfs_pty_hooks pty_hooks;     /* [c] set once at boot */

void devfs_set_pty_hooks(const struct devfs_pty_hooks *h)
{
    pty_hooks = *h;
}

/* /dev/tty: the caller's controlling terminal, the console or a pty's
 * slave (*vpp replaced), or ENXIO for a process without one, as Linux's. */
static int open_dev_tty(struct vnode **vpp)
{
    if (tty_is_controlling())
        return 0;                   /* the console (or a kernel thread) */
    struct tty *t = tty_of_caller();
    struct vnode *slave = t && pty_hooks.slave_of ? pty_hooks.slave_of(t) : NULL;
    if (!slave)
        return -ENXIO;
    VN_RELE(*vpp);                  /* a devfs node: never inactive while mounted */
    *vpp = slave;
    return 0;
}

/* O_EXCL on a disk asks for it alone, as Linux's: EBUSY while a file
 * system is mounted from it (what mkfs checks before formatting). */
static int devfs_open(struct vnode **vpp, int flags, struct cred *cr)
{
    struct devfs_node *dn = VTODN(*vpp);
    if (dn->dev && dn->vn.v_rdev == vn_makedev(5, 0))
        return open_dev_tty(vpp);
    if (dn->dev && dn->vn.v_rdev == vn_makedev(5, 2))     /* a new pty (kern/pty/pty.c) */
        return pty_hooks.open_master ? pty_hooks.open_master(vpp, flags, cr) : -ENODEV;
    struct blkdev *d = dn->blk;
    return d && (flags & O_EXCL) && blk_claimed(d) ? -EBUSY : 0;
}

static int devfs_close(struct vnode *vp, int flags, struct cred *cr)
{
    return 0;
}

static int devfs_read(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    struct devfs_node *dn = VTODN(vp);
    if (uio->uio_user)
        return -EFAULT;
    if (dn->blk)
        return disk_rw(dn->blk, uio, false);
    if (!dn->dev || dn->dev->dir)
        return -EISDIR;
    if (dn->dev->link)
        return -EINVAL;
    return dn->dev->read(uio);
}

static int devfs_write(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    struct devfs_node *dn = VTODN(vp);
    if (uio->uio_user)
        return -EFAULT;
    if (dn->blk)
        return disk_rw(dn->blk, uio, true);
    if (!dn->dev || dn->dev->dir)
        return -EISDIR;
    if (dn->dev->link)
        return -EINVAL;
    return dn->dev->write(uio);
}

/* The disks' size questions; arg is a kernel uint64_t the caller copies
 * out (its low 32 bits for the int-sized answers). */
static int devfs_ioctl(struct vnode *vp, unsigned long cmd, void *arg, struct cred *cr)
{
    struct blkdev *d = VTODN(vp)->blk;
    if (!d)
        return -ENOTTY;
    uint64_t *out = arg;
    switch (cmd) {
    case BLKGETSIZE64: *out = d->nblocks * d->bsize; return 0;
    case BLKGETSIZE:   *out = d->nblocks * d->bsize / 512; return 0;
    case BLKSSZGET:    *out = d->bsize; return 0;
    default:           return -ENOTTY;
    }
}

static uint32_t node_type_bits(const struct devfs_node *dn)
{
    return dn->blk ? S_IFBLK : !dn->dev || dn->dev->dir ? S_IFDIR :
           dn->dev->link ? S_IFLNK : S_IFCHR;
}

static int devfs_getattr(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    struct devfs_node *dn = VTODN(vp);
    memset(va, 0, sizeof *va);
    va->va_type = vp->v_type;
    va->va_mode = node_type_bits(dn) | dn->mode;
    va->va_uid = dn->uid;
    va->va_gid = dn->gid;
    va->va_nlink = vp->v_type == VDIR ? 2 : 1;
    if (dn->blk)
        va->va_size = dn->blk->nblocks * dn->blk->bsize;
    if (dn->dev && dn->dev->link)
        va->va_size = strlen(dn->dev->link);
    va->va_ino = dn->ino;
    va->va_blksize = 1024;
    va->va_fsid = vp->v_vfsp->vfs_fsid;
    va->va_rdev = vp->v_rdev;
    const struct devfs_mount *dm = vp->v_vfsp->vfs_data;
    va->va_atime = va->va_mtime = va->va_ctime = dm->made;
    return 0;
}

/* chmod and chown work (in memory, for this mount); sizes do not apply. */
static int devfs_setattr(struct vnode *vp, const struct vattr *va, struct cred *cr)
{
    struct devfs_node *dn = VTODN(vp);
    if (va->va_mask & (AT_SIZE | AT_ATIME | AT_MTIME | AT_CTIME))
        return vp->v_type == VDIR ? -EISDIR : 0;
    return vn_set_owner_mode(va, cr, &dn->mode, &dn->uid, &dn->gid);
}

static int devfs_access(struct vnode *vp, int mode, struct cred *cr)
{
    struct devfs_node *dn = VTODN(vp);
    return vn_access_check(node_type_bits(dn) | dn->mode, dn->uid, dn->gid, mode, cr);
}

static int devfs_lookup(struct vnode *dvp, const char *name, struct vnode **vpp,
                        struct cred *cr)
{
    if (dvp->v_type != VDIR)
        return -ENOTDIR;
    int err = vn_name_check(name, NAME_MAX);
    if (err)
        return err;
    struct devfs_mount *dm = dvp->v_vfsp->vfs_data;
    struct vnode *vp = NULL;
    if (strcmp(name, ".") == 0 && VTODN(dvp) != &dm->root)
        vp = dvp;                   /* pts or shm, not covered */
    else if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        vp = &dm->root.vn;
    for (int i = 0; i < dm->nnodes && !vp && VTODN(dvp) == &dm->root; i++)
        if (strcmp(name, dm->node[i].name) == 0)
            vp = &dm->node[i].vn;
    if (!vp)
        return -ENOENT;
    VN_HOLD(vp);
    *vpp = vp;
    return 0;
}

/* Opening an existing device with O_CREAT reaches here only through a
 * race-free VFS path that looked it up first; new names are refused. */
static int devfs_create(struct vnode *dvp, const char *name, const struct vattr *va, bool excl,
                        struct vnode **vpp, struct cred *cr)
{
    int err = devfs_lookup(dvp, name, vpp, cr);
    if (err == 0 && excl) {
        VN_RELE(*vpp);
        return -EEXIST;
    }
    return err == -ENOENT ? -EPERM : err;
}

static int devfs_no_names(void)
{
    return -EPERM;                  /* the device set is fixed */
}

static int devfs_remove(struct vnode *dvp, const char *name, struct cred *cr)
{
    return devfs_no_names();
}

static int devfs_link(struct vnode *tdvp, struct vnode *svp, const char *tname, struct cred *cr)
{
    return devfs_no_names();
}

static int devfs_rename(struct vnode *sdvp, const char *sname, struct vnode *tdvp,
                        const char *tname, struct cred *cr)
{
    return devfs_no_names();
}

static int devfs_mkdir(struct vnode *dvp, const char *name, const struct vattr *va,
                       struct vnode **vpp, struct cred *cr)
{
    return devfs_no_names();
}

static int devfs_rmdir(struct vnode *dvp, const char *name, struct cred *cr)
{
    return devfs_no_names();
}

static int devfs_symlink(struct vnode *dvp, const char *name, const struct vattr *va,
                         const char *target, struct cred *cr)
{
    return devfs_no_names();
}

/* Entries: 0 ".", 1 "..", then the devices; the offset is the entry
 * number, and each record's d_off the number of the next. */
static int devfs_readdir(struct vnode *vp, struct uio *uio, struct cred *cr, bool *eofp)
{
    if (vp->v_type != VDIR)
        return -ENOTDIR;
    if (uio->uio_user)
        return -EFAULT;
    struct devfs_mount *dm = vp->v_vfsp->vfs_data;
    uint64_t i = uio->uio_offset, end = VTODN(vp) == &dm->root ? 2 + (uint64_t)dm->nnodes : 2;
    for (; i < end; i++) {
        const struct devfs_node *dn = i < 2 ? &dm->root : &dm->node[i - 2];
        const char *name = i == 0 ? "." : i == 1 ? ".." : dn->name;
        uint8_t type = i < 2 ? DT_DIR : dn->blk ? DT_BLK : dn->dev->dir ? DT_DIR :
                       dn->dev->link ? DT_LNK : DT_CHR;
        if (!vfs_put_dirent(uio, dn->ino, (int64_t)i + 1, type, name, strlen(name)))
            break;
    }
    uio->uio_offset = i;
    if (eofp)
        *eofp = i >= end;
    return 0;
}

static int devfs_readlink(struct vnode *vp, struct uio *uio, struct cred *cr)
{
    struct devfs_node *dn = VTODN(vp);
    if (!dn->dev || !dn->dev->link)
        return -EINVAL;
    if (uio->uio_user)
        return -EFAULT;
    size_t n = MIN(strlen(dn->dev->link), uio->uio_resid);
    memcpy(uio->uio_base, dn->dev->link, n);
    uio_advance(uio, n);
    return 0;
}

static int devfs_fsync(struct vnode *vp, struct cred *cr)
{
    return 0;
}

static int devfs_truncate(struct vnode *vp, uint64_t size, struct cred *cr)
{
    return vp->v_type == VDIR ? -EISDIR : 0;
}

/* Not reached while mounted (devfs holds every vnode); kept for VN_RELE's
 * contract. */
static void devfs_inactive(struct vnode *vp, struct cred *cr)
{
}

static const struct vnodeops devfs_vnodeops = {
    .vop_open = devfs_open,
    .vop_close = devfs_close,
    .vop_read = devfs_read,
    .vop_write = devfs_write,
    .vop_ioctl = devfs_ioctl,
    .vop_getattr = devfs_getattr,
    .vop_setattr = devfs_setattr,
    .vop_access = devfs_access,
    .vop_lookup = devfs_lookup,
    .vop_create = devfs_create,
    .vop_remove = devfs_remove,
    .vop_link = devfs_link,
    .vop_rename = devfs_rename,
    .vop_mkdir = devfs_mkdir,
    .vop_rmdir = devfs_rmdir,
    .vop_readdir = devfs_readdir,
    .vop_symlink = devfs_symlink,
    .vop_readlink = devfs_readlink,
    .vop_fsync = devfs_fsync,
    .vop_truncate = devfs_truncate,
    .vop_inactive = devfs_inactive,
};

/* ---- file-system operations ---- */

/* A node: the root directory (dev and blk NULL), a character device or a
 * disk (mode 0660, as udev makes them). */
static void node_init(struct devfs_node *dn, struct vfs *vfsp, const struct devfs_dev *dev,
                      struct blkdev *blk, uint64_t ino)
{
    enum vtype type = blk ? VBLK : !dev || dev->dir ? VDIR : dev->link ? VLNK : VCHR;
    vn_init(&dn->vn, &devfs_vnodeops, type, vfsp, dn);
    dn->dev = dev;
    dn->blk = blk;
    dn->ino = ino;
    dn->mode = blk ? 0660 : !dev || dev->dir ? 0755 : dev->link ? 0777 : 0666;
    if (dev && strcmp(dev->name, "kmsg") == 0)
        dn->mode = 0644;
    dn->uid = dn->gid = 0;
    snprintf(dn->name, sizeof dn->name, "%s", blk ? blk->name : dev ? dev->name : "");
    if (dev && !dev->link && !dev->dir)
        dn->vn.v_rdev = vn_makedev(dev->major, dev->minor);
    if (blk)
        dn->vn.v_rdev = devfs_disk_rdev(blk);
}

static int devfs_mount(struct vfs *vfsp, struct cred *cr)
{
    int ndisks = blk_count();
    int n = (int)NDEVS + ndisks;
    struct devfs_mount *dm = kzalloc(sizeof *dm + (size_t)n * sizeof dm->node[0]);
    if (!dm)
        return -ENOMEM;
    dm->nnodes = n;
    dm->made = (int64_t)(realtime_ns() / 1000000000ull);
    node_init(&dm->root, vfsp, NULL, NULL, 1);
    dm->root.vn.v_flag |= VROOT;
    for (size_t i = 0; i < NDEVS; i++)
        node_init(&dm->node[i], vfsp, &devfs_devs[i], NULL, 2 + i);
    for (int i = 0; i < ndisks; i++)
        node_init(&dm->node[NDEVS + i], vfsp, NULL, blk_get(i), 2 + NDEVS + i);
    vfsp->vfs_data = dm;
    vfsp->vfs_bsize = 1024;
    if (!devfs_primary)
        devfs_primary = dm;
    return 0;
}

int devfs_open_rdev(struct vnode **vpp)
{
    struct vnode *vp = *vpp;
    rw_enter(&vfs_list_lock, RW_READER);
    struct devfs_mount *dm = devfs_primary;
    struct vnode *found = NULL;
    for (int i = 0; dm && i < dm->nnodes && !found; i++)
        if (dm->node[i].vn.v_type == vp->v_type && dm->node[i].vn.v_rdev == vp->v_rdev)
            found = &dm->node[i].vn;
    if (found)
        VN_HOLD(found);
    rw_exit(&vfs_list_lock);
    if (!found)
        return -ENXIO;
    VN_RELE(vp);
    *vpp = found;
    return 0;
}

bool vn_is_devfs(const struct vnode *vp)
{
    return vp->v_op == &devfs_vnodeops;
}

struct blkdev *devfs_disk_of(struct vnode *vp)
{
    if (vp->v_type != VBLK)
        return NULL;
    if (vn_is_devfs(vp))
        return VTODN(vp)->blk;
    for (int i = 0; i < blk_count(); i++)
        if (devfs_disk_rdev(blk_get(i)) == vp->v_rdev)
            return blk_get(i);
    return NULL;
}

const char *devfs_name(struct vnode *vp)
{
    return vn_is_devfs(vp) ? VTODN(vp)->name : "";
}

/* Called by the VFS with the list lock held exclusive and its own hold on
 * the root dropped: only devfs's own references may remain. */
static int devfs_unmount(struct vfs *vfsp, struct cred *cr)
{
    struct devfs_mount *dm = vfsp->vfs_data;
    for (int i = 0; i < dm->nnodes; i++)
        if (__atomic_load_n(&dm->node[i].vn.v_count, __ATOMIC_ACQUIRE) > 1)
            return -EBUSY;
    if (devfs_primary == dm)
        devfs_primary = NULL;
    vn_destroy(&dm->root.vn);
    for (int i = 0; i < dm->nnodes; i++)
        vn_destroy(&dm->node[i].vn);
    kfree(dm);
    vfsp->vfs_data = NULL;
    return 0;
}

static int devfs_root(struct vfs *vfsp, struct vnode **vpp)
{
    struct devfs_mount *dm = vfsp->vfs_data;
    VN_HOLD(&dm->root.vn);
    *vpp = &dm->root.vn;
    return 0;
}

static int devfs_statfs(struct vfs *vfsp, struct kstatfs *sb)
{
    memset(sb, 0, sizeof *sb);
    sb->f_type = DEVFS_MAGIC;
    sb->f_bsize = 1024;
    sb->f_files = 1 + (uint64_t)((struct devfs_mount *)vfsp->vfs_data)->nnodes;
    sb->f_namelen = NAME_MAX;
    sb->f_fsid = vfsp->vfs_fsid;
    return 0;
}

static int devfs_sync(struct vfs *vfsp, struct cred *cr)
{
    return 0;
}

static const struct vfsops devfs_vfsops = {
    .vfs_mount = devfs_mount,
    .vfs_unmount = devfs_unmount,
    .vfs_root = devfs_root,
    .vfs_statfs = devfs_statfs,
    .vfs_sync = devfs_sync,
};

const struct vfssw devfs_vfssw = { .name = "devfs", .ops = &devfs_vfsops, .needs_dev = false };
