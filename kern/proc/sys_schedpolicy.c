/*
 * Scheduling policies: sched_setscheduler, sched_setparam, sched_setattr
 * and the calls that read them back.
 *
 * Theory.  The dispatcher's classes (kern/sched/class.c) are Linux's
 * policies: SCHED_OTHER and SCHED_BATCH are time sharing weighed by nice,
 * SCHED_IDLE runs only when nothing else will, and SCHED_FIFO and SCHED_RR
 * (priorities 1..99) run before every time-sharing thread.  As on Linux a
 * policy belongs to a thread: the pid these calls take is a thread id (0:
 * the caller), a new thread and a forked child start with their maker's
 * (SCHED_RESET_ON_FORK sends them back to SCHED_OTHER, nice at least 0),
 * and exec keeps it.  Nice is the process's (p_nice, as setpriority keeps
 * it: kern/proc/sys_admin.c) and every thread of the process is weighed by
 * it; sched_setattr's sched_nice sets it for the whole process, where
 * Linux's sets one thread's.
 *
 * Permission, as Linux's without CAP_SYS_NICE: root may do anything; any
 * other caller may change only threads whose real or effective uid is its
 * effective uid (EPERM), may take a real-time policy only at a priority
 * within its RLIMIT_RTPRIO (0 by default, so EPERM), and may not lower a
 * nice value (EPERM).  SCHED_DEADLINE is refused with EINVAL by
 * sched_setscheduler and EPERM by sched_setattr, as without the privilege.
 *
 * Locks.  A thread is found and changed under proc_lock (lwp_apply), which
 * is what its parameters' [p] key names (kern/sched/thread.h).
 */
#include <kern/proc/proc.h>
#include <kern/proc/proc_impl.h>
#include <kern/proc/syscalls.h>
#include <kern/sched/sched.h>
#include <kern/vfs/cred.h>
#include <kern/vm/as.h>
#include <kern/arch/smp.h>
#include <kern/lib/errno.h>
#include <kern/lib/string.h>

#define SCHED_DEADLINE      6
#define SCHED_RESET_ON_FORK 0x40000000
#define TICK_NS             (1000000000L / TICK_HZ)

/* sched_attr's sched_flags that Tempest knows. */
#define SCHED_FLAG_RESET_ON_FORK    0x01
#define SCHED_FLAG_KEEP_POLICY      0x08
#define SCHED_FLAG_KEEP_PARAMS      0x10

/* Linux's struct sched_attr (SCHED_ATTR_SIZE_VER1: 56 bytes). */
struct sched_attr_u {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
    uint32_t sched_util_min, sched_util_max;
};
#define SCHED_ATTR_SIZE_VER0 48
#define SCHED_ATTR_SIZE_MAX  4096

static bool policy_known(int policy)
{
    return policy == SCHED_OTHER || policy == SCHED_FIFO || policy == SCHED_RR ||
           policy == SCHED_BATCH || policy == SCHED_IDLE || policy == SCHED_DEADLINE;
}

/* A change asked for: the new parameters, and what of them is new. */
struct policy_req {
    struct sched_params sp;
    bool keep_policy;           /* sched_setparam, SCHED_FLAG_KEEP_POLICY */
    bool keep_params;           /* SCHED_FLAG_KEEP_PARAMS */
    bool set_nice;              /* sched_setattr: sched_nice is given */
    int nice;
};

static bool may_change(const struct proc *p)
{
    const struct cred *me = curproc()->p_cred, *to = p->p_cred;
    return me->cr_uid == 0 || me->cr_uid == to->cr_uid || me->cr_uid == to->cr_ruid;
}

/* The rules above for an unprivileged caller; 0 or -EPERM. */
static int may_use(const struct proc *p, const struct sched_params *now,
                   const struct policy_req *r)
{
    const struct proc *me = curproc();
    if (me->p_cred->cr_uid == 0)
        return 0;
    if (!may_change(p))
        return -EPERM;
    if (sched_policy_rt(r->sp.policy) &&
        r->sp.rt_prio > me->p_rlim[RLIMIT_RTPRIO][0] &&
        !(r->sp.policy == now->policy && r->sp.rt_prio <= now->rt_prio))
        return -EPERM;
    if (r->set_nice && r->nice < p->p_nice)
        return -EPERM;
    return 0;
}

void proc_set_nice_locked(struct proc *p, int nice)
{
    p->p_nice = nice;
    for (struct lwp *l = p->p_lwps; l; l = l->l_next) {
        struct thread *t = l->l_thread;
        if (!t)
            continue;
        struct sched_params sp = t->sp;
        sp.nice = (int8_t)nice;
        sched_set_params(t, &sp);
    }
}

static int apply_policy(struct proc *p, struct thread *t, void *arg)
{
    struct policy_req *r = arg;
    struct sched_params now = t->sp;
    if (r->keep_policy) {
        r->sp.policy = now.policy;
        r->sp.reset_on_fork = now.reset_on_fork;
    }
    if (r->keep_params)
        r->sp.rt_prio = now.rt_prio;
    if (sched_policy_rt(r->sp.policy) ? r->sp.rt_prio < 1 : r->sp.rt_prio != 0)
        return -EINVAL;
    int err = may_use(p, &now, r);
    if (err)
        return err;
    r->sp.nice = now.nice;
    sched_set_params(t, &r->sp);
    if (r->set_nice)
        proc_set_nice_locked(p, r->nice);
    return 0;
}

static int64_t change_policy(int tid, struct policy_req *r)
{
    if (tid < 0)
        return -EINVAL;
    return lwp_apply(tid ? tid : curthread()->lwp->l_tid, apply_policy, r);
}

static int read_params(struct proc *p, struct thread *t, void *arg)
{
    struct sched_params *out = arg;
    *out = t->sp;
    out->nice = (int8_t)p->p_nice;
    return 0;
}

/* The parameters of thread tid (0: the caller), or -ESRCH / -EINVAL. */
static int params_of(int tid, struct sched_params *out)
{
    if (tid < 0)
        return -EINVAL;
    return lwp_apply(tid ? tid : curthread()->lwp->l_tid, read_params, out);
}

SYSCALL_DECL(sys_sched_get_priority_max)
{
    int policy = (int)a0;
    return !policy_known(policy) ? -EINVAL : sched_policy_rt(policy) ? 99 : 0;
}

SYSCALL_DECL(sys_sched_get_priority_min)
{
    int policy = (int)a0;
    return !policy_known(policy) ? -EINVAL : sched_policy_rt(policy) ? 1 : 0;
}

SYSCALL_DECL(sys_sched_getscheduler)
{
    struct sched_params sp;
    int err = params_of((int)a0, &sp);
    if (err)
        return err;
    return sp.policy | (sp.reset_on_fork ? SCHED_RESET_ON_FORK : 0);
}

SYSCALL_DECL(sys_sched_getparam)
{
    if (!a1 || (int)a0 < 0)
        return -EINVAL;
    struct sched_params sp;
    int err = params_of((int)a0, &sp);
    if (err)
        return err;
    int prio = sp.rt_prio;
    return copyout(&prio, (void *)a1, sizeof prio) ? -EFAULT : 0;
}

SYSCALL_DECL(sys_sched_setscheduler)
{
    int prio, policy = (int)a1;
    int base = policy & ~SCHED_RESET_ON_FORK;
    if ((int)a0 < 0 || !a2 || !policy_known(base) || base == SCHED_DEADLINE)
        return -EINVAL;
    if (copyin((void *)a2, &prio, sizeof prio))
        return -EFAULT;
    if (prio < 0 || prio > 99)
        return -EINVAL;
    struct policy_req r = {
        .sp = { .policy = (uint8_t)base, .rt_prio = (uint8_t)prio,
                .reset_on_fork = (policy & SCHED_RESET_ON_FORK) != 0 },
    };
    return change_policy((int)a0, &r);
}

SYSCALL_DECL(sys_sched_setparam)
{
    int prio;
    if ((int)a0 < 0 || !a1)
        return -EINVAL;
    if (copyin((void *)a1, &prio, sizeof prio))
        return -EFAULT;
    if (prio < 0 || prio > 99)
        return -EINVAL;
    struct policy_req r = { .sp = { .rt_prio = (uint8_t)prio }, .keep_policy = true };
    return change_policy((int)a0, &r);
}

SYSCALL_DECL(sys_sched_rr_get_interval)
{
    struct sched_params sp;
    int err = params_of((int)a0, &sp);
    if (err)
        return err;
    int64_t ns = sp.policy == SCHED_FIFO ? 0 : sp.policy == SCHED_RR ? RR_TICKS * TICK_NS : TICK_NS;
    int64_t ts[2] = { ns / 1000000000L, ns % 1000000000L };
    return copyout(ts, (void *)a1, sizeof ts) ? -EFAULT : 0;
}

/* Read a user struct sched_attr of the size it names: 0 or -errno (E2BIG
 * with the size Tempest takes written back, as Linux does). */
static int attr_copyin(uint64_t uaddr, struct sched_attr_u *a)
{
    uint32_t size;
    if (copyin((void *)uaddr, &size, sizeof size))
        return -EFAULT;
    if (size == 0)
        size = SCHED_ATTR_SIZE_VER0;
    if (size < SCHED_ATTR_SIZE_VER0 || size > SCHED_ATTR_SIZE_MAX) {
        uint32_t ours = sizeof *a;
        return copyout(&ours, (void *)uaddr, sizeof ours) ? -EFAULT : -E2BIG;
    }
    int err = copyin_struct(a, sizeof *a, (const void *)uaddr, size);
    if (err == -E2BIG) {        /* a field Tempest does not know is set */
        uint32_t ours = sizeof *a;
        return copyout(&ours, (void *)uaddr, sizeof ours) ? -EFAULT : -E2BIG;
    }
    a->size = size;
    return err;
}

SYSCALL_DECL(sys_sched_setattr)
{
    struct sched_attr_u a;
    if ((int)a0 < 0 || !a1 || a2)
        return -EINVAL;
    int err = attr_copyin(a1, &a);
    if (err)
        return err;
    uint64_t known = SCHED_FLAG_RESET_ON_FORK | SCHED_FLAG_KEEP_POLICY | SCHED_FLAG_KEEP_PARAMS;
    bool keep_policy = a.sched_flags & SCHED_FLAG_KEEP_POLICY;
    if ((a.sched_flags & ~known) || (!keep_policy && !policy_known((int)a.sched_policy)))
        return -EINVAL;
    if (!keep_policy && a.sched_policy == SCHED_DEADLINE)
        return -EPERM;
    if (a.sched_priority > 99)
        return -EINVAL;
    struct policy_req r = {
        .sp = { .policy = (uint8_t)a.sched_policy, .rt_prio = (uint8_t)a.sched_priority,
                .reset_on_fork = (a.sched_flags & SCHED_FLAG_RESET_ON_FORK) != 0 },
        .keep_policy = keep_policy,
        .keep_params = (a.sched_flags & SCHED_FLAG_KEEP_PARAMS) != 0,
    };
    if (!r.keep_params && !sched_policy_rt(keep_policy ? SCHED_OTHER : r.sp.policy)) {
        r.set_nice = true;
        r.nice = a.sched_nice < NICE_MIN ? NICE_MIN : a.sched_nice > NICE_MAX ? NICE_MAX
                                                                           : a.sched_nice;
    }
    return change_policy((int)a0, &r);
}

SYSCALL_DECL(sys_sched_getattr)
{
    uint32_t size = (uint32_t)a2;
    if ((int)a0 < 0 || !a1 || a3 || size < SCHED_ATTR_SIZE_VER0 || size > SCHED_ATTR_SIZE_MAX)
        return -EINVAL;
    struct sched_params sp;
    int err = params_of((int)a0, &sp);
    if (err)
        return err;
    struct sched_attr_u a = {
        .size = size < sizeof a ? size : sizeof a,
        .sched_policy = sp.policy,
        .sched_flags = sp.reset_on_fork ? SCHED_FLAG_RESET_ON_FORK : 0,
        .sched_nice = sp.nice,
        .sched_priority = sp.rt_prio,
        .sched_util_max = 1024,
    };
    return copyout(&a, (void *)a1, a.size) ? -EFAULT : 0;
}
