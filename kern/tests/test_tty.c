/*
 * ktests for the console's line discipline (drivers/tty/tty.c), fed through
 * console_input as the UART interrupt would:
 *
 *   tty_canon   a line is read only once finished; erase and kill edit
 *               it; ^D on an empty line is end of file; a long line comes
 *               back in pieces; non-canonical mode hands over each byte
 *               at once, and a read takes all that wait (more than the
 *               queue has line slots)
 *   tty_isig    with ISIG, ^C, ^\ and ^Z discard the edit line (their
 *               signals go to the foreground group: none here); without
 *               it they are bytes for the reader, in either mode
 */
#include <kern/tests/ktest.h>
#include <drivers/tty/tty.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

static void feed(const char *s)
{
    for (; *s; s++)
        console_input(*s);
}

static int read_is(const char *want)
{
    char buf[64];
    long n = tty_read(&console_tty, buf, sizeof buf, true);
    KT_ASSERT_EQ(n, (long)strlen(want));
    KT_ASSERT(memcmp(buf, want, (size_t)n) == 0);
    return 0;
}

KTEST(tty_canon)
{
    char buf[8];
    if (tty_readable(&console_tty)) {           /* nothing is pending, unless input is off */
        ktest_fail("tty: console input is not set up, or a line is pending");
        return 1;
    }
    feed("ab");
    KT_ASSERT(!tty_readable(&console_tty));                 /* not finished yet */
    KT_ASSERT_EQ(tty_read(&console_tty, buf, sizeof buf, true), -EAGAIN);
    feed("\x7f" "c\r");                          /* erase the b */
    if (read_is("ac\n"))
        return 1;
    feed("junk\x15" "ok\n");                     /* ^U kills the line */
    if (read_is("ok\n"))
        return 1;
    feed("\x04");                                /* ^D: end of file */
    KT_ASSERT(tty_readable(&console_tty));
    KT_ASSERT_EQ(tty_read(&console_tty, buf, sizeof buf, true), 0);
    feed("0123456789\n");                        /* read in pieces */
    KT_ASSERT_EQ(tty_read(&console_tty, buf, 4, true), 4);
    KT_ASSERT(memcmp(buf, "0123", 4) == 0);
    if (read_is("456789\n"))
        return 1;
    uint32_t saved = tty_lflag(&console_tty);
    tty_set_lflag(&console_tty, saved & ~(uint32_t)(TTY_ICANON | TTY_ECHO));
    feed("xy");                                  /* a read takes what waits */
    int ok = tty_read(&console_tty, buf, 1, true) == 1 && buf[0] == 'x' &&
             tty_read(&console_tty, buf, sizeof buf, true) == 1 && buf[0] == 'y';
    feed("0123456789abcdefghij");
    ok = ok && tty_read(&console_tty, buf, sizeof buf, true) == 8 && memcmp(buf, "01234567", 8) == 0;
    for (int i = 0; i < 200; i++)                /* more bytes than line slots */
        console_input((char)('a' + i % 26));
    size_t got = 0;
    long n;
    while ((n = tty_read(&console_tty, buf, sizeof buf, true)) > 0)
        got += (size_t)n;
    ok = ok && got == 12 + 200;
    /* Typed ahead in canonical mode, read after it ends: nothing is lost
     * under the next raw byte. */
    tty_set_lflag(&console_tty, saved & ~(uint32_t)TTY_ECHO);
    feed("typed ahe");
    tty_set_lflag(&console_tty, saved & ~(uint32_t)(TTY_ICANON | TTY_ECHO));
    feed("ad");
    char line[32];
    size_t ahead = 0;
    while (ahead < sizeof line && (n = tty_read(&console_tty, line + ahead, sizeof line - ahead, true)) > 0)
        ahead += (size_t)n;
    ok = ok && ahead == 11 && memcmp(line, "typed ahead", 11) == 0;
    tty_set_lflag(&console_tty, saved);
    KT_ASSERT(ok);
    return 0;
}

KTEST(tty_isig)
{
    char buf[8];
    if (tty_readable(&console_tty)) {
        ktest_fail("tty: console input is not set up, or a line is pending");
        return 1;
    }
    int fg = tty_fg_pgrp(&console_tty);
    tty_set_fg_pgrp(&console_tty, 0);                         /* nobody to signal */
    feed("ab\x03" "c\x1c" "d\x1a" "e\n");        /* each key discards the line */
    int ok = read_is("e\n") == 0;
    uint32_t saved = tty_lflag(&console_tty);
    tty_set_lflag(&console_tty, saved & ~(uint32_t)(TTY_ISIG | TTY_ECHO));
    feed("x\x03\x1c\x1a\n");
    ok = ok && read_is("x\x03\x1c\x1a\n") == 0;
    tty_set_lflag(&console_tty, saved & ~(uint32_t)(TTY_ISIG | TTY_ICANON | TTY_ECHO));
    feed("\x03");
    ok = ok && tty_read(&console_tty, buf, sizeof buf, true) == 1 && buf[0] == 0x03;
    tty_set_lflag(&console_tty, saved);
    tty_set_fg_pgrp(&console_tty, fg);
    KT_ASSERT(ok);
    return 0;
}
