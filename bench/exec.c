/*
 * exec -- fork(), execve() of a trivial static program (true, built from
 * true.c beside this benchmark) and wait4(): Sprite's fexec.  The program
 * is PROGRAM_DIR/true where PROGRAM_DIR is the directory of argv[0], or
 * /bench/true when argv[0] names no directory.
 *
 * System calls: fork, execve, exit_group (child, if execve fails), wait4,
 * clock_gettime, write; the exec'd true makes musl's start-up calls
 * (arch_prctl, set_tid_address) and exit_group.
 */
#include "bench.h"
#include <sys/wait.h>

const char bench_name[] = "exec";

static char true_path[4096] = "/bench/true";

static void find_true(const char *argv0)
{
	const char *slash = strrchr(argv0, '/');

	if (slash && (size_t)(slash - argv0) + sizeof "/true" <= sizeof true_path) {
		memcpy(true_path, argv0, slash - argv0);
		strcpy(true_path + (slash - argv0), "/true");
	}
}

long long measure(long n)
{
	char *argv[] = { true_path, NULL };
	char *envp[] = { NULL };
	long long start = bench_now_ns();

	for (long i = 0; i < n; i++) {
		long pid = syscall(SYS_fork);
		if (pid < 0)
			return -errno;
		if (pid == 0) {
			syscall(SYS_execve, true_path, argv, envp);
			syscall(SYS_exit_group, 127);
		}
		int status;
		if (syscall(SYS_wait4, pid, &status, 0, NULL) != pid)
			return -errno;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			return -ENOEXEC;
	}
	return bench_now_ns() - start;
}

int main(int argc, char **argv)
{
	find_true(argv[0]);
	return bench_main(argc, argv);
}
