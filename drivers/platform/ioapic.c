/*
 * I/O APIC driver.  The 8259 PICs are masked and every I/O APIC pin starts
 * masked; drivers route the interrupts they use.  ISA IRQs go through the
 * MADT's interrupt source overrides (e.g. the PIT's IRQ 0 is GSI 2 on PC
 * firmware).  Tables are set up on the boot CPU; ioapic_lock serializes
 * later routing changes.
 */
#include <drivers/platform/ioapic.h>
#include <drivers/platform/acpi.h>
#include <kern/arch/arch.h>
#include <kern/arch/rawlock.h>
#include <kern/lib/kprintf.h>

#define IOREGSEL 0x00
#define IOWIN    0x10
#define REG_VER  0x01
#define REG_REDIR(n) (0x10 + 2 * (n))

struct ioapic {
    volatile uint32_t *regs;    /* [boot]; the register window under ioapic_lock */
    uint32_t gsi_base;          /* [boot] */
    int npins;                  /* [boot] */
};

static struct ioapic ioapics[ACPI_MAX_IOAPICS];    /* [boot] */
static int nioapic;                                 /* [boot] */
static const struct acpi_info *acpi_tables;        /* [boot] */
static rawlock_t ioapic_lock = RAWLOCK_INIT;

static uint32_t io_read(struct ioapic *io, uint32_t reg)
{
    io->regs[IOREGSEL / 4] = reg;
    return io->regs[IOWIN / 4];
}

static void io_write(struct ioapic *io, uint32_t reg, uint32_t v)
{
    io->regs[IOREGSEL / 4] = reg;
    io->regs[IOWIN / 4] = v;
}

static void pic_disable(void)
{
    /* Remap the 8259s away from the exception vectors, then mask them. */
    outb(0x20, 0x11); outb(0xA0, 0x11);
    outb(0x21, 0x20); outb(0xA1, 0x28);
    outb(0x21, 0x04); outb(0xA1, 0x02);
    outb(0x21, 0x01); outb(0xA1, 0x01);
    outb(0x21, 0xFF); outb(0xA1, 0xFF);
}

void ioapic_init(const struct acpi_info *ai)
{
    acpi_tables = ai;
    pic_disable();
    for (int i = 0; i < ai->nioapics && nioapic < ACPI_MAX_IOAPICS; i++) {
        struct ioapic *io = &ioapics[nioapic];
        io->regs = phys_to_virt(ai->ioapic[i].phys);
        io->gsi_base = ai->ioapic[i].gsi_base;
        uint32_t ver = io_read(io, REG_VER);
        if (ver == 0xFFFFFFFF) {
            kprintf("ioapic: no I/O APIC answers at %lx, ignored\n", ai->ioapic[i].phys);
            continue;
        }
        io->npins = ((ver >> 16) & 0xFF) + 1;
        for (int p = 0; p < io->npins; p++) {
            io_write(io, REG_REDIR(p), 1 << 16);        /* masked */
            io_write(io, REG_REDIR(p) + 1, 0);
        }
        nioapic++;
    }
}

int ioapic_count(void)
{
    return nioapic;
}

bool ioapic_route_gsi(uint32_t gsi, int vector, uint32_t apic_id, bool level, bool active_low)
{
    for (int i = 0; i < nioapic; i++) {
        struct ioapic *io = &ioapics[i];
        if (gsi < io->gsi_base || gsi >= io->gsi_base + (uint32_t)io->npins)
            continue;
        int pin = (int)(gsi - io->gsi_base);
        uint32_t lo = (uint32_t)vector | (level ? 1 << 15 : 0) | (active_low ? 1 << 13 : 0);
        uint64_t f = rawlock_acquire_irqsave(&ioapic_lock);
        io_write(io, REG_REDIR(pin) + 1, apic_id << 24);
        io_write(io, REG_REDIR(pin), lo);
        rawlock_release_irqrestore(&ioapic_lock, f);
        return true;
    }
    return false;
}

bool ioapic_route_isa(int irq, int vector, uint32_t apic_id)
{
    uint32_t gsi = (uint32_t)irq;
    bool level = false, low = false;
    for (int i = 0; acpi_tables && i < acpi_tables->noverrides; i++) {
        if (acpi_tables->override[i].irq != irq)
            continue;
        uint16_t fl = acpi_tables->override[i].flags;
        gsi = acpi_tables->override[i].gsi;
        low = (fl & 3) == 3;
        level = ((fl >> 2) & 3) == 3;
    }
    return ioapic_route_gsi(gsi, vector, apic_id, level, low);
}
