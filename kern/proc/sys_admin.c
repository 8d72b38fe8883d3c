/*
 * The administrator's system calls: setting the wall clock, the user and
 * group ids (setreuid, setresuid and their group twins, setgroups, the
 * set-id bits at exec), chroot, and the nice value (getpriority,
 * setpriority).
 *
 * Theory.  Each follows Linux's rules and error order, with "root" (an
 * effective uid of 0) standing for every capability Linux would ask for
 * (CAP_SYS_TIME, CAP_SETUID, CAP_SETGID, CAP_SYS_CHROOT, CAP_SYS_NICE).
 *
 *   - Ids.  A credential is immutable once shared (kern/vfs/cred.h), so a
 *     change makes a new one (cred_dup) and swaps the process's pointer.
 *     The swap is made under proc_lock because other processes read a
 *     process's credential under that lock (kill's permission check, the
 *     per-user process count); the process itself reads its own without
 *     one.  A user without privilege may set each of the real, effective
 *     and saved ids only to one of the three it has; setreuid also moves
 *     the saved id to the new effective id when the real id is set or the
 *     effective one set to something other than the old real id.  There
 *     is no separate file-system id: it is always the effective id.
 *   - Groups.  setgroups keeps the list sorted, as Linux does, so
 *     getgroups gives them back in ascending order.
 *   - Exec.  A set-user-id file makes its owner the effective and saved
 *     uid; a set-group-id file with the group execute bit makes its group
 *     the effective and saved gid; otherwise the saved ids become the
 *     effective ones.  Linux ignores the bits of a #! script: so does
 *     Tempest (only the ELF file finally loaded counts).
 *   - chroot.  The process's root directory (p_root, held) is where its
 *     absolute lookups start and where ".." stops; the VFS asks for it
 *     through the hook admin_init registers (vfs_set_curroot_hook).  It is
 *     inherited at fork and kept at exec, and only the process itself
 *     changes it, so its lookups read it without a lock.  As on Linux,
 *     chroot leaves the working directory where it was.
 *   - Nice.  p_nice (-20..19) is kept per process under proc_lock and
 *     inherited at fork; every thread of the process is weighed by it
 *     (proc_set_nice_locked copies it into their scheduling parameters,
 *     kern/sched/class.c).
 *     Lowering a nice value needs root (Linux's RLIMIT_NICE is 0 by
 *     default); changing another user's process needs its real or
 *     effective uid to be the caller's effective uid.
 *   - Clock.  settimeofday and clock_settime(CLOCK_REALTIME) move the wall
 *     clock (drivers/platform/rtc.c); the monotonic clock never jumps.
 *     A time zone given to settimeofday is checked and then ignored:
 *     Tempest keeps UTC.
 *
 * Locks: proc_lock (class "proc") for the credential swap and the nice
 * values; nothing else here takes a lock of its own.
 */
#include <kern/proc/proc.h>
#include <kern/proc/proc_impl.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/vm/kmem.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/vnode.h>
#include <kern/vfs/cred.h>
#include <kern/sched/thread.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <drivers/platform/rtc.h>

#define NSEC                1000000000LL
#define CLOCK_REALTIME      0
/* Linux refuses dates so late that the monotonic clock could overflow:
 * KTIME_SEC_MAX less 30 years of uptime. */
#define SETTOD_SEC_MAX      8277292036LL
#define PRIO_PROCESS        0
#define PRIO_PGRP           1
#define PRIO_USER           2
#define S_IXGRP             00010

static struct cred *cr(void) { return curproc()->p_cred; }
static bool is_root(void) { return cr()->cr_uid == 0; }
static bool unchanged(uint32_t id) { return id == (uint32_t)-1; }

/* ---- boot, fork and exit ---- */

static struct vnode *curroot(void)
{
    struct proc *p = curproc();
    return p ? p->p_root : NULL;
}

void admin_init(void)
{
    vfs_set_curroot_hook(curroot);
}

void proc_inherit_admin(struct proc *child, struct proc *parent)
{
    child->p_root = parent->p_root;
    if (child->p_root)
        VN_HOLD(child->p_root);
    mutex_enter(&proc_lock);
    child->p_nice = parent->p_nice;
    child->p_personality = parent->p_personality;
    mutex_exit(&proc_lock);
}

void proc_drop_root(struct proc *p)
{
    if (p->p_root) {
        VN_RELE(p->p_root);
        p->p_root = NULL;
    }
}

/* ---- credentials ---- */

static void install_cred(struct proc *p, struct cred *n)
{
    mutex_enter(&proc_lock);
    struct cred *old = p->p_cred;
    p->p_cred = n;
    mutex_exit(&proc_lock);
    cred_rele(old);
}

int proc_set_ids(int which, uint32_t real, uint32_t eff, uint32_t saved)
{
    struct proc *p = curproc();
    struct cred *n = cred_dup(p->p_cred);
    if (!n)
        return -ENOMEM;
    uint32_t *r = which == IDS_UID ? &n->cr_ruid : &n->cr_rgid;
    uint32_t *e = which == IDS_UID ? &n->cr_uid : &n->cr_gid;
    uint32_t *s = which == IDS_UID ? &n->cr_suid : &n->cr_sgid;
    if (!unchanged(real))
        *r = real;
    if (!unchanged(eff))
        *e = eff;
    if (!unchanged(saved))
        *s = saved;
    install_cred(p, n);
    return 0;
}

/* May an unprivileged caller take id, given the three it has? */
static bool one_of(uint32_t id, uint32_t real, uint32_t eff, uint32_t saved)
{
    return unchanged(id) || id == real || id == eff || id == saved;
}

static int64_t set_res(int which, uint32_t real, uint32_t eff, uint32_t saved)
{
    struct cred *c = cr();
    uint32_t r = which == IDS_UID ? c->cr_ruid : c->cr_rgid;
    uint32_t e = which == IDS_UID ? c->cr_uid : c->cr_gid;
    uint32_t s = which == IDS_UID ? c->cr_suid : c->cr_sgid;
    if (!is_root() && !(one_of(real, r, e, s) && one_of(eff, r, e, s) && one_of(saved, r, e, s)))
        return -EPERM;
    return proc_set_ids(which, real, eff, saved);
}

static int64_t set_re(int which, uint32_t real, uint32_t eff)
{
    struct cred *c = cr();
    uint32_t r = which == IDS_UID ? c->cr_ruid : c->cr_rgid;
    uint32_t e = which == IDS_UID ? c->cr_uid : c->cr_gid;
    uint32_t s = which == IDS_UID ? c->cr_suid : c->cr_sgid;
    if (!is_root()) {
        if (!unchanged(real) && real != r && real != e)
            return -EPERM;
        if (!unchanged(eff) && eff != r && eff != e && eff != s)
            return -EPERM;
    }
    uint32_t new_eff = unchanged(eff) ? e : eff;
    bool move_saved = !unchanged(real) || (!unchanged(eff) && eff != r);
    return proc_set_ids(which, real, eff, move_saved ? new_eff : (uint32_t)-1);
}

static int64_t get_res(uint32_t r, uint32_t e, uint32_t s, uint64_t ur, uint64_t ue, uint64_t us)
{
    if (copyout(&r, (void *)ur, sizeof r) || copyout(&e, (void *)ue, sizeof e) ||
        copyout(&s, (void *)us, sizeof s))
        return -EFAULT;
    return 0;
}

SYSCALL_DECL(sys_setreuid) { return set_re(IDS_UID, (uint32_t)a0, (uint32_t)a1); }
SYSCALL_DECL(sys_setregid) { return set_re(IDS_GID, (uint32_t)a0, (uint32_t)a1); }
SYSCALL_DECL(sys_setresuid) { return set_res(IDS_UID, (uint32_t)a0, (uint32_t)a1, (uint32_t)a2); }
SYSCALL_DECL(sys_setresgid) { return set_res(IDS_GID, (uint32_t)a0, (uint32_t)a1, (uint32_t)a2); }

SYSCALL_DECL(sys_getresuid)
{
    struct cred *c = cr();
    return get_res(c->cr_ruid, c->cr_uid, c->cr_suid, a0, a1, a2);
}

SYSCALL_DECL(sys_getresgid)
{
    struct cred *c = cr();
    return get_res(c->cr_rgid, c->cr_gid, c->cr_sgid, a0, a1, a2);
}

static void sort_groups(uint32_t *g, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        uint32_t v = g[i], j = i;
        for (; j > 0 && g[j - 1] > v; j--)
            g[j] = g[j - 1];
        g[j] = v;
    }
}

/* In Linux's order: the privilege, the size, then the copy. */
SYSCALL_DECL(sys_setgroups)
{
    int n = (int)a0;
    if (!is_root())
        return -EPERM;
    if ((unsigned)n > NGROUPS_LINUX)
        return -EINVAL;
    if (n > NGROUPS_MAX)
        return -ENOMEM;
    uint32_t groups[NGROUPS_MAX];
    if (n > 0 && copyin((void *)a1, groups, (size_t)n * sizeof groups[0]))
        return -EFAULT;
    sort_groups(groups, (uint32_t)n);
    struct proc *p = curproc();
    struct cred *c = cred_dup(p->p_cred);
    if (!c)
        return -ENOMEM;
    memcpy(c->cr_groups, groups, (size_t)n * sizeof groups[0]);
    c->cr_ngroups = (uint32_t)n;
    install_cred(p, c);
    return 0;
}

bool proc_exec_setid(struct proc *p, struct vnode *vp)
{
    struct vattr va;
    if (VOP_GETATTR(vp, &va, p->p_cred) || ptrace_blocks_setid(p))
        return false;           /* traced by a user: the program runs with the caller's ids */
    const struct cred *c = p->p_cred;
    uint32_t uid = (va.va_mode & S_ISUID) ? va.va_uid : c->cr_uid;
    bool sgid = (va.va_mode & S_ISGID) && (va.va_mode & S_IXGRP);
    uint32_t gid = sgid ? va.va_gid : c->cr_gid;
    bool changed = uid != c->cr_uid || gid != c->cr_gid;
    if (!changed && uid == c->cr_suid && gid == c->cr_sgid)
        return false;           /* nothing changes: keep the shared credential */
    struct cred *n = cred_dup(c);
    if (!n)
        return false;           /* no memory: the program runs with the caller's ids */
    n->cr_uid = n->cr_suid = uid;
    n->cr_gid = n->cr_sgid = gid;
    install_cred(p, n);
    return changed;
}

/* ---- chroot ---- */

SYSCALL_DECL(sys_chroot)
{
    char *path = kmalloc(PATH_MAX);
    if (!path)
        return -ENOMEM;
    long len = copyinstr((const char *)a0, path, PATH_MAX);
    int err = len < 0 ? (int)len : len == 0 ? -ENOENT : 0;
    struct proc *p = curproc();
    struct vnode *vp = NULL;
    if (!err)
        err = lookupname(path, p->p_cwd, true, &vp, p->p_cred);
    kfree(path);
    if (!err && vp->v_type != VDIR)
        err = -ENOTDIR;
    if (!err)
        err = VOP_ACCESS(vp, VEXEC, p->p_cred);
    if (!err && !is_root())
        err = -EPERM;
    if (err) {
        if (vp)
            VN_RELE(vp);
        return err;
    }
    struct vnode *old = p->p_root;
    p->p_root = vp;             /* the lookup's reference */
    if (old)
        VN_RELE(old);
    return 0;
}

/* ---- nice values ---- */

/* Live processes only.  A child still inside fork counts too: its thread
 * may already run (and ask about itself) before fork stores p_thread,
 * and its credentials and nice value are set by then. */
static bool prio_matches(const struct proc *p, int which, int who)
{
    if (p->p_state != PS_RUN)
        return false;
    switch (which) {
    case PRIO_PROCESS: return p->p_pid == who;
    case PRIO_PGRP: return p->p_pgid == who;
    default: return p->p_cred->cr_ruid == (uint32_t)who;
    }
}

/* who 0 means the caller, its process group, or its real uid. */
static int prio_who(int which, int who)
{
    if (who != 0)
        return who;
    struct proc *me = curproc();
    if (which == PRIO_PROCESS)
        return me->p_pid;
    if (which == PRIO_PGRP) {
        mutex_enter(&proc_lock);
        int pgid = me->p_pgid;
        mutex_exit(&proc_lock);
        return pgid;
    }
    return (int)me->p_cred->cr_ruid;
}

/* Linux's set_one_prio: the result so far goes in, the new one out. */
static int set_one_nice(struct proc *p, int nice, int result)
{
    const struct cred *me = cr(), *them = p->p_cred;
    if (me->cr_uid != 0 && them->cr_ruid != me->cr_uid && them->cr_uid != me->cr_uid)
        return -EPERM;
    if (nice < p->p_nice && me->cr_uid != 0)
        return -EACCES;
    proc_set_nice_locked(p, nice);
    return result == -ESRCH ? 0 : result;
}

/* The raw call returns 20 - nice (1..40), so no success looks like an
 * error; the C library turns it back. */
SYSCALL_DECL(sys_getpriority)
{
    int which = (int)a0;
    if (which < PRIO_PROCESS || which > PRIO_USER)
        return -EINVAL;
    int who = prio_who(which, (int)a1);
    int best = -1;
    mutex_enter(&proc_lock);
    for (struct proc *p = allproc; p; p = p->p_next)
        if (prio_matches(p, which, who) && 20 - p->p_nice > best)
            best = 20 - p->p_nice;
    mutex_exit(&proc_lock);
    return best < 0 ? -ESRCH : best;
}

SYSCALL_DECL(sys_setpriority)
{
    int which = (int)a0, nice = (int)a2;
    if (which < PRIO_PROCESS || which > PRIO_USER)
        return -EINVAL;
    nice = nice < NICE_MIN ? NICE_MIN : nice > NICE_MAX ? NICE_MAX : nice;
    int who = prio_who(which, (int)a1);
    int result = -ESRCH;
    mutex_enter(&proc_lock);
    for (struct proc *p = allproc; p; p = p->p_next)
        if (prio_matches(p, which, who))
            result = set_one_nice(p, nice, result);
    mutex_exit(&proc_lock);
    return result;
}

/* ---- the wall clock ---- */

struct timeval_u { int64_t sec, usec; };
struct timespec_u { int64_t sec, nsec; };

static int set_wall_clock(int64_t sec, int64_t nsec)
{
    if (sec < 0 || nsec < 0 || nsec >= NSEC || sec > SETTOD_SEC_MAX)
        return -EINVAL;
    if (!is_root())
        return -EPERM;
    realtime_set_ns((uint64_t)sec * NSEC + (uint64_t)nsec);
    return 0;
}

SYSCALL_DECL(sys_settimeofday)
{
    struct timeval_u tv;
    int32_t tz[2];
    if (a0 && copyin((void *)a0, &tv, sizeof tv))
        return -EFAULT;
    if (a0 && (tv.usec < 0 || tv.usec >= 1000000))
        return -EINVAL;
    if (a1 && copyin((void *)a1, tz, sizeof tz))
        return -EFAULT;
    if (a0 && (tv.sec < 0 || tv.sec > SETTOD_SEC_MAX))
        return -EINVAL;
    if (!is_root())
        return -EPERM;
    if (a1 && (tz[0] > 15 * 60 || tz[0] < -15 * 60))
        return -EINVAL;
    return a0 ? set_wall_clock(tv.sec, tv.usec * 1000) : 0;
}

/* Only CLOCK_REALTIME can be set; every other clock (the CPU-time ones
 * included) is refused before the pointer is read. */
SYSCALL_DECL(sys_clock_settime)
{
    if ((int)a0 != CLOCK_REALTIME)
        return -EINVAL;
    struct timespec_u ts;
    if (copyin((void *)a1, &ts, sizeof ts))
        return -EFAULT;
    return set_wall_clock(ts.sec, ts.nsec);
}
