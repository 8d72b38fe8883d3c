#!/usr/bin/env python3
"""Run the random-syscall program (userland/tests/ut_fuzz.c) inside Tempest
at scale: `make fuzz`.

    fuzz.py [--presets default,svr4mp] [--seeds 1,2] [--calls N] [--from K]
            [--opts '...'] [--timeout S] [--keep DIR]

Each (preset, seed) pair is one boot: a root image with the tests
(tools/mkroot.py) whose init runs `/tests/ut_fuzz CALLS SEED FROM`, one
fuzzing child per CPU, each making CALLS calls.  The program itself checks
that every child lived, that the kernel still works afterwards, and that
the live kernel-object counts (files, descriptor tables, pipes, address
spaces, anonymous maps, IPC objects) came back to what they were: a leak.

Each boot is judged one of: ok; panic (a PANIC line or the kernel's exit
code); hang (the time limit passed); leak (a kernel-object count differs);
failed (another check of the program failed).  For a panic or a hang the
last "fuzz: progress" line the program printed places it to within a few
seconds of calls, and the report gives the command that replays only the
calls from there (`make fuzz SEED=.. CALLS=.. FROM=..`); with --shorten
that replay is booted once to see whether it reproduces.  The last line
is the campaign's summary:

    fuzz: CALLS calls on P boots (presets ...: CPUs), panics N, hangs N, leaks N, failed N

and the exit status is 0 only when every boot was ok.  Every failure of
this tool itself is one line starting "fuzz:".
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import tempest  # noqa: E402
from machines import MachineError  # noqa: E402

BUILD = os.path.join(ROOT, "build")
USERLAND = os.path.join(BUILD, "userland")
MKROOT = os.path.join(ROOT, "tools", "mkroot.py")

ALIVE_RE = re.compile(r"^note: seed \d+ cpu (\d+): alive (\d+) ok (\d+)", re.M)
PROGRESS_RE = re.compile(r"^fuzz: progress((?: -?\d+)+)\s*$", re.M)
LEAK_RE = re.compile(r"^FAIL .*kernel objects of class (\S+): (\d+) after the fuzzing, (\d+) before",
                     re.M)
FAIL_RE = re.compile(r"^FAIL .*$", re.M)
SUMMARY_RE = re.compile(r"^(\d+) passed, (\d+) failed\s*$", re.M)
STATUS_RE = re.compile(r"^fuzz-status (\d+)\s*$", re.M)


class Failure(Exception):
    """A failure of the tool itself, reported in one line."""


def make_image(tmp, calls, seed, start):
    img = os.path.join(tmp, "root.img")
    cmd = "cd /tmp; /tests/ut_fuzz %d %d %d; echo fuzz-status $?" % (calls, seed, start)
    r = subprocess.run([sys.executable, MKROOT, img, "--free", "64M",
                        "--init", os.path.join(USERLAND, "init"),
                        "--bin", os.path.join(USERLAND, "lockstat"),
                        "--tests", os.path.join(USERLAND, "tests"), "--run", cmd],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    if r.returncode != 0:
        lines = r.stdout.strip().splitlines()
        raise Failure("cannot make the root image: %s" % (lines[-1] if lines else "mkroot failed"))
    return img


def replay_from(output):
    """The call index to replay from: the slowest child's index at the
    last progress line (0 without one)."""
    found = PROGRESS_RE.findall(output)
    if not found:
        return 0
    indexes = [int(x) for x in found[-1].split()]
    return max(0, min(indexes))


def judge(r, output):
    """(verdict, detail) for one boot."""
    if not r.ok and r.status.startswith("timeout"):
        return "hang", r.status
    if not r.ok:
        return "panic", r.status
    leaks = LEAK_RE.findall(output)
    if leaks:
        return "leak", ", ".join("%s %s -> %s" % (c, b, a) for c, a, b in leaks)
    status = STATUS_RE.findall(output)
    summ = SUMMARY_RE.findall(output)
    if not status or status[-1] != "0" or not summ or summ[-1][1] != "0":
        fails = FAIL_RE.findall(output)
        return "failed", " | ".join(fails[:3]) or "no summary from ut_fuzz"
    return "ok", ""


def boot_once(args, preset, seed, start, boot=tempest.boot):
    """Boot preset running the fuzzing; (verdict, detail, calls, cpus, output)."""
    tmp = tempfile.mkdtemp(prefix="fuzz-", dir=args.tmp)
    try:
        img = make_image(tmp, args.calls, seed, start)
        opts = ("root=vda poweroff " + args.opts).strip()
        r = boot(preset, opts, timeout=args.timeout, disk_images=[img],
                         keep=args.keep and os.path.join(args.keep, "%s-%d-%d" % (preset, seed, start)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    verdict, detail = judge(r, r.output)
    alive = ALIVE_RE.findall(r.output)
    calls = sum(int(n) for _, n, _ in alive) - start * len(alive)
    if verdict in ("panic", "hang"):
        found = PROGRESS_RE.findall(r.output)
        calls = sum(int(x) for x in found[-1].split()) if found else 0
    return verdict, detail, max(calls, 0), len(alive), r.output


def report_failure(args, preset, seed, verdict, detail, output):
    start = replay_from(output)
    print("fuzz: %s on %s seed %d: %s" % (verdict.upper(), preset, seed, detail), flush=True)
    panic = tempest.panic_line(output)
    if panic:
        print("fuzz:   %s" % panic, flush=True)
    for line in re.findall(r"^note:   call .*$|^note: replay: .*$", output, re.M)[-12:]:
        print("fuzz:   " + line, flush=True)
    print("fuzz:   replay: make fuzz PRESETS=%s SEED=%d CALLS=%d FROM=%d"
          % (preset, seed, args.calls, start), flush=True)
    if args.shorten and start > 0 and verdict in ("panic", "hang"):
        again, _, _, _, _ = boot_once(args, preset, seed, start)
        print("fuzz:   shortened to calls %d..%d of each child: %s"
              % (start, args.calls - 1, "reproduces (%s)" % again if again == verdict
                 else "does not reproduce (%s): the earlier calls matter" % again), flush=True)


def campaign(args):
    totals = {"panic": 0, "hang": 0, "leak": 0, "failed": 0, "ok": 0}
    calls_made, cpus_seen = 0, {}
    for preset in args.presets:
        for seed in args.seeds:
            verdict, detail, calls, ncpu, output = boot_once(args, preset, seed, args.start)
            totals[verdict] += 1
            calls_made += calls
            if ncpu:
                cpus_seen[preset] = ncpu
            print("fuzz: %s seed %d: %s, %d calls on %d CPUs%s" % (
                preset, seed, verdict, calls, ncpu, ": " + detail if detail else ""), flush=True)
            if verdict != "ok":
                report_failure(args, preset, seed, verdict, detail, output)
    boots = sum(totals.values())
    print("fuzz: %d calls on %d boots (presets %s), panics %d, hangs %d, leaks %d, failed %d"
          % (calls_made, boots,
             ", ".join("%s: %s CPUs" % (p, cpus_seen.get(p, "?")) for p in args.presets),
             totals["panic"], totals["hang"], totals["leak"], totals["failed"]), flush=True)
    return 0 if totals["ok"] == boots else 1


def int_list(text):
    try:
        return [int(x, 0) for x in text.replace(",", " ").split()]
    except ValueError:
        raise argparse.ArgumentTypeError("not a list of numbers: %r" % text)


def main():
    p = argparse.ArgumentParser(description="Random system calls inside Tempest at scale "
                                "(userland/tests/ut_fuzz.c), one boot per preset and seed.")
    p.add_argument("--presets", default="default", help="comma-separated machine presets "
                   "(default: default)")
    p.add_argument("--seeds", type=int_list, default=[1], help="seeds, e.g. 1,2,3 (default 1)")
    p.add_argument("--calls", type=int, default=20000, help="calls per fuzzing child, one child "
                   "per CPU (default 20000)")
    p.add_argument("--from", dest="start", type=int, default=0,
                   help="make only calls FROM..CALLS-1 (a replay's shortening)")
    p.add_argument("--opts", default="", help="more kernel options")
    p.add_argument("--timeout", type=int, default=1200, help="seconds per boot (default 1200)")
    p.add_argument("--shorten", action="store_true",
                   help="after a panic or hang, boot the shortened replay once")
    p.add_argument("--keep", help="a directory for each boot's console and log")
    p.add_argument("--tmp", default=None, help="where the images are made (default $TMPDIR)")
    args = p.parse_args()
    args.presets = [x for x in args.presets.replace(",", " ").split() if x]
    if args.calls <= 0 or args.start < 0 or args.start >= args.calls:
        print("fuzz: --calls must be positive and --from below it", file=sys.stderr)
        return 2
    if not os.path.exists(os.path.join(USERLAND, "tests", "ut_fuzz")):
        print("fuzz: %s missing: run make userland first" % os.path.join(USERLAND, "tests", "ut_fuzz"),
              file=sys.stderr)
        return 2
    try:
        return campaign(args)
    except (Failure, MachineError) as e:
        print("fuzz: %s" % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fuzz: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
