/*
 * Calls real programs ask for at start-up and in their inner loops, which
 * the other files do not cover: prctl, set_robust_list and
 * get_robust_list, madvise, mremap, the file-time calls (utimensat, utimes,
 * futimesat, utime).  sendfile and its relatives are in
 * kern/proc/sys_splice.c.
 *
 * Theory and simplifications, said plainly:
 *   - prctl knows the options busybox, glibc and make ask for: the name
 *     (PR_SET_NAME, PR_GET_NAME: p_comm, what /proc shows), the parent
 *     death signal (sent when the parent exits, kern/proc/proc.c), the
 *     dumpable and keep-capabilities flags, no_new_privs, the timer slack
 *     and the capability bounding set (every capability is in it: root is
 *     all-powerful here).  Anything else is -EINVAL, as Linux's answer to
 *     an option it does not know.
 *   - set_robust_list records the list head for get_robust_list; Tempest
 *     has no threads sharing futexes yet, so nothing walks the list at
 *     exit.
 *   - madvise checks its arguments as Linux does and takes every advice
 *     as a hint to ignore (MADV_FREE too: Linux may keep such pages),
 *     except MADV_DONTNEED on private anonymous memory: those pages are
 *     dropped (mapped afresh), so they read as zeros again, which
 *     programs rely on.
 *   - File times are whole seconds (S5 keeps nothing finer); a timestamp's
 *     nanoseconds are dropped.  UTIME_NOW is the realtime clock.
 *
 * Locks: the fields it sets in struct proc are the process's own ([o]).
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

#define UTIME_NOW           ((1L << 30) - 1)
#define UTIME_OMIT          ((1L << 30) - 2)
#define NSEC                1000000000L

static struct cred *cr(void) { return curproc()->p_cred; }

/* ---- prctl ---- */

#define PR_SET_PDEATHSIG    1
#define PR_GET_PDEATHSIG    2
#define PR_GET_DUMPABLE     3
#define PR_SET_DUMPABLE     4
#define PR_GET_KEEPCAPS     7
#define PR_SET_KEEPCAPS     8
#define PR_SET_NAME         15
#define PR_GET_NAME         16
#define PR_CAPBSET_READ     23
#define PR_SET_TIMERSLACK   29
#define PR_GET_TIMERSLACK   30
#define PR_SET_NO_NEW_PRIVS 38
#define PR_GET_NO_NEW_PRIVS 39
#define CAP_LAST_CAP        40
#define TIMERSLACK_DEFAULT  50000

static int64_t put_int(uint64_t uaddr, int v)
{
    return copyout(&v, (void *)uaddr, sizeof v) ? -EFAULT : 0;
}

static int64_t set_name(struct proc *p, uint64_t uname)
{
    char name[16];
    memset(name, 0, sizeof name);
    /* Linux copies at most 15 bytes and ends the name there. */
    for (size_t i = 0; i < sizeof name - 1; i++) {
        if (copyin((const char *)uname + i, &name[i], 1))
            return -EFAULT;
        if (!name[i])
            break;
    }
    memcpy(p->p_comm, name, sizeof name);
    return 0;
}

static int64_t bool_option(bool *field, uint64_t v)
{
    if (v > 1)
        return -EINVAL;
    *field = v;
    return 0;
}

SYSCALL_DECL(sys_prctl)
{
    struct proc *p = curproc();
    switch ((int)a0) {
    case PR_SET_PDEATHSIG:
        if (a1 > NSIG)
            return -EINVAL;
        p->p_pdeathsig = (int)a1;
        return 0;
    case PR_GET_PDEATHSIG:
        return put_int(a1, p->p_pdeathsig);
    case PR_GET_DUMPABLE:
        return !p->p_undumpable;
    case PR_SET_DUMPABLE:
        if (a1 > 1)
            return -EINVAL;
        p->p_undumpable = !a1;
        return 0;
    case PR_GET_KEEPCAPS:
        return p->p_keepcaps;
    case PR_SET_KEEPCAPS:
        return bool_option(&p->p_keepcaps, a1);
    case PR_SET_NAME:
        return set_name(p, a1);
    case PR_GET_NAME:
        return copyout(p->p_comm, (void *)a1, sizeof p->p_comm) ? -EFAULT : 0;
    case PR_CAPBSET_READ:
        return a1 <= CAP_LAST_CAP ? 1 : -EINVAL;
    case PR_SET_TIMERSLACK:
        p->p_timerslack = a1 ? a1 : TIMERSLACK_DEFAULT;
        return 0;
    case PR_GET_TIMERSLACK:
        return (int64_t)(p->p_timerslack ? p->p_timerslack : TIMERSLACK_DEFAULT);
    case PR_SET_NO_NEW_PRIVS:
        if (a1 != 1 || a2 || a3 || a4)
            return -EINVAL;
        p->p_nonewprivs = true;
        return 0;
    case PR_GET_NO_NEW_PRIVS:
        if (a1 || a2 || a3 || a4)
            return -EINVAL;
        return p->p_nonewprivs;
    default:
        return -EINVAL;
    }
}

void prctl_fork(struct proc *child, const struct proc *parent)
{
    child->p_undumpable = parent->p_undumpable;
    child->p_nonewprivs = parent->p_nonewprivs;
    child->p_timerslack = parent->p_timerslack;
    child->p_membarrier = parent->p_membarrier;     /* Linux copies it with the mm */
}

/* ---- robust futex lists ---- */

#define ROBUST_HEAD_SIZE 24     /* struct robust_list_head */

SYSCALL_DECL(sys_set_robust_list)
{
    if (a1 != ROBUST_HEAD_SIZE)
        return -EINVAL;
    curlwp()->l_robust_head = a0;     /* the calling thread's (walked at its exit) */
    return 0;
}

/* arg: in, the tid asked for; out, its thread's robust list head.  A pid
 * names its main thread (or, once that has exited, another). */
static int robust_of(struct proc *p, void *arg)
{
    struct proc *me = curproc();
    if (p != me && me->p_cred->cr_uid != 0 && me->p_cred->cr_uid != p->p_cred->cr_ruid)
        return -EPERM;
    struct lwp *l = p->p_lwps;
    for (struct lwp *t = p->p_lwps; t; t = t->l_next)
        if (t->l_tid == (int)*(uint64_t *)arg)
            l = t;
    *(uint64_t *)arg = l ? l->l_robust_head : 0;
    return 0;
}

SYSCALL_DECL(sys_get_robust_list)
{
    int pid = (int)a0;
    uint64_t head = (uint64_t)(pid ? pid : curlwp()->l_tid);
    int err = pid == 0 ? robust_of(curproc(), &head) : proc_apply(pid, robust_of, &head);
    if (err)
        return err;
    uint64_t len = ROBUST_HEAD_SIZE;
    if (copyout(&len, (void *)a2, sizeof len) || copyout(&head, (void *)a1, sizeof head))
        return -EFAULT;
    return 0;
}

/* ---- madvise ---- */

#define MADV_DONTNEED 4
#define MADV_FREE     8
#define MADV_REMOVE   9
#define MADV_HWPOISON 100
#define MADV_SOFT_OFFLINE 101

static bool advice_known(int advice)
{
    /* Linux's list less the ones its build may lack (KSM, huge pages):
     * NORMAL..DONTNEED, FREE..KEEPONFORK, COLD..POPULATE_WRITE, and the
     * two memory-failure ones. */
    return (advice >= 0 && advice <= 4) || (advice >= 8 && advice <= 11) ||
           (advice >= 16 && advice <= 23) || advice == MADV_HWPOISON ||
           advice == MADV_SOFT_OFFLINE;
}

/* A piece of private anonymous memory to drop. */
struct anon_piece { vaddr_t start, end; int prot; };
#define MAX_PIECES 16

/* Under a_lock: does [va, end) lie wholly in segments, and which private
 * anonymous pieces does it hold (at most MAX_PIECES)? */
static bool scan_range(struct as *as, vaddr_t va, vaddr_t end, struct anon_piece *pc, int *npc)
{
    vaddr_t at = va;
    *npc = 0;
    for (struct seg *s = as->a_segs; s && at < end; s = s->s_next) {
        if (s->s_end <= at)
            continue;
        if (s->s_start > at)
            return false;
        vaddr_t to = MIN(s->s_end, end);
        bool anon_private = !s->s_vp && !s->s_amap && !(s->s_flags & MAP_SHARED);
        if (anon_private && *npc < MAX_PIECES)
            pc[(*npc)++] = (struct anon_piece){ at, to, s->s_prot };
        at = to;
    }
    return at >= end;
}

SYSCALL_DECL(sys_madvise)
{
    vaddr_t va = a0;
    uint64_t len_in = a1;
    int advice = (int)a2;
    if (!advice_known(advice))
        return -EINVAL;
    if (va & (PAGE_SIZE - 1))
        return -EINVAL;
    uint64_t len = ALIGN_UP(len_in, PAGE_SIZE);
    if (len_in && !len)
        return -EINVAL;
    vaddr_t end = va + len;
    if (end < va)
        return -EINVAL;
    if (end == va)
        return 0;
    if (advice == MADV_HWPOISON || advice == MADV_SOFT_OFFLINE)
        return cr()->cr_uid == 0 ? -EINVAL : -EPERM;    /* no memory-failure injection */
    struct as *as = curproc()->p_as;
    struct anon_piece pc[MAX_PIECES];
    int npc;
    rlock_acquire(&as->a_lock);
    bool whole = end <= USER_TOP && scan_range(as, va, end, pc, &npc);
    rlock_release(&as->a_lock);
    if (!whole)
        return -ENOMEM;
    if (advice == MADV_REMOVE)
        return npc ? -EINVAL : 0;   /* private anonymous memory cannot be removed */
    if (advice != MADV_DONTNEED)
        return 0;
    for (int i = 0; i < npc; i++) {
        int64_t r = as_map(as, pc[i].start, pc[i].end - pc[i].start, pc[i].prot,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, 0);
        if (r < 0)
            return r;
    }
    return 0;
}

/* ---- mremap ---- */

/* Linux's checks, in its order; the work is as_remap's (kern/vm/as.c). */
SYSCALL_DECL(sys_mremap)
{
    vaddr_t old = a0, newaddr = a4;
    uint64_t oldlen = a1, newlen = a2;
    int flags = (int)a3;
    if (flags & ~(MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP))
        return -EINVAL;
    if ((flags & MREMAP_FIXED) && !(flags & MREMAP_MAYMOVE))
        return -EINVAL;
    if ((flags & MREMAP_DONTUNMAP) && (!(flags & MREMAP_MAYMOVE) || oldlen != newlen))
        return -EINVAL;
    if (old & (PAGE_SIZE - 1))
        return -EINVAL;
    oldlen = ALIGN_UP(oldlen, PAGE_SIZE);
    newlen = ALIGN_UP(newlen, PAGE_SIZE);
    if (!newlen || !oldlen)
        return -EINVAL;         /* (Linux duplicates a shared mapping for oldlen 0) */
    if (oldlen > USER_TOP || newlen > USER_TOP || old >= USER_TOP)
        return newlen > USER_TOP ? -EINVAL : -EFAULT;
    if (flags & MREMAP_FIXED) {
        if ((newaddr & (PAGE_SIZE - 1)) || newaddr < USER_MIN || newaddr > USER_TOP - newlen)
            return -EINVAL;
        if (old + oldlen > newaddr && newaddr + newlen > old)
            return -EINVAL;     /* the ranges overlap */
    }
    return as_remap(curproc()->p_as, old, oldlen, newlen, flags, newaddr);
}

/* ---- file times ---- */

struct timespec_u { int64_t sec, nsec; };

/* Set the times of vp: times NULL means both now.  Linux's permission
 * rule: explicit times only for the owner or root (EPERM); "now" also for
 * anyone who may write the file (EACCES otherwise). */
static int set_times(struct vnode *vp, const struct timespec_u *times)
{
    struct vattr va;
    int err = VOP_GETATTR(vp, &va, cr());
    if (err)
        return err;
    bool now_only = !times || ((times[0].nsec == UTIME_NOW || times[0].nsec == UTIME_OMIT) &&
                               (times[1].nsec == UTIME_NOW || times[1].nsec == UTIME_OMIT));
    bool owner = cr()->cr_uid == 0 || cr()->cr_uid == va.va_uid;
    if (!owner && !now_only)
        return -EPERM;
    if (!owner && VOP_ACCESS(vp, VWRITE, cr()))
        return -EACCES;
    int64_t now = realtime_sec();
    struct vattr nva = { .va_mask = 0 };
    if (!times || times[0].nsec != UTIME_OMIT) {
        nva.va_mask |= AT_ATIME;
        nva.va_atime = !times || times[0].nsec == UTIME_NOW ? now : times[0].sec;
    }
    if (!times || times[1].nsec != UTIME_OMIT) {
        nva.va_mask |= AT_MTIME;
        nva.va_mtime = !times || times[1].nsec == UTIME_NOW ? now : times[1].sec;
    }
    /* The file system lets only the owner set times; a writer touching
     * the file was allowed above, so it acts with the kernel's
     * credential. */
    int serr = nva.va_mask ? VOP_SETATTR(vp, &nva, owner ? cr() : kcred) : 0;
    if (!serr)
        vn_notify(vp, IN_ATTRIB, NULL, 0);      /* inotify */
    return serr;
}

static bool nsec_valid(int64_t ns)
{
    return (ns >= 0 && ns < NSEC) || ns == UTIME_NOW || ns == UTIME_OMIT;
}

/* The file that dirfd and upath name (upath 0, or "" with AT_EMPTY_PATH:
 * dirfd itself), held. */
static int times_target(int dirfd, uint64_t upath, int flags, struct vnode **vpp)
{
    struct proc *p = curproc();
    bool follow = !(flags & AT_SYMLINK_NOFOLLOW);
    char first = 1;
    if (upath && (flags & AT_EMPTY_PATH) && copyin((const char *)upath, &first, 1))
        return -EFAULT;
    if (!upath || !first) {
        if (dirfd == AT_FDCWD) {
            *vpp = p->p_cwd ? p->p_cwd : rootdir;
            VN_HOLD(*vpp);
            return 0;
        }
        struct file *fp = fd_get(p, dirfd);
        if (!fp)
            return -EBADF;
        *vpp = fp->f_vp;
        VN_HOLD(*vpp);
        file_rele(fp);
        return 0;
    }
    char *path = kmalloc(PATH_MAX);
    if (!path)
        return -ENOMEM;
    long n = copyinstr((const char *)upath, path, PATH_MAX);
    int err = n < 0 ? (int)n : n == 0 ? -ENOENT : 0;
    struct file *dfp = NULL;
    struct vnode *dir = p->p_cwd ? p->p_cwd : rootdir;
    if (!err && path[0] != '/' && dirfd != AT_FDCWD) {
        dfp = fd_get(p, dirfd);
        err = !dfp ? -EBADF : dfp->f_vp->v_type != VDIR ? -ENOTDIR : 0;
        if (dfp)
            dir = dfp->f_vp;
    }
    if (!err)
        err = lookupname(path, dir, follow, vpp, cr());
    if (dfp)
        file_rele(dfp);
    kfree(path);
    return err;
}

static int64_t do_utimes(int dirfd, uint64_t upath, const struct timespec_u *times, int flags)
{
    if (times && (!nsec_valid(times[0].nsec) || !nsec_valid(times[1].nsec)))
        return -EINVAL;
    if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
        return -EINVAL;
    if (!upath && dirfd == AT_FDCWD)
        return -EFAULT;
    if (!upath && (flags & AT_SYMLINK_NOFOLLOW))
        return -EINVAL;
    struct vnode *vp;
    int err = times_target(dirfd, upath, flags, &vp);
    if (err)
        return err;
    err = set_times(vp, times);
    VN_RELE(vp);
    return err;
}

SYSCALL_DECL(sys_utimensat)
{
    struct timespec_u ts[2];
    if (a2) {
        if (copyin((void *)a2, ts, sizeof ts))
            return -EFAULT;
        if (ts[0].nsec == UTIME_OMIT && ts[1].nsec == UTIME_OMIT)
            return 0;           /* nothing to do: not even the path is looked at */
    }
    return do_utimes((int)a0, a1, a2 ? ts : NULL, (int)a3);
}

/* utimes and futimesat: timevals, microseconds 0..999999. */
static int64_t timeval_utimes(int dirfd, uint64_t upath, uint64_t utv)
{
    struct timespec_u ts[2];
    if (utv) {
        int64_t tv[4];
        if (copyin((void *)utv, tv, sizeof tv))
            return -EFAULT;
        if (tv[1] < 0 || tv[1] >= 1000000 || tv[3] < 0 || tv[3] >= 1000000)
            return -EINVAL;
        ts[0] = (struct timespec_u){ tv[0], tv[1] * 1000 };
        ts[1] = (struct timespec_u){ tv[2], tv[3] * 1000 };
    }
    return do_utimes(dirfd, upath ? upath : (uint64_t)-1, utv ? ts : NULL, 0);
}

SYSCALL_DECL(sys_utimes) { return timeval_utimes(AT_FDCWD, a0, a1); }
SYSCALL_DECL(sys_futimesat) { return timeval_utimes((int)a0, a1, a2); }

SYSCALL_DECL(sys_utime)
{
    struct timespec_u ts[2];
    if (a1) {
        int64_t t[2];
        if (copyin((void *)a1, t, sizeof t))
            return -EFAULT;
        ts[0] = (struct timespec_u){ t[0], 0 };
        ts[1] = (struct timespec_u){ t[1], 0 };
    }
    return do_utimes(AT_FDCWD, a0 ? a0 : (uint64_t)-1, a1 ? ts : NULL, 0);
}
