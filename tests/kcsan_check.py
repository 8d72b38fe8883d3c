"""The data-race detector (make KCSAN=1, kern/kcsan/) in make check, for
tests/check.py:

  kcsan/default      builds build/kcsan/kernel.elf and boots it on default
                     with ktest=kcsan_planted and a short user workload
                     (a few user tests, then cat /proc/kcsan):
                     kcsan_planted passes; the console reports the planted
                     race between racy_store and racy_load, and none on
                     the locked pair; t_kcsan's race through /proc/kcsan
                     is reported with kcsan_hook_racy on both sides, and
                     none in kcsan_hook_locked; /proc/kcsan says the detector is on
                     and armed watchpoints; the user tests pass.  The other
                     races the boot reports are listed, not judged (issue
                     34's campaign is where each one is settled).
"""

import os
import re
import shutil
import subprocess
import tempfile

import hostcores
import user_check
from checklib import ROOT, T_USER, budget_gone, fail_reason

KCSAN_KERNEL = os.path.join(ROOT, "build", "kcsan", "kernel.elf")
# The workload: a few of the user tests (processes, threads, files, the
# page cache), then the detector's counts.
WORKLOAD = ("t_proc", "t_thread", "t_fileio", "t_pagecache", "t_kcsan")
# The planted races: the ktest's (kern/tests/test_kcsan.c) and the one
# t_kcsan plants through writes to /proc/kcsan (kern/procfs/procfs_kcsan.c),
# as the pair of functions each report must name; and the locked near
# misses, which no report may name.
PLANTED = ({"racy_store", "racy_load"}, {"kcsan_hook_racy"})
LOCKED = {"locked_store", "locked_load", "kcsan_hook_locked"}
RACE_RE = re.compile(r"^kcsan: data race (?:between (\S+) and (\S+)|at (\S+):.*)$", re.M)
PROC_RE = re.compile(r"^kcsan-proc: (\w+) (\d+)\s*$", re.M)


def build_kcsan():
    """make KCSAN=1 (incremental); None when it worked, else its last lines."""
    with hostcores.hold(1):
        r = subprocess.run(["make", "-s", "--no-print-directory", "KCSAN=1",
                            os.path.relpath(KCSAN_KERNEL, ROOT)], cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        return "make KCSAN=1 failed: " + " | ".join(r.stdout.decode(errors="replace")
                                                     .strip().splitlines()[-3:])
    return None


def races(output):
    """[(site, site)] of every race reported; a value change has None as
    its second site."""
    found = []
    for m in RACE_RE.finditer(output):
        found.append((m.group(1), m.group(2)) if m.group(1) else (m.group(3), None))
    return found


def fn(site):
    return site.split("+")[0] if site else None


def planted_problems(output):
    """What is wrong with the planted races' reports."""
    pairs = [{fn(a), fn(b)} for a, b in races(output)]
    p = []
    if {"racy_store", "racy_load"} not in pairs:
        p.append("no 'kcsan: data race between racy_store+.. and racy_load+..' line")
    if {"kcsan_hook_racy"} not in pairs:
        p.append("no 'kcsan: data race between kcsan_hook_racy+.. and kcsan_hook_racy+..' "
                 "line (t_kcsan's race through /proc/kcsan)")
    locked = [s for s in pairs if s & LOCKED]
    if locked:
        p.append("a race reported on a locked pair: %s" % sorted(locked[0], key=str))
    if not re.search(r"^ktest: PASS kcsan_planted$", output, re.M):
        p.append("no 'ktest: PASS kcsan_planted' line")
    return p


def planted(pair):
    """Whether a race (site, site) is one of the planted ones."""
    return {fn(pair[0]), fn(pair[1])} in PLANTED


def proc_problems(output):
    """/proc/kcsan as the workload's last command printed it."""
    counts = {k: int(v) for k, v in PROC_RE.findall(output)}
    if not counts:
        return ["no /proc/kcsan lines (kcsan-proc: NAME VALUE)"]
    p = []
    if counts.get("enabled") != 1:
        p.append("/proc/kcsan: enabled %s, not 1" % counts.get("enabled"))
    if not counts.get("watched"):
        p.append("/proc/kcsan: no watchpoint armed")
    if not counts.get("reports"):
        p.append("/proc/kcsan: no report counted (the planted race is one)")
    return p


def job_kcsan(ctx):
    name = "kcsan/default"
    problem = build_kcsan()
    ctx.results.add("kcsan/build", problem is None, problem or "")
    if problem:
        ctx.results.add(name, False, "not booted: the build failed")
        return
    user_check.build_userland()
    cmds = [(n, "/tests/" + n) for n in WORKLOAD]
    cmds.append(("kcsan-proc", "sed 's/^/kcsan-proc: /' /proc/kcsan"))
    tmp = tempfile.mkdtemp(prefix="tempest-kcsan-")
    try:
        img = user_check.make_image(tmp, cmds)
        r = ctx.boot(name, "default", "root=vda ktest=kcsan_planted poweroff", T_USER,
                     kernel=KCSAN_KERNEL, disk_images=[img])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if r is None:
        return budget_gone(ctx, [name, name + "/planted", name + "/proc"])
    for test, ok, reason in user_check.judge(r.output, cmds[:-1]):
        ctx.results.add(name + "/" + test, ok, reason)
    for part, problems in (("planted", planted_problems(r.output)),
                           ("proc", proc_problems(r.output))):
        ctx.results.add(name + "/" + part, r.ok and not problems, fail_reason(r, problems))
    others = [p for p in races(r.output) if not planted(p)]
    with ctx.results.lock:
        for a, b in others:
            print("INFO %s: race reported between %s and %s" % (name, a, b or "(value changed)"),
                  flush=True)
    ctx.results.add(name, r.ok, fail_reason(r, []))
