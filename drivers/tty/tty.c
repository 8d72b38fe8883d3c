/*
 * The console terminal: COM1 input through a line discipline, and the
 * terminal's side of job control.
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
 * There is one terminal, so "the terminal" of a process is implicit: every
 * process of the session has it.
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
 * Locks.  tty_lock, a spin lock (interrupts off while held), guards the
 * edit line and the queue; the interrupt handler takes it.  Readers wait
 * on &nlines: the reader checks nlines with its sleep-queue bucket locked,
 * and the handler bumps nlines before it calls wakeup, which takes that
 * bucket lock -- so no wakeup is lost, and tty_lock is never held together
 * with a sleep-queue lock.  The signal thread waits on &kbd_sigs the same
 * way.  The foreground group, the session and the flags are single words
 * read and written atomically.  Echo goes through console_write, a leaf.
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
#define QUEUE_SIZE  4096            /* bytes of finished lines */
#define MAX_LINES   128
#define LINE_MAX    255             /* the edit line */

#define CH_INTR   0x03              /* ^C */
#define CH_EOF    0x04              /* ^D */
#define CH_ERASE1 0x08              /* ^H */
#define CH_KILL   0x15              /* ^U */
#define CH_SUSP   0x1A              /* ^Z */
#define CH_QUIT   0x1C              /* ^\ */
#define CH_ERASE2 0x7F              /* DEL */

LOCK_CLASS(tty_class, "tty", LK_SPIN);

static spinlock_t tty_lock;
static char edit[LINE_MAX];                 /* [t] the line being typed */
static int elen;                            /* [t] */
static char queue[QUEUE_SIZE];              /* [t] finished lines, back to back */
static size_t qhead, qcount;                /* [t] */
static uint16_t linelen[MAX_LINES];         /* [t] length of each finished line */
static int lhead;                           /* [t] */
static volatile int nlines;                 /* [t] written, [a] read by waiters */
static size_t partial;                      /* [t] bytes of the head line already read */
static bool tail_raw;                       /* [t] the last line is raw bytes that may grow */
static volatile uint32_t lflag = TTY_DEFAULT_LFLAG;  /* [a] termios c_lflag */
static volatile int fg_pgrp;                /* [a] foreground process group, 0: none */
static volatile int tty_sid;                /* [a] the controlling session, 0: none */
static volatile uint32_t kbd_sigs;          /* [a] typed signals not yet sent, bit (1 << sig) */
static bool ready;                          /* [c] after tty_init */
static struct tty_hooks hooks;              /* [c] set once at boot (tty_set_hooks) */

void tty_set_hooks(const struct tty_hooks *h)
{
    hooks = *h;
}

bool tty_is_controlling(void)
{
    int sid = hooks.caller_sid ? hooks.caller_sid() : 0;
    return sid == 0 || sid == tty_session();
}

static void echo(const char *s, size_t n)
{
    console_write(s, n);
}

/* Echo a byte as the terminal shows it: a control character as ^X. */
static void echo_char(char c)
{
    if ((uint8_t)c < 0x20 && c != '\t' && c != '\n') {
        char ctl[2] = { '^', (char)(c + '@') };
        echo(ctl, 2);
    } else {
        echo(&c, 1);
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
static bool finish_line(void)
{
    if (nlines >= MAX_LINES || qcount + (size_t)elen > QUEUE_SIZE)
        return false;
    for (int i = 0; i < elen; i++)
        queue[(qhead + qcount + (size_t)i) % QUEUE_SIZE] = edit[i];
    qcount += (size_t)elen;
    linelen[(lhead + nlines) % MAX_LINES] = (uint16_t)elen;
    __atomic_store_n(&nlines, nlines + 1, __ATOMIC_RELEASE);
    elen = 0;
    tail_raw = false;
    return true;
}

/* A byte in non-canonical mode [t]: available at once.  Bytes that
 * arrive before a reader takes them gather in one queued piece (tail_raw),
 * so a fast typist or a paste fills the byte queue, not the line slots. */
static bool input_raw(char c)
{
    if (lflag & TTY_ECHO)
        echo(&c, 1);
    if (nlines > 0 && tail_raw) {
        int tail = (lhead + nlines - 1) % MAX_LINES;
        if (qcount >= QUEUE_SIZE || linelen[tail] == UINT16_MAX)
            return false;
        queue[(qhead + qcount) % QUEUE_SIZE] = c;
        qcount++;
        linelen[tail]++;
        return true;
    }
    edit[0] = c;
    elen = 1;
    tail_raw = finish_line();
    return tail_raw;
}

/* Take back the last character of the edit line [t], on the screen too. */
static void erase_one(bool echo_on)
{
    char c = edit[--elen];
    if (echo_on)
        echo("\b \b\b \b", (uint8_t)c < 0x20 && c != '\t' ? 6 : 3);
}

/* One input byte [t]; returns true when a line was finished.  *sig: the
 * signal it sends the foreground group, if any. */
static bool input_locked(char c, int *sig)
{
    if ((lflag & TTY_ISIG) && (*sig = isig_signal(c))) {
        elen = 0;
        if (lflag & TTY_ECHO)
            echo_char(c);           /* ^C: the shell starts the new line */
        return false;
    }
    if (!(lflag & TTY_ICANON))
        return input_raw(c);
    bool echo_on = lflag & TTY_ECHO;
    switch (c) {
    case '\r':
    case '\n':
        if (elen < LINE_MAX)
            edit[elen++] = '\n';
        if (echo_on)
            echo("\n", 1);
        return finish_line();
    case CH_EOF:
        return finish_line();               /* empty: end of file */
    case CH_ERASE1:
    case CH_ERASE2:
        if (elen > 0)
            erase_one(echo_on);
        return false;
    case CH_KILL:
        while (elen > 0)
            erase_one(echo_on);
        return false;
    default:
        if (elen < LINE_MAX - 1 && c != 0) {
            edit[elen++] = c;
            if (echo_on)
                echo_char(c);
        }
        return false;
    }
}

void tty_input(char c)
{
    int sig = 0;
    spin_lock(&tty_lock);
    bool done = input_locked(c, &sig);
    spin_unlock(&tty_lock);
    if (done) {
        wakeup((const void *)&nlines);
        if (hooks.readable)
            hooks.readable();   /* poll and select (kern/proc/sys_poll.c) */
    }
    if (sig) {
        __atomic_or_fetch(&kbd_sigs, 1u << sig, __ATOMIC_RELEASE);
        wakeup((const void *)&kbd_sigs);
    }
}

/* The thread "tty_signal": sends the typed signals to the foreground
 * group from thread context (see the theory). */
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
        int pg = __atomic_load_n(&fg_pgrp, __ATOMIC_ACQUIRE);
        for (; sigs && pg > 0 && hooks.signal_pgrp; sigs &= sigs - 1)
            hooks.signal_pgrp(pg, __builtin_ctz(sigs));
    }
}

static void tty_intr(struct trapframe *tf, void *arg)
{
    int c;
    while ((c = serial_getc_nowait()) >= 0)
        tty_input((char)c);
}

void tty_init(void)
{
    spin_init(&tty_lock, &tty_class);
    if (!thread_create("tty_signal", tty_signaller, NULL, AFFINITY_ALL))
        kprintf("tty: no memory for the signal thread; ^C, ^\\ and ^Z send nothing\n");
    trap_set_handler(IRQ_BASE + TTY_IRQ, tty_intr, NULL);
    if (!ioapic_route_isa(TTY_IRQ, IRQ_BASE + TTY_IRQ, cpus[0].apic_id)) {
        kprintf("tty: no I/O APIC route for IRQ %d; console input off\n", TTY_IRQ);
        return;
    }
    serial_enable_rx_interrupt();
    ready = true;
}

uint32_t tty_lflag(void)
{
    return lflag;
}

/*
 * A line being edited when canonical mode ends is input already typed:
 * as on Linux it becomes readable at once, so a shell's line editor that
 * switches to raw mode gets what was typed ahead (the next raw byte would
 * otherwise write over it).
 */
void tty_set_lflag(uint32_t f)
{
    spin_lock(&tty_lock);
    bool to_raw = (lflag & TTY_ICANON) && !(f & TTY_ICANON);
    lflag = f;
    bool queued = to_raw && elen > 0 && (tail_raw = finish_line());
    spin_unlock(&tty_lock);
    if (queued) {
        wakeup((const void *)&nlines);
        if (hooks.readable)
            hooks.readable();
    }
}

int tty_fg_pgrp(void)
{
    return fg_pgrp;
}

void tty_set_fg_pgrp(int pgid)
{
    __atomic_store_n(&fg_pgrp, pgid, __ATOMIC_RELEASE);
}

int tty_session(void)
{
    return __atomic_load_n(&tty_sid, __ATOMIC_ACQUIRE);
}

void tty_attach_session(int sid, int pgid)
{
    __atomic_store_n(&tty_sid, sid, __ATOMIC_RELEASE);
    __atomic_store_n(&fg_pgrp, pgid, __ATOMIC_RELEASE);
}

int tty_detach_session(int sid)
{
    int none = 0, expect = sid;
    if (!sid || !__atomic_compare_exchange_n(&tty_sid, &expect, none, false, __ATOMIC_ACQ_REL,
                                             __ATOMIC_ACQUIRE))
        return 0;
    return __atomic_exchange_n(&fg_pgrp, 0, __ATOMIC_ACQ_REL);
}

/* Copy up to n bytes of the head line [t]; a line read to its end goes. */
static size_t take_line(char *buf, size_t n)
{
    size_t len = linelen[lhead], left = len - partial, k = MIN(n, left);
    for (size_t i = 0; i < k; i++)
        buf[i] = queue[(qhead + i) % QUEUE_SIZE];
    qhead = (qhead + k) % QUEUE_SIZE;
    qcount -= k;
    partial += k;
    if (partial == len) {
        partial = 0;
        lhead = (lhead + 1) % MAX_LINES;
        __atomic_store_n(&nlines, nlines - 1, __ATOMIC_RELEASE);
        if (nlines == 0)
            tail_raw = false;
    }
    return k;
}

bool tty_readable(void)
{
    return !ready || __atomic_load_n(&nlines, __ATOMIC_ACQUIRE) > 0;
}


long tty_read(char *buf, size_t n, bool nonblock)
{
    if (!ready)
        return 0;                           /* no input: end of file */
    int err = hooks.job_check ? hooks.job_check(SIGTTIN) : 0;
    if (err)
        return err;
    if (n == 0)
        return 0;
    for (;;) {
        struct sleepq *sq = sleepq_lock((const void *)&nlines);
        if (__atomic_load_n(&nlines, __ATOMIC_ACQUIRE) > 0) {
            sleepq_unlock(sq);
            break;
        }
        if (nonblock) {
            sleepq_unlock(sq);
            return -EAGAIN;
        }
        /* A signal ends the wait: -ERESTARTSYS, a restart or EINTR. */
        if (!hooks.sleep_intr)
            sleep_locked(sq, (const void *)&nlines);
        else if ((err = hooks.sleep_intr(sq, (const void *)&nlines)))
            return err;
    }
    spin_lock(&tty_lock);
    size_t k = nlines > 0 ? take_line(buf, n) : 0;
    spin_unlock(&tty_lock);
    return (long)k;
}
