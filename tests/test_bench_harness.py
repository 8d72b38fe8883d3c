#!/usr/bin/env python3
"""Tests of the benchmark harness (tools/sweep.py, tools/harness/), run by
make check as the bench/... jobs; prints PASS/FAIL lines and ends with
"N passed, N failed".

    test_bench_harness.py [--host-only] [--out DIR] [-v]

Host only (no emulator):
  refuse/...     bad sweep files are refused before anything runs, with
                 exit status 2, the file, the line and the reason
  expand/...     a sweep's points: CPU counts clipped to each machine,
                 "and" blocks, Linux points without option sets, the
                 kernel-only workloads left off Linux
  expand/tempest-up, refuse/tempest-up-cpus
                 the uniprocessor kernel's points: cpus 1 only
  host/...       herd, gang (timeslice, spaceshare) and memtouch run on
                 the host's Linux with the commands their workloads give
  summary        medians, extremes and spread over repeats
With emulators (about a minute on two cores):
  smoke/...      bench/sweeps/smoke run from scratch: a record for every
                 point, each ok, with the fields the README promises and
                 Tempest's lock statistics, booted with only the point's
                 CPUs online (maxcpus=); results.csv and summary.csv
                 agree with the records; every plot a PNG; a workload
                 Linux ran too is drawn once, beside Linux with the
                 ratio beneath; the report names every plot
  browser/...    chromium (headless) opens the report: a screenshot is
                 taken and every plot image loaded
  resume/dask    two points' records removed and the sweep run again on a
                 Dask LocalCluster: only those run, the others are left as
                 they were
  failed/...     a point that panics (crash=panic) is recorded as failed
                 with its reason and log, and the sweep goes on to the next
  quiet/...      two timing points with the default settings (-j 2 on two
                 cores) boot one after the other, each holding all of the
                 host's cores
  stopped/...    a sweep of Tempest and Linux points sent SIGTERM (as make
                 passes it on) while an emulator runs, after a point is
                 recorded: it ends within seconds, leaving no process
                 behind; run again, it resumes: only the points not yet
                 recorded run, and every point ends ok
  busy/...       a point booted while another emulator (a stand-in named
                 qemu-system-x86_64) runs is marked busy with the reason,
                 the sweep warns of it at the start, the report greys it
The harness itself runs under /usr/bin/python3, whose Debian packages
(matplotlib, Dask) it uses.
"""

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWEEP = os.path.join(ROOT, "tools", "sweep.py")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
SMOKE = os.path.join(ROOT, "bench", "sweeps", "smoke")
RECORD_FIELDS = ("id", "sweep", "point", "status", "reason", "metric", "unit", "value",
                 "result", "lockstat", "elapsed_s", "host", "oversubscribed", "accel", "log")
T_SWEEP = 600
# The smoke sweep's workloads that Linux runs too.
PEER_WORKLOADS = ("fork", "cswitch")


class Results:
    def __init__(self, verbose=False):
        self.passed = self.failed = 0
        self.verbose = verbose

    def add(self, name, ok, why=""):
        if ok:
            self.passed += 1
            print("PASS %s" % name, flush=True)
        else:
            self.failed += 1
            print("FAIL %s: %s" % (name, why or "failed"), flush=True)


def sweep_cmd(args, timeout=T_SWEEP):
    p = subprocess.run([PYTHON, SWEEP] + args, cwd=ROOT, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=timeout, stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout.decode(errors="replace")


# ---- host only ----------------------------------------------------------------

BAD_SWEEPS = [
    ("workload", "workloads fork nosuch\nmachines default\ncpus 1\n", 1, "unknown workload 'nosuch'"),
    ("option", "workloads fork\nmachines default\ncpus 1\noptions lokc=spin\n", 4,
     "unknown option 'lokc'"),
    ("value", "workloads fork\nmachines default\ncpus 1\noptions lock=spin,ticket\n", 4,
     "bad value 'ticket' for lock="),
    ("machine", "workloads fork\nmachines hectr\ncpus 1\n", 2, "machine 'hectr'"),
    ("adhoc-machine", "workloads fork\nmachines cpus=3,nodes=2\ncpus 1\n", 2, "cpus=3,nodes=2"),
    ("key", "workloads fork\nmachine default\n", 2, "unknown key 'machine'"),
    ("cpus", "workloads fork\nmachines default\ncpus 2-1\n", 3, "bad CPU range"),
    ("cpus-none", "workloads fork\nmachines up\ncpus 2-4\n", 3, "none of the counts"),
    ("kernel", "workloads fork\nmachines up\ncpus 1\nkernels tempest bsd\n", 4, "unknown kernel 'bsd'"),
    ("accel", "workloads fork\nmachines up\ncpus 1\naccel hvf\n", 4, "unknown accelerator"),
    ("threads", "workloads fstat_mt\nmachines up\ncpus 1\n", 1, "needs a multithreaded driver"),
    ("repeats", "workloads fork\nmachines up\ncpus 1\nrepeats 0\n", 4, "bad repeats"),
    ("missing", "workloads fork\ncpus 1\n", 1, "no 'machines' line"),
]


def test_refusals(res, tmp):
    for name, text, line, reason in BAD_SWEEPS:
        path = os.path.join(tmp, "bad-" + name)
        with open(path, "w") as f:
            f.write(text)
        rc, out = sweep_cmd(["run", path, "--out", os.path.join(tmp, "never")], 60)
        want = "%s:%d: " % (path, line)
        ok = rc == 2 and want in out and reason in out and "Traceback" not in out \
            and not os.path.exists(os.path.join(tmp, "never"))
        res.add("refuse/" + name, ok, "exit %d, printed %r (want %r and %r)"
                % (rc, out.strip()[-200:], want, reason))


def test_expansion(res):
    text = ("workloads fork locks\nmachines up default\ncpus 1-8\noptions lock=spin,mcs\n"
            "and\nkernels linux\nworkloads fork\nmachines default\ncpus 2\n")
    rc, out = sweep_cmd(["check", "--points", text.replace("\n", ";")], 60)
    ids = re.findall(r"^  (\S+)$", out, re.M)
    # up: 1 cpu x 2 sets x 2 workloads = 4; default: 4 cpus x 2 x 2 = 16;
    # Linux: fork at 2 cpus, one point, no option set, no locks.
    want = {"tempest-up-c1-lock+spin-fork-tcg-r1", "tempest-default-c4-lock+mcs-locks-tcg-r1",
            "linux-default-c2-linux-fork-tcg-r1"}
    ok = rc == 0 and len(ids) == 21 and want <= set(ids) and \
        not any(i.startswith("linux") and "locks" in i for i in ids) and \
        not any("-c5-" in i for i in ids)
    res.add("expand/points", ok, "exit %d, %d points: %s" % (rc, len(ids), out[-300:]))


def test_expansion_up(res):
    """The uniprocessor kernel (make UP=1) runs at one CPU only."""
    text = "kernels tempest tempest-up\nworkloads fork\nmachines up default\ncpus 1-2\n"
    rc, out = sweep_cmd(["check", "--points", text.replace("\n", ";")], 60)
    ids = set(re.findall(r"^  (\S+)$", out, re.M))
    want = {"tempest-up-c1-default-fork-tcg-r1", "tempest-default-c2-default-fork-tcg-r1",
            "tempest-up-up-c1-default-fork-tcg-r1", "tempest-up-default-c1-default-fork-tcg-r1"}
    res.add("expand/tempest-up", rc == 0 and len(ids) == 5 and want <= ids,
            "exit %d, %d points: %s" % (rc, len(ids), out[-300:]))
    rc, out = sweep_cmd(["check", "--points", "kernels tempest-up;workloads fork;"
                         "machines default;cpus 2"], 60)
    res.add("refuse/tempest-up-cpus", rc == 2 and "must include 1" in out,
            "exit %d: %s" % (rc, out[-300:]))


# The papers' workloads run on the host's Linux as the harness writes their
# commands (tools/harness/workloads.py), /bench being build/bench here:
# (workload, cpus, seconds, check of the result's fields).
HOST_RUNS = [
    ("herd", 2, 0.3, lambda f: f["ops"] > 0 and f["ops_per_s"] > 0 and f["procs"] == 16),
    ("timeslice", 2, 0.2, lambda f: f["mode"] == "timeslice" and
     0 < max(f["a_s"], f["b_s"]) <= f["elapsed_s"]),
    ("spaceshare", 2, 0.2, lambda f: f["mode"] == "spaceshare" and
     0 < max(f["a_s"], f["b_s"]) <= f["elapsed_s"]),
    ("memtouch", 2, 0.25, lambda f: f["ops"] == 2 * 1024 * 2 and f["us_per_op"] > 0),
]


def test_host_runs(res):
    """Each new bench program on the host: its workload's command gives a
    result line with sane fields; --help exits 0, a bad flag 2."""
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    from harness import workloads as wl
    bench = os.path.join(ROOT, "build", "bench")
    r = subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "bench"), "BUILD=" + bench],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        res.add("host/build", False, r.stdout.decode(errors="replace")[-300:])
        return
    for name, cpus, secs, ok in HOST_RUNS:
        argv = wl.WORKLOADS[name].command(cpus, secs).split()
        argv[0] = argv[0].replace("/bench", bench, 1)
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
        out = p.stdout.decode(errors="replace")
        fields = wl.parse_result(out)
        good = p.returncode == 0 and fields is not None and "error" not in fields
        try:
            good = good and ok(fields)
        except (KeyError, TypeError):
            good = False
        res.add("host/" + name, good, "exit %d: %s" % (p.returncode, out.strip()[-300:]))
    for prog in ("herd", "gang", "memtouch"):
        h = subprocess.run([os.path.join(bench, prog), "--help"], stdout=subprocess.PIPE)
        b = subprocess.run([os.path.join(bench, prog), "-q", "1"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        res.add("host/%s/usage" % prog, h.returncode == 0 and b"usage:" in h.stdout and
                b.returncode == 2 and b"usage:" in b.stderr,
                "--help exit %d, bad flag exit %d" % (h.returncode, b.returncode))


def test_summary(res):
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    from harness import records
    def rec(v, rep, status="ok"):
        return {"point": {"kernel": "tempest", "machine": "up", "cpus": 1, "optset": "default",
                          "workload": "fork", "accel": "tcg", "repeat": rep},
                "status": status, "value": v, "metric": "ops_per_s", "unit": "ops/s",
                "oversubscribed": False}
    two = dict(rec(50.0, 1), point=dict(rec(0, 1)["point"], cpus=2))
    rows = records.summarize([rec(10.0, 1), rec(30.0, 2), rec(20.0, 3), rec(None, 4, "failed"), two])
    r = rows[0] if len(rows) == 2 else {}
    ok = r.get("median") == 20.0 and r.get("min") == 10.0 and r.get("max") == 30.0 \
        and r.get("spread") == 1.0 and r.get("runs") == 4 and r.get("failed") == 1 \
        and r.get("vs_1cpu") == 1.0 and rows[1].get("vs_1cpu") == 2.5
    res.add("summary", ok, "got %r" % rows)


# ---- with emulators -------------------------------------------------------------

def _records(outdir):
    out = {}
    for name in sorted(os.listdir(os.path.join(outdir, "runs"))):
        if name.endswith(".json"):
            with open(os.path.join(outdir, "runs", name)) as f:
                out[name[:-5]] = json.load(f)
    return out


def _expected_ids():
    rc, out = sweep_cmd(["check", SMOKE], 60)
    return set(re.findall(r"^  (\S+)$", out, re.M)) if rc == 0 else set()


def online_as_asked(log, n):
    """Whether a console shows n CPUs online and no node holding CPU n or
    above (maxcpus=n)."""
    text = open(log).read()
    if not re.search(r"^smp: %d cpus online$" % n, text, re.M):
        return False
    for cpus in re.findall(r"^numa: node \d+ cpus (\S+)", text, re.M):
        for part in cpus.split(","):
            if part != "none" and int(part.split("-")[-1]) >= n:
                return False
    return True


def series_ok(rec):
    """A Tempest user record's lockstat -i series (the smoke sweep asks for
    intervals): intervals numbered 1.. in order, each later than the one
    before, each with its classes, and no interval's hits for a class above
    the whole run's."""
    series = rec.get("lockstat_series") or []
    if not series:
        return False
    whole = {c["class"]: c["hits"] for c in (rec["lockstat"] or {}).get("classes", [])}
    t = 0.0
    for i, obj in enumerate(series, 1):
        if obj.get("interval") != i or obj["t_end"] < obj["t_start"] or obj["t_start"] < t:
            return False
        t = obj["t_end"]
        if any(c["hits"] > whole.get(c["class"], c["hits"]) for c in obj.get("classes", [])):
            return False
    return True


def check_records(res, outdir, want):
    recs = _records(outdir)
    res.add("smoke/records", set(recs) == want and want,
            "records %d, points %d; missing %s" % (len(recs), len(want), sorted(want - set(recs))[:3]))
    bad = [i for i, r in recs.items() if r["status"] != "ok"]
    res.add("smoke/ok", not bad and recs, "failed: %s" % ["%s: %s" % (i, recs[i]["reason"])
                                                          for i in bad[:3]])
    missing = [(i, f) for i, r in recs.items() for f in RECORD_FIELDS if f not in r]
    res.add("smoke/fields", not missing, "missing %s" % missing[:5])
    values = [i for i, r in recs.items() if r["status"] == "ok" and not (
        isinstance(r["value"], (int, float)) and r["value"] > 0)]
    res.add("smoke/values", not values, "no positive value in %s" % values[:3])
    user = [r for r in recs.values() if r["point"]["kernel"] == "tempest"
            and r["point"]["workload"] not in ("locks", "lockcurve")]
    nolocks = [r["id"] for r in user if not (r["lockstat"] or {}).get("classes")
               or not any(c["hits"] > 0 for c in r["lockstat"]["classes"])]
    res.add("smoke/lockstat", user and not nolocks, "no lock classes with hits in %s" % nolocks[:3])
    res.add("smoke/series", user and not [r["id"] for r in user if not series_ok(r)],
            "a bad lockstat -i series in %s" % [r["id"] for r in user if not series_ok(r)][:3])
    linux = [r for r in recs.values() if r["point"]["kernel"] == "linux"]
    res.add("smoke/linux", linux and all(r["lockstat"] is None for r in linux),
            "%d Linux records" % len(linux))
    logs = [r["id"] for r in recs.values() if not os.path.getsize(os.path.join(outdir, r["log"]))]
    res.add("smoke/logs", not logs, "empty console logs: %s" % logs[:3])
    cpus = [r["id"] for r in recs.values() if r["point"]["kernel"] == "tempest"
            and not online_as_asked(os.path.join(outdir, r["log"]), r["point"]["cpus"])]
    res.add("smoke/maxcpus", not cpus, "the console does not say 'smp: N cpus online' with the "
            "point's N (maxcpus=), or a numa: line lists a CPU beyond it: %s" % cpus[:3])
    host = [r["id"] for r in recs.values()
            if r["oversubscribed"] != (r["point"]["cpus"] > r["host"]["cores"])]
    res.add("smoke/oversubscribed", not host, "wrong mark in %s" % host[:3])
    return recs


def check_tables(res, outdir, recs):
    try:
        with open(os.path.join(outdir, "results.csv")) as f:
            rows = list(csv.DictReader(f))
        with open(os.path.join(outdir, "summary.csv")) as f:
            summary = list(csv.DictReader(f))
    except OSError as e:
        res.add("smoke/csv", False, str(e))
        return
    by_id = {r["id"]: r for r in rows}
    agree = set(by_id) == set(recs) and all(
        float(by_id[i]["value"]) == recs[i]["value"] for i in recs if recs[i]["status"] == "ok")
    res.add("smoke/csv", agree, "results.csv has %d rows for %d records" % (len(rows), len(recs)))
    groups = {(r["point"]["kernel"], r["point"]["cpus"], r["point"]["optset"],
               r["point"]["workload"]) for r in recs.values()}
    res.add("smoke/summary", len(summary) == len(groups) and all(s["median"] for s in summary),
            "%d summary rows for %d points" % (len(summary), len(groups)))


def check_plots(res, outdir):
    pdir = os.path.join(outdir, "plots")
    plots = sorted(os.listdir(pdir)) if os.path.isdir(pdir) else []
    notpng = []
    for p in plots:
        with open(os.path.join(pdir, p), "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                notpng.append(p)
    kinds = {p.split("-")[0] for p in plots}
    want = {"metric", "locks", "peer", "scaling", "figure5"}
    res.add("smoke/plots", plots and not notpng and want <= kinds,
            "%d plots, kinds %s (want %s), not PNG: %s" % (len(plots), sorted(kinds),
                                                           sorted(want), notpng))
    # What both kernels ran is drawn once, Linux beside Tempest on one scale.
    twice = [p for p in plots if p.startswith(tuple("metric-%s-" % w for w in PEER_WORKLOADS))]
    peers = ["peer-%s-default-tcg.png" % w for w in PEER_WORKLOADS]
    res.add("smoke/plots/once", not twice and all(p in plots for p in peers),
            "drawn apart: %s; peer plots missing: %s" % (twice, [p for p in peers
                                                                 if p not in plots]))
    try:
        with open(os.path.join(outdir, "report.html")) as f:
            page = f.read()
    except OSError as e:
        res.add("smoke/report", False, str(e))
        return plots
    named = re.findall(r"src='plots/([^']+)'", page)
    res.add("smoke/report", sorted(named) == plots and "Sweep smoke" in page,
            "the report shows %d images for %d plots" % (len(named), len(plots)))
    return plots


def check_browser(res, outdir, plots):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        res.add("browser/chromium", False, "chromium is not installed (tools/install-deps.sh)")
        return
    url = "file://" + os.path.join(outdir, "report.html")
    shot = os.path.join(outdir, "screenshot.png")
    common = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
              "--virtual-time-budget=10000", "--user-data-dir=" + os.path.join(outdir, ".chromium")]
    try:
        subprocess.run(common + ["--window-size=1280,2000", "--screenshot=" + shot, url],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        dom = subprocess.run(common + ["--dump-dom", url], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, timeout=120).stdout.decode(errors="replace")
    except subprocess.TimeoutExpired:
        res.add("browser/chromium", False, "chromium did not finish in 120 s")
        return
    size = os.path.getsize(shot) if os.path.exists(shot) else 0
    res.add("browser/screenshot", size > 10000, "screenshot of %d bytes" % size)
    m = re.search(r'id="plots-loaded">(\d+) of (\d+) plots loaded', dom)
    res.add("browser/images", m and int(m.group(1)) == int(m.group(2)) == len(plots),
            "the page says %r for %d plots" % (m.group(0) if m else "nothing", len(plots)))


def test_resume_dask(res, outdir, recs):
    victims = sorted(i for i in recs if i.startswith("tempest-default-c1-lock+spin-"))[:2]
    keep = {i: os.path.getmtime(os.path.join(outdir, "runs", i + ".json")) for i in recs
            if i not in victims}
    for v in victims:
        os.remove(os.path.join(outdir, "runs", v + ".json"))
    rc, out = sweep_cmd(["run", SMOKE, "--out", outdir, "--cluster", "local", "-j", "1"])
    after = _records(outdir)
    again = all(v in after and after[v]["status"] == "ok" for v in victims)
    untouched = all(os.path.getmtime(os.path.join(outdir, "runs", i + ".json")) == t
                    for i, t in keep.items())
    said = re.search(r"%d points in 1 boots to run" % len(victims), out)
    res.add("resume/dask", rc == 0 and len(victims) == 2 and again and untouched and said,
            "exit %d, rerun %s, others untouched %s: %s" % (rc, again, untouched,
                                                            out.strip()[-300:]))


def test_failed(res, tmp):
    out = os.path.join(tmp, "failing")
    text = "name failing;workloads fork;machines up;cpus 1;options crash=panic,none;" \
           "seconds 0.1;timeout 120"
    rc, printed = sweep_cmd(["run", "--points", text, "--out", out, "-j", "1"])
    recs = _records(out) if os.path.isdir(os.path.join(out, "runs")) else {}
    bad = [r for r in recs.values() if r["point"]["options"].get("crash") == "panic"]
    good = [r for r in recs.values() if r["point"]["options"].get("crash") == "none"]
    res.add("failed/recorded", rc == 1 and len(bad) == 1 and bad[0]["status"] == "failed"
            and "panic" in bad[0]["reason"].lower()
            and os.path.getsize(os.path.join(out, bad[0]["log"])) > 0,
            "exit %d, records %s" % (rc, [(r["id"], r["status"], r["reason"]) for r in recs.values()]))
    res.add("failed/goes-on", len(good) == 1 and good[0]["status"] == "ok",
            "the other point: %s" % [(r["status"], r["reason"]) for r in good])
    res.add("failed/report", os.path.exists(os.path.join(out, "report.html")) and "Failed runs"
            in open(os.path.join(out, "report.html")).read(), "no report")


def test_stopped(res, tmp):
    import signal
    import time
    from ptyrun import note_tree, still_running
    out = os.path.join(tmp, "stopped")
    text = ("name stopped;workloads fork cswitch;machines default;cpus 1 2;kernels tempest linux;"
            "seconds 0.3;timeout 120")
    proc = subprocess.Popen([PYTHON, SWEEP, "run", "--points", text, "--out", out, "-j", "1"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    seen, why = {}, ""
    deadline = time.monotonic() + T_SWEEP
    try:
        # Wait for a record, then for the next emulator to be running.
        while time.monotonic() < deadline and proc.poll() is None:
            note_tree(proc.pid, seen)
            done = len(_records(out)) if os.path.isdir(os.path.join(out, "runs")) else 0
            if done and any("qemu" in line for _, line in still_running(seen)):
                break
            time.sleep(0.1)
        if proc.poll() is not None:
            why = "the sweep ended before it could be stopped"
        else:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                why = "still running 20 s after SIGTERM"
            time.sleep(1)
            left = still_running(seen)
            if left and not why:
                why = "left running: %s" % ", ".join("%d %s" % (p, l[:50]) for p, l in left)
    finally:
        for pid, _ in still_running(seen):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    res.add("stopped/nothing-left", not why, why)
    before = set(_records(out)) if os.path.isdir(os.path.join(out, "runs")) else set()
    rc, printed = sweep_cmd(["run", "--points", text, "--out", out, "-j", "1"])
    recs = _records(out) if os.path.isdir(os.path.join(out, "runs")) else {}
    resumed = re.search(r"(\d+) of (\d+) already done", printed)
    ok = rc == 0 and len(recs) == 8 and all(r["status"] == "ok" for r in recs.values()) \
        and resumed is not None and int(resumed.group(1)) == len(before) > 0
    res.add("stopped/resumed", ok, "exit %d, %d records before, %d after (%s): %s"
            % (rc, len(before), len(recs), resumed.group(0) if resumed else "no resume line",
               printed.strip()[-200:]))


def quiet_env(tmp):
    """The environment of a sweep with host-core slots of its own (make
    check runs this script with the slots off: it holds them all)."""
    env = dict(os.environ)
    env["TEMPEST_CORES_DIR"] = os.path.join(tmp, "cores")
    return env


def test_quiet(res, tmp):
    """Two timing points with the default settings (-j 2 on two cores)
    boot one after the other, each holding every host core."""
    out = os.path.join(tmp, "quiet")
    text = "name quiet;workloads fork;machines up;cpus 1;options lock=spin,mcs;" \
           "seconds 0.1;timeout 120"
    p = subprocess.run([PYTHON, SWEEP, "run", "--points", text, "--out", out], cwd=ROOT,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=T_SWEEP,
                       stdin=subprocess.DEVNULL, env=quiet_env(tmp))
    recs = list(_records(out).values()) if os.path.isdir(os.path.join(out, "runs")) else []
    spans = sorted((r["host"].get("boot_start"), r["host"].get("boot_end")) for r in recs)
    ok = p.returncode == 0 and len(recs) == 2 and all(a and b for a, b in spans)
    res.add("quiet/ran", ok, "exit %d, %d records: %s" % (
        p.returncode, len(recs), p.stdout.decode(errors="replace").strip()[-300:]))
    if not ok:
        return
    res.add("quiet/apart", spans[0][1] <= spans[1][0],
            "the two boots overlapped in time: %s" % spans)
    cores = len(os.sched_getaffinity(0))
    held = [r["host"].get("cores_held") for r in recs]
    res.add("quiet/cores", all(h == list(range(cores)) for h in held),
            "cores held %s, want all %d of the host's" % (held, cores))


def test_busy(res, tmp):
    """A point booted while another emulator runs is marked busy, the sweep
    warns at its start, and the report greys it with the reason."""
    fake = os.path.join(tmp, "qemu-system-x86_64")
    shutil.copy("/bin/sleep", fake)
    other = subprocess.Popen([fake, "120"])
    try:
        out = os.path.join(tmp, "busy")
        text = "name busy;workloads fork;machines up;cpus 1;seconds 0.1;timeout 120"
        p = subprocess.run([PYTHON, SWEEP, "run", "--points", text, "--out", out], cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=T_SWEEP,
                           stdin=subprocess.DEVNULL, env=quiet_env(tmp))
    finally:
        other.kill()
        other.wait()
    printed = p.stdout.decode(errors="replace")
    recs = list(_records(out).values()) if os.path.isdir(os.path.join(out, "runs")) else []
    busy = [r for r in recs if r.get("busy")]
    res.add("busy/marked", len(recs) == 1 and len(busy) == 1
            and other.pid in busy[0]["host"]["emulators_before"],
            "records %s" % [(r["id"], r.get("busy")) for r in recs])
    res.add("busy/warned", "bench: warning: " in printed and str(other.pid) in printed,
            "no warning naming pid %d: %s" % (other.pid, printed.strip()[-300:]))
    page = os.path.join(out, "report.html")
    text = open(page).read() if os.path.exists(page) else ""
    res.add("busy/report", bool(busy) and 'class="busy"' in text and busy[0]["id"] in text
            and "other emulators running" in text, "the report does not grey the busy point")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host-only", action="store_true", help="only the tests without emulators")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "check", "bench-smoke"),
                    help="where the smoke sweep's results go (emptied first)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    res = Results(args.verbose)
    with tempfile.TemporaryDirectory(prefix="bench-test-") as tmp:
        test_refusals(res, tmp)
        test_expansion(res)
        test_expansion_up(res)
        test_host_runs(res)
        test_summary(res)
        if not args.host_only:
            if not os.path.exists(os.path.join(ROOT, "build", "kernel.elf")):
                res.add("smoke", False, "build/kernel.elf is missing; run make first")
            else:
                shutil.rmtree(args.out, ignore_errors=True)
                rc, out = sweep_cmd(["run", SMOKE, "--out", args.out, "-j", "1"])
                if args.verbose:
                    print(out)
                res.add("smoke/run", rc == 0 and "report:" in out,
                        "exit %d: %s" % (rc, out.strip()[-400:]))
                recs = check_records(res, args.out, _expected_ids())
                check_tables(res, args.out, recs)
                plots = check_plots(res, args.out)
                check_browser(res, args.out, plots)
                test_resume_dask(res, args.out, recs)
                test_failed(res, tmp)
                test_quiet(res, tmp)
                test_stopped(res, tmp)
                test_busy(res, tmp)
    print("%d passed, %d failed" % (res.passed, res.failed))
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
