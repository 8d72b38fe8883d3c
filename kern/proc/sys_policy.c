/*
 * The calls for features Tempest has in part or not at all, each with
 * one documented answer -- never ENOSYS where a program would take that
 * as fatal -- and Linux's errno for bad arguments:
 *
 *   capget, capset   Capabilities are all or nothing, as the uid says:
 *                    root (effective uid 0) has every one, any other uid
 *                    none.  capget says so; capset may keep or drop what
 *                    the caller has (nothing changes: the uid decides)
 *                    and is EPERM for more.
 *   personality      Kept per process, inherited, returned; no flag
 *                    changes behaviour (there is no address-space
 *                    randomization to turn off, no other ABI).
 *   mlock, mlock2, munlock, mlockall, munlockall
 *                    Nothing is ever paged out here, so every mapped page
 *                    is as good as locked: the calls check the range is
 *                    mapped (ENOMEM), the flags (EINVAL) and, for a user
 *                    other than root, RLIMIT_MEMLOCK for the request
 *                    (EPERM when it is 0, ENOMEM past it).
 *   unshare, setns   No namespaces: unsharing what a process has alone
 *                    already (files, fs, System V semaphore undo) is 0;
 *                    a namespace is EPERM for a user other than root and
 *                    EINVAL for root, as a Linux built without them.
 *   fallocate        EOPNOTSUPP for S5 and UFS files, as Linux's sysv and
 *                    ufs drivers answer, after Linux's checks in order.
 *   syncfs, sync_file_range, readahead
 *                    syncfs writes every file system back; the range sync
 *                    is the file's fsync; readahead checks and returns.
 *   restart_syscall  Tempest restarts an interrupted call by running it
 *                    again (the trap frame rewound), never through a
 *                    restart block, so a program that calls this finds
 *                    none pending: EINTR, Linux's answer then.
 *
 * Locks: none of their own.
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/lib/errno.h>
#include <kern/lib/string.h>

static struct cred *cr(void) { return curproc()->p_cred; }
static bool is_root(void) { return cr()->cr_uid == 0; }

/* ---- capabilities ---- */

#define CAP_V1          0x19980330
#define CAP_V2          0x20071026
#define CAP_V3          0x20080522
#define CAP_ALL_LOW     0xffffffffu
#define CAP_ALL_HIGH    0x1ffu          /* CAP_LAST_CAP 40 */

struct cap_header { uint32_t version; int32_t pid; };
struct cap_data { uint32_t effective, permitted, inheritable; };

/* The number of data words for a header's version, or -EINVAL (with the
 * version Linux prefers written back). */
static int cap_words(uint64_t uhdr, struct cap_header *h)
{
    if (copyin((void *)uhdr, h, sizeof *h))
        return -EFAULT;
    if (h->version == CAP_V1)
        return 1;
    if (h->version == CAP_V2 || h->version == CAP_V3)
        return 2;
    uint32_t v = CAP_V3;
    if (copyout(&v, (void *)uhdr, sizeof v))
        return -EFAULT;
    return -EINVAL;
}

SYSCALL_DECL(sys_capget)
{
    struct cap_header h;
    int n = cap_words(a0, &h);
    if (n < 0)
        return a1 || n != -EINVAL ? n : 0;     /* a version probe with no data */
    if (h.pid < 0)
        return -EINVAL;
    if (h.pid && h.pid != curproc()->p_pid && proc_signal(h.pid, 0, false) == -ESRCH)
        return -ESRCH;
    bool root = is_root();
    struct cap_data d[2] = {
        { root ? CAP_ALL_LOW : 0, root ? CAP_ALL_LOW : 0, 0 },
        { root ? CAP_ALL_HIGH : 0, root ? CAP_ALL_HIGH : 0, 0 },
    };
    if (a1 && copyout(d, (void *)a1, (size_t)n * sizeof d[0]))
        return -EFAULT;
    return 0;
}

SYSCALL_DECL(sys_capset)
{
    struct cap_header h;
    int n = cap_words(a0, &h);
    if (n < 0)
        return n;
    if (h.pid && h.pid != curproc()->p_pid)
        return -EPERM;
    struct cap_data d[2] = { { 0, 0, 0 }, { 0, 0, 0 } };
    if (copyin((void *)a1, d, (size_t)n * sizeof d[0]))
        return -EFAULT;
    if (is_root())
        return 0;
    for (int i = 0; i < n; i++)
        if (d[i].effective || d[i].permitted || d[i].inheritable)
            return -EPERM;
    return 0;
}

/* ---- personality ---- */

SYSCALL_DECL(sys_personality)
{
    struct proc *p = curproc();
    uint32_t old = p->p_personality;
    if ((uint32_t)a0 != 0xffffffffu)
        p->p_personality = (uint32_t)a0;
    return old;
}

/* ---- memory locking ---- */

#define MLOCK_ONFAULT   1
#define MCL_CURRENT     1
#define MCL_FUTURE      2
#define MCL_ONFAULT     4

static int memlock_allowed(size_t len)
{
    if (is_root())
        return 0;
    uint64_t limit = curproc()->p_rlim[RLIMIT_MEMLOCK][0];
    if (limit == 0)
        return -EPERM;
    return len > limit ? -ENOMEM : 0;
}

static int64_t do_mlock(uint64_t va, size_t len, uint64_t flags)
{
    if (flags & ~(uint64_t)MLOCK_ONFAULT)
        return -EINVAL;
    int err = memlock_allowed(len);
    return err ? err : as_check_mapped(as_current(), va, len);
}

SYSCALL_DECL(sys_mlock) { return do_mlock(a0, a1, 0); }
SYSCALL_DECL(sys_mlock2) { return do_mlock(a0, a1, a2); }
SYSCALL_DECL(sys_munlock) { return as_check_mapped(as_current(), a0, a1); }

SYSCALL_DECL(sys_mlockall)
{
    uint64_t f = a0;
    if (!f || (f & ~(uint64_t)(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT)) || f == MCL_ONFAULT)
        return -EINVAL;
    return is_root() || curproc()->p_rlim[RLIMIT_MEMLOCK][0] ? 0 : -EPERM;
}

SYSCALL_DECL(sys_munlockall) { return 0; }

/* ---- namespaces ---- */

#define CLONE_FS        0x00000200
#define CLONE_FILES     0x00000400
#define CLONE_SYSVSEM   0x00040000
#define CLONE_NS_ALL    (0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | \
                         0x20000000 | 0x40000000 | 0x00000080)  /* NEWNS ... NEWTIME */
#define CLONE_VM        0x00000100
#define CLONE_SIGHAND   0x00000800
#define CLONE_THREAD    0x00010000

SYSCALL_DECL(sys_unshare)
{
    uint64_t f = a0;
    uint64_t known = CLONE_FS | CLONE_FILES | CLONE_SYSVSEM | CLONE_NS_ALL | CLONE_VM |
                     CLONE_SIGHAND | CLONE_THREAD;
    if (f & ~known)
        return -EINVAL;
    if ((f & (CLONE_VM | CLONE_SIGHAND | CLONE_THREAD)) && curproc()->p_nlwps > 1)
        return -EINVAL;             /* cannot leave one's own threads */
    if (f & CLONE_NS_ALL)
        return is_root() ? -EINVAL : -EPERM;
    return 0;
}

SYSCALL_DECL(sys_setns)
{
    struct file *fp = fd_get(curproc(), (int)a0);
    if (!fp)
        return -EBADF;
    file_rele(fp);
    return -EINVAL;                 /* no descriptor names a namespace */
}

/* ---- files ---- */

#define FALLOC_KNOWN    0x7f        /* KEEP_SIZE ... UNSHARE_RANGE */

SYSCALL_DECL(sys_fallocate)
{
    int mode = (int)a1;
    int64_t off = (int64_t)a2, len = (int64_t)a3;
    if (mode & ~FALLOC_KNOWN)
        return -EOPNOTSUPP;
    if (off < 0 || len <= 0)
        return -EINVAL;
    struct file *fp = fd_get(curproc(), (int)a0);
    if (!fp)
        return -EBADF;
    struct vnode *vp = fp->f_vp;
    int64_t r = !file_writable(fp) ? -EBADF
              : vn_is_stream(vp) ? -ESPIPE
              : vp->v_type == VDIR ? -EISDIR
              : vp->v_type != VREG && vp->v_type != VBLK ? -ENODEV
              : -EOPNOTSUPP;
    file_rele(fp);
    return r;
}

SYSCALL_DECL(sys_syncfs)
{
    struct file *fp = fd_get(curproc(), (int)a0);
    if (!fp)
        return -EBADF;
    file_rele(fp);
    vfs_sync_wait();            /* as sync(2); every disk: an error may be another's */
    return 0;
}

#define SYNC_FILE_RANGE_KNOWN 7

SYSCALL_DECL(sys_sync_file_range)
{
    int64_t off = (int64_t)a1, n = (int64_t)a2;
    if (((unsigned)a3 & ~(unsigned)SYNC_FILE_RANGE_KNOWN) || off < 0 || n < 0)
        return -EINVAL;
    struct file *fp = fd_get(curproc(), (int)a0);
    if (!fp)
        return -EBADF;
    struct vnode *vp = fp->f_vp;
    int64_t r = 0;
    if (vn_is_stream(vp))
        r = -ESPIPE;
    else if (vp->v_type == VREG && (a3 & 2 /* SYNC_FILE_RANGE_WRITE */))
        r = VOP_FSYNC(vp, cr());
    file_rele(fp);
    return r;
}

SYSCALL_DECL(sys_readahead)
{
    struct file *fp = fd_get(curproc(), (int)a0);
    if (!fp)
        return -EBADF;
    int64_t r = fp->f_vp->v_type == VREG && file_readable(fp) ? 0 : -EINVAL;
    file_rele(fp);
    return r;
}

SYSCALL_DECL(sys_restart_syscall)
{
    return -EINTR;
}
