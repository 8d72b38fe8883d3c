#!/usr/bin/env python3
"""Host tests of GAEDE's prepare and scaling (tools/harness/macro_gaede.py),
no emulator: the home disks are S5 images that fsck.s5 finds clean, with
the users' homes spread over them in turn, every home file owned by its
user (read back with the independent reader tests/unit/s5image.py), the
scripts on disk 0 (read back with s5cat), the command and users as the
harness interface says; bad user counts refused; scaling computed as the
paper does, T(n) / (n x T(1)), and printed by `macro_gaede.py scaling`;
and bench/gaede itself run on the host's Linux for 5 s by two users
(under unshare -m, with a passwd naming them bind-mounted on /etc/passwd;
skipped, with a SKIP line, when not root): every user finishes scripts,
none fails, and their files are theirs.

    python3 tests/unit/test_gaede_prepare.py [-v]

Prints "PASS name" or "FAIL name: why" per case and ends with
"N passed, N failed"; exit status 1 when anything failed.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "harness"))
import macro_gaede  # noqa: E402
from s5image import IFDIR, IFMT, Image  # noqa: E402

TOOLS = os.path.join(ROOT, "build", "tools")
FSCK = os.path.join(TOOLS, "fsck.s5")
S5CAT = os.path.join(TOOLS, "s5cat")
RESULTS = {"passed": 0, "failed": 0}
VERBOSE = "-v" in sys.argv


def report(name, why=None):
    if why is None:
        RESULTS["passed"] += 1
        print("PASS %s" % name, flush=True)
    else:
        RESULTS["failed"] += 1
        print("FAIL %s: %s" % (name, why), flush=True)


def case(name, fn, *args):
    try:
        why = fn(*args)
    except Exception as e:  # a broken case reports, the others still run
        why = "%s: %s" % (type(e).__name__, e)
    report(name, why)


def point(**kw):
    p = {"workload": "gaede", "machine": "svr4mp", "cpus": 2, "users": "2n", "seconds": 30,
         "kernel": "tempest", "options": ""}
    p.update(kw)
    return p


def load(image):
    with open(image, "rb") as f:
        return Image(f.read())


def check_layout(spec, n, ndisks):
    """n users u01.. on ndisks disks, user i on disk i mod ndisks."""
    if len(spec["users"]) != n:
        return "%d users, not %d" % (len(spec["users"]), n)
    if len(spec["disks"]) != ndisks:
        return "%d disks, not %d" % (len(spec["disks"]), ndisks)
    for i, u in enumerate(spec["users"]):
        want = {"name": "u%02d" % (i + 1), "uid": 1001 + i, "gid": 100,
                "home": "/home/d%d/u%02d" % (i % ndisks, i + 1)}
        if u != want:
            return "user %d is %r, not %r" % (i, u, want)
    for d, disk in enumerate(spec["disks"]):
        if (disk["fs"], disk["mount"], disk["rw"]) != ("s5", "/home/d%d" % d, True):
            return "disk %d is %r" % (d, disk)
        if not os.path.isfile(disk["image"]):
            return "disk %d's image %s is missing" % (d, disk["image"])
    return None


def check_clean(spec):
    for disk in spec["disks"]:
        r = subprocess.run([FSCK, "-n", disk["image"]], capture_output=True, text=True)
        if r.returncode != 0:
            return "fsck.s5 -n %s: exit %d: %s" % (disk["image"], r.returncode,
                                                   r.stdout.strip()[-300:])
    return None


def owned_tree(img, ino, path, uid, gid, seen):
    """Every inode under directory ino owned by uid:gid, or why not."""
    di = img.inode(ino)
    if (di["uid"], di["gid"]) != (uid, gid):
        return "%s is owned by %d:%d, not %d:%d" % (path, di["uid"], di["gid"], uid, gid)
    seen.append(path)
    if di["mode"] & IFMT != IFDIR:
        return None
    for _slot, child, name, _off in img.entries(ino):
        if child and name not in (b".", b".."):
            why = owned_tree(img, child, path + "/" + name.decode(), uid, gid, seen)
            if why:
                return why
    return None


def check_homes(spec):
    images = [load(d["image"]) for d in spec["disks"]]
    for u in spec["users"]:
        d = int(u["home"].split("/")[2][1:])
        img = images[d]
        ino = img.namei(u["name"])
        if not ino:
            return "%s is not on disk %d" % (u["name"], d)
        seen = []
        why = owned_tree(img, ino, u["home"], u["uid"], u["gid"], seen)
        if why:
            return why
        for rel in ("src/notes.txt", "src/prog.c", "src/tree/a/f0.txt", "work", "tmp"):
            if not img.namei("%s/%s" % (u["name"], rel)):
                return "%s/%s is missing" % (u["home"], rel)
        if VERBOSE:
            print("  %s: %d files owned by %d" % (u["home"], len(seen), u["uid"]))
    for d, img in enumerate(images):
        root = img.inode(2)
        if (root["uid"], root["mode"] & 0o777) != (0, 0o755):
            return "disk %d's root is uid %d mode %o" % (d, root["uid"], root["mode"] & 0o777)
    return None


def check_scripts(spec):
    """The mix is on disk 0 (and only there), byte for byte, and the
    command points gaede at it."""
    image = spec["disks"][0]["image"]
    listing = subprocess.run([S5CAT, image, "scripts"], capture_output=True, text=True)
    names = sorted(line.split()[-1] for line in listing.stdout.splitlines()
                   if line.split()[-1].endswith(".sh"))
    want = sorted(n for n in os.listdir(macro_gaede.SCRIPTS) if n.endswith(".sh"))
    if listing.returncode != 0 or names != want:
        return "disk 0's scripts are %r, not %r" % (names, want)
    for n in want:
        got = subprocess.run([S5CAT, image, "scripts/" + n], capture_output=True).stdout
        with open(os.path.join(macro_gaede.SCRIPTS, n), "rb") as f:
            if got != f.read():
                return "scripts/%s differs from bench/gaede_scripts/%s" % (n, n)
    for disk in spec["disks"][1:]:
        if load(disk["image"]).namei("scripts"):
            return "%s has a scripts directory too" % disk["image"]
    return None


def check_command(spec, n, seconds):
    want = "/bench/gaede -u %d -t %d -s /home/d0/scripts" % (n, seconds)
    if spec["command"] != want:
        return "command %r, not %r" % (spec["command"], want)
    return None


def refused(p):
    with tempfile.TemporaryDirectory(dir=os.path.join(ROOT, "build")) as tmp:
        try:
            macro_gaede.prepare(tmp, p)
        except macro_gaede.PrepareError as e:
            return None if str(e) else "an empty reason"
        return "users=%r was accepted" % (p["users"],)


def sample_records():
    def rec(cpus, sph, status="ok", workload="gaede", optset="syncwrites=on"):
        return {"point": {"workload": workload, "kernel": "tempest", "machine": "svr4mp",
                          "cpus": cpus, "optset": optset, "accel": "tcg"},
                "status": status, "result": {"users": 2 * cpus, "scripts_per_hour": sph}}
    return [rec(1, 100.0), rec(1, 120.0), rec(2, 180.0), rec(4, 400.0),
            rec(4, 1.0, status="failed"), rec(2, 999.0, workload="pmake"),
            rec(2, 50.0, optset="syncwrites=off")]


def check_scaling_command():
    """macro_gaede.py scaling RESULTS prints the table of runs/*.json."""
    with tempfile.TemporaryDirectory(dir=os.path.join(ROOT, "build")) as out:
        os.makedirs(os.path.join(out, "runs"))
        for i, r in enumerate(sample_records()):
            with open(os.path.join(out, "runs", "%03d.json" % i), "w") as f:
                json.dump(r, f)
        tool = os.path.join(ROOT, "tools", "harness", "macro_gaede.py")
        r = subprocess.run([sys.executable, tool, "scaling", out], capture_output=True, text=True)
    rows = [line.split() for line in r.stdout.splitlines()[1:]]
    two = [row for row in rows if row[2] == "syncwrites=on" and row[4] == "2"]
    if r.returncode != 0 or len(rows) != 4 or len(two) != 1 or two[0][7] != "0.818":
        return "exit %d: %r %s" % (r.returncode, r.stdout, r.stderr.strip())
    return None


def check_scaling():
    rows = macro_gaede.scaling(sample_records())
    got = {(r["optset"], r["cpus"]): r["scaling"] for r in rows}
    want = {("syncwrites=on", 1): 1.0, ("syncwrites=on", 2): 180.0 / (2 * 110.0),
            ("syncwrites=on", 4): 400.0 / (4 * 110.0), ("syncwrites=off", 2): None}
    if set(got) != set(want):
        return "rows %r, not %r" % (sorted(got), sorted(want))
    for k, v in want.items():
        if (v is None) != (got[k] is None) or (v is not None and abs(got[k] - v) > 1e-9):
            return "scaling at %r is %r, not %r" % (k, got[k], v)
    return None


GAEDE = os.path.join(ROOT, "build", "bench", "gaede")


def host_homes(top, n):
    """n users' homes under top and a passwd naming them; the users."""
    users = macro_gaede.plan_users(n, 2)
    with open("/etc/passwd") as f:
        passwd = f.read()
    for u in users:
        home = top + u["home"]
        macro_gaede.home_files(home, macro_gaede.random.Random(u["uid"]))
        for d, dirs, files in os.walk(home):
            for x in [d] + [os.path.join(d, y) for y in dirs + files]:
                os.chown(x, u["uid"], u["gid"])
        passwd += "%s:x:%d:%d::%s:/bin/sh\n" % (u["name"], u["uid"], u["gid"], home)
    for d, dirs, _files in os.walk(top):
        os.chmod(d, 0o755)
    with open(os.path.join(top, "passwd"), "w") as f:
        f.write(passwd)
    return users


def host_run_skip():
    """Why gaede cannot run on this host (None: it can)."""
    if os.geteuid() != 0:
        return "not root (gaede's users need setuid)"
    r = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if r.returncode != 0:
        return "unshare -m is not allowed here"
    return None


def check_host_run(top, users, seconds):
    """gaede itself on the host's Linux: every user finishes scripts,
    none fails, and the users' new files are theirs."""
    inner = 'mount --bind "$1" /etc/passwd && shift && exec "$@"'
    cmd = ["unshare", "-m", "sh", "-c", inner, "sh", os.path.join(top, "passwd"), GAEDE,
           "-u", str(len(users)), "-t", str(seconds), "-s", macro_gaede.SCRIPTS]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 120)
    line = r.stdout.strip()
    if r.returncode != 0 or not line.startswith("bench gaede users="):
        return "exit %d: %s %s" % (r.returncode, line, r.stderr.strip()[-300:])
    f = dict(kv.split("=", 1) for kv in line.split()[2:])
    if int(f["failed"]) or int(f["scripts_min"]) < 1:
        return "%s (%s)" % (line, r.stderr.strip()[-300:])
    if not seconds <= float(f["elapsed_s"]) < seconds + 60:
        return "elapsed_s=%s for -t %d" % (f["elapsed_s"], seconds)
    # elapsed_s is printed to 0.01 s: the rate from it is that close.
    rate = int(f["scripts"]) * 3600 / float(f["elapsed_s"])
    if abs(float(f["scripts_per_hour"]) - rate) > 0.1 + rate * 0.006 / float(f["elapsed_s"]):
        return "scripts_per_hour=%s, not %.1f" % (f["scripts_per_hour"], rate)
    for u in users:
        st = os.stat(os.path.join(top + u["home"], "work", "notes.txt"))
        if (st.st_uid, st.st_gid) != (u["uid"], u["gid"]):
            return "%s's work/notes.txt is owned by %d:%d" % (u["name"], st.st_uid, st.st_gid)
    if VERBOSE:
        print("  " + line)
    return None


def build_gaede():
    """make -C bench builds bench/gaede (make check does not build bench/)."""
    r = subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "bench"), "../build/bench/gaede"],
                       capture_output=True, text=True)
    if r.returncode != 0 or not os.access(GAEDE, os.X_OK):
        return "make -C bench ../build/bench/gaede failed: %s" % (r.stdout + r.stderr)[-300:]
    return None


def host_run():
    why = host_run_skip()
    if why:
        print("SKIP host-run: %s" % why)
        return
    case("build", build_gaede)
    top = tempfile.mkdtemp(prefix="gaede-host-")
    try:
        users = host_homes(top, 2)
        case("host-run", check_host_run, top, users, 5)
    finally:
        shutil.rmtree(top, ignore_errors=True)


def main():
    if "--help" in sys.argv or "-h" in sys.argv:
        print(__doc__.strip())
        return 0
    for tool in (macro_gaede.MKFS_S5, FSCK, S5CAT):
        if not os.access(tool, os.X_OK):
            print("FAIL tools: %s is missing (run 'make tools')" % tool)
            print("0 passed, 1 failed")
            return 1
    os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gaede-", dir=os.path.join(ROOT, "build")) as tmp:
        # 2 CPUs, 2 users a CPU: 4 users on 4 of svr4mp's disks.
        spec = macro_gaede.prepare(tmp, point())
        case("layout/4users", check_layout, spec, 4, 4)
        case("fsck", check_clean, spec)
        case("homes-owned", check_homes, spec)
        case("scripts", check_scripts, spec)
        case("command", check_command, spec, 4, 30)
    with tempfile.TemporaryDirectory(prefix="gaede-", dir=os.path.join(ROOT, "build")) as tmp:
        # More users than disks: all 8 disks, two homes on some.
        spec = macro_gaede.prepare(tmp, point(users=11, seconds=5))
        case("layout/11users-8disks", check_layout, spec, 11, 8)
        case("command/at-least-20s", check_command, spec, 11, 20)
        case("homes-owned/shared-disks", check_homes, spec)
        case("fsck/shared-disks", check_clean, spec)
    for bad in ("0", 0, "x", "100", "-2n"):
        case("refused/users=%s" % bad, refused, point(users=bad))
    case("scaling", check_scaling)
    case("scaling/command", check_scaling_command)
    host_run()
    print("%d passed, %d failed" % (RESULTS["passed"], RESULTS["failed"]))
    return 1 if RESULTS["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
