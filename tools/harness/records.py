"""The records of a sweep, read back, and the tables made from them.

A record (runs/ID.json, one per point, written by runner.py):

    id, sweep, schema        the point's id, the sweep's name, 1
    point                    kernel, machine, cpus, options, optset,
                             workload, accel, repeat, seconds
    status, reason           "ok", or "failed" and why (panic, time-out,
                             an error line, no result)
    metric, unit, value      the figure plotted (ops_per_s, us_per_op or
                             response_us) and its value
    higher_is_better         whether more of it is better
    result                   every field of the workload's result line
                             (kbench=locks: every algorithm's figures)
    lockstat                 Tempest: lockstat -j -d of that run alone
    lockstat_series          Tempest, with "intervals SECS" in the sweep: lockstat -i's
                             objects, one per interval (numbered from 1, with t_start
                             and t_end in seconds); [] otherwise
                             (classes with hits, misses, miss_ratio,
                             wait_us, hold_us; disks); null on Linux
    guest_cpu                macro points (both kernels): the guest's CPU
                             seconds over the command, from /proc/stat
                             before and after: user_s, system_s, idle_s
                             (with iowait), summed over its CPUs; null
                             for other kinds or when a line is missing
    elapsed_s, started       the boot's wall-clock time, its UTC start
    host                     name, cores, load (1-minute average before
                             the boot), load_after; cores_held (the host-core
                             slots the boot held, tests/hostcores.py),
                             boot_start and boot_end (seconds since the
                             epoch), emulators_before and emulators_after
    oversubscribed           the point has more vCPUs than the host has
                             cores: its timings measure the host
    busy                     "" for a quiet point, else why it was not: other
                             emulators were running just before or after its
                             boot (host's emulators_before, emulators_after
                             list their pids); the report greys it
    caveat                   what the accelerator's timings cannot show
                             (TCG: no NUMA latency, no speed-up beyond the
                             host's cores)
    machine_cpus, log, cmdline   the machine's CPUs, the console (relative
                             to the results directory), the kernel's
                             command line
    kernel_build             Tempest: 12 hex digits of kernel.elf's SHA-256;
                             Linux: the peer's version

results.csv has one row per record; summary.csv one row per point
without its repeat: the median, lowest and highest value over the repeats
that succeeded, their spread ((max-min)/median), the median over that at
1 CPU (vs_1cpu: Tornado's slowdown for a time per operation, the speed-up
for a throughput), and how many ran and failed.
"""

import csv
import glob
import json
import os
import statistics

CSV_FIELDS = ["id", "kernel", "machine", "cpus", "optset", "workload", "accel", "repeat",
              "status", "metric", "value", "unit", "us_per_op", "ops_per_s", "elapsed_s",
              "host_cores", "host_load", "oversubscribed", "busy", "top_lock",
              "top_lock_miss_ratio", "reason", "log"]
SUMMARY_FIELDS = ["kernel", "machine", "cpus", "optset", "workload", "accel", "users", "files",
                  "metric", "unit",
                  "median", "min", "max", "spread", "vs_1cpu", "runs", "failed", "oversubscribed",
                  "busy"]


def load(outdir):
    """Every record of the results directory, in id order."""
    out = []
    for path in sorted(glob.glob(os.path.join(outdir, "runs", "*.json"))):
        with open(path) as f:
            out.append(json.load(f))
    return out


def top_locks(record, n=5):
    """The record's lock classes with misses, most misses first."""
    ls = record.get("lockstat") or {}
    classes = [c for c in ls.get("classes", []) if c.get("hits", 0) + c.get("misses", 0) > 0]
    return sorted(classes, key=lambda c: (-c.get("misses", 0), -c.get("hits", 0)))[:n]


def csv_row(r):
    p, res = r["point"], r.get("result") or {}
    top = top_locks(r, 1)
    return {"id": r["id"], "kernel": p["kernel"], "machine": p["machine"], "cpus": p["cpus"],
            "optset": p["optset"], "workload": p["workload"], "accel": p["accel"],
            "repeat": p["repeat"], "status": r["status"], "metric": r["metric"],
            "value": r["value"], "unit": r["unit"], "us_per_op": res.get("us_per_op"),
            "ops_per_s": res.get("ops_per_s"), "elapsed_s": r["elapsed_s"],
            "host_cores": r["host"]["cores"], "host_load": r["host"]["load"],
            "oversubscribed": int(r["oversubscribed"]), "busy": r.get("busy", ""),
            "top_lock": top[0]["class"] if top else "",
            "top_lock_miss_ratio": top[0]["miss_ratio"] if top else "",
            "reason": r["reason"], "log": r["log"]}


GROUP_FIELDS = ("kernel", "machine", "cpus", "optset", "workload", "accel", "users", "files")


def group_key(r):
    """A point without its repeat: the macro workloads' user and file
    counts (None for the others) tell apart points that share the rest."""
    p = r["point"]
    return tuple(p.get(f) for f in GROUP_FIELDS)


def summarize(records):
    """One row per point without its repeat (SUMMARY_FIELDS), sorted."""
    groups = {}
    for r in records:
        groups.setdefault(group_key(r), []).append(r)
    rows = []
    for key in sorted(groups, key=lambda k: tuple(str(x) if not isinstance(x, int) else "%04d" % x
                                                  for x in k)):
        rs = groups[key]
        vals = [r["value"] for r in rs if r["status"] == "ok"]
        med = statistics.median(vals) if vals else None
        rows.append(dict(zip(GROUP_FIELDS, key),
                         metric=rs[0]["metric"], unit=rs[0]["unit"], median=med,
                         min=min(vals) if vals else None, max=max(vals) if vals else None,
                         spread=(max(vals) - min(vals)) / med if vals and med else None,
                         runs=len(rs), failed=sum(r["status"] != "ok" for r in rs),
                         oversubscribed=int(any(r["oversubscribed"] for r in rs)),
                         busy=sum(bool(r.get("busy")) for r in rs)))
    add_ratios(rows)
    return rows


def add_ratios(rows):
    """vs_1cpu: each median over the median of the same point at 1 CPU
    (for a time per operation Tornado's slowdown, for a throughput the
    speed-up), or None without a 1-CPU point."""
    one = {(r["kernel"], r["machine"], r["optset"], r["workload"], r["accel"]): r["median"]
           for r in rows if r["cpus"] == 1}
    for r in rows:
        base = one.get((r["kernel"], r["machine"], r["optset"], r["workload"], r["accel"]))
        r["vs_1cpu"] = r["median"] / base if base and r["median"] is not None else None


def write_tables(outdir, records):
    """results.csv and summary.csv; returns the summary rows."""
    with open(os.path.join(outdir, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, CSV_FIELDS)
        w.writeheader()
        for r in records:
            w.writerow(csv_row(r))
    rows = summarize(records)
    with open(os.path.join(outdir, "summary.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, SUMMARY_FIELDS)
        w.writeheader()
        for row in rows:
            w.writerow({k: ("%.6g" % v if isinstance(v, float) else v) for k, v in row.items()})
    return rows
