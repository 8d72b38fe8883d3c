/*
 * ATA PIO disks on the legacy ports (primary 0x1F0/0x3F6, secondary
 * 0x170/0x376), for Bochs, where they are the disks.
 *
 * Theory.  Polled PIO, interrupts off at the drive (nIEN in the device
 * control register): the block layer's service thread calls submit, which
 * selects the drive, programs an LBA28 command (LBA48 when the drive has it
 * and the request needs it: READ/WRITE SECTORS (EXT)), then for every
 * sector waits for BSY to clear and DRQ to set and moves 256 words through
 * the data port; writes end with FLUSH CACHE.  The request is completed
 * before submit returns.  Every wait is bounded (a second, or thirty for a
 * flush); a timeout, ERR or DF in the status, or a floating bus (0xFF) is
 * -EIO, never a panic.
 *
 * Probing: for each channel and drive, select it, zero the taskfile and
 * send IDENTIFY DEVICE.  Status 0 or 0xFF means nothing there; a nonzero
 * LBA mid/high signature means ATAPI (a CD-ROM), which we skip.  Words
 * 60-61 give the LBA28 size, word 83 bit 10 says LBA48, words 100-103 its
 * size.
 *
 * Locks.  The two drives of a channel share its registers, and a whole
 * command (select .. last word) must not interleave with the other drive's,
 * so each channel has a resource lock (class ata_channel, LK_RESOURCE),
 * held across the polled transfer.  It must be a resource lock and not a
 * mutex: an SVR4 mutex is released when its holder is preempted, which
 * would let the other drive's thread into the middle of a command.
 * Disks are numbered ata0..ata3 (channel * 2 + drive).
 */
#include <drivers/block/bio.h>
#include <kern/lock/sleep.h>
#include <kern/arch/arch.h>
#include <kern/vm/kmem.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <drivers/platform/timer.h>

#define ATA_DATA     0
#define ATA_ERROR    1
#define ATA_COUNT    2
#define ATA_LBA0     3
#define ATA_LBA1     4
#define ATA_LBA2     5
#define ATA_DRIVE    6
#define ATA_STATUS   7
#define ATA_CMD      7

#define ST_ERR  0x01
#define ST_DRQ  0x08
#define ST_DF   0x20
#define ST_BSY  0x80

#define CMD_READ      0x20
#define CMD_READ_EXT  0x24
#define CMD_WRITE     0x30
#define CMD_WRITE_EXT 0x34
#define CMD_FLUSH     0xE7
#define CMD_FLUSH_EXT 0xEA
#define CMD_IDENTIFY  0xEC

struct ata_chan {
    uint16_t base, ctrl;        /* [c] */
    struct rlock lock;          /* held for a whole command */
};

struct ata_disk {
    struct blkdev bd;
    struct ata_chan *ch;        /* [c] */
    int slave;                  /* [c] 0 master, 1 slave */
    bool lba48;                 /* [c] */
};

LOCK_CLASS(ata_channel_class, "ata_channel", LK_RESOURCE);

static struct ata_chan chans[2] = { { 0x1F0, 0x3F6, {} }, { 0x170, 0x376, {} } };

static void delay400(struct ata_chan *c)
{
    for (int i = 0; i < 4; i++)
        (void)inb(c->ctrl);
}

/* Wait for BSY clear and, if want, one of want's bits (DRQ) or an error.
 * Returns the status, or -1 on timeout or a floating bus. */
static int wait_ready(struct ata_chan *c, uint8_t want, uint64_t ms)
{
    uint64_t deadline = uptime_ns() + ms * 1000000ull;
    for (;;) {
        uint8_t st = inb((uint16_t)(c->base + ATA_STATUS));
        if (st == 0xFF)
            return -1;
        if (!(st & ST_BSY)) {
            if (st & (ST_ERR | ST_DF))
                return st;
            if (!want || (st & want))
                return st;
        }
        if (uptime_ns() > deadline)
            return -1;
        cpu_relax();
    }
}

static void set_taskfile(struct ata_chan *c, int slave, uint64_t lba, uint32_t count, bool lba48)
{
    uint16_t b = c->base;
    if (lba48) {
        outb((uint16_t)(b + ATA_DRIVE), (uint8_t)(0x40 | (slave << 4)));
        delay400(c);
        outb((uint16_t)(b + ATA_COUNT), (uint8_t)(count >> 8));
        outb((uint16_t)(b + ATA_LBA0), (uint8_t)(lba >> 24));
        outb((uint16_t)(b + ATA_LBA1), (uint8_t)(lba >> 32));
        outb((uint16_t)(b + ATA_LBA2), (uint8_t)(lba >> 40));
    } else {
        outb((uint16_t)(b + ATA_DRIVE), (uint8_t)(0xE0 | (slave << 4) | ((lba >> 24) & 0xF)));
        delay400(c);
    }
    outb((uint16_t)(b + ATA_COUNT), (uint8_t)count);
    outb((uint16_t)(b + ATA_LBA0), (uint8_t)lba);
    outb((uint16_t)(b + ATA_LBA1), (uint8_t)(lba >> 8));
    outb((uint16_t)(b + ATA_LBA2), (uint8_t)(lba >> 16));
}

static int ata_xfer(struct ata_disk *a, uint64_t lba, uint32_t count, uint16_t *buf, bool write)
{
    struct ata_chan *c = a->ch;
    bool ext = a->lba48 && (lba + count > (1ull << 28) || count > 256);
    if (count == 0 || count > (ext ? 65536u : 256u))
        return -EINVAL;
    if (wait_ready(c, 0, 1000) < 0)
        return -EIO;
    set_taskfile(c, a->slave, lba, count & (ext ? 0xFFFF : 0xFF), ext);
    outb((uint16_t)(c->base + ATA_CMD),
         write ? (ext ? CMD_WRITE_EXT : CMD_WRITE) : (ext ? CMD_READ_EXT : CMD_READ));
    for (uint32_t s = 0; s < count; s++) {
        delay400(c);
        int st = wait_ready(c, ST_DRQ, 1000);
        if (st < 0 || (st & (ST_ERR | ST_DF)) || !(st & ST_DRQ))
            return -EIO;
        uint16_t *p = buf + s * 256;
        for (int i = 0; i < 256; i++) {
            if (write)
                outw(c->base, p[i]);
            else
                p[i] = inw(c->base);
        }
    }
    if (write) {
        outb((uint16_t)(c->base + ATA_CMD), ext ? CMD_FLUSH_EXT : CMD_FLUSH);
        delay400(c);
        int st = wait_ready(c, 0, 30000);
        if (st < 0 || (st & (ST_ERR | ST_DF)))
            return -EIO;
    } else {
        delay400(c);
        int st = wait_ready(c, 0, 1000);
        if (st < 0 || (st & (ST_ERR | ST_DF)))
            return -EIO;
    }
    return 0;
}

static int ata_submit(struct blkdev *d, struct bio *b)
{
    struct ata_disk *a = d->priv;
    uint32_t per = d->bsize / 512;
    rlock_acquire(&a->ch->lock);
    int e = ata_xfer(a, b->blkno * per, b->count * per, b->buf, b->write);
    rlock_release(&a->ch->lock);
    blk_complete(b, e);
    return 0;
}

static const struct blkdev_ops ata_ops = { .submit = ata_submit };

/* IDENTIFY one drive; the size in sectors (0: none or not ATA). */
static uint64_t identify(struct ata_chan *c, int slave, bool *lba48)
{
    static uint16_t id[256];    /* boot only, one probe at a time */
    uint16_t b = c->base;
    if (inb((uint16_t)(b + ATA_STATUS)) == 0xFF)
        return 0;               /* floating bus: no controller or no drives */
    outb((uint16_t)(b + ATA_DRIVE), (uint8_t)(0xA0 | (slave << 4)));
    delay400(c);
    outb((uint16_t)(b + ATA_COUNT), 0);
    outb((uint16_t)(b + ATA_LBA0), 0);
    outb((uint16_t)(b + ATA_LBA1), 0);
    outb((uint16_t)(b + ATA_LBA2), 0);
    outb((uint16_t)(b + ATA_CMD), CMD_IDENTIFY);
    delay400(c);
    uint8_t st = inb((uint16_t)(b + ATA_STATUS));
    if (st == 0 || st == 0xFF)
        return 0;
    if (wait_ready(c, 0, 1000) < 0)
        return 0;
    if (inb((uint16_t)(b + ATA_LBA1)) != 0 || inb((uint16_t)(b + ATA_LBA2)) != 0)
        return 0;               /* ATAPI or SATA signature */
    int s = wait_ready(c, ST_DRQ, 1000);
    if (s < 0 || (s & ST_ERR) || !(s & ST_DRQ))
        return 0;
    for (int i = 0; i < 256; i++)
        id[i] = inw(b);
    *lba48 = (id[83] & (1 << 10)) != 0;
    uint64_t n28 = id[60] | ((uint64_t)id[61] << 16);
    uint64_t n48 = id[100] | ((uint64_t)id[101] << 16) | ((uint64_t)id[102] << 32) | ((uint64_t)id[103] << 48);
    if (*lba48 && n48)
        return n48;
    *lba48 = false;
    return n28;
}

static int ata_probe(void)
{
    int n = 0;
    for (int ci = 0; ci < 2; ci++) {
        struct ata_chan *c = &chans[ci];
        rlock_init(&c->lock, &ata_channel_class, ci ? "ata1" : "ata0");
        outb(c->ctrl, 0x02);    /* nIEN: we poll */
        for (int slave = 0; slave < 2; slave++) {
            bool lba48 = false;
            uint64_t sectors = identify(c, slave, &lba48);
            if (sectors == 0)
                continue;
            struct ata_disk *a = kzalloc(sizeof *a);
            if (!a)
                return n;
            a->ch = c;
            a->slave = slave;
            a->lba48 = lba48;
            snprintf(a->bd.name, sizeof a->bd.name, "ata%d", ci * 2 + slave);
            a->bd.bsize = 512;
            a->bd.nblocks = sectors;
            a->bd.max_blocks = 128;
            a->bd.max_inflight = 1;
            a->bd.ops = &ata_ops;
            a->bd.priv = a;
            kprintf("ata: %s: %s channel %s, %lu sectors%s\n", a->bd.name, ci ? "secondary" : "primary",
                    slave ? "slave" : "master", sectors, lba48 ? " (LBA48)" : "");
            if (blk_register(&a->bd) == 0)
                n++;
            else
                kfree(a);
        }
    }
    return n;
}

BLK_DRIVER(20, "ata", ata_probe);
