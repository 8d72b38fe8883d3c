#!/usr/bin/env python3
"""Copy the host's GNU make (Debian's, dynamic, glibc) with its dynamic
loader and libraries into one directory, for running inside Tempest:

    gmake_bundle.py DEST [--make /usr/bin/make]

DEST gets `make`, `ld.so` (the program interpreter, renamed: S5 names hold
at most 14 bytes) and each library `ldd` lists under its own soname.  Run
it there as

    DEST/ld.so --library-path DEST DEST/make ...

which needs no /lib64 in the image.  Without a host make (or ldd) it
prints why on one line and exits 1.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

S5_DIRSIZ = 14


def libraries(make):
    """(soname, host path) of every library make needs, and the loader's
    host path."""
    try:
        out = subprocess.run(["ldd", make], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit("gmake_bundle: ldd %s failed: %s" % (make, e))
    libs, loader = [], None
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (/\S+)", line)
        if m:
            libs.append((m.group(1), m.group(2)))
            continue
        m = re.match(r"\s*(/\S*ld-linux\S*)", line)
        if m:
            loader = m.group(1)
    if not loader:
        sys.exit("gmake_bundle: %s names no program interpreter (is it static?)" % make)
    return libs, loader


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dest", help="directory to fill")
    p.add_argument("--make", default="/usr/bin/make", help="the make to copy")
    args = p.parse_args()
    if not os.path.isfile(args.make):
        sys.exit("gmake_bundle: %s not found (install Debian's make)" % args.make)
    libs, loader = libraries(args.make)
    os.makedirs(args.dest, exist_ok=True)
    for name, src in [("make", args.make), ("ld.so", loader)] + libs:
        if len(name) > S5_DIRSIZ:
            sys.exit("gmake_bundle: %s is longer than S5's %d bytes" % (name, S5_DIRSIZ))
        dst = os.path.join(args.dest, name)
        shutil.copyfile(os.path.realpath(src), dst)
        os.chmod(dst, 0o755)


if __name__ == "__main__":
    main()
