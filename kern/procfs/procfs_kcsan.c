/*
 * /proc/kcsan: the data-race detector's counts (kern/kcsan/kcsan.c), and
 * the race planted through a system call for its tests.  KCSAN=1 kernels
 * only; in any other kernel this file compiles to nothing.
 *
 * Reading gives one "name value" line each (docs/kcsan.md).  Writing is
 * root's (mode 0644) and takes one word:
 *
 *   racy     kcsan_hook_racy: KCSAN_HOOK_ROUNDS increments of hook_count
 *            with no lock, a deliberate read-modify-write race when two
 *            threads on two CPUs write at once
 *   locked   kcsan_hook_locked: the same increments of hook_locked_count,
 *            each under hook_lock, which the detector must never report
 *
 * Anything else is EINVAL.  Both hooks touch only their own counters, so a
 * user may hammer them as hard as it likes: the worst a lost update does
 * is make hook_count small.  The lines user_racy and user_locked say
 * whether the detector has reported a race in each hook, so that the user
 * test (userland/tests/t_kcsan.c) can wait for the first and watch the
 * second stay 0.
 */
#ifdef TEMPEST_KCSAN
#include <kern/procfs/procfs.h>
#include <kern/kcsan/kcsan.h>
#include <kern/lock/spinlock.h>
#include <kern/lib/options.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

/* Increments per write: enough that the hook's accesses are most of the
 * plain accesses a write makes, so that watchpoints land on them. */
#define KCSAN_HOOK_ROUNDS 256

LOCK_CLASS(kcsan_hook_class, "kcsan_hook", LK_SPIN);

static long hook_count;         /* no lock, on purpose: the planted race */
static long hook_locked_count;  /* under hook_lock */
static spinlock_t hook_lock = SPINLOCK_INIT(&kcsan_hook_class);

/* noipa: no clone under another name, so the report's sites lie in the
 * functions whose addresses kcsan_pair_reported is asked about. */
#define HOOK_FN __attribute__((noinline, noipa))

static HOOK_FN void kcsan_hook_racy(void)
{
    for (int i = 0; i < KCSAN_HOOK_ROUNDS; i++)
        hook_count++;
}

static HOOK_FN void kcsan_hook_locked(void)
{
    for (int i = 0; i < KCSAN_HOOK_ROUNDS; i++) {
        spin_lock(&hook_lock);
        hook_locked_count++;
        spin_unlock(&hook_lock);
    }
}

/* Whether a race was reported with either side in fn. */
static int reported_in(const void *fn)
{
    return kcsan_pair_reported(fn, fn) || kcsan_pair_reported(fn, NULL);
}

int procfs_kcsan(struct sbuf *sb)
{
    struct kcsan_totals t;
    kcsan_totals(&t);
    sbuf_printf(sb, "enabled %d\ninterval %d\ndelay_us %d\n", kcsan_enabled(),
                opts.kcsan_interval, opts.kcsan_delay);
    sbuf_printf(sb, "checked %lu\nwatched %lu\nhits %lu\nchanged %lu\n",
                (unsigned long)t.checked, (unsigned long)t.watched, (unsigned long)t.hits,
                (unsigned long)t.changed);
    sbuf_printf(sb, "reports %lu\nrepeats %lu\ndropped %lu\n", (unsigned long)t.reports,
                (unsigned long)t.repeats, (unsigned long)t.dropped);
    sbuf_printf(sb, "user_racy %d\nuser_locked %d\n", reported_in(kcsan_hook_racy),
                reported_in(kcsan_hook_locked));
    return 0;
}

/* A write of "racy" or "locked" (a trailing newline allowed) from a
 * kernel buffer of len bytes. */
int procfs_kcsan_write(const char *buf, size_t len)
{
    char word[8] = { 0 };
    if (len && buf[len - 1] == '\n')
        len--;
    if (len == 0 || len >= sizeof word)
        return -EINVAL;
    memcpy(word, buf, len);
    if (strcmp(word, "racy") == 0)
        kcsan_hook_racy();
    else if (strcmp(word, "locked") == 0)
        kcsan_hook_locked();
    else
        return -EINVAL;
    return 0;
}
#endif
