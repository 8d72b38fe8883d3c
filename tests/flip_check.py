#!/usr/bin/env python3
"""The byte-flip campaign: S5 or UFS images with random bytes changed in
their metadata, each mounted, walked and read inside Tempest.

    flip_check.py [--fs s5|ufs] [--images 1000] [--seed 1] [--per-boot 12]
                  [--machine default] [--timeout 600] [--keep DIR]

An S5 image is a copy of the S5 tool tests' image (tests/unit/s5harness.py:
nested directories, files of every size class with single, double and
triple indirect blocks) with 1 to 8 random bytes flipped in one to three
of its metadata areas: the superblock, the inode list, directory blocks,
indirect blocks and free-list chain blocks.  A UFS image is a mkfs.ufs
copy of the UFS tool tests' tree (tests/unit/test_ufstools.py, without its
17 MiB file) with bytes flipped the same way in the superblock, the
cylinder group blocks, the summary area, the allocated inodes, directory
chunks and indirect blocks.  The images go PER_BOOT to a
boot as virtio disks, and fsprobe= (kern/vfs/fsprobe.c) mounts each one,
walks every directory, reads every byte of every file, writes and removes
a file, and reports.  Every image must end in a report, a failed mount or
a walk with or without errors, with no panic and no hang; the counts of
each are the campaign's result.  The last line:

    flip: FS N images in B boots: N failed to mount, N mounted with errors, N clean; N bad

where the bad ones (no report, a panic, a hang) are each a line "flip:
FAIL ...".  make check runs one boot of a few images (rel_check.py).
"""

import argparse
import os
import random
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "unit"))
import tempest  # noqa: E402
from machines import MachineError  # noqa: E402
import s5image  # noqa: E402
import ufsimage  # noqa: E402
from fs_check import (_good_image, disk_name, make_root_image, ufs_good_image,  # noqa: E402
                      PROBE_FAIL_RE, PROBE_OK_RE)


def s5_metadata(img):
    """{area: [(byte offset, length)]} of an S5 image's metadata."""
    blocks = s5_metadata_blocks(img)
    return {area: [(b * 1024 + 512, 512) if area == "super" else (b * 1024, 1024)
                   for b in bs] for area, bs in blocks.items()}


def ufs_metadata(img):
    """{area: [(byte offset, length)]} of a UFS image's metadata."""
    inos = [i for i in range(ufsimage.ROOTINO, img.ncg * img.ipg) if img.inode(i)["mode"]]
    dirs, indirect = [], []
    for ino in inos:
        di = img.inode(ino)
        if di["mode"] & ufsimage.IFMT == ufsimage.IFDIR:
            for off in range(0, di["size"], 512):
                addr = img.bmap(di, off // img.bsize)
                if addr:
                    dirs.append((addr * img.fsize + off % img.bsize, 512))
        if di["blocks"]:                # a short symbolic link's target is no pointer
            indirect += [(a * img.fsize, img.bsize) for a in di["ib"] if a > 0]
    return {"super": [(ufsimage.SBOFF, 1376)],
            "groups": [(img.cg_offset(c), img.cgsize) for c in range(img.ncg)],
            "summary": [(img.csaddr * img.fsize, img.cssize)],
            "inodes": [(img.ipos(i), 128) for i in inos],
            "dirs": dirs, "indirect": indirect}


def s5_metadata_blocks(img):
    """{area: [block numbers]} of the image's metadata."""
    inodes = [img.inode(i) for i in range(1, img.ninodes + 1)]
    dirs, indirect = [], []
    for di in inodes:
        kind = di["mode"] & s5image.IFMT
        if kind == s5image.IFDIR:
            dirs += [img.bmap(di, lbn) for lbn in range((di["size"] + 1023) // 1024)]
        if kind in (s5image.IFREG, s5image.IFDIR, s5image.IFLNK):
            indirect += [b for b in di["addr"][10:13] if b]
    for b in list(indirect):   # the second level under double and triple
        indirect += [x for x in s5image.struct.unpack_from("<256I", img.data, b * 1024)
                     if 0 < x < img.fsize][:4]
    chain, lst0, seen = [], img.free[0] if img.nfree else 0, set()
    while lst0 and lst0 not in seen and len(chain) < 64:
        seen.add(lst0)
        chain.append(lst0)
        lst0 = s5image.struct.unpack_from("<I", img.data, lst0 * 1024 + 4)[0]
    return {"super": [0], "ilist": list(range(2, img.isize)), "dirs": [b for b in dirs if b],
            "indirect": indirect, "freelist": chain}


def flip(path, areas_of, rnd):
    """Flip 1..8 bytes in one to three areas; returns a description."""
    areas = rnd.sample(sorted(a for a in areas_of if areas_of[a]), rnd.randint(1, 3))
    done = []
    with open(path, "r+b") as f:
        for area in areas:
            for _ in range(rnd.randint(1, 8)):
                base, length = rnd.choice(areas_of[area])
                off = base + rnd.randrange(length)
                f.seek(off)
                old = f.read(1)[0]
                f.seek(off)
                f.write(bytes([old ^ rnd.randint(1, 255)]))
            done.append(area)
    return "+".join(done)


def good_image(fs, tmp):
    """(path, {area: [(offset, length)]}) of the image every flip copies."""
    if fs == "ufs":
        path, img = ufs_good_image(tmp)
        return path, ufs_metadata(img)
    ctx = _good_image(tmp)
    return ctx.good, s5_metadata(ctx.img)


def judge(output, disk):
    """("failed" | "errors" | "clean" | None) for one disk's fsprobe report."""
    if re.search(PROBE_FAIL_RE % disk, output, re.M):
        return "failed"
    m = re.search(PROBE_OK_RE % disk, output, re.M)
    if not m:
        return None
    return "errors" if int(m.group(4)) else "clean"


def boot_group(machine, root, images, timeout=600, keep=None, boot=tempest.boot):
    """Boot with images as vdb...; [(verdict or None, why)] per image, and the boot."""
    disks = [disk_name(i + 1) for i in range(len(images))]
    r = boot(machine, "root=vda fsprobe=%s poweroff" % ",".join(disks), timeout=timeout,
                     disk_images=[root] + list(images), disks=(), keep=keep)
    out = []
    for d in disks:
        v = judge(r.output, d)
        out.append((v, "" if v else "no fsprobe report for %s (%s)" % (d, r.status)))
    return r, out


def campaign(n, seed, per_boot, machine, tmp, report=print, boot=tempest.boot, fs="s5",
             timeout=600, keep=None):
    """Runs n images of fs; returns (counts dict, [failure lines], boots).
    keep: a directory for each boot's console (boot N in keep/bootN)."""
    rnd = random.Random(seed)
    good, areas_of = good_image(fs, tmp)
    counts = {"failed": 0, "errors": 0, "clean": 0, "bad": 0}
    failures, boots = [], 0
    for first in range(0, n, per_boot):
        root = make_root_image(tmp, "root.img", "4M")
        images, what = [], []
        for i in range(first, min(n, first + per_boot)):
            path = os.path.join(tmp, "flip%d.img" % (i - first))
            shutil.copyfile(good, path)
            what.append(flip(path, areas_of, rnd))
            images.append(path)
        r, verdicts = boot_group(machine, root, images, boot=boot, timeout=timeout,
                                 keep=keep and os.path.join(keep, "boot%d" % (boots + 1)))
        boots += 1
        panic = tempest.panic_line(r.output)
        for i, ((v, why), areas) in enumerate(zip(verdicts, what)):
            if v is None or panic:
                counts["bad"] += 1
                failures.append("flip: FAIL %s image %d (seed %d, %s): %s" % (
                    fs, first + i, seed, areas, panic or why))
                report(failures[-1])
            else:
                counts[v] += 1
        if not r.ok and not panic and all(v for v, _ in verdicts):
            failures.append("flip: FAIL boot %d: %s" % (boots, r.status))
            report(failures[-1])
    return counts, failures, boots


def main():
    p = argparse.ArgumentParser(description="Random bytes flipped in S5 or UFS metadata; each "
                                "image mounted, walked and read inside Tempest.")
    p.add_argument("--fs", default="s5", choices=("s5", "ufs"))
    p.add_argument("--images", type=int, default=1000, help="how many (default 1000)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--per-boot", type=int, default=12, help="images per boot (at most 12)")
    p.add_argument("--machine", default="default")
    p.add_argument("--timeout", type=int, default=600, help="seconds per boot (default 600)")
    p.add_argument("--keep", help="a directory for every boot's console")
    args = p.parse_args()
    if not 1 <= args.per_boot <= 12 or args.images < 1:
        print("flip: --per-boot takes 1..12 and --images a positive count", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="flip-", dir=os.environ.get("TMPDIR"))
    try:
        counts, failures, boots = campaign(args.images, args.seed, args.per_boot,
                                           args.machine, tmp, fs=args.fs,
                                           timeout=args.timeout, keep=args.keep)
    except (RuntimeError, OSError, MachineError) as e:
        print("flip: %s" % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("flip: interrupted", file=sys.stderr)
        return 130
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("flip: %s %d images in %d boots: %d failed to mount, %d mounted with errors, "
          "%d clean; %d bad" % (args.fs, args.images, boots, counts["failed"], counts["errors"], counts["clean"],
                      counts["bad"]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
