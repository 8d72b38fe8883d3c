/*
 * poll: which descriptors are ready.  Readiness is exact for the console
 * (a finished line is waiting, kern/tty.c); regular files, pipes and other
 * devices are reported ready for what was asked (a read may then wait:
 * pipes keep no poll state yet).  Waiting is a yield loop that checks
 * again until something is ready or the timeout passes: there are no timed
 * sleeps in the kernel yet, and poll's users here are interactive shells.
 * A signal to be taken ends the wait with -EINTR (as on Linux, whatever
 * SA_RESTART says): a poll that may wait for ever can still be
 * interrupted.
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/vfs/vfs.h>
#include <kern/sched/thread.h>
#include <kern/tty.h>
#include <kern/kmem.h>
#include <kern/errno.h>
#include <drivers/timer.h>

#define POLLIN   0x001
#define POLLPRI  0x002
#define POLLOUT  0x004
#define POLLNVAL 0x020

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
        if (count || timeout_ms == 0 || (timeout_ms > 0 && uptime_ns() >= deadline) ||
            __atomic_load_n(&p->p_killsig, __ATOMIC_ACQUIRE)) {
            r = copyout(fds, (void *)a0, n * sizeof *fds);
            r = r ? r : count;
            break;
        }
        if (sig_interrupting(p)) {
            r = -EINTR;
            break;
        }
        thread_yield();
    }
    kfree(fds);
    return r;
}
