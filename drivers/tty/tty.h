/* The console terminal's line discipline (theory in drivers/tty/tty.c). */
#ifndef KERN_TTY_H
#define KERN_TTY_H

#include <kern/lib/types.h>

/* termios c_lflag bits the line discipline honours (Linux values). */
#define TTY_ISIG   0x0001
#define TTY_ICANON 0x0002
#define TTY_ECHO   0x0008
#define TTY_DEFAULT_LFLAG 0x8a3b   /* ISIG ICANON ECHO ECHOE ECHOK ECHOCTL ECHOKE IEXTEN */

/* Boot, after the I/O APIC: take COM1's receive interrupt. */
void tty_init(void);
/* One received byte (the interrupt handler; tests). */
void tty_input(char c);
/* Read at most one finished line (at most n bytes of it), waiting for one
 * unless nonblock (-EAGAIN).  0 is end of file (^D on an empty line, or no
 * console input at all). */
long tty_read(char *buf, size_t n, bool nonblock);
/* Would tty_read return at once (a finished line, or no input at all)? */
bool tty_readable(void);
/* termios c_lflag (TCGETS/TCSETS). */
uint32_t tty_lflag(void);
void tty_set_lflag(uint32_t f);

/* The terminal's state for job control; the rules that use it are the
 * process layer's (ctty_*, kern/proc/jobctl.c).  The foreground process
 * group (0: none), the session that controls the terminal (0: none);
 * attach makes sid the controlling session with pgid in the foreground;
 * detach frees the terminal if sid controls it, returning the foreground
 * group it had (0 if none, or if sid did not control it). */
int tty_fg_pgrp(void);
void tty_set_fg_pgrp(int pgid);
int tty_session(void);
void tty_attach_session(int sid, int pgid);
int tty_detach_session(int sid);

/*
 * What the terminal needs of the process layer above it, registered once
 * at boot (kern/proc/jobctl.c):
 *   job_check    job control for the calling process's use of the terminal
 *                (sig: SIGTTIN for a read): 0 to go ahead, or the error to
 *                return (-ERESTARTSYS once its group was sent sig, -EIO)
 *   sleep_intr   sleep_locked that a signal ends: 0, or -ERESTARTSYS/-EINTR
 *   signal_pgrp  send sig to process group pgid (the typed ^C, ^\, ^Z)
 *   readable     input became readable (poll and select wake; from the
 *                input interrupt, so it may not sleep)
 */
struct sleepq;
struct tty_hooks {
    int (*job_check)(int sig);
    int (*sleep_intr)(struct sleepq *sq, const void *chan);
    int (*signal_pgrp)(int pgid, int sig);
    /* The calling process's session, or 0 for a kernel thread. */
    int (*caller_sid)(void);
    void (*readable)(void);
};
/* Is the terminal the calling process's controlling terminal (what
 * /dev/tty opens)?  Kernel threads and a boot without the hooks: yes. */
bool tty_is_controlling(void);
void tty_set_hooks(const struct tty_hooks *hooks);

#endif
