/*
 * Processes.
 *
 * Theory.  A process is one or more threads that spend their lives in
 * user mode (struct lwp with its kernel thread: kern/proc/lwp.c has their
 * theory, creation and exit), plus what the Unix process model gives
 * them to share: an address space
 * (kern/vm/as.c), credentials, a descriptor table, a current directory, a
 * parent and children, a process group and session.  A process is made by
 * fork (a copy of the caller, address space copy-on-write) or by
 * proc_spawn (from the kernel: pid 1, the ktests), and its image is
 * replaced by exec (kern/proc/exec.c).
 *
 * vfork (and clone with CLONE_VM|CLONE_VFORK, musl's posix_spawn) makes a
 * child that borrows the parent's address space: p_as is the parent's,
 * p_as_borrowed says so, and the parent sleeps in proc_vfork_wait until
 * the child lets the address space go, at its exec's point of no return
 * or at its exit (release_as, which frees an address space only when it
 * is the process's own).  The parent's sleep is uninterruptible, as
 * Linux's was before it became killable: a kill of the parent takes
 * effect when the child has execed or exited, so an address space is
 * never freed under a borrower.  CLONE_VFORK without CLONE_VM waits the
 * same way for a child with its own copy.
 *
 * Exit (proc_exit_last) runs on the process's last thread to exit: it closes the descriptors,
 * drops the current directory, loads the kernel's page tables and lets
 * the address space go, gives its children to init, then becomes a
 * zombie and tells its parent (tell_parent): SIGCHLD, and a wakeup for
 * its wait.  A parent that ignores SIGCHLD (or set SA_NOCLDWAIT) never
 * sees the zombie: it is unlinked at once and handed to the reaper, which
 * also joins and frees the threads that exit before their process's last.
 * The parent's wait reaps the zombie: it joins the last thread (thread_join waits
 * until it is fully off its CPU, then frees its stack), adds the child's
 * CPU times to its own children's times, and frees the struct proc.  A
 * process the kernel spawned has no parent; proc_wait_spawned reaps it
 * the same way.
 *
 * Orphans go to init (pid 1), which waits for them.  When there is no
 * init (the program was run as init= itself, or from a ktest, or init has
 * exited) an orphan has no parent at all: a zombie orphan, and later a
 * living orphan when it exits, is handed to the reaper, a kernel thread
 * that joins and frees what nobody will wait for (the exiting thread
 * cannot free its own stack).  So no zombie outlives its last waiter.
 *
 * Waiting (proc_wait: wait4 and waitid, kern/proc/wait.c, with
 * proc_wait_spawned and proc_vfork_wait) scans the caller's children that
 * the request names and asks wait_event_of whether each has something to
 * report for the request's options.  Today that is only an exit
 * (WEXITED); job control adds stopped and continued children there.
 *
 * CPU-time accounting is in kern/proc/acct.c.  Process groups, sessions
 * and job control are in kern/proc/jobctl.c,
 * under the same proc_lock (kern/proc/proc_impl.h shares it).
 *
 * Locks.  proc_lock (a sleep mutex, class "proc") guards the process list,
 * pids, parent/child links, process groups and exit state, the vfork
 * links and the reaper's list; wait sleeps on the parent with sig_sleep
 * under it (a signal interrupts the wait), and an exiting child calls
 * wakeup on its parent under it.  It is taken before a descriptor table's
 * p_fdlock and a process's p_siglock, and never while an address space's
 * lock is held.
 */
#include <kern/proc/proc.h>
#include <kern/proc/sigio.h>
#include <kern/ipc/ipc.h>
#include <kern/net/socket.h>
#include <kern/event/event.h>
#include <kern/proc/proc_impl.h>
#include <kern/vm/as.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/sched/sched.h>
#include <kern/lock/sleep.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/arch/arch.h>
#include <kern/arch/trap.h>
#include <kern/arch/cpu.h>
#include <kern/lib/errno.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/options.h>
#include <kern/arch/panic.h>
#include <drivers/platform/timer.h>
#include <drivers/tty/tty.h>

LOCK_CLASS(proc_lock_class, "proc", LK_MUTEX_SLEEP);
LOCK_CLASS(fdtable_lock_class, "fdtable", LK_MUTEX_SLEEP);

struct mutex proc_lock;             /* shared with jobctl.c (proc_impl.h) */
struct proc *allproc;               /* [P] */
static int next_pid = 2;            /* [P] pid 1 is kept for init */
static struct proc *initproc;       /* [P] pid 1 while it runs */
static struct proc *unwaited;       /* [P] zombies for the reaper, linked by p_sibling */
static struct lwp *unwaited_lwps;   /* [P] exited threads for the reaper, by l_reap_next */
volatile bool init_poweroff;        /* [a] init called reboot */
int proc_maxuproc = 64;

extern void user_enter(struct trapframe *tf) __noreturn;
static const char *init_path(void);

static void reaper_main(void *unused);

/* p's parent changed (under proc_lock): its pid is copied for getppid,
 * which reads it without the lock. */
static void set_ppid_locked(struct proc *p)
{
    ASSERT_HELD(&proc_lock);
    __atomic_store_n(&p->p_ppid, p->p_parent ? p->p_parent->p_pid : 0, __ATOMIC_RELAXED);
}

void proc_init(void)
{
    mutex_init(&proc_lock, &proc_lock_class, 0, "proc");
    reclock_init();
    jobctl_init();
    fifo_init();
    ipc_init();
    net_init();
    event_init();
    admin_init();
    futex_init();
    ptimer_init();
    sigio_init();
    if (!thread_create("reaper", reaper_main, NULL, AFFINITY_ALL))
        panic("proc: no memory for the reaper thread");
}

struct proc *curproc(void)
{
    struct thread *t = curthread();
    return t ? t->proc : NULL;
}

int alloc_pid(void)
{
    for (;;) {
        int pid = next_pid++;
        if (next_pid >= 32768)
            next_pid = 2;
        bool used = false;
        for (struct proc *p = allproc; p && !used; p = p->p_next)
            used = p->p_pid == pid || p->p_pgid == pid || p->p_sid == pid;
        if (!used && !tid_in_use_locked(pid))
            return pid;
    }
}

static int procs_of_user(uint32_t uid)
{
    int n = 0;
    for (struct proc *p = allproc; p; p = p->p_next)
        if (p->p_cred->cr_ruid == uid)
            n++;
    return n;
}

/* A new process with a pid, linked into the list as a child of parent
 * (NULL: of the kernel).  Its thread is not made yet. */
static struct proc *proc_alloc(struct proc *parent, struct cred *cr, bool init, int *err)
{
    struct proc *p = kzalloc(sizeof *p);
    struct lwp *l = p ? lwp_alloc(p) : NULL;
    if (!l) {
        kfree(p);
        *err = -ENOMEM;
        return NULL;
    }
    mutex_init(&p->p_fdlock, &fdtable_lock_class, 0, "fdtable");
    sig_init_proc(p, parent);   /* fork copies dispositions and mask */
    itimer_init(p);             /* a child's timers start disarmed */
    p->p_cred = cr;
    cred_hold(cr);
    p->p_state = PS_RUN;
    p->p_umask = 022;
    for (int r = 0; r < RLIM_NLIMITS; r++)
        p->p_rlim[r][0] = p->p_rlim[r][1] = RLIM_INFINITY;
    if (parent)
        memcpy(p->p_rlim, parent->p_rlim, sizeof p->p_rlim);
    else {
        p->p_rlim[RLIMIT_NOFILE][0] = p->p_rlim[RLIMIT_NOFILE][1] = NOFILE;
        p->p_rlim[RLIMIT_STACK][0] = USER_STACK_SIZE;
        /* Linux's defaults: no real-time priority, no nice below 0 for users. */
        p->p_rlim[RLIMIT_NICE][0] = p->p_rlim[RLIMIT_NICE][1] = 0;
        p->p_rlim[RLIMIT_RTPRIO][0] = p->p_rlim[RLIMIT_RTPRIO][1] = 0;
    }
    uint64_t nproc_limit = parent ? parent->p_rlim[RLIMIT_NPROC][0] : RLIM_INFINITY;
    mutex_enter(&proc_lock);
    int have = cr->cr_ruid != 0 ? procs_of_user(cr->cr_ruid) : 0;
    if (cr->cr_ruid != 0 && (have >= proc_maxuproc || (uint64_t)have >= nproc_limit)) {
        mutex_exit(&proc_lock);
        cred_rele(cr);
        mutex_destroy(&p->p_fdlock);
        spin_destroy(&p->p_siglock);
        spin_destroy(&p->p_itimer_lock);
        lwp_free(l);
        kfree(p);
        *err = -EAGAIN;
        return NULL;
    }
    p->p_pid = init ? 1 : alloc_pid();
    l->l_tid = p->p_pid;        /* the main thread's tid is the pid */
    lwp_link_locked(p, l);
    p->p_start_ns = uptime_ns();
    if (init)
        initproc = p;
    p->p_pgid = parent ? parent->p_pgid : p->p_pid;
    p->p_sid = parent ? parent->p_sid : p->p_pid;
    p->p_parent = parent;
    set_ppid_locked(p);
    if (parent) {
        p->p_sibling = parent->p_children;
        parent->p_children = p;
    }
    p->p_next = allproc;
    allproc = p;
    mutex_exit(&proc_lock);
    return p;
}

static void unlink_child(struct proc *parent, struct proc *c)
{
    for (struct proc **pp = &parent->p_children; *pp; pp = &(*pp)->p_sibling)
        if (*pp == c) {
            *pp = c->p_sibling;
            break;
        }
}

/* Take a zombie (or a process that never ran) off the process list and
 * its parent's children, before it is freed.  Under proc_lock. */
void proc_unlink_locked(struct proc *p)
{
    ASSERT_HELD(&proc_lock);
    for (struct proc **pp = &allproc; *pp; pp = &(*pp)->p_next)
        if (*pp == p) {
            *pp = p->p_next;
            break;
        }
    if (p->p_parent)
        unlink_child(p->p_parent, p);
}

/* Wait until p's thread is finished and off its CPU, and free it: after
 * this nothing charges p any more time. */
void proc_join(struct proc *p)
{
    if (p->p_thread)
        thread_join(p->p_thread);
    p->p_thread = NULL;
    /* No lock: p is unlinked and no /proc reader holds it, so nobody
     * else can find it to read these. */
    for (struct lwp *l = p->p_lwps; l; l = l->l_next) {
        __atomic_store_n(&p->p_utime, p->p_utime + load_cycles(&l->l_utime), __ATOMIC_RELAXED);
        __atomic_store_n(&p->p_stime, p->p_stime + load_cycles(&l->l_stime), __ATOMIC_RELAXED);
        l->l_utime = l->l_stime = 0;
    }
}

void proc_wait_unheld_locked(struct proc *p)
{
    ASSERT_HELD(&proc_lock);
    while (p->p_holds)                  /* a /proc reader (proc_hold) */
        sleep_on(&p->p_holds);
}

void proc_free_unheld(struct proc *p)
{
    proc_image_rele(p->p_image);
    proc_join(p);
    cred_rele(p->p_cred);
    mutex_destroy(&p->p_fdlock);
    spin_destroy(&p->p_siglock);
    spin_destroy(&p->p_itimer_lock);
    while (p->p_lwps) {
        struct lwp *l = p->p_lwps;
        p->p_lwps = l->l_next;
        lwp_free(l);
    }
    kfree(p);
}

void proc_free(struct proc *p)
{
    mutex_enter(&proc_lock);
    proc_wait_unheld_locked(p);
    mutex_exit(&proc_lock);
    proc_free_unheld(p);
}

/* ---- the reaper ---- */

/* Hand the zombie p, which nobody will wait for, to the reaper.  It leaves
 * the process list and its parent's children now, as a reaped process
 * does (kill finds it no more, its pid may be used again); the reaper
 * frees it once its thread is off its CPU.  Under proc_lock. */
static void to_reaper(struct proc *p)
{
    proc_unlink_locked(p);
    p->p_parent = NULL;
    set_ppid_locked(p);
    p->p_sibling = unwaited;
    unwaited = p;
    wakeup(&unwaited);
}

/* Hand the exited thread l (not its process's last) to the reaper, which
 * joins its kernel thread and frees it.  Under proc_lock. */
void reap_lwp_locked(struct lwp *l)
{
    l->l_reap_next = unwaited_lwps;
    unwaited_lwps = l;
    wakeup(&unwaited);
}

/* The reaper thread: free the zombies on the unwaited list, and the
 * exited threads. */
static void reaper_main(void *unused)
{
    (void)unused;
    mutex_enter(&proc_lock);
    for (;;) {
        while (!unwaited && !unwaited_lwps)
            sleep_on(&unwaited);
        if (unwaited_lwps) {
            struct lwp *l = unwaited_lwps;
            unwaited_lwps = l->l_reap_next;
            mutex_exit(&proc_lock);
            thread_join(l->l_thread);
            lwp_free(l);
            mutex_enter(&proc_lock);
            continue;
        }
        struct proc *p = unwaited;
        unwaited = p->p_sibling;
        mutex_exit(&proc_lock);
        proc_free(p);
        mutex_enter(&proc_lock);
    }
}

/* ---- exit and kill ---- */

void proc_kill_current(int sig, const char *why)
{
    struct proc *p = curproc();
    if (!p)
        return;
    int none = 0;
    if (__atomic_compare_exchange_n(&p->p_killsig, &none, sig, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        kprintf("proc: pid %d (%s) killed by signal %d: %s\n", p->p_pid, p->p_comm, sig, why);
    /* This thread dies at its return to user mode; its proc_exit posts
     * the kill to the others (sig_wake_all). */
    thread_ast_post(curthread(), THREAD_AST_SIGNAL);
}

/* siginfo's si_code and si_status for an exit's wait status. */
int cld_code(int status)
{
    return (status & 0x7f) ? ((status & 0x80) ? CLD_DUMPED : CLD_KILLED) : CLD_EXITED;
}

int cld_status(int status)
{
    return (status & 0x7f) ? (status & 0x7f) : (status >> 8) & 0xff;
}

/* The zombie p tells its parent: SIGCHLD (unless the parent ignores it)
 * and a wakeup for its wait.  A parent that ignores SIGCHLD or set
 * SA_NOCLDWAIT does not wait for its children: p goes to the reaper, and
 * the parent's wait (woken) may find it has no children left.  Under
 * proc_lock. */
static void tell_parent(struct proc *p)
{
    struct proc *parent = p->p_parent;
    const struct sigaction_k *sa = &parent->p_sigact[SIGCHLD - 1];
    if (sa->handler != SIG_IGN) {
        int st = p->p_status;
        struct ksiginfo si = {
            .si_signo = SIGCHLD,
            .si_code = cld_code(st),
            .si_pid = p->p_pid,
            .si_uid = (int)p->p_cred->cr_ruid,
            .si_status = cld_status(st),
        };
        sig_post(parent, SIGCHLD, &si);
    }
    if (sa->handler == SIG_IGN || (sa->flags & SA_NOCLDWAIT))
        to_reaper(p);
    wakeup(parent);
}

/* p's children go to init.  Without an init (p is init, or there is none)
 * they become orphans with no parent: the zombies among them go to the
 * reaper now, the living ones when they exit.  Under proc_lock. */
static void give_children_away(struct proc *p)
{
    struct proc *heir = initproc != p ? initproc : NULL;
    while (p->p_children) {
        struct proc *c = p->p_children;
        p->p_children = c->p_sibling;
        c->p_parent = heir;
        set_ppid_locked(c);
        if (c->p_pdeathsig) {       /* prctl(PR_SET_PDEATHSIG) */
            struct ksiginfo si = { .si_signo = c->p_pdeathsig, .si_code = SI_USER,
                                   .si_pid = p->p_pid };
            sig_post(c, c->p_pdeathsig, &si);
        }
        if (heir) {
            c->p_sibling = heir->p_children;
            heir->p_children = c;
            if (c->p_state == PS_ZOMBIE)
                tell_parent(c);         /* init learns of it as Linux's does */
        } else if (c->p_state == PS_ZOMBIE) {
            to_reaper(c);
        }
    }
}

/* p no longer uses its old address space (exec replaced it, or p exits)
 * and no CPU has it loaded for p: wait until no /proc reader is using it,
 * and wake a vfork parent waiting for this moment.  Under proc_lock (the
 * wait drops and retakes it).  Whether the address space is p's own to
 * free (it was not borrowed from a vfork parent) is the result; the
 * caller frees it after letting the lock go. */
static bool release_as_locked(struct proc *p)
{
    ASSERT_HELD(&proc_lock);
    bool borrowed = p->p_as_borrowed;
    p->p_as_borrowed = false;
    while (p->p_holds)                  /* a /proc reader may be using the old one */
        sleep_on(&p->p_holds);
    if (p->p_vfork_parent) {
        p->p_vfork_parent = NULL;
        wakeup(&p->p_vfork_parent);
    }
    return !borrowed;
}

static void release_as(struct proc *p, struct as *as)
{
    mutex_enter(&proc_lock);
    bool own = release_as_locked(p);
    mutex_exit(&proc_lock);
    if (as && own)
        as_destroy(as);
}

/* One trip through proc_lock for exec's point of no return: the new
 * image is committed and the old address space let go. */
void proc_exec_commit(struct proc *p, struct as *old)
{
    mutex_enter(&proc_lock);
    p->p_execed = true;
    bool own = release_as_locked(p);
    mutex_exit(&proc_lock);
    if (old && own)
        as_destroy(old);
}

/* The process's last thread ends it (lwp_exit, kern/proc/lwp.c). */
void proc_exit_last(int status)
{
    struct thread *t = curthread();
    struct proc *p = t->proc;
    if (p->p_pid == p->p_sid)
        ctty_session_exit(p->p_sid);     /* a session leader: the terminal is free */
    itimer_exit(p);
    ptimer_exit(p);
    fd_close_all(p);
    sem_exit(p);
    mutex_enter(&p->p_fdlock);          /* /proc reads p_cwd under this lock */
    struct vnode *cwd = p->p_cwd;
    p->p_cwd = NULL;
    mutex_exit(&p->p_fdlock);
    if (cwd)
        VN_RELE(cwd);
    proc_drop_root(p);
    struct as *as = p->p_as;
    t->as = NULL;
    as_activate(NULL);
    p->p_as = NULL;
    release_as(p, as);                  /* its memory free before the parent hears */
    mutex_enter(&proc_lock);
    ptrace_tracer_exit_locked(p);       /* its tracees go free (kern/proc/ptrace.c) */
    orphan_check_locked(p);
    if (p == initproc)
        initproc = NULL;        /* orphans from now on have no heir */
    give_children_away(p);
    p->p_status = status;
    acct_charge_running(curlwp());      /* every cycle, before the waiter looks */
    p->p_state = PS_ZOMBIE;
    if (p->p_parent)
        tell_parent(p);
    else if (p->p_spawned)
        wakeup(p);              /* proc_wait_spawned */
    else
        to_reaper(p);           /* an orphan without init */
    mutex_exit(&proc_lock);
    thread_exit();
}

int proc_apply(int pid, int (*fn)(struct proc *p, void *arg), void *arg)
{
    mutex_enter(&proc_lock);
    struct proc *p = find_proc_locked(pid);
    int err = p && p->p_thread ? fn(p, arg) : -ESRCH;
    mutex_exit(&proc_lock);
    return err;
}

/* Does init (pid 1) let a signal another process sends it go by?  As on
 * Linux, init takes from kill and its kin only the signals it has a
 * handler for: at the default action (SIGKILL and SIGSTOP included) a
 * stray `kill 1` would end init, and with it every shell, and leave the
 * machine idling.  The signal is dropped, the send still succeeds.  A
 * fault of init's own is not sent this way and still kills it.  The
 * caller holds proc_lock (initproc is [P]); p_sigact is read unlocked, as
 * sig_ignored reads it: a disposition changed at that moment may be seen
 * either way. */
bool proc_init_spares(const struct proc *p, int sig)
{
    return sig > 0 && p == initproc && p->p_sigact[sig - 1].handler == SIG_DFL;
}

bool proc_may_signal(const struct proc *from, const struct proc *to)
{
    const struct cred *a = from->p_cred, *b = to->p_cred;
    return a->cr_uid == 0 || a->cr_ruid == b->cr_ruid || a->cr_uid == b->cr_ruid ||
           a->cr_ruid == b->cr_uid || a->cr_uid == b->cr_uid;
}

static bool kill_matches(const struct proc *me, const struct proc *p, int pid)
{
    if (pid > 0)        /* a thread's tid names its process, as on Linux */
        return p->p_pid == pid || (p->p_nlwps > 1 && lwp_of_tid_locked(p, pid));
    if (pid == 0)
        return p->p_pgid == me->p_pgid;
    if (pid == -1)
        return p != me && p != initproc;
    return p->p_pgid == -pid;
}

int proc_signal_pgrp(int pgid, int sig)
{
    struct ksiginfo si = { .si_signo = sig, .si_code = SI_KERNEL };
    int found = 0;
    mutex_enter(&proc_lock);
    for (struct proc *p = allproc; p; p = p->p_next)
        if (p->p_pgid == pgid && p->p_state != PS_ZOMBIE) {
            found++;
            sig_post(p, sig, &si);
        }
    mutex_exit(&proc_lock);
    return found ? 0 : -ESRCH;
}

/* fatal is no longer used: every signal is queued and its disposition
 * decides at delivery (the parameter stays for the callers). */
int proc_signal(int pid, int sig, bool fatal)
{
    (void)fatal;
    struct proc *me = curproc();
    int found = 0, allowed = 0;
    struct ksiginfo si = {
        .si_signo = sig, .si_code = SI_USER,
        .si_pid = me ? me->p_pid : 0, .si_uid = me ? (int)me->p_cred->cr_ruid : 0,
    };
    mutex_enter(&proc_lock);
    for (struct proc *p = allproc; p; p = p->p_next) {
        if (!kill_matches(me, p, pid))
            continue;
        found++;
        if (!proc_may_signal(me, p))
            continue;
        allowed++;
        if (sig && p->p_state != PS_ZOMBIE && !proc_init_spares(p, sig))
            sig_post(p, sig, &si);
    }
    mutex_exit(&proc_lock);
    return !found ? -ESRCH : !allowed ? -EPERM : 0;
}

/* ---- fork ---- */

static void fork_child_start(void *arg)
{
    struct proc *p = arg;
    struct thread *t = curthread();
    struct lwp *l = p->p_lwps;  /* a new process has one thread */
    struct trapframe tf = *l->l_forktf;
    tf.rax = 0;                 /* fork returns 0 in the child */
    t->proc = p;
    t->lwp = l;
    /* proc_fork stored p_thread and l_thread before making this thread
     * runnable (the run queue's lock orders the stores before this). */
    lwp_enter_user(l, &tf);
}

/* Copy the calling process: the child's pid, or -errno.  ca (clone) may
 * give the child a new stack, FS base and tid words, or have it borrow the
 * caller's address space (vfork); NULL for fork. */
int proc_fork(struct trapframe *tf, const struct clone_req *ca)
{
    struct thread *t = curthread();
    struct proc *parent = t->proc;
    int err;
    struct proc *c = proc_alloc(parent, parent->p_cred, false, &err);
    if (!c)
        return err;
    struct lwp *l = c->p_lwps, *me = t->lwp;
    l->l_forktf = kmalloc(sizeof *tf);
    if (!l->l_forktf) {
        err = -ENOMEM;
        goto fail;
    }
    if (ca && ca->share_vm) {
        c->p_as = parent->p_as;
        c->p_as_borrowed = true;
    } else if (!(c->p_as = as_dup(parent->p_as, &err))) {
        goto fail;
    }
    *l->l_forktf = *tf;
    fpu_copy_current(l);
    l->l_fork_fsbase = t->fs_base;
    if (ca) {
        if (ca->newsp)
            l->l_forktf->rsp = ca->newsp;
        if (ca->settls)
            l->l_fork_fsbase = ca->tls;
        l->l_child_settid = ca->child_settid;
        l->l_clear_tid = ca->child_cleartid;
    }
    l->l_sigmask = me->l_sigmask;       /* the caller's mask: only it continues */
    l->l_ss_sp = me->l_ss_sp;           /* and its alternate signal stack */
    l->l_ss_size = me->l_ss_size;
    l->l_ss_flags = me->l_ss_flags;
    l->l_rseq = me->l_rseq;             /* and its rseq registration */
    l->l_rseq_len = me->l_rseq_len;
    l->l_rseq_sig = me->l_rseq_sig;
    c->p_umask = parent->p_umask;
    l->l_gs_base = me->l_gs_base;
    memcpy(c->p_comm, parent->p_comm, sizeof c->p_comm);
    proc_share_image(c, parent);
    prctl_fork(c, parent);
    c->p_cwd = parent->p_cwd;
    if (c->p_cwd)
        VN_HOLD(c->p_cwd);
    proc_inherit_admin(c, parent);     /* chroot and nice (kern/proc/sys_admin.c) */
    fd_dup_table(c, parent);
    if (ca && ca->vfork) {
        mutex_enter(&proc_lock);
        c->p_vfork_parent = parent;     /* before the child can exec or exit */
        mutex_exit(&proc_lock);
    }
    /* The child's thread is an embryo until it is stored here: the child
     * cannot run, exit and (its parent ignoring SIGCHLD) be reaped and
     * freed before that.  Storing after it could run wrote into a freed
     * struct proc and read the pid from it: a fork that returned 0 in the
     * parent now and then.  (It used to be made runnable under proc_lock,
     * which its first step took: on another CPU that step slept on the
     * lock the parent still held, a sleep and wakeup for every fork.) */
    int pid = c->p_pid;
    struct thread *ct = thread_create_embryo(c->p_comm, fork_child_start, c, t->affinity);
    if (ct) {
        ct->mempolicy = t->mempolicy;
        sched_inherit(ct, t);
        mutex_enter(&proc_lock);
        c->p_thread = l->l_thread = ct;
        c->p_nice = ct->sp.nice;        /* SCHED_RESET_ON_FORK may have raised it */
        ptrace_child_locked(l, ca ? ca->ptrace_event : PTRACE_EVENT_FORK);
        mutex_exit(&proc_lock);
        thread_run(ct);
    }
    if (!ct) {
        fd_close_all(c);
        if (c->p_cwd)
            VN_RELE(c->p_cwd);
        release_as(c, c->p_as);
        err = -ENOMEM;
        goto fail;
    }
    return pid;
fail:
    mutex_enter(&proc_lock);
    proc_unlink_locked(c);
    mutex_exit(&proc_lock);
    proc_free(c);
    return err;
}

/* ---- spawn (from the kernel) ---- */

struct spawn_req {
    struct proc *p;
    struct execargs ea;
    char path[PATH_MAX];
};

static void open_console(struct proc *p)
{
    struct vnode *vp;
    for (int fd = 0; fd < 3; fd++) {
        if (vn_open("/dev/console", NULL, O_RDWR, 0, &vp, p->p_cred) < 0)
            return;
        struct file *fp = file_alloc(vp, O_RDWR);
        if (!fp || fd_install(p, fp, fd, 0) != fd) {
            if (fp)
                file_rele(fp);
            else
                vn_close(vp, O_RDWR, p->p_cred);
            return;
        }
    }
}

static void spawn_start(void *arg)
{
    struct spawn_req *req = arg;
    struct proc *p = req->p;
    struct thread *t = curthread();
    t->proc = p;
    t->lwp = p->p_lwps;
    t->lwp->l_thread = t;
    thread_ast_post(t, THREAD_AST_SIGNAL);     /* a signal sent before l_thread was set */
    t->lwp->l_acct_stamp = rdtsc();
    open_console(p);
    struct trapframe tf;
    memset(&tf, 0, sizeof tf);
    int err = proc_exec(req->path, &req->ea, &tf);
    execargs_free(&req->ea);
    if (err) {
        kprintf("proc: pid %d cannot exec %s: error %d\n", p->p_pid, req->path, -err);
        kfree(req);
        proc_exit(W_EXITCODE(127));
    }
    kfree(req);
    intr_disable();
    user_switch(this_cpu(), NULL, t);
    user_enter(&tf);
}

static int pack_args(struct execargs *ea, char *const argv[], char *const envp[])
{
    int err = execargs_init(ea);
    for (int i = 0; !err && argv && argv[i]; i++, ea->argc++)
        err = execargs_add(ea, argv[i], strlen(argv[i]));
    for (int i = 0; !err && envp && envp[i]; i++, ea->envc++)
        err = execargs_add(ea, envp[i], strlen(envp[i]));
    return err;
}

int proc_spawn(const char *path, char *const argv[], char *const envp[], struct cred *cr,
               struct proc **pp)
{
    struct spawn_req *req = kzalloc(sizeof *req);
    if (!req)
        return -ENOMEM;
    strlcpy(req->path, path, sizeof req->path);
    int err = pack_args(&req->ea, argv, envp);
    bool init = !strcmp(path, init_path()) && !initproc;
    struct proc *p = err ? NULL : proc_alloc(NULL, cr, init, &err);
    if (!p) {
        execargs_free(&req->ea);
        kfree(req);
        return err;
    }
    req->p = p;
    p->p_spawned = true;
    const char *base = path;
    for (const char *q = path; *q; q++)
        if (*q == '/' && q[1])
            base = q + 1;
    strlcpy(p->p_comm, base, sizeof p->p_comm);
    p->p_cwd = rootdir;
    if (rootdir)
        VN_HOLD(rootdir);
    struct thread *pt = thread_create(p->p_comm, spawn_start, req, AFFINITY_ALL);
    mutex_enter(&proc_lock);
    p->p_thread = pt;
    mutex_exit(&proc_lock);
    if (!pt) {
        if (p->p_cwd)
            VN_RELE(p->p_cwd);
        mutex_enter(&proc_lock);
        proc_unlink_locked(p);
        if (initproc == p)
            initproc = NULL;
        mutex_exit(&proc_lock);
        proc_free(p);
        execargs_free(&req->ea);
        kfree(req);
        return -ENOMEM;
    }
    *pp = p;
    return 0;
}

/* ---- init ---- */

static const char *init_path(void)
{
    return opts.init[0] ? opts.init : "/sbin/init";
}

void init_run(void)
{
    const char *path = init_path();
    if (!strcmp(opts.init, "none") || !rootdir)
        return;
    struct vattr va;
    if (vn_stat(path, NULL, true, &va, kcred) < 0) {
        if (opts.init[0])
            kprintf("init: %s not found, no user space\n", path);
        return;
    }
    char *argv[] = { (char *)path, NULL };
    char *envp[] = { "PATH=/bin:/sbin:/usr/bin", "HOME=/", "TERM=vt100", NULL };
    struct proc *p;
    int err = proc_spawn(path, argv, envp, kcred, &p);
    if (err) {
        kprintf("init: cannot start %s: error %d\n", path, -err);
        return;
    }
    kprintf("init: started %s as pid %d\n", path, p->p_pid);
    int status = proc_wait_spawned(p);
    if (status & 0x7f)
        kprintf("init: killed by signal %d\n", status & 0x7f);
    else
        kprintf("init: exited with status %d\n", (status >> 8) & 0xff);
}
