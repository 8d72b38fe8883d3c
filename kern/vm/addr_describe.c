/*
 * Naming the object an address lies in (see addr_describe.h): a variable
 * of the kernel image (the data table kern/lib/ksyms.c keeps beside the
 * functions), an entry of the page array, a heap object (kern/vm/kmem.c),
 * or at least the page of RAM.  Nothing is locked: the answer describes
 * the memory as it was when looked at, which is what a report about a
 * moment in the past can have.
 */
#include <kern/vm/addr_describe.h>
#include <kern/vm/kmem.h>
#include <kern/vm/page.h>
#include <kern/lib/ksyms.h>
#include <kern/lib/kprintf.h>

static bool in_page_array(uintptr_t addr)
{
    uintptr_t first = (uintptr_t)page_array;
    return page_array && addr >= first && addr < first + max_pfn * sizeof(struct page);
}

static int describe_page_entry(char *buf, size_t n, uintptr_t addr)
{
    uintptr_t rel = addr - (uintptr_t)page_array;
    uint64_t pfn = rel / sizeof(struct page);
    return snprintf(buf, n, "struct page of pfn %lu+0x%lx (flags 0x%x)", (unsigned long)pfn,
                    (unsigned long)(rel % sizeof(struct page)),
                    (unsigned)page_flags(pfn_to_page(pfn)));
}

static int describe_heap(char *buf, size_t n, uintptr_t addr, const struct kmem_object *o)
{
    int len = snprintf(buf, n, "a %lu-byte heap %s at 0x%lx+0x%lx", (unsigned long)o->size,
                       o->site ? "object" : "slot", (unsigned long)o->start,
                       (unsigned long)(addr - o->start));
    if (o->site && (size_t)len < n) {
        len += snprintf(buf + len, n - (size_t)len, ", allocated at ");
        if ((size_t)len < n)
            len += ksym_format(buf + len, n - (size_t)len, o->site);
    }
    return len;
}

int addr_describe(char *buf, size_t n, uintptr_t addr)
{
    uint64_t off;
    const char *var = ksym_data_lookup(addr, &off);
    struct kmem_object o;
    if (in_page_array(addr))
        return describe_page_entry(buf, n, addr);
    if (var)
        return snprintf(buf, n, "the variable %s+0x%lx", var, (unsigned long)off);
    if (kmem_object_of(addr, &o))
        return describe_heap(buf, n, addr, &o);
    if (addr >= DIRECT_MAP && addr - DIRECT_MAP < (max_pfn << PAGE_SHIFT))
        return snprintf(buf, n, "pfn %lu+0x%lx, a page of memory",
                        (unsigned long)((addr - DIRECT_MAP) >> PAGE_SHIFT),
                        (unsigned long)(addr & (PAGE_SIZE - 1)));
    if (n)
        buf[0] = 0;
    return 0;
}
