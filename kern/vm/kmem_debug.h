/*
 * Heap checking for the kernel heap (kmemdebug=on): the object header,
 * red zones and poison that kern/vm/kmem.c adds around each small object.
 * The theory is at the top of kmem.c; these are its helpers.
 */
#ifndef KERN_KMEM_DEBUG_H
#define KERN_KMEM_DEBUG_H

#include <kern/lib/types.h>

/* Set once by kmem_init from the boot option, before any allocation. */
extern bool kmem_debug_on;
/* The object in a slot as its caller sees it (start and requested size)
 * and the site that allocated it: false when the slot is not allocated. */
bool kmem_debug_object(uintptr_t slot, uintptr_t *start, size_t *size, uintptr_t *site);

/* Bytes of a slot that holds a checked object of size bytes. */
size_t kmem_debug_slot(size_t size);

/* A new slab's object at slot: never allocated yet. */
void kmem_debug_fresh(void *slot);

/* Slot (of slot_size bytes) leaves the heap for caller, who asked for
 * size bytes: checks the poison of a reused slot, writes the header and
 * red zones; returns the pointer to give the caller. */
void *kmem_debug_alloc(void *slot, size_t slot_size, size_t size, uintptr_t caller);

/* p comes back from caller; slab is its page, whose objects are
 * slot_size bytes each.  Checks that p is an object's start and
 * allocated, and its red zones; poisons it.  Returns the slot to free.
 * Panics on a double free, a foreign pointer or an overrun. */
void *kmem_debug_free(void *p, void *slab, size_t slot_size, uintptr_t caller);

/* Panics for a kfree of p that is no heap object at all; slot is the
 * object it falls inside, if any. */
void kmem_debug_foreign(void *p, void *slot, uintptr_t caller) __attribute__((noreturn));

#endif
