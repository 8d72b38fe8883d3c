/*
 * Hybrid coarse/fine locking (seed 000, section 2.1, Figure 1b).
 *
 * Theory.  A structure instance (one cluster's hash table, say) has one
 * coarse lock, a spin lock of the lock= family (test-and-set, MCS or
 * H2-MCS, so its hits, misses and waits are in lockstat under the
 * instance's class).  The lock is held only long enough to search the
 * structure and set a reserve bit in the element found; the bit, one bit
 * of the element's own flag word next to its status, then guards the
 * element for the longer work, and the coarse lock is free for the other
 * CPUs meanwhile.  A CPU that finds the element reserved drops the coarse
 * lock, spins on the bit with exponential back-off (reading only: the
 * line stays in its cache until the holder's store), and when the bit
 * clears takes the coarse lock and searches again, since the element may
 * have been changed or removed.  After a few steps the back-off also
 * yields the CPU when it may (a thread, interrupts on, no spin lock):
 * the kernel is not preemptive, and the holder may be another thread of
 * the same CPU that gave it away while reserved (waiting for a slow
 * cross-cluster call, say), which runs again only if the waiter yields.  Several bits may be set under one hold,
 * and setting one needs no atomic operation of its own beyond the lock.
 *
 * Section 2.3's optimistic deadlock avoidance rests on the bits too: a
 * CPU about to make a cross-cluster call reserves whatever it needs
 * afterwards, drops its coarse locks and calls; the remote side searches
 * with hlock_reserve_remote, which never waits on a bit (the CPU running
 * the call may itself be what the holder waits for) but fails, and the
 * caller retries (cluster_call_optimistic, kern/cluster/cluster.c).
 *
 * Element memory is never reused for another type while a CPU may spin on
 * its bit (the clustered structures keep fixed arrays of their own
 * elements), which is the paper's footnote 2.
 *
 * Locks: the coarse lock (class given by the structure), and the reserve
 * bits it hands out.  Order: a CPU holds at most one coarse lock of a
 * class at a time, and never waits on a reserve bit while holding one.
 */
#include <kern/cluster/hybrid.h>
#include <kern/cluster/cluster.h>
#include <kern/arch/arch.h>

void hlock_init(struct hlock *h, struct lock_class *cls, struct cluster_map *m, int cl)
{
    spin_init(&h->coarse, cls);
    h->map = m;
    h->cl = cl;
}

void hres_wait(struct hlock *h, const uint32_t *word)
{
    unsigned attempt = 0;
    if (h->map)
        cluster_count(h->map, h->cl, reserve_waits);
    /* The back-off serves this CPU's calls when interrupts are off: the
     * holder may be waiting for one of them. */
    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) & HRES_BIT)
        cluster_backoff(&attempt);
}

uint32_t *hlock_reserve(struct hlock *h, uint32_t *(*find)(void *key), void *key)
{
    for (;;) {
        hlock_enter(h);
        uint32_t *word = find(key);
        if (!word || hres_try(word)) {
            hlock_exit(h);
            return word;
        }
        hlock_exit(h);
        hres_wait(h, word);
    }
}

uint32_t *hlock_reserve_remote(struct hlock *h, uint32_t *(*find)(void *key), void *key,
                               bool *conflict)
{
    hlock_enter(h);
    uint32_t *word = find(key);
    *conflict = word && !hres_try(word);
    hlock_exit(h);
    return *conflict ? NULL : word;
}
