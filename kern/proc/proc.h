/*
 * Processes: one user thread each, an address space, credentials, a file
 * table and a current directory.  Theory in kern/proc/proc.c.
 *
 * Lock key for struct proc:
 *   [P]  proc_lock (a sleep mutex, class "proc"): the process list, the
 *        family links, state and exit status, pids
 *   [F]  p_fdlock (class "fdtable"): the descriptor table
 *   [o]  only the process's own thread (or its creator before it runs)
 *   [a]  atomic operations
 *   [c]  constant after creation
 *
 * Lock key for struct file:
 *   [a]  f_count, atomic
 *   [f]  f_lock (class "file"): the offset
 *   [c]  constant
 */
#ifndef KERN_PROC_PROC_H
#define KERN_PROC_PROC_H

#include <kern/types.h>
#include <kern/mutex.h>
#include <kern/spinlock.h>

struct as;
struct vnode;
struct cred;
struct thread;
struct trapframe;

#define SIGILL   4
#define SIGTRAP  5
#define SIGBUS   7
#define SIGFPE   8
#define SIGKILL  9
#define SIGSEGV  11
#define SIGPIPE  13
#define SIGCHLD  17
#define SIGSTOP  19
#define NSIG     64

/* Signal dispositions and sa_flags, as Linux's (kern/proc/signal.c). */
#define SIG_DFL       0
#define SIG_IGN       1
#define SA_NOCLDWAIT  0x00000002
#define SA_SIGINFO    0x00000004
#define SA_RESTORER   0x04000000
#define SA_RESTART    0x10000000
#define SA_NODEFER    0x40000000
#define SA_RESETHAND  0x80000000UL
#define SIGBIT(sig)   (1UL << ((sig) - 1))
#define SI_USER       0
#define CLD_EXITED    1
#define CLD_KILLED    2
#define CLD_DUMPED    3
#define SEGV_MAPERR   1
#define SEGV_ACCERR   2
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
};

#define NOFILE   64

/* Resource limits (getrlimit); the ones enforced are RLIMIT_NOFILE
 * (descriptors, at most NOFILE anyway) and RLIMIT_NPROC (fork). */
#define RLIMIT_STACK   3
#define RLIMIT_NPROC   6
#define RLIMIT_NOFILE  7
#define RLIM_NLIMITS   16
#define RLIM_INFINITY  (~0UL)
#define FD_CLOEXEC 1

/* wait status words, as Linux's */
#define W_EXITCODE(code)  (((code) & 0xff) << 8)
#define W_SIGNALED(sig)   ((sig) & 0x7f)

struct file {
    int f_count;                /* [a] descriptors and users */
    int f_flags;                /* [f] O_* of the open (access mode, O_APPEND, O_NONBLOCK) */
    struct mutex f_lock;
    uint64_t f_offset;          /* [f] */
    struct vnode *f_vp;         /* [c] held */
};

enum proc_state { PS_RUN, PS_ZOMBIE };

struct proc {
    int p_pid;                  /* [c] */
    int p_pgid, p_sid;          /* [P] */
    int p_state;                /* [P] enum proc_state */
    int p_status;               /* [P] wait status once a zombie */
    struct proc *p_parent;      /* [P] NULL: the kernel waits for it (spawned) */
    struct proc *p_children;    /* [P] */
    struct proc *p_sibling;     /* [P] */
    struct proc *p_next;        /* [P] every process */
    volatile int p_killsig;     /* [a] a fatal signal pending (exit at the return to user) */
    struct cred *p_cred;        /* [o] held */
    struct thread *p_thread;    /* [c] */
    struct as *p_as;            /* [o] (exec replaces it) */
    struct vnode *p_cwd;        /* [o] held */
    uint32_t p_umask;           /* [o] */
    uint64_t p_clear_tid;       /* [o] set_tid_address */
    uint64_t p_gs_base;         /* [o] user GS base (arch_prctl ARCH_SET_GS) */
    uint64_t p_rlim[RLIM_NLIMITS][2];   /* [o] soft and hard limits (inherited at fork) */
    char p_comm[16];            /* [o] */
    struct trapframe *p_forktf; /* [c] the parent's frame, for the child's first return */
    uint64_t p_fork_fsbase;     /* [c] the parent's FS base at fork */
    uint64_t p_child_settid;    /* [c] clone's CLONE_CHILD_SETTID address, or 0 */

    /* Signals (kern/proc/signal.c).  [s] is p_siglock, a spin lock
     * (class "signal") taken under proc_lock and under sleep-queue-free
     * contexts only.  Senders read p_sigact without a lock: a disposition
     * changing under a send decides only whether the signal is queued. */
    spinlock_t p_siglock;
    uint64_t p_sigpending;      /* [s] written; read [a] */
    struct ksiginfo p_siginfo[NSIG];    /* [s] the info of each pending signal */
    uint64_t p_sigmask;         /* [o] blocked signals; read [a] */
    struct sigaction_k p_sigact[NSIG];  /* [o] */
    uint64_t p_sigsaved;        /* [o] rt_sigsuspend: the mask to restore */
    bool p_restoremask;         /* [o] p_sigsaved is to be restored */
    const void *volatile p_sleepchan;   /* [a] the channel of an interruptible sleep */
    bool p_autoreap;            /* [P] zombie nobody waits for (parent ignores SIGCHLD) */

    /* The user's x87/SSE registers while its thread is switched out
     * (FXSAVE area; the kernel itself never touches them). */
    uint8_t p_fpu[512] __aligned(64);   /* [o] */

    struct mutex p_fdlock;
    struct file *p_fd[NOFILE];  /* [F] */
    uint8_t p_fdflags[NOFILE];  /* [F] FD_CLOEXEC */
};

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

/* fork: copy the calling process (frame tf); the child's pid or -errno.
 * clone passes a request (NULL for fork): */
struct clone_req {
    uint64_t newsp;             /* the child's stack pointer, or 0 */
    bool settls;
    uint64_t tls;               /* the child's FS base when settls */
    uint64_t child_settid;      /* where the child stores its tid, or 0 */
    uint64_t child_cleartid;    /* recorded as the child's clear_tid */
};
int proc_fork(struct trapframe *tf, const struct clone_req *ca);
/* wait4 without the copyout: the pid reaped and its *status, 0 (nohang,
 * none ready) or -ECHILD. */
int proc_wait(int pid, int *status, bool nohang);

/* kill: mark the processes pid names (Unix kill's pid conventions) to
 * die by sig when fatal is set; 0, -ESRCH (none) or -EPERM (none the
 * caller may signal). */
int proc_signal(int pid, int sig, bool fatal);

/* Signals (kern/proc/signal.c). */
void sig_init_proc(struct proc *p, struct proc *parent);
/* Queue sig for p with its info (a no-op for an ignored, unblocked
 * signal; SIGKILL marks p_killsig).  Wakes p from an interruptible sleep. */
void sig_post(struct proc *p, int sig, const struct ksiginfo *si);
/* A synchronous fault: delivered to a handler, or death when the signal
 * is blocked, ignored or at its default. */
void sig_fault(int sig, int code, uint64_t addr, const char *why);
/* Does a signal wait for p (an unblocked pending one, or a kill)? */
bool sig_interrupting(struct proc *p);
/* Sleep on chan (as sleep_on) unless a signal interrupts: 0, or
 * -ERESTARTSYS without sleeping when a signal is pending. */
int sig_sleep(const void *chan);
/* At the return to user mode (interrupts enabled): take the pending
 * signals.  restarting: tf was rewound to repeat an interrupted call. */
void sig_deliver(struct trapframe *tf, bool restarting);
/* rt_sigreturn: restore the frame the handler's return found; the rax
 * to return. */
int64_t sig_return(struct trapframe *tf);
/* execve: handled signals back to the default. */
void sig_exec_reset(struct proc *p);
/* The signal's default action is to ignore it (stop/continue too: no job
 * control yet). */
bool sig_default_ignores(int sig);

/* The process group and session of process pid: 0 or -ESRCH. */
int proc_ids(int pid, int *pgid, int *sid);

/* End the calling process with a wait status.  Never returns. */
void proc_exit(int status) __noreturn;
/* Mark the calling process to die by sig at its return to user mode
 * (prints why). */
void proc_kill_current(int sig, const char *why);

/* Executable loading (kern/proc/exec.c).  args: argc then envc strings,
 * each NUL-terminated, packed in one buffer. */
struct execargs {
    char *buf;
    size_t len, cap;
    int argc, envc;
};
int execargs_init(struct execargs *ea);
void execargs_free(struct execargs *ea);
int execargs_add(struct execargs *ea, const char *s, size_t len);
/* Replace the calling process's image.  On success the frame tf is set to
 * enter the new program; 0 or -errno (before the point of no return). */
int proc_exec(const char *path, struct execargs *ea, struct trapframe *tf);

/* Descriptors (kern/proc/fd.c). */
struct file *file_alloc(struct vnode *vp, int flags);
void file_hold(struct file *fp);
void file_rele(struct file *fp);
/* Install fp (consuming the caller's reference) at the lowest free slot
 * >= minfd: the descriptor or -EMFILE. */
int fd_install(struct proc *p, struct file *fp, int minfd, int fdflags);
/* The file at fd with a new reference, or NULL. */
struct file *fd_get(struct proc *p, int fd);
/* May the open file be read, or written?  (Its access mode, f_flags & O_ACCMODE:
 * 0 O_RDONLY, 1 O_WRONLY, 2 O_RDWR; kern/vfs/vfs.h.) */
static inline bool file_readable(const struct file *fp) { return (fp->f_flags & 3) != 1; }
static inline bool file_writable(const struct file *fp) { return (fp->f_flags & 3) != 0; }
/* Is vp the console (/dev/console, the terminal of kern/tty.c)? */
bool vn_is_console(const struct vnode *vp);
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

/* Per-CPU setup for user mode: SYSCALL MSRs, SMEP/SMAP. */
void user_cpu_init(void);
/* fork: the child gets the caller's live x87/SSE registers. */
void fpu_copy_current(struct proc *to);
/* Hooks for the context switch and the trap path. */
struct cpu;
void user_switch(struct cpu *c, struct thread *prev, struct thread *next);
/* The calling process's SSE/x87 state back to the power-on defaults
 * (exec), in the registers and in p_fpu. */
void fpu_reset_current(void);
bool user_trap(struct trapframe *tf);
void user_trap_return(struct trapframe *tf);

/* The init process (init= option): started by kmain after the root is
 * mounted; returns when it has exited (or at once without one). */
void init_run(void);
/* Set when init asked for power-off (reboot): kmain then powers off as
 * with the poweroff option, once init has exited. */
extern volatile bool init_poweroff;

#endif
