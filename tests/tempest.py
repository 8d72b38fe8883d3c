#!/usr/bin/env python3
"""Boot Tempest in QEMU or Bochs: the machine presets, emulator command
lines, per-run boot ISOs, and a time-limited boot that captures the serial
console.

Used three ways:

  * by the Makefile:  tempest.py run|bochs|debug --machine NAME --opts "..."
  * by tests/check.py and the benchmark harness, as a module:
        import tempest
        m = tempest.machine("hector")
        status, output = tempest.boot(m, "ktest=all poweroff")
  * by hand:  tempest.py machines   (the presets and their distance matrices)
              tempest.py cmdline --machine hector   (the QEMU command line)

The presets come from machines.conf at the top of the tree (one line each;
the file's header explains the columns).  A machine may also be given ad hoc
as key=value pairs, e.g. --machine cpus=4,mem=512 (one node, no SRAT) or
--machine cpus=8,nodes=2,mem=128,dist=10/20.

How a boot ends (boot() and the run/bochs commands):

  * QEMU: the kernel powers off through ACPI (QEMU exits 0), or writes a
    value v to port 0xf4 on panic (isa-debug-exit: QEMU exits (v<<1)|1).
    With -no-reboot a triple fault also makes QEMU exit 0, so QEMU logs
    CPU resets (-d cpu_reset) and a "Triple fault" there is a failure.
  * Bochs: the kernel writes "Shutdown" to port 0x8900 or powers off through
    ACPI; Bochs reports either as a "panic" in its log, which tells them
    apart from a real emulator panic (e.g. a triple fault).
  * Either way, a console line starting with PANIC is a failure, and so is
    passing the time limit.  If the kernel prints PANIC but the machine does
    not stop within PANIC_GRACE seconds, the emulator is killed.

Typing into the console (QEMU only): boot(..., typist=fn) runs fn(console)
in a thread while the machine runs; console.expect(pattern) waits for the
console to show a regular expression and console.send(bytes) types bytes
into COM1's receiver, as keys would (Ctrl-C is b"\x03").  QEMU's serial
port is then its stdio chardev, with standard output on the console file
(as before) and standard input a pipe from the harness.  What fn returns
is BootResult.typist_result; an exception it raises is .typist_error, and
stops the machine.

Only the python3 standard library is used.
"""

import argparse
import hashlib
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
# TEMPEST_KERNEL boots another kernel image (e.g. to test this harness).
KERNEL = os.environ.get("TEMPEST_KERNEL") or os.path.join(BUILD, "kernel.elf")
MKISO = os.path.join(ROOT, "tools", "mkiso.sh")
ISO_CACHE = os.path.join(BUILD, "iso")

QEMU = "qemu-system-x86_64"
BOCHS = "bochs"
# Debian's Bochs 2.7 runs out of timers ("register_timer: too many
# registered timers") with 16 CPUs; 15 boot.
BOCHS_MAX_CPUS = 15
ACCELS = ("tcg", "kvm", "icount")
# Deterministic instruction-counted time: one vCPU thread, 2^5 ns of virtual
# time per instruction, and no sleeping when all CPUs are idle (virtual time
# jumps to the next timer instead).
ICOUNT_ARGS = ["-accel", "tcg,thread=single", "-icount", "shift=5,sleep=off"]

DEFAULT_POWEROFF_TIMEOUT = 600   # seconds, when poweroff is set and none given
PANIC_GRACE = 15                 # seconds a panicked machine may take to stop
DEBUG_EXIT_PORT = 0xF4

# A console line starting with PANIC marks a kernel panic.
PANIC_RE = re.compile(r"^PANIC", re.M)
# Bochs log lines that mean the guest powered the machine off.
BOCHS_POWEROFF = ("Shutdown port: shutdown requested",
                  "ACPI control: soft power off")

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


# --------------------------------------------------------------------------
# Machines (tests/machines.py) and disks (tests/disks.py)

from machines import (MACHINES_CONF, Machine, MachineError, load_machines,  # noqa: E402,F401
                      machine)
from disks import (SCRATCH_MIB, bochs_ata_disks, disk_args, disk_plan)  # noqa: E402,F401
import hostcores  # noqa: E402

# --------------------------------------------------------------------------
# Boot ISOs: one per (kernel, mkiso.sh, options), cached under build/iso/.

_SAFE_OPTS = re.compile(r"[A-Za-z0-9_=,.:/+@%*-]*")


def check_opts(opts):
    """Options go into grub.cfg unquoted; refuse what GRUB would mangle."""
    for word in opts.split():
        if not _SAFE_OPTS.fullmatch(word):
            raise ValueError("option %r has characters the GRUB menu cannot "
                             "carry (allowed: letters, digits and _=,.:/+@%%*-)"
                             % word)
    return " ".join(opts.split())


def _sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


_iso_lock = threading.Lock()


def make_iso(opts="", kernel=KERNEL):
    """Path of a boot ISO whose GRUB entry boots kernel with opts.

    Made with tools/mkiso.sh into a temporary file and renamed into
    build/iso/, so parallel runs (threads or processes) never see a partial
    ISO; ISOs of older kernels are pruned once they are ten minutes old."""
    opts = check_opts(opts)
    if not os.path.exists(kernel):
        raise FileNotFoundError("%s does not exist; run make first" % kernel)
    khash = _sha(kernel)
    key = hashlib.sha256(("%s\0%s\0%s" % (khash, _sha(MKISO), opts))
                         .encode()).hexdigest()
    os.makedirs(ISO_CACHE, exist_ok=True)
    path = os.path.join(ISO_CACHE, "%s-%s.iso" % (khash[:12], key[:16]))
    if os.path.exists(path):
        os.utime(path)
        return path
    fd, tmp = tempfile.mkstemp(prefix=".mk-", suffix=".iso", dir=ISO_CACHE)
    os.close(fd)
    try:
        r = subprocess.run(["sh", MKISO, kernel, tmp, opts],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            raise RuntimeError("mkiso.sh failed:\n" + r.stdout.decode(errors="replace"))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    _prune_isos(khash[:12])
    return path


def _prune_isos(current):
    now = time.time()
    with _iso_lock:
        try:
            names = os.listdir(ISO_CACHE)
        except OSError:
            return
        for name in names:
            p = os.path.join(ISO_CACHE, name)
            try:
                old = now - os.path.getmtime(p) > 600
                if old and (not name.startswith(current + "-")
                            or name.startswith(".mk-")):
                    os.unlink(p)
            except OSError:
                pass


# --------------------------------------------------------------------------
# Command lines

def accel_args(accel):
    if accel == "tcg":
        return ["-accel", "tcg,thread=multi"]
    if accel == "kvm":
        return ["-accel", "kvm"]
    if accel == "icount":
        return list(ICOUNT_ARGS)
    raise ValueError("unknown accelerator %r (want %s)" % (accel, "|".join(ACCELS)))


def numa_args(m):
    """-object/-numa arguments for a NUMA machine; none for one node."""
    if not m.numa:
        return []
    args = []
    for n in range(m.nodes):
        cpus = m.node_cpus(n)
        cpuspec = str(cpus[0]) if len(cpus) == 1 else "%d-%d" % (cpus[0], cpus[-1])
        args += ["-object", "memory-backend-ram,id=m%d,size=%dM" % (n, m.mem),
                 "-numa", "node,nodeid=%d,cpus=%s,memdev=m%d" % (n, cpuspec, n)]
    for i in range(m.nodes):
        for j in range(i + 1, m.nodes):
            args += ["-numa", "dist,src=%d,dst=%d,val=%d" % (i, j, m.distance(i, j))]
    return args


def qemu_cmd(m, iso, accel="tcg", serial=None, extra=()):
    """The QEMU command line booting iso on machine m.

    serial is a QEMU -serial argument (e.g. "file:out.txt", "mon:stdio");
    None leaves the serial and monitor arguments to the caller (extra)."""
    cmd = [QEMU, "-machine", "pc", "-cpu", "max",
           "-smp", str(m.cpus), "-m", "%dM" % m.total_mem,
           "-display", "none", "-no-reboot",
           "-device", "isa-debug-exit,iobase=0x%x,iosize=4" % DEBUG_EXIT_PORT]
    cmd += accel_args(accel)
    cmd += numa_args(m)
    if serial is not None:
        cmd += ["-serial", serial]
        if not serial.startswith("mon:"):
            cmd += ["-monitor", "none"]
    cmd += ["-cdrom", iso, "-boot", "d"]
    cmd += list(extra)
    return cmd


# The network (NET=user): QEMU's user-mode network, restricted so the
# guest reaches no host but through the forwards named here, each from
# 127.0.0.1 only.  The guest is slirp's 10.0.2.15/24 and its gateway
# 10.0.2.2 (slirp's, which maps it to the host's loopback); the kernel
# is told so by ip= (kern/net/inet/ether.c).  The driver is legacy-only
# (drivers/net/virtio_net.c), hence disable-modern=on.
NET_GUEST_IP = "ip=10.0.2.15/24,10.0.2.2"


# The peer segment (NET=peer): Tempest and the Linux peer on a virtual
# Ethernet of their own, with nothing else on it.  Each QEMU's netdev
# dgram sends every frame its guest transmits as one UDP datagram from
# 127.0.0.1:LOCAL to 127.0.0.1:REMOTE, and gives its guest every datagram
# that arrives on LOCAL; the other QEMU has the two ports swapped.  No
# host address but 127.0.0.1 is bound or sent to, and neither guest has
# a gateway: there is no route off 10.0.3.0/24.  Tempest is 10.0.3.1
# (ip=, no gateway), the peer 10.0.3.2 (its own script sets it, and
# tools/linux_peer.py loads virtio_net); each device has its own MAC.
# Frames sent before the other QEMU listens are lost, as on a cable not
# yet plugged in (ARP and TCP send again).
SEGMENT_NET = "10.0.3.0/24"
SEGMENT_TEMPEST = ("10.0.3.1", "52:54:00:0a:03:01")
SEGMENT_PEER = ("10.0.3.2", "52:54:00:0a:03:02")


class Segment:
    """One machine's end of the peer segment: the UDP ports on 127.0.0.1
    it receives on (local) and sends to (remote), its address and MAC."""

    def __init__(self, local, remote, ip, mac):
        self.local, self.remote, self.ip, self.mac = int(local), int(remote), ip, mac

    def other_end(self):
        """The end of the machine across the segment."""
        ip, mac = SEGMENT_PEER if self.ip == SEGMENT_TEMPEST[0] else SEGMENT_TEMPEST
        return Segment(self.remote, self.local, ip, mac)

    def ports(self):
        return "%d:%d" % (self.local, self.remote)

    def qemu_args(self, legacy):
        """-netdev and -device; legacy: virtio's legacy interface only
        (Tempest's driver knows no other)."""
        nd = ("dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port=%d,"
              "remote.type=inet,remote.host=127.0.0.1,remote.port=%d" % (self.local, self.remote))
        dev = "virtio-net-pci,netdev=n0,mac=%s%s" % (self.mac, ",disable-modern=on" if legacy else "")
        return ["-netdev", nd, "-device", dev]

    def __repr__(self):
        return "Segment(%s, %s, 127.0.0.1:%d<-%d)" % (self.ip, self.mac, self.local, self.remote)


def new_segment():
    """(Tempest's end, the peer's end) of a new segment on two UDP ports
    of 127.0.0.1 free when asked (the kernel's choice; they are let go
    for QEMU to take, so another program could still take one first,
    and then QEMU fails to start, saying so)."""
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        a, b = (s.getsockname()[1] for s in socks)
    finally:
        for s in socks:
            s.close()
    mine = Segment(a, b, *SEGMENT_TEMPEST)
    return mine, mine.other_end()


def parse_segment(ports):
    """Tempest's end from "LOCAL:REMOTE" (tempest.py run --segment)."""
    local, _, remote = ports.partition(":")
    return Segment(int(local), int(remote), *SEGMENT_TEMPEST)


def net_args(fwds=()):
    """QEMU arguments for the user network, or for Tempest's end of the
    peer segment when fwds is a Segment.  fwds: (host port, guest
    port) pairs, TCP forwards from 127.0.0.1:host to the guest; or
    ("guest", guest port, host port), a guest's connection to
    10.0.2.100:guest port carried to 127.0.0.1:host port (restrict=on
    refuses the guest everything else, 10.0.2.2 included; QEMU connects
    to that host port when it starts, once)."""
    if isinstance(fwds, Segment):
        return fwds.qemu_args(legacy=True)
    nd = "user,id=n0,restrict=on"
    for f in fwds:
        if f[0] == "guest":
            nd += ",guestfwd=tcp:10.0.2.100:%d-tcp:127.0.0.1:%d" % (int(f[1]), int(f[2]))
        else:
            nd += ",hostfwd=tcp:127.0.0.1:%d-:%d" % (int(f[0]), int(f[1]))
    return ["-netdev", nd, "-device", "virtio-net-pci,netdev=n0,disable-modern=on"]


def net_opts(opts, net):
    """opts with the guest's address added when there is a network (on
    the peer segment, ip=10.0.3.1/24: no gateway)."""
    if net is None or any(w.startswith("ip=") for w in opts.split()):
        return opts
    if isinstance(net, Segment):
        return (opts + " ip=%s/%s" % (net.ip, SEGMENT_NET.split("/")[1])).strip()
    return (opts + " " + NET_GUEST_IP).strip()


def parse_hostfwd(spec):
    """"HOST:GUEST" or "PORT" (the same on both sides) as a pair of ints."""
    host, _, guest = spec.partition(":")
    return int(host), int(guest or host)


def bochsrc(m, iso, com1, log, magic_break=False, ata=()):
    """A bochsrc for Debian's Bochs 2.7 (x86-64, SMP, headless).

    Debian's build has no nogui display, so rfb is used without waiting for
    a client (rfb takes the first free port from 5900 up, so runs may go in
    parallel); its sound plugin crashes, hence the dummy driver.  Bochs has
    no SRAT or SLIT: the kernel sees one node whatever the preset says.

    The boot CD-ROM is ata1-master, leaving the primary channel to disks:
    ata is [(slot, flat image path, cylinders)] from bochs_ata_disks."""
    disks = ["%s: type=disk, path=\"%s\", mode=flat, cylinders=%d, heads=16, spt=63"
             % (slot, path, cyl) for slot, path, cyl in ata]
    return "\n".join([
        "megs: %d" % m.total_mem,
        "cpu: count=%d, ips=50000000, reset_on_triple_fault=0" % m.cpus,
        "cpuid: x86_64=1",
        "romimage: file=/usr/share/bochs/BIOS-bochs-latest",
        "vgaromimage: file=/usr/share/vgabios/vgabios.bin",
        "ata0: enabled=1, ioaddr1=0x1f0, ioaddr2=0x3f0, irq=14",
        "ata1: enabled=1, ioaddr1=0x170, ioaddr2=0x370, irq=15",
        "ata1-master: type=cdrom, path=\"%s\", status=inserted" % iso,
    ] + disks + [
        "boot: cdrom",
        "com1: enabled=1, mode=file, dev=\"%s\"" % com1,
        "display_library: rfb, options=\"timeout=0\"",
        "sound: driver=dummy",
        "speaker: enabled=0",
        "clock: sync=none, time0=utc",
        "panic: action=fatal",
        "error: action=report",
        "info: action=report",
        "debug: action=ignore",
        "log: \"%s\"" % log,
        "port_e9_hack: enabled=1",
        "magic_break: enabled=%d" % (1 if magic_break else 0),
        "",
    ])


# --------------------------------------------------------------------------
# Running

def clean_output(raw):
    """Serial bytes to text: \\r\\n to \\n, escape sequences dropped."""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _ANSI_RE.sub("", text)


def panic_line(output):
    m = re.search(r"^PANIC.*$", output, re.M)
    return m.group(0).strip() if m else None


def has_poweroff(opts):
    return "poweroff" in opts.split()


class BootResult:
    """What boot() returns; unpacks as (status, output).

    status is "ok" when the machine powered off cleanly with no PANIC line,
    otherwise a one-line reason ("timeout after 300 s", "panic: PANIC: ...",
    "kernel exit code 1 (port 0xf4)", "triple fault", ...)."""

    def __init__(self, status, output, returncode=None, elapsed=0.0,
                 command=None, log=""):
        self.status = status
        self.output = output
        self.returncode = returncode
        self.elapsed = elapsed
        self.command = command
        self.log = log              # emulator stderr/log tail, for diagnosis
        self.typist_result = None   # what boot(typist=fn)'s fn returned
        self.typist_error = None    # or the exception it raised, as text

    @property
    def ok(self):
        return self.status == "ok"

    def __iter__(self):
        return iter((self.status, self.output))

    def __repr__(self):
        return "BootResult(%r, %d chars, %.1fs)" % (self.status, len(self.output), self.elapsed)


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def _tail(path, lines=20):
    return "\n".join(clean_output(_read(path)).splitlines()[-lines:])


def _kill_group(proc, grace=3.0):
    """Stop proc and everything in its process group; never hang."""
    if proc.poll() is not None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        except PermissionError:
            proc.send_signal(sig)
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass


# ---- No emulator outlives the program that started it ----
#
# Every entry point that starts emulators (make run, make bench's sweeps,
# make check, the Linux peer) calls die_with_parent() and
# stop_on_signals() first, and starts each emulator through
# emulator_command():
#
#   - SIGTERM and SIGHUP become KeyboardInterrupt, as Ctrl-C is, so the
#     same finally blocks that stop the emulators on Ctrl-C run for them
#     (GNU make passes SIGTERM on to its recipe; a closed terminal sends
#     SIGHUP);
#   - the kernel sends SIGTERM to a program whose parent dies (Linux's
#     PR_SET_PDEATHSIG), so a chain make, userrun.py, tempest.py, QEMU
#     comes down link by link even when a link is killed outright;
#   - each emulator runs under `setpriv --pdeathsig TERM`: QEMU ends (it
#     takes SIGTERM as a quit) when the Python thread that started it is
#     gone, whatever ended it, even SIGKILL;
#   - a program started under nohup (SIGHUP ignored) is left to live on:
#     neither a hang-up nor its parent's end stops it, and one started
#     already detached (its parent init) has no parent to follow.

PR_SET_PDEATHSIG = 1
_SETPRIV = shutil.which("setpriv")


def under_nohup():
    """Was this program started with SIGHUP ignored (nohup, or a parent that
    asked the same)?  Then neither a hang-up nor its parent's end stops it."""
    return signal.getsignal(signal.SIGHUP) == signal.SIG_IGN


def die_with_parent(sig=signal.SIGTERM):
    """Ask the kernel for sig when this process's parent dies (Linux only;
    elsewhere nothing).  If the parent is already gone, sig comes now."""
    if under_nohup():
        return                  # meant to outlive its terminal, and so its parent
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        parent = os.getppid()
        if parent == 1:
            return              # started detached (or by a container's init): none to follow
        if libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
            return
        if os.getppid() != parent:
            os.kill(os.getpid(), sig)
    except (OSError, AttributeError):
        pass


def stop_on_signals(sigs=(signal.SIGTERM, signal.SIGHUP)):
    """SIGTERM and SIGHUP raise KeyboardInterrupt in the main thread, once:
    later ones are ignored, so the cleanup they start is not cut short by
    a second signal (timeout(1) and terminals may signal a whole group).
    A terminal this program runs on that hangs up counts as SIGHUP: when
    make is the session's leader it takes the SIGHUP itself and waits for
    its recipe, which the kernel does not tell (a watcher thread looks)."""
    if under_nohup():
        sigs = tuple(s for s in sigs if s != signal.SIGHUP)
    def stop(signum, frame):
        for s in sigs:
            signal.signal(s, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt
    for s in sigs:
        signal.signal(s, stop)
    ttys = [fd for fd in (0, 1, 2) if _isatty(fd)]
    if ttys and signal.SIGHUP in sigs:
        def watch():
            while not any(terminal_hung_up(fd) for fd in ttys):
                time.sleep(0.5)
            os.kill(os.getpid(), signal.SIGHUP)
        threading.Thread(target=watch, name="hangup-watch", daemon=True).start()


def _isatty(fd):
    try:
        return os.isatty(fd)
    except OSError:
        return False


def emulator_command(cmd):
    """cmd so that it ends when the thread that starts it goes."""
    if _SETPRIV and sys.platform.startswith("linux"):
        return [_SETPRIV, "--pdeathsig", "TERM", "--"] + cmd
    return cmd


def call_child(cmd, grace=5.0):
    """subprocess.call, but on KeyboardInterrupt (Ctrl-C, or SIGTERM or
    SIGHUP under stop_on_signals) the child is sent SIGTERM and given grace
    seconds to clean up before SIGKILL; then KeyboardInterrupt goes on."""
    proc = subprocess.Popen(cmd)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise


def terminal_hung_up(fd=0):
    """Has the terminal on fd been hung up (its window closed)?  A hung-up
    terminal polls as POLLHUP; a live one does not.  A program that is not
    the session's leader gets no SIGHUP when the terminal closes (its
    leader does), so it looks.  Ask only about a file that was a terminal
    at the start: a hung-up one no longer says it is one (isatty fails)."""
    try:
        p = select.poll()
        p.register(fd, 0)
        return any(ev & (select.POLLHUP | select.POLLERR | select.POLLNVAL)
                   for _, ev in p.poll(0))
    except OSError:
        return True


def _watch(proc, outfile, timeout, echo=None, hung_up=None):
    """Wait for proc; returns (timed_out, panicked_and_stuck).

    Follows the console file: echoes new output to echo (a binary stream)
    if given, and stops the machine if it printed PANIC and has not stopped
    PANIC_GRACE seconds later.  hung_up, a function, is asked every round
    whether to stop (KeyboardInterrupt when it says yes)."""
    start = time.monotonic()
    offset = 0
    partial = b""
    panic_at = None
    while True:
        done = proc.poll() is not None
        try:
            with open(outfile, "rb") as f:
                f.seek(offset)
                data = f.read()
        except OSError:
            data = b""
        if data:
            offset += len(data)
            if echo is not None:
                echo.write(data)
                echo.flush()
            chunk = partial + data
            if panic_at is None and re.search(rb"(^|[\r\n])PANIC", chunk):
                panic_at = time.monotonic()
            # The unfinished last line: all we need is whether PANIC could
            # still start it.
            partial = chunk[max(chunk.rfind(b"\n"), chunk.rfind(b"\r")) + 1:]
            if len(partial) >= 5:
                partial = b"."
        if done:
            return False, False
        if hung_up is not None and hung_up():
            raise KeyboardInterrupt
        now = time.monotonic()
        if panic_at is not None and now - panic_at > PANIC_GRACE:
            _kill_group(proc)
            return False, True
        if timeout and now - start > timeout:
            _kill_group(proc)
            return True, False
        time.sleep(WATCH_INTERVAL)


def _status(timed_out, timeout, output, stuck=False):
    if timed_out:
        return "timeout after %g s" % timeout
    p = panic_line(output)
    if p:
        return "panic: %s%s" % (p[:200], " (machine did not stop)" if stuck else "")
    return None


def _qemu_status(rc, logtext):
    if rc == 0:
        if "Triple fault" in logtext:
            return "triple fault (the CPU reset; -no-reboot made QEMU exit)"
        return "ok"
    if rc > 0 and rc & 1 and rc > 1:
        return "kernel exit code %d (port 0x%x)" % (rc >> 1, DEBUG_EXIT_PORT)
    if rc < 0:
        return "qemu killed by signal %d" % -rc
    return "qemu exited with status %d" % rc


def _bochs_status(logtext):
    if any(s in logtext for s in BOCHS_POWEROFF):
        return "ok"
    for line in logtext.splitlines():
        if ">>PANIC<<" in line:
            return "bochs: " + line.split(">>PANIC<<", 1)[1].strip()[:200]
    return None


_live = set()
_live_lock = threading.Lock()
_stopping = False


# How often _watch reads the console file (seconds).  tools/boottime.py
# makes it finer, to time the console's lines closely.
WATCH_INTERVAL = 0.2
# When start_emulator last started an emulator (time.monotonic()), for
# tools/boottime.py's phases: a boot's own start, not its preparation's.
last_emulator_start = None


def start_emulator(cmd, **popen_args):
    """Popen cmd as an emulator in a session of its own, under
    emulator_command (it ends with the thread that starts it; timeout(1)
    in front passes the SIGTERM on), counted among those kill_all stops.
    None, and nothing started, once kill_all has run."""
    with _live_lock:
        if _stopping:
            return None
        global last_emulator_start
        last_emulator_start = time.monotonic()
        proc = subprocess.Popen(emulator_command(cmd), start_new_session=True, **popen_args)
        _live.add(proc)
    return proc


def stop_emulator(proc):
    """Stop what start_emulator started (its whole process group), if it
    still runs, and stop counting it."""
    _kill_group(proc)
    with _live_lock:
        _live.discard(proc)


def kill_all():
    """Stop every emulator boot() started and refuse to start more (for a
    harness that was interrupted)."""
    global _stopping
    _stopping = True
    with _live_lock:
        procs = list(_live)
    for p in procs:
        _kill_group(p, grace=1.0)


class ConsoleTimeout(Exception):
    pass


class Console:
    """The serial console of a running boot, for a typist (boot's typist=):
    expect() waits for output, send() types input."""

    def __init__(self, outfile, infd, running):
        self._out = outfile
        self._in = infd
        self._running = running
        self.pos = 0            # where the next expect() starts looking

    def text(self):
        """Everything the console has shown, raw (\\r\\n kept)."""
        return _read(self._out).decode("latin-1")

    def expect(self, pattern, timeout=60):
        """Wait until the regular expression pattern appears after the
        end of the last match; returns the match.  Raises ConsoleTimeout
        after timeout seconds, or when the machine has stopped."""
        rx = re.compile(pattern, re.M)
        deadline = time.monotonic() + timeout
        while True:
            running = self._running()
            m = rx.search(self.text(), self.pos)
            if m:
                self.pos = m.end()
                return m
            if not running:
                raise ConsoleTimeout("the machine stopped before %r appeared" % pattern)
            if time.monotonic() > deadline:
                raise ConsoleTimeout("%r did not appear within %g s" % (pattern, timeout))
            time.sleep(0.1)

    def send(self, data):
        """Type data (bytes, or text encoded as UTF-8)."""
        if isinstance(data, str):
            data = data.encode()
        while data:
            data = data[os.write(self._in, data):]


def _start_typist(typist, console, proc, result):
    """Run typist(console) in a thread; its value or error goes to result
    (a BootResult's fields), and an error stops the machine."""
    def run():
        try:
            result["typist_result"] = typist(console)
        except Exception as e:  # the boot's result reports it
            result["typist_error"] = "%s: %s" % (type(e).__name__, e)
            _kill_group(proc)
    t = threading.Thread(target=run, name="typist", daemon=True)
    t.start()
    return t


def cores_for(machine_spec, accel="tcg", emulator="qemu"):
    """Host-core slots a boot takes (tests/hostcores.py): one for the
    single-threaded emulators (icount, Bochs), else one per virtual CPU up
    to all of the host's cores."""
    single = emulator == "bochs" or accel == "icount"
    return hostcores.weight(machine(machine_spec).cpus, single_threaded=single)


def opt_cpus(opts, machine_spec):
    """The CPUs a boot uses: maxcpus= from opts when it is a number below
    the machine's count, else the machine's count."""
    cpus = machine(machine_spec).cpus
    for word in opts.split():
        key, _, value = word.partition("=")
        if key == "maxcpus" and value.isdigit() and 0 < int(value) < cpus:
            cpus = int(value)
    return cpus


def pvspin_opts(machine_spec, opts, accel="tcg", emulator="qemu", ratio=1):
    """opts with pvspin=on added when the boot's CPUs are at least ratio
    times the host's cores and more than them (the default ratio 1: more
    CPUs than cores), unless opts say pvspin= already.  Never under icount
    or Bochs (one host thread runs every virtual CPU in turn, so a waiter
    never keeps its lock's holder from running) nor when the host has the
    cores: there pvspin=on would only cost (kern/lock/pvspin.c).  What the
    harness and make run pass; make check asks for ratio 4 (checklib)."""
    if "pvspin=" in opts or accel == "icount" or emulator != "qemu":
        return opts
    cpus, cores = opt_cpus(opts, machine_spec), hostcores.host_cores()
    if cpus > cores and cpus >= ratio * cores:
        return (opts + " pvspin=on").strip()
    return opts


def boot(machine_spec, opts="poweroff", accel="tcg", timeout=300,
         emulator="qemu", kernel=KERNEL, echo=None, keep=None, disks=None,
         ata_disks=(), disk_images=(), typist=None, net=None):
    """Boot a machine (see _boot) once it holds its host cores: under make
    check (TEMPEST_CORES_DIR set) a boot waits until the host has the cores
    its virtual CPUs can use free, and its time limit starts then."""
    with hostcores.hold(cores_for(machine_spec, accel, emulator)):
        return _boot(machine_spec, opts, accel, timeout, emulator, kernel, echo, keep,
                     disks, ata_disks, disk_images, typist, net)


def _boot(machine_spec, opts="poweroff", accel="tcg", timeout=300,
          emulator="qemu", kernel=KERNEL, echo=None, keep=None, disks=None,
          ata_disks=(), disk_images=(), typist=None, net=None):
    """Boot a machine with the kernel command line opts and a time limit.

    Returns a BootResult, which unpacks as (status, output): status "ok"
    when the machine powered off with no PANIC line, else the reason;
    output the serial console as text (\\r\\n folded to \\n).  echo, a
    binary stream, receives the console as it arrives.  keep, a directory,
    receives the console, emulator log and command line of the run.

    Disks (see "Disks" above): disk_images, raw image files attached as
    virtio disks vda, vdb, ... in order (QEMU only); disks, sizes in MiB of
    scratch virtio disks after them (None: the preset's disks, made up
    with SCRATCH_MIB scratch disks, spread over its controllers);
    ata_disks, sizes in MiB of scratch ATA disks (QEMU and Bochs).
    typist: a function of a Console that types into the running machine
    (QEMU only; see "Typing into the console" above).
    net: None (no network device), or the user network's TCP forwards,
    a list of (host port, guest port), possibly empty, or a Segment,
    Tempest's end of the peer segment (QEMU only)."""
    if typist is not None and emulator != "qemu":
        raise ValueError("typing into the console needs QEMU")
    m = machine(machine_spec)
    opts = net_opts(opts, net)
    iso = make_iso(opts, kernel)
    tmp = tempfile.mkdtemp(prefix="tempest-")
    out = os.path.join(tmp, "console.txt")
    log = os.path.join(tmp, "emulator.log")
    err = os.path.join(tmp, "stderr.txt")
    open(out, "wb").close()
    typed = {}
    try:
        if emulator == "qemu":
            serial, extra = "file:" + out, []
            if typist is not None:
                # stdio: output to the console file, input from our pipe.
                serial = None
                extra = ["-chardev", "stdio,id=con0,signal=off", "-serial", "chardev:con0",
                         "-monitor", "none"]
            cmd = qemu_cmd(m, iso, accel, serial=serial,
                           extra=extra + ["-d", "cpu_reset", "-D", log]
                           + disk_args(m, tmp, disks, disk_images, ata_disks)
                           + (net_args(net) if net is not None else []))
            cwd = tmp
        elif emulator == "bochs":
            if m.cpus > BOCHS_MAX_CPUS:
                return BootResult("Bochs runs at most %d cpus (%s has %d)"
                                  % (BOCHS_MAX_CPUS, m.name, m.cpus), "")
            # Bochs has no virtio: a preset's disks are left out, and asking
            # for virtio disks explicitly is an error.
            if disks or disk_images:
                raise ValueError("Bochs has no virtio disks; use ata_disks")
            rc_file = os.path.join(tmp, "bochs.rc")
            conf = os.path.join(tmp, "bochsrc")
            with open(conf, "w") as f:
                f.write(bochsrc(m, iso, out, log, ata=bochs_ata_disks(tmp, ata_disks)))
            with open(rc_file, "w") as f:
                f.write("c\n")
            cmd = [BOCHS, "-q", "-f", conf, "-rc", rc_file]
            cwd = tmp
        else:
            raise ValueError("unknown emulator %r" % emulator)
        if shutil.which(cmd[0]) is None:
            return BootResult("%s is not installed (run sh tools/install-deps.sh)"
                              % cmd[0], "", None, 0.0, cmd)
        # Should this process die without stopping the emulator, timeout(1)
        # still ends it a minute after the limit.
        wrapped = cmd
        if timeout and shutil.which("timeout"):
            wrapped = ["timeout", "-s", "KILL", str(int(timeout) + 60)] + cmd
        start = time.monotonic()
        with open(err, "wb") as errf, open(out, "ab") as outf:
            if typist is None:
                streams = dict(stdin=subprocess.DEVNULL, stdout=errf, stderr=subprocess.STDOUT)
            else:
                streams = dict(stdin=subprocess.PIPE, stdout=outf, stderr=errf)
            proc = start_emulator(wrapped, cwd=cwd, **streams)
            if proc is None:
                return BootResult("interrupted", "", None, 0.0, cmd)
            try:
                if typist is not None:
                    console = Console(out, proc.stdin.fileno(), lambda: proc.poll() is None)
                    typing = _start_typist(typist, console, proc, typed)
                timed_out, stuck = _watch(proc, out, timeout, echo)
            finally:
                stop_emulator(proc)
            if typist is not None:
                typing.join(timeout=5)
                proc.stdin.close()
        elapsed = time.monotonic() - start
        rc = proc.returncode
        output = clean_output(_read(out))
        logtext = clean_output(_read(log))
        status = _status(timed_out, timeout, output, stuck)
        if status is None and _stopping:
            status = "interrupted"
        if status is None:
            if emulator == "qemu":
                status = _qemu_status(rc, logtext)
            else:
                status = _bochs_status(logtext) or \
                    "bochs exited with status %s without powering off" % rc
        if status != "ok" and emulator == "qemu" and rc not in (0, None) \
                and not status.startswith(("kernel exit", "panic", "timeout")):
            status += ": " + " | ".join(_tail(err, 3).splitlines())
        diag = _tail(err, 20) + "\n" + "\n".join(
            l for l in logtext.splitlines()[-40:] if "PANIC" in l or "Triple" in l)
        if keep:
            os.makedirs(keep, exist_ok=True)
            for src, name in ((out, "console.txt"), (log, "emulator.log"),
                              (err, "stderr.txt"),
                              (os.path.join(tmp, "bochsrc"), "bochsrc")):
                if os.path.exists(src):
                    shutil.copy(src, os.path.join(keep, name))
            with open(os.path.join(keep, "command.txt"), "w") as f:
                f.write(" ".join(cmd) + "\n")
        r = BootResult(status, output, rc, elapsed, cmd, diag)
        r.typist_result, r.typist_error = typed.get("typist_result"), typed.get("typist_error")
        return r
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------
# The commands

def _effective_timeout(timeout, opts):
    if timeout == 0 and has_poweroff(opts):
        return DEFAULT_POWEROFF_TIMEOUT
    return timeout


def cmd_run(args):
    """QEMU with the console on the terminal (Ctrl-A X quits, Ctrl-A C
    switches to the QEMU monitor); the console is also logged to scan it
    for PANIC."""
    m = machine(args.machine)
    args.opts = pvspin_opts(m, args.opts, args.accel)
    net = [parse_hostfwd(f) for f in args.hostfwd] if args.net == "user" else None
    if args.net == "peer":
        if not args.segment:
            raise ValueError("--net peer needs --segment LOCAL:REMOTE (make run NET=peer "
                             "boots the peer and gives them)")
        net = parse_segment(args.segment)
    args.opts = net_opts(args.opts, net)
    timeout = _effective_timeout(args.timeout, args.opts)
    iso = make_iso(args.opts, args.kernel)
    tmp = tempfile.mkdtemp(prefix="tempest-run-")
    out = os.path.join(tmp, "console.txt")
    log = os.path.join(tmp, "emulator.log")
    open(out, "wb").close()
    cmd = qemu_cmd(m, iso, args.accel, serial=None, extra=[
        "-chardev", "stdio,id=con0,mux=on,logfile=%s" % out,
        "-serial", "chardev:con0", "-mon", "chardev=con0",
        "-d", "cpu_reset", "-D", log] + disk_args(m, tmp, None, args.disk)
        + (net_args(net) if net is not None else []))
    print("tempest: %s (%s), accel %s, options '%s'%s" % (
        m.name, m.describe(), args.accel, args.opts,
        ", limit %d s" % timeout if timeout else ""), file=sys.stderr)
    if args.verbose:
        print("tempest: " + " ".join(cmd), file=sys.stderr)
    sys.stderr.flush()
    try:
        # Same process group as the terminal: QEMU reads the console from it.
        on_terminal = os.isatty(0)
        proc = subprocess.Popen(emulator_command(cmd))
    except FileNotFoundError:
        print("tempest: %s is not installed (run sh tools/install-deps.sh)"
              % QEMU, file=sys.stderr)
        return 2
    # Ctrl-C, SIGTERM, SIGHUP (stop_on_signals) or the terminal closed:
    # the emulator is stopped, and nothing is left.
    interrupted = False
    try:
        timed_out, stuck = _watch(proc, out, timeout,
                                  hung_up=terminal_hung_up if on_terminal else None)
    except KeyboardInterrupt:
        timed_out, stuck, interrupted = False, False, True
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    try:
        if interrupted:
            _say("\ntempest: interrupted; the emulator is stopped")
            return 130
        output = clean_output(_read(out))
        status = _status(timed_out, timeout, output, stuck) or \
            _qemu_status(proc.returncode, clean_output(_read(log)))
        return _report(status)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _say(line):
    """A line on standard error, unless the terminal is gone (a closed
    window's terminal answers writes with EIO)."""
    try:
        print(line, file=sys.stderr, flush=True)
    except OSError:
        pass


def _report(status):
    if status == "ok":
        return 0
    _say("\ntempest: FAILED: %s" % status)
    return 1


def cmd_bochs(args):
    m = machine(args.machine)
    timeout = _effective_timeout(args.timeout, args.opts)
    if not timeout:
        print("tempest: Bochs runs without a limit; stop it with Ctrl-C",
              file=sys.stderr)
    print("tempest: bochs %s (%d cpus, %d MiB, one node: Bochs has no SRAT), "
          "options '%s'%s" % (m.name, m.cpus, m.total_mem, args.opts,
                              ", limit %d s" % timeout if timeout else ""),
          file=sys.stderr)
    sys.stderr.flush()
    echo = sys.stdout.buffer
    try:
        r = boot(m, args.opts, timeout=timeout, emulator="bochs", echo=echo, kernel=args.kernel,
                 keep=args.keep)
    except KeyboardInterrupt:
        return 130
    if r.output and not r.output.endswith("\n"):
        sys.stdout.write("\n")
        sys.stdout.flush()
    if r.status != "ok" and args.verbose:
        print(r.log, file=sys.stderr)
    return _report(r.status)


def _free_port(preferred):
    for port in (preferred, 0):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind(("127.0.0.1", port))
            return s.getsockname()[1]
        except OSError:
            continue
        finally:
            s.close()
    return preferred


def cmd_debug(args):
    m = machine(args.machine)
    iso = make_iso(args.opts, args.kernel)
    port = _free_port(1234)
    script = os.path.join(BUILD, "debug.gdb")
    serial_log = os.path.join(BUILD, "debug-serial.log")
    with open(script, "w") as f:
        f.write("# written by tests/tempest.py debug\n"
                "set architecture i386:x86-64\n"
                "set disassembly-flavor intel\n"
                "set pagination off\n"
                "file %s\n"
                "target remote :%d\n"
                "# e.g.: hbreak kmain, then continue\n" % (os.path.abspath(args.kernel), port))
    interactive = sys.stdin.isatty() and shutil.which("gdb")
    serial = ("file:" + serial_log) if interactive else "stdio"
    tmp = tempfile.mkdtemp(prefix="tempest-debug-")
    try:
        cmd = qemu_cmd(m, iso, args.accel, serial=serial,
                       extra=["-S", "-gdb", "tcp::%d" % port] + disk_args(m, tmp, None, args.disk))
        return _debug(m, cmd, port, script, serial_log, interactive)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _debug(m, cmd, port, script, serial_log, interactive):
    print("tempest: %s halted at the reset vector, gdb stub on port %d"
          % (m.name, port), file=sys.stderr)
    if not interactive:
        print("tempest: attach with:  gdb -x %s" % os.path.relpath(script),
              file=sys.stderr)
        sys.stderr.flush()
        try:
            return call_child(emulator_command(cmd))
        except KeyboardInterrupt:
            return 130
    print("tempest: the console goes to %s (tail -f it in another terminal)"
          % os.path.relpath(serial_log), file=sys.stderr)
    sys.stderr.flush()
    qemu = subprocess.Popen(emulator_command(cmd), stdin=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        # gdb must not die of the Ctrl-C it uses to stop the guest.
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            subprocess.call(["gdb", "-q", "-x", script])
        finally:
            signal.signal(signal.SIGINT, old)
    finally:
        _kill_group(qemu)
    return 0


def cmd_machines(args):
    presets = load_machines()
    for m in presets.values():
        print("%-10s %s" % (m.name, m.describe()))
        print("%-10s mimics %s" % ("", m.mimics))
        if m.nodes > 1 and args.verbose:
            for row in m.matrix():
                print("%-12s%s" % ("", " ".join("%2d" % d for d in row)))
    return 0


def cmd_cmdline(args):
    m = machine(args.machine)
    iso = make_iso(args.opts, args.kernel) if os.path.exists(args.kernel) else "build/tempest.iso"
    # Scratch disks are made where the printed command can still find them.
    scratch = os.path.join(BUILD, "scratch")
    os.makedirs(scratch, exist_ok=True)
    print(" ".join(qemu_cmd(m, iso, args.accel, serial="mon:stdio",
                            extra=disk_args(m, scratch, None, args.disk))))
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    def common(sp, accel=True, timeout=True):
        sp.add_argument("--machine", default="default",
                        help="preset name or key=value spec (default: default)")
        sp.add_argument("--opts", default="", help="kernel command line")
        if accel:
            sp.add_argument("--accel", default="tcg", choices=ACCELS)
        if timeout:
            sp.add_argument("--timeout", type=float, default=0,
                            help="seconds; 0 = none, or %d with poweroff"
                            % DEFAULT_POWEROFF_TIMEOUT)
        sp.add_argument("--kernel", default=KERNEL, help=argparse.SUPPRESS)
        sp.add_argument("-v", "--verbose", action="store_true")
        if accel:
            sp.add_argument("--disk", action="append", default=[], metavar="IMAGE",
                            help="attach a raw image as the next virtio disk (vda, vdb, ...; "
                            "repeatable), ahead of the preset's scratch disks")
            sp.add_argument("--net", choices=("user", "peer"),
                            help="a virtio-net device on QEMU's restricted user network, "
                            "or on the peer segment (with --segment)")
            sp.add_argument("--hostfwd", action="append", default=[], metavar="HOST:GUEST",
                            help="with --net user: forward TCP from 127.0.0.1:HOST to the guest")
            sp.add_argument("--segment", metavar="LOCAL:REMOTE",
                            help="with --net peer: the segment's UDP ports on 127.0.0.1, "
                            "this machine's and the peer's")

    common(sub.add_parser("run", help="boot in QEMU, console on the terminal"))
    sp = sub.add_parser("bochs", help="boot in Bochs, console on the terminal")
    common(sp, accel=False)
    sp.add_argument("--keep", help="directory to keep console, log and command in")
    common(sub.add_parser("debug", help="QEMU halted with its gdb stub, and gdb"),
           timeout=False)
    sp = sub.add_parser("machines", help="list the presets")
    sp.add_argument("-v", "--verbose", action="store_true",
                    help="print the distance matrices too")
    common(sub.add_parser("cmdline", help="print the QEMU command line"),
           timeout=False)
    args = p.parse_args(argv)
    die_with_parent()
    stop_on_signals()
    try:
        return {"run": cmd_run, "bochs": cmd_bochs, "debug": cmd_debug,
                "machines": cmd_machines, "cmdline": cmd_cmdline}[args.command](args)
    except (MachineError, ValueError, FileNotFoundError, RuntimeError) as e:
        print("tempest: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
