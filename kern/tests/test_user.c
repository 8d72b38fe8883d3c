/*
 * ktests for user mode: copyin/copyout and their -EFAULT recovery,
 * copy-on-write address spaces, and real user programs (the embedded
 * userland/ktprogs/ktprog, written to the root file system as /ktprog and
 * run in its modes: system calls, fork, faults, files, mmap, exec, the
 * per-user process limit, preemption of user mode).
 */
#include <kern/tests/ktest.h>
#include <drivers/platform/timer.h>
#include <kern/lock/lockstat.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/vm/kmem.h>
#include <kern/arch/cpu.h>
#include <kern/sched/thread.h>
#include <kern/vm/as.h>
#include <kern/vm/page.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/proc/proc.h>
#include <kern/lib/options.h>

extern const char ktprog_start[], ktprog_end[];

#define TVA 0x10000000UL

/* Run the test's address space on this thread, or go back to none. */
static void use_as(struct as *as)
{
    curthread()->as = as;
    as_activate(as);
}

KTEST(user_copy_efault)
{
    struct as *as = as_create();
    KT_ASSERT(as != NULL);
    KT_ASSERT(as_map(as, TVA, 2 * PAGE_SIZE, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, 0) == (int64_t)TVA);
    KT_ASSERT(as_map(as, TVA + 4 * PAGE_SIZE, PAGE_SIZE, PROT_READ,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, 0) > 0);
    use_as(as);
    KT_ASSERT_EQ(as->a_cpumask, 1UL << cpu_id());
    char msg[] = "across the page boundary";
    char back[64] = { 0 };
    char *u = (char *)(TVA + PAGE_SIZE - 5);      /* demand-zero, two pages */
    int r1 = copyout(msg, u, sizeof msg);
    int r2 = copyin(u, back, sizeof msg);
    long r3 = copyinstr(u, back, sizeof back);
    long r4 = copyinstr(u, back, 4);                              /* too long */
    int r5 = copyin((void *)0xffffffff80100000UL, back, 8);       /* kernel */
    int r6 = copyout(msg, (void *)0xffff800000001000UL, 8);       /* kernel */
    int r7 = copyin((void *)(TVA + 2 * PAGE_SIZE), back, 8);      /* unmapped */
    int r8 = copyout(msg, (void *)(TVA + 4 * PAGE_SIZE), 8);      /* read-only */
    int r9 = copyin((void *)(USER_TOP - 4), back, 8);             /* past the top */
    int r10 = copyin((void *)(TVA + 2 * PAGE_SIZE - 4), back, 8); /* runs off the end */
    char tail[4] = { 'a', 'b', 'c', 'd' };
    copyout(tail, (void *)(TVA + 2 * PAGE_SIZE - 4), 4);
    long r11 = copyinstr((void *)(TVA + 2 * PAGE_SIZE - 4), back, 64);  /* no NUL before the hole */
    use_as(NULL);
    as_destroy(as);
    KT_ASSERT_EQ(r1, 0);
    KT_ASSERT_EQ(r2, 0);
    KT_ASSERT_EQ(r3, (long)strlen(msg));
    KT_ASSERT(!strcmp(back, "acr") || r4 == -ENAMETOOLONG);
    KT_ASSERT_EQ(r4, -ENAMETOOLONG);
    KT_ASSERT_EQ(r5, -EFAULT);
    KT_ASSERT_EQ(r6, -EFAULT);
    KT_ASSERT_EQ(r7, -EFAULT);
    KT_ASSERT_EQ(r8, -EFAULT);
    KT_ASSERT_EQ(r9, -EFAULT);
    KT_ASSERT_EQ(r10, -EFAULT);
    KT_ASSERT_EQ(r11, -EFAULT);
    return 0;
}

/* fork's copy-on-write: after as_dup both see the old data through one
 * read-only page; a write on either side gets a private copy. */
KTEST(user_cow_fork)
{
    struct as *a = as_create();
    KT_ASSERT(a != NULL);
    KT_ASSERT(as_map(a, TVA, PAGE_SIZE, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, 0) > 0);
    KT_ASSERT(as_map(a, TVA + PAGE_SIZE, PAGE_SIZE, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, 0) > 0);
    use_as(a);
    uint64_t v = 111, got = 0;
    int e1 = copyout(&v, (void *)TVA, 8);
    int e2 = copyout(&v, (void *)(TVA + PAGE_SIZE), 8);
    use_as(NULL);
    int err = 0;
    struct as *b = as_dup(a, &err);
    KT_ASSERT_EQ(e1, 0);
    KT_ASSERT_EQ(e2, 0);
    KT_ASSERT(b != NULL);
    bool wa, wb;
    struct page *pa = as_lookup_page(a, TVA, &wa), *pb = as_lookup_page(b, TVA, &wb);
    KT_ASSERT(pa != NULL && pa == pb && !wa && !wb);
    KT_ASSERT_EQ(pa->count, 2);
    /* The parent writes: it gets its own page, the child keeps 111. */
    use_as(a);
    v = 222;
    e1 = copyout(&v, (void *)TVA, 8);
    v = 333;
    e2 = copyout(&v, (void *)(TVA + PAGE_SIZE), 8);     /* shared: both see it */
    use_as(b);
    int e3 = copyin((void *)TVA, &got, 8);
    uint64_t child_private = got;
    int e4 = copyin((void *)(TVA + PAGE_SIZE), &got, 8);
    uint64_t child_shared = got;
    v = 444;
    int e5 = copyout(&v, (void *)TVA, 8);               /* the child's write: now sole owner */
    use_as(a);
    int e6 = copyin((void *)TVA, &got, 8);
    use_as(NULL);
    struct page *pa2 = as_lookup_page(a, TVA, &wa), *pb2 = as_lookup_page(b, TVA, &wb);
    as_destroy(a);
    as_destroy(b);
    KT_ASSERT(!e1 && !e2 && !e3 && !e4 && !e5 && !e6);
    KT_ASSERT_EQ(child_private, 111);
    KT_ASSERT_EQ(child_shared, 333);
    KT_ASSERT_EQ(got, 222);
    KT_ASSERT(pa2 != pb2);
    KT_ASSERT(wa && wb);
    KT_ASSERT(pb2 == pb);          /* the child kept the original, written in place */
    return 0;
}

/* ---- real programs ---- */

/* A test that needs a mounted root skips without one (KT_NEED_ROOT). */
#define NEED_ROOT() KT_NEED_ROOT()

static int install_ktprog(void)
{
    struct vnode *vp;
    int err = vn_open("/ktprog", NULL, O_CREAT | O_WRONLY | O_TRUNC, 0755, &vp, kcred);
    if (err)
        return err;
    size_t len = (size_t)(ktprog_end - ktprog_start), done = 0;
    err = vn_rdwr(vp, true, (void *)ktprog_start, len, 0, 0, &done, kcred);
    vn_close(vp, O_WRONLY, kcred);
    return err ? err : done == len ? 0 : -EIO;
}

/* Run "/ktprog mode [arg]" as cr; its wait status or a negative errno. */
static int run_ktprog(const char *mode, const char *arg, struct cred *cr, struct proc **pp)
{
    int err = install_ktprog();
    if (err)
        return err;
    char *argv[] = { "/ktprog", (char *)mode, (char *)arg, NULL };
    char *envp[] = { "KTPROG=yes", NULL };
    struct proc *p;
    err = proc_spawn("/ktprog", argv, envp, cr, &p);
    if (err)
        return err;
    if (pp) {
        *pp = p;
        return 0;
    }
    return proc_wait_spawned(p);
}

#define USER_MODE_TEST(name, mode, want) \
    KTEST(name) \
    { \
        NEED_ROOT(); \
        KT_ASSERT_EQ(run_ktprog(mode, NULL, kcred, NULL), want); \
        return 0; \
    }

KTEST(user_hello)
{
    NEED_ROOT();
    KT_ASSERT_EQ(run_ktprog("hello", "42", kcred, NULL), W_EXITCODE(42));
    KT_ASSERT_EQ(run_ktprog("hello", "0", kcred, NULL), 0);
    return 0;
}

USER_MODE_TEST(user_fork, "fork", 0)
USER_MODE_TEST(user_segv, "segv", 0)
USER_MODE_TEST(user_files, "files", 0)
USER_MODE_TEST(user_mmap, "mmap", 0)
USER_MODE_TEST(user_exec, "exec", 0)
USER_MODE_TEST(user_fpu, "fpu", 0)
USER_MODE_TEST(user_signal, "signal", 0)

/* Live lock instances of the classes that come and go with open files,
 * pipes, anonymous memory and processes (lockstat's registry). */
static uint64_t live_lock_instances(void)
{
    static const char *const names[] = { "file", "pipe", "amap", "as", "fdtable", "signal" };
    uint64_t n = 0;
    for_each_lock_class(c) {
        for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
            if (strcmp(c->name, names[i]) != 0)
                continue;
            struct lockstat_totals t;
            lockstat_class_totals(c, &t);
            n += t.ninstances;
        }
    }
    return n;
}

/* Open files, pipes, address spaces and processes register locks with
 * the statistics; when they go, so must their locks (a freed lock left on
 * the registry is garbage to the next snapshot).  The "orphans" mode
 * leaves a zombie and a living grandchild without a parent (a ktest has
 * no init): the kernel's reaper must free them, descriptor table and
 * signal lock included.  Children may still be exiting when a program
 * ends, so the count is given a few seconds to come back (a guard
 * against a hang, not a speed test). */
KTEST(user_lock_instances)
{
    NEED_ROOT();
    static const char *const modes[] = { "fork", "files", "mmap", "orphans" };
    uint64_t before = live_lock_instances();
    for (size_t i = 0; i < ARRAY_SIZE(modes); i++)
        KT_ASSERT_EQ(run_ktprog(modes[i], NULL, kcred, NULL), 0);
    uint64_t deadline = uptime_ns() + 5000000000ull;
    while (live_lock_instances() != before && uptime_ns() < deadline)
        thread_yield();
    KT_ASSERT_EQ(live_lock_instances(), before);
    size_t need = 0;
    KT_ASSERT_EQ(lockstat_snapshot(NULL, 0, &need), -LOCKSTAT_ENOSPC);
    void *buf = kmalloc(need);
    KT_ASSERT(buf != NULL);
    long r = lockstat_snapshot(buf, need, &need);
    kfree(buf);
    KT_ASSERT(r > 0);
    return 0;
}

KTEST(user_efault)
{
    NEED_ROOT();
    uint64_t before = syscall_unknown_count(400);
    KT_ASSERT_EQ(run_ktprog("efault", NULL, kcred, NULL), 0);
    KT_ASSERT_EQ(syscall_unknown_count(400), before + 1);
    return 0;
}

/* The per-user process limit: uid 1000 may have 4 processes, so the
 * program's fork loop gets 3 children and then EAGAIN. */
KTEST(user_nproc)
{
    NEED_ROOT();
    struct cred *cr = cred_alloc(1000, 1000);
    KT_ASSERT(cr != NULL);
    int saved = proc_maxuproc;
    proc_maxuproc = 4;
    int st = run_ktprog("nproc", NULL, cr, NULL);
    proc_maxuproc = saved;
    cred_rele(cr);
    KT_ASSERT_EQ(st, W_EXITCODE(3));
    return 0;
}

/* A program that never makes a system call still loses the CPU to the
 * timer (on a one-CPU machine this test could not go on otherwise), and a
 * kill marked from outside takes effect at its next tick. */
KTEST(user_preempt)
{
    NEED_ROOT();
    struct proc *p;
    KT_ASSERT_EQ(run_ktprog("spin", NULL, kcred, &p), 0);
    volatile int never = 0;
    ktest_await(&never, 1, 1);                 /* yield for a second */
    uint64_t switches = p->p_thread->switches;
    __atomic_store_n(&p->p_killsig, SIGKILL, __ATOMIC_RELEASE);
    int st = proc_wait_spawned(p);
    KT_ASSERT_EQ(st, W_SIGNALED(SIGKILL));
    KT_ASSERT(switches >= 1);
    return 0;
}

/* A program that is not an ELF executable cannot be spawned: the
 * process exits 127 after exec fails with ENOEXEC. */
KTEST(user_enoexec)
{
    NEED_ROOT();
    struct vnode *vp;
    KT_ASSERT_EQ(vn_open("/ktbad", NULL, O_CREAT | O_WRONLY | O_TRUNC, 0755, &vp, kcred), 0);
    size_t done;
    static const char junk[] = "\177ELF but not really an ELF header at all, just text...\n";
    vn_rdwr(vp, true, (void *)junk, sizeof junk, 0, 0, &done, kcred);
    vn_close(vp, O_WRONLY, kcred);
    char *argv[] = { "/ktbad", NULL };
    struct proc *p;
    KT_ASSERT_EQ(proc_spawn("/ktbad", argv, argv + 1, kcred, &p), 0);
    int st = proc_wait_spawned(p);
    vn_remove("/ktbad", NULL, kcred);
    KT_ASSERT_EQ(st, W_EXITCODE(127));
    return 0;
}

/* Out of memory: the program touches more than the machine has while this
 * test takes every free page; the faulting process is killed (SIGKILL),
 * the kernel goes on.  Run only by name (ktest=user_oom): it starves the
 * whole machine of memory for a moment. */
static bool named_exactly(const char *name)
{
    size_t len;
    for (const char *p = opts.ktest, *item; (item = option_list_next(&p, &len));)
        if (len == strlen(name) && !strncmp(item, name, len))
            return true;
    return false;
}

KTEST(user_oom)
{
    if (!named_exactly("user_oom")) {
        kprintf("user_oom: not named exactly in ktest=, skipped\n");
        return 0;
    }
    NEED_ROOT();
    struct vattr va;
    vn_remove("/ktoom_ready", NULL, kcred);
    struct proc *p;
    KT_ASSERT_EQ(run_ktprog("oom", NULL, kcred, &p), 0);
    for (int i = 0; i < 1000000 && vn_stat("/ktoom_ready", NULL, true, &va, kcred) != 0; i++)
        thread_yield();
    struct page *held = NULL, *pg;
    uint64_t n = 0;
    while ((pg = page_alloc(0))) {
        *(struct page **)page_to_virt(pg) = held;
        held = pg;
        n++;
    }
    int st = proc_wait_spawned(p);
    while (held) {
        pg = held;
        held = *(struct page **)page_to_virt(pg);
        page_free(pg, 0);
    }
    vn_remove("/ktoom_ready", NULL, kcred);
    kprintf("user_oom: held %lu pages while the program ran out\n", n);
    KT_ASSERT_EQ(st, W_SIGNALED(SIGKILL));
    return 0;
}
