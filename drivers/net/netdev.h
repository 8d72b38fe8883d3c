/*
 * Network devices as the layers above see them: a name, a hardware
 * address, a transmit entry, and the receive hook the protocols set.
 * Theory of the one driver in drivers/net/virtio_net.c.
 *
 * The protocols (kern/net/inet/ether.c) are a higher layer: a driver
 * reaches them only through nd_rx, which they set at boot before the
 * device is started (netdev_start); a device never calls upward
 * otherwise.  The counters a driver keeps are the interface's own
 * (nd_stats points at its if_stats), so the statistics live in one place.
 */
#ifndef DRIVERS_NET_NETDEV_H
#define DRIVERS_NET_NETDEV_H

#include <kern/lib/types.h>

#define ETH_ALEN        6
#define ETH_HDR_LEN     14
#define ETH_MTU         1500
#define NETDEV_MAX      4

/* An interface's counters, kept with relaxed atomic adds. */
struct netif_stats {
    uint64_t rx_packets, rx_bytes, rx_dropped, rx_errors;
    uint64_t tx_packets, tx_bytes, tx_dropped, tx_errors;
};

struct netdev {
    char nd_name[16];               /* [c] "eth0", ... */
    uint8_t nd_mac[ETH_ALEN];       /* [c] */
    uint32_t nd_mtu;                /* [c] */
    /* Send a frame made of hdr (hlen bytes) then data (len bytes): both
     * are copied before it returns.  0, or -ENOBUFS when the ring is full
     * or the frame too long (counted in tx_dropped). */
    int (*nd_xmit)(struct netdev *nd, const void *hdr, size_t hlen, const void *data, size_t len);
    /* [c once started] A frame came in: called from the device's
     * interrupt, interrupts off; the frame is the driver's again when it
     * returns. */
    void (*nd_rx)(struct netdev *nd, const void *frame, size_t len);
    void *nd_upper;                 /* [c once started] the protocols' interface */
    struct netif_stats *nd_stats;   /* [c once started] where the counters go */
    void *nd_priv;                  /* [c] the driver's */
};

/* Devices the drivers found, in PCI order. */
int netdev_count(void);
struct netdev *netdev_get(int i);
/* Let the device take interrupts and receive (nd_rx, nd_stats set). */
void netdev_start(struct netdev *nd);
/* Probe the network drivers (kmain, after the disks). */
void netdev_init(void);

#endif
