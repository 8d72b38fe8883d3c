/*
 * Moving bytes between files without a user buffer: sendfile,
 * copy_file_range, splice, tee and vmsplice.
 *
 * Theory.  Linux moves pipe buffers' pages by reference; Tempest copies
 * through one kernel buffer of SPLICE_CHUNK bytes, which gives the same
 * results with one copy more.  Each call keeps Linux's rules:
 *   - sendfile: the source a regular file, the destination anything
 *     writable but an O_APPEND file (EINVAL).
 *   - copy_file_range: two regular files, no overlap within one file,
 *     the copy stopping at the end of the input.
 *   - splice: one side at least a pipe (EINVAL otherwise), no offset for
 *     a pipe's side (ESPIPE), an offset only for a file that has
 *     positions (EINVAL), no O_APPEND output (EINVAL).  From a file into
 *     a pipe it moves no more than the pipe has room for, waiting for
 *     room; out of a pipe it moves what the pipe holds, waiting for data,
 *     and 0 once the pipe is empty with no writer.  Bytes leave the input
 *     pipe only once written (peek, write, then consume), so a short write
 *     loses nothing.  SPLICE_F_NONBLOCK makes the pipe side's waits
 *     EAGAIN, as in Linux (the pipe's own O_NONBLOCK does not).
 *   - tee: two different pipes; copies what the input holds, up to the
 *     output's room, without consuming it.
 *   - vmsplice: a pipe only (EBADF otherwise); user memory into the pipe
 *     (a write end) or out of it (a read end), as writev and readv; its
 *     waits follow the file's O_NONBLOCK, not SPLICE_F_NONBLOCK.
 *
 * Locks: none of its own.  The files' f_lock is taken around their
 * offsets, as read and write do (kern/proc/sys_fs.c); the pipe helpers
 * take pi_lock (kern/proc/pipe.c); nothing is held across a wait.
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/vm/as.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

#define SENDFILE_CHUNK 16384
#define SPLICE_CHUNK   65536
#define MAX_RW_COUNT   0x7ffff000UL
#define SPLICE_F_NONBLOCK 0x2
#define SPLICE_F_ALL   0xf      /* MOVE, NONBLOCK, MORE, GIFT */
#define UIO_MAXIOV     1024

static struct cred *cr(void) { return curproc()->p_cred; }

/* ---- sendfile ---- */

/* Write n bytes of kbuf to fp at *at (NULL: at its offset, which moves;
 * O_APPEND is refused earlier): bytes written, or -errno when none were. */
static int64_t write_file(struct file *fp, char *kbuf, size_t n, uint64_t *at)
{
    struct vnode *vp = fp->f_vp;
    bool seekable = vp->v_type == VREG && !at;
    uint64_t off = at ? *at : 0;
    if (!at) {
        mutex_enter(&fp->f_lock);
        off = fp->f_offset;
        mutex_exit(&fp->f_lock);
    }
    int64_t room = fsize_room(vp, off, false, n);   /* O_APPEND is refused */
    if (room < 0)
        return room;
    n = (size_t)room;
    struct uio uio = { .uio_base = kbuf, .uio_resid = n, .uio_offset = off };
    int io = vn_is_stream(vp) ? (fp->f_flags & O_NONBLOCK) : 0;
    int err = VOP_WRITE(vp, &uio, io, cr());
    size_t moved = n - uio.uio_resid;
    if (seekable) {
        mutex_enter(&fp->f_lock);
        fp->f_offset = uio.uio_offset;
        mutex_exit(&fp->f_lock);
    }
    if (at)
        *at = uio.uio_offset;
    return moved ? (int64_t)moved : err;
}

/* Copy up to count bytes of in from *pos to out (at *outpos, or its
 * offset when NULL); bytes sent or -errno. */
static int64_t copy_file(struct file *in, struct file *out, uint64_t *pos, uint64_t *outpos,
                         uint64_t count)
{
    char *kbuf = kmalloc(SENDFILE_CHUNK);
    if (!kbuf)
        return -ENOMEM;
    uint64_t done = 0;
    int64_t err = 0;
    while (done < count) {
        size_t n = (size_t)MIN(count - done, (uint64_t)SENDFILE_CHUNK);
        struct uio uio = { .uio_base = kbuf, .uio_resid = n, .uio_offset = *pos };
        err = VOP_READ(in->f_vp, &uio, 0, cr());
        size_t got = n - uio.uio_resid;
        if (err || got == 0)
            break;
        int64_t put = write_file(out, kbuf, got, outpos);
        if (put <= 0) {
            err = put;
            break;
        }
        *pos += (uint64_t)put;
        done += (uint64_t)put;
        if ((size_t)put < got)
            break;
    }
    kfree(kbuf);
    return done ? (int64_t)done : err;
}

/* Linux's order: the in file (EBADF unless readable), the out file
 * (EBADF unless writable), then what the files are (EINVAL: an input
 * that is not a regular file, an O_APPEND output). */
static int64_t do_sendfile(int outfd, int infd, uint64_t *upos, uint64_t count)
{
    struct proc *p = curproc();
    struct file *in = fd_get(p, infd), *out = NULL;
    int64_t r = 0;
    if (!in || !file_readable(in))
        r = -EBADF;
    else if (upos && (int64_t)*upos < 0)
        r = -EINVAL;
    else if (!(out = fd_get(p, outfd)) || !file_writable(out))
        r = -EBADF;
    else if (in->f_vp->v_type != VREG || (out->f_flags & O_APPEND))
        r = -EINVAL;
    if (!r && count) {
        count = MIN(count, MAX_RW_COUNT);
        if (upos) {
            r = copy_file(in, out, upos, NULL, count);
        } else {
            mutex_enter(&in->f_lock);
            uint64_t pos = in->f_offset;
            mutex_exit(&in->f_lock);
            r = copy_file(in, out, &pos, NULL, count);
            mutex_enter(&in->f_lock);
            in->f_offset = pos;
            mutex_exit(&in->f_lock);
        }
    }
    if (in)
        file_rele(in);
    if (out)
        file_rele(out);
    return r;
}

SYSCALL_DECL(sys_sendfile)
{
    if (!a2)
        return do_sendfile((int)a0, (int)a1, NULL, a3);
    uint64_t pos;
    if (copyin((void *)a2, &pos, sizeof pos))
        return -EFAULT;
    int64_t r = do_sendfile((int)a0, (int)a1, &pos, a3);
    if (r >= 0 && copyout(&pos, (void *)a2, sizeof pos))
        return -EFAULT;
    return r;
}

/* ---- copy_file_range ---- */

/* An offset argument: the user's (read in, and back out after), or the
 * file's own (taken under f_lock, put back after). */
struct range_pos {
    uint64_t upos;              /* the user's pointer, or 0 */
    uint64_t pos;
};

static int range_pos_in(struct range_pos *rp, uint64_t upos, struct file *fp)
{
    rp->upos = upos;
    if (upos) {
        if (copyin((void *)upos, &rp->pos, sizeof rp->pos))
            return -EFAULT;
        return (int64_t)rp->pos < 0 ? -EOVERFLOW : 0;     /* as the host's Linux answers */
    }
    mutex_enter(&fp->f_lock);
    rp->pos = fp->f_offset;
    mutex_exit(&fp->f_lock);
    return 0;
}

static int range_pos_out(const struct range_pos *rp, struct file *fp)
{
    if (rp->upos)
        return copyout(&rp->pos, (void *)rp->upos, sizeof rp->pos) ? -EFAULT : 0;
    mutex_enter(&fp->f_lock);
    fp->f_offset = rp->pos;
    mutex_exit(&fp->f_lock);
    return 0;
}

/* Linux's checks (generic_copy_file_checks): flags EINVAL, the files
 * EBADF (readable in, writable out, no O_APPEND), directories EISDIR,
 * anything else but regular files EINVAL, overlapping ranges of one file
 * EINVAL; the copy stops at the end of the input. */
static int64_t copy_range_checks(struct file *in, struct file *out, uint64_t flags)
{
    if (flags)
        return -EINVAL;
    if (!in || !file_readable(in) || !out || !file_writable(out) || (out->f_flags & O_APPEND))
        return -EBADF;
    if (in->f_vp->v_type == VDIR || out->f_vp->v_type == VDIR)
        return -EISDIR;
    if (in->f_vp->v_type != VREG || out->f_vp->v_type != VREG)
        return -EINVAL;
    return 0;
}

SYSCALL_DECL(sys_copy_file_range)
{
    struct proc *p = curproc();
    struct file *in = fd_get(p, (int)a0), *out = fd_get(p, (int)a2);
    uint64_t len = MIN(a4, MAX_RW_COUNT);
    struct range_pos rin, rout;
    int64_t r = copy_range_checks(in, out, a5);
    if (!r)
        r = range_pos_in(&rin, a1, in);
    if (!r)
        r = range_pos_in(&rout, a3, out);
    if (!r && in->f_vp == out->f_vp && rin.pos < rout.pos + len && rout.pos < rin.pos + len)
        r = -EINVAL;
    if (!r && len) {
        struct vattr va;
        r = VOP_GETATTR(in->f_vp, &va, cr());
        len = r || rin.pos >= va.va_size ? 0 : MIN(len, va.va_size - rin.pos);
        if (!r && len)
            r = copy_file(in, out, &rin.pos, &rout.pos, len);
        int e = r >= 0 ? range_pos_out(&rin, in) : 0;
        e = e ? e : r >= 0 ? range_pos_out(&rout, out) : 0;
        r = e ? e : r;
    }
    if (in)
        file_rele(in);
    if (out)
        file_rele(out);
    return r;
}

/* ---- splice, tee, vmsplice ---- */

/* An open file's position for splice: the user's offset (read in,
 * written back after) or the file's own (only a positioned file's moves). */
struct splice_pos {
    uint64_t upos;              /* the user's pointer, or 0 */
    uint64_t pos;
    bool own;                   /* the file's offset, to put back */
};

static bool has_positions(const struct vnode *vp)
{
    return vp->v_type == VREG || vp->v_type == VBLK;
}

static int splice_pos_in(struct splice_pos *sp, uint64_t upos, struct file *fp)
{
    sp->upos = upos;
    sp->own = !upos && has_positions(fp->f_vp);
    sp->pos = 0;
    if (upos) {
        if (!has_positions(fp->f_vp))
            return -EINVAL;
        if (copyin((void *)upos, &sp->pos, sizeof sp->pos))
            return -EFAULT;
        return (int64_t)sp->pos < 0 ? -EINVAL : 0;
    }
    if (sp->own) {
        mutex_enter(&fp->f_lock);
        sp->pos = fp->f_offset;
        mutex_exit(&fp->f_lock);
    }
    return 0;
}

static int splice_pos_out(const struct splice_pos *sp, struct file *fp)
{
    if (sp->upos)
        return copyout(&sp->pos, (void *)sp->upos, sizeof sp->pos) ? -EFAULT : 0;
    if (sp->own) {
        mutex_enter(&fp->f_lock);
        fp->f_offset = sp->pos;
        mutex_exit(&fp->f_lock);
    }
    return 0;
}

/* Read up to n bytes of fp at sp into kbuf (a pipe's with ioflag). */
static int64_t read_at(struct file *fp, char *kbuf, size_t n, struct splice_pos *sp, int ioflag)
{
    struct vnode *vp = fp->f_vp;
    if (vn_is_stream(vp) && !vn_is_pipe(vp))
        ioflag = fp->f_flags & O_NONBLOCK;
    struct uio uio = { .uio_base = kbuf, .uio_resid = n, .uio_offset = sp->pos };
    int err = VOP_READ(vp, &uio, ioflag, cr());
    size_t got = n - uio.uio_resid;
    if (has_positions(vp))
        sp->pos += got;
    return got ? (int64_t)got : err;
}

/* Take n bytes, already copied by pipe_peek, off the front of pipe vp. */
static void pipe_consume(struct vnode *vp, char *kbuf, size_t n)
{
    struct uio uio = { .uio_base = kbuf, .uio_resid = n };
    VOP_READ(vp, &uio, O_NONBLOCK, cr());
}

/* Out of pipe in into out (a pipe or a file at sp): peek, write, consume. */
static int64_t splice_from_pipe(struct file *in, struct file *out, struct splice_pos *sp,
                                size_t len, bool nonblock, char *kbuf)
{
    size_t n = MIN(len, (size_t)SPLICE_CHUNK);
    if (vn_is_pipe(out->f_vp)) {
        int64_t room = pipe_wait_room(out->f_vp, nonblock);
        if (room <= 0)
            return room;
        n = MIN(n, (size_t)room);
    }
    int64_t got = pipe_peek(in->f_vp, kbuf, n, nonblock);
    if (got <= 0)
        return got;
    int64_t put = write_file(out, kbuf, (size_t)got, has_positions(out->f_vp) ? &sp->pos : NULL);
    if (put > 0)
        pipe_consume(in->f_vp, kbuf, (size_t)put);
    return put;
}

/* From file in (at sp) into pipe out, no more than it has room for. */
static int64_t splice_to_pipe(struct file *in, struct file *out, struct splice_pos *sp,
                              size_t len, bool nonblock, char *kbuf)
{
    int64_t room = pipe_wait_room(out->f_vp, nonblock);
    if (room <= 0)
        return room;
    int64_t got = read_at(in, kbuf, MIN(MIN(len, (size_t)SPLICE_CHUNK), (size_t)room), sp, 0);
    if (got <= 0)
        return got;
    return write_file(out, kbuf, (size_t)got, NULL);
}

/* Linux's checks in do_splice's order; then one move. */
static int64_t do_splice(struct file *in, uint64_t uoffin, struct file *out, uint64_t uoffout,
                         size_t len, uint64_t flags)
{
    if (!file_readable(in) || !file_writable(out))
        return -EBADF;
    bool ipipe = vn_is_pipe(in->f_vp), opipe = vn_is_pipe(out->f_vp);
    if ((ipipe && uoffin) || (opipe && uoffout))
        return -ESPIPE;
    if (!ipipe && !opipe)
        return -EINVAL;
    if (ipipe && opipe && in->f_vp == out->f_vp)
        return -EINVAL;
    if (!opipe && (out->f_flags & O_APPEND))
        return -EINVAL;
    struct splice_pos pin = { 0 }, pout = { 0 };
    int64_t r = ipipe ? 0 : splice_pos_in(&pin, uoffin, in);
    if (!r && !opipe)
        r = splice_pos_in(&pout, uoffout, out);
    char *kbuf = r ? NULL : kmalloc(SPLICE_CHUNK);
    if (!r && !kbuf)
        r = -ENOMEM;
    if (r)
        return r;
    bool nonblock = flags & SPLICE_F_NONBLOCK;
    r = ipipe ? splice_from_pipe(in, out, &pout, len, nonblock, kbuf)
              : splice_to_pipe(in, out, &pin, len, nonblock, kbuf);
    kfree(kbuf);
    int e = r >= 0 && !ipipe ? splice_pos_out(&pin, in) : 0;
    if (!e && r >= 0 && !opipe)
        e = splice_pos_out(&pout, out);
    return e ? e : r;
}

SYSCALL_DECL(sys_splice)
{
    size_t len = (size_t)MIN(a4, MAX_RW_COUNT);
    if (len == 0)
        return 0;
    unsigned flags = (unsigned)a5;      /* an unsigned int, as each flags word below */
    if (flags & ~(unsigned)SPLICE_F_ALL)
        return -EINVAL;
    struct proc *p = curproc();
    struct file *in = fd_get(p, (int)a0), *out = in ? fd_get(p, (int)a2) : NULL;
    int64_t r = in && out ? do_splice(in, a1, out, a3, len, flags) : -EBADF;
    if (in)
        file_rele(in);
    if (out)
        file_rele(out);
    return r;
}

static int64_t do_tee(struct file *in, struct file *out, size_t len, bool nonblock)
{
    if (!file_readable(in) || !file_writable(out))
        return -EBADF;
    if (!vn_is_pipe(in->f_vp) || !vn_is_pipe(out->f_vp) || in->f_vp == out->f_vp)
        return -EINVAL;
    char *kbuf = kmalloc(SPLICE_CHUNK);
    if (!kbuf)
        return -ENOMEM;
    int64_t r = pipe_peek(in->f_vp, kbuf, MIN(len, (size_t)SPLICE_CHUNK), nonblock);
    if (r > 0) {
        int64_t room = pipe_wait_room(out->f_vp, nonblock);
        r = room <= 0 ? room : write_file(out, kbuf, MIN((size_t)r, (size_t)room), NULL);
    }
    kfree(kbuf);
    return r;
}

SYSCALL_DECL(sys_tee)
{
    if ((unsigned)a3 & ~(unsigned)SPLICE_F_ALL)
        return -EINVAL;
    size_t len = (size_t)MIN(a2, MAX_RW_COUNT);
    if (len == 0)
        return 0;
    struct proc *p = curproc();
    struct file *in = fd_get(p, (int)a0), *out = in ? fd_get(p, (int)a1) : NULL;
    int64_t r = in && out ? do_tee(in, out, len, (unsigned)a3 & SPLICE_F_NONBLOCK) : -EBADF;
    if (in)
        file_rele(in);
    if (out)
        file_rele(out);
    return r;
}

/* vmsplice: writev into a pipe's write end, readv out of its read end
 * (Linux's direction rule: the file's access mode), by the same calls. */
SYSCALL_DECL(sys_vmsplice)
{
    if ((unsigned)a3 & ~(unsigned)SPLICE_F_ALL)
        return -EINVAL;
    struct file *fp = fd_get(curproc(), (int)a0);
    if (!fp)
        return -EBADF;
    bool pipe = vn_is_pipe(fp->f_vp), write = file_writable(fp);
    file_rele(fp);
    if (!pipe)
        return -EBADF;
    if (a2 > UIO_MAXIOV)
        return -EINVAL;
    if (a2 == 0)
        return 0;
    return write ? sys_writev(a0, a1, a2, 0, 0, 0) : sys_readv(a0, a1, a2, 0, 0, 0);
}
