#!/usr/bin/env python3
"""Tests of the Linux peer (tools/linux_peer.py) and the micro-benchmarks
(bench/), for make check.

  * peer/extract: the bzImage-to-vmlinux extraction finds the payload of a
    synthetic bzImage by its magic number, for each compression format the
    Python standard library can write, with and without a set-up header
    pointing at it, and refuses an image holding none.
  * peer/cpio: the newc archive writer's output reads back entry by entry.
  * peer/exit-status: the peer boots Debian's kernel on the default preset
    with RUN='echo hello; ...; exit 3': the output starts with the line
    "hello" and the status is 3.
  * peer/topology: in the same boot, Linux sees the preset's CPUs and NUMA
    nodes, and node 0's SLIT row.
  * bench/NAME: each benchmark, run once on the peer with a small count,
    prints one well-formed result line with that count.

Prints PASS/FAIL lines, then "N passed, N failed"; exits non-zero on
failure.  Two boots under TCG: about half a minute on two cores.

    python3 tests/test_linux_peer.py [-v] [--machine default] [--accel tcg]
"""

import argparse
import bz2
import gzip
import lzma
import os
import re
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import linux_peer  # noqa: E402
import tempest     # noqa: E402

BOOT_TIMEOUT = 300
# A small count each: fork and exec cost milliseconds under TCG.
BENCH_COUNTS = {"null_syscall": 1000, "fstat": 1000, "fork": 20, "exec": 10,
                "pipe": 100, "pagefault": 1000,
                "sem": 100, "msg": 100, "shm": 300,
                "mem": 300}
RESULT_RE = re.compile(r"^bench (\w+) us_per_op=(\d+\.\d{4}) ops=(\d+) "
                       r"total_s=(\d+\.\d{6})$")


class Results:
    def __init__(self):
        self.passed = self.failed = 0

    def add(self, name, ok, reason=""):
        if ok:
            self.passed += 1
            print("PASS %s" % name, flush=True)
        else:
            self.failed += 1
            print("FAIL %s: %s" % (name, reason), flush=True)


# --------------------------------------------------------------------------
# Host-only tests

def _fake_elf(size=5000):
    """A minimal x86-64 ELF header followed by filler bytes."""
    head = b"\x7fELF\x02\x01\x01" + b"\0" * 9 + struct.pack("<HH", 2, 62)
    body = bytes((i * 7 + 3) & 0xFF for i in range(size))
    return head + b"\0" * (64 - len(head)) + body


def _bzimage(payload, with_header):
    """A synthetic bzImage: 5 set-up sectors, a decompressor stub holding
    a decoy magic, then the payload and its 4-byte size."""
    setup = bytearray(5 * 512)
    stub = b"stub code \xfd7zXZ\x00 not a stream\x1f\x8b\x08 either" + b"\x90" * 300
    if with_header:
        setup[0x1f1] = 4                                  # setup_sects
        setup[0x202:0x206] = b"HdrS"
        struct.pack_into("<H", setup, 0x206, 0x20f)       # protocol 2.15
        struct.pack_into("<II", setup, 0x248, len(stub), len(payload))
    return bytes(setup) + stub + payload + struct.pack("<I", 12345)


def test_extract(res):
    elf = _fake_elf()
    formats = {
        "xz": lzma.compress(elf, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC32),
        "lzma": lzma.compress(elf, format=lzma.FORMAT_ALONE),
        "gzip": gzip.compress(elf, mtime=0),
        "bzip2": bz2.compress(elf),
    }
    for name, payload in formats.items():
        for with_header in (True, False):
            what = "peer/extract/%s%s" % (name, "" if with_header else "-scan")
            try:
                out, how = linux_peer.extract_vmlinux(_bzimage(payload, with_header))
                res.add(what, out == elf and how == name,
                        "got %d bytes as %s, want %d bytes as %s"
                        % (len(out), how, len(elf), name))
            except Exception as e:                        # noqa: BLE001
                res.add(what, False, "%s: %s" % (type(e).__name__, e))
    try:
        linux_peer.extract_vmlinux(_bzimage(b"\0" * 4000, True))
        res.add("peer/extract/none", False, "a payload-less image was accepted")
    except linux_peer.PeerError:
        res.add("peer/extract/none", True)


def _read_cpio(data):
    """[(name, mode, body, rdevmajor, rdevminor)] of a newc archive."""
    out, pos = [], 0
    while True:
        if data[pos:pos + 6] != b"070701":
            raise ValueError("bad magic at %d" % pos)
        f = [int(data[pos + 6 + 8 * i:pos + 14 + 8 * i], 16) for i in range(13)]
        mode, size, rmaj, rmin, namesize = f[1], f[6], f[9], f[10], f[11]
        name = data[pos + 110:pos + 110 + namesize - 1].decode()
        pos = (pos + 110 + namesize + 3) & ~3
        body = data[pos:pos + size]
        pos = (pos + size + 3) & ~3
        if name == "TRAILER!!!":
            return out, pos
        out.append((name, mode, body, rmaj, rmin))


def test_cpio(res):
    a = linux_peer.Cpio()
    a.dir("bin")
    a.file("bin/x", b"abcde", 0o755)
    a.symlink("bin/sh", "/bin/busybox")
    a.chardev("dev/console", 5, 1)
    data = a.finish()
    try:
        entries, end = _read_cpio(data)
    except (ValueError, IndexError) as e:
        res.add("peer/cpio", False, str(e))
        return
    want = [("bin", 0o040755, b"", 0, 0), ("bin/x", 0o100755, b"abcde", 0, 0),
            ("bin/sh", 0o120777, b"/bin/busybox", 0, 0),
            ("dev/console", 0o020600, b"", 5, 1)]
    res.add("peer/cpio", entries == want and end == len(data) and end % 4 == 0,
            "read back %r (end %d of %d)" % (entries, end, len(data)))


# --------------------------------------------------------------------------
# Boots

def _expected_topology(m):
    return m.cpus, (m.nodes if m.numa else 1), m.matrix()[0]


def test_exit_status(res, machine, accel, verbose):
    m = tempest.machine(machine)
    # After "hello", a probe of the topology Linux sees.
    probe = ("grep -c ^processor /proc/cpuinfo; "
             "ls -d /sys/devices/system/node/node* | wc -l; "
             "cat /sys/devices/system/node/node0/distance")
    r = linux_peer.run(m, "echo hello; %s; exit 3" % probe, accel, BOOT_TIMEOUT)
    if r.status is None:
        res.add("peer/exit-status", False, r.reason)
        res.add("peer/topology", False, "no boot")
        if verbose:
            print(r.console[-3000:])
        return
    lines = r.output.splitlines()
    res.add("peer/exit-status", r.status == 3 and lines[:1] == ["hello"],
            "status %s, output %r" % (r.status, r.output[:200]))
    cpus, nodes, row = _expected_topology(m)
    got = lines[1:4]
    want = [str(cpus), str(nodes), " ".join(map(str, row))]
    res.add("peer/topology", got == want, "Linux saw %r, want %r" % (got, want))


def test_benchmarks(res, machine, accel, verbose):
    names = subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "bench"), "list"],
                           stdout=subprocess.PIPE, check=True).stdout.decode().split()
    missing = set(names) - set(BENCH_COUNTS)
    script = "; ".join("/bench/%s %d || echo 'bench %s exited with '$?"
                       % (n, BENCH_COUNTS.get(n, 10), n) for n in names)
    r = linux_peer.run(machine, script, accel, BOOT_TIMEOUT)
    if r.status is None:
        for n in names:
            res.add("bench/" + n, False, "peer: " + r.reason)
        if verbose:
            print(r.console[-3000:])
        return
    lines = r.output.splitlines()
    for n in names:
        mine = [l for l in lines if l.startswith("bench %s " % n)]
        m = RESULT_RE.match(mine[0]) if len(mine) == 1 else None
        want = BENCH_COUNTS.get(n, 10)
        ok = (m is not None and m.group(1) == n and int(m.group(3)) == want
              and float(m.group(2)) > 0 and n not in missing)
        res.add("bench/" + n, ok, "printed %r (want one line with ops=%d)"
                % (mine, want) if n not in missing else
                "no small count for it in tests/test_linux_peer.py")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--machine", default="default")
    p.add_argument("--accel", default="tcg", choices=tempest.ACCELS)
    p.add_argument("-v", "--verbose", action="store_true",
                   help="print the console tail of failed boots")
    args = p.parse_args(argv)
    res = Results()
    test_extract(res)
    test_cpio(res)
    try:
        linux_peer.fetch_kernel()
    except (linux_peer.PeerError, subprocess.CalledProcessError, OSError) as e:
        res.add("peer/kernel", False, str(e))
    else:
        test_exit_status(res, args.machine, args.accel, args.verbose)
        test_benchmarks(res, args.machine, args.accel, args.verbose)
    print("%d passed, %d failed" % (res.passed, res.failed))
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
