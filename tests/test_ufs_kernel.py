#!/usr/bin/env python3
"""Tempest's kernel UFS judged by other systems: it reads the images
NetBSD's makefs (Debian's makefs package, `makefs -t ffs -o version=1`) and
mkfs.ufs build of one host tree, and Linux's ufs.ko reads the image it
writes, for make check.

    python3 tests/test_ufs_kernel.py [-v] [--machine default] [--keep DIR] [--no-linux]

Writing: on two empty mkfs.ufs images (8K/1K blocks in one cylinder
group; 4K/512 in four) Tempest runs tests/test_fs_peer.py's
workload A (a 12-level directory chain, 150 files, big files through the
indirect blocks, a sparse file, hard links, short and long symbolic links,
renames of files and of a subtree, removals, truncations, appends,
chmods), checks Linux's errors (ENAMETOOLONG at 256 bytes, a 255-byte name
made and removed, ENOTEMPTY, EEXIST, EPERM for a link to a directory),
lists the tree and unmounts.  The listing must equal the model
(tests/fspeer_model.py), fsck.ufs must find the image clean, the host
reader (tests/unit/ufsimage.py) must see the same inode numbers, sizes and
times, and Linux's ufs.ko (ufstype=44bsd, read-only; the Linux peer,
tools/linux_peer.py) must list the same tree.

Reading: Tempest boots once with all the images attached, mounts each
with `mount -t ufs` and lists it.

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
import linux_peer      # noqa: E402
from fspeer_model import Workload, pattern, manifest_script, parse_manifest  # noqa: E402
from test_fs_peer import (Results, write_ufs_tree, tree_listing, tree_link_groups,  # noqa: E402
                          ufs_host_view, listing_problems, build_userland, workload_a,
                          op_failures, kernel_complaints, DMESG)

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


# Linux's errors for names and directories, as busybox prints them:
# (what is done, the message it must print).
ERRNO_CASES = [
    ("touch " + "n" * 256, "File name too long"),
    ("mkdir " + "m" * 255 + " && rmdir " + "m" * 255 + " && echo ok255", "ok255"),
    ("rmdir peer", "Directory not empty"),
    ("mkdir peer", "File exists"),
    ("ln peer peer-dirlink", "Operation not permitted"),
]


# The empty images Tempest writes on: (name, mkfs.ufs options, size).  The
# second has four cylinder groups, so directories spread and big files
# move on between groups.
WRITERS = [("w8k", [], "24M"), ("w4k", ["-b", "4096", "-f", "512"], "40M")]


def writer_script(wl, name, dev):
    """Tempest's write turn on the empty image dev (mounted read-write at
    /mnt/NAME): the workload, the error cases, a listing, an unmount."""
    lines = ["mkdir -p /mnt/%s" % name,
             "mount -t ufs %s /mnt/%s || echo 'ufs-mount-failed %s'" % (dev, name, name),
             "cd /mnt/%s" % name, wl.script()]
    for i, (cmd, _) in enumerate(ERRNO_CASES):
        lines.append("(%s) > /tmp/e%d 2>&1; sed 's/^/ufs-errno-%s-%d: /' /tmp/e%d"
                     % (cmd, i, name, i, i))
    lines += ["sync", manifest_script("ufs-" + name, ["peer"]), "cd /",
              "umount /mnt/%s || echo 'ufs-umount-failed %s'" % (name, name)]
    return "\n".join(lines) + "\n"


def step_script(good, bad, wl):
    """What init runs: the write turn, then mount each image, list it, try a
    write, unmount."""
    lines = ["umask 022"]
    for i, (name, _, _) in enumerate(WRITERS):
        lines.append(writer_script(wl, name, "/dev/vd" + chr(ord("b") + i)))
    disk = 1 + len(WRITERS)
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


def judge_writer(res, name, path, out, snap):
    got = parse_manifest(out, "ufs-" + name)
    problems = op_failures(out) + listing_problems(got, snap)
    for tag in ("ufs-mount-failed %s" % name, "ufs-umount-failed %s" % name):
        if tag in out:
            problems.append(tag)
    res.add("ufs/tempest-writes-%s" % name, problems)
    for i, (cmd, want) in enumerate(ERRNO_CASES):
        said = "\n".join(l for l in out.splitlines() if l.startswith("ufs-errno-%s-%d: " % (name, i)))
        res.add("ufs/tempest-writes-%s/errno-%d" % (name, i),
                [] if want in said else ["%s: %r, want %r" % (cmd[:40], said[-120:], want)])
    rc, fsck = run([FSCK_UFS, path])
    res.add("ufs/tempest-writes-%s/fsck" % name, [] if rc == 0 else ["fsck.ufs: " + fsck[-400:]])
    view = {k[2:]: v for k, v in ufs_host_view(path, "X").items() if k.startswith("X/peer")}
    res.add("ufs/tempest-writes-%s/host-reader" % name,
            listing_problems(got, snap, view) if got else ["no listing"])


def linux_reads_written(res, written, out, snap, keep):
    """Linux's ufs.ko (read-only, ufstype=44bsd) lists what Tempest wrote on
    each image of written [(name, path)], in one boot."""
    lines = ["/modules/load > /dev/null 2>&1 || { echo 'peer: modules did not load'; exit 90; }"]
    for i, (name, _) in enumerate(written):
        lines += ["mkdir -p /mnt/%s" % name,
                  "mount -t ufs -o ro,ufstype=44bsd /dev/vd%s /mnt/%s || exit 91"
                  % (chr(ord("a") + i), name),
                  "cd /mnt/%s" % name, manifest_script("linux-" + name, ["peer"]), "cd /",
                  "umount /mnt/%s" % name]
    lines.append(DMESG)
    try:
        r = linux_peer.run("up", "\n".join(lines) + "\n", timeout=BOOT_TIMEOUT,
                           disks=[p for _, p in written],
                           keep=os.path.join(keep, "linux") if keep else None)
    except (linux_peer.PeerError, subprocess.CalledProcessError, OSError) as e:
        res.add("ufs/linux-reads-tempest", ["the Linux peer: %s" % e])
        return
    boot = [] if r.status == 0 else ["status %s: %s" % (r.status, r.reason)]
    for name, _ in written:
        problems = listing_problems(parse_manifest(r.output, "linux-" + name), snap,
                                    parse_manifest(out, "ufs-" + name))
        res.add("ufs/linux-reads-tempest-%s" % name, boot + problems + kernel_complaints(r.output))


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
    p.add_argument("--no-linux", action="store_true",
                   help="skip the Linux peer's reading of what Tempest wrote")
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
        written = []
        for name, opts, size in WRITERS:
            path = os.path.join(tmp, name + ".img")
            rc, out = run([MKFS_UFS] + opts + [path, size])
            if rc != 0:
                res.add("ufs/setup", ["mkfs.ufs: " + out[-300:]])
            written.append((name, path))
        wl = Workload(pattern())
        workload_a(wl)
        snap = wl.snapshot(["peer"])
        add = os.path.join(tmp, "add")
        os.makedirs(add)
        with open(os.path.join(add, "pat"), "wb") as f:
            f.write(wl.pat)
        with open(os.path.join(add, "step.sh"), "w") as f:
            f.write(step_script(good, bad, wl))
        rootimg = os.path.join(tmp, "root.img")
        rc, out = run([sys.executable, MKROOT, rootimg, "--free", "8M", "--init", INIT,
                       "--add", add, "--run", "sh /add/step.sh"])
        if rc != 0:
            res.add("ufs/setup", ["mkroot: " + out[-300:]])
        else:
            r = tempest.boot(args.machine, "root=vda poweroff", timeout=BOOT_TIMEOUT,
                             disk_images=[rootimg] + [x for _, x in written + good + bad],
                             keep=args.keep)
            boot_problems = [] if r.ok else ["boot: %s" % r.status]
            if "ufs-step-done" not in r.output:
                boot_problems.append("the step did not finish")
            if boot_problems and args.verbose:
                print("\n".join(r.output.splitlines()[-40:]))
            res.add("ufs/boot", boot_problems)
            for name, path in written:
                judge_writer(res, name, path, r.output, snap)
            if not args.no_linux:
                linux_reads_written(res, written, r.output, snap, args.keep)
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
