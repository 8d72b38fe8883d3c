/* Multiprocessor bring-up and cross-CPU calls. */
#ifndef KERN_SMP_H
#define KERN_SMP_H

#include <kern/lib/types.h>

/* Start every processor the MADT lists; returns how many are online. */
int smp_start_aps(void);

/* Run fn(arg) on every online CPU (the caller included) and wait for all.
 * On other CPUs fn runs from the VEC_CALL interrupt with interrupts off. */
void smp_call_all(void (*fn)(void *), void *arg);
/* Run fn(arg) on one CPU and wait. */
void smp_call_one(int cpu, void (*fn)(void *), void *arg);

/* Per-CPU setup shared by the boot CPU and the APs. */
void cpu_features_init(void);

#define TICK_HZ 100

#endif
