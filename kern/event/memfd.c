/*
 * memfd_create: an anonymous file in memory, with Linux's file seals.
 *
 * Theory.  A memfd is a regular file with no name in any directory
 * (/proc/PID/fd shows "/memfd:NAME (deleted)", as Linux's): its bytes are
 * anonymous pages held in an amap (the structure System V shared memory
 * and MAP_SHARED|MAP_ANONYMOUS mappings use, kern/vm/as.c), page i of the
 * file being the amap's page i.  read, write, lseek, pread, pwrite,
 * ftruncate, fstat and fchmod work as on any file; a hole reads as zeros
 * and takes no page.  mmap with MAP_SHARED maps the amap itself, so every
 * mapping and read(2)/write(2) see the same pages; the amap grows to
 * cover the mapping (a page past the end of the file reads as zeros
 * there, where Linux would raise SIGBUS).  MAP_PRIVATE is not offered
 * (ENODEV, Linux's answer for a file that cannot be mapped).  Made
 * shorter, the file's pages past the end are freed, or zeroed while a
 * mapping still maps them.
 *
 * Seals (fcntl F_ADD_SEALS, F_GET_SEALS; MFD_ALLOW_SEALING, else the file
 * is born with F_SEAL_SEAL): F_SEAL_SHRINK and F_SEAL_GROW refuse a size
 * change that way (EPERM), F_SEAL_WRITE and F_SEAL_FUTURE_WRITE writes
 * and new writable shared mappings (EPERM); F_SEAL_WRITE is refused
 * while the file is mapped at all (EBUSY: Linux's rule counts writable
 * mappings only); F_SEAL_SEAL ends the adding.
 *
 * Locks.  m_lock (a sleep mutex, class "memfd", one per file) guards the
 * size, the seals and the amap's growth; the amap's own am_lock its
 * pages.  Order: m_lock, then am_lock.  The vnode lock the VOPs take
 * comes before both.
 */
#include <kern/vfs/vfs.h>
#include <kern/vfs/vnode.h>
#include <kern/vfs/cred.h>
#include <kern/vm/as.h>
#include <kern/vm/as_impl.h>
#include <kern/vm/kmem.h>
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/event/event.h>
#include <kern/lock/mutex.h>
#include <kern/lib/errno.h>
#include <kern/lib/string.h>
#include <kern/lib/kprintf.h>

#define MFD_CLOEXEC         0x1U
#define MFD_ALLOW_SEALING   0x2U
#define MFD_NAME_MAX        249         /* Linux's: NAME_MAX less "memfd:" */
#define F_SEAL_SEAL         0x01
#define F_SEAL_SHRINK       0x02
#define F_SEAL_GROW         0x04
#define F_SEAL_WRITE        0x08
#define F_SEAL_FUTURE_WRITE 0x10
#define SEALS_ALL           0x1f

LOCK_CLASS(memfd_class, "memfd", LK_MUTEX_SLEEP);

struct memfd {
    struct vnode m_vn;
    struct mutex m_lock;
    struct amap *m_am;              /* [c] its pages (held); it grows under m_lock */
    uint64_t m_size;                /* [m_lock] */
    uint32_t m_seals;               /* [m_lock] F_SEAL_* */
    uint32_t m_mode, m_uid, m_gid;  /* [m_lock] */
    int64_t m_mtime, m_ctime;       /* [m_lock] seconds */
    uint64_t m_ino;                 /* [c] */
    char m_name[MFD_NAME_MAX + 1];  /* [c] */
};

static const struct vnodeops memfd_ops;
static uint64_t memfd_inos;         /* [a] */

static struct memfd *vtom(struct vnode *vp)
{
    return vp->v_data;
}

bool vn_is_memfd(const struct vnode *vp)
{
    return vp->v_op == &memfd_ops;
}

/* ---- the bytes ---- */

/* Move n bytes at off between the file and buf (write: into the file,
 * making its pages).  Under m_lock. */
static int move_bytes(struct memfd *m, uint64_t off, char *buf, size_t n, bool write)
{
    while (n) {
        size_t idx = off / PAGE_SIZE, in = off % PAGE_SIZE, k = MIN(n, PAGE_SIZE - in);
        struct page *pg = amap_page_at(m->m_am, idx, NULL, 0, write);
        if (!pg && write)
            return -ENOMEM;
        char *at = pg ? (char *)page_to_virt(pg) + in : NULL;
        if (write)
            memcpy(at, buf, k);
        else if (pg)
            memcpy(buf, at, k);
        else
            memset(buf, 0, k);      /* a hole */
        if (pg)
            page_rele(pg);
        off += k;
        buf += k;
        n -= k;
    }
    return 0;
}

static int memfd_read(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    struct memfd *m = vtom(vp);
    mutex_enter(&m->m_lock);
    uint64_t off = uio->uio_offset;
    size_t n = off < m->m_size ? (size_t)MIN((uint64_t)uio->uio_resid, m->m_size - off) : 0;
    int err = move_bytes(m, off, uio->uio_base, n, false);
    mutex_exit(&m->m_lock);
    if (!err) {
        uio->uio_base = (char *)uio->uio_base + n;
        uio->uio_resid -= n;
        uio->uio_offset += n;
    }
    return err;
}

/* Make the file size bytes long (m_lock held): seals, the amap's room,
 * and the pages past a shorter end (freed, or zeroed while mapped). */
static int resize_locked(struct memfd *m, uint64_t size)
{
    if ((size < m->m_size && (m->m_seals & F_SEAL_SHRINK)) ||
        (size > m->m_size && (m->m_seals & F_SEAL_GROW)))
        return -EPERM;
    size_t pages = (size + PAGE_SIZE - 1) / PAGE_SIZE;
    int err = amap_grow(m->m_am, pages);
    if (err)
        return err;
    if (size < m->m_size) {
        struct page *last = size % PAGE_SIZE ? amap_page_at(m->m_am, size / PAGE_SIZE, NULL, 0,
                                                             false) : NULL;
        if (last) {                 /* the new end's page: zeros after it (a hole is) */
            memset((char *)page_to_virt(last) + size % PAGE_SIZE, 0, PAGE_SIZE - size % PAGE_SIZE);
            page_rele(last);
        }
        amap_zero_from(m->m_am, pages, __atomic_load_n(&m->m_am->am_ref, __ATOMIC_ACQUIRE) == 1);
    }
    m->m_size = size;
    m->m_mtime = m->m_ctime = realtime_sec();
    return 0;
}

static int memfd_write(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    struct memfd *m = vtom(vp);
    mutex_enter(&m->m_lock);
    uint64_t off = (ioflag & IO_APPEND) ? m->m_size : uio->uio_offset;
    size_t n = uio->uio_resid;
    int err = (m->m_seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)) ? -EPERM : 0;
    if (!err && off + n < off)
        err = -EFBIG;
    if (!err && off + n > m->m_size)
        err = resize_locked(m, off + n);
    if (!err)
        err = move_bytes(m, off, uio->uio_base, n, true);
    if (!err)
        m->m_mtime = m->m_ctime = realtime_sec();
    mutex_exit(&m->m_lock);
    if (!err) {
        uio->uio_base = (char *)uio->uio_base + n;
        uio->uio_resid = 0;
        uio->uio_offset = off + n;
    }
    return err;
}

static int memfd_truncate(struct vnode *vp, uint64_t size, struct cred *cr)
{
    struct memfd *m = vtom(vp);
    mutex_enter(&m->m_lock);
    int err = resize_locked(m, size);
    mutex_exit(&m->m_lock);
    return err;
}

/* ---- attributes ---- */

static int memfd_getattr(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    struct memfd *m = vtom(vp);
    memset(va, 0, sizeof *va);
    mutex_enter(&m->m_lock);
    va->va_type = VREG;
    va->va_mode = S_IFREG | m->m_mode;
    va->va_uid = m->m_uid;
    va->va_gid = m->m_gid;
    va->va_size = m->m_size;
    va->va_mtime = m->m_mtime;
    va->va_ctime = m->m_ctime;
    va->va_atime = m->m_mtime;
    mutex_exit(&m->m_lock);
    va->va_nlink = 1;
    va->va_ino = m->m_ino;
    va->va_blksize = PAGE_SIZE;
    va->va_blocks = amap_resident(m->m_am) * (PAGE_SIZE / 512);
    return 0;
}

/* chmod and chown by the owner or root; a size change as ftruncate. */
static int memfd_setattr(struct vnode *vp, const struct vattr *va, struct cred *cr)
{
    struct memfd *m = vtom(vp);
    mutex_enter(&m->m_lock);
    int err = vn_set_owner_mode(va, cr, &m->m_mode, &m->m_uid, &m->m_gid);
    if (!err && (va->va_mask & AT_SIZE))
        err = resize_locked(m, va->va_size);
    mutex_exit(&m->m_lock);
    return err;
}

static int memfd_access(struct vnode *vp, int mode, struct cred *cr)
{
    struct vattr va;
    memfd_getattr(vp, &va, cr);
    return vn_access_check(va.va_mode, va.va_uid, va.va_gid, mode, cr);
}

static void memfd_inactive(struct vnode *vp, struct cred *cr)
{
    struct memfd *m = vtom(vp);
    amap_rele(m->m_am);
    vn_destroy(vp);
    mutex_destroy(&m->m_lock);
    kfree(m);
}

static void memfd_fdname(struct vnode *vp, char *buf, size_t len)
{
    snprintf(buf, len, "/memfd:%s (deleted)", vtom(vp)->m_name);
}

/* ---- mapping and seals ---- */

int64_t memfd_mmap(struct vnode *vp, uint64_t addr, size_t len, int prot, int flags, uint64_t off)
{
    struct memfd *m = vtom(vp);
    if (!(flags & MAP_SHARED))
        return -ENODEV;             /* MAP_PRIVATE: see the theory */
    size_t first = off / PAGE_SIZE, pages = (len + PAGE_SIZE - 1) / PAGE_SIZE;
    if (first + pages < first)
        return -EOVERFLOW;
    mutex_enter(&m->m_lock);
    int err = (prot & PROT_WRITE) && (m->m_seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE))
                  ? -EPERM : amap_grow(m->m_am, first + pages);
    if (!err)
        __atomic_add_fetch(&m->m_am->am_ref, 1, __ATOMIC_ACQ_REL);     /* the mapping's */
    mutex_exit(&m->m_lock);
    if (err)
        return err;
    int64_t r = as_map_amap_at(curproc()->p_as, addr, len, prot, flags, m->m_am, first);
    if (r < 0)
        amap_rele(m->m_am);
    return r;
}

int memfd_seals(struct vnode *vp, bool add, uint32_t seals)
{
    if (!vn_is_memfd(vp))
        return -EINVAL;
    struct memfd *m = vtom(vp);
    mutex_enter(&m->m_lock);
    int r = (int)m->m_seals;
    if (add) {
        r = 0;
        if (seals & ~(uint32_t)SEALS_ALL)
            r = -EINVAL;
        else if (m->m_seals & F_SEAL_SEAL)
            r = -EPERM;
        else if ((seals & F_SEAL_WRITE) && __atomic_load_n(&m->m_am->am_ref, __ATOMIC_ACQUIRE) > 1)
            r = -EBUSY;             /* mapped */
        if (!r)
            m->m_seals |= seals;
    }
    mutex_exit(&m->m_lock);
    return r;
}

/* ---- memfd_create ---- */

static int memfd_new(const char *name, uint32_t flags, struct vnode **vpp)
{
    struct memfd *m = kzalloc(sizeof *m);
    if (!m)
        return -ENOMEM;
    if (!(m->m_am = amap_alloc(1))) {      /* room grows with the file */
        kfree(m);
        return -ENOMEM;
    }
    struct cred *cr = curproc()->p_cred;
    mutex_init(&m->m_lock, &memfd_class, 0, "memfd");
    strlcpy(m->m_name, name, sizeof m->m_name);
    m->m_seals = (flags & MFD_ALLOW_SEALING) ? 0 : F_SEAL_SEAL;
    m->m_mode = 0777;
    m->m_uid = cr->cr_uid;
    m->m_gid = cr->cr_gid;
    m->m_mtime = m->m_ctime = realtime_sec();
    m->m_ino = __atomic_add_fetch(&memfd_inos, 1, __ATOMIC_RELAXED);
    vn_init(&m->m_vn, &memfd_ops, VREG, NULL, m);
    *vpp = &m->m_vn;
    return 0;
}

/* memfd_create(name, flags): MFD_CLOEXEC and MFD_ALLOW_SEALING; the name
 * at most 249 bytes (EINVAL), as Linux's; MFD_HUGETLB and the rest are
 * EINVAL (no huge pages here). */
SYSCALL_DECL(sys_memfd_create)
{
    uint32_t flags = (uint32_t)a1;
    if (flags & ~(MFD_CLOEXEC | MFD_ALLOW_SEALING))
        return -EINVAL;
    char name[MFD_NAME_MAX + 1];
    long n = copyinstr((const char *)a0, name, sizeof name);
    if (n < 0)
        return n == -ENAMETOOLONG ? -EINVAL : n;
    struct vnode *vp;
    int err = memfd_new(name, flags, &vp);
    return err ? err : anon_install(vp, O_RDWR, flags & MFD_CLOEXEC);
}

static int memfd_ok(void) { return 0; }
static int memfd_einval(void) { return -EINVAL; }

static const struct vnodeops memfd_ops = {
    .vop_open = (void *)memfd_ok,
    .vop_close = (void *)memfd_ok,
    .vop_read = memfd_read,
    .vop_write = memfd_write,
    .vop_ioctl = (void *)memfd_einval,
    .vop_getattr = memfd_getattr,
    .vop_setattr = memfd_setattr,
    .vop_access = memfd_access,
    VNODEOPS_NOT_A_DIRECTORY,
    .vop_readlink = (void *)memfd_einval,
    .vop_fsync = (void *)memfd_ok,
    .vop_truncate = memfd_truncate,
    .vop_inactive = memfd_inactive,
    .vop_fdname = memfd_fdname,
};
