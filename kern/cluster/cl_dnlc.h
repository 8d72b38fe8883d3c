/*
 * The clustered DNLC (cluster=): one name cache per cluster, names
 * replicated into the clusters that look them up.  Theory in
 * kern/cluster/cl_dnlc.c.  kern/vfs/dnlc.c calls these in place of its
 * own cache when cluster_on(); the interface is dnlc.h's.
 */
#ifndef KERN_CLUSTER_CL_DNLC_H
#define KERN_CLUSTER_CL_DNLC_H

#include <kern/lib/types.h>

struct vnode;
struct vfs;
struct cred;
struct dnlc_stats;

void cl_dnlc_init(void);
struct vnode *cl_dnlc_lookup(struct vnode *dvp, const char *name, struct cred *cr);
void cl_dnlc_enter(struct vnode *dvp, const char *name, struct vnode *vp, struct cred *cr);
void cl_dnlc_remove(struct vnode *dvp, const char *name);
void cl_dnlc_purge_vp(struct vnode *vp);
int cl_dnlc_reverse(struct vnode *vp, struct vnode **dvpp, char *name, size_t size);
int cl_dnlc_purge_vfsp(struct vfs *vfsp, int count);
int cl_dnlc_purge1(void);
void cl_dnlc_purge(void);
void cl_dnlc_stats_get(struct dnlc_stats *out);

/* For tests: the home cluster of a name, and how many clusters hold an
 * entry (home or replica) for it with this credential. */
int cl_dnlc_home(struct vnode *dvp, const char *name);
int cl_dnlc_copies(struct vnode *dvp, const char *name, struct cred *cr);

#endif
