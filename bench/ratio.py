#!/usr/bin/env python3
"""Tempest beside Linux on a set of micro-benchmarks: by default the six
of issue 18 (the null system call, fstat, fork+exit, fork+exec, the pipe
round trip and the anonymous page fault); with --set abi issue 31's
(AF_UNIX stream latency and 64 KiB bandwidth, epoll's wake-up with 1, 100
and 1000 descriptors watched); with --set net issue 35's (TCP round
trip, UDP request-response, TCP connect+exchange+close and TCP 64 KiB
bandwidth over loopback, beside the same on AF_UNIX).  Each kernel is booted REPEATS times on the
preset and accelerator given, each boot runs the whole set, and the median
microseconds per operation of each kernel and their ratio (Tempest/Linux,
lower is better for Tempest) are printed as a table.

    bench/ratio.py [--set issue18|abi|net] [--machine up] [--accel icount]
                   [--repeats 3] [--seconds 1] [--opts 'lockstat=off']
                   [--only tempest]

Tempest runs through tools/userrun.py (the `make run` path) with the boot
options given; Linux through tools/linux_peer.py (`make linux-run`) with
clearcpuid=erms under icount, as the sweep harness does, so both kernels
clear pages with the same instructions (bench/README.md).  Run `make all
tools userland bench` first.
Exit status 0, or 1 with one line saying what failed.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETS = {
    "issue18": ("null_syscall", "fstat", "fork", "exec", "pipe", "pagefault"),
    "abi": ("unix_lat", "unix_bw", "epoll1", "epoll100", "epoll1000", "null_syscall",
            "strace_cost"),
    "net": ("tcp_lat", "udp_lat", "tcp_crr", "tcp_bw", "unix_lat", "unix_bw"),
}
# The network's benchmarks run over loopback, which the Linux peer's init
# leaves down (Tempest's is up from boot).
LOOPBACK_UP = "(ip link set lo up || busybox ip link set lo up) 2>/dev/null; "
BENCHES = SETS["issue18"]
LINE = re.compile(r"^bench (\S+) .*?us_per_op=([0-9.]+)", re.M)


class RatioError(RuntimeError):
    pass


def guest_command(seconds):
    return LOOPBACK_UP + "; ".join("/bench/%s -t %g" % (b, seconds) for b in BENCHES)


def boot(kernel, args):
    """One boot of kernel running all six; returns {bench: us_per_op}."""
    run = guest_command(args.seconds)
    if kernel == "tempest":
        cmd = [sys.executable, os.path.join(ROOT, "tools/userrun.py"), "--machine", args.machine,
               "--accel", args.accel, "--opts", args.opts, "--timeout", str(args.timeout),
               "--run", run]
    else:
        append = "clearcpuid=erms" if args.accel == "icount" else ""
        cmd = [sys.executable, os.path.join(ROOT, "tools/linux_peer.py"), "run", "--machine",
               args.machine, "--accel", args.accel, "--timeout", str(args.timeout),
               "--append", append, "--run", run]
    cmd = ["nice", "-n", "5"] + cmd
    try:
        out = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, errors="replace").stdout
    except OSError as e:
        raise RatioError("cannot run %s: %s" % (cmd[3], e))
    found = {name: float(us) for name, us in LINE.findall(out)}
    missing = [b for b in BENCHES if b not in found]
    if missing:
        tail = " | ".join(out.strip().splitlines()[-3:])
        raise RatioError("%s printed no result for %s (last lines: %s)"
                         % (kernel, ", ".join(missing), tail))
    return found


def medians(kernel, args):
    runs = []
    for i in range(args.repeats):
        print("ratio: %s boot %d of %d" % (kernel, i + 1, args.repeats), file=sys.stderr, flush=True)
        runs.append(boot(kernel, args))
    return {b: statistics.median(r[b] for r in runs) for b in BENCHES}


def table(args, tempest, linux):
    lines = ["# %s %s, median of %d, opts '%s' (us per operation)"
             % (args.machine, args.accel, args.repeats, args.opts),
             "%-14s %12s %12s %8s" % ("benchmark", "tempest", "linux", "ratio")]
    for b in BENCHES:
        t, l = tempest.get(b), linux.get(b)
        ratio = "%8.2f" % (t / l) if t and l else "%8s" % "-"
        lines.append("%-14s %12s %12s %s" % (b, "%.2f" % t if t else "-",
                                             "%.2f" % l if l else "-", ratio))
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description="Tempest/Linux ratio table of a set of "
                                "micro-benchmarks (median of N boots of each kernel).")
    p.add_argument("--set", default="issue18", choices=sorted(SETS),
                   help="which benchmarks (default issue18)")
    p.add_argument("--machine", default="up", help="machine preset (default up)")
    p.add_argument("--accel", default="icount", help="tcg, icount or kvm (default icount)")
    p.add_argument("--repeats", type=int, default=3, help="boots of each kernel (default 3)")
    p.add_argument("--seconds", type=float, default=1, help="target time of each benchmark")
    p.add_argument("--opts", default="", help="Tempest's boot options (default: the defaults)")
    p.add_argument("--timeout", type=int, default=900, help="seconds per boot (default 900)")
    p.add_argument("--only", choices=("tempest", "linux"), help="run one kernel only")
    p.add_argument("--linux-from", metavar="FILE",
                   help="take Linux's figures from an earlier table instead of booting it")
    args = p.parse_args()
    global BENCHES
    BENCHES = SETS[args.set]
    if args.repeats < 1:
        p.error("--repeats must be at least 1")
    try:
        linux = {}
        if args.linux_from:
            linux = read_table(args.linux_from, "linux")
        elif args.only != "tempest":
            linux = medians("linux", args)
        tempest = medians("tempest", args) if args.only != "linux" else {}
    except RatioError as e:
        print("ratio: %s" % e, file=sys.stderr)
        return 1
    print(table(args, tempest, linux))
    return 0


def read_table(path, column):
    """One kernel's column of a table this script printed earlier."""
    col = {"tempest": 1, "linux": 2}[column]
    found = {}
    try:
        with open(path) as f:
            for line in f:
                words = line.split()
                if len(words) == 4 and words[0] in BENCHES and words[col] != "-":
                    found[words[0]] = float(words[col])
    except (OSError, ValueError) as e:
        raise RatioError("cannot read %s: %s" % (path, e))
    if not found:
        raise RatioError("%s holds no %s figures" % (path, column))
    return found


if __name__ == "__main__":
    sys.exit(main())
