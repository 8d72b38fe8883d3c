/*
 * File locks: fcntl's record locks (F_GETLK, F_SETLK, F_SETLKW) and flock.
 *
 * Theory.  Both kinds are advisory and kept in one table of lock records,
 * each naming a vnode, an owner, a type (shared or exclusive) and a byte
 * range [l_start, l_end] (l_end UINT64_MAX: to the end of the file, as
 * far as it will ever grow).  The kinds never conflict with each other,
 * as on Linux:
 *   - a record lock belongs to a process: a process's own locks never
 *     conflict with each other, a new one replaces the part of its old ones
 *     it overlaps (splitting them), and all of them on a file go when the
 *     process closes any descriptor of that file (fd.c calls
 *     reclock_close) or exits (which closes them all);
 *   - a flock lock belongs to an open file (struct file) and covers the
 *     whole file: descriptors that share the open file (dup, fork) share
 *     the lock, and it goes when the last of them is closed
 *     (reclock_file_gone, from file_rele).
 *   - an open file description lock (F_OFD_SETLK, F_OFD_SETLKW,
 *     F_OFD_GETLK) is a record lock that belongs to the open file, as a
 *     flock lock does: it conflicts with record locks of every other
 *     owner, the same process's included, and goes with the open file.
 * A waiter (F_SETLKW, flock without LOCK_NB) sleeps on one channel for the
 * whole table and looks again after every change; a signal ends the wait
 * (-ERESTARTSYS: restarted under SA_RESTART, EINTR otherwise).
 *
 * Deadlock detection (F_SETLKW): a process about to wait records whom it
 * waits for.  Before sleeping it follows that chain -- the owner it waits
 * for, the owner that one waits for, and so on -- and if the chain comes
 * back to itself, sleeping would deadlock, and the call fails with
 * EDEADLK instead, as POSIX allows and Linux does.  flock and open file
 * lock waits are not checked (Linux does not either).
 *
 * The table is a list: the workloads here hold a handful of locks at a
 * time.  reclock_count lets close and exit skip the table altogether when
 * no lock exists, so descriptors cost nothing more for programs that never
 * lock.
 *
 * Locks: reclock (a sleep mutex, class "reclock") guards the table, the
 * waiters' chain and the count's changes; it is taken after the file's
 * own locks are let go (never together with f_lock or the vnode's lock,
 * except that VOP_GETATTR for SEEK_END runs before it is taken).
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/vfs/vfs.h>
#include <kern/vm/kmem.h>
#include <kern/lock/sleep.h>
#include <kern/lib/errno.h>

#define F_RDLCK   0
#define F_WRLCK   1
#define F_UNLCK   2
#define SEEK_SET  0
#define SEEK_CUR  1
#define SEEK_END  2
#define LOCK_SH   1
#define LOCK_EX   2
#define LOCK_NB   4
#define LOCK_UN   8
#define TO_EOF    UINT64_MAX
#define OFF_MAX   INT64_MAX

struct lockrec {
    struct lockrec *next;       /* [reclock] */
    struct vnode *vp;           /* [reclock] not held: the owner's open file holds it */
    const void *owner;          /* [reclock] the struct proc or struct file */
    int pid;                    /* [reclock] the owner's pid, for F_GETLK; -1: an open file's */
    bool flock;                 /* [reclock] a flock lock (owner is a file) */
    int type;                   /* [reclock] F_RDLCK or F_WRLCK */
    uint64_t start, end;        /* [reclock] bytes start..end, inclusive */
};

/* A process waiting for a record lock held by blocker. */
struct waiter {
    struct waiter *next;        /* [reclock] */
    const void *owner, *blocker;        /* [reclock] */
};

LOCK_CLASS(reclock_class, "reclock", LK_MUTEX_SLEEP);

static struct mutex reclock;
static struct lockrec *locks;   /* [reclock] */
static struct waiter *waiters;  /* [reclock] */
static int reclock_count;       /* [reclock] written, [a] read: records in the table */
static const char reclock_chan; /* waiters sleep here */

void reclock_init(void)
{
    mutex_init(&reclock, &reclock_class, 0, "reclock");
}

static bool overlap(const struct lockrec *l, uint64_t start, uint64_t end)
{
    return l->start <= end && start <= l->end;
}

/* The first lock of another owner of the same kind that conflicts. */
static struct lockrec *conflict(const struct lockrec *want)
{
    for (struct lockrec *l = locks; l; l = l->next) {
        if (l->vp != want->vp || l->owner == want->owner || l->flock != want->flock)
            continue;
        if (overlap(l, want->start, want->end) &&
            (l->type == F_WRLCK || want->type == F_WRLCK))
            return l;
    }
    return NULL;
}

static struct lockrec *rec_new(const struct lockrec *like, uint64_t start, uint64_t end)
{
    struct lockrec *n = kmalloc(sizeof *n);
    if (!n)
        return NULL;
    *n = *like;
    n->start = start;
    n->end = end;
    n->next = locks;
    locks = n;
    __atomic_add_fetch(&reclock_count, 1, __ATOMIC_RELAXED);
    return n;
}

static void rec_free(struct lockrec **pp)
{
    struct lockrec *l = *pp;
    *pp = l->next;
    kfree(l);
    __atomic_sub_fetch(&reclock_count, 1, __ATOMIC_RELAXED);
}

/* Remove owner's locks of this kind on vp within [start, end], keeping
 * the parts outside (a lock that straddles the range is split).  -ENOMEM
 * when a split finds no memory (nothing removed then). */
static int cut_range(const void *owner, struct vnode *vp, bool flock, uint64_t start,
                     uint64_t end)
{
    for (struct lockrec **pp = &locks; *pp;) {
        struct lockrec *l = *pp;
        if (l->owner != owner || l->vp != vp || l->flock != flock || !overlap(l, start, end)) {
            pp = &l->next;
            continue;
        }
        if (l->start < start && l->end > end) {         /* a hole in the middle */
            if (!rec_new(l, end + 1, l->end))
                return -ENOMEM;
            l->end = start - 1;
            pp = &l->next;
        } else if (l->start < start) {
            l->end = start - 1;
            pp = &l->next;
        } else if (l->end > end) {
            l->start = end + 1;
            pp = &l->next;
        } else {
            rec_free(pp);
        }
    }
    return 0;
}

/* Fold the owner's other locks of the same kind and type that touch or
 * overlap n into n, as Linux does, so F_GETLK reports whole ranges. */
static void coalesce(struct lockrec *n)
{
    for (struct lockrec **pp = &locks; *pp;) {
        struct lockrec *l = *pp;
        bool touches = l->start <= (n->end == TO_EOF ? TO_EOF : n->end + 1) &&
                       n->start <= (l->end == TO_EOF ? TO_EOF : l->end + 1);
        if (l == n || l->owner != n->owner || l->vp != n->vp || l->flock != n->flock ||
            l->type != n->type || !touches) {
            pp = &l->next;
            continue;
        }
        n->start = MIN(n->start, l->start);
        n->end = MAX(n->end, l->end);
        rec_free(pp);
    }
}

/* Would waiting for blocker close a cycle back to owner? */
static bool would_deadlock(const void *owner, const void *blocker)
{
    for (int hops = 0; blocker && hops < 1024; hops++) {
        if (blocker == owner)
            return true;
        const void *next = NULL;
        for (struct waiter *w = waiters; w; w = w->next)
            if (w->owner == blocker)
                next = w->blocker;
        blocker = next;
    }
    return false;
}

static void waiter_remove(struct waiter *me)
{
    for (struct waiter **pp = &waiters; *pp; pp = &(*pp)->next) {
        if (*pp == me) {
            *pp = me->next;
            return;
        }
    }
}

/* Take the lock want describes (F_UNLCK: let go), waiting when wait is
 * set.  0, -EAGAIN (busy, no wait), -EDEADLK, -ERESTARTSYS or -ENOMEM. */
static int set_lock(const struct lockrec *want, bool wait)
{
    mutex_enter(&reclock);
    int err;
    for (;;) {
        struct lockrec *busy = want->type == F_UNLCK ? NULL : conflict(want);
        if (!busy) {
            err = cut_range(want->owner, want->vp, want->flock, want->start, want->end);
            struct lockrec *n = NULL;
            if (!err && want->type != F_UNLCK && !(n = rec_new(want, want->start, want->end)))
                err = -ENOMEM;
            if (n)
                coalesce(n);
            wakeup(&reclock_chan);          /* something may have been freed */
            break;
        }
        if (!wait) {
            err = -EAGAIN;
            break;
        }
        bool checked = !want->flock && want->pid >= 0;      /* a process's record lock */
        if (checked && would_deadlock(want->owner, busy->owner)) {
            err = -EDEADLK;
            break;
        }
        struct waiter me = { waiters, want->owner, checked ? busy->owner : NULL };
        waiters = &me;
        err = sig_sleep(&reclock_chan);     /* lets reclock go while asleep */
        waiter_remove(&me);
        if (err)
            break;
    }
    mutex_exit(&reclock);
    return err;
}

void reclock_close(struct proc *p, struct vnode *vp)
{
    if (!__atomic_load_n(&reclock_count, __ATOMIC_RELAXED))
        return;
    mutex_enter(&reclock);
    (void)cut_range(p, vp, false, 0, TO_EOF);  /* whole locks only: no split needed */
    wakeup(&reclock_chan);
    mutex_exit(&reclock);
}

void reclock_file_gone(struct file *fp)
{
    if (!__atomic_load_n(&reclock_count, __ATOMIC_RELAXED))
        return;
    mutex_enter(&reclock);
    (void)cut_range(fp, fp->f_vp, true, 0, TO_EOF);     /* its flock lock */
    (void)cut_range(fp, fp->f_vp, false, 0, TO_EOF);    /* its open file locks */
    wakeup(&reclock_chan);
    mutex_exit(&reclock);
}

/* ---- flock ---- */

SYSCALL_DECL(sys_flock)
{
    int op = (int)a1;
    struct file *fp = fd_get(curproc(), (int)a0);
    if (!fp)
        return -EBADF;
    int kind = op & ~LOCK_NB;
    int r;
    if (kind != LOCK_SH && kind != LOCK_EX && kind != LOCK_UN) {
        r = -EINVAL;
    } else {
        struct lockrec want = { .vp = fp->f_vp, .owner = fp, .pid = curproc()->p_pid,
                                .flock = true, .start = 0, .end = TO_EOF,
                                .type = kind == LOCK_SH ? F_RDLCK
                                      : kind == LOCK_EX ? F_WRLCK : F_UNLCK };
        r = set_lock(&want, !(op & LOCK_NB));
    }
    file_rele(fp);
    return r;
}

/* ---- fcntl's record locks ---- */

struct flock_u {
    int16_t l_type, l_whence;
    int64_t l_start, l_len;
    int32_t l_pid;
    int32_t pad;
};

/* The byte range a struct flock names, from fp's offset or size when it
 * says so: 0 or -EINVAL (a start before 0, a range past the largest
 * offset). */
static int flock_range(struct file *fp, const struct flock_u *fl, uint64_t *start,
                       uint64_t *end)
{
    int64_t base;
    if (fl->l_whence == SEEK_SET) {
        base = 0;
    } else if (fl->l_whence == SEEK_CUR) {
        mutex_enter(&fp->f_lock);
        base = (int64_t)fp->f_offset;
        mutex_exit(&fp->f_lock);
    } else if (fl->l_whence == SEEK_END) {
        struct vattr va;
        int err = VOP_GETATTR(fp->f_vp, &va, curproc()->p_cred);
        if (err)
            return err;
        base = (int64_t)va.va_size;
    } else {
        return -EINVAL;
    }
    int64_t s;
    if (__builtin_add_overflow(base, fl->l_start, &s) || s < 0)
        return -EINVAL;
    if (fl->l_len > 0) {
        int64_t e;
        if (__builtin_add_overflow(s, fl->l_len - 1, &e))
            return -EOVERFLOW;
        *start = (uint64_t)s;
        *end = (uint64_t)e;
    } else if (fl->l_len < 0) {
        if (s + fl->l_len < 0)
            return -EINVAL;
        *start = (uint64_t)(s + fl->l_len);
        *end = (uint64_t)s - 1;
    } else {
        *start = (uint64_t)s;
        *end = TO_EOF;
    }
    return 0;
}

static int get_lock(struct file *fp, const void *owner, struct flock_u *fl, uint64_t start,
                    uint64_t end)
{
    struct lockrec want = { .vp = fp->f_vp, .owner = owner, .flock = false,
                            .type = fl->l_type, .start = start, .end = end };
    mutex_enter(&reclock);
    struct lockrec *busy = conflict(&want);
    if (busy) {
        fl->l_type = (int16_t)busy->type;
        fl->l_whence = SEEK_SET;
        fl->l_start = (int64_t)busy->start;
        fl->l_len = busy->end == TO_EOF ? 0 : (int64_t)(busy->end - busy->start + 1);
        fl->l_pid = busy->pid;
    } else {
        fl->l_type = F_UNLCK;
    }
    mutex_exit(&reclock);
    return 0;
}

#define F_GETLK      5
#define F_SETLKW     7
#define F_OFD_GETLK  36
#define F_OFD_SETLKW 38

int64_t fcntl_lock(struct file *fp, int cmd, uint64_t uarg)
{
    struct flock_u fl;
    if (copyin((void *)uarg, &fl, sizeof fl))
        return -EFAULT;
    bool ofd = cmd >= F_OFD_GETLK;
    bool getlk = cmd == F_GETLK || cmd == F_OFD_GETLK;
    if (fl.l_type != F_RDLCK && fl.l_type != F_WRLCK && fl.l_type != F_UNLCK)
        return -EINVAL;
    if ((getlk && fl.l_type == F_UNLCK) || (ofd && fl.l_pid != 0))
        return -EINVAL;
    uint64_t start, end;
    int err = flock_range(fp, &fl, &start, &end);
    if (err)
        return err;
    const void *owner = ofd ? (const void *)fp : (const void *)curproc();
    if (getlk) {
        get_lock(fp, owner, &fl, start, end);
        return copyout(&fl, (void *)uarg, sizeof fl) ? -EFAULT : 0;
    }
    if ((fl.l_type == F_RDLCK && !file_readable(fp)) ||
        (fl.l_type == F_WRLCK && !file_writable(fp)))
        return -EBADF;
    struct lockrec want = { .vp = fp->f_vp, .owner = owner, .pid = ofd ? -1 : curproc()->p_pid,
                            .flock = false, .type = fl.l_type, .start = start, .end = end };
    return set_lock(&want, cmd == F_SETLKW || cmd == F_OFD_SETLKW);
}
