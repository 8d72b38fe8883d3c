/*
 * Host unit tests for drivers/platform/acpi.c on broken firmware: the tables of
 * acpi_fake.c are broken one way at a time (checksums, lengths,
 * signatures, values) and each breakage must be reported and the table
 * ignored, never trusted in part; then random corruption (fuzzing).
 */
#include "unit.h"
#include "acpi_fake.h"

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
    RUN(t_fuzz_tables);
    phys_reset();
    free(phys);
    return test_summary("test_acpi_bad");
}
