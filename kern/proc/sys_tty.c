/*
 * The terminal ioctls (termios, window size, job control, the
 * pseudo-terminal master's), on the console and on both ends of a pty.
 * The terminals themselves are drivers/tty/tty.c and pty.c; the rules of
 * the controlling terminal are kern/proc/jobctl.c's (ctty_*).
 *
 * On the master, the termios and window-size calls act on its slave's
 * terminal, as Linux's do, without job control (the master's holder is
 * no member of the slave's session).  A change of window size sends
 * SIGWINCH to the foreground group.  The command is 32 bits, as Linux's:
 * musl passes it sign-extended.
 *
 * Locks: none of its own; the terminal's calls take theirs.
 */
#include <kern/proc/proc.h>
#include <kern/proc/syscalls.h>
#include <kern/event/event.h>
#include <kern/vfs/vfs.h>
#include <kern/vm/as.h>
#include <kern/lib/errno.h>
#include <kern/lib/string.h>
#include <drivers/tty/tty.h>
#include <kern/pty/pty.h>

#define TCGETS      0x5401
#define TCSETS      0x5402
#define TCSETSW     0x5403
#define TCSETSF     0x5404
#define TCSBRK      0x5409
#define TCXONC      0x540A
#define TCFLSH      0x540B
#define TIOCEXCL    0x540C
#define TIOCNXCL    0x540D
#define TIOCSCTTY   0x540E
#define TIOCGPGRP   0x540F
#define TIOCSPGRP   0x5410
#define TIOCOUTQ    0x5411
#define TIOCGWINSZ  0x5413
#define TIOCSWINSZ  0x5414
#define FIONREAD    0x541B
#define TIOCNOTTY   0x5422
#define TIOCGSID    0x5429
#define TCIFLUSH    0
#define TCIOFLUSH   2
#define CFLAG       0xbf            /* CS8|CREAD|B38400: what every terminal here says */
#define O_CLOEXEC   0x80000

/* struct termios as the kernel's ioctls take it (36 bytes). */
struct termios_k {
    uint32_t iflag, oflag, cflag, lflag;
    uint8_t line, cc[19];
};

/* The terminal behind vp (*master: vp is a pty's master), or NULL. */
struct tty *vn_tty(struct vnode *vp, bool *master)
{
    *master = pty_is_master(vp);
    return vn_is_console(vp) ? &console_tty : pty_tty_of(vp);
}

static int64_t get_termios(struct tty *t, uint64_t arg)
{
    struct termios_k tio = { .iflag = t->t_iflag, .oflag = t->t_oflag, .cflag = CFLAG,
                             .lflag = tty_lflag(t) };
    static const uint8_t cc[19] = {
        [0] = 0x03, [1] = 0x1c, [2] = 0x7f, [3] = 0x15, [4] = 0x04, [6] = 1, [10] = 0x1a,
    };      /* VINTR ^C, VQUIT ^\, VERASE DEL, VKILL ^U, VEOF ^D, VMIN 1, VSUSP ^Z */
    memcpy(tio.cc, cc, sizeof cc);
    return copyout(&tio, (void *)arg, sizeof tio);
}

static int64_t set_termios(struct tty *t, bool master, uint32_t cmd, uint64_t arg)
{
    struct termios_k tio;
    if (copyin((void *)arg, &tio, sizeof tio))
        return -EFAULT;
    int r = master ? 0 : ctty_job_check(t, SIGTTOU);
    if (r)
        return r;                   /* from the background */
    if (cmd == TCSETSF)
        tty_flush_input(t);
    tty_set_modes(t, tio.iflag, tio.oflag);
    tty_set_lflag(t, tio.lflag);
    return 0;
}

static int64_t set_winsize(struct tty *t, uint64_t arg)
{
    uint16_t ws[4];
    if (copyin((void *)arg, ws, sizeof ws))
        return -EFAULT;
    if (tty_set_winsize(t, ws))
        tty_signal_fg(t, SIGWINCH);
    return 0;
}

/* TIOCGPGRP: the foreground group of the caller's own terminal (the
 * console answers everyone, with the caller's group when it has none). */
static int64_t get_pgrp(struct tty *t, bool master, uint64_t arg)
{
    int pg = tty_fg_pgrp(t);
    if (t == &console_tty && !pg)
        pg = curproc()->p_pgid;
    else if (!master && t != &console_tty && tty_of_session(curproc()->p_sid) != t)
        return -ENOTTY;
    return copyout(&pg, (void *)arg, sizeof pg);
}

static int64_t set_pgrp(struct tty *t, bool master, uint64_t arg)
{
    int pg, r;
    if (copyin((void *)arg, &pg, sizeof pg))
        return -EFAULT;
    if (pg <= 0)
        return -EINVAL;
    if (!master && (r = ctty_job_check(t, SIGTTOU)))
        return r;
    return ctty_set_fg_pgrp(t, pg);
}

/* An int in, through the master's VOP_IOCTL (TIOCSPTLCK, TIOCPKT), or
 * out (TIOCGPTN, FIONREAD). */
static int64_t master_int(struct vnode *vp, uint32_t cmd, uint64_t arg, bool in)
{
    int v = 0;
    if (in && copyin((void *)arg, &v, sizeof v))
        return -EFAULT;
    int r = VOP_IOCTL(vp, cmd, &v, curproc()->p_cred);
    if (!r && !in && copyout(&v, (void *)arg, sizeof v))
        return -EFAULT;
    return r;
}

/* TIOCGPTPEER: the slave opened from its master, a new descriptor. */
static int64_t open_peer(struct vnode *master, uint64_t flags)
{
    if (flags & ~(uint64_t)(O_ACCMODE | O_NOCTTY | O_NONBLOCK | O_CLOEXEC))
        return -EINVAL;
    struct vnode *vp = pty_slave_of(master);
    if (!vp)
        return -ENOMEM;
    int err = VOP_OPEN(&vp, (int)flags, curproc()->p_cred);
    if (err) {
        VN_RELE(vp);
        return err;
    }
    return anon_install(vp, (int)flags, flags & O_CLOEXEC);
}

static int64_t queued_out(struct vnode *vp, struct tty *t, bool master, uint32_t cmd, uint64_t arg)
{
    int n = cmd == TIOCOUTQ ? 0 : (int)tty_queued(t);
    if (cmd == FIONREAD && master)
        return master_int(vp, PTY_FIONREAD, arg, false);
    return copyout(&n, (void *)arg, sizeof n);
}

int64_t tty_ioctl(struct vnode *vp, struct tty *t, bool master, uint32_t cmd, uint64_t arg)
{
    int sid;
    switch (cmd) {
    case TCGETS: return get_termios(t, arg);
    case TCSETS: case TCSETSW: case TCSETSF: return set_termios(t, master, cmd, arg);
    case TCFLSH:
        if (arg > TCIOFLUSH)
            return -EINVAL;
        if (arg == TCIFLUSH || arg == TCIOFLUSH)
            tty_flush_input(t);
        return 0;
    case TCSBRK: case TCXONC: case TIOCEXCL: case TIOCNXCL:
        return 0;                   /* output drains by itself; no breaks, no flow control */
    case TIOCGWINSZ: {
        uint16_t ws[4];
        tty_winsize(t, ws);
        return copyout(ws, (void *)arg, sizeof ws);
    }
    case TIOCSWINSZ: return set_winsize(t, arg);
    case TIOCGPGRP: return get_pgrp(t, master, arg);
    case TIOCSPGRP: return set_pgrp(t, master, arg);
    case TIOCSCTTY: return ctty_acquire(t, arg == 1);
    case TIOCNOTTY: return master ? -ENOTTY : ctty_release(t);
    case TIOCGSID:
        if (!(sid = tty_session(t)))
            return -ENOTTY;
        return copyout(&sid, (void *)arg, sizeof sid);
    case FIONREAD: case TIOCOUTQ: return queued_out(vp, t, master, cmd, arg);
    }
    if (!master)
        return -ENOTTY;
    switch (cmd) {
    case PTY_TIOCGPTN: return master_int(vp, cmd, arg, false);
    case PTY_TIOCSPTLCK: case PTY_TIOCPKT: return master_int(vp, cmd, arg, true);
    case PTY_TIOCGPTPEER: return open_peer(vp, arg);
    default: return -ENOTTY;
    }
}
