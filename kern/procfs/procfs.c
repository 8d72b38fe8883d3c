/*
 * procfs: the process file system, mounted by init on /proc.
 *
 * Theory.  Every file is text made when it is read, as in Linux's /proc
 * (and unlike SVR4's, whose /proc files are the processes' memory and
 * ioctls): busybox ps, top, free, uptime, df, mount, pidof and killall
 * read Linux's formats, so Tempest writes them.  The directory tree:
 *
 *   /proc/{mounts,cpuinfo,meminfo,vmstat,uptime,loadavg,stat,diskstats,
 *          partitions,filesystems,lockstat,options,kprof}   the system (procfs_sys.c)
 *   /proc/clusters                         cluster= counts (procfs_cluster.c)
 *   /proc/sysvipc/{shm,sem,msg}            System V IPC, as ipcs -a lists it
 *   /proc/self                             a link to the reader's pid
 *   /proc/PID/{stat,status,cmdline,comm,maps,numa_maps,auxv}, cwd, exe,
 *   fd/N                                   a process (procfs_pid.c)
 *   /proc/PID/mem                          its memory, read and written
 *                                          as ptrace's PEEK and POKE
 *                                          (procfs_mem_rw, below)
 *   /proc/PID/task/TID/{stat,status,comm,mem}  each of its threads (the
 *                                          process's text, as the threads
 *                                          share what these files show)
 *
 * sysfs, mounted by init on /sys, is the same machinery with a root of
 * its own (PFS_SYSROOT; its texts are procfs_sysfs.c's):
 *
 *   /sys/devices/system/node/{online,possible,has_memory,has_normal_memory,has_cpu}
 *   /sys/devices/system/node/nodeN/{cpulist,cpumap,distance,meminfo}
 *   /sys/devices/system/cpu/{online,possible,present,kernel_max}, cpuN/
 *
 * A node is named by what it shows: its kind, a pid and an index (the
 * file's entry in its directory's table, or a descriptor number).  Nodes
 * are made at each lookup and freed at their last VN_RELE, so nothing is
 * cached that a process's exit could leave stale: a PID directory held
 * open after its process is reaped gives ENOENT to getdents and its open
 * files ESRCH, as Linux's.  Reading a file makes its whole text into a kernel buffer
 * (struct sbuf) and copies the part asked for; st_size is 0, as Linux's.
 *
 * cwd, exe, fd/N and auxv (and mem, by its check) are the process's
 * user's and root's only.  fd/N, cwd and exe are symbolic links whose text is for people; a
 * lookup that follows them gets the file itself from VOP_FOLLOW (Linux's
 * "magic" links), so a pipe or an unlinked file opens through them.
 *
 * The reader holds the process it describes (proc_hold, kern/proc/
 * proc_info.c): its memory, and any address space found in it, stay
 * until the file is made, and a process's maps are read under its
 * address space's lock.  That lock (class "as", row 1 of the lock order)
 * is taken under the /proc vnode's lock, so procfs vnodes have their own
 * class, "procfs", ahead of "as" in the order: nothing takes a procfs
 * vnode while holding an address space, because a /proc file cannot be
 * mapped (the type is marked nommap, and mmap gives ENODEV as Linux's
 * does), so no page fault ever reads one.
 *
 * Locks: pm_nodes, the live node count of a mount, is atomic (unmount
 * refuses while any node but the root is alive).  Nodes are constant.
 * The root is held by the mount from mount to unmount.
 */
#include <kern/procfs/procfs.h>
#include <kern/proc/proc.h>
#include <kern/vfs/cred.h>
#include <kern/vm/kmem.h>
#include <kern/vm/as.h>
#include <kern/lock/lock.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/arch/numa.h>
#include <kern/arch/cpu.h>

LOCK_CLASS(procfs_vnode_class, "procfs", LK_MUTEX_SLEEP);

enum pfs_kind {
    PFS_ROOT, PFS_FILE, PFS_SELF, PFS_IPCDIR, PFS_IPCFILE, PFS_NETDIR, PFS_NETFILE,
    PFS_PIDDIR, PFS_PIDFILE, PFS_FDDIR, PFS_FDLINK,
    PFS_TASKDIR, PFS_TIDDIR, PFS_TIDFILE,
    /* sysfs (its own mount, on /sys): the root, a fixed directory (index:
     * which, SYS_*), nodeN and cpuN (pid: N), and a file (index: its
     * directory << 8 | its entry; pid: N in nodeN) */
    PFS_SYSROOT, PFS_SYSDIR, PFS_SYSNODE, PFS_SYSCPU, PFS_SYSFILE,
};

static bool is_sys(int kind)
{
    return kind >= PFS_SYSROOT;
}

/* A directory of fixed entries that belongs to no process. */
static bool is_fixed_dir(int kind)
{
    return kind == PFS_ROOT || kind == PFS_IPCDIR || kind == PFS_NETDIR;
}

struct pfs_node {
    struct vnode vn;
    enum pfs_kind kind;             /* [c] */
    int pid;                        /* [c] PID*, FD*: the process */
    int index;                      /* [c] the entry in its table, or the descriptor;
                                       TIDDIR: the tid; TIDFILE: tid << 2 | its entry */
};

struct pfs_mount {
    int nodes;                      /* [a] live nodes, the root included */
    struct pfs_node *root;          /* [c] */
};

/* The tables of the fixed directories. */
struct pfs_entry {
    const char *name;
    enum pfs_kind kind;
    uint32_t mode;                  /* permission bits */
    int (*sys)(struct sbuf *sb);
    int (*pid)(struct sbuf *sb, struct proc *p);
    int (*num)(struct sbuf *sb, int n);     /* sysfs's nodeN files: N */
};

static const struct pfs_entry root_entries[] = {
    { "mounts", PFS_FILE, 0444, procfs_mounts, NULL, NULL },
    { "cpuinfo", PFS_FILE, 0444, procfs_cpuinfo, NULL, NULL },
    { "meminfo", PFS_FILE, 0444, procfs_meminfo, NULL, NULL },
    { "vmstat", PFS_FILE, 0444, procfs_vmstat, NULL, NULL },
    { "uptime", PFS_FILE, 0444, procfs_uptime, NULL, NULL },
    { "loadavg", PFS_FILE, 0444, procfs_loadavg, NULL, NULL },
    { "stat", PFS_FILE, 0444, procfs_stat, NULL, NULL },
    { "diskstats", PFS_FILE, 0444, procfs_diskstats, NULL, NULL },
    { "partitions", PFS_FILE, 0444, procfs_partitions, NULL, NULL },
    { "filesystems", PFS_FILE, 0444, procfs_filesystems, NULL, NULL },
    { "lockstat", PFS_FILE, 0444, procfs_lockstat, NULL, NULL },
    { "clusters", PFS_FILE, 0444, procfs_clusters, NULL, NULL },
    { "options", PFS_FILE, 0444, procfs_options, NULL, NULL },
    { "kprof", PFS_FILE, 0444, procfs_kprof, NULL, NULL },
#ifdef TEMPEST_KCSAN
    { "kcsan", PFS_FILE, 0644, procfs_kcsan, NULL, NULL },
#endif
    { "self", PFS_SELF, 0777, NULL, NULL, NULL },
    { "sysvipc", PFS_IPCDIR, 0555, NULL, NULL, NULL },
    { "net", PFS_NETDIR, 0555, NULL, NULL, NULL },
};

static const struct pfs_entry ipc_entries[] = {
    { "shm", PFS_IPCFILE, 0444, procfs_ipc_shm, NULL, NULL },
    { "sem", PFS_IPCFILE, 0444, procfs_ipc_sem, NULL, NULL },
    { "msg", PFS_IPCFILE, 0444, procfs_ipc_msg, NULL, NULL },
};

/* /proc/net: the network's tables (kern/net/inet/net_proc.c, and
 * kern/net/unix_proc.c for unix). */
static const struct pfs_entry net_entries[] = {
    { "dev", PFS_NETFILE, 0444, procfs_net_dev, NULL, NULL },
    { "route", PFS_NETFILE, 0444, procfs_net_route, NULL, NULL },
    { "snmp", PFS_NETFILE, 0444, procfs_net_snmp, NULL, NULL },
    { "netstat", PFS_NETFILE, 0444, procfs_net_netstat, NULL, NULL },
    { "sockstat", PFS_NETFILE, 0444, procfs_net_sockstat, NULL, NULL },
    { "tcp", PFS_NETFILE, 0444, procfs_net_tcp, NULL, NULL },
    { "udp", PFS_NETFILE, 0444, procfs_net_udp, NULL, NULL },
    { "udplite", PFS_NETFILE, 0444, procfs_net_udplite, NULL, NULL },
    { "raw", PFS_NETFILE, 0444, procfs_net_raw, NULL, NULL },
    { "arp", PFS_NETFILE, 0444, procfs_net_arp, NULL, NULL },
    { "unix", PFS_NETFILE, 0444, procfs_net_unix, NULL, NULL },
};

/* A process's entries, by index: the code names the ones it treats
 * apart (links, private files, the memory) by these. */
enum { PID_STAT, PID_STATUS, PID_CMDLINE, PID_COMM, PID_MAPS, PID_CWD, PID_EXE, PID_FD,
       PID_TASK, PID_NUMA_MAPS, PID_AUXV, PID_MEM };

static const struct pfs_entry pid_entries[] = {
    [PID_STAT] = { "stat", PFS_PIDFILE, 0444, NULL, procfs_pid_stat, NULL },
    [PID_STATUS] = { "status", PFS_PIDFILE, 0444, NULL, procfs_pid_status, NULL },
    [PID_CMDLINE] = { "cmdline", PFS_PIDFILE, 0444, NULL, procfs_pid_cmdline, NULL },
    [PID_COMM] = { "comm", PFS_PIDFILE, 0444, NULL, procfs_pid_comm, NULL },
    [PID_MAPS] = { "maps", PFS_PIDFILE, 0444, NULL, procfs_pid_maps, NULL },
    [PID_CWD] = { "cwd", PFS_PIDFILE, 0777, NULL, procfs_pid_cwd, NULL },
    [PID_EXE] = { "exe", PFS_PIDFILE, 0777, NULL, procfs_pid_exe, NULL },
    [PID_FD] = { "fd", PFS_FDDIR, 0500, NULL, NULL, NULL },
    [PID_TASK] = { "task", PFS_TASKDIR, 0555, NULL, NULL, NULL },
    [PID_NUMA_MAPS] = { "numa_maps", PFS_PIDFILE, 0444, NULL, procfs_pid_numa_maps, NULL },
    [PID_AUXV] = { "auxv", PFS_PIDFILE, 0400, NULL, procfs_pid_auxv, NULL },  /* private */
    [PID_MEM] = { "mem", PFS_PIDFILE, 0600, NULL, NULL, NULL },   /* procfs_mem_rw */
};

/* A thread's (at most four: a TIDFILE node keeps the entry in 2 bits). */
enum { TID_STAT, TID_STATUS, TID_COMM, TID_MEM };

static const struct pfs_entry tid_entries[] = {
    [TID_STAT] = { "stat", PFS_TIDFILE, 0444, NULL, procfs_pid_stat, NULL },
    [TID_STATUS] = { "status", PFS_TIDFILE, 0444, NULL, procfs_pid_status, NULL },
    [TID_COMM] = { "comm", PFS_TIDFILE, 0444, NULL, procfs_pid_comm, NULL },
    [TID_MEM] = { "mem", PFS_TIDFILE, 0600, NULL, NULL, NULL },   /* gdb opens this one */
};
_Static_assert(TID_MEM < 4, "a TIDFILE node keeps its entry in 2 bits");

/* sysfs's fixed directories (PFS_SYSDIR's index) and their tables. */
enum { SYS_ROOT, SYS_DEVICES, SYS_SYSTEM, SYS_NODE, SYS_CPU, SYS_NODEN, SYS_CPUN };

static const struct pfs_entry sys_root_entries[] = {
    { "devices", PFS_SYSDIR, 0555, NULL, NULL, NULL },
};
static const struct pfs_entry sys_devices_entries[] = {
    { "system", PFS_SYSDIR, 0555, NULL, NULL, NULL },
};
static const struct pfs_entry sys_system_entries[] = {
    { "node", PFS_SYSDIR, 0555, NULL, NULL, NULL },
    { "cpu", PFS_SYSDIR, 0555, NULL, NULL, NULL },
};
static const struct pfs_entry sys_node_entries[] = {
    { "online", PFS_SYSFILE, 0444, sysfs_node_online, NULL, NULL },
    { "possible", PFS_SYSFILE, 0444, sysfs_node_online, NULL, NULL },
    { "has_memory", PFS_SYSFILE, 0444, sysfs_node_has_memory, NULL, NULL },
    { "has_normal_memory", PFS_SYSFILE, 0444, sysfs_node_has_memory, NULL, NULL },
    { "has_cpu", PFS_SYSFILE, 0444, sysfs_node_has_cpu, NULL, NULL },
};
static const struct pfs_entry sys_cpu_entries[] = {
    { "online", PFS_SYSFILE, 0444, sysfs_cpu_online, NULL, NULL },
    { "possible", PFS_SYSFILE, 0444, sysfs_cpu_possible, NULL, NULL },
    { "present", PFS_SYSFILE, 0444, sysfs_cpu_possible, NULL, NULL },
    { "kernel_max", PFS_SYSFILE, 0444, sysfs_cpu_kernel_max, NULL, NULL },
};
static const struct pfs_entry sys_noden_entries[] = {
    { "cpulist", PFS_SYSFILE, 0444, NULL, NULL, sysfs_node_cpulist },
    { "cpumap", PFS_SYSFILE, 0444, NULL, NULL, sysfs_node_cpumap },
    { "distance", PFS_SYSFILE, 0444, NULL, NULL, sysfs_node_distance },
    { "meminfo", PFS_SYSFILE, 0444, NULL, NULL, sysfs_node_meminfo },
};

#define NELEM(a) ((int)(sizeof a / sizeof a[0]))
#define SYS_DYN_BASE 0x100          /* readdir offsets of nodeN and cpuN */

/* A sysfs directory's fixed table (which: SYS_*). */
static const struct pfs_entry *sys_table(int which, int *n)
{
    switch (which) {
    case SYS_ROOT:    *n = NELEM(sys_root_entries); return sys_root_entries;
    case SYS_DEVICES: *n = NELEM(sys_devices_entries); return sys_devices_entries;
    case SYS_SYSTEM:  *n = NELEM(sys_system_entries); return sys_system_entries;
    case SYS_NODE:    *n = NELEM(sys_node_entries); return sys_node_entries;
    case SYS_CPU:     *n = NELEM(sys_cpu_entries); return sys_cpu_entries;
    case SYS_NODEN:   *n = NELEM(sys_noden_entries); return sys_noden_entries;
    default:          *n = 0; return NULL;
    }
}

/* Which fixed directory a sysfs directory node is (SYS_*). */
static int sys_which(const struct pfs_node *dn)
{
    switch (dn->kind) {
    case PFS_SYSROOT: return SYS_ROOT;
    case PFS_SYSNODE: return SYS_NODEN;
    case PFS_SYSCPU:  return SYS_CPUN;
    default:          return dn->index;
    }
}

/* The directory a fixed sysfs directory's entry i leads to. */
static int sys_child_dir(int which, int i)
{
    return which == SYS_ROOT ? SYS_DEVICES : which == SYS_DEVICES ? SYS_SYSTEM
         : i == 0 ? SYS_NODE : SYS_CPU;
}
#define PID_BASE 0x10000            /* readdir offsets of the PID entries in the root */

static const struct vnodeops procfs_vnodeops;

static struct pfs_node *VTOP(struct vnode *vp)
{
    return vp->v_data;
}

/* The table a directory node lists. */
static const struct pfs_entry *table_of(enum pfs_kind dir, int *n)
{
    switch (dir) {
    case PFS_ROOT:   *n = NELEM(root_entries); return root_entries;
    case PFS_IPCDIR: *n = NELEM(ipc_entries); return ipc_entries;
    case PFS_NETDIR: *n = NELEM(net_entries); return net_entries;
    case PFS_PIDDIR: *n = NELEM(pid_entries); return pid_entries;
    case PFS_TIDDIR: *n = NELEM(tid_entries); return tid_entries;
    default:         *n = 0; return NULL;
    }
}

/* The table a directory node lists, procfs's or sysfs's. */
static const struct pfs_entry *dir_table(const struct pfs_node *dn, int *n)
{
    return is_sys(dn->kind) ? sys_table(sys_which(dn), n) : table_of(dn->kind, n);
}

/* The table entry a node was made from, or NULL (root, PID dir, fd link). */
static const struct pfs_entry *entry_of(const struct pfs_node *pn)
{
    int n;
    switch (pn->kind) {
    case PFS_SYSFILE:                              return &sys_table(pn->index >> 8, &n)[pn->index & 0xff];
    case PFS_FILE: case PFS_SELF: case PFS_IPCDIR: case PFS_NETDIR:
        return &root_entries[pn->index];
    case PFS_IPCFILE:                              return &ipc_entries[pn->index];
    case PFS_NETFILE:                              return &net_entries[pn->index];
    case PFS_PIDFILE: case PFS_FDDIR: case PFS_TASKDIR: return &pid_entries[pn->index];
    case PFS_TIDFILE:                              return &tid_entries[pn->index & 3];
    default:                                       return NULL;
    }
}

static enum vtype type_of(const struct pfs_node *pn)
{
    switch (pn->kind) {
    case PFS_ROOT: case PFS_IPCDIR: case PFS_NETDIR: case PFS_PIDDIR: case PFS_FDDIR:
    case PFS_TASKDIR: case PFS_TIDDIR:
    case PFS_SYSROOT: case PFS_SYSDIR: case PFS_SYSNODE: case PFS_SYSCPU:
        return VDIR;
    case PFS_SELF: case PFS_FDLINK:
        return VLNK;
    case PFS_PIDFILE:
        return pn->index == PID_CWD || pn->index == PID_EXE ? VLNK : VREG;
    default:
        return VREG;
    }
}

static struct vnode *node_new(struct vfs *vfsp, enum pfs_kind kind, int pid, int index)
{
    struct pfs_node *pn = kzalloc(sizeof *pn);
    if (!pn)
        return NULL;
    pn->kind = kind;
    pn->pid = pid;
    pn->index = index;
    vn_init(&pn->vn, &procfs_vnodeops, type_of(pn), vfsp, pn);
    /* its own lock class: see the theory */
    mutex_destroy(&pn->vn.v_lock);
    mutex_init(&pn->vn.v_lock, &procfs_vnode_class, MUTEX_SLEEP, "procfs");
    struct pfs_mount *pm = vfsp->vfs_data;
    __atomic_add_fetch(&pm->nodes, 1, __ATOMIC_RELAXED);
    return &pn->vn;
}

static void node_free(struct vnode *vp)
{
    struct pfs_mount *pm = vp->v_vfsp->vfs_data;
    __atomic_sub_fetch(&pm->nodes, 1, __ATOMIC_RELAXED);
    vn_destroy(vp);
    kfree(VTOP(vp));
}

/* ---- the text buffer ---- */

static bool sbuf_reserve(struct sbuf *sb, size_t more)
{
    if (sb->err)
        return false;
    if (sb->len + more + 1 <= sb->cap)
        return true;
    size_t cap = sb->cap ? sb->cap : 1024;
    while (cap < sb->len + more + 1)
        cap *= 2;
    if (cap > SBUF_MAX + 1) {
        cap = SBUF_MAX + 1;
        if (sb->len + more + 1 > cap)
            return false;           /* cut: the text ends here */
    }
    char *nb = kmalloc(cap);
    if (!nb) {
        sb->err = -ENOMEM;
        return false;
    }
    if (sb->buf) {
        memcpy(nb, sb->buf, sb->len);
        kfree(sb->buf);
    }
    sb->buf = nb;
    sb->cap = cap;
    return true;
}

void sbuf_add(struct sbuf *sb, const char *s, size_t n)
{
    if (!sbuf_reserve(sb, n))
        return;
    memcpy(sb->buf + sb->len, s, n);
    sb->len += n;
    sb->buf[sb->len] = 0;
}

void sbuf_printf(struct sbuf *sb, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < (int)sizeof line) {
        sbuf_add(sb, line, (size_t)n);
        return;
    }
    if (!sbuf_reserve(sb, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

void sbuf_list(struct sbuf *sb, uint64_t mask)
{
    bool first = true;
    for (int c = 0; c < 64; c++) {
        if (!(mask & (1UL << c)) || (c > 0 && (mask & (1UL << (c - 1)))))
            continue;
        int end = c;
        while (end + 1 < 64 && (mask & (1UL << (end + 1))))
            end++;
        sbuf_printf(sb, first ? "%d" : ",%d", c);
        if (end > c)
            sbuf_printf(sb, "-%d", end);
        first = false;
    }
}

/* ---- making a node's text ---- */

/* Does cr see into p's private parts (cwd, exe, fd: Linux's ptrace
 * check, reduced to "root or the same user")? */
static bool may_inspect(struct proc *p, struct cred *cr)
{
    return cr->cr_uid == 0 || (cr->cr_uid == p->p_cred->cr_uid && cr->cr_uid == p->p_cred->cr_ruid);
}

static int node_text(struct pfs_node *pn, struct sbuf *sb, struct cred *cr)
{
    const struct pfs_entry *e = entry_of(pn);
    if (pn->kind == PFS_SELF) {
        struct proc *me = curproc();
        if (!me)
            return -ENOENT;
        sbuf_printf(sb, "%d", me->p_pid);
        return sb->err;
    }
    if (pn->kind == PFS_SYSFILE)
        return (e->sys ? e->sys(sb) : e->num(sb, pn->pid)) ?: sb->err;
    if (e && e->sys)
        return e->sys(sb) ?: sb->err;
    struct proc *p = proc_hold(pn->pid);
    if (!p)
        return -ESRCH;
    int err;
    bool private = pn->kind == PFS_FDLINK || (pn->kind == PFS_PIDFILE &&
                   (pn->index == PID_CWD || pn->index == PID_EXE || pn->index == PID_AUXV));
    if (private && !may_inspect(p, cr))
        err = -EACCES;
    else if (pn->kind == PFS_FDLINK)
        err = procfs_pid_fd(sb, p, pn->index);
    else if (e && e->pid)
        err = e->pid(sb, p);
    else
        err = -EINVAL;
    proc_rele(p);
    return err ?: sb->err;
}

/* ---- vnode operations ---- */

static bool is_mem(const struct pfs_node *pn)
{
    return (pn->kind == PFS_PIDFILE && pn->index == PID_MEM) ||
           (pn->kind == PFS_TIDFILE && (pn->index & 3) == TID_MEM);
}

/* /proc/PID/mem: the process's memory at the file offset, read or written
 * as a tracer's PEEK and POKE would (kern/vm/fault.c: a write reaches
 * read-only text through a private copy), for a caller with ptrace's
 * permission.  An address with nothing mapped is EIO; a process with no
 * memory left reads as empty. */
static int procfs_mem_rw(struct pfs_node *pn, struct uio *uio, bool write)
{
    struct proc *p = proc_hold(pn->pid);
    if (!p)
        return -ESRCH;
    int err = 0;
    struct as *as = p->p_state == PS_ZOMBIE ? NULL : p->p_as;
    if (!proc_may_inspect(curproc(), p)) {
        err = -EACCES;
    } else if (as && uio->uio_resid) {
        int64_t n = write ? as_poke_remote(as, uio->uio_offset, uio->uio_base, uio->uio_resid)
                          : as_copy_remote(as, uio->uio_offset, uio->uio_base, uio->uio_resid,
                                           false);
        if (n < 0) {
            err = -EIO;
        } else {
            uio->uio_base = (char *)uio->uio_base + n;
            uio->uio_resid -= (size_t)n;
            uio->uio_offset += (uint64_t)n;
        }
    }
    proc_rele(p);
    return err;
}

static int procfs_read(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    if (vp->v_type == VDIR)
        return -EISDIR;
    if (uio->uio_user)
        return -EFAULT;
    if (is_mem(VTOP(vp)))
        return procfs_mem_rw(VTOP(vp), uio, false);
    struct sbuf sb = { 0 };
    int err = node_text(VTOP(vp), &sb, cr);
    if (!err && uio->uio_offset < sb.len) {
        size_t n = MIN(uio->uio_resid, sb.len - (size_t)uio->uio_offset);
        memcpy(uio->uio_base, sb.buf + uio->uio_offset, n);
        uio->uio_base = (char *)uio->uio_base + n;
        uio->uio_resid -= n;
        uio->uio_offset += n;
    }
    kfree(sb.buf);
    return err;
}

#ifdef TEMPEST_KCSAN
/* /proc/kcsan takes a word naming a planted race's hook (procfs_kcsan.c);
 * the whole write is consumed. */
static bool is_kcsan(const struct pfs_node *pn)
{
    return pn->kind == PFS_FILE && entry_of(pn)->sys == procfs_kcsan;
}

static int procfs_kcsan_rw(struct uio *uio)
{
    int err = procfs_kcsan_write(uio->uio_base, uio->uio_resid);
    if (!err) {
        uio->uio_base = (char *)uio->uio_base + uio->uio_resid;
        uio->uio_offset += uio->uio_resid;
        uio->uio_resid = 0;
    }
    return err;
}
#endif

static int procfs_write(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    if (vp->v_type != VDIR && is_mem(VTOP(vp)) && !uio->uio_user)
        return procfs_mem_rw(VTOP(vp), uio, true);
#ifdef TEMPEST_KCSAN
    if (vp->v_type != VDIR && is_kcsan(VTOP(vp)) && !uio->uio_user)
        return procfs_kcsan_rw(uio);
#endif
    return vp->v_type == VDIR ? -EISDIR : -EINVAL;     /* no other file takes writes */
}

/* The owner of a node: a process's effective ids for its own nodes
 * (ps takes a process's user from its directory), root for the rest. */
static void node_owner(const struct pfs_node *pn, uint32_t *uid, uint32_t *gid)
{
    *uid = *gid = 0;
    if (pn->kind < PFS_PIDDIR || is_sys(pn->kind))
        return;
    struct proc *p = proc_hold(pn->pid);
    if (!p)
        return;
    *uid = p->p_cred->cr_uid;
    *gid = p->p_cred->cr_gid;
    proc_rele(p);
}

/* A descriptor's link: r and w as the descriptor was opened, and x. */
static uint32_t fd_link_bits(const struct pfs_node *pn)
{
    struct proc *p = proc_hold(pn->pid);
    int flags = 0;
    struct vnode *vp = p ? proc_fd_hold(p, pn->index, &flags) : NULL;
    if (p)
        proc_rele(p);
    if (!vp)
        return 0700;
    VN_RELE(vp);
    int acc = flags & O_ACCMODE;
    return 0100 | (acc != O_WRONLY ? 0400 : 0) | (acc != O_RDONLY ? 0200 : 0);
}

static uint32_t node_mode(const struct pfs_node *pn)
{
    const struct pfs_entry *e = entry_of(pn);
    uint32_t bits = e ? e->mode : pn->kind == PFS_FDLINK ? fd_link_bits(pn) : 0555;
    switch (pn->vn.v_type) {
    case VDIR: return S_IFDIR | bits;
    case VLNK: return S_IFLNK | bits;
    default:   return S_IFREG | bits;
    }
}

static uint64_t node_ino(const struct pfs_node *pn)
{
    if (pn->kind == PFS_ROOT)
        return 1;
    if (pn->kind >= PFS_TASKDIR)        /* a tid does not fit in 8 bits */
        return ((uint64_t)pn->pid << 32) | ((uint64_t)pn->kind << 24) | (uint64_t)(pn->index + 1);
    return ((uint64_t)pn->pid << 16) | ((uint64_t)pn->kind << 8) | (uint64_t)(pn->index + 1);
}

static int procfs_getattr(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    struct pfs_node *pn = VTOP(vp);
    memset(va, 0, sizeof *va);
    va->va_type = vp->v_type;
    va->va_mode = node_mode(pn);
    node_owner(pn, &va->va_uid, &va->va_gid);
    va->va_nlink = vp->v_type == VDIR ? 2 : 1;
    va->va_ino = node_ino(pn);
    va->va_blksize = 1024;
    va->va_fsid = vp->v_vfsp->vfs_fsid;
    va->va_atime = va->va_mtime = va->va_ctime = realtime_sec();
    return 0;
}

static int procfs_setattr(struct vnode *vp, const struct vattr *va, struct cred *cr)
{
    return -EPERM;
}

static int procfs_access(struct vnode *vp, int mode, struct cred *cr)
{
    struct vattr va;
    procfs_getattr(vp, &va, cr);
    return vn_access_check(va.va_mode, va.va_uid, va.va_gid, mode, cr);
}

/* A decimal pid, or -1. */
static int parse_pid(const char *name)
{
    int pid = 0;
    if (!*name || (name[0] == '0' && name[1]))
        return -1;
    for (const char *s = name; *s; s++) {
        if (*s < '0' || *s > '9' || pid > 100000000)
            return -1;
        pid = pid * 10 + (*s - '0');
    }
    return pid;
}

static bool proc_exists(int pid)
{
    struct proc *p = proc_hold(pid);
    if (p)
        proc_rele(p);
    return p != NULL;
}

/* Is tid a thread of process pid? */
static bool tid_exists(int pid, int tid)
{
    struct proc *p = proc_hold(pid);
    if (!p)
        return false;
    int tids[64], n = MIN(proc_tids(p, tids, 64), 64);
    proc_rele(p);
    for (int i = 0; i < n; i++)
        if (tids[i] == tid)
            return true;
    return false;
}

/* The parent of directory dn: a PID directory, task/, or the root (NULL). */
static struct vnode *parent_of(struct vfs *vfsp, const struct pfs_node *dn)
{
    if (dn->kind == PFS_FDDIR || dn->kind == PFS_TASKDIR)
        return node_new(vfsp, PFS_PIDDIR, dn->pid, 0);
    return node_new(vfsp, PFS_TASKDIR, dn->pid, PID_TASK);
}

/* The parent of a sysfs directory below its root. */
static struct vnode *sys_parent(struct vfs *vfsp, const struct pfs_node *dn)
{
    int which = sys_which(dn);
    if (which == SYS_DEVICES)
        return node_new(vfsp, PFS_SYSROOT, 0, 0);
    int up = which == SYS_SYSTEM ? SYS_DEVICES : which == SYS_NODE || which == SYS_CPU
           ? SYS_SYSTEM : which == SYS_NODEN ? SYS_NODE : SYS_CPU;
    return node_new(vfsp, PFS_SYSDIR, 0, up);
}

/* "node3" or "cpu12": the number after prefix, or -1. */
static int numbered(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(name, prefix, n) == 0 ? parse_pid(name + n) : -1;
}

/* A name in a sysfs directory: its table, then nodeN or cpuN. */
static int sys_lookup(struct vnode *dvp, const struct pfs_node *dn, const char *name,
                      struct vnode **vpp)
{
    int which = sys_which(dn), n, num;
    const struct pfs_entry *t = sys_table(which, &n);
    struct vnode *vp = NULL;
    for (int i = 0; i < n && !vp; i++)
        if (strcmp(name, t[i].name) == 0)
            vp = node_new(dvp->v_vfsp, t[i].kind, dn->pid,
                          t[i].kind == PFS_SYSDIR ? sys_child_dir(which, i) : which << 8 | i);
    if (!vp && which == SYS_NODE && (num = numbered(name, "node")) >= 0 && num < numa_nnodes)
        vp = node_new(dvp->v_vfsp, PFS_SYSNODE, num, 0);
    else if (!vp && which == SYS_CPU && (num = numbered(name, "cpu")) >= 0 && num < ncpus &&
             num < 64 && cpus[num].online)
        vp = node_new(dvp->v_vfsp, PFS_SYSCPU, num, 0);
    else if (!vp && (n == 0 || !t))
        return -ENOENT;
    if (!vp)
        return -ENOENT;
    *vpp = vp;
    return 0;
}

static int procfs_lookup(struct vnode *dvp, const char *name, struct vnode **vpp,
                         struct cred *cr)
{
    struct pfs_node *dn = VTOP(dvp);
    if (dvp->v_type != VDIR)
        return -ENOTDIR;
    if (strcmp(name, ".") == 0) {
        VN_HOLD(dvp);
        *vpp = dvp;
        return 0;
    }
    struct pfs_mount *pm = dvp->v_vfsp->vfs_data;
    struct vnode *vp = NULL;
    if (strcmp(name, "..") == 0) {
        if (dn->kind == PFS_FDDIR || dn->kind == PFS_TASKDIR || dn->kind == PFS_TIDDIR)
            vp = parent_of(dvp->v_vfsp, dn);
        else if (is_sys(dn->kind) && dn->kind != PFS_SYSROOT)
            vp = sys_parent(dvp->v_vfsp, dn);
        else {
            vp = &pm->root->vn;
            VN_HOLD(vp);
        }
        *vpp = vp;
        return vp ? 0 : -ENOMEM;
    }
    if (is_sys(dn->kind))
        return sys_lookup(dvp, dn, name, vpp);
    if (!is_fixed_dir(dn->kind) && !proc_exists(dn->pid))
        return -ENOENT;
    int n;
    const struct pfs_entry *t = table_of(dn->kind, &n);
    for (int i = 0; i < n; i++)
        if (strcmp(name, t[i].name) == 0) {
            vp = node_new(dvp->v_vfsp, t[i].kind, dn->pid,
                          dn->kind == PFS_TIDDIR ? dn->index << 2 | i : i);
            break;
        }
    if (!vp && dn->kind == PFS_ROOT) {
        int pid = parse_pid(name);
        if (pid <= 0 || !proc_exists(pid))
            return -ENOENT;
        vp = node_new(dvp->v_vfsp, PFS_PIDDIR, pid, 0);
    } else if (!vp && dn->kind == PFS_FDDIR) {
        int fd = parse_pid(name);
        struct proc *p = fd >= 0 ? proc_hold(dn->pid) : NULL;
        struct vnode *fvp = p ? proc_fd_hold(p, fd, NULL) : NULL;
        if (p)
            proc_rele(p);
        if (!fvp)
            return -ENOENT;
        VN_RELE(fvp);
        vp = node_new(dvp->v_vfsp, PFS_FDLINK, dn->pid, fd);
    } else if (!vp && dn->kind == PFS_TASKDIR) {
        int tid = parse_pid(name);
        if (tid <= 0 || !tid_exists(dn->pid, tid))
            return -ENOENT;
        vp = node_new(dvp->v_vfsp, PFS_TIDDIR, dn->pid, tid);
    } else if (!vp) {
        return -ENOENT;
    }
    if (!vp)
        return -ENOMEM;
    *vpp = vp;
    return 0;
}

static int procfs_no_names(void)
{
    return -EACCES;
}

static int procfs_create(struct vnode *dvp, const char *name, const struct vattr *va, bool excl,
                         struct vnode **vpp, struct cred *cr)
{
    int err = procfs_lookup(dvp, name, vpp, cr);
    if (err == 0 && excl) {
        VN_RELE(*vpp);
        return -EEXIST;
    }
    return err == -ENOENT ? -EACCES : err;
}

static int procfs_remove(struct vnode *dvp, const char *name, struct cred *cr)
{
    return procfs_no_names();
}

static int procfs_link(struct vnode *tdvp, struct vnode *svp, const char *tname, struct cred *cr)
{
    return procfs_no_names();
}

static int procfs_rename(struct vnode *sdvp, const char *sname, struct vnode *tdvp,
                         const char *tname, struct cred *cr)
{
    return procfs_no_names();
}

static int procfs_mkdir(struct vnode *dvp, const char *name, const struct vattr *va,
                        struct vnode **vpp, struct cred *cr)
{
    return procfs_no_names();
}

static int procfs_rmdir(struct vnode *dvp, const char *name, struct cred *cr)
{
    return procfs_no_names();
}

static int procfs_symlink(struct vnode *dvp, const char *name, const struct vattr *va,
                          const char *target, struct cred *cr)
{
    return procfs_no_names();
}

static uint8_t dtype_of(enum pfs_kind kind, int index)
{
    struct pfs_node probe = { .kind = kind, .index = index };
    switch (type_of(&probe)) {
    case VDIR: return DT_DIR;
    case VLNK: return DT_LNK;
    default:   return DT_REG;
    }
}

/* The root's processes, from offset PID_BASE + pid on. */
static bool readdir_pids(struct uio *uio)
{
    int max = 1024;
    int *pids = kmalloc((size_t)max * sizeof *pids);
    if (!pids)
        return false;
    int n = MIN(proc_pids(pids, max), max);
    bool all = true;
    for (int i = 0; i < n && all; i++) {
        if ((uint64_t)pids[i] + PID_BASE < uio->uio_offset)
            continue;
        char name[16];
        snprintf(name, sizeof name, "%d", pids[i]);
        struct pfs_node entry = { .kind = PFS_PIDDIR, .pid = pids[i] };
        all = vfs_put_dirent(uio, node_ino(&entry), PID_BASE + pids[i] + 1, DT_DIR, name,
                             strlen(name));
        if (all)
            uio->uio_offset = PID_BASE + (uint64_t)pids[i] + 1;
    }
    kfree(pids);
    return all;
}

/* A process's descriptors, offset 2 + fd. */
static bool readdir_fds(struct uio *uio, int pid)
{
    struct proc *p = proc_hold(pid);
    if (!p)
        return true;
    bool all = true;
    /* the offset is the caller's (lseek): any value must do */
    int start = uio->uio_offset < 2 ? 0 : uio->uio_offset > NOFILE + 2 ? NOFILE
                                         : (int)uio->uio_offset - 2;
    for (int fd = start; fd < NOFILE && all; fd++) {
        struct vnode *vp = proc_fd_hold(p, fd, NULL);
        if (!vp)
            continue;
        VN_RELE(vp);
        char name[16];
        snprintf(name, sizeof name, "%d", fd);
        all = vfs_put_dirent(uio, ((uint64_t)pid << 16) | (PFS_FDLINK << 8) | (uint64_t)(fd + 1),
                             fd + 3, DT_LNK, name, strlen(name));
        if (all)
            uio->uio_offset = (uint64_t)fd + 3;
    }
    proc_rele(p);
    return all;
}

/* A process's threads (task/), offset 3 + tid. */
static bool readdir_tids(struct uio *uio, int pid)
{
    struct proc *p = proc_hold(pid);
    if (!p)
        return true;
    int tids[64], n = MIN(proc_tids(p, tids, 64), 64);
    proc_rele(p);
    bool all = true;
    for (int i = 0; i < n && all; i++) {
        if ((uint64_t)tids[i] + 3 <= uio->uio_offset)
            continue;
        char name[16];
        snprintf(name, sizeof name, "%d", tids[i]);
        struct pfs_node entry = { .kind = PFS_TIDDIR, .pid = pid, .index = tids[i] };
        all = vfs_put_dirent(uio, node_ino(&entry), tids[i] + 3, DT_DIR, name, strlen(name));
        if (all)
            uio->uio_offset = (uint64_t)tids[i] + 3;
    }
    return all;
}

/* sysfs's node/ and cpu/: nodeN and cpuN, offset SYS_DYN_BASE + N. */
static bool readdir_sys_numbered(struct uio *uio, int which)
{
    bool nodes = which == SYS_NODE;
    if (!nodes && which != SYS_CPU)
        return true;
    int count = nodes ? numa_nnodes : MIN(ncpus, 64);
    bool all = true;
    for (int i = 0; i < count && all; i++) {
        if ((!nodes && !cpus[i].online) || SYS_DYN_BASE + (uint64_t)i < uio->uio_offset)
            continue;
        char name[16];
        snprintf(name, sizeof name, nodes ? "node%d" : "cpu%d", i);
        struct pfs_node entry = { .kind = nodes ? PFS_SYSNODE : PFS_SYSCPU, .pid = i };
        all = vfs_put_dirent(uio, node_ino(&entry), SYS_DYN_BASE + i + 1, DT_DIR, name,
                             strlen(name));
        if (all)
            uio->uio_offset = SYS_DYN_BASE + (uint64_t)i + 1;
    }
    return all;
}

/* Entries: 0 ".", 1 "..", then the directory's table from 2, then (the
 * root) the processes from PID_BASE, (fd/) the descriptors or (task/)
 * the threads. */
static int procfs_readdir(struct vnode *vp, struct uio *uio, struct cred *cr, bool *eofp)
{
    struct pfs_node *dn = VTOP(vp);
    if (vp->v_type != VDIR)
        return -ENOTDIR;
    if (uio->uio_user)
        return -EFAULT;
    int n;
    const struct pfs_entry *t = dir_table(dn, &n);
    if (!is_fixed_dir(dn->kind) && !is_sys(dn->kind) && !proc_exists(dn->pid))
        return -ENOENT;             /* reaped, as Linux says */
    bool all = true;
    while (all && uio->uio_offset < 2 + (uint64_t)n) {
        uint64_t i = uio->uio_offset;
        const char *name = i == 0 ? "." : i == 1 ? ".." : t[i - 2].name;
        uint8_t type = i < 2 ? DT_DIR : dtype_of(t[i - 2].kind, (int)i - 2);
        /* the numbers the entries' own nodes give (lookup makes them alike) */
        int index = dn->kind == PFS_TIDDIR ? dn->index << 2 | ((int)i - 2) : (int)i - 2;
        if (i >= 2 && is_sys(dn->kind))
            index = t[i - 2].kind == PFS_SYSDIR ? sys_child_dir(sys_which(dn), (int)i - 2)
                                                : sys_which(dn) << 8 | ((int)i - 2);
        struct pfs_node entry = { .kind = i < 2 ? dn->kind : t[i - 2].kind, .pid = dn->pid,
                                  .index = i < 2 ? dn->index : index };
        uint64_t ino = i == 1 && dn->kind < PFS_FDDIR ? 1 : node_ino(&entry);
        all = vfs_put_dirent(uio, ino, (int64_t)i + 1, type, name, strlen(name));
        if (all)
            uio->uio_offset = i + 1;
    }
    if (all && dn->kind == PFS_ROOT) {
        if (uio->uio_offset < PID_BASE)
            uio->uio_offset = PID_BASE;
        all = readdir_pids(uio);
    } else if (all && dn->kind == PFS_FDDIR) {
        all = readdir_fds(uio, dn->pid);
    } else if (all && dn->kind == PFS_TASKDIR) {
        all = readdir_tids(uio, dn->pid);
    } else if (all && is_sys(dn->kind)) {
        all = readdir_sys_numbered(uio, sys_which(dn));
    }
    if (eofp)
        *eofp = all;
    return 0;
}

static int procfs_readlink(struct vnode *vp, struct uio *uio, struct cred *cr)
{
    if (vp->v_type != VLNK)
        return -EINVAL;
    if (uio->uio_user)
        return -EFAULT;
    struct sbuf sb = { 0 };
    int err = node_text(VTOP(vp), &sb, cr);
    if (!err) {
        size_t n = MIN(uio->uio_resid, sb.len);
        memcpy(uio->uio_base, sb.buf, n);
        uio->uio_base = (char *)uio->uio_base + n;
        uio->uio_resid -= n;
        uio->uio_offset += n;
    }
    kfree(sb.buf);
    return err;
}

/* fd/N, cwd and exe lead to the file itself (Linux's magic links), so a
 * pipe, or a file Tempest has no name for, opens through them; "self"
 * is an ordinary link (-ENOSYS: its text is followed). */
static int procfs_follow(struct vnode *vp, struct vnode **vpp, struct cred *cr)
{
    struct pfs_node *pn = VTOP(vp);
    bool fd = pn->kind == PFS_FDLINK;
    if (!fd && !(pn->kind == PFS_PIDFILE && (pn->index == PID_CWD || pn->index == PID_EXE)))
        return -ENOSYS;
    struct proc *p = proc_hold(pn->pid);
    if (!p)
        return -ENOENT;
    int err = may_inspect(p, cr) ? 0 : -EACCES;
    struct vnode *target = NULL;
    if (!err && fd) {
        target = proc_fd_hold(p, pn->index, NULL);
    } else if (!err && pn->index == PID_CWD) {
        target = proc_cwd_hold(p);
    } else if (!err) {
        struct proc_image *im = proc_image_hold(p);
        if (im && im->exe && lookupname(im->exe, NULL, true, &target, cr))
            target = NULL;
        proc_image_rele(im);
    }
    proc_rele(p);
    if (!err && !target)
        err = -ENOENT;
    *vpp = target;
    return err;
}

static int procfs_fsync(struct vnode *vp, struct cred *cr)
{
    return 0;
}

static int procfs_truncate(struct vnode *vp, uint64_t size, struct cred *cr)
{
    return vp->v_type == VDIR ? -EISDIR : -EACCES;
}

/* The last reference: every node but the root is freed here (the root
 * is held by the mount until unmount frees it). */
static void procfs_inactive(struct vnode *vp, struct cred *cr)
{
    if (VTOP(vp)->kind != PFS_ROOT && VTOP(vp)->kind != PFS_SYSROOT)
        node_free(vp);
}

static const struct vnodeops procfs_vnodeops = {
    .vop_open = vn_open_nop,
    .vop_close = vn_close_nop,
    .vop_read = procfs_read,
    .vop_write = procfs_write,
    .vop_ioctl = vn_ioctl_notty,
    .vop_getattr = procfs_getattr,
    .vop_setattr = procfs_setattr,
    .vop_access = procfs_access,
    .vop_lookup = procfs_lookup,
    .vop_create = procfs_create,
    .vop_remove = procfs_remove,
    .vop_link = procfs_link,
    .vop_rename = procfs_rename,
    .vop_mkdir = procfs_mkdir,
    .vop_rmdir = procfs_rmdir,
    .vop_readdir = procfs_readdir,
    .vop_symlink = procfs_symlink,
    .vop_readlink = procfs_readlink,
    .vop_fsync = procfs_fsync,
    .vop_truncate = procfs_truncate,
    .vop_inactive = procfs_inactive,
    .vop_follow = procfs_follow,
};

/* ---- file-system operations ---- */

static int mount_with_root(struct vfs *vfsp, enum pfs_kind kind)
{
    struct pfs_mount *pm = kzalloc(sizeof *pm);
    if (!pm)
        return -ENOMEM;
    vfsp->vfs_data = pm;
    vfsp->vfs_bsize = 1024;
    struct vnode *root = node_new(vfsp, kind, 0, 0);
    if (!root) {
        kfree(pm);
        vfsp->vfs_data = NULL;
        return -ENOMEM;
    }
    root->v_flag |= VROOT;
    pm->root = VTOP(root);
    return 0;
}

/* Called with the list lock held exclusive and the VFS's hold on the
 * root dropped: only the mount's own reference on the root may remain. */
static int procfs_mount(struct vfs *vfsp, struct cred *cr)
{
    return mount_with_root(vfsp, PFS_ROOT);
}

static int sysfs_mount(struct vfs *vfsp, struct cred *cr)
{
    return mount_with_root(vfsp, PFS_SYSROOT);
}

static int procfs_unmount(struct vfs *vfsp, struct cred *cr)
{
    struct pfs_mount *pm = vfsp->vfs_data;
    if (__atomic_load_n(&pm->nodes, __ATOMIC_ACQUIRE) > 1 ||
        __atomic_load_n(&pm->root->vn.v_count, __ATOMIC_ACQUIRE) > 1)
        return -EBUSY;
    node_free(&pm->root->vn);
    kfree(pm);
    vfsp->vfs_data = NULL;
    return 0;
}

static int procfs_root(struct vfs *vfsp, struct vnode **vpp)
{
    struct pfs_mount *pm = vfsp->vfs_data;
    VN_HOLD(&pm->root->vn);
    *vpp = &pm->root->vn;
    return 0;
}

static int procfs_statfs(struct vfs *vfsp, struct kstatfs *sb)
{
    struct pfs_mount *pm = vfsp->vfs_data;
    memset(sb, 0, sizeof *sb);
    sb->f_type = pm->root->kind == PFS_SYSROOT ? SYSFS_MAGIC : PROC_SUPER_MAGIC;
    sb->f_bsize = 4096;
    sb->f_namelen = 255;
    sb->f_fsid = vfsp->vfs_fsid;
    return 0;
}

static int procfs_sync(struct vfs *vfsp, struct cred *cr)
{
    return 0;
}

static const struct vfsops procfs_vfsops = {
    .vfs_mount = procfs_mount,
    .vfs_unmount = procfs_unmount,
    .vfs_root = procfs_root,
    .vfs_statfs = procfs_statfs,
    .vfs_sync = procfs_sync,
};

const struct vfssw procfs_vfssw = { .name = "proc", .ops = &procfs_vfsops, .needs_dev = false,
                                   .nommap = true };

static const struct vfsops sysfs_vfsops = {
    .vfs_mount = sysfs_mount,
    .vfs_unmount = procfs_unmount,
    .vfs_root = procfs_root,
    .vfs_statfs = procfs_statfs,
    .vfs_sync = procfs_sync,
};

static const struct vfssw sysfs_vfssw = { .name = "sysfs", .ops = &sysfs_vfsops,
                                          .needs_dev = false, .nommap = true };

void procfs_init(void)
{
    if (vfs_register_type(&procfs_vfssw) || vfs_register_type(&sysfs_vfssw))
        kprintf("procfs: cannot register the types\n");
}
