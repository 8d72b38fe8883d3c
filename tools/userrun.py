#!/usr/bin/env python3
"""Boot Tempest with a user space: what `make run` does.

    userrun.py [--machine NAME] [--accel tcg|kvm|icount] [--opts '...']
               [--timeout S] [--add DIR] [--disk IMAGE ...] [--run 'command']

A root image is built first (tools/mkroot.py): Debian's busybox-static with
its applet links, init, the lockstat tool, the user tests under /tests and
the benchmarks under /bench, and with --add a host directory under /add.
It is attached as the first virtio disk and mounted as the root (root=vda).

With --run (or $TEMPEST_RUN, which keeps any shell quoting intact), init
runs the command under /bin/sh as root and powers off; the console is
copied to standard output and this script exits with the command's status
(init prints "init: exit status N"), or 125 when the boot itself failed
(no such line: a panic, a time-out, no init).  Without a command the
console is on the terminal with an interactive shell; Ctrl-A X quits QEMU.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import tempest  # noqa: E402

BUILD = os.path.join(ROOT, "build")
MKROOT = os.path.join(ROOT, "tools", "mkroot.py")
USERLAND = os.path.join(BUILD, "userland")
EXIT_RE = re.compile(r"init: (exit status|killed by signal) (\d+)\s*$", re.M)
BOOT_FAILED = 125


def root_image(tmp, run, add):
    """Build the root image in tmp; returns its path."""
    img = os.path.join(tmp, "root.img")
    cmd = [sys.executable, MKROOT, img, "--init", os.path.join(USERLAND, "init")]
    for prog in ("lockstat",):
        path = os.path.join(USERLAND, prog)
        if os.path.exists(path):
            cmd += ["--bin", path]
    for opt, path in (("--tests", os.path.join(USERLAND, "tests")),
                      ("--bench", os.path.join(BUILD, "bench"))):
        if os.path.isdir(path):
            cmd += [opt, path]
    if add:
        cmd += ["--add", add]
    if run is not None:
        cmd += ["--run", run]
    subprocess.run(cmd, check=True)
    return img


def exit_status(output):
    """The command's status from init's last line, or None."""
    found = EXIT_RE.findall(output)
    if not found:
        return None
    kind, n = found[-1]
    return int(n) if kind == "exit status" else 128 + int(n)


def run_command(args, img):
    opts = ("root=vda poweroff " + args.opts).strip()
    timeout = args.timeout or tempest.DEFAULT_POWEROFF_TIMEOUT
    r = tempest.boot(args.machine, opts, accel=args.accel, timeout=timeout,
                     echo=sys.stdout.buffer, disk_images=[img] + args.disk)
    sys.stdout.flush()
    status = exit_status(r.output)
    if status is None or r.status != "ok":
        print("userrun: %s" % (r.status if r.status != "ok" else "init did not report a status"),
              file=sys.stderr)
        return status if status is not None and r.status == "ok" else BOOT_FAILED
    return status


def interactive(args, img):
    cmd = [sys.executable, os.path.join(ROOT, "tests", "tempest.py"), "run",
           "--machine", args.machine, "--accel", args.accel,
           "--opts", ("root=vda " + args.opts).strip(), "--timeout", str(args.timeout),
           "--disk", img]
    for d in args.disk:
        cmd += ["--disk", d]
    return subprocess.call(cmd)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--machine", default="default")
    p.add_argument("--accel", default="tcg")
    p.add_argument("--opts", default="")
    p.add_argument("--timeout", type=int, default=0)
    p.add_argument("--add", help="host directory put under /add")
    p.add_argument("--disk", action="append", default=[],
                   help="another raw image, attached after the root (vdb, ...)")
    p.add_argument("--run", help="command to run under /bin/sh (default: $TEMPEST_RUN)")
    args = p.parse_args()
    run = args.run if args.run is not None else os.environ.get("TEMPEST_RUN") or None
    with tempfile.TemporaryDirectory(prefix="userrun-") as tmp:
        img = root_image(tmp, run, args.add)
        return run_command(args, img) if run is not None else interactive(args, img)


if __name__ == "__main__":
    sys.exit(main())
