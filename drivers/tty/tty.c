/*
 * Terminals: the line discipline each terminal has (struct tty), the
 * console's (COM1), and the terminal's side of job control.  The
 * pseudo-terminals (kern/pty/pty.c) are terminals of the same kind:
 * this line discipline with their master side as the keyboard and the
 * screen.
 *
 * Theory.  The UART interrupts on each received byte (IRQ 4); the handler
 * feeds the bytes to the line discipline, which in canonical mode (ICANON,
 * the default) edits the current line -- erase (DEL or ^H) takes back a
 * character, kill (^U) the whole line -- echoes what it accepts (control
 * characters as ^X), and on newline (or ^D) moves the line to the queue
 * of finished lines.  ^D on an empty line queues an empty line, which a
 * reader sees as end of file.  A read (/dev/console through devfs) waits
 * for a finished line and returns at most one, as a terminal does.  With
 * ICANON off (TCSETS, as a shell's line editor asks) every byte is
 * available at once, and a read takes all that are waiting (up to its
 * size); a line half typed when ICANON goes off is available at once too.
 * ECHO off stops the echo.
 *
 * Signals from the keyboard.  With ISIG on (the default) ^C, ^\ and ^Z
 * discard the edit line and send SIGINT, SIGQUIT and SIGTSTP to the
 * foreground process group; with ISIG off they are ordinary bytes for the
 * reader.  The receive path runs in interrupt context, where the process
 * list's sleep mutex (proc_lock) may not be taken, so the handler only
 * records the signal in kbd_sigs and wakes a kernel thread of our own,
 * "tty_signal" (started by tty_init), which sends it to the group through
 * the process layer's hook (signal_pgrp).  The kernel has no general deferred-work queue; one
 * thread that sleeps on kbd_sigs is the smallest thing that moves the
 * send to thread context, and a burst of keys costs one wakeup.  The
 * group is looked up when the thread runs, a moment after the key.
 *
 * Job control.  The terminal belongs to the session whose leader made it
 * its controlling terminal (TIOCSCTTY; init does that for the interactive
 * shell), which also makes the leader's group the foreground group;
 * TIOCSPGRP moves the foreground to another group of that session (a
 * job-control shell does, for each job).  A process of that session
 * outside the foreground group that reads the terminal gets SIGTTIN,
 * and one that changes its settings or foreground group gets SIGTTOU
 * (ctty_job_check): the signal goes to its whole group, which stops, and
 * the call is restarted once the group is continued.  A reader that
 * ignores or blocks SIGTTIN, or whose group is orphaned (nobody could
 * continue it), gets EIO instead; a writer of settings that ignores or
 * blocks SIGTTOU goes ahead (a shell does so when it takes the terminal
 * back).  When the session leader exits the terminal is free again, and
 * its foreground group gets SIGHUP (as Linux does at exit).  Without a controlling
 * session (no TIOCSCTTY, as under `make run RUN=`) nobody is held back.
 * A session has at most one controlling terminal, and a terminal one
 * session: tty_of_session finds it on the list of every terminal.
 *
 * Layers.  Sessions, process groups and signals belong to the process
 * layer above this driver, so the rules above that need them live there,
 * in kern/proc/jobctl.c (ctty_*): this file keeps the terminal's state
 * (the session that owns it and the foreground group) and the line
 * discipline, and calls up only through struct tty_hooks, which jobctl
 * registers at boot: job_check before a read, sleep_intr to wait for a
 * line interruptibly, signal_pgrp for the typed signals.  Without hooks
 * (in-kernel tests before any process) reads are never held back and the
 * wait is an ordinary sleep.
 *
 * Locks.  Each terminal's t_lock, a spin lock (interrupts off while
 * held), guards its edit line and queue; the console's interrupt handler
 * takes it.  Readers wait on &t_nlines: the reader checks t_nlines with
 * its sleep-queue bucket locked, and the input path bumps it before it
 * calls wakeup, which takes that bucket lock -- so no wakeup is lost, and
 * t_lock is never held together with a sleep-queue lock.  The signal
 * thread waits on &kbd_sigs the same way.  The foreground group, the
 * session and the flags are single words read and written atomically.
 * Echo is a leaf (console_write, or the pty's output buffer).  The list of
 * terminals has its own spin lock (class "ttylist"), taken alone.
 */
#include <drivers/tty/tty.h>
#include <kern/lib/signum.h>
#include <kern/sched/thread.h>
#include <kern/lock/spinlock.h>
#include <kern/lock/sleep.h>
#include <kern/lib/kprintf.h>
#include <kern/arch/trap.h>
#include <kern/arch/cpu.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>
#include <drivers/platform/serial.h>
#include <drivers/platform/ioapic.h>

#define TTY_IRQ     4               /* COM1 */

#define CH_INTR   0x03              /* ^C */
#define CH_EOF    0x04              /* ^D */
#define CH_ERASE1 0x08              /* ^H */
#define CH_KILL   0x15              /* ^U */
#define CH_SUSP   0x1A              /* ^Z */
#define CH_QUIT   0x1C              /* ^\ */
#define CH_ERASE2 0x7F              /* DEL */

LOCK_CLASS(tty_class, "tty", LK_SPIN);
LOCK_CLASS(ttylist_class, "ttylist", LK_SPIN);

struct tty console_tty;
static spinlock_t list_lock;
static struct tty *ttys;                    /* [list_lock] every terminal */
static volatile uint32_t kbd_sigs;          /* [a] typed signals not yet sent, bit (1 << sig) */
static struct tty_hooks hooks;              /* [c] set once at boot (tty_set_hooks) */

void tty_set_hooks(const struct tty_hooks *h)
{
    hooks = *h;
}

struct tty *tty_of_caller(void)
{
    int sid = hooks.caller_sid ? hooks.caller_sid() : 0;
    return sid ? tty_of_session(sid) : NULL;
}

bool tty_is_controlling(void)
{
    int sid = hooks.caller_sid ? hooks.caller_sid() : 0;
    return sid == 0 || sid == tty_session(&console_tty);
}

static void echo(struct tty *t, const char *s, size_t n)
{
    t->t_echo(t, s, n);
}

/* Echo a byte as the terminal shows it: a control character as ^X. */
static void echo_char(struct tty *t, char c)
{
    if ((uint8_t)c < 0x20 && c != '\t' && c != '\n') {
        char ctl[2] = { '^', (char)(c + '@') };
        echo(t, ctl, 2);
    } else {
        echo(t, &c, 1);
    }
}

/* The signal a byte sends with ISIG on, or 0. */
static int isig_signal(char c)
{
    switch (c) {
    case CH_INTR: return SIGINT;
    case CH_QUIT: return SIGQUIT;
    case CH_SUSP: return SIGTSTP;
    default: return 0;
    }
}

/* Move the edit line to the queue [t]; false when the queue is full. */
static bool finish_line(struct tty *t)
{
    if (t->t_nlines >= TTY_MAX_LINES || t->t_qcount + (size_t)t->t_elen > TTY_QUEUE_SIZE)
        return false;
    for (int i = 0; i < t->t_elen; i++)
        t->t_queue[(t->t_qhead + t->t_qcount + (size_t)i) % TTY_QUEUE_SIZE] = t->t_edit[i];
    t->t_qcount += (size_t)t->t_elen;
    t->t_linelen[(t->t_lhead + t->t_nlines) % TTY_MAX_LINES] = (uint16_t)t->t_elen;
    __atomic_store_n(&t->t_nlines, t->t_nlines + 1, __ATOMIC_RELEASE);
    t->t_elen = 0;
    t->t_tail_raw = false;
    return true;
}

/* A byte in non-canonical mode [t]: available at once.  Bytes that
 * arrive before a reader takes them gather in one queued piece
 * (t_tail_raw), so a fast typist or a paste fills the byte queue, not the
 * line slots. */
static bool input_raw(struct tty *t, char c)
{
    if (t->t_lflag & TTY_ECHO)
        echo(t, &c, 1);
    if (t->t_nlines > 0 && t->t_tail_raw) {
        int tail = (t->t_lhead + t->t_nlines - 1) % TTY_MAX_LINES;
        if (t->t_qcount >= TTY_QUEUE_SIZE || t->t_linelen[tail] == UINT16_MAX)
            return false;
        t->t_queue[(t->t_qhead + t->t_qcount) % TTY_QUEUE_SIZE] = c;
        t->t_qcount++;
        t->t_linelen[tail]++;
        return true;
    }
    t->t_edit[0] = c;
    t->t_elen = 1;
    t->t_tail_raw = finish_line(t);
    return t->t_tail_raw;
}

/* Take back the last character of the edit line [t], on the screen too. */
static void erase_one(struct tty *t, bool echo_on)
{
    char c = t->t_edit[--t->t_elen];
    if (echo_on)
        echo(t, "\b \b\b \b", (uint8_t)c < 0x20 && c != '\t' ? 6 : 3);
}

/* One input byte [t]; returns true when a line was finished.  *sig: the
 * signal it sends the foreground group, if any. */
static bool input_locked(struct tty *t, char c, int *sig)
{
    uint32_t lflag = t->t_lflag;
    if (c == '\r' && (t->t_iflag & TTY_ICRNL))
        c = '\n';
    if ((lflag & TTY_ISIG) && (*sig = isig_signal(c))) {
        t->t_elen = 0;
        if (lflag & TTY_ECHO)
            echo_char(t, c);        /* ^C: the shell starts the new line */
        return false;
    }
    if (!(lflag & TTY_ICANON))
        return input_raw(t, c);
    bool echo_on = lflag & TTY_ECHO;
    switch (c) {
    case '\r':
    case '\n':
        if (t->t_elen < TTY_LINE_MAX)
            t->t_edit[t->t_elen++] = '\n';
        if (echo_on)
            echo(t, "\n", 1);
        return finish_line(t);
    case CH_EOF:
        return finish_line(t);              /* empty: end of file */
    case CH_ERASE1:
    case CH_ERASE2:
        if (t->t_elen > 0)
            erase_one(t, echo_on);
        return false;
    case CH_KILL:
        while (t->t_elen > 0)
            erase_one(t, echo_on);
        return false;
    default:
        if (t->t_elen < TTY_LINE_MAX - 1 && c != 0) {
            t->t_edit[t->t_elen++] = c;
            if (echo_on)
                echo_char(t, c);
        }
        return false;
    }
}

/* t has a new line (or raw bytes) for its readers. */
static void became_readable(struct tty *t)
{
    wakeup((const void *)&t->t_nlines);
    if (t->t_readable)
        t->t_readable(t);
}

int tty_input(struct tty *t, char c)
{
    int sig = 0;
    spin_lock(&t->t_lock);
    bool done = input_locked(t, c, &sig);
    spin_unlock(&t->t_lock);
    if (done)
        became_readable(t);
    return sig;
}

void tty_signal_fg(struct tty *t, int sig)
{
    int pg = __atomic_load_n(&t->t_fg_pgrp, __ATOMIC_ACQUIRE);
    if (sig && pg > 0 && hooks.signal_pgrp)
        hooks.signal_pgrp(pg, sig);
}

void console_input(char c)
{
    int sig = tty_input(&console_tty, c);
    if (sig) {
        __atomic_or_fetch(&kbd_sigs, 1u << sig, __ATOMIC_RELEASE);
        wakeup((const void *)&kbd_sigs);
    }
}

/* The thread "tty_signal": sends the console's typed signals to its
 * foreground group from thread context (see the theory). */
static void tty_signaller(void *arg)
{
    const void *chan = (const void *)&kbd_sigs;
    for (;;) {
        struct sleepq *sq = sleepq_lock(chan);
        uint32_t sigs = __atomic_exchange_n(&kbd_sigs, 0, __ATOMIC_ACQ_REL);
        if (!sigs) {
            sleep_locked(sq, chan);
            continue;
        }
        sleepq_unlock(sq);
        for (; sigs; sigs &= sigs - 1)
            tty_signal_fg(&console_tty, __builtin_ctz(sigs));
    }
}

static void tty_intr(struct trapframe *tf, void *arg)
{
    int c;
    while ((c = serial_getc_nowait()) >= 0)
        console_input((char)c);
}

static void console_echo(struct tty *t, const char *s, size_t n)
{
    console_write(s, n);
}

static void console_readable(struct tty *t)
{
    if (hooks.readable)
        hooks.readable();       /* poll and select (kern/proc/sys_poll.c) */
}

void tty_setup(struct tty *t, void (*echo_fn)(struct tty *, const char *, size_t),
               void (*readable)(struct tty *), uint32_t rdev, void *owner)
{
    memset(t, 0, sizeof *t);
    spin_init(&t->t_lock, &tty_class);
    t->t_lflag = TTY_DEFAULT_LFLAG;
    t->t_iflag = TTY_DEFAULT_IFLAG;
    t->t_oflag = TTY_DEFAULT_OFLAG;
    t->t_winsize[0] = 24;
    t->t_winsize[1] = 80;
    t->t_echo = echo_fn;
    t->t_readable = readable;
    t->t_rdev = rdev;
    t->t_owner = owner;
    t->t_input = true;
    spin_lock(&list_lock);
    t->t_next = ttys;
    ttys = t;
    spin_unlock(&list_lock);
}

void tty_remove(struct tty *t)
{
    spin_lock(&list_lock);
    for (struct tty **pp = &ttys; *pp; pp = &(*pp)->t_next)
        if (*pp == t) {
            *pp = t->t_next;
            break;
        }
    spin_unlock(&list_lock);
    spin_destroy(&t->t_lock);       /* out of lockstat's instances */
}

struct tty *tty_of_session(int sid)
{
    struct tty *found = NULL;
    spin_lock(&list_lock);
    for (struct tty *t = ttys; t && sid > 0 && !found; t = t->t_next)
        if (__atomic_load_n(&t->t_sid, __ATOMIC_ACQUIRE) == sid)
            found = t;
    spin_unlock(&list_lock);
    return found;
}

void tty_init(void)
{
    spin_init(&list_lock, &ttylist_class);
    tty_setup(&console_tty, console_echo, console_readable, (5 << 8) | 1, NULL);
    console_tty.t_input = false;            /* until the interrupt is routed */
    if (!thread_create("tty_signal", tty_signaller, NULL, AFFINITY_ALL))
        kprintf("tty: no memory for the signal thread; ^C, ^\\ and ^Z send nothing\n");
    trap_set_handler(IRQ_BASE + TTY_IRQ, tty_intr, NULL);
    if (!ioapic_route_isa(TTY_IRQ, IRQ_BASE + TTY_IRQ, cpus[0].apic_id)) {
        kprintf("tty: no I/O APIC route for IRQ %d; console input off\n", TTY_IRQ);
        return;
    }
    serial_enable_rx_interrupt();
    console_tty.t_input = true;
}

uint32_t tty_lflag(struct tty *t)
{
    return t->t_lflag;
}

/*
 * A line being edited when canonical mode ends is input already typed:
 * as on Linux it becomes readable at once, so a shell's line editor that
 * switches to raw mode gets what was typed ahead (the next raw byte would
 * otherwise write over it).
 */
void tty_set_lflag(struct tty *t, uint32_t f)
{
    spin_lock(&t->t_lock);
    bool to_raw = (t->t_lflag & TTY_ICANON) && !(f & TTY_ICANON);
    t->t_lflag = f;
    bool queued = to_raw && t->t_elen > 0 && (t->t_tail_raw = finish_line(t));
    spin_unlock(&t->t_lock);
    if (queued)
        became_readable(t);
}

void tty_set_modes(struct tty *t, uint32_t iflag, uint32_t oflag)
{
    __atomic_store_n(&t->t_iflag, iflag, __ATOMIC_RELEASE);
    __atomic_store_n(&t->t_oflag, oflag, __ATOMIC_RELEASE);
}

void tty_winsize(struct tty *t, uint16_t ws[4])
{
    spin_lock(&t->t_lock);
    memcpy(ws, t->t_winsize, sizeof t->t_winsize);
    spin_unlock(&t->t_lock);
}

bool tty_set_winsize(struct tty *t, const uint16_t ws[4])
{
    spin_lock(&t->t_lock);
    bool changed = memcmp(ws, t->t_winsize, sizeof t->t_winsize) != 0;
    memcpy(t->t_winsize, ws, sizeof t->t_winsize);
    spin_unlock(&t->t_lock);
    return changed;
}

void tty_flush_input(struct tty *t)
{
    spin_lock(&t->t_lock);
    t->t_elen = 0;
    t->t_qhead = t->t_qcount = 0;
    t->t_lhead = 0;
    t->t_partial = 0;
    t->t_tail_raw = false;
    __atomic_store_n(&t->t_nlines, 0, __ATOMIC_RELEASE);
    spin_unlock(&t->t_lock);
}

size_t tty_queued(struct tty *t)
{
    spin_lock(&t->t_lock);
    size_t n = t->t_qcount;
    spin_unlock(&t->t_lock);
    return n;
}

void tty_hangup(struct tty *t)
{
    __atomic_store_n(&t->t_hungup, true, __ATOMIC_RELEASE);
    became_readable(t);
}

int tty_fg_pgrp(struct tty *t)
{
    return __atomic_load_n(&t->t_fg_pgrp, __ATOMIC_ACQUIRE);
}

void tty_set_fg_pgrp(struct tty *t, int pgid)
{
    __atomic_store_n(&t->t_fg_pgrp, pgid, __ATOMIC_RELEASE);
}

int tty_session(struct tty *t)
{
    return __atomic_load_n(&t->t_sid, __ATOMIC_ACQUIRE);
}

void tty_attach_session(struct tty *t, int sid, int pgid)
{
    __atomic_store_n(&t->t_sid, sid, __ATOMIC_RELEASE);
    __atomic_store_n(&t->t_fg_pgrp, pgid, __ATOMIC_RELEASE);
}

int tty_detach_session(struct tty *t, int sid)
{
    int none = 0, expect = sid;
    if (!sid || !__atomic_compare_exchange_n(&t->t_sid, &expect, none, false, __ATOMIC_ACQ_REL,
                                             __ATOMIC_ACQUIRE))
        return 0;
    return __atomic_exchange_n(&t->t_fg_pgrp, 0, __ATOMIC_ACQ_REL);
}

/* Copy up to n bytes of the head line [t]; a line read to its end goes. */
static size_t take_line(struct tty *t, char *buf, size_t n)
{
    size_t len = t->t_linelen[t->t_lhead], left = len - t->t_partial, k = MIN(n, left);
    for (size_t i = 0; i < k; i++)
        buf[i] = t->t_queue[(t->t_qhead + i) % TTY_QUEUE_SIZE];
    t->t_qhead = (t->t_qhead + k) % TTY_QUEUE_SIZE;
    t->t_qcount -= k;
    t->t_partial += k;
    if (t->t_partial == len) {
        t->t_partial = 0;
        t->t_lhead = (t->t_lhead + 1) % TTY_MAX_LINES;
        __atomic_store_n(&t->t_nlines, t->t_nlines - 1, __ATOMIC_RELEASE);
        if (t->t_nlines == 0)
            t->t_tail_raw = false;
    }
    return k;
}

/* Nothing more will come: no input at all, or the far side is gone. */
static bool input_over(struct tty *t)
{
    return !t->t_input || __atomic_load_n(&t->t_hungup, __ATOMIC_ACQUIRE);
}

bool tty_readable(struct tty *t)
{
    return input_over(t) || __atomic_load_n(&t->t_nlines, __ATOMIC_ACQUIRE) > 0;
}

long tty_read(struct tty *t, char *buf, size_t n, bool nonblock)
{
    if (!t->t_input)
        return 0;                           /* no input: end of file */
    int err = hooks.job_check ? hooks.job_check(t, SIGTTIN) : 0;
    if (err)
        return err;
    if (n == 0)
        return 0;
    const void *chan = (const void *)&t->t_nlines;
    for (;;) {
        struct sleepq *sq = sleepq_lock(chan);
        if (__atomic_load_n(&t->t_nlines, __ATOMIC_ACQUIRE) > 0 || input_over(t)) {
            sleepq_unlock(sq);
            break;
        }
        if (nonblock) {
            sleepq_unlock(sq);
            return -EAGAIN;
        }
        /* A signal ends the wait: -ERESTARTSYS, a restart or EINTR. */
        if (!hooks.sleep_intr)
            sleep_locked(sq, chan);
        else if ((err = hooks.sleep_intr(sq, chan)))
            return err;
    }
    spin_lock(&t->t_lock);
    size_t k = t->t_nlines > 0 ? take_line(t, buf, n) : 0;
    spin_unlock(&t->t_lock);
    return (long)k;
}
