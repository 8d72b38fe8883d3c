/*
 * What kern/proc/proc.c shares with kern/proc/jobctl.c and
 * kern/proc/wait.c and nothing else: the process list and its lock, and
 * the reaping of a zombie.  Not for other subsystems, which go through
 * the functions of kern/proc/proc.h.
 */
#ifndef KERN_PROC_PROC_IMPL_H
#define KERN_PROC_PROC_IMPL_H

#include <kern/proc/proc.h>
#include <kern/lock/mutex.h>

extern struct mutex proc_lock;      /* class "proc": see proc.h's key [P] */
extern struct proc *allproc;        /* [P] every process, linked by p_next */

/* A free id for a process or thread; is tid some live thread's?  The
 * thread tid (not of a zombie), or NULL.  Under proc_lock. */
int alloc_pid(void);
/* Set p's nice value and its threads' (kern/proc/sys_schedpolicy.c);
 * proc_lock held. */
void proc_set_nice_locked(struct proc *p, int nice);
bool tid_in_use_locked(int tid);
struct lwp *lwp_find_locked(int tid);
/* p's thread tid, or NULL.  Under proc_lock. */
struct lwp *lwp_of_tid_locked(const struct proc *p, int tid);
/* Add l to p's threads (kern/proc/lwp.c).  Under proc_lock. */
void lwp_link_locked(struct proc *p, struct lwp *l);
/* A new thread's first return to user mode, with tf (kern/proc/lwp.c);
 * never returns. */
void lwp_enter_user(struct lwp *l, struct trapframe *tf) __noreturn;
/* An exited thread (not its process's last) for the reaper to join and
 * free.  Under proc_lock. */
void reap_lwp_locked(struct lwp *l);
/* The last thread of the calling process ends it: never returns. */
void proc_exit_last(int status) __noreturn;
/* May process from send a signal to process to (kill's rule)? */
bool proc_may_signal(const struct proc *from, const struct proc *to);

/* The process pid, or NULL.  Under proc_lock. */
struct proc *find_proc_locked(int pid);
/* The exit of p may orphan its own group and its children's: hang up
 * those with a stopped member.  Under proc_lock, before p's children are
 * given away (jobctl.c). */
void orphan_check_locked(struct proc *p);

/* Take a zombie (or a process that never ran) off the process list and
 * its parent's children, before it is freed.  Under proc_lock. */
void proc_unlink_locked(struct proc *p);
/* Wait until p's thread is finished and off its CPU, and free it: after
 * this nothing charges p any more time.  p is unlinked and no /proc
 * reader holds it (proc_wait_unheld_locked); no lock is taken. */
void proc_join(struct proc *p);
/* Under proc_lock, p unlinked: wait until no /proc reader holds p (the
 * lock is let go while waiting).  No new one can come: p cannot be found. */
void proc_wait_unheld_locked(struct proc *p);
/* Free an unlinked process, once no /proc reader holds it. */
void proc_free(struct proc *p);
/* The same when the caller has already waited (proc_wait_unheld_locked):
 * no lock is taken. */
void proc_free_unheld(struct proc *p);
/* A CPU-time counter (cycles), read while its process may still add. */
uint64_t load_cycles(const uint64_t *c);
/* siginfo's si_code and si_status for an exit's wait status. */
int cld_code(int status);
int cld_status(int status);

#endif
