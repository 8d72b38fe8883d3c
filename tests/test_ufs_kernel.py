#!/usr/bin/env python3
"""Tempest's kernel UFS judged by other systems' images: NetBSD's makefs
(Debian's makefs package, `makefs -t ffs -o version=1`) and mkfs.ufs build
UFS1 images of one host tree in several geometries; Tempest boots once with
all of them attached, mounts each with `mount -t ufs` and lists it, for
make check.

    python3 tests/test_ufs_kernel.py [-v] [--machine default] [--keep DIR]

The tree (tests/test_fs_peer.py's write_ufs_tree) has files of sizes around
the fragment and block sizes, a file through the double indirect blocks,
deep and wide directories, hard links, a short and a long symbolic link, a
255-byte name, a FIFO and a character device.  Every listing (type, size,
permissions, link count, owner, each file's md5, each link's target, a
device's numbers) must equal the host tree; inode numbers, sizes and times
must be what tests/unit/ufsimage.py reads from the image; hard links share
an inode.  Damaged copies (bad magic, impossible block size, a group count
past the disk, a root inode that is not a directory) must fail to mount
with the kernel's reason on the console, and the kernel must not panic.
After the boot fsck.ufs must find every image clean.

Prints PASS/FAIL lines, then "N passed, N failed"; exits non-zero on
failure.
"""

import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "unit"))
import tempest         # noqa: E402
from fspeer_model import manifest_script, parse_manifest  # noqa: E402
from test_fs_peer import (Results, write_ufs_tree, tree_listing, tree_link_groups,  # noqa: E402
                          ufs_host_view, listing_problems, build_userland)

BUILD = os.path.join(ROOT, "build")
MKROOT = os.path.join(ROOT, "tools", "mkroot.py")
MKFS_UFS = os.path.join(BUILD, "tools", "mkfs.ufs")
FSCK_UFS = os.path.join(BUILD, "tools", "fsck.ufs")
MAKEFS = shutil.which("makefs") or "/usr/sbin/makefs"
INIT = os.path.join(BUILD, "userland", "init")
BOOT_TIMEOUT = 300
UFS_STATFS_MAGIC = 0x00011954

# The images: (name, command line given the tree and the image's path).
IMAGES = [
    ("mk8k", lambda src, img: [MKFS_UFS, "-d", src, img, "40M"]),
    ("mk4k", lambda src, img: [MKFS_UFS, "-d", src, "-b", "4096", "-f", "512", img, "40M"]),
    ("nb8k", lambda src, img: [MAKEFS, "-t", "ffs", "-o", "version=1", "-s", "40m", img, src]),
    ("nb16k", lambda src, img: [MAKEFS, "-t", "ffs", "-o", "version=1,bsize=16384,fsize=2048",
                                "-s", "40m", img, src]),
    ("nbgroups", lambda src, img: [MAKEFS, "-t", "ffs", "-o",
                                   "version=1,maxbpcg=600,density=8192", "-s", "39m", img, src]),
]

# Damaged copies of the first image: (name, the patches given the image's
# bytes as [(byte offset, bytes)], what the kernel's message must say).
SB = 8192


def root_inode_byte(data):
    """Where inode 2 lies (group 0's inode blocks, slot 2)."""
    iblkno, fsize = struct.unpack_from("<i", data, SB + 16)[0], struct.unpack_from("<i", data, SB + 52)[0]
    return iblkno * fsize + 2 * 128


DAMAGE = [
    ("badmagic", lambda d: [(SB + 1372, struct.pack("<i", 0x1234))],
     "cannot mount: bad magic number"),
    ("badbsize", lambda d: [(SB + 48, struct.pack("<i", 12345))],
     "cannot mount: impossible block size"),
    ("badncg", lambda d: [(SB + 44, struct.pack("<i", 5000))],
     "cannot mount: fs_size does not match"),
    ("rootfile", lambda d: [(root_inode_byte(d), struct.pack("<H", 0o100644))],
     "root inode 2 is not a directory"),
]


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return p.returncode, p.stdout.decode(errors="replace")


def make_images(res, src, tmp):
    """The good images, then the damaged copies; [(name, path)] of each."""
    good, problems = [], []
    for name, cmd in IMAGES:
        path = os.path.join(tmp, name + ".img")
        rc, out = run(cmd(src, path))
        if rc != 0:
            problems.append("%s: %s" % (name, out[-300:]))
        else:
            good.append((name, path))
    res.add("ufs/images", problems)
    bad = []
    if good:
        for name, patches, _ in DAMAGE:
            path = os.path.join(tmp, name + ".img")
            shutil.copy(good[0][1], path)
            with open(path, "r+b") as f:
                for off, data in patches(f.read()):
                    f.seek(off)
                    f.write(data)
            bad.append((name, path))
    return good, bad


def step_script(good, bad):
    """What init runs: mount each image, list it, try a write, unmount."""
    lines = ["umask 022"]
    disk = 1
    for name, _ in good:
        dev = "/dev/vd" + chr(ord("a") + disk)
        disk += 1
        lines += ["mkdir -p /mnt/%s" % name,
                  "mount -t ufs -o ro %s /mnt/%s || echo 'ufs-mount-failed %s'" % (dev, name, name),
                  "stat -f -c 'ufs-statfs-%s %%t %%b %%f %%l' /mnt/%s" % (name, name)]
    lines.append("cd /mnt")
    for name, _ in good:
        lines.append(manifest_script("ufs-" + name, [name]))
        lines.append("touch %s/newfile 2>/dev/null && echo 'ufs-wrote %s'" % (name, name))
    lines.append("cd /")
    for name, _ in good:
        lines.append("umount /mnt/%s || echo 'ufs-umount-failed %s'" % (name, name))
    for name, _ in bad:
        dev = "/dev/vd" + chr(ord("a") + disk)
        disk += 1
        lines += ["mkdir -p /mnt/%s" % name,
                  "mount -t ufs -o ro %s /mnt/%s && echo 'ufs-bad-mounted %s'" % (dev, name, name)]
    lines.append("echo ufs-step-done")
    return "\n".join(lines) + "\n"


def judge_good(res, src, name, path, out):
    problems = []
    if "ufs-mount-failed %s" % name in out:
        problems.append("mount failed")
    m = re.search(r"^ufs-statfs-%s (\w+) (\d+) (\d+) (\d+)\s*$" % name, out, re.M)
    if not m or int(m.group(1), 16) != UFS_STATFS_MAGIC or int(m.group(4)) != 255:
        problems.append("statfs: %s" % (m.group(0) if m else "not printed"))
    if "ufs-wrote %s" % name in out:
        problems.append("a file was created on a read-only mount")
    if "ufs-umount-failed %s" % name in out:
        problems.append("umount failed")
    got = parse_manifest(out, "ufs-" + name)
    problems += listing_problems(got, (tree_listing(src, name), tree_link_groups(src, name)),
                                 ufs_host_view(path, name))
    res.add("ufs/tempest-reads-%s" % name, problems)
    rc, fsck = run([FSCK_UFS, path])
    res.add("ufs/tempest-reads-%s/fsck" % name, [] if rc == 0 else ["fsck.ufs: " + fsck[-300:]])


def judge_bad(res, name, out):
    why = next(w for n, _, w in DAMAGE if n == name)
    problems = []
    if "ufs-bad-mounted %s" % name in out:
        problems.append("the damaged image mounted")
    if not re.search(r"^ufs: vd\w: .*%s" % re.escape(why), out, re.M):
        problems.append("no '%s' message" % why)
    res.add("ufs/refuses-%s" % name, problems)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--machine", default="default", help="Tempest's preset (default: default)")
    p.add_argument("--keep", help="keep the boot's console here")
    p.add_argument("-v", "--verbose", action="store_true", help="print the console tail of a failed boot")
    args = p.parse_args(argv)
    res = Results()
    if not os.path.exists(INIT):
        build_userland()
    missing = [x for x in (MKFS_UFS, FSCK_UFS, MAKEFS, INIT, tempest.KERNEL) if not os.path.exists(x)]
    if missing:
        res.add("ufs/setup", ["missing: %s (make, make tools, tools/install-deps.sh)"
                              % ", ".join(missing)])
        print("%d passed, %d failed" % (res.passed, res.failed))
        return 1
    tmp = tempfile.mkdtemp(prefix="ufs-kernel-", dir=BUILD)
    try:
        src = os.path.join(tmp, "tree")
        write_ufs_tree(src)
        good, bad = make_images(res, src, tmp)
        add = os.path.join(tmp, "add")
        os.makedirs(add)
        with open(os.path.join(add, "step.sh"), "w") as f:
            f.write(step_script(good, bad))
        rootimg = os.path.join(tmp, "root.img")
        rc, out = run([sys.executable, MKROOT, rootimg, "--free", "4M", "--init", INIT,
                       "--add", add, "--run", "sh /add/step.sh"])
        if rc != 0:
            res.add("ufs/setup", ["mkroot: " + out[-300:]])
        else:
            r = tempest.boot(args.machine, "root=vda poweroff", timeout=BOOT_TIMEOUT,
                             disk_images=[rootimg] + [x for _, x in good + bad], keep=args.keep)
            boot_problems = [] if r.ok else ["boot: %s" % r.status]
            if "ufs-step-done" not in r.output:
                boot_problems.append("the step did not finish")
            if boot_problems and args.verbose:
                print("\n".join(r.output.splitlines()[-40:]))
            res.add("ufs/boot", boot_problems)
            for name, path in good:
                judge_good(res, src, name, path, r.output)
            for name, _ in bad:
                judge_bad(res, name, r.output)
    except (OSError, ValueError, struct.error, subprocess.SubprocessError) as e:
        res.add("internal", ["the test stopped: %s: %s" % (type(e).__name__, e)])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (res.passed, res.failed))
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
