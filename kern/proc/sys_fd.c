/*
 * Descriptor system calls: dup, dup2, dup3, fcntl, ioctl (the console's
 * terminal calls go to the line discipline, drivers/tty/tty.c), fsync,
 * ftruncate, and umask.  The descriptor table itself is kern/proc/fd.c;
 * the path and transfer calls are kern/proc/sys_fs.c.
 *
 * Locks.  p_fdlock guards a table's slots (fd.c); a file's f_lock its
 * offset.  Nothing here holds either across a VOP.
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/net/socket.h>
#include <kern/event/event.h>
#include <drivers/tty/tty.h>
#include <kern/lib/errno.h>

#define O_CLOEXEC           0x80000
#define F_DUPFD 0
#define F_GETFD 1
#define F_SETFD 2
#define F_GETFL 3
#define F_SETFL 4
#define F_DUPFD_CLOEXEC 1030
#define F_SETPIPE_SZ 1031
#define F_NOTIFY 1026
#define F_ADD_SEALS 1033
#define F_GET_SEALS 1034
#define F_GETPIPE_SZ 1032
#define F_GETLK 5
#define F_SETLK 6
#define F_SETLKW 7
#define F_OFD_GETLK 36
#define F_OFD_SETLK 37
#define F_OFD_SETLKW 38
#define F_SETOWN 8
#define F_GETOWN 9
#define FIOASYNC   0x5452
#define FIOSETOWN  0x8901
#define SIOCSPGRP  0x8902
#define FIOGETOWN  0x8903
#define SIOCGPGRP  0x8904
#define FIONREAD   0x541B
#define FIONBIO    0x5421
#define FIONCLEX   0x5450
#define FIOCLEX    0x5451

static struct cred *cr(void) { return curproc()->p_cred; }

/* ---- descriptors ---- */

/* Put fp (a new reference) at exactly newfd, closing what was there. */
static int fd_place(struct proc *p, int newfd, struct file *fp, int fdflags)
{
    if (newfd < 0 || (uint64_t)newfd >= fd_limit(p)) {
        file_rele(fp);
        return -EBADF;
    }
    mutex_enter(&p->p_fdlock);
    struct file *old = p->p_fd[newfd];
    p->p_fd[newfd] = fp;
    p->p_fdflags[newfd] = fdflags;
    p->p_fdend = MAX(p->p_fdend, newfd + 1);
    mutex_exit(&p->p_fdlock);
    if (old) {
        reclock_close(p, old->f_vp);    /* closing it lets its record locks go */
        file_rele(old);
    }
    return newfd;
}

SYSCALL_DECL(sys_dup)
{
    struct file *fp = fd_get_raw(curproc(), (int)a0);
    if (!fp)
        return -EBADF;
    int fd = fd_install(curproc(), fp, 0, 0);
    if (fd < 0)
        file_rele(fp);
    return fd;
}

static int64_t do_dup3(int oldfd, int newfd, int flags)
{
    struct file *fp = fd_get_raw(curproc(), oldfd);
    if (!fp)
        return -EBADF;
    return fd_place(curproc(), newfd, fp, (flags & O_CLOEXEC) ? FD_CLOEXEC : 0);
}

SYSCALL_DECL(sys_dup2)
{
    if ((int)a0 == (int)a1) {
        struct file *fp = fd_get_raw(curproc(), (int)a0);
        if (!fp)
            return -EBADF;
        file_rele(fp);
        return (int)a1;
    }
    return do_dup3((int)a0, (int)a1, 0);
}

SYSCALL_DECL(sys_dup3)
{
    if ((int)a0 == (int)a1 || ((int)a2 & ~O_CLOEXEC))
        return -EINVAL;
    return do_dup3((int)a0, (int)a1, (int)a2);
}

/* ---- signal-driven I/O: O_ASYNC and the owner ---- */

/* The struct sigio of what fp opens, or NULL: sockets send SIGIO (their
 * socket_notify), other files keep the settings and send nothing yet. */
static struct sigio *sigio_of(struct file *fp)
{
    return vn_is_socket(fp->f_vp) ? &vtosock(fp->f_vp)->so_sigio : NULL;
}

/* O_ASYNC of fp on or off (f_lock held). */
static void set_async_locked(struct file *fp, bool on)
{
    fp->f_flags = on ? fp->f_flags | O_ASYNC : fp->f_flags & ~O_ASYNC;
    struct sigio *sg = sigio_of(fp);
    if (sg)
        __atomic_store_n(&sg->sg_async, on, __ATOMIC_RELAXED);
}

static int exists(struct proc *p, void *arg) { return 0; }

/* F_SETOWN: a process (> 0), a process group (< 0), or none (0). */
static int set_owner(struct file *fp, int owner)
{
    if (owner > 0 && proc_apply(owner, exists, NULL) != 0)
        return -ESRCH;
    __atomic_store_n(&fp->f_owner, owner, __ATOMIC_RELAXED);
    struct sigio *sg = sigio_of(fp);
    if (sg)
        __atomic_store_n(&sg->sg_owner, owner, __ATOMIC_RELAXED);
    return 0;
}

SYSCALL_DECL(sys_fcntl)
{
    struct proc *p = curproc();
    int fd = (int)a0;
    struct file *fp = fd_get_raw(p, fd);
    if (!fp)
        return -EBADF;
    /* An O_PATH descriptor allows only these, as Linux's check_fcntl_cmd. */
    if ((fp->f_flags & O_PATH) && a1 != F_DUPFD && a1 != F_DUPFD_CLOEXEC && a1 != F_GETFD
        && a1 != F_SETFD && a1 != F_GETFL) {
        file_rele(fp);
        return -EBADF;
    }
    int64_t r = 0;
    switch (a1) {
    case F_DUPFD:
    case F_DUPFD_CLOEXEC:
        /* A start at or past RLIMIT_NOFILE is EINVAL (Linux), not EMFILE. */
        r = (int64_t)a2 < 0 || a2 >= fd_limit(p) ? -EINVAL
            : fd_install(p, fp, (int)a2, a1 == F_DUPFD_CLOEXEC ? FD_CLOEXEC : 0);
        if (r >= 0)
            return r;           /* the reference went to the new descriptor */
        break;
    case F_GETFD:
        mutex_enter(&p->p_fdlock);
        r = p->p_fdflags[fd];
        mutex_exit(&p->p_fdlock);
        break;
    case F_SETFD:
        mutex_enter(&p->p_fdlock);
        if (p->p_fd[fd] == fp)
            p->p_fdflags[fd] = a2 & FD_CLOEXEC;
        mutex_exit(&p->p_fdlock);
        break;
    case F_GETFL:
        mutex_enter(&fp->f_lock);
        r = fp->f_flags;
        mutex_exit(&fp->f_lock);
        break;
    case F_SETFL:
        mutex_enter(&fp->f_lock);
        /* As Linux's: O_DSYNC and O_SYNC stay as open set them. */
        fp->f_flags = (fp->f_flags & (O_ACCMODE | O_SYNC)) | (a2 & (O_APPEND | O_NONBLOCK));
        set_async_locked(fp, a2 & O_ASYNC);
        mutex_exit(&fp->f_lock);
        break;
    case F_SETOWN:
        r = set_owner(fp, (int)a2);
        break;
    case F_GETOWN:
        r = __atomic_load_n(&fp->f_owner, __ATOMIC_RELAXED);
        break;
    case F_GETLK:
    case F_SETLK:
    case F_SETLKW:
    case F_OFD_GETLK:
    case F_OFD_SETLK:
    case F_OFD_SETLKW:
        r = fcntl_lock(fp, (int)a1, a2);    /* kern/proc/reclock.c */
        break;
    case F_ADD_SEALS:
    case F_GET_SEALS:
        r = memfd_seals(fp->f_vp, a1 == F_ADD_SEALS, (uint32_t)a2);    /* kern/event/memfd.c */
        break;
    case F_NOTIFY:
        r = dnotify_set(fp, (uint32_t)a2);      /* an int: the upper half is not ours */
        break;
    case F_SETPIPE_SZ:
    case F_GETPIPE_SZ:
        r = pipe_size_fcntl(fp->f_vp, a1 == F_SETPIPE_SZ, (uint32_t)a2, cr());
        break;
    default:
        r = -EINVAL;
    }
    file_rele(fp);
    return r;
}

SYSCALL_DECL(sys_umask)
{
    struct proc *p = curproc();
    uint32_t old = p->p_umask;
    p->p_umask = a0 & 0777;
    return old;
}

bool vn_is_console(const struct vnode *vp)
{
    return vp->v_type == VCHR &&
           (vp->v_rdev == vn_makedev(5, 1) || vp->v_rdev == vn_makedev(5, 0));
}

SYSCALL_DECL(sys_ioctl)
{
    struct file *fp = fd_get(curproc(), (int)a0);
    if (!fp)
        return -EBADF;
    int64_t r = -ENOTTY;
    struct tty *t;
    bool master;
    if (a1 == FIOCLEX || a1 == FIONCLEX) {
        struct proc *p = curproc();
        mutex_enter(&p->p_fdlock);
        if (p->p_fd[(int)a0] == fp)
            p->p_fdflags[(int)a0] = a1 == FIOCLEX ? FD_CLOEXEC : 0;
        mutex_exit(&p->p_fdlock);
        r = 0;
    } else if (a1 == FIONREAD && (fp->f_vp->v_type == VFIFO || fp->f_vp->v_type == VREG)) {
        /* bytes ready: what the pipe holds, or the file past the offset */
        struct vattr va;
        r = VOP_GETATTR(fp->f_vp, &va, cr());
        if (r == 0) {
            mutex_enter(&fp->f_lock);
            uint64_t off = fp->f_vp->v_type == VREG ? fp->f_offset : 0;
            mutex_exit(&fp->f_lock);
            int n = (int)MIN(va.va_size > off ? va.va_size - off : 0, (uint64_t)INT32_MAX);
            r = copyout(&n, (void *)a2, sizeof n);
        }
    } else if (a1 == FIONBIO) {
        /* O_NONBLOCK on the open file (CPython's set_blocking uses this). */
        int on;
        r = copyin((void *)a2, &on, sizeof on) ? -EFAULT : 0;
        if (!r) {
            mutex_enter(&fp->f_lock);
            fp->f_flags = on ? fp->f_flags | O_NONBLOCK : fp->f_flags & ~O_NONBLOCK;
            mutex_exit(&fp->f_lock);
        }
    } else if (vn_is_socket(fp->f_vp) && socket_ifreq_cmd((uint32_t)a1)) {
        /* an interface's name, index, flags, address, mask or MTU: a
         * struct ifreq in and out (kern/net/inet/netif.c) */
        char ifr[IFREQ_SIZE];
        r = copyin((void *)a2, ifr, sizeof ifr) ? -EFAULT : 0;
        if (!r)
            r = VOP_IOCTL(fp->f_vp, (uint32_t)a1, ifr, cr());
        if (!r && copyout(ifr, (void *)a2, sizeof ifr))
            r = -EFAULT;
    } else if (a1 == FIOASYNC) {
        int on;
        r = copyin((void *)a2, &on, sizeof on) ? -EFAULT : 0;
        if (!r) {
            mutex_enter(&fp->f_lock);
            set_async_locked(fp, on != 0);
            mutex_exit(&fp->f_lock);
        }
    } else if ((a1 == FIOSETOWN || a1 == SIOCSPGRP) && vn_is_socket(fp->f_vp)) {
        int owner;
        r = copyin((void *)a2, &owner, sizeof owner) ? -EFAULT : set_owner(fp, owner);
    } else if ((a1 == FIOGETOWN || a1 == SIOCGPGRP) && vn_is_socket(fp->f_vp)) {
        int owner = __atomic_load_n(&fp->f_owner, __ATOMIC_RELAXED);
        r = copyout(&owner, (void *)a2, sizeof owner) ? -EFAULT : 0;
    } else if (vn_is_socket(fp->f_vp) && socket_ifconf_cmd((uint32_t)a1)) {
        r = netif_ifconf(a2);       /* the list of interfaces, in user memory */
    } else if (vn_is_socket(fp->f_vp) && socket_route_cmd((uint32_t)a1)) {
        r = route_ioctl((uint32_t)a1, a2);  /* kern/net/inet/route.c */
    } else if (a1 == FIONREAD && vn_is_socket(fp->f_vp)) {
        int n = 0;
        r = VOP_IOCTL(fp->f_vp, FIONREAD, &n, cr());
        if (r == 0)
            r = copyout(&n, (void *)a2, sizeof n);
    } else if ((t = vn_tty(fp->f_vp, &master))) {
        r = tty_ioctl(fp->f_vp, t, master, (uint32_t)a1, a2);     /* kern/proc/sys_tty.c */
    } else if (fp->f_vp->v_type == VBLK) {
        /* a disk's size questions: 8 bytes for BLKGETSIZE64 and BLKGETSIZE
         * (a long), 4 for BLKSSZGET (an int).  The command is 32 bits, as
         * Linux's: musl passes it sign-extended. */
        uint64_t v = 0;
        uint32_t cmd = (uint32_t)a1;
        r = VOP_IOCTL(fp->f_vp, cmd, &v, cr());
        if (r == 0)
            r = copyout(&v, (void *)a2, cmd == 0x1268 ? 4 : 8);
    }
    file_rele(fp);
    return r;
}

SYSCALL_DECL(sys_fsync)
{
    struct file *fp = fd_get(curproc(), (int)a0);
    if (!fp)
        return -EBADF;
    int err = VOP_FSYNC(fp->f_vp, cr());
    file_rele(fp);
    return err;
}

SYSCALL_DECL(sys_ftruncate)
{
    if ((int64_t)a1 < 0)
        return -EINVAL;         /* before the descriptor, as Linux */
    struct file *fp = fd_get(curproc(), (int)a0);
    if (!fp)
        return -EBADF;
    int err = !file_writable(fp) ? -EINVAL :
              fp->f_vp->v_type != VREG ? -EINVAL : VOP_TRUNCATE(fp->f_vp, a1, cr());
    if (!err)
        vn_notify(fp->f_vp, IN_MODIFY, NULL, 0);    /* inotify */
    file_rele(fp);
    return err;
}
