/*
 * ptrace: a process tracing threads of other processes, with Linux's
 * x86-64 ABI, as strace and gdb use it.
 *
 * Theory.  A tracee is a thread (struct lwp); its tracer is a process,
 * whose threads all share its tracees (Linux ties them to one thread of
 * the tracer; nothing here needs that).  A thread becomes a tracee by
 * PTRACE_TRACEME (its parent traces it), PTRACE_ATTACH (which sends it
 * SIGSTOP) or PTRACE_SEIZE (which does not), or by being born to a tracee
 * whose tracer asked for its forks, vforks or clones (PTRACE_O_TRACE*):
 * a seized tracer's new tracee starts with a PTRACE_EVENT_STOP trap,
 * another's with a SIGSTOP.  Permission is process_vm_readv's
 * (proc_may_inspect: Linux's PTRACE_MODE_ATTACH_REALCREDS); nobody
 * traces init, its own process or a thread traced already (EPERM).
 *
 * A tracee stops, for its tracer alone, in a ptrace-stop (ptrace_stop),
 * of one of these kinds (l_ptstop):
 *   PTS_SIGNAL        it took a signal (sig_deliver): every signal, even
 *                     one it ignores, is shown to the tracer first, which
 *                     resumes it with the signal to act on (0: none);
 *   PTS_SYSCALL_*     resumed with PTRACE_SYSCALL (the thread's
 *                     ptrace_syscalls), at a system call's entry, before
 *                     the call and with rax -ENOSYS (the tracer may change
 *                     the number in orig_rax, or skip the call with -1),
 *                     and at its exit, with the result in rax;
 *   PTS_EVENT         a fork, vfork, clone, exec or exit the tracer asked
 *                     to see (PTRACE_EVENT_*, the value in l_ptmsg);
 *   PTS_GROUP         a stop signal stopped the process (group-stop; for
 *                     a seized tracee the report carries PTRACE_EVENT_STOP
 *                     and PTRACE_LISTEN leaves it stopped until SIGCONT,
 *                     after which it traps, PTS_TRAP, to say so);
 *   PTS_TRAP          PTRACE_INTERRUPT, or a seized child's first stop.
 * Entering one, the tracee records the wait status to report (l_ptreport),
 * tells the tracer (SIGCHLD with CLD_TRAPPED, and the wakeup its wait
 * sleeps on) and sleeps until the tracer resumes it (PTRACE_CONT,
 * PTRACE_SYSCALL, PTRACE_SINGLESTEP, PTRACE_LISTEN, PTRACE_DETACH), until
 * SIGCONT for a listening one, or until it is killed: SIGKILL wakes it
 * as any interruptible sleeper (l_sleepchan) and it dies.  The tracer's
 * wait (proc_wait -> ptrace_wait_locked) reports each stop once; a
 * tracee's other threads run on.  Only a stopped tracee can be read or
 * changed: its registers are its trap frame at the top of its kernel
 * stack, left alone while it sleeps, and its FPU area (l_fpu), saved when
 * it switched out, which the tracer waits for (stopped_off_cpu).
 * PTRACE_SINGLESTEP sets TF in the frame, and the debug trap after one
 * instruction is a SIGTRAP the tracer sees; TF is taken off again at the
 * next resume.  Memory goes through the address space's remote copy, a
 * write with Linux's FOLL_FORCE (as_poke_remote): into read-only text
 * through a private copy of the page.
 *
 * Exits.  A tracee that ends is reported to its tracer by its wait: a
 * tracer that is also the process's parent learns of the process's end
 * as a parent does (and its wait does not report the job-control stops
 * of a child it traces twice); any other tracer, and every tracer of a
 * thread other than the main one, gets a struct ptrace_exit on its
 * p_trace_exits, which its wait reports once and frees.  A tracer that
 * ends lets every tracee go, as PTRACE_DETACH would (with
 * PTRACE_O_EXITKILL, killed), and drops the exits not yet reported.
 *
 * Locks.  Everything here is under proc_lock [P]: the links (l_tracer,
 * l_trace_next, p_tracees, p_trace_exits) and each tracee's ptrace state;
 * a stopped tracee checks its condition under proc_lock, published on its
 * sleep channel (as sig_wait_continue does), and sleeps with it released
 * by the sleep, so a resume (made under proc_lock) is never missed.  The
 * two lock-free reads are l_tracer (lwp_traced, whether signals go to a
 * tracer) and l_pttrap, both written under proc_lock and read atomically;
 * thread->ptrace_syscalls is written only while its thread is stopped.
 * User memory is never touched with proc_lock held: a request copies in
 * first, acts under the lock, and copies out after; a request on the
 * tracee's memory holds its process (p_holds) across the copy instead.
 */
#include <kern/proc/proc.h>
#include <kern/proc/proc_impl.h>
#include <kern/proc/ptrace_impl.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/vm/kmem.h>
#include <kern/vfs/cred.h>
#include <kern/sched/thread.h>
#include <kern/lock/sleep.h>
#include <kern/arch/trap.h>
#include <kern/arch/cpu.h>
#include <kern/arch/arch.h>
#include <kern/lib/errno.h>
#include <kern/lib/string.h>

/* ---- the tracee's side: stopping ---- */

static bool must_exit(struct proc *p, struct lwp *l)
{
    return __atomic_load_n(&p->p_killsig, __ATOMIC_ACQUIRE) ||
           __atomic_load_n(&l->l_exit_now, __ATOMIC_ACQUIRE);
}

/* Is l's stop over: resumed, let go, killed, or listening and continued?
 * Under proc_lock. */
static bool stop_over(struct proc *p, struct lwp *l)
{
    if (l->l_ptstop == PTS_NONE || !l->l_tracer || must_exit(p, l))
        return true;
    return (l->l_ptflags & PTF_LISTEN) && !__atomic_load_n(&p->p_stopped, __ATOMIC_ACQUIRE);
}

/* Tell l's tracer that l stopped with status: SIGCHLD (CLD_TRAPPED) and
 * a wakeup for its wait.  Under proc_lock. */
static void tell_tracer_locked(struct lwp *l, int status)
{
    struct proc *tr = l->l_tracer;
    if (tr->p_sigact[SIGCHLD - 1].handler != SIG_IGN) {
        struct ksiginfo si = {
            .si_signo = SIGCHLD, .si_code = CLD_TRAPPED, .si_pid = l->l_tid,
            .si_uid = (int)l->l_proc->p_cred->cr_ruid, .si_status = (status >> 8) & 0xff,
        };
        sig_post(tr, SIGCHLD, &si);
    }
    wakeup(tr);
}

/* Sleep in l's stop until it is over (stop_over).  Under proc_lock,
 * which the sleep lets go.  The channel is published as for any
 * interruptible sleep, so a kill wakes it; a listening tracee sleeps
 * where SIGCONT wakes the stopped. */
static void sleep_in_stop(struct proc *p, struct lwp *l)
{
    while (!stop_over(p, l)) {
        const void *chan = (l->l_ptflags & PTF_LISTEN) ? (const void *)&p->p_stopped
                                                       : (const void *)&l->l_ptstop;
        struct sleepq *sq = sleepq_lock(chan);
        __atomic_store_n(&l->l_sleepchan, chan, __ATOMIC_SEQ_CST);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (stop_over(p, l)) {
            sleepq_unlock(sq);
            __atomic_store_n(&l->l_sleepchan, NULL, __ATOMIC_RELAXED);
            break;
        }
        sleep_locked(sq, chan);
        __atomic_store_n(&l->l_sleepchan, NULL, __ATOMIC_RELAXED);
    }
}

/* ptrace_stop's answer for a listening tracee that SIGCONT continued. */
#define STOP_CONTINUED (-2)

/*
 * Stop the calling thread for its tracer with this kind, wait status,
 * event message and siginfo (NULL: the stop's own, as Linux makes it),
 * until it is resumed.  Returns the signal it was resumed with (0: none),
 * *si updated from a PTRACE_SETSIGINFO; STOP_CONTINUED when it listened
 * and SIGCONT ended the group-stop; -1 when it is not traced or is to die.
 */
static int ptrace_stop(int kind, int status, uint64_t msg, struct ksiginfo *si)
{
    struct lwp *l = curlwp();
    struct proc *p = l->l_proc;
    mutex_enter(&proc_lock);
    if (!l->l_tracer || must_exit(p, l)) {
        mutex_exit(&proc_lock);
        return -1;
    }
    l->l_ptstop = kind;
    l->l_ptreport = status;
    l->l_ptmsg = msg;
    l->l_ptsig = 0;
    l->l_ptflags &= ~PTF_LISTEN;
    if (si)
        l->l_ptsi = *si;
    else        /* Linux's: the stop's signal, and the status's upper half as the code */
        l->l_ptsi = (struct ksiginfo){ .si_signo = (status >> 8) & 0x7f,
                                       .si_code = (status >> 8) & 0xffff };
    tell_tracer_locked(l, status);
    sleep_in_stop(p, l);
    bool resumed = l->l_ptstop == PTS_NONE;
    bool continued = !resumed && (l->l_ptflags & PTF_LISTEN) && l->l_tracer && !must_exit(p, l);
    int sig = resumed ? l->l_ptsig : continued ? STOP_CONTINUED : -1;
    if (resumed && si)
        *si = l->l_ptsi;
    l->l_ptstop = PTS_NONE;
    l->l_ptreport = 0;
    l->l_ptflags &= ~PTF_LISTEN;
    mutex_exit(&proc_lock);
    return sig;
}

/* A signal a tracer gave at the resume of a syscall-stop: sent to the
 * thread as a signal of its tracer's (Linux's quirk, kept). */
static void send_resume_signal(int sig)
{
    if (sig > 0) {
        struct ksiginfo si = { .si_signo = sig, .si_code = 0 };
        sig_post_lwp(curlwp(), sig, &si);
    }
}

static int trap_status(const struct lwp *l)
{
    int sig = SIGTRAP | ((l->l_ptopts & PTRACE_O_TRACESYSGOOD) ? 0x80 : 0);
    return W_STOPPED(sig);
}

uint64_t ptrace_syscall_entry(struct trapframe *tf)
{
    struct lwp *l = curlwp();
    tf->rax = (uint64_t)-ENOSYS;
    int sig = ptrace_stop(PTS_SYSCALL_ENTRY, trap_status(l), 0, NULL);
    if (sig < 0 && must_exit(l->l_proc, l))
        return (uint64_t)-1;            /* killed while stopped: the call is not made */
    send_resume_signal(sig);
    return tf->error;                   /* orig_rax, as the tracer left it */
}

void ptrace_syscall_exit(void)
{
    send_resume_signal(ptrace_stop(PTS_SYSCALL_EXIT, trap_status(curlwp()), 0, NULL));
}

int ptrace_signal_stop(int sig, struct ksiginfo *si)
{
    si->si_signo = sig;
    int got = ptrace_stop(PTS_SIGNAL, W_STOPPED(sig), 0, si);
    if (got < 0)
        return must_exit(curproc(), curlwp()) ? 0 : sig;
    if (got != sig && got) {
        /* Another signal than the one taken: the tracer's (Linux's rule). */
        mutex_enter(&proc_lock);
        struct proc *tracer = curlwp()->l_tracer;
        *si = (struct ksiginfo){
            .si_signo = got, .si_code = 0, .si_pid = tracer ? tracer->p_pid : 0,
            .si_uid = tracer ? (int)tracer->p_cred->cr_ruid : 0,
        };
        mutex_exit(&proc_lock);
    }
    return got;
}

/* Take the process out of its stop (a tracer's resume of a group-stop:
 * the thread runs again, as on Linux without PTRACE_LISTEN). */
void clear_group_stop(struct proc *p)
{
    spin_lock(&p->p_siglock);
    __atomic_store_n(&p->p_stopped, 0, __ATOMIC_RELEASE);
    spin_unlock(&p->p_siglock);
    wakeup((const void *)&p->p_stopped);
}

void ptrace_group_stop(int sig)
{
    struct lwp *l = curlwp();
    int status = W_STOPPED(sig);
    if (l->l_ptflags & PTF_SEIZED)
        status |= PTRACE_EVENT_STOP << 16;
    if (ptrace_stop(PTS_GROUP, status, 0, NULL) == STOP_CONTINUED)
        ptrace_trap_stop();     /* the tracer hears that the group-stop ended */
}

void ptrace_trap_stop(void)
{
    struct lwp *l = curlwp();
    mutex_enter(&proc_lock);
    __atomic_store_n(&l->l_pttrap, 0, __ATOMIC_RELEASE);
    mutex_exit(&proc_lock);
    ptrace_stop(PTS_TRAP, W_STOPPED(SIGTRAP) | (PTRACE_EVENT_STOP << 16), 0, NULL);
}

/* The option that asks for event. */
static uint32_t option_of(int event)
{
    switch (event) {
    case PTRACE_EVENT_FORK: return PTRACE_O_TRACEFORK;
    case PTRACE_EVENT_VFORK: return PTRACE_O_TRACEVFORK;
    case PTRACE_EVENT_CLONE: return PTRACE_O_TRACECLONE;
    case PTRACE_EVENT_EXEC: return PTRACE_O_TRACEEXEC;
    case PTRACE_EVENT_VFORK_DONE: return PTRACE_O_TRACEVFORKDONE;
    case PTRACE_EVENT_EXIT: return PTRACE_O_TRACEEXIT;
    default: return 0;
    }
}

void ptrace_event(int event, uint64_t msg)
{
    struct lwp *l = curlwp();
    if (!lwp_traced(l))
        return;
    mutex_enter(&proc_lock);
    uint32_t opts = l->l_tracer ? l->l_ptopts : 0;
    bool legacy_exec = l->l_tracer && !(l->l_ptflags & PTF_SEIZED);
    mutex_exit(&proc_lock);
    if (opts & option_of(event)) {
        ptrace_stop(PTS_EVENT, W_STOPPED(SIGTRAP) | (event << 16), msg, NULL);
    } else if (event == PTRACE_EVENT_EXEC && legacy_exec) {
        /* Without PTRACE_O_TRACEEXEC, an exec is a SIGTRAP (not when seized). */
        struct ksiginfo si = { .si_signo = SIGTRAP, .si_code = 0 };
        sig_post_lwp(l, SIGTRAP, &si);
    }
}

/* ---- attaching and letting go (under proc_lock) ---- */

void attach_locked(struct proc *tracer, struct lwp *l, uint32_t opts, bool seized)
{
    l->l_tracer = tracer;
    l->l_trace_next = tracer->p_tracees;
    tracer->p_tracees = l;
    l->l_ptopts = opts;
    l->l_ptflags = seized ? PTF_SEIZED : 0;
    l->l_ptstop = PTS_NONE;
    l->l_ptreport = 0;
    __atomic_add_fetch(&l->l_proc->p_ntraced, 1, __ATOMIC_RELEASE);
}

struct trapframe *frame_of(struct lwp *l)
{
    return thread_user_frame(l->l_thread);
}

/* Take TF off l's frame if PTRACE_SINGLESTEP put it there. */
static void end_step_locked(struct lwp *l)
{
    if (l->l_ptflags & PTF_STEP) {
        frame_of(l)->rflags &= ~RFLAGS_TF;
        l->l_ptflags &= ~PTF_STEP;
    }
}

/* l leaves its tracer's list. */
static void unlink_tracee_locked(struct lwp *l)
{
    for (struct lwp **pp = &l->l_tracer->p_tracees; *pp; pp = &(*pp)->l_trace_next)
        if (*pp == l) {
            *pp = l->l_trace_next;
            break;
        }
    l->l_trace_next = NULL;
    __atomic_store_n(&l->l_tracer, NULL, __ATOMIC_RELEASE);
    __atomic_sub_fetch(&l->l_proc->p_ntraced, 1, __ATOMIC_RELEASE);
}

/* Let l go; a stopped l resumes with sig (a signal-delivery-stop acts on
 * it). */
void detach_locked(struct lwp *l, int sig)
{
    if (l->l_thread) {
        end_step_locked(l);
        l->l_thread->ptrace_syscalls = false;
    }
    unlink_tracee_locked(l);
    l->l_ptopts = 0;
    l->l_ptflags = 0;
    __atomic_store_n(&l->l_pttrap, 0, __ATOMIC_RELEASE);
    if (l->l_ptstop != PTS_NONE) {
        l->l_ptsig = sig;
        l->l_ptstop = PTS_NONE;
        l->l_ptreport = 0;
        wakeup(&l->l_ptstop);
        wakeup((const void *)&l->l_proc->p_stopped);
    }
}

void ptrace_child_locked(struct lwp *cl, int event)
{
    struct lwp *me = curlwp();
    if (!me || !me->l_tracer || !(me->l_ptopts & option_of(event)))
        return;
    bool seized = me->l_ptflags & PTF_SEIZED;
    attach_locked(me->l_tracer, cl, me->l_ptopts, seized);
    if (seized) {
        __atomic_store_n(&cl->l_pttrap, 1, __ATOMIC_RELEASE);     /* seen at its first return */
    } else {
        struct ksiginfo si = { .si_signo = SIGSTOP, .si_code = 0 };
        sig_post_lwp(cl, SIGSTOP, &si);
    }
}

bool ptrace_traced_by_locked(const struct proc *c, const struct proc *tracer)
{
    for (struct lwp *l = c->p_lwps; l; l = l->l_next)
        if (l->l_tracer == tracer)
            return true;
    return false;
}

void ptrace_lwp_exit_locked(struct proc *p, struct lwp *l, int status, bool last)
{
    struct proc *tr = l->l_tracer;
    if (!tr)
        return;
    unlink_tracee_locked(l);
    bool leader = l->l_tid == p->p_pid;
    /* The parent learns of its child's end itself; the main thread's end
     * while others run is the process's, told when the last one goes. */
    if ((last && tr == p->p_parent) || (!last && leader))
        return;
    struct ptrace_exit *e = kzalloc(sizeof *e);
    if (!e)
        return;                 /* no memory: the tracer's wait is not told */
    e->tid = last ? p->p_pid : l->l_tid;
    e->thread = !last && !leader;
    e->pgid = p->p_pgid;
    e->uid = (int)p->p_cred->cr_ruid;
    e->status = last || p->p_group_exit ? p->p_xstat : status;
    e->next = tr->p_trace_exits;
    tr->p_trace_exits = e;
    wakeup(tr);
}

void ptrace_tracer_exit_locked(struct proc *p)
{
    while (p->p_tracees) {
        struct lwp *l = p->p_tracees;
        if (l->l_ptopts & PTRACE_O_EXITKILL)
            sig_post(l->l_proc, SIGKILL, &(struct ksiginfo){ .si_signo = SIGKILL });
        detach_locked(l, 0);
    }
    while (p->p_trace_exits) {
        struct ptrace_exit *e = p->p_trace_exits;
        p->p_trace_exits = e->next;
        kfree(e);
    }
}

/* ---- the tracer's wait ---- */

/* Does the wait's request name tracee tid (of group pgid; a thread other
 * than a main one when thread)?  Linux's eligibility: a non-main thread
 * only for __WALL or __WCLONE, a main one not for __WCLONE alone. */
static bool trace_wait_matches(const struct wait_req *req, int pgid, int tid, int tpgid,
                               bool thread)
{
    unsigned o = (unsigned)req->options;
    if (!(o & __WALL) && thread != !!(o & __WCLONE))
        return false;
    switch (req->idtype) {
    case P_PID:
        return tid == req->id;
    case P_PGID:
        return tpgid == pgid;
    default:
        return true;
    }
}

/* A reported exit: take it off the list and free it (not for WNOWAIT). */
static void exit_reported(struct proc *me, struct ptrace_exit *e, int options)
{
    if (options & WNOWAIT)
        return;
    for (struct ptrace_exit **pp = &me->p_trace_exits; *pp; pp = &(*pp)->next)
        if (*pp == e) {
            *pp = e->next;
            break;
        }
    kfree(e);
}

int ptrace_wait_locked(struct proc *me, const struct wait_req *req, int pgid,
                       struct wait_info *info, bool *any)
{
    for (struct lwp *l = me->p_tracees; l; l = l->l_trace_next) {
        struct proc *p = l->l_proc;
        if (!trace_wait_matches(req, pgid, l->l_tid, p->p_pgid, l->l_tid != p->p_pid))
            continue;
        *any = true;
        if (!l->l_ptreport)
            continue;
        *info = (struct wait_info){
            .pid = l->l_tid, .uid = (int)p->p_cred->cr_ruid, .status = l->l_ptreport,
            .code = CLD_TRAPPED, .si_status = (l->l_ptreport >> 8) & 0xff,
        };
        if (!(req->options & WNOWAIT))
            l->l_ptreport = 0;          /* a stop is told once */
        return info->pid;
    }
    for (struct ptrace_exit *e = me->p_trace_exits; e; e = e->next) {
        if (!trace_wait_matches(req, pgid, e->tid, e->pgid, e->thread))
            continue;
        *any = true;
        if (!(req->options & WEXITED))
            continue;
        *info = (struct wait_info){
            .pid = e->tid, .uid = e->uid, .status = e->status,
            .code = cld_code(e->status), .si_status = cld_status(e->status),
        };
        exit_reported(me, e, req->options);
        return info->pid;
    }
    return 0;
}

/* ---- exec's questions ---- */

bool ptrace_blocks_setid(struct proc *p)
{
    if (!__atomic_load_n(&p->p_ntraced, __ATOMIC_ACQUIRE))
        return false;
    bool blocks = false;
    mutex_enter(&proc_lock);
    for (struct lwp *l = p->p_lwps; l; l = l->l_next)
        if (l->l_tracer && l->l_tracer->p_cred->cr_uid != 0)
            blocks = true;
    mutex_exit(&proc_lock);
    return blocks;
}

int ptrace_tracer_pid(struct proc *p)
{
    mutex_enter(&proc_lock);
    struct lwp *l = p->p_state == PS_ZOMBIE ? NULL : lwp_of_tid_locked(p, p->p_pid);
    int pid = l && l->l_tracer ? l->l_tracer->p_pid : 0;
    mutex_exit(&proc_lock);
    return pid;
}
