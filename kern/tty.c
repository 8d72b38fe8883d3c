/*
 * The console terminal: COM1 input through a line discipline.
 *
 * Theory.  The UART interrupts on each received byte (IRQ 4); the handler
 * feeds the bytes to the line discipline, which in canonical mode (ICANON,
 * the default) edits the current line -- erase (DEL or ^H) takes
 * back a character, kill (^U) the whole line, ^C discards it and
 * interrupts the foreground process group -- echoes what it accepts, and
 * on newline (or ^D) moves the line to the queue of finished lines.  ^D on
 * an empty line queues an empty line, which a reader sees as end of file.
 * A read (/dev/console through devfs) waits for a finished line and
 * returns at most one, as a terminal does.  With ICANON off (TCSETS, as
 * a shell's line editor asks) every byte is available at once; ECHO off
 * stops the echo; ISIG off makes ^C an ordinary byte.  The foreground
 * process group (TIOCSPGRP) is kept here for ^C.
 *
 * Locks.  tty_lock, a spin lock (interrupts off while held), guards the
 * edit line and the queue; the interrupt handler takes it.  Readers wait
 * on &nlines: the reader checks nlines with its sleep-queue bucket locked,
 * and the handler bumps nlines before it calls wakeup, which takes that
 * bucket lock -- so no wakeup is lost, and tty_lock is never held together
 * with a sleep-queue lock.  Echo goes through console_write, a leaf.
 */
#include <kern/tty.h>
#include <kern/spinlock.h>
#include <kern/sleep.h>
#include <kern/kprintf.h>
#include <kern/trap.h>
#include <kern/cpu.h>
#include <kern/string.h>
#include <kern/errno.h>
#include <drivers/serial.h>
#include <drivers/ioapic.h>

#define TTY_IRQ     4               /* COM1 */
#define QUEUE_SIZE  4096            /* bytes of finished lines */
#define MAX_LINES   128
#define LINE_MAX    255             /* the edit line */

#define CH_INTR   0x03              /* ^C */
#define CH_EOF    0x04              /* ^D */
#define CH_ERASE1 0x08              /* ^H */
#define CH_KILL   0x15              /* ^U */
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
static void (*intr_fn)(void);               /* [c] after boot: ^C's action */
static volatile uint32_t lflag = TTY_DEFAULT_LFLAG;  /* [a] termios c_lflag */
static volatile int fg_pgrp;                /* [a] foreground process group, 0: none */
static bool ready;                          /* [c] after tty_init */

static void echo(const char *s, size_t n)
{
    console_write(s, n);
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
    return true;
}

/* A byte in non-canonical mode [t]: available at once, as a line of one. */
static bool input_raw(char c)
{
    if (lflag & TTY_ECHO)
        echo(&c, 1);
    edit[0] = c;
    elen = 1;
    return finish_line();
}

/* One input byte [t]; returns true when a line was finished. */
static bool input_locked(char c, bool *intr)
{
    if (c == CH_INTR && (lflag & TTY_ISIG)) {
        elen = 0;
        echo("^C\n", 3);
        *intr = true;
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
        if (elen > 0) {
            elen--;
            if (echo_on)
                echo("\b \b", 3);
        }
        return false;
    case CH_KILL:
        while (elen > 0) {
            elen--;
            if (echo_on)
                echo("\b \b", 3);
        }
        return false;
    default:
        if (elen < LINE_MAX - 1 && ((uint8_t)c >= 0x20 || c == '\t')) {
            edit[elen++] = c;
            if (echo_on)
                echo(&c, 1);
        }
        return false;
    }
}

void tty_input(char c)
{
    bool intr = false;
    spin_lock(&tty_lock);
    bool done = input_locked(c, &intr);
    spin_unlock(&tty_lock);
    if (done)
        wakeup((const void *)&nlines);
    if (intr && intr_fn)
        intr_fn();
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
    trap_set_handler(IRQ_BASE + TTY_IRQ, tty_intr, NULL);
    if (!ioapic_route_isa(TTY_IRQ, IRQ_BASE + TTY_IRQ, cpus[0].apic_id)) {
        kprintf("tty: no I/O APIC route for IRQ %d; console input off\n", TTY_IRQ);
        return;
    }
    serial_enable_rx_interrupt();
    ready = true;
}

void tty_set_intr(void (*fn)(void))
{
    intr_fn = fn;
}

uint32_t tty_lflag(void)
{
    return lflag;
}

void tty_set_lflag(uint32_t f)
{
    lflag = f;
}

int tty_fg_pgrp(void)
{
    return fg_pgrp;
}

void tty_set_fg_pgrp(int pgid)
{
    fg_pgrp = pgid;
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
        sleep_locked(sq, (const void *)&nlines);
    }
    spin_lock(&tty_lock);
    size_t k = nlines > 0 ? take_line(buf, n) : 0;
    spin_unlock(&tty_lock);
    return (long)k;
}
