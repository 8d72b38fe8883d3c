#!/usr/bin/env python3
"""The soak: a mixed multi-user load on one machine for a set time
(`make soak DURATION=..`).

    soak.py [--duration 600] [--users 16] [--machine svr4mp] [--opts '...']
            [--keep DIR]

One boot of MACHINE (default svr4mp) with the lock-order checker on
(witness=on).  Init runs a script that records the live kernel-object
counts and the memory available (userland/soakstat), then starts USERS
users (user01, user02, ... of the root image), each a shell under su that
until the time is up does file work in its home (directories, files
written, copied, compared, removed), fork and exec of many small
programs, pipelines, and exit statuses, checking each result.  When every
user is done, the script syncs and records the counts again.  The soak
passes when:

  - the machine powered off by itself: no panic, no hang;
  - every user finished rounds, and no user's check failed;
  - the live counts of files, descriptor tables, pipes, address spaces,
    anonymous maps and IPC objects are what they were before: no leak;
  - the memory available came back to within MEM_SLACK of before;
  - the lock-order checker reported no reversal.

The report ends with one line:

    soak: DURATION s on MACHINE, USERS users, N rounds: leaks N, memory BEFORE->AFTER kB, reversals N: ok|FAILED
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import tempest  # noqa: E402
from machines import MachineError  # noqa: E402

BUILD = os.path.join(ROOT, "build")
USERLAND = os.path.join(BUILD, "userland")
MKROOT = os.path.join(ROOT, "tools", "mkroot.py")
MEM_SLACK = 0.03                 # of the memory available before
OBJECTS_RE = re.compile(r"^soak: objects (.*?) memavail_kb=(-?\d+)\s*$", re.M)
DONE_RE = re.compile(r"^soak: user (\S+) done (\d+) rounds\s*$", re.M)
FAIL_RE = re.compile(r"^soak: FAIL .*$", re.M)
WITNESS_RE = re.compile(r"^witness: lock order reversal: .*$", re.M)

# What each user does until the time is up (its home is $2, the end $1).
USER_SCRIPT = r"""
END=$1; cd $2 || exit 1; me=$(id -un); n=0
while [ $(date +%s) -lt $END ]; do
  n=$((n + 1)); d=w$n
  mkdir $d || echo "soak: FAIL $me mkdir $d"
  seq 1 300 > $d/a; echo "round $n of $me" > $d/b
  cp $d/a $d/c && cmp -s $d/a $d/c || echo "soak: FAIL $me cp/cmp round $n"
  [ $(sort -rn $d/a | head -1) = 300 ] || echo "soak: FAIL $me sort round $n"
  [ $(cat $d/a | grep 7 | wc -l) = 57 ] || echo "soak: FAIL $me pipeline round $n"
  ls -l /bin > $d/ls; [ -s $d/ls ] || echo "soak: FAIL $me ls round $n"
  echo abc | tr a-c x-z > $d/t; [ "$(cat $d/t)" = xyz ] || echo "soak: FAIL $me tr round $n"
  sh -c 'exit 7'; [ $? = 7 ] || echo "soak: FAIL $me exit status round $n"
  (cd $d && tar cf ../t$n.tar . && mkdir ../x$n && cd ../x$n && tar xf ../t$n.tar \
    && cmp -s a ../$d/a) || echo "soak: FAIL $me tar round $n"
  rm -rf $d x$n t$n.tar || echo "soak: FAIL $me rm round $n"
done
echo "soak: user $me done $n rounds"
"""


def run_script(duration, users):
    """What init runs: the counts, the users, the wait, the counts again."""
    lines = ["soakstat", "END=$(( $(date +%s) + " + str(duration) + " ))"]
    for i in range(1, users + 1):
        u = "user%02d" % i
        lines.append("su %s -c 'sh /add/user.sh '$END' /home/%s' &" % (u, u))
    lines += ["wait", "sync", "sleep 1", "soakstat", "echo soak-finished"]
    return "\n".join(lines)


def make_image(tmp, duration, users):
    add = os.path.join(tmp, "add")
    os.makedirs(add)
    with open(os.path.join(add, "user.sh"), "w") as f:
        f.write(USER_SCRIPT)
    img = os.path.join(tmp, "root.img")
    r = subprocess.run([sys.executable, MKROOT, img, "--free", "32M",
                        "--init", os.path.join(USERLAND, "init"),
                        "--bin", os.path.join(USERLAND, "soakstat"), "--add", add,
                        "--run", run_script(duration, users)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if r.returncode != 0:
        lines = r.stdout.strip().splitlines()
        raise RuntimeError("cannot make the root image: %s" % (lines[-1] if lines else "?"))
    return img


def parse_objects(text):
    return dict(kv.split("=") for kv in text.split())


def judge(r, users):
    """(problems, facts) for the boot's output."""
    out, p = r.output, []
    if not r.ok:
        p.append("the machine did not finish cleanly: %s" % r.status)
    snaps = OBJECTS_RE.findall(out)
    done = DONE_RE.findall(out)
    rounds = sum(int(n) for _, n in done)
    facts = {"rounds": rounds, "leaks": 0, "mem": (0, 0),
             "reversals": len(WITNESS_RE.findall(out))}
    if len(done) != users or any(int(n) == 0 for _, n in done):
        p.append("%d of %d users finished rounds" % (sum(1 for _, n in done if int(n)), users))
    p += FAIL_RE.findall(out)[:5]
    if len(snaps) != 2 or "soak-finished" not in out:
        p.append("no counts before and after (soakstat printed %d)" % len(snaps))
        return p, facts
    before, after = parse_objects(snaps[0][0]), parse_objects(snaps[1][0])
    leaked = ["%s %s -> %s" % (k, before[k], after.get(k)) for k in before
              if before[k] != after.get(k)]
    facts["leaks"] = len(leaked)
    if leaked:
        p.append("kernel objects leaked: " + ", ".join(leaked))
    mem0, mem1 = int(snaps[0][1]), int(snaps[1][1])
    facts["mem"] = (mem0, mem1)
    if mem1 < mem0 * (1 - MEM_SLACK):
        p.append("memory available %d kB after, %d kB before" % (mem1, mem0))
    p += WITNESS_RE.findall(out)[:3]
    return p, facts


def soak(duration, users, machine, opts, keep=None, report=print, boot=tempest.boot):
    """Run one soak; returns (problems, facts)."""
    tmp = tempfile.mkdtemp(prefix="soak-", dir=os.environ.get("TMPDIR"))
    try:
        img = make_image(tmp, duration, users)
        boot_opts = ("root=vda poweroff witness=on " + opts).strip()
        r = boot(machine, boot_opts, timeout=duration + 600, disk_images=[img],
                         keep=keep)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    problems, facts = judge(r, users)
    for line in problems:
        report("soak: FAIL %s" % line)
    report("soak: %d s on %s, %d users, %d rounds: leaks %d, memory %d->%d kB, "
           "reversals %d: %s" % (duration, machine, users, facts["rounds"], facts["leaks"],
                                 facts["mem"][0], facts["mem"][1], facts["reversals"],
                                 "FAILED" if problems else "ok"))
    return problems, facts


def main():
    p = argparse.ArgumentParser(description="A mixed multi-user load for a set time; then no "
                                "kernel object leaked, memory came back, no lock-order reversal.")
    p.add_argument("--duration", type=int, default=600, help="seconds of load (default 600)")
    p.add_argument("--users", type=int, default=16, help="users at once, 1..64 (default 16)")
    p.add_argument("--machine", default="svr4mp")
    p.add_argument("--opts", default="", help="more kernel options")
    p.add_argument("--keep", help="a directory for the console and log")
    args = p.parse_args()
    if not 1 <= args.users <= 64 or args.duration < 1:
        print("soak: --users takes 1..64 and --duration a positive count", file=sys.stderr)
        return 2
    try:
        problems, _ = soak(args.duration, args.users, args.machine, args.opts, args.keep)
    except (RuntimeError, MachineError) as e:
        print("soak: %s" % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("soak: interrupted", file=sys.stderr)
        return 130
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
