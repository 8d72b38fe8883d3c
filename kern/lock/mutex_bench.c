/*
 * The "mutex" line of kbench=locks: an SVR4 mutex created to spin, since
 * the contended run executes on every CPU at once with interrupts off.
 * The uncontended figure is the mutex's full cost: the interlock, the
 * held-lock stack and (with lockstat on) the statistics.
 */
#include <kern/lock/mutex.h>
#include <kern/lock/lockbench.h>

LOCK_CLASS(bench_mutex_class, "bench_mutex", LK_MUTEX_SPIN);

static struct mutex bench_mutex;

static void *bench_make(void)
{
    mutex_init(&bench_mutex, &bench_mutex_class, MUTEX_SPIN, "bench");
    return &bench_mutex;
}

static void bench_lock(void *m) { mutex_enter(m); }
static void bench_unlock(void *m) { mutex_exit(m); }

static const struct lockbench_ops mutex_bench_ops = {
    .name = "mutex",
    .make = bench_make,
    .lock = bench_lock,
    .unlock = bench_unlock,
};

void mutex_bench_register(void)
{
    lockbench_register(&mutex_bench_ops);
}
