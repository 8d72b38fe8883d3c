/*
 * procfs: a process's files, /proc/PID/... (theory in procfs.c).  Each
 * takes a process the caller holds (proc_hold) and writes Linux's format:
 * stat's 52 fields, status's "Name:\t..." lines, cmdline's NUL-separated
 * arguments, maps' "start-end perms offset dev inode name" lines.  The
 * counters read without a lock are single words the process itself
 * writes: a reader sees a recent value, never a torn one.
 */
#include <kern/procfs/procfs.h>
#include <kern/proc/proc.h>
#include <kern/sched/thread.h>
#include <kern/vm/as.h>
#include <kern/lock/sleep.h>
#include <kern/vfs/cred.h>
#include <kern/vfs/dnlc.h>
#include <kern/vm/kmem.h>
#include <kern/vm/page.h>
#include <kern/arch/numa.h>
#include <kern/arch/smp.h>
#include <drivers/platform/timer.h>
#include <drivers/tty/tty.h>
#include <kern/lib/string.h>
#include <kern/lib/kprintf.h>

#define NS_PER_TICK (1000000000UL / TICK_HZ)
#define KERNEL_PAGE 4096

static uint64_t ticks_of(const uint64_t *cycles)
{
    return tsc_to_ns(__atomic_load_n(cycles, __ATOMIC_RELAXED)) / NS_PER_TICK;
}

/* Linux's one-letter state. */
static char state_of(struct proc *p)
{
    if (p->p_state == PS_ZOMBIE)
        return 'Z';
    if (__atomic_load_n(&p->p_stopped, __ATOMIC_RELAXED))
        return 'T';
    struct thread *t = p->p_thread;
    return t && t->state == TS_SLEEPING ? 'S' : 'R';
}

static const char *state_name(char s)
{
    switch (s) {
    case 'R': return "R (running)";
    case 'S': return "S (sleeping)";
    case 'T': return "T (stopped)";
    default:  return "Z (zombie)";
    }
}

/* Bytes mapped and pages resident, under the address space's lock. */
static void memory_of(struct proc *p, uint64_t *vsize, uint64_t *rss)
{
    *vsize = *rss = 0;
    struct as *as = p->p_as;
    if (!as || p->p_state == PS_ZOMBIE)
        return;
    rlock_acquire(&as->a_lock);
    for (struct seg *s = as->a_segs; s; s = s->s_next)
        *vsize += s->s_end - s->s_start;
    *rss = as->a_rss;
    rlock_release(&as->a_lock);
}

/* Signal masks: pending, blocked, ignored, caught (bit n-1 for signal n). */
static void signals_of(struct proc *p, uint64_t m[4])
{
    /* The process's pending set, and the main (or first) thread's. */
    spin_lock(&p->p_siglock);
    struct lwp *l = p->p_lwps;
    m[0] = __atomic_load_n(&p->p_sigpending, __ATOMIC_RELAXED);
    m[1] = l ? __atomic_load_n(&l->l_sigmask, __ATOMIC_RELAXED) : 0;
    m[0] |= l ? __atomic_load_n(&l->l_sigpending, __ATOMIC_RELAXED) : 0;
    spin_unlock(&p->p_siglock);
    m[2] = m[3] = 0;
    for (int sig = 1; sig < NSIG; sig++) {
        uint64_t h = p->p_sigact[sig].handler;
        if (h == SIG_IGN)
            m[2] |= SIGBIT(sig);
        else if (h != SIG_DFL)
            m[3] |= SIGBIT(sig);
    }
}

/* The controlling terminal of p's session, as Linux's tty_nr (its
 * device number: the console 5:1, a pty 136:N), and its foreground
 * group. */
static void tty_of(struct proc *p, int *tty_nr, int *tpgid)
{
    struct tty *t = tty_of_session(p->p_sid);
    *tty_nr = t ? (int)t->t_rdev : 0;
    *tpgid = t ? tty_fg_pgrp(t) : -1;
}

int procfs_pid_stat(struct sbuf *sb, struct proc *p)
{
    uint64_t vsize, rss, sig[4];
    memory_of(p, &vsize, &rss);
    signals_of(p, sig);
    struct thread *t = p->p_thread;
    char comm[sizeof p->p_comm];
    memcpy(comm, p->p_comm, sizeof comm);
    comm[sizeof comm - 1] = 0;
    int tty_nr, tpgid;
    tty_of(p, &tty_nr, &tpgid);
    sbuf_printf(sb, "%d (%s) %c %d %d %d %d %d %u 0 0 0 0 ", p->p_pid, comm, state_of(p),
                proc_ppid_of(p), p->p_pgid, p->p_sid, tty_nr, tpgid, 0x400000u);
    uint64_t ucyc, scyc;
    proc_cycles(p, &ucyc, &scyc);
    /* Linux's priority field: 20 + nice for time sharing, -1 - the
     * real-time priority for SCHED_FIFO and SCHED_RR. */
    struct sched_params sp = t ? t->sp : (struct sched_params){ 0 };
    int prio = sched_policy_rt(sp.policy) ? -1 - sp.rt_prio : 20 + p->p_nice;
    sbuf_printf(sb, "%lu %lu %lu %lu %d %d %d 0 %lu %lu %lu ",
                (unsigned long)ticks_of(&ucyc), (unsigned long)ticks_of(&scyc),
                (unsigned long)ticks_of(&p->p_cutime), (unsigned long)ticks_of(&p->p_cstime),
                prio, p->p_nice, __atomic_load_n(&p->p_nlwps, __ATOMIC_RELAXED),
                (unsigned long)(p->p_start_ns / NS_PER_TICK), (unsigned long)vsize,
                (unsigned long)rss);
    sbuf_printf(sb, "%lu 0 0 0 0 0 %lu %lu %lu %lu 0 0 0 17 %d %u %u 0 0 0 0 0 0 0 0 0 0 %d\n",
                (unsigned long)~0UL, (unsigned long)sig[0], (unsigned long)sig[1],
                (unsigned long)sig[2], (unsigned long)sig[3], t ? t->cpu : 0,
                (unsigned)sp.rt_prio, (unsigned)sp.policy,
                p->p_state == PS_ZOMBIE ? p->p_status : 0);
    return 0;
}

int procfs_pid_status(struct sbuf *sb, struct proc *p)
{
    uint64_t vsize, rss, sig[4];
    memory_of(p, &vsize, &rss);
    signals_of(p, sig);
    struct cred c_copy = *p->p_cred;    /* see proc_info.c: setuid may replace it */
    const struct cred *c = &c_copy;
    char comm[sizeof p->p_comm];
    memcpy(comm, p->p_comm, sizeof comm);
    comm[sizeof comm - 1] = 0;
    sbuf_printf(sb, "Name:\t%s\nUmask:\t%04o\nState:\t%s\n", comm, p->p_umask,
                state_name(state_of(p)));
    sbuf_printf(sb, "Tgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t%d\nTracerPid:\t%d\n", p->p_pid,
                p->p_pid, proc_ppid_of(p), ptrace_tracer_pid(p));
    sbuf_printf(sb, "Uid:\t%u\t%u\t%u\t%u\nGid:\t%u\t%u\t%u\t%u\n", c->cr_ruid, c->cr_uid,
                c->cr_uid, c->cr_uid, c->cr_rgid, c->cr_gid, c->cr_gid, c->cr_gid);
    sbuf_printf(sb, "FDSize:\t%d\nGroups:\t", NOFILE);
    for (uint32_t i = 0; i < MIN(c->cr_ngroups, (uint32_t)NGROUPS_MAX); i++)
        sbuf_printf(sb, "%u ", c->cr_groups[i]);
    sbuf_printf(sb, "\nVmSize:\t%8lu kB\nVmRSS:\t%8lu kB\nThreads:\t%d\n",
                (unsigned long)(vsize / 1024), (unsigned long)(rss * KERNEL_PAGE / 1024),
                __atomic_load_n(&p->p_nlwps, __ATOMIC_RELAXED));
    sbuf_printf(sb, "SigPnd:\t%016lx\nShdPnd:\t0000000000000000\nSigBlk:\t%016lx\n",
                (unsigned long)sig[0], (unsigned long)sig[1]);
    sbuf_printf(sb, "SigIgn:\t%016lx\nSigCgt:\t%016lx\n", (unsigned long)sig[2],
                (unsigned long)sig[3]);
    uint64_t mask = p->p_thread ? __atomic_load_n(&p->p_thread->affinity, __ATOMIC_RELAXED) : 0;
    sbuf_printf(sb, "Cpus_allowed:\t%lx\nCpus_allowed_list:\t", (unsigned long)mask);
    sbuf_list(sb, mask);
    /* The nodes memory may come from, as Linux prints a node mask (32-bit
     * words, commas between): libnuma sizes its node masks by it. */
    uint64_t mems = page_nodes_with_memory();
    sbuf_printf(sb, "\nMems_allowed:\t%08x,%08x\nMems_allowed_list:\t",
                (unsigned)(mems >> 32), (unsigned)mems);
    sbuf_list(sb, mems);
    sbuf_printf(sb, "\n");
    return 0;
}

/* How far a retitled command line may run past the arguments (into the
 * environment's strings, which a program that sets its title moves
 * elsewhere first), as Linux reads it: to the first NUL, within a page. */
#define CMDLINE_SPILL 4096

/* The arguments as they are now in the process's memory, as Linux reads
 * them: a program may write a new title over them (nginx's "nginx:
 * worker process"), and when the title runs past their end (their last
 * byte no longer NUL) it is read on to its NUL.  The copy exec kept
 * serves when that memory cannot be read. */
int procfs_pid_cmdline(struct sbuf *sb, struct proc *p)
{
    struct proc_image *im = proc_image_hold(p);
    if (!im || p->p_state == PS_ZOMBIE) {
        proc_image_rele(im);
        return 0;
    }
    size_t n = im->cmdlen, room = n + CMDLINE_SPILL;
    char *live = im->args_at && n ? kmalloc(room) : NULL;
    int64_t got = live ? as_copy_remote(p->p_as, im->args_at, live, room, false) : -1;
    if (got >= (int64_t)n) {
        if (live[n - 1] != 0) {         /* retitled past the end: on to the NUL */
            while (n < (size_t)got && live[n] != 0)
                n++;
            n += n < (size_t)got;       /* the NUL itself, as Linux gives it */
        }
        sbuf_add(sb, live, n);
    } else {
        sbuf_add(sb, im->cmdline, im->cmdlen);
    }
    kfree(live);
    proc_image_rele(im);
    return 0;
}

/* The auxiliary vector exec gave the program: Linux's binary pairs. */
int procfs_pid_auxv(struct sbuf *sb, struct proc *p)
{
    struct proc_image *im = proc_image_hold(p);
    if (im && p->p_state != PS_ZOMBIE)
        sbuf_add(sb, (const char *)im->auxv, im->auxwords * sizeof im->auxv[0]);
    proc_image_rele(im);
    return 0;
}

int procfs_pid_comm(struct sbuf *sb, struct proc *p)
{
    char comm[sizeof p->p_comm];
    memcpy(comm, p->p_comm, sizeof comm);
    comm[sizeof comm - 1] = 0;
    sbuf_printf(sb, "%s\n", comm);
    return 0;
}

int procfs_pid_cwd(struct sbuf *sb, struct proc *p)
{
    struct vnode *cwd = proc_cwd_hold(p);
    if (!cwd)
        return -ENOENT;
    char *path = kmalloc(PATH_MAX);
    int n = path ? proc_dir_path(cwd, path, PATH_MAX) : -ENOMEM;
    if (n > 0)
        sbuf_add(sb, path, (size_t)n - 1);
    kfree(path);
    VN_RELE(cwd);
    return n > 0 ? 0 : n;
}

int procfs_pid_exe(struct sbuf *sb, struct proc *p)
{
    struct proc_image *im = proc_image_hold(p);
    int err = im && im->exe && p->p_state != PS_ZOMBIE ? 0 : -ENOENT;
    if (!err)
        sbuf_add(sb, im->exe, strlen(im->exe));
    proc_image_rele(im);
    return err;
}

/* A file's path from the name the DNLC holds for it and its directory's
 * path: 0, or -ENOENT when the cache has no name for it. */
static int file_path(struct sbuf *sb, struct vnode *vp)
{
    struct vnode *dvp;
    char name[NAME_MAX + 1];
    if (dnlc_reverse(vp, &dvp, name, sizeof name))
        return -ENOENT;
    char *path = kmalloc(PATH_MAX);
    int n = path ? proc_dir_path(dvp, path, PATH_MAX) : -ENOMEM;
    VN_RELE(dvp);
    if (n > 0)
        sbuf_printf(sb, "%s%s%s", path, n > 2 ? "/" : "", name);
    kfree(path);
    return n > 0 ? 0 : -ENOENT;
}

/* A descriptor's link: a directory's path, the device's name, a pipe's
 * number, a file's path when the name cache has it (Tempest keeps no
 * names for open files), else its file system and inode. */
int procfs_pid_fd(struct sbuf *sb, struct proc *p, int fd)
{
    struct vnode *vp = proc_fd_hold(p, fd, NULL);
    if (!vp)
        return -ENOENT;
    struct vattr va;
    int err = VOP_GETATTR(vp, &va, p->p_cred);
    if (!err && vp->v_type == VDIR) {
        char *path = kmalloc(PATH_MAX);
        int n = path ? proc_dir_path(vp, path, PATH_MAX) : -ENOMEM;
        if (n > 0)
            sbuf_add(sb, path, (size_t)n - 1);
        else
            err = n;
        kfree(path);
    } else if (!err && vp->v_type == VFIFO) {
        sbuf_printf(sb, "pipe:[%lu]", (unsigned long)va.va_ino);
    } else if (!err && vp->v_op->vop_fdname) {
        char name[64];
        vp->v_op->vop_fdname(vp, name, sizeof name);
        sbuf_printf(sb, "%s", name);
    } else if (!err && vp->v_type == VSOCK && !vp->v_vfsp) {
        sbuf_printf(sb, "socket:[%lu]", (unsigned long)va.va_ino);
    } else if (!err && vn_is_devfs(vp)) {
        sbuf_printf(sb, "/dev/%s", devfs_name(vp));
    } else if (!err && file_path(sb, vp) != 0) {
        sbuf_printf(sb, "inode:[%u:%lu]", va.va_fsid, (unsigned long)va.va_ino);
    }
    VN_RELE(vp);
    return err;
}

/* One line of maps; name may be "". */
static void map_line(struct sbuf *sb, const struct seg *s, uint32_t fsid, uint64_t ino,
                     const char *name)
{
    char line[128];
    int n = snprintf(line, sizeof line, "%08lx-%08lx %c%c%c%c %08lx 00:%02x %lu",
                     (unsigned long)s->s_start, (unsigned long)s->s_end,
                     (s->s_prot & PROT_READ) ? 'r' : '-', (s->s_prot & PROT_WRITE) ? 'w' : '-',
                     (s->s_prot & PROT_EXEC) ? 'x' : '-', (s->s_flags & MAP_SHARED) ? 's' : 'p',
                     (unsigned long)s->s_off, fsid, (unsigned long)ino);
    sbuf_add(sb, line, (size_t)MIN(n, (int)sizeof line - 1));
    if (*name) {
        for (int col = n; col < 73; col++)
            sbuf_add(sb, " ", 1);
        sbuf_add(sb, name, strlen(name));
    }
    sbuf_add(sb, "\n", 1);
}

/* What maps and numa_maps name a segment by: the program, a file's
 * path (in *path, kfree it), the heap, the stack, System V memory. */
struct seg_names {
    struct proc *p;
    struct proc_image *im;
    struct vnode *exe;          /* the program file, held, or NULL */
    struct seg *stack;          /* the highest anonymous segment */
};

static const char *seg_name(const struct seg_names *sn, struct as *as, struct seg *s,
                            struct sbuf *path)
{
    if (s->s_vp && s->s_vp == sn->exe)
        return sn->im->exe;
    if (s->s_vp && file_path(path, s->s_vp) == 0 && path->buf)
        return path->buf;
    if (!s->s_vp && s->s_start <= as->a_brk_base && as->a_brk_base < s->s_end)
        return "[heap]";
    if (s == sn->stack && s->s_end >= USER_STACK_TOP - (1UL << 30))
        return "[stack]";
    if (s->s_amap)
        return "/SYSV00000000 (deleted)";
    return "";
}

/* Walk p's segments under its address space's lock, each with its name:
 * the program file is looked up first (a lookup may read the disk). */
static int walk_segs(struct sbuf *sb, struct proc *p,
                     void (*fn)(struct sbuf *sb, struct as *as, struct seg *s, const char *name,
                                struct proc *p))
{
    struct as *as = p->p_as;
    if (!as || p->p_state == PS_ZOMBIE)
        return 0;
    struct seg_names sn = { .p = p, .im = proc_image_hold(p) };
    if (sn.im && sn.im->exe && lookupname(sn.im->exe, NULL, true, &sn.exe, p->p_cred))
        sn.exe = NULL;
    rlock_acquire(&as->a_lock);
    for (struct seg *s = as->a_segs; s; s = s->s_next)
        if (!s->s_vp && !s->s_amap)
            sn.stack = s;
    for (struct seg *s = as->a_segs; s; s = s->s_next) {
        struct sbuf path = { 0 };
        fn(sb, as, s, seg_name(&sn, as, s, &path), p);
        kfree(path.buf);
    }
    rlock_release(&as->a_lock);
    if (sn.exe)
        VN_RELE(sn.exe);
    proc_image_rele(sn.im);
    return 0;
}

static void maps_seg(struct sbuf *sb, struct as *as, struct seg *s, const char *name,
                     struct proc *p)
{
    struct vattr va = { 0 };
    if (s->s_vp && VOP_GETATTR(s->s_vp, &va, p->p_cred))
        va.va_ino = 0;
    map_line(sb, s, s->s_vp ? va.va_fsid : 0, s->s_vp ? va.va_ino : 0, name);
}

int procfs_pid_maps(struct sbuf *sb, struct proc *p)
{
    return walk_segs(sb, p, maps_seg);
}

/* numa_maps's policy word, Linux's mpol_to_str: "default", "bind:0-1". */
static void policy_word(struct sbuf *sb, const struct mempolicy *pol)
{
    static const char *const names[] = { "default", "prefer", "bind", "interleave", "local",
                                          "prefer (many)" };
    sbuf_printf(sb, " %s", pol->mode < MPOL_MAX ? names[pol->mode] : "?");
    if (pol->mode != MPOL_DEFAULT && pol->mode != MPOL_LOCAL) {
        sbuf_printf(sb, ":");
        sbuf_list(sb, pol->nodes);
    }
}

static void numa_seg(struct sbuf *sb, struct as *as, struct seg *s, const char *name,
                     struct proc *p)
{
    struct mempolicy pol = s->s_policy.mode != MPOL_DEFAULT ? s->s_policy
                           : p->p_thread ? p->p_thread->mempolicy
                                         : (struct mempolicy){ .mode = MPOL_DEFAULT };
    sbuf_printf(sb, "%08lx", (unsigned long)s->s_start);
    policy_word(sb, &pol);
    if (s->s_vp && name[0] == '/')
        sbuf_printf(sb, " file=%s", name);
    else if (strcmp(name, "[heap]") == 0)
        sbuf_printf(sb, " heap");
    else if (strcmp(name, "[stack]") == 0)
        sbuf_printf(sb, " stack");
    struct as_numa_counts c;
    as_numa_count(as, s, &c);
    if (c.anon)
        sbuf_printf(sb, " anon=%lu", (unsigned long)c.anon);
    if (c.dirty)
        sbuf_printf(sb, " dirty=%lu", (unsigned long)c.dirty);
    if (c.pages != c.anon)
        sbuf_printf(sb, " mapped=%lu", (unsigned long)c.pages);
    for (int n = 0; n < MAX_NODES; n++)
        if (c.node[n])
            sbuf_printf(sb, " N%d=%lu", n, (unsigned long)c.node[n]);
    sbuf_printf(sb, " kernelpagesize_kB=4\n");
}

int procfs_pid_numa_maps(struct sbuf *sb, struct proc *p)
{
    return walk_segs(sb, p, numa_seg);
}
