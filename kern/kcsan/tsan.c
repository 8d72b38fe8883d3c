/*
 * The entry points GCC's -fsanitize=thread calls (make KCSAN=1), each a
 * thin step into kern/kcsan/kcsan.c with the access's address, size, kind
 * and call site.  The list is what the kernel's objects name (nm on a
 * KCSAN=1 build) and the rest of GCC's family, so that no new use of a
 * builtin leaves the link short.
 *
 * The atomic ones must do the operation itself, since the compiler
 * replaced the instruction with the call: each does it with the same
 * builtin at sequentially consistent order, at least as strong as any
 * order the caller asked for (the order arguments are ignored).  Atomic
 * and volatile writes are marked accesses (they look for a watchpoint
 * they conflict with, and never arm one); atomic and volatile reads are
 * not looked at.  See "What is a race here" in kcsan.c.
 *
 * This file is compiled without the instrumentation.
 */
#include <kern/kcsan/kcsan_impl.h>

#define SITE ((uintptr_t)__builtin_return_address(0))

/* The step into the detector, taken only while it runs (kcsan_on). */
static inline __attribute__((always_inline)) void access(void *p, size_t n, int flags,
                                                         uintptr_t site)
{
    if (__builtin_expect(kcsan_on, 1))
        kcsan_access((uintptr_t)p, n, flags, site);
}

/* ---- plain, unaligned and volatile loads and stores ---- */

#define PLAIN(n) \
    void __tsan_read##n(void *p) { access(p, n, 0, SITE); } \
    void __tsan_write##n(void *p) { access(p, n, KC_WRITE, SITE); } \
    void __tsan_unaligned_read##n(void *p) { access(p, n, 0, SITE); } \
    void __tsan_unaligned_write##n(void *p) { access(p, n, KC_WRITE, SITE); } \
    void __tsan_volatile_read##n(void *p) { (void)p; } \
    void __tsan_volatile_write##n(void *p) \
    { access(p, n, KC_WRITE | KC_MARKED, SITE); } \
    void __tsan_unaligned_volatile_read##n(void *p) { (void)p; } \
    void __tsan_unaligned_volatile_write##n(void *p) \
    { access(p, n, KC_WRITE | KC_MARKED, SITE); }

#define DECLARE_PLAIN(n) \
    void __tsan_read##n(void *p); void __tsan_write##n(void *p); \
    void __tsan_unaligned_read##n(void *p); void __tsan_unaligned_write##n(void *p); \
    void __tsan_volatile_read##n(void *p); void __tsan_volatile_write##n(void *p); \
    void __tsan_unaligned_volatile_read##n(void *p); \
    void __tsan_unaligned_volatile_write##n(void *p);

DECLARE_PLAIN(1) DECLARE_PLAIN(2) DECLARE_PLAIN(4) DECLARE_PLAIN(8) DECLARE_PLAIN(16)
PLAIN(1) PLAIN(2) PLAIN(4) PLAIN(8) PLAIN(16)

/* A structure copy or a memset the compiler made inline. */
void __tsan_read_range(void *p, size_t n);
void __tsan_write_range(void *p, size_t n);

void __tsan_read_range(void *p, size_t n)
{
    access(p, n, 0, SITE);
}

void __tsan_write_range(void *p, size_t n)
{
    access(p, n, KC_WRITE, SITE);
}

/* ---- kcsan=off: the reporting calls made no-ops ---- */

#define HOOKS(n)     (const void *)__tsan_read##n, (const void *)__tsan_write##n,     (const void *)__tsan_unaligned_read##n, (const void *)__tsan_unaligned_write##n,     (const void *)__tsan_volatile_read##n, (const void *)__tsan_volatile_write##n,     (const void *)__tsan_unaligned_volatile_read##n,     (const void *)__tsan_unaligned_volatile_write##n

/* The hooks whose calls may go: they report, the caller does the access. */
static const void *const reporting_hooks[] = {
    HOOKS(1), HOOKS(2), HOOKS(4), HOOKS(8), HOOKS(16),
    (const void *)__tsan_read_range, (const void *)__tsan_write_range,
};

extern const uint32_t kcsan_call_sites[];       /* offsets from KERNEL_VMA */
extern const size_t kcsan_call_site_count;

#define CALL_REL32 0xE8
static const uint8_t nop5[5] = { 0x0F, 0x1F, 0x44, 0x00, 0x00 };  /* nopl 0(%rax,%rax) */

static bool calls_reporting_hook(const uint8_t *at)
{
    if (at[0] != CALL_REL32)
        return false;
    int32_t rel;
    __builtin_memcpy(&rel, at + 1, sizeof rel);
    const void *target = at + 5 + rel;
    for (size_t i = 0; i < sizeof reporting_hooks / sizeof reporting_hooks[0]; i++)
        if (reporting_hooks[i] == target)
            return true;
    return false;
}

size_t kcsan_unhook(size_t *skipped)
{
    size_t done = 0;
    *skipped = 0;
    for (size_t i = 0; i < kcsan_call_site_count; i++) {
        const uint8_t *at = (const uint8_t *)(KERNEL_VMA + kcsan_call_sites[i]);
        if (!calls_reporting_hook(at)) {
            (*skipped)++;
            continue;
        }
        /* Written through the direct map, which maps the image writable
         * whatever the text mapping allows; the CPU (and QEMU) see the
         * change at the next fetch of the bytes. */
        uint8_t *w = phys_to_virt(virt_to_phys(at));
        for (int b = 0; b < 5; b++)
            w[b] = nop5[b];
        done++;
    }
    return done;
}

/* ---- what the detector has no use for ---- */

void __tsan_init(void);
void __tsan_func_entry(void *caller);
void __tsan_func_exit(void);

void __tsan_init(void) {}
void __tsan_func_entry(void *caller) { (void)caller; }
void __tsan_func_exit(void) {}

/* ---- atomics: done here, at sequential consistency ---- */

#define SC __ATOMIC_SEQ_CST
#define MARK_WRITE(p, n) access((void *)(p), n, KC_WRITE | KC_MARKED, SITE)

#define RMW(n, t, op) \
    t __tsan_atomic##n##_##op(volatile t *p, t v, int mo); \
    t __tsan_atomic##n##_##op(volatile t *p, t v, int mo) \
    { MARK_WRITE(p, n / 8); return __atomic_##op(p, v, SC); }

#define ATOMICS(n, t) \
    t __tsan_atomic##n##_load(const volatile t *p, int mo); \
    t __tsan_atomic##n##_load(const volatile t *p, int mo) { return __atomic_load_n(p, SC); } \
    void __tsan_atomic##n##_store(volatile t *p, t v, int mo); \
    void __tsan_atomic##n##_store(volatile t *p, t v, int mo) \
    { MARK_WRITE(p, n / 8); __atomic_store_n(p, v, SC); } \
    t __tsan_atomic##n##_exchange(volatile t *p, t v, int mo); \
    t __tsan_atomic##n##_exchange(volatile t *p, t v, int mo) \
    { MARK_WRITE(p, n / 8); return __atomic_exchange_n(p, v, SC); } \
    RMW(n, t, fetch_add) RMW(n, t, fetch_sub) RMW(n, t, fetch_and) \
    RMW(n, t, fetch_or) RMW(n, t, fetch_xor) RMW(n, t, fetch_nand) \
    int __tsan_atomic##n##_compare_exchange_strong(volatile t *p, t *e, t v, int mo, int fmo); \
    int __tsan_atomic##n##_compare_exchange_strong(volatile t *p, t *e, t v, int mo, int fmo) \
    { MARK_WRITE(p, n / 8); return __atomic_compare_exchange_n(p, e, v, false, SC, SC); } \
    int __tsan_atomic##n##_compare_exchange_weak(volatile t *p, t *e, t v, int mo, int fmo); \
    int __tsan_atomic##n##_compare_exchange_weak(volatile t *p, t *e, t v, int mo, int fmo) \
    { MARK_WRITE(p, n / 8); return __atomic_compare_exchange_n(p, e, v, false, SC, SC); } \
    t __tsan_atomic##n##_compare_exchange_val(volatile t *p, t e, t v, int mo, int fmo); \
    t __tsan_atomic##n##_compare_exchange_val(volatile t *p, t e, t v, int mo, int fmo) \
    { MARK_WRITE(p, n / 8); __atomic_compare_exchange_n(p, &e, v, false, SC, SC); return e; }

ATOMICS(8, uint8_t)
ATOMICS(16, uint16_t)
ATOMICS(32, uint32_t)
ATOMICS(64, uint64_t)

void __tsan_atomic_thread_fence(int mo);
void __tsan_atomic_signal_fence(int mo);

void __tsan_atomic_thread_fence(int mo)
{
    __atomic_thread_fence(SC);
}

void __tsan_atomic_signal_fence(int mo)
{
    __atomic_signal_fence(SC);
}
