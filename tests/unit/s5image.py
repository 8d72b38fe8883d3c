"""An independent reader of the S5 on-disk format, written from
docs/s5-format.md (not from the C tools), for the host tests of mkfs.s5 and
fsck.s5: the constants and offsets of kern/s5/s5_fs.h, and Image, which
walks an image's superblock, inodes, block maps, directories and free list."""
import struct

BSIZE = 1024
MAGIC = 0xfd187e20
FSOKAY, FSACTIVE = 0x7c269d38, 0x5e72d81a
IFMT, IFDIR, IFREG, IFLNK = 0o170000, 0o040000, 0o100000, 0o120000

# The superblock is at byte 512 (the second half of block 0), laid out as
# Linux's struct sysv4_super_block; field offsets from its start.
SB = 512
SB_FMT = "<HHIHH50IHH100HBBBBI4HIHH6s6s12IIII"
O_ISIZE, O_FSIZE, O_NFREE, O_FREE = 0, 4, 8, 12
O_NINODE, O_INODE, O_TIME, O_TFREE, O_TINODE = 212, 216, 420, 432, 436
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
        self.inodes_cache = list(f[57:157])
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
            nfree = struct.unpack_from("<H", self.data, lst[0] * BSIZE)[0]
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
