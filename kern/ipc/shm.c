/*
 * System V shared memory: shmget, shmat, shmdt, shmctl.
 *
 * A segment is an amap (kern/vm/as.h): anonymous pages made on first
 * touch and shared by every attachment, one copy in memory.  The segment
 * owns the amap; each shmat maps it as a MAP_SHARED segment of the
 * caller's address space, and fork copies attachments as it copies any
 * shared mapping.  The amap counts the owner and every mapping of it, so
 * shm_nattch is its count less one, true after fork, exec, exit and
 * partial munmaps alike, with no bookkeeping here.
 *
 * IPC_RMID with attachments marks the segment SHM_DEST and makes its key
 * private: it lives, and its id still works, until the last mapping goes.
 * Each mapping that goes calls shm_unref (with the address space's a_lock
 * held, see the lock order in kern/ipc/ipc.c), which notes the detach
 * time and, for a SHM_DEST segment with nothing left attached, removes it
 * from the table and drops the owner's reference, freeing the pages.
 *
 * Locks: shm_ids.lock (class "shm_ids"), each segment's lock (class
 * "shm"), and the amap's own; shm_tot [t] counts the pages of all
 * segments against SHMALL.
 */
#include <kern/ipc/ipc.h>
#include <kern/lib/kprintf.h>
#include <kern/ipc/ipc_abi.h>
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/vm/kmem.h>
#include <kern/vfs/cred.h>
#include <kern/lib/errno.h>
#include <kern/lib/string.h>

/* Limits, reported by IPC_INFO.  SHMMAX bounds the amap's page array
 * (kmalloc'd in one piece), so it is smaller than Linux's unlimited one. */
#define SHMMIN          1UL
#define SHMMAX          (128UL << 20)
#define SHMALL          ((1UL << 30) / PAGE_SIZE)   /* pages, all segments */

struct shm {
    struct ipc_obj o;
    size_t segsz;               /* [c] bytes asked for */
    struct amap *amap;          /* [c] held by the segment */
    int64_t atime, dtime;       /* [o] last attach, detach */
    int cpid, lpid;             /* [c] creator, [o] last attach or detach */
};

LOCK_CLASS(shm_ids_class, "shm_ids", LK_MUTEX_SLEEP);
LOCK_CLASS(shm_class, "shm", LK_MUTEX_SLEEP);

static struct ipc_ids shm_ids;
static size_t shm_tot;          /* [t] pages of all segments */

static size_t pages_of(size_t bytes)
{
    return ALIGN_UP(bytes, PAGE_SIZE) / PAGE_SIZE;
}

static int nattch(struct shm *shp)
{
    return amap_refs(shp->amap) - 1;
}

static void shm_free(struct ipc_obj *o)
{
    struct shm *shp = (struct shm *)o;
    mutex_enter(&shm_ids.lock);
    shm_tot -= pages_of(shp->segsz);
    mutex_exit(&shm_ids.lock);
    amap_set_owner(shp->amap, NULL, 0);     /* nobody maps it: no more calls */
    amap_rele(shp->amap);
    kfree(shp);
}

/* Remove a segment ([o] held): no new attachment can find it. */
static void shm_destroy(struct shm *shp)
{
    mutex_enter(&shm_ids.lock);
    ipc_remove(&shm_ids, &shp->o);
    mutex_exit(&shm_ids.lock);
}

/* A mapping of segment id went (amap_set_owner). */
static void shm_unref(uint64_t id)
{
    int err;
    struct shm *shp = (struct shm *)ipc_lock_id(&shm_ids, (int)id, false, &err);
    if (!shp)
        return;
    shp->dtime = realtime_sec();
    shp->lpid = ipc_pid();
    if ((shp->o.perm.mode & SHM_DEST) && nattch(shp) == 0)
        shm_destroy(shp);
    ipc_unlock(&shp->o);
}

static int shm_create(struct ipc_ids *ids, int32_t key, int flags, uint64_t size)
{
    size_t npages = pages_of(size);
    if (size < SHMMIN || size > SHMMAX)
        return -EINVAL;
    if (shm_tot + npages > SHMALL)
        return -ENOSPC;
    struct shm *shp = kzalloc(sizeof *shp);
    if (!shp)
        return -ENOMEM;
    shp->amap = amap_alloc(npages);
    if (!shp->amap) {
        kfree(shp);
        return -ENOMEM;
    }
    ipc_obj_init(&shp->o, &shm_class, "shm", shm_free);
    int err = ipc_add(ids, &shp->o, key, flags, ipc_cred());
    if (err) {
        amap_rele(shp->amap);
        kfree(shp);
        return err;
    }
    amap_set_owner(shp->amap, shm_unref, (uint64_t)shp->o.id);
    shp->segsz = size;
    shp->cpid = ipc_pid();
    shm_tot += npages;
    return shp->o.id;
}

/* An existing segment asked for with a larger size: EINVAL. */
static int shm_check(struct ipc_obj *o, uint64_t size)
{
    return size > ((struct shm *)o)->segsz ? -EINVAL : 0;
}

SYSCALL_DECL(sys_shmget)
{
    return ipc_get(&shm_ids, (int32_t)a0, (int)a2, a1, shm_create, shm_check);
}

/* Where shmat maps: addr rounded down with SHM_RND, else it must be
 * aligned; 0 lets the kernel choose.  The address or -EINVAL. */
static int64_t attach_address(uint64_t addr, int flags)
{
    if (addr & (SHMLBA - 1)) {
        if (!(flags & SHM_RND))
            return -EINVAL;
        addr &= ~(uint64_t)(SHMLBA - 1);
    }
    if (!addr && (flags & SHM_REMAP))
        return -EINVAL;
    return (int64_t)addr;
}

SYSCALL_DECL(sys_shmat)
{
    int id = (int)a0, flags = (int)a2;
    int64_t addr = attach_address(a1, flags);
    if (addr < 0)
        return addr;
    int prot = PROT_READ | (flags & SHM_RDONLY ? 0 : PROT_WRITE) | (flags & SHM_EXEC ? PROT_EXEC : 0);
    int want = (flags & SHM_RDONLY) ? 0444 : 0666;
    int err;
    struct shm *shp = (struct shm *)ipc_lock_id(&shm_ids, id, false, &err);
    if (!shp)
        return err;
    if (!ipc_permitted(&shp->o.perm, ipc_cred(), want)) {
        ipc_unlock(&shp->o);
        return -EACCES;
    }
    struct amap *am = shp->amap;
    size_t len = shp->segsz;
    amap_hold(am);                  /* the new mapping's, or given back */
    ipc_unlock(&shp->o);            /* as_map_amap takes a_lock, which comes first */

    struct proc *p = curproc();
    int mflags = addr ? ((flags & SHM_REMAP) ? MAP_FIXED : MAP_FIXED_NOREPLACE) : 0;
    int64_t r = as_map_amap(p->p_as, (vaddr_t)addr, len, prot, mflags, am);
    if (r < 0) {
        amap_rele(am);
        return r == -EEXIST ? -EINVAL : r;
    }
    if ((shp = (struct shm *)ipc_lock_id(&shm_ids, id, false, &err))) {
        shp->atime = realtime_sec();
        shp->lpid = ipc_pid();
        ipc_unlock(&shp->o);
    }
    return r;
}

SYSCALL_DECL(sys_shmdt)
{
    if (a0 & (PAGE_SIZE - 1))
        return -EINVAL;
    return as_unmap_amap(curproc()->p_as, (vaddr_t)a0);
}

/* IPC_STAT, SHM_STAT and SHM_STAT_ANY: the segment as Linux shows it. */
static void shm_stat(struct shm *shp, struct shmid64_ds_u *ds)
{
    memset(ds, 0, sizeof *ds);
    ipc_perm_out(&shp->o, &ds->shm_perm);
    ds->shm_segsz = shp->segsz;
    ds->shm_atime = shp->atime;
    ds->shm_dtime = shp->dtime;
    ds->shm_ctime = shp->o.ctime;
    ds->shm_cpid = shp->cpid;
    ds->shm_lpid = shp->lpid;
    ds->shm_nattch = (uint64_t)nattch(shp);
}

static int64_t shm_info(int cmd, uint64_t ubuf)
{
    int maxslot = ipc_max_slot(&shm_ids);
    if (cmd == IPC_INFO) {
        struct shminfo64_u in = {
            .shmmax = SHMMAX, .shmmin = SHMMIN, .shmmni = IPC_MAXOBJ,
            .shmseg = IPC_MAXOBJ, .shmall = SHMALL,
        };
        return copyout(&in, (void *)ubuf, sizeof in) ? -EFAULT : maxslot;
    }
    struct shm_info_u in = { 0 };
    mutex_enter(&shm_ids.lock);
    in.used_ids = shm_ids.in_use;
    in.shm_tot = shm_tot;
    for (int i = 0; i <= shm_ids.max_slot; i++)      /* the amaps' locks come after [t] */
        if (shm_ids.slot[i])
            in.shm_rss += amap_resident(((struct shm *)shm_ids.slot[i])->amap);
    mutex_exit(&shm_ids.lock);
    return copyout(&in, (void *)ubuf, sizeof in) ? -EFAULT : maxslot;
}


static int64_t shm_rmid(struct shm *shp)
{
    mutex_enter(&shm_ids.lock);
    shp->o.perm.mode |= SHM_DEST;
    shp->o.perm.key = IPC_PRIVATE;
    mutex_exit(&shm_ids.lock);
    if (nattch(shp) == 0)
        shm_destroy(shp);
    return 0;
}

SYSCALL_DECL(sys_shmctl)
{
    int id = (int)a0, cmd = (int)a1;
    uint64_t ubuf = a2;
    struct shmid64_ds_u ds;
    if (cmd == IPC_INFO || cmd == SHM_INFO)
        return shm_info(cmd, ubuf);
    if (cmd == IPC_SET && copyin((void *)ubuf, &ds, sizeof ds))
        return -EFAULT;
    if (cmd != IPC_STAT && cmd != SHM_STAT && cmd != SHM_STAT_ANY && cmd != IPC_SET &&
        cmd != IPC_RMID && cmd != SHM_LOCK && cmd != SHM_UNLOCK)
        return -EINVAL;
    bool by_slot = cmd == SHM_STAT || cmd == SHM_STAT_ANY;
    int err;
    struct shm *shp = (struct shm *)ipc_lock_id(&shm_ids, id, by_slot, &err);
    if (!shp)
        return err;
    struct cred *cr = ipc_cred();
    int64_t r = 0;
    switch (cmd) {
    case IPC_STAT: case SHM_STAT: case SHM_STAT_ANY:
        if (cmd != SHM_STAT_ANY && !ipc_permitted(&shp->o.perm, cr, 0444))
            r = -EACCES;
        else
            shm_stat(shp, &ds);
        r = r ? r : by_slot ? shp->o.id : 0;
        break;
    case IPC_SET: case IPC_RMID:
        if (!ipc_owner(&shp->o.perm, cr))
            r = -EPERM;
        else if (cmd == IPC_SET)
            ipc_perm_set(&shm_ids, &shp->o, &ds.shm_perm);
        else
            r = shm_rmid(shp);
        break;
    default:                        /* SHM_LOCK, SHM_UNLOCK: nothing is ever paged out */
        r = ipc_owner(&shp->o.perm, cr) ? 0 : -EPERM;
        break;
    }
    ipc_unlock(&shp->o);
    if (r >= 0 && (cmd == IPC_STAT || by_slot) && copyout(&ds, (void *)ubuf, sizeof ds))
        return -EFAULT;
    return r;
}

void shm_init(void)
{
    ipc_ids_init(&shm_ids, &shm_ids_class, "shm_ids");
}

/* /proc/sysvipc/shm: one line per segment, in Linux's format. */
void shm_proc_lines(void (*line)(void *arg, const char *text), void *arg)
{
    int maxslot = ipc_max_slot(&shm_ids);
    for (int slot = 0; slot <= maxslot; slot++) {
        int err;
        struct shm *shp = (struct shm *)ipc_lock_id(&shm_ids, slot, true, &err);
        if (!shp)
            continue;
        struct shmid64_ds_u ds;
        shm_stat(shp, &ds);
        int id = shp->o.id;
        uint64_t rss = amap_resident(shp->amap) * PAGE_SIZE;
        ipc_unlock(&shp->o);
        char text[256];
        snprintf(text, sizeof text, "%10d %10d  %4o %21lu %5d %5d  %5lu %5u %5u %5u %5u "
                 "%10ld %10ld %10ld %21lu %21lu\n", ds.shm_perm.key, id, ds.shm_perm.mode & 0777,
                 (unsigned long)ds.shm_segsz, ds.shm_cpid, ds.shm_lpid,
                 (unsigned long)ds.shm_nattch, ds.shm_perm.uid, ds.shm_perm.gid,
                 ds.shm_perm.cuid, ds.shm_perm.cgid, (long)ds.shm_atime, (long)ds.shm_dtime,
                 (long)ds.shm_ctime, (unsigned long)rss, 0UL);
        line(arg, text);
    }
}
