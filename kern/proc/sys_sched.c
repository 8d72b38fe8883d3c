/*
 * CPU affinity: sched_setaffinity, sched_getaffinity and getcpu.  The
 * scheduling policies (sched_setscheduler and its kin) are in
 * kern/proc/sys_schedpolicy.c.
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
