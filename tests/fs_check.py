"""File-system pieces and jobs of make check (used by tests/check.py).

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

The jobs: fs/matrix/cache=C,lock=L (the file-system ktests under the
cache x lock pairings the ktest jobs leave out), fs/ufs/cache=C,lock=L
(the fs ktests on a UFS root, one boot per cache model), fs/corrupt/..., the
root= failures fs/rootfail/..., and kbench/fs.
"""
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "unit"))
import tempest  # noqa: E402
import s5harness  # noqa: E402
import s5image  # noqa: E402
import ufsimage  # noqa: E402
import s5_corruption  # noqa: E402,F401  (registers the corruption functions)
from checklib import T_KTEST, T_TOPOLOGY, budget_gone, ktest_results, fail_reason  # noqa: E402

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
# at least one walk/read/write operation fails; "fail" = either;
# "repaired" (REPAIRED_CASES, after fsck.s5 -y) = it mounts and walks
# with no error.  The cases are the fsck.s5
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
# Cases repaired by fsck.s5 -y before the boot: each must then mount and
# walk with no error ("repaired").
REPAIRED_CASES = ("duplicate_block", "unreachable_subtree", "dir_size_past_blocks",
                  "root_not_dir", "chain_nfree_too_big")


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
    for case in REPAIRED_CASES:
        path = os.path.join(tmp, "fixed_" + case + ".img")
        shutil.copyfile(ctx.good, path)
        s5harness.CORRUPTIONS[case](path, ctx.img)
        rc, _ = _run([FSCK, "-y", path])
        if rc != 1:
            raise RuntimeError("fsck.s5 -y of %s: exit %d" % (case, rc))
        out.append(("repaired_" + case, "repaired", path))
    for seed in FUZZ_SEEDS:
        path = os.path.join(tmp, "fuzz%d.img" % seed)
        shutil.copyfile(ctx.good, path)
        _fuzz(path, ctx.img, seed)
        out.append(("fuzz%d" % seed, "any", path))
    return out


# UFS: (case, expectation), the cases fsck.ufs's corruption matrix makes
# (tests/unit/test_ufstools.py), applied to a mkfs.ufs image of its tree
# (without its 17 MiB file).  What a walk cannot see (counts, maps, link
# counts, types) the kernel need only survive ("any").
UFS_CORRUPTION_CASES = {
    "bad_magic": "mount", "bad_bsize": "mount", "size_past_image": "mount",
    "root_not_dir": "fail", "block_outside": "ops", "reclen": "ops",
    "slash_in_name": "ops", "entry_to_free_inode": "ops", "block_misaligned": "ops",
}
UFS_FUZZ_SEEDS = (11, 12, 13)
# Cases repaired by fsck.ufs -y before the boot: each must then mount and
# walk with no error ("repaired").
UFS_REPAIRED_CASES = ("block_twice", "block_outside", "reclen", "slash_in_name",
                      "dir_hard_link", "root_not_dir", "unreachable", "entry_to_free_inode",
                      "cg_magic", "inode_map")
# Randomly damaged UFS images (_ufs_fuzz) repaired by fsck.ufs -y: "repaired".
UFS_REPAIRED_FUZZ_SEEDS = (21, 22)


def _ufs_fuzz(path, img, seed):
    """Flip random bytes in the superblock, group 0's block, the first inode
    blocks and the root directory."""
    rnd = random.Random(seed)
    areas = [(ufsimage.SBOFF, 1376), (img.cg_offset(0), img.cgsize), (img.ipos(0), 4 * img.bsize),
             (img.inode(ufsimage.ROOTINO)["db"][0] * img.fsize, 512)]
    with open(path, "r+b") as f:
        for _ in range(12):
            base, length = rnd.choice(areas)
            f.seek(base + rnd.randrange(length))
            f.write(bytes([rnd.randrange(256)]))


def ufs_good_image(tmp):
    """A mkfs.ufs image of fsck.ufs's test tree (tests/unit/test_ufstools.py)
    without its 17 MiB file: its path and its reader."""
    import test_ufstools as tu
    src = os.path.join(tmp, "ufs.src")
    tu.write_tree(src)
    os.remove(os.path.join(src, "big"))
    os.remove(os.path.join(src, "deep", "d0", "big.link"))
    good = os.path.join(tmp, "ufs-good.img")
    rc, out = _run([MKFS_UFS, "-d", src, good, "6M"])
    if rc != 0:
        raise RuntimeError("mkfs.ufs of the good image failed: %s" % out[-200:])
    with open(good, "rb") as f:
        return good, ufsimage.Image(f.read())


def ufs_corrupted_images(tmp):
    """[(case, expectation, path)] for UFS: a clean control, every case of
    fsck.ufs's matrix, some of them repaired by fsck.ufs -y, fuzzed copies."""
    import test_ufstools as tu
    good, tu.CTX.img = ufs_good_image(tmp)
    out = [("ufs-clean", "clean", good)]
    for case, _, fn in tu.CORRUPTIONS:
        path = os.path.join(tmp, "ufs-%s.img" % case)
        shutil.copyfile(good, path)
        fn(path)
        out.append(("ufs-" + case, UFS_CORRUPTION_CASES.get(case, "any"), path))
    fns = {case: fn for case, _, fn in tu.CORRUPTIONS}
    for case in UFS_REPAIRED_CASES:
        path = os.path.join(tmp, "ufs-fixed_%s.img" % case)
        shutil.copyfile(good, path)
        fns[case](path)
        rc, _ = _run([FSCK_UFS, "-y", path])
        if rc != 1:
            raise RuntimeError("fsck.ufs -y of %s: exit %d" % (case, rc))
        out.append(("ufs-repaired_" + case, "repaired", path))
    for seed in UFS_FUZZ_SEEDS:
        path = os.path.join(tmp, "ufs-fuzz%d.img" % seed)
        shutil.copyfile(good, path)
        _ufs_fuzz(path, tu.CTX.img, seed)
        out.append(("ufs-fuzz%d" % seed, "any", path))
    for seed in UFS_REPAIRED_FUZZ_SEEDS:
        path = os.path.join(tmp, "ufs-fixed_fuzz%d.img" % seed)
        shutil.copyfile(good, path)
        _ufs_fuzz(path, tu.CTX.img, seed)
        rc, _ = _run([FSCK_UFS, "-y", path])
        if rc not in (0, 1):
            raise RuntimeError("fsck.ufs -y of fuzz seed %d: exit %d" % (seed, rc))
        out.append(("ufs-repaired_fuzz%d" % seed, "repaired", path))
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
    if expect == "repaired":
        if fail:
            return ["%s (%s): a repaired image failed to mount (errno %s)"
                    % (disk, case, fail.group(1))]
        errors, unmount = int(ok.group(4)), int(ok.group(5))
        return ["%s (%s): %d errors walking the repaired image" % (disk, case, errors)] \
            if errors or unmount else []
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


# --------------------------------------------------------------------------
# Jobs

CACHE_MODELS = ("single", "hashfree", "ssac")
LOCK_ALGOS = ("spin", "mcs", "h2mcs")
# The file-system ktests (buffer cache, DNLC, VFS, S5, the suite on the root, segmap).
FS_KTESTS = "buf_*,dnlc_*,vfs_*,s5_*,fs_*,segmap_*"
FSBENCH_RE = re.compile(r"^fsbench cache=(\S+) cpus=(\d+) seconds=\S+ ops=(\d+) "
                        r"ops_per_sec=(\d+) errors=(\d+)\s*$", re.M)


def fs_boot(ctx, job, machine, opts, limit, persist=True, extra_images=(), **kw):
    """Boot with a fresh S5 root image (mkfs.s5) as vda and root=vda; after
    power-off the image must pass fsck.s5 and, when persist, hold the file
    the fs_persist ktest wrote.  Returns (BootResult or None, problems)."""
    tmp = tempfile.mkdtemp(prefix="tempest-fs-")
    try:
        img = make_root_image(tmp)
        r = ctx.boot(job, machine, opts + " root=vda", limit,
                     disk_images=[img] + list(extra_images), **kw)
        if r is None:
            return None, []
        problems = fsck_problems(img)
        if persist:
            problems += persist_problems(img)
        return r, problems
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def make_fs_matrix_job(cache, lock):
    """The file-system ktests under one cache= model and lock= algorithm
    on default, and fsck of the root image afterwards."""
    def job(ctx):
        name = "fs/matrix/cache=%s,lock=%s" % (cache, lock)
        r, fsp = fs_boot(ctx, name, "default", "ktest=%s poweroff cache=%s lock=%s"
                         % (FS_KTESTS, cache, lock), T_KTEST)
        if r is None:
            return budget_gone(ctx, [name, name + "/fsck"])
        ktest_results(ctx, name, r, individual=False)
        ctx.results.add(name + "/fsck", r.ok and not fsp, fail_reason(r, fsp))
    return job


# --------------------------------------------------------------------------
# The file-system ktests on a UFS root

MKFS_UFS = os.path.join(TOOLS, "mkfs.ufs")
FSCK_UFS = os.path.join(TOOLS, "fsck.ufs")
# One boot per cache model, each with another lock algorithm: the fs_*
# ktests (fs_mp among them, on every CPU) on a root made by mkfs.ufs.
UFS_MATRIX = [("single", "mcs"), ("hashfree", "h2mcs"), ("ssac", "spin")]


def ufs_root_problems(path):
    """fsck.ufs clean, and fs_persist's file read back by the host reader."""
    rc, out = _run([FSCK_UFS, path])
    if rc != 0:
        lines = [l for l in out.decode(errors="replace").splitlines() if l.strip()]
        return ["fsck.ufs exit %d: %s" % (rc, " | ".join(lines[:6]))]
    with open(path, "rb") as f:
        img = ufsimage.Image(f.read())
    ino = img.namei("/" + PERSIST_PATH)
    got = img.read(ino) if ino else None
    if got != PERSIST_TEXT:
        return ["/%s on disk is %s, not the %d bytes written" % (
            PERSIST_PATH, "missing" if got is None else "%d bytes" % len(got), len(PERSIST_TEXT))]
    return []


def make_ufs_matrix_job(cache, lock):
    """The fs ktests on a fresh UFS root under one cache= and lock=; the
    image must be clean by fsck.ufs afterwards."""
    def job(ctx):
        name = "fs/ufs/cache=%s,lock=%s" % (cache, lock)
        tmp = tempfile.mkdtemp(prefix="tempest-ufs-")
        try:
            src = os.path.join(tmp, "src")
            for d in ("etc", "dev", "home/user"):
                os.makedirs(os.path.join(src, d))
            with open(os.path.join(src, "etc", "motd"), "w") as f:
                f.write("Welcome to Tempest on UFS.\n")
            img = os.path.join(tmp, "root.img")
            rc, out = _run([MKFS_UFS, "-d", src, img, ROOT_SIZE])
            if rc != 0:
                ctx.results.add(name, False, "mkfs.ufs: %s" % out.decode(errors="replace")[-200:])
                return
            r = ctx.boot(name, "default", "ktest=fs_* poweroff cache=%s lock=%s root=vda"
                         % (cache, lock), T_KTEST, disk_images=[img])
            if r is None:
                return budget_gone(ctx, [name, name + "/fsck"])
            ktest_results(ctx, name, r, individual=False)
            fsp = ufs_root_problems(img)
            ctx.results.add(name + "/fsck", r.ok and not fsp, fail_reason(r, fsp))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return job


# The kernel takes 16 virtio disks; the root is one of them.
FS_PROBE_DISKS_PER_BOOT = 12


def job_fs_corrupt(ctx):
    """Corrupted S5 and UFS images (corrupted_images and ufs_corrupted_images
    above): each one fails to mount, or
    mounts and fails the damaged operations; a clean control walks with no
    error; the kernel never panics, and the root stays clean.  The images
    go FS_PROBE_DISKS_PER_BOOT to a boot."""
    tmp = tempfile.mkdtemp(prefix="tempest-corrupt-")
    try:
        cases = corrupted_images(tmp) + ufs_corrupted_images(tmp)
        n = FS_PROBE_DISKS_PER_BOOT
        for part, first in enumerate(range(0, len(cases), n)):
            _fs_probe_boot(ctx, "fs/corrupt/%d" % (part + 1), cases[first:first + n])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _fs_probe_boot(ctx, name, cases):
    disks = [disk_name(i + 1) for i in range(len(cases))]
    r, fsp = fs_boot(ctx, name, "default", "fsprobe=%s poweroff" % ",".join(disks),
                     T_KTEST, persist=False, extra_images=[c[2] for c in cases], disks=())
    names = ["fs/corrupt/" + c[0] for c in cases]
    if r is None:
        return budget_gone(ctx, names + [name])
    for (case, expect, _), disk, n in zip(cases, disks, names):
        p = judge_probe(r.output, case, expect, disk)
        ctx.results.add(n, r.ok and not p, fail_reason(r, p))
    ctx.results.add(name, r.ok and not fsp, fail_reason(r, fsp))


def job_fs_rootfail(ctx):
    """root= naming a corrupted image, and a disk that does not exist: the
    kernel says why it has no root and carries on (the suite then fails
    its root tests by name, which is not judged here)."""
    tmp = tempfile.mkdtemp(prefix="tempest-rootfail-")
    try:
        bad = os.path.join(tmp, "bad.img")
        make_root_image(tmp, "bad.img", "2M")
        with open(bad, "r+b") as f:
            f.seek(s5image.SB + s5image.O_MAGIC)
            f.write(b"\0\0\0\0")       # s_magic
        for case, opts, kw in (("badmagic", "root=vda poweroff", {"disk_images": [bad]}),
                               ("nodisk", "root=vdq poweroff", {})):
            name = "fs/rootfail/" + case
            r = ctx.boot(name, "up", opts, T_TOPOLOGY, disks=(), **kw)
            if r is None:
                return budget_gone(ctx, [name])
            p = []
            if not re.search(r"^vfs: cannot mount root vd[aq]: .+", r.output, re.M):
                p.append("no 'vfs: cannot mount root vdX: reason' line")
            ctx.results.add(name, r.ok and not p, fail_reason(r, p))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


SEGBENCH_RE = re.compile(r"^segbench cache=\S+ cpus=(\d+) seconds=\S+ ops=(\d+) "
                         r"ops_per_sec=\d+ errors=(\d+)\s*$", re.M)


def segbench_problems(output):
    """kbench=segmap: a line per CPU count, each with operations and no
    errors, and segmap classes with hits."""
    runs = SEGBENCH_RE.findall(output)
    p = [] if runs else ["no 'segbench cache=... ops_per_sec=N errors=N' line"]
    for cpus, ops, errors in runs:
        if int(ops) == 0 or int(errors):
            p.append("segbench cpus=%s: %s operations, %s errors" % (cpus, ops, errors))
    if not re.search(r"^segbench class segmap_\S+ hits=[1-9]", output, re.M):
        p.append("no segmap class with hits")
    return p


def job_kbench_fs(ctx):
    """kbench=fs and kbench=segmap print their figures (not judged) without
    errors."""
    name = "kbench/fs"
    r, fsp = fs_boot(ctx, name, "default", "kbench=fs,segmap poweroff", T_KTEST, persist=False)
    if r is None:
        return budget_gone(ctx, [name])
    p = list(fsp)
    m = FSBENCH_RE.search(r.output)
    if not m:
        p.append("no 'fsbench cache=... ops_per_sec=N errors=N' line")
    else:
        if int(m.group(3)) == 0:
            p.append("fsbench did no operations")
        if int(m.group(5)):
            p.append("fsbench: %s errors" % m.group(5))
    if not re.search(r"^fsbench class (buf|dnlc)_\S+ hits=[1-9]", r.output, re.M):
        p.append("no buffer-cache or DNLC class with hits")
    p += segbench_problems(r.output)
    ctx.results.add(name, r.ok and not p, fail_reason(r, p))
