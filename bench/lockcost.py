#!/usr/bin/env python3
"""What the lock statistics cost (issue 17): Tempest booted with
lockstat=off, lockstat=contended and lockstat=on, each REPEATS times, each
boot running the fork, exec and pipe micro-benchmarks, the file workload
(bench/files.c: stat, open, a 4 KiB read, close) and the null call and fstat; the table gives the median
microseconds per operation in each mode and the ratio of contended and on
to off (1.000 is free; 1.030 is 3% dearer).

    bench/lockcost.py [--machine up] [--accel icount] [--repeats 3]
                      [--seconds 1] [--opts 'lock=h2mcs'] [--modes off,on]

Tempest runs through tools/userrun.py (the `make run` path) with
lockstat=MODE added to --opts.  Run `make all tools userland bench` first.
Exit status 0, or 1 with one line saying what failed.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHES = ("null_syscall", "fstat", "fork", "exec", "pipe", "files")
MODES = ("off", "contended", "on")
LINE = re.compile(r"^bench (\S+) .*?us_per_op=([0-9.]+)", re.M)


class CostError(RuntimeError):
    pass


def boot(args, mode):
    """One boot with lockstat=mode running every benchmark: {bench: us}."""
    run = "cd /tmp; " + "; ".join("/bench/%s -t %g" % (b, args.seconds) for b in BENCHES)
    opts = ("%s lockstat=%s" % (args.opts, mode)).strip()
    cmd = ["nice", "-n", "5", sys.executable, os.path.join(ROOT, "tools/userrun.py"),
           "--machine", args.machine, "--accel", args.accel, "--opts", opts,
           "--timeout", str(args.timeout), "--run", run]
    try:
        out = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, errors="replace").stdout
    except OSError as e:
        raise CostError("cannot run tools/userrun.py: %s" % e)
    found = {name: float(us) for name, us in LINE.findall(out)}
    missing = [b for b in BENCHES if b not in found]
    if missing:
        tail = " | ".join(out.strip().splitlines()[-3:])
        raise CostError("lockstat=%s printed no result for %s (last lines: %s)"
                        % (mode, ", ".join(missing), tail))
    return found


def medians(args, modes):
    """{mode: {bench: median us}}; the modes alternate from boot to boot,
    so a drift of the host weighs on each alike."""
    runs = {m: [] for m in modes}
    for i in range(args.repeats):
        for m in modes:
            print("lockcost: lockstat=%s boot %d of %d" % (m, i + 1, args.repeats),
                  file=sys.stderr, flush=True)
            runs[m].append(boot(args, m))
    return {m: {b: statistics.median(r[b] for r in runs[m]) for b in BENCHES} for m in modes}


def table(args, modes, res):
    head = "%-14s" % "benchmark" + "".join("%12s" % m for m in modes)
    head += "".join("%15s" % ("%s/off" % m) for m in modes if m != "off")
    lines = ["# %s %s, median of %d, opts '%s' (us per operation)"
             % (args.machine, args.accel, args.repeats, args.opts), head]
    for b in BENCHES:
        line = "%-14s" % b + "".join("%12.2f" % res[m][b] for m in modes)
        if "off" in modes:
            line += "".join("%15.3f" % (res[m][b] / res["off"][b]) for m in modes if m != "off")
        lines.append(line)
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description="The cost of lockstat=contended and lockstat=on "
                                "against off on Tempest's micro-benchmarks and a file workload.")
    p.add_argument("--machine", default="up", help="machine preset (default up)")
    p.add_argument("--accel", default="icount", help="tcg, icount or kvm (default icount)")
    p.add_argument("--repeats", type=int, default=3, help="boots in each mode (default 3)")
    p.add_argument("--seconds", type=float, default=1, help="target time of each benchmark")
    p.add_argument("--opts", default="", help="other boot options (default none)")
    p.add_argument("--modes", default=",".join(MODES),
                   help="the lockstat= modes, comma-separated (default off,contended,on)")
    p.add_argument("--timeout", type=int, default=900, help="seconds per boot (default 900)")
    args = p.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        p.error("--modes takes off, contended and on, not %s" % ",".join(bad or ["nothing"]))
    if args.repeats < 1:
        p.error("--repeats must be at least 1")
    try:
        res = medians(args, modes)
    except CostError as e:
        print("lockcost: %s" % e, file=sys.stderr)
        return 1
    print(table(args, modes, res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
