/*
 * POSIX signals, with Linux x86-64 semantics and frame layout.
 *
 * Threads.  The dispositions (p_sigact) are the process's; the mask, the
 * saved mask of rt_sigsuspend and the interruptible sleep's channel are
 * each thread's (struct lwp).  There are two pending sets: the process's
 * (p_sigpending: kill, a child's exit, the terminal), which any thread
 * that does not block the signal may take, and each thread's own
 * (l_sigpending: tgkill, tkill, a fault).  A thread takes its own first.
 * Sending to the process wakes every thread that does not block the
 * signal; the first to reach sig_deliver takes it.  SIGKILL (p_killsig)
 * and an exit_group end every thread (kern/proc/lwp.c); a stop signal
 * taken by one thread stops the process, and the others park in
 * sig_wait_continue at their next return to user mode or sleep
 * (sig_interrupting sees p_stopped).  rt_sigtimedwait publishes its set
 * (l_waitset) so that a blocked signal of the set still wakes it.  Where
 * the text below says "the process" about a mask or a sleep, read "the
 * thread".
 *
 * Theory.  A process has a disposition per signal (p_sigact: SIG_DFL,
 * SIG_IGN or a handler with its flags and mask), a mask of blocked
 * signals (p_sigmask) and a set of pending ones (p_sigpending, with the
 * siginfo of each).  Standard signals do not queue: a second send of a
 * pending signal is lost.  A sender (kill, a child's exit, a pipe with no
 * reader) queues the signal with sig_post; an ignored, unblocked signal
 * is dropped at once, and SIGKILL sets p_killsig, which every return to
 * user mode and every sleep loop already obeys.
 *
 * Signals are taken at the return to user mode, after every system call
 * (syscall_dispatch) and every interrupt or exception from user mode
 * (user_trap_return), by sig_deliver.  Each unblocked pending signal is
 * ignored, kills (the default action of most: the wait status says
 * "signaled"; no core files are written), stops the process (below), or
 * gets a handler frame:
 * below the interrupted stack pointer and its 128-byte red zone we put
 * the FXSAVE image of the x87/SSE registers (64-byte aligned) and then
 * Linux's struct rt_sigframe -- the restorer's address where a call would
 * leave its return address (so rsp + 8 is 16-byte aligned at the
 * handler's first instruction, as the ABI wants), the ucontext (flags,
 * link, stack, the sigcontext with the registers in Linux's order and a
 * pointer to the FXSAVE image, the mask to restore) and the siginfo.  The
 * handler is entered with rdi = signal, rsi = &siginfo, rdx = &ucontext,
 * with its sa_mask and (without SA_NODEFER) the signal itself blocked.
 * If the frame cannot be written the process dies by SIGSEGV.
 *
 * The restorer calls rt_sigreturn, which reads the ucontext back at the
 * stack pointer (the handler's ret popped the return address) and loads
 * the registers, the mask and the FP state.  Nothing there is trusted:
 * the code and stack selectors are the user's fixed ones, rflags keeps
 * only the arithmetic flags, TF, DF and AC (IF always on, IOPL 0), rip
 * must be a user address and MXCSR only its defined bits; a bad frame is
 * death by SIGSEGV.  The return leaves through IRET (not SYSRET) so that
 * rcx and r11 come back too (syscall_dispatch marks the frame).
 *
 * Job control.  SIGSTOP, SIGTSTP, SIGTTIN and SIGTTOU at their default
 * action stop the process.  Taking one (sig_dequeue) sets p_stopped
 * under p_siglock; proc_stop_current (kern/proc/proc.c) then records the
 * stop for wait4 (WUNTRACED), sends the parent SIGCHLD with CLD_STOPPED
 * unless it asked for SA_NOCLDSTOP, and sleeps in sig_wait_continue until
 * p_stopped is cleared or a kill arrives.  Sending SIGCONT continues the
 * process whatever its disposition: under p_siglock it discards the
 * pending stop signals and clears p_stopped, then wakes the stopped
 * process, which records the continue (WCONTINUED, CLD_CONTINUED) once it
 * runs; the SIGCONT itself is then queued like any other signal (its
 * default action is to ignore it).  Sending a stop signal discards a
 * pending SIGCONT.  Because both sides use p_siglock, a SIGCONT sent
 * after a stop signal was taken is never lost.  SIGKILL wakes a stopped
 * process through p_sleepchan, as any sleeper, and it dies.  A stop takes
 * effect where signals are taken: at the return to user mode, so a
 * blocking call is interrupted (below) and restarted after the continue,
 * or inside the sleeps that are not restarted (sig_sleep_interrupted:
 * nanosleep, poll, pause, rt_sigsuspend), which stop in place and go on
 * sleeping after the continue.  A process has one thread, so stopping
 * its thread stops the process.
 *
 * A blocking call (wait4, pipe read and write) sleeps with sig_sleep: the
 * sleeper publishes its channel in p_sleepchan and checks for signals
 * under the sleep queue's lock; a sender queues the signal, then (after a
 * full fence) wakes whatever channel it finds published, under the same
 * lock, so a signal cannot slip between the check and the sleep.  The
 * call then returns -ERESTARTSYS: syscall_dispatch rewinds the frame to
 * repeat the call, and a handler without SA_RESTART turns that into
 * -EINTR.  pause sleeps on its own channel, and nanosleep and poll poll;
 * they fail with -EINTR (Linux does not restart them after a handler),
 * but only for a signal that does something (sig_sleep_interrupted): an
 * ignored one is dropped and a stop is taken in place.
 *
 * Faults (sig_fault) are synchronous: with a handler and the signal
 * unblocked it is queued and taken at the trap's return (a SIGSEGV
 * handler may mprotect and return to retry); blocked, ignored or at its
 * default, the process dies by it, as on Linux.
 *
 * Tracing (kern/proc/ptrace.c).  A traced thread shows its tracer every
 * signal it takes, before anything is done with it (a signal-delivery-
 * stop in sig_deliver): the tracer says which signal to act on, if any,
 * so a traced process keeps even the signals it ignores queued
 * (sig_prepare), takes none quietly in a sleep (sig_take_quiet), and
 * begins a stop only once the tracer let the stop signal through.  Its
 * stops are group-stops reported to the tracer (ptrace_group_stop); a
 * fault's signal goes to the tracer even when blocked or ignored (a
 * breakpoint, a single step), and kills if the tracer passes it on.
 *
 * Locks: p_siglock (spin, class "signal") guards p_sigpending,
 * p_siginfo, p_stopped, every thread's l_sigpending and l_siginfo, and
 * (with proc_lock) the thread list; it may be taken under proc_lock and
 * is never held across a sleep or a user copy (wakeups under it take only
 * the sleep queues' locks, inner to it).  p_sigact belongs to the
 * process's threads, l_sigmask to its own thread (and to fork and clone
 * before the new thread runs).
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/sched/thread.h>
#include <kern/lock/sleep.h>
#include <kern/arch/trap.h>
#include <kern/arch/cpu.h>
#include <kern/arch/arch.h>
#include <kern/lib/errno.h>
#include <kern/lib/string.h>
#include <kern/lib/kprintf.h>
#include <drivers/platform/timer.h>

LOCK_CLASS(signal_lock_class, "signal", LK_SPIN);

#define UNBLOCKABLE   (SIGBIT(SIGKILL) | SIGBIT(SIGSTOP))
#define RED_ZONE      128
#define UC_FP_XSTATE  1         /* uc_flags: the frame's FPU area is an XSAVE one */
/* rflags bits a signal frame may set: CF PF AF ZF SF TF DF OF AC. */
#define RFLAGS_USER   0x40dd5UL
#define RFLAGS_TF_DF  ((1UL << 8) | (1UL << 10))

/* Linux's struct sigcontext (x86-64), the uc_mcontext of a ucontext. */
struct sigcontext_k {
    uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
    uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, rflags;
    uint16_t cs, gs, fs, ss;
    uint64_t err, trapno, oldmask, cr2;
    uint64_t fpstate;           /* user address of the FXSAVE/XSAVE image, or 0 */
    uint64_t reserved[8];
};

struct ucontext_k {
    uint64_t uc_flags, uc_link;
    uint64_t ss_sp;
    int32_t ss_flags, pad;
    uint64_t ss_size;
    struct sigcontext_k mc;
    uint64_t sigmask;
};

struct siginfo_k {
    int32_t si_signo, si_errno, si_code, pad;
    union {
        struct { int32_t pid; uint32_t uid; int32_t status; } proc;
        uint64_t addr;
        uint8_t raw[112];
    } f;
};

struct rt_sigframe_k {
    uint64_t pretcode;          /* the restorer: the handler's return address */
    struct ucontext_k uc;
    struct siginfo_k info;
};

_Static_assert(sizeof(struct sigcontext_k) == 256, "Linux sigcontext");
_Static_assert(sizeof(struct ucontext_k) == 304, "Linux ucontext");
_Static_assert(sizeof(struct siginfo_k) == 128, "Linux siginfo");

void sig_init_proc(struct proc *p, struct proc *parent)
{
    spin_init(&p->p_siglock, &signal_lock_class);
    if (parent)
        memcpy(p->p_sigact, parent->p_sigact, sizeof p->p_sigact);
}

bool sig_default_ignores(int sig)
{
    return sig == SIGCHLD || sig == SIGCONT || sig == 23 || sig == 28;   /* URG WINCH */
}

static bool sig_ignored(const struct proc *p, int sig)
{
    uint64_t h = p->p_sigact[sig - 1].handler;
    return h == SIG_IGN || (h == SIG_DFL && sig_default_ignores(sig));
}

/* Does taking sig stop p (a stop signal at its default action)? */
static bool sig_stops(const struct proc *p, int sig)
{
    return (SIGBIT(sig) & SIG_STOPS) && p->p_sigact[sig - 1].handler == SIG_DFL;
}

/* The thread of p whose mask counts: the caller's own, or p's first. */
static struct lwp *lwp_of(struct proc *p)
{
    struct lwp *me = curlwp();
    return me && me->l_proc == p ? me : p->p_lwps;
}

static uint64_t mask_of(const struct lwp *l)
{
    return l ? __atomic_load_n(&l->l_sigmask, __ATOMIC_RELAXED) : 0;
}

bool sig_ignored_or_blocked(struct proc *p, int sig)
{
    return sig_ignored(p, sig) || (mask_of(lwp_of(p)) & SIGBIT(sig));
}

/* The signals pending for thread l: its own and its process's. */
static uint64_t pending_of(const struct proc *p, const struct lwp *l)
{
    return __atomic_load_n(&p->p_sigpending, __ATOMIC_ACQUIRE) |
           __atomic_load_n(&l->l_sigpending, __ATOMIC_ACQUIRE);
}

/* The signals that wake thread l: those it does not block, and those its
 * rt_sigtimedwait waits for. */
static uint64_t wakers_of(const struct lwp *l)
{
    return ~mask_of(l) | (l ? __atomic_load_n(&l->l_waitset, __ATOMIC_ACQUIRE) : 0);
}

bool sig_work_pending(struct proc *p)
{
    struct lwp *l = curlwp();
    return pending_of(p, l) || __atomic_load_n(&p->p_killsig, __ATOMIC_ACQUIRE) ||
           __atomic_load_n(&l->l_exit_now, __ATOMIC_ACQUIRE) ||
           __atomic_load_n(&p->p_stopped, __ATOMIC_ACQUIRE) ||
           __atomic_load_n(&l->l_pttrap, __ATOMIC_ACQUIRE);
}

/* Make l look at its signals before its next return to user mode (its
 * thread's ast word; a thread not yet recorded sets its own at its first
 * entry, lwp_enter_user).  The caller changed what sig_work_pending
 * reads first, so a thread that clears the word sees the change. */
static void sig_ast_lwp(struct lwp *l)
{
    struct thread *t = __atomic_load_n(&l->l_thread, __ATOMIC_ACQUIRE);
    if (t)
        thread_ast_post(t, THREAD_AST_SIGNAL);
}

bool sig_interrupting(struct proc *p)
{
    struct lwp *l = curlwp();
    return (pending_of(p, l) & wakers_of(l)) || __atomic_load_n(&p->p_killsig, __ATOMIC_ACQUIRE) ||
           __atomic_load_n(&l->l_exit_now, __ATOMIC_ACQUIRE) ||
           __atomic_load_n(&p->p_stopped, __ATOMIC_ACQUIRE) ||
           __atomic_load_n(&l->l_pttrap, __ATOMIC_ACQUIRE);
}

/* Wake l if it sleeps interruptibly.  The fence orders the caller's
 * queueing before the look at l_sleepchan (sig_sleep mirrors it). */
static void sig_wake_lwp(struct lwp *l)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    const void *chan = __atomic_load_n(&l->l_sleepchan, __ATOMIC_SEQ_CST);
    if (chan)
        wakeup(chan);
}

void sig_kick_lwp(struct lwp *l)
{
    sig_ast_lwp(l);
    sig_wake_lwp(l);
}

void sig_wake_all(struct proc *p)
{
    spin_lock(&p->p_siglock);
    for (struct lwp *l = p->p_lwps; l; l = l->l_next) {
        sig_ast_lwp(l);
        sig_wake_lwp(l);
    }
    spin_unlock(&p->p_siglock);
}

/* Queue sig in the pending set at pend with its info at info.  Under
 * p_siglock. */
static void queue_locked(uint64_t *pend, struct ksiginfo *info, int sig,
                         const struct ksiginfo *si, bool replace_info)
{
    if (replace_info || !(*pend & SIGBIT(sig)))
        info[sig - 1] = *si;
    __atomic_or_fetch(pend, SIGBIT(sig), __ATOMIC_RELEASE);
}

/* What sending sig does before it is queued: SIGCONT continues p and
 * discards its pending stop signals, a stop signal discards a pending
 * SIGCONT. */
static void sig_job_control(struct proc *p, int sig)
{
    bool continued = false;
    spin_lock(&p->p_siglock);
    uint64_t drop = sig == SIGCONT ? SIG_STOPS : (SIGBIT(sig) & SIG_STOPS) ? SIGBIT(SIGCONT) : 0;
    __atomic_and_fetch(&p->p_sigpending, ~drop, __ATOMIC_RELEASE);
    for (struct lwp *l = p->p_lwps; l; l = l->l_next)
        __atomic_and_fetch(&l->l_sigpending, ~drop, __ATOMIC_RELEASE);
    if (sig == SIGCONT) {
        continued = p->p_stopped != 0;
        __atomic_store_n(&p->p_stopped, 0, __ATOMIC_RELEASE);
    }
    spin_unlock(&p->p_siglock);
    if (continued)
        wakeup((const void *)&p->p_stopped);
}

/* The common part of sending sig to p (to thread l when given): false
 * when nothing is to be queued (a kill, or an ignored signal). */
static bool sig_prepare(struct proc *p, struct lwp *l, int sig)
{
    if (sig == SIGKILL) {
        int none = 0;
        __atomic_compare_exchange_n(&p->p_killsig, &none, SIGKILL, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE);
        sig_wake_all(p);
        return false;
    }
    if (sig == SIGCONT || (SIGBIT(sig) & SIG_STOPS))
        sig_job_control(p, sig);
    spin_lock(&p->p_siglock);
    bool blocked = !(wakers_of(l ? l : p->p_lwps) & SIGBIT(sig));
    spin_unlock(&p->p_siglock);
    /* A traced process's tracer sees even the signals it ignores. */
    return blocked || !sig_ignored(p, sig) || __atomic_load_n(&p->p_ntraced, __ATOMIC_ACQUIRE);
}

/* A process-directed signal is pending for every thread; each thread
 * that does not block it is woken, and the first to look takes it. */
void sig_post(struct proc *p, int sig, const struct ksiginfo *si)
{
    if (sig <= 0 || sig > NSIG || p->p_state == PS_ZOMBIE || !sig_prepare(p, NULL, sig))
        return;
    spin_lock(&p->p_siglock);
    queue_locked(&p->p_sigpending, p->p_siginfo, sig, si, false);
    for (struct lwp *l = p->p_lwps; l; l = l->l_next) {
        sig_ast_lwp(l);
        if (wakers_of(l) & SIGBIT(sig))
            sig_wake_lwp(l);
    }
    spin_unlock(&p->p_siglock);
    poll_notify();              /* a signalfd watched by poll or epoll */
}

bool sig_post_unless_pending(struct proc *p, int tid, int sig, const struct ksiginfo *si)
{
    if (sig <= 0 || sig > NSIG || p->p_state == PS_ZOMBIE || !sig_prepare(p, NULL, sig))
        return true;
    /* All under p_siglock: the thread cannot go while it is looked at. */
    spin_lock(&p->p_siglock);
    struct lwp *l = NULL;
    for (struct lwp *x = tid ? p->p_lwps : NULL; x && !l; x = x->l_next)
        if (x->l_tid == tid)
            l = x;
    uint64_t pend = p->p_sigpending | (l ? l->l_sigpending : 0);
    bool posted = !(pend & SIGBIT(sig));
    if (posted && l) {
        queue_locked(&l->l_sigpending, l->l_siginfo, sig, si, false);
        sig_ast_lwp(l);
        sig_wake_lwp(l);
    } else if (posted) {
        queue_locked(&p->p_sigpending, p->p_siginfo, sig, si, false);
        for (struct lwp *x = p->p_lwps; x; x = x->l_next) {
            sig_ast_lwp(x);
            if (wakers_of(x) & SIGBIT(sig))
                sig_wake_lwp(x);
        }
    }
    spin_unlock(&p->p_siglock);
    if (posted)
        poll_notify();
    return posted;
}

void sig_post_lwp(struct lwp *l, int sig, const struct ksiginfo *si)
{
    struct proc *p = l->l_proc;
    if (sig <= 0 || sig > NSIG || p->p_state == PS_ZOMBIE || !sig_prepare(p, l, sig))
        return;
    spin_lock(&p->p_siglock);
    queue_locked(&l->l_sigpending, l->l_siginfo, sig, si, false);
    sig_ast_lwp(l);
    spin_unlock(&p->p_siglock);
    sig_wake_lwp(l);
    poll_notify();
}

/* A fault is the faulting thread's own signal. */
void sig_fault(int sig, int code, uint64_t addr, const char *why)
{
    struct proc *p = curproc();
    struct lwp *l = curlwp();
    bool traced = lwp_traced(l);
    if (!traced && (p->p_sigact[sig - 1].handler <= SIG_IGN || (mask_of(l) & SIGBIT(sig)))) {
        proc_kill_current(sig, why);
        return;
    }
    if (traced) {
        /* The tracer sees the fault first (a breakpoint, a single step);
         * if it lets the signal through, blocked or ignored, it kills,
         * as Linux's force_sig_info makes it. */
        __atomic_and_fetch(&l->l_sigmask, ~SIGBIT(sig), __ATOMIC_RELAXED);
        if (p->p_sigact[sig - 1].handler == SIG_IGN)
            p->p_sigact[sig - 1].handler = SIG_DFL;
    }
    struct ksiginfo si = { .si_signo = sig, .si_code = code, .si_addr = addr };
    spin_lock(&p->p_siglock);
    queue_locked(&l->l_sigpending, l->l_siginfo, sig, &si, true);
    sig_ast_lwp(l);
    spin_unlock(&p->p_siglock);
}

int sig_sleep(const void *chan)
{
    if (!curproc()) {
        sleep_on(chan);
        return 0;
    }
    return sig_sleep_locked(sleepq_lock(chan), chan);
}

int sig_sleep_locked(struct sleepq *sq, const void *chan)
{
    struct proc *p = curproc();
    struct lwp *l = curlwp();
    if (!p || !l) {
        sleep_locked(sq, chan);
        return 0;
    }
    __atomic_store_n(&l->l_sleepchan, chan, __ATOMIC_SEQ_CST);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (sig_interrupting(p)) {
        sleepq_unlock(sq);
        __atomic_store_n(&l->l_sleepchan, NULL, __ATOMIC_RELAXED);
        return -ERESTARTSYS;
    }
    sleep_locked(sq, chan);
    __atomic_store_n(&l->l_sleepchan, NULL, __ATOMIC_RELAXED);
    return 0;
}

/* Take sig off the pending sets [s]; one that stops p starts the stop. */
static void stop_begin_locked(struct proc *p, int sig)
{
    __atomic_store_n(&p->p_stopped, sig, __ATOMIC_RELEASE);
    for (struct lwp *o = p->p_lwps; o; o = o->l_next)
        sig_ast_lwp(o);                 /* the others park at their return */
}

/* A traced thread's stop begins only once its tracer has let the stop
 * signal through (sig_deliver). */
static void sig_take_locked(struct proc *p, struct lwp *l, int sig)
{
    __atomic_and_fetch(&l->l_sigpending, ~SIGBIT(sig), __ATOMIC_RELEASE);
    __atomic_and_fetch(&p->p_sigpending, ~SIGBIT(sig), __ATOMIC_RELEASE);
    if (sig_stops(p, sig) && !lwp_traced(l))
        stop_begin_locked(p, sig);
}

/* Requeue sig for thread l (a tracer's signal it blocks): taken when it
 * unblocks it. */
static void sig_requeue(struct proc *p, struct lwp *l, int sig, const struct ksiginfo *si)
{
    spin_lock(&p->p_siglock);
    queue_locked(&l->l_sigpending, l->l_siginfo, sig, si, true);
    spin_unlock(&p->p_siglock);
}

/* Take the calling thread's lowest unblocked pending signal, its own
 * before its process's: its number (0: none). */
static int sig_dequeue(struct proc *p, struct lwp *l, struct ksiginfo *si)
{
    spin_lock(&p->p_siglock);
    uint64_t ready = pending_of(p, l) & ~l->l_sigmask;
    int sig = 0;
    if (ready) {
        sig = __builtin_ctzl(ready) + 1;
        *si = (l->l_sigpending & SIGBIT(sig)) ? l->l_siginfo[sig - 1] : p->p_siginfo[sig - 1];
        sig_take_locked(p, l, sig);
    }
    spin_unlock(&p->p_siglock);
    if (sig && si->si_ptimer)
        ptimer_taken(p, si);
    return sig;
}

/* For sig_sleep_interrupted: drop the ready signals p ignores; then, when
 * every ready signal is a stop, take the lowest (its number; the caller
 * stops).  0 otherwise, with *other saying whether a ready signal that is
 * no stop remains. */
static int sig_take_quiet(struct proc *p, struct lwp *l, bool *other)
{
    int stop = 0;
    *other = false;
    spin_lock(&p->p_siglock);
    uint64_t ready = pending_of(p, l) & ~l->l_sigmask;
    if (lwp_traced(l)) {
        /* Every signal goes to the tracer first (sig_deliver). */
        spin_unlock(&p->p_siglock);
        *other = ready != 0 || __atomic_load_n(&l->l_pttrap, __ATOMIC_ACQUIRE);
        return 0;
    }
    for (uint64_t r = ready; r; r &= r - 1) {
        int sig = __builtin_ctzl(r) + 1;
        if (sig_ignored(p, sig)) {
            __atomic_and_fetch(&p->p_sigpending, ~SIGBIT(sig), __ATOMIC_RELEASE);
            __atomic_and_fetch(&l->l_sigpending, ~SIGBIT(sig), __ATOMIC_RELEASE);
        } else if (!sig_stops(p, sig)) {
            *other = true;
        } else if (!stop) {
            stop = sig;
        }
    }
    if (stop && !*other)
        sig_take_locked(p, l, stop);
    else
        stop = 0;
    spin_unlock(&p->p_siglock);
    return stop;
}

/* The thread must end now: its process ends, or another thread execs. */
static bool lwp_must_exit(struct proc *p, struct lwp *l)
{
    return __atomic_load_n(&p->p_killsig, __ATOMIC_ACQUIRE) ||
           __atomic_load_n(&l->l_exit_now, __ATOMIC_ACQUIRE);
}

/* Another thread took a stop: wait for the continue, or, traced, report
 * the group-stop to the tracer and wait for it. */
static void park_for_stop(struct proc *p, struct lwp *l)
{
    if (lwp_traced(l))
        ptrace_group_stop(__atomic_load_n(&p->p_stopped, __ATOMIC_ACQUIRE));
    else
        sig_wait_continue(p);
}

bool sig_sleep_interrupted(struct proc *p)
{
    struct lwp *l = curlwp();
    for (;;) {
        if (lwp_must_exit(p, l))
            return true;
        if (__atomic_load_n(&p->p_stopped, __ATOMIC_ACQUIRE)) {
            park_for_stop(p, l);        /* another thread took a stop */
            continue;
        }
        bool other;
        int stop = sig_take_quiet(p, l, &other);
        if (!stop)
            return other;
        proc_stop_current(stop);
    }
}

bool sig_wait_continue(struct proc *p)
{
    const void *chan = (const void *)&p->p_stopped;
    struct lwp *l = curlwp();
    for (;;) {
        struct sleepq *sq = sleepq_lock(chan);
        /* Published first: a kill sent now finds the channel (sig_wake_lwp). */
        __atomic_store_n(&l->l_sleepchan, chan, __ATOMIC_SEQ_CST);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        bool killed = lwp_must_exit(p, l);
        if (killed || !__atomic_load_n(&p->p_stopped, __ATOMIC_ACQUIRE)) {
            sleepq_unlock(sq);
            __atomic_store_n(&l->l_sleepchan, NULL, __ATOMIC_RELAXED);
            return !killed;
        }
        sleep_locked(sq, chan);
        __atomic_store_n(&l->l_sleepchan, NULL, __ATOMIC_RELAXED);
    }
}

static void fill_sigcontext(struct sigcontext_k *mc, const struct trapframe *tf)
{
    mc->r8 = tf->r8; mc->r9 = tf->r9; mc->r10 = tf->r10; mc->r11 = tf->r11;
    mc->r12 = tf->r12; mc->r13 = tf->r13; mc->r14 = tf->r14; mc->r15 = tf->r15;
    mc->rdi = tf->rdi; mc->rsi = tf->rsi; mc->rbp = tf->rbp; mc->rbx = tf->rbx;
    mc->rdx = tf->rdx; mc->rax = tf->rax; mc->rcx = tf->rcx; mc->rsp = tf->rsp;
    mc->rip = tf->rip;
    mc->rflags = tf->rflags;
    mc->cs = (uint16_t)tf->cs;
    mc->ss = (uint16_t)tf->ss;
    if (tf->vector < 32) {
        mc->err = tf->error;
        mc->trapno = tf->vector;
    }
}

static void fill_siginfo(struct siginfo_k *info, int sig, const struct ksiginfo *si)
{
    info->si_signo = sig;
    info->si_code = si->si_code;
    if (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGTRAP) {
        info->f.addr = si->si_addr;
    } else {
        info->f.proc.pid = si->si_pid;
        info->f.proc.uid = (uint32_t)si->si_uid;
        if (si->si_code < 0)        /* from a process (SI_QUEUE ...): si_value where status is */
            memcpy(&info->f.raw[8], &si->si_value, sizeof si->si_value);
        else
            info->f.proc.status = si->si_status;
    }
}

void sig_siginfo_out(void *out, int sig, const struct ksiginfo *si)
{
    struct siginfo_k info;
    memset(&info, 0, sizeof info);
    fill_siginfo(&info, sig, si);
    memcpy(out, &info, sizeof info);
}

/* ---- the alternate signal stack (sigaltstack, SA_ONSTACK) ---- */

#define SS_ONSTACK      1
#define SS_DISABLE      2
#define SS_AUTODISARM   (1u << 31)
#define MINSIGSTKSZ     2048

struct stack_u {
    uint64_t ss_sp;
    int32_t ss_flags, pad;
    uint64_t ss_size;
};

/* Is sp on l's alternate stack?  Never with SS_AUTODISARM, as Linux:
 * the stack was disarmed while a handler runs on it. */
static bool on_altstack(const struct lwp *l, uint64_t sp)
{
    if (l->l_ss_flags & SS_AUTODISARM)
        return false;
    return l->l_ss_size && sp > l->l_ss_sp && sp - l->l_ss_sp <= l->l_ss_size;
}

/* Linux's sas_ss_flags: what sigaltstack and a frame's uc_stack say. */
static int32_t altstack_flags(const struct lwp *l, uint64_t sp)
{
    if (!l->l_ss_size)
        return SS_DISABLE;
    return on_altstack(l, sp) ? SS_ONSTACK : 0;
}

static struct stack_u altstack_now(const struct lwp *l, uint64_t sp)
{
    return (struct stack_u){ .ss_sp = l->l_ss_sp, .ss_size = l->l_ss_size,
                             .ss_flags = altstack_flags(l, sp) | (int32_t)l->l_ss_flags };
}

/* Set the alternate stack from ss (Linux's do_sigaltstack): 0, -EPERM
 * while running on it, -EINVAL for bad flags, -ENOMEM when too small. */
static int altstack_set(struct lwp *l, const struct stack_u *ss, uint64_t sp)
{
    if (on_altstack(l, sp))
        return -EPERM;
    uint32_t mode = (uint32_t)ss->ss_flags & ~SS_AUTODISARM;
    if (mode != SS_DISABLE && mode != SS_ONSTACK && mode != 0)
        return -EINVAL;
    if (mode == SS_DISABLE) {
        l->l_ss_sp = l->l_ss_size = 0;
        l->l_ss_flags = 0;
        return 0;
    }
    if (ss->ss_size < MINSIGSTKSZ)
        return -ENOMEM;
    l->l_ss_sp = ss->ss_sp;
    l->l_ss_size = ss->ss_size;
    l->l_ss_flags = (uint32_t)ss->ss_flags & SS_AUTODISARM;
    return 0;
}

SYSCALL_DECL(sys_sigaltstack)
{
    struct lwp *l = curlwp();
    uint64_t sp = curtf()->rsp;
    struct stack_u old = altstack_now(l, sp), ss;
    if (a0) {
        if (copyin((void *)a0, &ss, sizeof ss))
            return -EFAULT;
        int err = altstack_set(l, &ss, sp);
        if (err)
            return err;
    }
    if (a1 && copyout(&old, (void *)a1, sizeof old))
        return -EFAULT;
    return 0;
}

/* Where the handler's frame goes: below the red zone of the interrupted
 * stack, or at the top of the alternate stack for an SA_ONSTACK handler
 * not already on it (which SS_AUTODISARM then disarms); *entering says
 * which, and *ustack is the uc_stack the frame records. */
static uint64_t frame_stack(struct trapframe *tf, const struct sigaction_k *sa, bool *entering,
                            struct stack_u *ustack)
{
    struct lwp *l = curlwp();
    uint64_t sp = tf->rsp - RED_ZONE;
    *ustack = altstack_now(l, tf->rsp);
    *entering = (sa->flags & SA_ONSTACK) && l->l_ss_size && !on_altstack(l, tf->rsp);
    if (*entering) {
        sp = l->l_ss_sp + l->l_ss_size;
        if (l->l_ss_flags & SS_AUTODISARM) {
            l->l_ss_sp = l->l_ss_size = 0;      /* Linux's sas_ss_reset */
            l->l_ss_flags = 0;
        }
    }
    return sp;
}

/* Build the handler's frame on the user stack and point tf at the
 * handler; false when the stack cannot take it. */
static bool setup_frame(struct trapframe *tf, int sig, const struct ksiginfo *si,
                        const struct sigaction_k *sa, uint64_t oldmask)
{
    struct rt_sigframe_k f;
    bool entering;
    struct stack_u ustack;
    if (curlwp()->l_rseq)
        rseq_fixup(tf);             /* a critical section the signal cuts is aborted */
    uint64_t sp = frame_stack(tf, sa, &entering, &ustack);
    uint64_t fpaddr = (sp - fpu_frame_size()) & ~63UL;     /* kern/proc/fpu.c */
    sp = ((fpaddr - sizeof f) & ~15UL) - 8;
    if (tf->rsp > USER_TOP || sp >= USER_TOP || sp < PAGE_SIZE)
        return false;
    if (entering && sp < ustack.ss_sp)
        return false;               /* the frame overflows the alternate stack */
    memset(&f, 0, sizeof f);
    f.pretcode = (sa->flags & SA_RESTORER) ? sa->restorer : 0;
    fill_sigcontext(&f.uc.mc, tf);
    f.uc.mc.oldmask = oldmask;
    f.uc.mc.cr2 = sig == SIGSEGV || sig == SIGBUS ? si->si_addr : 0;
    f.uc.mc.fpstate = fpaddr;
    f.uc.ss_sp = ustack.ss_sp;
    f.uc.ss_flags = ustack.ss_flags;
    f.uc.ss_size = ustack.ss_size;
    f.uc.uc_flags = fpu_frame_xstate() ? UC_FP_XSTATE : 0;
    f.uc.sigmask = oldmask;
    fill_siginfo(&f.info, sig, si);
    if (fpu_frame_out(fpaddr) || copyout(&f, (void *)sp, sizeof f))
        return false;
    tf->rsp = sp;
    tf->rip = sa->handler;
    tf->rdi = (uint64_t)sig;
    tf->rsi = sp + offsetof(struct rt_sigframe_k, info);
    tf->rdx = sp + offsetof(struct rt_sigframe_k, uc);
    tf->rax = 0;
    tf->rflags &= ~(RFLAGS_TF_DF | (1UL << 16));   /* TF DF RF */
    return true;
}

size_t sig_frame_min_size(void)
{
    return RED_ZONE + fpu_frame_size() + 64 + sizeof(struct rt_sigframe_k) + 16;
}

static void run_handler(struct proc *p, struct lwp *l, struct trapframe *tf, int sig,
                        const struct ksiginfo *si, bool *restarting)
{
    struct sigaction_k sa = p->p_sigact[sig - 1];
    if (*restarting && !(sa.flags & SA_RESTART)) {
        tf->rip += 2;               /* back after the syscall instruction */
        tf->rax = (uint64_t)-EINTR;
    }
    *restarting = false;
    /* After rt_sigsuspend the handler returns to the mask from before. */
    uint64_t oldmask = l->l_restoremask ? l->l_sigsaved : l->l_sigmask;
    l->l_restoremask = false;
    if (!setup_frame(tf, sig, si, &sa, oldmask)) {
        proc_kill_current(SIGSEGV, "cannot write the signal frame");
        return;
    }
    uint64_t mask = l->l_sigmask | sa.mask;
    if (!(sa.flags & SA_NODEFER))
        mask |= SIGBIT(sig);
    __atomic_store_n(&l->l_sigmask, mask & ~UNBLOCKABLE, __ATOMIC_RELAXED);
    if (sa.flags & SA_RESETHAND) {
        p->p_sigact[sig - 1].handler = SIG_DFL;
        p->p_sigact[sig - 1].flags &= ~SA_SIGINFO;
    }
}

/* A traced thread took sig: its tracer decides.  The signal to act on
 * (0: none); one the thread blocks waits until it unblocks it. */
static int traced_signal(struct proc *p, struct lwp *l, int sig, struct ksiginfo *si)
{
    sig = ptrace_signal_stop(sig, si);
    if (sig && (l->l_sigmask & SIGBIT(sig))) {
        sig_requeue(p, l, sig, si);
        return 0;
    }
    return sig;
}

void sig_deliver(struct trapframe *tf, bool restarting)
{
    struct proc *p = curproc();
    struct lwp *l = curlwp();
    struct ksiginfo si;
    int sig;
    if (__atomic_load_n(&l->l_pttrap, __ATOMIC_ACQUIRE))
        ptrace_trap_stop();             /* PTRACE_INTERRUPT, a new child's first stop */
    while (!lwp_must_exit(p, l) && __atomic_load_n(&p->p_stopped, __ATOMIC_ACQUIRE))
        park_for_stop(p, l);            /* another thread took a stop */
    while (!lwp_must_exit(p, l) && (sig = sig_dequeue(p, l, &si))) {
        bool traced = lwp_traced(l);
        if (traced && !(sig = traced_signal(p, l, sig, &si)))
            continue;
        uint64_t h = p->p_sigact[sig - 1].handler;
        if (h == SIG_IGN || (h == SIG_DFL && sig_default_ignores(sig)))
            continue;
        if (sig_stops(p, sig)) {
            if (traced) {
                spin_lock(&p->p_siglock);
                stop_begin_locked(p, sig);
                spin_unlock(&p->p_siglock);
            }
            proc_stop_current(sig);     /* until SIGCONT or a kill */
            continue;
        }
        if (h == SIG_DFL) {
            intr_enable();
            ptrace_event(PTRACE_EVENT_EXIT, W_SIGNALED(sig));
            proc_exit(W_SIGNALED(sig));
        }
        run_handler(p, l, tf, sig, &si, &restarting);
    }
    if (l->l_restoremask) {
        l->l_restoremask = false;
        __atomic_store_n(&l->l_sigmask, l->l_sigsaved, __ATOMIC_RELAXED);
    }
    int kill = __atomic_load_n(&p->p_killsig, __ATOMIC_ACQUIRE);
    if (kill) {
        intr_enable();
        proc_exit(W_SIGNALED(kill));
    }
    if (__atomic_load_n(&l->l_exit_now, __ATOMIC_ACQUIRE)) {
        intr_enable();
        lwp_exit(0);                    /* another thread execs */
    }
}

int64_t sig_return(struct trapframe *tf)
{
    struct lwp *l = curlwp();
    struct ucontext_k uc;
    if (copyin((void *)tf->rsp, &uc, sizeof uc))
        goto bad;
    const struct sigcontext_k *mc = &uc.mc;
    if (mc->rip >= USER_TOP || mc->rsp > USER_TOP)
        goto bad;
    if (mc->fpstate && fpu_frame_in(mc->fpstate))      /* kern/proc/fpu.c */
        goto bad;
    tf->r8 = mc->r8; tf->r9 = mc->r9; tf->r10 = mc->r10; tf->r11 = mc->r11;
    tf->r12 = mc->r12; tf->r13 = mc->r13; tf->r14 = mc->r14; tf->r15 = mc->r15;
    tf->rdi = mc->rdi; tf->rsi = mc->rsi; tf->rbp = mc->rbp; tf->rbx = mc->rbx;
    tf->rdx = mc->rdx; tf->rcx = mc->rcx; tf->rsp = mc->rsp; tf->rip = mc->rip;
    tf->rflags = (mc->rflags & RFLAGS_USER) | RFLAGS_IF | 2;
    tf->cs = SEL_UCODE;
    tf->ss = SEL_UDATA;
    tf->vector = VEC_SYSCALL_IRET;
    __atomic_store_n(&l->l_sigmask, uc.sigmask & ~UNBLOCKABLE, __ATOMIC_RELAXED);
    /* Linux's restore_altstack: the stack as the frame recorded it (an
     * SS_AUTODISARM stack comes back armed); a bad one is ignored. */
    struct stack_u ss = { uc.ss_sp, uc.ss_flags, 0, uc.ss_size };
    (void)altstack_set(l, &ss, tf->rsp);
    return (int64_t)mc->rax;
bad:
    proc_kill_current(SIGSEGV, "bad frame for rt_sigreturn");
    return tf->rax;
}

void sig_exec_reset(struct proc *p)
{
    struct lwp *l = curlwp();       /* exec leaves one thread, with no alternate stack */
    l->l_ss_sp = l->l_ss_size = 0;
    l->l_ss_flags = 0;
    l->l_rseq = 0;                  /* nor rseq */
    for (int i = 0; i < NSIG; i++) {
        struct sigaction_k *sa = &p->p_sigact[i];
        if (sa->handler != SIG_IGN)
            memset(sa, 0, sizeof *sa);
        else
            sa->flags = sa->restorer = sa->mask = 0;
    }
}

/* ---- rt_sigtimedwait ---- */

/* Take the lowest signal of set pending for the calling thread (its own
 * before its process's), with its info: its number, or 0. */
static int sig_take_from(struct proc *p, struct lwp *l, uint64_t set, struct ksiginfo *si)
{
    spin_lock(&p->p_siglock);
    uint64_t ready = pending_of(p, l) & set;
    int sig = 0;
    if (ready) {
        sig = __builtin_ctzl(ready) + 1;
        *si = (l->l_sigpending & SIGBIT(sig)) ? l->l_siginfo[sig - 1] : p->p_siginfo[sig - 1];
        __atomic_and_fetch(&l->l_sigpending, ~SIGBIT(sig), __ATOMIC_RELEASE);
        __atomic_and_fetch(&p->p_sigpending, ~SIGBIT(sig), __ATOMIC_RELEASE);
    }
    spin_unlock(&p->p_siglock);
    if (sig && si->si_ptimer)
        ptimer_taken(p, si);
    return sig;
}

int sig_take(uint64_t set, struct ksiginfo *si)
{
    return sig_take_from(curproc(), curlwp(), set, si);
}

uint64_t sig_pending_mine(void)
{
    struct proc *p = curproc();
    spin_lock(&p->p_siglock);
    uint64_t pend = pending_of(p, curlwp());
    spin_unlock(&p->p_siglock);
    return pend;
}

int sig_wait_for(uint64_t set)
{
    struct proc *p = curproc();
    struct lwp *l = curlwp();
    if (sig_pending_mine() & set)
        return 0;
    __atomic_store_n(&l->l_waitset, set, __ATOMIC_SEQ_CST);
    int r = (sig_pending_mine() & set) ? 0 : sig_sleep_until(&l->l_waitset, UINT64_MAX);
    __atomic_store_n(&l->l_waitset, 0, __ATOMIC_SEQ_CST);
    return r && sig_sleep_interrupted(p) ? -ERESTARTSYS : 0;
}

/* Wait until a signal of set is pending for the calling thread (blocked
 * or not) and take it, its siginfo copied to uinfo (when given): the
 * signal, -EAGAIN at the deadline (uptime ns), -EINTR when another signal
 * is to be taken, or -EFAULT. */
int sig_timedwait(uint64_t set, uint64_t deadline, uint64_t uinfo)
{
    struct proc *p = curproc();
    struct lwp *l = curlwp();
    struct ksiginfo si;
    int sig;
    for (;;) {
        if ((sig = sig_take_from(p, l, set, &si)))
            break;
        if (uptime_ns() >= deadline)
            return -EAGAIN;
        __atomic_store_n(&l->l_waitset, set, __ATOMIC_SEQ_CST);
        int r = sig_sleep_until(&l->l_waitset, deadline);
        __atomic_store_n(&l->l_waitset, 0, __ATOMIC_SEQ_CST);
        if ((sig = sig_take_from(p, l, set, &si)))
            break;
        if (r && sig_sleep_interrupted(p))
            return -EINTR;
    }
    struct siginfo_k info;
    memset(&info, 0, sizeof info);
    fill_siginfo(&info, sig, &si);
    if (uinfo && copyout(&info, (void *)uinfo, sizeof info))
        return -EFAULT;
    return sig;
}
