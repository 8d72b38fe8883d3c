/*
 * The kernel half of the address space.
 *
 * boot/entry.asm maps the first 1 GiB three times with 2 MiB pages.  Here
 * we extend the direct map at DIRECT_MAP to all RAM and to the 3-4 GiB
 * device hole (uncached), with 2 MiB pages in page directories taken from
 * the early allocator.  The identity map of low memory stays until the
 * application processors are online (their trampoline needs it).
 *
 * Runs on the boot CPU before any other CPU starts; nothing here is locked.
 */
#include <kern/vm/pmap.h>
#include <kern/arch/multiboot.h>
#include <kern/lib/kprintf.h>
#include <kern/arch/panic.h>
#include <kern/lib/string.h>
#include <kern/arch/arch.h>
#include <kern/vm/page.h>

extern uint64_t boot_pml4[512], boot_pdpt_low[512];
extern char _kernel_end[];

#define GiB (1UL << 30)
#define EARLY_LIMIT GiB

static paddr_t early_start, early_next;

/* The boot tables are linked at physical addresses; use them through the
 * direct map so nothing here depends on the identity map. */
static uint64_t *boot_pdpt_low_va(void)
{
    return phys_to_virt((paddr_t)boot_pdpt_low);
}

paddr_t pmap_kernel_root(void)
{
    return (paddr_t)boot_pml4;      /* linked at its physical address */
}

static bool usable_page(paddr_t pa)
{
    for (int i = 0; i < bootinfo.nranges; i++) {
        const struct mb_range *r = &bootinfo.range[i];
        if (r->type == 1 && pa >= r->base && pa + PAGE_SIZE <= r->base + r->len)
            return true;
    }
    return false;
}

static bool early_done;

void early_alloc_finish(void)
{
    early_done = true;
}

void *early_alloc_page(void)
{
    if (early_done) {
        void *va = page_alloc_zeroed_va();
        if (!va)
            panic("early_alloc_page: out of memory");
        return va;
    }
    if (!early_start)
        early_start = early_next = ALIGN_UP(virt_to_phys(_kernel_end), PAGE_SIZE);
    while (early_next < EARLY_LIMIT && !usable_page(early_next))
        early_next += PAGE_SIZE;
    if (early_next >= EARLY_LIMIT)
        panic("early_alloc_page: no usable memory below 1 GiB after the kernel");
    void *va = phys_to_virt(early_next);
    early_next += PAGE_SIZE;
    memset(va, 0, PAGE_SIZE);
    return va;
}

void early_alloc_range(paddr_t *start, paddr_t *end)
{
    *start = early_start;
    *end = early_next;
}

static void map_gib(uint64_t gib)
{
    uint64_t *pd = early_alloc_page();
    uint64_t nx = (rdmsr(MSR_EFER) & (1UL << 11)) ? PTE_NX : 0;   /* EFER.NXE */
    for (int i = 0; i < 512; i++) {
        paddr_t pa = gib * GiB + (uint64_t)i * (2UL << 20);
        uint64_t flags = PTE_P | PTE_W | PTE_PS | PTE_G | nx;
        if (pa >= 3 * GiB && pa < 4 * GiB)
            flags |= PTE_PCD | PTE_PWT;
        pd[i] = pa | flags;
    }
    boot_pdpt_low_va()[gib] = virt_to_phys(pd) | PTE_P | PTE_W;
}

void pmap_init(paddr_t phys_end)
{
    uint64_t top = ALIGN_UP(MAX(phys_end, 4 * GiB), GiB) / GiB;
    if (top > 512)
        top = 512;
    for (uint64_t g = 1; g < top; g++)
        map_gib(g);
    write_cr3(read_cr3());
}
