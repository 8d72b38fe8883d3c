/*
 * The kernel console: kprintf formats into a per-call buffer and writes the
 * whole line to COM1 and the VGA text screen under console_lock, so lines
 * from different CPUs never interleave.
 *
 * Every line kprintf prints is also kept in the kernel message log, a ring
 * of the newest KMSG_RECORDS lines with their time since boot, which
 * syslog(2) and /dev/kmsg read (kern/arch/kmsg.h).  A kprintf that ends
 * without a newline leaves its line open; the next kprintf continues it.
 *
 * Locks: console_lock (raw spin lock, interrupts off while held).  It is a
 * leaf: nothing else is acquired while it is held.  It guards the message
 * log too.  The panic path may break it (console_break_lock) because the
 * CPU holding it may be stopped forever.
 */
#include <kern/lib/kprintf.h>
#include <kern/arch/rawlock.h>
#include <drivers/platform/serial.h>
#include <drivers/platform/vga.h>
#include <drivers/platform/timer.h>
#include <kern/arch/kmsg.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

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

/* ---- the kernel message log ---- */

struct kmsg_rec {
    uint64_t ns;                /* time since boot of its first byte */
    uint16_t len;
    char text[KMSG_TEXT];
};

static struct kmsg_rec kmsg_ring[KMSG_RECORDS];    /* [console_lock] */
static uint64_t kmsg_next;      /* [console_lock] sequence number of the next new line */
static bool kmsg_open;          /* [console_lock] record kmsg_next - 1 is still being written */

static struct kmsg_rec *kmsg_slot(uint64_t seq)
{
    return &kmsg_ring[seq % KMSG_RECORDS];
}

static uint64_t kmsg_first(void)
{
    return kmsg_next > KMSG_RECORDS ? kmsg_next - KMSG_RECORDS : 0;
}

/* Append kprintf's output to the log (console_lock held). */
static void kmsg_append(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!kmsg_open) {
            struct kmsg_rec *r = kmsg_slot(kmsg_next++);
            r->ns = tsc_hz ? uptime_ns() : 0;     /* 0 before the TSC is calibrated */
            r->len = 0;
            kmsg_open = true;
        }
        struct kmsg_rec *r = kmsg_slot(kmsg_next - 1);
        if (s[i] == '\n')
            kmsg_open = false;
        else if (r->len < KMSG_TEXT)
            r->text[r->len++] = s[i];
    }
}

/* A record in syslog's format into buf; its length, even where it did
 * not fit (then nothing is written). */
static size_t kmsg_format_text(const struct kmsg_rec *r, char *buf, size_t n)
{
    char head[40];
    int h = snprintf(head, sizeof head, "<6>[%5lu.%06lu] ", (unsigned long)(r->ns / 1000000000),
                     (unsigned long)(r->ns / 1000 % 1000000));
    size_t len = (size_t)h + r->len + 1;
    if (len <= n) {
        memcpy(buf, head, (size_t)h);
        memcpy(buf + h, r->text, r->len);
        buf[h + r->len] = '\n';
    }
    return len;
}

size_t kmsg_text_size(uint64_t from)
{
    char scratch[1];
    uint64_t f = rawlock_acquire_irqsave(&console_lock);
    size_t total = 0;
    for (uint64_t q = MAX(from, kmsg_first()); q < kmsg_next; q++)
        total += kmsg_format_text(kmsg_slot(q), scratch, 0);
    rawlock_release_irqrestore(&console_lock, f);
    return total;
}

size_t kmsg_read_text(char *buf, size_t n, uint64_t from, uint64_t *next)
{
    char scratch[1];
    uint64_t f = rawlock_acquire_irqsave(&console_lock);
    /* Walk back from the newest record to find the oldest that fits. */
    uint64_t start = kmsg_next, first = MAX(from, kmsg_first());
    size_t total = 0;
    while (start > first) {
        size_t len = kmsg_format_text(kmsg_slot(start - 1), scratch, 0);
        if (total + len > n)
            break;
        total += len;
        start--;
    }
    size_t done = 0;
    for (uint64_t q = start; q < kmsg_next; q++)
        done += kmsg_format_text(kmsg_slot(q), buf + done, n - done);
    *next = kmsg_next;
    rawlock_release_irqrestore(&console_lock, f);
    return done;
}

long kmsg_read_record(uint64_t seq, char *buf, size_t n, uint64_t *next)
{
    uint64_t f = rawlock_acquire_irqsave(&console_lock);
    long r;
    if (seq < kmsg_first()) {
        *next = kmsg_first();
        r = -EPIPE;
    } else if (seq >= kmsg_next) {
        *next = kmsg_next;
        r = -EAGAIN;
    } else {
        const struct kmsg_rec *k = kmsg_slot(seq);
        char head[48];
        int h = snprintf(head, sizeof head, "6,%lu,%lu,-;", (unsigned long)seq,
                         (unsigned long)(k->ns / 1000));
        size_t len = (size_t)h + k->len + 1;
        if (len > n) {
            *next = seq;
            r = -EINVAL;
        } else {
            memcpy(buf, head, (size_t)h);
            memcpy(buf + h, k->text, k->len);
            buf[h + k->len] = '\n';
            *next = seq + 1;
            r = (long)len;
        }
    }
    rawlock_release_irqrestore(&console_lock, f);
    return r;
}

void kmsg_bounds(uint64_t *first, uint64_t *next)
{
    uint64_t f = rawlock_acquire_irqsave(&console_lock);
    *first = kmsg_first();
    *next = kmsg_next;
    rawlock_release_irqrestore(&console_lock, f);
}

void vkprintf(const char *fmt, va_list ap)
{
    char buf[512];
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    if (n >= (int)sizeof buf)
        n = sizeof buf - 1;
    uint64_t f = rawlock_acquire_irqsave(&console_lock);
    kmsg_append(buf, (size_t)n);
    console_emit(buf, (size_t)n);
    rawlock_release_irqrestore(&console_lock, f);
}

void kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vkprintf(fmt, ap);
    va_end(ap);
}
