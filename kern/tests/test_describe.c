/*
 * addr_describe (kern/vm/addr_describe.c), which names the object an
 * address lies in for the data-race detector's reports: a variable of
 * the kernel image, an entry of the page array, a heap object from a slab
 * or a block of whole pages, another page of RAM, and nothing at all.
 */
#include <kern/tests/ktest.h>
#include <kern/vm/addr_describe.h>
#include <kern/vm/kmem.h>
#include <kern/vm/kmem_debug.h>
#include <kern/vm/page.h>
#include <kern/lib/ksyms.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>

static long describe_var[4];        /* only its address is used */

/* Whether addr is described exactly as want. */
static bool described_as(uintptr_t addr, const char *want)
{
    char got[160];
    addr_describe(got, sizeof got, addr);
    if (strcmp(got, want) == 0)
        return true;
    kprintf("ktest: addr_describe(0x%lx) = \"%s\", expected \"%s\"\n", (unsigned long)addr,
            got, want);
    return false;
}

/* A heap object: a slab's under kmemdebug=on shows its requested size and
 * the site that allocated it (this test), else its size class's slot; a
 * block of whole pages always shows the block. */
static bool heap_described(void *p, size_t asked, size_t slot, size_t off)
{
    char want[160];
    bool debug = kmem_debug_on && asked <= 2048;
    int n = snprintf(want, sizeof want, "a %lu-byte heap %s at 0x%lx+0x%lx",
                     (unsigned long)(debug ? asked : slot), debug ? "object" : "slot",
                     (unsigned long)p, (unsigned long)off);
    if (debug) {
        char got[160];
        addr_describe(got, sizeof got, (uintptr_t)p + off);
        const char *site = ", allocated at ktest_fn_addr_describe_names+";
        return strncmp(got, want, (size_t)n) == 0 &&
               strncmp(got + n, site, strlen(site)) == 0;
    }
    return described_as((uintptr_t)p + off, want);
}

KTEST(addr_describe_names)
{
    char want[160];
    KT_ASSERT(described_as((uintptr_t)&describe_var[1], "the variable describe_var+0x8"));

    void *small = kmalloc(200), *big = kmalloc(3 * PAGE_SIZE);
    KT_ASSERT(small && big);
    KT_ASSERT(heap_described(small, 200, 256, 0x10));
    KT_ASSERT(heap_described(big, 3 * PAGE_SIZE, 4 * PAGE_SIZE, PAGE_SIZE + 0x20));
    kfree(small);
    kfree(big);

    struct page *pg = page_alloc(0);
    KT_ASSERT(pg != NULL);
    uint64_t pfn = page_to_pfn(pg);
    snprintf(want, sizeof want, "struct page of pfn %lu+0x%lx (flags 0x%x)", (unsigned long)pfn,
             (unsigned long)__builtin_offsetof(struct page, flags), (unsigned)page_flags(pg));
    KT_ASSERT(described_as((uintptr_t)&pg->flags, want));
    snprintf(want, sizeof want, "pfn %lu+0x18, a page of memory", (unsigned long)pfn);
    KT_ASSERT(described_as((uintptr_t)page_to_virt(pg) + 0x18, want));
    page_free(pg, 0);

    KT_ASSERT(described_as(0x1000, ""));               /* a user address */
    KT_ASSERT(described_as(DIRECT_MAP + (max_pfn << PAGE_SHIFT) + 64, ""));    /* past RAM */
    return 0;
}
