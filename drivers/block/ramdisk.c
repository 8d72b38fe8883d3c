/*
 * RAM disk.
 *
 * Theory.  The disk is an array of single pages from the page allocator
 * (an 8 MiB disk needs no 8 MiB contiguous block, which the buddy lists
 * could not give anyway: their largest block is 4 MiB), zeroed at
 * creation.  submit copies between the request buffer and the pages,
 * a page at a time, and completes the request at once.  Requests reach
 * submit only from the disk's one service thread (max_inflight 1), so the
 * pages need no lock of their own: the block layer serializes them.
 */
#include <drivers/block/bio.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/kprintf.h>
#include <kern/vm/page.h>

struct ramdisk {
    struct blkdev bd;
    uint64_t npages;    /* [c] */
    void **pages;       /* [c] array; page contents: the service thread */
};

static int ram_submit(struct blkdev *d, struct bio *b)
{
    struct ramdisk *r = d->priv;
    uint64_t off = b->blkno * d->bsize;
    uint64_t len = (uint64_t)b->count * d->bsize;
    if (off + len > r->npages * PAGE_SIZE)
        return -ENXIO;
    char *p = b->buf;
    while (len > 0) {
        uint64_t pg = off / PAGE_SIZE, in = off % PAGE_SIZE;
        uint64_t n = MIN(len, PAGE_SIZE - in);
        char *page = (char *)r->pages[pg] + in;
        if (b->write)
            memcpy(page, p, n);
        else
            memcpy(p, page, n);
        p += n;
        off += n;
        len -= n;
    }
    blk_complete(b, 0);
    return 0;
}

static const struct blkdev_ops ram_ops = { .submit = ram_submit };

struct blkdev *ramdisk_create(const char *name, uint32_t mib, uint32_t bsize)
{
    if (!name || !name[0] || mib == 0 || mib > 1024 || (bsize != 512 && bsize != 1024))
        return NULL;
    struct ramdisk *r = kzalloc(sizeof *r);
    if (!r)
        return NULL;
    r->npages = (uint64_t)mib * (1024 * 1024 / PAGE_SIZE);
    r->pages = kzalloc(r->npages * sizeof(void *));
    if (!r->pages)
        goto fail;
    for (uint64_t i = 0; i < r->npages; i++)
        if (!(r->pages[i] = page_alloc_zeroed_va()))
            goto fail;
    snprintf(r->bd.name, sizeof r->bd.name, "%s", name);
    r->bd.bsize = bsize;
    r->bd.nblocks = (uint64_t)mib * 1024 * 1024 / bsize;
    r->bd.max_blocks = 256;
    r->bd.max_inflight = 1;
    r->bd.ops = &ram_ops;
    r->bd.priv = r;
    if (blk_register(&r->bd) == 0)
        return &r->bd;
fail:
    kprintf("ramdisk: cannot create %s (%u MiB)\n", name, mib);
    if (r->pages) {
        for (uint64_t i = 0; i < r->npages; i++)
            if (r->pages[i])
                page_free(virt_to_page(r->pages[i]), 0);
        kfree(r->pages);
    }
    kfree(r);
    return NULL;
}

/* Boot: the 8 MiB RAM disk ram0 (root=ram0 makes a file system on it). */
static int ramdisk_probe(void)
{
    return ramdisk_create("ram0", 8, 512) ? 1 : 0;
}

BLK_DRIVER(30, "ram", ramdisk_probe);
