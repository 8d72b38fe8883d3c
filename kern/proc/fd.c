/*
 * Open files and descriptor tables.
 *
 * Theory.  A struct file is one open of a vnode: the access mode and
 * flags given to open and the file offset, shared by every descriptor
 * dup'ed from it and by the child after fork (Unix semantics).  It is
 * reference counted; the last reference closes the vnode (vn_close).
 * Each process has a table of NOFILE descriptors, each a file pointer and
 * the FD_CLOEXEC flag.
 *
 * Locks.  p_fdlock (class "fdtable") guards a table's slots; a file's
 * f_lock (class "file") guards its offset and flags, held across the
 * VOP_READ/VOP_WRITE that moves the offset (so concurrent readers of one
 * open file do not read the same bytes).  f_count is atomic.  fd_get takes
 * a reference under p_fdlock and the caller uses the file without it.
 */
#include <kern/proc/proc.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/vm/kmem.h>
#include <kern/lib/errno.h>
#include <kern/event/event.h>
#include <kern/proc/syscalls.h>

LOCK_CLASS(file_lock_class, "file", LK_MUTEX_SLEEP);

struct file *file_alloc(struct vnode *vp, int flags)
{
    struct file *fp = kzalloc(sizeof *fp);
    if (!fp)
        return NULL;
    fp->f_count = 1;
    fp->f_flags = (flags & O_PATH) ? O_PATH
                                   : flags & (O_ACCMODE | O_APPEND | O_NONBLOCK | O_SYNC);
    fp->f_vp = vp;
    mutex_init(&fp->f_lock, &file_lock_class, 0, "file");
    return fp;
}

void file_hold(struct file *fp)
{
    __atomic_add_fetch(&fp->f_count, 1, __ATOMIC_RELAXED);
}

void file_rele(struct file *fp)
{
    if (__atomic_sub_fetch(&fp->f_count, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    struct proc *p = curproc();
    if (__atomic_load_n(&fp->f_ep, __ATOMIC_ACQUIRE))
        epoll_file_gone(fp);    /* out of the epoll sets (kern/event/epoll.c) */
    dnotify_file_gone(fp);      /* its F_NOTIFY registrations (kern/event/inotify.c) */
    reclock_file_gone(fp);      /* its flock and OFD locks (kern/proc/reclock.c) */
    vn_close(fp->f_vp, fp->f_flags, p ? p->p_cred : kcred);
    mutex_destroy(&fp->f_lock);     /* unregisters it from the statistics */
    kfree(fp);
}

uint64_t fd_limit(const struct proc *p)
{
    return MIN((uint64_t)NOFILE, p->p_rlim[RLIMIT_NOFILE][0]);
}

int fd_install(struct proc *p, struct file *fp, int minfd, int fdflags)
{
    int limit = (int)fd_limit(p);
    if (minfd < 0 || minfd >= NOFILE)
        return -EINVAL;
    mutex_enter(&p->p_fdlock);
    for (int fd = minfd; fd < limit; fd++) {
        if (!p->p_fd[fd]) {
            p->p_fd[fd] = fp;
            p->p_fdflags[fd] = fdflags;
            p->p_fdend = MAX(p->p_fdend, fd + 1);
            mutex_exit(&p->p_fdlock);
            return fd;
        }
    }
    mutex_exit(&p->p_fdlock);
    return -EMFILE;
}

struct file *fd_get_raw(struct proc *p, int fd)
{
    if (fd < 0 || fd >= NOFILE)
        return NULL;
    mutex_enter(&p->p_fdlock);
    struct file *fp = p->p_fd[fd];
    if (fp)
        file_hold(fp);
    mutex_exit(&p->p_fdlock);
    return fp;
}

struct file *fd_get(struct proc *p, int fd)
{
    struct file *fp = fd_get_raw(p, fd);
    if (fp && (fp->f_flags & O_PATH)) {     /* names a file, no more: EBADF */
        file_rele(fp);
        return NULL;
    }
    return fp;
}

int fd_close(struct proc *p, int fd)
{
    if (fd < 0 || fd >= NOFILE)
        return -EBADF;
    mutex_enter(&p->p_fdlock);
    struct file *fp = p->p_fd[fd];
    p->p_fd[fd] = NULL;
    p->p_fdflags[fd] = 0;
    mutex_exit(&p->p_fdlock);
    if (!fp)
        return -EBADF;
    reclock_close(p, fp->f_vp); /* the process's record locks on the file */
    file_rele(fp);
    return 0;
}

#define CLOSE_BATCH 64

/* Take the matching descriptors of [first, last] out of the table, up to
 * CLOSE_BATCH a pass under the lock (not a lock round trip per slot: exit
 * and exec pass here every time), then close their files in descriptor
 * order outside it. */
static void close_matching(struct proc *p, bool only_cloexec, int first, int last)
{
    struct file *gone[CLOSE_BATCH];
    int fd = first;
    for (;;) {
        int n = 0;
        mutex_enter(&p->p_fdlock);
        int end = MIN(last + 1, p->p_fdend);
        for (; fd < end && n < CLOSE_BATCH; fd++) {
            struct file *fp = p->p_fd[fd];
            if (fp && (!only_cloexec || (p->p_fdflags[fd] & FD_CLOEXEC))) {
                p->p_fd[fd] = NULL;
                p->p_fdflags[fd] = 0;
                gone[n++] = fp;
            }
        }
        mutex_exit(&p->p_fdlock);
        for (int i = 0; i < n; i++) {
            reclock_close(p, gone[i]->f_vp);
            file_rele(gone[i]);
        }
        if (n < CLOSE_BATCH)
            return;
    }
}

void fd_close_all(struct proc *p)
{
    close_matching(p, false, 0, NOFILE - 1);
}

void fd_close_on_exec(struct proc *p)
{
    close_matching(p, true, 0, NOFILE - 1);
}

#define CLOSE_RANGE_UNSHARE 2
#define CLOSE_RANGE_CLOEXEC 4

/* close_range(first, last, flags): close the descriptors in the range, or
 * with CLOSE_RANGE_CLOEXEC mark them close-on-exec.  CLOSE_RANGE_UNSHARE
 * asks for a private table first, which every process here has. */
SYSCALL_DECL(sys_close_range)
{
    unsigned first = (unsigned)a0, last = (unsigned)a1;
    if (((unsigned)a2 & ~(unsigned)(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC)) || first > last)
        return -EINVAL;
    struct proc *p = curproc();
    if (first >= NOFILE)
        return 0;
    last = MIN(last, (unsigned)NOFILE - 1);
    if (!(a2 & CLOSE_RANGE_CLOEXEC)) {
        close_matching(p, false, (int)first, (int)last);
        return 0;
    }
    mutex_enter(&p->p_fdlock);
    for (unsigned fd = first; fd <= last && fd < (unsigned)p->p_fdend; fd++)
        if (p->p_fd[fd])
            p->p_fdflags[fd] |= FD_CLOEXEC;
    mutex_exit(&p->p_fdlock);
    return 0;
}

void fd_dup_table(struct proc *to, struct proc *from)
{
    mutex_enter(&from->p_fdlock);
    to->p_fdend = from->p_fdend;
    for (int fd = 0; fd < from->p_fdend; fd++) {
        to->p_fd[fd] = from->p_fd[fd];
        to->p_fdflags[fd] = from->p_fdflags[fd];
        if (to->p_fd[fd])
            file_hold(to->p_fd[fd]);
    }
    mutex_exit(&from->p_fdlock);
}
