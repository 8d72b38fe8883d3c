"""File-system pieces of make check (used by tests/check.py).

  * Root images: every ktest boot gets a fresh S5 image made by mkfs.s5
    (with a small tree in it) as its first virtio disk, and root=vda.  After
    the machine powers off, fsck.s5 must find the image clean, and the file
    that the fs_persist ktest wrote must read back on the host (s5cat) --
    what the kernel wrote and synced reached the disk.
  * Corrupted images: one boot attaches a clean root and a set of images,
    each broken in one structure by the same corruption functions the
    fsck.s5 tests use (tests/unit/s5_corruption.py), plus random metadata
    damage, and boots with fsprobe=vdb,...: the kernel mounts each one,
    walks and reads everything, writes a file, and reports.  Each case
    names what must happen: the mount fails, or it mounts and the damaged
    operations fail (errors > 0); always without a panic.
"""
import os
import random
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "unit"))
import tempest  # noqa: E402
import s5harness  # noqa: E402
import s5image  # noqa: E402
import s5_corruption  # noqa: E402,F401  (registers the corruption functions)

TOOLS = os.path.join(tempest.BUILD, "tools")
MKFS = os.path.join(TOOLS, "mkfs.s5")
FSCK = os.path.join(TOOLS, "fsck.s5")
S5CAT = os.path.join(TOOLS, "s5cat")

ROOT_SIZE = "16M"
# What fs_persist (kern/tests/test_fs.c) writes: 40 copies of one line.
PERSIST_PATH = "persist/fox.txt"
PERSIST_TEXT = b"tempest persist: the quick brown fox jumps over the lazy dog\n" * 40


def tools_missing():
    return [t for t in (MKFS, FSCK, S5CAT) if not os.access(t, os.X_OK)]


def _run(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    return p.returncode, p.stdout


def make_root_image(tmp, name="root.img", size=ROOT_SIZE):
    """A fresh S5 image holding a small tree (directories, files of
    several sizes); returns its path."""
    src = os.path.join(tmp, name + ".src")
    os.makedirs(os.path.join(src, "etc"), exist_ok=True)
    os.makedirs(os.path.join(src, "dev"), exist_ok=True)        # devfs goes here
    os.makedirs(os.path.join(src, "home", "user"), exist_ok=True)
    with open(os.path.join(src, "etc", "motd"), "w") as f:
        f.write("Welcome to Tempest.\n")
    with open(os.path.join(src, "home", "user", "big"), "wb") as f:
        f.write(bytes(random.Random(7).getrandbits(8) for _ in range(40 * 1024)))
    path = os.path.join(tmp, name)
    rc, out = _run([MKFS, "-d", src, path, size])
    if rc != 0:
        raise RuntimeError("mkfs.s5 failed: %s" % out.decode(errors="replace")[-300:])
    shutil.rmtree(src, ignore_errors=True)
    return path


def fsck_problems(path):
    """[] when fsck.s5 finds the image clean, else its complaints."""
    rc, out = _run([FSCK, path])
    if rc == 0:
        return []
    lines = [l for l in out.decode(errors="replace").splitlines() if l.strip()]
    return ["fsck.s5 exit %d: %s" % (rc, " | ".join(lines[:6]))]


def persist_problems(path):
    """[] when the file fs_persist wrote reads back intact on the host."""
    rc, out = _run([S5CAT, path, "/" + PERSIST_PATH])
    if rc != 0:
        return ["s5cat /%s: exit %d: %s" % (PERSIST_PATH, rc, out[-200:].decode(errors="replace"))]
    if out != PERSIST_TEXT:
        return ["/%s on disk is %d bytes, not the %d written" % (PERSIST_PATH, len(out),
                                                                len(PERSIST_TEXT))]
    return []


# --------------------------------------------------------------------------
# Corrupted images

# (case, expectation): "mount" = the mount must fail; "ops" = it mounts and
# at least one walk/read/write operation fails; "fail" = either.  The cases are the fsck.s5
# corruption functions of tests/unit/s5_corruption.py.
CORRUPTION_CASES = (
    ("bad_magic", "mount"),
    ("bad_type", "mount"),
    ("isize_not_below_fsize", "mount"),
    ("isize_zero", "mount"),
    ("fsize_past_image", "mount"),
    ("truncated_image", "mount"),
    ("nfree_too_big", "mount"),
    ("root_not_dir", "fail"),
    ("block_past_end", "ops"),
    ("indirect_entry_past_end", "ops"),
    ("indirect_block_past_end", "ops"),
    ("dirent_past_inode_list", "ops"),
    ("chain_nfree_too_big", "ops"),
    ("free_entry_out_of_range", "ops"),
)
FUZZ_SEEDS = (1, 2, 3, 4)


def _good_image(tmp):
    """The fsck tests' good image (their tree, 2 MiB) and its reader."""
    ctx = s5harness.CTX
    ctx.tmp = tmp
    ctx.mkfs, ctx.fsck = MKFS, FSCK
    ctx.src = os.path.join(tmp, "good.src")
    s5harness.write_tree(ctx.src)
    ctx.good = os.path.join(tmp, "good.img")
    env = dict(os.environ, SOURCE_DATE_EPOCH="1000000000")
    p = subprocess.run([MKFS, "-d", ctx.src, ctx.good, "2M"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, env=env, timeout=120)
    if p.returncode != 0:
        raise RuntimeError("mkfs.s5 of the good image failed")
    with open(ctx.good, "rb") as f:
        ctx.img = s5image.Image(f.read())
    return ctx


def _fuzz(path, img, seed):
    """Flip random bytes in the superblock, the inode list and the first
    directory blocks."""
    rnd = random.Random(seed)
    with open(path, "r+b") as f:
        for _ in range(24):
            area = rnd.choice(("sb", "ilist", "data"))
            if area == "sb":
                off = s5image.SB + rnd.randrange(512)
            elif area == "ilist":
                off = 2 * s5image.BSIZE + rnd.randrange((img.isize - 2) * s5image.BSIZE)
            else:
                off = img.isize * s5image.BSIZE + rnd.randrange(16 * s5image.BSIZE)
            f.seek(off)
            f.write(bytes([rnd.randrange(256)]))


def corrupted_images(tmp):
    """[(case, expectation, path)]: a clean control first, then every
    corruption case, then the fuzzed images."""
    ctx = _good_image(tmp)
    out = [("clean", "clean", ctx.good)]
    for case, expect in CORRUPTION_CASES:
        fn = s5harness.CORRUPTIONS[case]
        path = os.path.join(tmp, case + ".img")
        shutil.copyfile(ctx.good, path)
        fn(path, ctx.img)
        out.append((case, expect, path))
    for seed in FUZZ_SEEDS:
        path = os.path.join(tmp, "fuzz%d.img" % seed)
        shutil.copyfile(ctx.good, path)
        _fuzz(path, ctx.img, seed)
        out.append(("fuzz%d" % seed, "any", path))
    return out


def disk_name(i):
    """The kernel's name of the i-th virtio disk: vda, vdb, ..."""
    return "vd" + chr(ord("a") + i)


PROBE_FAIL_RE = r"^fsprobe %s: mount failed errno (\d+)\s*$"
PROBE_OK_RE = (r"^fsprobe %s: mounted files=(\d+) dirs=(\d+) bytes=(\d+) errors=(\d+) "
               r"unmount=(\d+)\s*$")


def judge_probe(output, case, expect, disk):
    """Problems (strings) with what fsprobe reported for one disk."""
    fail = re.search(PROBE_FAIL_RE % disk, output, re.M)
    ok = re.search(PROBE_OK_RE % disk, output, re.M)
    if not fail and not ok:
        return ["no fsprobe line for %s (%s)" % (disk, case)]
    if expect == "mount":
        return [] if fail else ["%s (%s) mounted; the mount should fail" % (disk, case)]
    if fail and int(fail.group(1)) == 6:
        return ["%s (%s): the kernel has no such disk (ENXIO)" % (disk, case)]
    if expect == "any" or (expect == "fail" and fail):
        return []
    if fail:
        return ["%s (%s) failed to mount (errno %s); it should mount" % (disk, case, fail.group(1))]
    files, dirs, _, errors, unmount = (int(x) for x in ok.groups())
    if expect == "clean":
        p = []
        if errors:
            p.append("%s (clean) had %d errors" % (disk, errors))
        if files < 10 or dirs < 4:
            p.append("%s (clean): walked only %d files and %d dirs" % (disk, files, dirs))
        if unmount:
            p.append("%s (clean): unmount errno %d" % (disk, unmount))
        return p
    return [] if errors else ["%s (%s): no operation failed" % (disk, case)]
