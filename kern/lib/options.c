/*
 * Command-line parsing.  The command line is a blank-separated list of
 * words, each either NAME=VALUE or a bare NAME (a flag, meaning on).
 * One table describes every option: its kind, where it is stored, its
 * default and its legal values.  Unknown names and bad values are reported
 * with the option's default kept, never fatal: a typo on the GRUB line must
 * not stop a boot.
 *
 * Later issues add options by adding rows to option_table.
 */
#include <kern/lib/options.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>

struct options opts;
bool options_verbose = true;

#define report(...) do { if (options_verbose) kprintf(__VA_ARGS__); } while (0)

enum opt_kind { OPT_CHOICE, OPT_BOOL, OPT_CLUSTER, OPT_STRING, OPT_COUNT };

struct option_desc {
    const char *name;
    enum opt_kind kind;
    size_t offset;              /* into struct options */
    size_t size;                /* OPT_STRING: buffer size */
    const char *const *choices; /* OPT_CHOICE: NULL-terminated */
    int def;
};

static const char *const lock_names[] = { "spin", "mcs", "h2mcs", NULL };
static const char *const cache_names[] = { "single", "hashfree", "ssac", NULL };
static const char *const sched_names[] = { "global", "percpu", "cluster", NULL };
static const char *const wakeup_names[] = { "all", "one", NULL };
static const char *const alloc_names[] = { "local", "interleave", NULL };
static const char *const lockstat_names[] = { "off", "on", "contended", NULL };
static const char *const crash_names[] = { "none", "pagefault", "divide", "panic", "deadlock",
                                           "kmem_double", "kmem_overrun", "kmem_uaf",
                                           "kmem_foreign", NULL };
static const char *const bool_names[] = { "off", "on", NULL };
/* syncwrites= is a flag with a third value: data (kern/vm/pcache_rw.c). */
static const char *const syncwrites_names[] = { "off", "on", "data", NULL };

#define CHOICE(n, field, names, d) { n, OPT_CHOICE, offsetof(struct options, field), 0, names, d }
#define BOOL(n, field, d) { n, OPT_BOOL, offsetof(struct options, field), 0, bool_names, d }
#define STRING(n, field) { n, OPT_STRING, offsetof(struct options, field), sizeof(((struct options *)0)->field), NULL, 0 }

static const struct option_desc option_table[] = {
    CHOICE("lock", lock, lock_names, LOCK_SPIN),
    CHOICE("cache", cache, cache_names, CACHE_SSAC),
    CHOICE("sched", sched, sched_names, SCHED_PERCPU),
    { "cluster", OPT_CLUSTER, offsetof(struct options, cluster), 0, NULL, 0 },
    CHOICE("wakeup", wakeup, wakeup_names, WAKEUP_ONE),
    CHOICE("lockstat", lockstat, lockstat_names, LOCKSTAT_ON),
    { "syncwrites", OPT_BOOL, offsetof(struct options, syncwrites), 0, syncwrites_names, 1 },
    BOOL("witness", witness, 0),
    BOOL("kmemdebug", kmemdebug, 0),
    BOOL("poweroff", poweroff, 0),
    BOOL("lockdump", lockdump, 0),
    CHOICE("crash", crash, crash_names, CRASH_NONE),
    STRING("ktest", ktest),
    STRING("kbench", kbench),
    STRING("root", root),
    STRING("fsprobe", fsprobe),
    STRING("init", init),
    { "maxcpus", OPT_COUNT, offsetof(struct options, maxcpus), 0, NULL, 0 },
    BOOL("kprof", kprof, 0),
    CHOICE("alloc", alloc, alloc_names, ALLOC_LOCAL),
    BOOL("pvspin", pvspin, 0),
    STRING("ip", ip),
#ifdef TEMPEST_KCSAN
    BOOL("kcsan", kcsan, 1),
    { "kcsan_interval", OPT_COUNT, offsetof(struct options, kcsan_interval), 0, NULL,
      KCSAN_INTERVAL_DEFAULT },
    { "kcsan_delay", OPT_COUNT, offsetof(struct options, kcsan_delay), 0, NULL,
      KCSAN_DELAY_DEFAULT },
#endif
};

static int *int_field(struct options *o, const struct option_desc *d)
{
    return (int *)((char *)o + d->offset);
}

static char *str_field(struct options *o, const struct option_desc *d)
{
    return (char *)o + d->offset;
}

static void set_defaults(struct options *o)
{
    memset(o, 0, sizeof *o);
    for (size_t i = 0; i < ARRAY_SIZE(option_table); i++)
        if (option_table[i].kind != OPT_STRING)
            *int_field(o, &option_table[i]) = option_table[i].def;
}

static const struct option_desc *find_option(const char *name, size_t len)
{
    for (size_t i = 0; i < ARRAY_SIZE(option_table); i++)
        if (strlen(option_table[i].name) == len && strncmp(option_table[i].name, name, len) == 0)
            return &option_table[i];
    return NULL;
}

static int find_choice(const char *const *choices, const char *val)
{
    for (int i = 0; choices[i]; i++)
        if (strcmp(choices[i], val) == 0)
            return i;
    return -1;
}

static bool parse_uint(const char *s, int *out)
{
    int v = 0;
    if (!*s)
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > 100000)
            return false;
        v = v * 10 + (*s - '0');
    }
    *out = v;
    return true;
}

static void format_value(const struct options *o, const struct option_desc *d, char *buf, size_t n)
{
    const int *iv = (const int *)((const char *)o + d->offset);
    switch (d->kind) {
    case OPT_CHOICE:
    case OPT_BOOL:
        snprintf(buf, n, "%s", d->choices[*iv]);
        break;
    case OPT_CLUSTER:
        if (*iv == 0)
            snprintf(buf, n, "node");
        else
            snprintf(buf, n, "%d", *iv);
        break;
    case OPT_STRING:
        snprintf(buf, n, "%s", (const char *)o + d->offset);
        break;
    case OPT_COUNT:
        if (*iv == 0)
            snprintf(buf, n, "all");
        else
            snprintf(buf, n, "%d", *iv);
        break;
    }
}

static void report_bad(struct options *o, const struct option_desc *d, const char *val)
{
    char def[32];
    format_value(o, d, def, sizeof def);
    report("options: bad value '%s' for %s=, using %s\n", val, d->name, def);
}

/* Apply one NAME=VALUE (value NULL for a bare word).  Returns 0 or 1 problem. */
static int apply_word(struct options *o, const char *word, size_t len)
{
    char name[32], val[OPT_STR_MAX];
    const char *eq = NULL;
    for (size_t i = 0; i < len; i++)
        if (word[i] == '=') {
            eq = word + i;
            break;
        }
    size_t nlen = eq ? (size_t)(eq - word) : len;
    const struct option_desc *d = find_option(word, nlen);
    if (!d) {
        snprintf(name, sizeof name, "%.*s", (int)MIN(nlen, sizeof name - 1), word);
        report("options: unknown option '%s', ignored\n", name);
        return 1;
    }
    if (eq) {
        size_t vlen = len - nlen - 1;
        if (vlen >= sizeof val) {
            report("options: value for %s= is too long, ignored\n", d->name);
            return 1;
        }
        memcpy(val, eq + 1, vlen);
        val[vlen] = 0;
    } else if (d->kind == OPT_BOOL) {
        strlcpy(val, "on", sizeof val);
    } else {
        report("options: %s needs a value (%s=...), ignored\n", d->name, d->name);
        return 1;
    }

    int *iv = int_field(o, d);
    int n;
    switch (d->kind) {
    case OPT_CHOICE:
        if ((n = find_choice(d->choices, val)) < 0)
            break;
        *iv = n;
        return 0;
    case OPT_BOOL:
        n = find_choice(d->choices, val);
        if (n < 0 && strcmp(val, "1") == 0)
            n = 1;
        if (n < 0 && strcmp(val, "0") == 0)
            n = 0;
        if (n < 0)
            break;
        *iv = n;
        return 0;
    case OPT_CLUSTER:
        if (strcmp(val, "node") == 0) {
            *iv = 0;
            o->clustering = 1;
            return 0;
        }
        if (parse_uint(val, &n) && n >= 1) {
            *iv = n;
            o->clustering = 1;
            return 0;
        }
        break;
    case OPT_COUNT:
        /* A positive count, or "all" (stored as 0). */
        if (strcmp(val, "all") == 0) {
            *iv = 0;
            return 0;
        }
        if (parse_uint(val, &n) && n >= 1) {
            *iv = n;
            return 0;
        }
        break;
    case OPT_STRING:
        if (strlen(val) < d->size) {
            strlcpy(str_field(o, d), val, d->size);
            return 0;
        }
        break;
    }
    report_bad(o, d, val);
    return 1;
}

int options_parse(struct options *o, const char *cmdline)
{
    int problems = 0;
    set_defaults(o);
    if (!cmdline)
        return 0;
    const char *p = cmdline;
    while (*p) {
        while (*p == ' ' || *p == '\t')
            p++;
        const char *start = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        if (p > start)
            problems += apply_word(o, start, (size_t)(p - start));
    }
    return problems;
}

#ifdef TEMPEST_KCSAN
/* kcsan_interval=all and kcsan_delay= past its bound are bad values too. */
static int validate_kcsan(struct options *o)
{
    int problems = 0;
    if (o->kcsan_interval == 0) {
        report("options: bad value 'all' for kcsan_interval=, using %d\n", KCSAN_INTERVAL_DEFAULT);
        o->kcsan_interval = KCSAN_INTERVAL_DEFAULT;
        problems++;
    }
    if (o->kcsan_delay == 0 || o->kcsan_delay > KCSAN_DELAY_MAX) {
        char given[16];
        snprintf(given, sizeof given, o->kcsan_delay ? "%d" : "all", o->kcsan_delay);
        report("options: bad value '%s' for kcsan_delay= (1 to %d), using %d\n",
               given, KCSAN_DELAY_MAX, KCSAN_DELAY_DEFAULT);
        o->kcsan_delay = KCSAN_DELAY_DEFAULT;
        problems++;
    }
    return problems;
}
#endif

int options_validate(struct options *o, int ncpus)
{
#ifdef TEMPEST_KCSAN
    int kcsan_problems = validate_kcsan(o);
#else
    const int kcsan_problems = 0;
#endif
    if (o->cluster > ncpus) {
        report("options: bad value '%d' for cluster= (this machine has %d cpus), using node\n",
                o->cluster, ncpus);
        o->cluster = 0;
        return kcsan_problems + 1;
    }
    return kcsan_problems;
}

int options_format(const struct options *o, char *buf, size_t n)
{
    size_t len = 0;
    len += snprintf(buf, n, "options:");
    for (size_t i = 0; i < ARRAY_SIZE(option_table) && len < n; i++) {
        char v[OPT_STR_MAX];
        format_value(o, &option_table[i], v, sizeof v);
        len += snprintf(buf + len, n - len, " %s=%s", option_table[i].name, v);
    }
    return (int)len;
}

void options_print(const struct options *o)
{
    char buf[512];
    options_format(o, buf, sizeof buf);
    kprintf("%s\n", buf);
}

const char *option_list_next(const char **p, size_t *len)
{
    while (**p == ',')
        (*p)++;
    if (!**p)
        return NULL;
    const char *item = *p;
    const char *end = strchr(item, ',');
    *len = end ? (size_t)(end - item) : strlen(item);
    *p = item + *len;
    return item;
}

bool option_item_matches(const char *item, size_t len, const char *name, size_t nlen)
{
    if (len > 0 && item[len - 1] == '*')        /* a prefix: "fs_*" */
        return nlen >= len - 1 && strncmp(item, name, len - 1) == 0;
    return len == nlen && strncmp(item, name, len) == 0;
}

bool option_list_has(const char *list, const char *name)
{
    size_t nlen = strlen(name), len;
    if (strcmp(list, "all") == 0)
        return true;
    for (const char *p = list, *item; (item = option_list_next(&p, &len));)
        if (option_item_matches(item, len, name, nlen))
            return true;
    return false;
}

int option_list_report_unknown(const char *list, bool (*known)(const char *, size_t),
                               const char *fmt)
{
    int n = 0;
    size_t len;
    if (strcmp(list, "all") == 0)
        return 0;
    for (const char *p = list, *item; (item = option_list_next(&p, &len));)
        if (!known(item, len)) {
            kprintf(fmt, (int)len, item);
            n++;
        }
    return n;
}
