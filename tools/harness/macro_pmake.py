"""pmake and pmakeInd (Sprite, seed 003 section 5.1): the disk of sources
the two macro workloads compile, and their prepare functions (the
interface in tools/harness/macro.py).

The program compiled is Tempest itself: every C file under kern/ and
drivers/ with every header there, compiled by Debian's gcc with the
kernel's own flags (KCFLAGS, read from the top Makefile, plus -pipe so
gcc keeps its temporaries off the file systems) into objects, and not
linked (Sprite left the final link out too).  The generated Makefile has
one pattern rule, %.o from %.c, and an `all` target naming every object.

The disk is S5, mounted read-write by both kernels (Tempest's s5, Linux's
sysv), so the objects go beside their sources on the same disk, as they
did on Sprite's file server.  UFS would keep the long names, but Linux's
ufs.ko is read-only, which would put the objects on another disk for
Linux alone.  S5 names are at most 14 bytes, so a longer file name is
shortened here (its first letters and a number, in its own directory)
and every #include of a shortened header is rewritten to match; the
Makefile names the short files.  A handful of files is affected
(kern/tests/test_lockstat.c ...), and their contents are compiled
unchanged.

pmake: one copy of the sources at the top of the disk; the command is
`/bench/pmake -j 2N` (two compilations per processor).  pmakeind: one copy
per processor, c0 .. cN-1, and `/bench/pmakeind -n N -j 2` (a make on
each copy, two compilations each).  A point's "files" (the sweep key
`files`; 0 or absent: all) takes that many C files, spread evenly over
the sorted list, for the reduced check in `make check`.
"""

import os
import re
import shutil
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MKFS_S5 = os.path.join(ROOT, "build", "tools", "mkfs.s5")
SOURCE_DIRS = ("kern", "drivers")
S5_NAME_MAX = 14
MOUNT = "/mnt/pmake"
# Disk space per C file for its object (-O2 -g objects of the kernel are
# about 60 KiB on average; the largest a few hundred).
OBJECT_KIB = 160
WARM = ("echo 'int warm;' > /tmp/pmake-warm.c && gcc -O2 -pipe -c /tmp/pmake-warm.c "
        "-o /tmp/pmake-warm.o && rm -f /tmp/pmake-warm.[co]")

MAKEFILE = """\
# Tempest's kernel C sources, compiled by Debian's gcc with the kernel's
# flags and not linked: Sprite's pmake workload (tools/harness/macro_pmake.py).
CC = gcc
CFLAGS = %s -pipe
OBJS = %s

all: $(OBJS)

%%.o: %%.c
\t$(CC) $(CFLAGS) -c $< -o $@
"""


class PrepareError(Exception):
    """A disk of sources that cannot be made, in one line."""


def kernel_cflags(root=ROOT):
    """The top Makefile's KCFLAGS, continuation lines joined."""
    with open(os.path.join(root, "Makefile")) as f:
        text = f.read()
    m = re.search(r"^KCFLAGS\s*:?=\s*((?:.*\\\n)*.*)$", text, re.M)
    if not m:
        raise PrepareError("the top Makefile has no KCFLAGS line")
    return " ".join(m.group(1).replace("\\\n", " ").split())


def kernel_sources(root=ROOT):
    """(C files, headers) under kern/ and drivers/, relative to root, sorted."""
    cfiles, headers = [], []
    for top in SOURCE_DIRS:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for f in sorted(files):
                rel = os.path.relpath(os.path.join(d, f), root)
                if f.endswith(".c"):
                    cfiles.append(rel)
                elif f.endswith(".h"):
                    headers.append(rel)
    return cfiles, headers


def pick(cfiles, count):
    """count of cfiles spread evenly over the list (all for 0 or more)."""
    if not count or count >= len(cfiles):
        return list(cfiles)
    return [cfiles[i * len(cfiles) // count] for i in range(count)]


def short_names(paths):
    """{path: S5-safe path} for every path with a component over 14 bytes:
    the component's first letters, a number and its suffix (unique in its
    directory)."""
    taken = {}
    for p in paths:
        taken.setdefault(os.path.dirname(p), set()).add(os.path.basename(p))
    renamed = {}
    for p in paths:
        parts = p.split("/")
        if any(len(x) > S5_NAME_MAX for x in parts[:-1]):
            raise PrepareError("directory name over %d bytes in %s" % (S5_NAME_MAX, p))
        base = parts[-1]
        if len(base) <= S5_NAME_MAX:
            continue
        stem, ext = os.path.splitext(base)
        used = taken[os.path.dirname(p)]
        for n in range(1, 1000):
            tag = str(n)
            short = stem[:S5_NAME_MAX - len(ext) - len(tag)] + tag + ext
            if short not in used:
                break
        used.add(short)
        renamed[p] = "/".join(parts[:-1] + [short])
    return renamed


def rewrite_includes(text, renamed_headers):
    """text with each #include of a renamed header naming its new path."""
    for old, new in renamed_headers.items():
        text = re.sub(r'(#\s*include\s*[<"])%s([>"])' % re.escape(old), r"\g<1>%s\2" % new, text)
    return text


def stage_tree(dest, count=0, root=ROOT):
    """Copy the sources (count C files, 0 for all) and their Makefile into
    dest; returns (C files, bytes copied)."""
    cfiles, headers = kernel_sources(root)
    cfiles = pick(cfiles, count)
    renamed = short_names(cfiles + headers)
    renamed_headers = {k: v for k, v in renamed.items() if k.endswith(".h")}
    size = 0
    for rel in cfiles + headers:
        dst = os.path.join(dest, renamed.get(rel, rel))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(os.path.join(root, rel), errors="surrogateescape") as f:
            text = f.read()
        if renamed_headers:
            text = rewrite_includes(text, renamed_headers)
        with open(dst, "w", errors="surrogateescape") as f:
            f.write(text)
        size += len(text)
    objs = [renamed.get(c, c)[:-2] + ".o" for c in cfiles]
    with open(os.path.join(dest, "Makefile"), "w") as mk:
        mk.write(MAKEFILE % (kernel_cflags(root), " \\\n\t".join(objs)))
    return len(cfiles), size


def make_s5(image, top, kib):
    """An S5 image of kib KiB at image, filled from the host directory top."""
    if not os.path.exists(MKFS_S5):
        raise PrepareError("%s is missing (run 'make tools')" % MKFS_S5)
    r = subprocess.run([MKFS_S5, "-d", top, image, "%dK" % kib], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise PrepareError("mkfs.s5 failed: %s" % (r.stderr.strip().splitlines() or ["?"])[-1])
    return image


def _disk(tmp, name, copies, count):
    """The S5 disk of one point: the sources once at its top (copies 0) or
    in c0 .. c(copies-1); returns (image, C files per copy)."""
    top = os.path.join(tmp, name + "-tree")
    shutil.rmtree(top, ignore_errors=True)
    dirs = [top] if copies == 0 else [os.path.join(top, "c%d" % i) for i in range(copies)]
    files = size = 0
    for d in dirs:
        files, size = stage_tree(d, count)
    kib = len(dirs) * (size // 1024 + files * OBJECT_KIB + 256) + 2048
    image = make_s5(os.path.join(tmp, name + ".img"), top, kib)
    shutil.rmtree(top, ignore_errors=True)
    return image, files


def prepare_pmake(tmp, point):
    """One copy of the sources; make -j (2 x CPUs) over it."""
    image, _files = _disk(tmp, "pmake", 0, int(point.get("files") or 0))
    return {"disks": [{"image": image, "fs": "s5", "mount": MOUNT, "rw": True}],
            "users": [], "setup": WARM,
            "command": "/bench/pmake -j %d -C %s" % (2 * point["cpus"], MOUNT)}


def prepare_pmakeind(tmp, point):
    """One copy of the sources per CPU; a make -j 2 on each, all at once."""
    n = point["cpus"]
    image, _files = _disk(tmp, "pmakeind", n, int(point.get("files") or 0))
    return {"disks": [{"image": image, "fs": "s5", "mount": MOUNT, "rw": True}],
            "users": [], "setup": WARM,
            "command": "/bench/pmakeind -n %d -j 2 -C %s" % (n, MOUNT)}
