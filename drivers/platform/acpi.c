/*
 * ACPI static table parser: the table walk, and the theory of the whole.
 *
 * Theory.  The firmware describes the machine in a tree of tables: the
 * RSDP points at a root table (the XSDT with 64-bit pointers, or the older
 * RSDT with 32-bit ones), and the root lists the others by physical
 * address.  We read the five that matter to us: the MADT (CPUs, IOAPICs,
 * ISA interrupt overrides, NMI wiring), the SRAT (which proximity domain
 * every CPU and memory range belongs to), the SLIT (distances between
 * domains), the FADT (PM1 control ports and the DSDT, whose \_S5_ package
 * gives the soft-off sleep type) and the HPET (its register base).
 *
 * Firmware tables are input, not truth: every table's signature, length
 * and checksum are checked, and every sub-entry's length, before anything
 * is believed.  A table that fails any check is reported once on the
 * console ("acpi: SRAT checksum bad, ignoring it") and ignored as a whole,
 * so later code never sees half of a table.  Memory is touched only
 * through the map callback, which may refuse an address; that is also
 * what lets tests/unit run this file on the host against synthetic tables.
 *
 * SRAT proximity domains may be sparse (0 and 5, say).  We renumber them
 * densely in ascending order (node 0 = smallest domain) and remap the
 * SLIT, which is indexed by domain, to those node numbers.
 *
 * Files.  This file is the walk: it finds the RSDP (in the Multiboot2
 * copy or the BIOS area), chooses the XSDT or the RSDT, maps and checks
 * each table's header and checksum (get_table), notes the first of each
 * table we want and hands it to its parser; it also holds the node
 * look-ups and the kernel side (acpi_init, the summary line, power off
 * through the FADT's PM1 ports).  The parsers of the tables themselves
 * (MADT, SRAT, SLIT, FADT with the DSDT's \_S5_, HPET) and the entry
 * checks of the MADT and SRAT are drivers/platform/acpi_tables.c; what
 * the two files share (the parse context, problem, get_table, the
 * little-endian reads) is declared in drivers/platform/acpi_impl.h.
 */
#include <drivers/platform/acpi.h>
#include <drivers/platform/acpi_impl.h>
#include <kern/lib/kprintf.h>
#ifdef ACPI_HOST_TEST
#include <string.h>
#else
#include <kern/lib/string.h>
#include <kern/arch/arch.h>
#endif

#define MAX_TABLE_LEN       (4u << 20)  /* a longer table is garbage */
#define RSDP_V1_LEN         20
#define RSDP_V2_LEN         36
#define DEFAULT_LAPIC       0xFEE00000u

static uint8_t checksum(const uint8_t *p, size_t n)
{
    uint8_t sum = 0;
    while (n--)
        sum += *p++;
    return sum;
}

/* Report one firmware problem. */
void problem(struct ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vkprintf(fmt, ap);
    va_end(ap);
    c->ai->nproblems++;
}

/* A printable copy of a 4-byte signature, for messages. */
static void sig_str(char out[5], const uint8_t *sig)
{
    for (int i = 0; i < 4; i++)
        out[i] = sig[i] >= 0x20 && sig[i] < 0x7F ? (char)sig[i] : '?';
    out[4] = 0;
}

/* The name we print for a table: its usual name, not always its signature. */
static const char *table_name(const char *sig)
{
    if (memcmp(sig, "APIC", 4) == 0)
        return "MADT";
    if (memcmp(sig, "FACP", 4) == 0)
        return "FADT";
    return sig;
}

/*
 * Map and check the table at phys that should carry signature sig and be
 * at least minlen bytes long.  Returns the whole table, or NULL after
 * reporting why it is unusable.
 */
const uint8_t *get_table(struct ctx *c, uint64_t phys, const char *sig, uint32_t minlen)
{
    const char *name = table_name(sig);
    const uint8_t *h = phys ? c->map(phys, HDR_LEN) : NULL;
    char got[5];
    if (!h) {
        problem(c, "acpi: %s at 0x%lx cannot be mapped, ignoring it\n", name, phys);
        return NULL;
    }
    if (memcmp(h, sig, 4) != 0) {
        sig_str(got, h);
        problem(c, "acpi: %s at 0x%lx has signature '%s', ignoring it\n", name, phys, got);
        return NULL;
    }
    uint32_t len = rd32(h + 4);
    if (len < minlen || len > MAX_TABLE_LEN) {
        problem(c, "acpi: %s length %u impossible, ignoring it\n", name, len);
        return NULL;
    }
    const uint8_t *t = c->map(phys, len);
    if (!t) {
        problem(c, "acpi: %s length %u runs past mapped memory, ignoring it\n", name, len);
        return NULL;
    }
    if (checksum(t, len) != 0) {
        problem(c, "acpi: %s checksum bad, ignoring it\n", name);
        return NULL;
    }
    return t;
}

/* ---- RSDP ---------------------------------------------------------- */

static bool rsdp_valid(const uint8_t *r)
{
    if (memcmp(r, "RSD PTR ", 8) != 0 || checksum(r, RSDP_V1_LEN) != 0)
        return false;
    return true;
}

/* The XSDT address of a v2 RSDP whose extended checksum holds, else 0. */
static uint64_t rsdp_xsdt(struct ctx *c, const uint8_t *r)
{
    if (r[15] < 2)
        return 0;
    if (checksum(r, RSDP_V2_LEN) != 0) {
        problem(c, "acpi: RSDP extended checksum bad, using the RSDT\n");
        return 0;
    }
    return rd64(r + 24);
}

uint64_t acpi_find_rsdp(acpi_map_fn map)
{
    const uint8_t *bda = map(0x40E, 2);
    uint64_t ebda = bda ? (uint64_t)rd16(bda) << 4 : 0;
    struct { uint64_t base, len; } area[2] = { { ebda, 1024 }, { 0xE0000, 0x20000 } };

    for (int i = 0; i < 2; i++) {
        if (area[i].base < 0x400)
            continue;
        const uint8_t *p = map(area[i].base, area[i].len);
        if (!p)
            continue;
        for (uint64_t off = 0; off + RSDP_V1_LEN <= area[i].len; off += 16)
            if (rsdp_valid(p + off))
                return area[i].base + off;
    }
    return 0;
}

/* ---- root table ---------------------------------------------------- */

enum { T_FACP, T_APIC, T_HPET, T_SRAT, T_SLIT, T_COUNT };
static const char *const wanted[T_COUNT] = { "FACP", "APIC", "HPET", "SRAT", "SLIT" };

/* Walk the XSDT (esize 8) or RSDT (esize 4), noting the first of each wanted table. */
static void walk_root(struct ctx *c, const uint8_t *root, int esize, uint64_t *found)
{
    uint32_t len = rd32(root + 4);
    for (uint32_t off = HDR_LEN; off + esize <= len; off += esize) {
        uint64_t p = esize == 8 ? rd64(root + off) : rd32(root + off);
        const uint8_t *h = p ? c->map(p, HDR_LEN) : NULL;
        if (!h) {
            problem(c, "acpi: root table entry 0x%lx cannot be mapped, skipping it\n", p);
            continue;
        }
        for (int k = 0; k < T_COUNT; k++)
            if (!found[k] && memcmp(h, wanted[k], 4) == 0)
                found[k] = p;
    }
}

/* Choose the root table: the XSDT when the RSDP offers a valid one, else the RSDT. */
static const uint8_t *find_root(struct ctx *c, const uint8_t *rsdp, int *esize)
{
    uint64_t xsdt = rsdp_xsdt(c, rsdp);
    const uint8_t *root;
    if (xsdt) {
        root = get_table(c, xsdt, "XSDT", HDR_LEN);
        if (root) {
            *esize = 8;
            c->ai->used_xsdt = true;
            return root;
        }
        kprintf("acpi: falling back to the RSDT\n");
    }
    *esize = 4;
    return get_table(c, rd32(rsdp + 16), "RSDT", HDR_LEN);
}

static void reset_info(struct acpi_info *ai)
{
    memset(ai, 0, sizeof *ai);
    ai->lapic_phys = DEFAULT_LAPIC;
}

int acpi_parse(uint64_t rsdp_phys, const void *rsdp_copy, acpi_map_fn map, struct acpi_info *out)
{
    struct ctx c = { map, out };
    const uint8_t *rsdp = rsdp_copy ? rsdp_copy : rsdp_phys ? map(rsdp_phys, RSDP_V1_LEN) : NULL;
    uint64_t found[T_COUNT] = { 0 };
    const uint8_t *root;
    int esize;

    reset_info(out);
    if (!rsdp || !rsdp_valid(rsdp)) {
        problem(&c, "acpi: no valid RSDP, no ACPI tables\n");
        return -1;
    }
    out->rsdp_revision = rsdp[15];
    if (!rsdp_copy && rsdp[15] >= 2 && !(rsdp = map(rsdp_phys, RSDP_V2_LEN))) {
        problem(&c, "acpi: RSDP v2 at 0x%lx cannot be mapped\n", rsdp_phys);
        return -1;
    }
    if (!(root = find_root(&c, rsdp, &esize)))
        return -1;
    walk_root(&c, root, esize, found);
    if (found[T_FACP])
        parse_fadt(&c, found[T_FACP]);
    else
        kprintf("acpi: no FADT, no ACPI power off\n");
    if (found[T_APIC])
        parse_madt(&c, found[T_APIC]);
    else
        kprintf("acpi: no MADT, running on the boot cpu alone\n");
    if (found[T_HPET])
        parse_hpet(&c, found[T_HPET]);
    if (found[T_SRAT])
        parse_srat(&c, found[T_SRAT]);
    if (found[T_SLIT])
        parse_slit(&c, found[T_SLIT]);
    return 0;
}

int acpi_node_of_domain(const struct acpi_info *ai, uint32_t domain)
{
    for (int i = 0; i < ai->nnodes; i++)
        if (ai->domain_of_node[i] == domain)
            return i;
    return -1;
}

int acpi_node_of_apic(const struct acpi_info *ai, uint32_t apic_id)
{
    for (int i = 0; i < ai->srat_ncpus; i++)
        if (ai->srat_cpu[i].apic_id == apic_id)
            return ai->srat_cpu[i].node;
    return -1;
}

/* ---- kernel side --------------------------------------------------- */
#ifndef ACPI_HOST_TEST

struct acpi_info acpi;

/*
 * Tables live in RAM or firmware areas below 4 GiB on the PCs we run on,
 * and the direct map covers that range at boot; refusing anything above
 * it keeps a garbage pointer from faulting.
 */
static void *kmap(uint64_t phys, size_t len)
{
    const uint64_t limit = 1ULL << 32;
    if (phys == 0 || len > limit || phys >= limit || phys + len > limit)
        return NULL;
    return phys_to_virt(phys);
}

static void print_summary(const struct acpi_info *ai)
{
    char hpet[32], srat[32], slit[32], probs[32];
    if (ai->hpet_phys)
        snprintf(hpet, sizeof hpet, "hpet at 0x%lx", ai->hpet_phys);
    else
        snprintf(hpet, sizeof hpet, "no hpet");
    if (ai->have_srat)
        snprintf(srat, sizeof srat, "srat %d domain%s", ai->nnodes, ai->nnodes == 1 ? "" : "s");
    else
        snprintf(srat, sizeof srat, "no srat");
    if (ai->have_slit)
        snprintf(slit, sizeof slit, "slit %dx%d", ai->slit_n, ai->slit_n);
    else
        snprintf(slit, sizeof slit, "no slit");
    probs[0] = 0;
    if (ai->nproblems)
        snprintf(probs, sizeof probs, ", %d problem%s", ai->nproblems, ai->nproblems == 1 ? "" : "s");
    kprintf("acpi: %d cpu%s, %d ioapic%s, %s, %s, %s%s%s\n",
            ai->ncpus, ai->ncpus == 1 ? "" : "s", ai->nioapics, ai->nioapics == 1 ? "" : "s",
            hpet, srat, slit, ai->have_s5 ? "" : ", no s5", probs);
}

void acpi_init(const void *rsdp_copy)
{
    uint64_t rsdp = 0;
    if (!rsdp_copy && !(rsdp = acpi_find_rsdp(kmap)))
        kprintf("acpi: no RSDP in the Multiboot2 tags or the BIOS area\n");
    acpi_parse(rsdp, rsdp_copy, kmap, &acpi);
    print_summary(&acpi);
}

#define PM1_SCI_EN      (1u << 0)
#define PM1_SLP_EN      (1u << 13)
#define PM1_SLP_TYP(t)  (((t) & 7u) << 10)

/* Put the chipset in ACPI mode if the firmware left it in legacy mode. */
static void acpi_enable_mode(void)
{
    if ((inw(acpi.pm1a_cnt) & PM1_SCI_EN) || !acpi.smi_cmd || !acpi.acpi_enable)
        return;
    outb(acpi.smi_cmd, acpi.acpi_enable);
    for (int i = 0; i < 1000000 && !(inw(acpi.pm1a_cnt) & PM1_SCI_EN); i++)
        cpu_relax();
}

static void pm1_sleep(uint16_t port, uint16_t typ)
{
    uint16_t v = inw(port) & ~PM1_SLP_TYP(7);
    outw(port, v | PM1_SLP_TYP(typ) | PM1_SLP_EN);
}

void acpi_poweroff(void)
{
    static const char bochs[] = "Shutdown";
    if (acpi.have_fadt && acpi.have_s5 && acpi.pm1a_cnt) {
        acpi_enable_mode();
        pm1_sleep(acpi.pm1a_cnt, acpi.slp_typa);
        if (acpi.pm1b_cnt)
            pm1_sleep(acpi.pm1b_cnt, acpi.slp_typb);
        for (int i = 0; i < 10000000; i++)
            cpu_relax();
        kprintf("acpi: S5 through port 0x%x did not power off\n", acpi.pm1a_cnt);
    }
    outw(0xB004, 0x2000);   /* old Bochs and QEMU */
    outw(0x604, 0x2000);    /* QEMU with SeaBIOS (PIIX4 and ICH9 PM base 0x600) */
    for (const char *s = bochs; *s; s++)
        outb(0x8900, (uint8_t)*s);
}

#endif
