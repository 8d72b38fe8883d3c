#!/usr/bin/env python3
"""Crash consistency: stop QEMU abruptly in the middle of a concurrent file
workload, repair the image with fsck -y, boot it again, and check what
must have survived.

    crash_check.py [--fs s5|ufs] [--stops N] [--seed S] [--machine default]
                   [--syncwrites on,off] [--keep DIR]

One stop point is two boots.  The first boots a root image whose init runs
userland/crashload (PROCS workers on the machine's CPUs creating,
writing, fsyncing, renaming and removing files in /work; it says on the
console which files are durable: fsync'ed with their directory, or
sync'ed under syncwrites=on).  Once the console has shown a chosen number
of durable files, and after a chosen extra delay, QEMU is killed with
SIGKILL.  Then, on the host: fsck -y must repair the image (exit 0 or 1)
and fsck -n find it clean; every file durable at the stop must read back
byte for byte (s5cat).  The second boot mounts the repaired image as its
root and walks and reads /work (ls -lR, cat of every file), and the image
must check clean after it powers off.

The file-system type is a parameter (FILESYSTEMS): S5 (fsck.s5, s5cat)
and UFS (fsck.ufs, the host reader tests/unit/ufsimage.py, the command
slot of tools/cmdslot.py).  make check runs a few stop points of each
(rel_check.py), `make crash` many.  The last
line is the summary, "crash: N stop points, N passed, N failed"; each
failure is one line "crash: FAIL ...".
"""

import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "unit"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
import cmdslot  # noqa: E402  (a UFS image's command slot)
import tempest  # noqa: E402
import ufsimage  # noqa: E402  (a UFS image's files, read on the host)
from machines import MachineError  # noqa: E402

ROOT = os.path.dirname(HERE)
BUILD = os.path.join(ROOT, "build")
USERLAND = os.path.join(BUILD, "userland")
TOOLS = os.path.join(BUILD, "tools")
MKROOT = os.path.join(ROOT, "tools", "mkroot.py")

# Per file-system type: how to make a root image with a command slot in
# it, fill the slot, check and repair the image, and read its files on the
# host (reader(img) gives a function of a path: the bytes, or None).
def s5_slot(img, command):
    r = subprocess.run([os.path.join(TOOLS, "s5cat"), "-w", img, "/etc/rc.run"],
                       input=(command + "\n").encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    return None if r.returncode == 0 else r.stdout.decode(errors="replace")[-200:]


def s5_reader(img):
    def cat(path):
        rc, data = tool([os.path.join(TOOLS, "s5cat"), img, path])
        return data if rc == 0 else None
    return cat


def ufs_slot(img, command):
    try:
        cmdslot.write(img, command)
    except cmdslot.SlotError as e:
        return str(e)
    return None


def ufs_reader(img):
    with open(img, "rb") as f:
        image = ufsimage.Image(f.read())

    def cat(path):
        try:
            ino = image.namei(path)
            return image.read(ino) if ino else None
        except (ValueError, IndexError, KeyError):      # a broken tree reads as missing
            return None
    return cat


FILESYSTEMS = {
    "s5": {
        "fsck": os.path.join(TOOLS, "fsck.s5"),
        "slot": s5_slot,
        "reader": s5_reader,
        "mkroot": [sys.executable, MKROOT],
    },
    "ufs": {
        "fsck": os.path.join(TOOLS, "fsck.ufs"),
        "slot": ufs_slot,
        "reader": ufs_reader,
        "mkroot": [sys.executable, MKROOT, "--fs", "ufs"],
    },
}

DURABLE_RE = re.compile(r"^crash: (durable|gone) (\S+) (\d+) (\d+)\s*$", re.M)
WORKDIR = "/work"
VERIFY = ("ok=1; ls -lR {d} > /dev/null || ok=0; "
          "for f in {d}/*; do cat $f > /dev/null || ok=0; done; "
          "if [ $ok = 1 ]; then echo crash-verify-ok; else echo crash-verify-failed; "
          "ls -la {d} | head -4; echo crash-verify-end; fi".format(d=WORKDIR))


class Failure(Exception):
    """A failure of the tool itself (not of a stop point)."""


def content(seed, length):
    """What userland/crashload writes to a file of seed and length."""
    return bytes((((seed * 2654435761 + i * 40503) & 0xffffffff) >> 11) & 0xff
                 for i in range(length))


def durable_files(output):
    """{name: (length, seed)} of the files durable at the end of output."""
    live = {}
    for kind, name, length, seed in DURABLE_RE.findall(output):
        if kind == "durable":
            live[name] = (int(length), int(seed))
        else:
            live.pop(name, None)
    return live


def set_command(fs, img, command):
    """Fill the image's /etc/rc.run slot in place; None, or the problem."""
    problem = FILESYSTEMS[fs]["slot"](img, command)
    return "cannot set the command: %s" % problem if problem else None


def make_image(fs, tmp, run):
    """A root image with crashload, whose command slot (init's
    /etc/rc.run) holds run; the verify boot rewrites the slot."""
    img = os.path.join(tmp, "root.img")
    r = subprocess.run(FILESYSTEMS[fs]["mkroot"] + [
        img, "--free", "24M", "--init", os.path.join(USERLAND, "init"),
        "--bin", os.path.join(USERLAND, "crashload"), "--slot"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if r.returncode != 0:
        lines = r.stdout.strip().splitlines()
        raise Failure("cannot make the root image: %s" % (lines[-1] if lines else "?"))
    problem = set_command(fs, img, run)
    if problem:
        raise Failure(problem)
    return img


def kill_qemu_of(img):
    """SIGKILL the emulator that has img open (found by its command line)."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read().split(b"\0")
        except OSError:
            continue
        if cmd and b"qemu-system" in cmd[0] and any(img.encode() in a for a in cmd):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass


def stopper(img, after, delay):
    """A typist that waits for `after` durable files, then `delay` seconds,
    and kills the machine."""
    def typist(console):
        console.expect(r"^crash: started", timeout=240)
        for _ in range(after):
            console.expect(r"^crash: durable ", timeout=240)
        time.sleep(delay)
        kill_qemu_of(img)
        return "stopped after %d durable files and %.2f s" % (after, delay)
    return typist


def tool(args, timeout=300):
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    return r.returncode, r.stdout


def difference(data, want):
    """Where data differs from want: the first differing byte, how many
    differ, and whether the differing bytes read as zeros (a hole: fsck
    took the block away) or as other data (a block written over)."""
    diff = [i for i in range(min(len(data), len(want))) if data[i] != want[i]]
    if not diff:
        return "only the length differs"
    zeros = all(data[i] == 0 for i in diff)
    return "first at byte %d (block %d of 1 KiB), %d bytes, %s" % (
        diff[0], diff[0] // 1024, len(diff), "all zero" if zeros else "other data")


def check_files(fs, img, live, fsck_said=""):
    """Problems with the durable files on the repaired image; fsck_said
    (what fsck -y printed) gives its lines about blocks claimed twice, the
    likely cause of a durable file's changed bytes."""
    bad = []
    cat = FILESYSTEMS[fs]["reader"](img)
    for name, (length, seed) in sorted(live.items()):
        data = cat("%s/%s" % (WORKDIR, name))
        want = content(seed, length)
        if data is None:
            bad.append("%s (durable, %d bytes) is missing" % (name, length))
        elif data != want:
            bad.append("%s: %d bytes on disk differ from the %d written: %s" % (
                name, len(data), length, difference(data, want)))
    if bad:
        twice = [l.strip() for l in fsck_said.splitlines() if "twice" in l]
        bad += ["fsck -y said: %s" % l for l in twice[:3]]
    return bad


def stop_point(fs, machine, syncwrites, after, delay, procs, keep=None, boot=tempest.boot):
    """One stop point; returns (problems, facts) where facts describes it.
    boot is tempest.boot or one of the same arguments (make check's)."""
    tmp = tempfile.mkdtemp(prefix="crash-", dir=os.environ.get("TMPDIR"))
    opts = "root=vda syncwrites=%s" % syncwrites
    run = "crashload -p %d %s %s" % (procs, "-s" if syncwrites == "on" else "", WORKDIR)
    try:
        img = make_image(fs, tmp, run)
        r = boot(machine, opts, timeout=300, disk_images=[img],
                         typist=stopper(img, after, delay),
                         keep=keep and os.path.join(keep, "load"))
        if r.typist_error:
            return ["the workload did not run: %s (%s)" % (r.typist_error, r.status)], ""
        if tempest.panic_line(r.output):
            return ["panic during the workload: %s" % tempest.panic_line(r.output)], ""
        live = durable_files(r.output)
        facts = "%s, %d durable files" % (r.typist_result, len(live))
        fsck = FILESYSTEMS[fs]["fsck"]
        rc, out = tool([fsck, "-y", img])
        fsck_said = out.decode(errors="replace")
        problems = []
        fixed = re.search(r"repaired (\d+) problem", out.decode(errors="replace"))
        facts += ", fsck -y: %s" % ("repaired %s problems" % fixed.group(1) if fixed
                                     else "exit %d" % rc)
        if rc not in (0, 1):
            return ["fsck -y exit %d: %s" % (rc, out.decode(errors="replace")[-400:])], facts
        rc, out = tool([fsck, "-n", img])
        if rc != 0:
            problems.append("not clean after fsck -y: %s" % out.decode(errors="replace")[-300:])
        problems += check_files(fs, img, live, fsck_said)
        problems += verify_boot(fs, machine, img, keep, boot)
        if problems and keep:
            os.makedirs(keep, exist_ok=True)
            shutil.copy(img, os.path.join(keep, "repaired.img"))
            with open(os.path.join(keep, "fsck.txt"), "w") as f:
                f.write(fsck_said)
        return problems, facts
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def verify_boot(fs, machine, img, keep, boot=tempest.boot):
    """Boot the repaired image: it mounts as the root, /work walks and reads."""
    problem = set_command(fs, img, VERIFY)
    if problem:
        return [problem]
    b = boot(machine, "root=vda poweroff", timeout=300, disk_images=[img],
                     keep=keep and os.path.join(keep, "verify"))
    p = []
    if not b.ok:
        p.append("the verify boot failed: %s" % b.status)
    if "crash-verify-ok" not in b.output:
        seen = b.output.split("crash-verify-failed", 1)[-1].split("crash-verify-end", 1)[0]
        p.append("the repaired %s did not walk and read cleanly in Tempest (ls -la: %s)"
                 % (WORKDIR, " / ".join(l.strip() for l in seen.strip().splitlines()[:4])
                    or "nothing"))
    rc, out = tool([FILESYSTEMS[fs]["fsck"], "-n", img])
    if rc != 0:
        p.append("not clean after the verify boot: %s" % out.decode(errors="replace")[-300:])
    return p


def plan(stops, seed, syncwrites):
    """[(syncwrites, after, delay)]: stop points spread over the workload."""
    rnd = random.Random(seed)
    return [(syncwrites[i % len(syncwrites)], rnd.choice((1, 3, 8, 20, 40, 80)),
             round(rnd.uniform(0, 1.5), 2)) for i in range(stops)]


def main():
    p = argparse.ArgumentParser(description="Kill QEMU in the middle of a file workload, "
                                "fsck -y, boot again, check every durable file.")
    p.add_argument("--fs", default="s5", choices=sorted(FILESYSTEMS))
    p.add_argument("--stops", type=int, default=12, help="stop points (default 12)")
    p.add_argument("--seed", type=int, default=1, help="chooses the stop points")
    p.add_argument("--machine", default="default")
    p.add_argument("--procs", type=int, default=4, help="workload processes (default 4)")
    p.add_argument("--syncwrites", default="on,off", help="values to alternate (default on,off)")
    p.add_argument("--keep", help="a directory for the consoles of failed stop points "
                   "(and the repaired image and what fsck -y said)")
    args = p.parse_args()
    values = [v for v in args.syncwrites.split(",") if v]
    if any(v not in ("on", "off") for v in values) or not values:
        print("crash: --syncwrites takes on and off", file=sys.stderr)
        return 2
    for need in (os.path.join(USERLAND, "crashload"), FILESYSTEMS[args.fs]["fsck"]):
        if not os.path.exists(need):
            print("crash: %s missing: run make userland tools" % need, file=sys.stderr)
            return 2
    passed = failed = 0
    try:
        for i, (sw, after, delay) in enumerate(plan(args.stops, args.seed, values)):
            keep = args.keep and os.path.join(args.keep, "stop%d" % i)
            problems, facts = stop_point(args.fs, args.machine, sw, after, delay, args.procs,
                                         keep)
            what = "%s syncwrites=%s stop %d (%s)" % (args.fs, sw, i, facts or "no facts")
            if problems:
                failed += 1
                print("crash: FAIL %s: %s" % (what, " | ".join(problems[:4])), flush=True)
            else:
                passed += 1
                print("crash: ok %s" % what, flush=True)
    except (Failure, MachineError) as e:
        print("crash: %s" % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("crash: interrupted", file=sys.stderr)
        return 130
    print("crash: %d stop points, %d passed, %d failed" % (passed + failed, passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
