/*
 * vsnprintf: the formatting core behind kprintf and snprintf.
 *
 * Supports %d %i %u %x %X %o %p %s %c %%, the flags '-' and '0', a field
 * width (or '*'), a precision for strings, and the length modifiers l, ll,
 * z and h.  It is pure code: tests/unit builds it for the host too.
 */
#include <kern/lib/kprintf.h>

static size_t strnlen_local(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n])
        n++;
    return n;
}

static size_t strlen_local(const char *s)
{
    return strnlen_local(s, (size_t)-1);
}

struct outbuf {
    char *buf;
    size_t size;
    size_t len;
};

static void out_char(struct outbuf *o, char c)
{
    if (o->len + 1 < o->size)
        o->buf[o->len] = c;
    o->len++;
}

static void out_padded(struct outbuf *o, const char *s, size_t n, int width, bool left, char pad)
{
    int fill = width > (int)n ? width - (int)n : 0;
    if (!left && pad == '0' && n > 0 && (s[0] == '-')) {
        out_char(o, '-');
        s++, n--;
    }
    if (!left)
        while (fill-- > 0)
            out_char(o, pad);
    while (n--)
        out_char(o, *s++);
    if (left)
        while (fill-- > 0)
            out_char(o, ' ');
}

static size_t format_unsigned(char *tmp, uint64_t v, unsigned base, bool upper)
{
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char rev[24];
    size_t n = 0, i;
    do {
        rev[n++] = digits[v % base];
        v /= base;
    } while (v);
    for (i = 0; i < n; i++)
        tmp[i] = rev[n - 1 - i];
    return n;
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    struct outbuf o = { buf, size, 0 };

    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            out_char(&o, *fmt);
            continue;
        }
        fmt++;
        bool left = false;
        char pad = ' ';
        int width = 0, prec = -1, lng = 0;
        for (;; fmt++) {
            if (*fmt == '-')
                left = true;
            else if (*fmt == '0')
                pad = '0';
            else
                break;
        }
        if (*fmt == '*') {
            width = va_arg(ap, int);
            fmt++;
        } else {
            while (*fmt >= '0' && *fmt <= '9')
                width = width * 10 + (*fmt++ - '0');
        }
        if (*fmt == '.') {
            fmt++;
            prec = 0;
            if (*fmt == '*') {
                prec = va_arg(ap, int);
                fmt++;
            } else {
                while (*fmt >= '0' && *fmt <= '9')
                    prec = prec * 10 + (*fmt++ - '0');
            }
        }
        while (*fmt == 'l' || *fmt == 'z' || *fmt == 'h') {
            if (*fmt != 'h')
                lng++;
            fmt++;
        }

        char tmp[32];
        size_t n;
        switch (*fmt) {
        case 'd':
        case 'i': {
            int64_t v = lng ? va_arg(ap, int64_t) : va_arg(ap, int);
            uint64_t mag = v < 0 ? -(uint64_t)v : (uint64_t)v;
            n = 0;
            if (v < 0)
                tmp[n++] = '-';
            n += format_unsigned(tmp + n, mag, 10, false);
            out_padded(&o, tmp, n, width, left, pad);
            break;
        }
        case 'u':
        case 'x':
        case 'X':
        case 'o': {
            uint64_t v = lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned);
            unsigned base = *fmt == 'u' ? 10 : *fmt == 'o' ? 8 : 16;
            n = format_unsigned(tmp, v, base, *fmt == 'X');
            out_padded(&o, tmp, n, width, left, pad);
            break;
        }
        case 'p': {
            uint64_t v = (uint64_t)va_arg(ap, void *);
            tmp[0] = '0';
            tmp[1] = 'x';
            n = 2 + format_unsigned(tmp + 2, v, 16, false);
            out_padded(&o, tmp, n, width, left, ' ');
            break;
        }
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (!s)
                s = "(null)";
            size_t len = prec >= 0 ? strnlen_local(s, (size_t)prec) : strlen_local(s);
            out_padded(&o, s, len, width, left, ' ');
            break;
        }
        case 'c':
            tmp[0] = (char)va_arg(ap, int);
            out_padded(&o, tmp, 1, width, left, ' ');
            break;
        case '%':
            out_char(&o, '%');
            break;
        case 0:
            fmt--;
            break;
        default:
            out_char(&o, '%');
            out_char(&o, *fmt);
            break;
        }
    }
    if (size)
        buf[o.len < size ? o.len : size - 1] = 0;
    return (int)o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}
