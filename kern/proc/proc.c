/*
 * Processes.
 *
 * Theory.  A process is one kernel thread that spends its life in user
 * mode, plus what the Unix process model gives it: an address space
 * (kern/vm/as.c), credentials, a descriptor table, a current directory, a
 * parent and children, a process group and session.  A process is made by
 * fork (a copy of the caller, address space copy-on-write) or by
 * proc_spawn (from the kernel: pid 1, the ktests), and its image is
 * replaced by exec (kern/proc/exec.c).
 *
 * Exit (proc_exit) runs on the exiting thread: it closes the descriptors,
 * drops the current directory, loads the kernel's page tables and frees
 * the address space, gives its children to init, then becomes a zombie
 * and wakes its parent, with SIGCHLD (kern/proc/signal.c) unless the
 * parent ignores SIGCHLD: then the zombie is marked p_autoreap and wait4
 * frees it without reporting it.  The parent's wait4 reaps the zombie: it joins the
 * thread (thread_join waits until it is fully off its CPU, then frees its
 * stack) and frees the struct proc.  A process the kernel spawned has no
 * parent; proc_wait_spawned reaps it the same way.  A process whose parent
 * is gone and with no init to adopt it stays a zombie (a small leak, only
 * possible in tests that leave orphans).
 *
 * Locks.  proc_lock (a sleep mutex, class "proc") guards the process list,
 * pids, parent/child links, process groups and exit state; wait4 sleeps on
 * the parent with sig_sleep under it (a signal interrupts the wait), and
 * an exiting child calls wakeup on its parent under it.  It is taken before a descriptor table's p_fdlock
 * and never while an address space's lock is held.
 */
#include <kern/proc/proc.h>
#include <kern/vm/as.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/sched/thread.h>
#include <kern/sleep.h>
#include <kern/kmem.h>
#include <kern/string.h>
#include <kern/arch.h>
#include <kern/trap.h>
#include <kern/cpu.h>
#include <kern/errno.h>
#include <kern/kprintf.h>
#include <kern/options.h>
#include <kern/panic.h>

LOCK_CLASS(proc_lock_class, "proc", LK_MUTEX_SLEEP);
LOCK_CLASS(fdtable_lock_class, "fdtable", LK_MUTEX_SLEEP);

static struct mutex proc_lock;
static struct proc *allproc;        /* [P] */
static int next_pid = 2;            /* [P] pid 1 is kept for init */
static struct proc *initproc;       /* [P] pid 1 once started */
volatile bool init_poweroff;        /* [a] init called reboot */
int proc_maxuproc = 64;

extern void user_enter(struct trapframe *tf) __noreturn;
static const char *init_path(void);

void proc_init(void)
{
    mutex_init(&proc_lock, &proc_lock_class, 0, "proc");
}

struct proc *curproc(void)
{
    struct thread *t = curthread();
    return t ? t->proc : NULL;
}

static int alloc_pid(void)
{
    for (;;) {
        int pid = next_pid++;
        if (next_pid >= 32768)
            next_pid = 2;
        bool used = false;
        for (struct proc *p = allproc; p && !used; p = p->p_next)
            used = p->p_pid == pid || p->p_pgid == pid || p->p_sid == pid;
        if (!used)
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
    if (!p) {
        *err = -ENOMEM;
        return NULL;
    }
    mutex_init(&p->p_fdlock, &fdtable_lock_class, 0, "fdtable");
    sig_init_proc(p, parent);   /* fork copies dispositions and mask */
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
    }
    uint64_t nproc_limit = parent ? parent->p_rlim[RLIMIT_NPROC][0] : RLIM_INFINITY;
    mutex_enter(&proc_lock);
    int have = cr->cr_ruid != 0 ? procs_of_user(cr->cr_ruid) : 0;
    if (cr->cr_ruid != 0 && (have >= proc_maxuproc || (uint64_t)have >= nproc_limit)) {
        mutex_exit(&proc_lock);
        cred_rele(cr);
        mutex_destroy(&p->p_fdlock);
        spin_destroy(&p->p_siglock);
        kfree(p);
        *err = -EAGAIN;
        return NULL;
    }
    p->p_pid = init ? 1 : alloc_pid();
    if (init)
        initproc = p;
    p->p_pgid = parent ? parent->p_pgid : p->p_pid;
    p->p_sid = parent ? parent->p_sid : p->p_pid;
    p->p_parent = parent;
    if (parent) {
        p->p_sibling = parent->p_children;
        parent->p_children = p;
    }
    p->p_next = allproc;
    allproc = p;
    mutex_exit(&proc_lock);
    return p;
}

/* Unlink a zombie (or a process that never ran) and free it.  Called
 * with proc_lock held; returns with it held. */
static void proc_unlink_locked(struct proc *p)
{
    for (struct proc **pp = &allproc; *pp; pp = &(*pp)->p_next)
        if (*pp == p) {
            *pp = p->p_next;
            break;
        }
    if (p->p_parent)
        for (struct proc **pp = &p->p_parent->p_children; *pp; pp = &(*pp)->p_sibling)
            if (*pp == p) {
                *pp = p->p_sibling;
                break;
            }
}

static void proc_free(struct proc *p)
{
    if (p->p_thread)
        thread_join(p->p_thread);
    cred_rele(p->p_cred);
    mutex_destroy(&p->p_fdlock);
    spin_destroy(&p->p_siglock);
    kfree(p->p_forktf);
    kfree(p);
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
}

static void give_children_away(struct proc *p)
{
    struct proc *heir = (initproc && initproc != p) ? initproc : NULL;
    bool zombies = false;
    while (p->p_children) {
        struct proc *c = p->p_children;
        p->p_children = c->p_sibling;
        c->p_parent = heir;
        if (heir) {
            c->p_sibling = heir->p_children;
            heir->p_children = c;
        }
        zombies |= c->p_state == PS_ZOMBIE;
    }
    if (heir && zombies)
        wakeup(heir);
}

/* SIGCHLD to the parent of the zombie p, or (parent ignoring SIGCHLD or
 * with SA_NOCLDWAIT) mark p to be reaped without a status.  Under
 * proc_lock. */
static void tell_parent(struct proc *p)
{
    struct proc *parent = p->p_parent;
    const struct sigaction_k *sa = &parent->p_sigact[SIGCHLD - 1];
    if (sa->handler == SIG_IGN || (sa->flags & SA_NOCLDWAIT)) {
        p->p_autoreap = true;
        return;
    }
    int st = p->p_status;
    struct ksiginfo si = {
        .si_signo = SIGCHLD,
        .si_code = (st & 0x7f) ? ((st & 0x80) ? CLD_DUMPED : CLD_KILLED) : CLD_EXITED,
        .si_pid = p->p_pid,
        .si_uid = (int)p->p_cred->cr_ruid,
        .si_status = (st & 0x7f) ? (st & 0x7f) : (st >> 8) & 0xff,
    };
    sig_post(parent, SIGCHLD, &si);
}

void proc_exit(int status)
{
    struct thread *t = curthread();
    struct proc *p = t->proc;
    fd_close_all(p);
    if (p->p_cwd) {
        VN_RELE(p->p_cwd);
        p->p_cwd = NULL;
    }
    struct as *as = p->p_as;
    t->as = NULL;
    as_activate(NULL);
    p->p_as = NULL;
    if (as)
        as_destroy(as);
    mutex_enter(&proc_lock);
    give_children_away(p);
    p->p_status = status;
    p->p_state = PS_ZOMBIE;
    if (p->p_parent)
        tell_parent(p);
    wakeup(p->p_parent ? (void *)p->p_parent : (void *)p);
    mutex_exit(&proc_lock);
    thread_exit();
}

int proc_ids(int pid, int *pgid, int *sid)
{
    int err = -ESRCH;
    mutex_enter(&proc_lock);
    for (struct proc *p = allproc; p; p = p->p_next)
        if (p->p_pid == pid) {
            *pgid = p->p_pgid;
            *sid = p->p_sid;
            err = 0;
            break;
        }
    mutex_exit(&proc_lock);
    return err;
}

static bool may_signal(const struct proc *from, const struct proc *to)
{
    const struct cred *a = from->p_cred, *b = to->p_cred;
    return a->cr_uid == 0 || a->cr_ruid == b->cr_ruid || a->cr_uid == b->cr_ruid ||
           a->cr_ruid == b->cr_uid || a->cr_uid == b->cr_uid;
}

static bool kill_matches(const struct proc *me, const struct proc *p, int pid)
{
    if (pid > 0)
        return p->p_pid == pid;
    if (pid == 0)
        return p->p_pgid == me->p_pgid;
    if (pid == -1)
        return p != me && p != initproc;
    return p->p_pgid == -pid;
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
        if (!may_signal(me, p))
            continue;
        allowed++;
        if (sig && p->p_state != PS_ZOMBIE)
            sig_post(p, sig, &si);
    }
    mutex_exit(&proc_lock);
    return !found ? -ESRCH : !allowed ? -EPERM : 0;
}

/* ---- waiting ---- */

static bool wait_matches(struct proc *parent, struct proc *c, int pid)
{
    if (pid > 0)
        return c->p_pid == pid;
    if (pid == 0)
        return c->p_pgid == parent->p_pgid;
    if (pid < -1)
        return c->p_pgid == -pid;
    return true;
}

/* wait4 without the copyout: the pid reaped (and *status), 0 with
 * nohang and nothing to reap, or -ECHILD. */
int proc_wait(int pid, int *status, bool nohang)
{
    struct proc *me = curproc();
    mutex_enter(&proc_lock);
    for (;;) {
        bool any = false;
    rescan:
        for (struct proc *c = me->p_children; c; c = c->p_sibling) {
            if (!wait_matches(me, c, pid))
                continue;
            if (c->p_state == PS_ZOMBIE && c->p_autoreap) {
                /* Nobody wanted its status (SIGCHLD ignored): free it and
                 * look again. */
                proc_unlink_locked(c);
                mutex_exit(&proc_lock);
                proc_free(c);
                mutex_enter(&proc_lock);
                goto rescan;
            }
            any = true;
            if (c->p_state != PS_ZOMBIE)
                continue;
            proc_unlink_locked(c);
            mutex_exit(&proc_lock);
            int got = c->p_pid;
            *status = c->p_status;
            proc_free(c);
            return got;
        }
        if (!any) {
            mutex_exit(&proc_lock);
            return -ECHILD;
        }
        if (nohang) {
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
    if (p == initproc)
        initproc = NULL;
    mutex_exit(&proc_lock);
    int status = p->p_status;
    proc_free(p);
    return status;
}

/* ---- fork ---- */

static void fork_child_start(void *arg)
{
    struct proc *p = arg;
    struct thread *t = curthread();
    struct trapframe tf = *p->p_forktf;
    tf.rax = 0;                 /* fork returns 0 in the child */
    t->proc = p;
    t->as = p->p_as;
    t->fs_base = p->p_fork_fsbase;
    as_activate(p->p_as);
    if (p->p_child_settid) {
        int pid = p->p_pid;
        copyout(&pid, (void *)p->p_child_settid, sizeof pid);     /* CLONE_CHILD_SETTID */
    }
    intr_disable();
    user_switch(this_cpu(), NULL, t);
    user_enter(&tf);
}

/* Copy the calling process: the child's pid, or -errno.  ca (clone) may
 * give the child a new stack, FS base and tid words; NULL for fork. */
int proc_fork(struct trapframe *tf, const struct clone_req *ca)
{
    struct thread *t = curthread();
    struct proc *parent = t->proc;
    int err;
    struct proc *c = proc_alloc(parent, parent->p_cred, false, &err);
    if (!c)
        return err;
    c->p_forktf = kmalloc(sizeof *tf);
    c->p_as = c->p_forktf ? as_dup(parent->p_as, &err) : NULL;
    if (!c->p_forktf)
        err = -ENOMEM;
    if (!c->p_as)
        goto fail;
    *c->p_forktf = *tf;
    fpu_copy_current(c);
    c->p_fork_fsbase = t->fs_base;
    if (ca) {
        if (ca->newsp)
            c->p_forktf->rsp = ca->newsp;
        if (ca->settls)
            c->p_fork_fsbase = ca->tls;
        c->p_child_settid = ca->child_settid;
        c->p_clear_tid = ca->child_cleartid;
    }
    c->p_umask = parent->p_umask;
    c->p_gs_base = parent->p_gs_base;
    memcpy(c->p_comm, parent->p_comm, sizeof c->p_comm);
    c->p_cwd = parent->p_cwd;
    if (c->p_cwd)
        VN_HOLD(c->p_cwd);
    fd_dup_table(c, parent);
    c->p_thread = thread_create(c->p_comm, fork_child_start, c, AFFINITY_ALL);
    if (!c->p_thread) {
        fd_close_all(c);
        if (c->p_cwd)
            VN_RELE(c->p_cwd);
        as_destroy(c->p_as);
        err = -ENOMEM;
        goto fail;
    }
    return c->p_pid;
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
    const char *base = path;
    for (const char *q = path; *q; q++)
        if (*q == '/' && q[1])
            base = q + 1;
    strlcpy(p->p_comm, base, sizeof p->p_comm);
    p->p_cwd = rootdir;
    if (rootdir)
        VN_HOLD(rootdir);
    p->p_thread = thread_create(p->p_comm, spawn_start, req, AFFINITY_ALL);
    if (!p->p_thread) {
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
