"""The kernel builds and options the papers' experiments need (issue 21),
in make check, for tests/check.py:

  upbuild/ktest      builds build/up/kernel.elf (TEMPEST_UP: spin locks
                     are interrupt masking, cross-CPU calls local, no AP
                     started) and boots it on the up preset with
                     ktest=all and a fresh S5 root: the whole suite must
                     pass, the console must say it is the uniprocessor
                     build, and the root must be clean after power-off
  upbuild/default    the same kernel on default (4 CPUs, 2 nodes) starts
                     no application processor: "smp: 1 cpus online"
                     (a short boot, poweroff alone)
  alloc/default      alloc=interleave on default (2 nodes): the ktest
                     page_alloc_policy passes (data pages round robin over
                     the nodes, counted as other in /proc/vmstat's terms),
                     and the options line says alloc=interleave
  alloc/bad          alloc=far: one line naming the bad value, and the
                     default (alloc=local) used; the same ktest passes
"""

import os
import re

from checklib import ROOT, T_KTEST, budget_gone, fail_reason, ktest_results, make_variant
from fs_check import fs_boot
from ktest_check import KTEST_ATA_DISKS, KTEST_DISKS

UP_KERNEL = os.path.join(ROOT, "build", "up", "kernel.elf")
ONLINE_RE = re.compile(r"^smp: (\d+) cpus online", re.M)
UP_BANNER = re.compile(r"^smp: uniprocessor build \(TEMPEST_UP\)", re.M)


def build_up():
    """make UP=1 (incremental); None when it worked, else its last lines."""
    return make_variant("UP", UP_KERNEL)


def job_upbuild(ctx):
    name = "upbuild/ktest"
    problem = build_up()
    ctx.results.add("upbuild/build", problem is None, problem or "")
    if problem:
        ctx.results.add(name, False, "not booted: the build failed")
        return
    r, fsp = fs_boot(ctx, name, "up", "ktest=all poweroff", T_KTEST, kernel=UP_KERNEL,
                     disks=KTEST_DISKS, ata_disks=KTEST_ATA_DISKS)
    if r is None:
        return budget_gone(ctx, [name, name + "/fsck", name + "/banner"])
    ktest_results(ctx, name, r, individual=False)
    ctx.results.add(name + "/fsck", r.ok and not fsp, fail_reason(r, fsp))
    banner = bool(UP_BANNER.search(r.output))
    # No maxcpus= was given: a line naming it would be an untruth.
    maxcpus = re.search(r"^smp: maxcpus=.*$", r.output, re.M)
    ctx.results.add(name + "/banner", banner and not maxcpus,
                    "no 'smp: uniprocessor build (TEMPEST_UP)' line" if not banner else
                    "a maxcpus line with no maxcpus= asked for: %r" % maxcpus.group(0)
                    if maxcpus else "")
    _boot_default(ctx)


def _boot_default(ctx):
    """The UP kernel on a 4-CPU machine brings up the boot CPU alone."""
    name = "upbuild/default"
    r = ctx.boot(name, "default", "poweroff", 120, kernel=UP_KERNEL)
    if r is None:
        return budget_gone(ctx, [name])
    m = ONLINE_RE.search(r.output)
    problems = [] if m and m.group(1) == "1" else [
        "cpus online: %s, not 1" % (m.group(1) if m else "no 'smp: N cpus online' line")]
    ctx.results.add(name, r.ok and not problems, fail_reason(r, problems))


def _alloc_boot(ctx, name, value, want, bad):
    r = ctx.boot(name, "default", "alloc=%s ktest=page_alloc_policy poweroff" % value, 300)
    if r is None:
        return budget_gone(ctx, [name])
    problems = []
    if not re.search(r"^ktest: PASS page_alloc_policy$", r.output, re.M):
        problems.append("no 'ktest: PASS page_alloc_policy' line")
    if not re.search(r"^options: .* alloc=%s( |$)" % want, r.output, re.M):
        problems.append("the options line does not say alloc=%s" % want)
    said = re.search(r"^options: bad value '%s' for alloc=" % value, r.output, re.M)
    if bad and not said:
        problems.append("no line naming the bad value %s" % value)
    ctx.results.add(name, r.ok and not problems, fail_reason(r, problems))


def job_alloc(ctx):
    _alloc_boot(ctx, "alloc/default", "interleave", "interleave", False)
    _alloc_boot(ctx, "alloc/bad", "far", "local", True)
