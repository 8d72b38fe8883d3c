"""GAEDE, the multi-user workload of seed 001 (issue 21): what a macro
point of workload "gaede" needs (prepare), and the paper's scaling
figure computed from the records (scaling).

prepare(tmp, point) follows the interface of /work/scratch/macro-interface.md
(tools/harness/macro.py calls it):

  * the users u01..uNN, uid 1001.., gid 100 ("users"), N = point["users"]
    (a number, or "Nn": N per CPU of the point; default 2 per CPU);
  * the home disks: one S5 image per disk, made with build/tools/mkfs.s5,
    as many as the machine has disks (svr4mp: 8 on 4 controllers) but no
    more than there are users; user i lives on disk i mod D, at
    /home/dD/uNN, and starts with the same files (src/notes.txt,
    src/prog.c, a small tree src/tree/, empty work/ and tmp/), all owned
    by its uid and gid 100 (mkfs.s5 -o);
  * the script mix, bench/gaede_scripts/*.sh, on disk 0 as /home/d0/scripts;
  * the command "/bench/gaede -u N -t SECONDS -s /home/d0/scripts", SECONDS
    the point's "seconds" (default 60) but at least 20: under TCG a script
    takes up to a few seconds, and a shorter run would count mostly the
    script cut off at its end.

The images are S5 with names of at most 14 bytes and 16-bit ids, so
Linux's sysv.ko mounts them read-write as well (the Linux peer).

scaling(records) is the figure of the paper's Figure 5: for each kernel,
machine, option set and accelerator, T(n) / (n x T(1)), T the median
scripts per hour over the repeats that succeeded at n CPUs.  It returns
one row per CPU count (see its doc string); the report may call it or
compute the same from the records' "scripts_per_hour".

Every failure of prepare raises PrepareError with one line saying why.

As a command (for trying a point by hand, and for a sweep's results):

    macro_gaede.py prepare DIR [--users N|Nn] [--cpus C] [--machine M] [--seconds S]
    macro_gaede.py scaling RESULTS_DIR

prepare makes the images in DIR and prints the point's dict as JSON;
scaling prints the scaling table of a sweep's gaede records (runs/*.json).
Every failure is one line on standard error and exit status 1.
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MKFS_S5 = os.path.join(ROOT, "build", "tools", "mkfs.s5")
SCRIPTS = os.path.join(ROOT, "bench", "gaede_scripts")
sys.path.insert(0, os.path.join(ROOT, "tests"))

FIRST_UID = 1001
GID = 100                       # the group "users"
DEFAULT_USERS_PER_CPU = 2
DEFAULT_SECONDS = 60
MIN_SECONDS = 20                # a script takes up to a few seconds under TCG
DEFAULT_DISKS = 8               # svr4mp's, when the machine is unknown
SCRIPT_DIR = "scripts"          # on disk 0
BASE_KIB = 4096                 # each image: this much, plus PER_USER_KIB a user
PER_USER_KIB = 2048

WORDS = ("the lock mutex sleep wakeup inode vnode buffer segmap cache hash queue "
         "disk page fault process processor kernel spin contention throughput "
         "scaling user script file directory name lookup write read").split()

PROG_C = r"""/* GAEDE's compile script: counts a file's lines, words and bytes. */
#include <ctype.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    long lines = 0, words = 0, bytes = 0;
    int c, in_word = 0;
    FILE *f = argc > 1 ? fopen(argv[1], "r") : stdin;

    if (!f) {
        perror(argv[1]);
        return 1;
    }
    while ((c = getc(f)) != EOF) {
        bytes++;
        lines += c == '\n';
        if (isspace(c))
            in_word = 0;
        else if (!in_word) {
            in_word = 1;
            words++;
        }
    }
    printf("lines %ld\nwords %ld\nbytes %ld\n", lines, words, bytes);
    return 0;
}
"""


class PrepareError(Exception):
    """A failure of prepare, in one line."""


def user_count(point):
    """point["users"] as a number: N, or "Nn" for N per CPU."""
    want = point.get("users")
    if want is None or want == "":
        want = "%dn" % DEFAULT_USERS_PER_CPU
    text = str(want).strip()
    try:
        if text.endswith("n"):
            n = int(text[:-1]) * int(point.get("cpus", 1))
        else:
            n = int(text)
    except ValueError:
        raise PrepareError("users=%r is not N or Nn (N per CPU)" % (want,))
    if not 1 <= n <= 99:
        raise PrepareError("users=%r gives %d users (1..99 can be named u01..u99)" % (want, n))
    return n


def machine_disks(point):
    """The number of disks of the point's machine (svr4mp: 8)."""
    try:
        import machines
        return machines.machine(point.get("machine", "svr4mp")).disks[0] or 1
    except Exception:  # an unknown machine: the paper's count
        return DEFAULT_DISKS


def notes_text(rng):
    """A page of notes: words, a few comment lines, enough lines to edit."""
    lines = []
    for i in range(120):
        if i % 15 == 3:
            lines.append("# note %d" % i)
        else:
            lines.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12))))
    return "\n".join(lines) + "\n"


def home_files(home, rng):
    """Writes a user's starting files into the directory home; the paths
    written, relative to it."""
    files = {"src/notes.txt": notes_text(rng), "src/prog.c": PROG_C}
    for d in ("a", "b", "c"):
        for k in range(4):
            files["src/tree/%s/f%d.txt" % (d, k)] = notes_text(rng)[:1500]
    made = []
    for sub in ("src", "src/tree", "src/tree/a", "src/tree/b", "src/tree/c", "work", "tmp"):
        os.makedirs(os.path.join(home, sub), exist_ok=True)
        made.append(sub)
    for rel, text in sorted(files.items()):
        with open(os.path.join(home, rel), "w") as f:
            f.write(text)
        made.append(rel)
    return made


def copy_scripts(top):
    """The script mix into top/scripts (owned by root, readable by all)."""
    dst = os.path.join(top, SCRIPT_DIR)
    os.makedirs(dst)
    names = sorted(n for n in os.listdir(SCRIPTS) if n.endswith(".sh"))
    if not names:
        raise PrepareError("no scripts in %s" % SCRIPTS)
    for n in names:
        shutil.copy(os.path.join(SCRIPTS, n), dst)
        os.chmod(os.path.join(dst, n), 0o755)


def make_image(stage, owners, image, kib):
    """mkfs.s5 -d stage -o owners image kib, or PrepareError."""
    if not os.path.exists(MKFS_S5):
        raise PrepareError("%s is missing (run 'make tools')" % MKFS_S5)
    try:
        r = subprocess.run([MKFS_S5, "-d", stage, "-o", owners, image, "%dK" % kib],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           stdin=subprocess.DEVNULL, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise PrepareError("mkfs.s5 %s: %s" % (image, e))
    if r.returncode != 0:
        raise PrepareError("mkfs.s5 %s failed: %s"
                           % (image, (r.stderr.strip().splitlines() or ["?"])[-1]))


def make_disk(tmp, d, members):
    """Disk d's image with the homes of members [(index, user dict)]."""
    stage = os.path.join(tmp, "gaede-stage%d" % d)
    shutil.rmtree(stage, ignore_errors=True)
    os.makedirs(stage)
    if d == 0:
        copy_scripts(stage)
    owners = []
    for i, u in members:
        made = home_files(os.path.join(stage, u["name"]), random.Random(u["uid"]))
        owners.append("%s %d %d" % (u["name"], u["uid"], u["gid"]))
        owners += ["%s/%s %d %d" % (u["name"], rel, u["uid"], u["gid"]) for rel in made]
    owners_file = os.path.join(tmp, "gaede-owners%d" % d)
    with open(owners_file, "w") as f:
        f.write("\n".join(owners) + "\n")
    image = os.path.join(tmp, "gaede-d%d.img" % d)
    make_image(stage, owners_file, image, BASE_KIB + PER_USER_KIB * len(members))
    shutil.rmtree(stage, ignore_errors=True)
    return image


def plan_users(n, ndisks):
    """The users: u01.., uid 1001.., gid 100, user i on disk i mod ndisks."""
    return [{"name": "u%02d" % (i + 1), "uid": FIRST_UID + i, "gid": GID,
             "home": "/home/d%d/u%02d" % (i % ndisks, i + 1)} for i in range(n)]


def prepare(tmp, point):
    """The disks, users, setup and command of one gaede point (see the
    module's doc string)."""
    n = user_count(point)
    ndisks = max(1, min(machine_disks(point), n))
    seconds = max(MIN_SECONDS, int(round(float(point.get("seconds") or DEFAULT_SECONDS))))
    users = plan_users(n, ndisks)
    disks = []
    for d in range(ndisks):
        members = [(i, u) for i, u in enumerate(users) if i % ndisks == d]
        disks.append({"image": make_disk(tmp, d, members), "fs": "s5",
                      "mount": "/home/d%d" % d, "rw": True})
    return {
        "disks": disks,
        "users": users,
        "setup": "test -r /home/d0/%s/edit.sh" % SCRIPT_DIR,
        "command": "/bench/gaede -u %d -t %d -s /home/d0/%s" % (n, seconds, SCRIPT_DIR),
    }


def _throughput(record):
    result = record.get("result") or {}
    value = result.get("scripts_per_hour", record.get("value"))
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def cpu_per_script(record):
    """The guest's CPU time per finished script (ms: user, system) and
    its idle share, from the record's guest_cpu; {} when it has none."""
    cpu = record.get("guest_cpu") or {}
    scripts = (record.get("result") or {}).get("scripts")
    try:
        scripts = float(scripts)
        total = cpu["user_s"] + cpu["system_s"] + cpu["idle_s"]
    except (KeyError, TypeError, ValueError):
        return {}
    if scripts <= 0 or total <= 0:
        return {}
    return {"user_ms": 1000 * cpu["user_s"] / scripts,
            "system_ms": 1000 * cpu["system_s"] / scripts,
            "idle_share": cpu["idle_s"] / total}


CPU_FIELDS = ("user_ms", "system_ms", "idle_share")


def scaling(records):
    """The paper's scaling, T(n) / (n x T(1)), from gaede records.

    Records of other workloads and failed ones are skipped.  Returns rows
    sorted by group then CPUs, each a dict: kernel, machine, optset,
    accel, cpus, users (the median over the repeats), scripts_per_hour
    (T(n), the median over the repeats), runs, scaling (None when the
    group has no 1-CPU point), and the medians of the guest's CPU time
    per script, user_ms and system_ms, and of its idle_share (None for
    records without guest_cpu): a script's user time should not grow with
    the CPUs, so growth there is the emulator's, not the kernel's."""
    groups = {}
    for r in records:
        p = r.get("point") or {}
        t = _throughput(r)
        if p.get("workload") != "gaede" or r.get("status") != "ok" or t is None:
            continue
        key = (p.get("kernel"), p.get("machine"), p.get("optset", ""), p.get("accel"))
        users = (r.get("result") or {}).get("users", p.get("users"))
        groups.setdefault(key, {}).setdefault(int(p.get("cpus", 1)), []).append(
            (t, users, cpu_per_script(r)))
    rows = []
    for key in sorted(groups, key=lambda k: tuple(str(x) for x in k)):
        by_cpus = groups[key]
        medians = {n: statistics.median(run[0] for run in runs) for n, runs in by_cpus.items()}
        t1 = medians.get(1)
        for n in sorted(by_cpus):
            row = {"kernel": key[0], "machine": key[1], "optset": key[2], "accel": key[3],
                   "cpus": n, "users": _median_or_none(run[1] for run in by_cpus[n]),
                   "scripts_per_hour": medians[n], "runs": len(by_cpus[n]),
                   "scaling": medians[n] / (n * t1) if t1 else None}
            for f in CPU_FIELDS:
                row[f] = _median_or_none(run[2][f] for run in by_cpus[n] if f in run[2])
            rows.append(row)
    return rows


def _median_or_none(values):
    try:
        return statistics.median(float(v) for v in values if v is not None)
    except (statistics.StatisticsError, ValueError, TypeError):
        return None


def _figure(value, form):
    return "-" if value is None else form % value


def print_scaling(rows):
    print("%-8s %-8s %-20s %-6s %4s %6s %12s %8s %5s %9s %9s %5s"
          % ("kernel", "machine", "optset", "accel", "cpus", "users", "scripts/h", "scaling",
             "runs", "user-ms/s", "sys-ms/s", "idle"))
    for r in rows:
        print("%-8s %-8s %-20s %-6s %4d %6s %12.1f %8s %5d %9s %9s %5s"
              % (r["kernel"], r["machine"], r["optset"] or "-", r["accel"], r["cpus"],
                 _figure(r["users"], "%g"), r["scripts_per_hour"],
                 _figure(r["scaling"], "%.3f"), r["runs"], _figure(r["user_ms"], "%.0f"),
                 _figure(r["system_ms"], "%.0f"), _figure(r["idle_share"], "%.2f")))


def main(argv=None):
    p = argparse.ArgumentParser(description="GAEDE's points: prepare one by hand, or print "
                                "the paper's scaling of a sweep's results.")
    sub = p.add_subparsers(dest="what", required=True)
    pp = sub.add_parser("prepare", help="make a point's images in DIR, print its dict as JSON")
    pp.add_argument("dir")
    pp.add_argument("--users", default="%dn" % DEFAULT_USERS_PER_CPU, help="N or Nn (default 2n)")
    pp.add_argument("--cpus", type=int, default=1, help="the point's CPUs (default 1)")
    pp.add_argument("--machine", default="svr4mp", help="the machine preset (default svr4mp)")
    pp.add_argument("--seconds", type=float, default=DEFAULT_SECONDS, help="default 60")
    sp = sub.add_parser("scaling", help="the scaling table of a results directory's gaede records")
    sp.add_argument("results")
    args = p.parse_args(argv)
    try:
        if args.what == "prepare":
            os.makedirs(args.dir, exist_ok=True)
            point = {"workload": "gaede", "machine": args.machine, "cpus": args.cpus,
                     "users": args.users, "seconds": args.seconds}
            print(json.dumps(prepare(os.path.abspath(args.dir), point), indent=2))
        else:
            import records
            if not os.path.isdir(os.path.join(args.results, "runs")):
                raise PrepareError("%s has no runs/ directory" % args.results)
            print_scaling(scaling(records.load(args.results)))
    except (PrepareError, OSError, ValueError) as e:
        sys.exit("macro_gaede: %s" % e)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
