#!/usr/bin/env python3
"""How long a boot takes, phase by phase, on Tempest and on the Linux peer.

    tools/boottime.py [--machine default] [--accel tcg] [--repeats 3]
                      [--kernels tempest,linux]

Each kernel boots the same preset --repeats times (after one boot that
is not counted: it makes the ISO and warms the host's caches) and runs
one command, `echo @@boot: command@@`, then powers off.  The console is
read every 20 ms and each line's arrival timed from the emulator's start,
which splits a boot into:

    firmware+loader   the emulator's start to the kernel's first line:
                      SeaBIOS and GRUB loading Tempest's kernel from the
                      ISO; SeaBIOS and QEMU's loader for Linux (-kernel),
                      whose start is its first console line's arrival
                      less that line's printk stamp (earlycon, loglevel=6)
    kernel-to-init    to Tempest's "init: started" line; to Linux's /init
                      start marker (after /init's mounts)
    init-to-command   to the command's line
    command-to-off    to the emulator's exit (sync, unmount, power-off)

It prints the median of each phase per kernel, the total, and Tempest's
total over Linux's.  A boot that fails is one line saying why, and the
exit status is 1 when any did.  `make bootbench` runs it (MACHINE=,
ACCEL=, REPEATS=).
"""

import argparse
import os
import re
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import tempest  # noqa: E402
import linux_peer  # noqa: E402
import userrun  # noqa: E402

COMMAND_MARK = "@@boot: command@@"
COMMAND = "echo '%s'" % COMMAND_MARK
PHASES = ("firmware+loader", "kernel-to-init", "init-to-command", "command-to-off")
# The first line Tempest prints; Linux's lines carry printk's stamp.
FIRST = {"tempest": "Tempest: ", "linux": None}
PRINTK_RE = re.compile(r"^\[\s*(\d+\.\d+)\]")
# The line that ends kernel-to-init.
INIT = {"tempest": "init: started ", "linux": linux_peer.START_MARK}
LINUX_APPEND = "earlycon=uart8250,io,0x3f8,115200 loglevel=6"


class Lines:
    """A binary stream that times each console line as it arrives."""

    def __init__(self):
        self.buf = b""
        self.lines = []         # (time.monotonic(), text)

    def write(self, data):
        now = time.monotonic()
        self.buf += data
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            self.lines.append((now, line.decode("utf-8", "replace").strip("\r")))

    def flush(self):
        pass

    def first(self, text):
        """When the first line holding text arrived, or None."""
        for t, line in self.lines:
            if text in line:
                return t
        return None


def kernel_start(kernel, lines):
    """When the kernel started: Tempest's first line is its first act;
    Linux's earlycon starts printing only after the command line is
    parsed, so its first stamped line's arrival less its printk stamp."""
    if kernel == "tempest":
        return lines.first(FIRST[kernel])
    for t, line in lines.lines:
        m = PRINTK_RE.match(line)
        if m:
            return t - float(m.group(1))
    return None


def boot_once(kernel, machine, accel, image, timeout):
    """One boot; (phases in seconds, None) or (None, why)."""
    lines = Lines()
    if kernel == "tempest":
        opts = tempest.pvspin_opts(machine, "root=vda poweroff", accel)
        r = tempest.boot(machine, opts, accel=accel, timeout=timeout, echo=lines,
                         disk_images=[image])
        why = None if r.ok else r.status
    else:
        r = linux_peer.run(machine, COMMAND, accel, timeout, append=LINUX_APPEND,
                           echo_all=lines)
        why = None if r.status == 0 else (r.reason or "exit status %s" % r.status)
    end = time.monotonic()
    if why:
        return None, why
    start = tempest.last_emulator_start
    marks = [kernel_start(kernel, lines), lines.first(INIT[kernel]), lines.first(COMMAND_MARK)]
    if None in marks or start is None:
        missing = [n for n, m in zip(("first line", "init line", "command line"), marks) if m is None]
        return None, "no %s on the console" % ", ".join(missing)
    points = [start] + marks + [end]
    return [b - a for a, b in zip(points, points[1:])], None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--machine", default="default", help="preset (default: default)")
    ap.add_argument("--accel", default="tcg", choices=tempest.ACCELS)
    ap.add_argument("--repeats", type=int, default=3, help="counted boots per kernel (default 3)")
    ap.add_argument("--kernels", default="tempest,linux",
                    help="tempest, linux or both, comma-separated (default both)")
    ap.add_argument("--timeout", type=int, default=120, help="seconds a boot may take")
    args = ap.parse_args(argv)
    kernels = [k for k in args.kernels.split(",") if k]
    bad = [k for k in kernels if k not in FIRST]
    if bad or not kernels or args.repeats < 1:
        print("boottime: --kernels takes tempest and linux, --repeats 1 or more", file=sys.stderr)
        return 2
    tempest.die_with_parent()
    tempest.stop_on_signals()
    tempest.WATCH_INTERVAL = linux_peer.POLL_INTERVAL = 0.02
    results, failed = {}, 0
    try:
        with tempfile.TemporaryDirectory(prefix="boottime-") as tmp:
            image = None
            if "tempest" in kernels:
                image = userrun.root_image(tmp, COMMAND, None)
            for kernel in kernels:
                runs = []
                for i in range(args.repeats + 1):
                    phases, why = boot_once(kernel, args.machine, args.accel, image, args.timeout)
                    if why:
                        print("boottime: %s boot %d: %s" % (kernel, i, why), file=sys.stderr)
                        failed += 1
                    elif i > 0:     # the first warms up
                        runs.append(phases)
                if runs:
                    results[kernel] = [statistics.median(p[j] for p in runs)
                                       for j in range(len(PHASES))]
    except (userrun.Failure, linux_peer.PeerError, tempest.MachineError, OSError) as e:
        print("boottime: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("boottime: interrupted", file=sys.stderr)
        return 130
    print("boottime: %s, accel %s, median of %d boots each, seconds"
          % (args.machine, args.accel, args.repeats))
    print("%-8s %s %8s" % ("kernel", " ".join("%16s" % p for p in PHASES), "total"), flush=True)
    for kernel, med in results.items():
        print("%-8s %s %8.2f" % (kernel, " ".join("%16.2f" % v for v in med), sum(med)))
    if "tempest" in results and "linux" in results:
        print("tempest/linux total: %.2f" % (sum(results["tempest"]) / sum(results["linux"])))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
