/*
 * The data-race detector (make KCSAN=1): the interface the rest of the
 * kernel sees.  The theory is at the top of kern/kcsan/kcsan.c.
 *
 * In a kernel built without KCSAN=1 (TEMPEST_KCSAN undefined) none of
 * kern/kcsan/ is compiled, and kcsan_built() is false so that a test can
 * skip itself.
 */
#ifndef KERN_KCSAN_H
#define KERN_KCSAN_H

#include <kern/lib/types.h>

/* Counters for /proc/kcsan and the tests, summed over the CPUs. */
struct kcsan_totals {
    uint64_t checked;       /* plain accesses that reached the runtime */
    uint64_t watched;       /* watchpoints armed */
    uint64_t hits;          /* conflicting accesses that found a watchpoint */
    uint64_t changed;       /* watched values that changed with no access seen */
    uint64_t reports;       /* races printed (one per pair of sites) */
    uint64_t repeats;       /* races seen again on an already reported pair */
    uint64_t dropped;       /* races not recorded: the table of pairs was full */
};

#ifdef TEMPEST_KCSAN

static inline bool kcsan_built(void) { return true; }

/* Read kcsan=, kcsan_interval= and kcsan_delay= and start watching (boot
 * CPU, after the options and the TSC calibration, before the APs). */
void kcsan_init(void);
/* Whether the detector runs (kcsan=on). */
bool kcsan_enabled(void);
void kcsan_totals(struct kcsan_totals *t);
/* Has a race been reported between an access in function fa and one in
 * function fb (in either order)?  fb NULL: a value change seen in fa. */
bool kcsan_pair_reported(const void *fa, const void *fb);
/* The hook a report names the raced-on object with (kern/main.c sets it
 * to kern/vm/addr_describe.c's addr_describe: a layer above this one). */
typedef int (*kcsan_describer)(char *buf, size_t n, uintptr_t addr);
void kcsan_set_describer(kcsan_describer fn);

#else

static inline bool kcsan_built(void) { return false; }
static inline bool kcsan_enabled(void) { return false; }
static inline void kcsan_totals(struct kcsan_totals *t) { *t = (struct kcsan_totals){ 0 }; }
static inline bool kcsan_pair_reported(const void *fa, const void *fb) { return false; }
typedef int (*kcsan_describer)(char *buf, size_t n, uintptr_t addr);
static inline void kcsan_set_describer(kcsan_describer fn) { (void)fn; }

#endif

#endif
