/*
 * Paravirtual-aware spinning (pvspin=on) for the queue locks.
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
 * Where.  The spin locks' slow paths call pvspin_wait (mcs_wait, h2_wait)
 * and pvspin_kick_if_halted (mcs_handoff, h2_handoff_nodeless); the fast
 * paths are unchanged, and with pvspin=off (the default) the slow paths
 * test one boolean.  TTAS needs no kick: any running waiter can take a
 * free word, so a preempted waiter does not hold the others up.
 *
 * Locks.  None: the halted flags are in the queue nodes, written by their
 * waiter and read by its predecessor; the counts are per CPU, written only
 * by their CPU with interrupts off (a halt, a kick) and read racily.
 */
#include <kern/lock/pvspin.h>
#include <kern/lib/kprintf.h>
#include <kern/arch/arch.h>
#include <kern/arch/cpu.h>
#include <kern/arch/trap.h>
#include <drivers/platform/lapic.h>

struct pv_count {
    uint64_t halts;             /* [own] halts this CPU made waiting */
    uint64_t kicks;             /* [own] kicks this CPU sent handing over */
} __cacheline;

static struct pv_count counts[MAX_CPUS];

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

void pvspin_wait(volatile uint32_t *waiting, volatile uint32_t *halted)
{
    __atomic_store_n(halted, 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    counts[cpu_id()].halts++;
    pv_halt_window(waiting);
    __atomic_store_n(halted, 0, __ATOMIC_RELAXED);
}

void pvspin_kick_if_halted(volatile uint32_t *halted, int cpu)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (!__atomic_load_n(halted, __ATOMIC_RELAXED))
        return;
    counts[cpu_id()].kicks++;
    lapic_send_nmi(cpus[cpu].apic_id);
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
        *halts += READ_ONCE(counts[c].halts);
        *kicks += READ_ONCE(counts[c].kicks);
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
