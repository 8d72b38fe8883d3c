/*
 * Pseudo-terminals: /dev/ptmx and the devpts file system (/dev/pts).
 *
 * Theory.  A pseudo-terminal is a pair: the slave, a terminal like the
 * console (struct tty, with the same line discipline and job control:
 * drivers/tty/tty.c), and the master, the program that plays keyboard and
 * screen for it (script, tmux, sshd, Python's pty module).  Opening
 * /dev/ptmx (5:2, a devfs node whose open clones: pty_open_master) makes a
 * new pair, numbered from 0 up, and gives the opener its master, a vnode
 * of its own.  The slave is /dev/pts/N on devpts (136:N, mode 0620, owned
 * by the master's opener, group tty), locked until the master says
 * TIOCSPTLCK 0 (unlockpt); TIOCGPTN tells N (ptsname), TIOCGPTPEER opens
 * the slave from the master without a path.
 *
 * Bytes written to the master are typed at the slave: they go through
 * its line discipline (echo, editing, ^C to the foreground group) and a
 * read of the slave gets them as a terminal's read does.  What the slave
 * writes, and the echo, is its screen: with OPOST and ONLCR (the default)
 * each newline becomes CR NL, and it waits in the pair's output buffer
 * (p_out, PTY_OUT bytes) for a read of the master; a slave writer waits
 * while the buffer is full.  In packet mode (TIOCPKT) each read of the
 * master starts with a status byte, 0 for data.  A session leader that
 * opens the slave without O_NOCTTY, and has no terminal, gets it as its
 * controlling terminal, as on Linux; TIOCSCTTY does so explicitly.
 *
 * The ends.  When the master's last open file closes, the slave hangs
 * up: its readers see end of file, its writers EIO, and its session's
 * foreground group gets SIGHUP as the session loses the terminal.  When
 * the slave's last open file closes, a read of the master returns EIO
 * (once the slave was open), as Linux's.  A pair is freed when neither
 * end has a vnode left; its number is then free again.
 *
 * Layers.  Unlike the console's driver (drivers/tty), this one is a file
 * system too and calls the process layer (an interruptible sleep, the
 * pollers' wakeup, a session taking its terminal at open), so it sits
 * with it (docs/architecture.md); devfs, below, reaches /dev/ptmx's open
 * through the hooks pty_init registers (devfs_set_pty_hooks).
 *
 * Locks.  pty_lock (a sleep mutex, class "pty") guards the table of pairs
 * and each pair's open counts and vnodes ([P] below); the output buffer
 * and the packet and lock flags are under the slave's t_lock ([t], a spin
 * lock: the line discipline's echo writes the buffer with it held), and a
 * writer or reader waiting for the buffer sleeps on it with the
 * sleep-queue protocol tty.c uses.  Order: pty_lock, then t_lock.
 */
#include <drivers/tty/tty.h>
#include <drivers/platform/rtc.h>
#include <kern/pty/pty.h>
#include <kern/proc/proc.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/vnode.h>
#include <kern/vfs/cred.h>
#include <kern/vm/kmem.h>
#include <kern/lock/mutex.h>
#include <kern/lock/sleep.h>
#include <kern/lib/errno.h>
#include <kern/lib/string.h>
#include <kern/lib/kprintf.h>

#define PTY_MAX         64          /* pairs at once (Linux's default limit is 4096) */
#define PTY_OUT         4096        /* the slave's screen: bytes the master has not read */
#define PTY_SLAVE_MAJOR 136
#define TTY_GID         5           /* Debian's group tty */
#define DEVPTS_MAGIC    0x1cd1
#define TIOCPKT_DATA    0

LOCK_CLASS(pty_class, "pty", LK_MUTEX_SLEEP);

struct pty {
    int p_index;                    /* [c] N of /dev/pts/N */
    int64_t p_made;                 /* [c] the wall clock at the ptmx open, seconds:
                                     * both ends' times, as on Linux */
    struct tty p_tty;               /* the slave's terminal */
    struct vnode p_master;          /* [c] the master's vnode (made at the ptmx open) */
    struct vnode *p_slave;          /* [P] the slave's vnode, made at its first lookup */
    bool p_master_alive;            /* [P] the master vnode is not yet inactive */
    int p_master_opens;             /* [P] open files of the master */
    int p_slave_opens;              /* [P] open files of the slave */
    bool p_slave_was_open;          /* [P] (a master read is EIO only after) */
    uint32_t p_uid, p_gid, p_mode;  /* [P] the slave's owner and permission bits */
    char p_out[PTY_OUT];            /* [t] the slave's output for the master */
    size_t p_ohead, p_ocount;       /* [t] */
    bool p_locked;                  /* [t] TIOCSPTLCK: the slave cannot be opened */
    bool p_packet;                  /* [t] TIOCPKT */
};

static struct mutex pty_lock;
static struct pty *ptys[PTY_MAX];   /* [P] by number */
static struct vfs *devpts_vfs;      /* [P] the devpts mount (one at a time) */
static struct vnode devpts_root;    /* [c] its root directory */
static int64_t devpts_mounted;      /* [P] the wall clock at its mount: the root's times */
static const struct vnodeops master_ops, slave_ops, devpts_root_ops;

/* File times come from the wall clock (drivers/platform/rtc.c). */
static int64_t wall_seconds(void)
{
    return (int64_t)(realtime_ns() / 1000000000ull);
}

static struct pty *VTOPTY(struct vnode *vp)
{
    return vp->v_data;
}

bool pty_is_master(const struct vnode *vp)
{
    return vp->v_op == &master_ops;
}

struct tty *pty_tty_of(const struct vnode *vp)
{
    if (vp->v_op != &master_ops && vp->v_op != &slave_ops)
        return NULL;
    return &((struct pty *)vp->v_data)->p_tty;
}

/* ---- the slave's screen: the output buffer ---- */

static void out_put(struct pty *p, char c)
{
    if (p->p_ocount < PTY_OUT) {
        p->p_out[(p->p_ohead + p->p_ocount) % PTY_OUT] = c;
        p->p_ocount++;
    }
}

/* Output processing [t]: NL to CR NL with OPOST and ONLCR. */
static void out_bytes(struct pty *p, const char *s, size_t n)
{
    bool onlcr = (p->p_tty.t_oflag & (TTY_OPOST | TTY_ONLCR)) == (TTY_OPOST | TTY_ONLCR);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n' && onlcr)
            out_put(p, '\r');
        out_put(p, s[i]);
    }
}

static void master_readable(struct pty *p)
{
    wakeup(&p->p_ocount);
    vn_poll_notify(&p->p_master, POLL_READSIDE);
}

/* The line discipline's echo [t]. */
static void pty_echo(struct tty *t, const char *s, size_t n)
{
    out_bytes(t->t_owner, s, n);
}

/* The slave's input became readable. */
static void pty_slave_readable(struct tty *t)
{
    struct pty *p = t->t_owner;
    if (p->p_slave)
        vn_poll_notify(p->p_slave, POLL_READSIDE);
    master_readable(p);             /* its echo, if any */
}

/* ---- making and freeing pairs ---- */

static struct pty *pty_alloc(struct vfs *vfsp, struct cred *cr)
{
    struct pty *p = kzalloc(sizeof *p);
    if (!p)
        return NULL;
    mutex_enter(&pty_lock);
    int n = 0;
    while (n < PTY_MAX && ptys[n])
        n++;
    if (n == PTY_MAX) {
        mutex_exit(&pty_lock);
        kfree(p);
        return NULL;
    }
    p->p_index = n;
    p->p_made = wall_seconds();
    p->p_uid = cr->cr_ruid;
    p->p_gid = TTY_GID;
    p->p_mode = 0620;
    p->p_locked = true;             /* until unlockpt */
    p->p_master_alive = true;
    p->p_master_opens = 1;
    tty_setup(&p->p_tty, pty_echo, pty_slave_readable, vn_makedev(PTY_SLAVE_MAJOR, (uint32_t)n), p);
    vn_init(&p->p_master, &master_ops, VCHR, vfsp, p);
    p->p_master.v_rdev = vn_makedev(5, 2);
    p->p_master.v_flag |= VNOSEEK | VPOLLNOTIFY | VDEVICE;
    ptys[n] = p;
    mutex_exit(&pty_lock);
    return p;
}

/* Free p when neither end has a vnode left.  Under pty_lock. */
static void pty_maybe_free(struct pty *p)
{
    if (p->p_master_alive || p->p_slave)
        return;
    ptys[p->p_index] = NULL;
    tty_remove(&p->p_tty);
    vn_destroy(&p->p_master);
    kfree(p);
}

int pty_open_master(struct vnode **vpp, int flags, struct cred *cr)
{
    if (!devpts_vfs)
        return -ENODEV;             /* no devpts: the slave could not be named */
    struct pty *p = pty_alloc((*vpp)->v_vfsp, cr);
    if (!p)
        return -ENOSPC;
    VN_RELE(*vpp);                  /* /dev/ptmx itself: a devfs node, never inactive here */
    *vpp = &p->p_master;
    return 0;
}

/* ---- the master ---- */

static int master_open(struct vnode **vpp, int flags, struct cred *cr)
{
    struct pty *p = VTOPTY(*vpp);
    mutex_enter(&pty_lock);
    p->p_master_opens++;            /* again, through /proc/PID/fd/N */
    mutex_exit(&pty_lock);
    return 0;
}

/* One open file of an end closed (*opens its count): was it the last? */
static bool last_close(int *opens)
{
    mutex_enter(&pty_lock);
    bool last = --*opens == 0;
    mutex_exit(&pty_lock);
    return last;
}

/* The master's last close hangs the slave up (see the theory). */
static int master_close(struct vnode *vp, int flags, struct cred *cr)
{
    struct pty *p = VTOPTY(vp);
    if (last_close(&p->p_master_opens)) {
        int sid = tty_session(&p->p_tty);
        tty_hangup(&p->p_tty);
        wakeup(&p->p_ocount);       /* a slave writer waiting for room */
        if (p->p_slave)
            vn_poll_notify(p->p_slave, POLL_BOTHSIDES);
        if (sid) {
            tty_signal_fg(&p->p_tty, SIGHUP);
            tty_detach_session(&p->p_tty, sid);
        }
    }
    return 0;
}

static bool slave_gone(struct pty *p)
{
    return p->p_slave_was_open && __atomic_load_n(&p->p_slave_opens, __ATOMIC_ACQUIRE) == 0;
}

/* Take up to n bytes of the slave's output [t]; in packet mode the first
 * is the status byte. */
static size_t out_take(struct pty *p, char *buf, size_t n)
{
    size_t k = 0;
    if (p->p_packet && n > 0)
        buf[k++] = TIOCPKT_DATA;
    while (k < n && p->p_ocount) {
        buf[k++] = p->p_out[p->p_ohead];
        p->p_ohead = (p->p_ohead + 1) % PTY_OUT;
        p->p_ocount--;
    }
    return k;
}

static int master_read(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    struct pty *p = VTOPTY(vp);
    struct tty *t = &p->p_tty;
    const void *chan = &p->p_ocount;
    for (;;) {
        struct sleepq *sq = sleepq_lock(chan);
        spin_lock(&t->t_lock);
        size_t k = p->p_ocount ? out_take(p, uio->uio_base, uio->uio_resid) : 0;
        spin_unlock(&t->t_lock);
        if (k || !uio->uio_resid) {
            sleepq_unlock(sq);
            uio->uio_base = (char *)uio->uio_base + k;
            uio->uio_resid -= k;
            wakeup(chan);           /* a slave writer waiting for room */
            if (p->p_slave)
                vn_poll_notify(p->p_slave, POLL_WRITESIDE);
            return 0;
        }
        if (slave_gone(p)) {
            sleepq_unlock(sq);
            return -EIO;
        }
        if (ioflag & O_NONBLOCK) {
            sleepq_unlock(sq);
            return -EAGAIN;
        }
        int err = sig_sleep_locked(sq, chan);
        if (err)
            return err;
    }
}

/* Bytes typed at the slave: its line discipline's input; a signal it
 * asks for goes to the slave's foreground group. */
static int master_write(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    struct pty *p = VTOPTY(vp);
    const char *s = uio->uio_base;
    for (size_t i = 0; i < uio->uio_resid; i++)
        tty_signal_fg(&p->p_tty, tty_input(&p->p_tty, s[i]));
    uio->uio_base = (char *)uio->uio_base + uio->uio_resid;
    uio->uio_resid = 0;
    if (__atomic_load_n(&p->p_ocount, __ATOMIC_ACQUIRE))
        master_readable(p);         /* the echo */
    return 0;
}

static short master_poll(struct vnode *vp, short events, int fflags)
{
    struct pty *p = VTOPTY(vp);
    short r = (short)(events & (POLLOUT | POLLWRNORM));
    if (__atomic_load_n(&p->p_ocount, __ATOMIC_ACQUIRE))
        r |= (short)(events & (POLLIN | POLLRDNORM));
    if (slave_gone(p))
        r |= POLLHUP | (short)(events & (POLLIN | POLLRDNORM));
    return r;
}

/* ioctls of the master alone: TIOCGPTN, TIOCSPTLCK, TIOCPKT, FIONREAD;
 * arg is a kernel int.  The terminal's own come through the slave's tty
 * (kern/proc/sys_fd.c). */
static int master_ioctl(struct vnode *vp, unsigned long cmd, void *arg, struct cred *cr)
{
    struct pty *p = VTOPTY(vp);
    int *v = arg;
    switch (cmd) {
    case PTY_TIOCGPTN:
        *v = p->p_index;
        return 0;
    case PTY_TIOCSPTLCK:
        spin_lock(&p->p_tty.t_lock);
        p->p_locked = *v != 0;
        spin_unlock(&p->p_tty.t_lock);
        return 0;
    case PTY_TIOCPKT:
        spin_lock(&p->p_tty.t_lock);
        p->p_packet = *v != 0;
        spin_unlock(&p->p_tty.t_lock);
        return 0;
    case PTY_FIONREAD:
        *v = (int)__atomic_load_n(&p->p_ocount, __ATOMIC_ACQUIRE);
        return 0;
    default:
        return -ENOTTY;
    }
}

static int master_getattr(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    memset(va, 0, sizeof *va);
    va->va_type = VCHR;
    va->va_mode = S_IFCHR | 0666;
    va->va_nlink = 1;
    va->va_rdev = vp->v_rdev;
    va->va_blksize = 1024;
    va->va_fsid = vp->v_vfsp ? vp->v_vfsp->vfs_fsid : 0;
    va->va_ino = 2;                 /* /dev/ptmx's, as Linux shows every master */
    va->va_atime = va->va_mtime = va->va_ctime = VTOPTY(vp)->p_made;
    return 0;
}

static void master_inactive(struct vnode *vp, struct cred *cr)
{
    struct pty *p = VTOPTY(vp);
    mutex_enter(&pty_lock);
    p->p_master_alive = false;
    pty_maybe_free(p);
    mutex_exit(&pty_lock);
}

static void master_fdname(struct vnode *vp, char *buf, size_t len)
{
    strlcpy(buf, "/dev/ptmx", len);
}

/* ---- the slave ---- */

/* Opening the slave: refused while locked or after the master went (EIO,
 * as Linux's); a session leader without a terminal takes it unless
 * O_NOCTTY. */
static int slave_open(struct vnode **vpp, int flags, struct cred *cr)
{
    struct pty *p = VTOPTY(*vpp);
    mutex_enter(&pty_lock);
    int err = p->p_locked || !p->p_master_opens ? -EIO : 0;
    if (!err) {
        p->p_slave_opens++;
        p->p_slave_was_open = true;
    }
    mutex_exit(&pty_lock);
    if (!err && !(flags & O_NOCTTY))
        ctty_open_acquire(&p->p_tty);
    return err;
}

static int slave_close(struct vnode *vp, int flags, struct cred *cr)
{
    struct pty *p = VTOPTY(vp);
    if (last_close(&p->p_slave_opens)) {
        wakeup(&p->p_ocount);       /* a master reader: EIO now */
        vn_poll_notify(&p->p_master, POLL_BOTHSIDES);
    }
    return 0;
}

static int slave_read(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    long n = tty_read(&VTOPTY(vp)->p_tty, uio->uio_base, uio->uio_resid, ioflag & O_NONBLOCK);
    if (n < 0)
        return (int)n;
    uio->uio_base = (char *)uio->uio_base + n;
    uio->uio_resid -= (size_t)n;
    return 0;
}

/* The slave's screen: into the output buffer, waiting for room (a
 * newline takes two bytes with ONLCR). */
static int slave_write(struct vnode *vp, struct uio *uio, int ioflag, struct cred *cr)
{
    struct pty *p = VTOPTY(vp);
    struct tty *t = &p->p_tty;
    const void *chan = &p->p_ocount;
    const char *s = uio->uio_base;
    size_t done = 0;
    int err = 0;
    while (done < uio->uio_resid && !err) {
        struct sleepq *sq = sleepq_lock(chan);
        if (__atomic_load_n(&t->t_hungup, __ATOMIC_ACQUIRE)) {
            sleepq_unlock(sq);
            err = -EIO;             /* nobody reads the screen any more */
            break;
        }
        spin_lock(&t->t_lock);
        size_t before = done;
        while (done < uio->uio_resid && p->p_ocount + 2 <= PTY_OUT)
            out_bytes(p, &s[done++], 1);
        spin_unlock(&t->t_lock);
        if (done > before) {
            sleepq_unlock(sq);
            master_readable(p);
        } else if (ioflag & O_NONBLOCK) {
            sleepq_unlock(sq);
            err = -EAGAIN;
        } else {
            err = sig_sleep_locked(sq, chan);
        }
    }
    uio->uio_base = (char *)uio->uio_base + done;
    uio->uio_resid -= done;
    return done ? 0 : err;
}

static short slave_poll(struct vnode *vp, short events, int fflags)
{
    struct pty *p = VTOPTY(vp);
    short r = 0;
    if (tty_readable(&p->p_tty))
        r |= (short)(events & (POLLIN | POLLRDNORM));
    if (__atomic_load_n(&p->p_ocount, __ATOMIC_ACQUIRE) + 2 <= PTY_OUT)
        r |= (short)(events & (POLLOUT | POLLWRNORM));
    if (__atomic_load_n(&p->p_tty.t_hungup, __ATOMIC_ACQUIRE))
        r |= POLLHUP;
    return r;
}

static int slave_ioctl(struct vnode *vp, unsigned long cmd, void *arg, struct cred *cr)
{
    if (cmd != PTY_FIONREAD)
        return -ENOTTY;
    struct tty *t = &VTOPTY(vp)->p_tty;
    spin_lock(&t->t_lock);
    *(int *)arg = (int)t->t_qcount;
    spin_unlock(&t->t_lock);
    return 0;
}

static int slave_getattr(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    struct pty *p = VTOPTY(vp);
    memset(va, 0, sizeof *va);
    va->va_type = VCHR;
    mutex_enter(&pty_lock);
    va->va_mode = S_IFCHR | p->p_mode;
    va->va_uid = p->p_uid;
    va->va_gid = p->p_gid;
    mutex_exit(&pty_lock);
    va->va_nlink = 1;
    va->va_rdev = vp->v_rdev;
    va->va_blksize = 1024;
    va->va_fsid = vp->v_vfsp->vfs_fsid;
    va->va_ino = (uint64_t)p->p_index + 3;
    va->va_atime = va->va_mtime = va->va_ctime = p->p_made;
    return 0;
}

/* chmod and chown, by the owner or root (grantpt's work, were it needed). */
static int slave_setattr(struct vnode *vp, const struct vattr *va, struct cred *cr)
{
    struct pty *p = VTOPTY(vp);
    if (va->va_mask & (AT_SIZE | AT_ATIME | AT_MTIME | AT_CTIME))
        return 0;
    mutex_enter(&pty_lock);
    int err = vn_set_owner_mode(va, cr, &p->p_mode, &p->p_uid, &p->p_gid);
    mutex_exit(&pty_lock);
    return err;
}

static int slave_access(struct vnode *vp, int mode, struct cred *cr)
{
    struct vattr va;
    slave_getattr(vp, &va, cr);
    return vn_access_check(va.va_mode, va.va_uid, va.va_gid, mode, cr);
}

static void slave_fdname(struct vnode *vp, char *buf, size_t len)
{
    snprintf(buf, len, "/dev/pts/%d", VTOPTY(vp)->p_index);
}

static void slave_inactive(struct vnode *vp, struct cred *cr)
{
    struct pty *p = VTOPTY(vp);
    mutex_enter(&pty_lock);
    if (__atomic_load_n(&vp->v_count, __ATOMIC_ACQUIRE) == 0) {
        p->p_slave = NULL;
        vn_destroy(vp);
        kfree(vp);
        pty_maybe_free(p);
    }
    mutex_exit(&pty_lock);
}

/* The slave's vnode (held), made at its first use.  Under pty_lock. */
static struct vnode *slave_vnode_locked(struct pty *p)
{
    if (!p->p_slave) {
        struct vnode *vp = kzalloc(sizeof *vp);
        if (!vp)
            return NULL;
        vn_init(vp, &slave_ops, VCHR, devpts_vfs, p);
        vp->v_rdev = p->p_tty.t_rdev;
        vp->v_flag |= VNOSEEK | VPOLLNOTIFY | VDEVICE;
        p->p_slave = vp;
        return vp;                  /* vn_init's reference is the caller's */
    }
    VN_HOLD(p->p_slave);
    return p->p_slave;
}

struct vnode *pty_slave_of(struct vnode *master)
{
    struct pty *p = VTOPTY(master);
    mutex_enter(&pty_lock);
    struct vnode *vp = devpts_vfs ? slave_vnode_locked(p) : NULL;
    mutex_exit(&pty_lock);
    return vp;
}

struct vnode *pty_slave_of_tty(struct tty *t)
{
    return t->t_owner ? pty_slave_of(&((struct pty *)t->t_owner)->p_master) : NULL;
}

/* ---- devpts: the slaves by number ---- */

static int parse_index(const char *name)
{
    int n = 0;
    if (!name[0] || (name[0] == '0' && name[1]))
        return -1;
    for (const char *c = name; *c; c++) {
        if (*c < '0' || *c > '9' || n >= PTY_MAX)
            return -1;
        n = n * 10 + (*c - '0');
    }
    return n < PTY_MAX ? n : -1;
}

static int devpts_lookup(struct vnode *dvp, const char *name, struct vnode **vpp,
                         struct cred *cr)
{
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
        VN_HOLD(dvp);
        *vpp = dvp;
        return 0;
    }
    int n = parse_index(name);
    mutex_enter(&pty_lock);
    struct pty *p = n >= 0 ? ptys[n] : NULL;
    struct vnode *vp = p && p->p_master_opens ? slave_vnode_locked(p) : NULL;
    mutex_exit(&pty_lock);
    if (!vp)
        return p && p->p_master_opens ? -ENOMEM : -ENOENT;
    *vpp = vp;
    return 0;
}

/* Entries: ".", "..", then each pair whose master is open, by number; the
 * offset is 2 + the number. */
static int devpts_readdir(struct vnode *vp, struct uio *uio, struct cred *cr, bool *eofp)
{
    bool all = true;
    for (uint64_t i = uio->uio_offset; all && i < 2 + PTY_MAX; i++) {
        char name[8];
        if (i < 2) {
            all = vfs_put_dirent(uio, 1, (int64_t)i + 1, DT_DIR, i ? ".." : ".", i + 1);
        } else {
            mutex_enter(&pty_lock);
            bool live = ptys[i - 2] && ptys[i - 2]->p_master_opens;
            mutex_exit(&pty_lock);
            if (!live)
                continue;
            snprintf(name, sizeof name, "%d", (int)(i - 2));
            all = vfs_put_dirent(uio, i + 1, (int64_t)i + 1, DT_CHR, name, strlen(name));
        }
        if (all)
            uio->uio_offset = i + 1;
    }
    if (all)
        uio->uio_offset = 2 + PTY_MAX;
    if (eofp)
        *eofp = all;
    return 0;
}

static int devpts_getattr(struct vnode *vp, struct vattr *va, struct cred *cr)
{
    memset(va, 0, sizeof *va);
    va->va_type = VDIR;
    va->va_mode = S_IFDIR | 0755;
    va->va_nlink = 2;
    va->va_ino = 1;
    va->va_blksize = 1024;
    va->va_fsid = vp->v_vfsp ? vp->v_vfsp->vfs_fsid : 0;
    mutex_enter(&pty_lock);
    va->va_atime = va->va_mtime = va->va_ctime = devpts_mounted;
    mutex_exit(&pty_lock);
    return 0;
}

static int devpts_access(struct vnode *vp, int mode, struct cred *cr)
{
    return vn_access_check(S_IFDIR | 0755, 0, 0, mode, cr);
}

static int devpts_mount(struct vfs *vfsp, struct cred *cr)
{
    mutex_enter(&pty_lock);
    int err = devpts_vfs ? -EBUSY : 0;      /* one instance, as Linux's default */
    if (!err) {
        devpts_vfs = vfsp;
        devpts_mounted = wall_seconds();
        vn_init(&devpts_root, &devpts_root_ops, VDIR, vfsp, NULL);
        vfsp->vfs_bsize = 1024;
    }
    mutex_exit(&pty_lock);
    return err;
}

static int devpts_unmount(struct vfs *vfsp, struct cred *cr)
{
    mutex_enter(&pty_lock);
    int err = 0;
    for (int i = 0; i < PTY_MAX && !err; i++)
        if (ptys[i] && ptys[i]->p_slave)
            err = -EBUSY;
    if (!err && __atomic_load_n(&devpts_root.v_count, __ATOMIC_ACQUIRE) > 1)
        err = -EBUSY;
    if (!err)
        devpts_vfs = NULL;
    mutex_exit(&pty_lock);
    return err;
}

static int devpts_root_vnode(struct vfs *vfsp, struct vnode **vpp)
{
    VN_HOLD(&devpts_root);
    *vpp = &devpts_root;
    return 0;
}

static int devpts_statfs(struct vfs *vfsp, struct kstatfs *sb)
{
    memset(sb, 0, sizeof *sb);
    sb->f_type = DEVPTS_MAGIC;
    sb->f_bsize = 1024;
    sb->f_namelen = 255;
    sb->f_fsid = vfsp->vfs_fsid;
    return 0;
}

static int devpts_sync(struct vfs *vfsp, struct cred *cr)
{
    return 0;
}

static int pty_eperm(void) { return -EPERM; }
static int pty_einval(void) { return -EINVAL; }
static int pty_ok(void) { return 0; }

static int pty_create(struct vnode *dvp, const char *name, const struct vattr *va, bool excl,
                      struct vnode **vpp, struct cred *cr)
{
    int err = devpts_lookup(dvp, name, vpp, cr);
    if (!err && excl) {
        VN_RELE(*vpp);
        return -EEXIST;
    }
    return err == -ENOENT ? -EPERM : err;
}

/* What a terminal end is not: a directory, a link, a file with a size. */
#define PTY_FILE_NOTS \
    VNODEOPS_NOT_A_DIRECTORY, .vop_readlink = (void *)pty_einval, \
    .vop_fsync = (void *)pty_ok, .vop_truncate = (void *)pty_einval

static const struct vnodeops master_ops = {
    .vop_open = master_open,
    .vop_close = master_close,
    .vop_read = master_read,
    .vop_write = master_write,
    .vop_ioctl = master_ioctl,
    .vop_getattr = master_getattr,
    .vop_setattr = (void *)pty_eperm,
    .vop_access = (void *)pty_ok,
    PTY_FILE_NOTS,
    .vop_inactive = master_inactive,
    .vop_poll = master_poll,
    .vop_fdname = master_fdname,
};

static const struct vnodeops slave_ops = {
    .vop_open = slave_open,
    .vop_close = slave_close,
    .vop_read = slave_read,
    .vop_write = slave_write,
    .vop_ioctl = slave_ioctl,
    .vop_getattr = slave_getattr,
    .vop_setattr = slave_setattr,
    .vop_access = slave_access,
    PTY_FILE_NOTS,
    .vop_inactive = slave_inactive,
    .vop_poll = slave_poll,
    .vop_fdname = slave_fdname,
};

/* The directory's names are the pairs': nothing is made or taken here. */
static const struct vnodeops devpts_root_ops = {
    .vop_open = (void *)pty_ok,
    .vop_close = (void *)pty_ok,
    .vop_read = (void *)pty_einval,
    .vop_write = (void *)pty_einval,
    .vop_ioctl = (void *)pty_einval,
    .vop_getattr = devpts_getattr,
    .vop_setattr = (void *)pty_eperm,
    .vop_access = devpts_access,
    .vop_lookup = devpts_lookup,
    .vop_create = pty_create,
    .vop_remove = (void *)pty_eperm,
    .vop_link = (void *)pty_eperm,
    .vop_rename = (void *)pty_eperm,
    .vop_mkdir = (void *)pty_eperm,
    .vop_rmdir = (void *)pty_eperm,
    .vop_readdir = devpts_readdir,
    .vop_symlink = (void *)pty_eperm,
    .vop_readlink = (void *)pty_einval,
    .vop_fsync = (void *)pty_ok,
    .vop_truncate = (void *)pty_einval,
    .vop_inactive = (void *)pty_ok,
};

static const struct vfsops devpts_vfsops = {
    .vfs_mount = devpts_mount,
    .vfs_unmount = devpts_unmount,
    .vfs_root = devpts_root_vnode,
    .vfs_statfs = devpts_statfs,
    .vfs_sync = devpts_sync,
};

static const struct vfssw devpts_vfssw = { .name = "devpts", .ops = &devpts_vfsops,
                                           .needs_dev = false, .nommap = true };

void pty_init(void)
{
    static const struct devfs_pty_hooks hooks = {
        .open_master = pty_open_master,
        .slave_of = pty_slave_of_tty,
    };
    mutex_init(&pty_lock, &pty_class, 0, "pty");
    devfs_set_pty_hooks(&hooks);
    if (vfs_register_type(&devpts_vfssw))
        kprintf("pty: cannot register devpts\n");
}
