/*
 * virtio-blk, legacy PCI transport (virtio 1.x spec, "Legacy Interfaces":
 * PCI vendor 0x1AF4, device 0x1001, registers in I/O BAR0).
 *
 * Theory.  Each disk has one virtqueue (queue 0) in a physically
 * contiguous, zeroed block from the page allocator, laid out as the
 * legacy interface requires: the descriptor table (16 bytes a
 * descriptor), the available ring (flags, idx, ring[qsize], used_event),
 * padding to a 4096-byte boundary, then the used ring (flags, idx,
 * ring[qsize] of {id, len}, avail_event).  Its page frame number goes in
 * the QUEUE_ADDRESS register.  A request is a descriptor chain: a 16-byte
 * header {type IN/OUT, reserved, sector} the device reads, the data (one
 * descriptor per physically contiguous run of the buffer; device-writable
 * for reads), and a one-byte status the device writes (0 OK).  The header
 * and status live in a per-disk array indexed by the chain's head
 * descriptor, so nothing is allocated per request.
 *
 * Submission (from the block layer's service thread): take the virtqueue
 * lock, pop descriptors from the free list, fill them, put the head in
 * the available ring, fence, bump avail->idx, release, and write the queue
 * number to QUEUE_NOTIFY.  max_inflight is set so that that many chains of
 * the largest request always fit, so a submit never finds the ring full
 * (if it did, it fails the request with -EIO instead of waiting).
 *
 * Completion is by interrupt.  The legacy INTx pin is routed through the
 * I/O APIC: the GSI is the interrupt line register (config 0x3C), unless
 * the MADT has an interrupt source override for that ISA IRQ, whose
 * polarity and trigger win (QEMU's i440fx lists 5, 9, 10 and 11 as level,
 * active-high); without one, PCI's level-triggered active-low is used.
 * Vector IRQ_BASE + GSI; each GSI goes to one CPU, spread over the online
 * CPUs.  Several disks may share a GSI, so the handler (one for every
 * vector we use) looks at every disk: it reads the ISR register, which
 * acknowledges and lowers the line, and drains the used ring under the
 * virtqueue lock, freeing the chains and collecting their bios; then it
 * releases the lock and completes them with blk_complete, which wakes the
 * sleeping requesters.  A status other than 0, or a short chain, is -EIO:
 * device misbehaviour never panics.
 *
 * Naming.  Disks are vda, vdb, ... by position among the virtio-blk
 * functions in PCI table order, which is physical order (drivers/pci/pci.c):
 * the order the harness attached them.  One that fails to initialize keeps
 * its letter unused, so its successors are not renamed.
 *
 * Locks.  vblk_vq (spin, one per disk): descriptor free list, avail ring,
 * last_used, the per-head request slots.  Taken by the service thread and
 * by the interrupt handler (held briefly, interrupts off); nothing else is
 * taken inside it.  The table of disks is filled at boot before any
 * interrupt is routed and read-only afterwards.
 */
#include <drivers/block/virtio_blk.h>
#include <drivers/pci/pci.h>
#include <drivers/platform/ioapic.h>
#include <drivers/platform/acpi.h>
#include <drivers/block/bio.h>
#include <kern/arch/arch.h>
#include <kern/arch/cpu.h>
#include <kern/arch/trap.h>
#include <kern/lock/spinlock.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/vm/page.h>
#include <kern/vm/kmem.h>

/* Legacy register offsets in BAR0 (no MSI-X, so device config at 0x14). */
#define VIO_HOST_FEATURES  0x00
#define VIO_GUEST_FEATURES 0x04
#define VIO_QUEUE_ADDR     0x08
#define VIO_QUEUE_SIZE     0x0C
#define VIO_QUEUE_SELECT   0x0E
#define VIO_QUEUE_NOTIFY   0x10
#define VIO_STATUS         0x12
#define VIO_ISR            0x13
#define VIO_CONFIG         0x14     /* virtio-blk: u64 capacity in 512-byte sectors */

#define ST_ACK        1
#define ST_DRIVER     2
#define ST_DRIVER_OK  4
#define ST_FAILED     128

#define VBLK_F_RO     (1u << 5)

#define VRING_DESC_F_NEXT  1
#define VRING_DESC_F_WRITE 2

#define VBLK_T_IN   0
#define VBLK_T_OUT  1

#define VBLK_MAX_SEGS 34            /* data descriptors per request, at most */
#define VBLK_MAX_BLOCKS 128         /* 64 KiB requests: at most 17 page runs */

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

struct vblk_slot {                  /* per head descriptor; device reads hdr, writes status */
    uint32_t type;
    uint32_t reserved;
    uint64_t sector;
    uint8_t status;
    uint8_t pad[7];
    struct bio *bio;                /* [vq] the request using this head, or NULL */
} __aligned(32);

struct vblk {
    struct blkdev bd;
    struct pci_dev *pci;            /* [c] */
    uint16_t io;                    /* [c] BAR0 port base */
    uint16_t qsize;                 /* [c] */
    bool ro;                        /* [c] device is read-only */
    uint32_t gsi;                   /* [c] */
    struct vring_desc *desc;        /* [vq] */
    volatile uint16_t *avail;       /* [vq] flags, idx, ring[qsize] */
    volatile uint16_t *used_hdr;    /* [c] pointer; flags, idx written by the device */
    volatile struct vring_used_elem *used; /* [c] pointer; ring[qsize] written by the device,
                                            * consumed under [vq] */
    struct vblk_slot *slots;        /* [vq] one per descriptor index */
    spinlock_t vq;                  /* protects the [vq] fields */
    uint16_t free_head;             /* [vq] first free descriptor */
    uint16_t nfree;                 /* [vq] free descriptors */
    uint16_t avail_idx;             /* [vq] our copy of avail->idx */
    uint16_t last_used;             /* [vq] next used entry to consume */
    uint64_t intrs;                 /* [vq] interrupts that completed something; tests
                                     * read it with a relaxed atomic load */
};

LOCK_CLASS(vblk_vq_class, "vblk_vq", LK_SPIN);

/* Written only by the boot CPU while probing, but interrupt handlers of
 * disks already attached may scan them meanwhile: an entry is filled
 * before nvblk counts it (release/acquire), and entries are never removed. */
static struct vblk *vblks[VBLK_MAX];    /* [boot] */
static int nvblk;                       /* [boot] */
static int nfound;                      /* [boot] */

int virtio_blk_count(void) { return nvblk; }
int virtio_blk_found(void) { return nfound; }
struct blkdev *virtio_blk_get(int i) { return i >= 0 && i < nvblk ? &vblks[i]->bd : NULL; }

uint64_t virtio_blk_intr_count(int i)
{
    if (i < 0 || i >= nvblk)
        return 0;
    return __atomic_load_n(&vblks[i]->intrs, __ATOMIC_RELAXED);
}

static bool va_ok(const void *va)
{
    uint64_t v = (uint64_t)va;
    return v >= KERNEL_VMA || (v >= DIRECT_MAP && v < DIRECT_MAP + (max_pfn << PAGE_SHIFT));
}

static uint16_t desc_alloc(struct vblk *v)
{
    uint16_t i = v->free_head;
    v->free_head = v->desc[i].next;
    v->nfree--;
    return i;
}

static int vblk_submit(struct blkdev *d, struct bio *b)
{
    struct vblk *v = d->priv;
    if (b->write && v->ro)
        return -EIO;
    /* The buffer as runs of physically contiguous memory. */
    uint64_t seg_pa[VBLK_MAX_SEGS];
    uint32_t seg_len[VBLK_MAX_SEGS];
    int nseg = 0;
    char *p = b->buf;
    uint64_t left = (uint64_t)b->count * d->bsize;
    while (left > 0) {
        if (!va_ok(p))
            return -EINVAL;
        uint64_t n = MIN(left, PAGE_SIZE - ((uint64_t)p & (PAGE_SIZE - 1)));
        uint64_t pa = virt_to_phys(p);
        if (nseg && seg_pa[nseg - 1] + seg_len[nseg - 1] == pa) {
            seg_len[nseg - 1] += (uint32_t)n;
        } else {
            if (nseg == VBLK_MAX_SEGS)
                return -EINVAL;
            seg_pa[nseg] = pa;
            seg_len[nseg] = (uint32_t)n;
            nseg++;
        }
        p += n;
        left -= n;
    }

    spin_lock(&v->vq);
    if (v->nfree < nseg + 2) {
        spin_unlock(&v->vq);
        kprintf("virtio-blk: %s: ring full (%u free, %d needed)\n", d->name, v->nfree, nseg + 2);
        return -EIO;
    }
    uint16_t head = desc_alloc(v);
    struct vblk_slot *s = &v->slots[head];
    s->type = b->write ? VBLK_T_OUT : VBLK_T_IN;
    s->reserved = 0;
    s->sector = b->blkno * (d->bsize / 512);
    s->status = 0xFF;
    s->bio = b;
    uint16_t prev = head;
    v->desc[head].addr = virt_to_phys(s);
    v->desc[head].len = 16;
    v->desc[head].flags = VRING_DESC_F_NEXT;
    for (int i = 0; i < nseg; i++) {
        uint16_t di = desc_alloc(v);
        v->desc[prev].next = di;
        v->desc[di].addr = seg_pa[i];
        v->desc[di].len = seg_len[i];
        v->desc[di].flags = VRING_DESC_F_NEXT | (b->write ? 0 : VRING_DESC_F_WRITE);
        prev = di;
    }
    uint16_t st = desc_alloc(v);
    v->desc[prev].next = st;
    v->desc[st].addr = virt_to_phys(&s->status);
    v->desc[st].len = 1;
    v->desc[st].flags = VRING_DESC_F_WRITE;
    v->desc[st].next = 0;
    v->avail[2 + (v->avail_idx % v->qsize)] = head;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    v->avail_idx++;
    v->avail[1] = v->avail_idx;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    spin_unlock(&v->vq);
    outw((uint16_t)(v->io + VIO_QUEUE_NOTIFY), 0);
    return 0;
}

/* The hang dump's view of the ring: what we gave the device, what it gave
 * back, what we consumed, and the requests still out. */
static void vblk_dump(struct blkdev *d)
{
    struct vblk *v = d->priv;
    kprintf("  virtio %s: avail %u, device used %u, consumed %u, %u descriptors free, "
            "%lu interrupts, gsi %u; out:", d->name, v->avail_idx, v->used_hdr[1],
            v->last_used, v->nfree, v->intrs, v->gsi);
    for (int i = 0; i < v->qsize; i++)
        if (v->slots[i].bio)
            kprintf(" [%s %lu+%u]", v->slots[i].bio->write ? "w" : "r",
                    v->slots[i].bio->blkno, v->slots[i].bio->count);
    kprintf("\n");
}

static const struct blkdev_ops vblk_ops = { .submit = vblk_submit, .dump = vblk_dump };

/* Drain the used ring; returns the finished bios linked through ->drv. */
static struct bio *vblk_reap(struct vblk *v)
{
    struct bio *done = NULL, **tail = &done;
    spin_lock(&v->vq);
    for (;;) {
        uint16_t uidx = v->used_hdr[1];
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (uidx == v->last_used)
            break;
        uint32_t id = v->used[v->last_used % v->qsize].id;
        v->last_used++;
        if (id >= v->qsize || !v->slots[id].bio) {
            kprintf("virtio-blk: %s: device returned bad descriptor %u\n", v->bd.name, id);
            continue;
        }
        struct vblk_slot *s = &v->slots[id];
        struct bio *b = s->bio;
        s->bio = NULL;
        b->error = s->status == 0 ? 0 : -EIO;
        /* Free the chain. */
        uint16_t i = (uint16_t)id;
        for (int guard = 0; guard < v->qsize; guard++) {
            uint16_t flags = v->desc[i].flags, next = v->desc[i].next;
            v->desc[i].next = v->free_head;
            v->desc[i].flags = 0;
            v->free_head = i;
            v->nfree++;
            if (!(flags & VRING_DESC_F_NEXT))
                break;
            i = next;
        }
        b->drv = NULL;
        *tail = b;
        tail = (struct bio **)&b->drv;
    }
    if (done)
        v->intrs++;
    spin_unlock(&v->vq);
    return done;
}

static void vblk_intr(struct trapframe *tf, void *arg)
{
    (void)tf;
    (void)arg;
    int n = __atomic_load_n(&nvblk, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        struct vblk *v = vblks[i];
        (void)inb((uint16_t)(v->io + VIO_ISR));     /* acknowledge; lowers INTx */
        struct bio *b = vblk_reap(v);
        while (b) {
            struct bio *next = b->drv;
            b->drv = NULL;
            blk_complete(b, b->error);
            b = next;
        }
    }
}

static uint32_t routed_gsi[VBLK_MAX];   /* [boot] GSIs already routed */
static int nrouted;                     /* [boot] */

static bool route_irq(struct vblk *v)
{
    bool level, low;
    uint8_t line = v->pci->irq_line;
    if (line == 0 || line == 0xFF)
        return false;
    v->gsi = pci_line_to_gsi(line, &level, &low);
    if (v->gsi >= 24) {     /* our vector plan covers pins 0..23 */
        kprintf("virtio-blk: %s: GSI %u beyond the vector plan\n", v->bd.name, v->gsi);
        return false;
    }
    for (int i = 0; i < nrouted; i++)
        if (routed_gsi[i] == v->gsi)
            return true;
    int vec = IRQ_BASE + (int)v->gsi;
    trap_set_handler(vec, vblk_intr, NULL);
    int online = ncpus_online > 0 ? ncpus_online : 1;
    uint32_t apic = cpus[nrouted % online].apic_id;
    if (!ioapic_route_gsi(v->gsi, vec, apic, level, low)) {
        kprintf("virtio-blk: %s: no I/O APIC serves GSI %u\n", v->bd.name, v->gsi);
        return false;
    }
    kprintf("virtio-blk: GSI %u (line %u, %s, active-%s) -> vector %d on cpu %d\n", v->gsi, line,
            level ? "level" : "edge", low ? "low" : "high", vec, nrouted % online);
    routed_gsi[nrouted++] = v->gsi;
    return true;
}

static int vblk_attach(struct pci_dev *pd, int unit)
{
    if (!pd->bar[0].io || pd->bar[0].base == 0) {
        kprintf("virtio-blk: %02x:%02x.%x: BAR0 is not an I/O BAR\n", pd->bus, pd->dev, pd->fn);
        return -ENXIO;
    }
    struct vblk *v = NULL;
    struct page *ring = NULL, *slots = NULL;
    unsigned ring_order = 0, slot_order = 0;
    uint16_t io = (uint16_t)pd->bar[0].base;
    pci_enable(pd, PCI_CMD_IO | PCI_CMD_MASTER);
    pci_write16(pd, PCI_COMMAND, pci_read16(pd, PCI_COMMAND) & (uint16_t)~PCI_CMD_INTX_DISABLE);

    outb((uint16_t)(io + VIO_STATUS), 0);                  /* reset */
    outb((uint16_t)(io + VIO_STATUS), ST_ACK);
    outb((uint16_t)(io + VIO_STATUS), ST_ACK | ST_DRIVER);
    uint32_t host = inl((uint16_t)(io + VIO_HOST_FEATURES));
    outl((uint16_t)(io + VIO_GUEST_FEATURES), 0);          /* nothing optional */
    outw((uint16_t)(io + VIO_QUEUE_SELECT), 0);
    uint16_t qsize = inw((uint16_t)(io + VIO_QUEUE_SIZE));
    if (qsize == 0 || qsize > 32768 || (qsize & (qsize - 1))) {
        kprintf("virtio-blk: queue 0 has bad size %u\n", qsize);
        goto fail;
    }
    uint64_t desc_sz = 16ull * qsize, avail_sz = 6 + 2ull * qsize, used_sz = 6 + 8ull * qsize;
    uint64_t used_off = ALIGN_UP(desc_sz + avail_sz, PAGE_SIZE);
    uint64_t total = used_off + ALIGN_UP(used_sz, PAGE_SIZE);
    while ((PAGE_SIZE << ring_order) < total)
        ring_order++;
    uint64_t slots_sz = sizeof(struct vblk_slot) * qsize;
    while ((PAGE_SIZE << slot_order) < slots_sz)
        slot_order++;
    v = kzalloc(sizeof *v);
    if (ring_order >= PAGE_MAX_ORDER || slot_order >= PAGE_MAX_ORDER || !v ||
        !(ring = page_alloc(ring_order)) || !(slots = page_alloc(slot_order))) {
        kprintf("virtio-blk: no memory for a queue of %u\n", qsize);
        goto fail;
    }
    char *rb = page_to_virt(ring);
    memset(rb, 0, PAGE_SIZE << ring_order);
    memset(page_to_virt(slots), 0, PAGE_SIZE << slot_order);
    v->pci = pd;
    v->io = io;
    v->qsize = qsize;
    v->ro = (host & VBLK_F_RO) != 0;
    v->desc = (struct vring_desc *)rb;
    v->avail = (volatile uint16_t *)(rb + desc_sz);
    v->used_hdr = (volatile uint16_t *)(rb + used_off);
    v->used = (volatile struct vring_used_elem *)(rb + used_off + 4);
    v->slots = page_to_virt(slots);
    for (uint16_t i = 0; i < qsize; i++)
        v->desc[i].next = (uint16_t)(i + 1);
    v->free_head = 0;
    v->nfree = qsize;
    snprintf(v->bd.name, sizeof v->bd.name, "vd%c", 'a' + unit);
    spin_init_named(&v->vq, &vblk_vq_class, v->bd.name);
    outl((uint16_t)(io + VIO_QUEUE_ADDR), (uint32_t)(page_to_phys(ring) >> PAGE_SHIFT));

    uint64_t cap = inl((uint16_t)(io + VIO_CONFIG)) | ((uint64_t)inl((uint16_t)(io + VIO_CONFIG + 4)) << 32);
    if (cap == 0) {
        kprintf("virtio-blk: %s: capacity 0\n", v->bd.name);
        goto fail;
    }
    v->bd.bsize = 512;
    v->bd.nblocks = cap;
    v->bd.max_blocks = VBLK_MAX_BLOCKS;
    uint32_t per_req = 2 + (VBLK_MAX_BLOCKS * 512 / PAGE_SIZE) + 1;
    v->bd.max_inflight = MAX(1u, MIN(16u, qsize / per_req));
    v->bd.ops = &vblk_ops;
    v->bd.priv = v;

    /* Route first, then publish: the device has no request yet, so it
     * raises no interrupt before the handler can see it, and a disk that
     * cannot get an interrupt is never in the table. */
    if (!route_irq(v)) {
        kprintf("virtio-blk: %s: no usable interrupt (line %u); not attached\n", v->bd.name, pd->irq_line);
        goto fail;
    }
    vblks[nvblk] = v;
    __atomic_store_n(&nvblk, nvblk + 1, __ATOMIC_RELEASE);
    outb((uint16_t)(io + VIO_STATUS), ST_ACK | ST_DRIVER | ST_DRIVER_OK);
    kprintf("virtio-blk: %s at %02x:%02x.%x io 0x%x gsi %u queue %u%s\n", v->bd.name, pd->bus,
            pd->dev, pd->fn, io, v->gsi, qsize, v->ro ? " read-only" : "");
    if (blk_register(&v->bd) < 0)
        return -ENOSPC;     /* the device stays set up but unused */
    pd->claimed = true;
    return 0;

fail:
    outb((uint16_t)(io + VIO_STATUS), ST_FAILED);
    if (ring)
        page_free(ring, ring_order);
    if (slots)
        page_free(slots, slot_order);
    kfree(v);
    return -EIO;
}

static int virtio_blk_probe(void)
{
    int n = 0;
    for (int i = 0; i < pci_count(); i++) {
        struct pci_dev *pd = pci_get(i);
        if (pd->vendor != VIRTIO_VENDOR || pd->device != VIRTIO_DEV_BLK_LEGACY)
            continue;
        if (nfound >= VBLK_MAX) {
            kprintf("virtio-blk: more than %d disks; the rest are ignored\n", VBLK_MAX);
            break;
        }
        /* Named by position among the functions found (PCI order is the
         * order attached), so a disk that fails to initialize leaves a
         * gap rather than shifting its successors' names. */
        if (vblk_attach(pd, nfound++) == 0)
            n++;
    }
    return n;
}

BLK_DRIVER(10, "virtio", virtio_blk_probe);
