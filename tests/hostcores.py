"""The host's cores, shared out between emulators (make check, the harness).

Why: QEMU's TCG runs one host thread per virtual CPU.  A machine with more
virtual CPUs than the host has cores is already oversubscribed; two such
boots side by side make it worse, and the queue locks (MCS, H2-MCS) then
hand a lock to a waiter whose virtual CPU is not running while every CPU
behind it spins.  On a two-core host a 16-CPU hector ktest boot beside
another boot crawled past its time limit this way.  So every emulator that
make check starts first takes host-core slots, as many as it can keep busy:

    weight = min(virtual CPUs, host cores)   for multi-threaded TCG
    weight = 1                               for icount and Bochs (one thread)

A boot of more virtual CPUs than the host has cores therefore takes every
slot and never runs beside another boot.  Pure host jobs (unit tests,
builds) take one slot, so they do not steal a core from such a boot either.
Two emulators that must run together (Tempest and the Linux peer on one
segment, tests/netpeer_check.py) are one request for both weights, made
by their job; the helper thread that runs the second is covered().

How: the slots are files slot.0 .. slot.N-1 in the directory named by the
environment variable TEMPEST_CORES_DIR; a slot is held by an flock(2) on
it.  tests/check.py and the benchmark harness set it, when it is not set
already, to one directory for the whole host (default_dir()), so two runs
on one host, or a check beside a sweep, share the same slots, and the host
scripts a check starts inherit it.  Set but empty, it turns the slots off
(a child whose parent holds the cores it would ask for).  Only the holder of the gate file's lock takes slots, so
a request for every slot waits at the gate until the running boots end
and no smaller request can overtake it; a holder never waits for more
slots while holding some, so there is no deadlock.  Locks die with their
process, so a killed job never leaks a slot.  Requests are re-entrant per
thread: a boot inside a job that already holds slots takes no more.

Without TEMPEST_CORES_DIR (make run, a person's own scripts) nothing is
taken: an interactive machine must not block make check, nor wait for it.
What the slots cannot see (a make run, another user's emulator) the
harness notes in its records (tools/harness/runner.py, "busy").
"""

import contextlib
import fcntl
import os
import tempfile
import threading
import time

ENV = "TEMPEST_CORES_DIR"
POLL = 0.1          # seconds between looks at the slots of a waiting request

_held = threading.local()


def host_cores():
    """The cores this process may run on (its affinity mask)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def weight(vcpus, single_threaded=False):
    """How many host-core slots an emulator of vcpus virtual CPUs takes."""
    if single_threaded:
        return 1
    return max(1, min(int(vcpus), host_cores()))


def default_dir():
    """The slots' directory every run on this host shares by default."""
    return os.path.join(tempfile.gettempdir(), "tempest-cores-%d" % os.getuid())


def setup(directory=None):
    """Make the slot files (under directory, else where TEMPEST_CORES_DIR
    says, else default_dir()) and export the directory to children; returns
    the number of slots (the host's cores), 0 when the slots are off."""
    if directory is None:
        directory = os.environ.get(ENV, default_dir())
        if not directory:
            return 0
    n = host_cores()
    os.makedirs(directory, exist_ok=True)
    for i in range(n):
        open(os.path.join(directory, "slot.%d" % i), "a").close()
    open(os.path.join(directory, "gate"), "a").close()
    os.environ[ENV] = directory
    return n


def _slots(directory):
    """This host's slots (a directory made on a larger host may hold more)."""
    return [os.path.join(directory, "slot.%d" % i) for i in range(host_cores())]


def _try_lock(path):
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except BlockingIOError:
        os.close(fd)
        return None


def _take(directory, want):
    """Hold the gate, then take want free slots, waiting as they free up.
    Returns {slot path: its open, locked descriptor}."""
    gate = os.open(os.path.join(directory, "gate"), os.O_RDWR)
    taken = {}                  # slot path -> its locked descriptor
    try:
        fcntl.flock(gate, fcntl.LOCK_EX)
        slots = _slots(directory)
        want = min(want, len(slots))
        while True:
            for path in slots:
                if len(taken) < want and path not in taken:
                    fd = _try_lock(path)
                    if fd is not None:
                        taken[path] = fd
            if len(taken) == want:
                return taken
            time.sleep(POLL)
    except BaseException:
        for fd in taken.values():
            os.close(fd)
        raise
    finally:
        os.close(gate)


def reset_waited():
    """Start counting this thread's waits for slots afresh (one per job)."""
    _held.waited = 0.0


def waited():
    """Seconds this thread has waited for slots since reset_waited()."""
    return getattr(_held, "waited", 0.0)


def held_slots():
    """The numbers of the slots this thread holds now ([] for none)."""
    return list(getattr(_held, "slots", []))


def holding():
    """Whether this thread holds host-core slots now."""
    return getattr(_held, "depth", 0) > 0


@contextlib.contextmanager
def covered():
    """For a helper thread whose emulator another thread's slots already
    cover (a pair of machines on one segment, whose job holds the slots
    of both while they run together): requests in the body take no slots,
    as if this thread held them.  Without it the helper would wait for
    the slots its own job holds until that job gave up."""
    _held.depth = getattr(_held, "depth", 0) + 1
    try:
        yield
    finally:
        _held.depth -= 1


@contextlib.contextmanager
def hold(want):
    """Hold want host-core slots for the body (no-op without TEMPEST_CORES_DIR
    or when this thread already holds some).  Yields the seconds waited."""
    directory = os.environ.get(ENV)
    if not directory or getattr(_held, "depth", 0) or not os.path.isdir(directory):
        _held.depth = getattr(_held, "depth", 0) + 1
        try:
            yield 0.0
        finally:
            _held.depth -= 1
        return
    start = time.monotonic()
    taken = _take(directory, want)
    _held.waited = waited() + time.monotonic() - start
    _held.depth = 1
    _held.slots = sorted(int(p.rsplit(".", 1)[1]) for p in taken)
    try:
        yield time.monotonic() - start
    finally:
        _held.depth = 0
        _held.slots = []
        for fd in taken.values():
            os.close(fd)
