"""The jobs of make check that run on the host alone, for tests/check.py:
the unit tests (make -C tests/unit check), mkfs.s5 and fsck.s5, the
source rules and layer checks, the user-space tests on the host's Linux,
and the Linux peer.  Each prints PASS/FAIL lines that count one by one.
"""

import os
import re
import subprocess
import time

import hostcores
from checklib import LOGDIR, ROOT, T_UNIT, run_host_script

def job_unit(ctx):
    res = ctx.results
    if not os.path.exists(os.path.join(ROOT, "tests", "unit", "Makefile")):
        return
    env = dict(os.environ)
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
        env.pop(k, None)
    try:
        with hostcores.hold(1):
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


def job_s5tools(ctx):
    """mkfs.s5/fsck.s5 host tests: their per-case lines count individually."""
    run_host_script(ctx, "s5tools", os.path.join(ROOT, "tests", "unit", "test_s5tools.py"),
                    T_UNIT)


def job_ufstools(ctx):
    """fsck.ufs judged by NetBSD's makefs: its images are clean, broken
    copies are not (tests/unit/test_ufstools.py)."""
    run_host_script(ctx, "ufstools", os.path.join(ROOT, "tests", "unit", "test_ufstools.py"),
                    T_UNIT)


def job_gaede_prepare(ctx):
    """GAEDE's home disks, users and scaling (tools/harness/macro_gaede.py),
    made and read back on the host (tests/unit/test_gaede_prepare.py)."""
    run_host_script(ctx, "gaede", os.path.join(ROOT, "tests", "unit", "test_gaede_prepare.py"),
                    T_UNIT)


def job_check_sched(ctx):
    """make check's own scheduling: host-core slots, job order, budget and
    time report (tests/unit/test_check_sched.py)."""
    run_host_script(ctx, "checksched", os.path.join(ROOT, "tests", "unit", "test_check_sched.py"),
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


def job_fs_peer(ctx):
    """S5 and UFS judged by Linux: Tempest and Debian's kernel (sysv.ko) take
    turns on one image, each reading back what the other wrote, with
    fsck.s5 after every boot; ufs.ko reads mkfs.ufs's images
    (tests/test_fs_peer.py)."""
    run_host_script(ctx, "fs/peer", os.path.join(ROOT, "tests", "test_fs_peer.py"), T_UNIT, boots=True)


def job_ufs_kernel(ctx):
    """The kernel's UFS reads makefs's and mkfs.ufs's images of one host
    tree exactly, refuses damaged ones with a reason, and leaves them
    clean by fsck.ufs (tests/test_ufs_kernel.py)."""
    run_host_script(ctx, "fs/ufs", os.path.join(ROOT, "tests", "test_ufs_kernel.py"), T_UNIT, boots=True)


def job_linux_peer(ctx):
    """The Linux peer (tools/linux_peer.py): Debian's kernel boots on the
    default preset, runs a command with its status, and runs every
    benchmark once (tests/test_linux_peer.py)."""
    run_host_script(ctx, "linux", os.path.join(ROOT, "tests", "test_linux_peer.py"), T_UNIT, boots=True)


def job_bench(ctx):
    """The benchmark harness (tools/sweep.py): bad sweeps refused, the
    smoke sweep's records, tables, plots and report (opened in headless
    chromium), resume on a Dask LocalCluster, a panicking run recorded as
    failed (tests/test_bench_harness.py)."""
    run_host_script(ctx, "bench", os.path.join(ROOT, "tests", "test_bench_harness.py"), T_UNIT, boots=True)


def job_bench_papers(ctx):
    """The papers report (tools/harness/papers.py): each paper's headline
    computed from synthetic records, "not run" without them, the page
    written, bench/sweeps/papers accepted (tests/test_papers_report.py)."""
    run_host_script(ctx, "bench/papers", os.path.join(ROOT, "tests", "test_papers_report.py"),
                    T_UNIT)


def job_userland_deps(ctx):
    """The user programs follow the headers they include: in a private copy
    of userland/ and kern/abi/ (the tree itself is left alone), lockstat
    and t_lockstat are built, then kern/abi/tempest_abi.h is made newer:
    `make -q` must find both out of date, and t_stat, which does not
    include it, up to date.  (The Makefile once knew only each program's
    own directory's headers, so a changed ABI header left stale tests.)"""
    import shutil
    import tempfile
    tmp = tempfile.mkdtemp(prefix="tempest-deps-")
    why = ""
    try:
        shutil.copytree(os.path.join(ROOT, "userland"), os.path.join(tmp, "userland"),
                        ignore=shutil.ignore_patterns("*.o"))
        shutil.copytree(os.path.join(ROOT, "kern", "abi"), os.path.join(tmp, "kern", "abi"))
        build = os.path.join(tmp, "build")
        env = dict(os.environ)
        for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
            env.pop(k, None)
        targets = {name: os.path.join(build, path) for name, path in
                   (("lockstat", "lockstat"), ("t_lockstat", "tests/t_lockstat"),
                    ("t_stat", "tests/t_stat"))}

        def make(*args):
            return subprocess.run(["make", "-s", "-C", os.path.join(tmp, "userland"),
                                   "BUILD=" + build] + list(args),
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, env=env, timeout=300)
        with hostcores.hold(1):
            p = make(*targets.values())
        if p.returncode != 0:
            why = "the build failed: %s" % p.stdout.decode(errors="replace").strip()[-200:]
        else:
            later = time.time() + 60
            os.utime(os.path.join(tmp, "kern", "abi", "tempest_abi.h"), (later, later))
            stale = {name: make("-q", path).returncode for name, path in targets.items()}
            want = {"lockstat": 1, "t_lockstat": 1, "t_stat": 0}
            wrong = ["%s %s" % (n, "up to date" if stale[n] == 0 else "out of date")
                     for n in want if stale[n] != want[n]]
            if wrong:
                why = "after tempest_abi.h changed: " + ", ".join(wrong)
    except (OSError, subprocess.SubprocessError) as e:
        why = "%s: %s" % (type(e).__name__, e)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ctx.results.add("userland/deps", not why, why)
