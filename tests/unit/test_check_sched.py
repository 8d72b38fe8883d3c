#!/usr/bin/env python3
"""Host tests of make check's own scheduling, no emulator: the host-core
slots of tests/hostcores.py (across processes, as make check's host
scripts share them) and the job order, budget and time report of
tests/check.py.

  slots_*        requests for every slot never overlap; single-slot
                 requests overlap up to the slot count; a request for every
                 slot waiting at the gate is not overtaken by later small
                 ones; a killed holder's slots come free; a thread holding
                 slots takes no more (re-entrant), and a child started
                 while it holds them runs without the slots' directory;
                 a helper thread covered() by its job's slots takes none
  order_*        jobs start longest first by measured time, unmeasured ones
                 first; the times file reads back what it was written with
  budget_*       the budget is 2.5 times the measured wall within its bounds;
                 jobs not started when it is gone give one failure line
                 naming the job after which it ran out, not one per job
  warn_*         a boot that used more than half of its limit is warned of

    python3 tests/unit/test_check_sched.py

Prints "PASS name" or "FAIL name: why" per case and ends with
"N passed, N failed"; exit status 1 when anything failed.
"""

import contextlib
import fcntl
import io
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, TESTS)
import hostcores  # noqa: E402
import check  # noqa: E402
import checklib  # noqa: E402
import tempest  # noqa: E402

RESULTS = checklib.Results()


def case(name, fn):
    """Run one case: it returns None when it passed, else why it failed."""
    try:
        why = fn()
    except Exception as e:
        why = "%s: %s" % (type(e).__name__, e)
    RESULTS.add(name, why is None, why)


@contextlib.contextmanager
def slot_dir(ncores):
    """A slots directory of ncores slots, exported as make check does."""
    d = tempfile.mkdtemp(prefix="hostcores-")
    saved = os.environ.get(hostcores.ENV)
    real = hostcores.host_cores
    hostcores.host_cores = lambda: ncores
    try:
        hostcores.setup(d)
        yield d
    finally:
        hostcores.host_cores = real
        if saved is None:
            os.environ.pop(hostcores.ENV, None)
        else:
            os.environ[hostcores.ENV] = saved
        shutil.rmtree(d, ignore_errors=True)


# A child process that holds WANT slots for SECONDS and prints when.
HOLDER = r"""
import os, sys, time
sys.path.insert(0, %r)
import hostcores
want, secs = int(sys.argv[1]), float(sys.argv[2])
with hostcores.hold(want):
    t0 = time.time()
    print("start %%f" %% t0, flush=True)
    time.sleep(secs)
    print("end %%f" %% time.time(), flush=True)
""" % TESTS


def holder(want, secs):
    return subprocess.Popen([sys.executable, "-c", HOLDER, str(want), str(secs)],
                            stdout=subprocess.PIPE, text=True)


def spans(procs):
    """[(start, end)] of finished holder processes."""
    out = []
    for p in procs:
        text, _ = p.communicate(timeout=60)
        words = dict(line.split() for line in text.split("\n") if line)
        # A holder whose start line the caller read already has only its end.
        out.append((float(words["start"]) if "start" in words else None, float(words["end"])))
    return out


def overlaps(a, b):
    return a[0] < b[1] - 0.05 and b[0] < a[1] - 0.05


def slots_whole_host_never_overlaps():
    with slot_dir(2):
        procs = [holder(2, 0.6) for _ in range(3)]
        s = spans(procs)
    for i in range(len(s)):
        for j in range(i + 1, len(s)):
            if overlaps(s[i], s[j]):
                return "two whole-host holders ran at once: %s and %s" % (s[i], s[j])


def slots_single_ones_share():
    with slot_dir(2):
        procs = [holder(1, 3.0) for _ in range(2)]
        s = spans(procs)
    if not overlaps(s[0], s[1]):
        return "two one-slot holders on two slots did not run together: %s" % s


def gate_taken(directory):
    """Whether some process holds the gate (is taking slots) now."""
    fd = os.open(os.path.join(directory, "gate"), os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def wait_until(cond, seconds=30):
    deadline = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > deadline:
            raise TimeoutError("waited %d s" % seconds)
        time.sleep(0.02)


def slots_big_request_not_overtaken():
    """A holds one slot; B asks for both and waits at the gate; C, asking
    for one slot after B, must not start before B.  Each step waits for
    the one before (A's start line, B at the gate), so a slow host cannot
    reorder them."""
    with slot_dir(2) as d:
        a = holder(1, 2.0)
        first = a.stdout.readline()
        b = holder(2, 0.5)
        wait_until(lambda: gate_taken(d))
        c = holder(1, 0.2)
        sa, sb, sc = spans([a, b, c])
        sa = (float(first.split()[1]), sa[1])
    if sb[0] < sa[1] - 0.05:
        return "the whole-host request started while a slot was held"
    if sc[0] < sb[0]:
        return "a later one-slot request overtook the waiting whole-host one"


def slots_killed_holder_frees():
    with slot_dir(2):
        p = holder(2, 60)
        p.stdout.readline()            # it holds both slots now
        p.kill()
        p.wait()
        t0 = time.monotonic()
        with hostcores.hold(2) as waited:
            pass
    if time.monotonic() - t0 > 5:
        return "the slots of a killed holder took %.1f s to come free" % waited


def slots_reentrant_and_child_env():
    with slot_dir(2):
        done = []

        def inner():
            with hostcores.hold(2):
                with hostcores.hold(2):     # must not wait for itself
                    env = checklib.child_env()
                    done.append(env.get(hostcores.ENV) == "")
        t = threading.Thread(target=inner)
        t.start()
        t.join(10)
        if t.is_alive():
            return "a nested request waited for the slots its thread holds"
        if done != [True]:
            return "a child started while holding slots would wait for them too"
        if not checklib.child_env().get(hostcores.ENV):
            return "a child started while holding nothing lost the slots' directory"


def slots_covered_helper():
    """A helper thread covered() by its job's slots takes none and does
    not wait; one not covered waits for them (until its job lets go)."""
    with slot_dir(2):
        got = {}

        def helper(name, cover):
            with (hostcores.covered() if cover else contextlib.nullcontext()):
                t0 = time.monotonic()
                with hostcores.hold(1):
                    got[name] = time.monotonic() - t0
        with hostcores.hold(2):
            covered = threading.Thread(target=helper, args=("covered", True))
            bare = threading.Thread(target=helper, args=("bare", False))
            covered.start()
            bare.start()
            covered.join(10)
            time.sleep(0.5)
            bare_waiting = bare.is_alive()
        bare.join(10)
        if covered.is_alive() or got.get("covered", 99) > 1:
            return "a covered helper waited for its job's slots: %r" % got
        if not bare_waiting:
            return "an uncovered helper took a slot its job held"
        if hostcores.holding():
            return "covered() left this thread marked as holding"


def slots_off_without_directory():
    saved = os.environ.pop(hostcores.ENV, None)
    try:
        for value in (None, ""):        # unset (make run), or set empty (a child)
            if value is not None:
                os.environ[hostcores.ENV] = value
            with hostcores.hold(64) as waited:
                if waited:
                    return "waited %.2f s with TEMPEST_CORES_DIR=%r" % (waited, value)
            if value == "" and hostcores.setup() != 0:
                return "setup() made slots though TEMPEST_CORES_DIR is set empty"
    finally:
        os.environ.pop(hostcores.ENV, None)
        if saved is not None:
            os.environ[hostcores.ENV] = saved


def slots_weight():
    real = hostcores.host_cores
    hostcores.host_cores = lambda: 2
    try:
        got = (hostcores.weight(16), hostcores.weight(1), hostcores.weight(4, True))
    finally:
        hostcores.host_cores = real
    if got != (2, 1, 1):
        return "weights (16 cpus, 1 cpu, single-threaded) = %s, want (2, 1, 1)" % (got,)


def slots_pvspin_for_large_machines():
    real = hostcores.host_cores
    hostcores.host_cores = lambda: 2
    try:
        got = [checklib.pvspin_needed(*a) for a in (
            ("hector", "ktest=all"), ("default", "ktest=all"), ("hector", "pvspin=off"),
            ("hector", "", "icount"), ("numachine", ""))]
    finally:
        hostcores.host_cores = real
    if got != [True, False, False, False, True]:
        return "pvspin=on for hector, default, hector pvspin=off, hector icount, numachine: " \
               "%s, want True, False, False, False, True" % got


def slots_pvspin_default_beyond_host():
    """The harness's and make run's rule: on when the CPUs a boot uses
    outnumber the host's cores, off on up, with maxcpus= within the cores,
    under icount and Bochs, and when the options say pvspin= already."""
    real = hostcores.host_cores
    hostcores.host_cores = lambda: 2
    try:
        got = [tempest.pvspin_opts(*a) for a in (
            ("default", "poweroff"), ("up", "poweroff"), ("hector", "maxcpus=2"),
            ("hector", "maxcpus=3"), ("hector", "", "icount"), ("hector", "", "tcg", "bochs"),
            ("hector", "pvspin=off"))]
    finally:
        hostcores.host_cores = real
    want = ["poweroff pvspin=on", "poweroff", "maxcpus=2", "maxcpus=3 pvspin=on", "", "",
            "pvspin=off"]
    if got != want:
        return "pvspin_opts on two cores: %s, want %s" % (got, want)


def order_longest_first():
    jobs = [("short", None), ("new", None), ("long", None), ("mid", None)]
    times = {"short": 5, "long": 500, "mid": 50}
    got = [n for n, _ in check.ordered(jobs, times)]
    if got != ["new", "long", "mid", "short"]:
        return "order %s, want new (unmeasured), long, mid, short" % got


def order_times_file_round_trip():
    d = tempfile.mkdtemp()
    try:
        path = os.path.join(d, "times.txt")
        check.write_times(path, {"a/b": 12.34, "c": 300.0}, 987.6)
        times, wall = check.load_times(path)
    finally:
        shutil.rmtree(d)
    if times != {"a/b": 12.3, "c": 300.0} or wall != 987:
        return "read back %s, wall %s" % (times, wall)


def budget_derived():
    got = (check.derived_budget(600), check.derived_budget(100), check.derived_budget(5000),
           check.derived_budget(None))
    want = (1500, check.BUDGET_MIN, check.BUDGET_MAX, checklib.BUDGET)
    if got != want:
        return "budgets %s, want %s" % (got, want)


def fake_ctx(budget):
    args = types.SimpleNamespace(budget=budget, timeout_scale=1.0, verbose=False)
    return checklib.Ctx(args, checklib.Results())


def budget_exhausted_is_one_failure():
    ctx = fake_ctx(2.0)
    ran = []

    def job(name, secs):
        def fn(c):
            time.sleep(secs)
            ran.append(name)
            c.results.add(name, True)
        return (name, fn)
    jobs = [job("first", 2.5)] + [job("later%d" % i, 0) for i in range(5)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        times, last = check.run_jobs(ctx, jobs, 1)
    if ran != ["first"]:
        return "jobs run after the budget was gone: %s" % ran[1:]
    if last != "first" or len(ctx.not_run) != 5:
        return "last job %r, not run %s" % (last, ctx.not_run)
    if ctx.results.failed:
        return "jobs not run were counted as %d failures" % ctx.results.failed
    if "first" not in times:
        return "no time for the job that ran"


def warn_half_limit():
    ctx = fake_ctx(100)
    ctx.boots = [("slow", 60.0, 100.0, "ok"), ("fast", 10.0, 100.0, "ok")]
    d = tempfile.mkdtemp()
    saved = checklib.LOGDIR
    checklib.LOGDIR = d
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            check.report_times(ctx, {"slow": 60.0, "fast": 10.0}, 70.0)
    finally:
        checklib.LOGDIR = saved
        shutil.rmtree(d)
    text = out.getvalue()
    if "WARN slow: took 60 s of its 100 s limit" not in text:
        return "no warning for a boot past half its limit: %r" % text
    if "WARN fast" in text:
        return "a warning for a boot well inside its limit"


def main():
    for name, fn in sorted((n, f) for n, f in globals().items()
                           if n.startswith(("slots_", "order_", "budget_", "warn_"))
                           and callable(f)):
        case(name, fn)
    print("%d passed, %d failed" % (RESULTS.passed, RESULTS.failed))
    return 1 if RESULTS.failed else 0


if __name__ == "__main__":
    sys.exit(main())
