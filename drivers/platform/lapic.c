/*
 * Local APIC.
 *
 * x2APIC is used when CPUID says the processor has it (registers are MSRs
 * 0x800 + reg/16, the ICR is one 64-bit MSR, APIC IDs are 32 bits);
 * otherwise xAPIC through the direct map of its MMIO page.  The choice is
 * made on the boot CPU and every CPU follows it.
 *
 * The timer runs one-shot on every CPU: the clock (kern/arch/smp.c) arms
 * each expiry, the next tick or an earlier callout, so a timed sleep ends
 * when it is due rather than at the next tick.  Its rate is calibrated
 * once on the boot CPU against the reference clock.
 */
#include <drivers/platform/lapic.h>
#include <drivers/platform/timer.h>
#include <kern/arch/arch.h>
#include <kern/arch/trap.h>
#include <kern/lib/kprintf.h>

#define REG_ID       0x020
#define REG_VERSION  0x030
#define REG_TPR      0x080
#define REG_EOI      0x0B0
#define REG_SVR      0x0F0
#define REG_ESR      0x280
#define REG_ICR_LO   0x300
#define REG_ICR_HI   0x310
#define REG_LVT_TIMER 0x320
#define REG_LVT_LINT0 0x350
#define REG_LVT_LINT1 0x360
#define REG_LVT_ERROR 0x370
#define REG_TIMER_INIT 0x380
#define REG_TIMER_CUR  0x390
#define REG_TIMER_DIV  0x3E0

#define APIC_BASE_ENABLE (1UL << 11)
#define APIC_BASE_X2     (1UL << 10)

/* Written by the boot CPU before the APs start; read-only afterwards. */
static volatile uint32_t *xapic;    /* [boot] MMIO registers (xAPIC mode) */
static bool use_x2apic;             /* [boot] */
static bool ready;                  /* [boot] */
static uint32_t timer_ticks_per_ms; /* [boot] calibrated on the boot CPU */

static uint32_t lapic_read(uint32_t reg)
{
    if (use_x2apic)
        return (uint32_t)rdmsr(0x800 + reg / 16);
    return xapic[reg / 4];
}

static void lapic_write(uint32_t reg, uint32_t v)
{
    if (use_x2apic)
        wrmsr(0x800 + reg / 16, v);
    else
        xapic[reg / 4] = v;
}

bool lapic_ready(void) { return ready; }
bool lapic_x2apic(void) { return use_x2apic; }

static bool cpu_has_x2apic(void)
{
    uint32_t a, b, c, d;
    cpuid(1, 0, &a, &b, &c, &d);
    return c & (1u << 21);
}

void lapic_init(paddr_t phys)
{
    if (!ready) {
        /* First call (boot CPU): choose the mode for everyone. */
        use_x2apic = cpu_has_x2apic();
        xapic = phys_to_virt(phys ? phys : 0xFEE00000);
    }
    uint64_t base = rdmsr(MSR_APIC_BASE) | APIC_BASE_ENABLE;
    if (use_x2apic)
        base |= APIC_BASE_X2;
    wrmsr(MSR_APIC_BASE, base);
    lapic_write(REG_TPR, 0);
    lapic_write(REG_LVT_LINT0, 1 << 16);        /* masked */
    lapic_write(REG_LVT_LINT1, 1 << 16);
    lapic_write(REG_LVT_ERROR, 1 << 16);
    lapic_write(REG_ESR, 0);
    lapic_write(REG_SVR, 0x100 | VEC_SPURIOUS); /* enable */
    lapic_eoi();
    ready = true;
}

uint32_t lapic_id(void)
{
    if (use_x2apic)
        return lapic_read(REG_ID);
    return lapic_read(REG_ID) >> 24;
}

void lapic_eoi(void)
{
    lapic_write(REG_EOI, 0);
}

static void icr_wait(void)
{
    if (use_x2apic)
        return;
    for (int i = 0; i < 1000000 && (lapic_read(REG_ICR_LO) & (1 << 12)); i++)
        cpu_relax();
}

/* One IPI.  The xAPIC's two writes go with interrupts off: an interrupt
 * handler that sends an IPI of its own (a pvspin kick from a lock's
 * hand-off) between them would leave this one the wrong destination. */
static void icr_send(uint32_t dest, uint32_t lo)
{
    if (use_x2apic) {
        wrmsr(0x830, ((uint64_t)dest << 32) | lo);
        return;
    }
    uint64_t f = intr_save();
    icr_wait();
    lapic_write(REG_ICR_HI, dest << 24);
    lapic_write(REG_ICR_LO, lo);
    icr_wait();
    intr_restore(f);
}

void lapic_send_ipi(uint32_t apic_id, int vector)
{
    icr_send(apic_id, (uint32_t)vector | (1 << 14));    /* fixed, assert */
}

void lapic_send_ipi_all_but_self(int vector)
{
    icr_send(0, (uint32_t)vector | (1 << 14) | (3 << 18));
}

void lapic_send_nmi(uint32_t apic_id)
{
    icr_send(apic_id, 0x4400);                          /* NMI, assert */
}

void lapic_send_init(uint32_t apic_id)
{
    icr_send(apic_id, 0x4500);                          /* INIT, assert */
}

void lapic_send_sipi(uint32_t apic_id, int page)
{
    icr_send(apic_id, 0x4600 | (uint32_t)page);         /* STARTUP */
}

void lapic_timer_calibrate(void)
{
    lapic_write(REG_TIMER_DIV, 0x3);                    /* divide by 16 */
    lapic_write(REG_LVT_TIMER, 1 << 16);                /* masked, one-shot */
    lapic_write(REG_TIMER_INIT, 0xFFFFFFFF);
    clock_spin_us(10000);
    uint32_t elapsed = 0xFFFFFFFF - lapic_read(REG_TIMER_CUR);
    lapic_write(REG_TIMER_INIT, 0);
    timer_ticks_per_ms = elapsed / 10;
    if (timer_ticks_per_ms == 0)
        timer_ticks_per_ms = 1000;
    kprintf("lapic: %s, timer %u ticks/ms\n", use_x2apic ? "x2apic" : "xapic", timer_ticks_per_ms);
}

void lapic_timer_oneshot(void)
{
    lapic_write(REG_TIMER_DIV, 0x3);                    /* divide by 16 */
    lapic_write(REG_LVT_TIMER, VEC_TIMER);              /* one-shot, unmasked */
}

void lapic_timer_arm(uint64_t ns)
{
    /* Rounded up, so the interrupt never comes before ns have passed. */
    uint64_t count = (ns * timer_ticks_per_ms + 999999) / 1000000;
    if (count == 0)
        count = 1;
    if (count > 0xFFFFFFFFu)
        count = 0xFFFFFFFFu;
    lapic_write(REG_TIMER_INIT, (uint32_t)count);
}
