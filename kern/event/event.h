/*
 * Event objects: epoll (kern/event/epoll.c) and eventfd
 * (kern/event/eventfd.c), Linux's "anonymous inodes": vnodes with no file
 * system and no offset (VNOSEEK), which a descriptor names and
 * /proc/PID/fd shows as anon_inode:[NAME].
 */
#ifndef KERN_EVENT_EVENT_H
#define KERN_EVENT_EVENT_H

#include <kern/lib/types.h>
#include <kern/vfs/vnode.h>

struct file;

/* The last reference to fp is going: take it out of every epoll set. */
void epoll_file_gone(struct file *fp);
/* vp announced a change (vn_poll_notify, kern/proc/sys_poll.c): the epoll
 * items watching it are looked at on their sets' next wait.  Any context. */
void epoll_notify(struct vnode *vp);
/* Boot: the event objects' locks. */
void event_init(void);

/* Shared by the event objects: the attributes of an anonymous inode
 * (mode 0600, no type bits, as Linux's), and a fresh inode number. */
int anon_getattr(struct vnode *vp, struct vattr *va, uint64_t ino);
uint64_t anon_ino(void);
/* Install a new open file of vp (one reference, which passes to it):
 * the descriptor, or -errno (vp released). */
int anon_install(struct vnode *vp, int oflags, bool cloexec);

#endif
