/*
 * Hurricane's hybrid locks (seed 000, section 2.1): one coarse lock per
 * structure instance, held only to search and to set reserve bits; the
 * reserve bit then guards its element for the longer work.  Theory in
 * kern/cluster/hybrid.c.
 */
#ifndef KERN_CLUSTER_HYBRID_H
#define KERN_CLUSTER_HYBRID_H

#include <kern/lib/types.h>
#include <kern/lock/spinlock.h>

struct cluster_map;

struct hlock {
    spinlock_t coarse;          /* the instance's coarse lock (lock=, lockstat) */
    struct cluster_map *map;    /* [c] whose statistics count the waits (may be NULL) */
    int cl;                     /* [c] the instance's cluster */
};

/* The reserve bit of an element's flag word (the other bits are the
 * element's own status, under the coarse lock). */
#define HRES_BIT 0x1u

void hlock_init(struct hlock *h, struct lock_class *cls, struct cluster_map *m, int cl);
/* Before the hlock's memory is reused (its lock must be free). */
static inline void hlock_destroy(struct hlock *h) { spin_destroy(&h->coarse); }
static inline void hlock_enter(struct hlock *h) { spin_lock(&h->coarse); }
static inline void hlock_exit(struct hlock *h) { spin_unlock(&h->coarse); }

/* Under the coarse lock: is the element reserved? */
static inline bool hres_busy(const uint32_t *word)
{
    return __atomic_load_n(word, __ATOMIC_ACQUIRE) & HRES_BIT;
}
/* Under the coarse lock: reserve a free element (several may be reserved
 * under one hold).  Only the lock's holder sets bits, so no other setter
 * races; the atomic OR keeps the element's other status bits whole
 * against a concurrent release. */
static inline void hres_set(uint32_t *word)
{
    __atomic_fetch_or(word, HRES_BIT, __ATOMIC_ACQUIRE);
}
/* Release a reservation, with or without the coarse lock. */
static inline void hres_clear(uint32_t *word)
{
    __atomic_fetch_and(word, ~HRES_BIT, __ATOMIC_RELEASE);
}
/* Under the coarse lock: reserve the element unless it is reserved. */
static inline bool hres_try(uint32_t *word)
{
    if (hres_busy(word))
        return false;
    hres_set(word);
    return true;
}

/* Without the coarse lock: spin on the element's reserve bit with
 * exponential back-off until it is released (then search again: the
 * element may have changed or gone).  The back-off yields the CPU after a
 * few steps where it may (cluster_backoff), so a holder on this same CPU
 * runs.  Counted as a reserve wait. */
void hres_wait(struct hlock *h, const uint32_t *word);

/*
 * The whole local pattern: take the coarse lock, find the element
 * (find(key) under the lock, returning its flag word or NULL), and if it
 * is reserved drop the lock, wait on the bit and search again; else
 * reserve it and drop the lock.  Returns the reserved element's word, or
 * NULL when find found nothing (the lock dropped either way).
 */
uint32_t *hlock_reserve(struct hlock *h, uint32_t *(*find)(void *key), void *key);
/* The remote pattern (a cross-cluster call's target must not wait): the
 * same, but a reserved element ends the search with *conflict set. */
uint32_t *hlock_reserve_remote(struct hlock *h, uint32_t *(*find)(void *key), void *key,
                               bool *conflict);

#endif
