"""The user-space tests inside Tempest, for tests/check.py.

The programs tests/usertests.py runs on the host's Linux (userland/tests/)
run again inside Tempest: a root image (tools/mkroot.py) holds them under
/tests, and init runs a script that starts each one and brackets its
output with

    usertest: begin NAME
    ... the program's own lines, ending "N passed, N failed" ...
    usertest: end NAME status S

so each program counts as one result, passed when it exited 0 and its last
summary says 0 failed.  A program that hangs or kills the kernel leaves
the rest unreported, and they count as failures.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

from checklib import T_USER, budget_gone, fail_reason

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
USERLAND = os.path.join(BUILD, "userland")
MKROOT = os.path.join(ROOT, "tools", "mkroot.py")

BEGIN_RE = re.compile(r"^usertest: begin (\S+)\s*$", re.M)
END_RE = re.compile(r"^usertest: end (\S+) status (\d+)\s*$", re.M)
SUMMARY_RE = re.compile(r"^(\d+) passed, (\d+) failed\s*$", re.M)

# Programs that do not pass on Tempest yet, with the reason; they are not
# run (a hang would cost the whole boot) and each prints a SKIP line, so
# the gap stays visible.  Remove an entry when its program passes.
KNOWN_GAPS = {
}

# Programs and arguments; the random-syscall program with a fixed seed
# (2000 calls by each of its children, one per CPU).
FUZZ = ("ut_fuzz", "2000 1")
# hector (16 CPUs) runs a smaller set: the calls every program needs, and
# affinity and threads, which are most worth checking on many CPUs.
SMALL_SET = ("t_fileio", "t_proc", "t_mem", "t_signal", "t_stat", "t_ids",
             "t_affinity", "t_thread")
# and the page cache's data path (user/ufs/default: UFS's pages and fragments).
SMALL_SET += ("t_segmap", "t_pagecache")


def build_userland():
    subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "userland"),
                    "BUILD=" + USERLAND], check=True)


def gap(name):
    """The reason name is not run yet, or None."""
    return KNOWN_GAPS.get(name) or KNOWN_GAPS.get(name.split("/")[0])


def test_names(small=False):
    """The C test programs (and the shell scripts) to run, as
    (name, command) pairs for the in-image script; known gaps included
    (run() leaves them out)."""
    tests = os.path.join(USERLAND, "tests")
    names = sorted(f for f in os.listdir(tests)
                   if f.startswith("t_") and os.access(os.path.join(tests, f), os.X_OK))
    if small:
        names = [n for n in names if n in SMALL_SET]
    cmds = [(n, "/tests/" + n) for n in names]
    if not small:
        cmds.append(("%s/%s" % (FUZZ[0], FUZZ[1].replace(" ", ",")),
                     "/tests/%s %s" % FUZZ))
        shdir = os.path.join(tests, "sh")
        for f in sorted(os.listdir(shdir)) if os.path.isdir(shdir) else []:
            if f.endswith(".sh"):
                cmds.append(("sh/" + f, "/bin/sh /tests/sh/" + f))
    return cmds


def run_script(cmds):
    """The shell script init runs: each program in /var/tmp, bracketed.
    /tmp is tmpfs (init mounts it); the programs' scratch directories
    (TMPDIR) stay on the root's disk, so the S5 and UFS jobs test those
    file systems, and t_tmpfs tests tmpfs."""
    lines = ["mkdir -p /var/tmp", "cd /var/tmp", "export TMPDIR=/var/tmp"]
    for name, cmd in cmds:
        lines.append("echo 'usertest: begin %s'" % name)
        lines.append("%s; echo \"usertest: end %s status $?\"" % (cmd, name))
    return "\n".join(lines)


def make_image(tmp, cmds, fs="s5"):
    img = os.path.join(tmp, "root.img")
    subprocess.run([sys.executable, MKROOT, img, "--size", "48M", "--fs", fs,
                    "--init", os.path.join(USERLAND, "init"),
                    "--bin", os.path.join(USERLAND, "lockstat"),
                    "--tests", os.path.join(USERLAND, "tests"),
                    "--run", run_script(cmds)] + guest_tools(), check=True)
    return img


def guest_tools():
    """mkfs.s5 and fsck.s5 built for the guest (tools/Makefile), for /bin."""
    args = []
    for prog in ("mkfs.s5", "fsck.s5"):
        path = os.path.join(BUILD, "tools", "guest", prog)
        if os.path.exists(path):
            args += ["--bin", path]
    return args


def judge(output, cmds):
    """[(name, ok, why)] from the console of the boot."""
    sections = {}
    for m in BEGIN_RE.finditer(output):
        end = END_RE.search(output, m.end())
        if end and end.group(1) == m.group(1):
            sections[m.group(1)] = (output[m.end():end.start()], int(end.group(2)))
    results = []
    for name, _ in cmds:
        if name not in sections:
            results.append((name, False, "did not finish (hang or crash?)"))
            continue
        text, status = sections[name]
        summ = SUMMARY_RE.findall(text)
        fails = [l for l in text.splitlines() if l.startswith("FAIL")]
        ok = status == 0 and bool(summ) and summ[-1][1] == "0"
        why = "" if ok else "status %d, %s%s" % (
            status, "%s passed, %s failed" % summ[-1] if summ else "no summary",
            ": " + " | ".join(fails[:3]) if fails else "")
        results.append((name, ok, why))
    return results


def skipped(small=False):
    """[(name, reason)] of the programs a run leaves out."""
    return [(n, gap(n)) for n, _ in test_names(small) if gap(n)]


def run(boot, machine, opts, timeout, small=False, fs="s5"):
    """Boot machine with the tests as its root (an S5 or, with fs="ufs", a
    UFS image); boot(machine, opts, timeout, disk_images) is the harness's
    boot (returns a BootResult or None when the budget is gone).  Returns
    (BootResult or None, results)."""
    build_userland()
    cmds = [c for c in test_names(small) if not gap(c[0])]
    tmp = tempfile.mkdtemp(prefix="tempest-user-")
    try:
        img = make_image(tmp, cmds, fs)
        r = boot(machine, ("root=vda poweroff " + opts).strip(), timeout, [img])
        if r is None:
            return None, []
        return r, judge(r.output, cmds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# A lock-order reversal the checker reports (witness=on); the ktests'
# own test_* classes reverse on purpose, the user tests never do.
WITNESS_RE = re.compile(r'^witness: lock order reversal: acquiring "(\S+)" while holding "(\S+)"',
                        re.M)


def make_user_job(preset, small=False, opts="", name=None, fs="s5"):
    """The user-space tests inside Tempest (the run above): each
    program is one result NAME/TEST (NAME defaults to user/PRESET); the
    boot itself another.  With witness=on in opts, a lock-order reversal
    that the tests' system calls provoked fails NAME/order.

    On a two-core host user/svr4mp's sh_users.sh once ended in "timeout
    after 95 s", and user/cluster/hector's t_signal, t_stat and t_thread
    did not finish (issue 29): those boots started late, after two hung
    hector ktests had eaten the run's budget, and the budget then cut
    their limit to what was left of it.  No program hung: a boot that
    starts now keeps its whole limit (T_USER), and the budget only decides
    whether a job starts at all."""
    def job(ctx):
        jobname = name or "user/" + preset
        run_tests(ctx, jobname, preset, small, opts, fs)
    return job


def run_tests(ctx, name, preset, small, opts, fs="s5"):
    """Boot preset with the tests and report each program, the boot and
    (under witness=on) the lock order, as make_user_job says."""
    def boot(machine, boot_opts, limit, images):
        return ctx.boot(name, machine, boot_opts, limit, disk_images=images)

    for test, reason in skipped(small):
        with ctx.results.lock:
            print("SKIP %s/%s: %s" % (name, test, reason), flush=True)
    r, results = run(boot, preset, opts, T_USER, small, fs)
    if r is None:
        return budget_gone(ctx, [name])
    for test, ok, reason in results:
        ctx.results.add(name + "/" + test, ok, reason)
    ctx.results.add(name, r.ok and bool(results),
                    fail_reason(r, [] if results else ["no tests ran"]))
    if "witness=on" in opts:
        rev = [m.group(0) for m in WITNESS_RE.finditer(r.output)]
        ctx.results.add(name + "/order", r.ok and not rev, fail_reason(r, rev))
