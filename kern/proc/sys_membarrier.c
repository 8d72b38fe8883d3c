/*
 * membarrier: a memory barrier on every CPU that runs the caller's
 * threads (or every CPU), so that user-space RCU and garbage collectors
 * can make their fast paths fence-free, as Linux's membarrier(2).
 *
 * Theory.  Every command that orders memory runs a full fence on every
 * online CPU through a cross-CPU call (smp_call_all, kern/arch/smp.c)
 * and waits for all of them: a CPU that takes the call's interrupt has
 * finished every store its thread made before it, and returning from
 * the interrupt (iret) serializes the core, which is what the SYNC_CORE
 * commands ask for on x86.  Linux sends its expedited interrupts only to
 * the CPUs running the caller's threads; Tempest sends them to all, a
 * superset: more interrupts, the same guarantee.  MEMBARRIER_CMD_GLOBAL,
 * Linux's synchronize_rcu, is the same call here.  The private commands
 * need the process's registration first (EPERM), as Linux's; the global
 * expedited one needs none from the caller.  The rseq commands (restarting
 * the other threads' critical sections) and GET_REGISTRATIONS are not
 * offered: EINVAL, as from a Linux built without them, and QUERY leaves
 * them out.
 *
 * Locks: none of its own; p_membarrier is updated atomically.
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/arch/smp.h>
#include <kern/lib/errno.h>

#define CMD_QUERY                        0
#define CMD_GLOBAL                       (1 << 0)
#define CMD_GLOBAL_EXPEDITED             (1 << 1)
#define CMD_REGISTER_GLOBAL_EXPEDITED    (1 << 2)
#define CMD_PRIVATE_EXPEDITED            (1 << 3)
#define CMD_REGISTER_PRIVATE_EXPEDITED   (1 << 4)
#define CMD_PRIVATE_EXPEDITED_SYNC_CORE  (1 << 5)
#define CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE (1 << 6)
#define CMDS_OFFERED                     0x7f

static void fence_here(void *arg)
{
    (void)arg;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static int barrier_everywhere(void)
{
    smp_call_all(fence_here, NULL);
    return 0;
}

static int registered(struct proc *p, uint32_t reg)
{
    return (__atomic_load_n(&p->p_membarrier, __ATOMIC_ACQUIRE) & reg) ? 0 : -EPERM;
}

static int register_for(struct proc *p, uint32_t reg)
{
    __atomic_or_fetch(&p->p_membarrier, reg, __ATOMIC_RELEASE);
    return 0;
}

SYSCALL_DECL(sys_membarrier)
{
    int cmd = (int)a0;
    struct proc *p = curproc();
    if ((unsigned)a1)
        return -EINVAL;     /* MEMBARRIER_CMD_FLAG_CPU is the rseq command's alone */
    switch (cmd) {
    case CMD_QUERY:
        return CMDS_OFFERED;
    case CMD_GLOBAL:
    case CMD_GLOBAL_EXPEDITED:
        return barrier_everywhere();
    case CMD_REGISTER_GLOBAL_EXPEDITED:
    case CMD_REGISTER_PRIVATE_EXPEDITED:
    case CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE:
        return register_for(p, (uint32_t)cmd);
    case CMD_PRIVATE_EXPEDITED:
        return registered(p, CMD_REGISTER_PRIVATE_EXPEDITED) ?: barrier_everywhere();
    case CMD_PRIVATE_EXPEDITED_SYNC_CORE:
        return registered(p, CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE) ?: barrier_everywhere();
    default:
        return -EINVAL;
    }
}
