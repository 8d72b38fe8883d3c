"""The workloads a sweep can name: what each runs inside the guest, how
its result line is read, and which figure of it is plotted.

Three kinds:

  * user workloads run programs from bench/ under /bench in the guest
    (Tempest's root image, or the Linux peer's initramfs).  Sprite's
    micro-benchmarks and Tornado's fstat run as one instance per
    processor through bench/par; the page-fault tests through
    bench/sharedfault or par.  On Tempest each is wrapped in
    `lockstat -j -d`, so its record carries the lock and disk statistics
    of that run alone.
  * kernel workloads boot with an in-kernel benchmark (kbench=locks) and
    read its console lines; they have no root and run on Tempest only.
  * macro workloads (issue 21: gaede, pmake, pmakeind) run Debian's own
    programs on the Debian root with disks their prepare function makes
    (macro.py); the command is the prepare function's, not command here.

A workload whose `needs` names something Tempest lacks is known but
refused by the sweep parser with that reason (fstat_mt, until par has a
multithreaded form).
"""

import os
import re


class Workload:
    def __init__(self, name, doc, command=None, kbench=None, metric="us_per_op",
                 higher_is_better=False, unit="us/op", needs=None, kernels=("tempest", "linux"),
                 macro=False):
        self.name = name
        self.doc = doc
        self.command = command          # fn(cpus, seconds) -> shell command (user)
        self.kbench = kbench            # kbench= value (kernel)
        self.metric = metric            # the field plotted
        self.higher_is_better = higher_is_better
        self.unit = unit
        self.needs = needs              # None, or why it cannot run yet
        self.kernels = kernels
        self.macro = macro              # a macro workload (macro.py)

    @property
    def kind(self):
        return "macro" if self.macro else "kernel" if self.kbench else "user"


def _par(prog):
    return lambda cpus, secs: "/bench/par %d /bench/%s -t %g" % (cpus, prog, secs)


def _sharedfault(flag):
    # Rounds scale with the time asked for: about 200 rounds a second of
    # target, at least 20.
    return lambda cpus, secs: "/bench/sharedfault %s%d %d" % (flag, cpus, max(20, int(200 * secs)))


def _gang_rounds(secs):
    # Rounds fixed by the time asked for alone, so that timeslice and
    # spaceshare at one point do the same work: 100 a second, at least 50
    # (a round across vCPUs takes tens of milliseconds under TCG).
    return max(50, int(100 * secs))


WORKLOADS = {w.name: w for w in [
    Workload("fork", "Sprite: fork+exit+wait, one instance per processor", _par("fork"),
             metric="ops_per_s", higher_is_better=True, unit="ops/s"),
    Workload("fexec", "Sprite: fork+exec+wait, one instance per processor", _par("exec"),
             metric="ops_per_s", higher_is_better=True, unit="ops/s"),
    Workload("mem", "Sprite: heap growth by one untouched page (brk), one instance per processor",
             _par("mem"), metric="ops_per_s", higher_is_better=True, unit="ops/s"),
    Workload("cswitch", "Sprite: pipe ping-pong, one pair per processor", _par("pipe"),
             metric="ops_per_s", higher_is_better=True, unit="ops/s"),
    Workload("fault_indep", "Hurricane: independent faults, each process on its own region",
             _par("pagefault"), unit="us/fault"),
    Workload("fault_shared", "Hurricane: p processes fault on the same MAP_SHARED pages, barrier, unmap",
             _sharedfault(""), unit="us/fault"),
    Workload("incore_fault", "Tornado: in-core page faults on an independent file per process",
             _sharedfault("-i "), unit="us/fault"),
    Workload("fstat", "Tornado: fstat of an independent file per process", _par("fstat"),
             unit="us/op"),
    Workload("null_syscall", "the null system call (getppid), one instance per processor",
             _par("null_syscall"), unit="us/op"),
    Workload("sem", "a System V semaphore round trip between two processes, a pair per processor",
             _par("sem"), unit="us/op"),
    Workload("msg", "a System V message round trip, a pair per processor", _par("msg"),
             unit="us/op"),
    Workload("shm", "shmat, a store, shmdt of a private segment, one instance per processor",
             _par("shm"), unit="us/op"),
    Workload("locks", "kbench=locks: uncontended pairs and all-CPU contention per algorithm; "
             "response time of a pair with p CPUs contending, hold time 0",
             kbench="locks", metric="response_us", unit="us/pair", kernels=("tempest",)),
    Workload("lockcurve", "kbench=lockcurve: Hurricane Figure 5, response time of a lock/unlock "
             "pair with p CPUs contending, hold time 0 and 25 us, per spin-lock algorithm",
             kbench="lockcurve", metric="response_us", unit="us/pair", kernels=("tempest",)),
    Workload("thread_create", "Tornado: thread create+join, one worker thread per processor in one process",
             lambda cpus, secs: "/bench/thread %d %d" % (cpus, max(50, int(500 * secs))),
             unit="us/op"),
    Workload("thread_create_mp", "Tornado: thread create+join, one process per processor",
             lambda cpus, secs: "/bench/thread -p %d %d" % (cpus, max(50, int(500 * secs))),
             unit="us/op"),
    Workload("incore_fault_mt", "Tornado: in-core faults by threads of one process, each on its own file",
             _sharedfault("-t -i "), unit="us/fault"),
    Workload("fault_shared_mt", "Hurricane (Figure 6b): threads of one process fault on the same "
             "MAP_SHARED pages, barrier, unmap", _sharedfault("-t "), unit="us/fault"),
    Workload("herd", "SVR4 MP: the wakeup herd, 8 processes per processor changing one file's "
             "mode, all sleeping on its inode lock (run with wakeup=all,one)",
             lambda cpus, secs: "/bench/herd -n %d -t %g" % (8 * cpus, secs),
             metric="ops_per_s", higher_is_better=True, unit="ops/s"),
    Workload("timeslice", "SALSA (Figure 11): two programs of 4 barrier-synchronised threads "
             "time-sliced over all the CPUs; both programs' completion time",
             lambda cpus, secs: "/bench/gang -m timeslice -c %d -r %d" % (cpus, _gang_rounds(secs)),
             metric="elapsed_s", unit="s"),
    Workload("spaceshare", "SALSA (Figure 11): the same two programs, each pinned to its own "
             "half of the CPUs; both programs' completion time",
             lambda cpus, secs: "/bench/gang -m spaceshare -c %d -r %d" % (cpus, _gang_rounds(secs)),
             metric="elapsed_s", unit="s"),
    Workload("memtouch", "SALSA: each process on its CPU touches 4 MiB of its own and re-reads "
             "it (run with alloc=local,interleave; the record's local/remote page counts "
             "show the placement, the emulator having no NUMA latency)",
             lambda cpus, secs: "/bench/memtouch -p %d -m 4 -r %d" % (cpus, max(2, int(8 * secs))),
             unit="us/page"),
    Workload("fstat_mt", "Tornado: fstat by threads of one process",
             needs="a multithreaded driver (threads exist; bench/par runs processes)"),
    Workload("pmake", "Sprite: one make -j 2n of Tempest's kernel C sources by Debian's gcc, "
             "no link", metric="elapsed_s", unit="s", macro=True),
    Workload("pmakeind", "Sprite: one make -j 2 per processor, each on its own copy of the "
             "kernel sources", metric="elapsed_s", unit="s", macro=True),
    Workload("sysbench_threads", "sysbench threads: pthread mutexes and sched_yield, one "
             "thread per processor (Debian's sysbench, the outside judge)", metric="ops_per_s",
             higher_is_better=True, unit="events/s", macro=True),
    Workload("sysbench_mutex", "sysbench mutex: pthread mutexes from a large array, a fixed "
             "amount of work per thread", metric="ops_per_s", higher_is_better=True,
             unit="locks/s", macro=True),
    Workload("sysbench_memory", "sysbench memory: 1 KiB block writes to each thread's buffer",
             metric="ops_per_s", higher_is_better=True, unit="blocks/s", macro=True),
    Workload("sysbench_fileio", "sysbench fileio: random reads and writes on 16 files of 4 MiB "
             "on an S5 disk both kernels mount", metric="ops_per_s", higher_is_better=True,
             unit="ops/s", macro=True),
    Workload("redis", "redis-benchmark's SET and GET over loopback against Debian's "
             "redis-server, two clients per processor: the network path", metric="ops_per_s",
             higher_is_better=True, unit="requests/s", macro=True),
    Workload("pgbench", "pgbench's TPC-B-like load, 4 clients on 2 threads, against Debian's "
             "PostgreSQL 15 with its data on tmpfs: processes, semaphores, shared memory and "
             "Unix sockets under a real database", metric="tps", higher_is_better=True,
             unit="tps", macro=True),
    Workload("gaede", "SVR4 MP: GAEDE's scripted users, each looping over a script mix with "
             "no think time", metric="scripts_per_hour", higher_is_better=True,
             unit="scripts/h", macro=True, needs=None if os.path.exists(
                 os.path.join(os.path.dirname(os.path.abspath(__file__)), "macro_gaede.py"))
             else "tools/harness/macro_gaede.py (issue 21's gaede branch)"),
]}

# One result line of a bench program or driver: "bench NAME key=value ...".
RESULT_RE = re.compile(r"^bench (\S+)((?: \w+=\S+)+)\s*$", re.M)
# kbench=locks: "lockbench ALGO uncontended_off=C uncontended_on=C contended_ops=N".
LOCKBENCH_RE = re.compile(r"^lockbench (\w+) uncontended_off=(\d+) uncontended_on=(\d+) "
                          r"contended_ops=(\d+)\s*$", re.M)
# kbench=lockcurve: "lockcurve ALGO hold_us=H cpus=P pairs=N response_us=R".
LOCKCURVE_RE = re.compile(r"^lockcurve (\w+) hold_us=(\d+) cpus=(\d+) pairs=(\d+) "
                          r"response_us=([\d.]+)\s*$", re.M)


def parse_result(text):
    """The fields of the first result line in text as a dict (numbers as
    floats), or None; an "error=" line gives {"error": ...}."""
    m = RESULT_RE.search(text)
    if not m:
        return None
    fields = {"name": m.group(1)}
    for word in m.group(2).split():
        k, v = word.split("=", 1)
        try:
            fields[k] = float(v)
        except ValueError:
            fields[k] = v
    return fields


def parse_lockbench(text, cpus):
    """{algorithm: fields} from kbench=locks' lines.  response_us is the
    time one CPU waits for and holds the lock per pair with cpus CPUs
    contending: cpus / (pairs per second, all CPUs together)."""
    out = {}
    for algo, off, on, ops in LOCKBENCH_RE.findall(text):
        ops = int(ops)
        out[algo] = {"uncontended_off_cycles": int(off), "uncontended_on_cycles": int(on),
                     "contended_ops": ops,
                     "response_us": (cpus * 1e6 / ops) if ops else None}
    return out


def parse_lockcurve(text, cpus):
    """{"ALGO/holdH": fields} from kbench=lockcurve's lines."""
    out = {}
    for algo, hold, ncpu, pairs, resp in LOCKCURVE_RE.findall(text):
        out["%s/hold%s" % (algo, hold)] = {"hold_us": int(hold), "cpus": int(ncpu),
                                           "pairs": int(pairs), "response_us": float(resp)}
    return out


def kernel_variants(workload, text, cpus):
    """A kernel workload's figures per variant, and the function choosing
    the variant a point's options name."""
    if workload == "locks":
        return parse_lockbench(text, cpus), lambda opts: opts.get("lock", "spin")
    return parse_lockcurve(text, cpus), lambda opts: "%s/hold0" % opts.get("lock", "spin")
