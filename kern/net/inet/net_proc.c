/*
 * /proc/net: the interfaces, routes and sockets in the formats Linux's
 * /proc/net files use, which busybox's ifconfig, netstat and route and
 * the ss of iproute2's era read; sockstat's counts of them.
 *
 * Each file is a snapshot: the sockets of a table are held under the
 * table's lock (inpcb.c, raw.c), then each is read under its own so_lock,
 * so the order socket -> table is kept.  A socket that changes between
 * the two steps is shown as it is at the second.
 *
 * Locks: none of its own.
 */
#include <kern/net/inet/inet.h>
#include <kern/procfs/procfs.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/errno.h>

#define LINUX_TCP_CLOSE 7
#define LINUX_TCP_ESTABLISHED 1
#define ROUTE_LINE      127         /* Linux pads each line of route to this */
#define TCP_LINE        149         /* and of tcp */
#define IPPROTO_RAW_ALL (-1)        /* every raw socket, whatever its protocol */

/* ---- dev and route ---- */

int procfs_net_dev(struct sbuf *sb)
{
    sbuf_printf(sb, "Inter-|   Receive                                                |"
                "  Transmit\n"
                " face |bytes    packets errs drop fifo frame compressed multicast|"
                "bytes    packets errs drop fifo colls carrier compressed\n");
    for (struct netif *ifp = netifs; ifp; ifp = ifp->if_next) {
        struct netif_stats st;
        memcpy(&st, &ifp->if_stats, sizeof st);     /* counters move on; any moment will do */
        sbuf_printf(sb, "%6s:%8lu %7lu %4lu %4lu %4u %5u %10u %9u %8lu %7lu %4lu %4lu %4u %5u "
                    "%7u %10u\n", ifp->if_name, (unsigned long)st.rx_bytes,
                    (unsigned long)st.rx_packets, (unsigned long)st.rx_errors,
                    (unsigned long)st.rx_dropped, 0, 0, 0, 0, (unsigned long)st.tx_bytes,
                    (unsigned long)st.tx_packets, (unsigned long)st.tx_errors,
                    (unsigned long)st.tx_dropped, 0, 0, 0, 0);
    }
    return 0;
}

/* One line padded with spaces to width, as Linux's seq files do. */
static void padded(struct sbuf *sb, int width, const char *line)
{
    sbuf_printf(sb, "%-*s\n", width, line);
}

/* One route's line: interface, destination, gateway, flags, metric, mask. */
static void route_line(void *arg, const struct netif *ifp, in_addr_t dst, in_addr_t gw,
                       int flags, int metric, in_addr_t mask)
{
    char line[ROUTE_LINE + 1];
    snprintf(line, sizeof line, "%s\t%08X\t%08X\t%04X\t%d\t%u\t%d\t%08X\t%d\t%u\t%u",
             ifp->if_name, dst, gw, flags, 0, 0, metric, mask, 0, 0, 0);
    padded(arg, ROUTE_LINE, line);
}

/* The main table (kern/net/inet/route.c): its entries, then each
 * interface's own subnet (loopback's routes are in Linux's local table,
 * which this file does not show). */
int procfs_net_route(struct sbuf *sb)
{
    padded(sb, ROUTE_LINE, "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask"
           "\t\tMTU\tWindow\tIRTT");
    route_walk(route_line, sb);
    return 0;
}

/* The ARP cache (kern/net/inet/ether.c), as Linux's /proc/net/arp. */
int procfs_net_arp(struct sbuf *sb)
{
    char *buf = kmalloc(4096);
    if (!buf)
        return -ENOMEM;
    size_t n = arp_format(buf, 4096);
    sbuf_add(sb, buf, n);
    kfree(buf);
    return 0;
}

/* ---- the sockets ---- */

/* The columns every table shares: slot, both ends, state, queues. */
static void sock_ends(char *line, size_t size, int slot, const struct inpcb *inp, uint16_t lport,
                      int state, size_t txq, size_t rxq)
{
    snprintf(line, size, "%4d: %08X:%04X %08X:%04X %02X %08X:%08X", slot, inp->inp_laddr,
             ntohs(lport), inp->inp_faddr, ntohs(inp->inp_fport), state, (unsigned)txq,
             (unsigned)rxq);
}

int procfs_net_tcp(struct sbuf *sb)
{
    padded(sb, TCP_LINE, "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when "
           "retrnsmt   uid  timeout inode");
    struct sockvec sv = { 0 };
    inpcb_snapshot(IPPROTO_TCP, &sv);
    for (int i = 0; i < sv.sv_n; i++) {
        struct socket *so = sv.sv_v[i];
        struct inpcb *inp = sotoinp(so);
        char line[TCP_LINE + 1], ends[96];
        size_t txq, rxq;
        mutex_enter(&so->so_lock);
        int state = tcp_proc_state(so, &txq, &rxq);
        sock_ends(ends, sizeof ends, i, inp, inp->inp_lport, state, txq, rxq);
        mutex_exit(&so->so_lock);
        snprintf(line, sizeof line, "%s 00:00000000 00000000 %5u %8d %lu 1 0000000000000000",
                 ends, so->so_uid, 0, (unsigned long)so->so_ino);
        padded(sb, TCP_LINE, line);
    }
    sockvec_free(&sv);
    return sv.sv_n < 0 ? -ENOMEM : 0;
}

/* udp, udplite and raw: Linux's udp4_format_sock columns. */
static void dgram_lines(struct sbuf *sb, struct sockvec *sv, bool raw)
{
    sbuf_printf(sb, "%s  sl  local_address rem_address   st tx_queue rx_queue tr tm->when "
                "retrnsmt   uid  timeout inode ref pointer drops\n", raw ? "" : " ");
    for (int i = 0; i < sv->sv_n; i++) {
        struct socket *so = sv->sv_v[i];
        struct inpcb *inp = sotoinp(so);
        char ends[96];
        mutex_enter(&so->so_lock);
        int state = inp->inp_faddr != INADDR_ANY ? LINUX_TCP_ESTABLISHED : LINUX_TCP_CLOSE;
        sock_ends(ends, sizeof ends, i, inp, inp->inp_lport, state, 0, so->so_dgq.q_bytes);
        mutex_exit(&so->so_lock);
        sbuf_printf(sb, "%s%s 00:00000000 00000000 %5u %8d %lu 2 0000000000000000 0\n",
                    raw ? "" : " ", ends, so->so_uid, 0, (unsigned long)so->so_ino);
    }
}

static int inet_dgram_file(struct sbuf *sb, int proto)
{
    struct sockvec sv = { 0 };
    if (proto == IPPROTO_RAW_ALL)
        raw_snapshot(&sv);
    else
        inpcb_snapshot(proto, &sv);
    dgram_lines(sb, &sv, proto == IPPROTO_RAW_ALL);
    sockvec_free(&sv);
    return sv.sv_n < 0 ? -ENOMEM : 0;
}

int procfs_net_udp(struct sbuf *sb) { return inet_dgram_file(sb, IPPROTO_UDP); }
int procfs_net_udplite(struct sbuf *sb) { return inet_dgram_file(sb, IPPROTO_UDPLITE); }
int procfs_net_raw(struct sbuf *sb) { return inet_dgram_file(sb, IPPROTO_RAW_ALL); }

/* ---- sockstat ---- */

static int proto_count(int proto)
{
    struct sockvec sv = { 0 };
    if (proto == IPPROTO_RAW_ALL)
        raw_snapshot(&sv);
    else
        inpcb_snapshot(proto, &sv);
    int n = sv.sv_n;
    sockvec_free(&sv);
    return n;
}

static int tcp_counts(struct tcp_sockstat *c)
{
    struct sockvec sv = { 0 };
    inpcb_snapshot(IPPROTO_TCP, &sv);
    for (int i = 0; i < sv.sv_n; i++) {
        struct socket *so = sv.sv_v[i];
        mutex_enter(&so->so_lock);
        tcp_sockstat_add(so, c);
        mutex_exit(&so->so_lock);
    }
    int n = sv.sv_n;
    sockvec_free(&sv);
    return n;
}

/* Linux's lines (TCP's mem and UDP's in pages, Tempest's the ring
 * buffers TCP holds, UDP's the datagrams queued not counted: 0), then
 * Tempest's own PKT line: the packets alive anywhere in the stack and
 * their bytes, which come back to their level after a burst if nothing
 * leaks. */
int procfs_net_sockstat(struct sbuf *sb)
{
    struct tcp_sockstat tc = { 0 };
    int udp = proto_count(IPPROTO_UDP), lite = proto_count(IPPROTO_UDPLITE);
    int raw = proto_count(IPPROTO_RAW_ALL);
    if (tcp_counts(&tc) < 0 || udp < 0 || lite < 0 || raw < 0)
        return -ENOMEM;
    int frags;
    uint32_t frag_bytes;
    ip_frag_usage(&frags, &frag_bytes);
    sbuf_printf(sb, "sockets: used %ld\n", (long)socket_count());
    sbuf_printf(sb, "TCP: inuse %d orphan %d tw %d alloc %d mem %lu\n", tc.inuse, tc.orphan,
                tc.tw, tc.alloc, (unsigned long)((tc.ring_bytes + PAGE_SIZE - 1) / PAGE_SIZE));
    sbuf_printf(sb, "UDP: inuse %d mem 0\nUDPLITE: inuse %d\nRAW: inuse %d\n", udp, lite, raw);
    sbuf_printf(sb, "FRAG: inuse %d memory %u\n", frags, frag_bytes);
    sbuf_printf(sb, "PKT: inuse %ld memory %ld\n", (long)inet_mib_value(NET_PKTS_LIVE),
                (long)inet_mib_value(NET_PKT_BYTES_LIVE));
    return 0;
}
