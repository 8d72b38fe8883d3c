/*
 * Scheduling statistics for /proc and sysinfo: the time each CPU spends
 * in user mode, in the kernel and idle, and the load average.
 *
 * Both come from the clock tick (smp_add_tick_hook), as in the Unix
 * kernels the papers measure: each tick charges one tick to the state its
 * CPU was interrupted in (user mode; its idle thread; otherwise the
 * kernel), and every five seconds CPU 0 samples the number of threads
 * running or waiting on a run queue and folds it into three exponentially
 * decaying averages over 1, 5 and 15 minutes, with the constants and the
 * 11-bit fixed point of Unix's and Linux's loadavg.
 *
 * Locks: none.  A CPU's tick counters are written only by that CPU's tick
 * ([own], read racily by everyone: a reader may see one tick less); the
 * averages are written only by CPU 0's tick and read with atomic loads.
 */
#include <kern/sched/sched.h>
#include <kern/arch/cpu.h>
#include <kern/arch/smp.h>
#include <kern/arch/trap.h>

#define FSHIFT    11
#define FIXED_1   (1UL << FSHIFT)
#define EXP_1     1884          /* FIXED_1 / exp(5 s / 1 min) */
#define EXP_5     2014          /* FIXED_1 / exp(5 s / 5 min) */
#define EXP_15    2037          /* FIXED_1 / exp(5 s / 15 min) */
#define LOAD_INTERVAL (5 * TICK_HZ)

struct cpu_ticks {
    uint64_t t[CPU_TICK_KINDS];     /* [own] */
} __cacheline;

static struct cpu_ticks cpu_ticks[MAX_CPUS];
static uint64_t load_fixed[3];      /* [a] FSHIFT fixed point, written by CPU 0 */

static uint64_t decay(uint64_t load, uint64_t exp, uint64_t n)
{
    return (load * exp + n * (FIXED_1 - exp)) >> FSHIFT;
}

static void sample_load(void)
{
    uint64_t n = (uint64_t)sched_nr_running() * FIXED_1;
    static const uint64_t exps[3] = { EXP_1, EXP_5, EXP_15 };
    for (int i = 0; i < 3; i++)
        __atomic_store_n(&load_fixed[i], decay(load_fixed[i], exps[i], n), __ATOMIC_RELAXED);
}

static void schedstat_tick(const struct trapframe *tf)
{
    struct cpu *c = this_cpu();
    int kind = (tf->cs & 3) ? CPU_TICK_USER
             : c->thread == c->idle_thread ? CPU_TICK_IDLE : CPU_TICK_SYSTEM;
    cpu_ticks[c->id].t[kind]++;
    if (c->id == 0 && c->ticks % LOAD_INTERVAL == 0)
        sample_load();
}

void schedstat_init(void)
{
    smp_add_tick_hook(schedstat_tick);
}

uint64_t sched_cpu_ticks(int cpu, int kind)
{
    if (cpu < 0 || cpu >= MAX_CPUS || kind < 0 || kind >= CPU_TICK_KINDS)
        return 0;
    return __atomic_load_n(&cpu_ticks[cpu].t[kind], __ATOMIC_RELAXED);
}

void sched_loadavg(uint64_t out[3], unsigned shift)
{
    for (int i = 0; i < 3; i++) {
        uint64_t v = __atomic_load_n(&load_fixed[i], __ATOMIC_RELAXED);
        out[i] = shift >= FSHIFT ? v << (shift - FSHIFT) : v >> (FSHIFT - shift);
    }
}
