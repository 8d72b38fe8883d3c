/*
 * kmain: the boot CPU's path from the Multiboot2 hand-off to a running
 * multiprocessor.  The order matters and is the whole theory here:
 *
 *   console -> boot info -> options -> direct map -> ACPI -> CPU numbering
 *   -> NUMA -> page allocator -> heap -> descriptor tables -> clocks and
 *   APICs -> locks and scheduler (the boot context becomes thread "main")
 *   -> application processors -> tests/benchmarks -> power off.
 *
 * Everything before smp_start_aps runs on one CPU with interrupts off, so
 * the tables it fills (options, ACPI, NUMA, cpus[].apic_id/node) need no
 * locks and are read-only once other CPUs run.
 *
 * kmain is the top of the layers (docs/architecture.md): it may call every
 * subsystem, and it is where the lower layers are given what they must not
 * name themselves: the APs' entry and stacks (struct ap_boot), the clock
 * tick's hook (the ktest watchdog), and user mode's hooks into the trap
 * path and the context switch (user_mode_init).
 */
#include <kern/lib/kprintf.h>
#include <kern/arch/arch.h>
#include <kern/arch/cpu.h>
#include <kern/arch/multiboot.h>
#include <kern/lib/options.h>
#include <kern/lock/pvspin.h>
#include <kern/arch/numa.h>
#include <kern/arch/panic.h>
#include <kern/arch/smp.h>
#include <kern/arch/kprof.h>
#include <kern/tests/ktest.h>
#include <kern/tests/kbench.h>
#include <kern/vm/kmem.h>
#include <kern/lock/lock.h>
#include <kern/lock/lockstat.h>
#include <kern/lock/lockbench.h>
#include <kern/lib/string.h>
#include <kern/vm/page.h>
#include <kern/lock/lock.h>
#include <kern/lock/sleep.h>
#include <kern/cluster/cluster.h>
#include <kern/sched/sched.h>
#include <kern/sched/thread.h>
#include <kern/sched/callout.h>
#include <kern/lock/mutex.h>
#include <drivers/block/bio.h>
#include <drivers/net/netdev.h>
#include <kern/vm/pmap.h>
#include <kern/vm/pcache.h>
#include <kern/vm/segmap.h>
#include <drivers/platform/acpi.h>
#include <drivers/platform/lapic.h>
#include <drivers/platform/ioapic.h>
#include <drivers/platform/timer.h>
#include <drivers/platform/rtc.h>
#include <drivers/pci/pci.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/fsbench.h>
#include <kern/proc/proc.h>
#include <kern/procfs/procfs.h>
#include <drivers/tty/tty.h>
#include <kern/pty/pty.h>
#ifdef TEMPEST_KCSAN
#include <kern/kcsan/kcsan.h>
#include <kern/vm/addr_describe.h>
#endif

/* ---- the application processors ---- */

/* Per-CPU setup of the processor for user programs (SSE, then SYSCALL,
 * SMEP and SMAP), on the boot CPU and on each AP. */
static void cpu_user_features_init(void)
{
    cpu_features_init();
    user_cpu_init();
}

static __noreturn void ap_main(struct cpu *c)
{
    cpu_init_tables(c);
    cpu_user_features_init();
    lapic_init(0);
    thread_init_ap();
    smp_mark_online(c);
    smp_timer_start();
    thread_idle_loop();
}

static void *ap_stack_top(int node)
{
    struct page *p = page_alloc_node(2, node);      /* 16 KiB */
    if (!p)
        panic("smp: no memory for a CPU stack");
    return (char *)page_to_virt(p) + KSTACK_SIZE;
}

static int start_aps(void)
{
    struct ap_boot boot = { pmap_kernel_root(), ap_stack_top, ap_main };
    return smp_start_aps(&boot);
}

static struct mmap_range usable[MB_MAX_RANGES];
static int nusable;

static paddr_t collect_usable(void)
{
    paddr_t end = 0;
    for (int i = 0; i < bootinfo.nranges; i++) {
        const struct mb_range *r = &bootinfo.range[i];
        if (r->type != 1 || r->len == 0)
            continue;
        usable[nusable].base = r->base;
        usable[nusable].end = r->base + r->len;
        nusable++;
        end = MAX(end, r->base + r->len);
    }
    return end;
}

static uint32_t boot_apic_id(void)
{
    uint32_t a, b, c, d;
    cpuid(1, 0, &a, &b, &c, &d);
    uint32_t id = b >> 24;
    cpuid(0, 0, &a, &b, &c, &d);
    if (a >= 0xB) {
        uint32_t x2;
        cpuid(0xB, 0, &a, &b, &c, &x2);
        if (b != 0)
            id = x2;
    }
    return id;
}

/* Logical CPU numbers follow the MADT with the boot CPU moved to 0. */
static void number_cpus(void)
{
    uint32_t bsp = boot_apic_id();
    if (acpi.ncpus == 0) {
        kprintf("smp: no usable MADT, running on the boot cpu alone\n");
        acpi.ncpus = 1;
        acpi.cpu[0].apic_id = bsp;
    }
    for (int i = 1; i < acpi.ncpus; i++) {
        if (acpi.cpu[i].apic_id != bsp)
            continue;
        __typeof__(acpi.cpu[0]) tmp = acpi.cpu[0];
        acpi.cpu[0] = acpi.cpu[i];
        acpi.cpu[i] = tmp;
    }
    if (acpi.cpu[0].apic_id != bsp) {
        kprintf("smp: the MADT does not list the boot cpu (apic %u); using it as cpu 0\n", bsp);
        acpi.cpu[0].apic_id = bsp;
    }
    ncpus = smp_build_cpus(MIN(acpi.ncpus, MAX_CPUS), opts.maxcpus);
    for (int i = 0; i < ncpus; i++) {
        cpus[i].id = i;
        cpus[i].apic_id = acpi.cpu[i].apic_id;
    }
}

static void assign_nodes(void)
{
    for (int i = 0; i < ncpus; i++)
        cpus[i].node = numa_node_of_cpu(i);
}

/*
 * crash=deadlock: two threads take two resource locks in opposite orders
 * and wait for each other forever, so the hang watchdog's diagnosis (every
 * thread, what it holds, what it waits for and who holds that) can be
 * checked against a deadlock whose cycle is known.
 */
LOCK_CLASS(crash_a_class, "crash_a", LK_RESOURCE);
LOCK_CLASS(crash_b_class, "crash_b", LK_RESOURCE);

static struct rlock crash_locks[2];
static volatile int crash_holding;          /* [atomic] threads holding their first */

static void deadlock_body(void *arg)
{
    int first = (int)(uintptr_t)arg;
    rlock_acquire(&crash_locks[first]);
    __atomic_add_fetch(&crash_holding, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&crash_holding, __ATOMIC_SEQ_CST) < 2)
        thread_yield();
    rlock_acquire(&crash_locks[!first]);    /* never returns */
}

static void deadlock_on_purpose(void)
{
    rlock_init(&crash_locks[0], &crash_a_class, "crash_a");
    rlock_init(&crash_locks[1], &crash_b_class, "crash_b");
    struct thread *t[2];
    for (int i = 0; i < 2; i++)
        t[i] = thread_create(i ? "deadlock_b" : "deadlock_a", deadlock_body,
                             (void *)(uintptr_t)i, AFFINITY_ALL);
    if (!t[0] || !t[1])
        panic("crash=deadlock: no memory for its threads");
    ktest_watchdog_arm("crash=deadlock", 3);
    thread_join(t[0]);
}

/* crash=kmem_*: the heap misuses kmemdebug=on must catch (it panics
 * with the call sites); without it they would corrupt the heap, so they
 * are refused. */
static void __attribute__((noinline)) heap_misuse_on_purpose(int kind)
{
    if (!opts.kmemdebug) {
        kprintf("crash: crash=kmem_* needs kmemdebug=on; not done\n");
        return;
    }
    char *volatile p = kmalloc(100);
    if (!p)
        panic("crash=kmem_*: no memory");
    switch (kind) {
    case CRASH_KMEM_DOUBLE:
        kfree(p);
        kfree(p);
        break;
    case CRASH_KMEM_OVERRUN:
        p[100] = 1;
        kfree(p);
        break;
    case CRASH_KMEM_UAF:
        kfree(p);
        p[8] = 1;
        for (int i = 0; i < 64; i++)
            if (kmalloc(100) == p)
                break;
        break;
    case CRASH_KMEM_FOREIGN:
        kfree(p + 8);
        break;
    }
    panic("crash=kmem_*: kmemdebug did not catch the misuse");
}

/* crash=KIND: fail on purpose, so tests can see the panic path work. */
static void __attribute__((noinline)) crash_on_purpose(int kind)
{
    volatile int zero = 0;
    switch (kind) {
    case CRASH_KMEM_DOUBLE:
    case CRASH_KMEM_OVERRUN:
    case CRASH_KMEM_UAF:
    case CRASH_KMEM_FOREIGN:
        heap_misuse_on_purpose(kind);
        break;
    case CRASH_DEADLOCK:
        deadlock_on_purpose();
        break;
    case CRASH_PAGEFAULT:
        *(volatile uint64_t *)0xFFFF8FFFFFFFF000UL = 1;   /* unmapped */
        break;
    case CRASH_DIVIDE:
        __asm__ volatile("xorl %%edx, %%edx; movl $1, %%eax; divl %0"
                         :: "r"(zero) : "eax", "edx");
        break;
    case CRASH_PANIC:
        panic("crash=panic asked for a panic");
    }
}

static void finish(void)
{
    if (opts.kbench[0])
        kbench_run(opts.kbench);
    if (opts.ktest[0])
        ktest_run(opts.ktest);
    if (opts.fsprobe[0])
        fsprobe_run(opts.fsprobe);
    init_run();                 /* user space: init= (kern/proc/proc.c) */
    if (opts.crash != CRASH_NONE)
        crash_on_purpose(opts.crash);
    if (opts.lockdump) {
        lockstat_dump();
        blk_stats_print();      /* disk queues: length, busy time, operations */
    }
    pvspin_report();
    if (opts.poweroff || init_poweroff) {
        /* Nothing written may be lost: sync and unmount every file
         * system (the superblocks are marked clean) before the power goes. */
        vfs_unmount_all();
        kprintf("poweroff: boot finished, powering off\n");
        machine_poweroff();
    }
    kprintf("boot finished; idle (add 'poweroff' to the command line to power off)\n");
}

/* Memory for lockstat's call sites and histograms, from the heap. */
static void start_lockstat_tables(void)
{
    void *mem = kmalloc(lockstat_tables_size(ncpus));
    if (!mem)
        panic("lockstat: no memory for the call-site tables");
    lockstat_tables_init(mem, ncpus);
}

void kmain(uint32_t magic, uint32_t info)
{
    console_init();
    cpu_early_init();
    lock_early_init();
    kprintf("Tempest: an SVR4 MP-style kernel for x86-64 SMP/NUMA\n");
    if (!multiboot_parse(magic, info))
        panic("not booted by Multiboot2");
    kprintf("boot: loader '%s', command line '%s'\n", bootinfo.loader, bootinfo.cmdline);
    options_parse(&opts, bootinfo.cmdline);

    paddr_t phys_end = collect_usable();
    pmap_init(phys_end);
    acpi_init(bootinfo.have_rsdp ? bootinfo.rsdp : NULL);
    number_cpus();
    numa_init(&acpi, usable, nusable);
    numa_limit_cpus(ncpus);
    assign_nodes();
    page_init();
    kmem_init();

    cpu_init_tables(&cpus[0]);
    cpu_user_features_init();
    clock_init(acpi.hpet_phys);
    rtc_init();
    lapic_init(acpi.lapic_phys);
    lapic_timer_calibrate();
    ioapic_init(&acpi);

    options_validate(&opts, ncpus);
    options_print(&opts);
#ifdef TEMPEST_KCSAN
    kcsan_set_describer(addr_describe);     /* a report names the object raced on */
    kcsan_init();               /* KCSAN=1: the data-race detector starts watching */
#endif
    lock_init();
    start_lockstat_tables();
    sleepq_init();
    user_mode_init();
    sched_init();
    cluster_init();             /* cluster=: Hurricane's clustering (else nothing) */
    thread_init_boot();
    mutex_bench_register();

    smp_set_tick_hook(ktest_watchdog_tick);
    pvspin_init();
    callout_init();
    smp_set_timer_event_hook(callout_expire);
    kprof_init();               /* kprof=on: the profiler's tick hook */
    int online = start_aps();
    kprintf("smp: %d cpus online\n", online);
    numa_print();
    smp_timer_start();
    intr_enable();
    /* The disks come first: the root file system is mounted from one of
     * them.  After the APs, so disk interrupts can go to every CPU and
     * each disk's service thread can run anywhere. */
    kprintf("pci: %d functions\n", pci_scan());
    blk_init();
    netdev_init();              /* the network devices; kern/net/inet takes them up */
    tty_init();
    pcache_init();
    segmap_init();
    pcache_reclaim_start();
    vfs_init();
    procfs_init();
    pty_init();
    vfs_mountroot(opts.root);
    proc_init();

    finish();
    thread_exit();
}
