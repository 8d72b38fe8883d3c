"""`make run` itself (tools/userrun.py), for tests/check.py:

  run/failures   a missing ADD= directory, a missing DISK= image, an
                 unknown machine, a bad SIZE=, an unusable ROOT= and
                 GAEDE=1 without USERLAND=debian each
                 give exit status 125, one line on standard error starting
                 "userrun:" and nothing on standard output (no boot)
  run/output     a command whose output has a bare LF, a CR LF of its own
                 and no final newline: standard output holds exactly what
                 it wrote (the console's CR LF made LF again, no boot
                 messages), and the exit status is the command's
  run/root       ROOT=path: the first run makes the image and leaves a
                 file in /root; the second run, on the same image, reads
                 it back; fsck.s5 finds the image clean after each
  run/shutdown   poweroff, reboot and halt typed in the command (busybox
                 signals init) each end the run at once with exit status
                 0 and init's line for it, even with a process left in
                 the background; `kill -9 1` and `kill -HUP 1` before
                 them leave init standing (it has no handler for them);
                 the root image is clean afterwards

The two runs with a ROOT= share one image; run/shutdown boots three
times more (about two seconds each).
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

import hostcores
import tempest
from checklib import T_TOPOLOGY, budget_gone, child_env

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
USERRUN = os.path.join(ROOT, "tools", "userrun.py")
FSCK = os.path.join(ROOT, "build", "tools", "fsck.s5")
BOOT_FAILED = 125


def userrun(args, limit, run=None):
    """Run userrun.py; (exit status, stdout bytes, stderr text)."""
    cmd = [sys.executable, USERRUN, "--timeout", str(int(limit))] + args
    if run is not None:
        cmd += ["--run", run]
    # The boot's host cores are held here, so its limit is not spent
    # waiting for them; the default preset is the one userrun.py boots.
    with hostcores.hold(tempest.cores_for("default")):
        env = child_env()
        env.pop("TEMPEST_RUN", None)
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=limit + 120, env=env, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return None, b"", "userrun.py did not end"
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def one_line_failure(status, out, err):
    """Why a failure run does not look right, or ""."""
    lines = err.strip().splitlines()
    if status != BOOT_FAILED:
        return "exit status %s, want %d" % (status, BOOT_FAILED)
    if out:
        return "standard output not empty: %r" % out[:80]
    if len(lines) != 1 or not lines[0].startswith("userrun: "):
        return "standard error is not one 'userrun:' line: %r" % err[-300:]
    return ""


def failures(ctx, tmp):
    bad = os.path.join(tmp, "bad.img")
    with open(bad, "w") as f:
        f.write("not an image\n")
    cases = (("ADD", ["--add", os.path.join(tmp, "missing")]),
             ("DISK", ["--disk", os.path.join(tmp, "missing.img")]),
             ("MACHINE", ["--machine", "nosuchmachine"]),
             ("SIZE", ["--free", "12Q"]),
             ("ROOT", ["--root", bad]),
             ("GAEDE", ["--gaede"]))
    problems = []
    for what, args in cases:
        status, out, err = userrun(args, 60, run="true")
        why = one_line_failure(status, out, err)
        if why:
            problems.append("%s: %s" % (what, why))
    ctx.results.add("run/failures", not problems, "; ".join(problems))


def clean(image):
    p = subprocess.run([FSCK, image], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    return p.returncode == 0, p.stdout.strip().splitlines()[-1:] or [""]


def kept_root(ctx, tmp):
    image = os.path.join(tmp, "keep.img")
    limit = ctx.limit(T_TOPOLOGY)
    if limit < 30:
        return budget_gone(ctx, ["run/output", "run/root"])
    status, out, err = userrun(["--root", image, "--free", "2M"], limit,
                               run="printf 'one\\ntwo\\r\\n'; echo kept > /root/k; "
                                   "printf 'three'; exit 7")
    want = b"one\ntwo\r\nthree"
    ok = status == 7 and out == want
    ctx.results.add("run/output", ok, "" if ok else "exit %s, stdout %r, want 7 and %r (%s)"
                    % (status, out[:200], want, err.strip().splitlines()[-1:]))
    problems = []
    if not os.path.exists(image):
        problems.append("the first run left no image")
    else:
        fine, last = clean(image)
        if not fine:
            problems.append("unclean after the first run: %s" % last[0])
        limit = ctx.limit(T_TOPOLOGY)
        if limit < 30:
            return budget_gone(ctx, ["run/root"])
        status, out, err = userrun(["--root", image], limit, run="cat /root/k")
        if status != 0 or out != b"kept\n":
            problems.append("second run: exit %s, stdout %r, want 0 and 'kept'" % (status, out[:80]))
        fine, last = clean(image)
        if not fine:
            problems.append("unclean after the second run: %s" % last[0])
    ctx.results.add("run/root", not problems, "; ".join(problems))


# Each shutdown command, the line init prints for it, and what runs
# before it.  The `sleep 30` after it must never run out: init shuts down
# as soon as it is signalled.
SHUTDOWNS = (("poweroff", "init: poweroff", "sleep 100 & kill -9 1; kill -HUP 1; "),
             ("reboot", "init: reboot (this machine powers off instead)", ""),
             ("halt", "init: halt (this machine powers off instead)", ""))


def shutdown(ctx, tmp):
    image = os.path.join(tmp, "shutdown.img")
    problems = []
    for word, line, before in SHUTDOWNS:
        limit = ctx.limit(T_TOPOLOGY)
        if limit < 30:
            return budget_gone(ctx, ["run/shutdown"])
        start = time.monotonic()
        status, out, err = userrun(["--root", image, "--free", "1M"], limit,
                                   run="echo x > /root/f; %s%s; sleep 30; echo not stopped"
                                   % (before, word))
        took = time.monotonic() - start
        if status != 0:
            problems.append("%s: exit status %s, want 0 (%s)"
                            % (word, status, err.strip().splitlines()[-1:]))
        elif line not in err.splitlines():
            problems.append("%s: no line %r from init" % (word, line))
        elif b"not stopped" in out or took > 25:
            problems.append("%s: the command went on after it (%.0f s)" % (word, took))
        elif os.path.exists(image):
            fine, last = clean(image)
            if not fine:
                problems.append("%s: image unclean afterwards: %s" % (word, last[0]))
    ctx.results.add("run/shutdown", not problems, "; ".join(problems))


def job_userrun(ctx):
    tmp = tempfile.mkdtemp(prefix="tempest-run-")
    try:
        failures(ctx, tmp)
        kept_root(ctx, tmp)
        shutdown(ctx, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
