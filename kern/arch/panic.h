/* panic, assertions, backtraces, and stopping the machine. */
#ifndef KERN_PANIC_H
#define KERN_PANIC_H

#include <kern/lib/types.h>

struct trapframe;

void panic(const char *fmt, ...) __noreturn __attribute__((format(printf, 1, 2)));
/* The panic path for a trap: print the frame, then as panic(). */
void panic_trap(const struct trapframe *tf, const char *what) __noreturn;

/* The panic path for a hang (a watchdog ran out): the message, then every
 * registered hang dump (panic_register_hang_dump).  tf is the
 * interrupted frame of this CPU's thread, or NULL. */
void panic_hung(const struct trapframe *tf, const char *fmt, ...) __noreturn
    __attribute__((format(printf, 2, 3)));

/* A layer above the machine that can tell something about a hang
 * registers a dump at boot; panic_hung calls the dumps in ascending
 * order.  The orders in use: */
#define HANG_DUMP_THREADS 10    /* every thread, its locks, what it waits for */
#define HANG_DUMP_BUFFERS 20    /* a thread may wait for a buffer ... */
#define HANG_DUMP_DISKS   30    /* ... that waits for a disk */
void panic_register_hang_dump(int order, void (*dump)(void));

/* Print a symbolized backtrace starting from frame pointer rbp. */
void backtrace_from(uint64_t rbp, uint64_t rip);
void backtrace(void);

/* Halt this CPU for a panic another CPU is handling, recording where it
 * stopped (tf, or NULL) for the hang dump. */
void panic_stop_here(const struct trapframe *tf) __noreturn;

/* Power the machine off (ACPI), or halt forever if that fails. */
void machine_poweroff(void) __noreturn;

extern volatile int panicking;

#define assert(cond) \
    do { if (unlikely(!(cond))) panic("assertion failed: %s (%s:%d)", #cond, __FILE__, __LINE__); } while (0)

#endif
