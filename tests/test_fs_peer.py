#!/usr/bin/env python3
"""S5 and UFS judged by Linux: Tempest and Debian's Linux kernel (its sysv driver,
tools/linux_peer.py) take turns on one S5 image, each reading back what the
other wrote, for make check.

    python3 tests/test_fs_peer.py [-v] [--machine default] [--linux-machine up]
                                  [--keep DIR]

The image is a Tempest root image (tools/mkroot.py) carrying a 2 MiB
pattern file and /add/step.sh, which init runs.  Four boots, each short:

  1. Tempest runs workload A under /peer: a 12-level directory chain, a
     directory of 150 files, big files through the single and double
     indirect blocks, a sparse file, hard links, symbolic links (one of 200
     bytes), renames of files and of a directory subtree, a rename over a
     file, removals (a 1.5 MiB file among them, freeing chain blocks), a
     truncation, appends and chmods; then it fills the disk with /fill
     (leaving the superblock's free-block cache empty) and lists /peer.
  2. Linux loads sysv.ko and the virtio modules from the same package,
     mounts the image with `mount -t sysv` (statfs must say SVR4 and no
     block free), lists /peer, removes /fill (so its first free writes a
     chain block with a count of 0, which must end the list), runs workload B
     (writes, a device node and a FIFO, links to Tempest's files, renames
     across Tempest's directories, removals and truncations of Tempest's
     files), writes the next /add/step.sh, lists again and unmounts.
  3. Tempest lists what Linux left, runs workload C (allocating from the
     free list Linux kept, changing Linux's files), fills the disk again
     (through that count-0 chain block) and empties it, and lists again.
  4. Linux mounts the image read-only and lists it; its statfs counts must
     be fsck.s5's.

Every listing (type, size, permissions, link count, owner, each file's
md5, each link's target, a device's numbers) must equal the model of the
workloads so far (tests/fspeer_model.py); two systems' listings of one
state must agree on inode numbers, modification times and directory
sizes; hard links share an inode.  After each boot fsck.s5 must find the
image clean, and tests/unit/s5image.py, a reader written from the format
document, must read the same tree from it.

UFS (ufs/...): mkfs.ufs makes images of a host tree with 8K/1K and 4K/512
blocks (fsck.ufs must find them clean); Linux's ufs.ko, read-only with
ufstype=44bsd, mounts both in one boot and must list the tree exactly,
with the inode numbers, directory sizes and times tests/unit/ufsimage.py
reads.  (Linux reading an image Tempest's UFS wrote is
tests/test_ufs_kernel.py's.)

Prints PASS/FAIL lines, then "N passed, N failed"; exits non-zero on
failure.
"""

import argparse
import hashlib
import os
import random
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "unit"))
import linux_peer      # noqa: E402
import tempest         # noqa: E402
import s5image         # noqa: E402
import ufsimage        # noqa: E402
from fspeer_model import (Workload, pattern, manifest_script, parse_manifest,  # noqa: E402
                          differences, same_view, link_problems)

BUILD = os.path.join(ROOT, "build")
MKROOT = os.path.join(ROOT, "tools", "mkroot.py")
FSCK = os.path.join(BUILD, "tools", "fsck.s5")
MKFS_UFS = os.path.join(BUILD, "tools", "mkfs.ufs")
FSCK_UFS = os.path.join(BUILD, "tools", "fsck.ufs")
UFS_MAGIC = 0x00011954                  # statfs f_type of Linux's ufs
# mkfs.ufs geometries Linux reads: (name, mkfs.ufs options).  With 4 KiB
# blocks a 5 MiB file reaches the double indirect block.
UFS_GEOMETRIES = [("b8k", []), ("b4k", ["-b", "4096", "-f", "512"])]
INIT = os.path.join(BUILD, "userland", "init")
BOOT_TIMEOUT = 300
IMAGE_SIZE = "16M"
OP_FAILED_RE = re.compile(r"^peer-op-failed .*$", re.M)


class Results:
    def __init__(self):
        self.passed = self.failed = 0

    def add(self, name, problems):
        """One case: passes when problems (strings) is empty."""
        if not problems:
            self.passed += 1
            print("PASS %s" % name, flush=True)
        else:
            self.failed += 1
            print("FAIL %s: %s" % (name, "; ".join(problems)[:700]), flush=True)


# --------------------------------------------------------------------------
# The workloads

def body(tag, i):
    """Some lines of text for file i of a workload."""
    return "".join("%s file %d line %d\n" % (tag, i, k) for k in range(i % 9 + 1))


def workload_a(w):
    """Tempest's first turn, under /peer."""
    w.mkdir("peer")
    w.text("peer/empty", "")
    path = "peer/deep"
    w.mkdir(path)
    for i in range(1, 13):
        path += "/d%d" % i
        w.mkdir(path)
        w.text(path + "/f", body("deep", i))
    w.mkdir("peer/many")
    for i in range(150):
        w.text("peer/many/f%03d" % i, body("many", i))
    w.mkdir("peer/big")
    w.from_pattern("peer/big/b12k", 0, 12)
    w.from_pattern("peer/big/b300k", 12, 300, tail="end of b300k\n")
    w.from_pattern("peer/big/b1500k", 400, 1500, tail="x")
    w.sparse("peer/big/sparse", 300, 7, 2)
    w.mkdir("peer/links")
    w.link("peer/big/b300k", "peer/links/h1")
    w.link("peer/many/f001", "peer/links/h2")
    w.link("peer/many/f001", "peer/deep/d1/h3")
    w.symlink("../many/f002", "peer/links/s1")
    w.symlink("/peer/deep/d1/d2", "peer/links/s2")
    w.symlink("t" * 190 + "/dangling", "peer/links/s3")
    w.rename("peer/many/f010", "peer/deep/d1/r10")
    w.rename("peer/deep/d1/d2/d3", "peer/moved3")
    w.rename("peer/many/f011", "peer/many/f012")
    w.mkdir("peer/tmpd")
    for i in range(5):
        w.text("peer/tmpd/t%d" % i, body("tmp", i))
    w.remove_tree("peer/tmpd")
    for i in range(20, 30):
        w.remove("peer/many/f%03d" % i)
    w.remove("peer/big/b1500k")
    w.from_pattern("peer/big/again", 1000, 400)
    w.truncate("peer/big/again", 20000)
    w.truncate("peer/many/f005", 3000)
    w.chmod("peer/many/f003", 0o600)
    w.chmod("peer/deep/d1", 0o711)
    w.chmod("peer/links/h2", 0o640)
    w.append("peer/many/f000", "appended\n")


def workload_b(w):
    """Linux's turn: its own files under /peerL, and changes to Tempest's."""
    w.mkdir("peerL")
    for i in range(80):
        w.text("peerL/m%03d" % i, body("linux", i))
    w.from_pattern("peerL/big700", 100, 700, tail="L")
    w.sparse("peerL/sparse", 100, 3, 5)
    w.link("peer/big/b12k", "peerL/hT")
    w.symlink("../peer/many/f000", "peerL/sT")
    w.mknod("peerL/cdev", 4, 64)
    w.mkfifo("peerL/fifo")
    w.mkdir("peerL/a")
    w.mkdir("peerL/a/b")
    w.mkdir("peerL/a/b/c")
    w.text("peerL/a/b/c/f", body("abc", 3))
    w.rename("peer/deep/d1/r10", "peerL/fromT")
    w.rename("peer/moved3", "peerL/moved3")
    for i in range(30, 40):
        w.remove("peer/many/f%03d" % i)
    w.remove("peer/big/again")
    w.remove_tree("peer/deep/d1/d2")
    w.truncate("peer/big/b300k", 100000)
    w.append("peer/many/f040", "linux was here\n")
    w.chmod("peer/many/f041", 0o600)
    for i in range(60, 70):
        w.remove("peerL/m%03d" % i)
    for i in range(12):                 # into the slots Tempest emptied, and past them
        w.text("peer/many/L%02d" % i, body("linux-in-tempest-dir", i))
    w.symlink("/" + "q" * 300, "peerL/longlink")


def workload_c(w):
    """Tempest's second turn, after Linux."""
    w.mkdir("peerC")
    for i in range(40):
        w.text("peerC/c%03d" % i, body("again", i))
    w.from_pattern("peerC/big200", 1500, 200, tail="C")
    for i in range(0, 20):
        w.remove("peerL/m%03d" % i)
    w.rename("peerL/a", "peerC/a")
    w.append("peerL/big700", "and tempest\n")
    w.link("peerL/big700", "peerC/h")
    w.truncate("peerL/big700", 50000)
    w.remove("peer/big/b12k")
    w.append("peerL/moved3/d4/f", "tempest after linux\n")
    for i in range(12):                 # into the slots Linux emptied, and past them
        w.text("peerL/T%02d" % i, body("tempest-in-linux-dir", i))
        w.text("peer/many/T%02d" % i, body("tempest-again", i))


# --------------------------------------------------------------------------
# The steps

# Tempest fills the disk after workload A, leaving the superblock's cache
# empty (s_nfree 0), so that Linux's first free writes a chain block with a
# count of 0; after workload C it fills the disk again, allocating through
# everything Linux freed down to that block, and frees it all.
FILL_A = "dd if=/dev/zero of=/fill bs=4096 2>/dev/null; echo peer-filled"
FILL_C = ("dd if=/dev/zero of=/fill2 bs=4096 2>/dev/null; stat -c 'peer-fill2 %s' /fill2; "
          "rm /fill2")


def tempest_step(workload_lines, before, after, tops_before, tops_after, fill):
    """The step.sh Tempest's init runs: list (if tops_before), do the
    workload, fill the disk (fill), sync, list."""
    out = ["umask 022", "cd /"]
    if tops_before:
        out.append(manifest_script(before, tops_before))
    out.append(workload_lines)
    out.append(fill)
    out.append("sync")
    out.append(manifest_script(after, tops_after))
    out.append("echo peer-step-done")
    return "\n".join(out) + "\n"


# The kernel's messages from the moment the disk appeared.
DMESG = "dmesg | sed -n '/virtio_blk/,$p' | sed 's/^/peer-dmesg: /'"
# statfs's f_type for an SVR4 file system in Linux's sysv (SYSV_MAGIC_BASE
# + FSTYPE_SYSV4); SVR2's, Xenix's and the others' differ.
SYSV4_SUPER_MAGIC = 0x012FF7B5


def linux_run(next_step, workload_lines):
    """The Linux peer's command: load the modules, mount, list, run
    workload B, write Tempest's next step, list, unmount."""
    return "\n".join([
        "umask 022",
        "/modules/load > /dev/null 2>&1 || { echo 'peer: modules did not load'; exit 90; }",
        "mkdir -p /mnt && mount -t sysv /dev/vda /mnt || exit 91",
        "stat -f -c 'peer-fstype %t' /mnt",
        "stat -f -c 'peer-free-full %f' /mnt",
        "cd /mnt",
        manifest_script("A-linux", ["peer"]),
        "rm fill || echo 'peer-op-failed 0: rm fill'",
        "stat -f -c 'peer-free-emptied %f' /mnt",
        workload_lines,
        "cat > add/step.sh <<'PEER_STEP_EOF'\n%sPEER_STEP_EOF" % next_step,
        "sync",
        manifest_script("B-linux", ["peer", "peerL"]),
        "cd /",
        "umount /mnt || exit 92",
        DMESG,
        "echo peer-linux-done",
    ]) + "\n"


def linux_read_only(tops):
    return "\n".join([
        "/modules/load > /dev/null 2>&1 || { echo 'peer: modules did not load'; exit 90; }",
        "mkdir -p /mnt && mount -t sysv -o ro /dev/vda /mnt || exit 91",
        "stat -f -c 'peer-statfs %b %f' /mnt",
        "cd /mnt",
        manifest_script("C-linux", tops),
        "cd /",
        "umount /mnt || exit 92",
        DMESG,
    ]) + "\n"


# --------------------------------------------------------------------------
# Judging

def host_listing(image, tops):
    """The tree under tops as tests/unit/s5image.py reads it from the
    image, in parse_manifest's form."""
    with open(image, "rb") as f:
        img = s5image.Image(f.read())
    out = {}

    def visit(ino, path):
        di = img.inode(ino)
        kind = {0o100000: "f", 0o040000: "d", 0o120000: "l", 0o020000: "c",
                0o010000: "p"}.get(di["mode"] & 0o170000, "?")
        f = {"kind": kind, "perm": di["mode"] & 0o7777, "nlink": di["nlink"], "ino": ino,
             "uid": di["uid"], "gid": di["gid"], "mtime": di["mtime"], "size": di["size"]}
        if kind == "f":
            f["md5"] = hashlib.md5(img.read(ino)).hexdigest()
        elif kind == "l":
            f["target"] = img.read(ino).decode(errors="replace")
        elif kind == "c":
            f["rdev"] = ((di["addr"][0] >> 8) & 0xff, di["addr"][0] & 0xff)
        out[path] = f
        if kind == "d":
            for _, d_ino, name, _ in img.entries(ino):
                if d_ino and name not in (b".", b".."):
                    visit(d_ino, path + "/" + name.decode())

    for top in tops:
        ino = img.namei(top)
        if ino:
            visit(ino, top)
    return out


def fsck_problems(image):
    p = subprocess.run([FSCK, image], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.decode(errors="replace").strip()
    return [] if p.returncode == 0 else ["fsck.s5 exit %d: %s" % (p.returncode, out[-400:])]


def listing_problems(got, snap, other=None):
    """What is wrong with a listing: not there, differs from the model's
    snapshot (expected, link groups), hard links apart, or differs from
    another system's listing of the same state."""
    if got is None:
        return ["no listing"]
    expected, groups = snap
    out = differences(got, expected) + link_problems(got, groups)
    if other is not None:
        out += same_view(got, other)
    return out


def kernel_complaints(output):
    """Linux's warnings, oopses and sysv messages after the disk appeared,
    except the one Linux 6.1's sysv always gives: sysv_free_block marks a
    new chain block's buffer dirty before it sets it up to date, so
    mark_buffer_dirty warns (once) the first time a full free-block cache
    spills into a chain block.  That is Linux's, not the image's."""
    lines = [l[len("peer-dmesg: "):] for l in output.splitlines()
             if l.startswith("peer-dmesg: ")]
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        if "cut here" in line:
            end = next((j for j in range(i + 1, len(lines)) if "end trace" in lines[j]),
                       len(lines) - 1)
            block = "\n".join(lines[i:end + 1])
            if not ("mark_buffer_dirty" in block and "sysv_free_block" in block):
                what = [l for l in lines[i:end + 1] if "WARNING" in l or "BUG" in l]
                out.append("Linux: " + (what[0] if what else lines[i + 1]).strip())
            i = end + 1
            continue
        if re.search(r"\bsysv_\w+: |BUG:|Oops|\bVFS: ", line):
            out.append("Linux: " + line.strip())
        i += 1
    return out


def full_disk_problems(output):
    """Linux saw the disk Tempest filled as full, then freed the filler."""
    full = re.search(r"^peer-free-full (\d+)\s*$", output, re.M)
    emptied = re.search(r"^peer-free-emptied (\d+)\s*$", output, re.M)
    if not full or not emptied:
        return ["the free counts were not printed"]
    out = [] if int(full.group(1)) == 0 else ["%s blocks free on the full disk" % full.group(1)]
    if int(emptied.group(1)) < 4096:
        out.append("only %s blocks free after removing the filler" % emptied.group(1))
    return out


def chain_counts(image):
    """The count of every chain block of the S5 free list, in order."""
    with open(image, "rb") as f:
        data = f.read()
    img = s5image.Image(data)
    counts, nfree, lst = [], img.nfree, img.free
    while nfree and lst[0] and len(counts) <= img.fsize:
        at = lst[0] * s5image.BSIZE
        nfree = struct.unpack_from("<H", data, at)[0]
        lst = list(struct.unpack_from("<50I", data, at + 4))
        counts.append(nfree)
    return counts


def count_problems(output, image):
    """Linux's statfs (s_fsize - s_isize, s_tfree) must agree with what
    fsck.s5 counts by walking the image."""
    m = re.search(r"^peer-statfs (\d+) (\d+)\s*$", output, re.M)
    p = subprocess.run([FSCK, image], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    f = re.search(r"(\d+) blocks used, (\d+) free$", p.stdout.decode(), re.M)
    if not m or not f:
        return ["no statfs line or no fsck.s5 summary"]
    blocks, free = int(m.group(1)), int(m.group(2))
    used_fsck, free_fsck = int(f.group(1)), int(f.group(2))
    if blocks != used_fsck + free_fsck or free != free_fsck:
        return ["Linux's statfs says %d blocks, %d free; fsck.s5 counts %d used, %d free"
                % (blocks, free, used_fsck, free_fsck)]
    return []


def fstype_problems(output):
    m = re.search(r"^peer-fstype (\w+)\s*$", output, re.M)
    if m and int(m.group(1), 16) == SYSV4_SUPER_MAGIC:
        return []
    return ["statfs f_type %s, want 0x%x (Linux's SystemV Release 4)"
            % (m.group(1) if m else "not printed", SYSV4_SUPER_MAGIC)]


def op_failures(output):
    """The workload's operations that failed, as one problem."""
    failed = OP_FAILED_RE.findall(output)
    return ["%d operations failed, the first: %s" % (len(failed), failed[0])] if failed else []


class Run:
    """One run of the four boots on one image, recording results."""

    def __init__(self, res, machine, linux_machine, verbose, tmp, keep=None):
        self.res, self.machine, self.verbose, self.tmp = res, machine, verbose, tmp
        self.linux_machine, self.keep = linux_machine, keep
        self.image = os.path.join(tmp, "peer.img")
        self.model = Workload(pattern())

    def console_tail(self, text):
        if self.verbose:
            print("\n".join(text.splitlines()[-40:]))

    def kept(self, name):
        """Where a boot's console is kept (--keep), or None."""
        return os.path.join(self.keep, name.replace("/", "_")) if self.keep else None

    def make_image(self, step):
        add = os.path.join(self.tmp, "add")
        os.makedirs(add)
        with open(os.path.join(add, "pat"), "wb") as f:
            f.write(self.model.pat)
        with open(os.path.join(add, "step.sh"), "w") as f:
            f.write(step)
        subprocess.run([sys.executable, MKROOT, self.image, "--size", IMAGE_SIZE,
                        "--init", INIT, "--add", add, "--run", "sh /add/step.sh"],
                       check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def boot_tempest(self, name):
        r = tempest.boot(self.machine, "root=vda poweroff", timeout=BOOT_TIMEOUT,
                         disk_images=[self.image], keep=self.kept(name))
        problems = [] if r.ok else ["boot: %s" % r.status]
        if "peer-step-done" not in r.output:
            problems.append("the step did not finish")
        if problems:
            self.console_tail(r.output)
        self.res.add(name + "/boot", problems)
        return r.output

    def boot_linux(self, name, command):
        r = linux_peer.run(self.linux_machine, command, timeout=BOOT_TIMEOUT, disks=[self.image],
                           keep=self.kept(name))
        problems = [] if r.status == 0 else ["status %s: %s" % (r.status, r.reason)]
        if problems:
            self.console_tail(r.console)
        self.res.add(name + "/boot", problems)
        return r.output

    def after_boot(self, name, tops, snap, listing):
        """fsck.s5, and the host reader against the model and the listing."""
        self.res.add(name + "/fsck", fsck_problems(self.image))
        self.res.add(name + "/host-reader",
                     listing_problems(host_listing(self.image, tops), snap, listing))

    def all(self):
        w = self.model
        top_a, top_b, top_c = ["peer"], ["peer", "peerL"], ["peer", "peerL", "peerC"]
        workload_a(w)
        snap_a = w.snapshot(top_a)
        self.make_image(tempest_step(w.script(), None, "A-tempest", None, top_a, FILL_A))
        # 1. Tempest writes.
        out = self.boot_tempest("s5/tempest-writes")
        a_tempest = parse_manifest(out, "A-tempest")
        self.res.add("s5/tempest-writes/listing",
                     op_failures(out) + listing_problems(a_tempest, snap_a))
        self.after_boot("s5/tempest-writes", top_a, snap_a, a_tempest)
        # 2. Linux reads, then writes (its working directory is the mount,
        # so the pattern file is add/pat); workload C is its next step.
        w.lines, w.pat_path = [], "add/pat"
        workload_b(w)
        b_lines, snap_b = w.script(), w.snapshot(top_b)
        w.lines, w.pat_path = [], "/add/pat"
        workload_c(w)
        snap_c = w.snapshot(top_c)
        step_c = tempest_step(w.script(), "B-tempest", "C-tempest", top_b, top_c, FILL_C)
        out = self.boot_linux("s5/linux", linux_run(step_c, b_lines))
        self.res.add("s5/linux/mount", fstype_problems(out))
        self.res.add("s5/linux/frees-a-full-disk", full_disk_problems(out))
        a_linux = parse_manifest(out, "A-linux")
        self.res.add("s5/linux/reads-tempest", listing_problems(a_linux, snap_a, a_tempest))
        b_linux = parse_manifest(out, "B-linux")
        self.res.add("s5/linux/writes",
                     op_failures(out) + kernel_complaints(out) + listing_problems(b_linux, snap_b))
        self.after_boot("s5/linux", top_b, snap_b, b_linux)
        counts = chain_counts(self.image)
        self.res.add("s5/linux/count-0-chain-block", [] if counts and counts[-1] == 0 else
                     ["the free list's chain blocks hold %s; Linux should have ended it with "
                      "a count of 0" % counts[-5:]])
        # 3. Tempest reads what Linux wrote, and writes again.
        out = self.boot_tempest("s5/tempest-again")
        b_tempest = parse_manifest(out, "B-tempest")
        self.res.add("s5/tempest-again/reads-linux", listing_problems(b_tempest, snap_b, b_linux))
        c_tempest = parse_manifest(out, "C-tempest")
        m = re.search(r"^peer-fill2 (\d+)\s*$", out, re.M)
        self.res.add("s5/tempest-again/fills-linux-freed-space",
                     [] if m and int(m.group(1)) > 4 * 1024 * 1024 else
                     ["the disk took %s bytes to fill, want the megabytes Linux freed"
                      % (m.group(1) if m else "no")])
        self.res.add("s5/tempest-again/writes",
                     op_failures(out) + listing_problems(c_tempest, snap_c))
        self.after_boot("s5/tempest-again", top_c, snap_c, c_tempest)
        # 4. Linux reads the end result.
        out = self.boot_linux("s5/linux-again", linux_read_only(top_c))
        c_linux = parse_manifest(out, "C-linux")
        self.res.add("s5/linux-again/reads-tempest",
                     kernel_complaints(out) + listing_problems(c_linux, snap_c, c_tempest))
        self.res.add("s5/linux-again/counts", count_problems(out, self.image))


def test_complaint_filter(res):
    """kernel_complaints passes Linux's known sysv warning and catches the
    rest (a synthetic console)."""
    known = ["[ 5.1] ------------[ cut here ]------------",
             "[ 5.1] WARNING: CPU: 3 PID: 164 at fs/buffer.c:1081 mark_buffer_dirty+0xd2/0x150",
             "[ 5.1]  sysv_free_block+0x1a5/0x200 [sysv]",
             "[ 5.1] ---[ end trace 0000000000000000 ]---"]
    other = ["[ 6.0] ------------[ cut here ]------------",
             "[ 6.0] WARNING: CPU: 1 PID: 9 at fs/sysv/itree.c:99 get_block+0x1/0x2",
             "[ 6.0] ---[ end trace 0000000000000000 ]---",
             "[ 6.1] sysv_new_block: new block 99999 is not in data zone"]
    fmt = lambda ls: "\n".join("peer-dmesg: " + l for l in ls)
    problems = []
    if kernel_complaints(fmt(known)):
        problems.append("the known mark_buffer_dirty warning was reported")
    got = kernel_complaints(fmt(known + other))
    if len(got) != 2 or "itree.c" not in got[0] or "not in data zone" not in got[1]:
        problems.append("other complaints not caught: %r" % got)
    res.add("s5/complaint-filter", problems)


def test_modules(res):
    """The modules kept from the kernel package: sysv and the virtio disk's,
    dependencies before the modules needing them, each an ELF relocatable
    object (decompressed)."""
    mods = linux_peer.fetch_modules()
    names = [n for n, _ in mods]
    problems = ["%s not kept" % n for n in ("sysv", "virtio_blk") if n not in names]
    for name, path in mods:
        with open(path, "rb") as f:
            data = f.read()
        if data[:4] != b"\x7fELF" or data[16] != 1:
            problems.append("%s is not an ELF relocatable object" % name)
        for dep in linux_peer._module_depends(data):
            if dep in names and names.index(dep) > names.index(name):
                problems.append("%s is loaded before %s, which it needs" % (name, dep))
    res.add("s5/peer-modules", problems)


def build_userland():
    """init and the rest of userland/, as tests/user_check.py builds them."""
    subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "userland"),
                    "BUILD=" + os.path.join(BUILD, "userland")],
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


# --------------------------------------------------------------------------
# UFS: Linux's ufs driver (ufstype=44bsd, read-only) reads mkfs.ufs's images

def write_ufs_tree(top):
    """Sizes around the fragment and block sizes, a file through the double
    indirect blocks of 4 KiB blocks, deep and wide directories, hard links,
    symbolic links in the inode and in a block, a 255-byte name, a FIFO and
    a character device."""
    r = random.Random(21)
    os.makedirs(os.path.join(top, "deep", *("d%d" % i for i in range(15))))
    for i, size in enumerate([0, 1, 511, 512, 1023, 1025, 2048, 4097, 8191, 8192, 8193,
                              12 * 8192, 12 * 8192 + 1, 200000]):
        with open(os.path.join(top, "f%02d" % i), "wb") as f:
            f.write(r.randbytes(size))
    os.makedirs(os.path.join(top, "wide"))
    for i in range(300):
        with open(os.path.join(top, "wide", "w%03d" % i), "w") as f:
            f.write("w" * (i * 7))
    with open(os.path.join(top, "big"), "wb") as f:
        f.write(r.randbytes(5 * 1024 * 1024 + 77))
    os.link(os.path.join(top, "big"), os.path.join(top, "deep", "big.link"))
    os.link(os.path.join(top, "f03"), os.path.join(top, "wide", "f03.link"))
    with open(os.path.join(top, "L" * 255), "w") as f:
        f.write("long name\n")
    os.symlink("f01", os.path.join(top, "short"))
    os.symlink("/" + "t" * 120, os.path.join(top, "long"))
    os.mkfifo(os.path.join(top, "fifo"))
    os.mknod(os.path.join(top, "cdev"), 0o20640, os.makedev(4, 64))
    os.chmod(os.path.join(top, "f02"), 0o600)
    os.chmod(os.path.join(top, "deep", "d0"), 0o711)


def tree_listing(top, prefix):
    """The host tree in parse_manifest's form (paths prefix/...)."""
    kinds = {stat.S_IFREG: "f", stat.S_IFDIR: "d", stat.S_IFLNK: "l", stat.S_IFCHR: "c",
             stat.S_IFIFO: "p"}
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for n in dirnames + filenames + ([""] if dirpath == top else []):
            p = os.path.join(dirpath, n) if n else dirpath
            st = os.lstat(p)
            rel = os.path.relpath(p, top)
            f = {"kind": kinds[stat.S_IFMT(st.st_mode)], "perm": st.st_mode & 0o7777,
                 "nlink": st.st_nlink, "uid": 0, "gid": 0}
            if f["kind"] in "fl":
                f["size"] = st.st_size
            if f["kind"] == "f":
                with open(p, "rb") as fh:
                    f["md5"] = hashlib.md5(fh.read()).hexdigest()
            elif f["kind"] == "l":
                f["target"] = os.readlink(p)
            elif f["kind"] == "c":
                f["rdev"] = (os.major(st.st_rdev), os.minor(st.st_rdev))
            out[prefix if rel == "." else prefix + "/" + rel] = f
    return out


def tree_link_groups(top, prefix):
    """Sets of paths (prefix/...) naming one host file."""
    groups = {}
    for dirpath, _, filenames in os.walk(top):
        for n in filenames:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode):
                groups.setdefault(st.st_ino, set()).add(prefix + "/" + os.path.relpath(p, top))
    return [g for g in groups.values() if len(g) > 1]


def ufs_host_view(image, prefix):
    """Inode numbers, sizes and times as tests/unit/ufsimage.py reads them."""
    with open(image, "rb") as f:
        img = ufsimage.Image(f.read())
    def view(ino):
        di = img.inode(ino)
        return {"ino": ino, "size": di["size"], "mtime": di["mtime"]}
    out = {prefix: view(ufsimage.ROOTINO)}
    for path, ino in img.walk():
        out[prefix + path] = view(ino)
    return out


def ufs_linux_reads_mkfs(res, tmp, machine, keep):
    """mkfs.ufs -d TREE in each geometry; fsck.ufs clean; Linux mounts every
    image read-only with ufstype=44bsd and lists it: the listing must be the
    tree's, with the inode numbers and directory sizes the host reader sees."""
    src = os.path.join(tmp, "ufs-tree")
    write_ufs_tree(src)
    images, problems = [], []
    for name, opts in UFS_GEOMETRIES:
        path = os.path.join(tmp, "ufs-%s.img" % name)
        p = subprocess.run([MKFS_UFS, "-d", src] + opts + [path, "40M"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            problems.append("mkfs.ufs %s: %s" % (" ".join(opts), p.stdout.decode()[-300:]))
            continue
        p = subprocess.run([FSCK_UFS, path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            problems.append("fsck.ufs %s: %s" % (name, p.stdout.decode()[-300:]))
        images.append((name, path))
    res.add("ufs/mkfs", problems)
    if not images:
        return
    lines = ["/modules/load > /dev/null 2>&1 || { echo 'peer: modules did not load'; exit 90; }"]
    for i, (name, _) in enumerate(images):
        dev = "/dev/vd" + chr(ord("a") + i)
        lines += ["mkdir -p /mnt/%s" % name,
                  "mount -t ufs -o ro,ufstype=44bsd %s /mnt/%s || exit 91" % (dev, name),
                  "stat -f -c 'peer-fstype-%s %%t' /mnt/%s" % (name, name)]
    lines.append("cd /mnt")
    for name, _ in images:
        lines.append(manifest_script("ufs-" + name, [name]))
    lines += ["cd /"] + ["umount /mnt/%s" % name for name, _ in images] + [DMESG]
    r = linux_peer.run(machine, "\n".join(lines) + "\n", timeout=BOOT_TIMEOUT,
                       disks=[path for _, path in images],
                       keep=os.path.join(keep, "ufs_linux") if keep else None)
    res.add("ufs/linux/boot", [] if r.status == 0 else ["status %s: %s" % (r.status, r.reason)])
    for name, path in images:
        m = re.search(r"^peer-fstype-%s (\w+)\s*$" % name, r.output, re.M)
        problems = [] if m and int(m.group(1), 16) == UFS_MAGIC else \
            ["statfs f_type %s, want 0x%x" % (m.group(1) if m else "not printed", UFS_MAGIC)]
        got = parse_manifest(r.output, "ufs-" + name)
        problems += listing_problems(got, (tree_listing(src, name), tree_link_groups(src, name)),
                                     ufs_host_view(path, name))
        res.add("ufs/linux/reads-mkfs-%s" % name, problems + kernel_complaints(r.output))


def missing_parts():
    if not os.path.exists(INIT):
        build_userland()
    need = [(FSCK, "make tools"), (MKFS_UFS, "make tools"), (FSCK_UFS, "make tools"), (INIT, "make"), (tempest.KERNEL, "make"),
            (linux_peer.BUSYBOX, "busybox-static")]
    return ["%s is missing (%s)" % (p, how) for p, how in need if not os.path.exists(p)]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--machine", default="default", help="Tempest's preset (default: default)")
    p.add_argument("--linux-machine", default="up",
                   help="Linux's preset (default: up; one CPU, so that no cross-CPU "
                   "wait of a starved emulated CPU stalls it under TCG)")
    p.add_argument("--keep", help="keep each boot's console and the final image here")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="print the console tail of failed boots")
    args = p.parse_args(argv)
    res = Results()
    test_complaint_filter(res)
    problems = missing_parts()
    if not problems:
        try:
            linux_peer.fetch_modules()
        except (linux_peer.PeerError, subprocess.CalledProcessError, OSError) as e:
            problems = ["the Linux peer's kernel or modules: %s" % e]
    if not problems:
        test_modules(res)
    if problems:
        res.add("s5/setup", problems)
    else:
        tmp = tempfile.mkdtemp(prefix="fs-peer-", dir=os.path.join(BUILD))
        try:
            Run(res, args.machine, args.linux_machine, args.verbose, tmp, args.keep).all()
            ufs_linux_reads_mkfs(res, tmp, args.linux_machine, args.keep)
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                shutil.copy(os.path.join(tmp, "peer.img"), args.keep)
        except subprocess.CalledProcessError as e:
            res.add("s5/setup", ["%s failed: %s" % (e.cmd[1] if len(e.cmd) > 1 else e.cmd,
                                                     (e.output or b"").decode()[-300:])])
        except (OSError, ValueError, struct.error, linux_peer.PeerError) as e:
            res.add("internal", ["the test stopped: %s: %s" % (type(e).__name__, e)])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (res.passed, res.failed))
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
