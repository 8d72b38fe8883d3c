/*
 * Trap dispatch.  Exceptions in the kernel are fatal: they print the frame
 * and a backtrace and panic; exceptions from user mode become signals.
 * Interrupts go to the handler installed for their vector and are
 * acknowledged at the local APIC.  What user mode needs on the way in and
 * out (signals, preemption, copyin faults) belongs to the
 * process layer above, which registers it as struct trap_user_hooks
 * (user_mode_init, kern/proc/syscall.c).
 *
 * irq_handlers[] and user_hooks are written only during boot, before the
 * vector can fire or a user program runs, and read without a lock
 * afterwards.
 */
#include <kern/arch/trap.h>
#include <kern/arch/panic.h>
#include <kern/lib/kprintf.h>
#include <kern/arch/arch.h>
#include <kern/arch/cpu.h>
#include <drivers/platform/lapic.h>

static const char *const exception_names[32] = {
    "divide error", "debug", "NMI", "breakpoint", "overflow", "bound range",
    "invalid opcode", "device not available", "double fault", "coprocessor overrun",
    "invalid TSS", "segment not present", "stack fault", "general protection fault",
    "page fault", "reserved", "x87 floating point", "alignment check",
    "machine check", "SIMD floating point", "virtualization", "control protection",
};

static struct {
    irq_handler_t fn;
    void *arg;
} irq_handlers[256];

static struct trap_user_hooks user_hooks;

void trap_set_user_hooks(const struct trap_user_hooks *hooks)
{
    user_hooks = *hooks;
}

void trap_set_handler(int vector, irq_handler_t fn, void *arg)
{
    irq_handlers[vector].arg = arg;
    irq_handlers[vector].fn = fn;
}

irq_handler_t trap_get_handler(int vector, void **arg)
{
    *arg = irq_handlers[vector].arg;
    return irq_handlers[vector].fn;
}

void trap_print_frame(const struct trapframe *tf)
{
    const char *name = tf->vector < 32 && exception_names[tf->vector] ? exception_names[tf->vector] : "interrupt";
    kprintf("trap %lu (%s) error 0x%lx on cpu %d\n", tf->vector, name, tf->error, this_cpu()->id);
    kprintf("rip %016lx cs %04lx rflags %08lx rsp %016lx ss %04lx\n",
            tf->rip, tf->cs, tf->rflags, tf->rsp, tf->ss);
    kprintf("rax %016lx rbx %016lx rcx %016lx rdx %016lx\n", tf->rax, tf->rbx, tf->rcx, tf->rdx);
    kprintf("rsi %016lx rdi %016lx rbp %016lx r8  %016lx\n", tf->rsi, tf->rdi, tf->rbp, tf->r8);
    kprintf("r9  %016lx r10 %016lx r11 %016lx r12 %016lx\n", tf->r9, tf->r10, tf->r11, tf->r12);
    kprintf("r13 %016lx r14 %016lx r15 %016lx\n", tf->r13, tf->r14, tf->r15);
    kprintf("cr0 %016lx cr2 %016lx cr3 %016lx cr4 %016lx\n", read_cr0(), read_cr2(), read_cr3(), read_cr4());
}

static __noreturn void stop_this_cpu(const struct trapframe *tf)
{
    panic_stop_here(tf);
}

/* An NMI's handler other than panic's (kern/lock/pvspin.c's kick), set at
 * boot before any CPU can be sent one. */
static bool (*nmi_hook)(struct trapframe *tf);     /* [boot] */

void trap_set_nmi_hook(bool (*fn)(struct trapframe *tf))
{
    nmi_hook = fn;
}

void trap(struct trapframe *tf)
{
    uint64_t v = tf->vector;
    if (v == VEC_PANIC || (v == T_NMI && panicking))
        stop_this_cpu(tf);
    if (v == T_NMI && nmi_hook && nmi_hook(tf))
        return;                 /* e.g. a queue-lock waiter's kick (kern/lock/pvspin.c) */
    if (v < 32 && user_hooks.exception && user_hooks.exception(tf))
        return;                 /* a user-mode exception, or a copyin fault */
    if (v < 32) {
        char what[64];
        snprintf(what, sizeof what, "%s", exception_names[v] ? exception_names[v] : "exception");
        panic_trap(tf, what);
    }
    this_cpu()->intr_depth++;
    if (irq_handlers[v].fn)
        irq_handlers[v].fn(tf, irq_handlers[v].arg);
    else if (v != VEC_SPURIOUS)
        kprintf("trap: unexpected interrupt %lu on cpu %d\n", v, this_cpu()->id);
    this_cpu()->intr_depth--;
    if (v != VEC_SPURIOUS)
        lapic_eoi();
    if ((tf->cs & 3) && user_hooks.leave)
        user_hooks.leave(tf);   /* preemption of user mode, pending signals */
}
