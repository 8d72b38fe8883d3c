/* The kernel heap: kmalloc/kfree with per-CPU caches. */
#ifndef KERN_KMEM_H
#define KERN_KMEM_H

#include <kern/lib/types.h>

/* Every object is aligned to a cache line (64 bytes); requests above 2 KiB
 * get whole pages.  Returns NULL when memory is exhausted. */
void *kmalloc(size_t size);
void *kzalloc(size_t size);
void kfree(void *p);

/* Objects of each size class currently allocated (for tests). */
void kmem_init(void);

#endif
