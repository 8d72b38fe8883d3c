/*
 * fsck.ufs's repairs of the superblock and the maps (see fsck_ufs_fix.c
 * for the passes): every group block made anew from the inodes kept and
 * the fragments they own, in mkfs.ufs's layout, the summary area, the
 * totals, the superblock and its copies written; and an unusable
 * superblock replaced by the first sound copy in a later group.  A
 * single-threaded tool: no locks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fsck_ufs.h"
#include "ufs_cg.h"

/* Writes len bytes at byte off of the image; 0, or 1 on failure. */
static int write_at(struct fsck *f, uint64_t off, const void *buf, size_t len)
{
    return pwrite(f->fd, buf, len, (off_t)off) != (ssize_t)len;
}


static int inode_used(const struct fsck *f, uint32_t ino)
{
    return ino < UFS_ROOTINO || f->itab[ino].di_mode != 0;
}

/* A fragment no kept inode owns (ufs_cg_fill_frags's view). */
static int frag_unused(const void *used, int64_t frag)
{
    return !((const uint8_t *)used)[frag];
}

int ufs_fit_cg_size(struct fsck *f)
{
    struct ufs_super *fs = &f->sb;
    struct ufs_cg cg;
    int32_t need = ufs_cg_layout(fs, &cg), size;

    if (need > fs->fs_cgsize && fs->fs_contigsumsize > UFS_MAXCONTIG_SUM) {
        fs->fs_contigsumsize = UFS_MAXCONTIG_SUM;
        need = ufs_cg_layout(fs, &cg);
    }
    if (need <= fs->fs_cgsize)
        return 0;
    size = (need + fs->fs_fsize - 1) / fs->fs_fsize * fs->fs_fsize;
    if (size > fs->fs_bsize || fs->fs_cblkno + size / fs->fs_fsize > fs->fs_iblkno)
        return -1;
    fs->fs_cgsize = size;
    return 0;
}

/* Group c's block, anew in buf, in mkfs.ufs's layout. */
static void build_cg(const struct fsck *f, const uint8_t *used, uint32_t c, uint8_t *buf,
                     int32_t now)
{
    const struct ufs_super *fs = &f->sb;
    struct ufs_cg *cg = (struct ufs_cg *)buf;

    ufs_cg_start(fs, c, buf, now);
    for (int32_t i = 0; i < fs->fs_ipg; i++) {
        uint32_t ino = c * (uint32_t)fs->fs_ipg + (uint32_t)i;
        if (!inode_used(f, ino))
            cg->cg_cs.cs_nifree++;
        else {
            ufs_setbit(buf + cg->cg_iusedoff, (uint64_t)i);
            cg->cg_cs.cs_ndir += (f->itab[ino].di_mode & UFS_IFMT) == UFS_IFDIR;
        }
    }
    ufs_cg_fill_frags(fs, c, buf, frag_unused, used);
}

/* The superblock, with every copy, written from f->sb marked clean. */
static int write_super(struct fsck *f, int32_t now)
{
    struct ufs_super *fs = &f->sb;
    int failed = 0;
    uint8_t *buf = xcalloc(1, UFS_SBSIZE);
    size_t len = fs->fs_sbsize > 0 && fs->fs_sbsize <= UFS_SBSIZE ? (size_t)fs->fs_sbsize
                                                                  : sizeof(*fs);

    if (len < sizeof(*fs))
        len = sizeof(*fs);
    fs->fs_clean = UFS_FSCLEAN;
    fs->fs_time = now;
    if (fs->fs_flags & UFS_FLAGS_UPDATED)
        fs->fs_time64 = now;
    if (read_at(f, UFS_SBOFF, buf, len) < 0)
        memset(buf, 0, len);
    memcpy(buf, fs, sizeof(*fs));
    failed |= write_at(f, UFS_SBOFF, buf, len);
    for (uint32_t c = 1; c < (uint32_t)fs->fs_ncg; c++)
        failed |= write_at(f, frag_bytes(f, ufs_cgbase(fs, c) + fs->fs_sblkno), buf, len);
    free(buf);
    return failed ? -1 : 0;
}

/* fs_dsize, the totals and NetBSD's 64-bit copies, from the groups. */
static void set_totals(struct ufs_super *fs, const struct ufs_csum *total)
{
    fs->fs_cstotal = *total;
    fs->fs_dsize = fs->fs_size - fs->fs_sblkno - fs->fs_ncg * (fs->fs_dblkno - fs->fs_sblkno) -
                   (fs->fs_cssize + fs->fs_fsize - 1) / fs->fs_fsize;
    fs->fs_inodefmt = UFS_44INODEFMT;
    if (!(fs->fs_flags & UFS_FLAGS_UPDATED))
        return;
    fs->fs_sblockloc = UFS_SBOFF;
    fs->fs_size64 = fs->fs_size;
    fs->fs_dsize64 = fs->fs_dsize;
    fs->fs_csaddr64 = fs->fs_csaddr;
    fs->fs_maxbsize = fs->fs_bsize;
    fs->fs_cstotal64.cs_ndir = total->cs_ndir;
    fs->fs_cstotal64.cs_nbfree = total->cs_nbfree;
    fs->fs_cstotal64.cs_nifree = total->cs_nifree;
    fs->fs_cstotal64.cs_nffree = total->cs_nffree;
}

int ufs_write_maps(struct fsck *f, const uint8_t *used)
{
    struct ufs_super *fs = &f->sb;
    int failed = 0;
    uint8_t *buf = xcalloc(1, (size_t)fs->fs_cgsize);
    struct ufs_csum *csum = xcalloc(1, (size_t)fs->fs_cssize), total = { 0, 0, 0, 0 };
    size_t per_cg = (size_t)fs->fs_ipg * UFS_INODE_SIZE;
    int32_t now = (int32_t)time(NULL);

    for (uint32_t c = 0; c < (uint32_t)fs->fs_ncg; c++) {
        build_cg(f, used, c, buf, now);
        csum[c] = ((struct ufs_cg *)buf)->cg_cs;
        failed |= write_at(f, frag_bytes(f, ufs_cgtod(fs, c)), buf, (size_t)fs->fs_cgsize);
        failed |= write_at(f, frag_bytes(f, ufs_cgimin(fs, c)), (uint8_t *)f->itab + c * per_cg,
                           per_cg);
        total.cs_ndir += csum[c].cs_ndir;
        total.cs_nbfree += csum[c].cs_nbfree;
        total.cs_nifree += csum[c].cs_nifree;
        total.cs_nffree += csum[c].cs_nffree;
    }
    failed |= write_at(f, frag_bytes(f, fs->fs_csaddr), csum, (size_t)fs->fs_cssize);
    set_totals(fs, &total);
    failed |= write_super(f, now);
    failed |= fsync(f->fd);
    free(csum);
    free(buf);
    return failed ? -1 : 0;
}

int ufs_reopen_rw(struct fsck *f)
{
    int fd = open(f->image, O_RDWR);

    if (fd < 0) {
        fprintf(stderr, "fsck.ufs: %s: cannot open for repair: %s\n", f->image,
                strerror(errno));
        return -1;
    }
    close(f->fd);
    f->fd = fd;
    return 0;
}

/* Is a superblock whose copy sits at byte off sound and at the place its
 * own geometry gives a copy of a group after the first? */
static int copy_at(struct fsck *f, uint64_t off, struct ufs_super *sb)
{
    uint64_t dev_frags;

    if (read_at(f, off, sb, sizeof(*sb)) < 0 || sb->fs_magic != UFS1_MAGIC ||
        sb->fs_fsize <= 0)
        return 0;
    dev_frags = f->image_bytes / (uint32_t)sb->fs_fsize;
    if (ufs_sb_invalid(sb, dev_frags))
        return 0;
    for (uint32_t c = 1; c < (uint32_t)sb->fs_ncg; c++)
        if ((uint64_t)(ufs_cgbase(sb, c) + sb->fs_sblkno) * (uint32_t)sb->fs_fsize == off)
            return 1;
    return 0;
}

int ufs_use_a_copy(struct fsck *f)
{
    struct ufs_super sb;
    uint8_t *buf;

    for (uint64_t off = UFS_SBOFF + UFS_DEV_BSIZE; off + sizeof(sb) <= f->image_bytes;
         off += UFS_DEV_BSIZE) {
        if (!copy_at(f, off, &sb))
            continue;
        printf("fsck.ufs: %s: using the superblock copy at byte %llu\n", f->image,
               (unsigned long long)off);
        buf = xcalloc(1, UFS_SBSIZE);
        if (read_at(f, off, buf, UFS_SBSIZE) < 0)
            memcpy(buf, &sb, sizeof(sb));
        ((struct ufs_super *)buf)->fs_clean = 0;
        int ok = pwrite(f->fd, buf, UFS_SBSIZE, UFS_SBOFF) == UFS_SBSIZE && fsync(f->fd) == 0;
        free(buf);
        return ok ? 0 : -1;
    }
    return -1;
}

int ufs_mark_clean(struct fsck *f)
{
    if (ufs_reopen_rw(f) < 0)
        return -1;
    return write_super(f, (int32_t)time(NULL)) < 0 || fsync(f->fd) < 0 ? -1 : 0;
}
