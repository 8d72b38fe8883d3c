/*
 * The Internet protocols' shared structures: packets, interfaces, the
 * protocol control blocks (one per AF_INET socket) and the entry points
 * of IPv4, UDP and TCP.  Theory in kern/net/inet/inet.c.
 *
 * Lock key (besides struct socket's, kern/net/socket.h):
 *   [s]  the socket's so_lock
 *   [t]  the control block table's locks (inpcb.c): the block's port
 *        bucket lock (class "inpcbport") and, while it has a foreign end,
 *        its connection bucket lock (class "inpcbconn"); all held to
 *        change, any one to read
 *   [q]  the interface's input queue lock (class "netq", a spin lock)
 *   [w]  net_work_lock (class "network", a spin lock): the timer work list
 *   [a]  atomic operations only
 *   [c]  constant once set
 */
#ifndef KERN_NET_INET_INET_H
#define KERN_NET_INET_INET_H

#include <kern/net/socket.h>
#include <kern/lock/spinlock.h>
#include <kern/sched/callout.h>
#include <drivers/net/netdev.h>

#define IPPROTO_IP      0
#define IPPROTO_ICMP    1
#define IPPROTO_TCP     6
#define IPPROTO_UDP     17
#define IPPROTO_UDPLITE 136
#define SOL_IP          0
#define SOL_TCP         6

/* Addresses and ports are kept in network byte order, as they travel. */
typedef uint32_t in_addr_t;
#define INADDR_ANY          0u
#define INADDR_LOOPBACK_H   0x7f000001u     /* 127.0.0.1, host order */
#define INADDR_BROADCAST    0xffffffffu

static inline uint16_t ntohs(uint16_t x) { return __builtin_bswap16(x); }
static inline uint16_t htons(uint16_t x) { return __builtin_bswap16(x); }
static inline uint32_t ntohl(uint32_t x) { return __builtin_bswap32(x); }
static inline uint32_t htonl(uint32_t x) { return __builtin_bswap32(x); }

/* struct sockaddr_in, as the caller gives it. */
struct sockaddr_in_k {
    uint16_t sin_family;
    uint16_t sin_port;
    in_addr_t sin_addr;
    uint8_t sin_zero[8];
};

/* ---- packets ---- */

#define PKT_HEADROOM    64          /* room for the IP and transport headers */

/* One packet: a single buffer, its current header at p_data. */
struct pkt {
    struct pkt *p_next;             /* [q] the input queue, or its owner's list */
    struct netif *p_if;             /* the interface it came in by */
    uint8_t *p_data;                /* the first byte of what is left */
    uint32_t p_len;                 /* bytes from p_data on */
    uint32_t p_size;                /* bytes of p_buf */
    uint8_t p_csum;                 /* PKT_CSUM_*: what is known of its transport checksum */
    uint8_t p_csum_at;              /* PKT_CSUM_PARTIAL: the field's offset in the
                                     * transport header */
    uint8_t p_buf[];
};

/* A packet's transport checksum, as Linux's skb->ip_summed.  NONE: as the
 * bytes say (input checks it; output has filled it in).  UNNECESSARY: the
 * packet never left memory (loopback sets it), so input skips the check:
 * on a big segment the sum costs as much as a copy.  PARTIAL: the field
 * at p_csum_at holds only the pseudo-header's sum, folded; a packet that
 * leaves by a real interface is finished first (pkt_csum_finish, called
 * by ip_output), one delivered by loopback never is, and input trusts it. */
enum { PKT_CSUM_NONE, PKT_CSUM_UNNECESSARY, PKT_CSUM_PARTIAL };
#define pkt_csum_trusted(p) ((p)->p_csum != PKT_CSUM_NONE)
/* Fill in a PARTIAL packet's checksum; p_data at its transport header. */
void pkt_csum_finish(struct pkt *p);

/* A packet with room for len bytes after PKT_HEADROOM; p_data at the
 * room's start, p_len len, checksum state NONE.  NULL when memory is
 * short (the packet is dropped, never the kernel). */
struct pkt *pkt_alloc(size_t len);
void pkt_free(struct pkt *p);
/* A packet of the caller's bytes (all that is left of sx) after hdr bytes
 * of room for a header: 0, -ENOBUFS or -EFAULT. */
int pkt_from_caller(struct sockxfer *sx, size_t hdr, struct pkt **pp);
/* Make room for n bytes of header before p_data: the new start. */
void *pkt_push(struct pkt *p, size_t n);
/* Strip n bytes of header from the front. */
void pkt_pull(struct pkt *p, size_t n);

/* The Internet checksum (RFC 1071) of len bytes, folded, not complemented,
 * starting from sum. */
uint32_t in_cksum_add(uint32_t sum, const void *data, size_t len);
uint16_t in_cksum_fold(uint32_t sum);
/* The pseudo-header's part of a TCP or UDP checksum. */
uint32_t in_pseudo(in_addr_t src, in_addr_t dst, int proto, size_t len);

/* ---- interfaces ---- */

#define NETIF_NAME_MAX  16
#define IFF_UP          0x1
#define IFF_LOOPBACK    0x8
#define IFF_RUNNING     0x40

#define IFF_BROADCAST   0x2
#define ARPHRD_ETHER    1
#define ARPHRD_LOOPBACK 772

/* struct netif_stats is the devices' (drivers/net/netdev.h): a driver
 * counts into its interface's. */
struct netif {
    struct netif *if_next;          /* [c] the list of interfaces */
    char if_name[NETIF_NAME_MAX];   /* [c] */
    int if_index;                   /* [c] */
    uint32_t if_mtu;                /* [c] */
    uint32_t if_flags;              /* [a] IFF_*: lo's constant; an Ethernet's IFF_UP
                                     * set by SIOCSIFFLAGS under netif_cfg_lock */
    in_addr_t if_addr, if_mask;     /* [a] its IPv4 address and netmask: lo's constant,
                                     * others written under netif_cfg_lock, read as
                                     * single words without it */
    uint16_t if_type;               /* [c] ARPHRD_ETHER or ARPHRD_LOOPBACK */
    uint8_t if_hwaddr[ETH_ALEN];    /* [c] the MAC (zero for lo) */
    struct netdev *if_dev;          /* [c] the device (NULL for lo) */
    /* Hand p, an IPv4 packet, to the device (which frees it); nexthop is
     * the neighbour it goes to (the destination on link, or the gateway). */
    void (*if_output)(struct netif *ifp, struct pkt *p, in_addr_t nexthop);
    struct netif_stats if_stats;    /* [a] */
};

extern struct netif *netifs;        /* [c] after boot */
/* A packet that came in by ifp: queued for the network thread. */
void netif_input(struct netif *ifp, struct pkt *p);
/* Does addr name this machine (an interface's address, or loopback)? */
bool inet_local_addr(in_addr_t addr);
/* lo, the loopback interface. */
struct netif *inet_loopback(void);

/* ---- the routing table (kern/net/inet/route.c) ---- */

void route_init(void);
/* The length of a netmask's prefix (its leading one bits). */
int inet_mask_len(in_addr_t mask);
/* The interface a packet to dst leaves by and the source address it
 * carries, or NULL (-ENETUNREACH). */
struct netif *inet_route(in_addr_t dst, in_addr_t *src);
/* The same, with the neighbour the packet goes to in *nexthop. */
struct netif *inet_route_nh(in_addr_t dst, in_addr_t *src, in_addr_t *nexthop);
/* The MTU of the interface a packet to dst leaves by (65535 if none). */
uint32_t inet_path_mtu(in_addr_t dst);
/* A default route through gw (the ip= option): 0, -EEXIST, -ENOSPC. */
int route_add_default(in_addr_t gw);
/* Each route of the main table: the entries whose next hop is up, then
 * each up interface's subnet (RTF_* flags: RTF_GATEWAY for a gateway's,
 * RTF_HOST for a host's; a subnet's has neither and gw 0). */
typedef void route_walk_fn(void *arg, const struct netif *ifp, in_addr_t dst, in_addr_t gw,
                           int flags, int metric, in_addr_t mask);
void route_walk(route_walk_fn *fn, void *arg);
/* Serialises configuration changes (the ioctls, the boot option). */
extern struct mutex netif_cfg_lock;
/* Add an interface to the list (boot only). */
void netif_attach(struct netif *ifp);

/* ---- Ethernet and ARP (kern/net/inet/ether.c) ---- */

/* An interface for every network device, its address from ip= (boot). */
void ether_init(void);
/* The network thread: a frame that came in by an Ethernet interface. */
void ether_input(struct pkt *p);
/* ARP's counters, as /proc/net/arp_stat prints them. */
struct arpstat {
    uint64_t requests_sent, requests_rcvd, replies_sent, replies_rcvd;
    uint64_t bad;                   /* truncated, wrong hardware or protocol type */
    uint64_t resolved;              /* entries that got an answer */
    uint64_t unresolved;            /* packets dropped: no answer (EHOSTUNREACH) */
    uint64_t hold_overflow;         /* packets dropped: too many held */
};
extern struct arpstat arpstat;      /* [a] */
/* The ARP cache as text, one entry a line (procfs): bytes written. */
size_t arp_format(char *buf, size_t size);
/* Feed one frame to Ethernet input as if ifp had received it (tests). */
void ether_test_input(struct netif *ifp, const void *frame, size_t len);

/* ---- the network thread's timer work ---- */

/* A protocol's timed work: fn(arg) runs in the network thread, where it
 * may sleep and take socket locks.  Armed like a callout; the owner calls
 * net_timer_stop before the memory goes. */
struct net_timer {
    struct callout nt_callout;      /* [c] */
    struct net_timer *nt_next;      /* [w] the work list, */
    struct net_timer **nt_prevp;    /* [w] and the link that points here (O(1) removal) */
    bool nt_queued;                 /* [w] */
    void (*nt_fn)(void *arg);       /* [c] */
    void *nt_arg;                   /* [c] */
};

void net_timer_init(struct net_timer *nt, void (*fn)(void *), void *arg);
/* Run nt's function in the network thread at uptime_ns() >= when. */
void net_timer_arm(struct net_timer *nt, uint64_t when);
/* Neither pending nor queued once it returns (not from nt's function). */
void net_timer_stop(struct net_timer *nt);

/* ---- the counters of /proc/net/snmp (mib.c) ---- */

/* Linux's MIB counters (RFC 1213 and Linux's own), one per-CPU line each
 * so that counting shares no cache line between CPUs.  The order within
 * a group is /proc/net/snmp's. */
enum inet_mib {
    IPM_IN_RECEIVES, IPM_IN_HDR_ERRORS, IPM_IN_ADDR_ERRORS, IPM_IN_UNKNOWN_PROTOS,
    IPM_IN_DISCARDS, IPM_IN_DELIVERS, IPM_OUT_REQUESTS, IPM_OUT_DISCARDS, IPM_OUT_NO_ROUTES,
    IPM_REASM_TIMEOUT, IPM_REASM_REQDS, IPM_REASM_OKS, IPM_REASM_FAILS, IPM_FRAG_FAILS,
    IPM_OUT_TRANSMITS,
    ICM_IN_MSGS, ICM_IN_ERRORS, ICM_IN_CSUM_ERRORS, ICM_OUT_MSGS,
    TCM_ACTIVE_OPENS, TCM_PASSIVE_OPENS, TCM_ATTEMPT_FAILS, TCM_ESTAB_RESETS, TCM_CURR_ESTAB,
    TCM_IN_SEGS, TCM_OUT_SEGS, TCM_RETRANS_SEGS, TCM_IN_ERRS, TCM_OUT_RSTS, TCM_IN_CSUM_ERRORS,
    UDM_IN_DATAGRAMS, UDM_NO_PORTS, UDM_IN_ERRORS, UDM_OUT_DATAGRAMS, UDM_RCVBUF_ERRORS,
    UDM_IN_CSUM_ERRORS,
    /* UDP-Lite's, the same order: UDM_x + UDM_LITE */
    ULM_IN_DATAGRAMS, ULM_NO_PORTS, ULM_IN_ERRORS, ULM_OUT_DATAGRAMS, ULM_RCVBUF_ERRORS,
    ULM_IN_CSUM_ERRORS,
    /* TcpExt, /proc/net/netstat's (Linux's own counters) */
    TXM_LISTEN_OVERFLOWS, TXM_LISTEN_DROPS, TXM_PAWS_ESTAB, TXM_CHALLENGE_ACK,
    TXM_OFO_QUEUE, TXM_OFO_DROP, TXM_SACK_RECOVERY, TXM_RENO_RECOVERY,
    /* Tempest's gauges of /proc/net/sockstat's PKT line: the packets alive
     * and their bytes, in no snmp group */
    NET_PKTS_LIVE, NET_PKT_BYTES_LIVE,
    INET_MIB_COUNT
};
#define UDM_LITE (ULM_IN_DATAGRAMS - UDM_IN_DATAGRAMS)

/* Add n (may be negative: a gauge such as CurrEstab) to counter m. */
void inet_mib_add(enum inet_mib m, int64_t n);
static inline void inet_mib_count(enum inet_mib m) { inet_mib_add(m, 1); }
/* Counter m summed over the CPUs. */
int64_t inet_mib_value(enum inet_mib m);
/* UDP's counter m, or UDP-Lite's for proto IPPROTO_UDPLITE. */
void udp_mib_count(int proto, enum inet_mib m);
/* An ICMP message of type came in, or went out (its IcmpMsg and Icmp
 * counts). */
void icmp_mib_in(int type);
void icmp_mib_out(int type);

/* ---- protocol control blocks ---- */

/* AF_INET's part of a socket (so_pcb): the addresses, and the protocol's
 * own state behind inp_ppcb. */
struct inpcb {
    struct inpcb *inp_pnext;        /* [t] its port bucket's chain (while inp_intable) */
    struct inpcb *inp_cnext;        /* [t] its connection bucket's chain (inp_inconn) */
    struct socket *inp_so;          /* [c] */
    int inp_proto;                  /* [c] IPPROTO_TCP, IPPROTO_UDP, or a raw socket's */
    in_addr_t inp_laddr;            /* [s,t] both to change; either to read */
    in_addr_t inp_faddr;            /* [s,t] */
    uint16_t inp_lport, inp_fport;  /* [s,t] network byte order */
    bool inp_intable;               /* [s,t] on its port chain, the socket held */
    bool inp_inconn;                /* [s,t] also on its connection chain */
    bool inp_bound;                 /* [s] bind (or an implicit bind) chose its port */
    bool inp_portlock, inp_addrlock; /* [s] bind named the port, the address (Linux's
                                     * SOCK_BINDPORT_LOCK, _BINDADDR_LOCK): kept on
                                     * a disconnect */
    bool inp_timewait;              /* [s] a TCP connection in TIME_WAIT: its port
                                     * gives way to SO_REUSEADDR (read under [t]) */
    uint8_t inp_ttl, inp_tos;       /* [s] IP_TTL, IP_TOS */
    void *inp_ppcb;                 /* [c] struct tcpcb, struct udpcb or struct rawcb */
};

static inline struct inpcb *sotoinp(struct socket *so) { return so->so_pcb; }

void inpcb_init(void);
/* Give inp the local address and port (0: an ephemeral one), as bind
 * does, and enter it in the table: 0, -EADDRINUSE, -EADDRNOTAVAIL.
 * Called with so_lock held. */
int inpcb_bind(struct inpcb *inp, in_addr_t laddr, uint16_t lport);
/* Set the foreign address of a bound inp (an unbound one is bound to an
 * ephemeral port first), choosing the local address by route: 0 or
 * -errno.  Called with so_lock held. */
int inpcb_connect(struct inpcb *inp, in_addr_t faddr, uint16_t fport);
/* Forget inp's foreign end (UDP's connect to AF_UNSPEC), and, as Linux,
 * its local address unless bind named one and its port unless bind named
 * one: true when it left the table so (the socket's reference the table
 * held is the caller's to drop).  Called with so_lock held. */
bool inpcb_disconnect(struct inpcb *inp);
/* Enter inp, whose ends are set, in the table as it is (a connection a
 * listener accepted shares the listener's port). */
void inpcb_insert(struct inpcb *inp);
/* Leave the table (the socket's reference the table held is the
 * caller's to drop).  Called with so_lock held. */
void inpcb_remove(struct inpcb *inp);
/* The socket a packet belongs to, held: an exact match of both ends, or
 * else one listening (bound) on the local end.  NULL when none. */
struct socket *inpcb_lookup(int proto, in_addr_t laddr, uint16_t lport, in_addr_t faddr,
                            uint16_t fport);

/* Every socket of proto in the table, into sv (empty at the call). */
void inpcb_snapshot(int proto, struct sockvec *sv);

/* ---- IPv4 ---- */

#define IP_HDR_LEN      20
#define IP_DEFAULT_TTL  64
#define IP_MAXPACKET    65535
#define IP_MF           0x2000              /* more fragments, in frag_off */
#define IP_OFFMASK      0x1fff              /* the offset in 8-byte units */

/* ICMP (RFC 792): the header's length and the message types used. */
#define ICMP_HDR_LEN    8
#define ICMP_ECHOREPLY  0
#define ICMP_UNREACH    3
#define ICMP_SOURCEQUENCH 4
#define ICMP_REDIRECT   5
#define ICMP_ECHO       8
#define ICMP_TIMXCEED   11
#define ICMP_PARAMPROB  12

/* The IPv4 header (RFC 791), as it travels. */
struct iphdr {
    uint8_t ihl_version;
    uint8_t tos;
    uint16_t len;
    uint16_t id;
    uint16_t frag;
    uint8_t ttl;
    uint8_t proto;
    uint16_t cksum;
    in_addr_t src, dst;
};

/* Send p (its transport header at p_data) from src to dst; the packet is
 * freed in every case: 0, or -ENETUNREACH, -EMSGSIZE. */
int ip_output(struct pkt *p, in_addr_t src, in_addr_t dst, int proto, uint8_t ttl, uint8_t tos);
/* Send p, a whole IPv4 datagram with its header (a raw socket's
 * IP_HDRINCL), by the route to dst; freed in every case: 0, or
 * -ENETUNREACH, -EMSGSIZE. */
int ip_output_raw(struct pkt *p, in_addr_t dst);
/* A new identification field, network byte order. */
uint16_t ip_new_id(void);
/* The network thread: an IPv4 packet that came in. */
void ip_input(struct pkt *p);
/* p, a packet this machine sent, could not reach its next hop (ARP went
 * unanswered): ICMP "host unreachable" goes back to its sender, this
 * machine (the caller still frees p). */
void ip_host_unreachable(struct pkt *p);
/* An ICMP error of type and code about the IPv4 packet of len bytes at
 * ip: its header and 8 bytes of its data go back to its sender. */
void icmp_send_error(const struct iphdr *ip, size_t len, int type, int code);
/* ip_frag.c: p, a fragment whose header is hlen bytes (checked, p_len its
 * total length), joins its datagram: the whole datagram once complete,
 * else NULL (p held, or dropped). */
struct pkt *ip_reassemble(struct pkt *p, size_t hlen);
/* The datagrams being reassembled and the bytes their fragments hold. */
void ip_frag_usage(int *datagrams, uint32_t *bytes);
void ip_frag_init(void);

/* ---- the transports ---- */

extern const struct sockops inet_sockops;
void inet_init(void);
/* The family's socket() check: the protocol for *type (0 picks TCP or
 * UDP), or -EPROTONOSUPPORT, -ESOCKTNOSUPPORT. */
int inet_protocol(int *type, int protocol);
/* A struct sockaddr_in of len bytes: its address and port, or -EINVAL
 * (short), -EAFNOSUPPORT (another family). */
int inet_sin_in(const void *addr, size_t len, in_addr_t *a, uint16_t *port);
/* A struct sockaddr_in into addr, its length into *len. */
/* A copy of len bytes of data, from the sender name, onto so's datagram
 * queue (so_lock taken here): false when memory or the queue's room is
 * short (the copy is dropped). */
bool inet_queue_copy(struct socket *so, const void *data, size_t len, const void *name,
                     size_t namelen);
/* A datagram send's destination (so_lock held): sendto's address or the
 * connected one (-EDESTADDRREQ without either); with port, its port too,
 * which sendto must then name (EINVAL for 0); without, the port is
 * ignored (raw and ping sockets).  No address means this machine. */
int inet_send_dest(struct socket *so, const struct sockxfer *sx, in_addr_t *a, uint16_t *port);
/* The source of a datagram to dst (so_lock held): the socket bound first
 * if it is not (an ephemeral port), the route's address unless it is
 * bound to one; its port, TTL and TOS.  0, or -ENETUNREACH, -EADDRINUSE. */
int udp_send_source(struct socket *so, in_addr_t dst, in_addr_t *src, uint16_t *sport,
                    uint8_t *ttl, uint8_t *tos);
void inet_sin_out(void *addr, size_t *len, in_addr_t a, uint16_t port);

/* UDP (kern/net/inet/udp.c) */
int udp_attach(struct socket *so);
void udp_release(struct socket *so);
void udp_destroy(struct socket *so);
int udp_connect(struct socket *so, in_addr_t faddr, uint16_t fport);
int64_t udp_send(struct socket *so, struct sockxfer *sx);
/* A datagram came in (copied if queued; the caller frees p): false when
 * no socket is bound to its port (ICMP port unreachable goes back). */
bool udp_input(struct pkt *p, in_addr_t src, in_addr_t dst, int proto);
/* ping.c: ICMP echo sockets (SOCK_DGRAM, IPPROTO_ICMP), UDP's otherwise. */
int64_t ping_send(struct socket *so, struct sockxfer *sx);
/* An ICMP message that came in (from its header on): an echo reply goes
 * to the ping socket of its identifier. */
void ping_input(const struct pkt *p, in_addr_t src, in_addr_t dst);
/* An ICMP error came back for a datagram so sent: a connected socket
 * reports it (SO_ERROR). */
void udp_ctlinput(int proto, int err, in_addr_t src, uint16_t sport, in_addr_t dst,
                  uint16_t dport);
/* UDP-Lite's options (SOL_UDPLITE): the checksum coverage. */
int udp_getopt(struct socket *so, int name, void *val, size_t *len);
int udp_setopt(struct socket *so, int name, const void *val, size_t len);

/* Raw sockets (kern/net/inet/raw.c) */
void raw_init(void);
int raw_attach(struct socket *so);
void raw_release(struct socket *so);
void raw_destroy(struct socket *so);
int raw_bind(struct socket *so, in_addr_t a);
/* Connect to a (INADDR_ANY: dissolve the association). */
int raw_connect(struct socket *so, in_addr_t a, uint16_t port);
int64_t raw_send(struct socket *so, struct sockxfer *sx);
/* An IPv4 datagram for this machine, its header of hlen bytes at p_data:
 * a copy to each raw socket that wants it; true when one did. */
bool raw_input(const struct pkt *p, size_t hlen);
int raw_getopt(struct socket *so, int level, int name, void *val, size_t *len);
int raw_setopt(struct socket *so, int level, int name, const void *val, size_t len);
/* Every raw socket, into sv (empty at the call). */
void raw_snapshot(struct sockvec *sv);
/* IP_HDRINCL, read and set with so_lock held. */
bool raw_hdrincl(struct socket *so);
void raw_set_hdrincl(struct socket *so, bool on);

/* TCP (kern/net/inet/tcp_*.c) */
int tcp_attach(struct socket *so);
void tcp_release(struct socket *so);
void tcp_destroy(struct socket *so);
int tcp_listen(struct socket *so, int backlog);
int tcp_accept(struct socket *so, bool nonblock, struct socket **newp);
int tcp_connect(struct socket *so, in_addr_t faddr, uint16_t fport, bool nonblock);
int64_t tcp_send(struct socket *so, struct sockxfer *sx);
int64_t tcp_recv(struct socket *so, struct sockxfer *sx);
int tcp_shutdown(struct socket *so, int how);
short tcp_poll(struct socket *so, short events);
int tcp_nread(struct socket *so);
bool tcp_connected(struct socket *so);
int tcp_getopt(struct socket *so, int name, void *val, size_t *len);
int tcp_setopt(struct socket *so, int name, const void *val, size_t len);
/* SO_KEEPALIVE was set or cleared: the timer follows (always 0). */
int tcp_keepalive_changed(struct socket *so);
/* /proc/net/tcp's view of so (so_lock held): Linux's number for its
 * state, and the bytes queued to send and to read. */
int tcp_proc_state(struct socket *so, size_t *txq, size_t *rxq);
/* /proc/net/sockstat's TCP line. */
struct tcp_sockstat {
    int inuse;                      /* every connection but TIME_WAIT's */
    int orphan;                     /* whose file is closed */
    int tw;                         /* in TIME_WAIT */
    int alloc;                      /* all of them */
    size_t ring_bytes;              /* their send and receive rings */
};
/* Add so to c (so_lock held). */
void tcp_sockstat_add(struct socket *so, struct tcp_sockstat *c);
/* A segment came in (what is kept is copied; the caller frees p). */
void tcp_input(struct pkt *p, in_addr_t src, in_addr_t dst);
/* An ICMP error err came back for a segment of the connection src:sport
 * -> dst:dport whose sequence number was seq: a connection being made
 * fails with it; an established one keeps it to report should it time
 * out (RFC 1122 4.2.3.9's soft error). */
void tcp_ctlinput(int err, in_addr_t src, uint16_t sport, in_addr_t dst, uint16_t dport,
                  uint32_t seq);

#endif
