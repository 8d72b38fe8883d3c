"""syncwrites=data writes a file's data before write(2) returns (make check's
fs/syncdata jobs; used by tests/check.py).

A root image (S5, or UFS) whose command writes about 100 KiB with seq into
/data.txt from a subshell that then keeps the file open and sleeps: the
file is never closed, so neither the last close nor an unmount writes its
pages back, and only syncwrites=data (every write(2) as O_SYNC: the pages,
the block map and the inode) puts it on the disk.  When the console shows
that the writes returned, the emulator is killed (no sync, no unmount),
and the host reads /data.txt from the image (s5cat, or the UFS reader
tests/unit/ufsimage.py): it must hold every byte written.
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "unit"))
import tempest  # noqa: E402
import ufsimage  # noqa: E402
from checklib import budget_gone  # noqa: E402
from crash_check import kill_qemu_of  # noqa: E402

ROOT = os.path.dirname(HERE)
MKROOT = os.path.join(ROOT, "tools", "mkroot.py")
S5CAT = os.path.join(tempest.BUILD, "tools", "s5cat")
INIT = os.path.join(tempest.BUILD, "userland", "init")
LINES = 20000
EXPECT = b"".join(b"%d\n" % i for i in range(1, LINES + 1))
MARK = "pagesync: written"
T_SYNCDATA = 300          # seconds: the boot, 100 KiB of synchronous writes
COMMAND = ("exec 3>&1; (seq 1 %d; echo '%s' >&3; sleep 600) > /data.txt" % (LINES, MARK))


def read_back(fs, img):
    """/data.txt of the image, or None when it is not there."""
    if fs == "s5":
        r = subprocess.run([S5CAT, img, "/data.txt"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL)
        return r.stdout if r.returncode == 0 else None
    with open(img, "rb") as f:
        image = ufsimage.Image(f.read())
    ino = image.namei("/data.txt")
    return image.read(ino) if ino else None


def killer(img):
    """A typist that waits until the writes returned, then kills the machine."""
    def typist(console):
        console.expect(r"^" + MARK, timeout=240)
        kill_qemu_of(img)
        return "killed after the writes"
    return typist


def make_syncdata_job(fs):
    def job(ctx):
        name = "fs/syncdata/%s" % fs
        tmp = tempfile.mkdtemp(prefix="tempest-syncdata-")
        try:
            img = os.path.join(tmp, "root.img")
            r = subprocess.run([sys.executable, MKROOT, img, "--fs", fs, "--free", "4M",
                                "--init", INIT, "--run", COMMAND],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               universal_newlines=True)
            if r.returncode != 0:
                ctx.results.add(name, False, "mkroot: %s" % r.stdout.strip()[-200:])
                return
            b = ctx.boot(name, "default", "root=vda syncwrites=data", T_SYNCDATA,
                         disk_images=[img], typist=killer(img))
            if b is None:
                return budget_gone(ctx, [name])
            if b.typist_error:
                ctx.results.add(name, False, "the writes did not finish: %s (%s)"
                                % (b.typist_error, b.status))
                return
            got = read_back(fs, img)
            problems = [] if got == EXPECT else [
                "/data.txt on disk is %s, not the %d bytes written"
                % ("missing" if got is None else "%d bytes" % len(got), len(EXPECT))]
            if tempest.panic_line(b.output):
                problems.append("panic: %s" % tempest.panic_line(b.output))
            ctx.results.add(name, not problems, "; ".join(problems))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return job
