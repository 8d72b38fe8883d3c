/*
 * Sockets: the layer between the socket system calls and the address
 * families (AF_UNIX, kern/net/unix.c; AF_INET, kern/net/inet/).  Theory in kern/net/socket.c.
 *
 * Lock key for struct socket:
 *   [c]  constant after the socket is made
 *   [s]  so_lock, the socket lock (class "socket", an SVR4 sleep mutex,
 *        released while its holder sleeps)
 *   [a]  atomic operations only
 *   [p]  the address family's own (documented in its file)
 */
#ifndef KERN_NET_SOCKET_H
#define KERN_NET_SOCKET_H

#include <kern/lib/types.h>
#include <kern/lock/mutex.h>
#include <kern/vfs/vnode.h>
#include <kern/proc/sigio.h>

struct file;
struct cred;
struct socket;

/* Linux's values. */
#define AF_UNSPEC       0
#define AF_UNIX         1
#define AF_INET         2
#define AF_INET6        10
#define SOCK_STREAM     1
#define SOCK_DGRAM      2
#define SOCK_RAW        3
#define SOCK_SEQPACKET  5
#define SOCK_NONBLOCK   0x800
#define SOCK_CLOEXEC    0x80000
#define SOL_SOCKET      1
#define SO_KEEPALIVE    9           /* its bit in so_bools too */
#define SHUT_RD         0
#define SHUT_WR         1
#define SHUT_RDWR       2

#define MSG_OOB         0x1
#define MSG_PEEK        0x2
#define MSG_DONTROUTE   0x4
#define MSG_CTRUNC      0x8
#define MSG_TRUNC       0x20
#define MSG_DONTWAIT    0x40
#define MSG_EOR         0x80
#define MSG_WAITALL     0x100
#define MSG_NOSIGNAL    0x4000
#define MSG_MORE        0x8000
#define MSG_WAITFORONE  0x10000
#define MSG_CMSG_CLOEXEC 0x40000000

/* so_shut: this end's directions that are closed (shutdown, or the peer
 * gone), as Linux's sk_shutdown. */
#define SO_RCV_SHUT     1
#define SO_SEND_SHUT    2

/* One piece of a caller's buffer: user memory (for system calls) or
 * kernel memory (VOP_READ and VOP_WRITE from inside the kernel). */
struct kiovec {
    uint64_t base;
    size_t len;
};

/*
 * The data of one send or receive: the caller's buffers with a cursor
 * (sx_*), and what travels beside the data (the peer's address, control
 * messages) already in kernel memory.  Filled by the system call layer
 * (kern/net/sys_socket.c); the address family moves the data with
 * sockxfer_in and sockxfer_out.
 */
struct sockxfer {
    struct kiovec *sx_iov;
    int sx_iovcnt;
    bool sx_user;               /* the buffers are user memory */
    int sx_idx;                 /* cursor: the piece, and the offset in it */
    size_t sx_off;
    size_t sx_resid;            /* bytes left from the cursor on */
    /* send: the destination (NULL: the connected peer); receive: room
     * for the sender's address (sx_namelen bytes), and in sx_nameout its
     * true length (0: none) */
    void *sx_name;
    size_t sx_namelen, sx_nameout;
    /* send: the caller's control messages; receive: room for them, and
     * in sx_controlout the bytes used */
    void *sx_control;
    size_t sx_controllen, sx_controlout;
    int sx_flags;               /* MSG_* given */
    int sx_oflags;              /* receive: MSG_TRUNC, MSG_CTRUNC, for msg_flags */
    int sx_fdflags;             /* receive: FD_CLOEXEC for descriptors passed in */
    bool sx_nonblock;           /* O_NONBLOCK or MSG_DONTWAIT */
};

/* Copy the next n bytes of the caller's buffers into dst (send), or src
 * out to them (receive), moving the cursor: 0 or -EFAULT. */
int sockxfer_in(struct sockxfer *sx, void *dst, size_t n);
int sockxfer_out(struct sockxfer *sx, const void *src, size_t n);

/*
 * An address family's operations.  All return 0 (or a count) or a
 * negative errno.  The socket layer has checked the descriptor, the
 * socket's family and the lengths of the caller's buffers; the family
 * checks the rest (Linux's errno for every bad argument).  Called with
 * no lock held.
 */
struct sockops {
    int family;
    /* socket(): the protocol a socket of *type gets (protocol 0 picks
     * the family's default), *type changed if the family maps it, or
     * -EPROTONOSUPPORT, -ESOCKTNOSUPPORT ... */
    int (*protocol)(int *type, int protocol);
    /* Make the family's part of a new socket (so_pcb). */
    int (*attach)(struct socket *so);
    /* The last close: disconnect, drop what is queued, free the name. */
    void (*release)(struct socket *so);
    /* After the last reference: free so_pcb. */
    void (*destroy)(struct socket *so);
    int (*bind)(struct socket *so, const void *addr, size_t len);
    int (*listen)(struct socket *so, int backlog);
    /* A connection that is waiting (*newp, a new socket with one
     * reference), or -EAGAIN when nonblock and none. */
    int (*accept)(struct socket *so, bool nonblock, struct socket **newp);
    int (*connect)(struct socket *so, const void *addr, size_t len, bool nonblock);
    /* Connect two new sockets to each other (socketpair): 0, or
     * -EOPNOTSUPP for a family that cannot. */
    int (*connect2)(struct socket *a, struct socket *b);
    int64_t (*send)(struct socket *so, struct sockxfer *sx);
    int64_t (*recv)(struct socket *so, struct sockxfer *sx);
    int (*shutdown)(struct socket *so, int how);
    /* The socket's own address (peer false) or its peer's, into addr
     * (room for 128 bytes); *len is set to the address's true length. */
    int (*getname)(struct socket *so, void *addr, size_t *len, bool peer);
    /* SOL_SOCKET options the family keeps (SO_PEERCRED ...), and its own
     * levels: -ENOPROTOOPT for one it does not know. */
    int (*getopt)(struct socket *so, int level, int name, void *val, size_t *len);
    int (*setopt)(struct socket *so, int level, int name, const void *val, size_t len);
    /* poll's bits for events (see vop_poll). */
    short (*poll)(struct socket *so, short events);
    /* Bytes a read would return now (FIONREAD). */
    int (*nread)(struct socket *so);
};

/* One received datagram (kern/net/dgram.c): the sender's address and
 * the bytes. */
#define DGRAM_NAME_MAX  16          /* a struct sockaddr_in or sockaddr_nl */
struct dgram {
    struct dgram *d_next;           /* [s] */
    size_t d_len;                   /* [c] */
    uint32_t d_namelen;             /* [c] */
    uint8_t d_name[DGRAM_NAME_MAX]; /* [c] */
    char d_data[];
};

/* The receive queue of a datagram family's socket. */
struct dgram_queue {
    struct dgram *q_head, *q_last;  /* [s] q_last: the tail while q_head is set */
    size_t q_bytes;                 /* [s] what counts against so_rcvbuf */
};

struct socket {
    struct vnode so_vn;             /* type VSOCK, no file system */
    struct mutex so_lock;           /* class "socket" */
    const struct sockops *so_ops;   /* [c] */
    int so_type;                    /* [c] SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET */
    int so_protocol;                /* [c] */
    uint64_t so_ino;                /* [c] what fstat and /proc/PID/fd show */
    uint32_t so_uid, so_gid;        /* [c] the creator's, for fstat */
    uint32_t so_shut;               /* [s] SO_RCV_SHUT, SO_SEND_SHUT */
    int so_error;                   /* [s] a pending error (SO_ERROR), or 0 */
    int so_sndbuf, so_rcvbuf;       /* [s] buffer sizes, as Linux's (doubled) */
    uint64_t so_sndtimeo, so_rcvtimeo;  /* [s] ns, 0 for none */
    bool so_passcred;               /* [s] SO_PASSCRED */
    uint32_t so_bools;              /* [s] 1 << SO_* of the on/off options kept for getsockopt */
    int so_priority, so_rcvlowat;   /* [s] SO_PRIORITY, SO_RCVLOWAT (kept, not used) */
    int so_linger;                  /* [s] SO_LINGER's seconds, -1 when off (TCP's close) */
    bool so_listening;              /* [s] */
    int so_rchan, so_wchan;         /* wait channels: readers, writers */
    uint64_t so_wgen;               /* [a] bumped when buffer space comes back */
    void *so_pcb;                   /* [c] the family's part */
    struct dgram_queue so_dgq;      /* [s] received datagrams (UDP, raw, netlink) */
    struct sigio so_sigio;          /* O_ASYNC and the owner (kern/proc/sigio.c) */
    struct file *so_file;           /* [c] its one open file, once made (not held) */
};

static inline struct socket *vtosock(struct vnode *vp) { return vp->v_data; }

/* Is vp a socket (and not a file system's node naming one)? */
bool vn_is_socket(const struct vnode *vp);
/* A new socket of ops's family, one reference; -errno on failure. */
int socket_create(const struct sockops *ops, int type, int protocol, struct socket **sop);
/* The sockets alive, of every family. */
int64_t socket_count(void);
/* Drop a reference a family holds (a peer, a queued message's sender). */
void socket_rele(struct socket *so);
void socket_hold(struct socket *so);
/* A reference unless the last one is already gone: false then. */
bool socket_tryhold(struct socket *so);

/* A snapshot of the sockets of a table, each held, for /proc/net: filled
 * under the table's lock by sockvec_take (which counts what does not fit),
 * then sockvec_again says whether to walk again with a larger array.
 * sv_n is -1 when memory ran short.  sockvec_free lets them go. */
struct sockvec {
    struct socket **sv_v;
    int sv_n, sv_room;
};
void sockvec_take(struct sockvec *sv, struct socket *so);
/* As sockvec_take for a table that holds no reference: a socket whose
 * last reference is gone (being destroyed) is left out. */
void sockvec_take_live(struct sockvec *sv, struct socket *so);
bool sockvec_again(struct sockvec *sv);
void sockvec_free(struct sockvec *sv);
/* The deadline for a wait of so (its SO_RCVTIMEO or SO_SNDTIMEO), or
 * UINT64_MAX for none. */
uint64_t socket_deadline(uint64_t timeo_ns);
/* Sleep on chan (the caller holds so_lock, released while asleep) until
 * woken, deadline passes (-EAGAIN) or a signal comes (-ERESTARTSYS). */
int socket_sleep(const void *chan, uint64_t deadline);
/* Wait, holding so_lock, until ready(so) says there is something to
 * read (> 0) or why not (< 0, an errno), a pending error comes (taken),
 * the reading side is shut (*eof set), or, when nonblock, at once
 * (-EAGAIN); the wait ends at SO_RCVTIMEO or a signal.  0 or -errno. */
int socket_wait_readable(struct socket *so, bool nonblock, int (*ready)(struct socket *so),
                         bool *eof);
/* A received datagram of len bytes out to the caller: as much as fits
 * (the rest cut off, MSG_TRUNC), the sender's address when the caller
 * asked for it; the count recv returns (the whole length under
 * MSG_TRUNC), or -EFAULT. */
int64_t socket_dgram_out(struct sockxfer *sx, const void *data, size_t len, const void *name,
                         size_t namelen);
/* poll's bits every family shares: POLLERR for a pending error, POLLHUP
 * with both sides shut, the reading side's end of file (so_lock held). */
short socket_poll_shut(const struct socket *so);
/* Something changed that a waiter, a poller or an epoll set may want:
 * events says which side (POLL_READSIDE: data, a connection, end of file;
 * POLL_WRITESIDE: room; both for a change of state). */
void socket_notify(struct socket *so, short events);
/* The caller writes to a socket that cannot take data: SIGPIPE to the
 * thread unless MSG_NOSIGNAL, and -EPIPE. */
int socket_epipe(int flags);
/* A datagram of len bytes (the caller fills d_data) from the sender
 * name; NULL when memory is short. */
struct dgram *dgram_alloc(size_t len, const void *name, size_t namelen);
/* Queue d on so (so_lock held) and wake a reader: false, and nothing
 * queued (d is still the caller's), when the reading side is shut or,
 * if bounded, the queue has reached so_rcvbuf. */
bool dgram_enqueue(struct socket *so, struct dgram *d, bool bounded);
/* Free what is queued (so_lock held). */
void dgram_flush(struct socket *so);
/* A datagram family's recv, poll and FIONREAD on so_dgq. */
int64_t dgram_recv(struct socket *so, struct sockxfer *sx);
short dgram_poll(struct socket *so, short events);
int dgram_nread(struct socket *so);
/* The families: AF_UNIX's operations, AF_INET's (kern/net/inet/). */
extern const struct sockops unix_sockops;
extern const struct sockops inet_sockops;
/* AF_NETLINK's route dumps (kern/net/netlink.c). */
extern const struct sockops netlink_sockops;
/* Boot: the families' tables and lock classes. */
void net_init(void);
void unix_init(void);
void inet_init(void);

/* For the file layer (kern/proc/sys_fs.c): read or write a socket's
 * open file through the family's receive and send (a datagram stays
 * whole, and O_NONBLOCK applies). */
int64_t socket_rw(struct file *fp, bool write, struct kiovec *iov, int iovcnt);

/* The interface ioctls any socket answers (SIOCGIFNAME, SIOCGIFINDEX,
 * SIOCGIFFLAGS, SIOCGIFADDR, SIOCGIFNETMASK, SIOCGIFBRDADDR,
 * SIOCGIFDSTADDR, SIOCGIFMTU, SIOCGIFHWADDR, SIOCGIFTXQLEN,
 * SIOCGIFMETRIC, SIOCGIFMAP; root's SIOCSIFADDR, SIOCSIFNETMASK,
 * SIOCSIFFLAGS), each a struct ifreq of IFREQ_SIZE bytes in and out. */
#define IFREQ_SIZE 40
bool socket_ifreq_cmd(uint32_t cmd);
/* Answer one of them for the interface ifr names (kern/net/inet/netif.c):
 * 0, -ENODEV, -EPERM, -EINVAL. */
int netif_ioctl(uint32_t cmd, void *ifr);
/* SIOCGIFCONF: the interfaces with their IPv4 addresses into the caller's
 * struct ifconf at uarg (user memory), or the room they need. */
bool socket_ifconf_cmd(uint32_t cmd);
int netif_ifconf(uint64_t uarg);
/* SIOCADDRT, SIOCDELRT: a struct rtentry at uarg (kern/net/inet/route.c). */
bool socket_route_cmd(uint32_t cmd);
int route_ioctl(uint32_t cmd, uint64_t uarg);

/* Passing descriptors (SCM_RIGHTS) counts, per socket, how many of its
 * files are in flight in queues; kern/net/unix_gc.c collects the
 * sockets only such files keep alive. */
struct socket *file_socket(struct file *fp);

#endif
