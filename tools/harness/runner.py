"""Running a sweep's points: one boot per batch (the points that differ
only in their workload), on Tempest or on the Linux peer, giving one
record per point.

run_batch(spec) is the unit of work.  It takes and returns plain data
(dicts, strings), so the same function runs in a local thread or on a
Dask worker: locally a pool of one worker per host core runs the batches;
with a cluster address, Dask distributed does (the harness never
schedules across machines itself).  A worker needs the same tree, built,
at spec["root"] (a shared file system, or the same checkout on every
host); the harness's own code travels with the task.

The kernel tempest-up is the uniprocessor build (make UP=1,
build/up/kernel.elf), booted and read as Tempest is.

A batch on Tempest builds a root image whose /etc/rc.run runs each user
workload under `lockstat -j -d` between marker lines, and boots it with
root=vda poweroff maxcpus=N and the option set; a kernel workload boots
with kbench=NAME instead.  On Linux the peer's initramfs runs the same
commands without lockstat, with maxcpus=N on its command line.  A boot
that panics, times out or prints no result makes every point of the batch
a failed record, with the reason and the console kept; the sweep goes on.
"""

import json
import os
import re
import socket
import sys
import tempfile
import time

BEGIN = "@@harness begin "
# The kernel image of each Tempest kernel name, relative to the tree.
TEMPEST_IMAGES = {"tempest": os.path.join("build", "kernel.elf"),
                  "tempest-up": os.path.join("build", "up", "kernel.elf")}
END_RE = re.compile(r"^@@harness end (\S+) (\d+)\s*$", re.M)
SCHEMA = 1


def _paths(root):
    for sub in ("tests", "tools"):
        p = os.path.join(root, sub)
        if p not in sys.path:
            sys.path.insert(0, p)


def _host():
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = None
    return {"name": socket.gethostname(), "cores": os.cpu_count() or 1, "load": load}


def guest_script(points, kernel):
    """The shell script a user batch runs in the guest."""
    from harness import workloads as wl
    lines = []
    for p in points:
        w = wl.WORKLOADS[p["workload"]]
        cmd = w.command(p["cpus"], p["seconds"])
        if kernel in TEMPEST_IMAGES:
            # The statistics go to a file, printed after the workload, so
            # that tables taken while it runs (-i) never mix with its lines.
            every = " -i %g" % p["interval"] if p.get("interval") else ""
            cmd = ("lockstat -j -d%s -o /tmp/lockstat.json %s; st=$?; cat /tmp/lockstat.json; "
                   "rm -f /tmp/lockstat.json; (exit $st)" % (every, cmd))
        lines.append("echo '%s%s'; %s; echo \"@@harness end %s $?\""
                     % (BEGIN, p["id"], cmd, p["id"]))
    return "\n".join(lines)


def _section(output, pid):
    """The text a point's command printed, and its exit status (or None)."""
    start = output.find(BEGIN + pid)
    if start < 0:
        return None, None
    body = output[start + len(BEGIN + pid):]
    m = END_RE.search(body)
    if not m or m.group(1) != pid:
        return body, None
    return body[:m.start()], int(m.group(2))


def _lockstat_json(text):
    """The lockstat -j object of the whole run in text (or None), and the
    objects of its intervals when it ran with -i (a list, maybe empty): with
    -i each object is one line, the intervals numbered from 1 and the whole
    run last as interval 0."""
    series, whole = [], None
    for line in text.splitlines():
        if not (line.startswith('{"version"') and '"interval": ' in line):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if obj.get("interval"):
            series.append(obj)
        else:
            whole = obj
    if series or whole:
        return whole, series
    return _lockstat_whole(text), []


def _lockstat_whole(text):
    """The one lockstat -j object in text (without -i), or None."""
    at = text.find('{"version"')
    end = text.rfind("}")
    if at < 0 or end < at:
        return None
    try:
        return json.loads(text[at:end + 1])
    except ValueError:
        return None


CAVEATS = {
    "tcg": "emulated (TCG): no NUMA latency; no speed-up beyond the host's cores",
    "icount": "instruction-counted (icount): repeatable time, but every vCPU shares one "
              "host thread, so no parallel speed-up at all",
    "kvm": "KVM: real parallelism up to the host's cores; NUMA latency only as the host has it",
}


CPU_RE = re.compile(r"^@@cpu (before|after) cpu\s+(\d+(?:\s+\d+){3,})\s*$", re.M)
USER_HZ = 100       # /proc/stat's unit on Linux and on Tempest (TICK_HZ)


def guest_cpu(text):
    """The guest's CPU seconds over a macro point's command, from the
    /proc/stat lines around it (macro.CPU_LINE): user (with nice), system
    (with irq and softirq), idle (with iowait), summed over the CPUs; None
    when a line is missing."""
    found = {}
    for when, fields in CPU_RE.findall(text or ""):
        found.setdefault(when, [int(x) for x in fields.split()] + [0] * 10)
    if len(found) < 2:
        return None
    d = [a - b for a, b in zip(found["after"], found["before"])]
    user, nice, system, idle, iowait, irq, softirq = d[:7]
    return {"user_s": (user + nice) / USER_HZ, "system_s": (system + irq + softirq) / USER_HZ,
            "idle_s": (idle + iowait) / USER_HZ}


def _record(spec, p, host, started, elapsed, status="ok", reason="", result=None,
            lockstat=None, series=None, cpu=None):
    from harness import workloads as wl
    w = wl.WORKLOADS[p["workload"]]
    value = (result or {}).get(w.metric)
    if status == "ok" and not isinstance(value, (int, float)):
        status, reason = "failed", "no %s in the result" % w.metric
    return {
        "schema": SCHEMA, "sweep": spec["sweep"], "id": p["id"], "point": p,
        "status": status, "reason": reason,
        "metric": w.metric, "unit": w.unit, "higher_is_better": w.higher_is_better,
        "value": value if status == "ok" else None, "result": result,
        "lockstat": lockstat, "lockstat_series": series or [],
        "guest_cpu": cpu,
        "elapsed_s": round(elapsed, 3), "started": started,
        "accel": p["accel"], "host": host,
        "oversubscribed": p["cpus"] > host["cores"],
        "busy": busy_reason(host),
        "caveat": CAVEATS.get(p["accel"], ""),
        "machine_cpus": spec["machine_cpus"], "log": spec["log"],
    }


def _user_records(spec, output, boot_status, host, started, elapsed):
    from harness import workloads as wl
    records = []
    for p in spec["points"]:
        text, rc = _section(output, p["id"])
        result = wl.parse_result(text) if text else None
        if text is None:
            status, reason = "failed", "never started: " + boot_status
        elif rc is None:
            status, reason = "failed", "did not finish: " + boot_status
        elif rc != 0 or not result or "error" in result:
            status = "failed"
            reason = "exit status %d: %s" % (rc, (text.strip().splitlines() or ["no output"])[0][:200])
        elif boot_status != "ok":
            status, reason = "failed", "the boot failed after the workload: " + boot_status
        else:
            status, reason = "ok", ""
        lock, series = (_lockstat_json(text) if text and spec["kernel"] in TEMPEST_IMAGES
                        else (None, []))
        records.append(_record(spec, p, host, started, elapsed, status, reason, result, lock,
                               series, guest_cpu(text)))
    return records


def _kernel_records(spec, output, boot_status, host, started, elapsed):
    from harness import workloads as wl
    records = []
    for p in spec["points"]:
        variants, choose = wl.kernel_variants(p["workload"], output, p["cpus"])
        which = choose(p["options"])
        if boot_status != "ok":
            records.append(_record(spec, p, host, started, elapsed, "failed", boot_status))
        elif which not in variants:
            records.append(_record(spec, p, host, started, elapsed, "failed",
                                   "no %s line for %s" % (wl.WORKLOADS[p["workload"]].kbench, which)))
        else:
            result = dict(variants[which], variant=which, variants=variants)
            records.append(_record(spec, p, host, started, elapsed, result=result))
    return records


def _boot_tempest(spec, tmp):
    import tempest
    import userrun
    p0 = spec["points"][0]
    words = ["poweroff", "maxcpus=%d" % p0["cpus"]]
    words += ["%s=%s" % kv for kv in sorted(p0["options"].items())]
    disks = []
    if spec["kind"] == "kernel":
        words.append("kbench=" + ",".join(sorted({wl_kbench(p) for p in spec["points"]})))
    else:
        words.insert(0, "root=vda")
        disks = [userrun.root_image(tmp, guest_script(spec["points"], "tempest"), None)]
    kernel = (tempest.KERNEL if spec["kernel"] == "tempest" else
              os.path.join(spec["root"], TEMPEST_IMAGES[spec["kernel"]]))
    cmdline = tempest.pvspin_opts(p0["machine"], " ".join(words), p0["accel"])
    r = tempest.boot(p0["machine"], cmdline, accel=p0["accel"],
                     timeout=spec["timeout"], disk_images=disks, kernel=kernel)
    status = r.status
    if status == "ok" and spec["kind"] == "user" and "init: exit status" not in r.output:
        status = "init did not finish"
    return status, r.output, " ".join(r.command or []), cmdline


def wl_kbench(p):
    from harness import workloads as wl
    return wl.WORKLOADS[p["workload"]].kbench


def _boot_linux(spec):
    import linux_peer
    p0 = spec["points"][0]
    append = "maxcpus=%d" % p0["cpus"]
    if p0["accel"] == "icount":
        # Count rep-string page clearing as Tempest's is counted
        # (bench/README.md, "Reading the figures").
        append += " clearcpuid=erms"
    r = linux_peer.run(p0["machine"], guest_script(spec["points"], "linux"), p0["accel"],
                       spec["timeout"], append=append)
    status = "ok" if r.status is not None else r.reason
    return status, r.console, " ".join(r.command or []), append


def kernel_build(kernel):
    """Which build of the kernel ran: the first 12 hex digits of
    build/kernel.elf's SHA-256, or the Linux peer's version (a sweep
    resumed after a rebuild shows it mixes kernels)."""
    try:
        if kernel in TEMPEST_IMAGES:
            import tempest
            return tempest._sha(tempest.KERNEL if kernel == "tempest" else
                                os.path.join(tempest.ROOT, TEMPEST_IMAGES[kernel]))[:12]
        import linux_peer
        return linux_peer.kernel_version()
    except (OSError, ImportError):
        return "unknown"


def emulators():
    """The pids of the emulators (QEMU, Bochs) running on this host now."""
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % pid) as f:
                comm = f.read().strip()
        except OSError:
            continue
        if comm.startswith("qemu-system") or comm == "bochs":
            pids.append(int(pid))
    return sorted(pids)


def busy_reason(host):
    """Why a point was taken on a busy host ("" when it was not): another
    emulator was running just before its boot or just after."""
    before, after = host.get("emulators_before") or [], host.get("emulators_after") or []
    if not before and not after:
        return ""
    return "other emulators running: %d before the boot, %d after" % (len(before), len(after))


def run_batch(spec):
    """Boot once for the batch spec; returns {"records": [...], "console":
    text, "command": the emulator's command line, "status": the boot's}.

    Every point's figure is a time or a rate, so the boot first holds all
    of the host's cores (tests/hostcores.py): two batches of one sweep,
    or a sweep and a make check, never time beside each other.  The
    emulators seen just before and after the boot (what the slots cannot
    see: a make run, another user's) go into the records, and a point with
    any is marked busy."""
    _paths(spec["root"])
    import hostcores
    with hostcores.hold(hostcores.host_cores()):
        host = _host()
        host["cores_held"] = hostcores.held_slots()
        host["emulators_before"] = emulators()
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        host["boot_start"] = time.time()
        t0 = time.monotonic()
        status, output, command, cmdline = _boot_batch(spec)
        elapsed = time.monotonic() - t0
        host["boot_end"] = time.time()
        host["emulators_after"] = emulators()
    host["load_after"] = _host()["load"]
    make = _kernel_records if spec["kind"] == "kernel" else _user_records
    records = make(spec, output, status, host, started, elapsed)
    build = kernel_build(spec["kernel"])
    for r in records:
        r["cmdline"] = cmdline
        r["kernel_build"] = build
    return {"records": records, "console": output, "command": command, "status": status}


def _boot_batch(spec):
    """The batch's one boot: (status, console, emulator command, kernel
    command line)."""
    try:
        with tempfile.TemporaryDirectory(prefix="harness-") as tmp:
            if spec["kind"] == "macro":     # Debian's programs (macro.py)
                from harness import macro
                return macro.boot(spec, tmp)
            if spec["kernel"] in TEMPEST_IMAGES:
                return _boot_tempest(spec, tmp)
            return _boot_linux(spec)
    except Exception as e:      # a missing tool, an image that cannot be built
        return "harness error: %s: %s" % (type(e).__name__, e), "", "", ""


def failed_batch(spec, reason):
    """What run_batch would return had its boot failed for reason (a task
    the cluster could not run, a harness error)."""
    host = _host()
    host["load_after"] = host["load"]
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    make = _kernel_records if spec["kind"] == "kernel" else _user_records
    return {"records": make(spec, "", reason, host, started, 0.0), "console": "",
            "command": "", "status": reason}
