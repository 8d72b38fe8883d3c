/*
 * poll: which descriptors are ready.  Readiness is exact for the console
 * (a finished line is waiting, drivers/tty/tty.c) and for pipes (pipe_poll:
 * data, room, or the other end gone: POLLHUP, POLLERR); regular files and
 * other devices are reported ready for what was asked.  Waiting is a yield loop that checks
 * again until something is ready or the timeout passes: there are no timed
 * sleeps in the kernel yet, and poll's users here are interactive shells.
 * A signal with a handler (or a fatal one) ends the wait with -EINTR, as
 * on Linux even under SA_RESTART; a stop and continue does not end it
 * (sig_sleep_interrupted, kern/proc/signal.c).
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/vfs/vfs.h>
#include <kern/sched/thread.h>
#include <drivers/tty/tty.h>
#include <kern/vm/kmem.h>
#include <kern/lib/errno.h>
#include <drivers/platform/timer.h>

#define POLLIN   0x001
#define POLLPRI  0x002
#define POLLOUT  0x004
#define POLLERR  0x008
#define POLLHUP  0x010
#define POLLNVAL 0x020
_Static_assert(POLLIN == PIPE_POLLIN && POLLOUT == PIPE_POLLOUT && POLLERR == PIPE_POLLERR &&
               POLLHUP == PIPE_POLLHUP, "pipe_poll's bits are poll's");

struct pollfd_u {
    int fd;
    short events, revents;
};

static short ready(struct proc *p, const struct pollfd_u *pf)
{
    if (pf->fd < 0)
        return 0;
    struct file *fp = fd_get(p, pf->fd);
    if (!fp)
        return POLLNVAL;
    short r = pf->events & (POLLIN | POLLOUT);
    if (vn_is_console(fp->f_vp) && !tty_readable())
        r &= (short)~POLLIN;
    if (vn_is_pipe(fp->f_vp))       /* POLLHUP and POLLERR whether asked or not */
        r = (short)(pipe_poll(fp->f_vp, file_readable(fp), file_writable(fp)) &
                    (pf->events | POLLHUP | POLLERR));
    file_rele(fp);
    return r;
}

/* One pass over the set; the number of descriptors with events. */
static int scan(struct proc *p, struct pollfd_u *fds, uint64_t n)
{
    int count = 0;
    for (uint64_t i = 0; i < n; i++) {
        fds[i].revents = ready(p, &fds[i]);
        count += fds[i].revents != 0;
    }
    return count;
}

SYSCALL_DECL(sys_poll)
{
    struct proc *p = curproc();
    uint64_t n = a1;
    int timeout_ms = (int)a2;
    if (n > fd_limit(p))
        return -EINVAL;
    struct pollfd_u *fds = kmalloc(n ? n * sizeof *fds : 1);
    if (!fds)
        return -ENOMEM;
    int64_t r = copyin((void *)a0, fds, n * sizeof *fds);
    uint64_t deadline = uptime_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000;
    while (r == 0) {
        int count = scan(p, fds, n);
        if (count || timeout_ms == 0 || (timeout_ms > 0 && uptime_ns() >= deadline)) {
            r = copyout(fds, (void *)a0, n * sizeof *fds);
            r = r ? r : count;
            break;
        }
        if (sig_sleep_interrupted(p)) {
            r = -EINTR;
            break;
        }
        thread_yield();
    }
    kfree(fds);
    return r;
}
