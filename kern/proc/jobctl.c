/*
 * Process groups, sessions and job control: setpgid, setsid, orphaned
 * groups, and the stop and continue of a process for its parent's wait.
 * The rest of the process code is in kern/proc/proc.c.
 *
 * Job control.  A process stopped by a signal (kern/proc/signal.c) calls
 * proc_stop_current, which records the stop in p_jobevent for the
 * parent's wait4 (WUNTRACED) and sends it SIGCHLD (CLD_STOPPED), and, once
 * continued, records that (WCONTINUED, CLD_CONTINUED); wait_event_of is
 * the waits' look at it.  A process group is orphaned when no member has a
 * parent in another group of the same session: nobody is left to continue
 * it, so a terminal stop signal (SIGTSTP, SIGTTIN, SIGTTOU) does not stop
 * it, and an exit that leaves a group orphaned with a stopped member sends
 * the group SIGHUP and SIGCONT (orphan_check), as POSIX says.
 *
 * The controlling terminal.  The terminal driver (drivers/tty/tty.c, whose
 * theory states the rules) keeps only its state: which session controls
 * it and which group is in the foreground.  The rules that need a
 * process, its session, group, credentials and signals are here (ctty_*),
 * and the driver calls the ones it needs through the hooks jobctl_init
 * registers (struct tty_hooks), so that it names no process.  The
 * terminal's state is atomic words; these functions take no lock of their
 * own beyond what proc_signal_pgrp and proc_pgrp_orphaned take.
 *
 * Locks: everything here is under proc_lock (kern/proc/proc.c's theory),
 * and p_stopped under p_siglock as signal.c sets it.
 */
#include <kern/proc/proc.h>
#include <kern/proc/proc_impl.h>
#include <kern/lock/mutex.h>
#include <kern/lock/spinlock.h>
#include <kern/lock/sleep.h>
#include <kern/lib/errno.h>
#include <kern/vfs/cred.h>
#include <drivers/tty/tty.h>

/* ---- process groups and sessions ---- */

struct proc *find_proc_locked(int pid)
{
    for (struct proc *p = allproc; p; p = p->p_next)
        if (p->p_pid == pid)
            return p;
    return NULL;
}

int proc_ids(int pid, int *pgid, int *sid)
{
    int err = -ESRCH;
    mutex_enter(&proc_lock);
    struct proc *p = find_proc_locked(pid);
    if (p) {
        *pgid = p->p_pgid;
        *sid = p->p_sid;
        err = 0;
    }
    mutex_exit(&proc_lock);
    return err;
}

/* No lock: the parent's pid is kept beside p_parent (set_ppid_locked,
 * kern/proc/proc.c), as Linux reads it under RCU alone. */
int proc_getppid(void)
{
    return __atomic_load_n(&curproc()->p_ppid, __ATOMIC_RELAXED);
}

static bool group_in_session(int pgid, int sid)
{
    for (struct proc *p = allproc; p; p = p->p_next)
        if (p->p_pgid == pgid && p->p_sid == sid)
            return true;
    return false;
}

/* setpgid, as Linux: the caller may move itself or a child of its session
 * that has not execed, not a session leader, into a new group named by
 * the process's pid or an existing group of the caller's session. */
static int setpgid_locked(struct proc *me, int pid, int pgid)
{
    struct proc *p = find_proc_locked(pid);
    if (!p || (p != me && p->p_parent != me))
        return -ESRCH;
    if (p != me && p->p_sid != me->p_sid)
        return -EPERM;
    if (p != me && p->p_execed)
        return -EACCES;
    if (p->p_sid == p->p_pid)
        return -EPERM;
    if (pgid == 0)
        pgid = p->p_pid;
    if (pgid != p->p_pid && !group_in_session(pgid, me->p_sid))
        return -EPERM;
    p->p_pgid = pgid;
    return 0;
}

int proc_setpgid(int pid, int pgid)
{
    struct proc *me = curproc();
    if (pgid < 0)
        return -EINVAL;
    mutex_enter(&proc_lock);
    int err = setpgid_locked(me, pid ? pid : me->p_pid, pgid);
    mutex_exit(&proc_lock);
    return err;
}

/* setsid: a new session and group named by the caller's pid, unless a
 * group of that id exists already (the caller leads one). */
int proc_setsid(void)
{
    struct proc *me = curproc();
    mutex_enter(&proc_lock);
    int err = me->p_pid;
    for (struct proc *p = allproc; p; p = p->p_next)
        if (p->p_pgid == me->p_pid)
            err = -EPERM;
    if (err > 0)
        me->p_sid = me->p_pgid = me->p_pid;
    mutex_exit(&proc_lock);
    return err;
}

/* ---- job control ---- */

/* Is group pgid orphaned (see the theory)?  Members other than skip (an
 * exiting process) count.  Under proc_lock. */
static bool pgrp_orphaned_locked(int pgid, const struct proc *skip)
{
    for (struct proc *m = allproc; m; m = m->p_next) {
        if (m->p_pgid != pgid || m == skip || m->p_state == PS_ZOMBIE)
            continue;
        struct proc *q = m->p_parent;
        if (q && q != skip && q->p_pgid != pgid && q->p_sid == m->p_sid)
            return false;
    }
    return true;
}

bool proc_pgrp_orphaned(int pgid)
{
    mutex_enter(&proc_lock);
    bool orphaned = pgrp_orphaned_locked(pgid, NULL);
    mutex_exit(&proc_lock);
    return orphaned;
}

/* Does group pgid have a stopped member?  Under proc_lock. */
static bool pgrp_has_stopped_locked(int pgid)
{
    for (struct proc *m = allproc; m; m = m->p_next)
        if (m->p_pgid == pgid && m->p_state != PS_ZOMBIE &&
            __atomic_load_n(&m->p_stopped, __ATOMIC_ACQUIRE))
            return true;
    return false;
}

/* SIGHUP and SIGCONT to every member of group pgid if the exit of p
 * leaves it orphaned with a stopped member.  Under proc_lock.  (SIGCONT
 * clears p_stopped at once, so a second look finds nothing to do.) */
static void hangup_if_orphaned_locked(int pgid, struct proc *p)
{
    if (!pgrp_orphaned_locked(pgid, p) || !pgrp_has_stopped_locked(pgid))
        return;
    struct ksiginfo si = { .si_code = SI_KERNEL };
    for (struct proc *m = allproc; m; m = m->p_next)
        if (m->p_pgid == pgid && m != p && m->p_state != PS_ZOMBIE) {
            si.si_signo = SIGHUP;
            sig_post(m, SIGHUP, &si);
            si.si_signo = SIGCONT;
            sig_post(m, SIGCONT, &si);
        }
}

/* The exit of p may orphan its own group and its children's groups: a
 * group was not orphaned because of p if p (the child's parent) is in
 * another group of the same session.  Under proc_lock, before p's
 * children are given away. */
void orphan_check_locked(struct proc *p)
{
    struct proc *q = p->p_parent;
    if (q && q->p_pgid != p->p_pgid && q->p_sid == p->p_sid)
        hangup_if_orphaned_locked(p->p_pgid, p);
    for (struct proc *c = p->p_children; c; c = c->p_sibling)
        if (c->p_pgid != p->p_pgid && c->p_sid == p->p_sid)
            hangup_if_orphaned_locked(c->p_pgid, p);
}

/* A stop or continue of p for its parent: wake a wait4 there, and send
 * SIGCHLD with code CLD_STOPPED or CLD_CONTINUED unless the parent set
 * SA_NOCLDSTOP.  Under proc_lock. */
static void tell_parent_job(struct proc *p, int code, int sig)
{
    struct proc *parent = p->p_parent;
    if (!parent)
        return;
    if (!(parent->p_sigact[SIGCHLD - 1].flags & SA_NOCLDSTOP)) {
        struct ksiginfo si = {
            .si_signo = SIGCHLD, .si_code = code, .si_pid = p->p_pid,
            .si_uid = (int)p->p_cred->cr_ruid, .si_status = sig,
        };
        sig_post(parent, SIGCHLD, &si);
    }
    wakeup(parent);
}

void proc_stop_current(int sig)
{
    struct proc *p = curproc();
    mutex_enter(&proc_lock);
    if (sig != SIGSTOP && pgrp_orphaned_locked(p->p_pgid, NULL)) {
        mutex_exit(&proc_lock);
        /* The stop is discarded; a SIGCONT may have cleared it already. */
        spin_lock(&p->p_siglock);
        __atomic_store_n(&p->p_stopped, 0, __ATOMIC_RELEASE);
        spin_unlock(&p->p_siglock);
        return;
    }
    p->p_jobevent = W_STOPPED(sig);
    tell_parent_job(p, CLD_STOPPED, sig);
    mutex_exit(&proc_lock);
    if (lwp_traced(curlwp())) {
        ptrace_group_stop(sig);         /* the tracer decides when it runs again */
        return;
    }
    if (!sig_wait_continue(p))
        return;                     /* killed: the caller's path exits */
    mutex_enter(&proc_lock);
    p->p_jobevent = W_CONTINUED;
    tell_parent_job(p, CLD_CONTINUED, SIGCONT);
    mutex_exit(&proc_lock);
}

/* ---- the controlling terminal ---- */

int ctty_set_fg_pgrp(struct tty *t, int pgid)
{
    struct proc *p = curproc();
    int sid = tty_session(t);
    if ((sid || t->t_owner) && p && p->p_sid != sid)
        return -ENOTTY;             /* not the caller's controlling terminal */
    tty_set_fg_pgrp(t, pgid);
    return 0;
}

int ctty_acquire(struct tty *t, bool steal)
{
    struct proc *p = curproc();
    if (!p || p->p_pid != p->p_sid)
        return -EPERM;              /* only a session leader */
    int sid = tty_session(t);
    if (sid == p->p_sid)
        return 0;
    struct tty *mine = tty_of_session(p->p_sid);
    if (mine && mine != t)
        return -EPERM;              /* the session has a terminal already */
    if (sid && !(steal && p->p_cred->cr_uid == 0))
        return -EPERM;              /* another session's terminal */
    if (sid)
        ctty_session_exit(sid);     /* stolen: its session loses it */
    tty_attach_session(t, p->p_sid, p->p_pgid);
    return 0;
}

void ctty_session_exit(int sid)
{
    struct tty *t = tty_of_session(sid);
    int pg = t ? tty_detach_session(t, sid) : 0;
    if (pg > 0)
        proc_signal_pgrp(pg, SIGHUP);
}

void ctty_open_acquire(struct tty *t)
{
    struct proc *p = curproc();
    if (p && p->p_pid == p->p_sid && !tty_session(t) && !tty_of_session(p->p_sid))
        tty_attach_session(t, p->p_sid, p->p_pgid);
}

int ctty_release(struct tty *t)
{
    struct proc *p = curproc();
    if (!p || tty_of_session(p->p_sid) != t)
        return -ENOTTY;
    if (p->p_pid == p->p_sid)
        ctty_session_exit(p->p_sid);    /* the leader gives it up: SIGHUP to the foreground */
    return 0;
}

int ctty_job_check(struct tty *t, int sig)
{
    struct proc *p = curproc();
    int sid = tty_session(t);
    int fg = tty_fg_pgrp(t);
    if (!p || !sid || p->p_sid != sid || !fg || p->p_pgid == fg)
        return 0;                   /* no control, or in the foreground */
    if (sig_ignored_or_blocked(p, sig))
        return sig == SIGTTIN ? -EIO : 0;
    if (proc_pgrp_orphaned(p->p_pgid))
        return -EIO;
    proc_signal_pgrp(p->p_pgid, sig);
    return -ERESTARTSYS;            /* stops; repeated once continued */
}

/* The terminal's question for /dev/tty: the calling process's session
 * (its own to read: only setsid changes it). */
static int caller_sid(void)
{
    struct proc *p = curproc();
    return p ? p->p_sid : 0;
}

void jobctl_init(void)
{
    static const struct tty_hooks hooks = {
        .job_check = ctty_job_check,
        .sleep_intr = sig_sleep_locked,
        .signal_pgrp = proc_signal_pgrp,
        .caller_sid = caller_sid,
        .readable = poll_notify,
    };
    tty_set_hooks(&hooks);
}
