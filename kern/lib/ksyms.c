/* Symbol lookup for backtraces: binary search of the generated table. */
#include <kern/lib/ksyms.h>
#include <kern/lib/kprintf.h>

static uint64_t text_addr(size_t i) { return ksym_table[i].addr; }
static uint64_t data_addr(size_t i) { return ksym_data_table[i].addr; }

/* The last of count entries, sorted by address, at or below addr: its
 * index, or -1 when addr is below them all. */
static long floor_index(size_t count, uint64_t (*addr_of)(size_t), uint64_t addr)
{
    size_t lo = 0, hi = count;
    if (hi == 0 || addr < addr_of(0))
        return -1;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (addr_of(mid) <= addr)
            lo = mid;
        else
            hi = mid;
    }
    return (long)lo;
}

const char *ksym_lookup(uint64_t addr, uint64_t *offset)
{
    long i = floor_index(ksym_count, text_addr, addr);
    if (i < 0)
        return NULL;
    *offset = addr - ksym_table[i].addr;
    return ksym_names + ksym_table[i].name;
}

const char *ksym_data_lookup(uint64_t addr, uint64_t *offset)
{
    long i = floor_index(ksym_data_count, data_addr, addr);
    if (i < 0)
        return NULL;
    const struct ksym_data *d = &ksym_data_table[i];
    if (addr - d->addr >= d->size)
        return NULL;
    *offset = addr - d->addr;
    return ksym_names + d->name;
}

int ksym_format(char *buf, size_t n, uint64_t addr)
{
    uint64_t off;
    const char *name = addr ? ksym_lookup(addr, &off) : NULL;
    if (name)
        return snprintf(buf, n, "%s+0x%lx", name, off);
    return snprintf(buf, n, "0x%lx", addr);
}
