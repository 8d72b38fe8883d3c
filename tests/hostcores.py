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

How: the slots are files slot.0 .. slot.N-1 in the directory named by the
environment variable TEMPEST_CORES_DIR (tests/check.py sets it, so the
host scripts it starts share the same slots); a slot is held by an
flock(2) on it.  Only the holder of the gate file's lock takes slots, so
a request for every slot waits at the gate until the running boots end
and no smaller request can overtake it; a holder never waits for more
slots while holding some, so there is no deadlock.  Locks die with their
process, so a killed job never leaks a slot.  Requests are re-entrant per
thread: a boot inside a job that already holds slots takes no more.

Without TEMPEST_CORES_DIR (make run, a person's own scripts) nothing is
taken: an interactive machine must not block make check, nor wait for it.
"""

import contextlib
import fcntl
import os
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


def setup(directory):
    """Make the slot files under directory and export it to children;
    returns the number of slots (the host's cores)."""
    n = host_cores()
    os.makedirs(directory, exist_ok=True)
    for i in range(n):
        open(os.path.join(directory, "slot.%d" % i), "a").close()
    open(os.path.join(directory, "gate"), "a").close()
    os.environ[ENV] = directory
    return n


def _slots(directory):
    names = [f for f in os.listdir(directory) if f.startswith("slot.")]
    return sorted(os.path.join(directory, f) for f in names)


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
    Returns the open, locked descriptors."""
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
                return list(taken.values())
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


def holding():
    """Whether this thread holds host-core slots now."""
    return getattr(_held, "depth", 0) > 0


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
    fds = _take(directory, want)
    _held.waited = waited() + time.monotonic() - start
    _held.depth = 1
    try:
        yield time.monotonic() - start
    finally:
        _held.depth = 0
        for fd in fds:
            os.close(fd)
