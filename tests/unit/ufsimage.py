"""An independent reader of the UFS1 format, written from
docs/ufs-format.md (not from the C tools), for the host tests of fsck.ufs
and mkfs.ufs: the superblock fields by offset, inodes, the block tree,
directories, and a walk of the whole tree."""
import struct

SBOFF = 8192
UFS1_MAGIC = 0x011954
CG_MAGIC = 0x090255
ROOTINO = 2
NDADDR, NIADDR = 12, 3
DIRBLKSIZ = 512
IFMT, IFDIR, IFREG, IFLNK = 0o170000, 0o040000, 0o100000, 0o120000
IFCHR, IFBLK, IFIFO = 0o020000, 0o060000, 0o010000

# Superblock fields: name -> (byte offset from the superblock, struct format).
SB_FIELDS = {
    "sblkno": (8, "<i"), "cblkno": (12, "<i"), "iblkno": (16, "<i"), "dblkno": (20, "<i"),
    "time": (32, "<i"), "size": (36, "<i"), "dsize": (40, "<i"), "ncg": (44, "<i"),
    "bsize": (48, "<i"), "fsize": (52, "<i"), "frag": (56, "<i"), "minfree": (60, "<i"),
    "bshift": (80, "<i"), "fshift": (84, "<i"), "fragshift": (96, "<i"),
    "sbsize": (104, "<i"), "nindir": (116, "<i"), "inopb": (120, "<i"),
    "csaddr": (152, "<i"), "cssize": (156, "<i"), "cgsize": (160, "<i"),
    "ipg": (184, "<i"), "fpg": (188, "<i"),
    "cs_ndir": (192, "<i"), "cs_nbfree": (196, "<i"), "cs_nifree": (200, "<i"),
    "cs_nffree": (204, "<i"), "clean": (209, "<b"), "flags": (211, "<B"),
    "contigsumsize": (1316, "<i"), "maxsymlinklen": (1320, "<i"), "inodefmt": (1324, "<i"),
    "maxfilesize": (1328, "<Q"), "magic": (1372, "<i"),
}
# Group block fields, from the start of the block.
CG_FIELDS = {
    "magic": (4, "<i"), "cgx": (12, "<i"), "niblk": (18, "<h"), "ndblk": (20, "<i"),
    "cs_ndir": (24, "<i"), "cs_nbfree": (28, "<i"), "cs_nifree": (32, "<i"),
    "cs_nffree": (36, "<i"), "iusedoff": (92, "<i"), "freeoff": (96, "<i"),
    "clustersumoff": (104, "<i"), "clusteroff": (108, "<i"),
}
# Inode fields, from the start of the 128-byte inode.
DI_FIELDS = {
    "mode": (0, "<H"), "nlink": (2, "<h"), "size": (8, "<Q"), "mtime": (24, "<i"),
    "flags": (100, "<I"), "blocks": (104, "<I"), "gen": (108, "<i"), "uid": (112, "<I"),
    "gid": (116, "<I"),
}


def fields(data, base, table):
    return {k: struct.unpack_from(fmt, data, base + off)[0] for k, (off, fmt) in table.items()}


class Image:
    """A read-only view of a UFS1 image held in memory."""

    def __init__(self, data):
        self.data = bytes(data)
        self.sb = fields(self.data, SBOFF, SB_FIELDS)
        for k, v in self.sb.items():
            setattr(self, k, v)

    def frag(self, addr, n=1):
        return self.data[addr * self.fsize:(addr + n) * self.fsize]

    def cg_offset(self, c):
        """Byte offset of group c's block."""
        return (c * self.fpg + self.cblkno) * self.fsize

    def cg(self, c):
        return fields(self.data, self.cg_offset(c), CG_FIELDS)

    def ipos(self, ino):
        c, slot = divmod(ino, self.ipg)
        block = c * self.fpg + self.iblkno + (slot // self.inopb) * self.frag
        return block * self.fsize + (slot % self.inopb) * 128

    def inode(self, ino):
        off = self.ipos(ino)
        di = fields(self.data, off, DI_FIELDS)
        di["db"] = list(struct.unpack_from("<12i", self.data, off + 40))
        di["ib"] = list(struct.unpack_from("<3i", self.data, off + 88))
        di["raw_addr"] = self.data[off + 40:off + 100]
        return di

    def ind(self, addr):
        return struct.unpack_from("<%di" % self.nindir, self.data, addr * self.fsize)

    def bmap(self, di, lbn):
        if lbn < NDADDR:
            return di["db"][lbn]
        lbn -= NDADDR
        for level in range(NIADDR):
            span = self.nindir ** (level + 1)
            if lbn < span:
                addr = di["ib"][level]
                for k in range(level, -1, -1):
                    if addr == 0:
                        return 0
                    addr = self.ind(addr)[(lbn // self.nindir ** k) % self.nindir]
                return addr
            lbn -= span
        raise ValueError("logical block too large")

    def read(self, ino):
        di = self.inode(ino)
        if (di["mode"] & IFMT) == IFLNK and di["size"] < self.maxsymlinklen and \
                di["blocks"] == 0:
            return di["raw_addr"][:di["size"]]
        out = bytearray()
        for lbn in range((di["size"] + self.bsize - 1) // self.bsize):
            addr = self.bmap(di, lbn)
            want = min(self.bsize, di["size"] - lbn * self.bsize)
            out += self.data[addr * self.fsize:addr * self.fsize + want] if addr \
                else bytes(want)
        return bytes(out)

    def entries(self, ino):
        """(d_ino, d_type, name, byte offset in the image) of every used entry."""
        di = self.inode(ino)
        out = []
        for off in range(0, di["size"], DIRBLKSIZ):
            addr = self.bmap(di, off // self.bsize)
            base = addr * self.fsize + off % self.bsize
            pos = 0
            while pos < DIRBLKSIZ:
                d_ino, reclen, dtype, namlen = struct.unpack_from("<IHBB", self.data, base + pos)
                if reclen == 0:
                    break
                if d_ino:
                    name = self.data[base + pos + 8:base + pos + 8 + namlen]
                    out.append((d_ino, dtype, name, base + pos))
                pos += reclen
        return out

    def lookup(self, dino, name):
        for d_ino, _, n, _ in self.entries(dino):
            if n == name:
                return d_ino
        return 0

    def namei(self, path):
        ino = ROOTINO
        for part in path.strip("/").split("/"):
            if part:
                ino = self.lookup(ino, part.encode())
                if not ino:
                    return 0
        return ino

    def walk(self, ino=ROOTINO, path=""):
        """(path, ino) of everything below directory ino."""
        for d_ino, _, name, _ in self.entries(ino):
            if name in (b".", b".."):
                continue
            p = path + "/" + name.decode()
            yield p, d_ino
            if (self.inode(d_ino)["mode"] & IFMT) == IFDIR:
                yield from self.walk(d_ino, p)
