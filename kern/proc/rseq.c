/*
 * rseq: restartable sequences (the rseq system call).
 *
 * Theory.  A thread registers a struct rseq in its own memory (glibc
 * does at every thread's start).  The kernel keeps two promises about
 * it, as Linux does.  First, cpu_id_start, cpu_id and node_id hold the
 * CPU and node the thread runs on whenever it runs in user mode: the
 * context switch that puts a registered thread on a CPU asks for an
 * update (THREAD_AST_RSEQ), made on its way back to user mode
 * (rseq_return, from user_ast), so sched_getcpu is a load.  Second, a
 * critical section the thread has announced in rseq_cs is never left
 * half done: if the thread was switched out, or a signal comes, while
 * its user instruction pointer is inside [start_ip, start_ip +
 * post_commit_offset), it resumes at abort_ip instead (after checking
 * that the four bytes before abort_ip hold the signature it registered
 * with), and rseq_cs is cleared.  A struct rseq or rseq_cs the kernel
 * cannot read or write, or a wrong signature, kills the thread's process
 * with SIGSEGV, as Linux's force_sigsegv.
 *
 * fork keeps the calling thread's registration (the child has the same
 * memory); a new thread and exec start with none.
 *
 * Locks: none; only the thread itself touches its registration ([o]).
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/sched/thread.h>
#include <kern/vm/as.h>
#include <kern/arch/cpu.h>
#include <kern/arch/trap.h>
#include <kern/lib/errno.h>

#define RSEQ_FLAG_UNREGISTER 1
#define RSEQ_ORIG_SIZE  32          /* struct rseq as glibc registers it */
#define RSEQ_CS_OFF     8
#define RSEQ_NODE_OFF   20
#define RSEQ_CID_OFF    24

struct rseq_cs_u {
    uint32_t version, flags;
    uint64_t start_ip, post_commit_offset, abort_ip;
};

/* Linux's checks: at least the original 32 bytes, aligned to them. */
static bool rseq_args_bad(uint64_t addr, uint32_t len)
{
    return len < RSEQ_ORIG_SIZE || (addr & (RSEQ_ORIG_SIZE - 1));
}

SYSCALL_DECL(sys_rseq)
{
    struct lwp *l = curlwp();
    uint64_t addr = a0;
    uint32_t len = (uint32_t)a1, sig = (uint32_t)a3;
    int flags = (int)a2;
    if (flags & RSEQ_FLAG_UNREGISTER) {
        if (flags & ~RSEQ_FLAG_UNREGISTER)
            return -EINVAL;
        if (!l->l_rseq || l->l_rseq != addr || l->l_rseq_len != len)
            return -EINVAL;
        if (l->l_rseq_sig != sig)
            return -EPERM;
        l->l_rseq = 0;
        return 0;
    }
    if (flags)
        return -EINVAL;
    if (l->l_rseq)
        return l->l_rseq == addr && l->l_rseq_len == len ? (l->l_rseq_sig == sig ? -EBUSY : -EPERM)
                                                       : -EINVAL;
    if (rseq_args_bad(addr, len))
        return -EINVAL;
    if (addr > USER_TOP - len)
        return -EFAULT;
    l->l_rseq = addr;
    l->l_rseq_len = len;
    l->l_rseq_sig = sig;
    thread_ast_post(curthread(), THREAD_AST_RSEQ);  /* the ids before it returns */
    return 0;
}

/* The registration is broken: the process dies of SIGSEGV. */
static void rseq_broken(struct lwp *l, const char *why)
{
    l->l_rseq = 0;
    proc_kill_current(SIGSEGV, why);
}

void rseq_fixup(struct trapframe *tf)
{
    struct lwp *l = curlwp();
    uint64_t csp;
    if (copyin((void *)(l->l_rseq + RSEQ_CS_OFF), &csp, sizeof csp)) {
        rseq_broken(l, "rseq: its struct rseq is not readable");
        return;
    }
    if (!csp)
        return;
    struct rseq_cs_u cs;
    uint64_t zero = 0;
    if (copyin((void *)csp, &cs, sizeof cs)) {
        rseq_broken(l, "rseq: its rseq_cs is not readable");
        return;
    }
    bool inside = tf->rip - cs.start_ip < cs.post_commit_offset;
    if (inside) {
        uint32_t sig;
        if (cs.abort_ip < 4 || copyin((void *)(cs.abort_ip - 4), &sig, sizeof sig) ||
            sig != l->l_rseq_sig || cs.abort_ip >= USER_TOP) {
            rseq_broken(l, "rseq: a bad abort address or signature");
            return;
        }
        tf->rip = cs.abort_ip;
    }
    if (copyout(&zero, (void *)(l->l_rseq + RSEQ_CS_OFF), sizeof zero))
        rseq_broken(l, "rseq: its struct rseq is not writable");
}

void rseq_return(struct trapframe *tf)
{
    struct lwp *l = curlwp();
    if (!l || !l->l_rseq)
        return;
    rseq_fixup(tf);
    if (!l->l_rseq)
        return;
    struct cpu *c = this_cpu();
    uint32_t ids[2] = { (uint32_t)c->id, (uint32_t)c->id };
    uint32_t node = (uint32_t)c->node, cid = (uint32_t)c->id;
    int bad = copyout(ids, (void *)l->l_rseq, sizeof ids) ||
              copyout(&node, (void *)(l->l_rseq + RSEQ_NODE_OFF), sizeof node);
    if (!bad && l->l_rseq_len >= RSEQ_CID_OFF + sizeof cid)
        bad = copyout(&cid, (void *)(l->l_rseq + RSEQ_CID_OFF), sizeof cid);
    if (bad)
        rseq_broken(l, "rseq: its struct rseq is not writable");
}
