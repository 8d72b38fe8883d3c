/*
 * epoll: a set of descriptors watched for readiness (epoll_create1,
 * epoll_ctl, epoll_wait, epoll_pwait, epoll_pwait2).
 *
 * Theory.  An epoll set is a vnode (anon_inode:[eventpoll]) holding a
 * list of items, one per (open file, descriptor) added, each with the
 * events asked for and the caller's 64-bit data.  epoll_wait asks each
 * item's vnode for its readiness (vn_poll, the same question poll and
 * select ask) and waits in poll_sleep (kern/proc/sys_poll.c) until an
 * item is ready, the time runs out or a signal comes.  A wait does not
 * look at every item, only at the set's ready list, as Linux's: an
 * item's vnode keeps its watchers (v_epwatch), and every change it
 * announces (vn_poll_notify) puts them on their sets' dirty lists
 * (epoll_notify, from any context, under spin locks); a wait moves the
 * dirty items to the ready list and asks each there.  A level-triggered
 * item that reports stays on the ready list until it is found not
 * ready; the others leave it.  Items whose vnode announces nothing (the
 * console, signalfd, a set inside a set: VPOLLNOTIFY not set) stay on
 * it for good.
 *
 * Edge-triggered items (EPOLLET) report each new event once: every
 * object that changes bumps its vnode's v_pollgen (vn_poll_notify), one
 * count for the reading side and one for the writing side (a read that
 * makes room is no new event for a reader, as Linux's keyed wakeups),
 * and an item remembers the counts it last reported.  EPOLLONESHOT
 * items report once and then sleep until EPOLL_CTL_MOD.  EPOLLEXCLUSIVE
 * items (the wake1proc lesson: a thundering herd of waiters for one
 * event) claim each event on the vnode (v_pollclaim, compare and swap):
 * every waiter wakes and looks, but only the one that claims the event
 * reports it; the others sleep again.  Level-triggered items reported
 * by a wait that filled the caller's array go to the end of the list, so
 * a busy descriptor does not starve the rest.
 *
 * An item does not hold its file: the file's last release takes it out
 * of every set (epoll_file_gone, called by file_rele through f_ep), as
 * Linux's eventpoll_release.
 *
 * Locks.  epoll_lock (class "epollset", global) guards every file's
 * f_ep list and the shape of nested sets (the loop check); ep_lock
 * (class "epoll", one per set) guards a set's items and its ready list;
 * the vnodes' watcher lists are under hashed spin locks (class
 * "epollwatch", epw_of), and a set's dirty list under its ep_dlock
 * (class "epolldirty"), both spin locks because a vnode's change may be
 * announced from the clock tick (timerfd).  Order: epoll_lock, ep_lock,
 * the watcher lock, ep_dlock; ep_lock comes before the locks a vnode's
 * vop_poll takes (a nested set's ep_lock is taken under its parent's;
 * loops are refused, ELOOP, so the order is a tree).
 */
#include <kern/event/event.h>
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vfs/vfs.h>
#include <kern/vm/as.h>
#include <kern/vm/kmem.h>
#include <kern/lock/sleep.h>
#include <kern/lock/spinlock.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <drivers/platform/timer.h>

#define EPOLL_CTL_ADD   1
#define EPOLL_CTL_DEL   2
#define EPOLL_CTL_MOD   3
#define EPOLLEXCLUSIVE  (1u << 28)
#define EPOLLWAKEUP     (1u << 29)
#define EPOLLONESHOT    (1u << 30)
#define EPOLLET         (1u << 31)
#define EPOLL_CLOEXEC   0x80000
#define EXCLUSIVE_OK    (POLLIN | POLLOUT | POLLERR | POLLHUP | EPOLLWAKEUP | EPOLLET | \
                         EPOLLEXCLUSIVE)
#define EP_MAX_NESTS    4
#define EP_MAX_BATCH    65536       /* the most events one wait returns */
#define NSEC            1000000000UL
#define FOREVER         UINT64_MAX

struct epoll_event_u {
    uint32_t events;
    uint64_t data;
} __attribute__((packed));

struct eventpoll;

struct epitem {
    struct epitem *ei_next;         /* [ep_lock] the set's items */
    struct epitem *ei_fnext;        /* [epoll_lock] the file's items (f_ep) */
    struct eventpoll *ei_ep;        /* [c] */
    struct file *ei_file;           /* [c] not held */
    int ei_fd;                      /* [c] */
    uint32_t ei_events;             /* [ep_lock] asked for, with EPOLLERR and EPOLLHUP */
    uint64_t ei_data;               /* [ep_lock] */
    uint32_t ei_seen[2];            /* [ep_lock] the vnode's events last reported (v_pollgen) */
    bool ei_fired;                  /* [ep_lock] an EPOLLONESHOT item has reported */
    bool ei_always;                 /* [c] its vnode does not announce changes: looked at on
                                     * every wait (the console, signalfd, nested sets) */
    struct epitem *ei_vnext;        /* [epw lock] its vnode's watchers (v_epwatch) */
    struct epitem *ei_dnext;        /* [ep_dlock] the set's dirty list */
    bool ei_dirty;                  /* [ep_dlock] on it */
    struct epitem *ei_rnext;        /* [ep_lock] the set's ready list */
    bool ei_ready;                  /* [ep_lock] on it */
};

struct eventpoll {
    struct vnode ep_vn;
    struct mutex ep_lock;
    struct epitem *ep_items;        /* [ep_lock] */
    int ep_nitems;                  /* [ep_lock] written; read [a] (a wait's array) */
    struct epitem *ep_ready;        /* [ep_lock] items to look at on the next wait */
    spinlock_t ep_dlock;            /* class "epolldirty": the dirty list */
    struct epitem *ep_dirty;        /* [ep_dlock] items whose vnode announced a change */
    uint64_t ep_ino;                /* [c] */
};

LOCK_CLASS(epoll_set_class, "epollset", LK_MUTEX_SLEEP);
LOCK_CLASS(epoll_lock_class, "epoll", LK_MUTEX_SLEEP);
LOCK_CLASS(epoll_dirty_class, "epolldirty", LK_SPIN);
LOCK_CLASS(epoll_watch_class, "epollwatch", LK_SPIN);
static struct mutex epoll_lock;

/* The locks of the vnodes' watcher lists, hashed by vnode. */
#define EPW_LOCKS 64
static spinlock_t epw_locks[EPW_LOCKS];

static spinlock_t *epw_of(const struct vnode *vp)
{
    return &epw_locks[((uintptr_t)vp >> 6) % EPW_LOCKS];
}

static const struct vnodeops epoll_vnodeops;

static struct eventpoll *vtoep(struct vnode *vp) { return vp->v_data; }
static bool is_epoll(struct file *fp) { return fp->f_vp->v_op == &epoll_vnodeops; }

/* ---- readiness ---- */

/* Has an event of the kinds in r happened since ei last reported? */
static bool item_fresh(const struct epitem *ei, uint32_t r, const uint32_t gen[2])
{
    bool rd = gen[0] != ei->ei_seen[0], wr = gen[1] != ei->ei_seen[1];
    return ((r & POLL_READSIDE) && rd) || ((r & POLL_WRITESIDE) && wr) ||
           ((r & (POLLHUP | POLLERR)) && (rd || wr));
}

/* What item ei reports now (0: nothing), and the vnode's events in gen. */
static uint32_t item_ready(struct epitem *ei, uint32_t gen[2])
{
    if (ei->ei_fired)
        return 0;
    struct vnode *vp = ei->ei_file->f_vp;
    gen[0] = __atomic_load_n(&vp->v_pollgen[0], __ATOMIC_SEQ_CST);
    gen[1] = __atomic_load_n(&vp->v_pollgen[1], __ATOMIC_SEQ_CST);
    uint32_t r = (uint16_t)vn_poll(vp, (short)(ei->ei_events & 0xffff), ei->ei_file->f_flags);
    r &= ei->ei_events | POLLERR | POLLHUP;
    if (!r)
        return 0;
    bool fresh = item_fresh(ei, r, gen);
    if ((ei->ei_events & EPOLLET) && !fresh)
        return 0;
    if ((ei->ei_events & EPOLLEXCLUSIVE) && fresh) {
        uint32_t c = __atomic_load_n(&vp->v_pollclaim, __ATOMIC_ACQUIRE);
        if (c == gen[0] || !__atomic_compare_exchange_n(&vp->v_pollclaim, &c, gen[0], false,
                                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return 0;               /* another waiter took this event */
    }
    return r;
}

/* ---- the dirty and ready lists ---- */

/* ei's vnode announced a change: look at ei on the next wait. */
static void mark_dirty(struct epitem *ei)
{
    struct eventpoll *ep = ei->ei_ep;
    spin_lock(&ep->ep_dlock);
    if (!ei->ei_dirty) {
        ei->ei_dirty = true;
        ei->ei_dnext = ep->ep_dirty;
        ep->ep_dirty = ei;
    }
    spin_unlock(&ep->ep_dlock);
}

void epoll_notify(struct vnode *vp)
{
    spinlock_t *l = epw_of(vp);
    spin_lock(l);
    for (struct epitem *ei = vp->v_epwatch; ei; ei = ei->ei_vnext)
        mark_dirty(ei);
    spin_unlock(l);
}

static void ready_append(struct eventpoll *ep, struct epitem *ei)
{
    if (ei->ei_ready)
        return;
    struct epitem **pp = &ep->ep_ready;
    while (*pp)
        pp = &(*pp)->ei_rnext;
    ei->ei_rnext = NULL;
    *pp = ei;
    ei->ei_ready = true;
}

/* The dirty items (ep_lock held) join the end of the ready list.  The
 * list is walked under ep_dlock: once an item's ei_dirty is clear, a
 * vnode's change on another CPU may put it on the dirty list again and
 * overwrite its ei_dnext, and a walk after the unlock would follow it
 * into the new list and lose the rest of the old one (a lost wakeup:
 * data waiting on a socket that epoll_wait never reports). */
static void take_dirty(struct eventpoll *ep)
{
    struct epitem *chain = NULL, **tail = &chain;
    spin_lock(&ep->ep_dlock);
    for (struct epitem *ei = ep->ep_dirty; ei; ei = ei->ei_dnext) {
        ei->ei_dirty = false;
        if (ei->ei_ready)
            continue;
        ei->ei_ready = true;        /* ei_rnext and ei_ready: ep_lock, held */
        *tail = ei;
        tail = &ei->ei_rnext;
    }
    *tail = NULL;
    ep->ep_dirty = NULL;
    spin_unlock(&ep->ep_dlock);
    struct epitem **pp = &ep->ep_ready;
    while (*pp)
        pp = &(*pp)->ei_rnext;
    *pp = chain;
}

/* Take ei off every list it is on but the set's own (ep_lock and
 * epoll_lock held). */
static void unlink_item(struct epitem *ei)
{
    struct eventpoll *ep = ei->ei_ep;
    struct vnode *vp = ei->ei_file->f_vp;
    spinlock_t *l = epw_of(vp);
    spin_lock(l);
    for (struct epitem **pp = &vp->v_epwatch; *pp; pp = &(*pp)->ei_vnext)
        if (*pp == ei) {
            *pp = ei->ei_vnext;
            break;
        }
    spin_lock(&ep->ep_dlock);
    if (ei->ei_dirty)
        for (struct epitem **pp = &ep->ep_dirty; *pp; pp = &(*pp)->ei_dnext)
            if (*pp == ei) {
                *pp = ei->ei_dnext;
                break;
            }
    spin_unlock(&ep->ep_dlock);
    spin_unlock(l);
    if (ei->ei_ready)
        for (struct epitem **pp = &ep->ep_ready; *pp; pp = &(*pp)->ei_rnext)
            if (*pp == ei) {
                *pp = ei->ei_rnext;
                break;
            }
}

/* Move the ready items up to and including last to the end of the ready
 * list, so a busy descriptor does not starve the rest. */
static void rotate_after(struct eventpoll *ep, struct epitem *last)
{
    if (!last->ei_rnext)
        return;
    struct epitem *head = ep->ep_ready, *tail = last->ei_rnext;
    while (tail->ei_rnext)
        tail = tail->ei_rnext;
    ep->ep_ready = last->ei_rnext;
    tail->ei_rnext = head;
    last->ei_rnext = NULL;
}

struct harvest {
    struct eventpoll *ep;
    struct epoll_event_u *out;
    int max;
};

/* One pass over the ready list (the dirty items first join it): the
 * ready items' events into h->out.  An item found not ready leaves the
 * list (unless it is looked at always), an edge-triggered or one-shot
 * item that reports leaves it too; a level-triggered one that reports
 * stays, to be looked at again. */
static int harvest(void *arg, bool *console)
{
    struct harvest *h = arg;
    struct eventpoll *ep = h->ep;
    int n = 0;
    struct epitem *last = NULL;
    mutex_enter(&ep->ep_lock);
    take_dirty(ep);
    for (struct epitem **pp = &ep->ep_ready; *pp && n < h->max;) {
        struct epitem *ei = *pp;
        if (vn_is_console(ei->ei_file->f_vp))
            *console = true;
        uint32_t gen[2], r = item_ready(ei, gen);
        bool stays = ei->ei_always || (r && !(ei->ei_events & (EPOLLET | EPOLLONESHOT)));
        if (r) {
            ei->ei_seen[0] = gen[0];
            ei->ei_seen[1] = gen[1];
            if (ei->ei_events & EPOLLONESHOT)
                ei->ei_fired = true;
            h->out[n++] = (struct epoll_event_u){ r, ei->ei_data };
        }
        if (!stays) {
            *pp = ei->ei_rnext;
            ei->ei_ready = false;
            continue;
        }
        if (r)
            last = ei;
        pp = &ei->ei_rnext;
    }
    if (n == h->max && last)
        rotate_after(ep, last);
    mutex_exit(&ep->ep_lock);
    return n;
}

/* A set is readable when an item would report (poll on an epoll fd,
 * and a set inside another). */
static short epoll_poll(struct vnode *vp, short events, int fflags)
{
    struct eventpoll *ep = vtoep(vp);
    bool ready = false;
    mutex_enter(&ep->ep_lock);
    for (struct epitem *ei = ep->ep_items; ei && !ready; ei = ei->ei_next) {
        uint32_t gen[2];
        ready = !(ei->ei_events & EPOLLEXCLUSIVE) && item_ready(ei, gen);
    }
    mutex_exit(&ep->ep_lock);
    return ready ? (short)(events & (POLLIN | POLLRDNORM)) : 0;
}

/* ---- the set's file ---- */

static void unlink_file_item(struct epitem *ei)
{
    for (struct epitem **pp = &ei->ei_file->f_ep; *pp; pp = &(*pp)->ei_fnext)
        if (*pp == ei) {
            *pp = ei->ei_fnext;
            return;
        }
}

/* Take ei out of its set and off every list (epoll_lock held); the
 * caller frees it. */
static void remove_item(struct epitem *ei)
{
    struct eventpoll *ep = ei->ei_ep;
    mutex_enter(&ep->ep_lock);
    for (struct epitem **pp = &ep->ep_items; *pp; pp = &(*pp)->ei_next)
        if (*pp == ei) {
            *pp = ei->ei_next;
            __atomic_store_n(&ep->ep_nitems, ep->ep_nitems - 1, __ATOMIC_RELAXED);
            break;
        }
    unlink_item(ei);
    mutex_exit(&ep->ep_lock);
}

/* The set's file closed: its items leave their files' lists. */
static int epoll_close(struct vnode *vp, int flags, struct cred *cr)
{
    struct eventpoll *ep = vtoep(vp);
    mutex_enter(&epoll_lock);
    while (ep->ep_items) {
        struct epitem *ei = ep->ep_items;
        remove_item(ei);
        unlink_file_item(ei);
        kfree(ei);
    }
    mutex_exit(&epoll_lock);
    return 0;
}

void epoll_file_gone(struct file *fp)
{
    mutex_enter(&epoll_lock);
    while (fp->f_ep) {
        struct epitem *ei = fp->f_ep;
        fp->f_ep = ei->ei_fnext;
        remove_item(ei);
        kfree(ei);
    }
    mutex_exit(&epoll_lock);
}

static void epoll_inactive(struct vnode *vp, struct cred *cr)
{
    struct eventpoll *ep = vtoep(vp);
    vn_destroy(vp);
    mutex_destroy(&ep->ep_lock);
    spin_destroy(&ep->ep_dlock);
    kfree(ep);
}

static int epoll_getattr(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    return anon_getattr(vp, va, vtoep(vp)->ep_ino);
}

static void epoll_fdname(struct vnode *vp, char *buf, size_t len)
{
    strlcpy(buf, "anon_inode:[eventpoll]", len);
}


static const struct vnodeops epoll_vnodeops = {
    ANON_VNODEOPS_COMMON,
    .vop_ioctl = anon_ioctl,
    .vop_close = epoll_close,
    .vop_read = (void *)anon_einval,
    .vop_write = (void *)anon_einval,
    .vop_getattr = epoll_getattr,
    .vop_inactive = epoll_inactive,
    .vop_poll = epoll_poll,
    .vop_fdname = epoll_fdname,
};

static int64_t do_epoll_create(int flags)
{
    if (flags & ~EPOLL_CLOEXEC)
        return -EINVAL;
    struct eventpoll *ep = kzalloc(sizeof *ep);
    if (!ep)
        return -ENOMEM;
    ep->ep_ino = anon_ino();
    mutex_init(&ep->ep_lock, &epoll_lock_class, 0, "epoll");
    spin_init(&ep->ep_dlock, &epoll_dirty_class);
    vn_init(&ep->ep_vn, &epoll_vnodeops, VNON, NULL, ep);
    ep->ep_vn.v_flag |= VNOSEEK;
    return anon_install(&ep->ep_vn, O_RDWR, flags & EPOLL_CLOEXEC);
}

SYSCALL_DECL(sys_epoll_create) { return (int)a0 <= 0 ? -EINVAL : do_epoll_create(0); }
SYSCALL_DECL(sys_epoll_create1) { return do_epoll_create((int)a0); }

/* ---- epoll_ctl ---- */

static struct epitem *find_item(struct eventpoll *ep, struct file *fp, int fd)
{
    for (struct epitem *ei = ep->ep_items; ei; ei = ei->ei_next)
        if (ei->ei_file == fp && ei->ei_fd == fd)
            return ei;
    return NULL;
}

/* How deep the sets inside set ep go, or -1 when target ep is among
 * them (epoll_lock held). */
static int depth_below(struct eventpoll *ep, struct eventpoll *target, int depth)
{
    if (ep == target)
        return -1;
    if (depth > EP_MAX_NESTS)
        return depth;
    int deepest = depth;
    mutex_enter(&ep->ep_lock);
    for (struct epitem *ei = ep->ep_items; ei && deepest >= 0; ei = ei->ei_next) {
        if (!is_epoll(ei->ei_file))
            continue;
        int d = depth_below(vtoep(ei->ei_file->f_vp), target, depth + 1);
        deepest = d < 0 ? -1 : MAX(deepest, d);
    }
    mutex_exit(&ep->ep_lock);
    return deepest;
}

/* A new or changed item reports what is ready now once, even
 * edge-triggered, as Linux's ep_insert and ep_modify check at once. */
static void mark_unseen(struct epitem *ei, struct vnode *vp)
{
    ei->ei_seen[0] = __atomic_load_n(&vp->v_pollgen[0], __ATOMIC_SEQ_CST) - 1;
    ei->ei_seen[1] = __atomic_load_n(&vp->v_pollgen[1], __ATOMIC_SEQ_CST) - 1;
}

static int ctl_add(struct eventpoll *ep, struct file *tf, int fd, const struct epoll_event_u *ev)
{
    if (is_epoll(tf)) {
        int d = depth_below(vtoep(tf->f_vp), ep, 1);
        if (d < 0 || d > EP_MAX_NESTS)
            return -ELOOP;
    }
    struct epitem *ei = kzalloc(sizeof *ei);
    if (!ei)
        return -ENOMEM;
    ei->ei_ep = ep;
    ei->ei_file = tf;
    ei->ei_fd = fd;
    ei->ei_events = ev->events | POLLERR | POLLHUP;
    ei->ei_data = ev->data;
    mark_unseen(ei, tf->f_vp);
    struct vnode *vp = tf->f_vp;
    ei->ei_always = !(vp->v_flag & VPOLLNOTIFY);
    mutex_enter(&ep->ep_lock);
    struct epitem **pp = &ep->ep_items;
    while (*pp)
        pp = &(*pp)->ei_next;
    *pp = ei;
    __atomic_store_n(&ep->ep_nitems, ep->ep_nitems + 1, __ATOMIC_RELAXED);
    spinlock_t *l = epw_of(vp);
    spin_lock(l);
    ei->ei_vnext = vp->v_epwatch;
    __atomic_store_n(&vp->v_epwatch, ei, __ATOMIC_RELEASE);
    spin_unlock(l);
    ready_append(ep, ei);           /* looked at on the next wait */
    mutex_exit(&ep->ep_lock);
    ei->ei_fnext = tf->f_ep;
    __atomic_store_n(&tf->f_ep, ei, __ATOMIC_RELEASE);
    poll_notify();              /* a waiter on this set looks again */
    return 0;
}

static int ctl_apply(struct eventpoll *ep, int op, struct file *tf, int fd,
                     const struct epoll_event_u *ev)
{
    mutex_enter(&ep->ep_lock);
    struct epitem *ei = find_item(ep, tf, fd);
    mutex_exit(&ep->ep_lock);
    switch (op) {
    case EPOLL_CTL_ADD:
        return ei ? -EEXIST : ctl_add(ep, tf, fd, ev);
    case EPOLL_CTL_DEL:
        if (!ei)
            return -ENOENT;
        remove_item(ei);
        unlink_file_item(ei);
        kfree(ei);
        return 0;
    case EPOLL_CTL_MOD:
        if (!ei)
            return -ENOENT;
        if (ei->ei_events & EPOLLEXCLUSIVE)
            return -EINVAL;
        mutex_enter(&ep->ep_lock);
        ei->ei_events = ev->events | POLLERR | POLLHUP;
        ei->ei_data = ev->data;
        ei->ei_fired = false;
        mark_unseen(ei, tf->f_vp);
        ready_append(ep, ei);
        mutex_exit(&ep->ep_lock);
        poll_notify();
        return 0;
    default:
        return -EINVAL;
    }
}

/* Linux's order: the event is copied first, then the descriptors, the
 * target's kind, the flags, and last the operation. */
SYSCALL_DECL(sys_epoll_ctl)
{
    int op = (int)a1, fd = (int)a2;
    struct epoll_event_u ev = { 0, 0 };
    bool has_event = op != EPOLL_CTL_DEL;
    if (has_event && copyin((void *)a3, &ev, sizeof ev))
        return -EFAULT;
    struct file *ef = fd_get(curproc(), (int)a0);
    if (!ef)
        return -EBADF;
    struct file *tf = fd_get(curproc(), fd);
    int err = tf ? 0 : -EBADF;
    if (!err && !tf->f_vp->v_op->vop_poll && !vn_is_console(tf->f_vp))
        err = -EPERM;               /* cannot be polled: a regular file, a disk */
    if (!err && (!is_epoll(ef) || ef == tf))
        err = -EINVAL;
    if (!err && has_event && (ev.events & EPOLLEXCLUSIVE) &&
        (op == EPOLL_CTL_MOD ||
         (op == EPOLL_CTL_ADD && (is_epoll(tf) || (ev.events & ~EXCLUSIVE_OK)))))
        err = -EINVAL;
    if (!err) {
        mutex_enter(&epoll_lock);
        err = ctl_apply(vtoep(ef->f_vp), op, tf, fd, &ev);
        mutex_exit(&epoll_lock);
    }
    if (tf)
        file_rele(tf);
    file_rele(ef);
    return err;
}

/* ---- epoll_wait and its kin ---- */

static int64_t do_epoll_wait(int epfd, uint64_t uevents, int max, uint64_t deadline)
{
    if (max <= 0 || (uint64_t)max > INT32_MAX / sizeof(struct epoll_event_u))
        return -EINVAL;
    size_t bytes = (size_t)max * sizeof(struct epoll_event_u);
    if (bytes > USER_TOP || uevents > USER_TOP - bytes)
        return -EFAULT;
    struct file *fp = fd_get(curproc(), epfd);
    if (!fp)
        return -EBADF;
    int64_t r = is_epoll(fp) ? 0 : -EINVAL;
    /* Room for every item, up to what the caller takes: one pass reports
     * each ready item once. */
    int items = r ? 1 : __atomic_load_n(&vtoep(fp->f_vp)->ep_nitems, __ATOMIC_RELAXED);
    struct harvest h = { vtoep(fp->f_vp), NULL, MIN(max, MIN(MAX(items, 1), EP_MAX_BATCH)) };
    if (!r && !(h.out = kmalloc((size_t)h.max * sizeof *h.out)))
        r = -ENOMEM;
    if (!r)
        r = poll_sleep(harvest, &h, deadline);
    if (r > 0 && copyout(h.out, (void *)uevents, (size_t)r * sizeof *h.out))
        r = -EFAULT;
    kfree(h.out);
    file_rele(fp);
    return r;
}

static uint64_t deadline_ms(int ms)
{
    if (ms < 0)
        return FOREVER;
    return ms == 0 ? 0 : uptime_ns() + (uint64_t)ms * 1000000;
}

SYSCALL_DECL(sys_epoll_wait)
{
    return do_epoll_wait((int)a0, a1, (int)a2, deadline_ms((int)a3));
}

SYSCALL_DECL(sys_epoll_pwait)
{
    int err = poll_mask_begin(a4, a5);
    if (err)
        return err;
    int64_t r = do_epoll_wait((int)a0, a1, (int)a2, deadline_ms((int)a3));
    poll_mask_end(a4, r);
    return r;
}

SYSCALL_DECL(sys_epoll_pwait2)
{
    uint64_t deadline = FOREVER;
    if (a3) {
        struct { int64_t sec, nsec; } ts;
        if (copyin((void *)a3, &ts, sizeof ts))
            return -EFAULT;
        if (ts.sec < 0 || ts.nsec < 0 || ts.nsec >= (int64_t)NSEC)
            return -EINVAL;
        uint64_t ns = (uint64_t)ts.sec * NSEC + (uint64_t)ts.nsec;
        deadline = ns ? uptime_ns() + ns : 0;
    }
    int err = poll_mask_begin(a4, a5);
    if (err)
        return err;
    int64_t r = do_epoll_wait((int)a0, a1, (int)a2, deadline);
    poll_mask_end(a4, r);
    return r;
}

void event_init(void)
{
    mutex_init(&epoll_lock, &epoll_set_class, 0, "epollset");
    for (int i = 0; i < EPW_LOCKS; i++)
        spin_init(&epw_locks[i], &epoll_watch_class);
    inotify_init();
}
