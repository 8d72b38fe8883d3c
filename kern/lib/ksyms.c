/* Symbol lookup for backtraces: binary search of the generated table. */
#include <kern/lib/ksyms.h>
#include <kern/lib/kprintf.h>

const char *ksym_lookup(uint64_t addr, uint64_t *offset)
{
    size_t lo = 0, hi = ksym_count;
    if (hi == 0 || addr < ksym_table[0].addr)
        return NULL;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (ksym_table[mid].addr <= addr)
            lo = mid;
        else
            hi = mid;
    }
    *offset = addr - ksym_table[lo].addr;
    return ksym_names + ksym_table[lo].name;
}

const char *ksym_data_lookup(uint64_t addr, uint64_t *offset)
{
    size_t lo = 0, hi = ksym_data_count;
    if (hi == 0 || addr < ksym_data_table[0].addr)
        return NULL;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (ksym_data_table[mid].addr <= addr)
            lo = mid;
        else
            hi = mid;
    }
    const struct ksym_data *d = &ksym_data_table[lo];
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
