/*
 * Bringing up the application processors, and cross-CPU calls.
 *
 * Theory.  The MADT lists the processors; logical CPU numbers follow its
 * order with the boot CPU moved to 0.  Each AP is started in turn with
 * INIT-SIPI-SIPI (Intel SDM Vol. 3, "MP initialization") through the
 * trampoline in boot/trampoline.asm, which is given the kernel page tables,
 * a fresh stack from the AP's own node, and the AP's entry: all three come
 * from the caller (struct ap_boot; kmain passes its ap_main, which brings
 * the CPU into the scheduler, a layer above this one).  The boot CPU then
 * waits for the AP to mark itself online.  That wait is patient (seconds
 * of reference-clock time, re-sending the SIPI once): under QEMU's icount
 * mode vCPUs run in long turns, so an AP can take a long time to reach its
 * first instruction.
 *
 * Cross-CPU calls use a one-slot mailbox per CPU (call_fn, call_arg,
 * call_seq, call_done in struct cpu) and the VEC_CALL IPI.  call_lock
 * serializes callers, so a slot is never overwritten while busy.  Panic
 * stops the other CPUs with an NMI instead, which cannot be masked.
 *
 * maxcpus=N (smp_cpus_to_use) keeps only logical CPUs 0..N-1: kmain makes
 * N the machine's CPU count before the NUMA map, the scheduler or the
 * allocators size anything by it, so the other processors are never
 * started and nothing waits for them.  As the MADT order fills node 0
 * first, one NUMA preset then sweeps 1..N CPUs with its memory, nodes and
 * distances intact (the benchmark harness, tools/harness/).
 *
 * The uniprocessor build (make UP=1, TEMPEST_UP) starts no AP: the
 * machine's CPU count is 1 from the start (smp_build_cpus), and a
 * cross-CPU call is a local call, as the multiprocessor calls make it
 * for the caller's own CPU (TLB shootdowns included: tlb_flush calls
 * smp_call_one only for CPUs other than this one, and there are none).
 *
 * The clock tick (VEC_TIMER) counts ticks and calls the tick hook
 * registered at boot (the ktest watchdog's, smp_set_tick_hook), then the
 * hooks added with smp_add_tick_hook (the statistics', the profiler's);
 * between ticks the same one-shot timer brings the callouts that are due
 * (the event hook; "the clock" below).
 */
#include <kern/arch/smp.h>
#include <kern/arch/cpu.h>
#include <kern/arch/arch.h>
#include <kern/arch/trap.h>
#include <kern/lib/string.h>
#include <kern/lib/kprintf.h>
#include <kern/arch/rawlock.h>
#include <drivers/platform/lapic.h>
#include <drivers/platform/timer.h>

#define TRAMP_BASE 0x8000
#define AP_START_TIMEOUT_US 10000000     /* 10 s of reference-clock time */

extern char tramp_start[], tramp_end[];

struct tramp_data {
    uint64_t efer, cr3, stack, entry, arg;
};

#ifndef TEMPEST_UP
static rawlock_t call_lock = RAWLOCK_INIT;
#endif

void cpu_features_init(void)
{
    /* SSE state for user programs (the kernel itself uses none). */
    uint64_t cr0 = read_cr0();
    cr0 &= ~(1UL << 2);         /* EM off */
    cr0 |= 1UL << 1;            /* MP */
    __asm__ volatile("mov %0, %%cr0" :: "r"(cr0));
    write_cr4(read_cr4() | (1UL << 9) | (1UL << 10));  /* OSFXSR, OSXMMEXCPT */
}

static void call_handler(struct trapframe *tf, void *unused)
{
    struct cpu *c = this_cpu();
    uint64_t seq = c->call_seq;
    void (*fn)(void *) = c->call_fn;
    if (fn && c->call_done != seq) {
        fn(c->call_arg);
        __atomic_store_n(&c->call_done, seq, __ATOMIC_RELEASE);
    }
}

/* Written once at boot, before the tick starts; read without a lock. */
static void (*tick_hook)(const struct trapframe *tf);

void smp_set_tick_hook(void (*hook)(const struct trapframe *tf))
{
    tick_hook = hook;
}

/* The added tick hooks (smp_add_tick_hook): written at boot before the tick starts. */
static void (*added_tick_hooks[SMP_TICK_HOOKS])(const struct trapframe *tf);

bool smp_add_tick_hook(void (*hook)(const struct trapframe *tf))
{
    for (int i = 0; i < SMP_TICK_HOOKS; i++)
        if (!added_tick_hooks[i]) {
            added_tick_hooks[i] = hook;
            return true;
        }
    return false;
}

/* ---- the clock: ticks and timer events ----
 *
 * Each CPU's LAPIC timer is one-shot (drivers/platform/lapic.c), armed
 * for the earlier of the CPU's next tick and its first pending timer
 * event (a callout, told by the event hook).  So the tick keeps its rate
 * (TICK_HZ: CPU time's samples, preemption, the statistics) and a timed
 * sleep ends when it is due, not at the next tick: high-resolution
 * one-shot timers on a periodic tick, as Solaris's cyclics and Linux's
 * hrtimers give.  The fields are the CPU's own ([own] in struct cpu),
 * touched with interrupts off. */
#define TICK_NS (1000000000UL / TICK_HZ)
/* An expiry this close before the tick is due takes the tick with it
 * (the LAPIC and the TSC are calibrated apart and drift a little). */
#define TICK_EARLY_NS 20000UL

/* Written once at boot, before the timers start; read without a lock. */
static uint64_t (*event_hook)(uint64_t now);

void smp_set_timer_event_hook(uint64_t (*hook)(uint64_t now))
{
    event_hook = hook;
}

static void timer_program(struct cpu *c, uint64_t due)
{
    if (c->next_tick_ns < due)
        due = c->next_tick_ns;
    c->timer_due_ns = due;
    uint64_t now = uptime_ns();
    lapic_timer_arm(due > now ? due - now : 0);
}

void smp_timer_event_armed(uint64_t when)
{
    struct cpu *c = this_cpu();
    if (c->timer_due_ns && when < c->timer_due_ns)
        timer_program(c, when);
}

static void run_tick(struct cpu *c, struct trapframe *tf, uint64_t now)
{
    c->ticks++;
    if (tick_hook)
        tick_hook(tf);
    for (int i = 0; i < SMP_TICK_HOOKS && added_tick_hooks[i]; i++)
        added_tick_hooks[i](tf);
    c->next_tick_ns += TICK_NS;
    if (c->next_tick_ns <= now)         /* ticks were missed: no burst to catch up */
        c->next_tick_ns = now + TICK_NS;
}

static void timer_handler(struct trapframe *tf, void *unused)
{
    struct cpu *c = this_cpu();
    uint64_t now = uptime_ns();
    c->ticked = now + TICK_EARLY_NS >= c->next_tick_ns;
    if (c->ticked)
        run_tick(c, tf, now);
    else
        c->timer_events++;
    timer_program(c, event_hook ? event_hook(uptime_ns()) : UINT64_MAX);
}

void smp_timer_start(void)
{
    struct cpu *c = this_cpu();
    lapic_timer_oneshot();
    c->next_tick_ns = uptime_ns() + TICK_NS;
    timer_program(c, UINT64_MAX);
}

#ifdef TEMPEST_UP
/* The uniprocessor build: this CPU is the only one, so both calls are
 * the local call the multiprocessor ones make for the caller's own CPU:
 * no IPI, no lock, the interrupt state left as it is. */
void smp_call_all(void (*fn)(void *), void *arg)
{
    fn(arg);
}

void smp_call_one(int cpu, void (*fn)(void *), void *arg)
{
    fn(arg);
}
#else
static void post_call(struct cpu *c, void (*fn)(void *), void *arg)
{
    c->call_fn = fn;
    c->call_arg = arg;
    __atomic_add_fetch(&c->call_seq, 1, __ATOMIC_RELEASE);
    lapic_send_ipi(c->apic_id, VEC_CALL);
}

static void wait_call(struct cpu *c)
{
    while (__atomic_load_n(&c->call_done, __ATOMIC_ACQUIRE) != c->call_seq)
        cpu_relax();
}

void smp_call_all(void (*fn)(void *), void *arg)
{
    rawlock_acquire(&call_lock);
    struct cpu *me = this_cpu();
    for (int i = 0; i < ncpus; i++)
        if (cpus[i].online && &cpus[i] != me)
            post_call(&cpus[i], fn, arg);
    fn(arg);
    for (int i = 0; i < ncpus; i++)
        if (cpus[i].online && &cpus[i] != me)
            wait_call(&cpus[i]);
    rawlock_release(&call_lock);
}

void smp_call_one(int cpu, void (*fn)(void *), void *arg)
{
    if (&cpus[cpu] == this_cpu()) {
        fn(arg);
        return;
    }
    rawlock_acquire(&call_lock);
    post_call(&cpus[cpu], fn, arg);
    wait_call(&cpus[cpu]);
    rawlock_release(&call_lock);
}
#endif /* TEMPEST_UP */

void smp_mark_online(struct cpu *c)
{
    __atomic_store_n(&c->online, true, __ATOMIC_RELEASE);
    __atomic_add_fetch(&ncpus_online, 1, __ATOMIC_SEQ_CST);
}

static bool wait_online(struct cpu *c, uint64_t us)
{
    for (uint64_t waited = 0; waited < us; waited += 100) {
        if (__atomic_load_n(&c->online, __ATOMIC_ACQUIRE))
            return true;
        clock_spin_us(100);
    }
    return __atomic_load_n(&c->online, __ATOMIC_ACQUIRE);
}

static bool start_ap(struct cpu *c, const struct ap_boot *boot)
{
    size_t len = (size_t)(tramp_end - tramp_start);
    uint8_t *tramp = phys_to_virt(TRAMP_BASE);
    memcpy(tramp, tramp_start, len);
    struct tramp_data *d = (struct tramp_data *)(tramp + len - sizeof *d);
    d->efer = rdmsr(MSR_EFER) & ((1UL << 8) | (1UL << 11));
    d->cr3 = boot->cr3;
    d->stack = (uint64_t)boot->stack_top(c->node);
    d->entry = (uint64_t)boot->main;
    d->arg = (uint64_t)c;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);

    lapic_send_init(c->apic_id);
    clock_spin_us(10000);
    lapic_send_sipi(c->apic_id, TRAMP_BASE >> 12);
    if (wait_online(c, 1000))
        return true;
    lapic_send_sipi(c->apic_id, TRAMP_BASE >> 12);
    return wait_online(c, AP_START_TIMEOUT_US);
}

int smp_cpus_to_use(int found, int max)
{
    if (max <= 0 || max >= found)
        return found;
    kprintf("smp: maxcpus=%d: using cpus 0-%d of the %d found\n", max, max - 1, found);
    return max;
}

int smp_build_cpus(int found, int maxcpus)
{
#ifdef TEMPEST_UP
    /* Its own line only: no maxcpus= was asked for, so none is named. */
    kprintf("smp: uniprocessor build (TEMPEST_UP): cpu 0 alone of the %d found%s\n", found,
            maxcpus > 0 ? " (maxcpus= has no effect)" : "");
    return 1;
#else
    return smp_cpus_to_use(found, maxcpus);
#endif
}

int smp_start_aps(const struct ap_boot *boot)
{
    trap_set_handler(VEC_CALL, call_handler, NULL);
    trap_set_handler(VEC_TIMER, timer_handler, NULL);
    ncpus_online = 1;
    cpus[0].online = true;
    for (int i = 1; i < ncpus; i++) {
        if (!start_ap(&cpus[i], boot))
            kprintf("smp: cpu %d (apic %u) did not start\n", i, cpus[i].apic_id);
    }
    return ncpus_online;
}
