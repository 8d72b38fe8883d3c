/*
 * SIGIO: signal-driven I/O for a file opened with O_ASYNC (fcntl F_SETFL
 * or ioctl FIOASYNC), sent to its owner (F_SETOWN, FIOSETOWN, SIOCSPGRP:
 * a process, or a process group when negative) when the file becomes
 * readable or writable.  Sockets announce it (kern/net/socket.c's
 * socket_notify, through the struct sigio each socket has); pipes and
 * terminals do not yet.
 *
 * Theory.  The announcement comes with the socket's lock held, and
 * finding a process takes proc_lock, which comes before the socket locks
 * (docs/architecture.md), so it is not sent there: the object's struct
 * sigio is put on a list (a spin lock, a leaf) with a hold on its vnode,
 * and a kernel thread, "sigio", sends the signals with no other lock
 * held.  One already on the list is not put there twice: one SIGIO for a
 * burst of changes.  Without F_SETSIG (not offered) the signal is plain
 * SIGIO with si_code SI_KERNEL, as Linux sends it.  The owner is read when the signal is sent, so one set in
 * between wins; an owner that has gone gets nothing.
 *
 * Locks: sigio_lock (class "sigio", a spin lock) guards the list and each
 * struct sigio's sg_next, sg_queued and sg_vp; a leaf.
 */
#include <kern/proc/sigio.h>
#include <kern/proc/proc.h>
#include <kern/vfs/vfs.h>
#include <kern/sched/thread.h>
#include <kern/lock/sleep.h>
#include <kern/lock/spinlock.h>
#include <kern/arch/panic.h>

#define SIGIO_SIGNAL    29
#define SI_KERNEL_CODE  0x80

LOCK_CLASS(sigio_lock_class, "sigio", LK_SPIN);
static spinlock_t sigio_lock;
static struct sigio *sigio_list;    /* [sigio_lock] objects with a SIGIO to send */
static int sigio_chan;              /* the thread sleeps here */

void sigio_post(struct sigio *sg, struct vnode *vp, short events)
{
    if (!__atomic_load_n(&sg->sg_async, __ATOMIC_RELAXED) ||
        !__atomic_load_n(&sg->sg_owner, __ATOMIC_RELAXED))
        return;
    (void)events;               /* one signal whatever changed, without F_SETSIG */
    spin_lock(&sigio_lock);
    bool queue = !sg->sg_queued;
    if (queue) {
        sg->sg_queued = true;
        sg->sg_vp = vp;
        VN_HOLD(vp);
        sg->sg_next = sigio_list;
        sigio_list = sg;
    }
    spin_unlock(&sigio_lock);
    if (queue)
        wakeup(&sigio_chan);
}

static int post_sigio(struct proc *p, void *arg)
{
    (void)arg;
    struct ksiginfo si = { .si_signo = SIGIO_SIGNAL, .si_code = SI_KERNEL_CODE };
    sig_post(p, SIGIO_SIGNAL, &si);
    return 0;
}

/* The next object with a signal to send, taken off the list, and the
 * vnode held for it. */
static struct sigio *sigio_take(struct vnode **vpp)
{
    spin_lock(&sigio_lock);
    struct sigio *sg = sigio_list;
    if (sg) {
        sigio_list = sg->sg_next;
        sg->sg_queued = false;
        *vpp = sg->sg_vp;
    }
    spin_unlock(&sigio_lock);
    return sg;
}

static void sigio_main(void *unused)
{
    (void)unused;
    for (;;) {
        struct vnode *vp;
        for (struct sigio *sg; (sg = sigio_take(&vp));) {
            int owner = __atomic_load_n(&sg->sg_owner, __ATOMIC_RELAXED);
            if (owner > 0)
                proc_apply(owner, post_sigio, NULL);
            else if (owner < 0)
                proc_signal_pgrp(-owner, SIGIO_SIGNAL);
            VN_RELE(vp);        /* the object may go now, its struct sigio with it */
        }
        struct sleepq *sq = sleepq_lock(&sigio_chan);
        if (!__atomic_load_n(&sigio_list, __ATOMIC_ACQUIRE))
            sleep_locked(sq, &sigio_chan);
        else
            sleepq_unlock(sq);
    }
}

void sigio_init(void)
{
    spin_init(&sigio_lock, &sigio_lock_class);
    if (!thread_create("sigio", sigio_main, NULL, AFFINITY_ALL))
        panic("sigio: no memory for its thread");
}
