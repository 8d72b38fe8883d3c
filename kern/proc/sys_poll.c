/*
 * poll, ppoll, select, pselect6: which descriptors are ready, waiting
 * until one is, the time runs out, or a signal comes.
 *
 * Theory.  Readiness is the vnode's own answer (vn_poll, its vop_poll):
 * exact for pipes and sockets (data, room, or the other end gone: POLLHUP,
 * POLLERR); regular files and most devices are ready for what was asked;
 * the console is ready to read when a finished line is waiting
 * (drivers/tty/tty.c).  select's three sets are poll's events under
 * other names (read: POLLIN with POLLHUP and POLLERR; write: POLLOUT with
 * POLLERR; except: POLLPRI), so both families share one scan and one wait.
 *
 * The wait is a timed sleep (sig_sleep_until_gen, kern/proc/sys_timer.c):
 * no CPU is used or charged while nothing is ready.  Pipes call
 * poll_notify at every change; it bumps a generation and wakes the
 * pollers' channel, but only when someone polls (pollers), so pipes cost
 * nothing more when nobody does; sockets do the same.  A poller counts itself in pollers, reads
 * the generation, scans, and sleeps only if the generation is still the
 * one it read -- checked under the channel's sleep-queue lock, which the
 * notifier's wakeup takes, so no change is lost.  The console, a layer
 * below, calls poll_notify through its readable hook (struct tty_hooks)
 * when input becomes readable; as a safety net for a change it does not
 * announce (a switch of terminal mode), a set that holds the console also
 * looks again every 100 ms.
 *
 * A signal with a handler (or a fatal one) ends the wait with -EINTR, as
 * on Linux even under SA_RESTART; a stop and continue does not end it
 * (sig_sleep_interrupted, kern/proc/signal.c).  ppoll and pselect6 wait
 * under the caller's temporary signal mask, which comes back when the
 * call returns, or after the handler when a signal ended it (l_restoremask,
 * as rt_sigsuspend).  select, pselect6 and ppoll write the time left back
 * to their timeout, as Linux's system calls do.
 *
 * Locks: none of its own; pollers and poll_gen are atomic.
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/vfs/vfs.h>
#include <kern/sched/thread.h>
#include <drivers/tty/tty.h>
#include <kern/vm/kmem.h>
#include <kern/lib/errno.h>
#include <kern/lib/string.h>
#include <drivers/platform/timer.h>
#include <kern/event/event.h>

#define SEL_IN   (POLLIN | POLLHUP | POLLERR)
#define SEL_OUT  (POLLOUT | POLLERR)
#define SEL_EX   POLLPRI
#define NSEC     1000000000UL
#define CONSOLE_RESCAN_NS 100000000UL  /* the console's safety-net re-scan */
#define FOREVER  UINT64_MAX
#define UNBLOCKABLE (SIGBIT(SIGKILL) | SIGBIT(SIGSTOP))

struct pollfd_u {
    int fd;
    short events, revents;
};

struct timespec_u { int64_t sec, nsec; };
struct timeval_u { int64_t sec, usec; };

static int pollers;             /* [a] threads inside a poll wait */
static uint64_t poll_gen;       /* [a] pipe changes seen while someone polled */
static const char poll_chan;    /* the pollers' wait channel */

void poll_notify(void)
{
    /* Orders the caller's change of the pipe before the look at pollers
     * (a poller counts itself before it scans). */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&pollers, __ATOMIC_RELAXED))
        return;
    __atomic_add_fetch(&poll_gen, 1, __ATOMIC_SEQ_CST);
    wakeup(&poll_chan);
}

void vn_poll_notify(struct vnode *vp, short events)
{
    bool hup = events & (POLLHUP | POLLERR);
    if (hup || (events & POLL_READSIDE))
        __atomic_add_fetch(&vp->v_pollgen[0], 1, __ATOMIC_SEQ_CST);
    if (hup || (events & POLL_WRITESIDE))
        __atomic_add_fetch(&vp->v_pollgen[1], 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&vp->v_epwatch, __ATOMIC_ACQUIRE))
        epoll_notify(vp);       /* before the pollers wake: they find it dirty */
    poll_notify();
}

static short ready(struct proc *p, const struct pollfd_u *pf, bool *console)
{
    if (pf->fd < 0)
        return 0;
    struct file *fp = fd_get(p, pf->fd);
    if (!fp)
        return POLLNVAL;
    short r = vn_poll(fp->f_vp, pf->events, fp->f_flags);
    if (vn_is_console(fp->f_vp)) {
        *console = true;
        if (!tty_readable(&console_tty))
            r &= (short)~(POLLIN | POLLRDNORM);
    }
    file_rele(fp);
    return r;
}

/* One pass over the set; the number of descriptors with events. */
static int scan(struct proc *p, struct pollfd_u *fds, uint64_t n, bool *console)
{
    int count = 0;
    for (uint64_t i = 0; i < n; i++) {
        fds[i].revents = ready(p, &fds[i], console);
        count += fds[i].revents != 0;
    }
    return count;
}

int poll_sleep(int (*scan)(void *arg, bool *console), void *arg, uint64_t deadline)
{
    struct proc *p = curproc();
    int r;
    __atomic_add_fetch(&pollers, 1, __ATOMIC_SEQ_CST);
    for (;;) {
        uint64_t gen = __atomic_load_n(&poll_gen, __ATOMIC_SEQ_CST);
        bool console = false;
        r = scan(arg, &console);
        uint64_t now = uptime_ns();
        if (r || deadline == 0 || now >= deadline)
            break;
        if (sig_sleep_interrupted(p)) {
            r = -EINTR;
            break;
        }
        uint64_t until = console ? MIN(deadline, now + CONSOLE_RESCAN_NS) : deadline;
        sig_sleep_until_gen(&poll_chan, until, &poll_gen, gen);
    }
    __atomic_sub_fetch(&pollers, 1, __ATOMIC_SEQ_CST);
    return r;
}

struct pollset {
    struct pollfd_u *fds;
    uint64_t n;
};

static int scan_set(void *arg, bool *console)
{
    struct pollset *ps = arg;
    return scan(curproc(), ps->fds, ps->n, console);
}

/* Scan until something is ready, uptime_ns() passes deadline (0: do not
 * wait, FOREVER: no limit) or a signal comes: the count, or -EINTR. */
static int poll_wait(struct pollfd_u *fds, uint64_t n, uint64_t deadline)
{
    struct pollset ps = { fds, n };
    return poll_sleep(scan_set, &ps, deadline);
}

/* A relative timeout in ns as a deadline (FOREVER stays). */
static uint64_t deadline_after(uint64_t ns)
{
    if (ns == FOREVER)
        return FOREVER;
    uint64_t now = uptime_ns();
    return ns > FOREVER - now ? FOREVER : now + ns;
}

static uint64_t time_left(uint64_t deadline)
{
    uint64_t now = uptime_ns();
    return deadline > now ? deadline - now : 0;
}

/* The temporary signal mask of ppoll and pselect6 (usig 0: none). */
int poll_mask_begin(uint64_t usig, uint64_t size)
{
    if (!usig)
        return 0;
    if (size != 8)
        return -EINVAL;
    uint64_t set;
    if (copyin((void *)usig, &set, sizeof set))
        return -EFAULT;
    struct lwp *l = curlwp();
    l->l_sigsaved = l->l_sigmask;
    l->l_restoremask = true;
    __atomic_store_n(&l->l_sigmask, set & ~UNBLOCKABLE, __ATOMIC_RELAXED);
    return 0;
}

/* After the wait: the old mask back now, unless a signal is to be taken
 * (sig_deliver restores it after the handler is set up). */
void poll_mask_end(uint64_t usig, int64_t r)
{
    struct lwp *l = curlwp();
    if (!usig || !l->l_restoremask || (r == -EINTR && sig_interrupting(curproc())))
        return;
    l->l_restoremask = false;
    __atomic_store_n(&l->l_sigmask, l->l_sigsaved, __ATOMIC_RELAXED);
}

/* ---- poll and ppoll ---- */

/* A poll of this many descriptors or fewer keeps its table on the kernel
 * stack: a server's poll must not fail with ENOMEM when memory runs
 * short (Linux keeps 256 bytes there too). */
#define POLL_ON_STACK 32

static int64_t do_poll(uint64_t ufds, uint64_t n, uint64_t deadline)
{
    struct proc *p = curproc();
    if (n > fd_limit(p))
        return -EINVAL;
    struct pollfd_u small[POLL_ON_STACK];
    struct pollfd_u *fds = n <= POLL_ON_STACK ? small : kmalloc(n * sizeof *fds);
    if (!fds)
        return -ENOMEM;
    int64_t r = copyin((void *)ufds, fds, n * sizeof *fds);
    if (r == 0) {
        r = poll_wait(fds, n, deadline);
        if (r >= 0 && copyout(fds, (void *)ufds, n * sizeof *fds))
            r = -EFAULT;
    }
    if (fds != small)
        kfree(fds);
    return r;
}

SYSCALL_DECL(sys_poll)
{
    int timeout_ms = (int)a2;
    uint64_t deadline = timeout_ms < 0 ? FOREVER
                      : timeout_ms == 0 ? 0 : deadline_after((uint64_t)timeout_ms * 1000000);
    return do_poll(a0, a1, deadline);
}

/* A user timespec as a deadline: 0 and *deadline, or -EFAULT, -EINVAL. */
static int timespec_deadline(uint64_t uts, uint64_t *deadline)
{
    struct timespec_u ts;
    if (!uts) {
        *deadline = FOREVER;
        return 0;
    }
    if (copyin((void *)uts, &ts, sizeof ts))
        return -EFAULT;
    if (ts.sec < 0 || ts.nsec < 0 || ts.nsec >= (int64_t)NSEC)
        return -EINVAL;
    uint64_t ns = (uint64_t)ts.sec > FOREVER / NSEC ? FOREVER
                : (uint64_t)ts.sec * NSEC + (uint64_t)ts.nsec;
    *deadline = ns ? deadline_after(ns) : 0;
    return 0;
}

/* The time left back to a user timespec (Linux's raw calls do this; a
 * bad pointer there no longer fails the call). */
static void timespec_left(uint64_t uts, uint64_t deadline)
{
    if (!uts || deadline == FOREVER)
        return;
    uint64_t left = deadline ? time_left(deadline) : 0;
    struct timespec_u ts = { (int64_t)(left / NSEC), (int64_t)(left % NSEC) };
    (void)copyout(&ts, (void *)uts, sizeof ts);
}

SYSCALL_DECL(sys_ppoll)
{
    uint64_t deadline;
    int err = timespec_deadline(a2, &deadline);
    if (err)
        return err;
    if ((err = poll_mask_begin(a3, a4)))
        return err;
    int64_t r = do_poll(a0, a1, deadline);
    poll_mask_end(a3, r);
    timespec_left(a2, deadline);
    return r;
}

/* ---- select and pselect6 ---- */

#define FDSET_WORDS ((NOFILE + 63) / 64)

struct fdsets {
    uint64_t in[FDSET_WORDS], out[FDSET_WORDS], ex[FDSET_WORDS];
};

static bool bit(const uint64_t *set, int fd) { return set[fd / 64] >> (fd % 64) & 1; }

/* Copy in the first nfds bits of a user set (0: an empty set). */
static int set_in(uint64_t uset, int nfds, uint64_t *set)
{
    memset(set, 0, FDSET_WORDS * sizeof *set);
    if (!uset || nfds == 0)
        return 0;
    size_t bytes = ((size_t)nfds + 7) / 8;
    if (copyin((void *)uset, set, bytes))
        return -EFAULT;
    if (nfds % 8)
        ((uint8_t *)set)[bytes - 1] &= (uint8_t)((1u << (nfds % 8)) - 1);
    return 0;
}

static int set_out(uint64_t uset, int nfds, const uint64_t *set)
{
    if (!uset || nfds == 0)
        return 0;
    return copyout(set, (void *)uset, ((size_t)nfds + 7) / 8) ? -EFAULT : 0;
}

/* Linux's select: descriptors past the table are not looked at (nfds is
 * cut to the table's size), but a bit for a closed descriptor below it is
 * EBADF. */
static int64_t do_select(int nfds, uint64_t uin, uint64_t uout, uint64_t uex, uint64_t deadline)
{
    if (nfds < 0)
        return -EINVAL;
    struct proc *p = curproc();
    int limit = (int)MIN((uint64_t)nfds, (uint64_t)NOFILE);
    struct fdsets *s = kzalloc(sizeof *s);
    struct pollfd_u *fds = kmalloc(NOFILE * sizeof *fds);
    int64_t r = !s || !fds ? -ENOMEM : 0;
    int n = 0;
    if (!r && !(r = set_in(uin, limit, s->in)) && !(r = set_in(uout, limit, s->out)))
        r = set_in(uex, limit, s->ex);
    for (int fd = 0; !r && fd < limit; fd++) {
        short ev = (short)((bit(s->in, fd) ? POLLIN : 0) | (bit(s->out, fd) ? POLLOUT : 0) |
                           (bit(s->ex, fd) ? POLLPRI : 0));
        if (!ev)
            continue;
        struct file *fp = fd_get(p, fd);
        if (!fp) {
            r = -EBADF;
            break;
        }
        file_rele(fp);
        fds[n++] = (struct pollfd_u){ .fd = fd, .events = ev };
    }
    if (!r)
        r = poll_wait(fds, (uint64_t)n, deadline);
    if (r >= 0) {
        memset(s, 0, sizeof *s);
        int count = 0;
        for (int i = 0; i < n; i++) {
            int fd = fds[i].fd;
            short ev = fds[i].events, got = fds[i].revents;
            uint64_t b = 1UL << (fd % 64);
            if ((ev & POLLIN) && (got & SEL_IN) && ++count)
                s->in[fd / 64] |= b;
            if ((ev & POLLOUT) && (got & SEL_OUT) && ++count)
                s->out[fd / 64] |= b;
            if ((ev & POLLPRI) && (got & SEL_EX) && ++count)
                s->ex[fd / 64] |= b;
        }
        int err = set_out(uin, limit, s->in);
        err = err ? err : set_out(uout, limit, s->out);
        err = err ? err : set_out(uex, limit, s->ex);
        r = err ? err : count;
    }
    kfree(s);
    kfree(fds);
    return r;
}

/* select's timeval as a deadline, as Linux reads it: whole seconds are
 * carried out of the microseconds first, and then a negative part is
 * -EINVAL. */
static int timeval_deadline(const struct timeval_u *tv, uint64_t *deadline)
{
    int64_t sec, usec = tv->usec % 1000000;
    if (__builtin_add_overflow(tv->sec, tv->usec / 1000000, &sec) || sec < 0 || usec < 0)
        return -EINVAL;
    uint64_t ns = (uint64_t)sec >= FOREVER / NSEC ? FOREVER
                : (uint64_t)sec * NSEC + (uint64_t)usec * 1000;
    *deadline = ns ? deadline_after(ns) : 0;
    return 0;
}

SYSCALL_DECL(sys_select)
{
    uint64_t deadline = FOREVER;
    struct timeval_u tv;
    if (a4) {
        if (copyin((void *)a4, &tv, sizeof tv))
            return -EFAULT;
        int err = timeval_deadline(&tv, &deadline);
        if (err)
            return err;
    }
    int64_t r = do_select((int)a0, a1, a2, a3, deadline);
    if (a4 && deadline != FOREVER) {
        uint64_t left = deadline ? time_left(deadline) : 0;
        tv.sec = (int64_t)(left / NSEC);
        tv.usec = (int64_t)(left % NSEC / 1000);
        (void)copyout(&tv, (void *)a4, sizeof tv);
    }
    return r;
}

/* pselect6's sixth argument: the mask's address and size. */
struct sigset_arg { uint64_t set, size; };

SYSCALL_DECL(sys_pselect6)
{
    uint64_t deadline;
    int err = timespec_deadline(a4, &deadline);
    if (err)
        return err;
    struct sigset_arg sa = { 0, 0 };
    if (a5 && copyin((void *)a5, &sa, sizeof sa))
        return -EFAULT;
    if ((err = poll_mask_begin(sa.set, sa.size)))
        return err;
    int64_t r = do_select((int)a0, a1, a2, a3, deadline);
    poll_mask_end(sa.set, r);
    timespec_left(a4, deadline);
    return r;
}
