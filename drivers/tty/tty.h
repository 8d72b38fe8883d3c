/* Terminals: the line discipline every terminal shares, the console's,
 * and the pseudo-terminals' (theory in drivers/tty/tty.c and pty.c). */
#ifndef KERN_TTY_H
#define KERN_TTY_H

#include <kern/lib/types.h>
#include <kern/lock/spinlock.h>

/* termios c_lflag bits the line discipline honours (Linux values). */
#define TTY_ISIG   0x0001
#define TTY_ICANON 0x0002
#define TTY_ECHO   0x0008
#define TTY_DEFAULT_LFLAG 0x8a3b   /* ISIG ICANON ECHO ECHOE ECHOK ECHOCTL ECHOKE IEXTEN */
/* c_iflag and c_oflag bits honoured: CR to NL on input, NL to CR-NL on
 * output (with OPOST). */
#define TTY_ICRNL  0x0100
#define TTY_OPOST  0x0001
#define TTY_ONLCR  0x0004
#define TTY_DEFAULT_IFLAG 0x0500   /* ICRNL IXON */
#define TTY_DEFAULT_OFLAG 0x0005   /* OPOST ONLCR */

#define TTY_QUEUE_SIZE 4096        /* bytes of finished lines */
#define TTY_MAX_LINES  128
#define TTY_LINE_MAX   255         /* the edit line */

/*
 * A terminal: its line discipline's input (the edit line and the queue of
 * finished lines), its modes, window size and the job-control state the
 * process layer keeps in it (the controlling session, the foreground
 * group).  Lock key: [t] t_lock (a spin lock, interrupts off: the
 * console's input interrupt takes it), [a] atomic, [c] constant.
 */
struct tty {
    spinlock_t t_lock;
    char t_edit[TTY_LINE_MAX];              /* [t] the line being typed */
    int t_elen;                             /* [t] */
    char t_queue[TTY_QUEUE_SIZE];           /* [t] finished lines, back to back */
    size_t t_qhead, t_qcount;               /* [t] */
    uint16_t t_linelen[TTY_MAX_LINES];      /* [t] length of each finished line */
    int t_lhead;                            /* [t] */
    volatile int t_nlines;                  /* [t] written, [a] read by waiters */
    size_t t_partial;                       /* [t] bytes of the head line already read */
    bool t_tail_raw;                        /* [t] the last line is raw bytes that may grow */
    volatile uint32_t t_lflag;              /* [a] termios c_lflag */
    volatile uint32_t t_iflag, t_oflag;     /* [a] c_iflag, c_oflag */
    uint16_t t_winsize[4];                  /* [t] rows, columns, x and y pixels */
    volatile int t_fg_pgrp;                 /* [a] foreground process group, 0: none */
    volatile int t_sid;                     /* [a] the controlling session, 0: none */
    volatile bool t_hungup;                 /* [a] the far side is gone: reads see end of file */
    bool t_input;                           /* [c] input can come at all (else reads are EOF) */
    uint32_t t_rdev;                        /* [c] its device number (/proc's tty_nr) */
    /* [c] Echo (and the output of the line discipline): to the screen or
     * the master side.  Called with t_lock held: a leaf. */
    void (*t_echo)(struct tty *t, const char *s, size_t n);
    /* [c] Input became readable (poll, select and epoll wake); may not
     * sleep. */
    void (*t_readable)(struct tty *t);
    void *t_owner;                          /* [c] the pty pair, NULL for the console */
    struct tty *t_next;                     /* [list lock] every terminal (tty_of_session) */
};

/* The console (COM1). */
extern struct tty console_tty;

/* Boot, after the I/O APIC: take COM1's receive interrupt. */
void tty_init(void);
/* A terminal made by a driver: its line discipline ready, with the
 * defaults, on the list tty_of_session walks; and its end (off the list,
 * its lock destroyed: the memory may go). */
void tty_setup(struct tty *t, void (*echo)(struct tty *, const char *, size_t),
               void (*readable)(struct tty *), uint32_t rdev, void *owner);
void tty_remove(struct tty *t);
/* One byte typed at the console (its interrupt handler; tests): a signal
 * it makes goes to the foreground group from a thread of the driver's. */
void console_input(char c);
/* One input byte into t's line discipline: the signal it asks for (ISIG:
 * ^C, ^\, ^Z) to be sent to t's foreground group, or 0. */
int tty_input(struct tty *t, char c);
/* Read at most one finished line (at most n bytes of it), waiting for one
 * unless nonblock (-EAGAIN).  0 is end of file (^D on an empty line, no
 * input at all, or the far side gone). */
long tty_read(struct tty *t, char *buf, size_t n, bool nonblock);
/* Would tty_read return at once? */
bool tty_readable(struct tty *t);
/* termios c_lflag (TCGETS/TCSETS); the iflag and oflag. */
uint32_t tty_lflag(struct tty *t);
void tty_set_lflag(struct tty *t, uint32_t f);
void tty_set_modes(struct tty *t, uint32_t iflag, uint32_t oflag);
/* Discard the input not yet read (TCFLSH, TCSETSF); the bytes that wait
 * to be read (FIONREAD). */
void tty_flush_input(struct tty *t);
size_t tty_queued(struct tty *t);
/* The far side went away (a pty's master closed): readers wake to end of
 * file. */
void tty_hangup(struct tty *t);
/* The window size (TIOCGWINSZ, TIOCSWINSZ): set returns whether it changed. */
void tty_winsize(struct tty *t, uint16_t ws[4]);
bool tty_set_winsize(struct tty *t, const uint16_t ws[4]);

/* The terminal's state for job control; the rules that use it are the
 * process layer's (ctty_*, kern/proc/jobctl.c).  The foreground process
 * group (0: none), the session that controls the terminal (0: none);
 * attach makes sid the controlling session with pgid in the foreground;
 * detach frees the terminal if sid controls it, returning the foreground
 * group it had (0 if none, or if sid did not control it). */
int tty_fg_pgrp(struct tty *t);
void tty_set_fg_pgrp(struct tty *t, int pgid);
int tty_session(struct tty *t);
void tty_attach_session(struct tty *t, int sid, int pgid);
int tty_detach_session(struct tty *t, int sid);
/* The terminal session sid controls, or NULL; the calling process's. */
struct tty *tty_of_session(int sid);
struct tty *tty_of_caller(void);

/*
 * What the terminals need of the process layer above them, registered
 * once at boot (kern/proc/jobctl.c):
 *   job_check    job control for the calling process's use of terminal t
 *                (sig: SIGTTIN for a read): 0 to go ahead, or the error to
 *                return (-ERESTARTSYS once its group was sent sig, -EIO)
 *   sleep_intr   sleep_locked that a signal ends: 0, or -ERESTARTSYS/-EINTR
 *   signal_pgrp  send sig to process group pgid (the typed ^C, ^\, ^Z)
 *   caller_sid   the calling process's session, or 0 for a kernel thread
 *   readable     the console's input became readable (poll and select
 *                wake; from the input interrupt, so it may not sleep)
 */
struct sleepq;
struct tty_hooks {
    int (*job_check)(struct tty *t, int sig);
    int (*sleep_intr)(struct sleepq *sq, const void *chan);
    int (*signal_pgrp)(int pgid, int sig);
    int (*caller_sid)(void);
    void (*readable)(void);
};
/* Is the console the calling process's controlling terminal (what
 * /dev/tty opens)?  Kernel threads and a boot without the hooks: yes. */
bool tty_is_controlling(void);
void tty_set_hooks(const struct tty_hooks *hooks);
/* Send the signal tty_input asked for to t's foreground group (from
 * thread context). */
void tty_signal_fg(struct tty *t, int sig);

#endif
