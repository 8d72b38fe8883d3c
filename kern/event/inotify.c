/*
 * inotify: file events read from a file (inotify_init1,
 * inotify_add_watch, inotify_rm_watch).
 *
 * Theory.  An inotify instance is an event object (anon_inode:[inotify])
 * with a queue of events and a set of watches, each a vnode (held) with
 * the events asked for and a watch descriptor.  The VFS reports what
 * happens to a watched vnode through the hook given at boot
 * (vfs_set_notify_hook, kern/vfs/vnops.c): creation, deletion and
 * renames in a directory (with the entry's name, and one cookie for a
 * rename's two halves), and a file's own opens, closes, reads, writes,
 * attribute changes, moves and deletion; the hook queues an event for
 * each watch whose mask has it.  A read takes whole events (struct
 * inotify_event, the name padded with NULs to a multiple of 16 bytes,
 * as Linux); a buffer too small for the next one is EINVAL.  An event
 * equal to the one last queued is merged into it, as Linux does; past
 * INOTIFY_MAX_EVENTS queued, one IN_Q_OVERFLOW stands for the rest.  A
 * watch ends at inotify_rm_watch, after IN_ONESHOT's event, or when its
 * file is deleted (IN_DELETE_SELF), each time with an IN_IGNORED event.
 * What is not reported: a watched directory hears of its entries'
 * opens, reads and writes only through their own watches (Linux's
 * dentry-based reporting to the parent has no counterpart here), and
 * there is no IN_UNMOUNT.
 *
 * dnotify (fcntl F_NOTIFY on a directory's descriptor) rides the same
 * hook: a registration is a watch with no instance, for one open file
 * and process, whose DN_* events become inotify's; an event sends the
 * process SIGIO (si_code POLL_MSG; F_SETSIG is not offered), once
 * unless DN_MULTISHOT.  A second F_NOTIFY adds to the events, as Linux's;
 * one with no event ends it, and so does the file's last release
 * (dnotify_file_gone).
 *
 * Locks.  inotify_lock (class "inotify", a sleep mutex, global) guards
 * every vnode's v_inwatch list and the watches' lists; in_lock (class
 * "inotifyq", one per instance) guards its queue, and comes after
 * inotify_lock.  The hook runs in the caller's context with no vnode
 * lock held.
 */
#include <kern/event/event.h>
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/vm/as.h>
#include <kern/vm/kmem.h>
#include <kern/lock/sleep.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

#define IN_NONBLOCK         0x800
#define IN_CLOEXEC          0x80000
#define IN_ALL_EVENTS       0xfff
#define IN_UNMOUNT          0x2000
#define IN_Q_OVERFLOW       0x4000
#define IN_IGNORED          0x8000
#define IN_ONLYDIR          0x01000000
#define IN_DONT_FOLLOW      0x02000000
#define IN_EXCL_UNLINK      0x04000000
#define IN_MASK_CREATE      0x10000000
#define IN_MASK_ADD         0x20000000
#define IN_ONESHOT          0x80000000
#define IN_VALID            (IN_ALL_EVENTS | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK | \
                             IN_MASK_CREATE | IN_MASK_ADD | IN_ISDIR | IN_ONESHOT)
#define INOTIFY_MAX_EVENTS  16384       /* Linux's max_queued_events */
#define INOTIFY_MAX_WATCHES 8192
#define EVENT_HDR           16          /* struct inotify_event without its name */

LOCK_CLASS(inotify_lock_class, "inotify", LK_MUTEX_SLEEP);
LOCK_CLASS(inotify_q_class, "inotifyq", LK_MUTEX_SLEEP);
static struct mutex inotify_lock;

struct inevent {
    struct inevent *e_next;     /* [in_lock] */
    int32_t e_wd;
    uint32_t e_mask, e_cookie;
    uint32_t e_len;             /* the name's bytes with its NUL padding, 0: none */
    char e_name[];
};

struct inotify {
    struct vnode in_vn;
    struct mutex in_lock;
    struct inevent *in_q, **in_qtail, *in_last;     /* [in_lock] */
    int in_qn;                  /* [in_lock] events queued */
    size_t in_qbytes;           /* [in_lock] their size as read gives them */
    struct inwatch *in_watches; /* [inotify_lock] */
    int in_nextwd;              /* [inotify_lock] */
    int in_nwatches;            /* [inotify_lock] */
    uint64_t in_ino;            /* [c] */
    int in_chan;                /* readers' channel */
};

struct inwatch {
    struct inwatch *w_vnext;    /* [inotify_lock] its vnode's watches */
    struct inwatch *w_inext;    /* [inotify_lock] its instance's watches */
    struct inotify *w_in;       /* [c] NULL: a dnotify registration (F_NOTIFY) */
    struct vnode *w_vp;         /* [c] held (not by a dnotify one: its file holds it) */
    int w_wd;                   /* [c] */
    uint32_t w_mask;            /* [inotify_lock] */
    /* dnotify: the open file it was made on (not held: the file's last
     * release ends it, dnotify_file_gone) and the process to signal. */
    struct file *w_file;        /* [c] */
    int w_pid;                  /* [c] */
};

static const struct vnodeops inotify_vnodeops;
static struct inotify *vtoin(struct vnode *vp) { return vp->v_data; }

/* ---- the queue ---- */

static bool same_event(const struct inevent *e, int wd, uint32_t mask, uint32_t cookie,
                       const char *name)
{
    return e && e->e_wd == wd && e->e_mask == mask && e->e_cookie == cookie &&
           (name ? e->e_len && strcmp(e->e_name, name) == 0 : e->e_len == 0);
}

/* Queue an event (merged with an equal last one), or the overflow. */
static void queue_event(struct inotify *in, int wd, uint32_t mask, uint32_t cookie,
                        const char *name)
{
    size_t nlen = name ? strlen(name) : 0;
    uint32_t padded = nlen ? (uint32_t)((nlen + 1 + EVENT_HDR - 1) & ~(size_t)(EVENT_HDR - 1)) : 0;
    mutex_enter(&in->in_lock);
    if (same_event(in->in_last, wd, mask, cookie, name)) {
        mutex_exit(&in->in_lock);
        return;
    }
    bool overflow = in->in_qn >= INOTIFY_MAX_EVENTS;
    if (overflow && in->in_last && in->in_last->e_mask == IN_Q_OVERFLOW) {
        mutex_exit(&in->in_lock);
        return;
    }
    if (overflow) {
        wd = -1;
        mask = IN_Q_OVERFLOW;
        cookie = 0;
        padded = 0;
    }
    struct inevent *e = kzalloc(sizeof *e + padded);
    if (e) {
        e->e_wd = wd;
        e->e_mask = mask;
        e->e_cookie = cookie;
        e->e_len = padded;
        if (padded)
            memcpy(e->e_name, name, nlen);
        *in->in_qtail = e;
        in->in_qtail = &e->e_next;
        in->in_last = e;
        in->in_qn++;
        in->in_qbytes += EVENT_HDR + padded;
        wakeup(&in->in_chan);
        vn_poll_notify(&in->in_vn, POLL_READSIDE);
    }
    mutex_exit(&in->in_lock);
}

/* ---- watches ---- */

/* Take w off its vnode's and its instance's lists and free it, with
 * IN_IGNORED queued (inotify_lock held). */
static void watch_end(struct inwatch *w)
{
    struct vnode *vp = w->w_vp;
    for (struct inwatch **pp = &vp->v_inwatch; *pp; pp = &(*pp)->w_vnext)
        if (*pp == w) {
            __atomic_store_n(pp, w->w_vnext, __ATOMIC_RELEASE);
            break;
        }
    for (struct inwatch **pp = &w->w_in->in_watches; *pp; pp = &(*pp)->w_inext)
        if (*pp == w) {
            *pp = w->w_inext;
            break;
        }
    w->w_in->in_nwatches--;
    queue_event(w->w_in, w->w_wd, IN_IGNORED, 0, NULL);
    VN_RELE(vp);
    kfree(w);
}

/* ---- dnotify (fcntl F_NOTIFY): a directory's changes as a signal ---- */

#define DN_ACCESS    0x01
#define DN_MODIFY    0x02
#define DN_CREATE    0x04
#define DN_DELETE    0x08
#define DN_RENAME    0x10
#define DN_ATTRIB    0x20
#define DN_MULTISHOT 0x80000000u
#define SIGIO_SIG    29
#define POLL_MSG     3          /* SIGIO's si_code for a directory's change */

/* The inotify events a dnotify mask stands for. */
static uint32_t dn_events(uint32_t dn)
{
    return ((dn & DN_ACCESS) ? IN_ACCESS : 0) | ((dn & DN_MODIFY) ? IN_MODIFY : 0) |
           ((dn & DN_CREATE) ? IN_CREATE | IN_MOVED_TO : 0) |
           ((dn & DN_DELETE) ? IN_DELETE | IN_MOVED_FROM : 0) |
           ((dn & DN_RENAME) ? IN_MOVED_FROM | IN_MOVED_TO : 0) |
           ((dn & DN_ATTRIB) ? IN_ATTRIB : 0);
}

static int post_sigio(struct proc *p, void *arg)
{
    struct ksiginfo si = { .si_signo = SIGIO_SIG, .si_code = POLL_MSG };
    sig_post(p, SIGIO_SIG, &si);
    return 0;
}

/* Take dnotify watch w off its vnode's list and free it (inotify_lock). */
static void dn_end(struct inwatch *w)
{
    for (struct inwatch **pp = &w->w_vp->v_inwatch; *pp; pp = &(*pp)->w_vnext)
        if (*pp == w) {
            __atomic_store_n(pp, w->w_vnext, __ATOMIC_RELEASE);
            break;
        }
    kfree(w);
}

/* The registration of fp by pid on vp, or NULL (inotify_lock). */
static struct inwatch *dn_find(struct vnode *vp, struct file *fp, int pid)
{
    for (struct inwatch *w = vp->v_inwatch; w; w = w->w_vnext)
        if (!w->w_in && w->w_file == fp && w->w_pid == pid)
            return w;
    return NULL;
}

int dnotify_set(struct file *fp, uint32_t arg)
{
    struct vnode *vp = fp->f_vp;
    if (vp->v_type != VDIR)
        return -ENOTDIR;
    int pid = curproc()->p_pid;
    mutex_enter(&inotify_lock);
    struct inwatch *w = dn_find(vp, fp, pid);
    int err = 0;
    if (!(arg & ~DN_MULTISHOT)) {
        if (w)
            dn_end(w);              /* no events: the registration goes */
    } else if (!w && !(w = kzalloc(sizeof *w))) {
        err = -ENOMEM;
    } else {
        if (!w->w_vp) {
            *w = (struct inwatch){ .w_vp = vp, .w_file = fp, .w_pid = pid,
                                   .w_vnext = vp->v_inwatch, .w_mask = IN_ONESHOT };
            __atomic_store_n(&vp->v_inwatch, w, __ATOMIC_RELEASE);
        }
        /* Linux's rule: a second F_NOTIFY adds its events (and
         * DN_MULTISHOT) to the registration's. */
        w->w_mask |= dn_events(arg);
        if (arg & DN_MULTISHOT)
            w->w_mask &= ~IN_ONESHOT;
    }
    mutex_exit(&inotify_lock);
    return err;
}

void dnotify_file_gone(struct file *fp)
{
    struct vnode *vp = fp->f_vp;
    if (!__atomic_load_n(&vp->v_inwatch, __ATOMIC_ACQUIRE))
        return;
    mutex_enter(&inotify_lock);
    struct inwatch *next;
    for (struct inwatch *w = vp->v_inwatch; w; w = next) {
        next = w->w_vnext;
        if (!w->w_in && w->w_file == fp)
            dn_end(w);
    }
    mutex_exit(&inotify_lock);
}

/* The VFS's hook: an event of vp for every watch that asks for it (an
 * event of a directory itself says IN_ISDIR, as Linux's); a dnotify
 * registration's process gets SIGIO. */
static void inotify_event(struct vnode *vp, uint32_t mask, const char *name, uint32_t cookie)
{
    if (!name && vp->v_type == VDIR)
        mask |= IN_ISDIR;
    mutex_enter(&inotify_lock);
    struct inwatch *next;
    for (struct inwatch *w = vp->v_inwatch; w; w = next) {
        next = w->w_vnext;
        if (!(w->w_mask & mask & IN_ALL_EVENTS))
            continue;
        if (!w->w_in) {
            proc_apply(w->w_pid, post_sigio, NULL);
            if (w->w_mask & IN_ONESHOT)
                dn_end(w);
            continue;
        }
        queue_event(w->w_in, w->w_wd, mask & (IN_ALL_EVENTS | IN_ISDIR), cookie, name);
        if ((w->w_mask & IN_ONESHOT) || (mask & IN_DELETE_SELF))
            watch_end(w);
    }
    /* A deleted file's watches end even when they did not ask for it
     * (a dnotify one goes with its file). */
    for (struct inwatch *w = (mask & IN_DELETE_SELF) ? vp->v_inwatch : NULL; w; w = next) {
        next = w->w_vnext;
        if (w->w_in)
            watch_end(w);
    }
    mutex_exit(&inotify_lock);
}

/* ---- the instance's file ---- */

static int inotify_read(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    struct inotify *in = vtoin(vp);
    mutex_enter(&in->in_lock);
    while (!in->in_q) {
        int err = (ioflag & O_NONBLOCK) ? -EAGAIN : sig_sleep(&in->in_chan);
        if (err) {
            mutex_exit(&in->in_lock);
            return err;
        }
    }
    size_t got = 0;
    while (in->in_q) {
        struct inevent *e = in->in_q;
        size_t n = EVENT_HDR + e->e_len;
        if (n > uio->uio_resid)
            break;
        memcpy(uio->uio_base, &e->e_wd, EVENT_HDR);
        memcpy((char *)uio->uio_base + EVENT_HDR, e->e_name, e->e_len);
        uio->uio_base = (char *)uio->uio_base + n;
        uio->uio_resid -= n;
        got += n;
        in->in_q = e->e_next;
        if (!in->in_q) {
            in->in_qtail = &in->in_q;
            in->in_last = NULL;
        }
        in->in_qn--;
        in->in_qbytes -= n;
        kfree(e);
    }
    mutex_exit(&in->in_lock);
    return got ? 0 : -EINVAL;       /* not even the first event fits */
}

static short inotify_poll(struct vnode *vp, short events, int fflags)
{
    struct inotify *in = vtoin(vp);
    mutex_enter(&in->in_lock);
    bool ready = in->in_q != NULL;
    mutex_exit(&in->in_lock);
    return ready ? (short)(events & (POLLIN | POLLRDNORM)) : 0;
}

static int inotify_ioctl(struct vnode *vp, unsigned long cmd, void *arg, struct cred *cr)
{
    struct inotify *in = vtoin(vp);
    if (cmd != 0x541B)              /* FIONREAD */
        return -ENOTTY;
    mutex_enter(&in->in_lock);
    *(int *)arg = (int)in->in_qbytes;
    mutex_exit(&in->in_lock);
    return 0;
}

static int inotify_close(struct vnode *vp, int flags, struct cred *cr)
{
    struct inotify *in = vtoin(vp);
    mutex_enter(&inotify_lock);
    while (in->in_watches)
        watch_end(in->in_watches);
    mutex_exit(&inotify_lock);
    return 0;
}

static void inotify_inactive(struct vnode *vp, struct cred *cr)
{
    struct inotify *in = vtoin(vp);
    while (in->in_q) {
        struct inevent *e = in->in_q;
        in->in_q = e->e_next;
        kfree(e);
    }
    vn_destroy(vp);
    mutex_destroy(&in->in_lock);
    kfree(in);
}

static int inotify_getattr(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    return anon_getattr(vp, va, vtoin(vp)->in_ino);
}

static void inotify_fdname(struct vnode *vp, char *buf, size_t len)
{
    strlcpy(buf, "anon_inode:inotify", len);
}

static const struct vnodeops inotify_vnodeops = {
    ANON_VNODEOPS_COMMON,
    .vop_ioctl = inotify_ioctl,
    .vop_close = inotify_close,
    .vop_read = inotify_read,
    .vop_write = (void *)anon_einval,
    .vop_getattr = inotify_getattr,
    .vop_inactive = inotify_inactive,
    .vop_poll = inotify_poll,
    .vop_fdname = inotify_fdname,
};

static int64_t do_inotify_init(int flags)
{
    if (flags & ~(IN_NONBLOCK | IN_CLOEXEC))
        return -EINVAL;
    struct inotify *in = kzalloc(sizeof *in);
    if (!in)
        return -ENOMEM;
    in->in_qtail = &in->in_q;
    in->in_nextwd = 1;
    in->in_ino = anon_ino();
    mutex_init(&in->in_lock, &inotify_q_class, 0, "inotifyq");
    vn_init(&in->in_vn, &inotify_vnodeops, VNON, NULL, in);
    in->in_vn.v_flag |= VNOSEEK | VPOLLNOTIFY;
    return anon_install(&in->in_vn, O_RDONLY | (flags & IN_NONBLOCK), flags & IN_CLOEXEC);
}

SYSCALL_DECL(sys_inotify_init) { return do_inotify_init(0); }
SYSCALL_DECL(sys_inotify_init1) { return do_inotify_init((int)a0); }

/* The inotify instance behind fd, its file held: 0, -EBADF or -EINVAL. */
static int inotify_get(int fd, struct file **fpp)
{
    struct file *fp = fd_get(curproc(), fd);
    if (!fp)
        return -EBADF;
    if (fp->f_vp->v_op != &inotify_vnodeops) {
        file_rele(fp);
        return -EINVAL;
    }
    *fpp = fp;
    return 0;
}

/* The file a watch is asked for, held: looked up as the flags say and
 * readable by the caller (Linux's inode_permission MAY_READ). */
static int watch_target(uint64_t upath, uint32_t mask, struct vnode **vpp)
{
    char *path = kmalloc(PATH_MAX);
    if (!path)
        return -ENOMEM;
    long n = copyinstr((const char *)upath, path, PATH_MAX);
    struct proc *p = curproc();
    int err = n < 0 ? (int)n : n == 0 ? -ENOENT : 0;
    if (!err) {
        struct vnode *cwd = proc_cwd_hold(p);
        err = lookupname(path, cwd, !(mask & IN_DONT_FOLLOW), vpp, p->p_cred);
        if (cwd)
            VN_RELE(cwd);
    }
    kfree(path);
    if (err)
        return err;
    if ((mask & IN_ONLYDIR) && (*vpp)->v_type != VDIR)
        err = -ENOTDIR;
    if (!err)
        err = VOP_ACCESS(*vpp, VREAD, p->p_cred);
    if (err)
        VN_RELE(*vpp);
    return err;
}

/* Add or change in's watch on vp (inotify_lock held): its wd. */
static int watch_set(struct inotify *in, struct vnode *vp, uint32_t mask)
{
    struct inwatch *w = vp->v_inwatch;
    while (w && w->w_in != in)
        w = w->w_vnext;
    uint32_t events = mask & (IN_ALL_EVENTS | IN_ONESHOT | IN_EXCL_UNLINK);
    if (w) {
        if (mask & IN_MASK_CREATE)
            return -EEXIST;
        w->w_mask = (mask & IN_MASK_ADD) ? w->w_mask | events : events;
        return w->w_wd;
    }
    if (in->in_nwatches >= INOTIFY_MAX_WATCHES)
        return -ENOSPC;
    if (!(w = kzalloc(sizeof *w)))
        return -ENOMEM;
    VN_HOLD(vp);
    w->w_in = in;
    w->w_vp = vp;
    w->w_wd = in->in_nextwd++;
    w->w_mask = events;
    w->w_inext = in->in_watches;
    in->in_watches = w;
    in->in_nwatches++;
    w->w_vnext = vp->v_inwatch;
    __atomic_store_n(&vp->v_inwatch, w, __ATOMIC_RELEASE);
    return w->w_wd;
}

SYSCALL_DECL(sys_inotify_add_watch)
{
    uint32_t mask = (uint32_t)a2;
    struct file *fp;
    int err = inotify_get((int)a0, &fp);
    if (err)
        return err;
    if (!(mask & IN_ALL_EVENTS) || (mask & ~(uint32_t)IN_VALID) ||
        ((mask & IN_MASK_ADD) && (mask & IN_MASK_CREATE))) {
        file_rele(fp);
        return -EINVAL;
    }
    struct vnode *vp = NULL;
    err = watch_target(a1, mask, &vp);
    if (!err) {
        mutex_enter(&inotify_lock);
        err = watch_set(vtoin(fp->f_vp), vp, mask);
        mutex_exit(&inotify_lock);
        VN_RELE(vp);
    }
    file_rele(fp);
    return err;
}

SYSCALL_DECL(sys_inotify_rm_watch)
{
    struct file *fp;
    int err = inotify_get((int)a0, &fp);
    if (err)
        return err;
    struct inotify *in = vtoin(fp->f_vp);
    mutex_enter(&inotify_lock);
    struct inwatch *w = in->in_watches;
    while (w && w->w_wd != (int)a1)
        w = w->w_inext;
    if (w)
        watch_end(w);
    mutex_exit(&inotify_lock);
    file_rele(fp);
    return w ? 0 : -EINVAL;
}

void inotify_init(void)
{
    mutex_init(&inotify_lock, &inotify_lock_class, 0, "inotify");
    vfs_set_notify_hook(inotify_event);
}
