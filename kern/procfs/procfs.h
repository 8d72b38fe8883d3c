/*
 * procfs: the process file system mounted on /proc.  Theory in
 * kern/procfs/procfs.c; the files' text in procfs_sys.c (the system's)
 * and procfs_pid.c (a process's).
 */
#ifndef KERN_PROCFS_PROCFS_H
#define KERN_PROCFS_PROCFS_H

#include <kern/lib/types.h>
#include <kern/vfs/vfs.h>

struct proc;

#define PROC_SUPER_MAGIC 0x9fa0     /* Linux's */
#define SYSFS_MAGIC 0x62656572      /* Linux's */

/* A growing text buffer the files are written into (kmalloc'd; at most
 * SBUF_MAX bytes, beyond which the text is cut). */
#define SBUF_MAX (1024 * 1024)
struct sbuf {
    char *buf;
    size_t len, cap;
    int err;                        /* -ENOMEM once an append failed */
};
void sbuf_printf(struct sbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sbuf_add(struct sbuf *sb, const char *s, size_t n);
/* A mask as Linux prints a list of CPUs or nodes: "0-3,5" (no newline). */
void sbuf_list(struct sbuf *sb, uint64_t mask);

/* The files of /proc itself and of /proc/sysvipc: fill sb. */
int procfs_mounts(struct sbuf *sb);
int procfs_cpuinfo(struct sbuf *sb);
int procfs_meminfo(struct sbuf *sb);
int procfs_vmstat(struct sbuf *sb);
int procfs_uptime(struct sbuf *sb);
int procfs_loadavg(struct sbuf *sb);
int procfs_stat(struct sbuf *sb);
int procfs_diskstats(struct sbuf *sb);
int procfs_partitions(struct sbuf *sb);
int procfs_filesystems(struct sbuf *sb);
int procfs_lockstat(struct sbuf *sb);
int procfs_clusters(struct sbuf *sb);
int procfs_options(struct sbuf *sb);
int procfs_kprof(struct sbuf *sb);
#ifdef TEMPEST_KCSAN
int procfs_kcsan(struct sbuf *sb);      /* KCSAN=1 kernels only (procfs_kcsan.c) */
int procfs_kcsan_write(const char *buf, size_t len);
#endif
int procfs_ipc_shm(struct sbuf *sb);
/* /proc/net's files (kern/net/inet/net_proc.c). */
int procfs_net_dev(struct sbuf *sb);
int procfs_net_route(struct sbuf *sb);
int procfs_net_snmp(struct sbuf *sb);      /* kern/net/inet/mib.c */
int procfs_net_netstat(struct sbuf *sb);   /* kern/net/inet/mib.c */
int procfs_net_sockstat(struct sbuf *sb);  /* kern/net/inet/net_proc.c */
int procfs_net_tcp(struct sbuf *sb);
int procfs_net_udp(struct sbuf *sb);
int procfs_net_udplite(struct sbuf *sb);
int procfs_net_raw(struct sbuf *sb);
int procfs_net_arp(struct sbuf *sb);
/* kern/net/unix_proc.c */
int procfs_net_unix(struct sbuf *sb);
int procfs_ipc_sem(struct sbuf *sb);
int procfs_ipc_msg(struct sbuf *sb);

/* A process's files (p held by the caller). */
int procfs_pid_stat(struct sbuf *sb, struct proc *p);
int procfs_pid_status(struct sbuf *sb, struct proc *p);
int procfs_pid_cmdline(struct sbuf *sb, struct proc *p);
int procfs_pid_comm(struct sbuf *sb, struct proc *p);
int procfs_pid_maps(struct sbuf *sb, struct proc *p);
int procfs_pid_numa_maps(struct sbuf *sb, struct proc *p);
int procfs_pid_auxv(struct sbuf *sb, struct proc *p);
/* Its links' text: cwd, exe, and descriptor fd. */
int procfs_pid_cwd(struct sbuf *sb, struct proc *p);
int procfs_pid_exe(struct sbuf *sb, struct proc *p);
int procfs_pid_fd(struct sbuf *sb, struct proc *p, int fd);

/* sysfs's texts (procfs_sysfs.c); the node files take the node. */
int sysfs_node_online(struct sbuf *sb);
int sysfs_node_has_memory(struct sbuf *sb);
int sysfs_node_has_cpu(struct sbuf *sb);
int sysfs_cpu_online(struct sbuf *sb);
int sysfs_cpu_possible(struct sbuf *sb);
int sysfs_cpu_kernel_max(struct sbuf *sb);
int sysfs_node_cpulist(struct sbuf *sb, int node);
int sysfs_node_cpumap(struct sbuf *sb, int node);
int sysfs_node_distance(struct sbuf *sb, int node);
int sysfs_node_meminfo(struct sbuf *sb, int node);

/* The memory figures sysinfo and meminfo share, in bytes. */
struct procfs_mem {
    uint64_t total, free, buffers, cached;
};
void procfs_memory(struct procfs_mem *m);
/* Boot: register the type "proc". */
void procfs_init(void);
extern const struct vfssw procfs_vfssw;

#endif
