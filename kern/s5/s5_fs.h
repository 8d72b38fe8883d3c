/*
 * The S5 on-disk format: the System V Release 4 file system layout with
 * 1 KiB blocks (s_type 2), byte for byte what Linux's sysv driver reads and
 * writes as "SystemV Release 4" (fs/sysv, struct sysv4_super_block), as used
 * by the Tempest kernel and by the host tools mkfs.s5 and fsck.s5 (tools/).  This header is shared by both sides, so it
 * is plain C11 with fixed-width types from <stdint.h>, no kernel headers and
 * no libc calls; every multi-byte field is little-endian (x86 byte order).
 * docs/s5-format.md describes the layout in prose.
 *
 * Disk layout, in 1 KiB blocks:
 *
 *   block 0                  bytes 0..511: boot sector (not the file
 *                            system's; kept as it is); bytes 512..1023: the
 *                            superblock (struct s5_super), SVR4's SUPERBOFF
 *   block 1                  unused (zero)
 *   blocks 2 .. s_isize-1    inode list, 16 inodes of 64 bytes per block;
 *                            inode 1 is the first slot of block 2
 *   blocks s_isize .. s_fsize-1
 *                            data area: file data, directory and indirect
 *                            blocks, and the blocks of the free-block chain
 *
 * The free-block list.  The superblock caches up to S5_NICFREE block numbers
 * in s_free[0 .. s_nfree-1].  s_free[0] is special: it is either 0, which
 * ends the list, or the number of a free "chain block" whose first bytes are
 * a struct s5_fblk holding the next df_nfree/df_free[] cache in the same
 * format.  The chain block itself is free and is handed out last, after its
 * contents have been copied into the superblock.  Entries 1 .. s_nfree-1 are
 * plain free blocks.  Allocation and freeing work exactly as in V7/SVR3:
 *
 *   alloc:  if s_nfree == 0: no space.
 *           b = s_free[--s_nfree];  if b == 0: no space (s_nfree = 0).
 *           if s_nfree == 0: read block b, copy its s5_fblk into
 *             s_nfree/s_free (check df_nfree <= S5_NICFREE first; a
 *             df_nfree of 0 leaves the cache empty: the list ends).
 *           check s5_bno_valid(sb, b) before using b; s_tfree--.
 *   free:   if s_nfree == 0: s_free[0] = 0, s_nfree = 1 (restart the list).
 *           if s_nfree == S5_NICFREE: write s_nfree/s_free into block b as
 *             an s5_fblk, then s_nfree = 0 (b becomes the new chain block).
 *           s_free[s_nfree++] = b;  s_tfree++.
 *
 * The free-inode cache.  s_inode[0 .. s_ninode-1] holds up to S5_NICINOD
 * inode numbers believed free; ialloc takes s_inode[--s_ninode].  It is only
 * a hint: when it is empty, ialloc scans the inode list for inodes with
 * di_mode == 0 to refill it, and because of the ialloc/ifree race described
 * in the SVR4 MP paper ialloc must re-read the inode and retry if di_mode is
 * no longer 0.  ifree appends to the cache if there is room and otherwise
 * drops the number (the next scan finds it).  s_tinode counts all inodes
 * with di_mode == 0 whether cached or not.  mkfs.s5 fills the cache with
 * the lowest free inode numbers, the lowest at the top (allocated first).
 *
 * Inode numbers are 16 bits and start at 1: inode 1 is reserved for bad
 * blocks (mkfs makes it an empty regular file with no links, and fsck does
 * not expect it in any directory), inode 2 is the root directory.  The inode
 * list therefore has at most 4095 blocks (S5_MAXINODES inodes).
 *
 * Block numbers inside an inode are 3 bytes (at most 2^24 blocks, 16 GiB);
 * indirect blocks and the free list hold 4-byte block numbers.  Block
 * number 0 in an inode or an indirect block means "no block" (a hole).
 */
#ifndef KERN_S5_S5_FS_H
#define KERN_S5_S5_FS_H

#include <stdint.h>
#include <stddef.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "the S5 layout is defined for little-endian hosts");

/* Geometry. */
#define S5_BSIZE        1024            /* bytes per block */
#define S5_BSHIFT       10              /* log2(S5_BSIZE) */
#define S5_BMASK        (S5_BSIZE - 1)
#define S5_BOOTBLOCK    0               /* block number of the boot sector */
#define S5_SUPERBLOCK   0               /* block number holding the superblock */
#define S5_SBOFF        512             /* byte offset of the superblock in it */
#define S5_ILISTBLOCK   2               /* first block of the inode list */
#define S5_MAXBLOCKS    (1u << 24)      /* 3-byte block numbers */

/* Superblock caches. */
#define S5_NICFREE      50              /* free block numbers in the superblock */
#define S5_NICINOD      100             /* free inode numbers in the superblock */

/* Inodes. */
#define S5_INODE_SIZE   64
#define S5_INOPB        16              /* inodes per block */
#define S5_INOSHIFT     4               /* log2(S5_INOPB) */
#define S5_BADBLKINO    1               /* the bad-block inode */
#define S5_ROOTINO      2               /* the root directory */
#define S5_MAXIBLOCKS   4095            /* inode list blocks addressable by 16 bits */
#define S5_MAXINODES    (S5_MAXIBLOCKS * S5_INOPB)      /* 65520 */

/* Block addresses in an inode: 10 direct, then single, double, triple. */
#define S5_NADDR        13
#define S5_NDADDR       10
#define S5_IND1         10              /* index of the single indirect pointer */
#define S5_IND2         11              /* index of the double indirect pointer */
#define S5_IND3         12              /* index of the triple indirect pointer */
#define S5_NINDIR       (S5_BSIZE / 4)  /* 256 block numbers per indirect block */
#define S5_NINDSHIFT    8               /* log2(S5_NINDIR) */

/* Logical blocks reachable through each level, and the largest file. */
#define S5_NBLK1        ((uint32_t)S5_NINDIR)
#define S5_NBLK2        ((uint32_t)S5_NINDIR * S5_NINDIR)
#define S5_NBLK3        ((uint32_t)S5_NINDIR * S5_NINDIR * S5_NINDIR)
#define S5_MAXLBLK      ((uint64_t)S5_NDADDR + S5_NBLK1 + S5_NBLK2 + S5_NBLK3)
/*
 * di_size is a signed 32-bit off_t in SVR3, so a file is limited to 2 GiB - 1
 * bytes even though the triple indirect block could address more.
 */
#define S5_MAXFILESIZE  0x7fffffffu

/* Directories. */
#define S5_DIRSIZ       14              /* bytes in a name */
#define S5_DIRENT_SIZE  16
#define S5_DIRPB        (S5_BSIZE / S5_DIRENT_SIZE)     /* 64 entries per block */

/* Superblock identification and state. */
#define S5_MAGIC        0xfd187e20u     /* s_magic, as SVR3's FsMAGIC */
#define S5_TYPE_512     1               /* s_type: 512-byte blocks (not supported) */
#define S5_TYPE_1K      2               /* s_type: 1 KiB blocks (the only one used) */
#define S5_FSOKAY       0x7c269d38u     /* clean when s_state + s_time == S5_FSOKAY */
#define S5_FSACTIVE     0x5e72d81au     /* mounted read-write, or not unmounted */
#define S5_FSBAD        0xcb096f43u     /* marked bad by the kernel */
/*
 * The earliest s_time written: 1980-01-01.  Linux takes a superblock whose
 * s_time is earlier for System V Release 2's layout, which differs.
 */
#define S5_TIME_MIN     315532800u

/*
 * Device numbers of character and block special files: address slot 0
 * holds SVR4's old 16-bit dev_t, the major in bits 8..15 and the minor in
 * bits 0..7, as Linux's sysv driver stores them (old_encode_dev); larger
 * numbers cannot be stored (Linux's mknod gives EINVAL).
 */
#define S5_DEV_MAXMAJOR 0xffu
#define S5_DEV_MAXMINOR 0xffu

static inline uint32_t s5_dev_encode(uint32_t major, uint32_t minor)
{
    return (major & 0xff) << 8 | (minor & 0xff);
}

static inline uint32_t s5_dev_major(uint32_t addr0)
{
    return (addr0 >> 8) & 0xff;
}

static inline uint32_t s5_dev_minor(uint32_t addr0)
{
    return addr0 & 0xff;
}

/* di_mode: the file type in the top four bits, then the permission bits. */
#define S5_IFMT         0170000
#define S5_IFIFO        0010000
#define S5_IFCHR        0020000
#define S5_IFDIR        0040000
#define S5_IFBLK        0060000
#define S5_IFREG        0100000
#define S5_IFLNK        0120000
#define S5_IFSOCK       0140000     /* as Linux's sysv driver keeps them */
#define S5_ISUID        04000
#define S5_ISGID        02000
#define S5_ISVTX        01000
#define S5_IPERM        07777           /* all non-type bits */

/*
 * The superblock: the second half of block 0, bytes 512..1023 of the disk
 * (the first half is the boot sector).  Field order, sizes and padding are
 * SVR4's struct filsys as Linux's struct sysv4_super_block spells them out
 * (the padding SVR4 got implicitly from 4-byte alignment is explicit here);
 * the offsets are asserted below.
 */
struct s5_super {
    uint16_t s_isize;           /* first data block = blocks before it (boot,
                                   superblock and inode list) */
    uint16_t s_pad0;            /* zero */
    uint32_t s_fsize;           /* total blocks in the file system */
    uint16_t s_nfree;           /* valid entries in s_free (0 .. S5_NICFREE) */
    uint16_t s_pad1;            /* zero */
    uint32_t s_free[S5_NICFREE];/* free-block cache; s_free[0] = next chain
                                   block or 0 at the end of the list */
    uint16_t s_ninode;          /* valid entries in s_inode (0 .. S5_NICINOD) */
    uint16_t s_pad2;            /* zero */
    uint16_t s_inode[S5_NICINOD];/* free-inode cache (a hint) */
    uint8_t  s_flock;           /* free-list lock in SVR4; zero on disk */
    uint8_t  s_ilock;           /* inode-cache lock in SVR4; zero on disk */
    uint8_t  s_fmod;            /* superblock modified flag; zero on disk */
    uint8_t  s_ronly;           /* mounted read-only flag; zero on disk */
    uint32_t s_time;            /* last superblock update, seconds since 1970;
                                   never before S5_TIME_MIN */
    uint16_t s_dinfo[4];        /* device information (interleave gap,
                                   blocks per cylinder); zero, unused */
    uint32_t s_tfree;           /* total free blocks */
    uint16_t s_tinode;          /* total free inodes (di_mode == 0) */
    uint16_t s_pad3;            /* zero */
    char     s_fname[6];        /* file system name, NUL-padded */
    char     s_fpack[6];        /* pack (volume) name, NUL-padded */
    uint32_t s_fill[12];        /* zero; pads the structure to 512 bytes */
    uint32_t s_state;           /* S5_FSOKAY - s_time when clean,
                                   S5_FSACTIVE when in use, S5_FSBAD */
    uint32_t s_magic;           /* S5_MAGIC */
    uint32_t s_type;            /* S5_TYPE_1K */
};

/*
 * An on-disk inode, 64 bytes.  di_addr holds 13 three-byte little-endian
 * block numbers (use s5_getaddr/s5_setaddr); the 40th byte of SVR3's
 * di_addr[40] is the generation number.  For character and block devices
 * di_addr slot 0 holds the device number instead of a block.
 */
struct s5_dinode {
    uint16_t di_mode;           /* type and permissions; 0 = free inode */
    uint16_t di_nlink;          /* directory entries referring to it */
    uint16_t di_uid;            /* owner */
    uint16_t di_gid;            /* group */
    uint32_t di_size;           /* bytes (at most S5_MAXFILESIZE) */
    uint8_t  di_addr[3 * S5_NADDR]; /* 13 block numbers, 3 bytes each */
    uint8_t  di_gen;            /* generation, bumped when the inode is reused */
    uint32_t di_atime;          /* last access, seconds since 1970 */
    uint32_t di_mtime;          /* last modification */
    uint32_t di_ctime;          /* last inode change */
};

/*
 * A directory entry, 16 bytes.  d_ino 0 marks an empty slot.  The name is
 * NUL-padded, with no terminator when it is exactly S5_DIRSIZ bytes long.
 * Every directory starts with "." (itself) and ".." (its parent; the root's
 * ".." is the root), its size is a multiple of S5_DIRENT_SIZE, and it has
 * no holes: every block below its size is allocated.  Empty slots may be
 * reused; directories are not compacted.
 */
struct s5_direct {
    uint16_t d_ino;
    char     d_name[S5_DIRSIZ];
};

/*
 * A free-list chain block: its first 204 bytes; the rest is zero.  The count
 * is 16 bits, then 2 bytes of padding (zero), as Linux reads and writes it
 * for SVR4 (a 16-bit count, the block numbers from byte 4).  A count of 0
 * is legal: the list ends with this block (Linux writes one when a block is
 * freed into a completely empty cache).
 */
struct s5_fblk {
    uint16_t df_nfree;          /* valid entries in df_free (0 .. S5_NICFREE) */
    uint16_t df_pad;            /* zero */
    uint32_t df_free[S5_NICFREE];/* same meaning as the superblock's s_free */
};

_Static_assert(sizeof(struct s5_super) == 512, "s5_super must be 512 bytes");
_Static_assert(offsetof(struct s5_super, s_free) == 12, "s_free offset");
_Static_assert(offsetof(struct s5_super, s_ninode) == 212, "s_ninode offset");
_Static_assert(offsetof(struct s5_super, s_inode) == 0xd8, "s_inode offset");
_Static_assert(offsetof(struct s5_super, s_flock) == 416, "s_flock offset");
_Static_assert(offsetof(struct s5_super, s_time) == 420, "s_time offset");
_Static_assert(offsetof(struct s5_super, s_tfree) == 432, "s_tfree offset");
_Static_assert(offsetof(struct s5_super, s_tinode) == 436, "s_tinode offset");
_Static_assert(offsetof(struct s5_super, s_fname) == 440, "s_fname offset");
_Static_assert(offsetof(struct s5_super, s_fill) == 452, "s_fill offset");
_Static_assert(offsetof(struct s5_super, s_state) == 500, "s_state offset");
_Static_assert(offsetof(struct s5_super, s_magic) == 504, "s_magic offset");
_Static_assert(sizeof(struct s5_dinode) == S5_INODE_SIZE, "s5_dinode must be 64 bytes");
_Static_assert(offsetof(struct s5_dinode, di_addr) == 12, "di_addr offset");
_Static_assert(offsetof(struct s5_dinode, di_atime) == 52, "di_atime offset");
_Static_assert(S5_INOPB * S5_INODE_SIZE == S5_BSIZE, "inodes per block");
_Static_assert(sizeof(struct s5_direct) == S5_DIRENT_SIZE, "s5_direct must be 16 bytes");
_Static_assert(sizeof(struct s5_fblk) == 204, "s5_fblk must be 204 bytes");
_Static_assert(offsetof(struct s5_fblk, df_free) == 4, "df_free offset");
_Static_assert(S5_SBOFF + sizeof(struct s5_super) == S5_BSIZE, "superblock ends block 0");
_Static_assert(S5_MAXINODES <= 0xffff, "inode numbers are 16 bits");

/* Three-byte block numbers. */

/* Unpacks the 3-byte little-endian block number at p. */
static inline uint32_t s5_l3tol(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
}

/* Packs the low 24 bits of bno into 3 bytes at p. */
static inline void s5_ltol3(uint8_t *p, uint32_t bno)
{
    p[0] = (uint8_t)bno;
    p[1] = (uint8_t)(bno >> 8);
    p[2] = (uint8_t)(bno >> 16);
}

/* Returns block pointer i (0 .. S5_NADDR-1) of an inode. */
static inline uint32_t s5_getaddr(const struct s5_dinode *di, int i)
{
    return s5_l3tol(&di->di_addr[3 * i]);
}

/* Sets block pointer i (0 .. S5_NADDR-1) of an inode. */
static inline void s5_setaddr(struct s5_dinode *di, int i, uint32_t bno)
{
    s5_ltol3(&di->di_addr[3 * i], bno);
}

/* Inode numbers and the inode list. */

/* Number of inodes in the inode list described by sb. */
static inline uint32_t s5_ninodes(const struct s5_super *sb)
{
    return sb->s_isize > S5_ILISTBLOCK ?
        (uint32_t)(sb->s_isize - S5_ILISTBLOCK) * S5_INOPB : 0;
}

/* True if ino names a slot in the inode list (1 .. s5_ninodes). */
static inline int s5_ino_valid(const struct s5_super *sb, uint32_t ino)
{
    return ino >= 1 && ino <= s5_ninodes(sb);
}

/* Block holding inode ino (SVR3's itod). */
static inline uint32_t s5_itod(uint32_t ino)
{
    return S5_ILISTBLOCK + ((ino - 1) >> S5_INOSHIFT);
}

/* Slot of inode ino within its block (SVR3's itoo). */
static inline uint32_t s5_itoo(uint32_t ino)
{
    return (ino - 1) & (S5_INOPB - 1);
}

/* Byte offset of inode ino within its block. */
static inline uint32_t s5_itooff(uint32_t ino)
{
    return s5_itoo(ino) * S5_INODE_SIZE;
}

/* Byte offset of inode ino from the start of the device. */
static inline uint64_t s5_ipos(uint32_t ino)
{
    return (uint64_t)s5_itod(ino) * S5_BSIZE + s5_itooff(ino);
}

/* Blocks and file offsets. */

/* True if bno lies in the data area [s_isize, s_fsize). */
static inline int s5_bno_valid(const struct s5_super *sb, uint32_t bno)
{
    return bno >= sb->s_isize && bno < sb->s_fsize;
}

/* Logical block containing byte offset off. */
static inline uint32_t s5_lblkno(uint64_t off)
{
    return (uint32_t)(off >> S5_BSHIFT);
}

/* Offset of byte off within its block. */
static inline uint32_t s5_blkoff(uint64_t off)
{
    return (uint32_t)(off & S5_BMASK);
}

/* Number of logical blocks a file of size bytes spans. */
static inline uint32_t s5_size_blocks(uint64_t size)
{
    return (uint32_t)((size + S5_BMASK) >> S5_BSHIFT);
}

/*
 * Splits logical block lbn into the chain of pointer indices that reach it.
 * Returns the number of indirect levels (0 for a direct block, 1..3 for the
 * single, double and triple indirect trees) or -1 if lbn is beyond
 * S5_MAXLBLK.  idx[0] is the index in di_addr; idx[1..level] are the indices
 * in each indirect block from the top down.
 */
static inline int s5_lbn_path(uint32_t lbn, uint32_t idx[4])
{
    uint32_t n = lbn;

    if (n < S5_NDADDR) {
        idx[0] = n;
        return 0;
    }
    n -= S5_NDADDR;
    if (n < S5_NBLK1) {
        idx[0] = S5_IND1;
        idx[1] = n;
        return 1;
    }
    n -= S5_NBLK1;
    if (n < S5_NBLK2) {
        idx[0] = S5_IND2;
        idx[1] = n >> S5_NINDSHIFT;
        idx[2] = n & (S5_NINDIR - 1);
        return 2;
    }
    n -= S5_NBLK2;
    if (n < S5_NBLK3) {
        idx[0] = S5_IND3;
        idx[1] = n >> (2 * S5_NINDSHIFT);
        idx[2] = (n >> S5_NINDSHIFT) & (S5_NINDIR - 1);
        idx[3] = n & (S5_NINDIR - 1);
        return 3;
    }
    return -1;
}

/*
 * Number of indirect blocks a file of nblocks logical blocks needs when it
 * has no holes (used by mkfs to size things and by tests).
 */
static inline uint32_t s5_indir_blocks(uint32_t nblocks)
{
    uint32_t n, ind = 0;

    if (nblocks <= S5_NDADDR)
        return 0;
    n = nblocks - S5_NDADDR;
    ind++;                                      /* single indirect */
    if (n <= S5_NBLK1)
        return ind;
    n -= S5_NBLK1;
    if (n <= S5_NBLK2)
        return ind + 1 + (n + S5_NINDIR - 1) / S5_NINDIR;
    ind += 1 + S5_NINDIR;                       /* full double indirect tree */
    n -= S5_NBLK2;
    return ind + 1 + (n + S5_NBLK1 * S5_NINDIR - 1) / (S5_NBLK1 * S5_NINDIR)
               + (n + S5_NINDIR - 1) / S5_NINDIR;
}

/* Directory entry names. */

/* Length of a directory entry name (at most S5_DIRSIZ, no terminator needed). */
static inline uint32_t s5_namelen(const char name[S5_DIRSIZ])
{
    uint32_t n = 0;

    while (n < S5_DIRSIZ && name[n] != '\0')
        n++;
    return n;
}

/* True if entry name d_name equals the len bytes at name. */
static inline int s5_namematch(const char d_name[S5_DIRSIZ], const char *name, uint32_t len)
{
    uint32_t i;

    if (len > S5_DIRSIZ)
        return 0;
    for (i = 0; i < len; i++)
        if (d_name[i] != name[i])
            return 0;
    return len == S5_DIRSIZ || d_name[len] == '\0';
}

/* Stores a name of len (<= S5_DIRSIZ) bytes into d_name, NUL-padded. */
static inline void s5_setname(char d_name[S5_DIRSIZ], const char *name, uint32_t len)
{
    uint32_t i;

    for (i = 0; i < S5_DIRSIZ; i++)
        d_name[i] = i < len ? name[i] : '\0';
}

/*
 * Checks a name as stored in a directory entry: returns 0 if it is valid
 * (non-empty, no '/', only NUL padding after the first NUL), or a short
 * reason otherwise.
 */
static inline const char *s5_name_invalid(const char d_name[S5_DIRSIZ])
{
    uint32_t i, len = s5_namelen(d_name);

    if (len == 0)
        return "empty name";
    for (i = 0; i < len; i++)
        if (d_name[i] == '/')
            return "'/' in name";
    for (i = len; i < S5_DIRSIZ; i++)
        if (d_name[i] != '\0')
            return "NUL in the middle of the name";
    return 0;
}

/* Superblock state. */

/* True if the superblock is marked clean (SVR3's s_state + s_time rule). */
static inline int s5_sb_is_clean(const struct s5_super *sb)
{
    return (uint32_t)(sb->s_state + sb->s_time) == S5_FSOKAY;
}

/* The s_time to write for the time now: never before S5_TIME_MIN. */
static inline uint32_t s5_sb_time(uint32_t now)
{
    return now < S5_TIME_MIN ? S5_TIME_MIN : now;
}

/* Sets s_time to now and marks the file system clean. */
static inline void s5_sb_set_clean(struct s5_super *sb, uint32_t now)
{
    sb->s_time = s5_sb_time(now);
    sb->s_state = S5_FSOKAY - sb->s_time;
}

/* Marks the file system in use (written on a read-write mount). */
static inline void s5_sb_set_active(struct s5_super *sb, uint32_t now)
{
    sb->s_time = s5_sb_time(now);
    sb->s_state = S5_FSACTIVE;
}

/*
 * Checks that a superblock can be used at all: returns 0 if it is sane, or a
 * short reason.  dev_blocks is the size of the device in blocks, or 0 if
 * unknown.  A kernel must refuse to mount on a non-zero answer; the checks
 * include the cache counts, because s_nfree and s_ninode index arrays.
 */
static inline const char *s5_sb_invalid(const struct s5_super *sb, uint64_t dev_blocks)
{
    if (sb->s_magic != S5_MAGIC)
        return "bad magic number";
    if (sb->s_type != S5_TYPE_1K)
        return "s_type is not 1 KiB blocks";
    if (sb->s_isize <= S5_ILISTBLOCK)
        return "s_isize leaves no room for an inode list";
    if (sb->s_isize > S5_ILISTBLOCK + S5_MAXIBLOCKS)
        return "s_isize gives more than 65520 inodes";
    if (sb->s_fsize <= sb->s_isize)
        return "s_isize is not below s_fsize";
    if (sb->s_fsize > S5_MAXBLOCKS)
        return "s_fsize exceeds 2^24 blocks";
    if (dev_blocks && sb->s_fsize > dev_blocks)
        return "s_fsize is larger than the device";
    if (sb->s_nfree > S5_NICFREE)
        return "s_nfree exceeds 50";
    if (sb->s_ninode > S5_NICINOD)
        return "s_ninode exceeds 100";
    return 0;
}

#endif /* KERN_S5_S5_FS_H */
