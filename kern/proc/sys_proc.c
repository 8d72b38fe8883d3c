/*
 * System calls for processes and memory: fork, execve, exit, wait4, ids,
 * process groups, arch_prctl, brk, mmap, munmap, mprotect, uname, and the
 * signal calls musl's start-up makes.
 *
 * The signal calls (rt_sigaction, rt_sigprocmask, rt_sigpending,
 * rt_sigsuspend, pause, and nanosleep, which a signal interrupts) are
 * here; delivery, the frames and rt_sigreturn are in kern/proc/signal.c.
 * set_tid_address records the address and returns
 * the tid, but the word is not cleared at exit (no threads share memory).
 *
 * Locking is in the layers called: proc_lock (kern/proc/proc.c), the
 * address space's a_lock (kern/vm/as.c).
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/sched/thread.h>
#include <kern/trap.h>
#include <kern/arch.h>
#include <kern/kmem.h>
#include <kern/string.h>
#include <kern/errno.h>
#include <kern/kprintf.h>
#include <kern/panic.h>
#include <drivers/timer.h>

#define WNOHANG 1
#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define ARCH_GET_GS 0x1004

SYSCALL_DECL(sys_fork)
{
    return proc_fork(curtf(), NULL);
}

#define CLONE_VM             0x00000100
#define CLONE_FS             0x00000200
#define CLONE_FILES          0x00000400
#define CLONE_SIGHAND        0x00000800
#define CLONE_VFORK          0x00004000
#define CLONE_THREAD         0x00010000
#define CLONE_SETTLS         0x00080000
#define CLONE_PARENT_SETTID  0x00100000
#define CLONE_CHILD_CLEARTID 0x00200000
#define CLONE_CHILD_SETTID   0x01000000

/* clone(flags, newsp, parent_tid, child_tid, tls): a new process only.
 * Threads (CLONE_THREAD, or CLONE_VM without CLONE_VFORK) are -EINVAL:
 * one thread per process.  CLONE_VM|CLONE_VFORK (posix_spawn) becomes a
 * copy-on-write fork onto the given stack, and the parent does not wait
 * for the child's exec: the child's writes to memory stay its own. */
SYSCALL_DECL(sys_clone)
{
    uint64_t flags = a0;
    if ((flags & CLONE_THREAD) || ((flags & CLONE_VM) && !(flags & CLONE_VFORK)) ||
        (flags & (CLONE_FS | CLONE_FILES | CLONE_SIGHAND)))
        return -EINVAL;
    struct clone_req ca = {
        .newsp = a1,
        .settls = (flags & CLONE_SETTLS) != 0,
        .tls = a4,
        .child_settid = (flags & CLONE_CHILD_SETTID) ? a3 : 0,
        .child_cleartid = (flags & CLONE_CHILD_CLEARTID) ? a3 : 0,
    };
    int pid = proc_fork(curtf(), &ca);
    if (pid > 0 && (flags & CLONE_PARENT_SETTID))
        copyout(&pid, (void *)a2, sizeof pid);
    return pid;
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

SYSCALL_DECL(sys_execve)
{
    char *path = kmalloc(PATH_MAX);
    if (!path)
        return -ENOMEM;
    long n = copyinstr((const char *)a0, path, PATH_MAX);
    struct execargs ea;
    int err = n < 0 ? (int)n : execargs_init(&ea);
    if (n < 0) {
        kfree(path);
        return err;
    }
    if (!err)
        err = copy_strings(&ea, (const char *const *)a1, &ea.argc);
    if (!err)
        err = copy_strings(&ea, (const char *const *)a2, &ea.envc);
    if (!err)
        err = proc_exec(path, &ea, curtf());
    if (!err)
        sig_exec_reset(curproc());
    execargs_free(&ea);
    kfree(path);
    return err;
}

SYSCALL_DECL(sys_exit)
{
    proc_exit(W_EXITCODE((int)a0));
}

SYSCALL_DECL(sys_exit_group)
{
    proc_exit(W_EXITCODE((int)a0));
}

SYSCALL_DECL(sys_wait4)
{
    int status = 0;
    if (a2 & ~(uint64_t)(WNOHANG | 2 | 8 | 0x20000000 | 0x40000000 | 0x80000000))
        return -EINVAL;     /* WUNTRACED, WCONTINUED, __WNOTHREAD, __WALL, __WCLONE accepted */
    int r = proc_wait((int)a0, &status, (a2 & WNOHANG) != 0);
    if (r > 0 && a1 && copyout(&status, (void *)a1, sizeof status))
        return -EFAULT;
    if (r > 0 && a3) {
        static const char zero[144];
        if (copyout(zero, (void *)a3, sizeof zero))
            return -EFAULT;
    }
    return r;
}

SYSCALL_DECL(sys_getpid) { return curproc()->p_pid; }
SYSCALL_DECL(sys_getuid) { return curproc()->p_cred->cr_ruid; }
SYSCALL_DECL(sys_getgid) { return curproc()->p_cred->cr_rgid; }
SYSCALL_DECL(sys_geteuid) { return curproc()->p_cred->cr_uid; }
SYSCALL_DECL(sys_getegid) { return curproc()->p_cred->cr_gid; }

SYSCALL_DECL(sys_getppid)
{
    struct proc *p = curproc()->p_parent;
    return p ? p->p_pid : 0;
}

/* Process groups and sessions: the ids only, no job control (no terminal
 * driver yet).  These read and write fields under proc_lock through the
 * small helpers in proc.c would be tidier; a process changes only its
 * own ids or its children's, and a data race on an int is benign here. */
SYSCALL_DECL(sys_getpgrp) { return curproc()->p_pgid; }
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
    struct proc *p = curproc();
    int pid = (int)a0, pgid = (int)a1;
    if (pgid < 0)
        return -EINVAL;
    if (pid != 0 && pid != p->p_pid)
        return -ESRCH;      /* children: not yet */
    if (p->p_sid == p->p_pid)
        return -EPERM;      /* a session leader */
    p->p_pgid = pgid ? pgid : p->p_pid;
    return 0;
}

SYSCALL_DECL(sys_setsid)
{
    struct proc *p = curproc();
    if (p->p_pgid == p->p_pid)
        return -EPERM;
    p->p_sid = p->p_pgid = p->p_pid;
    return p->p_sid;
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
        curproc()->p_gs_base = a1;
        wrmsr(MSR_KGS_BASE, a1);
        return 0;
    case ARCH_GET_GS:
        return copyout(&curproc()->p_gs_base, (void *)a1, sizeof(uint64_t));
    default:
        return -EINVAL;
    }
}

SYSCALL_DECL(sys_set_tid_address)
{
    curproc()->p_clear_tid = a0;
    return curproc()->p_pid;
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
            spin_unlock(&p->p_siglock);
        }
    }
    return 0;
}

SYSCALL_DECL(sys_rt_sigprocmask)
{
    int how = (int)a0;
    struct proc *p = curproc();
    if (a3 != 8)
        return -EINVAL;
    uint64_t set = 0, old = p->p_sigmask;
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
        __atomic_store_n(&p->p_sigmask, mask & ~UNBLOCKABLE, __ATOMIC_RELAXED);
    }
    return 0;
}

SYSCALL_DECL(sys_rt_sigpending)
{
    struct proc *p = curproc();
    if (a1 != 8)
        return -EINVAL;
    uint64_t pend = __atomic_load_n(&p->p_sigpending, __ATOMIC_ACQUIRE) & p->p_sigmask;
    return copyout(&pend, (void *)a0, sizeof pend);
}

/* Sleep until a signal is to be taken; always -EINTR. */
static int64_t wait_for_signal(struct proc *p)
{
    while (!sig_interrupting(p))
        sig_sleep((const void *)&p->p_sigsaved);     /* a channel of its own */
    return -EINTR;
}

/* rt_sigsuspend: wait under a temporary mask; the old one comes back when
 * the handler returns (sig_deliver). */
SYSCALL_DECL(sys_rt_sigsuspend)
{
    struct proc *p = curproc();
    uint64_t set;
    if (a1 != 8)
        return -EINVAL;
    if (copyin((void *)a0, &set, sizeof set))
        return -EFAULT;
    p->p_sigsaved = p->p_sigmask;
    p->p_restoremask = true;
    __atomic_store_n(&p->p_sigmask, set & ~UNBLOCKABLE, __ATOMIC_RELAXED);
    return wait_for_signal(p);
}

struct timespec_k {
    int64_t sec, nsec;
};

/* Sleep for the relative time at ureq, polling for signals: 0, or -EINTR
 * with the time left at urem (when given). */
static int64_t sleep_interruptible(uint64_t ureq, uint64_t urem)
{
    struct timespec_k ts;
    if (copyin((void *)ureq, &ts, sizeof ts))
        return -EFAULT;
    if (ts.sec < 0 || ts.nsec < 0 || ts.nsec >= 1000000000)
        return -EINVAL;
    uint64_t now = uptime_ns(), end = now + (uint64_t)ts.sec * 1000000000UL + (uint64_t)ts.nsec;
    struct proc *p = curproc();
    while ((now = uptime_ns()) < end) {
        if (sig_interrupting(p)) {
            uint64_t left = end - now;
            struct timespec_k rem = { (int64_t)(left / 1000000000UL), (int64_t)(left % 1000000000UL) };
            if (urem && copyout(&rem, (void *)urem, sizeof rem))
                return -EFAULT;
            return -EINTR;
        }
        thread_yield();
    }
    return 0;
}

SYSCALL_DECL(sys_nanosleep_sig)
{
    return sleep_interruptible(a0, a1);
}

/* clock_nanosleep: relative sleeps here; absolute ones (TIMER_ABSTIME)
 * in sys_misc.c (they notice only a kill). */
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

struct utsname {
    char sysname[65], nodename[65], release[65], version[65], machine[65], domainname[65];
};

SYSCALL_DECL(sys_uname)
{
    struct utsname u;
    memset(&u, 0, sizeof u);
    strlcpy(u.sysname, "Tempest", sizeof u.sysname);
    strlcpy(u.nodename, "tempest", sizeof u.nodename);
    strlcpy(u.release, "0.1", sizeof u.release);
    strlcpy(u.version, "SVR4 MP style", sizeof u.version);
    strlcpy(u.machine, "x86_64", sizeof u.machine);
    return copyout(&u, (void *)a0, sizeof u);
}

/* ---- memory ---- */

SYSCALL_DECL(sys_brk)
{
    return as_set_brk(curproc()->p_as, a0);
}

SYSCALL_DECL(sys_mmap)
{
    vaddr_t addr = a0;
    size_t len = a1;
    int prot = (int)a2, flags = (int)a3, fd = (int)a4;
    uint64_t off = a5;
    if (len == 0 || (off & (PAGE_SIZE - 1)) || !(flags & (MAP_SHARED | MAP_PRIVATE)))
        return -EINVAL;
    if (!(flags & MAP_FIXED))
        addr = ALIGN_DOWN(addr, PAGE_SIZE);     /* only a hint */
    if (flags & MAP_ANONYMOUS)
        return as_map(curproc()->p_as, addr, len, prot, flags, NULL, 0, 0);
    struct file *fp = fd_get(curproc(), fd);
    if (!fp)
        return -EBADF;
    int64_t r;
    if (fp->f_vp->v_type != VREG)
        r = -ENODEV;
    else if ((fp->f_flags & O_ACCMODE) == O_WRONLY)
        r = -EACCES;
    else if ((flags & MAP_SHARED) && (prot & PROT_WRITE) && (fp->f_flags & O_ACCMODE) != O_RDWR)
        r = -EACCES;
    else if (flags & MAP_SHARED)
        r = -EINVAL;        /* shared file mappings: not yet (no page cache) */
    else
        r = as_map(curproc()->p_as, addr, len, prot, flags, fp->f_vp, off, ~0UL - off);
    file_rele(fp);
    return r;
}

SYSCALL_DECL(sys_munmap)
{
    return as_unmap(curproc()->p_as, a0, a1);
}

SYSCALL_DECL(sys_mprotect)
{
    return as_protect(curproc()->p_as, a0, a1, (int)a2);
}
