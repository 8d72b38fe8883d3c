/* Pseudo-terminals and devpts (theory in kern/pty/pty.c). */
#ifndef KERN_PTY_PTY_H
#define KERN_PTY_PTY_H

#include <kern/lib/types.h>

struct vnode;
struct cred;
struct tty;

/* The master's own ioctls (Linux's numbers), on a kernel int. */
#define PTY_TIOCGPTN   0x80045430U      /* the slave's number */
#define PTY_TIOCSPTLCK 0x40045431U      /* lock (non-zero) or unlock the slave */
#define PTY_TIOCPKT    0x5420U          /* packet mode on or off */
#define PTY_FIONREAD   0x541BU          /* bytes waiting to be read */
#define PTY_TIOCGPTPEER 0x5441U         /* open the slave (kern/proc/sys_fd.c) */

/* Boot: register devpts (the kernel mounts it on /dev/pts). */
void pty_init(void);
/* /dev/ptmx's open (devfs): a new pair, *vpp replaced by its master
 * (the ptmx node's reference let go); -ENOSPC when all are in use,
 * -ENODEV without devpts mounted. */
int pty_open_master(struct vnode **vpp, int flags, struct cred *cr);
/* Is vp a master?  The terminal behind a master or slave vnode, or NULL
 * for any other vnode. */
bool pty_is_master(const struct vnode *vp);
struct tty *pty_tty_of(const struct vnode *vp);
/* The slave's vnode (held) of a master, or of a pty's tty (NULL for the
 * console, or without memory). */
struct vnode *pty_slave_of(struct vnode *master);
struct vnode *pty_slave_of_tty(struct tty *t);

#endif
