/*
 * The UFS on-disk format: the Berkeley Fast File System as 4.4BSD and
 * NetBSD write it for UFS1 (NetBSD's makefs -t ffs -o version=1, Linux's
 * ufs driver with ufstype=44bsd), shared by the host tools mkfs.ufs and
 * fsck.ufs (tools/) and, when it comes, the kernel's UFS.  Plain C11 with
 * <stdint.h> types, no kernel headers and no libc calls; every multi-byte
 * field is little-endian.  docs/ufs-format.md describes the layout in
 * prose; the names are the BSD ones without their "fs_old_" history.
 *
 * Addresses.  The disk is cut into fragments of fs_fsize bytes (1 KiB by
 * default) and blocks of fs_bsize bytes (8 KiB, fs_frag = 8 fragments).
 * Every block address -- in the superblock, a cylinder group, an inode or
 * an indirect block -- counts fragments from the start of the file system;
 * a full block's address is a multiple of fs_frag.  Address 0 means "no
 * block" (a hole).
 *
 * Layout.  Bytes 0..8191 are the boot area; the superblock is at byte 8192
 * (UFS_SBOFF), fs_sbsize bytes of it used.  Then come fs_ncg cylinder
 * groups of fs_fpg fragments each (the last may be shorter).  Group c
 * starts at fragment c * fs_fpg (fs_cgoffset is 0, as NetBSD's newfs and
 * makefs make it) and holds, at these fragment offsets from its start:
 *
 *   fs_sblkno   a copy of the superblock (for fsck -b)
 *   fs_cblkno   the cylinder group block: struct ufs_cg, then its maps
 *   fs_iblkno   the group's fs_ipg inodes, 128 bytes each
 *   fs_dblkno   data blocks, up to the group's end
 *
 * In group 0 the fragments below fs_sblkno are the boot area and the
 * superblock, and the first data fragments hold the summary area:
 * fs_cssize bytes at fragment fs_csaddr, one struct ufs_csum per group.
 *
 * Inodes.  Inode i is in group i / fs_ipg, slot i % fs_ipg of that
 * group's inode blocks.  Inodes 0 and 1 are reserved (allocated in the
 * map, never used; 1 was the bad-block inode), inode 2 is the root.
 *
 * Maps.  In each group's block: the inode map (bit set = inode in use),
 * the fragment map (bit set = fragment FREE), the cluster summary and the
 * cluster map (bit set = whole block free), at the byte offsets the group
 * block itself gives.  Bit n is bit n % 8 of byte n / 8.
 */
#ifndef KERN_UFS_UFS_FS_H
#define KERN_UFS_UFS_FS_H

#include <stdint.h>
#include <stddef.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "the UFS layout is defined little-endian here");

/* Where things are. */
#define UFS_BBSIZE          8192        /* the boot area */
#define UFS_SBOFF           8192        /* byte offset of the superblock */
#define UFS_SBSIZE          8192        /* room for the superblock */
#define UFS_DEV_BSIZE       512         /* di_blocks counts these */

/* Magic numbers. */
#define UFS1_MAGIC          0x011954    /* fs_magic of UFS1 */
#define UFS_CG_MAGIC        0x090255    /* cg_magic */

/* Geometry limits this implementation accepts. */
#define UFS_MINBSIZE        4096
#define UFS_MAXBSIZE        65536
#define UFS_MAXFRAG         8           /* fragments per block at most */
#define UFS_NDADDR          12          /* direct block pointers */
#define UFS_NIADDR          3           /* single, double, triple indirect */
#define UFS_ROOTINO         2
#define UFS_WINO            1           /* reserved (whiteouts) */
#define UFS_INODE_SIZE      128
#define UFS_MAXNAMLEN       255
#define UFS_DIRBLKSIZ       512         /* entries never cross these */
#define UFS_MAXSYMLINKLEN   ((UFS_NDADDR + UFS_NIADDR) * 4)     /* 60 */
#define UFS_MAXCONTIG_SUM   8           /* fs_contigsumsize written */

/* fs_clean, fs_flags, fs_inodefmt, fs_postblformat. */
#define UFS_FSCLEAN         0x01
#define UFS_FLAGS_UPDATED   0x80        /* NetBSD: the new fields are valid */
#define UFS_44INODEFMT      2           /* inodes and directories of 4.4BSD */
#define UFS_DYNAMICPOSTBLFMT 1

/* di_mode. */
#define UFS_IFMT            0170000
#define UFS_IFIFO           0010000
#define UFS_IFCHR           0020000
#define UFS_IFDIR           0040000
#define UFS_IFBLK           0060000
#define UFS_IFREG           0100000
#define UFS_IFLNK           0120000
#define UFS_IFSOCK          0140000

/* d_type in directory entries. */
#define UFS_DT_UNKNOWN      0
#define UFS_DT_FIFO         1
#define UFS_DT_CHR          2
#define UFS_DT_DIR          4
#define UFS_DT_BLK          6
#define UFS_DT_REG          8
#define UFS_DT_LNK          10
#define UFS_DT_SOCK         12

/* Per-group summary: in the summary area and in each group block. */
struct ufs_csum {
    int32_t cs_ndir;            /* directories */
    int32_t cs_nbfree;          /* free whole blocks */
    int32_t cs_nifree;          /* free inodes */
    int32_t cs_nffree;          /* free fragments not in free blocks */
};

/*
 * The superblock (UFS1), 1376 bytes used; fs_sbsize says how many bytes
 * are written.  Fields BSD keeps only in memory (fs_fmod, fs_ronly, the
 * pointers at 728) are ignored when read.
 */
struct ufs_super {
    int32_t fs_firstfield;      /* 0 (historic link) */
    int32_t fs_unused_1;        /* 0 */
    int32_t fs_sblkno;          /* superblock copy, fragments from group start */
    int32_t fs_cblkno;          /* group block */
    int32_t fs_iblkno;          /* inode blocks */
    int32_t fs_dblkno;          /* first data fragment */
    int32_t fs_cgoffset;        /* group start rotation (0 here) */
    int32_t fs_cgmask;          /* with fs_cgoffset (-1 here) */
    int32_t fs_time;            /* last written, seconds since 1970 */
    int32_t fs_size;            /* fragments in the file system */
    int32_t fs_dsize;           /* fragments available for data */
    int32_t fs_ncg;             /* cylinder groups */
    int32_t fs_bsize;           /* block size, bytes */
    int32_t fs_fsize;           /* fragment size, bytes */
    int32_t fs_frag;            /* fragments per block */
    int32_t fs_minfree;         /* percent of blocks kept free */
    int32_t fs_rotdelay;        /* historic; 0 */
    int32_t fs_rps;             /* historic: revolutions per second */
    int32_t fs_bmask;           /* ~(fs_bsize - 1) */
    int32_t fs_fmask;           /* ~(fs_fsize - 1) */
    int32_t fs_bshift;          /* log2(fs_bsize) */
    int32_t fs_fshift;          /* log2(fs_fsize) */
    int32_t fs_maxcontig;       /* blocks in a cluster at most */
    int32_t fs_maxbpg;          /* blocks of one file per group at most */
    int32_t fs_fragshift;       /* log2(fs_frag) */
    int32_t fs_fsbtodb;         /* log2(fs_fsize / UFS_DEV_BSIZE) */
    int32_t fs_sbsize;          /* bytes of superblock written */
    int32_t fs_csmask;          /* historic */
    int32_t fs_csshift;         /* historic */
    int32_t fs_nindir;          /* block numbers per indirect block */
    int32_t fs_inopb;           /* inodes per block */
    int32_t fs_nspf;            /* sectors per fragment */
    int32_t fs_optim;           /* 0 time, 1 space */
    int32_t fs_npsect;          /* historic geometry */
    int32_t fs_interleave;      /* historic geometry */
    int32_t fs_trackskew;       /* historic geometry */
    int32_t fs_id[2];           /* NetBSD: a file-system id (4.4BSD:
                                   fs_headswitch, fs_trkseek) */
    int32_t fs_csaddr;          /* summary area, fragment address */
    int32_t fs_cssize;          /* summary area, bytes */
    int32_t fs_cgsize;          /* group block, bytes */
    int32_t fs_ntrak;           /* historic geometry */
    int32_t fs_nsect;           /* historic geometry */
    int32_t fs_spc;             /* sectors per (historic) cylinder */
    int32_t fs_ncyl;            /* historic cylinders */
    int32_t fs_cpg;             /* historic cylinders per group */
    int32_t fs_ipg;             /* inodes per group */
    int32_t fs_fpg;             /* fragments per group */
    struct ufs_csum fs_cstotal; /* sums over all groups */
    int8_t  fs_fmod;            /* in memory only */
    int8_t  fs_clean;           /* UFS_FSCLEAN when unmounted cleanly */
    int8_t  fs_ronly;           /* in memory only */
    uint8_t fs_flags;           /* UFS_FLAGS_UPDATED and others */
    char    fs_fsmnt[468];      /* where it was last mounted */
    char    fs_volname[32];     /* NetBSD: volume name */
    uint64_t fs_swuid;          /* NetBSD: system-wide id */
    int32_t fs_pad;
    int32_t fs_cgrotor;         /* last group searched */
    uint8_t fs_incore[128];     /* BSD's in-core pointers; ignored */
    int32_t fs_cpc;             /* historic rotational tables: 0 */
    /*
     * NetBSD's newer fields, valid when fs_flags has UFS_FLAGS_UPDATED:
     * 64-bit copies of the counts and sizes above.
     */
    int32_t fs_maxbsize;        /* largest block size: fs_bsize */
    int64_t fs_spare64[17];
    int64_t fs_sblockloc;       /* UFS_SBOFF */
    struct {
        int64_t cs_ndir, cs_nbfree, cs_nifree, cs_nffree;
        int64_t cs_numclusters;
        int64_t cs_spare[3];
    } fs_cstotal64;             /* fs_cstotal, 64 bits wide */
    int64_t fs_time64;          /* fs_time */
    int64_t fs_size64;          /* fs_size */
    int64_t fs_dsize64;         /* fs_dsize */
    int64_t fs_csaddr64;        /* fs_csaddr */
    int64_t fs_pendingblocks;   /* 0 */
    int32_t fs_pendinginodes;   /* 0 */
    int32_t fs_snapinum[20];    /* snapshots: none */
    int32_t fs_avgfilesize;     /* expected average file size */
    int32_t fs_avgfpdir;        /* expected files per directory */
    int32_t fs_save_cgsize;     /* 0 */
    int32_t fs_spare32[26];
    int32_t fs_flags32;         /* more flags: 0 */
    int32_t fs_contigsumsize;   /* size of the cluster summary array */
    int32_t fs_maxsymlinklen;   /* targets shorter than this live in the inode */
    int32_t fs_inodefmt;        /* UFS_44INODEFMT */
    uint64_t fs_maxfilesize;    /* largest file */
    int64_t fs_qbmask;          /* fs_bsize - 1 */
    int64_t fs_qfmask;          /* fs_fsize - 1 */
    int32_t fs_state;           /* 0 */
    int32_t fs_postblformat;    /* UFS_DYNAMICPOSTBLFMT */
    int32_t fs_nrpos;           /* historic rotational positions: 1 */
    int32_t fs_postbloff;       /* historic: 0 */
    int32_t fs_rotbloff;        /* historic: 0 */
    int32_t fs_magic;           /* UFS1_MAGIC */
} __attribute__((packed, aligned(4)));

/* The cylinder group block, followed by the maps at the offsets it gives. */
struct ufs_cg {
    int32_t cg_firstfield;      /* 0 */
    int32_t cg_magic;           /* UFS_CG_MAGIC */
    int32_t cg_time;            /* last written */
    int32_t cg_cgx;             /* this group's number */
    int16_t cg_ncyl;            /* historic cylinders in the group */
    int16_t cg_niblk;           /* inodes in the group (fs_ipg) */
    int32_t cg_ndblk;           /* fragments in the group */
    struct ufs_csum cg_cs;      /* this group's summary */
    int32_t cg_rotor;           /* where the last block was allocated */
    int32_t cg_frotor;          /* ... the last fragment */
    int32_t cg_irotor;          /* ... the last inode */
    int32_t cg_frsum[UFS_MAXFRAG]; /* cg_frsum[n]: free runs of n fragments
                                     inside partly used blocks */
    int32_t cg_btotoff;         /* historic per-cylinder block counts */
    int32_t cg_boff;            /* historic rotational position counts */
    int32_t cg_iusedoff;        /* inode map */
    int32_t cg_freeoff;         /* fragment map */
    int32_t cg_nextfreeoff;     /* first byte after the maps */
    int32_t cg_clustersumoff;   /* cluster summary (int32 [contigsumsize+1];
                                   entry n counts free runs of n blocks) */
    int32_t cg_clusteroff;      /* cluster map */
    int32_t cg_nclusterblks;    /* blocks the cluster map covers */
    int32_t cg_niblk32;         /* NetBSD: inodes (UFS2 only; 0 here) */
    int32_t cg_initediblk;      /* NetBSD: initialised inodes (UFS2; 0) */
    int32_t cg_spare32[3];
    int64_t cg_time64;          /* NetBSD: UFS2 time (0 here) */
    int64_t cg_spare64[3];
    /* the maps follow, from byte 168 */
} __attribute__((packed, aligned(4)));

/* An inode (UFS1), 128 bytes. */
struct ufs_dinode {
    uint16_t di_mode;           /* type and permissions; 0 = free */
    int16_t  di_nlink;          /* directory entries naming it */
    uint16_t di_ouid, di_ogid;  /* historic 16-bit owner (0 here) */
    uint64_t di_size;           /* bytes */
    int32_t  di_atime, di_atimensec;
    int32_t  di_mtime, di_mtimensec;
    int32_t  di_ctime, di_ctimensec;
    int32_t  di_db[UFS_NDADDR]; /* direct blocks (fragment addresses); a
                                   short symbolic link's target instead */
    int32_t  di_ib[UFS_NIADDR]; /* single, double, triple indirect */
    uint32_t di_flags;          /* chflags(2) flags */
    uint32_t di_blocks;         /* UFS_DEV_BSIZE units allocated, indirect
                                   blocks included */
    int32_t  di_gen;            /* generation number */
    uint32_t di_uid;            /* owner */
    uint32_t di_gid;            /* group */
    uint64_t di_modrev;         /* NetBSD: change counter (0 here) */
} __attribute__((packed, aligned(4)));

/*
 * A directory entry: 8 bytes, then the name, NUL-terminated and padded to
 * 4 bytes.  d_reclen takes the entry to the next one; the last entry of
 * each UFS_DIRBLKSIZ chunk reaches the chunk's end, and an entry with
 * d_ino 0 is free space (only as a chunk's first entry).
 */
struct ufs_direct {
    uint32_t d_ino;
    uint16_t d_reclen;
    uint8_t  d_type;            /* UFS_DT_* */
    uint8_t  d_namlen;
    char     d_name[];          /* d_namlen bytes and a NUL */
};

_Static_assert(offsetof(struct ufs_super, fs_fpg) == 188, "fs_fpg offset");
_Static_assert(offsetof(struct ufs_super, fs_cstotal) == 192, "fs_cstotal offset");
_Static_assert(offsetof(struct ufs_super, fs_clean) == 209, "fs_clean offset");
_Static_assert(offsetof(struct ufs_super, fs_fsmnt) == 212, "fs_fsmnt offset");
_Static_assert(offsetof(struct ufs_super, fs_cgrotor) == 724, "fs_cgrotor offset");
_Static_assert(offsetof(struct ufs_super, fs_cpc) == 856, "fs_cpc offset");
_Static_assert(offsetof(struct ufs_super, fs_maxbsize) == 860, "fs_maxbsize offset");
_Static_assert(offsetof(struct ufs_super, fs_sblockloc) == 1000, "fs_sblockloc offset");
_Static_assert(offsetof(struct ufs_super, fs_cstotal64) == 1008, "fs_cstotal64 offset");
_Static_assert(offsetof(struct ufs_super, fs_time64) == 1072, "fs_time64 offset");
_Static_assert(offsetof(struct ufs_super, fs_csaddr64) == 1096, "fs_csaddr64 offset");
_Static_assert(offsetof(struct ufs_super, fs_avgfilesize) == 1196, "fs_avgfilesize offset");
_Static_assert(offsetof(struct ufs_super, fs_contigsumsize) == 1316, "fs_contigsumsize");
_Static_assert(offsetof(struct ufs_super, fs_maxfilesize) == 1328, "fs_maxfilesize offset");
_Static_assert(offsetof(struct ufs_super, fs_magic) == 1372, "fs_magic offset");
_Static_assert(sizeof(struct ufs_super) == 1376, "the UFS1 superblock is 1376 bytes");
_Static_assert(offsetof(struct ufs_cg, cg_frsum) == 52, "cg_frsum offset");
_Static_assert(offsetof(struct ufs_cg, cg_iusedoff) == 92, "cg_iusedoff offset");
_Static_assert(sizeof(struct ufs_cg) == 168, "the group block's header is 168 bytes");
_Static_assert(offsetof(struct ufs_dinode, di_db) == 40, "di_db offset");
_Static_assert(offsetof(struct ufs_dinode, di_blocks) == 104, "di_blocks offset");
_Static_assert(sizeof(struct ufs_dinode) == UFS_INODE_SIZE, "a UFS1 inode is 128 bytes");
_Static_assert(sizeof(struct ufs_direct) == 8, "a directory entry's header is 8 bytes");

/* ---- arithmetic on the geometry (the BSD macros, as functions) ---- */

/* First fragment of group c. */
static inline int64_t ufs_cgbase(const struct ufs_super *fs, uint32_t c)
{
    return (int64_t)fs->fs_fpg * c;
}

/* Fragment address of group c's block, inodes, first data fragment. */
static inline int64_t ufs_cgtod(const struct ufs_super *fs, uint32_t c)
{
    return ufs_cgbase(fs, c) + fs->fs_cblkno;
}

static inline int64_t ufs_cgimin(const struct ufs_super *fs, uint32_t c)
{
    return ufs_cgbase(fs, c) + fs->fs_iblkno;
}

static inline int64_t ufs_cgdmin(const struct ufs_super *fs, uint32_t c)
{
    return ufs_cgbase(fs, c) + fs->fs_dblkno;
}

/* Fragments in group c (the last group may be short). */
static inline int64_t ufs_cgfrags(const struct ufs_super *fs, uint32_t c)
{
    int64_t left = fs->fs_size - ufs_cgbase(fs, c);
    return left < fs->fs_fpg ? left : fs->fs_fpg;
}

/* Group holding inode ino, and the fragment and byte of its slot. */
static inline uint32_t ufs_ino_to_cg(const struct ufs_super *fs, uint32_t ino)
{
    return ino / (uint32_t)fs->fs_ipg;
}

static inline int64_t ufs_ino_to_frag(const struct ufs_super *fs, uint32_t ino)
{
    uint32_t slot = ino % (uint32_t)fs->fs_ipg;
    return ufs_cgimin(fs, ufs_ino_to_cg(fs, ino)) +
           (int64_t)(slot / (uint32_t)fs->fs_inopb) * fs->fs_frag;
}

static inline uint64_t ufs_ino_to_byte(const struct ufs_super *fs, uint32_t ino)
{
    return (uint64_t)ufs_ino_to_frag(fs, ino) * (uint32_t)fs->fs_fsize +
           (uint64_t)(ino % (uint32_t)fs->fs_inopb) * UFS_INODE_SIZE;
}

/* Group holding fragment f. */
static inline uint32_t ufs_dtog(const struct ufs_super *fs, int64_t f)
{
    return (uint32_t)(f / fs->fs_fpg);
}

/* Bytes of the last block of a file of size (> 0) bytes as stored: whole
 * fragments, or a whole block when the file reaches the indirect blocks. */
static inline uint32_t ufs_lastblock_bytes(const struct ufs_super *fs, uint64_t size)
{
    uint64_t lbn = (size - 1) >> fs->fs_bshift;
    uint32_t tail = (uint32_t)(size & (uint64_t)(fs->fs_bsize - 1));
    if (lbn >= UFS_NDADDR || tail == 0)
        return (uint32_t)fs->fs_bsize;
    return (tail + (uint32_t)fs->fs_fsize - 1) & ~((uint32_t)fs->fs_fsize - 1);
}

/* True if a symbolic link of this size keeps its target in the inode. */
static inline int ufs_link_is_short(const struct ufs_super *fs, const struct ufs_dinode *di)
{
    return di->di_size < (uint64_t)fs->fs_maxsymlinklen && di->di_blocks == 0;
}

/* Bytes a directory entry with a name of namlen bytes needs. */
static inline uint32_t ufs_direntsize(uint32_t namlen)
{
    return (8 + namlen + 1 + 3) & ~3u;
}

/* The d_type for a mode. */
static inline uint8_t ufs_mode_to_dtype(uint16_t mode)
{
    return (uint8_t)((mode & UFS_IFMT) >> 12);
}

/* Map bits. */
static inline int ufs_isset(const uint8_t *map, uint64_t n)
{
    return (map[n >> 3] >> (n & 7)) & 1;
}

static inline void ufs_setbit(uint8_t *map, uint64_t n)
{
    map[n >> 3] |= (uint8_t)(1u << (n & 7));
}

static inline void ufs_clrbit(uint8_t *map, uint64_t n)
{
    map[n >> 3] &= (uint8_t)~(1u << (n & 7));
}

/*
 * Checks that a superblock's geometry can be used at all: 0 if so, or a
 * short reason.  dev_frags is the device size in fragments, or 0.  The
 * arithmetic above and every map index rely on these.
 */
static inline const char *ufs_sb_invalid(const struct ufs_super *fs, uint64_t dev_frags)
{
    if (fs->fs_magic != UFS1_MAGIC)
        return "bad magic number (not UFS1)";
    if (fs->fs_bsize < UFS_MINBSIZE || fs->fs_bsize > UFS_MAXBSIZE ||
        (fs->fs_bsize & (fs->fs_bsize - 1)))
        return "impossible block size";
    if (fs->fs_fsize < UFS_DEV_BSIZE || fs->fs_fsize > fs->fs_bsize ||
        (fs->fs_fsize & (fs->fs_fsize - 1)))
        return "impossible fragment size";
    if (fs->fs_frag != fs->fs_bsize / fs->fs_fsize || fs->fs_frag > UFS_MAXFRAG)
        return "fs_frag does not match the block and fragment sizes";
    if (fs->fs_bshift < 0 || fs->fs_bshift > 30 || fs->fs_fshift < 0 || fs->fs_fshift > 30 ||
        fs->fs_fragshift < 0 || fs->fs_fragshift > 30 ||
        (1 << fs->fs_bshift) != fs->fs_bsize || (1 << fs->fs_fshift) != fs->fs_fsize ||
        (1 << fs->fs_fragshift) != fs->fs_frag)
        return "the shifts do not match the sizes";
    if (fs->fs_nindir != fs->fs_bsize / 4 || fs->fs_inopb != fs->fs_bsize / UFS_INODE_SIZE)
        return "fs_nindir or fs_inopb does not match the block size";
    if (fs->fs_ncg < 1 || fs->fs_fpg < fs->fs_frag || fs->fs_fpg % fs->fs_frag ||
        fs->fs_ipg < fs->fs_inopb || fs->fs_ipg % fs->fs_inopb)
        return "impossible group geometry";
    if (fs->fs_size <= 0 || (int64_t)fs->fs_ncg * fs->fs_fpg < fs->fs_size ||
        (int64_t)(fs->fs_ncg - 1) * fs->fs_fpg >= fs->fs_size)
        return "fs_size does not match fs_ncg groups of fs_fpg fragments";
    if (dev_frags && (uint64_t)fs->fs_size > dev_frags)
        return "fs_size is larger than the device";
    if (fs->fs_cgoffset != 0)
        return "fs_cgoffset is not 0 (rotated groups are not supported)";
    if (fs->fs_sblkno < (UFS_SBOFF + UFS_SBSIZE) / fs->fs_fsize ||
        fs->fs_cblkno < fs->fs_sblkno || fs->fs_iblkno < fs->fs_cblkno ||
        fs->fs_dblkno != (int64_t)fs->fs_iblkno + fs->fs_ipg / fs->fs_inopb * fs->fs_frag ||
        fs->fs_dblkno >= fs->fs_fpg)
        return "the group's superblock copy, block, inodes and data overlap";
    if (fs->fs_cgsize <= 0 || fs->fs_cgsize > fs->fs_bsize ||
        fs->fs_cblkno + (fs->fs_cgsize + fs->fs_fsize - 1) / fs->fs_fsize > fs->fs_iblkno)
        return "the group block does not fit before the inodes";
    if (fs->fs_cssize < (int64_t)fs->fs_ncg * (int64_t)sizeof(struct ufs_csum) ||
        fs->fs_csaddr < fs->fs_dblkno ||
        fs->fs_csaddr + ((int64_t)fs->fs_cssize + fs->fs_fsize - 1) / fs->fs_fsize >
            ufs_cgfrags(fs, 0))
        return "the summary area is not in group 0's data";
    if (fs->fs_maxsymlinklen < 0 || fs->fs_maxsymlinklen > UFS_MAXSYMLINKLEN)
        return "fs_maxsymlinklen is larger than the inode's block pointers";
    if (fs->fs_contigsumsize < 0 || fs->fs_contigsumsize > 64)
        return "impossible fs_contigsumsize";
    if ((uint64_t)fs->fs_ncg * (uint64_t)fs->fs_ipg > 0xffffffffu)
        return "more inodes than 32-bit numbers";
    return 0;
}

#endif /* KERN_UFS_UFS_FS_H */
