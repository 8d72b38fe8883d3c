/*
 * Host unit tests for drivers/platform/rtc.c: the calendar arithmetic
 * against a day-by-day count, and rtc_init reading a fake CMOS chip in
 * each of its codings (BCD or binary, 12 or 24 hours, with and without a
 * century register, a read that straddles an update, nonsense).
 */
#include "unit.h"
#include <drivers/platform/rtc.h>

/* ---- the fake chip and clock ---- */

static uint8_t regs[128];
static int reads_until_stable;  /* registers read before the second ticks over */
static uint64_t fake_uptime;

/* The chip; the seconds tick over right after the reads_until_stable'th
 * read of them. */
uint8_t rtc_test_cmos_read(uint8_t reg)
{
    reg &= 0x7f;
    uint8_t v = regs[reg];
    if (reads_until_stable > 0 && reg == 0x00 && --reads_until_stable == 0)
        regs[0x00] = (uint8_t)(regs[0x00] + 1);
    return v;
}

uint64_t uptime_ns(void)
{
    return fake_uptime;
}

static void set_chip(uint8_t status_b, uint8_t sec, uint8_t min, uint8_t hour, uint8_t day,
                     uint8_t month, uint8_t year, uint8_t century)
{
    memset(regs, 0, sizeof regs);
    regs[0x0b] = status_b;
    regs[0x00] = sec;
    regs[0x02] = min;
    regs[0x04] = hour;
    regs[0x07] = day;
    regs[0x08] = month;
    regs[0x09] = year;
    regs[0x32] = century;
    reads_until_stable = 0;
}

static int64_t wall_seconds(void)
{
    return (int64_t)(realtime_ns() / 1000000000ULL);
}

/* ---- the calendar ---- */

static bool leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in(int64_t y, int m)
{
    static const int d[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    return d[m - 1] + (m == 2 && leap(y));
}

static void t_days_match_a_day_by_day_count(void)
{
    int64_t n = 0;
    bool all = true;
    for (int64_t y = 1970; y < 2401 && all; y++)
        for (int m = 1; m <= 12 && all; m++)
            for (int d = 1; d <= days_in(y, m); d++, n++)
                if (rtc_days_from_civil(y, (unsigned)m, (unsigned)d) != n) {
                    CHECK_EQ(rtc_days_from_civil(y, (unsigned)m, (unsigned)d), n);
                    all = false;
                    break;
                }
    CHECK(all);
    CHECK_EQ(rtc_days_from_civil(1969, 12, 31), -1);
    CHECK_EQ(rtc_days_from_civil(2000, 3, 1) - rtc_days_from_civil(2000, 2, 28), 2);
    CHECK_EQ(rtc_days_from_civil(2100, 3, 1) - rtc_days_from_civil(2100, 2, 28), 1);
}

/* ---- reading the chip ---- */

static void t_bcd_24_hours_with_century(void)
{
    /* 2026-11-25 08:33:38, as QEMU's chip gives it (BCD, 24 hours). */
    set_chip(0x02, 0x38, 0x33, 0x08, 0x25, 0x11, 0x26, 0x20);
    fake_uptime = 5000000000ULL;
    rtc_init();
    CHECK_LOG("rtc: 2026-11-25 08:33:38 UTC");
    CHECK_EQ(wall_seconds(), 1795595618);
    fake_uptime += 7000000000ULL;
    CHECK_EQ(wall_seconds(), 1795595625);    /* the TSC carries it on */
}

static void t_binary_12_hours_pm(void)
{
    /* 1999-12-31 11:59:30 PM in binary with a 12-hour clock. */
    set_chip(0x04, 30, 59, 0x80 | 11, 31, 12, 99, 19);
    fake_uptime = 0;
    rtc_init();
    CHECK_LOG("rtc: 1999-12-31 23:59:30 UTC");
    CHECK_EQ(wall_seconds(), 946684770);
}

static void t_twelve_am_is_midnight(void)
{
    set_chip(0x00, 0x00, 0x00, 0x12, 0x01, 0x01, 0x24, 0x20);
    fake_uptime = 0;
    rtc_init();
    CHECK_LOG("rtc: 2024-01-01 00:00:00 UTC");
}

static void t_no_century_register(void)
{
    set_chip(0x02, 0x00, 0x00, 0x00, 0x01, 0x03, 0x30, 0x00);
    rtc_init();
    CHECK_LOG("rtc: 2030-03-01 00:00:00 UTC");
    set_chip(0x02, 0x00, 0x00, 0x00, 0x01, 0x03, 0x75, 0x00);
    rtc_init();
    CHECK_LOG("rtc: 1975-03-01 00:00:00 UTC");
}

static void t_update_during_the_read(void)
{
    /* The seconds change between two reads: the stable pair wins. */
    set_chip(0x02, 0x10, 0x00, 0x00, 0x02, 0x02, 0x25, 0x20);
    reads_until_stable = 1;
    fake_uptime = 0;
    rtc_init();
    CHECK_LOG("rtc: 2025-02-02 00:00:11 UTC");
}

static void t_nonsense_starts_at_1970(void)
{
    set_chip(0x02, 0x99, 0x99, 0x99, 0x45, 0x13, 0x26, 0x20);
    fake_uptime = 3000000000ULL;
    rtc_init();
    CHECK_LOG("rtc: the CMOS clock reads nonsense");
    CHECK_EQ(wall_seconds(), 0);
}

static void t_set_moves_only_the_wall_clock(void)
{
    set_chip(0x02, 0x00, 0x00, 0x00, 0x01, 0x01, 0x24, 0x20);
    fake_uptime = 1000000000ULL;
    rtc_init();
    realtime_set_ns(2000000000ULL * 1000000000ULL);
    CHECK_EQ(wall_seconds(), 2000000000);
    fake_uptime += 3000000000ULL;
    CHECK_EQ(wall_seconds(), 2000000003);
}

int main(void)
{
    RUN(t_days_match_a_day_by_day_count);
    RUN(t_bcd_24_hours_with_century);
    RUN(t_binary_12_hours_pm);
    RUN(t_twelve_am_is_midnight);
    RUN(t_no_century_register);
    RUN(t_update_during_the_read);
    RUN(t_nonsense_starts_at_1970);
    RUN(t_set_moves_only_the_wall_clock);
    return test_summary("test_rtc");
}
