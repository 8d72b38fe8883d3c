/*
 * The pages a tmpfs file has reserved of its mount's size= (the theory's
 * "Space", kern/tmpfs/tmpfs.c).  A regular file reserves a page when data
 * can first land in it: a write covering it, or a shared mapping mapping
 * it.  A hole reserves nothing, so a sparse file costs what is written, as
 * on Linux.  The reserved pages are kept as extents, [start, end) page
 * ranges, sorted, disjoint and never adjacent (tn_ext, tn_next of them);
 * their total is what the file holds of the mount's pages.  Files are mostly written in runs, so a file has
 * few extents, and each operation here walks them all.
 *
 * Every function is called with the node TN_LOCKED.
 */
#include <kern/tmpfs/tmpfs.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>

/* Pages of [a, b) that are not reserved. */
uint64_t tresv_missing(const struct tmpnode *tp, uint64_t a, uint64_t b)
{
    uint64_t missing = b > a ? b - a : 0;
    for (uint32_t i = 0; i < tp->tn_next && missing; i++) {
        uint64_t lo = MAX(a, tp->tn_ext[i].start), hi = MIN(b, tp->tn_ext[i].end);
        if (lo < hi)
            missing -= hi - lo;
    }
    return missing;
}

/* The end p (a <= p <= b) of the longest [a, p) that holds at most n
 * unreserved pages: how far a write from page a can go with n new pages. */
uint64_t tresv_reach(const struct tmpnode *tp, uint64_t a, uint64_t b, uint64_t n)
{
    uint64_t cur = a;
    for (uint32_t i = 0; i < tp->tn_next && cur < b; i++) {
        const struct tresv *e = &tp->tn_ext[i];
        if (e->end <= cur)
            continue;
        if (e->start >= b)
            break;
        if (e->start > cur) {
            uint64_t gap = e->start - cur;
            if (gap > n)
                return cur + n;
            n -= gap;
        }
        cur = MIN(e->end, b);   /* across the reserved run */
    }
    return cur + MIN(n, b - cur);
}

/* Room for one more extent; -ENOMEM. */
static int grow(struct tmpnode *tp)
{
    if (tp->tn_next < tp->tn_extcap)
        return 0;
    uint32_t cap = tp->tn_extcap ? 2 * tp->tn_extcap : 4;
    struct tresv *ext = kmalloc(cap * sizeof *ext);
    if (!ext)
        return -ENOMEM;
    if (tp->tn_next)
        memcpy(ext, tp->tn_ext, tp->tn_next * sizeof *ext);
    kfree(tp->tn_ext);
    tp->tn_ext = ext;
    tp->tn_extcap = cap;
    return 0;
}

/* Mark [a, b) reserved, merging with the extents it meets or touches.
 * The caller has counted the new pages (tresv_missing) into the
 * mount's.  -ENOMEM leaves the extents as they were. */
int tresv_add(struct tmpnode *tp, uint64_t a, uint64_t b)
{
    if (a >= b)
        return 0;
    uint32_t i = 0, j;
    while (i < tp->tn_next && tp->tn_ext[i].end < a)
        i++;                    /* the first extent that meets or follows [a, b) */
    for (j = i; j < tp->tn_next && tp->tn_ext[j].start <= b; j++)
        ;                       /* [i, j) meet or touch it */
    if (i == j) {
        int err = grow(tp);
        if (err)
            return err;
        memmove(&tp->tn_ext[i + 1], &tp->tn_ext[i], (tp->tn_next - i) * sizeof *tp->tn_ext);
        tp->tn_ext[i] = (struct tresv){ a, b };
        tp->tn_next++;
        return 0;
    }
    tp->tn_ext[i].start = MIN(a, tp->tn_ext[i].start);
    tp->tn_ext[i].end = MAX(b, tp->tn_ext[j - 1].end);
    memmove(&tp->tn_ext[i + 1], &tp->tn_ext[j], (tp->tn_next - j) * sizeof *tp->tn_ext);
    tp->tn_next -= j - i - 1;
    return 0;
}

/* Forget the reserved pages at and past page from; how many there were. */
uint64_t tresv_cut(struct tmpnode *tp, uint64_t from)
{
    uint64_t cut = 0;
    uint32_t keep = 0;
    for (uint32_t i = 0; i < tp->tn_next; i++) {
        struct tresv *e = &tp->tn_ext[i];
        if (e->start >= from) {
            cut += e->end - e->start;
            continue;
        }
        if (e->end > from) {
            cut += e->end - from;
            e->end = from;
        }
        keep++;
    }
    tp->tn_next = keep;         /* the extents are sorted: the kept ones come first */
    return cut;
}

void tresv_free(struct tmpnode *tp)
{
    kfree(tp->tn_ext);
    tp->tn_ext = NULL;
    tp->tn_next = tp->tn_extcap = 0;
}
