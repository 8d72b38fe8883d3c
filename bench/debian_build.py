#!/usr/bin/env python3
"""The Debian build benchmark: Debian's gcc compiles the C sources of
Tempest's own userland/ with `make -jN` (N = 2 x the CPUs), inside Tempest
and on the Linux peer, on the same machine preset, and prints the elapsed
times (and, on Tempest, the lock classes that missed most, from lockstat).

    bench/debian_build.py [--machine default] [--accel tcg] [--only tempest|linux]
                          [--timeout 1800] [--keep DIR]

The same preset on both kernels:
  - the toolchain: Debian's packages on one UFS image
    (tools/debian_root.py).  Tempest boots it as its root; Linux mounts it
    read-only with ufs.ko (ufstype=44bsd) and chroots into it, with /proc
    and /dev mounted inside;
  - the sources and objects: an S5 disk made here with mkfs.s5 (every .c
    and .h under userland/, kern/abi/tempest_abi.h, and a Makefile compiling each .c to a .o with
    `gcc -O2 -pipe`), mounted on /mnt by Tempest (s5) and by Linux
    (sysv.ko); both write the objects there.  -pipe keeps gcc's
    temporaries off the root, which Linux has read-only.
The same script, build.sh on the S5 disk, runs under Debian's bash on
both: it times `make -jN` with bash's $EPOCHREALTIME and prints one line

    debian-build: kernel K cpus C jobs N status S objects O elapsed SECONDS

(on Tempest with lockstat's table of the 10 most-missed lock classes
before it).  --keep DIR keeps each kernel's whole output there.

Every failure is one line starting "debian_build:", and exit status 1.

The pieces it shares with the harness's macro benchmarks (pmake, gaede:
tools/harness/macro.py) come from there: the Linux peer's preamble that
mounts the Debian root on /deb, and making an S5 disk of a host tree.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
USERLAND = os.path.join(ROOT, "userland")
DEBIAN_ROOT = os.path.join(ROOT, "tools", "debian_root.py")
USERRUN = os.path.join(ROOT, "tools", "userrun.py")
LINUX_PEER = os.path.join(ROOT, "tools", "linux_peer.py")
RESULT_RE = re.compile(r"^debian-build: .*$", re.M)
sys.path.insert(0, os.path.join(ROOT, "tools"))
from harness import macro, macro_pmake  # noqa: E402  (the shared pieces)

MAKEFILE = """\
# Every C file of Tempest's userland/, compiled by Debian's gcc
# (bench/debian_build.py).
CC = gcc
# -iquote, not -I: a search of lib/ for <features-time64.h> would fail on
# S5 (a name over 14 bytes is ENAMETOOLONG there, on Linux's sysv too).
CFLAGS = -O2 -pipe -std=gnu11 -iquote lib -w
OBJS = %s

all: $(OBJS)

%%.o: %%.c
\t$(CC) $(CFLAGS) -c $< -o $@
"""

BUILD_SH = """\
# bench/debian_build.py: time make -jN (N = 2 x CPUs) in /mnt/src.
cd /mnt/src || exit 93
export TMPDIR=/mnt/tmp LC_ALL=C
cpus=$(nproc)
jobs=$((cpus * 2))
kernel=$(uname -s)
pre=
if [ "$kernel" != Linux ] && command -v lockstat > /dev/null; then
    pre="lockstat -s misses -n 10 -o /mnt/lockstat.txt"
fi
start=$EPOCHREALTIME
$pre make -j$jobs > /mnt/make.log 2>&1
status=$?
end=$EPOCHREALTIME
[ -n "$pre" ] && cat /mnt/lockstat.txt
[ $status = 0 ] || grep -v '^gcc ' /mnt/make.log | head -5
objects=$(find . -name '*.o' | wc -l)
elapsed=$(awk "BEGIN { printf \\"%.2f\\", $end - $start }")
echo "debian-build: kernel $kernel cpus $cpus jobs $jobs status $status objects $objects elapsed $elapsed"
"""

LINUX_RUN = (macro.LINUX_ROOT + "mount -t sysv /dev/vdb /deb/mnt || exit 92\n"
             "chroot /deb /bin/bash /mnt/build.sh")
TEMPEST_RUN = "mount -t s5 /dev/vdb /mnt || exit 92; bash /mnt/build.sh"


class Failure(Exception):
    """A failure to report in one line."""


def sources():
    """The .c and .h files of userland/, relative to it."""
    found = []
    for d, dirs, files in os.walk(USERLAND):
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                found.append(os.path.relpath(os.path.join(d, f), USERLAND))
    return found


def stage_sources(top):
    """top/src: the sources and their Makefile; top/build.sh; top/tmp."""
    src = os.path.join(top, "src")
    files = sources()
    # S5 names are at most 14 bytes: longer ones are shortened, as for pmake.
    renamed = macro_pmake.short_names(files)
    headers = {k: v for k, v in renamed.items() if k.endswith(".h")}
    for f in files:
        dst = os.path.join(src, renamed.get(f, f))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(os.path.join(USERLAND, f), errors="surrogateescape") as fin:
            text = macro_pmake.rewrite_includes(fin.read(), headers)
        with open(dst, "w", errors="surrogateescape") as fout:
            fout.write(text)
    objs = [renamed.get(f, f)[:-2] + ".o" for f in files if f.endswith(".c")]
    with open(os.path.join(src, "Makefile"), "w") as mk:
        mk.write(MAKEFILE % " \\\n\t".join(objs))
    abi = os.path.join(top, "kern", "abi")       # lockstat's "../../kern/abi/..."
    os.makedirs(abi)
    shutil.copy(os.path.join(ROOT, "kern", "abi", "tempest_abi.h"), abi)
    with open(os.path.join(top, "build.sh"), "w") as sh:
        sh.write(BUILD_SH)
    os.makedirs(os.path.join(top, "tmp"))
    return len(objs)


def run(cmd, what, timeout=None):
    """Run cmd; its stdout text, or Failure naming what failed."""
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise Failure("%s did not end in %d s" % (what, timeout))
    except OSError as e:
        raise Failure("%s: %s" % (what, e.strerror))
    return r


def make_s5(tmp, top):
    try:
        return macro_pmake.make_s5(os.path.join(tmp, "src.img"), top, 24 * 1024)
    except macro_pmake.PrepareError as e:
        raise Failure(str(e))


def make_debian(tmp):
    img = os.path.join(tmp, "debian.img")
    r = run([sys.executable, DEBIAN_ROOT, "image", img, "--free", "16M"], "debian_root.py")
    if r.returncode != 0:
        raise Failure((r.stderr.strip().splitlines() or ["debian_root.py failed"])[-1])
    return img


def one_kernel(kernel, args, debian, tmp, top):
    """Boot kernel with a fresh copy of the source disk; its output."""
    src = make_s5(tmp, top)
    if kernel == "tempest":
        cmd = [sys.executable, USERRUN, "--userland", "debian", "--machine", args.machine,
               "--accel", args.accel, "--timeout", str(args.timeout), "--disk", src,
               "--run", TEMPEST_RUN]
    else:
        cmd = [sys.executable, LINUX_PEER, "run", "--machine", args.machine, "--accel",
               args.accel, "--timeout", str(args.timeout), "--disk", debian, "--disk", src,
               "--run", LINUX_RUN]
    print("debian_build: %s: make -j(2 x CPUs) of %s's C files on %s ..."
          % (kernel, "userland/", args.machine), file=sys.stderr, flush=True)
    r = run(cmd, kernel, timeout=args.timeout + 300)
    out = r.stdout
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        with open(os.path.join(args.keep, kernel + ".out"), "w") as f:
            f.write(out + "\n--- stderr\n" + r.stderr)
    found = RESULT_RE.findall(out)
    if not found:
        last = (r.stderr.strip().splitlines() or ["no output"])[-1]
        raise Failure("%s: no result line (exit %d: %s)" % (kernel, r.returncode, last))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--machine", default="default", help="the machine preset (default default)")
    p.add_argument("--accel", default="tcg", help="tcg, kvm or icount (default tcg)")
    p.add_argument("--only", choices=("tempest", "linux"), help="one kernel only")
    p.add_argument("--timeout", type=int, default=1800, help="seconds for each boot (default 1800)")
    p.add_argument("--keep", help="directory to keep each kernel's output in")
    args = p.parse_args()
    kernels = [args.only] if args.only else ["tempest", "linux"]
    try:
        with tempfile.TemporaryDirectory(prefix="debian-build-", dir=BUILD) as tmp:
            top = os.path.join(tmp, "disk")
            n = stage_sources(top)
            print("debian_build: %d C files" % n, file=sys.stderr)
            debian = make_debian(tmp) if "linux" in kernels else None
            for k in kernels:
                print(one_kernel(k, args, debian, tmp, top).rstrip("\n"), flush=True)
    except Failure as e:
        sys.exit("debian_build: %s" % e)
    except KeyboardInterrupt:
        sys.exit("debian_build: interrupted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
