/*
 * Signal-driven I/O (kern/proc/sigio.c has the theory).
 *
 * Lock key: [a] atomic operations only; [sigio_lock] the sigio list's
 * spin lock.
 */
#ifndef KERN_PROC_SIGIO_H
#define KERN_PROC_SIGIO_H

#include <kern/lib/types.h>

struct vnode;

/* Signal-driven I/O (kern/proc/sigio.c): what an object that sends SIGIO
 * keeps (a socket's so_sigio).  Its vnode is held while it is queued. */
struct sigio {
    int sg_owner;               /* [a] the owner (the file's F_SETOWN) */
    bool sg_async;              /* [a] its file has O_ASYNC */
    struct sigio *sg_next;      /* [sigio_lock] the list of signals to send */
    bool sg_queued;             /* [sigio_lock] */
    struct vnode *sg_vp;        /* [sigio_lock] held while queued */
};

/* A change of events (POLL_READSIDE, POLL_WRITESIDE, POLLHUP) in the
 * object of vp, which the caller holds: SIGIO to its owner if its file
 * asked (any lock may be held; the sigio thread sends it). */
void sigio_post(struct sigio *sg, struct vnode *vp, short events);
void sigio_init(void);

#endif
