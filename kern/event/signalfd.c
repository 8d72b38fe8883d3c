/*
 * signalfd: signals read from a file (signalfd, signalfd4).
 *
 * Theory.  A signalfd holds a set of signals (never SIGKILL or SIGSTOP).
 * A read takes signals of the set pending for the reading thread -- its
 * own, then its process's, as sigtimedwait takes them (sig_take,
 * kern/proc/signal.c) -- each as a struct signalfd_siginfo of 128 bytes,
 * as many as fit; with none it waits (l_waitset: a blocked signal of the
 * set still wakes the thread) or, with O_NONBLOCK, fails -EAGAIN.  It is
 * readable while a signal of the set is pending for the thread that
 * asks, so poll and epoll answer for their caller, as on Linux; every
 * signal sent calls poll_notify, so a waiter looks again.  The signals
 * are usually blocked, or their default action would come first.
 *
 * Locks.  sf_lock (class "signalfd", a sleep mutex) guards the set
 * against signalfd4 changing it; the signals themselves are the signal
 * code's (p_siglock).
 */
#include <kern/event/event.h>
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vfs/vfs.h>
#include <kern/vm/as.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

#define SFD_NONBLOCK    0x800
#define SFD_CLOEXEC     0x80000
#define UNCATCHABLE     (SIGBIT(SIGKILL) | SIGBIT(SIGSTOP))

LOCK_CLASS(signalfd_lock_class, "signalfd", LK_MUTEX_SLEEP);

struct signalfd {
    struct vnode sf_vn;
    struct mutex sf_lock;
    uint64_t sf_mask;           /* [sf_lock] written; read [a] */
    uint64_t sf_ino;            /* [c] */
};

/* Linux's struct signalfd_siginfo. */
struct sfd_info {
    uint32_t signo;
    int32_t err, code;
    uint32_t pid, uid;
    int32_t fd;
    uint32_t tid, band, overrun, trapno;
    int32_t status, sint;
    uint64_t ptr, utime, stime, addr;
    uint16_t addr_lsb;
    uint8_t pad[46];
};
_Static_assert(sizeof(struct sfd_info) == 128, "Linux's struct signalfd_siginfo");

static struct signalfd *vtosf(struct vnode *vp) { return vp->v_data; }

static uint64_t mask_of(struct signalfd *sf)
{
    return __atomic_load_n(&sf->sf_mask, __ATOMIC_ACQUIRE);
}

static void fill_info(struct sfd_info *o, int sig, const struct ksiginfo *si)
{
    memset(o, 0, sizeof *o);
    o->signo = (uint32_t)sig;
    o->code = si->si_code;
    if (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGTRAP) {
        o->addr = si->si_addr;
        return;
    }
    o->pid = (uint32_t)si->si_pid;
    o->uid = (uint32_t)si->si_uid;
    o->status = si->si_status;
    if (si->si_code < 0) {      /* sigqueue's value, a timer's id and overrun */
        o->sint = (int32_t)si->si_value;
        o->ptr = si->si_value;
        o->tid = (uint32_t)si->si_pid;
        o->overrun = (uint32_t)si->si_uid;
    }
}

static int signalfd_read(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    struct signalfd *sf = vtosf(vp);
    if (uio->uio_resid < sizeof(struct sfd_info))
        return -EINVAL;
    size_t got = 0;
    while (uio->uio_resid >= sizeof(struct sfd_info)) {
        struct ksiginfo si;
        int sig = sig_take(mask_of(sf), &si);
        if (!sig) {
            if (got || (ioflag & O_NONBLOCK))
                break;
            int err = sig_wait_for(mask_of(sf));
            if (err)
                return err;
            continue;
        }
        struct sfd_info o;
        fill_info(&o, sig, &si);
        memcpy(uio->uio_base, &o, sizeof o);
        uio->uio_base = (char *)uio->uio_base + sizeof o;
        uio->uio_resid -= sizeof o;
        got++;
    }
    return got ? 0 : -EAGAIN;
}

static short signalfd_poll(struct vnode *vp, short events, int fflags)
{
    return (sig_pending_mine() & mask_of(vtosf(vp))) ? (short)(events & (POLLIN | POLLRDNORM)) : 0;
}

static void signalfd_inactive(struct vnode *vp, struct cred *cr)
{
    struct signalfd *sf = vtosf(vp);
    vn_destroy(vp);
    mutex_destroy(&sf->sf_lock);
    kfree(sf);
}

static int signalfd_getattr(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    return anon_getattr(vp, va, vtosf(vp)->sf_ino);
}

static void signalfd_fdname(struct vnode *vp, char *buf, size_t len)
{
    strlcpy(buf, "anon_inode:[signalfd]", len);
}


static const struct vnodeops signalfd_vnodeops = {
    ANON_VNODEOPS_COMMON,
    .vop_ioctl = anon_ioctl,
    .vop_close = anon_close,
    .vop_read = signalfd_read,
    .vop_write = (void *)anon_einval,
    .vop_getattr = signalfd_getattr,
    .vop_inactive = signalfd_inactive,
    .vop_poll = signalfd_poll,
    .vop_fdname = signalfd_fdname,
};

/* A new signalfd, or (fd not -1) a new set for an existing one. */
static int64_t do_signalfd(int fd, uint64_t umask, uint64_t size, int flags)
{
    if (size != sizeof(uint64_t) || (flags & ~(SFD_NONBLOCK | SFD_CLOEXEC)))
        return -EINVAL;
    uint64_t mask;
    if (copyin((void *)umask, &mask, sizeof mask))
        return -EFAULT;
    mask &= ~UNCATCHABLE;
    if (fd != -1) {
        struct file *fp = fd_get(curproc(), fd);
        if (!fp)
            return -EBADF;
        int64_t r = fd;
        if (fp->f_vp->v_op != &signalfd_vnodeops) {
            r = -EINVAL;
        } else {
            struct signalfd *sf = vtosf(fp->f_vp);
            mutex_enter(&sf->sf_lock);
            __atomic_store_n(&sf->sf_mask, mask, __ATOMIC_RELEASE);
            mutex_exit(&sf->sf_lock);
            poll_notify();
        }
        file_rele(fp);
        return r;
    }
    struct signalfd *sf = kzalloc(sizeof *sf);
    if (!sf)
        return -ENOMEM;
    sf->sf_mask = mask;
    sf->sf_ino = anon_ino();
    mutex_init(&sf->sf_lock, &signalfd_lock_class, 0, "signalfd");
    vn_init(&sf->sf_vn, &signalfd_vnodeops, VNON, NULL, sf);
    sf->sf_vn.v_flag |= VNOSEEK;
    return anon_install(&sf->sf_vn, O_RDONLY | (flags & SFD_NONBLOCK), flags & SFD_CLOEXEC);
}

SYSCALL_DECL(sys_signalfd) { return do_signalfd((int)a0, a1, a2, 0); }
SYSCALL_DECL(sys_signalfd4) { return do_signalfd((int)a0, a1, a2, (int)a3); }
