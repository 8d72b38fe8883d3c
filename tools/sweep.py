#!/usr/bin/python3
"""Run a benchmark sweep: `make bench SWEEP=file` (or POINTS='...').

    sweep.py run SWEEPFILE [--out DIR] [-j N] [--cluster ADDR|local]
                 [--retry-failed] [--retry-busy] [--dry-run]
    sweep.py run --points 'workloads fork; machines spur; cpus 1-2'
    sweep.py check SWEEPFILE      check it and list its points, run nothing
    sweep.py report DIR           remake the tables, plots and report
                                  (--papers: with each paper's headline)
    sweep.py workloads            the workloads a sweep can name

The sweep file's format is in tools/harness/sweep.py and docs/sweeps.md.  Results go to build/sweeps/NAME/ unless --out says
otherwise: runs/*.json (one record per run), logs/, results.csv,
summary.csv, plots/*.png and report.html.  Running again resumes: points
that have a record are not run again.  -j N runs N batches at once
(default: one per host core); each boot still holds all of the host's
cores while it runs (tests/hostcores.py), so timings never share them,
and a point taken while another emulator ran is marked busy (greyed in
the report; --retry-busy runs it again).  --cluster hands the boots to
Dask distributed instead (an address such as tcp://host:8786, or "local"
for a LocalCluster of N worker processes).

Exit status: 0 when every point ran and succeeded, 1 when some failed,
2 for bad input (the sweep is refused before anything runs).
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))

from harness import sweep as sw  # noqa: E402
from harness import workloads as wl  # noqa: E402


def ensure_matplotlib():
    """The plots need matplotlib: Debian's serves /usr/bin/python3.  Run
    by another python3 (a pyenv one earlier on PATH) that lacks it, start
    again under /usr/bin/python3; with none, say what to install."""
    try:
        import matplotlib  # noqa: F401
        return
    except ImportError:
        pass
    debian = "/usr/bin/python3"
    if os.path.realpath(sys.executable) != os.path.realpath(debian) and os.path.exists(debian):
        os.execv(debian, [debian] + sys.argv)
    sys.exit("bench: matplotlib is missing for %s: install Debian's python3-matplotlib "
             "(sh tools/install-deps.sh), or pip install matplotlib for this python"
             % sys.executable)


def machine_of(spec):
    import tempest
    return tempest.machine(spec)


def load_sweep(args):
    if args.points is not None:
        text = args.points.replace(";", "\n")
        return sw.parse_text(text, "POINTS", machine_of, "adhoc")
    if not args.sweep:
        raise sw.SweepError("the command line", 0, "give a sweep file or --points")
    return sw.parse_file(args.sweep, machine_of)


def finish(outdir, name, stream=sys.stdout, papers=False):
    """Tables, plots and report from the records in outdir (papers: with
    each paper's headline, as a sweep named papers* always has)."""
    from harness import records, plots, report
    recs = records.load(outdir)
    if not recs:
        stream.write("bench: no records in %s\n" % outdir)
        return None
    summary = records.write_tables(outdir, recs)
    made = plots.make_all(recs, outdir)
    path = report.write(outdir, name, recs, summary, made, papers_section=papers)
    stream.write("bench: %d records, %d plots; report: %s\n" % (len(recs), len(made), path))
    return path


def cmd_run(args):
    s = load_sweep(args)
    outdir = os.path.abspath(args.out or os.path.join(ROOT, "build", "sweeps", s.name))
    if args.dry_run:
        return cmd_list(s)
    kernel = os.path.join(ROOT, "build", "kernel.elf")
    if not os.path.exists(kernel):
        print("bench: %s is missing; run make first" % kernel, file=sys.stderr)
        return 2
    os.makedirs(outdir, exist_ok=True)
    from harness import execute
    try:
        ran, failed = execute.run_sweep(s, outdir, ROOT, machine_of, jobs=args.jobs,
                                        cluster=args.cluster, retry_failed=args.retry_failed,
                                        retry_busy=args.retry_busy)
    except KeyboardInterrupt:
        try:
            print("\nbench: interrupted; run the same command again to resume", file=sys.stderr)
            finish(outdir, s.name)
        except OSError:         # the terminal is gone: the next run writes the report
            pass
        return 130
    finish(outdir, s.name)
    from harness import records
    bad = [r for r in records.load(outdir) if r["status"] != "ok"]
    if bad:
        print("bench: %d failed runs (their reasons and logs are in the report)" % len(bad))
    return 1 if bad else 0


def cmd_list(s):
    print("sweep %s: %d points, %d boots" % (s.name, len(s.points), len(s.batches())))
    for p in s.points:
        print("  " + p.id)
    return 0


def cmd_check(args):
    return cmd_list(load_sweep(args))


def cmd_report(args):
    name = os.path.basename(os.path.normpath(args.dir))
    return 0 if finish(os.path.abspath(args.dir), name, papers=args.papers) else 1


def cmd_workloads(args):
    for name in sorted(wl.WORKLOADS):
        w = wl.WORKLOADS[name]
        state = ("not yet: needs " + w.needs) if w.needs else "%s, %s" % (w.metric, w.unit)
        print("%-16s %s [%s]" % (name, w.doc, state))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description="Run, check or report a benchmark sweep.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("run", "check"):
        sp = sub.add_parser(name, help="%s a sweep" % name)
        sp.add_argument("sweep", nargs="?", help="the sweep file")
        sp.add_argument("--points", help="an ad hoc sweep on one line, lines separated by ';'")
        if name == "run":
            sp.add_argument("--out", help="results directory (default build/sweeps/NAME)")
            sp.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                            help="batches at once (default: the host's cores); each boot "
                            "holds all the cores while it runs")
            sp.add_argument("--cluster", help="Dask scheduler address, or 'local'")
            sp.add_argument("--retry-failed", action="store_true",
                            help="run failed points again")
            sp.add_argument("--retry-busy", action="store_true",
                            help="run again the points taken beside another emulator")
            sp.add_argument("--dry-run", action="store_true", help="list the points only")
    sp = sub.add_parser("report", help="remake tables, plots and report of a results directory")
    sp.add_argument("dir")
    sp.add_argument("--papers", action="store_true",
                    help="add each paper's headline beside these records (any sweep; "
                         "a sweep named papers or papers-* has it anyway)")
    sub.add_parser("workloads", help="list the workloads")
    args = ap.parse_args(argv)
    # SIGTERM (make passes it on) and SIGHUP stop the sweep as Ctrl-C
    # does: its emulators are stopped, and the next run resumes it.
    import tempest
    tempest.die_with_parent()
    tempest.stop_on_signals()
    if args.cmd in ("run", "report"):
        ensure_matplotlib()
    try:
        return {"run": cmd_run, "check": cmd_check, "report": cmd_report,
                "workloads": cmd_workloads}[args.cmd](args)
    except sw.SweepError as e:
        print("bench: refused: %s" % e, file=sys.stderr)
        return 2
    except BrokenPipeError:             # the reader (head, less) went away
        sys.stdout = open(os.devnull, "w")
        return 1
    except KeyboardInterrupt:
        print("\nbench: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
