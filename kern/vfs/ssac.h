/*
 * Helpers shared by the buffer cache (kern/vfs/buf.c) and the DNLC
 * (kern/vfs/dnlc.c), the two caches whose locking cache= chooses (seed
 * 001, Figures 2, 3 and 4).
 *
 *   - cache_hash: the multiplicative (Fibonacci) hash both caches use to
 *     pick a hash row.  Seed 001 warns that "tag & (2^n - 1)" uses only
 *     every 8th queue when tags are multiples of 8 (4 KiB blocks counted in
 *     512-byte sectors) and proposes 2^n - 1 rows with a modulus.  Multiplying
 *     by a 64-bit odd constant and keeping the TOP bits lets every bit of
 *     the tag move the row, so strided tags spread over all 2^n rows, and it
 *     costs a multiply instead of a divide.
 *
 *   - struct lockset: the locks one cache operation holds.  Under cache=
 *     single and ssac several roles (hash row, free list, element) are
 *     played by ONE lock, under hashfree by different ones.  The shared
 *     cache code asks for each role's lock by pointer; the lockset takes a
 *     lock only if it does not hold it yet, so the same code path takes one
 *     lock under single/ssac and two or three under hashfree.  That is what
 *     lets each cache write its logic once, with only the lock pointers
 *     differing by model.
 *
 *   - struct pcpu_counters: statistics counters, one cache line per CPU,
 *     summed on read (no shared line bounces on every lookup).
 *
 *   - test hooks of the two caches, for the ktests only.
 */
#ifndef KERN_VFS_SSAC_H
#define KERN_VFS_SSAC_H

#include <kern/lib/types.h>
#include <kern/lock/spinlock.h>
#include <kern/arch/cpu.h>
#include <kern/lib/options.h>

/* ---- hashing ---- */

#define CACHE_HASH_MUL 0x9E3779B97F4A7C15ull   /* 2^64 / golden ratio, odd */

/* Fold a 64-bit tag into a row number of `bits` bits (rows = 2^bits). */
static inline unsigned cache_hash(uint64_t tag, unsigned bits)
{
    if (bits == 0)
        return 0;
    return (unsigned)((tag * CACHE_HASH_MUL) >> (64 - bits));
}

/* Mix a pointer into a tag: kernel objects are aligned, so their low bits
 * carry nothing; the multiply in cache_hash spreads the rest. */
static inline uint64_t cache_ptr_tag(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    return x ^ (x >> 17) ^ (x >> 31);
}

/* A name's 32-bit hash (FNV-1a), for the caches keyed by names: the
 * DNLC and its clustered form. */
static inline uint32_t cache_name_hash(const char *name, uint32_t len)
{
    uint32_t h = 2166136261u;
    for (uint32_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)name[i]) * 16777619u;
    return h;
}

/* log2 of the smallest power of two >= n (n >= 1). */
static inline unsigned cache_log2_ceil(uint64_t n)
{
    unsigned b = 0;
    while ((1ull << b) < n)
        b++;
    return b;
}

static inline const char *cache_model_name(int model)
{
    switch (model) {
    case CACHE_SINGLE: return "single";
    case CACHE_HASHFREE: return "hashfree";
    default: return "ssac";
    }
}

/* ---- lock sets ---- */

#define LOCKSET_MAX 4

struct lockset {
    int n;
    spinlock_t *held[LOCKSET_MAX];
};

static inline void ls_init(struct lockset *s)
{
    s->n = 0;
}

static inline bool ls_holds(const struct lockset *s, const spinlock_t *l)
{
    for (int i = 0; i < s->n; i++)
        if (s->held[i] == l)
            return true;
    return false;
}

/* Take l unless the set already holds it (the same lock in another role). */
static inline void ls_lock(struct lockset *s, spinlock_t *l)
{
    if (ls_holds(s, l))
        return;
    spin_lock(l);
    s->held[s->n++] = l;
}

/* One attempt at l; true when the set holds it afterwards. */
static inline bool ls_trylock(struct lockset *s, spinlock_t *l)
{
    if (ls_holds(s, l))
        return true;
    if (!spin_trylock(l))
        return false;
    s->held[s->n++] = l;
    return true;
}

/* Release every lock of the set except keep (which may be NULL). */
static inline void ls_release_except(struct lockset *s, const spinlock_t *keep)
{
    int kept = 0;
    for (int i = s->n - 1; i >= 0; i--) {
        if (s->held[i] == keep)
            kept = 1;
        else
            spin_unlock(s->held[i]);
    }
    s->n = 0;
    if (kept)
        s->held[s->n++] = (spinlock_t *)keep;
}

static inline void ls_unlock_all(struct lockset *s)
{
    ls_release_except(s, NULL);
}

/* ---- per-CPU counters ---- */

#define PCPU_COUNTERS_MAX 8

struct pcpu_counters {
    uint64_t v[PCPU_COUNTERS_MAX];
} __cacheline;

/* Add to counter i of this CPU's line.  Atomic because an I/O
 * completion (interrupt context) may count on the same CPU. */
static inline void pcpu_add(struct pcpu_counters *c, int i, uint64_t n)
{
    __atomic_add_fetch(&c[cpu_id()].v[i], n, __ATOMIC_RELAXED);
}

static inline void pcpu_count(struct pcpu_counters *c, int i)
{
    pcpu_add(c, i, 1);
}

static inline uint64_t pcpu_sum(const struct pcpu_counters *c, int i)
{
    uint64_t s = 0;
    for (int k = 0; k < ncpus; k++)
        s += __atomic_load_n(&c[k].v[i], __ATOMIC_RELAXED);
    return s;
}

/* ---- test hooks (ktests only) ---- */

struct vnode;
struct cred;

/* The buffer cache's geometry: buffers, hash rows, free-list groups
 * (all 0 before binit). */
void buf_test_geometry(int *nbuf, int *nrows, int *ngroups);

/*
 * The DNLC's LRU domains: two names compete for the same entries (and the
 * least recently used of them is replaced) exactly when they are in the
 * same set.  Under ssac a set is one row (dnlc_test_lru_size() == ways);
 * under single and hashfree the whole cache is one set with one LRU list.
 */
unsigned dnlc_test_lru_set(struct vnode *dvp, const char *name, struct cred *cr);
unsigned dnlc_test_lru_size(void);      /* 0 before dnlc_init */

#endif
