/*
 * System calls for processes and memory: fork, vfork, clone, execve,
 * exit, wait4, waitid, ids, process groups, times and getrusage,
 * arch_prctl, brk, mmap, munmap, mprotect, uname, and the signal calls
 * musl's start-up makes.
 *
 * The signal calls (rt_sigaction, rt_sigprocmask, rt_sigpending,
 * rt_sigsuspend, pause, and nanosleep, which a signal interrupts) are
 * here; delivery, the frames and rt_sigreturn are in kern/proc/signal.c.
 * Threads (clone with CLONE_THREAD, exit, gettid, set_tid_address) are
 * kern/proc/lwp.c's; the signal mask is the calling thread's.
 *
 * Locking is in the layers called: proc_lock (kern/proc/proc.c), the
 * address space's a_lock (kern/vm/as.c).
 */
#include <kern/lock/pvspin.h>
#include <kern/lock/spinlock.h>
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/vfs/vfs.h>
#include <kern/event/event.h>
#include <kern/vfs/cred.h>
#include <kern/sched/thread.h>
#include <kern/arch/trap.h>
#include <kern/arch/arch.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <kern/lib/kprintf.h>
#include <kern/arch/panic.h>
#include <drivers/platform/timer.h>

#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define ARCH_GET_GS 0x1004

SYSCALL_DECL(sys_fork)
{
    int pid = proc_fork(curtf(), NULL);
    if (pid > 0)
        ptrace_event(PTRACE_EVENT_FORK, (uint64_t)pid);
    return pid;
}

#define CLONE_VM             0x00000100
#define CLONE_FS             0x00000200
#define CLONE_FILES          0x00000400
#define CLONE_SIGHAND        0x00000800
#define CLONE_VFORK          0x00004000
#define CLONE_THREAD         0x00010000
#define CLONE_SYSVSEM        0x00040000
#define CLONE_SETTLS         0x00080000
#define CLONE_PARENT_SETTID  0x00100000
#define CLONE_CHILD_CLEARTID 0x00200000
#define CLONE_CHILD_SETTID   0x01000000

/* Linux's refusals (copy_process): a thread shares the signal handlers,
 * and shared handlers need shared memory.  Beyond Linux, a thread here
 * shares everything of its process (CLONE_FS and CLONE_FILES too), and a
 * new process shares nothing (CLONE_VM only with CLONE_VFORK): -EINVAL. */
static bool clone_flags_valid(uint64_t flags)
{
    if ((flags & CLONE_THREAD) && !(flags & CLONE_SIGHAND))
        return false;
    if ((flags & CLONE_SIGHAND) && !(flags & CLONE_VM))
        return false;
    if (flags & CLONE_THREAD)
        return (flags & (CLONE_FS | CLONE_FILES)) == (CLONE_FS | CLONE_FILES) &&
               !(flags & CLONE_VFORK);
    return !((flags & CLONE_VM) && !(flags & CLONE_VFORK)) &&
           !(flags & (CLONE_FS | CLONE_FILES | CLONE_SIGHAND));
}

/* What a tracer is told of a clone (Linux's rule): a vfork, a fork (a
 * new process that signals SIGCHLD at its exit), or a clone. */
static int clone_event(uint64_t flags)
{
    if (flags & CLONE_VFORK)
        return PTRACE_EVENT_VFORK;
    if (!(flags & CLONE_THREAD) && (flags & 0xff) == SIGCHLD)
        return PTRACE_EVENT_FORK;
    return PTRACE_EVENT_CLONE;
}

/* clone(flags, newsp, parent_tid, child_tid, tls).  CLONE_THREAD (with
 * CLONE_VM, CLONE_FS, CLONE_FILES and CLONE_SIGHAND: pthread_create's
 * set) is a new thread of the caller's process (kern/proc/lwp.c), the
 * rest a new process.  CLONE_VM|CLONE_VFORK (vfork, posix_spawn) is
 * a child running in the caller's address space (on the given stack, if
 * any) while the caller sleeps until the child execs or exits
 * (kern/proc/proc.c); CLONE_VFORK alone makes the caller wait the same
 * way for a copy. */
static int64_t do_clone(uint64_t flags, uint64_t newsp, uint64_t parent_tid,
                        uint64_t child_tid, uint64_t tls)
{
    if (!clone_flags_valid(flags))
        return -EINVAL;
    struct clone_req ca = {
        .newsp = newsp,
        .settls = (flags & CLONE_SETTLS) != 0,
        .tls = tls,
        .child_settid = (flags & CLONE_CHILD_SETTID) ? child_tid : 0,
        .child_cleartid = (flags & CLONE_CHILD_CLEARTID) ? child_tid : 0,
        .parent_settid = (flags & CLONE_PARENT_SETTID) ? parent_tid : 0,
        .share_vm = (flags & CLONE_VM) != 0,
        .vfork = (flags & CLONE_VFORK) != 0,
        .ptrace_event = clone_event(flags),
    };
    int pid = (flags & CLONE_THREAD) ? lwp_create(curtf(), &ca) : proc_fork(curtf(), &ca);
    if (pid > 0 && (flags & CLONE_PARENT_SETTID) && !(flags & CLONE_THREAD))
        copyout(&pid, (void *)parent_tid, sizeof pid);  /* a thread's is stored before it runs */
    if (pid > 0)
        ptrace_event(ca.ptrace_event, (uint64_t)pid);
    if (pid > 0 && ca.vfork) {
        proc_vfork_wait(pid);
        ptrace_event(PTRACE_EVENT_VFORK_DONE, (uint64_t)pid);
    }
    return pid;
}

SYSCALL_DECL(sys_clone)
{
    return do_clone(a0, a1, a2, a3, a4);
}

/* clone3's struct clone_args (CLONE_ARGS_SIZE_VER2: 88 bytes). */
struct clone_args_u {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
    uint64_t set_tid, set_tid_size, cgroup;
};
#define CLONE_ARGS_SIZE_VER0    64
#define CLONE_PIDFD             0x00001000
#define CSIGNAL                 0xff

/* Read clone3's arguments of the size the caller names: 0 or -errno. */
static int clone_args_copyin(uint64_t uaddr, uint64_t size, struct clone_args_u *ca)
{
    if (size < CLONE_ARGS_SIZE_VER0)
        return -EINVAL;
    if (size > PAGE_SIZE)
        return -E2BIG;
    return copyin_struct(ca, sizeof *ca, (const void *)uaddr, size);
}

/* clone3(args, size): clone with its arguments in a structure, and the
 * stack given as its lowest address and size.  What Tempest lacks is
 * refused as a Linux without it refuses: CLONE_PIDFD, CLONE_INTO_CGROUP
 * and CLONE_CLEAR_SIGHAND (any flag above the low 32 bits) EINVAL; a
 * chosen tid (set_tid) EPERM for a user, EINVAL for root. */
SYSCALL_DECL(sys_clone3)
{
    struct clone_args_u ca;
    int err = clone_args_copyin(a0, a1, &ca);
    if (err)
        return err;
    if ((ca.flags >> 32) || (ca.flags & (CSIGNAL | CLONE_PIDFD)) || ca.exit_signal > NSIG ||
        (ca.exit_signal && (ca.flags & CLONE_THREAD)))
        return -EINVAL;
    if ((ca.stack == 0) != (ca.stack_size == 0))
        return -EINVAL;
    if (ca.set_tid || ca.set_tid_size)
        return ca.set_tid_size > 32 ? -EINVAL : curproc()->p_cred->cr_uid != 0 ? -EPERM : -EINVAL;
    uint64_t newsp = ca.stack ? ca.stack + ca.stack_size : 0;
    return do_clone(ca.flags | ca.exit_signal, newsp, ca.parent_tid, ca.child_tid, ca.tls);
}

SYSCALL_DECL(sys_vfork)
{
    return sys_clone(CLONE_VM | CLONE_VFORK | SIGCHLD, 0, 0, 0, 0, 0);
}

#define REBOOT_MAGIC1   0xfee1dead
#define REBOOT_POWEROFF 0x4321fedc
#define REBOOT_HALT     0xcdef0123
#define REBOOT_RESTART  0x01234567

/* reboot: power off (halt and restart too: the harness has only power
 * off) after syncing and unmounting the file systems.  Root only.  From
 * init (pid 1), the usual caller, the request is noted and init exits:
 * kmain powers off once init is gone, when its files and working
 * directory are released and the root unmounts clean. */
SYSCALL_DECL(sys_reboot)
{
    if (curproc()->p_cred->cr_uid != 0)
        return -EPERM;
    if ((uint32_t)a0 != REBOOT_MAGIC1)
        return -EINVAL;
    if ((uint32_t)a2 != REBOOT_POWEROFF && (uint32_t)a2 != REBOOT_HALT &&
        (uint32_t)a2 != REBOOT_RESTART)
        return -EINVAL;
    kprintf("reboot: pid %d asked for power-off\n", curproc()->p_pid);
    if (curproc()->p_pid == 1) {
        __atomic_store_n(&init_poweroff, true, __ATOMIC_RELEASE);
        proc_exit(W_EXITCODE(0));
    }
    vfs_unmount_all();
    pvspin_report();
    kprintf("poweroff: powering off\n");
    machine_poweroff();
}

static int64_t wait_for_signal(struct proc *p);

/* pause: wait for a signal to be taken. */
SYSCALL_DECL(sys_pause)
{
    return wait_for_signal(curproc());
}

/* Copy a NULL-terminated user vector of strings into ea. */
static int copy_strings(struct execargs *ea, const char *const *uvec, int *count)
{
    if (!uvec)
        return 0;
    char *tmp = kmalloc(PATH_MAX * 4);
    if (!tmp)
        return -ENOMEM;
    int err = 0;
    for (int i = 0;; i++) {
        const char *s;
        if ((err = copyin(&uvec[i], &s, sizeof s)))
            break;
        if (!s)
            break;
        if (i >= 4096) {
            err = -E2BIG;
            break;
        }
        long n = copyinstr(s, tmp, PATH_MAX * 4);
        if (n < 0) {
            err = n == -ENAMETOOLONG ? -E2BIG : (int)n;
            break;
        }
        if ((err = execargs_add(ea, tmp, n)))
            break;
        (*count)++;
    }
    kfree(tmp);
    return err;
}

/* execve and execveat: the arguments copied in, then the exec (from
 * dir, or of self, when execveat says so). */
static int64_t exec_with(const char *path, struct vnode *dir, struct vnode *self, bool nofollow,
                         uint64_t uargv, uint64_t uenvp)
{
    struct execargs ea;
    int err = execargs_init(&ea);
    if (!err)
        err = copy_strings(&ea, (const char *const *)uargv, &ea.argc);
    if (!err)
        err = copy_strings(&ea, (const char *const *)uenvp, &ea.envc);
    int old_tid = curlwp()->l_tid;              /* a thread's exec takes the pid */
    if (!err && !(err = proc_exec_begin())) {   /* one thread execs at a time */
        err = proc_exec_at(path, dir, self, nofollow, &ea, curtf());
        if (err)
            proc_exec_abort();
    }
    if (!err) {
        sig_exec_reset(curproc());
        ptimer_exit(curproc());     /* exec deletes the POSIX timers */
        __atomic_store_n(&curproc()->p_membarrier, 0, __ATOMIC_RELAXED);
    }
    execargs_free(&ea);
    if (!err)
        ptrace_event(PTRACE_EVENT_EXEC, (uint64_t)old_tid);
    return err;
}

SYSCALL_DECL(sys_execve)
{
    char *path = kmalloc(PATH_MAX);
    if (!path)
        return -ENOMEM;
    long n = copyinstr((const char *)a0, path, PATH_MAX);
    int64_t r = n < 0 ? n : exec_with(path, NULL, NULL, false, a1, a2);
    kfree(path);
    return r;
}

/*
 * execveat(dirfd, path, argv, envp, flags): a relative path from dirfd
 * (AT_FDCWD: the cwd), an absolute one as execve; with AT_EMPTY_PATH
 * and "" the file dirfd names itself (fexecve; an O_PATH descriptor
 * will do); AT_SYMLINK_NOFOLLOW refuses a final link (ELOOP).  The
 * program is told it ran as /dev/fd/N or /dev/fd/N/PATH, Linux's names.
 */
SYSCALL_DECL(sys_execveat)
{
    int dirfd = (int)a0, flags = (int)a4;
    char *path = kmalloc(PATH_MAX), *name = kmalloc(PATH_MAX);
    long n = path && name ? copyinstr((const char *)a1, path, PATH_MAX) : -ENOMEM;
    int64_t r = n < 0 ? n : n == 0 && !(flags & AT_EMPTY_PATH) ? -ENOENT : 0;
    if (!r && (flags & ~(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)))
        r = -EINVAL;        /* after the name, as Linux */
    struct file *fp = NULL;
    struct vnode *dir = NULL, *self = NULL;
    if (!r && path[0] != '/') {
        if (dirfd == AT_FDCWD)
            self = n == 0 ? curproc()->p_cwd : NULL;
        else if (!(fp = fd_get_raw(curproc(), dirfd)))
            r = -EBADF;
        else if (n == 0)
            self = fp->f_vp;
        else if (fp->f_vp->v_type != VDIR)
            r = -ENOTDIR;
        else
            dir = fp->f_vp;
    }
    if (!r && fp)
        snprintf(name, PATH_MAX, n ? "/dev/fd/%d/%s" : "/dev/fd/%d", dirfd, path);
    if (!r)
        r = exec_with(fp ? name : path, dir, self, flags & AT_SYMLINK_NOFOLLOW, a2, a3);
    if (fp)
        file_rele(fp);
    kfree(path);
    kfree(name);
    return r;
}

SYSCALL_DECL(sys_exit)
{
    ptrace_event(PTRACE_EVENT_EXIT, W_EXITCODE((int)a0));
    lwp_exit(W_EXITCODE((int)a0));
}

SYSCALL_DECL(sys_exit_group)
{
    ptrace_event(PTRACE_EVENT_EXIT, W_EXITCODE((int)a0));
    proc_exit(W_EXITCODE((int)a0));
}

/* ---- waiting ---- */

/* struct rusage: the times of a wait's child, the rest zero. */
static int copyout_rusage(uint64_t uaddr, uint64_t utime_ns, uint64_t stime_ns)
{
    int64_t ru[18];
    memset(ru, 0, sizeof ru);
    ru[0] = (int64_t)(utime_ns / 1000000000UL);
    ru[1] = (int64_t)(utime_ns % 1000000000UL / 1000);
    ru[2] = (int64_t)(stime_ns / 1000000000UL);
    ru[3] = (int64_t)(stime_ns % 1000000000UL / 1000);
    return copyout(ru, (void *)uaddr, sizeof ru);
}

/* wait4(pid, status, options, rusage): pid > 0 that child, 0 our group,
 * -1 any child, < -1 the group -pid.  Exits are always waited for;
 * WUNTRACED (a stop) and WCONTINUED (a continue) are passed on to
 * proc_wait, which reports each once. */
SYSCALL_DECL(sys_wait4)
{
    int pid = (int)a0, options = (int)a2;     /* ints, as Linux takes them */
    if ((unsigned)options & ~(WNOHANG | WUNTRACED | WCONTINUED | __WNOTHREAD | __WALL | __WCLONE))
        return -EINVAL;
    if (pid == (int)0x80000000)
        return -ESRCH;          /* -pid would overflow; Linux says so */
    struct wait_req req = { .options = options | WEXITED };
    if (pid > 0) {
        req.idtype = P_PID;
        req.id = pid;
    } else if (pid == -1) {
        req.idtype = P_ALL;
    } else {
        req.idtype = P_PGID;
        req.id = -pid;          /* 0: the caller's group */
    }
    struct wait_info info;
    int r = proc_wait(&req, &info);
    if (r > 0 && a1 && copyout(&info.status, (void *)a1, sizeof info.status))
        return -EFAULT;
    if (r > 0 && a3 && copyout_rusage(a3, info.utime_ns, info.stime_ns))
        return -EFAULT;
    return r;
}

/* The request of waitid(idtype, id, infop, options, rusage), or -errno. */
static int waitid_request(int idtype, int id, int options, struct wait_req *req)
{
    if ((unsigned)options & ~(WNOHANG | WNOWAIT | WEXITED | WSTOPPED | WCONTINUED |
                              __WNOTHREAD | __WALL | __WCLONE))
        return -EINVAL;
    if (!(options & (WEXITED | WSTOPPED | WCONTINUED)))
        return -EINVAL;
    *req = (struct wait_req){ .idtype = idtype, .id = id, .options = options };
    switch (idtype) {
    case P_ALL:
        return 0;
    case P_PID:
        return id > 0 ? 0 : -EINVAL;
    case P_PGID:
        return id >= 0 ? 0 : -EINVAL;       /* 0: the caller's group */
    case 3:                                 /* P_PIDFD: there are no pidfds */
        return id >= 0 ? -EBADF : -EINVAL;
    default:
        return -EINVAL;
    }
}

/* waitid: 0 or -errno.  As Linux, the siginfo's si_signo, si_errno,
 * si_code, si_pid, si_uid and si_status are written whatever the outcome
 * (zeros when nothing was reported: WNOHANG, or an error), and nothing
 * else of it. */
SYSCALL_DECL(sys_waitid)
{
    struct wait_req req;
    struct wait_info info;
    memset(&info, 0, sizeof info);
    int r = waitid_request((int)a0, (int)a1, (int)a3, &req);
    if (!r)
        r = proc_wait(&req, &info);
    if (r > 0 && a4 && copyout_rusage(a4, info.utime_ns, info.stime_ns))
        return -EFAULT;
    if (a2) {
        int head[3] = { r > 0 ? SIGCHLD : 0, 0, r > 0 ? info.code : 0 };
        int body[3] = { info.pid, info.uid, info.si_status };
        if (copyout(head, (void *)a2, sizeof head) ||
            copyout(body, (char *)a2 + 16, sizeof body))
            return -EFAULT;
    }
    return r > 0 ? 0 : r;
}

/* ---- times ---- */

/* times: user and system time of the caller and of its reaped children
 * in clock ticks (100 a second, musl's CLK_TCK); returns the ticks since
 * boot. */
SYSCALL_DECL(sys_times)
{
    const uint64_t ns_per_tick = 1000000000UL / 100;
    if (a0) {
        uint64_t u, s, cu, cs;
        proc_cputime(&u, &s);
        proc_children_cputime(&cu, &cs);
        int64_t tms[4] = { (int64_t)(u / ns_per_tick), (int64_t)(s / ns_per_tick),
                           (int64_t)(cu / ns_per_tick), (int64_t)(cs / ns_per_tick) };
        if (copyout(tms, (void *)a0, sizeof tms))
            return -EFAULT;
    }
    return (int64_t)(uptime_ns() / ns_per_tick);
}

#define RUSAGE_SELF     0
#define RUSAGE_CHILDREN (-1)
#define RUSAGE_THREAD   1

/* getrusage: the times only (the other fields are zero). */
SYSCALL_DECL(sys_getrusage)
{
    int who = (int)a0;
    uint64_t u, s;
    if (who == RUSAGE_SELF || who == RUSAGE_THREAD)
        proc_cputime_of(who == RUSAGE_THREAD, &u, &s);
    else if (who == RUSAGE_CHILDREN)
        proc_children_cputime(&u, &s);
    else
        return -EINVAL;
    return copyout_rusage(a1, u, s);
}

SYSCALL_DECL(sys_getpid) { return curproc()->p_pid; }
SYSCALL_DECL(sys_getuid) { return curproc()->p_cred->cr_ruid; }
SYSCALL_DECL(sys_getgid) { return curproc()->p_cred->cr_rgid; }
SYSCALL_DECL(sys_geteuid) { return curproc()->p_cred->cr_uid; }
SYSCALL_DECL(sys_getegid) { return curproc()->p_cred->cr_gid; }

SYSCALL_DECL(sys_getppid)
{
    return proc_getppid();
}

/* Process groups and sessions: the ids, read and changed under proc_lock
 * (kern/proc/proc.c). */
SYSCALL_DECL(sys_getpgrp)
{
    int pgid, sid;
    proc_ids(curproc()->p_pid, &pgid, &sid);
    return pgid;
}

SYSCALL_DECL(sys_getsid)
{
    int pgid, sid;
    int err = proc_ids((int)a0 ? (int)a0 : curproc()->p_pid, &pgid, &sid);
    return err ? err : sid;
}
SYSCALL_DECL(sys_getpgid)
{
    int pgid, sid;
    int err = proc_ids((int)a0 ? (int)a0 : curproc()->p_pid, &pgid, &sid);
    return err ? err : pgid;
}

SYSCALL_DECL(sys_setpgid)
{
    return proc_setpgid((int)a0, (int)a1);
}

SYSCALL_DECL(sys_setsid)
{
    return proc_setsid();
}

SYSCALL_DECL(sys_arch_prctl)
{
    struct thread *t = curthread();
    switch (a0) {
    case ARCH_SET_FS:
        if (a1 >= USER_TOP)
            return -EPERM;
        t->fs_base = a1;
        wrmsr(MSR_FS_BASE, a1);
        return 0;
    case ARCH_GET_FS:
        return copyout(&t->fs_base, (void *)a1, sizeof t->fs_base);
    case ARCH_SET_GS:
        /* In the kernel the user's GS base waits in KERNEL_GS_BASE
         * (swapgs); user_switch reloads it for each process. */
        if (a1 >= USER_TOP)
            return -EPERM;
        t->lwp->l_gs_base = a1;
        wrmsr(MSR_KGS_BASE, a1);
        return 0;
    case ARCH_GET_GS:
        return copyout(&t->lwp->l_gs_base, (void *)a1, sizeof(uint64_t));
    default:
        return -EINVAL;
    }
}

/* ---- signals (the machinery is in kern/proc/signal.c) ---- */

#define SIG_BLOCK   0
#define SIG_UNBLOCK 1
#define SIG_SETMASK 2
#define UNBLOCKABLE (SIGBIT(SIGKILL) | SIGBIT(SIGSTOP))

SYSCALL_DECL(sys_rt_sigaction)
{
    int sig = (int)a0;
    struct proc *p = curproc();
    if (a3 != 8 || sig <= 0 || sig > NSIG)
        return -EINVAL;
    struct sigaction_k sa;
    if (a1 && copyin((void *)a1, &sa, sizeof sa))
        return -EFAULT;
    if (a1 && (sig == SIGKILL || sig == SIGSTOP))
        return -EINVAL;
    struct sigaction_k old = p->p_sigact[sig - 1];
    if (a2 && copyout(&old, (void *)a2, sizeof old))
        return -EFAULT;
    if (a1) {
        sa.mask &= ~UNBLOCKABLE;
        p->p_sigact[sig - 1] = sa;
        /* POSIX: setting SIG_IGN (or a default of ignore) discards a
         * pending instance. */
        if (sa.handler == SIG_IGN || (sa.handler == SIG_DFL && sig_default_ignores(sig))) {
            spin_lock(&p->p_siglock);
            __atomic_and_fetch(&p->p_sigpending, ~SIGBIT(sig), __ATOMIC_RELEASE);
            for (struct lwp *l = p->p_lwps; l; l = l->l_next)
                __atomic_and_fetch(&l->l_sigpending, ~SIGBIT(sig), __ATOMIC_RELEASE);
            spin_unlock(&p->p_siglock);
        }
    }
    return 0;
}

SYSCALL_DECL(sys_rt_sigprocmask)
{
    int how = (int)a0;
    struct lwp *l = curlwp();
    if (a3 != 8)
        return -EINVAL;
    uint64_t set = 0, old = l->l_sigmask;
    if (a1) {
        if (how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK)
            return -EINVAL;
        if (copyin((void *)a1, &set, sizeof set))
            return -EFAULT;
    }
    if (a2 && copyout(&old, (void *)a2, sizeof old))
        return -EFAULT;
    if (a1) {
        uint64_t mask = how == SIG_BLOCK ? old | set : how == SIG_UNBLOCK ? old & ~set : set;
        __atomic_store_n(&l->l_sigmask, mask & ~UNBLOCKABLE, __ATOMIC_RELAXED);
    }
    return 0;
}

SYSCALL_DECL(sys_rt_sigpending)
{
    struct proc *p = curproc();
    struct lwp *l = curlwp();
    if (a1 != 8)
        return -EINVAL;
    uint64_t pend = (__atomic_load_n(&p->p_sigpending, __ATOMIC_ACQUIRE) |
                     __atomic_load_n(&l->l_sigpending, __ATOMIC_ACQUIRE)) & l->l_sigmask;
    return copyout(&pend, (void *)a0, sizeof pend);
}

/* Sleep until a signal is to be taken (a stop and continue does not
 * count); always -EINTR. */
static int64_t wait_for_signal(struct proc *p)
{
    while (!sig_sleep_interrupted(p))
        sig_sleep((const void *)&curlwp()->l_sigsaved);     /* a channel of its own */
    return -EINTR;
}

/* rt_sigsuspend: wait under a temporary mask; the old one comes back when
 * the handler returns (sig_deliver). */
SYSCALL_DECL(sys_rt_sigsuspend)
{
    struct lwp *l = curlwp();
    uint64_t set;
    if (a1 != 8)
        return -EINVAL;
    if (copyin((void *)a0, &set, sizeof set))
        return -EFAULT;
    l->l_sigsaved = l->l_sigmask;
    l->l_restoremask = true;
    __atomic_store_n(&l->l_sigmask, set & ~UNBLOCKABLE, __ATOMIC_RELAXED);
    return wait_for_signal(curproc());
}

struct timespec_k {
    int64_t sec, nsec;
};

/* rt_sigtimedwait(set, info, timeout, sigsetsize): kern/proc/signal.c
 * waits; here the arguments, with Linux's errors. */
SYSCALL_DECL(sys_rt_sigtimedwait)
{
    uint64_t set, deadline = UINT64_MAX;
    if (a3 != 8)
        return -EINVAL;
    if (copyin((void *)a0, &set, sizeof set))
        return -EFAULT;
    if (a2) {
        struct timespec_k ts;
        if (copyin((void *)a2, &ts, sizeof ts))
            return -EFAULT;
        if (ts.sec < 0 || ts.nsec < 0 || ts.nsec >= 1000000000)
            return -EINVAL;
        uint64_t ns = (uint64_t)ts.sec >= INT64_MAX / 1000000000UL ? INT64_MAX
                    : (uint64_t)ts.sec * 1000000000UL + (uint64_t)ts.nsec;
        uint64_t now = uptime_ns();
        deadline = ns > UINT64_MAX - now ? UINT64_MAX : now + ns;
    }
    return sig_timedwait(set & ~UNBLOCKABLE, deadline, a1);
}

/* Sleep for the relative time at ureq on a timed sleep (sleep_for_ns,
 * kern/proc/sys_timer.c): 0, or -EINTR with the time left at urem (when
 * given).  A stop and continue does not end it (the time stopped counts,
 * as on Linux). */
static int64_t sleep_interruptible(uint64_t ureq, uint64_t urem)
{
    struct timespec_k ts;
    if (copyin((void *)ureq, &ts, sizeof ts))
        return -EFAULT;
    if (ts.sec < 0 || ts.nsec < 0 || ts.nsec >= 1000000000)
        return -EINVAL;
    uint64_t left, ns = (uint64_t)ts.sec >= INT64_MAX / 1000000000UL ? INT64_MAX
                      : (uint64_t)ts.sec * 1000000000UL + (uint64_t)ts.nsec;
    int64_t r = sleep_for_ns(ns, &left);
    if (r == -EINTR) {
        struct timespec_k rem = { (int64_t)(left / 1000000000UL), (int64_t)(left % 1000000000UL) };
        if (urem && copyout(&rem, (void *)urem, sizeof rem))
            return -EFAULT;
    }
    return r;
}

SYSCALL_DECL(sys_nanosleep_sig)
{
    return sleep_interruptible(a0, a1);
}

/* clock_nanosleep: relative sleeps here; absolute ones (TIMER_ABSTIME)
 * in sys_misc.c (a signal ends them the same way). */
SYSCALL_DECL(sys_clock_nanosleep_sig)
{
    if ((int)a0 < 0 || (int)a0 > 7 || (a1 & 1))
        return sys_clock_nanosleep(a0, a1, a2, a3, a4, a5);
    return sleep_interruptible(a2, a3);
}

SYSCALL_DECL(sys_sched_yield)
{
    thread_yield();
    return 0;
}

#define UTS_LEN 64

struct utsname {
    char sysname[UTS_LEN + 1], nodename[UTS_LEN + 1], release[UTS_LEN + 1];
    char version[UTS_LEN + 1], machine[UTS_LEN + 1], domainname[UTS_LEN + 1];
};

/* The host and domain names (sethostname, setdomainname): one for the
 * machine, as Linux's outside any UTS namespace; Linux's defaults. */
LOCK_CLASS(uts_class, "uts", LK_SPIN);
static spinlock_t uts_lock = SPINLOCK_INIT(&uts_class);
static char uts_nodename[UTS_LEN + 1] = "tempest";      /* [uts_lock] */
static char uts_domainname[UTS_LEN + 1] = "(none)";     /* [uts_lock] */

SYSCALL_DECL(sys_uname)
{
    struct utsname u;
    memset(&u, 0, sizeof u);
    strlcpy(u.sysname, "Tempest", sizeof u.sysname);
    strlcpy(u.release, "0.1", sizeof u.release);
    strlcpy(u.version, "SVR4 MP style", sizeof u.version);
    strlcpy(u.machine, "x86_64", sizeof u.machine);
    spin_lock(&uts_lock);
    memcpy(u.nodename, uts_nodename, sizeof u.nodename);
    memcpy(u.domainname, uts_domainname, sizeof u.domainname);
    spin_unlock(&uts_lock);
    return copyout(&u, (void *)a0, sizeof u);
}

/* sethostname and setdomainname: root only (EPERM), at most UTS_LEN
 * bytes (EINVAL; a negative length too), taken as given (no NUL needed). */
static int64_t set_uts_name(char *dst, uint64_t uaddr, int64_t len)
{
    if (curproc()->p_cred->cr_uid != 0)
        return -EPERM;
    if (len < 0 || len > UTS_LEN)
        return -EINVAL;
    char name[UTS_LEN + 1] = { 0 };
    if (copyin((void *)uaddr, name, (size_t)len))
        return -EFAULT;
    spin_lock(&uts_lock);
    memcpy(dst, name, sizeof name);
    spin_unlock(&uts_lock);
    return 0;
}

SYSCALL_DECL(sys_sethostname)
{
    return set_uts_name(uts_nodename, a0, (int)a1);
}

SYSCALL_DECL(sys_setdomainname)
{
    return set_uts_name(uts_domainname, a0, (int)a1);
}

/* ---- memory ---- */

SYSCALL_DECL(sys_brk)
{
    return as_set_brk(curproc()->p_as, a0);
}

/* The mmap flags Linux knows, with the huge page size bits (the others
 * are ignored, as Linux does, except under MAP_SHARED_VALIDATE). */
#define MAP_TYPE            0x03
#define MAP_SHARED_VALIDATE 0x03
#define MAP_KNOWN_FLAGS     0xfc17f933UL

SYSCALL_DECL(sys_mmap)
{
    vaddr_t addr = a0;
    size_t len = a1;
    int prot = (int)a2, flags = (int)a3, fd = (int)a4;
    uint64_t off = a5;
    int type = flags & MAP_TYPE;
    if (type == MAP_SHARED_VALIDATE && ((uint64_t)(uint32_t)flags & ~MAP_KNOWN_FLAGS))
        return -EOPNOTSUPP;
    flags &= ~MAP_KERN_NOWRITE;
    if (len == 0 || (off & (PAGE_SIZE - 1)) || type == 0)
        return -EINVAL;
    if (!(flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)))
        addr = ALIGN_DOWN(addr, PAGE_SIZE);     /* only a hint */
    if (flags & MAP_ANONYMOUS)
        return as_map(curproc()->p_as, addr, len, prot, flags, NULL, 0, 0);
    struct file *fp = fd_get(curproc(), fd);
    if (!fp)
        return -EBADF;
    int64_t r;
    int mode = fp->f_flags & O_ACCMODE;
    bool shared = flags & MAP_SHARED;
    /* Linux's order: the access checks, then whether the file can be mapped. */
    if (shared && (prot & PROT_WRITE) && (mode != O_RDWR || (fp->f_flags & O_APPEND)))
        r = -EACCES;
    else if (mode == O_WRONLY)
        r = -EACCES;
    else if (vn_is_memfd(fp->f_vp))
        r = memfd_mmap(fp->f_vp, addr, len, prot, flags, off);     /* kern/event/memfd.c */
    else if (fp->f_vp->v_type != VREG)
        r = -ENODEV;
    else if (fp->f_vp->v_vfsp && fp->f_vp->v_vfsp->vfs_sw->nommap)
        r = -ENODEV;                /* /proc's text files, as Linux's */
    else
        r = as_map(curproc()->p_as, addr, len, prot,
                   flags | (shared && mode != O_RDWR ? MAP_KERN_NOWRITE : 0), fp->f_vp, off,
                   ~0UL - off);
    file_rele(fp);
    return r;
}

SYSCALL_DECL(sys_msync)
{
    return as_sync(curproc()->p_as, a0, a1, (int)a2);
}

/* mincore, in Linux's order: EINVAL for an unaligned start, ENOMEM for
 * a range past user space, then a page of the vector at a time. */
SYSCALL_DECL(sys_mincore)
{
    if (a0 & (PAGE_SIZE - 1))
        return -EINVAL;
    if (a0 >= USER_TOP || a1 > USER_TOP - a0)
        return -ENOMEM;
    size_t pages = ALIGN_UP(a1, PAGE_SIZE) / PAGE_SIZE;
    if (pages && (a2 >= USER_TOP || pages > USER_TOP - a2))
        return -EFAULT;
    uint8_t *vec = pages ? kmalloc(PAGE_SIZE) : NULL;
    if (pages && !vec)
        return -ENOMEM;
    int err = 0;
    for (size_t done = 0; done < pages && !err;) {
        size_t n = MIN(pages - done, (size_t)PAGE_SIZE);
        err = as_mincore(curproc()->p_as, a0 + done * PAGE_SIZE, n, vec);
        if (!err && copyout(vec, (void *)(a2 + done), n))
            err = -EFAULT;
        done += n;
    }
    kfree(vec);
    return err;
}

SYSCALL_DECL(sys_munmap)
{
    return as_unmap(curproc()->p_as, a0, a1);
}

SYSCALL_DECL(sys_mprotect)
{
    return as_protect(curproc()->p_as, a0, a1, (int)a2);
}
