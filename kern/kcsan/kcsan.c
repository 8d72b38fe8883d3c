/*
 * The data-race detector of make KCSAN=1: sampled soft watchpoints.
 *
 * What it does.  A kernel built with KCSAN=1 is compiled with GCC's
 * -fsanitize=thread, which puts a call before every load and store the C
 * code makes: __tsan_read8(addr) before an 8-byte load, __tsan_write4
 * before a 4-byte store, __tsan_atomic64_fetch_add in place of an atomic
 * add, and so on (kern/kcsan/tsan.c receives them all).  Nothing here
 * keeps shadow memory or vector clocks, as user-space ThreadSanitizer
 * does.  The technique is the one of Linux's KCSAN: on a sample of the
 * plain accesses (one in kcsan_interval= per CPU, varied a little so that
 * no loop keeps in step with it) the CPU arms a soft watchpoint on the
 * address, the size and whether it writes, then waits kcsan_delay=
 * microseconds with interrupts off, and disarms it.  Every access any
 * other CPU makes meanwhile first looks at the armed watchpoints; one
 * that overlaps the watched bytes, where one of the two writes, is a data
 * race caught in the act: that CPU writes down its own side (its call
 * site, its held locks, a few frames of its stack) in the watchpoint, and
 * the watching CPU prints the report when its wait ends.  The watching
 * CPU also reads the watched value before and after its wait; a value
 * that changed with no access seen is a race too, with the other side
 * unknown (a write made by code that is not instrumented, or by a DMA).
 *
 * What is a race here.  Only plain C accesses arm watchpoints.  Marked
 * accesses (volatile ones, READ_ONCE and WRITE_ONCE, every __atomic and
 * __sync builtin, and whatever data_race() wraps) never do, so they are
 * never the reported side of a race.  A marked write (an atomic read-
 * modify-write, an atomic or volatile store) still looks at the
 * watchpoints, because a plain access that a marked write can overlap is
 * a race on the plain side: that is how a plain "flags |= X" beside an
 * atomic "flags |= Y" on the same word is seen with both sites.  Marked
 * reads do not look, as a READ_ONCE of a word some holder of a lock
 * writes plainly is this kernel's usual lockless peek.  Accesses to user
 * addresses and to the device hole of the direct map are never watched.
 *
 * A report names the object the watched address lies in when it can,
 * through the describer hook kern/main.c sets (kern/vm/addr_describe.c,
 * a layer above this one): a variable, a struct page, a heap object and,
 * under kmemdebug=on, the site that allocated it.
 *
 * Each race prints once per pair of call sites (unordered); later sightings
 * are only counted.  The pairs live in a small open-addressed table under
 * pairs_lock; when it is full, a race is counted as dropped.
 *
 * Locks.  Each CPU's struct kcsan_cpu is its own ([own]), except its
 * watchpoint, which other CPUs claim and fill through the watchpoint's
 * state word alone (below, at struct kcsan_watch).  `armed` is a mask of
 * the CPUs with a watchpoint armed, changed with atomic operations.
 * pairs_lock (a raw lock: this code is underneath the lock family) guards
 * the table of reported pairs, and report_lock keeps one report's lines
 * together on the console.  Neither is held while waiting for anything
 * but itself.
 *
 * What runs without it.  This file, kern/kcsan/tsan.c, the boot and
 * arch code, the spin lock primitives, the console and the printing it
 * uses are compiled without the instrumentation (KCSAN_SKIP in the
 * Makefile).  The runtime does nothing until kcsan_init has run (after the
 * options, so kcsan=off is honoured, and after the TSC is calibrated),
 * and a CPU inside the runtime or inside data_race() is ignored by it.
 * The detector never panics the kernel: a report is a message.
 *
 * kcsan=off.  kcsan_init, still alone on the boot CPU, turns every call
 * to a hook that only reports (the plain, unaligned, volatile and range
 * ones) into a 5-byte no-op, from the table of their call sites that the
 * link writes (tools/tsan_sites.py); each site is checked to be such a
 * call first.  The atomic hooks stay calls, since they do the operation.
 * What is left of the instrumentation is the address computed for the
 * call and the registers the compiler saved around it: under icount on
 * up, 1.4 to 1.8 times the plain kernel's instructions per operation
 * (docs/kcsan.md, "Cost"), where the calls themselves cost 2 to 3 times.
 */
#include <kern/kcsan/kcsan.h>
#include <kern/kcsan/kcsan_impl.h>
#include <kern/arch/arch.h>
#include <kern/arch/cpu.h>
#include <kern/arch/rawlock.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/ksyms.h>
#include <kern/lib/options.h>
#include <kern/lock/lock.h>
#include <drivers/platform/timer.h>

#define KC_HELD  6              /* held locks kept for the other side */
#define KC_STACK 6              /* stack frames kept for the other side */

/* One side of a race. */
struct kcsan_access {
    uintptr_t addr;
    uint32_t size;
    uint32_t flags;             /* KC_WRITE, KC_MARKED */
    uintptr_t site;             /* return address of the hook's call */
    int cpu;
    int nheld;
    const char *held_name[KC_HELD];
    uintptr_t held_site[KC_HELD];
    int nstack;
    uintptr_t stack[KC_STACK];
};

/*
 * A CPU's watchpoint.  `state` is the generation of the arming (bits 2
 * and up) and its status (bits 0-1).  The owner writes `me`, then
 * publishes a new generation as W_OPEN and sets its bit in `armed`.  A
 * CPU whose access conflicts moves the state W_OPEN -> W_CLAIMED with a
 * compare-and-swap, fills `other`, and stores W_HIT.  The owner disarms
 * by clearing its bit and moving W_OPEN -> W_DONE; failing that, a
 * claimer is there, and it waits for W_HIT.  The owner writes `me` only
 * once the state has left W_OPEN and W_CLAIMED for good, and as the
 * generation never repeats, a claimer whose compare-and-swap succeeds read
 * `me` while it was stable.
 */
enum { W_OPEN, W_CLAIMED, W_HIT, W_DONE };
#define W_STATUS(s) ((s) & 3)

struct kcsan_watch {
    struct kcsan_access me;     /* [own] written while not armed */
    uint64_t state;             /* [atomic] generation << 2 | status */
    struct kcsan_access other;  /* the claimer's, between W_CLAIMED and W_HIT */
};

struct kcsan_cpu {
    long countdown;             /* [own] plain accesses before the next watch */
    uint32_t rng;               /* [own] xorshift state for the sampling */
    int quiet;                  /* [own] inside the runtime or a data_race() */
    uint64_t checked, watched, hits, changed, reports, repeats, dropped;    /* [own] */
    struct kcsan_watch watch;
} __cacheline;

static struct kcsan_cpu kcpu[MAX_CPUS];
static uint64_t armed;                  /* [atomic] CPUs with a watchpoint armed */
bool kcsan_on;                          /* [boot] set by kcsan_init (kcsan_impl.h) */
static kcsan_describer describer;       /* [boot] names a report's object, or NULL */
static long interval;                   /* [boot] kcsan_interval= */
static uint64_t delay_cycles;           /* [boot] kcsan_delay= in TSC cycles */

/* ---- the reported pairs ---- */

#define NPAIRS 512
struct pair {
    uintptr_t a, b;             /* a <= b; b is 0 for a value change */
    uint64_t seen;
};
static struct pair pairs[NPAIRS];       /* under pairs_lock */
static rawlock_t pairs_lock = RAWLOCK_INIT;
static rawlock_t report_lock = RAWLOCK_INIT;

enum { PAIR_NEW, PAIR_OLD, PAIR_FULL };

/* Record the pair (a, b) (interrupts are off).  Returns whether it is new. */
static int pair_note(uintptr_t a, uintptr_t b)
{
    if (b && b < a) {
        uintptr_t t = a;
        a = b;
        b = t;
    }
    unsigned h = (unsigned)((a * 0x9E3779B97F4A7C15ULL) ^ (b * 0xC2B2AE3D27D4EB4FULL)) % NPAIRS;
    int r = PAIR_FULL;
    rawlock_acquire(&pairs_lock);
    for (int i = 0; i < NPAIRS; i++) {
        struct pair *p = &pairs[(h + i) % NPAIRS];
        if (p->a == a && p->b == b) {
            p->seen++;
            r = PAIR_OLD;
            break;
        }
        if (p->a == 0) {
            p->a = a;
            p->b = b;
            p->seen = 1;
            r = PAIR_NEW;
            break;
        }
    }
    rawlock_release(&pairs_lock);
    return r;
}

/* Whether site lies in the function that starts at fn. */
static bool site_in(uintptr_t site, const void *fn)
{
    uint64_t off;
    return site && ksym_lookup(site, &off) && site - off == (uintptr_t)fn;
}

bool kcsan_pair_reported(const void *fa, const void *fb)
{
    bool found = false;
    uint64_t f = rawlock_acquire_irqsave(&pairs_lock);
    for (int i = 0; i < NPAIRS && !found; i++) {
        const struct pair *p = &pairs[i];
        if (!p->a)
            continue;
        if (!fb)
            found = !p->b && site_in(p->a, fa);
        else
            found = (site_in(p->a, fa) && site_in(p->b, fb)) ||
                    (site_in(p->a, fb) && site_in(p->b, fa));
    }
    rawlock_release_irqrestore(&pairs_lock, f);
    return found;
}

/* ---- recording one side ---- */

/* The locks the running thread holds, their classes and call sites. */
static void note_held(struct kcsan_access *a)
{
    const struct held_locks *h = this_cpu()->held;
    a->nheld = 0;
    if (!h)
        return;
    int n = h->n;
    for (int i = 0; i < n && a->nheld < KC_HELD; i++) {
        const struct held_lock *e = &h->e[i];
        a->held_name[a->nheld] = e->cls ? e->cls->name : "?";
        a->held_site[a->nheld] = e->site;
        a->nheld++;
    }
}

static bool in_text(uintptr_t a)
{
    extern char _text_start[], _text_end[];
    return a >= (uintptr_t)_text_start && a < (uintptr_t)_text_end;
}

/* A few return addresses from the frame pointers, from the frame that
 * returns to the access's site (the runtime's own frames are left out),
 * staying inside the 16 KiB-aligned kernel stack the walk starts on. */
static void note_stack(struct kcsan_access *a, uintptr_t rbp)
{
    uintptr_t lo = rbp & ~(uintptr_t)(KSTACK_SIZE - 1), hi = lo + KSTACK_SIZE;
    bool reached = false;
    a->nstack = 0;
    for (int depth = 0; depth < 16 && a->nstack < KC_STACK; depth++) {
        if (rbp < lo || rbp + 16 > hi || (rbp & 7))
            break;
        const uintptr_t *frame = (const uintptr_t *)rbp;
        if (!in_text(frame[1]))
            break;
        reached = reached || frame[1] == a->site;
        if (reached)
            a->stack[a->nstack++] = frame[1];
        if (frame[0] <= rbp)
            break;
        rbp = frame[0];
    }
}

static void note_access(struct kcsan_access *a, uintptr_t addr, size_t size, int flags,
                        uintptr_t site)
{
    a->addr = addr;
    a->size = (uint32_t)size;
    a->flags = (uint32_t)flags;
    a->site = site;
    a->cpu = this_cpu()->id;
}

/* ---- the check every access makes while something is armed ---- */

static bool overlaps(uintptr_t a, size_t an, uintptr_t b, size_t bn)
{
    return a < b + bn && b < a + an;
}

/* Claim CPU c's watchpoint for this access if the two conflict. */
static void try_claim(int c, uintptr_t addr, size_t size, int flags, uintptr_t site)
{
    struct kcsan_watch *w = &kcpu[c].watch;
    uint64_t s = __atomic_load_n(&w->state, __ATOMIC_ACQUIRE);
    if (W_STATUS(s) != W_OPEN)
        return;
    if (!overlaps(w->me.addr, w->me.size, addr, size) || !((w->me.flags | flags) & KC_WRITE))
        return;
    /* Interrupts off from the claim to W_HIT: the owner waits for it with
     * its own off, so this thread must not be switched out meanwhile. */
    uint64_t f = intr_save();
    if (!__atomic_compare_exchange_n(&w->state, &s, s | W_CLAIMED, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED)) {
        intr_restore(f);
        return;
    }
    note_access(&w->other, addr, size, flags, site);
    note_held(&w->other);
    note_stack(&w->other, (uintptr_t)__builtin_frame_address(0));
    __atomic_store_n(&w->state, (s & ~3ULL) | W_HIT, __ATOMIC_RELEASE);
    kcpu[this_cpu()->id].hits++;
    intr_restore(f);
}

static void check_watches(struct kcsan_cpu *kc, uintptr_t addr, size_t size, int flags,
                          uintptr_t site)
{
    int me = (int)(kc - kcpu);
    uint64_t set = __atomic_load_n(&armed, __ATOMIC_ACQUIRE) & ~(1ULL << me);
    while (set) {
        int c = __builtin_ctzll(set);
        set &= set - 1;
        try_claim(c, addr, size, flags, site);
    }
}

/* ---- watching ---- */

/* Only kernel memory that is ordinary RAM is watched and read back. */
static bool watchable(uintptr_t addr, size_t size)
{
    if (addr < DIRECT_MAP || size == 0)
        return false;
    uintptr_t dm = addr - DIRECT_MAP;
    return !(dm >= 0xC0000000UL && dm < 0x100000000UL);    /* the device hole */
}

static uint64_t peek(uintptr_t addr, size_t size)
{
    switch (size) {
    case 1: return *(volatile uint8_t *)addr;
    case 2: return *(volatile uint16_t *)addr;
    case 4: return *(volatile uint32_t *)addr;
    case 8: return *(volatile uint64_t *)addr;
    default: return 0;          /* other sizes: only the watchpoint counts */
    }
}

static long next_countdown(struct kcsan_cpu *kc)
{
    uint32_t x = kc->rng ? kc->rng : 2463534242u + (uint32_t)(kc - kcpu);
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    kc->rng = x;
    /* Between half and one and a half intervals. */
    return interval / 2 + (long)(x % (uint32_t)(interval + 1));
}

static void arm(struct kcsan_cpu *kc, uintptr_t addr, size_t size, int flags, uintptr_t site)
{
    struct kcsan_watch *w = &kc->watch;
    int me = (int)(kc - kcpu);
    note_access(&w->me, addr, size, flags, site);
    uint64_t gen = (__atomic_load_n(&w->state, __ATOMIC_RELAXED) >> 2) + 1;
    __atomic_store_n(&w->state, gen << 2 | W_OPEN, __ATOMIC_RELEASE);
    __atomic_or_fetch(&armed, 1ULL << me, __ATOMIC_SEQ_CST);
}

/* Disarm; returns whether another CPU's access was recorded. */
static bool disarm(struct kcsan_cpu *kc)
{
    struct kcsan_watch *w = &kc->watch;
    int me = (int)(kc - kcpu);
    __atomic_and_fetch(&armed, ~(1ULL << me), __ATOMIC_SEQ_CST);
    uint64_t s = __atomic_load_n(&w->state, __ATOMIC_ACQUIRE);
    if (W_STATUS(s) == W_OPEN &&
        __atomic_compare_exchange_n(&w->state, &s, (s & ~3ULL) | W_DONE, false,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return false;
    while (W_STATUS(s = __atomic_load_n(&w->state, __ATOMIC_ACQUIRE)) == W_CLAIMED)
        cpu_relax();
    return W_STATUS(s) == W_HIT;
}

static void report(struct kcsan_cpu *kc, bool hit, uint64_t before, uint64_t after);

/* Watch one access for the delay, interrupts off, then report. */
static void watch(uintptr_t addr, size_t size, int flags, uintptr_t site)
{
    uint64_t f = intr_save();
    struct kcsan_cpu *kc = &kcpu[this_cpu()->id];
    if (kc->quiet) {
        intr_restore(f);
        return;
    }
    kc->quiet++;
    kc->watched++;
    arm(kc, addr, size, flags, site);
    uint64_t before = peek(addr, size);
    uint64_t end = rdtsc() + delay_cycles;
    while ((int64_t)(rdtsc() - end) < 0 &&
           W_STATUS(__atomic_load_n(&kc->watch.state, __ATOMIC_RELAXED)) == W_OPEN)
        cpu_relax();
    uint64_t after = peek(addr, size);
    bool hit = disarm(kc);
    if (hit || before != after)
        report(kc, hit, before, after);
    kc->quiet--;
    intr_restore(f);
}

/* ---- the report ---- */

static const char *kind(const struct kcsan_access *a)
{
    if (a->flags & KC_MARKED)
        return a->flags & KC_WRITE ? "marked write" : "marked read";
    return a->flags & KC_WRITE ? "write" : "read";
}

static void print_side(const char *who, const struct kcsan_access *a)
{
    char site[96];
    ksym_format(site, sizeof site, a->site);
    kprintf("kcsan:   %s: %s of %u bytes at 0x%lx by cpu %d at %s\n", who, kind(a), a->size,
            (unsigned long)a->addr, a->cpu, site);
    kprintf("kcsan:     cpu %d holds:", a->cpu);
    if (!a->nheld)
        kprintf(" no lock");
    for (int i = 0; i < a->nheld; i++) {
        ksym_format(site, sizeof site, a->held_site[i]);
        kprintf(" %s (taken at %s)", a->held_name[i], site);
    }
    kprintf("\n");
}

static void print_stack(const struct kcsan_access *a)
{
    char site[96];
    kprintf("kcsan:     cpu %d stack:", a->cpu);
    for (int i = 0; i < a->nstack; i++) {
        ksym_format(site, sizeof site, a->stack[i] - 1);
        kprintf(" %s", site);
    }
    kprintf("\n");
}

static void report(struct kcsan_cpu *kc, bool hit, uint64_t before, uint64_t after)
{
    struct kcsan_watch *w = &kc->watch;
    if (!hit)
        kc->changed++;          /* (a hit is counted by the claimer) */
    int r = pair_note(w->me.site, hit ? w->other.site : 0);
    if (r == PAIR_OLD) {
        kc->repeats++;
        return;
    }
    if (r == PAIR_FULL) {
        kc->dropped++;
        return;
    }
    kc->reports++;
    note_held(&w->me);
    note_stack(&w->me, (uintptr_t)__builtin_frame_address(0));
    char a[96], b[96];
    ksym_format(a, sizeof a, w->me.site);
    ksym_format(b, sizeof b, hit ? w->other.site : 0);
    rawlock_acquire(&report_lock);
    if (hit)
        kprintf("kcsan: data race between %s and %s\n", a, b);
    else
        kprintf("kcsan: data race at %s: the value changed (0x%lx -> 0x%lx), the other "
                "access unseen\n", a, (unsigned long)before, (unsigned long)after);
    char what[160];
    if (describer && describer(what, sizeof what, w->me.addr))
        kprintf("kcsan:   in %s\n", what);
    print_side("watched", &w->me);
    print_stack(&w->me);
    if (hit) {
        print_side("racing", &w->other);
        print_stack(&w->other);
    }
    kprintf("kcsan: end of report\n");
    rawlock_release(&report_lock);
}

/* ---- the entry from the hooks ---- */

void kcsan_access(uintptr_t addr, size_t size, int flags, uintptr_t site)
{
    if (!kcsan_on || !watchable(addr, size))
        return;
    struct kcsan_cpu *kc = &kcpu[this_cpu()->id];
    if (kc->quiet)
        return;
    if (__atomic_load_n(&armed, __ATOMIC_RELAXED))
        check_watches(kc, addr, size, flags, site);
    if (flags & KC_MARKED)
        return;
    kc->checked++;
    if (--kc->countdown > 0)
        return;
    kc->countdown = next_countdown(kc);
    watch(addr, size, flags, site);
}

/*
 * data_race(): the accesses of the wrapped expression are not looked at.
 * Interrupts are off meanwhile, so the thread stays on this CPU.  Before
 * kcsan_init nothing is counted (this_cpu() may not exist yet); bit 63 of
 * the saved flags, which RFLAGS never sets, says whether quiet was raised.
 */
#define QUIET_RAISED (1ULL << 63)

uint64_t kcsan_quiet_begin(void)
{
    uint64_t f = intr_save();
    if (!__atomic_load_n(&kcsan_on, __ATOMIC_RELAXED))
        return f;
    kcpu[this_cpu()->id].quiet++;
    return f | QUIET_RAISED;
}

void kcsan_quiet_end(uint64_t f)
{
    if (f & QUIET_RAISED)
        kcpu[this_cpu()->id].quiet--;
    intr_restore(f & ~QUIET_RAISED);
}

/* ---- set-up and figures ---- */

bool kcsan_enabled(void)
{
    return kcsan_on;
}

void kcsan_set_describer(kcsan_describer fn)
{
    describer = fn;
}

void kcsan_init(void)
{
    interval = opts.kcsan_interval;
    delay_cycles = (uint64_t)opts.kcsan_delay * tsc_hz / 1000000;
    for (int c = 0; c < MAX_CPUS; c++)
        kcpu[c].countdown = interval;
    kprintf("kcsan: %s, one plain access in %ld watched for %d us\n",
            opts.kcsan ? "on" : "off (kcsan=off)", interval, opts.kcsan_delay);
    __atomic_store_n(&kcsan_on, opts.kcsan != 0, __ATOMIC_RELEASE);
    if (!opts.kcsan) {
        size_t skipped, done = kcsan_unhook(&skipped);
        kprintf("kcsan: off: %lu hook calls made no-ops, %lu sites left as they were\n",
                (unsigned long)done, (unsigned long)skipped);
    }
}

void kcsan_totals(struct kcsan_totals *t)
{
    *t = (struct kcsan_totals){ 0 };
    for (int c = 0; c < MAX_CPUS; c++) {
        const struct kcsan_cpu *kc = &kcpu[c];
        t->checked += READ_ONCE(kc->checked);
        t->watched += READ_ONCE(kc->watched);
        t->hits += READ_ONCE(kc->hits);
        t->changed += READ_ONCE(kc->changed);
        t->reports += READ_ONCE(kc->reports);
        t->repeats += READ_ONCE(kc->repeats);
        t->dropped += READ_ONCE(kc->dropped);
    }
}
