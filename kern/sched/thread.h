/*
 * Kernel threads.  See kern/sched/sched.c for the theory of scheduling and
 * the run-queue models.
 *
 * Lock key for struct thread fields:
 *   [c] constant after thread_create
 *   [o] only the thread itself touches it (or its creator before start)
 *   [q] the lock of the run queue the thread is on
 *   [s] the sleep-queue bucket lock of the thread's wait channel
 *   [a] atomic operations
 *   [T] thread_list_lock (kern/sched/thread.c)
 *   [p] written by the process layer under its proc_lock (kern/proc);
 *       read without a lock
 */
#ifndef KERN_SCHED_THREAD_H
#define KERN_SCHED_THREAD_H

#include <kern/lib/types.h>
#include <kern/lock/lock.h>
#include <kern/vm/page.h>

enum thread_state {
    TS_EMBRYO,          /* being created */
    TS_RUNNABLE,        /* on a run queue, or about to be */
    TS_RUNNING,         /* on a CPU */
    TS_SLEEPING,        /* on a sleep queue */
    TS_DEAD,            /* exited; its stack may be reclaimed */
};

#define THREAD_NAME_MAX 24

/* Scheduling policies, Linux's numbers (kern/sched/class.c). */
#define SCHED_OTHER     0
#define SCHED_FIFO      1
#define SCHED_RR        2
#define SCHED_BATCH     3
#define SCHED_IDLE      5

/* Dispatch priorities, higher first (kern/sched/class.c): time sharing
 * 0..PRI_TS_MAX, real time PRI_RT_BASE + 1..99. */
#define PRI_TS_MAX      63
#define PRI_RT_BASE     64
#define NPRI            (PRI_RT_BASE + 100)
#define RR_TICKS        10      /* SCHED_RR's quantum: 100 ms, as Linux's */

static inline bool sched_policy_rt(int policy)
{
    return policy == SCHED_FIFO || policy == SCHED_RR;
}

/* A thread's scheduling class and parameters (sched_setscheduler, nice). */
struct sched_params {
    uint8_t policy;             /* SCHED_OTHER ... SCHED_IDLE */
    uint8_t rt_prio;            /* 1..99 for SCHED_FIFO and SCHED_RR, else 0 */
    int8_t nice;                /* -20..19 */
    bool reset_on_fork;         /* SCHED_RESET_ON_FORK */
};

struct runq;
struct sleepq;
struct lwp;

struct thread {
    uint64_t rsp;                   /* [o] saved stack pointer while switched out */
    void *kstack;                   /* [c] base of the kernel stack (NULL: boot stack) */
    int tid;                        /* [c] */
    char name[THREAD_NAME_MAX];     /* [c] */
    volatile int state;             /* [q]/[s]: enum thread_state */
    volatile int on_cpu;            /* [a] 1 from switch-in until switch-out completes */
    int cpu;                        /* [o] CPU it runs or last ran on */
    uint64_t affinity;              /* [a] mask of CPUs it may run on (sched_set_affinity) */
    bool idle;                      /* [c] a CPU's idle thread */
    struct mempolicy mempolicy;     /* [o] where its user pages come from (set_mempolicy;
                                       new threads and forks copy it, exec keeps it) */

    /* Scheduling (kern/sched/class.c): the class and its parameters, the
     * priority it was queued at (or runs at), and what decides the next. */
    struct sched_params sp;         /* [p] */
    int pri;                        /* [q] written when queued; read racily */
    int rr_left;                    /* [o] SCHED_RR: ticks left of its quantum */
    uint32_t ts_usage;              /* [o] time sharing: recent ticks run, halved each second */
    uint32_t ts_second;             /* [o] the uptime second ts_usage was last halved at */

    struct thread *rq_next;         /* [q] run queue link */
    struct runq *rq;                /* [q] queue it is on, or NULL */
    bool rq_pinned;                 /* [q] bound to its queue's CPU alone when queued */

    void *wchan;                    /* [s] wait channel while sleeping */
    struct thread *sq_next, *sq_prev;   /* [s] sleep queue links */

    struct held_locks held;         /* [o] locks held, in order */

    void (*fn)(void *);             /* [c] */
    void *arg;                      /* [c] */
    volatile int done;              /* [a] set when fn returned */
    uint64_t switches;              /* [o] times switched in */
    uint64_t last_ran_mask;         /* [a] CPUs it has run on (tests) */

    struct thread *all_next, *all_prev; /* [T] every thread, for thread_dump_all */

    /* User mode (kern/proc/): the process, its address space (loaded by
     * the context switch) and the user FS base. */
    struct proc *proc;              /* [o] NULL for a kernel thread */
    struct lwp *lwp;                /* [o] its part of the process (kern/proc/lwp.c), or NULL */
    struct as *as;                  /* [o] NULL: the kernel's tables alone */
    uint64_t fs_base;               /* [o] */
    /* ptrace: stop at each system call's entry and exit (PTRACE_SYSCALL);
     * written by the tracer under proc_lock while the thread is stopped
     * (kern/proc/ptrace.c), read by the thread itself. */
    bool ptrace_syscalls;
    /* Work due before the thread returns to user mode (THREAD_AST_*): set
     * by anyone with thread_ast_post, taken by the thread itself on its
     * way out, so that the exit of a system call or trap tests one word
     * (kern/proc/syscall.c, user_ast). */
    uint32_t ast;                   /* [a] */
};

#define THREAD_AST_PREEMPT  0x1     /* the clock ticked: yield the CPU */
#define THREAD_AST_SIGNAL   0x2     /* a signal, a kill, an exit or a stop may be due */
#define THREAD_AST_RSEQ     0x4     /* switched in: its rseq ids to update (kern/proc/rseq.c) */

/* Ask t to do the work of bits before its next return to user mode. */
static inline void thread_ast_post(struct thread *t, uint32_t bits)
{
    __atomic_or_fetch(&t->ast, bits, __ATOMIC_SEQ_CST);
}

/* The thread running on this CPU. */
static inline struct thread *curthread(void)
{
    return this_cpu()->thread;
}

#define AFFINITY_ALL (~0UL)

/* The lowest-numbered CPU in an affinity mask (0 for an empty mask). */
static inline int affinity_first_cpu(uint64_t mask)
{
    return mask ? __builtin_ctzl(mask) : 0;
}

/* Create a thread that runs fn(arg), allowed on the CPUs in affinity, and
 * make it runnable.  NULL when memory is exhausted. */
struct thread *thread_create(const char *name, void (*fn)(void *), void *arg, uint64_t affinity);
/* The same, but the thread stays an embryo (TS_EMBRYO: on no queue, never
 * run) until thread_run: its creator can publish it first, without a lock
 * that the new thread would have to take to wait for that. */
struct thread *thread_create_embryo(const char *name, void (*fn)(void *), void *arg,
                                    uint64_t affinity);
void thread_run(struct thread *t);
/* Wait until t has finished, then free it. */
void thread_join(struct thread *t);
/* Print every thread: state, CPU, wait channel, held locks and, for
 * threads not on a CPU, a backtrace from their saved frame.  Called on the
 * panic path (panic_hung) with the other CPUs stopped; it takes no lock. */
void thread_dump_all(void);
/* Give up the CPU to another runnable thread, if any. */
void thread_yield(void);
/* Finish the calling thread. */
void thread_exit(void) __noreturn;

/* Boot: turn the boot context into thread "main" on CPU 0, and give each
 * CPU an idle thread. */
void thread_init_boot(void);
/* On each AP: the AP's start-up context becomes its idle thread. */
void thread_init_ap(void);

/* The idle loop a CPU's idle thread runs. */
void thread_idle_loop(void) __noreturn;

#endif
