/*
 * Between the compiler's hooks (kern/kcsan/tsan.c) and the detector
 * (kern/kcsan/kcsan.c); nothing else includes this.
 */
#ifndef KERN_KCSAN_IMPL_H
#define KERN_KCSAN_IMPL_H

#include <kern/lib/types.h>

#define KC_WRITE  0x1       /* the access stores */
#define KC_MARKED 0x2       /* volatile or atomic: looks at watchpoints, never arms one */

/* One access of size bytes at addr, made by the code at site (the return
 * address of the hook's call). */
void kcsan_access(uintptr_t addr, size_t size, int flags, uintptr_t site);

/* [boot] whether the detector runs: the hooks test it first, so that an
 * instrumented access costs one call and one load under kcsan=off, until
 * kcsan_unhook has made the calls no-ops. */
extern bool kcsan_on;

/* kcsan=off: every call to a hook that only reports an access (the plain,
 * unaligned, volatile and range ones; not the atomics, which do the
 * operation) becomes a 5-byte no-op, from the table of call sites made at
 * link time (tools/tsan_sites.py).  Boot CPU alone, interrupts off.
 * Returns the sites changed; a site whose bytes are not a call to a hook
 * is left alone and counted in *skipped. */
size_t kcsan_unhook(size_t *skipped);

#endif
