/*
 * Kernel threads: creation, exit, join, and the boot-time threads.
 *
 * Each thread has a 16 KiB stack from the node of the first CPU it may run
 * on.  A new thread's stack holds a switch frame whose return address is
 * thread_trampoline (kern/sched/switch.asm), which calls thread_start(fn, arg).
 *
 * Every CPU has an idle thread that is never on a run queue.  On the boot
 * CPU the boot context becomes thread "main" (kmain continues in it) and a
 * new idle thread is made; on an AP its start-up context becomes its idle
 * thread.  Threads must be joined: thread_join waits for the thread to
 * finish and to be fully switched out, then frees its stack.
 *
 * Every thread is also on one list, all_threads, so that a hang can be
 * diagnosed: thread_dump_all prints each thread's state, wait channel,
 * held locks and backtrace when a ktest overruns its time (panic_hung).
 *
 * Locks: thread_list_lock (a raw spin lock, a leaf) guards the all_threads
 * links; tid allocation is atomic; the other fields follow the key in
 * thread.h; joining uses sleep/wakeup on the thread.  thread_dump_all
 * takes no lock: it runs only on the panic path, with the other CPUs
 * stopped.
 */
#include <kern/sched/thread.h>
#include <kern/sched/sched.h>
#include <kern/lock/sleep.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/arch/arch.h>
#include <kern/arch/panic.h>
#include <kern/vm/page.h>
#include <kern/arch/rawlock.h>
#include <kern/lib/ksyms.h>
#include <kern/lib/kprintf.h>
#include <kern/arch/trap.h>

#define KSTACK_ORDER 2              /* 16 KiB */

static volatile int next_tid = 1;                  /* [atomic] */
static struct thread boot_threads[MAX_CPUS];    /* [boot] main (cpu 0) and the AP idles */
static rawlock_t thread_list_lock = RAWLOCK_INIT;
static struct thread *all_threads;              /* [T] */

static void list_add(struct thread *t)
{
    rawlock_acquire(&thread_list_lock);
    t->all_prev = NULL;
    t->all_next = all_threads;
    if (all_threads)
        all_threads->all_prev = t;
    all_threads = t;
    rawlock_release(&thread_list_lock);
}

static void list_remove(struct thread *t)
{
    rawlock_acquire(&thread_list_lock);
    if (t->all_prev)
        t->all_prev->all_next = t->all_next;
    else
        all_threads = t->all_next;
    if (t->all_next)
        t->all_next->all_prev = t->all_prev;
    rawlock_release(&thread_list_lock);
}

extern void thread_trampoline(void);
void sched_finish_switch(void);

void thread_start(void (*fn)(void *), void *arg)
{
    sched_finish_switch();
    intr_enable();
    fn(arg);
    thread_exit();
}

static void init_thread(struct thread *t, const char *name, uint64_t affinity)
{
    memset(t, 0, sizeof *t);
    t->tid = __atomic_fetch_add(&next_tid, 1, __ATOMIC_RELAXED);
    strlcpy(t->name, name, sizeof t->name);
    t->affinity = affinity;
    t->cpu = -1;
    t->state = TS_EMBRYO;
    list_add(t);
}

/* Room left at the top of every kernel stack for the user trap frame,
 * which a user thread's first entry into user mode puts there as its
 * later entries do (kern/proc/lwp.c: a tracer reads it there). */
#define TOP_FRAME_ROOM 176

/* Lay out the first switch frame: six callee-saved registers (r15 first,
 * as swtch pops them) and the return address. */
static void build_frame(struct thread *t, void (*fn)(void *), void *arg)
{
    uint64_t *sp = (uint64_t *)((char *)t->kstack + KSTACK_SIZE - TOP_FRAME_ROOM);
    *--sp = 0;                          /* alignment: entry sees rsp % 16 == 8 */
    *--sp = (uint64_t)thread_trampoline;
    *--sp = 0;                          /* rbp */
    *--sp = 0;                          /* rbx */
    *--sp = (uint64_t)fn;               /* r12 */
    *--sp = (uint64_t)arg;              /* r13 */
    *--sp = 0;                          /* r14 */
    *--sp = 0;                          /* r15 */
    t->rsp = (uint64_t)sp;
}

static struct thread *thread_alloc(const char *name, void (*fn)(void *), void *arg, uint64_t affinity)
{
    struct thread *t = kmalloc(sizeof *t);
    if (!t)
        return NULL;
    init_thread(t, name, affinity);
    struct page *pg = page_alloc_node(KSTACK_ORDER, cpus[affinity_first_cpu(affinity)].node);
    if (!pg) {
        list_remove(t);
        kfree(t);
        return NULL;
    }
    t->kstack = page_to_virt(pg);
    t->fn = fn;
    t->arg = arg;
    build_frame(t, fn, arg);
    return t;
}

struct thread *thread_create_embryo(const char *name, void (*fn)(void *), void *arg,
                                    uint64_t affinity)
{
    uint64_t online = sched_online_mask();
    if ((affinity & online) == 0)
        return NULL;
    return thread_alloc(name, fn, arg, affinity & online);
}

void thread_run(struct thread *t)
{
    sched_make_runnable(t);
}

struct thread *thread_create(const char *name, void (*fn)(void *), void *arg, uint64_t affinity)
{
    struct thread *t = thread_create_embryo(name, fn, arg, affinity);
    if (t)
        thread_run(t);
    return t;
}

void thread_exit(void)
{
    struct thread *t = curthread();
    if (t->held.n)
        panic("thread %s exits holding %d locks (first %s)", t->name, t->held.n, t->held.e[0].cls->name);
    __atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
    struct sleepq *sq = sleepq_lock(t);
    t->state = TS_DEAD;
    sleepq_wakeup_locked(sq, t, true);
    sleepq_unlock(sq);
    sched_block();
    panic("dead thread %s ran again", t->name);
}

void thread_join(struct thread *t)
{
    for (;;) {
        struct sleepq *sq = sleepq_lock(t);
        if (__atomic_load_n(&t->done, __ATOMIC_ACQUIRE)) {
            sleepq_unlock(sq);
            break;
        }
        sleep_locked(sq, t);
    }
    while (__atomic_load_n(&t->on_cpu, __ATOMIC_ACQUIRE))
        cpu_relax();
    list_remove(t);
    page_free(virt_to_page(t->kstack), KSTACK_ORDER);
    kfree(t);
}

static void make_idle(struct cpu *c)
{
    struct thread *idle = thread_alloc("idle", NULL, NULL, 1UL << c->id);
    if (!idle)
        panic("no memory for cpu %d's idle thread", c->id);
    idle->idle = true;
    idle->state = TS_RUNNABLE;
    /* Its first switch-in enters the idle loop through thread_start. */
    build_frame(idle, (void (*)(void *))thread_idle_loop, NULL);
    c->idle_thread = idle;
}

void thread_init_boot(void)
{
    struct cpu *c = this_cpu();
    struct thread *t = &boot_threads[0];
    init_thread(t, "main", AFFINITY_ALL);
    t->state = TS_RUNNING;
    t->on_cpu = 1;
    t->cpu = c->id;
    t->held = *c->held;         /* locks taken during boot, if any */
    c->thread = t;
    c->held = &t->held;
    make_idle(c);
    panic_register_hang_dump(HANG_DUMP_THREADS, thread_dump_all);
}

void thread_init_ap(void)
{
    struct cpu *c = this_cpu();
    struct thread *t = &boot_threads[c->id];
    init_thread(t, "idle", 1UL << c->id);
    t->idle = true;
    t->state = TS_RUNNING;
    t->on_cpu = 1;
    t->cpu = c->id;
    c->thread = t;
    c->held = &t->held;
    c->idle_thread = t;
}

/* ---- diagnosis of hangs ---- */

static const char *const state_names[] = {
    [TS_EMBRYO] = "embryo", [TS_RUNNABLE] = "runnable", [TS_RUNNING] = "running",
    [TS_SLEEPING] = "sleeping", [TS_DEAD] = "dead",
};

static void print_symbol(const char *label, uintptr_t addr)
{
    uint64_t off;
    const char *name = ksym_lookup(addr, &off);
    if (name)
        kprintf("%s %s+0x%lx", label, name, off);
    else
        kprintf("%s %#lx", label, addr);
}

static void dump_held(const struct held_locks *h)
{
    for (int i = 0; i < h->n && i < HELD_MAX; i++) {
        const struct held_lock *e = &h->e[i];
        kprintf("    holds %s %p%s", e->cls ? e->cls->name : "?", e->lock,
                (e->flags & HELD_SHARED) ? " shared" : "");
        print_symbol(" from", e->site);
        kprintf("\n");
    }
}

/* The backtrace of a thread that is switched out: swtch left r15, r14,
 * r13, r12, rbx, rbp and the return address on its stack. */
static void dump_switched_out(const struct thread *t)
{
    const uint64_t *frame = (const uint64_t *)t->rsp;
    if (!frame)
        return;
    backtrace_from(frame[5], frame[6]);
}

/* The wait channel of a thread waiting for a held resource lock or
 * reader/writer lock (kern/lock/rlock.c: &rl->wanted, &rw->readers). */
static const void *held_lock_chan(const struct held_lock *e)
{
    if (!e->cls || !(e->flags & HELD_KEEP))
        return NULL;
    if (e->cls->kind == LK_RESOURCE)
        return &((const struct rlock *)e->lock)->wanted;
    if (e->cls->kind == LK_RWLOCK)
        return &((const struct rwlock *)e->lock)->readers;
    return NULL;
}

/* ", waits for CLASS ADDR held by thread N" when a sleeping thread's
 * channel is a lock another thread holds, so a deadlock's cycle can be
 * read off the dump directly. */
static void print_wait_target(const struct thread *t)
{
    for (const struct thread *u = all_threads; u; u = u->all_next)
        for (int i = 0; i < u->held.n && i < HELD_MAX; i++)
            if (held_lock_chan(&u->held.e[i]) == t->wchan) {
                kprintf(", waits for %s %p held by thread %d", u->held.e[i].cls->name,
                        u->held.e[i].lock, u->tid);
                return;
            }
}

static void dump_one(const struct thread *t)
{
    int st = t->state;
    kprintf("thread %d %s: %s, cpu %d", t->tid, t->name,
            st >= 0 && st <= TS_DEAD ? state_names[st] : "?", t->cpu);
    if (st == TS_SLEEPING) {
        kprintf(", wchan %p", t->wchan);
        print_wait_target(t);
    }
    kprintf("\n");
    dump_held(&t->held);
    if (t->on_cpu) {
        const struct trapframe *tf = t->cpu >= 0 ? cpus[t->cpu].stopped_tf : NULL;
        if (tf)
            backtrace_from(tf->rbp, tf->rip);
    } else if (st != TS_DEAD) {
        dump_switched_out(t);
    }
}

void thread_dump_all(void)
{
    int n = 0;
    kprintf("threads:\n");
    for (const struct thread *t = all_threads; t && n < 4096; t = t->all_next, n++)
        if (!t->idle || t->held.n)
            dump_one(t);
}
