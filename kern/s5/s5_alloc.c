/*
 * S5 free lists: blocks (the V7/SVR3 free-block chain) and inodes (the
 * superblock's free-inode cache), as kern/s5/s5_fs.h describes them.
 * Theory and lock order in kern/s5/s5_vfsops.c.
 *
 * The in-core superblock is under the file system's mutex fs_lock, taken
 * non-recursively.  A mutex is released whenever its holder sleeps, so a
 * change that needs disk I/O in the middle (reading the next chain block,
 * writing a full cache out as a new chain block, scanning the inode list)
 * also holds a resource lock across the I/O: fs_flock for the block list,
 * fs_ilist for inode scans.  Whenever fs_lock is released the superblock
 * is consistent, so statfs and sync may copy it at any time.
 */
#include <kern/s5/s5_inode.h>
#include <kern/vfs/buf.h>
#include <drivers/block/bio.h>
#include <kern/vm/kmem.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/arch/panic.h>

/* ---- blocks ---- */

/* The next chain block's cache becomes the superblock's [fl, fs]; the
 * chain block itself is then the block handed out. */
static int take_chain_block(struct s5_fs *fs, uint32_t b)
{
    struct s5_super *sb = &fs->fs_sb;
    int err = 0;
    /* fs_flock keeps the list still while fs_lock is down for the read. */
    mutex_exit(&fs->fs_lock);
    struct buf *bp = s5_bread(fs, b, &err);
    mutex_enter(&fs->fs_lock);
    if (!bp)
        return err;
    const struct s5_fblk *fb = (const struct s5_fblk *)bp->b_data;
    if (fb->df_nfree > S5_NICFREE) {
        s5_corrupt(fs, "free-list chain block %u has df_nfree %u (0..%d allowed)", b,
                   fb->df_nfree, S5_NICFREE);
        brelse(bp);
        return -EUCLEAN;
    }
    sb->s_nfree = (uint16_t)fb->df_nfree;
    memcpy(sb->s_free, fb->df_free, sizeof sb->s_free);
    brelse(bp);
    return 0;
}

/* Take one block off the list [fl, fs]. */
static int take_block(struct s5_fs *fs, uint32_t *bnop)
{
    struct s5_super *sb = &fs->fs_sb;
    uint32_t b;
    if (sb->s_nfree == 0)
        return -ENOSPC;
    if (sb->s_nfree == 1 && sb->s_free[0] != 0) {
        b = sb->s_free[0];
        if (!s5_bno_valid(sb, b)) {
            s5_corrupt(fs, "free-list chain pointer %u out of range [%u, %u)", b,
                       sb->s_isize, sb->s_fsize);
            return -EUCLEAN;
        }
        int err = take_chain_block(fs, b);
        if (err)
            return err;
    } else {
        b = sb->s_free[--sb->s_nfree];
        if (b == 0) {
            sb->s_nfree = 0;                /* the end of the list */
            fs->fs_fmod = true;
            return -ENOSPC;
        }
        if (!s5_bno_valid(sb, b)) {
            fs->fs_fmod = true;             /* the bad entry is dropped */
            s5_corrupt(fs, "free list holds block %u, out of range [%u, %u)", b,
                       sb->s_isize, sb->s_fsize);
            return -EUCLEAN;
        }
    }
    if (sb->s_tfree > 0)
        sb->s_tfree--;
    fs->fs_fmod = true;
    *bnop = b;
    return 0;
}

int s5_balloc(struct s5_fs *fs, uint32_t *bnop)
{
    if (fs->fs_rdonly)
        return -EROFS;
    if (fs->fs_freebad)
        return -EUCLEAN;                    /* reported at mount */
    rlock_acquire(&fs->fs_flock);
    mutex_enter(&fs->fs_lock);
    int err = take_block(fs, bnop);
    mutex_exit(&fs->fs_lock);
    rlock_release(&fs->fs_flock);
    return err;
}

void s5_bfree(struct s5_fs *fs, uint32_t bno)
{
    struct s5_super *sb = &fs->fs_sb;
    if (!s5_bno_valid(sb, bno)) {
        s5_corrupt(fs, "freeing block %u, out of range [%u, %u)", bno, sb->s_isize,
                   sb->s_fsize);
        return;
    }
    rlock_acquire(&fs->fs_flock);
    mutex_enter(&fs->fs_lock);
    struct buf *chain = NULL;
    if (sb->s_nfree == S5_NICFREE) {
        /* The full cache moves into bno, which becomes the new chain block.
         * getblk may sleep; fs_flock keeps s_nfree at S5_NICFREE. */
        mutex_exit(&fs->fs_lock);
        chain = s5_getblk(fs, bno);
        mutex_enter(&fs->fs_lock);
        memset(chain->b_data, 0, S5_BSIZE);
        struct s5_fblk *fb = (struct s5_fblk *)chain->b_data;
        fb->df_nfree = sb->s_nfree;
        memcpy(fb->df_free, sb->s_free, sizeof fb->df_free);
        sb->s_nfree = 0;
        sb->s_free[sb->s_nfree++] = bno;
    } else {
        if (sb->s_nfree == 0) {
            sb->s_free[0] = 0;              /* restart the list */
            sb->s_nfree = 1;
        }
        sb->s_free[sb->s_nfree++] = bno;
    }
    sb->s_tfree++;
    fs->fs_fmod = true;
    mutex_exit(&fs->fs_lock);
    if (chain)
        s5_bwrite_meta(chain, s5_syncwrites());
    rlock_release(&fs->fs_flock);
}

/* ---- inodes ---- */

static bool icache_has(const struct s5_super *sb, uint32_t ino)
{
    for (uint32_t i = 0; i < sb->s_ninode; i++)
        if (sb->s_inode[i] == ino)
            return true;
    return false;
}

/*
 * Refill the empty free-inode cache by scanning the inode list for
 * di_mode == 0, starting after the last refill's position.  Inodes that
 * are in core and referenced are skipped: they may be in the middle of
 * being allocated or freed, and the disk copy may not say so yet.
 * Returns -ENOSPC when no free inode is found.
 */
static int refill_icache(struct s5_fs *fs)
{
    struct s5_super *sb = &fs->fs_sb;
    uint32_t ninodes = s5_ninodes(sb);
    uint16_t *found = kmalloc(S5_NICINOD * sizeof *found);
    if (!found)
        return -ENOMEM;
    rlock_acquire(&fs->fs_ilist);
    mutex_enter(&fs->fs_lock);
    bool need = sb->s_ninode == 0 && sb->s_tinode > 0;
    bool none_left = sb->s_ninode == 0 && sb->s_tinode == 0;
    uint32_t start = fs->fs_irotor;
    mutex_exit(&fs->fs_lock);
    int n = 0, err = 0;
    if (need) {
        __atomic_add_fetch(&s5_stats.iscans, 1, __ATOMIC_RELAXED);
        if (start < 1 || start > ninodes)
            start = 1;
        for (uint32_t k = 0; k < ninodes && n < S5_NICINOD && !err; ) {
            uint32_t ino = (start - 1 + k) % ninodes + 1;
            struct buf *bp = s5_bread(fs, s5_itod(ino), &err);
            if (!bp)
                break;
            /* The rest of this block, then move on to the next. */
            uint32_t cand[S5_INOPB], nc = 0;
            const struct s5_dinode *di = (const struct s5_dinode *)bp->b_data;
            for (uint32_t slot = s5_itoo(ino); slot < S5_INOPB && k < ninodes; slot++, k++) {
                uint32_t i = ino + (slot - s5_itoo(ino));
                if (i > ninodes)
                    break;
                if (di[slot].di_mode == 0 && i > S5_ROOTINO)
                    cand[nc++] = i;
            }
            brelse(bp);
            for (uint32_t c = 0; c < nc && n < S5_NICINOD; c++)
                if (!s5_iactive(fs, cand[c]))
                    found[n++] = (uint16_t)cand[c];
        }
    }
    mutex_enter(&fs->fs_lock);
    /* Lowest number on top, as mkfs.s5 leaves it: push from the highest. */
    for (int i = n - 1; i >= 0 && sb->s_ninode < S5_NICINOD; i--)
        if (!icache_has(sb, found[i]))
            sb->s_inode[sb->s_ninode++] = found[i];
    if (n > 0)
        fs->fs_irotor = found[n - 1] % ninodes + 1;
    fs->fs_fmod = true;
    bool empty = sb->s_ninode == 0;
    mutex_exit(&fs->fs_lock);
    rlock_release(&fs->fs_ilist);
    kfree(found);
    if (err)
        return err;
    return empty && (none_left || n == 0) ? -ENOSPC : 0;
}

/* A newly allocated inode's fields (ILOCKED, mode 0 until now). */
static void init_new_inode(struct s5_inode *ip, uint16_t mode)
{
    for (int i = 0; i < S5_NADDR; i++) {
        if (ip->i_addr[i]) {
            s5_corrupt(ip->i_fs, "free inode %u has block pointer %d set (%u); cleared",
                       ip->i_number, i, ip->i_addr[i]);
            ip->i_addr[i] = 0;
        }
    }
    ip->i_mode = mode;
    ip->i_nlink = 0;
    ip->i_uid = ip->i_gid = 0;
    ip->i_size = 0;
    ip->i_gen++;
    ip->i_nblocks = 0;
    ip->i_flag |= IBLKS;
    ip->i_vnode.v_rdev = 0;
    s5_itimes(ip, S5_ACC | S5_UPD | S5_CHG);
    switch (mode & S5_IFMT) {
    case S5_IFDIR: ip->i_vnode.v_type = VDIR; break;
    case S5_IFLNK: ip->i_vnode.v_type = VLNK; break;
    case S5_IFCHR: ip->i_vnode.v_type = VCHR; break;
    case S5_IFBLK: ip->i_vnode.v_type = VBLK; break;
    case S5_IFIFO: ip->i_vnode.v_type = VFIFO; break;
    case S5_IFSOCK: ip->i_vnode.v_type = VSOCK; break;
    default:       ip->i_vnode.v_type = VREG; break;
    }
}

/*
 * Allocate an inode (seed 001's ialloc).  The inode number comes off the
 * cache under fs_lock, but fs_lock is released BEFORE iget: iget may purge
 * the DNLC, which may inactivate an unlinked file, whose ifree needs
 * fs_lock -- held here, that would deadlock (the mutex is not used
 * recursively).  With the lock released, two threads can get the same
 * number (a refill scan may have put back a number being allocated), so
 * after iget the inode is checked: if it is already allocated, or someone
 * else still holds it, it is dropped and the next number tried.  The iget
 * only tries the inode's ILOCK (s5_iget_try): waiting for it while the
 * caller holds its directory's ILOCK could close a cycle with the holder.
 */
int s5_ialloc(struct s5_fs *fs, uint16_t mode, struct s5_inode **ipp)
{
    struct s5_super *sb = &fs->fs_sb;
    if (fs->fs_rdonly)
        return -EROFS;
    for (int tries = 0; tries < 4 * S5_NICINOD + 16; tries++) {
        mutex_enter(&fs->fs_lock);
        if (sb->s_ninode == 0) {
            mutex_exit(&fs->fs_lock);
            int err = refill_icache(fs);
            if (err)
                return err;
            continue;
        }
        uint32_t ino = sb->s_inode[--sb->s_ninode];
        fs->fs_fmod = true;
        mutex_exit(&fs->fs_lock);
        if (!s5_ino_valid(sb, ino) || ino <= S5_ROOTINO) {
            s5_corrupt(fs, "free-inode cache holds inode %u; dropped", ino);
            continue;
        }
        /* Only try the ILOCK: the caller holds its directory's, and a
         * number that is not free after all (a stale hint) may be any
         * inode, whose holder may be waiting for that directory.  Locked
         * by someone else means in use, or being freed: skip it (a later
         * inode scan finds it again if it is free on disk). */
        struct s5_inode *ip;
        int err = s5_iget_try(fs, ino, &ip);
        if (err == -EDEADLK || err == -EBUSY) {
            __atomic_add_fetch(&s5_stats.ialloc_races, 1, __ATOMIC_RELAXED);
            continue;                       /* in use: surely not free */
        }
        if (err)
            return err;
        if (ip->i_mode != 0 || __atomic_load_n(&ip->i_vnode.v_count, __ATOMIC_ACQUIRE) != 1) {
            __atomic_add_fetch(&s5_stats.ialloc_races, 1, __ATOMIC_RELAXED);
            s5_iput(ip);
            continue;
        }
        init_new_inode(ip, mode);
        mutex_enter(&fs->fs_lock);
        if (sb->s_tinode > 0)
            sb->s_tinode--;
        fs->fs_fmod = true;
        mutex_exit(&fs->fs_lock);
        *ipp = ip;
        return 0;
    }
    kprintf("s5: ialloc: no usable free inode after many tries\n");
    return -ENOSPC;
}

void s5_ifree(struct s5_fs *fs, uint32_t ino)
{
    struct s5_super *sb = &fs->fs_sb;
    /* The SVR4 MP deadlock this code is shaped to avoid (see s5_ialloc). */
    assert(!mutex_owned(&fs->fs_lock));
    mutex_enter(&fs->fs_lock);
    if (sb->s_tinode < s5_ninodes(sb))
        sb->s_tinode++;
    if (sb->s_ninode < S5_NICINOD && !icache_has(sb, ino))
        sb->s_inode[sb->s_ninode++] = (uint16_t)ino;
    fs->fs_fmod = true;
    mutex_exit(&fs->fs_lock);
}

/*
 * Drop cache entries whose inode is allocated on disk (a refill raced an
 * allocation) or invalid, and duplicates.  Run before the superblock is
 * written, after the in-core inodes have been written to their blocks.
 */
void s5_icache_sanitize(struct s5_fs *fs)
{
    struct s5_super *sb = &fs->fs_sb;
    uint16_t *list = kmalloc(2 * S5_NICINOD * sizeof *list);
    if (!list)
        return;
    uint16_t *bad = list + S5_NICINOD;
    rlock_acquire(&fs->fs_ilist);
    mutex_enter(&fs->fs_lock);
    uint32_t n = sb->s_ninode, nbad = 0;
    memcpy(list, sb->s_inode, n * sizeof *list);
    mutex_exit(&fs->fs_lock);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t ino = list[i];
        if (!s5_ino_valid(sb, ino) || ino <= S5_ROOTINO) {
            bad[nbad++] = (uint16_t)ino;
            continue;
        }
        int err = 0;
        struct buf *bp = s5_bread(fs, s5_itod(ino), &err);
        if (!bp)
            continue;                       /* cannot tell; keep it */
        const struct s5_dinode *di =
            (const struct s5_dinode *)((char *)bp->b_data + s5_itooff(ino));
        if (di->di_mode != 0)
            bad[nbad++] = (uint16_t)ino;
        brelse(bp);
    }
    mutex_enter(&fs->fs_lock);
    /* Entries taken or added meanwhile are left alone: an entry goes only
     * if it was found bad above or is a duplicate. */
    uint32_t out = 0;
    for (uint32_t i = 0; i < sb->s_ninode; i++) {
        uint16_t ino = sb->s_inode[i];
        bool drop = false;
        for (uint32_t j = 0; j < nbad && !drop; j++)
            drop = bad[j] == ino;
        for (uint32_t j = 0; j < out && !drop; j++)
            drop = sb->s_inode[j] == ino;
        if (!drop)
            sb->s_inode[out++] = ino;
    }
    if (out != sb->s_ninode)
        fs->fs_fmod = true;
    sb->s_ninode = (uint16_t)out;
    mutex_exit(&fs->fs_lock);
    rlock_release(&fs->fs_ilist);
    kfree(list);
}
