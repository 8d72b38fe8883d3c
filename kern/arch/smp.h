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

/* Start every processor the MADT lists; returns how many are online. */
int smp_start_aps(const struct ap_boot *boot);
/* An AP's entry: this CPU is online. */
void smp_mark_online(struct cpu *c);

/* The clock tick's hook (every CPU, every tick, interrupts off).  One,
 * registered at boot before the tick starts: the ktest watchdog's. */
void smp_set_tick_hook(void (*hook)(const struct trapframe *tf));
/* A second hook, called on every tick after the first: the callouts'
 * (kern/sched/callout.c).  Set once at boot, before the tick starts. */
void smp_set_tick_hook2(void (*hook)(const struct trapframe *tf));

/* Run fn(arg) on every online CPU (the caller included) and wait for all.
 * On other CPUs fn runs from the VEC_CALL interrupt with interrupts off. */
void smp_call_all(void (*fn)(void *), void *arg);
/* Run fn(arg) on one CPU and wait. */
void smp_call_one(int cpu, void (*fn)(void *), void *arg);

/* Per-CPU setup shared by the boot CPU and the APs: SSE for user programs. */
void cpu_features_init(void);

#define TICK_HZ 100

#endif
