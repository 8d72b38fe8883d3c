#!/usr/bin/env python3
"""Debian's Linux kernel for the Linux peer (tools/linux_peer.py): the
kernel package fetched and unpacked, its bzImage made an ELF vmlinux,
and the modules the file-system checks use kept beside it.

The kernel.  Debian's linux-image-amd64 package is fetched with
`apt-get download` (never installed), together with the
linux-image-VERSION-amd64 package it depends on; the compressed kernel
boot/vmlinuz-VERSION is taken from it with `dpkg-deb -x`.  That file is a
bzImage: real-mode set-up code, then a small decompressor with the kernel
proper as a compressed payload.  The payload is found by its compression
format's magic number (the set-up header's payload_offset field, when it
has one, says where to look first) and decompressed here, giving the ELF
vmlinux.  QEMU boots an ELF vmlinux directly through its PVH entry note
(Debian builds with CONFIG_PVH), handing it the initramfs and command line.
Everything is cached under build/linux/: the vmlinux, the vmlinuz and
config it came from, and the base initramfs.

The modules.  WANTED_MODULES and what they depend on are taken from the
same kernel package when it is fetched and kept decompressed in
build/linux/modules/, with a modules.dep of our own listing them in load
order (fetch_modules); tools/linux_peer.py puts them in the initramfs.

Only the python3 standard library is used.
"""
import bz2
import lzma
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
LINUX_DIR = os.path.join(BUILD, "linux")
VMLINUX = os.path.join(LINUX_DIR, "vmlinux")
VMLINUX_VERSION = os.path.join(LINUX_DIR, "vmlinux.version")
MODULES_DIR = os.path.join(LINUX_DIR, "modules")
MODULES_DEP = os.path.join(MODULES_DIR, "modules.dep")
WANTED_FILE = "wanted"                  # in MODULES_DIR: the WANTED_MODULES it was kept for

# Modules kept from the kernel package for the file-system checks
# (tests/test_fs_peer.py): the S5 and UFS drivers and the virtio disk;
# and for the peer segment (NET=peer, tests/netpeer_check.py) the virtio
# network device (virtio_net, which needs net_failover and failover).
# Their dependencies come along; those built into the kernel are skipped.
# crc32c_generic before ext4: ext4 and jbd2 ask the crypto layer for
# "crc32c" by name (a soft dependency, not in "depends="), and the peer's
# initramfs has no modprobe to load it on demand.
WANTED_MODULES = ("sysv", "ufs", "virtio_pci", "virtio_blk", "crc32c_generic", "ext4",
                  "virtio_net")

META_PACKAGE = "linux-image-amd64"


class PeerError(RuntimeError):
    pass


def log(msg):
    print("linux-peer: %s" % msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Fetching the kernel package

def _sudo():
    return [] if os.geteuid() == 0 else ["sudo"]


def _apt_download(package, dest):
    """apt-get download package into dest; runs apt-get update once if apt
    does not know the package yet.  Returns the .deb's path."""
    for attempt in (1, 2):
        before = set(os.listdir(dest))
        r = subprocess.run(["apt-get", "download", "-q", package], cwd=dest,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL)
        debs = [n for n in set(os.listdir(dest)) - before if n.endswith(".deb")]
        if r.returncode == 0 and debs:
            return os.path.join(dest, debs[0])
        if attempt == 1:
            log("apt-get download %s failed; running apt-get update" % package)
            subprocess.run(_sudo() + ["apt-get", "update", "-qq"],
                           stdin=subprocess.DEVNULL)
    raise PeerError("apt-get download %s failed:\n%s"
                    % (package, r.stdout.decode(errors="replace")))


def _kernel_package(meta_deb):
    """The linux-image-VERSION-amd64 package the meta package depends on."""
    r = subprocess.run(["dpkg-deb", "-f", meta_deb, "Depends"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
    for dep in r.stdout.decode().split(","):
        name = dep.split("|")[0].split("(")[0].strip()
        if name.startswith("linux-image-"):
            return name
    raise PeerError("%s depends on no linux-image package: %r"
                    % (meta_deb, r.stdout.decode()))


def fetch_kernel(refresh=False):
    """Path of the ELF vmlinux of Debian's current kernel package, fetching
    and unpacking it into build/linux/ the first time (or with refresh)."""
    if os.path.exists(VMLINUX) and not refresh:
        return VMLINUX
    os.makedirs(LINUX_DIR, exist_ok=True)
    dl = tempfile.mkdtemp(prefix="dl-", dir=LINUX_DIR)
    # apt's download sandbox user must be able to write there.
    os.chmod(dl, 0o777)
    try:
        meta = _apt_download(META_PACKAGE, dl)
        package = _kernel_package(meta)
        log("fetching %s" % package)
        deb = _apt_download(package, dl)
        tree = os.path.join(dl, "tree")
        subprocess.run(["dpkg-deb", "-x", deb, tree], check=True)
        boot = os.path.join(tree, "boot")
        names = sorted(n for n in os.listdir(boot) if n.startswith("vmlinuz-"))
        if not names:
            raise PeerError("%s holds no boot/vmlinuz-*" % os.path.basename(deb))
        version = names[-1][len("vmlinuz-"):]
        vmlinuz = os.path.join(LINUX_DIR, names[-1])
        shutil.copy(os.path.join(boot, names[-1]), vmlinuz)
        config = os.path.join(boot, "config-" + version)
        if os.path.exists(config):
            shutil.copy(config, LINUX_DIR)
        keep_modules(tree, version)
        with open(vmlinuz, "rb") as f:
            image, how = extract_vmlinux(f.read())
        check_pvh(image)
        tmp = VMLINUX + ".%d.tmp" % os.getpid()   # two fetches at once (make check's linux and bench jobs) never share it
        with open(tmp, "wb") as f:
            f.write(image)
        os.replace(tmp, VMLINUX)
        with open(VMLINUX_VERSION, "w") as f:
            f.write("%s %s (%s payload)\n" % (package, version, how))
        log("%s: %s, %d bytes, from a %s payload"
            % (os.path.relpath(VMLINUX), version, len(image), how))
        return VMLINUX
    finally:
        shutil.rmtree(dl, ignore_errors=True)


def _decompressed_module(path):
    """A module file's contents, decompressed (.ko.xz, .ko.gz, .ko.zst)."""
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".xz"):
        return _unxz(data)
    if path.endswith(".gz"):
        return _gunzip(data)
    if path.endswith(".zst"):
        return _tool(["zstd", "-dcq"])(data)
    return data


def _module_name(relpath):
    """kernel/fs/sysv/sysv.ko.xz -> sysv"""
    base = os.path.basename(relpath)
    return base[:base.index(".ko")].replace("-", "_")


def _module_depends(data):
    """The modules a module needs, from its .modinfo "depends=" string."""
    m = re.search(rb"(?:^|\0)depends=([^\0]*)\0", data)
    return [d.decode().replace("-", "_") for d in m.group(1).split(b",") if d] if m else []


def keep_modules(tree, version):
    """Copy WANTED_MODULES and what they depend on (each module's own
    "depends=" list; the package has no modules.dep, depmod makes it) from an
    unpacked kernel package into MODULES_DIR, decompressed, and write there
    a modules.dep of our own: one module name a line, in load order."""
    moddir = os.path.join(tree, "lib", "modules", version, "kernel")
    paths = {}
    for dirpath, _, files in os.walk(moddir):
        for n in files:
            if ".ko" in n:
                paths[_module_name(n)] = os.path.join(dirpath, n)
    order, data = [], {}

    def visit(name):
        if name in order or name not in paths:
            return                              # built in, or already there
        data[name] = _decompressed_module(paths[name])
        for d in _module_depends(data[name]):
            visit(d)
        order.append(name)
    for name in WANTED_MODULES:
        visit(name)
    # A private directory renamed into place, so that two runs fetching at
    # once (make check's jobs) never see half a directory.
    tmp = tempfile.mkdtemp(prefix="modules-", dir=LINUX_DIR)
    for name in order:
        with open(os.path.join(tmp, name + ".ko"), "wb") as f:
            f.write(data[name])
    with open(os.path.join(tmp, "modules.dep"), "w") as f:
        f.write("".join(n + "\n" for n in order))
    with open(os.path.join(tmp, WANTED_FILE), "w") as f:
        f.write(" ".join(WANTED_MODULES) + "\n")
    old = MODULES_DIR + ".old-%d" % os.getpid()
    try:
        os.rename(MODULES_DIR, old)
    except OSError:
        old = None
    try:
        os.rename(tmp, MODULES_DIR)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)      # another run put its copy there
    if old:
        shutil.rmtree(old, ignore_errors=True)


def _kept_for():
    try:
        with open(os.path.join(MODULES_DIR, WANTED_FILE)) as f:
            return f.read().split()
    except OSError:
        return []


def fetch_modules():
    """{name: path} of the kept modules, in load order, fetching the kernel
    package again if build/linux/ was filled before these modules were
    wanted."""
    if not os.path.exists(MODULES_DEP) or _kept_for() != list(WANTED_MODULES):
        fetch_kernel(refresh=True)
    with open(MODULES_DEP) as f:
        names = [l.strip() for l in f if l.strip()]
    return [(n, os.path.join(MODULES_DIR, n + ".ko")) for n in names]


def kernel_version():
    try:
        with open(VMLINUX_VERSION) as f:
            return f.read().strip()
    except OSError:
        return "unknown"


# --------------------------------------------------------------------------
# bzImage to vmlinux

def _unxz(data):
    d = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
    return d.decompress(data)


def _unlzma(data):
    d = lzma.LZMADecompressor(format=lzma.FORMAT_ALONE)
    return d.decompress(data)


def _gunzip(data):
    d = zlib.decompressobj(wbits=31)
    return d.decompress(data)


def _bunzip2(data):
    return bz2.BZ2Decompressor().decompress(data)


def _tool(argv):
    def run(data):
        if shutil.which(argv[0]) is None:
            raise PeerError("%s is not installed" % argv[0])
        r = subprocess.run(argv, input=data, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        # Trailing bytes after the stream (the decompressor's size word,
        # padding) make the tools complain after writing everything out.
        return r.stdout
    return run


# Compression formats a bzImage payload may use: (name, magic, decompress).
# The lzma magic (properties byte 0x5d, dictionary size) is weak, so it is
# tried last and only ELF output is accepted anyway.
FORMATS = [
    ("xz", b"\xfd7zXZ\x00", _unxz),
    ("zstd", b"\x28\xb5\x2f\xfd", _tool(["zstd", "-dcq"])),
    ("gzip", b"\x1f\x8b\x08", _gunzip),
    ("bzip2", b"BZh", _bunzip2),
    ("lz4", b"\x02\x21\x4c\x18", _tool(["lz4", "-dc"])),
    ("lzo", b"\x89LZO", _tool(["lzop", "-dc"])),
    ("lzma", b"\x5d\x00\x00", _unlzma),
]


def _payload_hint(image):
    """(offset, length) of the payload per the boot protocol's set-up
    header (version 2.08 and later), or None."""
    if len(image) < 0x250 or image[0x202:0x206] != b"HdrS":
        return None
    version = struct.unpack_from("<H", image, 0x206)[0]
    if version < 0x208:
        return None
    setup_sects = image[0x1f1] or 4
    offset, length = struct.unpack_from("<II", image, 0x248)
    start = (setup_sects + 1) * 512 + offset
    if start + length > len(image):
        return None
    return start, length


def _is_elf64(data):
    return (len(data) > 64 and data[:4] == b"\x7fELF" and data[4] == 2
            and struct.unpack_from("<H", data, 18)[0] == 62)


def extract_vmlinux(image):
    """The ELF vmlinux inside a bzImage: (bytes, format name).

    Candidates are every place a known magic number occurs, the one the
    set-up header points at first; the first that decompresses to an
    x86-64 ELF file wins."""
    hint = _payload_hint(image)
    candidates = []
    if hint:
        start, length = hint
        for name, magic, fn in FORMATS:
            if image.startswith(magic, start):
                candidates.append((start, start + length, name, fn))
    for name, magic, fn in FORMATS:
        pos = image.find(magic)
        while pos >= 0:
            candidates.append((pos, len(image), name, fn))
            pos = image.find(magic, pos + 1)
    tried = set()
    for start, end, name, fn in candidates:
        if (start, name) in tried:
            continue
        tried.add((start, name))
        try:
            out = fn(image[start:end])
        except (lzma.LZMAError, zlib.error, OSError, EOFError, ValueError):
            continue
        if _is_elf64(out):
            return out, name
    raise PeerError("no compressed ELF kernel found in the bzImage "
                    "(tried %d candidate payloads)" % len(tried))


def _notes(elf):
    """(name, type, desc) of every ELF note in elf's PT_NOTE segments."""
    phoff, = struct.unpack_from("<Q", elf, 32)
    phentsize, phnum = struct.unpack_from("<HH", elf, 54)
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from(
            "<IIQQQQ", elf, phoff + i * phentsize)
        if p_type != 4:                         # PT_NOTE
            continue
        pos, end = p_offset, p_offset + p_filesz
        while pos + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", elf, pos)
            pos += 12
            name = elf[pos:pos + namesz].rstrip(b"\0")
            pos += (namesz + 3) & ~3
            desc = elf[pos:pos + descsz]
            pos += (descsz + 3) & ~3
            yield name, ntype, desc


def check_pvh(elf):
    """QEMU's -kernel boots an ELF only through the Xen PVH entry note
    (XEN_ELFNOTE_PHYS32_ENTRY, type 18)."""
    if not any(n == b"Xen" and t == 18 for n, t, _ in _notes(elf)):
        raise PeerError("the kernel has no PVH entry note (CONFIG_PVH); "
                        "QEMU cannot boot it as an ELF with -kernel")
