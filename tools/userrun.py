#!/usr/bin/env python3
"""Boot Tempest with a user space: what `make run` does.

    userrun.py [--machine NAME] [--accel tcg|kvm|icount] [--opts '...']
               [--timeout S] [--add DIR] [--disk IMAGE ...] [--run 'command']
               [--free SIZE] [--root PATH] [--userland busybox|debian]

A root image is built first (tools/mkroot.py): Debian's busybox-static with
its applet links, init, the lockstat tool, the user tests under /tests and
the benchmarks under /bench, and with --add a host directory under /add.
It is as large as its contents plus --free of free space (default 16M).
It is attached as the first virtio disk and mounted as the root (root=vda).
With --userland debian the root is a UFS image of Debian's own packages
instead (tools/debian_root.py: gcc, binutils, make, bash, coreutils ...),
with init, the user tests under /tests and --add's directory under /add.

With --root PATH the image is kept there: made on the first run, then
booted again as it is (the user's files persist; --add and --free apply
only when it is made; delete the file for a fresh one).  Its /etc/rc.run
is a command slot that each run fills in place (`s5cat -w`) with the
command, or with the empty-slot line for an interactive shell.  A kept
image must be clean (fsck.s5) before it is booted.  With --userland debian
the kept image is UFS: its slot is written in place by tools/cmdslot.py,
and fsck.ufs checks it.

With --net user the machine has a virtio-net eth0 on QEMU's restricted
user network (10.0.2.15/24, gateway 10.0.2.2; --hostfwd forwards).  With
--net peer it is 10.0.3.1/24 on the peer segment instead, a virtual
Ethernet of two machines joined through UDP on 127.0.0.1 and nothing else
(tests/tempest.py, Segment), and the Linux peer boots beside it on the
"up" preset as 10.0.3.2 (tools/linux_peer.py): it answers ping and serves
a page over HTTP on port 80 (busybox httpd), and with --userland debian
runs chrooted in an ext4 copy of the Debian root with an iperf3 server
(port 5201) as well.  Its console goes to build/netpeer-console.txt; it
is stopped when Tempest's machine ends.

With --run (or $TEMPEST_RUN, which keeps any shell quoting intact), init
runs the command under /bin/sh as root and powers off; the command's
output goes to standard output as it wrote it (the console's CR LF made
LF again), the boot's messages before and after it to standard error, and
this script exits with the command's status (init prints "init: exit
status N"), or 125 when the boot itself failed (no such line: a panic, a
time-out, no init).  Without a command the console is on the terminal
with an interactive shell; Ctrl-A X quits QEMU.  Every failure is one line
on standard error, starting "userrun:".
"""

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import tempest  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tools"))
import cmdslot  # noqa: E402
from machines import MachineError  # noqa: E402

BUILD = os.path.join(ROOT, "build")
MKROOT = os.path.join(ROOT, "tools", "mkroot.py")
DEBIAN_ROOT = os.path.join(ROOT, "tools", "debian_root.py")
USERLAND = os.path.join(BUILD, "userland")
TOOLS = os.path.join(BUILD, "tools")
# init's last word on the command: its status, or the shutdown the command
# asked for (poweroff, reboot or halt typed in it: status 0, the machine
# went down as asked; userland/init/init.c).
EXIT_RE = re.compile(r"init: (?:(exit status|killed by signal) (\d+)"
                     r"|(poweroff|reboot|halt)(?: \(.*\))?)\s*$", re.M)
STARTED_RE = re.compile(rb"^init: started \S+ as pid 1$")
ENDED_RE = re.compile(rb"init: ((exit status|killed by signal) \d+"
                      rb"|(poweroff|reboot|halt)( \(.*\))?)$")
BOOT_FAILED = 125
NO_COMMAND = "# tempest: no command\n"     # tools/mkroot.py, userland/init/init.c


class Failure(Exception):
    """A failure to report in one line."""


def mkroot(img, run, add, free, slot, fs="s5"):
    """Build a root image at img (an S5 or a UFS file system)."""
    cmd = [sys.executable, MKROOT, img, "--init", os.path.join(USERLAND, "init"),
           "--free", free, "--fs", fs]
    for prog in ("lockstat", "kprof"):
        path = os.path.join(USERLAND, prog)
        if os.path.exists(path):
            cmd += ["--bin", path]
    for prog in ("mkfs.s5", "fsck.s5"):        # the guest builds (tools/Makefile)
        path = os.path.join(TOOLS, "guest", prog)
        if os.path.exists(path):
            cmd += ["--bin", path]
    for opt, path in (("--tests", os.path.join(USERLAND, "tests")),
                      ("--bench", os.path.join(BUILD, "bench"))):
        if os.path.isdir(path):
            cmd += [opt, path]
    cmd += content_args(add, slot, run)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        lines = (r.stdout + r.stderr).strip().splitlines()
        raise Failure(lines[-1] if lines else "mkroot failed")


def content_args(add, slot, run):
    """The image builders' options for ADD=, the command slot and RUN=."""
    args = []
    if add:
        if not os.path.isdir(add):
            raise Failure("ADD=%s is not a directory" % add)
        args += ["--add", add]
    if slot:
        args += ["--slot"]
    elif run is not None:
        args += ["--run", run]
    return args


def debian_root(img, run, add, free, slot=False, extra=None):
    """Build a Debian root image at img (tools/debian_root.py); extra(top),
    if given, adds to its tree last (GAEDE=1)."""
    if extra is not None:
        import argparse
        import debian_root as dr
        content_args(add, slot, run)            # ADD= checked as for the command
        args = argparse.Namespace(image=img, list=dr.LIST, slot=slot, add=add, free=free,
                                  run=None if slot else run)
        try:
            dr.image(args, extra, quiet=True)
        except dr.Failure as e:
            raise Failure(str(e))
        return
    cmd = [sys.executable, DEBIAN_ROOT, "image", img, "--free", free]
    cmd += content_args(add, slot, run)
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        lines = r.stderr.strip().splitlines()
        raise Failure(lines[-1] if lines else "debian_root failed")


def gaede_setup(tmp, machine):
    """GAEDE=1: GAEDE's users (u01.., two per CPU) with their S5 home disks
    on /home/d0.., its script mix on /home/d0/scripts, and pmake's disk
    (Tempest's kernel sources) on /mnt/pmake, made as the harness makes a
    point's (tools/harness/macro_gaede.py, macro_pmake.py).  Returns the
    disk images, to attach after the root in order (vdb ...), and the
    Debian root's extra: the users, the mount points, and /etc/rc.local,
    which init runs at boot to mount the disks (and, before a shell, to
    say what to type)."""
    from harness import macro, macro_gaede, macro_pmake
    m = tempest.machine(machine)
    point = {"workload": "gaede", "machine": machine, "cpus": m.cpus, "users": "2n",
             "seconds": 60}
    try:
        os.makedirs(os.path.join(tmp, "gaede"))
        os.makedirs(os.path.join(tmp, "pmake"))
        gaede = macro_gaede.prepare(os.path.join(tmp, "gaede"), point)
        pmake = macro_pmake.prepare_pmake(os.path.join(tmp, "pmake"),
                                          {"workload": "pmake", "cpus": m.cpus, "files": 0})
    except Exception as e:      # a prepare's failure, in one line
        raise Failure("GAEDE=1: %s" % e)
    disks = gaede["disks"] + pmake["disks"]
    users = gaede["users"]
    lines = ["# GAEDE=1 (tools/userrun.py): GAEDE's home disks and pmake's sources."]
    for i, d in enumerate(disks):
        dev = "/dev/vd" + chr(ord("b") + i)
        lines.append("mount -t %s %s %s || echo 'rc.local: cannot mount %s on %s'"
                     % (d["fs"], dev, d["mount"], dev, d["mount"]))
    ndisks = len(gaede["disks"])
    hint = ("GAEDE: %d users (u01..u%02d) on %d home disk%s; pmake: the kernel's sources "
            "on /mnt/pmake. For instance:" % (len(users), len(users), ndisks,
                                               "" if ndisks == 1 else "s"))
    lines += ['[ "$1" = interactive ] || exit 0', "echo " + shlex.quote(hint),
              "echo " + shlex.quote("  lockstat -i 1 " + gaede["command"]),
              "echo " + shlex.quote("  lockstat -i 1 " + pmake["command"])]

    def extra(top):
        for d in disks:
            os.makedirs(top + d["mount"], exist_ok=True)
        macro._add_users(top, users)
        path = os.path.join(top, "etc", "rc.local")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(path, 0o755)
    return [d["image"] for d in disks], extra


def root_image(tmp, run, add, free="16M"):
    """A fresh root image in directory tmp running run (the benchmark
    harness's, tools/harness/runner.py); its path.  Failure on an error."""
    img = os.path.join(tmp, "root.img")
    mkroot(img, run, add, free, False)
    return img


def tool(name, *args, data=None):
    """Run one of the S5 host tools; its output, or Failure with its last line."""
    path = os.path.join(TOOLS, name)
    if not os.path.exists(path):
        raise Failure("%s is missing (run 'make tools')" % path)
    r = subprocess.run([path] + list(args), input=data, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        lines = (r.stderr + r.stdout).strip().splitlines()
        raise Failure(lines[-1] if lines else "%s failed" % name)
    return r.stdout


def kept_image(path, run, add, free):
    """Make the kept image at path if it does not exist, check it, and put
    the command (or the empty-slot line) in its slot."""
    if not os.path.exists(path):
        d = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(d):
            raise Failure("ROOT=%s: no directory %s" % (path, d))
        mkroot(path, None, add, free, True)
        print("userrun: made the root image %s" % path, file=sys.stderr)
    elif add:
        print("userrun: ADD= is copied only when the image is made; %s is kept as it is" % path,
              file=sys.stderr)
    try:
        tool("fsck.s5", path)
    except Failure as e:
        raise Failure("ROOT=%s is not a clean S5 image (%s); delete it for a fresh one" % (path, e))
    try:
        tool("s5cat", "-w", path, "/etc/rc.run", data=NO_COMMAND if run is None else run + "\n")
    except Failure as e:
        if "longer" in str(e):
            raise Failure("RUN= is longer than the command slot of ROOT=%s (%s)" % (path, e))
        raise Failure("ROOT=%s: cannot set its command slot /etc/rc.run (%s); "
                      "delete it for a fresh one" % (path, e))
    return path


def kept_debian_image(path, run, add, free):
    """kept_image's twin for a Debian (UFS) root: made with an empty slot
    the first time, checked by fsck.ufs, its slot filled (tools/cmdslot.py)."""
    if not os.path.exists(path):
        d = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(d):
            raise Failure("ROOT=%s: no directory %s" % (path, d))
        debian_root(path, None, add, free, slot=True)
        print("userrun: made the Debian root image %s" % path, file=sys.stderr)
    elif add:
        print("userrun: ADD= is copied only when the image is made; %s is kept as it is" % path,
              file=sys.stderr)
    try:
        tool("fsck.ufs", path)
    except Failure as e:
        raise Failure("ROOT=%s is not a clean UFS image (%s); delete it for a fresh one" % (path, e))
    try:
        cmdslot.write(path, run)
    except cmdslot.SlotError as e:
        raise Failure("ROOT=%s: %s" % (path, e))
    return path


class CommandEcho:
    """The console as it arrives: the lines before init's "started" line
    and from its "exit status" line on go to standard error, the ones
    between (the command's output) to standard output; the console's CR
    LF becomes LF again everywhere."""

    def __init__(self):
        self.pending = b""
        self.stage = 0          # 0 booting, 1 the command, 2 after it

    def write(self, data):
        self.pending += data
        while b"\n" in self.pending:
            line, self.pending = self.pending.split(b"\n", 1)
            self._line(line)

    def _line(self, line):
        if line.endswith(b"\r"):
            line = line[:-1]
        ended = ENDED_RE.search(line) if self.stage == 1 else None
        if ended:
            # Output without a final newline runs into init's line: the
            # command's part stays on standard output, unterminated.
            sys.stdout.buffer.write(line[:ended.start()])
            self.stage = 2
            line = line[ended.start():]
        out = sys.stdout.buffer if self.stage == 1 else sys.stderr.buffer
        out.write(line + b"\n")
        if self.stage == 0 and STARTED_RE.match(line):
            self.stage = 1

    def flush(self):
        sys.stdout.flush()
        sys.stderr.flush()

    def close(self):
        if self.pending:
            self._line(self.pending)
            self.pending = b""
        self.flush()


def exit_status(output):
    """The command's status from init's last line, or None."""
    found = EXIT_RE.findall(output)
    if not found:
        return None
    kind, n, shutdown = found[-1]
    if shutdown:
        return 0
    return int(n) if kind == "exit status" else 128 + int(n)


PEER_MACHINE = "up"
PEER_CONSOLE = os.path.join(BUILD, "netpeer-console.txt")
# The peer's command (NET=peer): its address, a page, the servers, then
# idle until stopped.  busybox's own applets, so that it runs the same in
# the peer's initramfs and chrooted in the Debian root.
PEER_SCRIPT = r"""
[ -x /modules/load ] && /modules/load > /dev/null    # virtio_net (in_root loads it before chroot)
dev=$(ls /sys/class/net | grep -v '^lo$' | head -1)
busybox ip link set lo up
if [ -n "$dev" ] && busybox ip link set "$dev" up && busybox ip addr add %s/24 dev "$dev"; then
    echo "netpeer: the Linux peer is %s on $dev"
else
    echo "netpeer: the Linux peer has no network device"
fi
mkdir -p /tmp/www && echo "the Linux peer" > /tmp/www/index.html
busybox httpd -p 80 -h /tmp/www && echo "netpeer: busybox httpd on port 80"
if command -v iperf3 > /dev/null; then iperf3 -s -D && echo "netpeer: iperf3 -s on port 5201"; fi
while :; do sleep 3600; done
""" % (tempest.SEGMENT_PEER[0], tempest.SEGMENT_PEER[0])


class PeerBeside:
    """The Linux peer on the other end of the segment (NET=peer), booted
    in a thread of its own beside Tempest and stopped by stop()."""

    def __init__(self, end, debian):
        import linux_peer
        self.lp = linux_peer
        self.end = end              # the peer's end of the segment
        self.debian = debian
        self.halt = threading.Event()
        self.error = None
        self.thread = threading.Thread(target=self._run, name="netpeer", daemon=True)

    def start(self):
        print("userrun: the Linux peer (%s, %s preset) boots beside Tempest on the peer "
              "segment; its console: %s" % (self.end.ip, PEER_MACHINE,
                                            os.path.relpath(PEER_CONSOLE)), file=sys.stderr)
        sys.stderr.flush()
        self.thread.start()

    def _run(self):
        try:
            with open(PEER_CONSOLE, "wb") as console:
                if self.debian:
                    with self.lp.debian_root_image() as img:
                        self.lp.run(PEER_MACHINE, self.lp.in_root(PEER_SCRIPT), timeout=0,
                                    disks=[img], net=self.end, stop=self.halt,
                                    echo_all=console)
                else:
                    self.lp.run(PEER_MACHINE, PEER_SCRIPT, timeout=0, net=self.end,
                                stop=self.halt, echo_all=console)
        except Exception as e:      # reported in one line by stop()
            self.error = "%s" % e

    def stop(self):
        self.halt.set()
        self.thread.join(30)
        if self.error:
            print("userrun: the Linux peer failed: %s" % self.error.splitlines()[0],
                  file=sys.stderr)


def run_command(args, img):
    opts = tempest.pvspin_opts(args.machine, ("root=vda poweroff " + args.opts).strip(),
                               args.accel)
    timeout = args.timeout or tempest.DEFAULT_POWEROFF_TIMEOUT
    echo = CommandEcho()
    net = [tempest.parse_hostfwd(f) for f in args.hostfwd] if args.net == "user" else None
    if args.net == "peer":
        net = args.segment
    r = tempest.boot(args.machine, opts, accel=args.accel, timeout=timeout,
                     echo=echo, disk_images=[img] + args.disk, net=net)
    echo.close()
    status = exit_status(r.output)
    if status is None or r.status != "ok":
        print("userrun: %s" % (r.status if r.status != "ok" else "init did not report a status"),
              file=sys.stderr)
        return status if status is not None and r.status == "ok" else BOOT_FAILED
    return status


def interactive(args, img):
    cmd = [sys.executable, os.path.join(ROOT, "tests", "tempest.py"), "run",
           "--machine", args.machine, "--accel", args.accel,
           "--opts", ("root=vda " + args.opts).strip(), "--timeout", str(args.timeout),
           "--disk", img]
    for d in args.disk:
        cmd += ["--disk", d]
    if args.net:
        cmd += ["--net", args.net] + [a for f in args.hostfwd for a in ("--hostfwd", f)]
    if args.net == "peer":
        cmd += ["--segment", args.segment.ports()]
    return tempest.call_child(cmd)


def with_peer(args, fn, img):
    """fn(args, img), with the Linux peer beside it when --net peer."""
    if args.net != "peer":
        return fn(args, img)
    args.segment, theirs = tempest.new_segment()
    peer = PeerBeside(theirs, args.userland == "debian")
    peer.start()
    try:
        return fn(args, img)
    finally:
        peer.stop()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--machine", default="default")
    p.add_argument("--accel", default="tcg")
    p.add_argument("--opts", default="")
    p.add_argument("--timeout", type=int, default=0)
    p.add_argument("--add", help="host directory put under /add")
    p.add_argument("--disk", action="append", default=[],
                   help="another raw image, attached after the root (vdb, ...)")
    p.add_argument("--net", choices=("user", "peer"),
                   help="a virtio-net device on QEMU's restricted user network (make run "
                   "NET=user), or on the peer segment with the Linux peer beside (NET=peer)")
    p.add_argument("--hostfwd", action="append", default=[], metavar="HOST:GUEST",
                   help="with --net user: forward TCP from 127.0.0.1:HOST to the guest (FWD=)")
    p.add_argument("--run", help="command to run under /bin/sh (default: $TEMPEST_RUN)")
    p.add_argument("--free", default="16M",
                   help="free space in a new root image beyond its contents (default 16M)")
    p.add_argument("--root", help="keep the root image at this path between runs")
    p.add_argument("--userland", default="busybox", choices=("busybox", "debian"),
                   help="the root's programs: busybox (S5), or Debian's packages (UFS)")
    p.add_argument("--fs", choices=("s5", "ufs"), default="s5",
                   help="the root image's file system (default s5)")
    p.add_argument("--gaede", action="store_true",
                   help="with --userland debian: GAEDE's users and home disks, pmake's "
                   "sources, mounted at boot (make run USERLAND=debian GAEDE=1)")
    args = p.parse_args()
    tempest.die_with_parent()
    tempest.stop_on_signals()
    run = args.run if args.run is not None else os.environ.get("TEMPEST_RUN") or None
    try:
        for d in args.disk:
            if not os.path.isfile(d):
                raise Failure("DISK=%s: no such image file" % d)
        with tempfile.TemporaryDirectory(prefix="userrun-") as tmp:
            if args.root and args.fs != "s5" and args.userland != "debian":
                raise Failure("ROOT= keeps S5 images only (FS=%s)" % args.fs)
            if args.gaede and args.userland != "debian":
                raise Failure("GAEDE=1 needs USERLAND=debian (GAEDE runs Debian's programs)")
            if args.gaede and args.root:
                raise Failure("GAEDE=1 makes its root and disks anew each run; ROOT= cannot keep them")
            if args.gaede:
                disks, extra = gaede_setup(tmp, args.machine)
                args.disk = disks + args.disk
                img = os.path.join(tmp, "root.img")
                debian_root(img, run, args.add, args.free, extra=extra)
            elif args.userland == "debian":
                if args.root:
                    img = kept_debian_image(args.root, run, args.add, args.free)
                else:
                    img = os.path.join(tmp, "root.img")
                    debian_root(img, run, args.add, args.free)
            elif args.root:
                img = kept_image(args.root, run, args.add, args.free)
            else:
                img = os.path.join(tmp, "root.img")
                mkroot(img, run, args.add, args.free, False, args.fs)
            return with_peer(args, run_command if run is not None else interactive, img)
    except Failure as e:
        print("userrun: %s" % e, file=sys.stderr)
        return BOOT_FAILED
    except KeyboardInterrupt:
        try:
            print("userrun: interrupted", file=sys.stderr, flush=True)
        except OSError:         # the terminal is gone
            pass
        return 130
    except (OSError, subprocess.SubprocessError, MachineError) as e:
        print("userrun: %s" % e, file=sys.stderr)
        return BOOT_FAILED


if __name__ == "__main__":
    sys.exit(main())
