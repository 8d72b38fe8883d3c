/* Traps, exceptions and interrupt dispatch. */
#ifndef KERN_TRAP_H
#define KERN_TRAP_H

#include <kern/lib/types.h>

#define T_DIVIDE     0
#define T_DEBUG      1
#define T_NMI        2
#define T_BREAKPOINT 3
#define T_OVERFLOW   4
#define T_BOUND      5
#define T_INVALIDOP  6
#define T_NODEVICE   7
#define T_DOUBLE     8
#define T_TSS        10
#define T_SEGMENT    11
#define T_STACK      12
#define T_GPF        13
#define T_PAGEFAULT  14
#define T_FPU        16
#define T_ALIGN      17
#define T_MCE        18
#define T_SIMD       19

/* Interrupt vectors used by the kernel. */
#define IRQ_BASE         32      /* IOAPIC pins 0..23 -> 32..55 */
#define VEC_TIMER        0xE0    /* LAPIC timer */
#define VEC_CALL         0xE1    /* cross-CPU function call */
#define VEC_WAKE         0xE2    /* wake an idle CPU (reschedule) */
#define VEC_TLB          0xE3    /* TLB shootdown (a later issue) */
#define VEC_CLUSTER      0xF0    /* cross-cluster call (kern/cluster/cluster.c): a class
                                  * above the tick's and the cross-CPU calls', so
                                  * a CPU inside those handlers still serves it */
#define VEC_PANIC        0xFD    /* stop: another CPU panicked */
#define VEC_SPURIOUS     0xFF

/* The register frame built by boot/isr.asm; layout must match it. */
struct trapframe {
    uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
    uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
    uint64_t vector, error;
    uint64_t rip, cs, rflags, rsp, ss;
};

extern uint64_t trap_vectors[256];

typedef void (*irq_handler_t)(struct trapframe *tf, void *arg);
/* Install a handler for a vector (interrupts, not exceptions). */
void trap_set_handler(int vector, irq_handler_t fn, void *arg);
/* The handler installed for a vector (NULL: none) and its argument: a
 * driver sharing a level-triggered line calls the one it replaces. */
irq_handler_t trap_get_handler(int vector, void **arg);

/*
 * User mode's part of trap handling, registered at boot by the process
 * layer (user_mode_init, kern/proc/syscall.c), which sits above this one:
 *   exception  an exception (vector < 32): true if it was the user's, or
 *              a fault in copyin/copyout that it resolved or turned into
 *              -EFAULT; false leaves it to panic as a kernel bug
 *   leave      about to return to user mode (preemption, signals)
 * Until they are registered every exception is the kernel's.
 */
struct trap_user_hooks {
    bool (*exception)(struct trapframe *tf);
    void (*leave)(struct trapframe *tf);
};
void trap_set_user_hooks(const struct trap_user_hooks *hooks);
/* Handle an NMI outside a panic: fn returns true when it took it (pvspin's
 * kick); otherwise an NMI is an unexpected exception, as before. */
void trap_set_nmi_hook(bool (*fn)(struct trapframe *tf));

void trap(struct trapframe *tf);
void trap_print_frame(const struct trapframe *tf);

#endif
