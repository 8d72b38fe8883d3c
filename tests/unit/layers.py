#!/usr/bin/env python3
"""The kernel's layers, and the checks that they point one way.

Every kernel source file belongs to one layer (LAYERS, lowest first; a
folder's layer, or a file's own where a folder holds two).  A file may
include headers of its own layer and of the layers below it; so may its
object code call: a call upward goes through a hook that the higher layer
registers at boot (docs/architecture.md lists them).  Two checks:

  includes   every #include <kern/...> or <drivers/...> in boot/, kern/
             and drivers/ names a header of the same or a lower layer
  documented every folder holding kernel sources is named in the tree
             map (docs/tree.md) and in docs/architecture.md
  calls      every undefined symbol of every kernel object file in build/
             is defined by an object of the same or a lower layer
             (needs a built kernel: make)

Run alone it prints the violations and "N passed, N failed"; with --graph
it prints the layer-to-layer include counts.  tests/unit/test_source_rules.py
runs both checks in make check.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE_DIRS = ("boot", "kern", "drivers")

# (layer, what it is, the folders and files in it).  A path names a folder
# (every file below it) or one file without its extension (its .c and .h);
# the longest matching path decides.
LAYERS = [
    ("lib", "the kernel's own library: types, strings, formatting, symbols, options",
     ["kern/lib", "kern/abi"]),
    ("machine", "the processor and the platform: CPUs, traps, SMP, NUMA, panic, console, "
     "ACPI, APICs, timers, serial, VGA; the trap and AP entry code",
     ["kern/arch", "drivers/platform", "boot"]),
    ("spinlocks", "the lock family below the dispatcher: spin locks by three algorithms, "
     "statistics, the order checker; the data-race detector, which reads the held-lock "
     "stack (its compiler hooks are called from every layer, in KCSAN=1 builds only)",
     ["kern/lock", "kern/kcsan"]),
    ("memory", "physical pages, kernel page tables, the kernel heap",
     ["kern/vm/page", "kern/vm/pmap", "kern/vm/kmem", "kern/vm/kmem_debug"]),
    ("dispatch", "threads, run queues, sleep and wakeup, and the locks that sleep "
     "(SVR4 MP mutexes are released at every switch, so they live with the dispatcher)",
     ["kern/sched", "kern/lock/mutex", "kern/lock/rlock", "kern/lock/sleep",
      "kern/lock/mutex_bench", "kern/cluster"]),
    ("devices", "the PCI bus, the block layer and its disk drivers, the network devices, "
     "the terminal",
     ["drivers/pci", "drivers/block", "drivers/net", "drivers/tty"]),
    ("files+vm", "buffer cache, DNLC, VFS and vnodes, S5, UFS, tmpfs; address spaces, faults, "
     "the file page cache, copyin/copyout (SVR4's VM and file systems call each other "
     "through the vnode's pages: VOP_READ goes through the page cache, faults read "
     "through VOPs)",
     ["kern/vfs", "kern/s5", "kern/ufs", "kern/tmpfs", "kern/vm", "kern/cluster/cl_dnlc",
      "kern/cluster/cl_pcache"]),
    ("processes", "processes, signals, descriptors, exec, the system calls and their entry; "
     "sockets and the event objects, which are descriptors",
     ["kern/proc", "kern/ipc", "kern/procfs", "kern/net", "kern/event", "kern/pty"]),
    ("top", "boot sequence, in-kernel tests and benchmarks: may use everything",
     ["kern/main", "kern/tests"]),
]

# Calls upward that are allowed without a registered hook, with the reason.
# The boot CPU's entry ends in kmain, which then builds everything else.
# kprintf.h (the library) declares the console's interface and the console
# (the machine) implements it: the library formats, the machine prints.
ALLOWED_UPCALLS = {
    ("machine", "kmain"): "the boot entry (boot/entry.asm) jumps to kmain, the top",
    ("lib", "kprintf"): "the console, declared in kern/lib/kprintf.h",
    ("lib", "vkprintf"): "the console, declared in kern/lib/kprintf.h",
}


def layer_of(path):
    """The layer index of a source or object path relative to ROOT, or None."""
    stem = os.path.splitext(path)[0]
    if stem.endswith(".asm"):
        stem = stem[:-4]
    best, best_len = None, -1
    for i, (_, _, paths) in enumerate(LAYERS):
        for p in paths:
            if (stem == p or stem.startswith(p + "/")) and len(p) > best_len:
                best, best_len = i, len(p)
    return best


def source_files():
    for top in SOURCE_DIRS:
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for f in sorted(files):
                if f.endswith((".c", ".h", ".asm")):
                    yield os.path.relpath(os.path.join(d, f), ROOT)


INCLUDE = re.compile(r'^\s*(?:#\s*include\s*[<"]|%include\s+")((?:kern|drivers|boot)/[^>"]+)[>"]')


def includes():
    """(file, line, included path) for every include of a kernel header."""
    for path in source_files():
        with open(os.path.join(ROOT, path), errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if m:
                    yield path, n, m.group(1)


def upward(frm, to):
    a, b = layer_of(frm), layer_of(to)
    return a is not None and b is not None and b > a


def unplaced_files():
    return [p for p in source_files() if layer_of(p) is None]


def source_folders():
    return sorted({os.path.dirname(p) for p in source_files()})


def undocumented_folders():
    """Folders of kernel sources that the tree map (docs/tree.md) or the
    architecture page does not name (as `folder/`, or, for kern/ itself, each of its
    loose files, `kern/main.c`)."""
    loose = {d: [p for p in source_files() if os.path.dirname(p) == d] for d in source_folders()}
    bad = []
    for doc in (os.path.join("docs", "tree.md"), os.path.join("docs", "architecture.md")):
        with open(os.path.join(ROOT, doc)) as f:
            text = f.read()
        for d in source_folders():
            named = "`%s/`" % d in text if d != "kern" else \
                all("`%s`" % p in text for p in loose[d])
            if not named:
                bad.append("%s does not name %s/" % (doc, d))
    return bad


def upward_includes():
    return ["%s:%d includes %s (%s -> %s)" % (p, n, h, LAYERS[layer_of(p)][0], LAYERS[layer_of(h)][0])
            for p, n, h in includes() if upward(p, h)]


def kernel_objects():
    build = os.path.join(ROOT, "build")
    for top in SOURCE_DIRS:
        for d, _, files in os.walk(os.path.join(build, top)):
            for f in sorted(files):
                if f.endswith(".o"):
                    obj = os.path.join(d, f)
                    src = os.path.relpath(obj, build)[:-2]
                    if os.path.exists(os.path.join(ROOT, src if not src.endswith(".asm") else src)) \
                            or os.path.exists(os.path.join(ROOT, src + ".c")):
                        yield obj, src


def nm_symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRGSVW" and parts[1].isupper():
            defined.add(parts[2])
    return defined, undefined


def upward_calls():
    """Symbols an object uses that only a higher layer's object defines."""
    objs = list(kernel_objects())
    if not objs:
        return ["no kernel objects under build/: run make first"]
    where, uses = {}, {}
    for obj, src in objs:
        d, u = nm_symbols(obj)
        for s in d:
            where[s] = src
        uses[src] = u
    bad = []
    for src, syms in sorted(uses.items()):
        for s in sorted(syms):
            if s in where and upward(src, where[s]) and \
                    (LAYERS[layer_of(src)][0], s) not in ALLOWED_UPCALLS:
                bad.append("%s uses %s of %s (%s -> %s)" % (
                    src, s, where[s], LAYERS[layer_of(src)][0], LAYERS[layer_of(where[s])][0]))
    return bad


def graph():
    counts = {}
    for p, _, h in includes():
        a, b = layer_of(p), layer_of(h)
        if a is not None and b is not None and a != b:
            counts[(a, b)] = counts.get((a, b), 0) + 1
    for (a, b), n in sorted(counts.items()):
        print("%-12s -> %-12s %4d%s" % (LAYERS[a][0], LAYERS[b][0], n, "   UPWARD" if b > a else ""))


def main(argv):
    if "--help" in argv or "-h" in argv:
        print(__doc__.strip())
        return 0
    if "--graph" in argv:
        graph()
        return 0
    return run_rules(RULES)


def run_rules(rules):
    """Run (name, check) pairs, where check returns the violations: a
    "PASS name" or "FAIL name: ..." line each (every violation indented
    below), then "N passed, N failed".  The exit status."""
    passed = failed = 0
    for name, check in rules:
        bad = check()
        if bad:
            failed += 1
            print("FAIL %s: %d, e.g. %s" % (name, len(bad), "; ".join(bad[:5])))
            for b in bad:
                print("    " + b)
        else:
            passed += 1
            print("PASS %s" % name)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


RULES = [("layers_every_file_placed", unplaced_files),
         ("layers_documented", undocumented_folders),
         ("layers_includes", upward_includes),
         ("layers_calls", upward_calls)]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
