#!/usr/bin/env python3
"""Rules of the kernel's locking and layering that the compiler cannot
check, checked on the source text (and the layers also on the built
objects).  Each rule names the bug it keeps out.  Lines "PASS rule" /
"FAIL rule: where", then "N passed, N failed".

  buf_flags_atomic   struct buf's b_flags is written only inside
                     kern/vfs/buf.c, whose every change is atomic.  A
                     plain "bp->b_flags |= B_DONE" by a buffer's owner
                     raced with a waiter setting B_WANTED and erased it:
                     the release then woke nobody, and the waiter slept on
                     a free buffer forever (the s5_mp and fs_mp hangs).
  layers_*           the layers point one way (tests/unit/layers.py and
                     docs/architecture.md): every kernel file has a layer,
                     no include and no call goes from a lower layer to a
                     higher one except through a hook registered at boot.
                     A lower layer that names a higher one is how the
                     36-file include cycle of the old flat kern/ grew.
  syscalls_documented docs/syscalls.md lists exactly the calls the kernel's
                     table (kern/proc/syscall.c) has, with their policy
                     (tools/syscall_doc.py --check), and README's counts
                     are the table's: the pages users read to learn what
                     runs must not fall behind the table.
"""
import os
import re
import subprocess
import sys

import layers

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE_DIRS = ("boot", "kern", "drivers")


def c_files():
    for top in SOURCE_DIRS:
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.join(d, f)


# An assignment to a b_flags field: "x->b_flags =", "|=", "&=", "^=",
# "++"/"--" (but not "==").
B_FLAGS_WRITE = re.compile(r"\bb_flags\s*(?:[|&^+\-]?=(?!=)|\+\+|--)")


def rule_buf_flags_atomic():
    allowed = os.path.join(ROOT, "kern", "vfs", "buf.c")
    bad = []
    for path in c_files():
        if path == allowed:
            continue
        with open(path, errors="replace") as f:
            for n, line in enumerate(f, 1):
                if B_FLAGS_WRITE.search(line):
                    bad.append("%s:%d" % (os.path.relpath(path, ROOT), n))
    return bad


def rule_syscalls_documented():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "syscall_doc.py"), "--check"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    return [] if r.returncode == 0 else r.stdout.splitlines() or ["syscall_doc.py --check failed"]


def self_test():
    """The pattern must catch what it is for, and not the reads."""
    hits = ["bp->b_flags |= B_DONE;", "b->b_flags = 0;", "bp->b_flags &= ~B_X;"]
    misses = ["if (bp->b_flags == B_DONE)", "KT_ASSERT(bp->b_flags & B_BUSY);"]
    return ([h for h in hits if not B_FLAGS_WRITE.search(h)] +
            [m for m in misses if B_FLAGS_WRITE.search(m)])


def main():
    return layers.run_rules([("pattern_self_test", self_test),
                             ("buf_flags_atomic", rule_buf_flags_atomic),
                             ("syscalls_documented", rule_syscalls_documented)] + layers.RULES)


if __name__ == "__main__":
    sys.exit(main())
