/*
 * The table of Internet protocol control blocks: which socket owns which
 * local and foreign address and port, for bind, connect and the input
 * path's demultiplexing.
 *
 * A control block enters the table when it gets a port (bind, or the
 * ephemeral port a connect or a send picks) and holds a reference to its
 * socket while there, so a TCP connection outlives its file's close
 * until its protocol lets it go (FIN exchanged, TIME_WAIT over).  Blocks
 * hash by local port into INPCB_HASH chains; a lookup takes an exact
 * match of both ends first, then one bound to the local end with no
 * foreign end (a listener, an unconnected UDP socket), a specific local
 * address before the wildcard, as BSD's in_pcblookup.
 *
 * Port rules are Linux's: a port below 1024 needs root (EACCES); two
 * sockets share a port when either's address differs and neither is the
 * wildcard, when both set SO_REUSEPORT, or when both set SO_REUSEADDR and
 * neither listens; a TCP connection in TIME_WAIT gives way to a socket
 * that set SO_REUSEADDR.  Ephemeral ports are 32768-60999
 * (net.ipv4.ip_local_port_range), each one drawn at random (RFC 6056).
 *
 * Locks: inpcb_lock (class "inpcb", a sleep mutex) guards the table; it
 * is taken under a socket's so_lock (bind, connect) or alone (input's
 * lookup, which then takes the socket's lock after letting it go), never
 * the other way round.
 */
#include <kern/net/inet/inet.h>
#include <kern/proc/proc.h>
#include <kern/vfs/cred.h>
#include <kern/lib/errno.h>
#include <kern/vm/kmem.h>
#include <kern/arch/arch.h>

#define INPCB_HASH      64
#define PORT_FIRST      32768
#define PORT_LAST       60999
#define PORT_RESERVED   1024
#define SO_REUSEADDR    2
#define SO_REUSEPORT    15

LOCK_CLASS(inpcb_lock_class, "inpcb", LK_MUTEX_SLEEP);
static struct mutex inpcb_lock;
static struct inpcb *inpcb_hash[INPCB_HASH];    /* [t] */

void inpcb_init(void)
{
    mutex_init(&inpcb_lock, &inpcb_lock_class, 0, "inpcb");
}

static struct inpcb **chain(uint16_t lport) { return &inpcb_hash[ntohs(lport) % INPCB_HASH]; }

static bool opt_set(const struct socket *so, int opt) { return (so->so_bools >> opt) & 1; }

/* May inp take (laddr, lport) beside other, already there? */
static bool can_share(const struct inpcb *inp, in_addr_t laddr, const struct inpcb *other)
{
    if (other->inp_proto != inp->inp_proto)
        return true;
    if (laddr != INADDR_ANY && other->inp_laddr != INADDR_ANY && laddr != other->inp_laddr)
        return true;
    struct socket *a = inp->inp_so, *b = other->inp_so;
    if (opt_set(a, SO_REUSEPORT) && opt_set(b, SO_REUSEPORT) && a->so_uid == b->so_uid)
        return true;
    if (!opt_set(a, SO_REUSEADDR))
        return false;
    if (other->inp_timewait)
        return true;
    return opt_set(b, SO_REUSEADDR) && !a->so_listening && !b->so_listening;
}

static bool port_free(const struct inpcb *inp, in_addr_t laddr, uint16_t lport)
{
    for (struct inpcb *o = *chain(lport); o; o = o->inp_next)
        if (o != inp && o->inp_lport == lport && !can_share(inp, laddr, o))
            return false;
    return true;
}

/* An ephemeral port for inp (in network order), or 0 when all are taken. */
static uint16_t pick_ephemeral(const struct inpcb *inp)
{
    uint32_t span = PORT_LAST - PORT_FIRST + 1;
    /* RFC 6056's first algorithm: a random start, then the next free one,
     * so a port is not guessable from the last (the clock counter mixed
     * as a hash does: this kernel has no better source of randomness). */
    uint64_t x = rdtsc();
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdUL;
    x ^= x >> 33;
    uint32_t start = (uint32_t)(x % span);
    for (uint32_t i = 0; i < span; i++) {
        uint32_t port = PORT_FIRST + (start + i) % span;
        uint16_t p = htons((uint16_t)port);
        bool used = false;
        for (struct inpcb *o = *chain(p); o && !used; o = o->inp_next)
            used = o->inp_lport == p && o->inp_proto == inp->inp_proto;
        if (!used)
            return p;
    }
    return 0;
}

static void enter(struct inpcb *inp)
{
    struct inpcb **c = chain(inp->inp_lport);
    inp->inp_next = *c;
    *c = inp;
    inp->inp_intable = true;
    socket_hold(inp->inp_so);
}

void inpcb_insert(struct inpcb *inp)
{
    mutex_enter(&inpcb_lock);
    enter(inp);
    mutex_exit(&inpcb_lock);
}

int inpcb_bind(struct inpcb *inp, in_addr_t laddr, uint16_t lport)
{
    if (laddr != INADDR_ANY && !inet_local_addr(laddr))
        return -EADDRNOTAVAIL;
    if (lport && ntohs(lport) < PORT_RESERVED && curproc() && curproc()->p_cred->cr_uid != 0)
        return -EACCES;
    mutex_enter(&inpcb_lock);
    int err = 0;
    if (!lport && !(lport = pick_ephemeral(inp)))
        err = -EADDRINUSE;
    else if (!port_free(inp, laddr, lport))
        err = -EADDRINUSE;
    if (!err) {
        inp->inp_laddr = laddr;
        inp->inp_lport = lport;
        inp->inp_bound = true;
        enter(inp);
    }
    mutex_exit(&inpcb_lock);
    return err;
}

int inpcb_connect(struct inpcb *inp, in_addr_t faddr, uint16_t fport)
{
    in_addr_t src;
    if (faddr == INADDR_ANY)
        faddr = htonl(INADDR_LOOPBACK_H);       /* Linux: connecting to 0.0.0.0 is to this host */
    if (!inet_route(faddr, &src))
        return -ENETUNREACH;
    if (!inp->inp_bound) {
        int err = inpcb_bind(inp, INADDR_ANY, 0);
        if (err)
            return err == -EADDRINUSE ? -EAGAIN : err;     /* Linux: no ephemeral port */
    }
    mutex_enter(&inpcb_lock);
    if (inp->inp_laddr == INADDR_ANY)
        inp->inp_laddr = src;
    inp->inp_faddr = faddr;
    inp->inp_fport = fport;
    mutex_exit(&inpcb_lock);
    return 0;
}

void inpcb_remove(struct inpcb *inp)
{
    mutex_enter(&inpcb_lock);
    if (inp->inp_intable) {
        struct inpcb **pp = chain(inp->inp_lport);
        while (*pp != inp)
            pp = &(*pp)->inp_next;
        *pp = inp->inp_next;
        inp->inp_intable = false;
    }
    mutex_exit(&inpcb_lock);
}

struct socket *inpcb_lookup(int proto, in_addr_t laddr, uint16_t lport, in_addr_t faddr,
                            uint16_t fport)
{
    struct inpcb *best = NULL;
    int best_score = 0;
    mutex_enter(&inpcb_lock);
    for (struct inpcb *o = *chain(lport); o; o = o->inp_next) {
        if (o->inp_proto != proto || o->inp_lport != lport)
            continue;
        int score;
        if (o->inp_faddr == faddr && o->inp_fport == fport && o->inp_laddr == laddr)
            score = 3;
        else if (o->inp_faddr != INADDR_ANY)
            continue;
        else if (o->inp_laddr == laddr)
            score = 2;
        else if (o->inp_laddr == INADDR_ANY)
            score = 1;
        else
            continue;
        if (score > best_score) {
            best = o;
            best_score = score;
        }
    }
    struct socket *so = best ? best->inp_so : NULL;
    if (so)
        socket_hold(so);
    mutex_exit(&inpcb_lock);
    return so;
}

void inpcb_snapshot(int proto, struct sockvec *sv)
{
    do {
        mutex_enter(&inpcb_lock);
        for (int h = 0; h < INPCB_HASH; h++)
            for (struct inpcb *o = inpcb_hash[h]; o; o = o->inp_next)
                if (o->inp_proto == proto)
                    sockvec_take(sv, o->inp_so);
        mutex_exit(&inpcb_lock);
    } while (sockvec_again(sv));
}
