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
 * The backstop.  While a CPU halts, its record names the word its window
 * watches and the value it halts on.  Every CPU's tick (pvspin_rescue)
 * kicks a CPU that has stayed halted 5 ms on a word that changed: TTAS's
 * release leaves one race open on purpose (RELEASE_RACE in spinlock.c),
 * and there the kick comes a tick late instead of never.
 *
 * Locks whose waiters all watch the lock (TTAS, spin mutexes).  Here the
 * releaser does not know who waits, and a preempted holder is the problem
 * (every waiter burns host time its descheduled holder needs).  After
 * PVSPIN_SPINS pauses a waiter notes in its CPU's record which lock it
 * waits on and sets its wait flag, then marks the lock and looks at it
 * once more; if it is still busy it halts in the same window, on its own
 * wait flag.  A TTAS lock's mark is its word's third value (held with
 * sleepers, set by compare-and-swap from held: pvspin_wait_word), and its
 * release under pvspin=on exchanges the word to 0 and, finding the mark,
 * scans the CPUs for those waiting on this lock, clearing each one's wait
 * flag and kicking it if it halted (pvspin_kick_waiters); such a lock is
 * taken by compare-and-swap from 0, so that no acquisition overwrites a
 * mark.  A spin mutex's mark is its sleepers byte, set after a fence
 * (pvspin_wait_busy), and its release fences and exchanges the byte
 * (pvspin_release_busy).  Either the waiter's last look sees the lock
 * free, or the releaser sees the mark; the waiter stored its record
 * before the mark, so the scan finds it; the flag-and-halted pair then
 * works as the queue locks' does.  Every halted waiter is kicked and they
 * race for the lock; the losers spin and may halt again.  A scan that
 * finds a record going stale (its CPU woke and moved on) clears a flag at
 * worst, which ends a later halt early.
 *
 * Where.  The spin locks' slow paths call pvspin_wait (mcs_wait, h2_wait)
 * and pvspin_kick_if_halted (mcs_handoff, h2_handoff_nodeless); TTAS's
 * wait (tas_spin) calls pvspin_wait_word and its release (word_release
 * for SPIN_TTAS_PV) pvspin_kick_waiters; the spin mutexes' wait
 * (halt_for in kern/lock/mutex.c) calls pvspin_wait_busy, and their
 * release, through the wake test it makes anyway, pvspin_release_busy.
 * With pvspin=off (the default) the fast paths are unchanged and the slow
 * paths test one boolean.  Halts and kicks are counted per
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
#include <kern/arch/smp.h>
#include <drivers/platform/lapic.h>
#include <drivers/platform/timer.h>

struct pv_cpu {
    uint64_t halts;             /* [own] halts this CPU made waiting */
    uint64_t kicks;             /* [own] kicks this CPU sent handing over */
    uint64_t rescues;           /* [own] kicks this CPU's tick sent (pvspin_rescue) */
    /* While this CPU halts (halt_on): the word its window watches, the
     * value that keeps it halted and its halted flag, read by every CPU's
     * tick. */
    const volatile uint32_t *watch;     /* [own] */
    const volatile uint32_t *watch_halted;  /* [own] */
    uint32_t watch_value;               /* [own] */
    /* When a tick first saw this CPU halted on a changed word (TSC; 0:
     * not seen): [racy] written by its own CPU (halt_on) and by every
     * CPU's tick, without a lock; at worst a rescue waits one tick more or
     * is sent twice. */
    uint64_t stale_since;
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

static void pvspin_rescue(const struct trapframe *tf);

void pvspin_init(void)
{
    if (!pvspin_on)
        return;
    trap_set_nmi_hook(pvspin_nmi);
    if (!smp_add_tick_hook(pvspin_rescue))
        kprintf("pvspin: no room for the rescue tick hook; a lost kick would hang\n");
}

/*
 * The last look at *word and the hlt, as one window an NMI can be resumed
 * out of (see "Lost kicks"): halts while *word == value.  noinline and
 * noclone: the labels must be emitted exactly once.
 */
static void __attribute__((noinline, noclone)) pv_halt_window(const volatile uint32_t *word,
                                                              uint32_t value)
{
    __asm__ volatile(".globl pv_window_start, pv_window_end\n"
                     "pv_window_start:\n\t"
                     "cmpl %1, (%0)\n\t"
                     "jne pv_window_end\n\t"
                     "hlt\n"
                     "pv_window_end:\n"
                     :: "r"(word), "r"(value) : "memory", "cc");
}

/*
 * Every CPU's tick: kick any CPU that has stayed halted on a word that no
 * longer holds the value it halts on for 5 ms or more (a kick
 * on its way, or a CPU descheduled by the host between waking and
 * clearing its watch, is not rescued again: ticks on sixteen CPUs sent
 * more rescues than there were halts before that rule).  The kicks the protocols above send make this
 * unneeded; it is the backstop that turns a kick lost to a race the
 * protocol does not close (TTAS's release, RELEASE_RACE) into a delay of
 * one tick rather than a hang.
 */
static void pvspin_rescue(const struct trapframe *tf)
{
    (void)tf;
    int me = cpu_id();
    for (int cpu = 0; cpu < ncpus; cpu++) {
        struct pv_cpu *c = &pv_cpus[cpu];
        const volatile uint32_t *w = __atomic_load_n(&c->watch, __ATOMIC_ACQUIRE);
        if (cpu == me || !w || !*__atomic_load_n(&c->watch_halted, __ATOMIC_RELAXED) ||
            *w == __atomic_load_n(&c->watch_value, __ATOMIC_RELAXED))
            continue;
        uint64_t now = rdtsc(), since = __atomic_load_n(&c->stale_since, __ATOMIC_RELAXED);
        if (since == 0) {
            __atomic_store_n(&c->stale_since, now, __ATOMIC_RELAXED);
            continue;
        }
        if (now - since < tsc_hz / 200)
            continue;
        __atomic_store_n(&c->stale_since, 0, __ATOMIC_RELAXED);
        pv_cpus[me].rescues++;
        lapic_send_nmi(cpus[cpu].apic_id);
    }
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

/* Halt while *word == value (the flag-and-halted pair of "Lost kicks"),
 * watched by the ticks' rescue meanwhile. */
static void halt_on(const volatile uint32_t *word, uint32_t value, volatile uint32_t *halted,
                    struct lock_class *cls)
{
    struct pv_cpu *me = &pv_cpus[cpu_id()];
    me->watch_value = value;
    me->watch_halted = halted;
    me->stale_since = 0;
    __atomic_store_n(&me->watch, word, __ATOMIC_RELEASE);
    __atomic_store_n(halted, 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    count_halt(cls);
    pv_halt_window(word, value);
    __atomic_store_n(halted, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&me->watch, NULL, __ATOMIC_RELAXED);
}

void pvspin_wait(volatile uint32_t *waiting, volatile uint32_t *halted, struct lock_class *cls)
{
    halt_on(waiting, 1, halted, cls);
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

/* The record first (a release that sees the mark must find it), then the
 * mark; then halt while the word still holds the mark.  A word found free
 * means the lock was released meanwhile. */
void pvspin_wait_word(const void *lock, volatile uint32_t *word, struct lock_class *cls)
{
    struct pv_cpu *me = &pv_cpus[cpu_id()];
    __atomic_store_n(&me->waiting_on, lock, __ATOMIC_RELAXED);
    for (;;) {
        uint32_t v = __atomic_load_n(word, __ATOMIC_SEQ_CST);
        if (v == 0)
            break;                          /* released: try for it */
        if (v == PVSPIN_WORD_SLEEPERS ||
            __atomic_compare_exchange_n(word, &v, PVSPIN_WORD_SLEEPERS, false,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
            halt_on(word, PVSPIN_WORD_SLEEPERS, &me->halted, cls);
            break;
        }
    }
    __atomic_store_n(&me->waiting_on, NULL, __ATOMIC_RELAXED);
}

void pvspin_kick_waiters(const void *lock, struct lock_class *cls)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (int cpu = 0; cpu < ncpus; cpu++) {
        struct pv_cpu *w = &pv_cpus[cpu];
        if (__atomic_load_n(&w->waiting_on, __ATOMIC_RELAXED) != lock)
            continue;
        __atomic_store_n(&w->wait_flag, 0, __ATOMIC_RELAXED);
        pvspin_kick_if_halted(&w->halted, cpu, cls);
    }
}

void pvspin_kick_sleepers(const void *lock, volatile uint8_t *sleepers, struct lock_class *cls)
{
    if (__atomic_exchange_n(sleepers, 0, __ATOMIC_SEQ_CST))
        pvspin_kick_waiters(lock, cls);
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

uint64_t pvspin_rescues(void)
{
    uint64_t n = 0;
    for (int c = 0; c < MAX_CPUS; c++)
        n += READ_ONCE(pv_cpus[c].rescues);
    return n;
}

void pvspin_report(void)
{
    if (!pvspin_on)
        return;
    uint64_t halts, kicks;
    pvspin_counts(&halts, &kicks);
    kprintf("pvspin: %lu halts, %lu kicks, %lu rescues\n", (unsigned long)halts,
            (unsigned long)kicks, (unsigned long)pvspin_rescues());
}
