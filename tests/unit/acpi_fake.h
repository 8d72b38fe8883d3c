/*
 * Fake firmware for the ACPI unit tests: a fake physical memory, a builder
 * for ACPI tables (RSDP, XSDT/RSDT, FADT, DSDT, MADT, HPET, SRAT, SLIT)
 * shaped by a struct machine, and the machine presets the tests start from.
 * Shared by test_acpi.c (good tables) and test_acpi_bad.c (broken ones).
 *
 * The map callback hands the parser a fresh malloc'd copy of exactly the
 * bytes it asked for, so with -fsanitize=address any read past a mapped
 * range is caught.
 */
#ifndef TESTS_UNIT_ACPI_FAKE_H
#define TESTS_UNIT_ACPI_FAKE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <drivers/platform/acpi.h>
#include <kern/arch/numa.h>

#define PHYS_SIZE   (2u << 20)
#define TABLE_BASE  0x100000u       /* tables are built from here up */
#define RSDP_ADDR   0xE0010u        /* in the BIOS area, so the scan finds it */
#define MiB (1ULL << 20)

#define MAXC 80

struct machine {
    int ncpus;
    uint32_t apic[MAXC];
    uint32_t dom[MAXC];
    bool x2apic;                /* MADT type 9 and SRAT type 2 entries */
    int nmem;
    struct { uint64_t base, len; uint32_t dom, flags; } mem[70];
    int slit_n;                 /* 0: no SLIT */
    uint8_t slit[16][16];
    bool no_srat, no_hpet, no_fadt;
    bool lapic64;               /* add a type 5 local APIC address override */
    int srat_rev;
    int fadt_rev;               /* 1: 116 bytes; 3: 244 bytes with X_DSDT and X_PM1 */
    const uint8_t *aml;         /* DSDT body; NULL for a default _S5_ */
    size_t aml_len;
};

extern uint8_t *phys;
extern uint64_t next_free;
void *map_phys(uint64_t pa, size_t len);
void phys_reset(void);
extern uint64_t cur;            /* the table being built */
extern uint32_t cur_len;
void put8(uint8_t v);
void put16(uint16_t v);
void put32(uint32_t v);
void put64(uint64_t v);
void putn(const void *p, size_t n);
void pad(size_t n);
uint8_t sum8(const uint8_t *p, size_t n);
void tb_begin(const char *sig, uint8_t rev);
void fix_sum(uint64_t t);
uint64_t tb_end(void);
void poke32(uint64_t pa, uint32_t v);
extern uint64_t t_rsdp, t_rsdt, t_xsdt, t_fadt, t_dsdt, t_madt, t_hpet, t_srat, t_slit;
extern const uint8_t default_aml[];
uint64_t build_dsdt(const struct machine *m);
uint64_t build_fadt(const struct machine *m);
uint64_t build_madt(const struct machine *m);
uint64_t build_hpet(void);
uint64_t build_srat(const struct machine *m);
uint64_t build_slit(const struct machine *m);
uint64_t build_root(const char *sig, const uint64_t *t, int n, int esize);
void build_rsdp(uint8_t rev);
uint64_t build(const struct machine *m, uint8_t rsdp_rev);
extern struct acpi_info ai;
int parse(uint64_t rsdp);
void machine_default(struct machine *m);
void machine_hector(struct machine *m);
extern const struct mmap_range usable_512m[];

#endif
