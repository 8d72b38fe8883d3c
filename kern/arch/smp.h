/* Multiprocessor bring-up and cross-CPU calls. */
#ifndef KERN_SMP_H
#define KERN_SMP_H

#include <kern/lib/types.h>

struct cpu;
struct trapframe;

/* How an application processor starts: the page-table root to load, a
 * stack for it from its node (the top; never fails), and its entry, which
 * runs on that stack with the CPU's struct, calls smp_mark_online once it
 * can take cross-CPU calls, and never returns. */
struct ap_boot {
    uint64_t cr3;
    void *(*stack_top)(int node);
    void (*main)(struct cpu *c) __noreturn;
};

/* How many of the found processors to use: all of them, or the first max
 * when 0 < max < found (the maxcpus= option), said on the console.  The
 * rest are never started: the caller makes the result the machine's CPU
 * count before anything sizes per-CPU state by it. */
int smp_cpus_to_use(int found, int max);
/* How many processors this build uses: smp_cpus_to_use's answer, but the
 * uniprocessor build (make UP=1, TEMPEST_UP) uses the boot CPU alone,
 * whatever the machine has, and says so in a line of its own. */
int smp_build_cpus(int found, int maxcpus);
/* Start every processor the MADT lists; returns how many are online. */
int smp_start_aps(const struct ap_boot *boot);
/* An AP's entry: this CPU is online. */
void smp_mark_online(struct cpu *c);

/* The clock tick's hook (every CPU, every tick, interrupts off).  One,
 * registered at boot before the tick starts: the ktest watchdog's. */
void smp_set_tick_hook(void (*hook)(const struct trapframe *tf));
/* More tick hooks (every CPU, every tick, interrupts off, after the hook
 * above): the statistics' and the profiler's.  At
 * most SMP_TICK_HOOKS, added at boot before the tick starts, called in
 * the order added; false when the table is full. */
#define SMP_TICK_HOOKS 6
bool smp_add_tick_hook(void (*hook)(const struct trapframe *tf));

/* The timer events' hook (kern/sched/callout.c): on every timer interrupt
 * of every CPU, after the tick's hooks when it is a tick, it runs what is
 * due at now and returns when its next event is due (UINT64_MAX: none).
 * Set once at boot before the timers start. */
void smp_set_timer_event_hook(uint64_t (*hook)(uint64_t now));
/* A timer event of this CPU is now due at `when` (uptime_ns): bring the
 * timer interrupt forward if it is earlier than the one armed.  With
 * interrupts off. */
void smp_timer_event_armed(uint64_t when);
/* Start the calling CPU's clock: its tick, then its timer events. */
void smp_timer_start(void);

/* Run fn(arg) on every online CPU (the caller included) and wait for all.
 * On other CPUs fn runs from the VEC_CALL interrupt with interrupts off. */
void smp_call_all(void (*fn)(void *), void *arg);
/* Run fn(arg) on one CPU and wait. */
void smp_call_one(int cpu, void (*fn)(void *), void *arg);

/* Per-CPU setup shared by the boot CPU and the APs: SSE for user programs. */
void cpu_features_init(void);

#define TICK_HZ 100

#endif
