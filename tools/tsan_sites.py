#!/usr/bin/env python3
"""Generate the table of a KCSAN=1 kernel's calls to its access hooks.

Usage: objdump -d --no-show-raw-insn kernel.pass1.elf | tsan_sites.py - > tsan_sites.c
       tsan_sites.py > tsan_sites0.c            (the empty table of the first link)

GCC's -fsanitize=thread puts a call before every plain load and store
(__tsan_read8, __tsan_write4, __tsan_read_range ...).  Those calls only
tell the detector about an access the code then makes itself, so a kernel
booted with kcsan=off can turn each into a 5-byte no-op (kcsan_unhook in
kern/kcsan/tsan.c) and stop paying for the call.  This writes where they
are: the offset from KERNEL_VMA of every such call instruction, into the
.ksyms section that the linker script places last (as tools/mksyms.py's
table), so that the second link moves no instruction.  The atomic hooks
are left out: they do the operation in place of the instruction.
"""
import re
import sys

KERNEL_VMA = 0xFFFFFFFF80000000
HOOK = re.compile(r"^\s*([0-9a-f]+):\s+call\s+[0-9a-f]+ "
                  r"<__tsan_(?:unaligned_)?(?:volatile_)?(?:read|write)(?:\d+|_range)>\s*$")


def sites(lines):
    out = []
    for line in lines:
        m = HOOK.match(line)
        if m:
            out.append(int(m.group(1), 16) - KERNEL_VMA)
    return sorted(out)


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return
    found = sites(sys.stdin) if len(sys.argv) > 1 and sys.argv[1] == "-" else []
    section = '__attribute__((section(".ksyms")))'
    print("#include <kern/lib/types.h>\n")
    print("const uint32_t kcsan_call_sites[] %s = {" % section)
    for i in range(0, len(found), 8):
        print("    " + " ".join("0x%x," % s for s in found[i:i + 8]))
    print("    0\n};")
    print("const size_t kcsan_call_site_count %s = %d;" % (section, len(found)))


if __name__ == "__main__":
    main()
