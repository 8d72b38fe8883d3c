/*
 * Out of memory: which process dies.
 *
 * A fault that finds no page even after the page daemons have given back
 * every file page they could (kern/vm/fault.c, kern/vm/pcache_reclaim.c)
 * used to kill the process that faulted.  With one process holding most
 * of memory that was whoever touched a new page next: init, a shell, a
 * server, one after another, while the process that held the memory
 * lived on (net/frames's pressure phase showed it).  As Linux's OOM killer
 * does, the victim is now the process holding the most memory (its
 * resident pages), init only when nothing else is left; the faulting
 * process, unless it is that one, tries its fault again once the
 * victim's pages come back.  A victim already killed and not yet gone is
 * waited for rather than joined by a second one, and a victim that
 * faults before its kill is delivered dies then, taking nobody with it.
 *
 * Locks: proc_lock while choosing and signalling.  Each address space's
 * a_rss is read without its lock: a choice, not an account.  Reading
 * another process's p_as under proc_lock is safe: exec and exit free the
 * old address space only after release_as has passed through proc_lock
 * (kern/proc/proc.c), so the one read here cannot be freed meanwhile.
 */
#include <kern/proc/proc.h>
#include <kern/proc/proc_impl.h>
#include <kern/vm/as.h>
#include <kern/lock/mutex.h>
#include <kern/lib/kprintf.h>
#include <drivers/platform/timer.h>

#define OOM_WAIT_NS      (5ULL * 1000 * 1000 * 1000)   /* the most a fault waits for a victim */
#define OOM_WAIT_STEP_NS (20ULL * 1000 * 1000)

/* Whether p is on its way out: killed, or a zombie. */
static bool leaving(const struct proc *p)
{
    return p->p_state == PS_ZOMBIE || __atomic_load_n(&p->p_killsig, __ATOMIC_RELAXED);
}

static uint64_t resident(const struct proc *p)
{
    const struct as *as = p->p_as_borrowed ? NULL : p->p_as;
    return as ? __atomic_load_n(&as->a_rss, __ATOMIC_RELAXED) : 0;
}

/* The process to kill (proc_lock held): the largest, init only when no
 * other holds anything; NULL, with *waiting set, when one is leaving. */
static struct proc *choose(const struct proc *me, bool *waiting)
{
    struct proc *best = NULL, *init = NULL;
    uint64_t most = 0;
    *waiting = false;
    for (struct proc *p = allproc; p; p = p->p_next) {
        if (p != me && p->p_state != PS_ZOMBIE && leaving(p) && resident(p))
            *waiting = true;
        if (leaving(p) || !resident(p))
            continue;
        if (p->p_pid == 1) {
            init = p;
            continue;
        }
        if (resident(p) > most) {
            most = resident(p);
            best = p;
        }
    }
    if (*waiting)
        return NULL;
    return best ? best : init;
}

/* Whether a process other than me was killed and still holds pages. */
static bool someone_leaving(const struct proc *me)
{
    bool found = false;
    mutex_enter(&proc_lock);
    for (struct proc *p = allproc; p && !found; p = p->p_next)
        found = p != me && p->p_state != PS_ZOMBIE && leaving(p) && resident(p);
    mutex_exit(&proc_lock);
    return found;
}

/* Let the killed go (at most OOM_WAIT_NS): its pages are what the caller
 * waits for, and its exit may take a while to run. */
static void wait_for_leavers(const struct proc *me)
{
    uint64_t give_up = uptime_ns() + OOM_WAIT_NS;
    while (someone_leaving(me) && uptime_ns() < give_up) {
        uint64_t end = uptime_ns() + OOM_WAIT_STEP_NS;
        sig_sleep_until(&end, end);
    }
}

bool oom_kill_other(void)
{
    struct proc *me = curproc();
    bool waiting;
    if (me && leaving(me))
        return false;               /* killed already (a victim still running): it goes */
    mutex_enter(&proc_lock);
    struct proc *victim = choose(me, &waiting);
    if (victim && victim != me) {
        struct ksiginfo si = { .si_signo = SIGKILL, .si_code = SI_KERNEL };
        kprintf("proc: pid %d (%s) killed by signal %d: out of memory (the largest, %lu "
                "pages; pid %d faulted)\n", victim->p_pid, victim->p_comm, SIGKILL,
                (unsigned long)resident(victim), me ? me->p_pid : 0);
        sig_post(victim, SIGKILL, &si);
    }
    mutex_exit(&proc_lock);
    bool retry = waiting || (victim && victim != me);
    if (retry)
        wait_for_leavers(me);
    return retry;
}
