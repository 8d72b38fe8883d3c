/* Local APIC (xAPIC or x2APIC), IPIs and the per-CPU timer. */
#ifndef DRIVERS_LAPIC_H
#define DRIVERS_LAPIC_H

#include <kern/lib/types.h>

void lapic_init(paddr_t phys);      /* on each CPU */
bool lapic_ready(void);
bool lapic_x2apic(void);
uint32_t lapic_id(void);
void lapic_eoi(void);
void lapic_send_ipi(uint32_t apic_id, int vector);
void lapic_send_ipi_all_but_self(int vector);
/* An NMI to one CPU (pvspin's kick: it ends a halt with interrupts off). */
void lapic_send_nmi(uint32_t apic_id);
void lapic_send_init(uint32_t apic_id);
void lapic_send_sipi(uint32_t apic_id, int page);

/* Calibrate the timer against the reference clock (boot CPU, once). */
void lapic_timer_calibrate(void);
/* Put the calling CPU's timer in one-shot mode (VEC_TIMER), not yet armed. */
void lapic_timer_oneshot(void);
/* Interrupt the calling CPU once, ns nanoseconds from now (not sooner);
 * a new arming replaces the one pending. */
void lapic_timer_arm(uint64_t ns);

#endif
