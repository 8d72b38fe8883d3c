/*
 * herd -- SVR4 MP's thundering herd on one inode (seed 001, "Inode
 * Locking"): N processes, all writing the same file, sleep on its one
 * inode lock.  When the holder lets it go, wakeup=all makes every sleeper
 * runnable, one wins and the rest find the lock busy and sleep again
 * (O(N^2) work for N sleepers); wake1proc (wakeup=one) wakes one.
 *
 *     herd [-n PROCS] [-t SECONDS] [-f FILE] [-o chmod|write]
 *
 *     bench herd procs=N op=O ops_per_s=R us_per_op=U ops=K total_s=S
 *
 * Each process repeats one operation until the time is up.  chmod (the
 * default): fchmod(2) of the shared file, an inode update made under the
 * file's inode lock (S5's ILOCK, a resource lock) and written to disk
 * before the lock is let go when syncwrites=on, so the processes queue
 * sleeping on that lock, the one whose wakeups wakeup= chooses.  write:
 * pwrite(2) of 512 bytes at offset 0, then ftruncate(2) to nothing; in
 * Tempest those queue first on the file's page-cache fill lock (a
 * reader/writer lock, whose release wakes every waiter whatever wakeup=
 * says), so it shows the herd wakeup=one does not cure.  PROCS defaults to 8 per processor (the CPUs this process
 * may use), SECONDS to 1, FILE to /tmp/herd.  R is operations per second
 * of the whole machine (the sum of K over the wall time S from the common
 * start to the last process's end); U is S in microseconds per operation
 * as one process sees it, averaged.  The wake-ups and misses are in the
 * lock statistics of the run (the harness wraps it in lockstat).
 *
 * System calls: open, fchmod, pwrite64, ftruncate, unlink, fork, pipe, read,
 * write, close, wait4, sched_getaffinity, clock_gettime, exit_group.
 */
#include "bench.h"
#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>

const char bench_name[] = "herd";

#define MAX_PROCS 512

struct report {
	long ops;
	long long ns;
	long err;               /* errno of a failed call, 0 if none */
};

static int online_cpus(void)
{
	cpu_set_t set;

	if (syscall(SYS_sched_getaffinity, 0, sizeof set, &set) < 0)
		return 1;
	int n = CPU_COUNT(&set);
	return n > 0 ? n : 1;
}

/* One process: wait for the start, operate until the deadline, report. */
static int op_write;            /* -o write: pwrite + ftruncate, not fchmod */

/* One operation; 0 or an errno. */
static long operate(int fd, const char *buf, long size, long k)
{
	if (!op_write)
		return syscall(SYS_fchmod, fd, (k & 1) ? 0640 : 0600) < 0 ? errno : 0;
	if (syscall(SYS_pwrite64, fd, buf, size, 0) != size ||
	    syscall(SYS_ftruncate, fd, 0) < 0)
		return errno ? errno : EIO;
	return 0;
}

static void worker(int fd, int go, int out, double seconds)
{
	char buf[512], c;
	struct report r = { 0, 0, 0 };

	memset(buf, 'h', sizeof buf);
	if (syscall(SYS_read, go, &c, 1) != 1)
		syscall(SYS_exit_group, 1);
	long long start = bench_now_ns(), end = start + (long long)(seconds * 1e9), now = start;
	while (now < end) {
		if ((r.err = operate(fd, buf, sizeof buf, r.ops)) != 0)
			break;
		r.ops++;
		now = bench_now_ns();
	}
	r.ns = now - start;
	syscall(SYS_write, out, &r, sizeof r);
	syscall(SYS_exit_group, r.err ? 1 : 0);
}

static void usage(int status)
{
	bench_puts(status ? 2 : 1,
		   "usage: herd [-n PROCS] [-t SECONDS] [-f FILE] [-o chmod|write]\n"
		   "  PROCS processes fchmod (or pwrite and ftruncate: -o write) one file\n"
		   "  (FILE, default /tmp/herd) for SECONDS (default 1), all queueing on its\n"
		   "  inode lock; PROCS defaults to 8 per usable CPU.  Prints: bench herd\n"
		   "  procs=N op=O ops_per_s=R us_per_op=U ops=K total_s=S\n");
	syscall(SYS_exit_group, status);
}

int main(int argc, char **argv)
{
	int procs = 8 * online_cpus();
	double seconds = 1;
	const char *path = "/tmp/herd";
	char *end;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			usage(0);
		if (i + 1 >= argc)
			usage(2);
		if (strcmp(argv[i], "-n") == 0) {
			procs = strtol(argv[++i], &end, 10);
			if (*end || procs < 1 || procs > MAX_PROCS)
				usage(2);
		} else if (strcmp(argv[i], "-t") == 0) {
			seconds = strtod(argv[++i], &end);
			if (*end || !(seconds > 0))
				usage(2);
		} else if (strcmp(argv[i], "-f") == 0) {
			path = argv[++i];
		} else if (strcmp(argv[i], "-o") == 0) {
			i++;
			if (strcmp(argv[i], "write") != 0 && strcmp(argv[i], "chmod") != 0)
				usage(2);
			op_write = strcmp(argv[i], "write") == 0;
		} else {
			usage(2);
		}
	}
	int fd = syscall(SYS_open, path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		bench_fail("open", errno);
	int go[2], out[2];
	if (syscall(SYS_pipe, go) < 0 || syscall(SYS_pipe, out) < 0)
		bench_fail("pipe", errno);
	for (int i = 0; i < procs; i++) {
		long pid = syscall(SYS_fork);
		if (pid < 0)
			bench_fail("fork", errno);
		if (pid == 0)
			worker(fd, go[0], out[1], seconds);
	}
	syscall(SYS_close, out[1]);
	long long start = bench_now_ns();
	for (int i = 0; i < procs; i++)
		syscall(SYS_write, go[1], "g", 1);
	long ops = 0, err = 0;
	double us_sum = 0;
	struct report r;
	int got = 0;
	while (syscall(SYS_read, out[0], &r, sizeof r) == (long)sizeof r) {
		ops += r.ops;
		us_sum += r.ops ? r.ns / 1e3 / r.ops : 0;
		if (r.err)
			err = r.err;
		got++;
	}
	double total = (bench_now_ns() - start) / 1e9;
	int failed = got != procs;
	for (int i = 0; i < procs; i++) {
		int status;
		if (syscall(SYS_wait4, -1, &status, 0, NULL) < 0)
			break;
		failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	}
	syscall(SYS_unlink, path);
	if (err)
		bench_fail(op_write ? "pwrite_or_ftruncate" : "fchmod", err);
	if (failed || ops == 0)
		bench_fail("worker", 0);
	char line[256];
	snprintf(line, sizeof line, "bench herd procs=%d op=%s ops_per_s=%.2f us_per_op=%.3f "
		 "ops=%ld total_s=%.6f\n", procs, op_write ? "write" : "chmod", ops / total,
		 us_sum / procs, ops, total);
	bench_puts(1, line);
	return 0;
}
