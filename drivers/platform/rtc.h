/*
 * The wall clock: the CMOS real-time clock read once at boot, then the
 * TSC's uptime added to it.  Implementation and theory:
 * drivers/platform/rtc.c.
 */
#ifndef DRIVERS_RTC_H
#define DRIVERS_RTC_H

#include <kern/lib/types.h>

/* Read the CMOS clock and start the wall clock from it (boot CPU, once,
 * after clock_init).  Prints one line with the date found. */
void rtc_init(void);

/* CLOCK_REALTIME: nanoseconds since 1970-01-01 00:00:00 UTC. */
uint64_t realtime_ns(void);

/* Set CLOCK_REALTIME to ns (settimeofday, clock_settime); the caller has
 * checked the value and the privilege. */
void realtime_set_ns(uint64_t ns);

/* Days since 1970-01-01 of a calendar date (month 1..12, day 1..31);
 * public for the tests. */
int64_t rtc_days_from_civil(int64_t year, unsigned month, unsigned day);

#endif
