/*
 * timerfd: a timer as a file (timerfd_create, timerfd_settime,
 * timerfd_gettime).
 *
 * Theory.  A timerfd is a callout (kern/sched/callout.c) armed for its
 * next expiry.  When it fires, from the clock tick, it counts the
 * expirations since (one, and more for a periodic timer the tick was late
 * for, as Linux counts them), arms itself again for a periodic timer,
 * and wakes readers and pollers.  A read takes the count (8 bytes) and
 * sets it to 0, waiting while it is 0 (-EAGAIN with O_NONBLOCK).  Times
 * are kept on the uptime clock; an absolute CLOCK_REALTIME time is
 * turned into one when it is set (a later settimeofday does not move it,
 * and TFD_TIMER_CANCEL_ON_SET is accepted but never cancels).  An expiry
 * is seen when it is due (the callout brings the CPU's one-shot timer
 * forward), never before.
 *
 * Locks.  tf_lock (class "timerfd", a spin lock: the callout runs in the
 * tick) guards the expiry, the interval and the count; the callout's own
 * list lock is taken inside it (callout_arm), as kern/proc/sys_timer.c
 * does.  A reader checks the count under its channel's sleep-queue lock,
 * which the callout's wakeup takes, so no expiry is missed.
 */
#include <kern/event/event.h>
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/vm/as.h>
#include <kern/vm/kmem.h>
#include <kern/sched/callout.h>
#include <kern/lock/sleep.h>
#include <kern/lock/spinlock.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <drivers/platform/timer.h>
#include <kern/proc/itimerspec.h>

#define TFD_NONBLOCK        0x800
#define TFD_CLOEXEC         0x80000
#define TFD_TIMER_ABSTIME   1
#define TFD_TIMER_CANCEL_ON_SET 2
#define CLOCK_REALTIME      0
#define CLOCK_MONOTONIC     1
#define CLOCK_BOOTTIME      7
#define CLOCK_REALTIME_ALARM 8
#define CLOCK_BOOTTIME_ALARM 9
#define NSEC                1000000000UL

LOCK_CLASS(timerfd_lock_class, "timerfd", LK_SPIN);

struct timerfd {
    struct vnode tf_vn;
    spinlock_t tf_lock;
    struct callout tf_co;
    int tf_clock;               /* [c] */
    uint64_t tf_ino;            /* [c] */
    uint64_t tf_due;            /* [tf_lock] the next expiry (uptime ns), 0: disarmed */
    uint64_t tf_interval;       /* [tf_lock] ns, 0: one shot */
    uint64_t tf_ticks;          /* [tf_lock] expirations not yet read; read [a] */
    int tf_chan;                /* readers' channel */
};

static struct timerfd *vtotf(struct vnode *vp) { return vp->v_data; }

/* The callout, from the tick: count, rearm, wake. */
static void timerfd_fire(void *arg)
{
    struct timerfd *tf = arg;
    spin_lock(&tf->tf_lock);
    uint64_t now = uptime_ns(), due = tf->tf_due;
    if (due) {
        uint64_t n = 1;
        if (tf->tf_interval) {
            n += (now - due) / tf->tf_interval;
            tf->tf_due = due + n * tf->tf_interval;
            callout_arm(&tf->tf_co, tf->tf_due, timerfd_fire, tf);
        } else {
            tf->tf_due = 0;
        }
        __atomic_add_fetch(&tf->tf_ticks, n, __ATOMIC_RELEASE);
    }
    spin_unlock(&tf->tf_lock);
    if (due) {
        wakeup(&tf->tf_chan);
        vn_poll_notify(&tf->tf_vn, POLL_READSIDE);
    }
}

/* Wait (the count checked under the channel's sleep-queue lock) until
 * the timer has expired since the last read: 0, -EAGAIN or -ERESTARTSYS. */
static int wait_expiry(struct timerfd *tf, int ioflag)
{
    for (;;) {
        struct sleepq *sq = sleepq_lock(&tf->tf_chan);
        if (__atomic_load_n(&tf->tf_ticks, __ATOMIC_ACQUIRE)) {
            sleepq_unlock(sq);
            return 0;
        }
        if (ioflag & O_NONBLOCK) {
            sleepq_unlock(sq);
            return -EAGAIN;
        }
        int err = sig_sleep_locked(sq, &tf->tf_chan);
        if (err)
            return err;
    }
}

static int timerfd_read(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    struct timerfd *tf = vtotf(vp);
    if (uio->uio_resid < sizeof(uint64_t))
        return -EINVAL;
    uint64_t n = 0;
    while (n == 0) {                /* another reader may take it first */
        int err = wait_expiry(tf, ioflag);
        if (err)
            return err;
        spin_lock(&tf->tf_lock);
        n = tf->tf_ticks;
        tf->tf_ticks = 0;
        spin_unlock(&tf->tf_lock);
    }
    memcpy(uio->uio_base, &n, sizeof n);
    uio->uio_base = (char *)uio->uio_base + sizeof n;
    uio->uio_resid -= sizeof n;
    return 0;
}

static short timerfd_poll(struct vnode *vp, short events, int fflags)
{
    struct timerfd *tf = vtotf(vp);
    return __atomic_load_n(&tf->tf_ticks, __ATOMIC_ACQUIRE) ? (short)(events & (POLLIN | POLLRDNORM))
                                                            : 0;
}

static int timerfd_close(struct vnode *vp, int flags, struct cred *cr)
{
    callout_stop(&vtotf(vp)->tf_co);
    return 0;
}

static void timerfd_inactive(struct vnode *vp, struct cred *cr)
{
    struct timerfd *tf = vtotf(vp);
    callout_stop(&tf->tf_co);
    vn_destroy(vp);
    spin_destroy(&tf->tf_lock);     /* out of the lock statistics' list */
    kfree(tf);
}

static int timerfd_getattr(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    return anon_getattr(vp, va, vtotf(vp)->tf_ino);
}

static void timerfd_fdname(struct vnode *vp, char *buf, size_t len)
{
    strlcpy(buf, "anon_inode:[timerfd]", len);
}


static const struct vnodeops timerfd_vnodeops = {
    ANON_VNODEOPS_COMMON,
    .vop_ioctl = anon_ioctl,
    .vop_close = timerfd_close,
    .vop_read = timerfd_read,
    .vop_write = (void *)anon_einval,
    .vop_getattr = timerfd_getattr,
    .vop_inactive = timerfd_inactive,
    .vop_poll = timerfd_poll,
    .vop_fdname = timerfd_fdname,
};

SYSCALL_DECL(sys_timerfd_create)
{
    int clock = (int)a0, flags = (int)a1;
    if (flags & ~(TFD_NONBLOCK | TFD_CLOEXEC))
        return -EINVAL;
    if (clock == CLOCK_REALTIME_ALARM || clock == CLOCK_BOOTTIME_ALARM)
        return curproc()->p_cred->cr_uid == 0 ? -EINVAL : -EPERM;  /* no wake-up alarms */
    if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC && clock != CLOCK_BOOTTIME)
        return -EINVAL;
    struct timerfd *tf = kzalloc(sizeof *tf);
    if (!tf)
        return -ENOMEM;
    tf->tf_clock = clock;
    tf->tf_ino = anon_ino();
    spin_init(&tf->tf_lock, &timerfd_lock_class);
    callout_setup(&tf->tf_co);
    vn_init(&tf->tf_vn, &timerfd_vnodeops, VNON, NULL, tf);
    tf->tf_vn.v_flag |= VPOLLNOTIFY;     /* announces its changes (epoll's ready list) */
    tf->tf_vn.v_flag |= VNOSEEK;
    return anon_install(&tf->tf_vn, O_RDONLY | (flags & TFD_NONBLOCK), flags & TFD_CLOEXEC);
}

/* The timerfd behind fd, its file held: 0, -EBADF, or -EINVAL. */
static int timerfd_get(int fd, struct file **fpp)
{
    struct file *fp = fd_get(curproc(), fd);
    if (!fp)
        return -EBADF;
    if (fp->f_vp->v_op != &timerfd_vnodeops) {
        file_rele(fp);
        return -EINVAL;
    }
    *fpp = fp;
    return 0;
}

SYSCALL_DECL(sys_timerfd_settime)
{
    int flags = (int)a1;
    struct itimerspec_u nv, old;
    if (copyin((void *)a2, &nv, sizeof nv))
        return -EFAULT;
    struct file *fp;
    int err = timerfd_get((int)a0, &fp);
    if (err)
        return err;
    if ((flags & ~(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET)) ||
        !ts_valid(nv.interval_sec, nv.interval_nsec) || !ts_valid(nv.value_sec, nv.value_nsec)) {
        file_rele(fp);
        return -EINVAL;
    }
    struct timerfd *tf = vtotf(fp->f_vp);
    uint64_t value = ts_ns(nv.value_sec, nv.value_nsec);
    uint64_t due = value ? itimerspec_due(tf->tf_clock, value, flags & TFD_TIMER_ABSTIME) : 0;
    callout_stop(&tf->tf_co);       /* from here it neither fires nor runs */
    spin_lock(&tf->tf_lock);
    old = itimerspec_left(tf->tf_due, tf->tf_interval);
    tf->tf_due = due;
    tf->tf_interval = value ? ts_ns(nv.interval_sec, nv.interval_nsec) : 0;
    tf->tf_ticks = 0;
    if (due)
        callout_arm(&tf->tf_co, due, timerfd_fire, tf);
    spin_unlock(&tf->tf_lock);
    vn_poll_notify(&tf->tf_vn, POLL_READSIDE);
    file_rele(fp);
    return a3 && copyout(&old, (void *)a3, sizeof old) ? -EFAULT : 0;
}

SYSCALL_DECL(sys_timerfd_gettime)
{
    struct file *fp;
    int err = timerfd_get((int)a0, &fp);
    if (err)
        return err;
    struct timerfd *tf = vtotf(fp->f_vp);
    spin_lock(&tf->tf_lock);
    struct itimerspec_u cur = itimerspec_left(tf->tf_due, tf->tf_interval);
    spin_unlock(&tf->tf_lock);
    file_rele(fp);
    return copyout(&cur, (void *)a1, sizeof cur) ? -EFAULT : 0;
}
