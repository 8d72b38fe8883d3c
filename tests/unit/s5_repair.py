"""fsck.s5's repairs (-y, -p) on the corruption matrix (s5_corruption.py):
every case is repaired and checks clean afterwards (or, when its
superblock is beyond repair, left unchanged with exit 4); -n never
writes; -p repairs the safe cases silently and refuses the rest; what
the damage did not touch survives the repair byte for byte, and an
unreachable file comes back in /lost+found; random metadata damage is
repaired to a clean image or refused, never crashing.  Registered after
s5_corruption.py, whose functions it reuses."""
import random

from s5image import *  # noqa: F401,F403
from s5harness import *  # noqa: F401,F403

# Cases whose superblock cannot be trusted: fsck -y changes nothing.
BEYOND_REPAIR = ("bad_magic", "bad_type", "isize_not_below_fsize", "isize_zero",
                 "fsize_past_image", "truncated_image")
# Cases fsck -p repairs on its own, and two it must leave to a person.
PREEN_SAFE = ("tfree_mismatch", "lost_block", "tinode_mismatch", "cached_inode_allocated",
              "free_inode_with_links", "wrong_link_count", "free_block_twice",
              "used_block_on_free_list", "chain_entry_out_of_range")
PREEN_UNSAFE = ("bad_mode", "slash_in_name", "duplicate_block")


def fsck_mode(mode, image):
    p = run([CTX.fsck] + ([mode] if mode else []) + [image])
    CTX.last = p.stdout + p.stderr
    return p


def read_bytes(path):
    with open(path, "rb") as fp:
        return fp.read()


def broken(case):
    path = good_copy("rep_" + case + ".img")
    CORRUPTIONS[case](path, CTX.img)
    return path


def s5cat(image, path):
    p = run([CTX.s5cat, image, path])
    return p.returncode, p.stdout


@test
def repair_every_corruption():
    for case in CORRUPTIONS:
        path = broken(case)
        before = read_bytes(path)
        p = fsck_mode("-y", path)
        if case in BEYOND_REPAIR:
            check(p.returncode == 4, "%s: -y exit %d, want 4: %s" % (case, p.returncode,
                                                                     CTX.last[-300:]))
            check(read_bytes(path) == before, "%s: -y changed an image it cannot repair" % case)
            continue
        check(p.returncode == 1 and "checks clean now" in p.stdout,
              "%s: -y exit %d: %s" % (case, p.returncode, CTX.last[-400:]))
        p = fsck_mode("-n", path)
        check(p.returncode == 0 and "not cleanly" not in p.stdout,
              "%s: not clean after -y: %s" % (case, CTX.last[-400:]))
        p = fsck_mode("-y", path)
        check(p.returncode == 0, "%s: a second -y found more: %s" % (case, CTX.last[-300:]))


@test
def no_repair_never_writes():
    for case in ("duplicate_block", "unreachable_subtree", "tfree_mismatch"):
        path = broken(case)
        before = read_bytes(path)
        for mode in ("-n", None):
            p = fsck_mode(mode, path)
            check(p.returncode == 1, "%s: %s exit %d" % (case, mode, p.returncode))
        check(read_bytes(path) == before, "%s: the check changed the image" % case)


@test
def preen_safe_and_unsafe():
    for case in PREEN_SAFE:
        path = broken(case)
        p = fsck_mode("-p", path)
        noisy = [l for l in p.stdout.splitlines() if not l.startswith("fsck.s5: ")]
        check(p.returncode == 1 and not noisy,
              "%s: -p exit %d, lines %r: %s" % (case, p.returncode, noisy, CTX.last[-300:]))
        check(fsck_mode("-n", path).returncode == 0, "%s: not clean after -p: %s"
              % (case, CTX.last[-300:]))
    for case in PREEN_UNSAFE:
        path = broken(case)
        before = read_bytes(path)
        p = fsck_mode("-p", path)
        check(p.returncode == 4 and "UNEXPECTED INCONSISTENCY" in p.stdout,
              "%s: -p exit %d: %s" % (case, p.returncode, CTX.last[-300:]))
        check(read_bytes(path) == before, "%s: -p changed the image" % case)


@test
def repair_keeps_what_was_not_damaged():
    path = broken("unreachable_inode")   # hello.txt's entry cleared
    ino = file_ino("hello.txt")
    check(fsck_mode("-y", path).returncode == 1, CTX.last[-300:])
    rc, text = s5cat(path, "/lost+found/#%d" % ino)
    check(rc == 0 and text == "hello, world\n", "hello.txt not in lost+found: %r" % text[:80])
    path = broken("duplicate_block")
    check(fsck_mode("-y", path).returncode == 1, CTX.last[-300:])
    for name in ("small/d1/d2/d3/deep.txt", "abcdefghijklmn"):
        rc, text = s5cat(path, "/" + name)
        rc0, want = s5cat(CTX.good, "/" + name)
        check(rc == 0 and text == want, "%s changed by the repair" % name)


def s5cat_bytes(image, path):
    """The file's bytes as s5cat prints them (s5cat() decodes them as text)."""
    import subprocess
    p = subprocess.run([CTX.s5cat, image, path], capture_output=True, timeout=120)
    return p.returncode, p.stdout


@test
def repair_duplicate_keeps_both_contents():
    """A block claimed by two inodes: whichever inode number is lower, the
    block's owner reads the same after the repair and the other file gets
    a copy of the block (not a hole), so a crash's stale claim cannot take
    a block from a synced file."""
    a, b = file_ino("exact10"), file_ino("ind1.bin")
    names = {a: "/exact10", b: "/ind1.bin"}
    for victim, stale in ((a, b), (b, a)):
        path = good_copy("rep_dup_%d_%d.img" % (victim, stale))
        set_addr(path, stale, 3, CTX.img.inode(victim)["addr"][3])
        check(fsck_mode("-y", path).returncode == 1, CTX.last[-300:])
        check(fsck_mode("-n", path).returncode == 0, "not clean: %s" % CTX.last[-300:])
        rc, got = s5cat_bytes(path, names[victim])
        rc0, want = s5cat_bytes(CTX.good, names[victim])
        check(rc == 0 and got == want, "inode %d (%s), the block's owner, changed when "
              "inode %d claimed its block too" % (victim, names[victim], stale))
        rc, other = s5cat_bytes(path, names[stale])
        block3 = slice(3 * 1024, 4 * 1024)
        check(rc == 0 and other[block3] == want[block3],
              "inode %d did not get a copy of the block it claimed (%s)" % (
                  stale, "a hole" if other[block3] == bytes(1024) else "other data"))


@test
def dirty_image_marked_clean():
    path = good_copy("rep_dirty.img")
    patch(path, SB + O_STATE, "<I", FSACTIVE)
    p = fsck_mode("-y", path)
    check(p.returncode == 0 and "marked clean" in p.stdout, CTX.last[-300:])
    p = fsck_mode("-n", path)
    check(p.returncode == 0 and "not cleanly" not in p.stdout, CTX.last[-300:])


@test
def repair_usage():
    p = fsck_mode("-y", tmp("does-not-exist.img"))
    check(p.returncode == 2, "missing image: exit %d" % p.returncode)
    p = run([CTX.fsck, "-y", "-n", CTX.good])
    check(p.returncode == 2 and "usage" in p.stderr, "-y -n together: exit %d" % p.returncode)


@test
def repair_fuzzed_metadata():
    """Random byte changes in metadata: -y leaves a clean image (exit 0 or
    1) or refuses (4, an unusable superblock); it never crashes, and a
    second -y finds nothing."""
    img, rnd = CTX.img, random.Random(77)
    meta = [SB // BSIZE] + list(range(2, img.isize))
    meta += [b for _, d_ino, _, off in img.entries(2) for b in [off // BSIZE]]
    meta += [img.inode(file_ino("ind2.bin"))["addr"][11], img.free[0]]
    good = read_bytes(CTX.good)
    path = tmp("rep_fuzz.img")
    repaired = 0
    for i in range(120):
        data = bytearray(good)
        for _ in range(rnd.randrange(1, 12)):
            b = rnd.choice(meta)
            data[b * BSIZE + rnd.randrange(BSIZE)] = rnd.randrange(256)
        with open(path, "wb") as fp:
            fp.write(data)
        p = fsck_mode("-y", path)
        check(p.returncode in (0, 1, 4), "round %d: -y exit %d: %s" % (i, p.returncode,
                                                                        CTX.last[-300:]))
        if p.returncode == 4:
            check("beyond repair" in p.stdout, "round %d: exit 4 with a usable superblock: %s"
                  % (i, CTX.last[-400:]))
            continue
        repaired += p.returncode == 1
        p = fsck_mode("-n", path)
        check(p.returncode == 0, "round %d: not clean after -y: %s" % (i, CTX.last[-400:]))
    check(repaired > 50, "only %d of 120 damaged images needed a repair" % repaired)
