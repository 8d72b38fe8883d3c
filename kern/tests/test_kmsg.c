/*
 * ktests for the kernel message log (kern/arch/kmsg.h): a line kprintf
 * prints comes back as the newest record in /dev/kmsg's format and at
 * the end of the syslog text; a buffer too small for a record gets none
 * of it; a record the ring has dropped is EPIPE, one not yet written
 * EAGAIN.  And for the load average and per-CPU time (kern/sched/
 * schedstat.c): the clock tick charges every online CPU.
 */
#include <kern/tests/ktest.h>
#include <kern/arch/kmsg.h>
#include <kern/arch/cpu.h>
#include <kern/sched/sched.h>
#include <kern/vm/kmem.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <drivers/platform/timer.h>

/* Does s contain t? (The kernel's library has no strstr.) */
static bool contains(const char *s, const char *t)
{
    size_t n = strlen(t);
    for (; *s; s++)
        if (strncmp(s, t, n) == 0)
            return true;
    return false;
}

KTEST(kmsg_record)
{
    kprintf("kmsg_record: marker %d\n", 4242);
    uint64_t first, next, after;
    kmsg_bounds(&first, &next);
    KT_ASSERT(next > first);
    char buf[300];
    long n = kmsg_read_record(next - 1, buf, sizeof buf, &after);
    KT_ASSERT(n > 0);
    KT_ASSERT_EQ(after, next);
    buf[n] = 0;
    KT_ASSERT(buf[0] == '6' && buf[1] == ',');
    KT_ASSERT(contains(buf, ";kmsg_record: marker 4242\n"));
    KT_ASSERT_EQ(kmsg_read_record(next - 1, buf, 5, &after), -EINVAL);
    KT_ASSERT_EQ(kmsg_read_record(next + 10, buf, sizeof buf, &after), -EAGAIN);
    if (first > 0)
        KT_ASSERT_EQ(kmsg_read_record(first - 1, buf, sizeof buf, &after), -EPIPE);
    return 0;
}

KTEST(kmsg_text)
{
    kprintf("kmsg_text: one\n");
    kprintf("kmsg_text: two\n");
    char *buf = kmalloc(4096);
    KT_ASSERT(buf);
    uint64_t next;
    size_t n = kmsg_read_text(buf, 4095, 0, &next);
    buf[n] = 0;
    bool ends = n > 0 && buf[n - 1] == '\n' && contains(buf, "] kmsg_text: two\n");
    bool whole = n > 0 && buf[0] == '<';        /* the first record complete */
    bool both = contains(buf, "] kmsg_text: one\n");
    /* a buffer too small for the newest record gets nothing */
    size_t none = kmsg_read_text(buf, 10, 0, &next);
    kfree(buf);
    KT_ASSERT(ends);
    KT_ASSERT(whole);
    KT_ASSERT(both);
    KT_ASSERT_EQ(none, 0);
    KT_ASSERT(kmsg_text_size(0) >= n);
    return 0;
}

/* The ticks each online CPU has been charged, in all. */
static uint64_t cpu_total(int c)
{
    return sched_cpu_ticks(c, CPU_TICK_USER) + sched_cpu_ticks(c, CPU_TICK_SYSTEM) +
           sched_cpu_ticks(c, CPU_TICK_IDLE);
}

KTEST(schedstat_ticks)
{
    uint64_t before[MAX_CPUS];
    for (int c = 0; c < ncpus; c++)
        before[c] = cpu_total(c);
    /* Every online CPU is charged ticks; patiently, for icount's long
     * turns (up to 5 s). */
    int moved = 0, online = 0;
    for (int tries = 0; tries < 500; tries++) {
        delay_us(10000);
        moved = online = 0;
        for (int c = 0; c < ncpus; c++) {
            if (!cpus[c].online)
                continue;
            online++;
            moved += cpu_total(c) > before[c];
        }
        if (moved == online)
            break;
    }
    KT_ASSERT_EQ(moved, online);
    uint64_t load[3];
    sched_loadavg(load, 16);
    KT_ASSERT(load[0] < (1000UL << 16));
    return 0;
}
