/*
 * fsprobe=DISK,...: mount each listed disk's file system (S5 or UFS, by
 * its superblock: vfs_probe_fstype) on a fresh
 * directory of the root, walk every file and directory in it (reading
 * every byte, up to PROBE_READ_MAX of each file), write and remove a file,
 * report, and unmount.  The harness (tests/fs_check.py)
 * attaches deliberately corrupted images and checks that each one either
 * fails to mount with a reason or fails the operations that touch the
 * damage, with errors counted here, and that the kernel never panics.
 *
 * Output, one line per disk:
 *   fsprobe DISK: mount failed errno N
 *   fsprobe DISK: mounted files=N dirs=N bytes=N errors=N unmount=ERRNO
 * and for each failed operation (at most a few per disk):
 *   fsprobe DISK: error N at PATH
 */
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/vm/kmem.h>
#include <kern/lib/options.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/vfs/fsbench.h>

#define PROBE_DEPTH   8         /* deeper directories are not entered */
#define PROBE_REPORTS 4         /* error lines printed per disk */
#define PROBE_WRITE   (80 * 1024)   /* bytes written to exercise allocation */
/* Bytes read of one file at most: a damaged size can make a file of
 * terabytes of holes, which a walk at 1 KiB a read would take days over. */
#define PROBE_READ_MAX (16u << 20)

struct probe {
    const char *disk;
    uint64_t files, dirs, bytes;
    int errors;
};

static void probe_error(struct probe *p, int e, const char *path)
{
    if (p->errors++ < PROBE_REPORTS)
        kprintf("fsprobe %s: error %d at %s\n", p->disk, e, path);
}

static void read_all(struct probe *p, struct vnode *vp, const char *path)
{
    uint8_t *buf = kmalloc(1024);
    if (!buf)
        return;
    for (uint64_t off = 0; off < PROBE_READ_MAX; off += 1024) {
        struct uio u = { .uio_base = buf, .uio_resid = 1024, .uio_offset = off };
        int e = VOP_READ(vp, &u, 0, kcred);
        if (e) {
            probe_error(p, e, path);
            break;
        }
        size_t got = 1024 - u.uio_resid;
        p->bytes += got;
        if (got < 1024)
            break;
    }
    kfree(buf);
}

static void walk(struct probe *p, struct vnode *dvp, char *path, size_t plen, int depth);

/* One directory entry: look it up in dvp and visit what it names. */
static void visit(struct probe *p, struct vnode *dvp, const char *name, char *path, size_t plen,
                  int depth)
{
    size_t n = strlen(path);
    snprintf(path + n, plen - n, "/%s", name);
    struct vnode *vp;
    int e = VOP_LOOKUP(dvp, name, &vp, kcred);
    if (e) {
        probe_error(p, e, path);
    } else {
        if (vp->v_type == VDIR) {
            p->dirs++;
            if (depth < PROBE_DEPTH)
                walk(p, vp, path, plen, depth + 1);
        } else if (vp->v_type == VREG) {
            p->files++;
            read_all(p, vp, path);
        }
        VN_RELE(vp);
    }
    path[n] = 0;
}

static void walk(struct probe *p, struct vnode *dvp, char *path, size_t plen, int depth)
{
    uint8_t *buf = kmalloc(1024);
    if (!buf)
        return;
    bool eof = false;
    for (uint64_t off = 0; !eof;) {
        struct uio u = { .uio_base = buf, .uio_resid = 1024, .uio_offset = off };
        int e = VOP_READDIR(dvp, &u, kcred, &eof);
        size_t got = 1024 - u.uio_resid;
        if (e || (got == 0 && !eof)) {
            probe_error(p, e ? e : -EIO, path);
            break;
        }
        for (size_t at = 0; at < got;) {
            struct dirent64 *d = (struct dirent64 *)(buf + at);
            if (d->d_reclen == 0)
                break;
            if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
                visit(p, dvp, d->d_name, path, plen, depth);
            at += d->d_reclen;
        }
        off = u.uio_offset;
    }
    kfree(buf);
}

/* Allocate: write a file large enough to take blocks from the free-block
 * chain (past the superblock's cache of 50), then remove it. */
static void write_probe(struct probe *p, const char *mnt)
{
    char path[64];
    snprintf(path, sizeof(path), "%s/probe.tmp", mnt);
    struct vnode *vp;
    int e = vn_open(path, NULL, O_CREAT | O_TRUNC | O_WRONLY, 0644, &vp, kcred);
    if (e) {
        probe_error(p, e, path);
        return;
    }
    uint8_t *buf = kzalloc(1024);
    for (uint64_t off = 0; buf && off < PROBE_WRITE; off += 1024) {
        size_t done;
        e = vn_rdwr(vp, true, buf, 1024, off, 0, &done, kcred);
        if (e) {
            probe_error(p, e, path);
            break;
        }
    }
    kfree(buf);
    vn_close(vp, O_WRONLY, kcred);
    e = vn_remove(path, NULL, kcred);
    if (e)
        probe_error(p, e, path);
}

static void probe_disk(const char *disk)
{
    struct probe p = { .disk = disk };
    char mnt[40], path[256];
    snprintf(mnt, sizeof(mnt), "/fsprobe_%s", disk);
    int e = vn_mkdir(mnt, NULL, 0755, kcred);
    if (e && e != -EEXIST) {
        kprintf("fsprobe %s: cannot make %s: errno %d\n", disk, mnt, -e);
        return;
    }
    e = vfs_mount(vfs_probe_fstype(disk), disk, mnt, 0, kcred);
    if (e) {
        kprintf("fsprobe %s: mount failed errno %d\n", disk, -e);
        vn_rmdir(mnt, NULL, kcred);
        return;
    }
    struct vnode *root;
    e = lookupname(mnt, NULL, true, &root, kcred);
    if (e) {
        probe_error(&p, e, mnt);
    } else {
        strlcpy(path, mnt, sizeof(path));
        walk(&p, root, path, sizeof(path), 0);
        VN_RELE(root);
        write_probe(&p, mnt);
    }
    int ue = vfs_unmount(mnt, kcred);
    kprintf("fsprobe %s: mounted files=%lu dirs=%lu bytes=%lu errors=%d unmount=%d\n",
            disk, p.files, p.dirs, p.bytes, p.errors, -ue);
    if (!ue)
        vn_rmdir(mnt, NULL, kcred);
}

void fsprobe_run(const char *list)
{
    if (!rootdir) {
        kprintf("fsprobe: no root file system to mount on (boot with root=)\n");
        return;
    }
    size_t len;
    for (const char *p = list, *item; (item = option_list_next(&p, &len));) {
        char disk[16];
        if (len >= sizeof(disk))
            continue;
        memcpy(disk, item, len);
        disk[len] = 0;
        probe_disk(disk);
    }
}
