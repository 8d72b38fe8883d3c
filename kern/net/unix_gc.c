/*
 * AF_UNIX's collector of descriptors in flight.
 *
 * Theory.  A socket's file passed in a message (SCM_RIGHTS) is held by
 * the message until it is received.  A socket whose file is held only
 * by messages in queues that nobody can read any more -- its own, or a
 * ring of sockets each queued in the next -- would never be closed.
 * Linux's answer (net/unix/garbage.c) is the one here, in its simplest
 * form: count, per socket, the references to its file that messages
 * hold (u_inflight); a socket all of whose references are such is a
 * candidate; take from each candidate's count the references held by
 * messages queued at candidates; a candidate left with a reference is
 * reachable from outside, and so is everything queued at a reachable
 * one; the candidates left unreachable have their queues dropped, which
 * releases the files in them and closes the ring.
 *
 * The counts are sound without stopping the world: a file that some
 * process holds a descriptor for has more references than messages, so
 * is no candidate; a file on its way into or out of a queue (a send
 * that took it, a receive that took it off the queue) still has its
 * reference counted in u_inflight but is in no queue, so its candidate
 * keeps a reference and is reachable.  Nobody can read from a candidate
 * (no descriptor names it), so what the collector drops nobody could
 * have received.
 *
 * Locks.  unix_gc_lock (class "unixgc", a sleep mutex) guards the
 * in-flight counts, the list of sockets with files in flight, and the
 * collector's marks; the collector takes each candidate's so_lock under
 * it to walk its queue.  It is taken with no socket lock held (sends
 * count their files before queueing, receives after taking them off).
 * The dropped messages are freed after it is let go: that closes
 * sockets, whose release runs the collector again (gc_again).  It runs
 * at every release of a socket while files are in flight, and after
 * every GC_EVERY socket files sent (a ring closed by its last
 * descriptors releases no socket of its own).
 */
#include <kern/net/unix_impl.h>
#include <kern/proc/proc.h>
#include <kern/vm/kmem.h>
#include <kern/lib/errno.h>

LOCK_CLASS(unix_gc_lock_class, "unixgc", LK_MUTEX_SLEEP);
static struct mutex unix_gc_lock;
static struct unpcb *inflight_list;     /* [g] sockets with u_inflight > 0 */
static bool gc_running, gc_again;       /* [g] */
static int sent_since_gc;               /* [g] socket files put in flight since the last pass */

/* Closing a descriptor does not release a socket whose file is in
 * flight, so a ring whose last descriptors close runs no collection of
 * its own: one runs also after every GC_EVERY socket files sent, as
 * Linux's wait_for_unix_gc does after its threshold. */
#define GC_EVERY 64

static struct unpcb *unix_of(struct file *fp)
{
    struct socket *so = file_socket(fp);
    return so && so->so_ops == &unix_sockops ? sotounp(so) : NULL;
}

static void list_remove(struct unpcb *u)
{
    for (struct unpcb **pp = &inflight_list; *pp; pp = &(*pp)->u_gcnext)
        if (*pp == u) {
            *pp = u->u_gcnext;
            return;
        }
}

void unix_inflight(struct file **files, int n, int delta)
{
    bool collect = false;
    mutex_enter(&unix_gc_lock);
    for (int i = 0; i < n; i++) {
        struct unpcb *u = unix_of(files[i]);
        if (!u)
            continue;
        if (u->u_inflight == 0 && delta > 0) {
            u->u_gcnext = inflight_list;
            inflight_list = u;
        }
        u->u_inflight += delta;
        if (u->u_inflight == 0)
            list_remove(u);
        if (delta > 0 && ++sent_since_gc >= GC_EVERY) {
            sent_since_gc = 0;
            collect = true;
        }
    }
    mutex_exit(&unix_gc_lock);
    if (collect)
        unix_gc();
}

/* Apply fn to every candidate among the files queued at socket u. */
static void each_queued(struct unpcb *u, void (*fn)(struct unpcb *c))
{
    struct socket *so = u->u_so;
    mutex_enter(&so->so_lock);
    for (struct unix_msg *m = u->u_rq; m; m = m->m_next)
        for (int i = 0; i < m->m_nfiles; i++) {
            struct unpcb *c = unix_of(m->m_files[i]);
            if (c && c->u_gcdead)
                fn(c);
        }
    mutex_exit(&so->so_lock);
}

static void drop_ref(struct unpcb *c) { c->u_gcref--; }

static void mark_alive(struct unpcb *c)
{
    c->u_gcdead = false;
    each_queued(c, mark_alive);
}

/* One pass (unix_gc_lock held): the queues of the unreachable
 * candidates, taken off them, chained. */
static struct unix_msg *collect(void)
{
    for (struct unpcb *u = inflight_list; u; u = u->u_gcnext) {
        u->u_gcref = __atomic_load_n(&u->u_so->so_file->f_count, __ATOMIC_ACQUIRE);
        u->u_gcdead = u->u_gcref == u->u_inflight;
    }
    for (struct unpcb *u = inflight_list; u; u = u->u_gcnext)
        if (u->u_gcdead)
            each_queued(u, drop_ref);
    for (struct unpcb *u = inflight_list; u; u = u->u_gcnext)
        if (u->u_gcdead && u->u_gcref > 0)
            mark_alive(u);
    struct unix_msg *dropped = NULL;
    for (struct unpcb *u = inflight_list; u; u = u->u_gcnext) {
        if (!u->u_gcdead)
            continue;
        u->u_gcdead = false;
        struct socket *so = u->u_so;
        mutex_enter(&so->so_lock);
        if (u->u_rq) {
            *u->u_rqtail = dropped;
            dropped = u->u_rq;
            u->u_rq = NULL;
            u->u_rqtail = &u->u_rq;
            u->u_rqlen = 0;
        }
        mutex_exit(&so->so_lock);
    }
    return dropped;
}

void unix_gc(void)
{
    mutex_enter(&unix_gc_lock);
    if (gc_running || !inflight_list) {
        gc_again = gc_running;
        mutex_exit(&unix_gc_lock);
        return;
    }
    gc_running = true;
    do {
        gc_again = false;
        struct unix_msg *dropped = collect();
        mutex_exit(&unix_gc_lock);
        unix_msgs_free(dropped);
        mutex_enter(&unix_gc_lock);
    } while (gc_again);
    gc_running = false;
    mutex_exit(&unix_gc_lock);
}

void unix_gc_init(void)
{
    mutex_init(&unix_gc_lock, &unix_gc_lock_class, 0, "unixgc");
}
