/*
 * witness: the lock-order checker (witness=on; kern/lock/witness.h).
 *
 * Theory.  The checker keeps a directed graph over lock classes: an edge
 * A -> B means some thread acquired a lock of class B while holding one of
 * class A, and records both call sites (where that A was taken, and where
 * that B was).  On every checked acquisition of a class-B lock, each class A
 * on the thread's held stack is considered: if A -> B is already known, all
 * is well; otherwise, if the graph has a path B -> ... -> A, taking B now
 * closes a cycle, and two threads following the two orders can deadlock.
 * That is reported, once per (A, B) pair, with both classes, the site of A's
 * acquisition, the site of this acquisition, and the recorded sites of each
 * edge on the reverse path.  The reversing edge is not added, so the graph
 * stays acyclic and later reports stay precise.  Nothing stops: no panic,
 * the acquisition goes ahead and the statistics keep counting.
 *
 * Same-class pairs are not checked and create no self-edge: holding two
 * locks of one class (two run queues, parent and child directory) is legal
 * under a rule stated where it is done (kern/lock/lock.c, rule 4), and the
 * checker cannot know that rule.  A recursive acquisition of a lock already
 * on the held stack is not checked either (witness_acquire_lock).
 *
 * Classes get a witness id at their first checked acquisition; at most
 * WITNESS_MAX_CLASSES are tracked, later ones are ignored with one warning.
 *
 * Locking.  graph_lock, a raw lock taken with interrupts off, protects the
 * id assignment, the edge list and every write to the bitmaps.  The fast
 * check (is A -> B known, or already reported?) reads the bitmaps without
 * it: bits are only ever set, so a stale zero only sends the caller to the
 * locked path, which checks again.  The checker uses only raw locks, never
 * the locks it checks, and prints after dropping graph_lock.
 */
#include <kern/lock/witness.h>
#include <kern/lock/lock.h>
#include <kern/arch/rawlock.h>
#include <kern/lib/ksyms.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>

#define NC          WITNESS_MAX_CLASSES
#define WORDS       (NC / 64)
#define MAX_EDGES   4096
#define MAX_PATH    8       /* edges of a reverse path printed in a report */

struct edge {
    uint16_t from, to;              /* class ids */
    uintptr_t from_site, to_site;   /* where the held lock and the new one were taken */
};

static rawlock_t graph_lock = RAWLOCK_INIT;
static int nclasses;                        /* [graph_lock] ids handed out */
static struct lock_class *classes[NC];      /* [graph_lock] by id */
static uint64_t order[NC][WORDS];           /* [graph_lock; racy reads] bit b of order[a]: edge a -> b */
static uint64_t reported[NC][WORDS];        /* [graph_lock; racy reads] pair (a, b) reported */
static struct edge edges[MAX_EDGES];        /* [graph_lock] */
static int nedges;                          /* [graph_lock] */
static bool full_warned;                    /* [graph_lock] */
static uint64_t nreports;                   /* [atomic] */
static char last_report[1536];              /* [graph_lock] the last report's text */

static inline bool bit_test(const uint64_t *w, int b)
{
    return (__atomic_load_n(&w[b / 64], __ATOMIC_RELAXED) >> (b % 64)) & 1;
}

static inline void bit_set(uint64_t *w, int b)
{
    __atomic_or_fetch(&w[b / 64], 1UL << (b % 64), __ATOMIC_RELAXED);
}

bool witness_set_enabled(bool on)
{
    int old;
    if (on)
        old = __atomic_fetch_or(&lock_hooks, LOCK_HOOK_WITNESS, __ATOMIC_SEQ_CST);
    else
        old = __atomic_fetch_and(&lock_hooks, ~LOCK_HOOK_WITNESS, __ATOMIC_SEQ_CST);
    return (old & LOCK_HOOK_WITNESS) != 0;
}

uint64_t witness_reports(void)
{
    return __atomic_load_n(&nreports, __ATOMIC_RELAXED);
}

/* ---- Class ids ------------------------------------------------------------ */

static int __attribute__((noinline)) assign_id(struct lock_class *c)
{
    bool warn = false;
    uint64_t f = rawlock_acquire_irqsave(&graph_lock);
    if (c->id < 0) {
        if (nclasses < NC) {
            classes[nclasses] = c;
            __atomic_store_n(&c->id, nclasses++, __ATOMIC_RELEASE);
        } else {
            __atomic_store_n(&c->id, NC, __ATOMIC_RELEASE);    /* not tracked */
            warn = !full_warned;
            full_warned = true;
        }
    }
    int id = c->id;
    rawlock_release_irqrestore(&graph_lock, f);
    if (warn)
        kprintf("witness: more than %d lock classes; '%s' and later ones are not checked\n",
                NC, c->name);
    return id;
}

static inline int class_id(struct lock_class *c)
{
    int id = __atomic_load_n(&c->id, __ATOMIC_ACQUIRE);
    return likely(id >= 0) ? id : assign_id(c);
}

/* ---- The graph (under graph_lock) ------------------------------------------ */

static const struct edge *find_edge(int from, int to)
{
    for (int i = 0; i < nedges; i++)
        if (edges[i].from == from && edges[i].to == to)
            return &edges[i];
    return NULL;
}

static void add_edge(int from, int to, uintptr_t from_site, uintptr_t to_site)
{
    if (nedges < MAX_EDGES)
        edges[nedges++] = (struct edge){ (uint16_t)from, (uint16_t)to, from_site, to_site };
    /* With the edge list full the order is still learned; only the sites
     * of the new edge are lost (a report then prints them as 0x0). */
    bit_set(order[from], to);
}

/*
 * Breadth-first search for a path src -> ... -> dst.  On success the path's
 * class ids are left in path[0..len] (path[0] = src, path[len] = dst) and
 * len is returned (at most MAX_PATH edges are kept); 0 when there is none.
 */
static int find_path(int src, int dst, int path[MAX_PATH + 1])
{
    static int16_t parent[NC];      /* [graph_lock] */
    static uint16_t queue[NC];      /* [graph_lock] */
    uint64_t seen[WORDS] = { 0 };
    int head = 0, tail = 0;
    queue[tail++] = (uint16_t)src;
    bit_set(seen, src);
    parent[src] = -1;
    while (head < tail) {
        int u = queue[head++];
        for (int v = 0; v < nclasses; v++) {
            if (!bit_test(order[u], v) || bit_test(seen, v))
                continue;
            bit_set(seen, v);
            parent[v] = (int16_t)u;
            if (v == dst)
                goto found;
            queue[tail++] = (uint16_t)v;
        }
    }
    return 0;
found:;
    int rev[NC], n = 0;
    for (int v = dst; v != -1; v = parent[v])
        rev[n++] = v;
    int len = MIN(n - 1, MAX_PATH);
    for (int i = 0; i < len; i++)
        path[i] = rev[n - 1 - i];
    path[len] = dst;
    return len;
}

/* ---- Reports ----------------------------------------------------------------- */

struct report {
    struct lock_class *held, *taking;
    uintptr_t held_site, taking_site;
    int len;                                /* edges on the reverse path */
    struct lock_class *pcls[MAX_PATH + 1];  /* the reverse path's classes */
    uintptr_t psite_from[MAX_PATH], psite_to[MAX_PATH];
};

static void print_report(const struct report *r)
{
    char buf[1536], s1[96], s2[96];
    size_t len = 0;
#define OUT(...) len += (size_t)snprintf(buf + len, len < sizeof buf ? sizeof buf - len : 0, __VA_ARGS__)
    ksym_format(s1, sizeof s1, r->held_site);
    ksym_format(s2, sizeof s2, r->taking_site);
    OUT("witness: lock order reversal: acquiring \"%s\" while holding \"%s\"\n",
        r->taking->name, r->held->name);
    OUT("witness:   \"%s\" held, acquired at %s\n", r->held->name, s1);
    OUT("witness:   \"%s\" being acquired at %s\n", r->taking->name, s2);
    OUT("witness:   the reverse order was established by:\n");
    for (int i = 0; i < r->len; i++) {
        ksym_format(s1, sizeof s1, r->psite_from[i]);
        ksym_format(s2, sizeof s2, r->psite_to[i]);
        OUT("witness:     \"%s\" held (acquired at %s), then \"%s\" acquired at %s\n",
            r->pcls[i]->name, s1, r->pcls[i + 1]->name, s2);
    }
#undef OUT
    len = MIN(len, sizeof buf - 1);
    console_write(buf, len);
    uint64_t f = rawlock_acquire_irqsave(&graph_lock);
    memcpy(last_report, buf, len);
    last_report[len] = '\0';
    rawlock_release_irqrestore(&graph_lock, f);
}

size_t witness_last_report(char *buf, size_t n)
{
    if (n == 0)
        return 0;
    uint64_t f = rawlock_acquire_irqsave(&graph_lock);
    size_t len = strlcpy(buf, last_report, n);
    rawlock_release_irqrestore(&graph_lock, f);
    return MIN(len, n - 1);
}

/* Fill r's reverse path from path[] (under graph_lock). */
static void fill_path(struct report *r, const int *path, int len)
{
    r->len = len;
    for (int i = 0; i <= len; i++)
        r->pcls[i] = classes[path[i]];
    for (int i = 0; i < len; i++) {
        const struct edge *e = find_edge(path[i], path[i + 1]);
        r->psite_from[i] = e ? e->from_site : 0;
        r->psite_to[i] = e ? e->to_site : 0;
    }
}

/* a (held, taken at held_site) then b (being taken at site): learn the
 * edge, or report the reversal. */
static void learn(int a, int b, const struct held_lock *held, uintptr_t site)
{
    struct report r;
    int path[MAX_PATH + 1];
    bool report = false;
    uint64_t f = rawlock_acquire_irqsave(&graph_lock);
    if (!bit_test(order[a], b) && !bit_test(reported[a], b)) {
        int len = find_path(b, a, path);
        if (len > 0) {
            bit_set(reported[a], b);
            r = (struct report){ .held = classes[a], .taking = classes[b],
                                 .held_site = held->site, .taking_site = site };
            fill_path(&r, path, len);
            report = true;
        } else {
            add_edge(a, b, held->site, site);
        }
    }
    rawlock_release_irqrestore(&graph_lock, f);
    if (report) {
        __atomic_add_fetch(&nreports, 1, __ATOMIC_RELAXED);
        print_report(&r);
    }
}

static bool holds_lock(const struct held_locks *h, const void *lock)
{
    for (int i = 0; i < h->n; i++)
        if (h->e[i].lock == lock)
            return true;
    return false;
}

void witness_check(void *lock, struct lock_class *cls, uintptr_t site)
{
    /* Waiting for a sleep mutex cannot be part of a deadlock: its holder
     * gives it up whenever it blocks (every mutex is released across a
     * context switch) and never spins on a lock while holding it (no spin
     * lock is held when a mutex is taken, kern/lock/lock.c rule 5).  So edges
     * into sleep mutexes are neither learned nor checked: "directory
     * ILOCK, then the entry's vnode lock" and "vnode lock, then ILOCK" are
     * both fine, as seed 001 designs them. */
    if (!cls || cls->kind == LK_MUTEX_SLEEP)
        return;
    int b = class_id(cls);
    if (b >= NC)
        return;
    struct held_locks *h = held_locks_current();
    if (lock && holds_lock(h, lock))
        return;
    for (int i = 0; i < h->n; i++) {
        const struct held_lock *e = &h->e[i];
        if (!e->cls || e->cls == cls)
            continue;
        int a = class_id(e->cls);
        if (a >= NC || bit_test(order[a], b) || bit_test(reported[a], b))
            continue;
        learn(a, b, e, site);
    }
}
