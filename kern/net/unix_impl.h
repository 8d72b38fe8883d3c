/*
 * AF_UNIX's own structures, shared by kern/net/unix.c (names,
 * connections, the socket's life), kern/net/unix_io.c (messages) and
 * kern/net/unix_gc.c (descriptors in flight).  Theory in unix.c.
 *
 * Lock key (besides struct socket's, kern/net/socket.h):
 *   [s]  the socket's so_lock
 *   [L]  the listening socket's so_lock (its accept queue)
 *   [n]  unix_names_lock (class "unixname"): the table of bound names
 *   [g]  unix_gc_lock (class "unixgc"): descriptors in flight
 *   [A]  unix_all_lock (class "unixall"): the list of every socket
 *   [a]  atomic operations only
 *   [c]  constant once set (set once under [s], read without it)
 */
#ifndef KERN_NET_UNIX_IMPL_H
#define KERN_NET_UNIX_IMPL_H

#include <kern/net/socket.h>

#define UNIX_PATH_MAX   108
#define UNIX_ADDR_MAX   (2 + UNIX_PATH_MAX)     /* sizeof(struct sockaddr_un) */
#define UNIX_MAX_DGRAM_QLEN 10                  /* Linux's net.unix.max_dgram_qlen */
#define SCM_MAX_FD      253                     /* Linux's limit per message */

struct file;

/* Who sent a message (SCM_CREDENTIALS), or who connected (SO_PEERCRED):
 * Linux's struct ucred. */
struct unix_cred {
    int32_t pid;
    uint32_t uid, gid;
};

/* A bound name: a file system node (a path) or bytes (an abstract name). */
struct unix_name {
    struct unix_name *n_next;       /* [n] the table */
    struct socket *n_so;            /* [n] bound to it; NULL once released */
    struct vnode *n_node;           /* [c] the path's node (held), or NULL */
    int n_refs;                     /* [a] the socket, and sockets accepted through it */
    uint32_t n_len;                 /* [c] the address's length, as getsockname gives it */
    char n_addr[UNIX_ADDR_MAX];     /* [c] the struct sockaddr_un */
};

/* One message in a receive queue (a stream's writes come in pieces). */
struct unix_msg {
    struct unix_msg *m_next;        /* [s of the receiver] */
    struct socket *m_from;          /* [c] the sender (held): its buffer space */
    size_t m_len;                   /* [c] bytes of data */
    size_t m_off;                   /* [s of the receiver] bytes already read (streams) */
    size_t m_charge;                /* [c] what it counts against m_from's space */
    struct unix_cred m_cred;        /* [c] */
    int m_nfiles;                   /* [s] descriptors passed (SCM_RIGHTS) */
    struct file **m_files;          /* [s] held */
    uint32_t m_addrlen;             /* [c] the sender's name (datagrams), or 0 */
    char m_addr[UNIX_ADDR_MAX];
    char m_data[];
};

/* AF_UNIX's part of a socket (so_pcb). */
struct unpcb {
    struct socket *u_peer;          /* [s] held: the connected peer, or a datagram
                                     * socket's default destination */
    struct unix_name *u_name;       /* [c] once bound (a reference) */
    struct unix_msg *u_rq;          /* [s] the receive queue */
    struct unix_msg **u_rqtail;     /* [s] */
    int u_rqlen;                    /* [s] messages in it */
    struct socket *u_aq;            /* [s] a listener's connections not yet accepted */
    struct socket **u_aqtail;       /* [s] */
    int u_aqlen, u_backlog;         /* [s] */
    struct socket *u_aqnext;        /* [L] the link in its listener's accept queue */
    struct unix_cred u_peercred;    /* [s] SO_PEERCRED */
    bool u_haspeercred;             /* [s] */
    bool u_connected;               /* [s] a stream or seqpacket connection was made */
    bool u_connecting;              /* [s] a connect is under way */
    bool u_binding;                 /* [s] a bind is under way */
    bool u_released;                /* [s] its file is closed */
    uint64_t u_wmem;                /* [a] bytes of its messages queued at receivers */
    int u_inflight;                 /* [g] its file's references held by queued messages */
    struct unpcb *u_gcnext;         /* [g] the sockets with files in flight */
    struct socket *u_so;            /* [c] */
    struct unpcb *u_allnext, **u_allprev;   /* [A] every AF_UNIX socket, for /proc/net/unix */
    long u_gcref;                   /* [g] the collector's count */
    bool u_gcdead;                  /* [g] */
};

static inline struct unpcb *sotounp(struct socket *so) { return so->so_pcb; }

/* The calling process's credentials, as SCM_CREDENTIALS sends them
 * (real ids) and SO_PEERCRED keeps them (effective ids). */
struct unix_cred unix_cred_now(bool effective);

/* unix.c: every AF_UNIX socket not being destroyed, held, into sv (empty
 * at the call), for /proc/net/unix (kern/net/unix_proc.c). */
struct sockvec;
void unix_snapshot(struct sockvec *sv);

/* unix_io.c */
int64_t unix_send(struct socket *so, struct sockxfer *sx);
int64_t unix_recv(struct socket *so, struct sockxfer *sx);
/* Free a message: its descriptors (not delivered) released, its space
 * given back to its sender. */
void unix_msg_free(struct unix_msg *m);
/* Free a chain of messages (m_next). */
void unix_msgs_free(struct unix_msg *m);

/* unix.c: the socket a name is bound to, held, or -ECONNREFUSED,
 * -ENOENT, -EACCES ... (addr already checked). */
int unix_find(const char *addr, size_t len, int type, struct socket **sop);
/* Check a struct sockaddr_un of len bytes as bind, connect and sendto
 * take it: 0 or -EINVAL. */
int unix_addr_check(const void *addr, size_t len);

/* unix_gc.c: a message took (or gave back) references to files; a
 * socket's file closed (collect what only cycles of queues keep). */
void unix_inflight(struct file **files, int n, int delta);
void unix_gc(void);
void unix_gc_init(void);

#endif
