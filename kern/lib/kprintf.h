/* Kernel console output. */
#ifndef KERN_KPRINTF_H
#define KERN_KPRINTF_H

#include <kern/lib/types.h>

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Print to every console (COM1, and VGA text when present).  One call's
 * output is never interleaved with another CPU's. */
void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vkprintf(const char *fmt, va_list ap);

/* Write raw bytes to the consoles; used by kprintf and by the panic path. */
void console_write(const char *s, size_t n);
void console_init(void);

/* The panic path takes the console even if a dead CPU holds it. */
void console_break_lock(void);

#endif
