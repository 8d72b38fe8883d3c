/*
 * Segmap: the cache of kernel windows onto file pages (SVR4's segkmap,
 * seed 001 "Segmap Cache"), with the three locking models of seed 001
 * chosen at boot by cache=.
 *
 * Theory.  read(2) and write(2) of a file move its bytes through windows:
 * segmap_getmap(vp, idx) returns a window showing page idx of vp, the
 * caller copies to or from it, and segmap_release gives it back (SM_DIRTY
 * when it stored, which marks the page for write-back).  A window is one
 * page.  It is NOT locked for exclusive use: getmap adds a reference, so
 * several threads may copy through one window at once (seed 001: "Segmap
 * cache elements are not locked for exclusive use on return from the
 * lookup operation, but a reference count is incremented"); the page
 * cache, not segmap, keeps one copy of each page and orders fills.
 *
 * What a window is here.  Tempest maps all physical memory in the
 * kernel's direct map, so a page is always addressable: a window's kernel
 * address is its page's direct-map address, and opening a window is
 * taking a reference on the page (from pcache_get) rather than loading a
 * PTE.  This saves what a 32-bit SVR4 paid on every miss (a PTE change in
 * the segkmap segment and a TLB shootdown on every CPU), and keeps what
 * the cache is for: a lookup by (vnode, page) that, on a hit, goes
 * straight to the page with one row's lock and no page-cache lookup, and
 * whose locking is the one seed 001 measured (10-15% contention at two
 * CPUs for one lock, below 0.1% with SSAC).
 *
 * Structure.  Windows are found through hash rows (chains of windows
 * whose (vnode, page) hash to the row; cache_hash of kern/vfs/ssac.h) and
 * are reused from free lists in least-recently-used order.  A window is on
 * its free list exactly when no one holds it; a free window stays open
 * (hashed, its page held), so a later getmap of that page is a hit.  A
 * miss gets the page from the page cache first (pcache_get may read the
 * file and sleep; no segmap lock is held), then takes a free window of
 * its list -- a closed one (no page) if there is one, else the least
 * recently used open one, which it closes (drops its old page) -- and
 * opens it onto the new page.  Each list keeps its closed windows apart
 * from its open ones, so both choices, and the reclaim's (segmap_shrink:
 * the least recently used open one), take one step.  If the page was entered meanwhile by another
 * thread's miss, the miss becomes a hit and drops its page reference.
 * When every window of the list is held, the miss sleeps until a release
 * (nwant); callers hold one window at a time, so no one waits while
 * holding a window, and the 4-window rows of ssac cannot deadlock the way
 * seed 001's buffer cache did (operations holding several buffers).
 *
 * The models.  The logic above is written once; it asks for "the lock of
 * row r" (H), "the lock of free list l" (F) and "the lock of window sm"
 * (E) through pointers set at boot (kern/vm/segmap_init.c), and takes them
 * through a lockset (kern/vfs/ssac.h) that skips a lock already held in
 * another role, as the buffer cache and the DNLC do:
 *
 *   single   (Figure 3)  H = F = E = one spin lock, class segmap_single.
 *   hashfree (Figure 2)  H = a lock per row (segmap_hash), F = the one
 *                        free list's lock (segmap_free), E = a lock per
 *                        window (segmap_elem).  Every getmap and release
 *                        takes the free list lock: the Encore bottleneck.
 *   ssac     (Figure 4)  every row owns a free list of SM_SSAC_WAYS (4)
 *                        windows bound to it at boot, and the row's lock
 *                        (segmap_row) covers the chain, the free list and
 *                        the windows' fields: H = F = E = the row lock, one
 *                        lock per operation.  Windows never move between
 *                        rows, so a miss's victim is in its own row.
 *
 * Lock order: H -> F -> E, all in row 4 of docs/architecture.md, taken
 * with no other lock held and holding none while calling out (pcache_get,
 * page_rele).  A miss under hashfree needs its victim's old row as well:
 * it peeks at the free list's head without F, only TRIES the old row's
 * lock while holding its own (a try never waits: no deadlock, and two row
 * locks are never both waited for), then takes F and checks that the head
 * is still that window on that row; otherwise it drops everything and
 * starts over (counted as a retry).  Under single and ssac the old row's
 * lock is one already held.  Sleeping for a free window: the miss locks
 * the sleep queue, drops the segmap locks and sleeps (sleep_locked), so a
 * release, which changes the list under F and then wakes, is never lost.
 *
 * Lock key for the fields (kern/vm/segmap_impl.h): [H] the window's row
 * lock, [F] its free list's lock, [E] its element lock, [c] constant after
 * segmap_init, [a] atomic.  Identity (sm_vp, sm_idx, sm_row) changes under
 * H and E together, so a chain walk under H sees it stable; sm_refcnt
 * changes under F and E, so it is 0 exactly while the window is on its list.
 *
 * Truncation and the last release.  Windows hold pages, not vnodes (as the
 * page cache does).  segmap_purge closes the windows onto a file's pages
 * past a new end (called by the page cache's truncation before it drops
 * those pages) and all of them at the file's last release (pcache_purge),
 * so no window outlives the vnode's identity.  A window held during a
 * purge is unhashed at once (no new getmap finds it) and its page
 * dropped at its last release.  A miss that got its page just before a
 * truncation dropped it may still open a window onto it after the purge;
 * so getmap checks that the page it shows is still cached (PG_CACHED,
 * which the page cache clears when it drops a page) and otherwise closes
 * the window and starts again.
 *
 * For another file system.  Segmap and the page cache name pages by
 * (vnode, page number) and fill them through the vnode: any file system
 * whose vnodes have pages gets windows without code of its own.
 *
 * Files.  This file is the cache at work: lookup, miss, release, purge.
 * Boot (sizes, the models' locks) and the statistics are
 * kern/vm/segmap_init.c; the structures both see are kern/vm/segmap_impl.h.
 */
#include <kern/vm/segmap.h>
#include <kern/vm/segmap_impl.h>
#include <kern/vm/pcache.h>
#include <kern/vm/page.h>
#include <kern/lock/sleep.h>
#include <kern/sched/thread.h>
#include <kern/lib/options.h>

/* ---- locks by role ---- */

static inline spinlock_t *row_lock(unsigned row)
{
    return sm_cache.rows[row].lock;
}

static inline struct smlist *list_of(const struct smap *sm)
{
    return &sm_cache.lists[sm->sm_list];
}

/* ---- chains and free lists (the caller holds the covering lock) ---- */

static unsigned hash_row(const struct vnode *vp, uint64_t idx)
{
    return sm_hash_row(vp, idx);
}

static struct smap *chain_find(unsigned row, const struct vnode *vp, uint64_t idx)
{
    for (struct smap *sm = sm_cache.rows[row].head; sm; sm = sm->sm_hnext)
        if (sm->sm_vp == vp && sm->sm_idx == idx)
            return sm;
    return NULL;
}

static void chain_insert(unsigned row, struct smap *sm)
{
    struct smrow *r = &sm_cache.rows[row];
    sm->sm_hprev = NULL;
    sm->sm_hnext = r->head;
    if (r->head)
        r->head->sm_hprev = sm;
    r->head = sm;
    sm->sm_row = row;
}

static void chain_remove(struct smap *sm)
{
    struct smrow *r = &sm_cache.rows[sm->sm_row];
    if (sm->sm_hprev)
        sm->sm_hprev->sm_hnext = sm->sm_hnext;
    else
        r->head = sm->sm_hnext;
    if (sm->sm_hnext)
        sm->sm_hnext->sm_hprev = sm->sm_hprev;
    sm->sm_hnext = sm->sm_hprev = NULL;
    sm->sm_row = SM_NO_ROW;
}

/* The list a free window is on: closed windows (no page) on their own,
 * so that a miss reuses them first and the reclaim finds the least
 * recently used open one at once. */
static struct smap **list_head(struct smlist *l, const struct smap *sm)
{
    return sm->sm_row == SM_NO_ROW ? &l->chead : &l->head;
}

void sm_free_insert(struct smlist *l, struct smap *sm)
{
    if (sm->sm_row == SM_NO_ROW) {
        sm->sm_fprev = NULL;
        sm->sm_fnext = l->chead;
        if (l->chead)
            l->chead->sm_fprev = sm;
        l->chead = sm;
        return;
    }
    sm->sm_fnext = NULL;
    sm->sm_fprev = l->tail;
    if (l->tail)
        l->tail->sm_fnext = sm;
    else
        l->head = sm;
    l->tail = sm;
}

/* Off its free list; sm_row must still say which one (open or closed). */
static void free_remove(struct smlist *l, struct smap *sm)
{
    struct smap **head = list_head(l, sm);
    if (sm->sm_fprev)
        sm->sm_fprev->sm_fnext = sm->sm_fnext;
    else
        *head = sm->sm_fnext;
    if (sm->sm_fnext)
        sm->sm_fnext->sm_fprev = sm->sm_fprev;
    else if (head == &l->head)
        l->tail = sm->sm_fprev;
    sm->sm_fnext = sm->sm_fprev = NULL;
}

/* The window a miss on l reuses: a closed one, else the least recently
 * used open one.  Under F (or peeked at without it). */
static struct smap *victim_of(struct smlist *l)
{
    struct smap *c = __atomic_load_n(&l->chead, __ATOMIC_ACQUIRE);
    return c ? c : __atomic_load_n(&l->head, __ATOMIC_ACQUIRE);
}

/* ---- getmap ---- */

/* With H of sm's row held: take a reference on sm (off its free list if
 * it was free). */
static void take_ref(struct lockset *ls, struct smap *sm)
{
    struct smlist *l = list_of(sm);
    ls_lock(ls, l->lock);
    ls_lock(ls, sm->sm_lock);
    if (sm->sm_refcnt++ == 0)
        free_remove(l, sm);
}

/* With H(row) and F(l) held: every window of l is held; sleep until a
 * release.  Every lock of ls is dropped. */
static void wait_free(struct lockset *ls, struct smlist *l)
{
    l->nwant++;
    pcpu_count(sm_cache.stats, SMS_WAIT);
    struct sleepq *sq = sleepq_lock(&l->nwant);
    ls_unlock_all(ls);
    sleep_locked(sq, &l->nwant);
}

/* With H(row), F and E(victim) held, victim free and, if open, its old
 * row's H held too: reopen it onto (vp, idx, pg), held once.  Returns
 * the page it showed before (to drop after unlocking), or NULL. */
static struct page *reopen(struct smap *victim, unsigned row, struct vnode *vp, uint64_t idx,
                           struct page *pg)
{
    struct page *old = victim->sm_page;
    free_remove(list_of(victim), victim);
    if (victim->sm_row != SM_NO_ROW)
        chain_remove(victim);
    victim->sm_vp = vp;
    victim->sm_idx = idx;
    victim->sm_page = pg;
    victim->sm_refcnt = 1;
    chain_insert(row, victim);
    if (!old)
        __atomic_add_fetch(&sm_cache.open, 1, __ATOMIC_RELAXED);
    return old;
}

enum claim { CLAIMED, RETRY, WAITED };

/*
 * With H(row) held and no window of (vp, idx) on it: claim the least
 * recently used free window of row's list and reopen it onto pg.  RETRY
 * when the victim's old row was busy or the list changed (every lock of
 * ls dropped), WAITED after sleeping for an empty list (likewise).
 */
static enum claim claim_victim(struct lockset *ls, unsigned row, struct vnode *vp, uint64_t idx,
                               struct page *pg, struct smap **out, struct page **old)
{
    struct smlist *l = sm_list_for_row(row);
    /* Peek without F: the victim's old row must be locked before F. */
    struct smap *cand = victim_of(l);
    uint32_t cand_row = cand ? __atomic_load_n(&cand->sm_row, __ATOMIC_RELAXED) : SM_NO_ROW;
    if (cand_row != SM_NO_ROW && !ls_trylock(ls, row_lock(cand_row))) {
        ls_unlock_all(ls);
        return RETRY;
    }
    ls_lock(ls, l->lock);
    if (!victim_of(l)) {
        wait_free(ls, l);
        return WAITED;
    }
    if (victim_of(l) != cand || cand->sm_row != cand_row) {
        ls_unlock_all(ls);
        return RETRY;
    }
    ls_lock(ls, cand->sm_lock);
    *old = reopen(cand, row, vp, idx, pg);
    *out = cand;
    return CLAIMED;
}

/* The page is not in a window: get it from the page cache, then open a
 * window onto it (or find the one another miss opened meanwhile). */
static int miss(struct vnode *vp, uint64_t idx, unsigned row, int flags, struct smap **smp)
{
    struct page *pg;
    int pcflags = ((flags & SM_CREATE) ? PC_CREATE : 0) | ((flags & SM_LOCKED) ? PC_LOCKED : 0);
    int err = pcache_get_flags(vp, idx, pcflags, &pg);
    if (err)
        return err;
    for (;;) {
        struct lockset ls;
        ls_init(&ls);
        ls_lock(&ls, row_lock(row));
        struct smap *sm = chain_find(row, vp, idx);
        if (sm) {
            take_ref(&ls, sm);
            ls_unlock_all(&ls);
            page_rele(pg);
            pcpu_count(sm_cache.stats, SMS_HIT);
            *smp = sm;
            return 0;
        }
        struct page *old = NULL;
        enum claim c = claim_victim(&ls, row, vp, idx, pg, &sm, &old);
        if (c == CLAIMED) {
            ls_unlock_all(&ls);
            if (old)
                page_rele(old);
            pcpu_count(sm_cache.stats, SMS_MISS);
            *smp = sm;
            return 0;
        }
        if (c == RETRY) {
            pcpu_count(sm_cache.stats, SMS_RETRY);
            cpu_relax();
        }
    }
}

/* Look up or open the window onto (vp, idx), held. */
static int get_window(struct vnode *vp, uint64_t idx, int flags, struct smap **smp)
{
    unsigned row = hash_row(vp, idx);
    struct lockset ls;
    ls_init(&ls);
    ls_lock(&ls, row_lock(row));
    struct smap *sm = chain_find(row, vp, idx);
    if (!sm) {
        ls_unlock_all(&ls);
        return miss(vp, idx, row, flags, smp);
    }
    take_ref(&ls, sm);
    ls_unlock_all(&ls);
    pcpu_count(sm_cache.stats, SMS_HIT);
    *smp = sm;
    return 0;
}

/* Is the page sm shows still the cached page of its name?  The page cache
 * may have dropped it (a truncation racing the miss that opened sm). */
static bool window_current(const struct smap *sm)
{
    return __atomic_load_n(&sm->sm_page->flags, __ATOMIC_ACQUIRE) & PG_CACHED;
}

/* Close held window sm if it still has its name (it shows a page the
 * page cache dropped); its page goes at its last release. */
static void close_stale(struct smap *sm, struct vnode *vp, uint64_t idx)
{
    unsigned row = hash_row(vp, idx);
    struct lockset ls;
    ls_init(&ls);
    ls_lock(&ls, row_lock(row));
    ls_lock(&ls, list_of(sm)->lock);
    ls_lock(&ls, sm->sm_lock);
    if (sm->sm_row == row && sm->sm_vp == vp && sm->sm_idx == idx) {
        chain_remove(sm);
        sm->sm_vp = NULL;
        pcpu_count(sm_cache.stats, SMS_PURGED);
    }
    ls_unlock_all(&ls);
}

int segmap_getmapf(struct vnode *vp, uint64_t idx, int flags, struct smap **smp, char **addrp)
{
    *smp = NULL;
    struct smap *sm;
    for (;;) {
        int err = get_window(vp, idx, flags, &sm);
        if (err)
            return err;
        if (window_current(sm))
            break;
        close_stale(sm, vp, idx);
        segmap_release(sm, 0);
    }
    *smp = sm;
    *addrp = page_to_virt(sm->sm_page);
    return 0;
}

int segmap_getmap(struct vnode *vp, uint64_t idx, struct smap **smp, char **addrp)
{
    return segmap_getmapf(vp, idx, 0, smp, addrp);
}

/* ---- release ---- */

/* With F and E of sm held: wake the misses waiting for a free window. */
static void wake_free_waiters(struct smlist *l)
{
    if (!l->nwant)
        return;
    l->nwant = 0;
    wakeup(&l->nwant);
}

void segmap_release(struct smap *sm, int flags)
{
    if (flags & SM_DIRTY)
        pcache_mark_dirty(sm->sm_page);
    struct smlist *l = list_of(sm);
    struct lockset ls;
    ls_init(&ls);
    ls_lock(&ls, l->lock);
    ls_lock(&ls, sm->sm_lock);
    struct page *closed = NULL;
    if (--sm->sm_refcnt == 0) {
        bool open = sm->sm_row != SM_NO_ROW;
        if (!open && sm->sm_page) {
            closed = sm->sm_page;       /* purged while held */
            sm->sm_page = NULL;
            __atomic_sub_fetch(&sm_cache.open, 1, __ATOMIC_RELAXED);
        }
        sm_free_insert(l, sm);
        wake_free_waiters(l);
    }
    ls_unlock_all(&ls);
    if (closed)
        page_rele(closed);
}

struct page *segmap_page(struct smap *sm)
{
    return sm->sm_page;
}

/* ---- purge ---- */

/* With H(row) held: close the first window of row onto (vp, >= from).
 * Returns whether there was one; *pg gets the page to drop, if free. */
static bool close_one(struct lockset *ls, unsigned row, struct vnode *vp, uint64_t from,
                      struct page **pg)
{
    struct smap *sm = sm_cache.rows[row].head;
    while (sm && !(sm->sm_vp == vp && sm->sm_idx >= from))
        sm = sm->sm_hnext;
    if (!sm)
        return false;
    struct smlist *l = list_of(sm);
    ls_lock(ls, l->lock);
    ls_lock(ls, sm->sm_lock);
    bool is_free = sm->sm_refcnt == 0;
    if (is_free)
        free_remove(l, sm);             /* from the open list, before the row goes */
    chain_remove(sm);
    sm->sm_vp = NULL;
    if (is_free) {
        *pg = sm->sm_page;
        sm->sm_page = NULL;
        __atomic_sub_fetch(&sm_cache.open, 1, __ATOMIC_RELAXED);
        sm_free_insert(l, sm);          /* onto the closed list */
    }
    pcpu_count(sm_cache.stats, SMS_PURGED);
    return true;
}

static void purge_row(unsigned row, struct vnode *vp, uint64_t from)
{
    bool again = true;
    while (again) {
        struct page *pg = NULL;
        struct lockset ls;
        ls_init(&ls);
        ls_lock(&ls, row_lock(row));
        again = close_one(&ls, row, vp, from, &pg);
        ls_unlock_all(&ls);
        if (pg)
            page_rele(pg);
    }
}

void segmap_purge(struct vnode *vp, uint64_t from)
{
    if (!sm_cache.nrows || !__atomic_load_n(&sm_cache.open, __ATOMIC_RELAXED))
        return;
    /* A peek at each chain without its lock: a window can only appear on
     * a row through a getmap of vp, which the caller's state excludes
     * (the file's last release, or a truncation holding its fill lock). */
    for (unsigned row = 0; row < sm_cache.nrows; row++)
        if (__atomic_load_n(&sm_cache.rows[row].head, __ATOMIC_RELAXED))
            purge_row(row, vp, from);
}

/* ---- giving pages back ---- */

/*
 * Close the least recently used open free window of list l, if any: its
 * page reference goes (to *pg), so the page cache's reclaim can free the
 * page.  Its row lock must come before F: peek, try, check under the
 * locks, as a miss does.
 */
static bool close_free(struct smlist *l, struct page **pg)
{
    struct smap *cand = __atomic_load_n(&l->head, __ATOMIC_ACQUIRE);
    if (!cand)
        return false;
    uint32_t row = __atomic_load_n(&cand->sm_row, __ATOMIC_RELAXED);
    struct lockset ls;
    ls_init(&ls);
    if (row == SM_NO_ROW || !ls_trylock(&ls, row_lock(row)))
        return false;
    ls_lock(&ls, l->lock);
    ls_lock(&ls, cand->sm_lock);
    bool closed = false;
    if (l->head == cand && cand->sm_row == row && cand->sm_refcnt == 0) {
        free_remove(l, cand);
        chain_remove(cand);
        cand->sm_vp = NULL;
        *pg = cand->sm_page;
        cand->sm_page = NULL;
        __atomic_sub_fetch(&sm_cache.open, 1, __ATOMIC_RELAXED);
        sm_free_insert(l, cand);
        closed = true;
    }
    ls_unlock_all(&ls);
    return closed;
}

static unsigned shrink_hand;    /* [a] the next list segmap_shrink looks at */

uint64_t segmap_shrink(uint64_t want)
{
    uint64_t closed = 0;
    unsigned tries = sm_cache.nlists + 2 * (unsigned)want;
    for (unsigned i = 0; i < tries && closed < want; i++) {
        unsigned k = __atomic_fetch_add(&shrink_hand, 1, __ATOMIC_RELAXED) % sm_cache.nlists;
        struct page *pg = NULL;
        if (close_free(&sm_cache.lists[k], &pg)) {
            page_rele(pg);
            closed++;
        }
    }
    return closed;
}
