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
/* fcntl F_NOTIFY (kern/event/inotify.c): register fp's directory for the
 * DN_* events in arg (none: end it); 0, -ENOTDIR or -ENOMEM.  And the
 * end of fp's registrations at its last release. */
int dnotify_set(struct file *fp, uint32_t arg);
void dnotify_file_gone(struct file *fp);
/* memfd_create's files (kern/event/memfd.c): is vp one; its mmap (MAP_SHARED
 * only: the address or -errno); F_ADD_SEALS (add) and F_GET_SEALS: the
 * seals or 0, or -EINVAL (not a memfd), -EPERM, -EBUSY. */
bool vn_is_memfd(const struct vnode *vp);
int64_t memfd_mmap(struct vnode *vp, uint64_t addr, size_t len, int prot, int flags, uint64_t off);
int memfd_seals(struct vnode *vp, bool add, uint32_t seals);
/* vp announced a change (vn_poll_notify, kern/proc/sys_poll.c): the epoll
 * items watching it are looked at on their sets' next wait.  Any context. */
void epoll_notify(struct vnode *vp);
/* Boot: the event objects' locks; inotify's hook in the VFS. */
void event_init(void);
void inotify_init(void);

/* Shared by the event objects: the attributes of an anonymous inode
 * (mode 0600, no type bits, as Linux's), and a fresh inode number. */
int anon_getattr(struct vnode *vp, struct vattr *va, uint64_t ino);
uint64_t anon_ino(void);
/* What no event object does: opening again is allowed, access is
 * granted, ioctl is ENOTTY, attributes and data cannot be set (EINVAL),
 * and a name lookup is ENOTDIR.  An object's vnodeops start with
 * ANON_VNODEOPS_COMMON and add its own read, write, ioctl, close, poll,
 * getattr, inactive and fdname. */
int anon_open(struct vnode **vpp, int flags, struct cred *cr);
int anon_close(struct vnode *vp, int flags, struct cred *cr);
int anon_access(struct vnode *vp, int mode, struct cred *cr);
int anon_ioctl(struct vnode *vp, unsigned long cmd, void *arg, struct cred *cr);
int anon_einval(void);
int anon_notdir(void);
#define ANON_VNODEOPS_COMMON \
    .vop_open = anon_open, \
    .vop_setattr = (void *)anon_einval, \
    .vop_access = anon_access, \
    VNODEOPS_NOT_A_DIRECTORY, \
    .vop_readlink = (void *)anon_notdir, \
    .vop_fsync = (void *)anon_einval, \
    .vop_truncate = (void *)anon_einval

/* Install a new open file of vp (one reference, which passes to it):
 * the descriptor, or -errno (vp released). */
int anon_install(struct vnode *vp, int oflags, bool cloexec);

#endif
