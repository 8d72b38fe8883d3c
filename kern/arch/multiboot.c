/*
 * Multiboot2 boot information: the command line, the memory map and the
 * ACPI RSDP are copied into bootinfo before the memory they live in can be
 * reused.  Parsing is defensive: a tag whose size runs past the structure
 * ends the walk.  Runs once on the boot CPU; bootinfo is read-only after.
 */
#include <kern/arch/multiboot.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>

struct boot_info bootinfo;

struct mb2_tag {
    uint32_t type, size;
};

#define TAG_END         0
#define TAG_CMDLINE     1
#define TAG_LOADER      2
#define TAG_MMAP        6
#define TAG_RSDP_OLD    14
#define TAG_RSDP_NEW    15

static void copy_string(char *dst, size_t n, const struct mb2_tag *t)
{
    size_t len = t->size > 8 ? t->size - 8 : 0;
    const char *src = (const char *)(t + 1);
    len = strnlen(src, len);
    if (len >= n)
        len = n - 1;
    memcpy(dst, src, len);
    dst[len] = 0;
}

static void copy_mmap(const struct mb2_tag *t)
{
    const uint32_t *hdr = (const uint32_t *)(t + 1);
    uint32_t entry_size = hdr[0];
    const uint8_t *p = (const uint8_t *)(hdr + 2);
    const uint8_t *end = (const uint8_t *)t + t->size;
    if (entry_size < 24)
        return;
    for (; p + 24 <= end && bootinfo.nranges < MB_MAX_RANGES; p += entry_size) {
        struct mb_range *r = &bootinfo.range[bootinfo.nranges++];
        memcpy(&r->base, p, 8);
        memcpy(&r->len, p + 8, 8);
        memcpy(&r->type, p + 16, 4);
    }
}

static void copy_rsdp(const struct mb2_tag *t, bool is_new)
{
    size_t len = t->size - 8;
    if (bootinfo.have_rsdp && !is_new)
        return;                 /* prefer the v2 copy */
    if (len > sizeof bootinfo.rsdp)
        len = sizeof bootinfo.rsdp;
    memcpy(bootinfo.rsdp, t + 1, len);
    bootinfo.have_rsdp = true;
}

bool multiboot_parse(uint32_t magic, paddr_t info)
{
    if (magic != MB2_BOOTLOADER_MAGIC) {
        kprintf("multiboot: bad magic %x, not booted by a Multiboot2 loader\n", magic);
        return false;
    }
    const uint8_t *base = phys_to_virt(info);
    uint32_t total = *(const uint32_t *)base;
    bootinfo.info_start = info;
    bootinfo.info_end = info + total;
    const uint8_t *p = base + 8, *end = base + total;
    while (p + 8 <= end) {
        const struct mb2_tag *t = (const struct mb2_tag *)p;
        if (t->size < 8 || p + t->size > end || t->type == TAG_END)
            break;
        switch (t->type) {
        case TAG_CMDLINE:
            copy_string(bootinfo.cmdline, sizeof bootinfo.cmdline, t);
            break;
        case TAG_LOADER:
            copy_string(bootinfo.loader, sizeof bootinfo.loader, t);
            break;
        case TAG_MMAP:
            copy_mmap(t);
            break;
        case TAG_RSDP_OLD:
        case TAG_RSDP_NEW:
            copy_rsdp(t, t->type == TAG_RSDP_NEW);
            break;
        }
        p += ALIGN_UP(t->size, 8);
    }
    return true;
}
