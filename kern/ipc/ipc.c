/*
 * System V IPC: shared memory, semaphores and message queues, as SVR4 has
 * them and with Linux's system calls, structures and errors.
 *
 * Theory.  Each kind has a table of objects (struct ipc_ids) named two
 * ways: by key, the number programs agree on (IPC_PRIVATE always makes a
 * new object), and by id, what the get call returns.  An id is Linux's:
 * the object's slot in the low 15 bits and a sequence number above them.
 * Slots are handed out cyclically over the first max(64, 1.5 x in use)
 * slots, and the sequence moves on whenever the cycle starts again, so an
 * id removed a moment ago does not name the object that takes its slot
 * next: a stale id gets EINVAL.  This file keeps the tables, the
 * permissions and the get calls' common rules; shm.c, sem.c and msg.c
 * are the three kinds.
 *
 * Permissions are Linux's ipcperms: the mode's owner bits apply to the
 * owner and the creator, the group bits to members of either's group, the
 * other bits to the rest, and root may do anything.  A get of an existing
 * key asks for the rwx bits in its flags; IPC_STAT reads; IPC_SET and
 * IPC_RMID belong to the owner, the creator and root (EPERM otherwise).
 *
 * Locks, in the SVR4 MP manner: one lock per table and one per object,
 * both sleep mutexes with classes named after the kind ("shm_ids" and
 * "shm", "sem_ids" and "sem", "msg_ids" and "msg"), so lockstat shows
 * them by name.  The table lock guards the slots and the key search; the
 * object lock everything else about the object.  An object's key, owner
 * and mode are written with both held and read under either, so the get
 * calls search and check permissions with the table lock alone.  Order:
 *
 *     address space (as, a resource lock) -> object lock -> table lock
 *     -> amap (am_lock)
 *
 * The address space comes first because a segment that lets go of a
 * shared memory segment's pages (munmap, shmdt, exec, exit) tells shm.c
 * with a_lock held (amap_set_owner, kern/vm/as.h).  Lookups by id take
 * the table lock only to find and hold the object, then drop it and take
 * the object lock: the reference keeps the object while no lock is held,
 * and the removed flag, set under the object lock, says whether it is
 * still in the table.  Sleepers (semaphores, message queues) sleep with
 * their object's lock, which the sleep releases and takes again (SVR4 MP
 * sleep semantics), holding a reference.
 *
 * Linux's errors: EEXIST (IPC_CREAT|IPC_EXCL on an existing key), ENOENT
 * (no such key and no IPC_CREAT), EINVAL (an id that names nothing, bad
 * sizes and counts, an unknown command), EIDRM (the object was removed
 * while the caller waited for it), EACCES and EPERM as above, EFAULT
 * for bad user pointers (copies happen with no lock held), ENOSPC when a
 * table is full.
 */
#include <kern/ipc/ipc.h>
#include <kern/proc/proc.h>
#include <kern/vfs/cred.h>
#include <kern/lib/errno.h>
#include <kern/lib/string.h>

void ipc_ids_init(struct ipc_ids *ids, struct lock_class *cls, const char *name)
{
    memset(ids, 0, sizeof *ids);
    mutex_init(&ids->lock, cls, 0, name);
    ids->name = name;
    ids->last_slot = -1;
    ids->max_slot = -1;
}

void ipc_obj_init(struct ipc_obj *obj, struct lock_class *cls, const char *name,
                  void (*free)(struct ipc_obj *))
{
    mutex_init(&obj->lock, cls, 0, name);
    obj->ref = 1;                   /* the table's */
    obj->free = free;
    obj->ctime = realtime_sec();
}

struct ipc_obj *ipc_find_key(struct ipc_ids *ids, int32_t key)
{
    for (int i = 0; i <= ids->max_slot; i++)
        if (ids->slot[i] && ids->slot[i]->perm.key == key)
            return ids->slot[i];
    return NULL;
}

/* The next free slot after the last one handed out, cycling over the
 * first max(IPC_MIN_CYCLE, 1.5 x in use) slots; -1 when all are taken. */
static int free_slot(struct ipc_ids *ids)
{
    int cycle = MAX(ids->in_use * 3 / 2, IPC_MIN_CYCLE);
    cycle = MIN(cycle, IPC_MAXOBJ);
    for (int i = 1; i <= cycle; i++) {
        int s = (ids->last_slot + i) % cycle;
        if (s >= 0 && !ids->slot[s])
            return s;
    }
    for (int s = cycle; s < IPC_MAXOBJ; s++)
        if (!ids->slot[s])
            return s;
    return -1;
}

int ipc_add(struct ipc_ids *ids, struct ipc_obj *obj, int32_t key, int mode,
            const struct cred *cr)
{
    int s = free_slot(ids);
    if (s < 0)
        return -ENOSPC;
    if (s <= ids->last_slot && ++ids->seq > IPC_SEQ_MAX)
        ids->seq = 0;
    ids->last_slot = s;
    obj->id = (ids->seq << IPC_SLOT_BITS) | s;
    obj->perm.key = key;
    obj->perm.uid = obj->perm.cuid = cr->cr_uid;
    obj->perm.gid = obj->perm.cgid = cr->cr_gid;
    obj->perm.mode = mode & 0777;
    ids->slot[s] = obj;
    ids->in_use++;
    ids->max_slot = MAX(ids->max_slot, s);
    return 0;
}

void ipc_remove(struct ipc_ids *ids, struct ipc_obj *obj)
{
    int s = obj->id & ((1 << IPC_SLOT_BITS) - 1);
    ids->slot[s] = NULL;
    ids->in_use--;
    while (ids->max_slot >= 0 && !ids->slot[ids->max_slot])
        ids->max_slot--;
    obj->removed = true;
    obj->perm.key = IPC_PRIVATE;
    ipc_rele(obj);                  /* the table's reference; the caller holds one */
}

int ipc_get(struct ipc_ids *ids, int32_t key, int flags, uint64_t arg,
            int (*create)(struct ipc_ids *, int32_t, int, uint64_t),
            int (*check)(struct ipc_obj *, uint64_t))
{
    mutex_enter(&ids->lock);
    struct ipc_obj *obj = key == IPC_PRIVATE ? NULL : ipc_find_key(ids, key);
    int r;
    if (!obj)
        r = key != IPC_PRIVATE && !(flags & IPC_CREAT) ? -ENOENT : create(ids, key, flags, arg);
    else if ((flags & IPC_CREAT) && (flags & IPC_EXCL))
        r = -EEXIST;
    else if (check && (r = check(obj, arg)) < 0)
        ;
    else if (!ipc_permitted(&obj->perm, ipc_cred(), flags))
        r = -EACCES;
    else
        r = obj->id;
    mutex_exit(&ids->lock);
    return r;
}

void ipc_hold(struct ipc_obj *obj)
{
    __atomic_add_fetch(&obj->ref, 1, __ATOMIC_RELAXED);
}

void ipc_rele(struct ipc_obj *obj)
{
    if (__atomic_sub_fetch(&obj->ref, 1, __ATOMIC_ACQ_REL) == 0) {
        mutex_destroy(&obj->lock);
        obj->free(obj);
    }
}

struct ipc_obj *ipc_lock_id(struct ipc_ids *ids, int id, bool by_slot, int *err)
{
    int s = by_slot ? id : id & ((1 << IPC_SLOT_BITS) - 1);
    *err = -EINVAL;
    if (id < 0 || s >= IPC_MAXOBJ)
        return NULL;
    mutex_enter(&ids->lock);
    struct ipc_obj *obj = ids->slot[s];
    if (obj && (by_slot || obj->id == id))
        ipc_hold(obj);
    else
        obj = NULL;
    mutex_exit(&ids->lock);
    if (!obj)
        return NULL;
    mutex_enter(&obj->lock);
    if (obj->removed) {
        ipc_unlock(obj);
        *err = -EIDRM;
        return NULL;
    }
    return obj;
}

void ipc_unlock(struct ipc_obj *obj)
{
    mutex_exit(&obj->lock);
    ipc_rele(obj);
}

bool ipc_permitted(const struct ipc_perm_k *perm, const struct cred *cr, int flags)
{
    int want = ((flags >> 6) | (flags >> 3) | flags) & 07;
    int granted = perm->mode;
    if (cr->cr_uid == perm->cuid || cr->cr_uid == perm->uid)
        granted >>= 6;
    else if (cred_groupmember(cr, perm->cgid) || cred_groupmember(cr, perm->gid))
        granted >>= 3;
    return !(want & ~granted & 07) || cr->cr_uid == 0;
}

bool ipc_owner(const struct ipc_perm_k *perm, const struct cred *cr)
{
    return cr->cr_uid == perm->uid || cr->cr_uid == perm->cuid || cr->cr_uid == 0;
}

void ipc_perm_out(const struct ipc_obj *obj, struct ipc64_perm_u *out)
{
    memset(out, 0, sizeof *out);
    out->key = obj->perm.key;
    out->uid = obj->perm.uid;
    out->gid = obj->perm.gid;
    out->cuid = obj->perm.cuid;
    out->cgid = obj->perm.cgid;
    out->mode = obj->perm.mode;
    out->seq = (uint16_t)(obj->id >> IPC_SLOT_BITS);
}

void ipc_perm_set(struct ipc_ids *ids, struct ipc_obj *obj, const struct ipc64_perm_u *in)
{
    mutex_enter(&ids->lock);
    obj->perm.uid = in->uid;
    obj->perm.gid = in->gid;
    obj->perm.mode = (obj->perm.mode & ~0777u) | (in->mode & 0777);
    mutex_exit(&ids->lock);
    obj->ctime = realtime_sec();
}

int ipc_max_slot(struct ipc_ids *ids)
{
    mutex_enter(&ids->lock);
    int m = ids->max_slot;
    mutex_exit(&ids->lock);
    return m < 0 ? 0 : m;
}

void ipc_init(void)
{
    shm_init();
    sem_init();
    msg_init();
}

int ipc_pid(void)
{
    struct proc *p = curproc();
    return p ? p->p_pid : 0;
}

struct cred *ipc_cred(void)
{
    struct proc *p = curproc();
    return p ? p->p_cred : kcred;
}
