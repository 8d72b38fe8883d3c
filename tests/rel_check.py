"""Reliability in make check (issue 19), for tests/check.py: short forms of
the long campaigns, each a job of its own.

  ktest/default/kmemdebug  the whole ktest suite with heap checking on
                           (kmemdebug=on): no check fires, the root fsck's
  kmemdebug/KIND           crash=kmem_KIND under kmemdebug=on: a double
                           free, an overrun, a use after free and a free
                           of a foreign pointer each panic, naming both
                           call sites as function+offset
  crash/s5/..., crash/ufs/...
                           tests/crash_check.py: QEMU killed in the middle
                           of a file workload, fsck.s5 or fsck.ufs -y,
                           every fsync'ed file intact (one stop point per
                           syncwrites value here, many in make crash)
  flip/s5, flip/ufs        tests/flip_check.py: images with random bytes
                           flipped in their metadata, mounted and walked
                           inside Tempest (a few here, 1000 in make flip)
  soak/short               tools/soak.py for 30 s on svr4mp, 8 users
  oom/copy                 userland/oomcopy on up: a copy out to user memory
                           that finds no page kills the largest process (a
                           memory hog) and finishes, the reader unharmed
  fuzz/short               tools/fuzz.py: 20,000 calls on each CPU of default
"""

import argparse
import os
import re
import shutil
import sys
import tempfile

from checklib import T_KTEST, T_TOPOLOGY, T_USER, budget_gone, ktest_results, fail_reason
from fs_check import fs_boot
from ktest_check import KTEST_DISKS, KTEST_ATA_DISKS
import crash_check
import flip_check

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tools"))
import fuzz  # noqa: E402
import soak  # noqa: E402

# crash=kmem_KIND: what kmemdebug must say, with both call sites in the
# function that misuses the heap on purpose (kern/main.c).
SITE = r"heap_misuse_on_purpose\+0x[0-9a-f]+"
KMEM_CATCHES = {
    "double": r"kmemdebug: double free of \S+ \(100 bytes\): freed at %s, and again at %s"
              % (SITE, SITE),
    "overrun": r"kmemdebug: red zone after object \S+ \(100 bytes\) overwritten at offset 100: "
               r"allocated at %s, freed at %s" % (SITE, SITE),
    "uaf": r"kmemdebug: use after free: object \S+ \(100 bytes, freed at %s\) was written at "
           r"offset 8 after its free; reused now by %s" % (SITE, SITE),
    "foreign": r"kmemdebug: kfree of \S+, which is not an object's start: it lies 8 bytes into "
               r"the object at \S+ allocated at %s; freed at %s" % (SITE, SITE),
}


def job_kmemdebug_ktests(ctx):
    """The ktest suite once with heap checking on."""
    name = "ktest/default/kmemdebug"
    r, fsp = fs_boot(ctx, name, "default", "ktest=all poweroff kmemdebug=on", T_KTEST,
                     disks=KTEST_DISKS, ata_disks=KTEST_ATA_DISKS)
    if r is None:
        return budget_gone(ctx, [name])
    ktest_results(ctx, name, r, individual=False)
    ctx.results.add(name + "/fsck", r.ok and not fsp, fail_reason(r, fsp))


def make_kmem_catch_job(kind):
    def job(ctx):
        name = "kmemdebug/" + kind
        r = ctx.boot(name, "up", "kmemdebug=on crash=kmem_%s poweroff" % kind, T_TOPOLOGY)
        if r is None:
            return budget_gone(ctx, [name])
        p = []
        if not r.status.startswith("panic") or "did not stop" in r.status:
            p.append("want a panic that stops the machine, got: %s" % r.status)
        if not re.search(r"^PANIC: " + KMEM_CATCHES[kind], r.output, re.M):
            found = re.findall(r"^PANIC: .*$", r.output, re.M)
            p.append("no PANIC line matching /%s/ (got %r)" % (KMEM_CATCHES[kind], found[:1]))
        ctx.results.add(name, not p, "; ".join(p))
    return job


class BudgetGone(Exception):
    pass


def booter(ctx, name):
    """tempest.boot's arguments, through ctx.boot (its budget, its logs:
    the job's first boot in build/check/NAME, the later ones in NAME#2,
    NAME#3 ..., so that a crash test's verify boot keeps the console of
    the load boot it follows)."""
    count = [0]

    def boot(machine, opts, timeout=300, keep=None, **kw):
        count[0] += 1
        log = name if count[0] == 1 else "%s#%d" % (name, count[0])
        r = ctx.boot(log, machine, opts, timeout, **kw)
        if r is None:
            raise BudgetGone(name)
        return r
    return boot


# The crash test's short form: one stop point under each syncwrites value.
CRASH_SHORT = (("on", 8, 0.3), ("off", 20, 0.7))


def make_crash_job(fs, syncwrites, after, delay):
    def job(ctx):
        name = "crash/%s/syncwrites=%s" % (fs, syncwrites)
        try:
            p, facts = crash_check.stop_point(fs, "default", syncwrites, after, delay, 4,
                                              boot=booter(ctx, name))
        except BudgetGone:
            return budget_gone(ctx, [name])
        ctx.results.add(name, not p, crash_story(p) + (" (%s)" % facts if p else ""))
    return job


def crash_story(problems):
    """A failed stop point's problems in one line: the first missing files,
    then every other kind (what fsck -y said, the verify boot), which
    tell why more than a list of names does."""
    missing = [q for q in problems if q.endswith(" is missing")]
    rest = [q for q in problems if not q.endswith(" is missing")]
    shown = missing[:3] + rest[:4]
    more = len(problems) - len(shown)
    return " | ".join(shown) + (" (and %d more)" % more if more else "")


def make_flip_job(fs):
    def job(ctx):
        """One boot of FLIP_SHORT byte-flipped images (the long form: make flip)."""
        name = "flip/" + fs
        tmp = tempfile.mkdtemp(prefix="tempest-flip-")
        try:
            counts, failures, _ = flip_check.campaign(FLIP_SHORT, 7, FLIP_SHORT, "default", tmp,
                                                      report=lambda line: None,
                                                      boot=booter(ctx, name), fs=fs)
        except BudgetGone:
            return budget_gone(ctx, [name])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        ctx.results.add(name, not failures, " | ".join(failures[:3]))
    return job


FLIP_SHORT = 8
SOAK_SHORT = 30        # seconds of load
FUZZ_SHORT = 20000     # calls per CPU


def job_soak_short(ctx):
    name = "soak/short"
    try:
        p, _ = soak.soak(SOAK_SHORT, 8, "svr4mp", "", report=lambda line: None,
                         boot=booter(ctx, name))
    except BudgetGone:
        return budget_gone(ctx, [name])
    ctx.results.add(name, not p, " | ".join(p[:3]))


def job_fuzz_short(ctx):
    """A short campaign: FUZZ_SHORT calls on each CPU of default, typed
    arguments, signals, the bounds; no panic, hang, leak or failed check."""
    name = "fuzz/short"
    boot = booter(ctx, name)
    try:
        verdict, detail, calls, ncpu, _ = fuzz.boot_once(
            argparse.Namespace(calls=FUZZ_SHORT, opts="", timeout=T_USER, keep=None, tmp=None),
            "default", 5, 0, boot=boot)
    except BudgetGone:
        return budget_gone(ctx, [name])
    ctx.results.add(name, verdict == "ok", "%s: %s (%d calls on %d CPUs)"
                    % (verdict, detail, calls, ncpu))


OOMCOPY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "build", "userland", "oomcopy")


def job_oom_copy(ctx):
    """oomcopy in a guest of its own: its checks, and the kernel's word
    on the kill (the hog the victim, the reader the one that faulted)."""
    import userrun
    name = "oom/copy"
    tmp = tempfile.mkdtemp(prefix="tempest-oom-")
    try:
        add = os.path.join(tmp, "add")
        os.makedirs(add)
        shutil.copy(OOMCOPY, os.path.join(add, "oomcopy"))
        img = os.path.join(tmp, "root.img")
        userrun.mkroot(img, "/add/oomcopy; echo \"OOMCOPY-EXIT[$?]\"", add, "4M", False)
        r = ctx.boot(name, "up", "root=vda poweroff", T_USER, disk_images=[img])
    except (userrun.Failure, OSError) as e:
        ctx.results.add(name, False, "not run: %s" % e)
        return
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if r is None:
        return budget_gone(ctx, [name])
    p = [l.strip() for l in r.output.splitlines() if l.startswith("FAIL oomcopy")]
    if "OOMCOPY-EXIT[0]" not in r.output:
        said = re.findall(r"^(proc: pid \d+ .*killed.*|OOMCOPY-EXIT.*)$", r.output, re.M)
        p.append("oomcopy did not end well: %s" % ("; ".join(said[:3]) or r.status))
    pids = re.search(r"^oomcopy: reader pid (\d+), hog pid (\d+)", r.output, re.M)
    kills = re.findall(r"pid (\d+) \(\S+\) killed by signal 9: out of memory \(the largest, "
                       r"\d+ pages; pid (\d+) faulted\)", r.output)
    if pids and (pids.group(2), pids.group(1)) not in kills:
        p.append("the kernel did not kill the hog (pid %s) for the reader's fault (pid %s): "
                 "it killed %s" % (pids.group(2), pids.group(1),
                                   ", ".join("%s for %s" % k for k in kills) or "nobody"))
    ctx.results.add(name, not p, " | ".join(p[:3]))


def jobs():
    """(name, function) for check.py."""
    out = [("ktest/default/kmemdebug", job_kmemdebug_ktests)]
    out += [("kmemdebug/" + k, make_kmem_catch_job(k)) for k in KMEM_CATCHES]
    out += [("crash/%s/syncwrites=%s" % (fs, sw), make_crash_job(fs, sw, a, d))
            for fs in ("s5", "ufs") for sw, a, d in CRASH_SHORT]
    out += [("flip/s5", make_flip_job("s5")), ("flip/ufs", make_flip_job("ufs")),
            ("soak/short", job_soak_short), ("fuzz/short", job_fuzz_short),
            ("oom/copy", job_oom_copy)]
    return out
