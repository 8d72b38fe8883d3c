#!/usr/bin/env python3
"""Run Tempest's user-space tests on the host (Linux).

The same static musl binaries later run inside Tempest, started by its
init; running them here first proves that they test Linux semantics.

    python3 tests/usertests.py            build, run everything
    python3 tests/usertests.py -k t_dir   only programs whose name contains t_dir
    python3 tests/usertests.py -v         print every program's whole output
    python3 tests/usertests.py --list     list the programs

Steps: `make -C userland` (musl-gcc; tools/install-deps.sh installs
musl-tools and busybox-static when missing), then every binary in
build/userland/tests/ and every script build/userland/tests/sh/*.sh (run
by `busybox sh`), each in a fresh temporary directory that is also its
TMPDIR, in a session of its own, with a time limit after which its whole
process group is killed.  Each program ends with `N passed, N failed`; a
line per program is printed here, `PASS name: N checks` or `FAIL name:
reason` with the program's FAIL lines, and at the end the sum over all
programs, `N passed, N failed`.  A program that crashes, hangs, exits
non-zero or prints no summary counts as one more failure.  The exit
status is non-zero if anything failed.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed\s*$")

# Extra runs of the random-syscall program: (arguments) each.
FUZZ_RUNS = [("3000", "1"), ("3000", "2")]


class Result:
    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failed = 0
        self.ok = False
        self.reason = ""
        self.output = ""
        self.seconds = 0.0

    def line(self):
        if self.ok:
            return "PASS %s: %d checks (%.1fs)" % (self.name, self.passed, self.seconds)
        return "FAIL %s: %s" % (self.name, self.reason)


def ensure_tools():
    """Install musl-tools and busybox-static through the project's installer."""
    if shutil.which("musl-gcc") and shutil.which("busybox"):
        return
    installer = os.path.join(ROOT, "tools", "install-deps.sh")
    subprocess.run(["sh", installer], check=False)


def build(build_dir):
    cmd = ["make", "-s", "-C", os.path.join(ROOT, "userland"), "BUILD=" + build_dir]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    return r.returncode, r.stdout


def programs(build_dir):
    """(name, argv) for every test, binaries first, then the scripts."""
    tests = os.path.join(build_dir, "tests")
    out = []
    busybox = shutil.which("busybox") or "busybox"
    for f in sorted(os.listdir(tests)) if os.path.isdir(tests) else []:
        path = os.path.join(tests, f)
        if not os.path.isfile(path) or not os.access(path, os.X_OK):
            continue
        if f == "ut_fuzz":
            for args in FUZZ_RUNS:
                out.append(("%s/%s" % (f, ",".join(args)), [path] + list(args)))
        else:
            out.append((f, [path]))
    shdir = os.path.join(tests, "sh")
    for f in sorted(os.listdir(shdir)) if os.path.isdir(shdir) else []:
        if f.endswith(".sh"):
            out.append(("sh/" + f, [busybox, "sh", os.path.join(shdir, f)]))
    return out


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_one(name, argv, timeout):
    res = Result(name)
    work = tempfile.mkdtemp(prefix="usertest.")
    os.chmod(work, 0o755)  # an unprivileged child must be able to enter
    env = dict(os.environ, TMPDIR=work, LC_ALL="C")
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=work, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, _ = proc.communicate()
        timed_out = True
    kill_group(proc)  # whatever it left behind
    res.seconds = time.monotonic() - start
    res.output = out.decode("utf-8", "replace")
    subprocess.run(["rm", "-rf", work])

    summary = None
    for line in res.output.splitlines():
        m = SUMMARY.match(line)
        if m:
            summary = (int(m.group(1)), int(m.group(2)))
    if summary:
        res.passed, res.failed = summary
    rc = proc.returncode
    if timed_out:
        res.reason = "no result after %d s (killed)" % timeout
    elif rc < 0:
        res.reason = "killed by signal %d" % -rc
    elif summary is None:
        res.reason = "no 'N passed, N failed' line (exit status %d)" % rc
    elif res.failed:
        res.reason = "%d of %d checks failed" % (res.failed, res.passed + res.failed)
    elif rc != 0:
        res.reason = "exit status %d with no failed check" % rc
    elif res.passed == 0:
        res.reason = "no checks ran"
    else:
        res.ok = True
    if summary is None:
        # The checks it reported before it stopped, and the stop itself.
        res.failed = sum(1 for l in res.output.splitlines() if l.startswith("FAIL"))
    if not res.ok and (summary is None or res.failed == 0 or rc != 0 and summary[1] == 0):
        res.failed += 1  # the crash, hang or bad exit is itself a failure
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-k", dest="pattern", help="run only programs whose name contains this")
    ap.add_argument("-v", dest="verbose", action="store_true", help="print every program's output")
    ap.add_argument("--list", action="store_true", help="list the programs and stop")
    ap.add_argument("--no-build", action="store_true", help="use what is built")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build", "userland"))
    ap.add_argument("--timeout", type=int, default=60, help="seconds per program")
    opts = ap.parse_args()
    build_dir = os.path.abspath(opts.build_dir)

    if not opts.no_build:
        ensure_tools()
        rc, log = build(build_dir)
        if rc != 0:
            print(log)
            print("FAIL build: make -C userland failed")
            print("0 passed, 1 failed")
            return 1
    progs = programs(build_dir)
    if opts.pattern:
        progs = [p for p in progs if opts.pattern in p[0]]
    if opts.list:
        for name, argv in progs:
            print(name, " ".join(argv))
        return 0
    if not progs:
        print("FAIL usertests: no test programs found in %s" % build_dir)
        print("0 passed, 1 failed")
        return 1

    passed = failed = 0
    for name, argv in progs:
        res = run_one(name, argv, opts.timeout)
        print(res.line(), flush=True)
        if opts.verbose:
            sys.stdout.write(res.output)
        elif not res.ok:
            for line in res.output.splitlines():
                if line.startswith(("FAIL", "note:")) or not res.passed:
                    print("    " + line)
        passed += res.passed
        failed += res.failed
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
