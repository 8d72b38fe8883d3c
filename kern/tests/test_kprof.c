/*
 * ktests for the kernel profiler (kern/arch/kprof.c): samples of frames
 * made here land on the function holding their rip, user-mode frames on
 * the user count, and kprof_read merges and orders what the CPUs saw.
 * The frames are fed to kprof_sample directly, so the tests run whether
 * or not the kernel was booted with kprof=on.
 */
#include <kern/tests/ktest.h>
#include <kern/arch/kprof.h>
#include <kern/arch/trap.h>
#include <kern/arch/cpu.h>
#include <kern/arch/arch.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>

enum { MAXFN = 1024 };

static uint64_t samples_of(uint64_t fn, struct kprof_totals *t)
{
    struct kprof_entry *e = kmalloc(MAXFN * sizeof *e);
    if (!e)
        return ~0UL;
    int n = kprof_read(e, MAXFN, t);
    uint64_t count = 0;
    for (int i = 0; i < n; i++)
        if (e[i].fn == fn)
            count = e[i].count;
    kfree(e);
    return count;
}

/* n samples of a frame at rip in mode cs, with interrupts off as the
 * tick's are. */
static void feed(uint64_t rip, uint64_t cs, int n)
{
    struct trapframe tf;
    memset(&tf, 0, sizeof tf);
    tf.rip = rip;
    tf.cs = cs;
    uint64_t f = intr_save();
    for (int i = 0; i < n; i++)
        kprof_sample(&tf);
    intr_restore(f);
}

KTEST(kprof_counts_functions)
{
    uint64_t fn = (uint64_t)samples_of;
    struct kprof_totals t0, t1;
    uint64_t before = samples_of(fn, &t0);
    KT_ASSERT(before != ~0UL);
    feed(fn + 3, SEL_KCODE, 7);         /* inside samples_of, past its start */
    feed(0x401000, SEL_UCODE, 3);       /* user mode: counted, not placed */
    uint64_t after = samples_of(fn, &t1);
    if (kprof_enabled()) {              /* the real tick may add its own */
        KT_ASSERT(after >= before + 7);
        KT_ASSERT(t1.user >= t0.user + 3);
    } else {
        KT_ASSERT_EQ(after, before + 7);
        KT_ASSERT_EQ(t1.user, t0.user + 3);
        KT_ASSERT_EQ(t1.kernel, t0.kernel + 7);
    }
    KT_ASSERT(t1.ncpus >= 1);
    return 0;
}

/* kprof_read lists the most sampled function first. */
KTEST(kprof_orders_by_samples)
{
    feed((uint64_t)feed + 1, SEL_KCODE, 500);
    struct kprof_entry *e = kmalloc(MAXFN * sizeof *e);
    KT_ASSERT(e != NULL);
    struct kprof_totals t;
    int n = kprof_read(e, MAXFN, &t);
    int ordered = 1;
    for (int i = 1; i < n; i++)
        ordered &= e[i - 1].count >= e[i].count;
    int found = 0;
    for (int i = 0; i < n; i++)
        found |= e[i].fn == (uint64_t)feed && e[i].count >= 500;
    kfree(e);
    KT_ASSERT(n >= 1);
    KT_ASSERT(ordered);
    KT_ASSERT(found);
    return 0;
}
