/*
 * The system call handlers (kern/proc/sys_proc.c, kern/proc/sys_fs.c),
 * called by syscall_dispatch with the six argument registers.  Each
 * returns a result or a negative errno.  Prototypes take uint64_t so the
 * table in syscall.c can hold them all.
 */
#ifndef KERN_PROC_SYSCALLS_H
#define KERN_PROC_SYSCALLS_H

#include <kern/lib/types.h>

/* The "at" calls' common arguments (Linux's values). */
#define AT_FDCWD            (-100)
#define AT_SYMLINK_NOFOLLOW 0x100
#define AT_EMPTY_PATH       0x1000

#define SYSCALL_DECL(name) int64_t name(uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, \
                                        uint64_t a4, uint64_t a5)

/* processes and memory: sys_proc.c */
SYSCALL_DECL(sys_fork);
SYSCALL_DECL(sys_clone);
SYSCALL_DECL(sys_clone3);
SYSCALL_DECL(sys_sethostname);
SYSCALL_DECL(sys_setdomainname);
SYSCALL_DECL(sys_vfork);
SYSCALL_DECL(sys_reboot);
SYSCALL_DECL(sys_pause);
SYSCALL_DECL(sys_execve);
SYSCALL_DECL(sys_execveat);
SYSCALL_DECL(sys_process_vm_readv);
SYSCALL_DECL(sys_ptrace);
SYSCALL_DECL(sys_process_vm_writev);
SYSCALL_DECL(sys_membarrier);
SYSCALL_DECL(sys_set_mempolicy);
SYSCALL_DECL(sys_mbind);
SYSCALL_DECL(sys_memfd_create);
SYSCALL_DECL(sys_get_mempolicy);
SYSCALL_DECL(sys_move_pages);
SYSCALL_DECL(sys_migrate_pages);
SYSCALL_DECL(sys_restart_syscall);
SYSCALL_DECL(sys_exit);
SYSCALL_DECL(sys_exit_group);
SYSCALL_DECL(sys_wait4);
SYSCALL_DECL(sys_waitid);
SYSCALL_DECL(sys_times);
SYSCALL_DECL(sys_getrusage);
SYSCALL_DECL(sys_getpid);
SYSCALL_DECL(sys_getppid);
SYSCALL_DECL(sys_getuid);
SYSCALL_DECL(sys_getgid);
SYSCALL_DECL(sys_geteuid);
SYSCALL_DECL(sys_getegid);
SYSCALL_DECL(sys_setpgid);
SYSCALL_DECL(sys_getpgid);
SYSCALL_DECL(sys_getpgrp);
SYSCALL_DECL(sys_setsid);
SYSCALL_DECL(sys_getsid);
SYSCALL_DECL(sys_arch_prctl);
SYSCALL_DECL(sys_set_tid_address);
SYSCALL_DECL(sys_rt_sigaction);
SYSCALL_DECL(sys_sigaltstack);     /* signal.c */
SYSCALL_DECL(sys_rt_sigprocmask);
SYSCALL_DECL(sys_rt_sigpending);
SYSCALL_DECL(sys_rt_sigsuspend);
SYSCALL_DECL(sys_nanosleep_sig);
SYSCALL_DECL(sys_clock_nanosleep_sig);
SYSCALL_DECL(sys_sched_yield);
SYSCALL_DECL(sys_uname);
SYSCALL_DECL(sys_brk);
SYSCALL_DECL(sys_mmap);
SYSCALL_DECL(sys_munmap);
SYSCALL_DECL(sys_msync);
SYSCALL_DECL(sys_mincore);
SYSCALL_DECL(sys_mprotect);

/* System V IPC: kern/ipc/shm.c, sem.c, msg.c */
SYSCALL_DECL(sys_shmget);
SYSCALL_DECL(sys_shmat);
SYSCALL_DECL(sys_shmdt);
SYSCALL_DECL(sys_shmctl);
SYSCALL_DECL(sys_semget);
SYSCALL_DECL(sys_semop);
SYSCALL_DECL(sys_semtimedop);
SYSCALL_DECL(sys_semctl);
SYSCALL_DECL(sys_msgget);
SYSCALL_DECL(sys_msgsnd);
SYSCALL_DECL(sys_msgrcv);
SYSCALL_DECL(sys_msgctl);

/* files: sys_fs.c */
SYSCALL_DECL(sys_read);
SYSCALL_DECL(sys_write);
SYSCALL_DECL(sys_readv);
SYSCALL_DECL(sys_writev);
SYSCALL_DECL(sys_pread64);
SYSCALL_DECL(sys_pwrite64);
SYSCALL_DECL(sys_open);
SYSCALL_DECL(sys_openat);
SYSCALL_DECL(sys_openat2);
SYSCALL_DECL(sys_creat);
SYSCALL_DECL(sys_close);
SYSCALL_DECL(sys_lseek);
SYSCALL_DECL(sys_stat);
SYSCALL_DECL(sys_fstat);
SYSCALL_DECL(sys_lstat);
SYSCALL_DECL(sys_newfstatat);
SYSCALL_DECL(sys_access);
SYSCALL_DECL(sys_faccessat);
SYSCALL_DECL(sys_getdents64);
SYSCALL_DECL(sys_mkdir);
SYSCALL_DECL(sys_mkdirat);
SYSCALL_DECL(sys_rmdir);
SYSCALL_DECL(sys_unlink);
SYSCALL_DECL(sys_unlinkat);
SYSCALL_DECL(sys_link);
SYSCALL_DECL(sys_renameat);
SYSCALL_DECL(sys_renameat2);
SYSCALL_DECL(sys_linkat);
SYSCALL_DECL(sys_pipe);
SYSCALL_DECL(sys_pipe2);
SYSCALL_DECL(sys_rename);
SYSCALL_DECL(sys_symlink);
SYSCALL_DECL(sys_symlinkat);
SYSCALL_DECL(sys_fadvise64);
SYSCALL_DECL(sys_setxattr);
SYSCALL_DECL(sys_lsetxattr);
SYSCALL_DECL(sys_fsetxattr);
SYSCALL_DECL(sys_getxattr);
SYSCALL_DECL(sys_lgetxattr);
SYSCALL_DECL(sys_fgetxattr);
SYSCALL_DECL(sys_listxattr);
SYSCALL_DECL(sys_llistxattr);
SYSCALL_DECL(sys_flistxattr);
SYSCALL_DECL(sys_removexattr);
SYSCALL_DECL(sys_lremovexattr);
SYSCALL_DECL(sys_fremovexattr);
SYSCALL_DECL(sys_readlink);
SYSCALL_DECL(sys_readlinkat);
SYSCALL_DECL(sys_chdir);
SYSCALL_DECL(sys_fchdir);
SYSCALL_DECL(sys_getcwd);
SYSCALL_DECL(sys_dup);
SYSCALL_DECL(sys_dup2);
SYSCALL_DECL(sys_dup3);
SYSCALL_DECL(sys_fcntl);
SYSCALL_DECL(sys_umask);
SYSCALL_DECL(sys_ioctl);
SYSCALL_DECL(sys_fsync);
SYSCALL_DECL(sys_ftruncate);

/* the smaller calls: sys_misc.c */
SYSCALL_DECL(sys_chmod);
SYSCALL_DECL(sys_fchmod);
SYSCALL_DECL(sys_fchmodat);
SYSCALL_DECL(sys_chown);
SYSCALL_DECL(sys_lchown);
SYSCALL_DECL(sys_fchown);
SYSCALL_DECL(sys_fchownat);
SYSCALL_DECL(sys_truncate);
SYSCALL_DECL(sys_sync);
SYSCALL_DECL(sys_setuid);
SYSCALL_DECL(sys_setgid);
SYSCALL_DECL(sys_getgroups);
SYSCALL_DECL(sys_clock_gettime);
SYSCALL_DECL(sys_clock_getres);
SYSCALL_DECL(sys_gettimeofday);
SYSCALL_DECL(sys_time);
SYSCALL_DECL(sys_nanosleep);
SYSCALL_DECL(sys_clock_nanosleep);
SYSCALL_DECL(sys_getrlimit);
SYSCALL_DECL(sys_setrlimit);
SYSCALL_DECL(sys_prlimit64);
SYSCALL_DECL(sys_kill);
SYSCALL_DECL(sys_tkill);
SYSCALL_DECL(sys_tgkill);
SYSCALL_DECL(sys_gettid);
SYSCALL_DECL(sys_futex);
SYSCALL_DECL(sys_rt_sigtimedwait);
SYSCALL_DECL(sys_getrandom);

/* CPU affinity and getcpu: sys_sched.c */
SYSCALL_DECL(sys_sched_setaffinity);
SYSCALL_DECL(sys_sched_getaffinity);
SYSCALL_DECL(sys_getcpu);

/* Tempest's statistics calls: sys_stats.c */
SYSCALL_DECL(sys_lockstat_reset);
SYSCALL_DECL(sys_lockstat_snapshot);
SYSCALL_DECL(sys_blkstat_snapshot);
/* Hurricane clustering's counts: sys_cluster.c */
SYSCALL_DECL(sys_cluster_stats);

/* the administrator's calls: sys_admin.c */
SYSCALL_DECL(sys_settimeofday);
SYSCALL_DECL(sys_clock_settime);
SYSCALL_DECL(sys_setreuid);
SYSCALL_DECL(sys_setregid);
SYSCALL_DECL(sys_setresuid);
SYSCALL_DECL(sys_getresuid);
SYSCALL_DECL(sys_setresgid);
SYSCALL_DECL(sys_getresgid);
SYSCALL_DECL(sys_setgroups);
SYSCALL_DECL(sys_chroot);
SYSCALL_DECL(sys_getpriority);
SYSCALL_DECL(sys_setpriority);
/* system services: sys_mount.c */
SYSCALL_DECL(sys_mount);
SYSCALL_DECL(sys_umount2);
SYSCALL_DECL(sys_statfs);
SYSCALL_DECL(sys_fstatfs);
SYSCALL_DECL(sys_mknod);
SYSCALL_DECL(sys_mknodat);
SYSCALL_DECL(sys_sysinfo);
SYSCALL_DECL(sys_syslog);
/* interval timers: sys_timer.c */
SYSCALL_DECL(sys_alarm);
SYSCALL_DECL(sys_getitimer);
SYSCALL_DECL(sys_setitimer);

/* prctl, robust lists, madvise, file times, sendfile: sys_extra.c */
SYSCALL_DECL(sys_prctl);
SYSCALL_DECL(sys_set_robust_list);
SYSCALL_DECL(sys_get_robust_list);
SYSCALL_DECL(sys_madvise);
SYSCALL_DECL(sys_mremap);
SYSCALL_DECL(sys_utimensat);
SYSCALL_DECL(sys_utimes);
SYSCALL_DECL(sys_futimesat);
SYSCALL_DECL(sys_utime);
SYSCALL_DECL(sys_sendfile);
SYSCALL_DECL(sys_splice);
SYSCALL_DECL(sys_tee);
SYSCALL_DECL(sys_vmsplice);

/* flock: reclock.c */
SYSCALL_DECL(sys_flock);

/* poll: sys_poll.c */
SYSCALL_DECL(sys_poll);
SYSCALL_DECL(sys_ppoll);
SYSCALL_DECL(sys_select);
SYSCALL_DECL(sys_pselect6);

/* sockets: kern/net/sys_socket.c */
SYSCALL_DECL(sys_socket);
SYSCALL_DECL(sys_socketpair);
SYSCALL_DECL(sys_bind);
SYSCALL_DECL(sys_listen);
SYSCALL_DECL(sys_accept);
SYSCALL_DECL(sys_accept4);
SYSCALL_DECL(sys_connect);
SYSCALL_DECL(sys_sendto);
SYSCALL_DECL(sys_recvfrom);
SYSCALL_DECL(sys_sendmsg);
SYSCALL_DECL(sys_recvmsg);
SYSCALL_DECL(sys_sendmmsg);
SYSCALL_DECL(sys_recvmmsg);
SYSCALL_DECL(sys_shutdown);
SYSCALL_DECL(sys_getsockname);
SYSCALL_DECL(sys_getpeername);
SYSCALL_DECL(sys_setsockopt);
SYSCALL_DECL(sys_getsockopt);

/* event objects: kern/event/epoll.c, eventfd.c */
SYSCALL_DECL(sys_epoll_create);
SYSCALL_DECL(sys_epoll_create1);
SYSCALL_DECL(sys_epoll_ctl);
SYSCALL_DECL(sys_epoll_wait);
SYSCALL_DECL(sys_epoll_pwait);
SYSCALL_DECL(sys_epoll_pwait2);
SYSCALL_DECL(sys_eventfd);
SYSCALL_DECL(sys_eventfd2);
SYSCALL_DECL(sys_timerfd_create);
SYSCALL_DECL(sys_timerfd_settime);
SYSCALL_DECL(sys_timerfd_gettime);
SYSCALL_DECL(sys_signalfd);
SYSCALL_DECL(sys_signalfd4);
SYSCALL_DECL(sys_timer_create);    /* sys_ptimer.c */
SYSCALL_DECL(sys_timer_settime);
SYSCALL_DECL(sys_timer_gettime);
SYSCALL_DECL(sys_timer_getoverrun);
SYSCALL_DECL(sys_timer_delete);
SYSCALL_DECL(sys_copy_file_range);     /* sys_extra.c */
SYSCALL_DECL(sys_rseq);                /* rseq.c */
SYSCALL_DECL(sys_inotify_init);        /* kern/event/inotify.c */
SYSCALL_DECL(sys_inotify_init1);
SYSCALL_DECL(sys_inotify_add_watch);
SYSCALL_DECL(sys_inotify_rm_watch);
SYSCALL_DECL(sys_sched_setparam);      /* sys_sched.c */
SYSCALL_DECL(sys_sched_getparam);
SYSCALL_DECL(sys_sched_setscheduler);
SYSCALL_DECL(sys_sched_getscheduler);
SYSCALL_DECL(sys_sched_get_priority_max);
SYSCALL_DECL(sys_sched_get_priority_min);
SYSCALL_DECL(sys_sched_rr_get_interval);
SYSCALL_DECL(sys_sched_setattr);
SYSCALL_DECL(sys_sched_getattr);

/* files and signals, the rest of issue 31's first part */
SYSCALL_DECL(sys_statx);
SYSCALL_DECL(sys_preadv);
SYSCALL_DECL(sys_pwritev);
SYSCALL_DECL(sys_preadv2);
SYSCALL_DECL(sys_pwritev2);
SYSCALL_DECL(sys_close_range);
SYSCALL_DECL(sys_faccessat2);
SYSCALL_DECL(sys_getdents);
SYSCALL_DECL(sys_rt_sigqueueinfo);
SYSCALL_DECL(sys_rt_tgsigqueueinfo);

/* features Tempest has in part or not at all, one policy each: sys_policy.c */
SYSCALL_DECL(sys_capget);
SYSCALL_DECL(sys_capset);
SYSCALL_DECL(sys_personality);
SYSCALL_DECL(sys_mlock);
SYSCALL_DECL(sys_mlock2);
SYSCALL_DECL(sys_munlock);
SYSCALL_DECL(sys_mlockall);
SYSCALL_DECL(sys_munlockall);
SYSCALL_DECL(sys_unshare);
SYSCALL_DECL(sys_setns);
SYSCALL_DECL(sys_fallocate);
SYSCALL_DECL(sys_syncfs);
SYSCALL_DECL(sys_sync_file_range);
SYSCALL_DECL(sys_readahead);

#endif
