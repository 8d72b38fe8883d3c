/*
 * ACPI static table parser.
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
 */
#include <drivers/platform/acpi.h>
#include <kern/lib/kprintf.h>
#ifdef ACPI_HOST_TEST
#include <string.h>
#else
#include <kern/lib/string.h>
#include <kern/arch/arch.h>
#endif

#define HDR_LEN             36          /* the common system description header */
#define MAX_TABLE_LEN       (4u << 20)  /* a longer table is garbage */
#define RSDP_V1_LEN         20
#define RSDP_V2_LEN         36
#define DEFAULT_LAPIC       0xFEE00000u

/* Little-endian unaligned reads: tables have no alignment guarantees. */
static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) { return rd16(p) | (uint32_t)rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

static uint8_t checksum(const uint8_t *p, size_t n)
{
    uint8_t sum = 0;
    while (n--)
        sum += *p++;
    return sum;
}

struct ctx {
    acpi_map_fn map;
    struct acpi_info *ai;
};

/* Report one firmware problem. */
static void problem(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(struct ctx *c, const char *fmt, ...)
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
static const uint8_t *get_table(struct ctx *c, uint64_t phys, const char *sig, uint32_t minlen)
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

/*
 * Check that the entries of a MADT- or SRAT-style table (type, length,
 * body) from offset start tile the table exactly, and that every entry of
 * a type we read is at least as long as minsize[type] says.
 */
static bool entries_ok(struct ctx *c, const char *sig, const uint8_t *t, uint32_t len,
                       uint32_t start, const uint8_t *minsize, int ntypes)
{
    uint32_t off = start;
    while (off < len) {
        uint8_t type = t[off];
        uint32_t elen = off + 2 <= len ? t[off + 1] : 0;
        uint32_t need = type < ntypes && minsize[type] ? minsize[type] : 2;
        if (elen < need || off + elen > len) {
            problem(c, "acpi: %s entry type %u at offset %u has bad length %u, ignoring %s\n",
                    sig, type, off, elen, sig);
            return false;
        }
        off += elen;
    }
    return true;
}

/* Fetch a MADT- or SRAT-style table (a header of hdr bytes, then typed
 * entries) and check its entries; NULL (reported) if either fails. */
static const uint8_t *get_entry_table(struct ctx *c, uint64_t phys, const char *sig,
                                      const char *name, uint32_t hdr,
                                      const uint8_t *minsize, int ntypes, uint32_t *len)
{
    const uint8_t *t = get_table(c, phys, sig, hdr);
    if (!t)
        return NULL;
    *len = rd32(t + 4);
    return entries_ok(c, name, t, *len, hdr, minsize, ntypes) ? t : NULL;
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

/* ---- MADT ---------------------------------------------------------- */

static const uint8_t madt_minsize[] = {
    [0] = 8, [1] = 12, [2] = 10, [4] = 6, [5] = 12, [9] = 16, [10] = 12,
};

static void madt_add_cpu(struct ctx *c, uint32_t apic_id, uint32_t uid, bool x2, int *seen)
{
    struct acpi_info *ai = c->ai;
    for (int i = 0; i < ai->ncpus; i++) {
        if (ai->cpu[i].apic_id == apic_id) {
            problem(c, "acpi: MADT lists apic id %u twice, ignoring the second\n", apic_id);
            return;
        }
    }
    (*seen)++;
    if (ai->ncpus == ACPI_MAX_CPUS)
        return;
    ai->cpu[ai->ncpus].apic_id = apic_id;
    ai->cpu[ai->ncpus].uid = uid;
    ai->cpu[ai->ncpus].x2apic = x2;
    ai->ncpus++;
}

static void madt_add_ioapic(struct ctx *c, const uint8_t *e)
{
    struct acpi_info *ai = c->ai;
    if (ai->nioapics == ACPI_MAX_IOAPICS) {
        kprintf("acpi: more than %d IOAPICs, ignoring id %u\n", ACPI_MAX_IOAPICS, e[2]);
        return;
    }
    ai->ioapic[ai->nioapics].id = e[2];
    ai->ioapic[ai->nioapics].phys = rd32(e + 4);
    ai->ioapic[ai->nioapics].gsi_base = rd32(e + 8);
    ai->nioapics++;
}

static void madt_add_override(struct ctx *c, const uint8_t *e)
{
    struct acpi_info *ai = c->ai;
    if (ai->noverrides == ACPI_MAX_OVERRIDES) {
        kprintf("acpi: more than %d interrupt overrides, ignoring irq %u\n",
                ACPI_MAX_OVERRIDES, e[3]);
        return;
    }
    ai->override[ai->noverrides].irq = e[3];
    ai->override[ai->noverrides].gsi = rd32(e + 4);
    ai->override[ai->noverrides].flags = rd16(e + 8);
    ai->noverrides++;
}

static void madt_add_nmi(struct ctx *c, uint32_t uid, uint16_t flags, uint8_t lint)
{
    struct acpi_info *ai = c->ai;
    if (ai->nnmis == ACPI_MAX_NMIS)
        return;
    ai->nmi[ai->nnmis].uid = uid;
    ai->nmi[ai->nnmis].flags = flags;
    ai->nmi[ai->nnmis].lint = lint;
    ai->nnmis++;
}

static void madt_entry(struct ctx *c, const uint8_t *e, int *seen)
{
    switch (e[0]) {
    case 0:     /* processor local APIC */
        if (rd32(e + 4) & 1)
            madt_add_cpu(c, e[3], e[2], false, seen);
        break;
    case 1:
        madt_add_ioapic(c, e);
        break;
    case 2:
        madt_add_override(c, e);
        break;
    case 4:     /* local APIC NMI; uid 0xFF means all processors */
        madt_add_nmi(c, e[2] == 0xFF ? ACPI_NMI_ALL_CPUS : e[2], rd16(e + 3), e[5]);
        break;
    case 5:     /* 64-bit local APIC address override */
        c->ai->lapic_phys = rd64(e + 4);
        break;
    case 9:     /* processor local x2APIC */
        if (rd32(e + 8) & 1)
            madt_add_cpu(c, rd32(e + 4), rd32(e + 12), true, seen);
        break;
    case 10:    /* local x2APIC NMI */
        madt_add_nmi(c, rd32(e + 4), rd16(e + 2), e[8]);
        break;
    }
}

static void parse_madt(struct ctx *c, uint64_t phys)
{
    uint32_t len;
    const uint8_t *t = get_entry_table(c, phys, "APIC", "MADT", 44, madt_minsize,
                                       sizeof madt_minsize, &len);
    if (!t)
        return;

    struct acpi_info *ai = c->ai;
    int seen = 0;
    ai->have_madt = true;
    ai->lapic_phys = rd32(t + 36);
    ai->pcat_compat = rd32(t + 40) & 1;
    for (uint32_t off = 44; off < len; off += t[off + 1])
        madt_entry(c, t + off, &seen);
    if (seen > ACPI_MAX_CPUS)
        kprintf("acpi: MADT lists %d enabled cpus, using the first %d\n", seen, ACPI_MAX_CPUS);
    if (ai->ncpus == 0)
        problem(c, "acpi: MADT lists no enabled cpus\n");
}

/* ---- SRAT ---------------------------------------------------------- */

static const uint8_t srat_minsize[] = { [0] = 16, [1] = 40, [2] = 24 };

/* Collect one enabled entry's domain, or fail if it cannot be a domain. */
static bool srat_note_domain(struct ctx *c, uint32_t dom, uint32_t *doms, int *ndoms)
{
    if (dom > ACPI_MAX_DOMAIN) {
        problem(c, "acpi: SRAT proximity domain %u out of range, ignoring SRAT\n", dom);
        return false;
    }
    for (int i = 0; i < *ndoms; i++)
        if (doms[i] == dom)
            return true;
    if (*ndoms == ACPI_MAX_NODES) {
        problem(c, "acpi: SRAT has more than %d proximity domains, ignoring SRAT\n",
                ACPI_MAX_NODES);
        return false;
    }
    doms[(*ndoms)++] = dom;
    return true;
}

static void srat_add_cpu(struct ctx *c, uint32_t apic_id, uint32_t dom)
{
    struct acpi_info *ai = c->ai;
    if (ai->srat_ncpus == ACPI_MAX_SRAT_CPUS) {
        kprintf("acpi: SRAT lists more than %d cpus, ignoring apic id %u\n",
                ACPI_MAX_SRAT_CPUS, apic_id);
        return;
    }
    ai->srat_cpu[ai->srat_ncpus].apic_id = apic_id;
    ai->srat_cpu[ai->srat_ncpus].domain = dom;
    ai->srat_ncpus++;
}

static bool srat_add_mem(struct ctx *c, const uint8_t *e)
{
    struct acpi_info *ai = c->ai;
    uint64_t base = rd64(e + 8), len = rd64(e + 16);
    if (len == 0)
        return true;
    if (base + len < base) {
        problem(c, "acpi: SRAT memory range 0x%lx+0x%lx wraps, ignoring SRAT\n", base, len);
        return false;
    }
    if (ai->nmem == ACPI_MAX_MEMRANGES) {
        problem(c, "acpi: SRAT has more than %d memory ranges, ignoring 0x%lx+0x%lx\n",
                ACPI_MAX_MEMRANGES, base, len);
        return true;
    }
    ai->mem[ai->nmem].base = base;
    ai->mem[ai->nmem].len = len;
    ai->mem[ai->nmem].domain = rd32(e + 2);
    ai->mem[ai->nmem].hotplug = (rd32(e + 28) >> 1) & 1;
    ai->nmem++;
    return true;
}

/* One SRAT entry; false if it makes the whole table untrustworthy. */
static bool srat_entry(struct ctx *c, const uint8_t *e, int rev, uint32_t *doms, int *ndoms)
{
    uint32_t dom;
    switch (e[0]) {
    case 0:     /* processor local APIC affinity; domain bits 31:8 from revision 2 */
        if (!(rd32(e + 4) & 1))
            return true;
        dom = e[2];
        if (rev >= 2)
            dom |= (uint32_t)e[9] << 8 | (uint32_t)e[10] << 16 | (uint32_t)e[11] << 24;
        if (!srat_note_domain(c, dom, doms, ndoms))
            return false;
        srat_add_cpu(c, e[3], dom);
        return true;
    case 1:     /* memory affinity */
        if (!(rd32(e + 28) & 1) || rd64(e + 16) == 0)
            return true;
        return srat_note_domain(c, rd32(e + 2), doms, ndoms) && srat_add_mem(c, e);
    case 2:     /* processor local x2APIC affinity */
        if (!(rd32(e + 12) & 1))
            return true;
        if (!srat_note_domain(c, rd32(e + 4), doms, ndoms))
            return false;
        srat_add_cpu(c, rd32(e + 8), rd32(e + 4));
        return true;
    }
    return true;
}

/* Number the domains densely in ascending order and label every entry. */
static void srat_number_nodes(struct acpi_info *ai, uint32_t *doms, int ndoms)
{
    for (int i = 1; i < ndoms; i++) {
        uint32_t d = doms[i];
        int j = i;
        for (; j > 0 && doms[j - 1] > d; j--)
            doms[j] = doms[j - 1];
        doms[j] = d;
    }
    ai->nnodes = ndoms;
    for (int i = 0; i < ndoms; i++)
        ai->domain_of_node[i] = doms[i];
    for (int i = 0; i < ai->srat_ncpus; i++)
        ai->srat_cpu[i].node = acpi_node_of_domain(ai, ai->srat_cpu[i].domain);
    for (int i = 0; i < ai->nmem; i++)
        ai->mem[i].node = acpi_node_of_domain(ai, ai->mem[i].domain);
}

static void srat_reset(struct acpi_info *ai)
{
    ai->have_srat = false;
    ai->nnodes = 0;
    ai->srat_ncpus = 0;
    ai->nmem = 0;
}

static void parse_srat(struct ctx *c, uint64_t phys)
{
    uint32_t len;
    const uint8_t *t = get_entry_table(c, phys, "SRAT", "SRAT", 48, srat_minsize,
                                       sizeof srat_minsize, &len);
    if (!t)
        return;

    uint32_t doms[ACPI_MAX_NODES];
    int ndoms = 0;
    for (uint32_t off = 48; off < len; off += t[off + 1]) {
        if (!srat_entry(c, t + off, t[8], doms, &ndoms)) {
            srat_reset(c->ai);
            return;
        }
    }
    if (ndoms == 0) {
        problem(c, "acpi: SRAT has no enabled entries, ignoring it\n");
        srat_reset(c->ai);
        return;
    }
    srat_number_nodes(c->ai, doms, ndoms);
    c->ai->have_srat = true;
}

/* ---- SLIT ---------------------------------------------------------- */

/* Check every distance; the matrix is n x n bytes at m. */
static bool slit_values_ok(struct ctx *c, const uint8_t *m, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        for (uint64_t j = 0; j < n; j++) {
            uint8_t v = m[i * n + j];
            if (i == j && v != 10) {
                problem(c, "acpi: SLIT diagonal entry %lu is %u, not 10, ignoring SLIT\n", i, v);
                return false;
            }
            if (v < 10) {
                problem(c, "acpi: SLIT distance %lu->%lu is %u (< 10), ignoring SLIT\n", i, j, v);
                return false;
            }
        }
    }
    return true;
}

static void parse_slit(struct ctx *c, uint64_t phys)
{
    const uint8_t *t = get_table(c, phys, "SLIT", 44);
    struct acpi_info *ai = c->ai;
    if (!t)
        return;
    uint32_t len = rd32(t + 4);
    uint64_t n = rd64(t + 36);
    if (n == 0 || n > ACPI_MAX_DOMAIN + 1 || 44 + n * n > len) {
        problem(c, "acpi: SLIT claims %lu localities in %u bytes, ignoring it\n", n, len);
        return;
    }
    if (!slit_values_ok(c, t + 44, n))
        return;
    if (!ai->have_srat) {
        kprintf("acpi: SLIT without a valid SRAT, ignoring it\n");
        return;
    }
    uint32_t maxdom = ai->domain_of_node[ai->nnodes - 1];
    if (maxdom >= n) {
        problem(c, "acpi: SLIT has %lu localities but SRAT uses domain %u, ignoring SLIT\n",
                n, maxdom);
        return;
    }
    for (int a = 0; a < ai->nnodes; a++)
        for (int b = 0; b < ai->nnodes; b++)
            ai->slit[a][b] = t[44 + ai->domain_of_node[a] * n + ai->domain_of_node[b]];
    ai->slit_n = ai->nnodes;
    ai->have_slit = true;
}

/* ---- FADT, DSDT and \_S5_ ------------------------------------------ */

/* One AML integer constant at *p: Zero, One, Ones or Byte/Word/DWord data. */
static bool aml_int(const uint8_t *aml, size_t len, size_t *p, uint32_t *v)
{
    if (*p >= len)
        return false;
    uint8_t op = aml[(*p)++];
    size_t n = op == 0x0A ? 1 : op == 0x0B ? 2 : op == 0x0C ? 4 : 0;
    if (op == 0x00 || op == 0x01 || op == 0xFF) {
        *v = op == 0xFF ? 0xFFFFFFFFu : op;
        return true;
    }
    if (n == 0 || *p + n > len)
        return false;
    *v = n == 1 ? aml[*p] : n == 2 ? rd16(aml + *p) : rd32(aml + *p);
    *p += n;
    return true;
}

/* Parse the package after "_S5_" at offset i, if it is Name(_S5_, Package(){a, b, ...}). */
static bool s5_package(const uint8_t *aml, size_t len, size_t i, uint16_t *typa, uint16_t *typb)
{
    bool named = (i >= 1 && aml[i - 1] == 0x08) ||
                 (i >= 2 && aml[i - 1] == '\\' && aml[i - 2] == 0x08);
    size_t p = i + 4;
    if (!named || p + 3 > len || aml[p] != 0x12)
        return false;
    p++;
    p += 1 + (aml[p] >> 6);         /* PkgLength: lead byte bits 7:6 count extra bytes */
    if (p >= len)
        return false;
    uint8_t nelem = aml[p++];
    uint32_t a, b = 0;
    if (nelem < 1 || !aml_int(aml, len, &p, &a))
        return false;
    if (nelem >= 2 && !aml_int(aml, len, &p, &b))
        return false;
    *typa = (uint16_t)a;
    *typb = (uint16_t)b;
    return true;
}

int acpi_find_s5(const uint8_t *aml, size_t len, uint16_t *typa, uint16_t *typb)
{
    for (size_t i = 0; i + 4 <= len; i++)
        if (memcmp(aml + i, "_S5_", 4) == 0 && s5_package(aml, len, i, typa, typb))
            return 0;
    return -1;
}

static void parse_dsdt(struct ctx *c, uint64_t phys)
{
    const uint8_t *t = get_table(c, phys, "DSDT", HDR_LEN);
    struct acpi_info *ai = c->ai;
    if (!t)
        return;
    if (acpi_find_s5(t + HDR_LEN, rd32(t + 4) - HDR_LEN, &ai->slp_typa, &ai->slp_typb) == 0)
        ai->have_s5 = true;
    else
        kprintf("acpi: no \\_S5_ in the DSDT, no ACPI power off\n");
}

/* A PM1 control port: the 32-bit block field, else an I/O-space X_ GAS. */
static uint16_t fadt_port(const uint8_t *t, uint32_t len, uint32_t blk_off, uint32_t gas_off)
{
    uint32_t blk = rd32(t + blk_off);
    if (blk != 0)
        return blk <= 0xFFFF ? (uint16_t)blk : 0;
    if (len < gas_off + 12 || t[gas_off] != 1)
        return 0;
    uint64_t addr = rd64(t + gas_off + 4);
    return addr <= 0xFFFF ? (uint16_t)addr : 0;
}

static void parse_fadt(struct ctx *c, uint64_t phys)
{
    const uint8_t *t = get_table(c, phys, "FACP", 116);
    struct acpi_info *ai = c->ai;
    if (!t)
        return;
    uint32_t len = rd32(t + 4);
    ai->have_fadt = true;
    ai->smi_cmd = (uint16_t)rd32(t + 48);
    ai->acpi_enable = t[52];
    ai->pm1a_cnt = fadt_port(t, len, 64, 172);
    ai->pm1b_cnt = fadt_port(t, len, 68, 184);
    ai->dsdt_phys = len >= 148 && rd64(t + 140) ? rd64(t + 140) : rd32(t + 40);
    if (ai->dsdt_phys)
        parse_dsdt(c, ai->dsdt_phys);
}

/* ---- HPET ---------------------------------------------------------- */

static void parse_hpet(struct ctx *c, uint64_t phys)
{
    const uint8_t *t = get_table(c, phys, "HPET", 56);
    if (!t)
        return;
    uint64_t base = rd64(t + 44);
    if (t[40] != 0 || base == 0) {
        problem(c, "acpi: HPET base is not a memory address, ignoring it\n");
        return;
    }
    c->ai->hpet_phys = base;
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
