/*
 * par -- run P instances of a benchmark at once, one per processor, as
 * Sprite's multiprocessor measurements did (seed 003, 5.2), and report
 * the whole machine's throughput.
 *
 *     par P PROGRAM [ARGS...]
 *
 * The parent forks P children.  Child i pins itself to processor
 * i mod ncpu (sched_setaffinity; ncpu from sched_getaffinity), sets
 * BENCH_INSTANCE=i in its environment (fstat uses it to open a file of
 * its own, so the instances share nothing), and waits on a pipe until
 * every child exists; the parent then closes the pipe, which starts them
 * all together, and each execs PROGRAM with ARGS.  Each instance's
 * standard output is a pipe back to the parent, which reads every
 * instance's result line ("bench NAME us_per_op=U ops=N total_s=S") and
 * prints one line for the machine:
 *
 *     bench par.NAME procs=P ops_per_s=R us_per_op=U ops=N total_s=S
 *
 * R is the sum over instances of ops/total_s (operations per second for
 * the whole machine), U the mean of the instances' us_per_op (time per
 * operation as one process sees it), N the sum of their ops and S the
 * longest total_s.  An instance that fails or prints no result line makes
 * par print "bench par.NAME error=instance errno=0" and exit 1.
 *
 * System calls: pipe, fork, sched_getaffinity, sched_setaffinity, read,
 * close, dup2, execve, wait4, write, exit_group.
 */
#include "bench.h"
#include <sys/wait.h>

#define MAX_PROCS 64
#define LINE_MAX_LEN 512

struct instance {
	int pid;
	int out;                        /* read end of its standard output */
	char line[LINE_MAX_LEN];
	size_t len;
};

static struct instance inst[MAX_PROCS];
static char name[64] = "unknown";

static void say(int fd, const char *s)
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

static void fail(const char *what, int err)
{
	char line[256];

	snprintf(line, sizeof line, "bench par.%s error=%s errno=%d\n", name, what, err);
	say(1, line);
	exit(1);
}

/* Child i: pin, wait for the start, exec the benchmark. */
static void run_child(int i, const int *cpus, int ncpu, int go, int out, char **argv)
{
	char env[32], c;

	if (ncpu > 0)
		bench_pin(cpus[i % ncpu]);
	snprintf(env, sizeof env, "%d", i);
	setenv("BENCH_INSTANCE", env, 1);
	while (syscall(SYS_read, go, &c, 1) < 0 && errno == EINTR)
		;
	syscall(SYS_dup2, out, 1);
	execv(argv[0], argv);
	_exit(127);
}

/* Reads every instance's output to its end. */
static void collect(int procs)
{
	for (int i = 0; i < procs; i++) {
		struct instance *in = &inst[i];
		for (;;) {
			long r = syscall(SYS_read, in->out, in->line + in->len,
					 sizeof in->line - 1 - in->len);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			in->len += r;
		}
		in->line[in->len] = 0;
		syscall(SYS_close, in->out);
	}
}

static void summarize(int procs)
{
	double rate = 0, us_sum = 0, longest = 0;
	long long ops = 0;

	for (int i = 0; i < procs; i++) {
		char iname[64];
		double us, secs;
		long long n;
		const char *at = strstr(inst[i].line, "bench ");
		if (!at || sscanf(at, "bench %63s us_per_op=%lf ops=%lld total_s=%lf",
				  iname, &us, &n, &secs) != 4 || secs <= 0)
			fail("instance", 0);
		rate += n / secs;
		us_sum += us;
		ops += n;
		if (secs > longest)
			longest = secs;
	}
	char line[256];
	snprintf(line, sizeof line,
		 "bench par.%s procs=%d ops_per_s=%.1f us_per_op=%.4f ops=%lld total_s=%.6f\n",
		 name, procs, rate, us_sum / procs, ops, longest);
	say(1, line);
}

int main(int argc, char **argv)
{
	int cpus[MAX_PROCS], go[2];
	char *end;

	if (argc < 3) {
		say(2, "usage: par PROCS PROGRAM [ARGS...]\n");
		return 2;
	}
	int procs = strtol(argv[1], &end, 10);
	if (*end || procs < 1 || procs > MAX_PROCS) {
		say(2, "par: PROCS must be 1..64\n");
		return 2;
	}
	const char *base = strrchr(argv[2], '/');
	snprintf(name, sizeof name, "%s", base ? base + 1 : argv[2]);
	int ncpu = bench_allowed_cpus(cpus, MAX_PROCS);
	if (syscall(SYS_pipe, go) < 0)
		fail("pipe", errno);
	for (int i = 0; i < procs; i++) {
		int out[2];
		if (syscall(SYS_pipe, out) < 0)
			fail("pipe", errno);
		int pid = fork();
		if (pid < 0)
			fail("fork", errno);
		if (pid == 0) {
			syscall(SYS_close, go[1]);
			syscall(SYS_close, out[0]);
			run_child(i, cpus, ncpu, go[0], out[1], argv + 2);
		}
		syscall(SYS_close, out[1]);
		inst[i].pid = pid;
		inst[i].out = out[0];
	}
	syscall(SYS_close, go[0]);
	syscall(SYS_close, go[1]);          /* every child reads end of file: go */
	collect(procs);
	int failed = 0;
	for (int i = 0; i < procs; i++) {
		int status;
		while (waitpid(inst[i].pid, &status, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed = 1;
	}
	if (failed)
		fail("instance", 0);
	summarize(procs);
	return 0;
}
