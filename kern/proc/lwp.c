/*
 * Threads of a process (SVR4's light-weight processes).
 *
 * Theory.  A process holds one or more threads.  What they share is the
 * process's (struct proc): the address space, descriptors, credentials,
 * current and root directory, signal dispositions, limits, the pid and
 * the family.  What each has of its own is split in two: the kernel
 * thread (struct thread, kern/sched) carries the register state on its
 * kernel stack, the scheduling state, the affinity and the FS (TLS) base,
 * and struct lwp (kern/proc/proc.h) the rest: the thread id, the signal
 * mask and the signals sent to this thread alone, the x87/SSE registers,
 * the GS base, the CPU times, the clear_tid word and the robust list.
 * The scheduler knows nothing of processes, so the threads of one process
 * run on as many CPUs at once as they like; each CPU that loads the
 * address space sets its bit in the address space's CPU mask, which is
 * the set its TLB shootdowns reach (kern/vm/as_pt.c).
 *
 * clone with CLONE_THREAD (lwp_create) adds a thread to the caller's
 * process; its first return to user mode is a copy of the caller's frame
 * with rax 0, on the given stack, with the given TLS.  The main thread's
 * tid is the pid; the others take ids from the pid space (alloc_pid skips
 * the tids in use).
 *
 * Exit.  exit ends the calling thread only (lwp_exit): its clear_tid word
 * is zeroed and woken (pthread_join's futex), its robust list walked, and
 * it leaves the process's list; the last thread to leave ends the process
 * (proc_exit_last, kern/proc/proc.c), so wait4 sees a process only when
 * its last thread has gone, with the status of that last exit.
 * exit_group and fatal signals end the process (proc_exit): the first to
 * ask records the wait status (p_xstat) and sets p_killsig, which every
 * other thread obeys at its next return to user mode or in its
 * interruptible sleep (woken through its l_sleepchan); a thread running
 * in user mode on another CPU enters the kernel at its next clock tick.
 * Each then exits as a thread, and the last one out ends the process.
 * A thread that exits while others live is freed by the reaper
 * (kern/proc/proc.c), which joins its kernel thread.
 *
 * execve from one thread ends the others: at its start the caller claims
 * p_execing (a second thread's execve waits its turn by restarting), and
 * at the point of no return (kern/proc/exec.c, lwp_end_others), before
 * the address space is replaced, it sets every other thread's l_exit_now,
 * wakes them and sleeps until it is alone; it then takes the pid as its
 * tid.  An exec that fails gives up the claim.
 *
 * fork from a thread copies only the caller: the child's one thread has
 * the caller's registers, mask and TLS (proc_fork).
 *
 * Locks.  proc_lock guards the thread list and count together with
 * p_siglock (both held to change them, either to read them), so that
 * signal senders, which may not sleep, can walk the threads under the
 * spin lock alone.  Tids are allocated under proc_lock.
 */
#include <kern/proc/proc.h>
#include <kern/proc/proc_impl.h>
#include <kern/sched/sched.h>
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
#include <kern/lib/kprintf.h>

extern void user_enter(struct trapframe *tf) __noreturn;

struct lwp *curlwp(void)
{
    struct thread *t = curthread();
    return t ? t->lwp : NULL;
}

struct lwp *lwp_alloc(struct proc *p)
{
    struct lwp *l = kzalloc(sizeof *l);
    if (l)
        l->l_proc = p;
    return l;
}

void lwp_free(struct lwp *l)
{
    if (l) {
        kfree(l->l_forktf);
        kfree(l);
    }
}

/* Add l to p's threads.  Under proc_lock. */
void lwp_link_locked(struct proc *p, struct lwp *l)
{
    spin_lock(&p->p_siglock);
    l->l_next = p->p_lwps;
    p->p_lwps = l;
    p->p_nlwps++;
    spin_unlock(&p->p_siglock);
}

/* Take l off p's threads: how many remain.  Under proc_lock. */
static int lwp_unlink_locked(struct proc *p, struct lwp *l)
{
    spin_lock(&p->p_siglock);
    for (struct lwp **pp = &p->p_lwps; *pp; pp = &(*pp)->l_next)
        if (*pp == l) {
            *pp = l->l_next;
            p->p_nlwps--;
            break;
        }
    int left = p->p_nlwps;
    spin_unlock(&p->p_siglock);
    return left;
}

bool tid_in_use_locked(int tid)
{
    for (struct proc *p = allproc; p; p = p->p_next)
        for (struct lwp *l = p->p_lwps; l; l = l->l_next)
            if (l->l_tid == tid)
                return true;
    return false;
}

struct lwp *lwp_of_tid_locked(const struct proc *p, int tid)
{
    for (struct lwp *l = p->p_lwps; l; l = l->l_next)
        if (l->l_tid == tid)
            return l;
    return NULL;
}

struct lwp *lwp_find_locked(int tid)
{
    for (struct proc *p = allproc; p; p = p->p_next)
        for (struct lwp *l = p->p_lwps; p->p_state != PS_ZOMBIE && l; l = l->l_next)
            if (l->l_tid == tid)
                return l;
    return NULL;
}

int lwp_apply(int tid, int (*fn)(struct proc *p, struct thread *t, void *arg), void *arg)
{
    mutex_enter(&proc_lock);
    struct lwp *l = lwp_find_locked(tid);
    struct thread *t = l ? l->l_thread : NULL;
    struct proc *p = l ? l->l_proc : find_proc_locked(tid);
    if (!t && p)
        t = p->p_thread;        /* the pid of a process whose main thread has exited */
    int err = t ? fn(l ? l->l_proc : p, t, arg) : -ESRCH;
    mutex_exit(&proc_lock);
    return err;
}

/* ---- creation ---- */

static void lwp_start(void *arg)
{
    struct lwp *l = arg;
    struct proc *p = l->l_proc;
    struct thread *t = curthread();
    struct trapframe tf = *l->l_forktf;
    tf.rax = 0;                 /* clone returns 0 in the new thread */
    kfree(l->l_forktf);
    l->l_forktf = NULL;
    t->proc = p;
    t->lwp = l;
    mutex_enter(&proc_lock);
    l->l_thread = t;
    if (!p->p_thread)
        p->p_thread = t;        /* the others exited before this one ran */
    mutex_exit(&proc_lock);
    lwp_enter_user(l, &tf);
}

/* The first return to user mode of a new thread l (of a new process, or
 * added by clone), running on the calling kernel thread once it is
 * recorded as l's: it loads the address space and TLS base, stores the tid
 * for CLONE_CHILD_SETTID and enters user mode with tf.  Shared by
 * lwp_start and fork's fork_child_start.  Never returns. */
void lwp_enter_user(struct lwp *l, struct trapframe *tf)
{
    struct proc *p = l->l_proc;
    struct thread *t = curthread();
    /* The frame goes where every later entry puts it (thread.c leaves
     * the room): a tracer reads it there. */
    struct trapframe *top = curtf();
    *top = *tf;
    l->l_acct_stamp = rdtsc();
    /* A signal sent before l_thread was set posted no ast: look once. */
    thread_ast_post(t, THREAD_AST_SIGNAL);
    t->as = p->p_as;
    t->fs_base = l->l_fork_fsbase;
    as_activate(p->p_as);
    if (l->l_child_settid) {
        int tid = l->l_tid;     /* a new process's main thread: the pid */
        copyout(&tid, (void *)l->l_child_settid, sizeof tid);     /* CLONE_CHILD_SETTID */
    }
    if (sig_interrupting(p)) {
        /* Before the first user instruction, as on Linux: a tracer's
         * first stop (a traced child's SIGSTOP or trap), a signal sent
         * meanwhile.  The FPU registers are made this thread's first, as
         * a stop switches it out, which saves them. */
        intr_disable();
        user_switch(this_cpu(), NULL, t);
        intr_enable();
        sig_deliver(top, false);
    }
    intr_disable();
    user_switch(this_cpu(), NULL, t);
    user_enter(top);
}

/* A new thread of the calling process (clone with CLONE_THREAD): its tid,
 * or -errno.  Fails with -EAGAIN while the process ends or execs. */
int lwp_create(struct trapframe *tf, const struct clone_req *ca)
{
    struct thread *t = curthread();
    struct lwp *me = t->lwp, *l;
    struct proc *p = t->proc;
    if (!(l = lwp_alloc(p)) || !(l->l_forktf = kmalloc(sizeof *tf))) {
        lwp_free(l);
        return -ENOMEM;
    }
    *l->l_forktf = *tf;
    if (ca->newsp)
        l->l_forktf->rsp = ca->newsp;
    l->l_fork_fsbase = ca->settls ? ca->tls : t->fs_base;
    l->l_child_settid = ca->child_settid;
    l->l_clear_tid = ca->child_cleartid;
    l->l_sigmask = me->l_sigmask;
    l->l_gs_base = me->l_gs_base;
    fpu_copy_current(l);
    mutex_enter(&proc_lock);
    if (p->p_execing || p->p_killsig) {
        mutex_exit(&proc_lock);
        lwp_free(l);
        return -EAGAIN;
    }
    int tid = l->l_tid = alloc_pid();
    lwp_link_locked(p, l);
    mutex_exit(&proc_lock);
    /* CLONE_PARENT_SETTID before the thread can run, as Linux: musl's new
     * thread takes locks by its tid at once (pthread_exit's thread list
     * lock), and a tid still 0 there would take nothing. */
    if (ca->parent_settid)
        copyout(&tid, (void *)ca->parent_settid, sizeof tid);
    /* proc_lock is held across thread_create, as fork does: lwp_start
     * takes it first, so the new thread cannot exit and be reaped (l and
     * its kernel thread freed) before they are stored here, which would
     * write into a freed lwp and leave p_thread naming a freed thread for
     * proc_join to free again (a corrupted page free list). */
    mutex_enter(&proc_lock);
    struct thread *nt = thread_create(p->p_comm, lwp_start, l, t->affinity);
    if (!nt) {
        lwp_unlink_locked(p, l);
        mutex_exit(&proc_lock);
        lwp_free(l);
        return -ENOMEM;
    }
    l->l_thread = nt;
    sched_inherit(nt, t);
    nt->mempolicy = t->mempolicy;       /* before lwp_start, which waits for proc_lock */
    ptrace_child_locked(l, ca->ptrace_event);
    if (!p->p_thread)
        p->p_thread = nt;
    mutex_exit(&proc_lock);
    return tid;
}

/* ---- exit ---- */

/* The thread's own user-space exit work, while the address space is
 * still there: the clear_tid word and the robust list. */
static void lwp_release_user(struct lwp *l, struct as *as)
{
    if (!as)
        return;
    futex_exit_robust(as, l->l_robust_head, l->l_tid);
    if (l->l_clear_tid) {
        int zero = 0;
        if (!copyout(&zero, (void *)l->l_clear_tid, sizeof zero))
            futex_wake_word(as, l->l_clear_tid);
    }
}

/* Add l's CPU times to its process's.  Under proc_lock. */
static void lwp_fold_times_locked(struct proc *p, struct lwp *l)
{
    uint64_t u = load_cycles(&l->l_utime), s = load_cycles(&l->l_stime);
    __atomic_store_n(&l->l_utime, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&l->l_stime, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&p->p_utime, p->p_utime + u, __ATOMIC_RELAXED);
    __atomic_store_n(&p->p_stime, p->p_stime + s, __ATOMIC_RELAXED);
}

/* Record the process's wait status unless an earlier ender did. */
static void record_exit_status(struct proc *p, int status, bool group)
{
    spin_lock(&p->p_siglock);
    if (!p->p_group_exit) {
        p->p_xstat = status;
        p->p_group_exit = group;
    }
    spin_unlock(&p->p_siglock);
}

void lwp_exit(int status)
{
    struct thread *t = curthread();
    struct lwp *l = t->lwp;
    struct proc *p = t->proc;
    lwp_release_user(l, t->as);
    mutex_enter(&proc_lock);
    record_exit_status(p, status, false);
    int left = lwp_unlink_locked(p, l);
    ptrace_lwp_exit_locked(p, l, status, left == 0);   /* its tracer is told */
    if (left == 0) {
        /* The last thread: it ends the process, and its lwp goes with it. */
        spin_lock(&p->p_siglock);
        l->l_next = p->p_lwps;
        p->p_lwps = l;
        spin_unlock(&p->p_siglock);
        p->p_thread = t;
        mutex_exit(&proc_lock);
        proc_exit_last(p->p_xstat);
    }
    if (p->p_thread == t) {
        /* Another live thread stands for the process (one just made may
         * have none yet: it stores itself when it first runs). */
        p->p_thread = NULL;
        for (struct lwp *o = p->p_lwps; o && !p->p_thread; o = o->l_next)
            p->p_thread = o->l_thread;
    }
    if (p->p_nlwps == 1)
        wakeup(&p->p_nlwps);    /* an execve waiting to be alone */
    acct_charge_running(l);     /* its last stretch, before the fold */
    lwp_fold_times_locked(p, l);
    t->as = NULL;
    as_activate(NULL);
    t->proc = NULL;             /* charges and saves nothing from now on */
    t->lwp = NULL;
    l->l_thread = t;
    reap_lwp_locked(l);
    mutex_exit(&proc_lock);
    thread_exit();
}

void proc_exit(int status)
{
    struct proc *p = curproc();
    record_exit_status(p, status, true);
    int none = 0;
    __atomic_compare_exchange_n(&p->p_killsig, &none, SIGKILL, false, __ATOMIC_ACQ_REL,
                                __ATOMIC_ACQUIRE);
    sig_wake_all(p);
    lwp_exit(status);
}

/* ---- exec ---- */

int proc_exec_begin(void)
{
    struct proc *p = curproc();
    mutex_enter(&proc_lock);
    bool busy = p->p_execing;
    if (!busy)
        p->p_execing = p->p_nlwps > 1;
    mutex_exit(&proc_lock);
    if (busy)
        thread_yield();         /* another thread execs: we end, or try again */
    return busy ? -ERESTARTSYS : 0;
}

void proc_exec_abort(void)
{
    struct proc *p = curproc();
    mutex_enter(&proc_lock);
    p->p_execing = false;
    mutex_exit(&proc_lock);
}

void lwp_end_others(struct proc *p)
{
    struct lwp *me = curlwp();
    mutex_enter(&proc_lock);
    for (struct lwp *l = p->p_lwps; l; l = l->l_next)
        if (l != me)
            __atomic_store_n(&l->l_exit_now, 1, __ATOMIC_RELEASE);
    sig_wake_all(p);
    while (p->p_nlwps > 1)
        sleep_on(&p->p_nlwps);
    p->p_execing = false;
    p->p_thread = curthread();
    me->l_tid = p->p_pid;
    me->l_clear_tid = 0;
    me->l_robust_head = 0;
    mutex_exit(&proc_lock);
}

/* ---- system calls ---- */

SYSCALL_DECL(sys_gettid)
{
    return curlwp()->l_tid;
}

SYSCALL_DECL(sys_set_tid_address)
{
    curlwp()->l_clear_tid = a0;
    return curlwp()->l_tid;
}

/* Send sig with si to thread tid (of process tgid, when tgid > 0), or
 * with to_proc to its whole process (rt_sigqueueinfo). */
static int post_to(int tgid, int tid, int sig, struct ksiginfo *si, bool to_proc)
{
    if (tid <= 0 || (tgid != -1 && tgid <= 0))
        return -EINVAL;
    struct proc *me = curproc();
    si->si_signo = sig;
    mutex_enter(&proc_lock);
    struct lwp *l = lwp_find_locked(tid);
    int err = 0;
    if (!l || (tgid > 0 && l->l_proc->p_pid != tgid) || (to_proc && l->l_proc->p_pid != tid))
        err = -ESRCH;
    else if (sig < 0 || sig > NSIG)
        err = -EINVAL;
    else if (!proc_may_signal(me, l->l_proc))
        err = -EPERM;
    else if (proc_init_spares(l->l_proc, sig))
        ;                       /* init: dropped, and the send succeeds */
    else if (sig && to_proc)
        sig_post(l->l_proc, sig, si);
    else if (sig)
        sig_post_lwp(l, sig, si);
    mutex_exit(&proc_lock);
    return err;
}

static int thread_kill(int tgid, int tid, int sig)
{
    struct proc *me = curproc();
    struct ksiginfo si = { .si_code = -6 /* SI_TKILL */, .si_pid = me->p_pid,
                           .si_uid = (int)me->p_cred->cr_ruid };
    return post_to(tgid, tid, sig, &si, false);
}

SYSCALL_DECL(sys_tgkill)
{
    return thread_kill((int)a0, (int)a1, (int)a2);
}

SYSCALL_DECL(sys_tkill)
{
    return thread_kill(-1, (int)a0, (int)a1);
}

/* rt_sigqueueinfo and rt_tgsigqueueinfo: a signal with the caller's
 * siginfo (sigqueue's value).  As Linux, only a negative si_code other
 * than SI_TKILL may be sent to another process (a process cannot
 * pretend to be the kernel or kill(2)); the rest of the siginfo (pid,
 * uid, value) goes as the caller wrote it. */
static int64_t queue_info(int tgid, int tid, int sig, uint64_t uinfo, bool to_proc)
{
    struct { int32_t signo, err, code, pad; int32_t pid; uint32_t uid; uint64_t value; } u;
    if (copyin((void *)uinfo, &u, sizeof u))
        return -EFAULT;
    struct proc *me = curproc();
    if ((u.code >= 0 || u.code == -6) && (to_proc ? tid : tgid) != me->p_pid)
        return -EPERM;
    struct ksiginfo si = { .si_code = u.code, .si_pid = u.pid, .si_uid = (int)u.uid,
                           .si_value = u.value };
    return post_to(tgid, tid, sig, &si, to_proc);
}

SYSCALL_DECL(sys_rt_sigqueueinfo) { return queue_info(-1, (int)a0, (int)a1, a2, true); }
SYSCALL_DECL(sys_rt_tgsigqueueinfo) { return queue_info((int)a0, (int)a1, (int)a2, a3, false); }
