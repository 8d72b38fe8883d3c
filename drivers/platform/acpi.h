/*
 * ACPI table discovery: what the firmware says about CPUs, interrupt
 * controllers, timers, NUMA affinity, distances and power off.
 *
 * acpi_parse() is pure: it reaches physical memory only through the map
 * callback it is given, so the same code runs in the kernel (map =
 * phys_to_virt) and in the host unit tests (map = a lookup into a
 * synthetic buffer).  Every table is checked (signature, length, checksum,
 * entry sizes); a bad one is reported on the console and ignored, never
 * trusted in part.
 */
#ifndef DRIVERS_ACPI_H
#define DRIVERS_ACPI_H

#include <kern/lib/types.h>

#define ACPI_MAX_CPUS       64      /* enabled CPUs kept from the MADT */
#define ACPI_MAX_NODES      64      /* distinct SRAT proximity domains */
#define ACPI_MAX_MEMRANGES  64      /* enabled SRAT memory ranges */
#define ACPI_MAX_IOAPICS    8
#define ACPI_MAX_OVERRIDES  16
#define ACPI_MAX_NMIS       16
#define ACPI_MAX_SRAT_CPUS  256     /* SRAT CPU entries (may exceed the MADT's) */
#define ACPI_MAX_DOMAIN     255     /* larger proximity domain numbers are garbage */

#define ACPI_NMI_ALL_CPUS   0xFFFFFFFFu /* nmi[].uid meaning "every processor" */

/* Interrupt source override / NMI flags (MPS INTI flags). */
#define ACPI_INTI_POLARITY_MASK   0x3   /* 0 bus default, 1 active high, 3 active low */
#define ACPI_INTI_TRIGGER_MASK    0xC   /* 0 bus default, 4 edge, 0xC level */

/* Where the fields come from, and what they hold when a table is missing. */
struct acpi_info {
    /* RSDP */
    uint8_t  rsdp_revision;     /* 0 = ACPI 1.0 (RSDT only), >= 2 has an XSDT */
    bool     used_xsdt;         /* the root table walked was the XSDT */

    /* MADT.  Without a valid MADT ncpus is 0 and the kernel should run on
     * the boot CPU alone; lapic_phys still holds the architectural default. */
    bool     have_madt;
    bool     pcat_compat;       /* dual 8259 PICs present: mask them */
    uint64_t lapic_phys;        /* local APIC base (0xFEE00000 by default) */
    int      ncpus;             /* enabled CPUs, in MADT order; logical cpu i = cpu[i] */
    struct {
        uint32_t apic_id;       /* xAPIC or x2APIC id */
        uint32_t uid;           /* ACPI processor UID (matches NMI entries) */
        bool     x2apic;        /* came from a local x2APIC entry */
    } cpu[ACPI_MAX_CPUS];
    int      nioapics;
    struct {
        uint8_t  id;
        uint64_t phys;          /* register window base */
        uint32_t gsi_base;      /* first global system interrupt it serves */
    } ioapic[ACPI_MAX_IOAPICS];
    int      noverrides;        /* ISA IRQ -> GSI remaps (e.g. IRQ0 -> GSI2) */
    struct {
        uint8_t  irq;           /* ISA source IRQ */
        uint32_t gsi;
        uint16_t flags;         /* ACPI_INTI_* */
    } override[ACPI_MAX_OVERRIDES];
    int      nnmis;             /* local APIC NMI inputs */
    struct {
        uint32_t uid;           /* processor UID or ACPI_NMI_ALL_CPUS */
        uint16_t flags;         /* ACPI_INTI_* */
        uint8_t  lint;          /* LINT0 or LINT1 */
    } nmi[ACPI_MAX_NMIS];

    /* HPET */
    uint64_t hpet_phys;         /* 0 when there is no (valid) HPET */

    /* FADT and the \_S5_ package from the DSDT */
    bool     have_fadt;
    uint16_t pm1a_cnt, pm1b_cnt;    /* PM1 control block I/O ports; 0 = absent */
    uint16_t smi_cmd;               /* port that switches to ACPI mode; 0 = none */
    uint8_t  acpi_enable;           /* value to write there */
    uint64_t dsdt_phys;             /* 0 when none */
    bool     have_s5;
    uint16_t slp_typa, slp_typb;    /* SLP_TYP values for S5 (soft off) */

    /* SRAT.  Proximity domains are renumbered densely: node n is the n-th
     * smallest domain mentioned by an enabled entry (domain_of_node[n]).
     * Without a valid SRAT have_srat is false and nnodes is 0. */
    bool     have_srat;
    int      nnodes;
    uint32_t domain_of_node[ACPI_MAX_NODES];
    int      srat_ncpus;
    struct {
        uint32_t apic_id;
        uint32_t domain;        /* as the firmware numbers it */
        int      node;          /* dense node number */
    } srat_cpu[ACPI_MAX_SRAT_CPUS];
    int      nmem;
    struct {
        uint64_t base, len;
        uint32_t domain;
        int      node;
        bool     hotplug;       /* hot-pluggable range, maybe not present now */
    } mem[ACPI_MAX_MEMRANGES];

    /* SLIT, already remapped to dense nodes: slit[a][b] for a, b < slit_n.
     * Only kept when it covers every SRAT domain, so slit_n == nnodes. */
    bool     have_slit;
    int      slit_n;
    uint8_t  slit[ACPI_MAX_NODES][ACPI_MAX_NODES];

    /* How many problems were reported (each printed once as "acpi: ...").
     * A healthy machine's tables give 0. */
    int      nproblems;
};

/* Map len bytes at physical address phys, or return NULL if that range
 * cannot be (or must not be) touched. */
typedef void *(*acpi_map_fn)(uint64_t phys, size_t len);

/*
 * Fill *out from the tables.  The RSDP is rsdp_copy when not NULL (the copy
 * inside a Multiboot2 tag 14 or 15), else the one at physical rsdp_phys.
 * Returns 0 when a valid RSDP and root table were found, -1 otherwise;
 * either way *out is fully initialised and usable.
 */
int acpi_parse(uint64_t rsdp_phys, const void *rsdp_copy, acpi_map_fn map,
               struct acpi_info *out);

/* Scan the EBDA's first KiB and 0xE0000-0xFFFFF for a valid RSDP;
 * returns its physical address or 0. */
uint64_t acpi_find_rsdp(acpi_map_fn map);

/* Dense node of a firmware proximity domain, or -1 if the SRAT has none. */
int acpi_node_of_domain(const struct acpi_info *ai, uint32_t domain);

/* Dense node the SRAT gives a CPU (by APIC id), or -1 if it is not listed. */
int acpi_node_of_apic(const struct acpi_info *ai, uint32_t apic_id);

/* Find \_S5_ in an AML byte stream; 0 and the two SLP_TYP values on success. */
int acpi_find_s5(const uint8_t *aml, size_t len, uint16_t *typa, uint16_t *typb);

#ifndef ACPI_HOST_TEST
/* The kernel's copy of the tables, filled once by acpi_init() on the boot
 * CPU before other CPUs start and read-only afterwards. */
extern struct acpi_info acpi;

/* Parse the tables (rsdp_copy from the Multiboot2 tag, or NULL to scan the
 * BIOS area), print a one-line summary, never panic. */
void acpi_init(const void *rsdp_copy);

/* Enter S5 through the FADT's PM1 control ports; if that does not turn
 * the machine off, try the QEMU/Bochs legacy ports.  Returns only if
 * everything failed. */
void acpi_poweroff(void);
#endif

#endif
