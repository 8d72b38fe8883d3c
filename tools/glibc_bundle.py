#!/usr/bin/env python3
"""Build the glibc test bundle for userland/tests/sh/sh_glibc.sh: dynamic
glibc programs made with the host's gcc, with their loader and libraries
in one directory, under names S5's 14 bytes hold:

    glibc_bundle.py DEST

DEST gets

    ld.so, libc.so.6, ...   the host's program interpreter (renamed) and the
                            libraries the programs need, under their sonames
    gprog, gprog_np         userland/tests/glibc/gprog.c as a PIE and as an
                            ET_EXEC, with PT_INTERP "./ld.so" (relative: the
                            test runs them from DEST) and RUNPATH $ORIGIN
    gmissing                a program that needs libgmiss.so.1, which is
                            built and left out, so ld.so must complain
    cc1, cc1_in.c           with --cc1: the host's cc1 (an ET_EXEC at
                            0x400000, run through ld.so by name), its
                            libraries and a source for it (about 40 MiB,
                            too much for the test root: `make run
                            ADD=DEST` runs them)

Without the host's gcc it prints why on one line and exits 1.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "userland", "tests", "glibc")
S5_DIRSIZ = 14
LINK = ["-Wl,--dynamic-linker=./ld.so", "-Wl,-rpath,$ORIGIN", "-Wl,--enable-new-dtags"]


class Failure(Exception):
    """A failure to report in one line."""


def run(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise Failure("%s: %s" % (cmd[0], e.strerror))
    if r.returncode != 0:
        lines = (r.stderr + r.stdout).strip().splitlines()
        raise Failure("%s failed: %s" % (" ".join(cmd[:3]), lines[-1] if lines else "no message"))
    return r.stdout


def needs(prog):
    """(soname, host path) of each library prog needs, and its loader."""
    libs, loader = [], None
    for line in run(["ldd", prog]).splitlines():
        m = re.match(r"\s*(\S+) => (/\S+)", line)
        if m:
            libs.append((m.group(1), m.group(2)))
            continue
        m = re.match(r"\s*(/\S*ld-linux\S*)", line)
        if m:
            loader = m.group(1)
    if not loader:
        raise Failure("%s names no program interpreter" % prog)
    return libs, loader


def put(dest, name, src, mode=0o755):
    if len(name) > S5_DIRSIZ:
        raise Failure("%s is longer than S5's %d bytes" % (name, S5_DIRSIZ))
    dst = os.path.join(dest, name)
    if os.path.lexists(dst):
        os.remove(dst)
    shutil.copyfile(os.path.realpath(src), dst)
    os.chmod(dst, mode)


def build(dest, cc1=False):
    os.makedirs(dest, exist_ok=True)
    gprog = os.path.join(SRC, "gprog.c")
    run(["gcc", "-O2", "-fPIE", "-pie", "-o", os.path.join(dest, "gprog"), gprog] + LINK)
    run(["gcc", "-O2", "-fno-pie", "-no-pie", "-o", os.path.join(dest, "gprog_np"), gprog] + LINK)
    with tempfile.TemporaryDirectory(prefix="glibc-bundle-", dir=dest) as tmp:
        lib = os.path.join(tmp, "libgmiss.so.1")
        run(["gcc", "-O2", "-fPIC", "-shared", "-Wl,-soname,libgmiss.so.1", "-o", lib,
             os.path.join(SRC, "gmiss.c")])
        run(["gcc", "-O2", "-o", os.path.join(dest, "gmissing"), os.path.join(SRC, "gmissing.c"),
             lib] + LINK)
        plain = os.path.join(tmp, "plain")     # gprog as the host runs it: for ldd
        run(["gcc", "-O2", "-o", plain, gprog])
        libs, loader = needs(plain)
    put(dest, "ld.so", loader)
    for name, path in libs:
        put(dest, name, path)
    if cc1:
        add_cc1(dest)


def add_cc1(dest):
    """The host's cc1 (33 MiB: too big for the test root's fixed size, so
    only on request) with its libraries and a source for it."""
    cc1 = run(["gcc", "-print-prog-name=cc1"]).strip()
    if not os.path.isfile(cc1):
        raise Failure("the host's gcc has no cc1 (%s)" % cc1)
    put(dest, "cc1", cc1)
    put(dest, "cc1_in.c", os.path.join(SRC, "cc1_in.c"), 0o644)
    libs, _ = needs(cc1)
    for name, path in libs:
        put(dest, name, path)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dest", help="directory to fill")
    p.add_argument("--cc1", action="store_true",
                   help="add the host's cc1 and its libraries (about 40 MiB)")
    args = p.parse_args()
    try:
        build(args.dest, args.cc1)
    except Failure as e:
        sys.exit("glibc_bundle: %s" % e)
    except OSError as e:
        sys.exit("glibc_bundle: %s" % e)


if __name__ == "__main__":
    main()
