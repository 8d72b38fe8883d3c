/*
 * The inode cache of the disk file systems (S5 and UFS each keep one):
 * iget, VOP_INACTIVE with the -1 protocol, the reaper, and the walks that
 * sync and unmount need.  The file system reads and writes its own inodes
 * (struct icache_ops); the cache decides when.
 *
 * Theory.  A cache is one table of in-core inodes shared by every mounted
 * file system of its type, with hash chains on (file system, inode number)
 * and one free list of inactive inodes (v_count == -1) in least-recently-
 * inactivated order, all under the one mutex c->lock, as in SVR4 MP ("a
 * single lock has been used for the entire collection of inode hash queues
 * and the inode free list").  An in-core inode keeps its identity after it
 * becomes inactive, so a later iget finds it again without reading the
 * disk; it is reused for another inode only when it reaches the head of the
 * free list.
 *
 * The -1 protocol (seed 001, "VN_HOLD/VN_RELE Locking", and
 * kern/vfs/vnode.h).  VN_RELE that reaches 0 calls icache_inactive, but 0
 * is not "inactive": a concurrent iget may find the inode and VN_HOLD it.
 * The file system's inactive work is done under ILOCK only while the count
 * is still 0; then, under the cache lock, the count goes to -1 and the
 * inode onto the free list only if it is STILL 0, and still under the same
 * ILOCK, so no second inactivation can slip in.  iget, under the cache
 * lock, turns a -1 back into 0 (taking the inode off the free list) before
 * its VN_HOLD.
 *
 * Pages.  The vnodes here are VKEEPPAGES: an inactive inode keeps its
 * clean cached pages with its identity (SVR4's rule), so a program whose
 * last reference was the DNLC's does not lose them when the DNLC lets
 * its name go.  They go when the in-core inode is reused: iget takes it
 * off the free list and forgets its identity under the cache lock, purges
 * its old pages with no lock held (nobody can reach it then; the purge
 * may take sleeping cluster locks), and only then, under the cache lock
 * again, gives it the new identity, unless another thread made that file
 * meanwhile, whose inode wins.  A deleted file's inode loses its identity
 * at once (below) and its pages with the reuse; an unmount drops the
 * pages of every inactive inode of its file system (icache_evict).
 *
 * iget.  Under the cache lock: find the inode (reviving it if -1) or take
 * the head of the free list and give it the new identity.  Then ILOCK,
 * which can sleep; so afterwards the identity is checked again, since a
 * failed read by another thread may have dropped it meanwhile (seed 001:
 * "recheck after the vnode is locked that the inode obtained still matches
 * the identity").  Whoever first holds ILOCK on a fresh inode reads it.
 * When no in-core inode is free, iget purges the DNLC one entry at a time
 * (the last reference to many inodes is the DNLC's); -ENFILE only when the
 * DNLC is empty too.
 *
 * The reaper.  VN_RELE can reach 0 while the releasing thread holds other
 * ILOCKs (a DNLC enter under a lookup's locks evicts an entry; an iget on a
 * full table purges the DNLC).  Waiting there for the ILOCK of an
 * arbitrary inode breaks the parent-before-child order, so a thread that
 * holds any kept lock only tries the ILOCK and otherwise queues the inode
 * to the cache's reaper thread, which waits for it holding nothing else.
 * (Whoever holds the ILOCK holds a reference or is itself inactivating, so
 * the inode cannot be reused before the reaper runs.)
 *
 * Lock order: ILOCKED -> the cache lock; the reap lock is a leaf taken
 * with no ILOCK held by the reaper and under anything by reap_queue.
 */
#include <kern/vfs/icache.h>
#include <kern/vfs/dnlc.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/buf.h>
#include <drivers/block/bio.h>
#include <kern/vm/kmem.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <kern/arch/panic.h>
#include <kern/sched/thread.h>
#include <kern/vm/pcache.h>

#define STAT_INC(c, f) __atomic_add_fetch(&(c)->stats->f, 1, __ATOMIC_RELAXED)

/* ---- the free list and hash chains [ic] ---- */

static void free_insert(struct icache *c, struct icnode *ip, bool at_head)
{
    ip->i_onfree = true;
    if (at_head) {
        ip->i_fprev = NULL;
        ip->i_fnext = c->free_head;
        if (c->free_head)
            c->free_head->i_fprev = ip;
        else
            c->free_tail = ip;
        c->free_head = ip;
    } else {
        ip->i_fnext = NULL;
        ip->i_fprev = c->free_tail;
        if (c->free_tail)
            c->free_tail->i_fnext = ip;
        else
            c->free_head = ip;
        c->free_tail = ip;
    }
}

static void free_remove(struct icache *c, struct icnode *ip)
{
    if (!ip->i_onfree)
        return;
    if (ip->i_fprev)
        ip->i_fprev->i_fnext = ip->i_fnext;
    else
        c->free_head = ip->i_fnext;
    if (ip->i_fnext)
        ip->i_fnext->i_fprev = ip->i_fprev;
    else
        c->free_tail = ip->i_fprev;
    ip->i_fnext = ip->i_fprev = NULL;
    ip->i_onfree = false;
}

static unsigned hash_of(const void *fs, uint32_t ino)
{
    return (unsigned)((ino + ((uintptr_t)fs >> 4) * 2654435761u) % IC_NHASH);
}

static void hash_insert(struct icache *c, struct icnode *ip)
{
    struct icnode **head = &c->hash[hash_of(ip->i_fs, ip->i_number)];
    ip->i_hprev = NULL;
    ip->i_hnext = *head;
    if (*head)
        (*head)->i_hprev = ip;
    *head = ip;
    ip->i_hashed = true;
}

static void hash_remove(struct icache *c, struct icnode *ip)
{
    if (!ip->i_hashed)
        return;
    if (ip->i_hprev)
        ip->i_hprev->i_hnext = ip->i_hnext;
    else
        c->hash[hash_of(ip->i_fs, ip->i_number)] = ip->i_hnext;
    if (ip->i_hnext)
        ip->i_hnext->i_hprev = ip->i_hprev;
    ip->i_hnext = ip->i_hprev = NULL;
    ip->i_hashed = false;
}

static struct icnode *hash_find(struct icache *c, void *fs, uint32_t ino)
{
    for (struct icnode *ip = c->hash[hash_of(fs, ino)]; ip; ip = ip->i_hnext)
        if (ip->i_fs == fs && ip->i_number == ino)
            return ip;
    return NULL;
}

/* Take ip off its hash chain and give it no identity [ic]. */
static void forget_identity(struct icache *c, struct icnode *ip)
{
    hash_remove(c, ip);
    ip->i_fs = NULL;
    ip->i_number = 0;
}

static void reap_init(struct icache *c);

/* ---- building the table ---- */

static void build_table(struct icache *c)
{
    mutex_init(&c->lock, c->cache_class, MUTEX_SLEEP, c->cache_class->name);
    c->table = kzalloc(sizeof *c->table * (size_t)c->ninode);
    if (!c->table)
        panic("%s: no memory for the inode table", c->name);
    for (int i = 0; i < c->ninode; i++) {
        struct icnode *ip = kzalloc(c->node_size);
        if (!ip)
            break;                  /* a smaller table still works */
        vn_init(&ip->i_vnode, c->vnops, VNON, NULL, ip);
        ip->i_vnode.v_flag = VKEEPPAGES;
        ip->i_vnode.v_count = -1;
        ip->i_cache = c;
        rlock_init(&ip->i_lock, c->ilock_class, c->ilock_class->name);
        rlock_init(&ip->i_rwlock, c->irwlock_class, c->irwlock_class->name);
        c->table[i] = ip;
        c->nbuilt = i + 1;
        free_insert(c, ip, false);
    }
}

void icache_init(struct icache *c)
{
    int expect = 0;
    if (__atomic_compare_exchange_n(&c->state, &expect, 1, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        build_table(c);
        reap_init(c);
        __atomic_store_n(&c->state, 2, __ATOMIC_RELEASE);
        return;
    }
    while (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != 2)
        thread_yield();
}

/* ---- iget ---- */

/* Revive ip from the free list if it is inactive, then count our
 * reference [ic]: the -1 protocol. */
static void activate_locked(struct icache *c, struct icnode *ip)
{
    if (__atomic_load_n(&ip->i_vnode.v_count, __ATOMIC_ACQUIRE) == -1) {
        free_remove(c, ip);
        __atomic_store_n(&ip->i_vnode.v_count, 0, __ATOMIC_RELEASE);
        STAT_INC(c, reactivations);
    }
    VN_HOLD(&ip->i_vnode);
}

/* Take the inode at the head of the free list for reuse [ic]: off the
 * list and its old identity forgotten, so nobody can find it, and held
 * (count 1, ours) until it gets a new identity or goes back
 * (put_back_locked).  Not 0: in the -1 protocol 0 means "being
 * inactivated", and an inactivation deferred to the reaper from an
 * earlier release may still come for this inode; seeing 0 it would put
 * the inode back on the free list while we use it.  NULL when the list
 * is empty. */
static struct icnode *take_free_locked(struct icache *c)
{
    struct icnode *ip = c->free_head;
    if (!ip)
        return NULL;
    free_remove(c, ip);
    forget_identity(c, ip);
    __atomic_store_n(&ip->i_vnode.v_count, 1, __ATOMIC_RELEASE);
    return ip;
}

/* The pages of the file ip was before (VKEEPPAGES kept them past its last
 * release): they go before ip is another file.  No lock held; nobody can
 * reach ip. */
static void drop_old_pages(struct icnode *ip)
{
    if (__atomic_load_n(&ip->i_vnode.v_npages, __ATOMIC_SEQ_CST)) {
        pcache_purge(&ip->i_vnode);
        STAT_INC(ip->i_cache, page_purges);
    }
}

/* Give ip, taken from the free list, the identity (fs, ino) with vfsp its
 * vnode's file system, and our reference [ic]. */
static void give_identity(struct icache *c, struct icnode *ip, void *fs, struct vfs *vfsp,
                          uint32_t ino)
{
    ip->i_fs = fs;
    ip->i_number = ino;
    ip->i_flag = 0;
    ip->i_vnode.v_vfsp = vfsp;
    ip->i_vnode.v_flag = VKEEPPAGES;
    ip->i_vnode.v_vfsmountedhere = NULL;
    __atomic_store_n(&ip->i_vnode.v_count, 1, __ATOMIC_RELEASE);
    hash_insert(c, ip);
}

/* Put back ip, taken from the free list but not used, at its head [ic]. */
static void put_back_locked(struct icache *c, struct icnode *ip)
{
    __atomic_store_n(&ip->i_vnode.v_count, -1, __ATOMIC_RELEASE);
    free_insert(c, ip, true);
}

/* Find (fs, ino) or give it a free in-core inode: referenced, not locked.
 * A reused inode's old pages are purged between the two holds of the
 * cache lock; if another thread made (fs, ino) meanwhile, theirs wins. */
static int cache_get(struct icache *c, void *fs, struct vfs *vfsp, uint32_t ino,
                     struct icnode **ipp)
{
    for (;;) {
        mutex_enter(&c->lock);
        struct icnode *ip = hash_find(c, fs, ino);
        if (ip) {
            activate_locked(c, ip);
            mutex_exit(&c->lock);
            STAT_INC(c, ihits);
            *ipp = ip;
            return 0;
        }
        ip = take_free_locked(c);
        mutex_exit(&c->lock);
        if (ip) {
            drop_old_pages(ip);
            mutex_enter(&c->lock);
            struct icnode *theirs = hash_find(c, fs, ino);
            if (theirs) {
                put_back_locked(c, ip);
                activate_locked(c, theirs);
                ip = theirs;
            } else {
                give_identity(c, ip, fs, vfsp, ino);
            }
            mutex_exit(&c->lock);
            *ipp = ip;
            return 0;
        }
        STAT_INC(c, purges);
        if (dnlc_purge1() == 0) {
            kprintf("%s: inode table full (%d in-core inodes all in use)\n", c->name,
                    c->nbuilt);
            return -ENFILE;
        }
    }
}

static bool ilock_try(struct icnode *ip)
{
    mutex_enter(&ip->i_vnode.v_lock);
    if (rlock_tryacquire(&ip->i_lock))
        return true;
    mutex_exit(&ip->i_vnode.v_lock);
    return false;
}

/* The file system's vfs: every fs structure starts with its struct vfs *
 * (fs_vfs), so the cache can set a fresh vnode's v_vfsp. */
static struct vfs *vfs_of(void *fs)
{
    return *(struct vfs **)fs;
}

int icache_iget(struct icache *c, void *fs, uint32_t ino, bool try, struct icnode **ipp)
{
    STAT_INC(c, igets);
    for (;;) {
        struct icnode *ip;
        int err = cache_get(c, fs, vfs_of(fs), ino, &ip);
        if (err)
            return err;
        if (rlock_held(&ip->i_lock)) {
            /* Waiting for our own ILOCKED would never end: only a
             * corrupted directory or a stale free-inode hint leads here. */
            VN_RELE(&ip->i_vnode);
            return -EDEADLK;
        }
        if (!try) {
            ic_ilock(ip);
        } else if (!ilock_try(ip)) {
            VN_RELE(&ip->i_vnode);
            return -EBUSY;
        }
        /* The sleep for the lock may have let the identity change (a
         * failed read dropped it): check it again (seed 001). */
        if (ip->i_fs != fs || ip->i_number != ino) {
            STAT_INC(c, iretries);
            icache_iput(ip);
            continue;
        }
        if (!(ip->i_flag & IVALID)) {
            STAT_INC(c, imisses);
            err = c->ops->read(ip);
            if (err) {
                mutex_enter(&c->lock);
                forget_identity(c, ip);
                mutex_exit(&c->lock);
                icache_iput(ip);
                return err;
            }
            ip->i_flag |= IVALID;
        }
        *ipp = ip;
        return 0;
    }
}

void icache_iput(struct icnode *ip)
{
    ic_iunlock(ip);
    VN_RELE(&ip->i_vnode);
}

/* ---- VOP_INACTIVE ---- */

/* With ILOCK: the work while the count is 0, then -1 under the cache
 * lock if it is still 0 (the protocol above). */
static void inactive_locked(struct icnode *ip)
{
    struct icache *c = ip->i_cache;
    struct vnode *vp = &ip->i_vnode;
    if (__atomic_load_n(&vp->v_count, __ATOMIC_ACQUIRE) == 0) {
        if (ip->i_fs && (ip->i_flag & IVALID))
            c->ops->inactive(ip);
        /* A freed or unnamed inode is the best one to reuse next. */
        bool useless = !ip->i_fs || !(ip->i_flag & IVALID) || c->ops->mode(ip) == 0;
        mutex_enter(&c->lock);
        if (__atomic_load_n(&vp->v_count, __ATOMIC_ACQUIRE) == 0) {
            __atomic_store_n(&vp->v_count, -1, __ATOMIC_RELEASE);
            if (useless)
                forget_identity(c, ip);
            free_insert(c, ip, useless);
        }
        mutex_exit(&c->lock);
    }
    ic_iunlock(ip);
}

static void reap_queue(struct icnode *ip)
{
    struct icache *c = ip->i_cache;
    mutex_enter(&c->reap_lock);
    if (!ip->i_reapq) {
        ip->i_reapq = true;
        ip->i_reapnext = c->reap_head;
        c->reap_head = ip;
        c->reap_busy++;
        wakeup(&c->reap_head);
    }
    mutex_exit(&c->reap_lock);
    STAT_INC(c, reaped);
}

static void reaper(void *arg)
{
    struct icache *c = arg;
    for (;;) {
        mutex_enter(&c->reap_lock);
        while (!c->reap_head)
            sleep_on(&c->reap_head);
        struct icnode *ip = c->reap_head;
        c->reap_head = ip->i_reapnext;
        ip->i_reapnext = NULL;
        ip->i_reapq = false;
        mutex_exit(&c->reap_lock);
        ic_ilock(ip);
        inactive_locked(ip);
        mutex_enter(&c->reap_lock);
        if (--c->reap_busy == 0)
            wakeup(&c->reap_busy);
        mutex_exit(&c->reap_lock);
    }
}

void icache_reap_drain(struct icache *c)
{
    mutex_enter(&c->reap_lock);
    while (c->reap_busy)
        sleep_on(&c->reap_busy);
    mutex_exit(&c->reap_lock);
}

static void reap_init(struct icache *c)
{
    char name[24];
    snprintf(name, sizeof name, "%s_reaper", c->name);
    mutex_init(&c->reap_lock, c->reap_class, MUTEX_SLEEP, c->reap_class->name);
    if (!thread_create(name, reaper, c, AFFINITY_ALL))
        panic("%s: no memory for the reaper thread", c->name);
}

void icache_inactive(struct vnode *vp, struct cred *cr)
{
    struct icnode *ip = vp->v_data;
    STAT_INC(ip->i_cache, inactives);
    if (!held_any_kept())
        ic_ilock(ip);
    else if (!ilock_try(ip)) {
        reap_queue(ip);
        return;
    }
    inactive_locked(ip);
}

/* ---- whole-cache walks (readdir's hint, sync, unmount, the tests) ---- */

uint32_t icache_mode_hint(struct icache *c, void *fs, uint32_t ino)
{
    mutex_enter(&c->lock);
    struct icnode *ip = hash_find(c, fs, ino);
    uint32_t mode = ip && (READ_ONCE(ip->i_flag) & IVALID) ? c->ops->mode(ip) : 0;
    mutex_exit(&c->lock);
    return mode;
}

bool icache_active(struct icache *c, void *fs, uint32_t ino)
{
    mutex_enter(&c->lock);
    struct icnode *ip = hash_find(c, fs, ino);
    bool active = ip && __atomic_load_n(&ip->i_vnode.v_count, __ATOMIC_ACQUIRE) >= 0;
    mutex_exit(&c->lock);
    return active;
}

int icache_busy(struct icache *c, void *fs, struct icnode *root)
{
    int busy = 0;
    mutex_enter(&c->lock);
    for (int i = 0; i < c->nbuilt; i++) {
        struct icnode *ip = c->table[i];
        if (ip->i_fs == fs && ip != root &&
            __atomic_load_n(&ip->i_vnode.v_count, __ATOMIC_ACQUIRE) >= 0)
            busy++;
    }
    mutex_exit(&c->lock);
    return busy ? -EBUSY : 0;
}

int icache_flush(struct icache *c, void *fs, int (*update)(struct icnode *ip))
{
    int first_err = 0;
    for (int i = 0; i < c->nbuilt; i++) {
        struct icnode *ip = c->table[i];
        mutex_enter(&c->lock);
        /* i_flag is read without ILOCK: only a hint, checked again below. */
        bool take = ip->i_fs == fs && (READ_ONCE(ip->i_flag) & IMOD) &&
                    __atomic_load_n(&ip->i_vnode.v_count, __ATOMIC_ACQUIRE) >= 0;
        if (take)
            VN_HOLD(&ip->i_vnode);
        mutex_exit(&c->lock);
        if (!take)
            continue;
        ic_ilock(ip);
        if (ip->i_fs == fs && (ip->i_flag & (IMOD | IVALID)) == (IMOD | IVALID)) {
            int err = update(ip);
            if (err && !first_err)
                first_err = err;
        }
        icache_iput(ip);
    }
    return first_err;
}

void icache_evict(struct icache *c, void *fs)
{
    for (int i = 0; i < c->nbuilt; i++) {
        struct icnode *ip = c->table[i];
        mutex_enter(&c->lock);
        bool take = ip->i_fs == fs && __atomic_load_n(&ip->i_vnode.v_count,
                                                      __ATOMIC_ACQUIRE) == -1;
        if (take) {
            /* Off the free list and held while its pages go, as a reuse
             * takes it (take_free_locked says why not 0). */
            free_remove(c, ip);
            forget_identity(c, ip);
            ip->i_flag = 0;
            __atomic_store_n(&ip->i_vnode.v_count, 1, __ATOMIC_RELEASE);
        }
        mutex_exit(&c->lock);
        if (!take)
            continue;
        drop_old_pages(ip);
        mutex_enter(&c->lock);
        put_back_locked(c, ip);
        mutex_exit(&c->lock);
    }
}

int icache_unmount(struct icache *c, void *fs, struct icnode *root, struct blkdev *dev,
                   int (*sync)(void *fs), bool *still_used)
{
    struct vnode *rootvp = &root->i_vnode;
    *still_used = false;
    /* Dirty pages hold their files active: write them back first. */
    icache_flush_pages(c, fs);
    dnlc_purge_vfsp(vfs_of(fs), 0);
    icache_reap_drain(c);
    /* A pageout daemon writing a file back holds it for a while. */
    while (icache_busy(c, fs, root) && pcache_pageout_holding())
        thread_yield();
    if (icache_busy(c, fs, root))
        return -EBUSY;
    /* The mount's own reference to the root goes; others may remain (the
     * VFS may hold the root directory of the root file system for ever). */
    VN_RELE(rootvp);
    int err = sync(fs);
    int e = binval(dev);
    err = err ? err : e;
    icache_evict(c, fs);
    blk_unclaim(dev);
    *still_used = __atomic_load_n(&rootvp->v_count, __ATOMIC_ACQUIRE) >= 0;
    return err;
}

/*
 * Every active regular file of fs with pages in the page cache is held
 * (under the cache's lock, so its identity cannot change) and flushed
 * with the lock dropped.  v_npages is only a hint here; pcache_flush
 * looks again.
 */
int icache_flush_pages(struct icache *c, void *fs)
{
    int first_err = 0;
    for (int i = 0; i < c->nbuilt; i++) {
        struct icnode *ip = c->table[i];
        struct vnode *vp = &ip->i_vnode;
        mutex_enter(&c->lock);
        bool take = ip->i_fs == fs && vp->v_type == VREG &&
                    __atomic_load_n(&vp->v_npages, __ATOMIC_ACQUIRE) &&
                    __atomic_load_n(&vp->v_count, __ATOMIC_ACQUIRE) >= 0;
        if (take)
            VN_HOLD(vp);
        mutex_exit(&c->lock);
        if (!take)
            continue;
        int err = pcache_flush(vp, 0, ~0UL);
        if (err && !first_err)
            first_err = err;
        VN_RELE(vp);
    }
    return first_err;
}

/*
 * For the tests: check the cache's invariants under its lock.  Every
 * inode with count -1 is on the free list exactly once and every inode on
 * the free list has count -1; every hashed inode is on the chain of its
 * identity.  Returns the number of violations.
 */
int icache_audit(struct icache *c, int *nfree)
{
    int bad = 0, onlist = 0, inactive = 0;
    mutex_enter(&c->lock);
    for (struct icnode *ip = c->free_head; ip && onlist <= c->nbuilt; ip = ip->i_fnext) {
        onlist++;
        if (__atomic_load_n(&ip->i_vnode.v_count, __ATOMIC_ACQUIRE) != -1 || !ip->i_onfree)
            bad++;
    }
    for (int i = 0; i < c->nbuilt; i++) {
        struct icnode *ip = c->table[i];
        int32_t count = __atomic_load_n(&ip->i_vnode.v_count, __ATOMIC_ACQUIRE);
        if (count == -1)
            inactive++;
        if ((count == -1) != ip->i_onfree)
            bad++;
        if (ip->i_hashed && hash_find(c, ip->i_fs, ip->i_number) != ip)
            bad++;
    }
    if (onlist != inactive)
        bad++;
    mutex_exit(&c->lock);
    if (nfree)
        *nfree = onlist;
    return bad;
}
