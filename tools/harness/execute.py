"""Running a whole sweep: which batches are still to do (resume), where
they run (a local pool, or Dask distributed), progress on the terminal,
and writing each batch's records and console as it finishes.

The results directory of a sweep:

    runs/ID.json          one record per point (records.py says what is in it)
    logs/BATCH/console.txt, command.txt   each boot's console and command line
    results.csv, summary.csv, plots/*.png, report.html   (records.py,
                          plots.py, report.py, written at the end)

A point whose record exists is finished, ok or failed, and is not run
again (--retry-failed reruns the failed ones, --retry-busy those taken
beside another emulator), so an interrupted sweep resumes where it
stopped.

Quiet points: every batch holds all of the host's cores while it boots
(runner.run_batch, tests/hostcores.py), so the local workers and a Dask
LocalCluster's prepare images side by side but time one at a time, and a
make check on the same host waits for the boot, as the boot waits for it.
A sweep that starts while another emulator runs says so at once.
"""

import json
import os
import re
import sys
import threading
import time

from . import runner
from . import workloads as wl

def batch_name(points):
    """A boot's name: its points' id without the workload."""
    p = points[0]
    parts = [p.kernel, p.machine, "c%d" % p.cpus, p.optset, p.accel, "r%d" % p.repeat,
             wl.WORKLOADS[p.workload].kind]
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", "-".join(parts).replace("=", "+"))


def record_path(outdir, pid):
    return os.path.join(outdir, "runs", pid + ".json")


def finished(outdir, point, retry_failed, retry_busy=False):
    """Whether the point has a record that stands: any record, or with
    retry_failed an ok one, or with retry_busy one not taken on a busy host."""
    path = record_path(outdir, point.id)
    if not os.path.exists(path):
        return False
    if not retry_failed and not retry_busy:
        return True
    try:
        with open(path) as f:
            r = json.load(f)
    except (OSError, ValueError):
        return False
    if retry_failed and r.get("status") != "ok":
        return False
    return not (retry_busy and r.get("busy"))


def make_spec(sweep, points, root, machine_of):
    log = os.path.join("logs", batch_name(points))
    timeout = max(p.timeout for p in points)
    if wl.WORKLOADS[points[0].workload].kind == "macro":
        timeout = sum(p.timeout for p in points)    # one boot runs them in turn
    return {"sweep": sweep.name, "root": root, "kernel": points[0].kernel,
            "kind": wl.WORKLOADS[points[0].workload].kind,
            "timeout": timeout, "log": os.path.join(log, "console.txt"),
            "machine_cpus": machine_of(points[0].machine).cpus,
            "points": [dict(p.as_dict(), id=p.id) for p in points]}


def save_batch(outdir, spec, out):
    logdir = os.path.join(outdir, os.path.dirname(spec["log"]))
    os.makedirs(logdir, exist_ok=True)
    with open(os.path.join(outdir, spec["log"]), "w") as f:
        f.write(out["console"])
    with open(os.path.join(logdir, "command.txt"), "w") as f:
        f.write(out["command"] + "\n")
    os.makedirs(os.path.join(outdir, "runs"), exist_ok=True)
    for r in out["records"]:
        tmp = record_path(outdir, r["id"]) + ".tmp"
        with open(tmp, "w") as f:
            json.dump(r, f, indent=1, sort_keys=True)
        os.replace(tmp, record_path(outdir, r["id"]))


class Progress:
    """Points done, failed and time left: on a terminal one line, redrawn
    every second and when a boot ends (a failure keeps its own line);
    otherwise a line per boot."""

    def __init__(self, total, already, stream=sys.stdout):
        self.total = total
        self.done = already
        self.failed = 0
        self.start = time.monotonic()
        self.ran = 0
        self.last = "starting"
        self.stream = stream
        self.tty = stream.isatty()
        self.lock = threading.Lock()
        self.stop = threading.Event()
        if self.tty:
            threading.Thread(target=self._tick, daemon=True).start()

    def _eta(self):
        if not self.ran:
            return "?"
        left = (time.monotonic() - self.start) / self.ran * (self.total - self.done)
        return "%dm%02ds" % (left // 60, left % 60)

    def _line(self):
        run = time.monotonic() - self.start
        return "[%d/%d points, %d failed, %dm%02ds so far, about %s left] %s" % (
            self.done, self.total, self.failed, run // 60, run % 60, self._eta(), self.last)

    def _draw(self):
        self.stream.write("\r\x1b[K" + self._line()[:self._width()])
        self.stream.flush()

    def _tick(self):
        while not self.stop.wait(1.0):
            with self.lock:
                self._draw()

    def batch_done(self, name, out):
        with self.lock:
            n = len(out["records"])
            bad = [r for r in out["records"] if r["status"] != "ok"]
            self.done += n
            self.ran += n
            self.failed += len(bad)
            self.last = "%s: %s" % (name, "ok" if not bad else "%d failed: %s"
                                    % (len(bad), bad[0]["reason"][:100]))
            if self.tty:
                self._draw()
                if bad:
                    self.stream.write("\n")
            else:
                self.stream.write(self._line() + "\n")
            self.stream.flush()

    def _width(self):
        try:
            return os.get_terminal_size(self.stream.fileno()).columns - 1
        except OSError:
            return 200

    def finish(self):
        self.stop.set()
        if self.tty:
            with self.lock:
                self._draw()
                self.stream.write("\n")
                self.stream.flush()


def _run_local(specs, jobs, on_done):
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(runner.run_batch, s): s for s in specs}
        try:
            for f in concurrent.futures.as_completed(futures):
                on_done(futures[f], _outcome(f, futures[f]))
        except KeyboardInterrupt:
            for f in futures:
                f.cancel()
            _kill_emulators(specs)
            raise


def _outcome(future, spec, where=""):
    """A finished task's batch, or its points failed with the exception
    that ended it (the sweep goes on)."""
    try:
        return future.result()
    except Exception as e:
        return runner.failed_batch(spec, "%s%s: %s" % (where, type(e).__name__, e))


def _kill_emulators(specs):
    if specs:
        runner._paths(specs[0]["root"])
        import tempest
        tempest.kill_all()


def _run_dask(specs, address, jobs, on_done):
    """Each batch a Dask task: on the cluster at address, or with "local"
    on a LocalCluster of jobs single-threaded worker processes."""
    try:
        import cloudpickle
        import distributed
    except ImportError as e:
        raise SystemExit("bench: Dask distributed is not installed for %s (%s); Debian's "
                         "python3-distributed serves /usr/bin/python3 (tools/install-deps.sh)"
                         % (sys.executable, e))
    # The harness's code travels with each task (workers need only the
    # tree).  Dask picks cloudpickle by the module of the function itself,
    # so each module is registered by name, not just the package.
    from . import workloads
    for module in (runner, workloads):
        cloudpickle.register_pickle_by_value(module)
    cluster = None
    if address == "local":
        cluster = distributed.LocalCluster(n_workers=max(1, jobs), threads_per_worker=1,
                                           processes=True, dashboard_address=None)
        address = cluster
    try:
        client = distributed.Client(address, timeout=30)
    except Exception as e:
        raise SystemExit("bench: cannot reach the Dask scheduler at %s: %s" % (address, e))
    try:
        futures = {client.submit(runner.run_batch, s, pure=False, key="batch-%d-%s" % (
            i, batch_name_from_spec(s))): s for i, s in enumerate(specs)}
        for f in distributed.as_completed(futures):
            on_done(futures[f], _outcome(f, futures[f], "dask: "))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def batch_name_from_spec(spec):
    return os.path.basename(os.path.dirname(spec["log"]))


def warn_other_emulators(stream):
    """Say at the start of a sweep that other emulators are running."""
    others = runner.emulators()
    if others:
        stream.write("bench: warning: %d other emulator%s running on this host (pid %s); "
                     "each boot waits for the cores make check holds, but points taken "
                     "beside the others are marked busy (--retry-busy reruns them)\n"
                     % (len(others), "s are" if len(others) > 1 else " is",
                        " ".join(map(str, others[:8]))))
        stream.flush()


def run_sweep(sweep, outdir, root, machine_of, jobs=1, cluster=None, retry_failed=False,
              stream=sys.stdout, retry_busy=False):
    """Run every unfinished batch; returns (points run now, of them failed)."""
    runner._paths(root)
    import hostcores
    hostcores.setup()
    warn_other_emulators(stream)
    todo, already = [], 0
    for batch in sweep.batches():
        left = [p for p in batch if not finished(outdir, p, retry_failed, retry_busy)]
        already += len(batch) - len(left)
        if left:
            todo.append(make_spec(sweep, left, root, machine_of))
    total = len(sweep.points)
    where = ("Dask at " + cluster) if cluster else "%d local worker%s" % (jobs, "s" * (jobs != 1))
    stream.write("bench: sweep %s: %d points in %d boots to run (%d of %d already done), "
                 "%s\n" % (sweep.name, total - already, len(todo), already, total, where))
    stream.flush()
    progress = Progress(total, already, stream)

    def on_done(spec, out):
        save_batch(outdir, spec, out)
        progress.batch_done(batch_name_from_spec(spec), out)

    try:
        if not todo:
            pass
        elif cluster:
            _run_dask(todo, cluster, jobs, on_done)
        else:
            _run_local(todo, jobs, on_done)
    finally:
        progress.finish()
    return progress.ran, progress.failed
