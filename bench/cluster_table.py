#!/usr/bin/env python3
"""The cluster sweep's table (bench/sweeps/cluster, issue 20): for each
workload, lock algorithm and cluster size, the faults per second and the
coarse locks' miss ratio, from the records a sweep wrote.

    bench/cluster_table.py [build/sweeps/cluster]

Per point (the median over its repeats):
  us/fault     the workload's own figure (each process's time per fault)
  faults/s     all processes' faults over the run's wall time (ops/total_s)
  spin miss%   misses/acquisitions over every spin-lock class (lockstat)
  coarse miss% the same over the clustered instances' coarse locks (the
               classes named cluster_*), with their acquisitions; "-" when
               the boot had none (no cluster=)
  pcache miss% the page cache's vnode lock (pcache_vnode, a read/write
               lock every fault on the shared file takes), the unclustered
               coarse lock the shared test meets
Rows are in sweep order: each lock without cluster= first ("off"), then
cluster=1, 2, 4, 8, 16.  Exit status 0, or 1 with one line saying what
is wrong (no such directory, no records).
"""
import argparse
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(runs):
    """The ok records of a results directory's runs/."""
    out = []
    for f in sorted(os.listdir(runs)):
        if f.endswith(".json"):
            with open(os.path.join(runs, f)) as fh:
                r = json.load(fh)
            if r.get("status") == "ok":
                out.append(r)
    return out


def ratio(classes, keep):
    """(acquisitions, misses/acquisitions) over the classes keep() takes."""
    hits = sum(c["hits"] for c in classes if keep(c))
    misses = sum(c["misses"] for c in classes if keep(c))
    return hits, (misses / hits if hits else None)


def figures(r):
    """One record's figures: us/fault, faults/s and the three ratios."""
    res = r.get("result") or {}
    classes = (r.get("lockstat") or {}).get("classes") or []
    fps = res["ops"] / res["total_s"] if res.get("total_s") else None
    _, spin = ratio(classes, lambda c: c["kind"] == "spin")
    coarse_n, coarse = ratio(classes, lambda c: c["class"].startswith("cluster_"))
    _, pcache = ratio(classes, lambda c: c["class"] == "pcache_vnode")
    return r["value"], fps, spin, coarse_n, coarse, pcache


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def cell(x, fmt):
    return "-" if x is None else fmt % x


def cluster_key(opts):
    c = opts.get("cluster")
    return -1 if c is None else (0 if c == "node" else int(c))


def table(records):
    groups = {}
    for r in records:
        p = r["point"]
        key = (p["workload"], p["options"].get("lock", "default"), cluster_key(p["options"]))
        groups.setdefault(key, []).append(figures(r))
    lines = ["%-13s %-6s %-7s %3s %9s %11s %10s %9s %12s %12s" % (
        "workload", "lock", "cluster", "n", "us/fault", "faults/s", "spin miss%",
        "coarse n", "coarse miss%", "pcache miss%")]
    for (wl, lock, cl), figs in sorted(groups.items()):
        cols = list(zip(*figs))
        us, fps, spin, cn, coarse, pc = (median(c) for c in cols)
        lines.append("%-13s %-6s %-7s %3d %9s %11s %10s %9s %12s %12s" % (
            wl, lock, "off" if cl < 0 else ("node" if cl == 0 else str(cl)), len(figs),
            cell(us, "%.2f"), cell(fps, "%.0f"), cell(spin and spin * 100, "%.3f"),
            cell(cn, "%.0f"), cell(coarse and coarse * 100, "%.3f"),
            cell(pc and pc * 100, "%.1f")))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("results", nargs="?", default=os.path.join(ROOT, "build", "sweeps", "cluster"),
                    help="a sweep's results directory (default build/sweeps/cluster)")
    args = ap.parse_args(argv)
    runs = os.path.join(args.results, "runs")
    if not os.path.isdir(runs):
        print("cluster_table: no records: %s is not a directory (run make bench "
              "SWEEP=bench/sweeps/cluster first)" % runs, file=sys.stderr)
        return 1
    try:
        records = load(runs)
    except (OSError, ValueError, KeyError) as e:
        print("cluster_table: cannot read the records in %s: %s" % (runs, e), file=sys.stderr)
        return 1
    if not records:
        print("cluster_table: no successful records in %s" % runs, file=sys.stderr)
        return 1
    try:
        print(table(records))
    except (KeyError, TypeError, ZeroDivisionError) as e:
        print("cluster_table: a record lacks a field the table needs: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
