"""The data-race detector (make KCSAN=1, kern/kcsan/) in make check, for
tests/check.py:

  kcsan/default      builds build/kcsan/kernel.elf and boots it on default
                     with ktest=kcsan_planted and a short user workload
                     (a few user tests, then cat /proc/kcsan):
                     kcsan_planted passes; the console reports the planted
                     race between racy_store and racy_load, and none on
                     the locked pair; t_kcsan's race through /proc/kcsan
                     is reported with kcsan_hook_racy on both sides, and
                     none in kcsan_hook_locked; each planted report names
                     the variable raced on (racy_word, hook_count); /proc/kcsan says the detector is on
                     and armed watchpoints; the user tests pass.  The other
                     races the boot reports are listed, not judged (issue
                     34's campaign is where each one is settled).

  kcsan/off          the same kernel booted on up with kcsan=off: every
                     call site of a reporting hook in the link-time table
                     made a no-op (none left, more than OFF_SITES_MIN),
                     and a few user tests pass on the patched code

make check-long (--long) adds the campaign, a kernel boot and a user boot
on each of default, svr4mp and hector with cluster=4:

  kcsan/ktest/PRESET/long
                     ktest=all on a fresh S5 root with the scratch disks
                     of the ktest jobs; the suite passes, and no race is
                     reported but the planted racy_store/racy_load
  kcsan/user/PRESET/long
                     the user tests (t_kcsan among them) on their root
                     image; each passes, and no race is reported but
                     t_kcsan's kcsan_hook_racy
"""

import os
import re
import shutil
import tempfile
import threading

import user_check
from checklib import ROOT, T_KTEST, T_USER, budget_gone, fail_reason, ktest_results, make_variant
from fs_check import fs_boot
from ktest_check import KTEST_ATA_DISKS, KTEST_DISKS

KCSAN_KERNEL = os.path.join(ROOT, "build", "kcsan", "kernel.elf")
# The workload: a few of the user tests (processes, threads, files, the
# page cache), then the detector's counts.
WORKLOAD = ("t_proc", "t_thread", "t_fileio", "t_pagecache", "t_kcsan")
# The planted races: the ktest's (kern/tests/test_kcsan.c) and the one
# t_kcsan plants through writes to /proc/kcsan (kern/procfs/procfs_kcsan.c),
# as the pair of functions each report must name; and the locked near
# misses, which no report may name.
PLANTED = ({"racy_store", "racy_load"}, {"kcsan_hook_racy"})
# The variable each planted race is on, as the report's "in" line names it
# (kern/vm/addr_describe.c).
PLANTED_VARS = {frozenset({"racy_store", "racy_load"}): "racy_word",
                frozenset({"kcsan_hook_racy"}): "hook_count"}
OBJECT_RE = re.compile(r"^kcsan: data race between (\S+) and (\S+)\nkcsan:   in (.*)$", re.M)
LOCKED = {"locked_store", "locked_load", "kcsan_hook_locked"}
# kcsan=off: the patched sites (a KCSAN=1 kernel has about 24000) and the
# user tests that run on the patched code.
OFF_RE = re.compile(r"^kcsan: off: (\d+) hook calls made no-ops, (\d+) sites left", re.M)
OFF_SITES_MIN = 10000
OFF_WORKLOAD = ("t_proc", "t_fileio")
RACE_RE = re.compile(r"^kcsan: data race (?:between (\S+) and (\S+)|at (\S+):.*)$", re.M)
PROC_RE = re.compile(r"^kcsan-proc: (\w+) (\d+)\s*$", re.M)


# One build per run: the jobs that need the kernel may run at once, and two
# makes of one tree would clobber each other's objects.
_build_lock = threading.Lock()
_build_result = []


def build_kcsan():
    """make KCSAN=1 (incremental), once per run; None when it worked, else
    its last lines."""
    with _build_lock:
        if not _build_result:
            _build_result.append(_make_kcsan())
        return _build_result[0]


def _make_kcsan():
    return make_variant("KCSAN", KCSAN_KERNEL)


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
    objects = {}
    for m in OBJECT_RE.finditer(output):
        objects.setdefault(frozenset({fn(m.group(1)), fn(m.group(2))}), m.group(3))
    for pair, var in PLANTED_VARS.items():
        said = objects.get(pair)
        if pair in map(frozenset, pairs) and not (said or "").startswith("the variable %s+" % var):
            p.append("the report of %s does not say it is in the variable %s (it says %r)"
                     % ("/".join(sorted(pair)), var, said))
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


def boot_user(ctx, name, preset, opts, cmds):
    """Boot the KCSAN kernel on preset with opts and a root image whose
    init runs cmds [(name, command)]: the boot's result, None when the
    budget ran out."""
    user_check.build_userland()
    tmp = tempfile.mkdtemp(prefix="tempest-kcsan-")
    try:
        img = user_check.make_image(tmp, cmds)
        return ctx.boot(name, preset, "root=vda %s poweroff" % opts, T_USER,
                        kernel=KCSAN_KERNEL, disk_images=[img])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def job_kcsan(ctx):
    name = "kcsan/default"
    problem = build_kcsan()
    ctx.results.add("kcsan/build", problem is None, problem or "")
    if problem:
        ctx.results.add(name, False, "not booted: the build failed")
        return
    cmds = [(n, "/tests/" + n) for n in WORKLOAD]
    cmds.append(("kcsan-proc", "sed 's/^/kcsan-proc: /' /proc/kcsan"))
    r = boot_user(ctx, name, "default", "ktest=kcsan_planted", cmds)
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


def off_problems(output):
    """What is wrong with kcsan=off's patching, from the console."""
    m = OFF_RE.search(output)
    if not m:
        return ["no 'kcsan: off: N hook calls made no-ops' line"]
    done, left = int(m.group(1)), int(m.group(2))
    p = []
    if done < OFF_SITES_MIN:
        p.append("only %d hook calls made no-ops (at least %d expected)" % (done, OFF_SITES_MIN))
    if left:
        p.append("%d call sites of the table were not calls to a hook" % left)
    return p


def job_kcsan_off(ctx):
    name = "kcsan/off"
    problem = build_kcsan()
    if problem:
        ctx.results.add(name, False, "not booted: the build failed")
        return
    cmds = [(n, "/tests/" + n) for n in OFF_WORKLOAD]
    r = boot_user(ctx, name, "up", "kcsan=off", cmds)
    if r is None:
        return budget_gone(ctx, [name, name + "/patched"])
    for test, ok, reason in user_check.judge(r.output, cmds):
        ctx.results.add(name + "/" + test, ok, reason)
    problems = off_problems(r.output)
    ctx.results.add(name + "/patched", r.ok and not problems, fail_reason(r, problems))
    ctx.results.add(name, r.ok, fail_reason(r, []))


# ---- make check-long: the campaign ----

# The presets and their options; hector is clustered (issue 20).
LONG_PRESETS = (("default", ""), ("svr4mp", ""), ("hector", "cluster=4"))
# A KCSAN kernel runs several times slower than the plain one.
LONG_SLOWDOWN = 2


def unexplained(output, allowed):
    """The races reported other than the planted pairs in allowed, as
    printable strings."""
    return ["%s and %s" % (a, b or "(value changed)") for a, b in races(output)
            if {fn(a), fn(b)} not in allowed]


def add_race_result(ctx, name, r, allowed, want):
    """NAME/races: every planted pair in want reported, nothing else."""
    p = ["race reported between " + x for x in unexplained(r.output, allowed)]
    pairs = [{fn(a), fn(b)} for a, b in races(r.output)]
    p += ["planted race not reported: %s" % " and ".join(sorted(w)) for w in want
          if w not in pairs]
    ctx.results.add(name + "/races", r.ok and not p, fail_reason(r, p))


def make_long_ktest_job(preset, opts):
    """ktest=all under KCSAN=1 on preset with a root and scratch disks."""
    def job(ctx):
        name = "kcsan/ktest/%s/long" % preset
        problem = build_kcsan()
        if problem:
            ctx.results.add(name, False, "not booted: " + problem)
            return
        r, fsp = fs_boot(ctx, name, preset, ("ktest=all poweroff " + opts).strip(),
                         T_KTEST * LONG_SLOWDOWN, kernel=KCSAN_KERNEL,
                         disks=KTEST_DISKS, ata_disks=KTEST_ATA_DISKS)
        if r is None:
            return budget_gone(ctx, [name, name + "/fsck", name + "/races"])
        ktest_results(ctx, name, r, individual=False)
        ctx.results.add(name + "/fsck", r.ok and not fsp, fail_reason(r, fsp))
        add_race_result(ctx, name, r, PLANTED[:1], PLANTED[:1])
    return job


def make_long_user_job(preset, opts):
    """The user tests under KCSAN=1 on preset."""
    def job(ctx):
        name = "kcsan/user/%s/long" % preset
        problem = build_kcsan()
        if problem:
            ctx.results.add(name, False, "not booted: " + problem)
            return

        def boot(machine, boot_opts, limit, images):
            return ctx.boot(name, machine, boot_opts, limit * LONG_SLOWDOWN,
                            kernel=KCSAN_KERNEL, disk_images=images)
        r, results = user_check.run(boot, preset, opts, T_USER)
        if r is None:
            return budget_gone(ctx, [name, name + "/races"])
        for test, ok, reason in results:
            ctx.results.add(name + "/" + test, ok, reason)
        ctx.results.add(name, r.ok and bool(results),
                        fail_reason(r, [] if results else ["no tests ran"]))
        add_race_result(ctx, name, r, PLANTED[1:], PLANTED[1:])
    return job


def long_jobs():
    """The campaign's jobs for check.py --long."""
    jobs = []
    for preset, opts in LONG_PRESETS:
        jobs.append(("kcsan/ktest/%s/long" % preset, make_long_ktest_job(preset, opts)))
        jobs.append(("kcsan/user/%s/long" % preset, make_long_user_job(preset, opts)))
    return jobs
