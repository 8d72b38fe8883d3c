/* ktests for processors, interrupts and NUMA topology. */
#include <kern/tests/ktest.h>
#include <kern/arch/cpu.h>
#include <kern/arch/smp.h>
#include <kern/arch/numa.h>
#include <kern/arch/arch.h>
#include <drivers/platform/lapic.h>
#include <drivers/platform/timer.h>

KTEST(cpus_online)
{
    KT_ASSERT_EQ(ncpus_online, ncpus);
    for (int i = 0; i < ncpus; i++)
        KT_ASSERT(cpus[i].online);
    return 0;
}

/* Every CPU reads its own APIC ID and finds its struct cpu through GS. */
KTEST_ALL_CPUS(percpu_identity)
{
    struct cpu *c = this_cpu();
    KT_ASSERT(c == &cpus[c->id]);
    KT_ASSERT(c->self == c);
    KT_ASSERT_EQ(lapic_id(), c->apic_id);
    KT_ASSERT_EQ(c->node, numa_node_of_cpu(c->id));
    return 0;
}

static volatile int call_hits[MAX_CPUS];

static void count_call(void *arg)
{
    __atomic_add_fetch(&call_hits[cpu_id()], (int)(uint64_t)arg, __ATOMIC_SEQ_CST);
}

KTEST(ipi_call_all)
{
    for (int i = 0; i < MAX_CPUS; i++)
        call_hits[i] = 0;
    for (int round = 0; round < 50; round++)
        smp_call_all(count_call, (void *)1);
    for (int i = 0; i < ncpus; i++)
        KT_ASSERT_EQ(call_hits[i], 50);
    for (int i = 0; i < ncpus; i++)
        smp_call_one(i, count_call, (void *)10);
    for (int i = 0; i < ncpus; i++)
        KT_ASSERT_EQ(call_hits[i], 60);
    return 0;
}

/* Every CPU's timer ticks while the boot CPU waits.  Up to 2 s, checked
 * every 100 ms: under TCG on a loaded two-core host a virtual CPU's timer
 * interrupt can be late by more than the 200 ms this once waited (the
 * emulator's timers share one lock with every vCPU's device reads). */
static bool all_ticked(const uint64_t *before)
{
    for (int i = 0; i < ncpus; i++)
        if (READ_ONCE(cpus[i].ticks) <= before[i])
            return false;
    return true;
}

KTEST(timer_ticks)
{
    uint64_t before[MAX_CPUS];
    for (int i = 0; i < ncpus; i++)
        before[i] = READ_ONCE(cpus[i].ticks);
    for (int wait = 0; wait < 20 && !all_ticked(before); wait++)
        clock_spin_us(100000);
    for (int i = 0; i < ncpus; i++)
        KT_ASSERT(READ_ONCE(cpus[i].ticks) > before[i]);
    return 0;
}

/* The TSC calibration agrees with the reference clock.  Loose bounds and
 * a few tries: the emulator may deschedule the CPU in mid-measurement,
 * which says nothing about the calibration. */
KTEST(tsc_vs_clock)
{
    uint64_t ns = 0;
    for (int attempt = 0; attempt < 5; attempt++) {
        uint64_t t0 = rdtsc();
        clock_spin_us(50000);
        ns = tsc_to_ns(rdtsc() - t0);
        if (ns > 40000000 && ns < 100000000)
            return 0;
    }
    KT_ASSERT(ns > 40000000 && ns < 100000000);
    return 0;
}

KTEST(numa_topology)
{
    uint64_t all = 0;
    KT_ASSERT(numa_nnodes >= 1);
    for (int n = 0; n < numa_nnodes; n++) {
        KT_ASSERT((all & numa_nodes[n].cpumask) == 0);
        all |= numa_nodes[n].cpumask;
        KT_ASSERT_EQ(numa_distance(n, n), 10);
        for (int m = 0; m < numa_nnodes; m++) {
            KT_ASSERT_EQ(numa_distance(n, m), numa_distance(m, n));
            if (m != n)
                KT_ASSERT(numa_distance(n, m) > 10);
        }
    }
    uint64_t want = ncpus == 64 ? ~0UL : (1UL << ncpus) - 1;
    KT_ASSERT_EQ(all, want);
    for (int i = 0; i < ncpus; i++)
        KT_ASSERT(numa_nodes[cpus[i].node].cpumask & (1UL << i));
    return 0;
}
