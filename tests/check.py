#!/usr/bin/env python3
"""make check: every Tempest test, ending with "N passed, N failed".

Runs (at most two emulators at a time; the project's machines have two
cores):

  unit/...           host unit tests: make -C tests/unit check, whose own
                     "N passed, N failed" line is added to the totals
  topology/PRESET    every preset of machines.conf booted with poweroff;
                     the kernel's smp: and numa: lines checked against it,
                     and its virtio disks against the preset's disks column
                     (count, names vda.. in order, disks per controller)
  ktest/PRESET/lock=L,sched=S
                     up, default and hector with ktest=all poweroff, once
                     for each pairing (spin, global), (mcs, percpu),
                     (h2mcs, cluster), so every lock= and every sched=
                     value runs the whole suite on every one of them; the
                     summary must show no failures, and each test counts.
                     Two scratch virtio disks and one ATA disk are attached
                     for the block-device tests
  ktest/default/witness   the suite with witness=on lockstat=contended
  kbench/locks       kbench=locks lockdump: one lockbench line per algorithm,
                     the lockstat table and the blkstat disk table (a smoke
                     test; the numbers are not judged)
  disks/svr4mp       the SVR4 MP preset's 8 disks on 4 controllers: layout,
                     and the virtio block tests on all of them
  disks/image        a host-made image attached with disk_images= is vda;
                     the kernel reads the host's data, and its writes are
                     in the file after power-off
  s5tools/...        host tests of mkfs.s5 and fsck.s5 (tests/unit/test_s5tools.py)
  source/...         locking rules checked on the source text
                     (tests/unit/test_source_rules.py)
  icount/default     default under ACCEL=icount with ktest=all: topology
                     and ktest summary
  bochs/default      Bochs, 4 cpus: all online, one node (Bochs has no SRAT);
                     a scratch ATA disk (the CD-ROM is on ata1) and the
                     block ktests that need no virtio
  options/...        bad input: an unknown option and a bad value are
                     reported and the default used
  nosrat/4cpu        4 cpus and no -numa arguments: one node, all cpus
  panic/pagefault    crash=pagefault: PANIC line, symbolized backtrace, and
                     the machine stops by itself
  panic/deadlock     crash=deadlock: the hang watchdog stops the machine and
                     its thread dump shows the two threads waiting for each
                     other (a hung ktest's dump is condensed, one line per
                     thread, at the end of the check's output)
  user/tty/default   an interactive shell typed at through the serial
                     console: ^C, ^\\, ^Z and fg, SIGTTIN reach the right
                     processes and the shell survives (tests/tty_check.py)

What the kernel must print (one line each, at the start of a line):

  smp: N cpus online
  numa: node N cpus LIST mem SIZEM dist D0 D1 ...      (one per node)
  options: lock=spin cache=... ...                     (effective options)
  options: unknown option 'NAME', ignored
  options: bad value 'VAL' for NAME=, using DEFAULT
  ktest: PASS name   /   ktest: FAIL name: reason      (one per test)
  ktest: N passed, M failed
  virtio-blk: vdX at BB:DD.F ...                        (one per virtio disk)
  blk: N virtio, N ata, N ram                           (after the disk probe)
  blkstat: NAME OPS READS WRITES BLOCKS ...             (lockdump's disk table)
  PANIC...                                              (a panic; fails the boot)
  backtrace:  then  [<ADDR>] function+0xOFF            (after a PANIC)

Each boot's console, emulator log and command line are kept under
build/check/NAME/ for diagnosis.  Options: -k PATTERN runs only the jobs
whose name contains PATTERN; -j N sets the parallelism; --list lists the
jobs; -v shows the console tail of failed boots.
"""

import argparse
import concurrent.futures
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tempest  # noqa: E402
import fs_check  # noqa: E402
import user_check  # noqa: E402
import tty_check  # noqa: E402

ROOT = tempest.ROOT
LOGDIR = os.path.join(tempest.BUILD, "check")

KTEST_PRESETS = ("up", "default", "hector")
# Every lock= and every sched= value runs the suite on each ktest preset.
# Every lock=, sched= and cache= value runs the whole suite on each ktest
# preset; the file-system tests also run under every cache x lock pairing
# on default (fs/matrix).
KTEST_VARIANTS = (("spin", "global", "single"), ("mcs", "percpu", "hashfree"),
                  ("h2mcs", "cluster", "ssac"))
CACHE_MODELS = ("single", "hashfree", "ssac")
LOCK_ALGOS = ("spin", "mcs", "h2mcs")
# The file-system ktests (buffer cache, DNLC, VFS, S5, and the suite on the root).
FS_KTESTS = "buf_*,dnlc_*,vfs_*,s5_*,fs_*"
FSBENCH_RE = re.compile(r"^fsbench cache=(\S+) cpus=(\d+) seconds=\S+ ops=(\d+) "
                        r"ops_per_sec=(\d+) errors=(\d+)\s*$", re.M)
# Scratch disks (MiB, sparse) attached to ktest boots, so the block-device
# tests run against real devices, not only the RAM disk: two virtio disks
# (vda, vdb) and one ATA disk (ata0; PIO under emulation is slow, and the
# ATA tests move little data anyway).
KTEST_DISKS = (8, 8)
KTEST_ATA_DISKS = (1,)
# Bochs runs the ktests that need no virtio (it has none), against a
# scratch ATA disk: the ATA driver is what Bochs is there to check.
BOCHS_KTESTS = "blk_errors,blk_faults,blk_stats,blk_ram,blk_ata,blk_ata_mp,blk_ata_sort"
BOCHS_ATA_DISKS = (1,)
LOCKBENCH_RE = re.compile(r"^lockbench (\S+) uncontended_off=(\d+) uncontended_on=(\d+) "
                          r"contended_ops=(\d+)\s*$", re.M)
MEM_TOLERANCE = 0.05

# Time limits in seconds (multiplied by --timeout-scale).  A healthy boot
# takes seconds; the limits only bound a hung kernel.  The whole run has a
# budget, so even a kernel that hangs everywhere ends well inside 30 minutes.
T_TOPOLOGY = 180
T_KTEST = 900
T_ICOUNT = 420
T_BOCHS = 300
T_DISKS = 300
T_UNIT = 600
T_USER = 600
T_TTY = 300
BUDGET = 25 * 60

# --------------------------------------------------------------------------
# Parsing what the kernel printed

SMP_RE = re.compile(r"^smp: (\d+) cpus? online\s*$", re.M)
NUMA_RE = re.compile(r"^numa: node (\d+) cpus (\S+) mem (\d+) ?M(?:iB)? dist ([\d ]+?)\s*$",
                     re.M)
WITNESS_RE = re.compile(r'^witness: lock order reversal: acquiring "(\S+)" while holding "(\S+)"',
                        re.M)
KTEST_SUM_RE = re.compile(r"^ktest: (\d+) passed, (\d+) failed\s*$", re.M)
KTEST_ONE_RE = re.compile(r"^ktest: (PASS|FAIL) (\S+?)(?::?\s*$|:\s+(.*?)\s*$)", re.M)
VBLK_RE = re.compile(r"^virtio-blk: (vd[a-z]) at ([0-9a-f]{2}):([0-9a-f]{2})\.([0-7]) ", re.M)
BLK_SUM_RE = re.compile(r"^blk: (\d+) virtio, (\d+) ata, (\d+) ram\s*$", re.M)
BLKSTAT_RE = re.compile(r"^blkstat: (\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s", re.M)
UNKNOWN_RE = "options: unknown option '%s'"
BADVALUE_RE = "options: bad value '%s' for %s="


def parse_cpu_list(s):
    """'0-3,5,7-8' -> [0, 1, 2, 3, 5, 7, 8]; ValueError if malformed."""
    cpus = []
    for part in s.split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise ValueError("bad cpu list %r" % s)
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise ValueError("bad cpu range %r" % part)
        cpus.extend(range(lo, hi + 1))
    return cpus


def format_cpu_list(cpus):
    """[0, 1, 2, 3, 5] -> '0-3,5'."""
    out, cpus, i = [], sorted(cpus), 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(out)


def parse_topology(output):
    """{'smp': N or None, 'nodes': {id: {'cpus', 'mem', 'dist'}}, 'errors'}."""
    topo = {"smp": None, "nodes": {}, "errors": []}
    smp = SMP_RE.findall(output)
    if smp:
        topo["smp"] = int(smp[-1])
        if len(set(smp)) > 1:
            topo["errors"].append("conflicting smp lines: %s" % ", ".join(smp))
    for node, cpus, mem, dist in NUMA_RE.findall(output):
        node = int(node)
        if node in topo["nodes"]:
            topo["errors"].append("node %d printed twice" % node)
        try:
            cpulist = parse_cpu_list(cpus)
        except ValueError as e:
            topo["errors"].append("node %d: %s" % (node, e))
            cpulist = []
        topo["nodes"][node] = {"cpus": cpulist, "mem": int(mem),
                               "dist": [int(d) for d in dist.split()]}
    return topo


def check_topology(m, output):
    """Problems (strings) with the kernel's view of machine m; [] if right."""
    topo = parse_topology(output)
    problems = list(topo["errors"])
    if topo["smp"] is None:
        problems.append("no 'smp: N cpus online' line")
    elif topo["smp"] != m.cpus:
        problems.append("smp: %d cpus online, want %d" % (topo["smp"], m.cpus))
    nodes = topo["nodes"]
    if not nodes:
        problems.append("no 'numa: node N cpus LIST mem SIZEM dist ...' lines")
        return problems
    if len(nodes) != m.nodes:
        problems.append("%d nodes, want %d" % (len(nodes), m.nodes))
    if sorted(nodes) != list(range(len(nodes))):
        problems.append("node ids %s, want 0-%d" % (format_cpu_list(nodes), len(nodes) - 1))
    for n in range(m.nodes):
        if n not in nodes:
            problems.append("node %d missing" % n)
            continue
        got = nodes[n]
        want_cpus = m.node_cpus(n)
        if sorted(got["cpus"]) != want_cpus:
            problems.append("node %d cpus %s, want %s" % (
                n, format_cpu_list(got["cpus"]) or "(none)", format_cpu_list(want_cpus)))
        if abs(got["mem"] - m.mem) > MEM_TOLERANCE * m.mem:
            problems.append("node %d mem %dM, want %dM within %d%%" % (
                n, got["mem"], m.mem, MEM_TOLERANCE * 100))
        want_dist = [m.distance(n, j) for j in range(m.nodes)]
        if got["dist"] != want_dist:
            problems.append("node %d dist %s, want %s" % (
                n, " ".join(map(str, got["dist"])), " ".join(map(str, want_dist))))
    return problems


def expected_disk_layout(m):
    """Disks per controller that tempest.disk_args gives machine m's own
    disks (consecutive disks share a controller), [] without controllers."""
    n, ctrl = m.disks
    if not n or not ctrl:
        return []
    return [sum(1 for i in range(n) if i * ctrl // n == k) for k in range(ctrl)]


def check_disks(m, output):
    """Problems with the kernel's view of machine m's own virtio disks
    (booted with no disk arguments, so the preset's): as many as the
    preset has, named vda, vdb, ... in the order attached, and with
    controllers, behind that many bridges (never on the root bus),
    consecutive disks together as tempest.disk_args places them."""
    want = m.disks[0]
    problems = []
    summ = BLK_SUM_RE.findall(output)
    if not summ:
        return ["no 'blk: N virtio, N ata, N ram' line"]
    nv, _, ram = summ[-1]
    if int(nv) != want:
        problems.append("%s virtio disks attached, want %d" % (nv, want))
    if ram != "1":
        problems.append("%s RAM disks, want 1 (ram0)" % ram)
    found = VBLK_RE.findall(output)
    names = [f[0] for f in found]
    want_names = ["vd" + chr(ord("a") + i) for i in range(want)]
    if names != want_names:
        problems.append("virtio disks %s, want %s" % (" ".join(names) or "(none)",
                                                    " ".join(want_names) or "(none)"))
    layout = expected_disk_layout(m)
    if layout and names == want_names:
        buses = [int(f[1], 16) for f in found]
        runs = []                       # [bus, disks] for each run of one bus
        for b in buses:
            if runs and runs[-1][0] == b:
                runs[-1][1] += 1
            else:
                runs.append([b, 1])
        got = [c for _, c in runs]
        if 0 in buses or len({b for b, _ in runs}) != len(runs) or got != layout:
            problems.append("disks per bus %s, want %s behind %d bridges" % (
                " ".join("%02x:%d" % (b, c) for b, c in runs), layout, len(layout)))
    return problems


def parse_ktests(output):
    """(summary (passed, failed) or None, [(PASS|FAIL, name, reason)])."""
    sums = KTEST_SUM_RE.findall(output)
    summary = (int(sums[-1][0]), int(sums[-1][1])) if sums else None
    tests = [(r, n, why or "") for r, n, why in KTEST_ONE_RE.findall(output)]
    return summary, tests


def effective_options(output):
    """The options: line listing the effective options, as a dict."""
    opts = None
    for line in output.splitlines():
        if line.startswith("options:") and "'" not in line and "=" in line:
            opts = {}
            for word in line[len("options:"):].split():
                k, _, v = word.partition("=")
                opts[k] = v
    return opts


# --------------------------------------------------------------------------
# Results

class Results:
    def __init__(self):
        self.lock = threading.Lock()
        self.passed = 0
        self.failed = 0
        self.failures = []
        self.times = []             # (boot, seconds, status)
        self.dumps = []             # (boot, condensed thread dump) of hung boots

    def add(self, name, ok, reason=""):
        with self.lock:
            if ok:
                self.passed += 1
                print("PASS %s" % name, flush=True)
            else:
                self.failed += 1
                self.failures.append(name)
                print("FAIL %s: %s" % (name, reason or "failed"), flush=True)

    def add_counts(self, passed, failed):
        with self.lock:
            self.passed += passed
            self.failed += failed


class Ctx:
    def __init__(self, args, results):
        self.args = args
        self.results = results
        self.deadline = time.monotonic() + args.budget

    def limit(self, seconds):
        """A boot's time limit: its own, scaled, within the run's budget."""
        left = self.deadline - time.monotonic() - 5
        return max(0, min(seconds * self.args.timeout_scale, left))

    def boot(self, job, machine, opts, limit, **kw):
        t = self.limit(limit)
        if t < 10:
            return None
        keep = os.path.join(LOGDIR, job.replace("/", "-"))
        r = tempest.boot(machine, opts, timeout=t, keep=keep, **kw)
        r.keep = os.path.relpath(keep, ROOT)
        dump = condense_thread_dump(r.output)
        with self.results.lock:
            self.results.times.append((job, r.elapsed, r.status))
            if dump:
                self.results.dumps.append((job, dump))
        if self.args.verbose and not r.ok:
            tail = "\n".join(r.output.splitlines()[-25:])
            with self.results.lock:
                print("---- %s: console tail (%s)\n%s\n----" % (job, r.status, tail),
                      flush=True)
        return r


# Frames that every sleeping thread shows; the condensed dump leaves them out.
_DUMP_NOISE = re.compile(r"^(swtch|switch_to|sched_\w+|sleep\w*|thread_\w+|mutex_block\w*|"
                         r"rlock_wait\w*|wakeup\w*|backtrace\w*)$")


def condense_thread_dump(output, max_threads=12):
    """The thread dump a hung ktest prints (panic_hung: "threads:", then per
    thread "thread N name: state, cpu C[, wchan W]", "holds CLASS ADDR from
    SITE" lines and a backtrace), one line per thread that holds a lock or
    sleeps, so the end of the check's output names the threads of a
    deadlock even where only its last lines are kept.  None if no dump."""
    at = output.rfind("\nthreads:\n")
    if at < 0:
        return None
    lines = []
    cur = None
    for line in output[at + 10:].splitlines():
        m = re.match(r"^thread (\d+) (\S+): (\w+), cpu (-?\d+)(?:, wchan ([^,\s]+))?"
                     r"(?:, waits for (\S+) \S+ held by thread (\d+))?", line)
        if m:
            on = " on " + m.group(5)[-6:] if m.group(5) else ""
            if m.group(6):
                on += " (%s of t%s)" % (m.group(6), m.group(7))
            cur = {"head": "t%s %s %s%s" % (m.group(1), m.group(2), m.group(3), on),
                   "holds": [], "frames": []}
            lines.append(cur)
            continue
        if cur is None:
            continue
        h = re.match(r"^\s+holds (\S+) (\S+)", line)
        if h:
            cur["holds"].append("%s@%s" % (h.group(1), h.group(2)[-6:]))
            continue
        f = re.match(r"^\s+\[<[0-9a-f]+>\] (\w+)\+", line)
        if f and not _DUMP_NOISE.match(f.group(1)) and len(cur["frames"]) < 5:
            cur["frames"].append(f.group(1))
    out = []
    # The threads in a cycle first: those that hold locks or wait for one.
    lines.sort(key=lambda t: not (t["holds"] or " of t" in t["head"]))
    for t in lines:
        if not t["holds"] and "sleeping" not in t["head"]:
            continue
        out.append("  %s; holds %s; in %s" % (t["head"], ",".join(t["holds"]) or "-",
                                             "<".join(t["frames"]) or "?"))
    if len(out) > max_threads:
        out = out[:max_threads] + ["  ... %d more" % (len(out) - max_threads)]
    # Then the busy buffers and disks with requests out (buf_dump_busy,
    # blk_dump_busy), which a thread sleeping on a buffer waits for.
    extra = re.findall(r"^(buffer \S+ .*|disk \w+: .*|  virtio .*)$", output[at:], re.M)
    out += ["  " + e.strip()[:200] for e in extra[:8]]
    return "\n".join(out)


def _why(r, problems):
    """One FAIL reason: the boot's status first, then what was wrong."""
    parts = []
    if r.status != "ok":
        parts.append(r.status)
    parts += problems[:6]
    if len(problems) > 6:
        parts.append("and %d more" % (len(problems) - 6))
    s = "; ".join(parts)
    if len(s) > 400:
        s = s[:400] + "..."
    return "%s [%s/]" % (s, r.keep)


def _budget_gone(ctx, names):
    for n in names:
        ctx.results.add(n, False, "not run: the check's time budget (%d s) ran out"
                        % ctx.args.budget)


# --------------------------------------------------------------------------
# Jobs: each is (name, function(ctx)); a function reports one or more results.

def job_unit(ctx):
    res = ctx.results
    if not os.path.exists(os.path.join(ROOT, "tests", "unit", "Makefile")):
        return
    env = dict(os.environ)
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
        env.pop(k, None)
    try:
        p = subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "tests", "unit"), "check"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, env=env,
                           timeout=ctx.limit(T_UNIT) or 1, start_new_session=True)
        out, rc = p.stdout.decode(errors="replace"), p.returncode
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace")
        rc = "timeout"
    os.makedirs(LOGDIR, exist_ok=True)
    with open(os.path.join(LOGDIR, "unit.log"), "w") as f:
        f.write(out)
    summary = None
    with res.lock:
        for line in out.splitlines():
            m = re.match(r"^(PASS|FAIL):?\s+(.*)$", line)
            if m:
                print("%s unit/%s" % (m.group(1), m.group(2)), flush=True)
            m = re.match(r"^(\d+) passed, (\d+) failed\s*$", line)
            if m:
                summary = (int(m.group(1)), int(m.group(2)))
    if summary:
        res.add_counts(*summary)
        if rc != 0 and summary[1] == 0:
            res.add("unit", False, "make -C tests/unit check exited with %s "
                    "[build/check/unit.log]" % rc)
    else:
        tail = " | ".join(out.strip().splitlines()[-3:])
        res.add("unit", False, "no 'N passed, N failed' line (make exited with %s): %s "
                "[build/check/unit.log]" % (rc, tail[:300]))


def make_topology_job(preset):
    def job(ctx):
        name = "topology/" + preset
        m = tempest.machine(preset)
        r = ctx.boot(name, m, "poweroff", T_TOPOLOGY)
        if r is None:
            return _budget_gone(ctx, [name])
        problems = check_topology(m, r.output) + check_disks(m, r.output)
        ctx.results.add(name, r.ok and not problems, _why(r, problems))
    return job


def _ktest_results(ctx, name, r, individual):
    summary, tests = parse_ktests(r.output)
    problems = []
    if summary is None:
        problems.append("no 'ktest: N passed, M failed' line")
    else:
        npass, nfail = summary
        if nfail:
            bad = [n for res, n, _ in tests if res == "FAIL"]
            problems.append("%d failed%s" % (nfail, (": " + ", ".join(bad[:10])) if bad else ""))
        if npass == 0:
            problems.append("no ktest passed")
        if len(tests) != npass + nfail:
            problems.append("%d ktest result lines for %d tests" % (len(tests), npass + nfail))
    if individual:
        for res, tname, why in tests:
            ctx.results.add("%s/%s" % (name, tname), res == "PASS", why)
    ctx.results.add(name, r.ok and not problems, _why(r, problems))


def fs_boot(ctx, job, machine, opts, limit, persist=True, extra_images=(), **kw):
    """Boot with a fresh S5 root image (mkfs.s5) as vda and root=vda; after
    power-off the image must pass fsck.s5 and, when persist, hold the file
    the fs_persist ktest wrote.  Returns (BootResult or None, problems)."""
    tmp = tempfile.mkdtemp(prefix="tempest-fs-")
    try:
        img = fs_check.make_root_image(tmp)
        r = ctx.boot(job, machine, opts + " root=vda", limit,
                     disk_images=[img] + list(extra_images), **kw)
        if r is None:
            return None, []
        problems = fs_check.fsck_problems(img)
        if persist:
            problems += fs_check.persist_problems(img)
        return r, problems
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def make_ktest_job(preset, lock, sched, cache):
    def job(ctx):
        name = "ktest/%s/lock=%s,sched=%s,cache=%s" % (preset, lock, sched, cache)
        r, fsp = fs_boot(ctx, name, preset, "ktest=all poweroff lock=%s sched=%s cache=%s"
                         % (lock, sched, cache), T_KTEST,
                         disks=KTEST_DISKS, ata_disks=KTEST_ATA_DISKS)
        if r is None:
            return _budget_gone(ctx, [name, name + "/fsck"])
        _ktest_results(ctx, name, r, individual=True)
        ctx.results.add(name + "/fsck", r.ok and not fsp, _why(r, fsp))
    return job


def make_fs_matrix_job(cache, lock):
    """The file-system ktests under one cache= model and lock= algorithm
    on default, and fsck of the root image afterwards."""
    def job(ctx):
        name = "fs/matrix/cache=%s,lock=%s" % (cache, lock)
        r, fsp = fs_boot(ctx, name, "default", "ktest=%s poweroff cache=%s lock=%s"
                         % (FS_KTESTS, cache, lock), T_KTEST)
        if r is None:
            return _budget_gone(ctx, [name, name + "/fsck"])
        _ktest_results(ctx, name, r, individual=False)
        ctx.results.add(name + "/fsck", r.ok and not fsp, _why(r, fsp))
    return job


# The kernel takes 16 virtio disks; the root is one of them.
FS_PROBE_DISKS_PER_BOOT = 12


def job_fs_corrupt(ctx):
    """Corrupted images (tests/fs_check.py): each one fails to mount, or
    mounts and fails the damaged operations; a clean control walks with no
    error; the kernel never panics, and the root stays clean.  The images
    go FS_PROBE_DISKS_PER_BOOT to a boot."""
    tmp = tempfile.mkdtemp(prefix="tempest-corrupt-")
    try:
        cases = fs_check.corrupted_images(tmp)
        n = FS_PROBE_DISKS_PER_BOOT
        for part, first in enumerate(range(0, len(cases), n)):
            _fs_probe_boot(ctx, "fs/corrupt/%d" % (part + 1), cases[first:first + n])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _fs_probe_boot(ctx, name, cases):
    disks = [fs_check.disk_name(i + 1) for i in range(len(cases))]
    r, fsp = fs_boot(ctx, name, "default", "fsprobe=%s poweroff" % ",".join(disks),
                     T_KTEST, persist=False, extra_images=[c[2] for c in cases], disks=())
    names = ["fs/corrupt/" + c[0] for c in cases]
    if r is None:
        return _budget_gone(ctx, names + [name])
    for (case, expect, _), disk, n in zip(cases, disks, names):
        p = fs_check.judge_probe(r.output, case, expect, disk)
        ctx.results.add(n, r.ok and not p, _why(r, p))
    ctx.results.add(name, r.ok and not fsp, _why(r, fsp))


def job_fs_rootfail(ctx):
    """root= naming a corrupted image, and a disk that does not exist: the
    kernel says why it has no root and carries on (the suite then fails
    its root tests by name, which is not judged here)."""
    tmp = tempfile.mkdtemp(prefix="tempest-rootfail-")
    try:
        bad = os.path.join(tmp, "bad.img")
        fs_check.make_root_image(tmp, "bad.img", "2M")
        with open(bad, "r+b") as f:
            f.seek(1024 + 504)
            f.write(b"\0\0\0\0")       # s_magic
        for case, opts, kw in (("badmagic", "root=vda poweroff", {"disk_images": [bad]}),
                               ("nodisk", "root=vdq poweroff", {})):
            name = "fs/rootfail/" + case
            r = ctx.boot(name, "up", opts, T_TOPOLOGY, disks=(), **kw)
            if r is None:
                return _budget_gone(ctx, [name])
            p = []
            if not re.search(r"^vfs: cannot mount root vd[aq]: .+", r.output, re.M):
                p.append("no 'vfs: cannot mount root vdX: reason' line")
            ctx.results.add(name, r.ok and not p, _why(r, p))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def job_kbench_fs(ctx):
    """kbench=fs prints its figures (not judged) without errors."""
    name = "kbench/fs"
    r, fsp = fs_boot(ctx, name, "default", "kbench=fs poweroff", T_KTEST, persist=False)
    if r is None:
        return _budget_gone(ctx, [name])
    p = list(fsp)
    m = FSBENCH_RE.search(r.output)
    if not m:
        p.append("no 'fsbench cache=... ops_per_sec=N errors=N' line")
    else:
        if int(m.group(3)) == 0:
            p.append("fsbench did no operations")
        if int(m.group(5)):
            p.append("fsbench: %s errors" % m.group(5))
    if not re.search(r"^fsbench class (buf|dnlc)_\S+ hits=[1-9]", r.output, re.M):
        p.append("no buffer-cache or DNLC class with hits")
    ctx.results.add(name, r.ok and not p, _why(r, p))


def job_witness(ctx):
    """The whole suite with the lock-order checker and contended-only
    statistics: every lock path runs instrumented."""
    name = "ktest/default/witness"
    r, fsp = fs_boot(ctx, name, "default", "ktest=all poweroff witness=on lockstat=contended",
                     T_KTEST, disks=KTEST_DISKS, ata_disks=KTEST_ATA_DISKS)
    if r is None:
        return _budget_gone(ctx, [name])
    _ktest_results(ctx, name, r, individual=False)
    ctx.results.add(name + "/fsck", r.ok and not fsp, _why(r, fsp))
    # The tests provoke reversals among their own test_* classes on purpose;
    # a reversal among the kernel's classes is a finding.
    real = [m.group(0) for m in WITNESS_RE.finditer(r.output)
            if not (m.group(1).startswith("test_") and m.group(2).startswith("test_"))]
    ctx.results.add(name + "/order", r.ok and not real, _why(r, real))


def job_kbench(ctx):
    """kbench=locks prints a parsable line per algorithm, and lockdump the
    per-class table.  The figures are benchmarks, not judged here."""
    name = "kbench/locks"
    r = ctx.boot(name, "default", "kbench=locks lockdump poweroff", T_KTEST)
    if r is None:
        return _budget_gone(ctx, [name])
    p = []
    algos = [m.group(1) for m in LOCKBENCH_RE.finditer(r.output)]
    for want in ("spin", "mcs", "h2mcs", "mutex"):
        if want not in algos:
            p.append("no lockbench line for %s" % want)
    if not re.search(r"^lockstat: class\s+kind\s+hits\s+misses", r.output, re.M):
        p.append("no lockdump table header")
    if not re.search(r"^lockstat: bench_mutex\s+mutex-spin\s+[1-9]", r.output, re.M):
        p.append("the lockdump table has no hits for bench_mutex")
    # lockdump also prints the disk queue statistics: at least ram0's line.
    if not re.search(r"^blkstat: disk\s+ops\s+reads\s+writes\s+blocks", r.output, re.M):
        p.append("no blkstat table header after the lockdump")
    if "ram0" not in [st[0] for st in BLKSTAT_RE.findall(r.output)]:
        p.append("no blkstat line for ram0")
    ctx.results.add(name, r.ok and not p, _why(r, p))


def run_host_script(ctx, prefix, script, timeout):
    """Run a host test script whose lines are "PASS name" / "FAIL name:
    why" and which ends with "N passed, N failed"; each case counts as a
    result named prefix/name, and the script as a whole as prefix."""
    log = os.path.join(LOGDIR, prefix.replace("/", "_") + ".log")
    try:
        p = subprocess.run([sys.executable, script], cwd=ROOT, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout)
        out, rc = p.stdout.decode(errors="replace"), p.returncode
    except subprocess.TimeoutExpired:
        out, rc = "timed out", -1
    with open(log, "w") as f:
        f.write(out)
    cases = 0
    # [ \t], not \s: a case with no reason must not swallow the next line.
    for m in re.finditer(r"^(PASS|FAIL) (\S+?):?(?:[ \t]+(.*))?$", out, re.M):
        ctx.results.add(prefix + "/" + m.group(2), m.group(1) == "PASS", m.group(3) or "")
        cases += 1
    summary = re.search(r"^(\d+) passed, (\d+) failed\s*$", out, re.M)
    ok = rc == 0 and summary is not None and cases > 0
    ctx.results.add(prefix, ok, "exit %s, %d cases [%s]" % (rc, cases, os.path.relpath(log, ROOT)))


def job_s5tools(ctx):
    """mkfs.s5/fsck.s5 host tests: their per-case lines count individually."""
    run_host_script(ctx, "s5tools", os.path.join(ROOT, "tests", "unit", "test_s5tools.py"),
                    T_UNIT)


def job_source_rules(ctx):
    """Locking rules checked on the source text (tests/unit/test_source_rules.py)."""
    run_host_script(ctx, "source", os.path.join(ROOT, "tests", "unit", "test_source_rules.py"),
                    T_UNIT)


def job_user_host(ctx):
    """The user-space tests (userland/tests/) on the build host's Linux:
    they must pass there, which shows they test Linux semantics
    (tests/usertests.py)."""
    run_host_script(ctx, "user/host", os.path.join(ROOT, "tests", "usertests.py"), T_UNIT)


def make_user_job(preset, small=False, opts=""):
    """The user-space tests inside Tempest (tests/user_check.py): each
    program is one result user/PRESET/NAME; the boot itself another."""
    def job(ctx):
        name = "user/" + preset

        def boot(machine, boot_opts, limit, images):
            return ctx.boot(name, machine, boot_opts, limit, disk_images=images)

        for test, reason in user_check.skipped(small):
            with ctx.results.lock:
                print("SKIP %s/%s: %s" % (name, test, reason), flush=True)
        r, results = user_check.run(boot, preset, opts, T_USER, small)
        if r is None:
            return _budget_gone(ctx, [name])
        for test, ok, why in results:
            ctx.results.add(name + "/" + test, ok, why)
        ctx.results.add(name, r.ok and bool(results),
                        _why(r, [] if results else ["no tests ran"]))
    return job


def make_tty_job(preset):
    """Typing at the console of an interactive shell (tests/tty_check.py):
    ^C, ^\\, ^Z and fg, SIGTTIN; each case one result user/tty/PRESET/NAME,
    the boot itself another."""
    def job(ctx):
        name = "user/tty/" + preset

        def boot(machine, boot_opts, limit, images, typist):
            return ctx.boot(name, machine, boot_opts, limit, disk_images=images,
                            typist=typist)

        r, results = tty_check.run(boot, preset, "", T_TTY)
        if r is None:
            return _budget_gone(ctx, [name])
        for test, ok, why in results:
            ctx.results.add(name + "/" + test, ok, why)
        ctx.results.add(name, r.ok and not r.typist_error,
                        _why(r, [r.typist_error] if r.typist_error else []))
    return job


def job_linux_peer(ctx):
    """The Linux peer (tools/linux_peer.py): Debian's kernel boots on the
    default preset, runs a command with its status, and runs every
    benchmark once (tests/test_linux_peer.py)."""
    run_host_script(ctx, "linux", os.path.join(ROOT, "tests", "test_linux_peer.py"), T_UNIT)


def job_icount(ctx):
    # No disks here: with -icount sleep=off virtual time leaps ahead whenever
    # every CPU is idle, while QEMU's disk emulation works in host time, so a
    # CPU waiting for a disk sees seconds of virtual time pass per request
    # and the tests' time guards mean nothing.  The block tests run on ram0
    # and report the devices absent; the root is the RAM disk (root=ram0,
    # formatted as a new S5 file system at boot).
    names = ["icount/default/topology", "icount/default/ktest"]
    m = tempest.machine("default")
    r = ctx.boot("icount/default", m, "ktest=all poweroff root=ram0", T_ICOUNT, accel="icount")
    if r is None:
        return _budget_gone(ctx, names)
    problems = check_topology(m, r.output)
    ctx.results.add(names[0], r.ok and not problems, _why(r, problems))
    _ktest_results(ctx, names[1], r, individual=False)


def job_bochs(ctx):
    """Bochs, 4 cpus, a scratch ATA disk on ata0-master (the boot CD-ROM
    is on ata1): the topology, and the block ktests that need no virtio."""
    name = "bochs/default"
    m = tempest.machine("default")
    r = ctx.boot(name, m, "ktest=%s poweroff" % BOCHS_KTESTS, T_BOCHS, emulator="bochs",
                 ata_disks=BOCHS_ATA_DISKS)
    if r is None:
        return _budget_gone(ctx, [name, name + "/ktest"])
    # Bochs has no SRAT or SLIT: one node holding every cpu and all memory.
    problems = check_topology(m.single_node(), r.output)
    summ = BLK_SUM_RE.findall(r.output)
    if not summ or int(summ[-1][1]) != len(BOCHS_ATA_DISKS):
        problems.append("want %d ata disk(s) found: %s" % (
            len(BOCHS_ATA_DISKS), "no 'blk: ...' line" if not summ else
            "blk: %s virtio, %s ata" % summ[-1][:2]))
    ctx.results.add(name, r.ok and not problems, _why(r, problems))
    _ktest_results(ctx, name + "/ktest", r, individual=True)


def job_disks_svr4mp(ctx):
    """The SVR4 MP machine's own 8 disks on 4 controllers (bridges): all
    attached in order, and the virtio tests on every one of them."""
    name = "disks/svr4mp"
    m = tempest.machine("svr4mp")
    r = ctx.boot(name, m, "ktest=blk_virtio,blk_virtio_mp,blk_virtio_sort poweroff", T_DISKS)
    if r is None:
        return _budget_gone(ctx, [name])
    problems = check_disks(m, r.output)
    ctx.results.add(name + "/layout", r.ok and not problems, _why(r, problems))
    _ktest_results(ctx, name, r, individual=True)


# blk_image's patterns (kern/tests/test_blk.c): the host writes blocks 1..15
# after the magic in block 0; the kernel writes blocks 16..31.
IMAGE_MAGIC = b"TEMPEST-HOST-IMAGE"


def _host_byte(b, i):
    return (b * 31 + i * 7 + 0x11) & 0xFF


def _kernel_byte(b, i):
    return (b * 13 + i * 3 + 0x5A) & 0xFF


def job_disks_image(ctx):
    """A host-made raw image attached with disk_images= is the kernel's vda
    (ahead of a scratch disk and the preset's), reads back what the host
    wrote, and what the kernel writes is in the file after power-off: the
    path the file-system tests take with mkfs.s5 and fsck.s5."""
    name = "disks/image"
    img = os.path.join(LOGDIR, "image.img")
    os.makedirs(LOGDIR, exist_ok=True)
    with open(img, "wb") as f:
        f.truncate(1 << 20)
        f.write(IMAGE_MAGIC)
        f.seek(512)
        f.write(bytes(_host_byte(b, i) for b in range(1, 16) for i in range(512)))
    r = ctx.boot(name, "default", "ktest=blk_image poweroff", T_DISKS,
                 disk_images=[img], disks=(1,))
    if r is None:
        return _budget_gone(ctx, [name])
    p = []
    if not re.search(r"^ktest: blk: vda: host image verified", r.output, re.M):
        p.append("the kernel did not verify the image on vda")
    names = [f[0] for f in VBLK_RE.findall(r.output)]
    if names != ["vda", "vdb"]:
        p.append("virtio disks %s, want vda (the image) and vdb" % " ".join(names))
    with open(img, "rb") as f:
        f.seek(16 * 512)
        data = f.read(16 * 512)
    want = bytes(_kernel_byte(b, i) for b in range(16, 32) for i in range(512))
    if data != want:
        bad = next((k for k in range(len(want)) if k >= len(data) or data[k] != want[k]), 0)
        p.append("after power-off the image's block %d byte %d is not what the kernel wrote"
                 % (16 + bad // 512, bad % 512))
    summary, _ = parse_ktests(r.output)
    if summary != (1, 0):
        p.append("ktest summary %s, want 1 passed, 0 failed" % (summary,))
    ctx.results.add(name, r.ok and not p, _why(r, p))
    if r.ok and not p:
        os.unlink(img)


def job_options(ctx):
    names = ["options/unknown", "options/badvalue"]
    m = tempest.machine("default")
    r = ctx.boot("options", m, "bogus=1 lock=frobnicate poweroff", T_TOPOLOGY)
    if r is None:
        return _budget_gone(ctx, names)
    # The machine must still boot normally, with the defaults.
    booted = check_topology(m, r.output)
    eff = effective_options(r.output)
    p = list(booted)
    if UNKNOWN_RE % "bogus" not in r.output:
        p.append("no \"%s\" line" % (UNKNOWN_RE % "bogus"))
    if eff is not None and "bogus" in eff:
        p.append("bogus appears among the effective options")
    ctx.results.add(names[0], r.ok and not p, _why(r, p))
    p = list(booted)
    if BADVALUE_RE % ("frobnicate", "lock") not in r.output:
        p.append("no \"%s\" line" % (BADVALUE_RE % ("frobnicate", "lock")))
    if eff is None:
        p.append("no 'options: lock=...' line of effective options")
    elif eff.get("lock") != "spin":
        p.append("effective lock=%s, want the default spin" % eff.get("lock"))
    ctx.results.add(names[1], r.ok and not p, _why(r, p))


def job_panic(ctx):
    """crash=pagefault: the kernel must report the fault with a symbolized
    backtrace and stop the machine itself (no timeout, no hang)."""
    name = "panic/pagefault"
    r = ctx.boot(name, "default", "crash=pagefault poweroff", T_TOPOLOGY)
    if r is None:
        return _budget_gone(ctx, [name])
    p = []
    if not r.status.startswith("panic"):
        p.append("want a panic, got: %s" % r.status)
    elif "did not stop" in r.status:
        p.append(r.status)
    if not re.search(r"^PANIC: page fault", r.output, re.M):
        p.append("no 'PANIC: page fault' line")
    if not re.search(r"^backtrace:\s*\n.*crash_on_purpose\+0x", r.output, re.M):
        p.append("no backtrace naming crash_on_purpose+0x...")
    ctx.results.add(name, not p, "; ".join(p) + " [%s/]" % r.keep)


def job_deadlock(ctx):
    """crash=deadlock: two threads deadlock on two resource locks on
    purpose; the hang watchdog must stop the machine and its dump must show
    the cycle -- each thread waiting for the lock the other holds -- both
    raw and in the condensed form the end of the check prints."""
    name = "panic/deadlock"
    r = ctx.boot(name, "default", "crash=deadlock poweroff", T_TOPOLOGY)
    if r is None:
        return _budget_gone(ctx, [name])
    p = []
    if not re.search(r"^PANIC: ktest: crash=deadlock still running after \d+ s: hung",
                     r.output, re.M):
        p.append("no watchdog PANIC line (status %s)" % r.status)
    waits = dict(re.findall(r"^thread (\d+) deadlock_\w: sleeping, cpu -?\d+, wchan \S+, "
                            r"waits for crash_\w \S+ held by thread (\d+)", r.output, re.M))
    if len(waits) != 2 or any(waits.get(holder) != waiter for waiter, holder in waits.items()):
        p.append("the dump does not show the two threads waiting for each other: %s" % waits)
    dump = condense_thread_dump(r.output) or ""
    if len(re.findall(r"deadlock_\w sleeping on \w+ \(crash_\w of t\d+\); holds crash_",
                      dump)) != 2:
        p.append("the condensed dump lacks the two waits: %r" % dump[:300])
    ctx.results.add(name, not p, "; ".join(p) + " [%s/]" % r.keep)
    with ctx.results.lock:          # a hang on purpose: not one to report
        ctx.results.dumps = [(j, d) for j, d in ctx.results.dumps if j != name]


def job_nosrat(ctx):
    name = "nosrat/4cpu"
    m = tempest.machine("name=nosrat,cpus=4,mem=512")
    r = ctx.boot(name, m, "poweroff", T_TOPOLOGY)
    if r is None:
        return _budget_gone(ctx, [name])
    problems = check_topology(m, r.output)
    ctx.results.add(name, r.ok and not problems, _why(r, problems))


def all_jobs():
    """(name, function) in start order: the long boots first."""
    presets = tempest.load_machines()
    big = [p for p in presets if presets[p].cpus >= 8]
    small = [p for p in presets if presets[p].cpus < 8]

    def ktests(which):
        return [("ktest/%s/lock=%s,sched=%s,cache=%s" % (p, l, s, c), make_ktest_job(p, l, s, c))
                for p in KTEST_PRESETS if p in which for l, s, c in KTEST_VARIANTS]

    covered = {(c, l) for l, _, c in KTEST_VARIANTS}
    fs_matrix = [("fs/matrix/cache=%s,lock=%s" % (c, l), make_fs_matrix_job(c, l))
                 for c in CACHE_MODELS for l in LOCK_ALGOS if (c, l) not in covered]

    jobs = [("unit", job_unit), ("s5tools", job_s5tools), ("source", job_source_rules), ("linux", job_linux_peer),
            ("user/host", job_user_host)]
    jobs += ktests(big)
    jobs += [("bochs/default", job_bochs), ("icount/default", job_icount)]
    jobs += [("disks/svr4mp", job_disks_svr4mp), ("disks/image", job_disks_image)]
    jobs += [("topology/" + p, make_topology_job(p)) for p in big]
    jobs += ktests(small)
    jobs += [("fs/corrupt", job_fs_corrupt)] + fs_matrix
    jobs += [("ktest/default/witness", job_witness), ("kbench/locks", job_kbench),
             ("kbench/fs", job_kbench_fs), ("fs/rootfail", job_fs_rootfail)]
    jobs += [("user/default", make_user_job("default")),
             ("user/svr4mp", make_user_job("svr4mp")),
             ("user/hector", make_user_job("hector", small=True)),
             ("user/tty/default", make_tty_job("default"))]
    jobs += [("options", job_options), ("nosrat/4cpu", job_nosrat),
             ("panic/pagefault", job_panic),
             ("panic/deadlock", job_deadlock)]
    jobs += [("topology/" + p, make_topology_job(p)) for p in small]
    return jobs


def main(argv=None):
    ap = argparse.ArgumentParser(description="Run every Tempest test.")
    ap.add_argument("-j", "--jobs", type=int, default=2,
                    help="emulators at once (default 2)")
    ap.add_argument("-k", dest="patterns", action="append", default=[],
                    help="run only jobs whose name contains this (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the jobs and exit")
    ap.add_argument("--timeout-scale", type=float, default=1.0,
                    help="multiply every time limit by this")
    ap.add_argument("--budget", type=float, default=BUDGET,
                    help="seconds for the whole run (default %d)" % BUDGET)
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print the console tail of failed boots")
    args = ap.parse_args(argv)

    jobs = all_jobs()
    if args.patterns:
        jobs = [j for j in jobs if any(p in j[0] for p in args.patterns)]
    if args.list:
        for name, _ in jobs:
            print(name)
        return 0

    results = Results()
    start = time.monotonic()
    host_only = ("unit", "s5tools", "source")
    boots = [j for j in jobs if j[0] not in host_only]
    if boots and not os.path.exists(tempest.KERNEL):
        results.add("build", False, "%s is missing; run make first"
                    % os.path.relpath(tempest.KERNEL, ROOT))
        jobs = [j for j in jobs if j[0] in host_only]
    shutil.rmtree(LOGDIR, ignore_errors=True)
    os.makedirs(LOGDIR, exist_ok=True)
    ctx = Ctx(args, results)
    try:
        if boots and os.path.exists(tempest.KERNEL):
            # Make every ISO up front, one at a time, so the boots only boot.
            for opts in ("poweroff", "ktest=all poweroff", "bogus=1 lock=frobnicate poweroff",
                         "crash=pagefault poweroff"):
                tempest.make_iso(opts)
    except Exception as e:
        results.add("iso", False, "cannot make a boot ISO: %s" % e)
        jobs = [j for j in jobs if j[0] in host_only]

    def run(job):
        name, fn = job
        try:
            fn(ctx)
        except Exception as e:  # a harness bug must not hide the other results
            results.add(name, False, "harness error: %s: %s" % (type(e).__name__, e))

    def terminated(signum, frame):
        # Once is enough: timeout(1) and terminals may signal a whole group.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, terminated)
    signal.signal(signal.SIGINT, terminated)

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs))
    futures = [pool.submit(run, j) for j in jobs]
    try:
        for f in futures:
            f.result()
    except KeyboardInterrupt:
        tempest.kill_all()
        pool.shutdown(wait=True, cancel_futures=True)
        print("check: interrupted", flush=True)
        print("%d passed, %d failed" % (results.passed, results.failed + 1), flush=True)
        return 130
    pool.shutdown(wait=True)

    elapsed = time.monotonic() - start
    with open(os.path.join(LOGDIR, "times.txt"), "w") as f:
        for job, secs, status in sorted(results.times, key=lambda t: -t[1]):
            f.write("%-24s %7.1f s  %s\n" % (job, secs, status))
    for job, dump in results.dumps:
        print("hung threads of %s:\n%s" % (job, dump))
    print("check: %d jobs in %d s; logs in %s/" % (len(jobs), elapsed,
                                                   os.path.relpath(LOGDIR, ROOT)))
    print("%d passed, %d failed" % (results.passed, results.failed))
    return 1 if results.failed else 0


if __name__ == "__main__":
    sys.exit(main())
