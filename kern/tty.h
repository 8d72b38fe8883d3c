/* The console terminal's line discipline (theory in kern/tty.c). */
#ifndef KERN_TTY_H
#define KERN_TTY_H

#include <kern/types.h>

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
/* What ^C does besides discarding the line (signal the foreground
 * process group); set once at boot. */
void tty_set_intr(void (*fn)(void));
/* termios c_lflag (TCGETS/TCSETS) and the foreground process group
 * (TIOCGPGRP/TIOCSPGRP; 0 when none was set). */
uint32_t tty_lflag(void);
void tty_set_lflag(uint32_t f);
int tty_fg_pgrp(void);
void tty_set_fg_pgrp(int pgid);

#endif
