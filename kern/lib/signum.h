/*
 * Signal numbers, as Linux x86-64 has them: part of the system-call ABI,
 * like errno.h, so every layer may name a signal (the terminal sends
 * SIGINT; the process layer delivers it, kern/proc/signal.c).
 */
#ifndef KERN_LIB_SIGNUM_H
#define KERN_LIB_SIGNUM_H

#define SIGHUP   1
#define SIGINT   2
#define SIGQUIT  3
#define SIGILL   4
#define SIGTRAP  5
#define SIGBUS   7
#define SIGFPE   8
#define SIGKILL  9
#define SIGSEGV  11
#define SIGPIPE  13
#define SIGALRM  14
#define SIGCHLD  17
#define SIGCONT  18
#define SIGSTOP  19
#define SIGTSTP  20
#define SIGTTIN  21
#define SIGTTOU  22
#define SIGXFSZ  25
#define SIGVTALRM 26
#define SIGPROF  27
#define SIGWINCH 28
#define NSIG     64

#endif
