/* The kernel symbol table, generated at link time by tools/mksyms.py. */
#ifndef KERN_KSYMS_H
#define KERN_KSYMS_H
#include <kern/lib/types.h>

struct ksym {
    uint64_t addr;
    uint32_t name;      /* offset into ksym_names */
};

extern const struct ksym ksym_table[];
extern const size_t ksym_count;
extern const char ksym_names[];

/* Name of the function containing addr and the offset into it, or NULL. */
const char *ksym_lookup(uint64_t addr, uint64_t *offset);

#endif
