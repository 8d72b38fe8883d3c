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
/* termios c_lflag (TCGETS/TCSETS) and the foreground process group
 * (TIOCGPGRP/TIOCSPGRP; 0 when none was set).  Setting the group is
 * -ENOTTY from outside the terminal's session. */
uint32_t tty_lflag(void);
void tty_set_lflag(uint32_t f);
int tty_fg_pgrp(void);
int tty_set_fg_pgrp(int pgid);
/* TIOCSCTTY: the calling session leader's session takes the terminal
 * (steal: root may take it from another session); its group becomes the
 * foreground.  0 or -EPERM. */
int tty_set_ctty(bool steal);
/* The leader of session sid exits: the terminal is free again. */
void tty_session_exit(int sid);
/* Job control for a call on the terminal by the calling process: 0 to go
 * ahead, -ERESTARTSYS after sending sig (SIGTTIN for a read, SIGTTOU for
 * a change of settings) to its group when it is in the background, or
 * -EIO when it cannot be stopped. */
int tty_job_check(int sig);

#endif
