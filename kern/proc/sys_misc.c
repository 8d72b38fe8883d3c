/*
 * The smaller system calls: file modes and owners, truncate, sync, user
 * and group ids, clocks and sleeping, resource limits, kill, getrandom.
 * (times and getrusage are with the processes, in sys_proc.c.)
 *
 * Simplifications, said plainly:
 *   - Clocks: CLOCK_MONOTONIC counts from boot (uptime_ns); CLOCK_REALTIME
 *     is the wall clock read from the CMOS clock at boot
 *     (drivers/platform/rtc.c), which settimeofday and clock_settime
 *     (kern/proc/sys_admin.c) set.
 *   - nanosleep and clock_nanosleep are timed sleeps on a callout
 *     (kern/proc/sys_timer.c): no CPU is used or charged meanwhile.
 *   - kill/tkill/tgkill post the signal (kern/proc/signal.c); its
 *     disposition decides at delivery.
 *   - CLOCK_PROCESS_CPUTIME_ID and CLOCK_THREAD_CPUTIME_ID read the
 *     caller's CPU time (kern/proc/proc.c; a process is one thread);
 *     clock_nanosleep on them sleeps by the monotonic clock.
 *   - getrandom returns a TSC-seeded pseudo-random stream, not
 *     cryptographic randomness.
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/sched/thread.h>
#include <kern/arch/arch.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <drivers/platform/timer.h>
#include <drivers/platform/rtc.h>

#define CLOCK_REALTIME      0
#define CLOCK_MONOTONIC     1
#define CLOCK_PROCESS_CPUTIME_ID 2
#define CLOCK_THREAD_CPUTIME_ID 3
#define CLOCK_MONOTONIC_RAW 4
#define CLOCK_REALTIME_COARSE 5
#define CLOCK_MONOTONIC_COARSE 6
#define CLOCK_BOOTTIME      7
#define NSEC                1000000000UL

static struct cred *cr(void) { return curproc()->p_cred; }

/* ---- modes and owners ---- */

static int set_mode(struct vnode *vp, uint32_t mode)
{
    struct vattr va;
    int err = VOP_GETATTR(vp, &va, cr());
    if (err)
        return err;
    if (cr()->cr_uid != 0 && cr()->cr_uid != va.va_uid)
        return -EPERM;
    struct vattr nva = { .va_mask = AT_MODE, .va_mode = (va.va_mode & S_IFMT) | (mode & 07777) };
    return VOP_SETATTR(vp, &nva, cr());
}

static int set_owner(struct vnode *vp, uint32_t uid, uint32_t gid)
{
    struct vattr va;
    int err = VOP_GETATTR(vp, &va, cr());
    if (err)
        return err;
    bool owner = cr()->cr_uid == va.va_uid;
    bool same_uid = uid == (uint32_t)-1 || uid == va.va_uid;
    bool own_group = gid == (uint32_t)-1 || cred_groupmember(cr(), gid);
    if (cr()->cr_uid != 0 && !(owner && same_uid && own_group))
        return -EPERM;
    struct vattr nva = { .va_mask = 0 };
    if (uid != (uint32_t)-1) {
        nva.va_mask |= AT_UID;
        nva.va_uid = uid;
    }
    if (gid != (uint32_t)-1) {
        nva.va_mask |= AT_GID;
        nva.va_gid = gid;
    }
    if (nva.va_mask && va.va_type != VDIR && (va.va_mode & (S_ISUID | S_ISGID))) {
        nva.va_mask |= AT_MODE;     /* a new owner never inherits set-id bits */
        nva.va_mode = va.va_mode & ~(uint32_t)(S_ISUID | S_ISGID);
    }
    return nva.va_mask ? VOP_SETATTR(vp, &nva, cr()) : 0;
}

/* Look up a user path (relative to the cwd or dirfd) and run fn on it. */
static int64_t on_path(int dirfd, uint64_t upath, bool follow,
                       int (*fn)(struct vnode *, uint64_t, uint64_t), uint64_t x, uint64_t y)
{
    char *path = kmalloc(PATH_MAX);
    if (!path)
        return -ENOMEM;
    long n = copyinstr((const char *)upath, path, PATH_MAX);
    int err = n < 0 ? (int)n : n == 0 ? -ENOENT : 0;
    struct file *dfp = NULL;
    struct vnode *dir = curproc()->p_cwd ? curproc()->p_cwd : rootdir, *vp;
    if (!err && path[0] != '/' && dirfd != AT_FDCWD) {
        dfp = fd_get(curproc(), dirfd);
        err = !dfp ? -EBADF : dfp->f_vp->v_type != VDIR ? -ENOTDIR : 0;
        if (dfp)
            dir = dfp->f_vp;
    }
    if (!err && !(err = lookupname(path, dir, follow, &vp, cr()))) {
        err = fn(vp, x, y);
        VN_RELE(vp);
    }
    if (dfp)
        file_rele(dfp);
    kfree(path);
    return err;
}

/* An attribute change that worked: IN_ATTRIB for inotify (or for a size
 * change IN_MODIFY). */
static int notified(struct vnode *vp, int err, uint32_t event)
{
    if (!err)
        vn_notify(vp, event, NULL, 0);
    return err;
}

static int fn_mode(struct vnode *vp, uint64_t mode, uint64_t unused)
{
    return notified(vp, set_mode(vp, mode), IN_ATTRIB);
}

static int fn_owner(struct vnode *vp, uint64_t uid, uint64_t gid)
{
    return notified(vp, set_owner(vp, uid, gid), IN_ATTRIB);
}

static int fn_truncate(struct vnode *vp, uint64_t len, uint64_t unused)
{
    if (vp->v_type == VDIR)
        return -EISDIR;
    if (vp->v_type != VREG)
        return -EINVAL;
    int err = VOP_ACCESS(vp, VWRITE, cr());
    return notified(vp, err ? err : VOP_TRUNCATE(vp, len, cr()), IN_MODIFY);
}

static int64_t on_fd(int fd, int (*fn)(struct vnode *, uint64_t, uint64_t), uint64_t x, uint64_t y)
{
    struct file *fp = fd_get(curproc(), fd);
    if (!fp)
        return -EBADF;
    int err = fn(fp->f_vp, x, y);
    file_rele(fp);
    return err;
}

SYSCALL_DECL(sys_chmod) { return on_path(AT_FDCWD, a0, true, fn_mode, a1, 0); }
SYSCALL_DECL(sys_fchmodat) { return on_path((int)a0, a1, true, fn_mode, a2, 0); }
SYSCALL_DECL(sys_fchmod) { return on_fd((int)a0, fn_mode, a1, 0); }
SYSCALL_DECL(sys_chown) { return on_path(AT_FDCWD, a0, true, fn_owner, (uint32_t)a1, (uint32_t)a2); }
SYSCALL_DECL(sys_lchown) { return on_path(AT_FDCWD, a0, false, fn_owner, (uint32_t)a1, (uint32_t)a2); }
SYSCALL_DECL(sys_fchown) { return on_fd((int)a0, fn_owner, (uint32_t)a1, (uint32_t)a2); }
SYSCALL_DECL(sys_fchownat)
{
    if ((int)a4 & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
        return -EINVAL;         /* flags is an int */
    return on_path((int)a0, a1, !(a4 & AT_SYMLINK_NOFOLLOW), fn_owner, (uint32_t)a2, (uint32_t)a3);
}

SYSCALL_DECL(sys_truncate)
{
    if ((int64_t)a1 < 0)
        return -EINVAL;
    return on_path(AT_FDCWD, a0, true, fn_truncate, a1, 0);
}

SYSCALL_DECL(sys_sync)
{
    vfs_sync_wait();            /* sync(2) reports no error */
    return 0;
}

/* ---- ids ---- */

/* setuid and setgid as Linux has them: root sets all three ids, anyone
 * else only the effective one, to the real or the saved id.  The new
 * credential is made by proc_set_ids (kern/proc/sys_admin.c). */
SYSCALL_DECL(sys_setuid)
{
    struct cred *c = cr();
    uint32_t uid = (uint32_t)a0;
    if (uid == (uint32_t)-1)
        return -EINVAL;
    if (c->cr_uid == 0)
        return proc_set_ids(IDS_UID, uid, uid, uid);
    if (uid == c->cr_ruid || uid == c->cr_suid)
        return proc_set_ids(IDS_UID, (uint32_t)-1, uid, (uint32_t)-1);
    return -EPERM;
}

SYSCALL_DECL(sys_setgid)
{
    struct cred *c = cr();
    uint32_t gid = (uint32_t)a0;
    if (gid == (uint32_t)-1)
        return -EINVAL;
    if (c->cr_uid == 0)
        return proc_set_ids(IDS_GID, gid, gid, gid);
    if (gid == c->cr_rgid || gid == c->cr_sgid)
        return proc_set_ids(IDS_GID, (uint32_t)-1, gid, (uint32_t)-1);
    return -EPERM;
}

SYSCALL_DECL(sys_getgroups)
{
    struct cred *c = cr();
    int n = (int)c->cr_ngroups;
    if ((int)a0 < 0)
        return -EINVAL;
    if (a0 == 0)
        return n;
    if ((int)a0 < n)
        return -EINVAL;
    return copyout(c->cr_groups, (void *)a1, n * sizeof(uint32_t)) ? -EFAULT : n;
}

/* ---- time ---- */

struct timespec_u { int64_t sec, nsec; };

static uint64_t clock_ns(int clk)
{
    return (clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE) ? realtime_ns() : uptime_ns();
}

int64_t realtime_sec(void)
{
    return (int64_t)(clock_ns(CLOCK_REALTIME) / NSEC);
}

/*
 * Linux's CPU-time clock ids (clock_getcpuclockid, pthread_getcpuclockid):
 * a negative id ~pid << 3 with the clock kind in its low bits and 4 for a
 * thread's.  The calling process's and its own thread's are answered, as
 * CLOCK_PROCESS_CPUTIME_ID and CLOCK_THREAD_CPUTIME_ID are (another's
 * CPU time is not kept where this could read it: EINVAL).  Their kind
 * (PROF, VIRT, SCHED) reads the same: user plus system time.
 */
static int cpu_clock_id(int clk)
{
    int id = ~(clk >> 3);
    bool thread = clk & 4;
    if ((clk & 3) == 3)
        return -EINVAL;
    if (thread)
        return id == 0 || id == curlwp()->l_tid ? CLOCK_THREAD_CPUTIME_ID : -EINVAL;
    return id == 0 || id == curproc()->p_pid ? CLOCK_PROCESS_CPUTIME_ID : -EINVAL;
}

SYSCALL_DECL(sys_clock_gettime)
{
    int clk = (int)a0;
    if (clk < 0)
        clk = cpu_clock_id(clk);
    if (clk < 0 || clk > CLOCK_BOOTTIME)
        return -EINVAL;
    uint64_t ns = clock_ns(clk);
    if (clk == CLOCK_PROCESS_CPUTIME_ID || clk == CLOCK_THREAD_CPUTIME_ID) {
        uint64_t user, sys;
        proc_cputime_of(clk == CLOCK_THREAD_CPUTIME_ID, &user, &sys);    /* kern/proc/proc.c */
        ns = user + sys;
    }
    struct timespec_u ts = { (int64_t)(ns / NSEC), (int64_t)(ns % NSEC) };
    return copyout(&ts, (void *)a1, sizeof ts);
}

SYSCALL_DECL(sys_clock_getres)
{
    int clk = (int)a0 < 0 ? cpu_clock_id((int)a0) : (int)a0;
    if (clk < 0 || clk > CLOCK_BOOTTIME)
        return -EINVAL;
    struct timespec_u ts = { 0, 1 };
    return a1 ? copyout(&ts, (void *)a1, sizeof ts) : 0;
}

SYSCALL_DECL(sys_gettimeofday)
{
    uint64_t ns = clock_ns(CLOCK_REALTIME);
    int64_t tv[2] = { (int64_t)(ns / NSEC), (int64_t)(ns % NSEC / 1000) };
    if (a0 && copyout(tv, (void *)a0, sizeof tv))
        return -EFAULT;
    if (a1) {
        int32_t tz[2] = { 0, 0 };
        if (copyout(tz, (void *)a1, sizeof tz))
            return -EFAULT;
    }
    return 0;
}

SYSCALL_DECL(sys_time)
{
    int64_t t = (int64_t)(clock_ns(CLOCK_REALTIME) / NSEC);
    if (a0 && copyout(&t, (void *)a0, sizeof t))
        return -EFAULT;
    return t;
}

static int64_t sleep_ns(uint64_t ureq, uint64_t urem)
{
    struct timespec_u ts;
    if (copyin((void *)ureq, &ts, sizeof ts))
        return -EFAULT;
    if (ts.sec < 0 || ts.nsec < 0 || ts.nsec >= (int64_t)NSEC)
        return -EINVAL;
    uint64_t end = uptime_ns() + (uint64_t)ts.sec * NSEC + (uint64_t)ts.nsec;
    struct proc *p = curproc();
    while (uptime_ns() < end && !__atomic_load_n(&p->p_killsig, __ATOMIC_ACQUIRE))
        sig_sleep_until(&end, end);     /* a timed sleep (kern/proc/sys_timer.c) */
    return 0;
}

SYSCALL_DECL(sys_nanosleep) { return sleep_ns(a0, a1); }

SYSCALL_DECL(sys_clock_nanosleep)
{
    if ((int)a0 < 0 || (int)a0 > CLOCK_BOOTTIME)
        return -EINVAL;
    if (a1 & 1) {               /* TIMER_ABSTIME */
        struct timespec_u ts;
        if (copyin((void *)a2, &ts, sizeof ts))
            return -EFAULT;
        uint64_t end = (uint64_t)ts.sec * NSEC + (uint64_t)ts.nsec;
        uint64_t now;
        while ((now = clock_ns((int)a0)) < end) {
            if (sig_sleep_interrupted(curproc()))
                return -EINTR;
            sig_sleep_until(&end, uptime_ns() + (end - now));  /* kern/proc/sys_timer.c */
        }
        return 0;
    }
    return sleep_ns(a2, a3);
}

/* ---- resource limits ---- */

struct rlimit_u { uint64_t cur, max; };

/* In Linux's order: the new limit is copied in, the process found, the
 * resource and the limit checked, the limit set, and only then the old
 * one copied out (a bad old pointer fails a call that did set). */
static int64_t do_prlimit(int pid, int res, uint64_t unew, uint64_t uold)
{
    struct proc *p = curproc();
    struct rlimit_u n;
    if (unew && copyin((void *)unew, &n, sizeof n))
        return -EFAULT;
    if (pid != 0 && pid != p->p_pid)
        return -ESRCH;          /* other processes: not yet */
    if (res < 0 || res >= RLIM_NLIMITS)
        return -EINVAL;
    if (unew) {
        if (n.cur > n.max)
            return -EINVAL;
        /* NOFILE is the table's size, Linux's nr_open: not even root
         * may raise the limit past the descriptors there are. */
        if (res == RLIMIT_NOFILE && n.max > NOFILE)
            return -EPERM;
        if (n.max > p->p_rlim[res][1] && p->p_cred->cr_uid != 0)
            return -EPERM;
    }
    struct rlimit_u old = { p->p_rlim[res][0], p->p_rlim[res][1] };
    if (unew) {
        p->p_rlim[res][0] = n.cur;
        p->p_rlim[res][1] = n.max;
    }
    return uold && copyout(&old, (void *)uold, sizeof old) ? -EFAULT : 0;
}

/* getrlimit and setrlimit always copy: a NULL pointer is EFAULT (only
 * prlimit64 takes NULL for "none"), after a bad resource for getrlimit,
 * before it for setrlimit (which copies in first). */
SYSCALL_DECL(sys_getrlimit)
{
    int64_t r = do_prlimit(0, (int)a0, 0, a1);
    return r == 0 && !a1 ? -EFAULT : r;
}
SYSCALL_DECL(sys_setrlimit) { return a1 ? do_prlimit(0, (int)a0, a1, 0) : -EFAULT; }
SYSCALL_DECL(sys_prlimit64) { return do_prlimit((int)a0, (int)a1, a2, a3); }

/* ---- kill ---- */

SYSCALL_DECL(sys_kill)
{
    int pid = (int)a0, sig = (int)a1;
    if (sig < 0 || sig > 64) {
        int r = proc_signal(pid, 0, false);     /* no such process comes first */
        return r == -ESRCH ? r : -EINVAL;
    }
    return proc_signal(pid, sig, false);
}

/* tkill and tgkill are kern/proc/lwp.c's. */

/* ---- randomness ---- */

#define GRND_KNOWN 0x7      /* GRND_NONBLOCK, GRND_RANDOM, GRND_INSECURE */

SYSCALL_DECL(sys_getrandom)
{
    unsigned flags = (unsigned)a2;
    if ((flags & ~GRND_KNOWN) || (flags & 0x6) == 0x6)     /* RANDOM with INSECURE */
        return -EINVAL;
    size_t len = MIN(a1, (uint64_t)256);
    uint8_t buf[256];
    uint64_t x = rdtsc() ^ ((uint64_t)curproc()->p_pid << 32);
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (uint8_t)(x >> 24);
    }
    return copyout(buf, (void *)a0, len) ? -EFAULT : (int64_t)len;
}
