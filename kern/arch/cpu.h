/*
 * Per-CPU data.
 *
 * Each processor has one struct cpu, cache-line aligned so that no two
 * CPUs' hot fields share a line (Tornado's false-sharing lesson).  The GS
 * base of each processor points at its own struct cpu, whose first field
 * points at itself, so this_cpu() is a single %gs-relative load.
 *
 * Fields marked [own] are written only by the CPU that owns the struct and
 * need no lock; [boot] fields are written once during bring-up, before the
 * CPU is marked online, and are read-only afterwards; [atomic] fields are
 * written by other CPUs with atomic operations.
 */
#ifndef KERN_CPU_H
#define KERN_CPU_H

#include <kern/lib/types.h>

#define MAX_CPUS 64

struct tss {
    uint32_t reserved0;
    uint64_t rsp[3];
    uint64_t reserved1;
    uint64_t ist[7];
    uint64_t reserved2;
    uint16_t reserved3;
    uint16_t iomap_base;
} __packed;

struct gatedesc {
    uint16_t off_lo;
    uint16_t sel;
    uint8_t ist;
    uint8_t type;
    uint16_t off_mid;
    uint32_t off_hi;
    uint32_t reserved;
} __packed;

/* GDT slots: null, kernel code, kernel data, user data, user code, TSS (2). */
#define GDT_KCODE   1
#define GDT_KDATA   2
#define GDT_UDATA   3
#define GDT_UCODE   4
#define GDT_TSS     5
#define GDT_ENTRIES 7
#define SEL_KCODE   (GDT_KCODE << 3)
#define SEL_KDATA   (GDT_KDATA << 3)
#define SEL_UDATA   ((GDT_UDATA << 3) | 3)
#define SEL_UCODE   ((GDT_UCODE << 3) | 3)
#define SEL_TSS     (GDT_TSS << 3)

/* Stack sizes: kernel stacks of 16 KiB; a separate IST stack for double
 * faults and NMIs so a blown kernel stack still reports. */
#define KSTACK_SIZE 16384
#define IST_STACK_SIZE 8192

struct thread;
struct held_locks;

struct trapframe;

struct cpu {
    struct cpu *self;           /* [boot] must stay first: this_cpu() reads %gs:0 */
    uint64_t kstack_top;        /* [own] running thread's kernel stack top (SYSCALL; offset 8) */
    uint64_t user_rsp;          /* [own] SYSCALL entry scratch (offset 16) */
    int id;                     /* [boot] logical CPU number, MADT order */
    uint32_t apic_id;           /* [boot] */
    int node;                   /* [boot] NUMA node */
    volatile bool online;       /* [boot] set by the CPU itself when started */
    struct thread *thread;      /* [own] the thread running here */
    struct thread *idle_thread; /* [boot] this CPU's idle thread */
    struct thread *switch_from; /* [own] thread being switched out (sched.c) */
    struct thread *handoff;     /* [own] thread the idle thread must run next */
    struct held_locks *held;    /* [own] the running thread's held-lock stack */
    uint64_t ticks;             /* [own] clock ticks taken (TICK_HZ) */
    uint64_t timer_events;      /* [own] timer interrupts between ticks (callouts due) */
    uint64_t next_tick_ns;      /* [own] uptime_ns of the next tick (kern/arch/smp.c) */
    uint64_t timer_due_ns;      /* [own] when the LAPIC timer is armed to fire; 0 before it starts */
    bool ticked;                /* [own] the last timer interrupt was a tick */
    uint64_t intr_depth;        /* [own] nesting of interrupt handlers */
    const struct trapframe *stopped_tf; /* [own] where the panic stopped this CPU */
    volatile bool stopped;      /* [own] halted for a panic; set after stopped_tf */

    /* Cross-CPU call mailbox (kern/arch/smp.c): [atomic] */
    void (*volatile call_fn)(void *);
    void *volatile call_arg;
    volatile uint64_t call_seq;     /* bumped by the caller */
    volatile uint64_t call_done;    /* set to call_seq when finished */

    uint64_t gdt[GDT_ENTRIES] __aligned(16);   /* [boot] */
    struct tss tss __aligned(16);              /* [boot] */
    struct gatedesc idt[256] __aligned(16);    /* [boot] */

    /* Per-CPU scratch for subsystems, indexed by small constants. */
    void *local[16];            /* [own] */
} __cacheline;

extern struct cpu cpus[MAX_CPUS];
extern int ncpus;               /* CPUs the MADT lists (set before APs start) */
extern volatile int ncpus_online;

static inline struct cpu *this_cpu(void)
{
    struct cpu *c;
    __asm__ volatile("movq %%gs:0, %0" : "=r"(c));
    return c;
}

static inline int cpu_id(void) { return this_cpu()->id; }

/* Set up this CPU's GDT, TSS, IDT and GS base.  Called by each CPU. */
void cpu_init_tables(struct cpu *c);

/* Boot-CPU setup before anything else runs: GS base at cpus[0]. */
void cpu_early_init(void);

#endif
