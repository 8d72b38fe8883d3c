#!/usr/bin/env python3
"""Tests of the papers report (tools/harness/papers.py), run by make check
as the bench/papers job on the host alone: synthetic records go in, each
headline's number must come out computed as its paper computes it.
Prints PASS/FAIL lines and ends with "N passed, N failed".

    test_papers_report.py [--sweep DIR]

  measure/...    GAEDE scaling T(n)/(n T(1)) from two records, a miss
                 ratio summed over a cache's lock classes, Sprite's sched
                 lock, Tornado's slowdown, the UP build's degradation,
                 H2-MCS against spin, SALSA's two comparisons, pmake's
                 elapsed-time ratio and added throughput, Tempest/Linux,
                 the best cluster size, the herd, Figure 5's growth,
                 sysbench's 2-CPU speed-ups beside Linux's (busy runs
                 left out)
                 (each from its paper's machine only: a run on up does
                 not mix with Sprite's on spur)
  notrun/...     with no records every headline says "not run", and a
                 failed record counts as none
  page/...       report.write for a sweep named papers: every headline's
                 section, its plots as PNG files the page names, "not run"
                 for the missing ones; a sweep of another name has no
                 papers section unless asked (sweep.py report --papers)
  sweep/papers   bench/sweeps/papers is accepted by tools/sweep.py check;
                 until the other branches' workloads, kernels, options and
                 keys are merged, its blocks naming them are left out and
                 the rest must be accepted
With --sweep DIR (the results of a real sweep, e.g. one named
papers-small): its report is remade and must hold the papers section,
with at least one headline measured and every plot it names a PNG.
It runs under /usr/bin/python3 (matplotlib).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from checklib import Results  # noqa: E402
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
PAPERS_SWEEP = os.path.join(ROOT, "bench", "sweeps", "papers")


def lockstat(**classes):
    """A lockstat -j object with classes NAME=(hits, misses)."""
    return {"version": 1, "ncpus": 5, "classes": [
        {"class": name, "kind": "spin", "hits": h, "misses": m,
         "miss_ratio": m / h if h else 0.0, "wait_us": 0.0, "hold_us": 0.0}
        for name, (h, m) in classes.items()]}


def record(workload, cpus, value, kernel="tempest", options=None, machine="svr4mp",
           stats=None, result=None, higher=True, unit="ops/s", status="ok", cores=2):
    options = dict(options or {})
    optset = "linux" if kernel == "linux" else \
        ",".join("%s=%s" % kv for kv in sorted(options.items())) or "default"
    rid = "-".join([kernel, machine, "c%d" % cpus, optset, workload, "tcg", "r1"])
    return {"id": rid, "sweep": "papers", "schema": 1,
            "point": {"kernel": kernel, "machine": machine, "cpus": cpus, "options": options,
                      "optset": optset, "workload": workload, "accel": "tcg", "repeat": 1,
                      "seconds": 1.0},
            "status": status, "reason": "" if status == "ok" else "panic",
            "metric": "ops_per_s" if higher else "us_per_op", "unit": unit,
            "value": value if status == "ok" else None, "higher_is_better": higher,
            "result": result or {}, "lockstat": stats, "lockstat_series": [],
            "elapsed_s": 30.0, "started": "2026-01-01T00:00:00Z",
            "host": {"name": "test", "cores": cores, "load": 0.0, "load_after": 0.0},
            "oversubscribed": cpus > cores, "caveat": "", "machine_cpus": 5,
            "log": "logs/%s/console.txt" % rid, "cmdline": "", "kernel_build": "0"}


def section(papers, records, key):
    return {k: s for k, _, _, s in papers.sections(records)}[key]


def cell(sec, row_start, col):
    """The cell col of the first row whose first cells are row_start."""
    for row in sec.rows:
        if row[:len(row_start)] == list(row_start):
            return row[col]
    return None


def test_measures(res, papers):
    gaede = [record("gaede", 1, 100.0, cores=8), record("gaede", 5, 440.0, cores=8),
             record("gaede", 5, 300.0, options={"cache": "single"}, cores=8)]
    res.add("measure/scaling", papers.scaling(100.0, 440.0, 5) == 0.88 and
            cell(section(papers, gaede, "svr4-scaling"), ["tempest", "default", "5"], 4) == "88.0%"
            and len(section(papers, gaede, "svr4-scaling").rows) == 2,
            "rows %r" % section(papers, gaede, "svr4-scaling").rows)

    stats = lockstat(segmap_single=(1000, 120), buf_single=(500, 50), dnlc_single=(0, 0),
                     sched_global=(1000, 700), runq_cpu=(1000, 0))
    res.add("measure/lock-ratio", papers.lock_ratio(stats, papers.CACHE_CLASSES["segmap"]) == 0.12
            and papers.lock_ratio(stats, papers.CACHE_CLASSES["DNLC"]) is None
            and papers.lock_ratio(stats, papers.SCHED_CLASSES) == 0.35,
            "segmap %r, DNLC %r, sched %r" % (
                papers.lock_ratio(stats, papers.CACHE_CLASSES["segmap"]),
                papers.lock_ratio(stats, papers.CACHE_CLASSES["DNLC"]),
                papers.lock_ratio(stats, papers.SCHED_CLASSES)))

    cache = [record("gaede", 5, 400.0, options={"cache": "single"},
                    stats=lockstat(segmap_single=(1000, 120), buf_single=(1000, 100),
                                   dnlc_single=(2000, 300))),
             record("gaede", 5, 420.0, options={"cache": "ssac"},
                    stats=lockstat(segmap_row=(10000, 5), buf_group=(10000, 1),
                                   dnlc_row=(20000, 2)))]
    sec = section(papers, cache, "svr4-cache")
    res.add("measure/ssac", cell(sec, ["single", "segmap"], 2) == "12.000%"
            and cell(sec, ["ssac", "segmap"], 2) == "0.050%"
            and cell(sec, ["hashfree", "DNLC"], 2) == papers.NOT_RUN
            and "15.000%" in sec.verdict and "matches" in sec.verdict,
            "rows %r, verdict %r" % (sec.rows, sec.verdict))

    sprite = [record("cswitch", n, 1000.0, machine="spur", options={"sched": "global"},
                     stats=lockstat(sched_global=(1000, 140 * n), pipe=(1000, 10)))
              for n in (1, 5)]
    other = record("cswitch", 1, 1000.0, machine="up", options={"sched": "global"},
                   stats=lockstat(sched_global=(1000, 900)))
    sec = section(papers, sprite + [other], "sprite-sched")
    res.add("measure/sched", cell(sec, ["cswitch", "global"], 3) == "70.000%"
            and cell(sec, ["cswitch", "global"], 2) == "14.000%"
            and "sched_global" in sec.verdict, "rows %r, verdict %r" % (sec.rows, sec.verdict))

    tornado = [record("fstat", n, v, machine="numachine", higher=False, unit="us/op", cores=16)
               for n, v in ((1, 10.0), (16, 15.0))]
    sec = section(papers, tornado, "tornado-fig9")
    res.add("measure/slowdown", cell(sec, ["fstat", "tempest"], 4) == "1.5"
            and cell(sec, ["fstat", "tempest"], 2) == "10", "rows %r" % sec.rows)

    up = [record("fork", 1, 1000.0, kernel="tempest-up", machine="up"),
          record("fork", 1, 960.0, machine="up")]
    sec = section(papers, up, "svr4-up")
    res.add("measure/up", cell(sec, ["fork"], 3) == "4.0%" and "matches" in sec.verdict,
            "rows %r, verdict %r" % (sec.rows, sec.verdict))

    locks = [record("locks", 1, 1.0, machine="hector", result={"variants": {
        "spin": {"uncontended_off_cycles": 40}, "mcs": {"uncontended_off_cycles": 60},
        "h2mcs": {"uncontended_off_cycles": 48}}})]
    sec = section(papers, locks, "hurricane-h2")
    res.add("measure/h2mcs", cell(sec, ["h2mcs"], 2) == "1.2" and "1.20 times" in sec.verdict,
            "rows %r, verdict %r" % (sec.rows, sec.verdict))

    salsa = [record("memtouch", 4, 100.0, machine="willow", options={"alloc": "local"},
                    higher=False, unit="us"),
             record("memtouch", 4, 125.0, machine="willow", options={"alloc": "interleave"},
                    higher=False, unit="us"),
             record("timeslice", 4, 130.0, machine="willow", higher=False, unit="s"),
             record("spaceshare", 4, 100.0, machine="willow", higher=False, unit="s")]
    alloc, space = section(papers, salsa, "salsa-alloc"), section(papers, salsa, "salsa-space")
    res.add("measure/salsa", cell(alloc, ["4"], 3) == "25.0%" and "30.0%" in space.verdict
            and "matches" in space.verdict, "alloc %r, space %r" % (alloc.rows, space.verdict))


def test_more_measures(res, papers):
    pm = [record("pmake", n, v, machine="spur", higher=False, unit="s", cores=8)
          for n, v in ((1, 100.0), (3, 40.0), (5, 25.0))] + \
        [record("pmake", 5, 20.0, kernel="linux", machine="spur", higher=False, unit="s",
                cores=8)]
    sec = section(papers, pm, "sprite-pmake")
    res.add("measure/pmake", cell(sec, ["pmake", "tempest", "default", "5"], 5) == "4"
            and cell(sec, ["pmake", "tempest", "default", "3"], 6) == "0.75",
            "rows %r" % sec.rows)
    peer = section(papers, pm, "macro-peer")
    res.add("measure/peer", cell(peer, ["pmake", "default", "5"], 5) == "0.8"
            and cell(peer, ["pmake", "default", "1"], 5) == papers.NOT_RUN, "rows %r" % peer.rows)

    cl = [record(w, 16, v, machine="hector", options={"cluster": str(c)}, higher=False,
                 unit="us/fault", cores=16)
          for w, vals in (("fault_indep", (10.0, 20.0, 40.0)), ("fault_shared", (90.0, 30.0, 60.0)))
          for c, v in zip((1, 4, 16), vals)]
    cl.append(record("fault_indep", 16, 99.0, machine="hector", options={"lock": "spin"},
                     higher=False, unit="us/fault", cores=16))
    sec = section(papers, cl, "hurricane-cluster")
    fig7 = section(papers, cl, "hurricane-fig7")
    res.add("measure/cluster", "fault_indep is fastest at cluster size 1" in sec.verdict
            and "fault_shared is fastest at cluster size 4" in sec.verdict
            and cell(fig7, ["fault_indep", "lock=spin"], 2) == "99",
            "verdict %r, Figure 7 rows %r" % (sec.verdict, fig7.rows))

    herd = [record("herd", 5, 50.0, options={"wakeup": "all"}, higher=False, unit="ms"),
            record("herd", 5, 10.0, options={"wakeup": "one"}, higher=False, unit="ms")]
    sec = section(papers, herd, "svr4-herd")
    res.add("measure/herd", "(ratio 5)" in sec.verdict and "wake1proc wins" in sec.verdict,
            "verdict %r" % sec.verdict)

    sb = [record(w, n, v, kernel=k, machine="default") for w, k, n, v in (
        ("sysbench_threads", "tempest", 1, 100.0), ("sysbench_threads", "tempest", 2, 190.0),
        ("sysbench_threads", "linux", 1, 50.0), ("sysbench_threads", "linux", 2, 80.0),
        ("sysbench_mutex", "tempest", 1, 100.0), ("sysbench_mutex", "tempest", 2, 120.0),
        ("sysbench_mutex", "linux", 1, 100.0), ("sysbench_mutex", "linux", 2, 150.0))]
    busy = record("sysbench_mutex", 2, 500.0, machine="default")
    busy["busy"] = "another emulator"
    sec = section(papers, sb + [busy], "sysbench")
    res.add("measure/sysbench", cell(sec, ["sysbench_threads", "default"], 2) == "1.9"
            and cell(sec, ["sysbench_threads", "default"], 3) == "1.6"
            and cell(sec, ["sysbench_mutex", "default"], 2) == "1.2"
            and "below Linux's for sysbench_mutex (1.2 against 1.5)" in sec.verdict
            and "under TCG" in sec.verdict, "rows %r, verdict %r" % (sec.rows, sec.verdict))

    curve = [record("lockcurve", n, 1.0, machine="hector", cores=16, result={"variants": {
        "spin/hold0": {"response_us": 1.0 * n * n}, "mcs/hold0": {"response_us": 1.0 * n}}})
        for n in (1, 4)]
    sec = section(papers, curve, "hurricane-fig5")
    res.add("measure/fig5", "spin/hold0 grew most (16 times)" in sec.verdict
            and "as the paper found" in sec.verdict, "verdict %r" % sec.verdict)


def test_not_run(res, papers):
    secs = papers.sections([])
    bad = [k for k, _, _, s in secs if s.ran or not s.verdict.startswith(papers.NOT_RUN)]
    res.add("notrun/empty", len(secs) == len(papers.HEADLINES) and not bad,
            "headlines that did not say not run: %s" % bad)
    failed = [record("gaede", 1, 100.0, status="failed"), record("gaede", 5, 400.0,
                                                                  status="failed")]
    sec = section(papers, failed, "svr4-scaling")
    res.add("notrun/failed", not sec.ran and sec.verdict.startswith(papers.NOT_RUN),
            "rows %r, verdict %r" % (sec.rows, sec.verdict))
    busy = [record("gaede", 1, 100.0), record("gaede", 5, 440.0)]
    for r in busy:
        r["busy"] = "other emulators running: 1 before the boot, 0 after"
    sec = section(papers, busy, "svr4-scaling")
    res.add("notrun/busy", not sec.ran and sec.verdict.startswith(papers.NOT_RUN),
            "a headline computed from points taken on a busy host: rows %r" % (sec.rows,))


def _page(tmp, name, records, forced=False):
    from harness import records as rec, report
    os.makedirs(os.path.join(tmp, "plots"), exist_ok=True)
    path = report.write(tmp, name, records, rec.summarize(records), [], papers_section=forced)
    with open(path) as f:
        return f.read()


def _pngs_named(outdir, page):
    named = re.findall(r"src='plots/([^']+)'", page)
    bad = []
    for n in named:
        try:
            with open(os.path.join(outdir, "plots", n), "rb") as f:
                if f.read(8) != b"\x89PNG\r\n\x1a\n":
                    bad.append(n)
        except OSError:
            bad.append(n)
    return named, bad


def test_page(res, papers, tmp):
    records = [record("gaede", 1, 100.0, cores=8), record("gaede", 5, 440.0, cores=8)] + \
        [record("cswitch", n, 1000.0, machine="spur", options={"sched": s},
                stats=lockstat(sched_global=(1000, 100 * n), runq_cpu=(1000, 10 * n)))
         for n in (1, 2) for s in ("global", "percpu")] + \
        [record("gaede", 5, 400.0, options={"cache": "single"}, cores=8,
                stats=lockstat(segmap_single=(1000, 120), dnlc_single=(100, 10)))]
    out = os.path.join(tmp, "papers")
    page = _page(out, "papers", records)
    titles = [h[1] for h in papers.HEADLINES if _e(h[1]) not in page]
    res.add("page/headlines", "Each paper's headline" in page and not titles,
            "missing sections: %s" % titles)
    named, bad = _pngs_named(out, page)
    res.add("page/plots", "plots/paper-svr4-scaling.png" in page and
            "plots/paper-svr4-cache.png" in page and
            "plots/paper-sprite-sched.png" in page and named and not bad,
            "named %s, not PNG %s" % (named, bad))
    res.add("page/not-run", page.count(papers.NOT_RUN) >= 5 and
            "plots/paper-salsa" not in page, "the page says 'not run' %d times"
            % page.count(papers.NOT_RUN))
    other = _page(os.path.join(tmp, "smoke"), "smoke", records)
    res.add("page/only-papers", "Each paper's headline" not in other and "Sweep smoke" in other,
            "a sweep named smoke got the papers section")
    forced = _page(os.path.join(tmp, "sprite"), "sprite", records, forced=True)
    res.add("page/forced", "Each paper's headline" in forced and "Sweep sprite" in forced,
            "sweep.py report --papers on a sweep named sprite has no papers section")


def _e(s):
    import html
    return html.escape(s)


def test_sweep(res):
    """bench/sweeps/papers is accepted whole: every workload, kernel, option
    and key it names exists."""
    p = subprocess.run([PYTHON, os.path.join(ROOT, "tools", "sweep.py"), "check", PAPERS_SWEEP],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120,
                       stdin=subprocess.DEVNULL)
    out = p.stdout.decode(errors="replace")
    res.add("sweep/papers", p.returncode == 0 and "sweep papers:" in out, out.strip()[-300:])


def test_real_sweep(res, papers, outdir):
    p = subprocess.run([PYTHON, os.path.join(ROOT, "tools", "sweep.py"), "report", outdir],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300,
                       stdin=subprocess.DEVNULL)
    try:
        with open(os.path.join(outdir, "report.html")) as f:
            page = f.read()
    except OSError as e:
        res.add("real/report", False, "exit %d, %s" % (p.returncode, e))
        return
    named, bad = _pngs_named(outdir, page)
    verdicts = re.findall(r"<p class='verdict'>([^<]*)</p>", page)
    measured = [v for v in verdicts if not v.startswith(papers.NOT_RUN)]
    res.add("real/report", p.returncode == 0 and "Each paper's headline" in page and measured
            and named and not bad, "exit %d, %d headlines measured, plots %s, bad %s"
            % (p.returncode, len(measured), named, bad))


def ensure_matplotlib():
    """The report draws with Debian's matplotlib: under another python3
    that lacks it, start again under /usr/bin/python3."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        if os.path.realpath(sys.executable) != os.path.realpath(PYTHON):
            os.execv(PYTHON, [PYTHON] + sys.argv)


def main(argv=None):
    ensure_matplotlib()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sweep", metavar="DIR", help="also remake and check this results "
                    "directory's report (a real papers-* sweep)")
    args = ap.parse_args(argv)
    try:
        from harness import papers
    except ImportError as e:
        print("FAIL bench/papers: cannot import the report (%s); run under /usr/bin/python3" % e)
        print("0 passed, 1 failed")
        return 1
    res = Results()
    tests = [("measure", lambda tmp: test_measures(res, papers)),
             ("measure-more", lambda tmp: test_more_measures(res, papers)),
             ("notrun", lambda tmp: test_not_run(res, papers)),
             ("page", lambda tmp: test_page(res, papers, tmp)),
             ("sweep", lambda tmp: test_sweep(res))]
    if args.sweep:
        tests.append(("real", lambda tmp: test_real_sweep(res, papers, os.path.abspath(args.sweep))))
    with tempfile.TemporaryDirectory(prefix="papers-test-") as tmp:
        for name, fn in tests:
            try:
                fn(tmp)
            except Exception as e:      # a bug in the report: one FAIL line, not a traceback
                res.add(name + "/raised", False, "%s: %s" % (type(e).__name__, e))
    print("%d passed, %d failed" % (res.passed, res.failed))
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
