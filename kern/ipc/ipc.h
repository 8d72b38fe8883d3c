/*
 * System V IPC: the id tables and permissions the three kinds share
 * (kern/ipc/ipc.c), and the system calls of each (shm.c, sem.c, msg.c).
 * The theory, the locks and their order are atop kern/ipc/ipc.c.
 *
 * Lock key:
 *   [t]  the kind's table lock (ipc_ids.lock)
 *   [o]  the object's own lock (ipc_obj.lock)
 *   [a]  atomic operations
 *   [t+o] written with both held (object lock first), read under either
 *   [c]  constant after creation
 */
#ifndef KERN_IPC_IPC_H
#define KERN_IPC_IPC_H

#include <kern/lib/types.h>
#include <kern/lock/mutex.h>

struct cred;
struct proc;

/* Linux's flags and commands (include/uapi/linux/ipc.h). */
#define IPC_PRIVATE     0
#define IPC_CREAT       01000
#define IPC_EXCL        02000
#define IPC_NOWAIT      04000
#define IPC_RMID        0
#define IPC_SET         1
#define IPC_STAT        2
#define IPC_INFO        3

/* Ids: Linux's rule, the slot in the low IPC_SLOT_BITS bits and a
 * sequence number above them; the sequence moves on each time the slots
 * are handed out from the start again, so a stale id names nothing. */
#define IPC_SLOT_BITS   15
#define IPC_MAXOBJ      4096    /* slots of each kind (Linux's shmmni) */
#define IPC_SEQ_MAX     (0x7fffffff >> IPC_SLOT_BITS)
#define IPC_MIN_CYCLE   64      /* slots cycled through before reuse */

/* The permissions of an object, as Linux keeps them. */
struct ipc_perm_k {
    int32_t key;                /* [t+o] IPC_PRIVATE once removed */
    uint32_t uid, gid;          /* [t+o] owner (IPC_SET) */
    uint32_t cuid, cgid;        /* [c] creator */
    uint32_t mode;              /* [t+o] low 9 bits rwx; kind flags above */
};

/* Linux's struct ipc64_perm (x86-64), as IPC_STAT copies it out. */
struct ipc64_perm_u {
    int32_t key;
    uint32_t uid, gid, cuid, cgid;
    uint32_t mode;
    uint16_t seq, pad2;
    uint32_t pad3;
    uint64_t unused1, unused2;
};
_Static_assert(sizeof(struct ipc64_perm_u) == 48, "struct ipc64_perm is 48 bytes");

/* What every object begins with. */
struct ipc_obj {
    struct mutex lock;
    struct ipc_perm_k perm;
    int id;                     /* [c] */
    int ref;                    /* [a] the table's and each user's */
    bool removed;               /* [o] IPC_RMID took it out of the table */
    int64_t ctime;              /* [o] last change (creation, IPC_SET) */
    void (*free)(struct ipc_obj *obj);     /* [c] the kind's destructor */
};

/* One kind's table. */
struct ipc_ids {
    struct mutex lock;
    const char *name;           /* [c] "shm", "sem", "msg" */
    struct ipc_obj *slot[IPC_MAXOBJ];      /* [t] */
    int in_use;                 /* [t] */
    int seq;                    /* [t] */
    int last_slot;              /* [t] the slot handed out last */
    int max_slot;               /* [t] highest slot in use, -1: none */
};

void ipc_ids_init(struct ipc_ids *ids, struct lock_class *cls, const char *name);
void ipc_obj_init(struct ipc_obj *obj, struct lock_class *cls, const char *name,
                  void (*free)(struct ipc_obj *));

/* The object whose key is key, or NULL ([t] held). */
struct ipc_obj *ipc_find_key(struct ipc_ids *ids, int32_t key);
/* Give obj a slot and an id, with the caller's credentials as owner and
 * creator and mode's low 9 bits ([t] held): 0 or -ENOSPC. */
int ipc_add(struct ipc_ids *ids, struct ipc_obj *obj, int32_t key, int mode,
            const struct cred *cr);
/* Take obj out of the table ([t] and [o] held): its id names nothing
 * from now on, and the table's reference goes (the object lives on while
 * a user holds one). */
void ipc_remove(struct ipc_ids *ids, struct ipc_obj *obj);

/* The get calls' common part: find or create the object for key.
 * create(ids, key, flags, arg, &obj) makes a new one ([t] held); check
 * (obj, arg), when not NULL, is the kind's test of an existing object
 * (a size too large: -EINVAL).  The id, or a negative errno. */
int ipc_get(struct ipc_ids *ids, int32_t key, int flags, uint64_t arg,
            int (*create)(struct ipc_ids *, int32_t, int, uint64_t),
            int (*check)(struct ipc_obj *, uint64_t));

/* The object named by id, held and locked ([o]); NULL and *err -EINVAL
 * (no such id) or -EIDRM (removed meanwhile).  by_slot: id is a slot
 * number (the *_STAT commands). */
struct ipc_obj *ipc_lock_id(struct ipc_ids *ids, int id, bool by_slot, int *err);
/* Unlock and let go of an object from ipc_lock_id. */
void ipc_unlock(struct ipc_obj *obj);
void ipc_hold(struct ipc_obj *obj);
void ipc_rele(struct ipc_obj *obj);

/* Linux's ipcperms: may cr have the access in flags' rwx bits (any of
 * the three triplets: 0400, 0040 and 0004 all mean read)?  Root may. */
bool ipc_permitted(const struct ipc_perm_k *perm, const struct cred *cr, int flags);
/* IPC_SET and IPC_RMID: the owner, the creator or root. */
bool ipc_owner(const struct ipc_perm_k *perm, const struct cred *cr);
/* The IPC_STAT form of obj's permissions. */
void ipc_perm_out(const struct ipc_obj *obj, struct ipc64_perm_u *out);
/* IPC_SET's change of owner and mode ([o] held; takes [t]). */
void ipc_perm_set(struct ipc_ids *ids, struct ipc_obj *obj, const struct ipc64_perm_u *in);
/* The highest slot in use (IPC_INFO and *_INFO return it), 0 if none. */
int ipc_max_slot(struct ipc_ids *ids);

/* The calling process's id and credentials (pid 0 and kcred for a
 * kernel thread).  IPC's time fields are realtime_sec() (proc.h). */
int ipc_pid(void);
struct cred *ipc_cred(void);

/* Boot: the three tables (each kind's init, called by ipc_init). */
void ipc_init(void);
/* /proc/sysvipc/{shm,sem,msg}: call line(arg, text) with each object's
 * line in Linux's format (kern/procfs writes the header). */
void shm_proc_lines(void (*line)(void *arg, const char *text), void *arg);
void sem_proc_lines(void (*line)(void *arg, const char *text), void *arg);
void msg_proc_lines(void (*line)(void *arg, const char *text), void *arg);
void shm_init(void);
void sem_init(void);
void msg_init(void);
/* exit: the process's semaphore adjustments (SEM_UNDO) are applied. */
void sem_exit(struct proc *p);

#endif
