/*
 * ptrace(2)'s requests: a tracer attaching, reading and changing a
 * stopped tracee, and resuming it.  The tracee's side -- its stops, the
 * events, the exits and the tracer's wait -- and the theory are in
 * kern/proc/ptrace.c.
 *
 * Every request but TRACEME, ATTACH and SEIZE names a tracee of the
 * calling process by its thread id; one that is not the caller's, or
 * (for all but KILL and INTERRUPT) not stopped, is ESRCH, as on Linux; an
 * unknown request is EIO.  A request copies its input in before it takes
 * proc_lock, acts on the stopped tracee under the lock (tracee_stopped),
 * and copies out after; the memory requests hold the tracee's process
 * instead (hold_stopped) and copy without the lock.
 */
#include <kern/proc/proc.h>
#include <kern/proc/proc_impl.h>
#include <kern/proc/ptrace_impl.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/vfs/cred.h>
#include <kern/sched/thread.h>
#include <kern/lock/sleep.h>
#include <kern/arch/trap.h>
#include <kern/arch/cpu.h>
#include <kern/arch/arch.h>
#include <kern/lib/errno.h>
#include <kern/lib/string.h>

/* Requests, as Linux's <sys/ptrace.h>. */
#define PTRACE_TRACEME          0
#define PTRACE_PEEKTEXT         1
#define PTRACE_PEEKDATA         2
#define PTRACE_PEEKUSER         3
#define PTRACE_POKETEXT         4
#define PTRACE_POKEDATA         5
#define PTRACE_POKEUSER         6
#define PTRACE_CONT             7
#define PTRACE_KILL             8
#define PTRACE_SINGLESTEP       9
#define PTRACE_GETREGS          12
#define PTRACE_SETREGS          13
#define PTRACE_GETFPREGS        14
#define PTRACE_SETFPREGS        15
#define PTRACE_ATTACH           16
#define PTRACE_DETACH           17
#define PTRACE_SYSCALL          24
#define PTRACE_SETOPTIONS       0x4200
#define PTRACE_GETEVENTMSG      0x4201
#define PTRACE_GETSIGINFO       0x4202
#define PTRACE_SETSIGINFO       0x4203
#define PTRACE_GETREGSET        0x4204
#define PTRACE_SETREGSET        0x4205
#define PTRACE_SEIZE            0x4206
#define PTRACE_INTERRUPT        0x4207
#define PTRACE_LISTEN           0x4208
#define PTRACE_GET_SYSCALL_INFO 0x420e

struct iovec_u {
    uint64_t base, len;
};

/* Linux's struct ptrace_syscall_info (PTRACE_GET_SYSCALL_INFO). */
struct syscall_info {
    uint8_t op, pad[3];
    uint32_t arch;
    uint64_t ip, sp;
    union {
        struct { uint64_t nr, args[6]; } entry;
        struct { int64_t rval; uint8_t is_error; } exit;
    };
};
#define SYSCALL_INFO_ENTRY 1
#define SYSCALL_INFO_EXIT  2

/* ---- attaching ---- */

static int64_t traceme(void)
{
    struct proc *me = curproc();
    struct lwp *l = curlwp();
    mutex_enter(&proc_lock);
    int err = l->l_tracer || !me->p_parent ? -EPERM : 0;
    if (!err)
        attach_locked(me->p_parent, l, 0, false);
    mutex_exit(&proc_lock);
    return err;
}

/* May me trace thread l?  Not its own process's, not init's, not one
 * traced already, and only with process_vm_readv's permission. */
static int may_attach_locked(struct proc *me, struct lwp *l)
{
    struct proc *p = l->l_proc;
    if (p == me || p->p_pid == 1 || l->l_tracer || !l->l_thread)
        return -EPERM;
    return proc_may_inspect(me, p) ? 0 : -EPERM;
}

static int64_t attach(int tid, bool seize, uint64_t opts)
{
    if (seize && (opts & ~(uint64_t)PTRACE_O_MASK))
        return -EIO;
    struct proc *me = curproc();
    mutex_enter(&proc_lock);
    struct lwp *l = tid > 0 ? lwp_find_locked(tid) : NULL;
    int err = l ? may_attach_locked(me, l) : -ESRCH;
    if (!err) {
        attach_locked(me, l, seize ? (uint32_t)opts : 0, seize);
        if (!seize) {
            struct ksiginfo si = {
                .si_signo = SIGSTOP, .si_code = 0, .si_pid = me->p_pid,
                .si_uid = (int)me->p_cred->cr_ruid,
            };
            sig_post_lwp(l, SIGSTOP, &si);
        }
    }
    mutex_exit(&proc_lock);
    return err;
}

/* ---- finding the tracee ---- */

static struct lwp *tracee_locked(struct proc *me, int tid)
{
    for (struct lwp *l = me->p_tracees; l; l = l->l_trace_next)
        if (l->l_tid == tid)
            return l;
    return NULL;
}

/* Take proc_lock and find the caller's tracee tid in a ptrace-stop and
 * off its CPU (its FPU area saved): it, with the lock held, or NULL with
 * the lock let go. */
static struct lwp *tracee_stopped(int tid)
{
    mutex_enter(&proc_lock);
    struct lwp *l = tracee_locked(curproc(), tid);
    if (!l || l->l_ptstop == PTS_NONE || !l->l_thread) {
        mutex_exit(&proc_lock);
        return NULL;
    }
    while (__atomic_load_n(&l->l_thread->on_cpu, __ATOMIC_ACQUIRE))
        thread_yield();         /* it is still switching out */
    return l;
}

/* The stopped tracee's process, held (proc_rele it), or NULL. */
static struct proc *hold_stopped(int tid)
{
    struct lwp *l = tracee_stopped(tid);
    if (!l)
        return NULL;
    struct proc *p = l->l_proc;
    p->p_holds++;
    mutex_exit(&proc_lock);
    return p;
}

/* ---- memory ---- */

static int64_t peek(int tid, uint64_t addr, uint64_t data)
{
    struct proc *p = hold_stopped(tid);
    if (!p)
        return -ESRCH;
    uint64_t word;
    int64_t got = as_copy_remote(p->p_as, addr, (char *)&word, sizeof word, false);
    proc_rele(p);
    if (got != (int64_t)sizeof word)
        return -EIO;
    return copyout(&word, (void *)data, sizeof word) ? -EFAULT : 0;
}

static int64_t poke(int tid, uint64_t addr, uint64_t data)
{
    struct proc *p = hold_stopped(tid);
    if (!p)
        return -ESRCH;
    int64_t put = as_poke_remote(p->p_as, addr, (const char *)&data, sizeof data);
    proc_rele(p);
    return put == (int64_t)sizeof data ? 0 : -EIO;
}

/* ---- registers ---- */

/* The selectors Linux's 64-bit programs run with, which a tracer reads
 * to know them from 32-bit ones (gdb takes 0x23, Tempest's own user code
 * selector, for Linux's 32-bit one): shown in place of Tempest's. */
#define LINUX_USER_CS 0x33
#define LINUX_USER_DS 0x2b

static bool syscall_frame(const struct trapframe *tf)
{
    return tf->vector == VEC_SYSCALL || tf->vector == VEC_SYSCALL_IRET;
}

static void regs_get(struct lwp *l, struct user_regs *r)
{
    const struct trapframe *tf = frame_of(l);
    uint64_t flags = tf->rflags;
    if (l->l_ptflags & PTF_STEP)
        flags &= ~RFLAGS_TF;            /* the tracer's TF is not the program's */
    *r = (struct user_regs){
        .r15 = tf->r15, .r14 = tf->r14, .r13 = tf->r13, .r12 = tf->r12,
        .rbp = tf->rbp, .rbx = tf->rbx, .r11 = tf->r11, .r10 = tf->r10,
        .r9 = tf->r9, .r8 = tf->r8, .rax = tf->rax, .rcx = tf->rcx,
        .rdx = tf->rdx, .rsi = tf->rsi, .rdi = tf->rdi,
        .orig_rax = syscall_frame(tf) ? tf->error : (uint64_t)-1,
        .rip = tf->rip, .cs = LINUX_USER_CS, .eflags = flags, .rsp = tf->rsp,
        .ss = LINUX_USER_DS,
        .fs_base = l->l_thread->fs_base, .gs_base = l->l_gs_base,
    };
}

/* Load r into l's frame.  The selectors stay Tempest's user ones, rflags
 * takes only the bits a program may set, and a return address, stack or
 * base outside user space is refused (Linux: EIO, EPERM for a base). */
static int regs_set(struct lwp *l, const struct user_regs *r)
{
    if (r->rip >= USER_TOP || r->rsp > USER_TOP)
        return -EIO;
    if (r->fs_base >= USER_TOP || r->gs_base >= USER_TOP)
        return -EPERM;
    struct trapframe *tf = frame_of(l);
    tf->r15 = r->r15; tf->r14 = r->r14; tf->r13 = r->r13; tf->r12 = r->r12;
    tf->rbp = r->rbp; tf->rbx = r->rbx; tf->r11 = r->r11; tf->r10 = r->r10;
    tf->r9 = r->r9; tf->r8 = r->r8; tf->rax = r->rax; tf->rcx = r->rcx;
    tf->rdx = r->rdx; tf->rsi = r->rsi; tf->rdi = r->rdi;
    tf->rip = r->rip;
    tf->rsp = r->rsp;
    tf->rflags = (tf->rflags & ~RFLAGS_USER) | (r->eflags & RFLAGS_USER);
    l->l_ptflags &= ~PTF_STEP;          /* TF is now what the tracer says */
    if (syscall_frame(tf)) {
        tf->error = r->orig_rax;
        tf->vector = VEC_SYSCALL_IRET;  /* rcx and r11 come back as set */
    }
    l->l_thread->fs_base = r->fs_base;
    l->l_gs_base = r->gs_base;
    return 0;
}

/* The stopped tracee tid's registers: 0, or -ESRCH. */
static int regs_of(int tid, struct user_regs *r)
{
    struct lwp *l = tracee_stopped(tid);
    if (!l)
        return -ESRCH;
    regs_get(l, r);
    mutex_exit(&proc_lock);
    return 0;
}

static int64_t getregs(int tid, uint64_t data)
{
    struct user_regs r;
    int err = regs_of(tid, &r);
    return err ? err : copyout(&r, (void *)data, sizeof r) ? -EFAULT : 0;
}

static int64_t setregs(int tid, uint64_t data)
{
    struct user_regs r;
    if (copyin((const void *)data, &r, sizeof r))
        return -EFAULT;
    struct lwp *l = tracee_stopped(tid);
    if (!l)
        return -ESRCH;
    int err = regs_set(l, &r);
    mutex_exit(&proc_lock);
    return err;
}

/* PEEKUSER and POKEUSER: a word of Linux's struct user; the registers
 * and the debug registers (none set: reads 0, and only 0 may be
 * written) mean something, the rest reads 0. */
static int64_t peekuser(int tid, uint64_t off, uint64_t data)
{
    if ((off & 7) || off >= USER_SIZE)
        return -EIO;
    struct user_regs r;
    int err = regs_of(tid, &r);
    if (err)
        return err;
    uint64_t word = off < USER_REGS_SIZE ? ((uint64_t *)&r)[off / 8] : 0;
    return copyout(&word, (void *)data, sizeof word) ? -EFAULT : 0;
}

static int64_t pokeuser(int tid, uint64_t off, uint64_t data)
{
    if ((off & 7) || off >= USER_SIZE)
        return -EIO;
    struct lwp *l = tracee_stopped(tid);
    if (!l)
        return -ESRCH;
    int err = -EIO;
    if (off < USER_REGS_SIZE) {
        struct user_regs r;
        regs_get(l, &r);
        ((uint64_t *)&r)[off / 8] = data;
        err = regs_set(l, &r);
    } else if (off >= USER_DEBUGREG_OFF && data == 0) {
        err = 0;
    }
    mutex_exit(&proc_lock);
    return err;
}

/* ---- register sets (GETREGSET, SETREGSET, GETFPREGS, SETFPREGS) ---- */

static int64_t regset_size(uint64_t type)
{
    switch (type) {
    case NT_PRSTATUS: return USER_REGS_SIZE;
    case NT_PRFPREG: return (int64_t)fpu_regset_size(false);
    case NT_X86_XSTATE: return fpu_regset_size(true) ? (int64_t)fpu_regset_size(true) : -ENODEV;
    default: return -EINVAL;
    }
}

/* Read regset type of stopped tracee tid into buf (regset_size bytes). */
static int regset_read(int tid, uint64_t type, uint8_t *buf)
{
    struct lwp *l = tracee_stopped(tid);
    if (!l)
        return -ESRCH;
    if (type == NT_PRSTATUS)
        regs_get(l, (struct user_regs *)buf);
    else
        fpu_regset_get(l, buf, type == NT_X86_XSTATE);
    mutex_exit(&proc_lock);
    return 0;
}

static int regset_write(int tid, uint64_t type, const uint8_t *buf)
{
    struct lwp *l = tracee_stopped(tid);
    if (!l)
        return -ESRCH;
    int err = 0;
    if (type == NT_PRSTATUS)
        err = regs_set(l, (const struct user_regs *)buf);
    else
        fpu_regset_set(l, buf, type == NT_X86_XSTATE);
    mutex_exit(&proc_lock);
    return err;
}

static int64_t fpregs(int tid, uint64_t data, bool set)
{
    uint8_t buf[FPU_AREA_MAX] __aligned(64);
    size_t n = fpu_regset_size(false);
    if (set) {
        if (copyin((const void *)data, buf, n))
            return -EFAULT;
        return regset_write(tid, NT_PRFPREG, buf);
    }
    int err = regset_read(tid, NT_PRFPREG, buf);
    return err ? err : copyout(buf, (void *)data, n) ? -EFAULT : 0;
}

/* GETREGSET and SETREGSET: the regset through the iovec at data, whose
 * length says how much (and is set to what moved). */
static int64_t regset(int tid, uint64_t type, uint64_t data, bool set)
{
    struct iovec_u iov;
    uint8_t buf[FPU_AREA_MAX] __aligned(64);
    if (copyin((const void *)data, &iov, sizeof iov))
        return -EFAULT;
    int64_t size = regset_size(type);
    if (size < 0)
        return size;
    size_t n = MIN(iov.len, (uint64_t)size);
    int err = regset_read(tid, type, buf);
    if (err)
        return err;
    if (set) {
        if (copyin((const void *)iov.base, buf, n))
            return -EFAULT;
        err = regset_write(tid, type, buf);
    } else if (copyout(buf, (void *)iov.base, n)) {
        return -EFAULT;
    }
    iov.len = n;
    if (!err && copyout(&iov, (void *)data, sizeof iov))
        return -EFAULT;
    return err;
}

/* ---- what the stop says ---- */

/* A group-stop of a tracee not seized has no siginfo (EINVAL: how its
 * tracer tells it from a signal-delivery-stop); a seized one's is its
 * PTRACE_EVENT_STOP. */
static bool has_siginfo(const struct lwp *l)
{
    return l->l_ptstop != PTS_GROUP || (l->l_ptflags & PTF_SEIZED);
}

static int64_t getsiginfo(int tid, uint64_t data)
{
    uint8_t info[128];
    struct lwp *l = tracee_stopped(tid);
    if (!l)
        return -ESRCH;
    int err = has_siginfo(l) ? 0 : -EINVAL;
    if (!err)
        sig_siginfo_out(info, l->l_ptsi.si_signo, &l->l_ptsi);
    mutex_exit(&proc_lock);
    if (err)
        return err;
    return copyout(info, (void *)data, sizeof info) ? -EFAULT : 0;
}

/* SETSIGINFO: the fields of Linux's siginfo that a ksiginfo keeps. */
static int64_t setsiginfo(int tid, uint64_t data)
{
    uint8_t info[128];
    if (copyin((const void *)data, info, sizeof info))
        return -EFAULT;
    struct ksiginfo si = { 0 };
    memcpy(&si.si_signo, info, 4);
    memcpy(&si.si_code, info + 8, 4);
    memcpy(&si.si_pid, info + 16, 4);
    memcpy(&si.si_uid, info + 20, 4);
    memcpy(&si.si_status, info + 24, 4);
    memcpy(&si.si_addr, info + 16, 8);
    memcpy(&si.si_value, info + 24, 8);
    struct lwp *l = tracee_stopped(tid);
    if (!l)
        return -ESRCH;
    int err = has_siginfo(l) ? 0 : -EINVAL;
    if (!err)
        l->l_ptsi = si;
    mutex_exit(&proc_lock);
    return err;
}

static int64_t geteventmsg(int tid, uint64_t data)
{
    struct lwp *l = tracee_stopped(tid);
    if (!l)
        return -ESRCH;
    uint64_t msg = l->l_ptmsg;
    mutex_exit(&proc_lock);
    return copyout(&msg, (void *)data, sizeof msg) ? -EFAULT : 0;
}

static int64_t setoptions(int tid, uint64_t opts)
{
    if (opts & ~(uint64_t)PTRACE_O_MASK)
        return -EINVAL;
    struct lwp *l = tracee_stopped(tid);
    if (!l)
        return -ESRCH;
    l->l_ptopts = (uint32_t)opts;
    mutex_exit(&proc_lock);
    return 0;
}

/* GET_SYSCALL_INFO: the call a syscall-stop is at (its number and
 * arguments at the entry, its result at the exit); size is how much the
 * caller's buffer takes; returns how much there is. */
static int64_t syscall_info(int tid, uint64_t size, uint64_t data)
{
    struct syscall_info si;
    memset(&si, 0, sizeof si);
    struct lwp *l = tracee_stopped(tid);
    if (!l)
        return -ESRCH;
    const struct trapframe *tf = frame_of(l);
    si.arch = AUDIT_ARCH_X86_64;
    si.ip = tf->rip;
    si.sp = tf->rsp;
    size_t len = offsetof(struct syscall_info, entry);
    if (l->l_ptstop == PTS_SYSCALL_ENTRY) {
        si.op = SYSCALL_INFO_ENTRY;
        si.entry.nr = tf->error;
        uint64_t args[6] = { tf->rdi, tf->rsi, tf->rdx, tf->r10, tf->r8, tf->r9 };
        memcpy(si.entry.args, args, sizeof args);
        len = offsetof(struct syscall_info, entry.args) + sizeof args;
    } else if (l->l_ptstop == PTS_SYSCALL_EXIT) {
        si.op = SYSCALL_INFO_EXIT;
        si.exit.rval = (int64_t)tf->rax;
        si.exit.is_error = si.exit.rval < 0 && si.exit.rval >= -4095;
        len = offsetof(struct syscall_info, exit.is_error) + 1;
    }
    mutex_exit(&proc_lock);
    return copyout(&si, (void *)data, MIN(size, len)) ? -EFAULT : (int64_t)len;
}

/* ---- resuming ---- */

/* CONT, SYSCALL, SINGLESTEP and DETACH with signal sig, and LISTEN. */
static int64_t resume(long req, int tid, uint64_t sig)
{
    if (sig > NSIG)
        return -EIO;
    struct lwp *l = tracee_stopped(tid);
    if (!l)
        return -ESRCH;
    int err = 0;
    if (req == PTRACE_LISTEN) {
        if (!(l->l_ptflags & PTF_SEIZED) || l->l_ptstop != PTS_GROUP) {
            err = -EIO;
        } else {
            l->l_ptflags |= PTF_LISTEN;     /* stopped on, until SIGCONT */
            l->l_ptreport = 0;
            wakeup(&l->l_ptstop);
        }
    } else if (req == PTRACE_DETACH) {
        detach_locked(l, (int)sig);
    } else {
        l->l_thread->ptrace_syscalls = req == PTRACE_SYSCALL;
        struct trapframe *tf = frame_of(l);
        if (req == PTRACE_SINGLESTEP && !(tf->rflags & RFLAGS_TF)) {
            tf->rflags |= RFLAGS_TF;
            l->l_ptflags |= PTF_STEP;
        } else if (req != PTRACE_SINGLESTEP && (l->l_ptflags & PTF_STEP)) {
            tf->rflags &= ~RFLAGS_TF;
            l->l_ptflags &= ~PTF_STEP;
        }
        if (l->l_ptstop == PTS_GROUP && __atomic_load_n(&l->l_proc->p_stopped, __ATOMIC_ACQUIRE))
            clear_group_stop(l->l_proc);
        l->l_ptsig = (int)sig;
        l->l_ptstop = PTS_NONE;
        l->l_ptreport = 0;
        wakeup(&l->l_ptstop);
    }
    mutex_exit(&proc_lock);
    return err;
}

/* KILL and INTERRUPT: for a tracee stopped or running. */
static int64_t kill_or_interrupt(long req, int tid)
{
    mutex_enter(&proc_lock);
    struct lwp *l = tracee_locked(curproc(), tid);
    int err = l ? 0 : -ESRCH;
    if (l && req == PTRACE_KILL) {
        sig_post(l->l_proc, SIGKILL, &(struct ksiginfo){ .si_signo = SIGKILL });
    } else if (l && !(l->l_ptflags & PTF_SEIZED)) {
        err = -EIO;
    } else if (l) {
        __atomic_store_n(&l->l_pttrap, 1, __ATOMIC_RELEASE);
        sig_kick_lwp(l);
    }
    mutex_exit(&proc_lock);
    return err;
}

SYSCALL_DECL(sys_ptrace)
{
    long req = (long)a0;
    int tid = (int)a1;
    uint64_t addr = a2, data = a3;
    switch (req) {
    case PTRACE_TRACEME: return traceme();
    case PTRACE_ATTACH: return attach(tid, false, 0);
    case PTRACE_SEIZE: return addr ? -EIO : attach(tid, true, data);
    case PTRACE_KILL: case PTRACE_INTERRUPT: return kill_or_interrupt(req, tid);
    case PTRACE_PEEKTEXT: case PTRACE_PEEKDATA: return peek(tid, addr, data);
    case PTRACE_POKETEXT: case PTRACE_POKEDATA: return poke(tid, addr, data);
    case PTRACE_PEEKUSER: return peekuser(tid, addr, data);
    case PTRACE_POKEUSER: return pokeuser(tid, addr, data);
    case PTRACE_GETREGS: return getregs(tid, data);
    case PTRACE_SETREGS: return setregs(tid, data);
    case PTRACE_GETFPREGS: return fpregs(tid, data, false);
    case PTRACE_SETFPREGS: return fpregs(tid, data, true);
    case PTRACE_GETREGSET: return regset(tid, addr, data, false);
    case PTRACE_SETREGSET: return regset(tid, addr, data, true);
    case PTRACE_GETSIGINFO: return getsiginfo(tid, data);
    case PTRACE_SETSIGINFO: return setsiginfo(tid, data);
    case PTRACE_GETEVENTMSG: return geteventmsg(tid, data);
    case PTRACE_SETOPTIONS: return setoptions(tid, data);
    case PTRACE_GET_SYSCALL_INFO: return syscall_info(tid, addr, data);
    case PTRACE_CONT: case PTRACE_SYSCALL: case PTRACE_SINGLESTEP: case PTRACE_DETACH:
    case PTRACE_LISTEN:
        return resume(req, tid, data);
    default: {
        /* Linux looks for the tracee first. */
        mutex_enter(&proc_lock);
        bool mine = tracee_locked(curproc(), tid) != NULL;
        mutex_exit(&proc_lock);
        return mine ? -EIO : -ESRCH;
    }
    }
}
