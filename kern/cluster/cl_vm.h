/*
 * The anonymous-memory and page-table side of the fault path under
 * cluster=: pages from a pool per cluster.  Theory in kern/cluster/cl_vm.c.
 */
#ifndef KERN_CLUSTER_CL_VM_H
#define KERN_CLUSTER_CL_VM_H

#include <kern/lib/types.h>

struct page;

/* Boot, after cluster_init (only when cluster_on()). */
void cl_vm_init(void);
/* One page for a fault (an anonymous page, a private copy, a page-table
 * page) from this cluster's pool on the cluster's node; NULL when memory
 * is exhausted.  Any context that may take a spin lock. */
struct page *cl_page_alloc(void);

#endif
