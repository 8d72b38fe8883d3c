/*
 * kbench: the in-kernel benchmarks, by name.  Each lives with the
 * subsystem it measures (the locks, kern/lock/lockbench.c; the file
 * system, kern/vfs/fsbench.c); this table sits at the top of the layers so
 * that no subsystem names another's benchmark.  kbench_run runs on the
 * boot CPU from kmain, after every CPU is up; it takes no lock of its own.
 */
#include <kern/tests/kbench.h>
#include <kern/lock/lockbench.h>
#include <kern/vfs/fsbench.h>
#include <kern/vm/segmap.h>
#include <kern/lib/options.h>
#include <kern/lib/string.h>

static const struct {
    const char *name;
    void (*run)(void);
} benchmarks[] = {
    { "locks", lockbench_locks },   /* kern/lock/lockbench.c */
    { "lockcurve", lockbench_curve },
    { "fs", fsbench_run },          /* kern/vfs/fsbench.c */
    { "segmap", segmap_bench_run }, /* kern/vm/segmap_bench.c */
};

static bool known(const char *name, size_t len)
{
    for (size_t i = 0; i < ARRAY_SIZE(benchmarks); i++)
        if (strlen(benchmarks[i].name) == len && strncmp(benchmarks[i].name, name, len) == 0)
            return true;
    return false;
}

void kbench_run(const char *list)
{
    option_list_report_unknown(list, known, "kbench: unknown benchmark '%.*s'\n");
    for (size_t i = 0; i < ARRAY_SIZE(benchmarks); i++)
        if (option_list_has(list, benchmarks[i].name))
            benchmarks[i].run();
}
