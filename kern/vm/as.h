/*
 * User address spaces in the SVR4 style: a struct as holds a sorted list
 * of segments, each a range of user addresses with one protection and one
 * backing (anonymous memory, or a vnode's pages in the page cache, shared
 * or copied on write), and the 4-level page tables of the user half.
 * Theory and locking in kern/vm/as.c; the page cache is kern/vm/pcache.c.
 *
 * Lock key:
 *   [l]  as->a_lock, the address space's resource lock (held across the
 *        sleeps of a fault that reads a file)
 *   [a]  atomic operations
 *   [c]  constant after creation
 */
#ifndef KERN_VM_AS_H
#define KERN_VM_AS_H

#include <kern/lib/types.h>
#include <kern/lock/sleep.h>
#include <kern/vm/page.h>

struct vnode;
struct page;

#define PROT_NONE   0x0
#define PROT_READ   0x1
#define PROT_WRITE  0x2
#define PROT_EXEC   0x4

#define MAP_SHARED      0x01
#define MAP_PRIVATE     0x02
#define MAP_FIXED       0x10
#define MAP_ANONYMOUS   0x20
#define MAP_NORESERVE   0x4000
#define MAP_FIXED_NOREPLACE 0x100000
#define MAP_FAILED      ((vaddr_t)-1)
/* Kernel-internal (sys_mmap never passes it from user space): the file of
 * a shared mapping was opened without write access, so the mapping may
 * never be made writable (mprotect says -EACCES). */
#define MAP_KERN_NOWRITE 0x80000000

/* msync flags */
#define MS_ASYNC        1
#define MS_INVALIDATE   2
#define MS_SYNC         4

/* User addresses are [USER_MIN, USER_TOP): the lower canonical half less
 * its last page (so SYSRET never returns to a non-canonical rip) and the
 * first 64 KiB (null pointers fault). */
#define USER_MIN        0x10000UL
#define USER_TOP        0x00007ffffffff000UL
#define USER_STACK_TOP  USER_TOP
#define USER_STACK_SIZE (8UL << 20)
#define USER_MMAP_TOP   (USER_STACK_TOP - USER_STACK_SIZE - (1UL << 30))

/* Fault access bits for as_fault. */
#define FA_READ  0x0
#define FA_WRITE 0x1
#define FA_EXEC  0x2

/* Anonymous pages of a MAP_SHARED|MAP_ANONYMOUS segment, shared by every
 * address space the segment was inherited into; each page is held by the
 * amap and by each PTE that maps it (page->count). */
struct amap {
    int am_ref;                     /* [a] segments using it, and its owner */
    struct mutex am_lock;           /* am_pages */
    size_t am_npages;               /* [am_lock] written (it grows: amap_grow), [a] read */
    struct page **am_pages;         /* [am_lock] NULL: not yet touched */
    /* An owned amap (amap_set_owner): told, by cookie, of each segment
     * that lets go of it. */
    void (*am_unref)(uint64_t cookie);  /* [c] */
    uint64_t am_cookie;                 /* [c] */
};

struct seg {
    struct seg *s_next;             /* [l] sorted by s_start */
    vaddr_t s_start, s_end;         /* [l] page aligned */
    int s_prot;                     /* [l] PROT_* */
    int s_flags;                    /* [l] MAP_SHARED or MAP_PRIVATE, MAP_ANONYMOUS,
                                     * MAP_KERN_NOWRITE */
    struct vnode *s_vp;             /* [c] file backing (held), or NULL */
    uint64_t s_off;                 /* [l] file offset of s_start (page aligned) */
    uint64_t s_flen;                /* [l] private: file bytes from s_start; the rest
                                     * reads as zeros (an ELF segment's bss) */
    struct amap *s_amap;            /* [c] shared anonymous pages, or NULL */
    uint64_t s_amap_off;            /* [l] page index in s_amap of s_start */
    struct mempolicy s_policy;      /* [l] mbind's NUMA policy for its pages; MPOL_DEFAULT:
                                     * the faulting thread's (kern/proc/sys_mempolicy.c) */
    /* Reverse mappings (kern/vm/rmap.c): a vnode segment is on its
     * file's chain while it lives. */
    struct seg *s_rnext;            /* [rmap row lock] */
    struct as *s_as;                /* [l] its address space; NULL: not linked */
};

struct as {
    struct rlock a_lock;
    uint64_t *a_pml4;               /* [c] top table (direct-map address) */
    paddr_t a_root;                 /* [c] its physical address, for CR3 */
    struct seg *a_segs;             /* [l] */
    volatile uint64_t a_cpumask;    /* [a] CPUs that have loaded a_root and may hold its TLB entries */
    vaddr_t a_brk_base, a_brk;      /* [l] program break */
    uint64_t a_rss;                 /* [l] pages mapped */
    struct vnode *a_exe;            /* [c] the program file it runs, held and denied
                                       writers (ETXTBSY) until it goes; or NULL */
    struct page *a_tables;          /* [l] its page tables below the top one, linked
                                     * by page->next, so exit frees them without
                                     * scanning every slot (pt_walk, as_destroy) */
    int a_holds;                    /* [a] 1 until as_destroy, plus one per walk of
                                     * the reverse mappings visiting it (kern/vm/rmap.c) */
};

/* A new, empty address space sharing the kernel half; NULL on no memory. */
struct as *as_create(void);
/* Free every segment, page and table.  No CPU may be using it. */
void as_destroy(struct as *as);
/* exec: as runs the program file vp (held, denied writers until as goes):
 * 0 or -ETXTBSY when vp is open for writing. */
int as_set_exe(struct as *as, struct vnode *vp);
/* fork: a copy of as, private pages shared copy-on-write.  NULL and *err. */
struct as *as_dup(struct as *as, int *err);

/* Add a mapping.  va == 0 without MAP_FIXED: find room below
 * USER_MMAP_TOP.  MAP_FIXED replaces what was there (after writing its
 * shared file pages back); MAP_FIXED_NOREPLACE fails with -EEXIST
 * instead.  vp: a file mapping from off (page aligned); a private one
 * takes flen bytes of the file and zeros after them, a shared one the
 * file itself.  Returns the address or a negative errno. */
int64_t as_map(struct as *as, vaddr_t va, size_t len, int prot, int flags, struct vnode *vp,
               uint64_t off, uint64_t flen);
/*
 * Shared anonymous memory owned by a subsystem other than mmap: a System V
 * shared memory segment (kern/ipc/shm.c) holds an amap, and each shmat
 * maps it as a MAP_SHARED segment of its own.  The amap counts the owner
 * and every segment that maps it (fork and a split segment add one), so
 * amap_refs() - 1 is Linux's shm_nattch.  The owner's unref function runs
 * after each segment lets go (munmap, shmdt, exec, exit), with the
 * address space's a_lock held: it may take locks that come after a_lock.
 */
/* A new amap of npages untouched pages, held once by the caller; NULL. */
struct amap *amap_alloc(size_t npages);
/* Register the owner's function; before the amap is ever mapped. */
void amap_set_owner(struct amap *am, void (*unref)(uint64_t cookie), uint64_t cookie);
void amap_hold(struct amap *am);
/* Let go of a reference; the last one frees the pages. */
void amap_rele(struct amap *am);
/* The references: the owner's and one per segment. */
int amap_refs(const struct amap *am);
/* Pages that have been touched (are in memory). */
size_t amap_resident(struct amap *am);
/* Map an owned amap from its first page: at va (MAP_FIXED replaces what
 * is there, MAP_FIXED_NOREPLACE fails with -EEXIST), or where there is
 * room when va is 0.  The new segment takes over one reference the
 * caller holds, on success only.  The address, or a negative errno. */
int64_t as_map_amap(struct as *as, vaddr_t va, size_t len, int prot, int flags,
                    struct amap *am);
/* The same from the amap's page first on (a memfd mapped at an offset). */
int64_t as_map_amap_at(struct as *as, vaddr_t va, size_t len, int prot, int flags,
                       struct amap *am, size_t first);
/* The amap's page idx, held (made, zeroed and placed by s's policy or the
 * thread's, when make): NULL past its end or without memory.  Grow it to
 * npages (0 or -ENOMEM).  Zero its pages from idx on, or free them when
 * nothing maps it (a memfd made shorter). */
struct page *amap_page_at(struct amap *am, size_t idx, const struct seg *s, vaddr_t va,
                          bool make);
int amap_grow(struct amap *am, size_t npages);
void amap_zero_from(struct amap *am, size_t idx, bool free_pages);
/* shmdt: unmap every segment of the owned amap mapped from its first page
 * at va, within its size from va.  0, or -EINVAL when no such mapping
 * starts at va. */
int as_unmap_amap(struct as *as, vaddr_t va);

/* munmap: stores through shared file mappings in the range reach the
 * file before it returns. */
int as_unmap(struct as *as, vaddr_t va, size_t len);
int as_protect(struct as *as, vaddr_t va, size_t len, int prot);
/* mremap, its arguments checked and page aligned: shrink in place, grow
 * in place when the pages after the segment are free, else (MAYMOVE)
 * move the segment and its pages where there is room, or to newaddr
 * (FIXED: replacing what is there; it must not overlap the old range);
 * DONTUNMAP leaves the old range mapped without its pages.  The range
 * must lie in one segment (-EFAULT).  The new address or a
 * negative errno (-ENOMEM: no room, or growing shared anonymous memory). */
#define MREMAP_MAYMOVE   1
#define MREMAP_FIXED     2
#define MREMAP_DONTUNMAP 4
int64_t as_remap(struct as *as, vaddr_t old, size_t oldlen, size_t newlen, int flags,
                 vaddr_t newaddr);
/* msync: write back the files of the shared file mappings of the range,
 * with the stores every address space made through its mappings of them.
 * -ENOMEM when part of it is unmapped. */
int as_sync(struct as *as, vaddr_t va, size_t len, int flags);
/* mincore: for each of npages pages from va (page aligned), 1 in vec if
 * it is in memory (mapped, in the page cache, in its amap), else 0;
 * -ENOMEM at the first page no segment holds. */
int as_mincore(struct as *as, vaddr_t va, size_t npages, uint8_t *vec);
/* /proc/PID/numa_maps: the pages segment s of as maps (a_lock held), on
 * each node, how many are anonymous and how many written since mapped. */
struct as_numa_counts {
    uint64_t pages, anon, dirty;
    uint64_t node[64];          /* MAX_NODES */
};
void as_numa_count(struct as *as, struct seg *s, struct as_numa_counts *c);

/* Page migration (kern/vm/migrate.c).  as_page_node: the node of the
 * page at va, -EFAULT with no mapping, -ENOENT with no page there.
 * as_migrate_page: move it to node; the node, or -EFAULT, -ENOENT,
 * -EACCES (mapped elsewhere too), -EBUSY (the file cache's), -ENOMEM.
 * as_migrate_nodes: move every page on a node of from that no node of to
 * holds to the matching node of to; the number that could not move. */
int as_page_node(struct as *as, vaddr_t va);
/* mbind: give [va, va + len) the policy pol (MPOL_DEFAULT: none of its
 * own), segments split at its ends; -EFAULT for a hole in it.  And the
 * policy of the mapping at va (MPOL_DEFAULT when it has none) with, in
 * *node when asked, the node it puts the page at va on first; -EFAULT
 * when nothing is mapped there. */
int as_set_policy(struct as *as, vaddr_t va, size_t len, const struct mempolicy *pol);
int as_policy_at(struct as *as, vaddr_t va, struct mempolicy *pol, int *node);
/* The node a page at va of a mapping with policy pol (not DEFAULT)
 * comes from first: INTERLEAVE's by the page's place in the mapping
 * (index: its page offset), the mask's lowest node otherwise. */
int mempolicy_node_for(const struct mempolicy *pol, uint64_t index);
int as_migrate_page(struct as *as, vaddr_t va, int node);
uint64_t as_migrate_nodes(struct as *as, uint64_t from, uint64_t to);
/* Is all of [va, va + len) (widened to pages) mapped?  0, or -ENOMEM
 * for a hole or an address past user space (mlock, mincore). */
int as_check_mapped(struct as *as, vaddr_t va, size_t len);
/* The struct as stays until its last hold goes (as_destroy drops the
 * first): the reverse-map walks hold the address spaces they visit. */
void as_hold(struct as *as);
void as_rele(struct as *as);
/* brk: 0 queries; returns the new (or unchanged) break. */
vaddr_t as_set_brk(struct as *as, vaddr_t newbrk);

/* Resolve a fault at va: 0, -EFAULT (no segment), -EACCES (the
 * segment's protection forbids the access), -ENXIO (a file page wholly
 * past the end of the file: SIGBUS), another errno (the file could not be
 * read: SIGBUS) or -ENOMEM (no page, and the pageout daemons found no file
 * page to take back: the process is out of memory). */
int as_fault(struct as *as, vaddr_t va, int access);

/* Load as (NULL: the kernel's tables alone) on this CPU, keeping the CPU
 * masks right.  Called by the context switch and by exit/exec. */
void as_activate(struct as *as);
/* The address space loaded on this CPU, or NULL. */
struct as *as_current(void);

/* The physical page mapped at va, or NULL (tests). */
struct page *as_lookup_page(struct as *as, vaddr_t va, bool *writable);

/* fn on the kernel's view of the user word at va (4-byte aligned), the
 * page present and writable and held mapped while fn runs (futexes' atomic
 * operations): fn's result, -EFAULT or -ENOMEM. */
int as_user_word(struct as *as, vaddr_t va, int (*fn)(uint32_t *word, void *arg), void *arg);

/* Copy len bytes between another address space's user memory at va and
 * kbuf (write: into as), faulting its pages in as its own accesses would
 * (a write to a copy-on-write page copies it): the bytes moved before
 * the first page that cannot be (process_vm_readv), or -EFAULT for none. */
int64_t as_copy_remote(struct as *as, vaddr_t va, char *kbuf, size_t len, bool write);
/* ptrace's write into as (Linux's FOLL_FORCE): as as_copy_remote's, but a
 * private mapping is written whatever its protection, through a private
 * copy of the page (a breakpoint in read-only text reaches neither the
 * file nor a forked process); a shared one only when it is writable. */
int64_t as_poke_remote(struct as *as, vaddr_t va, const char *kbuf, size_t len);

/* Statistics: TLB shootdown IPIs sent in all. */
uint64_t as_shootdown_ipis(void);

/* Copy-on-write: allocate pages from the faulting CPU's node. */

/* User memory access (kern/vm/copy.c): 0 or -EFAULT for any bad user
 * pointer (kernel address, unmapped, protection). */
int copyin(const void *uaddr, void *kaddr, size_t len);
int copyout(const void *kaddr, void *uaddr, size_t len);
/* Copy a NUL-terminated string of at most max bytes (NUL included):
 * length without the NUL, -EFAULT, or -ENAMETOOLONG when too long. */
long copyinstr(const char *uaddr, char *kaddr, size_t max);
/* Copy an extensible structure (clone3's, sched_setattr's): usize bytes
 * from the user into ksize bytes, zero-filling what the user's is short
 * of; bytes the user gives beyond ksize must be zero.  0, -EFAULT, or
 * -E2BIG for a nonzero byte past ksize (Linux's copy_struct_from_user). */
int copyin_struct(void *kaddr, size_t ksize, const void *uaddr, size_t usize);

struct trapframe;
/* How a fault is resolved: as_fault, and whatever the caller does when
 * memory is out (the OOM killer's victims, kern/proc/syscall.c).  0 or
 * as_fault's error. */
typedef int (*fault_resolver)(struct as *as, vaddr_t addr, int access);
/* The page-fault handler for faults in kernel mode: resolves demand faults
 * inside the copy routines by resolve, or moves them to their -EFAULT
 * exit.  False when the fault is not ours (a kernel bug: the caller
 * panics).  *errp is the fault's result: 0 resolved, -ENOMEM out of memory
 * even after resolve's victims (the caller kills the process), another
 * error the copy's -EFAULT. */
bool copy_fault_fixup(struct trapframe *tf, vaddr_t addr, fault_resolver resolve, int *errp);

extern bool smap_enabled;

#endif
