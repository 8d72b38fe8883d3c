/* Basic types and compiler helpers shared by all kernel code. */
#ifndef KERN_TYPES_H
#define KERN_TYPES_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdarg.h>

typedef int64_t ssize_t;
typedef uint64_t paddr_t;
typedef uint64_t vaddr_t;

#define CACHE_LINE      64
#define PAGE_SIZE       4096UL
#define PAGE_SHIFT      12
#define KERNEL_VMA      0xFFFFFFFF80000000UL
#define DIRECT_MAP      0xFFFF800000000000UL

#define __aligned(n)    __attribute__((aligned(n)))
#define __cacheline     __aligned(CACHE_LINE)
#define __packed        __attribute__((packed))
#define __noreturn      __attribute__((noreturn))
#define __unused        __attribute__((unused))
#define __section(s)    __attribute__((section(s)))
#define likely(x)       __builtin_expect(!!(x), 1)
#define unlikely(x)     __builtin_expect(!!(x), 0)

#define ARRAY_SIZE(a)   (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)       ((a) < (b) ? (a) : (b))
#define MAX(a, b)       ((a) > (b) ? (a) : (b))
#define ALIGN_UP(x, a)  (((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))
#define ALIGN_DOWN(x, a) ((x) & ~((__typeof__(x))(a) - 1))
#define container_of(p, type, member) \
    ((type *)((char *)(p) - offsetof(type, member)))

#define READ_ONCE(x)     (*(volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#define barrier()        __asm__ volatile("" ::: "memory")

/*
 * data_race(expr): expr's value, read racily on purpose (a statistic, a
 * hint re-checked under its lock).  The comment beside it says why.  In a
 * KCSAN=1 kernel the detector ignores the accesses expr makes
 * (kern/kcsan/kcsan.c); otherwise it is expr itself.
 */
#ifdef TEMPEST_KCSAN
uint64_t kcsan_quiet_begin(void);
void kcsan_quiet_end(uint64_t saved);
#define data_race(expr) ({ uint64_t __kq = kcsan_quiet_begin(); \
                           __auto_type __kv = (expr); kcsan_quiet_end(__kq); __kv; })
#else
#define data_race(expr) (expr)
#endif

/* Physical <-> direct-map virtual conversions. */
static inline void *phys_to_virt(paddr_t pa) { return (void *)(pa + DIRECT_MAP); }
static inline paddr_t virt_to_phys(const void *va)
{
    uint64_t v = (uint64_t)va;
    return v >= KERNEL_VMA ? v - KERNEL_VMA : v - DIRECT_MAP;
}

#endif
