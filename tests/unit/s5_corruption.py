"""The corruption matrix of the S5 tool tests: each case breaks one on-disk
structure of a copy of the good image and expects fsck.s5 to say so; then
random metadata corruption (fsck must never crash or hang).  Registered
after the good-image cases of test_s5tools.py, which make CTX.good."""
import random

from s5image import *  # noqa: F401,F403
from s5harness import *  # noqa: F401,F403


# ---------------------------------------------------------------------------
# fsck on broken images: the corruption matrix.

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
    patch(path, img.free[0] * BSIZE, "<H", 77)


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


@corrupt("free_inode_with_links", r"free \(mode 0\) but its link count")
def _(path, img):
    free = next(i for i in range(3, img.ninodes + 1) if img.inode(i)["mode"] == 0)
    patch(path, img.ipos(free) + O_NLINK, "<H", 1)


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
