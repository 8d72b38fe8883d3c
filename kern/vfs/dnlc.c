/*
 * The directory name lookup cache: (directory vnode, name, credential) ->
 * vnode, with the three locking models of seed 001 chosen by cache=.
 *
 * Theory.  Pathname lookup asks the DNLC before searching a directory
 * (dnlc_lookup) and tells it what it found afterwards (dnlc_enter): lookup
 * and enter are separate operations, and lookup remembers nothing between
 * them.  An entry holds a reference on both vnodes (VN_HOLD) and on the
 * credential, so none of them can be freed or reused under it; removing
 * an entry drops them.  Removal is by name (dnlc_remove), by vnode
 * (dnlc_purge_vp), by file system (dnlc_purge_vfsp, up to a count), any
 * one entry (dnlc_purge1, when the inode cache needs an inode that only
 * the DNLC still holds) and all of them (dnlc_purge).
 *
 * Entries live in R hash rows.  The credential pointer is part of the hash
 * AND of the match (seed 001: the same name looked up by many users must
 * not pile onto one row): the row is the hash of (directory, name) plus a
 * small offset hashed from the credential, one of DNLC_CRED_SPREAD
 * neighbouring rows.  So a name can only be in those few rows, which is all
 * dnlc_remove (any credential) has to search.  The hash is multiplicative
 * (kern/vfs/ssac.h): directory vnodes are aligned objects, and a mask of
 * low bits would waste rows.
 *
 * The models differ in how a row finds its entries and its victim, and in
 * their locks; everything else (hashing, matching, references, purging,
 * statistics) is written once, on top of a small table of row operations
 * (struct row_ops):
 *
 *   ssac (Figure 4, seed 001's DNLC): a 2-D array, R rows x DNLC_WAYS
 *       ways, a vector of spin locks, one per row (class dnlc_row), and no
 *       hash or free-list pointers at all.  Each entry has an access
 *       timestamp from its row's clock; 1 marks an empty entry and 0 a busy
 *       one (being filled).  Enter replaces the entry with the lowest
 *       non-zero timestamp in the row (an empty one first), so each row is
 *       LRU on its own and an operation takes exactly one lock.  Enter
 *       claims the victim under the row lock, marking it busy, fills it
 *       after dropping the lock, and publishes it by storing its timestamp
 *       (release order); every other path skips busy entries and never
 *       writes them, so the filler owns a busy entry alone.
 *   single (Figure 3): R hash chains and one LRU list (least recently used
 *       first, empty entries at its head), all under one spin lock
 *       (dnlc_single).
 *   hashfree (Figure 2, Encore's DNLC): the same chains and list, a spin
 *       lock per chain (dnlc_hash) and one for the LRU list (dnlc_free).
 *       A lookup hit takes 2 locks (its chain, then the list to move the
 *       entry to the tail); an enter between 1 and 4 (its chain, the
 *       victim's old chain, the list to claim and to append).
 *
 * Timestamps in the chain models only order the entries of one chain, for
 * dnlc_purge1; their LRU order is the list.  dnlc_purge1 is the same for
 * all models, as seed 001 suggests for a cache without one free list: take
 * the least recently used entry of the next row, cycling through the rows.
 *
 * Lock order: a row (chain) lock, then the LRU list lock.  An enter under
 * hashfree needs the victim's old chain while holding its own: it only
 * TRIES that lock (a try never waits, so no deadlock), having peeked at the
 * list head without the list lock, then takes the list lock and checks the
 * head is still that entry on that chain; after a few failed tries it gives
 * up (a cache may always decline to cache).  Two row locks are never both
 * waited for, so witness sees no cycle.
 *
 * References are never dropped under a spin lock: VN_RELE may call
 * VOP_INACTIVE, which sleeps (and may even call back into the DNLC).
 * Operations move the vnodes and credentials of the entries they remove
 * into a struct release list under the lock and drop them after unlocking.
 *
 * Purges that scan the whole cache (by vnode, by file system, all, any
 * one) first peek at each row without its lock and lock only the rows that
 * may hold a candidate: an entry can only appear in a row through an enter,
 * so a peek misses only entries entered concurrently with the purge.
 *
 * Negative entries (vp is DNLC_NO_VNODE, as in Solaris's DNLC): a search
 * that found nothing enters "no such name" and later lookups answer
 * ENOENT without searching, so a command looked for along $PATH, or a
 * header along the include path, stops taking the directory's locks and
 * scanning it each time (GAEDE at 2 CPUs waited 1.4 s of 51 on the vnode
 * locks of such directories, at namei's search).  Such an entry holds
 * dvp and its credential but no vnode; the file system removes it before
 * it adds the name (ufs_direnter, s5_direnter), under the directory's
 * inode lock, which its search holds while entering it.
 *
 * Races the caller must prevent, as in SVR4: an enter racing a purge of the
 * same vnode may leave an entry behind (a busy entry, or one entered after
 * the purge peeked at its row, is not removed); two enters of one name may
 * both succeed (a harmless duplicate, removed with it).  File systems
 * hold the directory's vnode lock across lookup, enter and remove of its
 * names.
 *
 * Under cluster= (kern/cluster/), every call goes to the clustered cache
 * of kern/cluster/cl_dnlc.c instead, one test of a boot flag at the top
 * of each function; this cache is then built but unused.
 *
 * Lock key: [R] the row's lock (ssac: the row lock; chains: the chain lock,
 * which is the single lock under single), [L] the LRU list's lock, [c]
 * constant after dnlc_init, [a] atomic.
 */
#include <kern/vfs/dnlc.h>
#include <kern/cluster/cluster.h>
#include <kern/cluster/cl_dnlc.h>
#include <kern/vfs/ssac.h>
#include <kern/vfs/vnode.h>
#include <kern/vfs/cred.h>
#include <kern/vm/kmem.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/arch/panic.h>

LOCK_CLASS(dnlc_single_class, "dnlc_single", LK_SPIN);
LOCK_CLASS(dnlc_hash_class, "dnlc_hash", LK_SPIN);
LOCK_CLASS(dnlc_free_class, "dnlc_free", LK_SPIN);
LOCK_CLASS(dnlc_row_class, "dnlc_row", LK_SPIN);

#define DNLC_ROW_BITS 8         /* 256 rows */
#define DNLC_WAYS 4             /* ssac ways per row; also the average chain length */
#define DNLC_CRED_SPREAD 8      /* rows one (directory, name) may occupy across credentials */
#define CLAIM_TRIES 4           /* hashfree: attempts at a victim before declining */

struct vnode dnlc_no_vnode;     /* [c] negative entries' vp: its address only */

/* A negative entry's vnode takes no reference. */
static bool negative(const struct vnode *vp)
{
    return vp == DNLC_NO_VNODE;
}

#define NC_BUSY 0               /* stamp: being filled (ssac) */
#define NC_EMPTY 1              /* stamp: holds nothing */
#define NC_FIRST 2              /* first stamp of a valid entry */
#define NO_ROW (-1)

struct ncache {
    uint64_t stamp;             /* [R]; [a] while busy: written by its filler */
    struct vnode *dvp, *vp;     /* [R] held */
    struct cred *cred;          /* [R] held */
    uint32_t nhash;             /* [R] hash of the name */
    uint8_t namlen;             /* [R] */
    char name[DNLC_NAMELEN + 1];/* [R] */
};

/* Chain models: an entry's links (a separate array; ssac has none). */
struct nclink {
    struct ncache *hnext, *hprev;   /* [R] the chain of row `row` */
    struct ncache *lnext, *lprev;   /* [L] the LRU list */
    int32_t row;                    /* [R] and [L] to change; NO_ROW when on no chain */
};

struct ncrow {
    spinlock_t *lock;           /* [c] the row's lock: own, or the single lock */
    uint64_t clock;             /* [R] the row's timestamps */
    struct ncache *head;        /* [R] chain models: the chain */
    spinlock_t own;             /* ssac and hashfree: this row's lock */
} __cacheline;

/* What one lookup, enter or removal is about. */
struct nckey {
    struct vnode *dvp;
    struct cred *cred;
    const char *name;
    uint32_t namlen, nhash;
    unsigned row;
};

/* References taken out of entries under a lock, dropped after it. */
#define RELE_MAX 16
struct release {
    int n;
    struct vnode *vn[2 * RELE_MAX];
    struct cred *cr[RELE_MAX];
};

/* How a row finds its entries and its victim (one per structure). */
struct row_ops {
    /* Under [R]: the first / next valid entry of row r (busy and empty
     * entries are skipped); next is computed before e may be dropped. */
    struct ncache *(*first)(unsigned r);
    struct ncache *(*next)(unsigned r, struct ncache *e);
    /* Under [R]: e was used now. */
    void (*touch)(unsigned r, struct ncache *e, struct lockset *ls);
    /* Under [R]: an entry to fill for row r, detached and busy, its old
     * contents moved to rel; NULL if none can be had now.  *stamp gets the
     * timestamp to publish it with. */
    struct ncache *(*claim)(unsigned r, struct lockset *ls, struct release *rel, uint64_t *stamp);
    /* After filling a claimed entry (under [R] unless fill_unlocked). */
    void (*publish)(unsigned r, struct ncache *e, struct lockset *ls, uint64_t stamp);
    /* Under [R]: remove valid e from the cache, its contents to rel. */
    void (*drop)(unsigned r, struct ncache *e, struct lockset *ls, struct release *rel);
    /* WITHOUT the lock: might row r hold a valid entry naming vp (any
     * valid entry when vp is NULL)?  A hint read racily: false only when
     * no such entry was there before the peek, bar concurrent enters. */
    bool (*peek)(unsigned r, const struct vnode *vp);
    /* Whether enter fills a claimed entry after dropping the row lock. */
    bool fill_unlocked;
};

enum { ST_LOOKUPS, ST_HITS, ST_MISSES, ST_ENTERS, ST_PURGES };

static struct {
    int model;                  /* [c] */
    const struct row_ops *ops;  /* [c] */
    unsigned nrows, rowbits;    /* [c] */
    unsigned nentries;          /* [c] */
    struct ncrow *rows;         /* [c] */
    struct ncache *ents;        /* [c] ssac: row r is ents[r * WAYS ...] */
    struct nclink *links;       /* [c] chain models */
    spinlock_t single;          /* single: the one lock */
    spinlock_t lru_own;         /* hashfree: the LRU list's lock */
    spinlock_t *lru_lock;       /* [c] the LRU list's lock (single: &single) */
    struct ncache *lru_head, *lru_tail; /* [L] */
    unsigned purge_cursor;      /* [a] dnlc_purge1's next row */
    struct pcpu_counters stats[MAX_CPUS];
} nc;

/* ---- keys and matching ---- */

/* First of the DNLC_CRED_SPREAD rows where (dvp, name) can be. */
static unsigned base_row(struct vnode *dvp, uint32_t nhash)
{
    return cache_hash(cache_ptr_tag(dvp) ^ ((uint64_t)nhash << 29), nc.rowbits);
}

static unsigned cred_offset(struct cred *cr)
{
    return cache_hash(cache_ptr_tag(cr), 16) % DNLC_CRED_SPREAD;
}

/* Fill k; false when the name is too long to cache. */
static bool make_key(struct nckey *k, struct vnode *dvp, const char *name, struct cred *cr)
{
    size_t len = strlen(name);
    if (len == 0 || len > DNLC_NAMELEN)
        return false;
    k->dvp = dvp;
    k->cred = cr;
    k->name = name;
    k->namlen = (uint32_t)len;
    k->nhash = cache_name_hash(name, k->namlen);
    k->row = (base_row(dvp, k->nhash) + cred_offset(cr)) & (nc.nrows - 1);
    return true;
}

static bool name_matches(const struct ncache *e, const struct nckey *k)
{
    return e->dvp == k->dvp && e->nhash == k->nhash && e->namlen == k->namlen &&
           memcmp(e->name, k->name, k->namlen) == 0;
}

static bool matches(const struct ncache *e, const struct nckey *k)
{
    return e->cred == k->cred && name_matches(e, k);
}

static void fill(struct ncache *e, const struct nckey *k, struct vnode *vp)
{
    e->dvp = k->dvp;
    e->vp = vp;
    e->cred = k->cred;
    e->nhash = k->nhash;
    e->namlen = (uint8_t)k->namlen;
    memcpy(e->name, k->name, k->namlen);
    e->name[k->namlen] = '\0';
}

/* ---- release lists ---- */

static bool rel_full(const struct release *rel)
{
    return rel->n >= RELE_MAX;
}

/* Move e's references into rel and empty it. */
static void rel_take(struct release *rel, struct ncache *e)
{
    rel->vn[2 * rel->n] = e->dvp;
    rel->vn[2 * rel->n + 1] = e->vp;
    rel->cr[rel->n] = e->cred;
    rel->n++;
    e->dvp = e->vp = NULL;
    e->cred = NULL;
}

/* The references of an entry that was never made. */
static void rel_add(struct release *rel, struct vnode *dvp, struct vnode *vp, struct cred *cr)
{
    rel->vn[2 * rel->n] = dvp;
    rel->vn[2 * rel->n + 1] = vp;
    rel->cr[rel->n] = cr;
    rel->n++;
}

/* Drop the references; no spin lock may be held. */
static void rel_drop(struct release *rel)
{
    for (int i = 0; i < 2 * rel->n; i++)
        if (rel->vn[i] && !negative(rel->vn[i]))
            VN_RELE(rel->vn[i]);
    for (int i = 0; i < rel->n; i++)
        if (rel->cr[i])
            cred_rele(rel->cr[i]);
    rel->n = 0;
}

/* ---- ssac rows: ways of a 2-D array, LRU by timestamps ---- */

static inline struct ncache *way0(unsigned r)
{
    return &nc.ents[(size_t)r * DNLC_WAYS];
}

static inline uint64_t stamp_of(const struct ncache *e)
{
    return __atomic_load_n(&e->stamp, __ATOMIC_ACQUIRE);
}

static struct ncache *ssac_scan(unsigned r, struct ncache *from)
{
    for (struct ncache *e = from; e < way0(r) + DNLC_WAYS; e++)
        if (stamp_of(e) >= NC_FIRST)
            return e;
    return NULL;
}

static struct ncache *ssac_first(unsigned r)
{
    return ssac_scan(r, way0(r));
}

static struct ncache *ssac_next(unsigned r, struct ncache *e)
{
    return ssac_scan(r, e + 1);
}

static void ssac_touch(unsigned r, struct ncache *e, struct lockset *ls)
{
    e->stamp = ++nc.rows[r].clock;
}

/* The way with the lowest non-zero timestamp (an empty one first). */
static struct ncache *ssac_claim(unsigned r, struct lockset *ls, struct release *rel,
                                 uint64_t *stamp)
{
    struct ncache *victim = NULL;
    for (struct ncache *e = way0(r); e < way0(r) + DNLC_WAYS; e++) {
        uint64_t s = stamp_of(e);
        if (s != NC_BUSY && (!victim || s < victim->stamp))
            victim = e;
    }
    if (!victim)
        return NULL;
    if (victim->stamp >= NC_FIRST)
        rel_take(rel, victim);
    __atomic_store_n(&victim->stamp, NC_BUSY, __ATOMIC_RELAXED);
    *stamp = ++nc.rows[r].clock;
    return victim;
}

/* Lock-free: the filler alone writes a busy entry. */
static void ssac_publish(unsigned r, struct ncache *e, struct lockset *ls, uint64_t stamp)
{
    __atomic_store_n(&e->stamp, stamp, __ATOMIC_RELEASE);
}

static void ssac_drop(unsigned r, struct ncache *e, struct lockset *ls, struct release *rel)
{
    rel_take(rel, e);
    e->stamp = NC_EMPTY;
}

/* Pointers are compared, never followed: unlocked, they may be stale. */
static bool ssac_peek(unsigned r, const struct vnode *vp)
{
    for (struct ncache *e = way0(r); e < way0(r) + DNLC_WAYS; e++) {
        if (stamp_of(e) < NC_FIRST)
            continue;
        if (!vp || READ_ONCE(e->vp) == vp || READ_ONCE(e->dvp) == vp)
            return true;
    }
    return false;
}

static const struct row_ops ssac_ops = {
    .first = ssac_first, .next = ssac_next, .touch = ssac_touch, .claim = ssac_claim,
    .publish = ssac_publish, .drop = ssac_drop, .peek = ssac_peek, .fill_unlocked = true,
};

/* ---- chain models: hash chains and one LRU list ---- */

static inline struct nclink *L(const struct ncache *e)
{
    return &nc.links[e - nc.ents];
}

static void chain_insert(unsigned r, struct ncache *e)
{
    struct nclink *l = L(e);
    l->hprev = NULL;
    l->hnext = nc.rows[r].head;
    if (l->hnext)
        L(l->hnext)->hprev = e;
    nc.rows[r].head = e;
    l->row = (int32_t)r;
}

static void chain_unlink(struct ncache *e)
{
    struct nclink *l = L(e);
    struct ncrow *row = &nc.rows[l->row];
    if (l->hprev)
        L(l->hprev)->hnext = l->hnext;
    else
        row->head = l->hnext;
    if (l->hnext)
        L(l->hnext)->hprev = l->hprev;
    l->hnext = l->hprev = NULL;
    l->row = NO_ROW;
}

static void lru_unlink(struct ncache *e)
{
    struct nclink *l = L(e);
    if (l->lprev)
        L(l->lprev)->lnext = l->lnext;
    else
        nc.lru_head = l->lnext;
    if (l->lnext)
        L(l->lnext)->lprev = l->lprev;
    else
        nc.lru_tail = l->lprev;
    l->lnext = l->lprev = NULL;
}

static void lru_insert(struct ncache *e, bool at_head)
{
    struct nclink *l = L(e);
    if (at_head) {
        l->lprev = NULL;
        l->lnext = nc.lru_head;
        if (nc.lru_head)
            L(nc.lru_head)->lprev = e;
        else
            nc.lru_tail = e;
        nc.lru_head = e;
    } else {
        l->lnext = NULL;
        l->lprev = nc.lru_tail;
        if (nc.lru_tail)
            L(nc.lru_tail)->lnext = e;
        else
            nc.lru_head = e;
        nc.lru_tail = e;
    }
}

static struct ncache *chain_first(unsigned r)
{
    return nc.rows[r].head;
}

static struct ncache *chain_next(unsigned r, struct ncache *e)
{
    return L(e)->hnext;
}

static void chain_touch(unsigned r, struct ncache *e, struct lockset *ls)
{
    e->stamp = ++nc.rows[r].clock;
    ls_lock(ls, nc.lru_lock);
    lru_unlink(e);
    lru_insert(e, false);
    ls_release_except(ls, nc.rows[r].lock);
}

/* The head of the LRU list, taken off its chain (see the theory for why
 * the old chain's lock is only tried). */
static struct ncache *chain_claim(unsigned r, struct lockset *ls, struct release *rel,
                                  uint64_t *stamp)
{
    spinlock_t *mine = nc.rows[r].lock;
    for (int tries = 0; tries < CLAIM_TRIES; tries++) {
        struct ncache *e = READ_ONCE(nc.lru_head);
        if (!e)
            return NULL;
        int32_t old = READ_ONCE(L(e)->row);
        if (old != NO_ROW && !ls_trylock(ls, nc.rows[old].lock))
            continue;
        ls_lock(ls, nc.lru_lock);
        bool ok = nc.lru_head == e && L(e)->row == old;
        if (ok) {
            lru_unlink(e);
            if (old != NO_ROW) {
                chain_unlink(e);
                rel_take(rel, e);
            }
            e->stamp = NC_BUSY;
        }
        ls_release_except(ls, mine);
        if (ok)
            return e;
    }
    return NULL;
}

static void chain_publish(unsigned r, struct ncache *e, struct lockset *ls, uint64_t stamp)
{
    chain_insert(r, e);
    e->stamp = ++nc.rows[r].clock;
    ls_lock(ls, nc.lru_lock);
    lru_insert(e, false);
    ls_release_except(ls, nc.rows[r].lock);
}

static void chain_drop(unsigned r, struct ncache *e, struct lockset *ls, struct release *rel)
{
    chain_unlink(e);
    rel_take(rel, e);
    e->stamp = NC_EMPTY;
    ls_lock(ls, nc.lru_lock);
    lru_unlink(e);
    lru_insert(e, true);
    ls_release_except(ls, nc.rows[r].lock);
}

/* A chain is only walked under its lock; unlocked, say whether it is
 * empty. */
static bool chain_peek(unsigned r, const struct vnode *vp)
{
    return READ_ONCE(nc.rows[r].head) != NULL;
}

static const struct row_ops chain_ops = {
    .first = chain_first, .next = chain_next, .touch = chain_touch, .claim = chain_claim,
    .publish = chain_publish, .drop = chain_drop, .peek = chain_peek, .fill_unlocked = false,
};

/* ---- the operations, written once ---- */

static void lock_row(struct lockset *ls, unsigned r)
{
    ls_init(ls);
    ls_lock(ls, nc.rows[r].lock);
}

static struct ncache *find(unsigned r, const struct nckey *k)
{
    for (struct ncache *e = nc.ops->first(r); e; e = nc.ops->next(r, e))
        if (matches(e, k))
            return e;
    return NULL;
}

struct vnode *dnlc_lookup(struct vnode *dvp, const char *name, struct cred *cr)
{
    if (cluster_on())
        return cl_dnlc_lookup(dvp, name, cr);
    struct nckey k;
    if (!make_key(&k, dvp, name, cr))
        return NULL;
    pcpu_count(nc.stats, ST_LOOKUPS);
    struct lockset ls;
    lock_row(&ls, k.row);
    struct ncache *e = find(k.row, &k);
    struct vnode *vp = NULL;
    if (e) {
        vp = e->vp;
        if (!negative(vp))
            VN_HOLD(vp);        /* under the lock: the entry's hold keeps vp alive */
        nc.ops->touch(k.row, e, &ls);
    }
    ls_unlock_all(&ls);
    pcpu_count(nc.stats, vp ? ST_HITS : ST_MISSES);
    return vp;
}

void dnlc_enter(struct vnode *dvp, const char *name, struct vnode *vp, struct cred *cr)
{
    if (cluster_on()) {
        if (!negative(vp))
            cl_dnlc_enter(dvp, name, vp, cr);
        return;
    }
    struct nckey k;
    if (!vp || !make_key(&k, dvp, name, cr))
        return;
    pcpu_count(nc.stats, ST_ENTERS);
    /* The new entry's references, taken before locking (atomic). */
    VN_HOLD(dvp);
    if (!negative(vp))
        VN_HOLD(vp);
    cred_hold(cr);
    struct release rel = { 0 };
    struct lockset ls;
    lock_row(&ls, k.row);
    struct ncache *e = find(k.row, &k);
    if (e) {
        /* Already cached: point it at vp, keep one set of references. */
        struct vnode *old = e->vp;
        e->vp = vp;
        nc.ops->touch(k.row, e, &ls);
        rel_add(&rel, dvp, old, cr);
    } else {
        uint64_t stamp = 0;
        e = nc.ops->claim(k.row, &ls, &rel, &stamp);
        if (!e) {
            rel_add(&rel, dvp, vp, cr);
        } else {
            if (nc.ops->fill_unlocked)
                ls_unlock_all(&ls);
            fill(e, &k, vp);
            nc.ops->publish(k.row, e, &ls, stamp);
        }
    }
    ls_unlock_all(&ls);
    rel_drop(&rel);
}

typedef bool (*nc_pred)(const struct ncache *e, const void *arg);

static bool pred_vnode(const struct ncache *e, const void *vp)
{
    return e->vp == vp || e->dvp == vp;
}

/*
 * Remove the entries of row r that pred accepts, at most *budget of them
 * (NULL: no limit).  Returns how many; drops their references unlocked.
 * A row that an unlocked peek shows to hold no candidate is not locked,
 * so a purge of a few entries does not take every row lock in turn: hint
 * is a vnode every candidate names (as vp or dvp), NULL when there is none.
 */
static int purge_row(unsigned r, nc_pred pred, const void *arg, const struct vnode *hint,
                     int *budget)
{
    if (!nc.ops->peek(r, hint))
        return 0;
    int removed = 0;
    bool more = true;
    while (more && (!budget || *budget > 0)) {
        struct release rel = { 0 };
        struct lockset ls;
        more = false;
        lock_row(&ls, r);
        struct ncache *next;
        for (struct ncache *e = nc.ops->first(r); e; e = next) {
            next = nc.ops->next(r, e);
            if (!pred(e, arg))
                continue;
            if (rel_full(&rel) || (budget && *budget == 0)) {
                more = true;
                break;
            }
            nc.ops->drop(r, e, &ls, &rel);
            removed++;
            if (budget)
                (*budget)--;
        }
        ls_unlock_all(&ls);
        rel_drop(&rel);
    }
    if (removed)
        pcpu_add(nc.stats, ST_PURGES, (uint64_t)removed);
    return removed;
}

static bool is_dot_name(const struct ncache *e)
{
    return e->name[0] == '.' && (e->namlen == 1 || (e->namlen == 2 && e->name[1] == '.'));
}

int dnlc_reverse(struct vnode *vp, struct vnode **dvpp, char *name, size_t size)
{
    if (cluster_on())
        return cl_dnlc_reverse(vp, dvpp, name, size);
    for (unsigned r = 0; r < nc.nrows; r++) {
        if (!nc.ops->peek(r, vp))
            continue;
        struct lockset ls;
        lock_row(&ls, r);
        struct ncache *found = NULL;
        for (struct ncache *e = nc.ops->first(r); e && !found; e = nc.ops->next(r, e))
            if (e->vp == vp && e->dvp != vp && !is_dot_name(e))
                found = e;
        if (found) {
            VN_HOLD(found->dvp);
            *dvpp = found->dvp;
            size_t n = MIN((size_t)found->namlen, size - 1);
            memcpy(name, found->name, n);
            name[n] = 0;
        }
        ls_unlock_all(&ls);
        if (found)
            return 0;
    }
    return -ENOENT;
}

static bool pred_name(const struct ncache *e, const void *arg)
{
    return name_matches(e, arg);
}

void dnlc_remove(struct vnode *dvp, const char *name)
{
    if (cluster_on())
        return cl_dnlc_remove(dvp, name);
    struct nckey k;
    if (!make_key(&k, dvp, name, NULL))
        return;
    unsigned base = base_row(dvp, k.nhash);
    for (unsigned i = 0; i < DNLC_CRED_SPREAD; i++)
        purge_row((base + i) & (nc.nrows - 1), pred_name, &k, dvp, NULL);
}

void dnlc_purge_vp(struct vnode *vp)
{
    if (cluster_on())
        return cl_dnlc_purge_vp(vp);
    for (unsigned r = 0; r < nc.nrows; r++)
        purge_row(r, pred_vnode, vp, vp, NULL);
}

static bool pred_vfs(const struct ncache *e, const void *vfsp)
{
    return e->vp->v_vfsp == vfsp || e->dvp->v_vfsp == vfsp;
}

int dnlc_purge_vfsp(struct vfs *vfsp, int count)
{
    if (cluster_on())
        return cl_dnlc_purge_vfsp(vfsp, count);
    int budget = count, removed = 0;
    for (unsigned r = 0; r < nc.nrows && (count <= 0 || budget > 0); r++)
        removed += purge_row(r, pred_vfs, vfsp, NULL, count > 0 ? &budget : NULL);
    return removed;
}

static bool pred_all(const struct ncache *e, const void *arg)
{
    return true;
}

void dnlc_purge(void)
{
    if (cluster_on())
        return cl_dnlc_purge();
    for (unsigned r = 0; r < nc.nrows; r++)
        purge_row(r, pred_all, NULL, NULL, NULL);
}

/* The least recently used valid entry of row r (under [R]). */
static struct ncache *oldest(unsigned r)
{
    struct ncache *best = NULL;
    for (struct ncache *e = nc.ops->first(r); e; e = nc.ops->next(r, e))
        if (!best || e->stamp < best->stamp)
            best = e;
    return best;
}

int dnlc_purge1(void)
{
    if (cluster_on())
        return cl_dnlc_purge1();
    for (unsigned i = 0; i < nc.nrows; i++) {
        unsigned r = __atomic_fetch_add(&nc.purge_cursor, 1, __ATOMIC_RELAXED) & (nc.nrows - 1);
        if (!nc.ops->peek(r, NULL))
            continue;
        struct release rel = { 0 };
        struct lockset ls;
        lock_row(&ls, r);
        struct ncache *e = oldest(r);
        if (e)
            nc.ops->drop(r, e, &ls, &rel);
        ls_unlock_all(&ls);
        rel_drop(&rel);
        if (e) {
            pcpu_count(nc.stats, ST_PURGES);
            return 1;
        }
    }
    return 0;
}

void dnlc_stats_get(struct dnlc_stats *out)
{
    if (cluster_on())
        return cl_dnlc_stats_get(out);
    out->lookups = pcpu_sum(nc.stats, ST_LOOKUPS);
    out->hits = pcpu_sum(nc.stats, ST_HITS);
    out->misses = pcpu_sum(nc.stats, ST_MISSES);
    out->enters = pcpu_sum(nc.stats, ST_ENTERS);
    out->purges = pcpu_sum(nc.stats, ST_PURGES);
}

unsigned dnlc_test_lru_set(struct vnode *dvp, const char *name, struct cred *cr)
{
    struct nckey k;
    if (nc.model != CACHE_SSAC || !make_key(&k, dvp, name, cr))
        return 0;
    return k.row;
}

unsigned dnlc_test_lru_size(void)
{
    if (!nc.rows)
        return 0;       /* dnlc_init has not run */
    return nc.model == CACHE_SSAC ? DNLC_WAYS : nc.nentries;
}

/* ---- boot ---- */

static void *zalloc_or_panic(size_t size, const char *what)
{
    void *p = kzalloc(size);
    if (!p)
        panic("dnlc_init: no memory for %s (%zu bytes)", what, size);
    return p;
}

void dnlc_init(void)
{
    cl_dnlc_init();             /* cluster=: the clustered cache serves every call */
    nc.model = opts.cache;
    nc.rowbits = DNLC_ROW_BITS;
    nc.nrows = 1u << nc.rowbits;
    nc.nentries = nc.nrows * DNLC_WAYS;
    nc.ops = nc.model == CACHE_SSAC ? &ssac_ops : &chain_ops;
    nc.rows = zalloc_or_panic(nc.nrows * sizeof(struct ncrow), "rows");
    nc.ents = zalloc_or_panic(nc.nentries * sizeof(struct ncache), "entries");
    for (unsigned i = 0; i < nc.nentries; i++)
        nc.ents[i].stamp = NC_EMPTY;
    if (nc.model == CACHE_SINGLE)
        spin_init(&nc.single, &dnlc_single_class);
    struct lock_class *rowcls = nc.model == CACHE_SSAC ? &dnlc_row_class : &dnlc_hash_class;
    for (unsigned r = 0; r < nc.nrows; r++) {
        struct ncrow *row = &nc.rows[r];
        row->clock = NC_FIRST;
        if (nc.model == CACHE_SINGLE) {
            row->lock = &nc.single;
        } else {
            spin_init(&row->own, rowcls);
            row->lock = &row->own;
        }
    }
    if (nc.model == CACHE_SSAC) {
        kprintf("dnlc: %u rows x %u ways, model ssac\n", nc.nrows, DNLC_WAYS);
        return;
    }
    if (nc.model == CACHE_HASHFREE)
        spin_init(&nc.lru_own, &dnlc_free_class);
    nc.lru_lock = nc.model == CACHE_HASHFREE ? &nc.lru_own : &nc.single;
    nc.links = zalloc_or_panic(nc.nentries * sizeof(struct nclink), "links");
    for (unsigned i = 0; i < nc.nentries; i++) {
        nc.links[i].row = NO_ROW;
        lru_insert(&nc.ents[i], false);
    }
    kprintf("dnlc: %u entries on %u hash chains with one LRU list, model %s\n", nc.nentries,
            nc.nrows, cache_model_name(nc.model));
}
