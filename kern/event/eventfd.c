/*
 * eventfd: a 64-bit counter as a file (eventfd2).
 *
 * Theory.  A write adds its 8-byte value to the counter, waiting while
 * the sum would pass 0xfffffffffffffffe; a read takes the whole counter
 * (or 1 of it with EFD_SEMAPHORE), waiting while it is 0.  O_NONBLOCK
 * makes either -EAGAIN instead.  It is readable while the counter is
 * above 0 and writable while 1 more would fit, as Linux's.  Every change
 * wakes the other side and the pollers (vn_poll_notify).
 *
 * Locks.  ef_lock (class "eventfd", a sleep mutex) guards the counter;
 * readers sleep on ef_rchan and writers on ef_wchan under it.
 */
#include <kern/event/event.h>
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vfs/vfs.h>
#include <kern/vm/kmem.h>
#include <kern/lock/sleep.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

#define EFD_SEMAPHORE   1
#define EFD_NONBLOCK    0x800
#define EFD_CLOEXEC     0x80000
#define EVENTFD_MAX     0xfffffffffffffffeULL

LOCK_CLASS(eventfd_lock_class, "eventfd", LK_MUTEX_SLEEP);

struct eventfd {
    struct vnode ef_vn;
    struct mutex ef_lock;
    uint64_t ef_count;          /* [ef_lock] */
    bool ef_semaphore;          /* [c] */
    uint64_t ef_ino;            /* [c] */
    int ef_rchan, ef_wchan;     /* wait channels */
};

static struct eventfd *vtoef(struct vnode *vp) { return vp->v_data; }

static void changed(struct eventfd *ef, short events)
{
    wakeup(&ef->ef_rchan);
    wakeup(&ef->ef_wchan);
    vn_poll_notify(&ef->ef_vn, events);
}

static int eventfd_read(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    struct eventfd *ef = vtoef(vp);
    if (uio->uio_resid < sizeof(uint64_t))
        return -EINVAL;
    mutex_enter(&ef->ef_lock);
    while (ef->ef_count == 0) {
        int err = (ioflag & O_NONBLOCK) ? -EAGAIN : sig_sleep(&ef->ef_rchan);
        if (err) {
            mutex_exit(&ef->ef_lock);
            return err;
        }
    }
    uint64_t v = ef->ef_semaphore ? 1 : ef->ef_count;
    ef->ef_count -= v;
    changed(ef, POLL_WRITESIDE);
    mutex_exit(&ef->ef_lock);
    memcpy(uio->uio_base, &v, sizeof v);
    uio->uio_base = (char *)uio->uio_base + sizeof v;
    uio->uio_resid -= sizeof v;
    return 0;
}

static int eventfd_write(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    struct eventfd *ef = vtoef(vp);
    uint64_t v;
    if (uio->uio_resid < sizeof v)
        return -EINVAL;
    memcpy(&v, uio->uio_base, sizeof v);
    if (v == UINT64_MAX)
        return -EINVAL;
    mutex_enter(&ef->ef_lock);
    while (v > EVENTFD_MAX - ef->ef_count) {
        int err = (ioflag & O_NONBLOCK) ? -EAGAIN : sig_sleep(&ef->ef_wchan);
        if (err) {
            mutex_exit(&ef->ef_lock);
            return err;
        }
    }
    ef->ef_count += v;
    if (v)
        changed(ef, POLL_READSIDE);
    mutex_exit(&ef->ef_lock);
    uio->uio_base = (char *)uio->uio_base + sizeof v;
    uio->uio_resid -= sizeof v;
    return 0;
}

static short eventfd_poll(struct vnode *vp, short events, int fflags)
{
    struct eventfd *ef = vtoef(vp);
    short r = 0;
    mutex_enter(&ef->ef_lock);
    if (ef->ef_count > 0)
        r |= POLLIN | POLLRDNORM;
    if (ef->ef_count < EVENTFD_MAX)
        r |= POLLOUT | POLLWRNORM;
    mutex_exit(&ef->ef_lock);
    return (short)(r & (events | POLLERR | POLLHUP));
}

static int eventfd_getattr(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    return anon_getattr(vp, va, vtoef(vp)->ef_ino);
}

static void eventfd_fdname(struct vnode *vp, char *buf, size_t len)
{
    strlcpy(buf, "anon_inode:[eventfd]", len);
}

static void eventfd_inactive(struct vnode *vp, struct cred *cr)
{
    struct eventfd *ef = vtoef(vp);
    vn_destroy(vp);
    mutex_destroy(&ef->ef_lock);
    kfree(ef);
}


static const struct vnodeops eventfd_vnodeops = {
    ANON_VNODEOPS_COMMON,
    .vop_ioctl = anon_ioctl,
    .vop_close = anon_close,
    .vop_read = eventfd_read,
    .vop_write = eventfd_write,
    .vop_getattr = eventfd_getattr,
    .vop_inactive = eventfd_inactive,
    .vop_poll = eventfd_poll,
    .vop_fdname = eventfd_fdname,
};

static int64_t do_eventfd(uint64_t count, int flags)
{
    if (flags & ~(EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC))
        return -EINVAL;
    struct eventfd *ef = kzalloc(sizeof *ef);
    if (!ef)
        return -ENOMEM;
    ef->ef_count = (uint32_t)count;
    ef->ef_semaphore = flags & EFD_SEMAPHORE;
    ef->ef_ino = anon_ino();
    mutex_init(&ef->ef_lock, &eventfd_lock_class, 0, "eventfd");
    vn_init(&ef->ef_vn, &eventfd_vnodeops, VNON, NULL, ef);
    ef->ef_vn.v_flag |= VPOLLNOTIFY;     /* announces its changes (epoll's ready list) */
    ef->ef_vn.v_flag |= VNOSEEK;
    return anon_install(&ef->ef_vn, O_RDWR | (flags & EFD_NONBLOCK), flags & EFD_CLOEXEC);
}

SYSCALL_DECL(sys_eventfd) { return do_eventfd(a0, 0); }
SYSCALL_DECL(sys_eventfd2) { return do_eventfd(a0, (int)a1); }
