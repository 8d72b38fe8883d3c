/*
 * Processes: one or more user threads (struct lwp, SVR4's light-weight
 * processes), an address space, credentials, a file table and a current
 * directory.  Theory in kern/proc/proc.c (threads: kern/proc/lwp.c).
 *
 * Lock key for struct proc and struct lwp:
 *   [P]  proc_lock (a sleep mutex, class "proc"): the process list, the
 *        family links, state and exit status, pids
 *   [F]  p_fdlock (class "fdtable"): the descriptor table
 *   [s]  p_siglock (a spin lock, class "signal"): pending signals
 *   [o]  only the process's own threads (or its creator before it runs);
 *        on struct lwp, only that thread itself
 *   [Ps] written under both proc_lock and p_siglock, read under either
 *   [a]  atomic operations
 *   [c]  constant after creation
 *
 * Lock key for struct file:
 *   [a]  f_count, atomic
 *   [f]  f_lock (class "file"): the offset
 *   [c]  constant
 *   [epoll_lock]  kern/event/epoll.c's global lock
 */
#ifndef KERN_PROC_PROC_H
#define KERN_PROC_PROC_H

#include <kern/lib/types.h>
#include <kern/lib/signum.h>
#include <kern/lock/mutex.h>
#include <kern/lock/spinlock.h>
#include <kern/sched/callout.h>

struct as;
struct vnode;
struct cred;
struct thread;

/* The largest user FPU area (kern/proc/fpu.c): XSAVE's x87, SSE and AVX. */
#define FPU_AREA_MAX 1024
/* A tracer's view of a stopped thread's FPU area (kern/proc/fpu.c):
 * FXSAVE's (xstate false) or XSAVE's (true; size 0 without XSAVE). */
struct lwp;
size_t fpu_regset_size(bool xstate);
void fpu_regset_get(const struct lwp *l, uint8_t *out, bool xstate);
void fpu_regset_set(struct lwp *l, const uint8_t *in, bool xstate);
struct trapframe;
struct sleepq;
struct execargs;
struct ptrace_exit;


/* Signal dispositions and sa_flags, as Linux's (kern/proc/signal.c). */
#define SIG_DFL       0
#define SIG_IGN       1
#define SA_NOCLDSTOP  0x00000001
#define SA_NOCLDWAIT  0x00000002
#define SA_SIGINFO    0x00000004
#define SA_RESTORER   0x04000000
#define SA_ONSTACK    0x08000000
#define SA_RESTART    0x10000000
#define SA_NODEFER    0x40000000
#define SA_RESETHAND  0x80000000UL
#define SIGBIT(sig)   (1UL << ((sig) - 1))
#define SI_USER       0
#define SI_KERNEL     0x80
#define CLD_EXITED    1
#define CLD_KILLED    2
#define CLD_DUMPED    3
/* waitid's idtype and the wait options, as Linux's. */
#define P_ALL         0
#define P_PID         1
#define P_PGID        2
#define WNOHANG       0x00000001
#define WUNTRACED     0x00000002    /* wait4's name for WSTOPPED */
#define WSTOPPED      0x00000002
#define WEXITED       0x00000004
#define WCONTINUED    0x00000008
#define WNOWAIT       0x01000000
#define __WNOTHREAD   0x20000000
#define __WALL        0x40000000
#define __WCLONE      0x80000000U
#define CLD_STOPPED   5
#define CLD_CONTINUED 6
#define SEGV_MAPERR   1
#define SEGV_ACCERR   2
#define BUS_ADRERR    2
/* A sleep interrupted by a signal: the system call is restarted, or
 * fails with -EINTR when a handler without SA_RESTART runs.  Never seen
 * by user space. */
#define ERESTARTSYS   512

/* The kernel's struct sigaction (rt_sigaction's layout). */
struct sigaction_k {
    uint64_t handler;           /* SIG_DFL, SIG_IGN or the handler's address */
    uint64_t flags;
    uint64_t restorer;
    uint64_t mask;
};

/* What a pending signal carries to the handler's siginfo. */
struct ksiginfo {
    int si_signo, si_code;
    int si_pid, si_uid, si_status;
    uint64_t si_addr;
    uint64_t si_value;          /* sigqueue's value (si_code below 0), in place of si_status */
    int si_ptimer;              /* a POSIX timer's id + 1 (its overrun is filled in when
                                 * the signal is taken), or 0 */
};

/* The descriptor table's size: Linux's default soft limit (RLIMIT_NOFILE),
 * which no process here may raise past (Linux's nr_open). */
#define NOFILE   1024
#define NPTIMERS 32         /* POSIX timers a process may have (timer_create) */

/* Resource limits (getrlimit); the ones enforced are RLIMIT_NOFILE
 * (descriptors, at most NOFILE anyway), RLIMIT_NPROC (fork) and
 * RLIMIT_FSIZE (writes to regular files: fsize_room in sys_fs.c). */
#define RLIMIT_FSIZE   1
#define RLIMIT_STACK   3
#define RLIMIT_NPROC   6
#define RLIMIT_NOFILE  7
#define RLIMIT_MEMLOCK 8
#define RLIMIT_NICE    13
#define NICE_MIN       (-20)
#define NICE_MAX       19
#define RLIMIT_RTPRIO  14
#define RLIM_NLIMITS   16
#define RLIM_INFINITY  (~0UL)
#define FD_CLOEXEC 1

/* wait status words and wait4 options, as Linux's */
#define W_EXITCODE(code)  (((code) & 0xff) << 8)
#define W_SIGNALED(sig)   ((sig) & 0x7f)
#define W_STOPPED(sig)    ((((sig) & 0xff) << 8) | 0x7f)
#define W_CONTINUED       0xffff

struct file {
    int f_count;                /* [a] descriptors and users */
    int f_flags;                /* [f] O_* of the open (access mode, O_APPEND, O_NONBLOCK,
                                 * O_ASYNC, O_DSYNC/O_SYNC) */
    struct mutex f_lock;
    uint64_t f_offset;          /* [f] */
    struct vnode *f_vp;         /* [c] held */
    struct epitem *f_ep;        /* [epoll_lock] the epoll sets watching it (kern/event/epoll.c) */
    int f_owner;                /* [a] F_SETOWN's process (or -group), 0 for none */
};


enum proc_state { PS_RUN, PS_ZOMBIE };

/* A thread of a process: what each thread has of its own (kern/proc/lwp.c).
 * The kernel thread (struct thread, kern/sched) holds the register state
 * on its kernel stack, the scheduling state, the affinity and the FS (TLS)
 * base; this is the rest.  Freed after the thread has exited and is off
 * its CPU (the last thread's with the process). */
struct lwp {
    struct proc *l_proc;        /* [c] */
    struct thread *l_thread;    /* [P] once made (as p_thread) */
    int l_tid;                  /* [P] the thread id; the main thread's is the pid */
    struct lwp *l_next;         /* [Ps] the process's threads */
    volatile int l_exit_now;    /* [a] set by execve in another thread: exit at once */
    /* Signals: those sent to this thread (tgkill, a fault), and its mask. */
    uint64_t l_sigpending;      /* [s] written; read [a] */
    struct ksiginfo l_siginfo[NSIG];    /* [s] */
    uint64_t l_sigmask;         /* [o] blocked signals; read [a] */
    uint64_t l_waitset;         /* [o] written; read [a]: rt_sigtimedwait's set while it sleeps */
    uint64_t l_sigsaved;        /* [o] rt_sigsuspend: the mask to restore */
    bool l_restoremask;         /* [o] l_sigsaved is to be restored */
    /* sigaltstack: the alternate signal stack (none while l_ss_size is
     * 0) and SS_AUTODISARM; a new thread has none, fork copies it. */
    uint64_t l_ss_sp, l_ss_size;    /* [o] */
    uint32_t l_ss_flags;            /* [o] */
    /* rseq (kern/proc/rseq.c): the registered struct rseq, or 0; fork
     * keeps it, a new thread and exec start without one. */
    uint64_t l_rseq;                /* [o] */
    uint32_t l_rseq_len, l_rseq_sig;    /* [o] */
    const void *volatile l_sleepchan;   /* [a] the channel of an interruptible sleep */
    /* CPU time in TSC cycles, written by the CPU the thread runs on. */
    uint64_t l_acct_stamp;      /* [o] start of the stretch not yet charged (0: none) */
    uint64_t l_utime, l_stime;  /* [o] written; read [a] */
    uint64_t l_uticks, l_sticks;        /* [o] clock ticks that found it in each mode */
    uint64_t l_clear_tid;       /* [o] set_tid_address, CLONE_CHILD_CLEARTID */
    uint64_t l_robust_head;     /* [o] set_robust_list's head (walked at exit) */
    uint64_t l_gs_base;         /* [o] user GS base (arch_prctl ARCH_SET_GS) */
    struct trapframe *l_forktf; /* [c] the creator's frame, for the first return (freed then) */
    uint64_t l_fork_fsbase;     /* [c] the FS base to start with */
    uint64_t l_child_settid;    /* [c] clone's CLONE_CHILD_SETTID address, or 0 */
    struct lwp *l_reap_next;    /* [P] the reaper's list of exited threads */
    /* ptrace (kern/proc/ptrace.c): the thread as a tracee.  Its tracer is
     * a process; the stop it is in, what the tracer's wait is still to be
     * told, and what the tracer resumes it with. */
    struct proc *l_tracer;      /* [P] the tracing process, or NULL */
    struct lwp *l_trace_next;   /* [P] the tracer's list (p_tracees) */
    uint32_t l_ptopts;          /* [P] PTRACE_O_* */
    uint32_t l_ptflags;         /* [P] PTF_* (kern/proc/ptrace.c) */
    int l_ptstop;               /* [P] PTS_*: the ptrace-stop it is in, 0 while it runs */
    int l_ptreport;             /* [P] the stop's wait status, until a wait reports it (0) */
    int l_ptsig;                /* [P] the signal the tracer resumed it with */
    uint64_t l_ptmsg;           /* [P] PTRACE_GETEVENTMSG's value */
    struct ksiginfo l_ptsi;     /* [P] the stop's siginfo (GETSIGINFO, SETSIGINFO) */
    volatile int l_pttrap;      /* [P] written, [a] read: a PTRACE_EVENT_STOP trap is due
                                 * (PTRACE_INTERRUPT, a new seized child's first stop) */
    /* The user's x87/SSE registers while the thread is switched out
     * (FXSAVE area; the kernel itself never touches them). */
    /* The user's x87/SSE/AVX registers while the thread is switched out
     * (an XSAVE or FXSAVE area: kern/proc/fpu.c; the kernel itself never
     * touches them). */
    uint8_t l_fpu[FPU_AREA_MAX] __aligned(64);  /* [o] */
};

struct proc {
    int p_pid;                  /* [c] */
    int p_pgid, p_sid;          /* [P] */
    int p_state;                /* [P] enum proc_state */
    int p_status;               /* [P] wait status once a zombie */
    struct proc *p_parent;      /* [P] NULL: spawned (p_spawned), or an orphan with no init */
    int p_ppid;                 /* [P] written, [a] read: p_parent's pid, 0 without one */
    bool p_spawned;             /* [c] made by proc_spawn: proc_wait_spawned reaps it */
    bool p_execed;              /* [P] has called execve (setpgid by the parent: EACCES) */
    /* vfork: the parent sleeping until this child execs or exits (NULL:
     * none), and whether p_as is that parent's, borrowed meanwhile. */
    struct proc *p_vfork_parent;        /* [P] */
    bool p_as_borrowed;                 /* [o] */
    struct proc *p_children;    /* [P] */
    struct proc *p_sibling;     /* [P] */
    struct proc *p_next;        /* [P] every process */
    volatile int p_killsig;     /* [a] a fatal signal pending (exit at the return to user) */
    struct cred *p_cred;        /* [o] held; replaced under [P] too, as other
                                   processes read it under [P] (sys_admin.c) */
    struct thread *p_thread;    /* [P] one live thread of the process (the last one once
                                   it exits): fork stores it, and so does the child itself
                                   on its first run, whichever is first; a thread's exit
                                   moves it to another */
    /* Threads (kern/proc/lwp.c). */
    struct lwp *p_lwps;         /* [Ps] the live threads, linked by l_next */
    int p_nlwps;                /* [Ps] how many */
    bool p_execing;             /* [P] a thread is in execve (the others wait to exec) */
    bool p_group_exit;          /* [s] the process is ending: p_xstat is its wait status */
    int p_xstat;                /* [s] */
    struct as *p_as;            /* [o] (exec replaces it) */
    struct vnode *p_cwd;        /* [o] held */
    struct vnode *p_root;       /* [o] held: the chroot directory, NULL for rootdir */
    int p_nice;                 /* [P] NICE_MIN..NICE_MAX (setpriority); its threads' too */
    uint32_t p_personality;     /* [o] personality(2): kept, inherited, not acted on */
    uint32_t p_umask;           /* [o] */
    uint64_t p_rlim[RLIM_NLIMITS][2];   /* [o] soft and hard limits (inherited at fork) */
    char p_comm[16];            /* [o] */
    struct sem_undo *p_semundo; /* [o] SEM_UNDO adjustments (kern/ipc/sem.c); not inherited */
    /* What /proc shows (kern/proc/proc_info.c): the program and its
     * arguments, shared with fork's children until they exec; the readers
     * holding the process (its memory and address space stay until they
     * let go); when it started. */
    struct proc_image *p_image; /* [P] */
    int p_holds;                /* [P] */
    uint64_t p_start_ns;        /* [c] uptime_ns at creation */
    /* Interval timers (kern/proc/sys_timer.c).  [i] is p_itimer_lock,
     * a spin lock (class "itimer") shared with the timer's callout. */
    spinlock_t p_itimer_lock;
    struct callout p_itimer;    /* ITIMER_REAL's callout */
    uint64_t p_itimer_due;      /* [i] uptime_ns() it is due at, 0: disarmed */
    uint64_t p_itimer_interval; /* [i] ns, 0: one shot */
    uint64_t p_cputimer[2][2];  /* [o] ITIMER_VIRTUAL, ITIMER_PROF: CPU ns due (0: off), interval */
    /* POSIX timers (kern/proc/sys_ptimer.c): the table, by timer id. */
    struct ptimer *p_ptimers[NPTIMERS];     /* [i] */
    /* prctl and set_robust_list (kern/proc/sys_extra.c). */
    int p_pdeathsig;            /* [o] sent when the parent exits ([P] read there), 0: none */
    bool p_undumpable;          /* [o] PR_SET_DUMPABLE 0 */
    uint32_t p_membarrier;      /* [a] the membarrier registrations asked for (fork
                                   copies them, exec clears them) */
    bool p_keepcaps;            /* [o] */
    bool p_nonewprivs;          /* [o] */
    uint64_t p_timerslack;      /* [o] ns, 0: the default */

    /* Signals (kern/proc/signal.c).  [s] is p_siglock, a spin lock
     * (class "signal") taken under proc_lock and under sleep-queue-free
     * contexts only.  Senders read p_sigact without a lock: a disposition
     * changing under a send decides only whether the signal is queued. */
    spinlock_t p_siglock;
    uint64_t p_sigpending;      /* [s] written; read [a]: sent to the process (any thread) */
    struct ksiginfo p_siginfo[NSIG];    /* [s] the info of each pending signal */
    struct sigaction_k p_sigact[NSIG];  /* [o] */

    /* CPU time, in TSC cycles (kern/proc/proc.c, "accounting"): each
     * thread counts its own (struct lwp); these hold the times of the
     * threads that have exited, added at their exit under [P] (and the
     * last thread's, added by proc_join).  Read [a] relaxed. */
    uint64_t p_utime, p_stime;  /* [P] in user mode, in the kernel */
    uint64_t p_cutime, p_cstime;        /* [o] of its reaped children, theirs included */

    /* Job control (kern/proc/signal.c, proc.c).  p_stopped is the stop
     * signal while the process is stopped (or about to stop), 0 while it
     * runs: set when a stop signal is taken and cleared by SIGCONT, both
     * under p_siglock; read [a].  p_jobevent is a stop or continue that
     * wait4 has not reported yet: the wait status to report, or 0. */
    volatile int p_stopped;     /* [s] written, [a] read */
    int p_jobevent;             /* [P] */

    /* ptrace (kern/proc/ptrace.c): the threads this process traces, the
     * exits of tracees its wait has still to report, and how many of its
     * own threads are traced (signals it ignores are then still queued,
     * for the tracer to see). */
    struct lwp *p_tracees;              /* [P] linked by l_trace_next */
    struct ptrace_exit *p_trace_exits;  /* [P] */
    int p_ntraced;                      /* [P] written, [a] read */


    struct mutex p_fdlock;
    struct file *p_fd[NOFILE];  /* [F] */
    uint8_t p_fdflags[NOFILE];  /* [F] FD_CLOEXEC */
    int p_fdend;                /* [F] one past the highest slot ever used: the
                                 * table's walks (fork, exec, exit) stop there */
};

/* The administrator's part of a process (kern/proc/sys_admin.c): at
 * boot, the VFS's hook for the chroot directory; at fork, the child gets
 * the parent's chroot directory and nice value; at exit the directory is
 * released. */
void admin_init(void);
void proc_inherit_admin(struct proc *child, struct proc *parent);
void proc_drop_root(struct proc *p);
/* Replace the calling process's user ids (which IDS_UID) or group ids
 * (IDS_GID): real, effective and saved, (uint32_t)-1 keeping one.  The
 * caller has checked the permission.  0 or -ENOMEM. */
#define IDS_UID 0
#define IDS_GID 1
int proc_set_ids(int which, uint32_t real, uint32_t eff, uint32_t saved);
/* exec: the set-user-id and set-group-id bits of the file loaded.
 * Returns whether they changed the effective ids (AT_SECURE). */
bool proc_exec_setid(struct proc *p, struct vnode *vp);
/* The program a process runs, as /proc shows it: shared by fork, new at
 * each exec, freed with its last process. */
#define PROC_AUXV_WORDS 48
struct proc_image {
    int refs;                   /* [a] */
    char *exe;                  /* the absolute path of the program file */
    size_t cmdlen;              /* bytes of cmdline: the arguments, each NUL-terminated */
    uint64_t args_at;           /* where they are in the program's memory, which
                                 * /proc/PID/cmdline reads (a program may retitle
                                 * itself there, as nginx's workers do); 0 unknown */
    size_t auxwords;            /* words of auxv: the auxiliary vector exec gave the program */
    uint64_t auxv[PROC_AUXV_WORDS];     /* (/proc/PID/auxv, which gdb reads) */
    char cmdline[];
};

/* A process as /proc and sysinfo see it (kern/proc/proc_info.c).  A
 * held process (proc_hold) stays in memory, and so does any address
 * space read from its p_as, until proc_rele: its exec and exit wait. */
struct proc *proc_hold(int pid);
void proc_rele(struct proc *p);
/* May caller read and write target's memory (process_vm_readv, and
 * ptrace's rule): Linux's PTRACE_MODE_ATTACH_REALCREDS
 * (kern/proc/sys_procvm.c). */
bool proc_may_inspect(const struct proc *caller, const struct proc *target);
/* The pids of every process not yet reaped, ascending: how many there
 * are (at most max written). */
int proc_pids(int *out, int max);
/* The tids of p's threads, ascending: how many (at most max). */
int proc_tids(struct proc *p, int *out, int max);
/* A process's parent's pid (0: none), under proc_lock. */
int proc_ppid_of(struct proc *p);
/* p's current directory (held), or NULL. */
struct vnode *proc_cwd_hold(struct proc *p);
/* The vnode (held) and flags of p's descriptor fd, or NULL. */
struct vnode *proc_fd_hold(struct proc *p, int fd, int *flags);
/* p's image (held; proc_image_rele it), or NULL. */
struct proc_image *proc_image_hold(struct proc *p);
void proc_image_rele(struct proc_image *im);
/* exec: the new program's path and arguments (ea). */
void proc_set_image(struct proc *p, const char *path, const struct execargs *ea,
                    const uint64_t *auxv, size_t auxwords);
/* fork: the child shares the parent's image. */
void proc_share_image(struct proc *child, struct proc *parent);
/* The path of directory dir (kern/proc/sys_fs.c, getcwd's walk): its
 * length with the NUL, or -errno. */
int proc_dir_path(struct vnode *dir, char *out, size_t size);

/* CLOCK_REALTIME in whole seconds (kern/proc/sys_misc.c), for the time
 * fields the kernel keeps (System V IPC's). */
int64_t realtime_sec(void);

/* The calling thread's process, or NULL for a kernel thread. */
struct proc *curproc(void);

void proc_init(void);

/* The most processes one user (other than root) may have; fork beyond
 * that fails with -EAGAIN.  Tests may lower it. */
extern int proc_maxuproc;

/* Start a new process (no parent: the kernel waits for it) that runs the
 * program at path with argv/envp (NULL-terminated kernel arrays), with
 * descriptors 0, 1 and 2 on /dev/console when it exists.  0 or -errno;
 * an exec failure is the process's exit status 127 << 8. */
int proc_spawn(const char *path, char *const argv[], char *const envp[], struct cred *cr,
               struct proc **pp);
/* Wait for a spawned process to exit, free it, and return its wait
 * status.  Only for processes proc_spawn made. */
int proc_wait_spawned(struct proc *p);

/* Threads (kern/proc/lwp.c).  The calling thread's lwp, or NULL for a
 * kernel thread; a new one for p (NULL: no memory), and its freeing. */
struct lwp *curlwp(void);
struct lwp *lwp_alloc(struct proc *p);
void lwp_free(struct lwp *l);
struct clone_req;
/* clone with CLONE_THREAD: a new thread of the calling process running
 * from frame tf as ca says; its tid or -errno. */
int lwp_create(struct trapframe *tf, const struct clone_req *ca);
/* exit: end the calling thread only (the process with it when it is the
 * last); exit_group and fatal signals end them all (proc_exit). */
void lwp_exit(int status) __noreturn;
/* execve from a thread: claim the exec at the start (0, or -ERESTARTSYS
 * while another thread execs), give the claim up when the exec fails, and
 * at its point of no return end the other threads and wait for them. */
int proc_exec_begin(void);
void proc_exec_abort(void);
void lwp_end_others(struct proc *p);
/* Futexes (kern/proc/futex.c): boot; wake one waiter of the word at uaddr
 * (a thread's clear_tid); walk a dying thread's robust list. */
void futex_init(void);
void futex_wake_word(struct as *as, uint64_t uaddr);
void futex_exit_robust(struct as *as, uint64_t head, int tid);

/* fork: copy the calling process (frame tf); the child's pid or -errno.
 * clone passes a request (NULL for fork): */
struct clone_req {
    uint64_t newsp;             /* the child's stack pointer, or 0 */
    bool settls;
    uint64_t tls;               /* the child's FS base when settls */
    uint64_t child_settid;      /* where the child stores its tid, or 0 */
    uint64_t child_cleartid;    /* recorded as the child's clear_tid */
    uint64_t parent_settid;     /* a thread: where its tid is stored before it runs, or 0 */
    bool share_vm;              /* CLONE_VM: the child borrows the caller's address space */
    bool vfork;                 /* CLONE_VFORK: the caller will wait (proc_vfork_wait) */
    int ptrace_event;           /* PTRACE_EVENT_FORK, _VFORK or _CLONE: what a tracer is told */
};
int proc_fork(struct trapframe *tf, const struct clone_req *ca);
/* waitid and wait4 without the copyouts.  The request: which children
 * (idtype P_ALL, P_PID or P_PGID with id) and the options (WEXITED,
 * WSTOPPED, WCONTINUED, WNOHANG, WNOWAIT). */
struct wait_req {
    int idtype, id, options;
};
/* What the wait learnt about the child it reports. */
struct wait_info {
    int pid, uid;
    int status;                 /* the wait status word (wait4) */
    int code, si_status;        /* siginfo's si_code (CLD_*) and si_status */
    uint64_t utime_ns, stime_ns;        /* the child's and its reaped children's (rusage) */
};
/* The pid reported (reaped unless WNOWAIT), 0 (WNOHANG and nothing to
 * report yet), -ECHILD (no child matches) or -ERESTARTSYS. */
int proc_wait(const struct wait_req *req, struct wait_info *info);

/* ptrace (kern/proc/ptrace.c).  The hooks the rest of the process code
 * calls; each does nothing for a thread nobody traces.
 *   ptrace_syscall_entry   syscall_dispatch with the thread's
 *                          ptrace_syscalls set: the entry stop; the number
 *                          to run (orig_rax as the tracer left it), -1 to
 *                          skip the call (rax is then its result)
 *   ptrace_syscall_exit    the exit stop, the frame's rax holding the result
 *   ptrace_signal_stop     sig_deliver took sig: the signal to act on
 *                          instead (0: none), si updated to match
 *   ptrace_group_stop      a stop signal stops the process: the traced
 *                          thread's group-stop, reported to its tracer
 *   ptrace_trap_stop       a PTRACE_EVENT_STOP trap was due (l_pttrap)
 *   ptrace_event           fork, vfork, clone, exec, exit: the event stop
 *                          when the tracer asked for it (PTRACE_O_*)
 *   ptrace_child_locked    fork or clone made thread cl (a new process's
 *                          first, or a new thread): traced too when the
 *                          options say so
 *   ptrace_lwp_exit_locked thread l of p leaves (last: p's last): its
 *                          tracer is told, and it leaves the tracer's list
 *   ptrace_tracer_exit_locked  p ends: every thread it traces goes free
 *   ptrace_wait_locked     proc_wait's look at the caller's tracees
 */
#define PTRACE_EVENT_FORK       1
#define PTRACE_EVENT_VFORK      2
#define PTRACE_EVENT_CLONE      3
#define PTRACE_EVENT_EXEC       4
#define PTRACE_EVENT_VFORK_DONE 5
#define PTRACE_EVENT_EXIT       6
uint64_t ptrace_syscall_entry(struct trapframe *tf);
void ptrace_syscall_exit(void);
int ptrace_signal_stop(int sig, struct ksiginfo *si);
void ptrace_group_stop(int sig);
void ptrace_trap_stop(void);
void ptrace_event(int event, uint64_t msg);
void ptrace_child_locked(struct lwp *cl, int event);
void ptrace_lwp_exit_locked(struct proc *p, struct lwp *l, int status, bool last);
void ptrace_tracer_exit_locked(struct proc *p);
int ptrace_wait_locked(struct proc *me, const struct wait_req *req, int pgid,
                       struct wait_info *info, bool *any);
/* Is any thread of c traced by tracer?  Under proc_lock. */
bool ptrace_traced_by_locked(const struct proc *c, const struct proc *tracer);
/* Is the calling thread traced?  [a] */
static inline bool lwp_traced(const struct lwp *l)
{
    return l && __atomic_load_n(&l->l_tracer, __ATOMIC_ACQUIRE) != NULL;
}
/* exec may not give set-id privileges to a process a non-root user
 * traces (Linux's rule without CAP_SYS_PTRACE). */
bool ptrace_blocks_setid(struct proc *p);
/* The tracer's pid of p's main thread, 0 for none (/proc's TracerPid). */
int ptrace_tracer_pid(struct proc *p);

/* The calling process's parent's pid (0: none). */
int proc_getppid(void);
/* setpgid and setsid for the calling process, with Linux's rules. */
int proc_setpgid(int pid, int pgid);
int proc_setsid(void);
/* vfork: sleep until the child (pid) has let the caller's address space
 * go, by execve or exit. */
void proc_vfork_wait(int pid);
/* execve's point of no return, with the new address space loaded: the
 * old one goes (back to a vfork parent, which wakes, or freed), and the
 * parent may no longer set the process group. */
void proc_exec_commit(struct proc *p, struct as *old);

/* CPU-time accounting (kern/proc/acct.c): the calling CPU switches
 * threads.  (Crossings into the kernel and back charge nothing.) */
struct thread;
void acct_switch(struct thread *prev, struct thread *next);
struct trapframe;
void acct_tick(const struct trapframe *tf);     /* the clock tick's hook */
/* Charge the calling thread's running stretch now (kern/proc/acct.c). */
void acct_charge_running(struct lwp *l);
/* The CPU time of the calling process so far, in ns (its running
 * stretch included); and of its reaped children. */
void proc_cputime(uint64_t *user_ns, uint64_t *sys_ns);
/* The same for the process, or the calling thread alone (thread_only);
 * and p's times in cycles, every thread's. */
void proc_cputime_of(bool thread_only, uint64_t *user_ns, uint64_t *sys_ns);
void proc_cycles(struct proc *p, uint64_t *user, uint64_t *sys);
void proc_children_cputime(uint64_t *user_ns, uint64_t *sys_ns);

/* kill: mark the processes pid names (Unix kill's pid conventions) to
 * die by sig when fatal is set; 0, -ESRCH (none) or -EPERM (none the
 * caller may signal). */
int proc_signal(int pid, int sig, bool fatal);
/* True when sig, sent to p by another process, is to be dropped: p is
 * init and has no handler for sig (kill(2) and the thread kills). */
bool proc_init_spares(const struct proc *p, int sig);

/* Signals (kern/proc/signal.c). */
void sig_init_proc(struct proc *p, struct proc *parent);
/* Queue sig for p with its info (a no-op for an ignored, unblocked
 * signal; SIGKILL marks p_killsig).  Wakes p from an interruptible sleep. */
void sig_post(struct proc *p, int sig, const struct ksiginfo *si);
/* Queue sig for one thread (tgkill, tkill) and wake it. */
void sig_post_lwp(struct lwp *l, int sig, const struct ksiginfo *si);
/* A timer's signal (kern/proc/sys_ptimer.c, from the tick): to thread tid
 * of p (0, or a thread that is gone: to p), unless sig is pending there
 * already -- false then, and the timer counts an overrun. */
bool sig_post_unless_pending(struct proc *p, int tid, int sig, const struct ksiginfo *si);
/* rt_sigtimedwait: take a signal of set (blocked or not) for the calling
 * thread, waiting until deadline (uptime ns); its siginfo to uinfo.  The
 * signal, or -EAGAIN, -EINTR, -EFAULT. */
int sig_timedwait(uint64_t set, uint64_t deadline, uint64_t uinfo);
/* signalfd (kern/event/signalfd.c): take the lowest signal of set pending
 * for the calling thread (its number and info, or 0); what is pending for
 * it, blocked or not; wait until a signal of set is (0, or -ERESTARTSYS
 * when another signal is to be taken). */
int sig_take(uint64_t set, struct ksiginfo *si);
uint64_t sig_pending_mine(void);
int sig_wait_for(uint64_t set);
/* Wake every thread of p from its interruptible sleep (an exit, an exec). */
void sig_wake_all(struct proc *p);
/* Make thread l look at its signals now: its ast, and a wakeup of its
 * interruptible sleep (ptrace's INTERRUPT and resume). */
void sig_kick_lwp(struct lwp *l);
/* Linux's 128-byte siginfo for sig with si, at out (ptrace GETSIGINFO). */
void sig_siginfo_out(void *out, int sig, const struct ksiginfo *si);
struct vnode;
int64_t fsize_room(struct vnode *vp, uint64_t off, bool append, size_t n);
/* A synchronous fault: delivered to a handler, or death when the signal
 * is blocked, ignored or at its default. */
void sig_fault(int sig, int code, uint64_t addr, const char *why);
/* Does a signal wait for p (an unblocked pending one, or a kill)? */
bool sig_interrupting(struct proc *p);
/* Is anything pending for the calling thread of p, blocked or not (a
 * signal, a kill, an exit, a stop)?  While it is, the thread keeps
 * THREAD_AST_SIGNAL set (kern/proc/syscall.c, user_ast). */
bool sig_work_pending(struct proc *p);
/* Sleep on chan (as sleep_on) unless a signal interrupts: 0, or
 * -ERESTARTSYS without sleeping when a signal is pending. */
int sig_sleep(const void *chan);
/* The same for a caller that locked chan's sleep queue (sleepq_lock) to
 * check its own condition under it, as the terminal does: sq is unlocked
 * on return.  Without a process (a kernel thread) a plain sleep. */
int sig_sleep_locked(struct sleepq *sq, const void *chan);
/* At the return to user mode (interrupts enabled): take the pending
 * signals.  restarting: tf was rewound to repeat an interrupted call. */
void sig_deliver(struct trapframe *tf, bool restarting);
/* rt_sigreturn: restore the frame the handler's return found; the rax
 * to return. */
int64_t sig_return(struct trapframe *tf);
/* The most stack a signal frame takes (AT_MINSIGSTKSZ, for exec). */
size_t sig_frame_min_size(void);
/* execve: handled signals back to the default. */
void sig_exec_reset(struct proc *p);
/* The signal's default action is to ignore it (SIGCHLD, SIGURG,
 * SIGWINCH, and SIGCONT, whose continuing is done when it is sent). */
bool sig_default_ignores(int sig);

/* fn(p, arg) for the process pid (a zombie too, until it is reaped),
 * under proc_lock (fn must not sleep): its result, or -ESRCH.  p and its
 * thread stay valid while fn runs. */
int proc_apply(int pid, int (*fn)(struct proc *p, void *arg), void *arg);
/* fn(p, t, arg) for the thread tid (kern/proc/lwp.c; a pid names its
 * process's main thread, or another once that has exited), under
 * proc_lock (fn must not sleep): its result, or -ESRCH. */
int lwp_apply(int tid, int (*fn)(struct proc *p, struct thread *t, void *arg), void *arg);
/* Job control (kern/proc/proc.c).  Signal every process of group pgid
 * from the kernel (the terminal's ^C, SIGTTIN): no permission check;
 * 0 or -ESRCH. */
int proc_signal_pgrp(int pgid, int sig);
/* Is group pgid orphaned: no member has a parent in another group of the
 * same session? */
bool proc_pgrp_orphaned(int pgid);

/* The controlling terminal's rules (kern/proc/jobctl.c; the terminal's
 * theory is drivers/tty/tty.c's).  TIOCSPGRP: 0, or -ENOTTY from outside
 * the terminal's session.  TIOCSCTTY: the calling session leader's session
 * takes the terminal (steal: root may take it from another session) and
 * its group becomes the foreground; 0 or -EPERM.  The leader of session
 * sid exits: the terminal is free again and its foreground group gets
 * SIGHUP.  Job control for the calling process's use of the terminal: 0 to
 * go ahead, -ERESTARTSYS after sending sig (SIGTTIN for a read, SIGTTOU
 * for a change of settings) to its group when it is in the background, or
 * -EIO when it cannot be stopped.  TIOCNOTTY: the caller's session lets
 * its terminal go (0, or -ENOTTY when t is not its terminal).
 * jobctl_init (boot, from proc_init) gives the terminals the hooks they
 * call these through. */
struct tty;
int ctty_set_fg_pgrp(struct tty *t, int pgid);
int ctty_acquire(struct tty *t, bool steal);
void ctty_session_exit(int sid);
int ctty_job_check(struct tty *t, int sig);
int ctty_release(struct tty *t);
/* A terminal opened without O_NOCTTY: a session leader with none takes
 * it, as on Linux. */
void ctty_open_acquire(struct tty *t);
void jobctl_init(void);
/* The calling process stops by sig (a stop signal taken, p_stopped set):
 * tell the parent, sleep until SIGCONT or SIGKILL, tell the parent of
 * the continue.  A terminal stop signal (not SIGSTOP) to an orphaned
 * group is discarded instead, as POSIX says. */
void proc_stop_current(int sig);
/* Stop signals (job control, kern/proc/signal.c). */
#define SIG_STOPS     (SIGBIT(SIGSTOP) | SIGBIT(SIGTSTP) | SIGBIT(SIGTTIN) | SIGBIT(SIGTTOU))
/* Sleep while the calling process p is stopped: true once SIGCONT
 * continued it, false for a kill. */
bool sig_wait_continue(struct proc *p);
/* p's own thread: is sig ignored, or blocked? */
bool sig_ignored_or_blocked(struct proc *p, int sig);
/* The sleeps that a signal ends rather than restarts (nanosleep, poll,
 * pause, rt_sigsuspend): drop the unblocked pending signals p ignores,
 * stop here for a stop signal at its default action (the sleep goes on
 * after SIGCONT), and say whether a signal remains that ends the sleep:
 * a handler to run, a fatal default action, a kill. */
bool sig_sleep_interrupted(struct proc *p);

/* Timed sleeps and interval timers (kern/proc/sys_timer.c).  Sleep on
 * chan until a wakeup on it, the time uptime_ns() reaches deadline, or a
 * signal (as sig_sleep): 0, or -ERESTARTSYS when a signal is pending. */
int sig_sleep_until(const void *chan, uint64_t deadline);
/* The same, but no sleep at all once *gen differs from seen (checked under
 * chan's sleep-queue lock, which the incrementer's wakeup takes). */
int sig_sleep_until_gen(const void *chan, uint64_t deadline, const uint64_t *gen, uint64_t seen);
/* Sleep ns nanoseconds unless a signal ends the sleep (as nanosleep):
 * 0, or -EINTR with the time left in *left (when given). */
int64_t sleep_for_ns(uint64_t ns, uint64_t *left);
/* fork: the child inherits the prctl flags that Linux passes on (not
 * the parent death signal, nor the robust list). */
void prctl_fork(struct proc *child, const struct proc *parent);
/* File locks (kern/proc/reclock.c).  Boot; a process closed a descriptor
 * of vp (its record locks on vp go); an open file's last reference went
 * (its flock and open file locks go); fcntl's F_GETLK (5), F_SETLK (6),
 * F_SETLKW (7) and F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW (36-38) with the
 * struct flock at uarg. */
void reclock_init(void);
void reclock_close(struct proc *p, struct vnode *vp);
void reclock_file_gone(struct file *fp);
int64_t fcntl_lock(struct file *fp, int cmd, uint64_t uarg);
/* A new process's timers, all disarmed; stop them at exit. */
void itimer_init(struct proc *p);
void itimer_exit(struct proc *p);
/* POSIX timers: all deleted at exit and exec (kern/proc/sys_ptimer.c). */
void ptimer_exit(struct proc *p);
void ptimer_init(void);
/* rseq (kern/proc/rseq.c): on the way to user mode after a switch, the
 * CPU ids and a critical section's abort; at a signal, the abort alone. */
void rseq_return(struct trapframe *tf);
void rseq_fixup(struct trapframe *tf);
/* A POSIX timer's signal is being taken: its overrun count into si. */
void ptimer_taken(struct proc *p, struct ksiginfo *si);
/* The clock tick interrupted p (the caller's own process) in user mode:
 * post SIGVTALRM or SIGPROF for a CPU-time timer that is due. */
void itimer_cpu_tick(struct proc *p);

/* The process group and session of process pid: 0 or -ESRCH. */
int proc_ids(int pid, int *pgid, int *sid);

/* End the calling process with a wait status.  Never returns. */
void proc_exit(int status) __noreturn;
/* Mark the calling process to die by sig at its return to user mode
 * (prints why). */
void proc_kill_current(int sig, const char *why);
/* Memory is out (kern/proc/oom.c): kill the process holding the most,
 * unless one killed before is still leaving.  True when the caller should
 * try again (another process goes, or is going); false when the caller is
 * the one to die. */
bool oom_kill_other(void);

/* Executable loading (kern/proc/exec.c).  args: argc then envc strings,
 * each NUL-terminated, packed in one buffer. */
struct execargs {
    char *buf;
    size_t len, cap;
    int argc, envc;
    uint64_t args_at;           /* where exec put the argument strings (user address) */
};
int execargs_init(struct execargs *ea);
void execargs_free(struct execargs *ea);
int execargs_add(struct execargs *ea, const char *s, size_t len);
/* Replace the calling process's image.  On success the frame tf is set to
 * enter the new program; 0 or -errno (before the point of no return). */
int proc_exec(const char *path, struct execargs *ea, struct trapframe *tf);
/* execveat's exec: relative paths from dir (NULL: the cwd), or the file
 * self itself (AT_EMPTY_PATH), a final symbolic link refused (nofollow);
 * path is what the program is told it was run as (AT_EXECFN, a script's
 * name). */
int proc_exec_at(const char *path, struct vnode *dir, struct vnode *self, bool nofollow,
                 struct execargs *ea, struct trapframe *tf);

/* The terminal ioctls (kern/proc/sys_tty.c): the terminal behind vp
 * (*master: vp is a pty's master), or NULL; and command cmd on it. */
struct tty *vn_tty(struct vnode *vp, bool *master);
int64_t tty_ioctl(struct vnode *vp, struct tty *t, bool master, uint32_t cmd, uint64_t arg);

/* Descriptors (kern/proc/fd.c). */
struct file *file_alloc(struct vnode *vp, int flags);
void file_hold(struct file *fp);
void file_rele(struct file *fp);
/* Install fp (consuming the caller's reference) at the lowest free slot
 * >= minfd: the descriptor or -EMFILE. */
int fd_install(struct proc *p, struct file *fp, int minfd, int fdflags);
/* The file at fd with a new reference, or NULL (also for an O_PATH
 * descriptor, which most calls refuse with EBADF, as Linux's fdget). */
struct file *fd_get(struct proc *p, int fd);
/* The same, O_PATH descriptors too: for the calls that only name the file
 * (fstat, AT_EMPTY_PATH, a dirfd, dup), as Linux's fdget_raw. */
struct file *fd_get_raw(struct proc *p, int fd);
/* May the open file be read, or written?  (Its access mode, f_flags & O_ACCMODE:
 * 0 O_RDONLY, 1 O_WRONLY, 2 O_RDWR; kern/vfs/vfs.h.) */
static inline bool file_readable(const struct file *fp) { return (fp->f_flags & 3) != 1; }
static inline bool file_writable(const struct file *fp) { return (fp->f_flags & 3) != 0; }
/* Is vp the console (/dev/console, the terminal of drivers/tty/tty.c)? */
bool vn_is_console(const struct vnode *vp);
/* Boot: named pipes (kern/proc/pipe.c) give the VFS their open. */
void fifo_init(void);
/* fcntl's F_GETPIPE_SZ and F_SETPIPE_SZ (kern/proc/pipe.c): a pipe's
 * buffer size, or set it (rounded up to a power-of-two number of pages;
 * EPERM past 1 MiB but for root, EBUSY below what it holds); EBADF for
 * what is no pipe. */
int64_t pipe_size_fcntl(struct vnode *vp, bool set, uint64_t want, struct cred *cr);
/* A write found no reader (a pipe, a socket): SIGPIPE for the caller. */
void sigpipe_self(void);
/* For splice and tee (kern/proc/sys_splice.c): is vp a pipe (or an open
 * FIFO); wait for room in one; copy its first bytes without taking them. */
bool vn_is_pipe(const struct vnode *vp);
int64_t pipe_wait_room(struct vnode *vp, bool nonblock);
int64_t pipe_peek(struct vnode *vp, char *buf, size_t n, bool nonblock);
/* A pipe or socket changed (data, room, an end closed): wake poll,
 * select and epoll (kern/proc/sys_poll.c), cheaply when nobody polls.
 * vn_poll_notify also marks a new event of vp (v_pollgen) for
 * edge-triggered epoll, of the kinds in events (POLL_READSIDE,
 * POLL_WRITESIDE: data, or room). */
void poll_notify(void);
void vn_poll_notify(struct vnode *vp, short events);
/* Wait until scan(arg, &console) finds something (returns non-zero: a
 * count or an error), uptime_ns() passes deadline (0: no wait at all,
 * UINT64_MAX: none) or a signal comes (-EINTR).  scan sets console when
 * it looked at the console, which is looked at again every 100 ms.
 * poll, select and epoll_wait share it. */
int poll_sleep(int (*scan)(void *arg, bool *console), void *arg, uint64_t deadline);
/* ppoll's, pselect6's and epoll_pwait's temporary signal mask (usig 0:
 * none; size must be 8), set before the wait and put back after it
 * (after the handler, when a signal ended it with -EINTR). */
int poll_mask_begin(uint64_t usig, uint64_t size);
void poll_mask_end(uint64_t usig, int64_t r);
/* One past the highest descriptor p may use: NOFILE or its RLIMIT_NOFILE. */
uint64_t fd_limit(const struct proc *p);
int fd_close(struct proc *p, int fd);
void fd_close_all(struct proc *p);
void fd_close_on_exec(struct proc *p);
/* Copy the table for fork. */
void fd_dup_table(struct proc *to, struct proc *from);

/* System calls (kern/proc/syscall.c). */
#define NSYSCALL 512
/* Times each unknown system call number was made (numbers >= NSYSCALL
 * are counted at NSYSCALL - 1). */
uint64_t syscall_unknown_count(unsigned nr);
void syscall_dispatch(struct trapframe *tf);
/* The user frame of the calling thread (top of its kernel stack). */
struct trapframe *curtf(void);
/* Thread t's user frame: where every entry into the kernel from user
 * mode puts it, at the top of t's kernel stack (ptrace reads a stopped
 * tracee's there). */
struct trapframe *thread_user_frame(struct thread *t);
/* The vector of a system call's frame (kern/proc/syscall_entry.asm), and
 * of one that must leave through IRET, every register back (rt_sigreturn,
 * exec, a tracer's SETREGS). */
#define VEC_SYSCALL      0x100
#define VEC_SYSCALL_IRET 0x101

/* Boot, before the scheduler starts: registers user mode's hooks with the
 * layers below, which name no process: the trap path's (trap_set_user_hooks:
 * exceptions and copyin faults, signals and preemption on the way out) and the context switch's (sched_set_switch_hook: user_switch). */
void user_mode_init(void);
/* Per-CPU setup for user mode: SYSCALL MSRs, SMEP/SMAP. */
void user_cpu_init(void);
/* fork: the child gets the caller's live x87/SSE registers. */
void fpu_copy_current(struct lwp *to);
/* The context switch's and the trap path's user-mode work (registered by
 * user_mode_init). */
struct cpu;
void user_switch(struct cpu *c, struct thread *prev, struct thread *next);
/* The calling process's SSE/x87 state back to the power-on defaults
 * (exec), in the registers and in the thread's l_fpu. */
void fpu_reset_current(void);
/* kern/proc/fpu.c: each CPU's XSAVE set-up (CR4.OSXSAVE, XCR0), the boot
 * CPU first; the switch of the user registers; signal frames' copy. */
void fpu_cpu_init(void);
void fpu_switch(struct thread *prev, struct thread *next);
size_t fpu_frame_size(void);
bool fpu_frame_xstate(void);
int fpu_frame_out(vaddr_t uaddr);
int fpu_frame_in(vaddr_t uaddr);
bool user_trap(struct trapframe *tf);
void user_trap_return(struct trapframe *tf);

/* The init process (init= option): started by kmain after the root is
 * mounted; returns when it has exited (or at once without one). */
void init_run(void);
/* Set when init asked for power-off (reboot): kmain then powers off as
 * with the poweroff option, once init has exited. */
extern volatile bool init_poweroff;

#endif
