/*
 * ktests for the lock-order checker: a seeded AB/BA order is reported
 * exactly once, a consistent order and same-class pairs never are, a
 * recursive acquisition is silent, a three-class cycle is found through
 * the path, statistics keep counting after a report, and a report names
 * its call sites as function+offset, and every slot a pop leaves on the
 * held stack reads as no lock (an interrupt handler shares it).  Each test turns
 * witness on for itself and restores the setting it found.
 */
#include <kern/tests/ktest.h>
#include <kern/lock/spinlock.h>
#include <kern/lock/lockstat.h>
#include <kern/lock/witness.h>
#include <kern/lib/string.h>

LOCK_CLASS(test_w_a, "test_witness_a", LK_SPIN);
LOCK_CLASS(test_w_b, "test_witness_b", LK_SPIN);
LOCK_CLASS(test_w_c, "test_witness_c", LK_SPIN);
LOCK_CLASS(test_w_d, "test_witness_d", LK_SPIN);
LOCK_CLASS(test_w_same, "test_witness_same", LK_SPIN);
LOCK_CLASS(test_w_x, "test_witness_x", LK_SPIN);
LOCK_CLASS(test_w_y, "test_witness_y", LK_SPIN);
LOCK_CLASS(test_w_z, "test_witness_z", LK_SPIN);
/* Spin mutexes: witness checks no edge into a sleep mutex (kern/lock/witness.c). */
LOCK_CLASS(test_w_r1, "test_witness_r1", LK_MUTEX_SPIN);
LOCK_CLASS(test_w_r2, "test_witness_r2", LK_MUTEX_SPIN);

static spinlock_t la, lb, lc, ld, ls1, ls2, lx, ly, lz;

/* Whether text contains s. */
static bool contains(const char *text, const char *s)
{
    size_t n = strlen(s);
    for (; *text; text++)
        if (strncmp(text, s, n) == 0)
            return true;
    return false;
}

/* noinline: the sites of its two acquisitions lie in it, by name. */
static void __attribute__((noinline)) pair(spinlock_t *first, spinlock_t *second)
{
    spin_lock(first);
    spin_lock(second);
    spin_unlock(second);
    spin_unlock(first);
}

KTEST(witness_ab_ba_reported_once)
{
    bool was = witness_set_enabled(true);
    int mode = lockstat_set_mode(LOCKSTAT_ON);
    spin_init(&la, &test_w_a);
    spin_init(&lb, &test_w_b);
    uint64_t r0 = witness_reports();
    pair(&la, &lb);                     /* learns a -> b */
    pair(&la, &lb);
    KT_ASSERT_EQ(witness_reports() - r0, 0);
    uint64_t hits0 = lb.inst.hits;
    pair(&lb, &la);                     /* b then a: the reversal */
    KT_ASSERT_EQ(witness_reports() - r0, 1);
    /* The report names both classes and symbolizes every site. */
    static char report[1536];
    witness_last_report(report, sizeof report);
    KT_ASSERT(contains(report, "acquiring \"test_witness_a\" while holding \"test_witness_b\""));
    KT_ASSERT(contains(report, "\"test_witness_b\" held, acquired at pair+0x"));
    KT_ASSERT(contains(report, "\"test_witness_a\" being acquired at pair+0x"));
    KT_ASSERT(contains(report, "\"test_witness_a\" held (acquired at pair+0x"));
    pair(&lb, &la);                     /* once per pair */
    pair(&la, &lb);
    KT_ASSERT_EQ(witness_reports() - r0, 1);
    KT_ASSERT_EQ(lb.inst.hits - hits0, 3);     /* statistics keep running */
    spin_destroy(&la);
    spin_destroy(&lb);
    lockstat_set_mode(mode);
    witness_set_enabled(was);
    return 0;
}

KTEST(witness_consistent_order_silent)
{
    bool was = witness_set_enabled(true);
    spin_init(&lc, &test_w_c);
    spin_init(&ld, &test_w_d);
    spin_init(&ls1, &test_w_same);
    spin_init(&ls2, &test_w_same);
    uint64_t r0 = witness_reports();
    for (int i = 0; i < 3; i++)
        pair(&lc, &ld);
    /* Two locks of one class, in both orders: no self-edge, no report. */
    pair(&ls1, &ls2);
    pair(&ls2, &ls1);
    /* A same-class pair inside a consistent outer order. */
    spin_lock(&lc);
    pair(&ls1, &ls2);
    spin_unlock(&lc);
    KT_ASSERT_EQ(witness_reports() - r0, 0);
    spin_destroy(&lc);
    spin_destroy(&ld);
    spin_destroy(&ls1);
    spin_destroy(&ls2);
    witness_set_enabled(was);
    return 0;
}

/* x -> y and y -> z are learned; then x while holding z closes a cycle
 * through y. */
KTEST(witness_three_class_cycle)
{
    bool was = witness_set_enabled(true);
    spin_init(&lx, &test_w_x);
    spin_init(&ly, &test_w_y);
    spin_init(&lz, &test_w_z);
    uint64_t r0 = witness_reports();
    pair(&lx, &ly);
    pair(&ly, &lz);
    KT_ASSERT_EQ(witness_reports() - r0, 0);
    pair(&lz, &lx);
    KT_ASSERT_EQ(witness_reports() - r0, 1);
    spin_destroy(&lx);
    spin_destroy(&ly);
    spin_destroy(&lz);
    witness_set_enabled(was);
    return 0;
}

/* The other lock kinds call the checker directly; a recursive acquisition
 * of a lock already held (an SVR4 mutex taken again by its owner) is not an
 * order problem even when a later lock is held. */
KTEST(witness_recursive_silent)
{
    static int m1, m2;          /* stand-ins for two mutexes */
    bool was = witness_set_enabled(true);
    uint64_t r0 = witness_reports();
    uintptr_t site = (uintptr_t)__builtin_return_address(0);
    witness_acquire_lock(&m1, &test_w_r1, site);
    held_push(&m1, &test_w_r1, site, 0);
    witness_acquire_lock(&m2, &test_w_r2, site);       /* learns r1 -> r2 */
    held_push(&m2, &test_w_r2, site, 0);
    witness_acquire_lock(&m1, &test_w_r1, site);       /* recursive: silent */
    uint64_t after_recursive = witness_reports() - r0;
    witness_acquire(&test_w_r1, site);                 /* not known recursive: reported */
    uint64_t after_plain = witness_reports() - r0;
    bool pop1 = held_pop(&m1, NULL);                   /* out of order */
    bool pop2 = held_pop(&m2, NULL);
    bool pop3 = held_pop(&m2, NULL);
    witness_set_enabled(was);
    KT_ASSERT_EQ(after_recursive, 0);
    KT_ASSERT_EQ(after_plain, 1);
    KT_ASSERT(pop1 && pop2 && !pop3);
    return 0;
}

/* An interrupt handler shares the stack of the thread it interrupts, and
 * witness reads every entry below the count: a slot a pop left, or one a
 * push has counted but not yet named, must read as no lock (cls NULL), or
 * a handler meeting it would report an order nobody took (struct
 * held_locks, kern/lock/lock.h).  Pops on top, out of order and by time
 * each leave their slot unnamed. */
KTEST(witness_held_slots_unnamed)
{
    static int m1, m2, m3;      /* stand-ins */
    struct held_locks *h = held_locks_current();
    uintptr_t site = (uintptr_t)__builtin_return_address(0);
    uint64_t f = intr_save();   /* this test's own pushes: no handler between */
    int base = h->n;
    held_push(&m1, &test_w_r1, site, 0);
    held_push(&m2, &test_w_r2, site, 0);
    held_push(&m3, &test_w_x, site, 0);
    bool named = h->e[base + 2].cls == &test_w_x;
    bool pop_top = held_pop(&m3, NULL);
    bool top_clear = h->e[base + 2].cls == NULL;
    bool pop_middle = held_pop(&m1, NULL);              /* out of order */
    bool moved = h->n == base + 1 && h->e[base].lock == &m2;
    bool left_clear = h->e[base + 1].cls == NULL;
    uint64_t at = 1;
    bool pop_at = held_pop_at(&m2, &at);
    bool last_clear = h->e[base].cls == NULL && h->n == base;
    intr_restore(f);
    KT_ASSERT(named);
    KT_ASSERT(pop_top && top_clear);
    KT_ASSERT(pop_middle && moved && left_clear);
    KT_ASSERT(pop_at && at == 0 && last_clear);
    for (int i = h->n; i < HELD_MAX; i++)
        KT_ASSERT(h->e[i].cls == NULL);
    return 0;
}
