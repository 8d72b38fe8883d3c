#!/usr/bin/env python3
"""make check: every Tempest test, ending with "N passed, N failed".

How the jobs are run: two at a time (-j), longest first by the times
measured on a two-core host (tests/check_times.txt, written by
--record-times), and every boot first takes its host cores
(tests/hostcores.py): as many as its virtual CPUs can keep busy, so a
boot of more virtual CPUs than the host has cores runs alone, and a host
job takes one.  The run's budget is 2.5 times the measured wall time; a job
not started when it is gone is not run, and all of them together are one
failure, "budget: exhausted after JOB".  At the end the ten slowest jobs
are listed, and every boot that used more than half of its time limit is
warned of ("WARN JOB: took N s of its M s limit").

The jobs:

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
  cluster/hector     ktest=all with cluster=4 witness=on on hector; the
                     cluster_* tests pass (tests/cluster_check.py)
  cluster/numachine  the cluster and DNLC ktests with cluster=node lock=mcs
  cluster/size/PRESET/N   the cluster ktests with cluster=1, 4 and 16 on
                     hector and numachine
  user/cluster/hector     the user tests' small set with cluster=4
                     witness=on on hector (the whole set in check-long)
  kbench/locks       kbench=locks lockdump: one lockbench line per algorithm,
                     the lockstat table and the blkstat disk table (a smoke
                     test; the numbers are not judged)
  disks/svr4mp       the SVR4 MP preset's 8 disks on 4 controllers: layout,
                     and the virtio block tests on all of them
  disks/image        a host-made image attached with disk_images= is vda;
                     the kernel reads the host's data, and its writes are
                     in the file after power-off
  s5tools/...        host tests of mkfs.s5 and fsck.s5 (tests/unit/test_s5tools.py)
  gaede/...          GAEDE's home disks, users and scaling made and read back
                     on the host (tests/unit/test_gaede_prepare.py)
  source/...         locking rules checked on the source text
                     (tests/unit/test_source_rules.py)
  checksched/...     make check's own scheduling: host-core slots, job
                     order, budget (tests/unit/test_check_sched.py)
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
  user/witness/default
                     the user tests under witness=on: no lock-order reversal
  bench/...          the benchmark harness: bad sweeps refused, the smoke
                     sweep's records, CSV, plots and report (checked in
                     headless chromium), resume through a Dask LocalCluster,
                     a panicking run recorded as failed
                     (tests/test_bench_harness.py)
  bench/macro/...    the macro kind (Debian's programs on the Debian root):
                     a reduced pmake point on Tempest and on the Linux
                     peer, its records checked (tests/test_macro_harness.py)
  user/tty/default   an interactive shell typed at through the serial
                     console: ^C, ^\\, ^Z and fg, SIGTTIN reach the right
                     processes and the shell survives (tests/tty_check.py)
  run/default        make run itself (tests/run_check.py): one-line
                     failures, the command's output alone and exact on
                     stdout, ROOT= keeping an image between two boots;
                     poweroff, reboot and halt in the command shut down
  net/user           a virtio-net eth0 on QEMU's restricted user network:
                     TCP both ways through the forwards, ARP of the gateway
                     seen in /proc/net/arp, 10.0.2.2 refused
                     (tests/net_check.py)
  net/frames         this process as the other hosts of the peer segment:
                     random, cut, badly summed, overlapping and flooding
                     frames and out-of-window segments are counted and
                     dropped, Tempest keeps answering, data out of order
                     is held and SACKed, SACKed holes are resent, a flood
                     while a hog holds the memory is dropped and counted
                     (and the hog, not init, dies if memory runs out), and
                     afterwards it holds no packet, socket or fragment
                     (tests/frames_check.py)
  newcomer           README's tour typed word for word into an interactive
                     make run on a pseudo-terminal, ending in poweroff:
                     exit status 0, no process left; a closed terminal,
                     SIGTERM to make and a killed userrun.py leave none
                     either (tests/newcomer_check.py)
  newcomer/docs      host only: README at most 300 lines, docs/ links and
                     index, make help against the Makefile and README
  bootbench          tools/boottime.py's phases for both kernels, one boot
                     each; the ISO's kernel has no debug information
  userland/deps      host only: the user programs follow the headers they
                     include (kern/abi/tempest_abi.h made newer in a copy:
                     lockstat and t_lockstat out of date, t_stat not)
  debian/s5          Debian's gcc, as, ld and make (tools/debian_s5_bundle.py)
                     on an S5 root build and run a hello world and a
                     three-file project with make -j4 (tests/debian_check.py)
  debian/ufs         the Debian root (make run USERLAND=debian): Debian's gcc
                     builds hello (dynamic, -static) and a project with make
                     -j4; bad interpreters and a missing library; user tests
                     built against glibc pass on the host and inside Tempest
                     (all of them with --long, make check-long: debian/ufs/long)
  debian/gaede       make run USERLAND=debian GAEDE=1: /bench, GAEDE's home
                     disk and pmake's sources there; two users run GAEDE
  debian/pysuite     Python's own regression suite (a few tests, issue 35's
                     network ones among them; issue 31's and 35's lists
                     with --long): what passes with Debian's python3 on
                     the Linux peer (and the host's Linux) passes inside
                     Tempest (tests/pysuite_check.py)
  debian/postgres    Debian's PostgreSQL 15: initdb, a server on a Unix
                     socket, psql queries with known answers, pgbench -i
                     and a pgbench run, inside Tempest and on the Linux
                     peer (tests/postgres_check.py; -s 4, -T 30 with --long)
  kcsan/default      make KCSAN=1, the data-race detector: the planted race
                     of ktest kcsan_planted reported with both sites, the
                     locked pair never, t_kcsan's race through /proc/kcsan
                     reported in kcsan_hook_racy, /proc/kcsan's counts, and
                     a few user tests passing under it (tests/kcsan_check.py)
                     (with --long, make check-long: kcsan/ktest/P/long and
                     kcsan/user/P/long on default, svr4mp and hector with
                     cluster=4, ktest=all and the user tests under KCSAN=1,
                     each failing on any race but the planted ones)
  kcsan/off          the KCSAN=1 kernel with kcsan=off on up: every reporting
                     hook's call made a no-op at boot, user tests passing
  debian/netprogs    Debian's redis, memcached, nginx with curl, and iperf3
                     over loopback, inside Tempest and on the Linux peer
                     (tests/netprogs_check.py)
  debian/netpeer     Tempest and the Linux peer on one virtual segment
                     (NET=peer): busybox ping both ways, the peer's curl of
                     nginx-light inside Tempest (a page, 300 KB by sha256,
                     a 404), iperf3 TCP and UDP both directions
                     (tests/netpeer_check.py); one job, two QEMUs, the
                     host-core slots of both

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

The jobs live beside this file by area: checklib.py (results, the boot
context and budget, FAIL reasons, the condensed thread dump), boot_check.py
(topology, disks, options, panics, icount, Bochs), ktest_check.py (the
in-kernel suite, witness, kbench/locks), fs_check.py (root images, fs/...,
kbench/fs), user_check.py and tty_check.py (user space inside Tempest) and
host_check.py (unit, s5tools, source, user/host, the Linux peer),
run_check.py (make run itself: its failures, output and ROOT=),
kcsan_check.py (the data-race detector's build); this file
orders them (all_jobs) and runs them.

Each boot's console, emulator log and command line are kept under
build/check/NAME/ for diagnosis.  Options: -k PATTERN runs only the jobs
whose name contains PATTERN; -j N sets the parallelism; --list lists the
jobs; -v shows the console tail of failed boots.
"""

import argparse
import concurrent.futures  # the pool that runs the jobs
import os
import re
import shutil
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tempest  # noqa: E402
import hostcores  # noqa: E402
import checklib  # noqa: E402
import boot_check  # noqa: E402
import ktest_check  # noqa: E402
import cluster_check  # noqa: E402
import fs_check  # noqa: E402
import host_check  # noqa: E402
import user_check  # noqa: E402
import tty_check  # noqa: E402
import run_check  # noqa: E402
import newcomer_check  # noqa: E402
import debian_check  # noqa: E402
import pysuite_check  # noqa: E402
import netprogs_check  # noqa: E402
import netpeer_check  # noqa: E402
import postgres_check  # noqa: E402
import rel_check  # noqa: E402
import pagesync_check  # noqa: E402
import papers_check  # noqa: E402
import macro_check  # noqa: E402
import net_check  # noqa: E402
import frames_check  # noqa: E402
import kcsan_check  # noqa: E402


# The user tests under clustering (issue 20): hector, 4 clusters of 4.
CLUSTER_USER_OPTS = "cluster=4 witness=on lockstat=contended"


def all_jobs():
    """(name, function) in start order: the long boots first."""
    presets = tempest.load_machines()
    big = [p for p in presets if presets[p].cpus >= 8]
    small = [p for p in presets if presets[p].cpus < 8]

    def ktests(which):
        return [("ktest/%s/lock=%s,sched=%s,cache=%s" % (p, l, s, c), ktest_check.make_ktest_job(p, l, s, c))
                for p in ktest_check.KTEST_PRESETS if p in which for l, s, c in ktest_check.KTEST_VARIANTS]

    covered = {(c, l) for l, _, c in ktest_check.KTEST_VARIANTS}
    fs_matrix = [("fs/matrix/cache=%s,lock=%s" % (c, l), fs_check.make_fs_matrix_job(c, l))
                 for c in fs_check.CACHE_MODELS for l in fs_check.LOCK_ALGOS if (c, l) not in covered]

    jobs = [("unit", host_check.job_unit), ("s5tools", host_check.job_s5tools),
            ("newcomer/docs", newcomer_check.job_docs),
            ("userland/deps", host_check.job_userland_deps),
            ("source", host_check.job_source_rules), ("checksched", host_check.job_check_sched),
            ("linux", host_check.job_linux_peer),
            ("user/host", host_check.job_user_host), ("bench", host_check.job_bench)]
    jobs += [("gaede", host_check.job_gaede_prepare)]
    jobs += [("bench/papers", host_check.job_bench_papers)]
    jobs += [("bench/macro", macro_check.job_macro)]
    jobs += ktests(big)
    jobs += [("bochs/default", boot_check.job_bochs), ("icount/default", boot_check.job_icount)]
    jobs += [("disks/svr4mp", boot_check.job_disks_svr4mp), ("disks/image", boot_check.job_disks_image)]
    jobs += [("topology/" + p, boot_check.make_topology_job(p)) for p in big]
    jobs += [("cluster/hector", cluster_check.job_cluster_hector),
             ("cluster/numachine", cluster_check.job_cluster_numachine)]
    jobs += cluster_check.size_jobs()
    jobs += ktests(small)
    jobs += [("fs/corrupt", fs_check.job_fs_corrupt)] + fs_matrix
    jobs += [("pvspin/" + p, ktest_check.make_pvspin_job(p, o)) for p, o in ktest_check.PVSPIN_BOOTS]
    jobs += [("ktest/default/witness", ktest_check.job_witness), ("kbench/locks", ktest_check.job_kbench),
             ("kbench/fs", fs_check.job_kbench_fs), ("fs/rootfail", fs_check.job_fs_rootfail)]
    jobs += [("fs/peer", host_check.job_fs_peer), ("ufstools", host_check.job_ufstools)]
    jobs += [("fs/ufs", host_check.job_ufs_kernel)]
    jobs += [("fs/syncdata/" + f, pagesync_check.make_syncdata_job(f)) for f in ("s5", "ufs")]
    jobs += [("fs/ufs/cache=%s,lock=%s" % (c, l), fs_check.make_ufs_matrix_job(c, l))
             for c, l in fs_check.UFS_MATRIX]
    jobs += [("user/ufs/default", user_check.make_user_job("default", small=True,
                                                           name="user/ufs/default", fs="ufs"))]
    jobs += [("user/default", user_check.make_user_job("default")),
             ("user/svr4mp", user_check.make_user_job("svr4mp")),
             ("user/hector", user_check.make_user_job("hector", small=True)),
             ("user/cluster/hector", user_check.make_user_job(
                 "hector", small=True, opts=CLUSTER_USER_OPTS, name="user/cluster/hector")),
             ("user/witness/default",
              user_check.make_user_job("default", opts="witness=on lockstat=contended",
                                       name="user/witness/default")),
             ("user/tty/default", tty_check.make_tty_job("default")),
             ("run/default", run_check.job_userrun),
             ("net/user", net_check.job_net),
             ("net/frames", frames_check.job),
             ("newcomer", newcomer_check.job_newcomer),
             ("debian/s5", debian_check.job_debian_s5),
             ("debian/ufs", debian_check.make_debian_ufs_job(small=True)),
             ("debian/gaede", debian_check.job_debian_gaede),
             ("debian/pysuite", pysuite_check.make_job(long=False)),
             ("debian/postgres", postgres_check.make_job(long=False)),
             ("debian/netprogs", netprogs_check.job),
             ("debian/netpeer", netpeer_check.job)]
    jobs += [("options", boot_check.job_options), ("nosrat/4cpu", boot_check.job_nosrat),
             ("panic/pagefault", boot_check.job_panic),
             ("panic/deadlock", boot_check.job_deadlock),
             ("bootbench", boot_check.job_bootbench)]
    jobs += [("topology/" + p, boot_check.make_topology_job(p)) for p in small]
    jobs += rel_check.jobs()
    jobs += [("upbuild/ktest", papers_check.job_upbuild), ("alloc/default", papers_check.job_alloc)]
    jobs += [("kcsan/default", kcsan_check.job_kcsan), ("kcsan/off", kcsan_check.job_kcsan_off)]
    return jobs


def long_jobs():
    """The long variants, run with --long (make check-long)."""
    return [("debian/ufs/long", debian_check.make_debian_ufs_job(small=False)),
            ("debian/pysuite/long", pysuite_check.make_job(long=True)),
            ("debian/postgres/long", postgres_check.make_job(long=True)),
            ("user/cluster/hector/long", user_check.make_user_job(
                "hector", opts=CLUSTER_USER_OPTS, name="user/cluster/hector/long"))] + \
        kcsan_check.long_jobs()


# The measured time of every job on the project's machine kind (2 cores),
# written by check.py --record-times from a quiet run: the scheduler starts
# the longest jobs first, and the run's budget is BUDGET_FACTOR times the
# measured wall.
TIMES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_times.txt")
# Bounds of the derived budget: room for a slow host, but the check must
# still end inside CI's 90 minutes with its longest job's limit after it.
BUDGET_MIN, BUDGET_MAX = 15 * 60, 45 * 60
# Loaded runs (an idle 16-vCPU make run and a spinning process beside the
# check) took 1.65 to 1.9 times the quiet wall: room for that and more.
BUDGET_FACTOR = 2.5
UNMEASURED = 600        # seconds assumed for a job the file does not list
# Jobs that run on the host alone (no boot of their own, no build): they
# may run while the kernel's ISOs are being made.
HOST_ONLY = ("unit", "s5tools", "source", "checksched", "newcomer/docs", "userland/deps")


def load_times(path=TIMES_FILE):
    """({job: seconds}, measured wall seconds or None) from the times file:
    "job seconds" lines, "# wall SECONDS" for the whole run."""
    times, wall = {}, None
    try:
        with open(path) as f:
            for line in f:
                m = re.match(r"^#\s*wall\s+(\d+(?:\.\d+)?)", line)
                if m:
                    wall = float(m.group(1))
                    continue
                parts = line.split()
                if len(parts) == 2 and not line.startswith("#"):
                    times[parts[0]] = float(parts[1])
    except OSError:
        pass
    return times, wall


def derived_budget(wall):
    """BUDGET_FACTOR times the measured wall time, within BUDGET_MIN and
    BUDGET_MAX."""
    if not wall:
        return checklib.BUDGET
    return int(min(BUDGET_MAX, max(BUDGET_MIN, BUDGET_FACTOR * wall)))


def ordered(jobs, times):
    """The jobs longest first by measured time (unmeasured ones as long)."""
    return sorted(jobs, key=lambda j: -times.get(j[0], UNMEASURED))


def write_times(path, job_times, wall):
    with open(path, "w") as f:
        f.write("# make check's jobs and their measured seconds on a two-core host,\n"
                "# written by tests/check.py --record-times (quiet host, nothing else\n"
                "# running).  The scheduler starts the longest first; the budget is\n"
                "# %.1f times the wall time below, between %d and %d minutes.\n"
                % (BUDGET_FACTOR, BUDGET_MIN // 60, BUDGET_MAX // 60))
        f.write("# wall %d\n" % wall)
        for job, secs in sorted(job_times.items(), key=lambda t: -t[1]):
            f.write("%s %.1f\n" % (job, secs))


def report_times(ctx, job_times, elapsed):
    """build/check/times.txt, the ten slowest jobs, and a warning for every
    boot that used more than half of its time limit."""
    with open(os.path.join(checklib.LOGDIR, "times.txt"), "w") as f:
        for job, secs in sorted(job_times.items(), key=lambda t: -t[1]):
            f.write("%-48s %7.1f s\n" % (job, secs))
    print("check: the slowest jobs:")
    for job, secs in sorted(job_times.items(), key=lambda t: -t[1])[:10]:
        print("  %7.1f s  %s" % (secs, job))
    if ctx.slow_ktests:
        print("check: the slowest ktests:")
        for secs, job, test in sorted(ctx.slow_ktests, reverse=True)[:5]:
            print("  %7.1f s  %s in %s" % (secs, test, job))
    for job, secs, limit, status in sorted(ctx.boots):
        if limit and secs > limit / 2 and not status.startswith("timeout"):
            print("WARN %s: took %d s of its %d s limit" % (job, secs, limit), flush=True)


def run_jobs(ctx, jobs, workers):
    """Run the jobs on workers threads in the order given; a job not yet
    started when the budget is gone is not run.  Returns {job: seconds
    it ran, less its waits for host cores} and the last job started."""
    job_times = {}
    state = {"last": None}
    lock = threading.Lock()

    def run(job):
        name, fn = job
        if ctx.budget_left() <= 0:
            checklib.budget_gone(ctx, [name])
            return
        with lock:
            state["last"] = name
        hostcores.reset_waited()
        start = time.monotonic()
        try:
            fn(ctx)
        except Exception as e:  # a harness bug must not hide the other results
            ctx.results.add(name, False, "harness error: %s: %s" % (type(e).__name__, e))
        with lock:
            job_times[name] = time.monotonic() - start - hostcores.waited()

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, workers))
    futures = [pool.submit(run, j) for j in jobs]
    try:
        for f in futures:
            f.result()
    except KeyboardInterrupt:
        # The running jobs' emulators are stopped before the pool waits
        # for those jobs, so they end in seconds, not when they would have.
        tempest.kill_all()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return job_times, state["last"]


def make_isos(results):
    """Every common ISO up front, one at a time, so the boots only boot."""
    try:
        for opts in ("poweroff", "ktest=all poweroff", "bogus=1 lock=frobnicate poweroff",
                     "crash=pagefault poweroff"):
            tempest.make_iso(opts)
        return True
    except Exception as e:
        results.add("iso", False, "cannot make a boot ISO: %s" % e)
        return False


def main(argv=None):
    times, wall = load_times()
    ap = argparse.ArgumentParser(description="Run every Tempest test.")
    ap.add_argument("-j", "--jobs", type=int, default=2,
                    help="jobs at once (default 2); each boot also waits for "
                    "its host cores (tests/hostcores.py)")
    ap.add_argument("-k", dest="patterns", action="append", default=[],
                    help="run only jobs whose name contains this (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the jobs and exit")
    ap.add_argument("--long", action="store_true",
                    help="add the long variants (make check-long)")
    ap.add_argument("--timeout-scale", type=float, default=1.0,
                    help="multiply every time limit by this")
    ap.add_argument("--budget", type=float, default=derived_budget(wall),
                    help="seconds for the whole run (default %d: twice the measured "
                    "wall time in tests/check_times.txt)" % derived_budget(wall))
    ap.add_argument("--record-times", action="store_true",
                    help="write this run's job times to tests/check_times.txt "
                    "(on a quiet host, after a whole run)")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print the console tail of failed boots")
    args = ap.parse_args(argv)

    jobs = all_jobs()
    if args.long:
        jobs += long_jobs()
    if args.patterns:
        jobs = [j for j in jobs if any(p in j[0] for p in args.patterns)]
    jobs = ordered(jobs, times)
    if args.list:
        for name, _ in jobs:
            print("%-56s %s" % (name, "%.0f s" % times[name] if name in times else "unmeasured"))
        return 0

    results = checklib.Results()
    start = time.monotonic()
    boots = [j for j in jobs if j[0] not in HOST_ONLY]
    if boots and not os.path.exists(tempest.KERNEL):
        results.add("build", False, "%s is missing; run make first"
                    % os.path.relpath(tempest.KERNEL, tempest.ROOT))
        jobs = [j for j in jobs if j[0] in HOST_ONLY]
    shutil.rmtree(checklib.LOGDIR, ignore_errors=True)
    os.makedirs(checklib.LOGDIR, exist_ok=True)
    cores = hostcores.setup() or hostcores.host_cores()
    print("check: %d jobs, %d host cores, budget %d s" % (len(jobs), cores, args.budget),
          flush=True)
    ctx = checklib.Ctx(args, results)
    if boots and os.path.exists(tempest.KERNEL) and not make_isos(results):
        jobs = [j for j in jobs if j[0] in HOST_ONLY]

    # SIGTERM (make passes it on), SIGHUP (the terminal closed) and Ctrl-C
    # stop every emulator at once; with its parent gone, check stops too.
    tempest.die_with_parent()
    tempest.stop_on_signals((signal.SIGTERM, signal.SIGHUP, signal.SIGINT))

    try:
        job_times, last = run_jobs(ctx, jobs, args.jobs)
    except KeyboardInterrupt:
        tempest.kill_all()
        try:
            print("check: interrupted", flush=True)
            print("%d passed, %d failed" % (results.passed, results.failed + 1), flush=True)
        except OSError:         # the terminal is gone
            pass
        return 130

    elapsed = time.monotonic() - start
    report_times(ctx, job_times, elapsed)
    for job, dump in results.dumps:
        print("hung threads of %s:\n%s" % (job, dump))
    if ctx.not_run:
        results.add("budget", False, "exhausted after %s (%d s); not run: %d results: %s"
                    % (last, args.budget, len(ctx.not_run), ", ".join(ctx.not_run[:12])
                       + (" ..." if len(ctx.not_run) > 12 else "")))
    if args.record_times and not args.patterns and not results.failed:
        write_times(TIMES_FILE, job_times, elapsed)
        print("check: job times written to %s" % os.path.relpath(TIMES_FILE, tempest.ROOT))
    print("check: %d jobs in %d s; logs in %s/" % (len(jobs), elapsed,
                                                   os.path.relpath(checklib.LOGDIR, tempest.ROOT)))
    print("%d passed, %d failed" % (results.passed, results.failed))
    return 1 if results.failed else 0


if __name__ == "__main__":
    sys.exit(main())
