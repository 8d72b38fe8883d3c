/* Fake firmware for the ACPI unit tests; see acpi_fake.h. */
#include "acpi_fake.h"

/* ---- fake physical memory ------------------------------------------ */


uint8_t *phys;
uint64_t next_free;
static void *maps[4096];
static int nmaps;

void *map_phys(uint64_t pa, size_t len)
{
    if (pa == 0 || pa >= PHYS_SIZE || len > PHYS_SIZE - pa || nmaps == (int)ARRAY_SIZE(maps))
        return NULL;
    void *copy = malloc(len ? len : 1);
    memcpy(copy, phys + pa, len);
    maps[nmaps++] = copy;
    return copy;
}

void phys_reset(void)
{
    while (nmaps)
        free(maps[--nmaps]);
    memset(phys, 0, PHYS_SIZE);
    next_free = TABLE_BASE;
}

/* ---- table builder ------------------------------------------------- */

uint64_t cur;        /* the table being built */
uint32_t cur_len;

void put8(uint8_t v) { phys[cur + cur_len++] = v; }
void put16(uint16_t v) { put8(v); put8(v >> 8); }
void put32(uint32_t v) { put16(v); put16(v >> 16); }
void put64(uint64_t v) { put32(v); put32(v >> 32); }
void putn(const void *p, size_t n) { memcpy(phys + cur + cur_len, p, n); cur_len += n; }
void pad(size_t n) { while (n--) put8(0); }

uint8_t sum8(const uint8_t *p, size_t n)
{
    uint8_t s = 0;
    while (n--)
        s += *p++;
    return s;
}

void tb_begin(const char *sig, uint8_t rev)
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
void fix_sum(uint64_t t)
{
    uint32_t len = phys[t + 4] | phys[t + 5] << 8 | phys[t + 6] << 16 | (uint32_t)phys[t + 7] << 24;
    if (len < 10 || len > PHYS_SIZE - t)
        return;
    phys[t + 9] = 0;
    phys[t + 9] = (uint8_t)-sum8(phys + t, len);
}

uint64_t tb_end(void)
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

void poke32(uint64_t pa, uint32_t v) { for (int i = 0; i < 4; i++) phys[pa + i] = v >> (8 * i); }

/* ---- machine description ------------------------------------------- */


/* Where the last build put each table, for the corruption tests. */
uint64_t t_rsdp, t_rsdt, t_xsdt, t_fadt, t_dsdt, t_madt, t_hpet, t_srat, t_slit;

const uint8_t default_aml[] = {
    0x10, 0x05, '_', 'S', 'B', '_',             /* junk before */
    0x08, '_', 'S', '5', '_', 0x12, 0x08, 0x04, 0x0A, 0x05, 0x0A, 0x06, 0x00, 0x00,
};

uint64_t build_dsdt(const struct machine *m)
{
    tb_begin("DSDT", 2);
    if (m->aml)
        putn(m->aml, m->aml_len);
    else
        putn(default_aml, sizeof default_aml);
    return tb_end();
}

uint64_t build_fadt(const struct machine *m)
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

uint64_t build_madt(const struct machine *m)
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

uint64_t build_hpet(void)
{
    tb_begin("HPET", 1);
    put32(0x8086A201);
    put8(0); put8(64); put8(0); put8(0); put64(0xFED00000);
    put8(0); put16(0x80); put8(0);
    return tb_end();
}

uint64_t build_srat(const struct machine *m)
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

uint64_t build_slit(const struct machine *m)
{
    tb_begin("SLIT", 1);
    put64(m->slit_n);
    for (int i = 0; i < m->slit_n; i++)
        for (int j = 0; j < m->slit_n; j++)
            put8(m->slit[i][j]);
    return tb_end();
}

uint64_t build_root(const char *sig, const uint64_t *t, int n, int esize)
{
    tb_begin(sig, 1);
    for (int i = 0; i < n; i++)
        esize == 8 ? put64(t[i]) : put32((uint32_t)t[i]);
    return tb_end();
}

void build_rsdp(uint8_t rev)
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
uint64_t build(const struct machine *m, uint8_t rsdp_rev)
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

struct acpi_info ai;

int parse(uint64_t rsdp)
{
    return acpi_parse(rsdp, NULL, map_phys, &ai);
}

/* ---- machine presets ----------------------------------------------- */


/* 4 CPUs, 2 nodes of 256 MiB, distance 20: the "default" preset. */
void machine_default(struct machine *m)
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
void machine_hector(struct machine *m)
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

const struct mmap_range usable_512m[] = {
    { 0, 0x9FC00 }, { 0x100000, 512 * MiB },
};
