/* virtio-blk over the legacy PCI transport.  Theory in drivers/block/virtio_blk.c. */
#ifndef DRIVERS_VIRTIO_BLK_H
#define DRIVERS_VIRTIO_BLK_H

#include <kern/lib/types.h>

struct blkdev;

#define VIRTIO_VENDOR        0x1AF4
#define VIRTIO_DEV_BLK_LEGACY 0x1001
#define VBLK_MAX 16

/* Disks the probe registered, and the i-th of them. */
int virtio_blk_count(void);
struct blkdev *virtio_blk_get(int i);
/* Virtio-blk functions PCI showed (at most VBLK_MAX), whether or not they
 * initialized. */
int virtio_blk_found(void);
/* Interrupts taken that found completed requests, for disk i (tests). */
uint64_t virtio_blk_intr_count(int i);

#endif
