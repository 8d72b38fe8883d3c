/*
 * Segmap: kernel windows onto file pages, looked up by (vnode, page
 * number) and reference counted, under the cache= locking model.  The
 * theory, the three models and the locks are in kern/vm/segmap.c.
 */
#ifndef KERN_VM_SEGMAP_H
#define KERN_VM_SEGMAP_H

#include <kern/lib/types.h>

struct vnode;
struct smap;

/* Boot: size the windows from memory and build the structure of
 * opts.cache (after pcache_init). */
void segmap_init(void);

/*
 * A window onto page idx of vp (bytes [idx * PAGE_SIZE, +PAGE_SIZE)),
 * with a reference for the caller: *addrp is the window's kernel address
 * (the page's first byte).  A hit finds the window already open; a miss
 * gets the page from the page cache (pcache_get, which reads it from the
 * file) and opens a window on it, reusing the least recently used free
 * window.  0, or pcache_get's error (-ENXIO wholly past the end of the
 * file, -ENOMEM, the file system's).  May sleep: never call it holding a
 * spin lock.  Several threads may hold one window at once.
 */
int segmap_getmap(struct vnode *vp, uint64_t idx, struct smap **smp, char **addrp);

/* segmap_getmapf flags */
#define SM_CREATE 0x10  /* a page wholly past the end of the file is a zero page
                         * (a write is about to extend the file over it) */
#define SM_LOCKED 0x20  /* the caller holds vp's fill lock (pcache_fill_lock) */
int segmap_getmapf(struct vnode *vp, uint64_t idx, int flags, struct smap **smp, char **addrp);

/* segmap_release flags */
#define SM_DIRTY 0x1    /* the caller stored into the window: the page must be written back */

/* Drop the caller's reference; the last one puts the window on its free
 * list, still open (a later getmap of the same page is a hit). */
void segmap_release(struct smap *sm, int flags);

/* Close every window onto pages of vp numbered idx >= from (a truncation,
 * or the file's last release): their page references go.  A window still
 * held is closed at its last release.  Spin locks only. */
void segmap_purge(struct vnode *vp, uint64_t from);

/* Memory is short: close up to want of the least recently used free
 * windows (one per free list visited), so that the page cache can free
 * their pages.  How many it closed.  Spin locks only. */
uint64_t segmap_shrink(uint64_t want);

/* The page a held window shows (tests). */
struct page *segmap_page(struct smap *sm);

/* Counters, summed over the CPUs. */
struct segmap_stats {
    uint64_t hits;          /* the page was in a window */
    uint64_t misses;        /* it was not: a window was (re)opened */
    uint64_t waits;         /* a miss slept because every window of its list was held */
    uint64_t purged;        /* windows closed by segmap_purge */
    uint64_t windows;       /* [c] windows in all */
    uint64_t open;          /* windows open (onto a page) now */
};
void segmap_get_stats(struct segmap_stats *st);

/* The geometry, for the tests: windows, hash rows, free lists, and how
 * many windows one free list holds (ssac: the row's 4). */
void segmap_test_geometry(int *nwin, int *nrows, int *nlists, int *per_list);
/* Which free list (victim domain) page idx of vp draws its window from. */
unsigned segmap_test_list_of(struct vnode *vp, uint64_t idx);

/* kbench=segmap (kern/vm/segmap_bench.c): cache-bound file I/O at 1, 2
 * and all CPUs, ops/s and segmap's lock classes. */
void segmap_bench_run(void);

#endif
