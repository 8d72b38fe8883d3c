#!/usr/bin/env python3
"""Host tests for fsck.ufs and mkfs.ufs, judged by another implementation: NetBSD's
makefs (Debian's makefs package, `makefs -t ffs -o version=1`) builds UFS1
images from a host tree in several geometries, and fsck.ufs must find each
clean, while the independent reader tests/unit/ufsimage.py (written from
docs/ufs-format.md) must find every file's bytes, size, mode, links and
symbolic link target as the tree has them.  mkfs.ufs makes images of the
same tree, which fsck.ufs and the reader must find the same way (Linux's
ufs driver reads them too: tests/test_fs_peer.py).  Then each on-disk structure of
a copy is broken and fsck.ufs must say so, and random damage must never
crash it (run under the sanitizers when the compiler has them).

    python3 tests/unit/test_ufstools.py [-v]

Prints "PASS name" or "FAIL name: why" per case and "N passed, N failed";
exits non-zero on any failure.
"""
import argparse
import os
import random
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile

import ufs_repair
from ufsimage import (Image, SBOFF, SB_FIELDS, CG_FIELDS, DI_FIELDS, IFMT, IFDIR, IFREG,
                      IFLNK, ROOTINO)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MAKEFS = shutil.which("makefs") or "/usr/sbin/makefs"
# Geometries makefs is asked for: (name, -o options, size).
GEOMETRIES = [
    ("default", "version=1", "40m"),
    ("b16k", "version=1,bsize=16384,fsize=2048", "40m"),
    ("b4k", "version=1,bsize=4096,fsize=512", "40m"),
    ("groups", "version=1,maxbpcg=600,density=8192", "39m"),   # many groups, a short last one
]


class Ctx:
    pass


CTX = Ctx()
TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


class Fail(Exception):
    pass


def check(cond, why):
    if not cond:
        raise Fail(why)


def tmp(name):
    return os.path.join(CTX.tmp, name)


def fsck(image, args=()):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:exitcode=99",
               UBSAN_OPTIONS="halt_on_error=1:exitcode=99")
    p = subprocess.run([CTX.fsck] + list(args) + [image], capture_output=True, text=True, errors="replace",
                       timeout=120, env=env)
    CTX.last = p.stdout + p.stderr
    check("Sanitizer" not in p.stderr and "runtime error" not in p.stderr,
          "sanitizer report: " + p.stderr[-400:])
    return p


def patch(path, off, fmt, *vals):
    with open(path, "r+b") as f:
        f.seek(off)
        f.write(struct.pack(fmt, *vals))


# ---------------------------------------------------------------------------
# The tree and the images.

def write_tree(top):
    """Files of every size class around the block and fragment sizes,
    directories deep and wide, hard links, symbolic links short and long,
    a 255-byte name, a FIFO, a file through the double indirect blocks."""
    r = random.Random(5)
    os.makedirs(os.path.join(top, "deep", *("d%d" % i for i in range(20))))
    for i, size in enumerate([0, 1, 100, 511, 512, 1023, 1024, 1025, 2047, 4096, 5000, 8191,
                              8192, 8193, 16384, 20000, 98304, 98305, 100000, 300000]):
        with open(os.path.join(top, "f%02d" % i), "wb") as f:
            f.write(r.randbytes(size))
    os.makedirs(os.path.join(top, "many"))
    for i in range(500):
        with open(os.path.join(top, "many", "x%04d" % i), "w") as f:
            f.write("x" * i)
    with open(os.path.join(top, "n" * 255), "w") as f:
        f.write("a name of 255 bytes\n")
    with open(os.path.join(top, "big"), "wb") as f:
        f.write(r.randbytes(17 * 1024 * 1024 + 333))
    os.link(os.path.join(top, "big"), os.path.join(top, "deep", "d0", "big.link"))
    os.link(os.path.join(top, "f05"), os.path.join(top, "many", "f05.link"))
    os.symlink("f01", os.path.join(top, "short"))
    os.symlink("z" * 59, os.path.join(top, "sym59"))
    os.symlink("z" * 60, os.path.join(top, "sym60"))
    os.symlink("/" + "y" * 300, os.path.join(top, "long"))
    os.mkfifo(os.path.join(top, "fifo"))
    os.chmod(os.path.join(top, "f03"), 0o600)
    os.chmod(os.path.join(top, "deep", "d0"), 0o711)


def host_walk(top):
    """(relative path, lstat) of everything under top."""
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            out.append(("/" + os.path.relpath(p, top), os.lstat(p)))
    return out


def makefs(name, options, size):
    path = tmp(name + ".img")
    p = subprocess.run([MAKEFS, "-t", "ffs", "-o", options, "-s", size, path, CTX.src],
                       capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, "makefs -o %s failed: %s" % (options, p.stderr[-300:]))
    return path


def compare_tree(img, src):
    """How the image's tree differs from the host tree src."""
    out = []
    got = dict(img.walk())
    want = host_walk(src)
    if set(got) != {p for p, _ in want}:
        out.append("paths differ: %s" % sorted(set(got) ^ {p for p, _ in want})[:5])
    for path, st in want:
        ino = got.get(path)
        if not ino:
            continue
        di = img.inode(ino)
        if di["mode"] != st.st_mode & 0o177777:
            out.append("%s: mode %o, want %o" % (path, di["mode"], st.st_mode))
        if di["nlink"] != st.st_nlink:
            out.append("%s: %d links, want %d" % (path, di["nlink"], st.st_nlink))
        if stat.S_ISREG(st.st_mode):
            with open(os.path.join(src, path[1:]), "rb") as f:
                if img.read(ino) != f.read():
                    out.append("%s: contents differ" % path)
        elif stat.S_ISLNK(st.st_mode):
            if img.read(ino) != os.readlink(os.path.join(src, path[1:])).encode():
                out.append("%s: link target differs" % path)
        if not stat.S_ISDIR(st.st_mode) and di["size"] != (st.st_size if not stat.S_ISFIFO(
                st.st_mode) else 0):
            out.append("%s: size %d, want %d" % (path, di["size"], st.st_size))
    return out[:8]


# ---------------------------------------------------------------------------
# Cases.

@test
def build_tools():
    out = os.path.join(ROOT, "build", "tools")
    p = subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "tools"), "BUILD=" + out],
                       capture_output=True, text=True)
    check(p.returncode == 0, "make tools failed: " + p.stderr[-500:])
    CTX.fsck = os.path.join(out, "fsck.ufs")
    CTX.mkfs = os.path.join(out, "mkfs.ufs")
    check(os.access(CTX.fsck, os.X_OK) and os.access(CTX.mkfs, os.X_OK), "no fsck.ufs/mkfs.ufs")
    san = tmp("san")
    p = subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "tools"), "BUILD=" + san,
                        "SAN=-fsanitize=address,undefined -fno-sanitize-recover=undefined",
                        os.path.join(san, "fsck.ufs")], capture_output=True, text=True)
    if p.returncode == 0 and subprocess.run([os.path.join(san, "fsck.ufs")],
                                            capture_output=True).returncode == 2:
        CTX.fsck = os.path.join(san, "fsck.ufs")


@test
def makefs_present():
    check(os.access(MAKEFS, os.X_OK), "Debian's makefs is not installed (tools/install-deps.sh)")
    CTX.src = tmp("src")
    write_tree(CTX.src)


def geometry_case(name, options, size):
    def case():
        path = makefs(name, options, size)
        p = fsck(path)
        check(p.returncode == 0, "fsck.ufs exit %d on makefs's image: %s"
              % (p.returncode, CTX.last[-600:]))
        m = re.search(r": (\d+) files, (\d+) dirs, \d+ fragments used, \d+ free$", p.stdout, re.M)
        entries = host_walk(CTX.src)
        files = {(st.st_dev, st.st_ino) for _, st in entries if not stat.S_ISDIR(st.st_mode)}
        dirs = 1 + sum(1 for _, st in entries if stat.S_ISDIR(st.st_mode))
        check(m and int(m.group(1)) == len(files) and int(m.group(2)) == dirs,
              "summary %r, want %d files, %d dirs" % (p.stdout.strip()[-120:], len(files), dirs))
        with open(path, "rb") as f:
            img = Image(f.read())
        check(img.magic == 0x011954 and img.ncg >= 1, "magic %#x" % img.magic)
        problems = compare_tree(img, CTX.src)
        check(not problems, "; ".join(problems))
        if name == "default":
            CTX.good, CTX.img = path, img
        if name == "groups":
            CTX.groups = path
            check(img.ncg > 4 and img.size % img.fpg, "want several groups, the last short: "
                  "%d groups, size %d, fpg %d" % (img.ncg, img.size, img.fpg))
    case.__name__ = "makefs_" + name
    return case


for _g in GEOMETRIES:
    test(geometry_case(*_g))


# -- mkfs.ufs: (name, options, size); the last makes several groups.
MKFS_GEOMETRIES = [
    ("default", [], "40M"),
    ("b16k", ["-b", "16384", "-f", "2048", "-i", "4096"], "40M"),
    ("b4k", ["-b", "4096", "-f", "512"], "40M"),
    ("groups", ["-i", "16384"], "200M"),
]


def mkfs_ufs(*args, env=None):
    p = subprocess.run([CTX.mkfs] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, **(env or {})))
    CTX.last = p.stdout + p.stderr
    return p


def mkfs_case(name, options, size):
    def case():
        path = tmp("mkfs-%s.img" % name)
        p = mkfs_ufs("-d", CTX.src, *options, path, size)
        check(p.returncode == 0, "mkfs.ufs failed: " + CTX.last[-300:])
        p = fsck(path)
        check(p.returncode == 0, "fsck.ufs exit %d: %s" % (p.returncode, CTX.last[-600:]))
        with open(path, "rb") as f:
            img = Image(f.read())
        problems = compare_tree(img, CTX.src)
        check(not problems, "; ".join(problems))
        check(img.clean == 1 and img.inodefmt == 2 and img.maxsymlinklen == 60,
              "clean %d, inodefmt %d, maxsymlinklen %d" % (img.clean, img.inodefmt,
                                                          img.maxsymlinklen))
        if name == "groups":
            check(img.ncg > 1, "200 MiB made %d group(s)" % img.ncg)
            cgs = [img.cg(c) for c in range(img.ncg)]
            check(all(g["magic"] == 0x090255 and g["cgx"] == c for c, g in enumerate(cgs)),
                  "group blocks are not all in place")
            used = [c for c, g in enumerate(cgs) if g["cs_ndir"]]
            check(len(used) > 1, "every directory went to group(s) %s; they should spread"
                  % used)
    case.__name__ = "mkfs_" + name
    return case


for _g in MKFS_GEOMETRIES:
    test(mkfs_case(*_g))


@test
def mkfs_empty_and_reproducible():
    a, b = tmp("empty1.img"), tmp("empty2.img")
    for path in (a, b):
        p = mkfs_ufs("-d", CTX.src, path, "40M", env={"SOURCE_DATE_EPOCH": "1000000000"})
        check(p.returncode == 0, CTX.last[-300:])
    with open(a, "rb") as fa, open(b, "rb") as fb:
        check(fa.read() == fb.read(), "two runs with SOURCE_DATE_EPOCH differ")
    p = mkfs_ufs(tmp("empty.img"), "1M")
    check(p.returncode == 0 and fsck(tmp("empty.img")).returncode == 0, CTX.last[-300:])
    with open(tmp("empty.img"), "rb") as f:
        img = Image(f.read())
    check(sorted(n for _, _, n, _ in img.entries(ROOTINO)) == [b".", b".."],
          "the empty root holds more than . and ..")


@test
def mkfs_refusals():
    for args, pattern in ((["x.img", "12X"], r"size"), (["-b", "3000", "x.img", "1M"], r"power"),
                          (["-b", "4096", "-f", "8192", "x.img", "1M"], r"fragment"),
                          (["-b", "65536", "-f", "512", "x.img", "1M"], r"fragments a block"),
                          (["x.img", "40"], r"too small"),
                          (["-d", os.path.join(CTX.src, "f01"), "x.img", "1M"], r"not a directory"),
                          (["-d", CTX.src, "x.img", "2M"], r"out of space")):
        p = mkfs_ufs(*[a if a != "x.img" else tmp("x.img") for a in args])
        check(p.returncode != 0 and re.search(pattern, p.stderr),
              "%s: exit %d, %r" % (" ".join(args), p.returncode, p.stderr[-200:]))
        check(not os.path.exists(tmp("x.img")),
              "%s: the failed image was left behind" % " ".join(args))
    check(subprocess.run([CTX.mkfs], capture_output=True).returncode == 2, "no usage error")


# -- the corruption matrix: (name, pattern fsck must print, function(path, img))

def file_ino(path):
    return CTX.img.namei(path)


def sb(field):
    return SBOFF + SB_FIELDS[field][0]


def cgf(c, field):
    return CTX.img.cg_offset(c) + CG_FIELDS[field][0]


def dif(ino, field):
    return CTX.img.ipos(ino) + DI_FIELDS[field][0]


def entry_off(dirpath, name):
    for d_ino, _, n, off in CTX.img.entries(CTX.img.namei(dirpath)):
        if n == name.encode():
            return off
    raise KeyError(name)


def frag_map_off(c):
    return CTX.img.cg_offset(c) + CTX.img.cg(c)["freeoff"]


CORRUPTIONS = [
    ("bad_magic", r"bad magic", lambda p: patch(p, sb("magic"), "<i", 0x12345)),
    ("bad_bsize", r"impossible block size", lambda p: patch(p, sb("bsize"), "<i", 3000)),
    ("dsize", r"fs_dsize", lambda p: patch(p, sb("dsize"), "<i", CTX.img.dsize - 8)),
    ("size_past_image", r"larger than the device|does not match",
     lambda p: patch(p, sb("size"), "<i", CTX.img.size * 4)),
    ("cg_magic", r"group 0: bad magic", lambda p: patch(p, cgf(0, "magic"), "<i", 0x1234)),
    ("inode_map", r"free in the inode map",
     lambda p: patch(p, CTX.img.cg_offset(0) + CTX.img.cg(0)["iusedoff"], "<B", 0x03)),
    ("frag_map_free", r"but free in the map",
     lambda p: patch(p, frag_map_off(0) + CTX.img.inode(file_ino("f10"))["db"][0] // 8, "<B",
                     0xff)),
    ("cg_counts", r"its block counts",
     lambda p: patch(p, cgf(0, "cs_nbfree"), "<i", CTX.img.cg(0)["cs_nbfree"] + 1)),
    ("cstotal", r"fs_cstotal", lambda p: patch(p, sb("cs_nifree"), "<i", CTX.img.cs_nifree - 1)),
    ("link_count", r"link count",
     lambda p: patch(p, dif(file_ino("f07"), "nlink"), "<h", 2)),
    ("entry_to_free_inode", r"names free inode",
     lambda p: patch(p, entry_off("/", "f08"), "<I", CTX.img.ncg * CTX.img.ipg - 1)),
    ("entry_type", r"d_type", lambda p: patch(p, entry_off("/", "f09") + 6, "<B", 4)),
    ("block_twice", r"used twice",
     lambda p: patch(p, CTX.img.ipos(file_ino("f13")) + 40, "<i",
                     CTX.img.inode(file_ino("f12"))["db"][0])),
    ("block_outside", r"outside the file system",
     lambda p: patch(p, CTX.img.ipos(file_ino("f12")) + 40, "<i", CTX.img.size + 80)),
    ("di_blocks", r"di_blocks", lambda p: patch(p, dif(file_ino("f14"), "blocks"), "<I", 2)),
    ("block_misaligned", r"not block aligned",
     lambda p: patch(p, CTX.img.ipos(file_ino("f14")) + 40, "<i",
                     CTX.img.inode(file_ino("f14"))["db"][0] + 1)),
    ("reclen", r"record length", lambda p: patch(p, entry_off("/", "f11") + 4, "<H", 6)),
    ("slash_in_name", r"bad name", lambda p: patch(p, entry_off("/", "f11") + 8, "<B", 0x2f)),
    ("dir_hard_link", r"second link to directory",
     lambda p: patch(p, entry_off("/", "f15"), "<I", file_ino("deep/d0"))),
    ("root_not_dir", r"root inode", lambda p: patch(p, dif(ROOTINO, "mode"), "<H", 0o100644)),
    ("frsum", r"cg_frsum",
     lambda p: patch(p, CTX.img.cg_offset(0) + 52 + 4, "<i", 1000)),
    ("cluster_sum", r"cluster summary",
     lambda p: patch(p, CTX.img.cg_offset(0) + CTX.img.cg(0)["clustersumoff"] + 4, "<i", 999)),
    ("unreachable", r"in no directory",
     lambda p: patch(p, entry_off("/", "f16"), "<I", 0)),
]


def corruption_case(name, pattern, fn):
    def case():
        path = tmp("bad-%s.img" % name)
        shutil.copyfile(CTX.good, path)
        fn(path)
        p = fsck(path)
        check(p.returncode == 1, "fsck.ufs exit %d, want 1: %s" % (p.returncode, CTX.last[-300:]))
        check(re.search(pattern, p.stdout), "no /%s/ in: %s" % (pattern, p.stdout[-400:]))
    case.__name__ = "corrupt_" + name
    return case


for _c in CORRUPTIONS:
    test(corruption_case(*_c))


@test
def dirty_is_a_note():
    path = tmp("dirty.img")
    shutil.copyfile(CTX.good, path)
    patch(path, sb("clean"), "<b", 0)
    p = fsck(path)
    check(p.returncode == 0 and "not cleanly unmounted" in p.stdout, CTX.last[-300:])


@test
def not_an_image():
    path = tmp("garbage.img")
    with open(path, "wb") as f:
        f.write(random.Random(1).randbytes(64 * 1024))
    p = fsck(path)
    check(p.returncode == 1 and "bad magic" in p.stdout, CTX.last[-300:])
    open(path, "wb").close()
    p = fsck(path)
    check(p.returncode == 1 and "too small" in p.stdout, CTX.last[-300:])
    check(fsck(tmp("missing.img")).returncode == 2, "a missing image is not exit 2")
    check(subprocess.run([CTX.fsck], capture_output=True).returncode == 2, "no usage error")


@test
def fuzz_metadata():
    """Random bytes in the superblock, a group block, inode blocks and the
    root directory never crash fsck.ufs, and most are noticed."""
    img, rnd = CTX.img, random.Random(7)
    areas = [(SBOFF, 1376), (img.cg_offset(0), img.cgsize),
             (img.ipos(0), 4 * img.bsize),
             (img.inode(ROOTINO)["db"][0] * img.fsize, 512)]
    with open(CTX.good, "rb") as f:
        good = f.read()
    path, flagged = tmp("fuzz.img"), 0
    for i in range(CTX.fuzz_rounds):
        data = bytearray(good)
        for _ in range(rnd.randint(1, 6)):
            base, length = rnd.choice(areas)
            data[base + rnd.randrange(length)] = rnd.randrange(256)
        with open(path, "wb") as f:
            f.write(data)
        p = fsck(path)
        check(p.returncode in (0, 1), "round %d: exit %d: %s" % (i, p.returncode, CTX.last[-300:]))
        flagged += p.returncode
    check(flagged > CTX.fuzz_rounds * 2 // 5, "only %d of %d damaged images were flagged"
          % (flagged, CTX.fuzz_rounds))


def fsck_mode(mode, image):
    return fsck(image, [mode] if mode else [])


ufs_repair.register(test, check, fsck_mode, tmp, {n: fn for n, _, fn in CORRUPTIONS}, CTX)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-v", action="store_true", help="print the last tool output on failure")
    ap.add_argument("--fuzz", type=int, default=150, help="damaged images to try (150)")
    ap.add_argument("--repair-rounds", type=int, default=80,
                    help="damaged images to repair with -y (80)")
    args = ap.parse_args()
    CTX.fuzz_rounds = args.fuzz
    CTX.repair_rounds = args.repair_rounds
    CTX.tmp = tempfile.mkdtemp(prefix="ufstools.", dir=os.path.join(ROOT, "build"))
    CTX.last = ""
    passed = failed = 0
    try:
        for t in TESTS:
            try:
                t()
                print("PASS " + t.__name__)
                passed += 1
            except Exception as e:          # a failed check or a broken step
                why = str(e) if isinstance(e, Fail) else "%s: %s" % (type(e).__name__, e)
                print("FAIL %s: %s" % (t.__name__, why.replace("\n", " | ")[:600]))
                if args.v:
                    print(CTX.last)
                failed += 1
            sys.stdout.flush()
    finally:
        shutil.rmtree(CTX.tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
