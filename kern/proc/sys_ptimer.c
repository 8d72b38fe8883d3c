/*
 * POSIX timers: timer_create, timer_settime, timer_gettime,
 * timer_getoverrun, timer_delete.
 *
 * Theory.  A process has up to NPTIMERS timers (p_ptimers, by id).  Each
 * is a callout (kern/sched/callout.c) armed for its next expiry on the
 * uptime clock; CLOCK_REALTIME's absolute times are turned into uptime
 * when set (a later settimeofday does not move them).  When it fires,
 * from the clock tick, it sends its signal as the sigevent asked:
 * SIGEV_SIGNAL to the process, SIGEV_THREAD_ID to one thread (the
 * process when that thread is gone), SIGEV_NONE nothing -- with si_code
 * SI_TIMER, the timer's id, the sigevent's value and the overrun count,
 * as Linux.  While its signal is still pending it is not sent again: the
 * expiry counts as an overrun (sig_post_unless_pending); when the signal
 * is taken (ptimer_taken, from the signal code) it carries the count,
 * which timer_getoverrun returns from then on, and counting starts
 * again, as Linux's posixtimer_rearm does at dequeue.  A
 * periodic timer that the tick reached late counts the periods it
 * missed as overruns too.  SIGEV_THREAD is the C library's, which asks
 * the kernel for SIGEV_THREAD_ID.  The CPU-time clocks have no timers
 * here (EINVAL); their clock_gettime works.  exit and exec delete every
 * timer (ptimer_exit); a forked child has none.
 *
 * Locks.  ptimer_lock (class "ptimer", one sleep mutex for every
 * process: the calls are rare) serializes the calls that change a table
 * (create, settime, delete), so a timer another thread deletes is not
 * freed under one being set; exit and exec empty the table under
 * p_itimer_lock alone and take ptimer_lock only to free what they found,
 * so a process that never made a timer exits without the global lock.  p_itimer_lock (the interval timers'
 * spin lock, shared with the callouts that run in the tick) guards the
 * table's slots and every timer's expiry, interval and counts; the
 * callout's list lock is taken inside it (callout_arm), as in
 * kern/proc/sys_timer.c.  callout_stop, which waits for a callout
 * running on another CPU, is called with ptimer_lock held but never
 * p_itimer_lock (the callout takes that one).
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/vfs/cred.h>
#include <kern/vm/kmem.h>
#include <kern/sched/callout.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <drivers/platform/timer.h>
#include <kern/proc/itimerspec.h>

#define NSEC            1000000000UL
#define CLOCK_REALTIME  0
#define CLOCK_MONOTONIC 1
#define CLOCK_BOOTTIME  7
#define CLOCK_REALTIME_ALARM 8
#define CLOCK_BOOTTIME_ALARM 9
#define SIGEV_SIGNAL    0
#define SIGEV_NONE      1
#define SIGEV_THREAD_ID 4
#define TIMER_ABSTIME   1
#define SI_TIMER        (-2)

LOCK_CLASS(ptimer_lock_class, "ptimer", LK_MUTEX_SLEEP);
static struct mutex ptimer_lock;

void ptimer_init(void)
{
    mutex_init(&ptimer_lock, &ptimer_lock_class, 0, "ptimer");
}

struct ptimer {
    struct callout pt_co;
    struct proc *pt_proc;       /* [c] */
    int pt_id;                  /* [c] */
    int pt_clock;               /* [c] */
    int pt_notify;              /* [c] SIGEV_SIGNAL, SIGEV_NONE, SIGEV_THREAD_ID */
    int pt_signo;               /* [c] */
    int pt_tid;                 /* [c] SIGEV_THREAD_ID's thread */
    uint64_t pt_value;          /* [c] the sigevent's value */
    uint64_t pt_due;            /* [i] the next expiry (uptime ns), 0: disarmed */
    uint64_t pt_interval;       /* [i] ns, 0: one shot */
    int pt_overrun;             /* [i] expirations not signalled since its signal was sent */
    int pt_overrun_last;        /* [i] what the last signal taken carried (timer_getoverrun) */
};

struct sigevent_u {
    uint64_t value;
    int32_t signo, notify;
    int32_t tid;
    int32_t pad[11];
};

/* The callout, from the tick: the signal (or an overrun), and again. */
static void ptimer_fire(void *arg)
{
    struct ptimer *pt = arg;
    struct proc *p = pt->pt_proc;
    spin_lock(&p->p_itimer_lock);
    uint64_t due = pt->pt_due, now = uptime_ns();
    int missed = 0;
    if (due && pt->pt_interval) {
        uint64_t periods = (now - due) / pt->pt_interval;
        missed = (int)MIN(periods, (uint64_t)INT32_MAX);
        pt->pt_due = due + (periods + 1) * pt->pt_interval;
        callout_arm(&pt->pt_co, pt->pt_due, ptimer_fire, pt);
    } else {
        pt->pt_due = 0;
    }
    pt->pt_overrun = (int)MIN((int64_t)pt->pt_overrun + missed, (int64_t)INT32_MAX);
    struct ksiginfo si = { .si_signo = pt->pt_signo, .si_code = SI_TIMER, .si_pid = pt->pt_id,
                           .si_value = pt->pt_value, .si_ptimer = pt->pt_id + 1 };
    spin_unlock(&p->p_itimer_lock);
    if (!due || pt->pt_notify == SIGEV_NONE)
        return;
    int tid = pt->pt_notify == SIGEV_THREAD_ID ? pt->pt_tid : 0;
    if (sig_post_unless_pending(p, tid, pt->pt_signo, &si))
        return;
    spin_lock(&p->p_itimer_lock);
    if (pt->pt_overrun < INT32_MAX)
        pt->pt_overrun++;           /* its last signal is still pending */
    spin_unlock(&p->p_itimer_lock);
}

void ptimer_taken(struct proc *p, struct ksiginfo *si)
{
    spin_lock(&p->p_itimer_lock);
    struct ptimer *pt = si->si_ptimer <= NPTIMERS ? p->p_ptimers[si->si_ptimer - 1] : NULL;
    if (pt && pt->pt_id == si->si_pid) {
        si->si_uid = pt->pt_overrun;
        pt->pt_overrun_last = pt->pt_overrun;
        pt->pt_overrun = 0;
    }
    spin_unlock(&p->p_itimer_lock);
}

/* ---- the table ---- */

static struct ptimer *lookup_locked(struct proc *p, int id)
{
    return id >= 0 && id < NPTIMERS ? p->p_ptimers[id] : NULL;
}

static void free_timer(struct ptimer *pt)
{
    callout_stop(&pt->pt_co);
    kfree(pt);
}

void ptimer_exit(struct proc *p)
{
    /* One pass under the spin lock empties the table; only a process
     * that had timers pays for ptimer_lock, which waits out a settime
     * still using one of them before it is freed. */
    struct ptimer *gone[NPTIMERS];
    int n = 0;
    spin_lock(&p->p_itimer_lock);
    for (int id = 0; id < NPTIMERS; id++) {
        if (p->p_ptimers[id])
            gone[n++] = p->p_ptimers[id];
        p->p_ptimers[id] = NULL;
    }
    spin_unlock(&p->p_itimer_lock);
    if (n == 0)
        return;
    mutex_enter(&ptimer_lock);
    while (n > 0)
        free_timer(gone[--n]);
    mutex_exit(&ptimer_lock);
}

/* Linux's good_sigevent: the notification asked for, checked. */
static int sigevent_in(uint64_t usev, int id, struct ptimer *pt)
{
    struct sigevent_u ev = { .value = (uint64_t)id, .signo = SIGALRM, .notify = SIGEV_SIGNAL };
    if (usev && copyin((void *)usev, &ev, sizeof ev))
        return -EFAULT;
    if (ev.notify != SIGEV_SIGNAL && ev.notify != SIGEV_NONE && ev.notify != SIGEV_THREAD_ID)
        return -EINVAL;
    if (ev.notify != SIGEV_NONE && (ev.signo <= 0 || ev.signo > NSIG))
        return -EINVAL;
    if (ev.notify == SIGEV_THREAD_ID) {
        bool mine = false;
        struct proc *p = curproc();
        spin_lock(&p->p_siglock);
        for (struct lwp *l = p->p_lwps; l && !mine; l = l->l_next)
            mine = l->l_tid == ev.tid;
        spin_unlock(&p->p_siglock);
        if (!mine)
            return -EINVAL;
    }
    pt->pt_notify = ev.notify;
    pt->pt_signo = ev.signo;
    pt->pt_tid = ev.tid;
    pt->pt_value = ev.value;
    return 0;
}

SYSCALL_DECL(sys_timer_create)
{
    int clock = (int)a0;
    if (clock == CLOCK_REALTIME_ALARM || clock == CLOCK_BOOTTIME_ALARM)
        return curproc()->p_cred->cr_uid == 0 ? -EINVAL : -EPERM;
    if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC && clock != CLOCK_BOOTTIME)
        return -EINVAL;
    struct proc *p = curproc();
    struct ptimer *pt = kzalloc(sizeof *pt);
    if (!pt)
        return -ENOMEM;
    pt->pt_proc = p;
    pt->pt_clock = clock;
    callout_setup(&pt->pt_co);
    mutex_enter(&ptimer_lock);
    spin_lock(&p->p_itimer_lock);
    int id = 0;
    while (id < NPTIMERS && p->p_ptimers[id])
        id++;
    if (id < NPTIMERS)
        p->p_ptimers[id] = pt;      /* reserved; not armed, so nothing fires */
    spin_unlock(&p->p_itimer_lock);
    if (id == NPTIMERS) {
        mutex_exit(&ptimer_lock);
        kfree(pt);
        return -EAGAIN;
    }
    pt->pt_id = id;
    int err = sigevent_in(a1, id, pt);
    if (!err && copyout(&id, (void *)a2, sizeof id))
        err = -EFAULT;
    if (err) {
        spin_lock(&p->p_itimer_lock);
        p->p_ptimers[id] = NULL;
        spin_unlock(&p->p_itimer_lock);
        kfree(pt);
    }
    mutex_exit(&ptimer_lock);
    return err;
}

SYSCALL_DECL(sys_timer_delete)
{
    struct proc *p = curproc();
    mutex_enter(&ptimer_lock);
    spin_lock(&p->p_itimer_lock);
    struct ptimer *pt = lookup_locked(p, (int)a0);
    if (pt)
        p->p_ptimers[(int)a0] = NULL;
    spin_unlock(&p->p_itimer_lock);
    if (pt)
        free_timer(pt);
    mutex_exit(&ptimer_lock);
    return pt ? 0 : -EINVAL;
}

/* ---- setting and reading ---- */

SYSCALL_DECL(sys_timer_settime)
{
    int id = (int)a0, flags = (int)a1;
    struct itimerspec_u nv, old;
    if (copyin((void *)a2, &nv, sizeof nv))
        return -EFAULT;
    if (!ts_valid(nv.interval_sec, nv.interval_nsec) || !ts_valid(nv.value_sec, nv.value_nsec))
        return -EINVAL;
    struct proc *p = curproc();
    uint64_t value = ts_ns(nv.value_sec, nv.value_nsec);
    mutex_enter(&ptimer_lock);
    spin_lock(&p->p_itimer_lock);
    struct ptimer *pt = lookup_locked(p, id);
    spin_unlock(&p->p_itimer_lock);
    if (!pt) {
        mutex_exit(&ptimer_lock);
        return -EINVAL;
    }
    callout_stop(&pt->pt_co);       /* from here it neither fires nor runs */
    spin_lock(&p->p_itimer_lock);
    old = itimerspec_left(pt->pt_due, pt->pt_interval);
    pt->pt_due = value ? itimerspec_due(pt->pt_clock, value, flags & TIMER_ABSTIME) : 0;
    pt->pt_interval = value ? ts_ns(nv.interval_sec, nv.interval_nsec) : 0;
    pt->pt_overrun = 0;
    if (pt->pt_due)
        callout_arm(&pt->pt_co, pt->pt_due, ptimer_fire, pt);
    spin_unlock(&p->p_itimer_lock);
    mutex_exit(&ptimer_lock);
    return a3 && copyout(&old, (void *)a3, sizeof old) ? -EFAULT : 0;
}

SYSCALL_DECL(sys_timer_gettime)
{
    struct proc *p = curproc();
    spin_lock(&p->p_itimer_lock);
    struct ptimer *pt = lookup_locked(p, (int)a0);
    struct itimerspec_u cur = pt ? itimerspec_left(pt->pt_due, pt->pt_interval)
                                 : (struct itimerspec_u){ 0, 0, 0, 0 };
    spin_unlock(&p->p_itimer_lock);
    if (!pt)
        return -EINVAL;
    return copyout(&cur, (void *)a1, sizeof cur) ? -EFAULT : 0;
}

SYSCALL_DECL(sys_timer_getoverrun)
{
    struct proc *p = curproc();
    spin_lock(&p->p_itimer_lock);
    struct ptimer *pt = lookup_locked(p, (int)a0);
    int n = pt ? pt->pt_overrun_last : -EINVAL;
    spin_unlock(&p->p_itimer_lock);
    return n;
}
