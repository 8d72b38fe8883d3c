/* The kernel profiler (kprof=on): where the clock tick finds each CPU
 * (kern/arch/kprof.c). */
#ifndef KERN_KPROF_H
#define KERN_KPROF_H

#include <kern/lib/types.h>

/* One kernel function's samples, summed over the CPUs. */
struct kprof_entry {
    uint64_t fn;                /* its start address; 0: outside the symbol table */
    uint64_t count;
};

struct kprof_totals {
    uint64_t user, kernel, lost;        /* ticks in user mode, in the kernel, not placed */
    int ncpus;                          /* CPUs with samples */
};

/* Start sampling at every CPU's tick, when booted with kprof=on (call
 * before the tick starts). */
void kprof_init(void);
bool kprof_enabled(void);
/* The tick's hook: one sample of the frame tf on this CPU (interrupts
 * off; the ktests call it with frames of their own). */
struct trapframe;
void kprof_sample(const struct trapframe *tf);
/* The samples so far, merged over the CPUs: up to max functions into out,
 * most sampled first; returns how many. */
int kprof_read(struct kprof_entry *out, int max, struct kprof_totals *t);

#endif
