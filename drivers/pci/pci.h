/*
 * PCI configuration space (mechanism #1, ports 0xCF8/0xCFC) and a table of
 * the functions found at boot.  See drivers/pci/pci.c for the theory.
 */
#ifndef DRIVERS_PCI_H
#define DRIVERS_PCI_H

#include <kern/lib/types.h>

#define PCI_MAX_DEVS 64

/* Standard configuration registers (type 0 header). */
#define PCI_VENDOR      0x00
#define PCI_DEVICE      0x02
#define PCI_COMMAND     0x04
#define PCI_STATUS      0x06
#define PCI_CLASS_REV   0x08
#define PCI_HEADER_TYPE 0x0E
#define PCI_BAR0        0x10
#define PCI_SECONDARY_BUS 0x19  /* type 1 (bridge) header */
#define PCI_SUBSYS_ID   0x2E
#define PCI_CAP_PTR     0x34
#define PCI_INTR_LINE   0x3C
#define PCI_INTR_PIN    0x3D

#define PCI_CMD_IO      0x0001
#define PCI_CMD_MEM     0x0002
#define PCI_CMD_MASTER  0x0004
#define PCI_CMD_INTX_DISABLE 0x0400
#define PCI_STATUS_CAPS 0x0010

#define PCI_CAP_MSI     0x05
#define PCI_CAP_VENDOR  0x09
#define PCI_CAP_MSIX    0x11

struct pci_bar {
    uint64_t base;          /* port number (io) or physical address (memory); 0: unused */
    uint64_t size;          /* bytes decoded; 0: unimplemented */
    bool io;                /* I/O-space BAR */
    bool prefetch;          /* memory BAR: prefetchable */
    bool is64;              /* memory BAR: 64-bit (takes two slots) */
};

/* One function.  Filled by pci_scan on the boot CPU before drivers probe,
 * read-only afterwards (no lock: [boot]). */
struct pci_dev {
    uint8_t bus, dev, fn;
    uint16_t vendor, device;
    uint16_t subsys;        /* subsystem id (virtio legacy: the device type) */
    uint8_t class_code, subclass, progif, revision;
    uint8_t header_type;    /* without the multi-function bit */
    uint8_t irq_line;       /* config 0x3C as firmware left it; 0xFF: none */
    uint8_t irq_pin;        /* 0 none, 1..4 INTA..INTD */
    uint8_t cap_ptr;        /* first capability, 0 if none */
    uint8_t secondary_bus;  /* bridges: the bus behind it (0: none or not a bridge) */
    struct pci_bar bar[6];
    bool claimed;           /* [boot] a driver took it */
};

/* Raw configuration access (any function, present or not). */
uint32_t pci_cfg_read32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off);
uint16_t pci_cfg_read16(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off);
uint8_t  pci_cfg_read8(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off);
void pci_cfg_write32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off, uint32_t v);
void pci_cfg_write16(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off, uint16_t v);

/* The same for a scanned device. */
uint32_t pci_read32(const struct pci_dev *d, uint8_t off);
uint16_t pci_read16(const struct pci_dev *d, uint8_t off);
uint8_t  pci_read8(const struct pci_dev *d, uint8_t off);
void pci_write32(const struct pci_dev *d, uint8_t off, uint32_t v);
void pci_write16(const struct pci_dev *d, uint8_t off, uint16_t v);

/* Scan the hierarchy from bus 0 depth first, then any bus not reached
 * (once; later calls return the cached count).  Table order is physical
 * order: see drivers/pci/pci.c. */
int pci_scan(void);
int pci_count(void);
struct pci_dev *pci_get(int i);
/* The n-th (0-based) function with this vendor/device, or NULL. */
struct pci_dev *pci_find(uint16_t vendor, uint16_t device, int n);
/* Offset of the first capability with this id, or 0. */
uint8_t pci_find_cap(const struct pci_dev *d, uint8_t cap_id);
/* The GSI of a legacy INTx interrupt line (config 0x3C), with its trigger
 * and polarity: PCI's level-triggered, active-low, unless the MADT has an
 * interrupt source override for that ISA IRQ, whose settings win (QEMU's
 * i440fx lists 5, 9, 10 and 11 as level, active-high). */
uint32_t pci_line_to_gsi(uint8_t line, bool *level, bool *low);
/* Set bits in the command register (e.g. PCI_CMD_IO | PCI_CMD_MASTER). */
void pci_enable(const struct pci_dev *d, uint16_t cmd_bits);
/* Print one line per function. */
void pci_print(void);

#endif
