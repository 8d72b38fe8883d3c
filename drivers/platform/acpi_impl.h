/*
 * Inside the ACPI parser: what drivers/platform/acpi.c (the table walk)
 * and drivers/platform/acpi_tables.c (the parsers of the tables it finds)
 * share.  Not for other files, which use drivers/platform/acpi.h.
 */
#ifndef DRIVERS_PLATFORM_ACPI_IMPL_H
#define DRIVERS_PLATFORM_ACPI_IMPL_H

#include <drivers/platform/acpi.h>

#define HDR_LEN             36          /* the common system description header */

/* Little-endian unaligned reads: tables have no alignment guarantees. */
static inline uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t rd32(const uint8_t *p) { return rd16(p) | (uint32_t)rd16(p + 2) << 16; }
static inline uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* One acpi_parse(): how to reach memory, and where the results go. */
struct ctx {
    acpi_map_fn map;
    struct acpi_info *ai;
};

/* Report one firmware problem: print it and count it in ai->nproblems
 * (acpi.c). */
void problem(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Map and check the table at phys that should carry signature sig and be
 * at least minlen bytes long.  Returns the whole table, or NULL after
 * reporting why it is unusable (acpi.c).
 */
const uint8_t *get_table(struct ctx *c, uint64_t phys, const char *sig, uint32_t minlen);

/* The parsers (acpi_tables.c), each given the physical address of its
 * table as the root lists it.  parse_fadt also reads the DSDT it names;
 * parse_slit needs parse_srat's nodes, so it comes after it. */
void parse_madt(struct ctx *c, uint64_t phys);
void parse_srat(struct ctx *c, uint64_t phys);
void parse_slit(struct ctx *c, uint64_t phys);
void parse_fadt(struct ctx *c, uint64_t phys);
void parse_hpet(struct ctx *c, uint64_t phys);

#endif
