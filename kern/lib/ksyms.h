/* The kernel symbol table, generated at link time by tools/mksyms.py. */
#ifndef KERN_KSYMS_H
#define KERN_KSYMS_H
#include <kern/lib/types.h>

struct ksym {
    uint64_t addr;
    uint32_t name;      /* offset into ksym_names */
};

/* A data object: a variable of the kernel image and its size. */
struct ksym_data {
    uint64_t addr;
    uint32_t size;
    uint32_t name;
};

extern const struct ksym ksym_table[];
extern const struct ksym_data ksym_data_table[];
extern const size_t ksym_data_count;
extern const size_t ksym_count;
extern const char ksym_names[];

/* Name of the function containing addr and the offset into it, or NULL. */
const char *ksym_lookup(uint64_t addr, uint64_t *offset);
/* Name of the variable of the kernel image that addr lies in and the
 * offset into it, or NULL (not in any sized data object). */
const char *ksym_data_lookup(uint64_t addr, uint64_t *offset);
/* addr as "function+0xOFF" (or "0xADDR" outside the table) into buf, as
 * the backtraces, the lock-order reports and the lock statistics print
 * call sites; returns what snprintf returns. */
int ksym_format(char *buf, size_t n, uint64_t addr);

#endif
