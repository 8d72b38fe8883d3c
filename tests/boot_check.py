"""Boots that check the machine the kernel sees, for tests/check.py:

  topology/PRESET    each preset booted with poweroff: the smp: and numa:
                     lines against machines.conf, the virtio disks against
                     its disks column, the rtc: line against the host's
                     clock (QEMU's CMOS clock starts at the host's UTC)
  nosrat/4cpu        no -numa arguments: one node holding every cpu
  icount/default     ACCEL=icount with ktest=all
  bochs/default      Bochs (no SRAT, no virtio): one node, an ATA disk
                     and the block ktests that need no virtio
  disks/svr4mp       the SVR4 MP preset's 8 disks on 4 controllers
  disks/image        a host-made image is vda, both ways
  options/...        an unknown option and a bad value: a message and
                     the default
  panic/pagefault    a PANIC line, a symbolized backtrace, a stop
  panic/deadlock     the hang watchdog's dump shows the cycle
  bootbench/...      tools/boottime.py, one counted boot of each kernel:
                     every phase timed for both (bootbench/phases); the
                     boot ISO's kernel carries no debug information
                     (bootbench/iso: GRUB loads a third of kernel.elf)
"""

import calendar
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import tempest
from checklib import (LOGDIR, T_BOCHS, T_DISKS, T_ICOUNT, T_TOPOLOGY, budget_gone,
                      condense_thread_dump, ktest_results, parse_ktests, fail_reason)

MEM_TOLERANCE = 0.05
# Bochs runs the ktests that need no virtio (it has none), against a
# scratch ATA disk: the ATA driver is what Bochs is there to check.
BOCHS_KTESTS = "blk_errors,blk_faults,blk_stats,blk_ram,blk_ata,blk_ata_mp,blk_ata_sort"
BOCHS_ATA_DISKS = (1,)
SMP_RE = re.compile(r"^smp: (\d+) cpus? online\s*$", re.M)
RTC_RE = re.compile(r"^rtc: (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC\s*$", re.M)
RTC_SLACK = 1800        # seconds between the boot's start and its rtc: line, at most
NUMA_RE = re.compile(r"^numa: node (\d+) cpus (\S+) mem (\d+) ?M(?:iB)? dist ([\d ]+?)\s*$",
                     re.M)
VBLK_RE = re.compile(r"^virtio-blk: (vd[a-z]) at ([0-9a-f]{2}):([0-9a-f]{2})\.([0-7]) ", re.M)
BLK_SUM_RE = re.compile(r"^blk: (\d+) virtio, (\d+) ata, (\d+) ram\s*$", re.M)
UNKNOWN_RE = "options: unknown option '%s'"
BADVALUE_RE = "options: bad value '%s' for %s="


def parse_cpu_list(s):
    """'0-3,5,7-8' -> [0, 1, 2, 3, 5, 7, 8]; ValueError if malformed."""
    cpus = []
    for part in s.split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise ValueError("bad cpu list %r" % s)
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise ValueError("bad cpu range %r" % part)
        cpus.extend(range(lo, hi + 1))
    return cpus


def format_cpu_list(cpus):
    """[0, 1, 2, 3, 5] -> '0-3,5'."""
    out, cpus, i = [], sorted(cpus), 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(out)


def parse_topology(output):
    """{'smp': N or None, 'nodes': {id: {'cpus', 'mem', 'dist'}}, 'errors'}."""
    topo = {"smp": None, "nodes": {}, "errors": []}
    smp = SMP_RE.findall(output)
    if smp:
        topo["smp"] = int(smp[-1])
        if len(set(smp)) > 1:
            topo["errors"].append("conflicting smp lines: %s" % ", ".join(smp))
    for node, cpus, mem, dist in NUMA_RE.findall(output):
        node = int(node)
        if node in topo["nodes"]:
            topo["errors"].append("node %d printed twice" % node)
        try:
            cpulist = parse_cpu_list(cpus)
        except ValueError as e:
            topo["errors"].append("node %d: %s" % (node, e))
            cpulist = []
        topo["nodes"][node] = {"cpus": cpulist, "mem": int(mem),
                               "dist": [int(d) for d in dist.split()]}
    return topo


def check_topology(m, output):
    """Problems (strings) with the kernel's view of machine m; [] if right."""
    topo = parse_topology(output)
    problems = list(topo["errors"])
    if topo["smp"] is None:
        problems.append("no 'smp: N cpus online' line")
    elif topo["smp"] != m.cpus:
        problems.append("smp: %d cpus online, want %d" % (topo["smp"], m.cpus))
    nodes = topo["nodes"]
    if not nodes:
        problems.append("no 'numa: node N cpus LIST mem SIZEM dist ...' lines")
        return problems
    if len(nodes) != m.nodes:
        problems.append("%d nodes, want %d" % (len(nodes), m.nodes))
    if sorted(nodes) != list(range(len(nodes))):
        problems.append("node ids %s, want 0-%d" % (format_cpu_list(nodes), len(nodes) - 1))
    for n in range(m.nodes):
        if n not in nodes:
            problems.append("node %d missing" % n)
            continue
        got = nodes[n]
        want_cpus = m.node_cpus(n)
        if sorted(got["cpus"]) != want_cpus:
            problems.append("node %d cpus %s, want %s" % (
                n, format_cpu_list(got["cpus"]) or "(none)", format_cpu_list(want_cpus)))
        if abs(got["mem"] - m.mem) > MEM_TOLERANCE * m.mem:
            problems.append("node %d mem %dM, want %dM within %d%%" % (
                n, got["mem"], m.mem, MEM_TOLERANCE * 100))
        want_dist = [m.distance(n, j) for j in range(m.nodes)]
        if got["dist"] != want_dist:
            problems.append("node %d dist %s, want %s" % (
                n, " ".join(map(str, got["dist"])), " ".join(map(str, want_dist))))
    return problems


def check_rtc(output, started):
    """Problems with the wall clock the kernel read at boot: its rtc: line
    must lie between the boot's start (host time, whole seconds) and
    RTC_SLACK later."""
    m = RTC_RE.search(output)
    if not m:
        return ["no 'rtc: YYYY-MM-DD HH:MM:SS UTC' line"]
    seen = calendar.timegm(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S"))
    if not int(started) - 5 <= seen <= started + RTC_SLACK:
        return ["rtc: %s UTC, but the boot started at %s UTC" % (
            m.group(1), time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(started)))]
    return []


def expected_disk_layout(m):
    """Disks per controller that tempest.disk_args gives machine m's own
    disks (consecutive disks share a controller), [] without controllers."""
    n, ctrl = m.disks
    if not n or not ctrl:
        return []
    return [sum(1 for i in range(n) if i * ctrl // n == k) for k in range(ctrl)]


def check_disks(m, output):
    """Problems with the kernel's view of machine m's own virtio disks
    (booted with no disk arguments, so the preset's): as many as the
    preset has, named vda, vdb, ... in the order attached, and with
    controllers, behind that many bridges (never on the root bus),
    consecutive disks together as tempest.disk_args places them."""
    want = m.disks[0]
    problems = []
    summ = BLK_SUM_RE.findall(output)
    if not summ:
        return ["no 'blk: N virtio, N ata, N ram' line"]
    nv, _, ram = summ[-1]
    if int(nv) != want:
        problems.append("%s virtio disks attached, want %d" % (nv, want))
    if ram != "1":
        problems.append("%s RAM disks, want 1 (ram0)" % ram)
    found = VBLK_RE.findall(output)
    names = [f[0] for f in found]
    want_names = ["vd" + chr(ord("a") + i) for i in range(want)]
    if names != want_names:
        problems.append("virtio disks %s, want %s" % (" ".join(names) or "(none)",
                                                    " ".join(want_names) or "(none)"))
    layout = expected_disk_layout(m)
    if layout and names == want_names:
        buses = [int(f[1], 16) for f in found]
        runs = []                       # [bus, disks] for each run of one bus
        for b in buses:
            if runs and runs[-1][0] == b:
                runs[-1][1] += 1
            else:
                runs.append([b, 1])
        got = [c for _, c in runs]
        if 0 in buses or len({b for b, _ in runs}) != len(runs) or got != layout:
            problems.append("disks per bus %s, want %s behind %d bridges" % (
                " ".join("%02x:%d" % (b, c) for b, c in runs), layout, len(layout)))
    return problems


def effective_options(output):
    """The options: line listing the effective options, as a dict."""
    opts = None
    for line in output.splitlines():
        if line.startswith("options:") and "'" not in line and "=" in line:
            opts = {}
            for word in line[len("options:"):].split():
                k, _, v = word.partition("=")
                opts[k] = v
    return opts


def make_topology_job(preset):
    def job(ctx):
        name = "topology/" + preset
        m = tempest.machine(preset)
        started = time.time()
        r = ctx.boot(name, m, "poweroff", T_TOPOLOGY)
        if r is None:
            return budget_gone(ctx, [name])
        problems = check_topology(m, r.output) + check_disks(m, r.output)
        problems += check_rtc(r.output, started)
        ctx.results.add(name, r.ok and not problems, fail_reason(r, problems))
    return job


def job_nosrat(ctx):
    name = "nosrat/4cpu"
    m = tempest.machine("name=nosrat,cpus=4,mem=512")
    r = ctx.boot(name, m, "poweroff", T_TOPOLOGY)
    if r is None:
        return budget_gone(ctx, [name])
    problems = check_topology(m, r.output)
    ctx.results.add(name, r.ok and not problems, fail_reason(r, problems))


def job_icount(ctx):
    # No disks here: with -icount sleep=off virtual time leaps ahead whenever
    # every CPU is idle, while QEMU's disk emulation works in host time, so a
    # CPU waiting for a disk sees seconds of virtual time pass per request
    # and the tests' time guards mean nothing.  The block tests run on ram0
    # and report the devices absent; the root is the RAM disk (root=ram0,
    # formatted as a new S5 file system at boot).
    names = ["icount/default/topology", "icount/default/ktest"]
    m = tempest.machine("default")
    r = ctx.boot("icount/default", m, "ktest=all poweroff root=ram0", T_ICOUNT, accel="icount")
    if r is None:
        return budget_gone(ctx, names)
    problems = check_topology(m, r.output)
    ctx.results.add(names[0], r.ok and not problems, fail_reason(r, problems))
    ktest_results(ctx, names[1], r, individual=False)


def job_bochs(ctx):
    """Bochs, 4 cpus, a scratch ATA disk on ata0-master (the boot CD-ROM
    is on ata1): the topology, and the block ktests that need no virtio."""
    name = "bochs/default"
    m = tempest.machine("default")
    r = ctx.boot(name, m, "ktest=%s poweroff" % BOCHS_KTESTS, T_BOCHS, emulator="bochs",
                 ata_disks=BOCHS_ATA_DISKS)
    if r is None:
        return budget_gone(ctx, [name, name + "/ktest"])
    # Bochs has no SRAT or SLIT: one node holding every cpu and all memory.
    problems = check_topology(m.single_node(), r.output)
    summ = BLK_SUM_RE.findall(r.output)
    if not summ or int(summ[-1][1]) != len(BOCHS_ATA_DISKS):
        problems.append("want %d ata disk(s) found: %s" % (
            len(BOCHS_ATA_DISKS), "no 'blk: ...' line" if not summ else
            "blk: %s virtio, %s ata" % summ[-1][:2]))
    ctx.results.add(name, r.ok and not problems, fail_reason(r, problems))
    ktest_results(ctx, name + "/ktest", r, individual=True)


def job_disks_svr4mp(ctx):
    """The SVR4 MP machine's own 8 disks on 4 controllers (bridges): all
    attached in order, and the virtio tests on every one of them."""
    name = "disks/svr4mp"
    m = tempest.machine("svr4mp")
    r = ctx.boot(name, m, "ktest=blk_virtio,blk_virtio_mp,blk_virtio_sort poweroff", T_DISKS)
    if r is None:
        return budget_gone(ctx, [name])
    problems = check_disks(m, r.output)
    ctx.results.add(name + "/layout", r.ok and not problems, fail_reason(r, problems))
    ktest_results(ctx, name, r, individual=True)


# blk_image's patterns (kern/tests/test_blk.c): the host writes blocks 1..15
# after the magic in block 0; the kernel writes blocks 16..31.
IMAGE_MAGIC = b"TEMPEST-HOST-IMAGE"


def _host_byte(b, i):
    return (b * 31 + i * 7 + 0x11) & 0xFF


def _kernel_byte(b, i):
    return (b * 13 + i * 3 + 0x5A) & 0xFF


def job_disks_image(ctx):
    """A host-made raw image attached with disk_images= is the kernel's vda
    (ahead of a scratch disk and the preset's), reads back what the host
    wrote, and what the kernel writes is in the file after power-off: the
    path the file-system tests take with mkfs.s5 and fsck.s5."""
    name = "disks/image"
    img = os.path.join(LOGDIR, "image.img")
    os.makedirs(LOGDIR, exist_ok=True)
    with open(img, "wb") as f:
        f.truncate(1 << 20)
        f.write(IMAGE_MAGIC)
        f.seek(512)
        f.write(bytes(_host_byte(b, i) for b in range(1, 16) for i in range(512)))
    r = ctx.boot(name, "default", "ktest=blk_image poweroff", T_DISKS,
                 disk_images=[img], disks=(1,))
    if r is None:
        return budget_gone(ctx, [name])
    p = []
    if not re.search(r"^ktest: blk: vda: host image verified", r.output, re.M):
        p.append("the kernel did not verify the image on vda")
    names = [f[0] for f in VBLK_RE.findall(r.output)]
    if names != ["vda", "vdb"]:
        p.append("virtio disks %s, want vda (the image) and vdb" % " ".join(names))
    with open(img, "rb") as f:
        f.seek(16 * 512)
        data = f.read(16 * 512)
    want = bytes(_kernel_byte(b, i) for b in range(16, 32) for i in range(512))
    if data != want:
        bad = next((k for k in range(len(want)) if k >= len(data) or data[k] != want[k]), 0)
        p.append("after power-off the image's block %d byte %d is not what the kernel wrote"
                 % (16 + bad // 512, bad % 512))
    summary, _ = parse_ktests(r.output)
    if summary != (1, 0):
        p.append("ktest summary %s, want 1 passed, 0 failed" % (summary,))
    ctx.results.add(name, r.ok and not p, fail_reason(r, p))
    if r.ok and not p:
        os.unlink(img)


def job_options(ctx):
    names = ["options/unknown", "options/badvalue"]
    m = tempest.machine("default")
    r = ctx.boot("options", m, "bogus=1 lock=frobnicate poweroff", T_TOPOLOGY)
    if r is None:
        return budget_gone(ctx, names)
    # The machine must still boot normally, with the defaults.
    booted = check_topology(m, r.output)
    eff = effective_options(r.output)
    p = list(booted)
    if UNKNOWN_RE % "bogus" not in r.output:
        p.append("no \"%s\" line" % (UNKNOWN_RE % "bogus"))
    if eff is not None and "bogus" in eff:
        p.append("bogus appears among the effective options")
    ctx.results.add(names[0], r.ok and not p, fail_reason(r, p))
    p = list(booted)
    if BADVALUE_RE % ("frobnicate", "lock") not in r.output:
        p.append("no \"%s\" line" % (BADVALUE_RE % ("frobnicate", "lock")))
    if eff is None:
        p.append("no 'options: lock=...' line of effective options")
    elif eff.get("lock") != "spin":
        p.append("effective lock=%s, want the default spin" % eff.get("lock"))
    ctx.results.add(names[1], r.ok and not p, fail_reason(r, p))


def job_panic(ctx):
    """crash=pagefault: the kernel must report the fault with a symbolized
    backtrace and stop the machine itself (no timeout, no hang)."""
    name = "panic/pagefault"
    r = ctx.boot(name, "default", "crash=pagefault poweroff", T_TOPOLOGY)
    if r is None:
        return budget_gone(ctx, [name])
    p = []
    if not r.status.startswith("panic"):
        p.append("want a panic, got: %s" % r.status)
    elif "did not stop" in r.status:
        p.append(r.status)
    if not re.search(r"^PANIC: page fault", r.output, re.M):
        p.append("no 'PANIC: page fault' line")
    if not re.search(r"^backtrace:\s*\n.*crash_on_purpose\+0x", r.output, re.M):
        p.append("no backtrace naming crash_on_purpose+0x...")
    ctx.results.add(name, not p, "; ".join(p) + " [%s/]" % r.keep)


def job_deadlock(ctx):
    """crash=deadlock: two threads deadlock on two resource locks on
    purpose; the hang watchdog must stop the machine and its dump must show
    the cycle -- each thread waiting for the lock the other holds -- both
    raw and in the condensed form the end of the check prints."""
    name = "panic/deadlock"
    r = ctx.boot(name, "default", "crash=deadlock poweroff", T_TOPOLOGY)
    if r is None:
        return budget_gone(ctx, [name])
    p = []
    if not re.search(r"^PANIC: ktest: crash=deadlock still running after \d+ s: hung",
                     r.output, re.M):
        p.append("no watchdog PANIC line (status %s)" % r.status)
    waits = dict(re.findall(r"^thread (\d+) deadlock_\w: sleeping, cpu -?\d+, wchan \S+, "
                            r"waits for crash_\w \S+ held by thread (\d+)", r.output, re.M))
    if len(waits) != 2 or any(waits.get(holder) != waiter for waiter, holder in waits.items()):
        p.append("the dump does not show the two threads waiting for each other: %s" % waits)
    dump = condense_thread_dump(r.output) or ""
    if len(re.findall(r"deadlock_\w sleeping on \w+ \(crash_\w of t\d+\); holds crash_",
                      dump)) != 2:
        p.append("the condensed dump lacks the two waits: %r" % dump[:300])
    ctx.results.add(name, not p, "; ".join(p) + " [%s/]" % r.keep)
    with ctx.results.lock:          # a hang on purpose: not one to report
        ctx.results.dumps = [(j, d) for j, d in ctx.results.dumps if j != name]


BOOTTIME = os.path.join(tempest.ROOT, "tools", "boottime.py")
PHASE_ROW_RE = re.compile(r"^(tempest|linux)\s+((?:\d+\.\d+\s+){4})(\d+\.\d+)\s*$", re.M)


def job_bootbench(ctx):
    """tools/boottime.py prints a row of phases for each kernel, and the
    ISO's copy of the kernel has no .debug sections."""
    problems = []
    iso = tempest.make_iso("poweroff")
    tmp = tempfile.mkdtemp(prefix="tempest-iso-")
    try:
        elf = os.path.join(tmp, "tempest.elf")
        subprocess.run(["xorriso", "-osirrox", "on", "-indev", iso, "-extract",
                        "/boot/tempest.elf", elf], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, timeout=120)
        if not os.path.exists(elf):
            problems.append("no /boot/tempest.elf in %s" % os.path.basename(iso))
        else:
            r = subprocess.run(["readelf", "-S", "-W", elf], stdout=subprocess.PIPE,
                               text=True, stdin=subprocess.DEVNULL, timeout=60)
            debug = sorted(set(re.findall(r"\.debug_\w+", r.stdout)))
            if debug or r.returncode != 0:
                problems.append("the ISO's kernel has %s" % (", ".join(debug) or "no sections"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ctx.results.add("bootbench/iso", not problems, "; ".join(problems))
    # Every host core for the whole run, so no other boot runs beside the
    # timed ones, and the time limit starts once they are held: waiting
    # behind other jobs' boots (each of its own boots would take their
    # turn) once used up the limit before the first boot began.  The child
    # takes no slots of its own (an empty TEMPEST_CORES_DIR).
    with tempest.hostcores.hold(tempest.hostcores.host_cores()):
        limit = ctx.limit(T_TOPOLOGY)
        if limit < 60:
            return budget_gone(ctx, ["bootbench/phases"])
        try:
            p = subprocess.run([sys.executable, BOOTTIME, "--repeats", "1"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               stdin=subprocess.DEVNULL, timeout=limit,
                               env=dict(os.environ, TEMPEST_CORES_DIR=""))
            out, rc = p.stdout, p.returncode
        except subprocess.TimeoutExpired:
            out, rc = "", "timeout"
    rows = {k for k, _, _ in PHASE_ROW_RE.findall(out)}
    ok = rc == 0 and rows == {"tempest", "linux"}
    ctx.results.add("bootbench/phases", ok, "" if ok else "exit %s, rows %s: %s"
                    % (rc, sorted(rows), out.strip()[-300:]))
