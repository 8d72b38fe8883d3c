/*
 * System V semaphores: semget, semop, semtimedop, semctl.
 *
 * A set is an array of counters.  semop applies a list of operations to
 * it all at once or not at all: each is tried in order on the live values
 * and undone if a later one cannot go ahead.  An operation that would
 * take a value below zero, or wait for zero while it is not, blocks the
 * whole list; with IPC_NOWAIT on that operation the call fails with
 * EAGAIN instead.
 *
 * Waking (the wake1proc lesson, seed 003: no thundering herd).  A blocked
 * caller queues its list on the set's pending queue, in arrival order,
 * and sleeps on its own queue entry.  Whoever changes the values (semop,
 * SETVAL, SETALL, an exit's undo) walks the queue and performs, for each
 * waiter whose list can now go through, that list on its behalf, then
 * wakes that waiter alone, with the result in its entry; a list that went
 * through may let an earlier one through, so the walk starts again after
 * each success.  A waiter that cannot proceed is never woken.  IPC_RMID
 * wakes every waiter with EIDRM.  A signal ends the wait with EINTR (only
 * a signal that does something: an ignored one is dropped and a stop is
 * taken in place, as nanosleep does); semtimedop's wait ends with EAGAIN
 * at its timeout, a timed sleep (sig_sleep_until, kern/proc/sys_timer.c).
 *
 * SEM_UNDO.  Each process keeps, per set it used with SEM_UNDO, an
 * adjustment per semaphore (struct sem_undo): minus the sum of its
 * SEM_UNDO operations.  At exit (sem_exit) the adjustments are added
 * back, clamped to 0..SEMVMX as Linux does, and waiters are served.  An
 * undo entry is on its process's list (p_semundo, the process's own) and
 * on its set's list (under the set's lock), so SETVAL and SETALL can
 * clear the adjustments of every process, as Linux does, and IPC_RMID can
 * cut the entries loose (un_set = NULL); fork starts the child with none;
 * exec keeps them.
 *
 * Locks: sem_ids.lock (class "sem_ids") and each set's lock (class
 * "sem"), which guards the values, the pending queue and the undo list;
 * the order is in kern/ipc/ipc.c.
 */
#include <kern/ipc/ipc.h>
#include <kern/lib/kprintf.h>
#include <kern/ipc/ipc_abi.h>
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/lock/sleep.h>
#include <kern/sched/thread.h>
#include <kern/vm/as.h>
#include <kern/vm/kmem.h>
#include <kern/vfs/cred.h>
#include <kern/lib/errno.h>
#include <kern/lib/string.h>
#include <drivers/platform/timer.h>

/* Linux's limits, reported by IPC_INFO. */
#define SEMMSL          32000   /* semaphores per set */
#define SEMOPM          500     /* operations per semop */
#define SEMVMX          32767   /* largest value */
#define SEMAEM          SEMVMX  /* largest adjustment */
#define SEMMNS          (IPC_MAXOBJ * SEMMSL)

struct sem {
    int val;                    /* [o] */
    int pid;                    /* [o] the last process to change it */
};

/* A blocked semop, on the stack of the caller, queued on its set. */
struct sem_queue {
    struct sem_queue *next;     /* [o] */
    struct sembuf_u *sops;      /* [c] */
    int nsops;                  /* [c] */
    struct sem_undo *undo;      /* [c] the caller's, when a sop has SEM_UNDO */
    int pid;                    /* [c] */
    int blocking;               /* [o] index of the sop that blocks */
    int status;                 /* [o] 1 while waiting; then 0 or -errno */
};

struct sem_undo {
    struct sem_undo *proc_next; /* the process's own list */
    struct sem_undo *set_next;  /* [o] the set's list */
    struct semset *set;         /* [o] NULL once the set is removed */
    int semid;                  /* [c] */
    short adj[];                /* [o] one per semaphore */
};

struct semset {
    struct ipc_obj o;
    int nsems;                  /* [c] */
    int64_t otime;              /* [o] last semop */
    struct sem_queue *pending;  /* [o] arrival order */
    struct sem_undo *undos;     /* [o] */
    struct sem sems[];          /* [o] */
};

LOCK_CLASS(sem_ids_class, "sem_ids", LK_MUTEX_SLEEP);
LOCK_CLASS(sem_class, "sem", LK_MUTEX_SLEEP);

static struct ipc_ids sem_ids;
static int sem_total;           /* [t] semaphores in all sets */

static void semset_free(struct ipc_obj *o)
{
    struct semset *sma = (struct semset *)o;
    mutex_enter(&sem_ids.lock);
    sem_total -= sma->nsems;
    mutex_exit(&sem_ids.lock);
    kfree(sma);
}

static int sem_create(struct ipc_ids *ids, int32_t key, int flags, uint64_t nsems)
{
    if (nsems == 0)
        return -EINVAL;
    if (sem_total + (int)nsems > SEMMNS)
        return -ENOSPC;
    struct semset *sma = kzalloc(sizeof *sma + nsems * sizeof(struct sem));
    if (!sma)
        return -ENOMEM;
    ipc_obj_init(&sma->o, &sem_class, "sem", semset_free);
    int err = ipc_add(ids, &sma->o, key, flags, ipc_cred());
    if (err) {
        kfree(sma);
        return err;
    }
    sma->nsems = (int)nsems;
    sem_total += (int)nsems;
    return sma->o.id;
}

static int sem_check(struct ipc_obj *o, uint64_t nsems)
{
    return nsems > (uint64_t)((struct semset *)o)->nsems ? -EINVAL : 0;
}

SYSCALL_DECL(sys_semget)
{
    int nsems = (int)a1;
    if (nsems < 0 || nsems > SEMMSL)
        return -EINVAL;
    return ipc_get(&sem_ids, (int32_t)a0, (int)a2, (uint64_t)nsems, sem_create, sem_check);
}

/* ---- operations ---- */

/* Try sops on the live values: 0 when all went through (values, pids and
 * adjustments changed), 1 when one must wait (*blocking is its index;
 * nothing changed), or -EAGAIN (it must wait but said IPC_NOWAIT) or
 * -ERANGE (a value or an adjustment out of range). */
static int try_ops(struct semset *sma, const struct sembuf_u *sops, int nsops,
                   struct sem_undo *un, int pid, int *blocking)
{
    int i, r = 0;
    for (i = 0; i < nsops; i++) {
        const struct sembuf_u *op = &sops[i];
        struct sem *s = &sma->sems[op->sem_num];
        int result = s->val + op->sem_op;
        if ((op->sem_op == 0 && s->val != 0) || result < 0) {
            *blocking = i;
            r = (op->sem_flg & IPC_NOWAIT) ? -EAGAIN : 1;
            break;
        }
        if (result > SEMVMX) {
            r = -ERANGE;
            break;
        }
        if ((op->sem_flg & SEM_UNDO) && un) {
            int adj = un->adj[op->sem_num] - op->sem_op;
            if (adj < -SEMAEM - 1 || adj > SEMAEM) {
                r = -ERANGE;
                break;
            }
        }
        s->val = result;
    }
    if (r) {
        while (--i >= 0)
            sma->sems[sops[i].sem_num].val -= sops[i].sem_op;
        return r;
    }
    for (i = 0; i < nsops; i++) {
        if ((sops[i].sem_flg & SEM_UNDO) && un)
            un->adj[sops[i].sem_num] -= sops[i].sem_op;
        sma->sems[sops[i].sem_num].pid = pid;
    }
    return 0;
}

static void dequeue(struct semset *sma, struct sem_queue *q)
{
    for (struct sem_queue **pp = &sma->pending; *pp; pp = &(*pp)->next)
        if (*pp == q) {
            *pp = q->next;
            return;
        }
}

/* Serve the waiters whose lists can now go through ([o] held): perform
 * each on its waiter's behalf and wake that waiter alone. */
static void serve_waiters(struct semset *sma)
{
    bool again = true;
    while (again) {
        again = false;
        for (struct sem_queue *q = sma->pending; q; q = q->next) {
            int r = try_ops(sma, q->sops, q->nsops, q->undo, q->pid, &q->blocking);
            if (r == 1)
                continue;
            dequeue(sma, q);
            q->status = r;
            if (r == 0)
                sma->otime = realtime_sec();
            wakeup(q);
            again = r == 0;
            break;
        }
    }
}

/* The caller's undo entry for sma, made on first use ([o] held); NULL
 * when memory is short. */
static struct sem_undo *find_undo(struct semset *sma, struct proc *p)
{
    for (struct sem_undo *un = p->p_semundo; un; un = un->proc_next)
        if (un->set == sma)
            return un;
    struct sem_undo *un = kzalloc(sizeof *un + sma->nsems * sizeof(short));
    if (!un)
        return NULL;
    un->set = sma;
    un->semid = sma->o.id;
    un->proc_next = p->p_semundo;
    p->p_semundo = un;
    un->set_next = sma->undos;
    sma->undos = un;
    return un;
}

/* Wait until a waker has performed q (its status), a signal, the
 * deadline (0: none) or removal.  [o] held throughout but for sleeps. */
static int wait_for_ops(struct semset *sma, struct sem_queue *q, uint64_t deadline)
{
    struct proc *p = curproc();
    while (q->status == 1) {
        if (deadline) {
            if (uptime_ns() >= deadline) {
                dequeue(sma, q);
                return -EAGAIN;
            }
            if (!sig_sleep_until(q, deadline) || q->status != 1)
                continue;       /* a timed sleep (kern/proc/sys_timer.c) */
        } else if (!sig_sleep(q) || q->status != 1) {
            continue;
        }
        if (q->status == 1 && p && sig_sleep_interrupted(p)) {
            dequeue(sma, q);
            return -EINTR;
        }
    }
    return q->status;
}

struct timespec_k { int64_t sec, nsec; };

/* The checks Linux makes before it looks at the set, in its order. */
static int64_t semop_args(uint64_t usops, int nsops, uint64_t utimeout, struct sembuf_u **sopsp,
                          uint64_t *deadline)
{
    if (nsops < 1)
        return -EINVAL;
    if (nsops > SEMOPM)
        return -E2BIG;
    struct sembuf_u *sops = kmalloc(nsops * sizeof *sops);
    if (!sops)
        return -ENOMEM;
    if (copyin((void *)usops, sops, nsops * sizeof *sops)) {
        kfree(sops);
        return -EFAULT;
    }
    *deadline = 0;
    if (utimeout) {
        struct timespec_k ts;
        if (copyin((void *)utimeout, &ts, sizeof ts)) {
            kfree(sops);
            return -EFAULT;
        }
        if (ts.sec < 0 || ts.nsec < 0 || ts.nsec >= 1000000000) {
            kfree(sops);
            return -EINVAL;
        }
        *deadline = uptime_ns() + (uint64_t)ts.sec * 1000000000ull + (uint64_t)ts.nsec;
    }
    *sopsp = sops;
    return 0;
}

static int64_t do_semop(int id, uint64_t usops, int nsops, uint64_t utimeout)
{
    if (id < 0)
        return -EINVAL;
    struct sembuf_u *sops;
    uint64_t deadline;
    int64_t r = semop_args(usops, nsops, utimeout, &sops, &deadline);
    if (r)
        return r;
    int maxnum = 0;
    bool undo = false, alter = false;
    for (int i = 0; i < nsops; i++) {
        maxnum = MAX(maxnum, (int)sops[i].sem_num);
        undo |= (sops[i].sem_flg & SEM_UNDO) != 0;
        alter |= sops[i].sem_op != 0;
    }
    int err;
    struct semset *sma = (struct semset *)ipc_lock_id(&sem_ids, id, false, &err);
    if (!sma) {
        kfree(sops);
        return err;
    }
    struct proc *p = curproc();
    struct sem_queue q = { .sops = sops, .nsops = nsops, .pid = ipc_pid(), .status = 1 };
    if (maxnum >= sma->nsems)
        r = -EFBIG;
    else if (!ipc_permitted(&sma->o.perm, ipc_cred(), alter ? 0222 : 0444))
        r = -EACCES;
    else if (undo && p && !(q.undo = find_undo(sma, p)))
        r = -ENOMEM;
    else
        r = try_ops(sma, sops, nsops, q.undo, q.pid, &q.blocking);
    if (r == 0) {
        sma->otime = realtime_sec();
        if (alter)
            serve_waiters(sma);
    } else if (r == 1) {
        struct sem_queue **pp = &sma->pending;
        while (*pp)
            pp = &(*pp)->next;
        *pp = &q;
        r = wait_for_ops(sma, &q, deadline);
    }
    ipc_unlock(&sma->o);
    kfree(sops);
    return r;
}

SYSCALL_DECL(sys_semop)
{
    return do_semop((int)a0, a1, (int)a2, 0);
}

SYSCALL_DECL(sys_semtimedop)
{
    return do_semop((int)a0, a1, (int)a2, a3);
}

/* ---- semctl ---- */

/* Clear the adjustments of semaphore num (-1: all) in every process. */
static void clear_undos(struct semset *sma, int num)
{
    for (struct sem_undo *un = sma->undos; un; un = un->set_next) {
        if (num < 0)
            memset(un->adj, 0, sma->nsems * sizeof(short));
        else
            un->adj[num] = 0;
    }
}

static void semset_remove(struct semset *sma)
{
    for (struct sem_queue *q = sma->pending; q; q = q->next) {
        q->status = -EIDRM;
        wakeup(q);
    }
    sma->pending = NULL;
    for (struct sem_undo *un = sma->undos; un; un = un->set_next)
        un->set = NULL;
    sma->undos = NULL;
    mutex_enter(&sem_ids.lock);
    ipc_remove(&sem_ids, &sma->o);
    mutex_exit(&sem_ids.lock);
}

static int count_waiters(struct semset *sma, int num, bool zero)
{
    int n = 0;
    for (struct sem_queue *q = sma->pending; q; q = q->next) {
        const struct sembuf_u *op = &q->sops[q->blocking];
        if (op->sem_num == num && (zero ? op->sem_op == 0 : op->sem_op < 0))
            n++;
    }
    return n;
}

static int64_t sem_info(int cmd, uint64_t ubuf)
{
    struct seminfo_u in = {
        .semmni = IPC_MAXOBJ, .semmns = SEMMNS, .semmsl = SEMMSL, .semopm = SEMOPM,
        .semvmx = SEMVMX, .semaem = SEMAEM, .semmnu = SEMMNS, .semmap = SEMMNS,
        .semume = SEMOPM, .semusz = (int)sizeof(struct sem_undo),
    };
    if (cmd == SEM_INFO) {
        mutex_enter(&sem_ids.lock);
        in.semusz = sem_ids.in_use;
        in.semaem = sem_total;
        mutex_exit(&sem_ids.lock);
    }
    int maxslot = ipc_max_slot(&sem_ids);
    return copyout(&in, (void *)ubuf, sizeof in) ? -EFAULT : maxslot;
}

static void sem_stat(struct semset *sma, struct semid64_ds_u *ds)
{
    memset(ds, 0, sizeof *ds);
    ipc_perm_out(&sma->o, &ds->sem_perm);
    ds->sem_otime = sma->otime;
    ds->sem_ctime = sma->o.ctime;
    ds->sem_nsems = (uint64_t)sma->nsems;
}

/* SETALL: the values copied in before the set is locked; ERANGE for
 * one above SEMVMX. */
static int64_t set_all(struct semset *sma, const uint16_t *vals)
{
    for (int i = 0; i < sma->nsems; i++)
        if (vals[i] > SEMVMX)
            return -ERANGE;
    for (int i = 0; i < sma->nsems; i++) {
        sma->sems[i].val = vals[i];
        sma->sems[i].pid = ipc_pid();
    }
    clear_undos(sma, -1);
    sma->o.ctime = realtime_sec();
    serve_waiters(sma);
    return 0;
}

static int64_t sem_value_cmd(struct semset *sma, int cmd, int num, int val, uint16_t *vals)
{
    if ((cmd == GETVAL || cmd == SETVAL || cmd == GETPID || cmd == GETNCNT || cmd == GETZCNT) &&
        (num < 0 || num >= sma->nsems))
        return -EINVAL;
    switch (cmd) {
    case GETVAL:  return sma->sems[num].val;
    case GETPID:  return sma->sems[num].pid;
    case GETNCNT: return count_waiters(sma, num, false);
    case GETZCNT: return count_waiters(sma, num, true);
    case GETALL:
        for (int i = 0; i < sma->nsems; i++)
            vals[i] = (uint16_t)sma->sems[i].val;
        return 0;
    case SETALL:
        return set_all(sma, vals);
    default:                        /* SETVAL */
        if (val < 0 || val > SEMVMX)
            return -ERANGE;
        sma->sems[num].val = val;
        sma->sems[num].pid = ipc_pid();
        clear_undos(sma, num);
        sma->o.ctime = realtime_sec();
        serve_waiters(sma);
        return 0;
    }
}

static bool reads(int cmd)
{
    return cmd == GETVAL || cmd == GETPID || cmd == GETNCNT || cmd == GETZCNT || cmd == GETALL ||
           cmd == IPC_STAT || cmd == SEM_STAT;
}

/* GETALL and SETALL move an array of nsems values; the set's size is
 * read first (it never changes), the array copied with no lock held. */
static int64_t sem_array_cmd(int id, int cmd, uint64_t uarr)
{
    int err;
    struct semset *sma = (struct semset *)ipc_lock_id(&sem_ids, id, false, &err);
    if (!sma)
        return err;
    int nsems = sma->nsems;
    bool ok = ipc_permitted(&sma->o.perm, ipc_cred(), cmd == GETALL ? 0444 : 0222);
    ipc_unlock(&sma->o);
    if (!ok)
        return -EACCES;
    uint16_t *vals = kmalloc(nsems * sizeof *vals);
    if (!vals)
        return -ENOMEM;
    int64_t r = 0;
    if (cmd == SETALL && copyin((void *)uarr, vals, nsems * sizeof *vals))
        r = -EFAULT;
    if (!r && !(sma = (struct semset *)ipc_lock_id(&sem_ids, id, false, &err)))
        r = err;
    if (!r) {
        r = sem_value_cmd(sma, cmd, 0, 0, vals);
        ipc_unlock(&sma->o);
    }
    if (!r && cmd == GETALL && copyout(vals, (void *)uarr, nsems * sizeof *vals))
        r = -EFAULT;
    kfree(vals);
    return r;
}

SYSCALL_DECL(sys_semctl)
{
    int id = (int)a0, num = (int)a1, cmd = (int)a2;
    uint64_t arg = a3;
    struct semid64_ds_u ds;
    if (cmd == IPC_INFO || cmd == SEM_INFO)
        return sem_info(cmd, arg);
    if (cmd == GETALL || cmd == SETALL)
        return sem_array_cmd(id, cmd, arg);
    if (cmd == IPC_SET && copyin((void *)arg, &ds, sizeof ds))
        return -EFAULT;
    bool by_slot = cmd == SEM_STAT || cmd == SEM_STAT_ANY;
    if (!by_slot && cmd != IPC_STAT && cmd != IPC_SET && cmd != IPC_RMID && cmd != GETVAL &&
        cmd != GETPID && cmd != GETNCNT && cmd != GETZCNT && cmd != SETVAL)
        return -EINVAL;
    int err;
    struct semset *sma = (struct semset *)ipc_lock_id(&sem_ids, id, by_slot, &err);
    if (!sma)
        return err;
    struct cred *cr = ipc_cred();
    int64_t r;
    if (cmd == IPC_SET || cmd == IPC_RMID) {
        r = ipc_owner(&sma->o.perm, cr) ? 0 : -EPERM;
        if (!r && cmd == IPC_SET)
            ipc_perm_set(&sem_ids, &sma->o, &ds.sem_perm);
        else if (!r)
            semset_remove(sma);
    } else if (!ipc_permitted(&sma->o.perm, cr, reads(cmd) ? 0444 : 0222) &&
               cmd != SEM_STAT_ANY) {
        r = -EACCES;
    } else if (cmd == IPC_STAT || by_slot) {
        sem_stat(sma, &ds);
        r = by_slot ? sma->o.id : 0;
    } else {
        r = sem_value_cmd(sma, cmd, num, (int)arg, NULL);
    }
    ipc_unlock(&sma->o);
    if (r >= 0 && (cmd == IPC_STAT || by_slot) && copyout(&ds, (void *)arg, sizeof ds))
        return -EFAULT;
    return r;
}

/* ---- exit ---- */

/* Apply one undo entry to its set, if the set still has it. */
static void undo_one(struct sem_undo *un, int pid)
{
    int err;
    struct semset *sma = (struct semset *)ipc_lock_id(&sem_ids, un->semid, false, &err);
    if (!sma)
        return;
    if (un->set == sma) {
        for (int i = 0; i < sma->nsems; i++) {
            if (!un->adj[i])
                continue;
            int v = sma->sems[i].val + un->adj[i];
            sma->sems[i].val = v < 0 ? 0 : v > SEMVMX ? SEMVMX : v;
            sma->sems[i].pid = pid;
        }
        for (struct sem_undo **pp = &sma->undos; *pp; pp = &(*pp)->set_next)
            if (*pp == un) {
                *pp = un->set_next;
                break;
            }
        sma->otime = realtime_sec();
        serve_waiters(sma);
    }
    ipc_unlock(&sma->o);
}

void sem_exit(struct proc *p)
{
    while (p->p_semundo) {
        struct sem_undo *un = p->p_semundo;
        p->p_semundo = un->proc_next;
        undo_one(un, p->p_pid);
        kfree(un);
    }
}

void sem_init(void)
{
    ipc_ids_init(&sem_ids, &sem_ids_class, "sem_ids");
}

/* /proc/sysvipc/sem: one line per set, in Linux's format. */
void sem_proc_lines(void (*line)(void *arg, const char *text), void *arg)
{
    int maxslot = ipc_max_slot(&sem_ids);
    for (int slot = 0; slot <= maxslot; slot++) {
        int err;
        struct semset *sma = (struct semset *)ipc_lock_id(&sem_ids, slot, true, &err);
        if (!sma)
            continue;
        struct semid64_ds_u ds;
        sem_stat(sma, &ds);
        int id = sma->o.id;
        ipc_unlock(&sma->o);
        char text[160];
        snprintf(text, sizeof text, "%10d %10d  %4o %10lu %5u %5u %5u %5u %10ld %10ld\n",
                 ds.sem_perm.key, id, ds.sem_perm.mode & 0777, (unsigned long)ds.sem_nsems,
                 ds.sem_perm.uid, ds.sem_perm.gid, ds.sem_perm.cuid, ds.sem_perm.cgid,
                 (long)ds.sem_otime, (long)ds.sem_ctime);
        line(arg, text);
    }
}
