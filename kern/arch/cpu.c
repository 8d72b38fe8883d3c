/*
 * Per-CPU descriptor tables: each processor has its own GDT (with its own
 * TSS descriptor), TSS and IDT inside its struct cpu.  The IDT contents are
 * the same everywhere (trap_vectors[] from boot/isr.asm); a copy per CPU
 * keeps each CPU's table on its own node's lines and lets a later issue
 * give one CPU a different gate without touching the others.
 */
#include <kern/arch/cpu.h>
#include <kern/arch/arch.h>
#include <kern/lib/string.h>
#include <kern/arch/trap.h>

struct cpu cpus[MAX_CPUS];
int ncpus = 1;
volatile int ncpus_online;

static uint8_t ist_stacks[MAX_CPUS][2][IST_STACK_SIZE] __aligned(16);

struct descptr {
    uint16_t limit;
    uint64_t base;
} __packed;

static void gdt_fill(struct cpu *c)
{
    c->gdt[0] = 0;
    c->gdt[GDT_KCODE] = 0x00AF9A000000FFFFUL;   /* 64-bit, DPL 0 */
    c->gdt[GDT_KDATA] = 0x00CF92000000FFFFUL;
    c->gdt[GDT_UDATA] = 0x00CFF2000000FFFFUL;   /* DPL 3 */
    c->gdt[GDT_UCODE] = 0x00AFFA000000FFFFUL;
    uint64_t base = (uint64_t)&c->tss, limit = sizeof c->tss - 1;
    c->gdt[GDT_TSS] = (limit & 0xFFFF) | ((base & 0xFFFFFF) << 16) |
                      (0x89UL << 40) | (((limit >> 16) & 0xF) << 48) |
                      (((base >> 24) & 0xFF) << 56);
    c->gdt[GDT_TSS + 1] = base >> 32;
}

static void set_gate(struct gatedesc *g, uint64_t handler, int ist, int dpl)
{
    g->off_lo = handler & 0xFFFF;
    g->sel = SEL_KCODE;
    g->ist = ist;
    g->type = 0x8E | (dpl << 5);        /* present, interrupt gate */
    g->off_mid = (handler >> 16) & 0xFFFF;
    g->off_hi = handler >> 32;
    g->reserved = 0;
}

static void idt_fill(struct cpu *c)
{
    for (int v = 0; v < 256; v++) {
        int ist = (v == T_DOUBLE) ? 1 : (v == T_NMI) ? 2 : 0;
        set_gate(&c->idt[v], trap_vectors[v], ist, v == T_BREAKPOINT ? 3 : 0);
    }
}

static void load_tables(struct cpu *c)
{
    struct descptr gp = { sizeof c->gdt - 1, (uint64_t)c->gdt };
    struct descptr ip = { sizeof c->idt - 1, (uint64_t)c->idt };
    __asm__ volatile(
        "lgdt %0\n\t"
        "pushq %1\n\t"
        "leaq 1f(%%rip), %%rax\n\t"
        "pushq %%rax\n\t"
        "lretq\n"
        "1:\n\t"
        "movw %w2, %%ax\n\t"
        "movw %%ax, %%ds\n\t"
        "movw %%ax, %%es\n\t"
        "movw %%ax, %%ss\n\t"
        :: "m"(gp), "i"(SEL_KCODE), "i"(SEL_KDATA) : "rax", "memory");
    __asm__ volatile("lidt %0" :: "m"(ip));
    __asm__ volatile("ltr %w0" :: "r"(SEL_TSS));
}

void cpu_init_tables(struct cpu *c)
{
    c->self = c;
    memset(&c->tss, 0, sizeof c->tss);
    c->tss.ist[0] = (uint64_t)&ist_stacks[c->id][0][IST_STACK_SIZE];
    c->tss.ist[1] = (uint64_t)&ist_stacks[c->id][1][IST_STACK_SIZE];
    c->tss.iomap_base = sizeof c->tss;
    gdt_fill(c);
    idt_fill(c);
    load_tables(c);
    /* Segment loads clear the GS base; set it last. */
    wrmsr(MSR_GS_BASE, (uint64_t)c);
    wrmsr(MSR_KGS_BASE, 0);
}

void cpu_early_init(void)
{
    cpus[0].self = &cpus[0];
    cpus[0].id = 0;
    wrmsr(MSR_GS_BASE, (uint64_t)&cpus[0]);
}
