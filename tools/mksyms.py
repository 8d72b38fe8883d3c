#!/usr/bin/env python3
"""Generate the kernel's symbol table for symbolized backtraces.

Usage: mksyms.py [NM_OUTPUT] > ksyms.c

Reads `nm -n` output (or nothing, for the first link pass) and writes a C
file placing a sorted table of text symbols into the .ksyms section, which
the linker script puts after everything else so that the second link pass
does not move any address the table describes.
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


def main():
    syms = text_symbols(sys.argv[1]) if len(sys.argv) > 1 else []
    out = ['#include <kern/lib/ksyms.h>', '']
    names = []
    offset = 0
    rows = []
    for addr, name in syms:
        rows.append('    { 0x%xUL, %d },' % (addr, offset))
        names.append(name)
        offset += len(name) + 1
    out.append('const struct ksym ksym_table[] __attribute__((section(".ksyms"))) = {')
    out.extend(rows)
    out.append('    { 0, 0 }')
    out.append('};')
    out.append('const size_t ksym_count __attribute__((section(".ksyms"))) = %d;' % len(syms))
    blob = ''.join(n + '\\0' for n in names)
    out.append('const char ksym_names[] __attribute__((section(".ksyms"))) = "%s";' % blob)
    print('\n'.join(out))


if __name__ == '__main__':
    main()
