/* The kernel heap: kmalloc/kfree with per-CPU caches. */
#ifndef KERN_KMEM_H
#define KERN_KMEM_H

#include <kern/lib/types.h>

/* Every object is aligned to a cache line (64 bytes); requests above 2 KiB
 * get whole pages.  Returns NULL when memory is exhausted. */
void *kmalloc(size_t size);
void *kzalloc(size_t size);
void kfree(void *p);

/* The heap object an address lies in: its start and size as the caller
 * of kmalloc sees them, and (under kmemdebug=on, which records it) the
 * site that allocated it, else 0. */
struct kmem_object {
    uintptr_t start;
    size_t size;
    uintptr_t site;
};
/* False when addr is in no heap object (not the heap's, a slab's header,
 * or a whole-page block's head not found).  For describing an address
 * (kern/vm/addr_describe.c): it takes no lock, and an object being freed
 * meanwhile is described as it was. */
bool kmem_object_of(uintptr_t addr, struct kmem_object *o);

void kmem_init(void);

#endif
