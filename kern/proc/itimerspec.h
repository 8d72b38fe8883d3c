/*
 * What the timers that take a struct itimerspec share (timerfd,
 * kern/event/timerfd.c; POSIX timers, kern/proc/sys_ptimer.c): the
 * checks of a user's time, its value in ns, a timer's remaining time in
 * Linux's layout, and where an absolute time falls on the uptime clock
 * the timers run on.
 */
#ifndef KERN_PROC_ITIMERSPEC_H
#define KERN_PROC_ITIMERSPEC_H

#include <kern/lib/types.h>
#include <drivers/platform/timer.h>
#include <drivers/platform/rtc.h>

#define ITS_NSEC            1000000000UL
#define ITS_CLOCK_REALTIME  0

struct itimerspec_u {
    int64_t interval_sec, interval_nsec;
    int64_t value_sec, value_nsec;
};

static inline bool ts_valid(int64_t sec, int64_t nsec)
{
    return sec >= 0 && nsec >= 0 && nsec < (int64_t)ITS_NSEC;
}

/* A valid time in ns, saturated as Linux's ktime_t. */
static inline uint64_t ts_ns(int64_t sec, int64_t nsec)
{
    if ((uint64_t)sec >= INT64_MAX / ITS_NSEC)
        return INT64_MAX;
    return (uint64_t)sec * ITS_NSEC + (uint64_t)nsec;
}

/* A timer due at due (uptime ns, 0: disarmed) with interval, as its
 * owner reads it: the time left (a due one not yet seen: 1 ns). */
static inline struct itimerspec_u itimerspec_left(uint64_t due, uint64_t interval)
{
    uint64_t now = uptime_ns();
    uint64_t left = !due ? 0 : due > now ? due - now : 1;
    return (struct itimerspec_u){ (int64_t)(interval / ITS_NSEC), (int64_t)(interval % ITS_NSEC),
                                  (int64_t)(left / ITS_NSEC), (int64_t)(left % ITS_NSEC) };
}

/* Where a time value on clock falls on the uptime clock: abs an absolute
 * time (CLOCK_REALTIME's turned into uptime now: a later settimeofday
 * does not move it), or else value from now.  Never 0 (disarmed). */
static inline uint64_t itimerspec_due(int clock, uint64_t value, bool abs)
{
    uint64_t now = uptime_ns();
    if (!abs)
        return now + value;
    if (clock != ITS_CLOCK_REALTIME)
        return value ? value : 1;
    uint64_t real = realtime_ns();
    return value > real ? now + (value - real) : (now ? now : 1);
}

#endif
