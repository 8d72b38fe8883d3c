"""A newcomer's first hour, for tests/check.py: README's tour, typed.

  newcomer/docs      host only: README is a front door of at most 300
                     lines; every relative link in README and docs/ leads
                     to a file; every docs page is in docs/README.md's
                     index; `make help` prints one line per target and
                     variable, names every target the Makefile has a
                     recipe for, and every `make` command in README's code
                     blocks uses a target and variables it lists
  newcomer/tour      README's tour, its console block word for word: the
                     `$ make run` line is started on a pseudo-terminal
                     (as a person at a terminal), each `# ` line is typed
                     at the shell's prompt and must come back to the
                     prompt with no "not found", "can't", "No such file"
                     or PANIC in its output, and the last, `poweroff`,
                     must end make with exit status 0, the kernel's
                     unmount of the root and power-off on the console, and
                     no process of the run left
  newcomer/commands  the tour's other commands that run something and
                     power off (`make run ... RUN=...`, `make linux-run
                     RUN=...`), word for word from its sh blocks: each
                     exits 0 and prints a benchmark's `bench ` line (the
                     sweep and the Debian root have jobs of their own:
                     bench, debian/...)
  newcomer/hangup    another `make run`, its terminal closed at the
                     prompt (a window closed): make ends and leaves no
                     process
  newcomer/quit      another `make run` left through QEMU's monitor
                     (Ctrl-A C, then quit): make ends, no process left
  newcomer/sigterm   `make run RUN='sleep 100'` sent SIGTERM (as `kill`
                     does to make): no process left
  newcomer/orphan    the same run's userrun.py killed outright (SIGKILL,
                     so it cleans nothing up): its emulator still ends (it
                     dies with its parent) and no process is left

The boots are one at a time, about 30 s in all.
"""

import os
import re
import signal
import subprocess
import sys
import time

import checklib
import hostcores
import tempest
from checklib import T_TOPOLOGY, budget_gone, child_env
from ptyrun import Terminal, TerminalTimeout

ROOT = tempest.ROOT
README = os.path.join(ROOT, "README.md")
DOCS = os.path.join(ROOT, "docs")
MAX_README_LINES = 300
PROMPT = rb"(^|\n)# "
# What a tour command must not print.
BAD_OUTPUT = re.compile(rb"not found|can't |No such file|PANIC|Segmentation fault")
# Make's own targets that are plumbing, not for people (they need no help line).
PLUMBING = {"deps", "upkernel", "FORCE", "all"}


def code_blocks(text):
    """[(info string, [lines])] of the fenced code blocks of a Markdown text."""
    blocks, cur, info = [], None, ""
    for line in text.splitlines():
        if line.startswith("```"):
            if cur is None:
                cur, info = [], line[3:].strip()
            else:
                blocks.append((info, cur))
                cur = None
        elif cur is not None:
            cur.append(line)
    return blocks


def tour(text):
    """README's tour: (the host command, [the commands typed in Tempest])
    from its first console block, or None."""
    for info, lines in code_blocks(text):
        if info == "console":
            host = [l[2:] for l in lines if l.startswith("$ ")]
            guest = [l[2:] for l in lines if l.startswith("# ")]
            return (host[0] if host else None), guest
    return None


def tour_commands(text):
    """The `make` lines of the sh blocks in README's tour section that
    run a command and power off (RUN=), as typed."""
    start = text.find("\n## A tour")
    end = text.find("\n## ", start + 1)
    section = text[start:end if end > 0 else len(text)] if start >= 0 else ""
    return [l.split("  #")[0].strip() for info, lines in code_blocks(section) if info == "sh"
            for l in lines if l.startswith("make ") and "RUN=" in l]


def check_commands(ctx, limit):
    with open(README) as f:
        commands = tour_commands(f.read())
    problems = [] if commands else ["README's tour has no `make ... RUN=` lines"]
    env = child_env()
    for k in ("MAKEFLAGS", "MAKELEVEL", "TEMPEST_RUN", "LINUX_RUN"):
        env.pop(k, None)
    for cmd in commands:
        try:
            p = subprocess.run(["sh", "-c", cmd], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                               timeout=limit, start_new_session=True)
            out, rc = p.stdout, p.returncode
        except subprocess.TimeoutExpired:
            out, rc = b"", "timeout"
        if rc != 0 or not re.search(rb"^bench ", out, re.M):
            problems.append("`%s`: exit %s, stdout %r" % (cmd, rc, out[-120:]))
    ctx.results.add("newcomer/commands", not problems, "; ".join(problems[:3]))


def make_help():
    p = subprocess.run(["make", "-s", "--no-print-directory", "help"], cwd=ROOT,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       stdin=subprocess.DEVNULL, timeout=60)
    return p.returncode, p.stdout


def make_targets():
    """The Makefile's targets that have a recipe (a rule line at the left
    margin with a plain name), less the plumbing."""
    names = set()
    with open(os.path.join(ROOT, "Makefile")) as f:
        for line in f:
            m = re.match(r"^([a-z][a-z-]*):(?!=)", line)
            if m:
                names.add(m.group(1))
    return names - PLUMBING


def check_docs(ctx):
    problems = []
    with open(README) as f:
        text = f.read()
    n = text.count("\n")
    if n > MAX_README_LINES:
        problems.append("README.md has %d lines, more than %d" % (n, MAX_README_LINES))
    pages = sorted(p for p in os.listdir(DOCS) if p.endswith(".md"))
    for path in [README] + [os.path.join(DOCS, p) for p in pages]:
        with open(path) as f:
            body = f.read()
        for target in re.findall(r"\]\(([^)\s]+)\)", body):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            file = target.split("#")[0]
            if not os.path.exists(os.path.join(os.path.dirname(path), file)):
                problems.append("%s links to %s, which is not there"
                                % (os.path.relpath(path, ROOT), target))
    with open(os.path.join(DOCS, "README.md")) as f:
        index = f.read()
    for p in pages:
        if p != "README.md" and "(%s)" % p not in index:
            problems.append("docs/%s is not in docs/README.md's index" % p)
    if tour(text) is None:
        problems.append("README.md has no console block (the tour)")
    rc, helptext = make_help()
    if rc != 0:
        problems.append("make help: exit status %d" % rc)
    lines = helptext.splitlines()
    listed = set(re.findall(r"^  make ([a-z-]+)", helptext, re.M))
    variables = set(re.findall(r"^  ([A-Z_]+)=", helptext, re.M))
    for t in sorted(make_targets() - listed):
        problems.append("make help does not list the target %s" % t)
    long = [l for l in lines if len(l) > 100]
    if long:
        problems.append("make help: %d lines longer than 100 characters: %r" % (len(long), long[0]))
    for info, block in code_blocks(text):
        for line in block:
            line = line[2:] if line.startswith("$ ") else line
            if not line.startswith("make "):
                continue
            words = re.sub(r"'[^']*'", "''", line).split("#")[0].split()[1:]
            for w in words:
                if "=" in w:
                    name = w.split("=")[0]
                    if name not in variables:
                        problems.append("README's `%s`: make help lists no %s=" % (line, name))
                elif w not in listed:
                    problems.append("README's `%s`: make help lists no target %s" % (line, w))
    ctx.results.add("newcomer/docs", not problems, "; ".join(problems[:6]))


def start(cmd):
    env = child_env()
    env.pop("MAKEFLAGS", None)
    env.pop("MAKELEVEL", None)
    env.pop("TEMPEST_RUN", None)
    return Terminal(cmd, cwd=ROOT, env=env)


def leftovers(term, wait=10.0):
    """The run's processes still there after up to wait seconds, as text."""
    deadline = time.monotonic() + wait
    while term.left() and time.monotonic() < deadline:
        time.sleep(0.2)
    return ", ".join("%d %s" % (pid, line[:60]) for pid, line in term.left())


def keep_log(name, term):
    """What the terminal showed, in build/check/newcomer-NAME.txt."""
    try:
        os.makedirs(checklib.LOGDIR, exist_ok=True)
        with open(os.path.join(checklib.LOGDIR, "newcomer-%s.txt" % name), "wb") as f:
            f.write(term.output)
    except OSError:
        pass


def exit_code(status):
    return os.waitstatus_to_exitcode(status) if status is not None else None


def check_tour(ctx, limit):
    with open(README) as f:
        found = tour(f.read())
    if not found or found[0] != "make run" or not found[1] or found[1][-1] != "poweroff":
        ctx.results.add("newcomer/tour", False, "README's console block is not `$ make run`, "
                        "then commands, then `# poweroff`: %r" % (found,))
        return
    _, commands = found
    term = start(found[0].split())
    why = ""
    try:
        term.expect(PROMPT, limit)
        for cmd in commands:
            start_at = len(term.output)
            term.type(cmd + "\n")
            if cmd == "poweroff":
                break
            term.expect(PROMPT, 60)
            out = term.output[start_at:]
            bad = BAD_OUTPUT.search(out)
            if bad:
                why = "`%s` printed %r" % (cmd, out[max(0, bad.start() - 60):bad.end() + 40])
                break
        if not why:
            status = term.wait(60)
            console = term.output.decode("utf-8", "replace")
            if status is None:
                why = "make run did not end within 60 s of poweroff"
            elif exit_code(status) != 0:
                why = "make run exited with %s after poweroff, want 0" % exit_code(status)
            elif "init: poweroff" not in console or "(root)" not in console \
                    or "powering off" not in console:
                why = "no clean power-off on the console: %r" % console[-300:]
            else:
                left = leftovers(term)
                if left:
                    why = "left running after poweroff: " + left
    except TerminalTimeout as e:
        why = str(e)
    finally:
        term.close()
        keep_log("tour", term)
    ctx.results.add("newcomer/tour", not why, why)


def check_hangup(ctx, limit):
    term = start(["make", "run"])
    why = ""
    try:
        term.expect(PROMPT, limit)
        term.family()
        term.hang_up()
        if term.wait(30) is None:
            why = "make run still running 30 s after its terminal closed"
        else:
            left = leftovers(term)
            if left:
                why = "left running after the terminal closed: " + left
    except TerminalTimeout as e:
        why = str(e)
    finally:
        term.close()
        keep_log("hangup", term)
    ctx.results.add("newcomer/hangup", not why, why)


def check_quit(ctx, limit):
    term = start(["make", "run"])
    why = ""
    try:
        term.expect(PROMPT, limit)
        term.family()
        term.type("\x01c")             # Ctrl-A C: QEMU's monitor
        term.expect(rb"\(qemu\)", 30)
        term.type("quit\n")
        if term.wait(30) is None:
            why = "make run still running 30 s after the monitor's quit"
        else:
            left = leftovers(term)
            if left:
                why = "left running after the monitor's quit: " + left
    except TerminalTimeout as e:
        why = str(e)
    finally:
        term.close()
        keep_log("quit", term)
    ctx.results.add("newcomer/quit", not why, why)


def running_command(ctx, limit, name, victim, sig):
    """make run RUN='sleep 100' on a terminal; once its emulator runs,
    sig goes to the process whose command line starts with victim."""
    term = start(["make", "run", "RUN=sleep 100"])
    why = ""
    try:
        term.expect(rb"init: started", limit)
        time.sleep(1)
        procs = [(pid, line) for pid, line in (term.family() and term.left())]
        target = [pid for pid, line in procs if line.startswith(victim)]
        if not target:
            why = "no %r among %s" % (victim, [l[:40] for _, l in procs])
        else:
            os.kill(target[0], sig)
            if term.wait(30) is None:
                why = "make run still running 30 s after %s" % signal.Signals(sig).name
            else:
                left = leftovers(term)
                if left:
                    why = "left running after %s: %s" % (signal.Signals(sig).name, left)
    except TerminalTimeout as e:
        why = str(e)
    finally:
        term.close()
        keep_log(name.split("/")[1], term)
    ctx.results.add(name, not why, why)


def job_docs(ctx):
    check_docs(ctx)


def job_newcomer(ctx):
    names = ["newcomer/tour", "newcomer/commands", "newcomer/hangup", "newcomer/quit",
             "newcomer/sigterm", "newcomer/orphan"]
    steps = (lambda limit: check_tour(ctx, limit),
             lambda limit: check_commands(ctx, limit),
             lambda limit: check_hangup(ctx, limit),
             lambda limit: check_quit(ctx, limit),
             lambda limit: running_command(ctx, limit, "newcomer/sigterm", "make run",
                                           signal.SIGTERM),
             lambda limit: running_command(ctx, limit, "newcomer/orphan",
                                           "python3 tools/userrun.py", signal.SIGKILL))
    for i, step in enumerate(steps):
        limit = ctx.limit(T_TOPOLOGY)
        if limit < 30:
            return budget_gone(ctx, names[i:])
        # One boot at a time, holding the cores the default preset uses;
        # make's own children must not wait for them again.
        with hostcores.hold(tempest.cores_for("default")):
            step(limit)


if __name__ == "__main__":
    sys.exit("newcomer_check.py: run it through tests/check.py -k newcomer")
