/*
 * panic: report, stop every CPU, and power off when asked.
 *
 * The first CPU to panic wins panicking; it breaks the console lock (a
 * stopped CPU may hold it), prints "PANIC: message" at the start of a line
 * (the harnesses look for that), the registers if a trap caused it, and a
 * symbolized backtrace, then sends VEC_PANIC to every other CPU, which halt
 * with interrupts off.  With the "poweroff" option it then writes a status
 * to QEMU's isa-debug-exit port (QEMU exits non-zero) and falls back to an
 * ACPI power-off; without it the machine halts so it can be inspected.
 * A second panic on another CPU, or a nested one, just halts, recording
 * where it stopped as VEC_PANIC's handler does (two CPUs' watchdogs often
 * see the same hang in the same tick).
 *
 * Hang dumps.  panic_hung (the hang watchdog's panic) shows what every
 * subsystem can tell about a machine that stopped moving: the threads and
 * what they wait for, the busy buffers, the disks' queues.  Those live in
 * layers above this one, so each registers its dump at boot
 * (panic_register_hang_dump) and panic_hung calls them in their order;
 * this file names none of them.  hang_dumps[] is written only on the boot
 * CPU during boot, before any watchdog can fire, and read without a lock.
 */
#include <kern/arch/panic.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/ksyms.h>
#include <kern/arch/cpu.h>
#include <kern/arch/arch.h>
#include <kern/arch/trap.h>
#include <kern/lib/options.h>
#include <drivers/platform/lapic.h>
#include <drivers/platform/acpi.h>
#include <drivers/platform/timer.h>

volatile int panicking;

#define MAX_HANG_DUMPS 8

static struct {
    int order;
    void (*dump)(void);
} hang_dumps[MAX_HANG_DUMPS];
static int nhang_dumps;

void panic_register_hang_dump(int order, void (*dump)(void))
{
    if (nhang_dumps == MAX_HANG_DUMPS) {
        kprintf("panic: too many hang dumps, one left out\n");
        return;
    }
    int i = nhang_dumps++;
    for (; i > 0 && hang_dumps[i - 1].order > order; i--)
        hang_dumps[i] = hang_dumps[i - 1];
    hang_dumps[i].order = order;
    hang_dumps[i].dump = dump;
}

static void print_addr(uint64_t addr)
{
    uint64_t off;
    const char *name = ksym_lookup(addr, &off);
    if (name)
        kprintf("  [<%016lx>] %s+0x%lx\n", addr, name, off);
    else
        kprintf("  [<%016lx>] ?\n", addr);
}

static bool kernel_text(uint64_t a)
{
    extern char _text_start[], _text_end[];
    return a >= (uint64_t)_text_start && a < (uint64_t)_text_end;
}

static bool kernel_stack_addr(uint64_t a)
{
    return a >= DIRECT_MAP && (a & 7) == 0;
}

void backtrace_from(uint64_t rbp, uint64_t rip)
{
    kprintf("backtrace:\n");
    if (rip)
        print_addr(rip);
    for (int depth = 0; depth < 32 && kernel_stack_addr(rbp); depth++) {
        uint64_t *frame = (uint64_t *)rbp;
        uint64_t ret = frame[1];
        if (!kernel_text(ret))
            break;
        print_addr(ret - 1);
        if (frame[0] <= rbp)
            break;
        rbp = frame[0];
    }
}

void backtrace(void)
{
    backtrace_from((uint64_t)__builtin_frame_address(0), 0);
}

void machine_poweroff(void)
{
    intr_disable();
    acpi_poweroff();
    for (;;)
        halt();
}

static void stop_others(void)
{
    if (lapic_ready())
        lapic_send_ipi_all_but_self(VEC_PANIC);
}

static __noreturn void panic_finish(void)
{
    kprintf("PANIC: cpu %d stopped the machine\n", this_cpu()->id);
    if (opt_poweroff) {
        outb(0xF4, 1);           /* QEMU isa-debug-exit: exit status 3 */
        machine_poweroff();
    }
    for (;;)
        halt();
}

/* Halt this CPU for good, saying where it was (tf may be NULL) so the
 * panicking CPU's thread dump can show it and its wait can end. */
__noreturn void panic_stop_here(const struct trapframe *tf)
{
    intr_disable();
    this_cpu()->stopped_tf = tf;
    __atomic_store_n(&this_cpu()->stopped, true, __ATOMIC_RELEASE);
    for (;;)
        halt();
}

/* Win the panic or stop: only the first CPU to panic goes on. */
static void panic_enter(const struct trapframe *tf)
{
    intr_disable();
    if (__atomic_exchange_n(&panicking, 1, __ATOMIC_SEQ_CST))
        panic_stop_here(tf);
    console_break_lock();
    stop_others();
}

static void print_panic_line(const char *fmt, va_list ap)
{
    char msg[256];
    vsnprintf(msg, sizeof msg, fmt, ap);
    kprintf("\nPANIC: %s\n", msg);
}

void panic(const char *fmt, ...)
{
    panic_enter(NULL);
    va_list ap;
    va_start(ap, fmt);
    print_panic_line(fmt, ap);
    va_end(ap);
    backtrace_from((uint64_t)__builtin_frame_address(0), 0);
    panic_finish();
}

#define STOP_WAIT_NS 1000000000ull      /* for all the other CPUs together */

/* Give the other CPUs a moment to take VEC_PANIC and record where they
 * were.  One spinning with interrupts off never does, so the wait is
 * bounded by time, not by a count of spins: under TCG a pause can cost a
 * microsecond, and a count that is a moment on hardware outlasted the
 * harness's patience. */
static void wait_others_stopped(void)
{
    uint64_t deadline = uptime_ns() + STOP_WAIT_NS;
    for (int c = 0; c < ncpus; c++)
        while (&cpus[c] != this_cpu() && cpus[c].online &&
               !__atomic_load_n(&cpus[c].stopped, __ATOMIC_ACQUIRE) &&
               uptime_ns() < deadline)
            cpu_relax();
}

void panic_hung(const struct trapframe *tf, const char *fmt, ...)
{
    panic_enter(tf);
    this_cpu()->stopped_tf = tf;
    va_list ap;
    va_start(ap, fmt);
    print_panic_line(fmt, ap);
    va_end(ap);
    wait_others_stopped();
    for (int i = 0; i < nhang_dumps; i++)
        hang_dumps[i].dump();
    panic_finish();
}

void panic_trap(const struct trapframe *tf, const char *what)
{
    panic_enter(tf);
    kprintf("\nPANIC: %s on cpu %d\n", what, this_cpu()->id);
    trap_print_frame(tf);
    backtrace_from(tf->rbp, tf->rip);
    panic_finish();
}
