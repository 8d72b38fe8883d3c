"""sysbench as an outside scaling judge (issue 30): Debian's own sysbench
1.0, unmodified, run by the macro kind (the interface in
tools/harness/macro.py) on Tempest and on the Linux peer alike, one
thread per processor.

Four of its tests, each a workload:

  sysbench_threads  threads that take one of a few pthread mutexes, yield
                    and release it, as many rounds as they can in the
                    point's seconds: the scheduler and sched_yield
  sysbench_mutex    each thread takes and releases pthread mutexes from a
                    large array, a fixed amount of work per thread: futex
                    contention, the user-level side of locking
  sysbench_memory   each thread writes 1 KiB blocks of its own buffer for
                    the point's seconds: page faults and memory bandwidth,
                    no system calls once warm
  sysbench_fileio   random reads and writes (rndrw) by every thread on
                    16 files of 4 MiB on an S5 disk that both kernels
                    mount read-write (Tempest's s5, Linux's sysv.ko),
                    with sysbench's default fsync after every 100 writes:
                    the buffer cache, the disk driver and fsync

Every point prints one line "bench NAME ops_per_s=R ..." (higher is
better): the threads test's events, the mutex test's lock operations,
the memory test's block writes and the file test's reads plus writes,
each per second of sysbench's own "total time".  Each thread of the
mutex test does a fixed number of lock operations, so its total grows
with the threads and its rate is comparable across CPU counts like the
others'.  The 2-CPU speed-up is the rate at 2 CPUs over the rate at 1
(ideal 2); speedups() gives it per kernel and option set.
"""

import os
import shutil

from . import macro_pmake

MOUNT = "/mnt/sysbench"
FILES = 16
FILE_MIB = 4
DEFAULT_SECONDS = 10
# The mutex test's work per thread: an array of MUTEX_NUM mutexes, and
# MUTEX_LOCKS lock-unlock pairs, each after MUTEX_LOOPS empty iterations.
MUTEX_NUM, MUTEX_LOCKS, MUTEX_LOOPS = 4096, 50000, 2000

# Reads sysbench's report (/tmp/sysbench.out) and prints the bench line.
PARSE = r"""awk -v name=%(name)s -v test=%(test)s -v threads=%(threads)d -v locks=%(locks)d '
/total time:/ { t = $3 + 0 }
/total number of events:/ { events = $5 + 0 }
/Total operations:/ { ops = $3 + 0 }
/reads\/s:/ { rd = $2 + 0 }
/writes\/s:/ { wr = $2 + 0 }
/fsyncs\/s:/ { fs = $2 + 0 }
END {
    if (t <= 0) { print "bench " name " error=no_total_time"; exit 1 }
    if (test == "threads") rate = events / t
    else if (test == "mutex") rate = threads * locks / t
    else if (test == "memory") rate = ops / t
    else rate = rd + wr
    if (rate <= 0) { print "bench " name " error=no_rate"; exit 1 }
    extra = test == "fileio" ? sprintf(" reads_per_s=%%.2f writes_per_s=%%.2f fsyncs_per_s=%%.2f", rd, wr, fs) : ""
    printf "bench %%s ops_per_s=%%.2f time_s=%%.4f threads=%%d%%s\n", name, rate, t, threads, extra
}' /tmp/sysbench.out"""


def seconds_of(point):
    """The point's seconds (its sweep's seconds key; at least 1)."""
    try:
        secs = float(point.get("seconds") or DEFAULT_SECONDS)
    except (TypeError, ValueError):
        secs = DEFAULT_SECONDS
    return max(1, int(round(secs)))


def options(test, point):
    """sysbench's options for one test at the point's CPU count."""
    n = point["cpus"]
    common = "--threads=%d" % n
    if test == "threads":
        return "%s --time=%d --thread-yields=100 --thread-locks=4" % (common, seconds_of(point))
    if test == "mutex":
        return "%s --mutex-num=%d --mutex-locks=%d --mutex-loops=%d" % (
            common, MUTEX_NUM, MUTEX_LOCKS, MUTEX_LOOPS)
    if test == "memory":
        return "%s --time=%d --memory-block-size=1K --memory-total-size=1000G" % (
            common, seconds_of(point))
    return "%s --time=%d --file-num=%d --file-total-size=%dM --file-test-mode=rndrw" % (
        common, seconds_of(point), FILES, FILES * FILE_MIB)


def command(test, point):
    """The timed command: sysbench's run, then its report as a bench line
    (or "bench NAME error=..." and status 1)."""
    name = "sysbench_" + test
    run = "sysbench %s %s run > /tmp/sysbench.out 2>&1" % (test, options(test, point))
    if test == "fileio":
        run = "cd %s && %s" % (MOUNT, run)
    parse = PARSE % {"name": name, "test": test, "threads": point["cpus"],
                     "locks": MUTEX_LOCKS}
    return ("%s; st=$?\n"
            "if [ $st -ne 0 ]; then echo \"bench %s error=sysbench_status_$st\"; "
            "tail -5 /tmp/sysbench.out; exit 1; fi\n%s\n" % (run, name, parse))


def fileio_disk(tmp):
    """An empty S5 disk with room for the test's files."""
    top = os.path.join(tmp, "sysbench-tree")
    shutil.rmtree(top, ignore_errors=True)
    os.makedirs(top)
    kib = FILES * FILE_MIB * 1024 * 5 // 4 + 4096
    image = macro_pmake.make_s5(os.path.join(tmp, "sysbench.img"), top, kib)
    shutil.rmtree(top, ignore_errors=True)
    return image


def _prepare(test):
    def prepare(tmp, point):
        prep = {"disks": [], "users": [], "setup": "sysbench --version > /dev/null",
                "command": command(test, point)}
        if test == "fileio":
            prep["disks"] = [{"image": fileio_disk(tmp), "fs": "s5", "mount": MOUNT,
                              "rw": True}]
            prep["setup"] = "cd %s && sysbench fileio --file-num=%d --file-total-size=%dM prepare" % (
                MOUNT, FILES, FILES * FILE_MIB)
        return prep
    prepare.__doc__ = "The %s point: its command (and for fileio its disk and files)." % test
    return prepare


TESTS = ("threads", "mutex", "memory", "fileio")
PREPARE = {"sysbench_" + t: _prepare(t) for t in TESTS}


def speedups(records):
    """The 2-CPU speed-up of each sysbench workload: {(kernel, optset,
    workload): rate(2) / rate(1)}, from the medians (the upper of an even
    count) of the ok records' ops_per_s at 1 and 2 CPUs that are not
    marked busy; a group without both counts is left out."""
    rates = {}
    for r in records:
        p = r["point"]
        value = (r.get("result") or {}).get("ops_per_s", r.get("value"))
        if (r.get("status") != "ok" or r.get("busy") or value is None
                or p["workload"] not in PREPARE or p["cpus"] not in (1, 2)):
            continue
        key = (p["kernel"], p["optset"], p["workload"])
        rates.setdefault(key, {}).setdefault(p["cpus"], []).append(float(value))
    out = {}
    for key, by_cpus in sorted(rates.items()):
        if 1 in by_cpus and 2 in by_cpus:
            one, two = (sorted(v)[len(v) // 2] for v in (by_cpus[1], by_cpus[2]))
            out[key] = two / one if one else None
    return out
