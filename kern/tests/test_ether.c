/*
 * ktests for Ethernet and ARP input (kern/net/inet/ether.c), on an
 * interface with no device, so nothing is ever sent: frames too short for
 * Ethernet, not for our MAC, of an unknown type are dropped and counted
 * in rx_dropped; ARP frames truncated, of another hardware or protocol
 * type or address length, or with an unknown operation, are dropped and
 * counted in arpstat.bad; none of it panics.
 */
#include <kern/tests/ktest.h>
#include <kern/net/inet/inet.h>
#include <kern/lib/string.h>

/* An ARP request from 10.0.2.2 for 10.0.2.15, broadcast. */
static size_t arp_frame(uint8_t *f)
{
    static const uint8_t frame[42] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x52, 0x55, 0x0a, 0x00, 0x02, 0x02, 0x08, 0x06,
        0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x01,
        0x52, 0x55, 0x0a, 0x00, 0x02, 0x02, 10, 0, 2, 2,
        0, 0, 0, 0, 0, 0, 10, 0, 2, 15,
    };
    memcpy(f, frame, sizeof frame);
    return sizeof frame;
}

KTEST(ether_bad_input)
{
    struct netif ifp = { .if_name = "ktest0", .if_flags = IFF_UP, .if_type = ARPHRD_ETHER,
                         .if_hwaddr = { 0x02, 0, 0, 0, 0, 1 } };
    uint8_t f[64];
    uint64_t bad = __atomic_load_n(&arpstat.bad, __ATOMIC_RELAXED);
    uint64_t reqs = __atomic_load_n(&arpstat.requests_rcvd, __ATOMIC_RELAXED);

    size_t n = arp_frame(f);
    ether_test_input(&ifp, f, 10);                  /* shorter than an Ethernet header */
    ether_test_input(&ifp, f, n - 1);               /* ARP one byte short */
    f[15] = 2;                                      /* hardware type 2 */
    ether_test_input(&ifp, f, n);
    arp_frame(f);
    f[17] = 0xdd;                                   /* protocol 0x08dd */
    ether_test_input(&ifp, f, n);
    arp_frame(f);
    f[18] = 8;                                      /* 8-byte hardware addresses */
    ether_test_input(&ifp, f, n);
    arp_frame(f);
    f[21] = 9;                                      /* operation 9 */
    ether_test_input(&ifp, f, n);
    KT_ASSERT(__atomic_load_n(&arpstat.bad, __ATOMIC_RELAXED) - bad == 5);
    KT_ASSERT(ifp.if_stats.rx_dropped == 1);

    arp_frame(f);
    ether_test_input(&ifp, f, n);                   /* well formed: counted, we have no address */
    KT_ASSERT(__atomic_load_n(&arpstat.requests_rcvd, __ATOMIC_RELAXED) - reqs == 1);
    f[0] = 0x02;                                    /* another host's MAC */
    ether_test_input(&ifp, f, n);
    arp_frame(f);
    f[12] = 0x86;                                   /* IPv6's type: not ours */
    f[13] = 0xdd;
    ether_test_input(&ifp, f, n);
    KT_ASSERT(ifp.if_stats.rx_dropped == 3);
    KT_ASSERT(__atomic_load_n(&arpstat.bad, __ATOMIC_RELAXED) - bad == 5);
    return 0;
}
