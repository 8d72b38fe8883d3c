/* ktests for the pure parts of the kernel core: formatting, options,
 * CPU lists, the symbol table. */
#include <kern/tests/ktest.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/options.h>
#include <kern/arch/smp.h>
#include <kern/lib/string.h>
#include <kern/lib/ksyms.h>
#include <kern/arch/numa.h>

KTEST(printf_formats)
{
    char b[64];
    snprintf(b, sizeof b, "%d|%i|%u|%x|%X", -42, 7, 3000000000u, 0xbeef, 0xbeef);
    KT_ASSERT(strcmp(b, "-42|7|3000000000|beef|BEEF") == 0);
    snprintf(b, sizeof b, "%016lx|%5d|%-5d|%05d|%-4s|%3s", 0x1234UL, 42, 42, -42, "ab", "abcd");
    KT_ASSERT(strcmp(b, "0000000000001234|   42|42   |-0042|ab  |abcd") == 0);
    snprintf(b, sizeof b, "%lu %ld %c%% %.3s %p", 18446744073709551615UL, -1L, 'x', "abcdef", (void *)0x10);
    KT_ASSERT(strcmp(b, "18446744073709551615 -1 x% abc 0x10") == 0);
    int n = snprintf(b, 8, "%s", "0123456789");
    KT_ASSERT_EQ(n, 10);
    KT_ASSERT(strcmp(b, "0123456") == 0);
    const char *volatile nothing = NULL;
    snprintf(b, sizeof b, "%s", nothing);
    KT_ASSERT(strcmp(b, "(null)") == 0);
    return 0;
}

static int options_cases(void);

KTEST(options_parse)
{
    options_verbose = false;
    int r = options_cases();
    options_verbose = true;
    return r;
}

static int options_cases(void)
{
    struct options o;
    KT_ASSERT_EQ(options_parse(&o, ""), 0);
    KT_ASSERT_EQ(o.lock, LOCK_SPIN);
    KT_ASSERT_EQ(o.cache, CACHE_SSAC);
    KT_ASSERT_EQ(o.poweroff, 0);
    KT_ASSERT_EQ(options_parse(&o, "lock=h2mcs cache=single sched=cluster cluster=4 wakeup=all "
                                   "lockstat=contended syncwrites=off witness=on poweroff ktest=a,b"), 0);
    KT_ASSERT_EQ(o.lock, LOCK_H2MCS);
    KT_ASSERT_EQ(o.cache, CACHE_SINGLE);
    KT_ASSERT_EQ(o.sched, SCHED_CLUSTER);
    KT_ASSERT_EQ(o.cluster, 4);
    KT_ASSERT_EQ(o.wakeup, WAKEUP_ALL);
    KT_ASSERT_EQ(o.lockstat, LOCKSTAT_CONTENDED);
    KT_ASSERT_EQ(o.syncwrites, 0);
    KT_ASSERT_EQ(o.witness, 1);
    KT_ASSERT_EQ(o.poweroff, 1);
    KT_ASSERT(strcmp(o.ktest, "a,b") == 0);
    /* Bad input: each problem is counted and the default kept. */
    KT_ASSERT_EQ(options_parse(&o, "lock=frob nosuch=1 cluster=0 cluster=x poweroff=maybe sched"), 6);
    KT_ASSERT_EQ(o.lock, LOCK_SPIN);
    KT_ASSERT_EQ(o.cluster, 0);
    KT_ASSERT_EQ(o.poweroff, 0);
    KT_ASSERT_EQ(o.sched, SCHED_PERCPU);
    KT_ASSERT_EQ(options_parse(&o, "cluster=node poweroff=0 lockdump=1"), 0);
    KT_ASSERT_EQ(o.lockdump, 1);
    KT_ASSERT_EQ(o.maxcpus, 0);
    KT_ASSERT_EQ(options_parse(&o, "maxcpus=3"), 0);
    KT_ASSERT_EQ(o.maxcpus, 3);
    KT_ASSERT_EQ(options_parse(&o, "maxcpus=all"), 0);
    KT_ASSERT_EQ(o.maxcpus, 0);
    KT_ASSERT_EQ(options_parse(&o, "maxcpus=0 maxcpus=x maxcpus"), 3);
    KT_ASSERT_EQ(o.maxcpus, 0);
    KT_ASSERT_EQ(smp_cpus_to_use(16, 0), 16);
    KT_ASSERT_EQ(smp_cpus_to_use(4, 8), 4);
    KT_ASSERT_EQ(options_validate(&o, 4), 0);
    o.cluster = 8;
    KT_ASSERT_EQ(options_validate(&o, 4), 1);
    KT_ASSERT_EQ(o.cluster, 0);
    KT_ASSERT(option_list_has("a,bb,c", "bb"));
    KT_ASSERT(!option_list_has("a,bb,c", "b"));
    KT_ASSERT(option_list_has("all", "anything"));
    char buf[512];
    options_parse(&o, "lock=mcs");
    options_format(&o, buf, sizeof buf);
    KT_ASSERT(strncmp(buf, "options: lock=mcs cache=ssac", 28) == 0);
    return 0;
}

KTEST(cpu_list_format)
{
    char b[64];
    format_cpu_list(b, sizeof b, 0xF);
    KT_ASSERT(strcmp(b, "0-3") == 0);
    format_cpu_list(b, sizeof b, 0xE5);         /* 0,2,5,6,7 */
    KT_ASSERT(strcmp(b, "0,2,5-7") == 0);
    format_cpu_list(b, sizeof b, 1UL << 63);
    KT_ASSERT(strcmp(b, "63") == 0);
    return 0;
}

KTEST(ksyms_lookup)
{
    uint64_t off = 99;
    const char *name = ksym_lookup((uint64_t)ksym_lookup + 5, &off);
    KT_ASSERT(name && strcmp(name, "ksym_lookup") == 0);
    KT_ASSERT_EQ(off, 5);
    name = ksym_lookup((uint64_t)options_parse, &off);
    KT_ASSERT(name && strcmp(name, "options_parse") == 0);
    KT_ASSERT_EQ(off, 0);
    KT_ASSERT(ksym_lookup(0x1000, &off) == NULL);
    return 0;
}
