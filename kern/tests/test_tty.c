/*
 * ktests for the console's line discipline (kern/tty.c), fed through
 * tty_input as the UART interrupt would:
 *
 *   tty_canon   a line is read only once finished; erase and kill edit
 *               it; ^D on an empty line is end of file; a long line comes
 *               back in pieces; non-canonical mode hands over each byte
 */
#include <kern/ktest.h>
#include <kern/tty.h>
#include <kern/string.h>
#include <kern/errno.h>

static void feed(const char *s)
{
    for (; *s; s++)
        tty_input(*s);
}

static int read_is(const char *want)
{
    char buf[64];
    long n = tty_read(buf, sizeof buf, true);
    KT_ASSERT_EQ(n, (long)strlen(want));
    KT_ASSERT(memcmp(buf, want, (size_t)n) == 0);
    return 0;
}

KTEST(tty_canon)
{
    char buf[8];
    if (tty_readable()) {           /* nothing is pending, unless input is off */
        ktest_fail("tty: console input is not set up, or a line is pending");
        return 1;
    }
    feed("ab");
    KT_ASSERT(!tty_readable());                 /* not finished yet */
    KT_ASSERT_EQ(tty_read(buf, sizeof buf, true), -EAGAIN);
    feed("\x7f" "c\r");                          /* erase the b */
    if (read_is("ac\n"))
        return 1;
    feed("junk\x15" "ok\n");                     /* ^U kills the line */
    if (read_is("ok\n"))
        return 1;
    feed("\x04");                                /* ^D: end of file */
    KT_ASSERT(tty_readable());
    KT_ASSERT_EQ(tty_read(buf, sizeof buf, true), 0);
    feed("0123456789\n");                        /* read in pieces */
    KT_ASSERT_EQ(tty_read(buf, 4, true), 4);
    KT_ASSERT(memcmp(buf, "0123", 4) == 0);
    if (read_is("456789\n"))
        return 1;
    uint32_t saved = tty_lflag();
    tty_set_lflag(saved & ~(uint32_t)(TTY_ICANON | TTY_ECHO));
    feed("xy");
    int ok = tty_read(buf, sizeof buf, true) == 1 && buf[0] == 'x' &&
             tty_read(buf, sizeof buf, true) == 1 && buf[0] == 'y';
    tty_set_lflag(saved);
    KT_ASSERT(ok);
    return 0;
}
