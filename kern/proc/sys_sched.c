/*
 * CPU affinity: sched_setaffinity, sched_getaffinity and getcpu; and the
 * scheduling policies (sched_setscheduler and its kin, their theory below).
 *
 * Theory.  A process has one thread, and the thread's affinity mask
 * (kern/sched/thread.h) is the process's: the CPUs the scheduler may run
 * it on.  fork gives the child the parent's mask and exec keeps it, as on
 * Linux.  The user's mask is a bit array of whole longs; the kernel's is
 * one 64-bit word (MAX_CPUS is 64), so the calls move CPU_MASK_BYTES.
 *
 *   sched_setaffinity(pid, len, mask): the bits beyond the kernel's word
 *     are ignored and a shorter mask is zero-filled; the mask is limited
 *     to the online CPUs, and none left is EINVAL.  pid 0 is the caller,
 *     which is on an allowed CPU when the call returns; another process
 *     (ESRCH if there is none) needs the caller's effective uid to be its
 *     real or effective one, or root (EPERM), and moves at its next
 *     switch.
 *   sched_getaffinity(pid, len, mask): len must cover the CPUs and be a
 *     multiple of a long (EINVAL); returns the bytes written.  musl's
 *     sysconf(_SC_NPROCESSORS_ONLN) counts these bits: it is how a
 *     program learns the number of CPUs.
 *   getcpu(cpu, node, cache): the CPU the caller runs on and its NUMA
 *     node, each stored when its pointer is not NULL.
 *
 * Locks.  Another process is found under proc_lock (proc_apply); the mask
 * itself is written atomically and the scheduler reads it racily
 * (kern/sched/sched.c).
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/sched/sched.h>
#include <kern/vm/as.h>
#include <kern/vfs/cred.h>
#include <kern/arch/cpu.h>
#include <kern/arch/arch.h>
#include <kern/lib/errno.h>

#define CPU_MASK_BYTES sizeof(uint64_t)

struct affinity_req {
    uint64_t mask;
    const struct cred *caller;
};

static int set_other(struct proc *p, struct thread *t, void *arg)
{
    struct affinity_req *r = arg;
    const struct cred *me = r->caller, *to = p->p_cred;
    if (me->cr_uid != 0 && me->cr_uid != to->cr_uid && me->cr_uid != to->cr_ruid)
        return -EPERM;
    if (!r->mask)
        return -EINVAL;
    sched_set_affinity(t, r->mask);
    return 0;
}

static int get_other(struct proc *p, struct thread *t, void *arg)
{
    struct affinity_req *r = arg;
    r->mask = __atomic_load_n(&t->affinity, __ATOMIC_RELAXED);
    return 0;
}

/* Affinity is a thread's: pid names a thread by its tid (a process's
 * pid is its main thread's tid). */
static bool is_self(int pid)
{
    return pid == 0 || pid == curlwp()->l_tid;
}

SYSCALL_DECL(sys_sched_setaffinity)
{
    int pid = (int)a0;
    uint32_t len = (uint32_t)a1;        /* an unsigned int, as Linux's */
    uint64_t umask = a2;
    struct affinity_req r = { .mask = 0, .caller = curproc()->p_cred };
    if (copyin((void *)umask, &r.mask, MIN((size_t)len, CPU_MASK_BYTES)))
        return -EFAULT;
    if (pid < 0)
        return -ESRCH;
    r.mask &= sched_online_mask();
    if (is_self(pid)) {
        if (!r.mask)
            return -EINVAL;
        sched_set_affinity(curthread(), r.mask);
        return 0;
    }
    /* Linux looks for the process and the permission before the mask. */
    return lwp_apply(pid, set_other, &r);
}

SYSCALL_DECL(sys_sched_getaffinity)
{
    int pid = (int)a0;
    uint32_t len = (uint32_t)a1;        /* an unsigned int, as Linux's */
    uint64_t umask = a2;
    if ((uint32_t)(len * 8) < (uint32_t)ncpus || (len & (sizeof(long) - 1)))
        return -EINVAL;
    if (pid < 0)
        return -ESRCH;
    struct affinity_req r = { 0 };
    if (is_self(pid))
        r.mask = __atomic_load_n(&curthread()->affinity, __ATOMIC_RELAXED);
    else {
        int err = lwp_apply(pid, get_other, &r);
        if (err)
            return err;
    }
    r.mask &= sched_online_mask();
    size_t n = MIN((size_t)len, CPU_MASK_BYTES);
    if (copyout(&r.mask, (void *)umask, n))
        return -EFAULT;
    return (int64_t)n;
}

SYSCALL_DECL(sys_getcpu)
{
    /* Read both at once: the thread may move between two reads. */
    uint64_t f = intr_save();
    unsigned cpu = (unsigned)cpu_id(), node = (unsigned)this_cpu()->node;
    intr_restore(f);
    if (a0 && copyout(&cpu, (void *)a0, sizeof cpu))
        return -EFAULT;
    if (a1 && copyout(&node, (void *)a1, sizeof node))
        return -EFAULT;
    return 0;
}

/* ---- scheduling policies (sched_setscheduler and its kin) ----
 *
 * The dispatcher has one class, time sharing: a runnable thread waits
 * its turn on its run queue and runs until it blocks, yields or the tick
 * preempts it (a 10 ms quantum).  So SCHED_OTHER, SCHED_BATCH and
 * SCHED_IDLE are accepted and recorded (p_schedpolicy, inherited at fork
 * unless SCHED_RESET_ON_FORK), and every one of them is scheduled alike;
 * the real-time classes (SCHED_FIFO, SCHED_RR) and SCHED_DEADLINE are
 * refused with EPERM, as Linux refuses them to a user without
 * RLIMIT_RTPRIO, whoever asks.  Priorities are Linux's ranges (1..99 for
 * the real-time classes, 0 otherwise), so a program can ask for them.
 */

#define SCHED_OTHER     0
#define SCHED_FIFO      1
#define SCHED_RR        2
#define SCHED_BATCH     3
#define SCHED_IDLE      5
#define SCHED_DEADLINE  6
#define SCHED_RESET_ON_FORK 0x40000000
#define QUANTUM_NS      10000000L       /* the tick: kern/proc/syscall.c, user_tick */

static bool policy_known(int policy)
{
    return policy == SCHED_OTHER || policy == SCHED_FIFO || policy == SCHED_RR ||
           policy == SCHED_BATCH || policy == SCHED_IDLE || policy == SCHED_DEADLINE;
}

static bool policy_rt(int policy) { return policy == SCHED_FIFO || policy == SCHED_RR; }

SYSCALL_DECL(sys_sched_get_priority_max)
{
    int policy = (int)a0;
    return !policy_known(policy) ? -EINVAL : policy_rt(policy) ? 99 : 0;
}

SYSCALL_DECL(sys_sched_get_priority_min)
{
    int policy = (int)a0;
    return !policy_known(policy) ? -EINVAL : policy_rt(policy) ? 1 : 0;
}

static int read_policy(struct proc *p, void *arg)
{
    *(int *)arg = p->p_schedpolicy;
    return 0;
}

static int write_policy(struct proc *p, void *arg)
{
    const struct cred *me = curproc()->p_cred, *to = p->p_cred;
    if (me->cr_uid != 0 && me->cr_uid != to->cr_uid && me->cr_uid != to->cr_ruid)
        return -EPERM;
    p->p_schedpolicy = *(int *)arg;
    return 0;
}

/* The policy of pid (0: the caller), or -ESRCH / -EINVAL. */
static int policy_of(int pid)
{
    if (pid < 0)
        return -EINVAL;
    int policy = 0;
    int err = proc_apply(pid ? pid : curproc()->p_pid, read_policy, &policy);
    return err ? err : policy;
}

SYSCALL_DECL(sys_sched_getscheduler) { return policy_of((int)a0); }

SYSCALL_DECL(sys_sched_getparam)
{
    int policy = policy_of((int)a0);
    if (policy < 0)
        return policy;
    if (!a1)
        return -EINVAL;
    int prio = 0;               /* no real-time class: always 0 */
    return copyout(&prio, (void *)a1, sizeof prio) ? -EFAULT : 0;
}

/* Set pid's policy to policy (and its flags) with priority prio. */
static int64_t set_policy(int pid, int policy, int prio)
{
    int base = policy & ~SCHED_RESET_ON_FORK;
    if (pid < 0 || !policy_known(base) || base == SCHED_DEADLINE)
        return -EINVAL;
    if (policy_rt(base) ? prio < 1 || prio > 99 : prio != 0)
        return -EINVAL;
    if (policy_rt(base))
        return -EPERM;          /* no real-time class here (see above) */
    return proc_apply(pid ? pid : curproc()->p_pid, write_policy, &policy);
}

SYSCALL_DECL(sys_sched_setscheduler)
{
    int prio;
    if (!a2)
        return -EINVAL;
    if (copyin((void *)a2, &prio, sizeof prio))
        return -EFAULT;
    return set_policy((int)a0, (int)a1, prio);
}

SYSCALL_DECL(sys_sched_setparam)
{
    int prio, policy = policy_of((int)a0);
    if (policy < 0)
        return policy;
    if (!a1)
        return -EINVAL;
    if (copyin((void *)a1, &prio, sizeof prio))
        return -EFAULT;
    return set_policy((int)a0, policy, prio);
}

SYSCALL_DECL(sys_sched_rr_get_interval)
{
    int policy = policy_of((int)a0);
    if (policy < 0)
        return policy;
    int64_t ts[2] = { 0, QUANTUM_NS };
    return copyout(ts, (void *)a1, sizeof ts) ? -EFAULT : 0;
}
