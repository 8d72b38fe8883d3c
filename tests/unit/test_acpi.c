/*
 * Host unit tests for drivers/platform/acpi.c (and, end to end, kern/arch/numa.c) on
 * good tables: synthetic firmware shaped like the machine presets (built
 * by acpi_fake.c) is parsed and the result checked, including the \_S5_
 * package in the AML.  The broken-table tests are in test_acpi_bad.c.
 */
#include "unit.h"
#include "acpi_fake.h"

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
    RUN(t_s5_variants);
    RUN(t_dsdt_without_s5);
    phys_reset();
    free(phys);
    return test_summary("test_acpi");
}
