/*
 * process_vm_readv and process_vm_writev: one process's memory read or
 * written by another, as strace and debuggers use them, and the
 * permission rule they will share with ptrace (Linux's
 * PTRACE_MODE_ATTACH_REALCREDS).
 *
 * Theory.  The target is held (proc_hold), which keeps its address space
 * from its exec and exit until the copy ends.  Bytes move a page at a
 * time through one kernel buffer: as_copy_remote (kern/vm/fault.c)
 * faults the target's pages in as its own accesses would, so a write to
 * a copy-on-write page copies it and a write to a read-only mapping is
 * refused.  The local and the remote vectors are walked in step, in
 * Linux's order; a transfer stops at the first remote byte that cannot
 * be reached or local byte that cannot be copied, and returns what moved
 * before it (EFAULT when nothing did).
 *
 * Checks, in Linux's order: flags (EINVAL), the local vector (EINVAL for
 * more than UIO_MAXIOV elements or a total past SSIZE_MAX, EFAULT), an
 * empty local total (0), the remote vector, the pid (ESRCH), permission
 * (EPERM).
 *
 * Permission (proc_may_inspect): the superuser; anyone else only a
 * process whose real, effective and saved uids and gids all equal the
 * caller's real ones and which prctl has not made undumpable.
 *
 * Locks: none of its own.  proc_hold's reference; inside as_copy_remote
 * the target address space's a_lock, one page at a time, never held
 * across a copy to or from the caller's memory.
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/vm/kmem.h>
#include <kern/vfs/cred.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

#define UIO_MAXIOV 1024
#define SSIZE_MAX_U 0x7fffffffffffffffUL

struct iovec_u {
    uint64_t base, len;
};

bool proc_may_inspect(const struct proc *caller, const struct proc *target)
{
    const struct cred *c = caller->p_cred, *t = READ_ONCE(target->p_cred);
    if (c->cr_uid == 0)
        return true;
    return c->cr_ruid == t->cr_uid && c->cr_ruid == t->cr_ruid && c->cr_ruid == t->cr_suid &&
           c->cr_rgid == t->cr_gid && c->cr_rgid == t->cr_rgid && c->cr_rgid == t->cr_sgid &&
           !READ_ONCE(target->p_undumpable);
}

/* A vector of cnt iovecs at uiov, copied in (*out, kfree it; NULL when
 * cnt is 0), and its total length. */
static int iov_in(uint64_t uiov, uint64_t cnt, struct iovec_u **out, uint64_t *total)
{
    *out = NULL;
    *total = 0;
    if (cnt > UIO_MAXIOV)
        return -EINVAL;
    if (cnt == 0)
        return 0;
    struct iovec_u *v = kmalloc(cnt * sizeof *v);
    if (!v)
        return -ENOMEM;
    if (copyin((void *)uiov, v, cnt * sizeof *v)) {
        kfree(v);
        return -EFAULT;
    }
    for (uint64_t i = 0; i < cnt; i++) {
        if (v[i].len > SSIZE_MAX_U - *total) {
            kfree(v);
            return -EINVAL;
        }
        *total += v[i].len;
    }
    *out = v;
    return 0;
}

/* Where a walk through a vector stands. */
struct iov_pos {
    const struct iovec_u *v;
    uint64_t cnt, i, off;
};

/* The bytes left in the current element, skipping empty ones; 0 at the end. */
static uint64_t pos_room(struct iov_pos *p)
{
    while (p->i < p->cnt && p->off == p->v[p->i].len) {
        p->i++;
        p->off = 0;
    }
    return p->i < p->cnt ? p->v[p->i].len - p->off : 0;
}

static uint64_t pos_addr(const struct iov_pos *p)
{
    return p->v[p->i].base + p->off;
}

/* Move bytes between the caller's local vector and as's remote one, in
 * step: the bytes moved, or -EFAULT when none could be. */
static int64_t move_bytes(struct as *as, struct iov_pos *lp, struct iov_pos *rp, bool write,
                          char *kbuf)
{
    uint64_t moved = 0;
    for (;;) {
        uint64_t n = MIN(MIN(pos_room(lp), pos_room(rp)), (uint64_t)PAGE_SIZE);
        if (n == 0)
            break;
        int64_t got;
        if (write) {
            if (copyin((void *)pos_addr(lp), kbuf, n))
                break;
            got = as_copy_remote(as, pos_addr(rp), kbuf, n, true);
        } else {
            got = as_copy_remote(as, pos_addr(rp), kbuf, n, false);
            if (got > 0 && copyout(kbuf, (void *)pos_addr(lp), (size_t)got))
                break;
        }
        if (got <= 0)
            break;
        moved += (uint64_t)got;
        lp->off += (uint64_t)got;
        rp->off += (uint64_t)got;
        if ((uint64_t)got < n)
            break;
    }
    return moved ? (int64_t)moved : -EFAULT;
}

static int64_t process_vm(int pid, uint64_t ulocal, uint64_t lcnt, uint64_t uremote,
                          uint64_t rcnt, uint64_t flags, bool write)
{
    if (flags)
        return -EINVAL;
    struct iovec_u *local = NULL, *remote = NULL;
    uint64_t ltotal, rtotal;
    int64_t r = iov_in(ulocal, lcnt, &local, &ltotal);
    if (r || ltotal == 0)
        goto out;
    if ((r = iov_in(uremote, rcnt, &remote, &rtotal)))
        goto out;
    struct proc *target = proc_hold(pid);
    if (!target) {
        r = -ESRCH;
        goto out;
    }
    char *kbuf = kmalloc(PAGE_SIZE);
    if (!proc_may_inspect(curproc(), target) || !target->p_as)
        r = target->p_as ? -EPERM : -ESRCH;
    else if (!kbuf)
        r = -ENOMEM;
    else {
        struct iov_pos lp = { local, lcnt, 0, 0 }, rp = { remote, rcnt, 0, 0 };
        r = move_bytes(target->p_as, &lp, &rp, write, kbuf);
    }
    kfree(kbuf);
    proc_rele(target);
out:
    kfree(local);
    kfree(remote);
    return r;
}

SYSCALL_DECL(sys_process_vm_readv)
{
    return process_vm((int)a0, a1, a2, a3, a4, a5, false);
}

SYSCALL_DECL(sys_process_vm_writev)
{
    return process_vm((int)a0, a1, a2, a3, a4, a5, true);
}
