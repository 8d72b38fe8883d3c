/*
 * System V message queues: msgget, msgsnd, msgrcv, msgctl.
 *
 * A queue is a list of messages in the order sent, each a type (a
 * positive long) and up to MSGMAX bytes, bounded by msg_qbytes bytes in
 * all (and as many messages).  msgrcv picks by type: 0 the first
 * message, t > 0 the first of type t (with MSG_EXCEPT the first not of
 * type t), t < 0 the first of the lowest type not above -t.
 *
 * Blocking both ways: a sender waits while its message does not fit, a
 * receiver while nothing matches, each on its side's channel of the
 * queue, and each change wakes the other side.  A signal that does
 * something ends a wait with EINTR, IPC_RMID every wait with EIDRM.
 * Messages are copied in before the queue is locked and out after it is
 * unlocked; a receiver whose buffer turns out bad has already taken its
 * message, which is lost, as on Linux.
 *
 * Locks: msg_ids.lock (class "msg_ids") and each queue's lock (class
 * "msg"), which guards its messages, counts and times; the order is in
 * kern/ipc/ipc.c.
 */
#include <kern/ipc/ipc.h>
#include <kern/lib/kprintf.h>
#include <kern/ipc/ipc_abi.h>
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/lock/sleep.h>
#include <kern/vm/as.h>
#include <kern/vm/kmem.h>
#include <kern/vfs/cred.h>
#include <kern/lib/errno.h>
#include <kern/lib/string.h>

/* Linux's limits, reported by IPC_INFO. */
#define MSGMAX          8192    /* bytes in one message */
#define MSGMNB          16384   /* default bytes in one queue */

struct msg {
    struct msg *next;           /* [o] */
    int64_t type;               /* [c] */
    size_t size;                /* [c] */
    char text[];                /* [c] */
};

struct msgq {
    struct ipc_obj o;
    struct msg *first, **last;  /* [o] in the order sent */
    uint64_t cbytes, qnum;      /* [o] bytes and messages in the queue */
    uint64_t qbytes;            /* [o] the most bytes (IPC_SET) */
    int64_t stime, rtime;       /* [o] last send, receive */
    int lspid, lrpid;           /* [o] */
    char rchan, wchan;          /* receivers, senders sleep on these */
};

LOCK_CLASS(msg_ids_class, "msg_ids", LK_MUTEX_SLEEP);
LOCK_CLASS(msg_class, "msg", LK_MUTEX_SLEEP);

static struct ipc_ids msg_ids;
static uint64_t msg_total_bytes, msg_total_count;   /* [t] for MSG_INFO */

static void msgq_free(struct ipc_obj *o)
{
    struct msgq *q = (struct msgq *)o;
    while (q->first) {
        struct msg *m = q->first;
        q->first = m->next;
        kfree(m);
    }
    kfree(q);
}

static int msg_create(struct ipc_ids *ids, int32_t key, int flags, uint64_t unused)
{
    struct msgq *q = kzalloc(sizeof *q);
    if (!q)
        return -ENOMEM;
    ipc_obj_init(&q->o, &msg_class, "msg", msgq_free);
    int err = ipc_add(ids, &q->o, key, flags, ipc_cred());
    if (err) {
        kfree(q);
        return err;
    }
    q->last = &q->first;
    q->qbytes = MSGMNB;
    return q->o.id;
}

SYSCALL_DECL(sys_msgget)
{
    return ipc_get(&msg_ids, (int32_t)a0, (int)a1, 0, msg_create, NULL);
}

/* A signal or removal ended a wait: the errno, or 0 to wait on. */
static int wait_ended(struct msgq *q, int slept)
{
    if (q->o.removed)
        return -EIDRM;
    struct proc *p = curproc();
    if (slept && p && sig_sleep_interrupted(p))
        return -EINTR;
    return 0;
}

/* Account a message in or out of the queue and the totals ([o] held). */
static void account(struct msgq *q, struct msg *m, int sign)
{
    q->cbytes += sign * (int64_t)m->size;
    q->qnum += sign;
    mutex_enter(&msg_ids.lock);
    msg_total_bytes += sign * (int64_t)m->size;
    msg_total_count += sign;
    mutex_exit(&msg_ids.lock);
}

static int64_t do_msgsnd(int id, uint64_t ubuf, int64_t size, int flags)
{
    int64_t type;
    if (copyin((void *)ubuf, &type, sizeof type))
        return -EFAULT;
    if (size < 0 || size > MSGMAX || id < 0 || type < 1)
        return -EINVAL;
    struct msg *m = kmalloc(sizeof *m + (size_t)size);
    if (!m)
        return -ENOMEM;
    m->type = type;
    m->size = (size_t)size;
    if (copyin((void *)(ubuf + sizeof(int64_t)), m->text, m->size)) {
        kfree(m);
        return -EFAULT;
    }
    int err;
    struct msgq *q = (struct msgq *)ipc_lock_id(&msg_ids, id, false, &err);
    if (!q) {
        kfree(m);
        return err;
    }
    int64_t r = ipc_permitted(&q->o.perm, ipc_cred(), 0222) ? 0 : -EACCES;
    while (!r && (m->size + q->cbytes > q->qbytes || q->qnum + 1 > q->qbytes)) {
        if (flags & IPC_NOWAIT) {
            r = -EAGAIN;
            break;
        }
        r = wait_ended(q, sig_sleep(&q->wchan));
    }
    if (!r) {
        m->next = NULL;
        *q->last = m;
        q->last = &m->next;
        account(q, m, +1);
        q->lspid = ipc_pid();
        q->stime = realtime_sec();
        wakeup(&q->rchan);
        m = NULL;
    }
    ipc_unlock(&q->o);
    kfree(m);
    return r;
}

SYSCALL_DECL(sys_msgsnd)
{
    return do_msgsnd((int)a0, a1, (int64_t)a2, (int)a3);
}

/* The message msgrcv's type selects, and the link that points at it. */
static struct msg **select_msg(struct msgq *q, int64_t type, int flags)
{
    struct msg **best = NULL;
    for (struct msg **pp = &q->first; *pp; pp = &(*pp)->next) {
        int64_t t = (*pp)->type;
        if (type == 0)
            return pp;
        if (type > 0 && ((flags & MSG_EXCEPT) ? t != type : t == type))
            return pp;
        if (type < 0 && t <= -type && (!best || t < (*best)->type))
            best = pp;
    }
    return best;
}

static void unlink_msg(struct msgq *q, struct msg **pp)
{
    struct msg *m = *pp;
    *pp = m->next;
    if (q->last == &m->next)
        q->last = pp;
    account(q, m, -1);
}

static int64_t do_msgrcv(int id, uint64_t ubuf, int64_t size, int64_t type, int flags)
{
    if (size < 0 || id < 0)
        return -EINVAL;
    if (flags & MSG_COPY)
        return -ENOSYS;             /* Linux without checkpoint/restore */
    int err;
    struct msgq *q = (struct msgq *)ipc_lock_id(&msg_ids, id, false, &err);
    if (!q)
        return err;
    struct msg *m = NULL;
    int64_t r = ipc_permitted(&q->o.perm, ipc_cred(), 0444) ? 0 : -EACCES;
    while (!r) {
        struct msg **pp = select_msg(q, type, flags);
        if (pp && (*pp)->size > (uint64_t)size && !(flags & MSG_NOERROR)) {
            r = -E2BIG;
        } else if (pp) {
            m = *pp;
            unlink_msg(q, pp);
            q->lrpid = ipc_pid();
            q->rtime = realtime_sec();
            wakeup(&q->wchan);
            break;
        } else if (flags & IPC_NOWAIT) {
            r = -ENOMSG;
        } else {
            r = wait_ended(q, sig_sleep(&q->rchan));
        }
    }
    ipc_unlock(&q->o);
    if (!m)
        return r;
    size_t n = MIN(m->size, (size_t)size);
    if (copyout(&m->type, (void *)ubuf, sizeof m->type) ||
        copyout(m->text, (void *)(ubuf + sizeof(int64_t)), n))
        r = -EFAULT;
    else
        r = (int64_t)n;
    kfree(m);
    return r;
}

SYSCALL_DECL(sys_msgrcv)
{
    return do_msgrcv((int)a0, a1, (int64_t)a2, (int64_t)a3, (int)a4);
}

static int64_t msg_info(int cmd, uint64_t ubuf)
{
    struct msginfo_u in = {
        .msgpool = IPC_MAXOBJ * MSGMNB / 1024, .msgmap = IPC_MAXOBJ * MSGMNB / MSGMAX,
        .msgmax = MSGMAX, .msgmnb = MSGMNB, .msgmni = IPC_MAXOBJ, .msgssz = 16,
        .msgtql = IPC_MAXOBJ * MSGMNB / MSGMAX, .msgseg = 0xffff,
    };
    if (cmd == MSG_INFO) {
        mutex_enter(&msg_ids.lock);
        in.msgpool = msg_ids.in_use;
        in.msgmap = (int32_t)msg_total_count;
        in.msgtql = (int32_t)msg_total_bytes;
        mutex_exit(&msg_ids.lock);
    }
    int maxslot = ipc_max_slot(&msg_ids);
    return copyout(&in, (void *)ubuf, sizeof in) ? -EFAULT : maxslot;
}

static void msg_stat(struct msgq *q, struct msqid64_ds_u *ds)
{
    memset(ds, 0, sizeof *ds);
    ipc_perm_out(&q->o, &ds->msg_perm);
    ds->msg_stime = q->stime;
    ds->msg_rtime = q->rtime;
    ds->msg_ctime = q->o.ctime;
    ds->msg_cbytes = q->cbytes;
    ds->msg_qnum = q->qnum;
    ds->msg_qbytes = q->qbytes;
    ds->msg_lspid = q->lspid;
    ds->msg_lrpid = q->lrpid;
}

/* IPC_SET: owner and mode, and msg_qbytes (above MSGMNB for root only). */
static int64_t msg_set(struct msgq *q, const struct msqid64_ds_u *ds)
{
    if (ds->msg_qbytes > MSGMNB && ipc_cred()->cr_uid != 0)
        return -EPERM;
    ipc_perm_set(&msg_ids, &q->o, &ds->msg_perm);
    q->qbytes = ds->msg_qbytes;
    wakeup(&q->wchan);              /* more room, perhaps */
    return 0;
}

static void msgq_remove(struct msgq *q)
{
    mutex_enter(&msg_ids.lock);
    ipc_remove(&msg_ids, &q->o);
    mutex_exit(&msg_ids.lock);
    while (q->first) {
        struct msg *m = q->first;
        unlink_msg(q, &q->first);
        kfree(m);
    }
    wakeup(&q->rchan);
    wakeup(&q->wchan);
}

SYSCALL_DECL(sys_msgctl)
{
    int id = (int)a0, cmd = (int)a1;
    uint64_t ubuf = a2;
    struct msqid64_ds_u ds;
    if (cmd == IPC_INFO || cmd == MSG_INFO)
        return msg_info(cmd, ubuf);
    if (cmd == IPC_SET && copyin((void *)ubuf, &ds, sizeof ds))
        return -EFAULT;
    bool by_slot = cmd == MSG_STAT || cmd == MSG_STAT_ANY;
    if (!by_slot && cmd != IPC_STAT && cmd != IPC_SET && cmd != IPC_RMID)
        return -EINVAL;
    int err;
    struct msgq *q = (struct msgq *)ipc_lock_id(&msg_ids, id, by_slot, &err);
    if (!q)
        return err;
    struct cred *cr = ipc_cred();
    int64_t r = 0;
    if (cmd == IPC_SET || cmd == IPC_RMID) {
        if (!ipc_owner(&q->o.perm, cr))
            r = -EPERM;
        else if (cmd == IPC_SET)
            r = msg_set(q, &ds);
        else
            msgq_remove(q);
    } else if (cmd != MSG_STAT_ANY && !ipc_permitted(&q->o.perm, cr, 0444)) {
        r = -EACCES;
    } else {
        msg_stat(q, &ds);
        r = by_slot ? q->o.id : 0;
    }
    ipc_unlock(&q->o);
    if (r >= 0 && (cmd == IPC_STAT || by_slot) && copyout(&ds, (void *)ubuf, sizeof ds))
        return -EFAULT;
    return r;
}

void msg_init(void)
{
    ipc_ids_init(&msg_ids, &msg_ids_class, "msg_ids");
}

/* /proc/sysvipc/msg: one line per queue, in Linux's format. */
void msg_proc_lines(void (*line)(void *arg, const char *text), void *arg)
{
    int maxslot = ipc_max_slot(&msg_ids);
    for (int slot = 0; slot <= maxslot; slot++) {
        int err;
        struct msgq *q = (struct msgq *)ipc_lock_id(&msg_ids, slot, true, &err);
        if (!q)
            continue;
        struct msqid64_ds_u ds;
        msg_stat(q, &ds);
        int id = q->o.id;
        ipc_unlock(&q->o);
        char text[200];
        snprintf(text, sizeof text, "%10d %10d  %4o  %10lu %10lu %5d %5d %5u %5u %5u %5u "
                 "%10ld %10ld %10ld\n", ds.msg_perm.key, id, ds.msg_perm.mode & 0777,
                 (unsigned long)ds.msg_cbytes, (unsigned long)ds.msg_qnum, ds.msg_lspid,
                 ds.msg_lrpid, ds.msg_perm.uid, ds.msg_perm.gid, ds.msg_perm.cuid,
                 ds.msg_perm.cgid, (long)ds.msg_stime, (long)ds.msg_rtime, (long)ds.msg_ctime);
        line(arg, text);
    }
}
