/*
 * The network's counters, shown in /proc/net/snmp (and TCP's extensions in
 * /proc/net/netstat) in Linux's format: for each group a line of names
 * and a line of values ("Ip: Forwarding ...", "Ip: 2 64 ..."), which
 * netstat -s and nstat read by name.  The same per-CPU slots keep two
 * gauges no group shows, the packets alive (netif.c), for
 * /proc/net/sockstat.
 *
 * Theory.  Every counter of enum inet_mib (kern/net/inet/inet.h) has a
 * slot in each CPU's own cache line of counters, added to with a relaxed
 * atomic (a device's interrupt may count on the same CPU) and summed over
 * the CPUs when the file is read, as Linux's per-CPU SNMP counters: the
 * hot paths of many CPUs never write one shared line.  A sum is not a
 * snapshot; each counter is exact, their relations only nearly so.
 * ICMP's per-type counts (IcmpMsg: InTypeN, OutTypeN) are two arrays of
 * plain atomics, ICMP being rare.  Rows Linux has and Tempest cannot
 * count read 0 because nothing here does that: forwarding (Tempest is a
 * host), rate limits, fragmentation on output (a datagram too big for
 * the interface is refused, EMSGSIZE, counted as FragFails), and the
 * memory and send-buffer errors of UDP.
 *
 * Locks: none; [a] atomics only.
 */
#include <kern/net/inet/inet.h>
#include <kern/procfs/procfs.h>
#include <kern/arch/cpu.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>

struct mib_line {
    int64_t v[INET_MIB_COUNT];
} __cacheline;

static struct mib_line mib_cpu[MAX_CPUS];       /* [a] */
static uint64_t icmp_in_type[256], icmp_out_type[256];  /* [a] */

void inet_mib_add(enum inet_mib m, int64_t n)
{
    __atomic_add_fetch(&mib_cpu[cpu_id()].v[m], n, __ATOMIC_RELAXED);
}

void udp_mib_count(int proto, enum inet_mib m)
{
    inet_mib_count(proto == IPPROTO_UDPLITE ? m + UDM_LITE : m);
}

void icmp_mib_in(int type)
{
    __atomic_add_fetch(&icmp_in_type[type & 255], 1, __ATOMIC_RELAXED);
    inet_mib_count(ICM_IN_MSGS);
}

void icmp_mib_out(int type)
{
    __atomic_add_fetch(&icmp_out_type[type & 255], 1, __ATOMIC_RELAXED);
    inet_mib_count(ICM_OUT_MSGS);
}

int64_t inet_mib_value(enum inet_mib m)
{
    int64_t s = 0;
    for (int c = 0; c < ncpus; c++)
        s += __atomic_load_n(&mib_cpu[c].v[m], __ATOMIC_RELAXED);
    return s;
}

/* A row's value: a counter, a constant, or an ICMP type's count. */
enum row_kind { R_MIB, R_CONST, R_ICMP_IN, R_ICMP_OUT };

struct row {
    const char *name;
    enum row_kind kind;
    int64_t arg;                    /* the counter, the constant or the type */
};

#define MIB(n, m)       { n, R_MIB, m }
#define CONST(n, v)     { n, R_CONST, v }
#define ZERO(n)         { n, R_CONST, 0 }
#define ICMP_IN(n, t)   { n, R_ICMP_IN, t }
#define ICMP_OUT(n, t)  { n, R_ICMP_OUT, t }

static const struct row ip_rows[] = {
    CONST("Forwarding", 2), CONST("DefaultTTL", IP_DEFAULT_TTL),
    MIB("InReceives", IPM_IN_RECEIVES), MIB("InHdrErrors", IPM_IN_HDR_ERRORS),
    MIB("InAddrErrors", IPM_IN_ADDR_ERRORS), ZERO("ForwDatagrams"),
    MIB("InUnknownProtos", IPM_IN_UNKNOWN_PROTOS), MIB("InDiscards", IPM_IN_DISCARDS),
    MIB("InDelivers", IPM_IN_DELIVERS), MIB("OutRequests", IPM_OUT_REQUESTS),
    MIB("OutDiscards", IPM_OUT_DISCARDS), MIB("OutNoRoutes", IPM_OUT_NO_ROUTES),
    MIB("ReasmTimeout", IPM_REASM_TIMEOUT), MIB("ReasmReqds", IPM_REASM_REQDS),
    MIB("ReasmOKs", IPM_REASM_OKS), MIB("ReasmFails", IPM_REASM_FAILS), ZERO("FragOKs"),
    MIB("FragFails", IPM_FRAG_FAILS), ZERO("FragCreates"),
    MIB("OutTransmits", IPM_OUT_TRANSMITS),
};

static const struct row icmp_rows[] = {
    MIB("InMsgs", ICM_IN_MSGS), MIB("InErrors", ICM_IN_ERRORS),
    MIB("InCsumErrors", ICM_IN_CSUM_ERRORS), ICMP_IN("InDestUnreachs", 3),
    ICMP_IN("InTimeExcds", 11), ICMP_IN("InParmProbs", 12), ICMP_IN("InSrcQuenchs", 4),
    ICMP_IN("InRedirects", 5), ICMP_IN("InEchos", 8), ICMP_IN("InEchoReps", 0),
    ICMP_IN("InTimestamps", 13), ICMP_IN("InTimestampReps", 14), ICMP_IN("InAddrMasks", 17),
    ICMP_IN("InAddrMaskReps", 18), MIB("OutMsgs", ICM_OUT_MSGS), ZERO("OutErrors"),
    ZERO("OutRateLimitGlobal"), ZERO("OutRateLimitHost"), ICMP_OUT("OutDestUnreachs", 3),
    ICMP_OUT("OutTimeExcds", 11), ICMP_OUT("OutParmProbs", 12), ICMP_OUT("OutSrcQuenchs", 4),
    ICMP_OUT("OutRedirects", 5), ICMP_OUT("OutEchos", 8), ICMP_OUT("OutEchoReps", 0),
    ICMP_OUT("OutTimestamps", 13), ICMP_OUT("OutTimestampReps", 14),
    ICMP_OUT("OutAddrMasks", 17), ICMP_OUT("OutAddrMaskReps", 18),
};

static const struct row tcp_rows[] = {
    CONST("RtoAlgorithm", 1), CONST("RtoMin", 200), CONST("RtoMax", 120000),
    CONST("MaxConn", -1), MIB("ActiveOpens", TCM_ACTIVE_OPENS),
    MIB("PassiveOpens", TCM_PASSIVE_OPENS), MIB("AttemptFails", TCM_ATTEMPT_FAILS),
    MIB("EstabResets", TCM_ESTAB_RESETS), MIB("CurrEstab", TCM_CURR_ESTAB),
    MIB("InSegs", TCM_IN_SEGS), MIB("OutSegs", TCM_OUT_SEGS),
    MIB("RetransSegs", TCM_RETRANS_SEGS), MIB("InErrs", TCM_IN_ERRS),
    MIB("OutRsts", TCM_OUT_RSTS), MIB("InCsumErrors", TCM_IN_CSUM_ERRORS),
};

#define UDP_ROWS(base) { \
    MIB("InDatagrams", (base) + UDM_IN_DATAGRAMS - UDM_IN_DATAGRAMS), \
    MIB("NoPorts", (base) + UDM_NO_PORTS - UDM_IN_DATAGRAMS), \
    MIB("InErrors", (base) + UDM_IN_ERRORS - UDM_IN_DATAGRAMS), \
    MIB("OutDatagrams", (base) + UDM_OUT_DATAGRAMS - UDM_IN_DATAGRAMS), \
    MIB("RcvbufErrors", (base) + UDM_RCVBUF_ERRORS - UDM_IN_DATAGRAMS), \
    ZERO("SndbufErrors"), \
    MIB("InCsumErrors", (base) + UDM_IN_CSUM_ERRORS - UDM_IN_DATAGRAMS), \
    ZERO("IgnoredMulti"), ZERO("MemErrors") }

static const struct row udp_rows[] = UDP_ROWS(UDM_IN_DATAGRAMS);
/* /proc/net/netstat's TcpExt: the rows Tempest counts, by Linux's names
 * (nstat and netstat -s read them by name, so the others are left out
 * rather than shown as 0). */
static const struct row tcpext_rows[] = {
    MIB("ListenOverflows", TXM_LISTEN_OVERFLOWS), MIB("ListenDrops", TXM_LISTEN_DROPS),
    MIB("PAWSEstab", TXM_PAWS_ESTAB), MIB("TCPChallengeACK", TXM_CHALLENGE_ACK),
    MIB("TCPOFOQueue", TXM_OFO_QUEUE), MIB("TCPOFODrop", TXM_OFO_DROP),
    MIB("TCPSackRecovery", TXM_SACK_RECOVERY), MIB("TCPRenoRecovery", TXM_RENO_RECOVERY),
};
static const struct row udplite_rows[] = UDP_ROWS(ULM_IN_DATAGRAMS);

static int64_t row_value(const struct row *r)
{
    switch (r->kind) {
    case R_MIB: return inet_mib_value((enum inet_mib)r->arg);
    case R_ICMP_IN: return (int64_t)__atomic_load_n(&icmp_in_type[r->arg], __ATOMIC_RELAXED);
    case R_ICMP_OUT: return (int64_t)__atomic_load_n(&icmp_out_type[r->arg], __ATOMIC_RELAXED);
    default: return r->arg;
    }
}

/* One group: its line of names, then its line of values. */
static void group(struct sbuf *sb, const char *name, const struct row *rows, size_t n)
{
    sbuf_printf(sb, "%s:", name);
    for (size_t i = 0; i < n; i++)
        sbuf_printf(sb, " %s", rows[i].name);
    sbuf_printf(sb, "\n%s:", name);
    for (size_t i = 0; i < n; i++)
        sbuf_printf(sb, " %ld", (long)row_value(&rows[i]));
    sbuf_printf(sb, "\n");
}

/* IcmpMsg: InTypeN then OutTypeN for every type seen, as Linux's (no
 * lines at all before the first message), from one snapshot so that the
 * two lines agree. */
static void icmp_msg_group(struct sbuf *sb)
{
    uint64_t *v = kmalloc(2 * 256 * sizeof *v);
    if (!v)
        return;
    int seen = 0;
    for (int i = 0; i < 512; i++) {
        v[i] = __atomic_load_n(i < 256 ? &icmp_in_type[i] : &icmp_out_type[i - 256],
                               __ATOMIC_RELAXED);
        seen += v[i] != 0;
    }
    if (seen) {
        sbuf_printf(sb, "IcmpMsg:");
        for (int i = 0; i < 512; i++)
            if (v[i])
                sbuf_printf(sb, " %sType%d", i < 256 ? "In" : "Out", i & 255);
        sbuf_printf(sb, "\nIcmpMsg:");
        for (int i = 0; i < 512; i++)
            if (v[i])
                sbuf_printf(sb, " %lu", (unsigned long)v[i]);
        sbuf_printf(sb, "\n");
    }
    kfree(v);
}

#define GROUP(sb, name, rows) group(sb, name, rows, sizeof rows / sizeof rows[0])

int procfs_net_snmp(struct sbuf *sb)
{
    GROUP(sb, "Ip", ip_rows);
    GROUP(sb, "Icmp", icmp_rows);
    icmp_msg_group(sb);
    GROUP(sb, "Tcp", tcp_rows);
    GROUP(sb, "Udp", udp_rows);
    GROUP(sb, "UdpLite", udplite_rows);
    return 0;
}

int procfs_net_netstat(struct sbuf *sb)
{
    GROUP(sb, "TcpExt", tcpext_rows);
    return 0;
}
