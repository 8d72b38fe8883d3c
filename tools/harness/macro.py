"""The harness's "macro" kind: workloads that run Debian's own programs
(gcc, make, bash, sed ...) on the Debian root with extra disks, on
Tempest and on the Linux peer alike (issue 21; the interface is fixed in
the lead's note, summarised here).

A workload is a prepare function, PREPARE[name](tmp, point) -> dict:

    disks    [{"image": PATH, "fs": "s5"|"ufs", "mount": "/dir", "rw": True}, ...]
    users    [{"name": "u01", "uid": 1001, "gid": 100, "home": "/home/d0/u01"}, ...]
    setup    shell commands run as root after mounting, before the timed command
    command  the timed command; prints one line "bench NAME key=value ..."
             and exits 0, or "bench NAME error=WHAT ..." and exits 1

pmake and pmakeind are in macro_pmake.py; gaede in macro_gaede.py (from
the gaede branch: imported if present); sysbench's four tests in
macro_sysbench.py; redis (redis-benchmark over loopback) in
macro_redis.py; pgbench (PostgreSQL on tmpfs) in macro_pgbench.py.

One boot runs a batch of macro points (run_batch's spec, kind "macro"):

  * The root is Debian's UFS image (tools/debian_root.py) made for the
    batch, with build/bench/ copied to /bench, each point's two scripts
    under /bench/points/ (ID.sh: the setup, then the command in ID.cmd),
    every mount point made, and the points' users in /etc/passwd and
    /etc/group.  The points' disks follow it, in point order: vda is the
    root, then vdb, vdc ...
  * Tempest boots it with root=vda (and maxcpus=N and the option set);
    /etc/rc.run mounts a point's disks (`mount -t s5` or `-t ufs`), runs
    ID.sh between the harness's marker lines, the command under
    `lockstat -j -d` (its JSON printed after it), and unmounts them.
  * The Linux peer (maxcpus=N only) loads sysv.ko and ufs.ko, mounts the
    same UFS image read-only (ufstype=44bsd) on /deb with /proc, /dev and
    a tmpfs /tmp inside, mounts each point's disks under /deb (S5 with
    sysv, read-write; UFS read-only) and runs ID.sh in `chroot /deb`.
    The mount points exist in the image, which Linux cannot write.

The runner (runner.py) makes one record per point from the text between
the markers, as for user workloads.  Every failure of a point is its
record's reason; a batch that cannot be prepared fails all its points.

Sprite's two measures of a macro benchmark (seed 003, section 6) are
sprite_measures() below; the report calls it with the elapsed times of
one workload at each CPU count.
"""

import os
import shutil
import sys
import tempfile

from . import macro_pgbench
from . import macro_pmake
from . import macro_redis
from . import macro_sysbench

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "build", "bench")
BEGIN = "@@harness begin "
ENV = ("export PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME=/root LC_ALL=C "
       "TMPDIR=/tmp")
# The guest's CPU times around a point's command: /proc/stat's "cpu"
# line, the same format on both kernels (runner.guest_cpu reads them).
CPU_LINE = 'echo "@@cpu %s $(head -n 1 /proc/stat)"'
# The Linux peer's preamble: the modules, then Debian's root on /deb.
LINUX_ROOT = (
    "/modules/load > /dev/null || { echo 'macro: cannot load the modules'; exit 90; }\n"
    "mkdir -p /deb && mount -t ufs -o ro,ufstype=44bsd /dev/vda /deb "
    "|| { echo 'macro: cannot mount the Debian root'; exit 91; }\n"
    "mount -t proc proc /deb/proc; mount -o bind /dev /deb/dev; "
    "mount -t tmpfs -o mode=1777 tmpfs /deb/tmp\n")

PREPARE = {"pmake": macro_pmake.prepare_pmake, "pmakeind": macro_pmake.prepare_pmakeind}
PREPARE.update(macro_sysbench.PREPARE)
PREPARE.update(macro_redis.PREPARE)
PREPARE.update(macro_pgbench.PREPARE)
try:
    from . import macro_gaede               # the gaede branch, at merge
    PREPARE["gaede"] = macro_gaede.prepare
except ImportError:
    pass

# Workloads whose work grows with the CPU count (one copy, one user set
# per processor): their ideal elapsed-time ratio is 1, not 1/n.
SCALED = {"pmakeind": True, "gaede": True, "pmake": False}


class MacroError(Exception):
    """A batch that cannot be prepared, in one line."""


def sprite_measures(times, scaled):
    """Sprite's measures (seed 003, 6.1 and 6.2) from {cpus: elapsed
    seconds} of one workload.  For each CPU count n:

      elapsed_ratio  T(n) / T(1): the time n processors take for their
                     work over one processor's time for its work (Figure 2;
                     ideal 1 for a scaled workload, 1/n for pmake's fixed
                     one); speedup is its inverse for a fixed workload
      units          throughput in processor units: work(n) / T(n) over
                     1 / T(1), with work(n) = n when scaled, else 1
      incremental    incremental throughput per processor: units(n) -
                     units(m) for the largest measured m < n (m = 0 has
                     0 units), divided by n - m when counts are skipped
                     (Figure 4; ideal 1)

    Returns {n: {"elapsed_ratio", "speedup", "units", "incremental"}};
    without a 1-CPU time the ratios are None."""
    out = {}
    t1 = times.get(1)
    prev_n, prev_units = 0, 0.0
    for n in sorted(times):
        tn = times[n]
        work = n if scaled else 1
        units = (work / tn) * t1 if t1 and tn else None
        row = {"elapsed_ratio": tn / t1 if t1 and tn else None,
               "speedup": (work * t1 / tn) if t1 and tn else None,
               "units": units, "incremental": None}
        if units is not None and prev_units is not None:
            row["incremental"] = (units - prev_units) / (n - prev_n)
        prev_n, prev_units = n, units
        out[n] = row
    return out


def sprite_rows(records):
    """Sprite's measures for a sweep's records (runs/*.json as dicts): the
    ok records of each workload in SCALED whose result has an elapsed_s,
    grouped by kernel, machine, option set and workload, the median
    (the upper of an even count) elapsed_s at each CPU count; one
    row per group and count: {"kernel", "machine", "optset", "workload",
    "cpus", "elapsed_s", and sprite_measures' four fields}."""
    groups = {}
    for r in records:
        p = r["point"]
        if (r.get("status") != "ok" or p["workload"] not in SCALED
                or "elapsed_s" not in (r.get("result") or {})):
            continue
        key = (p["kernel"], p["machine"], p["optset"], p["workload"])
        groups.setdefault(key, {}).setdefault(p["cpus"], []).append(r["result"]["elapsed_s"])
    rows = []
    for (kernel, machine, optset, workload), by_cpus in sorted(groups.items()):
        times = {n: sorted(v)[len(v) // 2] for n, v in by_cpus.items()}
        for n, m in sorted(sprite_measures(times, SCALED[workload]).items()):
            rows.append(dict(m, kernel=kernel, machine=machine, optset=optset,
                             workload=workload, cpus=n, elapsed_s=times[n]))
    return rows


# ---- preparing a batch -------------------------------------------------------

def prepare_points(tmp, points):
    """Each point's prepare dict, with its disks given device names (vdb
    on; vda is the root): [(point, prep)]."""
    out, letter = [], 1
    for i, p in enumerate(points):
        if p["workload"] not in PREPARE:
            raise MacroError("no prepare function for workload %s" % p["workload"])
        d = os.path.join(tmp, "p%d" % i)
        os.makedirs(d, exist_ok=True)
        try:
            prep = PREPARE[p["workload"]](d, p)
        except Exception as e:      # a prepare's own failure, in one line
            raise MacroError("%s: prepare: %s" % (p["workload"], e))
        for disk in prep.get("disks", []):
            if letter > 25:
                raise MacroError("more than 25 disks in one batch")
            disk["dev"] = "/dev/vd" + chr(ord("a") + letter)
            letter += 1
        out.append((p, prep))
    return out


def point_script(p, prep, kernel):
    """ID.sh: the environment, the setup (quiet unless it fails) and the
    command (on Tempest under lockstat -j -d, the JSON printed after it)."""
    name = p["workload"]
    lines = ["#!/bin/sh", "# %s (tools/harness/macro.py)" % p["id"], ENV, "cd /"]
    if prep.get("setup"):
        lines.append("( %s ) > /tmp/macro-setup.log 2>&1 || { echo 'bench %s error=setup'; "
                     "tail -5 /tmp/macro-setup.log; exit 1; }" % (prep["setup"], name))
    cmd = "/bin/sh /bench/points/%s.cmd" % p["id"]
    lines.append(CPU_LINE % "before")
    if kernel == "tempest":
        every = " -i %g" % p["interval"] if p.get("interval") else ""
        lines.append("lockstat -j -d%s -o /tmp/lockstat.json %s; st=$?; %s; "
                     "cat /tmp/lockstat.json; rm -f /tmp/lockstat.json; exit $st"
                     % (every, cmd, CPU_LINE % "after"))
    else:
        lines.append("%s; st=$?; %s; exit $st" % (cmd, CPU_LINE % "after"))
    return "\n".join(lines) + "\n"


def _mounts(prep, kernel, prefix):
    """The lines mounting a point's disks (under prefix on Linux), and
    the lines unmounting them."""
    mount, umount = [], []
    for d in prep.get("disks", []):
        where = prefix + d["mount"]
        if kernel == "tempest":
            how = "-t %s" % d["fs"]
        else:
            how = "-t sysv" if d["fs"] == "s5" else "-t ufs -o ro,ufstype=44bsd"
        mount.append("mkdir -p %s 2>/dev/null; mount %s %s %s" % (where, how, d["dev"], where))
        umount.insert(0, "umount %s" % where)
    return mount, umount


def outer_script(prepared, kernel):
    """What the boot runs: per point, mount its disks, run ID.sh between
    the markers, unmount.  On Linux ID.sh runs in chroot /deb."""
    lines = [LINUX_ROOT] if kernel == "linux" else []
    prefix = "/deb" if kernel == "linux" else ""
    for p, prep in prepared:
        mount, umount = _mounts(prep, kernel, prefix)
        run = "/bin/sh /bench/points/%s.sh" % p["id"]
        if kernel == "linux":
            run = "chroot /deb " + run
        fail = "echo 'bench %s error=mount'; st=1" % p["workload"]
        lines.append("echo '%s%s'" % (BEGIN, p["id"]))
        lines.append("if %s; then %s; st=$?; else %s; fi" % (
            " && ".join(mount) or "true", run, fail))
        lines.extend(u + " 2>/dev/null" for u in umount)
        lines.append("sync; echo \"@@harness end %s $st\"" % p["id"])
    return "\n".join(lines) + "\n"


def _add_users(top, users):
    """The points' users in the image's /etc/passwd, /etc/shadow and
    /etc/group (a group line for each gid not there yet)."""
    if not users:
        return
    etc = os.path.join(top, "etc")
    with open(os.path.join(etc, "group")) as f:
        gids = {line.split(":")[2] for line in f if line.count(":") >= 3}
    with open(os.path.join(etc, "passwd"), "a") as pw, \
            open(os.path.join(etc, "shadow"), "a") as sh, \
            open(os.path.join(etc, "group"), "a") as gr:
        for u in users:
            pw.write("%s:x:%d:%d:%s:%s:/bin/sh\n" % (u["name"], u["uid"], u["gid"], u["name"],
                                                      u["home"]))
            sh.write("%s:!:19700:0:99999:7:::\n" % u["name"])
            if str(u["gid"]) not in gids:
                gr.write("g%d:x:%d:\n" % (u["gid"], u["gid"]))
                gids.add(str(u["gid"]))


def root_extra(prepared, kernel):
    """debian_root's stage hook: /bench with the points' scripts, the
    mount points, the users."""
    def extra(top):
        if not os.path.isdir(BENCH):
            raise MacroError("%s is missing (run 'make bench')" % BENCH)
        bench = os.path.join(top, "bench")      # debian_root copies it too
        shutil.copytree(BENCH, bench, symlinks=True, dirs_exist_ok=True)
        os.makedirs(os.path.join(bench, "points"))
        users = []
        for p, prep in prepared:
            for name, text in ((".sh", point_script(p, prep, kernel)),
                               (".cmd", prep["command"] + "\n")):
                with open(os.path.join(bench, "points", p["id"] + name), "w") as f:
                    f.write(text)
            for d in prep.get("disks", []):
                os.makedirs(top + d["mount"], exist_ok=True)
            users += prep.get("users", [])
        _add_users(top, users)
    return extra


def root_image(tmp, prepared, kernel):
    """The batch's Debian root image in tmp; its path."""
    if os.path.join(ROOT, "tools") not in sys.path:
        sys.path.insert(0, os.path.join(ROOT, "tools"))
    import argparse
    import debian_root
    img = os.path.join(tmp, "debian.img")
    args = argparse.Namespace(image=img, list=debian_root.LIST, slot=False, add=None,
                              free="64M",
                              run=outer_script(prepared, kernel) if kernel == "tempest" else None)
    try:
        debian_root.image(args, root_extra(prepared, kernel), quiet=True)
    except debian_root.Failure as e:
        raise MacroError("the Debian root: %s" % e)
    return img


# ---- booting a batch -----------------------------------------------------------

def boot(spec, tmp):
    """Boot the batch spec (kind "macro") on its kernel; (status, console,
    emulator command, kernel command line), as runner.run_batch wants.
    The images (the Debian root is some 400 MB) are made under build/,
    not in tmp, and go when the boot ends."""
    os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="macro-", dir=os.path.join(ROOT, "build")) as own:
        return _boot(spec, own)


def _boot(spec, tmp):
    prepared = prepare_points(tmp, spec["points"])
    disks = [d["image"] for _p, prep in prepared for d in prep.get("disks", [])]
    root = root_image(tmp, prepared, spec["kernel"])
    p0 = spec["points"][0]
    if spec["kernel"] == "tempest":
        import tempest
        words = ["root=vda", "poweroff", "maxcpus=%d" % p0["cpus"]]
        words += ["%s=%s" % kv for kv in sorted(p0["options"].items())]
        r = tempest.boot(p0["machine"], " ".join(words), accel=p0["accel"],
                         timeout=spec["timeout"], disk_images=[root] + disks)
        status = r.status
        if status == "ok" and "init: exit status" not in r.output:
            status = "init did not finish"
        return status, r.output, " ".join(r.command or []), " ".join(words)
    import linux_peer
    append = "maxcpus=%d" % p0["cpus"]
    r = linux_peer.run(p0["machine"], outer_script(prepared, "linux"), p0["accel"],
                       spec["timeout"], append=append, disks=[root] + disks)
    status = "ok" if r.status is not None else r.reason
    return status, r.console, " ".join(r.command or []), append
