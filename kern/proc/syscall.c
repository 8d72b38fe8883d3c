/*
 * The boundary between user mode and the kernel.
 *
 * Theory.  User programs enter by SYSCALL (kern/proc/syscall_entry.asm) with the
 * Linux x86-64 convention: number in rax, arguments in rdi, rsi, rdx, r10,
 * r8, r9, the result or -errno back in rax.  The entry builds a struct
 * trapframe at the top of the thread's kernel stack, exactly where the
 * CPU puts the frame of an interrupt or exception from user mode (TSS
 * rsp0), so curtf() finds the user registers however the thread entered.
 * The return is SYSRET when the frame allows it and IRET otherwise (and
 * always after an interrupt or exception).
 *
 * Kernel threads are not preempted (kern/sched/sched.c), but user
 * threads are: the clock tick that finds one running (in user mode or in
 * a system call) asks it to yield the CPU before its next return to user
 * mode, where it holds no lock.  A process marked to die (p_killsig)
 * exits at the same place.
 *
 * The way out.  Everything a return to user mode may have to do first --
 * yield the CPU, take a signal, die of a kill, exit for another thread's
 * exec, park for a stop -- is announced in one word of the thread, its
 * ast (struct thread, THREAD_AST_*), so the exit of a system call or trap
 * loads one word and branches (issue 18); only a set word leads to
 * user_ast, which takes the word (exchanging it with 0) and then looks at
 * the signal state itself.  Who sets it: the dispatcher
 * (THREAD_AST_PREEMPT: the clock tick of the scheduling classes, a
 * higher-priority thread made runnable), and everyone who makes a signal, a kill, an exit or
 * a stop pending for a thread (kern/proc/signal.c, sig_ast_lwp; after the
 * change, so the thread that clears the word sees it).  user_ast sets
 * THREAD_AST_SIGNAL again while anything is pending, even blocked
 * (sig_work_pending), so a mask change that unblocks a pending signal
 * needs no post of its own: the call that changed the mask finds the word
 * set on its way out.
 *
 * Faults in user mode go to the address space (as_fault); one that cannot
 * be resolved raises SIGSEGV (SIGBUS for a file page past the end of the
 * file or unreadable, SIGKILL when memory ran out), and the other
 * exceptions raise their signal (sig_fault, kern/proc/signal.c).  Pending
 * signals are taken at every return to user mode (sig_deliver); a system
 * call a signal interrupted (-ERESTARTSYS) is rewound to be repeated, and
 * rt_sigreturn (number 15) restores the whole frame and leaves through
 * IRET (the frame's vector says so to kern/proc/syscall_entry.asm).
 *
 * The context switch (user_switch) saves the user x87/SSE registers of a
 * process thread it leaves and loads those of the one it enters, sets the
 * next thread's kernel stack in the TSS and for SYSCALL, loads its address
 * space (as_activate) and its FS base.
 *
 * CPU time is charged at the switch (user_switch), the clock tick
 * (acct_tick, a tick hook) and the exit, not at these crossings, which
 * call nothing for it (kern/proc/acct.c says why: exact totals, a
 * tick-sampled split).
 *
 * The number stays in the frame's error slot (unused by SYSCALL frames):
 * Linux's orig_rax, which ptrace shows and a tracer may change.  A thread
 * its tracer resumed with PTRACE_SYSCALL (thread->ptrace_syscalls) stops
 * before the call and after it (kern/proc/ptrace.c).  A frame with TF set
 * (a tracer's single step) leaves through IRET: SYSRET would trap before
 * the first user instruction.
 *
 * Unknown system calls return -ENOSYS and are counted per number
 * (unknown_calls[], atomic; read with syscall_unknown_count in the kernel
 * and TEMPEST_SYS_ENOSYS_COUNTS from user mode).
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/sched/thread.h>
#include <kern/sched/sched.h>
#include <kern/arch/trap.h>
#include <kern/arch/cpu.h>
#include <kern/arch/arch.h>
#include <kern/arch/smp.h>
#include <kern/arch/panic.h>
#include <kern/lib/errno.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/abi/tempest_abi.h>

_Static_assert(offsetof(struct cpu, kstack_top) == 8, "kern/proc/syscall_entry.asm CPU_KSTACK_TOP");
_Static_assert(offsetof(struct cpu, user_rsp) == 16, "kern/proc/syscall_entry.asm CPU_USER_RSP");
_Static_assert(sizeof(struct trapframe) == 22 * 8, "trapframe layout");

#define MSR_STAR    0xC0000081
#define MSR_LSTAR   0xC0000082
#define MSR_FMASK   0xC0000084
#define CR4_SMEP    (1UL << 20)
#define CR4_SMAP    (1UL << 21)

extern void syscall_entry(void);

static volatile uint64_t unknown_calls[NSYSCALL];     /* [a] */

static void user_tick(const struct trapframe *tf);

void user_mode_init(void)
{
    static const struct trap_user_hooks hooks = {
        .exception = user_trap,
        .leave = user_trap_return,
    };
    trap_set_user_hooks(&hooks);
    sched_set_switch_hook(user_switch);
    if (!smp_add_tick_hook(user_tick))
        panic("user_mode_init: no tick hook left for CPU-time accounting");
}

void user_cpu_init(void)
{
    wrmsr(MSR_EFER, rdmsr(MSR_EFER) | 1);       /* SCE: SYSCALL enabled */
    /* SYSCALL loads CS = 0x08, SS = 0x10; SYSRET CS = 0x13 + 16 = 0x23
     * (user code), SS = 0x13 + 8 = 0x1b (user data), as the GDT has them. */
    wrmsr(MSR_STAR, ((uint64_t)(SEL_UDATA - 8) << 48) | ((uint64_t)SEL_KCODE << 32));
    wrmsr(MSR_LSTAR, (uint64_t)syscall_entry);
    wrmsr(MSR_FMASK, RFLAGS_IF | (1UL << 8) | (1UL << 10) | (1UL << 18));  /* IF TF DF AC */
    fpu_cpu_init();
    uint32_t a, b, c, d;
    cpuid(0, 0, &a, &b, &c, &d);
    if (a < 7)
        return;
    cpuid(7, 0, &a, &b, &c, &d);
    uint64_t cr4 = read_cr4();
    if (b & (1u << 7))
        cr4 |= CR4_SMEP;
    if (b & (1u << 20)) {
        cr4 |= CR4_SMAP;
        smap_enabled = true;    /* the same answer on every CPU */
    }
    write_cr4(cr4);
}

struct trapframe *thread_user_frame(struct thread *t)
{
    return (struct trapframe *)((char *)t->kstack + KSTACK_SIZE) - 1;
}

struct trapframe *curtf(void)
{
    return thread_user_frame(curthread());
}

void user_switch(struct cpu *c, struct thread *prev, struct thread *next)
{
    acct_switch(prev, next);    /* CPU time (kern/proc/proc.c) */
    /* User SSE/AVX state is switched eagerly: the kernel uses no SSE, so
     * the registers still hold prev's user values here (kern/proc/fpu.c). */
    fpu_switch(prev, next);
    if (next->kstack) {
        c->kstack_top = (uint64_t)next->kstack + KSTACK_SIZE;
        c->tss.rsp[0] = c->kstack_top;
    }
    as_activate(next->as);
    if (next->lwp) {
        wrmsr(MSR_FS_BASE, next->fs_base);
        wrmsr(MSR_KGS_BASE, next->lwp->l_gs_base);
        if (next->lwp->l_rseq)
            thread_ast_post(next, THREAD_AST_RSEQ);     /* its CPU ids (kern/proc/rseq.c) */
    }
}

/* ---- exceptions from user mode ---- */

static int signal_of(uint64_t vector)
{
    switch (vector) {
    case T_DIVIDE: case T_FPU: case T_SIMD: return SIGFPE;
    case T_INVALIDOP: return SIGILL;
    case T_DEBUG: case T_BREAKPOINT: return SIGTRAP;
    case T_ALIGN: return SIGBUS;
    default: return SIGSEGV;
    }
}

/* Kills for memory one fault may cause before its own process is taken. */
#define OOM_VICTIMS 4

/* A fault of the current process resolved: when no page is to be had,
 * the largest process is killed and the fault tried again once its pages
 * are back (kern/proc/oom.c), whether the fault came from user mode or
 * from a copy to or from user memory. */
static int fault_or_kill_other(struct as *as, vaddr_t addr, int access)
{
    int err = as_fault(as, addr, access);
    for (int n = 0; err == -ENOMEM && n < OOM_VICTIMS && oom_kill_other(); n++)
        err = as_fault(as, addr, access);                   /* waits for the pages back */
    return err;
}

static void user_fault(struct trapframe *tf, vaddr_t addr)
{
    intr_enable();
    int access = (tf->error & 2) ? FA_WRITE : (tf->error & 16) ? FA_EXEC : FA_READ;
    int err = fault_or_kill_other(curthread()->as, addr, access);
    if (err == -ENOMEM) {
        proc_kill_current(SIGKILL, "out of memory");
    } else if (err && err != -EFAULT && err != -EACCES) {
        /* A file page past the end of the file, or one that could not be read. */
        char why[96];
        snprintf(why, sizeof why, "bus error at 0x%lx (rip 0x%lx)", addr, tf->rip);
        sig_fault(SIGBUS, BUS_ADRERR, addr, why);
    } else if (err) {
        char why[96];
        snprintf(why, sizeof why, "segmentation fault at 0x%lx (rip 0x%lx)", addr, tf->rip);
        sig_fault(SIGSEGV, err == -EACCES ? SEGV_ACCERR : SEGV_MAPERR, addr, why);
    }
    intr_disable();
}

/* The si_code of an exception's signal (Linux's: FPE_INTDIV, ILL_ILLOPN,
 * BUS_ADRALN, TRAP_TRACE for a single step, or SI_KERNEL for int3 and a
 * general protection fault: gdb tells its breakpoints by SI_KERNEL). */
static int code_of(uint64_t vector)
{
    switch (vector) {
    case T_DIVIDE: case T_ALIGN: return 1;
    case T_INVALIDOP: case T_DEBUG: return 2;
    case T_FPU: case T_SIMD: return 0;
    default: return 0x80;
    }
}

/* A page fault in kernel mode: ours only inside copyin/copyout. */
static bool kernel_copy_fault(struct trapframe *tf, vaddr_t addr)
{
    int err;
    if (!copy_fault_fixup(tf, addr, fault_or_kill_other, &err))
        return false;
    if (err == -ENOMEM)
        proc_kill_current(SIGKILL, "out of memory");
    return true;
}

bool user_trap(struct trapframe *tf)
{
    vaddr_t addr = tf->vector == T_PAGEFAULT ? read_cr2() : 0;
    if (!(tf->cs & 3))
        return tf->vector == T_PAGEFAULT && kernel_copy_fault(tf, addr);
    if (!curthread()->proc)
        return false;
    if (tf->vector == T_PAGEFAULT) {
        user_fault(tf, addr);
    } else if (tf->vector == T_NMI || tf->vector == T_MCE) {
        return false;
    } else {
        char why[64];
        snprintf(why, sizeof why, "exception %lu at rip 0x%lx", tf->vector, tf->rip);
        intr_enable();
        sig_fault(signal_of(tf->vector), code_of(tf->vector), tf->rip, why);
        intr_disable();
    }
    user_trap_return(tf);
    return true;
}

/* The clock tick (a tick hook): CPU time's sample (kern/proc/acct.c).  The
 * scheduling classes' tick (kern/sched/class.c) posts preemption. */
static void user_tick(const struct trapframe *tf)
{
    acct_tick(tf);
}

/* The work the calling thread's ast word announced, on its way to user
 * mode through tf (interrupts on after a system call, off after a trap;
 * left as found).  restarting: tf was rewound to repeat the call. */
static void __attribute__((noinline)) user_ast(struct thread *t, struct trapframe *tf,
                                               bool restarting)
{
    uint32_t ast = __atomic_exchange_n(&t->ast, 0, __ATOMIC_SEQ_CST);
    if (ast & THREAD_AST_PREEMPT)
        thread_yield();
    /* After the yield (which may switch it back in, and post the bit
     * again) and before any signal frame is built on tf. */
    ast |= __atomic_fetch_and(&t->ast, ~(uint32_t)THREAD_AST_RSEQ, __ATOMIC_SEQ_CST);
    if (ast & THREAD_AST_RSEQ)
        rseq_return(tf);
    struct proc *p = t->proc;
    if (sig_interrupting(p)) {
        uint64_t flags = intr_save();
        intr_enable();
        sig_deliver(tf, restarting);
        intr_restore(flags);
    }
    if (sig_work_pending(p))
        thread_ast_post(t, THREAD_AST_SIGNAL);
}

/* Preemption, kills and signals at every return to user mode from an
 * interrupt or exception (called with interrupts disabled). */
void user_trap_return(struct trapframe *tf)
{
    struct thread *t = curthread();
    if (!t->proc)
        return;
    if (tf->vector == VEC_TIMER && this_cpu()->ticked)
        itimer_cpu_tick(t->proc);   /* ITIMER_VIRTUAL, ITIMER_PROF (kern/proc/sys_timer.c) */
    if (unlikely(__atomic_load_n(&t->ast, __ATOMIC_RELAXED)))
        user_ast(t, tf, false);
}

/* ---- system calls ---- */

typedef int64_t (*syscall_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);

#define S(nr, fn) [nr] = (syscall_fn)fn

static const syscall_fn syscall_table[NSYSCALL] = {
    S(0, sys_read), S(1, sys_write), S(2, sys_open), S(3, sys_close),
    S(4, sys_stat), S(5, sys_fstat), S(6, sys_lstat), S(7, sys_poll), S(8, sys_lseek),
    S(9, sys_mmap), S(10, sys_mprotect), S(11, sys_munmap), S(12, sys_brk), S(26, sys_msync),
    S(27, sys_mincore),
    S(13, sys_rt_sigaction), S(14, sys_rt_sigprocmask), S(127, sys_rt_sigpending),
    S(130, sys_rt_sigsuspend), S(16, sys_ioctl),
    S(17, sys_pread64), S(18, sys_pwrite64), S(19, sys_readv), S(20, sys_writev),
    S(21, sys_access), S(24, sys_sched_yield), S(32, sys_dup), S(33, sys_dup2),
    S(39, sys_getpid), S(57, sys_fork), S(58, sys_vfork), S(59, sys_execve),
    S(60, sys_exit), S(61, sys_wait4), S(63, sys_uname), S(170, sys_sethostname), S(171, sys_setdomainname), S(72, sys_fcntl),
    S(74, sys_fsync), S(75, sys_fsync), S(77, sys_ftruncate),
    S(79, sys_getcwd), S(80, sys_chdir), S(81, sys_fchdir), S(82, sys_rename),
    S(83, sys_mkdir), S(84, sys_rmdir), S(85, sys_creat), S(86, sys_link),
    S(87, sys_unlink), S(88, sys_symlink), S(89, sys_readlink), S(95, sys_umask),
    S(102, sys_getuid), S(104, sys_getgid), S(107, sys_geteuid), S(108, sys_getegid),
    S(109, sys_setpgid), S(110, sys_getppid), S(111, sys_getpgrp), S(112, sys_setsid),
    S(121, sys_getpgid), S(124, sys_getsid), S(158, sys_arch_prctl), S(186, sys_gettid),
    S(217, sys_getdents64), S(218, sys_set_tid_address), S(231, sys_exit_group),
    S(257, sys_openat), S(258, sys_mkdirat), S(262, sys_newfstatat), S(263, sys_unlinkat),
    S(267, sys_readlinkat), S(269, sys_faccessat), S(292, sys_dup3),
    S(35, sys_nanosleep_sig), S(62, sys_kill), S(76, sys_truncate), S(90, sys_chmod),
    S(91, sys_fchmod), S(92, sys_chown), S(93, sys_fchown), S(94, sys_lchown),
    S(96, sys_gettimeofday), S(97, sys_getrlimit), S(98, sys_getrusage), S(100, sys_times),
    S(105, sys_setuid), S(106, sys_setgid), S(115, sys_getgroups), S(160, sys_setrlimit),
    S(162, sys_sync), S(200, sys_tkill), S(201, sys_time), S(228, sys_clock_gettime),
    S(229, sys_clock_getres), S(230, sys_clock_nanosleep_sig), S(234, sys_tgkill),
    S(22, sys_pipe), S(293, sys_pipe2), S(264, sys_renameat), S(316, sys_renameat2),
    S(265, sys_linkat),
    S(202, sys_futex), S(128, sys_rt_sigtimedwait),
    S(165, sys_mount), S(166, sys_umount2), S(137, sys_statfs), S(138, sys_fstatfs),
    S(133, sys_mknod), S(259, sys_mknodat), S(99, sys_sysinfo), S(103, sys_syslog),
    S(56, sys_clone), S(435, sys_clone3), S(169, sys_reboot), S(34, sys_pause), S(247, sys_waitid),
    S(260, sys_fchownat), S(268, sys_fchmodat), S(302, sys_prlimit64), S(318, sys_getrandom),
    S(203, sys_sched_setaffinity), S(204, sys_sched_getaffinity), S(309, sys_getcpu),
    S(29, sys_shmget), S(30, sys_shmat), S(31, sys_shmctl), S(67, sys_shmdt),
    S(64, sys_semget), S(65, sys_semop), S(66, sys_semctl), S(220, sys_semtimedop),
    S(68, sys_msgget), S(69, sys_msgsnd), S(70, sys_msgrcv), S(71, sys_msgctl),
    S(164, sys_settimeofday), S(227, sys_clock_settime), S(113, sys_setreuid),
    S(114, sys_setregid), S(117, sys_setresuid), S(118, sys_getresuid), S(119, sys_setresgid),
    S(120, sys_getresgid), S(116, sys_setgroups),
    S(161, sys_chroot), S(140, sys_getpriority), S(141, sys_setpriority),
    S(36, sys_getitimer), S(37, sys_alarm), S(38, sys_setitimer),
    S(23, sys_select), S(270, sys_pselect6), S(271, sys_ppoll),
    S(157, sys_prctl), S(273, sys_set_robust_list), S(274, sys_get_robust_list),
    S(28, sys_madvise), S(280, sys_utimensat), S(235, sys_utimes), S(261, sys_futimesat),
    S(132, sys_utime), S(40, sys_sendfile),
    S(275, sys_splice), S(276, sys_tee), S(278, sys_vmsplice), S(322, sys_execveat),
    S(437, sys_openat2), S(310, sys_process_vm_readv), S(311, sys_process_vm_writev),
    S(324, sys_membarrier), S(101, sys_ptrace), S(219, sys_restart_syscall),
    S(238, sys_set_mempolicy), S(237, sys_mbind), S(319, sys_memfd_create),
    S(239, sys_get_mempolicy), S(279, sys_move_pages), S(256, sys_migrate_pages),
    S(73, sys_flock), S(25, sys_mremap),
    S(266, sys_symlinkat), S(221, sys_fadvise64),
    S(188, sys_setxattr), S(189, sys_lsetxattr), S(190, sys_fsetxattr), S(191, sys_getxattr),
    S(192, sys_lgetxattr), S(193, sys_fgetxattr), S(194, sys_listxattr), S(195, sys_llistxattr),
    S(196, sys_flistxattr), S(197, sys_removexattr), S(198, sys_lremovexattr),
    S(199, sys_fremovexattr),
    S(41, sys_socket), S(42, sys_connect), S(43, sys_accept), S(44, sys_sendto),
    S(45, sys_recvfrom), S(46, sys_sendmsg), S(47, sys_recvmsg), S(48, sys_shutdown),
    S(49, sys_bind), S(50, sys_listen), S(51, sys_getsockname), S(52, sys_getpeername),
    S(53, sys_socketpair), S(54, sys_setsockopt), S(55, sys_getsockopt), S(288, sys_accept4),
    S(299, sys_recvmmsg), S(307, sys_sendmmsg),
    S(213, sys_epoll_create), S(291, sys_epoll_create1), S(233, sys_epoll_ctl),
    S(232, sys_epoll_wait), S(281, sys_epoll_pwait), S(441, sys_epoll_pwait2),
    S(284, sys_eventfd), S(290, sys_eventfd2), S(131, sys_sigaltstack),
    S(332, sys_statx), S(295, sys_preadv), S(296, sys_pwritev), S(327, sys_preadv2),
    S(328, sys_pwritev2), S(436, sys_close_range), S(439, sys_faccessat2),
    S(78, sys_getdents), S(129, sys_rt_sigqueueinfo), S(297, sys_rt_tgsigqueueinfo),
    S(125, sys_capget), S(126, sys_capset), S(135, sys_personality), S(149, sys_mlock),
    S(150, sys_munlock), S(151, sys_mlockall), S(152, sys_munlockall), S(325, sys_mlock2),
    S(272, sys_unshare), S(308, sys_setns), S(285, sys_fallocate), S(306, sys_syncfs),
    S(277, sys_sync_file_range), S(187, sys_readahead),
    S(283, sys_timerfd_create), S(286, sys_timerfd_settime), S(287, sys_timerfd_gettime),
    S(282, sys_signalfd), S(289, sys_signalfd4),
    S(222, sys_timer_create), S(223, sys_timer_settime), S(224, sys_timer_gettime),
    S(225, sys_timer_getoverrun), S(226, sys_timer_delete), S(326, sys_copy_file_range),
    S(334, sys_rseq), S(253, sys_inotify_init), S(294, sys_inotify_init1),
    S(254, sys_inotify_add_watch), S(255, sys_inotify_rm_watch),
    S(142, sys_sched_setparam), S(143, sys_sched_getparam), S(144, sys_sched_setscheduler),
    S(145, sys_sched_getscheduler), S(146, sys_sched_get_priority_max),
    S(147, sys_sched_get_priority_min), S(148, sys_sched_rr_get_interval),
    S(314, sys_sched_setattr), S(315, sys_sched_getattr),
};

uint64_t syscall_unknown_count(unsigned nr)
{
    return nr < NSYSCALL ? unknown_calls[nr] : 0;
}

/* TEMPEST_SYS_ENOSYS_COUNTS (kern/abi/tempest_abi.h): copy out the
 * counts of the first n numbers; returns how many numbers are counted. */
SYSCALL_DECL(sys_enosys_counts)
{
    uint64_t ucounts = a0, n = a1;
    n = MIN(n, (uint64_t)NSYSCALL);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t c = unknown_calls[i];
        if (copyout(&c, (uint64_t *)ucounts + i, sizeof c))
            return -EFAULT;
    }
    return NSYSCALL;
}

/* Tempest's own calls, numbered from TEMPEST_SYS_LOCKSTAT_RESET up. */
#define T(nr, fn) [(nr) - TEMPEST_SYS_LOCKSTAT_RESET] = (syscall_fn)fn
static const syscall_fn tempest_table[] = {
    T(TEMPEST_SYS_LOCKSTAT_RESET, sys_lockstat_reset),
    T(TEMPEST_SYS_LOCKSTAT_SNAPSHOT, sys_lockstat_snapshot),
    T(TEMPEST_SYS_BLKSTAT_SNAPSHOT, sys_blkstat_snapshot),
    T(TEMPEST_SYS_ENOSYS_COUNTS, sys_enosys_counts),
    T(TEMPEST_SYS_CLUSTER_STATS, sys_cluster_stats),
};

static syscall_fn lookup(uint64_t nr)
{
    if (nr < NSYSCALL)
        return syscall_table[nr];
    uint64_t t = nr - TEMPEST_SYS_LOCKSTAT_RESET;
    return nr >= TEMPEST_SYS_LOCKSTAT_RESET && t < ARRAY_SIZE(tempest_table) ? tempest_table[t]
                                                                              : NULL;
}

void syscall_dispatch(struct trapframe *tf)
{
    struct thread *t = curthread();
    uint64_t nr = tf->rax;
    tf->error = nr;             /* orig_rax: the number, for ptrace */
    bool skip = false;
    if (unlikely(t->ptrace_syscalls)) {
        nr = ptrace_syscall_entry(tf);  /* kern/proc/ptrace.c */
        skip = nr == (uint64_t)-1;
    }
    syscall_fn fn = lookup(nr);
    int64_t r;
    if (skip) {
        r = (int64_t)tf->rax;   /* a tracer made it -1: rax as it left it */
    } else if (nr == 15) {
        r = sig_return(tf);
    } else if (fn) {
        r = fn(tf->rdi, tf->rsi, tf->rdx, tf->r10, tf->r8, tf->r9);
    } else {
        __atomic_add_fetch(&unknown_calls[MIN(nr, (uint64_t)NSYSCALL - 1)], 1, __ATOMIC_RELAXED);
        r = -ENOSYS;
    }
    if (unlikely(t->ptrace_syscalls)) {
        tf->rax = (uint64_t)r;
        ptrace_syscall_exit();
        r = (int64_t)tf->rax;   /* a tracer may change the result */
    }
    /* rt_sigreturn's r is the restored rax, whatever its value. */
    bool restarting = nr != 15 && r == -ERESTARTSYS;
    if (restarting) {
        tf->rax = nr;           /* repeat the call unless a handler says otherwise */
        tf->rip -= 2;
    } else {
        tf->rax = (uint64_t)r;
    }
    if (unlikely(__atomic_load_n(&t->ast, __ATOMIC_RELAXED)))
        user_ast(t, tf, restarting);
}
