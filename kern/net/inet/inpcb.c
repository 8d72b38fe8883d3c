/*
 * The table of Internet protocol control blocks: which socket owns which
 * local and foreign address and port, for bind, connect and the input
 * path's demultiplexing.
 *
 * A control block enters the table when it gets a port (bind, or the
 * ephemeral port a connect or a send picks) and holds a reference to its
 * socket while there, so a TCP connection outlives its file's close
 * until its protocol lets it go (FIN exchanged, TIME_WAIT over).
 *
 * Two hashes, as Linux's bind and established tables and BSD's
 * in_pcbhash: every block in the table is on its local port's chain of
 * the port hash (PORT_HASH buckets), which bind's port rules and the
 * lookup of a listener or an unconnected UDP socket walk; a block with a
 * foreign end is also on the chain of its four-tuple in the connection
 * hash (CONN_HASH buckets, hashed with a key drawn at boot so a remote
 * host cannot aim its connections at one chain).  A lookup takes an
 * exact match of both ends from the connection hash first, then one bound
 * to the local end with no foreign end from the port hash, a specific
 * local address before the wildcard, as BSD's in_pcblookup.  So the
 * input path of many connections to one server port (redis, nginx)
 * spreads over the connection buckets instead of walking the listener's
 * one chain under one lock.
 *
 * Port rules are Linux's: a port below 1024 needs root (EACCES); two
 * sockets share a port when either's address differs and neither is the
 * wildcard, when both set SO_REUSEPORT, or when both set SO_REUSEADDR and
 * neither listens; a TCP connection in TIME_WAIT gives way to a socket
 * that set SO_REUSEADDR.  Ephemeral ports are 32768-60999
 * (net.ipv4.ip_local_port_range), each one drawn at random (RFC 6056).
 *
 * Locks: each bucket of each hash has its own sleep mutex, classes
 * "inpcbport" and "inpcbconn" (lockstat shows the two).  A block's ends
 * change only with its socket's so_lock, its port bucket's lock and, while
 * it has a foreign end, its connection bucket's lock held ([t] in
 * inet.h); any of them is enough to read them.  Order: so_lock, then a
 * port bucket, then a connection bucket; never two buckets of one hash.
 * Input's lookup takes a bucket alone and lets it go before it locks the
 * socket it found.
 */
#include <kern/net/inet/inet.h>
#include <kern/proc/proc.h>
#include <kern/vfs/cred.h>
#include <kern/lib/errno.h>
#include <kern/vm/kmem.h>
#include <kern/arch/arch.h>

#define PORT_HASH       256
#define CONN_HASH       1024
#define PORT_FIRST      32768
#define PORT_LAST       60999
#define PORT_RESERVED   1024
#define SO_REUSEADDR    2
#define SO_REUSEPORT    15

struct pcb_bucket {
    struct mutex b_lock;
    struct inpcb *b_head;           /* [b_lock] inp_pnext or inp_cnext chain */
};

LOCK_CLASS(inpcb_port_class, "inpcbport", LK_MUTEX_SLEEP);
LOCK_CLASS(inpcb_conn_class, "inpcbconn", LK_MUTEX_SLEEP);
static struct pcb_bucket port_hash[PORT_HASH];
static struct pcb_bucket conn_hash[CONN_HASH];
static uint64_t conn_key;           /* [c] drawn at boot */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdUL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53UL;
    x ^= x >> 33;
    return x;
}

void inpcb_init(void)
{
    for (int i = 0; i < PORT_HASH; i++)
        mutex_init(&port_hash[i].b_lock, &inpcb_port_class, 0, "inpcbport");
    for (int i = 0; i < CONN_HASH; i++)
        mutex_init(&conn_hash[i].b_lock, &inpcb_conn_class, 0, "inpcbconn");
    conn_key = mix64(rdtsc());
}

static struct pcb_bucket *port_bucket(uint16_t lport)
{
    return &port_hash[ntohs(lport) % PORT_HASH];
}

static struct pcb_bucket *conn_bucket(in_addr_t laddr, uint16_t lport, in_addr_t faddr,
                                      uint16_t fport)
{
    uint64_t ends = ((uint64_t)laddr << 32 | faddr) ^ conn_key;
    uint64_t ports = ((uint64_t)lport << 16 | fport) + conn_key;
    return &conn_hash[mix64(ends ^ mix64(ports)) % CONN_HASH];
}

static struct pcb_bucket *conn_bucket_of(const struct inpcb *inp)
{
    return conn_bucket(inp->inp_laddr, inp->inp_lport, inp->inp_faddr, inp->inp_fport);
}

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

/* May inp bind (laddr, lport)?  Its port bucket's lock held. */
static bool port_free(const struct inpcb *inp, in_addr_t laddr, uint16_t lport)
{
    for (struct inpcb *o = port_bucket(lport)->b_head; o; o = o->inp_pnext)
        if (o != inp && o->inp_lport == lport && !can_share(inp, laddr, o))
            return false;
    return true;
}

/* Is ephemeral port p unused by inp's protocol?  Its bucket's lock held. */
static bool ephemeral_free(const struct inpcb *inp, uint16_t p)
{
    for (struct inpcb *o = port_bucket(p)->b_head; o; o = o->inp_pnext)
        if (o->inp_lport == p && o->inp_proto == inp->inp_proto)
            return false;
    return true;
}

/* Put inp on its port chain (its bucket's lock held); the table's
 * reference to the socket. */
static void enter_port(struct inpcb *inp, struct pcb_bucket *b)
{
    inp->inp_pnext = b->b_head;
    b->b_head = inp;
    inp->inp_intable = true;
    socket_hold(inp->inp_so);
}

/* Put inp, which has a foreign end, on its connection chain (its port
 * bucket's lock held). */
static void enter_conn(struct inpcb *inp)
{
    struct pcb_bucket *c = conn_bucket_of(inp);
    mutex_enter(&c->b_lock);
    inp->inp_cnext = c->b_head;
    c->b_head = inp;
    inp->inp_inconn = true;
    mutex_exit(&c->b_lock);
}

/* Take inp off its connection chain, if on it (its port bucket's lock
 * held). */
static void leave_conn(struct inpcb *inp)
{
    if (!inp->inp_inconn)
        return;
    struct pcb_bucket *c = conn_bucket_of(inp);
    mutex_enter(&c->b_lock);
    struct inpcb **pp = &c->b_head;
    while (*pp != inp)
        pp = &(*pp)->inp_cnext;
    *pp = inp->inp_cnext;
    inp->inp_inconn = false;
    mutex_exit(&c->b_lock);
}

/* Bind inp to (laddr, lport), its bucket's lock held. */
static void take_port(struct inpcb *inp, struct pcb_bucket *b, in_addr_t laddr, uint16_t lport)
{
    inp->inp_laddr = laddr;
    inp->inp_lport = lport;
    inp->inp_bound = true;
    enter_port(inp, b);
}

/* Bind inp to a free ephemeral port on laddr: RFC 6056's first
 * algorithm, a random start and then the next free one, so a port is
 * not guessable from the last (the clock counter mixed as a hash: this
 * kernel has no better source of randomness).  0 or -EADDRINUSE. */
static int bind_ephemeral(struct inpcb *inp, in_addr_t laddr)
{
    uint32_t span = PORT_LAST - PORT_FIRST + 1;
    uint32_t start = (uint32_t)(mix64(rdtsc()) % span);
    for (uint32_t i = 0; i < span; i++) {
        uint16_t p = htons((uint16_t)(PORT_FIRST + (start + i) % span));
        struct pcb_bucket *b = port_bucket(p);
        mutex_enter(&b->b_lock);
        bool free = ephemeral_free(inp, p);
        if (free)
            take_port(inp, b, laddr, p);
        mutex_exit(&b->b_lock);
        if (free)
            return 0;
    }
    return -EADDRINUSE;
}

int inpcb_bind(struct inpcb *inp, in_addr_t laddr, uint16_t lport)
{
    if (laddr != INADDR_ANY && !inet_local_addr(laddr))
        return -EADDRNOTAVAIL;
    if (lport && ntohs(lport) < PORT_RESERVED && inp->inp_proto != IPPROTO_ICMP && curproc() &&
        curproc()->p_cred->cr_uid != 0)
        return -EACCES;                     /* (a ping socket's identifier is any one's) */
    if (!lport)
        return bind_ephemeral(inp, laddr);
    struct pcb_bucket *b = port_bucket(lport);
    mutex_enter(&b->b_lock);
    bool free = port_free(inp, laddr, lport);
    if (free)
        take_port(inp, b, laddr, lport);
    mutex_exit(&b->b_lock);
    return free ? 0 : -EADDRINUSE;
}

/* Give inp, bound, new foreign and local ends (both locks it needs are
 * taken here, so the lookups see the old ends or the new, never half). */
static void set_ends(struct inpcb *inp, in_addr_t laddr, in_addr_t faddr, uint16_t fport)
{
    struct pcb_bucket *b = port_bucket(inp->inp_lport);
    mutex_enter(&b->b_lock);
    leave_conn(inp);
    inp->inp_laddr = laddr;
    inp->inp_faddr = faddr;
    inp->inp_fport = fport;
    if (faddr != INADDR_ANY && inp->inp_intable)
        enter_conn(inp);
    mutex_exit(&b->b_lock);
}

/* A connection that ended left the table (tcp_close): a new connect binds
 * again, to the port bind named (if still free) or to a new ephemeral one,
 * as Linux's inet_put_port keeps only a port the user bound. */
static int bind_again(struct inpcb *inp)
{
    in_addr_t laddr = inp->inp_addrlock ? inp->inp_laddr : INADDR_ANY;
    uint16_t lport = inp->inp_portlock ? inp->inp_lport : 0;
    inp->inp_bound = false;
    inp->inp_laddr = INADDR_ANY;
    inp->inp_lport = inp->inp_fport = 0;
    inp->inp_faddr = INADDR_ANY;
    int err = inpcb_bind(inp, laddr, lport);
    if (err && lport) {                     /* keep what bind named for the next try */
        inp->inp_laddr = laddr;
        inp->inp_lport = lport;
        inp->inp_bound = true;
    }
    return err;
}

int inpcb_connect(struct inpcb *inp, in_addr_t faddr, uint16_t fport)
{
    in_addr_t src;
    if (faddr == INADDR_ANY)
        faddr = htonl(INADDR_LOOPBACK_H);       /* Linux: connecting to 0.0.0.0 is to this host */
    if (!inet_route(faddr, &src))
        return -ENETUNREACH;
    if (inp->inp_bound && !inp->inp_intable) {
        int err = bind_again(inp);
        if (err)
            return err == -EADDRINUSE && !inp->inp_portlock ? -EAGAIN : err;
    }
    if (!inp->inp_bound) {
        int err = inpcb_bind(inp, INADDR_ANY, 0);
        if (err)
            return err == -EADDRINUSE ? -EAGAIN : err;     /* Linux: no ephemeral port */
    }
    set_ends(inp, inp->inp_laddr == INADDR_ANY ? src : inp->inp_laddr, faddr, fport);
    return 0;
}

/* Take inp off its port chain (its bucket b's lock held). */
static void leave_port(struct inpcb *inp, struct pcb_bucket *b)
{
    leave_conn(inp);
    struct inpcb **pp = &b->b_head;
    while (*pp != inp)
        pp = &(*pp)->inp_pnext;
    *pp = inp->inp_pnext;
    inp->inp_intable = false;
}

bool inpcb_disconnect(struct inpcb *inp)
{
    struct pcb_bucket *b = port_bucket(inp->inp_lport);
    mutex_enter(&b->b_lock);
    leave_conn(inp);
    inp->inp_faddr = INADDR_ANY;
    inp->inp_fport = 0;
    if (!inp->inp_addrlock)
        inp->inp_laddr = INADDR_ANY;
    bool left = inp->inp_intable && !inp->inp_portlock;
    if (left) {
        leave_port(inp, b);
        inp->inp_lport = 0;
        inp->inp_bound = false;
    }
    mutex_exit(&b->b_lock);
    return left;
}

void inpcb_insert(struct inpcb *inp)
{
    struct pcb_bucket *b = port_bucket(inp->inp_lport);
    mutex_enter(&b->b_lock);
    enter_port(inp, b);
    if (inp->inp_faddr != INADDR_ANY)
        enter_conn(inp);
    mutex_exit(&b->b_lock);
}

void inpcb_remove(struct inpcb *inp)
{
    struct pcb_bucket *b = port_bucket(inp->inp_lport);
    mutex_enter(&b->b_lock);
    if (inp->inp_intable)
        leave_port(inp, b);
    mutex_exit(&b->b_lock);
}

/* The connected block with exactly these ends, its socket held. */
static struct socket *lookup_conn(int proto, in_addr_t laddr, uint16_t lport, in_addr_t faddr,
                                  uint16_t fport)
{
    struct pcb_bucket *c = conn_bucket(laddr, lport, faddr, fport);
    struct socket *so = NULL;
    mutex_enter(&c->b_lock);
    for (struct inpcb *o = c->b_head; o && !so; o = o->inp_cnext)
        if (o->inp_proto == proto && o->inp_lport == lport && o->inp_fport == fport &&
            o->inp_faddr == faddr && o->inp_laddr == laddr)
            so = o->inp_so;
    if (so)
        socket_hold(so);
    mutex_exit(&c->b_lock);
    return so;
}

/* A block bound to lport with no foreign end, on laddr before the
 * wildcard, its socket held. */
static struct socket *lookup_bound(int proto, in_addr_t laddr, uint16_t lport)
{
    struct pcb_bucket *b = port_bucket(lport);
    struct inpcb *best = NULL;
    mutex_enter(&b->b_lock);
    for (struct inpcb *o = b->b_head; o; o = o->inp_pnext) {
        if (o->inp_proto != proto || o->inp_lport != lport || o->inp_faddr != INADDR_ANY)
            continue;
        if (o->inp_laddr == laddr) {
            best = o;
            break;
        }
        if (o->inp_laddr == INADDR_ANY && !best)
            best = o;
    }
    struct socket *so = best ? best->inp_so : NULL;
    if (so)
        socket_hold(so);
    mutex_exit(&b->b_lock);
    return so;
}

struct socket *inpcb_lookup(int proto, in_addr_t laddr, uint16_t lport, in_addr_t faddr,
                            uint16_t fport)
{
    struct socket *so = lookup_conn(proto, laddr, lport, faddr, fport);
    return so ? so : lookup_bound(proto, laddr, lport);
}

void inpcb_snapshot(int proto, struct sockvec *sv)
{
    do {
        for (int h = 0; h < PORT_HASH; h++) {
            mutex_enter(&port_hash[h].b_lock);
            for (struct inpcb *o = port_hash[h].b_head; o; o = o->inp_pnext)
                if (o->inp_proto == proto)
                    sockvec_take(sv, o->inp_so);
            mutex_exit(&port_hash[h].b_lock);
        }
    } while (sockvec_again(sv));
}
