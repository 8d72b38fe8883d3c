/*
 * The kernel profiler (issue 18): with kprof=on, the clock tick of each
 * CPU notes where it interrupted that CPU, so that a workload's kernel
 * time can be read as a table of functions (/proc/kprof, the kprof tool)
 * instead of guessed at.  A tick that finds user mode counts as user; one
 * that finds the kernel is charged to the function holding the
 * interrupted instruction (the kernel's own symbol table, as the panic
 * backtraces name addresses), so idle time shows as the idle loop.  The
 * tick is TICK_HZ per CPU, so a profile wants seconds of work.
 *
 * Per-CPU tables.  Each CPU counts into its own table (an open-addressed
 * hash of function start addresses, KPROF_SLOTS of them) on its own cache
 * lines, written only by its tick with interrupts off: no lock and no
 * shared line.  A function that finds the table full is counted as lost.
 * kprof_read sums the tables racily (a tick in progress may be missed),
 * which a profile can afford.  With kprof=off (the default) the hook is
 * not registered at all, so the tick pays nothing.
 */
#include <kern/arch/kprof.h>
#include <kern/arch/smp.h>
#include <kern/arch/cpu.h>
#include <kern/arch/trap.h>
#include <kern/lib/ksyms.h>
#include <kern/lib/options.h>
#include <kern/lib/kprintf.h>

#define KPROF_SLOTS 256         /* a power of two */

struct kprof_slot {
    uint64_t fn;                /* a function's start; the slot is free while count is 0 */
    uint64_t count;
};

struct kprof_cpu {
    uint64_t user, kernel, lost;
    struct kprof_slot slot[KPROF_SLOTS];
} __cacheline;

static struct kprof_cpu kprof_cpus[MAX_CPUS];   /* [own] each CPU's tick writes its own */
static bool kprof_on;                           /* [boot] */

static unsigned slot_hash(uint64_t fn)
{
    return (unsigned)((fn >> 4) * 0x9E3779B97F4A7C15ULL >> 56) & (KPROF_SLOTS - 1);
}

/* Count one sample of fn in table k. */
static void count_in(struct kprof_cpu *k, uint64_t fn)
{
    unsigned h = slot_hash(fn);
    for (unsigned i = 0; i < KPROF_SLOTS; i++) {
        struct kprof_slot *s = &k->slot[(h + i) & (KPROF_SLOTS - 1)];
        if (s->count && s->fn == fn) {
            s->count++;
            return;
        }
        if (!s->count) {
            s->fn = fn;
            s->count = 1;
            return;
        }
    }
    k->lost++;
}

void kprof_sample(const struct trapframe *tf)
{
    struct kprof_cpu *k = &kprof_cpus[cpu_id()];
    if (tf->cs & 3) {
        k->user++;
        return;
    }
    k->kernel++;
    uint64_t off;
    const char *name = ksym_lookup(tf->rip, &off);
    count_in(k, name ? tf->rip - off : 0);
}

void kprof_init(void)
{
    if (!opts.kprof)
        return;
    if (!smp_add_tick_hook(kprof_sample)) {
        kprintf("kprof: no tick hook left, profiler off\n");
        return;
    }
    kprof_on = true;
    kprintf("kprof: sampling every CPU at %d Hz (/proc/kprof)\n", TICK_HZ);
}

bool kprof_enabled(void)
{
    return kprof_on;
}

/* Add n samples of fn to the merged list out (of *used entries). */
static void merge_one(struct kprof_entry *out, int max, int *used, uint64_t fn, uint64_t n,
                      uint64_t *lost)
{
    for (int i = 0; i < *used; i++) {
        if (out[i].fn == fn) {
            out[i].count += n;
            return;
        }
    }
    if (*used == max) {
        *lost += n;
        return;
    }
    out[*used].fn = fn;
    out[*used].count = n;
    (*used)++;
}

/* Most samples first (insertion sort: a profile has few hundred rows). */
static void sort_by_count(struct kprof_entry *e, int n)
{
    for (int i = 1; i < n; i++) {
        struct kprof_entry x = e[i];
        int j = i;
        for (; j > 0 && e[j - 1].count < x.count; j--)
            e[j] = e[j - 1];
        e[j] = x;
    }
}

int kprof_read(struct kprof_entry *out, int max, struct kprof_totals *t)
{
    int used = 0;
    t->user = t->kernel = t->lost = 0;
    t->ncpus = 0;
    for (int c = 0; c < MAX_CPUS; c++) {
        const struct kprof_cpu *k = &kprof_cpus[c];
        uint64_t user = READ_ONCE(k->user), kernel = READ_ONCE(k->kernel);
        if (!user && !kernel)
            continue;
        t->ncpus++;
        t->user += user;
        t->kernel += kernel;
        t->lost += READ_ONCE(k->lost);
        for (int i = 0; i < KPROF_SLOTS; i++) {
            uint64_t n = READ_ONCE(k->slot[i].count);
            if (n)
                merge_one(out, max, &used, READ_ONCE(k->slot[i].fn), n, &t->lost);
        }
    }
    sort_by_count(out, used);
    return used;
}
