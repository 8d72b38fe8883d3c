/*
 * Datagram queues: the receive queue of the families whose sockets keep
 * whole messages (UDP and UDP-Lite, raw IPv4, netlink), one shared
 * implementation of what each would otherwise write again: queueing with
 * the receive buffer's limit, waiting, MSG_PEEK and MSG_TRUNC, the
 * sender's address, poll and FIONREAD.  AF_UNIX keeps its own queue, as
 * its messages carry credentials and descriptors.
 *
 * A datagram is one allocation: the header, the sender's address and the
 * bytes.  The queue is struct socket's so_dgq; a family puts a datagram
 * on it under the socket's lock and the receive takes it off under the
 * same lock, copying to the caller after letting it go (a peeked one is
 * copied first, since it stays queued).
 *
 * Locks: the socket's so_lock guards the queue; nothing else is taken.
 */
#include <kern/net/socket.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

/* What a queued datagram costs beyond its bytes, against so_rcvbuf (a
 * stand-in for Linux's skb truesize, so small datagrams fill it too). */
#define DGRAM_OVERHEAD  256

struct dgram *dgram_alloc(size_t len, const void *name, size_t namelen)
{
    if (namelen > DGRAM_NAME_MAX)
        return NULL;
    struct dgram *d = kmalloc(sizeof *d + len);
    if (!d)
        return NULL;
    d->d_next = NULL;
    d->d_len = len;
    d->d_namelen = (uint32_t)namelen;
    memcpy(d->d_name, name, namelen);
    return d;
}

bool dgram_enqueue(struct socket *so, struct dgram *d, bool bounded)
{
    struct dgram_queue *q = &so->so_dgq;
    if (so->so_shut & SO_RCV_SHUT)
        return false;
    if (bounded && q->q_bytes >= (size_t)so->so_rcvbuf)
        return false;
    *(q->q_head ? &q->q_last->d_next : &q->q_head) = d;
    q->q_last = d;
    q->q_bytes += d->d_len + DGRAM_OVERHEAD;
    socket_notify(so, POLL_READSIDE);
    return true;
}

void dgram_flush(struct socket *so)
{
    struct dgram_queue *q = &so->so_dgq;
    while (q->q_head) {
        struct dgram *d = q->q_head;
        q->q_head = d->d_next;
        kfree(d);
    }
    q->q_bytes = 0;
}

static int dgram_ready(struct socket *so) { return so->so_dgq.q_head != NULL; }

/* The first datagram off the queue (so_lock held), or, when peek, a copy
 * of it left queued; NULL only when memory is short for the copy. */
static struct dgram *dgram_take(struct socket *so, bool peek)
{
    struct dgram_queue *q = &so->so_dgq;
    struct dgram *d = q->q_head;
    if (peek) {
        struct dgram *copy = kmalloc(sizeof *d + d->d_len);
        if (copy)
            memcpy(copy, d, sizeof *d + d->d_len);
        return copy;
    }
    q->q_head = d->d_next;
    q->q_bytes -= d->d_len + DGRAM_OVERHEAD;
    return d;
}

int64_t dgram_recv(struct socket *so, struct sockxfer *sx)
{
    if (sx->sx_flags & MSG_OOB)
        return -EOPNOTSUPP;
    bool peek = sx->sx_flags & MSG_PEEK, eof = false;
    mutex_enter(&so->so_lock);
    int err = socket_wait_readable(so, sx->sx_nonblock, dgram_ready, &eof);
    struct dgram *d = err || eof ? NULL : dgram_take(so, peek);
    mutex_exit(&so->so_lock);
    if (err || eof)
        return err;
    if (!d)
        return -ENOMEM;
    int64_t r = socket_dgram_out(sx, d->d_data, d->d_len, d->d_name, d->d_namelen);
    kfree(d);
    return r;
}

short dgram_poll(struct socket *so, short events)
{
    mutex_enter(&so->so_lock);
    short r = (short)(POLLOUT | POLLWRNORM | socket_poll_shut(so) |
                      (so->so_dgq.q_head ? POLLIN | POLLRDNORM : 0));
    mutex_exit(&so->so_lock);
    return (short)(r & (events | POLLERR | POLLHUP));
}

int dgram_nread(struct socket *so)
{
    mutex_enter(&so->so_lock);
    struct dgram *d = so->so_dgq.q_head;
    int n = d ? (int)d->d_len : 0;
    mutex_exit(&so->so_lock);
    return n;
}
