/*
 * What the event objects (kern/event/) share: Linux's "anonymous
 * inode" face -- mode 0600 with no file type, a fresh inode number, one
 * open file per object made by the system call that makes the object.
 */
#include <kern/event/event.h>
#include <kern/proc/proc.h>
#include <kern/vfs/vfs.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

#define O_CLOEXEC_FD FD_CLOEXEC

static volatile uint64_t next_anon_ino = 1;

uint64_t anon_ino(void)
{
    return __atomic_fetch_add(&next_anon_ino, 1, __ATOMIC_RELAXED);
}

int anon_getattr(struct vnode *vp, struct vattr *va, uint64_t ino)
{
    memset(va, 0, sizeof *va);
    va->va_type = VNON;
    va->va_mode = 0600;
    va->va_nlink = 1;
    va->va_ino = ino;
    va->va_blksize = PAGE_SIZE;
    va->va_fsid = 0x414e4f4e;       /* "ANON" */
    return 0;
}

int anon_install(struct vnode *vp, int oflags, bool cloexec)
{
    struct file *fp = file_alloc(vp, oflags);
    if (!fp) {
        vn_close(vp, oflags, curproc()->p_cred);
        return -ENOMEM;
    }
    int fd = fd_install(curproc(), fp, 0, cloexec ? O_CLOEXEC_FD : 0);
    if (fd < 0)
        file_rele(fp);
    return fd;
}

int anon_open(struct vnode **vpp, int flags, struct cred *cr) { return 0; }
int anon_close(struct vnode *vp, int flags, struct cred *cr) { return 0; }
int anon_access(struct vnode *vp, int mode, struct cred *cr) { return 0; }
int anon_ioctl(struct vnode *vp, unsigned long cmd, void *arg, struct cred *cr) { return -ENOTTY; }
int anon_einval(void) { return -EINVAL; }
int anon_notdir(void) { return -ENOTDIR; }
