/* I/O APICs: routing of device interrupts (GSIs) to CPUs. */
#ifndef DRIVERS_IOAPIC_H
#define DRIVERS_IOAPIC_H

#include <kern/lib/types.h>

struct acpi_info;

/* Mask every pin of every I/O APIC and the legacy 8259 PICs. */
void ioapic_init(const struct acpi_info *ai);
/* Route ISA irq (after ACPI overrides) or GSI to vector on the CPU with
 * apic_id.  Returns false if no I/O APIC serves it. */
bool ioapic_route_isa(int irq, int vector, uint32_t apic_id);
bool ioapic_route_gsi(uint32_t gsi, int vector, uint32_t apic_id, bool level, bool active_low);
int ioapic_count(void);

#endif
