/*
 * What an address belongs to, in words: for the data-race detector's
 * reports (kern/kcsan/kcsan.c) and whoever else names a bad address.
 */
#ifndef KERN_VM_ADDR_DESCRIBE_H
#define KERN_VM_ADDR_DESCRIBE_H

#include <kern/lib/types.h>

/* addr as the object it lies in, into buf (n bytes), one of:
 *   "the variable hook_count+0x0"
 *   "struct page of pfn 4660+0x8 (flags 0x30)"
 *   "a 200-byte heap object at 0x...+0x40, allocated at vn_alloc+0x1c"
 *     (under kmemdebug=on, which records the request and its site;
 *     without it, the size class's slot: "a 256-byte heap slot at ...")
 *   "pfn 4660+0x10, a page of memory" (other RAM: user, cached or
 *     page-table pages)
 * or "" when it is none of these.  Returns the length written. */
int addr_describe(char *buf, size_t n, uintptr_t addr);

#endif
