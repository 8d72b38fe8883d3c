/*
 * CPU-time accounting: the times of threads and processes.
 *
 * Accounting.  CPU time is charged to each thread (struct lwp; a thread
 * that exits adds its times to its process's, and the process's times are
 * the sum).  A thread's total CPU time is exact, its split between
 * user and system time sampled, as in 4.4BSD's calcru.  The TSC is read
 * only where a thread is switched in and out (user_switch), at
 * the clock tick that interrupts it (acct_tick), at its exit, and when it
 * asks for its own times: never on a system call's or trap's way in and
 * out, which under an instruction-counting emulator costs more than the
 * null system call itself (issue 18).  Each stretch between two of those
 * reads is charged whole: to user or system time by the tick's own
 * observation (the mode it interrupted: a stretch ending at a tick is a
 * random sample of where the process spends its time), and otherwise
 * (a switch, an exit, a query) split in the proportion of the thread's
 * user and system ticks so far, all system while it has none.  Both
 * counters only grow, so times and getrusage never go back, and their sum
 * is exact to the cycle: a process that runs between ticks is charged all
 * the same, unlike pure tick accounting.  A stretch begins and ends on one
 * CPU (a migration passes through a switch out and a switch in), so the
 * TSCs of different CPUs are never compared.  The exit charges the last
 * stretch before the zombie is visible, so the waiter (possibly on
 * another CPU, before the exiting thread's last switch) sees every cycle
 * the child saw of itself: the earlier tick-sampled try lost the running
 * stretch here and broke the reaped-children checks of t_time.  A reaped
 * child's times, with those of its own reaped children, are added to its
 * parent's children's times.
 *
 * Locks: a thread's stretch and counters are written by the CPU it runs on,
 * with interrupts off (the tick charges too); other readers load them
 * relaxed.  A process's own counters (its exited threads' times) are
 * written under proc_lock and summed under p_siglock (proc_cycles).
 */
#include <kern/proc/proc.h>
#include <kern/proc/proc_impl.h>
#include <kern/sched/thread.h>
#include <kern/arch/arch.h>
#include <kern/arch/trap.h>
#include <kern/arch/cpu.h>
#include <drivers/platform/timer.h>

/* The user share of a stretch of delta cycles, in the proportion of l's
 * user and system ticks (fixed point, 16 bits); none without ticks. */
static uint64_t user_share(const struct lwp *l, uint64_t delta)
{
    uint64_t samples = l->l_uticks + l->l_sticks;
    if (!samples)
        return 0;
    uint64_t frac = (l->l_uticks << 16) / samples;
    return (delta >> 16) * frac + (((delta & 0xffff) * frac) >> 16);
}

static void add_cycles(uint64_t *to, uint64_t n)
{
    __atomic_store_n(to, *to + n, __ATOMIC_RELAXED);
}

/* Charge the stretch since l's stamp and start a new one at now: to user
 * time (mode > 0), system time (mode < 0), or split by the ticks (0).  A
 * zero stamp (the thread was not running) charges nothing.  Called with
 * interrupts off, so the tick cannot charge meanwhile. */
static void acct_charge(struct lwp *l, int mode, uint64_t now)
{
    uint64_t stamp = l->l_acct_stamp;
    if (stamp && now > stamp) {
        uint64_t delta = now - stamp;
        uint64_t user = mode > 0 ? delta : mode < 0 ? 0 : user_share(l, delta);
        add_cycles(&l->l_utime, user);
        add_cycles(&l->l_stime, delta - user);
    }
    l->l_acct_stamp = now;
}

/* The clock tick (a hook of smp_add_tick_hook): charge the stretch to the
 * mode the tick interrupted, and count the sample. */
void acct_tick(const struct trapframe *tf)
{
    struct lwp *l = curthread()->lwp;
    if (!l || !l->l_acct_stamp)
        return;
    bool user = tf->cs & 3;
    if (user)
        l->l_uticks++;
    else
        l->l_sticks++;
    acct_charge(l, user ? 1 : -1, rdtsc());
}

/* Charge the calling thread's running stretch now (its exit, its own
 * times asked for). */
void acct_charge_running(struct lwp *l)
{
    uint64_t flags = intr_save();
    acct_charge(l, 0, rdtsc());
    intr_restore(flags);
}

/* A thread leaves the CPU (the stretch up to now is charged) and the next
 * one starts a stretch. */
void acct_switch(struct thread *prev, struct thread *next)
{
    uint64_t now = rdtsc();
    if (prev && prev->lwp && prev != next) {
        acct_charge(prev->lwp, 0, now);
        prev->lwp->l_acct_stamp = 0;
    }
    if (next && next->lwp)
        next->lwp->l_acct_stamp = now;
}

uint64_t load_cycles(const uint64_t *c)
{
    return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/* p's CPU times in cycles: its exited threads' and its live ones'. */
void proc_cycles(struct proc *p, uint64_t *user, uint64_t *sys)
{
    spin_lock(&p->p_siglock);
    *user = load_cycles(&p->p_utime);
    *sys = load_cycles(&p->p_stime);
    for (struct lwp *l = p->p_lwps; l; l = l->l_next) {
        *user += load_cycles(&l->l_utime);
        *sys += load_cycles(&l->l_stime);
    }
    spin_unlock(&p->p_siglock);
}

/* The calling process's, its running stretch included; or the calling
 * thread's alone (RUSAGE_THREAD, CLOCK_THREAD_CPUTIME_ID). */
void proc_cputime_of(bool thread_only, uint64_t *user_ns, uint64_t *sys_ns)
{
    struct lwp *me = curlwp();
    uint64_t u, s;
    acct_charge_running(me);            /* the running stretch, split as any other */
    if (thread_only) {
        u = me->l_utime;
        s = me->l_stime;
    } else {
        proc_cycles(curproc(), &u, &s);
    }
    *user_ns = tsc_to_ns(u);
    *sys_ns = tsc_to_ns(s);
}

void proc_cputime(uint64_t *user_ns, uint64_t *sys_ns)
{
    proc_cputime_of(false, user_ns, sys_ns);
}

void proc_children_cputime(uint64_t *user_ns, uint64_t *sys_ns)
{
    struct proc *p = curproc();
    *user_ns = tsc_to_ns(p->p_cutime);
    *sys_ns = tsc_to_ns(p->p_cstime);
}
