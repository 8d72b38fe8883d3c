/* Kernel page tables: the direct map of physical memory. */
#ifndef KERN_VM_PMAP_H
#define KERN_VM_PMAP_H

#include <kern/lib/types.h>

#define PTE_P    0x001UL
#define PTE_W    0x002UL
#define PTE_U    0x004UL
#define PTE_PWT  0x008UL
#define PTE_PCD  0x010UL
#define PTE_A    0x020UL      /* accessed: set by the CPU */
#define PTE_D    0x040UL      /* dirty: set by the CPU at a write */
#define PTE_PS   0x080UL
#define PTE_G    0x100UL
#define PTE_NX   (1UL << 63)
#define PTE_ADDR 0x000FFFFFFFFFF000UL

/* The kernel's top-level table (boot_pml4) as a physical address. */
paddr_t pmap_kernel_root(void);

/* Early page allocator: hands out zeroed pages from usable RAM above the
 * kernel image, below 1 GiB, before page_init.  Records what it used. */
void *early_alloc_page(void);
void early_alloc_range(paddr_t *start, paddr_t *end);
/* From now on early_alloc_page takes pages from the page allocator. */
void early_alloc_finish(void);

/* Extend the direct map to cover [0, max(end, 4 GiB)).  The 3-4 GiB hole
 * is mapped uncached for device registers. */
void pmap_init(paddr_t phys_end);

#endif
