/*
 * virtio-net, legacy PCI transport (virtio 1.x spec, "Legacy Interfaces":
 * PCI vendor 0x1AF4, device 0x1000, registers in I/O BAR0; the network
 * device's part, "Network Device").
 *
 * Theory.  Two virtqueues, laid out as drivers/block/virtio_blk.c lays
 * out its one (descriptors, available ring, padding to 4096, used ring,
 * in zeroed pages from the page allocator): queue 0 receives, queue 1
 * transmits.  Only VIRTIO_NET_F_MAC is negotiated, so every frame is
 * preceded by the 10-byte legacy struct virtio_net_hdr with nothing
 * offloaded (flags 0, GSO_NONE), and the MAC comes from the device's
 * configuration space (BAR0 + 0x14 without MSI-X).  The legacy interface
 * wants the header in a descriptor of its own, so a buffer is a pair of
 * descriptors: 2i for slot i's header, 2i+1 for its frame.  A slot is a
 * 2048-byte piece of one physically contiguous block: the header at 0,
 * the frame (at most 1514 bytes) at 16.  The pairs never change, so no
 * descriptor free list is kept; a used entry names a slot by its head.
 *
 * Receiving: every receive slot is posted when the protocols start the
 * device (netdev_start).  The interrupt takes each used entry, checks its
 * slot and its length (a header and an Ethernet header at least, a
 * header and 1514 bytes at most: anything else is dropped and counted in
 * rx_errors, as is a slot the device did not own), hands the frame to
 * nd_rx with no lock of ours held, and posts the slot again.
 *
 * Transmitting (nd_xmit, from any thread): take back the slots the
 * device has finished with, take a free one, copy the frame into it, post
 * it and notify.  No free slot, or a frame longer than 1514 bytes, is a
 * drop (tx_dropped, -ENOBUFS): the protocols above retransmit.  The
 * interrupt takes back finished slots too.
 *
 * Interrupts are routed as virtio_blk.c routes them: the INTx line, an
 * ACPI override's polarity and trigger winning, to vector IRQ_BASE + GSI.
 * A GSI a disk already uses is shared: our handler calls the disk's after
 * its own work, and reading our ISR register acknowledges our part.
 * Device misbehaviour never panics: a bad descriptor id or length is
 * dropped and counted.
 *
 * Locks.  vnet_rx (spin, one per device): the receive ring (its avail
 * index, last_used, which slots the device owns).  vnet_tx (spin, one per
 * device): the transmit ring and its free slots.  Neither is held while
 * the other is taken, nor while nd_rx runs; inside them only the device's
 * registers are touched.  Both are leaves of row 4 of the lock order.
 * The table of devices is filled at boot and read-only afterwards.
 */
#include <drivers/net/netdev.h>
#include <drivers/block/virtio_blk.h>
#include <drivers/pci/pci.h>
#include <drivers/platform/ioapic.h>
#include <drivers/platform/acpi.h>
#include <kern/arch/arch.h>
#include <kern/arch/cpu.h>
#include <kern/arch/trap.h>
#include <kern/lock/spinlock.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <kern/vm/page.h>
#include <kern/vm/kmem.h>

#define VIRTIO_DEV_NET_LEGACY 0x1000

#define VIO_HOST_FEATURES  0x00
#define VIO_GUEST_FEATURES 0x04
#define VIO_QUEUE_ADDR     0x08
#define VIO_QUEUE_SIZE     0x0C
#define VIO_QUEUE_SELECT   0x0E
#define VIO_QUEUE_NOTIFY   0x10
#define VIO_STATUS         0x12
#define VIO_ISR            0x13
#define VIO_CONFIG         0x14     /* virtio-net: mac[6], then status */

#define ST_ACK        1
#define ST_DRIVER     2
#define ST_DRIVER_OK  4
#define ST_FAILED     128

#define VNET_F_MAC    (1u << 5)

#define VRING_DESC_F_NEXT  1
#define VRING_DESC_F_WRITE 2

#define VNET_HDR_LEN  10            /* legacy virtio_net_hdr, no mergeable buffers */
#define VNET_SLOT     2048
#define VNET_FRAME_OFF 16
#define VNET_FRAME_MAX (ETH_HDR_LEN + ETH_MTU)
#define VNET_MAX_SLOTS 64           /* per queue */

#define RXQ 0
#define TXQ 1

struct vring_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
    uint16_t next;
} __packed;

struct vring_used_elem {
    uint32_t id;
    uint32_t len;
} __packed;

struct vq {
    uint16_t qsize;                 /* [c] the device's */
    uint16_t nslots;                /* [c] buffers: descriptor pairs used */
    struct vring_desc *desc;        /* [lock] */
    volatile uint16_t *avail;       /* [lock] flags, idx, ring[qsize] */
    volatile uint16_t *used_hdr;    /* [c] pointer; flags, idx written by the device */
    volatile struct vring_used_elem *used;  /* [c] pointer; consumed under [lock] */
    uint8_t *buf;                   /* [c] nslots slots of VNET_SLOT bytes */
    uint64_t buf_pa;                /* [c] */
    uint16_t avail_idx;             /* [lock] our copy of avail->idx */
    uint16_t last_used;             /* [lock] next used entry to take */
    bool posted[VNET_MAX_SLOTS];    /* [lock] the device owns slot i */
    uint16_t free[VNET_MAX_SLOTS];  /* [lock] transmit: the free slots, a stack */
    uint16_t nfree;                 /* [lock] */
    spinlock_t lock;                /* vnet_rx or vnet_tx */
};

struct vnet {
    struct netdev nd;
    struct pci_dev *pci;            /* [c] */
    uint16_t io;                    /* [c] */
    uint32_t gsi;                   /* [c] */
    bool started;                   /* [c once set; read with acquire] */
    struct vq q[2];                 /* RXQ, TXQ */
};

LOCK_CLASS(vnet_rx_class, "vnet_rx", LK_SPIN);
LOCK_CLASS(vnet_tx_class, "vnet_tx", LK_SPIN);

static struct vnet *vnets[NETDEV_MAX];  /* [boot] filled before nvnet counts them */
static int nvnet;                       /* [boot] */

int netdev_count(void) { return __atomic_load_n(&nvnet, __ATOMIC_ACQUIRE); }
struct netdev *netdev_get(int i) { return i >= 0 && i < netdev_count() ? &vnets[i]->nd : NULL; }

static void count(struct vnet *v, uint64_t *field, uint64_t n)
{
    (void)v;
    __atomic_add_fetch(field, n, __ATOMIC_RELAXED);
}

/* Put slot i (head descriptor 2i) in q's available ring; lock held. */
static void post_slot(struct vq *q, uint16_t i)
{
    q->posted[i] = true;
    q->avail[2 + (q->avail_idx % q->qsize)] = (uint16_t)(2 * i);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    q->avail_idx++;
    q->avail[1] = q->avail_idx;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* The next used entry of q: its slot (or -1 for none), its length in
 * *len; a slot that is not the device's is counted in *bad and skipped.
 * Lock held. */
static int take_used(struct vq *q, uint32_t *len, uint64_t *bad)
{
    for (;;) {
        uint16_t uidx = q->used_hdr[1];
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (uidx == q->last_used)
            return -1;
        uint32_t id = q->used[q->last_used % q->qsize].id;
        *len = q->used[q->last_used % q->qsize].len;
        q->last_used++;
        if ((id & 1) || id / 2 >= q->nslots || !q->posted[id / 2]) {
            __atomic_add_fetch(bad, 1, __ATOMIC_RELAXED);
            continue;
        }
        q->posted[id / 2] = false;
        return (int)(id / 2);
    }
}

static void tx_reclaim(struct vnet *v)
{
    struct vq *q = &v->q[TXQ];
    uint32_t len;
    int s;
    while ((s = take_used(q, &len, &v->nd.nd_stats->tx_errors)) >= 0)
        q->free[q->nfree++] = (uint16_t)s;
}

static int vnet_xmit(struct netdev *nd, const void *hdr, size_t hlen, const void *data, size_t len)
{
    struct vnet *v = nd->nd_priv;
    struct vq *q = &v->q[TXQ];
    if (hlen + len > VNET_FRAME_MAX || hlen + len < ETH_HDR_LEN) {
        count(v, &nd->nd_stats->tx_dropped, 1);
        return -ENOBUFS;
    }
    spin_lock(&q->lock);
    tx_reclaim(v);
    if (q->nfree == 0) {
        spin_unlock(&q->lock);
        count(v, &nd->nd_stats->tx_dropped, 1);
        return -ENOBUFS;
    }
    uint16_t i = q->free[--q->nfree];
    uint8_t *b = q->buf + (size_t)i * VNET_SLOT;
    memset(b, 0, VNET_HDR_LEN);
    memcpy(b + VNET_FRAME_OFF, hdr, hlen);
    memcpy(b + VNET_FRAME_OFF + hlen, data, len);
    q->desc[2 * i + 1].len = (uint32_t)(hlen + len);
    post_slot(q, i);
    spin_unlock(&q->lock);
    outw((uint16_t)(v->io + VIO_QUEUE_NOTIFY), TXQ);
    count(v, &nd->nd_stats->tx_packets, 1);
    count(v, &nd->nd_stats->tx_bytes, hlen + len);
    return 0;
}

static void rx_drain(struct vnet *v)
{
    struct vq *q = &v->q[RXQ];
    struct netif_stats *st = v->nd.nd_stats;
    bool reposted = false;
    for (;;) {
        uint32_t len;
        spin_lock(&q->lock);
        int s = take_used(q, &len, &st->rx_errors);
        spin_unlock(&q->lock);
        if (s < 0)
            break;
        /* The slot is ours until posted again: nothing else touches it. */
        if (len < VNET_HDR_LEN + ETH_HDR_LEN || len > VNET_HDR_LEN + VNET_FRAME_MAX)
            count(v, &st->rx_errors, 1);
        else
            v->nd.nd_rx(&v->nd, q->buf + (size_t)s * VNET_SLOT + VNET_FRAME_OFF,
                        len - VNET_HDR_LEN);
        spin_lock(&q->lock);
        post_slot(q, (uint16_t)s);
        spin_unlock(&q->lock);
        reposted = true;
    }
    if (reposted)
        outw((uint16_t)(v->io + VIO_QUEUE_NOTIFY), RXQ);
}

struct shared_irq {
    irq_handler_t fn;               /* [boot] the handler we replaced, or NULL */
    void *arg;
};
static struct shared_irq chained[24];   /* [boot] by GSI */

static void vnet_intr(struct trapframe *tf, void *arg)
{
    uint32_t gsi = (uint32_t)(uintptr_t)arg;
    int n = netdev_count();
    for (int i = 0; i < n; i++) {
        struct vnet *v = vnets[i];
        if (v->gsi != gsi)
            continue;
        (void)inb((uint16_t)(v->io + VIO_ISR));     /* acknowledge; lowers our INTx */
        if (!__atomic_load_n(&v->started, __ATOMIC_ACQUIRE))
            continue;
        rx_drain(v);
        spin_lock(&v->q[TXQ].lock);
        tx_reclaim(v);
        spin_unlock(&v->q[TXQ].lock);
    }
    if (gsi < 24 && chained[gsi].fn)
        chained[gsi].fn(tf, chained[gsi].arg);
}

static bool route_irq(struct vnet *v)
{
    bool level, low;
    uint8_t line = v->pci->irq_line;
    if (line == 0 || line == 0xFF)
        return false;
    v->gsi = pci_line_to_gsi(line, &level, &low);
    if (v->gsi >= 24)
        return false;
    int vec = IRQ_BASE + (int)v->gsi;
    void *arg;
    irq_handler_t old = trap_get_handler(vec, &arg);
    if (old == vnet_intr)
        return true;            /* another of ours on this line */
    chained[v->gsi].fn = old;
    chained[v->gsi].arg = arg;
    trap_set_handler(vec, vnet_intr, (void *)(uintptr_t)v->gsi);
    if (old)
        return true;            /* a disk's line, routed already */
    int online = ncpus_online > 0 ? ncpus_online : 1;
    if (!ioapic_route_gsi(v->gsi, vec, cpus[(nvnet + 1) % online].apic_id, level, low)) {
        trap_set_handler(vec, NULL, NULL);
        return false;
    }
    return true;
}

/* Set up queue qi of v: its ring, its slots; false when memory is short
 * or the device's queue is unusable. */
static bool setup_queue(struct vnet *v, int qi)
{
    struct vq *q = &v->q[qi];
    outw((uint16_t)(v->io + VIO_QUEUE_SELECT), (uint16_t)qi);
    uint16_t qsize = inw((uint16_t)(v->io + VIO_QUEUE_SIZE));
    if (qsize < 2 || qsize > 32768 || (qsize & (qsize - 1))) {
        kprintf("virtio-net: queue %d has bad size %u\n", qi, qsize);
        return false;
    }
    uint64_t desc_sz = 16ull * qsize, avail_sz = 6 + 2ull * qsize, used_sz = 6 + 8ull * qsize;
    uint64_t used_off = ALIGN_UP(desc_sz + avail_sz, PAGE_SIZE);
    uint64_t total = used_off + ALIGN_UP(used_sz, PAGE_SIZE);
    unsigned ring_order = 0, buf_order = 0;
    while ((PAGE_SIZE << ring_order) < total)
        ring_order++;
    q->nslots = (uint16_t)MIN((unsigned)VNET_MAX_SLOTS, qsize / 2u);
    while ((PAGE_SIZE << buf_order) < (uint64_t)q->nslots * VNET_SLOT)
        buf_order++;
    struct page *ring = NULL, *buf = NULL;
    if (ring_order >= PAGE_MAX_ORDER || buf_order >= PAGE_MAX_ORDER ||
        !(ring = page_alloc(ring_order)) || !(buf = page_alloc(buf_order))) {
        if (ring)
            page_free(ring, ring_order);
        kprintf("virtio-net: no memory for queue %d\n", qi);
        return false;
    }
    char *rb = page_to_virt(ring);
    memset(rb, 0, PAGE_SIZE << ring_order);
    q->qsize = qsize;
    q->desc = (struct vring_desc *)rb;
    q->avail = (volatile uint16_t *)(rb + desc_sz);
    q->used_hdr = (volatile uint16_t *)(rb + used_off);
    q->used = (volatile struct vring_used_elem *)(rb + used_off + 4);
    q->buf = page_to_virt(buf);
    q->buf_pa = page_to_phys(buf);
    memset(q->buf, 0, PAGE_SIZE << buf_order);
    uint16_t wr = qi == RXQ ? VRING_DESC_F_WRITE : 0;
    for (uint16_t i = 0; i < q->nslots; i++) {
        uint64_t pa = q->buf_pa + (uint64_t)i * VNET_SLOT;
        q->desc[2 * i] = (struct vring_desc){ pa, VNET_HDR_LEN, (uint16_t)(VRING_DESC_F_NEXT | wr),
                                              (uint16_t)(2 * i + 1) };
        q->desc[2 * i + 1] = (struct vring_desc){ pa + VNET_FRAME_OFF, VNET_FRAME_MAX, wr, 0 };
        q->free[i] = (uint16_t)(q->nslots - 1 - i);
    }
    q->nfree = qi == TXQ ? q->nslots : 0;
    spin_init_named(&q->lock, qi == RXQ ? &vnet_rx_class : &vnet_tx_class, v->nd.nd_name);
    outl((uint16_t)(v->io + VIO_QUEUE_ADDR), (uint32_t)(page_to_phys(ring) >> PAGE_SHIFT));
    return true;
}

static struct netif_stats boot_stats;   /* counts until the protocols give theirs */

static void no_rx(struct netdev *nd, const void *frame, size_t len) { (void)nd, (void)frame, (void)len; }

static int vnet_attach(struct pci_dev *pd, int unit)
{
    if (!pd->bar[0].io || pd->bar[0].base == 0) {
        kprintf("virtio-net: %02x:%02x.%x: BAR0 is not an I/O BAR\n", pd->bus, pd->dev, pd->fn);
        return -ENXIO;
    }
    struct vnet *v = kzalloc(sizeof *v);
    if (!v)
        return -ENOMEM;
    uint16_t io = (uint16_t)pd->bar[0].base;
    v->pci = pd;
    v->io = io;
    snprintf(v->nd.nd_name, sizeof v->nd.nd_name, "eth%d", unit);
    v->nd.nd_mtu = ETH_MTU;
    v->nd.nd_xmit = vnet_xmit;
    v->nd.nd_rx = no_rx;
    v->nd.nd_stats = &boot_stats;
    v->nd.nd_priv = v;
    pci_enable(pd, PCI_CMD_IO | PCI_CMD_MASTER);
    pci_write16(pd, PCI_COMMAND, pci_read16(pd, PCI_COMMAND) & (uint16_t)~PCI_CMD_INTX_DISABLE);
    outb((uint16_t)(io + VIO_STATUS), 0);
    outb((uint16_t)(io + VIO_STATUS), ST_ACK);
    outb((uint16_t)(io + VIO_STATUS), ST_ACK | ST_DRIVER);
    uint32_t host = inl((uint16_t)(io + VIO_HOST_FEATURES));
    outl((uint16_t)(io + VIO_GUEST_FEATURES), host & VNET_F_MAC);
    if (host & VNET_F_MAC) {
        for (int i = 0; i < ETH_ALEN; i++)
            v->nd.nd_mac[i] = inb((uint16_t)(io + VIO_CONFIG + i));
    } else {        /* a locally administered address of our own */
        uint8_t mac[ETH_ALEN] = { 0x02, 0x54, 0x00, 0x00, pd->dev, (uint8_t)unit };
        memcpy(v->nd.nd_mac, mac, ETH_ALEN);
    }
    if (!setup_queue(v, RXQ) || !setup_queue(v, TXQ) || !route_irq(v)) {
        kprintf("virtio-net: %s: not attached (queues or interrupt line %u)\n", v->nd.nd_name,
                pd->irq_line);
        outb((uint16_t)(io + VIO_STATUS), ST_FAILED);
        return -EIO;        /* its pages stay: the device may have seen them */
    }
    vnets[nvnet] = v;
    __atomic_store_n(&nvnet, nvnet + 1, __ATOMIC_RELEASE);
    outb((uint16_t)(io + VIO_STATUS), ST_ACK | ST_DRIVER | ST_DRIVER_OK);
    const uint8_t *m = v->nd.nd_mac;
    kprintf("virtio-net: %s at %02x:%02x.%x io 0x%x gsi %u queues %u/%u mac "
            "%02x:%02x:%02x:%02x:%02x:%02x\n", v->nd.nd_name, pd->bus, pd->dev, pd->fn, io,
            v->gsi, v->q[RXQ].qsize, v->q[TXQ].qsize, m[0], m[1], m[2], m[3], m[4], m[5]);
    pd->claimed = true;
    return 0;
}

void netdev_start(struct netdev *nd)
{
    struct vnet *v = nd->nd_priv;
    struct vq *q = &v->q[RXQ];
    spin_lock(&q->lock);
    for (uint16_t i = 0; i < q->nslots; i++)
        post_slot(q, i);
    spin_unlock(&q->lock);
    __atomic_store_n(&v->started, true, __ATOMIC_RELEASE);
    outw((uint16_t)(v->io + VIO_QUEUE_NOTIFY), RXQ);
}

void netdev_init(void)
{
    int unit = 0;
    for (int i = 0; i < pci_count() && nvnet < NETDEV_MAX; i++) {
        struct pci_dev *pd = pci_get(i);
        if (pd->vendor == VIRTIO_VENDOR && pd->device == VIRTIO_DEV_NET_LEGACY)
            vnet_attach(pd, unit++);
    }
}
