/*
 * ktests for the page cache (kern/vm/pcache.c) and the vnode segments
 * that use it, on a fresh S5 file system on the tests' RAM disk:
 *
 *   pcache_shared     two address spaces map one file MAP_SHARED: one
 *                     page, from this CPU's node; a store in one is seen
 *                     by the other and by VOP_READ before any write-back;
 *                     msync and as_destroy write it to the file (read
 *                     raw, past the cache); a page wholly past the end of
 *                     the file is -ENXIO; the last release frees the pages
 *   pcache_coherence  VOP_WRITE reaches a mapped page; a truncation drops
 *                     the pages past the end (the truncating thread's own
 *                     PTEs go: -EFAULT), zeros the tail of the last one,
 *                     and growing again reads zeros; a private mapping
 *                     maps the cached page read-only and copies it at a
 *                     write, which never reaches the file
 *   pcache_rmap       the reverse mappings (kern/vm/rmap.c): stores
 *                     through another address space's shared mapping
 *                     reach the file by VOP_FSYNC and by msync of a
 *                     third one; a truncation by a thread with no
 *                     address space removes the PTEs past the end in every
 *                     address space -- shared, private, and a fork's
 *                     child -- so each faults -ENXIO there
 *   pcache_mp         a thread per CPU, each with its own address space
 *                     mapping one file shared: stores, write(2)s read
 *                     back through the mapping, msyncs, all at once on
 *                     the same pages; the file ends with every last value
 */
#include <kern/tests/ktest.h>
#include <kern/tests/s5t.h>
#include <kern/vm/as.h>
#include <kern/vm/page.h>
#include <kern/vm/pcache.h>
#include <kern/vm/rmap.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/sched/thread.h>
#include <kern/sched/sched.h>
#include <kern/arch/cpu.h>
#include <kern/lib/string.h>
#include <kern/vm/kmem.h>

#define TVA 0x10000000UL

static void use_as(struct as *as)
{
    curthread()->as = as;
    as_activate(as);
}

/* A file of len bytes of a pattern, created in t's root. */
static int make_file(struct s5t *t, const char *name, size_t len, struct vnode **vpp)
{
    int err = t_create(t->root, name, vpp);
    if (err)
        return err;
    char *buf = kmalloc(len);
    if (!buf)
        return -ENOMEM;
    for (size_t i = 0; i < len; i++)
        buf[i] = (char)('a' + i % 26);
    size_t done;
    err = t_io(*vpp, true, buf, len, 0, 0, &done);
    kfree(buf);
    if (!err && done == len)
        err = pcache_flush(*vpp, 0, ~0UL);  /* the file holds the pattern (read_raw) */
    return err ? err : done == len ? 0 : -EIO;
}

/* Read len bytes at off past the page cache (what the file holds). */
static int read_raw(struct vnode *vp, void *buf, size_t len, uint64_t off)
{
    struct uio u = { .uio_base = buf, .uio_resid = len, .uio_offset = off };
    int err = VOP_READ_RAW(vp, &u, 0, kcred);
    return err ? err : (int)(len - u.uio_resid);
}

static int shared_body(struct s5t *t)
{
    struct vnode *vp;
    KT_ASSERT_EQ(make_file(t, "shared", PAGE_SIZE + 100, &vp), 0);
    struct as *a = as_create(), *b = as_create();
    KT_ASSERT(a && b);
    vaddr_t bva = TVA + 16 * PAGE_SIZE;
    KT_ASSERT_EQ(as_map(a, TVA, 2 * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                        vp, 0, 0), TVA);
    KT_ASSERT_EQ(as_map(b, bva, 3 * PAGE_SIZE, PROT_READ, MAP_SHARED | MAP_FIXED, vp, 0, 0),
                 bva);

    char got[8] = { 0 };
    use_as(a);
    int e1 = copyin((void *)TVA, got, 4);
    int e2 = copyout("HELLO", (void *)(TVA + 10), 5);
    use_as(b);
    char seen[8] = { 0 };
    int e3 = copyin((void *)(bva + 10), seen, 5);
    int e4 = copyout("x", (void *)bva, 1);          /* read-only there */
    use_as(NULL);
    KT_ASSERT(!e1 && !e2 && !e3);
    KT_ASSERT_EQ(e4, -EFAULT);
    KT_ASSERT(!memcmp(got, "abcd", 4));
    KT_ASSERT(!memcmp(seen, "HELLO", 5));

    /* One page, the cache's, from this CPU's node. */
    struct page *pa = as_lookup_page(a, TVA, NULL), *pb = as_lookup_page(b, bva, NULL);
    struct page *pc = pcache_lookup(vp, 0);
    KT_ASSERT(pa && pa == pb && pa == pc);
    /* The cache, segmap's window (make_file wrote through it), two PTEs,
     * our lookup. */
    KT_ASSERT_EQ(pc->count, 5);
    KT_ASSERT_EQ(pc->node, this_cpu()->node);
    page_rele(pc);

    /* read(2) sees the store before the file does. */
    char back[8] = { 0 };
    size_t done;
    KT_ASSERT_EQ(t_io(vp, false, back, 5, 10, 0, &done), 0);
    KT_ASSERT(!memcmp(back, "HELLO", 5));
    KT_ASSERT_EQ(read_raw(vp, back, 5, 10), 5);
    KT_ASSERT(!memcmp(back, "klmno", 5));

    /* msync writes it back; exit (as_destroy) writes the next store. */
    KT_ASSERT_EQ(as_sync(a, TVA, PAGE_SIZE, MS_SYNC), 0);
    KT_ASSERT_EQ(read_raw(vp, back, 5, 10), 5);
    KT_ASSERT(!memcmp(back, "HELLO", 5));
    use_as(a);
    e1 = copyout("WORLD", (void *)(TVA + PAGE_SIZE + 20), 5);
    use_as(NULL);
    KT_ASSERT_EQ(e1, 0);
    KT_ASSERT_EQ(as_sync(a, TVA + PAGE_SIZE, 4 * PAGE_SIZE, MS_SYNC), -ENOMEM);  /* a hole */
    KT_ASSERT_EQ(as_sync(a, TVA + 1, PAGE_SIZE, MS_SYNC), -EINVAL);
    as_destroy(a);
    KT_ASSERT_EQ(read_raw(vp, back, 5, PAGE_SIZE + 20), 5);
    KT_ASSERT(!memcmp(back, "WORLD", 5));

    /* Past the end of the file: no page, and none cached. */
    KT_ASSERT_EQ(as_fault(b, bva + 2 * PAGE_SIZE, FA_READ), -ENXIO);
    KT_ASSERT_EQ(as_fault(b, bva + PAGE_SIZE, FA_WRITE), -EACCES);
    KT_ASSERT_EQ(vp->v_npages, 2);
    as_destroy(b);
    KT_ASSERT_EQ(vp->v_npages, 2);      /* kept while the file is active */
    VN_RELE(vp);
    return 0;
}

KTEST(pcache_shared)
{
    struct s5t t;
    struct pcache_stats before, after;
    /* On this CPU throughout: the page must come from the filling CPU's
     * node, and make_file's write-back sleeps, after which sched=global
     * may resume the thread on another node's CPU. */
    struct thread *self = curthread();
    uint64_t allowed = self->affinity;
    sched_set_affinity(self, 1UL << cpu_id());
    KT_ASSERT_EQ(t_fresh(&t, 2048, 64), 0);
    pcache_get_stats(&before);
    int r = shared_body(&t);
    sched_set_affinity(self, allowed);
    KT_ASSERT_EQ(t_finish(&t, NULL), 0);
    pcache_get_stats(&after);
    KT_ASSERT_EQ(r, 0);
    /* The unmount released the file's last references: its pages went. */
    KT_ASSERT_EQ(after.purged - before.purged, 2);
    KT_ASSERT(after.writebacks - before.writebacks >= 2);
    return 0;
}

static int coherence_body(struct s5t *t)
{
    struct vnode *vp;
    KT_ASSERT_EQ(make_file(t, "coh", 2 * PAGE_SIZE, &vp), 0);
    struct as *a = as_create(), *c = as_create();
    KT_ASSERT(a && c);
    KT_ASSERT_EQ(as_map(a, TVA, 2 * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                        vp, 0, 0), TVA);
    KT_ASSERT_EQ(as_map(c, TVA, 2 * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED,
                        vp, 0, ~0UL), TVA);
    char got[8] = { 0 };
    use_as(a);
    int e1 = copyin((void *)(TVA + PAGE_SIZE), got, 1);
    use_as(NULL);
    KT_ASSERT_EQ(e1, 0);

    /* A write reaches the mapped page. */
    size_t done;
    KT_ASSERT_EQ(t_io(vp, true, "abc", 3, PAGE_SIZE + 5, 0, &done), 0);
    use_as(a);
    e1 = copyin((void *)(TVA + PAGE_SIZE + 5), got, 3);
    use_as(NULL);
    KT_ASSERT_EQ(e1, 0);
    KT_ASSERT(!memcmp(got, "abc", 3));

    /* Private: the cached page read-only, then a copy of its own. */
    use_as(c);
    e1 = copyin((void *)TVA, got, 2);
    use_as(NULL);
    bool w;
    struct page *pc = pcache_lookup(vp, 0);
    KT_ASSERT(pc && as_lookup_page(c, TVA, &w) == pc && !w);
    use_as(c);
    int e2 = copyout("PRIV", (void *)TVA, 4);
    use_as(NULL);
    KT_ASSERT(!e1 && !e2);
    KT_ASSERT(as_lookup_page(c, TVA, &w) != pc && w);
    page_rele(pc);
    char back[8] = { 0 };
    KT_ASSERT_EQ(t_io(vp, false, back, 4, 0, 0, &done), 0);
    KT_ASSERT(!memcmp(back, "abcd", 4));
    as_destroy(c);

    /* Shrink into the first page, as a's own thread. */
    use_as(a);
    KT_ASSERT_EQ(VOP_TRUNCATE(vp, 100, kcred), 0);
    KT_ASSERT_EQ(vp->v_npages, 1);
    char zero[4] = { 1, 1, 1, 1 };
    e1 = copyin((void *)(TVA + 200), zero, 4);
    e2 = copyin((void *)(TVA + PAGE_SIZE), got, 1);
    use_as(NULL);
    KT_ASSERT_EQ(e1, 0);
    KT_ASSERT(!zero[0] && !zero[1] && !zero[2] && !zero[3]);
    KT_ASSERT_EQ(e2, -EFAULT);
    KT_ASSERT_EQ(as_fault(a, TVA + PAGE_SIZE, FA_READ), -ENXIO);
    /* Grow: the page comes back as zeros. */
    KT_ASSERT_EQ(VOP_TRUNCATE(vp, 2 * PAGE_SIZE, kcred), 0);
    use_as(a);
    e1 = copyin((void *)(TVA + PAGE_SIZE + 5), got, 3);
    use_as(NULL);
    KT_ASSERT_EQ(e1, 0);
    KT_ASSERT(!got[0] && !got[1] && !got[2]);
    as_destroy(a);
    VN_RELE(vp);
    return 0;
}

KTEST(pcache_coherence)
{
    return t_on_fresh(2048, 64, coherence_body);
}

/* ---- pcache_rmap ---- */

/* Store len bytes of src at va in as, as its own thread would. */
static int store_in(struct as *as, vaddr_t va, const char *src, size_t len)
{
    use_as(as);
    int e = copyout(src, (void *)va, len);
    use_as(NULL);
    return e;
}

static int rmap_body(struct s5t *t)
{
    struct vnode *vp;
    KT_ASSERT_EQ(make_file(t, "rmap", 3 * PAGE_SIZE, &vp), 0);
    struct as *a = as_create(), *b = as_create(), *c = as_create();
    KT_ASSERT(a && b && c);
    const int rw = PROT_READ | PROT_WRITE;
    KT_ASSERT_EQ(as_map(a, TVA, 3 * PAGE_SIZE, rw, MAP_SHARED | MAP_FIXED, vp, 0, 0), TVA);
    KT_ASSERT_EQ(as_map(b, TVA, 3 * PAGE_SIZE, rw, MAP_SHARED | MAP_FIXED, vp, 0, 0), TVA);
    KT_ASSERT_EQ(as_map(c, TVA, 3 * PAGE_SIZE, PROT_READ, MAP_PRIVATE | MAP_FIXED, vp, 0,
                        ~0UL), TVA);
    uint64_t unmapped0, harvested0, unmapped1, harvested1;
    rmap_stats(&unmapped0, &harvested0);

    /* b's store reaches the file by an fsync from no address space. */
    KT_ASSERT_EQ(store_in(b, TVA + 10, "BSTORE", 6), 0);
    char back[8] = { 0 };
    KT_ASSERT_EQ(read_raw(vp, back, 6, 10), 6);
    KT_ASSERT(memcmp(back, "BSTORE", 6) != 0);
    KT_ASSERT_EQ(VOP_FSYNC(vp, kcred), 0);
    KT_ASSERT_EQ(read_raw(vp, back, 6, 10), 6);
    KT_ASSERT(!memcmp(back, "BSTORE", 6));
    /* ... and by a's msync, a having never touched the page. */
    KT_ASSERT_EQ(store_in(b, TVA + PAGE_SIZE + 20, "AGAIN", 5), 0);
    KT_ASSERT_EQ(as_sync(a, TVA, 3 * PAGE_SIZE, MS_SYNC), 0);
    KT_ASSERT_EQ(read_raw(vp, back, 5, PAGE_SIZE + 20), 5);
    KT_ASSERT(!memcmp(back, "AGAIN", 5));
    rmap_stats(&unmapped1, &harvested1);
    KT_ASSERT(harvested1 - harvested0 >= 2);

    /* Every address space maps page 2, then a fork of b's. */
    char got[4];
    struct as *three[] = { a, b, c };
    for (int i = 0; i < 3; i++) {
        use_as(three[i]);
        int e = copyin((void *)(TVA + 2 * PAGE_SIZE), got, 1);
        use_as(NULL);
        KT_ASSERT_EQ(e, 0);
        KT_ASSERT(as_lookup_page(three[i], TVA + 2 * PAGE_SIZE, NULL) != NULL);
    }
    int err = 0;
    struct as *child = as_dup(b, &err);
    KT_ASSERT(child != NULL);
    KT_ASSERT(as_lookup_page(child, TVA + 2 * PAGE_SIZE, NULL) != NULL);

    /* A truncation into page 1, by a thread with no address space. */
    KT_ASSERT_EQ(VOP_TRUNCATE(vp, PAGE_SIZE + 100, kcred), 0);
    struct as *all[] = { a, b, c, child };
    for (int i = 0; i < 4; i++) {
        KT_ASSERT(as_lookup_page(all[i], TVA + 2 * PAGE_SIZE, NULL) == NULL);
        KT_ASSERT_EQ(as_fault(all[i], TVA + 2 * PAGE_SIZE, FA_READ), -ENXIO);
        KT_ASSERT_EQ(as_fault(all[i], TVA + PAGE_SIZE, FA_READ), 0);    /* still in the file */
    }
    rmap_stats(&unmapped0, &harvested0);
    KT_ASSERT(unmapped0 - unmapped1 >= 4);
    for (int i = 0; i < 4; i++)
        as_destroy(all[i]);
    VN_RELE(vp);
    return 0;
}

KTEST(pcache_rmap)
{
    return t_on_fresh(2048, 64, rmap_body);
}

/* ---- pcache_mp ---- */

#define MP_PAGES  6
#define MP_ROUNDS 40
#define MP_WOFF   2048      /* write(2)'s slots start here in each page */

struct mp_arg {
    struct vnode *vp;
    int id;
    int error;
    const char *what;
};

/*
 * One CPU: its own address space mapping the file shared; each round it
 * stores into its slot of every page through the mapping, writes its slot
 * of the write(2) area of every page with VOP_WRITE and reads that back
 * through the mapping, and now and then msyncs -- while the other CPUs do
 * the same to the same pages.  At the end as_destroy writes back.
 */
static void mp_body(void *p)
{
    struct mp_arg *a = p;
    struct as *as = as_create();
    if (!as || as_map(as, TVA, MP_PAGES * PAGE_SIZE, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_FIXED, a->vp, 0, 0) != (int64_t)TVA) {
        a->error = -ENOMEM;
        a->what = "map";
        if (as)
            as_destroy(as);
        return;
    }
    use_as(as);
    for (uint64_t round = 1; round <= MP_ROUNDS && !a->error; round++) {
        uint64_t v = ((uint64_t)a->id << 32) | round, w = v | (1UL << 63), got = 0;
        for (int pg = 0; pg < MP_PAGES && !a->error; pg++) {
            char *slot = (char *)TVA + pg * PAGE_SIZE + a->id * 8;
            size_t done;
            if (copyout(&v, slot, 8)) {
                a->error = -EFAULT;
                a->what = "store";
            } else if (t_io(a->vp, true, &w, 8, pg * PAGE_SIZE + MP_WOFF + a->id * 8, 0, &done)) {
                a->error = -EIO;
                a->what = "write";
            } else if (copyin(slot + MP_WOFF, &got, 8) || got != w) {
                a->error = -EILSEQ;
                a->what = "the write is not in the mapping";
            }
        }
        if (!a->error && round % 8 == 0 && as_sync(as, TVA, MP_PAGES * PAGE_SIZE, MS_SYNC)) {
            a->error = -EIO;
            a->what = "msync";
        }
    }
    use_as(NULL);
    as_destroy(as);
}

KTEST(pcache_mp)
{
    static struct mp_arg args[MAX_CPUS];
    static struct thread *th[MAX_CPUS];
    struct s5t t;
    KT_ASSERT_EQ(t_fresh(&t, 2048, 64), 0);
    struct vnode *vp;
    int n = MIN(ncpus_online, (int)(MP_WOFF / 8));
    KT_ASSERT_EQ(make_file(&t, "mp", MP_PAGES * PAGE_SIZE, &vp), 0);
    for (int i = 0; i < n; i++) {
        args[i] = (struct mp_arg){ .vp = vp, .id = i };
        th[i] = thread_create("pcache_mp", mp_body, &args[i], 1UL << i);
    }
    for (int i = 0; i < n; i++)
        if (th[i])
            thread_join(th[i]);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        if (!th[i] || args[i].error) {
            ktest_fail("cpu %d: %s: error %d", i, th[i] ? args[i].what : "no thread",
                       args[i].error);
            bad = 1;
        }
    }
    /* The file itself (past the cache) holds every CPU's last values. */
    for (int pg = 0; pg < MP_PAGES && !bad; pg++) {
        for (int i = 0; i < n; i++) {
            uint64_t v = 0, w = 0, want = ((uint64_t)i << 32) | MP_ROUNDS;
            KT_ASSERT_EQ(read_raw(vp, &v, 8, pg * PAGE_SIZE + i * 8), 8);
            KT_ASSERT_EQ(read_raw(vp, &w, 8, pg * PAGE_SIZE + MP_WOFF + i * 8), 8);
            KT_ASSERT_EQ(v, want);
            KT_ASSERT_EQ(w, want | (1UL << 63));
        }
    }
    KT_ASSERT_EQ(vp->v_npages, MP_PAGES);
    VN_RELE(vp);
    KT_ASSERT_EQ(t_finish(&t, NULL), 0);
    KT_ASSERT(!bad);
    return 0;
}
