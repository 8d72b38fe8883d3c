#!/usr/bin/env python3
"""Generate the kernel's symbol table for symbolized backtraces.

Usage: mksyms.py [NM_OUTPUT [NM_SIZED_OUTPUT]] > ksyms.c

Reads `nm -n` output (or nothing, for the first link pass) and writes a C
file placing a sorted table of text symbols into the .ksyms section, which
the linker script puts after everything else so that the second link pass
does not move any address the table describes.  From `nm -n -S` output it
adds a second table, of the data objects (initialized, zeroed and
read-only) with their sizes, so that an address can be named as the
variable it lies in (kern/vm/addr_describe.c).  The table's own symbols
(ksym_*) are left out: they are the ones that move between the passes.
"""
import sys


def text_symbols(path):
    syms = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 3 or parts[1] not in "tTwW":
                continue
            addr = int(parts[0], 16)
            if addr < 0xFFFFFFFF80000000:
                continue
            syms.append((addr, parts[2]))
    syms.sort()
    return syms


def data_symbols(path):
    """(address, size, name) of every sized data object, sorted."""
    syms = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 4 or parts[2] not in "dDbBrR" or parts[3].startswith("ksym_"):
                continue
            addr, size = int(parts[0], 16), int(parts[1], 16)
            if addr >= 0xFFFFFFFF80000000 and size:
                syms.append((addr, size, parts[3]))
    syms.sort()
    return syms


def main():
    syms = text_symbols(sys.argv[1]) if len(sys.argv) > 1 else []
    data = data_symbols(sys.argv[2]) if len(sys.argv) > 2 else []
    out = ['#include <kern/lib/ksyms.h>', '']
    names = []
    offset = 0
    rows, data_rows = [], []
    for addr, name in syms:
        rows.append('    { 0x%xUL, %d },' % (addr, offset))
        names.append(name)
        offset += len(name) + 1
    for addr, size, name in data:
        data_rows.append('    { 0x%xUL, %d, %d },' % (addr, size, offset))
        names.append(name)
        offset += len(name) + 1
    section = '__attribute__((section(".ksyms")))'
    out.append('const struct ksym ksym_table[] %s = {' % section)
    out.extend(rows)
    out.append('    { 0, 0 }')
    out.append('};')
    out.append('const size_t ksym_count %s = %d;' % (section, len(syms)))
    out.append('const struct ksym_data ksym_data_table[] %s = {' % section)
    out.extend(data_rows)
    out.append('    { 0, 0, 0 }')
    out.append('};')
    out.append('const size_t ksym_data_count %s = %d;' % (section, len(data)))
    blob = ''.join(n + '\\0' for n in names)
    out.append('const char ksym_names[] %s = "%s";' % (section, blob))
    print('\n'.join(out))


if __name__ == '__main__':
    main()
