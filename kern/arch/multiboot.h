/* What Tempest takes from the Multiboot2 boot information. */
#ifndef KERN_MULTIBOOT_H
#define KERN_MULTIBOOT_H

#include <kern/lib/types.h>

#define MB2_BOOTLOADER_MAGIC 0x36D76289
#define MB_MAX_RANGES 64

struct mb_range {
    uint64_t base, len;
    uint32_t type;      /* 1 = usable RAM, 3 = ACPI reclaimable, ... */
};

struct boot_info {
    char cmdline[512];
    char loader[64];
    int nranges;
    struct mb_range range[MB_MAX_RANGES];
    bool have_rsdp;
    uint8_t rsdp[64];           /* copy of the RSDP from tag 14 or 15 */
    paddr_t info_start, info_end;   /* where GRUB put the structure */
};

extern struct boot_info bootinfo;

/* Copy what we need out of the Multiboot2 structure at physical info.
 * Returns false (with a message) if the magic or structure is wrong. */
bool multiboot_parse(uint32_t magic, paddr_t info);

#endif
