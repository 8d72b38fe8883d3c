/*
 * Timed sleeps and the real-time interval timer: alarm, setitimer,
 * getitimer, and the timed wait under nanosleep, clock_nanosleep, poll
 * and select.
 *
 * Theory.  A sleeping process waits on a sleep queue like any other
 * sleeper (kern/sched/sleep.c), so it is off every run queue and no CPU
 * time is charged to it; a callout (kern/sched/callout.c) armed for the
 * deadline wakes its channel from the timer interrupt.  sig_sleep_until
 * publishes the channel for signals (l_sleepchan, kern/proc/signal.c), so
 * a signal ends the sleep as it ends any interruptible one.  The CPU's
 * one-shot timer is armed for the callout (kern/arch/smp.c, "the
 * clock"), so a timed sleep ends at its deadline, give or take the
 * interrupt's latency, never before it: not rounded to the 10 ms tick.
 *
 * ITIMER_REAL is a callout in the process (p_itimer): when it fires it
 * posts SIGALRM and, for a periodic timer, arms itself again one interval
 * after the time it was due (never in the past, so a late tick does not
 * make a burst).  alarm is ITIMER_REAL in whole seconds.  The timer is
 * kept across execve, cleared in a forked child, and stopped at exit
 * (itimer_exit) before the process's memory can go.  ITIMER_VIRTUAL and
 * ITIMER_PROF count the process's own CPU time (user, and user plus
 * system: proc_cputime): each keeps the CPU time at which it is due, and
 * the clock tick that interrupts the process in user mode looks at them
 * (itimer_cpu_tick, from user_trap_return) and posts SIGVTALRM or SIGPROF,
 * so they fire within a tick of CPU time after they are due.  Only the
 * process's own thread touches them.
 *
 * Locks: p_itimer_lock (a spin lock, class "itimer") guards the timer's
 * value and interval against the callout, which runs on another CPU's
 * tick; the callout's own list lock is taken inside it (callout_arm,
 * callout_stop) -- never the other way round, since the callout function
 * takes p_itimer_lock with its list lock already let go.
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/sched/callout.h>
#include <kern/lock/sleep.h>
#include <kern/lib/errno.h>
#include <drivers/platform/timer.h>

#define NSEC            1000000000UL
#define USEC            1000000UL
#define ITIMER_REAL     0
#define ITIMER_VIRTUAL  1
#define ITIMER_PROF     2

LOCK_CLASS(itimer_class, "itimer", LK_SPIN);

/* ---- timed sleeps ---- */

static void wake_channel(void *chan)
{
    wakeup(chan);
}

int sig_sleep_until_gen(const void *chan, uint64_t deadline, const uint64_t *gen, uint64_t seen)
{
    struct callout co;
    callout_setup(&co);
    if (deadline != UINT64_MAX)         /* UINT64_MAX: no time limit */
        callout_arm(&co, deadline, wake_channel, (void *)chan);
    /* The callout runs only once the deadline has passed, and takes the
     * sleep queue's lock to wake: checking the time under that lock
     * cannot miss it.  The same holds for the generation's wakers. */
    struct sleepq *sq = sleepq_lock(chan);
    int r = 0;
    if (uptime_ns() >= deadline || (gen && __atomic_load_n(gen, __ATOMIC_ACQUIRE) != seen))
        sleepq_unlock(sq);
    else
        r = sig_sleep_locked(sq, chan);
    callout_stop(&co);
    return r;
}

int sig_sleep_until(const void *chan, uint64_t deadline)
{
    return sig_sleep_until_gen(chan, deadline, NULL, 0);
}

int64_t sleep_for_ns(uint64_t ns, uint64_t *left)
{
    struct proc *p = curproc();
    uint64_t start = uptime_ns(), now;
    uint64_t end = ns > UINT64_MAX - start ? UINT64_MAX : start + ns;
    while ((now = uptime_ns()) < end) {
        if (sig_sleep_interrupted(p)) {
            if (left)
                *left = end - MIN(uptime_ns(), end);
            return -EINTR;
        }
        sig_sleep_until(&end, end);
    }
    if (left)
        *left = 0;
    return 0;
}

/* ---- the interval timers ---- */

struct itimerval_u {
    int64_t interval_sec, interval_usec;
    int64_t value_sec, value_usec;
};

void itimer_init(struct proc *p)
{
    spin_init(&p->p_itimer_lock, &itimer_class);
    callout_setup(&p->p_itimer);
    p->p_itimer_due = 0;
    p->p_itimer_interval = 0;
    for (int i = 0; i < 2; i++)
        p->p_cputimer[i][0] = p->p_cputimer[i][1] = 0;
}

void itimer_exit(struct proc *p)
{
    callout_stop(&p->p_itimer);
    spin_lock(&p->p_itimer_lock);
    p->p_itimer_due = 0;
    spin_unlock(&p->p_itimer_lock);
}

/* The callout of ITIMER_REAL, from the tick: SIGALRM, and again. */
static void itimer_fire(void *arg)
{
    struct proc *p = arg;
    spin_lock(&p->p_itimer_lock);
    uint64_t due = p->p_itimer_due, interval = p->p_itimer_interval;
    if (due && interval) {
        uint64_t next = due + interval, now = uptime_ns();
        p->p_itimer_due = next > now ? next : now + interval;
        callout_arm(&p->p_itimer, p->p_itimer_due, itimer_fire, p);
    } else {
        p->p_itimer_due = 0;
    }
    spin_unlock(&p->p_itimer_lock);
    if (due) {
        struct ksiginfo si = { .si_signo = SIGALRM, .si_code = -2 };  /* SI_TIMER */
        sig_post(p, SIGALRM, &si);
    }
}

/* Set ITIMER_REAL of the calling process (value 0: disarm); the old
 * value and interval, in ns, through the pointers. */
static void real_timer_set(uint64_t value, uint64_t interval, uint64_t *oldv, uint64_t *oldi)
{
    struct proc *p = curproc();
    callout_stop(&p->p_itimer);     /* from here it can neither fire nor be running */
    spin_lock(&p->p_itimer_lock);
    uint64_t now = uptime_ns();
    *oldv = p->p_itimer_due > now ? p->p_itimer_due - now : p->p_itimer_due ? 1 : 0;
    *oldi = p->p_itimer_interval;
    p->p_itimer_due = value ? now + value : 0;
    p->p_itimer_interval = value ? interval : 0;
    if (value)
        callout_arm(&p->p_itimer, p->p_itimer_due, itimer_fire, p);
    spin_unlock(&p->p_itimer_lock);
}

static void real_timer_get(uint64_t *value, uint64_t *interval)
{
    struct proc *p = curproc();
    spin_lock(&p->p_itimer_lock);
    uint64_t now = uptime_ns();
    *value = p->p_itimer_due > now ? p->p_itimer_due - now : p->p_itimer_due ? 1 : 0;
    *interval = p->p_itimer_interval;
    spin_unlock(&p->p_itimer_lock);
}

/* A valid timeval in ns, saturated (Linux's ktime_t saturates too). */
static uint64_t tv_ns(int64_t sec, int64_t usec)
{
    if ((uint64_t)sec >= INT64_MAX / NSEC)
        return INT64_MAX;
    return (uint64_t)sec * NSEC + (uint64_t)usec * 1000;
}

/* Linux rounds a remaining time up to whole microseconds, and reports a
 * timer that is due but not yet handled as 1 us left. */
static void ns_tv(uint64_t ns, int64_t *sec, int64_t *usec)
{
    uint64_t us = (ns + 999) / 1000;
    *sec = (int64_t)(us / USEC);
    *usec = (int64_t)(us % USEC);
}

static bool tv_valid(int64_t sec, int64_t usec)
{
    return sec >= 0 && usec >= 0 && usec < (int64_t)USEC;
}

/* The CPU time an ITIMER_VIRTUAL (user) or ITIMER_PROF (user and
 * system) timer counts, in ns. */
static uint64_t cpu_now(int which)
{
    uint64_t user, sys;
    proc_cputime(&user, &sys);
    return which == ITIMER_VIRTUAL ? user : user + sys;
}

static void timer_get(int which, uint64_t *value, uint64_t *interval)
{
    if (which == ITIMER_REAL) {
        real_timer_get(value, interval);
        return;
    }
    struct proc *p = curproc();
    uint64_t due = p->p_cputimer[which - 1][0], now = cpu_now(which);
    *value = !due ? 0 : due > now ? due - now : 1;
    *interval = p->p_cputimer[which - 1][1];
}

static void timer_set(int which, uint64_t value, uint64_t interval, uint64_t *oldv,
                      uint64_t *oldi)
{
    if (which == ITIMER_REAL) {
        real_timer_set(value, interval, oldv, oldi);
        return;
    }
    timer_get(which, oldv, oldi);
    struct proc *p = curproc();
    p->p_cputimer[which - 1][0] = value ? cpu_now(which) + value : 0;
    p->p_cputimer[which - 1][1] = value ? interval : 0;
}

void itimer_cpu_tick(struct proc *p)
{
    static const int sigs[2] = { SIGVTALRM, SIGPROF };
    if (!p->p_cputimer[0][0] && !p->p_cputimer[1][0])
        return;
    for (int k = 0; k < 2; k++) {
        uint64_t due = p->p_cputimer[k][0], interval = p->p_cputimer[k][1];
        uint64_t now = due ? cpu_now(k + 1) : 0;
        if (!due || now < due)
            continue;
        p->p_cputimer[k][0] = !interval ? 0 : due + interval > now ? due + interval
                                                                    : now + interval;
        struct ksiginfo si = { .si_signo = sigs[k], .si_code = -2 };  /* SI_TIMER */
        sig_post(p, sigs[k], &si);
    }
}

static int itimer_out(uint64_t value, uint64_t interval, uint64_t uaddr)
{
    struct itimerval_u tv;
    ns_tv(interval, &tv.interval_sec, &tv.interval_usec);
    ns_tv(value, &tv.value_sec, &tv.value_usec);
    return copyout(&tv, (void *)uaddr, sizeof tv) ? -EFAULT : 0;
}

SYSCALL_DECL(sys_getitimer)
{
    int which = (int)a0;
    if (which < ITIMER_REAL || which > ITIMER_PROF)
        return -EINVAL;
    uint64_t value, interval;
    timer_get(which, &value, &interval);
    return itimer_out(value, interval, a1);
}

/* Linux's order: the new value copied in and checked (EFAULT, then
 * EINVAL for the clock and the fields), the timer set, the old value
 * copied out. */
SYSCALL_DECL(sys_setitimer)
{
    int which = (int)a0;
    struct itimerval_u tv = { 0, 0, 0, 0 };
    if (a1 && copyin((void *)a1, &tv, sizeof tv))
        return -EFAULT;
    if (which < ITIMER_REAL || which > ITIMER_PROF)
        return -EINVAL;
    if (!tv_valid(tv.value_sec, tv.value_usec) || !tv_valid(tv.interval_sec, tv.interval_usec))
        return -EINVAL;
    uint64_t oldv, oldi;
    timer_set(which, tv_ns(tv.value_sec, tv.value_usec),
              tv_ns(tv.interval_sec, tv.interval_usec), &oldv, &oldi);
    return a2 ? itimer_out(oldv, oldi, a2) : 0;
}

/* alarm: seconds left of the previous alarm, rounded to the nearest
 * second but never 0 for one still pending (Linux). */
SYSCALL_DECL(sys_alarm)
{
    unsigned secs = (unsigned)a0;
    uint64_t oldv, oldi;
    real_timer_set((uint64_t)secs * NSEC, 0, &oldv, &oldi);
    uint64_t us = (oldv + 999) / 1000;
    uint64_t left = (us + USEC / 2) / USEC;
    if (!left && oldv)
        left = 1;
    return (int64_t)left;
}
