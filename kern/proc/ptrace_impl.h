/*
 * What kern/proc/ptrace.c (the tracee's side: stops, events, exits, the
 * tracer's wait) shares with kern/proc/sys_ptrace.c (the requests): the
 * options, the kinds of stop, the register layout, and attaching and
 * letting go.  The theory is atop ptrace.c.  Not for other files.
 */
#ifndef KERN_PROC_PTRACE_IMPL_H
#define KERN_PROC_PTRACE_IMPL_H

#include <kern/proc/proc.h>

#define PTRACE_O_TRACESYSGOOD   0x1
#define PTRACE_O_TRACEFORK      0x2
#define PTRACE_O_TRACEVFORK     0x4
#define PTRACE_O_TRACECLONE     0x8
#define PTRACE_O_TRACEEXEC      0x10
#define PTRACE_O_TRACEVFORKDONE 0x20
#define PTRACE_O_TRACEEXIT      0x40
#define PTRACE_O_TRACESECCOMP   0x80
#define PTRACE_O_EXITKILL       0x100000
#define PTRACE_O_SUSPEND_SECCOMP 0x200000
/* The options Linux accepts; the seccomp ones are accepted and mean
 * nothing here (there is no seccomp). */
#define PTRACE_O_MASK           (0xff | PTRACE_O_EXITKILL | PTRACE_O_SUSPEND_SECCOMP)
#define PTRACE_EVENT_STOP       128

#define NT_PRSTATUS     1
#define NT_PRFPREG      2
#define NT_X86_XSTATE   0x202

#define CLD_TRAPPED     4
#define RFLAGS_TF       (1UL << 8)
/* rflags bits a tracer may set: CF PF AF ZF SF TF DF OF AC (as rt_sigreturn). */
#define RFLAGS_USER     0x40dd5UL
#define AUDIT_ARCH_X86_64 0xc000003eU

/* l_ptstop: the kinds of ptrace-stop (ptrace.c's theory). */
enum { PTS_NONE, PTS_SIGNAL, PTS_SYSCALL_ENTRY, PTS_SYSCALL_EXIT, PTS_EVENT, PTS_GROUP, PTS_TRAP };

/* l_ptflags */
#define PTF_SEIZED      0x1     /* attached by PTRACE_SEIZE (or born to a seized tracee) */
#define PTF_STEP        0x2     /* TF set in its frame by PTRACE_SINGLESTEP */
#define PTF_LISTEN      0x4     /* PTRACE_LISTEN: stopped until SIGCONT */

/* A tracee's end, for its tracer's wait. */
struct ptrace_exit {
    struct ptrace_exit *next;
    int tid, pgid, uid, status;
    bool thread;                /* not a main thread: only __WALL or __WCLONE waits see it */
};

/* Linux's struct user_regs_struct. */
struct user_regs {
    uint64_t r15, r14, r13, r12, rbp, rbx, r11, r10, r9, r8, rax, rcx, rdx, rsi, rdi;
    uint64_t orig_rax, rip, cs, eflags, rsp, ss, fs_base, gs_base, ds, es, fs, gs;
};
#define USER_REGS_SIZE  sizeof(struct user_regs)
#define USER_FPREGS_OFF 224     /* struct user's i387 */
#define USER_DEBUGREG_OFF 848   /* struct user's u_debugreg[8] */
#define USER_SIZE       912     /* sizeof(struct user) */

/* Under proc_lock: make l a tracee of tracer with these options; let l
 * go (a stopped one resumes with sig); l's trap frame (l stopped or not
 * running); end a group-stop for a tracer's resume. */
void attach_locked(struct proc *tracer, struct lwp *l, uint32_t opts, bool seized);
void detach_locked(struct lwp *l, int sig);
struct trapframe *frame_of(struct lwp *l);
void clear_group_stop(struct proc *p);

#endif
