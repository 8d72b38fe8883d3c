#!/usr/bin/env python3
"""The byte-flip campaign: S5 images with random bytes changed in their
metadata, each mounted, walked and read inside Tempest.

    flip_check.py [--images 1000] [--seed 1] [--per-boot 12] [--machine default]

Each image is a copy of the S5 tool tests' image (tests/unit/s5harness.py:
nested directories, files of every size class with single, double and
triple indirect blocks) with 1 to 8 random bytes flipped in one to three
of its metadata areas: the superblock, the inode list, directory blocks,
indirect blocks and free-list chain blocks.  The images go PER_BOOT to a
boot as virtio disks, and fsprobe= (kern/vfs/fsprobe.c) mounts each one,
walks every directory, reads every byte of every file, writes and removes
a file, and reports.  Every image must end in a report, a failed mount or
a walk with or without errors, with no panic and no hang; the counts of
each are the campaign's result.  The last line:

    flip: N images in B boots: N failed to mount, N mounted with errors, N clean; N bad

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
from fs_check import _good_image, disk_name, make_root_image, PROBE_FAIL_RE, PROBE_OK_RE  # noqa: E402

AREAS = ("super", "ilist", "dirs", "indirect", "freelist")


def metadata_blocks(img):
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


def flip(path, blocks, rnd):
    """Flip 1..8 bytes in one to three areas; returns a description."""
    areas = rnd.sample([a for a in AREAS if blocks[a]], rnd.randint(1, 3))
    done = []
    with open(path, "r+b") as f:
        for area in areas:
            for _ in range(rnd.randint(1, 8)):
                b = rnd.choice(blocks[area])
                off = b * 1024 + (512 + rnd.randrange(512) if area == "super" else rnd.randrange(1024))
                f.seek(off)
                old = f.read(1)[0]
                f.seek(off)
                f.write(bytes([old ^ rnd.randint(1, 255)]))
            done.append(area)
    return "+".join(done)


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


def campaign(n, seed, per_boot, machine, tmp, report=print, boot=tempest.boot):
    """Runs n images; returns (counts dict, [failure lines], boots)."""
    rnd = random.Random(seed)
    ctx = _good_image(tmp)
    blocks = metadata_blocks(ctx.img)
    counts = {"failed": 0, "errors": 0, "clean": 0, "bad": 0}
    failures, boots = [], 0
    for first in range(0, n, per_boot):
        root = make_root_image(tmp, "root.img", "4M")
        images, what = [], []
        for i in range(first, min(n, first + per_boot)):
            path = os.path.join(tmp, "flip%d.img" % (i - first))
            shutil.copyfile(ctx.good, path)
            what.append(flip(path, blocks, rnd))
            images.append(path)
        r, verdicts = boot_group(machine, root, images, boot=boot)
        boots += 1
        panic = tempest.panic_line(r.output)
        for i, ((v, why), areas) in enumerate(zip(verdicts, what)):
            if v is None or panic:
                counts["bad"] += 1
                failures.append("flip: FAIL image %d (seed %d, %s): %s" % (
                    first + i, seed, areas, panic or why))
                report(failures[-1])
            else:
                counts[v] += 1
        if not r.ok and not panic and all(v for v, _ in verdicts):
            failures.append("flip: FAIL boot %d: %s" % (boots, r.status))
            report(failures[-1])
    return counts, failures, boots


def main():
    p = argparse.ArgumentParser(description="Random bytes flipped in S5 metadata; each image "
                                "mounted, walked and read inside Tempest.")
    p.add_argument("--images", type=int, default=1000, help="how many (default 1000)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--per-boot", type=int, default=12, help="images per boot (at most 12)")
    p.add_argument("--machine", default="default")
    args = p.parse_args()
    if not 1 <= args.per_boot <= 12 or args.images < 1:
        print("flip: --per-boot takes 1..12 and --images a positive count", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="flip-", dir=os.environ.get("TMPDIR"))
    try:
        counts, failures, boots = campaign(args.images, args.seed, args.per_boot,
                                           args.machine, tmp)
    except (RuntimeError, OSError, MachineError) as e:
        print("flip: %s" % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("flip: interrupted", file=sys.stderr)
        return 130
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("flip: %d images in %d boots: %d failed to mount, %d mounted with errors, %d clean; "
          "%d bad" % (args.images, boots, counts["failed"], counts["errors"], counts["clean"],
                      counts["bad"]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
