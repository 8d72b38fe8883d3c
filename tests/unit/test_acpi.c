/*
 * Host unit tests for drivers/acpi.c (and, end to end, kern/numa.c).
 *
 * We build synthetic ACPI tables in a fake physical memory (RSDP v2 ->
 * XSDT/RSDT -> FADT -> DSDT, MADT, HPET, SRAT, SLIT) shaped like the
 * machine presets, parse them, and check the result.  Then we break them
 * one way at a time (checksums, lengths, signatures, values) and check
 * that each breakage is reported and the table ignored, never trusted.
 *
 * The map callback hands the parser a fresh malloc'd copy of exactly the
 * bytes it asked for, so with -fsanitize=address any read past a mapped
 * range is caught.
 */
#include "unit.h"
#include <drivers/acpi.h>
#include <kern/numa.h>

/* ---- fake physical memory ------------------------------------------ */

#define PHYS_SIZE   (2u << 20)
#define TABLE_BASE  0x100000u       /* tables are built from here up */
#define RSDP_ADDR   0xE0010u        /* in the BIOS area, so the scan finds it */

static uint8_t *phys;
static uint64_t next_free;
static void *maps[4096];
static int nmaps;

static void *map_phys(uint64_t pa, size_t len)
{
    if (pa == 0 || pa >= PHYS_SIZE || len > PHYS_SIZE - pa || nmaps == (int)ARRAY_SIZE(maps))
        return NULL;
    void *copy = malloc(len ? len : 1);
    memcpy(copy, phys + pa, len);
    maps[nmaps++] = copy;
    return copy;
}

static void phys_reset(void)
{
    while (nmaps)
        free(maps[--nmaps]);
    memset(phys, 0, PHYS_SIZE);
    next_free = TABLE_BASE;
}

/* ---- table builder ------------------------------------------------- */

static uint64_t cur;        /* the table being built */
static uint32_t cur_len;

static void put8(uint8_t v) { phys[cur + cur_len++] = v; }
static void put16(uint16_t v) { put8(v); put8(v >> 8); }
static void put32(uint32_t v) { put16(v); put16(v >> 16); }
static void put64(uint64_t v) { put32(v); put32(v >> 32); }
static void putn(const void *p, size_t n) { memcpy(phys + cur + cur_len, p, n); cur_len += n; }
static void pad(size_t n) { while (n--) put8(0); }

static uint8_t sum8(const uint8_t *p, size_t n)
{
    uint8_t s = 0;
    while (n--)
        s += *p++;
    return s;
}

static void tb_begin(const char *sig, uint8_t rev)
{
    cur = ALIGN_UP(next_free, 16);
    cur_len = 0;
    putn(sig, 4);
    put32(0);                   /* length, patched by tb_end */
    put8(rev);
    put8(0);                    /* checksum, patched by tb_end */
    putn("TMPEST", 6);
    putn("UNITTEST", 8);
    put32(1);
    putn("TEST", 4);
    put32(1);
}

/* Fix a table's checksum after its bytes were changed (if its length
 * still fits in the fake memory). */
static void fix_sum(uint64_t t)
{
    uint32_t len = phys[t + 4] | phys[t + 5] << 8 | phys[t + 6] << 16 | (uint32_t)phys[t + 7] << 24;
    if (len < 10 || len > PHYS_SIZE - t)
        return;
    phys[t + 9] = 0;
    phys[t + 9] = (uint8_t)-sum8(phys + t, len);
}

static uint64_t tb_end(void)
{
    uint64_t t = cur;
    phys[t + 4] = cur_len;
    phys[t + 5] = cur_len >> 8;
    phys[t + 6] = cur_len >> 16;
    phys[t + 7] = cur_len >> 24;
    fix_sum(t);
    next_free = t + cur_len;
    return t;
}

static void poke32(uint64_t pa, uint32_t v) { for (int i = 0; i < 4; i++) phys[pa + i] = v >> (8 * i); }

/* ---- machine description ------------------------------------------- */

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

/* Where the last build put each table, for the corruption tests. */
static uint64_t t_rsdp, t_rsdt, t_xsdt, t_fadt, t_dsdt, t_madt, t_hpet, t_srat, t_slit;

static const uint8_t default_aml[] = {
    0x10, 0x05, '_', 'S', 'B', '_',             /* junk before */
    0x08, '_', 'S', '5', '_', 0x12, 0x08, 0x04, 0x0A, 0x05, 0x0A, 0x06, 0x00, 0x00,
};

static uint64_t build_dsdt(const struct machine *m)
{
    tb_begin("DSDT", 2);
    if (m->aml)
        putn(m->aml, m->aml_len);
    else
        putn(default_aml, sizeof default_aml);
    return tb_end();
}

static uint64_t build_fadt(const struct machine *m)
{
    int rev = m->fadt_rev ? m->fadt_rev : 1;
    uint32_t len = rev >= 3 ? 244 : 116;
    tb_begin("FACP", rev);
    pad(len - 36);
    uint64_t t = cur;
    poke32(t + 40, rev >= 3 ? 0 : (uint32_t)t_dsdt);
    poke32(t + 48, 0xB2);               /* SMI_CMD */
    phys[t + 52] = 0xF1;                /* ACPI_ENABLE */
    if (rev >= 3) {
        poke32(t + 140, (uint32_t)t_dsdt);  /* X_DSDT (low half) */
        phys[t + 172] = 1;                  /* X_PM1a_CNT_BLK: system I/O */
        phys[t + 173] = 16;
        poke32(t + 176, 0x604);
    } else {
        poke32(t + 64, 0x604);          /* PM1a_CNT_BLK */
    }
    cur_len = len;
    return tb_end();
}

static uint64_t build_madt(const struct machine *m)
{
    tb_begin("APIC", 3);
    put32(0xFEE00000);
    put32(1);                           /* PCAT_COMPAT */
    for (int i = 0; i < m->ncpus; i++) {
        if (m->x2apic) {
            put8(9); put8(16); put16(0); put32(m->apic[i]); put32(1); put32(i);
        } else {
            put8(0); put8(8); put8(i); put8(m->apic[i]); put32(1);
        }
    }
    put8(1); put8(12); put8(0); put8(0); put32(0xFEC00000); put32(0);
    put8(2); put8(10); put8(0); put8(0); put32(2); put16(0);
    put8(2); put8(10); put8(0); put8(9); put32(9); put16(0xD);
    put8(4); put8(6); put8(0xFF); put16(0x5); put8(1);
    if (m->lapic64) {
        put8(5); put8(12); put16(0); put64(0x1FEE00000ULL);
    }
    return tb_end();
}

static uint64_t build_hpet(void)
{
    tb_begin("HPET", 1);
    put32(0x8086A201);
    put8(0); put8(64); put8(0); put8(0); put64(0xFED00000);
    put8(0); put16(0x80); put8(0);
    return tb_end();
}

static uint64_t build_srat(const struct machine *m)
{
    tb_begin("SRAT", m->srat_rev ? m->srat_rev : 3);
    put32(1);
    put64(0);
    for (int i = 0; i < m->ncpus; i++) {
        if (m->x2apic) {
            put8(2); put8(24); put16(0); put32(m->dom[i]); put32(m->apic[i]); put32(1); put32(0); put32(0);
        } else {
            put8(0); put8(16); put8(m->dom[i] & 0xFF); put8(m->apic[i]); put32(1); put8(0);
            put8(m->dom[i] >> 8); put8(m->dom[i] >> 16); put8(m->dom[i] >> 24); put32(0);
        }
    }
    for (int i = 0; i < m->nmem; i++) {
        put8(1); put8(40); put32(m->mem[i].dom); put16(0);
        put64(m->mem[i].base); put64(m->mem[i].len); put32(0);
        put32(m->mem[i].flags ? m->mem[i].flags : 1); put64(0);
    }
    return tb_end();
}

static uint64_t build_slit(const struct machine *m)
{
    tb_begin("SLIT", 1);
    put64(m->slit_n);
    for (int i = 0; i < m->slit_n; i++)
        for (int j = 0; j < m->slit_n; j++)
            put8(m->slit[i][j]);
    return tb_end();
}

static uint64_t build_root(const char *sig, const uint64_t *t, int n, int esize)
{
    tb_begin(sig, 1);
    for (int i = 0; i < n; i++)
        esize == 8 ? put64(t[i]) : put32((uint32_t)t[i]);
    return tb_end();
}

static void build_rsdp(uint8_t rev)
{
    uint8_t *r = phys + RSDP_ADDR;
    t_rsdp = RSDP_ADDR;
    memset(r, 0, 36);
    memcpy(r, "RSD PTR ", 8);
    memcpy(r + 9, "TMPEST", 6);
    r[15] = rev;
    poke32(RSDP_ADDR + 16, (uint32_t)t_rsdt);
    poke32(RSDP_ADDR + 20, 36);
    poke32(RSDP_ADDR + 24, (uint32_t)t_xsdt);
    r[8] = (uint8_t)-sum8(r, 20);
    r[32] = (uint8_t)-sum8(r, 36);
}

/* Build every table for m; returns the RSDP's physical address. */
static uint64_t build(const struct machine *m, uint8_t rsdp_rev)
{
    uint64_t list[8];
    int n = 0;
    phys_reset();
    t_dsdt = t_fadt = t_hpet = t_srat = t_slit = 0;
    if (!m->no_fadt) {
        t_dsdt = build_dsdt(m);
        list[n++] = t_fadt = build_fadt(m);
    }
    list[n++] = t_madt = build_madt(m);
    if (!m->no_hpet)
        list[n++] = t_hpet = build_hpet();
    if (!m->no_srat)
        list[n++] = t_srat = build_srat(m);
    if (m->slit_n)
        list[n++] = t_slit = build_slit(m);
    t_rsdt = build_root("RSDT", list, n, 4);
    t_xsdt = build_root("XSDT", list, n, 8);
    build_rsdp(rsdp_rev);
    return t_rsdp;
}

static struct acpi_info ai;

static int parse(uint64_t rsdp)
{
    return acpi_parse(rsdp, NULL, map_phys, &ai);
}

/* ---- machine presets ----------------------------------------------- */

#define MiB (1ULL << 20)

/* 4 CPUs, 2 nodes of 256 MiB, distance 20: the "default" preset. */
static void machine_default(struct machine *m)
{
    memset(m, 0, sizeof *m);
    m->ncpus = 4;
    for (int i = 0; i < 4; i++) {
        m->apic[i] = i;
        m->dom[i] = i / 2;
    }
    m->nmem = 3;
    m->mem[0].base = 0;          m->mem[0].len = 0xA0000;           m->mem[0].dom = 0;
    m->mem[1].base = 0x100000;   m->mem[1].len = 256 * MiB - 0x100000; m->mem[1].dom = 0;
    m->mem[2].base = 256 * MiB;  m->mem[2].len = 256 * MiB;         m->mem[2].dom = 1;
    m->slit_n = 2;
    m->slit[0][0] = m->slit[1][1] = 10;
    m->slit[0][1] = m->slit[1][0] = 20;
}

/* 16 CPUs, 16 nodes: Hector's 4 stations of 4, 10 / 19 / 23. */
static void machine_hector(struct machine *m)
{
    memset(m, 0, sizeof *m);
    m->ncpus = 16;
    m->nmem = 16;
    m->slit_n = 16;
    for (int i = 0; i < 16; i++) {
        m->apic[i] = i;
        m->dom[i] = i;
        m->mem[i].base = i * 32 * MiB;
        m->mem[i].len = 32 * MiB;
        m->mem[i].dom = i;
        for (int j = 0; j < 16; j++)
            m->slit[i][j] = i == j ? 10 : i / 4 == j / 4 ? 19 : 23;
    }
}

static const struct mmap_range usable_512m[] = {
    { 0, 0x9FC00 }, { 0x100000, 512 * MiB },
};

/* ---- good tables --------------------------------------------------- */

static void t_default_machine(void)
{
    struct machine m;
    machine_default(&m);
    CHECK_EQ(parse(build(&m, 2)), 0);
    CHECK_EQ(ai.nproblems, 0);
    CHECK(ai.used_xsdt);
    CHECK_EQ(ai.rsdp_revision, 2);
    CHECK(ai.have_madt);
    CHECK(ai.pcat_compat);
    CHECK_EQ(ai.lapic_phys, 0xFEE00000);
    CHECK_EQ(ai.ncpus, 4);
    for (int i = 0; i < 4; i++) {
        CHECK_EQ(ai.cpu[i].apic_id, i);
        CHECK_EQ(ai.cpu[i].uid, i);
        CHECK(!ai.cpu[i].x2apic);
    }
    CHECK_EQ(ai.nioapics, 1);
    CHECK_EQ(ai.ioapic[0].phys, 0xFEC00000);
    CHECK_EQ(ai.ioapic[0].gsi_base, 0);
    CHECK_EQ(ai.noverrides, 2);
    CHECK_EQ(ai.override[0].irq, 0);
    CHECK_EQ(ai.override[0].gsi, 2);
    CHECK_EQ(ai.override[1].irq, 9);
    CHECK_EQ(ai.override[1].flags, 0xD);
    CHECK_EQ(ai.nnmis, 1);
    CHECK_EQ(ai.nmi[0].uid, ACPI_NMI_ALL_CPUS);
    CHECK_EQ(ai.nmi[0].lint, 1);
    CHECK_EQ(ai.nmi[0].flags, 5);
    CHECK_EQ(ai.hpet_phys, 0xFED00000);
    CHECK(ai.have_fadt);
    CHECK_EQ(ai.pm1a_cnt, 0x604);
    CHECK_EQ(ai.pm1b_cnt, 0);
    CHECK_EQ(ai.smi_cmd, 0xB2);
    CHECK_EQ(ai.acpi_enable, 0xF1);
    CHECK_EQ(ai.dsdt_phys, t_dsdt);
    CHECK(ai.have_s5);
    CHECK_EQ(ai.slp_typa, 5);
    CHECK_EQ(ai.slp_typb, 6);
    CHECK(ai.have_srat);
    CHECK_EQ(ai.nnodes, 2);
    CHECK_EQ(ai.srat_ncpus, 4);
    CHECK_EQ(acpi_node_of_apic(&ai, 1), 0);
    CHECK_EQ(acpi_node_of_apic(&ai, 2), 1);
    CHECK_EQ(acpi_node_of_apic(&ai, 7), -1);
    CHECK_EQ(ai.nmem, 3);
    CHECK_EQ(ai.mem[2].base, 256 * MiB);
    CHECK_EQ(ai.mem[2].node, 1);
    CHECK(ai.have_slit);
    CHECK_EQ(ai.slit_n, 2);
    CHECK_EQ(ai.slit[0][1], 20);
    CHECK_EQ(ai.slit[1][1], 10);
    CHECK(!log_has("acpi:"));

    numa_init(&ai, usable_512m, 2);
    CHECK_EQ(numa_nnodes, 2);
    CHECK_EQ(numa_nodes[0].cpumask, 0x3);
    CHECK_EQ(numa_nodes[1].cpumask, 0xC);
    CHECK_EQ(numa_nodes[0].mem_bytes, 0x9FC00 + 255 * MiB);
    CHECK_EQ(numa_nodes[1].mem_bytes, 256 * MiB);
    CHECK_EQ(numa_node_of_cpu(3), 1);
    CHECK_EQ(numa_node_of_paddr(0x1000), 0);
    CHECK_EQ(numa_node_of_paddr(256 * MiB - 1), 0);
    CHECK_EQ(numa_node_of_paddr(256 * MiB), 1);
    CHECK_EQ(numa_distance(0, 1), 20);
    CHECK_EQ(numa_distance(1, 1), 10);
    numa_print();
    CHECK_LOG("numa: node 0 cpus 0-1 mem 255M dist 10 20\n");
    CHECK_LOG("numa: node 1 cpus 2-3 mem 256M dist 20 10\n");
}

static void t_hector_16_nodes(void)
{
    struct machine m;
    machine_hector(&m);
    CHECK_EQ(parse(build(&m, 2)), 0);
    CHECK_EQ(ai.nproblems, 0);
    CHECK_EQ(ai.ncpus, 16);
    CHECK_EQ(ai.nnodes, 16);
    CHECK(ai.have_slit);
    CHECK_EQ(ai.slit_n, 16);
    CHECK_EQ(ai.slit[0][3], 19);
    CHECK_EQ(ai.slit[0][4], 23);
    CHECK_EQ(ai.slit[13][15], 19);
    CHECK_EQ(ai.slit[15][0], 23);

    numa_init(&ai, usable_512m, 2);
    CHECK_EQ(numa_nnodes, 16);
    CHECK_EQ(numa_distance(5, 6), 19);
    CHECK_EQ(numa_distance(5, 9), 23);
    CHECK_EQ(numa_node_of_cpu(11), 11);
    CHECK_EQ(numa_node_of_paddr(11 * 32 * MiB + 5), 11);
    CHECK_EQ(numa_nodes[15].mem_bytes, 32 * MiB);
    numa_print();
    CHECK_LOG("numa: node 0 cpus 0 mem 31M dist 10 19 19 19 23 23 23 23 23 23 23 23 23 23 23 23\n");
    CHECK_LOG("numa: node 15 cpus 15 mem 32M dist 23 23 23 23 23 23 23 23 23 23 23 23 19 19 19 10\n");
}

static void t_x2apic_entries(void)
{
    struct machine m;
    machine_default(&m);
    m.x2apic = true;
    for (int i = 0; i < 4; i++)
        m.apic[i] = 300 + i;
    CHECK_EQ(parse(build(&m, 2)), 0);
    CHECK_EQ(ai.nproblems, 0);
    CHECK_EQ(ai.ncpus, 4);
    CHECK_EQ(ai.cpu[3].apic_id, 303);
    CHECK(ai.cpu[3].x2apic);
    CHECK_EQ(ai.srat_ncpus, 4);
    CHECK_EQ(acpi_node_of_apic(&ai, 302), 1);
}

static void t_rsdt_only_v1(void)
{
    struct machine m;
    machine_default(&m);
    CHECK_EQ(parse(build(&m, 0)), 0);
    CHECK_EQ(ai.nproblems, 0);
    CHECK(!ai.used_xsdt);
    CHECK_EQ(ai.ncpus, 4);
    CHECK(ai.have_slit);
}

static void t_rsdp_copy_from_tag(void)
{
    struct machine m;
    uint8_t copy[36];
    machine_default(&m);
    build(&m, 2);
    memcpy(copy, phys + t_rsdp, 36);
    memset(phys + t_rsdp, 0, 36);           /* only the copy is valid */
    CHECK_EQ(acpi_parse(0, copy, map_phys, &ai), 0);
    CHECK_EQ(ai.ncpus, 4);
    CHECK(ai.used_xsdt);
}

static void t_rsdp_scan(void)
{
    struct machine m;
    machine_default(&m);
    build(&m, 2);
    CHECK_EQ(acpi_find_rsdp(map_phys), RSDP_ADDR);
    /* An RSDP in the EBDA is found first. */
    memcpy(phys + 0x9FC00 + 0x40, phys + RSDP_ADDR, 36);
    phys[0x40E] = 0xC0;
    phys[0x40F] = 0x9F;
    CHECK_EQ(acpi_find_rsdp(map_phys), 0x9FC40);
    /* A signature with a bad checksum is not an RSDP. */
    phys_reset();
    memcpy(phys + 0xF0000, "RSD PTR ", 8);
    phys[0xF0008] = 1;
    CHECK_EQ(acpi_find_rsdp(map_phys), 0);
}

static void t_fadt_rev3_x_fields(void)
{
    struct machine m;
    machine_default(&m);
    m.fadt_rev = 3;
    CHECK_EQ(parse(build(&m, 2)), 0);
    CHECK_EQ(ai.nproblems, 0);
    CHECK(ai.have_fadt);
    CHECK_EQ(ai.dsdt_phys, t_dsdt);
    CHECK_EQ(ai.pm1a_cnt, 0x604);
    CHECK(ai.have_s5);
}

static void t_madt_lapic_address_override(void)
{
    struct machine m;
    machine_default(&m);
    m.lapic64 = true;
    CHECK_EQ(parse(build(&m, 2)), 0);
    CHECK_EQ(ai.nproblems, 0);
    CHECK_EQ(ai.lapic_phys, 0x1FEE00000ULL);
}

static void t_madt_duplicate_apic_id(void)
{
    struct machine m;
    machine_default(&m);
    m.apic[2] = 1;                          /* duplicate APIC id */
    build(&m, 2);
    CHECK_EQ(parse(t_rsdp), 0);
    CHECK_EQ(ai.ncpus, 3);
    CHECK_LOG("acpi: MADT lists apic id 1 twice");
}

static void t_too_many_cpus(void)
{
    struct machine m;
    machine_default(&m);
    m.ncpus = 70;
    for (int i = 0; i < 70; i++) {
        m.apic[i] = i;
        m.dom[i] = i % 2;
    }
    CHECK_EQ(parse(build(&m, 2)), 0);
    CHECK_EQ(ai.ncpus, ACPI_MAX_CPUS);
    CHECK_EQ(ai.cpu[63].apic_id, 63);
    CHECK_LOG("acpi: MADT lists 70 enabled cpus, using the first 64");
    CHECK_EQ(ai.srat_ncpus, 70);
    numa_init(&ai, usable_512m, 2);
    CHECK_EQ(numa_nodes[0].cpumask, 0x5555555555555555ULL);
    CHECK_EQ(numa_nodes[1].cpumask, 0xAAAAAAAAAAAAAAAAULL);
}

static void t_sparse_domains(void)
{
    struct machine m;
    machine_default(&m);
    m.dom[2] = m.dom[3] = 5;
    m.mem[2].dom = 5;
    m.slit_n = 6;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            m.slit[i][j] = i == j ? 10 : 30;
    m.slit[0][5] = 21;
    m.slit[5][0] = 22;
    CHECK_EQ(parse(build(&m, 2)), 0);
    CHECK_EQ(ai.nproblems, 0);
    CHECK_EQ(ai.nnodes, 2);
    CHECK_EQ(ai.domain_of_node[0], 0);
    CHECK_EQ(ai.domain_of_node[1], 5);
    CHECK_EQ(acpi_node_of_domain(&ai, 5), 1);
    CHECK_EQ(acpi_node_of_domain(&ai, 3), -1);
    CHECK_EQ(ai.srat_cpu[3].domain, 5);
    CHECK_EQ(ai.srat_cpu[3].node, 1);
    CHECK_EQ(ai.mem[2].node, 1);
    CHECK(ai.have_slit);
    CHECK_EQ(ai.slit_n, 2);
    CHECK_EQ(ai.slit[0][1], 21);
    CHECK_EQ(ai.slit[1][0], 22);
    numa_init(&ai, usable_512m, 2);
    CHECK_EQ(numa_node_of_cpu(2), 1);
    CHECK_EQ(numa_distance(1, 0), 22);
}

static void t_domains_sorted_not_first_seen(void)
{
    struct machine m;
    machine_default(&m);
    m.dom[0] = m.dom[1] = 7;                /* first seen, but larger */
    m.dom[2] = m.dom[3] = 2;
    m.mem[0].dom = m.mem[1].dom = 7;
    m.mem[2].dom = 2;
    m.slit_n = 0;
    CHECK_EQ(parse(build(&m, 2)), 0);
    CHECK_EQ(ai.domain_of_node[0], 2);
    CHECK_EQ(ai.domain_of_node[1], 7);
    CHECK_EQ(acpi_node_of_apic(&ai, 0), 1);
    CHECK_EQ(acpi_node_of_apic(&ai, 3), 0);
}

static void t_srat_rev1_ignores_high_domain_bytes(void)
{
    struct machine m;
    machine_default(&m);
    m.srat_rev = 1;
    m.dom[3] = 0x101;                       /* reserved bytes set in a rev 1 table */
    m.slit_n = 0;
    CHECK_EQ(parse(build(&m, 2)), 0);
    CHECK(ai.have_srat);
    CHECK_EQ(ai.srat_cpu[3].domain, 1);
    CHECK_EQ(ai.nnodes, 2);
}

static void t_hotplug_and_disabled_memory(void)
{
    struct machine m;
    machine_default(&m);
    m.nmem = 5;
    m.mem[3].base = 4096 * MiB; m.mem[3].len = 1024 * MiB; m.mem[3].dom = 1; m.mem[3].flags = 3;
    m.mem[4].base = 8192 * MiB; m.mem[4].len = 1024 * MiB; m.mem[4].dom = 9; m.mem[4].flags = 2;
    CHECK_EQ(parse(build(&m, 2)), 0);
    CHECK_EQ(ai.nproblems, 0);
    CHECK_EQ(ai.nmem, 4);                   /* the disabled one (domain 9) is skipped */
    CHECK_EQ(ai.nnodes, 2);
    CHECK(ai.mem[3].hotplug);
    numa_init(&ai, usable_512m, 2);
    CHECK_EQ(numa_nodes[1].mem_bytes, 256 * MiB);   /* hotplug range holds no usable RAM */
    CHECK_EQ(numa_node_of_paddr(4096 * MiB + 1), 1);
}

/* ---- broken tables ------------------------------------------------- */

static void t_bad_checksum_madt(void)
{
    struct machine m;
    machine_default(&m);
    build(&m, 2);
    phys[t_madt + 50] ^= 0x40;
    CHECK_EQ(parse(t_rsdp), 0);
    CHECK_LOG("acpi: MADT checksum bad, ignoring it");
    CHECK(!ai.have_madt);
    CHECK_EQ(ai.ncpus, 0);
    CHECK_EQ(ai.nioapics, 0);
    CHECK_EQ(ai.lapic_phys, 0xFEE00000);
    CHECK(ai.have_srat);
    numa_init(&ai, usable_512m, 2);
    CHECK_EQ(numa_nodes[0].cpumask, 1);     /* the boot CPU alone */
}

static void t_bad_checksum_srat(void)
{
    struct machine m;
    machine_default(&m);
    build(&m, 2);
    phys[t_srat + 60] ^= 1;
    CHECK_EQ(parse(t_rsdp), 0);
    CHECK_LOG("acpi: SRAT checksum bad, ignoring it");
    CHECK_LOG("acpi: SLIT without a valid SRAT, ignoring it");
    CHECK(!ai.have_srat);
    CHECK(!ai.have_slit);
    CHECK_EQ(ai.ncpus, 4);
    numa_init(&ai, usable_512m, 2);
    CHECK_EQ(numa_nnodes, 1);
    CHECK_LOG("numa: no SRAT, one node");
    CHECK_EQ(numa_nodes[0].cpumask, 0xF);
}

static void t_bad_checksum_slit(void)
{
    struct machine m;
    machine_default(&m);
    build(&m, 2);
    phys[t_slit + 45] = 30;
    CHECK_EQ(parse(t_rsdp), 0);
    CHECK_LOG("acpi: SLIT checksum bad, ignoring it");
    CHECK(!ai.have_slit);
    CHECK(ai.have_srat);
    numa_init(&ai, usable_512m, 2);
    CHECK_EQ(numa_nnodes, 2);
    CHECK_EQ(numa_distance(0, 1), 20);
}

static void t_bad_checksum_fadt(void)
{
    struct machine m;
    machine_default(&m);
    build(&m, 2);
    phys[t_fadt + 64] = 0x05;
    CHECK_EQ(parse(t_rsdp), 0);
    CHECK_LOG("acpi: FADT checksum bad, ignoring it");
    CHECK(!ai.have_fadt);
    CHECK(!ai.have_s5);
    CHECK_EQ(ai.pm1a_cnt, 0);
}

static void t_bad_checksum_dsdt(void)
{
    struct machine m;
    machine_default(&m);
    build(&m, 2);
    phys[t_dsdt + 40] ^= 0xFF;
    CHECK_EQ(parse(t_rsdp), 0);
    CHECK_LOG("acpi: DSDT checksum bad, ignoring it");
    CHECK(ai.have_fadt);
    CHECK(!ai.have_s5);
}

static void t_bad_checksum_hpet(void)
{
    struct machine m;
    machine_default(&m);
    build(&m, 2);
    phys[t_hpet + 44] ^= 1;
    CHECK_EQ(parse(t_rsdp), 0);
    CHECK_LOG("acpi: HPET checksum bad, ignoring it");
    CHECK_EQ(ai.hpet_phys, 0);
}

static void t_bad_checksum_xsdt_uses_rsdt(void)
{
    struct machine m;
    machine_default(&m);
    build(&m, 2);
    phys[t_xsdt + 36] ^= 1;
    CHECK_EQ(parse(t_rsdp), 0);
    CHECK_LOG("acpi: XSDT checksum bad, ignoring it");
    CHECK_LOG("acpi: falling back to the RSDT");
    CHECK(!ai.used_xsdt);
    CHECK_EQ(ai.ncpus, 4);
    CHECK(ai.have_slit);
}

static void t_bad_checksum_rsdt_v1(void)
{
    struct machine m;
    machine_default(&m);
    build(&m, 0);
    phys[t_rsdt + 36] ^= 1;
    CHECK_EQ(parse(t_rsdp), -1);
    CHECK_LOG("acpi: RSDT checksum bad, ignoring it");
    CHECK_EQ(ai.ncpus, 0);
}

static void t_no_hpet_no_fadt(void)
{
    struct machine m;
    machine_default(&m);
    m.no_hpet = m.no_fadt = true;
    CHECK_EQ(parse(build(&m, 2)), 0);
    CHECK_EQ(ai.nproblems, 0);
    CHECK_EQ(ai.hpet_phys, 0);
    CHECK(!ai.have_fadt);
    CHECK(!ai.have_s5);
    CHECK_LOG("acpi: no FADT, no ACPI power off");
}

static void t_truncated_madt_length(void)
{
    struct machine m;
    machine_default(&m);
    build(&m, 2);
    poke32(t_madt + 4, 40);                 /* shorter than the fixed fields */
    fix_sum(t_madt);
    CHECK_EQ(parse(t_rsdp), 0);
    CHECK_LOG("acpi: MADT length 40 impossible, ignoring it");
    CHECK_EQ(ai.ncpus, 0);
}

static void t_madt_length_cuts_an_entry(void)
{
    struct machine m;
    machine_default(&m);
    build(&m, 2);
    poke32(t_madt + 4, 44 + 8 + 4);         /* second CPU entry cut in half */
    fix_sum(t_madt);
    CHECK_EQ(parse(t_rsdp), 0);
    CHECK_LOG("acpi: MADT entry type 0 at offset 52 has bad length 8, ignoring MADT");
    CHECK(!ai.have_madt);
    CHECK_EQ(ai.ncpus, 0);
}

static void t_madt_zero_length_entry(void)
{
    struct machine m;
    machine_default(&m);
    build(&m, 2);
    phys[t_madt + 44 + 8 + 1] = 0;
    fix_sum(t_madt);
    CHECK_EQ(parse(t_rsdp), 0);
    CHECK_LOG("has bad length 0, ignoring MADT");
    CHECK_EQ(ai.ncpus, 0);
}

static void t_srat_length_past_memory(void)
{
    struct machine m;
    machine_default(&m);
    build(&m, 2);
    poke32(t_srat + 4, 0x200000);           /* runs off the end of "RAM" */
    CHECK_EQ(parse(t_rsdp), 0);
    CHECK_LOG("acpi: SRAT length 2097152 runs past mapped memory");
    CHECK(!ai.have_srat);
}

static void t_srat_short_memory_entry(void)
{
    struct machine m;
    machine_default(&m);
    build(&m, 2);
    /* The first memory entry follows the four 16-byte CPU entries. */
    CHECK_EQ(phys[t_srat + 48 + 64], 1);
    phys[t_srat + 48 + 64 + 1] = 16;
    fix_sum(t_srat);
    CHECK_EQ(parse(t_rsdp), 0);
    CHECK_LOG("acpi: SRAT entry type 1 at offset 112 has bad length 16, ignoring SRAT");
    CHECK(!ai.have_srat);
    CHECK_EQ(ai.nmem, 0);
}

static void t_bad_signature(void)
{
    struct machine m;
    machine_default(&m);
    build(&m, 2);
    memcpy(phys + t_srat, "SRAX", 4);      /* no longer listed as an SRAT */
    fix_sum(t_srat);
    memcpy(phys + t_dsdt, "DSD\x01", 4);
    fix_sum(t_dsdt);
    CHECK_EQ(parse(t_rsdp), 0);
    CHECK(!ai.have_srat);
    CHECK_LOG("acpi: SLIT without a valid SRAT");
    CHECK_LOG("acpi: DSDT at 0x");
    CHECK_LOG("has signature 'DSD?', ignoring it");
    CHECK(!ai.have_s5);
}

static void t_srat_missing(void)
{
    struct machine m;
    machine_default(&m);
    m.no_srat = true;
    m.slit_n = 0;
    CHECK_EQ(parse(build(&m, 2)), 0);
    CHECK_EQ(ai.nproblems, 0);
    CHECK(!ai.have_srat);
    numa_init(&ai, usable_512m, 2);
    CHECK_EQ(numa_nnodes, 1);
    CHECK_EQ(numa_nodes[0].mem_bytes, 0x9FC00 + 511 * MiB);
    numa_print();
    CHECK_LOG("numa: no SRAT, one node\n");
    CHECK_LOG("numa: node 0 cpus 0-3 mem 511M dist 10\n");
}

static void t_srat_domain_out_of_range(void)
{
    struct machine m;
    machine_default(&m);
    m.dom[1] = 300;
    CHECK_EQ(parse(build(&m, 2)), 0);
    CHECK_LOG("acpi: SRAT proximity domain 300 out of range, ignoring SRAT");
    CHECK(!ai.have_srat);
    CHECK_EQ(ai.srat_ncpus, 0);
    CHECK_EQ(ai.nnodes, 0);
}

static void t_srat_too_many_domains(void)
{
    struct machine m;
    machine_default(&m);
    m.ncpus = 70;
    for (int i = 0; i < 70; i++) {
        m.apic[i] = i;
        m.dom[i] = i;
    }
    m.slit_n = 0;
    CHECK_EQ(parse(build(&m, 2)), 0);
    CHECK_LOG("acpi: SRAT has more than 64 proximity domains, ignoring SRAT");
    CHECK(!ai.have_srat);
}

static void t_srat_wrapping_range(void)
{
    struct machine m;
    machine_default(&m);
    m.mem[2].base = ~0ULL - 4096;
    m.slit_n = 0;
    CHECK_EQ(parse(build(&m, 2)), 0);
    CHECK_LOG("wraps, ignoring SRAT");
    CHECK(!ai.have_srat);
}

static void t_slit_bad_diagonal(void)
{
    struct machine m;
    machine_default(&m);
    m.slit[1][1] = 11;
    CHECK_EQ(parse(build(&m, 2)), 0);
    CHECK_LOG("acpi: SLIT diagonal entry 1 is 11, not 10, ignoring SLIT");
    CHECK(!ai.have_slit);
    CHECK(ai.have_srat);
}

static void t_slit_value_below_10(void)
{
    struct machine m;
    machine_default(&m);
    m.slit[0][1] = 9;
    CHECK_EQ(parse(build(&m, 2)), 0);
    CHECK_LOG("acpi: SLIT distance 0->1 is 9 (< 10), ignoring SLIT");
    CHECK(!ai.have_slit);
}

static void t_slit_size_mismatch(void)
{
    struct machine m;
    machine_default(&m);
    m.dom[3] = 2;                           /* SRAT uses domains 0, 1, 2; SLIT is 2x2 */
    CHECK_EQ(parse(build(&m, 2)), 0);
    CHECK_LOG("acpi: SLIT has 2 localities but SRAT uses domain 2, ignoring SLIT");
    CHECK(!ai.have_slit);
    CHECK_EQ(ai.nnodes, 3);
}

static void t_slit_count_vs_length(void)
{
    struct machine m;
    machine_default(&m);
    build(&m, 2);
    poke32(t_slit + 36, 3);                 /* 3x3 does not fit in 4 bytes */
    fix_sum(t_slit);
    CHECK_EQ(parse(t_rsdp), 0);
    CHECK_LOG("acpi: SLIT claims 3 localities in 48 bytes, ignoring it");
    CHECK(!ai.have_slit);
}

static void t_rsdp_garbage(void)
{
    uint8_t junk[36];
    for (int i = 0; i < 36; i++)
        junk[i] = (uint8_t)(i * 37 + 11);
    phys_reset();
    CHECK_EQ(acpi_parse(0, junk, map_phys, &ai), -1);
    CHECK_LOG("acpi: no valid RSDP, no ACPI tables");
    CHECK_EQ(ai.ncpus, 0);
    CHECK_EQ(acpi_parse(0, NULL, map_phys, &ai), -1);
    CHECK_EQ(acpi_parse(0x1FFFF0, NULL, map_phys, &ai), -1);

    /* Right signature and checksum, but the root pointers go nowhere. */
    memcpy(junk, "RSD PTR ", 8);
    junk[15] = 2;
    memcpy(junk + 16, "\xF0\xFF\xFF\xFF", 4);
    memcpy(junk + 24, "\x00\x00\x00\x00\x10\x00\x00\x00", 8);
    junk[8] = 0;
    junk[8] = (uint8_t)-sum8(junk, 20);
    junk[32] = 0;
    junk[32] = (uint8_t)-sum8(junk, 36);
    CHECK_EQ(acpi_parse(0, junk, map_phys, &ai), -1);
    CHECK_LOG("acpi: XSDT at 0x1000000000 cannot be mapped");
    CHECK_LOG("acpi: RSDT at 0xfffffff0 cannot be mapped");
}

static void t_rsdp_bad_extended_checksum(void)
{
    struct machine m;
    machine_default(&m);
    build(&m, 2);
    phys[t_rsdp + 33] = 0x77;               /* reserved byte: breaks only the v2 sum */
    CHECK_EQ(parse(t_rsdp), 0);
    CHECK_LOG("acpi: RSDP extended checksum bad, using the RSDT");
    CHECK(!ai.used_xsdt);
    CHECK_EQ(ai.ncpus, 4);
}

static void t_root_entry_unmappable(void)
{
    struct machine m;
    machine_default(&m);
    build(&m, 2);
    phys[t_xsdt + 36 + 7] = 0x80;           /* first entry now points far away */
    fix_sum(t_xsdt);
    CHECK_EQ(parse(t_rsdp), 0);
    CHECK_LOG("cannot be mapped, skipping it");
    CHECK(!ai.have_fadt);
    CHECK_EQ(ai.ncpus, 4);
}

/* ---- \_S5_ in AML ------------------------------------------------- */

static int s5(const uint8_t *aml, size_t len, uint16_t *a, uint16_t *b)
{
    *a = *b = 0xEEEE;
    return acpi_find_s5(aml, len, a, b);
}

static void t_s5_variants(void)
{
    uint16_t a, b;
    static const uint8_t qemu[] = { 0x08, '_', 'S', '5', '_', 0x12, 0x06, 0x04, 0, 0, 0, 0 };
    static const uint8_t ones[] = { 0x08, '_', 'S', '5', '_', 0x12, 0x04, 0x02, 0x01, 0x0A, 0x07 };
    static const uint8_t root[] = { 0x08, '\\', '_', 'S', '5', '_', 0x12, 0x0A, 0x02, 0x0B, 0x05, 0x00, 0x0C, 0x06, 0, 0, 0 };
    static const uint8_t ref_then_name[] = {
        0x70, '_', 'S', '5', '_', 0x60,                 /* Store(_S5_, Local0): not a Name */
        0x08, '_', 'S', '5', '_', 0x12, 0x05, 0x02, 0x0A, 0x03, 0x01,
    };
    static const uint8_t longpkg[] = { 0x08, '_', 'S', '5', '_', 0x12, 0x40, 0x00, 0x02, 0x0A, 0x02, 0x00 };
    static const uint8_t cut[] = { 0x08, '_', 'S', '5', '_', 0x12, 0x06, 0x04, 0x0A };
    static const uint8_t noint[] = { 0x08, '_', 'S', '5', '_', 0x12, 0x06, 0x04, 0x0D, 'x', 0 };
    static const uint8_t edge[] = { '_', 'S', '5', '_' };

    CHECK_EQ(s5(qemu, sizeof qemu, &a, &b), 0);
    CHECK_EQ(a, 0);
    CHECK_EQ(b, 0);
    CHECK_EQ(s5(ones, sizeof ones, &a, &b), 0);
    CHECK_EQ(a, 1);
    CHECK_EQ(b, 7);
    CHECK_EQ(s5(root, sizeof root, &a, &b), 0);
    CHECK_EQ(a, 5);
    CHECK_EQ(b, 6);
    CHECK_EQ(s5(ref_then_name, sizeof ref_then_name, &a, &b), 0);
    CHECK_EQ(a, 3);
    CHECK_EQ(b, 1);
    CHECK_EQ(s5(longpkg, sizeof longpkg, &a, &b), 0);
    CHECK_EQ(a, 2);
    CHECK_EQ(b, 0);
    CHECK_EQ(s5(cut, sizeof cut, &a, &b), -1);
    CHECK_EQ(s5(noint, sizeof noint, &a, &b), -1);
    CHECK_EQ(s5(edge, sizeof edge, &a, &b), -1);
    CHECK_EQ(s5(edge, 0, &a, &b), -1);
    for (size_t n = 0; n < sizeof root; n++)    /* every truncation is safe */
        (void)s5(root, n, &a, &b);
}

static void t_dsdt_without_s5(void)
{
    static const uint8_t aml[] = { 0x10, 0x05, '_', 'S', 'B', '_', 0x08, '_', 'S', '3', '_', 0x12, 0x04, 0x02, 1, 1 };
    struct machine m;
    machine_default(&m);
    m.aml = aml;
    m.aml_len = sizeof aml;
    CHECK_EQ(parse(build(&m, 2)), 0);
    CHECK(ai.have_fadt);
    CHECK(!ai.have_s5);
    CHECK_LOG("acpi: no \\_S5_ in the DSDT");
}

/* ---- fuzzing ------------------------------------------------------- */

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

/* Flip random bytes in one table (sometimes fixing its checksum) and
 * check that parsing neither crashes nor produces out-of-range results. */
static void t_fuzz_tables(void)
{
    struct machine m;
    for (int iter = 0; iter < 3000 && !test_failed; iter++) {
        iter & 1 ? machine_default(&m) : machine_hector(&m);
        build(&m, 2);
        uint64_t tabs[] = { t_xsdt, t_rsdt, t_fadt, t_dsdt, t_madt, t_hpet, t_srat, t_slit };
        uint64_t t = tabs[rnd() % ARRAY_SIZE(tabs)];
        uint32_t len = phys[t + 4] | phys[t + 5] << 8;
        int flips = 1 + rnd() % 8;
        for (int k = 0; k < flips; k++)
            phys[t + rnd() % len] = (uint8_t)rnd();
        if (rnd() % 4)
            fix_sum(t);
        parse(t_rsdp);
        CHECK(ai.ncpus >= 0 && ai.ncpus <= ACPI_MAX_CPUS);
        CHECK(ai.nnodes >= 0 && ai.nnodes <= ACPI_MAX_NODES);
        CHECK(!ai.have_slit || ai.slit_n == ai.nnodes);
        for (int i = 0; i < ai.srat_ncpus; i++)
            CHECK(ai.srat_cpu[i].node >= 0 && ai.srat_cpu[i].node < ai.nnodes);
        for (int i = 0; i < ai.nmem; i++)
            CHECK(ai.mem[i].node >= 0 && ai.mem[i].node < ai.nnodes);
        numa_init(&ai, usable_512m, 2);
        CHECK(numa_nnodes >= 1 && numa_nnodes <= MAX_NODES);
        for (int c = 0; c < 64; c++)
            CHECK(numa_node_of_cpu(c) >= 0 && numa_node_of_cpu(c) < numa_nnodes);
        CHECK(numa_node_of_paddr(rnd()) < numa_nnodes);
        numa_print();
        test_log_len = 0;                   /* keep only the last iteration's messages */
        test_log[0] = 0;
    }
}

int main(void)
{
    phys = malloc(PHYS_SIZE);
    RUN(t_default_machine);
    RUN(t_hector_16_nodes);
    RUN(t_x2apic_entries);
    RUN(t_rsdt_only_v1);
    RUN(t_rsdp_copy_from_tag);
    RUN(t_rsdp_scan);
    RUN(t_fadt_rev3_x_fields);
    RUN(t_madt_lapic_address_override);
    RUN(t_madt_duplicate_apic_id);
    RUN(t_too_many_cpus);
    RUN(t_sparse_domains);
    RUN(t_domains_sorted_not_first_seen);
    RUN(t_srat_rev1_ignores_high_domain_bytes);
    RUN(t_hotplug_and_disabled_memory);
    RUN(t_bad_checksum_madt);
    RUN(t_bad_checksum_srat);
    RUN(t_bad_checksum_slit);
    RUN(t_bad_checksum_fadt);
    RUN(t_bad_checksum_dsdt);
    RUN(t_bad_checksum_hpet);
    RUN(t_bad_checksum_xsdt_uses_rsdt);
    RUN(t_bad_checksum_rsdt_v1);
    RUN(t_no_hpet_no_fadt);
    RUN(t_truncated_madt_length);
    RUN(t_madt_length_cuts_an_entry);
    RUN(t_madt_zero_length_entry);
    RUN(t_srat_length_past_memory);
    RUN(t_srat_short_memory_entry);
    RUN(t_bad_signature);
    RUN(t_srat_missing);
    RUN(t_srat_domain_out_of_range);
    RUN(t_srat_too_many_domains);
    RUN(t_srat_wrapping_range);
    RUN(t_slit_bad_diagonal);
    RUN(t_slit_value_below_10);
    RUN(t_slit_size_mismatch);
    RUN(t_slit_count_vs_length);
    RUN(t_rsdp_garbage);
    RUN(t_rsdp_bad_extended_checksum);
    RUN(t_root_entry_unmappable);
    RUN(t_s5_variants);
    RUN(t_dsdt_without_s5);
    RUN(t_fuzz_tables);
    phys_reset();
    free(phys);
    return test_summary("test_acpi");
}
