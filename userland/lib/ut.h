/*
 * ut: the tiny test framework of Tempest's user-space tests.
 *
 * The same static binaries run on Linux (in `make check`, proving that they
 * test Linux semantics) and inside Tempest, started by init.  A test program
 * calls ut_init() first and ends with `return ut_done();`.  In between it
 * makes checks:
 *
 *   CHECK(cond)              cond is true
 *   CHECK_EQ(a, b)           a == b (compared as long long, both printed)
 *   CHECK_ERR(call, ERRNO)   call returns -1 (or MAP_FAILED) with errno ERRNO
 *   CHECK_OK(call)           call does not return -1; evaluates to its result
 *
 * A failed check prints one line `FAIL file:line: what` and the program goes
 * on.  ut_done() prints the closing line `N passed, N failed` and returns the
 * exit status: 0 only when nothing failed.
 *
 * All output goes straight to fd 1 with write(), never through stdio, so a
 * fork can never duplicate buffered text and a crash loses nothing.
 *
 * Children: ut_child() runs a function in a forked child, optionally as an
 * unprivileged user (uid/gid 65534 when the program runs as root), and adds
 * the child's counts to the parent's through a pipe.  A child that dies
 * without reporting counts as one failure.
 *
 * ut_unprivileged() is ut_child() as uid 65534 for the EACCES/EPERM checks;
 * when the program is not root it skips them with a printed note (the files
 * the checks need could not belong to another user).  It returns 1 when the
 * checks ran.
 *
 * Scratch space: ut_scratch() creates a fresh directory under $TMPDIR (or
 * /tmp), mode 0755, and makes it the working directory; ut_done() removes it.
 * Tests then use relative names only, so an unprivileged child can work
 * there even when an ancestor directory is private.
 *
 * Hangs: ut_init() arms ut_alarm(UT_TIMEOUT) (the alarm system call; musl's
 * alarm() would use setitimer); if it fires, the program prints
 * a failure and its counts and exits 1.  Nothing else depends on time.
 */
#ifndef UT_H
#define UT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>
#include <sys/types.h>

#ifndef UT_TIMEOUT
#define UT_TIMEOUT 20 /* seconds before a program is declared hung */
#endif

#define UT_NOBODY 65534 /* the unprivileged uid and gid used by root */

extern int ut_passed, ut_failed;
extern const char *ut_self; /* absolute path of this program (from argv[0]) */

void ut_init(int argc, char **argv);
int ut_done(void);
void ut_check(int ok, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void ut_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ut_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

const char *ut_scratch(void);
int ut_rmtree(const char *path);
unsigned ut_alarm(unsigned seconds);
int ut_is_root(void);
int ut_drop_privileges(void);
void ut_child(const char *name, void (*fn)(void *), void *arg, int unprivileged);
int ut_unprivileged(const char *name, void (*fn)(void *), void *arg);
int ut_wait(pid_t pid);
/* A one-byte handshake between two processes over a pipe: ut_await
 * reads a byte from fd (0, or -1 at end of file or an error), ut_tell
 * writes one (and _exits 3 if it cannot). */
int ut_await(int fd);
void ut_tell(int fd);
int ut_write_file(const char *path, const void *data, size_t len, int mode);
long ut_read_file(const char *path, void *buf, size_t len);
/* The number after a line's leading field (such as "Threads:" in
 * /proc/self/status or "Shmem:" in /proc/meminfo), or -1 when the file or
 * the line is missing. */
long ut_proc_number(const char *path, const char *field);
/* fd has something to read within ms milliseconds (poll). */
int ut_readable(int fd, int ms);
/* The Internet checksum (RFC 1071) of len bytes, in network order: 0
 * over a message whose own checksum is right. */
unsigned short ut_inet_cksum(const void *data, size_t len);
/* The counter name of group ("Ip", "Tcp", "Udp"...) in /proc/net/snmp,
 * found by its place in the group's line of names, or -1 when absent. */
long long ut_snmp(const char *group, const char *name);
/* The same from another file of that format (/proc/net/netstat). */
long long ut_snmp_in(const char *path, const char *group, const char *name);

/*
 * Addresses no system call may accept as a user pointer: an unmapped low
 * address and the bottom of the kernel half.  Variables, so that the
 * compiler cannot see (and warn about) the constant.
 */
extern void *ut_badptr, *ut_kernptr;
#define UT_BADPTR (ut_badptr)
#define UT_KERNPTR (ut_kernptr)

#define CHECK(cond) ut_check(!!(cond), __FILE__, __LINE__, "CHECK(%s)", #cond)

#define CHECK_EQ(a, b)                                                       \
	do {                                                                 \
		long long ut_a_ = (long long)(a), ut_b_ = (long long)(b);    \
		ut_check(ut_a_ == ut_b_, __FILE__, __LINE__,                 \
			 "%s == %s (%lld != %lld)", #a, #b, ut_a_, ut_b_);   \
	} while (0)

#define CHECK_ERR(call, err)                                                 \
	do {                                                                 \
		errno = 0;                                                   \
		long ut_r_ = (long)(call);                                   \
		int ut_e_ = errno;                                           \
		ut_check(ut_r_ == -1 && ut_e_ == (err), __FILE__, __LINE__,  \
			 "%s gives %s (got %ld, errno %d %s)", #call, #err,  \
			 ut_r_, ut_e_, strerror(ut_e_));                     \
	} while (0)

#define CHECK_OK(call)                                                       \
	({                                                                   \
		errno = 0;                                                   \
		long ut_r_ = (long)(call);                                   \
		int ut_e_ = errno;                                           \
		ut_check(ut_r_ != -1, __FILE__, __LINE__,                    \
			 "%s succeeds (errno %d %s)", #call, ut_e_,          \
			 strerror(ut_e_));                                   \
		ut_r_;                                                       \
	})

#endif
