#!/usr/bin/env python3
"""Host tests for the S5 tools mkfs.s5 and fsck.s5.

    python3 tests/unit/test_s5tools.py [--tools DIR] [-v]

Builds the tools (normally, and with the sanitizers when the compiler has
them, which are then used for every run), makes an image from a host tree
and checks it with fsck.s5 and with an independent reader written here from
docs/s5-format.md, then corrupts each on-disk structure and expects fsck.s5
to fail with a relevant message.  Prints "PASS name" or "FAIL name: why" per
case and ends with "N passed, N failed"; exits non-zero on any failure.

The good-image and mkfs cases are here; the corruption matrix is in
s5_corruption.py, the independent reader in s5image.py, the harness in
s5harness.py.  Cases run in the order they are registered.
"""
import os
import re
import struct
import subprocess
import sys

from s5image import *  # noqa: F401,F403
from s5harness import *  # noqa: F401,F403
import s5harness


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
def svr4_layout():
    """The bytes where Linux's sysv driver looks for an SVR4 file system
    (struct sysv4_super_block at byte 512), read here by raw offsets."""
    data, img = CTX.img.data, CTX.img
    u16 = lambda off: struct.unpack_from("<H", data, off)[0]
    u32 = lambda off: struct.unpack_from("<I", data, off)[0]
    check(data[:512] == bytes(512), "the boot sector is not left zero")
    check(data[BSIZE:2 * BSIZE] == bytes(BSIZE), "block 1 is not left zero")
    check(u32(512 + 0x1f8) == 0xfd187e20 and u32(512 + 0x1fc) == 2,
          "magic/type not at bytes 1016/1020")
    check(u16(512 + 0xd4) == img.ninode and u16(512 + 0xd6) == 0,
          "s_ninode at 0xd4 and s_pad2 at 0xd6")
    cache = [u16(512 + 0xd8 + 2 * i) for i in range(img.ninode)]
    check(cache and all(img.inode(i)["mode"] == 0 for i in cache),
          "s_inode at 0xd8 does not hold free inodes: %r" % cache[:5])
    check(u32(512 + 0x1a4) == img.time and u32(512 + 0x1b0) == img.tfree,
          "s_time at 0x1a4, s_tfree at 0x1b0")
    check(u16(512 + 0x1b4) == img.tinode and u16(512 + 0x1b6) == 0,
          "s_tinode at 0x1b4, s_pad3 at 0x1b6")
    chain = img.free[0]
    check(chain and u16(chain * BSIZE) == 50 and u16(chain * BSIZE + 2) == 0,
          "chain block %d: a 16-bit count of 50 and zero padding" % chain)


@test
def time_never_before_1980():
    """Linux reads a superblock with s_time before 1980 as SVR2's layout."""
    path = tmp("epoch0.img")
    p = mkfs(path, "1M", env={"SOURCE_DATE_EPOCH": "0"})
    check(p.returncode == 0, "mkfs failed: " + p.stderr)
    with open(path, "rb") as fp:
        img = Image(fp.read())
    check(img.time == 315532800 and (img.state + img.time) % 2**32 == FSOKAY,
          "s_time %d, want 1980-01-01 and clean" % img.time)
    check(fsck(path).returncode == 0, CTX.last)
    patch(path, SB + O_TIME, "<I", 1000)
    patch(path, SB + O_STATE, "<I", (FSOKAY - 1000) % 2**32)
    expect_bad(path, r"before 1980")


@test
def linux_free_list():
    """A free list as Linux's sysv leaves it when a block is freed into an
    empty cache: that block holds a chain block with a count of 0 and ends
    the list.  fsck.s5 accepts it and counts every block."""
    src = tmp("nearfull")
    os.makedirs(src)
    with open(os.path.join(src, "blob"), "wb") as fp:
        fp.write(b"\x5a" * (380 * BSIZE))
    path = tmp("linuxfree.img")
    check(mkfs("-i", 16, "-d", src, path, 400).returncode == 0, "mkfs: " + CTX.last)
    with open(path, "rb") as fp:
        img = Image(fp.read())
    free = img.free_list()
    check(img.free[0] == 0 and 3 <= len(free) < 50, "want a short list, got %r" % free)
    first, rest = free[-1], free[:-1]
    patch(path, SB + O_NFREE, "<H", 1 + len(rest))
    patch(path, SB + O_FREE, "<I", first)
    for i, b in enumerate(reversed(rest)):
        patch(path, SB + O_FREE + 4 * (1 + i), "<I", b)
    patch_bytes(path, first * BSIZE, bytes(BSIZE))
    with open(path, "rb") as fp:
        check(sorted(Image(fp.read()).free_list()) == sorted(free), "the list changed")
    p = fsck(path)
    check(p.returncode == 0 and p.stdout.rstrip().endswith(" %d free" % len(free)), CTX.last)


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
# Owners (-o), writing in place (s5cat -w), and the root image's sizing.

@test
def owners_option():
    src = tmp("owned")
    os.makedirs(os.path.join(src, "home", "ann"))
    with open(os.path.join(src, "home", "ann", "f"), "w") as fp:
        fp.write("x")
    owners = tmp("owners")
    with open(owners, "w") as fp:
        fp.write("# who owns what\nhome/ann 1001 1002\n/home/ann/f 65534 100\n")
    path = tmp("owned.img")
    p = mkfs("-d", src, "-o", owners, path, 200)
    check(p.returncode == 0, p.stderr)
    check(fsck(path).returncode == 0, CTX.last)
    with open(path, "rb") as fp:
        img = Image(fp.read())
    ann, f, home = (img.inode(img.namei(n)) for n in ("home/ann", "home/ann/f", "home"))
    check((ann["uid"], ann["gid"]) == (1001, 1002), "home/ann owner %r" % ((ann["uid"], ann["gid"]),))
    check((f["uid"], f["gid"]) == (65534, 100), "home/ann/f owner")
    check((home["uid"], home["gid"]) == (0, 0), "an unlisted file belongs to root")
    with open(owners, "w") as fp:
        fp.write("home/ann 70000 1\n")
    p = mkfs("-d", src, "-o", owners, path, 200)
    check(p.returncode != 0 and "owners:1" in p.stderr, "uid 70000 accepted: " + p.stderr)
    check(mkfs("-o", owners, path, 200).returncode != 0, "-o without -d accepted")


@test
def s5cat_write():
    src = tmp("slot")
    os.makedirs(src)
    with open(os.path.join(src, "slot"), "w") as fp:
        fp.write("#" * 3000)
    path = tmp("slot.img")
    check(mkfs("-d", src, path, 200).returncode == 0, "mkfs")
    with open(path, "rb") as fp:
        before = fp.read()
    p = run([CTX.s5cat, "-w", path, "/slot"], input="echo hi\n")
    check(p.returncode == 0, p.stderr)
    check(run([CTX.s5cat, path, "/slot"]).stdout == "echo hi\n" + "\n" * (3000 - 8),
          "the slot does not read back padded with newlines")
    check(fsck(path).returncode == 0, CTX.last)
    with open(path, "rb") as fp:
        after = fp.read()
    changed = [i // BSIZE for i in range(len(before)) if before[i] != after[i]]
    # Only the file's three data blocks change: no metadata at all.
    check(len(set(changed)) == 3, "blocks other than the file's changed: %r" % set(changed))
    p = run([CTX.s5cat, "-w", path, "/slot"], input="y" * 3001)
    check(p.returncode == 1 and "longer" in p.stderr, "an overlong input accepted: " + p.stderr)
    p = run([CTX.s5cat, "-w", path, "/"], input="x")
    check(p.returncode == 1 and "not a regular file" in p.stderr, "a directory written")
    p = run([CTX.s5cat, "-w", path, "/nope"], input="x")
    check(p.returncode == 1 and "not found" in p.stderr, "a missing file written")


@test
def root_image_sizing():
    """tools/mkroot.py: contents plus --free, checked by fsck's count."""
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import mkroot
    for size, blocks in ((0, 0), (1, 1), (10 * BSIZE, 10), (10 * BSIZE + 1, 12),
                         (266 * BSIZE, 267), (267 * BSIZE, 270)):
        check(mkroot.file_blocks(size) == blocks, "file_blocks(%d) != %d" % (size, blocks))
    src = tmp("rootadd")
    os.makedirs(src)
    with open(os.path.join(src, "blob"), "wb") as fp:
        fp.write(os.urandom(300 * BSIZE + 5))
    path = tmp("root.img")
    init = os.path.join(ROOT, "build", "userland", "init")
    p = run([sys.executable, os.path.join(ROOT, "tools", "mkroot.py"), path, "--add", src,
             "--free", "1M"] + (["--init", init] if os.path.exists(init) else []))
    check(p.returncode == 0, "mkroot failed: " + p.stderr)
    p = fsck(path)
    m = re.search(r" (\d+) free", p.stdout)
    check(p.returncode == 0 and m and int(m.group(1)) == 1024, "want 1024 free: " + CTX.last)
    p = run([sys.executable, os.path.join(ROOT, "tools", "mkroot.py"), path, "--free", "x"])
    check(p.returncode != 0 and len(p.stderr.strip().splitlines()) == 1,
          "a bad --free is not one line: " + p.stderr)


import s5_corruption  # noqa: E402,F401 (registers the corruption cases after these)
import s5_repair  # noqa: E402,F401 (fsck.s5 -y, -p on those cases)

if __name__ == "__main__":
    sys.exit(s5harness.main(__doc__))
