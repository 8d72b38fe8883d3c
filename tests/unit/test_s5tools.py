#!/usr/bin/env python3
"""Host tests for the S5 tools mkfs.s5 and fsck.s5.

    python3 tests/unit/test_s5tools.py [--tools DIR] [-v]

Builds the tools (normally, and with the sanitizers when the compiler has
them, which are then used for every run), makes an image from a host tree
and checks it with fsck.s5 and with an independent reader written here from
docs/s5-format.md, then corrupts each on-disk structure and expects fsck.s5
to fail with a relevant message.  Prints "PASS name" or "FAIL name: why" per
case and ends with "N passed, N failed"; exits non-zero on any failure.
"""
import argparse
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BSIZE = 1024
MAGIC = 0xfd187e20
FSOKAY, FSACTIVE = 0x7c269d38, 0x5e72d81a
IFMT, IFDIR, IFREG, IFLNK = 0o170000, 0o040000, 0o100000, 0o120000

# Superblock field offsets from the start of block 1 (see kern/s5/s5_fs.h).
SB = BSIZE
SB_FMT = "<HHIHH50IH100HBBBBHI4HIH6s6sH12IIII"
O_ISIZE, O_FSIZE, O_NFREE, O_FREE = 0, 4, 8, 12
O_NINODE, O_INODE, O_TIME, O_TFREE, O_TINODE = 212, 214, 420, 432, 436
O_STATE, O_MAGIC, O_TYPE = 500, 504, 508
DI_FMT = "<HHHHI39sBIII"
O_MODE, O_NLINK, O_SIZE, O_ADDR = 0, 2, 8, 12

assert struct.calcsize(SB_FMT) == 512 and struct.calcsize(DI_FMT) == 64


# ---------------------------------------------------------------------------
# An independent reader of the format.

class Image:
    """A read-only view of an S5 image held in memory."""

    def __init__(self, data):
        self.data = bytes(data)
        f = struct.unpack_from(SB_FMT, self.data, SB)
        self.isize, self.fsize, self.nfree = f[0], f[2], f[3]
        self.free = list(f[5:55])
        self.ninode = f[55]
        self.inodes_cache = list(f[56:156])
        self.time = f[161]
        self.tfree, self.tinode = f[166], f[167]
        self.state, self.magic, self.type = f[-3], f[-2], f[-1]
        self.ninodes = (self.isize - 2) * 16

    def block(self, b):
        return self.data[b * BSIZE:(b + 1) * BSIZE]

    def ipos(self, ino):
        return 2 * BSIZE + (ino - 1) * 64

    def inode(self, ino):
        v = struct.unpack_from(DI_FMT, self.data, self.ipos(ino))
        addr = [int.from_bytes(v[5][3 * i:3 * i + 3], "little") for i in range(13)]
        return {"mode": v[0], "nlink": v[1], "uid": v[2], "gid": v[3], "size": v[4],
                "addr": addr, "gen": v[6], "mtime": v[8]}

    def ind(self, b):
        return struct.unpack_from("<256I", self.data, b * BSIZE)

    def bmap(self, di, lbn):
        if lbn < 10:
            return di["addr"][lbn]
        lbn -= 10
        for level, slot in ((1, 10), (2, 11), (3, 12)):
            span = 256 ** level
            if lbn < span:
                b = di["addr"][slot]
                for k in range(level - 1, -1, -1):
                    if b == 0:
                        return 0
                    b = self.ind(b)[(lbn // 256 ** k) % 256]
                return b
            lbn -= span
        raise ValueError("lbn too large")

    def read(self, ino):
        di = self.inode(ino)
        out = bytearray()
        for lbn in range((di["size"] + BSIZE - 1) // BSIZE):
            b = self.bmap(di, lbn)
            out += self.block(b) if b else bytes(BSIZE)
        return bytes(out[:di["size"]])

    def entries(self, ino):
        """Every slot of a directory: (slot, d_ino, name, byte offset in image)."""
        di = self.inode(ino)
        out = []
        for slot in range(di["size"] // 16):
            b = self.bmap(di, slot // 64)
            off = b * BSIZE + (slot % 64) * 16
            d_ino = struct.unpack_from("<H", self.data, off)[0]
            name = self.data[off + 2:off + 16].rstrip(b"\0")
            out.append((slot, d_ino, name, off))
        return out

    def lookup(self, dino, name):
        for _, d_ino, n, _ in self.entries(dino):
            if d_ino and n == name:
                return d_ino
        return 0

    def namei(self, path):
        ino = 2
        for part in path.strip("/").split("/"):
            if part:
                ino = self.lookup(ino, part.encode())
                if not ino:
                    return 0
        return ino

    def entry_offset(self, dirpath, name):
        dino = self.namei(dirpath)
        for _, d_ino, n, off in self.entries(dino):
            if d_ino and n == name.encode():
                return off
        raise KeyError(name)

    def free_list(self):
        """Walks the free-block chain; returns every free block in order."""
        out, nfree, lst = [], self.nfree, self.free
        while nfree:
            out += [lst[i] for i in range(nfree - 1, 0, -1)]
            if lst[0] == 0:
                break
            out.append(lst[0])
            nfree = struct.unpack_from("<I", self.data, lst[0] * BSIZE)[0]
            lst = list(struct.unpack_from("<50I", self.data, lst[0] * BSIZE + 4))
        return out


def indir_blocks(n):
    """Indirect blocks a file of n data blocks needs (independent of the C helper)."""
    if n <= 10:
        return 0
    n -= 10
    if n <= 256:
        return 1
    n -= 256
    if n <= 65536:
        return 1 + 1 + (n + 255) // 256
    n -= 65536
    return 1 + (1 + 256) + 1 + (n + 65535) // 65536 + (n + 255) // 256


# ---------------------------------------------------------------------------
# The harness.

class Ctx:
    pass


CTX = Ctx()
RESULTS = []
TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


class Fail(Exception):
    pass


def check(cond, why):
    if not cond:
        raise Fail(why)


def run(args, **kw):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:exitcode=99",
               UBSAN_OPTIONS="halt_on_error=1:exitcode=99")
    env.update(kw.pop("env", {}))
    p = subprocess.run(args, capture_output=True, text=True, errors="replace",
                       timeout=120, env=env, **kw)
    check("Sanitizer" not in p.stderr and "runtime error" not in p.stderr,
          "sanitizer report from %s: %s" % (os.path.basename(args[0]), p.stderr[-400:]))
    return p


def mkfs(*args, env=None):
    return run([CTX.mkfs] + [str(a) for a in args], env=env or {})


def fsck(image):
    p = run([CTX.fsck, image])
    CTX.last = p.stdout + p.stderr
    return p


def tmp(name):
    return os.path.join(CTX.tmp, name)


def write_tree(top):
    """The source tree: nested dirs, every size class, links, odd names."""
    rnd = random.Random(5)
    os.makedirs(os.path.join(top, "small/d1/d2/d3"))
    os.makedirs(os.path.join(top, "many"))
    files = {
        "hello.txt": b"hello, world\n",
        "empty": b"",
        "abcdefghijklmn": b"fourteen-character name\n",
        "small/d1/d2/d3/deep.txt": b"deep\n",
        "exact10": bytes(rnd.getrandbits(8) for _ in range(10 * BSIZE)),
        "ind1.bin": bytes(rnd.getrandbits(8) for _ in range(50 * BSIZE + 77)),
        "exact266": bytes(rnd.getrandbits(8) for _ in range(266 * BSIZE)),
        "ind2.bin": bytes(rnd.getrandbits(8) for _ in range(400 * BSIZE + 5)),
        "data.txt": b"linked twice\n" * 100,
    }
    for i in range(100):
        files["many/f%03d" % i] = b"%d\n" % i
    for path, data in files.items():
        with open(os.path.join(top, path), "wb") as fp:
            fp.write(data)
    os.chmod(os.path.join(top, "hello.txt"), 0o600)
    os.chmod(os.path.join(top, "exact10"), 0o4755)
    os.chmod(os.path.join(top, "small/d1"), 0o700)
    os.link(os.path.join(top, "data.txt"), os.path.join(top, "small/data-link"))
    os.symlink("hello.txt", os.path.join(top, "link"))
    os.symlink("small/d1", os.path.join(top, "dirlink"))
    os.mkfifo(os.path.join(top, "fifo"))


def host_walk(top):
    """(relative path, lstat) for everything mkfs should copy."""
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            if os.path.isdir(p) and not os.path.islink(p) or \
               os.path.islink(p) or os.path.isfile(p):
                out.append((os.path.relpath(p, top), st))
    return out


def good_copy(name):
    path = tmp(name)
    shutil.copyfile(CTX.good, path)
    return path


def patch(path, off, fmt, *vals):
    with open(path, "r+b") as fp:
        fp.seek(off)
        fp.write(struct.pack(fmt, *vals))


def patch_bytes(path, off, data):
    with open(path, "r+b") as fp:
        fp.seek(off)
        fp.write(data)


def set_addr(path, ino, slot, bno):
    patch_bytes(path, CTX.img.ipos(ino) + O_ADDR + 3 * slot, bno.to_bytes(3, "little"))


def expect_bad(path, pattern):
    p = fsck(path)
    check(p.returncode == 1, "fsck exit %d, want 1; output: %s" % (p.returncode, CTX.last[-300:]))
    check(re.search(pattern, p.stdout), "no line matching /%s/ in: %s" % (pattern, p.stdout[-500:]))


# ---------------------------------------------------------------------------
# Building and the good image.

@test
def build_tools():
    out = os.path.join(ROOT, "build", "tools") if not CTX.tools else CTX.tools
    if not CTX.tools:
        p = subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "tools"), "BUILD=" + out],
                           capture_output=True, text=True)
        check(p.returncode == 0, "make tools failed: " + p.stderr[-500:])
    for t in ("mkfs.s5", "fsck.s5", "s5cat"):
        check(os.access(os.path.join(out, t), os.X_OK), "missing " + t)
    CTX.mkfs, CTX.fsck, CTX.s5cat = (os.path.join(out, t) for t in ("mkfs.s5", "fsck.s5", "s5cat"))
    if CTX.tools:
        return
    # Run everything under the sanitizers when the compiler supports them.
    san = tmp("san")
    p = subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "tools"), "BUILD=" + san,
                        "SAN=-fsanitize=address,undefined -fno-sanitize-recover=undefined"],
                       capture_output=True, text=True)
    if p.returncode == 0 and subprocess.run([os.path.join(san, "fsck.s5")],
                                            capture_output=True).returncode == 2:
        CTX.mkfs, CTX.fsck, CTX.s5cat = (os.path.join(san, t) for t in ("mkfs.s5", "fsck.s5", "s5cat"))
        CTX.sanitized = True


HELPERS_C = r"""
#include <stdio.h>
#include "kern/s5/s5_fs.h"
int main(void)
{
    static const uint32_t lbns[] = { 0, 9, 10, 265, 266, 267, 65801, 65802, 16843017 };
    uint8_t b[3];
    uint32_t idx[4];
    struct s5_super sb = { .s_isize = 34, .s_fsize = 2048, .s_magic = S5_MAGIC,
                           .s_type = S5_TYPE_1K };
    char n14[14] = "abcdefghijklmn", slash[14] = "a/b", hole[14] = "ab\0c";

    s5_ltol3(b, 0xabcdef);
    printf("l3 %x\n", s5_l3tol(b));
    for (unsigned i = 0; i < sizeof(lbns) / sizeof(lbns[0]); i++) {
        int lv = s5_lbn_path(lbns[i], idx);
        printf("path %u %d", lbns[i], lv);
        for (int j = 0; j <= lv; j++)
            printf(" %u", idx[j]);
        printf("\n");
    }
    for (uint32_t n = 0; n < 70000; n += 7)
        printf("ind %u %u\n", n, s5_indir_blocks(n));
    printf("itod %u %u %u %u\n", s5_itod(1), s5_itoo(16), s5_itod(17), s5_itooff(18));
    printf("ninodes %u valid %d %d\n", s5_ninodes(&sb), s5_ino_valid(&sb, 512),
           s5_ino_valid(&sb, 513));
    printf("match %d %d %d\n", s5_namematch(n14, "abcdefghijklmn", 14),
           s5_namematch(n14, "abc", 3), s5_namematch(slash, "a/b", 3));
    printf("invalid %d %d %d\n", s5_name_invalid(n14) == 0, s5_name_invalid(slash) != 0,
           s5_name_invalid(hole) != 0);
    printf("sb %d", s5_sb_invalid(&sb, 2048) == 0);
    sb.s_fsize = 4096;
    printf(" %d", s5_sb_invalid(&sb, 2048) != 0);
    sb.s_nfree = 51;
    printf(" %d\n", s5_sb_invalid(&sb, 0) != 0);
    s5_sb_set_clean(&sb, 12345);
    printf("clean %d\n", s5_sb_is_clean(&sb));
    return 0;
}
"""


def py_lbn_path(lbn):
    if lbn < 10:
        return 0, [lbn]
    lbn -= 10
    for level, slot in ((1, 10), (2, 11), (3, 12)):
        if lbn < 256 ** level:
            return level, [slot] + [(lbn // 256 ** k) % 256 for k in range(level - 1, -1, -1)]
        lbn -= 256 ** level
    return -1, []


@test
def header_freestanding():
    src = tmp("hdr.c")
    with open(src, "w") as fp:
        fp.write('#include "kern/s5/s5_fs.h"\nint f(const struct s5_dinode *d) '
                 '{ return (int)s5_getaddr(d, 12); }\n')
    p = subprocess.run(["gcc", "-std=gnu11", "-O2", "-ffreestanding", "-fno-pic",
                        "-mcmodel=kernel", "-mgeneral-regs-only", "-mno-red-zone",
                        "-Wall", "-Wextra", "-Werror", "-I" + ROOT, "-c", src,
                        "-o", tmp("hdr.o")], capture_output=True, text=True)
    check(p.returncode == 0, "header does not build with kernel flags: " + p.stderr[-500:])


@test
def header_helpers():
    src, exe = tmp("helpers.c"), tmp("helpers")
    with open(src, "w") as fp:
        fp.write(HELPERS_C)
    p = subprocess.run(["gcc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-I" + ROOT,
                        src, "-o", exe], capture_output=True, text=True)
    check(p.returncode == 0, "helper test does not build: " + p.stderr[-500:])
    out = subprocess.run([exe], capture_output=True, text=True).stdout.splitlines()
    check(out[0] == "l3 abcdef", out[0])
    for line in (l for l in out if l.startswith("path ")):
        f = [int(x) for x in line.split()[1:]]
        lv, idx = py_lbn_path(f[0])
        check(f[1] == lv and f[2:] == idx, "%s, want %d %s" % (line, lv, idx))
    for line in (l for l in out if l.startswith("ind ")):
        n, got = map(int, line.split()[1:])
        check(got == indir_blocks(n), "indir_blocks(%d) = %d, want %d" % (n, got, indir_blocks(n)))
    tail = [l for l in out if l.split()[0] not in ("path", "ind", "l3")]
    check(tail == ["itod 2 15 3 64", "ninodes 512 valid 1 0", "match 1 0 1",
                   "invalid 1 1 1", "sb 1 1 1", "clean 1"], "helpers: %s" % tail)


@test
def mkfs_from_tree():
    CTX.src = tmp("src")
    write_tree(CTX.src)
    CTX.good = tmp("good.img")
    p = mkfs("-d", CTX.src, CTX.good, "2M", env={"SOURCE_DATE_EPOCH": "1000000000"})
    check(p.returncode == 0, "mkfs failed: " + p.stderr)
    check("skipping" in p.stderr and "fifo" in p.stderr, "no warning for the FIFO: " + p.stderr)
    with open(CTX.good, "rb") as fp:
        CTX.img = Image(fp.read())


@test
def fsck_clean():
    p = fsck(CTX.good)
    check(p.returncode == 0, "fsck exit %d: %s" % (p.returncode, CTX.last))
    m = re.fullmatch(r"fsck\.s5: \S+: (\d+) files, (\d+) dirs, (\d+) blocks used, (\d+) free\n",
                     p.stdout)
    check(m, "unexpected output: " + p.stdout)
    entries = host_walk(CTX.src)
    ndirs = 1 + sum(1 for _, st in entries if (st.st_mode & IFMT) == IFDIR)
    inos = {(st.st_dev, st.st_ino) for _, st in entries if (st.st_mode & IFMT) != IFDIR}
    check(int(m.group(1)) == len(inos), "files %s, want %d" % (m.group(1), len(inos)))
    check(int(m.group(2)) == ndirs, "dirs %s, want %d" % (m.group(2), ndirs))
    img = CTX.img
    check(int(m.group(4)) == img.tfree, "free count differs from s_tfree")
    check(int(m.group(3)) + img.tfree == img.fsize - img.isize, "used + free != data blocks")


@test
def superblock_layout():
    img = CTX.img
    check(img.magic == MAGIC and img.type == 2, "magic/type %#x/%d" % (img.magic, img.type))
    check(img.fsize == 2048, "s_fsize %d" % img.fsize)
    check(img.ninodes == 512 and img.isize == 2 + 32, "default inode count %d" % img.ninodes)
    check(img.time == 1000000000 and (img.state + img.time) % 2**32 == FSOKAY,
          "not marked clean at SOURCE_DATE_EPOCH")
    used = sum(1 for i in range(1, img.ninodes + 1) if img.inode(i)["mode"])
    check(img.tinode == img.ninodes - used, "s_tinode %d, want %d" % (img.tinode, img.ninodes - used))
    bad = img.inode(1)
    check(bad["mode"] == IFREG and bad["nlink"] == 0 and bad["size"] == 0, "inode 1 %r" % bad)
    root = img.inode(2)
    check(root["mode"] == IFDIR | 0o755, "root mode %o" % root["mode"])


@test
def extract_contents():
    for rel, st in host_walk(CTX.src):
        ino = CTX.img.namei(rel)
        check(ino, "%s not found in the image" % rel)
        di = CTX.img.inode(ino)
        if (st.st_mode & IFMT) == IFREG:
            with open(os.path.join(CTX.src, rel), "rb") as fp:
                check(CTX.img.read(ino) == fp.read(), "%s: contents differ" % rel)
        elif (st.st_mode & IFMT) == IFLNK:
            target = os.readlink(os.path.join(CTX.src, rel)).encode()
            check(CTX.img.read(ino) == target, "%s: link target differs" % rel)
        check(di["size"] == (0 if (st.st_mode & IFMT) == IFDIR else st.st_size) or
              (st.st_mode & IFMT) == IFDIR, "%s: size" % rel)
    check(CTX.img.namei("fifo") == 0, "the FIFO was copied")


@test
def extract_metadata():
    img = CTX.img
    for rel, st in host_walk(CTX.src):
        di = img.inode(img.namei(rel))
        want = st.st_mode & 0o7777 if (st.st_mode & IFMT) != IFLNK else 0o777
        check(di["mode"] == (st.st_mode & IFMT) | want, "%s: mode %o" % (rel, di["mode"]))
        check(di["uid"] == 0 and di["gid"] == 0, "%s: owner" % rel)
        check(di["mtime"] == int(st.st_mtime), "%s: mtime" % rel)
        if (st.st_mode & IFMT) == IFDIR:
            subdirs = sum(1 for n in os.listdir(os.path.join(CTX.src, rel))
                          if os.path.isdir(os.path.join(CTX.src, rel, n)) and
                          not os.path.islink(os.path.join(CTX.src, rel, n)))
            check(di["nlink"] == 2 + subdirs, "%s: nlink %d" % (rel, di["nlink"]))
    a, b = img.namei("data.txt"), img.namei("small/data-link")
    check(a == b and img.inode(a)["nlink"] == 2, "hard link not preserved")
    check(img.inode(img.namei("hello.txt"))["nlink"] == 1, "nlink of a plain file")


@test
def indirect_levels():
    img = CTX.img
    d = {n: img.inode(img.namei(n))["addr"] for n in ("exact10", "ind1.bin", "exact266", "ind2.bin")}
    check(d["exact10"][9] and not d["exact10"][10], "exact10 should use only direct blocks")
    check(d["ind1.bin"][10] and not d["ind1.bin"][11], "ind1.bin should use single indirect")
    check(d["exact266"][10] and not d["exact266"][11], "exact266 should end in single indirect")
    check(d["ind2.bin"][11] and not d["ind2.bin"][12], "ind2.bin should use double indirect")
    used = sum(1 for i in range(1, img.ninodes + 1) if img.inode(i)["mode"])
    check(used > 100, "sanity")


@test
def directory_format():
    img = CTX.img
    for rel, st in [("", None)] + host_walk(CTX.src):
        if st is not None and (st.st_mode & IFMT) != IFDIR:
            continue
        ino = img.namei(rel)
        parent = img.namei(os.path.dirname(rel)) if rel else 2
        ents = img.entries(ino)
        check(ents[0][1:3] == (ino, b".") and ents[1][1:3] == (parent, b".."),
              "%r: . and .. wrong" % rel)
        check(img.inode(ino)["size"] % 16 == 0, "%r: size" % rel)
    check(len(img.entries(img.namei("many"))) == 102, "many/ should span two blocks")
    raw = img.data[img.entry_offset("/", "abcdefghijklmn") + 2:][:14]
    check(raw == b"abcdefghijklmn", "14-character name stored without terminator")


@test
def free_list_layout():
    img = CTX.img
    free = img.free_list()
    check(len(free) == img.tfree, "chain holds %d, s_tfree %d" % (len(free), img.tfree))
    check(len(set(free)) == len(free), "duplicates on the free list")
    check(all(img.isize <= b < img.fsize for b in free), "free block out of range")
    check(free[0] == min(free), "the lowest free block should be allocated first")
    cache = img.inodes_cache[:img.ninode]
    check(all(img.inode(i)["mode"] == 0 for i in cache), "cached inode not free")
    check(cache and cache[-1] == min(cache), "the lowest free inode should be on top")


@test
def s5cat_reads():
    data = subprocess.run([CTX.s5cat, CTX.good, "ind2.bin"], capture_output=True).stdout
    with open(os.path.join(CTX.src, "ind2.bin"), "rb") as fp:
        check(data == fp.read(), "s5cat output differs")
    p = run([CTX.s5cat, CTX.good, "/"])
    check(re.search(r"^\s+2 0040755 .* \.\.$", p.stdout, re.M) and "abcdefghijklmn" in p.stdout,
          "root listing: " + p.stdout)


@test
def reproducible():
    img2 = tmp("again.img")
    mkfs("-d", CTX.src, img2, "2M", env={"SOURCE_DATE_EPOCH": "1000000000"})
    with open(CTX.good, "rb") as a, open(img2, "rb") as b:
        check(a.read() == b.read(), "two runs with SOURCE_DATE_EPOCH differ")


# ---------------------------------------------------------------------------
# mkfs options and limits.

@test
def empty_fs():
    path = tmp("empty.img")
    p = mkfs(path, 100)
    check(p.returncode == 0, p.stderr)
    check(fsck(path).returncode == 0, CTX.last)
    with open(path, "rb") as fp:
        img = Image(fp.read())
    check([e[1:3] for e in img.entries(2)] == [(2, b"."), (2, b"..")], "root entries")
    check(img.tinode == img.ninodes - 2 and img.ninodes == 32, "inodes %d/%d" % (img.tinode, img.ninodes))
    check(img.tfree == img.fsize - img.isize - 1, "s_tfree %d" % img.tfree)


@test
def inode_option():
    path = tmp("inodes.img")
    check(mkfs("-i", 100, path, 1000).returncode == 0, "mkfs -i 100")
    with open(path, "rb") as fp:
        check(Image(fp.read()).ninodes == 112, "100 inodes should round up to 112")
    check(fsck(path).returncode == 0, CTX.last)
    p = mkfs("-i", 70000, path, "100M")
    check(p.returncode != 0 and "65520" in p.stderr, "70000 inodes accepted: " + p.stderr)


@test
def size_suffixes():
    for arg, blocks in (("2M", 2048), ("1536K", 1536), ("777", 777)):
        path = tmp("size.img")
        check(mkfs(path, arg).returncode == 0, "mkfs " + arg)
        check(os.path.getsize(path) == blocks * BSIZE, "%s: image size" % arg)
    for bad in ("12X", "-5", "", "M"):
        check(mkfs(tmp("bad.img"), bad).returncode != 0, "size %r accepted" % bad)
    check(mkfs(tmp("big.img"), "17G").returncode != 0, "17G accepted (over 2^24 blocks)")


@test
def name_too_long():
    src = tmp("longname")
    os.makedirs(os.path.join(src, "sub"))
    open(os.path.join(src, "sub", "abcdefghijklmno"), "w").close()
    path = tmp("long.img")
    p = mkfs("-d", src, path, 500)
    check(p.returncode != 0, "a 15-character name was accepted")
    check("abcdefghijklmno" in p.stderr and "14" in p.stderr, "message: " + p.stderr)
    check(not os.path.exists(path), "the failed image was left behind")


@test
def too_small():
    p = mkfs(tmp("tiny.img"), 3)
    check(p.returncode != 0 and "too small" in p.stderr, "3 KiB accepted: " + p.stderr)
    p = mkfs("-i", 2000, tmp("tiny.img"), 100)
    check(p.returncode != 0 and "too small" in p.stderr, "2000 inodes in 100 KiB accepted")
    check(mkfs(tmp("min.img"), 4).returncode == 0, "4 KiB (the minimum) refused")
    check(fsck(tmp("min.img")).returncode == 0, CTX.last)


@test
def out_of_inodes():
    src = tmp("manyfiles")
    os.makedirs(src)
    for i in range(20):
        open(os.path.join(src, "f%d" % i), "w").close()
    p = mkfs("-i", 16, "-d", src, tmp("noino.img"), 200)
    check(p.returncode != 0 and "out of inodes" in p.stderr, "message: " + p.stderr)


def fill_tree(nbytes):
    src = tmp("fill%d" % nbytes)
    os.makedirs(src)
    with open(os.path.join(src, "blob"), "wb") as fp:
        fp.write(b"\xa5" * nbytes)
    return src


@test
def out_of_space():
    p = mkfs("-d", fill_tree(300 * BSIZE), tmp("nospace.img"), 200)
    check(p.returncode != 0 and "out of space" in p.stderr, "message: " + p.stderr)


@test
def full_image():
    # 400 KiB, 16 inodes: 3 blocks before the data area, 1 for the root
    # directory, leaving 396 for one file with its indirect blocks.
    d = max(n for n in range(400) if n + indir_blocks(n) <= 400 - 3 - 1)
    path = tmp("full.img")
    p = mkfs("-i", 16, "-d", fill_tree(d * BSIZE), path, 400)
    check(p.returncode == 0, "exact fill failed: " + p.stderr)
    p = fsck(path)
    check(p.returncode == 0 and p.stdout.rstrip().endswith(" 0 free"), CTX.last)
    with open(path, "rb") as fp:
        img = Image(fp.read())
    check(img.tfree == 0 and img.free_list() == [], "free list not empty")
    p = mkfs("-i", 16, "-d", fill_tree(d * BSIZE + 1), tmp("over.img"), 400)
    check(p.returncode != 0 and "out of space" in p.stderr, "one byte over was accepted")


# ---------------------------------------------------------------------------
# fsck on broken images: the corruption matrix.

def corrupt(name, pattern):
    """Registers a test that applies fn to a copy of the good image."""
    def wrap(fn):
        def t():
            path = good_copy(name + ".img")
            fn(path, CTX.img)
            expect_bad(path, pattern)
        t.__name__ = "corrupt_" + name
        TESTS.append(t)
        return fn
    return wrap


def file_ino(name):
    return CTX.img.namei(name)


@corrupt("bad_magic", r"bad magic")
def _(path, img):
    patch(path, SB + O_MAGIC, "<I", 0x12345678)


@corrupt("bad_type", r"s_type")
def _(path, img):
    patch(path, SB + O_TYPE, "<I", 1)


@corrupt("isize_not_below_fsize", r"s_isize is not below s_fsize")
def _(path, img):
    patch(path, SB + O_FSIZE, "<I", img.isize)


@corrupt("isize_zero", r"s_isize leaves no room")
def _(path, img):
    patch(path, SB + O_ISIZE, "<H", 0)


@corrupt("fsize_past_image", r"s_fsize is larger than the image")
def _(path, img):
    patch(path, SB + O_FSIZE, "<I", img.fsize + 100)


@corrupt("truncated_image", r"s_fsize is larger than the image")
def _(path, img):
    os.truncate(path, (img.fsize - 10) * BSIZE)


@corrupt("nfree_too_big", r"s_nfree exceeds 50")
def _(path, img):
    patch(path, SB + O_NFREE, "<H", 51)


@corrupt("free_entry_out_of_range", r"free list \(superblock.*out of range")
def _(path, img):
    patch(path, SB + O_FREE + 4 * (img.nfree - 1), "<I", img.fsize + 7)


@corrupt("chain_entry_out_of_range", r"free list \(chain block.*out of range")
def _(path, img):
    patch(path, img.free[0] * BSIZE + 4 + 4 * 20, "<I", 5)


@corrupt("chain_nfree_too_big", r"df_nfree")
def _(path, img):
    patch(path, img.free[0] * BSIZE, "<I", 77)


@corrupt("free_block_twice", r"on the free list twice")
def _(path, img):
    patch(path, SB + O_FREE + 4 * (img.nfree - 1), "<I", img.free_list()[-1])


@corrupt("used_block_on_free_list", r"is in use by inode")
def _(path, img):
    patch(path, SB + O_FREE + 4 * (img.nfree - 1), "<I", img.inode(file_ino("hello.txt"))["addr"][0])


@corrupt("lost_block", r"lost \(neither in use nor free\)")
def _(path, img):
    patch(path, SB + O_NFREE, "<H", img.nfree - 1)


@corrupt("tfree_mismatch", r"s_tfree is \d+ but the free list holds")
def _(path, img):
    patch(path, SB + O_TFREE, "<I", img.tfree + 1)


@corrupt("duplicate_block", r"claimed twice")
def _(path, img):
    set_addr(path, file_ino("ind1.bin"), 3, img.inode(file_ino("exact10"))["addr"][3])


@corrupt("block_past_end", r"inode \d+: data block \d+ out of range")
def _(path, img):
    set_addr(path, file_ino("hello.txt"), 0, img.fsize + 5)


@corrupt("block_in_inode_list", r"out of range")
def _(path, img):
    set_addr(path, file_ino("exact10"), 2, 3)


@corrupt("indirect_entry_past_end", r"inode \d+: data block \d+ out of range")
def _(path, img):
    ind = img.inode(file_ino("ind1.bin"))["addr"][10]
    patch(path, ind * BSIZE + 4 * 7, "<I", 0xfffff0)


@corrupt("indirect_block_past_end", r"indirect block \d+ out of range")
def _(path, img):
    set_addr(path, file_ino("ind2.bin"), 11, img.fsize)


@corrupt("pointer_beyond_size", r"beyond the file size")
def _(path, img):
    patch(path, img.ipos(file_ino("ind1.bin")) + O_SIZE, "<I", 100)


@corrupt("bad_mode", r"bad mode")
def _(path, img):
    patch(path, img.ipos(file_ino("hello.txt")) + O_MODE, "<H", 0o170644)


@corrupt("dirent_past_inode_list", r"past the end of the inode list")
def _(path, img):
    patch(path, img.entry_offset("small/d1", "d2"), "<H", img.ninodes + 1)


@corrupt("dirent_to_free_inode", r"points to free inode")
def _(path, img):
    patch(path, img.entry_offset("/", "hello.txt"), "<H", img.ninodes - 1)


@corrupt("wrong_link_count", r"link count is 3 but 2 directory entries")
def _(path, img):
    patch(path, img.ipos(file_ino("data.txt")) + O_NLINK, "<H", 3)


@corrupt("missing_dot", r"missing '\.'")
def _(path, img):
    off = img.entries(file_ino("small"))[0][3]
    patch_bytes(path, off + 2, b"x")


@corrupt("wrong_dotdot", r"'\.\.' points to inode")
def _(path, img):
    off = img.entries(file_ino("small/d1/d2"))[1][3]
    patch(path, off, "<H", 2)


@corrupt("unreachable_inode", r"allocated but unreachable")
def _(path, img):
    patch(path, img.entry_offset("/", "hello.txt"), "<H", 0)


@corrupt("unreachable_subtree", r"inode \d+ .*unreachable")
def _(path, img):
    patch(path, img.entry_offset("small/d1", "d2"), "<H", 0)


@corrupt("tinode_mismatch", r"s_tinode is \d+ but \d+ inodes are free")
def _(path, img):
    patch(path, SB + O_TINODE, "<H", img.tinode + 1)


@corrupt("cached_inode_allocated", r"free-inode cache entry \d+: inode 2 is allocated")
def _(path, img):
    patch(path, SB + O_INODE, "<H", 2)


@corrupt("slash_in_name", r"'/' in name")
def _(path, img):
    patch_bytes(path, img.entry_offset("/", "hello.txt") + 2, b"a/b")


@corrupt("nul_in_name", r"NUL in the middle")
def _(path, img):
    patch_bytes(path, img.entry_offset("/", "abcdefghijklmn") + 2 + 3, b"\0")


@corrupt("dir_size_odd", r"not a multiple of 16")
def _(path, img):
    patch(path, img.ipos(file_ino("small")) + O_SIZE, "<I", img.inode(file_ino("small"))["size"] + 3)


@corrupt("dir_size_past_blocks", r"runs past its last block")
def _(path, img):
    patch(path, img.ipos(file_ino("small")) + O_SIZE, "<I", 5 * BSIZE)


@corrupt("root_not_dir", r"root inode 2 is not a directory")
def _(path, img):
    patch(path, img.ipos(2) + O_MODE, "<H", IFREG | 0o644)


@corrupt("directory_hard_link", r"second link to directory")
def _(path, img):
    patch(path, img.entry_offset("/", "hello.txt"), "<H", file_ino("small/d1"))


@corrupt("marked_bad", r"marked bad")
def _(path, img):
    patch(path, SB + O_STATE, "<I", 0xcb096f43)


@test
def dirty_state_is_a_note():
    path = good_copy("dirty.img")
    patch(path, SB + O_STATE, "<I", FSACTIVE)
    p = fsck(path)
    check(p.returncode == 0 and "not cleanly unmounted" in p.stdout, CTX.last)


@test
def not_an_image():
    path = tmp("garbage.img")
    with open(path, "wb") as fp:
        fp.write(random.Random(1).randbytes(100 * BSIZE))
    expect_bad(path, r"bad magic")
    open(path, "wb").close()
    expect_bad(path, r"too small to hold a superblock")
    p = fsck(tmp("does-not-exist.img"))
    check(p.returncode == 2, "missing image: exit %d" % p.returncode)


@test
def fuzz_metadata():
    """Random byte changes in metadata never crash fsck, and it never hangs."""
    img, rnd = CTX.img, random.Random(42)
    meta = [SB // BSIZE] + list(range(2, img.isize))
    meta += [b for _, d_ino, _, off in img.entries(2) for b in [off // BSIZE]]
    meta += [img.inode(file_ino("ind2.bin"))["addr"][11], img.free[0]]
    with open(CTX.good, "rb") as fp:
        good = fp.read()
    path = tmp("fuzz.img")
    flagged = 0
    for i in range(150):
        data = bytearray(good)
        for _ in range(rnd.randint(1, 8)):
            data[rnd.choice(meta) * BSIZE + rnd.randrange(BSIZE)] = rnd.randrange(256)
        with open(path, "wb") as fp:
            fp.write(data)
        p = fsck(path)
        check(p.returncode in (0, 1), "round %d: fsck exit %d: %s" % (i, p.returncode, CTX.last[-300:]))
        flagged += p.returncode
    check(flagged > 50, "only %d of 150 corrupted images were flagged" % flagged)


# ---------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tools", help="use mkfs.s5/fsck.s5/s5cat from DIR instead of building")
    ap.add_argument("-v", action="store_true", help="print the last tool output on failure")
    args = ap.parse_args()
    CTX.tools = os.path.abspath(args.tools) if args.tools else None
    CTX.sanitized = False
    CTX.last = ""
    CTX.tmp = tempfile.mkdtemp(prefix="s5tools.")
    passed = failed = 0
    try:
        for t in TESTS:
            name = t.__name__
            try:
                t()
                print("PASS " + name)
                passed += 1
            except Exception as e:      # a failed check or a broken step
                why = str(e) if isinstance(e, Fail) else "%s: %s" % (type(e).__name__, e)
                print("FAIL %s: %s" % (name, why.replace("\n", " | ")[:600]))
                if args.v:
                    print(CTX.last)
                failed += 1
            sys.stdout.flush()
    finally:
        shutil.rmtree(CTX.tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
