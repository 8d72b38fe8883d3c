/*
 * Heap checking (kmemdebug=on): see "Heap checking" at the top of
 * kern/vm/kmem.c.  A checked slot is laid out as
 *
 *   [ header, 64 bytes | the caller's size bytes | red zone to the end ]
 *
 * The header's first word is the slab free list's link (kmem.c writes it
 * while the slot is free), then the state, the size, the call sites and
 * the front red zone.  A freed slot's bytes after the header are poison.
 * Nothing here takes a lock: a slot belongs to whoever holds it.
 */
#include <kern/vm/kmem_debug.h>
#include <kern/arch/panic.h>
#include <kern/lib/ksyms.h>
#include <kern/lib/string.h>

#define HEADER          64
#define MIN_REDZONE     8
#define REDZONE_BYTE    0xbb
#define POISON_BYTE     0x6b

#define STATE_FRESH     0x6672657368000000ULL  /* never allocated */
#define STATE_ALLOC     0x616c6c6f63000000ULL  /* allocated */
#define STATE_FREE      0x6672656564000000ULL  /* freed, poisoned */

struct kmem_header {
    void *link;                 /* the slab free list's, while free */
    uint64_t state;
    uint64_t size;              /* what the caller asked for */
    uintptr_t alloc_site;
    uintptr_t free_site;
    uint8_t redzone[HEADER - 40];
};

_Static_assert(sizeof(struct kmem_header) == HEADER, "the header is one cache line");

bool kmem_debug_on;

size_t kmem_debug_slot(size_t size)
{
    return HEADER + size + MIN_REDZONE;
}

bool kmem_debug_object(uintptr_t slot, uintptr_t *start, size_t *size, uintptr_t *site)
{
    const struct kmem_header *h = (const struct kmem_header *)slot;
    if (h->state != STATE_ALLOC)
        return false;
    *start = slot + HEADER;
    *size = h->size;
    *site = h->alloc_site;
    return true;
}

void kmem_debug_fresh(void *slot)
{
    ((struct kmem_header *)slot)->state = STATE_FRESH;
}

/* The first byte in [from, to) that is not want, or to. */
static uint8_t *first_wrong(uint8_t *from, uint8_t *to, uint8_t want)
{
    for (; from < to; from++)
        if (*from != want)
            return from;
    return to;
}

static const char *site(char *buf, size_t n, uintptr_t pc)
{
    if (pc == 0)
        return "(none)";
    ksym_format(buf, n, pc);
    return buf;
}

void *kmem_debug_alloc(void *slot, size_t slot_size, size_t size, uintptr_t caller)
{
    struct kmem_header *h = slot;
    uint8_t *user = (uint8_t *)slot + HEADER, *end = (uint8_t *)slot + slot_size;

    if (h->state == STATE_FREE) {
        uint8_t *bad = first_wrong(user, end, POISON_BYTE);
        if (bad != end) {
            char a[96], b[96];
            panic("kmemdebug: use after free: object %p (%lu bytes, freed at %s) was "
                  "written at offset %ld after its free; reused now by %s",
                  user, (unsigned long)h->size, site(a, sizeof a, h->free_site),
                  (long)(bad - user), site(b, sizeof b, caller));
        }
    }
    h->state = STATE_ALLOC;
    h->size = size;
    h->alloc_site = caller;
    h->free_site = 0;
    memset(h->redzone, REDZONE_BYTE, sizeof h->redzone);
    memset(user + size, REDZONE_BYTE, (size_t)(end - user) - size);
    return user;
}

void kmem_debug_foreign(void *p, void *slot, uintptr_t caller)
{
    char a[96], b[96];
    struct kmem_header *h = slot;

    if (h && h->state == STATE_ALLOC)
        panic("kmemdebug: kfree of %p, which is not an object's start: it lies %ld bytes "
              "into the object at %p allocated at %s; freed at %s", p,
              (long)((uint8_t *)p - ((uint8_t *)slot + HEADER)), (uint8_t *)slot + HEADER,
              site(a, sizeof a, h->alloc_site), site(b, sizeof b, caller));
    panic("kmemdebug: kfree of %p, which the heap never allocated; freed at %s", p,
          site(b, sizeof b, caller));
}

/* Panics when a red zone of the allocated object h is overwritten. */
static void check_redzones(struct kmem_header *h, size_t slot_size, uintptr_t caller)
{
    uint8_t *user = (uint8_t *)h + HEADER, *end = (uint8_t *)h + slot_size;
    uint8_t *front = first_wrong(h->redzone, h->redzone + sizeof h->redzone, REDZONE_BYTE);
    uint8_t *back = first_wrong(user + h->size, end, REDZONE_BYTE);
    char a[96], b[96];

    if (front != h->redzone + sizeof h->redzone)
        panic("kmemdebug: red zone before object %p (%lu bytes) overwritten %ld bytes "
              "before it: allocated at %s, freed at %s", user, (unsigned long)h->size,
              (long)(user - front), site(a, sizeof a, h->alloc_site),
              site(b, sizeof b, caller));
    if (back != end)
        panic("kmemdebug: red zone after object %p (%lu bytes) overwritten at offset %ld: "
              "allocated at %s, freed at %s", user, (unsigned long)h->size,
              (long)(back - user), site(a, sizeof a, h->alloc_site),
              site(b, sizeof b, caller));
}

void *kmem_debug_free(void *p, void *slab, size_t slot_size, uintptr_t caller)
{
    uintptr_t off = (uintptr_t)p - (uintptr_t)slab;
    struct kmem_header *h = (struct kmem_header *)((uint8_t *)slab + off / slot_size * slot_size);
    char a[96], b[96], c[96];

    if (off < slot_size || off % slot_size != HEADER)
        kmem_debug_foreign(p, off >= slot_size ? h : NULL, caller);
    if (h->state == STATE_FREE)
        panic("kmemdebug: double free of %p (%lu bytes): freed at %s, and again at %s; "
              "allocated at %s", p, (unsigned long)h->size, site(a, sizeof a, h->free_site),
              site(b, sizeof b, caller), site(c, sizeof c, h->alloc_site));
    if (h->state != STATE_ALLOC)
        kmem_debug_foreign(p, NULL, caller);
    check_redzones(h, slot_size, caller);
    h->state = STATE_FREE;
    h->free_site = caller;
    memset((uint8_t *)p, POISON_BYTE, slot_size - HEADER);
    return h;
}
