#!/usr/bin/env python3
"""Tests of the harness's macro kind (tools/harness/macro.py,
macro_pmake.py, bench/pmake.c), run by make check as the bench/macro job;
prints PASS/FAIL lines and ends with "N passed, N failed".

    test_macro_harness.py [--host-only] [--out DIR] [-v]

Host only (no emulator):
  names/...      the kernel sources staged for S5: every path component
                 at most 14 bytes, shortened names unique, an #include of
                 a shortened header rewritten
  tree           the staged tree's Makefile names one object per C file
                 picked, with the top Makefile's KCFLAGS
  sprite         Sprite's measures from made-up times: elapsed-time ratio,
                 processor units, incremental throughput, fixed and scaled;
                 sprite/rows: from records, medians, failed ones left out
  sweep/...      the users and files keys: counts per CPU, ids, refusals
  scripts        a batch's guest scripts: marker lines, mount commands per
                 kernel and file system, lockstat on Tempest only, the
                 guest's CPU times read before and after on both
  guest_cpu/...  those times read back: made-up /proc/stat lines of
                 Linux's and Tempest's give exact seconds, a missing line
                 none, the host's own around a busy loop some; GAEDE's
                 scaling rows carry the medians per script
  sysbench/...   each sysbench workload's command run on the host with
                 the host's sysbench (Debian's, as in the guests) for a
                 second: its bench line with a positive ops_per_s (fileio
                 in a directory prepared as the point's setup does);
                 sysbench/speedups: the 2-CPU speed-up from records,
                 medians, busy and failed ones left out
  redis/host     the redis point's setup and command with the host's
                 redis-server and redis-benchmark (Debian's) on a port of
                 its own: its bench line, both rates positive
  pmake/...      bench/pmake run on the host with the host's make and gcc
                 on a few staged files: its result line, objects counted;
                 pmakeind on two copies; a broken file gives error=make
                 and exit 1; a missing Makefile error=no_makefile
With emulators (about two minutes of emulator time):
  smoke/...      bench/sweeps/macro-smoke run from scratch: pmake of a
                 subset of the kernel's C files on the Debian root at 2
                 CPUs, Tempest and the Linux peer: each record ok, its
                 elapsed_s positive, files as the sweep asked, an object
                 per file, Tempest's with lock statistics, Linux's without;
                 and GAEDE with 2 users on svr4mp on Tempest: both users
                 finished scripts, none failed, the rate is the count
                 over the time, with lock statistics and the guest's CPU
                 seconds (together about the run's length on each CPU);
                 and sysbench fileio
                 at 2 CPUs for 2 s on both kernels: its rate is the reads
                 and writes it printed, over the time asked, Tempest's
                 with lock statistics
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from harness import (macro, macro_gaede, macro_pgbench, macro_pmake, macro_redis,  # noqa: E402
                     macro_sysbench, runner)
from checklib import Results  # noqa: E402

SWEEP = os.path.join(ROOT, "tools", "sweep.py")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
SMOKE = os.path.join(ROOT, "bench", "sweeps", "macro-smoke")
PMAKE = os.path.join(ROOT, "build", "bench", "pmake")
T_SWEEP = 1500



def sweep_cmd(args, timeout=60):
    p = subprocess.run([PYTHON, SWEEP] + args, cwd=ROOT, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=timeout, stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout.decode(errors="replace")


# ---- host only ----------------------------------------------------------------

def test_names(res):
    cfiles, headers = macro_pmake.kernel_sources()
    renamed = macro_pmake.short_names(cfiles + headers)
    final = [renamed.get(p, p) for p in cfiles + headers]
    too_long = [p for p in final if any(len(x) > 14 for x in p.split("/"))]
    res.add("names/s5", cfiles and not too_long and len(set(final)) == len(final),
            "%d files, too long after shortening: %s" % (len(final), too_long[:3]))
    made = macro_pmake.short_names(["a/averyveryverylongname.c", "a/averyveryverylongnamf.c",
                                    "a/averyveryve1.c", "b/short.c"])
    res.add("names/unique", len(set(made.values())) == 2 and "b/short.c" not in made
            and all(len(v.split("/")[-1]) <= 14 and v.endswith(".c") for v in made.values())
            and "a/averyveryve1.c" not in made.values(), "got %r" % made)
    text = '#include <kern/tests/header_name_long.h>\n#include "kern/x.h"\n'
    out = macro_pmake.rewrite_includes(text, {"kern/tests/header_name_long.h":
                                              "kern/tests/header_nam1.h"})
    res.add("names/include", "<kern/tests/header_nam1.h>" in out and '"kern/x.h"' in out,
            "got %r" % out)


def test_tree(res, tmp):
    top = os.path.join(tmp, "tree")
    n, size = macro_pmake.stage_tree(top, 5)
    with open(os.path.join(top, "Makefile")) as f:
        mk = f.read()
    objs = re.findall(r"(\S+\.o)\b", mk.split("all:")[0])
    cflags = macro_pmake.kernel_cflags()
    exist = all(os.path.exists(os.path.join(top, o[:-2] + ".c")) for o in objs)
    res.add("tree", n == 5 and len(objs) == 5 and exist and size > 0 and
            "-ffreestanding" in cflags and ("CFLAGS = %s -pipe" % cflags) in mk,
            "%d files, objects %s, CFLAGS in Makefile: %s" % (n, objs, cflags in mk))


def close(a, b):
    return a is not None and abs(a - b) < 1e-9


def test_sprite(res):
    fixed = macro.sprite_measures({1: 100.0, 2: 50.0, 4: 40.0}, scaled=False)
    scaled = macro.sprite_measures({1: 100.0, 2: 100.0, 3: 120.0}, scaled=True)
    ok = (close(fixed[2]["elapsed_ratio"], 0.5) and close(fixed[2]["units"], 2.0)
          and close(fixed[2]["incremental"], 1.0) and close(fixed[4]["units"], 2.5)
          and close(fixed[4]["incremental"], 0.25) and close(fixed[1]["incremental"], 1.0)
          and close(scaled[2]["elapsed_ratio"], 1.0) and close(scaled[2]["units"], 2.0)
          and close(scaled[3]["units"], 2.5) and close(scaled[3]["incremental"], 0.5)
          and macro.sprite_measures({2: 10.0}, False)[2]["elapsed_ratio"] is None)
    res.add("sprite", ok, "fixed %r, scaled %r" % (fixed, scaled))

    def rec(workload, cpus, elapsed, status="ok"):
        return {"status": status, "result": {"elapsed_s": elapsed},
                "point": {"kernel": "tempest", "machine": "default", "optset": "default",
                          "workload": workload, "cpus": cpus}}
    rows = macro.sprite_rows([rec("pmakeind", 1, 10.0), rec("pmakeind", 2, 12.0),
                              rec("pmakeind", 2, 14.0), rec("pmakeind", 2, 13.0),
                              rec("pmakeind", 2, 1.0, "failed"), rec("fork", 1, 1.0)])
    two = [r for r in rows if r["cpus"] == 2]
    res.add("sprite/rows", len(rows) == 2 and two and two[0]["elapsed_s"] == 13.0
            and close(two[0]["elapsed_ratio"], 1.3) and close(two[0]["units"], 20 / 13),
            "got %r" % rows)


def _ids(text):
    rc, out = sweep_cmd(["check", "--points", text])
    return rc, out, re.findall(r"^  (\S+)$", out, re.M)


def test_sweep_keys(res):
    rc, out, ids = _ids("workloads pmake pmakeind fork;machines default;cpus 1 2;files 8")
    res.add("sweep/files", rc == 0 and "tempest-default-c2-default-pmake-tcg-r1-f8" in ids
            and "tempest-default-c1-default-fork-tcg-r1" in ids and len(ids) == 6,
            "exit %d: %s" % (rc, out[-300:]))
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import tempest
    from harness import sweep
    try:
        users = sweep.parse_text("workloads fork\nmachines default\ncpus 2\nusers 2n 3\n",
                                 "t", tempest.machine)
        block = {"users": [(2, True), (3, False), (6, False)]}
        counts = sweep._users_of("gaede", block, 3)
        ok = counts == [6, 3] and sweep._users_of("pmake", block, 3) == [None] \
            and all(p.users is None for p in users.points)
    except sweep.SweepError as e:
        ok, counts = False, str(e)
    res.add("sweep/users", ok, "got %r" % (counts,))
    for name, line in (("users", "users 0n"), ("users-word", "users many"), ("files", "files -1")):
        rc, out, _ = _ids("workloads pmake;machines default;cpus 1;" + line)
        res.add("sweep/refuse-" + name, rc == 2 and "Traceback" not in out and ":4:" in out,
                "exit %d: %s" % (rc, out.strip()[-200:]))


def test_scripts(res):
    point = {"id": "P1", "workload": "pmake", "cpus": 2, "interval": 0}
    prep = {"disks": [{"image": "x", "fs": "s5", "mount": "/mnt/pmake", "rw": True,
                       "dev": "/dev/vdb"},
                      {"image": "y", "fs": "ufs", "mount": "/home/d1", "rw": True,
                       "dev": "/dev/vdc"}],
            "setup": "true", "command": "/bench/pmake -j 4"}
    t_out = macro.outer_script([(point, prep)], "tempest")
    l_out = macro.outer_script([(point, prep)], "linux")
    t_pt = macro.point_script(point, prep, "tempest")
    l_pt = macro.point_script(point, prep, "linux")
    ok = ("@@harness begin P1" in t_out and '@@harness end P1 $st' in t_out
          and "mount -t s5 /dev/vdb /mnt/pmake" in t_out
          and "mount -t ufs /dev/vdc /home/d1" in t_out
          and "mount -t sysv /dev/vdb /deb/mnt/pmake" in l_out
          and "mount -t ufs -o ro,ufstype=44bsd /dev/vdc /deb/home/d1" in l_out
          and "chroot /deb /bin/sh /bench/points/P1.sh" in l_out
          and "lockstat -j -d" in t_pt and "lockstat" not in l_pt
          and "/bench/points/P1.cmd" in l_pt
          and all("@@cpu before" in pt and "@@cpu after" in pt for pt in (t_pt, l_pt)))
    res.add("scripts", ok, "tempest:\n%s\nlinux:\n%s" % (t_out, l_out))


def test_guest_cpu(res):
    """The guest's CPU seconds from /proc/stat lines around a command:
    made-up lines (Linux's ten fields, Tempest's own) give exact figures,
    a missing line none, and the host's own /proc/stat around a busy
    loop some user time."""
    text = ("@@cpu before cpu  100 5 40 1000 20 1 2 0 0 0\nnoise\n"
            "@@cpu after cpu  350 15 100 1400 60 3 4 0 0 0\n")
    got = runner.guest_cpu(text)
    res.add("guest_cpu/linux", got == {"user_s": 2.6, "system_s": 0.64, "idle_s": 4.4},
            "got %r" % got)
    got = runner.guest_cpu("@@cpu before cpu  10 0 20 30 0 0 0 0 0 0\n"
                           "@@cpu after cpu  110 0 70 230 0 0 0 0 0 0\n")
    res.add("guest_cpu/tempest", got == {"user_s": 1.0, "system_s": 0.5, "idle_s": 2.0},
            "got %r" % got)
    res.add("guest_cpu/missing", runner.guest_cpu(text.split("noise")[0]) is None
            and runner.guest_cpu(None) is None, "a lone line was read")
    script = "%s; i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; %s" % (
        macro.CPU_LINE % "before", macro.CPU_LINE % "after")
    out = subprocess.run(["sh", "-c", script], stdout=subprocess.PIPE, timeout=120).stdout
    got = runner.guest_cpu(out.decode())
    res.add("guest_cpu/host", bool(got) and got["user_s"] + got["system_s"] > 0,
            "got %r from %r" % (got, out[:200]))
    recs = [{"point": {"workload": "gaede", "kernel": "linux", "machine": "m", "accel": "tcg",
                       "cpus": 1}, "status": "ok",
             "result": {"scripts_per_hour": 100.0, "scripts": 10, "users": 2},
             "guest_cpu": {"user_s": u, "system_s": 1.0, "idle_s": 3.0}}
            for u in (2.0, 4.0, 9.0)]
    recs[2]["guest_cpu"] = None
    row = macro_gaede.scaling(recs)[0]
    res.add("guest_cpu/scaling", row["user_ms"] == 300.0 and row["system_ms"] == 100.0
            and abs(row["idle_share"] - (3 / 6 + 3 / 8) / 2) < 1e-9 and row["runs"] == 3,
            "row %r" % row)


def _pmake(args):
    p = subprocess.run([PMAKE] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=600, stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout.decode(errors="replace")


def test_pmake_host(res, tmp):
    if not os.path.exists(PMAKE):
        res.add("pmake/built", False, "%s is missing (make bench)" % PMAKE)
        return
    top = os.path.join(tmp, "host")
    macro_pmake.stage_tree(top, 3)
    rc, out = _pmake(["-j", "2", "-C", top])
    m = re.search(r"^bench pmake jobs=2 files=3 objects=3 cpus=\d+ elapsed_s=([\d.]+) "
                  r"status=0$", out, re.M)
    objs = sum(f.endswith(".o") for _d, _s, fs in os.walk(top) for f in fs)
    res.add("pmake/line", rc == 0 and m and float(m.group(1)) > 0 and objs == 3,
            "exit %d, %d objects: %s" % (rc, objs, out.strip()[-300:]))
    ind = os.path.join(tmp, "ind")
    for i in range(2):
        macro_pmake.stage_tree(os.path.join(ind, "c%d" % i), 2)
    rc, out = _pmake(["-n", "2", "-j", "2", "-C", ind])
    res.add("pmake/ind", rc == 0 and re.search(r"^bench pmakeind copies=2 jobs=2 files=2 "
                                               r"objects=4 cpus=\d+ elapsed_s=[\d.]+ status=0$",
                                               out, re.M), "exit %d: %s" % (rc, out.strip()[-300:]))
    broken = sorted(os.path.join(d, f) for d, _s, fs in os.walk(top) for f in fs
                    if f.endswith(".c"))[0]
    with open(broken, "a") as f:
        f.write("\nthis is not C;\n")
    rc, out = _pmake(["-C", top])
    res.add("pmake/fails", rc == 1 and out.startswith("bench pmake error=make status=2"),
            "exit %d: %s" % (rc, out.strip()[-300:]))
    rc, out = _pmake(["-C", os.path.join(tmp, "nowhere")])
    res.add("pmake/nomakefile", rc == 1 and "bench pmake error=no_makefile" in out,
            "exit %d: %s" % (rc, out.strip()))


# ---- with emulators -------------------------------------------------------------

def test_sysbench_host(res, tmp):
    """Each workload's command against the host's real sysbench."""
    if not shutil.which("sysbench"):
        res.add("sysbench/host", False, "sysbench is not installed (sh tools/install-deps.sh)")
        return
    for test in macro_sysbench.TESTS:
        name = "sysbench_" + test
        point = {"cpus": 1, "seconds": 1, "workload": name}
        work = os.path.join(tmp, "sb-" + test)
        os.makedirs(work)
        prep = macro_sysbench.PREPARE[name](work, point)
        script = prep["command"].replace(macro_sysbench.MOUNT, work)
        script = script.replace("/tmp/sysbench.out", os.path.join(work, "out"))
        setup = prep["setup"].replace(macro_sysbench.MOUNT, work)
        p = subprocess.run(["sh", "-c", setup + " > /dev/null && " + script], cwd=work,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=120)
        m = re.search(r"^bench %s ops_per_s=([0-9.]+) time_s=([0-9.]+) threads=1" % name,
                      p.stdout, re.M)
        ok = p.returncode == 0 and m is not None and float(m.group(1)) > 0
        if test == "fileio" and ok:
            ok = re.search(r" reads_per_s=[0-9.]+ writes_per_s=[0-9.]+ ", p.stdout) is not None
        res.add("sysbench/" + test, ok, "status %d: %s" % (p.returncode, p.stdout[-300:]))


def test_redis_host(res, tmp):
    """The redis point's setup and command against the host's real redis
    (Debian's, as in the guests), on a port of its own: its bench line."""
    if not shutil.which("redis-server") or not shutil.which("redis-benchmark"):
        res.add("redis/host", False, "redis is not installed (sh tools/install-deps.sh)")
        return
    work = os.path.join(tmp, "redis")
    os.makedirs(work)
    port = 16379 + os.getpid() % 1000
    setup = macro_redis.setup(port=port, log=os.path.join(work, "log"))
    cmd = macro_redis.command({"cpus": 1, "seconds": 1}, port=port, out=os.path.join(work, "out"))
    try:
        p = subprocess.run(["sh", "-c", setup + " && " + cmd], cwd=work, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=120)
        out, rc = p.stdout, p.returncode
    except subprocess.TimeoutExpired:
        subprocess.run(["redis-cli", "-p", str(port), "shutdown", "nosave"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out, rc = "timed out after 120 s", -1
    m = re.search(r"^bench redis ops_per_s=([0-9.]+) set_per_s=([0-9.]+) get_per_s=([0-9.]+) "
                  r"clients=2 requests=%d$" % macro_redis.REQUESTS_PER_S, out, re.M)
    ok = rc == 0 and m is not None and min(float(x) for x in m.groups()) > 0
    res.add("redis/host", ok, "status %d: %s" % (rc, out[-300:]))


# pgbench 15's report, as Debian's prints it (its first lines left out).
PGBENCH_LOG = """transaction type: <builtin: TPC-B (sort of)>
scaling factor: 4
query mode: simple
number of clients: 4
number of threads: 2
maximum number of tries: 1
duration: 30 s
number of transactions actually processed: 4567
number of failed transactions: 0 (0.000%)
latency average = 26.270 ms
initial connection time = 12.345 ms
tps = 152.259832 (without initial connection time)
"""


def test_pgbench_parse(res, tmp):
    """The pgbench point's line from pgbench's report, and an error line
    (status 1) from a report without a rate."""
    work = os.path.join(tmp, "pgbench")
    os.makedirs(work)
    log = os.path.join(work, "bench.log")
    cmd = macro_pgbench.command({"cpus": 1, "seconds": 30}, dir=work)
    parse = cmd.split("; fi\n", 1)[1]             # the lines after the run's status check
    for name, text, want_rc, want in (
            ("pgbench/parse", PGBENCH_LOG, 0,
             "bench pgbench tps=152.26 clients=4 threads=2 scale=4 transactions=4567\n"),
            ("pgbench/parse/no_tps", "pgbench: error: connection refused\n", 1,
             "bench pgbench error=no_tps\n")):
        with open(log, "w") as f:
            f.write(text)
        p = subprocess.run(["sh", "-c", parse], stdout=subprocess.PIPE, text=True, timeout=30)
        res.add(name, p.returncode == want_rc and p.stdout == want,
                "status %d, printed %r" % (p.returncode, p.stdout))
    res.add("pgbench/command", "pgbench -c 4 -j 2 -T 30 " in cmd and "su user01 " in cmd
            and "pg_ctl -D %s/data -m fast -w stop" % work in cmd, cmd)


def test_sysbench_speedups(res):
    def rec(kernel, cpus, value, status="ok", busy=None, workload="sysbench_threads"):
        return {"point": {"kernel": kernel, "optset": kernel, "workload": workload,
                          "cpus": cpus}, "status": status, "busy": busy,
                "result": {"ops_per_s": value}}
    records = [rec("tempest", 1, 100), rec("tempest", 1, 90), rec("tempest", 1, 500),
               rec("tempest", 2, 180), rec("tempest", 2, 9, status="failed"),
               rec("tempest", 2, 1, busy="2 other emulators"),
               rec("linux", 1, 100), rec("linux", 4, 300), rec("linux", 2, 150, workload="gaede")]
    got = macro_sysbench.speedups(records)
    want = {("tempest", "tempest", "sysbench_threads"): 1.8}
    res.add("sysbench/speedups", got == want, "got %s, want %s" % (got, want))


def _records(outdir):
    out = {}
    runs = os.path.join(outdir, "runs")
    for name in sorted(os.listdir(runs)) if os.path.isdir(runs) else []:
        if name.endswith(".json"):
            with open(os.path.join(runs, name)) as f:
                out[name[:-5]] = json.load(f)
    return out


def check_gaede_record(res, r, result):
    """GAEDE's reduced point: every user finished scripts, none failed,
    and the rate is the count over the time."""
    users = r["point"].get("users")
    scripts = result.get("scripts", 0)
    res.add("smoke/gaede/users", result.get("users") == users and users == 2,
            "sweep asked %r users; result %r" % (users, result))
    res.add("smoke/gaede/scripts", scripts >= users and result.get("scripts_min", 0) >= 1
            and result.get("failed") == 0, "result %r" % result)
    rate = scripts * 3600.0 / result["elapsed_s"] if result.get("elapsed_s") else -1
    res.add("smoke/gaede/rate", r["metric"] == "scripts_per_hour" and r["value"] == result.get(
        "scripts_per_hour") and abs(rate - (r["value"] or 0)) <= 0.01 * rate,
            "value %r, computed %.1f" % (r["value"], rate))
    classes = (r.get("lockstat") or {}).get("classes") or []
    res.add("smoke/gaede/lockstat", any(c["hits"] > 0 for c in classes),
            "%d lock classes" % len(classes))
    # The guest's CPU seconds over the run: some busy, and all of them
    # together about the run's length on each CPU (ticks, so roughly).
    cpu = r.get("guest_cpu") or {}
    total = sum(cpu.get(k, 0) for k in ("user_s", "system_s", "idle_s"))
    want = result.get("elapsed_s", 0) * r["point"]["cpus"]
    res.add("smoke/gaede/guest_cpu", cpu.get("user_s", 0) > 0 and cpu.get("system_s", 0) > 0
            and abs(total - want) <= 0.2 * want, "guest_cpu %r, %g s on %d CPUs"
            % (cpu, result.get("elapsed_s", 0), r["point"]["cpus"]))


def check_sysbench_record(res, r, result):
    """sysbench fileio's reduced point: a positive rate that is the reads
    and writes per second it printed, for 2 threads, over about the
    seconds asked; Tempest's with lock statistics."""
    kernel = r["point"]["kernel"]
    rate = result.get("reads_per_s", 0) + result.get("writes_per_s", 0)
    res.add("smoke/sysbench/%s/rate" % kernel, r["metric"] == "ops_per_s"
            and (r["value"] or 0) > 0 and abs(rate - r["value"]) <= 0.02 + 0.001 * rate
            and result.get("threads") == 2, "value %r, result %r" % (r["value"], result))
    res.add("smoke/sysbench/%s/time" % kernel,
            abs(result.get("time_s", 0) - r["point"]["seconds"]) < 1.0, "result %r" % result)
    if kernel == "tempest":
        classes = (r.get("lockstat") or {}).get("classes") or []
        res.add("smoke/sysbench/tempest/lockstat", any(c["hits"] > 0 for c in classes),
                "%d lock classes" % len(classes))


def test_smoke(res, outdir, verbose):
    import linux_peer
    import user_check
    try:
        user_check.build_userland()
        linux_peer.build_benchmarks()
    except Exception as e:
        res.add("smoke/build", False, "building userland and bench: %s" % e)
        return
    rc, out = sweep_cmd(["check", SMOKE])
    want = set(re.findall(r"^  (\S+)$", out, re.M))
    files = int(re.search(r"^files\s+(\d+)", open(SMOKE).read(), re.M).group(1))
    shutil.rmtree(outdir, ignore_errors=True)
    rc, out = sweep_cmd(["run", SMOKE, "--out", outdir, "-j", "1"], T_SWEEP)
    if verbose:
        print(out)
    res.add("smoke/run", rc == 0 and "report:" in out, "exit %d: %s" % (rc, out.strip()[-400:]))
    recs = _records(outdir)
    res.add("smoke/records", want and set(recs) == want, "records %s, points %s"
            % (sorted(recs), sorted(want)))
    bad = ["%s: %s" % (i, r["reason"]) for i, r in recs.items() if r["status"] != "ok"]
    res.add("smoke/ok", recs and not bad, "failed: %s" % bad[:2])
    for i, r in sorted(recs.items()):
        kernel = r["point"]["kernel"]
        result = r.get("result") or {}
        if r["point"]["workload"] == "gaede":
            check_gaede_record(res, r, result)
            continue
        if r["point"]["workload"] == "sysbench_fileio":
            check_sysbench_record(res, r, result)
            continue
        res.add("smoke/%s/elapsed" % kernel, isinstance(r["value"], float) and r["value"] > 0
                and r["metric"] == "elapsed_s" and result.get("elapsed_s") == r["value"],
                "value %r, result %r" % (r["value"], result))
        res.add("smoke/%s/files" % kernel, result.get("files") == files
                and result.get("objects") == files and r["point"].get("files") == files,
                "sweep asked %d files; result %r" % (files, result))
        if kernel == "tempest":
            classes = (r.get("lockstat") or {}).get("classes") or []
            res.add("smoke/tempest/lockstat", any(c["hits"] > 0 for c in classes),
                    "%d lock classes" % len(classes))
        else:
            res.add("smoke/linux/lockstat", r.get("lockstat") is None, "lockstat on Linux")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host-only", action="store_true", help="only the tests without emulators")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "check", "macro-smoke"),
                    help="where the smoke sweep's results go (emptied first)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    res = Results()
    with tempfile.TemporaryDirectory(prefix="macro-test-") as tmp:
        test_names(res)
        test_tree(res, tmp)
        test_sprite(res)
        test_sweep_keys(res)
        test_scripts(res)
        test_guest_cpu(res)
        test_pmake_host(res, tmp)
        test_sysbench_host(res, tmp)
        test_sysbench_speedups(res)
        test_redis_host(res, tmp)
        test_pgbench_parse(res, tmp)
        if not args.host_only:
            if not os.path.exists(os.path.join(ROOT, "build", "kernel.elf")):
                res.add("smoke", False, "build/kernel.elf is missing; run make first")
            else:
                test_smoke(res, args.out, args.verbose)
    print("%d passed, %d failed" % (res.passed, res.failed))
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
