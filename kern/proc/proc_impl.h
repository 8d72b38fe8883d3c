/*
 * What kern/proc/proc.c shares with kern/proc/jobctl.c and nothing else:
 * the process list and its lock.  Not for other subsystems, which go
 * through the functions of kern/proc/proc.h.
 */
#ifndef KERN_PROC_PROC_IMPL_H
#define KERN_PROC_PROC_IMPL_H

#include <kern/proc/proc.h>
#include <kern/lock/mutex.h>

extern struct mutex proc_lock;      /* class "proc": see proc.h's key [P] */
extern struct proc *allproc;        /* [P] every process, linked by p_next */

/* The process pid, or NULL.  Under proc_lock. */
struct proc *find_proc_locked(int pid);
/* The exit of p may orphan its own group and its children's: hang up
 * those with a stopped member.  Under proc_lock, before p's children are
 * given away (jobctl.c). */
void orphan_check_locked(struct proc *p);

#endif
