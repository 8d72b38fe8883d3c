/* The scheduler: run queues (global, per-CPU, clustered) and switching. */
#ifndef KERN_SCHED_SCHED_H
#define KERN_SCHED_SCHED_H

#include <kern/sched/thread.h>

/* Boot: build the run queues for opts.sched and the clusters. */
void sched_init(void);
/* The process layer's part of every context switch (user_switch: CPU time,
 * user SSE state, the kernel stack for traps, the address space), called
 * with the CPU's run state updated, just before the switch.  Registered
 * once at boot, before the first switch (user_mode_init). */
struct cpu;
void sched_set_switch_hook(void (*hook)(struct cpu *c, struct thread *prev, struct thread *next));

/* Scheduling classes (kern/sched/class.c).  Boot: the classes' tick. */
void sched_class_init(void);
/* t's dispatch priority now (its time-sharing usage decayed first). */
int sched_priority(struct thread *t);
/* A new thread's class and usage, from the thread that made it (fork's
 * child or a new thread of the process): SCHED_RESET_ON_FORK applied. */
void sched_inherit(struct thread *child, const struct thread *parent);
/* Give t new scheduling parameters (the caller holds proc_lock and t stays
 * valid): a queued t is queued again at its new priority, and a running
 * one is asked to yield so the dispatcher weighs it again. */
void sched_set_params(struct thread *t, const struct sched_params *sp);

/* Put a thread that is not on any queue onto one and wake a CPU for it. */
void sched_make_runnable(struct thread *t);

/* Switch away from the current thread, whose state the caller has set
 * (TS_SLEEPING: it is on a sleep queue; TS_RUNNABLE: it is on a run queue;
 * TS_DEAD).  SVR4 mutexes the thread holds are released before the switch
 * and reacquired before this returns. */
void sched_block(void);

/* Cluster of a CPU, and the CPUs of a cluster (for affinity). */
int sched_cluster_of(int cpu);
uint64_t sched_cluster_mask(int cluster);
int sched_nclusters(void);

/* The CPUs that are online, as an affinity mask. */
uint64_t sched_online_mask(void);

/* Restrict thread t to the CPUs in mask (online, not empty: the caller
 * checks).  The calling thread itself moves to an allowed CPU before this
 * returns; another thread waiting on a run queue is queued again by the
 * new mask, and one running or asleep moves when it next switches. */
void sched_set_affinity(struct thread *t, uint64_t mask);

/* Counters for tests and benchmarks. */
uint64_t sched_steals(void);

/* Threads running on a CPU (idle threads not counted) or waiting on a
 * run queue, now; a racy count, for the load average. */
int sched_nr_running(void);

/* Statistics from the clock tick (kern/sched/schedstat.c): the ticks
 * (TICK_HZ a second) each CPU spent in each state, and the load average
 * (1, 5 and 15 minutes) in fixed point with shift bits of fraction. */
enum { CPU_TICK_USER, CPU_TICK_SYSTEM, CPU_TICK_IDLE, CPU_TICK_KINDS };
void schedstat_init(void);
uint64_t sched_cpu_ticks(int cpu, int kind);
void sched_loadavg(uint64_t out[3], unsigned shift);

/* Hooks for the mutex code (kern/lock/mutex.c): release every mutex the current
 * thread holds, remembering them in *sv, and reacquire them afterwards. */
struct mutex_saved;
void mutex_release_all(struct mutex_saved *sv);
void mutex_reacquire_all(struct mutex_saved *sv);

#endif
