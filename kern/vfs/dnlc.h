/*
 * The directory name lookup cache: (directory vnode, name, credential) ->
 * vnode.  A Software Set-Associative Cache (seed 001): a 2-D array of
 * entries, one spin lock per row, LRU by access timestamps.  Theory and the
 * cache= models in kern/vfs/dnlc.c.
 *
 * Entries hold a reference (VN_HOLD) on both vnodes; purging an entry drops
 * them (VN_RELE, which may call VOP_INACTIVE).  File systems call
 * dnlc_lookup before searching a directory and dnlc_enter after, and purge
 * names they remove or rename.
 *
 * A negative entry (vp DNLC_NO_VNODE, as Solaris's DNLC keeps them) says
 * that dvp has no entry name: a search that found nothing enters one, and
 * the file system removes it (dnlc_remove) before it adds the name, under
 * the directory's lock both times.  It holds dvp alone.
 */
#ifndef KERN_VFS_DNLC_H
#define KERN_VFS_DNLC_H

#include <kern/lib/types.h>

struct vnode;
struct vfs;
struct cred;

#define DNLC_NAMELEN 31     /* longer names are not cached */

/* The vnode of a negative entry: never held, never released, never a
 * file's; only its address is used. */
extern struct vnode dnlc_no_vnode;
#define DNLC_NO_VNODE (&dnlc_no_vnode)

void dnlc_init(void);
/* The cached vnode with a new reference; DNLC_NO_VNODE (no reference)
 * when dvp is known to have no such name; NULL when nothing is cached. */
struct vnode *dnlc_lookup(struct vnode *dvp, const char *name, struct cred *cr);
/* Cache name in dvp -> vp (replacing the row's least recently used
 * entry), or, with DNLC_NO_VNODE, its absence (not under cluster=: the
 * clustered cache keeps no negative entries); a no-op for names over
 * DNLC_NAMELEN. */
void dnlc_enter(struct vnode *dvp, const char *name, struct vnode *vp, struct cred *cr);
/* Remove every entry for name in dvp (any credential). */
void dnlc_remove(struct vnode *dvp, const char *name);
/* Remove every entry naming vp or in directory vp. */
void dnlc_purge_vp(struct vnode *vp);
/* A name of vp the cache holds (not "." or ".."): its directory, held,
 * and the name, cut to size; -ENOENT when the cache has none.  For
 * /proc's links to open files, which Tempest keeps no names for. */
int dnlc_reverse(struct vnode *vp, struct vnode **dvpp, char *name, size_t size);
/* Remove up to count entries (0: all) of file system vfsp; returns the number removed. */
int dnlc_purge_vfsp(struct vfs *vfsp, int count);
/* Remove one entry, any (the least recently used of the next row in a
 * cycle through the rows); returns 1 if one was removed, 0 if empty. */
int dnlc_purge1(void);
/* Remove every entry. */
void dnlc_purge(void);

struct dnlc_stats {
    uint64_t lookups, hits, misses, enters, purges;
};
void dnlc_stats_get(struct dnlc_stats *out);

#endif
