#!/usr/bin/env python3
"""The Linux peer: run a shell command on Debian's Linux kernel in QEMU, on
the same machine preset and accelerator Tempest would be booted with, so
that the benchmarks in bench/ can be compared between the two kernels
(DESIGN.md section 10).

    linux_peer.py run --machine default --accel tcg --run 'CMD'
    linux_peer.py run --machine up                     (an interactive shell)
    linux_peer.py fetch [--refresh]    (just fetch and unpack the kernel)
    linux_peer.py run --root debian.ext4 --run 'CMD'   (chrooted in a Debian root)
    linux_peer.py cmdline --machine hector             (the QEMU command line)

`make linux-run MACHINE=NAME RUN='CMD' [ACCEL=...]` calls the first.

The kernel.  Debian's linux-image-amd64 package, fetched and unpacked into
build/linux/ and made an ELF vmlinux, with the modules the file-system
checks and the Debian root use: tools/linux_kernel.py.

The Debian root.  --root IMAGE attaches an ext4 image of the Debian root
(tools/debian_root.py image --format ext4: the same tree Tempest boots
from UFS) as vda, and the command runs chrooted in it (in_root), so the
judges of issue 31 run Debian's programs on both kernels alike.

The initramfs.  A newc cpio archive written here: /bin/busybox from Debian's
busybox-static with a link for each applet, /dev/console and /dev/null,
the benchmark binaries under /bench (bench/Makefile is run first to build
them), and /init, a busybox sh script that mounts /proc, /sys and /dev,
turns off transparent huge pages (so the page-fault benchmark faults one
4 KiB page at a time, as on Tempest), runs /run.sh under /bin/sh with its
standard input from /dev/null, prints a marker line with its exit status,
and powers the machine off.  The base archive (gzip-compressed) is cached;
each run appends a small uncompressed archive holding its /run.sh (Linux
unpacks concatenated archives in order).

The machine.  tests/tempest.py's qemu_cmd() gives the QEMU arguments of the
preset (CPUs, memory, -numa nodes and distances) and the accelerator; the
boot CD-ROM is swapped for -kernel, -initrd and -append.  The preset's
scratch disks are not attached (the benchmarks use none); --disk IMAGE
attaches raw images as virtio disks vda, vdb..., and then the initramfs
also holds /modules: sysv.ko, ufs.ko and the virtio disk's modules with
what they depend on, taken from the same kernel package (kept decompressed
in build/linux/modules/ when the kernel is fetched), and /modules/load,
which loads them in order (tests/test_fs_peer.py mounts Tempest's images
with them).  The kernel
command line is APPEND below plus --append: no speculative-execution
mitigations, since Tempest has none and the comparison is of kernel
structure, and no automatic NUMA balancing, whose page-table scans would
add hinting faults to the benchmarks.  Under ACCEL=icount each iteration of
a rep string instruction counts as one instruction, and Linux clears and
copies pages with rep stosb/movsb on a CPU with ERMS (which -cpu max
offers); --append clearcpuid=erms makes it use the rep stosq/movsq
versions instead (bench/README.md).

The peer segment.  With run(net=END), END the peer's end of a segment
(tests/tempest.py, Segment: make run NET=peer, tests/netpeer_check.py),
the machine has a virtio network device on it, 127.0.0.1's UDP ports
joining it to Tempest's and to nothing else; virtio_net (with
net_failover and failover) is among the kept modules, and the command
sets the address (10.0.3.2/24).  run(stop=EVENT) stops the machine when
the event is set (a peer that idles beside an interactive Tempest).

Exit status: the command's own, or 124 when the time limit passed, 125 when
the peer itself failed (kernel did not boot, no exit marker, a tool
missing).  The command's output is printed as it arrives; -v prints the
whole console, kernel messages included.

Only the python3 standard library is used, and tests/tempest.py.
"""

import argparse
import contextlib
import gzip
import hashlib
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import tempest  # noqa: E402  (the presets and the QEMU command line)
from linux_kernel import (  # noqa: E402,F401  (the kernel: fetched, unpacked, its modules)
    LINUX_DIR, VMLINUX, VMLINUX_VERSION, MODULES_DIR, MODULES_DEP, WANTED_MODULES,
    META_PACKAGE, PeerError, log, fetch_kernel, fetch_modules, kernel_version,
    keep_modules, extract_vmlinux, check_pvh, _apt_download, _module_depends, _is_elf64)

BUILD = os.path.join(ROOT, "build")
BENCH_BUILD = os.path.join(BUILD, "bench")
BENCH_SRC = os.path.join(ROOT, "bench")
BUSYBOX = "/bin/busybox"
BUSYBOX_PACKAGE = "busybox-static"

APPEND = "console=ttyS0 quiet panic=-1 mitigations=off numa_balancing=disable"
DEFAULT_TIMEOUT = 600
# How often a boot's console is read (seconds); tools/boottime.py makes
# it finer, to time the console's lines closely.
POLL_INTERVAL = 0.1
EXIT_TIMEOUT = 124
EXIT_FAILED = 125

START_MARK = "@@linux-peer: start@@"
EXIT_MARK_RE = re.compile(r"^@@linux-peer: exit (\d+)@@$", re.M)

# The base initramfs's layout changes with this script; its cache key
# includes this version so an edit here rebuilds it.
INITRAMFS_FORMAT = 1

INIT_SCRIPT = r"""#!/bin/sh
# /init of the Linux peer, written by tools/linux_peer.py.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /tmp
# One fault per 4 KiB page, as on Tempest (Debian's default is "always").
thp=/sys/kernel/mm/transparent_hugepage/enabled
[ -w $thp ] && echo never > $thp
cd /
if [ -f /run.sh ]; then
    echo "@@linux-peer: start@@"
    /bin/sh /run.sh </dev/null
    status=$?
    echo "@@linux-peer: exit $status@@"
else
    echo "linux-peer: interactive shell; exit it to power off"
    setsid cttyhack /bin/sh -l
fi
sync
poweroff -f
"""


# --------------------------------------------------------------------------
# The initramfs

class Cpio:
    """A newc ("070701") cpio archive being written in memory."""

    def __init__(self):
        self.data = bytearray()
        self.ino = 1

    def _entry(self, name, mode, body=b"", nlink=1, rdev=(0, 0)):
        name_b = name.encode() + b"\0"
        fields = (self.ino, mode, 0, 0, nlink, 0, len(body), 0, 0,
                  rdev[0], rdev[1], len(name_b), 0)
        self.ino += 1
        self.data += b"070701" + b"".join(b"%08X" % f for f in fields)
        self.data += name_b
        self._pad()
        self.data += body
        self._pad()

    def _pad(self):
        self.data += b"\0" * (-len(self.data) % 4)

    def dir(self, name, mode=0o755):
        self._entry(name, 0o040000 | mode, nlink=2)

    def file(self, name, body, mode=0o644):
        self._entry(name, 0o100000 | mode, body)

    def symlink(self, name, target):
        self._entry(name, 0o120000 | 0o777, target.encode())

    def chardev(self, name, major, minor, mode=0o600):
        self._entry(name, 0o020000 | mode, rdev=(major, minor))

    def finish(self):
        self._entry("TRAILER!!!", 0)
        return bytes(self.data)


def _is_static(path):
    with open(path, "rb") as f:
        elf = f.read()
    if not _is_elf64(elf):
        return False
    phoff, = struct.unpack_from("<Q", elf, 32)
    phentsize, phnum = struct.unpack_from("<HH", elf, 54)
    return all(struct.unpack_from("<I", elf, phoff + i * phentsize)[0] != 3
               for i in range(phnum))               # no PT_INTERP


def find_busybox():
    """A static busybox: the installed busybox-static's, else one fetched
    with apt-get download into build/linux/."""
    if os.path.exists(BUSYBOX) and _is_static(BUSYBOX):
        return BUSYBOX
    cached = os.path.join(LINUX_DIR, "busybox")
    if os.path.exists(cached):
        return cached
    log("%s is missing or not static; fetching %s" % (BUSYBOX, BUSYBOX_PACKAGE))
    os.makedirs(LINUX_DIR, exist_ok=True)
    dl = tempfile.mkdtemp(prefix="dl-", dir=LINUX_DIR)
    os.chmod(dl, 0o777)
    try:
        deb = _apt_download(BUSYBOX_PACKAGE, dl)
        tree = os.path.join(dl, "tree")
        subprocess.run(["dpkg-deb", "-x", deb, tree], check=True)
        shutil.copy(os.path.join(tree, "bin", "busybox"), cached + ".tmp")
        os.replace(cached + ".tmp", cached)
        return cached
    finally:
        shutil.rmtree(dl, ignore_errors=True)


def busybox_applets(busybox):
    """The applets' paths (e.g. usr/bin/awk), from busybox --list-full."""
    r = subprocess.run([busybox, "--list-full"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, check=True)
    return sorted(set(l.strip().strip("/") for l in r.stdout.decode().split()
                      if l.strip()) - {"bin/busybox"})


def build_benchmarks():
    """Run bench/Makefile; returns {name: path} of the built programs."""
    r = subprocess.run(["make", "-s", "-C", BENCH_SRC, "BUILD=" + BENCH_BUILD],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        raise PeerError("building the benchmarks failed:\n"
                        + r.stdout.decode(errors="replace"))
    return {n: os.path.join(BENCH_BUILD, n) for n in sorted(os.listdir(BENCH_BUILD))
            if os.access(os.path.join(BENCH_BUILD, n), os.X_OK)
            and os.path.isfile(os.path.join(BENCH_BUILD, n))}


def base_initramfs():
    """The gzip-compressed base initramfs (bytes), cached in build/linux/
    and rebuilt when busybox, the benchmarks or this script's layout
    change."""
    busybox = find_busybox()
    applets = busybox_applets(busybox)
    benches = build_benchmarks()
    with open(busybox, "rb") as f:
        bb = f.read()
    bench_bytes = {}
    for name, path in benches.items():
        with open(path, "rb") as f:
            bench_bytes[name] = f.read()
    key = hashlib.sha256()
    for part in ([str(INITRAMFS_FORMAT), INIT_SCRIPT, bb, "\0".join(applets)]
                 + [x for n in sorted(bench_bytes) for x in (n, bench_bytes[n])]):
        key.update(part.encode() if isinstance(part, str) else part)
        key.update(b"\0")
    key = key.hexdigest()[:16]
    path = os.path.join(LINUX_DIR, "initramfs-%s.cpio.gz" % key)
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        pass
    a = Cpio()
    for d in ("bin", "sbin", "usr", "usr/bin", "usr/sbin", "proc", "sys",
              "dev", "tmp", "root", "etc", "bench"):
        a.dir(d, 0o1777 if d == "tmp" else 0o755)
    a.chardev("dev/console", 5, 1)
    a.chardev("dev/null", 1, 3, 0o666)
    a.file("bin/busybox", bb, 0o755)
    for applet in applets:
        a.symlink(applet, "/bin/busybox")
    a.file("init", INIT_SCRIPT.encode(), 0o755)
    a.file("etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n")
    for name, body in sorted(bench_bytes.items()):
        a.file("bench/" + name, body, 0o755)
    data = gzip.compress(a.finish(), compresslevel=6, mtime=0)
    os.makedirs(LINUX_DIR, exist_ok=True)
    tmp = path + ".%d.tmp" % os.getpid()
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    _prune_initramfs(os.path.basename(path))
    return data


def _prune_initramfs(current, age=600):
    """Remove other base initramfs files once they are ten minutes old (a
    run started just before may still be about to read its own)."""
    now = time.time()
    for name in os.listdir(LINUX_DIR):
        p = os.path.join(LINUX_DIR, name)
        if name.startswith("initramfs-") and name != current:
            try:
                if now - os.path.getmtime(p) > age:
                    os.unlink(p)
            except OSError:
                pass


def make_initrd(dest, command, modules=()):
    """Write to dest the base initramfs followed by an archive holding
    /run.sh (the command), or nothing for an interactive shell, and the
    modules [(name, path)] under /modules with /modules/load, a script
    that loads them in order."""
    data = base_initramfs()
    if command is not None or modules:
        # Linux reads the next archive only from a 4-byte boundary; it
        # skips zero bytes between archives.
        data += b"\0" * (-len(data) % 4)
        a = Cpio()
        if command is not None:
            a.file("run.sh", command.encode() + b"\n", 0o755)
        if modules:
            a.dir("modules")
            load = "#!/bin/sh\n# Loads the modules the disks need, in order.\n"
            for name, path in modules:
                with open(path, "rb") as f:
                    a.file("modules/%s.ko" % name, f.read())
                load += "insmod /modules/%s.ko || exit 1\n" % name
            a.file("modules/load", load.encode(), 0o755)
        data += a.finish()
    with open(dest, "wb") as f:
        f.write(data)
    return dest


# --------------------------------------------------------------------------
# Booting

def disk_args(images):
    """QEMU arguments attaching raw images as virtio disks (vda, vdb...)."""
    out = []
    for i, path in enumerate(images):
        out += ["-drive", "file=%s,format=raw,if=none,id=peerdisk%d" % (os.path.abspath(path), i),
                "-device", "virtio-blk-pci,drive=peerdisk%d" % i]
    return out


def qemu_command(m, kernel, initrd, accel="tcg", serial=None, append="", disks=(), net=None):
    """Tempest's QEMU command line for machine m and accel, booting kernel
    with initrd instead of the CD-ROM, with disks (raw images) attached as
    virtio disks, and net, the peer's end of the peer segment
    (tempest.Segment), as a virtio network device (modern or legacy: Linux
    drives both)."""
    cmd = tempest.qemu_cmd(m, "@CDROM@", accel, serial=serial)
    i = cmd.index("-cdrom")
    if cmd[i:i + 4] != ["-cdrom", "@CDROM@", "-boot", "d"]:
        raise PeerError("tempest.qemu_cmd's boot arguments have changed: %r"
                        % cmd[i:i + 4])
    del cmd[i:i + 4]
    cmd += disk_args(disks) + (net.qemu_args(legacy=False) if net is not None else [])
    return cmd + ["-kernel", kernel, "-initrd", initrd,
                  "-append", " ".join((APPEND + " " + append).split())]


class PeerResult:
    """What run() returns.  status: the command's exit status, or None if
    it never finished (then reason says why); output: what the command
    printed; console: the whole serial console."""

    def __init__(self, status, output, console, reason="", elapsed=0.0, command=None):
        self.status = status
        self.output = output
        self.console = console
        self.reason = reason
        self.elapsed = elapsed
        self.command = command

    @property
    def exit_code(self):
        if self.status is not None:
            return self.status
        return EXIT_TIMEOUT if self.reason.startswith("timeout") else EXIT_FAILED

    def __repr__(self):
        return "PeerResult(status=%r, reason=%r, %.1fs)" % (
            self.status, self.reason, self.elapsed)


class _Follower:
    """Follows the console file; passes the command's output (the lines
    between the start and exit markers) to a callback as it arrives."""

    def __init__(self, path, echo=None, echo_all=None):
        self.path = path
        self.echo = echo
        self.echo_all = echo_all
        self.offset = 0
        self.buf = b""
        self.started = False
        self.finished = False

    def poll(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return
        self.offset += len(data)
        if self.echo_all and data:
            self.echo_all.write(data)
            self.echo_all.flush()
        self.buf += data
        end = self.buf.rfind(b"\n")
        if end < 0:
            return
        lines, self.buf = self.buf[:end + 1], self.buf[end + 1:]
        for line in tempest.clean_output(lines).splitlines(True):
            if not self.started:
                self.started = line.rstrip("\n") == START_MARK
            elif not self.finished:
                if EXIT_MARK_RE.match(line.rstrip("\n")):
                    self.finished = True
                elif self.echo:
                    self.echo(line)


def _command_output(console):
    """The lines between the markers, and the exit status (or None)."""
    start = console.find(START_MARK + "\n")
    if start < 0:
        return "", None
    body = console[start + len(START_MARK) + 1:]
    m = EXIT_MARK_RE.search(body)
    if not m:
        return body, None
    return body[:m.start()], int(m.group(1))


def _failure(console, rc, timed_out, timeout):
    if timed_out:
        return "timeout after %g s" % timeout
    for pat in (r"^.*Kernel panic.*$", r"^.*BUG:.*$"):
        m = re.search(pat, console, re.M)
        if m:
            return m.group(0).strip()[:200]
    if START_MARK not in console:
        return "the command never started (QEMU exited with %s)" % rc
    return "no exit marker (QEMU exited with %s)" % rc


def in_root(command):
    """command wrapped to run chrooted in the ext4 root file system on
    vda (a Debian root: tools/debian_root.py image --format ext4), with
    /proc, /sys, /dev, /dev/pts and a fresh /tmp mounted in it, and the
    loopback interface up, as on any Debian system (the peer's init leaves
    it down); its exit status is the command's."""
    inner = "(ip link set lo up || busybox ip link set lo up) 2>/dev/null; cd /tmp && " + command
    return "\n".join([
        "/modules/load >/dev/null || exit 125",
        "mkdir -p /newroot && mount -t ext4 /dev/vda /newroot || exit 125",
        "mount -t proc proc /newroot/proc && mount -t sysfs sysfs /newroot/sys &&",
        "mount -o bind /dev /newroot/dev && mount -t devpts devpts /newroot/dev/pts &&",
        "mount -t tmpfs tmpfs /newroot/tmp || exit 125",
        "chroot /newroot /bin/sh -c %s" % shlex.quote(inner),
        "status=$?",
        "umount /newroot/tmp /newroot/dev/pts /newroot/dev /newroot/sys /newroot/proc",
        "umount /newroot",
        "exit $status",
    ])


@contextlib.contextmanager
def debian_root_image(free="64M"):
    """A fresh ext4 image of the Debian root (tools/debian_root.py, the
    tree Tempest boots from UFS) with free space to spare, for the body;
    its path.  The image goes when the body ends.  PeerError when it
    cannot be made."""
    import debian_root      # tools/: only this needs it (and its package cache)
    work = tempfile.mkdtemp(prefix="peer-root-", dir=BUILD)
    img = os.path.join(work, "debian.ext4")
    try:
        args = argparse.Namespace(image=img, list=debian_root.LIST, slot=False, add=None,
                                  free=free, run=None, format="ext4")
        try:
            debian_root.image(args, quiet=True)
        except debian_root.Failure as e:
            raise PeerError("the Debian root: %s" % e)
        yield img
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_in_debian_root(machine_spec, command, timeout=DEFAULT_TIMEOUT, free="64M", **kw):
    """run command chrooted in a fresh ext4 image of the Debian root
    (debian_root_image); kw as for run (net=, stop=...).  PeerError when
    the image cannot be made."""
    with debian_root_image(free) as img:
        return run(machine_spec, in_root(command), timeout=timeout, disks=[img], **kw)


def run(machine_spec, command, accel="tcg", timeout=DEFAULT_TIMEOUT, **kw):
    """_run once the boot holds its host cores (tests/hostcores.py: under
    make check a boot waits for the cores its virtual CPUs can use, and its
    time limit starts then)."""
    with tempest.hostcores.hold(tempest.cores_for(machine_spec, accel)):
        return _run(machine_spec, command, accel, timeout, **kw)


def _run(machine_spec, command, accel="tcg", timeout=DEFAULT_TIMEOUT, append="",
         echo=None, echo_all=None, keep=None, disks=(), net=None, stop=None):
    """Boot the Linux peer on machine_spec, run command under /bin/sh and
    power off.  echo(line) receives the command's output lines as they
    arrive; echo_all, a binary stream, the whole console.  keep, a
    directory, receives the console and QEMU command line.  disks, raw
    images, are attached as virtio disks vda, vdb...; net, the peer's end
    of the peer segment (tempest.Segment), as its virtio network device
    (eth0, no address: the command sets it); with either the kept modules
    (WANTED_MODULES: sysv, ufs, the virtio disk and network device) are
    under /modules, loaded in order by /modules/load.  stop, a
    threading.Event, ends the run (the machine is stopped) when set: the
    result then has reason "stopped"."""
    m = tempest.machine(machine_spec)
    kernel = fetch_kernel()
    tmp = tempfile.mkdtemp(prefix="linux-peer-")
    try:
        initrd = make_initrd(os.path.join(tmp, "initrd"), command,
                             fetch_modules() if disks or net is not None else ())
        out = os.path.join(tmp, "console.txt")
        err = os.path.join(tmp, "stderr.txt")
        open(out, "wb").close()
        cmd = qemu_command(m, kernel, initrd, accel, serial="file:" + out,
                           append=append, disks=disks, net=net)
        if shutil.which(cmd[0]) is None:
            raise PeerError("%s is not installed" % cmd[0])
        wrapped = cmd
        if timeout and shutil.which("timeout"):
            wrapped = ["timeout", "-s", "KILL", str(int(timeout) + 60)] + cmd
        follower = _Follower(out, echo, echo_all)
        start = time.monotonic()
        timed_out = stopped = False
        with open(err, "wb") as errf:
            proc = tempest.start_emulator(wrapped, cwd=tmp, stdin=subprocess.DEVNULL,
                                          stdout=errf, stderr=subprocess.STDOUT)
            if proc is None:
                raise PeerError("interrupted")
            try:
                while proc.poll() is None:
                    follower.poll()
                    if timeout and time.monotonic() - start > timeout:
                        timed_out = True
                        break
                    if stop is not None and stop.is_set():
                        stopped = True
                        break
                    time.sleep(POLL_INTERVAL)
            finally:
                tempest.stop_emulator(proc)
        follower.poll()
        elapsed = time.monotonic() - start
        console = tempest.clean_output(tempest._read(out))
        output, status = _command_output(console)
        reason = ""
        if status is None and stopped:
            reason = "stopped"
        elif status is None:
            reason = _failure(console, proc.returncode, timed_out, timeout)
            stderr_tail = tempest._tail(err, 5)
            if stderr_tail.strip() and not timed_out:
                reason += ": " + " | ".join(stderr_tail.splitlines())
        if keep:
            os.makedirs(keep, exist_ok=True)
            shutil.copy(out, os.path.join(keep, "console.txt"))
            shutil.copy(err, os.path.join(keep, "stderr.txt"))
            with open(os.path.join(keep, "command.txt"), "w") as f:
                f.write(" ".join(cmd) + "\n")
        return PeerResult(status, output, console, reason, elapsed, cmd)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def interactive(machine_spec, accel="tcg", append=""):
    """Boot the peer with a shell on the terminal (Ctrl-A X quits QEMU)."""
    m = tempest.machine(machine_spec)
    kernel = fetch_kernel()
    tmp = tempfile.mkdtemp(prefix="linux-peer-")
    try:
        initrd = make_initrd(os.path.join(tmp, "initrd"), None)
        cmd = qemu_command(m, kernel, initrd, accel, serial="mon:stdio",
                           append=append)
        log("%s (%s), accel %s, an interactive shell; Ctrl-A X quits"
            % (m.name, m.describe(), accel))
        return tempest.call_child(tempest.emulator_command(cmd))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------
# The commands

def cmd_run(args):
    command = args.run if args.run is not None else (
        " ".join(args.command) if args.command else None)
    if not command or not command.strip():
        if not sys.stdin.isatty():
            log("no command given (RUN='...') and no terminal for a shell")
            return 2
        return interactive(args.machine, args.accel, args.append)
    m = tempest.machine(args.machine)
    timeout = args.timeout or DEFAULT_TIMEOUT
    log("%s (%s), accel %s, kernel %s" % (m.name, m.describe(), args.accel,
                                          kernel_version() if os.path.exists(VMLINUX)
                                          else "to be fetched"))

    def echo(line):
        sys.stdout.write(line)
        sys.stdout.flush()

    disks = args.disk
    if args.root:
        if not os.path.isfile(args.root):
            log("--root %s: no such image" % args.root)
            return EXIT_FAILED
        disks = [os.path.abspath(args.root)] + disks
        command = in_root(command)
    r = run(m, command, args.accel, timeout, append=args.append,
            echo=None if args.verbose else echo,
            echo_all=sys.stdout.buffer if args.verbose else None, keep=args.keep,
            disks=disks)
    if r.status is None:
        # The output so far was streamed; a boot that never reached the
        # command gets the end of its console instead.
        if not args.verbose and START_MARK not in r.console:
            tail = "\n".join(r.console.splitlines()[-15:])
            log("console tail:\n" + tail)
        log("FAILED: %s" % r.reason)
    else:
        log("exit status %d after %.1f s" % (r.status, r.elapsed))
    return r.exit_code


def cmd_fetch(args):
    path = fetch_kernel(refresh=args.refresh)
    print("%s  (%s)" % (path, kernel_version()))
    return 0


def cmd_cmdline(args):
    m = tempest.machine(args.machine)
    kernel = fetch_kernel()
    initrd = os.path.join(LINUX_DIR, "initrd-example")
    make_initrd(initrd, args.run)
    print(shlex.join(qemu_command(m, kernel, initrd, args.accel, serial="mon:stdio",
                                append=args.append)))
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)

    def common(sp):
        sp.add_argument("--machine", default="default",
                        help="preset name or key=value spec (default: default)")
        sp.add_argument("--accel", default="tcg", choices=tempest.ACCELS)
        sp.add_argument("--append", default="",
                        help="more kernel command-line words")
        sp.add_argument("--run", help="the shell command to run")

    sp = sub.add_parser("run", help="boot, run a command, power off")
    common(sp)
    sp.add_argument("--timeout", type=float, default=0,
                    help="seconds (0: %d)" % DEFAULT_TIMEOUT)
    sp.add_argument("--keep", help="directory to keep the console and command line in")
    sp.add_argument("--disk", action="append", default=[],
                    help="a raw image attached as a virtio disk (vda, vdb...); the "
                    "modules to use it are loaded by /modules/load")
    sp.add_argument("--root",
                    help="an ext4 root image (tools/debian_root.py image --format ext4) "
                    "attached as vda; the command runs chrooted in it")
    sp.add_argument("-v", "--verbose", action="store_true",
                    help="print the whole console, kernel messages included")
    sp.add_argument("command", nargs="*", help="the command (instead of --run)")
    sp = sub.add_parser("fetch", help="fetch and unpack Debian's kernel")
    sp.add_argument("--refresh", action="store_true",
                    help="fetch again even if build/linux/vmlinux exists")
    common(sub.add_parser("cmdline", help="print the QEMU command line"))
    args = p.parse_args(argv)
    tempest.die_with_parent()
    tempest.stop_on_signals()
    try:
        return {"run": cmd_run, "fetch": cmd_fetch,
                "cmdline": cmd_cmdline}[args.what](args)
    except (PeerError, tempest.MachineError, ValueError,
            subprocess.CalledProcessError) as e:
        log(str(e))
        return EXIT_FAILED
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
