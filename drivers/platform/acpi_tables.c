/*
 * ACPI: the parsers of the tables the walk in drivers/platform/acpi.c
 * finds.
 *
 * Theory.  Each parser is handed the physical address of one table, fetches
 * it through get_table() (signature, length and checksum checked; the
 * MADT's and SRAT's typed entries are checked here to tile the table, each
 * at least as long as its type needs) and fills its part of struct
 * acpi_info: the MADT the CPUs, IOAPICs, interrupt overrides and NMI
 * wiring; the SRAT the CPU and memory affinities, its sparse proximity
 * domains renumbered densely into nodes; the SLIT the node distances,
 * remapped from domains to those nodes (so it must come after the SRAT);
 * the FADT the PM1 control ports and, through the DSDT's \_S5_ package,
 * the soft-off sleep types; the HPET its register base.  A table that
 * fails a check is reported through problem() and dropped whole, so
 * acpi_info never holds half of one.  The overall theory is acpi.c's.
 *
 * Locking: none.  In the kernel this runs once, from acpi_init() on the
 * boot CPU before any other CPU is started, and writes only the
 * acpi_info it is handed; the host unit tests call it single-threaded.
 */
#include <drivers/platform/acpi.h>
#include <drivers/platform/acpi_impl.h>
#include <kern/lib/kprintf.h>
#ifdef ACPI_HOST_TEST
#include <string.h>
#else
#include <kern/lib/string.h>
#endif

/* ---- MADT- and SRAT-style typed entries ---------------------------- */

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

void parse_madt(struct ctx *c, uint64_t phys)
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

void parse_srat(struct ctx *c, uint64_t phys)
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

void parse_slit(struct ctx *c, uint64_t phys)
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

void parse_fadt(struct ctx *c, uint64_t phys)
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

void parse_hpet(struct ctx *c, uint64_t phys)
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
