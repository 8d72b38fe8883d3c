/*
 * The wall clock (CLOCK_REALTIME).
 *
 * Theory.  Every PC (QEMU's and Bochs's included) keeps the date in the
 * MC146818 CMOS real-time clock, read through ports 0x70 (register index)
 * and 0x71 (data).  The boot CPU reads it once, at boot: seconds (register
 * 0), minutes (2), hours (4), day of month (7), month (8), year within the
 * century (9) and, where the firmware keeps it, the century (0x32).
 * Status register B says how they are coded: bit 2 set means binary,
 * clear means BCD; bit 1 set means a 24-hour clock, clear means 12 hours
 * with bit 7 of the hour marking PM.  The chip updates its registers once
 * a second; while status register A's bit 7 (update in progress) is set
 * they may be half-written, so the read waits for it to clear and repeats
 * until two reads in a row agree.
 *
 * After that the clock is the TSC: the wall time is the uptime
 * (uptime_ns, drivers/platform/timer.c) plus an offset, the date at boot
 * minus the uptime then.  settimeofday and clock_settime change only the
 * offset, so CLOCK_MONOTONIC never jumps.  The CMOS clock is never
 * written back (Linux's hwclock does that from user space).
 *
 * Locks: none.  The offset is one 64-bit word read and written with
 * atomic operations; a reader sees the old or the new offset, never a mix.
 */
#include <drivers/platform/rtc.h>
#include <drivers/platform/timer.h>
#include <kern/arch/arch.h>
#include <kern/lib/kprintf.h>

#define CMOS_INDEX      0x70
#define CMOS_DATA       0x71
#define CMOS_NMI_OFF    0x80    /* keep NMIs masked while we hold the index */
#define REG_SECONDS     0x00
#define REG_MINUTES     0x02
#define REG_HOURS       0x04
#define REG_DAY         0x07
#define REG_MONTH       0x08
#define REG_YEAR        0x09
#define REG_STATUS_A    0x0a
#define REG_STATUS_B    0x0b
#define REG_CENTURY     0x32
#define STATUS_A_UIP    0x80
#define STATUS_B_24H    0x02
#define STATUS_B_BINARY 0x04
#define HOUR_PM         0x80
#define NSEC            1000000000ULL
#define SECS_PER_DAY    86400

static int64_t realtime_offset_ns;     /* [a] wall time minus uptime */

struct rtc_date {
    unsigned sec, min, hour, day, month, year, century;
};

#ifdef ACPI_HOST_TEST
/* The host unit test (tests/unit/test_rtc.c) is the chip. */
uint8_t rtc_test_cmos_read(uint8_t reg);
#define cmos_read rtc_test_cmos_read
#else
static uint8_t cmos_read(uint8_t reg)
{
    outb(CMOS_INDEX, CMOS_NMI_OFF | reg);
    return inb(CMOS_DATA);
}
#endif

static void wait_no_update(void)
{
    /* The update takes under 2 ms; give up after far longer than that. */
    for (int i = 0; i < 100000 && (cmos_read(REG_STATUS_A) & STATUS_A_UIP); i++)
        cpu_relax();
}

static void read_raw(struct rtc_date *d)
{
    wait_no_update();
    d->sec = cmos_read(REG_SECONDS);
    d->min = cmos_read(REG_MINUTES);
    d->hour = cmos_read(REG_HOURS);
    d->day = cmos_read(REG_DAY);
    d->month = cmos_read(REG_MONTH);
    d->year = cmos_read(REG_YEAR);
    d->century = cmos_read(REG_CENTURY);
}

static bool same_date(const struct rtc_date *a, const struct rtc_date *b)
{
    return a->sec == b->sec && a->min == b->min && a->hour == b->hour && a->day == b->day
        && a->month == b->month && a->year == b->year && a->century == b->century;
}

static unsigned from_bcd(unsigned v)
{
    return (v & 0x0f) + (v >> 4) * 10;
}

/* Turn the registers into binary, 24-hour values with a full year. */
static void decode(struct rtc_date *d, uint8_t status_b)
{
    bool pm = d->hour & HOUR_PM;
    d->hour &= ~HOUR_PM;
    if (!(status_b & STATUS_B_BINARY)) {
        d->sec = from_bcd(d->sec);
        d->min = from_bcd(d->min);
        d->hour = from_bcd(d->hour);
        d->day = from_bcd(d->day);
        d->month = from_bcd(d->month);
        d->year = from_bcd(d->year);
        d->century = from_bcd(d->century);
    }
    if (!(status_b & STATUS_B_24H))
        d->hour = (d->hour % 12) + (pm ? 12 : 0);
    /* No century register (or a nonsense one): years 70..99 are the
     * 1900s, the rest the 2000s, as Linux's mc146818 code assumes. */
    if (d->century >= 19 && d->century <= 99)
        d->year += d->century * 100;
    else
        d->year += d->year < 70 ? 2000 : 1900;
}

/* The civil-calendar day count: March is the first month of a shifted
 * year, so the leap day falls at the year's end; a 400-year era has
 * 146097 days. */
int64_t rtc_days_from_civil(int64_t year, unsigned month, unsigned day)
{
    year -= month <= 2;
    int64_t era = (year >= 0 ? year : year - 399) / 400;
    int64_t year_of_era = year - era * 400;
    int64_t shifted_month = month > 2 ? month - 3 : month + 9;
    int64_t day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    return era * 146097 + day_of_era - 719468;     /* 719468: 0000-03-01 to 1970-01-01 */
}

static bool plausible(const struct rtc_date *d)
{
    return d->sec < 60 && d->min < 60 && d->hour < 24 && d->day >= 1 && d->day <= 31
        && d->month >= 1 && d->month <= 12 && d->year >= 1970;
}

void rtc_init(void)
{
    struct rtc_date a, b;
    read_raw(&a);
    for (int tries = 0; tries < 10; tries++) {
        read_raw(&b);
        if (same_date(&a, &b))
            break;
        a = b;
    }
    decode(&b, cmos_read(REG_STATUS_B));
    uint64_t up = uptime_ns();
    if (!plausible(&b)) {
        kprintf("rtc: the CMOS clock reads nonsense (%u-%u-%u %u:%u:%u); the clock starts at 1970\n",
                b.year, b.month, b.day, b.hour, b.min, b.sec);
        __atomic_store_n(&realtime_offset_ns, -(int64_t)up, __ATOMIC_RELEASE);
        return;
    }
    int64_t secs = rtc_days_from_civil(b.year, b.month, b.day) * SECS_PER_DAY
                 + b.hour * 3600 + b.min * 60 + b.sec;
    __atomic_store_n(&realtime_offset_ns, secs * (int64_t)NSEC - (int64_t)up, __ATOMIC_RELEASE);
    kprintf("rtc: %04u-%02u-%02u %02u:%02u:%02u UTC\n", b.year, b.month, b.day, b.hour, b.min, b.sec);
}

uint64_t realtime_ns(void)
{
    return (uint64_t)((int64_t)uptime_ns() + __atomic_load_n(&realtime_offset_ns, __ATOMIC_ACQUIRE));
}

void realtime_set_ns(uint64_t ns)
{
    __atomic_store_n(&realtime_offset_ns, (int64_t)ns - (int64_t)uptime_ns(), __ATOMIC_RELEASE);
}
