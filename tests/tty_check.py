"""Typing at Tempest's console, for tests/check.py: the terminal's
foreground process group and job control (drivers/tty/tty.c), seen as a person at
the keyboard sees them.

The root image (tools/mkroot.py, no --run) makes init start an
interactive busybox shell in a session of its own with the console as its
controlling terminal.  tempest.boot(..., typist=...) types into COM1 and
reads what comes back; each case below types a command, the key under
test, and then a command whose output carries the result, e.g.
`echo INTR-$?`.  The markers are computed by the shell ($?, $((...))) or
printed by the job, so the echo of the typed line never matches them.

The sleeping job is `t_jobctl --as sleeper` (userland/tests/t_jobctl.c,
put in /bin): it prints SLEEPER-READY and sleeps in nanosleep, and prints
SLEEPER-CONTINUED when continued.  It says it is ready from the program
that will take the signal: a busybox `sh -c 'echo ...; exec sleep 300'`
ignores SIGQUIT (and catches SIGINT) for a moment between its echo and
the exec, so a key typed then is lost, on Linux as here.  The cases:

  intr   ^C while a command sleeps in the foreground: it dies of SIGINT
         ($? = 130), the shell carries on
  quit   ^\\ the same with SIGQUIT ($? = 131)
  susp   ^Z stops the foreground job ($? = 148, "Stopped"); `fg` continues
         it in the foreground (it says so) and ^C then ends it ($? = 130)
  ttin   a background `cat` that reads the terminal is stopped by SIGTTIN
         ("Stopped (tty input)" from `jobs`), and dies of SIGKILL
  orphan a `cat` whose group is orphaned (its parent exited, init adopted
         it) reads the terminal from the background: EIO, not a stop
         that nobody would ever continue
  login  `login user01` with the image's password ("tempest", typed at the
         Password: prompt) starts user01's shell (uid 1001); `exit` from it
         comes back to root's shell
  shell  the shell survived all of it: `exit` ends it normally, and init
         reports "init: exit status 0"

Every case is one result.  One that times out leaves the shell in an
unknown state: the later cases are not run and the machine is stopped.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import tempest
from checklib import T_TTY, budget_gone, fail_reason

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
USERLAND = os.path.join(ROOT, "build", "userland")
MKROOT = os.path.join(ROOT, "tools", "mkroot.py")

PROMPT_WAIT = 240       # seconds for the boot to reach the first prompt
STEP_WAIT = 60          # seconds for any one expected line


def make_image(tmp):
    img = os.path.join(tmp, "root.img")
    subprocess.run([sys.executable, MKROOT, img, "--init", os.path.join(USERLAND, "init"),
                    "--bin", os.path.join(USERLAND, "tests", "t_jobctl")], check=True)
    return img


def status_of(con, marker):
    """Type `echo MARKER-$?` and return the number it prints."""
    con.send("echo %s-$?\n" % marker)
    return int(con.expect(r"%s-(\d+)" % marker, STEP_WAIT).group(1))


def start_sleeper(con):
    """Start the sleeping job in the foreground; return once it runs
    (the shell made its group the foreground before it exec'd it)."""
    con.send("t_jobctl --as sleeper\n")
    con.expect(r"SLEEPER-READY", STEP_WAIT)


def case_intr(con):
    start_sleeper(con)
    con.send(b"\x03")
    st = status_of(con, "INTR")
    return st == 130, "status %d after ^C (want 130: SIGINT)" % st


def case_quit(con):
    start_sleeper(con)
    con.send(b"\x1c")
    st = status_of(con, "QUIT")
    return st == 131, "status %d after ^\\ (want 131: SIGQUIT)" % st


def case_susp(con):
    start_sleeper(con)
    con.send(b"\x1a")
    con.expect(r"Stopped", STEP_WAIT)
    st = status_of(con, "SUSP")
    if st != 148:
        return False, "status %d after ^Z (want 148: SIGTSTP)" % st
    con.send("fg\n")
    con.expect(r"SLEEPER-CONTINUED", STEP_WAIT)    # in the foreground again
    con.send(b"\x03")
    st = status_of(con, "FG")
    return st == 130, "status %d after fg and ^C (want 130)" % st


def case_ttin(con):
    start = len(con.text())
    con.send("cat &\n")
    # jobs until it shows the stop (cat may take a while to get there).
    con.send("for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do "
             "jobs >/tmp/jobs; grep -q tty /tmp/jobs && break; sleep 1; done; "
             "cat /tmp/jobs; echo JOBS-$((6+0))\n")
    m = con.expect(r"JOBS-6", STEP_WAIT)
    stopped = "Stopped (tty input)" in con.text()[start:m.start()]
    con.send("kill -9 %1; sleep 1; echo TTIN-$((7+0))\n")
    con.expect(r"TTIN-7", STEP_WAIT)
    return stopped, "" if stopped else "jobs did not show cat stopped by SIGTTIN"


def case_orphan(con):
    # The subshell reads once its parent, the job's sh, is gone (the
    # `wait` reaps it); an asynchronous list of a shell without job control
    # reads /dev/null, so cat opens the terminal itself.
    start = len(con.text())
    con.send("sh -c '(while kill -0 $$ 2>/dev/null; do sleep 1; done; "
             "cat </dev/console; echo CAT-$?) & exit' &\n")
    con.send("wait\n")
    m = con.expect(r"CAT-(\d+)", STEP_WAIT)
    st = int(m.group(1))
    eio = re.search(r"Input/output error|I/O error", con.text()[start:m.start()]) is not None
    con.send("echo ORPHAN-$((8+0))\n")
    con.expect(r"ORPHAN-8", STEP_WAIT)
    ok = st == 1 and eio
    return ok, "cat: status %d%s (want 1 and EIO)" % (st, "" if eio else ", no EIO message")


def case_login(con):
    con.send("login user01\n")
    con.expect(r"[Pp]assword:", STEP_WAIT)
    con.send("tempest\n")
    con.send("echo LOGIN-$(id -u)-$((1+1))\n")
    uid = int(con.expect(r"LOGIN-(\d+)-2", STEP_WAIT).group(1))
    con.send("exit\n")
    con.send("echo BACK-$(id -u)-$((2+1))\n")
    back = int(con.expect(r"BACK-(\d+)-3", STEP_WAIT).group(1))
    return uid == 1001 and back == 0, "uid %d in the login shell, %d after it" % (uid, back)


CASES = (("intr", case_intr), ("quit", case_quit), ("susp", case_susp), ("ttin", case_ttin),
         ("orphan", case_orphan), ("login", case_login))


def typist(results):
    """The typist for tempest.boot: runs the cases, appending (name, ok,
    why) to results, then types exit."""
    def run(con):
        con.expect(r"# ", PROMPT_WAIT)
        for name, fn in CASES:
            try:
                ok, why = fn(con)
            except tempest.ConsoleTimeout as e:
                # The shell is stuck (a job that did not end?): the rest
                # cannot run, and the machine is stopped.
                results.append((name, False, str(e)))
                raise
            results.append((name, ok, "" if ok else why))
        con.send("exit\n")
        con.expect(r"init: (exit status|killed by signal) \d+", STEP_WAIT)
    return run


def judge_shell(r):
    """The shell case from the console: init saw it exit normally."""
    m = re.findall(r"^init: (exit status|killed by signal) (\d+)", r.output, re.M)
    ok = bool(m) and m[-1] == ("exit status", "0")
    return ("shell", ok, "" if ok else "init says: %s" % (" ".join(m[-1]) if m else "nothing"))


def run(boot, machine, opts, timeout):
    """Boot machine with an interactive shell and type the cases; boot(machine,
    opts, timeout, images, typist) is the harness's boot (a BootResult, or
    None when the budget is gone).  Returns (BootResult or None, results)."""
    subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "userland"),
                    "BUILD=" + USERLAND], check=True)
    tmp = tempfile.mkdtemp(prefix="tempest-tty-")
    try:
        img = make_image(tmp)
        results = []
        r = boot(machine, ("root=vda poweroff " + opts).strip(), timeout, [img], typist(results))
        if r is None:
            return None, []
        done = {name for name, _, _ in results}
        for name, _ in CASES:
            if name not in done:
                results.append((name, False, "not run: an earlier case got stuck"))
        results.append(judge_shell(r))
        return r, results
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def make_tty_job(preset):
    """Typing at the console of an interactive shell (this module's run):
    ^C, ^\\, ^Z and fg, SIGTTIN; each case one result user/tty/PRESET/NAME,
    the boot itself another."""
    def job(ctx):
        name = "user/tty/" + preset

        def boot(machine, boot_opts, limit, images, typist):
            return ctx.boot(name, machine, boot_opts, limit, disk_images=images,
                            typist=typist)

        r, results = run(boot, preset, "", T_TTY)
        if r is None:
            return budget_gone(ctx, [name])
        for test, ok, reason in results:
            ctx.results.add(name + "/" + test, ok, reason)
        ctx.results.add(name, r.ok and not r.typist_error,
                        fail_reason(r, [r.typist_error] if r.typist_error else []))
    return job


if __name__ == "__main__":
    def _boot(machine, opts, timeout, images, fn):
        return tempest.boot(machine, opts, timeout=timeout, disk_images=images, typist=fn,
                            echo=sys.stdout.buffer if "-v" in sys.argv else None)
    preset = next((a for a in sys.argv[1:] if not a.startswith("-")), "default")
    start = time.monotonic()
    r, results = run(_boot, preset, "", 600)
    for name, ok, why in results:
        print("%s tty/%s/%s%s" % ("PASS" if ok else "FAIL", preset, name,
                                  "" if ok else ": " + why))
    print("boot: %s%s (%.0f s)" % (r.status, "; " + r.typist_error if r.typist_error else "",
                                   time.monotonic() - start))
    bad = sum(not ok for _, ok, _ in results) + (not r.ok or bool(r.typist_error))
    print("%d passed, %d failed" % (len(results) + 1 - bad, bad))
    sys.exit(1 if bad else 0)
