/*
 * ut_fuzz [N [SEED]]: random system calls.
 *
 * An unprivileged child (uid 65534 when run as root) makes N system calls
 * (default 3000) with numbers drawn from an allow-list of calls that cannot
 * hurt the machine or stop the test by design (no kill, exit, fork, execve,
 * fixed mappings, munmap/mprotect/brk of our own memory, ptrace, set*id,
 * setrlimit, sockets, and anything that can block for ever: pipes, FIFOs,
 * inotify/signalfd/eventfd/timerfd descriptors, flock, sleeps and waits),
 * plus a few unknown numbers, and
 * random arguments: small numbers, descriptors, random bits, huge lengths,
 * unmapped and kernel addresses, and pointers into a scratch buffer or to
 * file names, all relative and inside a scratch directory.  Arguments
 * that could break the test itself are tamed (see tame()).
 *
 * Afterwards the child must be alive and ordinary calls must still work:
 * getpid, a file created, written and read back, a pipe, an anonymous
 * mapping.  The parent checks that the child exited normally and reported;
 * if it died or hung, the parent names the call it was making (through a
 * shared page) and the seed, so the run can be repeated.
 *
 * The same SEED gives the same calls with the same arguments.
 */
#include "ut.h"

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define REPORT_FD 250 /* the child's report pipe */
#define CHECK_FD 251  /* a directory for the checks afterwards */
#define BUF_SIZE (64 * 1024)

/* x86-64 Linux numbers of harmless calls; see the comment above. */
static const int allowed[] = {
	0, 1, 2, 3, 4, 5, 6, 8, 9, 13, 14, 16, 17, 18, 19, 20, 21, 24, 26, 27,
	32, 33, 36, 39, 40, 61, 63, 72, 74, 75, 76, 77, 78, 79, 80, 81,
	82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98,
	99, 100, 102, 104, 107, 108, 109, 110, 111, 112, 115, 118, 120, 121,
	124, 125, 127, 131, 132, 137, 138, 140, 143, 145, 146, 147, 148, 186,
	187, 191, 192, 193, 194, 195, 196, 201, 204, 213, 217, 221, 228, 229,
	233, 235, 247, 252, 257, 258, 260, 261, 262, 263, 264,
	265, 266, 267, 268, 269, 274, 275, 276, 277, 280, 291, 292, 295,
	296, 302, 303, 309, 315, 316, 318, 319, 326, 327, 328, 332, 437, 439,
	/* not system calls at all */
	500, 1000, 4096, 100000,
};
#define NALLOWED ((int)(sizeof allowed / sizeof allowed[0]))

static const char *const names[] = {
	"fz0", "fz1", "dir0", "dir0/fz2", "link0", "", ".", "dir1", "fz3",
};
#define NNAMES ((int)(sizeof names / sizeof names[0]))

struct progress {
	volatile long index;  /* the call being made */
	volatile long number; /* its number */
	volatile long args[6];
	volatile int done;    /* all calls made */
};

static uint64_t rng;

static uint64_t next(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static char *buf;   /* BUF_SIZE bytes, then the names page, then a guard */
static char *namepg;

static void refill(void)
{
	for (int i = 0; i < BUF_SIZE; i += 8) {
		uint64_t v = next();
		memcpy(buf + i, &v, 8);
	}
	/* No '/' or '.' in random bytes: a name made of them stays here. */
	for (int i = 0; i < BUF_SIZE; i++)
		if (buf[i] == '/' || buf[i] == '.')
			buf[i] = 'q';
	memset(namepg, 0, 4096);
	for (int i = 0; i < NNAMES; i++)
		strcpy(namepg + 64 * i, names[i]);
}

static long bad_pointer(void)
{
	static const long bad[] = {
		1, 0x1000, 0xdead0000L, 0x7ffffffff000L, 0x800000000000L,
		(long)0xffff800000000000UL, (long)0xffffffff80000000UL,
		(long)0xffffffffffffffffUL, 0,
	};
	uint64_t r = next();
	if (r % 4 == 0)
		return (long)(0xffff800000000000UL + (next() & 0x7fffffffff000UL));
	return bad[r % (sizeof bad / sizeof bad[0])];
}

static long arg(void)
{
	uint64_t r = next();
	switch (r % 12) {
	case 0:
	case 1:
		return (long)(next() % 64);       /* small numbers and fds */
	case 2:
		return (long)(next() % 8) - 4;    /* around zero */
	case 3:
		return (long)next();              /* any bits */
	case 4:
		return (long)(next() & 0xffffffff);
	case 5: {
		static const long huge[] = { 1L << 62, -1, 1L << 31, 0x7fffffff,
					     4096, 1L << 40 };
		return huge[next() % 6];
	}
	case 6:
	case 7:
		return bad_pointer();
	case 8:
	case 9:
		return (long)(buf + next() % BUF_SIZE); /* a valid buffer */
	default:
		return (long)(namepg + 64 * (next() % NNAMES)); /* a name */
	}
}

/* A pointer argument that must not point at memory we own. */
static long not_ours(void)
{
	return next() % 3 == 0 ? 0 : bad_pointer();
}

/* Arguments that would break the test rather than the kernel. */
static void tame(long nr, long a[6])
{
	switch (nr) {
	case SYS_mmap:
		/* Never over our memory, never populate or lock it. */
		a[3] &= ~(long)(MAP_FIXED | 0x100000 /* MAP_FIXED_NOREPLACE */ |
				MAP_POPULATE | MAP_LOCKED);
		break;
	case SYS_rt_sigaction:
		a[1] = not_ours(); /* no random handlers */
		break;
	case SYS_sigaltstack:
		a[0] = not_ours();
		break;
	case SYS_prlimit64:
		a[2] = not_ours(); /* read limits only */
		break;
	case SYS_dup2:
	case SYS_dup3:
		if (a[1] == REPORT_FD || a[1] == CHECK_FD)
			a[1] = 3;
		break;
	case SYS_fcntl:
		/* No signals chosen by chance (F_SETOWN 8, F_SETSIG 10,
		   F_SETOWN_EX 15, F_NOTIFY 1026), no waiting on our own locks
		   (F_SETLKW 7, F_OFD_SETLKW 38) or leases (F_SETLEASE 1024). */
		if (a[1] == 7 || a[1] == 8 || a[1] == 10 || a[1] == 15 ||
		    a[1] == 38 || a[1] == 1024 || a[1] == 1026)
			a[1] = F_GETFL;
		break;
	case SYS_close:
		if (a[0] == REPORT_FD || a[0] == CHECK_FD)
			a[0] = 3;
		break;
	}
}

static void fuzz_child(long n, struct progress *pr, int report)
{
	/* Only our own descriptors: nothing inherited that could block, and
	   standard files of our own, so nothing reaches the parent's output. */
	for (int fd = 0; fd < 256; fd++)
		if (fd != REPORT_FD && fd != CHECK_FD)
			close(fd);
	open("stdin", O_RDWR | O_CREAT, 0644);
	open("stdout", O_RDWR | O_CREAT, 0644);
	open("stderr", O_RDWR | O_CREAT, 0644);
	mkdir("dir0", 0755);
	mkdir("dir1", 0755);
	int ignore[] = { SIGPIPE, SIGXFSZ, SIGIO, SIGURG, SIGTTIN, SIGTTOU,
			 SIGWINCH, SIGCHLD };
	for (size_t i = 0; i < sizeof ignore / sizeof ignore[0]; i++)
		signal(ignore[i], SIG_IGN);
	struct rlimit fsize = { 1 << 20, 1 << 20 }, as = { 1L << 30, 1L << 30 };
	setrlimit(RLIMIT_FSIZE, &fsize); /* bounded files */
	setrlimit(RLIMIT_AS, &as);       /* bounded mappings */

	pid_t me = getpid();
	long counts[4] = { 0 }; /* ok, ENOSYS, EFAULT, other errors */
	for (long i = 0; i < n; i++) {
		long nr = allowed[next() % NALLOWED];
		long a[6];
		for (int k = 0; k < 6; k++)
			a[k] = arg();
		tame(nr, a);
		refill();
		pr->index = i;
		pr->number = nr;
		for (int k = 0; k < 6; k++)
			pr->args[k] = a[k];
		long r = syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		counts[r != -1 ? 0 : errno == ENOSYS ? 1 : errno == EFAULT ? 2 : 3]++;
	}
	pr->done = 1;

	/* Still alive; do ordinary calls still work? */
	umask(022);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	int ok = getpid() == me;
	int fd = openat(CHECK_FD, "after", O_RDWR | O_CREAT | O_TRUNC, 0644);
	char back[8] = { 0 };
	ok = ok && fd >= 0 && write(fd, "alive", 5) == 5 &&
	     pread(fd, back, 5, 0) == 5 && memcmp(back, "alive", 5) == 0;
	if (fd >= 0)
		close(fd);
	int p[2];
	ok = ok && pipe(p) == 0 && write(p[1], "x", 1) == 1 &&
	     read(p[0], back, 1) == 1 && back[0] == 'x';
	char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ok = ok && m != MAP_FAILED;
	if (m != MAP_FAILED) {
		m[8191] = 1;
		ok = ok && munmap(m, 8192) == 0;
	}
	char line[160];
	int len = snprintf(line, sizeof line,
			   "%s %ld ok %ld enosys %ld efault %ld other %ld\n",
			   ok ? "alive" : "broken", n, counts[0], counts[1],
			   counts[2], counts[3]);
	write(report, line, len);
	_exit(ok ? 0 : 3);
}

static volatile sig_atomic_t timed_out;

static void on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3000;
	unsigned long seed = argc > 2 ? strtoul(argv[2], NULL, 0) : 1;
	ut_init(argc, argv);
	ut_scratch();
	rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	if (rng == 0)
		rng = 1;

	CHECK_OK(mkdir("check", 0777));
	CHECK_OK(chmod("check", 0777));
	CHECK_OK(mkdir("play", 0777));
	CHECK_OK(chmod("play", 0777));
	struct progress *pr = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(pr != MAP_FAILED);
	char *region = mmap(NULL, BUF_SIZE + 2 * 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(region != MAP_FAILED);
	if (pr == MAP_FAILED || region == MAP_FAILED)
		return ut_done();
	buf = region;
	namepg = region + BUF_SIZE;
	CHECK_OK(mprotect(region + BUF_SIZE + 4096, 4096, PROT_NONE)); /* guard */
	memset(pr, 0, sizeof *pr);
	pr->index = -1;

	int rp[2];
	CHECK_OK(pipe(rp));
	pid_t pid = fork();
	if (pid == 0) {
		close(rp[0]);
		dup2(rp[1], REPORT_FD);
		close(rp[1]);
		int c = open("check", O_RDONLY | O_DIRECTORY);
		dup2(c, CHECK_FD);
		close(c);
		struct rlimit nofile = { 256, 256 };
		setrlimit(RLIMIT_NOFILE, &nofile);
		if (chdir("play") != 0 || ut_drop_privileges() != 0)
			_exit(4);
		ut_alarm(0);
		fuzz_child(n, pr, REPORT_FD);
	}
	close(rp[1]);
	CHECK(pid > 0);

	/* Wait, with our own guard: a hung child is killed and reported. */
	struct sigaction sa = { 0 };
	sa.sa_handler = on_alarm; /* no SA_RESTART: the read must stop */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	ut_alarm(UT_TIMEOUT - 5);
	char report[200] = { 0 };
	long got = 0, r;
	while (got < (long)sizeof report - 1 &&
	       (r = read(rp[0], report + got, sizeof report - 1 - got)) != 0) {
		if (r < 0 && errno == EINTR && timed_out)
			break;
		if (r > 0)
			got += r;
	}
	if (timed_out)
		kill(pid, SIGKILL);
	int st = ut_wait(pid);
	ut_alarm(0);
	close(rp[0]);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || strncmp(report, "alive", 5)) {
		ut_check(0, __FILE__, __LINE__,
			 "seed %lu: child %s (status 0x%x) at call %ld of %ld: "
			 "syscall %ld (%#lx, %#lx, %#lx, %#lx, %#lx, %#lx)",
			 seed, timed_out ? "hung" : "died or broke", st,
			 pr->index, n, pr->number, pr->args[0], pr->args[1],
			 pr->args[2], pr->args[3], pr->args[4], pr->args[5]);
	} else {
		ut_check(1, __FILE__, __LINE__, "child alive");
		char *nl = strchr(report, '\n');
		if (nl)
			*nl = 0;
		ut_note("seed %lu: %s", seed, report);
	}
	CHECK(pr->done);
	/* And we are fine too. */
	CHECK(getpid() > 0);
	CHECK_OK(ut_write_file("parent", "ok", 2, 0644));
	return ut_done();
}
