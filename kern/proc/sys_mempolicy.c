/*
 * set_mempolicy and get_mempolicy: a thread's NUMA memory policy, as
 * numactl and libnuma set and read it.
 *
 * Theory.  The policy (struct mempolicy, kern/vm/page.h) lives in the
 * calling thread (t->mempolicy) and is read by the page allocator for
 * each user data page the thread faults in (user_page_alloc,
 * kern/vm/as_pt.c; the placement rules are page_alloc_policy's).  A new
 * thread and a fork copy their creator's; exec keeps it, so numactl sets
 * it and runs the program.  The checks are Linux's, in its order:
 * set_mempolicy's mode and mode flags (EINVAL), the node mask (maxnode - 1
 * bits, a page of bits at most, EFAULT, bits past the kernel's nodes
 * EINVAL), then the mode's own rule (DEFAULT with nodes, LOCAL with
 * nodes, BIND or INTERLEAVE with none: EINVAL; PREFERRED with none is
 * LOCAL); nodes without memory are dropped, and none left is EINVAL.
 * mbind gives a range of mappings a policy of their own (struct seg's
 * s_policy, split at the range's ends as mprotect splits), which the
 * faults there follow before the thread's (user_page_alloc_for); INTERLEAVE
 * there picks the node by the page's place in the mapping, so a page
 * lands where its neighbours' pattern says, whoever faults it.  Forks
 * copy it with the mappings.  get_mempolicy answers the thread's policy,
 * the nodes memory may come from (MPOL_F_MEMS_ALLOWED), the policy
 * governing an address (MPOL_F_ADDR: the mapping's own, or DEFAULT) or
 * the node of the page there (MPOL_F_NODE|MPOL_F_ADDR, faulting it in),
 * or INTERLEAVE's next node (MPOL_F_NODE).
 *
 * Simplifications, said plainly: file pages (the page cache) follow
 * alloc= and cluster=, not the policy; MPOL_F_RELATIVE_NODES is taken as
 * MPOL_F_STATIC_NODES (no cpusets here, so the allowed nodes never
 * change and the two agree); MPOL_F_NUMA_BALANCING and the weighted
 * interleave are not offered (EINVAL).
 *
 * move_pages tells the node of each page asked about, or moves it; and
 * migrate_pages moves a process's pages off some nodes onto others; both
 * through kern/vm/migrate.c, whose theory says which pages can move.  A
 * page already on one of migrate_pages' new nodes stays where it is.
 *
 * Locks: none; a thread's policy is its own.
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/sched/thread.h>
#include <kern/vm/as.h>
#include <kern/vm/page.h>
#include <kern/arch/numa.h>
#include <kern/vfs/cred.h>
#include <kern/lib/errno.h>

#define MPOL_F_STATIC_NODES   (1 << 15)
#define MPOL_F_RELATIVE_NODES (1 << 14)
#define MPOL_MODE_FLAGS       (MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES)
#define MPOL_F_NODE           (1 << 0)
#define MPOL_F_ADDR           (1 << 1)
#define MPOL_F_MEMS_ALLOWED   (1 << 2)
#define MASK_BITS_MAX         (PAGE_SIZE * 8)

/* The node mask at unodes, maxnode - 1 bits of it (Linux's count), in
 * *nodes: EINVAL past a page of bits or for a node Tempest cannot have. */
static int nodes_in(uint64_t unodes, uint64_t maxnode, uint64_t *nodes)
{
    *nodes = 0;
    if (maxnode-- == 0 || !unodes)
        return 0;
    if (maxnode > MASK_BITS_MAX)
        return -EINVAL;
    uint64_t words = (maxnode + 63) / 64;
    for (uint64_t w = 0; w < words; w++) {
        uint64_t v;
        if (copyin((void *)(unodes + w * 8), &v, sizeof v))
            return -EFAULT;
        uint64_t bits = MIN(64, maxnode - w * 64);
        if (bits < 64)
            v &= (1UL << bits) - 1;
        if (w == 0)
            *nodes = v;
        else if (v)
            return -EINVAL;         /* past MAX_NODES (64) */
    }
    return 0;
}

/* The mask out to the user, maxnode bits rounded up to whole words, as
 * Linux's copy_nodes_to_user. */
static int nodes_out(uint64_t unodes, uint64_t maxnode, uint64_t nodes)
{
    uint64_t words = (maxnode + 63) / 64;
    for (uint64_t w = 0; w < words; w++) {
        uint64_t v = w == 0 ? nodes : 0;
        if (copyout(&v, (void *)(unodes + w * 8), sizeof v))
            return -EFAULT;
    }
    return 0;
}

/* Linux's mpol_new and mpol_set_nodemask: the policy for mode and nodes,
 * or EINVAL. */
static int policy_make(int mode, int flags, uint64_t nodes, struct mempolicy *pol)
{
    *pol = (struct mempolicy){ .mode = (uint16_t)mode, .flags = (uint16_t)flags, .asked = nodes };
    if (mode == MPOL_DEFAULT)
        return nodes ? -EINVAL : 0;
    if (mode == MPOL_PREFERRED && !nodes) {
        if (flags)
            return -EINVAL;
        pol->mode = MPOL_LOCAL;
        return 0;
    }
    if (mode == MPOL_LOCAL)
        return nodes || flags ? -EINVAL : 0;
    if (!nodes)
        return -EINVAL;
    pol->nodes = nodes & page_nodes_with_memory();
    if (!pol->nodes)
        return -EINVAL;
    if (mode == MPOL_PREFERRED)
        pol->nodes &= -pol->nodes;          /* its first node */
    return 0;
}

SYSCALL_DECL(sys_set_mempolicy)
{
    int mode = (int)a0 & ~MPOL_MODE_FLAGS, flags = (int)a0 & MPOL_MODE_FLAGS;
    if ((int)a0 < 0 || mode >= MPOL_MAX || flags == MPOL_MODE_FLAGS)
        return -EINVAL;
    uint64_t nodes;
    struct mempolicy pol;
    int err = nodes_in(a1, a2, &nodes);
    if (!err)
        err = policy_make(mode, flags, nodes, &pol);
    if (!err)
        curthread()->mempolicy = pol;
    return err;
}

/* The node of the page at va, faulted in as a read would fault it. */
static int64_t node_at(uint64_t va)
{
    struct as *as = curproc()->p_as;
    if (as_fault(as, va & ~(PAGE_SIZE - 1), FA_READ))
        return -EFAULT;
    struct page *pg = as_lookup_page(as, va, NULL);
    return pg ? pg->node : -EFAULT;
}

/* What the mode word and the mask say, per Linux's do_get_mempolicy. */
static int64_t policy_query(uint64_t addr, int flags, int *mode, uint64_t *nodes)
{
    struct mempolicy *pol = &curthread()->mempolicy;
    if (flags & MPOL_F_MEMS_ALLOWED) {
        if (flags & (MPOL_F_NODE | MPOL_F_ADDR))
            return -EINVAL;
        *mode = 0;
        *nodes = page_nodes_with_memory();
        return 0;
    }
    struct mempolicy at;
    if (flags & MPOL_F_ADDR) {
        if (as_policy_at(curproc()->p_as, addr, &at, NULL))
            return -EFAULT;
        pol = &at;                          /* the mapping's own (mbind), or DEFAULT */
    } else if (addr) {
        return -EINVAL;
    }
    if (flags & MPOL_F_NODE) {
        if (flags & MPOL_F_ADDR) {
            int64_t n = node_at(addr);
            if (n < 0)
                return n;
            *mode = (int)n;
        } else if (pol->mode == MPOL_INTERLEAVE) {
            *mode = mempolicy_interleave_node(pol);
        } else {
            return -EINVAL;
        }
    } else {
        *mode = pol->mode | pol->flags;
    }
    *nodes = (pol->flags & MPOL_MODE_FLAGS) ? pol->asked : pol->nodes;
    return 0;
}

SYSCALL_DECL(sys_get_mempolicy)
{
    uint64_t umode = a0, unodes = a1, maxnode = a2, addr = a3;
    int flags = (int)a4;
    if (flags & ~(MPOL_F_NODE | MPOL_F_ADDR | MPOL_F_MEMS_ALLOWED))
        return -EINVAL;
    if (unodes && maxnode < (uint64_t)numa_nnodes)
        return -EINVAL;
    int mode = 0;
    uint64_t nodes = 0;
    int64_t err = policy_query(addr, flags, &mode, &nodes);
    if (err)
        return err;
    if (umode && copyout(&mode, (void *)umode, sizeof mode))
        return -EFAULT;
    return unodes ? nodes_out(unodes, maxnode, nodes) : 0;
}

/* ---- mbind, move_pages and migrate_pages (kern/vm/migrate.c moves the pages) ---- */

#define MPOL_MF_STRICT    (1 << 0)
#define MPOL_MF_MOVE      (1 << 1)
#define MPOL_MF_MOVE_ALL  (1 << 2)

/* mbind's MPOL_MF_MOVE: each page of [lo, hi) present on a node the
 * policy leaves out goes where the policy puts it.  How many could not
 * move (the page cache's, or memory ran out). */
static uint64_t move_misplaced(struct as *as, uint64_t lo, uint64_t hi, uint64_t nodes)
{
    uint64_t stuck = 0;
    for (uint64_t va = lo; va < hi; va += PAGE_SIZE) {
        int n = as_page_node(as, va), target;
        struct mempolicy pol;
        if (n < 0 || (nodes & (1UL << n)) || as_policy_at(as, va, &pol, &target))
            continue;
        stuck += as_migrate_page(as, va, target) != target;
    }
    return stuck;
}

/* Pages of [lo, hi) present on a node outside nodes (MPOL_MF_STRICT). */
static uint64_t count_misplaced(struct as *as, uint64_t lo, uint64_t hi, uint64_t nodes)
{
    uint64_t n = 0;
    for (uint64_t va = lo; va < hi; va += PAGE_SIZE) {
        int node = as_page_node(as, va);
        n += node >= 0 && !(nodes & (1UL << node));
    }
    return n;
}

/* mbind(start, len, mode, nodemask, maxnode, flags): the policy of the
 * mappings of [start, start + len), checked in Linux's order (the flags,
 * MPOL_MF_MOVE_ALL for root alone, the alignment, the mode, the mask,
 * the range's holes: EFAULT, with nothing changed).  MPOL_MF_MOVE moves
 * the pages there already that the policy leaves out; with
 * MPOL_MF_STRICT one that stays, or (without MOVE) one that is there, is
 * EIO. */
SYSCALL_DECL(sys_mbind)
{
    uint64_t start = a0, len = a1, unodes = a3, maxnode = a4;
    unsigned flags = (unsigned)a5;
    int mode = (int)a2 & ~MPOL_MODE_FLAGS, mflags = (int)a2 & MPOL_MODE_FLAGS;
    if (flags & ~(unsigned)(MPOL_MF_STRICT | MPOL_MF_MOVE | MPOL_MF_MOVE_ALL))
        return -EINVAL;
    if ((flags & MPOL_MF_MOVE_ALL) && curproc()->p_cred->cr_uid != 0)
        return -EPERM;
    if (start & (PAGE_SIZE - 1))
        return -EINVAL;
    if ((int)a2 < 0 || mode >= MPOL_MAX || mflags == MPOL_MODE_FLAGS)
        return -EINVAL;
    len = (len + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
    if (start + len < start)
        return -EINVAL;
    if (len == 0)
        return 0;
    uint64_t nodes;
    struct mempolicy pol;
    int err = nodes_in(unodes, maxnode, &nodes);
    if (!err)
        err = policy_make(mode, mflags, nodes, &pol);
    struct as *as = curproc()->p_as;
    if (!err)
        err = as_set_policy(as, start, len, &pol);
    if (err || !pol.nodes)
        return err;
    uint64_t left = (flags & (MPOL_MF_MOVE | MPOL_MF_MOVE_ALL))
                        ? move_misplaced(as, start, start + len, pol.nodes)
                        : (flags & MPOL_MF_STRICT) ? count_misplaced(as, start, start + len, pol.nodes)
                                                   : 0;
    return left && (flags & MPOL_MF_STRICT) ? -EIO : 0;
}

/* The process pid names (0: the caller), held, if the caller may move its
 * pages (Linux's PTRACE_MODE_READ_REALCREDS); NULL and *err otherwise. */
static struct proc *target_of(int pid, int *err)
{
    struct proc *p = proc_hold(pid ? pid : curproc()->p_pid);
    *err = 0;
    if (!p)
        *err = -ESRCH;
    else if (!proc_may_inspect(curproc(), p) || !p->p_as)
        *err = p->p_as ? -EPERM : -ESRCH;
    if (*err && p) {
        proc_rele(p);
        p = NULL;
    }
    return p;
}

/* One page of move_pages: its status (a node, or -errno), or ENODEV for
 * a target node that has no memory (which ends the call). */
static int move_one(struct as *as, uint64_t va, const int *node, uint64_t with_memory,
                    int *status)
{
    if (!node) {
        *status = as_page_node(as, va);
        return 0;
    }
    if (*node < 0 || *node >= numa_nnodes || !(with_memory & (1UL << *node)))
        return -ENODEV;
    *status = as_migrate_page(as, va, *node);
    return 0;
}

SYSCALL_DECL(sys_move_pages)
{
    int pid = (int)a0;
    uint64_t count = a1, upages = a2, unodes = a3, ustatus = a4;
    unsigned flags = (unsigned)a5;      /* an int: the register's upper half is not ours */
    if (flags & ~(unsigned)(MPOL_MF_MOVE | MPOL_MF_MOVE_ALL))
        return -EINVAL;
    if ((flags & MPOL_MF_MOVE_ALL) && curproc()->p_cred->cr_uid != 0)
        return -EPERM;
    int err;
    struct proc *p = target_of(pid, &err);
    if (!p)
        return err;
    uint64_t with_memory = page_nodes_with_memory();
    for (uint64_t i = 0; i < count && !err; i++) {
        uint64_t va;
        int node, status;
        if (copyin((void *)(upages + i * 8), &va, sizeof va) ||
            (unodes && copyin((void *)(unodes + i * 4), &node, sizeof node))) {
            err = -EFAULT;
            break;
        }
        err = move_one(p->p_as, va, unodes ? &node : NULL, with_memory, &status);
        if (!err && copyout(&status, (void *)(ustatus + i * 4), sizeof status))
            err = -EFAULT;
    }
    proc_rele(p);
    return err;
}

SYSCALL_DECL(sys_migrate_pages)
{
    uint64_t from, to;
    int err = nodes_in(a2, a1, &from);
    if (!err)
        err = nodes_in(a3, a1, &to);
    if (err)
        return err;
    struct proc *p = target_of((int)a0, &err);
    if (!p)
        return err;
    if (to & ~page_nodes_with_memory())
        err = -EINVAL;
    int64_t r = err ? err : (from && to ? (int64_t)as_migrate_nodes(p->p_as, from, to) : 0);
    proc_rele(p);
    return r;
}

