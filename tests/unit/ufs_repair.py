"""fsck.ufs's repairs (-y, -p) on the corruption matrix of test_ufstools.py:
every case is repaired and checks clean afterwards (a second -y finds
nothing), a superblock beyond use is replaced by a copy, -n never writes,
-p repairs the safe cases silently and refuses the rest, what the damage
did not touch survives the repair byte for byte (read by the independent
reader ufsimage.py), an unreachable file comes back in /lost+found, and
random metadata damage is repaired to a clean image, never crashing.
Registered from test_ufstools.py after its own cases, whose helpers it
takes as arguments (register)."""
import random
import shutil

from ufsimage import Image

# The cases -p repairs on its own, and some it must leave to a person.
PREEN_SAFE = ("inode_map", "frag_map_free", "cg_counts", "cstotal", "link_count",
              "entry_type", "di_blocks", "frsum", "cluster_sum")
PREEN_UNSAFE = ("block_twice", "block_outside", "slash_in_name", "entry_to_free_inode",
                "dir_hard_link")
# Cases whose superblock cannot be used, on an image of one group (no
# copy to take): -y changes nothing.
BEYOND_REPAIR = ("bad_magic", "bad_bsize", "size_past_image")
# Files the matrix never damages (it breaks f07 .. f16 and the root's
# entries), compared by inode number.
UNTOUCHED = ("big", "deep/d0/big.link", "many/x0100", "f05", "f19", "sym60", "long")


def register(test, check, fsck_mode, tmp, corruptions, ctx):
    """Adds the repair cases to the test list with test(fn)."""

    def read_bytes(path):
        with open(path, "rb") as fp:
            return fp.read()

    def broken(name):
        path = tmp("rep-%s.img" % name)
        shutil.copyfile(ctx.good, path)
        corruptions[name](path)
        return path

    def contents(path, names):
        """The bytes of the named files of the good image, read by their
        inode numbers (a repair may move a name to /lost+found)."""
        good, img = Image(read_bytes(ctx.good)), Image(read_bytes(path))
        return {n: img.read(good.namei(n)) for n in names}

    @test
    def repair_every_corruption():
        want = contents(ctx.good, UNTOUCHED)
        for name in corruptions:
            path = broken(name)
            before = read_bytes(path)
            p = fsck_mode("-y", path)
            if name in BEYOND_REPAIR and ctx.img.ncg == 1:
                check(p.returncode == 4 and read_bytes(path) == before,
                      "%s: -y exit %d or changed the image: %s" % (name, p.returncode,
                                                                    ctx.last[-300:]))
                continue
            check(p.returncode == 1 and "checks clean now" in p.stdout,
                  "%s: -y exit %d: %s" % (name, p.returncode, ctx.last[-400:]))
            p = fsck_mode("-n", path)
            check(p.returncode == 0 and "not cleanly" not in p.stdout,
                  "%s: not clean after -y: %s" % (name, ctx.last[-400:]))
            check(fsck_mode("-y", path).returncode == 0,
                  "%s: a second -y found more: %s" % (name, ctx.last[-300:]))
            check(contents(path, UNTOUCHED) == want,
                  "%s: the repair changed a file the damage did not touch" % name)

    @test
    def repair_check_never_writes():
        for name in ("block_twice", "unreachable", "cstotal", "bad_magic"):
            path = broken(name)
            before = read_bytes(path)
            for mode in ("-n", None):
                p = fsck_mode(mode, path)
                check(p.returncode == 1, "%s: %s exit %d" % (name, mode, p.returncode))
            check(read_bytes(path) == before, "%s: the check changed the image" % name)

    @test
    def repair_preen_safe_and_unsafe():
        for name in PREEN_SAFE:
            path = broken(name)
            p = fsck_mode("-p", path)
            noisy = [l for l in p.stdout.splitlines() if not l.startswith("fsck.ufs: ")]
            check(p.returncode == 1 and not noisy,
                  "%s: -p exit %d, lines %r: %s" % (name, p.returncode, noisy, ctx.last[-300:]))
            check(fsck_mode("-n", path).returncode == 0,
                  "%s: not clean after -p: %s" % (name, ctx.last[-300:]))
        for name in PREEN_UNSAFE:
            path = broken(name)
            before = read_bytes(path)
            p = fsck_mode("-p", path)
            check(p.returncode == 4 and "UNEXPECTED INCONSISTENCY" in p.stdout,
                  "%s: -p exit %d: %s" % (name, p.returncode, ctx.last[-300:]))
            check(read_bytes(path) == before, "%s: -p changed the image" % name)

    @test
    def repair_to_lost_found():
        path = broken("unreachable")            # f16's entry cleared
        img = Image(read_bytes(ctx.good))
        ino, want = img.namei("f16"), img.read(img.namei("f16"))
        check(fsck_mode("-y", path).returncode == 1, ctx.last[-300:])
        img = Image(read_bytes(path))
        got = img.namei("lost+found/#%d" % ino)
        check(got == ino and img.read(got) == want, "f16 is not /lost+found/#%d" % ino)
        check(img.inode(ino)["nlink"] == 1, "its link count is %d" % img.inode(ino)["nlink"])

    @test
    def repair_superblock_from_copy():
        """On an image of several groups, a broken superblock is replaced by
        the copy in a later group."""
        path = tmp("rep-sbcopy.img")
        shutil.copyfile(ctx.groups, path)
        with open(path, "r+b") as fp:
            fp.seek(8192 + 1372)                # fs_magic
            fp.write(b"\x45\x23\x01\x00")
        p = fsck_mode("-y", path)
        check(p.returncode == 1 and "superblock copy" in p.stdout, ctx.last[-400:])
        check(fsck_mode("-n", path).returncode == 0, "not clean: " + ctx.last[-300:])
        good, img = Image(read_bytes(ctx.groups)), Image(read_bytes(path))
        for n in UNTOUCHED:
            check(img.read(img.namei(n)) == good.read(good.namei(n)),
                  "%s differs after the superblock came from a copy" % n)

    @test
    def repair_group_block_too_small():
        """A damaged fs_cgsize too small for the group's maps: the repair
        makes the group blocks large enough again (it once wrote past its
        buffer)."""
        path = tmp("rep-cgsize.img")
        shutil.copyfile(ctx.good, path)
        with open(path, "r+b") as fp:
            fp.seek(8192 + 160)                 # fs_cgsize
            fp.write((512).to_bytes(4, "little"))
        p = fsck_mode("-y", path)
        check(p.returncode == 1 and "checks clean now" in p.stdout, ctx.last[-400:])
        check(fsck_mode("-n", path).returncode == 0, "not clean: " + ctx.last[-300:])
        check(Image(read_bytes(path)).cgsize > 512, "fs_cgsize is still 512")

    @test
    def repair_dirty_marked_clean():
        path = tmp("rep-dirty.img")
        shutil.copyfile(ctx.good, path)
        with open(path, "r+b") as fp:
            fp.seek(8192 + 209)
            fp.write(b"\0")
        p = fsck_mode("-y", path)
        check(p.returncode == 0 and "marked clean" in p.stdout, ctx.last[-300:])
        p = fsck_mode("-n", path)
        check(p.returncode == 0 and "not cleanly" not in p.stdout, ctx.last[-300:])

    @test
    def repair_fuzzed_metadata():
        """Random bytes in the superblock, a group block, inode blocks, the
        root directory and an indirect block: -y leaves a clean image (exit
        0 or 1) or says why it cannot (4); it never crashes."""
        img, rnd = ctx.img, random.Random(11)
        big = img.inode(img.namei("big"))
        areas = [(8192, 1376), (img.cg_offset(0), img.cgsize), (img.ipos(0), 4 * img.bsize),
                 (img.inode(2)["db"][0] * img.fsize, 512),
                 (big["ib"][0] * img.fsize, img.bsize)]
        good = read_bytes(ctx.good)
        path, repaired = tmp("rep-fuzz.img"), 0
        for i in range(ctx.repair_rounds):
            data = bytearray(good)
            for _ in range(rnd.randint(1, 8)):
                base, length = rnd.choice(areas)
                data[base + rnd.randrange(length)] = rnd.randrange(256)
            with open(path, "wb") as fp:
                fp.write(data)
            p = fsck_mode("-y", path)
            check(p.returncode in (0, 1, 4), "round %d: -y exit %d: %s"
                  % (i, p.returncode, ctx.last[-300:]))
            if p.returncode == 4:
                check("beyond repair" in p.stdout or "cannot be read" in p.stdout,
                      "round %d: exit 4: %s" % (i, ctx.last[-400:]))
                continue
            repaired += p.returncode == 1
            p = fsck_mode("-n", path)
            check(p.returncode == 0, "round %d: not clean after -y: %s" % (i, ctx.last[-600:]))
        check(repaired > ctx.repair_rounds // 3, "only %d of %d damaged images needed a repair"
              % (repaired, ctx.repair_rounds))
