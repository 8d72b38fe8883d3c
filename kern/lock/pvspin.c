/*
 * Paravirtual-aware spinning (pvspin=on) for the spinning locks.
 *
 * The problem.  Under an emulator each virtual CPU is a host thread.  When
 * a machine has more virtual CPUs than the host has cores, the host
 * deschedules some of them at any moment.  A queue lock (MCS, H2-MCS) hands
 * the lock to the next waiter in line; if that waiter's thread is not
 * running, the lock sits unused while every waiter queued behind it spins
 * on its own node, burning the host time the handed-to thread needs (a
 * 16-CPU hector boot on a two-core host took 12 to 100 ms a fault under
 * H2-MCS).  Linux's answer is the paravirtual queued spinlock: spin a
 * while, then halt, and have the releaser kick the halted waiter through
 * the hypervisor.
 *
 * Here.  A queued waiter spins PVSPIN_SPINS pauses on its node; then it
 * sets its node's halted flag, looks at its waiting flag once more and, if
 * it is still set, halts.  A halted virtual CPU is a sleeping host thread,
 * so the host's cores go to the threads that can make progress.  The
 * hand-off clears the successor's waiting flag and then, if its halted
 * flag is set, sends that CPU an NMI (the kick): interrupts are off in a
 * spin lock's wait, and an NMI is the one interrupt that ends a halt with
 * them off.  The kick costs the releaser nothing unless the waiter halted.
 *
 * Lost kicks.  The waiter stores halted and then loads waiting; the
 * releaser stores waiting and then loads halted, each pair with a full
 * fence between.  So either the waiter sees the lock handed over and does
 * not halt, or the releaser sees halted and kicks.  The one gap is a kick
 * that arrives after the waiter's last look and before its hlt: the NMI
 * runs first and the hlt would then wait for ever.  The look and the hlt
 * are therefore one window of three instructions (pv_halt_window), and an
 * NMI that interrupts the window resumes after the hlt (pvspin_nmi), so
 * the waiter looks again.  A stale kick (one sent to a waiter that did not
 * halt after all) only ends some later halt early, which costs a spin.
 *
 * Locks whose waiters all watch the lock (TTAS, spin mutexes).  Here the
 * releaser does not know who waits, and a preempted holder is the problem
 * (every waiter burns host time its descheduled holder needs).  After
 * PVSPIN_SPINS pauses a waiter (pvspin_wait_busy) notes in its CPU's
 * record which lock it waits on and sets its wait flag, sets the lock's
 * sleepers byte, fences, and looks at the lock once more; if it is still
 * busy it halts in the same window, on its own wait flag.  The release
 * stores the lock free, fences and loads the sleepers byte
 * (pvspin_release_busy); only when it is set does it exchange it to 0 and
 * scan the CPUs for those waiting on this lock, clearing each one's wait
 * flag and kicking it if it halted.  Either the waiter's last look sees
 * the lock free, or the releaser sees the byte (the two fences); the
 * waiter stored its record before the byte, so the scan finds it; the
 * flag-and-halted pair then works as the queue locks' does.  A waiter set
 * the byte after the exchange only if it then looks at a lock already
 * free, or one taken again, whose next release scans.  Every halted waiter
 * is kicked and they race for the lock; the losers spin and may halt
 * again.  A scan that finds a record going stale (its CPU woke and moved
 * on) clears a flag at worst, which ends a later halt early.
 *
 * Where.  The spin locks' slow paths call pvspin_wait (mcs_wait, h2_wait)
 * and pvspin_kick_if_halted (mcs_handoff, h2_handoff_nodeless); TTAS's
 * wait (tas_wait) and the spin mutexes' (wait_busy in kern/lock/mutex.c)
 * call pvspin_wait_busy, and their releases pvspin_release_busy.  The fast
 * paths are unchanged, and with pvspin=off (the default) the slow paths
 * and those releases test one boolean.  Halts and kicks are counted per
 * lock class (pv_halts and pv_kicks, which lockstat reports whatever its
 * mode) and per CPU.  Not covered: the raw interlocks (kern/arch/rawlock.h),
 * held for a few instructions, and the sleep mutexes, which sleep at once
 * rather than spin.
 *
 * Locks.  None: the halted flags are in the queue nodes, written by their
 * waiter and read by its predecessor; a busy-waiter's record is written by
 * its CPU and read (its flag cleared) by releasers; the counts are per
 * CPU, written only by their CPU with interrupts off (a halt, a kick) and
 * read racily.
 */
#include <kern/lock/pvspin.h>
#include <kern/lock/lock.h>
#include <kern/lib/kprintf.h>
#include <kern/arch/arch.h>
#include <kern/arch/cpu.h>
#include <kern/arch/trap.h>
#include <drivers/platform/lapic.h>

struct pv_cpu {
    uint64_t halts;             /* [own] halts this CPU made waiting */
    uint64_t kicks;             /* [own] kicks this CPU sent handing over */
    /* pvspin_wait_busy's record: the lock this CPU waits on (NULL when it
     * waits on none), written by it and read by releasers; its wait flag,
     * set by it and cleared by the release that kicks; halted while it
     * halts, read by that release. */
    const void *waiting_on;     /* [own] */
    uint32_t wait_flag;         /* [atomic] */
    uint32_t halted;            /* [atomic] */
} __cacheline;

static struct pv_cpu pv_cpus[MAX_CPUS];

/* The window's bounds, defined in pv_halt_window's assembly. */
extern const char pv_window_start[], pv_window_end[];

void pvspin_init(void)
{
    if (pvspin_on)
        trap_set_nmi_hook(pvspin_nmi);
}

/*
 * The last look at *waiting and the hlt, as one window an NMI can be
 * resumed out of (see "Lost kicks").  noinline and noclone: the labels
 * must be emitted exactly once.
 */
static void __attribute__((noinline, noclone)) pv_halt_window(volatile uint32_t *waiting)
{
    __asm__ volatile(".globl pv_window_start, pv_window_end\n"
                     "pv_window_start:\n\t"
                     "cmpl $0, (%0)\n\t"
                     "je pv_window_end\n\t"
                     "hlt\n"
                     "pv_window_end:\n"
                     :: "r"(waiting) : "memory", "cc");
}

static void count_halt(struct lock_class *cls)
{
    int cpu = cpu_id();
    pv_cpus[cpu].halts++;
    if (cls)
        cls->stats[cpu].pv_halts++;
}

static void count_kick(struct lock_class *cls)
{
    int cpu = cpu_id();
    pv_cpus[cpu].kicks++;
    if (cls)
        cls->stats[cpu].pv_kicks++;
}

void pvspin_wait(volatile uint32_t *waiting, volatile uint32_t *halted, struct lock_class *cls)
{
    __atomic_store_n(halted, 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    count_halt(cls);
    pv_halt_window(waiting);
    __atomic_store_n(halted, 0, __ATOMIC_RELAXED);
}

void pvspin_kick_if_halted(volatile uint32_t *halted, int cpu, struct lock_class *cls)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (!__atomic_load_n(halted, __ATOMIC_RELAXED))
        return;
    count_kick(cls);
    lapic_send_nmi(cpus[cpu].apic_id);
}

void pvspin_wait_busy(const void *lock, volatile uint8_t *sleepers,
                      bool (*busy)(const void *lock), struct lock_class *cls)
{
    struct pv_cpu *me = &pv_cpus[cpu_id()];
    __atomic_store_n(&me->wait_flag, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&me->waiting_on, lock, __ATOMIC_RELAXED);
    __atomic_store_n(sleepers, 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (busy(lock))
        pvspin_wait(&me->wait_flag, &me->halted, cls);
    __atomic_store_n(&me->waiting_on, NULL, __ATOMIC_RELAXED);
}

void pvspin_kick_sleepers(const void *lock, volatile uint8_t *sleepers, struct lock_class *cls)
{
    if (!__atomic_exchange_n(sleepers, 0, __ATOMIC_SEQ_CST))
        return;
    for (int cpu = 0; cpu < ncpus; cpu++) {
        struct pv_cpu *w = &pv_cpus[cpu];
        if (__atomic_load_n(&w->waiting_on, __ATOMIC_RELAXED) != lock)
            continue;
        __atomic_store_n(&w->wait_flag, 0, __ATOMIC_RELAXED);
        pvspin_kick_if_halted(&w->halted, cpu, cls);
    }
}

bool pvspin_nmi(struct trapframe *tf)
{
    if (tf->rip >= (uint64_t)pv_window_start && tf->rip < (uint64_t)pv_window_end)
        tf->rip = (uint64_t)pv_window_end;
    return true;
}

void pvspin_counts(uint64_t *halts, uint64_t *kicks)
{
    *halts = *kicks = 0;
    for (int c = 0; c < MAX_CPUS; c++) {
        *halts += READ_ONCE(pv_cpus[c].halts);
        *kicks += READ_ONCE(pv_cpus[c].kicks);
    }
}

void pvspin_report(void)
{
    if (!pvspin_on)
        return;
    uint64_t halts, kicks;
    pvspin_counts(&halts, &kicks);
    kprintf("pvspin: %lu halts, %lu kicks\n", (unsigned long)halts, (unsigned long)kicks);
}
