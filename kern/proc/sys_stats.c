/*
 * Tempest's statistics system calls (numbers and records in
 * kern/abi/tempest_abi.h): the lock and disk statistics of seed 003's
 * instrumentation, reset and read from user space (the lockstat tool,
 * userland/lockstat).  The ENOSYS counts are in kern/proc/syscall.c.
 *
 * A snapshot is taken into a kernel buffer first and copied out whole:
 * when the caller's buffer is too small nothing is copied, the call
 * returns -ENOSPC and the size needed goes to *needed.  Any user may read
 * the statistics (they are the point of this kernel); only root may reset
 * them, since a reset spoils every other user's measurement.
 */
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/abi/tempest_abi.h>
#include <kern/lock/lockstat.h>
#include <drivers/block/bio.h>
#include <kern/vm/kmem.h>
#include <kern/lib/errno.h>
#include <kern/proc/proc.h>
#include <kern/vfs/cred.h>

/* Larger snapshots than this are refused (-ENOMEM): a sanity bound on
 * the kernel buffer a user can make us allocate. */
#define SNAPSHOT_MAX (4UL << 20)

typedef long (*snapshot_fn)(void *buf, size_t len, size_t *needed);

static int64_t copy_snapshot(snapshot_fn fn, uint64_t ubuf, uint64_t ulen, uint64_t uneeded)
{
    size_t need = 0;
    fn(NULL, 0, &need);
    for (int tries = 0; tries < 4; tries++) {
        if (need > ulen || !ubuf) {
            if (uneeded && copyout(&need, (void *)uneeded, sizeof need))
                return -EFAULT;
            return -ENOSPC;
        }
        if (need > SNAPSHOT_MAX)
            return -ENOMEM;
        void *kbuf = kmalloc(need);
        if (!kbuf)
            return -ENOMEM;
        size_t got_need = need;
        long r = fn(kbuf, need, &got_need);
        if (r >= 0) {
            int err = copyout(kbuf, (void *)ubuf, (size_t)r);
            kfree(kbuf);
            return err ? -EFAULT : r;
        }
        kfree(kbuf);
        need = got_need;            /* it grew meanwhile: ask again */
    }
    return -EAGAIN;
}

SYSCALL_DECL(sys_lockstat_reset)
{
    if (curproc()->p_cred->cr_uid != 0)
        return -EPERM;
    lockstat_reset();
    blk_stats_reset();
    return 0;
}

static long lockstat_fn(void *buf, size_t len, size_t *needed)
{
    long r = lockstat_snapshot(buf, len, needed);
    return r == -LOCKSTAT_ENOSPC ? -ENOSPC : r;
}

SYSCALL_DECL(sys_lockstat_snapshot)
{
    return copy_snapshot(lockstat_fn, a0, a1, a2);
}

SYSCALL_DECL(sys_blkstat_snapshot)
{
    return copy_snapshot(blk_stats_snapshot, a0, a1, a2);
}
