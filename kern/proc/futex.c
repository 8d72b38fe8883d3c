/*
 * Futexes: the kernel half of user-space locks (Linux's futex(2)).
 *
 * Theory.  A futex is a 32-bit word in user memory; threads wait on it
 * only while it holds the value they expect, and a waker changes the word
 * in user space before it asks the kernel to wake.  The kernel keeps no
 * state per futex, only its waiters: each waiter (a struct futex_waiter
 * on its own kernel stack) sits in a hashed wait table, in the row its
 * key hashes to.  As in the software set-associative cache of SVR4 MP
 * (Peacock et al.), each row has a lock of its own, so threads waiting on
 * different futexes rarely meet on one lock, and no lock covers the table.
 *
 * Keys.  A private futex (FUTEX_PRIVATE_FLAG, or a word in a private
 * mapping) is named by (address space, user address).  A shared futex in
 * a MAP_SHARED mapping is named by the identity of its page: the file
 * (vnode) and the byte offset in it, or the shared anonymous memory
 * (amap) and the offset in it, so that processes mapping the page at
 * different addresses meet on one key.  The segment is looked up under
 * the address space's lock, which is dropped before any row lock.
 *
 * Waiting without a lost wakeup.  A waiter first links itself into its
 * row, then (after a full fence) reads the word.  A waker stores the
 * word, then takes the row's lock to find waiters.  Either the waiter's
 * read sees the new value (it unlinks itself: EAGAIN), or the waker finds
 * it linked and wakes it.  No user memory is read with a row lock held
 * (a read may fault, and a fault sleeps).  The waker unlinks a waiter,
 * sets its woken word and calls wakeup on it, all under the row lock; the
 * sleeper checks the woken word under the sleep queue's lock
 * (sig_sleep_until_gen), and always takes its row lock once more before
 * it returns, so its waiter record is never freed under a waker.
 * REQUEUE moves waiters to another key's row with both rows locked (the
 * lower address first); a waiter that unlinks itself locks the row it is
 * in, rechecking after the lock that it has not moved meanwhile.
 *
 * WAKE_OP changes the second word atomically through the kernel's view
 * of its page (as_user_word, with the address space's lock held, before
 * any row lock), then wakes.  Robust lists (futex_exit_robust) are walked
 * at a thread's exit: each lock the thread still holds gets
 * FUTEX_OWNER_DIED and one waiter is woken.  PI futexes are not here
 * (ENOSYS).
 *
 * Locks.  futex_row (spin, one per row) is taken with no other lock
 * held (the address space's lock is dropped before it); wakeup's
 * sleep-queue lock is taken inside it.  Two rows together: the lower
 * address first.
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/sched/thread.h>
#include <kern/lock/sleep.h>
#include <kern/lock/spinlock.h>
#include <kern/lib/errno.h>
#include <kern/lib/string.h>
#include <drivers/platform/timer.h>
#include <drivers/platform/rtc.h>

LOCK_CLASS(futex_row_class, "futex_row", LK_SPIN);

#define FUTEX_WAIT            0
#define FUTEX_WAKE            1
#define FUTEX_REQUEUE         3
#define FUTEX_CMP_REQUEUE     4
#define FUTEX_WAKE_OP         5
#define FUTEX_WAIT_BITSET     9
#define FUTEX_WAKE_BITSET     10
#define FUTEX_PRIVATE_FLAG    128
#define FUTEX_CLOCK_REALTIME  256
#define FUTEX_CMD_MASK        (~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME))
#define FUTEX_BITSET_ALL      0xffffffffu
#define FUTEX_WAITERS         0x80000000u
#define FUTEX_OWNER_DIED      0x40000000u
#define FUTEX_TID_MASK        0x3fffffffu
#define FUTEX_ROWS            256

struct futex_key {
    uint64_t object;            /* the address space, or the vnode or amap (low bits 1, 2) */
    uint64_t offset;            /* the user address, or the byte offset in the object */
};

struct futex_row;

struct futex_waiter {
    struct futex_key key;       /* [r] the row lock of row */
    uint32_t bitset;            /* [c] */
    struct futex_row *row;      /* [r] read [a] to find the lock */
    struct futex_waiter *next;  /* [r] */
    bool queued;                /* [r] */
    uint64_t woken;             /* [r] written; read [a]: 1 once a waker took it off */
};

struct futex_row {
    spinlock_t lock;
    struct futex_waiter *head;  /* [r] */
} __aligned(64);

static struct futex_row rows[FUTEX_ROWS];

void futex_init(void)
{
    for (int i = 0; i < FUTEX_ROWS; i++)
        spin_init(&rows[i].lock, &futex_row_class);
}

static struct futex_row *row_of(const struct futex_key *k)
{
    uint64_t h = (k->object ^ (k->offset * 0x9e3779b97f4a7c15UL)) * 0xff51afd7ed558ccdUL;
    return &rows[(h >> 40) % FUTEX_ROWS];
}

static bool key_equal(const struct futex_key *a, const struct futex_key *b)
{
    return a->object == b->object && a->offset == b->offset;
}

/* The key of the word at uaddr: 0, -EINVAL (misaligned) or -EFAULT. */
static int futex_key_of(struct as *as, uint64_t uaddr, bool private, struct futex_key *k)
{
    if (uaddr & 3)
        return -EINVAL;
    if (uaddr >= USER_TOP || !as)
        return -EFAULT;
    k->object = (uint64_t)as;
    k->offset = uaddr;
    if (private)
        return 0;
    rlock_acquire(&as->a_lock);
    struct seg *s = as->a_segs;
    while (s && !(uaddr >= s->s_start && uaddr < s->s_end))
        s = s->s_next;
    int err = s ? 0 : -EFAULT;
    if (s && (s->s_flags & MAP_SHARED) && s->s_vp) {
        k->object = (uint64_t)s->s_vp | 1;
        k->offset = s->s_off + (uaddr - s->s_start);
    } else if (s && (s->s_flags & MAP_SHARED) && s->s_amap) {
        k->object = (uint64_t)s->s_amap | 2;
        k->offset = s->s_amap_off * PAGE_SIZE + (uaddr - s->s_start);
    }
    rlock_release(&as->a_lock);
    return err;
}

static void row_unlink_locked(struct futex_row *r, struct futex_waiter *w)
{
    for (struct futex_waiter **pp = &r->head; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    w->queued = false;
}

/* Take w off its row: true when it was still there (nobody woke it). */
static bool waiter_leave(struct futex_waiter *w)
{
    for (;;) {
        struct futex_row *r = __atomic_load_n(&w->row, __ATOMIC_ACQUIRE);
        spin_lock(&r->lock);
        if (__atomic_load_n(&w->row, __ATOMIC_ACQUIRE) != r) {
            spin_unlock(&r->lock);      /* requeued meanwhile */
            continue;
        }
        bool was = w->queued;
        if (was)
            row_unlink_locked(r, w);
        spin_unlock(&r->lock);
        return was;
    }
}

/* Wake up to n waiters of key k whose bitset meets bits, in row r
 * (locked): how many. */
static int wake_locked(struct futex_row *r, const struct futex_key *k, int n, uint32_t bits)
{
    int woken = 0;
    struct futex_waiter **pp = &r->head;
    while (*pp && woken < n) {
        struct futex_waiter *w = *pp;
        if (!key_equal(&w->key, k) || !(w->bitset & bits)) {
            pp = &w->next;
            continue;
        }
        *pp = w->next;
        w->queued = false;
        __atomic_store_n(&w->woken, 1, __ATOMIC_RELEASE);
        wakeup(w);
        woken++;
    }
    return woken;
}

static int futex_wake_key(const struct futex_key *k, int n, uint32_t bits)
{
    struct futex_row *r = row_of(k);
    spin_lock(&r->lock);
    int woken = wake_locked(r, k, n, bits);
    spin_unlock(&r->lock);
    return woken;
}

/* Wait on key k while the word at uaddr is val, until deadline (uptime,
 * UINT64_MAX: none).  0 when woken, or -EAGAIN, -EFAULT, -ETIMEDOUT,
 * -ERESTARTSYS (a signal; the call is repeated, or -EINTR for a handler). */
static int futex_wait_key(const struct futex_key *k, uint64_t uaddr, uint32_t val,
                          uint32_t bits, uint64_t deadline)
{
    struct futex_waiter w = { .key = *k, .bitset = bits, .queued = true };
    struct futex_row *r = row_of(k);
    spin_lock(&r->lock);
    w.row = r;
    w.next = r->head;
    r->head = &w;
    spin_unlock(&r->lock);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    uint32_t cur;
    int err = copyin((const void *)uaddr, &cur, sizeof cur);
    if (err || cur != val)
        return waiter_leave(&w) ? (err ? -EFAULT : -EAGAIN) : 0;
    for (;;) {
        int s = sig_sleep_until_gen(&w, deadline, &w.woken, 0);
        bool timedout = uptime_ns() >= deadline;
        if (__atomic_load_n(&w.woken, __ATOMIC_ACQUIRE) || s || timedout) {
            if (!waiter_leave(&w))
                return 0;           /* woken, whatever else happened */
            return s ? s : -ETIMEDOUT;
        }
    }
}

/* Move up to n waiters of key from (after waking nwake of them) to key
 * to: how many were woken plus moved. */
static int futex_requeue(const struct futex_key *from, const struct futex_key *to,
                         int nwake, int nmove)
{
    struct futex_row *r1 = row_of(from), *r2 = row_of(to);
    struct futex_row *lo = r1 < r2 ? r1 : r2, *hi = r1 < r2 ? r2 : r1;
    spin_lock(&lo->lock);
    if (hi != lo)
        spin_lock(&hi->lock);
    int done = wake_locked(r1, from, nwake, FUTEX_BITSET_ALL);
    struct futex_waiter **pp = &r1->head;
    int moved = 0;
    while (*pp && moved < nmove) {
        struct futex_waiter *w = *pp;
        if (!key_equal(&w->key, from)) {
            pp = &w->next;
            continue;
        }
        w->key = *to;
        if (r2 == r1) {
            pp = &w->next;          /* the same row: the new key is enough */
        } else {
            *pp = w->next;
            w->next = r2->head;
            r2->head = w;
            __atomic_store_n(&w->row, r2, __ATOMIC_RELEASE);
        }
        moved++;
    }
    if (hi != lo)
        spin_unlock(&hi->lock);
    spin_unlock(&lo->lock);
    return done + moved;
}

/* ---- FUTEX_WAKE_OP ---- */

struct wake_op {
    uint32_t op, cmp;
    int32_t oparg, cmparg;
    uint32_t old;
};

static int do_wake_op(uint32_t *word, void *arg)
{
    struct wake_op *o = arg;
    uint32_t old = __atomic_load_n(word, __ATOMIC_RELAXED), new;
    do {
        uint32_t a = (uint32_t)o->oparg;
        switch (o->op & 7) {
        case 0: new = a; break;                 /* FUTEX_OP_SET */
        case 1: new = old + a; break;           /* FUTEX_OP_ADD */
        case 2: new = old | a; break;           /* FUTEX_OP_OR */
        case 3: new = old & ~a; break;          /* FUTEX_OP_ANDN */
        case 4: new = old ^ a; break;           /* FUTEX_OP_XOR */
        default: return -ENOSYS;
        }
    } while (!__atomic_compare_exchange_n(word, &old, new, false, __ATOMIC_SEQ_CST,
                                          __ATOMIC_RELAXED));
    o->old = old;
    return 0;
}

static int wake_op_compare(const struct wake_op *o, bool *result)
{
    int32_t v = (int32_t)o->old, c = o->cmparg;
    switch (o->cmp) {
    case 0: *result = v == c; return 0;
    case 1: *result = v != c; return 0;
    case 2: *result = v < c; return 0;
    case 3: *result = v <= c; return 0;
    case 4: *result = v > c; return 0;
    case 5: *result = v >= c; return 0;
    default: return -ENOSYS;
    }
}

static int32_t sign_extend12(uint32_t v)
{
    return (int32_t)(v << 20) >> 20;
}

static int futex_wake_op(struct as *as, uint64_t uaddr, uint64_t uaddr2, bool private,
                         int n1, int n2, uint32_t val3)
{
    struct futex_key k1, k2;
    int err = futex_key_of(as, uaddr, private, &k1);
    if (!err)
        err = futex_key_of(as, uaddr2, private, &k2);
    if (err)
        return err;
    struct wake_op o = {
        .op = (val3 >> 28) & 0xf, .cmp = (val3 >> 24) & 0xf,
        .oparg = sign_extend12((val3 >> 12) & 0xfff), .cmparg = sign_extend12(val3 & 0xfff),
    };
    if (o.op & 8)
        o.oparg = (int32_t)(1u << (o.oparg & 31));     /* Linux masks a bad shift */
    bool hit;
    if ((o.op & 7) > 4)
        return -ENOSYS;
    /* As Linux, the word changes even when the comparison is unknown. */
    if ((err = as_user_word(as, uaddr2, do_wake_op, &o)) || (err = wake_op_compare(&o, &hit)))
        return err;
    int woken = futex_wake_key(&k1, n1, FUTEX_BITSET_ALL);
    if (hit)
        woken += futex_wake_key(&k2, n2, FUTEX_BITSET_ALL);
    return woken;
}

/* ---- the system call ---- */

struct timespec_f {
    int64_t sec, nsec;
};

/* The deadline (uptime ns) of a wait's timeout at utime: relative for
 * FUTEX_WAIT, absolute on CLOCK_MONOTONIC or (realtime) CLOCK_REALTIME for
 * WAIT_BITSET.  0 or -errno. */
static int futex_deadline(uint64_t utime, bool absolute, bool realtime, uint64_t *deadline)
{
    *deadline = UINT64_MAX;
    if (!utime)
        return 0;
    struct timespec_f ts;
    if (copyin((const void *)utime, &ts, sizeof ts))
        return -EFAULT;
    if (ts.sec < 0 || ts.nsec < 0 || ts.nsec >= 1000000000)
        return -EINVAL;
    uint64_t ns = (uint64_t)ts.sec >= INT64_MAX / 1000000000UL ? (uint64_t)INT64_MAX
                : (uint64_t)ts.sec * 1000000000UL + (uint64_t)ts.nsec;
    uint64_t now = uptime_ns();
    if (!absolute) {
        *deadline = now + ns;
    } else if (realtime) {
        uint64_t real = realtime_ns();
        *deadline = ns <= real ? now : now + (ns - real);
    } else {
        *deadline = ns;
    }
    return 0;
}

static int futex_wait(struct as *as, uint64_t uaddr, bool private, uint32_t val,
                      uint32_t bits, uint64_t utime, bool absolute, bool realtime)
{
    struct futex_key k;
    uint64_t deadline;
    if (!bits)
        return -EINVAL;
    int err = futex_key_of(as, uaddr, private, &k);
    if (!err)
        err = futex_deadline(utime, absolute, realtime, &deadline);
    if (err)
        return err;
    err = futex_wait_key(&k, uaddr, val, bits, deadline);
    /* A relative timeout is not restarted from the start: EINTR. */
    if (err == -ERESTARTSYS && utime && !absolute)
        err = -EINTR;
    return err;
}

static int futex_wake(struct as *as, uint64_t uaddr, bool private, int n, uint32_t bits)
{
    struct futex_key k;
    if (!bits)
        return -EINVAL;
    int err = futex_key_of(as, uaddr, private, &k);
    if (err)
        return err;
    return n <= 0 ? 0 : futex_wake_key(&k, n, bits);
}

static int futex_cmp_requeue(struct as *as, uint64_t uaddr, uint64_t uaddr2, bool private,
                             int nwake, int nmove, bool compare, uint32_t val3)
{
    struct futex_key k1, k2;
    if (nwake < 0 || nmove < 0)
        return -EINVAL;
    int err = futex_key_of(as, uaddr, private, &k1);
    if (!err)
        err = futex_key_of(as, uaddr2, private, &k2);
    if (err)
        return err;
    if (compare) {
        /* A waiter that already read the old value is linked before the
         * read that follows, so a mismatch here loses nobody. */
        uint32_t cur;
        if (copyin((const void *)uaddr, &cur, sizeof cur))
            return -EFAULT;
        if (cur != val3)
            return -EAGAIN;
    }
    return futex_requeue(&k1, &k2, nwake, nmove);
}

/* futex(uaddr, op, val, timeout or val2, uaddr2, val3). */
SYSCALL_DECL(sys_futex)
{
    int op = (int)a1, cmd = op & FUTEX_CMD_MASK;
    bool private = op & FUTEX_PRIVATE_FLAG, realtime = op & FUTEX_CLOCK_REALTIME;
    struct as *as = curproc()->p_as;
    uint32_t val = (uint32_t)a2, val3 = (uint32_t)a5;
    if (realtime && cmd != FUTEX_WAIT_BITSET)
        return -ENOSYS;
    switch (cmd) {
    case FUTEX_WAIT:
        return futex_wait(as, a0, private, val, FUTEX_BITSET_ALL, a3, false, false);
    case FUTEX_WAIT_BITSET:
        return futex_wait(as, a0, private, val, val3, a3, true, realtime);
    case FUTEX_WAKE:
        return futex_wake(as, a0, private, (int)val, FUTEX_BITSET_ALL);
    case FUTEX_WAKE_BITSET:
        return futex_wake(as, a0, private, (int)val, val3);
    case FUTEX_REQUEUE:
        return futex_cmp_requeue(as, a0, a4, private, (int)val, (int)a3, false, 0);
    case FUTEX_CMP_REQUEUE:
        return futex_cmp_requeue(as, a0, a4, private, (int)val, (int)a3, true, val3);
    case FUTEX_WAKE_OP:
        return futex_wake_op(as, a0, a4, private, (int)val, (int)a3, val3);
    default:
        return -ENOSYS;
    }
}

/* ---- thread exit ---- */

void futex_wake_word(struct as *as, uint64_t uaddr)
{
    struct futex_key k;
    if (!futex_key_of(as, uaddr, false, &k))
        futex_wake_key(&k, 1, FUTEX_BITSET_ALL);
}

struct robust_mark {
    uint32_t tid;
    bool waiters;
};

/* The lock word of a dead owner: FUTEX_OWNER_DIED, keeping FUTEX_WAITERS. */
static int mark_owner_died(uint32_t *word, void *arg)
{
    struct robust_mark *m = arg;
    uint32_t old = __atomic_load_n(word, __ATOMIC_RELAXED);
    do {
        if ((old & FUTEX_TID_MASK) != m->tid)
            return 0;
    } while (!__atomic_compare_exchange_n(word, &old, (old & FUTEX_WAITERS) | FUTEX_OWNER_DIED,
                                          false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    m->waiters = old & FUTEX_WAITERS;
    return 1;
}

static void robust_release(struct as *as, uint64_t word, int tid)
{
    struct robust_mark m = { .tid = (uint32_t)tid };
    if (as_user_word(as, word, mark_owner_died, &m) == 1 && m.waiters)
        futex_wake_word(as, word);
}

/* Walk the robust list at head (set_robust_list): struct robust_list_head
 * is { next, futex_offset, list_op_pending }; each entry's lock word is
 * at the entry plus futex_offset.  At most 2048 entries, as Linux. */
void futex_exit_robust(struct as *as, uint64_t head, int tid)
{
    uint64_t h[3];
    if (!head || !as || copyin((const void *)head, h, sizeof h))
        return;
    uint64_t entry = h[0] & ~1UL, pending = h[2] & ~1UL;
    int64_t off = (int64_t)h[1];
    for (int n = 0; entry && entry != head && n < 2048; n++) {
        uint64_t next;
        if (copyin((const void *)entry, &next, sizeof next))
            return;
        if (entry != pending)
            robust_release(as, entry + off, tid);
        entry = next & ~1UL;
    }
    if (pending)
        robust_release(as, pending + off, tid);
}
