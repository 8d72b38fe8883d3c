/*
 * bench.h -- the common frame of the micro-benchmarks (see README.md).
 *
 * Each benchmark is a static musl program that supplies one function,
 *
 *     long long measure(long n);
 *
 * which performs n operations and returns the nanoseconds they took (it
 * reads the clock itself, so that set-up such as mmap or fork of a partner
 * stays outside the timed part), or a negative errno on failure.
 * bench_main() chooses n, calls measure() and prints the one result line:
 *
 *     bench NAME us_per_op=U ops=N total_s=S
 *
 * n is either the count given on the command line (one call of measure),
 * or what fits in the target time (1 s unless -t is given): after one
 * uncounted warm-up operation, batches doubling in size (the last cut to
 * what should fill the remaining time) until their times add up to the
 * target; the result is the total time over the total count.  A slow
 * outlier (a host hiccup under TCG) thus weighs in proportion to its
 * length, not to the size of a calibration batch.
 *
 * To keep the set of system calls small and exactly known, everything goes
 * through musl's syscall() (one SYSCALL instruction, errno set on failure)
 * and output is formatted with snprintf and written with write(): musl's
 * fork() adds rt_sigprocmask and gettid, its stdio adds ioctl and writev.
 * musl's start-up itself makes arch_prctl(ARCH_SET_FS) and set_tid_address,
 * and clock_gettime uses the vDSO when the kernel offers one, the system
 * call otherwise.
 */
#ifndef BENCH_H
#define BENCH_H

#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The benchmark's name, as printed in its result line. */
extern const char bench_name[];

/* Performs n operations; returns their nanoseconds, or -errno. */
long long measure(long n);

/* The processors this process may run on, in order, at most max of them
 * into list; how many (0 if sched_getaffinity fails). */
static inline int bench_allowed_cpus(int *list, int max)
{
	cpu_set_t set;
	int n = 0;

	if (syscall(SYS_sched_getaffinity, 0, sizeof set, &set) < 0)
		return 0;
	for (int c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			list[n++] = c;
	return n;
}

/* Bind the calling thread to one processor (best effort: a failure only
 * leaves it free to move). */
static inline void bench_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	syscall(SYS_sched_setaffinity, 0, sizeof set, &set);
}

/* A whole decimal number in [lo, hi] from a command-line word; any other
 * word ends the program through usage(2), which prints the usage. */
static inline long bench_arg(const char *s, long lo, long hi, void (*usage)(int))
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < lo || v > hi)
		usage(2);
	return v;
}

static inline long long bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Writes all of s to fd (1 or 2) with write(2). */
static inline void bench_puts(int fd, const char *s)
{
	size_t len = strlen(s);

	while (len > 0) {
		long r = syscall(SYS_write, fd, s, len);
		if (r <= 0)
			return;
		s += r;
		len -= r;
	}
}

/* Reports a failure as a result line (so a harness sees which benchmark
 * failed and why) and exits with status 1. */
static inline void bench_fail(const char *what, long err)
{
	char line[256];

	snprintf(line, sizeof line, "bench %s error=%s errno=%ld\n",
		 bench_name, what, err < 0 ? -err : err);
	bench_puts(1, line);
	syscall(SYS_exit_group, 1);
	for (;;)
		;
}

static inline void bench_usage(void)
{
	char line[256];

	snprintf(line, sizeof line,
		 "usage: %s [COUNT | -t SECONDS]\n", bench_name);
	bench_puts(2, line);
	syscall(SYS_exit_group, 2);
}

/* Runs measure(n), failing the program on error. */
static inline long long bench_run(long n)
{
	long long ns = measure(n);

	if (ns < 0)
		bench_fail("measure", ns);
	return ns;
}

/* Runs batches for at least target_ns in all, each twice the last but
 * none expected to run far past the target; returns the total time and
 * sets *ops to the total count. */
static inline long long bench_for_time(long long target_ns, long *ops)
{
	long long total_ns = 0;
	long total_ops = 0, batch = 1;

	bench_run(1);                           /* warm-up, not counted */
	while (total_ns < target_ns) {
		long long ns = bench_run(batch);
		total_ns += ns;
		total_ops += batch;
		double per_op = total_ns > 0 ? (double)total_ns / total_ops : 1.0;
		long left = (long)((target_ns - total_ns) / per_op) + 1;
		batch = batch * 2 < left ? batch * 2 : left;
	}
	*ops = total_ops;
	return total_ns;
}

/* The partner of the round-trip benchmarks (unix_lat, tcp_lat): echo each
 * byte read from fd back to it until end of file, then exit 0 (1 on a
 * failed write). */
static inline void bench_echo_loop(int fd)
{
	char c;

	while (syscall(SYS_read, fd, &c, 1) == 1) {
		if (syscall(SYS_write, fd, &c, 1) != 1)
			syscall(SYS_exit_group, 1);
	}
	syscall(SYS_exit_group, 0);
}

/* Write all n bytes of buf to fd: n, or -errno. */
static inline long bench_write_all(int fd, const char *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		long w = syscall(SYS_write, fd, buf + done, n - done);
		if (w <= 0)
			return w < 0 ? -errno : -EPIPE;
		done += (size_t)w;
	}
	return (long)done;
}

/* The reader of the bandwidth benchmarks (unix_bw, tcp_bw): read fd into
 * buf until end of file, then send back one byte ('k', or 'e' after an
 * error) and exit 0. */
static inline void bench_sink(int fd, char *buf, size_t size)
{
	long r;

	while ((r = syscall(SYS_read, fd, buf, size)) > 0)
		;
	char c = r == 0 ? 'k' : 'e';
	syscall(SYS_write, fd, &c, 1);
	syscall(SYS_exit_group, 0);
}

/* The end of a measure() whose partner is a child: close our end fd (its
 * end of file tells the child to finish) and reap it.  The result is err
 * if there was one, -ECHILD unless the child exited with status 0 and
 * `ok` holds (whatever else the caller required of it), else ns. */
static inline long long bench_reap(int fd, int pid, long long err, int ok, long long ns)
{
	int status;

	syscall(SYS_close, fd);
	syscall(SYS_wait4, pid, &status, 0, NULL);
	if (err)
		return err;
	if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -ECHILD;
	return ns;
}

/* The same for a child that serves until killed: err, or ns. */
static inline long long bench_kill_reap(int pid, long long err, long long ns)
{
	int status;

	syscall(SYS_kill, pid, SIGKILL);
	syscall(SYS_wait4, pid, &status, 0, NULL);
	return err ? err : ns;
}

static inline int bench_main(int argc, char **argv)
{
	long n = 0;
	double target_s = 1.0;

	if (argc == 3 && strcmp(argv[1], "-t") == 0) {
		target_s = strtod(argv[2], NULL);
		if (!(target_s > 0))
			bench_usage();
	} else if (argc == 2) {
		char *end;
		n = strtol(argv[1], &end, 10);
		if (*end || n <= 0)
			bench_usage();
	} else if (argc != 1) {
		bench_usage();
	}
	long long ns;
	if (n > 0)
		ns = bench_run(n);
	else
		ns = bench_for_time((long long)(target_s * 1e9), &n);
	char line[256];
	snprintf(line, sizeof line, "bench %s us_per_op=%.4f ops=%ld total_s=%.6f\n",
		 bench_name, ns / 1e3 / n, n, ns / 1e9);
	bench_puts(1, line);
	return 0;
}

#define BENCH_MAIN \
	int main(int argc, char **argv) { return bench_main(argc, argv); }

#endif
