"""What every job of make check shares (tests/check.py and the per-area
job modules): the results and their "N passed, N failed" totals, the
boot context that keeps each boot's log and the run's time budget, the
condensed thread dump of a hung boot, one-line FAIL reasons, the ktest
summary, and host scripts that print PASS/FAIL lines.

A job is a function(ctx) that reports one or more results with
ctx.results.add(name, ok, reason); the job modules are boot_check.py
(the machine the kernel sees, bad input, panics, other emulators),
ktest_check.py (the in-kernel suite under every lock, run-queue and
cache model), fs_check.py (root images, file-system matrix, corrupted
images), user_check.py and tty_check.py (user space inside Tempest) and
host_check.py (tests that run on the host alone).
"""

import os
import re
import subprocess
import sys
import threading
import time

import hostcores
import tempest

ROOT = tempest.ROOT
LOGDIR = os.path.join(tempest.BUILD, "check")

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
KTEST_SUM_RE = re.compile(r"^ktest: (\d+) passed, (\d+) failed\s*$", re.M)
KTEST_ONE_RE = re.compile(r"^ktest: (PASS|FAIL) (\S+?)(?::?\s*$|:\s+(.*?)\s*$)", re.M)


def make_variant(variable, target):
    """make VARIABLE=1 TARGET (incremental) on one host core, as a compile
    wants, not beside a whole-host boot: None when it worked, else its
    last lines."""
    with hostcores.hold(1):
        r = subprocess.run(["make", "-s", "--no-print-directory", variable + "=1",
                            os.path.relpath(target, ROOT)], cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        return "make %s=1 failed: " % variable + " | ".join(
            r.stdout.decode(errors="replace").strip().splitlines()[-3:])
    return None

def parse_ktests(output):
    """(summary (passed, failed) or None, [(PASS|FAIL, name, reason)])."""
    sums = KTEST_SUM_RE.findall(output)
    summary = (int(sums[-1][0]), int(sums[-1][1])) if sums else None
    tests = [(r, n, why or "") for r, n, why in KTEST_ONE_RE.findall(output)]
    return summary, tests


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
    """What a job is handed: the options, the results, the run's budget and
    the boots' host cores.  The budget decides only whether a boot starts
    (a boot asked for after it is gone returns None, and the job reports
    its results as not run); a boot that started keeps its own limit."""

    def __init__(self, args, results):
        self.args = args
        self.results = results
        self.deadline = time.monotonic() + args.budget
        self.not_run = []           # results a job could not give: the budget ran out
        self.boots = []             # (job, seconds, limit, status) of every boot
        self.slow_ktests = []       # (seconds, job, test) from "ktest: slow" lines

    def budget_left(self):
        return self.deadline - time.monotonic()

    def limit(self, seconds):
        """A boot's time limit: its own, scaled; 0 once the budget is gone."""
        if self.budget_left() <= 0:
            return 0
        return seconds * self.args.timeout_scale

    def boot(self, job, machine, opts, limit, **kw):
        """tempest.boot with the job's log directory, once the boot holds its
        host cores (tests/hostcores.py), so its limit starts when it runs;
        a machine far larger than the host boots with pvspin=on
        (pvspin_needed)."""
        accel, emulator = kw.get("accel", "tcg"), kw.get("emulator", "qemu")
        cores = tempest.cores_for(machine, accel, emulator)
        opts = tempest.pvspin_opts(machine, opts, accel, emulator, PVSPIN_RATIO)
        with hostcores.hold(cores):
            t = self.limit(limit)
            if t <= 0:
                return None
            keep = os.path.join(LOGDIR, job.replace("/", "-"))
            r = tempest.boot(machine, opts, timeout=t, keep=keep, **kw)
        r.keep = os.path.relpath(keep, ROOT)
        dump = condense_thread_dump(r.output)
        with self.results.lock:
            self.results.times.append((job, r.elapsed, r.status))
            self.boots.append((job, r.elapsed, t, r.status))
            if dump:
                self.results.dumps.append((job, dump))
        if self.args.verbose and not r.ok:
            tail = "\n".join(r.output.splitlines()[-25:])
            with self.results.lock:
                print("---- %s: console tail (%s)\n%s\n----" % (job, r.status, tail),
                      flush=True)
        return r


# A boot of at least this many virtual CPUs per host core gets pvspin=on.
PVSPIN_RATIO = 4


def pvspin_needed(machine, opts, accel="tcg", emulator="qemu"):
    """Whether make check boots machine with pvspin=on: a multi-threaded TCG
    boot of PVSPIN_RATIO or more virtual CPUs per host core (on two cores:
    hector, numachine, willow), unless opts say pvspin= already
    (tempest.pvspin_opts, whose default ratio of one the harness and make
    run use).

    Why this ratio: even alone on the host, such a boot's queue-lock tests
    had a heavy tail.  A queue lock hands the lock to the next waiter, whose
    virtual CPU is often descheduled while fifteen others spin:
    reclaim_mapped under lock=h2mcs on hector took 13 s, 49 s, and once
    (with a spinning process beside the check) ran past the ktest
    watchdog's 300 s, its sixteen CPUs all busy in the page reclaimer's
    hand-offs; segmap_mp under lock=mcs took 13 to 82 s.  With pvspin=on
    (kern/lock/pvspin.c) the waiters halt and free the host for the next
    one in line: the whole suite on hector under lock=mcs took 23 s beside
    that load, against 63 to 90 s quiet without.  Below the ratio make
    check keeps pvspin off, so that the queue locks without it stay tested
    on up, default (4 CPUs), svr4mp and spur."""
    return tempest.pvspin_opts(machine, opts, accel, emulator, PVSPIN_RATIO) != opts


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


def fail_reason(r, problems):
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


def debian_script(path, prefix=""):
    """The text of the Debian shell script at path for a run: prefix,
    then userland/tests/debian/checks.inc (ok, fail, check, eqv,
    await_port), then the script."""
    with open(os.path.join(os.path.dirname(path), "checks.inc")) as f:
        helpers = f.read()
    with open(path) as f:
        return prefix + helpers + f.read()


def budget_gone(ctx, names):
    """The results a job cannot give because the budget ran out; the run
    reports them together as one failure (tests/check.py)."""
    with ctx.results.lock:
        ctx.not_run.extend(names)


def child_env(env=None):
    """The environment for a subprocess started while this thread holds host
    cores: the child must not wait for the cores its parent holds."""
    env = dict(os.environ if env is None else env)
    if hostcores.holding():
        env[hostcores.ENV] = ""         # set but empty: slots off
    return env


KTEST_SLOW_RE = re.compile(r"^ktest: slow (\S+): (\d+\.\d) s\s*$", re.M)


def ktest_results(ctx, name, r, individual):
    summary, tests = parse_ktests(r.output)
    with ctx.results.lock:
        ctx.slow_ktests += [(float(s), name, t) for t, s in KTEST_SLOW_RE.findall(r.output)]
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
    # A test skips for want of a root only when the boot has none.
    if re.search(r"^vfs: root ", r.output, re.M):
        rootless = re.findall(r"^ktest: SKIP (\S+): no root file system", r.output, re.M)
        if rootless:
            problems.append("skipped with a root mounted: %s" % ", ".join(rootless[:10]))
    if individual:
        for res, tname, reason in tests:
            ctx.results.add("%s/%s" % (name, tname), res == "PASS", reason)
    ctx.results.add(name, r.ok and not problems, fail_reason(r, problems))


def run_host_script(ctx, prefix, script, timeout, boots=False):
    """Run a host test script whose lines are "PASS name" / "FAIL name:
    why" and which ends with "N passed, N failed"; each case counts as a
    result named prefix/name, and the script as a whole as prefix.  boots:
    the script starts emulators of its own."""
    log = os.path.join(LOGDIR, prefix.replace("/", "_") + ".log")
    # A script that boots emulators holds every host core while it runs,
    # so no wait for cores eats its time limit; one that boots none, one.
    with hostcores.hold(hostcores.host_cores() if boots else 1):
        try:
            p = subprocess.run([sys.executable, script], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=timeout, env=child_env())
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
