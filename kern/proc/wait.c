/*
 * Waiting for children: wait4 and waitid (proc_wait), the kernel's wait
 * for a process it spawned (proc_wait_spawned), and vfork's parent
 * (proc_vfork_wait).
 *
 * Theory (from kern/proc/proc.c, which keeps fork, exit and the process
 * list).  Waiting (proc_wait: wait4 and waitid) scans the caller's
 * children that the request names and asks wait_event_of whether each
 * has something to report for the request's options: an exit (WEXITED),
 * or a stop or continue that job control left in p_jobevent; then the
 * caller's tracees, whose ptrace-stops and ends kern/proc/ptrace.c keeps
 * for it (ptrace_wait_locked; a child it traces tells its stops only
 * there).  The
 * parent's wait reaps the zombie: it joins the thread (thread_join waits
 * until it is fully off its CPU, then frees its stack), adds the child's
 * CPU times to its own children's times, and frees the struct proc.  A
 * process the kernel spawned has no parent; proc_wait_spawned reaps it
 * the same way.  The parent of a vfork sleeps in proc_vfork_wait,
 * uninterruptibly, until the child lets the borrowed address space go,
 * at its exec's point of no return or at its exit.
 *
 * Locks.  proc_lock (a sleep mutex, class "proc"; kern/proc/proc_impl.h
 * shares it) guards the parent/child links and the exit state read
 * here; wait sleeps on the parent with sig_sleep under it (a signal
 * interrupts the wait), and an exiting child calls wakeup on its parent
 * under it.
 */
#include <kern/proc/proc.h>
#include <kern/proc/proc_impl.h>
#include <kern/vfs/cred.h>
#include <kern/lock/sleep.h>
#include <kern/lib/errno.h>
#include <drivers/platform/timer.h>

static bool wait_matches(const struct wait_req *req, int pgid, const struct proc *c)
{
    switch (req->idtype) {
    case P_PID:
        return c->p_pid == req->id;
    case P_PGID:
        return c->p_pgid == pgid;
    default:
        return true;
    }
}

/* What a waiter may learn about a child. */
enum wait_event {
    WE_NONE,
    WE_EXITED,          /* a zombie: its exit status */
    WE_STOPPED,         /* a stop not yet reported (p_jobevent) */
    WE_CONTINUED,       /* a continue not yet reported (p_jobevent) */
};

/*
 * Does child c have something to report to a wait with these options?
 * An exit (WEXITED); for a live child, a stop not yet reported (WSTOPPED,
 * wait4's WUNTRACED) or a continue not yet reported (WCONTINUED), which
 * proc_stop_current left in p_jobevent.  Reporting a stop or continue
 * consumes it unless WNOWAIT and leaves the child in place.  Under
 * proc_lock.
 */
static enum wait_event wait_event_of(const struct proc *me, const struct proc *c, int options)
{
    if (c->p_state == PS_ZOMBIE)
        return (options & WEXITED) ? WE_EXITED : WE_NONE;
    if (ptrace_traced_by_locked(c, me))
        return WE_NONE;         /* its stops come as ptrace-stops (ptrace_wait_locked) */
    int ev = c->p_jobevent;
    if (ev == W_CONTINUED)
        return (options & WCONTINUED) ? WE_CONTINUED : WE_NONE;
    if (ev)
        return (options & WSTOPPED) ? WE_STOPPED : WE_NONE;
    return WE_NONE;
}

/* The child's times and its reaped children's, for rusage. */
static void wait_times(const struct proc *c, struct wait_info *info)
{
    info->utime_ns = tsc_to_ns(load_cycles(&c->p_utime) + load_cycles(&c->p_cutime));
    info->stime_ns = tsc_to_ns(load_cycles(&c->p_stime) + load_cycles(&c->p_cstime));
}

/* Fill info for event ev of child c.  Under proc_lock. */
static void wait_report_event(const struct proc *c, enum wait_event ev, struct wait_info *info)
{
    info->pid = c->p_pid;
    info->uid = (int)c->p_cred->cr_ruid;
    if (ev == WE_EXITED) {
        info->status = c->p_status;
        info->code = cld_code(c->p_status);
        info->si_status = cld_status(c->p_status);
    } else {
        info->status = c->p_jobevent;           /* W_STOPPED(sig) or W_CONTINUED */
        info->code = ev == WE_STOPPED ? CLD_STOPPED : CLD_CONTINUED;
        info->si_status = ev == WE_STOPPED ? (c->p_jobevent >> 8) & 0xff : SIGCONT;
    }
    wait_times(c, info);
}

/* Reap the zombie child c of me: unlink it, wait for its thread to be
 * gone, take its final times into info and into me's children's times,
 * and free it.  Called with proc_lock held; returns with it released,
 * having taken it no more (a reap once took it four times). */
static void reap_child(struct proc *me, struct proc *c, struct wait_info *info)
{
    proc_unlink_locked(c);
    proc_wait_unheld_locked(c);         /* then the rest needs no proc_lock */
    mutex_exit(&proc_lock);
    proc_join(c);
    wait_times(c, info);
    me->p_cutime += c->p_utime + c->p_cutime;
    me->p_cstime += c->p_stime + c->p_cstime;
    proc_free_unheld(c);
}

int proc_wait(const struct wait_req *req, struct wait_info *info)
{
    struct proc *me = curproc();
    mutex_enter(&proc_lock);
    /* P_PGID 0: the caller's group at the time of the call. */
    int pgid = req->idtype == P_PGID && req->id == 0 ? me->p_pgid : req->id;
    for (;;) {
        bool any = false;
        for (struct proc *c = me->p_children; c; c = c->p_sibling) {
            if (!wait_matches(req, pgid, c))
                continue;
            if (c->p_state == PS_ZOMBIE && !(req->options & WEXITED))
                continue;       /* as Linux: no child at all to such a wait */
            any = true;
            enum wait_event ev = wait_event_of(me, c, req->options);
            if (ev == WE_NONE)
                continue;
            wait_report_event(c, ev, info);
            if (ev == WE_EXITED && !(req->options & WNOWAIT))
                reap_child(me, c, info);
            else {
                if (ev != WE_EXITED && !(req->options & WNOWAIT))
                    c->p_jobevent = 0;          /* a stop or continue is told once */
                mutex_exit(&proc_lock);
            }
            return info->pid;
        }
        int traced = ptrace_wait_locked(me, req, pgid, info, &any);
        if (traced) {
            mutex_exit(&proc_lock);
            return traced;
        }
        if (!any) {
            mutex_exit(&proc_lock);
            return -ECHILD;
        }
        if (req->options & WNOHANG) {
            mutex_exit(&proc_lock);
            return 0;
        }
        int err = sig_sleep(me);
        if (err) {
            mutex_exit(&proc_lock);
            return err;
        }
    }
}

int proc_wait_spawned(struct proc *p)
{
    mutex_enter(&proc_lock);
    while (p->p_state != PS_ZOMBIE)
        sleep_on(p);
    proc_unlink_locked(p);
    mutex_exit(&proc_lock);
    int status = p->p_status;
    proc_free(p);
    return status;
}

/* vfork's parent: sleep (uninterruptibly: see the theory) until the child
 * has execed or exited.  The child is looked up again after each sleep:
 * once it has let go it may be reaped and freed (SIGCHLD ignored). */
void proc_vfork_wait(int pid)
{
    struct proc *me = curproc();
    mutex_enter(&proc_lock);
    for (;;) {
        struct proc *c = me->p_children;
        while (c && c->p_pid != pid)
            c = c->p_sibling;
        if (!c || c->p_vfork_parent != me)
            break;
        sleep_on(&c->p_vfork_parent);
    }
    mutex_exit(&proc_lock);
}
