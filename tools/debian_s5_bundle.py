#!/usr/bin/env python3
"""Debian's toolchain on an S5 root, before the UFS root lands:

    debian_s5_bundle.py DEST [--prefix /add]

copies Debian's gcc driver, cc1, as, ld and make, with glibc's loader and
every library they need, the C start files, libc_nonshared.a and libgcc.a,
from the Debian tree of tools/debian_root.py (fetched first if need be)
into DEST, all under names S5's 14 bytes hold.  The copies are changed
with patchelf only where the names demand it: the program interpreter
becomes PREFIX/ld.so, the library search path PREFIX, and a library whose
name is too long (libbfd-2.40-system.so ...) gets a short one, in its
users' DT_NEEDED and its own DT_SONAME.  Everything else in the files is
Debian's.  DEST also gets userland/tests/debian/ (a hello world, a small
project with a Makefile, and run.sh, which builds and runs them with those
tools inside Tempest; tests/debian_check.py checks its output).

Needs patchelf (tools/install-deps.sh); every failure is one line on
standard error and exit status 1.
"""
import argparse
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import debian_root  # noqa: E402
from glibc_bundle import Failure, run  # noqa: E402  (one copy of the pair)

S5_DIRSIZ = 14
SOURCES = os.path.join(ROOT, "userland", "tests", "debian")
PROGRAMS = {                # name in DEST: path in the tree
    "gcc": "usr/bin/x86_64-linux-gnu-gcc-12",
    "cc1": "usr/lib/gcc/x86_64-linux-gnu/12/cc1",
    "as": "usr/bin/x86_64-linux-gnu-as",
    "ld": "usr/bin/x86_64-linux-gnu-ld.bfd",
    "make": "usr/bin/make",
}
DATA = {
    "crt1.o": "usr/lib/x86_64-linux-gnu/crt1.o",
    "crti.o": "usr/lib/x86_64-linux-gnu/crti.o",
    "crtn.o": "usr/lib/x86_64-linux-gnu/crtn.o",
    "crtbegin.o": "usr/lib/gcc/x86_64-linux-gnu/12/crtbegin.o",
    "crtend.o": "usr/lib/gcc/x86_64-linux-gnu/12/crtend.o",
    "libcns.a": "usr/lib/x86_64-linux-gnu/libc_nonshared.a",
    "libgcc.a": "usr/lib/gcc/x86_64-linux-gnu/12/libgcc.a",
}
LOADER = "ld-linux-x86-64.so.2"     # needed by libc.so.6; ld.so answers to it
LIBDIRS = ("lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu")


def needed(path):
    return run(["patchelf", "--print-needed", path]).split()


def find_lib(tree, name):
    for d in LIBDIRS:
        path = os.path.join(tree, d, name)
        if os.path.exists(path):
            return os.path.realpath(path)
    raise Failure("no %s in the Debian tree (add its package to tools/debian/packages)" % name)


def short_name(name, taken):
    """name itself if S5 holds it, else libNAME.so from its first word."""
    if len(name) <= S5_DIRSIZ:
        return name
    stem = name.split("-")[0].split(".")[0][:S5_DIRSIZ - 3]
    short = stem + ".so"
    n = 0
    while short in taken:
        n += 1
        short = "%s%d.so" % (stem[:S5_DIRSIZ - 4], n)
    return short


def copy(src, dst, mode):
    if os.path.lexists(dst):
        os.remove(dst)
    shutil.copyfile(src, dst)
    os.chmod(dst, mode)


def libraries(tree, dest):
    """Copy every library the programs need, transitively: {name: short}."""
    names, todo = {}, [os.path.join(dest, p) for p in PROGRAMS]
    while todo:
        for lib in needed(todo.pop()):
            if lib == LOADER or lib in names:
                continue
            names[lib] = short_name(lib, set(names.values()))
            dst = os.path.join(dest, names[lib])
            copy(find_lib(tree, lib), dst, 0o755)
            todo.append(dst)
    return names


def patch(dest, prefix, names):
    renamed = {n: s for n, s in names.items() if n != s}
    for f in list(PROGRAMS) + sorted(set(names.values())):
        path = os.path.join(dest, f)
        # One change a call: Debian 12's patchelf mixes up several at once.
        changes = [["--set-rpath", prefix]]
        if f in PROGRAMS:
            changes.append(["--set-interpreter", prefix + "/ld.so"])
        changes += [["--replace-needed", lib, renamed[lib]] for lib in needed(path)
                    if lib in renamed]
        if f in renamed.values():
            changes.append(["--set-soname", f])
        for change in changes:
            run(["patchelf"] + change + [path])


def build(dest, prefix):
    if not shutil.which("patchelf"):
        raise Failure("patchelf is missing (tools/install-deps.sh installs it)")
    tree = debian_root.fetch(debian_root.LIST)
    os.makedirs(dest, exist_ok=True)
    for name, rel in PROGRAMS.items():
        copy(os.path.join(tree, rel), os.path.join(dest, name), 0o755)
    for name, rel in DATA.items():
        copy(os.path.join(tree, rel), os.path.join(dest, name), 0o644)
    copy(find_lib(tree, LOADER), os.path.join(dest, "ld.so"), 0o755)
    patch(dest, prefix, libraries(tree, dest))
    for f in os.listdir(SOURCES):
        copy(os.path.join(SOURCES, f), os.path.join(dest, f), 0o755 if f.endswith(".sh") else 0o644)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dest", help="directory to fill")
    p.add_argument("--prefix", default="/add",
                   help="where DEST will be inside Tempest (default /add, as ADD= puts it)")
    args = p.parse_args()
    try:
        build(args.dest, args.prefix)
    except (Failure, debian_root.Failure) as e:
        sys.exit("debian_s5_bundle: %s" % e)
    except OSError as e:
        sys.exit("debian_s5_bundle: %s" % e)


if __name__ == "__main__":
    main()
