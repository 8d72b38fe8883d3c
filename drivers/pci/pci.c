/*
 * PCI enumeration.
 *
 * Theory.  Configuration mechanism #1: write the address of a dword
 * (enable bit, bus, device, function, register) to port 0xCF8, then read
 * or write the dword at 0xCFC.  The two accesses must not interleave with
 * another CPU's, so every access holds pci_cfg_lock (a spin lock; short,
 * and interrupt handlers could in principle use it).
 *
 * pci_scan walks the hierarchy depth first from bus 0: devices 0..31 in
 * order, function 0 always and functions 1..7 only when function 0's
 * header says multi-function; a PCI-to-PCI bridge (header type 1) is
 * descended into at once, through the secondary bus number the firmware
 * programmed (config 0x19).  The table is therefore in physical order --
 * bus 0 slot by slot, each bridge's subtree where the bridge sits -- which
 * is the order the harness attaches disks in, so the first disk on the
 * QEMU command line is found first and named vda whatever bus numbers the
 * firmware handed out.  A visited bitmap stops a misprogrammed bridge from
 * looping; afterwards every bus not reached is tried by brute force in
 * number order, so functions behind a second host bridge are still found.
 * For each function it records ids, class, the BARs (sized by writing all
 * ones and reading back, with decoding turned off meanwhile, then
 * restoring), the capability pointer, the legacy INTx line/pin from
 * config 0x3C/0x3D, and for bridges the secondary bus.  The table is
 * filled on the boot path before any driver looks at it and is read-only
 * afterwards, so reading it needs no lock.  ACPI _PRT is not parsed:
 * drivers take irq_line as the ISA IRQ / GSI the firmware routed the pin
 * to (SeaBIOS swizzles the pins of devices behind bridges for us).
 *
 * Locks: pci_cfg (spin, leaf apart from the held-stack bookkeeping).
 */
#include <drivers/pci/pci.h>
#include <drivers/platform/acpi.h>
#include <kern/arch/arch.h>
#include <kern/lock/spinlock.h>
#include <kern/lib/kprintf.h>

LOCK_CLASS(pci_cfg_class, "pci_cfg", LK_SPIN);
static spinlock_t pci_cfg_lock = SPINLOCK_INIT(&pci_cfg_class);

static struct pci_dev pci_devs[PCI_MAX_DEVS];   /* [boot] */
static int pci_ndevs = -1;                      /* [boot] -1 until scanned */

static uint32_t cfg_addr(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off)
{
    return 0x80000000u | ((uint32_t)bus << 16) | ((uint32_t)(dev & 31) << 11) |
           ((uint32_t)(fn & 7) << 8) | (off & 0xFC);
}

uint32_t pci_cfg_read32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off)
{
    spin_lock(&pci_cfg_lock);
    outl(0xCF8, cfg_addr(bus, dev, fn, off));
    uint32_t v = inl(0xCFC);
    spin_unlock(&pci_cfg_lock);
    return v;
}

uint16_t pci_cfg_read16(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off)
{
    return (uint16_t)(pci_cfg_read32(bus, dev, fn, off) >> ((off & 2) * 8));
}

uint8_t pci_cfg_read8(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off)
{
    return (uint8_t)(pci_cfg_read32(bus, dev, fn, off) >> ((off & 3) * 8));
}

void pci_cfg_write32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off, uint32_t v)
{
    spin_lock(&pci_cfg_lock);
    outl(0xCF8, cfg_addr(bus, dev, fn, off));
    outl(0xCFC, v);
    spin_unlock(&pci_cfg_lock);
}

void pci_cfg_write16(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off, uint16_t v)
{
    spin_lock(&pci_cfg_lock);
    outl(0xCF8, cfg_addr(bus, dev, fn, off));
    outw((uint16_t)(0xCFC + (off & 2)), v);
    spin_unlock(&pci_cfg_lock);
}

uint32_t pci_read32(const struct pci_dev *d, uint8_t off) { return pci_cfg_read32(d->bus, d->dev, d->fn, off); }
uint16_t pci_read16(const struct pci_dev *d, uint8_t off) { return pci_cfg_read16(d->bus, d->dev, d->fn, off); }
uint8_t pci_read8(const struct pci_dev *d, uint8_t off) { return pci_cfg_read8(d->bus, d->dev, d->fn, off); }
void pci_write32(const struct pci_dev *d, uint8_t off, uint32_t v) { pci_cfg_write32(d->bus, d->dev, d->fn, off, v); }
void pci_write16(const struct pci_dev *d, uint8_t off, uint16_t v) { pci_cfg_write16(d->bus, d->dev, d->fn, off, v); }

static void size_bars(struct pci_dev *d)
{
    int nbars = d->header_type == 0 ? 6 : d->header_type == 1 ? 2 : 0;
    uint16_t cmd = pci_read16(d, PCI_COMMAND);
    pci_write16(d, PCI_COMMAND, cmd & (uint16_t)~(PCI_CMD_IO | PCI_CMD_MEM));
    for (int i = 0; i < nbars; i++) {
        uint8_t off = (uint8_t)(PCI_BAR0 + 4 * i);
        uint32_t orig = pci_read32(d, off);
        pci_write32(d, off, 0xFFFFFFFFu);
        uint32_t mask = pci_read32(d, off);
        pci_write32(d, off, orig);
        struct pci_bar *b = &d->bar[i];
        if (orig & 1) {
            b->io = true;
            b->base = orig & ~3u;
            uint32_t m = mask & ~3u & 0xFFFF;
            b->size = m ? (uint64_t)((~m + 1) & 0xFFFF) : 0;
            continue;
        }
        b->prefetch = (orig & 8) != 0;
        b->is64 = ((orig >> 1) & 3) == 2;
        uint64_t base = orig & ~0xFull, m = mask & ~0xFull;
        if (b->is64 && i + 1 < nbars) {
            uint8_t off2 = (uint8_t)(off + 4);
            uint32_t orig2 = pci_read32(d, off2);
            pci_write32(d, off2, 0xFFFFFFFFu);
            uint32_t mask2 = pci_read32(d, off2);
            pci_write32(d, off2, orig2);
            base |= (uint64_t)orig2 << 32;
            m |= (uint64_t)mask2 << 32;
            b->base = base;
            b->size = m ? ~m + 1 : 0;
            i++;        /* the upper half is not a BAR of its own */
            continue;
        }
        b->base = base;
        b->size = m ? (uint32_t)(~(uint32_t)m + 1) : 0;
    }
    pci_write16(d, PCI_COMMAND, cmd);
}

static struct pci_dev *add_fn(uint8_t bus, uint8_t dev, uint8_t fn)
{
    if (pci_ndevs >= PCI_MAX_DEVS) {
        kprintf("pci: more than %d functions; %02x:%02x.%x ignored\n", PCI_MAX_DEVS, bus, dev, fn);
        return NULL;
    }
    struct pci_dev *d = &pci_devs[pci_ndevs++];
    uint32_t id = pci_cfg_read32(bus, dev, fn, PCI_VENDOR);
    uint32_t cr = pci_cfg_read32(bus, dev, fn, PCI_CLASS_REV);
    d->bus = bus; d->dev = dev; d->fn = fn;
    d->vendor = (uint16_t)id;
    d->device = (uint16_t)(id >> 16);
    d->revision = (uint8_t)cr;
    d->progif = (uint8_t)(cr >> 8);
    d->subclass = (uint8_t)(cr >> 16);
    d->class_code = (uint8_t)(cr >> 24);
    d->header_type = pci_read8(d, PCI_HEADER_TYPE) & 0x7F;
    d->subsys = d->header_type == 0 ? pci_read16(d, PCI_SUBSYS_ID) : 0;
    d->irq_line = pci_read8(d, PCI_INTR_LINE);
    d->irq_pin = pci_read8(d, PCI_INTR_PIN);
    d->cap_ptr = (pci_read16(d, PCI_STATUS) & PCI_STATUS_CAPS) ? (pci_read8(d, PCI_CAP_PTR) & 0xFC) : 0;
    d->secondary_bus = d->header_type == 1 ? pci_read8(d, PCI_SECONDARY_BUS) : 0;
    size_bars(d);
    return d;
}

static uint8_t bus_seen[256 / 8];       /* [boot] buses walked */

static void scan_bus(uint8_t bus, int depth)
{
    if (bus_seen[bus / 8] & (1u << (bus % 8)))
        return;
    bus_seen[bus / 8] |= (uint8_t)(1u << (bus % 8));
    for (int dev = 0; dev < 32; dev++) {
        uint16_t v = pci_cfg_read16(bus, (uint8_t)dev, 0, PCI_VENDOR);
        if (v == 0xFFFF || v == 0)
            continue;
        uint8_t ht = pci_cfg_read8(bus, (uint8_t)dev, 0, PCI_HEADER_TYPE);
        int nfn = (ht & 0x80) ? 8 : 1;
        for (int fn = 0; fn < nfn; fn++) {
            if (fn && pci_cfg_read16(bus, (uint8_t)dev, (uint8_t)fn, PCI_VENDOR) == 0xFFFF)
                continue;
            struct pci_dev *d = add_fn(bus, (uint8_t)dev, (uint8_t)fn);
            /* A bridge's subtree comes right after it.  The depth bound
             * only keeps a hostile chain of bridges off the stack. */
            if (d && d->header_type == 1 && d->secondary_bus > bus && depth < 16)
                scan_bus(d->secondary_bus, depth + 1);
        }
    }
}

int pci_scan(void)
{
    if (pci_ndevs >= 0)
        return pci_ndevs;
    pci_ndevs = 0;
    scan_bus(0, 0);
    for (int bus = 1; bus < 256; bus++)
        scan_bus((uint8_t)bus, 0);
    return pci_ndevs;
}

int pci_count(void)
{
    return pci_ndevs < 0 ? 0 : pci_ndevs;
}

struct pci_dev *pci_get(int i)
{
    return i >= 0 && i < pci_count() ? &pci_devs[i] : NULL;
}

struct pci_dev *pci_find(uint16_t vendor, uint16_t device, int n)
{
    for (int i = 0; i < pci_count(); i++)
        if (pci_devs[i].vendor == vendor && pci_devs[i].device == device && n-- == 0)
            return &pci_devs[i];
    return NULL;
}

uint8_t pci_find_cap(const struct pci_dev *d, uint8_t cap_id)
{
    uint8_t p = d->cap_ptr;
    for (int guard = 0; p >= 0x40 && guard < 48; guard++) {    /* a looping list must end */
        uint16_t w = pci_read16(d, p);
        if ((w & 0xFF) == cap_id)
            return p;
        p = (uint8_t)(w >> 8) & 0xFC;
    }
    return 0;
}

void pci_enable(const struct pci_dev *d, uint16_t cmd_bits)
{
    uint16_t cmd = pci_read16(d, PCI_COMMAND);
    pci_write16(d, PCI_COMMAND, cmd | cmd_bits);
}

void pci_print(void)
{
    for (int i = 0; i < pci_count(); i++) {
        const struct pci_dev *d = &pci_devs[i];
        kprintf("pci: %02x:%02x.%x %04x:%04x class %02x.%02x.%02x irq %u pin %u",
                d->bus, d->dev, d->fn, d->vendor, d->device, d->class_code, d->subclass,
                d->progif, d->irq_line, d->irq_pin);
        for (int b = 0; b < 6; b++)
            if (d->bar[b].size)
                kprintf(" bar%d %s 0x%lx/0x%lx", b, d->bar[b].io ? "io" : "mem", d->bar[b].base, d->bar[b].size);
        kprintf("\n");
    }
}

uint32_t pci_line_to_gsi(uint8_t line, bool *level, bool *low)
{
    uint32_t gsi = line;
    *level = true;
    *low = true;
    for (int i = 0; i < acpi.noverrides; i++) {
        if (acpi.override[i].irq != line)
            continue;
        uint16_t fl = acpi.override[i].flags;
        gsi = acpi.override[i].gsi;
        if ((fl & ACPI_INTI_POLARITY_MASK) == 1)
            *low = false;
        if ((fl & ACPI_INTI_TRIGGER_MASK) == 4)
            *level = false;
    }
    return gsi;
}
