/* Reference clocks: HPET when the ACPI tables list one, else the PIT.
 * Used to calibrate the TSC and the local APIC timer. */
#ifndef DRIVERS_TIMER_H
#define DRIVERS_TIMER_H

#include <kern/lib/types.h>

void clock_init(paddr_t hpet_phys);     /* boot CPU, once */
const char *clock_source(void);
/* Busy-wait for about us microseconds on the reference clock. */
void clock_spin_us(uint64_t us);

extern uint64_t tsc_hz;                 /* calibrated TSC frequency */
uint64_t tsc_to_ns(uint64_t cycles);
/* Busy-wait on the TSC (after calibration). */
void delay_us(uint64_t us);
/* Nanoseconds since the TSC was calibrated. */
uint64_t uptime_ns(void);

#endif
