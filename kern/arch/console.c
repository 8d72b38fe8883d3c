/*
 * The kernel console: kprintf formats into a per-call buffer and writes the
 * whole line to COM1 and the VGA text screen under console_lock, so lines
 * from different CPUs never interleave.
 *
 * Locks: console_lock (raw spin lock, interrupts off while held).  It is a
 * leaf: nothing else is acquired while it is held.  The panic path may break
 * it (console_break_lock) because the CPU holding it may be stopped forever.
 */
#include <kern/lib/kprintf.h>
#include <kern/arch/rawlock.h>
#include <drivers/platform/serial.h>
#include <drivers/platform/vga.h>

static rawlock_t console_lock = RAWLOCK_INIT;

void console_init(void)
{
    serial_init();
    vga_init();
}

static void console_emit(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n')
            serial_putc('\r');
        serial_putc(s[i]);
        vga_putc(s[i]);
    }
}

void console_write(const char *s, size_t n)
{
    uint64_t f = rawlock_acquire_irqsave(&console_lock);
    console_emit(s, n);
    rawlock_release_irqrestore(&console_lock, f);
}

void console_break_lock(void)
{
    rawlock_release(&console_lock);
}

void vkprintf(const char *fmt, va_list ap)
{
    char buf[512];
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    if (n >= (int)sizeof buf)
        n = sizeof buf - 1;
    console_write(buf, (size_t)n);
}

void kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vkprintf(fmt, ap);
    va_end(ap);
}
