"""The in-kernel test suite (kern/tests/) in make check, for tests/check.py:

  ktest/PRESET/lock=L,sched=S,cache=C
                     ktest=all on up, default and hector under each of
                     three pairings, so every lock=, sched= and cache=
                     value runs the whole suite on each; scratch virtio
                     and ATA disks attached, a fresh S5 root fsck'd after
  ktest/default/witness
                     the suite with the lock-order checker on; a reversal
                     among the kernel's own lock classes fails
  kbench/locks       kbench=locks lockdump: a line per lock algorithm,
                     the lockstat and blkstat tables (figures not judged)
  pvspin/default     pvspin=on: the lock tests and segmap_mp on default
                     under h2mcs; the pvspin_* tests (waiters halted and
                     kicked) pass
"""

import re

from checklib import T_KTEST, budget_gone, ktest_results, fail_reason
from fs_check import fs_boot

KTEST_PRESETS = ("up", "default", "hector")
# Every lock=, sched= and cache= value runs the whole suite on each ktest
# preset; the file-system tests also run under every cache x lock pairing
# on default (fs/matrix).
KTEST_VARIANTS = (("spin", "global", "single"), ("mcs", "percpu", "hashfree"),
                  ("h2mcs", "cluster", "ssac"))
# Scratch disks (MiB, sparse) attached to ktest boots, so the block-device
# tests run against real devices, not only the RAM disk: two virtio disks
# (vda, vdb) and one ATA disk (ata0; PIO under emulation is slow, and the
# ATA tests move little data anyway).
KTEST_DISKS = (8, 8)
KTEST_ATA_DISKS = (1,)
WITNESS_RE = re.compile(r'^witness: lock order reversal: acquiring "(\S+)" while holding "(\S+)"',
                        re.M)
LOCKBENCH_RE = re.compile(r"^lockbench (\S+) uncontended_off=(\d+) uncontended_on=(\d+) "
                          r"contended_ops=(\d+)\s*$", re.M)
BLKSTAT_RE = re.compile(r"^blkstat: (\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s", re.M)


def make_ktest_job(preset, lock, sched, cache):
    """The whole suite on preset under one pairing.

    On hector (16 CPUs) these boots once hung on a two-core host (issue
    29): segmap_mp under lock=mcs and reclaim_mapped under lock=h2mcs ran
    past the ktest watchdog's 300 s.  The cause was the emulator, not the
    kernel: the boot shared the two host cores with another 16-CPU boot,
    and a queue lock hands the lock to the next waiter in line, whose
    virtual CPU's thread may not be running, while every CPU queued
    behind it spins.  So ctx.boot gives such a boot the whole host
    (tests/hostcores.py) and, as even alone the tail was long (one such
    test once passed 300 s with a spinning process beside the check), boots
    hector with pvspin=on (checklib.pvspin_needed); the tests' own times
    are printed ("ktest: slow") to show the margin."""
    def job(ctx):
        name = "ktest/%s/lock=%s,sched=%s,cache=%s" % (preset, lock, sched, cache)
        r, fsp = fs_boot(ctx, name, preset, "ktest=all poweroff lock=%s sched=%s cache=%s"
                         % (lock, sched, cache), T_KTEST,
                         disks=KTEST_DISKS, ata_disks=KTEST_ATA_DISKS)
        if r is None:
            return budget_gone(ctx, [name, name + "/fsck"])
        ktest_results(ctx, name, r, individual=True)
        ctx.results.add(name + "/fsck", r.ok and not fsp, fail_reason(r, fsp))
    return job


# pvspin=on (kern/lock/pvspin.c) on default, which make check otherwise
# boots without it: the lock tests and segmap_mp under H2-MCS, with waiters
# that halt and are kicked; pvspin_* must pass, not skip.  (hector's boots
# all run with pvspin=on: checklib.pvspin_needed.)
PVSPIN_BOOTS = (("default", "ktest=spin_*,pvspin_*,segmap_mp lock=h2mcs pvspin=on"),)
# Each kind of spinning waiter: queued (MCS, H2-MCS) and watching the lock
# (TTAS, spin mutex), and the ticks' rescue of a lost kick;
# kern/tests/test_pvspin.c.
PVSPIN_TESTS = {"pvspin_mcs_kick", "pvspin_h2mcs_kick", "pvspin_spin_kick", "pvspin_mutex_kick",
                "pvspin_rescue"}


def make_pvspin_job(preset, opts):
    def job(ctx):
        name = "pvspin/%s" % preset
        whole = "ktest=all" in opts     # fs_persist runs: its file must be there after
        r, fsp = fs_boot(ctx, name, preset, opts + " poweroff", T_KTEST, persist=whole,
                         disks=KTEST_DISKS, ata_disks=KTEST_ATA_DISKS)
        if r is None:
            return budget_gone(ctx, [name, name + "/fsck", name + "/kicked"])
        ktest_results(ctx, name, r, individual=False)
        ctx.results.add(name + "/fsck", r.ok and not fsp, fail_reason(r, fsp))
        kicked = set(re.findall(r"^ktest: PASS (pvspin_\w+)", r.output, re.M))
        missing = sorted(PVSPIN_TESTS - kicked)
        ctx.results.add(name + "/kicked", r.ok and not missing,
                        fail_reason(r, ["pvspin tests that did not pass: %s" % " ".join(missing)]
                                    if missing else []))
    return job


def job_witness(ctx):
    """The whole suite with the lock-order checker and contended-only
    statistics: every lock path runs instrumented."""
    name = "ktest/default/witness"
    r, fsp = fs_boot(ctx, name, "default", "ktest=all poweroff witness=on lockstat=contended",
                     T_KTEST, disks=KTEST_DISKS, ata_disks=KTEST_ATA_DISKS)
    if r is None:
        return budget_gone(ctx, [name])
    ktest_results(ctx, name, r, individual=False)
    ctx.results.add(name + "/fsck", r.ok and not fsp, fail_reason(r, fsp))
    # The tests provoke reversals among their own test_* classes on purpose;
    # a reversal among the kernel's classes is a finding.
    real = [m.group(0) for m in WITNESS_RE.finditer(r.output)
            if not (m.group(1).startswith("test_") and m.group(2).startswith("test_"))]
    ctx.results.add(name + "/order", r.ok and not real, fail_reason(r, real))


def job_kbench(ctx):
    """kbench=locks prints a parsable line per algorithm, and lockdump the
    per-class table.  The figures are benchmarks, not judged here."""
    name = "kbench/locks"
    r = ctx.boot(name, "default", "kbench=locks lockdump poweroff", T_KTEST)
    if r is None:
        return budget_gone(ctx, [name])
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
    ctx.results.add(name, r.ok and not p, fail_reason(r, p))
